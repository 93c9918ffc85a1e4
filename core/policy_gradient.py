"""The policy gradient from scratch: REINFORCE on a bandit over a few answers, where every expectation is a finite sum.

The lesson context is seed 002, A6.4 (deriving the policy gradient) and A6.5 (why a baseline is unbiased). One
prompt, K possible answers, a softmax policy over K logits theta and a reward r_a for each answer::

    pi = softmax(theta),   J(theta) = E_{a~pi}[r_a] = sum_a pi_a r_a

The log-derivative trick (Williams 1992, REINFORCE) turns the gradient of J into an expectation over the policy's
own samples, because grad pi_a = pi_a grad log pi_a::

    grad J = sum_a pi_a r_a grad log pi_a,   grad_theta log pi_a = e_a - pi   (the score of a softmax)

so one sampled answer a gives the unbiased estimate g(a) = (r_a - b) (e_a - pi) for any b that does not depend on
a: the baseline adds sum_a pi_a b (e_a - pi) = b (pi - pi sum_a pi_a) = 0 in expectation (A6.5: pull b out of the
sum, then sum_a grad pi_a = grad 1 = 0). It changes the variance only. Four single-sample baselines:

    "none"      b = 0
    "constant"  b given by the caller
    "mean"      b = E[r] = J (what a perfect value model would return for this one prompt, as PPO's critic tries to)
    "optimal"   b* = E[r |s|^2] / E[|s|^2], s = e_a - pi: the one constant that minimises the trace of the
                covariance (derived below). A separate b_k for every parameter can do much better: at the page's
                defaults (pi = 0.1, 0.2, 0.3, 0.4, rewards 1, 0.6, 0.3, 0) one answer's tr Cov falls from 0.0574
                at b* to 0.0192, three times lower

Three group baselines, from G answers sampled for the same prompt (the estimate averages A_i (e_{a_i} - pi) over
the group)::

    "group_mean"     A_i = r_i - mean(r)                 GRPO's baseline (Shao et al. 2024), alone: Dr. GRPO's
                                                        advantage (Liu et al. 2025, arXiv 2503.20783)
    "leave_one_out"  A_i = r_i - mean_{j != i} r_j       RLOO (Kool et al. 2019; Ahmadian et al. 2024,
                     = G/(G-1) (r_i - mean(r))           arXiv 2402.14740)
    "group_norm"     A_i = (r_i - mean(r)) / (std(r) + eps)   GRPO's full advantage (core/grpo.py's conventions;
                                                        A_i = 0 for every i when all G rewards are equal)

The group mean contains r_i itself, so E[A_i s_i] = (1 - 1/G) grad J (the other G-1 rewards are independent of
a_i and E[s_i] = 0): the expected gradient is (G-1)/G times the true one, a shrink, not a turn. The leave-one-out
mean has no r_i in it and is exactly unbiased. Dividing by the group's std is a per-group weight that depends on
the sampled rewards: its expected gradient is not (G-1)/G grad J and in general not even parallel to it. For two
reward values (checker rewards 0/1) it stays parallel within one prompt, with the factor
:func:`group_norm_scale_binary` that depends on the success rate p: that is the difficulty weighting across
prompts that Dr. GRPO removes; with three or more distinct reward values the direction can turn as well.

The exact moments of the group estimators are sums over the multisets of G answers (the estimate does not depend
on the order of the samples): C(G+K-1, K-1) count vectors with multinomial weights, not K^G ordered tuples. The
seeded simulation and the learning runs are vectorised over draws and runs.

Everything here is numpy (float64); torch is never imported (core/grpo.py, reused for the group advantages,
does not import it either).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import combinations_with_replacement
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array
from core.grpo import grpo_advantages

Estimator = Literal["none", "constant", "mean", "optimal", "group_mean", "leave_one_out", "group_norm"]
SINGLE_ESTIMATORS: tuple[str, ...] = ("none", "constant", "mean", "optimal")
GROUP_ESTIMATORS: tuple[str, ...] = ("group_mean", "leave_one_out", "group_norm")
ESTIMATORS: tuple[str, ...] = SINGLE_ESTIMATORS + GROUP_ESTIMATORS
ESTIMATOR_LABELS: dict[str, str] = {
    "none": "REINFORCE, no baseline",
    "constant": "constant baseline b",
    "mean": "mean-reward baseline E[r]",
    "optimal": "best constant baseline b*",
    "group_mean": "group mean (GRPO's baseline, no std)",
    "leave_one_out": "leave-one-out mean (RLOO)",
    "group_norm": "group mean and std (GRPO)",
}
GroupStd = Literal["population", "sample"]
GROUP_STDS: tuple[str, ...] = ("population", "sample")

ENUMERATION_MAX = 200_000  # the most multisets of G answers an exact sum goes through
DRAWS_MAX = 2_000_000  # the most simulated draws (times G samples) in one call


# ---------------------------------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------------------------------


def _logits(theta: ArrayLike) -> NDArray[np.float64]:
    t = as_float_array(theta, "theta")
    if t.ndim != 1 or t.shape[0] < 2:
        raise ValueError(f"theta must be a flat list of K >= 2 logits, got shape {t.shape}")
    return t


def _rewards(rewards: ArrayLike, K: int) -> NDArray[np.float64]:
    r = as_float_array(rewards, "rewards")
    if r.shape != (K,):
        raise ValueError(f"rewards must hold one reward per answer: shape ({K},), got {r.shape}")
    return r


def _check_int(name: str, value: int, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def _check_real(name: str, value: float, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return float(value)


def _check_estimator(estimator: str, G: int) -> None:
    if estimator not in ESTIMATORS:
        raise ValueError(f"estimator must be one of {', '.join(repr(e) for e in ESTIMATORS)}; got {estimator!r}")
    if estimator in GROUP_ESTIMATORS and G < 2:
        raise ValueError(f"the group estimator {estimator!r} needs a group of G >= 2 answers, got G = {G}")


def _check_std(std: str) -> None:
    if std not in GROUP_STDS:
        raise ValueError(f"std must be one of {', '.join(repr(s) for s in GROUP_STDS)}; got {std!r}")


# ---------------------------------------------------------------------------------------------------------------
# The policy, its score and the exact gradient
# ---------------------------------------------------------------------------------------------------------------


def softmax_policy(theta: ArrayLike) -> NDArray[np.float64]:
    """pi = softmax(theta) over the K answers (shifted by max theta, so large logits do not overflow).

    ``theta`` may also be a (runs, K) array: one policy per row.
    """
    t = as_float_array(theta, "theta")
    # pi_a = exp(theta_a - max theta) / sum_b exp(theta_b - max theta)
    z = np.exp(t - t.max(axis=-1, keepdims=True))
    return z / z.sum(axis=-1, keepdims=True)


def score_function(theta: ArrayLike) -> NDArray[np.float64]:
    """The score of every answer, one row each: grad_theta log pi_a = e_a - pi, shape (K, K).

    log pi_a = theta_a - logsumexp(theta), so d log pi_a / d theta_k = [a = k] - pi_k. Each row sums to 0.
    """
    pi = softmax_policy(_logits(theta))
    # s_a = e_a - pi
    return np.eye(pi.shape[0]) - pi[None, :]


def expected_reward(theta: ArrayLike, rewards: ArrayLike) -> float:
    """J(theta) = sum_a pi_a r_a, the objective the policy gradient climbs."""
    t = _logits(theta)
    return float(softmax_policy(t) @ _rewards(rewards, t.shape[0]))


def policy_gradient(theta: ArrayLike, rewards: ArrayLike) -> NDArray[np.float64]:
    """The exact policy gradient grad J = sum_a pi_a r_a (e_a - pi) = pi * (r - J), shape (K,).

    The second form is the same sum collected per component (sum_a pi_a r_a [a = k] - pi_k sum_a pi_a r_a); it
    sums to 0, like every score.
    """
    t = _logits(theta)
    pi = softmax_policy(t)
    r = _rewards(rewards, t.shape[0])
    # grad J_k = pi_k (r_k - sum_a pi_a r_a)
    return pi * (r - pi @ r)


# ---------------------------------------------------------------------------------------------------------------
# Single-sample baselines
# ---------------------------------------------------------------------------------------------------------------


def optimal_baseline(theta: ArrayLike, rewards: ArrayLike) -> float:
    """The constant b that minimises the trace of the covariance of g(a) = (r_a - b) s_a, s_a = e_a - pi.

    tr Cov = E[(r - b)^2 |s|^2] - |grad J|^2 (the mean does not depend on b), a parabola in b whose minimum is

        b* = E[r |s|^2] / E[|s|^2],    |s_a|^2 = 1 - 2 pi_a + sum_k pi_k^2,   E[|s|^2] = 1 - sum_k pi_k^2

    a reward average weighted by how large each answer's score is: E[r] for every reward vector only when every
    |s_a|^2 is the same (the uniform policy), and far from it with a peaked policy (pi = 0.7, 0.1, 0.1, 0.1 with
    rewards 1, 0, 0, 0: b* = 0.175, E[r] = 0.7). This is the bandit case of the optimal baseline of Greensmith,
    Bartlett and Baxter 2004 (JMLR), who also show that the average reward can be a suboptimal baseline; derived
    here. b* depends on the parameterisation through s = grad_theta log pi (here theta are the logits). When pi is
    one-hot to rounding, E[|s|^2] = 0, every b gives the same (zero) variance, and E[r] is returned.
    """
    t = _logits(theta)
    pi = softmax_policy(t)
    r = _rewards(rewards, t.shape[0])
    q = pi @ pi
    s2 = 1.0 - 2.0 * pi + q  # (K,) |e_a - pi|^2
    weight = pi * s2  # (K,)
    total = weight.sum()
    if total <= 1e-300:
        return float(pi @ r)
    # b* = sum_a pi_a |s_a|^2 r_a / sum_a pi_a |s_a|^2
    return float(weight @ r / total)


def baseline_value(theta: ArrayLike, rewards: ArrayLike, estimator: str, b: float = 0.0) -> float:
    """The baseline a single-sample estimator subtracts: 0, ``b``, E[r] or b* (see the module docstring)."""
    if estimator not in SINGLE_ESTIMATORS:
        raise ValueError(f"a single-sample baseline is one of {SINGLE_ESTIMATORS}; got {estimator!r}")
    if estimator == "none":
        return 0.0
    if estimator == "constant":
        return _check_real("b", b)
    if estimator == "mean":
        return expected_reward(theta, rewards)
    return optimal_baseline(theta, rewards)


def baseline_contribution(theta: ArrayLike, b: float) -> NDArray[np.float64]:
    """What a baseline b adds to the expected gradient, as the sum over answers: sum_a pi_a b (e_a - pi), (K,).

    It is exactly zero: sum_a pi_a (e_a - pi) = pi - pi sum_a pi_a = 0. In floating point the sum comes out at
    rounding level (|.| of order 1e-17 times b), which is what the page shows.
    """
    b = _check_real("b", b)
    pi = softmax_policy(_logits(theta))
    s = np.eye(pi.shape[0]) - pi[None, :]  # (K, K) row a: e_a - pi
    # sum_a pi_a b s_a
    return b * (pi @ s)


@dataclass(frozen=True)
class EstimatorMoments:
    """The exact mean and covariance of one gradient estimator (one prompt, one update)."""

    mean: NDArray[np.float64]  # (K,) E[g]
    covariance: NDArray[np.float64]  # (K, K) Cov[g]

    @property
    def variance(self) -> NDArray[np.float64]:
        """Per-parameter variance Var[g_k], the diagonal of the covariance, (K,)."""
        return np.diag(self.covariance).copy()

    @property
    def total_variance(self) -> float:
        """tr Cov[g] = E|g - E g|^2, the variance summed over the K parameters."""
        return float(np.trace(self.covariance))


def baseline_moments(
    theta: ArrayLike, rewards: ArrayLike, estimator: str = "none", b: float = 0.0, samples: int = 1
) -> EstimatorMoments:
    """Exact mean and covariance of a single-sample baseline estimator, averaged over ``samples`` independent answers.

        E[g]   = sum_a pi_a (r_a - b) s_a = grad J                   (for every b: the baseline adds 0)
        Cov[g] = (sum_a pi_a (r_a - b)^2 s_a s_a^T - grad J grad J^T) / samples

    with s_a = e_a - pi and b from :func:`baseline_value`. The mean is the sum itself, not grad J substituted.
    """
    t = _logits(theta)
    r = _rewards(rewards, t.shape[0])
    samples = _check_int("samples", samples, 1)
    bv = baseline_value(t, r, estimator, b)
    pi = softmax_policy(t)
    s = np.eye(pi.shape[0]) - pi[None, :]  # (K, K)
    w = pi * (r - bv)  # (K,) pi_a (r_a - b)
    mean = w @ s  # (K,) sum_a pi_a (r_a - b) s_a
    # E[g g^T] = sum_a pi_a (r_a - b)^2 s_a s_a^T
    second = np.einsum("a,ak,al->kl", w * (r - bv), s, s)
    cov = (second - np.outer(mean, mean)) / samples
    return EstimatorMoments(mean=mean, covariance=0.5 * (cov + cov.T))


# ---------------------------------------------------------------------------------------------------------------
# Group baselines: exact sums over the multisets of G answers
# ---------------------------------------------------------------------------------------------------------------


def group_mean_factor(G: int) -> float:
    """(G-1)/G: the expected gradient of the group-mean baseline over the true one.

    E[(r_i - mean(r)) s_i] = E[r_i s_i] - (1/G) E[r_i s_i] - (1/G) sum_{j != i} E[r_j] E[s_i] = (1 - 1/G) grad J,
    since a_j is independent of a_i for j != i and E[s_i] = 0.
    """
    G = _check_int("G", G, 2)
    return (G - 1) / G


def group_count_vectors(K: int, G: int) -> NDArray[np.int64]:
    """Every way to put G answers into K bins (the multisets of a group), shape (C(G+K-1, K-1), K).

    ValueError when there are more than ``ENUMERATION_MAX`` of them.
    """
    K = _check_int("K", K, 1)
    G = _check_int("G", G, 1)
    n = math.comb(G + K - 1, K - 1)
    if n > ENUMERATION_MAX:
        raise ValueError(
            f"an exact sum over groups of G = {G} answers from K = {K} has {n:,} terms (more than "
            f"{ENUMERATION_MAX:,}); use fewer answers or a smaller group, or simulate"
        )
    combos = np.array(list(combinations_with_replacement(range(K), G)), dtype=np.int64).reshape(n, G)  # (n, G)
    counts = np.zeros((n, K), dtype=np.int64)
    np.add.at(counts, (np.repeat(np.arange(n), G), combos.ravel()), 1)
    return counts


def _group_advantages_by_count(
    counts: NDArray[np.int64], r: NDArray[np.float64], estimator: str, std: str, eps: float
) -> NDArray[np.float64]:
    """The advantage every answer a would get in each group (n, K), given the group's counts (n, K)."""
    G = int(counts[0].sum())
    mean = counts @ r / G  # (n,)
    c = r[None, :] - mean[:, None]  # (n, K) r_a - mean(r)
    present = counts > 0
    r_hi = np.where(present, r[None, :], -np.inf).max(axis=1)  # (n,)
    r_lo = np.where(present, r[None, :], np.inf).min(axis=1)
    flat = r_hi == r_lo  # all G rewards equal: every advantage is exactly 0 (no 0/0, no rounding residue)
    c = np.where(flat[:, None], 0.0, c)
    if estimator == "group_mean":
        return c
    if estimator == "leave_one_out":
        # r_a - (G mean - r_a) / (G - 1) = G/(G-1) (r_a - mean)
        return c * (G / (G - 1))
    var = (counts * c * c).sum(axis=1) / G  # (n,) population variance
    sd = np.sqrt(var) * (math.sqrt(G / (G - 1)) if std == "sample" else 1.0)
    denom = np.where(flat, 1.0, sd + eps)
    return c / denom[:, None]


