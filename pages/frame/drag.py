"""The drag row under a live chart: a figure's main control moved in the browser, with no server round trip.

A view declares a drag (``views.Drag``): its figure carries a plotly slider whose step ``i`` restyles the figure to
show the page at ``field = values[i]``. Plotly's own slider is costly to draw (it measures every step's label and
diffs every step's data on each ``Plotly.react``: on the scaling and KL pages it was about half of a figure's redraw,
bench/bench_figures.py), so the live chart takes it out of the figure (:func:`split_slider`) and draws a native range
input under the chart instead. Each step the input moves to is applied by ``Plotly.update`` in the browser, so the
figure and its readout panel follow the drag step by step; the step the drag ends on goes to the server once, and the
page's field, link and readouts follow (``pages.frame.binding.drag_writer``).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pages.frame.style import CHART_CLASS, PRESENTER_CHART_CLASS

DRAG_ROW_PX = 44  # the drag row's height under a chart with a sweep

# The drag row under a chart whose figure has a sweep (:func:`split_slider`): a native range input whose steps are
# applied by ``Plotly.update`` in the browser, one at a time (a step asked for while one is drawn waits, and only the
# newest waiting one is drawn), so the figure follows the drag step by step with no server round trip. The step the
# drag ends on goes to the server (``setTriggerValue``) 300 ms after the last change (a key held down, a drag
# released), so the link and the server's readouts follow once. ``host.dataset.dragSteps`` counts the steps drawn,
# ``host.__dragMs`` keeps the last 200 steps' ``Plotly.update`` times.
DRAG_ROW_JS = """
function dragRow(component, host, sweep) {
  const parent = host.parentElement;
  let row = parent.querySelector(":scope > .__CLASS__-drag");
  if (!sweep) { if (row) row.remove(); return null; }
  if (!row) {
    row = document.createElement("div");
    row.className = "__CLASS__-drag";
    const label = document.createElement("output");
    const input = document.createElement("input");
    input.type = "range"; input.min = "0"; input.step = "1";
    row.append(label, input);
    parent.appendChild(row);
    let busy = false, waiting = null, timer = 0;
    row.__touched = -1e9;
    const show = (i) => {
      const s = row.__sweep, text = s.prefix + s.labels[i];
      label.textContent = text;
      input.setAttribute("aria-valuetext", text);
    };
    const draw = (i) => {
      const step = row.__sweep.steps[i];
      if (!step || !window.Plotly || !host.dataset.drawn) { waiting = null; return; }
      busy = true;
      const t0 = performance.now();
      const [a, b, c] = step.args;
      const done = step.method === "restyle" ? Plotly.restyle(host, a, b)
        : step.method === "relayout" ? Plotly.relayout(host, a) : Plotly.update(host, a, b, c);
      done.catch(() => {}).then(() => {
        busy = false;
        const took = host.__dragMs || (host.__dragMs = []);  // each step's Plotly.update (ms), for tests and bench/
        took.push(performance.now() - t0);
        if (took.length > 200) took.shift();
        host.dataset.dragSteps = String((+host.dataset.dragSteps || 0) + 1);
        host.dataset.dragIndex = String(i);
        if (waiting !== null) { const next = waiting; waiting = null; draw(next); }
      });
    };
    row.__go = (i) => { if (busy) waiting = i; else draw(i); };
    input.addEventListener("input", () => {
      row.__touched = performance.now();
      const i = +input.value;
      show(i);
      row.__go(i);
    });
    input.addEventListener("change", () => {
      row.__touched = performance.now();
      if (row.__sweep.free) return;  // a deck's or a drill's figure: the drag is the browser's alone
      clearTimeout(timer);
      timer = setTimeout(() => {
        row.__touched = performance.now();
        row.__component.setTriggerValue("value", JSON.stringify({ index: +input.value, at: Date.now() }));
      }, 300);
    });
    // after a redraw from the server: the server's step, unless the person moved the input in the last 1.5 s (a
    // reply to an earlier release), whose own step is drawn again on top
    row.__settle = () => {
      const s = row.__sweep, mine = +input.value;
      if (!s.free && mine !== s.active && performance.now() - row.__touched < 1500) { row.__go(mine); return; }
      input.value = String(s.active);
      show(s.active);
      host.dataset.dragIndex = String(s.active);
    };
    row.__show = show;
  }
  row.__component = component;  // the newest: its setTriggerValue reaches the server
  row.__sweep = sweep;
  const input = row.querySelector("input"), label = row.querySelector("output");
  input.max = String(sweep.steps.length - 1);
  input.setAttribute("aria-label", sweep.label + ", under the figure");
  // the label as wide as its longest step (in ch of the row's type), so that the rail does not move during a drag
  label.style.width = "min(45%, " + Math.max(...sweep.labels.map((l) => (sweep.prefix + l).length)) + "ch)";
  // a free row (no field behind it) is put back only by a redraw (__settle): a rerun that leaves the figure as it
  // was, dragged in the browser, leaves the row where the person left it
  if (!sweep.free && performance.now() - row.__touched >= 1500) {
    input.value = String(sweep.active); row.__show(sweep.active);
  }
  row.style.setProperty("--lesson-drag-ink", sweep.ink || "inherit");
  row.style.setProperty("--lesson-drag-accent", sweep.accent || "currentColor");
  row.style.setProperty("--lesson-drag-rail", sweep.rail || "rgba(128, 128, 128, 0.5)");
  return row;
}
""".replace("__CLASS__", CHART_CLASS)

DRAG_CSS = f"""
.{CHART_CLASS}.{CHART_CLASS}-stretch.{CHART_CLASS}-dragged {{ height: calc(100% - {DRAG_ROW_PX}px); }}
.{CHART_CLASS}-drag {{
  display: flex; align-items: center; gap: 1rem; height: {DRAG_ROW_PX}px; box-sizing: border-box;
  padding: 0 20px 0 60px; color: var(--lesson-drag-ink); font-size: 16px;
}}
.{CHART_CLASS}-drag output {{
  flex: 0 0 auto; min-width: 8em; line-height: 1.2; font-variant-numeric: tabular-nums; overflow-wrap: anywhere;
}}
.{CHART_CLASS}-drag input[type=range] {{
  flex: 1 1 auto; min-width: 0; height: 28px; margin: 0; cursor: pointer; background: transparent;
  -webkit-appearance: none; appearance: none;
}}
.{CHART_CLASS}-drag input[type=range]::-webkit-slider-runnable-track {{
  height: 6px; border-radius: 3px; background: var(--lesson-drag-rail);
}}
.{CHART_CLASS}-drag input[type=range]::-moz-range-track {{
  height: 6px; border-radius: 3px; background: var(--lesson-drag-rail);
}}
.{CHART_CLASS}-drag input[type=range]::-webkit-slider-thumb {{
  -webkit-appearance: none; width: 22px; height: 22px; margin-top: -8px; border-radius: 50%;
  background: var(--lesson-drag-accent); border: 2px solid var(--lesson-drag-ink); box-sizing: border-box;
}}
.{CHART_CLASS}-drag input[type=range]::-moz-range-thumb {{
  width: 22px; height: 22px; border-radius: 50%; background: var(--lesson-drag-accent);
  border: 2px solid var(--lesson-drag-ink); box-sizing: border-box;
}}
.{CHART_CLASS}-drag input[type=range]:focus {{ outline: none; }}
.{CHART_CLASS}-drag input[type=range]:focus-visible {{
  outline: 2px solid var(--lesson-drag-ink); outline-offset: 3px; border-radius: 4px;
}}
[class*="st-key-{PRESENTER_CHART_CLASS}-"] .{CHART_CLASS}-drag {{ font-size: 20px; }}
"""


@dataclass(frozen=True)
class DragRow:
    """A chart's drag row: ``label`` names the control (its field's label, read by screen readers), ``on_end`` is
    called when a drag ends; ``ink`` colours the row's text and the grip's ring, ``accent`` the grip, ``rail`` the
    rail. Without ``on_end`` the row is *free*: its steps are drawn in the browser and nothing goes to the server (a
    deck's or a drill's figure, whose page has no field for the drag to write), and a rerun that leaves the figure as
    it was leaves the row where it was dragged to."""

    label: str
    on_end: Callable[[], None] | None = None
    ink: str = "inherit"
    accent: str = "currentColor"
    rail: str = "rgba(128, 128, 128, 0.5)"


# How far below the plot plotly draws a slider's current value, rail and labels, beyond its pad (px): measured in
# chromium on the five sliders of 2026-12-04 (79-87 px with the theme's slider font).
SLIDER_BODY_PX = 84
PLOTLY_SLIDER_PAD_TOP = 20  # plotly's default ``sliders[].pad.t``
PLOTLY_MARGIN_B = 80  # plotly's default ``layout.margin.b``


_LAZY_READ = threading.Lock()


def first_slider_prefix(fig: Any) -> str | None:
    """The current-value prefix of ``fig``'s first plotly slider ("" when it has none), or None without a slider.

    Read under a lock: the figure may be shared by sessions' threads (a slide every student draws), and plotly builds
    each list of layout objects (sliders, annotations, shapes) on its first read, where an object then finds itself by
    identity; two first reads at once left one thread's slider outside the list (ValueError; measured 2026-12-06).
    The sessions read no other such list of a shared figure; one that does needs this lock or ``fig.to_dict()``."""
    with _LAZY_READ:
        sliders = fig.layout.sliders
        return (sliders[0].currentvalue.prefix or "") if sliders else None


def slider_label(prefix: str) -> str:
    """A control's name from a plotly slider's current-value prefix ("plan: N = " gives "plan: N"), for a free row."""
    name = prefix.strip().rstrip("=:").strip()
    return name or "Step"


def split_slider(figure: dict[str, Any], label: str) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """A figure (a plain dict) without its first plotly slider, and that slider as a sweep for the drag row.

    The sweep holds each step's ``method`` and ``args`` (what plotly's slider would apply), the steps' labels, the
    active step and the current-value prefix. The plot keeps its size: the room plotly gave the slider under the plot
    (its pad above it, its body, its pad below) goes, the bottom margin keeps the slider's top pad (a readout or axis
    labels may sit there), and the drag row (:data:`DRAG_ROW_PX`) is drawn under the figure instead. ``figure`` is not
    changed. A figure without a slider, or with one of no steps, comes back as it is, with no sweep."""
    layout = figure.get("layout") or {}
    sliders = layout.get("sliders") or []
    steps = sliders[0].get("steps") or [] if sliders else []
    if not steps:
        return figure, None
    slider = sliders[0]
    pad = slider.get("pad") or {}
    top, bottom = pad.get("t", PLOTLY_SLIDER_PAD_TOP), pad.get("b", 0)
    margin = dict(layout.get("margin") or {})
    base = margin.get("b", PLOTLY_MARGIN_B)
    below = max(base, top + bottom + SLIDER_BODY_PX)  # the plot's bottom margin with the slider, as plotly pushes it
    margin["b"] = max(base, top + 8)
    out_layout = {k: v for k, v in layout.items() if k != "sliders"} | {"margin": margin}
    if len(sliders) > 1:
        out_layout["sliders"] = sliders[1:]
    if "height" in layout:
        out_layout["height"] = int(layout["height"]) - below + margin["b"]
    active = slider.get("active", 0)
    active = int(active) if isinstance(active, (int, float)) and 0 <= active < len(steps) else 0
    sweep = {
        "steps": [{"method": s.get("method", "restyle"), "args": s.get("args") or [{}]} for s in steps],
        "labels": [str(s.get("label", i)) for i, s in enumerate(steps)],
        "active": active,
        "prefix": str((slider.get("currentvalue") or {}).get("prefix", "")),
        "label": label,
    }
    return {**figure, "layout": out_layout}, sweep
