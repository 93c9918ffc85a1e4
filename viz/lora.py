"""Figures of the LoRA page: Delta W against its best rank-r approximation, the rank curves, live training, memory.

Builders take what core.lora computed (its small dataclasses of numpy arrays) and do no heavy math. The rank
slider lives inside the heatmap figure (plotly ``layout.sliders`` with ``method="update"``), so dragging r swaps the
pre-computed frames in the browser with no server round trip. To keep the figure JSON small the frames are block
averages (at most 64 x 64, core.lora.display_frames) sent as float32 base64 typed arrays. Figures are plain dicts
through :func:`viz.style.figure` and :func:`viz.style.grid`; every builder takes ``theme`` ("light" or "dark") and
``presenter`` (larger type for a room, with the room it needs).
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go

from viz.format import share
from viz.style import PALETTE, Theme, colorscale, figure, get_theme, grid

if TYPE_CHECKING:
    from core.lora import DisplayFrames, RankCurves
    from core.lora_layer import TrainResult
    from core.lora_memory import LoraMemory

UIREVISION = "lora"
INIT_ROLES: dict[str, str] = {"B0": "optimum", "zeros": "neutral", "both_random": "negative", "A0": "reference"}
INIT_COLOURS: dict[str, str] = {init: PALETTE[role] for init, role in INIT_ROLES.items()}  # the light theme's
INIT_NAMES: dict[str, str] = {
    "B0": "B = 0, A random",
    "zeros": "A = B = 0",
    "both_random": "both random",
    "A0": "A = 0, B random",
}


def _typed(z: np.ndarray) -> dict[str, str]:
    """z as a plotly.js typed-array spec (float32, base64): small JSON, and nothing for plotly.py to deep-copy.

    plotly.js (2.28 and later; Streamlit 1.67 bundles 4.2) decodes such specs wherever it takes data arrays,
    including the values a slider step hands to ``Plotly.update``.
    """
    a = np.ascontiguousarray(z, dtype="<f4")
    return {
        "dtype": "f4",
        "bdata": base64.b64encode(a.tobytes()).decode("ascii"),
        "shape": ", ".join(map(str, a.shape)),
    }


def _init_colour(init: str, t: Theme) -> str:
    return t.palette[INIT_ROLES.get(init, "highlight")]


def _readout_text(curves: RankCurves, r: int) -> str:
    ro = curves.readout(int(r))
    return (
        f"<b>r = {ro.r}</b> of min(d, k) = {curves.m} &nbsp;·&nbsp; "
        f"error ‖ΔW − BA‖<sub>F</sub>/‖ΔW‖<sub>F</sub> = {share(ro.rel_frobenius)} &nbsp;·&nbsp; "
        f"energy captured {share(ro.energy)}<br>"
        f"trainable r(d+k) = {ro.params:,} of dk = {ro.params_full:,} ({share(ro.share)})"
    )


def _nearest_index(values: np.ndarray, r: int) -> int:
    return int(np.argmin(np.abs(np.asarray(values) - r)))


def lora_heatmaps_figure(
    frames: DisplayFrames,
    curves: RankCurves,
    r: int,
    *,
    height: int = 470,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Delta W, its best rank-r approximation B A and the residual, side by side on one diverging colour scale.

    ``frames`` (core.lora.display_frames) holds one block-averaged approximation and residual per slider rank;
    ``curves`` (core.lora.rank_curves) gives the readout line. The plotly slider under the heatmaps swaps the
    approximation, the residual, the middle title and the readout for each rank in ``frames.ranks``, in the
    browser; it starts at the rank nearest ``r`` (include r in the frames to start exactly there). Presenter mode
    spends the screen's height on the square panels: no figure title (ΔW's size goes into the first panel's title),
    no x-axis titles and no current-value line on the slider (the readout starts with r), margins for the type only.
    """
    ranks = np.asarray(frames.ranks)
    j = _nearest_index(ranks, r)
    zmax = float(max(np.abs(frames.target).max(), np.abs(frames.approx).max(), np.abs(frames.residual).max()))
    zmax = zmax if zmax > 0 else 1.0
    D, K = frames.target.shape
    averaged = frames.averaged
    cell = f"{frames.block_size[0]}×{frames.block_size[1]}" if averaged else "1×1"
    where = "block average" if averaged else "entry"
    names = ("ΔW", "BA", "ΔW − BA")
    # presenter mode: the figure title's d × k moves into the first panel's title (one line less above the panels)
    target = f"target ΔW, {frames.d}×{frames.k}" if presenter else "target ΔW"
    titles = (target, f"best rank-{int(ranks[j])} approximation BA", "residual ΔW − BA")
    zs = (frames.target, frames.approx[j], frames.residual[j])
    # The layout is written in one piece: a page rebuilds this figure on every change of r.
    # presenter mode: row numbers beside the first panel only, so the panels can stand closer together
    ids, layout = grid(1, 3, hgap=0.025 if presenter else 0.045, titles=titles)
    data: list[dict[str, Any]] = []
    for i, (name, z, (xa, ya)) in enumerate(zip(names, zs, ids, strict=True)):
        data.append(
            {
                "type": "heatmap",
                "z": np.asarray(z, dtype=np.float32),
                "x": frames.col_centres,
                "y": frames.row_centres,
                "xaxis": xa,
                "yaxis": ya,
                "coloraxis": "coloraxis",
                "name": name,
                "hovertemplate": f"{name}<br>row %{{y:.0f}}, column %{{x:.0f}}<br>{where} %{{z:.3g}}<extra></extra>",
            }
        )
        # presenter mode: height is what the square panels lack, so no x-axis titles (the hover names rows and
        # columns); the y-axis title stays, it costs width only
        layout[f"xaxis{xa[1:]}"] |= {
            "constrain": "domain",
            "title": {"text": "" if presenter else "column (input index)"},
        }
        layout[f"yaxis{ya[1:]}"] |= {
            "autorange": "reversed",
            "scaleanchor": xa,
            "constrain": "domain",
            "title": {"text": "row (output index)" if i == 0 else ""},
            "showticklabels": i == 0 or not presenter,
        }
    layout["annotations"].append(
        {
            "text": _readout_text(curves, int(ranks[j])),
            "xref": "paper",
            "yref": "paper",
            "x": 0.0,
            "y": 1.0,
            "yshift": 30 if presenter else 28,  # pixels above the panel titles, whatever the figure's height
            "xanchor": "left",
            "yanchor": "bottom",
            "showarrow": False,
            "align": "left",
        }
    )
    approx_title, readout = 1, 3  # annotation indices the slider rewrites
    steps = [
        {
            "method": "update",
            "label": str(int(rk)),
            "args": [
                {"z": [_typed(frames.approx[i]), _typed(frames.residual[i])]},
                {
                    f"annotations[{approx_title}].text": f"best rank-{int(rk)} approximation BA",
                    f"annotations[{readout}].text": _readout_text(curves, int(rk)),
                },
                [1, 2],
            ],
        }
        for i, rk in enumerate(ranks)
    ]
    title = f"ΔW is {frames.d}×{frames.k}"
    if averaged:
        title += f"; shown as {D}×{K} block averages (up to {cell} entries per cell)"
    if presenter:  # the size is in the first panel's title; the page's caption says when cells are block averages
        title = ""
    layout |= {
        "title": {"text": title, "font": {"size": 14}, "y": 0.97, "yanchor": "top"},
        "coloraxis": {
            "colorscale": colorscale("diverging", theme),
            "cmin": -zmax,
            "cmax": zmax,
            "colorbar": {"title": {"text": "entry"}, "thickness": 14} | ({"x": 1.01, "xpad": 12} if presenter else {}),
        },
        "sliders": [
            {
                "active": j,
                "steps": steps,
                # presenter mode: the readout above the panels already starts with r, in bold
                "currentvalue": {"prefix": "rank budget r = ", "visible": not presenter},
                "pad": {"t": 40 if presenter else 62},  # under the tick labels (and the x-axis titles)
                "len": 1.0,
                "x": 0.0,
            }
        ],
        # the readout's two lines and the panel titles above the panels
        "margin": {"t": 100, "b": 20} if presenter else {"t": 125, "b": 40},
        "uirevision": UIREVISION,
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=False)


