"""A small seeded toy attention layer whose heads a page can draw as heatmaps: hashed embeddings, sinusoidal
positions, random or designed (previous token, first token, same word) heads, and the causality check.

Arrays follow the (heads, tokens, d_k) layout of :mod:`core.attention`. The toy is small (the page draws at most 512
tokens and 35 heads), so it is numpy (float64, CPU) throughout, with core.attention's numpy functions: a page
drawing it never imports torch. Its random projections are torch.randn's numbers for their seeds
(:func:`core.attention.torch_randn`), so the heads are the ones the torch version of the toy drew.
"""

from __future__ import annotations

import functools
import math
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from core.attention import (
    MaskComparison,
    _check_positive_int,
    attention_logits_np,
    attention_np,
    causal_mask_np,
    mask_comparison_np,
    repeat_kv,
    resolve_scale,
    row_entropy_bound,
    row_entropy_np,
    softmax_np,
    torch_randn,
)
from core.tokenizer import word_key

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


def sinusoidal_positions(tokens: int, d_model: int) -> np.ndarray:
    """The sinusoidal position signal of the original transformer, shape (tokens, d_model).

    PE[t, 2i] = sin(t / 10000^(2i/d_model)),   PE[t, 2i+1] = cos(t / 10000^(2i/d_model))
    """
    t = np.arange(tokens, dtype=np.float64)[:, None]  # (T, 1)
    i = np.arange(0, d_model, 2, dtype=np.float64)  # (ceil(d/2),)
    angle = t / 10000 ** (i / d_model)  # (T, ceil(d/2))
    pe = np.stack([np.sin(angle), np.cos(angle)], axis=-1).reshape(tokens, -1)  # (T, 2·ceil(d/2))
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


def toy_embeddings(tokens: Sequence[str], settings: ToyModelSettings) -> np.ndarray:
    """Token embeddings plus a position signal, each row scaled to unit root-mean-square, shape (T, d_model).

    The embedding of a token depends only on its word_key and the seed (hashed, no vocabulary), so the same word
    gets the same vector wherever it appears.

        x_t = RMSNorm(E[token_t] + position_strength · PE[t])
    """
    if len(tokens) == 0:
        raise ValueError("need at least one token")
    keys = np.array([zlib.crc32(word_key(t).encode("utf-8")) for t in tokens], dtype=np.uint64)
    E = _hashed_normal(keys, settings.d_model, settings.seed)  # (T, d_model)
    x = E + settings.position_strength * sinusoidal_positions(len(tokens), settings.d_model)  # (T, d_model)
    return x / np.sqrt((x**2).mean(axis=-1, keepdims=True))  # (T, d_model), unit RMS rows


@dataclass(frozen=True)
class QKV:
    """Queries, keys and values of one layer: q (heads, T, d_k); k, v (kv_heads, T, d_k)."""

    q: np.ndarray
    k: np.ndarray
    v: np.ndarray


@functools.lru_cache(maxsize=64)
def _projection_cpu(seed: int, which: int, d_model: int, cols: int) -> np.ndarray:
    """W with entries ~ N(0, 1/d_model): torch.randn's numbers for the seed seed·7919 + which (what the toy drew with
    torch), divided by sqrt(d_model); kept, not redrawn: drawing dominated a rerun at 64 tokens. Read-only."""
    (z,) = torch_randn(seed * 7919 + which, d_model * cols)
    W = z.reshape(d_model, cols) / math.sqrt(d_model)  # (d_model, cols)
    W.flags.writeable = False
    return W


def _projection(settings: ToyModelSettings, which: int, cols: int) -> np.ndarray:
    return _projection_cpu(int(settings.seed), which, settings.d_model, cols)  # (d_model, cols)


def toy_qkv(tokens: Sequence[str], settings: ToyModelSettings) -> QKV:
    """Q, K, V of the toy layer: seeded projections of the embeddings (entries ~ N(0, 1/d_model), so q and k have
    roughly unit-variance components).

        Q = x W_q,  K = x W_k,  V = x W_v,   then split into heads of width d_k
    """
    x = toy_embeddings(tokens, settings)  # (T, d_model)
    T, H, H_kv, d_k = len(tokens), settings.heads, settings.n_kv_heads, settings.d_k
    q = (x @ _projection(settings, 1, H * d_k)).reshape(T, H, d_k).transpose(1, 0, 2)  # (H, T, d_k)
    k = (x @ _projection(settings, 2, H_kv * d_k)).reshape(T, H_kv, d_k).transpose(1, 0, 2)  # (H_kv, T, d_k)
    v = (x @ _projection(settings, 3, H_kv * d_k)).reshape(T, H_kv, d_k).transpose(1, 0, 2)  # (H_kv, T, d_k)
    return QKV(np.ascontiguousarray(q), np.ascontiguousarray(k), np.ascontiguousarray(v))


