"""The systems pages' and cards' corrected claims (review content-review-systems.md, issue 28), each number checked
against a computation written out here from the published configs and papers, never through core.

W1 card systems-05 (tensor parallelism lowers batch-1 decode), W2 the A10-01 note, W3 the MoE decode readout that
read only the active weights but said "all the weights", W4 KV capacity under tensor parallelism (MLA's latent and
KV heads fewer than the GPUs are replicated, not split); a draft with another vocabulary is refused; the attention
page's "80 GB" line at 80 GiB. (DeepSeek-V3's dropless router preset left the serving page with the router toy, issue
32.)
"""

from __future__ import annotations

import math
import re
from fractions import Fraction
from pathlib import Path

import pytest

from core import kv_cache, serving
from core.model_spec import CATALOGUE
from study.cards import load_cards
from views import Options, systems_common
from views import serving as serving_view
from views import training_memory as memory_view

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


# DeepSeek's README_WEIGHTS.md (deepseek-ai/DeepSeek-V3): "Activation parameters: 36.7B (including 0.9B for
# Embedding and 0.9B for the output Head)"; the MTP module: "11.5B unique parameters, excluding the shared 0.9B
# Embedding and 0.9B output Head". The model card (README.md): "685B, which includes 671B of the Main Model weights
# and 14B of the Multi-Token Prediction (MTP) Module weights".
README_ACTIVE, README_MTP = 36.7e9, 11.5e9


def test_a2_8_preset_explains_its_active_count_and_the_mtp_module():
    c = _ds_counts()
    r = _readouts("A2.8-MoE")
    value, help_active = r["Parameters active per token: compute goes by these"]
    assert value == f"{c['active'] / 1e9:.2f}B" == "37.55B"
    # review 3 W1: the config gives 37.55B with the input embedding and 36.63B without; README_WEIGHTS' 36.7B
    # "including 0.9B for Embedding and 0.9B for the output Head" is neither, and the note says only that
    assert f"{c['active'] / 1e9:.2f}B from the config" in help_active
    no_emb = c["active"] - c["embedding"]
    assert f"{no_emb / 1e9:.2f}B without the input embedding ({c['embedding'] / 1e9:.2f}B, of which a" in help_active
    assert "The report says 37B" in help_active
    assert "'including 0.9B for Embedding and 0.9B for the output Head', which the config does not reproduce" in (
        help_active
    )
    gap, below = c["active"] - README_ACTIVE, README_ACTIVE - no_emb
    assert f"with both it counts {c['active'] / 1e9:.2f}B ({gap / 1e9:.2f}B more)" in help_active
    assert f"with the head alone {no_emb / 1e9:.2f}B ({below / 1e9:.2f}B less)" in help_active
    assert below > 0 and f"{no_emb / 1e9:.1f}" == "36.6" != f"{README_ACTIVE / 1e9:.1f}"
    assert "is not the embedding" not in help_active  # the first-round wording claimed more than the counts show
    assert "the report does not say which it counts" not in help_active
    assert f"{c['mtp'] / 1e9:.1f}B of its own weights from the config" in help_active
    assert f"README_WEIGHTS lists {README_MTP / 1e9:.1f}B" in help_active
    assert f"{(c['mtp'] + 2 * c['embedding']) / 1e9:.1f}B with its copies" in help_active
    assert f"(2 × {c['embedding'] / 1e9:.2f}B)" in help_active
    assert "about the model card's 14B" in help_active and "the report's 14B" not in help_active
    assert f"{(c['mtp'] + 2 * c['embedding']) / 1e9:.0f}" == "13"  # 13.46B: 14B needs its "about"
    assert f"{(c['total'] + c['mtp'] + 2 * c['embedding']) / 1e9:.0f}" == "684"  # the checkpoint's 685B, rounded up
    # the source's numbers as it writes them (seed 002 A2.8: "671B total, 37B activated")
    assert "the source states 671B (" in r["Parameters in total: memory goes by these"][1]
    assert "the source states 37B (" in help_active


# ------------------------------------------------------------------------------------------ W2 and the A10 notes


def test_w2_a10_01_note_describes_the_formula_of_its_number():
    r = _memory_readouts("A10-01")
    value, help_text = r["Llama-3-70B's shape with full multi-head attention (formula)"]
    L, D, V, F = L70, D70, V70, F70
    mha = L * (4 * D * D + 3 * D * F + 2 * D) + 2 * V * D
    assert value == f"{mha / 1e9:.2f}B" == "79.95B"
    assert "F = 28,672 = 3.5D" in help_text and F == Fraction(7, 2) * D
    with_8d3 = 12 * L * D * D + 2 * V * D + 2 * L * D
    assert f"= {with_8d3 / 1e9:.1f}B" in help_text
    assert "Note: 12 L D^2 + 2 V D with F = 8D/3" not in help_text
    # the seed's 1.17e8 is shown as the seed writes it, without a digit it does not claim
    assert "the source states 1.17×10⁸" in r["Saved by grouped-query attention, per layer"][1]


def test_a10_notes_name_what_their_numbers_measure():
    bubble = _memory_readouts("A10-06")["The same bubble over the ideal compute time"][1]
    assert f"(p − 1)/(m + p − 1) = {100 * 7 / 15:.1f}%" in bubble and "Narayanan et al. 2021" in bubble
    cross = _memory_readouts("A10-03")["The same by Korthikanti et al.'s count (tokens)"][1]
    assert "derived from Korthikanti" in cross and "the source states" not in cross
    assert f"34h/(2a) = {34 * 8192 // (2 * 64):,}" in cross
    attn = _memory_readouts("A10-05")[
        "Sequence length past which attention FLOPs stop being small next to 6N (tokens)"
    ][1]
    assert f"12D = {12 * 8192:,}" in attn
    mla = _readouts("A10-07")["KV cache per token, DeepSeek-V2's latent attention on 80 layers"][1]
    assert f"60 layers, {60 * (512 + 64) * 2 / 1024:.1f} KiB" in mla
    decode = _readouts("A10-11")["Decode at batch 1: FLOPs per byte"][1]
    assert f"V × D = {V70 * D70 / 1e9:.2f}B weights, {100 * V70 * D70 / N70:.1f}% of the bytes" in decode


# ---------------------------------------------------------------------------------------------------- W1


def test_w1_card_systems_05_says_tensor_parallelism_lowers_the_batch1_floor():
    cards, _ = load_cards(ROOT / "cards")
    card = next(c for c in cards if c.id == "systems-05")
    text = card.text
    assert "Believing more GPUs raise batch-1 decode speed." not in card.traps
    assert "tensor parallelism" in text.lower()
    one = 2 * N70 / H100_BW  # bf16 weights at one H100's bandwidth
    assert f"about {1e3 * one:.0f} ms per token at batch 1, at most {1 / one:.0f} tokens/s" in card.answer.number
    assert f"about {1e3 * one / 4:.1f} ms" in card.answer.number  # over 4 GPUs


# ---------------------------------------------------------------------------------------------------- real mechanisms


def test_a_draft_with_another_vocabulary_is_refused():
    llama2, llama32_1b = CATALOGUE["Llama-2-7B"], CATALOGUE["custom"]  # 32,000 and 128,256 tokens
    assert llama2.vocab == 32000 and llama32_1b.vocab == 128256
    with pytest.raises(ValueError, match="same tokenizer"):
        serving.speculative_speedup_vs_batch(0.8, 4, 1, llama2, llama32_1b)
    spec = serving_view.SPEC
    state = spec.state({"srv_model": "Llama-2-7B", "draft": "custom"})
    view = serving_view.figures(state, Options(parts=frozenset()))
    warnings = [text for kind, text in view.notices if kind == "warning"]
    assert any("same tokenizer" in w and "32,000" in w and "128,256" in w for w in warnings)
    assert not any(r.label.startswith("Speculative speed-up") for r in view.readouts)


