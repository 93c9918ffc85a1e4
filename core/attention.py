"""Scaled dot-product attention from first principles: the weights, the sqrt(d_k) scale, causal masks, KV heads
shared by query heads (MHA, GQA, MQA), and the statistics of the weights (row entropy, logit spread).

The KV-cache count lives in :mod:`core.kv_cache`, the tokens in :mod:`core.tokenizer`, the seeded toy layer in
:mod:`core.toy_attention`.

The one equation of the page::

    Attention(Q, K, V) = softmax(Q K^T · scale + M) V,   scale = 1/sqrt(d_k),   M_ij = -inf where j may not be seen

Tensors follow the (..., heads, tokens, d_k) layout of nanoGPT. Functions given tensors compute on their device;
anything else becomes a tensor on core's device (:mod:`core.device`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
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


def row_entropy_bound(tokens: int, causal: bool) -> np.ndarray:
    """The largest entropy each attention row can have, in nats, shape (tokens,): a uniform row over its keys.

    H_max(row t) = log t  under the causal mask (query t, counted from 1, sees keys 1..t)
    H_max(row t) = log T  without a mask
    """
    _check_positive_int("tokens", tokens)
    t = np.arange(1, tokens + 1, dtype=np.float64)  # (T,)
    return np.log(t) if causal else np.full(tokens, math.log(tokens))
