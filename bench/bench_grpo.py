"""Benchmark of the GRPO page: core time for 100,000 groups of 64, page reruns, figure sizes, click to redraw.

Run: python bench/bench_grpo.py [--repeats N] [--no-page] [--no-browser]. Prints medians of N timed runs (after
one warm-up run) for numpy float64, numpy float32, and torch on core's device (LESSON_DEVICE picks it), the
figure JSON sizes for the largest group the page offers (G = 64); then the page rerun in AppTest after a
control change (median of 2N reruns) and the figure JSON the page sends; then, in chromium against a real
server, the time from a click on a bar to the redrawn bar (median of N clicks, G = 8 and G = 64).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench._timing import median_ms
from core.grpo import (
    G_MAX,
    batch_normalised_advantages,
    expected_abs_advantage,
    group_signal_probability,
    group_stats,
    grpo_advantages,
)
from viz.grpo import (
    grpo_advantages_figure,
    grpo_batch_contrast_figure,
    grpo_difficulty_figure,
    ppo_vs_grpo_figure,
)

N_GROUPS, G = 100_000, 64
PAGE = "pages/4_GRPO.py"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--no-page", action="store_true", help="skip the AppTest reruns")
    parser.add_argument("--no-browser", action="store_true", help="skip the chromium click timing")
    args = parser.parse_args()

    rng = np.random.default_rng(0)
    R = (rng.random((N_GROUPS, G)) < rng.random((N_GROUPS, 1))).astype(np.float64)  # 0/1, varied difficulty
    print(f"advantages of {N_GROUPS:,} groups of {G} in one call, median of {args.repeats} runs")
    for mode in ("population", "sample", "none"):
        ms = median_ms(lambda mode=mode: grpo_advantages(R, mode, 1e-4), args.repeats)
        print(f"  numpy float64  std={mode:<10} {ms:8.1f} ms")
    R32 = R.astype(np.float32)
    print(f"  numpy float32  std=population {median_ms(lambda: grpo_advantages(R32), args.repeats):8.1f} ms")
    naive = median_ms(lambda: (R - R.mean(-1, keepdims=True)) / (R.std(-1, keepdims=True) + 1e-4), args.repeats)
    print(f"  (plain numpy one-liner, no guards: {naive:.1f} ms)")
    ms = median_ms(lambda: batch_normalised_advantages(R.reshape(1000, 100, G)), args.repeats)
    print(f"  batch-normalised variant (1000 batches of 100 groups) {ms:8.1f} ms")

    import torch

    from core.device import as_tensor, get_device

    dev = get_device()
    print(f"torch {torch.__version__} on {dev} ({torch.get_num_threads()} CPU threads)")
    for dtype in (torch.float64, torch.float32):
        if dev.type == "mps" and dtype == torch.float64:
            continue
        t = as_tensor(R, dtype=dtype)
        ms = median_ms(lambda t=t: grpo_advantages(t, "population", 1e-4), args.repeats)
        print(f"  torch {str(dtype).removeprefix('torch.'):<8} std=population {ms:8.1f} ms")
    if dev.type != "cpu":
        t = as_tensor(R, device=torch.device("cpu"))
        ms = median_ms(lambda: grpo_advantages(t, "population", 1e-4), args.repeats)
        print(f"  torch float64 on cpu    std=population {ms:8.1f} ms")

    p = np.linspace(0, 1, 201)
    ms = median_ms(lambda: (group_signal_probability(p, G_MAX), expected_abs_advantage(p, G_MAX)), args.repeats)
    print(f"difficulty curves (201 points, G = {G_MAX}): {ms:.2f} ms")

    r = R[1]
    s = group_stats(r)
    A = grpo_advantages(r)
    figs = {
        "advantages (G = 64)": grpo_advantages_figure(r, A, mean=s.mean, denominator=s.std_population),
        "difficulty (201 points, 3 curves)": grpo_difficulty_figure(
            p, group_signal_probability(p, G_MAX), expected_abs_advantage(p, G_MAX), G=G_MAX, current_p=s.success_rate,
            other_modes={"no std": expected_abs_advantage(p, G_MAX, "none")},
        ),
        "PPO vs GRPO diagram (G = 64)": ppo_vs_grpo_figure(G_MAX),
        "batch contrast (3 x 64)": grpo_batch_contrast_figure(
            R[:3], grpo_advantages(R[:3]), batch_normalised_advantages(R[:3])
        ),
    }  # fmt: skip
    ms = median_ms(lambda: grpo_advantages_figure(r, A, mean=s.mean, denominator=s.std_population), args.repeats)
    print(f"build the advantages figure (G = 64): {ms:.1f} ms")
    for name, fig in figs.items():
        print(f"figure JSON, {name}: {len(fig.to_json()):,} bytes")
    if not args.no_page:
        page_reruns(args.repeats)
    if not args.no_browser:
        click_to_redraw(args.repeats)


def page_reruns(repeats: int) -> None:
    """AppTest reruns after a control change: a new reward list (core and figures built) and a repeated one."""
    from bench.harness import open_page

    at = open_page(PAGE)
    groups = [",".join("1" if (j * (k + 3)) % 5 < 2 else "0" for j in range(8)) for k in range(repeats)]
    times: list[float] = []
    for text in groups * 2:  # the second pass finds every figure in the page's caches
        at.text_input(key="r").set_value(text)
        t0 = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - t0) * 1e3)
    new, seen = statistics.median(times[:repeats]), statistics.median(times[repeats:])
    modes = []
    for mode in ("sample", "none", "population") * ((repeats + 2) // 3):
        at.radio(key="std").set_value(mode)
        t0 = time.perf_counter()
        at.run()
        modes.append((time.perf_counter() - t0) * 1e3)
    print(f"page rerun (AppTest), new reward list, core + figures built: {new:.0f} ms (median of {repeats})")
    print(f"page rerun (AppTest), a reward list seen before (figures cached): {seen:.0f} ms")
    print(f"page rerun (AppTest), switching the std mode: {statistics.median(modes):.0f} ms")
    for label, query in (("G = 8", {}), ("G = 64", {"r": ",".join(["1", "0"] * 32)})):
        at = open_page(PAGE, query)
        sizes = [len(c.proto.spec) for c in at.get("plotly_chart")]
        print(
            f"figure JSON sent, {label} (bars / difficulty / PPO diagram / batch): "
            + " / ".join(f"{b:,}" for b in sizes)
        )


def click_to_redraw(repeats: int) -> None:
    """Chromium: mouse click on a bar to that bar redrawn with its new height (new chart key, full redraw)."""
    from playwright.sync_api import sync_playwright

    from bench.harness import start_server
    from bench.load import free_port

    port = free_port()
    proc = start_server(port)
    bar_path = (
        "i => document.querySelectorAll('[data-testid=stPlotlyChart]')[0]?.querySelectorAll('g.barlayer g.trace')[1]"
        "?.querySelectorAll('g.point path')[i]?.getAttribute('d')"
    )
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--disable-dev-shm-usage"])
            for label, rewards in (("G = 8", "1,0,0,1,1,0,0,0"), ("G = 64", ",".join(["1", "0"] * 32))):
                page = browser.new_page(viewport={"width": 1400, "height": 1000})
                page.goto(f"http://127.0.0.1:{port}/GRPO?r={rewards}")
                idle = "[data-testid='stApp'][data-test-script-state='notRunning']"
                page.wait_for_selector(idle, timeout=60_000)
                page.wait_for_function(f"() => ({bar_path})(1) != null", timeout=30_000)
                times = []
                for _ in range(repeats + 1):  # the first click (caches cold) is not counted
                    page.wait_for_timeout(400)
                    before = page.evaluate(bar_path, 1)
                    slot = page.locator("[data-testid='stPlotlyChart']").first.locator("g.barlayer g.trace").nth(0)
                    box = slot.locator("g.point").nth(1).bounding_box()
                    t0 = time.perf_counter()
                    page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] * 0.25)
                    changed = f"d => {{ const now = ({bar_path})(1); return now != null && now !== d; }}"
                    page.wait_for_function(changed, arg=before, timeout=15_000)
                    times.append((time.perf_counter() - t0) * 1e3)
                    page.wait_for_selector(idle, timeout=30_000)
                print(
                    f"click to redrawn bar in chromium, {label}: {statistics.median(times[1:]):.0f} ms "
                    f"(median of {repeats}; min {min(times[1:]):.0f}, max {max(times[1:]):.0f})"
                )
                page.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)


if __name__ == "__main__":
    main()