# Which tokenizer each catalogued model uses, written out from the releases (not from core): LLaMA and Llama 2 share
# one 32,000-token SentencePiece model (Touvron et al. 2023, Llama 2 §2.1); Llama 3 / 3.1 / 3.2 use a 128K tiktoken-
# based one (Llama Team 2024); Mistral trained its own 32,000-token SentencePiece model for Mixtral (Jiang et al.
# 2024); DeepSeek-V3 and its MTP module share one 129,280-entry tokenizer (DeepSeek-AI 2024 §2.2, §4.1).
TOKENIZER_FAMILY = {
    "Llama-2-7B": "LLaMA/Llama 2",
    "LLaMA-65B": "LLaMA/Llama 2",
    "Llama-3-8B": "Llama 3",
    "Llama-3-70B": "Llama 3",
    "Llama-3.1-405B": "Llama 3",
    "custom": "Llama 3",  # the Llama-3.2-1B shape
    "Mixtral-8x7B": "Mistral",
    "DeepSeek-V3": "DeepSeek-V3",
    "DeepSeek-V3 MTP": "DeepSeek-V3",
}


def test_m1_review3_mixtral_with_a_llama2_draft_is_refused_although_both_have_32000_tokens():
    mixtral, llama2 = CATALOGUE["Mixtral-8x7B"], CATALOGUE["Llama-2-7B"]
    assert mixtral.vocab == llama2.vocab == 32000  # the old size check let this pair through
    with pytest.raises(ValueError, match="an equal vocabulary size") as e:
        serving.check_draft_tokenizer(mixtral, llama2)
    assert "mistral" in str(e.value) and "llama" in str(e.value) and "same tokens, same ids" in str(e.value)
    with pytest.raises(ValueError, match="same tokenizer"):
        serving.speculative_speedup_vs_batch(0.8, 4, 16, mixtral, llama2, tp=2)
    state = serving_view.SPEC.state({"srv_model": "Mixtral-8x7B", "srv_gpus": 2, "draft": "Llama-2-7B"})
    view = serving_view.figures(state, Options(parts=frozenset()))
    warnings = [text for kind, text in view.notices if kind == "warning"]
    assert any("Speculative speed-up not computed" in w and "equal vocabulary size (32,000)" in w for w in warnings)
    assert not any(r.label.startswith("Speculative speed-up") for r in view.readouts)


def test_m1_review3_drafts_are_accepted_exactly_when_the_tokenizers_match():
    assert set(serving_view.DRAFTS) == set(TOKENIZER_FAMILY)
    for t_name, target in CATALOGUE.items():
        for d_name, draft in serving_view.DRAFTS.items():
            same = TOKENIZER_FAMILY[t_name] == TOKENIZER_FAMILY[d_name]
            if same:
                serving.check_draft_tokenizer(target, draft)
            else:
                with pytest.raises(ValueError, match="same tokenizer"):
                    serving.check_draft_tokenizer(target, draft)
    # Mixtral has no draft in the catalogue: no other model uses Mistral's tokenizer
    mixtral = CATALOGUE["Mixtral-8x7B"]
    assert [n for n in serving_view.DRAFTS if TOKENIZER_FAMILY[n] == "Mistral"] == ["Mixtral-8x7B"]
    # a custom vocabulary size is a tokenizer nobody else has: refused with every draft
    odd = CATALOGUE["custom"].replace(vocab=32000)
    with pytest.raises(ValueError, match="no known tokenizer"):
        serving.check_draft_tokenizer(odd, CATALOGUE["Llama-2-7B"])
    # a custom shape that keeps Llama 3's vocabulary keeps its tokenizer
    serving.check_draft_tokenizer(CATALOGUE["custom"].replace(layers=8), CATALOGUE["Llama-3-8B"])
    assert mixtral.tokenizer != CATALOGUE["Llama-2-7B"].tokenizer


def test_m1_review3_draft_help_says_tokenizer_not_size():
    field = next(f for f in serving_view.FIELDS if f.name == "draft")
    assert "the target's tokenizer" in field.help and "not only a vocabulary of the same size" in field.help
    assert "must share the target's vocabulary" not in field.help


def test_every_serving_preset_drafts_with_the_targets_vocabulary():
    spec = serving_view.SPEC
    for name, values in spec.presets.items():
        state = spec.state(values)
        target, draft = CATALOGUE[state.srv_model], serving_view.DRAFTS[state.draft]
        assert draft.vocab == target.vocab, name
        assert TOKENIZER_FAMILY[draft.name] == TOKENIZER_FAMILY[target.name], name


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


# ------------------------------------------------------------------------------- review 2 (review-systems.md)

H200_PEAK = 989e12  # dense bf16 tensor FLOP/s, the same on the H200 SXM as on the H100 SXM
MLA_KV_BYTES = (DS["kv_rank"] + DS["rope"]) * 2  # one bf16 latent + RoPE key per layer and token


def _ds_expert() -> int:
    return 3 * DS["D"] * DS["d_e"]


def _routed_read(tokens: int, n_moe_layers: int) -> float:
    """Expected routed-expert weights T tokens read: per MoE layer, an expert escapes all T top-8-of-256 choices
    with probability (1 - 8/256)^T (uniform routing)."""
    untouched = (1 - Fraction(DS["k"], DS["E"])) ** tokens
    return float(n_moe_layers * DS["E"] * _ds_expert() * (1 - untouched))


def _ds_weights_read(tokens: int) -> float:
    """DeepSeek-V3's main model: every weight but the routed experts, plus the routed experts some token picked."""
    c, moe = _ds_counts(), DS["L"] - DS["dense"]
    return c["total"] - moe * DS["E"] * _ds_expert() + _routed_read(tokens, moe)


def _mtp_weights_read(tokens: int) -> float:
    """The MTP draft as the page models it: one MoE block plus the shared embedding and head (and a final norm);
    its 2D -> D projection is left out, as core/model_spec.py says."""
    d = DS
    norms = 2 * d["D"] + d["q_rank"] + d["kv_rank"]
    block_fixed = _ds_attention() + norms + d["D"] * d["E"] + d["E"] + d["shared"] * _ds_expert()
    return block_fixed + 2 * d["V"] * d["D"] + d["D"] + _routed_read(tokens, 1)


def _ds_step_seconds(batch: int, new: int, context: int, *, draft: bool = False) -> float:
    """A memory-bound step on 8 H200s, fp8 weights (1 byte each), bf16 latent cache read whole by every GPU (MLA
    under tensor parallelism): per GPU, 1/8 of the weights read plus the whole cache of the batch."""
    layers = 1 if draft else DS["L"]
    weights = (_mtp_weights_read if draft else _ds_weights_read)(batch * new)
    kv = batch * (context + new) * layers * MLA_KV_BYTES
    memory_s = (weights / 8 + kv) / H200_BW
    # FLOPs bounded from above: 2 per active weight and token, plus the scores and weighted sums over the context
    active = _mtp_weights_read(1) if draft else _ds_counts()["active"]
    attn = 2 * layers * DS["heads"] * (DS["nope"] + DS["rope"] + DS["v"]) * (context + new)
    assert batch * new * (2 * active + attn) / (8 * H200_PEAK) < memory_s  # so the step is memory-bound
    return memory_s


