"""core.schedules against definitions written out here, not against itself: every LR shape (linear warm-up; cosine;
WSD with a linear, cosine or 1-sqrt cool-down) against its formula, cosine also against torch's CosineAnnealingLR,
and the schedules page's and card's texts about the 1-sqrt cool-down and the cosine-vs-WSD ordering (issue 28:
the old "sqrt" shape was the mirror image of Hägele et al. 2024's 1 - sqrt(u), and a test locked it in)."""

import math
from pathlib import Path

import numpy as np
import pytest
import torch

from core import schedules
from core.schedules import lr_schedule
from study.cards import load_cards
from tests.apptest import explanation, no_exception, opened
from tests.test_content_schedules import _loss as _loss_curve
from views import Options
from views import schedules as view_of

CARDS = {c.id: c for c in load_cards(Path(__file__).resolve().parents[1] / "cards")[0]}


def _cooldown(shape: str, u: float) -> float:
    """The LR as a fraction of the way from the floor to the peak at progress u of a decay: 1 at u = 0, 0 at u = 1.
    linear: 1 - u; cosine: (1 + cos(pi u)) / 2 (Loshchilov & Hutter 2017); 1-sqrt: 1 - sqrt(u) (Hägele et al. 2024,
    their code's "sqrt": final + (1 - final)(1 - sqrt(progress)); transformers' decay_type="1-sqrt")."""
    return {"linear": 1 - u, "cosine": (1 + math.cos(math.pi * u)) / 2, "1-sqrt": 1 - math.sqrt(u)}[shape]


def _reference(kind, steps, peak, W, floor, D=None, shape="linear"):
    """The learning rate at steps 1..steps, one step at a time: peak * s / W during the warm-up, then cosine over
    the rest of the run, or WSD: the peak until the last D steps, then the cool-down to the floor."""
    eta_min = floor * peak
    out = []
    for s in range(1, steps + 1):
        if s <= W:
            out.append(peak * s / W)
        elif kind == "constant":
            out.append(peak)
        elif kind == "cosine":
            u = (s - W) / (steps - W)
            out.append(eta_min + (peak - eta_min) * _cooldown("cosine", u))
        else:
            u = max(0.0, (s - (steps - D)) / D)
            out.append(eta_min + (peak - eta_min) * _cooldown(shape, u))
    return np.array(out)


SETTINGS = [  # (steps, peak, warm-up, floor, WSD decay steps)
    (1000, 1.0, 100, 0.1, 200),
    (1000, 3e-4, 10, 0.0, 1),
    (777, 6e-4, 0, 0.25, 700),
    (50, 2.0, 1, 0.5, 49),
    (20_000, 1e-3, 200, 0.1, 4000),
]


