"""The loss-and-units page's texts: the explanation, the quick check, the interview answer and every mistake carry
their sources, and the numbers they quote hold (plain python and fractions against core)."""

import math
from fractions import Fraction

import pytest

from core import loss_units
from tests.apptest import SOURCE, assert_texts_cite, explanation, interview_texts, no_exception, opened

PAGE = "pages/12_Loss_and_units.py"
# where each text's claim comes from (checked against the seeds: 001 sections 2, 3.1, 3.4 and 7; 002 A6.2 (the
# mask, 97%, packing), A8.11 (packing, padding, bucketing) and A11.4 (perplexity across tokenizers and after RLHF))
EXPECTED = {
    "quick check": ["seed 001, section 3.1"],
    "sentence": ["seed 001, section 3.1", "seed 002, A11.4"],
    "number": ["seed 001, section 2", "seed 002, A6.2"],
    "trade-off": ["seed 002, A8.11"],
    "mistake 1": ["seed 001, section 7"],
    "mistake 2": ["seed 001, section 7", "seed 002, A6.2"],
    "mistake 3": ["seed 002, A6.2"],
    "mistake 4": ["seed 002, A11.4"],
}
EXPLAIN_SOURCES = [
    "seed 001, section 2",
    "seed 001, section 3.1",
    "Gao et al., 2020",
    "Sennrich et al., 2016",
    "Radford et al., 2019",
    "seed 001, section 3.4",
    "seed 002, A6.2",
    "Krell et al., 2021",
    "seed 002, A8.11",
]


@pytest.fixture(scope="module")
def page():
    at = opened(PAGE)
    assert no_exception(at)
    return at


@pytest.fixture(scope="module")
def texts(page):
    return interview_texts(page)


@pytest.fixture(scope="module")
def explain(page):
    return explanation(page, "The pretraining loss L is")


def test_every_interview_text_cites_its_source(texts):
    assert_texts_cite(texts, EXPECTED)  # the quick check, three parts of the answer, four mistakes


def test_the_explanation_cites_its_sources(explain):
    for source in EXPLAIN_SOURCES:
        assert source in explain, source
    for paragraph in explain.strip().split("\n\n"):
        assert SOURCE.search(paragraph), paragraph


def test_the_quick_check_perplexity_squared_bits_per_byte_unchanged(texts):
    total, n_bytes = 700.0, 1000  # the same total loss in nats over a 1,000-byte text, 200 tokens or 100
    L_short, L_long = total / 200, total / 100  # the mean loss per token doubles with half as many tokens
    # bits per byte takes the total, T·L, which both tokenizations share
    assert 200 * L_short == 100 * L_long == total
    assert loss_units.bits_per_byte(200 * L_short, n_bytes) == loss_units.bits_per_byte(100 * L_long, n_bytes)
    assert loss_units.bits_per_byte(total, n_bytes) == pytest.approx(total / (n_bytes * math.log(2)))
    assert loss_units.perplexity(L_long) == pytest.approx(loss_units.perplexity(L_short) ** 2)
    assert math.exp(L_long) == pytest.approx(math.exp(L_short) ** 2)
    assert "the per-token perplexity is squared" in texts["quick check"] and "does not change" in texts["quick check"]


def test_the_numbers_quoted(texts, explain):
    # ln 50,000 = 10.82 nats (seed 001, section 2); 2,000 / 2,050 = 97.6% (seed 002, A6.2 rounds it to 97%)
    assert round(math.log(50_000), 1) == round(loss_units.uniform_loss(50_000), 1) == 10.8
    share = Fraction(2000, 2050)
    assert f"{float(share):.1%}" == "97.6%"
    w = loss_units.sft_loss_weights(2000, 50, mask_prompt=False)
    assert w.prompt_share == pytest.approx(float(share), rel=1e-12)
    assert "10.8 nats" in texts["number"] and "97.6%" in texts["number"]
    assert "10.8 nats for V = 50,000" in explain and "2,000 / 2,050 = 97.6%" in explain


def test_the_bigram_factors_quoted(explain):
    _, per = loss_units.compare_tokenizers()
    ppl = [s.perplexity for s in per]
    bpb = [s.bits_per_byte for s in per]
    assert round(max(ppl) / min(ppl)) == 24 and round(max(bpb) / min(bpb), 1) == 1.4
    flat = explain
    assert "a factor of about 24 apart" in flat and "within a factor of 1.4" in flat
