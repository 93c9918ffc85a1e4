"""A tiny byte-level decoder-only GPT: its corpus, model (torch and numpy), training loop, checkpoint and FLOP count.

The training lab's model, and a real causal model for the sampling, loss and attention pages. Run from the repository
root::

    python -m core.tiny_gpt train --out core/data/tiny_gpt.npz    # make tiny-gpt (CPU); 190 s here, measured once
    python -m core.tiny_gpt --corpus                              # rebuild core/data/tiny_corpus.txt from the repo

The shipped checkpoint (``core/data/tiny_gpt.npz``, :data:`SHIPPED_CONFIG`, :data:`SHIPPED_TRAIN`) was trained by
that command on 2 threads of a 2-vCPU machine in 190 s (600 steps of 32 x 128 bytes, 13,086 tokens/s; 820,352
parameters); its held-out loss, :func:`val_loss_numpy`, is 1.568 nats per byte = 2.262 bits per byte
(:data:`SHIPPED_VAL_LOSS`), its last training batch's 1.337 (docs/tiny_gpt.md).

Corpus. A snapshot of text the project owns (``core/data/tiny_corpus.txt``, UTF-8, built by :func:`build_corpus`):
the interview cards' human text (question, answer sentence, number, trade-off, follow-ups, traps, notes; not the
LaTeX equations, checks or view parameters), the decks' titles and notes, README.md and docs/using.md, in that
order; never the seeds' text. Training reads the shipped snapshot, not the live files, so that the checkpoint stays
reproducible while the cards change. Held-out split (:func:`split_bytes`): the UTF-8 bytes are cut into 4096-byte
chunks; chunk i is held out when i % 10 == 9 (every 10th chunk), the rest are training. Each split is the
concatenation of its chunks (a window may straddle two chunks; the text on both sides is the project's own).

Model (:class:`GPTConfig`). Bytes 0..255 are the tokens (vocab 256). Embedding table E (256, d), tied to the output
head. Each of the n_layer blocks, pre-norm (GPT-2, Llama)::

    x = x + Attn(RMSNorm(x));   x = x + MLP(RMSNorm(x))

or post-norm (the original Transformer, BERT), the training lab's post-norm preset (which stalls at the bytes'
frequencies in that toy: docs/training_lab.md)::

    x = RMSNorm(x + Attn(x));   x = RMSNorm(x + MLP(x))

then a final RMSNorm and logits = h E^T. The final norm is kept in both variants (in post-norm it re-normalises an
already normalised stream with its own gain). RMSNorm(x) = x / sqrt(mean(x²) + eps) · g (Zhang and Sennrich 2019),
eps = 1e-5. Attention: causal multi-head, RoPE on queries and keys (never values) with RoFormer's interleaved pairing,
pairs (2i, 2i+1), θ_i = 10000^(−2i/d_head) (:func:`core.rope.apply_rope`), written as explicit matmuls::

    S = Q K^T / sqrt(d_head);   S_ij = −inf for j > i;   A = softmax(S);   Y = A V

so that ``torch.utils.flop_counter.FlopCounterMode`` counts it on every device (torch 2.13 counts no FLOPs for
``scaled_dot_product_attention``'s fused CPU kernel; on CUDA it counts the fused flash, memory-efficient and cuDNN
kernels as full T x T products with a backward of 2.5x the forward, recomputation included). MLP: W2 GELU(W1 x) with
GPT-2's tanh form of GELU (it keeps the numpy forward free of scipy; it differs from the erf form by at most 4.7e-4),
hidden width mlp_mult · d. Every linear map is bias-free and stored as (in, out): y = x W.

FLOPs (:func:`matmul_flops_per_token`). N_lin = n_layer (4 d² + 2 mlp_mult d²) + 256 d (the tied head; the
embedding lookup is a gather, 0 FLOPs). A matmul of (m, k) by (k, n) is 2 m k n FLOPs (a multiply and an add).
Forward per token: 2 N_lin for the linear maps plus 2 · 2 · T · d per layer for Q K^T and A V at sequence length T,
with the full T x T matrices as written (the causal mask saves no multiplications here; a kernel that skips the
masked half would do about half of it; Kaplan et al. 2020 write the term as 2 · n_layer · n_ctx · d_attn per token,
half of this full-matrix count). The backward of every matmul costs twice its forward (dX = dY W^T and
dW = X^T dY); the first block's input gradient is needed too, because the (tied) embedding table is trained, so
the backward is exactly 2x the forward and a training step 6 N_lin D + 3 · attention over D tokens. If the input
were a frozen embedding, W_q, W_k and W_v of the first block would skip their input gradients, 3 · 2d² FLOPs per
token, and the backward would fall short of 2x by that much. Norms, softmax, GELU, RoPE and the loss are
elementwise and FlopCounterMode does not count them.

Training (:func:`train`): AdamW (β = 0.9, 0.95; weight decay 0.1 on matrices, the embedding included, none on the
norm gains) or SGD with momentum; the schedules page's learning-rate shapes (:func:`core.schedules.lr_schedule`;
"linear" is its WSD with the decay over the whole run after the warm-up), optional gradient clipping, batches drawn
by a numpy Generator, torch seeded: with one thread the same config gives the same curve on the same machine; with
more, the embedding's gradient (the backward of a gather) is summed in a varying order and reruns differ in the last
digits (the shipped 2-thread run: 1.5681 against a rerun's 1.5682).

Checkpoint (:func:`save_checkpoint`, :func:`load_checkpoint`): a ``.npz`` of float32 arrays, the config and the
training metadata stored as JSON in uint8 arrays, read with ``np.load(..., allow_pickle=False)``. Why not
``torch.save`` / ``torch.load(weights_only=True)``: one file serves both the numpy forward (pages that must not import
torch, which costs 2-3 s here) and the torch model (``torch.from_numpy``), and it holds no pickle at all, so loading
it runs no code, with or without torch (safetensors would also be pickle-free and numpy-readable; .npz needs no
extra package).

torch is imported inside functions only: importing this module and running :func:`logits_numpy` never imports it.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
import tomllib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import NDArray

from core.rope import apply_rope, rope_inv_freq
from core.schedules import lr_schedule

if TYPE_CHECKING:
    import torch

ROOT = Path(__file__).resolve().parents[1]
DATA_DIR = Path(__file__).resolve().parent / "data"
CORPUS_PATH = DATA_DIR / "tiny_corpus.txt"
CHECKPOINT_PATH = DATA_DIR / "tiny_gpt.npz"
CHUNK_BYTES = 4096  # the held-out split's unit
VAL_EVERY = 10  # chunk i is held out when i % VAL_EVERY == VAL_EVERY - 1
EPS = 1e-5  # RMSNorm's epsilon
ROPE_BASE = 10000.0
LN_256 = math.log(256.0)  # a uniform guess over the bytes: 5.545 nats
CARD_FIELDS = ("question", "sentence", "number", "trade_off", "follow_ups", "traps", "notes")
SCHEDULES: tuple[str, ...] = ("constant", "cosine", "wsd", "linear")
OPTIMIZERS: tuple[str, ...] = ("adamw", "sgd")
MAX_CHECKPOINT_BYTES = 5 * 1024 * 1024

# ---------------------------------------------------------------------------------------------------------------
# the corpus and its split
# ---------------------------------------------------------------------------------------------------------------


def _text_items(value: Any) -> list[str]:
    """A card field's text: a string, or a list of strings (follow_ups, traps), or nothing."""
    if isinstance(value, str):
        return [value.strip()] if value.strip() else []
    if isinstance(value, list):
        return [v.strip() for v in value if isinstance(v, str) and v.strip()]
    return []


