"""PPO's pieces: the clipped surrogate and its gradient, GAE, Schulman's KL estimators, and the four models' memory.

Section 3.6 of the lesson (PPO in practice), seed 003 (the PPO and GAE equations, Q3) and seed 002 (A6.6, A6.7).

    rho_t    = pi_theta(a_t | s_t) / pi_theta_old(a_t | s_t)                       the probability ratio
    L^CLIP   = E_t[ min(rho_t A_t, clip(rho_t, 1 - eps_low, 1 + eps_high) A_t) ]    (eps_low = eps_high = eps: PPO;
                                                                                     eps_high > eps_low: DAPO)
    delta_t  = r_t + gamma V(s_{t+1}) - V(s_t)                                      the TD error
    A_t      = sum_l (gamma lambda)^l delta_{t+l}                                   GAE (Schulman et al. 2016)
    k1 = -log r,  k2 = (log r)^2 / 2,  k3 = (r - 1) - log r,  r = pi_ref / pi_theta    (Schulman 2020; x ~ pi_theta)

The deterministic math is numpy (vectorised over any leading axes). :func:`kl_estimators` also takes torch tensors
(the loss of a real trainer) and returns tensors on their device. The Monte Carlo studies draw with numpy's
seeded generator: they are small (a few thousand draws) and need no device.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array
from core.device import loaded_torch
from core.training_memory import RECIPES

EPS_DEFAULT = 0.2  # PPO's clip range (Schulman et al. 2017; seed 003: "eps near 0.2")
DAPO_EPS_LOW, DAPO_EPS_HIGH = 0.2, 0.28  # DAPO's clip-higher (Yu et al. 2025)


def _check_eps(eps_low: float, eps_high: float | None) -> tuple[float, float]:
    """(eps_low, eps_high) as floats; eps_high defaults to eps_low. Both must be > 0, and eps_low < 1."""
    lo = float(eps_low)
    hi = lo if eps_high is None else float(eps_high)
    for name, e in (("eps_low", lo), ("eps_high", hi)):
        if not math.isfinite(e) or e <= 0:
            raise ValueError(f"{name} must be a positive number (the clip range 1 ± eps), got {e!r}")
    if lo >= 1:
        raise ValueError(f"eps_low must be below 1 (the ratio's lower clip 1 - eps_low must stay positive), got {lo}")
    return lo, hi


def _check_unit(x: float, name: str) -> float:
    v = float(x)
    if not (0.0 <= v <= 1.0):  # also False for NaN
        raise ValueError(f"{name} must lie in [0, 1], got {x!r}")
    return v


# --------------------------------------------------------------------------------------------------------------
# the clipped surrogate


def ppo_clip_objective(
    ratio: ArrayLike, advantage: ArrayLike, eps_low: float = EPS_DEFAULT, eps_high: float | None = None
) -> NDArray[np.float64]:
    """The per-token clipped surrogate min(rho A, clip(rho, 1 - eps_low, 1 + eps_high) A) (to be maximised).

    ratio: rho = pi_theta / pi_theta_old (> 0); advantage: A. Both broadcast. eps_high defaults to eps_low
    (symmetric PPO); eps_high > eps_low is DAPO's clip-higher. Raises ValueError for eps <= 0, eps_low >= 1,
    ratios <= 0 and non-finite input.
    """
    lo, hi = _check_eps(eps_low, eps_high)
    rho = as_float_array(ratio, "ratio")
    if np.any(rho <= 0):
        raise ValueError("ratio is pi_theta / pi_theta_old, a ratio of probabilities: it must be > 0")
    A = as_float_array(advantage, "advantage")
    # min(rho A, clip(rho, 1 - eps_low, 1 + eps_high) A)
    return np.minimum(rho * A, np.clip(rho, 1.0 - lo, 1.0 + hi) * A)


def clip_active(
    ratio: ArrayLike, advantage: ArrayLike, eps_low: float = EPS_DEFAULT, eps_high: float | None = None
) -> NDArray[np.bool_]:
    """True where the clip has taken over: the ratio is past 1 ± eps in the direction the advantage favours.

    A > 0 and rho > 1 + eps_high, or A < 0 and rho < 1 - eps_low. There the objective is flat in rho and the
    token's gradient is exactly 0. (A ratio past the range in the other direction keeps its full gradient: the
    min picks the unclipped, more pessimistic term.) At A = 0 nothing is clipped (the gradient is 0 anyway).
    """
    lo, hi = _check_eps(eps_low, eps_high)
    rho = as_float_array(ratio, "ratio")
    A = as_float_array(advantage, "advantage")
    return ((A > 0) & (rho > 1.0 + hi)) | ((A < 0) & (rho < 1.0 - lo))


def ppo_clip_gradient(
    ratio: ArrayLike, advantage: ArrayLike, eps_low: float = EPS_DEFAULT, eps_high: float | None = None
) -> NDArray[np.float64]:
    """d/d rho of :func:`ppo_clip_objective`: A where the unclipped term rho A is the one the min picks, else 0.

        d/d rho min(rho A, clip(rho) A) = A · [not clipped]

    At the kinks (rho exactly 1 - eps_low or 1 + eps_high) the objective has no derivative; this returns the
    one-sided value from inside the range (A). Broadcasts like the objective.

    This is the derivative in rho. In the policy's parameters theta, rho = pi_theta / pi_old gives
    grad_theta (rho A) = A grad_theta rho = rho A grad_theta log pi_theta where the unclipped term is selected, and
    0 where the clip is active (Schulman et al. 2017, eq. 7).
    """
    rho = as_float_array(ratio, "ratio")
    if np.any(rho <= 0):
        raise ValueError("ratio is pi_theta / pi_theta_old, a ratio of probabilities: it must be > 0")
    A = as_float_array(advantage, "advantage")
    clipped = clip_active(rho, A, eps_low, eps_high)
    return np.where(clipped, 0.0, A) * np.ones_like(rho)


@dataclass(frozen=True)
class ClipCurve:
    """The objective and its gradient over a grid of ratios, for one advantage of each sign."""

    ratio: NDArray[np.float64]  # (n,)
    advantage: NDArray[np.float64]  # (S,) the advantages shown, e.g. (+1, -1)
    objective: NDArray[np.float64]  # (S, n)
    unclipped: NDArray[np.float64]  # (S, n) rho A, the plain importance-weighted surrogate
    gradient: NDArray[np.float64]  # (S, n) d objective / d rho
    eps_low: float
    eps_high: float


def ppo_clip_curve(
    eps_low: float = EPS_DEFAULT,
    eps_high: float | None = None,
    advantages: ArrayLike = (1.0, -1.0),
    lo: float = 0.5,
    hi: float = 1.5,
    n: int = 101,
) -> ClipCurve:
    """:func:`ppo_clip_objective` and :func:`ppo_clip_gradient` on n ratios from lo to hi, for each advantage."""
    e_lo, e_hi = _check_eps(eps_low, eps_high)
    if n < 2 or not (0 < lo < hi):
        raise ValueError(f"need n >= 2 and 0 < lo < hi, got n = {n}, lo = {lo}, hi = {hi}")
    rho = np.round(np.linspace(lo, hi, n), 12)  # (n,) rounded so that 1.2 is exactly 1.2 on the slider
    A = as_float_array(advantages, "advantages").reshape(-1)  # (S,)
    obj = ppo_clip_objective(rho[None, :], A[:, None], e_lo, e_hi)  # (S, n)
    grad = ppo_clip_gradient(rho[None, :], A[:, None], e_lo, e_hi)  # (S, n)
    return ClipCurve(rho, A, obj, rho[None, :] * A[:, None], grad, e_lo, e_hi)


@dataclass(frozen=True)
class ClipPreset:
    """A starting point of the PPO page: one ratio and advantage, and the clip range."""

    key: str
    label: str
    ratio: float
    advantage: float
    eps_low: float
    eps_high: float
    answer: str  # what the clip does here, in a few words


CLIP_PRESETS: dict[str, ClipPreset] = {
    p.key: p
    for p in (
        ClipPreset("inside", "Inside the range", 1.05, 1.0, 0.2, 0.2, "full gradient A"),
        # the seeds' question (001 section 9 follow-ups, 002 A6.6.2): past 1 + eps with A > 0 the gradient is 0
        ClipPreset("above_pos", "Ratio 1.3, A > 0", 1.3, 1.0, 0.2, 0.2, "clipped: gradient exactly 0"),
        # ... and with A < 0 the min keeps the unclipped term: the full corrective gradient
        ClipPreset("above_neg", "Ratio 1.3, A < 0", 1.3, -1.0, 0.2, 0.2, "not clipped: full gradient A"),
        ClipPreset("below_neg", "Ratio 0.7, A < 0", 0.7, -1.0, 0.2, 0.2, "clipped: gradient exactly 0"),
        ClipPreset("below_pos", "Ratio 0.7, A > 0", 0.7, 1.0, 0.2, 0.2, "not clipped: full gradient A"),
        # DAPO's clip-higher: 1.25 is past 1.2 but inside 1.28, so a rare good token can still be pushed up
        ClipPreset("dapo", "Clip-higher (DAPO), ratio 1.25, A > 0", 1.25, 1.0, 0.2, 0.28, "full gradient A"),
    )
}


# --------------------------------------------------------------------------------------------------------------
# a token batch


@dataclass(frozen=True)
class ClipBatch:
    """A batch of tokens' ratios and advantages, and what the clip leaves of their gradient."""

    ratio: NDArray[np.float64]  # (n,)
    advantage: NDArray[np.float64]  # (n,)
    clipped: NDArray[np.bool_]  # (n,) gradient zeroed by the clip
    outside: NDArray[np.bool_]  # (n,) ratio outside [1 - eps_low, 1 + eps_high], clipped or not
    gradient: NDArray[np.float64]  # (n,) d objective / d rho per token
    fraction_clipped: float  # clipped.mean()
    fraction_outside: float  # outside.mean() >= fraction_clipped
    surviving_share: float  # sum |gradient| / sum |A|: the share of the tokens' |d objective / d rho| that survives
    objective: float  # mean clipped surrogate
    unclipped_objective: float  # mean rho A
    eps_low: float
    eps_high: float


