"""The one shared look of every figure: themes (light, dark), the palette, one figure builder and one grid helper.

Every builder in viz/ writes its traces and layout as plain dicts and hands them to :func:`figure`, which merges in
the theme's colours and type (and presenter mode's larger type) and builds the ``go.Figure`` without plotly's
per-property validation. Subplots get their axes from :func:`grid`.

The palette is Okabe and Ito's (2008), safe for the common colour-vision deficiencies. Roles follow the lesson:
blue for the reference or baseline, orange for the optimised policy or the chosen plan, sky blue for rules of
thumb, green for optima found by the fit, vermillion for warnings and negative values. Each theme keeps the hues
but picks its own shades: ``palette`` for lines and marks (contrast >= 3:1 against the theme's figure background,
WCAG 2.1 criterion 1.4.11) and ``ink`` for text in a hue (>= 5.3:1, so that it stays above 4.5:1 on the faint
label panels, ``Theme.panel``). Okabe-Ito orange #E69F00 is 2.2:1 on white, so the light theme darkens it; the
Okabe-Ito blue #0072B2 is 3.5:1 on the dark background, so the dark theme lightens it. tests/test_viz_style.py
checks every builder's output against these thresholds in both themes.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

import plotly.graph_objects as go

ROLES = ("reference", "optimised", "rule", "optimum", "negative", "highlight", "yellow", "neutral")


def _roles(*hexes: str) -> Mapping[str, str]:
    return MappingProxyType(dict(zip(ROLES, hexes, strict=True)))


@dataclass(frozen=True)
class Theme:
    """The colours of one theme. Backgrounds match Streamlit's app backgrounds (.streamlit/config.toml)."""

    name: str
    background: str  # paper and plot area
    text: str  # all figure text
    muted: str  # secondary text (notes under axis titles); still >= 4.5:1
    grid: str  # grid lines: deliberately faint, not information
    axis: str  # axis, zero and tick lines (>= 3:1)
    panel: str  # translucent fill behind readout panels and labels over curves (text stays >= 4.5:1 on it)
    slider: tuple[str, str]  # a plotly slider's rail and its active handle
    palette: Mapping[str, str]  # lines and marks, by role
    ink: Mapping[str, str]  # the same hues for text, by role
    sequential: tuple[tuple[float, str], ...]  # 0 (blends with the background) .. 1 (strong)
    diverging: tuple[tuple[float, str], ...]  # negative vermillion, zero near the background, positive blue
    sequence: tuple[str, ...] = field(default=())  # families of curves, neighbours distinct

    def __post_init__(self) -> None:
        if not self.sequence:
            order = ("reference", "optimised", "optimum", "highlight", "rule", "negative", "neutral")
            object.__setattr__(self, "sequence", tuple(self.palette[r] for r in order))


LIGHT = Theme(
    name="light",
    background="#FFFFFF",
    text="#2F2D2B",  # Streamlit 1.67's light text colour: 13.7:1
    muted="#5C5B58",  # 6.8:1
    grid="#E8E8E6",
    axis="#8A8885",  # 3.5:1
    panel="rgba(128,128,128,0.12)",
    slider=("#F8F8F7", "#D5D3CF"),
    #        blue       orange     sky        green      vermillion purple     yellow     grey
    palette=_roles("#0072B2", "#BA8000", "#1C92D5", "#009E73", "#D55E00", "#C86D9F", "#978D0C", "#757575"),
    ink=_roles("#006FAE", "#8E6200", "#1570A4", "#007A58", "#B04D00", "#AF427E", "#746C09", "#6A6A6A"),
    sequential=((0.0, "#F7FBFF"), (0.5, "#6BAED6"), (1.0, "#08306B")),
    diverging=((0.0, "#D55E00"), (0.5, "#F7F7F7"), (1.0, "#0072B2")),
)
DARK = Theme(
    name="dark",
    background="#171614",  # rgb(23, 22, 20): Streamlit 1.67's dark app background
    text="#EDEBE8",  # Streamlit 1.67's dark text colour: 15.2:1
    muted="#AEABA5",  # 7.9:1
    grid="#3A3835",
    axis="#8A8885",  # 5.1:1
    panel="rgba(128,128,128,0.12)",
    slider=("#2D2B27", "#5C5B58"),
    palette=_roles("#0092E3", "#E69F00", "#56B4E9", "#009E73", "#E66500", "#CC79A7", "#F0E442", "#8C8C8C"),
    ink=_roles("#0092E3", "#E69F00", "#56B4E9", "#00A074", "#E66500", "#CC79A7", "#F0E442", "#8C8C8C"),
    # dark cells blend with the page, strong values are light (on dark, light means much)
    sequential=((0.0, "#1C232B"), (0.5, "#2878B5"), (1.0, "#CFE8FF")),
    diverging=((0.0, "#FF8A3D"), (0.5, "#2A2825"), (1.0, "#56B4E9")),
)
THEMES: Mapping[str, Theme] = MappingProxyType({"light": LIGHT, "dark": DARK})


