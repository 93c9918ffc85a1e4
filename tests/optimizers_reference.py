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
