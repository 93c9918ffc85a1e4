"""Evaluation statistics: pass@k and pass^k estimators, their bias, and the two-model comparison.

The lesson's section 3.9 in code. For one problem we draw n samples and c of them are correct; p is the
(unknown) chance that one sample is correct.

- pass@k = 1 - (1 - p)^k, the chance that at least one of k samples is correct. Its unbiased estimator is
  1 - C(n-c, k) / C(n, k); the plug-in 1 - (1 - c/n)^k is biased low (Jensen, the function is concave).
- pass^k = p^k, the chance that all k samples are correct (reliability). Its unbiased estimator is
  C(c, k) / C(n, k); the plug-in (c/n)^k is biased high (the function is convex).
- An accuracy p_hat on N independent questions has standard error sqrt(p_hat (1 - p_hat) / N); two models are
  compared through the difference of their accuracies, independently or paired on the same questions.

Binomial coefficients overflow long before n = 100,000, so every ratio is computed as a sum of logarithms:

    C(n-c, k) / C(n, k) = prod_{i=0}^{k-1} (1 - c / (n - i)) = prod_{i=0}^{c-1} (1 - k / (n - i))

and log1p of each factor is exact to rounding. The numpy math needs no torch; only the simulation imports it.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from statistics import NormalDist
from typing import Any

import numpy as np

N_MAX = 100_000  # the largest n the page offers (the math itself has no such limit)
PROBLEMS_MAX = 10_000_000  # the largest simulation accepted (it runs in chunks, so memory stays small)
_REFINE_TERMS = 16  # in the general path, ratios with min(c, k) <= this are summed term by term


# ----------------------------------------------------------------------------------------------------------------
# argument checks
# ----------------------------------------------------------------------------------------------------------------


def _int_array(x: Any, name: str) -> np.ndarray:
    """``x`` as an int64 array; ValueError unless every entry is a finite whole number."""
    a = np.asarray(x)
    if a.dtype == bool or not (np.issubdtype(a.dtype, np.integer) or np.issubdtype(a.dtype, np.floating)):
        raise ValueError(f"{name} must be a whole number or an array of whole numbers, got {x!r}")
    if np.issubdtype(a.dtype, np.floating):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name} must be finite, got {x!r}")
        if not np.all(a == np.round(a)):
            raise ValueError(f"{name} must be a whole number, got {x!r}")
    return a.astype(np.int64)


def _counts(n: Any, c: Any, k: Any, *, k_le_n: bool = True) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Check n >= 1, 0 <= c <= n, 0 <= k (<= n when ``k_le_n``) and broadcast the three to one shape."""
    n, c, k = _int_array(n, "n"), _int_array(c, "c"), _int_array(k, "k")
    try:
        n, c, k = np.broadcast_arrays(n, c, k)
    except ValueError as err:
        raise ValueError(f"n, c and k have shapes {n.shape}, {c.shape}, {k.shape} that do not broadcast") from err
    if np.any(n < 1):
        raise ValueError(f"n (samples per problem) must be at least 1, got min {n.min()}")
    if np.any(c < 0) or np.any(c > n):
        raise ValueError("c (correct samples) must satisfy 0 <= c <= n")
    if np.any(k < 0):
        raise ValueError(f"k must be at least 0, got min {k.min()}")
    if k_le_n and np.any(k > n):
        raise ValueError("k must satisfy k <= n: the unbiased estimator needs at least k samples")
    return n, c, k


def _out(x: np.ndarray) -> float | np.ndarray:
    """A Python float for 0-d results, the array otherwise."""
    return float(x) if np.ndim(x) == 0 else x


# ----------------------------------------------------------------------------------------------------------------
# the log of C(n-m, k) / C(n, k): the chance that a random k-subset of n samples avoids m marked ones
# ----------------------------------------------------------------------------------------------------------------


