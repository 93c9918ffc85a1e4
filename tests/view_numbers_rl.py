"""The tables of tests/test_view_numbers.py for the pages of group 'rl': per page, per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show.

The references are written here: GRPO's statistics in exact fractions (tests/card_references.py), PPO's clip and its
gradient by torch autograd, GAE as the explicit sum of (γλ)^l δ_{t+l}, the bias and variance of the GAE study in
closed form from the chain's definition, the KL estimators as exact sums over the 4-token vocabulary, the token batch
and the KL sample re-drawn from their seeds with numpy and counted here. From the project only input data is read:
the presets' and defaults' values (SPEC) and the KL tab's two distributions (KL_TARGET, KL_REF).
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

import numpy as np
import torch

from tests import card_references as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import CITE, COUNT, FORMULA, GIVEN, _preset
from views import grpo as v_grpo
from views import ppo as v_ppo
from views.ppo import KL_REF, KL_TARGET  # input data: the KL tab's two distributions

GR, PP = v_grpo.SPEC, v_ppo.SPEC


def _floats(text: str) -> tuple[float, ...]:
    """A typed list of numbers ("1, 0, 2" or "1 0 2") as the learner typed it (input data)."""
    return tuple(float(x) for x in re.split(r"[,\s]+", str(text).strip()) if x)


# fmt: off
# ====================================================================================================== 4. GRPO
GRPO_EPS = {"0": 0.0, "1e-8": 1e-8, "1e-6": 1e-6, "1e-4": 1e-4, "1e-2": 1e-2, "0.1": 0.1}  # the ε control's options


def _grpo(name: str | None) -> tuple[tuple[float, ...], float]:
    p = _preset(GR, name) if name else GR.defaults()
    return _floats(p["rewards"]), GRPO_EPS[str(p["eps"])]


def _grpo_refs(rewards: tuple[float, ...], eps: float) -> dict[str, Ref]:
    """Every readout and figure text of one group, by key (a view lists the keys it shows)."""
    G = len(rewards)
    sd = ref.grpo_std(rewards)
    mean = float(sum(Fraction(x) for x in rewards) / G)
    binary = all(x in (0, 1) for x in rewards)
    signal = sd > 0
    sample_sd = sd / ref.grpo_sample_factor(rewards) if signal else 0.0
    scale = 1 / (sd + eps) if signal else float("nan")
    top, bottom = max(rewards), min(rewards)
    out = {
        "mean": Ref("Mean reward: 0.375", mean),
        "mean help": Ref("Mean reward help: the baseline mean(r₁..r_G), which PPO gets from its value model", FORMULA),
        "std": Ref("Std (÷G): 0.484", sd),
        "std help": Ref("Std (÷G) help: population std; sample std (÷(G−1)): 0.518", FORMULA, sample_sd),
        "push help": Ref("Push up / down help: the largest and smallest advantage in the group"),
        "factor": Ref("Mode factor: × 1", 1.0),  # the population std is the lesson's convention: factor 1
        "factor help": Ref("Mode factor help: every advantage is this times its value with the population std"),
        "scale help": Ref("Scale 1/(std + ε) help: A_i = scale × (r_i − mean); ε caps the scale at 1/ε", FORMULA),
        "main title": Ref("Advantages of 8 answers to one prompt (population std, ÷G)", COUNT),
        "main x": Ref("answer (click a bar to flip its reward 0 ↔ 1)", "the two rewards of a checker (1 right, 0 not)"),
        "difficulty title": Ref("Which prompts teach? A group of G = 8 answers", COUNT),
        "difficulty signal": Ref("P(group has signal), G = 8", COUNT),
        "difficulty modes": Ref("expected mean |A| (sample std, ÷(G−1))", FORMULA),
        "legend up": Ref("pushed up (A > 0)", "the sign the legend names"),
        "legend down": Ref("pushed down (A < 0)", "the sign the legend names"),
    }
    if binary:
        out["correct"] = Ref("Correct answers: 3 of 8", GIVEN)
        out["difficulty this"] = Ref("this group: 3 of 8 correct", GIVEN)
    else:
        out["correct"] = Ref("Correct answers: —")
        out["correct help"] = Ref("Correct answers help: the rewards are not all 0 or 1",
                                  "the two rewards of a checker (1 right, 0 not)")
    if signal:
        out["push"] = Ref("Push up / down: +1.29 / -0.77", (top - mean) * scale, (bottom - mean) * scale)
        out["scale"] = Ref("Scale 1/(std + ε): 2.066", FORMULA, scale)
        out["summary"] = Ref(
            "mean 0.375 · std 0.484. Within this group, switching the divisor rescales every bar: the sample std "
            "multiplies them by 0.9354, no std by 0.4841 (= std + ε). Across a batch the sample-std factor √((G−1)/G) "
            "is the same for every group (while ε is small against the std), but the no-std factor is each group's "
            "own std, so dropping the std re-weights prompts and changes the direction of the batch update",
            mean, sd, ref.grpo_sample_factor(rewards), sd + eps, FORMULA)
    else:
        out["push"] = Ref("Push up / down: none")
        out["scale"] = Ref("Scale 1/(std + ε): — (no signal)", FORMULA)
        out["scale help"] = Ref(
            "Scale 1/(std + ε) help: every r_i − mean is 0, so every advantage is 0 whatever the scale; with ε = 0 "
            "the scale 1/(0 + 0) is undefined and the division 0/0, which this page sets to 0", FORMULA,
            ref.grpo_advantage(rewards, 0, "none"), ref.grpo_advantage(rewards, 0), GIVEN, FORMULA, FORMULA, FORMULA,
            FORMULA, FORMULA, "the page's convention, stated")
    return out


def _pick(refs: dict[str, Ref], *keys: str) -> list[Ref]:
    return [refs[k] for k in keys]


_GD = _grpo_refs(*_grpo(None))
_ALL = _grpo_refs(*_grpo("All correct (no signal)"))
_ONE = _grpo_refs(*_grpo("One correct of 16"))
_NEAR = _grpo_refs(*_grpo("Nearly equal scores (tiny std)"))
_ONE_R = _grpo("One correct of 16")[0]

GRPO_TABLES = {
    "defaults": _pick(_GD, "mean", "mean help", "std", "std help", "correct", "push", "push help", "factor",
                      "factor help", "scale", "scale help", "main title", "main x", "legend up", "legend down",
                      "difficulty title", "difficulty this", "difficulty signal", "difficulty modes"),
    "tab PPO vs GRPO": [
        Ref("1 answer / prompt", "PPO's one sampled answer per prompt (its critic gives the baseline)"),
        Ref("G = 8 answers / prompt", COUNT),
    ],
    "tab Within group vs batch": [
        Ref("How much each answer weighs in the loss, for four answers of 100 to 1,600 tokens and a generation budget "
            "L_max of 2,048 tokens", GIVEN),
        Ref("GRPO gives every answer 1/G", FORMULA),
        Ref("all 0: no signal", ref.grpo_advantage((1, 1, 1, 1, 1, 1, 1, 1), 0)),  # an all-correct group's advantages
    ],
    "preset All correct (no signal)": [
        Ref("All answers got the same reward, so every rᵢ − mean is 0 and every advantage is exactly 0",
            ref.grpo_advantage((1, 1, 1, 1), 0, "none"), ref.grpo_advantage((1, 1, 1, 1), 0)),
        *_pick(_ALL, "mean", "std", "std help", "correct", "push", "scale", "scale help", "main title",
               "difficulty title", "difficulty this", "difficulty signal"),
        Ref("All rewards are equal: every advantage is 0.", ref.grpo_advantage((1, 1, 1, 1), 0)),
    ],
    "preset One correct of 16": [
        Ref("**1 of 16 correct** ·", GIVEN),
        *_pick(_ONE, "summary", "mean", "std", "std help", "correct", "push", "scale", "main title",
               "difficulty title", "difficulty this", "difficulty signal"),
    ],
    "preset Nearly equal scores (tiny std)": _pick(_NEAR, "summary", "mean", "std", "std help", "correct",
                                                   "correct help", "push", "scale"),
}


# ======================================================================================================= 9. PPO
SIGN = "the sign the case names (A > 0 or A < 0)"


def _clip_grad(rho: float, adv: float, lo: float, hi: float) -> float:
    """d/dρ of min(ρA, clip(ρ, 1 - ε_low, 1 + ε_high)A) by torch autograd (Schulman et al. 2017, eq. 7)."""
    r = torch.tensor(rho, dtype=torch.float64, requires_grad=True)
    torch.minimum(r * adv, torch.clamp(r, 1 - lo, 1 + hi) * adv).backward()
    return float(r.grad)


def _clip_obj(rho: float, adv: float, lo: float, hi: float) -> float:
    return min(rho * adv, min(max(rho, 1 - lo), 1 + hi) * adv)


def _ppo(name: str | None) -> dict:
    return _preset(PP, name) if name else PP.defaults()


def _eps(p: dict) -> tuple[float, float]:
    return float(p["clip_eps"]), float(p["clip_high"] if p["clip_higher"] else p["clip_eps"])


def _clip_refs(p: dict) -> dict[str, Ref]:
    rho, (lo, hi) = float(p["rho"]), _eps(p)
    g_pos, g_neg = _clip_grad(rho, 1.0, lo, hi), _clip_grad(rho, -1.0, lo, hi)
    o_pos, o_neg = _clip_obj(rho, 1.0, lo, hi), _clip_obj(rho, -1.0, lo, hi)
    return {
        "rho": Ref("Ratio ρ: 1.00", GIVEN),
        "rho help": Ref("Ratio ρ help: π_θ(a|s) / π_old(a|s) of one token"),
        "range": Ref("Clip range: [0.80, 1.20]", 1 - lo, 1 + hi),
        "range help": Ref("Clip range help: 1 − ε_low to 1 + ε_high", FORMULA),
        "g+": Ref("A > 0: gradient d/dρ: +1 ·", SIGN, g_pos),
        "g+ help": Ref("A > 0: gradient d/dρ help: for A = +1", GIVEN),
        "g-": Ref("A < 0: gradient d/dρ: −1 ·", SIGN, g_neg),
        "g- help": Ref("A < 0: gradient d/dρ help: for A = −1", GIVEN),
        "o+": Ref("A > 0: objective: 1.000", SIGN, o_pos),
        "o+ help": Ref("A > 0: objective help: min(ρA, clip(ρ)A) at A = +1", GIVEN),
        "o-": Ref("A < 0: objective: −1.000", SIGN, o_neg),
        "o- help": Ref("A < 0: objective help: min(ρA, clip(ρ)A) at A = −1", GIVEN),
        "annotation": Ref("ρ = 1.00 A = 1.00 > 0: objective 1.000, d/dρ = 1.00 (", GIVEN, GIVEN, SIGN, o_pos, g_pos),
        "annotation-": Ref("A = −1.00 < 0: objective −1.000, d/dρ = −1.00 (", GIVEN, SIGN, o_neg, g_neg),
        "clip note+": Ref("A = 1.00 > 0: no gradient once ρ > 1 + ε" + ("_high" if lo != hi else ""), GIVEN, SIGN,
                          FORMULA),
        "clip note-": Ref("A = −1.00 < 0: no gradient once ρ < 1 − ε" + ("_low" if lo != hi else ""), GIVEN, SIGN,
                          FORMULA),
    }


def _batch(p: dict) -> tuple[float, float, float, float]:
    """The token batch re-drawn from its seed (log ρ ~ N(0, σ²), then A ~ N(0, 1), numpy's generator seeded 0, as
    the page's text states) and counted here: % outside the range, % clipped, % of Σ|A| kept, % of Σ ρ|A| kept."""
    lo, hi = _eps(p)
    rng = np.random.default_rng(0)
    rho = np.exp(float(p["noise"]) * rng.standard_normal(int(p["tok_n"])))
    A = rng.standard_normal(int(p["tok_n"]))
    outside = (rho < 1 - lo) | (rho > 1 + hi)
    clipped = ((A > 0) & (rho > 1 + hi)) | ((A < 0) & (rho < 1 - lo))  # outside on the side A favours
    kept = ~clipped
    return (100 * outside.mean(), 100 * clipped.mean(), 100 * np.abs(A[kept]).sum() / np.abs(A).sum(),
            100 * (rho * np.abs(A))[kept].sum() / (rho * np.abs(A)).sum())


def _batch_refs(p: dict) -> dict[str, Ref]:
    out_, clipped, share, theta = _batch(p)
    lo, hi = _eps(p)
    zero = _clip_grad(1.3, 1.0, 0.2, 0.2)  # a clipped token's gradient
    return {
        "outside": Ref("Outside the range: 15.2%", out_),
        "outside help": Ref("Outside the range help: ratio outside [1 − ε_low, 1 + ε_high]", FORMULA),
        "clipped": Ref("Clipped (gradient 0): 8.5%", zero, clipped),
        "clipped help": Ref("Clipped (gradient 0) help: outside on the side A favours", zero),
        "legend clipped": Ref("clipped: gradient 0", zero),
        "share": Ref("Share of |d/dρ| kept: 92.0%", share),
        "share help": Ref("Share of |d/dρ| kept help: Σ|d/dρ| / Σ|A| over the tokens. In θ a kept token's gradient is "
                          "ρ·A·∇log π: weighted by ρ, Σ ρ|A| over the kept tokens / Σ ρ|A| over all is 90.9%", theta),
        "title": Ref("400 tokens, ε = 0.2 outside the range: 15.2% clipped (gradient 0): 8.5% share of |d/dρ| kept: "
                     "92.0% of Σ|A|", GIVEN, GIVEN, out_, zero, clipped, share)
        if lo == hi  # clip-higher names both bounds
        else Ref("400 tokens, ε_low = 0.2, ε_high = 0.28 outside the range: 8.5% clipped (gradient 0): 5.2% share of "
                 "|d/dρ| kept: 96.0% of Σ|A|", GIVEN, GIVEN, GIVEN, out_, zero, clipped, share),
    }


# --------------------------------------------------------------------------------------------------------- GAE
def _gae(rewards: tuple[float, ...], values: tuple[float, ...], gamma: float, lam: float) -> list[float]:
    """A_t = Σ_l (γλ)^l δ_{t+l}, δ_t = r_t + γ V(s_{t+1}) - V(s_t), as the explicit sum (Schulman et al. 2016,
    eq. 16), not the backward recursion."""
    T = len(rewards)
    delta = [rewards[t] + gamma * values[t + 1] - values[t] for t in range(T)]
    return [sum((gamma * lam) ** k * delta[t + k] for k in range(T - t)) for t in range(T)]


CHAIN_T, CHAIN_SIGMA = 8, 0.3  # the study's chain as its text states it: eight steps, reward noise σ = 0.3


def _chain(gamma: float, b: float, lam: float) -> tuple[float, float]:
    """The GAE study in closed form: (bias², variance) of A_t against Q(s_t, a_t) - V'(s_t), averaged over the steps,
    for a critic V' = V + b at every state but the terminal one. With r_t = μ_t + ε_t and V(s_t) = μ_t + γV(s_{t+1}):
    δ_t = ε_t + γ b_{t+1} - b_t and the target is ε_t - b_t, so the error is
    Σ_{l≥1} (γλ)^l ε_{t+l} + Σ_{l≥0} (γλ)^l (γ b_{t+l+1} - b_{t+l}) + b_t (μ drops out)."""
    bb = [b] * CHAIN_T + [0.0]
    bias = [(b + sum((gamma * lam) ** k * (gamma * bb[t + k + 1] - bb[t + k]) for k in range(CHAIN_T - t))) ** 2
            for t in range(CHAIN_T)]
    var = [CHAIN_SIGMA**2 * sum((gamma * lam) ** (2 * k) for k in range(1, CHAIN_T - t)) for t in range(CHAIN_T)]
    return sum(bias) / CHAIN_T, sum(var) / CHAIN_T


def _best_lam(gamma: float, b: float, step: float) -> float:
    grid = [k * step for k in range(round(1 / step) + 1)]
    return min(grid, key=lambda x: sum(_chain(gamma, b, x)))


def _gae_refs(p: dict, residue: bool = False) -> list[Ref]:
    r, v, gamma, lam, b = _floats(p["gae_r"]), _floats(p["gae_v"]), float(p["gamma"]), float(p["lam"]), float(
        p["critic_err"])
    T = len(r)
    ret = [sum(gamma**k * r[t + k] for k in range(T - t)) + gamma ** (T - t) * v[T] for t in range(T)]
    a1 = _gae(r, v, gamma, 1.0)
    delta = [r[t] + gamma * v[t + 1] - v[t] for t in range(T)]
    drawn = "the λ the figure draws: 0, 0.5, 0.9, 1 and the slider's"
    return [
        # "A_0" holds a digit that is not a number, so the passage is matched word for word: the reference printed
        # as the page prints it (a different value is "not on the page")
        Ref(f"A_0 at this λ: {_gae(r, v, gamma, lam)[0]:.3f}", _gae(r, v, gamma, lam)[0]),
        Ref("A_0 at this λ help: the first step"),
        Ref("Best λ (toy chain): 0.7", _best_lam(gamma, b, 0.1)),
        Ref("Best λ (toy chain) help: smallest bias² + variance, closed form, over λ = 0, 0.1, …, 1 at γ = 1, b = 0.5 "
            "and the rewards' noise σ = 0.3", "the grid of λ, stated", "the grid of λ, stated",
            "the grid of λ, stated", GIVEN, GIVEN, CHAIN_SIGMA),
        Ref("bias² at λ = 0 / 1: 0.219 / 0.000", GIVEN, GIVEN, _chain(gamma, b, 0.0)[0], _chain(gamma, b, 1.0)[0]),
        Ref("bias² at λ = 0 / 1 help: mean over steps of the squared mean error against Q(s_t, a_t) − V(s_t), V the "
            "critic's own values", GIVEN),
        Ref("variance at λ = 0 / 1: 0.000 / 0.315", GIVEN, GIVEN, _chain(gamma, b, 0.0)[1], _chain(gamma, b, 1.0)[1]),
        Ref("bias² + variance at λ = 0.95: 0.244", GIVEN, sum(_chain(gamma, b, lam))),
        Ref("bias² + variance at λ = 0.95 help: closed form, at the slider's λ", GIVEN),
        Ref("variance at λ = 0 / 1 help: mean over steps of the error's variance: the chain's rewards carry noise of "
            "standard deviation σ = 0.3 at every step, and the variance grows with σ²", GIVEN, GIVEN, CHAIN_SIGMA),
        Ref("λ = 0: max |A − δ|: 0.0e+00", GIVEN, max(abs(x - y) for x, y in zip(_gae(r, v, gamma, 0.0), delta,
                                                                                  strict=True))),
        Ref("λ = 0: max |A − δ| help: GAE at λ = 0 against the one-step TD error δ_t = r_t + γV(s_{t+1}) − V(s_t), "
            "written out: 0 up to float rounding", FORMULA),
        Ref("λ = 1: max |A − (G − V)| help: GAE at λ = 1 against the Monte Carlo return minus the value, G_t − V(s_t), "
            "with G_t summed directly (bootstrap γ^(T−t) V(s_T)): 0 up to float rounding", FORMULA),
        Ref("λ (0: one-step TD … 1: Monte Carlo)", FORMULA),
        Ref("best of the λ drawn: 0.7 (γ = 1)", _best_lam(gamma, b, 0.1), GIVEN),
        Ref("λ = 0 (one-step TD)", drawn),
        Ref("λ = 0.5", drawn),
        Ref("λ = 0.9", drawn),
        Ref("λ = 1 (Monte Carlo)", drawn),
        # the check's residual, exactly 0 (the explicit sums agree): printed as 0.0e+00 or a float64 rounding residue
        Ref("λ = 1: max |A − (G − V)|: 0.0e+00", GIVEN,
            "a float64 rounding residue of a difference that is exactly 0" if residue else
            max(abs(x - (g - y)) for x, g, y in zip(a1, ret, v, strict=False))),
    ]


GAE_TEXT = [
    Ref(r"the TD error $\delta_t = r_t + \gamma V(s_{t+1}) - V(s_t)$", FORMULA),
    Ref(r"GAE averages the k-step estimates with weights $(1-\lambda)\lambda^{k-1}$", FORMULA, FORMULA),
    Ref(r"computed backwards as $A_t = \delta_t + \gamma\lambda A_{t+1}$ (Schulman et al., 2016, eqs. 11-16)", FORMULA,
        "the paper's equations", "the paper's equations"),
    Ref(r"λ = 0 is $\delta_t$ itself", GIVEN),
    Ref("λ = 1 telescopes to the discounted return", GIVEN),
    Ref("(GAE with λ = 1 is γ-just, Schulman et al., 2016, §3)", GIVEN, "the paper's section"),
    Ref("The lower figure samples 4,000 trajectories", "the study's sample size (its readouts are the closed form)"),
    Ref("whose rewards carry noise of standard deviation σ = 0.3 at every step", CHAIN_SIGMA),
    Ref("(whose value, 0, it gets right)", "a terminal state's value, 0 by definition"),
    Ref(r"the critic's error at $s_{t+1}$ varies with $a_t$", FORMULA),
    Ref("Against that target the squared bias falls to 0 at λ = 1, the variance rises from 0",
        _chain(1.0, 0.5, 1.0)[0], GIVEN, _chain(1.0, 0.5, 0.0)[1]),
    Ref("(at γ = 1 and b = 0.5: λ = 0.7 on the figure's grid of 0.1, 0.75 on a grid of 0.01",
        GIVEN, GIVEN, _best_lam(1.0, 0.5, 0.1), "the grid, stated", _best_lam(1.0, 0.5, 0.01), "the grid, stated"),
    Ref("λ = 1 would show the error b at every step", GIVEN),
    Ref("a λ close to 1 lets it reach", GIVEN),
    Ref("(λ = 0 gives δ, λ = 1 gives return minus value)", GIVEN),
]

# -------------------------------------------------------------------------------------------------- KL estimators


def _kl(drift: float, n: int = 2000) -> dict[str, float]:
    """The KL tab's numbers: π_θ ∝ π_ref^(1-t) π_target^t (the page's stated interpolation), the exact moments of k1,
    k2, k3 (Schulman 2020) under π_θ by a sum over the 4 tokens, and the seeded sample (numpy's generator seeded 0,
    n tokens of π_θ) counted here."""
    q, tgt = np.array(KL_REF), np.array(KL_TARGET)
    w = q ** (1 - drift) * tgt**drift
    p = w / w.sum()
    log_r = np.log(q) - np.log(p)
    ks = {"k1": -log_r, "k2": log_r**2 / 2, "k3": np.exp(log_r) - 1 - log_r}
    out = {"kl": float(np.sum(p * np.log(p / q)))}
    for name, k in ks.items():
        out[name] = float(p @ k)
        out[name + " std"] = math.sqrt(float(p @ (k - p @ k) ** 2))
    idx = np.random.default_rng(0).choice(len(p), size=n, p=p)
    out["k1 neg"] = 100 * float(np.mean(ks["k1"][idx] < 0))
    out["k3 neg"] = 100 * float(np.mean(ks["k3"][idx] < 0))
    out["mean r"] = float(p @ np.exp(log_r))
    return out


def _k1_gradient() -> float:
    """|E_{x~π_θ}[∇_θ k1(x)]| at one position, by autograd and an exact sum over the vocabulary (π_ref fixed): 0."""
    logits = torch.log(torch.tensor(KL_TARGET, dtype=torch.float64)).requires_grad_(True)
    logp = torch.log_softmax(logits, 0)
    k1 = logp - torch.log(torch.tensor(KL_REF, dtype=torch.float64))
    (logp.exp().detach() * k1).sum().backward()
    return float(logits.grad.abs().max())


_K1, _K2 = _kl(1.0), _kl(2.0)
KL_TEXT = [
    Ref(r"$k_2 = \tfrac12(\log r)^2$", FORMULA),
    Ref(r"$k_3 = (r - 1) - \log r$", FORMULA),
    Ref(r"Under samples of $\pi_\theta$ the mean of $r$ is 1, so adding $r - 1$ to $k_1$", _K1["mean r"], FORMULA),
    Ref("a standard deviation of 1.97 per sample for k3 against 0.99 for k1; at the default drift, 0.34 for k3 against "
        "0.71 for k1", _K2["k3 std"], _K2["k1 std"], _K1["k3 std"], _K1["k1 std"]),
    Ref("the gradient of k1 is 0", _k1_gradient()),
]


def _kl_refs(k: dict[str, float], n: int = 2000) -> list[Ref]:
    return [
        Ref("Exact KL(π_θ ‖ π_ref): 0.285 nats", k["kl"]),
        Ref("Exact KL(π_θ ‖ π_ref) help: a sum over the 4-token vocabulary", COUNT),
        # "k1" holds a digit that is not a number, so these passages are matched word for word: the references
        # printed as the page prints them (a different value is "not on the page")
        *(Ref(f"{e}: mean ± std: {k[e]:.3f} ± {k[e + ' std']:.2f}", k[e], k[e + " std"]) for e in ("k1", "k2", "k3")),
        *(Ref(f"{e}: mean ± std help: both exact (sums over the vocabulary): the mean and the standard deviation of "
              "one sampled token's estimate") for e in ("k1", "k2", "k3")),  # not a sample's mean: say so
        Ref(f"k1 < 0 in the sample: {k['k1 neg']:.0f}%", FORMULA, k["k1 neg"]),
        Ref("k1 < 0 in the sample help: of 2,000 tokens", FORMULA, float(n)),
        Ref("k3 < 0 in the sample: 0%", FORMULA, k["k3 neg"]),
        Ref("k3 < 0 in the sample help: never: (r − 1) − log r ≥ 0", FORMULA),
        Ref("exact KL = 0.2849 nats", k["kl"]),
        Ref("k2 = (log r)²/2", FORMULA),
        Ref("k3 = (r − 1) − log r", FORMULA),
        Ref("mean of 2000 samples", float(n)),
    ]


# ------------------------------------------------------------------------------------------------------- Memory
BYTES_TRAINED = 2 + 2 + 4 + 4 + 4  # bf16 weights and gradients, fp32 master weights and Adam's m and v
BYTES_FROZEN = 2  # bf16 weights


def _memory(policy_b: float, rm_b: float, unit: float) -> dict[str, float]:
    """Totals in the printed unit: PPO's policy and critic train, reference and reward model are frozen; GRPO has no
    critic; DPO only policy and reference. The critic is the reward model's size (the control sets both)."""
    frozen_pair = BYTES_FROZEN * (policy_b + rm_b)
    return {"PPO": (BYTES_TRAINED * (policy_b + rm_b) + frozen_pair) * 1e9 / unit,
            "GRPO": (BYTES_TRAINED * policy_b + frozen_pair) * 1e9 / unit,
            "DPO": (BYTES_TRAINED + BYTES_FROZEN) * policy_b * 1e9 / unit}


MEMORY_TEXT = [
    Ref("(16 bytes per parameter with mixed-precision Adam)", BYTES_TRAINED),
    Ref("(2 bytes per parameter in bf16)", BYTES_FROZEN),
    Ref("InstructGPT paired a 175B policy with a 6B reward model", CITE),
    Ref("one when the KL term is dropped as well, β = 0, as in DAPO", "the KL coefficient that drops the term (Yu et "
        "al. 2025 use none)"),
]


def _memory_refs(m: dict[str, float], unit: str) -> list[Ref]:
    out = []
    for k, v in m.items():
        out += [Ref(f"{k} total: 252 {unit}", v),
                Ref(f"{k} total help: 16 bytes per trained parameter, 2 per frozen one; no activations",
                    BYTES_TRAINED, BYTES_FROZEN)]
    # each bar's label ("252 GB") is its method's total: the passages cannot tell the three labels apart, and the
    # readouts above check the same three totals
    return [*out, Ref(f"252 {unit}", "a bar's label, its method's total (checked in the readouts above)"),
            Ref("GB (10⁹ bytes), without activations", "the unit's definition")]


_D = _ppo(None)
_CLIP = _clip_refs(_D)
_BATCH = _batch_refs(_D)
_INSTRUCT = "Memory: InstructGPT, 175B policy, 6B reward model"


def _clip_preset(name: str, *keys: str) -> list[Ref]:
    return _pick(_clip_refs(_ppo(name)), *keys)


PPO_TABLES = {
    "defaults": [*_CLIP.values(), *_BATCH.values()],
    "tab GAE": [*GAE_TEXT, *_gae_refs(_D)],
    "tab KL estimators": [*KL_TEXT, *_kl_refs(_K1)],
    "tab Memory": [*MEMORY_TEXT, *_memory_refs(_memory(7, 7, 1e9), "GB")],
    "preset Ratio 1.3: above 1 + ε": _clip_preset("Ratio 1.3: above 1 + ε", "rho", "g+", "o+", "o-", "annotation",
                                                  "annotation-"),
    "preset Ratio 0.7: below 1 − ε": _clip_preset("Ratio 0.7: below 1 − ε", "rho", "g-", "o+", "o-", "annotation",
                                                  "annotation-"),
    "preset Ratio 1.05: inside the range": _clip_preset("Ratio 1.05: inside the range", "rho", "o+", "o-",
                                                        "annotation", "annotation-"),
    "preset DAPO clip-higher: ratio 1.25": [
        *_clip_preset("DAPO clip-higher: ratio 1.25", "rho", "range", "o+", "o-", "annotation", "annotation-",
                      "clip note+", "clip note-"),
        *_pick(_batch_refs(_ppo("DAPO clip-higher: ratio 1.25")), "outside", "clipped", "share", "share help",
               "title"),
    ],
    "preset Token batch: a policy that moved far": _pick(_batch_refs(_ppo("Token batch: a policy that moved far")),
                                                         "outside", "clipped", "share", "share help", "title"),
    "preset GAE: rewards along the way": [*GAE_TEXT, *_gae_refs(_ppo("GAE: rewards along the way"), residue=True)],
    "preset KL: a policy twice as far": [*KL_TEXT, *_kl_refs(_K2)],
    f"preset {_INSTRUCT}": [*MEMORY_TEXT, *_memory_refs(_memory(175, 6, 1e12), "TB")],
}
# fmt: on

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/4_GRPO.py": GRPO_TABLES, "pages/9_PPO.py": PPO_TABLES}
