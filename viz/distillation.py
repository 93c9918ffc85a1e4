"""Figures of the distillation page: a two-mode teacher with the student fitted by forward KL and by reverse KL (a
plotly slider over the distance between the modes), the temperature on soft targets with the T² factor, and the
two-token toy of token-level, sequence-level and on-policy distillation.

Builders take numbers computed by core.distillation (the view calls core, then these) and do no math beyond laying
them out. Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go

from viz.style import figure, get_theme, grid, readout_panel, unlabelled_slider

_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 56, 72
_SLIDER_HEIGHT = 80
_PLOT_WIDTH, _PLOT_WIDTH_PRESENTER = 0.64, 0.54


def kl_figure(
    x: np.ndarray,
    teacher: Sequence[np.ndarray],
    forward: Sequence[np.ndarray],
    reverse: Sequence[np.ndarray],
    steps_labels: Sequence[str],
    panels: Sequence[str],
    *,
    active: int = 0,
    components: int = 1,
    height: int = 430,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The teacher's density (filled), the forward-KL student and the reverse-KL student on the grid ``x``, one
    array of each per step of the slider over the distance between the modes (``steps_labels``, the page's at
    ``active``); the readout panel (``panels``) gives both KLs of each fit. Trace 0: the teacher; 1: the forward
    fit; 2: the reverse fit. Every step restyles the three traces' y and the panel's text."""
    t = get_theme(theme)
    pal = t.palette
    student = "one Gaussian" if components == 1 else f"{components} Gaussians"
    # one Gaussian: the fits show the two behaviours; two components represent the teacher, and both fits are it
    covering, seeking = (": mode-covering", ": mode-seeking") if components == 1 else ("", "")
    data: list[dict[str, Any]] = [
        {
            "type": "scatter", "x": x, "y": teacher[active], "mode": "lines", "name": "teacher p",
            "fill": "tozeroy", "line": {"color": pal["neutral"], "width": 1.5},
            "hovertemplate": "x = %{x:.2f}: %{y:.3f}<extra>teacher</extra>",
        },
        {
            "type": "scatter", "x": x, "y": forward[active], "mode": "lines",
            "name": f"forward KL(p‖q) fit, {student}{covering}",
            "line": {"color": pal["reference"], "width": 3},
            "hovertemplate": "x = %{x:.2f}: %{y:.3f}<extra>forward fit</extra>",
        },
        {
            "type": "scatter", "x": x, "y": reverse[active], "mode": "lines",
            "name": f"reverse KL(q‖p) fit, {student}{seeking}",
            "line": {"color": pal["negative"], "width": 3, "dash": "dash"},
            "hovertemplate": "x = %{x:.2f}: %{y:.3f}<extra>reverse fit</extra>",
        },
    ]  # fmt: skip
    top = max(float(np.max(a)) for group in (teacher, forward, reverse) for a in group)
    layout: dict[str, Any] = {
        "xaxis": {
            "title": {"text": "x (in teacher widths)"},
            "range": [float(x[0]), float(x[-1])],
            "domain": [0.0, _PLOT_WIDTH_PRESENTER if presenter else _PLOT_WIDTH],
        },
        "yaxis": {"title": {"text": "probability density"}, "range": [0.0, 1.05 * top]},
        "title": {"text": "Fitting a student to a two-mode teacher: forward KL covers, reverse KL seeks"},
        "annotations": [readout_panel(panels[active], t)],
        "legend": {"y": 1.02},
        "hovermode": "closest",
        "uirevision": "dist-kl",
    }
    steps = [
        {
            "method": "update",
            "label": label,
            "args": [{"y": [teacher[i], forward[i], reverse[i]]}, {"annotations[0].text": panels[i]}, [0, 1, 2]],
        }
        for i, label in enumerate(steps_labels)
    ]
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    layout["sliders"] = [unlabelled_slider(steps, active, "distance between the modes d = ", pad)]
    return figure(data, layout, theme=theme, presenter=presenter, height=height + _SLIDER_HEIGHT)


