"""The systems pages' and cards' corrected claims (review content-review-systems.md, issue 28), each number checked
against a computation written out here from the published configs and papers, never through core.

W1 card systems-05 (tensor parallelism lowers batch-1 decode), W2 the A10-01 note, W3 the MoE decode readout that
read only the active weights but said "all the weights", W4 KV capacity under tensor parallelism (MLA's latent and
KV heads fewer than the GPUs are replicated, not split); DeepSeek-V3's router preset drops no tokens; a draft with
another vocabulary is refused; the attention page's "80 GB" line at 80 GiB.
"""

from __future__ import annotations

import math
from fractions import Fraction
from pathlib import Path

import pytest

from core import kv_cache, serving
from core.model_spec import CATALOGUE
from pages.views import Options
from pages.views import serving as serving_view
from pages.views import training_memory as memory_view
from study.cards import load_cards

ROOT = Path(__file__).resolve().parents[1]
GIB = 2**30

# ---- published configs, written out (config.json on the Hugging Face hub)
# Llama-3-70B: layers, hidden, query heads, KV heads, head dim, intermediate, vocabulary (untied)
L70, D70, NQ70, K70, H70, F70, V70 = 80, 8192, 64, 8, 128, 28672, 128256
N70 = L70 * (2 * D70 * D70 + 2 * D70 * K70 * H70 + 3 * D70 * F70 + 2 * D70) + 2 * V70 * D70 + D70
# DeepSeek-V3: 61 layers (3 dense, 58 MoE), hidden 7168, 128 heads, MLA ranks q 1536 / kv 512, RoPE dim 64,
# non-RoPE and value head dims 128, dense FFN 18432, 256 routed experts of 2048 (top 8) + 1 shared, vocab 129280
DS = {
    "L": 61, "dense": 3, "D": 7168, "heads": 128, "q_rank": 1536, "kv_rank": 512, "rope": 64, "nope": 128, "v": 128,
    "F": 18432, "E": 256, "k": 8, "shared": 1, "d_e": 2048, "V": 129280,
}  # fmt: skip
H200_BYTES, H200_BW = 141 * GIB, 4.8e12  # "141 GB" read as GiB (the seeds' convention); HBM3e bandwidth
H100_BYTES, H100_BW = 80 * GIB, 3.35e12


def _ds_attention() -> int:
    d = DS
    q = d["D"] * d["q_rank"] + d["q_rank"] * d["heads"] * (d["nope"] + d["rope"])
    kv = d["D"] * (d["kv_rank"] + d["rope"]) + d["kv_rank"] * d["heads"] * (d["nope"] + d["v"])
    return q + kv + d["heads"] * d["v"] * d["D"]


def _ds_counts() -> dict[str, int]:
    """Total, active and MTP parameters of DeepSeek-V3 from its config (MLA, DeepSeekMoE, one MTP module)."""
    d = DS
    D, moe = d["D"], d["L"] - d["dense"]
    norms = 2 * D + d["q_rank"] + d["kv_rank"]
    expert = 3 * D * d["d_e"]
    router = D * d["E"] + d["E"]  # gate and the balancing bias
    dense_ffn = 3 * D * d["F"]
    common = d["L"] * (_ds_attention() + norms) + d["dense"] * dense_ffn + moe * router + 2 * d["V"] * D + D
    total = common + moe * (d["E"] + d["shared"]) * expert
    active = common + moe * (d["k"] + d["shared"]) * expert
    block = _ds_attention() + norms + (d["E"] + d["shared"]) * expert + router
    mtp = 2 * D + 2 * D * D + block + D  # two input norms, the 2D -> D projection, one block, a final norm
    return {"total": total, "active": active, "embedding": d["V"] * D, "mtp": mtp}


def _readouts(preset: str) -> dict[str, tuple[str, str]]:
    spec = serving_view.SPEC
    name = next(k for k in spec.presets if k.startswith(preset + ":"))
    view = serving_view.figures(spec.state(spec.presets[name]), Options(parts=frozenset()))
    return {r.label: (r.value, r.help or "") for r in view.readouts}


