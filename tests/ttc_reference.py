"""Plain references for the test-time compute page, shared by its view tests and its number tables. Imports no
project module: best-of-n's KL by integrating the density of the best sample's reward quantile (scipy's quad), the
gold score's peak by a search over whole n, majority voting by enumerating the partitions of the wrong votes, and
the compute-split toy rewritten from its stated assumptions with Hoffmann et al. 2022's published fit."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import integrate


def success(p: float, n: float) -> float:
    """Best-of-n with a perfect verifier: 1 − P(all n samples wrong)."""
    return 1.0 - (1.0 - p) ** n


@functools.cache
def kl(n: int) -> float:
    """KL of best-of-n from the base policy for a continuous reward: the chosen sample's quantile u has density
    n u^(n-1) against the base's 1, so KL = ∫ n u^(n-1) log(n u^(n-1)) du, integrated numerically."""
    if n == 1:
        return 0.0
    value, _ = integrate.quad(lambda u: n * u ** (n - 1) * (math.log(n) + (n - 1) * math.log(u)), 0.0, 1.0,
                              limit=200, epsabs=1e-13)  # fmt: skip
    return value


def gold(n: int, alpha: float = 1.0, beta: float = 0.25) -> float:
    d = math.sqrt(kl(n))
    return d * (alpha - beta * d)


def peak_n(alpha: float = 1.0, beta: float = 0.25) -> int:
    """The whole n with the highest gold score: d(n) = √(log n − (n − 1)/n) rises with n and d (α − β d) has one
    peak in d, so the score is unimodal in n; a ternary search over whole n, then the best of the last few."""

    def g(n: int) -> float:
        d = math.sqrt(math.log(n) - (n - 1) / n)
        return d * (alpha - beta * d)

    lo, hi = 1, 10**12
    while hi - lo > 4:
        a, b = lo + (hi - lo) // 3, hi - (hi - lo) // 3
        if g(a) < g(b):
            lo = a
        else:
            hi = b
    return max(range(lo, hi + 1), key=lambda n: (g(n), -n))


def _partitions(w: int, most: int, parts: int):
    """The partitions of w into at most ``parts`` parts of at most ``most``, as tuples in decreasing order."""
    if w == 0:
        yield ()
        return
    if parts == 0:
        return
    for first in range(min(w, most), 0, -1):
        for rest in _partitions(w - first, first, parts - 1):
            yield (first, *rest)


def plurality(p: float, n: int, m: float) -> float:
    """P(the correct answer wins the plurality of n votes), wrong votes uniform over m answers, ties at random.

    Given c correct votes, the w = n − c wrong ones fall on the m wrong answers; every occupancy pattern is a
    partition λ of w, with probability m!/((m − ℓ)! Π mult!) · w!/Π λ_i! / m^w (which answers, then which votes)."""
    total = 0.0
    for c in range(n + 1):
        weight = math.comb(n, c) * p**c * (1 - p) ** (n - c)
        if weight == 0.0 or c == 0:
            continue
        w = n - c
        if math.isinf(m):
            win = 1.0 if c >= 2 or w == 0 else 1.0 / n  # every wrong vote alone: c = 1 ties with all of them
        else:
            m = int(m)
            win = 0.0
            for lam in _partitions(w, c, m):
                mults: dict[int, int] = {}
                for x in lam:
                    mults[x] = mults.get(x, 0) + 1
                log_prob = (
                    math.lgamma(m + 1) - math.lgamma(m - len(lam) + 1) - sum(math.lgamma(k + 1) for k in mults.values())
                    + math.lgamma(w + 1) - sum(math.lgamma(x + 1) for x in lam) - w * math.log(m)
                )  # fmt: skip
                win += math.exp(log_prob) / (1 + mults.get(c, 0))
        total += weight * win
    return total


# Hoffmann et al. 2022, approach 3: L = E + A / N^a + B / D^b
E, A, B, ALPHA, BETA = 1.69, 406.4, 410.7, 0.34, 0.28


def split(budget: float, queries: float, tokens: float) -> dict[str, float]:
    """The toy of A7.4 from its stated assumptions: shares f = 0.005..0.995 by 0.005, model sizes 10^7..10^13 on
    121 log-spaced points, f C = 6 N D, (1 − f) C = R k 2 N T, 41 problem thresholds over 2.1 ± 0.3, one sample's
    success sigmoid((h − L)/0.05), a problem solved with 1 − (1 − p)^k; the best (smallest) share and its model."""
    best = (-1.0, 0.0, 0.0, 0.0, 0.0, 0.0)
    h = np.linspace(1.8, 2.4, 41)
    for f in np.linspace(0.005, 0.995, 199):
        for N in np.logspace(7, 13, 121):
            D = f * budget / (6 * N)
            k = (1 - f) * budget / (2 * N * tokens * queries)
            if k < 1 or D < N:
                continue
            loss = E + A / N**ALPHA + B / D**BETA
            p = 1 / (1 + np.exp((loss - h) / 0.05))
            acc = float(np.mean(1 - (1 - np.minimum(p, 1 - 1e-16)) ** k))
            if acc > best[0]:
                best = (acc, float(f), float(N), float(D / N), float(k), float(np.mean(p)))
    acc, f, N, dn, k, p1 = best
    return {"accuracy": acc, "share": f, "params": N, "tokens_per_param": dn, "samples": k, "p_single": p1}
