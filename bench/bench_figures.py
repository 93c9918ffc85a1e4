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

Run: .venv/bin/python bench/bench_figures.py [--pages Schedules,PPO] [--repeats 8] [--controls 2]
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


def page_figures(page: str, controls: int) -> list[tuple[str, list[dict]]]:
    """(control, [figure at the defaults, figure with that control stepped]) for the first ``controls`` fields of
    the page's spec that change its main figure."""
    import importlib

    from views import Options
    from views.state import State

    spec = spec_of(page)
    view = importlib.import_module(f"views.{VIEWS[page]}")
    defaults = dict(spec.defaults())

    def main(values: dict) -> dict:
        out = view.figures(State(values), Options(parts=frozenset({"main"})))
        return json.loads(next(iter(out.figures.values())).to_json())  # the page's main figure comes first

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=",".join(VIEWS), help="comma-separated URL names")
    parser.add_argument("--repeats", type=int, default=8, help="redraws per figure (default 8)")
    parser.add_argument("--controls", type=int, default=2, help="controls per page (default 2)")
    args = parser.parse_args()
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
            for control, figures in page_figures(name, args.controls):
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
