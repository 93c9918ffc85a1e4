"""Figures of the reward-model page: Bradley-Terry's fit, accuracy under label noise, and the length-biased reward
against the KL leash.

Builders take core.reward_model's results and only pick, round and format numbers; figures are assembled from
plain dicts through :func:`viz.style.figure` (tests/test_viz_style.py rebuilds them with validation). Every builder
takes ``theme`` ("light" or "dark") and ``presenter`` (larger type).

- :func:`bradley_terry_figure`: sigma(r_w - r_l) against the reward difference, and the fitted rewards beside the
  true ones (both centred, with an optional constant added to show that nothing changes).
- :func:`accuracy_noise_figure`: held-out pair accuracy against the labelers' flip rate, the 60-75% band of real
  reward models (seed 003, Q7).
- :func:`length_bias_figure`: as beta falls, pi* ∝ pi_ref exp(r/beta) picks longer answers; the proxy reward
  keeps rising while the true quality rises, then falls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import plotly.graph_objects as go
from numpy.typing import ArrayLike

from core.reward_model import BTFit, LengthSweep, NoiseStudy
from viz.format import fixed
from viz.style import READOUT, figure, get_theme

_REF_OPACITY = 0.4


def bradley_terry_figure(
    fit: BTFit,
    true_rewards: ArrayLike,
    margin: ArrayLike,
    probability: ArrayLike,
    *,
    shift: float = 0.0,
    shifted_nll: float | None = None,
    labels: Sequence[str] | None = None,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Left: P(w > l) = sigma(r_w - r_l) against the difference (``margin``, ``probability`` from
    core.reward_model.preference_probability). Right: the true rewards (faint blue, centred) and the fitted ones
    (orange, plus ``shift``), one bar pair per item. The readout gives the fit's mean -log sigma and, when given,
    the same number after the shift (equal: only differences are identified).
    """
    th = get_theme(theme)
    pal = th.palette
    t = np.asarray(true_rewards, dtype=np.float64)
    t = t - t.mean()
    r = fit.rewards + float(shift)
    if t.shape != r.shape:
        raise ValueError("need one true reward per fitted item")
    names = [f"item {k + 1}" for k in range(r.size)] if labels is None else [str(s) for s in labels]
    if len(names) != r.size:
        raise ValueError(f"need {r.size} item labels, got {len(names)}")
    data: list[dict[str, Any]] = [
        {"type": "scatter", "x": np.asarray(margin, dtype=np.float64), "y": np.asarray(probability, np.float64),
         "mode": "lines", "name": "σ(r_w − r_l)", "line": {"color": pal["reference"], "width": 3},
         "hovertemplate": "r_w − r_l = %{x:.2f}<br>P(w preferred) = %{y:.3f}<extra></extra>"},
        {"type": "bar", "x": names, "y": t, "name": "true reward (centred)", "xaxis": "x2", "yaxis": "y2",
         "marker": {"color": pal["reference"], "opacity": _REF_OPACITY},
         "hovertemplate": "true %{y:.3f}<extra></extra>"},
        {"type": "bar", "x": names, "y": r, "name": "fitted reward" + (f" + {shift:g}" if shift else ""),
         "xaxis": "x2", "yaxis": "y2", "marker": {"color": pal["optimised"]},
         "hovertemplate": "fitted %{y:.3f}<extra></extra>"},
    ]  # fmt: skip
    lines = [
        f"mean −log σ(r_w − r_l) = {fixed(fit.nll, 4)} nats",
        f"training pairs ranked right: {100 * fit.train_accuracy:.1f}%",
    ]
    if shifted_nll is not None:
        lines.append(f"after adding {shift:g} to every reward: {fixed(shifted_nll, 4)} nats")
    # The readout panel has the top of the left column to itself, above the curve (on the curve it hid the rise
    # of σ, most of all at presenter size); the bars keep the full height.
    layout = {
        "xaxis": {"domain": [0.0, 0.38], "title": {"text": "r_w − r_l"}, "zeroline": True},
        "yaxis": {"range": [0, 1], "domain": [0.0, 0.64], "title": {"text": "P(w preferred to l)"}},
        "xaxis2": {"domain": [0.55, 1.0], "anchor": "y2"},
        "yaxis2": {"anchor": "x2", "title": {"text": "reward"}, "zeroline": True},
        "barmode": "group",
        "annotations": [
            {"text": "<br>".join(lines), "xref": "paper", "yref": "paper", "x": 0.0, "y": 1.0, "xanchor": "left",
             "yanchor": "top", "align": "left", "showarrow": False, "bgcolor": th.panel, "name": READOUT}
        ],
        "uirevision": "rm-bt",
        "hovermode": "closest",
    }  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


