"""Optimizers and normalisation: SGD, momentum, Adam, Adam + L2 and AdamW on 2-D loss surfaces, Adam's bias
correction and the noise of its early second moment, LayerNorm vs RMSNorm, and pre-LN vs post-LN gradient norms by
depth at initialisation.

The lesson context is seed 002, A1.5 (optimizers), A1.6 (warm-up) and A1.7 (normalisation).

Surfaces (:class:`Surface`), a point p = (x, y)::

    quadratic:   f = ½ (a x² + b y²)                 condition number κ = a / b (the Hessian's eigenvalue ratio)
    rosenbrock:  f = (a − x)² + b (y − x²)²          a curved valley along y = x², minimum (a, a²); Rosenbrock's
                                                     own constants are a = 1, b = 100; the page uses a milder b

Optimizer steps (:func:`trajectory`), g = ∇f(θ_{t−1}), t = 1, 2, ..., all in PyTorch's conventions (torch.optim,
the defaults dampening = 0, nesterov = False, amsgrad = False, maximize = False), so that the tests can compare with
torch.optim step for step::

    sgd:       g ← g + λ θ (L2, torch's SGD weight_decay);   θ ← θ − η g
    momentum:  g ← g + λ θ;   v ← μ v + g;   θ ← θ − η v     (heavy ball, Polyak 1964, in torch's form: v_0 = 0 so
               v_1 = g_1; Sutskever et al. 2013 write v ← μ v − η g, θ ← θ + v, which is the same for a constant η)
    adam:      g ← g + λ θ (L2: torch's Adam weight_decay)
               m ← β1 m + (1 − β1) g;   v ← β2 v + (1 − β2) g²
               m̂ = m / (1 − β1^t);   v̂ = v / (1 − β2^t)     (bias correction; off: m̂ = m, v̂ = v)
               θ ← θ − η m̂ / (√v̂ + ε)                        (Kingma and Ba 2015, Algorithm 1)
    adamw:     θ ← θ − η λ θ, then the Adam step without the L2 term   (decoupled weight decay)

AdamW: Loshchilov and Hutter 2019, Algorithm 2, write θ_t = θ_{t−1} − η_t (α m̂/(√v̂ + ε) + λ θ_{t−1}), where α is
Adam's step size and η_t only the schedule multiplier, so the paper's decay is not multiplied by α. torch.optim.AdamW
(the convention here) multiplies λ by the learning rate: θ ← θ (1 − lr λ). torch's λ = 0.01 at lr = 1e-3 is a paper
λ of 1e-5 per step; the two agree when the paper's λ is torch's λ · lr. ``"adam_l2"`` is Adam with the decay added
to the gradient, where it passes through the adaptive 1/√v̂ (A1.5.1's point: parameters with small gradients get
decayed hardest).

Bias correction (:func:`bias_correction_steps`): for a constant gradient g, m_t = (1 − β1^t) g and
v_t = (1 − β2^t) g², so the uncorrected step is η (1 − β1^t) / √(1 − β2^t) (ε → 0) and the corrected one exactly η.
The first uncorrected step (1 − β1)/√(1 − β2) exceeds η only when β2 > 1 − (1 − β1)² (0.99 at β1 = 0.9): at the
0.9, 0.999 default it is 3.16 η, LARGER than η, and stays above η for thousands of steps; at β2 = 0.95 it is 0.45 η
and reaches η only at t = 9. Kingma and Ba §3 make the point for β2 near 1: without correcting v, the first steps
are very large.

Warm-up (:func:`second_moment_effective_samples`, :func:`second_moment_noise`): the bias-corrected v̂_t is a weighted
mean of g_1², ..., g_t² with weights ∝ β2^(t−i); its effective number of samples is
n_eff = (Σw)² / Σw² = (1 − β2^t)² (1 + β2) / ((1 − β2)(1 − β2^(2t))), 1 at t = 1 and (1 + β2)/(1 − β2) ≈ 1999 for
β2 = 0.999 in the limit. For zero-mean Gaussian gradients Var(g²) = 2 σ⁴, so v̂'s relative standard deviation is
√(2 / n_eff): 141 % at t = 1. Liu et al. 2020 (RAdam) blame warm-up's need on this variance. But m̂ is made of the
same gradients, so the step |m̂/√v̂| is not large when v̂ is small: it is exactly 1 (in units of η) at t = 1 and never
above √(Σ a_i²/b_i) (:func:`adam_step_bound`, Cauchy–Schwarz; 1.04 at t = 10 for 0.9, 0.999). Ma and Yarats 2021
(AAAI) explain warm-up by the update's size instead.

Normalisation (:func:`layer_norm`, :func:`rms_norm`), over the last axis of x (…, d)::

    LayerNorm(x) = (x − mean(x)) / √(var(x) + eps) · g + b     removes the mean and the scale (Ba et al. 2016)
    RMSNorm(x)   = x / √(mean(x²) + eps) · g                   removes only the scale (Zhang and Sennrich 2019)

var is the biased (population) variance, as in torch.nn.LayerNorm. eps: LayerNorm's torch default 1e-5;
torch.nn.RMSNorm's default eps=None means torch.finfo(dtype).eps (1.19e-7 for float32), which is what ``eps=None``
means here too; for bf16 and fp16 inputs torch uses float32's eps (measured with torch 2.13 on CPU), not the input
dtype's.

Pre-LN vs post-LN (:func:`grad_norm_by_depth`): the tiny GPT's own blocks (core/tiny_gpt.py: RMSNorm, a final
RMSNorm in both variants, tied head), at initialisation, one seeded batch of random bytes, the next-byte
cross-entropy; the gradient norm of each block's parameters. Xiong et al. 2020 (On Layer Normalization in the
Transformer Architecture, ICML, Theorem 1) bound the last layer's gradient under post-LN by O(d √ln d),
independent of depth, and under pre-LN by O(d √(ln d / L)): at depth the post-LN top block gets the larger gradient
(their reason post-LN needs warm-up). Their setting is Xavier init (and LayerNorm): ``init="xavier"`` re-draws the
tiny GPT's matrices Glorot normal, embedding N(0, 1), and there the direction holds (seed 0, d = 64: last block
post/pre = 1.6 at 4 layers, 5.3 at 12; the ratio grows with depth as the √L predicts in direction). Two things do
not carry over: post-LN's norms here are flat across depth rather than rising toward the top (Xiong et al. Fig. 3),
and pre-LN's fall with depth rather than staying flat. Under the tiny GPT's own GPT-2 init (``init="gpt2"``) the
direction REVERSES (12 layers: pre 0.72 vs post 0.026 at the last block): the 0.02-scale embedding keeps pre-LN's
residual stream at RMS 0.028 before the final RMSNorm (1.0 under post-LN, which renormalises after every sublayer),
so the final norm scales every block's gradient up by about 1/0.028 ≈ 35. That is the mechanism Xiong et al. invoke
(the final norm divides every gradient by its input's scale, their Lemma 3), with a residual stream far below unit
scale instead of one growing with L; a uniform rescale across blocks like this is largely undone by Adam. The figure
should say which init it shows.

muP (:func:`mup_lr_sweep`, :func:`mup_coord_check`; Yang et al. 2022, Tensor Programs V, arXiv 2203.03466) on a
16 -> n -> n -> 4 ReLU MLP trained with Adam on a fixed random teacher's MSE (seeded). Both parameterisations draw
every matrix N(0, 1/fan_in); with r = n / 32 (base width 32, where the two coincide), muP for Adam here is::

    hidden (n x n) matrix:  Adam LR η / r          input matrix and output matrix: LR η
    output:                 y = (h W_out) / r      (the output multiplier 1/width)

which is the form of the ``mup`` package (MuReadout's 1/width_mult multiplier, MuAdam's LR / width_mult for
matrix-like parameters). SP: every LR η, no multiplier. The shipped sweep (core/optimizers_data.py: 150 steps,
batch 64, widths 32/128/512, 13 LRs from 1e-4 to 0.1, the mean over seeds 0, 1, 2): the best LR moved
0.018 -> 0.0056 -> 0.0018 under SP and 0.018 -> 0.01 -> 0.018 under muP, on curves that are flat near their
minima; the robust signal is at large η, where SP's loss grows with width (0.25 -> 0.53 -> 0.56 at η = 0.1) and
muP's falls (0.25 -> 0.13 -> 0.11). Coordinate check at LR 0.01, widths 32..256, recorded at each step's forward
pass (index 4 is after 4 updates): the output's mean |coordinate| grew 0.19 -> 0.77 under SP; under muP the hidden
layers showed no trend with width and the output fell 0.19 -> 0.12 (its init part shrinks as 32/n under the 1/r
multiplier, its update part is width-independent).

Everything but :func:`grad_norm_by_depth` and the muP functions is numpy (float64) and never imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

OPTIMIZERS = ("sgd", "momentum", "adam", "adam_l2", "adamw")
Optimizer = Literal["sgd", "momentum", "adam", "adam_l2", "adamw"]


# ---------------------------------------------------------------------------------------------------------------
# surfaces
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Surface:
    """A 2-D loss surface: ``"quadratic"`` f = ½(a x² + b y²) or ``"rosenbrock"`` f = (a − x)² + b (y − x²)²."""

    kind: Literal["quadratic", "rosenbrock"]
    a: float
    b: float

    def __post_init__(self) -> None:
        if self.kind not in ("quadratic", "rosenbrock"):
            raise ValueError(f"kind must be 'quadratic' or 'rosenbrock', got {self.kind!r}")
        if (
            not (np.isfinite(self.a) and np.isfinite(self.b))
            or self.b <= 0
            or (self.kind == "quadratic" and self.a <= 0)
        ):
            raise ValueError(f"a and b must be finite, b > 0 (and a > 0 for the quadratic), got {self.a}, {self.b}")

    @property
    def minimum(self) -> NDArray[np.float64]:
        """The minimiser (2,): (0, 0) for the quadratic, (a, a²) for the valley."""
        return np.array([0.0, 0.0]) if self.kind == "quadratic" else np.array([self.a, self.a**2])

    def loss(self, p: ArrayLike) -> NDArray[np.float64]:
        """f at points p (..., 2) -> (...)."""
        p = np.asarray(p, dtype=np.float64)
        x, y = p[..., 0], p[..., 1]
        if self.kind == "quadratic":
            # f = ½ (a x² + b y²)
            return 0.5 * (self.a * x * x + self.b * y * y)
        # f = (a − x)² + b (y − x²)²
        return (self.a - x) ** 2 + self.b * (y - x * x) ** 2

    def grad(self, p: ArrayLike) -> NDArray[np.float64]:
        """∇f at points p (..., 2) -> (..., 2)."""
        p = np.asarray(p, dtype=np.float64)
        x, y = p[..., 0], p[..., 1]
        if self.kind == "quadratic":
            # ∇f = (a x, b y)
            return np.stack([self.a * x, self.b * y], axis=-1)
        # ∂f/∂x = −2 (a − x) − 4 b x (y − x²);   ∂f/∂y = 2 b (y − x²)
        r = y - x * x
        return np.stack([-2.0 * (self.a - x) - 4.0 * self.b * x * r, 2.0 * self.b * r], axis=-1)


def quadratic(condition: float = 10.0, b: float = 1.0) -> Surface:
    """The ill-conditioned bowl f = ½(a x² + b y²) with a = condition · b."""
    if not np.isfinite(condition) or condition < 1:
        raise ValueError(f"the condition number must be finite and >= 1, got {condition}")
    return Surface("quadratic", float(condition) * b, float(b))


def rosenbrock(a: float = 1.0, b: float = 10.0) -> Surface:
    """The curved valley f = (a − x)² + b (y − x²)² (Rosenbrock 1960 has b = 100; 10 keeps the page's LRs sane)."""
    return Surface("rosenbrock", float(a), float(b))


def loss_grid(
    surface: Surface, xlim: tuple[float, float], ylim: tuple[float, float], n: int = 101
) -> tuple[NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]]:
    """Axes xs (n,), ys (n,) and the loss Z (n, n) with Z[i, j] = f(xs[j], ys[i]) (plotly's contour layout)."""
    if n < 2:
        raise ValueError(f"n must be >= 2, got {n}")
    xs, ys = np.linspace(*xlim, n), np.linspace(*ylim, n)
    X, Y = np.meshgrid(xs, ys)  # (n, n) each, rows follow y
    return xs, ys, surface.loss(np.stack([X, Y], axis=-1))