@pytest.mark.parametrize(
    ("batch", "bytes_text", "speedup_text"),
    [
        (1, "57.3 GB of weights against 37.6 GB (×1.53)", "×1.17"),
        (16, "434.3 GB of weights against 277.6 GB (×1.56)", "×1.17"),
    ],
)  # fmt: skip
def test_m1_moe_verify_pass_reads_more_experts_in_the_roofline_model(batch, bytes_text, speedup_text):
    # A2.8-MoE: DeepSeek-V3 on 8 H200s in fp8, its MTP module drafting k = 1 token accepted 85% of the time. The
    # small-batch ×1.17 is the page's roofline model's number (review 6-b W1): SGLang's documentation reports 1.8× at
    # batch 1 and 1.5× at batch 32 for this draft on H200 TP8, so the help labels the model and quotes both
    k, alpha, ctx = 1, Fraction(85, 100), 512
    E = float(1 + alpha)  # (1 - a^2)/(1 - a)
    plain_w, verify_w = _ds_weights_read(batch), _ds_weights_read(batch * (k + 1))
    assert (
        bytes_text == f"{verify_w / 1e9:,.1f} GB of weights against {plain_w / 1e9:,.1f} GB (×{verify_w / plain_w:.2f})"
    )
    # the verify pass's routed-expert bytes are at most (k + 1) times a plain step's (1 - x^T is subadditive in T)
    moe = DS["L"] - DS["dense"]
    assert _routed_read(batch * (k + 1), moe) <= (k + 1) * _routed_read(batch, moe)
    t_plain, t_verify = _ds_step_seconds(batch, 1, ctx), _ds_step_seconds(batch, k + 1, ctx)
    speedup = E * t_plain / (k * _ds_step_seconds(batch, 1, ctx, draft=True) + t_verify)
    assert speedup_text == f"×{speedup:.2f}"
    spec = serving_view.SPEC
    name = next(n for n in spec.presets if n.startswith("A2.8-MoE:"))
    view = serving_view.figures(spec.state({**spec.presets[name], "batch": batch}), Options(parts=frozenset()))
    r = {x.label: (x.value, x.help or "") for x in view.readouts}
    value, help_text = r[f"Speculative speed-up, batch {batch:,}"]
    assert value == speedup_text
    assert f"checks {batch * (k + 1):,} tokens" in help_text and bytes_text in help_text
    assert "so in this model it costs more than one decode step" in help_text and "fp8 weights" in help_text
    assert "This is the page's roofline model's number (no fixed per-step costs)." in help_text
    assert "bandwidth-only" not in help_text  # review 9: the model has a compute term too
    assert (
        "The model leaves out the fixed per-step costs that can dominate a small-batch MoE step (all-reduces, kernel "
        "launches), the same for 1 token as for k + 1, and lets each token pick its experts independently"
    ) in help_text
    assert (
        "SGLang's DeepSeek-V3 documentation reports a larger gain at batch 1 than at 32 with this draft on 8 H200s "
        "at TP 8: 1.8× at batch 1 and 1.5× at batch 32 (MTP run as an EAGLE draft; workload not stated)"
    ) in help_text
    # where a plain step reads (almost) every expert: the smallest power of two with 1 - (31/32)^B >= 99%
    b_all = 2 ** math.ceil(math.log2(math.log(0.01) / math.log(1 - DS["k"] / DS["E"])))
    assert b_all == 256
    reach = 1 - (1 - DS["k"] / DS["E"]) ** b_all
    t_plain, t_verify = _ds_step_seconds(b_all, 1, ctx), _ds_step_seconds(b_all, k + 1, ctx)
    t_draft = _ds_step_seconds(b_all, 1, ctx, draft=True)
    c = t_draft / t_plain
    sp_all = E * t_plain / (k * t_draft + t_verify)
    assert (
        f"At batch {b_all}, where a plain step already reads {100 * reach:.2f}% of the routed experts, verifying "
        f"costs ×{t_verify / t_plain:.2f} a plain step and the speed-up is ×{sp_all:.2f}, against E/(1 + k c) = "
        f"{E:.2f}/(1 + {k} × {c:.3f}) = {E / (1 + k * c):.2f}"
    ) in help_text
    assert f"{sp_all:.1f}" == "1.8"  # DeepSeek-AI 2024 §5.4.3: 1.8 times the tokens per second
    assert "DeepSeek-AI 2024 §5.4.3 report 1.8×" in help_text


def test_m1_speculative_texts_say_the_small_batch_rule_is_for_dense_models():
    page = (ROOT / "pages" / "8_Serving.py").read_text(encoding="utf-8")
    flat = re.sub(r'"\s*\n\s*"', "", page)  # the implicit concatenations of the page's strings
    assert "At small batch a verify pass of k + 1 tokens costs about one decode step" not in flat
    assert "For a dense model at small batch, a verify pass of k + 1 tokens reads the same weights" in flat
    assert "An MoE's k + 1 tokens can pick different experts" in flat and "(k + 1)× the routed-expert bytes" in flat
    assert "Speculative decoding helps a dense model at small batch" in flat
    assert (
        "At small batch an MoE's verify pass can read more experts than one decode step, so this page's roofline "
        "model (no fixed per-step costs) gives it less gain than a dense model there" in flat
    )
    # review 8: the seed's and Leviathan's citations sit beside what they say, not beside the model's MoE ordering
    assert "hurts once decode is compute-bound (002 A8.6). At small batch an MoE's" in flat  # Leviathan: no batch
    doc = " ".join((serving.speculative_speedup_vs_batch.__doc__ or "").split())
    assert "MoE: the k + 1 tokens of each sequence can pick different experts" in doc


def test_speculative_speedup_uses_the_pages_weight_format():
    # Llama-3-70B drafted by Llama-3-8B on one H100, batch 256, context 512, k = 4, alpha = 0.8: in fp8 the steps
    # turn compute-bound, so the speed-up differs from bf16's; a roofline written out here from the configs
    def llama(L, D, nq, K, F, V):
        n = L * (2 * D * D + 2 * D * K * 128 + 3 * D * F + 2 * D) + 2 * V * D + D
        matmul = 2 * (n - V * D - (2 * L * D + D))  # every weight but the embedding lookup and the norms
        return n, matmul, L, nq, K

    def step(model, batch, new, ctx, wbytes):
        n, matmul, L, nq, K = model
        flops = batch * new * (matmul + 2 * L * nq * 256 * (ctx + new / 2))
        kv = batch * (ctx + new) * 2 * L * K * 128 * 2
        return max((n * wbytes + kv) / H100_BW, flops / 989e12)

    target, draft = llama(80, 8192, 64, 8, 28672, 128256), llama(32, 4096, 32, 8, 14336, 128256)
    alpha, k, B, ctx = 0.8, 4, 256, 512
    E = (1 - alpha ** (k + 1)) / (1 - alpha)
    for fmt, wbytes in (("bf16", 2), ("fp8", 1)):
        want = (
            E
            * step(target, B, 1, ctx, wbytes)
            / (k * step(draft, B, 1, ctx, wbytes) + step(target, B, k + 1, ctx, wbytes))
        )
        got = serving.speculative_speedup_vs_batch(
            alpha, k, B, CATALOGUE["Llama-3-70B"], CATALOGUE["Llama-3-8B"], "H100", context=ctx, weight_format=fmt
        )
        assert float(got) == pytest.approx(want, rel=1e-9), fmt
    spec = serving_view.SPEC
    state = {"srv_model": "Llama-3-70B", "draft": "Llama-3-8B", "wfmt": "fp8", "batch": B, "prompt": ctx}
    state.update(accept=alpha, draft_k=k)
    view = serving_view.figures(spec.state(state), Options(parts=frozenset()))
    value = next(x.value for x in view.readouts if x.label == f"Speculative speed-up, batch {B}")
    fp8 = E * step(target, B, 1, ctx, 1) / (k * step(draft, B, 1, ctx, 1) + step(target, B, k + 1, ctx, 1))
    bf16 = E * step(target, B, 1, ctx, 2) / (k * step(draft, B, 1, ctx, 2) + step(target, B, k + 1, ctx, 2))
    assert value == f"×{fp8:.2f}" != f"×{bf16:.2f}"


