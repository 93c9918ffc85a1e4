"""Plain references for the policy-gradient page, written without core/policy_gradient.py: the bandit's sums over
answers in plain Python, group estimators by enumerating every ordered group of answers, the 0/1 case on a two-answer
bandit enumerated the same way, and gradient ascent in plain loops. Shared by the view's tests and the number tables.
"""

from __future__ import annotations

import itertools
import math


def score(a: int, pi: tuple[float, ...]) -> list[float]:
    """∇_θ log π_a for a softmax: e_a − π."""
    return [(1.0 if k == a else 0.0) - pi[k] for k in range(len(pi))]


def objective(pi, r) -> float:
    return sum(p * x for p, x in zip(pi, r, strict=True))


def gradient(pi, r) -> list[float]:
    """∇J = Σ_a π_a r_a (e_a − π)."""
    K = len(pi)
    return [sum(pi[a] * r[a] * score(a, pi)[k] for a in range(K)) for k in range(K)]


def dot(u, v) -> float:
    return sum(x * y for x, y in zip(u, v, strict=True))


def best_baseline(pi, r) -> float:
    """b* = Σ π_a |s_a|² r_a / Σ π_a |s_a|², the minimiser of Σ π_a (r_a − b)² |s_a|²."""
    w = [pi[a] * dot(score(a, pi), score(a, pi)) for a in range(len(pi))]
    return sum(wa * ra for wa, ra in zip(w, r, strict=True)) / sum(w)


def single_variance(pi, r, b: float, G: int = 1) -> float:
    """tr Cov of the mean of G independent (r_a − b)(e_a − π): (Σ π_a (r_a − b)² |s_a|² − |∇J|²) / G."""
    g = gradient(pi, r)
    second = sum(pi[a] * (r[a] - b) ** 2 * dot(score(a, pi), score(a, pi)) for a in range(len(pi)))
    return (second - dot(g, g)) / G


def _advantages(rs: list[float], kind: str) -> list[float]:
    G = len(rs)
    mean = sum(rs) / G
    if kind == "group_mean":
        return [x - mean for x in rs]
    if kind == "leave_one_out":
        return [x - (sum(rs) - x) / (G - 1) for x in rs]
    sd = math.sqrt(sum((x - mean) ** 2 for x in rs) / G)  # population std, no eps
    return [0.0 if sd == 0 else (x - mean) / sd for x in rs]


def group_moments(pi, r, kind: str, G: int) -> tuple[list[float], float]:
    """(E[g], tr Cov[g]) of g = (1/G) Σ_i A_i (e_{a_i} − π), by every ordered group of G answers."""
    K = len(pi)
    outcomes = []
    for answers in itertools.product(range(K), repeat=G):
        p = math.prod(pi[a] for a in answers)
        A = _advantages([r[a] for a in answers], kind)
        g = [sum(A[i] * score(a, pi)[k] for i, a in enumerate(answers)) / G for k in range(K)]
        outcomes.append((p, g))
    mean = [sum(p * g[k] for p, g in outcomes) for k in range(K)]
    var = sum(p * sum((g[k] - mean[k]) ** 2 for k in range(K)) for p, g in outcomes)
    return mean, var


def projected_sd(pi, r, kind: str, G: int, b: float = 0.0) -> float:
    """The standard deviation of ⟨g, ∇J⟩ / |∇J|², the estimate projected on ∇J in its units, by every ordered group of
    G answers: ``kind`` a group baseline, or "single" for the mean of G independent (r_a − b)(e_a − π)."""
    K, g = len(pi), gradient(pi, r)
    gg = dot(g, g)
    first = second = 0.0
    for answers in itertools.product(range(K), repeat=G):
        p = math.prod(pi[a] for a in answers)
        rs = [r[a] for a in answers]
        A = [x - b for x in rs] if kind == "single" else _advantages(rs, kind)
        x = sum(A[i] * dot(score(a, pi), g) for i, a in enumerate(answers)) / G / gg
        first, second = first + p * x, second + p * x * x
    return math.sqrt(max(second - first * first, 0.0))


def on_gradient(pi, r, vec) -> float:
    """The projection of ``vec`` on ∇J in units of |∇J|: ⟨vec, ∇J⟩ / |∇J|²."""
    g = gradient(pi, r)
    return dot(vec, g) / dot(g, g)


def cosine(pi, r, vec) -> float:
    g = gradient(pi, r)
    return dot(vec, g) / math.sqrt(dot(vec, vec) * dot(g, g))


def binary_scale(p: float, G: int) -> float:
    """E[g] ÷ ∇J of the std-normalised estimate with 0/1 rewards at success rate p: a two-answer bandit π = (p, 1 − p)
    with rewards (1, 0), every ordered group enumerated, the first component over the true gradient's."""
    mean, _ = group_moments((p, 1 - p), (1.0, 0.0), "group_norm", G)
    return mean[0] / gradient((p, 1 - p), (1.0, 0.0))[0]


def softmax(theta: list[float]) -> tuple[float, ...]:
    m = max(theta)
    z = [math.exp(t - m) for t in theta]
    return tuple(x / sum(z) for x in z)


def ascent(pi0, r, kind: str, G: int, steps: int, lr: float) -> float:
    """J after ``steps`` exact expected steps θ ← θ + lr E[g] from θ = log π0: "true" (every unbiased estimator),
    "group_mean" ((G − 1)/G ∇J, from its enumeration) or "group_norm"."""
    theta = [math.log(p) for p in pi0]
    for _ in range(steps):
        pi = softmax(theta)
        step = gradient(pi, r) if kind == "true" else group_moments(pi, r, kind, G)[0]
        theta = [t + lr * s for t, s in zip(theta, step, strict=True)]
    return objective(softmax(theta), r)
