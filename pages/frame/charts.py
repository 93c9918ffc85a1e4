"""A plotly chart that stays mounted across reruns and takes each new figure with ``Plotly.react``.

Streamlit 1.67's ``st.plotly_chart`` names its element after a hash of the figure, and its frontend reads the
figure only when the chart mounts: every change of a figure unmounts the old chart and builds a new one with
``Plotly.newPlot`` (bench/bench_elements.py, one run: the scaling page's figure added 294 ms to the floor page's
control step that way, and 72 ms drawn by this chart). This component is keyed by the chart's key alone, so it
mounts once per page visit; on a rerun it gets the new figure as data and ``Plotly.react`` diffs it into the chart
that is already drawn.

plotly.js is plotly's own cartesian bundle (``assets/plotly-cartesian.min.js``: every trace type the lessons draw, in
a third of the full bundle's 4.8 MB, so a page's first figure comes about 0.7 s sooner) where it is the same plotly.js
version as the plotly package's copy (``plotly/package_data/plotly.min.js``), and that full copy otherwise; a figure
with a trace type the cartesian bundle lacks goes to ``st.plotly_chart``. Either is copied into the app's ``static/``
folder and served by Streamlit itself (``server.enableStaticServing``): no request leaves the server. Where the copy
cannot be made (a read-only install), :func:`live_chart_ready` is false and the frame falls back to
``st.plotly_chart``; ``LESSON_CHART=streamlit`` in the environment does the same, so that bench/ can compare the two.
"""

from __future__ import annotations

import functools
import json
import os
import re
import shutil
import tempfile
import threading
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
import streamlit as st
from plotly.io.json import to_json_plotly

from pages.frame.drag import DRAG_CSS, DRAG_ROW_JS, DRAG_ROW_PX, DragRow, split_slider
from pages.frame.style import CHART_CLASS

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
PLOTLY_JS = "plotly.min.js"  # the name it is served under, whichever bundle it is
# plotly's cartesian bundle of plotly.js (npm plotly.js-cartesian-dist-min, MIT licence; assets/README.md) and its
# trace types, as its README lists them
CARTESIAN_JS = Path(__file__).resolve().parent / "assets" / "plotly-cartesian.min.js"
CARTESIAN_TRACES = frozenset(
    {"bar", "box", "contour", "heatmap", "histogram", "histogram2d", "histogram2dcontour", "image", "pie", "scatter",
     "scatterternary", "violin"}
)  # fmt: skip
COMPONENT = "lesson_chart"  # the component's registered name

# Loads plotly.js once per page (a script tag from the app's static folder); ``plotlyReady()`` resolves to it. Shared
# by the chart and by :func:`plotly_preload`, which starts the load before a chart needs it.
_LOADER_JS = """
// Streamlit serves the app's static folder beside its own bundle: under the same base path (server.baseUrlPath)
function plotlySource() {
  const own = [...document.querySelectorAll("script[src]")].map((s) => s.src).find((s) => s.includes("/static/js/"));
  const base = own ? own.slice(0, own.indexOf("/static/js/") + 1) : new URL("/", document.baseURI).href;
  return base + "app/static/__JS__";
}
function plotlyReady() {
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!window.__lessonPlotly) {
    window.__lessonPlotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = plotlySource();
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => { window.__lessonPlotly = null; reject(new Error("plotly.js did not load")); };
      document.head.appendChild(script);
    });
  }
  return window.__lessonPlotly;
}
""".replace("__JS__", PLOTLY_JS)

