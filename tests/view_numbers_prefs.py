"""The tables of tests/test_view_numbers.py for the pages of group 'prefs': per page, per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show.

The references are written here or in tests/card_references.py: the KL-regularised optimum π* ∝ π_ref·exp(r/β) and
its KL, entropy and β·log Z in closed form; DPO's implicit rewards and loss (autograd for the weight); the reward
model's Bradley-Terry fit redone with scipy on the page's sampling protocol (numpy's seeded generator, written out
below); the length toy's optimum by logsumexp; ln V, the SFT prompt share, the packing mask's cross-document pairs
and the padding waste of the page's seeded lengths by counting. Only input data is read from the project (the
SPECs' defaults and presets, the bundled held-out text, the DPO pairs' log-probabilities).
"""

from __future__ import annotations

import math

import numpy as np
from scipy import optimize, special

from core.dpo import DPO_PRESETS  # input data only: the pairs' log-probabilities and β
from pages.views import kl_leash as v_kl_leash
from pages.views import loss_units as v_loss_units
from pages.views import reward_model as v_reward_model
from tests import card_references as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import BIGRAMS, COUNT, FORMULA, GIVEN, NAME, PAD_LENGTHS, _padding_waste_pct, _preset

KLS, RMS, LU = v_kl_leash.SPEC, v_reward_model.SPEC, v_loss_units.SPEC


def _floats(text: str) -> tuple[float, ...]:
    return tuple(float(x) for x in text.split(","))


# fmt: off
# ============================================================================ 2. KL leash
def _pi_star(pi_ref: tuple[float, ...], r: tuple[float, ...], beta: float) -> tuple[float, ...]:
    return tuple(ref.kl_policy(pi_ref, r, beta, k) for k in range(len(pi_ref)))


def _entropy(p: tuple[float, ...]) -> float:
    return float(-sum(x * math.log(x) for x in p if x > 0))


def _refs_kl(values: dict) -> list[Ref]:
    """The readouts of the leash at the view's β and answers, and the figure's legend of π*(answer)."""
    pi_ref, r, beta = _floats(values["pi_ref"]), _floats(values["r"]), float(values["beta"])
    r_true = _floats(values["r_true"]) if values.get("r_true", "").strip() else None
    pi = _pi_star(pi_ref, r, beta)
    kl = ref.kl_divergence(pi, pi_ref)
    reward = sum(p * x for p, x in zip(pi, r, strict=True))
    out = [
        Ref("KL(π* ‖ π_ref): 0.111 nats", kl),
        Ref("E_π*[r]: 0.731", reward),
        Ref("E[r] − β·KL: 0.620", reward - beta * kl),
        Ref("β·log Z: 0.620", ref.kl_max_objective(pi_ref, r, beta)),
        Ref("Entropy H(π*): 0.582 nats", _entropy(pi)),
        Ref("Entropy H(π*) help: π_ref has 0.693 nats", _entropy(pi_ref)),
    ]
    summary = ["β = 1 KL(π* ‖ π_ref) = 0.111 nats E π* [r] = 0.731", GIVEN, kl, reward]
    if r_true is not None:
        true = sum(p * x for p, x in zip(pi, r_true, strict=True))
        out.append(Ref("True E_π*[r_true]: 0.740", true))
        summary = [summary[0] + " true E π* [r] = 0.740", GIVEN, kl, reward, true]
    summary[0] += " E[r] − β·KL = 0.620 β·log Z = 0.620 H(π*) = 0.582 nats"
    out.append(Ref(*summary, reward - beta * kl, ref.kl_max_objective(pi_ref, r, beta), _entropy(pi)))
    return out + [Ref("β = 1", GIVEN)]


KL_DEFAULTS = _refs_kl(KLS.defaults()) + [
    Ref("π_ref (reference, the SFT model)", NAME),
    Ref("← β → 0: all mass on the top reward", "the limit the annotation names"),
    Ref("π*(y1)", NAME),
    Ref("π*(y2)", NAME),
]


def _takeover_beta(pi_ref: tuple[float, ...], r: tuple[float, ...], share: float = 0.9) -> float:
    """The β below which π* gives the top-reward answer ``share`` of its mass (brentq on log β)."""
    top = int(np.argmax(r))
    return math.exp(optimize.brentq(lambda lb: ref.kl_policy(pi_ref, r, math.exp(lb), top) - share, -4.0, 4.0))


