"""The tables of tests/test_view_numbers.py for the policy-gradient page: per view (tests/page_numbers.py ``views``), a
list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts and figure texts show.

The references are tests/policy_gradient_reference.py's, never core/policy_gradient.py's: the bandit's sums over its
four answers in plain Python, the group estimators by every ordered group of answers, the 0/1 case on a two-answer
bandit enumerated the same way, and gradient ascent in plain loops.
"""

from __future__ import annotations

from tests import policy_gradient_reference as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import FORMULA, GIVEN, _preset
from views import policy_gradient as v_pg

PG = v_pg.SPEC
SHRINK = "the 1 of (G − 1)/G, the group mean's factor written beside it"
ZERO_01 = "the two rewards of a checker, 0 and 1"
SD = "one standard deviation: the bar's half-width"
SQUARE = "the square of a norm"
PARALLEL = (
    "a cosine of one, parallel: test_views_policy_gradient.py::"
    "test_graded_rewards_turn_the_std_normalised_gradient_and_0_1_rewards_do_not"
)


def _inputs(p: dict) -> tuple[tuple[float, ...], tuple[float, ...], int, float]:
    return v_pg.POLICIES[p["pg_policy"]], v_pg.REWARD_SETS[p["pg_rewards"]], int(p["pg_G"]), float(p["pg_b"])


def spread(p: dict, panel: bool = True) -> list[Ref]:
    pi, r, G, b = _inputs(p)
    g = ref.gradient(pi, r)
    gg = ref.dot(g, g)
    gm, v_gm = ref.group_moments(pi, r, "group_mean", G)
    _, v_loo = ref.group_moments(pi, r, "leave_one_out", G)
    norm, _ = ref.group_moments(pi, r, "group_norm", G)
    scale, cos = ref.on_gradient(pi, r, norm), ref.cosine(pi, r, norm)
    J = ref.objective(pi, r)
    var = [ref.single_variance(pi, r, x, G) / gg for x in (0.0, b, J, ref.best_baseline(pi, r))]
    refs = [
        Ref(f"Expected reward J: {J:.3f}", J),
        Ref(f"Group mean: E[g] on ∇J: {ref.on_gradient(pi, r, gm):.3f}", ref.on_gradient(pi, r, gm)),
        Ref(f"Group mean: E[g] on ∇J help: (G − 1)/G at G = {G}", SHRINK, GIVEN),
        Ref(f"RLOO: variance ÷ the group mean's: {v_loo / v_gm:.2f}", v_loo / v_gm),
        Ref(f"RLOO: variance ÷ the group mean's help: (G/(G − 1))² at G = {G}: RLOO's estimate is G/(G − 1)", SHRINK,
            GIVEN, SHRINK),
        Ref(f"Mean and std: E[g] on ∇J, cosine: {scale:.2f}, {cos:.3f}", scale, cos),
        Ref("with 0/1 rewards the cosine is 1", ZERO_01, ZERO_01, PARALLEL),
        Ref(f"tr Cov, no baseline: {var[0]:.2f}", var[0]),
        Ref(f"tr Cov, no baseline help: in units of |∇J|², one update of G = {G} answers", GIVEN),
        Ref(f"tr Cov, best constant b*: {var[3]:.2f}", var[3]),
        Ref(f"in units of |∇J|², G = {G}; the constant b = {b:g} gives {var[1]:.2f}, the mean reward E[r] {var[2]:.2f}",
            GIVEN, GIVEN, var[1], var[2]),
    ]  # fmt: skip
    if panel:
        refs += [
            Ref(f"G = {G} answers per update group mean: E[g] = {ref.on_gradient(pi, r, gm):.3f} ∇J RLOO: E[g] = ∇J, "
                f"variance × {v_loo / v_gm:.2f} mean and std: {scale:.2f} on ∇J, cos {cos:.3f}",
                GIVEN, ref.on_gradient(pi, r, gm), v_loo / v_gm, scale, cos),
            Ref("exact mean ± 1 sd along ∇J", SD),
        ]  # fmt: skip
    return refs


def zero(p: dict) -> list[Ref]:
    pi, r, _, b = _inputs(p)
    J, bstar = ref.objective(pi, r), ref.best_baseline(pi, r)
    vals = (ref.single_variance(pi, r, b), ref.single_variance(pi, r, bstar), ref.single_variance(pi, r, 0.0))
    return [
        Ref("π_k b (1 − π_k) for a = k", FORMULA),
        Ref("Σ_a π_a b (e_a − π): 0", 0.0),
        Ref(f"Best constant b*: {bstar:.3f}", bstar),
        Ref(f"not E[r] = {J:.3f}", J) if abs(bstar - J) >= 5e-4 else Ref("every |s_a|² is the same", SQUARE),
        Ref(f"One answer: tr Cov at your b: {vals[0]:.4f}", vals[0]),
        Ref(f"One answer: tr Cov at your b help: b = {b:g}; with no baseline {vals[2]:.4f}", GIVEN, vals[2]),
        Ref(f"One answer: tr Cov at b*: {vals[1]:.4f}", vals[1]),
        Ref("the sum: 0", 0.0),
    ]


