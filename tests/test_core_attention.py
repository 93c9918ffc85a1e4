"""core.attention: equal to torch's fused attention, rows sum to 1, causality, the sqrt(d_k) statistics, the KV-cache
numbers of the lesson, tokenisation of awkward text and the toy model."""

import math
import time
import zlib

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp

from core import attention, kv_cache, tokenizer, toy_attention
from core.device import get_device
from viz import format as fmt

KiB, GiB = 2**10, 2**30


def _qkv(*shape_q, kv_heads=None, t_k=None, d_v=None, seed=0, dtype=torch.float64):
    """Random q, k, v on core's device; shape_q = (..., heads, T, d_k)."""
    gen = torch.Generator().manual_seed(seed)
    *lead, H, T, d = shape_q
    H_kv, T_k = kv_heads or H, t_k or T
    q = torch.randn(*lead, H, T, d, generator=gen, dtype=dtype)
    k = torch.randn(*lead, H_kv, T_k, d, generator=gen, dtype=dtype)
    v = torch.randn(*lead, H_kv, T_k, d_v or d, generator=gen, dtype=dtype)
    dev = get_device()
    return q.to(dev), k.to(dev), v.to(dev)


def _close(a, b, atol=1e-6):
    return torch.allclose(a.cpu().double(), b.cpu().double(), atol=atol, rtol=0)


# --- equal to torch.nn.functional.scaled_dot_product_attention -------------------------------------------------


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("scale", [None, 0.3, 1.0, 2.5])
def test_matches_torch_sdpa(causal, scale):
    q, k, v = _qkv(2, 4, 10, 8, d_v=6)
    ours = attention.attention(q, k, v, scale=scale, causal=causal)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    assert ours.shape == ref.shape == (2, 4, 10, 6)
    assert _close(ours, ref, atol=1e-6)
    # the weights too: A V with A from attention_weights
    A = attention.attention_weights(q, k, scale=scale, causal=causal)
    assert _close(A @ v, ref, atol=1e-6)