def _log_avoid_cumulative(n: int, m: int, t_max: int) -> np.ndarray:
    """log C(n-m, t) / C(n, t) for t = 0..t_max at fixed n and m, as a cumulative sum of exact log1p terms.

    log C(n-m, t) / C(n, t) = sum_{i=0}^{t-1} log1p(-m / (n - i)),   and -inf once t > n - m.
    By the symmetry C(n-m, t)/C(n, t) = C(n-t, m)/C(n, m) the same routine runs along m at fixed t.
    """
    free = n - m  # subsets larger than this must contain a marked sample
    steps = min(t_max, free)
    i = np.arange(steps, dtype=np.float64)  # (steps,)
    terms = np.log1p(-m / (n - i))  # (steps,) all finite: n - i > m for i < n - m
    log_ratio = np.full(t_max + 1, -np.inf)  # (t_max + 1,)
    log_ratio[0] = 0.0
    log_ratio[1 : steps + 1] = np.cumsum(terms)
    return log_ratio


def _log_avoid(n: np.ndarray, m: np.ndarray, k: np.ndarray) -> np.ndarray:
    """log C(n-m, k) / C(n, k) for broadcast int arrays (0 <= m <= n, 0 <= k <= n); -inf where n - m < k."""
    if n.size == 0:
        return np.zeros(n.shape)
    if np.all(n == n.flat[0]) and np.all(m == m.flat[0]):  # one (n, m), any k: the curve along k
        table = _log_avoid_cumulative(int(n.flat[0]), int(m.flat[0]), int(k.max()))
        return table[k]
    if np.all(n == n.flat[0]) and np.all(k == k.flat[0]):  # one (n, k), any m: a table along m (symmetry)
        table = _log_avoid_cumulative(int(n.flat[0]), int(k.flat[0]), int(m.max()))
        return table[m]
    return _log_avoid_general(n, m, k)


def _log_avoid_general(n: np.ndarray, m: np.ndarray, k: np.ndarray) -> np.ndarray:
    """The general broadcast case: log-gamma differences, refined term by term where few terms suffice.

    log C(n-m, k)/C(n, k) = lgamma(n-m+1) - lgamma(n-m-k+1) - lgamma(n+1) + lgamma(n-k+1)

    Each lgamma is about n log n in size, so the difference carries an absolute error of a few 1e-10 at
    n = 100,000. That matters only when the ratio is close to 1, i.e. when min(m, k) is small; those entries are
    recomputed exactly as sums of at most ``_REFINE_TERMS`` log1p terms. Elsewhere |log ratio| >= min^2 / n, so
    the relative error stays below about 1e-7 at n = 100,000 (and far below at smaller n).
    """
    from scipy.special import gammaln  # lazy: only this path needs it

    out = np.full(n.shape, -np.inf)
    ok = n - m >= k  # elsewhere every k-subset meets a marked sample
    nn, mm, kk = (x[ok].astype(np.float64) for x in (n, m, k))
    out[ok] = gammaln(nn - mm + 1) - gammaln(nn - mm - kk + 1) - gammaln(nn + 1) + gammaln(nn - kk + 1)

    t = np.minimum(m, k)  # number of factors in the shorter product
    few = ok & (t <= _REFINE_TERMS)
    if np.any(few):
        nf = n[few].astype(np.float64)[:, None]  # (F, 1)
        tf = t[few][:, None]  # (F, 1)
        big = np.maximum(m, k)[few].astype(np.float64)[:, None]  # (F, 1)
        i = np.arange(int(tf.max()))[None, :]  # (1, T)
        # prod_{i<t} (1 - big / (n - i)); n - i > big for i < t because n >= m + k
        i_used = np.minimum(i, tf - 1)  # (F, T) padding repeats a valid index, then is masked out
        terms = np.where(i < tf, np.log1p(-big / (nf - i_used)), 0.0)  # (F, T)
        out[few] = terms.sum(axis=1)
    return out


# ----------------------------------------------------------------------------------------------------------------
# pass@k and pass^k
# ----------------------------------------------------------------------------------------------------------------