# ---------------------------------------------------------------------------------------------------------------
# trajectories
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Trajectory:
    """Positions (n_lr, steps + 1, 2) and surface losses (n_lr, steps + 1) for each learning rate in lrs (n_lr,).

    The loss is the surface's f only, without the L2 or decay term."""

    lrs: NDArray[np.float64]
    positions: NDArray[np.float64]
    losses: NDArray[np.float64]


def trajectory(
    surface: Surface,
    optimizer: Optimizer,
    lrs: ArrayLike,
    steps: int,
    start: ArrayLike = (-1.5, 1.0),
    *,
    momentum: float = 0.9,
    betas: tuple[float, float] = (0.9, 0.999),
    eps: float = 1e-8,
    weight_decay: float = 0.0,
    bias_correction: bool = True,
) -> Trajectory:
    """Run ``optimizer`` from ``start`` for ``steps`` steps at every learning rate in ``lrs`` at once (torch's
    conventions, module docstring). ``weight_decay`` is L2 for sgd, momentum and adam_l2, decoupled for adamw, and
    must be 0 for adam. A run that overflows stays inf/nan from there (the page shows it as diverged)."""
    if optimizer not in OPTIMIZERS:
        raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {optimizer!r}")
    if isinstance(steps, bool) or not isinstance(steps, int | np.integer) or steps < 0:
        raise ValueError(f"steps must be a whole number >= 0, got {steps!r}")
    lr = np.atleast_1d(np.asarray(lrs, dtype=np.float64))
    if lr.ndim != 1 or not np.all(np.isfinite(lr)) or np.any(lr < 0):
        raise ValueError("lrs must be a finite, non-negative scalar or 1-D array")
    b1, b2 = betas
    if not (0 <= b1 < 1 and 0 <= b2 < 1 and 0 <= momentum < 1 and eps >= 0 and weight_decay >= 0):
        raise ValueError("need 0 <= beta1, beta2, momentum < 1 and eps, weight_decay >= 0")
    if optimizer == "adam" and weight_decay:
        raise ValueError("plain 'adam' takes no weight decay: use 'adam_l2' or 'adamw'")
    n = lr.size
    eta = lr[:, None]  # (n, 1)
    theta = np.broadcast_to(np.asarray(start, dtype=np.float64), (n, 2)).copy()  # (n, 2)
    pos = np.empty((n, steps + 1, 2))
    pos[:, 0] = theta
    m = np.zeros_like(theta)  # momentum buffer / Adam's first moment
    v = np.zeros_like(theta)  # Adam's second moment
    l2 = weight_decay if optimizer in ("sgd", "momentum", "adam_l2") else 0.0
    with np.errstate(over="ignore", invalid="ignore"):
        for t in range(1, steps + 1):
            # g ← ∇f(θ) + λ θ  (L2 in the gradient; torch's weight_decay for SGD and Adam)
            g = surface.grad(theta) + l2 * theta
            if optimizer == "sgd":
                # θ ← θ − η g
                theta = theta - eta * g
            elif optimizer == "momentum":
                # v ← μ v + g;  θ ← θ − η v   (torch.optim.SGD, dampening 0; Polyak's heavy ball)
                m = momentum * m + g
                theta = theta - eta * m
            else:
                if optimizer == "adamw":
                    # θ ← θ − η λ θ   (decoupled decay, torch.optim.AdamW; Loshchilov & Hutter 2019 Alg. 2
                    # write η_t λ θ with η_t the schedule multiplier only, module docstring)
                    theta = theta * (1.0 - eta * weight_decay)
                # m ← β1 m + (1 − β1) g;  v ← β2 v + (1 − β2) g²   (Kingma & Ba 2015, Algorithm 1)
                m = b1 * m + (1.0 - b1) * g
                v = b2 * v + (1.0 - b2) * g * g
                # m̂ = m / (1 − β1^t);  v̂ = v / (1 − β2^t)   (or m, v uncorrected)
                c1, c2 = (1.0 - b1**t, 1.0 - b2**t) if bias_correction else (1.0, 1.0)
                # θ ← θ − η m̂ / (√v̂ + ε)
                theta = theta - eta * (m / c1) / (np.sqrt(v / c2) + eps)
            pos[:, t] = theta
        losses = surface.loss(pos)
    return Trajectory(lr, pos, losses)


