"""Figures of the attention page: a grid of per-head heatmaps, the correct vs buggy causal mask, logit variance and
row entropy against d_k, the output vectors, and the KV-cache sizes of MHA, GQA and MQA.

Builders take numpy arrays computed by core.attention. Heatmaps larger than ``max_cells`` tokens a side are shown
as blocks of tokens (the figure says so), which keeps the figure JSON small at 512 tokens. The heads' figure can
carry a plotly slider over the softmax temperature (core's :func:`~core.toy_attention.temperature_sweep`): each
step replaces the heatmaps' weights and the readout line under the title in the browser (float32 base64 arrays,
as on the LoRA page), while the figure is small enough (:func:`sweep_steps`). Each figure is
assembled as plain dicts through :func:`viz.style.figure`, its subplots from :func:`viz.style.grid` (plotly's
subplot helpers cost hundreds of milliseconds per grid). Every builder takes ``theme`` ("light" or "dark") and
``presenter`` (larger type for a room).
"""

from __future__ import annotations

import base64
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
import plotly.graph_objects as go

from core.arrays import block_edges, block_reduce
from viz import format as fmt
from viz.style import PALETTE, axis_key, colorscale, figure, font_size, get_theme, grid

if TYPE_CHECKING:
    from core.toy_attention import HeadSummary, TemperatureSweep

MAX_CELLS = 64  # most heatmap cells a side
CELL_BUDGET = 32 * 64 * 64  # most heatmap cells in one figure (about 700 kB of JSON)
# Most heatmap cells over all the steps of a temperature slider: about 6.2 bytes each in the JSON (base64 float32
# and each step's title), so at most about 280 kB of steps. The lesson sentence's 11 tokens and 7 heads (847 cells a
# step) get all 41 steps of the page's grid; up to about 17 tokens at 7 heads, every other one.
SWEEP_CELL_BUDGET = 45_000

SCALE_ROLES: dict[str, str] = {"sqrt_dk": "optimum", "none": "negative", "sqrt_dmodel": "highlight"}
SCALE_COLOURS: dict[str, str] = {choice: PALETTE[role] for choice, role in SCALE_ROLES.items()}  # light theme's
SCALE_NAMES: dict[str, str] = {
    "sqrt_dk": "1/√d_k",
    "none": "no scale",
    "sqrt_dmodel": "1/√d_model",
}


# --- data helpers -----------------------------------------------------------------------------------------------


def _short(token: str) -> str:
    return fmt.token_label(token, max_chars=10)


def _labels(tokens: Sequence[str], edges: np.ndarray | None) -> list[str]:
    """Unique category labels: 'i:token', or 'i–j' for a block of tokens."""
    if edges is None:
        return [f"{i}:{_short(t)}" for i, t in enumerate(tokens)]
    return [f"{a}–{b - 1}" if b - a > 1 else f"{a}:{_short(tokens[a])}" for a, b in itertools.pairwise(edges)]


def _downsample(
    a: np.ndarray, tokens: Sequence[str], cells: int, mean_axes: tuple[int, ...] = (), sum_axes: tuple[int, ...] = ()
) -> tuple[np.ndarray, list[str], np.ndarray | None]:
    """Reduce blocks of tokens (means on mean_axes, sums on sum_axes) when there are more tokens than cells.

    For attention weights the query axis is averaged and the key axis summed, so a shown row still sums to 1: a
    cell is the share of attention that a query of the row block gives to the whole key block.
    """
    n = len(tokens)
    if n <= cells:
        return a, _labels(tokens, None), None
    edges = block_edges(n, cells)
    for axis in mean_axes:
        a = block_reduce(a, edges, axis, mean=True)
    for axis in sum_axes:
        a = block_reduce(a, edges, axis, mean=False)
    return a, _labels(tokens, edges), edges