def clip_batch_stats(
    ratio: ArrayLike, advantage: ArrayLike, eps_low: float = EPS_DEFAULT, eps_high: float | None = None
) -> ClipBatch:
    """What the clip does to a batch of tokens (flat arrays of equal length, n >= 1)."""
    lo, hi = _check_eps(eps_low, eps_high)
    rho = as_float_array(ratio, "ratio").reshape(-1)
    A = as_float_array(advantage, "advantage").reshape(-1)
    if rho.size == 0 or rho.shape != A.shape:
        raise ValueError(f"need one advantage per ratio and at least one token, got {rho.size} and {A.size}")
    obj = ppo_clip_objective(rho, A, lo, hi)  # (n,)
    grad = ppo_clip_gradient(rho, A, lo, hi)  # (n,)
    clipped = clip_active(rho, A, lo, hi)  # (n,)
    outside = (rho < 1.0 - lo) | (rho > 1.0 + hi)  # (n,)
    total = float(np.abs(A).sum())
    return ClipBatch(
        ratio=rho,
        advantage=A,
        clipped=clipped,
        outside=outside,
        gradient=grad,
        fraction_clipped=float(clipped.mean()),
        fraction_outside=float(outside.mean()),
        surviving_share=float(np.abs(grad).sum() / total) if total > 0 else 1.0,
        objective=float(obj.mean()),
        unclipped_objective=float((rho * A).mean()),
        eps_low=lo,
        eps_high=hi,
    )