def group_moments(
    theta: ArrayLike,
    rewards: ArrayLike,
    estimator: str,
    G: int,
    *,
    b: float = 0.0,
    std: str = "population",
    eps: float = 0.0,
) -> EstimatorMoments:
    """Exact mean and covariance of the group estimate g = (1/G) sum_i A_i (e_{a_i} - pi), G answers sampled.

    Summed over every multiset of G answers (count vector n, probability G!/prod n_a! prod pi_a^{n_a})::

        g(n) = (1/G) sum_a n_a A_a(n) (e_a - pi),   E[g] = sum_n P(n) g(n),   Cov = sum_n P(n) (g - E g)(g - E g)^T

    Works for every estimator: a single-sample baseline then gives its :func:`baseline_moments` with samples=G.
    ``std`` ("population" or "sample") and ``eps`` only matter for "group_norm".
    """
    t = _logits(theta)
    K = t.shape[0]
    r = _rewards(rewards, K)
    G = _check_int("G", G, 1)
    _check_estimator(estimator, G)
    _check_std(std)
    eps = _check_real("eps", eps, 0.0)
    pi = softmax_policy(t)
    counts = group_count_vectors(K, G)  # (n, K)
    # log P(n) = log G! - sum_a log n_a! + sum_a n_a log pi_a   (pi_a > 0 unless it underflowed; 0 log 0 = 0)
    log_pi = t - t.max() - np.log(np.exp(t - t.max()).sum())
    with np.errstate(invalid="ignore"):
        terms = np.where(counts > 0, counts * log_pi[None, :], 0.0)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, G + 1, dtype=np.float64)))])  # (G+1,) log n!
    log_p = log_fact[G] - log_fact[counts].sum(axis=1) + terms.sum(axis=1)
    p = np.exp(log_p)  # (n,)
    if estimator in SINGLE_ESTIMATORS:
        A = np.broadcast_to(r - baseline_value(t, r, estimator, b), counts.shape)  # (n, K)
    else:
        A = _group_advantages_by_count(counts, r, estimator, std, eps)
    w = counts * A / G  # (n, K) weight of answer a in the group's estimate
    g = w - w.sum(axis=1, keepdims=True) * pi[None, :]  # (n, K) sum_a w_a (e_a - pi)
    mean = p @ g
    d = g - mean
    cov = np.einsum("n,nk,nl->kl", p, d, d)
    return EstimatorMoments(mean=mean, covariance=0.5 * (cov + cov.T))