@pytest.mark.parametrize(("steps", "peak", "W", "floor", "D"), SETTINGS)
@pytest.mark.parametrize("shape", ["linear", "cosine", "1-sqrt"])
def test_wsd_every_cooldown_shape_against_its_formula(steps, peak, W, floor, D, shape):
    got = lr_schedule("wsd", steps, peak, W, floor, decay_steps=D, decay_shape=shape)
    np.testing.assert_allclose(got, _reference("wsd", steps, peak, W, floor, D, shape), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(("steps", "peak", "W", "floor", "D"), SETTINGS)
@pytest.mark.parametrize("kind", ["cosine", "constant"])
def test_cosine_and_constant_against_their_formulas(steps, peak, W, floor, D, kind):
    got = lr_schedule(kind, steps, peak, W, floor)
    np.testing.assert_allclose(got, _reference(kind, steps, peak, W, floor), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize(
    ("steps", "peak", "W", "floor"), [(1000, 1.0, 100, 0.1), (500, 3e-4, 0, 0.0), (64, 1e-3, 7, 0.3)]
)
def test_cosine_against_torch_cosine_annealing_lr(steps, peak, W, floor):
    """torch's CosineAnnealingLR(T_max = steps - W, eta_min) gives, after k calls of step(), eta_min + (peak -
    eta_min)(1 + cos(pi k / T_max)) / 2. Index convention: the project's step s after the warm-up is k = s - W; its
    warm-up ends on the peak at s = W, which is torch's k = 0."""
    param = torch.nn.Parameter(torch.zeros(1))
    opt = torch.optim.SGD([param], lr=peak)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=steps - W, eta_min=floor * peak)
    torch_lr = []
    for _ in range(steps - W + 1):  # k = 0 .. steps - W
        torch_lr.append(opt.param_groups[0]["lr"])
        opt.step()
        sched.step()
    ours = lr_schedule("cosine", steps, peak, W, floor)
    if W:
        assert ours[W - 1] == pytest.approx(torch_lr[0], rel=1e-12)  # the peak, where the warm-up ends
    np.testing.assert_allclose(ours[W:], torch_lr[1:], rtol=1e-9, atol=1e-15)


def test_the_1sqrt_cooldown_is_hageles_not_its_mirror():
    """W1: lr = floor + (peak - floor)(1 - sqrt(u)) drops fast, then approaches the floor slowly: below the linear
    cool-down inside the decay. The old "sqrt" shape (floor + (peak - floor) sqrt(1 - u)) sat above it."""
    steps, W, D, floor = 1000, 100, 200, 0.1
    lr = lr_schedule("wsd", steps, 1.0, W, floor, decay_steps=D, decay_shape="1-sqrt")
    lin = lr_schedule("wsd", steps, 1.0, W, floor, decay_steps=D, decay_shape="linear")
    for u, frac in ((0.25, 0.5), (0.5, 1 - math.sqrt(0.5)), (0.81, 0.1)):  # 1 - sqrt(u)
        s = steps - D + round(u * D)
        assert lr[s - 1] == pytest.approx(floor + (1 - floor) * frac, rel=1e-12)
    assert np.all(lr[steps - D : -1] < lin[steps - D : -1])
    assert lr[-1] == pytest.approx(floor) and np.all(lr[W : steps - D] == 1.0)
    with pytest.raises(ValueError):
        lr_schedule("wsd", steps, decay_shape="sqrt")  # the mirrored shape's old name is gone


def _loss(lr) -> float:
    """The end of L(s) = L0 + A S1^-alpha - C S2 (Tissue et al. 2024), by the plain loop of
    tests/test_content_schedules.py (S1 the summed LR, S2 the summed momentum of its drops; not core)."""
    return _loss_curve(list(lr))[-1]


def test_the_page_offers_the_1sqrt_shape_with_its_formula():
    field = next(f for f in view_of.SPEC.fields if f.name == "wsd_shape")
    assert field.choices == ("linear", "cosine", "1-sqrt")
    assert "1 - √u" in field.help and "Hägele et al. 2024" in field.help


@pytest.fixture(scope="module")
def explain():
    at = opened("pages/13_Schedules.py", {"wsd_shape": "1-sqrt"})
    assert no_exception(at)
    return explanation(at, "A schedule starts with")


def test_the_page_says_the_cosine_wsd_ordering_is_not_a_finding(explain):
    """Nit 13: with the illustrative constants cosine ends below WSD-linear; Hägele et al. 2024 measure a ~20%
    cool-down matching cosine and 1-sqrt beating linear. The page says so and quotes the 1-sqrt end loss."""
    end = {shape: _loss(_reference("wsd", 10_000, 1.0, 100, 0.1, 2000, shape)) for shape in ("linear", "1-sqrt")}
    cosine = _loss(_reference("cosine", 10_000, 1.0, 100, 0.1))
    assert (f"{cosine:.3f}", f"{end['linear']:.3f}", f"{end['1-sqrt']:.3f}") == ("2.128", "2.156", "2.142")
    assert end["1-sqrt"] < end["linear"]  # in the model too, 1-sqrt ends below linear
    text = " ".join(explain.split())
    assert "is not a finding" in text and "cool-down of about 20% of the run matching cosine" in text
    assert "1-sqrt cool-down, η_max(1 − √u)" in text and "floor: η_min + (η_max − η_min)(1 − √u)" in text
    assert f"(here it ends at {end['1-sqrt']:.3f})" in text


def test_card_scaling15_gives_the_measured_finding_and_large_not_huge():
    """M3, nit 14 and the Kaplan follow-up of scaling-15."""
    card = CARDS["scaling-15"]
    end = _loss(_reference("wsd", 10_000, 1.0, 100, 0.1, 2000, "1-sqrt"))
    assert card.answer.number.startswith("Measured: WSD with a cool-down of about 20% of the run matches cosine")
    assert "(Hägele et al. 2024)" in card.answer.number and f"with a 1-sqrt decay at {end:.3f}" in card.answer.number
    assert "huge" not in card.text and "Liu et al. 2020" in card.follow_ups[0] and "large" in card.follow_ups[0]
    assert "Porian et al. 2024 find the decay a minor factor" in card.follow_ups[1]


# ---------------------------------------------------------------------------------------------- review 2 (issue 28)


def _curve(lr) -> np.ndarray:
    """The whole modelled loss curve L(1..s), by the plain loop of tests/test_content_schedules.py (not core)."""
    return np.array(_loss_curve(list(lr)))


def test_the_page_defines_u_where_it_gives_the_1sqrt_formula(explain):
    """Review 2, N3: the explanation's formula names its variable."""
    text = " ".join(explain.split())
    assert "(1 − √u) with u the progress through the cool-down from 0 to 1" in text


@pytest.mark.parametrize(("shape", "floor"), [("1-sqrt", 0.1), ("linear", 0.0), ("cosine", 0.25)])
def test_wsd_branches_decay_with_the_runs_floor_and_shape(shape, floor):
    """Review 2 (outside the text scope): the branches used to be linear decays to 10% whatever the state said. A
    branch at 5,000 with a 2,000-step decay ends at 2.175 drawn the old way, 2.162 with 1-sqrt, 2.167 with floor 0."""
    state = view_of.SPEC.state(
        {"sched_view": "WSD branches", "wsd_shape": shape, "lr_floor": floor, "branch_at": 5000, "wsd_decay": 0.2}
    )
    out = view_of.figures(state, Options(parts=frozenset({"main", "WSD branches"})))
    steps, W, D = 10_000, 100, 2000
    want = {b: _loss(_reference("wsd", b + D, 1.0, W, floor, D, shape)) for b in out.facts["branches"]}
    assert out.facts["branch"] == 5000 and f"{out.facts['branch_end']:.3f}" == f"{want[5000]:.3f}"
    old = _loss(_reference("wsd", 5000 + D, 1.0, W, 0.1, D, "linear"))
    assert f"{old:.3f}" == "2.175" and f"{want[5000]:.3f}" != "2.175"
    drawn = {t.name: t for t in out.figures["WSD branches"].data if (t.name or "").startswith("decay from")}
    for b, end in want.items():
        y = np.asarray(drawn[f"decay from step {b:,}"].y)
        assert y[-1] == pytest.approx(end, abs=5e-4), (b, y[-1], end)
    assert steps >= max(want) + D


@pytest.mark.parametrize(("warmup", "floor"), [(1000, 0.1), (100, 0.0), (300, 0.5)])
def test_kaplan_figure_draws_the_long_cosine_of_the_state(warmup, floor):
    """Review 2 (outside the text scope): the long cosine was drawn with core's default warm-up (1%) and floor (10%)
    while its markers used the state's: with the "Long warm-up (10%)" preset the 2,500-step marker sat at 2.306 and
    the curve at 2.292. Now the drawn curve is the state's schedule and passes through the markers."""
    state = view_of.SPEC.state(
        {"sched_view": "Kaplan's read-off", "warmup": warmup, "lr_floor": floor, "kaplan_n": 2500}
    )
    out = view_of.figures(state, Options(parts=frozenset({"main", "Kaplan's read-off"})))
    curve = _curve(_reference("cosine", 10_000, 1.0, warmup, floor))
    line = next(t for t in out.figures["Kaplan's read-off"].data if t.mode == "lines")
    x, y = np.asarray(line.x), np.asarray(line.y)
    np.testing.assert_allclose(y, curve[x - 1], atol=5e-4)
    assert f"{out.facts['read']:.3f}" == f"{curve[2499]:.3f}"
    if (warmup, floor) == (1000, 0.1):
        assert (f"{curve[2499]:.3f}", f"{_curve(_reference('cosine', 10_000, 1.0, 100, 0.1))[2499]:.3f}") == (
            "2.306",
            "2.292",
        )


# ---------------------------------------------------------------------------------------------- review 3 (issue 28)


def _annealing_term(lr, upto=None) -> float:
    """-C S2 at the end of lr by the plain loop, counting only the LR changes of steps 2..upto (all when None)."""
    M = schedules.DEFAULT_LOSS_MODEL
    S2 = m = 0.0
    for i in range(len(lr)):
        drop = lr[i - 1] - lr[i] if 0 < i and (upto is None or i < upto) else 0.0
        m = M.lam * m + drop
        S2 += m
    return -M.C * S2


@pytest.mark.parametrize("warmup", [100, 1000, 0])
def test_review3_the_constant_runs_annealing_term_is_the_warmups_rise(warmup):
    """Review 3 (outside the text scope): the readout said "no decay: the annealing term is 0", but the warm-up's rises
    count as negative annealing in the Tissue et al. form: +0.148 nats of the constant run's 2.229 at the defaults,
    the same in every schedule that shares the warm-up."""
    state = view_of.SPEC.state({"warmup": warmup})
    out = view_of.figures(state, Options(parts=frozenset({"main"})))
    note = next(r.help for r in out.readouts if r.label == "Modelled end loss: constant")
    steps = 10_000
    const = _reference("constant", steps, 1.0, warmup, 0.1)
    term = _annealing_term(const)
    if warmup == 0:
        assert term == 0 and note == "no decay and no warm-up: the annealing term is 0"
        return
    assert term > 0 and f"(+{term:.2f} here, the same in every schedule)" in note
    assert "the annealing term is 0" not in note
    if warmup == 100:
        assert (f"{term:.3f}", f"{_loss(const):.3f}") == ("0.148", "2.229")
    # the same in every schedule: the warm-up's own changes (steps 2..W) contribute the same -C S2 to each
    for lr in (_reference("cosine", steps, 1.0, warmup, 0.1), _reference("wsd", steps, 1.0, warmup, 0.1, 2000)):
        assert _annealing_term(lr, upto=warmup) == pytest.approx(term, rel=1e-12)
