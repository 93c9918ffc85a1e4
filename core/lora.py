"""LoRA: the best rank-r approximation of an update, what adapters cost at model scale, and a LoRA layer.

Symbols follow the lesson (section 3.5). A frozen weight W0 (d x k) maps x in R^k to R^d; LoRA learns

    h = W0 x + s B A x,    B in R^{d x r},  A in R^{r x k},  s = alpha / r  (rsLoRA: alpha / sqrt(r)),

so the update Delta W = s B A has rank at most r and costs r (d + k) trainable numbers instead of d k.

Four parts:

* Targets and their spectrum: a reproducible Delta W with a chosen singular-value profile, uploads checked by
  :func:`load_matrix`, one SVD per matrix (:func:`svd`, torch on core's device) and, from it, the error of the best
  rank-r approximation for every r at once (:func:`rank_curves`, Eckart-Young), so that moving r costs nothing.
* Display helpers: block averages of large matrices and the per-r frames of a slider (:func:`display_frames`).
* The memory calculator (:func:`lora_memory`): trainable parameters, their share, and bytes for LoRA, QLoRA and
  full fine-tuning; :data:`PRESET_F` is the lesson's worked example F.
* :class:`LoRALinear` (frozen W0, merge and unmerge) and :func:`train_lora`, which fits it to a low-rank target
  under the initialisations of the lesson's "consequences for the initialisation".
"""

from __future__ import annotations

import io
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

import numpy as np
import torch

from core.device import as_tensor

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


def _orthonormal_columns(n: int, m: int, basis: str, rng: np.random.Generator) -> np.ndarray:
    """n x m, orthonormal columns: Haar-random (QR of a Gaussian) or smooth (DCT-II, low frequencies first)."""
    if basis == "random":
        # The Gaussian comes from numpy's seeded generator (the same numbers everywhere); the QR runs in torch on
        # core's device, which on a CPU is also several times faster than numpy's threaded LAPACK under load.
        G = as_tensor(rng.standard_normal((n, m)))  # (n, m) float64 (float32 on MPS)
        q, rr = torch.linalg.qr(G)  # (n, m), (m, m)
        q = q * torch.sign(torch.diagonal(rr))  # R with a positive diagonal: the draw is Haar and unique
        return q.cpu().to(torch.float64).numpy()
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
    of the random basis runs in torch on core's device).
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
# Uploads


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