def lr_sweep(low: float, high: float, n: int) -> NDArray[np.float64]:
    """n learning rates spaced evenly in log between low and high (the page's drag steps)."""
    if not 0 < low <= high or n < 1:
        raise ValueError(f"need 0 < low <= high and n >= 1, got {low}, {high}, {n}")
    return np.geomspace(low, high, n)


# ---------------------------------------------------------------------------------------------------------------
# Adam's bias correction and the early second moment
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BiasCorrection:
    """Per step t (steps,): Adam's step size in units of η for a constant gradient (ε → 0), with and without bias
    correction, and the two factors: m_t = (1 − β1^t) g, √v_t = √(1 − β2^t) |g|."""

    t: NDArray[np.int64]
    corrected: NDArray[np.float64]
    uncorrected: NDArray[np.float64]
    m_factor: NDArray[np.float64]
    v_factor: NDArray[np.float64]


def bias_correction_steps(steps: int, beta1: float = 0.9, beta2: float = 0.999) -> BiasCorrection:
    """|Δθ_t| / η under a constant gradient: 1 with the correction, (1 − β1^t)/√(1 − β2^t) without."""
    if steps < 1 or not (0 <= beta1 < 1 and 0 <= beta2 < 1):
        raise ValueError("need steps >= 1 and 0 <= beta1, beta2 < 1")
    t = np.arange(1, steps + 1)
    # m_t = (1 − β1^t) g;  v_t = (1 − β2^t) g²  (sums of geometric series from m_0 = v_0 = 0)
    m_factor = -np.expm1(t * np.log(beta1)) if beta1 > 0 else np.ones(steps)
    v_factor = np.sqrt(-np.expm1(t * np.log(beta2))) if beta2 > 0 else np.ones(steps)
    # uncorrected step / η = m_t / √v_t = (1 − β1^t) / √(1 − β2^t);  corrected: m̂/√v̂ = g/|g| = 1
    return BiasCorrection(t, np.ones(steps), m_factor / v_factor, m_factor, v_factor)


