"""What each page's main figure costs plotly.js alone on a control step, as a ratio to the floor page's figure.

A lesson page's step can be no faster than the figure it redraws. This measures that part by itself, in Debian's
chromium, with no Streamlit: a blank page loads the plotly.js that the live charts serve, draws a page's main
figure at its defaults, then moves it back and forth between the defaults and one control stepped (``bench.links``'
step of the field), with ``Plotly.react`` as the live chart does (``pages/frame/charts.py``), forcing style and
layout after each. The floor is the floor page's own small chart (``bench/floor_app.py``), built with
``Plotly.newPlot`` as ``st.plotly_chart`` builds it on every change. Each figure is timed between two runs of the
floor.

The printed ratio is a lower bound of sorts for the page's control step: the step also pays Streamlit's rerun and
React's renders, and paint; the floor page's step is about 4x its figure alone.

A figure with a declared drag is measured as the live chart sends it, its plotly slider taken out (the drag row draws
it; ``--keep-sliders`` keeps it). ``--drag`` times each page's drag row instead: 20 steps applied one after another by
``Plotly.update``, as the row applies them, against the same figure's ``Plotly.react`` (with and without plotly's
slider) and the floor's chart.

Run: .venv/bin/python bench/bench_figures.py [--pages Schedules,PPO] [--repeats 8] [--controls 2] [--drag]
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.links import VIEWS, _changeable, _step, spec_of  # noqa: E402

_TIME_JS = """
async ([figures, repeats, fresh]) => {
  const host = document.getElementById("host");
  Plotly.purge(host);
  const draw = (f) => fresh ? Plotly.newPlot(host, f.data, f.layout, {displaylogo: false})
                            : Plotly.react(host, f.data, f.layout, {displaylogo: false});
  await Plotly.newPlot(host, figures[0].data, figures[0].layout, {displaylogo: false});
  const times = [];
  for (let i = 0; i < repeats; i++) {
    const f = JSON.parse(JSON.stringify(figures[(i + 1) % figures.length]));  // a new figure, as a rerun brings
    const t0 = performance.now();
    await draw(f);
    void document.body.offsetHeight;  // style and layout now, not at the next frame
    times.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 30));
  }
  return times;
}
"""


def floor_figures() -> list[dict]:
    """The floor page's chart at n = 50 and 51 (its slider's default and one step), as plain figure dicts."""
    import plotly.graph_objects as go

    return [
        json.loads(go.Figure(go.Scatter(x=list(range(n)), y=[i * i for i in range(n)])).to_json()) for n in (50, 51)
    ]


def page_figures(page: str, controls: int, keep_sliders: bool = False) -> list[tuple[str, list[dict]]]:
    """(control, [figure at the defaults, figure with that control stepped]) for the first ``controls`` fields of
    the page's spec that change its main figure; a figure with a declared drag as the live chart sends it (its plotly
    slider taken out, :func:`pages.frame.drag.split_slider`) unless ``keep_sliders``."""
    import importlib

    from pages.frame.drag import split_slider
    from views import Options
    from views.state import State

    spec = spec_of(page)
    view = importlib.import_module(f"views.{VIEWS[page]}")
    defaults = dict(spec.defaults())

    def main(values: dict) -> dict:
        out = view.figures(State(values), Options(parts=frozenset({"main"})))
        name, fig = next(iter(out.figures.items()))  # the page's main figure comes first
        figure = json.loads(fig.to_json())
        if name in out.drags and not keep_sliders:  # as the live chart sends it: its slider is the drag row
            figure = split_slider(figure, out.drags[name].field)[0]
        return figure

    base = main(defaults)
    out = []
    rng = random.Random(page)
    for f in spec.fields:
        if len(out) >= controls or not _changeable(f) or f.widget == "tabs":
            continue
        values = dict(defaults)
        values[f.name] = _step(f, defaults[f.name], rng)
        if values[f.name] == defaults[f.name] or spec.check(values):
            continue
        other = main(values)
        if other["data"] != base["data"] or other["layout"] != base["layout"]:
            out.append((f.name, [base, other]))
    return out


# Applies 20 of a sweep's steps one after another as the drag row does (pages/frame/drag.py), each timed to its
# promise and a forced layout; then times Plotly.react between the figure at the defaults and the server's figure at
# the last step (the redraw a round trip brings), ``repeats`` times, and the same with plotly's own slider in the
# figures (the redraw a round trip brought before the drag row).
_DRAG_JS = r"""
async ([figure, other, sweep, path, repeats, method, full, fullOther]) => {
  const host = document.getElementById("host");
  Plotly.purge(host);
  await Plotly.newPlot(host, figure.data, figure.layout, {displaylogo: false});
  const steps = [];
  for (const i of path) {
    const [a, b, c] = sweep.steps[i].args;
    const t0 = performance.now();
    if (method === "animate") {
      const data = c.map((_, j) => Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v[j]])));
      await Plotly.animate(host, {data, traces: c},
                           {transition: {duration: 0}, frame: {duration: 0, redraw: false}, mode: "immediate"});
      if (Object.keys(b).length) await Plotly.relayout(host, b);
    } else if (method === "react") {  // the step applied to a copy of the figure, drawn by Plotly.react
      const data = host.data.slice();
      c.forEach((t, j) => {
        const patch = Object.fromEntries(Object.entries(a).map(([k, v]) => [k, v[j]]));
        data[t] = Object.assign({}, data[t], patch);
      });
      const layout = Object.assign({}, host.layout);
      for (const [path, value] of Object.entries(b || {})) {
        const keys = path.replace(/\[(\d+)\]/g, ".$1").split(".");
        let node = layout;
        for (let q = 0; q < keys.length - 1; q++) {
          const next = node[keys[q]];
          node[keys[q]] = Array.isArray(next) ? next.slice() : Object.assign({}, next);
          node = node[keys[q]];
        }
        node[keys[keys.length - 1]] = value;
      }
      await Plotly.react(host, data, layout);
    } else if (method === "restyle") {  // the data alone (texts left as they are): what the texts cost
      await Plotly.restyle(host, a, c);
    } else {
      await Plotly.update(host, a, b, c);
    }
    void document.body.offsetHeight;
    steps.push(performance.now() - t0);
    await new Promise((r) => setTimeout(r, 16));
  }
  const reacts = async (a, b) => {
    await Plotly.react(host, a.data, a.layout, {displaylogo: false});
    const times = [];
    for (let k = 0; k < repeats; k++) {
      const f = JSON.parse(JSON.stringify(k % 2 ? a : b));
      const t0 = performance.now();
      await Plotly.react(host, f.data, f.layout, {displaylogo: false});
      void document.body.offsetHeight;
      times.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 30));
    }
    return times;
  };
  return [steps, await reacts(figure, other), await reacts(full, fullOther)];
}
"""


def drag_figures(page: str, steps: int = 20) -> tuple[str, dict, dict, dict, list[int], dict, dict] | None:
    """(field, the dragged figure at the defaults as the live chart sends it, the same figure at the value of the
    last of ``steps`` steps, the sweep, the steps' indices, and the two figures with plotly's slider kept) for the
    page's declared drag, or None."""
    import importlib

    from pages.frame.drag import split_slider
    from views import Options
    from views.state import State

    view = importlib.import_module(f"views.{VIEWS[page]}")
    spec = spec_of(page)
    defaults = dict(spec.defaults())
    tabs = [str(f.default) for f in spec.fields if f.widget == "tabs"]  # the open tab, by its label or a word of it
    parts = frozenset({"main", *tabs, *(word for tab in tabs for word in tab.lower().split())})
    out = view.figures(State(defaults), Options(parts=parts))
    if not out.drags:
        return None
    name, drag = next(iter(out.drags.items()))
    full = json.loads(out.figures[name].to_json())
    figure, sweep = split_slider(full, drag.field)
    assert sweep is not None
    top, start = len(sweep["steps"]) - 1, sweep["active"]
    way = 1 if start < top - start else -1
    path, i = [], start
    for _ in range(steps):
        if not 0 <= i + way <= top:
            way = -way
        i += way
        path.append(i)
    values = dict(defaults) | {drag.field: drag.values[path[-1]]}
    other_out = view.figures(State(values), Options(parts=parts))
    full_other = json.loads(other_out.figures[name].to_json())
    other, _ = split_slider(full_other, drag.field)
    return drag.field, figure, other, sweep, path, full, full_other