def get_theme(theme: str | Theme | None = "light") -> Theme:
    """The :class:`Theme` named ``theme`` ("light" or "dark"); None (an unknown viewer preference) gives light."""
    if isinstance(theme, Theme):
        return theme
    if theme is None:
        return LIGHT
    try:
        return THEMES[theme]
    except KeyError:
        raise ValueError(f"theme must be 'light' or 'dark', got {theme!r}") from None


# The light theme's values under their historical names (tests and pages compare against them).
PALETTE: dict[str, str] = dict(LIGHT.palette)
SEQUENCE: tuple[str, ...] = LIGHT.sequence
DIVERGING: list[list[Any]] = [list(stop) for stop in LIGHT.diverging]
SEQUENTIAL: list[list[Any]] = [list(stop) for stop in LIGHT.sequential]

# Type sizes in px. Presenter mode is for the back of a room: every size at least PRESENTER_MIN.
FONT_SIZE = 15
PRESENTER_FONT_SIZE = 20
PRESENTER_MIN = 16
PRESENTER_HEIGHT = 1.2  # figures grow by this factor in presenter mode (room for the larger type)

# The ``name`` of an annotation that is a readout panel (live numbers on a filled panel) placed clear of the plots:
# the browser tests check that no such panel covers a plot area. Labels that point at a curve or a point are not.
READOUT = "readout"


def font_size(size: float, presenter: bool = False) -> int:
    """A size written for normal mode, as presenter mode draws it (scaled by 20/15, at least 16 px)."""
    if not presenter:
        return round(size)
    return max(PRESENTER_MIN, round(size * PRESENTER_FONT_SIZE / FONT_SIZE))


def colorscale(kind: str, theme: str | Theme | None = "light") -> list[list[Any]]:
    """The theme's "sequential" or "diverging" colour scale as plotly wants it."""
    stops = {"sequential": get_theme(theme).sequential, "diverging": get_theme(theme).diverging}[kind]
    return [list(stop) for stop in stops]


# ----------------------------------------------------------------------------------------------------------------
# the one builder