def second_moment_effective_samples(steps: int, beta2: float = 0.999) -> NDArray[np.float64]:
    """n_eff(t) = (Σw)²/Σw² of the bias-corrected v̂_t, t = 1..steps: (1 − β2^t)²(1 + β2)/((1 − β2)(1 − β2^(2t)))."""
    if steps < 1 or not 0 < beta2 < 1:
        raise ValueError("need steps >= 1 and 0 < beta2 < 1")
    t = np.arange(1, steps + 1)
    a, a2 = -np.expm1(t * np.log(beta2)), -np.expm1(2 * t * np.log(beta2))  # 1 − β2^t, 1 − β2^(2t)
    # n_eff = (Σ β2^(t−i))² / Σ β2^(2(t−i)) = ((1 − β2^t)/(1 − β2))² · (1 − β2²)/(1 − β2^(2t))
    return a * a * (1.0 + beta2) / ((1.0 - beta2) * a2)


def adam_step_bound(t: int, beta1: float = 0.9, beta2: float = 0.999) -> float:
    """The largest |m̂_t / √v̂_t| any gradients g_1..g_t can give (ε = 0), in units of η: m̂_t = Σ a_i g_i and
    v̂_t = Σ b_i g_i² with a_i = (1 − β1) β1^(t−i) / (1 − β1^t) and b_i = (1 − β2) β2^(t−i) / (1 − β2^t), so by
    Cauchy–Schwarz |m̂_t| ≤ √(Σ a_i² / b_i) √v̂_t, with equality for g_i ∝ a_i / b_i. 1 at t = 1."""
    if t < 1 or not (0 <= beta1 < 1 and 0 < beta2 < 1):
        raise ValueError("need t >= 1, 0 <= beta1 < 1 and 0 < beta2 < 1")
    k = np.arange(t)[::-1]  # t − i for i = 1..t
    a = (1.0 - beta1) * beta1**k / (1.0 - beta1**t)
    b = (1.0 - beta2) * beta2**k / (1.0 - beta2**t)
    return float(np.sqrt(np.sum(a * a / b)))