def drag_main(pages: list[str], repeats: int, method: str) -> None:
    """The drag rows' steps against the same figure's Plotly.react and the floor's chart (``--drag``)."""
    from playwright.sync_api import sync_playwright

    from pages.frame.charts import plotly_js_source

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_content("<div id='host' style='width: 1000px; height: 500px'></div>")
        page.add_script_tag(path=str(plotly_js_source()))
        floor = floor_figures()

        def floor_ms() -> float:
            return statistics.median(page.evaluate(_TIME_JS, [floor, repeats, True])[1:])

        print(
            f"| page | field | steps | step ms ({method}, median, max) | Plotly.react ms (with plotly's slider) | "
            "floor ms | step / react (with the slider) | step / floor |"
        )
        print("|---|---|---|---|---|---|---|---|")
        ratios = []
        for name in pages:
            found = drag_figures(name)
            if found is None:
                print(f"| {name} | (no drag) | | | | | | |", flush=True)
                continue
            field, figure, other, sweep, path, full, full_other = found
            before = floor_ms()
            steps, reacts, slider_reacts = page.evaluate(
                _DRAG_JS, [figure, other, sweep, path, repeats, method, full, full_other]
            )
            base = statistics.median([before, floor_ms()])
            step, react, with_slider = (statistics.median(t) for t in (steps, reacts, slider_reacts))
            ratios.append(step / base)
            print(
                f"| {name} | {field} | {len(sweep['steps'])} | {step:.1f}, {max(steps):.1f} | {react:.1f} "
                f"({with_slider:.1f}) | {base:.1f} | {step / react:.2f} ({step / with_slider:.2f}) | "
                f"{step / base:.1f}x |",
                flush=True,
            )
        browser.close()
    if ratios:
        print(f"\nmedian step {statistics.median(ratios):.1f}x the floor's chart over {len(ratios)} pages")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=",".join(VIEWS), help="comma-separated URL names")
    parser.add_argument("--repeats", type=int, default=8, help="redraws per figure (default 8)")
    parser.add_argument("--controls", type=int, default=2, help="controls per page (default 2)")
    parser.add_argument("--drag", action="store_true", help="time the drag rows' steps instead")
    parser.add_argument("--keep-sliders", action="store_true", help="draw the figures with plotly's own sliders")
    parser.add_argument(
        "--method",
        default="update",
        choices=("update", "animate", "restyle", "react"),
        help="how --drag applies a step",
    )
    args = parser.parse_args()
    if args.drag:
        drag_main(args.pages.split(","), args.repeats, args.method)
        return
    from playwright.sync_api import sync_playwright

    from pages.frame.charts import plotly_js_source

    plotly_js = plotly_js_source()  # the live charts' plotly.js
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--disable-dev-shm-usage"])
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.set_content("<div id='host' style='width: 1000px; height: 500px'></div>")
        page.add_script_tag(path=str(plotly_js))
        floor = floor_figures()

        def floor_ms() -> float:
            return statistics.median(page.evaluate(_TIME_JS, [floor, args.repeats, True])[1:])

        print("| page | control | figure ms (Plotly.react) | floor figure ms (newPlot) | ratio |")
        print("|---|---|---|---|---|")
        ratios = []
        for name in args.pages.split(","):
            for control, figures in page_figures(name, args.controls, args.keep_sliders):
                before = floor_ms()
                ms = statistics.median(page.evaluate(_TIME_JS, [figures, args.repeats, False])[1:])
                base = statistics.median([before, floor_ms()])
                ratios.append(ms / base)
                print(f"| {name} | {control} | {ms:.1f} | {base:.1f} | {ms / base:.1f}x |", flush=True)
        browser.close()
    if ratios:
        print(f"\nmedian ratio {statistics.median(ratios):.1f}x over {len(ratios)} figures")


if __name__ == "__main__":
    main()