@pytest.mark.parametrize("kv_heads", [1, 2, 4])
@pytest.mark.parametrize("causal", [False, True])
def test_gqa_and_mqa_match_torch_enable_gqa(kv_heads, causal):
    q, k, v = _qkv(3, 8, 7, 5, kv_heads=kv_heads, seed=1)
    ours = attention.attention(q, k, v, causal=causal)
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, enable_gqa=True)
    assert _close(ours, ref, atol=1e-6)
    # the same as repeating the KV heads by hand: query head h reads KV head h // (8 / kv_heads)
    k_rep = attention.repeat_kv(k, 8)
    for h in range(8):
        assert torch.equal(k_rep[:, h], k[:, h // (8 // kv_heads)])


def test_float32_inputs_stay_float32_and_match():
    q, k, v = _qkv(1, 2, 16, 32, dtype=torch.float32)
    ours = attention.attention(q, k, v, causal=True)
    assert ours.dtype == torch.float32
    assert _close(ours, F.scaled_dot_product_attention(q, k, v, is_causal=True), atol=1e-5)


def test_outputs_follow_the_input_device():
    q, k, v = (t.cpu() for t in _qkv(2, 5, 4))
    assert attention.attention(q, k, v).device.type == "cpu"
    assert attention.attention_weights(q, k).device.type == "cpu"


def test_numpy_and_list_inputs_become_tensors_on_core_device():
    q = np.random.default_rng(0).normal(size=(2, 3, 4))
    out = attention.attention(q, q, q)
    assert isinstance(out, torch.Tensor) and out.device.type == get_device().type
    assert out.shape == (2, 3, 4)


@settings(max_examples=40, deadline=None)
@given(
    lead=st.integers(1, 3),
    heads=st.integers(1, 4),
    t=st.integers(1, 12),
    d=st.integers(1, 16),
    scale=st.one_of(st.none(), st.floats(1e-3, 50.0)),  # torch's SDPA gives NaN at scale 0 with a mask (0 · −inf)
    causal=st.booleans(),
    seed=st.integers(0, 10_000),
)
def test_property_rows_sum_to_one_and_match_sdpa(lead, heads, t, d, scale, causal, seed):
    q, k, v = _qkv(lead, heads, t, d, seed=seed)
    A = attention.attention_weights(q, k, scale=scale, causal=causal)
    assert torch.isfinite(A).all()
    assert _close(A.sum(-1), torch.ones(lead, heads, t), atol=1e-12)
    assert (A >= 0).all()
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)
    assert _close(attention.attention(q, k, v, scale=scale, causal=causal), ref, atol=1e-6)


def test_huge_logits_do_not_overflow():
    q, k, _ = _qkv(1, 1, 6, 4)
    A = attention.attention_weights(q * 1e6, k * 1e6, causal=True)
    assert torch.isfinite(A).all()
    assert _close(A.sum(-1), torch.ones(1, 1, 6), atol=1e-12)
    assert ((A == 0) | (A == 1)).float().mean() > 0.9  # saturated: one-hot rows


def test_scale_zero_gives_uniform_rows():
    q, k, _ = _qkv(1, 1, 5, 3)
    A = attention.attention_weights(q, k, scale=0.0, causal=True)
    expected = torch.tril(torch.ones(5, 5, dtype=torch.float64)) / torch.arange(1, 6)[:, None]
    assert _close(A[0, 0], expected, atol=1e-15)


# --- the causal mask ---------------------------------------------------------------------------------------------


def test_causal_mask_shapes():
    assert torch.equal(attention.causal_mask(3).cpu(), torch.tensor([[1, 0, 0], [1, 1, 0], [1, 1, 1]]).bool())
    # a KV cache: 2 new queries are the last 2 of 4 positions
    assert torch.equal(attention.causal_mask(2, 4).cpu(), torch.tensor([[1, 1, 1, 0], [1, 1, 1, 1]]).bool())
    with pytest.raises(ValueError, match="query_tokens <= key_tokens"):
        attention.causal_mask(4, 2)


def test_changing_later_tokens_leaves_earlier_outputs_unchanged():
    q, k, v = _qkv(2, 3, 9, 4, seed=3)
    y = attention.attention(q, k, v, causal=True)
    q2, k2, v2 = q.clone(), k.clone(), v.clone()
    q2[..., 6:, :] += 10.0
    k2[..., 6:, :] += 10.0
    v2[..., 6:, :] -= 7.0
    y2 = attention.attention(q2, k2, v2, causal=True)
    assert torch.equal(y[..., :6, :], y2[..., :6, :])  # exactly: masked weights are 0
    assert not torch.allclose(y[..., 6:, :], y2[..., 6:, :])
    # without the mask the past does see the future
    assert not torch.allclose(attention.attention(q, k, v)[..., :6, :], attention.attention(q2, k2, v2)[..., :6, :])


def test_cached_decoding_equals_full_recompute():
    q, k, v = _qkv(1, 4, 8, 6, kv_heads=2, seed=5)
    full = attention.attention(q, k, v, causal=True)
    for t in range(8):  # one new query at a time over a growing cache
        step = attention.attention(q[..., t : t + 1, :], k[..., : t + 1, :], v[..., : t + 1, :], causal=True)
        assert _close(step, full[..., t : t + 1, :], atol=1e-12)
    # a block of 3 new queries against the whole cache: the bottom-right aligned mask
    block = attention.attention(q[..., 5:, :], k, v, causal=True)
    assert _close(block, full[..., 5:, :], atol=1e-12)
    mask = attention.causal_mask(3, 8, device=q.device)
    ref = F.scaled_dot_product_attention(
        q[..., 5:, :], attention.repeat_kv(k, 4), attention.repeat_kv(v, 4), attn_mask=mask
    )
    assert _close(block, ref, atol=1e-12)


@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("t_q", [8, 3])
def test_query_blocks_give_the_same_result(causal, t_q):
    q, k, v = _qkv(2, 2, t_q, 5, t_k=8, seed=7)
    whole = attention.attention(q, k, v, causal=causal, query_block=10_000)
    for block in (1, 2, 3):
        assert _close(attention.attention(q, k, v, causal=causal, query_block=block), whole, atol=1e-14)


def test_mask_after_softmax_bug_loses_exactly_the_future_mass():
    q, k, _ = _qkv(1, 1, 7, 4, seed=2)
    cmp = attention.mask_comparison(q[0, 0], k[0, 0])
    assert np.allclose(cmp.correct_row_sums, 1.0, atol=1e-12)
    # independent check with scipy: a buggy row keeps the share of exp(s) that lies on or before the diagonal
    s = (q[0, 0] @ k[0, 0].T).cpu().numpy() / 2.0  # 1/sqrt(d_k) with d_k = 4
    kept = np.array([np.exp(logsumexp(s[i, : i + 1]) - logsumexp(s[i])) for i in range(7)])
    assert np.allclose(cmp.buggy_row_sums, kept, atol=1e-12)
    assert np.all(cmp.buggy_row_sums[:-1] < 1) and cmp.buggy_row_sums[-1] == pytest.approx(1.0)
    # the bug is the correct row scaled down by that share
    assert np.allclose(cmp.buggy, cmp.correct * kept[:, None], atol=1e-12)


def test_row_entropy():
    A = torch.tensor([[1.0, 0.0, 0.0], [0.5, 0.5, 0.0], [1 / 3, 1 / 3, 1 / 3]], dtype=torch.float64)
    assert np.allclose(attention.row_entropy(A).cpu().numpy(), [0.0, math.log(2), math.log(3)], atol=1e-12)


@pytest.mark.parametrize(
    ("args", "kwargs", "match"),
    [
        (((2, 3, 4), (2, 3, 5)), {}, "same last dimension"),
        (((2, 3, 4), (2, 0, 4)), {}, "at least one key"),
        (((2, 5, 4), (2, 3, 4)), {"causal": True}, "T_q <= T_k"),
        (((3, 2, 4), (2, 2, 4)), {}, "do not divide"),
        (((2, 3, 4), (2, 3, 4)), {"scale": -1.0}, "scale must be >= 0"),
        (((2, 3, 4), (2, 3, 4)), {"scale": float("nan")}, "finite"),
        (((4,), (4,)), {}, "shape"),
    ],
)
def test_invalid_inputs_raise_value_error(args, kwargs, match):
    q, k = (torch.zeros(s, dtype=torch.float64) for s in args)
    with pytest.raises(ValueError, match=match):
        attention.attention_weights(q, k, **kwargs)


def test_mixed_devices_are_refused_when_a_second_device_exists():
    if not torch.cuda.is_available():
        pytest.skip("needs a GPU")
    with pytest.raises(ValueError, match="one device"):
        attention.attention(torch.zeros(2, 3), torch.zeros(2, 3, device="cuda"), torch.zeros(2, 3))


# --- the scale and the logit statistics -------------------------------------------------------------------------


def test_resolve_scale():
    assert attention.resolve_scale("sqrt_dk", 64) == pytest.approx(1 / 8)
    assert attention.resolve_scale("none", 64) == 1.0
    assert attention.resolve_scale("sqrt_dmodel", 64, d_model=1024) == pytest.approx(1 / 32)
    assert attention.resolve_scale("sqrt_dk", 64, temperature=2.0) == pytest.approx(1 / 16)
    with pytest.raises(ValueError, match="needs d_model"):
        attention.resolve_scale("sqrt_dmodel", 64)
    with pytest.raises(ValueError, match="temperature"):
        attention.resolve_scale("sqrt_dk", 64, temperature=0)
    with pytest.raises(ValueError, match="expected one of"):
        attention.resolve_scale("sqrt_d", 64)


def test_lesson_example_logit_spread_at_dk_128():
    # the lesson: at d_k = 128 unscaled logits have std sqrt(128) = 11.3, so they span roughly ±11
    assert math.sqrt(attention.expected_logit_variance(128, "none")) == pytest.approx(11.31, abs=0.01)
    assert attention.expected_logit_variance(128, "sqrt_dk") == pytest.approx(1.0)
    assert attention.expected_logit_variance(128, "sqrt_dmodel", d_model=1024) == pytest.approx(0.125)


def test_logit_variance_grows_like_dk_unscaled_and_stays_near_one_scaled():
    stats = attention.logit_statistics(tokens=64, samples=8, d_model=1024, seed=0)
    d = stats.d_k.astype(float)
    # unscaled: Var = d_k (within 15%); scaled: about 1; the trap: d_k / d_model
    assert np.allclose(stats.variance["none"] / d, 1.0, atol=0.15)
    assert np.allclose(stats.variance["sqrt_dk"], 1.0, atol=0.15)
    assert np.allclose(stats.variance["sqrt_dmodel"] / (d / 1024), 1.0, atol=0.15)
    slope = np.polyfit(np.log(d), np.log(stats.variance["none"]), 1)[0]
    assert slope == pytest.approx(1.0, abs=0.03)
    # saturation: unscaled rows become nearly one-hot, scaled rows keep their entropy
    assert stats.entropy["none"][-1] < 0.3 and stats.max_weight["none"][-1] > 0.9
    assert np.all(stats.entropy["sqrt_dk"] > 3.4)  # log 64 = 4.16; about log T - Var/2 for Gaussian logits
    assert stats.entropy["sqrt_dk"][-1] == pytest.approx(math.log(64) - 0.5, abs=0.1)
    assert np.all(np.diff(stats.entropy["none"]) < 0)
    assert stats.max_entropy == pytest.approx(math.log(64))


def test_temperature_divides_the_logits():
    hot = attention.logit_statistics((16,), temperature=2.0)
    assert hot.variance["sqrt_dk"][0] == pytest.approx(0.25, rel=0.15)
    assert hot.expected_variance["none"][0] == pytest.approx(4.0)


# --- the KV cache (lesson numbers) ------------------------------------------------------------------------------


def test_llama3_70b_kv_cache_numbers():
    shape = kv_cache.KV_PRESETS["Llama-3-70B"]
    assert (shape.layers, shape.query_heads, shape.kv_heads, shape.head_dim) == (80, 64, 8, 128)
    assert kv_cache.kv_cache_bytes(80, 8, 128, 2) == 320 * KiB  # GQA
    assert kv_cache.kv_cache_bytes(80, 64, 128, 2) == 2560 * KiB  # full MHA
    assert kv_cache.kv_cache_bytes(80, 1, 128, 2) == 40 * KiB  # MQA
    assert kv_cache.kv_cache_bytes(80, 8, 128, 2, tokens=128 * 1024) == 40 * GiB  # one sequence at 128k
    assert kv_cache.kv_cache_bytes(80, 64, 128, 2, tokens=128 * 1024) == 320 * GiB
    variants = kv_cache.attention_variants(shape)
    assert variants == {"MHA": 64, "GQA": 8, "MQA": 1}
    assert {n: shape.bytes_per_token(h) // KiB for n, h in variants.items()} == {"MHA": 2560, "GQA": 320, "MQA": 40}
    assert fmt.binary_bytes(shape.bytes_per_token()) == "320 KiB"
    assert fmt.binary_bytes(kv_cache.kv_cache_bytes(80, 8, 128, 2, tokens=131072)) == "40 GiB"
    assert fmt.binary_bytes(2560 * KiB) == "2.5 MiB"


def test_kv_cache_other_presets_batch_and_arrays():
    assert kv_cache.KV_PRESETS["Llama-2-7B"].bytes_per_token() == 512 * KiB
    assert kv_cache.KV_PRESETS["Llama-3-8B"].bytes_per_token() == 128 * KiB
    assert kv_cache.kv_cache_bytes(80, 8, 128, 2, tokens=1000, batch=4) == 4 * 1000 * 320 * KiB
    tokens = np.array([1, 1024, 131072])
    out = kv_cache.kv_cache_bytes(80, 8, 128, 2, tokens=tokens)
    assert out.dtype == np.int64 and out.tolist() == [320 * KiB, 320 * KiB * 1024, 40 * GiB]
    assert kv_cache.kv_cache_bytes(1, 1, 3, 0.5) == 3  # 4-bit values: 2 * 3 * 0.5 = 3 bytes
    assert kv_cache.kv_cache_bytes(80, 8, 128, 2, tokens=0) == 0


@pytest.mark.parametrize(
    "kwargs",
    [
        {"layers": 0},
        {"kv_heads": 2.5},
        {"head_dim": -1},
        {"bytes_per_value": 0},
        {"tokens": -5},
        {"bytes_per_value": float("inf")},
    ],
)
def test_kv_cache_rejects_invalid_arguments(kwargs):
    args = {"layers": 80, "kv_heads": 8, "head_dim": 128, "bytes_per_value": 2} | kwargs
    with pytest.raises(ValueError):
        kv_cache.kv_cache_bytes(**args)


def test_format_bytes():
    assert fmt.binary_bytes(0) == "0 B"
    assert fmt.binary_bytes(1023) == "1,023 B"
    assert fmt.binary_bytes(1536) == "1.5 KiB"
    assert fmt.binary_bytes(3 * 2**40) == "3 TiB"
    with pytest.raises(ValueError):
        fmt.binary_bytes(-1)


# --- tokens ---------------------------------------------------------------------------------------------------


def test_word_and_char_split():
    assert tokenizer.tokenize("the cat  sat\n on").tokens == ("the", "cat", "sat", "on")
    chars = tokenizer.tokenize("ab c", mode="char")
    assert chars.tokens == ("a", "b", " ", "c") and chars.total == 4 and chars.note == ""


def test_empty_text_gives_no_tokens():
    assert tokenizer.tokenize("").tokens == () and tokenizer.tokenize("").note == "No text to split."


def test_ten_thousand_characters_are_cut_with_a_note():
    text = ("word " * 2000)[:10_000]
    start = time.perf_counter()
    toks = tokenizer.tokenize(text)
    chars = tokenizer.tokenize(text, mode="char")
    assert time.perf_counter() - start < 1.0
    assert len(toks.tokens) == 64 and toks.total == 2000 and toks.truncated
    assert toks.note == "Showing the first 64 of 2,000 tokens."
    assert len(chars.tokens) == 64 and chars.total == 10_000


def test_non_ascii_and_emoji_stay_whole():
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # three people joined by zero-width joiners
    wave = "\U0001f44b\U0001f3fd"  # waving hand, medium skin tone
    flag = "\U0001f1eb\U0001f1f7"  # two regional indicators
    accent = "e\u0301"  # e + combining acute accent
    toks = tokenizer.tokenize(f"{family}{wave}{flag}{accent}日本", mode="char").tokens
    assert toks == (family, wave, flag, accent, "日", "本")
    assert tokenizer.tokenize("naïve café 🙂 Straße").tokens == ("naïve", "café", "🙂", "Straße")


def test_word_key_and_labels():
    assert (
        tokenizer.word_key("The,") == "the"
        and tokenizer.word_key("«cat»") == "cat"
        and tokenizer.word_key("!!") == "!!"
    )
    assert fmt.token_label(" ") == "␣" and fmt.token_label("\n") == "⏎"
    assert fmt.token_label("x" * 40) == "x" * 11 + "…"


def test_random_tokens_are_reproducible():
    a, b = tokenizer.random_tokens(512, seed=3), tokenizer.random_tokens(512, seed=3)
    assert a == b and len(a.tokens) == 512 and a.mode == "random"
    assert a.tokens != tokenizer.random_tokens(512, seed=4).tokens
    with pytest.raises(ValueError):
        tokenizer.random_tokens(0)
    with pytest.raises(ValueError):
        tokenizer.random_tokens(tokenizer.MAX_RANDOM_TOKENS + 1)


@pytest.mark.parametrize(("text", "mode"), [(None, "word"), ("x", "bpe")])
def test_tokenize_rejects_bad_arguments(text, mode):
    with pytest.raises(ValueError):
        tokenizer.tokenize(text, mode=mode)


# --- the toy model ---------------------------------------------------------------------------------------------


SENTENCE = tuple(tokenizer.DEFAULT_TEXT.split())


def test_toy_model_is_reproducible_and_seeded():
    s = toy_attention.ToyModelSettings(d_model=32, heads=4, d_k=8, seed=1)
    a, b = toy_attention.toy_qkv(SENTENCE, s), toy_attention.toy_qkv(SENTENCE, s)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.k, b.k) and np.array_equal(a.v, b.v)
    c = toy_attention.toy_qkv(SENTENCE, toy_attention.ToyModelSettings(d_model=32, heads=4, d_k=8, seed=2))
    assert not np.allclose(a.q, c.q)
    assert a.q.shape == (4, len(SENTENCE), 8) and a.k.shape == (4, len(SENTENCE), 8)


def test_same_word_same_embedding_and_unit_scale():
    s = toy_attention.ToyModelSettings(d_model=64, heads=4, d_k=16, position_strength=0.0)
    x = toy_attention.toy_embeddings(["The", "cat", "the", "dog"], s)
    assert np.allclose(x[0], x[2]) and not np.allclose(x[0], x[1])
    x = toy_attention.toy_embeddings(
        list(tokenizer.random_tokens(256).tokens), toy_attention.ToyModelSettings(d_model=128, heads=4, d_k=32)
    )
    np.testing.assert_allclose((x**2).mean(-1), np.ones(256), rtol=0, atol=1e-12)  # unit RMS rows
    q = toy_attention.toy_qkv(
        tokenizer.random_tokens(256).tokens, toy_attention.ToyModelSettings(d_model=128, heads=4, d_k=32)
    ).q
    assert 0.7 < q.var() < 1.3  # roughly unit-variance components, as the sqrt(d_k) argument assumes


def test_gqa_in_the_toy_model_shares_keys_within_groups():
    s = toy_attention.ToyModelSettings(d_model=64, heads=8, d_k=8, kv_heads=2)
    qkv = toy_attention.toy_qkv(SENTENCE, s)
    assert qkv.k.shape == (2, len(SENTENCE), 8)
    res = toy_attention.toy_attention(SENTENCE, s, designed=False)
    assert res.kv_group == (0, 0, 0, 0, 1, 1, 1, 1)
    assert res.head_names[5] == "head 6 · KV 2"
    q, k, v = (torch.as_tensor(t) for t in (qkv.q, qkv.k, qkv.v))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True)
    assert np.allclose(res.outputs, ref.cpu().numpy(), atol=1e-5)