def estimator_moments(
    theta: ArrayLike,
    rewards: ArrayLike,
    estimator: str,
    G: int = 1,
    *,
    b: float = 0.0,
    std: str = "population",
    eps: float = 0.0,
) -> EstimatorMoments:
    """The exact moments of any estimator with G answers per update: closed form for the single-sample baselines
    (:func:`baseline_moments`), the sum over groups for the group baselines (:func:`group_moments`)."""
    G = _check_int("G", G, 1)
    _check_estimator(estimator, G)
    if estimator in SINGLE_ESTIMATORS:
        return baseline_moments(theta, rewards, estimator, b, samples=G)
    return group_moments(theta, rewards, estimator, G, b=b, std=std, eps=eps)


def expected_gradient(
    theta: ArrayLike,
    rewards: ArrayLike,
    estimator: str,
    G: int = 1,
    *,
    std: str = "population",
    eps: float = 0.0,
) -> NDArray[np.float64]:
    """E[g] in closed form where one exists, (K,):

    single-sample baselines, "leave_one_out":  grad J
    "group_mean":                               (G-1)/G grad J
    "group_norm":                               no closed form: the exact sum of :func:`group_moments`
    """
    G = _check_int("G", G, 1)
    _check_estimator(estimator, G)
    if estimator == "group_norm":
        return group_moments(theta, rewards, estimator, G, std=std, eps=eps).mean
    grad = policy_gradient(theta, rewards)
    if estimator == "group_mean":
        return group_mean_factor(G) * grad
    return grad


