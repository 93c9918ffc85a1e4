"""GRPO's length normalisations and the std conventions across a batch, against torch autograd and numpy loops."""

import math

import numpy as np
import pytest
import torch

from core import grpo
from tests.apptest import no_exception, open_page

LENGTHS = [100, 200, 400, 1600]


def _autograd_weights(lengths, aggregation, max_length=None):
    """d loss / d l_{i,t} for a ragged list of per-token terms, each loss written the way its paper states it."""
    terms = [torch.zeros(n, dtype=torch.float64, requires_grad=True) for n in lengths]
    G = len(lengths)
    if aggregation == "sequence-mean":  # (1/G) sum_i (1/|o_i|) sum_t l_it
        loss = sum(t.mean() for t in terms) / G
    elif aggregation == "token-mean":  # (1/sum_i |o_i|) sum_i sum_t l_it
        loss = torch.cat(terms).mean()
    else:  # (1/(G L_max)) sum_i sum_t l_it
        loss = sum(t.sum() for t in terms) / (G * (max_length or max(lengths)))
    loss.backward()
    grads = [t.grad for t in terms]
    assert all(torch.all(g == g[0]) for g in grads)  # one weight per answer, shared by its tokens
    return np.array([g[0].item() for g in grads])


@pytest.mark.parametrize("aggregation", grpo.AGGREGATIONS)
@pytest.mark.parametrize(("lengths", "max_length"), [(LENGTHS, 2048), ([1, 7, 7, 30, 2], None), ([5], 5)])
def test_token_loss_weights_match_autograd(aggregation, lengths, max_length):
    w = grpo.token_loss_weights(lengths, aggregation, max_length)
    np.testing.assert_allclose(w, _autograd_weights(lengths, aggregation, max_length), rtol=1e-12)


def test_answer_totals_for_the_page_table():
    seq = grpo.answer_loss_weights(LENGTHS, "sequence-mean")
    tok = grpo.answer_loss_weights(LENGTHS, "token-mean")
    const = grpo.answer_loss_weights(LENGTHS, "constant", 2048)
    np.testing.assert_allclose(seq, [0.25] * 4)  # every answer weighs 1/G in GRPO
    np.testing.assert_allclose(tok, np.array(LENGTHS) / 2300)  # DAPO: in proportion to the length
    np.testing.assert_allclose(const, np.array(LENGTHS) / (4 * 2048))
    assert tok.sum() == pytest.approx(1.0) and const.sum() == pytest.approx(2300 / 8192)
    # per token, GRPO pushes the 1,600-token answer 16 times less than the 100-token one
    w = grpo.token_loss_weights(LENGTHS, "sequence-mean")
    assert w[0] / w[3] == pytest.approx(16.0)
    cols = grpo.length_weight_columns(LENGTHS, 2048)
    assert list(cols) == ["tokens |o_i|", *(grpo.AGGREGATION_LABELS[a] for a in grpo.AGGREGATIONS)]


@pytest.mark.parametrize(("lengths", "aggregation", "max_length"), [
    ([], "token-mean", None), ([0, 3], "token-mean", None), ([[1, 2]], "sequence-mean", None),
    ([1, float("nan")], "constant", None), ([10, 20], "constant", 15), ([10], "sum", None),
])  # fmt: skip
def test_token_loss_weights_rejects_bad_arguments(lengths, aggregation, max_length):
    with pytest.raises(ValueError):
        grpo.token_loss_weights(lengths, aggregation, max_length)


def _batch_direction(groups, std):
    """The batch's policy-gradient coefficients, one per answer, with a plain python mean and std per group."""
    out = []
    for r in groups:
        m = sum(r) / len(r)
        pop = math.sqrt(sum((x - m) ** 2 for x in r) / len(r))
        sample = math.sqrt(sum((x - m) ** 2 for x in r) / (len(r) - 1))
        d = {"population": pop, "sample": sample, "none": 1.0}[std]
        out += [(x - m) / d for x in r]
    v = np.array(out)
    return v / np.linalg.norm(v)


def test_sample_std_keeps_the_batch_direction_but_no_std_changes_it():
    groups = [[1, 0, 0, 0, 0, 0, 0, 0], [1, 1, 1, 1, 0, 0, 0, 0]]  # a hard prompt and a medium one, G = 8
    pop, sample, none = (_batch_direction(groups, m) for m in grpo.STD_MODES)
    np.testing.assert_allclose(sample, pop, atol=1e-12)  # one global factor sqrt(7/8): same direction
    assert float(pop @ none) < 0.99  # each group rescaled by its own std: a different direction
    core = np.concatenate([grpo.grpo_advantages(np.array(g, float), "none") for g in groups])
    np.testing.assert_allclose(core / np.linalg.norm(core), none, atol=1e-12)
    factors = grpo.mode_factor(np.array(groups, float), "none")
    assert factors[0] == pytest.approx(math.sqrt(7 / 64)) and factors[1] == pytest.approx(0.5)


def test_page_texts_and_table():
    at = open_page("pages/4_GRPO.py")
    assert no_exception(at)
    text = " ".join(" ".join(m.value for m in [*at.markdown, *at.caption]).split())
    assert "only rescales every bar" not in text and "signs and ranking stay; only the step size" not in text
    assert "changes the direction of the batch update (Liu et al. 2025)" in text
    assert "Shao et al. 2024" in text and "Yu et al. 2025" in text and "1/|o_i|" in text
    assert "needs a reward that a program can check" not in text
    batch_tab = open_page("pages/4_GRPO.py", {"grpo_view": "Within group vs batch"})  # only the open tab is built
    table = batch_tab.table[0].value
    assert list(table["tokens |o_i|"]) == LENGTHS
    np.testing.assert_allclose(table[grpo.AGGREGATION_LABELS["token-mean"]], np.round(np.array(LENGTHS) / 2300, 4))
    empty = open_page("pages/4_GRPO.py", {"r": "1,1,1,1"})
    info = " ".join(i.value for i in empty.info)
    assert "Vanilla GRPO keeps such groups" in info and "Libraries skip" not in info