def test_designed_heads_show_their_patterns():
    toks = ("the", "cat", "sat", "on", "The", "mat")
    res = toy_attention.toy_attention(toks, toy_attention.ToyModelSettings(), causal=True)
    assert res.head_names[-3:] == toy_attention.DESIGNED_PATTERNS
    prev, first, same = res.weights[-3], res.weights[-2], res.weights[-1]
    assert prev.dtype == np.float32 and np.allclose(res.weights.sum(-1), 1.0, atol=1e-5)
    assert list(prev.argmax(-1)) == [0, 0, 1, 2, 3, 4]
    assert np.all(first.argmax(-1) == 0)
    assert same[4, 0] == pytest.approx(0.5, abs=0.01) and same[4, 4] == pytest.approx(0.5, abs=0.01)
    # under the correct scale the chosen key's logit is `strength` above the rest: row 5 of 'previous token'
    # puts e^8 / (e^8 + 5) on key 4
    assert prev[5, 4] == pytest.approx(math.exp(8) / (math.exp(8) + 5), abs=1e-5)
    sharper = toy_attention.toy_attention(toks, toy_attention.ToyModelSettings(), scale="none")
    assert sharper.entropy[-3] < res.entropy[-3]


def test_toy_attention_matches_core_attention_and_notes_the_scale():
    s = toy_attention.ToyModelSettings(d_model=48, heads=3, d_k=16)
    res = toy_attention.toy_attention(SENTENCE, s, scale="sqrt_dmodel", temperature=1.5, causal=False, designed=False)
    qkv = toy_attention.toy_qkv(SENTENCE, s)
    mult = 1 / math.sqrt(48) / 1.5
    assert res.multiplier == pytest.approx(mult)
    q, k, v = (torch.as_tensor(t) for t in (qkv.q, qkv.k, qkv.v))
    ref = F.scaled_dot_product_attention(q, k, v, scale=mult)
    assert np.allclose(res.outputs, ref.cpu().numpy(), atol=1e-5)
    assert res.notes and "0.09623" in res.notes[0]
    assert res.weights.shape == (3, len(SENTENCE), len(SENTENCE)) and res.logit_std.shape == (3,)