def group_norm_scale_binary(p: ArrayLike, G: int, std: str = "population", eps: float = 0.0) -> float | NDArray:
    """E[g] / grad J for "group_norm" when the rewards take two values (a checker's 0/1), as a function of the
    success rate p = P(high reward) in (0, 1).

    Given c high rewards in the group, the sum of (r_i - mean)/sigma s_i has expectation
    c (G-c)/G / sigma_c * grad J / (p (1-p)) (the high answers average pi restricted to the correct ones, the
    low ones the rest), so with q = c/G and sigma_c = sqrt(q(1-q)) [* sqrt(G/(G-1)) for the sample std]::

        E[g] = sum_c Binomial(c; G, p) * q (1-q) / (sigma_c + eps) / (p (1-p)) * grad J

    Parallel to grad J within one prompt, but the factor depends on p: about 1/sqrt(p (1-p)) while G p and
    G (1-p) are large (2 at p = 1/2, more for rare successes or rare failures), at most sqrt(G-1) (the limit
    p -> 0 or 1, where only groups with a single odd answer out have signal). Across prompts the std re-weights the
    gradient by difficulty, which is the bias Dr. GRPO removes. Groups with c = 0
    or c = G add 0.

    The rewards here are exactly 0 and 1. For two other values r_lo < r_hi (with eps = 0) the advantages are the
    same as for 0/1 (the std division removes the scale) while grad J is (r_hi - r_lo) times larger, so the factor
    is this one divided by r_hi - r_lo.
    """
    G = _check_int("G", G, 2)
    _check_std(std)
    eps = _check_real("eps", eps, 0.0)
    pa = as_float_array(p, "p")
    if np.any((pa <= 0) | (pa >= 1)):
        raise ValueError("p must lie strictly between 0 and 1 (at 0 or 1 the true gradient is 0)")
    c = np.arange(1, G)  # (G-1,) the groups with signal
    q = c / G
    sigma = np.sqrt(q * (1.0 - q)) * (math.sqrt(G / (G - 1)) if std == "sample" else 1.0)
    size = q * (1.0 - q) / (sigma + eps)  # (G-1,)
    log_comb = np.array([math.lgamma(G + 1) - math.lgamma(k + 1) - math.lgamma(G - k + 1) for k in c])
    pe = pa[..., None]
    pmf = np.exp(log_comb + c * np.log(pe) + (G - c) * np.log1p(-pe))  # (..., G-1)
    out = (pmf * size).sum(axis=-1) / (pa * (1.0 - pa))
    return float(out) if out.ndim == 0 else out


