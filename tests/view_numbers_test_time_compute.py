"""The tables of tests/test_view_numbers.py for the test-time compute page: per view (tests/page_numbers.py ``views``),
a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, captions and figure texts show.

The references are written here and in tests/ttc_reference.py, never from core/test_time_compute.py: best-of-n's
success as 1 − (1 − p)^n, its KL by integrating the best sample's quantile density (scipy's quad), the gold score's
peak by a search over whole n, majority voting by enumerating the partitions of the wrong votes, and the compute
split rewritten from its stated assumptions.
"""

from __future__ import annotations

import math

from tests import ttc_reference as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import FORMULA, GIVEN, _preset
from views import test_time_compute as v_ttc

TT = v_ttc.SPEC
DN_FLOOR = (
    "a floor under the toy's best D/N at its A7.4 presets "
    "(test_views_test_time_compute.py::test_the_toy_trains_past_1000_tokens_per_parameter)"
)
SEED = "the seed's number (002 A7.4: Chinchilla's tokens per parameter)"


def best(p: dict) -> list[Ref]:
    pr, n, a, b = p["ttc_p"], int(p["ttc_n"]), p["ttc_alpha"], p["ttc_beta"]
    s, kl, g = ref.success(pr, n), ref.kl(n), ref.gold(n, a, b)
    star = ref.peak_n(a, b)
    kl_star = (a / (2 * b)) ** 2
    return [
        Ref(f"Best-of-n with a verifier: {s:.3f}", s),
        Ref(f"Best-of-n with a verifier help: P(at least one of n = {n} samples is correct) = 1 - (1 - {pr:g})^{n}: "
            f"pass@{n}", GIVEN, FORMULA, FORMULA, GIVEN, GIVEN, GIVEN),
        Ref(f"KL from the base policy: {kl:.2f} nats", kl),
        Ref(f"KL from the base policy help: log n - (n - 1)/n at n = {n}", FORMULA, GIVEN),
        Ref(f"Gold score, reward model: +{g:.3f}", g),
        Ref(f"Gold score, reward model help: d (α - β d) with d = √KL = {math.sqrt(kl):.2f}, α = {a:g}, β = {b:g}",
            math.sqrt(kl), GIVEN, GIVEN),
        Ref(f"Gold score's peak: n* = {star}", star),
        Ref(f"Gold score's peak help: n from the KL formula (an upper bound, so the true n is at least this); "
            f"KL* = (α / 2β)² = {kl_star:.3g} nats, gold α²/4β = {a * a / (4 * b):.3g}",
            FORMULA, kl_star, FORMULA, a * a / (4 * b)),
        Ref(f"n = {n} verifier: {s:.3f} KL: {kl:.2f} nats gold: +{g:.3f}", GIVEN, s, kl, g),
    ]  # fmt: skip


def vote(p: dict) -> list[Ref]:
    vp, m, n = p["ttc_vote_p"], p["ttc_m"], p["ttc_vote_n"]
    mm = math.inf if m == "∞" else int(m)
    v_m, v_1 = ref.plurality(vp, n, mm), ref.plurality(vp, n, 1)
    label = "every wrong answer distinct" if m == "∞" else f"m = {m}"
    refs = [
        Ref(f"Majority vote, {label}: {v_m:.3f}", *([] if m == "∞" else [GIVEN]), v_m),
        Ref(f"Majority vote, {label} help: P(the plurality of n = {n} samples is right) at p = {vp:g}",
            *([] if m == "∞" else [GIVEN]), GIVEN, GIVEN),
        Ref(f"A verifier instead: {ref.success(vp, n):.3f}", ref.success(vp, n)),
        Ref(f"A verifier instead help: 1 - (1 - {vp:g})^{n}", FORMULA, FORMULA, GIVEN, GIVEN),
        Ref("with m equally likely wrong answers, a plurality wins once p > 1/(m + 1)", FORMULA, FORMULA),
        Ref(f"n: samples voted on (p = {vp:g})", GIVEN),
        Ref(f"p: one sample's accuracy (n = {n})", GIVEN),
        *([Ref("one wrong answer (m = 1)", "one wrong answer")] if m != "1" else []),
        *([Ref(f"majority vote, m = {m}", GIVEN)] if m != "∞" else []),
    ]  # fmt: skip
    if mm != 1:
        refs += [
            Ref(f"Majority vote, one wrong answer: {v_1:.3f}", v_1),
            Ref("Majority vote, one wrong answer help: m = 1", "one wrong answer"),
        ]
    return refs


