"""Benchmark of the KL leash page's core and figures: what one rerun of the page costs.

Run: python bench/bench_kl.py [--threads N]. Prints the device, the median wall and CPU time of several runs of
each step (time.perf_counter, time.process_time), a whole rerun (sweep + random policies + all five figures, as
the page does it) and the figure JSON sizes for the largest input the issue names (K = 10 answers, 121 slider
steps, 20,000 random policies). --threads sets torch's thread count (1 helps on a busy shared machine).

The page part (skip it with --no-page) times ``at.run()`` of pages/2_KL_leash.py in AppTest after a control
change: beta moved through 9 values twice (first pass: new values, the sweep and figures are built; second pass:
the page's figure cache answers), a DPO log-probability changed with the DPO tab open, and the figure JSON the page
sends for each view at K = 10 (and 100,000 random policies in the theorem check).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np

from core.device import device_summary, get_device
from core.dpo import dpo_curve, dpo_loss
from core.kl_leash import beta_grid, kl_regularized_policy, leash_sweep, random_policies
from viz.dpo import dpo_figure
from viz.kl_leash import kl_hacking_figure, kl_leash_figure, kl_sweep_figure, kl_theorem_figure

RUNS = 7
K = 10
N_POLICIES = 20_000
BETA = 0.37


def median_ms(fn: Callable[[], object], runs: int = RUNS) -> tuple[float, float]:
    """Median wall time and median CPU time (this process, all threads) of ``fn``, in ms.

    On a shared machine the wall time includes waiting for a core; the CPU time says what the work itself costs.
    """
    fn()  # warm-up (imports, caches, CUDA context)
    wall, cpu = [], []
    for _ in range(runs):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return 1e3 * statistics.median(wall), 1e3 * statistics.median(cpu)


def _fmt(times: tuple[float, float]) -> str:
    return f"{times[0]:8.2f} ms wall {times[1]:8.2f} ms CPU"


def main() -> None:
    if len(sys.argv) > 2 and sys.argv[1] == "--threads":  # e.g. --threads 1 on a busy shared machine
        import torch

        torch.set_num_threads(int(sys.argv[2]))
    rng = np.random.default_rng(0)
    pi_ref = rng.dirichlet(np.ones(K))
    pi_ref[2] = 0.0  # one answer the reference never writes
    r = rng.normal(size=K) * 2
    r_true = r + rng.normal(size=K)
    labels = [f"answer {k + 1}" for k in range(K)]
    betas = beta_grid(121, include=BETA)

    get_device()
    print(f"device: {device_summary()}")
    print(f"K = {K} answers, {len(betas)} betas, {N_POLICIES:,} random policies, {RUNS} runs each (median)")

    big_betas = np.geomspace(1e-3, 1e3, 100_000)
    rows = [
        ("kl_regularized_policy, 100,000 betas", lambda: kl_regularized_policy(pi_ref, r, big_betas)),
        ("leash_sweep (121 betas)", lambda: leash_sweep(pi_ref, r, betas, r_true)),
        (f"random_policies (n={N_POLICIES:,})", lambda: random_policies(pi_ref, r, BETA, n=N_POLICIES)),
        ("dpo_loss, 1e6 pairs", lambda: dpo_loss(*(-rng.uniform(1, 50, size=(4, 1_000_000))), 0.1)),
    ]
    for name, fn in rows:
        print(f"  {name:<40s} {_fmt(median_ms(fn))}")

    sweep = leash_sweep(pi_ref, r, betas, r_true)
    cloud = random_policies(pi_ref, r, BETA, n=N_POLICIES)
    pair = dpo_loss(-10.0, -15.0, -12.0, -14.0, 0.1)
    builders = {
        "kl_leash_figure": lambda: kl_leash_figure(sweep, BETA, labels),
        "kl_sweep_figure": lambda: kl_sweep_figure(sweep, BETA, labels),
        "kl_hacking_figure": lambda: kl_hacking_figure(sweep, BETA),
        "kl_theorem_figure (plane)": lambda: kl_theorem_figure(cloud, sweep, BETA),
        "kl_theorem_figure (objective)": lambda: kl_theorem_figure(cloud, sweep, BETA, mode="objective"),
        "dpo_figure": lambda: dpo_figure(*dpo_curve(pair.margin), pair.margin, pair.loss, pair.weight),
    }
    for name, build in builders.items():
        times = median_ms(build)
        size = len(build().to_json())
        print(f"  {name:<40s} {_fmt(times)}   JSON {size:>8,} bytes")

    def rerun() -> None:
        s = leash_sweep(pi_ref, r, betas, r_true)
        c = random_policies(pi_ref, r, BETA, n=N_POLICIES)
        d = dpo_loss(-10.0, -15.0, -12.0, -14.0, 0.1)
        for fig in (
            kl_leash_figure(s, BETA, labels),
            kl_sweep_figure(s, BETA, labels),
            kl_hacking_figure(s, BETA),
            kl_theorem_figure(c, s, BETA),
            dpo_figure(*dpo_curve(d.margin), d.margin, d.loss, d.weight),
        ):
            fig.to_json()

    print(f"  {'whole rerun (core + 5 figures + JSON)':<40s} {_fmt(median_ms(rerun))}   (target <= 100 ms)")
    if "--no-page" not in sys.argv:
        page_rerun()
    print(f"load average: {' '.join(f'{x:.1f}' for x in os.getloadavg())} (wall times are not meaningful under load)")


PAGE = "pages/2_KL_leash.py"
BIG = {
    "K": "10",
    "pi_ref": "0.2, 0.15, 0.1, 0.1, 0.1, 0.1, 0.1, 0.05, 0.05, 0.05",
    "r": "1, 0.5, 0, -0.5, 2, 1.5, 0.2, 3, -1, 0.8",
    "r_true": "1, 0.5, 0, -0.5, 1, 1.5, 0.2, -2, -1, 0.8",
    "names": "",
    "beta": "0.5",
}


def _timed_runs(at, change: Callable[[object], None], values: list) -> tuple[str, str]:
    """Median wall (CPU) ms of ``at.run()`` after ``change(value)``: first pass (new values), second (cached).

    AppTest runs the script in a thread of this process, so the process CPU time is the script's own work plus
    AppTest's (it recompiles the script every run, which a server does not) -- a number that load does not inflate.
    """
    wall, cpu = [], []
    for v in values * 2:
        change(v)
        t0, c0 = time.perf_counter(), time.process_time()
        at.run()
        wall.append(1e3 * (time.perf_counter() - t0))
        cpu.append(1e3 * (time.process_time() - c0))
    n = len(values)
    return tuple(
        f"{statistics.median(wall[part]):4.0f} ms ({statistics.median(cpu[part]):3.0f} CPU)"
        for part in (slice(0, n), slice(n, None))
    )


def page_rerun() -> None:
    from bench.harness import open_page

    betas = ["0.1", "0.15", "0.2", "0.3", "0.4", "0.6", "0.8", "1.25", "2"]
    for view in ("Beta sweep", "Reward hacking"):
        at = open_page(PAGE, {"view": view})
        new, cached = _timed_runs(at, lambda v, at=at: at.select_slider(key="beta").set_value(v), betas)
        print(f"  page rerun, beta changed, tab {view!r:<17} {new} new values, {cached} cached")
    at = open_page(PAGE, {"view": "DPO"})
    new, cached = _timed_runs(at, lambda v: at.number_input(key="logp_w").set_value(v), [-9.0 - i for i in range(9)])
    print(f"  page rerun, DPO log-prob changed           {new} new values, {cached} cached")
    for view, extra in (
        ("Beta sweep", {}),
        ("Reward hacking", {}),
        ("Theorem check", {"n": "100000"}),
        ("Theorem check", {"n": "100000", "thm": "objective"}),
        ("DPO", {}),
    ):
        at = open_page(PAGE, BIG | {"view": view} | extra)
        sizes = [len(chart.proto.spec.encode()) for chart in at.get("plotly_chart")]
        label = f"{view} {extra.get('thm', '')}".strip()
        print(f"  page figure JSON, K = 10, tab {label!r:<26} bars {sizes[0]:>8,} bytes, view {sizes[1]:>8,} bytes")


if __name__ == "__main__":
    main()
