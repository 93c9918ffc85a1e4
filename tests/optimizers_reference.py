"""Independent references for the optimizers page's numbers, written here with plain Python loops and numpy, never
from core/optimizers.py or views/optimizers.py:

- each optimizer stepped coordinate by coordinate in plain floats (torch.optim's update rules as its documentation
  writes them: SGD, SGD with momentum, Adam with weight_decay as L2, AdamW's θ(1 − ηλ)), the gradients of the bowl
  ½(κx² + y²) and of the valley (1 − x)² + 10(y − x²)² differentiated by hand;
- SGD's stable limit 2/λ_max from the Hessian written out and numpy's eigvalsh;
- Adam's uncorrected step (1 − β1^t)/√(1 − β2^t) by a loop of the moment updates;
- the second moment's effective sample size (Σw)²/Σw² summed term by term;
- LayerNorm and RMSNorm by the definitions;
- the shipped npz read with np.load directly.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np

SHIPPED = Path(__file__).resolve().parents[1] / "core" / "data" / "optimizers.npz"
START = (-1.5, 1.0)
LR_STEPS = [10 ** (-3 + i / 4) for i in range(13)]  # 1e-3 .. 1 a quarter decade apart


def grad(surface: str, kappa: float, x: float, y: float) -> tuple[float, float]:
    if surface == "bowl":  # f = ½(κx² + y²)
        return kappa * x, y
    # f = (1 − x)² + 10(y − x²)²
    return -2 * (1 - x) - 40 * x * (y - x * x), 20 * (y - x * x)


def loss(surface: str, kappa: float, x: float, y: float) -> float:
    if surface == "bowl":
        return 0.5 * (kappa * x * x + y * y)
    return (1 - x) ** 2 + 10 * (y - x * x) ** 2


def run(surface: str, kappa: float, name: str, lr: float, steps: int, b1: float = 0.9, b2: float = 0.999,
        wd: float = 0.1) -> tuple[float, float, float]:  # fmt: skip
    """(x, y, loss) after ``steps`` steps of ``name`` ("sgd", "momentum", "adam", "adam_l2", "adamw"); inf once a
    coordinate overflows."""
    p = list(START)
    m, v = [0.0, 0.0], [0.0, 0.0]
    try:
        for t in range(1, steps + 1):
            g = list(grad(surface, kappa, *p))
            if name in ("sgd", "momentum", "adam_l2"):
                g = [g[i] + wd * p[i] for i in range(2)]
            if name == "sgd":
                p = [p[i] - lr * g[i] for i in range(2)]
            elif name == "momentum":
                m = [b1 * m[i] + g[i] for i in range(2)]
                p = [p[i] - lr * m[i] for i in range(2)]
            else:
                if name == "adamw":
                    p = [p[i] * (1 - lr * wd) for i in range(2)]
                m = [b1 * m[i] + (1 - b1) * g[i] for i in range(2)]
                v = [b2 * v[i] + (1 - b2) * g[i] * g[i] for i in range(2)]
                p = [p[i] - lr * (m[i] / (1 - b1**t)) / (math.sqrt(v[i] / (1 - b2**t)) + 1e-8) for i in range(2)]
            if not all(math.isfinite(c) for c in p):
                return math.inf, math.inf, math.inf
        return p[0], p[1], loss(surface, kappa, *p)
    except OverflowError:
        return math.inf, math.inf, math.inf


def loss_text(x: float) -> str:
    """The panel's form: 2 significant digits, or "diverged" past 1e6."""
    return "diverged" if not math.isfinite(x) or x > 1e6 else f"{x:.2g}"


def stable_limit(surface: str, kappa: float) -> float:
    """2/λ_max of the Hessian at the minimum: diag(κ, 1), or [[2 + 80, −40], [−40, 20]] at (1, 1)."""
    h = np.diag([kappa, 1.0]) if surface == "bowl" else np.array([[82.0, -40.0], [-40.0, 20.0]])
    lam = np.linalg.eigvalsh(h)
    return 2 / lam[-1], lam[-1] / lam[0]


def start_lambda_max(surface: str, kappa: float) -> float:
    """The largest eigenvalue of the Hessian at the start (−1.5, 1), written out by hand."""
    x, y = START
    if surface == "bowl":
        return max(kappa, 1.0)
    h = np.array([[2 - 40 * (y - x * x) + 80 * x * x, -40 * x], [-40 * x, 20.0]])
    return float(np.linalg.eigvalsh(h)[-1])


def uncorrected_steps(n: int, b1: float, b2: float) -> list[float]:
    """|Δθ_t|/η without bias correction under g = 1, by the moment loop."""
    m = v = 0.0
    out = []
    for _ in range(n):
        m, v = b1 * m + (1 - b1), b2 * v + (1 - b2)
        out.append(m / math.sqrt(v))
    return out


