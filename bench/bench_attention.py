"""Benchmark of the attention page's core and figures (a script, not a test).

Prints medians of several runs (time.perf_counter): the page's rerun at 64 tokens x 8 heads, the figure JSON sizes
at 512 tokens, and core attention for 4,096 tokens x 32 heads x d_k 128 (float32) against torch's fused kernel.

    /work/main/.venv/bin/python bench/bench_attention.py [--quick] [--page] [--repeats N] [--threads N]

On a loaded machine small tensors run faster with --threads 1 (no thread oversubscription).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch
import torch.nn.functional as F

from bench._timing import median_seconds
from core import attention, tokenizer, toy_attention
from core.device import device_summary, get_device
from viz import format as fmt
from viz.attention import attention_figure, attention_mask_figure, attention_outputs_figure, attention_scale_figure


def page_rerun(
    tokens: tuple[str, ...], settings: toy_attention.ToyModelSettings, stats: attention.LogitStatistics | None = None
) -> int:
    """What the page does on one rerun: core for every panel, then every figure; returns total JSON bytes.

    stats: the d_k statistics when the page has them cached (they depend only on T, d_model and temperature).
    """
    res = toy_attention.toy_attention(tokens, settings, scale="sqrt_dk", causal=True)
    qkv = toy_attention.toy_qkv(tokens, settings)
    cmp = attention.mask_comparison(qkv.q[0], qkv.k[0])
    check = toy_attention.causality_check(tokens, settings)
    stats = stats or attention.logit_statistics(tokens=len(tokens), d_model=settings.d_model)
    figs = [
        attention_figure(res.weights, res.tokens, res.head_names),
        attention_mask_figure(cmp.correct, cmp.buggy, tokens, cmp.correct_row_sums, cmp.buggy_row_sums),
        attention_scale_figure(stats.d_k, stats.variance, stats.entropy, stats.max_entropy, current_d_k=settings.d_k),
        attention_outputs_figure(res.outputs, res.tokens, res.head_names),
    ]
    assert check.max_change_before_causal == 0.0
    return sum(len(f.to_json()) for f in figs)


PAGE = "pages/6_Attention.py"


def page_rerun_ms(view: str = "Heads", repeats: int = 9) -> tuple[float, float]:
    """Median AppTest rerun (ms) of the page at 64 random tokens x 8 heads after a seed change, with new values
    (core + figure built) and with values seen before (the page's caches hit), for the tab ``view``."""
    from bench.harness import open_page

    at = open_page(PAGE, {"src": "random", "n": "64", "h": "8", "kv": "8", "dm": "256", "view": view})
    times = []
    for seed in list(range(1, repeats + 1)) * 2:  # the second pass revisits the same seeds
        at.number_input(key="layer_seed").set_value(float(seed))
        start = time.perf_counter()
        at.run()
        times.append((time.perf_counter() - start) * 1e3)
    assert not at.exception, at.exception
    return statistics.median(times[:repeats]), statistics.median(times[repeats:])


def page_json_sizes() -> dict[str, int]:
    """Bytes of each figure the page sends at 512 random tokens x 32 heads (the largest the page allows)."""
    from bench.harness import open_page

    sizes = {}
    for view in ("Heads", "Outputs", "Mask", "Scale", "KV cache"):
        at = open_page(PAGE, {"src": "random", "n": "512", "h": "32", "kv": "8", "dm": "1024", "view": view})
        assert not at.exception, at.exception
        sizes[view] = sum(len(chart.proto.spec) for chart in at.get("plotly_chart"))
    return sizes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="skip the 4,096-token attention")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=0, help="torch threads (0: torch's default)")
    parser.add_argument("--page", action="store_true", help="also time the page in AppTest (rerun, JSON sizes)")
    args = parser.parse_args()
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.zeros(1)  # import torch fully so the device line is the real one
    print(f"device: {device_summary()}")
    r = args.repeats

    # 1. the rerun at 64 tokens x 8 heads (the budget: <= 100 ms)
    tokens64 = tokenizer.random_tokens(64, seed=0).tokens
    s8 = toy_attention.ToyModelSettings(d_model=256, heads=8, d_k=32)
    print("\n64 tokens x 8 heads (d_model 256, d_k 32), medians:")
    t_core = median_seconds(lambda: toy_attention.toy_attention(tokens64, s8), r)
    print(f"  toy_attention (8 heads + 3 designed)       {t_core * 1e3:8.1f} ms")
    t_stats = median_seconds(lambda: attention.logit_statistics(tokens=64, d_model=256), r)
    print(f"  logit_statistics (11 d_k values)           {t_stats * 1e3:8.1f} ms")
    res = toy_attention.toy_attention(tokens64, s8)
    t_fig = median_seconds(lambda: attention_figure(res.weights, res.tokens, res.head_names).to_json(), r)
    print(f"  attention_figure + to_json                 {t_fig * 1e3:8.1f} ms")
    t_page = median_seconds(lambda: page_rerun(tokens64, s8), r)
    print(f"  whole rerun (4 panels, core + figures)     {t_page * 1e3:8.1f} ms   JSON {page_rerun(tokens64, s8):,} B")
    cached = attention.logit_statistics(tokens=64, d_model=256)
    t_cached = median_seconds(lambda: page_rerun(tokens64, s8, cached), r)
    print(f"  whole rerun, d_k statistics cached         {t_cached * 1e3:8.1f} ms")

    # 2. figure JSON size at 512 tokens (the budget: <= 1 MB)
    print("\nFigure JSON at 512 tokens:")
    tokens512 = tokenizer.random_tokens(512, seed=0).tokens
    for heads, d_model in ((8, 256), (32, 512)):
        s = toy_attention.ToyModelSettings(d_model=d_model, heads=heads, d_k=d_model // heads)
        res = toy_attention.toy_attention(tokens512, s)
        fig = attention_figure(res.weights, res.tokens, res.head_names)
        t = median_seconds(lambda res=res: attention_figure(res.weights, res.tokens, res.head_names).to_json(), r)
        print(f"  attention_figure, {heads} + 3 heads: {len(fig.to_json()):>9,} B   (build + to_json {t * 1e3:.0f} ms)")
    qkv = toy_attention.toy_qkv(tokens512, toy_attention.ToyModelSettings())
    cmp = attention.mask_comparison(qkv.q[0], qkv.k[0])
    fig = attention_mask_figure(cmp.correct, cmp.buggy, tokens512)
    print(f"  attention_mask_figure:          {len(fig.to_json()):>9,} B")
    res = toy_attention.toy_attention(tokens512, toy_attention.ToyModelSettings(d_model=256, heads=8, d_k=32))
    fig = attention_outputs_figure(res.outputs, res.tokens, res.head_names)
    print(f"  attention_outputs_figure:       {len(fig.to_json()):>9,} B")
    t512 = median_seconds(
        lambda: toy_attention.toy_attention(tokens512, toy_attention.ToyModelSettings(d_model=256, heads=8, d_k=32)), r
    )
    print(f"  toy_attention at 512 tokens:    {t512 * 1e3:9.1f} ms")

    if args.page:
        print("\nThe page in AppTest (64 random tokens x 8 heads, d_model 256), medians after a seed change:")
        for view in ("Heads", "Mask", "Scale", "KV cache"):
            new, seen = page_rerun_ms(view)
            print(f"  {view:9} tab: new values {new:6.0f} ms   values seen before (cached) {seen:5.0f} ms")
        print("Figure JSON the page sends at 512 tokens x 32 heads (+3 designed), per tab:")
        for view, size in page_json_sizes().items():
            print(f"  {view:9} {size:>10,} B")

    if args.quick:
        return
    # 3. core attention for 4,096 tokens x 32 heads x d_k 128, float32
    T, H, d = 4096, 32, 128
    gen = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(1, H, T, d, generator=gen).to(get_device()) for _ in range(3))
    print(f"\nAttention, 1 x {H} heads x {T:,} tokens x d_k {d}, float32 ({get_device()}), median of {min(r, 3)}:")
    for causal in (False, True):
        ours = median_seconds(lambda causal=causal: attention.attention(q, k, v, causal=causal), min(r, 3))
        ref = median_seconds(lambda causal=causal: F.scaled_dot_product_attention(q, k, v, is_causal=causal), min(r, 3))
        diff = attention.attention(q, k, v, causal=causal) - F.scaled_dot_product_attention(q, k, v, is_causal=causal)
        print(
            f"  causal={causal!s:5}  core.attention {ours:7.3f} s   torch SDPA {ref:7.3f} s   "
            f"max |diff| {diff.abs().max().item():.1e}"
        )
    score_bytes = H * T * T * 4
    print(f"  (the full score matrix would be {fmt.binary_bytes(score_bytes)}; core processes it in query blocks of")
    print(f"   at most {fmt.binary_bytes(attention.SCORE_BUDGET_BYTES)})")


if __name__ == "__main__":
    main()