def test_toy_causality_check():
    check = toy_attention.causality_check(SENTENCE, toy_attention.ToyModelSettings())
    assert check.position == len(SENTENCE) - 1 and check.old_token == "tired" and check.new_token == "zebra"
    assert check.max_change_before_causal == 0.0
    assert check.max_change_before_unmasked > 1e-3
    assert check.max_change_from_position > 1e-3
    middle = toy_attention.causality_check(SENTENCE, toy_attention.ToyModelSettings(), position=4, new_token="a")
    assert middle.max_change_before_causal == 0.0
    with pytest.raises(ValueError):
        toy_attention.causality_check(SENTENCE, toy_attention.ToyModelSettings(), position=0)
    with pytest.raises(ValueError):
        toy_attention.causality_check(("one",), toy_attention.ToyModelSettings())


@pytest.mark.parametrize(
    "kwargs",
    [{"d_model": 0}, {"heads": 3, "kv_heads": 2}, {"d_k": 2000}, {"seed": -1}, {"position_strength": float("nan")}],
)
def test_settings_validate(kwargs):
    with pytest.raises(ValueError):
        toy_attention.ToyModelSettings(**kwargs)


def test_empty_token_list_is_refused():
    with pytest.raises(ValueError, match="at least one token"):
        toy_attention.toy_attention((), toy_attention.ToyModelSettings())


