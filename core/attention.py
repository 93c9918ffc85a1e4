"""Scaled dot-product attention from first principles: the weights, the sqrt(d_k) scale, causal masks, KV heads
(MHA, GQA, MQA), the KV-cache size, and a small seeded toy model whose heads a page can draw as heatmaps.

The one equation of the page::

    Attention(Q, K, V) = softmax(Q K^T · scale + M) V,   scale = 1/sqrt(d_k),   M_ij = -inf where j may not be seen

Tensors follow the (..., heads, tokens, d_k) layout of nanoGPT. Functions given tensors compute on their device;
anything else becomes a tensor on core's device (:mod:`core.device`).
"""

from __future__ import annotations

import functools
import math
import re
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
import torch

from core.device import as_tensor, default_dtype, get_device

# ---------------------------------------------------------------------------------------------------------------
# The scale
# ---------------------------------------------------------------------------------------------------------------

ScaleChoice = Literal["sqrt_dk", "none", "sqrt_dmodel"]
SCALE_CHOICES: tuple[str, ...] = ("sqrt_dk", "none", "sqrt_dmodel")
SCALE_LABELS: dict[str, str] = {
    "sqrt_dk": "1/√d_k (correct)",
    "none": "none (no scale)",
    "sqrt_dmodel": "1/√d_model (the trap)",
}


def resolve_scale(choice: str, d_k: int, d_model: int | None = None, temperature: float = 1.0) -> float:
    """The number the logits q·k are multiplied by: a scale choice divided by a softmax temperature.

    scale = 1/sqrt(d_k)      (correct: the dot product sums d_k terms)
          = 1                (none: logit variance grows like d_k)
          = 1/sqrt(d_model)  (the trap: the wrong dimension, too small when there are several heads)
    multiplier = scale / temperature
    """
    if choice not in SCALE_CHOICES:
        raise ValueError(f"scale choice {choice!r}: expected one of {', '.join(SCALE_CHOICES)}")
    _check_positive_int("d_k", d_k)
    if not (isinstance(temperature, int | float) and math.isfinite(temperature) and temperature > 0):
        raise ValueError(f"temperature must be a finite number > 0, got {temperature!r}")
    if choice == "sqrt_dk":
        scale = 1.0 / math.sqrt(d_k)
    elif choice == "none":
        scale = 1.0
    else:
        if d_model is None:
            raise ValueError("the 1/sqrt(d_model) scale needs d_model")
        _check_positive_int("d_model", d_model)
        scale = 1.0 / math.sqrt(d_model)
    return scale / temperature


def expected_logit_variance(
    d_k: Any, choice: str = "sqrt_dk", d_model: int | None = None, temperature: float = 1.0
) -> np.ndarray:
    """Variance of q·k · multiplier for q, k with independent unit-variance components.

    Var(q·k) = sum_{i=1..d_k} Var(q_i k_i) = d_k        so    Var(multiplier · q·k) = d_k · multiplier²
    """
    d = np.asarray(d_k, dtype=float)
    if np.any(d < 1):
        raise ValueError("d_k must be >= 1")
    # multiplier² · d_k, with multiplier = scale / temperature  (1/sqrt(d_k) gives 1/temperature²)
    if choice == "sqrt_dk":
        return np.full_like(d, 1.0 / temperature**2)
    return d * resolve_scale(choice, 1, d_model, temperature) ** 2


# ---------------------------------------------------------------------------------------------------------------
# Attention itself
# ---------------------------------------------------------------------------------------------------------------

# Queries are processed in blocks when the score matrix would be larger than this (rows are independent, so the
# result is the same; only the peak memory changes).
SCORE_BUDGET_BYTES = 256 * 2**20