@dataclass(frozen=True)
class SecondMomentNoise:
    """Across runs, per step t: quantiles (q, steps) of v̂_t / E[g²] and of the per-coordinate step |m̂/√v̂|
    (units of η; ε = 0), and the closed-form relative std √(2/n_eff) for zero-mean Gaussian gradients."""

    t: NDArray[np.int64]
    quantiles: NDArray[np.float64]
    v_ratio: NDArray[np.float64]
    step: NDArray[np.float64]
    rel_std_closed_form: NDArray[np.float64]
    rel_std_simulated: NDArray[np.float64]


def second_moment_noise(
    steps: int = 200,
    beta1: float = 0.9,
    beta2: float = 0.999,
    runs: int = 2000,
    mean: float = 0.0,
    std: float = 1.0,
    seed: int = 0,
    quantiles: ArrayLike = (0.05, 0.5, 0.95),
) -> SecondMomentNoise:
    """Simulate Adam's bias-corrected moments on i.i.d. gradients g ~ N(mean, std²) (``runs`` runs, seeded)."""
    if steps < 1 or runs < 2 or std <= 0:
        raise ValueError("need steps >= 1, runs >= 2, std > 0")
    rng = np.random.default_rng(seed)
    g = mean + std * rng.standard_normal((runs, steps))  # (runs, steps)
    t = np.arange(1, steps + 1)
    m, v = np.zeros(runs), np.zeros(runs)
    v_hat, step = np.empty((runs, steps)), np.empty((runs, steps))
    with np.errstate(divide="ignore"):
        for i in range(steps):
            # m ← β1 m + (1 − β1) g;  v ← β2 v + (1 − β2) g²;  hats divide by 1 − β^t
            m = beta1 * m + (1.0 - beta1) * g[:, i]
            v = beta2 * v + (1.0 - beta2) * g[:, i] ** 2
            v_hat[:, i] = v / (1.0 - beta2 ** (i + 1))
            step[:, i] = np.abs(m / (1.0 - beta1 ** (i + 1))) / np.sqrt(v_hat[:, i])
    second = mean**2 + std**2  # E[g²]
    q = np.asarray(quantiles, dtype=np.float64)
    ratio = v_hat / second
    return SecondMomentNoise(
        t,
        q,
        np.quantile(ratio, q, axis=0),
        np.quantile(step, q, axis=0),
        np.sqrt(2.0 / second_moment_effective_samples(steps, beta2)),
        ratio.std(axis=0, ddof=1) / ratio.mean(axis=0),
    )


