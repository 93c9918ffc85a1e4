"""Plain references for the MoE page's toy router, shared by the tests that check its numbers (the view's tables, the
deck's notes, the view's tests): the seeded logits redrawn with numpy's generator, top k by a sort in plain Python,
the slots filled token by token, the Switch loss summed by hand, and the balancing runs with the auxiliary loss's
gradient from torch autograd. Imports no project module."""

from __future__ import annotations

import math

import numpy as np


def logits(T: int, E: int, skew: float, seed: int) -> np.ndarray:
    """The toy's router logits: standard normal noise plus skew·(E − 1 − e)/(E − 1)."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((T, E)) + skew * (E - 1 - np.arange(E)) / (E - 1)


def routing_by_hand(T: int, E: int, k: int, skew: float, seed: int, cf: float) -> tuple[int, int, int, float]:
    """(capacity, dropped assignments, tokens that lost one, E·Σ f·P) with a plain loop over tokens."""
    z = logits(T, E, skew, seed)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    cap = math.ceil(round(cf * T * k / E, 9))
    used, counts = [0] * E, [0] * E
    dropped = lost = 0
    for t in range(T):
        any_lost = False
        for e in sorted(range(E), key=lambda j: (-p[t, j], j))[:k]:
            counts[e] += 1
            if used[e] < cap:
                used[e] += 1
            else:
                dropped += 1
                any_lost = True
        lost += any_lost
    aux = E * sum(counts[e] / (T * k) * p[:, e].mean() for e in range(E))
    return cap, dropped, lost, aux


def _top(scores: np.ndarray, k: int, offset: np.ndarray) -> list[list[int]]:
    """Each row's k best experts by score + offset, ties to the lower index."""
    E = scores.shape[1]
    return [sorted(range(E), key=lambda j: (-(row[j] + offset[j]), j))[:k] for row in scores]


def _loads(scores: np.ndarray, k: int, offset: np.ndarray) -> list[int]:
    E = scores.shape[1]
    loads = [0] * E
    for chosen in _top(scores, k, offset):
        for e in chosen:
            loads[e] += 1
    return loads


def _off_own(scores: np.ndarray, k: int, offset: np.ndarray, own: list[list[int]]) -> float:
    """The share of the assignments (by score + offset) that are not among the token's ``own`` top k."""
    chosen = _top(scores, k, offset)
    return sum(e not in mine for row, mine in zip(chosen, own, strict=True) for e in row) / (len(own) * k)


def balancing_by_hand(p: dict) -> tuple[float, float, float, float, float, float]:
    """(max ÷ mean load with no balancing, with the auxiliary loss, with the bias; the router probabilities moved;
    the share of assignments off the router's own top k with the loss and with the bias), each the mean of the run's
    last tenth of steps."""
    import torch

    T, E, k, skew, seed = p["moe_tokens"], p["moe_experts"], min(p["moe_top_k"], p["moe_experts"]), p["moe_skew"], p[
        "moe_seed"]  # fmt: skip
    steps, step, gamma = p["moe_steps"], p["moe_aux_step"], p["moe_gamma"]
    rng = np.random.default_rng(seed)
    c, b = torch.zeros(E, dtype=torch.float64), np.zeros(E)
    none, aux, bias, shift, off_aux, off_bias = [], [], [], [], [], []

    def imbalance(loads: list[int]) -> float:
        return max(loads) / (sum(loads) / E)

    for _ in range(steps):
        z = logits(T, E, skew, int(rng.integers(2**63 - 1)))
        none.append(imbalance(_loads(z, k, np.zeros(E))))
        own = _top(z, k, np.zeros(E))  # the router's own choice (softmax and sigmoid keep the order of z)
        off_bias.append(_off_own(1 / (1 + np.exp(-z)), k, b, own))
        loads_b = _loads(1 / (1 + np.exp(-z)), k, b)  # top-k of sigmoid(z) + b
        bias.append(imbalance(loads_b))
        b = b + gamma * np.sign(np.mean(loads_b) - np.array(loads_b))
        ct = c.clone().requires_grad_(True)
        probs = torch.softmax(torch.tensor(z) + ct, dim=1)  # (T, E)
        loads_a = _loads(probs.detach().numpy(), k, np.zeros(E))
        aux.append(imbalance(loads_a))
        off_aux.append(_off_own(probs.detach().numpy(), k, np.zeros(E), own))
        p0 = torch.softmax(torch.tensor(z), dim=1)
        shift.append(0.5 * (probs.detach() - p0).abs().sum(dim=1).mean().item())
        # L = E Σ f P, f from the top-k (no gradient), P the mean probability
        loss = E * torch.sum(torch.tensor(loads_a, dtype=torch.float64) / (T * k) * probs.mean(dim=0))
        loss.backward()
        c = c - step * ct.grad
    tail = max(1, steps // 10)
    runs = (none, aux, bias, shift, off_aux, off_bias)
    return tuple(float(np.mean(x[-tail:])) for x in runs)  # type: ignore[return-value]