def alignment(estimate: ArrayLike, true_gradient: ArrayLike) -> tuple[float, float]:
    """(cosine, scale) of an expected gradient against the true one: scale = <E g, grad J> / |grad J|^2.

    A proportional estimate has cosine 1 and E g = scale * grad J; the group mean gives scale (G-1)/G.
    """
    e = as_float_array(estimate, "estimate").ravel()
    t = as_float_array(true_gradient, "true_gradient").ravel()
    if e.shape != t.shape:
        raise ValueError(f"estimate and true_gradient must have the same shape, got {e.shape} and {t.shape}")
    tt = float(t @ t)
    ee = float(e @ e)
    if tt == 0.0:
        raise ValueError("the true gradient is zero: no direction to compare with")
    cosine = float(e @ t) / math.sqrt(ee * tt) if ee > 0 else 0.0
    return cosine, float(e @ t) / tt


# ---------------------------------------------------------------------------------------------------------------
# Sampling: the live simulation and the learning runs
# ---------------------------------------------------------------------------------------------------------------


def _sample_answers(pi: NDArray[np.float64], G: int, rng: np.random.Generator) -> NDArray[np.int64]:
    """G answers for each row of pi (R, K) by the inverse CDF: (R, G) indices."""
    cdf = np.cumsum(pi, axis=-1)  # (R, K)
    cdf[:, -1] = 1.0
    u = rng.random((pi.shape[0], G))  # (R, G)
    return (u[:, :, None] >= cdf[:, None, :]).sum(axis=-1)  # (R, G) first index with u < cdf