def test_m3_n1_card_systems_03_names_full_checkpointing_and_zero_volumes():
    cards, _ = load_cards(ROOT / "cards")
    card = next(c for c in cards if c.id == "systems-03")
    # one more forward pass: 2N on top of 6N training FLOPs per token
    extra = Fraction(8, 6) - 1
    assert f"8N instead of 6N FLOPs per token, {100 * float(extra):.0f}% more compute" in card.answer.number
    assert card.view is not None and dict(card.view.params)["recompute"] == "full"
    state, problems = memory_view.SPEC.parse(dict(card.view.params))
    assert not problems
    view = memory_view.figures(state, Options(parts=frozenset()))
    act = next(x.help for x in view.readouts if x.label == "Activations per GPU")
    assert f"recomputation adds {100 * float(extra):.1f}% FLOPs" in act
    # Rajbhandari et al. 2020 §7: plain DP 2 psi, ZeRO-1/2 2 psi, ZeRO-3 3 psi
    assert "Each strategy trades memory for communication or recompute." != card.answer.trade_off
    assert "ZeRO-1/2 move no more data than plain data parallelism" in card.answer.trade_off
    assert f"ZeRO-3 about {100 * float(Fraction(3, 2) - 1):.0f}% more" in card.answer.trade_off


def test_n6_card_systems_04_fp16_limits():
    import numpy as np

    cards, _ = load_cards(ROOT / "cards")
    sentence = next(c for c in cards if c.id == "systems-04").answer.sentence
    smallest_normal, smallest = 2.0**-14, 2.0**-24
    assert float(np.finfo(np.float16).tiny) == smallest_normal and float(np.finfo(np.float16).max) == 65504
    assert float(np.float16(smallest)) == smallest and float(np.float16(smallest / 4)) == 0.0
    assert f"2^-14 ≈ {smallest_normal:.1e}".replace("e-0", "e-") in sentence  # 6.1e-5
    assert f"2^-24 ≈ {smallest:.0e}".replace("e-0", "e-") in sentence  # 6e-8
    assert "fp16's smallest normal is about 6e-5), which" not in sentence


def test_n7_n8_card_systems_08_prefill_and_int4_size():
    cards, _ = load_cards(ROOT / "cards")
    card = next(c for c in cards if c.id == "systems-08")
    # a dense bf16 prefill of S tokens does 2 N S FLOPs on 2 N bytes: intensity S, compute-bound past the ridge
    assert f"past about {989e12 / 3.35e12:.0f} tokens on an H100" in card.follow_ups[0]
    assert "not speed up prefill?" not in card.follow_ups[0]
    # 4 + 16/128 bits for every one of the 70,553,706,496 weights, embedding and head too
    assert (
        f"{N70 * (4 + 16 / 128) / 8 / 1e9:.1f} GB in int4 (groups of 128, embedding and head included)"
        in card.answer.number
    )


def test_n10_a10_02_stated_answers_as_the_seed_writes_them():
    r = _memory_readouts("A10-02")
    per_layer = 2 * D70 * D70 + 2 * D70 * K70 * H70 + 3 * D70 * F70 + 2 * D70
    assert r["Parameters per layer"][0] == f"{per_layer / 1e6:.1f}M"
    assert "the source states ≈ 8.56×10⁸ (" in r["Parameters per layer"][1]
    assert f"{per_layer / 1e8:.2f}" == "8.56"
    assert "the source states about 80B (" in r["Total with full multi-head attention"][1]


def test_n3_n4_n9_serving_wording():
    r = _readouts("A2.8-MoE")
    assert "SGLang can run MLA's attention data-parallel" in r["Sequences of 8,192 tokens that fit"][1]
    one_gpu = serving_view.figures(serving_view.SPEC.state({"srv_model": "Llama-3-8B"}), Options(parts=frozenset()))
    floor = next(x.help for x in one_gpu.readouts if x.label == "Decode, batch 1")
    assert floor.endswith("bandwidth below the data sheet's comes on top")
    memory = (ROOT / "views" / "training_memory.py").read_text(encoding="utf-8")
    assert "2 s b h / t (their 2sbh" in memory


# ---------------------------------------------------------------------------------------------------- review 3


def _llama70_decode_intensity(batch: int, context: int) -> float:
    """One decode step of Llama-3-70B in bf16 from its config: FLOPs = B (2 (N - V D - norms) + attention at the
    mean key count context + 1/2); bytes = every weight (2 bytes) + B (context + 1) tokens of 320 KiB of K and V."""
    norms = (2 * L70 + 1) * D70
    attention = 2 * L70 * NQ70 * (2 * H70) * (context + 0.5)  # Q K^T and A V over the cached keys
    flops = batch * (2 * (N70 - V70 * D70 - norms) + attention)
    kv = batch * (context + 1) * 2 * L70 * K70 * H70 * 2
    return flops / (2 * N70 + kv)


def test_m2_review3_decode_intensity_help_says_attention_raises_it_at_small_batch():
    # A10-11: batch 1, context 8,192: 1.1 FLOP/B, above the weights' 2B/2 = 1, because each cached bf16 value
    # serves 64/8 query heads: 4 N H FLOPs against 4 K H bytes per layer and cached token = N/K = 8 per byte
    assert f"{NQ70 * 4 * H70 / (4 * K70 * H70):.3g}" == "8"
    value, help_text = _readouts("A10-11")["Decode intensity, batch 1"]
    assert value == f"{_llama70_decode_intensity(1, 8192):,.1f} FLOP/B" == "1.1 FLOP/B"
    assert "its attention in FLOPs: each cached value serves N/K = 64/8 = 8 query heads, 8 FLOP per cached byte" in (
        help_text
    )
    assert "pulls the intensity toward 8: up where the weights alone give less (small batches), down" in help_text
    # A10-07: batch 16 at the same context: 14.0, below the weights' 16 (the same cache now lowers it)
    value16, _ = _readouts("A10-07")["Decode intensity, batch 16"]
    assert value16 == f"{_llama70_decode_intensity(16, 8192):,.1f} FLOP/B" == "14.0 FLOP/B"
    # MLA: a 576-value latent per layer and token serves 128 heads of 192 + 128 dims: 2 x 128 x 320 / (576 x 2)
    _, mla = _readouts("A2.8-MoE")["Decode intensity, batch 16"]
    per_byte = 2 * DS["heads"] * (DS["nope"] + DS["rope"] + DS["v"]) / ((DS["kv_rank"] + DS["rope"]) * 2)
    assert f"against its 576 cached values (rebuilding K and V from the latents not counted), {per_byte:,.3g} FLOP" in (
        mla
    )


