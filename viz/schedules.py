"""Figures of the schedules page: LR schedules with their modelled loss, WSD branches, the Kaplan read-off gap and
the data mixture over the run.

The loss curves come from a model (Tissue et al. 2024, :class:`core.schedules.AnnealingLossModel`, illustrative
constants); every figure's loss axis says so.

- :func:`schedule_figure`: learning rate (top) and modelled loss (bottom) for several schedules; with a
  :class:`core.schedules.WsdSweep`, a slider over the WSD decay's length that redraws the WSD curves in the browser.
- :func:`wsd_branch_figure`: one WSD run's stable phase with decays branched off at several steps.
- :func:`kaplan_figure`: one long cosine run's loss curve, and the end losses of runs whose cosine fits their
  own length (lower): reading short runs off the long schedule overstates their loss.
- :func:`mixture_figure`: the data mixture as a stacked area, with the learning rate on a second axis.

Figures are assembled as plain dicts through :func:`viz.style.figure`; every builder takes ``theme`` ("light" or
"dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go

from core.schedules import (
    DEFAULT_LOSS_MODEL,
    AnnealingLossModel,
    KaplanGap,
    Mixture,
    WsdSweep,
    lr_schedule,
    wsd_branch,
)
from viz.style import figure, get_theme

MODEL_LABEL = "modelled loss (Tissue et al. 2024 form, illustrative constants)"


def _thin(n: int, max_points: int = 800) -> np.ndarray:
    """Indices of at most max_points steps, always including the last (long runs draw fast)."""
    idx = np.unique(np.linspace(0, n - 1, min(n, max_points)).round().astype(int))
    return idx


def _padded(values: Sequence[float], share: float = 0.12) -> list[float]:
    """[min, max] of ``values`` widened by ``share`` of their span on each side (a span of 0: by 0.05)."""
    lo, hi = min(values), max(values)
    pad = share * (hi - lo) if hi > lo else 0.05
    return [lo - pad, hi + pad]


def wsd_name(decay_steps: int, decay_shape: str) -> str:
    """The name of a WSD schedule in :func:`schedule_figure`'s legend (and the key the page gives it)."""
    return f"WSD ({decay_steps:,}-step {decay_shape} decay)"


def _loss_hover(name: str) -> str:
    return f"step %{{x}}: loss %{{y:.3f}} ({name})<extra></extra>"


