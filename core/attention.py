"""Scaled dot-product attention from first principles: the weights, the sqrt(d_k) scale, causal masks, KV heads
shared by query heads (MHA, GQA, MQA), and the statistics of the weights (row entropy, logit spread).

The KV-cache count lives in :mod:`core.kv_cache`, the tokens in :mod:`core.tokenizer`, the seeded toy layer in
:mod:`core.toy_attention`.

The one equation of the page::

    Attention(Q, K, V) = softmax(Q K^T · scale + M) V,   scale = 1/sqrt(d_k),   M_ij = -inf where j may not be seen

Tensors follow the (..., heads, tokens, d_k) layout of nanoGPT. Functions given tensors compute on their device;
anything else becomes a tensor on core's device (:mod:`core.device`). The ``*_np`` functions compute the same
quantities in numpy (float64) for small inputs such as the toy layer's, without importing torch (about 2 s); tests
check them equal to the torch ones. torch is imported lazily, inside the functions that use it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from core.device import as_tensor, default_dtype, get_device

if TYPE_CHECKING:
    import torch

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
    import torch

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


def _check_shapes(q: Any, k: Any, v: Any = None) -> None:
    """q, k (and v) as (..., tokens, d) tensors or arrays whose d_k and key tokens agree."""
    for name, t in (("q", q), ("k", k), ("v", v)):
        if t is not None and len(t.shape) < 2:
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


def repeat_kv(kv: torch.Tensor | np.ndarray, query_heads: int) -> torch.Tensor | np.ndarray:
    """Share each K (or V) head with a group of query heads: GQA's one line, ``repeat_interleave`` on the heads.

    kv has shape (..., kv_heads, tokens, d); the result (..., query_heads, tokens, d), where query head h reads
    KV head h // (query_heads / kv_heads). kv_heads = query_heads is MHA (nothing to do), kv_heads = 1 is MQA.
    A numpy array gives a numpy array (``np.repeat``), a tensor a tensor.
    """
    if len(kv.shape) < 3:
        raise ValueError(f"expected (..., kv_heads, tokens, d), got shape {tuple(kv.shape)}")
    kv_heads = kv.shape[-3]
    if kv_heads < 1 or query_heads % kv_heads:
        raise ValueError(f"{kv_heads} KV heads do not divide {query_heads} query heads evenly")
    n_rep = query_heads // kv_heads
    if n_rep == 1:
        return kv
    if isinstance(kv, np.ndarray):
        return np.repeat(kv, n_rep, axis=-3)  # (..., query_heads, tokens, d)
    return kv.repeat_interleave(n_rep, dim=-3)  # (..., query_heads, tokens, d)


def _match_heads(q: Any, kv: Any) -> Any:
    if len(q.shape) >= 3 and len(kv.shape) >= 3 and kv.shape[-3] != q.shape[-3]:
        return repeat_kv(kv, q.shape[-3])
    return kv


def _mask_shape(query_tokens: int, key_tokens: int | None) -> int:
    """The checked number of key tokens of a causal mask (query_tokens when None)."""
    key_tokens = query_tokens if key_tokens is None else key_tokens
    _check_positive_int("query_tokens", query_tokens)
    _check_positive_int("key_tokens", key_tokens)
    if query_tokens > key_tokens:
        raise ValueError(f"a causal mask needs query_tokens <= key_tokens, got {query_tokens} > {key_tokens}")
    return key_tokens


def causal_mask(query_tokens: int, key_tokens: int | None = None, device: Any = None) -> torch.Tensor:
    """Boolean (T_q, T_k) mask, True where query i may look at key j.

        allowed_ij = [ j <= i + (T_k - T_q) ]

    With T_q = T_k this is the lower triangle. With a KV cache the T_q new queries are the *last* T_q positions of
    the T_k keys, so the diagonal moves right by T_k - T_q (a plain tril there is the classic decoding bug).
    """
    import torch

    key_tokens = _mask_shape(query_tokens, key_tokens)
    ones = torch.ones(query_tokens, key_tokens, dtype=torch.bool, device=device)
    return torch.tril(ones, diagonal=key_tokens - query_tokens)  # (T_q, T_k)


def _scores(q: torch.Tensor, k: torch.Tensor, s: float, causal: bool, offset: int = 0) -> torch.Tensor:
    """Logits Q K^T · scale, with -inf where key j lies after query row i shifted by offset (j > i + offset)."""
    import torch

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
    return S.softmax(dim=-1)


def attention(
    q: Any, k: Any, v: Any, scale: float | None = None, causal: bool = False, query_block: int | None = None
) -> torch.Tensor:
    """Attention(Q, K, V) = softmax(Q K^T · scale + M) V, shape (..., heads, T_q, d_v).

    Same conventions as :func:`attention_weights`; v: (..., kv_heads, T_k, d_v). When the score matrix would
    exceed SCORE_BUDGET_BYTES the queries are processed ``query_block`` rows at a time (chosen automatically when
    None): rows of a softmax are independent, so this is exact. Under the causal mask each block reads only the
    keys it may see.
    """
    import torch

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
    P = _scores(q, k, _scale_value(scale, q.shape[-1]), False).softmax(dim=-1)  # (..., H, T_q, T_k)
    return P * causal_mask(q.shape[-2], k.shape[-2], device=P.device)  # (..., H, T_q, T_k)


def row_entropy(weights: Any) -> torch.Tensor:
    """Entropy of each attention row in nats, H = -sum_j A_ij log A_ij (0 log 0 = 0); shape (..., T_q)."""
    import torch

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
# The same in numpy: small inputs (the toy layer) without importing torch
# ---------------------------------------------------------------------------------------------------------------
# Each function follows its torch twin above operation for operation (q scaled first, then Q K^T, -inf where masked,
# a softmax with the row maximum subtracted), in float64 on the CPU; tests/test_core_attention.py checks the pairs
# equal to round-off.


def _arrays(*xs: Any) -> list[np.ndarray]:
    """The inputs as float64 numpy arrays."""
    return [np.asarray(x, dtype=np.float64) for x in xs]


def causal_mask_np(query_tokens: int, key_tokens: int | None = None) -> np.ndarray:
    """:func:`causal_mask` as a numpy boolean (T_q, T_k) array: allowed_ij = [ j <= i + (T_k - T_q) ]."""
    key_tokens = _mask_shape(query_tokens, key_tokens)
    return np.tri(query_tokens, key_tokens, key_tokens - query_tokens, dtype=bool)  # (T_q, T_k)


def softmax_np(logits: np.ndarray) -> np.ndarray:
    """softmax along the last axis, A_ij = e^(S_ij - max_j S_ij) / sum_j e^(S_ij - max_j S_ij); -inf gives 0.

    Subtracting the row maximum keeps e^x <= 1, so large logits do not overflow (every row needs one finite logit).
    """
    # A = e^(S - max S) / sum e^(S - max S)  (in place on one new array: the toy's 512-token layer is 70 MB of it)
    e = logits - logits.max(axis=-1, keepdims=True)  # (..., T_k)
    np.exp(e, out=e)
    e /= e.sum(axis=-1, keepdims=True)
    return e  # (..., T_k)


def attention_logits_np(q: Any, k: Any, scale: float | None = None) -> np.ndarray:
    """:func:`attention_logits` in numpy: Q K^T · scale before any mask, shape (..., heads, T_q, T_k)."""
    q, k = _arrays(q, k)
    _check_shapes(q, k)
    k = _match_heads(q, k)  # (..., H, T_k, d_k)
    # S = Q K^T · scale  (scaling q costs T·d_k multiplications instead of T²)
    return (q * _scale_value(scale, q.shape[-1])) @ np.swapaxes(k, -1, -2)  # (..., H, T_q, T_k)


def attention_weights_np(q: Any, k: Any, scale: float | None = None, causal: bool = False) -> np.ndarray:
    """:func:`attention_weights` in numpy: A = softmax(Q K^T · scale + M), shape (..., heads, T_q, T_k)."""
    S = attention_logits_np(q, k, scale)  # (..., H, T_q, T_k)
    if causal:
        # M_ij = -inf where key j comes after query i (bottom-right aligned), added before the softmax
        S = np.where(causal_mask_np(*S.shape[-2:]), S, -np.inf)
    return softmax_np(S)  # (..., H, T_q, T_k)


def attention_np(q: Any, k: Any, v: Any, scale: float | None = None, causal: bool = False) -> np.ndarray:
    """:func:`attention` in numpy: softmax(Q K^T · scale + M) V, shape (..., heads, T_q, d_v)."""
    q, k, v = _arrays(q, k, v)
    _check_shapes(q, k, v)
    # y = A V with A = softmax(Q K^T · scale + M)
    return attention_weights_np(q, k, scale, causal) @ _match_heads(q, v)  # (..., H, T_q, d_v)


def row_entropy_np(weights: Any) -> np.ndarray:
    """:func:`row_entropy` in numpy: H = -sum_j A_ij log A_ij in nats (0 log 0 = 0), shape (..., T_q)."""
    (A,) = _arrays(weights)
    log_A = np.log(A, out=np.zeros_like(A), where=A > 0)  # (..., T_q, T_k), 0 where A_ij = 0 (0 log 0 = 0)
    # H = -sum_j A_ij log A_ij
    return -(A * log_A).sum(axis=-1)


def mask_comparison_np(q: Any, k: Any, scale: float | None = None) -> MaskComparison:
    """:func:`mask_comparison` in numpy: -inf before the softmax vs x 0 after it, for the same q, k."""
    P = softmax_np(attention_logits_np(q, k, scale))  # (..., H, T_q, T_k) no mask
    correct = attention_weights_np(q, k, scale, causal=True)  # (..., H, T_q, T_k)
    # A_bug = softmax(Q K^T · scale) ⊙ tril
    buggy = P * causal_mask_np(*P.shape[-2:])  # (..., H, T_q, T_k)
    return MaskComparison(correct, buggy, correct.sum(-1), buggy.sum(-1))


def torch_randn(seed: int, *sizes: int) -> list[np.ndarray]:
    """The numbers of ``torch.randn(n, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)`` for
    each n in sizes in turn (one generator), drawn in numpy: seeded draws stay what they were with torch, without
    importing it. The same bits and the same arithmetic; equal to round-off (bit for bit where numpy's log, cos and
    sin agree with the C library's, as on this project's machines). tests/test_core_attention.py checks them against
    torch itself, so a torch that changes its sampler fails that test.

    torch's CPU sampler (torch 2.x): MT19937 seeded with the seed's low 32 bits; a float64 uniform takes two 32-bit
    words (hi, lo) and keeps the low 53 bits of hi·2^32 + lo, u = bits / 2^53. For n >= 16, n uniforms become
    normals in blocks of 16 by Box-Muller, u1 = 1 - u[j], u2 = u[j + 8] (j < 8):

        z_j = sqrt(-2 log u1) cos(2π u2),   z_(j+8) = sqrt(-2 log u1) sin(2π u2)

    and when 16 does not divide n the last 16 are made again from 16 uniforms drawn after the n. For n < 16 each
    pair of uniforms (u1, u2) gives r cos θ and r sin θ, r = sqrt(-2 log(1 - u2)), θ = 2π u1, the second kept for the
    next number.
    """
    key = np.random.RandomState(int(seed) & 0xFFFFFFFF).get_state()[1]  # MT19937's seeded state
    bits = np.random.MT19937()
    bits.state = {"bit_generator": "MT19937", "state": {"key": key, "pos": 624}}

    def uniforms(n: int) -> np.ndarray:
        words = bits.random_raw(2 * n).reshape(n, 2)  # (n, 2): hi, lo
        u53 = ((words[:, 0] << np.uint64(32)) | words[:, 1]) & np.uint64(2**53 - 1)
        return u53.astype(np.float64) * 2.0**-53  # (n,) in [0, 1)

    def blocks(u: np.ndarray) -> np.ndarray:
        u = u.reshape(-1, 16)  # (n/16, 16)
        # Box-Muller: r = sqrt(-2 log u1), θ = 2π u2, with u1 = 1 - u_j in (0, 1]
        r, theta = np.sqrt(-2 * np.log(1 - u[:, :8])), 2.0 * np.pi * u[:, 8:]  # (n/16, 8)
        return np.concatenate([r * np.cos(theta), r * np.sin(theta)], axis=1).reshape(-1)  # (n,)

    out, spare = [], None  # spare: the sine the small-n sampler keeps for its next number
    for n in sizes:
        _check_positive_int("size", n)
        if n >= 16:
            z, whole = np.empty(n), n - n % 16
            z[:whole] = blocks(uniforms(n)[:whole])  # all n uniforms are drawn, the whole blocks used
            if whole < n:
                z[n - 16 :] = blocks(uniforms(16))  # the last 16 again, from 16 new uniforms
        else:
            first = [] if spare is None else [spare]
            pairs = (n - len(first) + 1) // 2
            u = uniforms(2 * pairs).reshape(pairs, 2)  # (pairs, 2): u1, u2
            # r = sqrt(-2 log(1 - u2)), θ = 2π u1: r cos θ now, r sin θ next
            r, theta = np.sqrt(-2 * np.log1p(-u[:, 1])), 2.0 * np.pi * u[:, 0]  # (pairs,)
            drawn = np.stack([r * np.cos(theta), r * np.sin(theta)], axis=1).reshape(-1)  # (2·pairs,)
            z = np.concatenate([first, drawn])
            spare = z[n] if z.size > n else None
            z = z[:n]
        out.append(z)
    return out


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
) -> LogitStatistics:
    """Measure Var(logit) and row entropy for random q, k ~ N(0, 1) (unit-variance components) at each d_k.

    The d_k-dimensional q, k are the first d_k components of one draw, so the curves are smooth in d_k. d_model
    (for the 1/sqrt(d_model) trap) defaults to the largest d_k. In numpy (a few MB at the page's sizes); the draws
    are torch.randn's for the seed (:func:`torch_randn`), q first, then k.

        logit = multiplier · sum_{i<=d_k} q_i k_i,   Var = d_k · multiplier²,   H(row) = -sum_j A_j log A_j
    """
    d = np.asarray(d_k_values)
    if d.ndim != 1 or d.size == 0 or not np.issubdtype(d.dtype, np.integer) or np.any(d < 1):
        raise ValueError("d_k_values must be a non-empty list of whole numbers >= 1")
    _check_positive_int("tokens", tokens)
    _check_positive_int("samples", samples)
    d_model = int(d.max()) if d_model is None else d_model
    _check_positive_int("d_model", d_model)
    shape = (samples, tokens, int(d.max()))
    q, k = (z.reshape(shape) for z in torch_randn(seed, math.prod(shape), math.prod(shape)))  # (S, T, d_max) each
    variance, expected, entropy, max_weight = {}, {}, {}, {}
    for choice in SCALE_CHOICES:
        variance[choice], entropy[choice], max_weight[choice] = (np.empty(d.size) for _ in range(3))
        expected[choice] = expected_logit_variance(d, choice, d_model, temperature)
    for n, d_k in enumerate(d.tolist()):  # a loop over the few d_k values, not over data
        raw = q[..., :d_k] @ np.swapaxes(k[..., :d_k], -1, -2)  # (S, T, T)
        for choice in SCALE_CHOICES:
            logits = raw * resolve_scale(choice, d_k, d_model, temperature)  # (S, T, T)
            # log A = S - max S - log sum e^(S - max S)  (log-softmax, stable)
            shifted = logits - logits.max(axis=-1, keepdims=True)  # (S, T, T)
            log_A = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (S, T, T)
            variance[choice][n] = logits.var(ddof=1)  # the unbiased variance over all logits
            # H = -sum_j A_j log A_j, averaged over rows
            entropy[choice][n] = -(np.exp(log_A) * log_A).sum(-1).mean()
            max_weight[choice][n] = np.exp(log_A.max(axis=-1)).mean()
    return LogitStatistics(d, tokens, d_model, temperature, variance, expected, entropy, max_weight, math.log(tokens))


def row_entropy_bound(tokens: int, causal: bool) -> np.ndarray:
    """The largest entropy each attention row can have, in nats, shape (tokens,): a uniform row over its keys.

    H_max(row t) = log t  under the causal mask (query t, counted from 1, sees keys 1..t)
    H_max(row t) = log T  without a mask
    """
    _check_positive_int("tokens", tokens)
    t = np.arange(1, tokens + 1, dtype=np.float64)  # (T,)
    return np.log(t) if causal else np.full(tokens, math.log(tokens))
