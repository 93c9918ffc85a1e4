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


def test_the_peak_notice_shows_only_on_the_best_of_n_tab_and_never_before_a_guess() -> None:
    """At β = 0.2 the peak lies past the figure's 1,024: the notice names it on the Best-of-n tab, but not while the
    learner is asked to predict it, nor on another tab (it would give away the answer)."""
    low = SPEC.defaults().replace(ttc_beta=0.2)
    star = f"{ref.peak_n(1.0, 0.2):,}"
    assert 1024 < ref.peak_n(1.0, 0.2) < 10**7

    def said(state, options: Options) -> bool:
        return any(star in text for _, text in view_of.figures(state, options).notices)

    assert said(low, MAIN) and said(low, Options(parts=frozenset({view_of.BEST})))
    for tab in view_of.VIEWS[1:]:
        assert not said(low.replace(ttc_view=tab), MAIN)
        assert not said(low, Options(parts=frozenset({tab})))
    hidden = view_of.figures(low.replace(predict_ttc=True), ALL)
    assert hidden.facts["predict"] == "hidden"
    assert all(star not in text for _, text in hidden.notices)
    assert all(star not in r.value and star not in (r.help or "") for r in hidden.readouts)


def test_two_equally_likely_outputs_stay_under_log_2() -> None:
    """Beirami et al. 2024's counterexample, without ties: two outputs of probability ½ with different rewards. The
    best of n is the better one with probability q = 1 − 2^−n, so KL = q log 2q + (1 − q) log 2(1 − q) < log 2, while
    the formula the page quotes (its upper bound) passes log 2 from n = 4 and reads 1.835 at n = 16."""
    for n in view_of.N_STEPS[1:]:
        r = 0.5**n  # 1 − q, kept apart: q rounds to 1 at large n
        exact = (1 - r) * math.log(2 * (1 - r)) + r * math.log(2 * r)
        assert exact <= math.log(2) and exact <= ref.kl(n) + 1e-12
    assert f"{ref.kl(16):.3f}" == "1.835"


def _preset_state(name: str):
    return SPEC.defaults().replace(**SPEC.presets[name])


def test_a_systematic_wrong_answer_beats_the_vote_as_n_grows() -> None:
    """m = 2 at p = 0.3: each wrong answer (0.35) is likelier than the right one, so the vote falls 0.30 → 0.22 →
    0.10 at n = 1, 25 and 150 while a verifier tends to 1; the best case (1,000 wrong answers) at 25 samples wins."""
    name = next(k for k in SPEC.presets if "(m = 2)" in k)
    state = _preset_state(name)
    assert (state.ttc_m, state.ttc_vote_p) == ("2", 0.3)
    falls = [ref.plurality(0.3, n, 2) for n in (1, 25, 150)]
    assert [f"{v:.2f}" for v in falls] == ["0.30", "0.22", "0.10"]
    shown = [view_of.figures(state.replace(ttc_vote_n=n), ALL).facts["vote"] for n in (1, 25, 150)]
    assert [v[0] for v in shown] == pytest.approx(falls, abs=1e-9)
    assert shown[-1][3] > 0.999  # the verifier's ceiling
    best = _preset_state(next(k for k in SPEC.presets if "best case" in k))
    assert view_of.figures(best, ALL).facts["vote"][0] > 0.5


def test_the_pass_at_k_presets_show_what_they_name() -> None:
    """A7.2: a group of 8 rollouts at pass@1 = 0.01 holds a success 1 − 0.99⁸ = 7.7% of the time (the small model
    at cost ratio 1). A7.4: at pass@1 = 0.005 against 0.1 for a model 10 times the cost, the larger one wins at the
    preset's compute and at every compute (0.995^10 > 0.9 per large-sample's worth)."""
    group = _preset_state(next(k for k in SPEC.presets if k.startswith("A7.2")))
    r = _readouts(group)
    assert r["Small model, pass@8 at the same compute"] == f"{1 - 0.99**8:.3f}" == "0.077"
    rare = _preset_state(next(k for k in SPEC.presets if k.startswith("A7.4: on problems")))
    small, large = view_of.figures(rare, ALL).facts["pass"]
    assert (rare.ttc_p_small, rare.ttc_p_large, rare.ttc_ratio, rare.ttc_tokens) == (0.005, 0.1, 10, 1000)
    assert large > small
    assert all(0.9**x < 0.995 ** (10 * x) for x in (0.1, 1, 10, 100, 1000))  # P(all fail): the large one lower
    assert all(_preset_state(k).ttc_tokens == 1000 for k in SPEC.presets if k.startswith("A7.4"))


def test_the_over_optimisation_preset_is_past_the_peak_it_names() -> None:
    name = next(k for k in SPEC.presets if "best-of-512" in k)
    state = _preset_state(name)
    assert (state.ttc_alpha, state.ttc_beta, state.ttc_n) == (1.0, 0.25, "512")
    assert ref.peak_n(1.0, 0.25) < 512 and ref.gold(512) < ref.gold(ref.peak_n())


def test_the_toy_split_moves_as_the_explanation_says() -> None:
    """The page's explanation: from 10⁷ to 10⁹ queries on 10²³ FLOPs the toy's model stays at 2.5B; at 10¹⁰ it is
    1.8B and trained on about 1,800 tokens per parameter (from about 1,100), its training share 42.5% → 35%."""
    s7, s8, s9, s10 = (ref.split(1e23, r, 1000) for r in (1e7, 1e8, 1e9, 1e10))
    assert s7["params"] == s8["params"] == s9["params"] > s10["params"]
    assert s10["tokens_per_param"] > s8["tokens_per_param"] and s10["share"] < s8["share"]


def test_the_toy_trains_past_1000_tokens_per_parameter() -> None:
    """The caption's "1,000+ tokens per parameter": the toy's best model at its A7.4 presets."""
    for name in (k for k in SPEC.presets if k.startswith("A7.4: 10")):
        state = _preset_state(name)
        s = ref.split(float(state.ttc_budget), float(state.ttc_queries), state.ttc_tokens)
        assert s["tokens_per_param"] > 1000, name
