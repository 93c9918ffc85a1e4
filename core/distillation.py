"""Distillation: forward vs reverse KL fitted to a two-mode teacher, the temperature on soft targets and its T²
factor, and a two-token toy of token-level, sequence-level and on-policy distillation.

The lesson context is seed 002, A6.10 (distillation) and A1.9 (forward vs reverse KL).

1. Forward vs reverse KL (a 1-D grid). The teacher p is a mixture of two Gaussians (distance d between the modes,
   weight w on the left one, a common width) sampled on a grid x_1..x_n and normalised to sum to 1, so every KL
   here is the discrete sum that ``scipy.stats.entropy`` computes. The student q comes from a family whose capacity
   is the number k of Gaussian components (k = 1: one Gaussian), built the same way::

       forward  KL(p || q) = sum_i p_i log(p_i / q_i)     weighted by the teacher: q must cover all of p
       reverse  KL(q || p) = sum_i q_i log(q_i / p_i)     weighted by the student: q may ignore a mode

   Forward fit, k = 1: minimising KL(p || q) over Gaussians is moment matching (an exponential family: the
   gradient of E_p[log q] vanishes where E_q[x] = E_p[x] and E_q[x²] = E_p[x²]), so the fit is the mixture's mean
   and variance, in closed form: mean = w m_1 + (1-w) m_2, variance = s² + w (1-w) d². This module takes the
   teacher's grid moments, which equal those up to the grid's error (exponentially small for a spacing well below
   s); the grid-normalised Gaussian's own grid moments match them to the same order. For k > 1, EM on the grid
   (the teacher's probabilities as sample weights), from a deterministic start at the teacher's quantiles: a local
   optimum, which for k >= the teacher's two modes recovers the teacher.
   Reverse fit: numerical minimisation, deterministic. For k = 1 the reverse KL is evaluated on a coarse table of
   (mean, log width) candidates in one vectorised pass over the grid, every local minimum of the table is refined
   with L-BFGS-B, and the best is returned; for k > 1 the starts are the forward fit and all components on each
   of the teacher's modes or spread over them. Which optimum is returned: the lowest reverse KL; ties within
   1e-9 nats (a symmetric teacher, whose two mode-seeking optima are mirror images) go to the smaller mean (the
   left mode). ``local_optima`` lists the distinct ones found; the search is coarse, not exhaustive (at d = 5 and
   w = 0.5 it finds only the middle optimum, not the two on the modes). With well-separated modes, the student sitting
   on mode j has reverse KL close to -log w_j, so the heavier mode wins when the weights differ.
   Mode-seeking vs mode-covering: for k = 1 and two equal modes of width s, the reverse fit sits between the modes
   while they are close (the mixture is unimodal for d <= 2s) and on one of them once they are far apart; the
   forward fit always sits in the middle with variance s² + d²/4, putting mass in the gap where p has almost none.

2. Temperature on soft targets (Hinton, Vinyals and Dean 2015, arXiv 1503.02531, §2 and §2.1). With teacher
   logits v, student logits z and N classes::

       p_T = softmax(v / T),   q_T = softmax(z / T)
       soft loss  L_T = T² · KL(p_T || q_T)         (= T² · [CE(p_T, q_T) - H(p_T)]; H(p_T) is constant in z)

   The gradient of the unscaled soft term (Hinton eq. 2):  d KL(p_T || q_T) / dz_i = (q_i - p_i) / T.
   For T large against the logits, e^{z/T} ≈ 1 + z/T, so q_i ≈ (1 + z_i/T) / (N + sum_j z_j/T), the same for p;
   with logits that sum to zero (softmax ignores a shift, so centring each vector loses nothing),
   q_i - p_i ≈ (z_i - v_i) / (N T) and

       d KL / dz_i ≈ (z_i - v_i) / (N T²)           (Hinton eq. 4)

   So the soft term's gradients shrink as 1/T²; the paper multiplies the soft loss by T² so that its weight
   against a hard-label term stays about the same when T changes. The scaled gradient is T (q - p), which tends
   to (z - v) / N: at high T, distillation becomes matching the centred logits with the loss
   sum_i (z_i - v_i)² / (2N) (the paper states the 1/2 (z_i - v_i)² form). The soft targets' entropy H(p_T) rises
   from the entropy of the argmax (T -> 0) to log N (T -> infinity).

3. Token-level, sequence-level and on-policy distillation on a toy (exact enumeration). A two-token sequence
   model over V tokens: the teacher is any joint p(y1, y2). The student is deliberately too small: it is
   factorised, q(y1) q(y2), and cannot make its second token depend on its first. Three ways to train it:

   token-level (word-level KD, Kim and Rush 2016, arXiv 1606.07947, §3.1): match the teacher's next-token
       distribution at each position on the data's prefixes (the toy takes the data to be the teacher, so on the
       teacher's prefixes): sum_t E_{y<t ~ p} CE(p(.|y<t), q_t). For the
       factorised student the optimum is the teacher's per-position marginals.
   sequence-level (Kim and Rush §3.2): train on the teacher's mode sequence ŷ = argmax p (beam search
       approximates it; here it is exact): maximise log q(ŷ). The optimum puts all its mass on ŷ.
   on-policy, whole-sequence reverse KL (MiniLLM's objective, Gu et al. 2024, arXiv 2306.08543): the student's
       own sequences scored by KL(q || p) over whole sequences, which by the chain rule is
       sum_t E_{y<t ~ q} KL(q(.|y<t) || p(.|y<t)); minimised exactly (numerically, from several starts; the best is
       returned), so the gradient through the student's sampling is included, as in MiniLLM's policy gradient. GKD
       (Agarwal et al. 2024, arXiv 2306.13649) scores the student's samples token by token without differentiating
       through the sampling: its fixed point differs (here q(y1) stays the teacher's marginal). The dict key stays
       "on-policy"; the page labels this student "whole-sequence reverse KL (MiniLLM's objective)".

   Each student is scored on the teacher's prefixes (what off-policy training sees) and on its own prefixes (what
   it meets when it generates): the expected per-token KL(p(.|y1) || q2). This is a toy: the factorised student
   stands in for "a student that cannot represent the teacher", a second token stands in for a continuation, and
   nothing is trained by gradient steps on samples; the objectives are minimised exactly. It shows which
   distribution each objective pulls the student toward, not how large the effects are in a real model.

Everything here is numpy (float64); scipy.optimize is imported lazily by the reverse fits. No torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array

Direction = Literal["forward", "reverse"]
GRID_LO, GRID_HI, GRID_N = (
    -25.0,
    25.0,
    1001,
)  # the default grid: spacing 0.05; holds d <= 12 with s <= 1, and the forward fit
TIE_NATS = 1e-9  # two reverse-KL optima closer than this are a tie (the left one is returned)
MAX_COMPONENTS = 4


# ---------------------------------------------------------------------------------------------------------------
# argument checks and log-space helpers


def _positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return float(value)


def _check_grid(x: ArrayLike) -> NDArray[np.float64]:
    g = as_float_array(x, "x")
    if g.ndim != 1 or g.size < 3:
        raise ValueError(f"the grid x must be a flat list of at least 3 points, got shape {g.shape}")
    if np.any(np.diff(g) <= 0):
        raise ValueError("the grid x must be strictly increasing")
    return g


def _check_probs(p: ArrayLike, name: str) -> NDArray[np.float64]:
    a = as_float_array(p, name)
    if a.ndim == 0 or a.shape[-1] == 0:
        raise ValueError(f"{name} must be a list of probabilities")
    if np.any(a < 0):
        raise ValueError(f"{name} must not be negative")
    total = a.sum(axis=-1)
    if np.any(np.abs(total - 1.0) > 1e-6):
        raise ValueError(f"{name} must sum to 1 along its last axis (got sums {np.round(total, 6)})")
    return a


def _logsumexp(a: NDArray[np.float64], axis: int = -1) -> NDArray[np.float64]:
    m = np.max(a, axis=axis, keepdims=True)
    return np.squeeze(m, axis=axis) + np.log(np.sum(np.exp(a - m), axis=axis))


def _log(p: NDArray[np.float64]) -> NDArray[np.float64]:
    with np.errstate(divide="ignore"):
        return np.log(p)


def _kl_from_logs(p: NDArray[np.float64], log_p: NDArray[np.float64], log_q: NDArray[np.float64]) -> NDArray:
    """sum_i p_i (log p_i - log q_i) along the last axis, with 0 · anything = 0 and inf where p > 0 = q."""
    with np.errstate(invalid="ignore"):
        terms = np.where(p > 0, p * (log_p - log_q), 0.0)
    return np.sum(terms, axis=-1)


# ---------------------------------------------------------------------------------------------------------------
# 1. forward vs reverse KL on a grid


def default_grid(lo: float = GRID_LO, hi: float = GRID_HI, n: int = GRID_N) -> NDArray[np.float64]:
    """The 1-D grid the fits live on: n equally spaced points from lo to hi."""
    if not (math.isfinite(lo) and math.isfinite(hi) and lo < hi):
        raise ValueError(f"need finite lo < hi, got {lo!r}, {hi!r}")
    if isinstance(n, bool) or not isinstance(n, int | np.integer) or n < 3:
        raise ValueError(f"the grid needs a whole number of at least 3 points, got {n!r}")
    return np.linspace(lo, hi, int(n))


def mixture_log_probs(
    x: ArrayLike, means: ArrayLike, stds: ArrayLike, weights: ArrayLike | None = None
) -> NDArray[np.float64]:
    """log q_i of a Gaussian mixture sampled on the grid and normalised to sum to 1 over it.

    means, stds, weights: (..., k) (weights default to equal; they are rescaled to sum to 1). Returns (..., n)::

        log f(x_i) = logsumexp_j [log w_j - log s_j - (x_i - m_j)² / (2 s_j²)]      (the 1/sqrt(2 pi) cancels)
        log q_i    = log f(x_i) - logsumexp_i log f(x_i)
    """
    g = _check_grid(x)
    m = np.atleast_1d(as_float_array(means, "means"))
    s = np.atleast_1d(as_float_array(stds, "stds"))
    if np.any(s <= 0):
        raise ValueError("every component's width (std) must be > 0")
    w = np.ones_like(m) if weights is None else np.atleast_1d(as_float_array(weights, "weights"))
    if np.any(w < 0) or np.any(w.sum(axis=-1) <= 0):
        raise ValueError("the mixture weights must be >= 0 with a positive sum")
    m, s, w = np.broadcast_arrays(m, s, w)
    return _mixture_log_probs(g, m, s, w / w.sum(axis=-1, keepdims=True))


def _mixture_log_probs(x: NDArray, m: NDArray, s: NDArray, w: NDArray) -> NDArray[np.float64]:
    """Unchecked mixture_log_probs: m, s, w (..., k) with w summing to 1; returns (..., n)."""
    z = (x[..., None, :] - m[..., :, None]) / s[..., :, None]  # (..., k, n)
    log_w = _log(w)[..., :, None]  # (..., k, 1)
    comp = log_w - np.log(s)[..., :, None] - 0.5 * z * z  # (..., k, n)
    log_f = comp[..., 0, :] if comp.shape[-2] == 1 else _logsumexp(comp, axis=-2)  # (..., n)
    return log_f - _logsumexp(log_f, axis=-1)[..., None]


def two_mode_teacher(x: ArrayLike, distance: float, weight: float = 0.5, std: float = 1.0) -> NDArray[np.float64]:
    """The teacher p on the grid: w N(-d/2, s²) + (1-w) N(d/2, s²), normalised over the grid.

    ``weight`` is the left mode's share, strictly between 0 and 1. The grid must hold both modes to 6 widths.
    """
    return np.exp(_teacher_log_probs(_check_grid(x), distance, weight, std))


def _teacher_log_probs(x: NDArray, distance: float, weight: float, std: float) -> NDArray[np.float64]:
    if isinstance(distance, bool) or not isinstance(distance, int | float | np.number) or not distance >= 0:
        raise ValueError(f"the distance between the modes must be a number >= 0, got {distance!r}")
    std = _positive("std", std)
    if isinstance(weight, bool) or not isinstance(weight, int | float | np.number) or not 0 < weight < 1:
        raise ValueError(f"the left mode's weight must lie strictly between 0 and 1, got {weight!r}")
    half = float(distance) / 2
    if -half - 6 * std < x[0] or half + 6 * std > x[-1]:
        raise ValueError(
            f"the grid [{x[0]:g}, {x[-1]:g}] does not hold both modes to 6 widths (need [{-half - 6 * std:g}, "
            f"{half + 6 * std:g}]): widen it or bring the modes closer"
        )
    if std < 4 * float(np.max(np.diff(x))):
        raise ValueError(f"the modes' width {std:g} must be at least 4 grid spacings: refine the grid")
    return _mixture_log_probs(x, np.array([-half, half]), np.array([std, std]), np.array([weight, 1 - weight]))


def kl_divergence(p: ArrayLike, q: ArrayLike) -> NDArray[np.float64] | float:
    """KL(p || q) = sum_i p_i log(p_i / q_i) in nats along the last axis (0 log 0 = 0; inf where p > 0 = q).

    Forward KL of a student q to a teacher p is kl_divergence(p, q); reverse KL is kl_divergence(q, p).
    """
    pa, qa = _check_probs(p, "p"), _check_probs(q, "q")
    if pa.shape[-1] != qa.shape[-1]:
        raise ValueError(f"p and q must have the same number of entries, got {pa.shape[-1]} and {qa.shape[-1]}")
    with np.errstate(divide="ignore"):
        kl = _kl_from_logs(pa, _log(pa), _log(qa))
    return float(kl) if np.ndim(kl) == 0 else kl


@dataclass(frozen=True)
class StudentFit:
    """A student fitted to the teacher on the grid in one KL direction."""

    direction: str  # "forward": argmin KL(p || q); "reverse": argmin KL(q || p)
    means: NDArray[np.float64]  # (k,) sorted
    stds: NDArray[np.float64]  # (k,)
    weights: NDArray[np.float64]  # (k,) sum to 1
    q: NDArray[np.float64]  # (n,) the student's probabilities on the grid
    forward_kl: float  # KL(p || q), nats
    reverse_kl: float  # KL(q || p), nats
    local_optima: tuple[tuple[float, float, float], ...] = ()  # reverse, k = 1: (mean, std, reverse KL), best first

    @property
    def mean(self) -> float:
        """The student's overall mean, sum_j w_j m_j."""
        return float(self.weights @ self.means)

    @property
    def variance(self) -> float:
        """The student's overall variance, sum_j w_j (s_j² + m_j²) - mean²."""
        return float(self.weights @ (self.stds**2 + self.means**2) - self.mean**2)