def designed_qkv(tokens: Sequence[str], settings: ToyModelSettings, strength: float = DESIGNED_STRENGTH) -> QKV:
    """Three hand-built heads with classic patterns: previous token, first token, same word (DESIGNED_PATTERNS).

    Their q and k are one-hot codes of length T (positions, or word ids for 'same word'), with q multiplied by
    strength · sqrt(d_k) so that under the correct 1/sqrt(d_k) scale the chosen key's logit is exactly `strength`
    above the others; other scale choices change it the way they change the model's heads. The first token has no
    previous token and looks at itself. v is a seeded projection of the embeddings, shape (3, T, d_k).
    """
    if not math.isfinite(strength) or strength < 0:
        raise ValueError("strength must be finite and >= 0")
    x = toy_embeddings(tokens, settings)  # (T, d_model)
    T = len(tokens)
    eye = np.eye(T)  # (T, T) one-hot codes
    positions = np.arange(T)
    previous = np.maximum(positions - 1, 0)
    _, word_id = np.unique([word_key(t) for t in tokens], return_inverse=True)
    word_id = word_id.reshape(-1)
    first = np.zeros_like(positions)
    gain = strength * math.sqrt(settings.d_k)
    q = gain * np.stack([eye[previous], eye[first], eye[word_id]])  # (3, T, T)
    k = np.stack([eye, eye, eye[word_id]])  # (3, T, T)
    v = (x @ _projection(settings, 4, 3 * settings.d_k)).reshape(T, 3, settings.d_k).transpose(1, 0, 2)
    return QKV(q, k, np.ascontiguousarray(v))  # v: (3, T, d_k)


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
) -> ToyAttention:
    """Run the toy layer (plus the designed heads when asked) on tokens and collect weights and outputs.

    A_h = softmax(Q_h K_g(h)^T · scale/temperature + M),   y_h = A_h V_g(h),   g(h) = h // (heads / kv_heads)
    """
    if len(tokens) == 0:
        raise ValueError("need at least one token")
    multiplier = resolve_scale(scale, settings.d_k, settings.d_model, temperature)
    parts = [toy_qkv(tokens, settings)]
    names = [f"head {h + 1}" for h in range(settings.heads)]
    group = settings.heads // settings.n_kv_heads
    kv_group = [h // group for h in range(settings.heads)]
    if settings.n_kv_heads != settings.heads:
        names = [f"{name} · KV {g + 1}" for name, g in zip(names, kv_group, strict=True)]
    if designed:
        parts.append(designed_qkv(tokens, settings, strength))
        names += list(DESIGNED_PATTERNS)
        kv_group += [-1] * len(DESIGNED_PATTERNS)
    weights, outputs, stds, entropies = [], [], [], []
    allowed = causal_mask_np(len(tokens))  # (T, T)
    for p in parts:  # model heads and designed heads have different key widths
        logits = attention_logits_np(p.q, p.k, scale=multiplier)  # (H, T, T)
        # A = softmax(S + M), the mask only when causal
        A = softmax_np(np.where(allowed, logits, -np.inf) if causal else logits)  # (H, T, T)
        weights.append(A)
        outputs.append(A @ repeat_kv(p.v, p.q.shape[0]))  # (H, T, d_k)
        stds.append(logits.reshape(len(logits), -1).std(axis=1))  # (H,)
        entropies.append(row_entropy_np(A).mean(axis=-1))  # (H,)
    to_np = lambda ts: np.concatenate(ts).astype(np.float32)  # noqa: E731
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


@dataclass(frozen=True)
class TemperatureSweep:
    """The toy layer's weights at several softmax temperatures, from one batched pass (numpy, CPU): what a drag
    over the temperature shows. Heads as in :class:`ToyAttention` (the model's heads, then the designed ones)."""

    temperatures: np.ndarray  # (S,)
    multipliers: np.ndarray  # (S,) the number the logits were multiplied by: scale / temperature
    weights: np.ndarray  # (S, heads_shown, T, T) float32
    entropy: np.ndarray  # (S, heads_shown) mean row entropy of each head, nats
    logit_std: np.ndarray  # (S, heads_shown) std of the unmasked logits of each head
    causal: bool = True

    def summaries(self, model_heads: int) -> list[HeadSummary]:
        """:func:`head_summary` of each step: averages over the first ``model_heads`` heads (the model's own)."""
        _check_positive_int("model_heads", model_heads)
        if model_heads > self.weights.shape[1]:
            raise ValueError(f"the sweep has {self.weights.shape[1]} heads, not {model_heads}")
        T = self.weights.shape[-1]
        max_entropy = float(np.mean(row_entropy_bound(T, self.causal)))
        entropy = self.entropy[:, :model_heads].mean(axis=1)  # (S,)
        std = self.logit_std[:, :model_heads].mean(axis=1)  # (S,)
        top = self.weights[:, :model_heads].max(axis=-1).mean(axis=(1, 2))  # (S,) mean largest weight of a row
        return [
            HeadSummary(
                model_heads, float(s), float(e), max_entropy, float(e) / max_entropy if T > 1 else 1.0, float(w)
            )
            for s, e, w in zip(std, entropy, top, strict=True)
        ]


def temperature_sweep(
    tokens: Sequence[str],
    settings: ToyModelSettings,
    scale: str,
    temperatures: Sequence[float],
    causal: bool = True,
    designed: bool = True,
    strength: float = DESIGNED_STRENGTH,
) -> TemperatureSweep:
    """The toy layer of :func:`toy_attention` at every temperature at once: the logits of all steps in one batched
    matmul, one softmax over them.

    A_h(T_s) = softmax(Q_h K_g(h)^T · scale/T_s + M),   s = 1..S

    Step s equals ``toy_attention(tokens, settings, scale, temperatures[s], causal, designed)`` (the same
    multiplier, the same operations in the same order).
    """
    if len(tokens) == 0:
        raise ValueError("need at least one token")
    temps = np.asarray(temperatures, dtype=float)
    if temps.ndim != 1 or temps.size == 0:
        raise ValueError("temperatures must be a non-empty list of numbers")
    # resolve_scale checks each temperature (finite, > 0) and gives toy_attention's multiplier to the last bit
    multipliers = np.array([resolve_scale(scale, settings.d_k, settings.d_model, float(t)) for t in temps])
    parts = [toy_qkv(tokens, settings)]
    if designed:
        parts.append(designed_qkv(tokens, settings, strength))
    allowed = causal_mask_np(len(tokens))  # (T, T)
    weights, stds, entropies = [], [], []
    m = multipliers[:, None, None, None]  # (S, 1, 1, 1)
    for p in parts:  # model heads and designed heads have different key widths
        k = repeat_kv(p.k, p.q.shape[0])  # (H, T, d_k)
        logits = (p.q[None] * m) @ np.swapaxes(k, -1, -2)  # (S, H, T, T): Q K^T · multiplier, q scaled first
        A = softmax_np(np.where(allowed, logits, -np.inf) if causal else logits)  # (S, H, T, T)
        weights.append(A)
        stds.append(logits.reshape(*logits.shape[:2], -1).std(axis=2))  # (S, H)
        entropies.append(row_entropy_np(A).mean(axis=-1))  # (S, H)
    to_np = lambda ts: np.concatenate(ts, axis=1).astype(np.float32)  # noqa: E731
    return TemperatureSweep(temps, multipliers, to_np(weights), to_np(entropies), to_np(stds), causal)


def toy_mask_comparison(
    tokens: Sequence[str],
    settings: ToyModelSettings,
    head: int = 0,
    scale: str = "sqrt_dk",
    temperature: float = 1.0,
) -> MaskComparison:
    """Correct vs buggy causal weights of one head of the toy layer (the KV head it reads under GQA/MQA).

    A = softmax(Q_h K_g(h)^T · scale/temperature + M)   versus   softmax(Q_h K_g(h)^T · scale/temperature) ⊙ tril
    """
    if not 0 <= head < settings.heads:
        raise ValueError(f"head {head} is outside 0..{settings.heads - 1}")
    qkv = toy_qkv(tokens, settings)
    g = head // (settings.heads // settings.n_kv_heads)
    multiplier = resolve_scale(scale, settings.d_k, settings.d_model, temperature)
    return mask_comparison_np(qkv.q[head], qkv.k[g], scale=multiplier)  # q, k: (T, d_k)


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
    s = resolve_scale(scale, settings.d_k, settings.d_model)
    a, b = toy_qkv(tokens, settings), toy_qkv(edited, settings)
    change = {}
    for causal in (True, False):
        ya = attention_np(a.q, a.k, a.v, scale=s, causal=causal)  # (H, T, d_k)
        yb = attention_np(b.q, b.k, b.v, scale=s, causal=causal)  # (H, T, d_k)
        diff = np.abs(ya - yb).max(axis=(0, 2))  # (T,) largest change at each position
        change[causal] = (float(diff[:position].max()), float(diff[position:].max()))
    return CausalityCheck(position, old, new_token, change[True][0], change[False][0], change[True][1])
