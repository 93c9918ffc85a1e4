"""What each kind of Streamlit element adds to a control step: the cost model behind the pages' step times.

The floor page (one sidebar slider, one small chart) is measured with a mix of elements added
(``bench/floor_mix_app.py``), each mix between two runs of the bare floor page, in Debian's chromium, the same way
as ``bench/bench_controls.py`` measures a page: the key press to the page redrawn and still. It prints the median
step of each mix, what it adds to the floor's, and that per element. A lesson page's step is about the floor plus
the sum of what its elements add: this shows which of them a faster page would have to send less often.

Run: .venv/bin/python bench/bench_elements.py [--steps 8] [--mixes figure:1,metric:12]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_controls import _measure_floor  # noqa: E402
from bench.harness import running_server  # noqa: E402

# roughly one lesson page's worth of each kind (the scaling page: its main figure, 16 navigation links, 10 number
# boxes, 8-12 readouts, a few select boxes and toggles, text sections, an equation, folded answers, CSV buttons)
MIXES = (
    "figure:1",
    "live:1",
    "link:16",
    "metric:12",
    "number:10",
    "select:4+toggle:4",
    "markdown:20",
    "latex:3",
    "expander:6+download:3",
)


def _floor(browser, steps: int, mix: str = "") -> list[float]:
    """Step times (ms) of the floor page with ``mix`` added, on a server of its own."""
    os.environ["MIX"] = mix
    static = ROOT / "bench" / "static"  # Streamlit serves the static folder beside the script it runs
    if "live" in mix and not static.exists():
        static.symlink_to(ROOT / "static", target_is_directory=True)
    try:
        with running_server(script="bench/floor_mix_app.py") as url:
            _measure_floor(browser, url, 1)  # warm the server and the browser cache
            return _measure_floor(browser, url, steps).total
    finally:
        os.environ.pop("MIX", None)


def _count(mix: str) -> int:
    return sum(int(part.split(":")[1]) for part in mix.split("+"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=8, help="steps per mix (default 8)")
    parser.add_argument("--mixes", default=",".join(MIXES), help="comma-separated mixes, kind:count joined by +")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    rows = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--disable-dev-shm-usage"])
        for mix in [m for m in args.mixes.split(",") if m]:
            floor = _floor(browser, args.steps)
            mixed = _floor(browser, args.steps, mix)
            floor += _floor(browser, args.steps)
            f, m = statistics.median(floor), statistics.median(mixed)
            rows.append((mix, f, m, m - f, (m - f) / _count(mix), m / f))
            print(f"  measured {mix}", file=sys.stderr, flush=True)
        browser.close()
    print(f"load average {os.getloadavg()[0]:.1f}")
    print("| elements added | floor ms | with them ms | added ms | per element ms | ratio to the floor |")
    print("|---|---|---|---|---|---|")
    for mix, f, m, added, each, ratio in rows:
        print(f"| {mix.replace('+', ' + ')} | {f:.0f} | {m:.0f} | {added:+.0f} | {each:+.1f} | {ratio:.2f} |")


if __name__ == "__main__":
    main()