def temperature_figure(
    T: np.ndarray,
    probs: np.ndarray,
    classes: Sequence[str],
    entropy: np.ndarray,
    max_entropy: float,
    grad: np.ndarray,
    scaled_grad: np.ndarray,
    limit: float,
    at: float,
    *,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Three panels against the temperature ``T`` (log axes): the teacher's soft targets softmax(v / T), one line
    per class (``probs``: (T, classes)); their entropy with its ceiling log N (``max_entropy``); the soft loss's
    gradient norm without the T² factor (``grad``) and with it (``scaled_grad``), with the latter's high-T limit
    (``limit``). The page's T (``at``) is a dotted line in each panel."""
    t = get_theme(theme)
    pal = t.palette
    ids, layout = grid(1, 3, hgap=0.09, titles=["soft targets p_T", "their entropy", "soft loss gradient"])
    (x1, y1), (x2, y2), (x3, y3) = ids
    colours = [pal[r] for r in ("reference", "optimised", "rule", "optimum", "negative")]
    data: list[dict[str, Any]] = [
        {
            "type": "scatter", "x": T, "y": probs[:, i], "mode": "lines", "name": name,
            "line": {"color": colours[i % len(colours)], "width": 2}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": f"T = %{{x:.2f}}: %{{y:.3f}}<extra>{name}</extra>",
        }
        for i, name in enumerate(classes)
    ]  # fmt: skip
    data += [
        {
            "type": "scatter", "x": T, "y": entropy, "mode": "lines", "name": "entropy H(p_T)",
            "line": {"color": t.text, "width": 2.5}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": "T = %{x:.2f}: %{y:.3f} nats<extra></extra>",
        },
        {
            "type": "scatter", "x": [T[0], T[-1]], "y": [max_entropy, max_entropy], "mode": "lines",
            "name": "log N, uniform targets", "line": {"color": pal["neutral"], "width": 1, "dash": "dot"},
            "xaxis": x2, "yaxis": y2, "hoverinfo": "skip",
        },
        {
            "type": "scatter", "x": T, "y": grad, "mode": "lines", "name": "|∇ KL|, without T²",
            "line": {"color": pal["negative"], "width": 2.5, "dash": "dash"}, "xaxis": x3, "yaxis": y3,
            "hovertemplate": "T = %{x:.2f}: %{y:.4f}<extra>without T²</extra>",
        },
        {
            "type": "scatter", "x": T, "y": scaled_grad, "mode": "lines", "name": "|∇ T² KL|, with T²",
            "line": {"color": pal["reference"], "width": 2.5}, "xaxis": x3, "yaxis": y3,
            "hovertemplate": "T = %{x:.2f}: %{y:.4f}<extra>with T²</extra>",
        },
        {
            "type": "scatter", "x": [T[0], T[-1]], "y": [limit, limit], "mode": "lines",
            "name": "high-T limit |z − v| / N", "line": {"color": pal["neutral"], "width": 1, "dash": "dot"},
            "xaxis": x3, "yaxis": y3, "hoverinfo": "skip",
        },
    ]  # fmt: skip
    layout["shapes"] = [
        {
            "type": "line", "xref": x, "x0": at, "x1": at, "yref": f"{y} domain", "y0": 0, "y1": 1,
            "line": {"color": pal["highlight"], "width": 1.5, "dash": "dot"},
        }
        for x, y in ids
    ]  # fmt: skip
    for i in range(len(ids)):
        sx = "" if i == 0 else str(i + 1)
        layout[f"xaxis{sx}"] |= {"type": "log", "title": {"text": "temperature T"}}
        layout[f"yaxis{sx}"] |= {"rangemode": "tozero"}
    layout["yaxis"] |= {"title": {"text": "probability"}}
    layout["yaxis2"] |= {"title": {"text": "nats"}}
    layout["yaxis3"] = {k: v for k, v in layout["yaxis3"].items() if k != "rangemode"} | {
        "type": "log",
        "title": {"text": "gradient norm in the student's logits"},
    }
    layout["title"] = {"text": "Temperature softens the targets; T² keeps the soft loss's gradient from vanishing"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def sequence_figure(
    sequences: Sequence[str],
    teacher: np.ndarray,
    students: Mapping[str, np.ndarray],
    step_two: Mapping[str, tuple[float, float]],
    smoothing: float,
    *,
    height: int = 460,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: the probability of each two-token sequence under the teacher and under each factorised student
    (``students``: method -> probabilities over ``sequences``). Right: each student's expected KL at the second
    token, on the teacher's prefixes and on its own (``step_two``: method -> (teacher's, own))."""
    t = get_theme(theme)
    pal = t.palette
    ids, layout = grid(1, 2, widths=[1.3, 1.0], hgap=0.12,
                       titles=["probability of each sequence", "second token's KL(p(·|y1) ‖ q)"])  # fmt: skip
    (x1, y1), (x2, y2) = ids
    colours = dict(zip(students, (pal["reference"], pal["optimised"], pal["optimum"]), strict=False))
    label = {"sequence-level": f"sequence-level (ε = {smoothing:g})"}
    data: list[dict[str, Any]] = [
        {
            "type": "bar", "x": list(sequences), "y": teacher, "name": "teacher p",
            "marker": {"color": pal["neutral"]}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": "%{x}: %{y:.3f}<extra>teacher</extra>",
        }
    ]  # fmt: skip
    data += [
        {
            "type": "bar", "x": list(sequences), "y": q, "name": label.get(m, m),
            "marker": {"color": colours.get(m, pal["rule"])}, "xaxis": x1, "yaxis": y1,
            "hovertemplate": f"%{{x}}: %{{y:.3f}}<extra>{m}</extra>",
        }
        for m, q in students.items()
    ]  # fmt: skip
    methods = list(step_two)
    data += [
        {
            "type": "bar", "x": [m.replace(" (", "<br>(") for m in methods], "y": [step_two[m][j] for m in methods],
            "name": name,
            "marker": {"color": colour, "pattern": {"shape": shape}}, "xaxis": x2, "yaxis": y2,
            "hovertemplate": f"%{{x}}: %{{y:.3f}} nats<extra>{name}</extra>",
        }
        for j, (name, colour, shape) in enumerate(
            (("on the teacher's prefixes", pal["rule"], ""),
             ("on its own prefixes (what it meets when generating)", pal["negative"], "/"))
        )
    ]  # fmt: skip
    layout["barmode"] = "group"
    layout["yaxis"] |= {"title": {"text": "probability"}, "rangemode": "tozero"}
    layout["yaxis2"] |= {"title": {"text": "nats"}, "rangemode": "tozero"}
    layout["title"] = {"text": "A toy: a factorised student distilled three ways from a two-token teacher"}
    layout["legend"] = {"y": 1.02}
    layout["hovermode"] = "closest"
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