def test_review3_nits_conventions_units_and_stated_answers():
    # N1: the MFU convention is named as the seed's
    mfu_help = _memory_readouts("A10-06")["Model FLOPs utilisation"][1]
    assert "This MFU (the seed's convention) counts 6N FLOPs per token" in mfu_help
    cards, _ = load_cards(ROOT / "cards")
    by_id = {c.id: c for c in cards}
    # N2: in training, Megatron's tensor parallelism has two all-reduces per layer forward and two backward
    s03 = by_id["systems-03"]
    assert "two all-reduces per layer in the forward and two in the backward" in s03.answer.trade_off
    assert "two all-reduces per layer in the forward and two in the backward" in s03.follow_ups[0]
    # N3: a floor on the time is a ceiling on the rate
    one = 2 * N70 / H100_BW
    assert (
        f"a floor of about {1e3 * one:.0f} ms per token at batch 1, at most {1 / one:.0f} tokens/s"
        in by_id["systems-05"].answer.number
    )
    # N4: the MoE batch-1 bytes count the whole input table, of which a token reads one row
    help_b1 = _readouts("A2.8-MoE")["Decode, batch 1, one GPU's bandwidth"][1]
    assert "the whole input-embedding table counted, of which a token reads one row" in help_b1
    # N5: stated answers as the seeds write them, each the seed's own rounding of the exact value
    a02 = _memory_readouts("A10-02")["Parameters in total"][1]
    assert f"{N70 / 1e9:.1f}" == "70.6" and "the source states 70.6B (in the follow-up's 9.4/70.6);" in a02
    assert f"{6 * 7e9 * 2e12 / 1e22:.1f}" == "8.4"
    assert (
        "the source states 8.4×10²² ("
        in _memory_readouts("A10-05")["Training compute, 7B parameters on 2T tokens (FLOPs)"][1]
    )
    a06 = _memory_readouts("A10-06")
    assert (
        f"{1024 * 989e12 / 1e18:.2f}" == "1.01" and "the source states 1.01×10¹⁸ (" in a06["Cluster peak (FLOP/s)"][1]
    )
    seed_tps = 0.40 * 1.01e18 / (6 * 7.06e10)  # the seed's own inputs
    assert f"{seed_tps / 1e5:.1f}" == "9.5" and round(seed_tps, -4) == 950_000
    assert "the source states 9.5×10⁵ (about 950,000) (" in a06["Tokens per second for 40% utilisation"][1]
    a = _memory_readouts("001-A")
    C = 8 * 24 * 3600 * 989e12 * 0.40
    assert f"{C / 1e20:.2f}" == "2.73" and "the source states 2.73×10²⁰ (" in a["Compute budget (FLOPs)"][1]
    assert (
        f"{math.sqrt(C / 120) / 1e9:.1f}" == "1.5"
        and "the source states 1.5×10⁹ (" in a["Parameters by the 20-tokens rule"][1]
    )
    # N6: nvidia-smi prints MiB (2^20 bytes), not GiB
    page = (ROOT / "pages" / "7_Training_memory.py").read_text(encoding="utf-8")
    assert "binary units as nvidia-smi's MiB are" in page and "nvidia-smi's unit" not in page
    # N7: the seed's "less than decode" is cited for what it says, before the roofline reason
    s08 = by_id["systems-08"].follow_ups[0]
    assert s08.index("'less than decode' (002 A8.9)") < s08.index("past about 295 tokens")
    assert "only running the matmuls in lower precision wins there" in s08


# ---------------------------------------------------------------------------------------------------- review 4


def test_w1_review4_mla_intensity_help_gives_the_pages_count_and_the_absorbed_kernels():
    # A2.8-MoE: DeepSeek-V3 on 8 H200s, bf16 cache. A layer caches one latent of kv_rank + rope = 576 values per
    # token (1,152 bytes). This page: 128 heads of multi-head attention over decompressed K (192) and V (128) dims.
    # Absorbed kernels (FlashMLA): each head's query meets the 576-value latent (scores) and the 512-value latent
    # (values): 2 x 128 x (576 + 512) FLOPs per 1,152 bytes, about 2 h_q (DeepSeek's FlashMLA deep-dive)
    lat = DS["kv_rank"] + DS["rope"]
    page_count = Fraction(2 * DS["heads"] * (DS["nope"] + DS["rope"] + DS["v"]), lat * 2)
    absorbed = Fraction(2 * DS["heads"] * (lat + DS["kv_rank"]), lat * 2)
    assert f"{float(page_count):.3g}" == "71.1" and f"{float(absorbed):.0f}" == "242"
    assert 0.9 < absorbed / (2 * DS["heads"]) < 1  # "about 2 h_q"
    _, mla = _readouts("A2.8-MoE")["Decode intensity, batch 16"]
    assert "this page counts MLA's attention as multi-head attention over the decompressed K and V" in mla
    assert f"2·128·(192 + 128) FLOPs per layer and cached token against its {lat} cached values" in mla
    assert f"{float(page_count):.3g} FLOP per cached byte with bf16 values" in mla
    assert (
        f"each cached latent ({lat} values) meets all 128 query heads in latent space, 2·128·({lat} + 512) FLOPs "
        f"per {lat * 2:,} bytes ≈ {float(absorbed):.0f} FLOP per cached byte with bf16 values (≈ 2 h_q in bf16, "
        "DeepSeek's FlashMLA notes)"
    ) in mla
    # under TP 8 every GPU reads the whole latent for 128/8 heads
    assert f"for its 128/8 = 16 heads: ≈ {float(absorbed) / 8:.0f} per byte it reads" in mla
    assert "each cached latent serves all 128 query heads (MLA)" not in mla


def test_m2_review4_intensity_help_says_the_cache_is_counted_once_for_the_group():
    spec = serving_view.SPEC
    view = serving_view.figures(spec.state({"srv_model": "Llama-3-70B", "srv_gpus": 16}), Options(parts=frozenset()))
    help_text = next(r.help for r in view.readouts if r.label.startswith("Decode intensity"))
    # 16 GPUs over 8 KV heads: each head on 16/8 GPUs, 16 ceil(8/16)/8 copies
    copies = 16 * math.ceil(K70 / 16) // K70
    assert f"with 16 GPUs over {K70} KV heads the group reads {copies} copies of the cache" in help_text
    assert "This intensity counts the cache once for the group of 16 GPUs" in help_text
    assert "its own intensity is lower" in help_text
    _, mla = _readouts("A2.8-MoE")["Decode intensity, batch 16"]
    assert "counts the cache once for the group of 8 GPUs; every GPU reads MLA's whole latent" in mla
    # TP 4 divides the 8 KV heads: no replication, no such sentence
    _, a07 = _readouts("A10-07")["Decode intensity, batch 16"]
    assert "counts the cache once" not in a07


@pytest.mark.parametrize("k", [1, 3])
def test_m1_review4_deepseeks_1_8x_is_quoted_only_at_k_1(k):
    spec = serving_view.SPEC
    name = next(n for n in spec.presets if n.startswith("A2.8-MoE:"))
    view = serving_view.figures(spec.state({**spec.presets[name], "draft_k": k}), Options(parts=frozenset()))
    help_text = next(r.help for r in view.readouts if r.label.startswith("Speculative speed-up"))
    quoted = "report 1.8× the tokens per second with this draft at k = 1 (acceptance 85–90%)"
    reuse = "DeepSeek's one MTP module drafts one token: k > 1 reuses it on its own drafts"
    assert (quoted in help_text, reuse in help_text) == (k == 1, k > 1)


