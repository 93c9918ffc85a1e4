"""core.sampling: sample_filter against a plain reference of seed 002 A8.7's code, its numpy twin sample_filter_np
against it and against torch's own softmax and topk, draws against the filtered distribution (chi-square), entropy,
the Markov repetition loops and bad input."""

import math

import numpy as np
import pytest
import torch
from scipy import stats

from core.sampling import (
    VOCAB_PRESETS,
    draw,
    effective_choices,
    entropy_nats,
    find_loop,
    generate_markov,
    kept_count,
    markov_logits,
    sample_filter,
    sample_filter_np,
    word_bigram_model,
)


def reference_filter(z, T, top_k=None, top_p=None, min_p=None):
    """A plain python-loop version of seed 002 A8.7 (temperature -> top-k -> top-p), plus min-p; one row."""
    z = [float(x) for x in z]
    V = len(z)
    if T == 0:
        best = max(range(V), key=lambda i: (z[i], -i))
        return [1.0 if i == best else 0.0 for i in range(V)]
    z = [x / T for x in z]
    if top_k is not None:
        kth = sorted(z, reverse=True)[min(top_k, V) - 1]
        z = [x if x >= kth else -math.inf for x in z]
    if top_p is not None:
        order = sorted(range(V), key=lambda i: -z[i])
        m = max(z)
        e = [math.exp(x - m) if x > -math.inf else 0.0 for x in z]
        s = sum(e)
        before = 0.0
        for n, i in enumerate(order):
            p = e[i] / s
            if n > 0 and before >= top_p:  # the mass before this token already reaches p: drop it
                z[i] = -math.inf
            before += p
    if min_p is not None:
        m = max(z)
        e = [math.exp(x - m) if x > -math.inf else 0.0 for x in z]
        pmax = max(e) / sum(e)
        z = [x if (e[i] / sum(e)) >= min_p * pmax else -math.inf for i, x in enumerate(z)]
    m = max(z)
    e = [math.exp(x - m) if x > -math.inf else 0.0 for x in z]
    return [x / sum(e) for x in e]


@pytest.mark.parametrize("seed", range(6))
def test_filter_equals_the_reference_on_random_logits(seed):
    rng = np.random.default_rng(seed)
    B, V = 8, 20
    z = rng.normal(0, 2, (B, V))
    cases = [(1.0, None, 0.9, None), (0.7, 5, 0.8, None), (1.5, None, 0.5, 0.05), (0.3, 12, None, 0.2)]
    cases.append((0.0, 5, 0.9, None))  # T = 0: greedy, its own branch (the filters change nothing)
    for T, k, p, mp in cases:
        got = sample_filter(torch.tensor(z), T, k, p, mp).cpu().numpy()
        want = np.array([reference_filter(row, T, k, p, mp) for row in z])
        np.testing.assert_allclose(got, want, atol=1e-12)
    # greedy puts all the mass on each row's largest logit
    greedy = sample_filter(torch.tensor(z), 0.0, 5, 0.9).cpu().numpy()
    np.testing.assert_array_equal(greedy, np.eye(V)[z.argmax(axis=1)])


@pytest.mark.parametrize("seed", range(4))
def test_numpy_filter_equals_torch_and_the_reference(seed):
    # random rows, one of them with banned tokens, every setting in both orders: numpy in gives numpy out, equal to
    # torch's path (a tensor in) and to the plain reference to round-off
    rng = np.random.default_rng(100 + seed)
    B, V = 6, 25
    z = rng.normal(0, 2.5, (B, V))
    z[1, [3, 7]] = -math.inf
    cases = [(1.0, None, None, None), (2.0, None, 0.9, None), (0.7, 5, 0.8, None), (1.5, None, 0.5, 0.05)]
    cases += [(0.3, 12, None, 0.2), (1.0, 1, None, None), (0.0, 5, 0.9, None), (1.3, 3, 0.99, 1.0)]
    for T, k, p, mp in cases:
        for order in ("temperature_first", "filters_first"):
            got = sample_filter_np(z, T, k, p, mp, order)
            assert isinstance(got, np.ndarray) and got.dtype == np.float64 and got.shape == (B, V)
            want = sample_filter(torch.tensor(z), T, k, p, mp, order).cpu().numpy()
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
            np.testing.assert_array_equal(got > 0, want > 0)  # the same tokens kept
            for row, zrow in zip(got, z, strict=True):  # one row at a time: the (V,) shape
                np.testing.assert_allclose(sample_filter_np(zrow, T, k, p, mp, order), row, rtol=1e-12, atol=1e-15)
            if order == "temperature_first":
                ref = np.array([reference_filter(r, T, k, p, mp) for r in z])
                np.testing.assert_allclose(got, ref, atol=1e-12)