def pass_at_k(n: Any, c: Any, k: Any) -> float | np.ndarray:
    """Unbiased pass@k from n samples of which c are correct (Chen et al., 2021), for every k in one call.

        pass@k_hat = 1 - C(n-c, k) / C(n, k)

    It is the chance that a random k of the n samples contains a correct one; its mean over the draws of the
    samples is exactly 1 - (1-p)^k. Arguments broadcast (whole numbers; n >= 1, 0 <= c <= n, 0 <= k <= n).
    Equals c/n at k = 1, 0 when c = 0 or k = 0, and 1 as soon as k > n - c (so at k = n whenever c >= 1).
    No binomial is formed: a scalar (n, c) with an array of k costs one cumulative sum of n log1p terms.
    """
    n, c, k = _counts(n, c, k)
    log_none_correct = _log_avoid(n, c, k)  # log C(n-c, k)/C(n, k)
    return _out(0.0 - np.expm1(log_none_correct))  # 1 - ratio, accurate near ratio = 1; 0.0 - avoids -0.0


def pass_at_k_plugin(n: Any, c: Any, k: Any) -> float | np.ndarray:
    """The plug-in pass@k: put p_hat = c/n into 1 - (1-p)^k. Biased low (Jensen); shown for contrast.

        pass@k_plugin = 1 - (1 - c/n)^k

    Arguments broadcast (n >= 1, 0 <= c <= n, k >= 0; k may exceed n here, the formula is defined for any k).
    """
    n, c, k = _counts(n, c, k, k_le_n=False)
    p_hat = c / n
    with np.errstate(divide="ignore", invalid="ignore"):
        log_all_wrong = k * np.log1p(-p_hat)  # k log(1 - p_hat); -inf when p_hat = 1 (nan at k = 0, replaced)
    log_all_wrong = np.where(k == 0, 0.0, log_all_wrong)  # 0 * log 0 counts as 0: pass@0 = 0
    return _out(0.0 - np.expm1(log_all_wrong))


def pass_hat_k(n: Any, c: Any, k: Any) -> float | np.ndarray:
    """Unbiased pass^k (all k samples correct: the reliability measure), from n samples with c correct.

        pass^k_hat = C(c, k) / C(n, k)

    The chance that a random k of the n samples are all correct; its mean is exactly p^k. Arguments as for
    :func:`pass_at_k`. Equals c/n at k = 1, 1 when k = 0, and 0 as soon as k > c.
    """
    n, c, k = _counts(n, c, k)
    log_all_correct = _log_avoid(n, n - c, k)  # C(c, k)/C(n, k) = C(n-(n-c), k)/C(n, k): avoid the n-c wrong ones
    return _out(np.exp(log_all_correct))


def pass_hat_k_plugin(n: Any, c: Any, k: Any) -> float | np.ndarray:
    """The plug-in pass^k, (c/n)^k. Biased high (p^k is convex), so it overstates reliability.

        pass^k_plugin = (c/n)^k

    Arguments as for :func:`pass_at_k_plugin` (k may exceed n).
    """
    n, c, k = _counts(n, c, k, k_le_n=False)
    p_hat = c / n
    with np.errstate(divide="ignore", invalid="ignore"):
        log_all_correct = k * np.log(p_hat)  # -inf when c = 0 (nan at k = 0, replaced)
    log_all_correct = np.where(k == 0, 0.0, log_all_correct)
    return _out(np.exp(log_all_correct))


def pass_at_k_true(p: Any, k: Any) -> float | np.ndarray:
    """The quantity both estimators aim at, for a known per-sample success probability p.

    pass@k = 1 - (1 - p)^k
    """
    p, k = np.asarray(p, dtype=np.float64), np.asarray(k, dtype=np.float64)
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p must lie in [0, 1]")
    if np.any(~np.isfinite(k)) or np.any(k < 0):
        raise ValueError("k must be finite and at least 0")
    with np.errstate(divide="ignore", invalid="ignore"):
        log_all_wrong = np.where(k == 0, 0.0, k * np.log1p(-p))
    return _out(0.0 - np.expm1(log_all_wrong))


