"""LoRA's spectrum: the best rank-r approximation of an update Delta W, from one SVD, for every r at once.

Symbols follow the lesson (section 3.5). A frozen weight W0 (d x k) maps x in R^k to R^d; LoRA learns

    h = W0 x + s B A x,    B in R^{d x r},  A in R^{r x k},  s = alpha / r  (rsLoRA: alpha / sqrt(r)),

so the update Delta W = s B A has rank at most r and costs r (d + k) trainable numbers instead of d k.

Here: a reproducible Delta W with a chosen singular-value profile, checked matrices (:func:`validate_matrix`), one
SVD per matrix (:func:`svd`: numpy at the page's sizes, torch on core's device above them) and from it the error of
the best rank-r approximation for every r (:func:`rank_curves`, Eckart-Young), and the block-averaged frames of the r
slider (:func:`display_frames`).
What adapters cost at model scale is :mod:`core.lora_memory`; the LoRA layer and its training is
:mod:`core.lora_layer`; uploads are read by :func:`views.inputs.load_matrix`.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from core.arrays import block_centres, block_edges, block_reduce
from core.device import as_tensor

if TYPE_CHECKING:
    import torch

# ----------------------------------------------------------------------------------------------------------------
# Targets Delta W and their singular values

PROFILES: tuple[str, ...] = ("exponential", "power_law", "flat", "low_rank_noise")
PROFILE_LABELS: dict[str, str] = {
    "exponential": "fast exponential decay",
    "power_law": "slow power law",
    "flat": "flat (no low-rank structure)",
    "low_rank_noise": "low rank plus noise",
}
BASES: tuple[str, ...] = ("random", "smooth")
MAX_SIDE = 4096  # largest d or k accepted for a target or an upload
MIN_SIDE = 2

# A decomposition (the SVD of a d x k matrix, the QR of an n x m one) runs in numpy, LAPACK on the CPU, when its work
# d k min(d, k) (n m^2 for the QR) is at most this, and in torch on core's device above it. Measured on a 2-core CPU
# (numpy 2.4, torch 2.13, float64, n x n, best of 5, numpy / torch): SVD 0.7 / 1.0 ms at n = 64, 4.1 / 3.5 ms at 128,
# 20 / 16 ms at 256, 115 / 85 ms at 512, 580 / 400 ms at 1024; QR 0.2 / 0.3, 1.9 / 0.7, 6.4 / 7.6, 34 / 16 and
# 116 / 72 ms. Up to 256 x 256 (the page's default 64 x 64, its 256 x 256 presets) numpy costs at most a few ms
# more and spares the 1.8 s import of torch; above it torch is faster on a CPU already and much faster on a GPU.
NUMPY_MAX_WORK = 256**3


def _in_numpy(n: int, k: int) -> bool:
    """Whether an n x k decomposition runs in numpy (work n k min(n, k) <= NUMPY_MAX_WORK) rather than torch."""
    return n * k * min(n, k) <= NUMPY_MAX_WORK


def _check_side(name: str, n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise ValueError(f"{name} must be an integer, got {n!r}")
    if not MIN_SIDE <= n <= MAX_SIDE:
        raise ValueError(f"{name} must be between {MIN_SIDE} and {MAX_SIDE}, got {n}")
    return int(n)


def _check_rank(r: object, m: int) -> int:
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)):
        raise ValueError(f"the rank r must be an integer, got {r!r}")
    if not 0 <= r <= m:
        raise ValueError(f"the rank r must be between 0 and min(d, k) = {m}, got {r}")
    return int(r)


def singular_value_profile(
    m: int, profile: str = "exponential", *, decay: float = 5.0, power: float = 0.5, rank: int = 8
) -> np.ndarray:
    """The m singular values sigma_1 >= ... >= sigma_m of a profile, largest equal to 1.

    exponential:     sigma_i = exp(-(i - 1) / decay)      (fast decay; ``decay`` is the e-folding index)
    power_law:       sigma_i = i^(-power)                 (slow decay)
    flat:            sigma_i = 1                          (no low-rank structure)
    low_rank_noise:  sigma_i = 1 for i <= rank, else 0    (the noise is added by :func:`make_target`)
    """
    if profile not in PROFILES:
        raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < 1:
        raise ValueError(f"m must be a positive integer, got {m!r}")
    if not (math.isfinite(decay) and decay > 0):
        raise ValueError(f"decay must be a positive number, got {decay}")
    if not (math.isfinite(power) and power >= 0):
        raise ValueError(f"power must be a non-negative number, got {power}")
    i = np.arange(1, m + 1, dtype=np.float64)  # (m,)
    if profile == "exponential":
        # sigma_i = exp(-(i - 1) / decay)
        return np.exp(-(i - 1.0) / decay)
    if profile == "power_law":
        # sigma_i = i^(-power), computed as exp(-power log i)
        return np.exp(-power * np.log(i))
    if profile == "flat":
        return np.ones(m)
    _check_rank(rank, m)
    return (i <= rank).astype(np.float64)


def haar_columns(G: np.ndarray) -> np.ndarray:
    """The orthonormal Q of G = Q R (n x m, n >= m) with R's diagonal positive: unique, so Haar for a Gaussian G.

    numpy (LAPACK) for small G (:data:`NUMPY_MAX_WORK`), torch on core's device above; both give the same Q up to
    rounding, since the sign fix leaves no freedom.
    """
    if _in_numpy(*G.shape):
        q, rr = np.linalg.qr(G)  # (n, m), (m, m)
        # Q diag(sign(R_ii)): R with a positive diagonal, the draw is Haar and unique
        return q * np.sign(np.diagonal(rr))
    import torch

    q, rr = torch.linalg.qr(as_tensor(G))  # (n, m), (m, m) float64 (float32 on MPS)
    # Q diag(sign(R_ii)): R with a positive diagonal, the draw is Haar and unique
    q = q * torch.sign(torch.diagonal(rr))
    return q.cpu().to(torch.float64).numpy()


def _orthonormal_columns(n: int, m: int, basis: str, rng: np.random.Generator) -> np.ndarray:
    """n x m, orthonormal columns: Haar-random (QR of a Gaussian) or smooth (DCT-II, low frequencies first)."""
    if basis == "random":
        # The Gaussian comes from numpy's seeded generator (the same numbers everywhere); :func:`haar_columns` runs
        # the QR in numpy for small sizes and in torch on core's device for large ones.
        return haar_columns(rng.standard_normal((n, m)))  # (n, m)
    # DCT-II basis vectors cos(pi (t + 1/2) j / n), j = 0..m-1: column j oscillates j / 2 times along the axis
    t = np.arange(n)[:, None] + 0.5  # (n, 1)
    j = np.arange(m)[None, :]  # (1, m)
    q = np.cos(np.pi * t * j / n) * np.sqrt(2.0 / n)  # (n, m)
    q[:, 0] /= np.sqrt(2.0)
    return q * rng.choice([-1.0, 1.0], size=m)  # seeded signs, so the seed still changes the picture


def make_target(
    d: int,
    k: int,
    profile: str = "exponential",
    seed: int = 0,
    *,
    decay: float = 5.0,
    power: float = 0.5,
    rank: int = 8,
    noise: float = 0.3,
    basis: str = "random",
) -> np.ndarray:
    """A reproducible target update Delta W (d x k, float64) with a chosen singular-value profile.

        Delta W = U diag(sigma) V^T (+ N for "low_rank_noise"),   scaled so that ||Delta W||_F = sqrt(d k)

    U (d x m) and V (k x m), m = min(d, k), have orthonormal columns: Haar-random (``basis="random"``), or DCT
    cosines with low frequencies first (``basis="smooth"``, which survives block averaging and looks like an image).
    For "low_rank_noise" the rank-``rank`` signal gets a Gaussian matrix N with ||N||_F = noise ||signal||_F. The
    final scale (root-mean-square entry 1) only sets the colour bar; relative errors do not depend on it.
    The same arguments give the same matrix on every machine, up to rounding (numpy's seeded generator; the QR
    of the random basis runs in numpy at small sizes and in torch on core's device at large ones, see
    :func:`haar_columns`).
    """
    d, k = _check_side("d", d), _check_side("k", k)
    if basis not in BASES:
        raise ValueError(f"unknown basis {basis!r}; expected one of {', '.join(BASES)}")
    if not (math.isfinite(noise) and noise >= 0):
        raise ValueError(f"noise must be a non-negative number, got {noise}")
    m = min(d, k)
    sigma = singular_value_profile(m, profile, decay=decay, power=power, rank=rank)  # (m,)
    rng = np.random.default_rng(seed)
    used = int(np.count_nonzero(sigma))  # only the columns with sigma_i > 0 are needed
    U = _orthonormal_columns(d, used, basis, rng)  # (d, used)
    V = _orthonormal_columns(k, used, basis, rng)  # (k, used)
    delta_w = (U * sigma[:used]) @ V.T  # (d, k)
    if profile == "low_rank_noise" and noise > 0:
        N = rng.standard_normal((d, k))  # (d, k)
        delta_w += N * (noise * np.linalg.norm(delta_w) / np.linalg.norm(N))
    return delta_w * (math.sqrt(d * k) / np.linalg.norm(delta_w))


# ----------------------------------------------------------------------------------------------------------------
# Checked matrices


def validate_matrix(x: object) -> np.ndarray:
    """``x`` as a 2-D finite float64 array of at least 2 x 2 and at most 4096 x 4096; ValueError otherwise."""
    a = np.asarray(x)
    if a.dtype == object or a.dtype.kind in "USV":
        raise ValueError("the matrix must hold numbers only (found text or mixed values)")
    if a.dtype.kind == "c":
        raise ValueError("complex numbers are not supported; upload a real matrix")
    if a.dtype.kind not in "biuf":
        raise ValueError(f"the matrix must hold numbers, found dtype {a.dtype}")
    if a.ndim != 2:
        raise ValueError(f"the matrix must be 2-D (d x k), got {a.ndim}-D with shape {a.shape}")
    d, k = a.shape
    if d < MIN_SIDE or k < MIN_SIDE:
        raise ValueError(f"the matrix must be at least {MIN_SIDE} x {MIN_SIDE}, got {d} x {k} (a vector is 1-D)")
    if d > MAX_SIDE or k > MAX_SIDE:
        raise ValueError(f"the matrix must be at most {MAX_SIDE} x {MAX_SIDE}, got {d} x {k}")
    a = a.astype(np.float64)
    bad = ~np.isfinite(a)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise ValueError(f"the matrix has {int(bad.sum())} non-finite entries (NaN or inf), first at row {i}, col {j}")
    if not np.any(a):
        raise ValueError("the matrix is all zeros: there is nothing to approximate")
    return a


# ----------------------------------------------------------------------------------------------------------------
# One SVD per matrix; every rank from it


@dataclass(frozen=True)
class SVD:
    """Thin SVD Delta W = U diag(S) Vh, as numpy float64 (cheap to cache), plus where, with what and how fast it ran.

    The signs of u_i and v_i (flipped together) depend on the LAPACK driver: what a page shows must not, so it uses
    sign-invariant quantities only (S, the products u_i sigma_i v_i^T, reconstructions, energies).
    """

    U: np.ndarray  # (d, m) orthonormal columns
    S: np.ndarray  # (m,)  sigma_1 >= ... >= sigma_m >= 0
    Vh: np.ndarray  # (m, k) orthonormal rows
    device: str = "cpu"
    seconds: float = 0.0
    library: str = "torch"  # "numpy" or "torch": which one decomposed it

    @property
    def d(self) -> int:
        return self.U.shape[0]

    @property
    def k(self) -> int:
        return self.Vh.shape[1]

    @property
    def m(self) -> int:
        return self.S.shape[0]


def svd(delta_w: np.ndarray, *, dtype: torch.dtype | None = None) -> SVD:
    """The thin SVD of Delta W: ``numpy.linalg.svd`` (float64, CPU) when d k min(d, k) <= :data:`NUMPY_MAX_WORK`,
    else ``torch.linalg.svd`` on core's device (the GPU when there is one).

    Run it once per matrix and cache the result: every rank r is then read off it (:func:`rank_curves`,
    :func:`reconstruct`). ``dtype`` (a torch dtype) asks for torch at any size; torch's default is float64 (float32
    on MPS), and float32 is about twice as fast on a CPU.
    """
    a = validate_matrix(delta_w)
    if dtype is None and _in_numpy(*a.shape):
        start = time.perf_counter()
        U, S, Vh = np.linalg.svd(a, full_matrices=False)  # (d, m), (m,), (m, k)
        return SVD(U=U, S=S, Vh=Vh, device="cpu", seconds=time.perf_counter() - start, library="numpy")
    import torch

    t = as_tensor(a, dtype=dtype)  # (d, k) on core's device
    start = time.perf_counter()
    U, S, Vh = torch.linalg.svd(t, full_matrices=False)  # (d, m), (m,), (m, k)
    if t.device.type == "cuda":
        torch.cuda.synchronize(t.device)
    seconds = time.perf_counter() - start
    to_np = lambda x: x.detach().cpu().to(torch.float64).numpy()  # noqa: E731
    return SVD(U=to_np(U), S=to_np(S), Vh=to_np(Vh), device=str(t.device), seconds=seconds, library="torch")


def reconstruct(svd_result: SVD, r: int) -> np.ndarray:
    """The best rank-r approximation (Eckart-Young): Delta W_r = sum_{i<=r} sigma_i u_i v_i^T = U_r diag(S_r) Vh_r."""
    r = _check_rank(r, svd_result.m)
    return (svd_result.U[:, :r] * svd_result.S[:r]) @ svd_result.Vh[:r]  # (d, r) @ (r, k) -> (d, k)


def lora_factors(svd_result: SVD, r: int) -> tuple[np.ndarray, np.ndarray]:
    """Factors with B A = Delta W_r, sigma split evenly: B = U_r S_r^(1/2) (d x r), A = S_r^(1/2) Vh_r (r x k)."""
    r = _check_rank(r, svd_result.m)
    root = np.sqrt(svd_result.S[:r])  # (r,)
    return svd_result.U[:, :r] * root, root[:, None] * svd_result.Vh[:r]  # (d, r), (r, k)


def best_rank_approximation(delta_w: np.ndarray, r: int) -> np.ndarray:
    """Delta W_r, the best rank-r approximation of Delta W in Frobenius and spectral norm (one SVD; for one r only)."""
    return reconstruct(svd(delta_w), r)


def lora_param_count(d: int, k: int, r: int) -> int:
    """Trainable numbers of a rank-r adapter on a d x k matrix: B (d x r) plus A (r x k) = r (d + k)."""
    for name, n in (("d", d), ("k", k), ("r", r)):
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 0:
            raise ValueError(f"{name} must be a non-negative integer, got {n!r}")
    return int(r) * (int(d) + int(k))


@dataclass(frozen=True)
class RankReadout:
    """The numbers a page shows for one rank r."""

    r: int
    rel_frobenius: float  # ||Delta W - Delta W_r||_F / ||Delta W||_F
    rel_spectral: float  # ||Delta W - Delta W_r||_2 / ||Delta W||_2 = sigma_{r+1} / sigma_1
    energy: float  # sum_{i<=r} sigma_i^2 / sum_i sigma_i^2
    params: int  # r (d + k)
    params_full: int  # d k
    share: float  # r (d + k) / (d k)


@dataclass(frozen=True)
class RankCurves:
    """Error, energy and cost of the best rank-r approximation for every r = 0..m (index r of each array)."""

    r: np.ndarray  # (m+1,) 0..m
    sigma: np.ndarray  # (m,)
    rel_frobenius: np.ndarray  # (m+1,)
    rel_spectral: np.ndarray  # (m+1,)
    energy: np.ndarray  # (m+1,)
    params: np.ndarray  # (m+1,) r (d + k)
    d: int
    k: int
    frobenius_norm: float  # ||Delta W||_F

    @property
    def m(self) -> int:
        return self.sigma.shape[0]

    @property
    def params_full(self) -> int:
        return self.d * self.k

    def readout(self, r: int) -> RankReadout:
        """The values at one rank r (0 <= r <= m)."""
        r = _check_rank(r, self.m)
        return RankReadout(
            r=r,
            rel_frobenius=float(self.rel_frobenius[r]),
            rel_spectral=float(self.rel_spectral[r]),
            energy=float(self.energy[r]),
            params=int(self.params[r]),
            params_full=self.params_full,
            share=float(self.params[r]) / self.params_full,
        )


def rank_curves(svd_result: SVD) -> RankCurves:
    """Eckart-Young for all r at once, from the singular values alone (cumulative sums; no new decomposition).

    ||Delta W - Delta W_r||_F / ||Delta W||_F = sqrt(sum_{i>r} sigma_i^2) / sqrt(sum_i sigma_i^2)
    ||Delta W - Delta W_r||_2 / ||Delta W||_2 = sigma_{r+1} / sigma_1          (0 at r = m)
    energy captured                           = sum_{i<=r} sigma_i^2 / sum_i sigma_i^2
    trainable parameters                      = r (d + k)    against d k
    """
    sigma = svd_result.S  # (m,)
    m, d, k = svd_result.m, svd_result.d, svd_result.k
    s2 = sigma**2  # (m,)
    # tail[r] = sum_{i>r} sigma_i^2, summed from the small end so that the tail keeps its relative precision
    tail = np.concatenate([np.cumsum(s2[::-1])[::-1], [0.0]])  # (m+1,)
    head = np.concatenate([[0.0], np.cumsum(s2)])  # (m+1,)
    total = tail[0]
    if total > 0:
        rel_frobenius = np.sqrt(tail / total)
        energy = head / total
        rel_spectral = np.concatenate([sigma / sigma[0], [0.0]])
    else:  # an all-zero matrix: every rank is exact
        rel_frobenius, rel_spectral, energy = np.zeros(m + 1), np.zeros(m + 1), np.ones(m + 1)
    r = np.arange(m + 1)
    return RankCurves(
        r=r,
        sigma=sigma.copy(),
        rel_frobenius=np.clip(rel_frobenius, 0.0, 1.0),
        rel_spectral=rel_spectral,
        energy=np.clip(energy, 0.0, 1.0),
        params=r * (d + k),
        d=d,
        k=k,
        frobenius_norm=float(np.sqrt(total)),
    )


# ----------------------------------------------------------------------------------------------------------------
# Display frames of the rank slider

DISPLAY_SIDE = 64  # a heatmap of a slider frame has at most this many rows and columns


def slider_ranks(m: int, n_steps: int = 16, include: Iterable[int] = ()) -> np.ndarray:
    """About ``n_steps`` ranks from 0 to m, dense at small r and roughly geometric after, plus ``include``."""
    if m < 1 or n_steps < 2:
        raise ValueError(f"m must be >= 1 and n_steps >= 2, got {m} and {n_steps}")
    extra = np.array([_check_rank(int(r), m) for r in include], dtype=np.int64)
    if m + 1 <= n_steps:
        return np.union1d(np.arange(m + 1), extra)
    count = n_steps - 1
    while True:  # geomspace rounds to repeated small integers; widen it until there are enough distinct ranks
        ranks = np.union1d([0], np.rint(np.geomspace(1, m, count)).astype(np.int64))
        if ranks.shape[0] >= n_steps:
            break
        count += 1
    return np.union1d(ranks, extra)


@dataclass(frozen=True)
class DisplayFrames:
    """Block-averaged Delta W, Delta W_r and residual for the slider's ranks (rows = ranks)."""

    ranks: np.ndarray  # (n,)
    target: np.ndarray  # (D, K)
    approx: np.ndarray  # (n, D, K)
    residual: np.ndarray  # (n, D, K)
    row_centres: np.ndarray  # (D,)
    col_centres: np.ndarray  # (K,)
    d: int
    k: int

    @property
    def averaged(self) -> bool:
        """True when the heatmaps show block averages rather than the entries themselves."""
        return self.target.shape != (self.d, self.k)

    @property
    def block_size(self) -> tuple[int, int]:
        """Largest number of original rows and columns averaged into one displayed cell."""
        return (-(-self.d // self.target.shape[0]), -(-self.k // self.target.shape[1]))


def display_frames(svd_result: SVD, ranks: Sequence[int], max_side: int = DISPLAY_SIDE) -> DisplayFrames:
    """The frames of the r slider, block-averaged to at most max_side x max_side, from the SVD only.

    Block averaging P (.) Q^T is linear, so the averaged rank-r approximation is (P U)_r diag(S_r) (Vh Q^T)_r:
    averaging U's rows and Vh's columns once makes every frame cost a small (D x r) @ (r x K) product.
    """
    m = svd_result.m
    ranks_arr = np.array([_check_rank(int(r), m) for r in ranks], dtype=np.int64)  # (n,)
    Ub = block_reduce(svd_result.U, block_edges(svd_result.d, max_side), axis=0)  # (D, m)
    Vb = block_reduce(svd_result.Vh, block_edges(svd_result.k, max_side), axis=1)  # (m, K)
    target = (Ub * svd_result.S) @ Vb  # (D, K)
    keep = np.arange(m)[None, :] < ranks_arr[:, None]  # (n, m): component i is in frame j when i < r_j
    approx = np.matmul(Ub[None] * (svd_result.S * keep)[:, None, :], Vb)  # (n, D, m) @ (m, K) -> (n, D, K)
    return DisplayFrames(
        ranks=ranks_arr,
        target=target,
        approx=approx,
        residual=target[None] - approx,
        row_centres=block_centres(svd_result.d, max_side),
        col_centres=block_centres(svd_result.k, max_side),
        d=svd_result.d,
        k=svd_result.k,
    )