def test_numpy_filter_against_torchs_own_softmax_and_topk():
    # the page's defaults (the keeper preset at T = 1, no filters) and a non-default top-k at T = 0.6, with
    # torch.softmax and torch.topk themselves as the reference
    z = np.array(VOCAB_PRESETS["keeper"].logits)
    zt = torch.tensor(z, dtype=torch.float64)
    np.testing.assert_allclose(sample_filter_np(z), torch.softmax(zt, -1).numpy(), rtol=1e-13)
    flat = np.array(VOCAB_PRESETS["flat"].logits)
    want = torch.softmax(torch.tensor(flat / 0.6), -1).numpy()
    np.testing.assert_allclose(sample_filter_np(flat, 0.6), want, rtol=1e-13)
    vals, idx = torch.topk(zt / 0.6, 7)
    want = torch.zeros_like(zt).scatter(0, idx, torch.softmax(vals, -1)).numpy()
    np.testing.assert_allclose(sample_filter_np(z, 0.6, top_k=7), want, rtol=1e-13, atol=1e-300)
    # the lesson's numbers: 20 tokens kept tempering first at T = 2, top-p 0.9, and 8 truncating first
    for order, n in (("temperature_first", 20), ("filters_first", 8)):
        got = sample_filter_np(z, 2.0, top_p=0.9, order=order)
        np.testing.assert_allclose(got, sample_filter(zt, 2.0, top_p=0.9, order=order).numpy(), rtol=1e-12)
        assert int(kept_count(got)) == n


def test_ties_go_to_the_earlier_token_in_both_libraries():
    # 300 logits in three tied levels (long rows: torch's default sort is not stable there); top-p cuts inside the
    # second level, min-p and top-k keep whole levels; both libraries keep the earliest tied tokens
    z = np.repeat([2.0, 1.0, 0.0], 100)[np.random.default_rng(0).permutation(300)]
    for T, k, p, mp in [(1.0, None, 0.6, None), (0.5, None, 0.97, None), (1.0, 150, None, None), (1, None, None, 0.4)]:
        got = sample_filter_np(z, T, k, p, mp)
        want = sample_filter(torch.tensor(z), T, k, p, mp).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12)
        for level in (2.0, 1.0, 0.0):  # within a level the kept tokens are the first ones
            kept = got[z == level] > 0
            assert not (~kept[:-1] & kept[1:]).any(), (T, k, p, mp, level)
    np.testing.assert_array_equal(sample_filter_np([1.0, 3.0, 3.0], 0.0), [0.0, 1.0, 0.0])  # greedy: the first max


def test_entropy_kept_count_and_effective_choices_numpy_in_numpy_out():
    rng = np.random.default_rng(5)
    q = sample_filter_np(rng.normal(0, 2, (4, 30)), 0.8, top_p=0.9)
    H, n, e = entropy_nats(q), kept_count(q), effective_choices(q)
    assert isinstance(H, np.ndarray) and isinstance(n, np.ndarray) and isinstance(e, np.ndarray)
    qt = torch.tensor(q)
    np.testing.assert_allclose(H, entropy_nats(qt).numpy(), rtol=1e-13)
    np.testing.assert_allclose(H, stats.entropy(q, axis=-1), rtol=1e-12)
    np.testing.assert_array_equal(n, kept_count(qt).numpy())
    np.testing.assert_allclose(e, effective_choices(qt).numpy(), rtol=1e-13)
    assert float(entropy_nats([0.0, 1.0, 0.0])) == 0.0 and float(effective_choices([0.5, 0.5])) == pytest.approx(2)


def test_the_crossing_token_is_kept():
    # probabilities 0.5, 0.3, 0.2: top_p = 0.6 is crossed by the second token, which stays; the third goes
    z = torch.log(torch.tensor([0.5, 0.3, 0.2], dtype=torch.float64))
    p = sample_filter(z, 1.0, top_p=0.6)
    np.testing.assert_allclose(p.cpu().numpy(), [0.625, 0.375, 0.0])
    # the off-by-one version (drop where cum > p) would keep only the first token at p = 0.5: here it keeps both
    np.testing.assert_allclose(sample_filter(z, 1.0, top_p=0.5).cpu().numpy(), [1.0, 0.0, 0.0])
    np.testing.assert_allclose(sample_filter(z, 1.0, top_p=0.51).cpu().numpy(), [0.625, 0.375, 0.0])
    assert int(kept_count(sample_filter(z, 1.0, top_p=1.0))) == 3


def test_temperature_zero_is_greedy_and_first_on_ties():
    p = sample_filter([1.0, 3.0, 3.0, -2.0], 0.0, top_p=0.1)
    assert p.tolist() == [0.0, 1.0, 0.0, 0.0]
    batch = sample_filter(torch.tensor([[0.0, 1.0], [2.0, -1.0]]), 0)
    assert batch.tolist() == [[0.0, 1.0], [1.0, 0.0]]


