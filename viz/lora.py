"""Figures of the LoRA page: Delta W against its best rank-r approximation, the rank curves, live training, memory.

Builders take what core.lora computed (its small dataclasses of numpy arrays) and do no heavy math. The rank
slider lives inside the heatmap figure (plotly ``layout.sliders`` with ``method="update"``), so dragging r swaps the
pre-computed frames in the browser with no server round trip. To keep the figure JSON small the frames are block
averages (at most 64 x 64, core.lora.display_frames) sent as float32 base64 typed arrays.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import plotly.graph_objects as go
from plotly.subplots import make_subplots

from viz.style import DIVERGING, PALETTE, apply_style

if TYPE_CHECKING:
    from core.lora import DisplayFrames, LoraMemory, RankCurves, TrainResult

UIREVISION = "lora"
INIT_COLOURS: dict[str, str] = {
    "B0": PALETTE["optimum"],
    "zeros": PALETTE["neutral"],
    "both_random": PALETTE["negative"],
    "A0": PALETTE["reference"],
}
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


def _percent(x: float) -> str:
    """A share as a percentage with enough digits to be non-zero when x is (0.12%, 0.0061%)."""
    if x == 0:
        return "0%"
    p = 100.0 * x
    digits = 1 if p >= 10 else 2 if p >= 0.1 else max(2, 1 - math.floor(math.log10(p)))
    return f"{p:.{digits}f}%"


def percent(x: float) -> str:
    """A share as a percentage for readouts, with enough digits to be non-zero when x is: 0.0012 -> '0.12%'.

    Below 1e-10 (rounding noise of an exact result) it says '≈ 0%' instead of printing the noise's digits.
    """
    return "≈ 0%" if 0 < abs(x) < 1e-10 else _percent(x)


def _readout_text(curves: RankCurves, r: int) -> str:
    ro = curves.readout(int(r))
    return (
        f"<b>r = {ro.r}</b> of min(d, k) = {curves.m} &nbsp;·&nbsp; "
        f"error ‖ΔW − BA‖<sub>F</sub>/‖ΔW‖<sub>F</sub> = {_percent(ro.rel_frobenius)} &nbsp;·&nbsp; "
        f"energy captured {_percent(ro.energy)}<br>"
        f"trainable r(d+k) = {ro.params:,} of dk = {ro.params_full:,} ({_percent(ro.share)})"
    )


def _nearest_index(values: np.ndarray, r: int) -> int:
    return int(np.argmin(np.abs(np.asarray(values) - r)))


def lora_heatmaps_figure(
    frames: DisplayFrames, curves: RankCurves, r: int, *, height: int = 470, presenter: bool = False
) -> go.Figure:
    """Delta W, its best rank-r approximation B A and the residual, side by side on one diverging colour scale.

    ``frames`` (core.lora.display_frames) holds one block-averaged approximation and residual per slider rank;
    ``curves`` (core.lora.rank_curves) gives the readout line. The plotly slider under the heatmaps swaps the
    approximation, the residual, the middle title and the readout for each rank in ``frames.ranks``, in the
    browser; it starts at the rank nearest ``r`` (include r in the frames to start exactly there). ``presenter``
    makes room for the frame's 20 px type: the readout line higher above the panel titles, the slider's label
    lower below the axes.
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
    titles = ("target ΔW", f"best rank-{int(ranks[j])} approximation BA", "residual ΔW − BA")
    zs = (frames.target, frames.approx[j], frames.residual[j])
    domains = ((0.0, 0.3), (0.345, 0.645), (0.69, 0.99))
    # The layout is written in one piece (no make_subplots): a page rebuilds this figure on every change of r.
    layout: dict = {"annotations": [], "uirevision": UIREVISION}
    data = []
    for i, (name, z, dom, sub_title) in enumerate(zip(names, zs, domains, titles, strict=True), start=1):
        xa, ya = ("x", "y") if i == 1 else (f"x{i}", f"y{i}")
        data.append(
            go.Heatmap(
                z=np.asarray(z, dtype=np.float32),
                x=frames.col_centres,
                y=frames.row_centres,
                xaxis=xa,
                yaxis=ya,
                coloraxis="coloraxis",
                name=name,
                hovertemplate=f"{name}<br>row %{{y:.0f}}, column %{{x:.0f}}<br>{where} %{{z:.3g}}<extra></extra>",
            )
        )
        layout["xaxis" if i == 1 else f"xaxis{i}"] = {
            "domain": dom,
            "anchor": ya,
            "constrain": "domain",
            "title": {"text": "column (input index)"},
        }
        layout["yaxis" if i == 1 else f"yaxis{i}"] = {
            "domain": (0.0, 1.0),
            "anchor": xa,
            "autorange": "reversed",
            "scaleanchor": xa,
            "constrain": "domain",
            "title": {"text": "row (output index)" if i == 1 else ""},
        }
        layout["annotations"].append(
            {
                "text": sub_title,
                "xref": "paper",
                "yref": "paper",
                "x": (dom[0] + dom[1]) / 2,
                "y": 1.0,
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
            }
        )
    layout["annotations"].append(
        {
            "text": _readout_text(curves, int(ranks[j])),
            "xref": "paper",
            "yref": "paper",
            "x": 0.0,
            "y": 1.0,
            "yshift": 36 if presenter else 28,  # pixels above the panel titles, whatever the figure's height
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
    layout.update(
        title={"text": title, "font": {"size": 14}, "y": 0.97, "yanchor": "top"},
        coloraxis={
            "colorscale": DIVERGING,
            "cmin": -zmax,
            "cmax": zmax,
            "colorbar": {"title": {"text": "entry"}, "thickness": 14},
        },
        sliders=[
            {
                "active": j,
                "steps": steps,
                "currentvalue": {"prefix": "rank budget r = "},
                "pad": {"t": 85 if presenter else 62},
                "len": 1.0,
                "x": 0.0,
            }
        ],
    )
    fig = go.Figure(data=data, layout=layout)
    apply_style(fig, height=height, legend=False)
    fig.update_layout(margin={"t": 175 if presenter else 125, "b": 40})
    return fig


def _curve_index(m: int, max_points: int) -> np.ndarray:
    """Indices 0..m to plot: all of them, or every small r plus a geometric then uniform spread when m is large."""
    if m + 1 <= max_points:
        return np.arange(m + 1)
    half = max_points // 2
    dense = np.arange(min(m + 1, half // 2))
    geo = np.rint(np.geomspace(1, m, half)).astype(np.int64)
    uniform = np.rint(np.linspace(0, m, max_points - half // 2 - half)).astype(np.int64)
    return np.union1d(np.union1d(dense, geo), uniform)


def _grid(rows: int, cols: int, titles: Sequence[str], hspace: float, vspace: float) -> dict:
    """A layout dict with a rows x cols grid of axes (x, y, x2, y2, ... row by row) and a title over each cell.

    The same grid make_subplots draws, written directly: figures rebuilt on every change of r stay cheap.
    """
    width = (1.0 - hspace * (cols - 1)) / cols
    height = (1.0 - vspace * (rows - 1)) / rows
    layout: dict = {"annotations": []}
    for n in range(rows * cols):
        row, col = divmod(n, cols)
        suffix = "" if n == 0 else str(n + 1)
        x0 = col * (width + hspace)
        y1 = 1.0 - row * (height + vspace)
        clip = lambda v: min(1.0, max(0.0, round(v, 9)))  # noqa: E731  (rounding must not leave [0, 1])
        layout[f"xaxis{suffix}"] = {"domain": [clip(x0), clip(x0 + width)], "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {"domain": [clip(y1 - height), clip(y1)], "anchor": f"x{suffix}"}
        layout["annotations"].append(
            {
                "text": titles[n],
                "x": x0 + width / 2,
                "y": y1,
                "xref": "paper",
                "yref": "paper",
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
            }
        )
    return layout


def _axes(cell: int) -> dict[str, str]:
    """xaxis / yaxis ids of grid cell 1, 2, ... (row by row)."""
    suffix = "" if cell == 1 else str(cell)
    return {"xaxis": f"x{suffix}", "yaxis": f"y{suffix}"}


def lora_curves_figure(
    curves: RankCurves,
    r: int,
    *,
    slider_ranks: Sequence[int] | None = None,
    max_points: int = 1000,
    log_r: bool = False,
    height: int = 620,
    presenter: bool = False,
) -> go.Figure:
    """Four panels against the rank: singular values (log scale), relative error, energy captured, trainable numbers.

    * sigma_i against i, the kept ones (i <= r) in orange, on a log axis;
    * ||Delta W - Delta W_r||_F / ||Delta W||_F (Eckart-Young) and the spectral error sigma_{r+1} / sigma_1;
    * energy captured sum_{i<=r} sigma_i^2 / sum sigma_i^2;
    * trainable numbers r(d + k) against the full matrix's d k (log axis), with the break-even rank dk / (d + k).

    The current r is marked on each. ``slider_ranks`` adds a plotly slider that moves the marks in the browser.
    Curves longer than ``max_points`` are subsampled (every small r kept), and the figure says so. ``log_r`` puts
    r on a log axis (r = 0 is then left out). ``presenter`` leaves more room above the panels for larger type.
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
    layout = _grid(2, 2, titles, hspace=0.1, vspace=0.2)
    data = [
        go.Scatter(
            x=sub,
            y=curves.sigma[sub - 1],
            mode="lines",
            line={"color": PALETTE["neutral"], "width": 1.5},
            name="σ<sub>i</sub>",
            hovertemplate="i = %{x}<br>σ<sub>i</sub> = %{y:.3g}<extra></extra>",
            **_axes(1),
        ),
        go.Scatter(
            x=sub[kept],
            y=curves.sigma[sub[kept] - 1],
            mode="markers",
            marker={"color": PALETTE["optimised"], "size": 5},
            name="kept (i ≤ r)",
            hovertemplate="kept: i = %{x}<br>σ<sub>i</sub> = %{y:.3g}<extra></extra>",
            **_axes(1),
        ),
        go.Scatter(
            x=idx,
            y=curves.rel_frobenius[idx],
            mode="lines",
            line={"color": PALETTE["reference"], "width": 2.5},
            name="‖ΔW − BA‖<sub>F</sub> / ‖ΔW‖<sub>F</sub>",
            hovertemplate="r = %{x}<br>Frobenius error %{y:.2%}<extra></extra>",
            **_axes(2),
        ),
        go.Scatter(
            x=idx,
            y=curves.rel_spectral[idx],
            mode="lines",
            line={"color": PALETTE["rule"], "width": 1.5, "dash": "dot"},
            name="σ<sub>r+1</sub> / σ<sub>1</sub> (spectral)",
            hovertemplate="r = %{x}<br>spectral error %{y:.2%}<extra></extra>",
            **_axes(2),
        ),
        go.Scatter(
            x=idx,
            y=curves.energy[idx],
            mode="lines",
            line={"color": PALETTE["optimum"], "width": 2.5},
            name="energy captured",
            hovertemplate="r = %{x}<br>energy %{y:.2%}<extra></extra>",
            **_axes(3),
        ),
        go.Scatter(
            x=params_idx,
            y=curves.params[params_idx],
            mode="lines",
            line={"color": PALETTE["optimised"], "width": 2.5},
            name="LoRA r(d + k)",
            hovertemplate="r = %{x}<br>r(d + k) = %{y:,}<extra></extra>",
            **_axes(4),
        ),
        go.Scatter(
            x=[params_idx[0], params_idx[-1]],
            y=[d * k, d * k],
            mode="lines",
            line={"color": PALETTE["reference"], "width": 2, "dash": "dash"},
            name="full matrix dk",
            hovertemplate=f"full update dk = {d * k:,}<extra></extra>",
            **_axes(4),
        ),
    ]
    # The marks of the current r (the last four traces), which the optional slider moves.
    first_mark = len(data)
    for cell, (x, y, text) in enumerate(_marks(curves, r), start=1):
        data.append(
            go.Scatter(
                x=x,
                y=y,
                mode="markers",
                marker={"color": PALETTE["negative"], "size": 12, "symbol": "diamond", "line": {"width": 1}},
                name="current r",
                showlegend=cell == 1,
                text=text,
                hovertemplate="%{text}<extra>current r</extra>",
                **_axes(cell),
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
            "font": {"size": 12},
        }
    )
    xtype = "log" if log_r else "linear"
    for cell, x_title in enumerate(("index i", "rank r", "rank r", "rank r"), start=1):
        layout["xaxis" if cell == 1 else f"xaxis{cell}"].update(type=xtype, title={"text": x_title})
    layout["yaxis"].update(type="log", exponentformat="power", title={"text": "σ<sub>i</sub>"})
    layout["yaxis2"].update(tickformat=".0%", range=[0, 1.02], title={"text": "relative error"})
    layout["yaxis3"].update(tickformat=".0%", range=[0, 1.02], title={"text": "share of ‖ΔW‖²<sub>F</sub>"})
    layout["yaxis4"].update(type="log", dtick=1, exponentformat="SI", title={"text": "parameters"})
    note = f"d = {d}, k = {k}"
    if idx.shape[0] < m + 1:
        note += f"; curves drawn at {idx.shape[0]} of the {m + 1} ranks (every small r kept)"
    layout.update(title={"text": note, "font": {"size": 14}}, uirevision=UIREVISION)
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
    fig = go.Figure(data=data, layout=layout)
    apply_style(fig, height=height)
    fig.update_layout(hovermode="closest", margin={"t": 150 if presenter else 120}, legend={"y": 1.09})
    return fig


def _marks(curves: RankCurves, r: int) -> list[tuple[list, list, list]]:
    """(x, y, hover text) of the current-r marker in each of the four panels (empty where r = 0 has no point)."""
    ro = curves.readout(r)
    sigma = [(r, float(curves.sigma[r - 1]), f"σ<sub>{r}</sub> = {curves.sigma[r - 1]:.3g}")] if r >= 1 else []
    params = [(r, ro.params, f"r(d+k) = {ro.params:,} ({_percent(ro.share)} of dk)")] if r >= 1 else []
    err = [(r, ro.rel_frobenius, f"r = {r}: error {_percent(ro.rel_frobenius)}")]
    energy = [(r, ro.energy, f"r = {r}: energy {_percent(ro.energy)}")]
    return [([p[0] for p in ps], [p[1] for p in ps], [p[2] for p in ps]) for ps in (sigma, err, energy, params)]


def _thin(n: int, max_points: int) -> np.ndarray:
    return np.arange(n) if n <= max_points else np.unique(np.rint(np.linspace(0, n - 1, max_points)).astype(np.int64))


def lora_training_figure(results: Mapping[str, TrainResult], *, max_points: int = 1500, height: int = 440) -> go.Figure:
    """Training a LoRA layer under each initialisation: loss, ||A||_F and ||B||_F per step, gradients at step 0.

    Left: the loss (log scale) per step, with the best any rank-r adapter can reach (dotted) when it is not ~0.
    Middle: ||A||_F (solid) and ||B||_F (dashed). Right: ||dL/dA|| and ||dL/dB|| at step 0, labelled "0 exactly"
    when a gradient is exactly zero (A's gradient with B = 0, both with A = B = 0).
    """
    fig = make_subplots(
        rows=1,
        cols=3,
        column_widths=[0.36, 0.3, 0.34],
        horizontal_spacing=0.12,
        subplot_titles=("loss", "‖A‖<sub>F</sub> (solid) and ‖B‖<sub>F</sub> (dashed)", "gradient norms at step 0"),
    )
    floor = None
    for init, res in results.items():
        colour = INIT_COLOURS.get(init, PALETTE["highlight"])
        name = INIT_NAMES.get(init, init)
        steps = res.loss.shape[0]
        t = _thin(steps, max_points)
        loss = np.maximum(res.loss[t], np.finfo(np.float64).tiny)  # a log axis cannot show an exact 0
        fig.add_trace(
            go.Scatter(
                x=t,
                y=loss,
                mode="lines",
                line={"color": colour, "width": 2.5},
                name=name,
                legendgroup=init,
                hovertemplate=f"{name}<br>step %{{x}}<br>loss %{{y:.3g}}<extra></extra>",
            ),
            row=1,
            col=1,
        )
        for norm, dash, label in ((res.norm_A, "solid", "‖A‖"), (res.norm_B, "dash", "‖B‖")):
            fig.add_trace(
                go.Scatter(
                    x=t,
                    y=norm[t],
                    mode="lines",
                    line={"color": colour, "width": 2, "dash": dash},
                    name=f"{label} {name}",
                    legendgroup=init,
                    showlegend=False,
                    hovertemplate=f"{name}<br>step %{{x}}<br>{label}<sub>F</sub> = %{{y:.3g}}<extra></extra>",
                ),
                row=1,
                col=2,
            )
        floor = res.loss_floor
    inits = list(results)
    names = [INIT_NAMES.get(i, i) for i in inits]
    gmax = 0.0
    colours = [INIT_COLOURS.get(i, PALETTE["highlight"]) for i in inits]
    for which, pattern in (("A", ""), ("B", "/")):
        norms = [float(np.linalg.norm(getattr(results[i], f"grad_{which}0"))) for i in inits]
        gmax = max(gmax, *norms)
        fig.add_trace(
            go.Bar(
                y=names,
                x=norms,
                orientation="h",
                marker={"color": colours, "pattern": {"shape": pattern}},
                name=f"‖∂L/∂{which}‖ at step 0",
                showlegend=False,
                text=[f"∂L/∂{which}: " + ("0 exactly" if g == 0 else f"{g:.3g}") for g in norms],
                textposition="outside",
                constraintext="none",
                cliponaxis=False,
                hovertemplate=f"%{{y}}<br>‖∂L/∂{which}‖<sub>F</sub> = %{{x:.3g}} at step 0<extra></extra>",
            ),
            row=1,
            col=3,
        )
    if floor is not None and results:
        first = next(iter(results.values()))
        if floor > 1e-9 * max(first.loss[0], 1e-300):
            fig.add_trace(
                go.Scatter(
                    x=[0, first.loss.shape[0] - 1],
                    y=[floor, floor],
                    mode="lines",
                    line={"color": PALETTE["neutral"], "dash": "dot", "width": 1.5},
                    name="best rank-r loss (Eckart-Young)",
                    hovertemplate="floor %{y:.3g}<extra></extra>",
                ),
                row=1,
                col=1,
            )
    fig.update_xaxes(title_text="step", row=1, col=1)
    fig.update_xaxes(title_text="step", row=1, col=2)
    fig.update_yaxes(type="log", dtick=1, exponentformat="power", title_text="mean squared error", row=1, col=1)
    fig.update_yaxes(title_text="Frobenius norm", rangemode="tozero", row=1, col=2)
    fig.update_xaxes(
        title_text="‖gradient‖<sub>F</sub> (A plain, B hatched)", range=[0, 1.6 * (gmax or 1.0)], row=1, col=3
    )
    fig.update_yaxes(autorange="reversed", row=1, col=3)
    fig.update_layout(barmode="group", uirevision=UIREVISION)
    apply_style(fig, height=height)
    fig.update_layout(margin={"t": 110}, legend={"y": 1.14})
    return fig


def lora_memory_figure(
    configs: Mapping[str, LoraMemory], *, gpu_gb: float | None = None, height: int = 360
) -> go.Figure:
    """Training memory in GB: full fine-tuning (16 bytes per parameter) against each LoRA configuration.

    One horizontal bar per row: "full fine-tuning" (from the first configuration's N), then for each entry of
    ``configs`` the frozen base (blue) and the adapters' 16 bytes per trainable parameter (orange), stacked.
    ``gpu_gb`` draws a vertical line at one GPU's memory. Activations are not included, and the figure says so.
    """
    if not configs:
        raise ValueError("configs must hold at least one LoraMemory")
    labels = list(configs)
    first = configs[labels[0]]
    rows = ["full fine-tuning", *labels]
    gb = 1e9
    base = [0.0] + [configs[n].base_bytes / gb for n in labels]
    adapter = [0.0] + [configs[n].adapter_state_bytes / gb for n in labels]
    full = [first.full_ft_bytes / gb] + [0.0] * len(labels)
    fig = go.Figure()
    fig.add_trace(
        go.Bar(
            y=rows,
            x=full,
            orientation="h",
            name="weights + gradients + Adam states (16 B/param)",
            marker={"color": PALETTE["negative"]},
            text=[f"{v:,.1f} GB" if v else "" for v in full],
            textposition="auto",
            hovertemplate="%{y}<br>%{x:,.1f} GB<extra>full fine-tuning</extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            y=rows,
            x=base,
            orientation="h",
            name="frozen base weights",
            marker={"color": PALETTE["reference"]},
            text=["", *[f"{v:,.1f} GB ({configs[n].base_format})" for v, n in zip(base[1:], labels, strict=True)]],
            textposition="auto",
            textangle=0,
            hovertemplate="%{y}<br>frozen base %{x:,.2f} GB<extra></extra>",
        )
    )
    fig.add_trace(
        go.Bar(
            y=rows,
            x=adapter,
            orientation="h",
            name="adapter states (16 B per trainable parameter)",
            marker={"color": PALETTE["optimised"]},
            customdata=[0, *[configs[n].trainable for n in labels]],
            hovertemplate="%{y}<br>adapter states %{x:,.3f} GB for %{customdata:,} parameters<extra></extra>",
        )
    )
    for i, n in enumerate(labels, start=1):
        total = configs[n].lora_total_bytes
        fig.add_annotation(
            x=total / gb,
            y=rows[i],
            text=f"{total / gb:,.1f} GB total; adapter states {configs[n].adapter_state_bytes / gb:.3g} GB",
            showarrow=False,
            xanchor="left",
            xshift=6,
        )
    if gpu_gb is not None:
        fig.add_vline(
            x=gpu_gb,
            line={"color": PALETTE["neutral"], "dash": "dash"},
            annotation_text=f"one {gpu_gb:g} GB GPU",
            annotation_position="bottom right",  # below the bars' middles, where the totals are written
            annotation_yshift=-2,
        )
    fig.update_layout(
        barmode="stack",
        xaxis_title="memory for training (GB, 10<sup>9</sup> bytes; activations not included)",
        yaxis={"autorange": "reversed"},
        uirevision=UIREVISION,
    )
    apply_style(fig, height=height)
    return fig


__all__ = [
    "INIT_COLOURS",
    "INIT_NAMES",
    "lora_curves_figure",
    "lora_heatmaps_figure",
    "lora_memory_figure",
    "lora_training_figure",
    "percent",
]
