"""Independent references for the calibration page, written without core.calibration: the seeded samples drawn again
with numpy's generator in the same order (input data), ECE by a plain loop over the predictions, sharpening with
scipy's expit and logit, temperatures fitted by scipy's minimize_scalar on a log-likelihood written here, the c^γ
closed form by numerical integration (scipy's quad), and the exact-match crossing by a root search (brentq)."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
from scipy import integrate, optimize, special, stats

N_TOY, TOY_SEED, HELD_OUT_SEED = 10_000, 0, 1
ALPHA, X0 = 0.5, 22.0


def toy_sample(seed: int = TOY_SEED, n: int = N_TOY) -> tuple[list[float], list[float]]:
    """The calibrated model's probabilities c ~ Beta(1, 1) and whether each option is right (probability c)."""
    rng = np.random.default_rng(seed)
    c = rng.beta(1.0, 1.0, size=n)
    right = (rng.random(n) < c).astype(float)
    return c.tolist(), right.tolist()


def loop_ece(conf: list[float], right: list[float], m: int, binning: str = "width") -> float:
    """ECE by a loop: equal width ((b-1)/M, b/M], 0 in the first bin; equal mass: sorted runs, the first n mod M one
    longer."""
    n = len(conf)
    bins = [0] * n
    if binning == "width":
        for i, c in enumerate(conf):
            b = math.ceil(c * m) - 1
            bins[i] = min(max(b, 0), m - 1)
    else:
        order = sorted(range(n), key=lambda i: conf[i])
        start = 0
        for b in range(m):
            size = n // m + (1 if b < n % m else 0)
            for j in order[start : start + size]:
                bins[j] = b
            start += size
    sums: dict[int, list[float]] = {}
    for c, a, b in zip(conf, right, bins, strict=True):
        s = sums.setdefault(b, [0.0, 0.0, 0.0])
        s[0] += 1
        s[1] += c
        s[2] += a
    return sum(k / n * abs(sa / k - sc / k) for k, sc, sa in sums.values())


def sharpened(conf: list[float], factor: float) -> list[float]:
    """sigmoid(factor · logit c)."""
    return special.expit(factor * special.logit(np.array(conf))).tolist()


def fit_binary_temperature(conf: list[float], right: list[float], kappa: float) -> float:
    """The T minimising the mean NLL of sigmoid(κ logit c / T) against the 0/1 labels."""
    z = kappa * special.logit(np.array(conf))
    y = np.array(right)

    def nll(log_t: float) -> float:
        s = z / math.exp(log_t)
        # -log sigmoid(s) = logaddexp(0, -s); -log(1 - sigmoid(s)) = logaddexp(0, s)
        return float(np.mean(y * np.logaddexp(0, -s) + (1 - y) * np.logaddexp(0, s)))

    res = optimize.minimize_scalar(nll, bounds=(math.log(0.05), math.log(20)), method="bounded",
                                   options={"xatol": 1e-10})  # fmt: skip
    return math.exp(res.x)


@lru_cache(maxsize=32)
def toy(kappa: float, m: int = 10, binning: str = "width") -> dict[str, float]:
    """The main figure's numbers at one κ: ECE before, after tuning, after temperature scaling; the fitted T."""
    c, a = toy_sample(TOY_SEED)
    hc, ha = toy_sample(HELD_OUT_SEED)
    t = fit_binary_temperature(hc, ha, kappa)
    tuned = sharpened(c, kappa)
    scaled = sharpened(c, kappa / t)
    return {
        "T": t,
        "before": loop_ece(c, a, m, binning),
        "tuned": loop_ece(tuned, a, m, binning),
        "scaled": loop_ece(scaled, a, m, binning),
        "right": float(np.mean([(x > 0.5) == (y == 1) for x, y in zip(c, a, strict=True)])),
    }


def expected_ece_power(gamma: float, a: float = 5.0, b: float = 2.0) -> float:
    """∫ |c − c^γ| beta(c; a, b) dc by quad (the gap never changes sign, so this is the expected ECE)."""
    pdf = stats.beta(a, b).pdf
    return integrate.quad(lambda c: abs(c - c**gamma) * pdf(c), 0, 1, limit=200)[0]


def power_sample(n: int, gamma: float, a: float = 5.0, b: float = 2.0, seed: int = 0) -> tuple[list, list]:
    rng = np.random.default_rng(seed)
    c = rng.beta(a, b, size=n)
    right = (rng.random(n) < c**gamma).astype(float)
    return c.tolist(), right.tolist()


def logit_sample(n: int, k: int, scale: float, t0: float, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """A 10-class model: true logits scale · N(0, I), labels by inverse CDF of softmax, the model reports T₀ z."""
    rng = np.random.default_rng(seed)
    z = scale * rng.standard_normal((n, k))
    p = special.softmax(z, axis=1)
    u = rng.random(n)
    y = np.array(
        [min(int(np.searchsorted(np.cumsum(row), x, side="left")), k - 1) for row, x in zip(p, u, strict=True)]
    )
    return t0 * z, y


def multiclass(t0: float, m: int = 10, binning: str = "width") -> dict[str, float]:
    """Temperature scaling of the 10-class model fitted on seed 1, tested on seed 2 (5,000 examples each)."""
    vz, vy = logit_sample(5000, 10, 2.0, t0, 1)
    tz, ty = logit_sample(5000, 10, 2.0, t0, 2)

    def nll(z: np.ndarray, y: np.ndarray, t: float) -> float:
        return float(-np.mean(special.log_softmax(z / t, axis=1)[np.arange(len(y)), y]))

    res = optimize.minimize_scalar(lambda lt: nll(vz, vy, math.exp(lt)), bounds=(math.log(0.05), math.log(20)),
                                   method="bounded", options={"xatol": 1e-10})  # fmt: skip
    t = math.exp(res.x)
    right = (np.argmax(tz, axis=1) == ty).astype(float).tolist()
    c0 = special.softmax(tz, axis=1).max(axis=1).tolist()
    c1 = special.softmax(tz / t, axis=1).max(axis=1).tolist()
    return {
        "T": t,
        "nll_before": nll(tz, ty, 1.0),
        "nll_after": nll(tz, ty, t),
        "ece_before": loop_ece(c0, right, m, binning),
        "ece_after": loop_ece(c1, right, m, binning),
        "accuracy": float(np.mean(right)),
    }


def crossing(tau: float, k: int, alpha: float = ALPHA, x0: float = X0) -> float:
    """The log10-compute where exp(−10^(−α (x − x0)))^k = τ, by brentq."""
    return optimize.brentq(lambda x: k * -(10 ** (-alpha * (x - x0))) - math.log(tau), x0 - 20, x0 + 20)