def _sampled_gradients(
    pi: NDArray[np.float64],
    r: NDArray[np.float64],
    answers: NDArray[np.int64],
    estimator: str,
    b: float,
    std: str,
    eps: float,
) -> NDArray[np.float64]:
    """One estimate per row: g = (1/G) sum_i A_i (e_{a_i} - pi) for policies pi (R, K) and answers (R, G)."""
    R, G = answers.shape
    K = pi.shape[1]
    ri = r[answers]  # (R, G)
    if estimator == "none":
        A = ri
    elif estimator == "constant":
        A = ri - b
    elif estimator == "mean":
        A = ri - (pi @ r)[:, None]
    elif estimator == "optimal":
        s2 = 1.0 - 2.0 * pi + (pi * pi).sum(axis=1, keepdims=True)  # (R, K)
        w = pi * s2
        tot = w.sum(axis=1)
        b_star = np.where(tot > 1e-300, (w @ r) / np.where(tot > 1e-300, tot, 1.0), pi @ r)  # (R,)
        A = ri - b_star[:, None]
    elif estimator == "group_mean":
        A = grpo_advantages(ri, "none")
    elif estimator == "leave_one_out":
        A = grpo_advantages(ri, "none") * (G / (G - 1))
    else:
        A = grpo_advantages(ri, std, eps)
    # sum_i A_i e_{a_i}, accumulated per row (answers may repeat within a group)
    flat = (np.arange(R)[:, None] * K + answers).ravel()
    onehot_sum = np.bincount(flat, weights=np.asarray(A, dtype=np.float64).ravel(), minlength=R * K).reshape(R, K)
    return (onehot_sum - A.sum(axis=1, keepdims=True) * pi) / G


