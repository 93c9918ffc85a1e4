"""How much of a control step is the page's frame and main figure, and how much the rest of its body.

Each page is measured as ``bench/bench_controls.py`` measures it (Debian's chromium, each control stepped, the time
to the redrawn figure as a ratio to the floor page measured just before and after), in three versions of the app,
each its own server, in turn and ``--passes`` times over:

- ``full``: the page as it is;
- ``figure``: the page's body ends where its readouts would start (``LESSON_BODY=figure``, pages/frame): the shared
  frame, the page's sidebar controls (and any tab's controls drawn before the figure) and its main figure stay;
  readouts, more views, texts and CSV buttons are left out;
- ``readouts``: the same with the readouts (``LESSON_BODY=readouts``).

The ``figure`` version is the least that any change to a page's body can leave: if it is over the goal, no body of
that page meets the goal without a lighter figure or a lighter frame. The last column, full over figure, is what the
rest of the body adds.

Run: .venv/bin/python bench/bench_body.py [--pages Scaling_laws,Serving] [--controls gpus,batch] [--steps 4]
     [--passes 2]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_controls import MEDIAN_GOAL as GOAL  # noqa: E402 (issue 31: the median's goal)
from bench.bench_controls import page_between_floors  # noqa: E402
from bench.harness import running_server  # noqa: E402
from bench.links import VIEWS  # noqa: E402
from pages.frame import BODY_CUTS  # noqa: E402

MODES = ("full", *BODY_CUTS)


def _one_pass(browser, floor_url: str, mode: str, pages: list[str], only: set[str], steps: int) -> dict:
    """{(page, control): (step ms, floor ms)} for one version of the app, in its own server."""
    if mode == "full":
        os.environ.pop("LESSON_BODY", None)
    else:
        os.environ["LESSON_BODY"] = mode  # the server inherits it
    out = {}
    try:
        with running_server() as app_url:
            for name in pages:
                measured, _, floor = page_between_floors(browser, floor_url, app_url, name, steps, only)
                for control, s in measured.items():
                    if s.view:
                        out[(name, control)] = (s.median("view"), floor)
    finally:
        os.environ.pop("LESSON_BODY", None)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="Scaling_laws,Serving,Schedules,PPO", help="comma-separated URL names")
    parser.add_argument("--controls", default="", help="comma-separated field names (default: every one)")
    parser.add_argument("--steps", type=int, default=4, help="steps per control (default 4)")
    parser.add_argument("--passes", type=int, default=2, help="rounds of the three versions, in turn (default 2)")
    args = parser.parse_args()
    pages = [p for p in args.pages.split(",") if p in VIEWS]
    only = {c for c in args.controls.split(",") if c}
    from playwright.sync_api import sync_playwright

    results: dict[str, list[dict]] = {mode: [] for mode in MODES}
    with running_server(script="bench/floor_app.py") as floor_url, sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=shutil.which("chromium"), args=["--disable-dev-shm-usage"])
        for k in range(args.passes):
            order = MODES if k % 2 == 0 else MODES[::-1]  # in turn, each version first as often as last
            for mode in order:
                load = os.getloadavg()[0]
                results[mode].append(_one_pass(browser, floor_url, mode, pages, only, args.steps))
                print(f"pass {k + 1} {mode} done (load average {load:.1f})", flush=True)
        browser.close()

    found = {key for runs in results.values() for run in runs for key in run}
    keys = sorted(found, key=lambda k: (pages.index(k[0]), k[1]))
    head = " | ".join(f"{m} ms (ratio)" for m in MODES)
    print(f"\n| page | control | {head} | full / figure |")
    print("|---|---|" + "---|" * len(MODES) + "---|")
    ratios: dict[str, list[float]] = {m: [] for m in MODES}
    for key in keys:
        cells, means = [], {}
        for m in MODES:
            runs = [run[key] for run in results[m] if key in run]
            if not runs:
                cells.append("-")
                continue
            ms = statistics.mean(r[0] for r in runs)
            ratio = statistics.mean(r[0] / r[1] for r in runs)
            means[m] = ms
            ratios[m].append(ratio)
            cells.append(f"{ms:.0f} ({ratio:.2f}x{'' if ratio <= GOAL else ' over'})")
        rest = f"{means['full'] / means['figure']:.2f}" if "full" in means and "figure" in means else "-"
        print(f"| {key[0]} | {key[1]} | " + " | ".join(cells) + f" | {rest} |")
    print()
    for m in MODES:
        if ratios[m]:
            within = sum(r <= GOAL for r in ratios[m])
            print(f"{m}: median ratio {statistics.median(ratios[m]):.2f}x, {within} of {len(ratios[m])} within {GOAL}x")


if __name__ == "__main__":
    main()