def test_review4_nits():
    cards, _ = load_cards(ROOT / "cards")
    s01 = next(c for c in cards if c.id == "systems-01")
    # N2 (rewritten in review 5, see test_review5_items): the old "about 1.02×" is gone
    assert "with selective recomputation about 1.02×" not in s01.follow_ups[1]
    # N3: nvidia-smi's 81,559 MiB total for an H100 80GB
    page = (ROOT / "pages" / "7_Training_memory.py").read_text(encoding="utf-8")
    flat = re.sub(r'"\s*\n\s*"', "", page)
    assert f"an 80 GB card holds about 80 GiB (the seeds' reading; nvidia-smi shows {81559 / 1024:.1f} GiB)" in flat
    # N4
    viz = (ROOT / "viz" / "training_memory.py").read_text(encoding="utf-8")
    assert "what nvidia-smi and" not in viz and "binary units, as nvidia-smi's MiB are" in viz
    # N5: the bytes/param example follows the preset's ZeRO stage and data-parallel size (Rajbhandari et al. 2020)
    for preset, text, value in (
        ("A10-06", "16 (ZeRO-0 keeps a full copy on every replica)", 16.0),
        ("A10-09", "16 → 2/16 + 2/16 + 12/16 = 1 with ZeRO-3 over 16", 16 / 16),
        ("A10-10", "16 → 2 + 2 + 12/8 = 5.5 with ZeRO-1 over 8", 2 + 2 + 12 / 8),
        ("A10-12", "16 → 2 + 2 + 12/32 = 4.38 with ZeRO-1 over 32", 2 + 2 + 12 / 32),
    ):
        shown, help_text = _memory_readouts(preset)["Bytes/param on this GPU"]
        assert help_text.endswith(text) and shown == f"{value:.2f}", preset


def test_review5_items():
    cards, _ = load_cards(ROOT / "cards")
    s01 = next(c for c in cards if c.id == "systems-01")

    # M1: selective recomputation redoes the attention core's forward, QK^T and AV: 2 x 2 s h FLOPs per token and
    # layer (no causal mask), against PaLM's 6N + 12 L h s per token (Chowdhery et al. 2022, App. B)
    def extra(s: int) -> float:
        return 4 * s * D70 * L70 / (6 * N70 + 12 * L70 * D70 * s)

    assert NQ70 * H70 == D70
    assert (f"{100 * extra(4096):.1f}", f"{100 * extra(8192):.1f}") == ("2.4", "4.4")
    assert 1.8 < extra(8192) / extra(4096) < 2  # "nearly twice that at 8,192" (4.4% with all of N, 4.5% on the page)
    assert (
        "with full checkpointing HFU is 4/3 of MFU, 8N/6N: one more forward; selective recomputation redoes only "
        "the attention core's forward, a share that grows with context: 2.4% more FLOPs for Llama-3-70B at 4,096 "
        "tokens and nearly twice that at 8,192, counted against 6N plus attention as PaLM's MFU does"
        in s01.follow_ups[1]
    )
    assert Fraction(8, 6) == Fraction(4, 3)
    # M2: an MoE's speculative decoding also falls below 1 once decode turns compute-bound: there the verify pass
    # of k + 1 tokens costs k + 1 plain steps, so the speed-up is at most E/(k + 1) < 1 for acceptance below 1
    for k in (1, 3, 8):
        alpha = Fraction(85, 100)
        E = sum(alpha**i for i in range(k + 1))  # (1 - a^(k+1))/(1 - a)
        assert E / (k + 1) < 1
    page = (ROOT / "pages" / "8_Serving.py").read_text(encoding="utf-8")
    flat = re.sub(r'"\s*\n\s*"', "", page)
    assert "gains least" not in flat
    assert "the MoE's speed-up too falls below 1 once decode turns compute-bound, at far larger batches than a" in flat
    assert "smallest at small batch" not in flat  # review 5: it also falls below 1 at large batch
    # N1: the int4 divisor 4.125/8 = 0.515625 printed to 4 significant figures; review 6-b N5: at one precision in
    # the sentence ("0.5156-byte weights"), and the quotient "near" it as a whole number
    bpp = Fraction(4125, 8000)
    spec = serving_view.SPEC
    name = next(n for n in spec.presets if n.startswith("A2.8-MoE:"))
    view = serving_view.figures(spec.state({**spec.presets[name], "wfmt": "int4"}), Options(parts=frozenset()))
    help_text = next(r.help for r in view.readouts if r.label.startswith("Decode intensity"))
    batch = spec.state(spec.presets[name]).batch
    assert f"{float(bpp):.4g}" == "0.5156" and f"{2 * batch / float(bpp):.0f}" == "62"
    assert "a dense model with 0.5156-byte weights sits near 2B/0.5156 ≈ 62 at short context" in help_text
    assert "0.516-byte" not in help_text and "= 62.06" not in help_text
    # N2: the crossovers carry their unit: 34h/(5a) and 34h/(2a) tokens for Llama-3-70B (h = 8192, a = 64)
    helps = {x.label: x.help for x in systems_common.problem_readouts("A10-03")}
    kor = helps["The same by Korthikanti et al.'s count (tokens)"]
    assert f"s = 34h/(5a), {34 * D70 / (5 * NQ70):.0f} tokens;" in kor
    assert f"34h/(2a) = {34 * D70 // (2 * NQ70):,} tokens here" in kor
    assert (
        "the source states 1,792 tokens"
        in helps["Sequence length past which attention scores dominate activation memory (tokens)"]
    )
    # N3: the seed's MFU divides by its rounded 1.01e18; the unrounded 1,024 x 989 TFLOP/s (dense bf16 H100)
    mfu = systems_common.problem_readouts("A10-06")
    m = next(x for x in mfu if x.label == "Model FLOPs utilisation")
    seed = 100 * 6 * 7.06e10 * 12_000 / 1.01e18
    unrounded = 100 * 6 * 7.06e10 * 12_000 / (1024 * 989e12)
    assert (f"{seed:.3f}", f"{unrounded:.3f}") == ("0.503", "0.502") and m.value == f"{unrounded:.3f}%"
    assert (
        f"the seed's rounded 1.01e18 cluster peak gives {seed:.3f}%; the unrounded {1024 * 989e12 / 1e18:.4f}e18 "
        f"gives {unrounded:.3f}%" in m.help
    )
    # N4: presets with a bare parameter count have no shape, so no activation formula beside their 0.0 GiB
    for preset in ("001-3.2", "001-A", "A10-06", "A10-09", "A10-10", "A10-12"):
        _, help_text = _memory_readouts(preset)["Activations per GPU"]
        assert help_text == "left out: a bare parameter count has no shape", preset
    _, shaped = _memory_readouts("A10-03")["Activations per GPU"]
    assert shaped.startswith("Korthikanti et al. 2022")


# ---------------------------------------------------------------------------------------------------- review 6


def _flat_page(name: str) -> str:
    return re.sub(r'"\s*\n\s*"', "", (ROOT / "pages" / name).read_text(encoding="utf-8"))