# ---------------------------------------------------------------------------------------------------------------
# normalisation
# ---------------------------------------------------------------------------------------------------------------


def _float(x: ArrayLike) -> NDArray[np.floating]:
    x = np.asarray(x)
    return x if np.issubdtype(x.dtype, np.floating) else x.astype(np.float64)


def layer_norm(
    x: ArrayLike, eps: float = 1e-5, gain: ArrayLike | None = None, bias: ArrayLike | None = None
) -> NDArray:
    """(x − mean) / √(var + eps) · gain + bias over the last axis (biased var, as torch.nn.LayerNorm), in x's dtype."""
    x = _float(x)
    mu = x.mean(axis=-1, keepdims=True)
    c = x - mu
    # LayerNorm(x) = (x − mean(x)) / √(var(x) + eps): removes the mean and the scale (two-pass variance)
    y = c / np.sqrt((c * c).mean(axis=-1, keepdims=True) + eps)
    y = y if gain is None else y * np.asarray(gain, dtype=x.dtype)
    return y if bias is None else y + np.asarray(bias, dtype=x.dtype)


def rms_norm(x: ArrayLike, eps: float | None = None, gain: ArrayLike | None = None) -> NDArray:
    """x / √(mean(x²) + eps) · gain over the last axis; eps=None is the dtype's machine epsilon (torch.nn.RMSNorm)."""
    x = _float(x)
    e = np.finfo(x.dtype).eps if eps is None else eps
    # RMSNorm(x) = x / √(mean(x²) + eps): removes only the scale, the mean stays
    y = x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + e)
    return y if gain is None else y * np.asarray(gain, dtype=x.dtype)