def token_batch(
    n: int = 400,
    log_ratio_std: float = 0.15,
    eps_low: float = EPS_DEFAULT,
    eps_high: float | None = None,
    seed: int = 0,
) -> ClipBatch:
    """n seeded tokens: log rho ~ N(0, log_ratio_std^2) (the policy after a few updates), A ~ N(0, 1).

    A larger log_ratio_std is a policy that moved further from the one that sampled the batch (more epochs, a
    larger learning rate): more tokens leave the clip range and more gradients are zeroed.
    """
    if not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive whole number of tokens, got {n!r}")
    if not (math.isfinite(log_ratio_std) and log_ratio_std >= 0):
        raise ValueError(f"log_ratio_std must be >= 0, got {log_ratio_std!r}")
    rng = np.random.default_rng(seed)
    rho = np.exp(log_ratio_std * rng.standard_normal(n))  # (n,)
    A = rng.standard_normal(n)  # (n,)
    return clip_batch_stats(rho, A, eps_low, eps_high)


# --------------------------------------------------------------------------------------------------------------
# GAE


def _check_trajectories(
    rewards: ArrayLike, values: ArrayLike
) -> tuple[NDArray[np.float64], NDArray[np.float64], tuple[int, ...]]:
    r = as_float_array(rewards, "rewards")
    v = as_float_array(values, "values")
    if r.ndim == 0 or v.ndim == 0:
        raise ValueError("rewards and values must be sequences over time (last axis), not single numbers")
    T = r.shape[-1]
    if T == 0:
        raise ValueError("empty trajectory: rewards need at least one step")
    if v.shape[-1] != T + 1:
        raise ValueError(
            f"values need one more entry than rewards (V(s_0..s_T), the last one the bootstrap value, 0 if the "
            f"episode ended); got {v.shape[-1]} values for {T} rewards"
        )
    try:
        lead = np.broadcast_shapes(r.shape[:-1], v.shape[:-1])
    except ValueError:
        raise ValueError(f"rewards {r.shape} and values {v.shape} do not broadcast over trajectories") from None
    return r, v, lead


