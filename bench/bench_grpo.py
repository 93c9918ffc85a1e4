"""Benchmark of core.grpo: advantages of 100,000 groups of 64 in one call, and the size of the page's figures.

Run: python bench/bench_grpo.py [--repeats N]. Prints medians of N timed runs (after one warm-up run) for numpy
float64, numpy float32, and torch on core's device (LESSON_DEVICE picks it), plus the figure JSON sizes for the
largest group the page offers (G = 64).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

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


def median_ms(fn: Callable[[], object], repeats: int, sync: Callable[[], None] = lambda: None) -> float:
    """Median wall time of ``fn`` in milliseconds over ``repeats`` runs, after one warm-up run."""
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=7)
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
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    print(f"torch {torch.__version__} on {dev} ({torch.get_num_threads()} CPU threads)")
    for dtype in (torch.float64, torch.float32):
        if dev.type == "mps" and dtype == torch.float64:
            continue
        t = as_tensor(R, dtype=dtype)
        ms = median_ms(lambda t=t: grpo_advantages(t, "population", 1e-4), args.repeats, sync)
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


if __name__ == "__main__":
    main()
