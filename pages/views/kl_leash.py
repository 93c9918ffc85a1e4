"""The KL-leash page's state: K answers with their rewards and reference probabilities, β, and the tabs' inputs."""

from __future__ import annotations

from core import kl_leash as kl
from core.dpo import DPO_PRESETS
from pages.frame.state import Field, Spec

BETAS = tuple(f"{b:g}" for b in kl.beta_choices())
VIEWS = ("Beta sweep", "Reward hacking", "Theorem check", "DPO")
DERIVATION_STEPS = ("1 optimal policy", "2 reward via policy", "3 Bradley-Terry", "4 log Z cancels")


def _leash(key: str) -> dict:
    p = kl.LEASH_PRESETS[key]
    a = kl.Answers.from_preset(p)
    return {"K": a.K, **a.texts(), "beta": f"{p.beta:g}"}


TOY = _leash("toy") | {"names": ""}  # the default view is the toy, its answers numbered
LEASH_PRESETS = {
    "Lesson's toy (two answers)": _leash("toy"),
    "Reward hack": _leash("reward_hack"),
    "Five answers": _leash("k5"),
}
DPO = {
    f"DPO: {p.label}": {
        "logp_w": p.logp_w,
        "logp_l": p.logp_l,
        "ref_w": p.ref_logp_w,
        "ref_l": p.ref_logp_l,
        "dpo_beta": p.beta,
    }
    for p in DPO_PRESETS.values()
}

SPEC = Spec(
    "KL_leash",
    (
        Field("K", "Answers K", "int", TOY["K"], lo=kl.K_MIN, hi=kl.K_MAX, widget="slider"),
        Field(
            "beta",
            "β (log scale)",
            "choice",
            TOY["beta"],
            choices=BETAS,
            widget="select_slider",
            help="The KL price per nat. The slider under the bars drags β continuously.",
        ),
        Field(
            "pi_ref",
            "π_ref (reference probabilities)",
            "text",
            TOY["pi_ref"],
            help="Comma-separated, one per answer; rescaled if they do not sum to 1.",
        ),
        Field("r", "r (reward-model score, optimised)", "text", TOY["r"]),
        Field(
            "r_true", "r_true (what people want)", "text", TOY["r_true"], extra=(("placeholder", "blank: same as r"),)
        ),
        Field("names", "Answer names", "text", TOY["names"], extra=(("placeholder", "blank: y1, y2, ..."),)),
        Field("kl_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs", aliases=("view",)),
        Field("sqrt", "√KL on the x-axis (Gao et al.'s distance)", "bool", False),
        Field(
            "thm",
            "View",
            "choice",
            "plane",
            choices=("plane", "objective"),
            widget="segmented",
            help="plane: (KL, E[r]) of every policy; objective: a histogram",
        ),
        Field(
            "policies",
            "Random policies",
            "int",
            20_000,
            lo=1_000,
            hi=100_000,
            step=1_000,
            widget="slider",
            aliases=("n",),
        ),
        Field("logp_w", "log π_θ(y_w), winner", "float", -10.0, lo=-1e4, hi=0.0, step=0.5),
        Field("logp_l", "log π_θ(y_l), loser", "float", -15.0, lo=-1e4, hi=0.0, step=0.5),
        Field("ref_w", "log π_ref(y_w)", "float", -12.0, lo=-1e4, hi=0.0, step=0.5),
        Field("ref_l", "log π_ref(y_l)", "float", -14.0, lo=-1e4, hi=0.0, step=0.5),
        Field("dpo_beta", "β (DPO)", "float", 0.1, lo=1e-3, hi=100.0, step=0.05, fmt="%.3f"),
        Field(
            "step",
            "The derivation, step by step",
            "choice",
            DERIVATION_STEPS[0],
            choices=DERIVATION_STEPS,
            widget="radio",
            extra=(("horizontal", True),),
        ),
    ),
    presets={**LEASH_PRESETS, **DPO},
)
