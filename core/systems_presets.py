"""The estimation problems of seed 002's A10 (and lesson 001's memory examples) as presets with their answers.

Each :class:`Preset` names the page that shows it, the inputs that page sets, the answers the source states (with
the tolerance the source's rounding allows) and a ``compute`` function that derives the same answers from core.
The pages show ``compute()`` beside ``expected``; tests/test_core_systems_presets.py checks that they agree.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from core.hardware import GB, GIB, GPUS
from core.model_spec import (
    DEEPSEEK_V3,
    KIB,
    LLAMA3_70B,
    kv_cache_bytes_per_token,
    param_breakdown,
    param_count,
    simple_param_count,
)
from core.serving import decode_intensity, decode_time_bound, kv_sequences_that_fit, prefill_intensity
from core.training_memory import (
    RECIPES,
    activation_crossover,
    korthikanti_crossover,
    mfu,
    microbatches_for_bubble,
    pipeline_bubble,
    pipeline_bubble_megatron,
    state_memory,
    tokens_per_s_for_mfu,
    training_run,
)

H100 = GPUS["H100"]
N70 = 7.06e10  # the seed's rounded Llama-3-70B count, used in its A10-06, A10-11 and A10-12 arithmetic
# 002 A10-06 rounds the cluster peak 1024 x 989e12 = 1.0127e18 FLOP/s to 1.01e18 before it divides
SEED_CLUSTER_PEAK = 1.01e18
# 002 A10-12: its time rounded to whole days (it speaks of "91 days") and "~$2 per card-hour"
SEED_DAYS, SEED_PRICE = 91, 2.0


@dataclass(frozen=True)
class Preset:
    """One problem: inputs for the page, the answers its source states, and how core derives them."""

    key: str
    title: str
    page: str  # "memory" or "serving"
    source: str
    inputs: dict[str, Any]
    expected: dict[str, tuple[float, float]]  # name -> (stated answer, relative tolerance)
    compute: Callable[[], dict[str, float]] = field(repr=False)
    note: str = ""
    # answers whose number the source lost in extraction: ``expected`` then holds the source's own arithmetic on
    # its own (rounded) inputs, and the page says so instead of "the source states"
    lost: tuple[str, ...] = ()
    # why core's value differs from the stated one by more than the source's last digit (shown on the page)
    why: dict[str, str] = field(default_factory=dict)
    # answers the source does not state: ``expected`` holds a value derived from the named formula or paper, and
    # the page says "derived from ..." instead of "the source states"
    derived: dict[str, str] = field(default_factory=dict)
    # a stated answer as the source writes it, where the default format would add digits it does not claim
    stated_text: dict[str, str] = field(default_factory=dict)
    # what one answer measures, where a reader could take it for another quantity (shown after the answer)
    about: dict[str, str] = field(default_factory=dict)


def _a10_01() -> dict[str, float]:
    D, V, L, F = 8192, 128256, 80, 28672
    return {
        "tie_saving_V128256_D2048": 128256 * 2048,
        "gqa_saving_per_layer": 2 * D * D - 2 * D * 1024,
        "gqa_saving_total": L * (2 * D * D - 2 * D * 1024),
        "mha_count_from_formula": float(simple_param_count(V, D, L, F)),
    }


def _a10_02() -> dict[str, float]:
    b = param_breakdown(LLAMA3_70B)
    per_layer = (b.attention + b.ffn + b.norms - 8192) / 80
    mha = param_count(LLAMA3_70B.replace(n_kv_heads=64))
    return {
        "total": b.total,
        "per_layer": per_layer,
        "ffn_share_of_layer": b.ffn / 80 / per_layer,
        "mha_total": mha,
        "gqa_saving_vs_mha": (mha - b.total) / mha,
        "embedding_share": b.embeddings / b.total,
        "attention_share": b.attention / b.total,
        "ffn_share": b.ffn / b.total,
    }


def _a10_03() -> dict[str, float]:
    return {
        "crossover_002": float(activation_crossover(8192, 64)),
        "crossover_korthikanti": float(korthikanti_crossover(8192, 64)),
    }


def _a10_04() -> dict[str, float]:
    # attention projections of Llama-3-70B per token over D^2: 2 (2 D N H + 2 D K H) / D^2 (4 for MHA)
    D = 8192
    proj = 2 * (2 * D * 64 * 128 + 2 * D * 8 * 128)
    return {"gqa_attention_constant": proj / D**2, "kv_projection_saving": D / (8 * 128)}


def _a10_05() -> dict[str, float]:
    return {"attention_crossover_S": 6 * 8192, "C_7B_2T": 6 * 7e9 * 2e12}


def _a10_06() -> dict[str, float]:
    return {
        "cluster_peak_flops": 1024 * H100.peak_flops,
        "mfu": float(mfu(12_000, N70, 1024, H100.peak_flops)),
        "tokens_per_s_for_40pct": float(tokens_per_s_for_mfu(0.40, N70, 1024, H100.peak_flops)),
        "bubble_p8_m8": float(pipeline_bubble(8, 8)),
        "bubble_megatron_p8_m8": float(pipeline_bubble_megatron(8, 8)),
    }


def _a10_07() -> dict[str, float]:
    gqa = kv_cache_bytes_per_token(LLAMA3_70B)
    mha = kv_cache_bytes_per_token(LLAMA3_70B, mha=True)
    return {
        "gqa_KiB_per_token": gqa / KIB,
        "mha_KiB_per_token": mha / KIB,
        "mqa_KiB_per_token": kv_cache_bytes_per_token(LLAMA3_70B.replace(n_kv_heads=1)) / KIB,
        "gqa_GiB_128k": gqa * 131072 / GIB,
        "mha_GiB_128k": mha * 131072 / GIB,
        "mla_80_layers_KiB": 80 * (512 + 64) * 2 / KIB,
        "deepseek_v3_mla_KiB": kv_cache_bytes_per_token(DEEPSEEK_V3) / KIB,
    }


def _a10_08() -> dict[str, float]:
    at = {c: kv_sequences_that_fit(LLAMA3_70B, c, n_gpus=4, kv_budget_bytes=170 * GIB) for c in (8192, 131072)}
    fp8 = kv_sequences_that_fit(LLAMA3_70B, 8192, n_gpus=4, kv_budget_bytes=170 * GIB, kv_bytes_per_value=1)
    return {
        "weights_GiB": at[8192].weights / GIB,
        "left_GiB": at[8192].left_after_weights / GIB,
        "per_sequence_GiB_8k": at[8192].per_sequence / GIB,
        "sequences_8k": at[8192].sequences,
        "sequences_128k": at[131072].sequences,
        "sequences_8k_fp8_kv": fp8.sequences,
    }


def _a10_09() -> dict[str, float]:
    return {
        **{f"bytes_per_param_{k}": r.total for k, r in RECIPES.items()},
        "states_70B_GB": 16 * 70e9 / GB,
        "cards_of_80GiB_for_70B": 16 * 70e9 / (80 * GIB),
    }


def _a10_10() -> dict[str, float]:
    plain = state_memory(100e9, "standard", zero=0, tp=8, pp=8, dp=8)
    z1 = state_memory(100e9, "standard", zero=1, tp=8, pp=8, dp=8)
    return {
        "total_TB": 100e9 * 16 / 1e12,
        "cluster_TiB": 512 * H100.memory_bytes / 2**40,
        "cluster_TB": 512 * H100.memory_bytes / 1e12,
        "per_card_GiB_before_zero": plain.total / GIB,
        "bytes_per_param_zero1": z1.bytes_per_param,
        "per_card_GiB_zero1": z1.total / GIB,
        "microbatches_for_10pct": microbatches_for_bubble(8, 0.10),
    }


def _a10_11() -> dict[str, float]:
    t = decode_time_bound(LLAMA3_70B, "H100")
    return {
        "ridge_point": H100.ridge_point,
        "decode_intensity_batch1": float(decode_intensity(LLAMA3_70B, 1)),
        "decode_ms_per_token": 1e3 * t,
        "decode_tokens_per_s": 1 / t,
        "prefill_intensity_2048": float(prefill_intensity(LLAMA3_70B, 2048)),
    }


def _a10_12() -> dict[str, float]:
    run = training_run(N70, 15e12, 2048, H100.peak_flops, 0.40, 2.0)
    no_mfu = training_run(N70, 15e12, 2048, H100.peak_flops, 1.0)
    return {
        "flops": run.flops,
        "days": run.days,
        "cost_dollars": run.cost,
        "forgot_mfu_ratio": run.seconds / no_mfu.seconds,
        "compute_for_a_month": run.days / 30,
        "gpus_for_a_month": 2048 * run.days / 30,
    }


def _lesson_32() -> dict[str, float]:
    return {"states_7B_GB": state_memory(7e9).total / GB}


def _example_a() -> dict[str, float]:
    C = 8 * 86400 * 0.4 * H100.peak_flops
    N = (C / 120) ** 0.5
    return {"C": C, "N": N, "states_GB": state_memory(1.5e9).total / GB, "serving_GFLOP_per_token": 2 * 1.5e9 / 1e9}


def _deepseek_moe() -> dict[str, float]:
    b = param_breakdown(DEEPSEEK_V3)
    return {"total": b.total, "active": b.active}


PRESETS: tuple[Preset, ...] = (
    Preset("A10-01", "Parameter count of a decoder-only LM", "memory", "seed 002 A10-01",
           {"model": "Llama-3-70B"},
           {"tie_saving_V128256_D2048": (2.6e8, 0.02), "gqa_saving_per_layer": (1.17e8, 0.01),
            "gqa_saving_total": (9.4e9, 0.01), "mha_count_from_formula": (80e9, 0.01)}, _a10_01,
           stated_text={"tie_saving_V128256_D2048": "2.6×10⁸", "gqa_saving_per_layer": "1.17×10⁸",
                        "gqa_saving_total": "9.4×10⁹", "mha_count_from_formula": "about 80B"},
           about={"mha_count_from_formula": "L(4D² + 3DF + 2D) + 2VD with full multi-head attention and "
                  "Llama-3-70B's own F = 28,672 = 3.5D; with F = 8D/3 the same formula is 12LD² + 2VD (+ 2LD) = "
                  f"{float(simple_param_count(128256, 8192, 80)) / 1e9:.1f}B"}),
    Preset("A10-02", "Is Llama-3-70B really 70B?", "memory", "seed 002 A10-02, A2.10; Llama Team 2024",
           {"model": "Llama-3-70B"},
           {"total": (70.554e9, 0.005), "per_layer": (8.56e8, 0.005), "ffn_share_of_layer": (0.82, 0.01),
            "mha_total": (80e9, 0.01), "gqa_saving_vs_mha": (0.12, 0.05), "embedding_share": (0.03, 0.05),
            "attention_share": (0.17, 0.02), "ffn_share": (0.80, 0.01)}, _a10_02,
           stated_text={"total": "70.6B (in the follow-up's 9.4/70.6); its grand total was lost in extraction",
                        "per_layer": "≈ 8.56×10⁸", "mha_total": "about 80B"}),
    Preset("A10-03", "Activation memory per layer", "memory", "seed 002 A10-03; Korthikanti et al. 2022",
           {"model": "Llama-3-70B", "seq": 4096, "mbs": 1},
           {"crossover_002": (1792, 1e-9), "crossover_korthikanti": (870, 0.001)}, _a10_03,
           "L(14BSD + BNS^2) counts elements; 34sbh + 5as^2b counts bytes per layer",
           derived={"crossover_korthikanti": "Korthikanti et al. 2022's 34sbh + 5as²b: s = 34h/(5a)"},
           stated_text={"crossover_002": "1,792 tokens", "crossover_korthikanti": "870 tokens"},
           about={"crossover_korthikanti": "their 5 = 2 (softmax output) + 1 (dropout mask) + 2 (dropout output) "
                  "assumes a GPT-3 block with attention dropout; Llama-family models train without it, the term "
                  "is 2as²b and the crossover 34h/(2a) = 2,176 tokens here; the 34 assumes a 4h GeLU MLP and only "
                  "happens to land close: counted the same way for Llama-3-70B's SwiGLU block with GQA it is 40.5sbh "
                  "with every MLP intermediate stored, 26.5sbh with a fused SwiGLU that recomputes the SiLU output and "
                  "the product"}),
    Preset("A10-04", "FLOPs in the forward pass", "memory", "seed 002 A10-04",
           {"model": "Llama-3-70B"},
           {"gqa_attention_constant": (4.5, 1e-9), "kv_projection_saving": (8, 1e-9)}, _a10_04,
           "24 B S D^2 + 4 B S^2 D per layer for MHA; 4.5 B S D^2 for the projections under Llama-3-70B's GQA"),
    Preset("A10-05", "Where 6ND comes from", "memory", "seed 002 A10-05; lesson 001 check yourself 1",
           {"model": "Llama-3-70B"},
           {"attention_crossover_S": (49_000, 0.01), "C_7B_2T": (8.4e22, 1e-9)}, _a10_05,
           stated_text={"C_7B_2T": "8.4×10²²"},
           about={"attention_crossover_S": "S = 6D counts the full S² scores (no causal mask); with causal "
                  "masking, which FlashAttention exploits, only half are computed and the crossover is 12D = "
                  "98,304, Kaplan et al. 2020's 12·d_model (lesson 001 §3.2)"}),
    Preset("A10-06", "MFU from measured throughput", "memory", "seed 002 A10-06, A5.4",
           {"n_params": N70, "n_gpus": 1024, "gpu": "H100", "tokens_per_s": 12_000},
           {"cluster_peak_flops": (SEED_CLUSTER_PEAK, 0.005),
            # lost: 6 x 7.06e10 x 12,000 / 1.01e18, the seed's own numbers
            "mfu": (6 * N70 * 12_000 / SEED_CLUSTER_PEAK, 0.005),
            "tokens_per_s_for_40pct": (9.5e5, 0.01), "bubble_p8_m8": (0.47, 0.01),
            "bubble_megatron_p8_m8": (0.875, 1e-9)}, _a10_06,
           "MFU = 6 N x tokens/s / (GPUs x peak) with N = 7.06e10",
           lost=("mfu",),
           stated_text={"cluster_peak_flops": "1.01×10¹⁸", "tokens_per_s_for_40pct": "9.5×10⁵ (about 950,000)"},
           about={"bubble_megatron_p8_m8": "(p − 1)/m = bubble time ÷ ideal compute time (Narayanan et al. 2021); "
                  "as a share of wall-clock the same pipeline idles (p − 1)/(m + p − 1) = 46.7%, the readout before "
                  "this one: two conventions, do not mix them",
                  "mfu": "This MFU (the seed's convention) counts 6N FLOPs per token and leaves out attention's "
                  "FLOPs; PaLM's definition "
                  "(Chowdhery et al. 2022, App. B) adds them"},
           why={"mfu": "the seed's rounded 1.01e18 cluster peak gives "
                f"{100 * 6 * N70 * 12_000 / SEED_CLUSTER_PEAK:.3f}%; the unrounded "
                f"{1024 * H100.peak_flops / 1e18:.4f}e18 gives "
                f"{100 * 6 * N70 * 12_000 / (1024 * H100.peak_flops):.3f}%",
                "tokens_per_s_for_40pct": "the seed rounds the cluster peak to 1.01e18 before dividing and gets "
                f"{0.40 * SEED_CLUSTER_PEAK / (6 * N70):,.0f} (9.5e5); with the unrounded "
                f"{1024 * H100.peak_flops / 1e18:.4f}e18 it is "
                f"{float(tokens_per_s_for_mfu(0.40, N70, 1024, H100.peak_flops)):,.0f}"
                " (9.6e5 to two figures)"}),
    Preset("A10-07", "KV cache bytes per token", "serving", "seed 002 A10-07, A8.3; DeepSeek-AI 2024",
           {"model": "Llama-3-70B", "kv_format": "bf16"},
           {"gqa_KiB_per_token": (320, 1e-9), "mha_KiB_per_token": (2560, 1e-9), "mqa_KiB_per_token": (40, 1e-9),
            "gqa_GiB_128k": (40, 1e-9), "mha_GiB_128k": (320, 1e-9), "mla_80_layers_KiB": (90, 1e-9),
            "deepseek_v3_mla_KiB": (68.6, 0.001)}, _a10_07,
           about={"mla_80_layers_KiB": "an 80-layer model with DeepSeek-V2's MLA dimensions (512 + 64 values per "
                  "layer); DeepSeek-V2 itself has 60 layers, 67.5 KiB"}),
    Preset("A10-08", "How many sequences fit on one node?", "serving", "seed 002 A10-08",
           {"model": "Llama-3-70B", "gpu": "H100", "n_gpus": 4, "kv_budget_GiB": 170, "contexts": (8192, 131072)},
           {"weights_GiB": (131, 0.005), "left_GiB": (189, 0.005), "per_sequence_GiB_8k": (2.5, 1e-9),
            "sequences_8k": (68, 0), "sequences_128k": (4, 0), "sequences_8k_fp8_kv": (136, 0)}, _a10_08,
           "fp8 KV doubles the count (A10-08 follow-up)"),
    Preset("A10-09", "Where 16 bytes per parameter come from", "memory", "seed 002 A10-09, A5.1",
           {"n_params": 70e9, "recipe": "standard"},
           {"bytes_per_param_standard": (16, 0), "bytes_per_param_fp32_grads": (18, 0),
            "bytes_per_param_adam8bit": (10, 0), "bytes_per_param_pure_bf16": (8, 0),
            "states_70B_GB": (1120, 1e-9), "cards_of_80GiB_for_70B": (13, 0.01)}, _a10_09),
    Preset("A10-10", "Sharding a 100B training run", "memory", "seed 002 A10-10",
           {"n_params": 100e9, "gpu": "H100", "n_gpus": 512, "tp": 8, "pp": 8, "dp": 8, "zero": 1},
           {"total_TB": (1.6, 1e-9), "cluster_TiB": (40, 1e-9), "cluster_TB": (44, 0.01),
            "per_card_GiB_before_zero": (23, 0.02), "bytes_per_param_zero1": (5.5, 1e-9),
            "per_card_GiB_zero1": (8.0, 0.005), "microbatches_for_10pct": (63, 0)}, _a10_10),
    Preset("A10-11", "Arithmetic intensity of prefill vs decode", "serving", "seed 002 A10-11, A8.1",
           {"model": "Llama-3-70B", "gpu": "H100", "batch": 1, "prompt": 2048},
           {"ridge_point": (295, 0.001), "decode_intensity_batch1": (1, 0.02), "decode_ms_per_token": (42, 0.005),
            "decode_tokens_per_s": (24, 0.02), "prefill_intensity_2048": (2048, 0.01)}, _a10_11,
           "the 42 ms is all 141 GB read at one H100's bandwidth (002 A8.1 calls it a reference point: the weights "
           "do not fit on one card); the serving preset spreads them over 4 GPUs, a quarter of it each",
           why={"decode_intensity_batch1": f"{_a10_11()['decode_intensity_batch1']:.3f} at context 0: core charges "
                "the whole input embedding (V × D = 1.05B weights, 1.5% of the bytes) to the step although a lookup "
                "reads one row of it, and writes the new token's K and V; without the table it is 1.0. The live "
                "readout \"Decode intensity, batch 1\" is at the page's context, which adds attention FLOPs and KV "
                "bytes"}),
    Preset("A10-12", "Training time and cost", "memory", "seed 002 A10-12",
           {"n_params": N70, "tokens": 15e12, "gpu": "H100", "n_gpus": 2048, "mfu": 0.40, "price": SEED_PRICE},
           {"flops": (6 * N70 * 15e12, 1e-9), "days": (SEED_DAYS, 0.005),
            # lost: 2,048 cards x 91 days x 24 h x $2, the seed's own numbers
            "cost_dollars": (2048 * SEED_DAYS * 24 * SEED_PRICE, 0.005),
            "forgot_mfu_ratio": (2.5, 1e-9), "compute_for_a_month": (3, 0.02), "gpus_for_a_month": (6000, 0.05)},
           _a10_12,
           "time = 6ND / (GPUs x 989e12 x MFU) with N = 7.06e10; a month needs 3x the compute, roughly 6,000 cards",
           lost=("flops", "cost_dollars"),
           why={"cost_dollars": f"the seed's {SEED_DAYS} days are rounded up from {_a10_12()['days']:.2f}; unrounded "
                f"the cost is ${_a10_12()['cost_dollars']:,.0f}, $8.9M either way"}),
    Preset("001-3.2", "A 7B model's training states", "memory", "lesson 001 section 3.2",
           {"n_params": 7e9, "recipe": "standard"}, {"states_7B_GB": (112, 1e-9)}, _lesson_32),
    Preset("001-A", "Worked example A: plan a small run", "memory", "lesson 001 section 4 A",
           {"gpu": "H100", "n_gpus": 8, "hours": 24, "mfu": 0.40, "n_params": 1.5e9},
           {"C": (2.73e20, 0.002), "N": (1.5e9, 0.02), "states_GB": (24, 1e-9),
            "serving_GFLOP_per_token": (3.0, 1e-9)}, _example_a,
           stated_text={"C": "2.73×10²⁰", "N": "1.5×10⁹"}),
    Preset("A2.8-MoE", "MoE: memory by total, FLOPs by active", "serving", "seed 002 A2.8; DeepSeek-AI 2024",
           {"model": "DeepSeek-V3"}, {"total": (671e9, 0.02), "active": (37e9, 0.02)}, _deepseek_moe,
           "main model without the MTP module, which is 11.6B of its own weights from the config (DeepSeek's "
           "README_WEIGHTS lists 11.5B) and 13.5B with its copies of the embedding and output head (2 × 0.93B), "
           "about the model card's 14B (671B + 14B = the 685B checkpoint)",
           stated_text={"total": "671B", "active": "37B"},
           why={"active": "37.55B from the config: attention, the 3 dense MLPs, the shared + 8 routed experts, the "
                "routers, the embedding and the output head; 36.63B without the input embedding (0.93B, of which a "
                "token reads one row). The report says 37B. DeepSeek's README_WEIGHTS gives 36.7B 'including 0.9B "
                "for Embedding and 0.9B for the output Head', which the config does not reproduce: with both it "
                "counts 37.55B (0.85B more), with the head alone 36.63B (0.07B less)"}),
)  # fmt: skip

PRESETS_BY_KEY: dict[str, Preset] = {p.key: p for p in PRESETS}


def preset_errors(preset: Preset) -> dict[str, float]:
    """Relative error of each computed answer against the stated one (0 where both are 0)."""
    got = preset.compute()
    return {k: abs(got[k] - v) / abs(v) if v else abs(got[k]) for k, (v, _) in preset.expected.items()}


__all__ = ["PRESETS", "PRESETS_BY_KEY", "Preset", "preset_errors"]