def build_corpus(root: Path | str = ROOT) -> str:
    """The corpus text from the repository at ``root``, in a fixed order: cards/*.toml (sorted; per card its
    question, answer sentence, number, trade-off, follow-ups, traps and notes), decks/*.toml (sorted; the deck's
    title, then each slide's title and notes), README.md, docs/using.md. Paragraphs are separated by a blank line."""
    root = Path(root)
    parts: list[str] = []
    for path in sorted((root / "cards").glob("*.toml")):
        for card in tomllib.loads(path.read_text(encoding="utf-8")).get("card", []):
            answer = card.get("answer", {})
            for name in CARD_FIELDS:
                parts += _text_items(card.get(name, answer.get(name)))
    for path in sorted((root / "decks").glob("*.toml")):
        deck = tomllib.loads(path.read_text(encoding="utf-8"))
        parts += _text_items(deck.get("title"))
        for slide in deck.get("slides", []):
            parts += _text_items(slide.get("title")) + _text_items(slide.get("notes"))
    for name in ("README.md", "docs/using.md"):
        parts.append((root / name).read_text(encoding="utf-8").strip())
    return "\n\n".join(parts) + "\n"


def write_corpus(path: Path | str = CORPUS_PATH, root: Path | str = ROOT) -> int:
    """Write :func:`build_corpus` to ``path`` (UTF-8); returns its size in bytes."""
    data = build_corpus(root).encode("utf-8")
    Path(path).write_bytes(data)
    return len(data)


def corpus_bytes(path: Path | str = CORPUS_PATH) -> NDArray[np.uint8]:
    """The shipped corpus snapshot as bytes, shape (n,)."""
    return np.frombuffer(Path(path).read_bytes(), dtype=np.uint8).copy()


