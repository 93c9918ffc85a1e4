"""The test-time compute page's view without Streamlit: its numbers against tests/ttc_reference.py (best-of-n's KL
by integration, the gold score's peak by a search over whole n, majority voting by enumerating partitions, the
compute split rewritten from its assumptions), not core.test_time_compute; the drag, predict-first and presets."""

from __future__ import annotations

import math

import pytest

from tests import ttc_reference as ref
from views import Options
from views import test_time_compute as view_of

SPEC = view_of.SPEC
ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))
MAIN = Options(parts=frozenset({"main"}))


def _readouts(state, options: Options = ALL) -> dict[str, str]:
    return {r.label: r.value for r in view_of.figures(state, options).readouts}


@pytest.mark.parametrize(("p", "n"), [(0.1, "16"), (0.05, "64"), (0.3, "1"), (0.1, "1024")])
def test_best_of_n_against_the_references(p: float, n: str) -> None:
    r = _readouts(SPEC.defaults().replace(ttc_p=p, ttc_n=n), MAIN)
    k = int(n)
    assert r["Best-of-n with a verifier"] == f"{1 - (1 - p) ** k:.3f}"
    assert r["KL from the base policy"] == f"{ref.kl(k):.2f} nats"
    assert r["Gold score, reward model"] == f"{ref.gold(k):+.3f}".replace("-", "−")


@pytest.mark.parametrize(("alpha", "beta"), [(1.0, 0.25), (1.0, 0.5), (0.5, 0.25), (2.0, 0.3)])
def test_the_peak_by_a_search_over_n(alpha: float, beta: float) -> None:
    r = _readouts(SPEC.defaults().replace(ttc_alpha=alpha, ttc_beta=beta), MAIN)
    assert r["Gold score's peak"] == f"n* = {ref.peak_n(alpha, beta):,}"


def test_the_gold_score_rises_then_falls_along_the_drag() -> None:
    gold = [view_of.figures(SPEC.defaults().replace(ttc_n=n), MAIN).facts["gold"] for n in view_of.N_CHOICES]
    top = gold.index(max(gold))
    assert 0 < top < len(gold) - 1
    assert gold[: top + 1] == sorted(gold[: top + 1]) and gold[top:] == sorted(gold[top:], reverse=True)


def test_the_drag_covers_every_n_and_keeps_its_traces() -> None:
    view = view_of.figures(SPEC.defaults(), MAIN)
    drag = view.drags["main"]
    assert drag.field == "ttc_n" and drag.values == view_of.N_CHOICES
    fig = view.figures["main"]
    slider = fig.layout.sliders[0]
    assert len(slider.steps) == len(view_of.N_STEPS) and slider.active == view_of.N_STEPS.index(16)
    # the server's figure at each n has the same traces as the slider's step: only the two markers move
    for i, n in enumerate(view_of.N_CHOICES):
        other = view_of.figures(SPEC.defaults().replace(ttc_n=n), MAIN).figures["main"]
        assert len(other.data) == len(fig.data) == 6
        step = slider.steps[i]
        assert list(step.args[2]) == [2, 5]
        assert step.args[0]["x"] == [[int(n)], [int(n)]]
        assert other.data[2].x[0] == int(n) and math.isclose(other.data[5].y[0], step.args[0]["y"][1][0])
        assert other.layout.annotations[0].text == step.args[1]["annotations[0].text"]


@pytest.mark.parametrize(("p", "n", "m"), [(0.35, 15, "10"), (0.3, 25, "1000"), (0.45, 25, "1"), (0.2, 11, "∞")])
def test_majority_vote_against_partitions(p: float, n: int, m: str) -> None:
    state = SPEC.defaults().replace(ttc_vote_p=p, ttc_vote_n=n, ttc_m=m, ttc_view=view_of.VOTE)
    r = _readouts(state)
    label = "every wrong answer distinct" if m == "∞" else f"m = {m}"
    mm = math.inf if m == "∞" else int(m)
    assert r[f"Majority vote, {label}"] == f"{ref.plurality(p, n, mm):.3f}"
    assert r["A verifier instead"] == f"{1 - (1 - p) ** n:.3f}"


def test_a_plurality_wins_below_one_half_only_with_several_wrong_answers() -> None:
    many = view_of.figures(SPEC.defaults().replace(ttc_vote_p=0.3, ttc_m="10", ttc_vote_n=25), ALL).facts["vote"]
    assert many[0] > 0.5 > many[1]  # m = 10 wins the plurality at p = 0.3; m = 1 loses it


def test_pass_at_k_at_the_same_compute() -> None:
    facts = view_of.figures(SPEC.defaults(), ALL).facts["pass"]
    assert facts == pytest.approx((1 - 0.95**40, 1 - 0.7**4))


def test_compute_split_against_the_rewritten_toy() -> None:
    r = _readouts(SPEC.defaults().replace(ttc_view=view_of.SPLIT))
    s = ref.split(1e23, 1e8, 1000)
    assert r["Best share on training (toy)"] == f"{100 * s['share']:.1f}%"
    assert r["Samples per query"] == f"{s['samples']:.1f}"
    assert r["Problems solved (toy)"] == f"{s['accuracy']:.3f}"
    assert s["tokens_per_param"] > 20  # overtrained beside Chinchilla's rule


def test_predict_first_hides_the_peak_then_reveals_it() -> None:
    hidden = view_of.figures(SPEC.defaults().replace(predict_ttc=True), ALL)
    assert hidden.facts["predict"] == "hidden" and "main" not in hidden.drags
    assert all("147" not in r.value for r in hidden.readouts)
    shown = view_of.figures(SPEC.defaults().replace(predict_ttc=True, guess_ttc_peak=100), ALL)
    r = {x.label: x.value for x in shown.readouts}
    assert r["Gold score's peak (the answer)"] == f"n* = {ref.peak_n()}" and r["Your guess"] == "n = 100"


@pytest.mark.parametrize("name", list(SPEC.presets))
def test_presets_build(name: str) -> None:
    view = view_of.figures(SPEC.defaults().replace(**SPEC.presets[name]), MAIN)
    assert "main" in view.figures