def _side(heads: int, max_cells: int = MAX_CELLS) -> int:
    """Most cells a side of each of ``heads`` heatmap panels (within :data:`CELL_BUDGET`, at least 8)."""
    return max(8, min(max_cells, math.isqrt(CELL_BUDGET // max(heads, 1))))


def shown_cells(heads: int, tokens: int, max_cells: int = MAX_CELLS) -> int:
    """The heatmap cells :func:`attention_figure` draws for ``heads`` panels of ``tokens`` tokens (blocks above
    its cells a side)."""
    return heads * min(tokens, _side(heads, max_cells)) ** 2


def sweep_steps(grid: Sequence[float], heads: int, tokens: int, value: float) -> tuple[float, ...]:
    """The temperatures a slider over the heads' figure can carry within :data:`SWEEP_CELL_BUDGET`: ``grid`` with the
    page's ``value`` merged in, or every other grid value when that is too many cells, or none (no slider) when even
    those are. Every other value keeps the grid's own middle value (T = 1 in the page's grid)."""
    cells = shown_cells(heads, tokens)
    for every in (1, 2):
        temps = sorted({float(t) for t in grid[::every]} | {float(value)})
        if len(temps) * cells <= SWEEP_CELL_BUDGET:
            return tuple(temps)
    return ()


def _typed(z: np.ndarray) -> dict[str, str]:
    """z as a plotly.js typed-array spec (float32, base64), which plotly.js decodes in a slider step's data too."""
    a = np.ascontiguousarray(z, dtype="<f4")
    return {
        "dtype": "f4",
        "bdata": base64.b64encode(a.tobytes()).decode("ascii"),
        "shape": ", ".join(map(str, a.shape)),
    }


def heads_readout(temperature: float, multiplier: float, summary: HeadSummary) -> str:
    """The heads' figure's readout line at one temperature: the multiplier and the model heads' mean row entropy and
    largest weight (the page's readouts, at their precision). The entropy's share is of the mean entropy that rows
    uniform over the keys each may see would have (``summary.max_entropy``: the mean over rows of log t under the
    causal mask, log T without it), the same at every temperature."""
    return (
        f"<b>T = {temperature:g}</b>: logits × {multiplier:.4g} · model heads' mean row entropy "
        f"{summary.entropy:.2f} nats ({summary.entropy_share:.0%} of uniform rows' {summary.max_entropy:.2f}), "
        f"mean top weight {summary.max_weight:.2f}"
    )


def _check_square(weights: np.ndarray, tokens: Sequence[str], name: str = "weights") -> np.ndarray:
    w = np.asarray(weights, dtype=np.float32)
    if w.ndim == 2:
        w = w[None]
    if w.ndim != 3 or w.shape[1] != w.shape[2] or w.shape[1] != len(tokens):
        raise ValueError(f"{name} must have shape (heads, T, T) with T = {len(tokens)} tokens, got {w.shape}")
    return w


# --- layout helpers (plain dicts) -------------------------------------------------------------------------------


TITLE_SIZE = 14  # the panel titles' font size
# A temperature slider under the heads' panels. Its pad keeps the room that plotly's automargin gives the bottom
# row's token labels (at -60 degrees, up to 13 characters; measured in chromium, without a slider: 89 px) less the
# 8 px the frame adds; plotly draws the slider about 84 px under its pad (SLIDER_BODY_PX of pages/frame/drag.py,
# which takes the slider out again and keeps the pad and 8 px of the figure's height). Presenter mode's pad is the
# room of the labels shown (:func:`presenter_tick_room`), so that the panels get the screen's height that a pad for
# 13 characters would leave empty.
_SLIDER_PAD_T = 81
_SLIDER_PX = 84
PRESENTER_TICK_ANGLE = -40  # the bottom row's labels in presenter mode: 0.64 of their length under it (0.87 at -60)


def presenter_tick_room(labels: Sequence[str]) -> int:
    """The px under a panel that the x tick labels ``labels`` take in presenter mode (at :data:`PRESENTER_TICK_ANGLE`
    and 19 px type), from the longest label: half an em a character (Source Sans' lower case measures 0.43-0.47 em
    in chromium), a 1.33 em line box, and 13 px for the tick and its gap. The lesson sentence's "6:because":
    13 + 0.64 x 86 + 0.77 x 25 = 88 px (chromium draws it in 83). No labels: none."""
    if not labels:
        return 0
    size = font_size(14, presenter=True)
    lean = math.radians(abs(PRESENTER_TICK_ANGLE))
    longest = max(len(str(label)) for label in labels)
    return math.ceil(13 + math.sin(lean) * 0.5 * size * longest + math.cos(lean) * 1.33 * size)


def _line(axis: str, at: float, xid: str, yid: str, colour: str, dash: str = "dash", width: float = 1.5) -> dict:
    """A vertical (axis='x') or horizontal (axis='y') line across one subplot."""
    across = {"x": (f"{yid} domain", "y"), "y": (f"{xid} domain", "x")}[axis]
    line = {"type": "line", "line": {"color": colour, "dash": dash, "width": width}}
    if axis == "x":
        return line | {"xref": xid, "x0": at, "x1": at, "yref": across[0], "y0": 0, "y1": 1}
    return line | {"yref": yid, "y0": at, "y1": at, "xref": across[0], "x0": 0, "x1": 1}


def _finish(
    data: list[dict],
    layout: dict[str, Any],
    height: int,
    top: int,
    theme: str,
    presenter: bool,
    legend: bool = False,
) -> go.Figure:
    """The figure in the shared style, with a top margin of ``top`` pixels for the title (more in presenter mode)."""
    layout["margin"] = {"t": int(top * 1.25) if presenter else top} | layout.get("margin", {})
    return figure(data, layout, theme=theme, presenter=presenter, height=height, legend=legend)


# Presenter mode draws a chart as tall as the screen leaves (pages/frame): about 960 x 475 px at 1280 x 720 and
# 1470 x 835 px at 1920 x 1080. Once the type has its margins and the colour bar its column, a grid of heatmaps has
# about this landscape box at 1280 x 720 (px).
PRESENTER_GRID_BOX = (780.0, 300.0)
# between rows of panels: a panel title at presenter size (a 28 px box, 19 px type), clear of the row above; at
# 1280 x 720 the heads' grid is about 255 px tall (the title, its readout line and the token labels take the
# rest), where this leaves 31 px
PRESENTER_VGAP_PX = 36
PRESENTER_PANEL_TITLE_PX = 24  # the top row's panel titles (19 px type) under the title's lines


def presenter_columns(n: int) -> int:
    """Columns for ``n`` heatmap panels in presenter mode: the grid whose smallest panel side is largest in
    :data:`PRESENTER_GRID_BOX` (fewer columns on a tie). 7 heads: 4 columns; 12: 6; 2: 2."""
    if n < 1:
        raise ValueError(f"need at least one panel, got {n}")
    w, h = PRESENTER_GRID_BOX
    return max(range(1, n + 1), key=lambda c: (min(w / c, h / math.ceil(n / c)), -c))


def _presenter_heatmaps(layout: dict[str, Any], ids: list[tuple[str, str]], sub_lines: int) -> None:
    """Presenter mode's frame for a grid of heatmaps: the title pinned to the top, margins in pixels only for the type
    (plotly's automargin adds the tick labels' room), and no per-panel axis titles (the title names rows and
    columns). ``sub_lines``: the small lines under the title (a readout, notes)."""
    for x, y in ids:
        for axis in (layout[axis_key(x)], layout[axis_key(y)]):
            axis.pop("title", None)
            axis["automargin"] = True
    title_px = 36 + 22 * sub_lines  # a 23 px line (and a line of readout or notes each) under a 6 px pad
    layout["margin"] = {"t": title_px + PRESENTER_PANEL_TITLE_PX, "l": 10, "r": 10, "b": 10}
    # a thin colour bar with its title along it: the column it takes is the panels' width
    bar = layout["coloraxis"]["colorbar"]
    bar |= {"thickness": 14, "xpad": 6, "title": bar.get("title", {}) | {"side": "right"}}
    # plotly anchors a title of several lines by its first: the small lines under it push it up unless padded
    layout["title"] |= {"y": 1.0, "yref": "container", "yanchor": "top", "pad": {"t": 6 + 20 * sub_lines}}


def _title(text: str, notes: Sequence[str], readout: str | None = None) -> dict[str, Any]:
    """The title, a readout line under it (a slider's live numbers) and a line of notes."""
    lines = [text]
    if readout:
        lines.append(f"<sup>{readout}</sup>")
    if notes:
        lines.append("<sup>" + "; ".join(notes) + "</sup>")
    return {"text": "<br>".join(lines)}


# --- the figures ------------------------------------------------------------------------------------------------


def attention_figure(
    weights: np.ndarray,
    tokens: Sequence[str],
    head_names: Sequence[str] | None = None,
    *,
    columns: int = 4,
    max_cells: int = MAX_CELLS,
    zmax: float | None = None,
    title: str | None = None,
    sweep: TemperatureSweep | None = None,
    summaries: Sequence[HeadSummary] | None = None,
    active: int = 0,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """A grid of attention heatmaps, one per head: query tokens down, key tokens across, weight on hover.

    weights: (heads, T, T) rows summing to 1 (float32 is enough). Above max_cells tokens (or when the figure would
    hold more than CELL_BUDGET cells) tokens are grouped into blocks and the title says so; a shown block keeps
    rows summing to 1: the mean over its queries of the weight summed over its keys. The colour scale runs from 0
    to zmax (default 1; a smaller zmax brings out spread-out rows, and the title says so).

    sweep: the same heads (in the panels' order) at several softmax temperatures (core's
    :func:`~core.toy_attention.temperature_sweep`), with ``summaries`` (one :class:`~core.toy_attention.HeadSummary`
    per step) and ``active``, the step that ``weights`` shows. The figure then carries a plotly slider over the
    temperatures: step i replaces every panel's weights (trace i of the panels) and the readout line under the title
    (T, the logits' multiplier, the model heads' mean row entropy and largest weight), in the browser.
    """
    w = _check_square(weights, tokens)
    H, T = w.shape[0], w.shape[1]
    names = list(head_names) if head_names is not None else [f"head {h + 1}" for h in range(H)]
    if len(names) != H:
        raise ValueError(f"{H} heads but {len(names)} head names")
    zmax = 1.0 if zmax is None else float(zmax)
    if not (math.isfinite(zmax) and zmax > 0):
        raise ValueError(f"zmax must be > 0, got {zmax!r}")
    cells = _side(H, max_cells)
    z, labels, edges = _downsample(w, tokens, cells, mean_axes=(1,), sum_axes=(2,))
    cols = presenter_columns(H) if presenter else max(1, min(columns, H))
    rows = math.ceil(H / cols)
    if presenter:  # narrow gaps; between rows the room of a panel title (the grid box's height in pixels)
        gaps = {"hgap": 0.03, "vgap": PRESENTER_VGAP_PX / PRESENTER_GRID_BOX[1]}
    else:
        gaps = {"hgap": 0.04 if T > 16 else 0.07, "vgap": min(0.12, 0.35 / rows)}
    ids, layout = grid(rows, cols, n=H, titles=names, title_size=TITLE_SIZE, **gaps)
    show_ticks = len(labels) <= 24
    # every token's label only while they fit (6 to a panel side, 4 at presenter size); the title names rows and
    # columns
    fit = 4 if presenter else 6
    shown = list(labels) if len(labels) <= fit else list(labels)[:: math.ceil(len(labels) / fit)]
    ticks = shown if show_ticks else []  # the bottom row's labels
    what = "block weight" if edges is not None else "weight"
    data = []
    for h, (x, y) in enumerate(ids):
        data.append(
            {
                "type": "heatmap",
                "z": z[h].astype(np.float32),
                "x": labels,
                "y": labels,
                "xaxis": x,
                "yaxis": y,
                "coloraxis": "coloraxis",
                "name": names[h],
                "hovertemplate": f"query %{{y}}<br>key %{{x}}<br>{what} %{{z:.3f}}<extra>{names[h]}</extra>",
            }
        )
        bottom, left = h + cols >= H, h % cols == 0  # tick labels on the outer edge only
        layout[axis_key(x)].update(
            type="category",
            showticklabels=show_ticks and bottom,
            tickangle=PRESENTER_TICK_ANGLE if presenter else -60,
            tickvals=shown,
        )
        layout[axis_key(y)].update(
            type="category",
            autorange="reversed",
            showticklabels=show_ticks and left,
            tickvals=shown,
        )
    notes = []
    if edges is not None:
        n = len(edges) - 1
        notes.append(
            f"{T} tokens shown as {n}×{n} blocks of about {T / n:.0f}: a cell is the weight a query block gives "
            "to a key block (rows still sum to 1)"
        )
    if zmax != 1.0:
        notes.append(f"colours run from 0 to {zmax:.3g}")
    text = title or "Attention weights per head (rows: queries, columns: keys; each row sums to 1)"
    readout = None
    if sweep is not None:
        readouts, steps = _temperature_steps(sweep, summaries, active, tokens, cells, w.shape)
        readout = readouts[active]
        for step, line in zip(steps, readouts, strict=True):
            step["args"][1] = {"title.text": _title(text, notes, line)["text"]}
        layout["sliders"] = [
            {
                "active": active,
                "steps": steps,
                "currentvalue": {"prefix": "T = "},
                # under the tick labels of the bottom row (token labels at -60 degrees; in presenter mode the
                # room of the labels shown, less the 8 px that the frame adds)
                "pad": {"t": max(0, presenter_tick_room(ticks) - 8) if presenter else _SLIDER_PAD_T},
                "len": 1.0,
                "x": 0.0,
            }
        ]
    layout |= {
        "title": _title(text, notes, readout),
        "coloraxis": {
            "colorscale": colorscale("sequential", theme),
            "cmin": 0.0,
            "cmax": zmax,
            "colorbar": {"title": {"text": "weight", "side": "right"}},
        },
        "uirevision": "attention-heads",
    }
    sub_lines = bool(notes) + bool(readout)
    if presenter:
        _presenter_heatmaps(layout, ids, sub_lines)
    height = max(360, 90 + rows * (300 if cols <= 2 else 240))
    if sweep is not None:  # the panels keep their size: room for the readout line and for the slider under them
        height += 20 + _SLIDER_PX - 8
    return _finish(data, layout, height, 90 + 20 * sub_lines, theme, presenter)


def _temperature_steps(
    sweep: TemperatureSweep,
    summaries: Sequence[HeadSummary] | None,
    active: int,
    tokens: Sequence[str],
    cells: int,
    shape: tuple[int, ...],
) -> tuple[list[str], list[dict[str, Any]]]:
    """Each step's readout line and the slider's steps: each step's panels (blocks as the figure shows them) as typed
    arrays, and an empty layout update (``args[1]``) for the caller's title with that step's readout."""
    S = len(sweep.temperatures)
    sw = np.asarray(sweep.weights, dtype=np.float32)
    if sw.shape != (S, *shape):
        raise ValueError(f"the sweep's weights must have shape {(S, *shape)}, got {sw.shape}")
    if summaries is None or len(summaries) != S:
        raise ValueError(f"need one head summary per step ({S})")
    if not 0 <= active < S:
        raise ValueError(f"active step {active} is outside 0..{S - 1}")
    zs, _, _ = _downsample(sw, tokens, cells, mean_axes=(2,), sum_axes=(3,))  # (S, H, rows, cols)
    temps = [float(t) for t in sweep.temperatures]
    heads = list(range(shape[0]))
    steps = [
        {
            "method": "update",
            "label": f"{t:g}",
            "args": [
                {"z": [_typed(zs[i, h]) for h in heads]},
                {},
                heads,
            ],
        }
        for i, t in enumerate(temps)
    ]
    readouts = [heads_readout(t, float(m), s) for t, m, s in zip(temps, sweep.multipliers, summaries, strict=True)]
    return readouts, steps


def attention_mask_figure(
    correct: np.ndarray,
    buggy: np.ndarray,
    tokens: Sequence[str],
    correct_row_sums: np.ndarray | None = None,
    buggy_row_sums: np.ndarray | None = None,
    *,
    max_cells: int = MAX_CELLS,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Causal mask done right (-inf before the softmax) beside the classic bug (x 0 after it), with row sums.

    correct, buggy: (T, T) weights of one head; the row sums (T,) default to the rows' sums. The bars show that
    the correct rows sum to 1 and the buggy ones fall short (all but the last, which sees every key), by a different
    amount in every row.
    """
    t = get_theme(theme)
    A = _check_square(correct, tokens, "correct")[0]
    B = _check_square(buggy, tokens, "buggy")[0]
    sums_a = np.asarray(A.sum(-1) if correct_row_sums is None else correct_row_sums, dtype=np.float32)
    sums_b = np.asarray(B.sum(-1) if buggy_row_sums is None else buggy_row_sums, dtype=np.float32)
    if sums_a.shape != (len(tokens),) or sums_b.shape != (len(tokens),):
        raise ValueError("row sums must have one value per token")
    both, labels, edges = _downsample(np.stack([A, B]), tokens, max_cells, mean_axes=(1,), sum_axes=(2,))
    if edges is not None:  # mean row sum of each block of rows
        sums_a, sums_b = block_reduce(np.stack([sums_a, sums_b]), edges, axis=1)
    titles = ["−∞ before softmax (correct)", "row sums", "× 0 after softmax (bug)", "row sums"]
    ids, layout = grid(1, 4, hgap=0.035, widths=[0.36, 0.12, 0.36, 0.12], titles=titles, title_size=TITLE_SIZE)
    show_ticks = len(labels) <= 24
    data, shapes = [], []
    for (hx, hy), (bx, by), z, sums, colour, name in (
        (ids[0], ids[1], both[0], sums_a, t.palette["optimum"], "correct"),
        (ids[2], ids[3], both[1], sums_b, t.palette["negative"], "buggy"),
    ):
        data.append(
            {
                "type": "heatmap",
                "z": z.astype(np.float32),
                "x": labels,
                "y": labels,
                "xaxis": hx,
                "yaxis": hy,
                "coloraxis": "coloraxis",
                "name": name,
                "hovertemplate": "query %{y}<br>key %{x}<br>weight %{z:.3f}<extra>" + name + "</extra>",
            }
        )
        data.append(
            {
                "type": "bar",
                "x": sums.astype(np.float32),
                "y": labels,
                "orientation": "h",
                "xaxis": bx,
                "yaxis": by,
                "marker": {"color": colour},
                "name": f"{name} row sums",
                "hovertemplate": "query %{y}<br>row sum %{x:.3f}<extra>" + name + "</extra>",
            }
        )
        shapes.append(_line("x", 1.0, bx, by, t.palette["neutral"]))
        layout[axis_key(hx)].update(type="category", showticklabels=show_ticks, tickangle=-60, title={"text": "key"})
        layout[axis_key(bx)].update(range=[0, 1.1], title={"text": "sum"})
        for y in (hy, by):
            layout[axis_key(y)].update(type="category", autorange="reversed", showticklabels=False)
    layout[axis_key(ids[0][1])].update(showticklabels=show_ticks, title={"text": "query"})
    notes = []
    if edges is not None:
        notes.append(
            f"{len(tokens)} tokens shown as {len(edges) - 1} blocks: a cell sums the weights over the key block and "
            "averages over the query block; row sums are block means"
        )
    layout |= {
        "title": _title("Causal mask: add −∞ before the softmax, or multiply by 0 after it?", notes),
        "shapes": shapes,
        "coloraxis": {
            "colorscale": colorscale("sequential", theme),
            "cmin": 0.0,
            "cmax": 1.0,
            "colorbar": {"title": {"text": "weight"}},
        },
        "uirevision": "attention-mask",
        "bargap": 0.15,
    }
    return _finish(data, layout, 460, 100, theme, presenter)


def attention_scale_figure(
    d_k: Sequence[int] | np.ndarray,
    variance: Mapping[str, np.ndarray],
    entropy: Mapping[str, np.ndarray],
    max_entropy: float,
    *,
    expected_variance: Mapping[str, np.ndarray] | None = None,
    current_d_k: int | None = None,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Logit variance (left, log-log) and mean row entropy (right) against d_k, one curve per scale choice.

    variance, entropy: {scale choice: array aligned with d_k} for choices among 'sqrt_dk', 'none', 'sqrt_dmodel'
    (from core.attention.logit_statistics). max_entropy = log(tokens) marks a uniform row; 0 is a one-hot row.
    expected_variance adds the theory d_k · multiplier² dotted; current_d_k marks the page's d_k.
    """
    t = get_theme(theme)
    d = np.asarray(d_k, dtype=float)
    titles = ["Variance of the logits", "Entropy of a row"]
    ids, layout = grid(1, 2, hgap=0.1, titles=titles, title_size=TITLE_SIZE)
    (vx, vy), (ex, ey) = ids
    data = []
    for choice in variance:
        colour = t.palette[SCALE_ROLES.get(choice, "neutral")]
        name = SCALE_NAMES.get(choice, choice)
        var = np.asarray(variance[choice], dtype=float)
        ent = np.asarray(entropy[choice], dtype=float)
        if var.shape != d.shape or ent.shape != d.shape:
            raise ValueError(f"{choice}: variance and entropy must align with d_k")
        common = {"type": "scatter", "x": d, "legendgroup": choice, "line": {"color": colour}}
        data.append(
            common
            | {
                "y": var,
                "mode": "lines+markers",
                "name": name,
                "xaxis": vx,
                "yaxis": vy,
                "hovertemplate": "d_k %{x}<br>Var(logit) %{y:.3g}<extra>" + name + "</extra>",
            }
        )
        if expected_variance is not None and choice in expected_variance:
            data.append(
                common
                | {
                    "y": np.asarray(expected_variance[choice], dtype=float),
                    "mode": "lines",
                    "name": f"{name}: theory",
                    "showlegend": False,
                    "line": {"color": colour, "dash": "dot", "width": 1.5},
                    "xaxis": vx,
                    "yaxis": vy,
                    "hovertemplate": "d_k %{x}<br>theory %{y:.3g}<extra>" + name + "</extra>",
                }
            )
        data.append(
            common
            | {
                "y": ent,
                "mode": "lines+markers",
                "name": name,
                "showlegend": False,
                "xaxis": ex,
                "yaxis": ey,
                "hovertemplate": "d_k %{x}<br>entropy %{y:.3f} nats<extra>" + name + "</extra>",
            }
        )
    annotations = layout.pop("annotations")
    grey = t.palette["neutral"]
    shapes = [_line("y", max_entropy, ex, ey, grey), _line("y", 0.0, ex, ey, grey, "dot")]
    note = {"xref": f"{ex} domain", "x": 0.01, "xanchor": "left", "yref": ey, "showarrow": False}
    annotations += [
        note
        | {"x": 0.99, "xanchor": "right", "y": max_entropy, "yanchor": "bottom"}
        | {"text": f"uniform row: log T = {max_entropy:.2f}"},
        note | {"y": 0.0, "yanchor": "bottom", "text": "one-hot row"},
    ]
    span = np.log10([d.min(), d.max(), current_d_k or d.min()])
    if current_d_k is not None:
        for x, y in ids:
            shapes.append(_line("x", current_d_k, x, y, t.palette["optimised"], dash="solid", width=2))
            annotations.append(
                {
                    "x": math.log10(current_d_k),  # on a log axis an annotation's x is log10 of the value
                    "xref": x,
                    "y": 1,
                    "yref": f"{y} domain",
                    "text": f"your d_k = {current_d_k}",
                    "showarrow": False,
                    "xanchor": "left",
                    "yanchor": "top",
                    "font": {"color": t.ink["optimised"]},
                }
            )
    for x in (vx, ex):
        layout[axis_key(x)].update(
            type="log", title={"text": "d_k (head dimension)"}, range=[span.min() - 0.1, span.max() + 0.1]
        )
    layout[axis_key(vy)].update(type="log", title={"text": "Var(logit)"})
    layout[axis_key(ey)].update(title={"text": "mean row entropy (nats)"}, range=[-0.05, 1.15 * max_entropy])
    legend = {"y": 1.14 if presenter else 1.1}
    layout |= {"annotations": annotations, "shapes": shapes, "uirevision": "attention-scale", "legend": legend}
    return _finish(data, layout, 460, 90, theme, presenter, legend=True)


def attention_outputs_figure(
    outputs: np.ndarray,
    tokens: Sequence[str],
    head_names: Sequence[str] | None = None,
    *,
    columns: int = 4,
    max_cells: int = MAX_CELLS,
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """The output vectors y = A V of each head as heatmaps: tokens down, output dimensions across.

    outputs: (heads, T, d_v). Above max_cells tokens the rows are block means (said in the title).
    """
    y_all = np.asarray(outputs, dtype=np.float32)
    if y_all.ndim == 2:
        y_all = y_all[None]
    if y_all.ndim != 3 or y_all.shape[1] != len(tokens):
        raise ValueError(f"outputs must have shape (heads, T, d) with T = {len(tokens)}, got {y_all.shape}")
    H = y_all.shape[0]
    names = list(head_names) if head_names is not None else [f"head {h + 1}" for h in range(H)]
    if len(names) != H:
        raise ValueError(f"{H} heads but {len(names)} head names")
    z, labels, edges = _downsample(y_all, tokens, max_cells, mean_axes=(1,))
    cols = presenter_columns(H) if presenter else max(1, min(columns, H))
    rows = math.ceil(H / cols)
    if presenter:
        gaps = {"hgap": 0.03, "vgap": PRESENTER_VGAP_PX / PRESENTER_GRID_BOX[1]}
    else:
        gaps = {"hgap": 0.05, "vgap": min(0.15, 0.4 / rows)}
    ids, layout = grid(rows, cols, n=H, titles=names, title_size=TITLE_SIZE, **gaps)
    dims = np.arange(y_all.shape[2])
    data = []
    for h, (x, y) in enumerate(ids):
        data.append(
            {
                "type": "heatmap",
                "z": z[h].astype(np.float32),
                "x": dims,
                "y": labels,
                "xaxis": x,
                "yaxis": y,
                "coloraxis": "coloraxis",
                "name": names[h],
                "hovertemplate": "token %{y}<br>dimension %{x}<br>value %{z:.3f}<extra>" + names[h] + "</extra>",
            }
        )
        left, bottom = h % cols == 0, h + cols >= H
        # presenter mode: dimension numbers under each column's lowest panel only (the panel titles sit between rows)
        layout[axis_key(x)].update(title={"text": "output dimension"}, showticklabels=bottom or not presenter)
        layout[axis_key(y)].update(
            type="category",
            autorange="reversed",
            showticklabels=left and len(labels) <= 24,
            title={"text": "token" if left else ""},
        )
    bound = float(np.abs(z).max()) if z.size else 1.0
    notes = [f"{len(tokens)} tokens shown as {len(edges) - 1} rows: block means"] if edges is not None else []
    title = "Output vectors y = A·V per head" + (" (rows: tokens, columns: output dimensions)" if presenter else "")
    layout |= {
        "title": _title(title, notes),
        "coloraxis": {
            "colorscale": colorscale("diverging", theme),
            "cmin": -bound,
            "cmax": bound,
            "colorbar": {"title": {"text": "value"}},
        },
        "uirevision": "attention-outputs",
    }
    if presenter:
        _presenter_heatmaps(layout, ids, len(notes))
    return _finish(data, layout, max(320, 90 + rows * 240), 100, theme, presenter)


def attention_kv_cache_figure(
    labels: Sequence[str],
    total_bytes: Sequence[float] | np.ndarray,
    *,
    per_token_bytes: Sequence[float] | np.ndarray | None = None,
    context_tokens: int | None = None,
    memory_limit_bytes: float | None = None,
    memory_limit_label: str = "GPU memory",
    theme: str = "light",
    presenter: bool = False,
) -> go.Figure:
    """Horizontal bars of the KV-cache size of each variant (e.g. MHA, GQA, MQA), in GiB, with the per-token size
    in the hover and the bar text; an optional dashed line for a card's memory.
    """
    t = get_theme(theme)
    gib = np.asarray(total_bytes, dtype=float) / 2**30
    if gib.shape != (len(labels),):
        raise ValueError("one total per label")
    per_token = None if per_token_bytes is None else np.asarray(per_token_bytes, dtype=float) / 2**10
    if per_token is not None and per_token.shape != gib.shape:
        raise ValueError("one per-token size per label")
    text = [
        f"{g:,.3g} GiB" + ("" if per_token is None else f" ({per_token[i]:,.0f} KiB/token)") for i, g in enumerate(gib)
    ]
    bar = {
        "type": "bar",
        "x": gib,
        "y": list(labels),
        "orientation": "h",
        "marker": {"color": [t.sequence[i % len(t.sequence)] for i in range(len(labels))]},
        "text": text,
        "textposition": "auto",
        "hovertemplate": "%{y}<br>%{x:,.4g} GiB<extra></extra>",
    }
    if per_token is not None:
        bar |= {
            "customdata": per_token,
            "hovertemplate": "%{y}<br>%{x:,.4g} GiB<br>%{customdata:,.0f} KiB per token<extra></extra>",
        }
    layout: dict[str, Any] = {
        "title": {"text": "KV cache" + (f" at {context_tokens:,} tokens" if context_tokens is not None else "")},
        "xaxis": {"title": {"text": "KV cache (GiB)"}},
        "yaxis": {"autorange": "reversed", "type": "category"},
        "uirevision": "attention-kv",
    }
    if memory_limit_bytes is not None:
        x = memory_limit_bytes / 2**30
        layout["shapes"] = [_line("x", x, "x", "y", t.palette["negative"]) | {"layer": "below"}]
        layout["annotations"] = [  # above the bars, where no bar text can run into it
            {"x": x, "xref": "x", "y": 1, "yref": "y domain", "text": memory_limit_label, "showarrow": False}
            | {"xanchor": "center", "yanchor": "bottom", "font": {"color": t.ink["negative"]}}
        ]
    return _finish([bar], layout, 320, 80, theme, presenter)