def test_sinusoidal_positions():
    pe = toy_attention.sinusoidal_positions(5, 7)
    assert pe.shape == (5, 7)
    assert pe[3, 0] == pytest.approx(math.sin(3)) and pe[3, 1] == pytest.approx(math.cos(3))
    assert pe[2, 2] == pytest.approx(math.sin(2 / 10000 ** (2 / 7)))


# --- helpers the page reads (phase 2) -------------------------------------------------------------------------


def test_kv_cache_comparison_has_the_lesson_numbers():
    shape = kv_cache.KV_PRESETS["Llama-3-70B"]
    kv = kv_cache.kv_cache_comparison(shape.layers, shape.query_heads, shape.kv_heads, shape.head_dim, 2, 131072)
    assert kv.labels == ("MHA: 64 KV heads", "GQA: 8 KV heads", "MQA: 1 KV head")
    assert kv.per_token == (2560 * KiB, 320 * KiB, 40 * KiB)
    assert kv.total == (320 * GiB, 40 * GiB, 5 * GiB)
    assert kv.chosen == 1 and kv.group_size == 8 and kv.saving_vs_mha == 8
    assert kv.names == ("MHA", "GQA", "MQA")
    assert [fmt.binary_bytes(b, "KiB") for b in kv.per_token] == ["2,560 KiB", "320 KiB", "40 KiB"]
    # the same numbers as kv_cache_bytes, with a batch and fp8
    kv8 = kv_cache.kv_cache_comparison(80, 64, 8, 128, kv_cache.BYTES_PER_VALUE["fp8"], 1000, 3)
    assert kv8.total[1] == kv_cache.kv_cache_bytes(80, 8, 128, 1, tokens=1000, batch=3)


