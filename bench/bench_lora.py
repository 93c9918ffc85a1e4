"""Benchmark of the LoRA page's core and figures (a script, not a test).

Prints medians of several runs (time.perf_counter):

* the SVD (torch.linalg.svd on core's device) for d = k = 256 ... 4096, float64 and float32, and the time to
  generate the target;
* what a rerun costs once the SVD is cached: every r's errors (rank_curves), the slider frames, the two figures and
  their JSON; the figure JSON sizes at d = 1024 (16 slider steps, 64 x 64 frames);
* the initialisation demo (three inits, default TrainConfig) and the memory calculator;
* the page in AppTest: median rerun after changing r (>= 7 runs) in each view, and the figure JSON it sends.

    /work/main/.venv/bin/python bench/bench_lora.py [--quick] [--max-d 4096] [--repeats N] [--threads N] [--no-page]

On a loaded machine the small training runs faster with --threads 1 (no thread oversubscription).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch

from bench._timing import figure_json_kb, median_seconds, rerun_ms
from core import lora, lora_layer, lora_memory
from core.device import device_summary, get_device
from viz.lora import lora_curves_figure, lora_heatmaps_figure, lora_training_figure


def bench_svd(sizes: list[int], repeats: int) -> None:
    print("\nSVD of a d x d target (torch.linalg.svd, thin), median seconds")
    print(f"{'d':>6} {'runs':>5} {'target':>9} {'svd f64':>9} {'svd f32':>9}")
    for d in sizes:
        runs = repeats if d <= 1024 else max(1, min(repeats, 3 if d <= 2048 else 1))
        warm = 1 if d <= 2048 else 0
        t_target = median_seconds(lambda d=d: lora.make_target(d, d, "power_law", 0), runs, warmup=0)
        dw = lora.make_target(d, d, "power_law", 0)
        t64 = median_seconds(lambda dw=dw: lora.svd(dw, dtype=torch.float64), runs, warmup=warm)
        t32 = median_seconds(lambda dw=dw: lora.svd(dw, dtype=torch.float32), runs, warmup=warm)
        print(f"{d:>6} {runs:>5} {t_target:>9.3f} {t64:>9.3f} {t32:>9.3f}", flush=True)


def bench_rerun(d: int, repeats: int) -> None:
    dw = lora.make_target(d, d, "exponential", 0)
    s = lora.svd(dw)
    ranks = lora.slider_ranks(s.m, 16, include=[8])
    curves = lora.rank_curves(s)
    frames = lora.display_frames(s, ranks)
    print(f"\nA rerun with the SVD cached, d = k = {d} ({len(ranks)} slider steps, 64 x 64 frames), median ms")
    t_curves = median_seconds(lambda: lora.rank_curves(s), repeats)
    t_readout = median_seconds(lambda: curves.readout(37), repeats)
    t_frames = median_seconds(lambda: lora.display_frames(s, ranks), repeats)
    t_heat = median_seconds(lambda: lora_heatmaps_figure(frames, curves, 8).to_json(), repeats)
    t_curvefig = median_seconds(lambda: lora_curves_figure(curves, 8).to_json(), repeats)
    for name, t in (
        ("rank_curves (every r at once)", t_curves),
        ("readout(r)", t_readout),
        ("display_frames (all slider frames)", t_frames),
        ("heatmap figure + to_json", t_heat),
        ("curves figure + to_json", t_curvefig),
    ):
        print(f"  {name:<40} {1e3 * t:9.2f}")
    total = t_curves + t_frames + t_heat + t_curvefig
    print(f"  {'everything but the SVD':<40} {1e3 * total:9.2f}  (target <= 100 ms)")
    heat = len(lora_heatmaps_figure(frames, curves, 8).to_json())
    curvefig = len(lora_curves_figure(curves, 8, slider_ranks=ranks).to_json())
    print(f"  figure JSON: heatmaps {heat:,} B (budget 1,000,000), curves with slider {curvefig:,} B")


def bench_training(repeats: int) -> None:
    cfg = lora_layer.TrainConfig()
    print(f"\nInitialisation demo: {cfg.d}x{cfg.k}, r={cfg.r}, {cfg.steps} steps, Adam, three inits, median s")
    t = median_seconds(lambda: lora_layer.train_all_inits(cfg), max(1, repeats // 2))
    res = lora_layer.train_all_inits(cfg)
    print(f"  train_all_inits {t:.3f} s; training figure JSON {len(lora_training_figure(res).to_json()):,} B")
    t_mem = median_seconds(lambda: lora_memory.lora_memory(**lora_memory.PRESET_F), repeats)
    print(f"  lora_memory (worked example F) {1e6 * t_mem:.1f} us")


def page_reruns(repeats: int) -> None:
    """The page in AppTest: median of ``at.run()`` after changing a control (a new value each run, so the figure
    cache does not answer; the SVD cache does, as it does for a user moving r), and the figure JSON sent."""
    import logging

    from bench.harness import open_page

    logging.getLogger("streamlit").setLevel(logging.ERROR)
    cases = (
        ("rank view 64 x 64, r changed", {}, "r", [float(1 + i) for i in range(repeats + 1)]),
        (
            "rank view 1024 x 1024, r changed",
            {"d": "1024", "k": "1024"},
            "r",
            [float(9 + i) for i in range(repeats + 1)],
        ),
        (
            "cost view (Llama-2-7B), r changed",
            {"view": "What LoRA costs"},
            "r",
            [float(2 + i) for i in range(repeats + 1)],
        ),
        (
            "init traps (3 fits, uncached), r changed",
            {"view": "Initialisation traps"},
            "r",
            [float(1 + i % 16) for i in range(repeats + 1)],
        ),
    )
    print(f"\npage rerun in AppTest after a control change (target <= 100 ms), median of {repeats}; figure JSON sent:")
    for name, query, key, values in cases:
        at = open_page("pages/3_LoRA.py", query)
        ms = rerun_ms(at, key, values)
        size = figure_json_kb(at) * 1000
        print(f"  {name:42s}: {ms:7.1f} ms, figure JSON {size / 1000:7.1f} KB", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="sizes up to 1024 and 3 repeats")
    parser.add_argument("--max-d", type=int, default=4096, help="largest d of the SVD table")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=None, help="torch.set_num_threads")
    parser.add_argument("--no-page", action="store_true", help="skip the AppTest page reruns")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    repeats = 3 if args.quick else args.repeats
    max_d = min(args.max_d, 1024) if args.quick else args.max_d
    get_device()
    print(f"device: {device_summary()}")
    bench_svd([d for d in (256, 512, 1024, 2048, 4096) if d <= max_d], repeats)
    bench_rerun(1024, repeats)
    bench_training(repeats)
    if not args.no_page:
        page_reruns(max(7, repeats))


if __name__ == "__main__":
    main()