# ---------------------------------------------------------------------------------------------------------------
# pre-LN vs post-LN at initialisation
# ---------------------------------------------------------------------------------------------------------------


def grad_norm_by_depth(
    n_layer: int = 12,
    norm: Literal["pre", "post"] = "pre",
    init: Literal["xavier", "gpt2"] = "xavier",
    d_model: int = 64,
    n_head: int = 4,
    seq_len: int = 32,
    batch: int = 4,
    seed: int = 0,
    device: Any = None,
) -> NDArray[np.float64]:
    """Each block's parameter-gradient norm (n_layer,), block 0 first, of the tiny GPT at initialisation on one
    batch of seeded random bytes, next-byte cross-entropy in nats. ``init``: ``"xavier"`` (Xiong et al.'s setting:
    every matrix Glorot normal N(0, 2/(d_in + d_out)), no depth scaling, the embedding N(0, 1)) or ``"gpt2"``
    (core.tiny_gpt.init_params as shipped: N(0, 0.02²), wo and w2 / √(2 n_layer))."""
    import torch
    from torch.nn import functional as F

    from core.tiny_gpt import GPTConfig, init_params, torch_model

    if init not in ("xavier", "gpt2"):
        raise ValueError(f"init must be 'xavier' or 'gpt2', got {init!r}")
    cfg = GPTConfig(n_layer=n_layer, d_model=d_model, n_head=n_head, ctx=seq_len, norm=norm)
    params = init_params(cfg, seed=seed)
    if init == "xavier":
        rng = np.random.default_rng(seed)
        for name, w in params.items():
            if w.ndim == 2:
                # W ~ N(0, 2 / (d_in + d_out)) (Glorot and Bengio 2010); the embedding N(0, 1)
                std = 1.0 if name == "wte" else np.sqrt(2.0 / sum(w.shape))
                params[name] = (rng.standard_normal(w.shape) * std).astype(np.float32)
    model = torch_model(cfg, params, device=device)
    dev = next(model.parameters()).device
    ids = np.random.default_rng(seed + 1).integers(0, 256, size=(batch, seq_len + 1))  # (B, T + 1)
    ids_t = torch.as_tensor(ids, dtype=torch.int64, device=dev)
    logits = model(ids_t[:, :-1])  # (B, T, 256)
    loss = F.cross_entropy(logits.reshape(-1, 256), ids_t[:, 1:].reshape(-1))
    loss.backward()
    # ‖∇_block‖ = √(Σ over the block's parameters of ‖∇W‖²)
    sq = [sum((p.grad.double() ** 2).sum() for p in block.parameters()) for block in model.blocks]
    return np.sqrt(torch.stack(sq).cpu().numpy())


# ---------------------------------------------------------------------------------------------------------------
# muP: a small MLP under standard parameterisation and muP
# ---------------------------------------------------------------------------------------------------------------

MUP_BASE_WIDTH = 32  # the width at which muP and SP coincide
MUP_D_IN, MUP_D_OUT = 16, 4


def _mup_problem(seed: int, batch: int, steps: int) -> tuple[NDArray[np.float32], NDArray[np.float32]]:
    """Inputs (steps, batch, 16) ~ N(0, 1) and targets (steps, batch, 4) from a fixed random tanh teacher."""
    rng = np.random.default_rng(seed)
    t1 = rng.standard_normal((MUP_D_IN, 64)) / np.sqrt(MUP_D_IN)
    t2 = rng.standard_normal((64, MUP_D_OUT)) / np.sqrt(64)
    x = rng.standard_normal((steps, batch, MUP_D_IN))
    return x.astype(np.float32), (np.tanh(x @ t1 * 2.0) @ t2).astype(np.float32)


