"""Independent references for the distillation page's numbers, never core/distillation.py: scipy's normal pdf for the
teacher and the students on the page's grid, ``scipy.stats.entropy`` for every KL, the mixture's closed-form moments
for the forward fit, ``scipy.optimize`` from several starts for the reverse fit, ``scipy.special.softmax`` for the
soft targets with the gradient (q_T − p_T) / T (Hinton et al. 2015, eq. 2; tests/test_core_distillation.py checks it
against torch autograd), and direct sums over the toy's four sequences (the whole-sequence reverse-KL student,
MiniLLM's objective, by a scan of its two free probabilities, then refined; GKD's fixed point in closed form)."""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import optimize, special, stats

GRID = np.linspace(-25.0, 25.0, 1001)  # the page's grid (core's default): spacing 0.05


def teacher(d: float, w: float = 0.5) -> np.ndarray:
    f = w * stats.norm.pdf(GRID, -d / 2, 1.0) + (1 - w) * stats.norm.pdf(GRID, d / 2, 1.0)
    return f / f.sum()


def gaussian(mean: float, sd: float) -> np.ndarray:
    q = stats.norm.pdf(GRID, mean, sd)
    return q / q.sum()


def forward_fit(d: float, w: float = 0.5) -> tuple[float, float]:
    """The mixture's mean and sd (moment matching, continuous closed form)."""
    return w * (-d / 2) + (1 - w) * (d / 2), math.sqrt(1 + w * (1 - w) * d * d)


@functools.cache
def reverse_fit(d: float, w: float = 0.5) -> tuple[float, float]:
    """argmin over (mean, sd) of KL(q || p) by Nelder-Mead from the middle and from each mode; ties go left."""
    p = teacher(d, w)

    def f(theta: np.ndarray) -> float:
        return float(stats.entropy(gaussian(theta[0], math.exp(theta[1])), p))

    starts = [(0.0, math.log(forward_fit(d, w)[1])), (-d / 2, 0.0), (d / 2, 0.0)]
    res = [optimize.minimize(f, s, method="Nelder-Mead", options={"xatol": 1e-7, "fatol": 1e-12, "maxiter": 4000})
           for s in starts]  # fmt: skip
    best = min(res, key=lambda r: (round(float(r.fun), 8), float(r.x[0])))
    return float(best.x[0]), float(math.exp(best.x[1]))


@functools.cache
def reverse_optima(d: float, w: float = 0.5) -> int:
    """How many distinct local minima of KL(q || p) Nelder-Mead reaches from the middle and from each mode."""
    p = teacher(d, w)

    def f(theta: np.ndarray) -> float:
        return float(stats.entropy(gaussian(theta[0], math.exp(theta[1])), p))

    starts = [(0.0, math.log(forward_fit(d, w)[1])), (-d / 2, 0.0), (d / 2, 0.0)]
    found: list[float] = []
    for s in starts:
        m = float(optimize.minimize(f, s, method="Nelder-Mead", options={"xatol": 1e-7, "fatol": 1e-12}).x[0])
        if all(abs(m - o) > 0.05 for o in found):
            found.append(m)
    return len(found)


def kls(q: np.ndarray, p: np.ndarray) -> tuple[float, float]:
    """(KL(p || q), KL(q || p))."""
    return float(stats.entropy(p, q)), float(stats.entropy(q, p))


def forward_kls(d: float, w: float = 0.5) -> tuple[float, float]:
    return kls(gaussian(*forward_fit(d, w)), teacher(d, w))


def reverse_kls(d: float, w: float = 0.5) -> tuple[float, float]:
    return kls(gaussian(*reverse_fit(d, w)), teacher(d, w))


# ---------------------------------------------------------------------------------------------------------------
# temperature

V = np.array([2.5, -0.5, -2.0, 0.7, 1.1])  # the page's teacher logits
Z = np.array([1.0, 0.2, -1.3, 2.1, 0.4])  # the page's student logits


def soft(z: np.ndarray, T: float) -> np.ndarray:
    return special.softmax(z / T)


def entropy(T: float) -> float:
    return float(stats.entropy(soft(V, T)))


def grad_norm(T: float, scaled: bool) -> float:
    g = (soft(Z, T) - soft(V, T)) / T
    return float(np.linalg.norm(T * T * g if scaled else g))


def limit_norm() -> float:
    return float(np.linalg.norm((Z - Z.mean()) - (V - V.mean())) / len(Z))


# ---------------------------------------------------------------------------------------------------------------
# the two-token toy

TEACHER = np.array([[0.50, 0.05], [0.05, 0.40]])  # p(y1, y2), rows y1 = A, B


def _score(q1: np.ndarray, q2: np.ndarray) -> dict[str, float]:
    q = np.outer(q1, q2)
    cond = TEACHER / TEACHER.sum(axis=1, keepdims=True)
    step2 = np.array([stats.entropy(cond[i], q2) for i in range(2)])
    return {
        "forward": float(stats.entropy(TEACHER.ravel(), q.ravel())),
        "reverse": float(stats.entropy(q.ravel(), TEACHER.ravel())),
        "mode": float(q[0, 0]),
        "coherent": float(q[0, 0] + q[1, 1]),
        "teacher_prefixes": float(TEACHER.sum(axis=1) @ step2),
        "own_prefixes": float(q1 @ step2),
    }


@functools.cache
def students(eps: float) -> dict[str, dict[str, float]]:
    token = _score(TEACHER.sum(axis=1), TEACHER.sum(axis=0))
    one = np.array([1 - eps + eps / 2, eps / 2])  # all on A (the mode A A), ε/V kept on each token
    seq = _score(one, one)

    def rev(ab: np.ndarray) -> float:
        a, b = np.clip(ab, 1e-12, 1 - 1e-12)
        q = np.outer([a, 1 - a], [b, 1 - b])
        return float(np.sum(q * np.log(q / TEACHER)))

    grid = np.linspace(0.005, 0.995, 199)
    a0, b0 = min(((a, b) for a in grid for b in grid), key=lambda ab: rev(np.array(ab)))
    r = optimize.minimize(rev, [a0, b0], method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14})
    a, b = r.x
    on = _score(np.array([a, 1 - a]), np.array([b, 1 - b]))
    return {"token-level": token, "sequence-level": seq, "on-policy": on}


def reverse_local_fit(d: float, w: float, start: float) -> tuple[float, float]:
    """The local minimum of KL(q || p) that Nelder-Mead reaches from a unit-width Gaussian at ``start``: (mean, KL)."""
    p = teacher(d, w)

    def f(theta: np.ndarray) -> float:
        return float(stats.entropy(gaussian(theta[0], math.exp(theta[1])), p))

    r = optimize.minimize(f, (start, 0.0), method="Nelder-Mead", options={"xatol": 1e-7, "fatol": 1e-12})
    return float(r.x[0]), float(r.fun)


def gkd_fixed_point() -> np.ndarray:
    """The factorised student where GKD's per-token reverse KL on the student's samples, differentiated without the
    sampling, stops: q(y1) the teacher's first-token marginal, q(y2) ∝ exp(E_{y1 ~ q1} log p(y2 | y1)); the joint."""
    q1 = TEACHER.sum(axis=1)
    cond = TEACHER / TEACHER.sum(axis=1, keepdims=True)
    q2 = special.softmax(q1 @ np.log(cond))
    return np.outer(q1, q2)
