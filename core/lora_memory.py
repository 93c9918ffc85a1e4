"""What LoRA costs at model scale: trainable parameters, their share, and bytes for LoRA, QLoRA and full
fine-tuning of a decoder shape; :data:`PRESET_F` is the lesson's worked example F.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field

import numpy as np

from core.lora import lora_param_count

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