@dataclass(frozen=True)
class SimulatedEstimator:
    """Seeded draws of one estimator: every draw's gradient estimate, their mean and its standard error."""

    estimator: str
    samples: NDArray[np.float64]  # (draws, K)

    @property
    def mean(self) -> NDArray[np.float64]:
        return self.samples.mean(axis=0)

    @property
    def variance(self) -> NDArray[np.float64]:
        """Per-parameter sample variance (ddof 1), (K,)."""
        return self.samples.var(axis=0, ddof=1)

    @property
    def standard_error(self) -> NDArray[np.float64]:
        """Standard error of the mean per parameter, sqrt(variance / draws), (K,)."""
        return np.sqrt(self.variance / self.samples.shape[0])


def simulate_estimators(
    theta: ArrayLike,
    rewards: ArrayLike,
    estimators: tuple[str, ...] | list[str] = ESTIMATORS,
    G: int = 4,
    draws: int = 2000,
    seed: int = 0,
    *,
    b: float = 0.0,
    std: str = "population",
    eps: float = 0.0,
) -> dict[str, SimulatedEstimator]:
    """``draws`` seeded updates of each estimator, each from a group of G answers sampled from pi = softmax(theta).

    Every estimator sees the same sampled answers (common random numbers), so their spreads differ only by the
    baseline. Single-sample baselines average (r_i - b) (e_{a_i} - pi) over the G answers. The mean and optimal
    baselines use the exact E[r] and b* of the current policy (an oracle, as a perfect value model would be).
    """
    t = _logits(theta)
    K = t.shape[0]
    r = _rewards(rewards, K)
    G = _check_int("G", G, 1)
    draws = _check_int("draws", draws, 2)
    _check_std(std)
    eps = _check_real("eps", eps, 0.0)
    b = _check_real("b", b)
    for e in estimators:
        _check_estimator(e, G)
    if draws * G > DRAWS_MAX:
        raise ValueError(f"draws * G must be at most {DRAWS_MAX:,}, got {draws * G:,}")
    rng = np.random.default_rng(seed)
    pi = np.broadcast_to(softmax_policy(t), (draws, K))
    answers = _sample_answers(np.ascontiguousarray(pi), G, rng)  # (draws, G)
    return {e: SimulatedEstimator(e, _sampled_gradients(pi, r, answers, e, b, std, eps)) for e in estimators}