def pass_at_k(p: dict) -> list[Ref]:
    ps, pl, r, k = p["ttc_p_small"], p["ttc_p_large"], p["ttc_ratio"], p["ttc_k"]
    large, small = ref.success(pl, k), ref.success(ps, k * r)
    return [
        Ref("pass@k = 1 - (1 - p)^k", FORMULA, FORMULA),
        Ref(f"Large model, pass@{k}: {large:.3f}", GIVEN, large),
        Ref(f"Large model, pass@{k} help: 1 - (1 - {pl:g})^{k}", GIVEN, FORMULA, FORMULA, GIVEN, GIVEN),
        Ref(f"Small model, pass@{k * r} at the same compute: {small:.3f}", k * r, small),
        Ref(f"Small model, pass@{k * r} at the same compute help: 1 - (1 - {ps:g})^{k * r}: {r} small "
            + ("sample costs" if r == 1 else "samples cost"), k * r, FORMULA, FORMULA, GIVEN, k * r, GIVEN),
    ]  # fmt: skip


def split(p: dict) -> list[Ref]:
    C, R, T = float(p["ttc_budget"]), float(p["ttc_queries"]), p["ttc_tokens"]
    s = ref.split(C, R, T)
    return [
        Ref("training costs 6ND, each sampled answer 2N FLOPs per token", FORMULA, FORMULA),
        Ref("At 1,000+ tokens per parameter the Hoffmann fit", DN_FLOOR),
        Ref(f"Best share on training (toy): {100 * s['share']:.1f}%", 100 * s["share"]),
        Ref("on a grid of half a percent", FORMULA),
        Ref(f"Its model: {s['params'] / 1e9:.2f}B parameters", s["params"]),
        Ref(f"Its model help: trained on {s['tokens_per_param']:,.0f} tokens per parameter (Chinchilla: about 20)",
            s["tokens_per_param"], SEED),
        Ref(f"Samples per query: {s['samples']:.1f}", s["samples"]),
        Ref(f"what the rest of the budget buys each of R = 1e{round(math.log10(R))} queries of T = {T:,.0f} tokens",
            GIVEN, GIVEN),
        Ref(f"Problems solved (toy): {s['accuracy']:.3f}", s["accuracy"]),
        Ref(f"one sample alone solves {s['p_single']:.3f} on average", s["p_single"]),
        Ref("D/N = 20 (Chinchilla)", SEED),
    ]  # fmt: skip


def _new(refs: list[Ref], shown: list[Ref]) -> list[Ref]:
    """The refs whose passage the defaults do not already show (a preset's view lists only new texts)."""
    return [r for r in refs if r.snippet not in {t.snippet for t in shown}]


P0 = TT.defaults()
_BEST0 = best(P0)
_P = {name: _preset(TT, name) for name in TT.presets}
_A71, _OVER, _BEST_CASE, _SYSTEMATIC, _ONE_WRONG, _A72, _A74P, _A74, _A74B = TT.presets

TTC: dict[str, list[Ref]] = {
    "defaults": _BEST0,
    "tab Majority vote": vote(P0),
    f"tab {v_ttc.PASS}": pass_at_k(P0),
    "tab Compute split": split(P0),
    f"preset {_A71}": _new(best(_P[_A71]), _BEST0),
    f"preset {_OVER}": _new(best(_P[_OVER]), _BEST0),
    f"preset {_BEST_CASE}": _new(vote(_P[_BEST_CASE]), _BEST0),
    f"preset {_SYSTEMATIC}": _new(vote(_P[_SYSTEMATIC]), _BEST0),
    f"preset {_ONE_WRONG}": _new(vote(_P[_ONE_WRONG]), _BEST0),
    f"preset {_A72}": _new(pass_at_k(_P[_A72]), _BEST0),
    f"preset {_A74P}": _new(pass_at_k(_P[_A74P]), _BEST0),
    f"preset {_A74B}": split(_P[_A74B]),
}

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/24_Test_time_compute.py": TTC}