def schedule_figure(
    schedules: Mapping[str, Sequence[float]],
    model: AnnealingLossModel = DEFAULT_LOSS_MODEL,
    *,
    sweep: WsdSweep | None = None,
    active: int = 0,
    labels: Sequence[str] | None = None,
    height: int = 560,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """LR (top panel) and modelled loss (bottom panel) against the step, one colour per schedule.

    Traces 2k and 2k + 1: the LR and the loss of the k-th schedule. ``sweep`` (core's
    :func:`~core.schedules.wsd_sweep` of the same run): WSD runs with other decay lengths; the schedule named
    ``wsd_name(sweep.decay_steps[active], sweep.decay_shape)`` is drawn from the sweep's row ``active`` (at its
    sampled steps, denser in the decay), and a slider gets one step per row (``labels``, default the decay steps)
    that restyles that schedule's two traces (points, name, hover) in the browser. The loss axis spans every row.
    """
    t = get_theme(theme)
    if not schedules:
        raise ValueError("need at least one schedule")
    swept = None
    if sweep is not None:
        swept = wsd_name(sweep.decay_steps[active], sweep.decay_shape)
        if swept not in schedules:
            raise ValueError(f"the sweep's active row ({swept}) is not one of the schedules")
        if labels is not None and len(labels) != len(sweep.decay_steps):
            raise ValueError("need one label per row of the sweep")
    data = []
    late: list[float] = []  # the modelled loss after the first tenth of each run: the range the schedules differ in
    for k, (name, lr) in enumerate(schedules.items()):
        lr = np.asarray(lr, dtype=np.float64)
        colour = t.sequence[k % len(t.sequence)]
        common = {"type": "scatter", "mode": "lines", "legendgroup": name, "line": {"color": colour}}
        if name == swept:
            assert sweep is not None
            # 4 decimals (the hover prints 3): the slider's 2 x ~50 curves stay short in JSON; numpy arrays, not
            # lists, keep plotly's copy of the layout fast (it copies a list item by item)
            rows = [(np.round(y, 4), np.round(L, 4)) for y, L in zip(sweep.lr, sweep.loss, strict=True)]
            ats = list(sweep.at)
            for s, (_, L) in zip(ats, rows, strict=True):
                tail = L[s > lr.size // 10]
                late += [float(tail.min()), float(tail.max())]
            swept_index = k
            x, y_lr, y_loss = ats[active], *rows[active]
        else:
            loss = model.loss(lr)
            late += [float(loss[lr.size // 10 :].min()), float(loss[lr.size // 10 :].max())]
            i = _thin(lr.size)
            x, y_lr, y_loss = i + 1, lr[i], loss[i]
        common["x"] = x
        data.append({**common, "y": y_lr, "name": name, "yaxis": "y", "hovertemplate": "step %{x}: lr %{y:.3g}"})
        data.append(
            {
                **common,
                "y": y_loss,
                "name": name,
                "showlegend": False,
                "yaxis": "y2",
                "hovertemplate": _loss_hover(name),
            }
        )
    layout = {
        "xaxis": {"title": {"text": "step"}, "anchor": "y2"},
        "yaxis": {"domain": [0.62, 1.0], "title": {"text": "learning rate / peak"}, "rangemode": "tozero"},
        # the first steps' loss (82 at step 1) ran the axis past 80 and flattened the schedules' 0.03-nat gaps: the
        # axis spans the runs after their first tenth, and the first steps run off its top
        "yaxis2": {"domain": [0.0, 0.55], "title": {"text": "modelled loss"}, "range": _padded(late)},
        "annotations": [
            {
                "text": MODEL_LABEL,
                "xref": "paper",
                "yref": "paper",
                "x": 1.0,
                "y": 0.55,
                "xanchor": "right",
                "yanchor": "top",
                "showarrow": False,
                "font": {"size": 12, "color": t.muted},
            }
        ],
        "hovermode": "x unified",
    }
    if sweep is not None:
        names = [wsd_name(D, sweep.decay_shape) for D in sweep.decay_steps]
        steps = [
            {
                "method": "update",
                "label": labels[r] if labels is not None else f"{D:,} steps",
                "args": [
                    {
                        "x": [ats[r], ats[r]],
                        "y": list(rows[r]),
                        "name": [names[r], names[r]],
                        "hovertemplate": ["step %{x}: lr %{y:.3g}", _loss_hover(names[r])],
                    },
                    {},
                    [2 * swept_index, 2 * swept_index + 1],
                ],
            }
            for r, D in enumerate(sweep.decay_steps)
        ]
        pad = 75 if presenter else 60  # the x-axis tick labels and title stand in it, above the drag row
        layout["sliders"] = [
            {
                "active": active,
                "steps": steps,
                "currentvalue": {"prefix": "WSD decay: "},
                "pad": {"t": pad},
                "len": 1.0,
                "x": 0.0,
            }
        ]
        layout["uirevision"] = "schedules"
        # the plot keeps its height: plotly's slider takes pad + 84 px where the margin was 55 (presenter mode
        # scales the whole height by 1.2, which covers its larger pad)
        height += 60 + 84 - 55
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def wsd_branch_figure(
    steps: int,
    branch_steps: Sequence[int],
    decay_steps: int,
    model: AnnealingLossModel = DEFAULT_LOSS_MODEL,
    *,
    warmup: int | None = None,
    final_lr_frac: float = 0.1,
    decay_shape: str = "linear",
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Modelled loss of the WSD stable phase (blue) and of a decay branched off at each step (orange shades).
    ``warmup``: the run's warm-up steps (core's default, 1% of the run, when None); ``final_lr_frac`` and
    ``decay_shape``: each branch's floor (as a fraction of the peak) and cool-down shape, as in
    :func:`core.schedules.lr_schedule`."""
    pal = get_theme(theme).palette
    stable = lr_schedule("constant", steps, warmup=warmup)
    L = model.loss(stable)
    i = _thin(steps)
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": i + 1,
            "y": L[i],
            "name": "stable phase (constant LR)",
            "line": {"color": pal["reference"]},
        }
    ]
    ends = []
    for b in branch_steps:
        lr = wsd_branch(
            steps, int(b), int(decay_steps), warmup=warmup, final_lr_frac=final_lr_frac, decay_shape=decay_shape
        )
        Lb = model.loss(lr)
        x = np.arange(int(b), lr.size + 1)
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": x,
                "y": Lb[x - 1],
                "name": f"decay from step {int(b):,}",
                "line": {"color": pal["optimised"]},
                "hovertemplate": "step %{x}: loss %{y:.3f}<extra></extra>",
            }
        )
        ends.append((lr.size, float(Lb[-1])))
    data.append(
        {
            "type": "scatter",
            "mode": "markers",
            "x": [e[0] for e in ends],
            "y": [e[1] for e in ends],
            "name": "end of each branch",
            "marker": {"color": pal["optimised"], "size": 10, "symbol": "diamond"},
        }
    )
    layout = {
        "xaxis": {"title": {"text": "step"}},
        "yaxis": {"title": {"text": "modelled loss"}},
        "title": {"text": MODEL_LABEL, "font": {"size": 13}},
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def kaplan_figure(
    gap: KaplanGap,
    long_steps: int,
    model: AnnealingLossModel = DEFAULT_LOSS_MODEL,
    *,
    warmup: int | None = None,
    final_lr_frac: float = 0.1,
    height: int = 420,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The long cosine run's modelled loss, its read-offs at shorter lengths (blue), each length's own run (green).
    ``warmup`` and ``final_lr_frac``: the long cosine's, as given to :func:`core.schedules.kaplan_gap` for ``gap``
    (core's defaults when None and 0.1), so that the drawn curve passes through the read-off markers."""
    pal = get_theme(theme).palette
    L = model.loss(lr_schedule("cosine", long_steps, warmup=warmup, final_lr_frac=final_lr_frac))
    i = _thin(long_steps)
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": i + 1,
            "y": L[i],
            "name": f"one cosine schedule of {long_steps:,} steps",
            "line": {"color": pal["reference"]},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "x": gap.lengths,
            "y": gap.read_from_long,
            "name": "short run read off the long schedule",
            "marker": {"color": pal["reference"], "size": 10},
        },
        {
            "type": "scatter",
            "mode": "markers",
            "x": gap.lengths,
            "y": gap.own_schedule,
            "name": "short run with its own cosine",
            "marker": {"color": pal["optimum"], "size": 10, "symbol": "diamond"},
            "customdata": gap.gap,
            "hovertemplate": "%{x} steps: %{y:.3f} (%{customdata:.3f} lower)<extra></extra>",
        },
    ]
    layout = {
        "xaxis": {"title": {"text": "run length (steps)"}},
        "yaxis": {"title": {"text": "modelled loss"}},
        "title": {"text": MODEL_LABEL, "font": {"size": 13}},
        "hovermode": "closest",
    }
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def mixture_figure(
    mixture: Mixture,
    lr: Sequence[float] | None = None,
    *,
    height: int = 420,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Stacked areas of the sources' shares over the run, with the learning rate as a dashed line on the right."""
    t = get_theme(theme)
    w = mixture.weights
    i = _thin(w.shape[0])
    data = [
        {
            "type": "scatter",
            "mode": "lines",
            "x": i + 1,
            "y": w[i, k],
            "stackgroup": "mix",
            "name": name,
            "line": {"width": 0.5, "color": t.sequence[k % len(t.sequence)]},
            "hovertemplate": f"{name}: %{{y:.1%}}<extra></extra>",
        }
        for k, name in enumerate(mixture.sources)
    ]
    layout = {
        "xaxis": {"title": {"text": "step"}},
        "yaxis": {"title": {"text": "share of the batch"}, "tickformat": ".0%", "range": [0, 1]},
        "hovermode": "x unified",
    }
    if lr is not None:
        lr = np.asarray(lr, dtype=np.float64)
        if lr.size != w.shape[0]:
            raise ValueError("lr needs one value per step of the mixture")
        data.append(
            {
                "type": "scatter",
                "mode": "lines",
                "x": i + 1,
                "y": lr[i] / lr.max(),
                "name": "learning rate / peak",
                "yaxis": "y2",
                "line": {"color": t.palette["neutral"], "dash": "dash", "width": 2},
            }
        )
        layout["yaxis2"] = {"overlaying": "y", "side": "right", "range": [0, 1.05], "showgrid": False}
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
