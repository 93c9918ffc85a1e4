"""The KV cache: bytes kept for decoding, and the MHA / GQA / MQA comparison of the attention page's calculator.

    bytes = 2 · L · K · H · bytes_per_value · tokens · batch   (K = KV heads, not query heads)

The one implementation of this count: :func:`core.model_spec.kv_cache_bytes_per_token` calls :func:`kv_cache_bytes`
for standard attention. Results are byte counts (ints); :mod:`viz.format` writes them for people.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np


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
# (label, bytes): the memory of one H100 or A100 "80 GB", for scale, read as 80 GiB like core.hardware and the
# systems pages (the seeds' convention); 80e9 bytes would draw it at 74.5 GiB, the GB-vs-GiB trap
GPU_MEMORY = ("one 80 GB GPU (80 GiB)", 80 * 2**30)


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
    layers: int,
    query_heads: int,
    kv_heads: int,
    head_dim: int,
    bytes_per_value: float = 2,
    tokens: int = 1,
    batch: int = 1,
) -> KVComparison:
    """The KV cache of a shape with its own KV heads, next to full MHA and MQA.

        bytes = 2 · L · K · H · bytes_per_value · tokens · batch,   K = query_heads (MHA), kv_heads, or 1 (MQA)

    Every count is a whole number >= 1 and kv_heads <= query_heads; bytes_per_value is a positive number (ValueError
    otherwise). KV heads that do not divide the query heads are counted as given (a GQA model needs equal groups;
    :func:`views.inputs.kv_calculator_inputs` notes it).
    """
    counts = {"layers": layers, "query_heads": query_heads, "kv_heads": kv_heads, "head_dim": head_dim}
    for name, value in (counts | {"tokens": tokens, "batch": batch}).items():
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be a whole number >= 1, got {value!r}")
    if kv_heads > query_heads:
        raise ValueError(f"kv_heads={kv_heads} exceeds query_heads={query_heads} (at most one KV head per query head)")
    b = float(bytes_per_value)
    if not math.isfinite(b) or b <= 0:
        raise ValueError(f"bytes_per_value must be a positive number, got {bytes_per_value!r}")
    rows: dict[int, str] = {}
    for K in (int(query_heads), int(kv_heads), 1):
        rows.setdefault(K, f"{variant_name(int(query_heads), K)}: {K} KV head{'s' if K > 1 else ''}")
    Ks = tuple(rows)
    L, H = int(layers), int(head_dim)
    # bytes per token = 2 · L · K · H · bytes_per_value;  total = that · tokens · batch
    per_token = tuple(kv_cache_bytes(L, K, H, b) for K in Ks)
    total = tuple(kv_cache_bytes(L, K, H, b, int(tokens), int(batch)) for K in Ks)
    return KVComparison(
        tuple(rows.values()),
        Ks,
        per_token,
        total,
        Ks.index(int(kv_heads)),
        L,
        int(query_heads),
        H,
        b,
        int(tokens),
        int(batch),
    )
