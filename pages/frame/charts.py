"""A plotly chart that stays mounted across reruns and takes each new figure with ``Plotly.react``.

Streamlit 1.67's ``st.plotly_chart`` names its element after a hash of the figure, and its frontend reads the
figure only when the chart mounts: every change of a figure unmounts the old chart and builds a new one with
``Plotly.newPlot`` (bench/bench_elements.py, one run: the scaling page's figure added 294 ms to the floor page's
control step that way, and 72 ms drawn by this chart). This component is keyed by the chart's key alone, so it
mounts once per page visit; on a rerun it gets the new figure as data and ``Plotly.react`` diffs it into the chart
that is already drawn.

plotly.js comes from the plotly package on this machine (``plotly/package_data/plotly.min.js``), copied into the
app's ``static/`` folder and served by Streamlit itself (``server.enableStaticServing``): no request leaves the
server. Where the copy cannot be made (a read-only install), :func:`live_chart_ready` is false and the frame falls
back to ``st.plotly_chart``; ``LESSON_CHART=streamlit`` in the environment does the same, so that bench/ can compare
the two.
"""

from __future__ import annotations

import json
import os
import shutil
import zlib
from pathlib import Path
from typing import Any

import plotly
import plotly.graph_objects as go
import streamlit as st

ROOT = Path(__file__).resolve().parents[2]
STATIC = ROOT / "static"
PLOTLY_JS = "plotly.min.js"
# The class of the element that holds the chart: page CSS (presenter sizing), tests and benchmarks select it.
CHART_CLASS = "lesson-chart"
COMPONENT = "lesson_chart"  # the component's registered name

_JS = """
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
""".replace("__JS__", PLOTLY_JS).replace("__CLASS__", CHART_CLASS)

_CSS = f"""
.{CHART_CLASS} {{ width: 100%; }}
.{CHART_CLASS}.{CHART_CLASS}-stretch {{ height: 100%; }}
"""

_component: Any = None
_ready: bool | None = None


def component_data(payload: dict[str, Any]) -> list[dict[str, Any]]:
    """A component's data, as a one-item list that its script reads as ``component.data[0]``.

    Streamlit 1.67 checks each value of a dict handed to a component for a dataframe, and the check imports pandas:
    0.6 s on the first run of a page that has no other use for it. A list goes out as JSON, unchecked."""
    return [payload]


def plotly_js_source() -> Path:
    """The plotly package's own copy of plotly.js, which the live charts serve from the app's ``static/`` folder."""
    return Path(plotly.__file__).parent / "package_data" / PLOTLY_JS


def live_chart_ready() -> bool:
    """Whether plotly.js is in the app's ``static/`` folder (copied there from the plotly package on first use)."""
    global _ready
    if os.environ.get("LESSON_CHART") == "streamlit":  # Streamlit's own chart, for comparison (bench/)
        return False
    if _ready is None:
        source = plotly_js_source()
        target = STATIC / PLOTLY_JS
        try:
            if not target.exists() or target.stat().st_size != source.stat().st_size:
                STATIC.mkdir(exist_ok=True)
                tmp = target.with_name(f".{PLOTLY_JS}.{os.getpid()}.tmp")  # workers may start together
                shutil.copyfile(source, tmp)
                tmp.replace(target)
            _ready = True
        except OSError:
            _ready = False
    return _ready


def live_chart(fig: go.Figure, key: str, config: dict[str, Any], alt: str = "", stretch: bool = False) -> None:
    """Draw ``fig`` in the chart named ``key``: mounted on the first call, updated in place on later ones."""
    global _component
    if _component is None:
        _component = st.components.v2.component(COMPONENT, js=_JS, css=_CSS, isolate_styles=False)
    spec = fig.to_json()
    # what the browser compares to skip a redraw: the figure and its export settings (the image format)
    version = zlib.crc32((spec + json.dumps(config, sort_keys=True)).encode())
    _component(
        key=key,
        data=component_data({"figure": spec, "config": config, "alt": alt, "stretch": stretch, "version": version}),
        height="stretch" if stretch else figure_height(fig),
    )


def figure_height(fig: go.Figure) -> int:
    """The height (px) the figure is drawn at: its layout's, or plotly's default of 450 px. The chart's place is
    given this height before plotly.js has loaded and drawn it, so nothing below the chart moves when it lands."""
    return int(fig.layout.height or 450)