def _curve_index(m: int, max_points: int) -> np.ndarray:
    """Indices 0..m to plot: all of them, or every small r plus a geometric then uniform spread when m is large."""
    if m + 1 <= max_points:
        return np.arange(m + 1)
    half = max_points // 2
    dense = np.arange(min(m + 1, half // 2))
    geo = np.rint(np.geomspace(1, m, half)).astype(np.int64)
    uniform = np.rint(np.linspace(0, m, max_points - half // 2 - half)).astype(np.int64)
    return np.union1d(np.union1d(dense, geo), uniform)


def _axes(cell: int) -> dict[str, str]:
    """xaxis / yaxis ids of grid cell 1, 2, ... (row by row)."""
    suffix = "" if cell == 1 else str(cell)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}


def _scatter(x: Any, y: Any, name: str, hover: str, cell: int, **extra: Any) -> dict[str, Any]:
    return {"type": "scatter", "x": x, "y": y, "name": name, "hovertemplate": hover, **_axes(cell), **extra}


def lora_curves_figure(
    curves: RankCurves,
    r: int,
    *,
    slider_ranks: Sequence[int] | None = None,
    max_points: int = 1000,
    log_r: bool = False,
    height: int = 620,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Four panels against the rank: singular values (log scale), relative error, energy captured, trainable numbers.

    * sigma_i against i, the kept ones (i <= r) in orange, on a log axis;
    * ||Delta W - Delta W_r||_F / ||Delta W||_F (Eckart-Young) and the spectral error sigma_{r+1} / sigma_1;
    * energy captured sum_{i<=r} sigma_i^2 / sum sigma_i^2;
    * trainable numbers r(d + k) against the full matrix's d k (log axis), with the break-even rank dk / (d + k).

    The current r is marked on each. ``slider_ranks`` adds a plotly slider that moves the marks in the browser.
    Curves longer than ``max_points`` are subsampled (every small r kept), and the figure says so. ``log_r`` puts
    r on a log axis (r = 0 is then left out).
    """
    m, d, k = curves.m, curves.d, curves.k
    r = int(min(max(r, 0), m))
    idx = _curve_index(m, max_points)
    if log_r:
        idx = idx[idx > 0]
    sub = idx[idx >= 1]  # singular values are indexed from 1
    kept = sub <= r
    params_idx = idx[idx > 0]
    titles = (
        "singular values σ<sub>i</sub>",
        "error of the best rank-r approximation",
        "energy captured",
        "trainable numbers",
    )
    _, layout = grid(2, 2, hgap=0.1, vgap=0.2, titles=titles)
    t = get_theme(theme)
    pal = t.palette
    data = [
        _scatter(
            sub,
            curves.sigma[sub - 1],
            "σ<sub>i</sub>",
            "i = %{x}<br>σ<sub>i</sub> = %{y:.3g}<extra></extra>",
            1,
            mode="lines",
            line={"color": pal["neutral"], "width": 1.5},
        ),
        _scatter(
            sub[kept],
            curves.sigma[sub[kept] - 1],
            "kept (i ≤ r)",
            "kept: i = %{x}<br>σ<sub>i</sub> = %{y:.3g}<extra></extra>",
            1,
            mode="markers",
            marker={"color": pal["optimised"], "size": 5},
        ),
        _scatter(
            idx,
            curves.rel_frobenius[idx],
            "‖ΔW − BA‖<sub>F</sub> / ‖ΔW‖<sub>F</sub>",
            "r = %{x}<br>Frobenius error %{y:.2%}<extra></extra>",
            2,
            mode="lines",
            line={"color": pal["reference"], "width": 2.5},
        ),
        _scatter(
            idx,
            curves.rel_spectral[idx],
            "σ<sub>r+1</sub> / σ<sub>1</sub> (spectral)",
            "r = %{x}<br>spectral error %{y:.2%}<extra></extra>",
            2,
            mode="lines",
            line={"color": pal["rule"], "width": 1.5, "dash": "dot"},
        ),
        _scatter(
            idx,
            curves.energy[idx],
            "energy captured",
            "r = %{x}<br>energy %{y:.2%}<extra></extra>",
            3,
            mode="lines",
            line={"color": pal["optimum"], "width": 2.5},
        ),
        _scatter(
            params_idx,
            curves.params[params_idx],
            "LoRA r(d + k)",
            "r = %{x}<br>r(d + k) = %{y:,}<extra></extra>",
            4,
            mode="lines",
            line={"color": pal["optimised"], "width": 2.5},
        ),
        _scatter(
            [params_idx[0], params_idx[-1]],
            [d * k, d * k],
            "full matrix dk",
            f"full update dk = {d * k:,}<extra></extra>",
            4,
            mode="lines",
            line={"color": pal["reference"], "width": 2, "dash": "dash"},
        ),
    ]
    # The marks of the current r (the last four traces), which the optional slider moves.
    first_mark = len(data)
    for cell, (x, y, text) in enumerate(_marks(curves, r), start=1):
        data.append(
            _scatter(
                x,
                y,
                "current r",
                "%{text}<extra>current r</extra>",
                cell,
                mode="markers",
                marker={
                    "color": pal["negative"],
                    "size": 12,
                    "symbol": "diamond",
                    "line": {"color": t.text, "width": 1},
                },
                showlegend=cell == 1,
                text=text,
            )
        )
    break_even = d * k / (d + k)
    layout["annotations"].append(
        {
            "text": f"r(d+k) = dk at r = {break_even:.0f}",
            "x": math.log10(break_even) if log_r else break_even,
            "y": math.log10(d * k),
            "xref": "x4",
            "yref": "y4",
            "showarrow": True,
            "arrowhead": 2,
            "ax": -40,
            "ay": 25,
            "arrowcolor": t.axis,
            "font": {"size": 13},
        }
    )
    xtype = "log" if log_r else "linear"
    for cell, x_title in enumerate(("index i", "rank r", "rank r", "rank r"), start=1):
        layout["xaxis" if cell == 1 else f"xaxis{cell}"] |= {"type": xtype, "title": {"text": x_title}}
    layout["yaxis"] |= {"type": "log", "exponentformat": "power", "title": {"text": "σ<sub>i</sub>"}}
    layout["yaxis2"] |= {"tickformat": ".0%", "range": [0, 1.02], "title": {"text": "relative error"}}
    layout["yaxis3"] |= {"tickformat": ".0%", "range": [0, 1.02], "title": {"text": "share of ‖ΔW‖²<sub>F</sub>"}}
    layout["yaxis4"] |= {"type": "log", "dtick": 1, "exponentformat": "SI", "title": {"text": "parameters"}}
    note = f"d = {d}, k = {k}"
    if idx.shape[0] < m + 1:
        note += f"; curves drawn at {idx.shape[0]} of the {m + 1} ranks (every small r kept)"
    layout |= {"title": {"text": note, "font": {"size": 14}}, "uirevision": UIREVISION}
    if slider_ranks is not None:
        steps = []
        for rk in slider_ranks:
            rk = int(min(max(rk, 0), m))
            mk = _marks(curves, rk)
            steps.append(
                {
                    "method": "restyle",
                    "label": str(rk),
                    "args": [
                        {"x": [x for x, _, _ in mk], "y": [y for _, y, _ in mk], "text": [t for _, _, t in mk]},
                        list(range(first_mark, first_mark + 4)),
                    ],
                }
            )
        active = _nearest_index(np.asarray([int(s["label"]) for s in steps]), r)
        layout["sliders"] = [{"active": active, "steps": steps, "currentvalue": {"prefix": "r = "}, "pad": {"t": 50}}]
    # the title, the legend and the panel titles above the plots: more room for presenter mode's type
    layout |= {"hovermode": "closest", "margin": {"t": 150 if presenter else 120}, "legend": {"y": 1.09}}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def _marks(curves: RankCurves, r: int) -> list[tuple[list, list, list]]:
    """(x, y, hover text) of the current-r marker in each of the four panels (empty where r = 0 has no point)."""
    ro = curves.readout(r)
    sigma = [(r, float(curves.sigma[r - 1]), f"σ<sub>{r}</sub> = {curves.sigma[r - 1]:.3g}")] if r >= 1 else []
    params = [(r, ro.params, f"r(d+k) = {ro.params:,} ({share(ro.share)} of dk)")] if r >= 1 else []
    err = [(r, ro.rel_frobenius, f"r = {r}: error {share(ro.rel_frobenius)}")]
    energy = [(r, ro.energy, f"r = {r}: energy {share(ro.energy)}")]
    return [([p[0] for p in ps], [p[1] for p in ps], [p[2] for p in ps]) for ps in (sigma, err, energy, params)]


def _thin(n: int, max_points: int) -> np.ndarray:
    return np.arange(n) if n <= max_points else np.unique(np.rint(np.linspace(0, n - 1, max_points)).astype(np.int64))


def lora_training_figure(
    results: Mapping[str, TrainResult],
    *,
    max_points: int = 1500,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Training a LoRA layer under each initialisation: loss, ||A||_F and ||B||_F per step, gradients at step 0.

    Left: the loss (log scale) per step, with the best any rank-r adapter can reach (dotted) when it is not ~0.
    Middle: ||A||_F (solid) and ||B||_F (dashed). Right: ||dL/dA|| and ||dL/dB|| at step 0, labelled "0 exactly"
    when a gradient is exactly zero (A's gradient with B = 0, both with A = B = 0).
    """
    t = get_theme(theme)
    titles = ("loss", "‖A‖<sub>F</sub> (solid) and ‖B‖<sub>F</sub> (dashed)", "gradient norms at step 0")
    _, layout = grid(1, 3, widths=[0.36, 0.3, 0.34], hgap=0.12, titles=titles)
    data: list[dict[str, Any]] = []
    floor = None
    for init, res in results.items():
        colour = _init_colour(init, t)
        name = INIT_NAMES.get(init, init)
        steps = res.loss.shape[0]
        ts = _thin(steps, max_points)
        loss = np.maximum(res.loss[ts], np.finfo(np.float64).tiny)  # a log axis cannot show an exact 0
        data.append(
            _scatter(
                ts,
                loss,
                name,
                f"{name}<br>step %{{x}}<br>loss %{{y:.3g}}<extra></extra>",
                1,
                mode="lines",
                line={"color": colour, "width": 2.5},
                legendgroup=init,
            )
        )
        for norm, dash, label in ((res.norm_A, "solid", "‖A‖"), (res.norm_B, "dash", "‖B‖")):
            data.append(
                _scatter(
                    ts,
                    norm[ts],
                    f"{label} {name}",
                    f"{name}<br>step %{{x}}<br>{label}<sub>F</sub> = %{{y:.3g}}<extra></extra>",
                    2,
                    mode="lines",
                    line={"color": colour, "width": 2, "dash": dash},
                    legendgroup=init,
                    showlegend=False,
                )
            )
        floor = res.loss_floor
    inits = list(results)
    names = [INIT_NAMES.get(i, i) for i in inits]
    gmax = 0.0
    colours = [_init_colour(i, t) for i in inits]
    for which, pattern in (("A", ""), ("B", "/")):
        norms = [float(np.linalg.norm(getattr(results[i], f"grad_{which}0"))) for i in inits]
        gmax = max(gmax, *norms)
        data.append(
            {
                "type": "bar",
                "y": names,
                "x": norms,
                "orientation": "h",
                "marker": {"color": colours, "pattern": {"shape": pattern}},
                "name": f"‖∂L/∂{which}‖ at step 0",
                "showlegend": False,
                "text": [f"∂L/∂{which}: " + ("0 exactly" if g == 0 else f"{g:.3g}") for g in norms],
                "textposition": "outside",
                "constraintext": "none",
                "cliponaxis": False,
                "hovertemplate": f"%{{y}}<br>‖∂L/∂{which}‖<sub>F</sub> = %{{x:.3g}} at step 0<extra></extra>",
                **_axes(3),
            }
        )
    if floor is not None and results:
        first = next(iter(results.values()))
        if floor > 1e-9 * max(first.loss[0], 1e-300):
            data.append(
                _scatter(
                    [0, first.loss.shape[0] - 1],
                    [floor, floor],
                    "best rank-r loss (Eckart-Young)",
                    "floor %{y:.3g}<extra></extra>",
                    1,
                    mode="lines",
                    line={"color": t.palette["neutral"], "dash": "dot", "width": 1.5},
                )
            )
    layout["xaxis"] |= {"title": {"text": "step"}}
    layout["xaxis2"] |= {"title": {"text": "step"}}
    layout["yaxis"] |= {"type": "log", "dtick": 1, "exponentformat": "power", "title": {"text": "mean squared error"}}
    layout["yaxis2"] |= {"title": {"text": "Frobenius norm"}, "rangemode": "tozero"}
    layout["xaxis3"] |= {
        "title": {"text": "‖gradient‖<sub>F</sub> (A plain, B hatched)"},
        "range": [0, 1.6 * (gmax or 1.0)],
    }
    # the initialisations' names on two lines where they have a comma: on one line "B = 0, A random" ran into the
    # middle panel on a deck's slide (the figure beside its readouts)
    names = [INIT_NAMES.get(init, init) for init in results]
    layout["yaxis3"] |= {
        "autorange": "reversed",
        "tickvals": names,
        "ticktext": [n.replace(", ", ",<br>") for n in names],
    }
    layout |= {
        "barmode": "group",
        "uirevision": UIREVISION,
        "margin": {"t": 140 if presenter else 110},
        "legend": {"y": 1.16 if presenter else 1.14},
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def lora_memory_figure(
    configs: Mapping[str, LoraMemory],
    *,
    gpu_gb: float | None = None,
    height: int = 360,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Training memory in GB: full fine-tuning (16 bytes per parameter) against each LoRA configuration.

    One horizontal bar per row: "full fine-tuning" (from the first configuration's N), then for each entry of
    ``configs`` the frozen base (blue) and the adapters' 16 bytes per trainable parameter (orange), stacked.
    ``gpu_gb`` draws a vertical line at one GPU's memory as the GPU is sold: its "GB" are GiB (an "80 GB" H100 holds
    80 GiB), so the line sits at gpu_gb * 2**30 bytes on this axis of 10^9 bytes (85.9 for 80, 51.5 for 48).
    Activations are not included, and the figure says so.
    """
    if not configs:
        raise ValueError("configs must hold at least one LoraMemory")
    t = get_theme(theme)
    pal = t.palette
    labels = list(configs)
    first = configs[labels[0]]
    rows = ["full fine-tuning", *labels]
    gb = 1e9
    base = [0.0] + [configs[n].base_bytes / gb for n in labels]
    adapter = [0.0] + [configs[n].adapter_state_bytes / gb for n in labels]
    full = [first.full_ft_bytes / gb] + [0.0] * len(labels)
    bar = {"type": "bar", "y": rows, "orientation": "h"}
    data = [
        bar
        | {
            "x": full,
            "name": "weights + gradients + Adam states (16 B/param)",
            "marker": {"color": pal["negative"]},
            "text": [f"{v:,.1f} GB" if v else "" for v in full],
            "textposition": "auto",
            "hovertemplate": "%{y}<br>%{x:,.1f} GB<extra>full fine-tuning</extra>",
        },
        bar
        | {
            "x": base,
            "name": "frozen base weights",
            "marker": {"color": pal["reference"]},
            "text": ["", *[f"{v:,.1f} GB ({configs[n].base_format})" for v, n in zip(base[1:], labels, strict=True)]],
            "textposition": "auto",
            "textangle": 0,
            "hovertemplate": "%{y}<br>frozen base %{x:,.2f} GB<extra></extra>",
        },
        bar
        | {
            "x": adapter,
            "name": "adapter states (16 B per trainable parameter)",
            "marker": {"color": pal["optimised"]},
            "customdata": [0, *[configs[n].trainable for n in labels]],
            "hovertemplate": "%{y}<br>adapter states %{x:,.3f} GB for %{customdata:,} parameters<extra></extra>",
        },
    ]
    annotations: list[dict[str, Any]] = [
        {
            "x": configs[n].lora_total_bytes / gb,
            "y": rows[i],
            "text": f"{configs[n].lora_total_bytes / gb:,.1f} GB total; "
            f"adapter states {configs[n].adapter_state_bytes / gb:.3g} GB",
            "showarrow": False,
            "xanchor": "left",
            "xshift": 6,
        }
        for i, n in enumerate(labels, start=1)
    ]
    shapes: list[dict[str, Any]] = []
    if gpu_gb is not None:
        gpu_x = gpu_gb * 2**30 / gb  # a GPU's "GB" are GiB
        shapes.append(
            {
                "type": "line",
                "x0": gpu_x,
                "x1": gpu_x,
                "xref": "x",
                "y0": 0,
                "y1": 1,
                "yref": "y domain",
                "line": {"color": pal["neutral"], "dash": "dash"},
            }
        )
        annotations.append(  # below the bars' middles, where the totals are written
            {
                "x": gpu_x,
                "xref": "x",
                "y": 0,
                "yref": "y domain",
                "text": f"one “{gpu_gb:g} GB” GPU: {gpu_gb:g} GiB = {gpu_x:,.1f} GB",
                "showarrow": False,
                "xanchor": "left",
                "yanchor": "bottom",
                "yshift": -2,
            }
        )
    layout = {
        "barmode": "stack",
        "xaxis": {"title": {"text": "memory for training (GB, 10<sup>9</sup> bytes; activations not included)"}},
        "yaxis": {"autorange": "reversed"},
        "annotations": annotations,
        "shapes": shapes,
        "uirevision": UIREVISION,
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


__all__ = [
    "INIT_COLOURS",
    "INIT_NAMES",
    "lora_curves_figure",
    "lora_heatmaps_figure",
    "lora_memory_figure",
    "lora_training_figure",
]