def _check_components(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= MAX_COMPONENTS:
        raise ValueError(f"the student's capacity must be a whole number of components from 1 to {MAX_COMPONENTS}")
    return int(k)


def _fit(direction: str, x, p, log_p, m, s, w, optima=()) -> StudentFit:
    order = np.argsort(m, kind="stable")
    m, s, w = m[order], s[order], w[order]
    log_q = _mixture_log_probs(x, m, s, w)
    q = np.exp(log_q)
    fwd = float(_kl_from_logs(p, log_p, log_q))
    rev = float(_kl_from_logs(q, log_q, log_p))
    return StudentFit(direction, m, s, w, q, max(fwd, 0.0), max(rev, 0.0), tuple(optima))


def _grid_moments(x: NDArray, p: NDArray) -> tuple[float, float]:
    mean = float(p @ x)
    return mean, float(p @ (x - mean) ** 2)


def forward_kl_fit(x: ArrayLike, p: ArrayLike, components: int = 1, iterations: int = 2000) -> StudentFit:
    """The student that minimises the forward KL(p || q) to the teacher p on the grid.

    k = 1: moment matching, closed form (mean and variance of p on the grid). k > 1: EM with the teacher's
    probabilities as sample weights, started at p's k-quantiles with width std(p)/k, until the parameters move
    less than 1e-12 (a local optimum of E_p[log f], the continuous density; the grid normalisation differs from
    it by the grid's error). Widths are kept at or above one grid spacing.
    """
    g = _check_grid(x)
    pa = _check_probs(p, "p")
    if pa.shape != g.shape:
        raise ValueError(f"p must have one probability per grid point ({g.size}), got shape {pa.shape}")
    k = _check_components(components)
    log_p = _log(pa)
    mean, var = _grid_moments(g, pa)
    if k == 1:
        # argmin_q KL(p || q) over Gaussians: E_q[x] = E_p[x], Var_q = Var_p
        return _fit("forward", g, pa, log_p, np.array([mean]), np.array([math.sqrt(var)]), np.array([1.0]))
    floor = float(np.min(np.diff(g)))
    cdf = np.cumsum(pa)
    m = g[np.minimum(np.searchsorted(cdf, (np.arange(k) + 0.5) / k), g.size - 1)].astype(np.float64)  # (k,)
    s = np.full(k, max(math.sqrt(var) / k, floor))
    w = np.full(k, 1.0 / k)
    for _ in range(iterations):
        # E step: responsibilities r_ji ∝ w_j N(x_i; m_j, s_j²); M step: weighted moments with weights p_i r_ji
        comp = _log(w)[:, None] - np.log(s)[:, None] - 0.5 * ((g[None, :] - m[:, None]) / s[:, None]) ** 2
        r = np.exp(comp - _logsumexp(comp, axis=0)[None, :]) * pa[None, :]  # (k, n)
        mass = r.sum(axis=1)  # (k,)
        keep = mass > 1e-300
        m_new = np.where(keep, (r @ g) / np.where(keep, mass, 1.0), m)
        v_new = np.where(keep, (r * (g[None, :] - m_new[:, None]) ** 2).sum(axis=1) / np.where(keep, mass, 1.0), s**2)
        s_new = np.maximum(np.sqrt(v_new), floor)
        w_new = np.maximum(mass, 0.0) / mass.sum()
        moved = max(np.max(np.abs(m_new - m)), np.max(np.abs(s_new - s)), np.max(np.abs(w_new - w)))
        m, s, w = m_new, s_new, w_new
        if moved < 1e-12:
            break
    return _fit("forward", g, pa, log_p, m, s, w)


def _unpack(theta: NDArray, k: int) -> tuple[NDArray, NDArray, NDArray]:
    m = theta[:k]
    s = np.exp(theta[k : 2 * k])
    logits = np.concatenate([theta[2 * k :], [0.0]])  # k - 1 free weight logits, the last fixed at 0
    w = np.exp(logits - logits.max())
    return m, s, w / w.sum()


def _pack(m: NDArray, s: NDArray, w: NDArray) -> NDArray:
    logits = _log(np.maximum(w, 1e-12))
    return np.concatenate([m, np.log(s), logits[:-1] - logits[-1]])


def _reverse_kl_of(x: NDArray, log_p: NDArray, m: NDArray, s: NDArray, w: NDArray) -> NDArray:
    """KL(q || p) for a batch of students: m, s, w (B, k) -> (B,)."""
    log_q = _mixture_log_probs(x, m, s, w)  # (B, n)
    return _kl_from_logs(np.exp(log_q), log_q, log_p)


def _grid_modes(p: NDArray) -> NDArray[np.int64]:
    """Indices of the local maxima of p on the grid (plateaus count once), largest first."""
    left = np.r_[-np.inf, p[:-1]]
    right = np.r_[p[1:], -np.inf]
    idx = np.flatnonzero((p > left) & (p >= right))
    return idx[np.argsort(-p[idx], kind="stable")]


def reverse_kl_fit(x: ArrayLike, p: ArrayLike, components: int = 1) -> StudentFit:
    """The student that minimises the reverse KL(q || p) to the teacher p on the grid (numerical, deterministic).

    k = 1: the reverse KL of 49 means x 20 log-spaced widths is computed in one vectorised pass, each local
    minimum of that table is refined with L-BFGS-B (means within the grid, widths from one grid spacing to the
    grid's length), and the lowest is returned (ties within 1e-9 nats: the smaller mean). ``local_optima`` keeps
    every distinct refined optimum, best first. k > 1: L-BFGS-B from the forward (EM) fit, from all components on
    each of p's modes, and from the components spread over the modes; the best is returned.
    """
    from scipy.optimize import minimize  # lazy: only the reverse fits need it

    g = _check_grid(x)
    pa = _check_probs(p, "p")
    if pa.shape != g.shape:
        raise ValueError(f"p must have one probability per grid point ({g.size}), got shape {pa.shape}")
    k = _check_components(components)
    log_p = _log(pa)
    if np.any(~np.isfinite(log_p)):
        raise ValueError("the teacher must be positive on the whole grid for a reverse fit (log p finite)")
    dx = float(np.min(np.diff(g)))
    span = float(g[-1] - g[0])
    bounds = [(float(g[0]), float(g[-1]))] * k + [(math.log(dx), math.log(span))] * k + [(-30.0, 30.0)] * (k - 1)

    def objective(theta: NDArray) -> float:
        m, s, w = _unpack(theta, k)
        return float(_reverse_kl_of(g, log_p, m[None], s[None], w[None])[0])

    starts: list[NDArray] = []
    if k == 1:
        means = np.linspace(g[0], g[-1], 49)
        widths = np.geomspace(2 * dx, span / 2, 20)
        mm, ss = np.meshgrid(means, widths, indexing="ij")  # (49, 20)
        table = _reverse_kl_of(g, log_p, mm.reshape(-1, 1), ss.reshape(-1, 1), np.ones((mm.size, 1)))
        table = table.reshape(mm.shape)
        padded = np.pad(table, 1, constant_values=np.inf)
        neighbours = np.stack(
            [
                padded[1 + a : 1 + a + table.shape[0], 1 + b : 1 + b + table.shape[1]]
                for a in (-1, 0, 1)
                for b in (-1, 0, 1)
                if (a, b) != (0, 0)
            ]
        )  # (8, 49, 20)
        ii, jj = np.nonzero(table <= neighbours.min(axis=0))
        starts = [np.array([mm[i, j], math.log(ss[i, j])]) for i, j in zip(ii, jj, strict=True)]
    else:
        fwd = forward_kl_fit(g, pa, k)
        starts.append(_pack(fwd.means, np.maximum(fwd.stds, dx), fwd.weights))
        modes = g[_grid_modes(pa)[:3]]
        _, var = _grid_moments(g, pa)
        width = max(math.sqrt(var) / 4, 2 * dx)
        offsets = (np.arange(k) - (k - 1) / 2) * 0.25 * width
        for mode in modes:
            starts.append(_pack(mode + offsets, np.full(k, width), np.full(k, 1.0 / k)))
        spread = modes[np.arange(k) % modes.size] + np.where(np.arange(k) >= modes.size, offsets, 0.0)
        starts.append(_pack(spread, np.full(k, width), np.full(k, 1.0 / k)))

    found: list[tuple[float, NDArray]] = []
    for theta0 in starts:
        theta0 = np.clip(theta0, [b[0] for b in bounds], [b[1] for b in bounds])
        res = minimize(objective, theta0, method="L-BFGS-B", bounds=bounds, options={"ftol": 1e-14, "gtol": 1e-10})
        found.append((float(res.fun), np.asarray(res.x, dtype=np.float64)))
    found.sort(key=lambda r: (r[0], float(np.min(r[1][:k]))))
    best_kl = found[0][0]
    ties = [r for r in found if r[0] - best_kl <= TIE_NATS]
    best = min(ties, key=lambda r: float(np.min(r[1][:k])))[1]
    optima: list[tuple[float, float, float]] = []
    if k == 1:
        for kl, theta in found:
            mean, std = float(theta[0]), float(math.exp(theta[1]))
            if all(abs(mean - o[0]) > 0.05 * std or abs(std - o[1]) > 0.05 * std for o in optima):
                optima.append((mean, std, kl))
    m, s, w = _unpack(best, k)
    return _fit("reverse", g, pa, log_p, m.copy(), s.copy(), w.copy(), optima)


@dataclass(frozen=True)
class KLFits:
    """The teacher and the student fitted in each direction, for one distance between the modes."""

    x: NDArray[np.float64]  # (n,) the grid
    p: NDArray[np.float64]  # (n,) the teacher
    distance: float
    weight: float
    std: float
    components: int
    forward: StudentFit  # argmin KL(p || q): mode-covering
    reverse: StudentFit  # argmin KL(q || p): mode-seeking


def kl_fits(
    distance: float, weight: float = 0.5, std: float = 1.0, components: int = 1, x: ArrayLike | None = None
) -> KLFits:
    """Fit the student (``components`` Gaussians) to the two-mode teacher by forward and by reverse KL."""
    g = default_grid() if x is None else _check_grid(x)
    p = np.exp(_teacher_log_probs(g, distance, weight, std))
    return KLFits(
        g,
        p,
        float(distance),
        float(weight),
        float(std),
        int(components),
        forward_kl_fit(g, p, components),
        reverse_kl_fit(g, p, components),
    )


@dataclass(frozen=True)
class KLSweep:
    """Both fits for each distance between the modes (S distances); k = 1 unless asked."""

    distance: NDArray[np.float64]  # (S,)
    forward_mean: NDArray[np.float64]  # (S,)
    forward_std: NDArray[np.float64]  # (S,) overall std of the forward fit
    reverse_mean: NDArray[np.float64]  # (S,)
    reverse_std: NDArray[np.float64]  # (S,)
    forward_fit_forward_kl: NDArray[np.float64]  # (S,) KL(p || q_fwd)
    forward_fit_reverse_kl: NDArray[np.float64]  # (S,) KL(q_fwd || p)
    reverse_fit_forward_kl: NDArray[np.float64]  # (S,) KL(p || q_rev)
    reverse_fit_reverse_kl: NDArray[np.float64]  # (S,) KL(q_rev || p)
    teacher_mass_near_forward_mean: NDArray[np.float64]  # (S,) p within one teacher width of the forward mean


def kl_sweep(
    distances: ArrayLike, weight: float = 0.5, std: float = 1.0, components: int = 1, x: ArrayLike | None = None
) -> KLSweep:
    """:func:`kl_fits` for each distance: how the reverse fit moves from the middle onto a mode as d grows."""
    d = np.atleast_1d(as_float_array(distances, "distances")).reshape(-1)
    if d.size == 0:
        raise ValueError("give at least one distance")
    fits = [kl_fits(float(di), weight, std, components, x) for di in d]
    near = np.array([float(f.p[np.abs(f.x - f.forward.mean) <= f.std].sum()) for f in fits])
    col = np.array
    return KLSweep(
        distance=d,
        forward_mean=col([f.forward.mean for f in fits]),
        forward_std=col([math.sqrt(f.forward.variance) for f in fits]),
        reverse_mean=col([f.reverse.mean for f in fits]),
        reverse_std=col([math.sqrt(f.reverse.variance) for f in fits]),
        forward_fit_forward_kl=col([f.forward.forward_kl for f in fits]),
        forward_fit_reverse_kl=col([f.forward.reverse_kl for f in fits]),
        reverse_fit_forward_kl=col([f.reverse.forward_kl for f in fits]),
        reverse_fit_reverse_kl=col([f.reverse.reverse_kl for f in fits]),
        teacher_mass_near_forward_mean=near,
    )


def mixture_moments(distance: float, weight: float = 0.5, std: float = 1.0) -> tuple[float, float]:
    """The two-mode teacher's mean and variance (continuous): (w m_1 + (1-w) m_2, s² + w (1-w) d²)."""
    d, s = float(distance), _positive("std", std)
    # modes at -d/2 and +d/2
    mean = weight * (-d / 2) + (1 - weight) * (d / 2)
    return mean, s * s + weight * (1 - weight) * d * d


# ---------------------------------------------------------------------------------------------------------------
# 2. temperature on soft targets


def _logits(z: ArrayLike, name: str) -> NDArray[np.float64]:
    a = as_float_array(z, name)
    if a.ndim == 0 or a.shape[-1] < 2:
        raise ValueError(f"{name} must hold at least 2 logits (one per class)")
    return a


def _temperature(T: ArrayLike) -> NDArray[np.float64]:
    t = as_float_array(T, "T")
    if np.any(t <= 0):
        raise ValueError(f"the temperature T must be > 0, got {T!r}")
    return t


def _log_softmax_t(z: NDArray, t: NDArray) -> NDArray[np.float64]:
    """log softmax(z / T): T's shape leads, z's last axis is the classes -> (T..., z..., N)."""
    scaled = z / t.reshape(t.shape + (1,) * z.ndim)
    return scaled - _logsumexp(scaled, axis=-1)[..., None]


def soft_targets(logits: ArrayLike, T: ArrayLike = 1.0) -> NDArray[np.float64]:
    """softmax(z / T) along the last axis (shifted by the max: no overflow). T's shape leads the result's."""
    return np.exp(_log_softmax_t(_logits(logits, "logits"), _temperature(T)))


def soft_target_entropy(logits: ArrayLike, T: ArrayLike) -> NDArray[np.float64] | float:
    """H(softmax(z / T)) in nats, for each T: from the argmax's entropy (T -> 0) up to log N (T -> inf)."""
    log_p = _log_softmax_t(_logits(logits, "logits"), _temperature(T))
    h = np.maximum(-np.sum(np.exp(log_p) * log_p, axis=-1), 0.0)
    return float(h) if np.ndim(h) == 0 else h


def soft_target_loss(student_logits: ArrayLike, teacher_logits: ArrayLike, T: ArrayLike) -> NDArray | float:
    """Hinton's soft loss with its factor: T² · KL(softmax(v / T) || softmax(z / T)), nats (z student, v teacher)."""
    z, v = _logits(student_logits, "student_logits"), _logits(teacher_logits, "teacher_logits")
    if z.shape[-1] != v.shape[-1]:
        raise ValueError("student and teacher logits need the same number of classes")
    t = _temperature(T)
    log_q, log_p = _log_softmax_t(z, t), _log_softmax_t(v, t)
    # L_T = T² · sum_i p_i (log p_i - log q_i)
    kl = np.maximum(np.sum(np.exp(log_p) * (log_p - log_q), axis=-1), 0.0)
    out = t.reshape(t.shape + (1,) * (kl.ndim - t.ndim)) ** 2 * kl
    return float(out) if np.ndim(out) == 0 else out


def soft_loss_gradient(
    student_logits: ArrayLike, teacher_logits: ArrayLike, T: ArrayLike, scaled: bool = True
) -> NDArray[np.float64]:
    """Gradient w.r.t. the student logits z of the soft loss.

    scaled=True: of T² · KL(p_T || q_T), which is T (q_T - p_T).  scaled=False: of KL(p_T || q_T) alone, which is
    (q_T - p_T) / T (Hinton eq. 2). T's shape leads the result's.
    """
    z, v = _logits(student_logits, "student_logits"), _logits(teacher_logits, "teacher_logits")
    if z.shape[-1] != v.shape[-1]:
        raise ValueError("student and teacher logits need the same number of classes")
    t = _temperature(T)
    q, p = np.exp(_log_softmax_t(z, t)), np.exp(_log_softmax_t(v, t))
    tt = t.reshape(t.shape + (1,) * (q.ndim - t.ndim))
    # d KL(p_T || softmax(z/T)) / dz = (q_T - p_T) / T; times T² gives T (q_T - p_T)
    return tt * (q - p) if scaled else (q - p) / tt


def high_temperature_gradient(student_logits: ArrayLike, teacher_logits: ArrayLike, T: ArrayLike) -> NDArray:
    """The high-T limit of the unscaled soft term's gradient, (z - v) / (N T²), for centred logits (Hinton eq. 4).

    Each logit vector is centred first (softmax ignores a shift, so the exact gradient is the same for centred
    and uncentred logits; the limit needs the centring). Multiply by T² for the scaled loss: (z - v) / N.
    """
    z, v = _logits(student_logits, "student_logits"), _logits(teacher_logits, "teacher_logits")
    t = _temperature(T)
    n = z.shape[-1]
    diff = (z - z.mean(axis=-1, keepdims=True)) - (v - v.mean(axis=-1, keepdims=True))
    tt = t.reshape(t.shape + (1,) * diff.ndim)
    return diff / (n * tt**2)


@dataclass(frozen=True)
class TemperatureSweep:
    """The soft targets and the soft loss for each temperature (S values of T, N classes)."""

    T: NDArray[np.float64]  # (S,)
    teacher_probs: NDArray[np.float64]  # (S, N) p_T
    student_probs: NDArray[np.float64]  # (S, N) q_T
    entropy: NDArray[np.float64]  # (S,) H(p_T), nats
    kl: NDArray[np.float64]  # (S,) KL(p_T || q_T)
    loss: NDArray[np.float64]  # (S,) T² · KL
    grad_norm: NDArray[np.float64]  # (S,) |d KL / dz|, falls like 1/T²
    scaled_grad_norm: NDArray[np.float64]  # (S,) |d (T² KL) / dz|, tends to |z - v|_centred / N
    limit_grad_norm: float  # |(z - v)_centred| / N, the scaled gradient's high-T limit


def temperature_sweep(student_logits: ArrayLike, teacher_logits: ArrayLike, T: ArrayLike) -> TemperatureSweep:
    """Soft targets, entropy, loss and gradient sizes for each temperature (one student and one teacher vector)."""
    z, v = _logits(student_logits, "student_logits"), _logits(teacher_logits, "teacher_logits")
    if z.ndim != 1 or v.ndim != 1 or z.shape != v.shape:
        raise ValueError("temperature_sweep takes one student and one teacher logit vector of the same length")
    t = np.sort(_temperature(T).reshape(-1))
    log_p, log_q = _log_softmax_t(v, t), _log_softmax_t(z, t)  # (S, N)
    p, q = np.exp(log_p), np.exp(log_q)
    kl = np.maximum(np.sum(p * (log_p - log_q), axis=-1), 0.0)
    grad = (q - p) / t[:, None]
    n = z.size
    centred = (z - z.mean()) - (v - v.mean())
    return TemperatureSweep(
        T=t,
        teacher_probs=p,
        student_probs=q,
        entropy=np.maximum(-np.sum(p * log_p, axis=-1), 0.0),
        kl=kl,
        loss=t**2 * kl,
        grad_norm=np.linalg.norm(grad, axis=-1),
        scaled_grad_norm=np.linalg.norm(t[:, None] ** 2 * grad, axis=-1),
        limit_grad_norm=float(np.linalg.norm(centred) / n),
    )


# ---------------------------------------------------------------------------------------------------------------
# 3. token-level, sequence-level and on-policy distillation on a two-token toy

# A teacher with two coherent answers ("A A" and "B B") and a little mass on the mixed ones; "A A" is the mode.
TOY_TEACHER: tuple[tuple[float, float], tuple[float, float]] = ((0.50, 0.05), (0.05, 0.40))


def _check_joint(joint: ArrayLike) -> NDArray[np.float64]:
    j = as_float_array(joint, "joint")
    if j.ndim != 2 or j.shape[0] != j.shape[1] or j.shape[0] < 2:
        raise ValueError(f"the teacher must be a V x V table p(y1, y2) with V >= 2, got shape {j.shape}")
    if np.any(j <= 0):
        raise ValueError("every sequence needs a positive teacher probability (the reverse KL needs log p finite)")
    if abs(j.sum() - 1.0) > 1e-6:
        raise ValueError(f"the teacher's table must sum to 1, got {j.sum():.6g}")
    return j / j.sum()


@dataclass(frozen=True)
class SequenceStudent:
    """A factorised student q(y1) q(y2) trained by one distillation objective, scored against the teacher."""

    method: str  # "token-level", "sequence-level", "on-policy"
    first: NDArray[np.float64]  # (V,) q(y1)
    second: NDArray[np.float64]  # (V,) q(y2), the same after every first token
    joint: NDArray[np.float64]  # (V, V) q(y1) q(y2)
    forward_kl: float  # KL(p || q) over whole sequences
    reverse_kl: float  # KL(q || p) over whole sequences
    mode_mass: float  # q(ŷ), the student's probability of the teacher's mode sequence
    coherent_mass: float  # q on the diagonal (y2 = y1): the toy's "consistent answers"
    kl_on_teacher_prefixes: float  # E_{y1 ~ p}[KL(p(.|y1) || q2)]: the step-2 error where off-policy training looks
    kl_on_own_prefixes: float  # E_{y1 ~ q}[KL(p(.|y1) || q2)]: the step-2 error where the student generates


def _expect(weights: NDArray, values: NDArray) -> float:
    """sum_i w_i v_i over the entries with w_i > 0 (an infinite KL after a prefix never taken does not count)."""
    on = weights > 0
    return float(weights[on] @ values[on])


def _score(method: str, p: NDArray, q1: NDArray, q2: NDArray) -> SequenceStudent:
    q = np.outer(q1, q2)
    log_p = np.log(p)
    fwd = float(_kl_from_logs(p.ravel(), log_p.ravel(), _log(q).ravel()))
    rev = float(_kl_from_logs(q.ravel(), _log(q).ravel(), log_p.ravel()))
    cond = p / p.sum(axis=1, keepdims=True)  # (V, V) p(y2 | y1)
    step2 = _kl_from_logs(cond, np.log(cond), _log(q2)[None, :])  # (V,) KL(p(.|y1) || q2) for each y1
    mode = np.unravel_index(int(np.argmax(p)), p.shape)
    return SequenceStudent(
        method,
        q1,
        q2,
        q,
        max(fwd, 0.0),
        max(rev, 0.0),
        float(q[mode]),
        float(np.trace(q)),
        _expect(p.sum(axis=1), step2),
        _expect(q1, step2),
    )


def sequence_distillation(joint: ArrayLike = TOY_TEACHER, smoothing: float = 0.0) -> dict[str, SequenceStudent]:
    """The three factorised students for a two-token teacher p(y1, y2) (V x V, every entry > 0).

    token-level: q_t = the teacher's marginal at position t (argmin of the per-token CE on teacher prefixes).
    sequence-level: all mass on the teacher's mode ŷ = argmax p (argmax of log q(ŷ)); ties: the first in
    row-major order. ``smoothing`` ε in [0, 1) keeps ε/V on every token at each position (label smoothing, a
    stand-in for a student not trained to the limit); with ε = 0 its forward KL is infinite, as it should be.
    on-policy: argmin over factorised q of the whole-sequence KL(q || p) = sum_t E_{y<t ~ q} KL(q_t || p(.|y<t))
    (MiniLLM's objective: the gradient through the student's sampling included, unlike GKD's), by L-BFGS-B on
    softmax parameters from a start next to each of the V²
    sequences and from the uniform student; the lowest KL is returned (ties: the first start).
    """
    from scipy.optimize import minimize  # lazy: only the on-policy student needs it

    p = _check_joint(joint)
    v = p.shape[0]
    out = {"token-level": _score("token-level", p, p.sum(axis=1), p.sum(axis=0))}
    a, b = np.unravel_index(int(np.argmax(p)), p.shape)
    if isinstance(smoothing, bool) or not isinstance(smoothing, int | float | np.number) or not 0 <= smoothing < 1:
        raise ValueError(f"smoothing must lie in [0, 1), got {smoothing!r}")
    eps = float(smoothing)
    # q_t = (1 - eps) one_hot(ŷ_t) + eps / V
    out["sequence-level"] = _score(
        "sequence-level", p, (1 - eps) * np.eye(v)[a] + eps / v, (1 - eps) * np.eye(v)[b] + eps / v
    )

    log_p = np.log(p)

    def rev(theta: NDArray) -> float:
        l1, l2 = theta[:v], theta[v:]
        lq1, lq2 = l1 - _logsumexp(l1), l2 - _logsumexp(l2)
        lq = lq1[:, None] + lq2[None, :]
        return float(np.sum(np.exp(lq) * (lq - log_p)))

    starts = [np.zeros(2 * v)]
    for i in range(v):
        for j in range(v):
            starts.append(np.concatenate([3.0 * np.eye(v)[i], 3.0 * np.eye(v)[j]]))
    results = [minimize(rev, s0, method="L-BFGS-B", options={"ftol": 1e-15, "gtol": 1e-10}) for s0 in starts]
    best = min(range(len(results)), key=lambda r: (round(float(results[r].fun), 9), r))
    theta = results[best].x
    q1 = np.exp(theta[:v] - _logsumexp(theta[:v]))
    q2 = np.exp(theta[v:] - _logsumexp(theta[v:]))
    out["on-policy"] = _score("on-policy", p, q1, q2)
    return out