def test_w1_review6_moe_speculative_ordering_is_labelled_the_models_and_the_measurement_quoted():
    # SGLang's DeepSeek-V3 documentation ("Multi-token Prediction"): with MTP as an EAGLE draft, decoding speed
    # improves 1.8x at batch size 1 and 1.5x at batch size 32 on H200 TP8. The page's roofline model gives
    # ×1.17 at batch 1 and ×1.81 only from batch 256, so its small-batch ordering must be labelled as the model's.
    flat = " ".join(_flat_page("8_Serving.py").split())
    # the old caption stated the model's ordering as a fact, without a qualifier or the measurement
    assert "its speed-up is low at small batch, rises towards E/(1 + k c)" not in flat
    assert "an MoE gains little at small batch" not in flat
    assert "most once a plain step already reads every expert" not in flat
    assert (
        "so its verify pass reads more experts than one decode step: up to (k + 1)× the routed-expert bytes. The "
        "page's roofline model (bytes over bandwidth or FLOPs over peak, whichever is larger, and no fixed per-step "
        "costs)"
    ) in flat
    assert (
        "Those orderings are the model's results, not measurements: it leaves out the fixed per-step costs "
        "(all-reduces, kernel launches), the same for 1 token as for k + 1, which can dominate a small-batch MoE "
        "step, and it assumes each drafted token picks its experts independently."
    ) in flat
    assert (
        "SGLang's DeepSeek-V3 documentation reports 1.8× at batch 1 and 1.5× at batch 32 on 8 H200s with the MTP "
        "module as the draft (run as an EAGLE draft; the workload is not stated): larger at batch 1 than at 32, "
        "whereas the model's speed-up for 8 H200s with the MTP draft at k = 1 and a = 0.85 (preset A2.8-MoE; SGLang "
        "states neither) is higher at batch 32 (×1.36) than at batch 1 (×1.17), after a dip to ×1.06 at batch 4."
    ) in flat
    assert (
        "SGLang's DeepSeek-V3 documentation reports, with the MTP module as the draft on 8 H200s, 1.8× at batch 1 "
        in (flat)
    )
    assert "Measured" not in flat  # review 9: SGLang reports a result with no workload; not our measurement
    # what holds stays: more experts per verify pass, less gain than a dense model, below 1 once compute-bound
    assert "therefore gives an MoE less gain than a dense model at small batch" in flat
    cards, _ = load_cards(ROOT / "cards")
    d02 = next(c for c in cards if c.id == "decoding-02")
    assert "gains less at small batch" not in d02.answer.number
    assert "it stops helping once decode turns compute-bound, at large batch (for an MoE, in a roofline model, at " in (
        d02.answer.sentence
    )  # review 10: not "at large batch sizes" alone, which the page's model contradicts for an MoE
    assert "the cost is small" not in d02.answer.number  # review 9: an inference, not what SGLang measured
    assert (
        "bytes a dense model does not pay; SGLang's DeepSeek-V3 documentation reports 1.8x at batch 1 and 1.5x at "
        "batch 32 on 8 H200s with the MTP module as the draft (settings and workload not stated)"
    ) in d02.answer.number
    doc = " ".join((serving.speculative_speedup_vs_batch.__doc__ or "").split())
    assert "low at small B and nears" not in doc
    assert "In this model an MoE therefore gains less than a dense model at small B" in doc
    assert "its speed-up is low at small B (it can dip below its B = 1 value" in doc
    assert "Both orderings are the model's, not measurements" in doc and "1.8x at batch 1 and 1.5x at batch 32" in doc
    assert "bytes over bandwidth or FLOPs over the bf16 peak, whichever is larger, fp8 weights included" in doc
    # no unverified source: the Thoughtworks blog is not cited anywhere
    for text in (flat, d02.answer.number, doc, (ROOT / "views" / "serving.py").read_text(encoding="utf-8")):
        assert "Thoughtworks" not in text


def _decode_b1_help(state: dict) -> str:
    view = serving_view.figures(serving_view.SPEC.state(state), Options(parts=frozenset()))
    return next(r.help or "" for r in view.readouts if r.label == "Decode, batch 1")


def test_w2_review6_moe_batch1_parts_follow_the_model():
    # Mixtral-8x7B (Jiang et al. 2024): every one of 32 layers is an MoE layer of 8 experts, top 2, no shared expert
    mixtral = _decode_b1_help({"srv_model": "Mixtral-8x7B"})
    assert "dense layer" not in mixtral and "shared expert" not in mixtral
    assert "the routers and 2 of 8 experts per layer: the active parameters" in mixtral
    # DeepSeek-V3: 3 leading dense layers and 1 shared expert next to 8 of 256 routed ones
    ds = _readouts("A2.8-MoE")["Decode, batch 1"][1]
    assert f"the {DS['dense']} dense layers' MLPs, the shared expert, the routers and 8 of 256 routed experts per " in (
        ds
    )


def test_n1_review6_dense_floor_says_the_whole_table_is_counted():
    # Llama-3-8B in bf16 on one H100: 8,030,261,248 weights, of which the input table 128,256 x 4,096 is read one
    # row per token; without it 15.0 GB and 4.5 ms (at 3.35 TB/s)
    L, D, N, K, F, V = 32, 4096, 32, 8, 14336, 128256
    hd = D // N
    n = L * (2 * D * N * hd + 2 * D * K * hd + 3 * D * F + 2 * D) + 2 * V * D + D
    assert n == 8_030_261_248
    without = (n - V * D) * 2
    help_text = _decode_b1_help({})
    assert (
        f"a floor: all {2 * n / 1e9:.1f} GB of weights (the whole input-embedding table counted, of which a token "
        f"reads one row) / (1 × 3.35 TB/s), at most {3.35e12 / (2 * n):,.0f} tokens/s; without the table "
        f"{without / 1e9:.1f} GB and {1e3 * without / 3.35e12:.1f} ms"
    ) in help_text
    assert (f"{without / 1e9:.1f}", f"{1e3 * without / 3.35e12:.1f}") == ("15.0", "4.5")
    # a tied model reads its one V x D matrix whole as the output head: no such correction
    tied = _decode_b1_help({"srv_model": "custom"})
    assert "tied to the output head, which reads all of it" in tied and "without the table" not in tied


def test_n2_review6_moe_prefill_intensity_depends_on_the_prompt_length():
    # DeepSeek-V3 in fp8 (1 byte per weight): prefill of S tokens does about 2 x active x S FLOPs per total bytes
    c = _ds_counts()
    per_token = 2 * c["active"] / c["total"]
    ridge = 989e12 / 4.8e12  # H200 SXM: dense bf16 peak over HBM3e bandwidth
    s_cross = ridge / per_token
    assert (f"{c['active'] / 1e9:.1f}", f"{c['total'] / 1e9:.0f}", f"{per_token:.2f}", f"{ridge:.0f}") == (
        "37.6",
        "671",
        "0.11",
        "206",
    )
    assert round(s_cross, -2) == 1800
    # with the attention's FLOPs over the causal mean context S/2 and the MLA scores, the crossing stays near it
    attn = 2 * DS["L"] * DS["heads"] * (DS["nope"] + DS["rope"] + DS["v"])
    s = 1
    while (2 * (c["active"] - c["embedding"]) * s + attn * s * s / 2) / c["total"] < ridge:
        s += 1
    assert 1600 < s < 1900
    flat = " ".join(_flat_page("8_Serving.py").split())
    assert (
        "so its intensity is about S × active/total with bf16 weights (2S/b × active/total with b-byte weights), and "
        "it too depends on the prompt's length: DeepSeek-V3 (37.6B of 671B) in fp8 sits near 0.11 S, so the preset's "
        "512-token prompt is memory-bound and a prompt passes an H200's ridge (206 FLOP per byte at the bf16 peak) "
        "only near 1,800 tokens, or near 3,700"
    ) in flat


def test_review6a_n1_zero_volume_is_per_step_without_gradient_accumulation():
    flat = _flat_page("7_Training_memory.py")
    assert (
        "ZeRO-1/2 shard 12-14 of the 16 bytes at plain data parallelism's communication volume per optimizer step "
        "without gradient accumulation (with it, ZeRO-2 reduce-scatters every micro-batch and moves more);"
    ) in flat