def display_k_grid(n: int, max_points: int = 1500, include: Any = ()) -> np.ndarray:
    """The k values to draw for a curve over 1 <= k <= n: all of them when n <= max_points, else log-spaced.

    Log spacing keeps the start of the curve (where it rises) sharp and thins the flat tail. The values in
    ``include`` (e.g. the chosen k) and both ends are always present. Returns sorted unique int64 values.
    """
    n = int(n)
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    if max_points < 2:
        raise ValueError("max_points must be at least 2")
    if n <= max_points:
        grid = np.arange(1, n + 1)
    else:
        grid = np.unique(np.round(np.geomspace(1, n, max_points)).astype(np.int64))
    extra = np.asarray(include, dtype=np.int64).ravel()
    extra = extra[(extra >= 1) & (extra <= n)]
    return np.unique(np.concatenate([grid, extra, [1, n]])).astype(np.int64)


@dataclass(frozen=True)
class PassAtKCurves:
    """All four estimators for one problem (n samples, c correct) over a grid of k, and exactly at the chosen k."""

    n: int
    c: int
    k: int
    ks: np.ndarray  # (K,) the k values of the curves: every k when n is small, else a log-spaced grid
    unbiased: np.ndarray  # (K,) 1 - C(n-c, k)/C(n, k)
    plugin: np.ndarray  # (K,) 1 - (1 - c/n)^k
    hat: np.ndarray  # (K,) C(c, k)/C(n, k)
    hat_plugin: np.ndarray  # (K,) (c/n)^k
    unbiased_at_k: float
    plugin_at_k: float
    hat_at_k: float
    hat_plugin_at_k: float

    @property
    def gap(self) -> float:
        """Unbiased minus plug-in pass@k at the chosen k (>= 0: the plug-in is too low)."""
        return self.unbiased_at_k - self.plugin_at_k

    @property
    def every_k(self) -> bool:
        """Do the curves hold every k = 1..n (rather than a display grid)?"""
        return int(self.ks.size) == self.n

    def columns(self) -> dict[str, np.ndarray | int]:
        """The curves as named columns (one row per k), e.g. for a CSV table."""
        return {
            "n": self.n,
            "c": self.c,
            "k": self.ks,
            "pass_at_k_unbiased": self.unbiased,
            "pass_at_k_plugin": self.plugin,
            "pass_hat_k_unbiased": self.hat,
            "pass_hat_k_plugin": self.hat_plugin,
        }


def pass_at_k_curves(n: int, c: int, k: int, *, max_points: int = 1500, every_k: bool = False) -> PassAtKCurves:
    """pass@k (unbiased and plug-in) and pass^k (unbiased and plug-in) for one (n, c), over k and at k.

    The curves run over :func:`display_k_grid` (every k when n <= ``max_points``, and always with the chosen k),
    or over every k = 1..n with ``every_k=True`` (for an exact table). The values at k are exact either way.
    """
    n, c, k = (int(x) for x in _counts(n, c, k))
    if k < 1:
        raise ValueError("k must be at least 1")
    ks = np.arange(1, n + 1) if every_k else display_k_grid(n, max_points, include=[k])  # (K,)
    return PassAtKCurves(
        n=n,
        c=c,
        k=k,
        ks=ks,
        unbiased=np.asarray(pass_at_k(n, c, ks)),
        plugin=np.asarray(pass_at_k_plugin(n, c, ks)),
        hat=np.asarray(pass_hat_k(n, c, ks)),
        hat_plugin=np.asarray(pass_hat_k_plugin(n, c, ks)),
        unbiased_at_k=float(pass_at_k(n, c, k)),
        plugin_at_k=float(pass_at_k_plugin(n, c, k)),
        hat_at_k=float(pass_hat_k(n, c, k)),
        hat_plugin_at_k=float(pass_hat_k_plugin(n, c, k)),
    )


# ----------------------------------------------------------------------------------------------------------------
# standard errors and "is model B better?"
# ----------------------------------------------------------------------------------------------------------------


def standard_error(p: Any, n: Any) -> float | np.ndarray:
    """Standard error of an accuracy p measured on n independent questions (a fraction, not points).

        SE = sqrt(p (1 - p) / n)

    70% on 1,000 questions gives 0.0145, i.e. 1.4 percentage points. Arguments broadcast.
    """
    p, n = np.asarray(p, dtype=np.float64), np.asarray(n, dtype=np.float64)
    if np.any(~np.isfinite(p)) or np.any((p < 0) | (p > 1)):
        raise ValueError("p (an accuracy) must lie in [0, 1]; give 72.5% as 0.725")
    if np.any(~np.isfinite(n)) or np.any(n <= 0):
        raise ValueError("n (number of questions) must be positive")
    return _out(np.sqrt(p * (1 - p) / n))


