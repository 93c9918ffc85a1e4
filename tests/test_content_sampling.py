"""The sampling page's texts: the explanation, the quick check, the interview answer and every mistake carry their
sources, and the numbers they quote hold (a plain-python sampler written after seed 002 A8.7's rule)."""

import math

import pytest

from core import sampling
from tests.apptest import SOURCE, assert_texts_cite, explanation, interview_texts, no_exception, opened

PAGE = "pages/11_Sampling.py"
# where each text's claim comes from (checked against the seeds: 002 A8.7 gives the code, the order and both bugs;
# nucleus sampling is Holtzman et al.; min-p Nguyen et al.; top-k sampling Fan et al.)
EXPECTED = {
    "quick check": ["seed 002, A8.7"],
    "sentence": ["Holtzman et al., 2020", "seed 002, A8.7"],
    "number": ["seed 002, A8.7"],
    "trade-off": ["Holtzman et al., 2020", "seed 002, A8.7", "Nguyen et al., 2024"],
    "mistake 1": ["seed 002, A8.7"],
    "mistake 2": ["seed 002, A8.7"],
    "mistake 3": ["seed 002, A8.7"],
    "mistake 4": ["Holtzman et al., 2020", "seed 002, A8.7"],
}
EXPLAIN_SOURCES = [
    "seed 002, A8.7",
    "Fan et al., 2018",
    "Holtzman et al., 2020",
    "Nguyen et al., 2024",
    "Shannon, 1948",
    "seed 003",
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
    return explanation(page, "The truncations decide")


def test_every_interview_text_cites_its_source(texts):
    assert_texts_cite(texts, EXPECTED)  # the quick check, three parts of the answer, four mistakes


def test_the_explanation_cites_its_sources(explain):
    for source in EXPLAIN_SOURCES:
        assert source in explain, source
    for paragraph in explain.strip().split("\n\n"):  # every paragraph but the one on the page's own figure
        if not paragraph.startswith("The truncations decide"):
            assert SOURCE.search(paragraph) or "seed 003" in paragraph, paragraph


def _softmax(z: list[float], T: float = 1.0) -> list[float]:
    m = max(z)
    e = [math.exp((x - m) / T) for x in z]
    return [x / sum(e) for x in e]


def _top_p_kept(p: list[float], top_p: float) -> list[int]:
    """Indices kept by top-p, one token at a time: drop a token when the mass before it already reaches p."""
    order = sorted(range(len(p)), key=lambda i: -p[i])
    kept, before = [], 0.0
    for i in order:
        if before >= top_p:
            break
        kept.append(i)
        before += p[i]
    return kept


def test_the_quick_check_keeps_the_crossing_token(texts):
    p = [0.5, 0.3, 0.2]
    kept = _top_p_kept(p, 0.6)
    assert kept == [0, 1]  # 0.5 < 0.6 before the second token: it stays; 0.8 >= 0.6 before the third: it goes
    renorm = [p[i] / sum(p[j] for j in kept) for i in kept]
    assert renorm == pytest.approx([0.625, 0.375])
    core = sampling.sample_filter([math.log(x) for x in p], 1.0, top_p=0.6).tolist()
    assert core == pytest.approx([0.625, 0.375, 0.0])
    assert "**0.625 and 0.375**" in texts["quick check"]


def test_the_order_numbers_quoted(texts, explain):
    z = list(sampling.VOCAB_PRESETS["keeper"].logits)
    tempered_first = len(_top_p_kept(_softmax(z, 2.0), 0.9))
    truncated_first = len(_top_p_kept(_softmax(z, 1.0), 0.9))  # the kept set is fixed at T = 1
    assert (tempered_first, truncated_first) == (20, 8)
    for order, n in (("temperature_first", 20), ("filters_first", 8)):
        assert int((sampling.sample_filter(z, 2.0, top_p=0.9, order=order) > 0).sum()) == n
    assert "keeps 20 tokens when tempered first" in texts["number"] and "8 when truncated first" in texts["number"]
    assert "20 tokens against 8" in explain


def test_the_effective_choices_quoted(explain):
    z = list(sampling.VOCAB_PRESETS["keeper"].logits)
    for T, shown in ((0.5, "2.95"), (1.0, "7.3"), (2.0, "18.7")):
        p = _softmax(z, T)
        H = -sum(x * math.log(x) for x in p)
        assert f"{math.exp(H):.{len(shown.split('.')[1])}f}" == shown
        assert f"{shown} at T = {T:g}" in explain