def _swiglu_block_bytes(*, fused: bool) -> Fraction:
    """Activation bytes per layer of Llama-3-70B's block in units of s·b·h, bf16 (2 bytes), no dropout, the S x S
    scores left out (Korthikanti et al. 2022's bookkeeping: every tensor a backward needs)."""
    h, kv = D70, K70 * H70  # hidden 8,192; K and V have 8 heads of 128
    ff = Fraction(F70, D70)  # SwiGLU width 28,672 = 3.5h
    attention = (
        2  # the RMSNorm's input
        + 2  # the QKV projections' input (the norm's output)
        + 2  # Q, for Q K^T
        + 2 * Fraction(kv, h) * 2  # K (for Q K^T) and V (for A V), 8 of 64 heads each
        + 2  # the attention output, the out-projection's input
    )
    mlp_in = 2 + 2  # the RMSNorm's input; the gate/up projections' input
    # gate output, up output (both needed whatever the kernel); SiLU output and the product (the down input) only
    # when not recomputed by a fused SwiGLU
    mlp = mlp_in + 2 * ff * (2 if fused else 4)
    return attention + mlp


def test_review6a_n3_the_34_is_sized_for_llama_3_70b():
    full, fused = _swiglu_block_bytes(fused=False), _swiglu_block_bytes(fused=True)
    assert (float(full), float(fused)) == (40.5, 26.5)
    flat = " ".join(_flat_page("7_Training_memory.py").split())
    assert (
        f"it is {float(full)}·s·b·h with every MLP intermediate stored and {float(fused)}·s·b·h with a fused SwiGLU "
        "that recomputes the SiLU output and the product"
    ) in flat
    helps = " ".join(x.help or "" for x in systems_common.problem_readouts("A10-03"))
    assert (
        f"with GQA it is {float(full)}sbh with every MLP intermediate stored, {float(fused)}sbh with a fused SwiGLU"
    ) in helps


def test_bug_review6_forward_flops_count_a_tied_models_output_head():
    from core.model_spec import CUSTOM, LLAMA3_8B, forward_flops_per_token

    # Llama-3.2-1B's shape (the page's custom model), tied: 16 layers, D 2,048, 32 heads, 8 KV heads, F 8,192,
    # V 128,256. A token multiplies every attention and MLP weight and the V x D output head (the tied matrix);
    # the input lookup and the norm gains multiply nothing: 2 FLOPs per multiplied weight
    L, D, N, K, F, V = 16, 2048, 32, 8, 8192, 128256
    hd = D // N
    per_layer = 2 * D * N * hd + 2 * D * K * hd + 3 * D * F
    assert float(forward_flops_per_token(CUSTOM, 0)) == 2 * (L * per_layer + V * D)
    # untied Llama-3-8B: its head is a second V x D matrix, multiplied; the input table is not
    L, D, N, K, F, V = 32, 4096, 32, 8, 14336, 128256
    hd = D // N
    per_layer = 2 * D * N * hd + 2 * D * K * hd + 3 * D * F
    assert float(forward_flops_per_token(LLAMA3_8B, 0)) == 2 * (L * per_layer + V * D)


def test_review8_moe_gains_less_at_small_batch_and_more_at_large_batch_in_the_model():
    # The caption and the docstring state both halves of the model's ordering (review 8): on the A2.8-MoE setup
    # (8 H200s at TP 8, fp8 weights, bf16 cache, context 512, k = 1, a = 0.85) DeepSeek-V3 with its MTP draft
    # against Llama-3-70B drafted by Llama-3-8B. The dense roofline is written out here from the configs.
    def llama(L, D, nq, K, F, V):
        n = L * (2 * D * D + 2 * D * K * 128 + 3 * D * F + 2 * D) + 2 * V * D + D
        matmul = 2 * (n - V * D - (2 * L * D + D))  # every weight but the embedding lookup and the norms
        return n, matmul, L, nq, K

    def step(model, batch, new, ctx):  # per GPU at TP 8: an eighth of the weights, the heads and the cache
        n, matmul, L, nq, K = model
        flops = batch * new * (matmul + 2 * L * nq * 256 * (ctx + new / 2))
        kv = batch * (ctx + new) * 2 * L * K * 128 * 2
        return max((n * 1 + kv) / 8 / H200_BW, flops / 8 / H200_PEAK)

    target, draft = llama(80, 8192, 64, 8, 28672, 128256), llama(32, 4096, 32, 8, 14336, 128256)
    k, alpha, ctx = 1, 0.85, 512
    E = 1 + alpha

    def dense(b):
        return E * step(target, b, 1, ctx) / (k * step(draft, b, 1, ctx) + step(target, b, k + 1, ctx))

    def moe(b):
        t_plain = _ds_step_seconds(b, 1, ctx)
        return E * t_plain / (k * _ds_step_seconds(b, 1, ctx, draft=True) + _ds_step_seconds(b, k + 1, ctx))

    assert moe(1) < dense(1) and moe(256) > dense(256)  # less at small batch, more at large batch
    want = {(m, b): f"×{f(b):.2f}" for m, f in (("DeepSeek-V3", moe), ("Llama-3-70B", dense)) for b in (1, 256)}
    want["DeepSeek-V3", 32] = f"×{moe(32):.2f}"  # the caption: the model's trend from batch 1 to 32 is up
    assert moe(32) > moe(1)
    assert want == {
        ("DeepSeek-V3", 1): "×1.17",
        ("DeepSeek-V3", 32): "×1.36",
        ("DeepSeek-V3", 256): "×1.81",
        ("Llama-3-70B", 1): "×1.66",
        ("Llama-3-70B", 256): "×0.86",
    }
    spec = serving_view.SPEC
    preset = spec.presets[next(n for n in spec.presets if n.startswith("A2.8-MoE:"))]
    for (model, b), text in want.items():
        draft_name = "DeepSeek-V3 MTP" if model == "DeepSeek-V3" else "Llama-3-8B"
        state = spec.state({**preset, "srv_model": model, "draft": draft_name, "batch": b})
        view = serving_view.figures(state, Options(parts=frozenset()))
        assert next(x.value for x in view.readouts if x.label == f"Speculative speed-up, batch {b:,}") == text
    doc = " ".join((serving.speculative_speedup_vs_batch.__doc__ or "").split())
    assert (
        "DeepSeek-V3 with its MTP draft x1.17 at B = 1, x1.36 at B = 32 and x1.81 at B = 256, Llama-3-70B drafted "
        "by Llama-3-8B x1.66 at B = 1 and x0.86 at B = 256" in doc
    )
    assert "the opposite trend to the model's" in doc
    flat = " ".join(_flat_page("8_Serving.py").split())
    assert (
        "1.8× at batch 1 and 1.5× at batch 32, falling with batch, whereas the model, for the same hardware and draft "
        "and assuming k = 1 and a = 0.85 (SGLang states neither), is higher at batch 32 (×1.36) than at batch 1 "
        "(×1.17), after a dip to ×1.06 at batch 4" in flat
    )
    assert "therefore gives an MoE less gain than a dense model at small batch and more at larger batch" in flat
    assert "is higher at batch 32 (×1.36) than at batch 1 (×1.17), after a dip to ×1.06 at batch 4" in flat
    # review 11: the dip is the curve's lowest point between batch 1 and 32 (batch 2, 4, 8, 16)
    assert f"×{moe(4):.2f}" == "×1.06" and moe(4) == min(moe(b) for b in (1, 2, 4, 8, 16, 32))
    assert "Those orderings are the model's results, not measurements" in flat
