"""core.loss_units: bits per byte across tokenizers (exact for one byte model, close for per-tokenizer bigrams),
perplexity, the uniform baseline, the SFT mask's 97.6%, packing masks, padding waste and bad input."""

import math
from fractions import Fraction

import numpy as np
import pytest

from core.loss_units import (
    BPE_VOCAB_SIZES,
    MAX_TEXT_CHARS,
    bits_per_byte,
    compare_tokenizers,
    example_lengths,
    get_tokenizer,
    merge_prefix_counts,
    packing_attention_mask,
    padding_waste,
    perplexity,
    position_ids,
    score_through_tokenizer,
    sft_loss_weights,
    train_bpe,
    train_byte_model,
    uniform_loss,
)
from core.sampling import bundled_text

TEXT = bundled_text()
HELDOUT = bundled_text("lesson_text_heldout.txt")


def test_units_by_hand():
    assert perplexity(math.log(20)) == pytest.approx(20.0)
    np.testing.assert_allclose(perplexity([0.0, 1.0]), [1.0, math.e])
    # 3 tokens of loss 2 nats over 4 bytes: 6 / (4 ln 2) bits per byte
    assert bits_per_byte(6.0, 4) == pytest.approx(6 / (4 * math.log(2)))
    assert bits_per_byte(8 * math.log(2), 8) == pytest.approx(1.0)  # one bit per byte


def test_uniform_baseline_is_ln_v():
    assert round(uniform_loss(50_000), 1) == 10.8  # the lesson's 10.8 nats
    assert perplexity(uniform_loss(50_000)) == pytest.approx(50_000)


def test_tokenizers_are_lossless():
    for name in ("bytes", "chars", *(f"bpe-{v}" for v in BPE_VOCAB_SIZES)):
        tok = get_tokenizer(name)
        for text in (TEXT, HELDOUT, "naïve café — ünïcödé 日本"):
            assert b"".join(tok.pieces(text)) == text.encode("utf-8")


def test_bpe_reaches_its_vocabulary_and_merges_in_learned_order():
    for v in BPE_VOCAB_SIZES:
        assert train_bpe(TEXT, v).vocab_size == v
    tok = get_tokenizer("bpe-300")
    merges = tok.merges(3)
    assert len(merges) == 3 and all(isinstance(a, bytes) and isinstance(b, bytes) for a, b in merges)
    # the first merge is the most frequent adjacent pair inside pre-tokenized words: check it by counting
    words = [w.encode() for w in _gpt2_words(TEXT)]
    import itertools
    from collections import Counter

    pairs = Counter(p for w in words for p in itertools.pairwise(w))
    best = max(pairs.values())
    assert pairs[(merges[0][0][0], merges[0][1][0])] == best
    # longer vocabularies give fewer tokens
    n = [len(get_tokenizer(f"bpe-{v}").pieces(HELDOUT)) for v in BPE_VOCAB_SIZES]
    assert n == sorted(n, reverse=True) and n[0] < len(HELDOUT.encode())


@pytest.mark.parametrize(
    "text", [HELDOUT, TEXT, "naïve café — ünïcödé 日本: aaaa aaaaa tt ttt  \n\n  x " * 3, "lighthouse " * 3]
)
def test_merge_prefix_counts_are_the_tokens_of_each_smaller_bpe(text):
    """The merge stepper's token counts after k merges, all from one pass over the largest BPE's merges, against a
    BPE trained to 256 + k tokens encoding the text itself (the tokenizers package), for every k up to 60."""
    counts = merge_prefix_counts(get_tokenizer("bpe-800"), text, 60)
    assert counts[0] == len(text.encode("utf-8"))
    assert list(counts[1:]) == [len(train_bpe(TEXT, 256 + k).pieces(text)) for k in range(1, 61)]
    assert np.all(np.diff(counts) <= 0)  # a merge never adds a token


def test_merge_prefix_counts_refuse_what_has_no_merges():
    with pytest.raises(ValueError, match="no merges"):
        merge_prefix_counts(get_tokenizer("bytes"), HELDOUT, 1)
    with pytest.raises(ValueError, match="whole number"):
        merge_prefix_counts(get_tokenizer("bpe-300"), HELDOUT, 45)  # bpe-300 learned 44
    with pytest.raises(ValueError):
        merge_prefix_counts(get_tokenizer("bpe-300"), "", 3)


def _gpt2_words(text):
    import re

    return re.findall(r"""'s|'t|'re|'ve|'m|'ll|'d| ?[^\W\d_]+| ?\d+| ?[^\s\w]+|\s+(?!\S)|\s+""", text)


def test_one_byte_model_gives_identical_bits_per_byte_across_tokenizers():
    same, _ = compare_tokenizers()
    bpb = [s.bits_per_byte for s in same]
    assert max(bpb) - min(bpb) < 1e-9
    totals = [s.total_nll_nats for s in same]
    assert max(totals) - min(totals) < 1e-9 * totals[0]
    ppl = [s.perplexity for s in same]
    assert max(ppl) / min(ppl) > 10  # ... while per-token perplexities differ by more than 10x
    # the chain-rule total equals the byte model's own byte-by-byte sum
    bm = train_byte_model(TEXT)
    assert totals[0] == pytest.approx(-bm.log_probs(HELDOUT.encode()).sum(), rel=1e-12)
    for s in same:
        assert s.perplexity == pytest.approx(math.exp(s.total_nll_nats / s.n_tokens))