def test_kv_cache_comparison_merges_rows():
    mha = kv_cache.kv_cache_comparison(32, 32, 32, 128)  # Llama-2-7B: its own KV heads are MHA
    assert mha.labels == ("MHA: 32 KV heads", "MQA: 1 KV head") and mha.chosen == 0 and mha.saving_vs_mha == 1
    mqa = kv_cache.kv_cache_comparison(32, 32, 1, 128)
    assert mqa.chosen == 1 and mqa.group_size == 32
    odd = kv_cache.kv_cache_comparison(80, 64, 6, 128)  # counted as given, though a GQA model needs equal groups
    assert odd.per_token[1] == 2 * 80 * 6 * 128 * 2


@pytest.mark.parametrize(
    "args",
    [
        (0, 64, 8, 128),
        (80.0, 64, 8, 128),
        (80, 64, 8, -1),
        (80, 8, 64, 128),  # more KV heads than query heads
        (80, 64, 8, 128, 0),
        (80, 64, 8, 128, float("nan")),
        (80, 64, 8, 128, 2, 0),
        (80, 64, 8, 128, 2, 1, True),
    ],
)
def test_kv_cache_comparison_refuses_invalid_arguments(args):
    with pytest.raises(ValueError):
        kv_cache.kv_cache_comparison(*args)


def test_variant_name():
    assert [kv_cache.variant_name(64, k) for k in (64, 8, 1)] == ["MHA", "GQA", "MQA"]
    assert kv_cache.variant_name(1, 1) == "MHA"


def test_format_bytes_with_a_fixed_unit():
    assert fmt.binary_bytes(2560 * KiB, "KiB") == "2,560 KiB"
    assert fmt.binary_bytes(40 * GiB, "GiB") == "40 GiB"
    assert fmt.binary_bytes(512, "KiB") == "0.5 KiB"
    with pytest.raises(ValueError):
        fmt.binary_bytes(1, "KB")


def test_head_summary_averages_the_model_heads_only():
    s = toy_attention.ToyModelSettings(d_model=64, heads=4, d_k=16)
    res = toy_attention.toy_attention(SENTENCE, s)
    summary = toy_attention.head_summary(res, 4)
    assert summary.logit_std == pytest.approx(float(res.logit_std[:4].mean()))
    assert summary.entropy == pytest.approx(float(res.entropy[:4].mean()))
    T = len(SENTENCE)  # causal by default: row t can spread over t keys only, so its bound is log t, not log T
    assert summary.max_entropy == pytest.approx(sum(math.log(t) for t in range(1, T + 1)) / T)
    assert summary.entropy_share == pytest.approx(summary.entropy / summary.max_entropy)
    unmasked = toy_attention.head_summary(toy_attention.toy_attention(SENTENCE, s, causal=False), 4)
    assert unmasked.max_entropy == pytest.approx(math.log(T))
    assert 0 < summary.entropy_share < 1 and 0 < summary.max_weight <= 1
    hot = toy_attention.head_summary(
        toy_attention.toy_attention(SENTENCE, toy_attention.ToyModelSettings(d_model=512, heads=4, d_k=128), "none"), 4
    )
    assert hot.max_weight > 0.9 > summary.max_weight  # no scale at d_k = 128: nearly one-hot rows
    one = toy_attention.head_summary(toy_attention.toy_attention(("hi",), s), 4)
    assert one.entropy_share == 1.0 and one.max_weight == pytest.approx(1.0)
    with pytest.raises(ValueError):
        toy_attention.head_summary(res, 8)


def test_toy_mask_comparison_uses_the_heads_kv_group():
    s = toy_attention.ToyModelSettings(d_model=64, heads=4, d_k=16, kv_heads=2)
    cmp = toy_attention.toy_mask_comparison(SENTENCE, s, head=3, temperature=2.0)
    res = toy_attention.toy_attention(SENTENCE, s, temperature=2.0, designed=False)
    np.testing.assert_allclose(cmp.correct, res.weights[3], atol=1e-6)
    assert cmp.correct_sum_error < 1e-12
    low, high = cmp.buggy_sum_range
    assert low < 1 and high == pytest.approx(1.0)
    with pytest.raises(ValueError):
        toy_attention.toy_mask_comparison(SENTENCE, s, head=4)


def test_projections_are_cached_but_identical():
    s = toy_attention.ToyModelSettings(d_model=32, heads=2, d_k=16, seed=5)
    a = toy_attention.toy_qkv(SENTENCE, s)
    toy_attention._projection_cpu.cache_clear()
    b = toy_attention.toy_qkv(SENTENCE, s)
    assert np.array_equal(a.q, b.q) and np.array_equal(a.v, b.v)
    with pytest.raises(ValueError):  # the cached projection is shared: read-only
        toy_attention._projection_cpu(5, 1, 32, 32)[0, 0] = 1.0