def _mup_run(width: int, lr: float, param: str, steps: int, batch: int, seed: int) -> tuple[list[float], list[Any]]:
    """Train the 16 -> width -> width -> 4 ReLU MLP with Adam (β 0.9, 0.999) for ``steps`` steps on the teacher's
    MSE; returns the losses and, per step, the mean |coordinate| of the two hidden activations and the output at
    that step's forward pass, before its update."""
    import torch

    r = width / MUP_BASE_WIDTH  # width multiplier relative to the base
    g = torch.Generator().manual_seed(seed)
    # every matrix N(0, 1/fan_in) in both parameterisations (the muP output multiplier below does the rest)
    w_in = torch.randn(MUP_D_IN, width, generator=g) / math.sqrt(MUP_D_IN)
    w_h = torch.randn(width, width, generator=g) / math.sqrt(width)
    w_out = torch.randn(width, MUP_D_OUT, generator=g) / math.sqrt(width)
    ps = [w.requires_grad_() for w in (w_in, w_h, w_out)]
    if param == "mup":
        # muP for Adam: hidden (width x width) LR η / r; input and output LR η; output multiplier 1 / r
        groups = [{"params": [w_in, w_out], "lr": lr}, {"params": [w_h], "lr": lr / r}]
        out_mult = 1.0 / r
    else:
        groups, out_mult = [{"params": ps, "lr": lr}], 1.0
    adam = torch.optim.Adam(groups, betas=(0.9, 0.999), eps=1e-8)
    xs, ys = (torch.from_numpy(a) for a in _mup_problem(seed, batch, steps))
    losses, scales = [], []
    for t in range(steps):
        h1 = torch.relu(xs[t] @ w_in)  # (batch, width)
        h2 = torch.relu(h1 @ w_h)  # (batch, width)
        out = (h2 @ w_out) * out_mult  # (batch, 4)
        loss = ((out - ys[t]) ** 2).mean()
        adam.zero_grad()
        loss.backward()
        adam.step()
        losses.append(float(loss.detach()))
        scales.append([float(a.detach().abs().mean()) for a in (h1, h2, out)])
    return losses, scales


def mup_coord_check(
    widths: ArrayLike = (32, 64, 128, 256),
    param: Literal["sp", "mup"] = "mup",
    lr: float = 0.01,
    steps: int = 5,
    batch: int = 64,
    seed: int = 0,
) -> NDArray[np.float64]:
    """The coordinate check (Yang et al. 2022; the ``mup`` package's coord_check): the mean |coordinate| of hidden
    layer 1, hidden layer 2 and the output at the forward pass of each of ``steps`` Adam steps, before that step's
    update (index 0 at initialisation, index k after k updates), (n_widths, steps, 3). Under muP the hidden columns
    stay flat across widths; under SP the output grows with width."""
    import torch

    with torch.random.fork_rng():
        return np.array([_mup_run(int(w), lr, param, steps, batch, seed)[1] for w in np.atleast_1d(widths)])


def mup_lr_sweep(
    widths: ArrayLike = (32, 64, 128, 256, 512),
    lrs: ArrayLike | None = None,
    param: Literal["sp", "mup"] = "mup",
    steps: int = 200,
    batch: int = 64,
    seed: int = 0,
    seeds: int = 1,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Final training loss (mean of the last 20 steps, then the mean over ``seeds`` seeds ``seed``, ``seed + 1``,
    ...; each seed draws its own teacher, data and init; nan if any run diverged) for each width and learning rate,
    (n_widths, n_lrs), and the lrs."""
    lrs = np.geomspace(1e-4, 1e-1, 13) if lrs is None else np.asarray(lrs, dtype=np.float64)
    if seeds < 1:
        raise ValueError(f"seeds must be >= 1, got {seeds}")
    out = np.empty((len(np.atleast_1d(widths)), lrs.size))
    for i, w in enumerate(np.atleast_1d(widths)):
        for j, lr in enumerate(lrs):
            tails = [
                np.array(_mup_run(int(w), float(lr), param, steps, batch, seed + k)[0][-20:]) for k in range(seeds)
            ]
            ok = all(np.all(np.isfinite(tail)) for tail in tails)
            out[i, j] = float(np.mean([tail.mean() for tail in tails])) if ok else np.nan
    return out, lrs
