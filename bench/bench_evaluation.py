"""Benchmark of the evaluation page's core and figures: pass@k curves, the bias simulation, figure sizes.

Run: /work/main/.venv/bin/python bench/bench_evaluation.py [--quick]
Prints medians of several runs (time.perf_counter) and the device the simulation used. Targets from the issue:
full curve at n = 100,000 under 50 ms on CPU; a page rerun under 100 ms; figure JSON <= 300 KB. The last table
times the page itself (pages/5_Evaluation.py in Streamlit's AppTest) after a control change.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from bench._timing import figure_json_kb, median_ms, rerun_ms
from core import evaluation
from core.device import device_summary, get_device
from viz.evaluation import comparison_figure, curve_figures, simulation_figure_of


def curve_figure(n: int, c: int, k: int):
    """The page's path: core's curves for every displayed k, then the pass@k figure."""
    return curve_figures(evaluation.pass_at_k_curves(n, c, k))[0]


def hat_figure(n: int, c: int, k: int):
    return curve_figures(evaluation.pass_at_k_curves(n, c, k))[1]


def sim_figure(sim: evaluation.EstimatorSimulation):
    return simulation_figure_of(sim)


def main() -> None:
    quick = "--quick" in sys.argv
    reps = 3 if quick else 7
    n = 100_000
    ks = np.arange(1, n + 1)
    print(f"device: {device_summary()}")
    print(f"numpy {np.__version__}, median of {reps} runs\n")

    print("core, full curve over every k <= n in one call (target < 50 ms at n = 100,000):")
    for c in (3, 1_000, 50_000):
        ms = median_ms(lambda c=c: evaluation.pass_at_k(n, c, ks), reps)
        ms_p = median_ms(lambda c=c: evaluation.pass_at_k_plugin(n, c, ks), reps)
        ms_h = median_ms(lambda c=c: evaluation.pass_hat_k(n, c, ks), reps)
        print(f"  n={n:,} c={c:>6,}: pass_at_k {ms:6.2f} ms, plug-in {ms_p:6.2f} ms, pass_hat_k {ms_h:6.2f} ms")
    rng = np.random.default_rng(0)
    n_arr = rng.integers(1_000, n + 1, size=100_000)
    c_arr = rng.integers(0, 1_000, size=100_000)
    ms = median_ms(lambda: evaluation.pass_at_k(n_arr, c_arr, 100), reps)
    print(f"  general path, 100,000 different (n, c) at k=100: {ms:6.2f} ms")

    print("\nrerun = core at the display grid + figure build (target <= 100 ms), and figure JSON size (<= 300 KB):")
    for name, build, args in (
        ("pass@k curves", curve_figure, (10, 3, 5)),
        ("pass@k curves", curve_figure, (200, 20, 10)),
        ("pass@k curves", curve_figure, (n, 3, 5_000)),
        ("pass^k beside pass@k", hat_figure, (n, 99_000, 50)),
    ):
        ms = median_ms(lambda build=build, args=args: build(*args), reps)
        size = len(build(*args).to_json())
        print(f"  {name:22s} n={args[0]:>7,}: {ms:6.1f} ms, JSON {size / 1000:6.1f} KB")
    comp = [
        evaluation.compare_models(0.71, 0.725, 1000),
        evaluation.compare_models(0.71, 0.725, 1000, only_a=15, only_b=30),
    ]

    def comparison():
        return comparison_figure(0.71, 0.725, comp[0].se_a, comp[0].se_b, comp)

    ms = median_ms(comparison, reps)
    print(f"  {'model comparison':22s}          : {ms:6.1f} ms, JSON {len(comparison().to_json()) / 1000:6.1f} KB")

    print(f"\nbias simulation on {get_device()} (binomial draws and tallies in torch; 10^6 problems):")
    sim_reps = 3 if quick else 5
    for p, nn, k in ((0.3, 10, 5), (0.05, 200, 10), (0.001, n, 1_000)):
        ms = median_ms(lambda p=p, nn=nn, k=k: evaluation.simulate_estimators(p, nn, k, 1_000_000), sim_reps)
        sim = evaluation.simulate_estimators(p, nn, k, 1_000_000)
        fig_ms = median_ms(lambda sim=sim: sim_figure(sim), reps)
        size = len(sim_figure(sim).to_json())
        print(
            f"  p={p:<5g} n={nn:>7,} k={k:>5,}: {ms:7.1f} ms; figure {fig_ms:5.1f} ms, JSON {size / 1000:5.1f} KB; "
            f"truth {sim.truth:.4f}, unbiased {sim.mean_unbiased:.4f} ± {sim.se_unbiased:.4f}, "
            f"plug-in {sim.mean_plugin:.4f} ± {sim.se_plugin:.4f}"
        )


def page_reruns(reps: int) -> None:
    """The page itself in AppTest: median time of ``at.run()`` after a control change (a new value each time, so
    that the cache of core calls does not answer), and the JSON size of the figures the browser receives."""
    import logging

    from bench.harness import open_page

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    page = "pages/5_Evaluation.py"
    cases = (
        ("Estimators, n = 10", {}, "k", [float(1 + i % 10) for i in range(reps + 1)]),
        ("Estimators, n = 100,000", {"n": "100000", "c": "3"}, "k", [float(5_000 + i) for i in range(reps + 1)]),
        (
            "Bias simulation, 10^5 problems",
            {"view": "Bias simulation"},
            "seed",
            [float(i + 1) for i in range(reps + 1)],
        ),
        (
            "Model comparison, paired",
            {"view": "Model comparison", "onlyA": "40", "onlyB": "55"},
            "N",
            [float(1_000 + i) for i in range(reps + 1)],
        ),
    )
    print(f"\npage rerun in AppTest after a control change (target <= 100 ms), median of {reps}; figure JSON sent:")
    for name, query, key, values in cases:
        at = open_page(page, query)
        ms = rerun_ms(at, key, values)
        size = figure_json_kb(at) * 1000
        print(f"  {name:32s}: {ms:6.1f} ms, figure JSON {size / 1000:6.1f} KB")


if __name__ == "__main__":
    main()
    page_reruns(7 if "--quick" not in sys.argv else 3)
