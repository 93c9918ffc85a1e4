"""Benchmark of the scaling page: page rerun, figure size, core time, server start to first figure.

Run: .venv/bin/python bench/bench_scaling.py [--no-browser]. Prints a markdown table (medians).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._timing import median_ms, rerun_ms, row  # noqa: E402
from bench.harness import open_page  # noqa: E402
from core import scaling  # noqa: E402
from viz.scaling import isoflop_figure  # noqa: E402

PAGE = "pages/1_Scaling_laws.py"


def page_reruns(repeats: int = 9) -> tuple[float, float]:
    """Median AppTest rerun after changing the plan's N (the page's main control): values seen before (the
    page-layer cache hits, as for a user going back and forth), and new values."""
    at = open_page(PAGE)
    values = [1e9 * (1 + i) for i in range(repeats)]
    new = rerun_ms(at, "N", values)
    seen = rerun_ms(at, "N", values)
    return seen, new


def first_render_seconds(runs: int = 3) -> tuple[float, float]:
    """Server start (``streamlit run app.py``) to the page's title, and to the U-curve drawn, in chromium, for a
    deep link that is the fresh server's first request."""
    from playwright.sync_api import sync_playwright

    from bench.harness import start_server
    from bench.load import free_port

    title, figure = [], []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--disable-dev-shm-usage"])
        for _ in range(runs):
            port = free_port()
            start = time.perf_counter()
            proc = start_server(port)
            try:
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{port}/Scaling_laws?N=1.5e%2B09")
                page.wait_for_selector("h1", timeout=60_000)
                title.append(time.perf_counter() - start)
                page.wait_for_selector("g.slider-container", timeout=60_000)
                figure.append(time.perf_counter() - start)
                page.close()
            finally:
                proc.terminate()
                proc.wait(10)
        browser.close()
    return statistics.median(title), statistics.median(figure)


def main() -> None:
    print(f"scaling page benchmark, {os.cpu_count()} CPUs, python {sys.version.split()[0]}")
    print("| what | median |\n|---|---|")
    row(
        "core: isoflop_study (U-curve, slider steps, other fit, 9-budget family)",
        f"{median_ms(lambda: scaling.isoflop_study(1.2e21, 1e10), 21):.2f} ms",
    )
    study = scaling.isoflop_study(1.2e21, 1e10)

    def build() -> None:
        isoflop_figure(study.curve, study.current, study.slider, study.slider_active, "fit", ("other", 1e9))

    row("viz: isoflop_figure build (dict assembly, 98 slider steps)", f"{median_ms(build, 11):.1f} ms")
    cached, uncached = page_reruns()
    row("page rerun after a control change (AppTest, figures cached)", f"{cached:.0f} ms")
    row("page rerun after a control change (AppTest, new values: core + figures built)", f"{uncached:.0f} ms")
    at = open_page(PAGE)
    sizes = [len(str(f).encode()) for f in (at.get("plotly_chart")[i].proto.spec for i in range(2))]
    row(
        "figure JSON sent (U-curve with 98 slider steps / budget family)",
        f"{sizes[0] / 1024:.0f} KB / {sizes[1] / 1024:.0f} KB",
    )
    code = (
        "import sys; from streamlit.testing.v1 import AppTest; "
        "AppTest.from_file('app.py').run(); print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    row("home page imports torch", out.splitlines()[-1])
    if "--no-browser" not in sys.argv:
        title, figure = first_render_seconds()
        row("server start to the page drawn in chromium (deep link): title / figure", f"{title:.2f} s / {figure:.2f} s")


if __name__ == "__main__":
    main()
