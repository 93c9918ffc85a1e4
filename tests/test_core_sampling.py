"""core.sampling: sample_filter against a plain reference of seed 002 A8.7's code, draws against the filtered
distribution (chi-square), entropy, the Markov repetition loops and bad input."""

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
def test_bad_settings_raise_value_error(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sample_filter([1.0, 2.0], **kwargs)


@pytest.mark.parametrize("logits", [[], [float("nan"), 1.0], [math.inf, 0.0], [-math.inf, -math.inf], "abc"])
def test_bad_logits_raise_value_error(logits):
    with pytest.raises(ValueError):
        sample_filter(logits)
