"""The schedules page's texts: the explanation, the quick check, the interview answer and every mistake carry their
sources, and the modelled numbers they quote hold (a plain-python schedule and loss loop against the page's text)."""

import math

import pytest

from core import schedules
from tests.apptest import SOURCE, assert_texts_cite, explanation, interview_texts, no_exception, opened

PAGE = "pages/13_Schedules.py"
# where each text's claim comes from (checked against the seeds: 002 A1.6 (warm-up 1-2%, cosine commits at step 0,
# WSD branches), A9.3 (mid-training, best data last, not SFT), A11.1 (Kaplan vs Chinchilla, Porian et al.); 001
# sections 2 and 3.3 (mid-training while the LR decays; Chinchilla section 2 on Kaplan's read-off))
EXPECTED = {
    "quick check": ["seed 002, A1.6"],
    "sentence": ["seed 002, A1.6 and A9.3", "Hägele et al., 2024"],
    "number": ["Tissue et al., 2024"],
    "trade-off": ["Hägele et al., 2024"],
    "mistake 1": ["Kaplan et al., 2020", "Hoffmann et al., 2022"],
    "mistake 2": ["Tissue et al., 2024"],
    "mistake 3": ["seed 002, A1.6"],
    "mistake 4": ["seed 002, A9.3"],
    "mistake 5": ["Pearce and Song, 2024", "Porian et al., 2024", "seed 002, A11.1"],
}
EXPLAIN_SOURCES = [
    "seed 002, A1.6",
    "Liu et al., 2020",
    "Loshchilov and Hutter, 2017",
    "Hu et al., 2024",
    "Hägele et al., 2024",
    "Tissue et al., 2024",
    "Kaplan et al. (2020)",
    "Hoffmann et al., 2022",
    "seed 001, section 3.3",
    "seed 002, A11.1",
    "Pearce and Song, 2024",
    "Porian et al., 2024",
    "seed 002, A9.3",
    "seed 001, section 2",
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
    return explanation(page, "A schedule starts with")


def test_every_interview_text_cites_its_source(texts):
    assert_texts_cite(texts, EXPECTED)  # the quick check, three parts of the answer, five mistakes


def test_the_explanation_cites_its_sources(explain, page):
    for source in EXPLAIN_SOURCES:
        assert source in explain, source
    for paragraph in explain.split("\n\n"):
        assert SOURCE.search(paragraph), paragraph
    assert any("Tissue et al. (2024)" in c.value for c in page.caption)  # the figure's caption names the model


def _lr(kind: str, steps: int, W: int = 100, floor: float = 0.1, D: int = 2000) -> list[float]:
    """The page's schedules one step at a time: linear warm-up, then cosine to the floor, a linear WSD decay over
    the last D steps, or constant."""
    out = []
    for s in range(1, steps + 1):
        if s <= W:
            out.append(s / W)
        elif kind == "cosine":
            u = min(max((s - W) / (steps - W), 0.0), 1.0)
            out.append(floor + (1 - floor) * 0.5 * (1 + math.cos(math.pi * u)))
        elif kind == "wsd":
            u = min(max((s - (steps - D)) / D, 0.0), 1.0)
            out.append(1 - (1 - floor) * u)
        else:
            out.append(1.0)
    return out


def _loss(lr: list[float]) -> list[float]:
    """L(s) = L0 + A S1^-α - C S2 (Tissue et al. 2024), with S1 the summed LR and S2 the summed momentum of its
    drops, m_i = λ m_(i-1) + (η_(i-1) - η_i); the page's illustrative constants."""
    M = schedules.DEFAULT_LOSS_MODEL
    out, S1, S2, m, prev = [], 0.0, 0.0, 0.0, lr[0]
    for eta in lr:
        S1 += eta
        m = M.lam * m + (prev - eta)
        S2 += m
        prev = eta
        out.append(M.L0 + M.A * S1 ** (-M.alpha) - M.C * S2)
    return out


def test_the_modelled_end_losses_quoted(explain):
    ends = {kind: _loss(_lr(kind, 10_000))[-1] for kind in ("constant", "cosine", "wsd")}
    assert [f"{ends[k]:.3f}" for k in ("constant", "cosine", "wsd")] == ["2.229", "2.128", "2.156"]
    core = schedules.lr_schedule("wsd", 10_000, warmup=100, final_lr_frac=0.1, decay_steps=2000)
    assert schedules.DEFAULT_LOSS_MODEL.loss(core)[-1] == pytest.approx(ends["wsd"], rel=1e-9)
    assert "constant run ends at 2.229, cosine to 10% at 2.128 and WSD with a 20% linear decay at 2.156" in explain


def test_kaplan_read_off_quoted(texts, explain):
    read = _loss(_lr("cosine", 10_000))[2500 - 1]  # the long cosine's loss at step 2,500
    own = _loss(_lr("cosine", 2500))[-1]  # a 2,500-step run with its own cosine
    assert (f"{read:.3f}", f"{own:.3f}") == ("2.292", "2.263")
    assert round(read - own, 2) == 0.03
    gap = schedules.kaplan_gap(10_000, [2500], warmup=100)
    assert gap.read_from_long[0] == pytest.approx(read, rel=1e-9) and gap.own_schedule[0] == pytest.approx(own)
    assert "sits at 2.292, against 2.263 with its own cosine" in explain
    assert "about 0.03 nats too high" in texts["number"]


def test_the_quick_check_cosine_halfway_wsd_at_peak(texts):
    cos, wsd = _lr("cosine", 10_000), _lr("wsd", 10_000)
    # at the run's middle the cosine has come down about halfway from the peak (1) to its floor (0.1): ≈ 0.55
    assert cos[5000 - 1] == pytest.approx(0.55, abs=0.01)
    assert wsd[5000 - 1] == 1.0  # WSD is still at its peak
    assert "already decayed halfway towards its floor" in texts["quick check"]