def figure(
    data: Sequence[dict[str, Any]],
    layout: dict[str, Any],
    *,
    theme: str | Theme | None = "light",
    presenter: bool = False,
    height: int = 460,
    legend: bool = True,
) -> go.Figure:
    """A figure from plain dicts in the shared style of ``theme``, with larger type when ``presenter``.

    ``layout`` wins over the shared settings key by key (nested dicts are merged, as ``update_layout`` does). The
    style sets every colour and size that Streamlit's own plotly theme would otherwise choose (its grey 12 px tick
    labels): backgrounds, text, grid and axis lines of every axis, legend, hover labels, colour bars and sliders.
    In presenter mode every font size the builder wrote is scaled by 20/15 (at least 16 px, inline
    ``font-size:..px`` included), the base type is 20 px and the height grows by 1.2. Log axes label their decades
    only; every axis keeps its title 8 px clear of its tick labels (automargin). A title above a horizontal
    legend gets the room both need, so that they do not overlap.

    Built without plotly's per-property validation: it costs 40-60 ms for a figure with a slider of a hundred
    steps, more than everything else in a page rerun; skipping it brings the build to about 2 ms. A typo in a
    property name is therefore not caught here: tests/test_viz_style.py rebuilds every builder's output with
    validation. (``_validate`` is a long-standing but private argument of plotly's figure.)
    """
    t = get_theme(theme)
    data = [dict(trace) for trace in data]
    layout = dict(layout)
    if presenter:
        data = [_presenter_sizes(trace) for trace in data]
        layout = _presenter_sizes(layout)
    size = PRESENTER_FONT_SIZE if presenter else FONT_SIZE
    small = font_size(14, presenter)  # tick labels and legend entries
    text = {"color": t.text}
    base: dict[str, Any] = {
        "height": round(height * PRESENTER_HEIGHT) if presenter else height,
        "font": {"size": size, **text},
        "title": {"font": {"size": font_size(17, presenter), **text}},
        "paper_bgcolor": t.background,
        "plot_bgcolor": t.background,
        "margin": {"l": 60, "r": 20, "t": 60, "b": 55},
        "hoverlabel": {"font": {"size": size, **text}, "bgcolor": t.background, "bordercolor": t.axis},
        "showlegend": legend,
        "legend": {
            "orientation": "h",
            "yanchor": "bottom",
            "y": 1.02,
            "xanchor": "left",
            "x": 0,
            "font": {"size": small, **text},
            "title": {"font": {"size": small, **text}},
            "grouptitlefont": {"size": small, **text},
            "bgcolor": "rgba(0,0,0,0)",
        },
    }
    merged = _merge(base, layout)
    axis_style = {
        "tickfont": {"size": small, **text},
        # the title 8 px clear of the tick labels, the margin grown to fit both (a fixed margin let presenter
        # mode's larger titles overprint the tick labels)
        "automargin": True,
        "title": {"font": {"size": size, **text}, "standoff": 8},
        "gridcolor": t.grid,
        "linecolor": t.axis,
        "zerolinecolor": t.axis,
        "tickcolor": t.axis,
    }
    for name in _axis_names(data, merged):
        merged[name] = _merge(axis_style, merged.get(name) or {})
        if merged[name].get("type") == "log":
            # only the decades are labelled: plotly's "2" and "5" between them read as 2 and 5, not 0.2 or 5,000,
            # and crowd each other (and under 16 px in presenter mode)
            merged[name].setdefault("minorloglabels", "none")
    bar_style = {
        "colorbar": {
            "tickfont": {"size": small, **text},
            "title": {"font": {"size": small, **text}},
            "outlinecolor": "rgba(0,0,0,0)",
        }
    }
    for name in [k for k in merged if re.fullmatch(r"coloraxis\d*", k)]:
        merged[name] = _merge(bar_style, merged[name])
    if "sliders" in merged:
        rail, active = t.slider
        slider_style = {
            "font": {"size": small, **text},
            "currentvalue": {"font": {"size": size, **text}},
            "bgcolor": rail,
            "activebgcolor": active,
            "bordercolor": t.axis,
            "tickcolor": t.axis,
        }
        merged["sliders"] = [_merge(slider_style, s) for s in merged["sliders"]]
    _make_room_for_title(data, merged)
    return go.Figure({"data": data, "layout": merged}, _validate=False)


def _merge(base: Mapping[str, Any], over: Mapping[str, Any]) -> dict[str, Any]:
    """``over`` on top of ``base``; dicts present in both are merged recursively (``over`` wins)."""
    out = dict(base)
    for key, value in over.items():
        if isinstance(value, Mapping) and isinstance(out.get(key), Mapping):
            out[key] = _merge(out[key], value)
        else:
            out[key] = value
    return out


def _axis_names(data: Sequence[Mapping[str, Any]], layout: Mapping[str, Any]) -> list[str]:
    """Layout keys of every cartesian axis: those the layout names and those the traces refer to."""
    names = {k for k in layout if re.fullmatch(r"[xy]axis\d*", k)}
    for trace in data:
        if trace.get("type", "scatter") in ("scatter", "scattergl", "bar", "heatmap", "histogram", "box"):
            for letter in "xy":
                ref = trace.get(f"{letter}axis") or letter
                names.add(f"{letter}axis{ref[1:]}")
    return sorted(names)


_INLINE_SIZE = re.compile(r"font-size:\s*(\d+(?:\.\d+)?)px")


def _presenter_sizes(obj: Any) -> Any:
    """A copy of ``obj`` (plain dicts and lists) with every font size and inline font-size scaled for presenter."""
    if isinstance(obj, Mapping):
        out = {}
        for key, value in obj.items():
            if key.endswith("font") and isinstance(value, Mapping) and isinstance(value.get("size"), (int, float)):
                value = {**value, "size": font_size(value["size"], True)}
            out[key] = _presenter_sizes(value)
        return out
    if isinstance(obj, list) and obj and not isinstance(obj[0], (int, float)):
        return [_presenter_sizes(v) for v in obj]
    if isinstance(obj, str) and "font-size" in obj:
        return _INLINE_SIZE.sub(lambda m: f"font-size:{font_size(float(m.group(1)), True)}px", obj)
    return obj


def _plain(text: str) -> str:
    return re.sub(r"<[^>]+>", "", text)


# trace types that plotly leaves out of the legend unless told otherwise
_NO_LEGEND_BY_DEFAULT = frozenset({"heatmap", "contour", "histogram2d", "histogram2dcontour", "image", "surface"})


