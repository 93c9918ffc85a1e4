"""The KL leash: the optimal KL-regularised policy pi* ∝ pi_ref · exp(r / beta), and what it costs in KL.

One prompt, K answers. Answer k has reference probability pi_ref[k] (the SFT model) and reward r[k]. The RL
objective of RLHF is

    J(pi) = E_{y~pi}[r(y)] - beta · KL(pi || pi_ref),

and its maximiser (the theorem of section 3.6) is

    pi*(y) = pi_ref(y) · exp(r(y) / beta) / Z,      Z = sum_y pi_ref(y) · exp(r(y) / beta),

with maximum value J(pi*) = beta · log Z. beta sets the leash: it is how hard the KL term pulls towards pi_ref, so
the leash's length is 1/beta. beta -> 0 (an endless leash) puts all mass on the highest reward, beta -> infinity (no
leash left) returns pi_ref.

Everything is computed in log-space (log pi_ref + (r - r_max) / beta, then a logsumexp), so beta = 1e-3 with
rewards of 1e3 (logits of 1e6) is exact, and an answer with pi_ref = 0 has log pi_ref = -inf and keeps pi* = 0
exactly.
The deterministic math is numpy (cheap to import); only :func:`random_policies`, the Monte Carlo check of the
theorem, uses torch, on core's device.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array

if TYPE_CHECKING:
    import torch

BETA_MIN = 1e-3  # the page's leash range, log-spaced
BETA_MAX = 1e3
SUM_TOL = 1e-9  # pi_ref whose sum is further than this from 1 is renormalised (and the page says so)


# --------------------------------------------------------------------------------------------------------------
# validation


def _check_beta(beta: ArrayLike) -> NDArray[np.float64]:
    b = as_float_array(beta, "beta")
    if b.size == 0:
        raise ValueError("beta must not be empty")
    if np.any(b <= 0):
        raise ValueError(f"beta must be positive (the KL price per nat), got {beta!r}")
    return b


class Reference(NamedTuple):
    """A reference policy made valid: probabilities that sum to 1, and whether they had to be rescaled."""

    pi_ref: NDArray[np.float64]  # (..., K), sums to 1 along the last axis
    renormalised: bool | NDArray[np.bool_]  # True where the input did not sum to 1 (bool for a single policy)
    total: float | NDArray[np.float64]  # the input's sum (before rescaling)


def normalize_reference(pi_ref: ArrayLike) -> Reference:
    """Check reference probabilities (last axis = answers) and rescale them to sum to 1.

    Raises ValueError for an empty list, text, NaN or infinite values, negative entries, or an all-zero
    policy. Zeros are allowed: such an answer can never be produced (and pi* keeps it at 0).

        pi_ref <- pi_ref / sum_k pi_ref[k]
    """
    p = as_float_array(pi_ref, "pi_ref")
    if p.ndim == 0:
        raise ValueError("pi_ref must be a list of probabilities, one per answer, not a single number")
    if p.shape[-1] == 0:
        raise ValueError("pi_ref must not be empty: give at least one answer")
    if np.any(p < 0):
        raise ValueError(f"pi_ref must not be negative, got {pi_ref!r}")
    total = p.sum(axis=-1)  # (...)
    if not np.all(np.isfinite(total)):
        raise ValueError("pi_ref is too large to add up: give probabilities (or weights of a sensible size)")
    if np.any(total <= 0):
        raise ValueError("pi_ref is all zeros: at least one answer needs a positive reference probability")
    renormalised = np.abs(total - 1.0) > SUM_TOL  # (...)
    p = p / total[..., None]  # (..., K)
    if renormalised.ndim == 0:
        return Reference(p, bool(renormalised), float(total))
    return Reference(p, renormalised, total)


def _check_rewards(r: ArrayLike, K: int, name: str = "r") -> NDArray[np.float64]:
    a = as_float_array(r, name)
    if a.ndim == 0 or a.shape[-1] != K:
        got = "a single number" if a.ndim == 0 else f"{a.shape[-1]} values"
        raise ValueError(f"{name} needs one reward per answer (K = {K}), got {got}")
    return a


def _log(p: NDArray[np.float64]) -> NDArray[np.float64]:
    """log p with log 0 = -inf and no warning."""
    with np.errstate(divide="ignore"):
        return np.log(p)


def _logsumexp(x: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    """log sum exp(x) along ``axis``, shifted by the max; entries of -inf are allowed (at least one finite)."""
    m = np.max(x, axis=axis, keepdims=True)  # finite: every row has an answer with pi_ref > 0
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(x - m), axis=axis))


def _xlogy_diff(p: NDArray[np.float64], log_a: NDArray[np.float64], log_b: NDArray[np.float64]) -> NDArray:
    """p · (log_a - log_b) with 0 · anything = 0 (the convention 0 log 0 = 0 of entropies and KL)."""
    with np.errstate(invalid="ignore"):
        return np.where(p > 0, p * (log_a - log_b), 0.0)


# --------------------------------------------------------------------------------------------------------------
# the optimal policy and the KL divergence


def _log_policy(
    log_pi_ref: NDArray[np.float64], r: NDArray[np.float64], beta: NDArray[np.float64]
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """(log pi*, pi*, beta · log Z) for validated inputs; beta's shape leads, as in kl_regularized_policy.

    The top reward on the support, r_max, is taken out before dividing by beta, so the logits of the best answers
    are exactly log pi_ref (no rounding of r / beta = 1e6 creeps in) and the others are <= log pi_ref:

        log pi_ref(y) + r(y) / beta = r_max / beta + [log pi_ref(y) + (r(y) - r_max) / beta]
        beta · log Z = r_max + beta · logsumexp_y [log pi_ref(y) + (r(y) - r_max) / beta]
    """
    on_support = np.isfinite(log_pi_ref)  # (..., K)
    r_max = np.max(np.where(on_support, r, -np.inf), axis=-1, keepdims=True)  # (..., 1)
    # (r - r_max) / beta <= 0; it may underflow to -inf for a hopeless answer, which then just gets pi* = 0
    with np.errstate(over="ignore"):
        logits = log_pi_ref + (r - r_max) / beta[..., None]  # (B..., K), -inf where pi_ref = 0
    logits = np.where(np.broadcast_to(on_support, logits.shape), logits, -np.inf)  # (B..., K)
    lse = _logsumexp(logits, axis=-1)  # (B...)
    # log pi* = log pi_ref + r / beta - log Z
    log_pi = logits - lse[..., None]  # (B..., K)
    pi = np.exp(log_pi)  # (B..., K)
    pi = pi / pi.sum(axis=-1, keepdims=True)  # removes the last ulps, so that rows sum to 1
    beta_log_Z = r_max[..., 0] + beta * lse  # (B...)
    return log_pi, pi, beta_log_Z


def kl_regularized_policy(pi_ref: ArrayLike, r: ArrayLike, beta: ArrayLike) -> NDArray[np.float64]:
    """The maximiser of E_pi[r] - beta · KL(pi || pi_ref) over the answers (last axis).

        pi*(y) = pi_ref(y) · exp(r(y) / beta) / Z,     Z = sum_y pi_ref(y) · exp(r(y) / beta)

    pi_ref: (..., K) reference probabilities (rescaled to sum to 1; zeros allowed). r: rewards, broadcasting
    against pi_ref. beta: a positive number or an array of shape (B...) -- a whole sweep in one call; its shape
    leads the result: the output has shape broadcast(beta.shape + (1,), pi_ref.shape, r.shape), so pi_ref of
    shape (K,) and beta of shape (B,) give (B, K). Rows sum to 1, are never NaN, and pi_ref = 0 gives exactly 0.
    """
    p = normalize_reference(pi_ref).pi_ref  # (..., K)
    r = _check_rewards(r, p.shape[-1])  # (..., K)
    beta = _check_beta(beta)  # (B...)
    _, pi, _ = _log_policy(_log(p), r, beta)
    return pi


def kl_divergence(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64] | float:
    """KL(p || q) = sum_y p(y) · log(p(y) / q(y)) in nats, along the last axis (shapes broadcast).

    Terms with p(y) = 0 count 0; p(y) > 0 where q(y) = 0 gives +inf (p puts mass where q never goes). Both
    arguments must be probability vectors (non-negative, summing to 1 within 1e-6); the result is >= 0.
    """
    p = as_float_array(p, "p")
    q = as_float_array(q, "q")
    for name, a in (("p", p), ("q", q)):
        if a.ndim == 0 or a.shape[-1] == 0:
            raise ValueError(f"{name} must be a non-empty probability vector")
        if np.any(a < 0):
            raise ValueError(f"{name} must not be negative")
        if np.any(np.abs(a.sum(axis=-1) - 1.0) > 1e-6):
            raise ValueError(f"{name} must sum to 1 along the last axis")
    # sum_y p log p - p log q, with 0 log 0 = 0
    kl = np.sum(_xlogy_diff(p, _log(p), _log(q)), axis=-1)  # (...)
    kl = np.maximum(kl, 0.0)  # rounding can give -1e-17; KL is never negative
    return float(kl) if kl.ndim == 0 else kl


def entropy(p: ArrayLike) -> NDArray[np.float64] | float:
    """H(p) = -sum_y p(y) · log p(y) in nats, along the last axis (0 log 0 = 0)."""
    p = as_float_array(p, "p")
    if np.any(p < 0):
        raise ValueError("p must not be negative")
    h = -np.sum(_xlogy_diff(p, _log(p), 0.0), axis=-1)
    h = np.maximum(h, 0.0)
    return float(h) if h.ndim == 0 else h


def objective(pi: ArrayLike, pi_ref: ArrayLike, r: ArrayLike, beta: float) -> NDArray[np.float64] | float:
    """J(pi) = E_pi[r] - beta · KL(pi || pi_ref), for any policy pi (last axis = answers).

    -inf when pi puts mass on an answer with pi_ref = 0 (infinite KL).
    """
    p = normalize_reference(pi_ref).pi_ref
    r = _check_rewards(r, p.shape[-1])
    beta = float(_check_beta(beta).reshape(-1)[0])
    kl = kl_divergence(pi, p)
    return np.sum(np.asarray(pi, dtype=np.float64) * r, axis=-1) - beta * kl


# --------------------------------------------------------------------------------------------------------------
# a sweep over beta, for the page's figures


def beta_grid(
    n: int = 121, lo: float = BETA_MIN, hi: float = BETA_MAX, include: ArrayLike | None = None
) -> NDArray[np.float64]:
    """n log-spaced values of beta from lo to hi (121 gives 20 per decade over 1e-3..1e3).

    ``include``: extra values (the page's current beta) merged in, so that a slider can start exactly there.
    """
    if n < 2:
        raise ValueError(f"a beta grid needs at least 2 points, got n = {n}")
    if not (0 < lo < hi) or not np.isfinite(hi):
        raise ValueError(f"need 0 < lo < hi, got lo = {lo}, hi = {hi}")
    grid = np.geomspace(lo, hi, n)  # (n,)
    if include is not None:
        extra = _check_beta(include).reshape(-1)
        # merge, dropping grid points within 0.1% of an included value (they would be duplicate slider steps)
        near = np.any(np.abs(np.log(grid[:, None] / extra[None, :])) < 1e-3, axis=1)
        grid = np.unique(np.concatenate([grid[~near], extra]))
    return grid


@dataclass(frozen=True)
class LeashSweep:
    """pi* and its readouts for every beta of a sweep (S values of beta, K answers).

    ``r`` is the reward pi* optimises (the proxy, say a reward model); ``r_true`` is what people want (equal to
    ``r`` unless a proxy gap is set). ``reward`` and ``true_reward`` are their expectations under pi*.
    """

    beta: NDArray[np.float64]  # (S,) increasing
    pi_ref: NDArray[np.float64]  # (K,) normalised
    renormalised: bool  # the input pi_ref did not sum to 1
    r: NDArray[np.float64]  # (K,) proxy reward, the one optimised
    r_true: NDArray[np.float64]  # (K,) true reward
    pi: NDArray[np.float64]  # (S, K) pi* for each beta
    kl: NDArray[np.float64]  # (S,) KL(pi* || pi_ref), nats
    reward: NDArray[np.float64]  # (S,) E_pi*[r]
    true_reward: NDArray[np.float64]  # (S,) E_pi*[r_true]
    objective: NDArray[np.float64]  # (S,) E_pi*[r] - beta · KL
    beta_log_Z: NDArray[np.float64]  # (S,) beta · log Z (equal to the objective: the theorem)
    entropy: NDArray[np.float64]  # (S,) H(pi*), nats

    @property
    def K(self) -> int:
        return self.pi_ref.shape[0]

    def index(self, beta: float) -> int:
        """Index of the sweep's beta closest to ``beta`` (on a log scale)."""
        b = float(_check_beta(beta).reshape(-1)[0])
        return int(np.argmin(np.abs(np.log(self.beta / b))))

    @property
    def true_peak(self) -> int:
        """Index where the true expected reward is largest (the top of the over-optimisation curve)."""
        return int(np.argmax(self.true_reward))

    def at(self, beta: float) -> LeashPoint:
        """The sweep's numbers at the beta closest to ``beta`` (exact when the sweep includes it)."""
        i = self.index(beta)
        return LeashPoint(
            beta=float(self.beta[i]),
            pi=self.pi[i],
            kl=float(self.kl[i]),
            reward=float(self.reward[i]),
            true_reward=float(self.true_reward[i]),
            objective=float(self.objective[i]),
            beta_log_Z=float(self.beta_log_Z[i]),
            entropy=float(self.entropy[i]),
        )

    def table(self, names: Sequence[str] | None = None) -> dict[str, NDArray[np.float64]]:
        """The sweep as named columns (one row per beta), for a CSV download; pi* gets one column per answer."""
        names = [f"answer {k + 1}" for k in range(self.K)] if names is None else list(names)
        if len(names) != self.K:
            raise ValueError(f"need {self.K} answer names, got {len(names)}")
        columns = {
            "beta": self.beta,
            "KL_nats": self.kl,
            "E_r": self.reward,
            "E_r_true": self.true_reward,
            "objective": self.objective,
            "beta_log_Z": self.beta_log_Z,
            "entropy_nats": self.entropy,
        }
        return columns | {f"pi_star[{name}]": self.pi[:, k] for k, name in enumerate(names)}


class LeashPoint(NamedTuple):
    """pi* and its readouts at one beta."""

    beta: float
    pi: NDArray[np.float64]  # (K,)
    kl: float  # KL(pi* || pi_ref), nats
    reward: float  # E_pi*[r]
    true_reward: float  # E_pi*[r_true]
    objective: float  # E_pi*[r] - beta · KL
    beta_log_Z: float  # equal to the objective (the theorem)
    entropy: float  # H(pi*), nats


def leash_sweep(
    pi_ref: ArrayLike, r: ArrayLike, beta: ArrayLike | None = None, r_true: ArrayLike | None = None
) -> LeashSweep:
    """pi*, KL, expected rewards, objective, beta · log Z and entropy for each beta of a sweep, in one pass.

    pi_ref (K,) is rescaled to sum to 1 (``renormalised`` says whether it had to be). beta: the sweep's values
    (default :func:`beta_grid`), sorted on return. r_true (K,) defaults to r.

        log pi*  = log pi_ref + r / beta - log Z
        KL       = sum_y pi*(y) · (log pi*(y) - log pi_ref(y))
        J(pi*)   = E_pi*[r] - beta · KL  =  beta · log Z
    """
    ref = normalize_reference(pi_ref)
    if np.ndim(ref.pi_ref) != 1:
        raise ValueError("leash_sweep takes one policy: pi_ref must be a flat list of K probabilities")
    p = ref.pi_ref  # (K,)
    K = p.shape[0]
    r = _check_rewards(r, K)
    r_true = r if r_true is None else _check_rewards(r_true, K, "r_true")
    if r.ndim != 1 or r_true.ndim != 1:
        raise ValueError("leash_sweep takes one reward per answer: r and r_true must be flat lists")
    beta = np.sort(_check_beta(beta_grid() if beta is None else beta).reshape(-1))  # (S,)

    log_p = _log(p)  # (K,)
    log_pi, pi, beta_log_Z = _log_policy(log_p, r, beta)  # (S, K), (S, K), (S,)
    # KL(pi* || pi_ref) = sum_y pi* (log pi* - log pi_ref)
    kl = np.maximum(np.sum(_xlogy_diff(pi, log_pi, log_p), axis=-1), 0.0)  # (S,)
    reward = pi @ r  # (S,)
    true_reward = pi @ r_true  # (S,)
    # H(pi*) = -sum_y pi* log pi*
    ent = np.maximum(-np.sum(_xlogy_diff(pi, log_pi, 0.0), axis=-1), 0.0)  # (S,)
    return LeashSweep(
        beta=beta,
        pi_ref=p,
        renormalised=bool(ref.renormalised),
        r=r,
        r_true=r_true,
        pi=pi,
        kl=kl,
        reward=reward,
        true_reward=true_reward,
        objective=reward - beta * kl,
        beta_log_Z=beta_log_Z,
        entropy=ent,
    )


class Takeover(NamedTuple):
    """Where pi* hands most of its mass to the answer(s) with the top reward (on pi_ref's support)."""

    top: tuple[int, ...]  # the answers with the highest reward (several when tied)
    share: float  # the mass asked for, e.g. 0.9
    beta: float  # pi*(top) = share at this beta; inf when pi_ref already gives them share, 0 below 1e-12
    kl: float  # KL(pi* || pi_ref) there, nats (0 when beta is inf)


def takeover_beta(pi_ref: ArrayLike, r: ArrayLike, share: float = 0.9) -> Takeover:
    """The beta below which pi* puts at least ``share`` of its mass on the highest-reward answer(s).

    pi*(top) = sum_{y in top} pi_ref(y) · exp(r(y) / beta) / Z falls monotonically from 1 (beta -> 0) to
    pi_ref(top) (beta -> infinity), because every other answer's weight exp(-(r_top - r(y)) / beta) grows with
    beta. So the crossing pi*(top) = share is unique; it is found by bisection on log beta in [1e-12, 1e12] to
    machine precision. For the reward-hack preset this says how small beta (how long the leash) must be before the
    policy moves to the exploit, and the KL it has then travelled.
    """
    if not 0.0 < share < 1.0:
        raise ValueError(f"share must lie strictly between 0 and 1, got {share!r}")
    ref = normalize_reference(pi_ref)
    p = ref.pi_ref
    if p.ndim != 1:
        raise ValueError("takeover_beta takes one policy: pi_ref must be a flat list of K probabilities")
    r = _check_rewards(r, p.shape[0])
    if r.ndim != 1:
        raise ValueError("takeover_beta takes one reward per answer")
    log_p = _log(p)
    on_support = p > 0
    top = np.flatnonzero(on_support & (r == np.max(r[on_support])))

    def top_mass(log_beta: float) -> float:
        _, pi, _ = _log_policy(log_p, r, np.asarray(math.exp(log_beta)))
        return float(pi[top].sum())

    def kl_at(beta: float) -> float:
        log_pi, pi, _ = _log_policy(log_p, r, np.asarray(beta))
        return float(max(np.sum(_xlogy_diff(pi, log_pi, log_p)), 0.0))

    if p[top].sum() >= share:
        return Takeover(tuple(int(k) for k in top), share, math.inf, 0.0)
    lo, hi = math.log(1e-12), math.log(1e12)  # top_mass(lo) >= share > top_mass(hi), or no crossing in range
    if top_mass(lo) < share:
        return Takeover(tuple(int(k) for k in top), share, 0.0, kl_at(1e-12))
    for _ in range(100):  # bisection on log beta: 100 halvings of a 55-wide interval reach float precision
        mid = 0.5 * (lo + hi)
        if top_mass(mid) >= share:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-13:
            break
    beta = math.exp(lo)
    return Takeover(tuple(int(k) for k in top), share, beta, kl_at(beta))


# --------------------------------------------------------------------------------------------------------------
# the page's inputs: beta choices and answers typed as text

K_MIN, K_MAX = 2, 10  # answers on the page
REWARD_LIMIT = 1e6  # |r| allowed on the page (the math is exact far beyond; the readouts stay readable)


def beta_choices() -> tuple[float, ...]:
    """The page's beta steps: 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8 per decade, from 1e-3 to 1e3 (61 values).

    Round numbers, so that a link says beta=0.5 and the quick check (beta = 1 -> 0.5) lands exactly.
    """
    mantissas = np.array([1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0])
    values = (mantissas[None, :] * 10.0 ** np.arange(-3, 3)[:, None]).ravel()  # (60,)
    return (*(float(f"{v:.3g}") for v in values), BETA_MAX)


@dataclass(frozen=True)
class Answers:
    """The answers of the page's prompt: reference probabilities (as typed), proxy and true rewards, names."""

    pi_ref: tuple[float, ...]
    r: tuple[float, ...]
    r_true: tuple[float, ...]
    names: tuple[str, ...]

    @property
    def K(self) -> int:
        return len(self.r)

    @property
    def proxy_gap(self) -> bool:
        """The true reward differs from the proxy for some answer."""
        return self.r_true != self.r

    @classmethod
    def from_preset(cls, preset: LeashPreset) -> Answers:
        return cls(preset.pi_ref, preset.r, preset.r_true, preset.answers)

    @classmethod
    def default(cls, K: int) -> Answers:
        """A neutral set of K answers: uniform pi_ref, zero rewards, numbered names."""
        return cls((1.0 / K,) * K, (0.0,) * K, (0.0,) * K, default_names(K))

    def resized(self, K: int) -> Answers:
        """The same answers cut to K, or padded: new answers get the mean pi_ref and reward 0."""
        if not K_MIN <= K <= K_MAX:
            raise ValueError(f"K must be between {K_MIN} and {K_MAX}, got {K}")
        extra = max(K - self.K, 0)
        fill = float(np.mean(self.pi_ref))
        names = self.names[:K] + default_names(K)[self.K :]
        return Answers(
            self.pi_ref[:K] + (fill,) * extra,
            self.r[:K] + (0.0,) * extra,
            self.r_true[:K] + (0.0,) * extra,
            names,
        )


def default_names(K: int) -> tuple[str, ...]:
    """y1, y2, ...: the lesson's y for an answer, short enough for ten bars side by side."""
    return tuple(f"y{k + 1}" for k in range(K))


# --------------------------------------------------------------------------------------------------------------
# the theorem, checked by Monte Carlo on the device


@dataclass(frozen=True)
class PolicyCloud:
    """n random policies on the simplex (over the answers with pi_ref > 0) and where pi* stands among them."""

    kl: NDArray[np.float64]  # (n,) KL(pi || pi_ref), nats
    reward: NDArray[np.float64]  # (n,) E_pi[r]
    objective: NDArray[np.float64]  # (n,) E_pi[r] - beta · KL
    optimum: float  # beta · log Z = J(pi*)
    optimum_kl: float  # KL(pi* || pi_ref)
    optimum_reward: float  # E_pi*[r]
    best: NDArray[np.float64]  # (K,) the random policy with the highest objective
    best_objective: float
    n_better: int  # random policies whose objective exceeds J(pi*) beyond rounding: the theorem says 0
    tolerance: float  # the rounding allowance used for n_better
    device: str  # where the draws were made


def random_policies(
    pi_ref: ArrayLike,
    r: ArrayLike,
    beta: float,
    n: int = 20_000,
    seed: int = 0,
    device: torch.device | str | None = None,
) -> PolicyCloud:
    """Draw n random policies with torch on core's device and score them on J(pi) = E_pi[r] - beta · KL.

    The notebook exercise of section 10, made visual: none beats pi*, because J(pi) = beta · log Z - beta ·
    KL(pi || pi*). The draws mix three families so that the whole simplex is covered and also the region right
    next to pi* (where the near misses are): each policy is softmax(c + s · g) with g standard Gumbel noise, the
    centre c one of {uniform, log pi_ref, log pi*} and the spread s log-uniform in [0.01, 10] (small s: close to
    the centre; large s: near a corner). Answers with pi_ref = 0 get no mass (any mass there costs infinite KL).
    Draws are reproducible for a given seed on a given device. device: where to draw (default: core's device).
    Returns numpy arrays (copied back from the device) and pi*'s own numbers, computed in float64 by numpy.
    """
    import torch

    from core.device import as_tensor, default_dtype, get_device

    if not isinstance(n, int | np.integer) or n < 1:
        raise ValueError(f"n must be a positive whole number of policies, got {n!r}")
    ref = normalize_reference(pi_ref)
    p = ref.pi_ref
    if p.ndim != 1:
        raise ValueError("random_policies takes one policy: pi_ref must be a flat list of K probabilities")
    K = p.shape[0]
    r_np = _check_rewards(r, K)
    beta_f = float(_check_beta(beta).reshape(-1)[0])
    log_pi_star_np, pi_star, beta_log_Z = _log_policy(_log(p), r_np, np.asarray(beta_f))

    dev = torch.device(device) if device is not None else get_device()
    dtype = default_dtype(dev)
    sup = np.flatnonzero(p > 0)  # the answers pi_ref can produce; random policies live on them only
    log_p = as_tensor(np.log(p[sup]), dtype=dtype, device=dev)  # (K_s,)
    r_t = as_tensor(r_np[sup], dtype=dtype, device=dev)  # (K_s,)
    log_pi_star = as_tensor(log_pi_star_np[sup], dtype=dtype, device=dev)  # (K_s,)

    g = torch.Generator(device=dev).manual_seed(int(seed))
    # standard Gumbel noise: -log(-log U) with U ~ Uniform(0, 1), kept off 0 and 1
    tiny = torch.finfo(dtype).tiny
    u = torch.rand((n, sup.size), generator=g, device=dev, dtype=dtype).clamp_(tiny, 1.0 - torch.finfo(dtype).eps)
    gumbel = u.log_().neg_().log_().neg_()  # (n, K_s)
    spread = torch.empty((n, 1), device=dev, dtype=dtype).uniform_(math.log(0.01), math.log(10.0), generator=g)
    family = torch.randint(0, 3, (n,), generator=g, device=dev)  # (n,)
    centres = torch.stack([torch.zeros_like(log_p), log_p, log_pi_star])  # (3, K_s)
    logits = centres[family] + spread.exp_() * gumbel  # (n, K_s)
    log_pi = torch.log_softmax(logits, dim=-1)  # (n, K_s), finite
    pi = log_pi.exp()  # (n, K_s)

    # J(pi) = sum_y pi r - beta · sum_y pi (log pi - log pi_ref)
    kl = (pi * (log_pi - log_p)).sum(-1).clamp_min_(0.0)  # (n,)
    reward = pi @ r_t  # (n,)
    J = reward - beta_f * kl  # (n,)

    optimum = float(beta_log_Z)
    optimum_kl = float(np.sum(_xlogy_diff(pi_star, log_pi_star_np, _log(p))))
    eps = float(torch.finfo(dtype).eps)
    scale = 1.0 + abs(optimum) + float(np.max(np.abs(r_np))) + beta_f * float(np.max(np.abs(np.log(p[sup]))))
    tolerance = 1e3 * eps * scale
    i_best = int(torch.argmax(J))
    best = np.zeros(K)
    best[sup] = pi[i_best].cpu().numpy()
    return PolicyCloud(
        kl=kl.cpu().numpy().astype(np.float64),
        reward=reward.cpu().numpy().astype(np.float64),
        objective=J.cpu().numpy().astype(np.float64),
        optimum=optimum,
        optimum_kl=optimum_kl,
        optimum_reward=float(pi_star @ r_np),
        best=best,
        best_objective=float(J[i_best]),
        n_better=int((J > optimum + tolerance).sum()),
        tolerance=tolerance,
        device=str(dev),
    )


# --------------------------------------------------------------------------------------------------------------
# presets of the page


@dataclass(frozen=True)
class LeashPreset:
    """A starting point of the page: answers, their reference probabilities, proxy and true rewards, beta."""

    key: str
    label: str
    answers: tuple[str, ...]
    pi_ref: tuple[float, ...]
    r: tuple[float, ...]
    r_true: tuple[float, ...]
    beta: float


LEASH_PRESETS: dict[str, LeashPreset] = {
    p.key: p
    for p in (
        # section 2 of the lesson: two answers, pi_ref = (0.5, 0.5), rewards (1, 0); beta = 1 gives (0.731, 0.269)
        LeashPreset("toy", "Lesson's toy (two answers)", ("better", "worse"), (0.5, 0.5), (1.0, 0.0), (1.0, 0.0), 1.0),
        # one answer the reward model loves (proxy 2) that people dislike (true -1) and the SFT model almost never
        # writes (pi_ref = 0.001): pi* only moves there once beta < 1 / log(0.3 / 0.001) ≈ 0.18, at a KL near
        # log(1000) ≈ 6.9 nats; the true reward rises, then falls, as the KL grows
        LeashPreset(
            "reward_hack",
            "Reward hack (a high proxy reward on a rare answer)",
            ("helpful", "fine", "poor", "exploit"),
            (0.3, 0.4, 0.299, 0.001),
            (1.0, 0.5, 0.0, 2.0),
            (1.0, 0.5, 0.0, -1.0),
            0.5,
        ),
        LeashPreset(
            "k5",
            "Five answers",
            ("A", "B", "C", "D", "E"),
            (0.40, 0.25, 0.20, 0.10, 0.05),
            (0.2, 1.0, -0.5, 1.5, 0.8),
            (0.2, 1.0, -0.5, 1.5, 0.8),
            0.5,
        ),
    )
}