_JS = (
    _LOADER_JS
    + DRAG_ROW_JS
    + """
export default function (component) {
  const { parentElement } = component;
  const data = component.data[0];  // sent as a one-item list (component_data)
  let host = parentElement.querySelector(".__CLASS__");
  if (!host) {
    host = document.createElement("div");
    host.className = "__CLASS__";
    host.setAttribute("role", "figure");
    parentElement.appendChild(host);
  }
  const cleanup = () => {  // Streamlit calls this when the chart leaves the page, not on a rerun
    if (host.__lessonResize) { host.__lessonResize.disconnect(); host.__lessonResize = null; }
    if (window.Plotly) window.Plotly.purge(host);
    delete host.dataset.drawn;
  };
  host.setAttribute("aria-label", data.alt || "");
  host.classList.toggle("__CLASS__-stretch", !!data.stretch);
  const row = dragRow(component, host, data.sweep ? JSON.parse(data.sweep) : null);
  host.__lessonComponent = component;  // the newest: a click's setTriggerValue reaches the server
  host.__lessonClicks = !!data.clicks;
  host.classList.toggle("__CLASS__-dragged", !!row);
  const version = String(data.version) + (data.stretch ? "s" : "");
  // a rerun that left this figure as it was (another control, another tab's figure) costs nothing here
  if (host.dataset.drawn === version) return cleanup;
  host.dataset.version = version;
  const figure = JSON.parse(data.figure);
  const layout = figure.layout || {};
  // the app's own type, as Streamlit's plotly theme gives it, where the figure names none
  layout.font = Object.assign({ family: getComputedStyle(parentElement).fontFamily }, layout.font || {});
  if (data.stretch) { layout.autosize = true; delete layout.height; }
  const draw = (Plotly) => {
    if (host.dataset.version !== version) return;  // a newer figure came while plotly.js loaded
    Plotly.react(host, figure.data || [], layout, data.config).then(() => {
      if (row) row.__settle();  // the drag's own step where the person is still dragging, else the server's
      if (!host.__lessonClickWired) {  // a click on a point goes to the server when the page listens for clicks
        host.__lessonClickWired = true;
        host.on("plotly_click", (event) => {
          const point = event && event.points && event.points[0];
          if (!host.__lessonClicks || !point) return;
          host.__lessonComponent.setTriggerValue("click", JSON.stringify(
            { point: point.pointIndex, trace: point.curveNumber, at: Date.now() }));
        });
      }
      if (!host.__lessonResize) {
        // follow the column's width; a chart that is not displayed (a closed tab, a blanked deck) is left alone
        host.__lessonResize = new ResizeObserver(() => {
          if (host.isConnected && host.offsetParent !== null) Plotly.Plots.resize(host).catch(() => {});
        });
        host.__lessonResize.observe(parentElement);
      }
      host.dataset.drawn = version;
    }, (error) => console.warn("plotly could not draw this figure", error));
  };
  plotlyReady().then(draw, (error) => {
    host.textContent = "The figure could not be drawn: " + error.message + " (reload the page to try again)";
  });
  return cleanup;
}
""".replace("__CLASS__", CHART_CLASS)
)

_CSS = (
    f"""
.{CHART_CLASS} {{ width: 100%; }}
.{CHART_CLASS}.{CHART_CLASS}-stretch {{ height: 100%; }}
"""
    + DRAG_CSS
)

_component: Any = None
_ready: bool | None = None
_READY_LOCK = threading.Lock()