def _memory_readouts(preset: str) -> dict[str, tuple[str, str]]:
    spec = memory_view.SPEC
    name = next(k for k in spec.presets if k.startswith(preset + ":"))
    view = memory_view.figures(spec.state(spec.presets[name]), Options(parts=frozenset()))
    return {r.label: (r.value, r.help or "") for r in view.readouts}


# ---------------------------------------------------------------------------------------------------- W4


def _sequences(memory: float, gpus: int, weights: float, per_seq: float, kv_heads: int) -> int:
    """Per GPU: its ``memory`` less 1/t of the weights, over the cache it holds per sequence. A GPU of t holds
    ceil(K/t) of the K KV heads (MLA: K = 1, the latent is shared by every head)."""
    per_gpu_cache = per_seq * Fraction(math.ceil(kv_heads / gpus), kv_heads)
    return math.floor((Fraction(memory) - Fraction(weights) / gpus) / per_gpu_cache)


def test_w4_mla_latent_cache_is_held_whole_by_every_tensor_parallel_gpu():
    # DeepSeek-V3 in fp8 on 8 H200s, 8k-token sequences: 61 layers x (512 + 64) bf16 values per token
    weights = _ds_counts()["total"]  # 1 byte each
    per_seq = 8192 * DS["L"] * (DS["kv_rank"] + DS["rope"]) * 2
    expected = _sequences(H200_BYTES, 8, weights, per_seq, kv_heads=1)
    assert expected == 117  # not 938: (141 GiB - 624.9/8 GiB) / 0.536 GiB
    cap = serving.kv_sequences_that_fit(CATALOGUE["DeepSeek-V3"], 8192, gpu="H200", n_gpus=8, weight_format="fp8")
    assert cap.sequences == expected
    r = _readouts("A2.8-MoE")
    value, help_text = r["Sequences of 8,192 tokens that fit"]
    assert value == str(expected)
    assert "every GPU holds all of it" in help_text and "held 8 times" in help_text


@pytest.mark.parametrize(("gpus", "copies"), [(4, 1), (8, 1), (16, 2), (32, 4)])
def test_w4_gqa_kv_heads_are_replicated_once_tensor_parallelism_exceeds_them(gpus, copies):
    per_seq = 8192 * 2 * L70 * K70 * H70 * 2  # 2.5 GiB in bf16
    expected = _sequences(H100_BYTES, gpus, 2 * N70, per_seq, kv_heads=K70)
    # the same count from the totals: (t x 80 GiB - weights) / (per sequence x copies)
    assert expected == math.floor((gpus * H100_BYTES - 2 * N70) / (per_seq * copies))
    cap = serving.kv_sequences_that_fit(CATALOGUE["Llama-3-70B"], 8192, gpu="H100", n_gpus=gpus)
    assert cap.sequences == expected
    if gpus == 16:
        assert expected == 229  # not 459