def td_errors(rewards: ArrayLike, values: ArrayLike, gamma: float) -> NDArray[np.float64]:
    """delta_t = r_t + gamma V(s_{t+1}) - V(s_t) over the last axis: rewards (..., T), values (..., T+1)."""
    g = _check_unit(gamma, "gamma")
    r, v, _ = _check_trajectories(rewards, values)
    # delta_t = r_t + gamma V_{t+1} - V_t
    return r + g * v[..., 1:] - v[..., :-1]  # (..., T)


def gae(rewards: ArrayLike, values: ArrayLike, gamma: float, lam: float) -> NDArray[np.float64]:
    """Generalised advantage estimates A_t = sum_l (gamma lambda)^l delta_{t+l}, for every trajectory at once.

    The same as the average of the k-step estimates A^(k)_t = sum_{l<k} gamma^l delta_{t+l} with weights
    (1 - lambda) lambda^(k-1), the weight left over in a finite episode going to the longest one (Schulman et al.
    2016, eqs. 11-16): (gamma lambda)^l weights the TD errors, (1 - lambda) lambda^(k-1) the k-step estimates.

    rewards: (..., T); values: (..., T+1), V(s_0) .. V(s_T), the last entry the bootstrap value (0 when the
    episode ended at T); leading axes broadcast (one critic for many trajectories). gamma, lam in [0, 1].
    lam = 0 gives the one-step TD error delta_t; lam = 1 gives the Monte Carlo advantage
    sum_l gamma^l r_{t+l} + gamma^(T-t) V(s_T) - V(s_t). Raises ValueError for gamma or lam outside [0, 1],
    an empty trajectory, mismatched lengths, or non-finite input.

    Computed by the backward recursion A_t = delta_t + gamma lambda A_{t+1} (A_T = 0), one step for all
    trajectories at a time.
    """
    g = _check_unit(gamma, "gamma")
    lam_ = _check_unit(lam, "lam")
    delta = td_errors(rewards, values, g)  # (..., T)
    A = np.empty_like(delta)  # (..., T)
    running = np.zeros(delta.shape[:-1])  # (...) A_{t+1}, 0 after the last step
    for t in range(delta.shape[-1] - 1, -1, -1):
        # A_t = delta_t + gamma lambda A_{t+1}
        running = delta[..., t] + g * lam_ * running
        A[..., t] = running
    return A


