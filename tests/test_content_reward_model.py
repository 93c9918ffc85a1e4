"""The reward-model page's interview texts: each carries its source, and what they claim holds (a constant added to
every reward leaves the Bradley-Terry loss unchanged, by plain python; about 60-75% as seed 003 Q7 puts it)."""

import math

import pytest

from core import reward_model
from tests.apptest import assert_texts_cite, interview_texts, no_exception, opened

PAGE = "pages/10_Reward_model.py"
# where each text's claim comes from (checked against the seeds: 002 A6.3, 003 Q2, Q6 and Q7, 001 sections 3.7-3.8)
EXPECTED = {
    "quick check": ["seed 002, A6.3", "seed 003, Q7"],
    "sentence": ["Bradley and Terry, 1952", "seed 003, Q7"],
    "number": ["seed 003, Q7", "Touvron et al., 2023"],
    "trade-off": ["seed 003, Q2 and Q6", "seed 002, A6.3", "seed 001, section 3.8", "Rafailov et al., 2023"],
    "mistake 1": ["seed 002, A6.3"],
    "mistake 2": ["Gao et al., 2022"],
    "mistake 3": ["seed 003, Q7"],
    "mistake 4": ["seed 003, Q2", "seed 002, A6.3"],
}


@pytest.fixture(scope="module")
def texts():
    at = opened(PAGE)
    assert no_exception(at)
    return interview_texts(at)


def test_every_interview_text_cites_its_source(texts):
    assert_texts_cite(texts, EXPECTED)  # the quick check, three parts of the answer, four mistakes


def _nll(rewards: list[float], pairs: list[tuple[int, int]]) -> float:
    """Mean -log σ(r_w - r_l), one pair at a time."""
    return sum(math.log1p(math.exp(-(rewards[w] - rewards[lo]))) for w, lo in pairs) / len(pairs)


def test_only_differences_are_identified_as_the_quick_check_says(texts):
    rewards, pairs = [0.4, -1.2, 2.0, 0.1], [(0, 1), (2, 0), (3, 1), (2, 3), (1, 3)]
    for c in (3.1, -0.4, 100.0):
        shifted = [r + c for r in rewards]
        assert _nll(shifted, pairs) == pytest.approx(_nll(rewards, pairs), rel=1e-12)
        assert reward_model.bradley_terry_nll(shifted, pairs) == pytest.approx(_nll(rewards, pairs), rel=1e-12)
    assert "only up to an additive constant" in texts["quick check"] and "normalise per batch" in texts["quick check"]
    assert "only differences are identified" in texts["sentence"]


def test_the_numbers_quoted(texts):
    # 003 Q7: "sixties to seventies percent"; Llama 2's reward models 63-65% (Touvron et al., 2023)
    assert "60-75%" in texts["number"] and "60-75%" in texts["mistake 3"] and "60-70%" not in texts["number"]
    assert "β log(π_θ/π_ref)" in texts["trade-off"]  # DPO's implicit reward (001 section 3.7)
