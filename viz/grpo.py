"""Figures of the GRPO page: one group's advantages, the difficulty curves, PPO vs GRPO, and the batch mistake.

Builders take numbers computed by core.grpo (the page calls core, then these) and do no heavy math:

- :func:`grpo_advantages_figure`: one bar per answer, blue when the answer is pushed up, orange when pushed
  down; clicking a bar selects it (customdata[0] = answer index) so the page can flip that reward. Given an
  :class:`EpsSweep`, a plotly slider over ε whose steps rewrite the bars, their labels and hover texts in the browser.
- :func:`grpo_difficulty_figure`: signal probability and expected |advantage| against the success rate p.
- :func:`ppo_vs_grpo_table` (a DataFrame for ``st.dataframe``/``st.table``) and :func:`ppo_vs_grpo_figure` (the
  models each method holds in memory, and the answers it samples per prompt).
- :func:`grpo_batch_contrast_figure`: the same batch normalised within each group and across the whole batch.

Figures are assembled as plain dicts through :func:`viz.style.figure`: plotly's per-property validation cost
30-75 ms per figure, more than the rest of a page rerun after a click. tests/test_viz_style.py validates every
builder's output. Every builder takes ``theme`` ("light" or "dark") and ``presenter`` (larger type for a room).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from viz import format as fmt
from viz.style import PALETTE, Theme, figure, get_theme, grid, unlabelled_slider

UP = PALETTE["reference"]  # blue: this answer is pushed up (A > 0) (light theme; builders use their theme's shade)
DOWN = PALETTE["optimised"]  # orange: pushed down (A < 0)
ZERO = PALETTE["neutral"]  # grey: no push
# faint full-height column behind each answer: the click target (deliberately faint, opacity 0.10: not a mark)
SLOT = "rgba(127,127,127,0.10)"
LABEL_LIMIT = 16  # up to this many answers, bars carry their value and tick labels carry the reward

NO_SIGNAL_TEXT = (
    "All rewards are equal: every advantage is 0.<br>This prompt gives no learning signal (only a KL term acts, if the "
    "loss has one)."
)


def _colours(values: np.ndarray, t: Theme) -> np.ndarray:
    """Blue for positive, orange for negative, grey for zero values (the theme's shades)."""
    up, down, zero = t.palette["reference"], t.palette["optimised"], t.palette["neutral"]
    return np.where(values > 0, up, np.where(values < 0, down, zero)).astype(object)


def _figure(
    data: list[dict[str, Any]],
    layout: dict[str, Any],
    title: str,
    height: int,
    theme: str,
    presenter: bool,
    legend: bool = True,
) -> go.Figure:
    """The shared style, with the title above the legend row (the shared legend sits just above the plot area)."""
    layout = {"title": {"text": title, "y": 0.98, "yanchor": "top"}, "margin": {"l": 60, "r": 20, "t": 95, "b": 55},
              **layout}  # fmt: skip
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=legend)


def _legend_key(name: str, colour: str, outline: str | None = None) -> dict[str, Any]:
    """A legend-only entry (a trace with no visible point) showing a square of ``colour``."""
    marker = {"color": colour, "symbol": "square", "size": 12, "line": {"color": outline or colour, "width": 2}}
    return {"type": "scatter", "x": [None], "y": [None], "mode": "markers", "name": name, "marker": marker,
            "hoverinfo": "skip"}  # fmt: skip


@dataclass(frozen=True)
class EpsSweep:
    """The ε slider's steps for one group: step i shows the advantages with ``eps[i]`` added to the std.

    ``labels`` (S,) name the steps (the page's ε texts), ``advantages`` (S, G) are A_i = (r_i − mean) / (std + ε)
    at each step, ``denominators`` (S,) the std + ε each step divides by, and ``active`` the step of the page's ε.
    """

    labels: tuple[str, ...]
    advantages: np.ndarray
    denominators: np.ndarray
    active: int