def test_temperature_limits_and_order_switch():
    z = torch.tensor(VOCAB_PRESETS["keeper"].logits, dtype=torch.float64)
    cold = sample_filter(z, 1e-3)
    assert float(cold[0]) == pytest.approx(1.0)
    hot = sample_filter(z, 1e6)
    np.testing.assert_allclose(hot.cpu().numpy(), 1 / len(z), rtol=1e-4)
    # top-p = 0.9 at T = 2: tempering first flattens the distribution, so the nucleus holds more tokens
    first = sample_filter(z, 2.0, top_p=0.9, order="temperature_first")
    after = sample_filter(z, 2.0, top_p=0.9, order="filters_first")
    assert int(kept_count(first)) > int(kept_count(after))
    assert int(kept_count(after)) == int(kept_count(sample_filter(z, 1.0, top_p=0.9)))
    # at T = 1 the two orders agree
    np.testing.assert_allclose(
        sample_filter(z, 1.0, 7, 0.8, order="filters_first").cpu().numpy(), sample_filter(z, 1.0, 7, 0.8).cpu().numpy()
    )


def test_min_p_threshold_is_relative_to_the_top_token():
    z = torch.log(torch.tensor([0.5, 0.3, 0.15, 0.05], dtype=torch.float64))
    p = sample_filter(z, 1.0, min_p=0.3)  # keep p >= 0.15
    np.testing.assert_allclose(p.cpu().numpy(), np.array([0.5, 0.3, 0.15, 0.0]) / 0.95)


def test_banned_token_minus_inf_stays_at_zero():
    p = sample_filter([0.0, -math.inf, 1.0], 1.0)
    assert float(p[1]) == 0.0 and float(p.sum()) == pytest.approx(1.0)


def test_draws_follow_the_filtered_distribution_chi_square():
    z = torch.tensor(VOCAB_PRESETS["keeper"].logits, dtype=torch.float64)
    p = sample_filter(z, 0.8, top_k=10, top_p=0.9)
    n = 20_000
    ids = draw(p, n, seed=3).cpu().numpy()
    counts = np.bincount(ids, minlength=len(z))
    kept = p.cpu().numpy() > 0
    assert counts[~kept].sum() == 0  # never a dropped token
    chi2, pval = stats.chisquare(counts[kept], n * p.cpu().numpy()[kept])
    assert pval > 1e-3, (chi2, pval)


def test_entropy_and_effective_choices():
    u = torch.full((8,), 1 / 8, dtype=torch.float64)
    assert float(entropy_nats(u)) == pytest.approx(math.log(8))
    assert float(effective_choices(u)) == pytest.approx(8.0)
    assert float(effective_choices(sample_filter([1.0, 2.0], 0))) == 1.0
    q = np.array([0.7, 0.2, 0.1, 0.0])
    assert float(entropy_nats(q)) == pytest.approx(stats.entropy(q))


def test_greedy_markov_chain_loops_and_nucleus_sampling_breaks_it():
    W = markov_logits(12, seed=0)
    g = generate_markov(W, 3, 40)
    assert g.loop_start is not None and g.loop_period is not None
    assert g.tokens == generate_markov(W, 3, 40).tokens  # greedy is deterministic
    s = generate_markov(W, 3, 40, temperature=1.0, top_p=0.9, seed=1)
    assert s.distinct > g.distinct
    assert find_loop([1, 2, 3, 4, 5, 6, 7, 8]) == (None, None)
    assert find_loop([9, 1, 2, 1, 2, 1, 2]) == (1, 2)


def test_word_bigram_model_is_trained_on_the_bundled_text():
    m = word_bigram_model()
    assert "keeper" in m.vocab
    np.testing.assert_allclose(np.exp(m.log_probs).sum(axis=1), 1.0)
    top = m.vocab[int(np.argmax(m.next_logits("the")))]
    assert top == "keeper"  # "the keeper" is the text's commonest pair after "the"
    with pytest.raises(ValueError, match="vocabulary"):
        m.next_logits("zebra")


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"temperature": -0.1}, "temperature"),
        ({"temperature": float("nan")}, "temperature"),
        ({"top_p": 0.0}, "top_p"),
        ({"top_p": 1.2}, "top_p"),
        ({"top_k": 0}, "top_k"),
        ({"top_k": 2.5}, "top_k"),
        ({"min_p": -0.1}, "min_p"),
        ({"order": "sideways"}, "order"),
    ],
)
@pytest.mark.parametrize("fn", [sample_filter, sample_filter_np])
def test_bad_settings_raise_value_error(kwargs, match, fn):
    with pytest.raises(ValueError, match=match):
        fn([1.0, 2.0], **kwargs)


@pytest.mark.parametrize("fn", [sample_filter, sample_filter_np])
@pytest.mark.parametrize(
    "logits", [[], [float("nan"), 1.0], [math.inf, 0.0], [-math.inf, -math.inf], "abc", [[1.0], [2.0, 3.0]], [[[1.0]]]]
)
def test_bad_logits_raise_value_error(logits, fn):
    with pytest.raises(ValueError):
        fn(logits)