_TOY_REF, _TOY_R = _floats(KLS.defaults()["pi_ref"]), _floats(KLS.defaults()["r"])
_TAKEOVER = _takeover_beta(_TOY_REF, _TOY_R)

KL_HACKING = [
    Ref("π* gives **y1** (top proxy reward) 90% of its mass only once β < **0.455**; the KL from π_ref is then "
        "**0.37 nats**.", "the share the sentence asks about (its input)", _TAKEOVER,
        ref.kl_divergence(_pi_star(_TOY_REF, _TOY_R, _TAKEOVER), _TOY_REF)),
]

KL_THEOREM = [
    Ref("20,000 policies drawn with torch on cpu", KLS["policies"].default),
    Ref("20,000 random policies: none beats π* best random J = 0.6201, 4.7e−13 below β·log Z = 0.6201",
        KLS["policies"].default,
        # the best of the seeded random policies: below β·log Z by the gap beside it, far under the printed digit
        ref.kl_max_objective(_TOY_REF, _TOY_R, 1.0),
        "the seeded sample's gap (a sample; its sign: test_core_kl.py::test_no_random_policy_beats_pi_star)",
        ref.kl_max_objective(_TOY_REF, _TOY_R, 1.0)),
    Ref("random policies (4,000 of 20,000 shown)", "the figure's cap on points drawn (a count)",
        KLS["policies"].default),
    Ref("E[r] − β·KL = β·log Z (slope β = 1)", GIVEN),
]


def _refs_dpo(logp_w: float, logp_l: float, ref_w: float, ref_l: float, beta: float) -> dict[str, float]:
    return {f: ref.dpo(f, logp_w, logp_l, ref_w, ref_l, beta) for f in ("reward_w", "reward_l", "margin", "loss",
                                                                         "weight")}


_KL_DPO = _refs_dpo(*(float(KLS.defaults()[k]) for k in ("logp_w", "logp_l", "ref_w", "ref_l", "dpo_beta")))
DPO_FIGURE = "π_θ = π_ref: loss log 2"

KL_DPO = [
    Ref("r̂_w: 0.200", _KL_DPO["reward_w"]),
    Ref("r̂_l: −0.100", _KL_DPO["reward_l"]),
    Ref("Margin: 0.300", _KL_DPO["margin"]),
    Ref("DPO loss: 0.554", _KL_DPO["loss"]),
    Ref("DPO loss help: −log σ(margin) in nats; log 2 = 0.693 at π_θ = π_ref", FORMULA, math.log(2)),
    Ref("Weight: 0.426", _KL_DPO["weight"]),
    Ref("margin 0.300 loss 0.554, weight 0.426", _KL_DPO["margin"], _KL_DPO["loss"], _KL_DPO["weight"]),
    Ref(DPO_FIGURE, FORMULA),
]


def _kl_preset(name: str) -> list[Ref]:
    values = _preset(KLS, name)
    names = [n.strip() for n in values["names"].split(",")]
    swap = {"β = 1": f"β = {float(values['beta']):g}"}
    out = []
    for row in _refs_kl(values):
        snippet = row.snippet
        for old, new in swap.items():
            snippet = snippet.replace(old, new)
        out.append(Ref(snippet, *row.values))
    return out + [Ref(f"π*({n})", NAME) for n in names if any(c.isdigit() for c in n)]


TABLES: dict[str, dict[str, list[Ref]]] = {
    "pages/2_KL_leash.py": {
        "defaults": KL_DEFAULTS,
        "tab Reward hacking": KL_HACKING,
        "tab Theorem check": KL_THEOREM,
        "tab DPO": KL_DPO,
        "preset Lesson's toy (two answers)": [],  # only the legend's answer names change
        "preset Reward hack": _kl_preset("Reward hack"),
        "preset Five answers": _kl_preset("Five answers"),
        "preset DPO: Start of training (pi = pi_ref)": [],  # sets the DPO tab's inputs; the tab is not open
        "preset DPO: Both answers less likely": [],
    },
}
# fmt: on