def _hover(mean: float, denominator: float | None) -> str:
    """The bars' hover text: the formula with the group's mean and the divisor put in."""
    if denominator is None:
        formula = "A = r − mean = %{customdata[1]:.4g} − " + f"{mean:.4g}" + " = %{customdata[3]:+.3g}"
    else:
        formula = (
            "A = (r − mean) / (std + ε) = (%{customdata[1]:.4g} − "
            + f"{mean:.4g}) / {denominator:.4g}"
            + " = %{customdata[3]:+.3g}"
        )
    return "answer %{x}<br>reward %{customdata[1]:.4g}<br>" + formula + "<extra></extra>"


def _eps_slider(
    sweep: EpsSweep, r: np.ndarray, centred: np.ndarray, mean: float, slot_y: np.ndarray, small: bool, presenter: bool
) -> dict[str, Any]:
    """The plotly slider over ε: step i restyles the slot (trace 0) and the bars (trace 1) with the advantages of
    ``sweep.advantages[i]``: the bars' heights and labels, and both traces' customdata and hover formula (they quote
    A and std + ε). The slot's heights do not change; they go along because one step updates both traces."""
    A = sweep.advantages  # (S, G)
    S, G = A.shape
    custom = np.empty((S, G, 4))  # (S, G, 4): answer index, reward, r − mean, A, as on the traces
    custom[..., 0], custom[..., 1], custom[..., 2], custom[..., 3] = np.arange(G), r, centred, A
    steps = []
    for i, label in enumerate(sweep.labels):
        hover = _hover(mean, float(sweep.denominators[i]))
        update: dict[str, Any] = {"y": [slot_y, A[i]], "customdata": [custom[i]] * 2, "hovertemplate": [hover] * 2}
        if small:  # the slot's copy of the labels is never drawn (its textposition is "none")
            update["text"] = [[fmt.signed(a) for a in A[i]]] * 2
        steps.append({"method": "update", "label": label, "args": [update, {}, [0, 1]]})
    pad = _SLIDER_PAD_PRESENTER if presenter else _SLIDER_PAD
    return unlabelled_slider(steps, sweep.active, "ε added to the std = ", pad)


# room under the plot for the two-line tick labels ("3<br>r=1") and the x-axis title, above the slider (measured in
# chromium: 62 px of ticks and title at 14/15 px type, 84 px at presenter size)
_SLIDER_PAD, _SLIDER_PAD_PRESENTER = 76, 100
_SLIDER_HEIGHT = 90  # the figure grows by about what the slider takes under the plot, so the bars keep their height
# Presenter mode's y axis spans this much more: at 1280 x 720 the plot is about 228 px tall, and the tallest bar's
# label (a 27 px box at 19 px type, drawn above the bar) reached out of the 1.18 x |A| headroom into the legend row
# over the plot; 1.25 x 1.18 leaves it 36 px.
PRESENTER_HEADROOM = 1.25