def discounted_returns(rewards: ArrayLike, gamma: float, bootstrap: ArrayLike = 0.0) -> NDArray[np.float64]:
    """G_t = sum_l gamma^l r_{t+l} + gamma^(T-t) V(s_T) over the last axis (the Monte Carlo return-to-go)."""
    r = as_float_array(rewards, "rewards")
    if r.ndim == 0 or r.shape[-1] == 0:
        raise ValueError("empty trajectory: rewards need at least one step")
    zeros = np.zeros_like(r)
    v = np.concatenate([zeros, np.broadcast_to(np.asarray(bootstrap, float), r.shape[:-1])[..., None]], axis=-1)
    # G_t = A_t^(lambda=1) + V_t with V = 0 except the bootstrap
    return gae(r, v, gamma, 1.0)


def gae_limit_residuals(
    rewards: ArrayLike, values: ArrayLike, gamma: float, adv_lam0: ArrayLike, adv_lam1: ArrayLike
) -> tuple[float, float]:
    """How far advantages at lambda = 0 and lambda = 1 are from what those limits must give, for one trajectory:
    (max_t |A_t - delta_t|, max_t |A_t - (G_t - V(s_t))|), both 0 up to float rounding for a correct GAE.

    G_t is summed directly, as a product with the (T, T) matrix of discounts, not by GAE's backward recursion (which
    :func:`discounted_returns` uses), so that the lambda = 1 check does not lean on the code it checks.
    """
    g = _check_unit(gamma, "gamma")
    r, v, _ = _check_trajectories(rewards, values)
    if r.ndim != 1:
        raise ValueError(f"one trajectory at a time: rewards {r.shape}")
    delta = td_errors(r, v, g)  # (T,)
    T = r.size
    t = np.arange(T)
    lag = t[None, :] - t[:, None]  # (T, T): k - t
    # G_t = sum_{k>=t} gamma^(k-t) r_k + gamma^(T-t) V(s_T), the Monte Carlo return with the bootstrap value
    discount = np.where(lag >= 0, g ** np.maximum(lag, 0), 0.0)  # (T, T)
    G = discount @ r + g ** (T - t) * v[-1]  # (T,)
    a0, a1 = as_float_array(adv_lam0, "adv_lam0"), as_float_array(adv_lam1, "adv_lam1")
    return float(np.max(np.abs(a0 - delta))), float(np.max(np.abs(a1 - (G - v[:-1]))))


@dataclass(frozen=True)
class GAEStudy:
    """GAE on many sampled trajectories of a chain with a deliberately wrong critic: bias and variance per lambda.

    The chain: step t pays r_t = mu_t + eps_t with eps_t ~ N(0, sigma^2) the effect of the sampled action, so the
    true advantage of that action against the critic's baseline is eps_t - b_t, with b_t the critic's error
    (V'(s_t) = V(s_t) + b_t, b_T = 0 at the terminal state). The estimate's error is A^lambda_t - (eps_t - b_t):
    with lambda = 0 its mean is gamma b_{t+1} (biased by the critic), with lambda = 1 its mean is 0 and its
    variance sigma^2 sum_{l>=1} gamma^(2l) (Monte Carlo).
    """

    lam: NDArray[np.float64]  # (L,)
    bias_sq: NDArray[np.float64]  # (L,) mean over t of (mean error)^2, from the samples
    variance: NDArray[np.float64]  # (L,) mean over t of the error's variance, from the samples
    mse: NDArray[np.float64]  # (L,) bias_sq + variance
    bias_sq_exact: NDArray[np.float64]  # (L,) the same, in closed form
    variance_exact: NDArray[np.float64]  # (L,)
    best_lam: float  # the lambda with the smallest exact mean squared error
    mean_reward: NDArray[np.float64]  # (T,) mu_t
    true_values: NDArray[np.float64]  # (T+1,) V(s_t), V(s_T) = 0
    critic: NDArray[np.float64]  # (T+1,) the wrong critic V'
    n: int
    gamma: float
    sigma: float