def test_byte_model_probabilities_sum_to_one():
    bm = train_byte_model(TEXT)
    for prefix in (b"", b"the", b"lighthou", b"zq"):
        total = sum(math.exp(bm.log_probs(prefix + bytes([b]))[-1]) for b in range(256))
        assert total == pytest.approx(1.0, abs=1e-12)


def test_per_tokenizer_bigrams_perplexities_far_apart_bits_per_byte_close():
    _, per = compare_tokenizers()
    by = {s.tokenizer: s for s in per}
    ppl = [s.perplexity for s in per]
    bpb = [s.bits_per_byte for s in per]
    ppl_ratio = max(ppl) / min(ppl)
    bpb_ratio = max(bpb) / min(bpb)
    print(f"perplexity ratio {ppl_ratio:.1f}, bits-per-byte ratio {bpb_ratio:.2f}")
    assert ppl_ratio > 2.0
    assert bpb_ratio < 1.5
    assert math.log(bpb_ratio) < 0.25 * math.log(ppl_ratio)
    assert by["bpe-800"].perplexity > 2 * by["bytes"].perplexity
    # the printed numbers of the report (bundled text, held-out paragraph)
    assert round(ppl_ratio) == 24 and round(bpb_ratio, 2) == 1.40


def test_sft_mask_97_6_percent_on_the_prompt():
    w = sft_loss_weights(2000, 50, mask_prompt=False)
    assert w.prompt_share == pytest.approx(float(Fraction(2000, 2050)))
    assert round(100 * w.prompt_share, 1) == 97.6
    m = sft_loss_weights(2000, 50)
    assert m.prompt_share == 0.0
    assert m.weights[0, 2000:].tolist() == [1 / 50] * 50


def test_sft_batch_reductions_and_padding():
    w = sft_loss_weights([3, 1], [2, 6], reduction="token")
    assert w.weights.shape == (2, 7)
    np.testing.assert_allclose(w.weights[0], [0, 0, 0, 1 / 8, 1 / 8, 0, 0])  # 8 response tokens in the batch
    assert w.is_pad[0].tolist() == [False] * 5 + [True] * 2
    s = sft_loss_weights([3, 1], [2, 6], reduction="sequence")
    np.testing.assert_allclose(s.weights[0, 3:5], [1 / 4, 1 / 4])  # each example weighs 1/2, split over its tokens
    np.testing.assert_allclose(s.weights[1, 1:], [1 / 12] * 6)
    assert s.weights.sum() == pytest.approx(1.0)


def test_packing_mask_block_diagonal_against_a_loop():
    lens = [3, 2, 4]
    m = packing_attention_mask(lens)
    naive = packing_attention_mask(lens, block_diagonal=False)
    doc = [d for d, n in enumerate(lens) for _ in range(n)]
    for i in range(9):
        for j in range(9):
            assert naive[i, j] == (j <= i)
            assert m[i, j] == (j <= i and doc[i] == doc[j])
    assert int(naive.sum() - m.sum()) == 3 * 2 + 3 * 4 + 2 * 4  # the cross-document pairs naive packing allows
    assert position_ids(lens).tolist() == [0, 1, 2, 0, 1, 0, 1, 2, 3]
    assert position_ids(lens, reset=False).tolist() == list(range(9))


def test_padding_waste_by_hand_and_schemes_ranked():
    lens = [1, 9, 2, 8]
    r = padding_waste(lens, 2, "pad_to_longest")
    assert (r.slots, r.real_tokens) == (9 * 2 + 8 * 2, 20)
    b = padding_waste(lens, 2, "bucket")
    assert b.slots == 2 * 2 + 9 * 2
    p = padding_waste(lens, 2, "pack", seq_len=10)
    assert (p.slots, p.n_rows) == (20, 2) and p.waste == 0.0
    L = example_lengths(512, seed=0)
    w = [padding_waste(L, 16, s, seq_len=2048).waste for s in ("pad_to_longest", "bucket", "pack")]
    assert w[0] > 0.5 > w[1] > w[2]  # padding to the longest wastes over half (A8.11); bucketing most of the fix


@pytest.mark.parametrize("text", ["", "x" * 100_000])
def test_bad_texts_raise(text):
    with pytest.raises(ValueError, match=r"empty|limit"):
        get_tokenizer("bytes").pieces(text)
    with pytest.raises(ValueError):
        compare_tokenizers(train_text=text)


def test_other_bad_input_raises():
    assert MAX_TEXT_CHARS < 100_000
    with pytest.raises(ValueError):
        perplexity(-1.0)
    with pytest.raises(ValueError):
        bits_per_byte(1.0, 0)
    with pytest.raises(ValueError):
        uniform_loss(0)
    with pytest.raises(ValueError, match="unknown tokenizer"):
        get_tokenizer("words")
    with pytest.raises(ValueError, match="vocab_size"):
        train_bpe(TEXT, 100)
    with pytest.raises(ValueError):
        sft_loss_weights(10, 0)
    with pytest.raises(ValueError):
        sft_loss_weights([1, 2], [3])
    with pytest.raises(ValueError):
        padding_waste([], 4, "bucket")
    with pytest.raises(ValueError):
        padding_waste([3, 4], 2, "pack")
    with pytest.raises(ValueError):
        score_through_tokenizer(train_byte_model(TEXT), "", get_tokenizer("bytes"))