def test_row_entropy_bound_is_log_t_under_the_causal_mask():
    T = 7
    np.testing.assert_allclose(attention.row_entropy_bound(T, causal=True), [math.log(t) for t in range(1, T + 1)])
    np.testing.assert_allclose(attention.row_entropy_bound(T, causal=False), [math.log(T)] * T)
    # zero logits under the causal mask: every row is uniform over its t visible keys and reaches the bound
    q = torch.zeros(1, T, 4, dtype=torch.float64)
    A = attention.attention_weights(q, q, causal=True)[0]  # (T, T)
    H = -(A * torch.log(torch.where(A > 0, A, torch.ones_like(A)))).sum(-1)
    np.testing.assert_allclose(H.cpu().numpy(), attention.row_entropy_bound(T, causal=True), atol=1e-12)
    with pytest.raises(ValueError):
        attention.row_entropy_bound(0, causal=True)


# --- the numpy functions equal the torch ones (the toy and the page's first figure never import torch) ----------


@pytest.mark.parametrize("seed", [0, 5, 123_456_789 * 7919 + 4])  # the last is above 2^32: torch keeps its low bits
@pytest.mark.parametrize("sizes", [(1,), (15,), (16,), (27,), (4096,), (3, 40, 1, 5, 17), (2, 1, 2)])
def test_torch_randn_gives_torch_randns_numbers(seed, sizes):
    # one generator for the sizes in turn: small draws keep a spare normal for the next small draw, as torch's do.
    # The same uniforms go through log, cos and sin in both; numpy's SIMD versions of those (on AVX-512 machines)
    # may differ from the C library's in the last bit, so equal to round-off rather than bit for bit
    gen = torch.Generator().manual_seed(seed)
    expected = [torch.randn(n, generator=gen, dtype=torch.float64).numpy() for n in sizes]
    for ours, ref in zip(attention.torch_randn(seed, *sizes), expected, strict=True):
        assert ours.shape == ref.shape
        np.testing.assert_allclose(ours, ref, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize(
    ("shape_q", "kv_heads", "t_k", "scale"),
    [
        ((4, 11, 16), None, None, None),  # the default toy's shape: 4 heads, the 11-word sentence, d_k = 16
        ((2, 8, 5, 7), 2, 9, 0.3),  # a batch, GQA (4 query heads per KV head), T_q < T_k (a KV cache), a scale
        ((3, 6, 4), 1, None, 4.0),  # MQA and logits large enough to need the row maximum subtracted
    ],
)
@pytest.mark.parametrize("causal", [True, False])
def test_numpy_attention_equals_the_torch_functions(shape_q, kv_heads, t_k, scale, causal):
    q, k, v = (t.cpu() for t in _qkv(*shape_q, kv_heads=kv_heads, t_k=t_k, seed=sum(shape_q)))
    qn, kn, vn = q.numpy(), k.numpy(), v.numpy()

    def same(ours, ref, tol=1e-12):
        assert isinstance(ours, np.ndarray)
        np.testing.assert_allclose(ours, ref.cpu().double().numpy(), rtol=tol, atol=tol)

    same(attention.attention_logits_np(qn, kn, scale), attention.attention_logits(q, k, scale))
    A = attention.attention_weights(q, k, scale, causal=causal)
    same(attention.attention_weights_np(qn, kn, scale, causal=causal), A)
    same(attention.attention_np(qn, kn, vn, scale, causal=causal), attention.attention(q, k, v, scale, causal=causal))
    same(attention.row_entropy_np(A.numpy()), attention.row_entropy(A))
    same(attention.repeat_kv(kn, shape_q[-3]), attention.repeat_kv(k, shape_q[-3]), tol=0)
    T_q, T_k = shape_q[-2], t_k or shape_q[-2]
    assert np.array_equal(attention.causal_mask_np(T_q, T_k), attention.causal_mask(T_q, T_k).cpu().numpy())
    ours, ref = attention.mask_comparison_np(qn, kn, scale), attention.mask_comparison(q, k, scale)
    for name in ("correct", "buggy", "correct_row_sums", "buggy_row_sums"):
        np.testing.assert_allclose(getattr(ours, name), getattr(ref, name), rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="do not divide"):
        attention.attention_weights_np(np.zeros((3, 2, 4)), np.zeros((2, 2, 4)))  # 2 KV heads for 3 query heads
    with pytest.raises(ValueError, match="same last dimension"):
        attention.attention_np(qn, kn[..., :-1], vn)


def _torch_toy_qkv(tokens, s: toy_attention.ToyModelSettings):
    """The toy's Q, K, V computed as the torch version of core.toy_attention did: torch's sinusoids and RMS, the
    projections drawn with torch.randn (seed · 7919 + which), reshaped into heads with view/transpose."""
    keys = np.array([zlib.crc32(tokenizer.word_key(t).encode("utf-8")) for t in tokens], dtype=np.uint64)
    E = torch.as_tensor(toy_attention._hashed_normal(keys, s.d_model, s.seed))  # (T, d_model), the hashed words
    t = torch.arange(len(tokens), dtype=torch.float64)[:, None]
    i = torch.arange(0, s.d_model, 2, dtype=torch.float64)
    pe = torch.stack([torch.sin(t / 10000 ** (i / s.d_model)), torch.cos(t / 10000 ** (i / s.d_model))], dim=-1)
    x = E + s.position_strength * pe.reshape(len(tokens), -1)[:, : s.d_model]
    x = x / x.pow(2).mean(dim=-1, keepdim=True).sqrt()

    def heads(which, n):
        gen = torch.Generator().manual_seed(s.seed * 7919 + which)
        W = torch.randn(s.d_model, n * s.d_k, generator=gen, dtype=torch.float64) / math.sqrt(s.d_model)
        return (x @ W).view(len(tokens), n, s.d_k).transpose(0, 1)  # (n, T, d_k)

    return heads(1, s.heads), heads(2, s.n_kv_heads), heads(3, s.n_kv_heads), heads(4, 3)


@pytest.mark.parametrize(
    ("tokens", "settings", "scale", "temperature", "causal"),
    [
        (SENTENCE, toy_attention.ToyModelSettings(), "sqrt_dk", 1.0, True),  # the page's defaults
        (
            tokenizer.random_tokens(37, 4).tokens,
            toy_attention.ToyModelSettings(d_model=40, heads=8, d_k=5, kv_heads=2, seed=9, position_strength=0.5),
            "sqrt_dmodel",
            2.5,
            False,
        ),
        (SENTENCE[:3], toy_attention.ToyModelSettings(d_model=3, heads=1, d_k=3, seed=7), "none", 0.5, True),
    ],
)
def test_the_numpy_toy_layer_equals_its_torch_forward(tokens, settings, scale, temperature, causal):
    """The toy is numpy; torch (the projections torch.randn drew before, core.attention's torch functions) is the
    reference: the same heads to round-off, so its pictures are the ones the torch toy drew."""
    q, k, v, v_designed = _torch_toy_qkv(tokens, settings)
    qkv = toy_attention.toy_qkv(tokens, settings)
    for ours, ref in ((qkv.q, q), (qkv.k, k), (qkv.v, v)):
        np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(toy_attention.designed_qkv(tokens, settings).v, v_designed.numpy(), atol=1e-12)
    res = toy_attention.toy_attention(tokens, settings, scale, temperature, causal, designed=True)
    H = settings.heads
    m = attention.resolve_scale(scale, settings.d_k, settings.d_model, temperature)
    A = attention.attention_weights(q, k, scale=m, causal=causal)  # (H, T, T) torch, float64
    y = attention.attention(q, k, v, scale=m, causal=causal)  # (H, T, d_k)
    std = attention.attention_logits(q, k, scale=m).flatten(1).std(dim=1, correction=0)  # (H,)
    for ours, ref in ((res.weights[:H], A), (res.outputs[:H], y), (res.entropy[:H], attention.row_entropy(A).mean(-1))):
        np.testing.assert_allclose(ours, ref.numpy(), rtol=1e-6, atol=1e-7)  # the toy returns float32
    np.testing.assert_allclose(res.logit_std[:H], std.numpy(), rtol=1e-6)
    cmp = toy_attention.toy_mask_comparison(tokens, settings, head=H - 1, scale=scale, temperature=temperature)
    ref = attention.mask_comparison(q[H - 1], k[-1], scale=m)  # the last head reads the last KV head
    np.testing.assert_allclose(cmp.buggy, ref.buggy, rtol=1e-12, atol=1e-15)


def _torch_logit_statistics(d_k_values, tokens, samples, d_model, temperature, seed):
    """core.attention.logit_statistics as it was in torch (the draws, var, log_softmax): the reference."""
    d = np.asarray(d_k_values)
    gen = torch.Generator().manual_seed(seed)
    q = torch.randn(samples, tokens, int(d.max()), generator=gen, dtype=torch.float64)
    k = torch.randn(samples, tokens, int(d.max()), generator=gen, dtype=torch.float64)
    out = {name: {c: np.empty(d.size) for c in attention.SCALE_CHOICES} for name in ("variance", "entropy", "top")}
    for n, d_k in enumerate(d.tolist()):
        raw = q[..., :d_k] @ k[..., :d_k].transpose(-2, -1)
        for c in attention.SCALE_CHOICES:
            logits = raw * attention.resolve_scale(c, d_k, d_model, temperature)
            log_A = torch.log_softmax(logits, dim=-1)
            out["variance"][c][n] = logits.var().item()
            out["entropy"][c][n] = -(log_A.exp() * log_A).sum(-1).mean().item()
            out["top"][c][n] = log_A.max(dim=-1).values.exp().mean().item()
    return out


@pytest.mark.parametrize(
    "kwargs",
    [
        {"tokens": 11, "d_model": 64},  # the Scale tab at the page's defaults
        {"d_k_values": (1, 3, 8, 40), "tokens": 5, "samples": 3, "d_model": 512, "temperature": 2.0, "seed": 4},
    ],
)
def test_numpy_logit_statistics_equal_the_torch_computation(kwargs):
    args = {"d_k_values": attention.DEFAULT_DK_VALUES, "samples": 8, "temperature": 1.0, "seed": 0} | kwargs
    stats, ref = attention.logit_statistics(**args), _torch_logit_statistics(**args)
    for c in attention.SCALE_CHOICES:
        np.testing.assert_allclose(stats.variance[c], ref["variance"][c], rtol=1e-10)
        np.testing.assert_allclose(stats.entropy[c], ref["entropy"][c], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(stats.max_weight[c], ref["top"][c], rtol=1e-10)