def component_data(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """A component's data, as a one-item list that its script reads as ``component.data[0]``.

    Streamlit 1.67 checks each value of a dict handed to a component for a dataframe, and the check imports pandas:
    0.6 s on the first run of a page that has no other use for it. A list goes out as JSON, unchecked."""
    return [payload]


def bundle_version(path: Path) -> str | None:
    """The plotly.js version a bundle's header names ("4.1.1"), or None where it names none."""
    try:
        with path.open("rb") as f:
            head = f.read(400).decode("utf-8", "replace")
    except OSError:
        return None
    found = re.search(r"plotly\.js(?: \([^)]*\))? v(\d+\.\d+\.\d+)", head)
    return found.group(1) if found else None


@functools.cache
def plotly_js_source() -> Path:
    """The plotly.js the live charts serve from the app's ``static/`` folder: the cartesian bundle where its version
    is the plotly package's own plotly.js version (the package's figures are written for that version), else the
    package's full copy."""
    full = Path(plotly.__file__).parent / "package_data" / PLOTLY_JS
    version = bundle_version(full)
    if version is not None and bundle_version(CARTESIAN_JS) == version:
        return CARTESIAN_JS
    return full


def live_chart_draws(fig: go.Figure) -> bool:
    """Whether the served plotly.js has every trace type of ``fig`` (the full bundle has them all)."""
    if plotly_js_source() != CARTESIAN_JS:
        return True
    return all((trace.type or "scatter") in CARTESIAN_TRACES for trace in fig.data)


def live_chart_ready() -> bool:
    """Whether plotly.js is in the app's ``static/`` folder (copied there from :func:`plotly_js_source` on first
    use)."""
    global _ready
    if os.environ.get("LESSON_CHART") == "streamlit":  # Streamlit's own chart, for comparison (bench/)
        return False
    if _ready is not None:
        return _ready
    # the sessions of a fresh server (a class opening its first page) ask at once: one thread copies, the others wait
    # for its answer (with a tmp name per process only, two threads' copies raced: the second's rename found no file
    # and turned live charts off for the process)
    with _READY_LOCK:
        if _ready is None:
            source = plotly_js_source()
            target = STATIC / PLOTLY_JS
            try:
                if not target.exists() or target.stat().st_size != source.stat().st_size:
                    STATIC.mkdir(exist_ok=True)
                    # a name unique across threads and worker processes
                    fd, name = tempfile.mkstemp(prefix=f".{PLOTLY_JS}.", suffix=".tmp", dir=STATIC)
                    os.close(fd)
                    try:
                        shutil.copyfile(source, name)
                        os.chmod(name, 0o644)  # mkstemp's is 0600; nginx or a container's worker may be another user
                        Path(name).replace(target)
                    finally:
                        Path(name).unlink(missing_ok=True)
                _ready = True
            except OSError:
                try:  # another process's copy may be in place
                    _ready = target.exists() and target.stat().st_size == source.stat().st_size
                except OSError:
                    _ready = False
    return _ready


# Starts loading plotly.js from the frame's sidebar, while the server still computes the page's figures. Measured in
# chromium (2026-12-04): on a tab's first page it began 1.9 s before the chart arrived; in later tabs of the same
# browser Streamlit mounted it no earlier than the chart, so there it gains nothing. A failed load is tried again by
# the chart.
_PRELOAD_JS = (
    _LOADER_JS
    + """
export default function () {
  if (!window.Plotly) plotlyReady().catch(() => {});
}
"""
)
_preload: Any = None


def plotly_preload() -> None:
    """Mount the piece that loads plotly.js ahead of the first chart (draws nothing); nothing where the live charts
    are off (:func:`live_chart_ready`)."""
    global _preload
    if not live_chart_ready():
        return
    if _preload is None:
        _preload = st.components.v2.component("lesson_plotly_preload", js=_PRELOAD_JS)
    _preload(key="lesson-plotly-preload", height=0)


def live_chart(
    fig: go.Figure,
    key: str,
    config: dict[str, Any],
    alt: str = "",
    stretch: bool = False,
    drag: DragRow | None = None,
    on_click: Callable[[], None] | None = None,
) -> None:
    """Draw ``fig`` in the chart named ``key``: mounted on the first call, updated in place on later ones.

    ``drag``: the figure's plotly slider becomes the chart's drag row (:func:`split_slider`), whose steps are drawn
    in the browser; the step a drag ends on is handed to ``drag.on_end`` where the row has one (called with no
    argument, the value in ``st.session_state[key].value``). ``on_click``: called when a point of the figure is
    clicked, the point in ``st.session_state[key].click`` (JSON ``{"point": i, "trace": j}``)."""
    global _component
    if _component is None:
        _component = st.components.v2.component(COMPONENT, js=_JS, css=_CSS, isolate_styles=False)
    height = figure_height(fig)
    sweep = None
    if drag is None:
        spec = fig.to_json()
    else:
        figure, sweep = split_slider(fig.to_plotly_json(), drag.label)
        if sweep is not None:
            sweep |= {"ink": drag.ink, "accent": drag.accent, "rail": drag.rail, "free": drag.on_end is None}
            height = int(figure["layout"].get("height", height)) + DRAG_ROW_PX
        spec = to_json_plotly(figure)
    # what the browser compares to skip a redraw: the figure and its export settings (the image format)
    version = zlib.crc32((spec + json.dumps(config, sort_keys=True)).encode())
    payload = {"figure": spec, "config": config, "alt": alt, "stretch": stretch, "version": version}
    if sweep is not None:  # as JSON text, as the figure: plotly's encoder takes what its figures hold (numpy values)
        payload["sweep"] = to_json_plotly(sweep)
    callbacks: dict[str, Callable[[], None]] = {}
    if drag is not None and drag.on_end is not None:
        callbacks["on_value_change"] = drag.on_end
    if on_click is not None:
        payload["clicks"] = True
        callbacks["on_click_change"] = on_click
    _component(key=key, data=component_data(payload), height="stretch" if stretch else height, **callbacks)


def click_handlers(key: str, on_click: Callable[[int], None]) -> tuple[Callable[[], None], Callable[[], None]]:
    """The callbacks that hand the index of a clicked point to ``on_click``: for the live chart (its ``click``
    event, JSON) and for ``st.plotly_chart`` (its selection). A message that names no point changes nothing."""

    def live() -> None:
        try:
            point = json.loads(getattr(st.session_state.get(key), "click", None) or "{}")["point"]
        except (KeyError, TypeError, ValueError):
            return
        if isinstance(point, int) and not isinstance(point, bool) and point >= 0:
            on_click(point)

    def selected() -> None:
        try:
            point = st.session_state[key].selection.points[0]["point_index"]
        except (AttributeError, IndexError, KeyError, TypeError):
            return  # an empty selection (a double click clears it)
        if isinstance(point, int) and not isinstance(point, bool) and point >= 0:
            on_click(point)

    return live, selected


def figure_height(fig: go.Figure) -> int:
    """The height (px) the figure is drawn at: its layout's, or plotly's default of 450 px. The chart's place is
    given this height before plotly.js has loaded and drawn it, so nothing below the chart moves when it lands."""
    return int(fig.layout.height or 450)