def _check_positive_int(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
        raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")


def _tensors(*xs: Any) -> list[torch.Tensor]:
    """The inputs as floating tensors of one dtype on one device (tensors keep theirs; the rest go to core's)."""
    device = next((x.device for x in xs if isinstance(x, torch.Tensor)), None) or get_device()
    out = [x if isinstance(x, torch.Tensor) else as_tensor(x, device=device) for x in xs]
    if any(t.device != device for t in out):
        raise ValueError(f"all tensors must be on one device, got {sorted({str(t.device) for t in out})}")
    dtype = out[0].dtype
    for t in out[1:]:
        dtype = torch.promote_types(dtype, t.dtype)
    if not dtype.is_floating_point:
        dtype = default_dtype(device)
    return [t.to(dtype) for t in out]


def _check_shapes(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor | None = None) -> None:
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t is not None and t.dim() < 2:
            raise ValueError(f"{name} must have shape (..., tokens, d); got {tuple(t.shape)}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k need the same last dimension d_k, got {q.shape[-1]} and {k.shape[-1]}")
    if q.shape[-1] < 1:
        raise ValueError("d_k must be >= 1")
    if k.shape[-2] < 1:
        raise ValueError("need at least one key token")
    if v is not None and v.shape[-2] != k.shape[-2]:
        raise ValueError(f"k and v need the same number of tokens, got {k.shape[-2]} and {v.shape[-2]}")


def _scale_value(scale: float | None, d_k: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d_k)
    if isinstance(scale, bool) or not isinstance(scale, int | float | np.floating) or not math.isfinite(scale):
        raise ValueError(f"scale must be a finite number, got {scale!r}")
    if scale < 0:
        raise ValueError(f"scale must be >= 0, got {scale!r}")
    return float(scale)


def repeat_kv(kv: torch.Tensor, query_heads: int) -> torch.Tensor:
    """Share each K (or V) head with a group of query heads: GQA's one line, ``repeat_interleave`` on the heads.

    kv has shape (..., kv_heads, tokens, d); the result (..., query_heads, tokens, d), where query head h reads
    KV head h // (query_heads / kv_heads). kv_heads = query_heads is MHA (nothing to do), kv_heads = 1 is MQA.
    """
    if kv.dim() < 3:
        raise ValueError(f"expected (..., kv_heads, tokens, d), got shape {tuple(kv.shape)}")
    kv_heads = kv.shape[-3]
    if kv_heads < 1 or query_heads % kv_heads:
        raise ValueError(f"{kv_heads} KV heads do not divide {query_heads} query heads evenly")
    n_rep = query_heads // kv_heads
    return kv if n_rep == 1 else kv.repeat_interleave(n_rep, dim=-3)  # (..., query_heads, tokens, d)


def _match_heads(q: torch.Tensor, kv: torch.Tensor) -> torch.Tensor:
    if q.dim() >= 3 and kv.dim() >= 3 and kv.shape[-3] != q.shape[-3]:
        return repeat_kv(kv, q.shape[-3])
    return kv


def causal_mask(query_tokens: int, key_tokens: int | None = None, device: Any = None) -> torch.Tensor:
    """Boolean (T_q, T_k) mask, True where query i may look at key j.

        allowed_ij = [ j <= i + (T_k - T_q) ]

    With T_q = T_k this is the lower triangle. With a KV cache the T_q new queries are the *last* T_q positions of
    the T_k keys, so the diagonal moves right by T_k - T_q (a plain tril there is the classic decoding bug).
    """
    key_tokens = query_tokens if key_tokens is None else key_tokens
    _check_positive_int("query_tokens", query_tokens)
    _check_positive_int("key_tokens", key_tokens)
    if query_tokens > key_tokens:
        raise ValueError(f"a causal mask needs query_tokens <= key_tokens, got {query_tokens} > {key_tokens}")
    ones = torch.ones(query_tokens, key_tokens, dtype=torch.bool, device=device)
    return torch.tril(ones, diagonal=key_tokens - query_tokens)  # (T_q, T_k)


def _scores(q: torch.Tensor, k: torch.Tensor, s: float, causal: bool, offset: int = 0) -> torch.Tensor:
    """Logits Q K^T · scale, with -inf where key j lies after query row i shifted by offset (j > i + offset)."""
    # S = Q K^T · scale  (scaling q costs T·d_k multiplications instead of T²)
    S = (q * s) @ k.transpose(-2, -1)  # (..., H, T_q, T_k)
    if causal:
        i = torch.arange(S.shape[-2], device=S.device)[:, None]  # (T_q, 1)
        j = torch.arange(S.shape[-1], device=S.device)[None, :]  # (1, T_k)
        # M_ij = -inf for j > i + offset, added before the softmax: e^-inf = 0 leaves the denominator alone
        S.masked_fill_(j > i + offset, float("-inf"))
    return S


def attention_logits(q: Any, k: Any, scale: float | None = None) -> torch.Tensor:
    """The raw scaled logits Q K^T · scale, before any mask, shape (..., heads, T_q, T_k)."""
    q, k = _tensors(q, k)
    _check_shapes(q, k)
    k = _match_heads(q, k)
    return _scores(q, k, _scale_value(scale, q.shape[-1]), False)


def attention_weights(q: Any, k: Any, scale: float | None = None, causal: bool = False) -> torch.Tensor:
    """The attention matrix A = softmax(Q K^T · scale + M), shape (..., heads, T_q, T_k); each row sums to 1.

    q: (..., heads, T_q, d_k); k: (..., kv_heads, T_k, d_k) with kv_heads dividing heads (GQA/MQA repeat the KV
    heads). scale defaults to 1/sqrt(d_k). causal adds -inf above the (bottom-right aligned) diagonal.
    """
    q, k = _tensors(q, k)
    _check_shapes(q, k)
    k = _match_heads(q, k)  # (..., H, T_k, d_k)
    if causal and q.shape[-2] > k.shape[-2]:
        raise ValueError(f"causal attention needs T_q <= T_k, got {q.shape[-2]} > {k.shape[-2]}")
    S = _scores(q, k, _scale_value(scale, q.shape[-1]), causal, k.shape[-2] - q.shape[-2])  # (..., H, T_q, T_k)
    # A = softmax(S) along the keys (torch subtracts the row maximum, so large logits do not overflow)
    return torch.softmax(S, dim=-1)


def attention(
    q: Any, k: Any, v: Any, scale: float | None = None, causal: bool = False, query_block: int | None = None
) -> torch.Tensor:
    """Attention(Q, K, V) = softmax(Q K^T · scale + M) V, shape (..., heads, T_q, d_v).

    Same conventions as :func:`attention_weights`; v: (..., kv_heads, T_k, d_v). When the score matrix would
    exceed SCORE_BUDGET_BYTES the queries are processed ``query_block`` rows at a time (chosen automatically when
    None): rows of a softmax are independent, so this is exact. Under the causal mask each block reads only the
    keys it may see.
    """
    q, k, v = _tensors(q, k, v)
    _check_shapes(q, k, v)
    k, v = _match_heads(q, k), _match_heads(q, v)  # (..., H, T_k, d)
    T_q, T_k = q.shape[-2], k.shape[-2]
    if causal and T_q > T_k:
        raise ValueError(f"causal attention needs T_q <= T_k, got {T_q} > {T_k}")
    s = _scale_value(scale, q.shape[-1])
    rows_other = max(1, q[..., 0, 0].numel()) * T_k * q.element_size()  # bytes of one score row over all heads
    if query_block is None:
        query_block = max(1, min(T_q, SCORE_BUDGET_BYTES // rows_other))
    _check_positive_int("query_block", query_block)
    blocks = []
    for start in range(0, T_q, query_block):  # loops over blocks of rows, not over elements
        stop = min(start + query_block, T_q)
        keys = stop + (T_k - T_q) if causal else T_k  # later keys are all masked for these rows
        S = _scores(q[..., start:stop, :], k[..., :keys, :], s, causal, start + T_k - T_q)  # (..., H, rows, keys)
        # y = A V with A = softmax(S)
        blocks.append(torch.softmax(S, dim=-1) @ v[..., :keys, :])  # (..., H, rows, d_v)
    return blocks[0] if len(blocks) == 1 else torch.cat(blocks, dim=-2)


def masked_after_softmax_weights(q: Any, k: Any, scale: float | None = None) -> torch.Tensor:
    """The classic causal-mask bug: softmax over *all* keys, then multiply the future positions by 0.

        A_bug = softmax(Q K^T · scale) ⊙ tril     row sums = 1 - (mass the future took) < 1

    The future keys still sat in the softmax denominator, so each surviving row is scaled down by a different
    amount. Shape (..., heads, T_q, T_k).
    """
    q, k = _tensors(q, k)
    _check_shapes(q, k)
    k = _match_heads(q, k)
    P = torch.softmax(_scores(q, k, _scale_value(scale, q.shape[-1]), False), dim=-1)  # (..., H, T_q, T_k)
    return P * causal_mask(q.shape[-2], k.shape[-2], device=P.device)  # (..., H, T_q, T_k)


def row_entropy(weights: Any) -> torch.Tensor:
    """Entropy of each attention row in nats, H = -sum_j A_ij log A_ij (0 log 0 = 0); shape (..., T_q)."""
    (A,) = _tensors(weights)
    # H = -sum_j A_ij log A_ij
    return -torch.special.xlogy(A, A).sum(dim=-1)


@dataclass(frozen=True)
class MaskComparison:
    """The correct and the buggy causal weights of the same logits, with their row sums (numpy, float64)."""

    correct: np.ndarray  # (..., T, T)
    buggy: np.ndarray  # (..., T, T)
    correct_row_sums: np.ndarray  # (..., T), all 1
    buggy_row_sums: np.ndarray  # (..., T), below 1 except the last row

    @property
    def correct_sum_error(self) -> float:
        """Largest |row sum - 1| of the correct weights (rounding only)."""
        return float(np.abs(self.correct_row_sums - 1).max())

    @property
    def buggy_sum_range(self) -> tuple[float, float]:
        """Smallest and largest row sum of the buggy weights (the largest is the last row's 1)."""
        return float(self.buggy_row_sums.min()), float(self.buggy_row_sums.max())


def mask_comparison(q: Any, k: Any, scale: float | None = None) -> MaskComparison:
    """Correct (-inf before the softmax) vs buggy (x 0 after the softmax) causal weights for the same q, k."""
    correct = attention_weights(q, k, scale=scale, causal=True)
    buggy = masked_after_softmax_weights(q, k, scale=scale)
    to_np = lambda t: t.detach().cpu().double().numpy()  # noqa: E731
    return MaskComparison(to_np(correct), to_np(buggy), to_np(correct.sum(-1)), to_np(buggy.sum(-1)))


# ---------------------------------------------------------------------------------------------------------------
# Why sqrt(d_k): statistics of random logits
# ---------------------------------------------------------------------------------------------------------------

DEFAULT_DK_VALUES: tuple[int, ...] = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)


@dataclass(frozen=True)
class LogitStatistics:
    """Logit variance and softmax saturation against d_k, for each scale choice (arrays aligned with d_k)."""

    d_k: np.ndarray  # (n,)
    tokens: int
    d_model: int
    temperature: float
    variance: dict[str, np.ndarray]  # measured Var(logit) per scale choice
    expected_variance: dict[str, np.ndarray]  # d_k · multiplier²
    entropy: dict[str, np.ndarray]  # mean row entropy, nats
    max_weight: dict[str, np.ndarray]  # mean of each row's largest weight (1 = one-hot)
    max_entropy: float  # log(tokens): a uniform row


def logit_statistics(
    d_k_values: Sequence[int] = DEFAULT_DK_VALUES,
    tokens: int = 64,
    samples: int = 8,
    d_model: int | None = None,
    temperature: float = 1.0,
    seed: int = 0,
    device: Any = None,
) -> LogitStatistics:
    """Measure Var(logit) and row entropy for random q, k ~ N(0, 1) (unit-variance components) at each d_k.

    The d_k-dimensional q, k are the first d_k components of one draw, so the curves are smooth in d_k. d_model
    (for the 1/sqrt(d_model) trap) defaults to the largest d_k.

        logit = multiplier · sum_{i<=d_k} q_i k_i,   Var = d_k · multiplier²,   H(row) = -sum_j A_j log A_j
    """
    d = np.asarray(d_k_values)
    if d.ndim != 1 or d.size == 0 or not np.issubdtype(d.dtype, np.integer) or np.any(d < 1):
        raise ValueError("d_k_values must be a non-empty list of whole numbers >= 1")
    _check_positive_int("tokens", tokens)
    _check_positive_int("samples", samples)
    d_model = int(d.max()) if d_model is None else d_model
    _check_positive_int("d_model", d_model)
    device = torch.device(device or get_device())
    gen = torch.Generator().manual_seed(seed)  # drawn on the CPU, so every device sees the same numbers
    q = as_tensor(torch.randn(samples, tokens, int(d.max()), generator=gen, dtype=torch.float64), device=device)
    k = as_tensor(torch.randn(samples, tokens, int(d.max()), generator=gen, dtype=torch.float64), device=device)
    variance, expected, entropy, max_weight = {}, {}, {}, {}
    for choice in SCALE_CHOICES:
        variance[choice], entropy[choice], max_weight[choice] = (np.empty(d.size) for _ in range(3))
        expected[choice] = expected_logit_variance(d, choice, d_model, temperature)
    for n, d_k in enumerate(d.tolist()):  # a loop over the few d_k values, not over data
        raw = q[..., :d_k] @ k[..., :d_k].transpose(-2, -1)  # (S, T, T)
        for choice in SCALE_CHOICES:
            logits = raw * resolve_scale(choice, d_k, d_model, temperature)  # (S, T, T)
            log_A = torch.log_softmax(logits, dim=-1)  # (S, T, T)
            variance[choice][n] = logits.var().item()
            # H = -sum_j A_j log A_j, averaged over rows
            entropy[choice][n] = -(log_A.exp() * log_A).sum(-1).mean().item()
            max_weight[choice][n] = log_A.max(dim=-1).values.exp().mean().item()
    return LogitStatistics(d, tokens, d_model, temperature, variance, expected, entropy, max_weight, math.log(tokens))


# ---------------------------------------------------------------------------------------------------------------
# The KV cache
# ---------------------------------------------------------------------------------------------------------------


def kv_cache_bytes(
    layers: Any, kv_heads: Any, head_dim: Any, bytes_per_value: Any, tokens: Any = 1, batch: Any = 1
) -> Any:
    """Bytes of K and V kept for decoding:

        bytes = 2 · L · K · H · bytes_per_value · tokens · batch

    (2 for K and V, L layers, K = KV heads, not query heads, H = head dim). Whole numbers give an int; numpy arrays
    broadcast and give an int64 array. A fractional bytes_per_value (0.5 for 4-bit) is rounded up to whole bytes.
    """
    args = {"layers": layers, "kv_heads": kv_heads, "head_dim": head_dim, "tokens": tokens, "batch": batch}
    arrays = any(isinstance(a, np.ndarray) for a in (*args.values(), bytes_per_value))
    for name, value in args.items():
        a = np.asarray(value)
        if not np.issubdtype(a.dtype, np.integer) or np.any(a < (0 if name in ("tokens", "batch") else 1)):
            raise ValueError(f"{name} must be whole numbers >= {0 if name in ('tokens', 'batch') else 1}")
    b = np.asarray(bytes_per_value, dtype=float)
    if not np.all(np.isfinite(b)) or np.any(b <= 0):
        raise ValueError(f"bytes_per_value must be > 0, got {bytes_per_value!r}")
    if not arrays:
        # exact integer arithmetic (Python ints do not overflow)
        values = 2 * int(layers) * int(kv_heads) * int(head_dim) * int(tokens) * int(batch)
        if float(bytes_per_value).is_integer():
            return values * int(bytes_per_value)
        return math.ceil(values * float(bytes_per_value))
    values = 2 * np.asarray(layers, np.int64) * kv_heads * head_dim * np.asarray(tokens, np.int64) * batch
    return np.ceil(values * b).astype(np.int64)


@dataclass(frozen=True)
class KVCacheShape:
    """The attention shape that sets a model's KV cache."""

    name: str
    layers: int
    query_heads: int
    kv_heads: int
    head_dim: int
    bytes_per_value: float = 2  # bf16

    def bytes_per_token(self, kv_heads: int | None = None) -> int:
        """KV-cache bytes per token per sequence (with another number of KV heads when given)."""
        return kv_cache_bytes(self.layers, kv_heads or self.kv_heads, self.head_dim, self.bytes_per_value)


KV_PRESETS: dict[str, KVCacheShape] = {
    "Llama-3-70B": KVCacheShape("Llama-3-70B", layers=80, query_heads=64, kv_heads=8, head_dim=128),
    "Llama-3-8B": KVCacheShape("Llama-3-8B", layers=32, query_heads=32, kv_heads=8, head_dim=128),
    "Llama-2-7B": KVCacheShape("Llama-2-7B", layers=32, query_heads=32, kv_heads=32, head_dim=128),
}


def attention_variants(shape: KVCacheShape) -> dict[str, int]:
    """KV heads of the three variants of a shape: MHA (one per query head), its GQA setting, MQA (one)."""
    return {"MHA": shape.query_heads, "GQA": shape.kv_heads, "MQA": 1}


# Bytes per cached value of the common number formats (int4 packs two values in a byte).
BYTES_PER_VALUE: dict[str, float] = {"fp32": 4, "bf16": 2, "fp8": 1, "int4": 0.5}
GPU_MEMORY = ("one 80 GB GPU", 80e9)  # (label, bytes): the memory of one H100 or A100 80 GB, for scale

# Most of each KV-calculator input (larger values are clamped with a note).
KV_LIMITS: dict[str, int] = {
    "layers": 1_000,
    "query_heads": 1_024,
    "kv_heads": 1_024,
    "head_dim": 4_096,
    "tokens": 100_000_000,
    "batch": 100_000,
}


@dataclass(frozen=True)
class KVComparison:
    """KV-cache sizes of MHA, your KV-head count and MQA for one shape (bytes; rows aligned)."""

    labels: tuple[str, ...]  # e.g. ('MHA: 64 KV heads', 'GQA: 8 KV heads', 'MQA: 1 KV head')
    kv_heads: tuple[int, ...]
    per_token: tuple[int, ...]  # bytes per token of one sequence
    total: tuple[int, ...]  # bytes at `tokens` tokens for `batch` sequences
    chosen: int  # index of the row with the asked-for KV heads
    layers: int
    query_heads: int
    head_dim: int
    bytes_per_value: float
    tokens: int
    batch: int
    notes: tuple[str, ...] = ()

    @property
    def names(self) -> tuple[str, ...]:
        """'MHA', 'GQA' or 'MQA' for each row."""
        return tuple(variant_name(self.query_heads, K) for K in self.kv_heads)

    @property
    def group_size(self) -> int:
        """Query heads per KV head of the chosen row."""
        return self.query_heads // self.kv_heads[self.chosen]

    @property
    def saving_vs_mha(self) -> float:
        """How many times smaller the chosen cache is than MHA's (= the group size)."""
        return self.total[0] / self.total[self.chosen] if self.total[self.chosen] else 1.0


def variant_name(query_heads: int, kv_heads: int) -> str:
    """'MHA' (one KV head per query head), 'MQA' (one KV head in all) or 'GQA' (groups in between)."""
    if kv_heads == query_heads:
        return "MHA"
    return "MQA" if kv_heads == 1 else "GQA"


def kv_cache_comparison(
    layers: float,
    query_heads: float,
    kv_heads: float,
    head_dim: float,
    bytes_per_value: float = 2,
    tokens: float = 1,
    batch: float = 1,
) -> KVComparison:
    """The KV cache of a shape with its own KV heads, next to full MHA and MQA (never raises for finite numbers).

        bytes = 2 · L · K · H · bytes_per_value · tokens · batch,   K = query_heads (MHA), kv_heads, or 1 (MQA)

    Inputs are rounded to whole numbers and clamped to 1..KV_LIMITS (tokens and batch too); KV heads above the
    query heads become the query heads, and KV heads that do not divide them are kept but noted (GQA needs equal
    groups). Each change adds a note.
    """
    asked = {"layers": layers, "query_heads": query_heads, "kv_heads": kv_heads, "head_dim": head_dim}
    asked |= {"tokens": tokens, "batch": batch}
    ok, notes = {}, []
    for name, value in asked.items():
        v = float(value) if isinstance(value, int | float | np.number) and math.isfinite(value) else 1.0
        ok[name] = int(min(max(round(v), 1), KV_LIMITS[name]))
        if ok[name] != value:
            notes.append(f"{name.replace('_', ' ')}: using {ok[name]:,} (whole numbers from 1 to {KV_LIMITS[name]:,}).")
    if ok["kv_heads"] > ok["query_heads"]:
        notes.append(f"A model has at most one KV head per query head: using {ok['query_heads']} KV heads.")
        ok["kv_heads"] = ok["query_heads"]
    if ok["query_heads"] % ok["kv_heads"]:
        notes.append(
            f"{ok['kv_heads']} KV heads do not split {ok['query_heads']} query heads into equal groups; "
            "the size below still counts them, but a GQA model would not be built this way."
        )
    b = float(bytes_per_value)
    if not math.isfinite(b) or b <= 0:
        notes.append(f"bytes per value {bytes_per_value!r} is not a positive number: using 2 (bf16).")
        b = 2.0
    rows: dict[int, str] = {}
    for K in (ok["query_heads"], ok["kv_heads"], 1):
        rows.setdefault(K, f"{variant_name(ok['query_heads'], K)}: {K} KV head{'s' if K > 1 else ''}")
    Ks = tuple(rows)
    L, H = ok["layers"], ok["head_dim"]
    # bytes per token = 2 · L · K · H · bytes_per_value;  total = that · tokens · batch
    per_token = tuple(kv_cache_bytes(L, K, H, b) for K in Ks)
    total = tuple(kv_cache_bytes(L, K, H, b, ok["tokens"], ok["batch"]) for K in Ks)
    return KVComparison(
        tuple(rows.values()),
        Ks,
        per_token,
        total,
        Ks.index(ok["kv_heads"]),
        L,
        ok["query_heads"],
        H,
        b,
        ok["tokens"],
        ok["batch"],
        tuple(notes),
    )


_BINARY_UNITS = ("B", "KiB", "MiB", "GiB", "TiB", "PiB")


def format_bytes(n: float, unit: str | None = None) -> str:
    """A byte count in binary units, e.g. 327680 -> '320 KiB', 42949672960 -> '40 GiB'; unit fixes the unit
    (format_bytes(2621440, 'KiB') -> '2,560 KiB', the way the lesson quotes per-token sizes)."""
    if not math.isfinite(n) or n < 0:
        raise ValueError(f"a byte count must be finite and >= 0, got {n!r}")
    if unit is not None and unit not in _BINARY_UNITS:
        raise ValueError(f"unit must be one of {', '.join(_BINARY_UNITS)}, got {unit!r}")
    power = 0 if n < 1 else min(int(math.log2(n) // 10), len(_BINARY_UNITS) - 1)
    power = _BINARY_UNITS.index(unit) if unit is not None else power
    value = n / 1024**power
    text = f"{value:,.0f}" if value >= 100 or float(value).is_integer() else f"{value:,.3g}"
    return f"{text} {_BINARY_UNITS[power]}"


# ---------------------------------------------------------------------------------------------------------------
# Tokens (no tokenizer download: whitespace or character split)
# ---------------------------------------------------------------------------------------------------------------

DISPLAY_TOKENS = 64  # most tokens shown from typed text
MAX_RANDOM_TOKENS = 4096
DEFAULT_TEXT = "the cat sat on the mat because the cat was tired"
_RANDOM_VOCAB: tuple[str, ...] = tuple(
    "the a cat dog sat ran on under mat rug because when it was tired happy and then slept ate fish big small "
    "red blue bird flew over tree house old new saw my your we they sun rain day night".split()
)

# One user-perceived character: a regional-indicator pair (a flag), or a character followed by combining marks,
# variation selectors, skin-tone modifiers or tag characters, possibly joined to more by zero-width joiners.
_EXTEND = (
    "[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f"  # combining marks
    "\ufe00-\ufe0f\U0001f3fb-\U0001f3ff\U000e0020-\U000e007f]"  # variation selectors, skin tones, tags
)
_GRAPHEME = re.compile(rf"[\U0001F1E6-\U0001F1FF]{{2}}|\r\n|.{_EXTEND}*(?:\u200d.{_EXTEND}*)*", re.DOTALL)


@dataclass(frozen=True)
class Tokens:
    """Tokens to show, how many the text had, and a note for the page ('' when there is nothing to say)."""

    tokens: tuple[str, ...]
    total: int
    mode: str
    note: str = ""

    @property
    def truncated(self) -> bool:
        """True when the text had more tokens than are shown."""
        return self.total > len(self.tokens)


def tokenize(
    text: str, mode: Literal["word", "char"] = "word", max_tokens: int = DISPLAY_TOKENS, fallback: str | None = None
) -> Tokens:
    """Split text into tokens: on whitespace ('word') or into user-perceived characters ('char', emoji and flags
    stay whole). Keeps the first max_tokens and says so. Text with no tokens gives the fallback text's tokens
    (when given) with a note, else no tokens.
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if mode not in ("word", "char"):
        raise ValueError(f"mode must be 'word' or 'char', got {mode!r}")
    _check_positive_int("max_tokens", max_tokens)
    pieces = text.split() if mode == "word" else _GRAPHEME.findall(text)
    if not pieces:
        if fallback:
            inner = tokenize(fallback, mode, max_tokens, None)
            return Tokens(inner.tokens, inner.total, mode, "No text to split: showing the example sentence.")
        return Tokens((), 0, mode, "No text to split.")
    note = ""
    if len(pieces) > max_tokens:
        note = f"Showing the first {max_tokens} of {len(pieces):,} tokens."
    return Tokens(tuple(pieces[:max_tokens]), len(pieces), mode, note)


def random_tokens(n: int, seed: int = 0) -> Tokens:
    """n tokens drawn (with repeats) from a small fixed vocabulary of English words, reproducible from seed."""
    _check_positive_int("n", n)
    if n > MAX_RANDOM_TOKENS:
        raise ValueError(f"at most {MAX_RANDOM_TOKENS} random tokens, got {n}")
    idx = np.random.default_rng(seed).integers(len(_RANDOM_VOCAB), size=n)
    return Tokens(tuple(_RANDOM_VOCAB[i] for i in idx), n, "random")


def word_key(token: str) -> str:
    """What makes two tokens 'the same word': case-folded, with leading and trailing punctuation removed."""
    folded = token.casefold()
    is_punct = [unicodedata.category(c).startswith("P") for c in folded]
    if all(is_punct):
        return folded
    start = is_punct.index(False)
    stop = len(folded) - is_punct[::-1].index(False)
    return folded[start:stop]


_VISIBLE = {" ": "␣", "\n": "⏎", "\r\n": "⏎", "\t": "⇥", "\r": "⏎"}


def token_label(token: str, max_chars: int = 12) -> str:
    """A short, visible label for an axis: whitespace made visible, long tokens cut with an ellipsis."""
    label = _VISIBLE.get(token, token)
    return label if len(label) <= max_chars else label[: max_chars - 1] + "…"


# ---------------------------------------------------------------------------------------------------------------
# A reproducible toy model
# ---------------------------------------------------------------------------------------------------------------

MAX_D_MODEL = 1024
MAX_HEADS = 32
DESIGNED_PATTERNS: tuple[str, ...] = ("previous token", "first token", "same word")
DESIGNED_STRENGTH = 8.0  # logit gap of a designed head under the correct 1/sqrt(d_k) scale


@dataclass(frozen=True)
class ToyModelSettings:
    """Shape and seed of the toy attention layer. kv_heads None means one per head (MHA); 1 is MQA."""

    d_model: int = 64
    heads: int = 4
    d_k: int = 16
    kv_heads: int | None = None
    seed: int = 0
    position_strength: float = 1.0

    def __post_init__(self) -> None:
        for name in ("d_model", "heads", "d_k"):
            _check_positive_int(name, getattr(self, name))
        if self.d_model > MAX_D_MODEL or self.heads > MAX_HEADS or self.d_k > MAX_D_MODEL:
            raise ValueError(f"toy model limits: d_model, d_k <= {MAX_D_MODEL}, heads <= {MAX_HEADS}")
        if self.kv_heads is not None:
            _check_positive_int("kv_heads", self.kv_heads)
            if self.heads % self.kv_heads:
                raise ValueError(f"kv_heads={self.kv_heads} must divide heads={self.heads}")
        if not isinstance(self.seed, int | np.integer) or self.seed < 0:
            raise ValueError(f"seed must be a whole number >= 0, got {self.seed!r}")
        if not math.isfinite(self.position_strength) or self.position_strength < 0:
            raise ValueError("position_strength must be finite and >= 0")

    @property
    def n_kv_heads(self) -> int:
        """The number of K/V heads actually used."""
        return self.heads if self.kv_heads is None else self.kv_heads


def settings_with_notes(
    d_model: int, heads: int, d_k: int | None = None, kv_heads: int | None = None, seed: int = 0
) -> tuple[ToyModelSettings, tuple[str, ...]]:
    """Valid settings closest to what was asked, with a note for every change or oddity (never raises for whole
    numbers): d_k defaults to d_model // heads; KV heads that do not divide the heads become the nearest divisor.
    """
    notes = []
    d_model_ok = int(min(max(d_model, 1), MAX_D_MODEL))
    heads_ok = int(min(max(heads, 1), MAX_HEADS, d_model_ok))
    if (d_model_ok, heads_ok) != (d_model, heads):
        notes.append(f"Using d_model = {d_model_ok} and {heads_ok} heads (limits: 1-{MAX_D_MODEL}, 1-{MAX_HEADS}).")
    if d_k is None:
        d_k_ok = d_model_ok // heads_ok
        if d_model_ok % heads_ok:
            notes.append(
                f"d_model = {d_model_ok} is not a multiple of {heads_ok} heads: each head gets d_k = {d_k_ok}, "
                f"so the heads cover {heads_ok * d_k_ok} of the {d_model_ok} dimensions."
            )
    else:
        d_k_ok = int(min(max(d_k, 1), MAX_D_MODEL))
        if d_k_ok != d_k:
            notes.append(f"Using d_k = {d_k_ok}.")
        if heads_ok * d_k_ok != d_model_ok:
            notes.append(
                f"heads x d_k = {heads_ok * d_k_ok} differs from d_model = {d_model_ok}: real layers choose "
                "d_k = d_model / heads, so the output projection maps the heads back to d_model."
            )
    kv_ok = None
    if kv_heads is not None and kv_heads != heads_ok:
        divisors = [n for n in range(1, heads_ok + 1) if heads_ok % n == 0]
        kv_ok = min(divisors, key=lambda n: (abs(n - kv_heads), n))
        if kv_ok != kv_heads:
            notes.append(f"{kv_heads} KV heads do not divide {heads_ok} heads: using {kv_ok}.")
        kv_ok = None if kv_ok == heads_ok else kv_ok
    return ToyModelSettings(d_model_ok, heads_ok, d_k_ok, kv_ok, max(int(seed), 0)), tuple(notes)


def sinusoidal_positions(tokens: int, d_model: int, device: Any = None) -> torch.Tensor:
    """The sinusoidal position signal of the original transformer, shape (tokens, d_model).

    PE[t, 2i] = sin(t / 10000^(2i/d_model)),   PE[t, 2i+1] = cos(t / 10000^(2i/d_model))
    """
    device = device or get_device()
    dtype = default_dtype(torch.device(device))
    t = torch.arange(tokens, dtype=dtype, device=device)[:, None]  # (T, 1)
    i = torch.arange(0, d_model, 2, dtype=dtype, device=device)  # (ceil(d/2),)
    angle = t / 10000 ** (i / d_model)  # (T, ceil(d/2))
    pe = torch.stack([torch.sin(angle), torch.cos(angle)], dim=-1).reshape(tokens, -1)  # (T, 2·ceil(d/2))
    return pe[:, :d_model]  # (T, d_model)


def _hashed_normal(keys: np.ndarray, dim: int, seed: int) -> np.ndarray:
    """Standard normal numbers that depend only on (key, column, seed): splitmix64 hashing + Box-Muller."""
    with np.errstate(over="ignore"):
        cols = np.arange(2 * dim, dtype=np.uint64)  # two uniforms per output column
        x = keys.astype(np.uint64)[:, None] * np.uint64(0x9E3779B97F4A7C15) + cols * np.uint64(0xBF58476D1CE4E5B9)
        x = x + np.uint64(seed) * np.uint64(0x94D049BB133111EB) + np.uint64(0x2545F4914F6CDD1D)
        # splitmix64 finaliser
        x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        x = x ^ (x >> np.uint64(31))
    u = ((x >> np.uint64(11)).astype(np.float64) + 0.5) / 2.0**53  # (n, 2·dim) in (0, 1)
    u1, u2 = u[:, :dim], u[:, dim:]
    # Box-Muller: z = sqrt(-2 log u1) cos(2π u2)
    return np.sqrt(-2.0 * np.log(u1)) * np.cos(2.0 * np.pi * u2)  # (n, dim)


def toy_embeddings(tokens: Sequence[str], settings: ToyModelSettings, device: Any = None) -> torch.Tensor:
    """Token embeddings plus a position signal, each row scaled to unit root-mean-square, shape (T, d_model).

    The embedding of a token depends only on its word_key and the seed (hashed, no vocabulary), so the same word
    gets the same vector wherever it appears.

        x_t = RMSNorm(E[token_t] + position_strength · PE[t])
    """
    if len(tokens) == 0:
        raise ValueError("need at least one token")
    device = device or get_device()
    keys = np.array([zlib.crc32(word_key(t).encode("utf-8")) for t in tokens], dtype=np.uint64)
    E = as_tensor(_hashed_normal(keys, settings.d_model, settings.seed), device=device)  # (T, d_model)
    x = E + settings.position_strength * sinusoidal_positions(len(tokens), settings.d_model, device)  # (T, d_model)
    return x / x.pow(2).mean(dim=-1, keepdim=True).sqrt()  # (T, d_model), unit RMS rows


@dataclass(frozen=True)
class QKV:
    """Queries, keys and values of one layer: q (heads, T, d_k); k, v (kv_heads, T, d_k)."""

    q: torch.Tensor
    k: torch.Tensor
    v: torch.Tensor


@functools.lru_cache(maxsize=64)
def _projection_cpu(seed: int, which: int, d_model: int, cols: int) -> torch.Tensor:
    """W with entries ~ N(0, 1/d_model), drawn on the CPU (every device sees the same numbers); kept, not redrawn:
    drawing dominated a rerun at 64 tokens. Callers only read it."""
    gen = torch.Generator().manual_seed(seed * 7919 + which)
    return torch.randn(d_model, cols, generator=gen, dtype=torch.float64) / math.sqrt(d_model)  # (d_model, cols)


def _projection(settings: ToyModelSettings, which: int, cols: int, device: Any) -> torch.Tensor:
    W = _projection_cpu(int(settings.seed), which, settings.d_model, cols)
    return as_tensor(W, device=torch.device(device))  # (d_model, cols)


def toy_qkv(tokens: Sequence[str], settings: ToyModelSettings, device: Any = None) -> QKV:
    """Q, K, V of the toy layer: seeded projections of the embeddings (entries ~ N(0, 1/d_model), so q and k have
    roughly unit-variance components).

        Q = x W_q,  K = x W_k,  V = x W_v,   then split into heads of width d_k
    """
    device = device or get_device()
    x = toy_embeddings(tokens, settings, device)  # (T, d_model)
    T, H, H_kv, d_k = len(tokens), settings.heads, settings.n_kv_heads, settings.d_k
    q = (x @ _projection(settings, 1, H * d_k, device)).view(T, H, d_k).transpose(0, 1)  # (H, T, d_k)
    k = (x @ _projection(settings, 2, H_kv * d_k, device)).view(T, H_kv, d_k).transpose(0, 1)  # (H_kv, T, d_k)
    v = (x @ _projection(settings, 3, H_kv * d_k, device)).view(T, H_kv, d_k).transpose(0, 1)  # (H_kv, T, d_k)
    return QKV(q.contiguous(), k.contiguous(), v.contiguous())


def designed_qkv(
    tokens: Sequence[str], settings: ToyModelSettings, strength: float = DESIGNED_STRENGTH, device: Any = None
) -> QKV:
    """Three hand-built heads with classic patterns: previous token, first token, same word (DESIGNED_PATTERNS).

    Their q and k are one-hot codes of length T (positions, or word ids for 'same word'), with q multiplied by
    strength · sqrt(d_k) so that under the correct 1/sqrt(d_k) scale the chosen key's logit is exactly `strength`
    above the others; other scale choices change it the way they change the model's heads. The first token has no
    previous token and looks at itself. v is a seeded projection of the embeddings, shape (3, T, d_k).
    """
    if not math.isfinite(strength) or strength < 0:
        raise ValueError("strength must be finite and >= 0")
    device = device or get_device()
    x = toy_embeddings(tokens, settings, device)  # (T, d_model)
    T = len(tokens)
    eye = torch.eye(T, dtype=x.dtype, device=x.device)  # (T, T) one-hot codes
    positions = torch.arange(T, device=x.device)
    previous = (positions - 1).clamp(min=0)
    _, word_id = np.unique([word_key(t) for t in tokens], return_inverse=True)
    word_id = torch.as_tensor(word_id.reshape(-1), device=x.device)
    first = torch.zeros_like(positions)
    gain = strength * math.sqrt(settings.d_k)
    q = gain * torch.stack([eye[previous], eye[first], eye[word_id]])  # (3, T, T)
    k = torch.stack([eye, eye, eye[word_id]])  # (3, T, T)
    v = (x @ _projection(settings, 4, 3 * settings.d_k, device)).view(T, 3, settings.d_k).transpose(0, 1)
    return QKV(q, k, v.contiguous())  # v: (3, T, d_k)


@dataclass(frozen=True)
class ToyAttention:
    """Everything the heatmap page draws for one setting, as numpy float32 arrays (CPU)."""

    tokens: tuple[str, ...]
    weights: np.ndarray  # (heads_shown, T, T)
    outputs: np.ndarray  # (heads_shown, T, d_k)
    head_names: tuple[str, ...]
    kv_group: tuple[int, ...]  # KV head each shown head reads (-1 for designed heads)
    multiplier: float  # the number the logits were multiplied by (scale / temperature)
    logit_std: np.ndarray  # (heads_shown,) std of the unmasked logits of each head
    entropy: np.ndarray  # (heads_shown,) mean row entropy of each head, nats
    notes: tuple[str, ...] = field(default=())
    causal: bool = True  # whether the causal mask was applied (it bounds row t's entropy by log t, not log T)


def toy_attention(
    tokens: Sequence[str],
    settings: ToyModelSettings,
    scale: str = "sqrt_dk",
    temperature: float = 1.0,
    causal: bool = True,
    designed: bool = True,
    strength: float = DESIGNED_STRENGTH,
    device: Any = None,
) -> ToyAttention:
    """Run the toy layer (plus the designed heads when asked) on tokens and collect weights and outputs.

    A_h = softmax(Q_h K_g(h)^T · scale/temperature + M),   y_h = A_h V_g(h),   g(h) = h // (heads / kv_heads)
    """
    if len(tokens) == 0:
        raise ValueError("need at least one token")
    device = device or get_device()
    multiplier = resolve_scale(scale, settings.d_k, settings.d_model, temperature)
    parts = [toy_qkv(tokens, settings, device)]
    names = [f"head {h + 1}" for h in range(settings.heads)]
    group = settings.heads // settings.n_kv_heads
    kv_group = [h // group for h in range(settings.heads)]
    if settings.n_kv_heads != settings.heads:
        names = [f"{name} · KV {g + 1}" for name, g in zip(names, kv_group, strict=True)]
    if designed:
        parts.append(designed_qkv(tokens, settings, strength, device))
        names += list(DESIGNED_PATTERNS)
        kv_group += [-1] * len(DESIGNED_PATTERNS)
    weights, outputs, stds, entropies = [], [], [], []
    allowed = causal_mask(len(tokens), device=parts[0].q.device)  # (T, T)
    for p in parts:  # model heads and designed heads have different key widths
        logits = attention_logits(p.q, p.k, scale=multiplier)  # (H, T, T)
        # A = softmax(S + M), the mask only when causal
        A = torch.softmax(logits.masked_fill(~allowed, float("-inf")) if causal else logits, dim=-1)  # (H, T, T)
        weights.append(A)
        outputs.append(A @ repeat_kv(p.v, p.q.shape[0]))  # (H, T, d_k)
        stds.append(logits.flatten(1).std(dim=1, correction=0))  # (H,)
        entropies.append(row_entropy(A).mean(dim=-1))  # (H,)
    to_np = lambda ts: torch.cat(ts).detach().cpu().numpy().astype(np.float32)  # noqa: E731
    notes = []
    if multiplier != 1 / math.sqrt(settings.d_k):
        correct = 1 / math.sqrt(settings.d_k)
        notes.append(f"Logits are multiplied by {multiplier:.4g}; 1/√d_k at temperature 1 would be {correct:.4g}.")
    return ToyAttention(
        tuple(tokens),
        to_np(weights),
        to_np(outputs),
        tuple(names),
        tuple(kv_group),
        multiplier,
        to_np(stds),
        to_np(entropies),
        tuple(notes),
        causal,
    )


@dataclass(frozen=True)
class HeadSummary:
    """Averages over the model's own heads (designed heads left out) of a ToyAttention, for the page's readouts."""

    heads: int
    logit_std: float  # mean over heads of the std of the logits
    entropy: float  # mean row entropy, nats
    max_entropy: float  # mean over rows of the largest possible row entropy: log T, or mean_t log t when causal
    entropy_share: float  # entropy / max_entropy (1 = uniform rows; 0 = one-hot rows; 1 when T = 1)
    max_weight: float  # mean over heads and rows of the largest weight in a row (1 = one-hot)


def head_summary(result: ToyAttention, model_heads: int) -> HeadSummary:
    """Average logit std, row entropy and top weight over the first model_heads heads of a ToyAttention.

    H_row = -sum_j A_ij log A_ij,   share = mean H_row / mean_rows H_max(row)

    H_max(row t) is log T without a mask and log t under the causal mask (row t sees t keys; rows from 1), so a
    causal layer whose rows are uniform over what they may see has share 1.
    """
    _check_positive_int("model_heads", model_heads)
    if model_heads > result.weights.shape[0]:
        raise ValueError(f"the result has {result.weights.shape[0]} heads, not {model_heads}")
    T = result.weights.shape[-1]
    max_entropy = float(np.mean(row_entropy_bound(T, result.causal)))
    entropy = float(np.mean(result.entropy[:model_heads]))
    return HeadSummary(
        model_heads,
        float(np.mean(result.logit_std[:model_heads])),
        entropy,
        max_entropy,
        entropy / max_entropy if T > 1 else 1.0,
        float(result.weights[:model_heads].max(axis=-1).mean()),
    )


def toy_mask_comparison(
    tokens: Sequence[str],
    settings: ToyModelSettings,
    head: int = 0,
    scale: str = "sqrt_dk",
    temperature: float = 1.0,
    device: Any = None,
) -> MaskComparison:
    """Correct vs buggy causal weights of one head of the toy layer (the KV head it reads under GQA/MQA).

    A = softmax(Q_h K_g(h)^T · scale/temperature + M)   versus   softmax(Q_h K_g(h)^T · scale/temperature) ⊙ tril
    """
    if not 0 <= head < settings.heads:
        raise ValueError(f"head {head} is outside 0..{settings.heads - 1}")
    qkv = toy_qkv(tokens, settings, device)
    g = head // (settings.heads // settings.n_kv_heads)
    multiplier = resolve_scale(scale, settings.d_k, settings.d_model, temperature)
    return mask_comparison(qkv.q[head], qkv.k[g], scale=multiplier)  # q, k: (T, d_k)


# ---------------------------------------------------------------------------------------------------------------
# The causality check
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CausalityCheck:
    """Largest change of the outputs before the edited position, with and without the causal mask."""

    position: int
    old_token: str
    new_token: str
    max_change_before_causal: float  # 0: the past cannot see the future
    max_change_before_unmasked: float  # > 0 without the mask
    max_change_from_position: float  # the edited position itself (and later) do change


def causality_check(
    tokens: Sequence[str],
    settings: ToyModelSettings,
    position: int = -1,
    new_token: str | None = None,
    scale: str = "sqrt_dk",
    device: Any = None,
) -> CausalityCheck:
    """Replace the token at `position` (default the last) and compare the layer's outputs before and after.

    Under the causal mask every earlier output must be unchanged (exactly: the changed key and value are
    multiplied by weight 0); without the mask they move.
    """
    T = len(tokens)
    if T < 2:
        raise ValueError("the causality check needs at least two tokens")
    if not -T <= position < T:
        raise ValueError(f"position {position} is outside 0..{T - 1}")
    position %= T
    if position == 0:
        raise ValueError("change a later token than the first: there is nothing before position 0")
    old = tokens[position]
    if new_token is None:
        new_token = next(w for w in ("zebra", "banana", "quartz") if word_key(w) != word_key(old))
    edited = [*tokens[:position], new_token, *tokens[position + 1 :]]
    device = device or get_device()
    s = resolve_scale(scale, settings.d_k, settings.d_model)
    a, b = toy_qkv(tokens, settings, device), toy_qkv(edited, settings, device)
    change = {}
    for causal in (True, False):
        ya = attention(a.q, a.k, a.v, scale=s, causal=causal)  # (H, T, d_k)
        yb = attention(b.q, b.k, b.v, scale=s, causal=causal)  # (H, T, d_k)
        diff = (ya - yb).abs().amax(dim=(0, 2))  # (T,) largest change at each position
        change[causal] = (diff[:position].max().item(), diff[position:].max().item())
    return CausalityCheck(position, old, new_token, change[True][0], change[False][0], change[True][1])


def row_entropy_bound(tokens: int, causal: bool) -> np.ndarray:
    """The largest entropy each attention row can have, in nats, shape (tokens,): a uniform row over its keys.

    H_max(row t) = log t  under the causal mask (query t, counted from 1, sees keys 1..t)
    H_max(row t) = log T  without a mask
    """
    _check_positive_int("tokens", tokens)
    t = np.arange(1, tokens + 1, dtype=np.float64)  # (T,)
    return np.log(t) if causal else np.full(tokens, math.log(tokens))
