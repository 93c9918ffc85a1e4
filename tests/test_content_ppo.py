"""The PPO page's interview texts: each carries its source, and the numbers they quote hold (torch autograd of the
clipped objective, plain-python GAE limits, k1's sign on one sample)."""

import math

import numpy as np
import pytest
import torch

from core import ppo
from tests.apptest import assert_texts_cite, interview_texts, no_exception, opened

PAGE = "pages/9_PPO.py"
# where each text's claim comes from (checked against the seeds: 002 A6.6 and A6.7, 003's PPO equation)
EXPECTED = {
    "quick check": ["seed 002, A6.6"],
    "sentence": ["Schulman et al., 2017", "seed 002, A6.6"],
    "number": ["Schulman et al., 2017", "Yu et al., 2025"],
    "trade-off": ["Schulman et al., 2017", "seed 002, A6.6"],
    "mistake 1": ["seed 002, A6.6"],
    "mistake 2": ["seed 002, A6.6"],
    "mistake 3": ["seed 002, A6.6"],
    "mistake 4": ["Schulman et al., 2017"],
    "mistake 5": ["Schulman et al., 2016", "seed 002, A6.6"],
    "mistake 6": ["Schulman, 2020", "seed 002, A6.7"],
}


@pytest.fixture(scope="module")
def texts():
    at = opened(PAGE)
    assert no_exception(at)
    return interview_texts(at)


def test_every_interview_text_cites_its_source(texts):
    assert_texts_cite(texts, EXPECTED)  # the quick check, three parts of the answer, six mistakes


def _clip_grad(rho: float, A: float, eps: float = 0.2) -> tuple[float, float]:
    """The clipped objective min(ρA, clip(ρ, 1-ε, 1+ε)A) and its derivative in ρ, by torch autograd."""
    r = torch.tensor(rho, dtype=torch.float64, requires_grad=True)
    obj = torch.min(r * A, r.clamp(1 - eps, 1 + eps) * A)
    obj.backward()
    return obj.item(), r.grad.item()


def test_the_quick_check_and_the_numbers_quoted(texts):
    # ρ = 1.3, ε = 0.2: A = +1 is flat (gradient 0); A = -1 keeps ρA = -1.3 < -1.2 and the full gradient -1
    assert _clip_grad(1.3, 1.0) == (pytest.approx(1.2), 0.0)
    assert _clip_grad(1.3, -1.0) == (pytest.approx(-1.3), -1.0)
    assert "**0** for A = +1" in texts["quick check"] and "**−1** (the full A) for A = −1" in texts["quick check"]
    assert "ρA = −1.3 < −1.2" in texts["quick check"]
    # A < 0 mirrors: the flat side is below 1 - ε (ρ = 0.7 < 0.8), where A > 0 keeps its gradient
    assert _clip_grad(0.7, -1.0)[1] == 0.0 and _clip_grad(0.7, 1.0)[1] == 1.0
    assert "ε ≈ 0.2" in texts["number"] and "0.28" in texts["number"]


def test_gae_limits_and_k1_sign_as_the_mistakes_say(texts):
    r, v, gamma = [0.0, 0.5, 1.0], [0.3, 0.2, 0.4, 0.0], 0.9
    delta = [r[t] + gamma * v[t + 1] - v[t] for t in range(3)]

    def gae(lam):
        out, A = [], 0.0
        for t in reversed(range(3)):
            A = delta[t] + gamma * lam * A
            out.insert(0, A)
        return out

    assert gae(0.0) == pytest.approx(delta)  # λ = 0: one-step TD
    mc = [sum(gamma ** (k - t) * r[k] for k in range(t, 3)) - v[t] for t in range(3)]
    assert gae(1.0) == pytest.approx(mc)  # λ = 1: Monte Carlo return minus the value
    assert "λ = 1 is Monte Carlo" in texts["mistake 5"] and "λ = 0 one-step TD" in texts["mistake 5"]
    # π_θ = (0.3, 0.7), π_ref = (0.6, 0.4): a sample of the first token gives k1 = -log 2 < 0, k3 = 1 - log 2 > 0,
    # while the exact KL and the means of k1 and k3 over π_θ are all the same positive number
    pi, ref = [0.3, 0.7], [0.6, 0.4]
    est = ppo.kl_estimators(np.log(pi), np.log(ref))
    assert est.k1[0] == pytest.approx(-math.log(2.0)) and est.k3[0] == pytest.approx(1 - math.log(2.0))
    kl = sum(p * math.log(p / q) for p, q in zip(pi, ref, strict=True))
    assert kl > 0 and float(np.dot(pi, est.k1)) == pytest.approx(kl) and float(np.dot(pi, est.k3)) == pytest.approx(kl)
    assert "negative k1" in texts["mistake 6"]