def grpo_advantages_figure(
    rewards: Sequence[float] | np.ndarray,
    advantages: Sequence[float] | np.ndarray,
    *,
    mean: float,
    denominator: float | None = None,
    mode_label: str = "population std",
    y_max: float | None = None,
    eps_sweep: EpsSweep | None = None,
    height: int = 440,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Bar chart of one group's advantages, ready for click-to-flip in ``st.plotly_chart(on_select=...)``.

    Parameters: ``rewards`` and ``advantages`` (G values each, from core.grpo.grpo_advantages), the group
    ``mean`` and the ``denominator`` the centred rewards were divided by (std + eps; None for "no std"), used in
    the hover text, which shows the formula with the values put in; ``mode_label`` names the mode in the title.
    The y axis spans +-1.18 max|A| (+-1 when all are 0) unless ``y_max`` fixes it, e.g. to the largest |A| over
    all three modes, so that switching modes visibly rescales the bars instead of the axis; presenter mode spans
    :data:`PRESENTER_HEADROOM` times that (its larger bar labels stay clear of the legend over the plot).

    ``eps_sweep``: a plotly slider over ε (:class:`EpsSweep`, for a std mode and a group with signal); the bars
    then show its active step (``advantages`` and ``denominator`` are read from it), and each step rewrites the
    bars, their labels and the hover formula in the browser (:func:`_eps_slider`). Give it a ``y_max`` that holds
    every step (the largest |A| is at ε = 0), so that the bars move and the axis does not.

    Trace 0 is a faint full-height column per answer (so an answer with advantage 0 can still be clicked), trace
    1 the advantages; on both, customdata[:, 0] is the answer index 0..G-1 (point index is the same). Layout:
    clickmode "event+select", dragmode False, constant uirevision. An annotation says so when every advantage
    is 0.
    """
    t = get_theme(theme)
    r = np.asarray(rewards, dtype=np.float64)
    A = np.asarray(advantages, dtype=np.float64)
    if eps_sweep is not None:
        A = np.asarray(eps_sweep.advantages[eps_sweep.active], dtype=np.float64)
        denominator = float(eps_sweep.denominators[eps_sweep.active])
    if r.ndim != 1 or r.shape != A.shape:
        raise ValueError(f"rewards and advantages must be 1-D of the same length; got {r.shape} and {A.shape}")
    G = r.shape[0]
    index = np.arange(G)
    x = index + 1
    centred = r - mean
    custom = np.column_stack([index, r, centred, A])  # (G, 4)
    peak = float(np.max(np.abs(A))) if G else 0.0
    ylim = float(y_max) if y_max is not None and y_max > 0 else (1.18 * peak if peak > 0 else 1.0)
    if presenter and peak > 0:  # larger type: the bar labels need more room above the bars (and below them)
        ylim *= PRESENTER_HEADROOM
    hover = _hover(mean, denominator)
    small = G <= LABEL_LIMIT
    labels = [fmt.signed(a) for a in A] if small else None
    keep = {"marker": {"opacity": 1}}  # a selected bar looks like the others: the click flips, it does not mark
    slot_y = np.full(G, 2 * ylim)
    data: list[dict[str, Any]] = [
        {
            "type": "bar", "x": x, "y": slot_y, "base": -ylim,
            "marker": {"color": SLOT, "line": {"width": 0}}, "customdata": custom, "hovertemplate": hover,
            "name": "answer slot (click to flip)", "showlegend": False, "selected": keep, "unselected": keep,
            # with a slider, each step gives both traces the labels: the slot holds a copy it never draws
            **({"text": labels, "textposition": "none"} if eps_sweep is not None and small else {}),
        },
        {
            "type": "bar", "x": x, "y": A, "marker": {"color": _colours(A, t), "line": {"width": 0}},
            "customdata": custom, "hovertemplate": hover, "cliponaxis": False, "name": "advantage",
            "showlegend": False, "selected": keep, "unselected": keep,
            **({"text": labels, "textposition": "outside"} if small else {}),
        },
        _legend_key("pushed up (A > 0)", t.palette["reference"]),
        _legend_key("pushed down (A < 0)", t.palette["optimised"]),
    ]  # fmt: skip
    annotations = []
    if peak == 0:
        annotations.append({
            "x": 0.5, "y": 0.5, "xref": "paper", "yref": "paper", "text": NO_SIGNAL_TEXT, "showarrow": False,
            "font": {"color": t.ink["negative"]}, "bgcolor": t.background,
        })  # fmt: skip
    xaxis: dict[str, object] = {
        "title": {"text": "answer (click a bar to flip its reward 0 ↔ 1)"},
        "range": [0.4, G + 0.6],
    }
    if small:
        ticktext = [f"{i}<br>r={fmt.plain(v)}" for i, v in zip(x, r, strict=True)]
        xaxis |= {"tickmode": "array", "tickvals": x, "ticktext": ticktext}
    y_unit = "reward units" if denominator is None else "in units of the group std"
    layout = {
        "barmode": "overlay",
        "bargap": 0.25,
        "xaxis": xaxis,
        "yaxis": {"title": {"text": f"advantage Aᵢ ({y_unit})"}, "range": [-ylim, ylim], "zeroline": True,
                  "zerolinecolor": t.palette["neutral"], "zerolinewidth": 1.5},
        "annotations": annotations,
        "clickmode": "event+select",
        "dragmode": False,
        "hovermode": "closest",
        "uirevision": "grpo-advantages",
    }  # fmt: skip
    if eps_sweep is not None:
        layout["sliders"] = [_eps_slider(eps_sweep, r, centred, mean, slot_y, small, presenter)]
        height += _SLIDER_HEIGHT
    title = f"Advantages of {G} answers to one prompt ({mode_label})"
    return _figure(data, layout, title, height, theme, presenter)


def grpo_difficulty_figure(
    p: np.ndarray,
    signal_probability: np.ndarray,
    expected_abs_advantage: np.ndarray,
    *,
    G: int,
    mode_label: str = "population std",
    current_p: float | None = None,
    current_label: str | None = None,
    other_modes: Mapping[str, np.ndarray] | None = None,
    height: int = 420,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Why medium-difficulty prompts teach most: two curves against the success rate p, for one group size G.

    ``signal_probability`` = 1 - p^G - (1-p)^G (core.grpo.group_signal_probability) and ``expected_abs_advantage``
    (core.grpo.expected_abs_advantage for the page's mode) on the grid ``p``; both lie in [0, 1], so they share
    one axis. ``other_modes`` (label -> curve) adds dotted curves for the other modes. ``current_p`` (the current
    group's success rate) puts a marker on each curve (trace names "this group ..."), a dotted vertical line,
    and ``current_label`` as its text. Curves have len(p) points; 201 is plenty.
    """
    t = get_theme(theme)
    pal = t.palette
    p = np.asarray(p, dtype=np.float64)
    sig = np.asarray(signal_probability, dtype=np.float64)
    size = np.asarray(expected_abs_advantage, dtype=np.float64)
    if not (p.shape == sig.shape == size.shape) or p.ndim != 1:
        raise ValueError("p, signal_probability and expected_abs_advantage must be 1-D arrays of the same length")
    data: list[dict[str, Any]] = [
        {
            "type": "scatter", "x": p, "y": sig, "mode": "lines", "name": f"P(group has signal), G = {G}",
            "line": {"color": pal["reference"], "width": 3},
            "hovertemplate": "p = %{x:.3f}<br>P(signal) = %{y:.4f}<extra></extra>",
        },
        {
            "type": "scatter", "x": p, "y": size, "mode": "lines", "name": f"expected mean |A| ({mode_label})",
            "line": {"color": pal["optimum"], "width": 3},
            "hovertemplate": "p = %{x:.3f}<br>E mean |A| = %{y:.4f}<extra></extra>",
        },
    ]  # fmt: skip
    for label, curve in (other_modes or {}).items():
        data.append({
            "type": "scatter", "x": p, "y": np.asarray(curve, dtype=np.float64), "mode": "lines",
            "name": f"expected mean |A| ({label})", "line": {"color": pal["optimum"], "width": 1.5, "dash": "dot"},
            "hovertemplate": "p = %{x:.3f}<br>E mean |A| = %{y:.4f}<extra>" + label + "</extra>",
        })  # fmt: skip
    shapes, annotations = [], []
    if current_p is not None:
        cp = float(np.clip(current_p, 0.0, 1.0))
        for name, curve, colour in (
            ("this group: P(signal)", sig, pal["reference"]),
            ("this group: E mean |A|", size, pal["optimum"]),
        ):
            data.append({
                "type": "scatter", "x": [cp], "y": [float(np.interp(cp, p, curve))], "mode": "markers", "name": name,
                "showlegend": False, "cliponaxis": False,
                "marker": {"color": colour, "size": 14, "line": {"color": t.background, "width": 2}},
                "hovertemplate": "p = %{x:.3f}<br>%{y:.4f}<extra>" + name + "</extra>",
            })  # fmt: skip
        shapes.append({
            "type": "line", "x0": cp, "x1": cp, "xref": "x", "y0": 0, "y1": 1, "yref": "y domain",
            "line": {"color": pal["neutral"], "dash": "dot", "width": 1.5},
        })  # fmt: skip
        annotations.append({
            "x": cp, "y": 0.02, "yref": "y", "yanchor": "bottom", "text": current_label or f"this group: p = {cp:.2f}",
            "showarrow": False, "xanchor": "left" if cp < 0.7 else "right", "font": {"color": t.ink["neutral"]},
        })  # fmt: skip
    layout = {
        "xaxis": {
            "title": {"text": "p = probability that one answer is correct"},
            "range": [0, 1],
            "tickformat": ".1f",
        },
        "yaxis": {"title": {"text": "probability / mean |advantage|"}, "range": [0, 1.1]},
        "shapes": shapes,
        "annotations": annotations,
        "hovermode": "x unified",
        "uirevision": "grpo-difficulty",
    }
    return _figure(data, layout, f"Which prompts teach? A group of G = {G} answers", height, theme, presenter)


# ----------------------------------------------------------------------------------------------------------------
# PPO vs GRPO

_PPO_GRPO_ROWS: tuple[tuple[str, str, str], ...] = (
    (
        "Baseline for the advantage",
        "a learned value model (critic) predicts the expected return at every token (GAE)",
        "the mean reward of the G answers to the same prompt",
    ),
    (
        "Models in memory",
        "4: policy and value model (both trained), reference and reward model (both frozen)",
        "2 with a checker program: policy (trained) and reference (frozen), 1 without the KL term; "
        "3 with a learned reward model (frozen)",
    ),
    (
        "Advantage shape",
        "one value per token",
        "one value per answer, copied to all of its tokens",
    ),
    (
        "Answers sampled per prompt",
        "1",
        "G, typically 8 to 64",
    ),
    (
        "Where the cost goes",
        "memory and compute for the critic, plus tuning it",
        "generating G answers per prompt; less memory",
    ),
    (
        "Stability levers",
        "clipped probability ratio; KL penalty folded into the reward",
        "clipped probability ratio; KL term in the loss; normalisation within the group",
    ),
    (
        "Fits",
        "any reward, including a learned reward model",
        "any scalar reward: a learned reward model (DeepSeekMath, Shao et al. 2024) or a checker (math answers, "
        "unit tests), where it needs no reward model at all",
    ),
    (
        "Typical failure",
        "reward hacking; a critic that lags behind the policy",
        "groups with equal rewards give no signal; the reward model or checker can be gamed",
    ),
)


def ppo_vs_grpo_table() -> pd.DataFrame:
    """PPO and GRPO side by side, one row per aspect (index: aspect; columns "PPO", "GRPO").

    Meant for ``st.dataframe(..., use_container_width=True)`` or ``st.table``: text that wraps, copies and reads
    well with a screen reader, unlike a plotly table.
    """
    df = pd.DataFrame(_PPO_GRPO_ROWS, columns=["aspect", "PPO", "GRPO"]).set_index("aspect")
    df.index.name = None
    return df


# (name, role, trained) for the models each method keeps in memory during RL
PPO_MODELS: tuple[tuple[str, str, bool], ...] = (
    ("policy", "generates, is updated", True),
    ("value model", "baseline per token, is updated", True),
    ("reference", "frozen copy of the SFT model, for the KL term", False),
    ("reward model", "frozen, scores each answer", False),
)
GRPO_MODELS: tuple[tuple[str, str, bool], ...] = (
    ("policy", "generates G answers, is updated", True),
    ("reference", "frozen, for the KL term (absent without it)", False),
)


def ppo_vs_grpo_figure(G: int = 8, height: int = 380, *, theme: str = "light", presenter: bool = False) -> go.Figure:
    """Diagram of what each method holds and samples: one row per method.

    Large squares are models in memory (filled orange: trained; blue outline: frozen); a grey diamond is the
    checker program GRPO uses as its reward (no weights); small dots on the right are the answers sampled per
    prompt (1 for PPO, G for GRPO, drawn up to 64). Trace names: "PPO models", "GRPO models", "checker",
    "PPO answers", "GRPO answers".
    """
    if not isinstance(G, (int, np.integer)) or G < 1:
        raise ValueError(f"G must be a positive integer; got {G!r}")
    t = get_theme(theme)
    up, down, zero, hollow = t.palette["reference"], t.palette["optimised"], t.palette["neutral"], t.background
    data: list[dict[str, Any]] = []
    rows = (("PPO", 1.0, PPO_MODELS), ("GRPO", 0.0, GRPO_MODELS))
    for method, y, models in rows:
        xs = np.arange(len(models), dtype=np.float64)
        trained = np.array([t for _, _, t in models])
        data.append({
            "type": "scatter", "x": xs, "y": np.full(len(models), y), "mode": "markers+text",
            "name": f"{method} models", "text": [n for n, _, _ in models], "textposition": "bottom center",
            "customdata": [[role, "trained" if t else "frozen"] for _, role, t in models],
            "marker": {"symbol": "square", "size": 46, "color": np.where(trained, down, hollow).tolist(),
                       "line": {"color": np.where(trained, down, up).tolist(), "width": 3}},
            "hovertemplate": "%{text}: %{customdata[0]} (%{customdata[1]})<extra>" + method + "</extra>",
            "showlegend": False,
        })  # fmt: skip
    data.append({
        "type": "scatter", "x": [2.0], "y": [0.0], "mode": "markers+text", "name": "checker",
        "text": ["checker (program)"], "textposition": "bottom center", "showlegend": False,
        "marker": {"symbol": "diamond", "size": 30, "color": hollow, "line": {"color": zero, "width": 3}},
        "hovertemplate": "checker: a program gives reward 1 or 0 (no weights in memory); with a learned reward "
        "model in its place, GRPO holds a third, frozen model<extra>GRPO</extra>",
    })  # fmt: skip
    # answers per prompt: 1 for PPO, G for GRPO in a grid of up to 8 columns
    n = int(min(G, 64))
    cols = min(n, 8)
    ix, iy = np.arange(n) % cols, np.arange(n) // cols
    x0 = 4.6
    for method, count, xs, ys in (
        ("PPO", 1, np.array([x0]), np.array([1.0])),
        ("GRPO", G, x0 + 0.22 * ix, 0.28 - 0.08 * iy),
    ):
        data.append({
            "type": "scatter", "x": xs, "y": ys, "mode": "markers", "name": f"{method} answers", "showlegend": False,
            "marker": {"size": 9, "color": zero},
            "hovertemplate": f"{count} answer{'s' if count != 1 else ''} sampled per prompt<extra>{method}</extra>",
        })  # fmt: skip
    data += [_legend_key("trained", down), _legend_key("frozen", hollow, outline=up)]
    layout = {
        "annotations": [
            {"x": x0, "y": 1.22, "text": "1 answer / prompt", "showarrow": False, "xanchor": "left"},
            {"x": x0, "y": 0.42, "text": f"G = {G} answers / prompt", "showarrow": False, "xanchor": "left"},
        ],
        "xaxis": {"visible": False, "range": [-0.6, 6.8]},
        "yaxis": {"range": [-0.5, 1.4], "tickmode": "array", "tickvals": [0.0, 1.0], "ticktext": ["GRPO", "PPO"],
                  "showgrid": False, "zeroline": False},
        "dragmode": False,
        "uirevision": "ppo-vs-grpo",
    }  # fmt: skip
    return _figure(data, layout, "PPO vs GRPO: models in memory and answers per prompt", height, theme, presenter)


# ----------------------------------------------------------------------------------------------------------------
# within-group vs whole-batch normalisation


def grpo_batch_contrast_figure(
    rewards: np.ndarray,
    group_advantages: np.ndarray,
    batch_advantages: np.ndarray,
    *,
    prompt_labels: Sequence[str] | None = None,
    height: int = 420,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The same batch of B groups (arrays of shape (B, G)) normalised two ways, in two panels with a shared y axis.

    Left: within each group (core.grpo.grpo_advantages, GRPO). Right: across the whole batch
    (core.grpo.batch_normalised_advantages, the mistake). Bars are coloured by sign as in the main figure; the
    groups sit side by side with a gap, labelled by ``prompt_labels`` (default "prompt 1".. with k/G correct).
    Traces: 0 = within groups, 1 = across the batch; customdata columns: prompt number, answer number (both from
    1), reward.
    """
    t = get_theme(theme)
    r = np.asarray(rewards, dtype=np.float64)
    Ag = np.asarray(group_advantages, dtype=np.float64)
    Ab = np.asarray(batch_advantages, dtype=np.float64)
    if r.ndim != 2 or not (r.shape == Ag.shape == Ab.shape):
        raise ValueError("rewards and both advantage arrays must have the same shape (B, G)")
    B, G = r.shape
    b, i = np.divmod(np.arange(B * G), G)
    x = b * (G + 1) + i  # a gap of one bar between groups
    custom = np.column_stack([b + 1, i + 1, r.ravel()])  # numbered from 1 for the hover
    if prompt_labels is None:
        prompt_labels = [f"prompt {k + 1}<br>{int(np.sum(row == 1))}/{G} correct" for k, row in enumerate(r)]
    centres = np.arange(B) * (G + 1) + (G - 1) / 2
    titles = ("within each group (GRPO)", "across the whole batch (no per-prompt baseline)")
    _, layout = grid(1, 2, hgap=0.05, titles=titles)
    data: list[dict[str, Any]] = []
    for k, (A, name) in enumerate(((Ag, "within groups"), (Ab, "across the batch"))):
        data.append({
            "type": "bar", "x": x, "y": A.ravel(), "marker": {"color": _colours(A.ravel(), t), "line": {"width": 0}},
            "customdata": custom, "name": name, "showlegend": False, "xaxis": f"x{k + 1 if k else ''}",
            "yaxis": f"y{k + 1 if k else ''}",
            "hovertemplate": "prompt %{customdata[0]:d}, answer %{customdata[1]:d}<br>reward %{customdata[2]:.4g}"
            "<br>A = %{y:+.3f}<extra>" + name + "</extra>",
        })  # fmt: skip
    peak = float(max(np.max(np.abs(Ag)), np.max(np.abs(Ab)), 1e-12))
    y_range = [-1.15 * peak, 1.15 * peak]
    xaxis = {"tickmode": "array", "tickvals": centres, "ticktext": list(prompt_labels)}
    annotations: list[dict[str, Any]] = layout.pop("annotations")
    for k in np.flatnonzero(np.all(Ag == 0, axis=1)):
        annotations.append({
            "x": centres[k], "y": 0, "xref": "x", "yref": "y", "text": "all 0:<br>no signal", "showarrow": False,
            "yshift": 22, "font": {"color": t.ink["negative"]},
        })  # fmt: skip
    zero = {"zeroline": True, "zerolinecolor": t.palette["neutral"], "range": y_range}
    layout["xaxis"] |= xaxis
    layout["xaxis2"] |= xaxis
    layout["yaxis"] |= {**zero, "title": {"text": "advantage Aᵢ"}}
    layout["yaxis2"] |= {**zero, "matches": "y", "showticklabels": False}
    layout |= {"annotations": annotations, "uirevision": "grpo-batch"}
    # no legend here: the colours are those of the main figure, and a legend row would cover the panel titles
    title = "Normalise within each group, not across the batch"
    return _figure(data, layout, title, height, theme, presenter, legend=False)