def z_critical(confidence: float = 0.95) -> float:
    """The two-sided normal quantile for a confidence level: 1.96 for 95%."""
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must lie strictly between 0 and 1, got {confidence}")
    return NormalDist().inv_cdf(0.5 + confidence / 2)


@dataclass(frozen=True)
class ModelComparison:
    """The difference B - A of two accuracies on the same N questions, with its interval and significance.

    All accuracies, differences and standard errors are fractions (multiply by 100 for points).
    """

    method: str  # "independent" or "paired"
    acc_a: float
    acc_b: float
    N: int
    se_a: float  # standard error of each accuracy alone
    se_b: float
    difference: float  # acc_b - acc_a (from the counts in the paired analysis)
    se: float  # standard error of the difference
    confidence: float
    z_crit: float  # 1.96 for 95%
    low: float  # difference -/+ z_crit * se
    high: float
    z: float  # difference / se
    p_value: float  # two-sided, normal approximation
    significant: bool  # the interval excludes 0
    only_a: int | None = None  # paired: questions only A got right
    only_b: int | None = None  # paired: questions only B got right

    @property
    def half_width(self) -> float:
        """z_crit * se: the "+-" of the interval."""
        return self.z_crit * self.se


def _finish(method: str, acc_a: float, acc_b: float, N: int, diff: float, se: float, confidence: float, **counts):
    z_crit = z_critical(confidence)
    if se > 0:
        z = diff / se
        p_value = math.erfc(abs(z) / math.sqrt(2))  # 2 * (1 - Phi(|z|))
    else:  # no spread at all: the difference is exact
        z = 0.0 if diff == 0 else math.copysign(math.inf, diff)
        p_value = 1.0 if diff == 0 else 0.0
    low, high = diff - z_crit * se, diff + z_crit * se
    return ModelComparison(
        method=method,
        acc_a=acc_a,
        acc_b=acc_b,
        N=N,
        se_a=float(standard_error(acc_a, N)),
        se_b=float(standard_error(acc_b, N)),
        difference=diff,
        se=se,
        confidence=confidence,
        z_crit=z_crit,
        low=low,
        high=high,
        z=z,
        p_value=p_value,
        significant=bool(low > 0 or high < 0),
        **counts,
    )


def compare_models(
    acc_a: float,
    acc_b: float,
    N: int,
    *,
    only_a: int | None = None,
    only_b: int | None = None,
    confidence: float = 0.95,
) -> ModelComparison:
    """Is model B better than model A? Accuracies (fractions) of both on the same N questions.

    Without counts, the two scores are treated as independent:

        SE_diff = sqrt(SE_A^2 + SE_B^2),   SE_X = sqrt(acc_X (1 - acc_X) / N)

    With ``only_a`` and ``only_b`` (questions that only A, resp. only B, got right) the analysis is paired
    (the McNemar setting): the questions both got right or both missed cancel, so question difficulty drops out,

        diff = (only_b - only_a) / N,   SE_diff = sqrt(only_a + only_b - (only_b - only_a)^2 / N) / N

    Either way the interval is diff +- z_crit * SE_diff and the result is significant when it excludes 0.
    Worked example D: 0.710 vs 0.725 on 1,000 questions gives +1.5 +- 3.9 points, not significant.
    """
    acc_a, acc_b, confidence = float(acc_a), float(acc_b), float(confidence)
    for name, acc in (("acc_a", acc_a), ("acc_b", acc_b)):
        if not (math.isfinite(acc) and 0 <= acc <= 1):
            raise ValueError(f"{name} must be an accuracy in [0, 1] (72.5% is 0.725), got {acc}")
    N = int(_int_array(N, "N"))
    if N < 1:
        raise ValueError(f"N (questions) must be at least 1, got {N}")
    if (only_a is None) != (only_b is None):
        raise ValueError("give both only_a and only_b for the paired analysis, or neither")

    if only_a is None:
        se_a, se_b = standard_error(acc_a, N), standard_error(acc_b, N)
        se = math.sqrt(se_a**2 + se_b**2)  # independent scores: variances add
        return _finish("independent", acc_a, acc_b, N, acc_b - acc_a, se, confidence)

    n10, n01 = int(_int_array(only_a, "only_a")), int(_int_array(only_b, "only_b"))
    if n10 < 0 or n01 < 0 or n10 + n01 > N:
        raise ValueError("only_a and only_b must be >= 0 and together at most N")
    if n10 > round(acc_a * N) + 1 or n01 > round(acc_b * N) + 1:
        raise ValueError("only_a cannot exceed A's correct answers, nor only_b B's")
    diff = (n01 - n10) / N  # the concordant questions cancel
    if abs(diff - (acc_b - acc_a)) > 1.5 / N:
        raise ValueError(
            f"the counts give B - A = {100 * diff:.2f} points but the accuracies give "
            f"{100 * (acc_b - acc_a):.2f}: only_b - only_a must equal B's correct minus A's correct"
        )
    se = math.sqrt(max(n10 + n01 - (n01 - n10) ** 2 / N, 0.0)) / N
    return _finish("paired", acc_a, acc_b, N, diff, se, confidence, only_a=n10, only_b=n01)


