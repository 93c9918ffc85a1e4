"""The LoRA layer: :class:`LoRALinear` (frozen W0, merge and unmerge), its gradients, and :func:`train_lora`, which
fits it to a low-rank target under the initialisations of the lesson's "consequences for the initialisation".
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch

from core.device import as_tensor
from core.lora import make_target

INIT_MODES: tuple[str, ...] = ("B0", "zeros", "both_random", "A0")
INIT_LABELS: dict[str, str] = {
    "B0": "B = 0, A random (correct)",
    "zeros": "A = B = 0 (nothing trains)",
    "both_random": "A and B random (changed start)",
    "A0": "A = 0, B random (mirror case)",
}


def lora_scale(alpha: float, r: int, rslora: bool = False) -> float:
    """s = alpha / r (LoRA), or s = alpha / sqrt(r) (rsLoRA, which keeps updates from shrinking at large r)."""
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
        raise ValueError(f"the rank r must be a positive integer, got {r!r}")
    return alpha / math.sqrt(r) if rslora else alpha / r


def _seeded_normal(shape: tuple[int, ...], std: float, generator: torch.Generator, like: torch.Tensor) -> torch.Tensor:
    """Gaussian draws made on the CPU (the same numbers on every device), then moved next to ``like``."""
    x = torch.randn(shape, generator=generator, dtype=torch.float64) * std
    return x.to(device=like.device, dtype=like.dtype)


class LoRALinear(torch.nn.Module):
    """h = W0 x + s B (A x) with W0 (d x k) frozen and A (r x k), B (d x r) trainable.

    ``init``: "B0" (A Gaussian with std 1/sqrt(k), B = 0: the lesson's choice), "zeros" (A = B = 0),
    "both_random" (B Gaussian with std 1/sqrt(r) as well), "A0" (A = 0, B random: the mirror case).
    W0 is a parameter with ``requires_grad=False``, so ``parameters()`` counts it as frozen.
    """

    def __init__(
        self,
        d: int,
        k: int,
        r: int = 8,
        alpha: float = 16.0,
        *,
        W0: torch.Tensor | np.ndarray | None = None,
        init: str = "B0",
        rslora: bool = False,
        seed: int = 0,
    ) -> None:
        super().__init__()
        if init not in INIT_MODES:
            raise ValueError(f"unknown init {init!r}; expected one of {', '.join(INIT_MODES)}")
        if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or not 1 <= r <= min(d, k):
            raise ValueError(f"the rank r must be an integer in 1..min(d, k) = {min(d, k)}, got {r!r}")
        gen = torch.Generator().manual_seed(seed)
        like = as_tensor(0.0)  # core's device and dtype
        if W0 is None:
            W0 = _seeded_normal((d, k), 1.0 / math.sqrt(k), gen, like)  # (d, k)
        W0 = as_tensor(W0, dtype=like.dtype)
        if tuple(W0.shape) != (d, k):
            raise ValueError(f"W0 must have shape ({d}, {k}), got {tuple(W0.shape)}")
        self.d, self.k, self.r, self.alpha, self.rslora, self.init = d, k, int(r), float(alpha), rslora, init
        self.scale = lora_scale(alpha, int(r), rslora)
        self.W0 = torch.nn.Parameter(W0.clone(), requires_grad=False)  # (d, k) frozen
        A = _seeded_normal((r, k), 1.0 / math.sqrt(k), gen, like)  # (r, k)
        B = _seeded_normal((d, r), 1.0 / math.sqrt(r), gen, like)  # (d, r)
        if init in ("zeros", "A0"):
            A = torch.zeros_like(A)
        if init in ("zeros", "B0"):
            B = torch.zeros_like(B)
        self.A = torch.nn.Parameter(A)  # (r, k)
        self.B = torch.nn.Parameter(B)  # (d, r)
        self.merged = False

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """h = x W0^T + s (x A^T) B^T for a batch of rows x (..., k); never forms the d x k matrix B A."""
        base = x @ self.W0.T  # (..., d)
        if self.merged:
            return base
        return base + self.scale * ((x @ self.A.T) @ self.B.T)  # (..., r) -> (..., d)

    @torch.no_grad()
    def delta_weight(self) -> torch.Tensor:
        """Delta W = s B A (d x k), for inspection and merging only."""
        return self.scale * (self.B @ self.A)  # (d, r) @ (r, k) -> (d, k)

    @torch.no_grad()
    def merge(self) -> None:
        """W = W0 + s B A: one matrix again, so inference has no extra latency."""
        if self.merged:
            raise RuntimeError("the adapter is already merged")
        self.W0 += self.delta_weight()
        self.merged = True

    @torch.no_grad()
    def unmerge(self) -> None:
        """W0 = W - s B A: restores the frozen base (up to rounding) and the separate adapter path."""
        if not self.merged:
            raise RuntimeError("the adapter is not merged")
        self.W0 -= self.delta_weight()
        self.merged = False

    def trainable_count(self) -> int:
        return sum(p.numel() for p in self.parameters() if p.requires_grad)

    def frozen_count(self) -> int:
        return sum(p.numel() for p in self.parameters() if not p.requires_grad)


def lora_gradients(
    x: torch.Tensor, g: torch.Tensor, A: torch.Tensor, B: torch.Tensor, scale: float
) -> tuple[torch.Tensor, torch.Tensor]:
    """The gradients theorem, summed over a batch of rows x (n, k) with upstream gradients g = dL/dh (n, d).

        u = A x,    dL/dB = s g u^T,    dL/dA = s B^T g x^T

    Returns (dL/dA (r, k), dL/dB (d, r)). With B = 0 the first is exactly zero.
    """
    u = x @ A.T  # (n, r)
    dB = scale * g.T @ u  # (d, n) @ (n, r) -> (d, r)
    dA = scale * (g @ B).T @ x  # (r, n) @ (n, k) -> (r, k)
    return dA, dB


# ----------------------------------------------------------------------------------------------------------------
# Training the layer under each initialisation


@dataclass(frozen=True)
class TrainConfig:
    """A small LoRA fit: W0 (d x k) frozen, target W0 + Delta W* with rank(Delta W*) = target_rank."""

    d: int = 64
    k: int = 64
    r: int = 4
    alpha: float = 8.0
    rslora: bool = False
    target_rank: int = 4
    n_samples: int = 256
    steps: int = 300
    lr: float = 0.01
    optimizer: str = "adam"  # or "sgd"
    seed: int = 0

    def __post_init__(self) -> None:
        for attr in ("d", "k", "r", "target_rank", "n_samples", "steps"):
            v = getattr(self, attr)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{attr} must be a positive integer, got {v!r}")
        if max(self.d, self.k) > 1024:
            raise ValueError(f"d and k of the training demo must be at most 1024, got {self.d} x {self.k}")
        if self.r > min(self.d, self.k) or self.target_rank > min(self.d, self.k):
            raise ValueError(f"r and target_rank must be at most min(d, k) = {min(self.d, self.k)}")
        if self.optimizer not in ("adam", "sgd"):
            raise ValueError(f"optimizer must be 'adam' or 'sgd', got {self.optimizer!r}")
        if not (math.isfinite(self.lr) and self.lr > 0) or not (math.isfinite(self.alpha) and self.alpha > 0):
            raise ValueError("lr and alpha must be positive numbers")


@dataclass(frozen=True)
class TrainResult:
    """Curves of one fit; index t of each per-step array is the state before update t (the last is the end)."""

    init: str
    loss: np.ndarray  # (steps+1,) mean squared error of h against the target outputs
    norm_A: np.ndarray  # (steps+1,) ||A||_F
    norm_B: np.ndarray  # (steps+1,) ||B||_F
    grad_A0: np.ndarray  # (r, k) dL/dA at step 0
    grad_B0: np.ndarray  # (d, r) dL/dB at step 0
    delta_at_init: float  # max |h - W0 x| over the data at step 0 (0.0 exactly when B A = 0)
    merge_gap: float  # max |merged output - adapter output| after training
    loss_floor: float  # the least loss any rank-r update can reach on this data (Eckart-Young, weighted)
    seconds: float
    device: str

    @property
    def grad_A0_norm(self) -> float:
        """||dL/dA||_F at step 0: exactly 0.0 when B = 0 (dL/dA = s B^T g x^T)."""
        return float(np.linalg.norm(self.grad_A0))

    @property
    def grad_B0_norm(self) -> float:
        """||dL/dB||_F at step 0: non-zero as soon as A x != 0 (dL/dB = s g u^T)."""
        return float(np.linalg.norm(self.grad_B0))


def _training_problem(config: TrainConfig) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """W0 (d x k), Delta W* (d x k, exact rank target_rank, entries of size about 1/sqrt(k)) and inputs X (n x k)."""
    rng = np.random.default_rng(config.seed)
    W0 = rng.standard_normal((config.d, config.k)) / math.sqrt(config.k)
    X = rng.standard_normal((config.n_samples, config.k))
    delta_star = make_target(
        config.d, config.k, "low_rank_noise", config.seed + 1, rank=config.target_rank, noise=0.0
    ) / math.sqrt(config.k)
    return W0, delta_star, X


def loss_floor(delta_star: np.ndarray, X: np.ndarray, r: int) -> float:
    """min over rank-r M of (1 / (n d)) ||X (Delta W* - M)^T||_F^2, the best any rank-r adapter can do.

    With C = X^T X / n the loss is ||(Delta W* - M) C^(1/2)||_F^2 / d, so by Eckart-Young the minimum is
    sum_{i>r} sigma_i(Delta W* C^(1/2))^2 / d.
    """
    n, d = X.shape[0], delta_star.shape[0]
    # ||(Delta W* - M) C^(1/2)||_F = ||(Delta W* - M) X^T||_F / sqrt(n): the singular values of Delta W* X^T suffice
    sigma = np.linalg.svd(delta_star @ X.T, compute_uv=False) / math.sqrt(n)  # (min(d, n),)
    return float(np.sum(sigma[r:] ** 2) / d)


def train_lora(
    config: TrainConfig,
    init: str = "B0",
    progress: Callable[[float], None] | None = None,
) -> TrainResult:
    """Fit a :class:`LoRALinear` on core's device to y = (W0 + Delta W*) x by full-batch gradient steps.

        L = (1 / (n d)) sum_rows ||h - y||^2,    h = W0 x + s B A x

    Records L, ||A||_F and ||B||_F at every step and the gradients at step 0. ``progress(fraction)`` is called
    about 50 times, for a progress bar.
    """
    W0_np, delta_star, X_np = _training_problem(config)
    layer = LoRALinear(
        config.d, config.k, config.r, config.alpha, W0=W0_np, init=init, rslora=config.rslora, seed=config.seed
    )
    X = as_tensor(X_np, dtype=layer.W0.dtype, device=layer.W0.device)  # (n, k)
    Y = X @ as_tensor(W0_np + delta_star, dtype=X.dtype, device=X.device).T  # (n, d)
    params = [layer.A, layer.B]
    opt = torch.optim.Adam(params, lr=config.lr) if config.optimizer == "adam" else torch.optim.SGD(params, config.lr)
    steps = config.steps
    record = torch.zeros((3, steps + 1), dtype=X.dtype, device=X.device)  # loss, ||A||, ||B|| (no sync per step)
    every = max(1, steps // 50)
    start = time.perf_counter()
    with torch.no_grad():
        delta_at_init = float((layer(X) - X @ layer.W0.T).abs().max())
    grad_A0 = grad_B0 = None
    for t in range(steps + 1):
        opt.zero_grad(set_to_none=False)
        h = layer(X)  # (n, d)
        loss = ((h - Y) ** 2).mean()
        with torch.no_grad():
            record[0, t] = loss.detach()
            record[1, t] = torch.linalg.norm(layer.A)
            record[2, t] = torch.linalg.norm(layer.B)
        if t == steps:
            break
        loss.backward()
        if t == 0:
            grad_A0, grad_B0 = layer.A.grad.detach().clone(), layer.B.grad.detach().clone()
        opt.step()
        if progress is not None and (t + 1) % every == 0:
            progress((t + 1) / steps)
    with torch.no_grad():
        adapter_out = layer(X)
        layer.merge()
        merge_gap = float((layer(X) - adapter_out).abs().max())
        layer.unmerge()
    rec = record.cpu().numpy()
    if progress is not None:
        progress(1.0)
    return TrainResult(
        init=init,
        loss=rec[0],
        norm_A=rec[1],
        norm_B=rec[2],
        grad_A0=grad_A0.cpu().to(torch.float64).numpy(),
        grad_B0=grad_B0.cpu().to(torch.float64).numpy(),
        delta_at_init=delta_at_init,
        merge_gap=merge_gap,
        loss_floor=loss_floor(delta_star, X_np, config.r),
        seconds=time.perf_counter() - start,
        device=str(X.device),
    )


def train_all_inits(
    config: TrainConfig,
    inits: Sequence[str] = ("B0", "zeros", "both_random"),
    progress: Callable[[float], None] | None = None,
) -> dict[str, TrainResult]:
    """:func:`train_lora` under each initialisation, on the same W0, data, target and A draw."""
    out: dict[str, TrainResult] = {}
    with _few_threads(config):
        for i, init in enumerate(inits):
            inner = None if progress is None else (lambda f, i=i: progress((i + f) / len(inits)))
            out[init] = train_lora(config, init, inner)
    return out


@contextmanager
def _few_threads(config: TrainConfig) -> Iterator[None]:
    """One CPU thread for a small fit: its matrices are too small to split, and on a busy machine extra threads
    only wait on each other (a 64 x 64 demo ran 10x faster with one thread under load). GPU runs are unaffected."""
    small = config.d * config.k <= 256 * 256 and as_tensor(0.0).device.type == "cpu"
    before = torch.get_num_threads()
    if small:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if small:
            torch.set_num_threads(before)