def corpus_sha256(path: Path | str = CORPUS_PATH) -> str:
    """The hex SHA-256 of the corpus file (stored in the checkpoint's metadata)."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def split_bytes(data: NDArray[np.uint8]) -> tuple[NDArray[np.uint8], NDArray[np.uint8]]:
    """(train, val): 4096-byte chunks, chunk i held out when i % 10 == 9, each split its chunks concatenated."""
    data = np.asarray(data, dtype=np.uint8)
    if data.ndim != 1 or data.size < VAL_EVERY * CHUNK_BYTES:
        raise ValueError(f"need a 1-D byte array of at least {VAL_EVERY * CHUNK_BYTES} bytes, got {data.shape}")
    chunk = np.arange(data.size) // CHUNK_BYTES  # (n,) each byte's chunk index
    held = chunk % VAL_EVERY == VAL_EVERY - 1
    return data[~held], data[held]


# ---------------------------------------------------------------------------------------------------------------
# the configuration, parameters and counts
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class GPTConfig:
    """The tiny GPT's shape. vocab is 256 (bytes); d_model must divide into n_head heads of even width (RoPE)."""

    vocab: int = 256
    n_layer: int = 4
    d_model: int = 128
    n_head: int = 4
    ctx: int = 128
    norm: Literal["pre", "post"] = "pre"
    mlp_mult: int = 4

    def __post_init__(self) -> None:
        for name in ("vocab", "n_layer", "d_model", "n_head", "ctx", "mlp_mult"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1:
                raise ValueError(f"GPTConfig.{name} must be a whole number >= 1, got {v!r}")
        if self.vocab != 256:
            raise ValueError(f"the tiny GPT reads bytes: vocab must be 256, got {self.vocab}")
        if self.d_model % self.n_head or (self.d_model // self.n_head) % 2:
            raise ValueError(
                f"d_model ({self.d_model}) must split into n_head ({self.n_head}) heads of even width (RoPE pairs)"
            )
        if self.norm not in ("pre", "post"):
            raise ValueError(f"norm must be 'pre' or 'post', got {self.norm!r}")

    @property
    def head_dim(self) -> int:
        """d_head = d_model / n_head."""
        return self.d_model // self.n_head


def param_shapes(cfg: GPTConfig) -> dict[str, tuple[int, ...]]:
    """Every parameter's name and shape, in a fixed order (linear maps as (in, out))."""
    d, h = cfg.d_model, cfg.mlp_mult * cfg.d_model
    shapes: dict[str, tuple[int, ...]] = {"wte": (cfg.vocab, d)}
    for i in range(cfg.n_layer):
        p = f"h{i}."
        shapes |= {p + "norm1": (d,), p + "wq": (d, d), p + "wk": (d, d), p + "wv": (d, d), p + "wo": (d, d)}
        shapes |= {p + "norm2": (d,), p + "w1": (d, h), p + "w2": (h, d)}
    shapes["norm_f"] = (d,)
    return shapes


def n_params(cfg: GPTConfig) -> int:
    """All parameters (the tied embedding counted once)."""
    return sum(math.prod(s) for s in param_shapes(cfg).values())


def n_linear_params(cfg: GPTConfig) -> int:
    """N_lin, the weights that multiply activations: n_layer (4 d² + 2 mlp_mult d²) + 256 d (the tied head)."""
    d = cfg.d_model
    return cfg.n_layer * (4 * d * d + 2 * cfg.mlp_mult * d * d) + cfg.vocab * d


def matmul_flops_per_token(cfg: GPTConfig, seq_len: int | None = None) -> float:
    """Forward matmul FLOPs per token at sequence length T (default ctx): 2 N_lin + n_layer · 2 · 2 · T · d.

    The attention term counts Q K^T and A V over the full T x T matrices, as the code computes them (no causal
    saving). Training (forward + backward) is 3x this: 6 N_lin D + 3 · attention for D tokens."""
    T = cfg.ctx if seq_len is None else seq_len
    if isinstance(T, bool) or not isinstance(T, int | np.integer) or not 1 <= T <= cfg.ctx:
        raise ValueError(f"seq_len must be a whole number from 1 to ctx ({cfg.ctx}), got {seq_len!r}")
    # forward: 2 N_lin + L · (2 T d for Q K^T + 2 T d for A V)
    return 2.0 * n_linear_params(cfg) + cfg.n_layer * 4.0 * T * cfg.d_model


def init_params(cfg: GPTConfig, seed: int = 0) -> dict[str, NDArray[np.float32]]:
    """Initial weights, float32: matrices N(0, 0.02²), the output projections (wo, w2) scaled by 1/sqrt(2 n_layer)
    (GPT-2), norm gains 1."""
    rng = np.random.default_rng(seed)
    out: dict[str, NDArray[np.float32]] = {}
    for name, shape in param_shapes(cfg).items():
        if len(shape) == 1:
            out[name] = np.ones(shape, dtype=np.float32)
        else:
            std = 0.02 / (math.sqrt(2 * cfg.n_layer) if name.endswith(("wo", "w2")) else 1.0)
            out[name] = (rng.standard_normal(shape) * std).astype(np.float32)
    return out


def _check_params(params: dict[str, Any], cfg: GPTConfig) -> None:
    for name, shape in param_shapes(cfg).items():
        if name not in params:
            raise ValueError(f"params lacks {name!r} for this config")
        if tuple(np.shape(params[name])) != shape:
            raise ValueError(f"params[{name!r}] has shape {tuple(np.shape(params[name]))}, expected {shape}")


def _check_ids(byte_ids: Any, cfg: GPTConfig) -> NDArray[np.int64]:
    ids = np.asarray(byte_ids)
    if ids.dtype.kind not in "iu":
        raise ValueError(f"byte_ids must be integers 0..255, got dtype {ids.dtype}")
    if ids.ndim not in (1, 2) or ids.shape[-1] < 1 or ids.shape[-1] > cfg.ctx:
        raise ValueError(f"byte_ids must have shape (T,) or (B, T) with 1 <= T <= ctx ({cfg.ctx}), got {ids.shape}")
    if ids.size and (ids.min() < 0 or ids.max() > 255):
        raise ValueError("byte_ids must lie in 0..255")
    return ids.astype(np.int64)


# ---------------------------------------------------------------------------------------------------------------
# the numpy forward (float32; no torch)
# ---------------------------------------------------------------------------------------------------------------


def _rms_norm_np(x: NDArray, g: NDArray) -> NDArray:
    # RMSNorm(x) = x / sqrt(mean(x²) + eps) · g
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + np.float32(EPS)) * g


def _gelu_np(x: NDArray) -> NDArray:
    # GELU(x) ≈ x/2 · (1 + tanh(sqrt(2/π) (x + 0.044715 x³)))
    c = np.float32(math.sqrt(2.0 / math.pi))
    return np.float32(0.5) * x * (np.float32(1.0) + np.tanh(c * (x + np.float32(0.044715) * x * x * x)))


def _attention_np(x: NDArray, p: dict, i: int, cfg: GPTConfig, inv_freq: NDArray) -> tuple[NDArray, NDArray]:
    """One layer's attention output (B, T, d) and weights (B, H, T, T) for a normed input x (B, T, d)."""
    B, T, d = x.shape
    H, dh = cfg.n_head, cfg.head_dim

    def heads(w: NDArray) -> NDArray:
        return (x @ w).reshape(B, T, H, dh).transpose(0, 2, 1, 3)  # (B, H, T, dh)

    pos = np.arange(T)
    q = apply_rope(heads(p[f"h{i}.wq"]), pos, inv_freq)  # (B, H, T, dh), rotated
    k = apply_rope(heads(p[f"h{i}.wk"]), pos, inv_freq)
    v = heads(p[f"h{i}.wv"])
    # S = Q K^T / sqrt(d_head), S_ij = -inf for j > i
    s = q @ k.transpose(0, 1, 3, 2) / np.float32(math.sqrt(dh))  # (B, H, T, T)
    s = np.where(np.tri(T, dtype=bool), s, np.float32(-np.inf))
    # A = softmax(S) along the keys
    e = np.exp(s - s.max(axis=-1, keepdims=True))
    a = e / e.sum(axis=-1, keepdims=True)  # (B, H, T, T)
    y = (a @ v).transpose(0, 2, 1, 3).reshape(B, T, d)  # (B, T, d)
    return y @ p[f"h{i}.wo"], a


def _forward_np(params: dict, cfg: GPTConfig, ids: NDArray, keep_attention: bool = False) -> tuple[NDArray, list]:
    """logits (B, T, 256) and, if asked, each layer's attention weights (B, H, T, T)."""
    p = {k: np.asarray(v, dtype=np.float32) for k, v in params.items()}
    inv_freq = rope_inv_freq(cfg.head_dim, ROPE_BASE)[0]
    x = p["wte"][ids]  # (B, T, d)
    maps = []
    for i in range(cfg.n_layer):
        g1, g2 = p[f"h{i}.norm1"], p[f"h{i}.norm2"]
        if cfg.norm == "pre":
            # x = x + Attn(RMSNorm(x)); x = x + MLP(RMSNorm(x))
            y, a = _attention_np(_rms_norm_np(x, g1), p, i, cfg, inv_freq)
            x = x + y
            x = x + _gelu_np(_rms_norm_np(x, g2) @ p[f"h{i}.w1"]) @ p[f"h{i}.w2"]
        else:
            # x = RMSNorm(x + Attn(x)); x = RMSNorm(x + MLP(x))
            y, a = _attention_np(x, p, i, cfg, inv_freq)
            x = _rms_norm_np(x + y, g1)
            x = _rms_norm_np(x + _gelu_np(x @ p[f"h{i}.w1"]) @ p[f"h{i}.w2"], g2)
        if keep_attention:
            maps.append(a)
    # logits = RMSNorm(x) E^T
    return _rms_norm_np(x, p["norm_f"]) @ p["wte"].T, maps


def logits_numpy(params: dict[str, NDArray], cfg: GPTConfig, byte_ids: Any) -> NDArray[np.float32]:
    """The next-byte logits after each position, float32: byte_ids (T,) -> (T, 256), or (B, T) -> (B, T, 256)."""
    _check_params(params, cfg)
    ids = _check_ids(byte_ids, cfg)
    logits, _ = _forward_np(params, cfg, ids[None] if ids.ndim == 1 else ids)
    return logits[0] if ids.ndim == 1 else logits


def attention_numpy(params: dict[str, NDArray], cfg: GPTConfig, byte_ids: Any) -> NDArray[np.float32]:
    """Every layer's and head's causal attention weights for one sequence: byte_ids (T,) -> (n_layer, n_head, T, T),
    each row summing to 1 over the keys up to its query."""
    _check_params(params, cfg)
    ids = _check_ids(byte_ids, cfg)
    if ids.ndim != 1:
        raise ValueError(f"attention_numpy takes one sequence (T,), got shape {ids.shape}")
    _, maps = _forward_np(params, cfg, ids[None], keep_attention=True)
    return np.stack([a[0] for a in maps])


def _log_softmax_np(z: NDArray) -> NDArray:
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def val_windows(val: NDArray[np.uint8], ctx: int) -> NDArray[np.int64]:
    """The held-out windows: consecutive, non-overlapping (n, ctx + 1) windows at stride ctx (the last byte of one is
        the first of the next), so each byte after the first is predicted at most once, from the context inside its
    window: all but the last (n - 1) mod ctx bytes (127 of the shipped split's 16,384)."""
    n = (len(val) - 1) // ctx
    if n < 1:
        raise ValueError(f"the held-out split ({len(val)} bytes) is shorter than one window of {ctx + 1}")
    starts = np.arange(n) * ctx
    return np.asarray(val, dtype=np.int64)[starts[:, None] + np.arange(ctx + 1)]  # (n, ctx + 1)


def val_loss_numpy(
    params: dict[str, NDArray], cfg: GPTConfig, val: NDArray[np.uint8] | None = None, chunk: int = 16
) -> float:
    """Mean nats per byte on the held-out split (default: the shipped corpus's), over :func:`val_windows`, in numpy
    batches of ``chunk`` windows. Divide by ln 2 for bits per byte."""
    _check_params(params, cfg)
    val = split_bytes(corpus_bytes())[1] if val is None else val
    w = val_windows(val, cfg.ctx)
    total = 0.0
    for b in range(0, len(w), chunk):
        x, y = w[b : b + chunk, :-1], w[b : b + chunk, 1:]  # (b, ctx) each
        lp = _log_softmax_np(_forward_np(params, cfg, x)[0].astype(np.float64))  # (b, ctx, 256)
        # loss = −mean log p(next byte)
        total -= np.take_along_axis(lp, y[..., None], axis=-1).sum()
    return float(total / w[:, 1:].size)


# ---------------------------------------------------------------------------------------------------------------
# the torch model
# ---------------------------------------------------------------------------------------------------------------


def _torch_modules() -> Any:
    """The torch classes, defined on first use so that importing this module never imports torch."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    class RMSNorm(nn.Module):
        """RMSNorm(x) = x / sqrt(mean(x²) + eps) · g."""

        def __init__(self, d: int) -> None:
            super().__init__()
            self.weight = nn.Parameter(torch.ones(d))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS) * self.weight

    class Block(nn.Module):
        def __init__(self, cfg: GPTConfig) -> None:
            super().__init__()
            d, h = cfg.d_model, cfg.mlp_mult * cfg.d_model
            self.cfg = cfg
            self.norm1, self.norm2 = RMSNorm(d), RMSNorm(d)
            self.wq, self.wk, self.wv, self.wo = (nn.Parameter(torch.empty(d, d)) for _ in range(4))
            self.w1, self.w2 = nn.Parameter(torch.empty(d, h)), nn.Parameter(torch.empty(h, d))
            future = torch.ones(cfg.ctx, cfg.ctx, dtype=torch.bool).triu(1)  # (ctx, ctx): True where j > i
            self.register_buffer("future", future, persistent=False)
            self.last_attention: torch.Tensor | None = None
            self.keep_attention = False

        def attn(self, x: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
            B, T, d = x.shape
            H, dh = self.cfg.n_head, self.cfg.head_dim
            pos = torch.arange(T, device=x.device)
            qk = torch.stack([x @ self.wq, x @ self.wk]).view(2, B, T, H, dh).transpose(2, 3)  # (2, B, H, T, dh)
            q, k = apply_rope(qk, pos, inv_freq)  # (B, H, T, dh) each, rotated in one call
            v = (x @ self.wv).view(B, T, H, dh).transpose(1, 2)
            # S = Q K^T / sqrt(d_head) (the scale applied to Q, the smaller tensor), S_ij = -inf for j > i
            s = (q * (1.0 / math.sqrt(dh))) @ k.transpose(-2, -1)  # (B, H, T, T)
            # A = softmax(S), Y = A V
            a = torch.softmax(s.masked_fill(self.future[:T, :T], float("-inf")), dim=-1)
            if self.keep_attention:
                self.last_attention = a.detach()
            y = (a @ v).transpose(1, 2).reshape(B, T, d)  # (B, T, d)
            return y @ self.wo

        def mlp(self, x: torch.Tensor) -> torch.Tensor:
            return F.gelu(x @ self.w1, approximate="tanh") @ self.w2

        def forward(self, x: torch.Tensor, inv_freq: torch.Tensor) -> torch.Tensor:
            if self.cfg.norm == "pre":
                # x = x + Attn(RMSNorm(x)); x = x + MLP(RMSNorm(x))
                x = x + self.attn(self.norm1(x), inv_freq)
                return x + self.mlp(self.norm2(x))
            # x = RMSNorm(x + Attn(x)); x = RMSNorm(x + MLP(x))
            x = self.norm1(x + self.attn(x, inv_freq))
            return self.norm2(x + self.mlp(x))

    class TinyGPT(nn.Module):
        """The tiny GPT in torch; parameter names follow :func:`param_shapes` ("h0.wq" is blocks[0].wq)."""

        def __init__(self, cfg: GPTConfig) -> None:
            super().__init__()
            self.cfg = cfg
            self.wte = nn.Parameter(torch.empty(cfg.vocab, cfg.d_model))
            self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
            self.norm_f = RMSNorm(cfg.d_model)
            self.register_buffer(
                "inv_freq", torch.as_tensor(rope_inv_freq(cfg.head_dim, ROPE_BASE)[0]), persistent=False
            )

        def forward(self, ids: torch.Tensor) -> torch.Tensor:
            """ids (B, T) int64 -> logits (B, T, 256)."""
            x = self.wte[ids]  # (B, T, d): a gather, no FLOPs
            for block in self.blocks:
                x = block(x, self.inv_freq)
            # logits = RMSNorm(x) E^T (the tied head)
            return self.norm_f(x) @ self.wte.T

        def named_arrays(self) -> dict[str, torch.Tensor]:
            """The parameters under :func:`param_shapes`' names."""
            out = {"wte": self.wte, "norm_f": self.norm_f.weight}
            for i, b in enumerate(self.blocks):
                out |= {f"h{i}.norm1": b.norm1.weight, f"h{i}.norm2": b.norm2.weight}
                out |= {f"h{i}.{n}": getattr(b, n) for n in ("wq", "wk", "wv", "wo", "w1", "w2")}
            return out

    return TinyGPT


def torch_model(cfg: GPTConfig, params: dict[str, NDArray] | None = None, device: Any = None) -> torch.nn.Module:
    """The torch model with ``params`` (default :func:`init_params`), float32, on ``device`` (default core's)."""
    import torch

    from core.device import get_device

    params = init_params(cfg) if params is None else params
    _check_params(params, cfg)
    model = _torch_modules()(cfg)
    with torch.no_grad():
        for name, t in model.named_arrays().items():
            t.copy_(torch.from_numpy(np.ascontiguousarray(params[name], dtype=np.float32)))
    return model.to(device or get_device())


def params_of(model: torch.nn.Module) -> dict[str, NDArray[np.float32]]:
    """A torch model's weights as float32 numpy arrays under :func:`param_shapes`' names."""
    return {k: v.detach().cpu().numpy().astype(np.float32).copy() for k, v in model.named_arrays().items()}


# ---------------------------------------------------------------------------------------------------------------
# training
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class TrainConfig:
    """A training run. lr is the peak; warmup in steps (linear from lr/warmup); schedule one of SCHEDULES
    (final LR 10% of the peak for cosine, WSD and linear; WSD decays over its last 20%); momentum is SGD's;
    grad_clip None or the max global norm; eval_every steps between held-out evaluations on the first
    ``val_windows`` held-out windows (None: all of them); threads torch's CPU threads during the run."""

    steps: int = 200
    batch: int = 16
    lr: float = 3e-3
    warmup: int = 20
    schedule: str = "cosine"
    optimizer: str = "adamw"
    weight_decay: float = 0.1
    momentum: float = 0.9
    grad_clip: float | None = 1.0
    seed: int = 0
    threads: int = 1
    eval_every: int = 50
    val_windows: int | None = 32

    def __post_init__(self) -> None:
        for name, lo in (("steps", 2), ("batch", 1), ("warmup", 0), ("seed", 0), ("threads", 1), ("eval_every", 1)):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < lo:
                raise ValueError(f"TrainConfig.{name} must be a whole number >= {lo}, got {v!r}")
        if self.warmup >= self.steps:
            raise ValueError(f"warmup ({self.warmup}) must be shorter than the run ({self.steps} steps)")
        if not (isinstance(self.lr, int | float) and math.isfinite(self.lr) and self.lr > 0):
            raise ValueError(f"lr must be a positive number, got {self.lr!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {SCHEDULES}, got {self.schedule!r}")
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {OPTIMIZERS}, got {self.optimizer!r}")
        if self.grad_clip is not None and not (math.isfinite(self.grad_clip) and self.grad_clip > 0):
            raise ValueError(f"grad_clip must be None or a positive number, got {self.grad_clip!r}")
        if not 0 <= self.weight_decay < 1 or not 0 <= self.momentum < 1:
            raise ValueError("weight_decay and momentum must lie in [0, 1)")
        if self.val_windows is not None and (isinstance(self.val_windows, bool) or self.val_windows < 1):
            raise ValueError(f"val_windows must be None or >= 1, got {self.val_windows!r}")


def lr_curve(tcfg: TrainConfig) -> NDArray[np.float64]:
    """The learning rate at steps 1..steps (core.schedules; "linear" = WSD decaying over the whole post-warm-up)."""
    if tcfg.schedule == "linear":
        return lr_schedule("wsd", tcfg.steps, tcfg.lr, tcfg.warmup, decay_steps=tcfg.steps - tcfg.warmup)
    return lr_schedule(tcfg.schedule, tcfg.steps, tcfg.lr, tcfg.warmup)  # type: ignore[arg-type]


@dataclass
class TrainResult:
    """What a run recorded. Per step (length = steps done): loss (train, nats/byte), grad_norm (global, before
    clipping), layer_grad_norm (steps, n_layer: each block's parameters, before clipping), lr. Held out:
    val_loss at val_steps (nats/byte). diverged: a NaN/inf loss or gradient ended the run (its step is recorded);
    stopped: should_stop() ended it. params: the final weights (the last finite ones if it diverged)."""

    cfg: GPTConfig
    tcfg: TrainConfig
    loss: list[float] = field(default_factory=list)
    grad_norm: list[float] = field(default_factory=list)
    layer_grad_norm: list[list[float]] = field(default_factory=list)
    lr: list[float] = field(default_factory=list)
    val_steps: list[int] = field(default_factory=list)
    val_loss: list[float] = field(default_factory=list)
    tokens_per_s: float = 0.0
    seconds: float = 0.0
    diverged: bool = False
    stopped: bool = False
    params: dict[str, NDArray[np.float32]] = field(default_factory=dict)

    @property
    def steps_done(self) -> int:
        """Steps whose loss was recorded."""
        return len(self.loss)


def _batch(data: NDArray[np.uint8], rng: np.random.Generator, batch: int, ctx: int) -> NDArray[np.int64]:
    """(batch, ctx + 1) random windows of data."""
    starts = rng.integers(0, len(data) - ctx - 1, size=batch)
    return np.asarray(data, dtype=np.int64)[starts[:, None] + np.arange(ctx + 1)]


def train(
    cfg: GPTConfig,
    tcfg: TrainConfig,
    *,
    on_step: Callable[[int, dict[str, Any]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
    data: tuple[NDArray[np.uint8], NDArray[np.uint8]] | None = None,
) -> TrainResult:
    """Train from :func:`init_params` (seeded by tcfg.seed) on ``data`` = (train, val) bytes (default the shipped
    corpus's split); returns a :class:`TrainResult`. ``on_step(step, record)`` is called after each step (1-based)
    with loss, grad_norm, layer_grad_norm, lr and, on evaluation steps, val_loss; ``should_stop()`` is asked
    before each step and ends the run early. A NaN/inf loss ends the run as diverged, never raising."""
    import torch
    from torch.nn import functional as F

    train_bytes, val_bytes = split_bytes(corpus_bytes()) if data is None else data
    if len(train_bytes) < cfg.ctx + 2:
        raise ValueError(f"the training split ({len(train_bytes)} bytes) is shorter than one window")
    windows = val_windows(val_bytes, cfg.ctx)
    windows = windows if tcfg.val_windows is None else windows[: tcfg.val_windows]
    lrs = lr_curve(tcfg)
    result = TrainResult(cfg, tcfg)
    old_threads = torch.get_num_threads()
    torch.set_num_threads(tcfg.threads)
    try:
        torch.manual_seed(tcfg.seed)
        rng = np.random.default_rng(tcfg.seed)
        model = torch_model(cfg, init_params(cfg, tcfg.seed))
        device = next(model.parameters()).device
        named = model.named_arrays()
        matrices = [t for t in named.values() if t.ndim >= 2]
        gains = [t for t in named.values() if t.ndim < 2]
        if tcfg.optimizer == "adamw":
            groups = [{"params": matrices, "weight_decay": tcfg.weight_decay}, {"params": gains, "weight_decay": 0.0}]
            opt: torch.optim.Optimizer = torch.optim.AdamW(groups, lr=tcfg.lr, betas=(0.9, 0.95))
        else:
            opt = torch.optim.SGD(model.parameters(), lr=tcfg.lr, momentum=tcfg.momentum)
        layer_params = [list(b.parameters()) for b in model.blocks]
        val_t = torch.from_numpy(windows).to(device)

        def evaluate() -> float:
            model.eval()
            total = 0.0
            with torch.no_grad():
                for b in range(0, len(val_t), 32):
                    w = val_t[b : b + 32]
                    logits = model(w[:, :-1])
                    total += F.cross_entropy(logits.reshape(-1, 256), w[:, 1:].reshape(-1), reduction="sum").item()
            model.train()
            return total / (len(val_t) * cfg.ctx)

        last_good = params_of(model)
        train_seconds = 0.0
        start = time.perf_counter()
        for step in range(1, tcfg.steps + 1):
            if should_stop is not None and should_stop():
                result.stopped = True
                break
            t0 = time.perf_counter()
            xy = torch.from_numpy(_batch(train_bytes, rng, tcfg.batch, cfg.ctx)).to(device)
            for g in opt.param_groups:
                g["lr"] = float(lrs[step - 1])
            logits = model(xy[:, :-1])  # (B, T, 256)
            # loss = −mean log p(next byte)
            loss = F.cross_entropy(logits.reshape(-1, 256), xy[:, 1:].reshape(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            # ‖g‖ = sqrt(Σ_p ‖g_p‖²), each block's and the whole model's, before clipping
            per_layer = [torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in ps])) for ps in layer_params]
            total = torch.linalg.vector_norm(torch.stack([p.grad.norm() for p in model.parameters()]))
            loss_v, norm_v = float(loss.item()), float(total.item())
            record: dict[str, Any] = {
                "loss": loss_v,
                "grad_norm": norm_v,
                "layer_grad_norm": [float(v) for v in torch.stack(per_layer).tolist()],
                "lr": float(lrs[step - 1]),
            }
            result.loss.append(loss_v)
            result.grad_norm.append(norm_v)
            result.layer_grad_norm.append(record["layer_grad_norm"])
            result.lr.append(record["lr"])
            if not (math.isfinite(loss_v) and math.isfinite(norm_v)):
                result.diverged = True
                train_seconds += time.perf_counter() - t0
                if on_step is not None:
                    on_step(step, record)
                break
            if tcfg.grad_clip is not None:
                torch.nn.utils.clip_grad_norm_(model.parameters(), tcfg.grad_clip)
            opt.step()
            train_seconds += time.perf_counter() - t0
            if step % tcfg.eval_every == 0 or step == tcfg.steps:
                v = evaluate()
                result.val_steps.append(step)
                result.val_loss.append(v)
                record["val_loss"] = v
                if not math.isfinite(v):
                    result.diverged = True
            if on_step is not None:
                on_step(step, record)
            if result.diverged:
                break
        result.seconds = time.perf_counter() - start
        result.tokens_per_s = result.steps_done * tcfg.batch * cfg.ctx / max(train_seconds, 1e-9)
        params = params_of(model)
        finite = all(np.isfinite(v).all() for v in params.values())
        result.params = params if finite else last_good
        if not finite:
            result.diverged = True
    finally:
        torch.set_num_threads(old_threads)
    return result


# ---------------------------------------------------------------------------------------------------------------
# the checkpoint
# ---------------------------------------------------------------------------------------------------------------


def _json_array(obj: Any) -> NDArray[np.uint8]:
    return np.frombuffer(json.dumps(obj, sort_keys=True).encode("utf-8"), dtype=np.uint8)


def save_checkpoint(
    path: Path | str, params: dict[str, NDArray], cfg: GPTConfig, meta: dict[str, Any] | None = None
) -> int:
    """Write params (float32, "param/<name>"), the config and ``meta`` (JSON in uint8 arrays) to a compressed
    .npz; returns its size in bytes. ValueError for params that do not fit cfg."""
    _check_params(params, cfg)
    arrays = {f"param/{k}": np.asarray(params[k], dtype=np.float32) for k in param_shapes(cfg)}
    arrays["config"] = _json_array(asdict(cfg))
    arrays["meta"] = _json_array(meta or {})
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)
    return Path(path).stat().st_size


def load_checkpoint(path: Path | str = CHECKPOINT_PATH) -> tuple[dict[str, NDArray[np.float32]], GPTConfig, dict]:
    """(params, cfg, meta) from a checkpoint written by :func:`save_checkpoint`; no pickle is ever loaded."""
    with np.load(path, allow_pickle=False) as z:
        cfg_dict = json.loads(bytes(z["config"]).decode("utf-8"))
        meta = json.loads(bytes(z["meta"]).decode("utf-8"))
        params = {k.removeprefix("param/"): z[k].astype(np.float32) for k in z.files if k.startswith("param/")}
    known = {f.name for f in fields(GPTConfig)}
    cfg = GPTConfig(**{k: v for k, v in cfg_dict.items() if k in known})
    _check_params(params, cfg)
    return params, cfg, meta


# ---------------------------------------------------------------------------------------------------------------
# the shipped model and its command
# ---------------------------------------------------------------------------------------------------------------

SHIPPED_CONFIG = GPTConfig(n_layer=4, d_model=128, n_head=4, ctx=128, norm="pre")
SHIPPED_TRAIN = TrainConfig(
    steps=600, batch=32, lr=3e-3, warmup=30, schedule="cosine", grad_clip=1.0, seed=0, threads=2,
    eval_every=100, val_windows=None,
)  # fmt: skip
SHIPPED_VAL_LOSS = 1.5681  # nats per byte (2.262 bits per byte) of the shipped checkpoint: val_loss_numpy


def train_shipped(out: Path | str = CHECKPOINT_PATH, log: Callable[[str], None] = print) -> TrainResult:
    """Train :data:`SHIPPED_CONFIG` with :data:`SHIPPED_TRAIN` on the shipped corpus and save the checkpoint."""
    cfg, tcfg = SHIPPED_CONFIG, SHIPPED_TRAIN
    log(f"tiny GPT: {n_params(cfg):,} parameters, {tcfg.steps} steps of {tcfg.batch} x {cfg.ctx} bytes")

    def on_step(step: int, rec: dict[str, Any]) -> None:
        if step % 25 == 0 or "val_loss" in rec:
            val = f"  val {rec['val_loss']:.4f}" if "val_loss" in rec else ""
            now = time.strftime("%H:%M:%S")
            log(f"{now} step {step:4d}  loss {rec['loss']:.4f}  |g| {rec['grad_norm']:.3f}  lr {rec['lr']:.2e}{val}")

    result = train(cfg, tcfg, on_step=on_step)
    val = val_loss_numpy(result.params, cfg)
    meta = {
        "steps": result.steps_done,
        "train_loss": result.loss[-1],
        "val_loss": val,
        "val_loss_bits_per_byte": val / math.log(2),
        "corpus_sha256": corpus_sha256(),
        "seconds": result.seconds,
        "tokens_per_s": result.tokens_per_s,
        "threads": tcfg.threads,
        "train_config": asdict(tcfg),
        "diverged": result.diverged,
    }
    size = save_checkpoint(out, result.params, cfg, meta)
    log(
        f"done in {result.seconds:.0f} s ({result.tokens_per_s:,.0f} tokens/s): train {result.loss[-1]:.4f}, "
        f"val {val:.4f} nats/byte = {val / math.log(2):.4f} bits/byte; {out}: {size:,} bytes"
    )
    return result


def main(argv: list[str] | None = None) -> int:
    """The command line: ``train [--out PATH]`` trains the shipped model; ``--corpus`` rebuilds the snapshot."""
    parser = argparse.ArgumentParser(prog="python -m core.tiny_gpt", description=__doc__.splitlines()[0])
    parser.add_argument("command", nargs="?", choices=["train"], help="train the shipped model")
    parser.add_argument("--out", default=str(CHECKPOINT_PATH), help="where the checkpoint goes")
    parser.add_argument("--corpus", action="store_true", help=f"rebuild {CORPUS_PATH.relative_to(ROOT)} first")
    args = parser.parse_args(argv)
    if not args.corpus and args.command is None:
        parser.error("nothing to do: give train and/or --corpus")
    if args.corpus:
        print(f"{CORPUS_PATH.relative_to(ROOT)}: {write_corpus():,} bytes")
    if args.command == "train":
        train_shipped(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