def test_w4_a10_08_is_unchanged_at_tp_4():
    # 170 GiB over 4 GPUs / 2.5 GiB: tensor parallelism 4 divides the 8 KV heads, nothing is replicated
    assert _readouts("A10-08")["Sequences of 8,192 tokens that fit"][0] == str(170 * GIB // (8192 * 327680))


# ---------------------------------------------------------------------------------------------------- W3


def test_w3_moe_batch1_decode_reads_the_active_weights_and_says_so():
    c = _ds_counts()
    r = _readouts("A2.8-MoE")
    one_value, one_help = r["Decode, batch 1, one GPU's bandwidth"]
    # fp8: one byte per active weight, at one H200's 4.8 TB/s, then over 8
    assert one_value == f"{1e3 * c['active'] / H200_BW:,.1f} ms/token" == "7.8 ms/token"
    assert f"the {c['active'] / 1e9:.1f} GB one token reads" in one_help
    assert f"not all {c['total'] / 1e9:,.0f} GB" in one_help
    assert "all the weights read" not in one_help
    assert r["Decode, batch 1"][0] == f"{1e3 * c['active'] / (8 * H200_BW):,.1f} ms/token"
    # all 671 GB at one H200's bandwidth would be 140 ms: the readout is not that
    assert f"{1e3 * c['total'] / H200_BW:.0f}" == "140"


def test_a2_8_preset_explains_its_active_count_and_the_mtp_module():
    c = _ds_counts()
    r = _readouts("A2.8-MoE")
    _, help_active = r["A2.8-MoE · active"]
    assert f"input embedding ({c['embedding'] / 1e9:.2f}B)" in help_active
    assert f"the count is {(c['active'] - c['embedding']) / 1e9:.1f}B" in help_active
    assert f"{c['mtp'] / 1e9:.1f}B of its own weights" in help_active
    assert f"{(c['mtp'] + 2 * c['embedding']) / 1e9:.1f}B with its copies" in help_active
    assert f"(2 × {c['embedding'] / 1e9:.2f}B)" in help_active
    assert f"{(c['total'] + c['mtp'] + 2 * c['embedding']) / 1e9:.0f}" == "684"  # the checkpoint's 685B, rounded up


# ------------------------------------------------------------------------------------------ W2 and the A10 notes


def test_w2_a10_01_note_describes_the_formula_of_its_number():
    r = _memory_readouts("A10-01")
    value, help_text = r["A10-01 · mha count from formula"]
    L, D, V, F = L70, D70, V70, F70
    mha = L * (4 * D * D + 3 * D * F + 2 * D) + 2 * V * D
    assert value == f"{mha / 1e9:.2f}B" == "79.95B"
    assert "F = 28,672 = 3.5D" in help_text and F == Fraction(7, 2) * D
    with_8d3 = 12 * L * D * D + 2 * V * D + 2 * L * D
    assert f"= {with_8d3 / 1e9:.1f}B" in help_text
    assert "Note: 12 L D^2 + 2 V D with F = 8D/3" not in help_text
    # the seed's 1.17e8 is shown as the seed writes it, without a digit it does not claim
    assert "the source states 1.17×10⁸" in r["A10-01 · gqa saving per layer"][1]


def test_a10_notes_name_what_their_numbers_measure():
    bubble = _memory_readouts("A10-06")["A10-06 · bubble megatron p8 m8"][1]
    assert f"(p − 1)/(m + p − 1) = {100 * 7 / 15:.1f}%" in bubble and "Narayanan et al. 2021" in bubble
    cross = _memory_readouts("A10-03")["A10-03 · crossover korthikanti"][1]
    assert "derived from Korthikanti" in cross and "the source states" not in cross
    assert f"34h/(2a) = {34 * 8192 // (2 * 64):,}" in cross
    attn = _memory_readouts("A10-05")["A10-05 · attention crossover S"][1]
    assert f"12D = {12 * 8192:,}" in attn
    mla = _readouts("A10-07")["A10-07 · mla 80 layers KiB"][1]
    assert f"60 layers, {60 * (512 + 64) * 2 / 1024:.1f} KiB" in mla
    decode = _readouts("A10-11")["A10-11 · decode intensity batch1"][1]
    assert f"V × D = {V70 * D70 / 1e9:.2f}B weights, {100 * V70 * D70 / N70:.1f}% of the bytes" in decode


# ---------------------------------------------------------------------------------------------------- W1


def test_w1_card_systems_05_says_tensor_parallelism_lowers_the_batch1_floor():
    cards, _ = load_cards(ROOT / "cards")
    card = next(c for c in cards if c.id == "systems-05")
    text = card.text
    assert "Believing more GPUs raise batch-1 decode speed." not in card.traps
    assert "tensor parallelism" in text.lower()
    one = 2 * N70 / H100_BW  # bf16 weights at one H100's bandwidth
    assert f"about {1e3 * one:.0f} ms per token, {1 / one:.0f} tokens/s" in card.answer.number
    assert f"about {1e3 * one / 4:.1f} ms" in card.answer.number  # over 4 GPUs


# ---------------------------------------------------------------------------------------------------- real mechanisms


def test_deepseek_v3_router_preset_drops_no_tokens():
    value, help_text = _readouts("A2.8-MoE")["Router: tokens that lost an expert"]
    assert value == "0 of 256"
    assert "DeepSeek-V3 itself drops no tokens" in help_text and "DeepSeek-AI 2024 §2.1.2" in help_text
    # with a capacity of T slots per expert nothing can drop: a token picks an expert at most once
    logits = serving.toy_router_logits(256, 256, 1.0)
    routing = serving.route_tokens(logits, 8, None)
    assert routing.dropped == 0 and routing.load.max() <= 256


def test_a_draft_with_another_vocabulary_is_refused():
    llama2, llama32_1b = CATALOGUE["Llama-2-7B"], CATALOGUE["custom"]  # 32,000 and 128,256 tokens
    assert llama2.vocab == 32000 and llama32_1b.vocab == 128256
    with pytest.raises(ValueError, match="same vocabulary"):
        serving.speculative_speedup_vs_batch(0.8, 4, 1, llama2, llama32_1b)
    spec = serving_view.SPEC
    state = spec.state({"srv_model": "Llama-2-7B", "draft": "custom"})
    view = serving_view.figures(state, Options(parts=frozenset()))
    warnings = [text for kind, text in view.notices if kind == "warning"]
    assert any("same vocabulary" in w and "32,000" in w and "128,256" in w for w in warnings)
    assert not any(r.label.startswith("Speculative speed-up") for r in view.readouts)


def test_every_serving_preset_drafts_with_the_targets_vocabulary():
    spec = serving_view.SPEC
    for name, values in spec.presets.items():
        state = spec.state(values)
        target, draft = CATALOGUE[state.srv_model], serving_view.DRAFTS[state.draft]
        assert draft.vocab == target.vocab, name
    # DeepSeek-V3's preset drafts with its own MTP module: 129,280 tokens, one token ahead, accepted 85% of the time
    ds = spec.state(spec.presets[next(k for k in spec.presets if k.startswith("A2.8-MoE"))])
    assert serving_view.DRAFTS[ds.draft].vocab == DS["V"] and ds.draft_k == 1
    assert _readouts("A2.8-MoE")["Speculative: tokens per target forward"][0] == f"{1 + 0.85:.2f}"


# ---------------------------------------------------------------------------------------------------- units


def test_m11_attention_pages_80_gb_gpu_is_80_gib():
    label, limit = kv_cache.GPU_MEMORY
    assert limit == 80 * 2**30 and "80 GB" in label


def test_m3_training_memory_equation_compares_gib_with_gib():
    source = (ROOT / "pages" / "7_Training_memory.py").read_text(encoding="utf-8")
    gib = 16 * 7e9 / GIB
    assert rf"112\ \text{{GB}} = {gib:.0f}\ \text{{GiB}} > 80\ \text{{GiB}}" in source
    # nvidia-smi's 81,559 MiB for an H100 SXM 80 GB
    assert f"nvidia-smi shows {81559 / 1024:.1f} GiB" in source


def test_m4_zero_communication_in_the_training_memory_answer():
    # mixed-precision Adam: 2 (bf16 weights) + 2 (gradients) + 4 + 4 + 4 (fp32 master, two moments) bytes
    weights, grads, optimizer = 2, 2, 4 + 4 + 4
    # Rajbhandari et al. 2020 §7: data parallelism all-reduces 2 psi; ZeRO-1/2 reduce-scatter + all-gather, 2 psi;
    # ZeRO-3 adds an all-gather of the weights in the backward too, 3 psi
    dp, zero12, zero3 = Fraction(2), Fraction(2), Fraction(3)
    source = (ROOT / "pages" / "7_Training_memory.py").read_text(encoding="utf-8")
    assert f"ZeRO-1/2 shard {optimizer}-{optimizer + grads} of the {weights + grads + optimizer} bytes" in source
    assert zero12 == dp and "at plain data parallelism's communication volume" in source
    assert f"ZeRO-3 adds about {100 * (zero3 / dp - 1)}%" in source


def test_w4_each_tensor_parallel_gpu_reads_the_whole_mla_latent_cache():
    # DeepSeek-V3, batch 1, 8,192 cached tokens + the new one, fp8 weights, bf16 latent, 8 H200s: each GPU reads
    # 1/8 of the active weights but all of the latent cache
    c = _ds_counts()
    per_gpu = c["active"] / 8 + (8192 + 1) * DS["L"] * (DS["kv_rank"] + DS["rope"]) * 2
    step = serving.forward_step(CATALOGUE["DeepSeek-V3"], "H200", 1, 1, 8192, weight_format="fp8", tp=8)
    assert float(step.memory_seconds) == pytest.approx(per_gpu / H200_BW, rel=1e-12)