# ----------------------------------------------------------------------------------------------------------------
# bias, shown by simulation (torch, on core's device)
# ----------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class EstimatorSimulation:
    """Both pass@k estimators over many simulated problems with a known per-sample success probability p."""

    p: float
    n: int
    k: int
    problems: int
    truth: float  # 1 - (1-p)^k
    mean_unbiased: float
    se_unbiased: float  # standard error of that mean: std / sqrt(problems)
    mean_plugin: float
    se_plugin: float
    expected_plugin: float  # the plug-in's exact mean, a sum over the binomial distribution of c
    edges: np.ndarray  # (bins + 1,) shared histogram edges
    counts_unbiased: np.ndarray  # (bins,) problems per bin; values outside the edges land in the end bins
    counts_plugin: np.ndarray  # (bins,)
    device: str
    seconds: float

    @property
    def bias_unbiased(self) -> float:
        """Simulated mean minus the truth (zero up to noise)."""
        return self.mean_unbiased - self.truth

    @property
    def bias_plugin(self) -> float:
        """Simulated mean minus the truth (negative: the plug-in is too low)."""
        return self.mean_plugin - self.truth

    @property
    def bias_plugin_exact(self) -> float:
        """The plug-in's exact bias, E[plug-in] - truth, from the binomial sum (no sampling noise)."""
        return self.expected_plugin - self.truth

    def columns(self) -> dict[str, np.ndarray]:
        """The two histograms as named columns (one row per bin), e.g. for a CSV table."""
        return {
            "bin_low": self.edges[:-1],
            "bin_high": self.edges[1:],
            "problems_unbiased": self.counts_unbiased,
            "problems_plugin": self.counts_plugin,
        }


