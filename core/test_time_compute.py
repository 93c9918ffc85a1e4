"""Test-time compute: best-of-n with a verifier, its KL from the base policy, reward over-optimisation, majority
voting (self-consistency), and a toy split of a fixed budget between training and inference.

The lesson context is seed 002, A7.1-A7.4 (the third scaling axis, what reasoning models cost, training compute
against inference compute) and A11.3 (what test-time compute does to evaluation).

Best-of-n with a perfect verifier succeeds when any of the n samples is correct::

    P(success) = pass@n = 1 - (1 - p)^n        p: one sample's success rate (core/evaluation.py's pass_at_k_true;
                                               from n_total samples with c correct, core/evaluation.pass_at_k is
                                               the unbiased estimate)

Best-of-n against a reward model: draw n samples, keep the one the reward scores highest. Its KL from the base
policy is quoted as (Stiennon et al. 2020, arXiv 2009.01325; Gao et al. 2022, arXiv 2210.10760)::

    KL(pi_bon || pi) = log n - (n - 1) / n

which is exact only when the reward has a continuous distribution (no single output with positive probability:
the chosen sample's reward quantile is the maximum of n uniforms, density n u^(n-1), and E[log(n U^(n-1))] =
log n - (n-1)/n), and an upper bound for any distribution: Beirami et al. 2024 (arXiv 2401.01879, "Theoretical
guarantees on the best-of-n alignment policy") show it is not exact in general, ties or none (two equally likely
outputs with different rewards: the KL stays below log 2 = 0.693 while the formula grows without bound, 1.835 at
n = 16); it is close when every output is individually unlikely. :func:`best_of_n_distribution` and
:func:`best_of_n_kl` compute the exact best-of-n distribution and KL for a discrete distribution, ties included.

Over-optimisation (Gao et al. 2022, best-of-n form): with d = sqrt(KL), the gold reward model's score follows::

    R_gold(d) = d (alpha - beta d)          peak at d* = alpha / (2 beta), KL* = d*^2, R* = alpha^2 / (4 beta)

Their "gold" is a larger (6B) reward model that labelled the proxy's training data, not human raters; the
coefficients here are illustrative, not their fitted values. The proxy score keeps rising with n.

Majority voting (self-consistency, Wang et al. 2023, arXiv 2203.11171): sample n answers, return the most frequent.
A stated model of the errors: each sample is correct with probability p, else one of m distractors chosen
uniformly; the plurality wins, ties broken uniformly at random among the tied answers. With m equally likely wrong
answers the correct one wins the plurality as n grows once p > (1 - p)/m, i.e. p > 1/(m + 1), which can be well
under 1/2; with m = 1 (one wrong answer) it needs p > 1/2. One wrong answer more likely than the right one defeats
the vote however large n is.

The split of a fixed budget between training and inference (A7.4) is a toy model with stated assumptions and
illustrative constants; see :func:`compute_split`. Everything is numpy; torch is never imported.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.arrays import as_float_array
from core.evaluation import pass_at_k_true
from core.scaling import FLOPS_PER_PARAM_TOKEN, SERVING_FLOPS_PER_PARAM, chinchilla_loss

VOTE_N_MAX = 150  # the most samples majority_vote_accuracy sums over exactly (the factorials stay in float range)
VOTE_M_MAX = 1000  # the most distractors it takes as a number (math.inf stands for "every wrong answer distinct")

# Illustrative over-optimisation coefficients (not Gao et al.'s fits): the gold score peaks at d* = 2, KL* = 4 nats,
# n* = 147.4 (147 the best whole n) under the best-of-n KL formula.
GOLD_ALPHA = 1.0
GOLD_BETA = 0.25


# ---------------------------------------------------------------------------------------------------------------
# Argument checks
# ---------------------------------------------------------------------------------------------------------------


def _out(x: NDArray) -> float | NDArray:
    return float(x) if np.ndim(x) == 0 else x


def _probability(p: ArrayLike, name: str = "p") -> NDArray[np.float64]:
    a = as_float_array(p, name)
    if np.any((a < 0) | (a > 1)):
        raise ValueError(f"{name} must lie in [0, 1]")
    return a


def _count(n: ArrayLike, name: str, minimum: int = 1) -> NDArray[np.float64]:
    """Whole numbers >= minimum, kept as floats (n may be large)."""
    a = as_float_array(n, name)
    if np.any(a != np.round(a)) or np.any(a < minimum):
        raise ValueError(f"{name} must be a whole number >= {minimum}")
    return a


def _check_int(name: str, value: int, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}")
    return int(value)


def _check_positive(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float | np.number) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if value <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return float(value)


# ---------------------------------------------------------------------------------------------------------------
# Best-of-n
# ---------------------------------------------------------------------------------------------------------------


def best_of_n_success(p: ArrayLike, n: ArrayLike) -> float | NDArray:
    """Success of best-of-n with a perfect verifier: pass@n = 1 - (1 - p)^n (core/evaluation.pass_at_k_true)."""
    _count(n, "n")
    return pass_at_k_true(_probability(p), n)


def best_of_n_kl_formula(n: ArrayLike) -> float | NDArray:
    """log n - (n - 1)/n: an upper bound on the KL of best-of-n from the base policy for every reward distribution
    (Beirami et al. 2024), exact only for a continuous one (no output with positive probability). 0 at n = 1; grows
    like log n - 1."""
    a = _count(n, "n")
    # KL = log n - (n - 1)/n
    return _out(np.log(a) - (a - 1.0) / a)


def best_of_n_distribution(probs: ArrayLike, rewards: ArrayLike, n: int) -> NDArray[np.float64]:
    """The distribution of the best of n samples from ``probs`` ranked by ``rewards`` (the same shape, 1-D).

    With F(r) = P(reward <= r) and F-(r) = P(reward < r), the best sample's reward equals r with probability
    F(r)^n - F-(r)^n; among outputs with that same reward the choice follows probs (ties broken uniformly at random
    among the tied samples, or by sample order: the same distribution by exchangeability)::

        pi_n(y) = probs(y) / P(reward = r_y) * (F(r_y)^n - F-(r_y)^n)      (Beirami et al. 2024, the PMF they derive)
    """
    p = _probability(probs, "probs")
    r = as_float_array(rewards, "rewards")
    if p.ndim != 1 or p.shape != r.shape or p.size < 1:
        raise ValueError(f"probs and rewards must be flat and of the same length, got {p.shape} and {r.shape}")
    if not math.isclose(float(p.sum()), 1.0, rel_tol=0, abs_tol=1e-9):
        raise ValueError(f"probs must sum to 1, got {p.sum()!r}")
    n = _check_int("n", n, 1)
    p = p / p.sum()
    levels, inverse = np.unique(r, return_inverse=True)  # reward levels in increasing order
    mass = np.bincount(inverse, weights=p, minlength=levels.size)  # (L,) P(reward = level)
    F = np.minimum(np.cumsum(mass), 1.0)  # (L,) P(reward <= level)
    F_below = np.concatenate([[0.0], F[:-1]])  # (L,) P(reward < level)
    top = F**n - F_below**n  # (L,) P(best reward = level)
    with np.errstate(invalid="ignore", divide="ignore"):
        share = np.where(mass[inverse] > 0, p / mass[inverse], 0.0)
    return share * top[inverse]


def best_of_n_kl(probs: ArrayLike, rewards: ArrayLike, n: int) -> float:
    """KL(pi_n || pi) = sum_y pi_n(y) log(pi_n(y) / pi(y)) computed from :func:`best_of_n_distribution`."""
    p = _probability(probs, "probs")
    q = best_of_n_distribution(p, rewards, n)
    keep = q > 0
    # KL = sum_y pi_n(y) log(pi_n(y) / pi(y))
    return float(np.sum(q[keep] * (np.log(q[keep]) - np.log(p[keep]))))


# ---------------------------------------------------------------------------------------------------------------
# Over-optimisation (Gao et al. 2022, best-of-n form)
# ---------------------------------------------------------------------------------------------------------------


def gold_score(kl: ArrayLike, alpha: float = GOLD_ALPHA, beta: float = GOLD_BETA) -> float | NDArray:
    """The gold reward model's score against the KL spent: d (alpha - beta d), d = sqrt(KL) (Gao et al. 2022).

    Measured from the base policy's score (0 at KL = 0). Coefficients are illustrative by default.
    """
    k = as_float_array(kl, "kl")
    if np.any(k < 0):
        raise ValueError("kl must be >= 0")
    alpha = _check_positive("alpha", alpha)
    beta = _check_positive("beta", beta)
    d = np.sqrt(k)
    # R_gold = d (alpha - beta d)
    return _out(d * (alpha - beta * d))


def best_of_n_for_kl(kl: ArrayLike) -> float | NDArray:
    """The (real) n whose formula KL log n - (n-1)/n equals ``kl`` (>= 0): the inverse of the formula.

    The formula is increasing for n >= 1, from 0; solved by bisection on log n (n <= e^(KL + 1)).
    """
    k = as_float_array(kl, "kl")
    if np.any(k < 0):
        raise ValueError("kl must be >= 0")
    if np.any(k > 700):
        raise ValueError("kl must be at most 700 nats (n would overflow a float)")
    lo = np.zeros_like(k)
    hi = k + 1.0
    for _ in range(200):  # bisection on x = log n: log n - 1 + e^-x is increasing in x >= 0
        mid = 0.5 * (lo + hi)
        f = mid - 1.0 + np.exp(-mid)
        lo = np.where(f < k, mid, lo)
        hi = np.where(f < k, hi, mid)
    return _out(np.exp(0.5 * (lo + hi)))


@dataclass(frozen=True)
class OverOptimisationPeak:
    """Where the gold score of best-of-n peaks, for one (alpha, beta)."""

    alpha: float
    beta: float
    d: float  # d* = alpha / (2 beta)
    kl: float  # KL* = d*^2
    gold: float  # R* = alpha^2 / (4 beta)
    n: float  # the real n with log n - (n-1)/n = KL*
    n_best: int  # the whole n with the highest gold score (floor or ceil of n)


def over_optimisation_peak(alpha: float = GOLD_ALPHA, beta: float = GOLD_BETA) -> OverOptimisationPeak:
    """The peak of d (alpha - beta d): d* = alpha / (2 beta) (the derivative alpha - 2 beta d vanishes), its KL,
    score and the best-of-n size that reaches it under the KL formula."""
    alpha = _check_positive("alpha", alpha)
    beta = _check_positive("beta", beta)
    d = alpha / (2.0 * beta)
    kl = d * d
    n = float(best_of_n_for_kl(kl))
    candidates = [c for c in {max(1, math.floor(n)), max(1, math.ceil(n))}]
    n_best = max(candidates, key=lambda c: (float(gold_score(best_of_n_kl_formula(c), alpha, beta)), -c))
    return OverOptimisationPeak(alpha, beta, d, kl, alpha * alpha / (4.0 * beta), n, int(n_best))


@dataclass(frozen=True)
class OverOptimisationCurve:
    """Best-of-n against a proxy reward model: the KL spent and the gold score at each n."""

    n: NDArray[np.float64]
    kl: NDArray[np.float64]  # log n - (n-1)/n
    d: NDArray[np.float64]  # sqrt(KL)
    gold: NDArray[np.float64]  # d (alpha - beta d)
    peak: OverOptimisationPeak


def over_optimisation_curve(n: ArrayLike, alpha: float = GOLD_ALPHA, beta: float = GOLD_BETA) -> OverOptimisationCurve:
    """The gold score along best-of-n sizes ``n`` (whole numbers >= 1), with its peak."""
    a = _count(n, "n").ravel()
    kl = np.log(a) - (a - 1.0) / a
    d = np.sqrt(kl)
    return OverOptimisationCurve(
        n=a, kl=kl, d=d, gold=np.asarray(gold_score(kl, alpha, beta)).ravel(), peak=over_optimisation_peak(alpha, beta)
    )


# ---------------------------------------------------------------------------------------------------------------
# Majority voting (self-consistency)
# ---------------------------------------------------------------------------------------------------------------


def majority_vote_accuracy(p: ArrayLike, n: int, m: float) -> float | NDArray:
    """P(the plurality of n samples is the correct answer), each sample correct with probability p, else one of m
    distractors uniformly at random; ties broken uniformly at random among the tied answers.

    Given c correct samples, the w = n - c wrong ones fall uniformly on the m distractors. The correct answer wins
    with probability E[1{max_j D_j <= c} / (1 + J)], J the number of distractors with exactly c votes. By the
    exponential generating function of the m bins (each bin holds t < c votes, or exactly c, marked by u)::

        E[u^J 1{max <= c}] = w!/m^w [x^w] (e_{c-1}(x) + u x^c/c!)^m,   e_{c-1}(x) = sum_{t<c} x^t / t!

    and averaging 1/(1+J) picks sum_j C(m, j)/(j+1) (1/c!)^j [x^(w - j c)] e_{c-1}(x)^(m-j). Summed over c with
    Binomial(n, p) weights. ``m = math.inf`` means every wrong answer is distinct: the correct one wins with c >= 2,
    or with c = 1 in an n-way tie (1/n). m = 1 is the binary vote (an even split is a coin flip). Exact for
    n <= ``VOTE_N_MAX`` and m <= ``VOTE_M_MAX``; ``p`` may be an array.
    """
    pa = _probability(p)
    n = _check_int("n", n, 1)
    if n > VOTE_N_MAX:
        raise ValueError(f"n must be at most {VOTE_N_MAX} for the exact sum, got {n}")
    if isinstance(m, bool) or not isinstance(m, int | float | np.integer | np.floating) or math.isnan(m):
        raise ValueError(f"m must be a whole number >= 1 or math.inf, got {m!r}")
    if math.isinf(m):
        win = np.zeros(n + 1)  # (n+1,) P(win | c)
        win[2:] = 1.0
        win[1] = 1.0 / n
    else:
        if m != round(m) or m < 1 or m > VOTE_M_MAX:
            raise ValueError(f"m must be a whole number in 1..{VOTE_M_MAX} or math.inf, got {m!r}")
        win = _win_given_correct(n, int(m))
    c = np.arange(n + 1)
    log_comb = np.array([math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1) for k in c])
    pe = pa[..., None]
    with np.errstate(divide="ignore", invalid="ignore"):
        log_p = np.where(c > 0, c * np.log(np.where(pe > 0, pe, 1.0)), 0.0)
        log_p = np.where((c > 0) & (pe == 0), -np.inf, log_p)
        log_q = np.where(c < n, (n - c) * np.log1p(-np.where(pe < 1, pe, 0.0)), 0.0)
        log_q = np.where((c < n) & (pe == 1), -np.inf, log_q)
    pmf = np.exp(log_comb + log_p + log_q)  # (..., n+1) Binomial(n, p)
    return _out(np.clip((pmf * win).sum(axis=-1), 0.0, 1.0))


def _truncated_power(e: NDArray[np.float64], k: int, degree: int) -> NDArray[np.float64]:
    """The coefficients of e(y)^k up to ``degree``, by repeated squaring (truncated after every product)."""
    out = np.zeros(degree + 1)
    out[0] = 1.0
    base = e[: degree + 1]
    while k:
        if k & 1:
            out = np.convolve(out, base)[: degree + 1]
        k >>= 1
        if k:
            base = np.convolve(base, base)[: degree + 1]
    return out


def _win_given_correct(n: int, m: int) -> NDArray[np.float64]:
    """P(correct wins | c correct of n) for c = 0..n, m distractors (see :func:`majority_vote_accuracy`).

    The polynomials are taken in y = x / s with s = w / (e sqrt(m)): every term of [x^w] is scaled by the same s^w,
    which keeps the coefficients between about m^(-w/2) and m^(w/2) (float range for n <= 150, m <= 1000).
    """
    win = np.zeros(n + 1)
    log_fact = np.concatenate([[0.0], np.cumsum(np.log(np.arange(1, n + 1, dtype=np.float64)))])  # (n+1,) log t!
    for c in range(1, n + 1):
        w = n - c
        if w == 0:
            win[c] = 1.0
            continue
        log_s = math.log(w) - 1.0 - 0.5 * math.log(m)
        t = np.arange(c)
        e = np.exp(t * log_s - log_fact[:c])  # e_{c-1}(s y): the coefficients s^t / t! for t < c
        j_max = min(m, w // c)
        # powers[k] = coefficients of e_{c-1}(s y)^k up to degree w, for k = m - j_max..m (the ones the sum uses):
        # the first by repeated squaring, then one factor at a time
        powers = {m - j_max: _truncated_power(e, m - j_max, w)}
        for k in range(m - j_max + 1, m + 1):
            powers[k] = np.convolve(powers[k - 1], e)[: w + 1]
        total = 0.0
        log_scale = log_fact[w] - w * math.log(m) - w * log_s  # log(w! / m^w), and the s^w the scaling added
        for j in range(j_max + 1):  # j distractors tied with the correct answer at c votes
            coef = powers[m - j][w - j * c]
            if coef <= 0.0:
                continue
            # C(m, j) / (j + 1) * (s^c / c!)^j * [y^(w - jc)] e_{c-1}(s y)^(m-j) * w!/m^w / s^w
            log_term = (
                math.lgamma(m + 1) - math.lgamma(j + 1) - math.lgamma(m - j + 1) - math.log(j + 1)
                + j * (c * log_s - log_fact[c]) + math.log(coef) + log_scale
            )  # fmt: skip
            total += math.exp(log_term)
        win[c] = min(total, 1.0)
    return win


# ---------------------------------------------------------------------------------------------------------------
# Training compute against inference compute (A7.4): a toy model
# ---------------------------------------------------------------------------------------------------------------

# Toy map from the Chinchilla loss to one sample's success rate on a problem (illustrative, not fitted to anything):
# p = sigmoid((h - L) / LOSS_WIDTH), with the problems' thresholds h spread evenly over LOSS_MID +- LOSS_SPREAD.
LOSS_MID = 2.1
LOSS_WIDTH = 0.05
LOSS_SPREAD = 0.3
_DIFFICULTY_LEVELS = 41


@dataclass(frozen=True)
class ComputeSplit:
    """A fixed budget split between training and inference: at each training share f (arrays (F,)), the model size
    on the grid that gives the best accuracy, and what it buys."""

    budget: float  # total FLOPs C
    queries: float  # R, queries served over the model's life
    tokens_per_sample: float  # T, tokens one sampled answer costs
    share: NDArray[np.float64]  # f, the fraction of C spent on training
    params: NDArray[np.float64]  # N, the best model size at that share (NaN where nothing can serve)
    tokens_per_param: NDArray[np.float64]  # D / N of that model (20 is the Chinchilla rule; above it: overtrained)
    samples: NDArray[np.float64]  # k, samples per query the inference share buys that model (real-valued)
    p_single: NDArray[np.float64]  # one sample's success rate, averaged over the problems
    accuracy: NDArray[np.float64]  # the fraction of problems solved with k samples and a perfect verifier
    best_share: float  # the f with the highest accuracy (the smallest such f on a saturated plateau)


def compute_split(
    budget: float,
    queries: float,
    tokens_per_sample: float = 1000.0,
    shares: ArrayLike | None = None,
    *,
    loss_mid: float = LOSS_MID,
    loss_width: float = LOSS_WIDTH,
    loss_spread: float = LOSS_SPREAD,
    fit: str = "hoffmann2022",
) -> ComputeSplit:
    """A toy model of A7.4: a budget C = C_train + C_inference, trained once and served on R queries.

    Stated assumptions (a model with illustrative constants, not a result from a paper)::

        C_train = f C = 6 N D                         the lesson's 6ND (any N, D: overtraining allowed)
        C_inference = (1 - f) C = R k 2 N T           2N FLOPs per token of a forward pass, k samples of T tokens
        L = E + A / N^alpha + B / D^beta              the Hoffmann et al. 2022 loss fit (core/scaling.py)
        p_h = sigmoid((h - L) / loss_width)           toy: one sample's success rate on a problem of threshold h,
                                                      h spread evenly over loss_mid +- loss_spread (a lower
                                                      loss_mid is a harder task)
        accuracy = mean_h 1 - (1 - p_h)^k             repeated sampling with a perfect verifier (pass@k per problem)

    At each share f the model size N is the best of a log grid (1e7..1e13, with D >= N); k is real-valued, and a
    share that leaves no model with at least one sample per query gets NaN. The spread of difficulties is what
    keeps accuracy from reaching 1 at once: hard problems need a better model, not more samples. In this toy a
    larger R favours smaller, longer-trained models (D/N above 20), the direction Roberts et al. 2026 (arXiv
    2604.01411, "Test-time scaling makes overtraining compute-optimal") report for their fitted version; the
    numbers are not theirs. With a majority vote or a reward model instead of a verifier, the inference side
    would saturate sooner.
    """
    C = _check_positive("budget", budget)
    R = _check_positive("queries", queries)
    T = _check_positive("tokens_per_sample", tokens_per_sample)
    loss_mid = _check_positive("loss_mid", loss_mid)
    loss_width = _check_positive("loss_width", loss_width)
    if isinstance(loss_spread, bool) or not math.isfinite(loss_spread) or loss_spread < 0:
        raise ValueError(f"loss_spread must be a finite number >= 0, got {loss_spread!r}")
    f = np.linspace(0.005, 0.995, 199) if shares is None else as_float_array(shares, "shares").ravel()
    if f.size < 1 or np.any((f <= 0) | (f >= 1)):
        raise ValueError("shares must lie strictly between 0 and 1")
    N = np.logspace(7.0, 13.0, 121)[None, :]  # (1, M) model sizes
    fc = f[:, None]  # (F, 1)
    # f C = 6 N D  ->  D = f C / (6 N)
    D = fc * C / (FLOPS_PER_PARAM_TOKEN * N)  # (F, M)
    L = np.asarray(chinchilla_loss(N, D, fit), dtype=np.float64)  # (F, M)
    h = loss_mid + np.linspace(-loss_spread, loss_spread, _DIFFICULTY_LEVELS)  # (H,) problem thresholds
    # p_h = sigmoid((h - L) / width)
    p = 1.0 / (1.0 + np.exp((L[..., None] - h) / loss_width))  # (F, M, H)
    # (1 - f) C = R k 2 N T  ->  k = (1 - f) C / (2 N T R)
    k = (1.0 - fc) * C / (SERVING_FLOPS_PER_PARAM * N * T * R)  # (F, M)
    solved = -np.expm1(k[..., None] * np.log1p(-np.minimum(p, 1.0 - 1e-16)))  # (F, M, H) 1 - (1 - p)^k
    acc = np.where((k >= 1.0) & (D >= N), solved.mean(axis=-1), -1.0)  # (F, M); -1 marks what cannot serve
    j = acc.argmax(axis=1)  # (F,) best model size at each share
    rows = np.arange(f.size)
    ok = acc[rows, j] >= 0
    pick = lambda a: np.where(ok, a[rows, j], np.nan)  # noqa: E731
    accuracy = pick(acc)
    best = float(f[np.nanargmax(accuracy)]) if np.any(ok) else float("nan")
    Nb = np.broadcast_to(N, acc.shape)
    return ComputeSplit(
        budget=C,
        queries=R,
        tokens_per_sample=T,
        share=f,
        params=pick(Nb),
        tokens_per_param=pick(D / N),
        samples=pick(k),
        p_single=pick(p.mean(axis=-1)),
        accuracy=accuracy,
        best_share=best,
    )