@dataclass(frozen=True)
class LearningCurves:
    """Expected reward J and the policy along a few gradient-ascent steps, for each estimator."""

    steps: NDArray[np.int64]  # (S+1,) 0..S
    expected_reward: dict[str, NDArray[np.float64]]  # estimator -> (S+1,) J averaged over the runs
    reward_spread: dict[str, NDArray[np.float64]]  # estimator -> (S+1,) std of J across runs (0 when exact)
    policy: dict[str, NDArray[np.float64]]  # estimator -> (S+1, K) pi averaged over the runs
    mode: str
    runs: int


def learning_curves(
    theta0: ArrayLike,
    rewards: ArrayLike,
    estimators: tuple[str, ...] | list[str] = ESTIMATORS,
    steps: int = 100,
    lr: float = 1.0,
    G: int = 4,
    mode: Literal["expected", "sampled"] = "sampled",
    runs: int = 16,
    seed: int = 0,
    *,
    b: float = 0.0,
    std: str = "population",
    eps: float = 0.0,
) -> LearningCurves:
    """Gradient ascent theta <- theta + lr * g from ``theta0`` for ``steps`` updates with each estimator.

    ``mode="expected"``: g is the estimator's exact expected gradient (:func:`expected_gradient`): one
    deterministic run, which isolates the bias (the group mean's (G-1)/G is a smaller step; group_norm's re-weighting
    changes the path). ``mode="sampled"``: g is one seeded group of G answers per step, in ``runs`` independent
    runs vectorised together, and the curves average them (``reward_spread`` is their std): the variance shows.
    """
    t0 = _logits(theta0)
    K = t0.shape[0]
    r = _rewards(rewards, K)
    steps = _check_int("steps", steps, 0)
    lr = _check_real("lr", lr, 0.0)
    G = _check_int("G", G, 1)
    runs = _check_int("runs", runs, 1)
    _check_std(std)
    eps = _check_real("eps", eps, 0.0)
    b = _check_real("b", b)
    if mode not in ("expected", "sampled"):
        raise ValueError(f"mode must be 'expected' or 'sampled', got {mode!r}")
    for e in estimators:
        _check_estimator(e, G)
    if mode == "sampled" and runs * G > DRAWS_MAX:
        raise ValueError(f"runs * G must be at most {DRAWS_MAX:,}")
    J: dict[str, NDArray[np.float64]] = {}
    spread: dict[str, NDArray[np.float64]] = {}
    policies: dict[str, NDArray[np.float64]] = {}
    for i, e in enumerate(estimators):
        if mode == "expected":
            theta = t0.copy()
            pis = np.empty((steps + 1, K))
            for s in range(steps + 1):
                pis[s] = softmax_policy(theta)
                if s < steps:
                    if e in SINGLE_ESTIMATORS:
                        theta = theta + lr * policy_gradient(theta, r)  # every fixed baseline: E[g] = grad J
                    else:
                        theta = theta + lr * expected_gradient(theta, r, e, G, std=std, eps=eps)
            J[e] = pis @ r
            spread[e] = np.zeros(steps + 1)
            policies[e] = pis
        else:
            rng = np.random.default_rng([seed, i])
            theta = np.broadcast_to(t0, (runs, K)).copy()  # (runs, K)
            Js = np.empty((steps + 1, runs))
            pis_mean = np.empty((steps + 1, K))
            for s in range(steps + 1):
                pi = softmax_policy(theta)  # (runs, K)
                Js[s] = pi @ r
                pis_mean[s] = pi.mean(axis=0)
                if s < steps:
                    answers = _sample_answers(pi, G, rng)
                    theta = theta + lr * _sampled_gradients(pi, r, answers, e, b, std, eps)
            J[e] = Js.mean(axis=1)
            spread[e] = Js.std(axis=1)
            policies[e] = pis_mean
    return LearningCurves(
        steps=np.arange(steps + 1),
        expected_reward=J,
        reward_spread=spread,
        policy=policies,
        mode=mode,
        runs=1 if mode == "expected" else runs,
    )