def _estimator_tables(n: int, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Both estimators for every possible c = 0..n at fixed n and k (a problem's estimate depends on c only)."""
    c = np.arange(n + 1)
    return np.asarray(pass_at_k(n, c, k)), np.asarray(pass_at_k_plugin(n, c, k))


def simulate_estimators(
    p: float,
    n: int,
    k: int,
    problems: int = 100_000,
    *,
    bins: int = 40,
    seed: int = 0,
    chunk: int = 1 << 18,
    progress: Callable[[float], None] | None = None,
    device: Any = None,
) -> EstimatorSimulation:
    """Draw ``problems`` problems of n samples each with success probability p and score both estimators.

        c ~ Binomial(n, p) per problem,   truth = 1 - (1-p)^k
        unbiased = 1 - C(n-c, k)/C(n, k)   (mean = truth),   plug-in = 1 - (1 - c/n)^k   (mean < truth)

    The binomial draws run in torch on core's device (or on ``device``), in chunks of ``chunk`` problems, and are
    tallied by c there; ``progress(fraction)`` is called after each chunk. Both estimators are exact tables over
    c = 0..n, so the means, standard errors (std / sqrt(problems)) and histograms are those of the per-problem
    estimates, computed from the tally. Reproducible for a given ``seed`` and device.
    """
    import torch

    from core.device import as_tensor, get_device

    p = float(p)
    if not (math.isfinite(p) and 0 <= p <= 1):
        raise ValueError(f"p must lie in [0, 1], got {p}")
    n, k = int(_int_array(n, "n")), int(_int_array(k, "k"))
    if n < 1 or not 1 <= k <= n:
        raise ValueError(f"need n >= 1 and 1 <= k <= n, got n={n}, k={k}")
    problems = int(_int_array(problems, "problems"))
    if not 1 <= problems <= PROBLEMS_MAX:
        raise ValueError(f"problems must lie in 1..{PROBLEMS_MAX:,}, got {problems}")
    if bins < 1 or chunk < 1:
        raise ValueError("bins and chunk must be positive")

    start = time.perf_counter()
    dev = torch.device(device) if device is not None else get_device()
    truth = float(pass_at_k_true(p, k))
    table_unbiased, table_plugin = _estimator_tables(n, k)  # (n+1,) each, exact

    # the plug-in's exact mean: sum_c Binomial(c; n, p) * plug-in(c), the pmf in log space
    c_all = torch.arange(n + 1, dtype=torch.float64)  # (n+1,) on the CPU: a small exact sum
    log_pmf = (
        math.lgamma(n + 1)
        - torch.lgamma(c_all + 1)
        - torch.lgamma(n - c_all + 1)
        + torch.xlogy(c_all, torch.tensor(p, dtype=torch.float64))
        + torch.xlogy(n - c_all, torch.tensor(1 - p, dtype=torch.float64))
    ).numpy()  # (n+1,)
    expected_plugin = float(np.exp(log_pmf) @ table_plugin)

    # shared histogram edges spanning both estimators over c within 6 standard deviations of n p
    sd = math.sqrt(n * p * (1 - p))
    c_lo, c_hi = max(0, math.floor(n * p - 6 * sd - 1)), min(n, math.ceil(n * p + 6 * sd + 1))
    seen = np.concatenate([table_unbiased[c_lo : c_hi + 1], table_plugin[c_lo : c_hi + 1]])
    lo, hi = float(seen.min()), float(seen.max())
    if hi - lo < 1e-9:
        lo, hi = lo - 0.01, hi + 0.01
    edges = np.linspace(lo, hi, bins + 1)

    dtype = torch.float32 if dev.type == "mps" else torch.float64
    draw = torch.device("cpu") if dev.type == "mps" else dev  # MPS: no float64, and no binomial before ~2.13
    gen = torch.Generator(device=draw).manual_seed(int(seed))
    tally = torch.zeros(n + 1, dtype=torch.int64, device=draw)  # (n+1,) problems with c = 0, 1, ..., n correct

    count = torch.tensor(float(n), dtype=torch.float64, device=draw)  # () samples per problem
    prob = torch.tensor(p, dtype=count.dtype, device=draw)  # () success probability of one sample
    one = torch.ones((), dtype=torch.int64, device=draw)
    done = 0
    while done < problems:
        size = min(chunk, problems - done)
        c = torch.binomial(count.expand(size), prob.expand(size), generator=gen).long()  # (size,) correct per problem
        tally.scatter_add_(0, c, one.expand(size))  # (n+1,) count the problems per value of c
        done += size
        if progress is not None:
            progress(done / problems)

    # A problem's two estimates depend on its c alone, so each estimator is evaluated once per possible c and
    # weighted by the tally: the same means, spreads and histograms as scoring every problem, at O(n) cost.
    tally = tally.to(dev)
    w = tally.to(dtype)  # (n+1,)
    inner = as_tensor(edges[1:-1], dtype=dtype, device=dev)  # (bins-1,) bucket boundaries
    stats = []
    for table in (table_unbiased, table_plugin):
        est = as_tensor(table, dtype=dtype, device=dev)  # (n+1,) the estimate for each c
        mean = (w @ est) / problems  # ()
        var = (w @ (est - mean) ** 2) / max(problems - 1, 1)  # () sample variance over problems
        hist = torch.zeros(bins, dtype=torch.int64, device=dev).scatter_add_(
            0, torch.bucketize(est, inner), tally
        )  # (bins,) values outside the edges fall into the end bins
        stats.append((float(mean), math.sqrt(float(var) / problems), hist.cpu().numpy()))
    (mean_u, se_u, counts_u), (mean_g, se_g, counts_g) = stats
    return EstimatorSimulation(
        p=p,
        n=n,
        k=k,
        problems=problems,
        truth=truth,
        mean_unbiased=mean_u,
        se_unbiased=se_u,
        mean_plugin=mean_g,
        se_plugin=se_g,
        expected_plugin=expected_plugin,
        edges=edges,
        counts_unbiased=counts_u,
        counts_plugin=counts_g,
        device=str(dev),
        seconds=time.perf_counter() - start,
    )


# ----------------------------------------------------------------------------------------------------------------
# where the plug-in's bias is largest
# ----------------------------------------------------------------------------------------------------------------

PLUGIN_BIAS_N_MAX = 5_000  # the exact bias builds an (n + 1) x n table


def plugin_bias_exact(n: int, p: float) -> np.ndarray:
    """E[plug-in pass@k] - pass@k for every k = 1..n (shape (n,), all <= 0), exactly, for a known p.

        bias(k) = (1 - p)^k - sum_c Binom(c; n, p) (1 - c/n)^k

    The binomial weights are computed in log space (lgamma), so n up to :data:`PLUGIN_BIAS_N_MAX` is exact to
    rounding.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= PLUGIN_BIAS_N_MAX:
        raise ValueError(f"n must be a whole number in 1..{PLUGIN_BIAS_N_MAX}, got {n!r}")
    if not (math.isfinite(p) and 0.0 <= p <= 1.0):
        raise ValueError(f"p must lie in [0, 1], got {p!r}")
    c = np.arange(n + 1)  # (n+1,)
    k = np.arange(1, n + 1)  # (n,)
    if p in (0.0, 1.0):  # c is certain: the plug-in is exact
        return np.zeros(n)
    log_choose = np.array([math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) for i in range(n + 1)])
    weights = np.exp(log_choose + c * math.log(p) + (n - c) * math.log1p(-p))  # (n+1,) Binom(c; n, p)
    miss = 1.0 - c / n  # (n+1,)
    with np.errstate(divide="ignore"):
        expected_miss = weights @ np.exp(np.outer(np.log(miss), k))  # (n,) E[(1 - c/n)^k]; log 0 = -inf -> 0
    return np.exp(k * math.log1p(-p)) - expected_miss


def plugin_bias_worst_k(n: int, p: float) -> int:
    """The k in 1..n at which the plug-in pass@k is furthest below the truth (the smallest k on ties)."""
    return int(np.argmin(plugin_bias_exact(n, p))) + 1


def plugin_bias_interior_threshold(n: int, tol: float = 1e-9) -> float:
    """The success probability p above which the plug-in's worst k lies strictly inside 1 < k < n.

    For p below it (rare successes) the bias grows all the way to k = n; above it, the worst k moves inwards and
    reaches k = 2 as p approaches 1. Found by bisection on p (the worst k falls as p grows); n >= 3.
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 3 <= n <= PLUGIN_BIAS_N_MAX:
        raise ValueError(f"n must be a whole number in 3..{PLUGIN_BIAS_N_MAX}, got {n!r}")
    lo, hi = 1e-6 / n, 1.0 - 1e-9  # rare successes: the worst k is n; near-certain ones: k = 2
    if plugin_bias_worst_k(n, lo) < n:
        return lo
    if plugin_bias_worst_k(n, hi) == n:
        return 1.0
    while hi - lo > tol:
        mid = 0.5 * (lo + hi)
        if plugin_bias_worst_k(n, mid) < n:
            hi = mid
        else:
            lo = mid
    return hi