def legend_rows(data: Sequence[Mapping[str, Any]], size: float, width: float = 640.0) -> int:
    """About how many rows a horizontal legend of ``data`` takes at ``size`` px in a plot ``width`` px wide.

    An estimate (about 0.55 em per character plus the symbol and gaps), for making room above the plot. 640 px is
    about the plot area on a 1280 x 720 screen in presenter mode with the sidebar open (its 22 px root type widens
    the sidebar); a wider plot only leaves some spare room.

    It follows plotly's own rule (``computeLegendDimensions`` in plotly.js): the entries stand in one row, each as
    wide as its text, when they all fit; otherwise every entry takes the width of the widest, so that a long entry
    puts each one on a row of its own.
    """
    widths = [
        0.55 * size * len(_plain(str(trace["name"]))) + 45
        for trace in data
        if trace.get("name") and trace.get("showlegend", trace.get("type") not in _NO_LEGEND_BY_DEFAULT) is not False
    ]
    if not widths:
        return 0
    gap = 5.0  # plotly's gap between entries
    if sum(widths) + gap * (len(widths) - 1) <= width:
        return 1
    per_row = max(1, int((width + gap) // (max(widths) + gap)))
    return math.ceil(len(widths) / per_row)


def _make_room_for_title(data: Sequence[Mapping[str, Any]], layout: dict[str, Any]) -> None:
    """Pin a title to the top and grow the top margin so that it clears a horizontal legend above the plot."""
    title = layout.get("title") or {}
    legend = layout.get("legend") or {}
    if not title.get("text") or not layout.get("showlegend", True) or legend.get("orientation") != "h":
        return
    if float(legend.get("y", 1.02)) < 1.0:  # the legend is not above the plot
        return
    lines = str(title["text"]).count("<br>") + 1
    title_px = 1.35 * title["font"]["size"] * lines
    legend_px = 1.6 * legend["font"]["size"] * legend_rows(data, legend["font"]["size"])
    need = math.ceil(title_px + legend_px + 8 + (float(legend.get("y", 1.02)) - 1.0) * 400)
    margin = layout.setdefault("margin", {})
    if margin.get("t", 0) < need:
        margin["t"] = need
    title.setdefault("y", 1.0)
    title.setdefault("yref", "container")
    title.setdefault("yanchor", "top")
    title.setdefault("pad", {"t": 6})


# ----------------------------------------------------------------------------------------------------------------
# the one grid helper


def axis_key(axis_id: str) -> str:
    """The layout key of axis id 'x3' ('xaxis3'); 'x' gives 'xaxis'."""
    return f"{axis_id[0]}axis{axis_id[1:]}"


def grid(
    rows: int,
    cols: int,
    *,
    n: int | None = None,
    hgap: float = 0.08,
    vgap: float = 0.12,
    widths: Sequence[float] | None = None,
    heights: Sequence[float] | None = None,
    titles: Sequence[str] | None = None,
    title_size: float | None = None,
) -> tuple[list[tuple[str, str]], dict[str, Any]]:
    """Axes for ``n`` (default rows x cols) subplots in a row-major grid: their ids and their layout entries.

    Returns ``[('x', 'y'), ('x2', 'y2'), ...]`` and a layout dict with ``xaxis``/``yaxis`` entries (domain and
    anchor) and, when ``titles`` is given, an ``annotations`` list with one title centred above each cell.
    ``widths``/``heights`` are relative column widths and row heights; ``hgap``/``vgap`` the gaps in paper units.
    Plain dicts, written once: plotly's make_subplots costs tens of milliseconds per figure.
    """
    n = rows * cols if n is None else n
    widths = list(widths) if widths is not None else [1.0] * cols
    heights = list(heights) if heights is not None else [1.0] * rows
    if len(widths) != cols or len(heights) != rows or n > rows * cols:
        raise ValueError("need one width per column, one height per row and at most rows x cols cells")
    x_unit = (1.0 - hgap * (cols - 1)) / sum(widths)
    y_unit = (1.0 - vgap * (rows - 1)) / sum(heights)
    x_starts = [sum(w * x_unit + hgap for w in widths[:c]) for c in range(cols)]
    y_tops = [1.0 - sum(h * y_unit + vgap for h in heights[:r]) for r in range(rows)]

    def clip(v: float) -> float:
        return min(1.0, max(0.0, round(v, 9)))

    ids: list[tuple[str, str]] = []
    layout: dict[str, Any] = {}
    for i in range(n):
        r, c = divmod(i, cols)
        suffix = "" if i == 0 else str(i + 1)
        x0, y1 = x_starts[c], y_tops[r]
        layout[f"xaxis{suffix}"] = {"domain": [clip(x0), clip(x0 + widths[c] * x_unit)], "anchor": f"y{suffix}"}
        layout[f"yaxis{suffix}"] = {"domain": [clip(y1 - heights[r] * y_unit), clip(y1)], "anchor": f"x{suffix}"}
        ids.append((f"x{suffix}", f"y{suffix}"))
    if titles is not None:
        layout["annotations"] = [
            {
                "text": text,
                "x": sum(layout[axis_key(x)]["domain"]) / 2,
                "y": layout[axis_key(y)]["domain"][1],
                "xref": "paper",
                "yref": "paper",
                "xanchor": "center",
                "yanchor": "bottom",
                "showarrow": False,
            }
            | ({"font": {"size": title_size}} if title_size else {})
            for text, (x, y) in zip(titles, ids, strict=False)
        ]
    return ids, layout


# ----------------------------------------------------------------------------------------------------------------
# kept for the page frame


def unlabelled_slider(steps: list[dict[str, Any]], active: int, prefix: str, pad_top: int) -> dict[str, Any]:
    """A plotly slider of too many steps to label under its rail: the steps' labels are drawn transparent and
    tickless, and the current value above the rail (``prefix`` + the step's label) says where it is. ``pad_top``:
    the room under the plot for the x axis's ticks and title."""
    return {
        "active": active,
        "steps": steps,
        "currentvalue": {"prefix": prefix},
        "font": {"color": "rgba(0,0,0,0)"},
        "ticklen": 0,
        "minorticklen": 0,
        "pad": {"t": pad_top, "b": 10},
        "len": 1.0,
        "x": 0.0,
    }


def readout_panel(text: str, t: Theme) -> dict[str, Any]:
    """The readout panel in a figure's top right corner: an annotation named :data:`READOUT` (a drag's steps
    replace its text), left-aligned text in a framed box of the theme's panel colour, anchored at its top right
    corner so that larger type (presenter mode) grows it towards the plot."""
    return {
        "text": text,
        "xref": "paper",
        "yref": "paper",
        "x": 1.0,
        "y": 1.0,
        "xanchor": "right",
        "yanchor": "top",
        "align": "left",
        "showarrow": False,
        "bordercolor": t.axis,
        "borderwidth": 1,
        "borderpad": 6,
        "bgcolor": t.panel,
        "name": READOUT,
    }


def phone_copy(fig: go.Figure) -> go.Figure:
    """A copy of ``fig`` for a phone's narrow column (class mode's student page): no title (the slide's title stands
    above it), the readout panel hidden (the readouts stand under it; a drag's steps still write its text), and the
    plots widened into the panel's room (every x domain scaled so that the rightmost ends at 1).

    Built from ``fig.to_dict()`` (a deep copy; numpy arrays become plotly's base64 typed arrays, drawn the same), not
    ``go.Figure(fig)``: plotly's copy of a figure pops each trace's
    ``type`` out of the source's own trace dict and puts it back afterwards, and the source is a view shared by every
    session (the teacher's projector read ``trace.type`` in that moment: ``KeyError: 'type'``)."""
    out = go.Figure(fig.to_dict())
    layout = out.layout
    layout.title = None
    for annotation in layout.annotations or ():
        if annotation.name == READOUT:
            annotation.visible = False
    axes = [k for k in layout.to_plotly_json() if k.startswith("xaxis")]
    right = max((float(layout[k].domain[1]) for k in axes if layout[k].domain), default=1.0)
    if 0 < right < 1:
        for k in axes:
            if layout[k].domain:
                lo, hi = layout[k].domain
                layout[k].domain = [lo / right, min(hi / right, 1.0)]
    return out


def figure_from_dict(data: list[dict[str, Any]], layout: dict[str, Any]) -> go.Figure:
    """A figure from plain dicts as they are, without validation and without the shared style (a cheap copy)."""
    return go.Figure({"data": data, "layout": layout}, _validate=False)


def plotly_config(filename: str, image_format: str = "png") -> dict[str, Any]:
    """``config`` for ``st.plotly_chart``: the camera button saves ``filename`` as PNG (2x) or SVG."""
    fmt = image_format if image_format in ("png", "svg") else "png"
    return {
        "displaylogo": False,
        "toImageButtonOptions": {"format": fmt, "filename": filename, "scale": 2 if fmt == "png" else 1},
        "modeBarButtonsToRemove": ["lasso2d", "select2d"],
    }