def gae_bias_variance(
    mean_reward: ArrayLike = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
    critic_error: ArrayLike | float = 0.5,
    gamma: float = 1.0,
    sigma: float = 0.3,
    lams: ArrayLike | None = None,
    n: int = 4000,
    seed: int = 0,
) -> GAEStudy:
    """Sample n trajectories of the chain and measure GAE's bias and variance for each lambda in ``lams``.

    mean_reward: mu_t, (T,) (default: an LLM-like sparse reward at the last step). critic_error: b_t, a number
    (the same error at every non-terminal state) or (T,) values; the terminal value stays 0. lams: default 11
    values 0, 0.1, .., 1.
    """
    mu = as_float_array(mean_reward, "mean_reward").reshape(-1)
    T = mu.size
    if T == 0:
        raise ValueError("empty trajectory: mean_reward needs at least one step")
    g = _check_unit(gamma, "gamma")
    if not (math.isfinite(sigma) and sigma >= 0):
        raise ValueError(f"sigma must be >= 0, got {sigma!r}")
    if not isinstance(n, int | np.integer) or n < 2:
        raise ValueError(f"n must be at least 2 trajectories, got {n!r}")
    b = np.broadcast_to(as_float_array(critic_error, "critic_error"), (T,)).astype(np.float64)
    lam = np.linspace(0.0, 1.0, 11) if lams is None else as_float_array(lams, "lams").reshape(-1)
    for x in lam:
        _check_unit(x, "lam")

    # V(s_t) = mu_t + gamma V(s_{t+1}), V(s_T) = 0
    V = np.append(discounted_returns(mu, g), 0.0)  # (T+1,)
    critic = V + np.append(b, 0.0)  # (T+1,)
    rng = np.random.default_rng(seed)
    eps = sigma * rng.standard_normal((n, T))  # (n, T)
    rewards = mu + eps  # (n, T)
    target = eps - b  # (n, T) Q(s_t, a_t) - V'(s_t)

    bias_sq, var, bias_sq_x, var_x = [], [], [], []
    # E[delta_t] = mu_t + gamma V'(s_{t+1}) - V'(s_t): delta_t without the action's noise eps_t
    delta_mean = mu + g * critic[1:] - critic[:-1]  # (T,)
    for lam_ in lam:
        err = gae(rewards, critic, g, lam_) - target  # (n, T)
        bias_sq.append(float(np.mean(err.mean(axis=0) ** 2)))
        var.append(float(np.mean(err.var(axis=0, ddof=1))))
        # exact: E[A_t] = sum_l (gamma lam)^l E[delta_{t+l}], E[target] = -b_t;
        # error variance = sigma^2 sum_{l=1}^{T-1-t} (gamma lam)^(2l)
        mean_err = gae(delta_mean, np.zeros(T + 1), 1.0, g * lam_) + b  # (T,)
        k = np.arange(T)
        var_t = sigma**2 * np.array([np.sum((g * lam_) ** (2 * np.arange(1, T - t))) for t in k])  # (T,)
        bias_sq_x.append(float(np.mean(mean_err**2)))
        var_x.append(float(np.mean(var_t)))
    bias_sq_a, var_a = np.array(bias_sq), np.array(var)
    mse_x = np.array(bias_sq_x) + np.array(var_x)
    return GAEStudy(
        lam=lam,
        bias_sq=bias_sq_a,
        variance=var_a,
        mse=bias_sq_a + var_a,
        bias_sq_exact=np.array(bias_sq_x),
        variance_exact=np.array(var_x),
        best_lam=float(lam[int(np.argmin(mse_x))]),
        mean_reward=mu,
        true_values=V,
        critic=critic,
        n=int(n),
        gamma=g,
        sigma=float(sigma),
    )


@dataclass(frozen=True)
class GAEPreset:
    """A toy trajectory of the GAE figure: rewards, the critic's values (one more: the bootstrap), gamma, lambda."""

    key: str
    label: str
    rewards: tuple[float, ...]
    values: tuple[float, ...]
    gamma: float
    lam: float


GAE_PRESETS: dict[str, GAEPreset] = {
    p.key: p
    for p in (
        # an answer of 6 tokens scored once at the end (the reward model's score), a critic that expects 0.5
        GAEPreset("sparse", "Reward only at the end", (0, 0, 0, 0, 0, 1), (0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0), 1.0, 0.95),
        GAEPreset("dense", "Rewards along the way", (1, 0, 2, 0, -1, 1), (1.5, 1.0, 1.2, 0.0, 0.2, 0.8, 0), 0.9, 0.5),
    )
}