def load_matrix(data: bytes | str, filename: str) -> np.ndarray:
    """Parse an uploaded ``.npy`` (bytes) or ``.csv`` / ``.txt`` (text or UTF-8 bytes) into a checked matrix.

    CSV: one matrix row per line, values separated by commas (or by whitespace when there is no comma); lines
    starting with ``#`` are skipped. Every failure is a ValueError whose message can be shown to the user as is.
    """
    name = filename.lower()
    if name.endswith(".npy"):
        if isinstance(data, str):
            raise ValueError("a .npy upload must be binary data")
        try:
            a = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as err:  # pickled object arrays, bad header
            raise ValueError(f"not a readable .npy file of numbers: {err}") from None
        except (OSError, EOFError) as err:
            raise ValueError(f"not a readable .npy file: {err}") from None
        if not isinstance(a, np.ndarray):
            raise ValueError("the .npy file does not hold a single array")
        return validate_matrix(a)
    if name.endswith((".csv", ".txt")):
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise ValueError("the CSV file is not UTF-8 text") from None
        lines = [ln for ln in data.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            raise ValueError("the CSV file is empty")
        delimiter = "," if "," in lines[0] else None
        if len(lines) > MAX_SIDE:
            raise ValueError(f"the matrix must be at most {MAX_SIDE} x {MAX_SIDE}, got {len(lines)} rows")
        try:
            a = np.loadtxt(lines, delimiter=delimiter, dtype=np.float64, ndmin=2)
        except ValueError as err:
            raise ValueError(f"the CSV file is not a rectangular table of numbers: {err}") from None
        return validate_matrix(a)
    raise ValueError(f"unsupported file type {filename!r}: upload a .npy or .csv file")


# ----------------------------------------------------------------------------------------------------------------
# One SVD per matrix; every rank from it


@dataclass(frozen=True)
class SVD:
    """Thin SVD Delta W = U diag(S) Vh, as numpy float64 (cheap to cache), plus where and how fast it ran."""

    U: np.ndarray  # (d, m) orthonormal columns
    S: np.ndarray  # (m,)  sigma_1 >= ... >= sigma_m >= 0
    Vh: np.ndarray  # (m, k) orthonormal rows
    device: str = "cpu"
    seconds: float = 0.0

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
    """The thin SVD of Delta W with ``torch.linalg.svd`` on core's device (the GPU when there is one).

    Run it once per matrix and cache the result: every rank r is then read off it (:func:`rank_curves`,
    :func:`reconstruct`). ``dtype`` defaults to float64 (float32 on MPS); float32 is about twice as fast on a CPU.
    """
    a = validate_matrix(delta_w)
    t = as_tensor(a, dtype=dtype)  # (d, k) on core's device
    start = time.perf_counter()
    U, S, Vh = torch.linalg.svd(t, full_matrices=False)  # (d, m), (m,), (m, k)
    if t.device.type == "cuda":
        torch.cuda.synchronize(t.device)
    seconds = time.perf_counter() - start
    to_np = lambda x: x.detach().cpu().to(torch.float64).numpy()  # noqa: E731
    return SVD(U=to_np(U), S=to_np(S), Vh=to_np(Vh), device=str(t.device), seconds=seconds)


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
# Display: block averages and slider frames

DISPLAY_SIDE = 64  # a heatmap of a slider frame has at most this many rows and columns


def block_edges(n: int, max_blocks: int = DISPLAY_SIDE) -> np.ndarray:
    """Edges 0 = e_0 < e_1 < ... < e_B = n of B = min(n, max_blocks) blocks whose sizes differ by at most one."""
    if n < 1 or max_blocks < 1:
        raise ValueError(f"n and max_blocks must be positive, got {n} and {max_blocks}")
    blocks = min(n, max_blocks)
    return (np.arange(blocks + 1) * n) // blocks  # (B+1,)


def _average_along(x: np.ndarray, edges: np.ndarray, axis: int) -> np.ndarray:
    sums = np.add.reduceat(x, edges[:-1], axis=axis)
    shape = [1] * x.ndim
    shape[axis] = edges.shape[0] - 1
    return sums / np.diff(edges).reshape(shape)


def block_average(x: np.ndarray, max_side: int = DISPLAY_SIDE) -> np.ndarray:
    """Average the last two axes of ``x`` (..., d, k) over near-equal blocks, to at most max_side x max_side."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"block_average needs at least 2 dimensions, got shape {x.shape}")
    x = _average_along(x, block_edges(x.shape[-2], max_side), axis=x.ndim - 2)  # (..., D, k)
    return _average_along(x, block_edges(x.shape[-1], max_side), axis=x.ndim - 1)  # (..., D, K)


def block_centres(n: int, max_side: int = DISPLAY_SIDE) -> np.ndarray:
    """Centre of each display block in the original 0-based index, for heatmap axes."""
    e = block_edges(n, max_side)
    return (e[:-1] + e[1:] - 1) / 2.0


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
    Ub = _average_along(svd_result.U, block_edges(svd_result.d, max_side), axis=0)  # (D, m)
    Vb = _average_along(svd_result.Vh, block_edges(svd_result.k, max_side), axis=1)  # (m, K)
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


# ----------------------------------------------------------------------------------------------------------------
# What LoRA costs at model scale

ADAPTABLE: tuple[str, ...] = ("q", "k", "v", "o", "gate", "up", "down")
# QLoRA's NF4 with double quantisation (Dettmers et al. 2023), bits per parameter: the 4-bit code, plus one absmax
# per block of 64 weights stored in fp8 (8/64), plus one fp32 constant per 256 of those blocks (32/(64 * 256)).
NF4_BLOCK, NF4_SECOND_BLOCK = 64, 256
NF4_BITS_PER_PARAM = 4.0 + 8.0 / NF4_BLOCK + 32.0 / (NF4_BLOCK * NF4_SECOND_BLOCK)  # = 4.127
BASE_BYTES: dict[str, float] = {  # frozen base, bytes/param
    "fp32": 4.0,
    "bf16": 2.0,
    "int8": 1.0,
    "nf4": NF4_BITS_PER_PARAM / 8.0,
}
TRAINING_BYTES_PER_PARAM = 16  # bf16 weight 2 + bf16 grad 2 + fp32 master 4 + Adam m 4 + Adam v 4


@dataclass(frozen=True)
class ModelShape:
    """The shape of a decoder-only transformer, as far as LoRA's accounting needs it.

    kv_width = (number of KV heads) x (head dim): equal to ``hidden`` for full multi-head attention, smaller with
    grouped-query attention. ``n_params`` is the model's total parameter count N; None estimates it from the shape.
    """

    name: str = "custom"
    hidden: int = 4096
    layers: int = 32
    intermediate: int = 11008
    kv_width: int = 4096
    vocab: int = 32000
    n_params: float | None = None

    def __post_init__(self) -> None:
        for attr in ("hidden", "layers", "intermediate", "kv_width", "vocab"):
            v = getattr(self, attr)
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
                raise ValueError(f"{attr} must be a positive integer, got {v!r}")
        if self.n_params is not None and not (math.isfinite(self.n_params) and self.n_params > 0):
            raise ValueError(f"n_params must be a positive number or None, got {self.n_params!r}")


def matrix_shapes(shape: ModelShape) -> dict[str, tuple[int, int]]:
    """(d_out, d_in) of each linear map of one layer: attention q, k, v, o and the gated MLP's gate, up, down."""
    h, kv, ff = shape.hidden, shape.kv_width, shape.intermediate
    return {"q": (h, h), "k": (kv, h), "v": (kv, h), "o": (h, h), "gate": (ff, h), "up": (ff, h), "down": (h, ff)}


def estimate_n_params(shape: ModelShape) -> int:
    """N of a Llama-style model: layers x (7 matrices + 2 norms) + untied input and output embeddings + final norm."""
    per_layer = sum(a * b for a, b in matrix_shapes(shape).values()) + 2 * shape.hidden
    return shape.layers * per_layer + 2 * shape.vocab * shape.hidden + shape.hidden


@dataclass(frozen=True)
class LoraMemory:
    """What a LoRA configuration trains and the memory it needs (bytes; activations are not included)."""

    per_matrix: dict[str, int]  # r (d_out + d_in) for each adapted matrix of one layer
    per_layer: int
    trainable: int  # n = layers x per_layer
    n_params: float  # N
    share: float  # n / N
    scale: float  # s = alpha / r, or alpha / sqrt(r) with rsLoRA
    base_bytes: float  # frozen base: N x bytes of its format
    adapter_state_bytes: float  # 16 n: adapter weights, gradients and Adam states
    lora_total_bytes: float  # base + adapter states
    full_ft_bytes: float  # 16 N: full fine-tuning's weights, gradients and Adam states
    checkpoint_bytes: float  # what one adapter file stores: n x checkpoint bytes/param
    full_checkpoint_bytes: float  # a full fine-tuned copy: N x checkpoint bytes/param
    base_format: str = "bf16"
    notes: tuple[str, ...] = field(default=())


def lora_memory(
    shape: ModelShape,
    targets: Iterable[str],
    r: int,
    *,
    alpha: float = 16.0,
    rslora: bool = False,
    base_format: str = "bf16",
    bytes_per_trainable: float = TRAINING_BYTES_PER_PARAM,
    checkpoint_bytes_per_param: float = 2.0,
) -> LoraMemory:
    """Trainable parameters and memory of LoRA on ``targets`` (a subset of q, k, v, o, gate, up, down).

    per matrix:    r (d_out + d_in)
    trainable:     n = layers x sum over adapted matrices
    share:         n / N
    LoRA memory:   N x (2 bytes bf16, or 4.127 bits = 0.516 bytes NF4 for QLoRA) + 16 n
    full FT:       16 N      (bf16 weights and gradients, fp32 master weights, two Adam moments)
    checkpoint:    n x 2 bytes (bf16 adapter)  against N x 2 bytes for a full copy
    """
    chosen = tuple(dict.fromkeys(targets))
    unknown = [t for t in chosen if t not in ADAPTABLE]
    if unknown:
        raise ValueError(f"unknown matrices {unknown}; choose among {', '.join(ADAPTABLE)}")
    if isinstance(r, bool) or not isinstance(r, (int, np.integer)) or r < 1:
        raise ValueError(f"the rank r must be a positive integer, got {r!r}")
    if base_format not in BASE_BYTES:
        raise ValueError(f"unknown base format {base_format!r}; expected one of {', '.join(BASE_BYTES)}")
    if not (math.isfinite(alpha) and alpha > 0):
        raise ValueError(f"alpha must be a positive number, got {alpha}")
    shapes = matrix_shapes(shape)
    per_matrix = {t: lora_param_count(shapes[t][0], shapes[t][1], int(r)) for t in chosen}
    per_layer = sum(per_matrix.values())
    n = shape.layers * per_layer
    N = float(shape.n_params) if shape.n_params is not None else float(estimate_n_params(shape))
    base_bytes = N * BASE_BYTES[base_format]
    adapter_state_bytes = bytes_per_trainable * n
    notes = []
    too_big = [t for t in chosen if r > min(shapes[t])]
    if too_big:
        notes.append(f"r = {r} exceeds min(d_out, d_in) of {', '.join(too_big)}: the adapter cannot gain rank there")
    if n > N:
        notes.append("the adapters have more parameters than the model")
    return LoraMemory(
        per_matrix=per_matrix,
        per_layer=per_layer,
        trainable=n,
        n_params=N,
        share=n / N,
        scale=alpha / math.sqrt(r) if rslora else alpha / r,
        base_bytes=base_bytes,
        adapter_state_bytes=adapter_state_bytes,
        lora_total_bytes=base_bytes + adapter_state_bytes,
        full_ft_bytes=TRAINING_BYTES_PER_PARAM * N,
        checkpoint_bytes=checkpoint_bytes_per_param * n,
        full_checkpoint_bytes=checkpoint_bytes_per_param * N,
        base_format=base_format,
        notes=tuple(notes),
    )


LLAMA2_7B = ModelShape(name="Llama-2-7B", hidden=4096, layers=32, intermediate=11008, kv_width=4096, n_params=7e9)
LLAMA3_8B = ModelShape(name="Llama-3-8B (GQA)", hidden=4096, layers=32, intermediate=14336, kv_width=1024, vocab=128256)
LLAMA_65B = ModelShape(name="LLaMA-65B", hidden=8192, layers=80, intermediate=22016, kv_width=8192, n_params=65e9)
MODEL_PRESETS: dict[str, ModelShape] = {s.name: s for s in (LLAMA2_7B, LLAMA3_8B, LLAMA_65B)}

# Worked example F: r = 8 on W_q, W_k, W_v, W_o of a 7 B Llama-2 shape, frozen base in bf16.
PRESET_F: dict[str, object] = {"shape": LLAMA2_7B, "targets": ("q", "k", "v", "o"), "r": 8, "alpha": 16.0}
# QLoRA's headline: a 65 B model with a 4-bit base and r = 64 adapters on every linear layer, on one 48 GB GPU.
PRESET_QLORA_65B: dict[str, object] = {
    "shape": LLAMA_65B,
    "targets": ADAPTABLE,
    "r": 64,
    "alpha": 16.0,
    "base_format": "nf4",
}


# ----------------------------------------------------------------------------------------------------------------
# The LoRA layer and its gradients

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


def clamp_whole(value: float | None, name: str, lo: int, hi: int, default: int) -> tuple[int, list[str]]:
    """A whole number in lo..hi from a (float) input, with notes for the page when it had to be changed.

    None or a non-finite value gives ``default``; a fraction is rounded; a value outside lo..hi is clamped.
    """
    if lo > hi:
        raise ValueError(f"empty range {lo}..{hi} for {name}")
    if value is None or not math.isfinite(float(value)):
        return default, [f"{name} must be a number; using {default}."]
    notes = []
    n = round(float(value))
    if n != float(value):
        notes.append(f"{name} = {value:g} is not a whole number; rounded to {n}.")
    if not lo <= n <= hi:
        clamped = min(max(n, lo), hi)
        notes.append(f"{name} = {n} must lie between {lo} and {hi}; using {clamped}.")
        n = clamped
    return int(n), notes


__all__ = [
    "ADAPTABLE",
    "BASE_BYTES",
    "INIT_LABELS",
    "INIT_MODES",
    "LLAMA2_7B",
    "LLAMA3_8B",
    "LLAMA_65B",
    "MODEL_PRESETS",
    "NF4_BITS_PER_PARAM",
    "PRESET_F",
    "PRESET_QLORA_65B",
    "PROFILES",
    "PROFILE_LABELS",
    "SVD",
    "DisplayFrames",
    "LoRALinear",
    "LoraMemory",
    "ModelShape",
    "RankCurves",
    "RankReadout",
    "TrainConfig",
    "TrainResult",
    "best_rank_approximation",
    "block_average",
    "block_centres",
    "block_edges",
    "clamp_whole",
    "display_frames",
    "estimate_n_params",
    "load_matrix",
    "lora_factors",
    "lora_gradients",
    "lora_memory",
    "lora_param_count",
    "lora_scale",
    "loss_floor",
    "make_target",
    "matrix_shapes",
    "rank_curves",
    "reconstruct",
    "singular_value_profile",
    "slider_ranks",
    "svd",
    "train_all_inits",
    "train_lora",
    "validate_matrix",
]