def n_eff(t: int, b2: float) -> float:
    """(Σw)²/Σw² with w_i = β2^(t−i), i = 1..t."""
    w = [b2 ** (t - i) for i in range(1, t + 1)]
    return sum(w) ** 2 / sum(x * x for x in w)


def norm_stats(shift: float) -> dict[str, tuple[float, float]]:
    """(mean, RMS) of the page's vector (8 seeded N(0, 1) plus ``shift``), its LayerNorm (eps 1e-5) and RMSNorm."""
    x = [float(a) + shift for a in np.random.default_rng(0).standard_normal(8)]
    mu = sum(x) / 8
    var = sum((a - mu) ** 2 for a in x) / 8
    ln = [(a - mu) / math.sqrt(var + 1e-5) for a in x]
    ms = sum(a * a for a in x) / 8
    rms = [a / math.sqrt(ms + np.finfo(np.float64).eps) for a in x]

    def st(v: list[float]) -> tuple[float, float]:
        return sum(v) / len(v), math.sqrt(sum(a * a for a in v) / len(v))

    return {"x": st(x), "ln": st(ln), "rms": st(rms)}


def shipped(key: str) -> np.ndarray:
    with np.load(SHIPPED, allow_pickle=False) as z:
        return np.asarray(z[key])


def first_at_or_above(b1: float, b2: float, level: float = 1.0, n: int = 5000) -> int:
    """The first t at which the uncorrected step (moment loop, g = 1) reaches ``level`` η."""
    return next(t for t, u in enumerate(uncorrected_steps(n, b1, b2), start=1) if u >= level)


def last_above(b1: float, b2: float, level: float, n: int = 20000) -> int:
    """The last t at which the uncorrected step is above ``level`` η."""
    return max(t for t, u in enumerate(uncorrected_steps(n, b1, b2), start=1) if u > level)


def step_bound(t: int, b1: float, b2: float) -> float:
    """max |m̂_t/√v̂_t| over all gradient sequences: write m̂ = Σ a_i g_i, v̂ = Σ b_i g_i² by unrolling the moment
    updates term by term; Cauchy–Schwarz gives √(Σ a_i²/b_i), reached at g_i = a_i/b_i (checked here by evaluating
    the moments' own loop on that sequence)."""
    a = [(1 - b1) * b1 ** (t - i) / (1 - b1**t) for i in range(1, t + 1)]
    b = [(1 - b2) * b2 ** (t - i) / (1 - b2**t) for i in range(1, t + 1)]
    bound = math.sqrt(sum(x * x / y for x, y in zip(a, b, strict=True)))
    m = v = 0.0
    for i, g in enumerate([x / y for x, y in zip(a, b, strict=True)], start=1):
        m, v = b1 * m + (1 - b1) * g, b2 * v + (1 - b2) * g * g
        if i == t:
            attained = abs(m / (1 - b1**t)) / math.sqrt(v / (1 - b2**t))
    assert abs(attained - bound) < 1e-9 * bound
    return bound


def valley_l2_minimum(wd: float) -> tuple[float, float, float]:
    """The minimiser of (1 − x)² + 10(y − x²)² + (wd/2)(x² + y²) by scipy, and the valley's own f there."""
    from scipy import optimize

    def f(p):
        return (1 - p[0]) ** 2 + 10 * (p[1] - p[0] ** 2) ** 2

    res = optimize.minimize(lambda p: f(p) + wd / 2 * (p[0] ** 2 + p[1] ** 2), [0.5, 0.5], tol=1e-12)
    return float(res.x[0]), float(res.x[1]), float(f(res.x))


@functools.cache
def residual_rms_before_final_norm(norm: str, n_layer: int = 12) -> float:
    """The RMS of the tiny GPT's residual stream entering its final RMSNorm, at its own (GPT-2 style) init, seed 0,
    on the shipped depth batch (4 × 32 seeded random bytes, rng seed 1), by a forward hook on the torch model."""
    import torch

    from core.tiny_gpt import GPTConfig, init_params, torch_model

    cfg = GPTConfig(n_layer=n_layer, d_model=64, n_head=4, ctx=32, norm=norm)
    model = torch_model(cfg, init_params(cfg, seed=0))
    seen = {}
    model.norm_f.register_forward_hook(lambda mod, args, out: seen.__setitem__("x", args[0].detach()))
    ids = torch.as_tensor(np.random.default_rng(1).integers(0, 256, size=(4, 33)), dtype=torch.int64)
    with torch.no_grad():
        model(ids[:, :-1])
    return float(seen["x"].double().pow(2).mean().sqrt())