# --------------------------------------------------------------------------------------------------------------
# KL estimators


@dataclass(frozen=True)
class KLEstimates:
    """Schulman's per-sample estimators of KL(pi_theta || pi_ref), from samples of pi_theta (arrays or tensors)."""

    k1: Any  # -log r: unbiased, can be negative, high variance
    k2: Any  # (log r)^2 / 2: biased (low variance), never negative
    k3: Any  # (r - 1) - log r: unbiased and never negative


def kl_estimators(logp_policy: Any, logp_ref: Any) -> KLEstimates:
    """k1, k2, k3 per sample, with r = pi_ref / pi_theta at tokens sampled from pi_theta.

        log r = log pi_ref(x) - log pi_theta(x)
        k1 = -log r,   k2 = (log r)^2 / 2,   k3 = (r - 1) - log r = expm1(log r) - log r

    Arguments broadcast; numpy in gives numpy out, torch tensors give tensors on their device (usable inside a
    loss: it is differentiable). Raises ValueError for NaN or +inf log-probabilities.
    """
    torch = loaded_torch()
    if torch is not None and isinstance(logp_policy, torch.Tensor) and isinstance(logp_ref, torch.Tensor):
        if not bool(torch.isfinite(logp_policy).all() and torch.isfinite(logp_ref).all()):
            raise ValueError("log-probabilities must be finite")
        log_r = logp_ref - logp_policy
        # k3 = (r - 1) - log r, with expm1 so that r close to 1 keeps its digits
        return KLEstimates(-log_r, log_r**2 / 2, torch.expm1(log_r) - log_r)
    lp = as_float_array(logp_policy, "logp_policy")
    lr = as_float_array(logp_ref, "logp_ref")
    log_r = lr - lp  # log r = log pi_ref - log pi_theta
    with np.errstate(over="ignore"):
        k3 = np.expm1(log_r) - log_r  # (r - 1) - log r
    return KLEstimates(-log_r, log_r**2 / 2, k3)


@dataclass(frozen=True)
class KLEstimatorStudy:
    """The three estimators on a toy vocabulary: exact mean and std per estimator, and a seeded sample."""

    pi_theta: NDArray[np.float64]  # (K,)
    pi_ref: NDArray[np.float64]  # (K,)
    exact_kl: float  # KL(pi_theta || pi_ref), nats
    mean: NDArray[np.float64]  # (3,) E_{x~pi_theta}[k_i], exact (a sum over the vocabulary)
    std: NDArray[np.float64]  # (3,) their standard deviations per sample, exact
    bias: NDArray[np.float64]  # (3,) mean - exact_kl
    sample_mean: NDArray[np.float64]  # (3,) the average of n sampled tokens
    sample_std: NDArray[np.float64]  # (3,)
    negative_share: NDArray[np.float64]  # (3,) fraction of sampled tokens with a negative estimate
    n: int


KL_NAMES: tuple[str, str, str] = ("k1", "k2", "k3")


def kl_estimator_study(pi_theta: ArrayLike, pi_ref: ArrayLike, n: int = 2000, seed: int = 0) -> KLEstimatorStudy:
    """k1, k2, k3 of KL(pi_theta || pi_ref) over a vocabulary of K tokens: their exact bias and spread, and n draws.

    pi_theta, pi_ref: probabilities (K,), each summing to 1; pi_theta > 0 only where pi_ref > 0 (else the KL is
    infinite). Exact moments are sums over the vocabulary weighted by pi_theta.
    """
    from core.kl_leash import kl_divergence

    p = as_float_array(pi_theta, "pi_theta").reshape(-1)
    q = as_float_array(pi_ref, "pi_ref").reshape(-1)
    if p.size == 0 or p.shape != q.shape:
        raise ValueError("pi_theta and pi_ref must be non-empty and of the same length")
    if not isinstance(n, int | np.integer) or n < 2:
        raise ValueError(f"n must be at least 2 samples, got {n!r}")
    exact = float(kl_divergence(p, q))  # validates both as probability vectors
    if not math.isfinite(exact):
        raise ValueError("pi_theta puts mass where pi_ref has none: the KL is infinite")
    sup = p > 0
    est = kl_estimators(np.log(p[sup]), np.log(q[sup]))
    k = np.stack([est.k1, est.k2, est.k3])  # (3, K_s)
    w = p[sup]  # (K_s,)
    mean = k @ w  # (3,)
    std = np.sqrt(np.maximum((k**2) @ w - mean**2, 0.0))  # (3,)
    rng = np.random.default_rng(seed)
    idx = rng.choice(np.flatnonzero(sup).size, size=n, p=w / w.sum())  # (n,) token ids among the support
    ks = k[:, idx]  # (3, n)
    return KLEstimatorStudy(
        pi_theta=p,
        pi_ref=q,
        exact_kl=exact,
        mean=mean,
        std=std,
        bias=mean - exact,
        sample_mean=ks.mean(axis=1),
        sample_std=ks.std(axis=1, ddof=1),
        negative_share=(ks < 0).mean(axis=1),
        n=int(n),
    )