# the plot's right edge when the readout column stands beside it (presenter type makes the column wider)
_NOISE_PLOT_RIGHT = {False: 0.76, True: 0.68}


def _noise_readout(study: NoiseStudy, i: int, ink: Any) -> str:
    """The readout panel's text at the study's flip rate i: each accuracy in its curve's colour, as the page's
    readouts print it."""
    rows = (
        ("held-out accuracy", study.heldout_accuracy[i], "optimised"),
        ("true rewards (the ceiling, up to sampling noise)", study.ceiling[i], "reference"),
        ("fitted order vs the true order", study.true_accuracy[i], "optimum"),
    )
    lines = [f"<b>flip rate {study.flip[i]:g}</b>"]
    lines += [f'<span style="color:{ink[role]}">{label} {100 * v:.1f}%</span>' for label, v, role in rows]
    return "<br>".join(lines)


def accuracy_noise_figure(
    study: NoiseStudy,
    flip: float | None = None,
    *,
    height: int = 420,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Held-out pair accuracy (orange), the true rewards' own accuracy on the same noisy labels (blue, the ceiling)
    and the fitted ordering against the true one (green) as the flip rate grows; the 60-75% band of real reward
    models (seed 003, Q7) and the 50% of a coin toss.

    flip: the page's flip rate, one of ``study.flip``. With it, markers sit on the three curves at that rate (trace
    3) and a readout panel right of the plot (annotation 0) gives the three accuracies; a plotly slider with one step
    per flip rate of the study (labels ``f"{flip:g}"``) moves both in the browser.
    """
    th = get_theme(theme)
    pal = th.palette
    f = study.flip
    series = (
        ("fitted model on held-out noisy labels", study.heldout_accuracy, pal["optimised"], "solid"),
        ("true rewards on the same labels (ceiling)", study.ceiling, pal["reference"], "dash"),
        ("fitted order vs the true order", study.true_accuracy, pal["optimum"], "dot"),
    )
    data = [
        {"type": "scatter", "x": f, "y": y, "mode": "lines+markers", "name": name,
         "line": {"color": c, "width": 3, "dash": dash},
         "hovertemplate": "flip rate %{x:.2f}<br>accuracy %{y:.3f}<extra></extra>"}
        for name, y, c, dash in series
    ]  # fmt: skip
    shapes = [
        {"type": "rect", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": 0.6, "y1": 0.75,
         "fillcolor": "rgba(86,180,233,0.18)", "line": {"width": 0}, "layer": "below"},
        {"type": "line", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": 0.5, "y1": 0.5,
         "line": {"color": pal["neutral"], "dash": "dot"}},
    ]  # fmt: skip
    annotations = [
        {"x": 1, "y": 0.75, "xref": "x domain", "yref": "y", "xanchor": "right", "yanchor": "bottom",
         "showarrow": False, "text": "real reward models: about 60-75% held-out"},
        {"x": 0, "y": 0.5, "xref": "x domain", "yref": "y", "xanchor": "left", "yanchor": "top",
         "showarrow": False, "text": "coin toss"},
    ]  # fmt: skip
    layout: dict[str, Any] = {
        "xaxis": {"title": {"text": f"labelers' flip rate ({study.n_train} training pairs)"}},
        "yaxis": {"title": {"text": "pair accuracy"}, "range": [0.4, 1.02]},
        "shapes": shapes,
        "annotations": annotations,
        "uirevision": "rm-noise",
        "hovermode": "x unified",
    }
    if flip is not None:
        flips = [float(v) for v in f]
        active = flips.index(float(flip))
        # every step's markers and readout in one pass over the study's arrays (one fit per flip rate, done); the
        # held-out accuracy, the subject, drawn last (on top where it meets the ceiling)
        ys = np.round(np.stack([study.ceiling, study.true_accuracy, study.heldout_accuracy], axis=1), 5)  # (F, 3)
        texts = [_noise_readout(study, i, th.ink) for i in range(len(flips))]
        data.append(
            {"type": "scatter", "x": [flips[active]] * 3, "y": ys[active], "mode": "markers", "showlegend": False,
             "name": "at the chosen flip rate", "hoverinfo": "skip",
             "marker": {"color": [pal["reference"], pal["optimum"], pal["optimised"]], "size": 13,
                        "line": {"color": th.text, "width": 1}}}
        )  # fmt: skip
        right = _NOISE_PLOT_RIGHT[presenter]
        layout["xaxis"]["domain"] = [0.0, right]
        # the band's label moves beside the band, under the readout (across the narrower plot it crossed the curves)
        annotations[0] |= {
            "x": right + 0.01,
            "y": 0.65,
            "xref": "paper",
            "xanchor": "left",
            "yanchor": "middle",
            "align": "left",
            "text": "← real reward models:<br>about 60-75% held-out",
        }
        layout["annotations"] = [
            {"text": texts[active], "xref": "paper", "yref": "paper", "x": 1.0, "y": 1.0, "xanchor": "right",
             "yanchor": "top", "align": "left", "showarrow": False, "bgcolor": th.panel, "bordercolor": th.axis,
             "borderwidth": 1, "borderpad": 6, "name": READOUT},
            *annotations,
        ]  # fmt: skip
        steps = [
            {"method": "update", "label": f"{v:g}",
             "args": [{"x": [[v] * 3], "y": [ys[i]]}, {"annotations[0].text": texts[i]}, [len(data) - 1]]}
            for i, v in enumerate(flips)
        ]  # fmt: skip
        # pad: the room the x-axis tick labels and title need under the plot
        layout["sliders"] = [
            {"active": active, "steps": steps, "currentvalue": {"prefix": "flip rate = "},
             "pad": {"t": 80 if presenter else 64}, "len": 1.0, "x": 0.0}
        ]  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height)


def length_bias_figure(
    sweep: LengthSweep, beta: float, *, height: int = 560, theme: str = "light", presenter: bool = False
) -> go.Figure:
    """Top: E_pi*[length] against beta (log axis) and the SFT model's mean length; bottom: the proxy reward and the
    true quality under pi*, with the reference's quality dashed. A vertical line marks the page's beta (the nearest
    sweep point), another the beta with the best true quality.
    """
    t = get_theme(theme)
    pal = t.palette
    b = sweep.beta
    i = int(np.argmin(np.abs(np.log(b / float(beta)))))
    ref_len = float(sweep.pi_ref @ sweep.lengths)
    ref_q = float(sweep.pi_ref @ sweep.quality)
    data: list[dict[str, Any]] = [
        {"type": "scatter", "x": b, "y": sweep.mean_length, "mode": "lines", "name": "mean length under π*",
         "line": {"color": pal["optimised"], "width": 3},
         "hovertemplate": "β = %{x:.3g}<br>%{y:.0f} tokens<extra></extra>"},
        {"type": "scatter", "x": b, "y": sweep.proxy_reward, "mode": "lines", "name": "proxy reward (length-biased)",
         "xaxis": "x2", "yaxis": "y2", "line": {"color": pal["optimised"], "width": 3, "dash": "dash"},
         "hovertemplate": "β = %{x:.3g}<br>proxy %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": b, "y": sweep.true_reward, "mode": "lines", "name": "true quality",
         "xaxis": "x2", "yaxis": "y2", "line": {"color": pal["optimum"], "width": 3},
         "hovertemplate": "β = %{x:.3g}<br>true %{y:.3f}<extra></extra>"},
        {"type": "scatter", "x": [b[i]], "y": [sweep.mean_length[i]], "mode": "markers", "showlegend": False,
         "marker": {"color": pal["optimised"], "size": 12, "line": {"color": t.text, "width": 1}},
         "hoverinfo": "skip"},
        {"type": "scatter", "x": [b[i]], "y": [sweep.true_reward[i]], "mode": "markers", "showlegend": False,
         "xaxis": "x2", "yaxis": "y2", "hoverinfo": "skip",
         "marker": {"color": pal["optimum"], "size": 12, "line": {"color": t.text, "width": 1}}},
    ]  # fmt: skip
    shapes: list[dict[str, Any]] = [
        {"type": "line", "xref": "x domain", "yref": "y", "x0": 0, "x1": 1, "y0": ref_len, "y1": ref_len,
         "line": {"color": pal["reference"], "dash": "dot"}},
        {"type": "line", "xref": "x2 domain", "yref": "y2", "x0": 0, "x1": 1, "y0": ref_q, "y1": ref_q,
         "line": {"color": pal["reference"], "dash": "dot"}},
    ]  # fmt: skip
    for ya in ("y", "y2"):
        xa = "x" if ya == "y" else "x2"
        shapes.append({"type": "line", "xref": xa, "yref": f"{ya} domain", "x0": b[i], "x1": b[i], "y0": 0,
                       "y1": 1, "line": {"color": pal["neutral"], "width": 1.5}})  # fmt: skip
        shapes.append({"type": "line", "xref": xa, "yref": f"{ya} domain", "x0": sweep.best_beta,
                       "x1": sweep.best_beta, "y0": 0, "y1": 1,
                       "line": {"color": pal["optimum"], "dash": "dot", "width": 1.5}})  # fmt: skip
    annotations = [
        {"x": 1, "y": ref_len, "xref": "x domain", "yref": "y", "xanchor": "right", "yanchor": "bottom",
         "showarrow": False, "text": f"SFT model: {ref_len:.0f} tokens", "font": {"color": t.ink["reference"]}},
        {"x": 1, "y": ref_q, "xref": "x2 domain", "yref": "y2", "xanchor": "right", "yanchor": "top",
         "showarrow": False, "text": f"SFT model's quality {ref_q:.3f}", "font": {"color": t.ink["reference"]}},
        {"x": 0, "y": 1, "xref": "x domain", "yref": "y domain", "xanchor": "left", "yanchor": "top",
         "showarrow": False, "align": "left", "bgcolor": t.panel,
         "text": f"β = {b[i]:.3g}: {sweep.mean_length[i]:.0f} tokens, true quality {sweep.true_reward[i]:.3f},"
         f"<br>KL {sweep.kl[i]:.3f} nats · ← smaller β, a looser leash"},
    ]  # fmt: skip
    layout = {
        "xaxis": {"type": "log", "domain": [0, 1], "anchor": "y", "matches": "x2", "showticklabels": False},
        "yaxis": {"domain": [0.55, 1.0], "title": {"text": "tokens"}},
        "xaxis2": {"type": "log", "anchor": "y2", "title": {"text": "β (KL price per nat)"}},
        "yaxis2": {"domain": [0.0, 0.45], "title": {"text": "reward"}},
        "shapes": shapes,
        "annotations": annotations,
        "uirevision": "rm-length",
        "hovermode": "closest",
    }  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height)