def group(p: dict) -> list[Ref]:
    G = int(p["pg_G"])
    half, tenth = ref.binary_scale(0.5, G), ref.binary_scale(0.1, G)
    same = ref.binary_scale(0.3, 2) - ref.binary_scale(0.7, 2), ref.binary_scale(0.3, 3) - ref.binary_scale(0.7, 3)
    assert max(abs(x) for x in same) < 1e-12  # one weight for every p at G = 2 and 3, as the help says
    return [
        Ref("Right: the std-normalised estimate with 0/1 rewards", ZERO_01),
        Ref("larger by the constant factor √(G/(G − 1))", SHRINK),
        Ref(f"0/1 rewards: E[g] ÷ ∇J at p = 0.5 / 0.1: {half:.2f} / {tenth:.2f}", ZERO_01, ZERO_01, GIVEN, GIVEN, half,
            tenth),
        Ref("0/1 rewards: E[g] ÷ ∇J at p = 0.5 / 0.1 help: mean and std at G", ZERO_01, ZERO_01, GIVEN, GIVEN),
        Ref(f"mean and std at G = {G}: parallel", GIVEN),
        Ref("the same for every p at G = 2 and 3, about 1/√(p(1 − p)) in large groups",
            "group sizes checked by enumeration here (binary_scale)", "ibid.", "the large-G limit's formula",
            "ibid."),
        Ref(f"0/1 rewards, G = {G}: E[g] ÷ ∇J", ZERO_01, ZERO_01, GIVEN),
        Ref("mean and std, 0/1 rewards", ZERO_01),
    ]  # fmt: skip


def learning(p: dict) -> list[Ref]:
    pi, r, G, _ = _inputs(p)
    S, lr = int(p["pg_steps"]), float(p["pg_lr"])
    true, gm, norm = (ref.ascent(pi, r, k, G, S, lr) for k in ("true", "group_mean", "group_norm"))
    first = ref.on_gradient(pi, r, ref.group_moments(pi, r, "group_norm", G)[0])
    assert max(r) - min(r) <= 1  # rewards in [0, 1]: a group's population std is at most 0.5
    return [
        Ref(f"J after {S} exact steps: ∇J: {true:.3f}", GIVEN, true),
        Ref(f"J after {S} exact steps: ∇J help: learning rate {lr:g}", GIVEN, GIVEN),
        Ref(f"J after {S} exact steps: group mean: {gm:.3f}", GIVEN, gm),
        Ref(f"J after {S} exact steps: group mean help: steps of (G − 1)/G ∇J at G = {G}", GIVEN, SHRINK, GIVEN),
        Ref(f"J after {S} exact steps: mean and std: {norm:.3f}", GIVEN, norm),
        Ref(
            f"J after {S} exact steps: mean and std help: its steps are about 1/std times longer (the std is at most "
            f"0.5 with rewards in [0, 1]; the first expected step is {first:.1f} ∇J here)",
            GIVEN,
            "one over the std",
            "the largest std of values in [0, 1], half of them at each end",
            GIVEN,
            GIVEN,
            first,
        ),
    ]


def _new(refs: list[Ref], shown: list[Ref]) -> list[Ref]:
    """The refs whose passage the defaults do not already show (a preset's view lists only new texts)."""
    return [r for r in refs if r.snippet not in {t.snippet for t in shown}]


P0 = PG.defaults()
_SPREAD0 = spread(P0)
_WHY = _preset(PG, "A6.5: why a baseline is unbiased")
_WHICH = _preset(PG, "A6.5: which baseline minimises the variance")
_RLOO = _preset(PG, "RLOO: unbiased, the group mean's signal-to-noise")
_DR = _preset(PG, "Dr. GRPO: with 0/1 rewards the std weights each prompt")
_SAMPLED = _preset(PG, "Learning with sampled groups")

POLICY_GRADIENT: dict[str, list[Ref]] = {
    "defaults": _SPREAD0,
    "tab Zero in expectation": zero(P0),
    "tab Group baselines": group(P0),
    "tab Learning": learning(P0),
    "preset A6.5: why a baseline is unbiased": [*_new(spread(_WHY, panel=False), _SPREAD0), *zero(_WHY)],
    "preset A6.5: which baseline minimises the variance": [*_new(spread(_WHICH, panel=False), _SPREAD0),
                                                           *zero(_WHICH)],
    "preset RLOO: unbiased, the group mean's signal-to-noise": _new(spread(_RLOO), _SPREAD0),
    "preset Dr. GRPO: with 0/1 rewards the std weights each prompt": [*_new(spread(_DR, panel=False), _SPREAD0),
                                                                      *group(_DR)],
    "preset Learning with sampled groups": learning(_SAMPLED),
}  # fmt: skip

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/22_Policy_gradient.py": POLICY_GRADIENT}