def kl_penalized_rewards(
    score: ArrayLike, logp_policy: ArrayLike, logp_ref: ArrayLike, beta: float
) -> NDArray[np.float64]:
    """Where the KL enters in PPO (InstructGPT): the per-token reward R_t = -beta k1_t, plus the score at the end.

        R_t = -beta (log pi_theta(y_t) - log pi_ref(y_t)) + [t = T-1] r_phi(x, y)

    score: the reward model's score per answer (...); logp_policy, logp_ref: (..., T) per-token log-probabilities
    of the sampled answer. GAE then runs on R. (In GRPO the KL is instead a loss term beta · mean_t k3_t.)
    """
    b = float(beta)
    if not (math.isfinite(b) and b >= 0):
        raise ValueError(f"beta must be >= 0, got {beta!r}")
    k1 = kl_estimators(logp_policy, logp_ref).k1  # (..., T)
    if k1.ndim == 0 or k1.shape[-1] == 0:
        raise ValueError("empty trajectory: need the log-probabilities of at least one token")
    R = -b * k1  # (..., T)
    R[..., -1] += as_float_array(score, "score")
    return R


# --------------------------------------------------------------------------------------------------------------
# memory of the four models: bytes per parameter from the training-memory page's standard recipe

# trained: bf16 weights and gradients, fp32 master weights and Adam's two moments (16 B/param, 002 A10-09)
BYTES_TRAINED = RECIPES["standard"].total
# frozen: the bf16 working copy only (2 B/param)
BYTES_FROZEN = RECIPES["standard"].weights


@dataclass(frozen=True)
class ModelMemory:
    """One model held during RL training."""

    name: str
    params: float
    trains: bool
    bytes: float  # params x bytes per parameter (no activations, no KV cache)


def rlhf_memory(
    policy_params: float,
    reward_params: float | None = None,
    critic_params: float | None = None,
    method: str = "ppo",
) -> tuple[ModelMemory, ...]:
    """The models of PPO (policy, reference, reward model, critic), GRPO (policy, reference, a reward model or a
    checker) or DPO (policy, reference), in bytes.

    Trained models count ``BYTES_TRAINED`` = 16 bytes per parameter (core.training_memory's standard recipe:
    mixed-precision Adam), frozen ones ``BYTES_FROZEN`` = 2 (its bf16 weights). Reward
    model and critic default to the policy's size. Activations and the generation's KV cache are left out.
    """
    if method not in ("ppo", "grpo", "dpo"):
        raise ValueError(f"method must be 'ppo', 'grpo' or 'dpo', got {method!r}")
    N = float(policy_params)
    if not (math.isfinite(N) and N > 0):
        raise ValueError(f"policy_params must be a positive number, got {policy_params!r}")
    R = N if reward_params is None else float(reward_params)
    C = N if critic_params is None else float(critic_params)
    rows = [("policy", N, True), ("reference", N, False)]
    if method in ("ppo", "grpo"):
        rows.append(("reward model", R, False))
    if method == "ppo":
        rows.append(("critic", C, True))
    return tuple(ModelMemory(n, p, t, p * (BYTES_TRAINED if t else BYTES_FROZEN)) for n, p, t in rows)
