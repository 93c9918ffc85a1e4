"""Real model shapes and what follows from a shape alone: parameter counts, per-token FLOPs and KV-cache bytes.

One :class:`ModelSpec` describes a decoder-only transformer closely enough to count every parameter: layers,
width, query and KV heads, head dim, FFN width, vocabulary, tied embeddings or not; for a mixture of experts the
number of routed experts, how many a token uses (top-k), shared experts, the expert width and the leading dense
layers; for multi-head latent attention (MLA, DeepSeek-V2/V3) the query and KV latent ranks and the RoPE and
non-RoPE head dims. The memory, serving, scaling, KV-cache and LoRA pages all read the same spec.

Conventions: parameters are counted exactly, as Python ints (no biases: none of the catalogued models has any).
"Active" parameters are the ones one token touches in a forward pass: both embedding matrices, attention, norms,
the dense FFNs, the router, the shared experts and ``top_k`` routed experts (the way Mixtral's 12.9B is counted).
Bytes are bytes; KiB = 2^10, GiB = 2^30 bytes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.kv_cache import kv_cache_bytes

KIB = 2**10
MIB = 2**20
GIB = 2**30
GB = 10**9


@dataclass(frozen=True)
class ModelSpec:
    """The shape of a decoder-only transformer (SwiGLU FFNs, RMSNorm, no biases).

    Dense model: ``n_experts = 0``. MoE: ``n_experts`` routed experts of width ``d_expert`` (``d_ff`` is then the
    width of the ``n_dense_layers`` leading dense layers), ``top_k`` routed per token, ``n_shared_experts`` always
    on. MLA: ``kv_lora_rank > 0``; K and V are rebuilt from a ``kv_lora_rank`` latent plus one shared RoPE key of
    ``qk_rope_dim`` per token, queries from a ``q_lora_rank`` latent (0 = a plain D x heads projection); query and
    key heads have ``qk_nope_dim + qk_rope_dim`` dims and value heads ``v_head_dim``. ``mtp_layers`` counts
    DeepSeek-V3's multi-token-prediction modules, which :func:`param_count` leaves out unless asked.
    ``published_params`` / ``published_active`` are the sizes the model's authors state (None for custom shapes).
    ``tokenizer`` names the tokenizer (same name = same tokens with the same ids; "" = unknown).
    """

    name: str
    layers: int
    d_model: int
    n_heads: int
    n_kv_heads: int
    d_ff: int
    vocab: int
    head_dim: int = 0  # 0 = d_model // n_heads
    # which tokenizer the vocabulary is ("" = unknown): two models share tokens and token ids only when this matches;
    # an equal vocabulary size is not enough (Mixtral-8x7B and Llama-2-7B both have 32,000 tokens, different ones)
    tokenizer: str = ""
    tied: bool = False
    # mixture of experts
    n_experts: int = 0
    top_k: int = 0
    n_shared_experts: int = 0
    d_expert: int = 0
    n_dense_layers: int = 0
    # multi-head latent attention
    q_lora_rank: int = 0
    kv_lora_rank: int = 0
    qk_rope_dim: int = 0
    qk_nope_dim: int = 0
    v_head_dim: int = 0
    mtp_layers: int = 0
    published_params: float | None = None
    published_active: float | None = None
    source: str = ""

    def __post_init__(self) -> None:
        positive = ("layers", "d_model", "n_heads", "n_kv_heads", "d_ff", "vocab")
        non_negative = (
            "head_dim",
            "n_experts",
            "top_k",
            "n_shared_experts",
            "d_expert",
            "n_dense_layers",
            "q_lora_rank",
            "kv_lora_rank",
            "qk_rope_dim",
            "qk_nope_dim",
            "v_head_dim",
            "mtp_layers",
        )
        for attr in positive + non_negative:
            v = getattr(self, attr)
            lo = 1 if attr in positive else 0
            if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
                raise ValueError(f"{attr} must be a whole number >= {lo}, got {v!r}")
        if self.head_dim == 0:
            if self.d_model % self.n_heads:
                raise ValueError(
                    f"d_model = {self.d_model} is not a multiple of n_heads = {self.n_heads}; give head_dim"
                )
            object.__setattr__(self, "head_dim", self.d_model // self.n_heads)
        if self.n_heads % self.n_kv_heads:
            raise ValueError(f"n_kv_heads = {self.n_kv_heads} must divide n_heads = {self.n_heads}")
        if self.n_experts:
            if not 1 <= self.top_k <= self.n_experts:
                raise ValueError(f"top_k must be between 1 and n_experts = {self.n_experts}, got {self.top_k}")
            if self.d_expert < 1:
                raise ValueError("an MoE spec needs the expert width d_expert")
            if self.n_dense_layers > self.layers:
                raise ValueError(f"n_dense_layers = {self.n_dense_layers} exceeds layers = {self.layers}")
        elif self.top_k or self.n_shared_experts or self.d_expert or self.n_dense_layers:
            raise ValueError("top_k, shared experts, d_expert and n_dense_layers need n_experts > 0")
        if self.kv_lora_rank and not (self.qk_rope_dim and self.qk_nope_dim and self.v_head_dim):
            raise ValueError("an MLA spec needs qk_rope_dim, qk_nope_dim and v_head_dim")

    @property
    def is_moe(self) -> bool:
        return self.n_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.kv_lora_rank > 0

    @property
    def moe_layers(self) -> int:
        return self.layers - self.n_dense_layers if self.is_moe else 0

    @property
    def dense_layers(self) -> int:
        return self.layers - self.moe_layers

    @property
    def qk_head_dim(self) -> int:
        """Dims of one query/key head (what a score's dot product runs over)."""
        return self.qk_nope_dim + self.qk_rope_dim if self.is_mla else self.head_dim

    @property
    def v_dim(self) -> int:
        """Dims of one value head."""
        return self.v_head_dim if self.is_mla else self.head_dim

    def replace(self, **changes: Any) -> ModelSpec:
        """A copy with some fields changed (validated again); ``name`` defaults to "custom"."""
        changes.setdefault("name", "custom")
        if changes["name"] == "custom":
            changes.setdefault("published_params", None)
            changes.setdefault("published_active", None)
            changes.setdefault("source", "")
        if "d_model" in changes or "n_heads" in changes:
            changes.setdefault("head_dim", 0)
        if changes.get("vocab", self.vocab) != self.vocab:
            changes.setdefault("tokenizer", "")  # another vocabulary size is another, unknown tokenizer
        return dataclasses.replace(self, **changes)


# ----------------------------------------------------------------------------------------------------------------
# The catalogue (shapes from each model's released config; sizes as published by its authors)

LLAMA2_7B = ModelSpec(
    "Llama-2-7B", layers=32, d_model=4096, n_heads=32, n_kv_heads=32, d_ff=11008, vocab=32000, tokenizer="llama",
    published_params=6.738e9, source="Touvron et al. 2023 (Llama 2); config.json of meta-llama/Llama-2-7b-hf",
)  # fmt: skip
LLAMA_65B = ModelSpec(
    "LLaMA-65B", layers=80, d_model=8192, n_heads=64, n_kv_heads=64, d_ff=22016, vocab=32000, tokenizer="llama",
    published_params=65.2e9, source="Touvron et al. 2023 (LLaMA), Table 2; the base model of QLoRA's 65B run",
)  # fmt: skip
LLAMA3_8B = ModelSpec(
    "Llama-3-8B", layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_ff=14336, vocab=128256, tokenizer="llama3",
    published_params=8.030e9, source="Llama Team 2024 (The Llama 3 Herd of Models); Meta-Llama-3-8B config",
)  # fmt: skip
LLAMA3_70B = ModelSpec(
    "Llama-3-70B", layers=80, d_model=8192, n_heads=64, n_kv_heads=8, d_ff=28672, vocab=128256, tokenizer="llama3",
    published_params=70.554e9, source="Llama Team 2024; Meta-Llama-3-70B config; seed 002 A10-02",
)  # fmt: skip
LLAMA31_405B = ModelSpec(
    "Llama-3.1-405B", layers=126, d_model=16384, n_heads=128, n_kv_heads=8, d_ff=53248, vocab=128256,
    tokenizer="llama3",
    published_params=405.853e9, source="Llama Team 2024; Meta-Llama-3.1-405B config",
)  # fmt: skip
MIXTRAL_8X7B = ModelSpec(
    "Mixtral-8x7B", layers=32, d_model=4096, n_heads=32, n_kv_heads=8, d_ff=14336, vocab=32000, tokenizer="mistral",
    n_experts=8, top_k=2, d_expert=14336,
    published_params=46.70e9, published_active=12.88e9, source="Jiang et al. 2024 (Mixtral of Experts)",
)  # fmt: skip
DEEPSEEK_V3 = ModelSpec(
    "DeepSeek-V3", layers=61, d_model=7168, n_heads=128, n_kv_heads=128, d_ff=18432, vocab=129280, head_dim=128,
    tokenizer="deepseek-v3",
    n_experts=256, top_k=8, n_shared_experts=1, d_expert=2048, n_dense_layers=3,
    q_lora_rank=1536, kv_lora_rank=512, qk_rope_dim=64, qk_nope_dim=128, v_head_dim=128, mtp_layers=1,
    published_params=671e9, published_active=37e9,
    source="DeepSeek-AI 2024 (DeepSeek-V3 Technical Report); 671B/37B exclude the MTP module (about 14B with its "
    "own copies of the embedding and head by the model card, 11.6B without from the config, 11.5B in DeepSeek's "
    "README_WEIGHTS)",
)  # fmt: skip
# DeepSeek-V3's multi-token-prediction module used as its speculative draft (DeepSeek-AI 2024 §2.2, §5.4.3): one
# MoE block of the main model's shape that shares its embedding and output head, so it drafts with the same
# tokenizer (129,280 tokens). As a spec: that block plus the shared embedding and head (read at each draft step);
# the module's 2D -> D projection (0.1B) is left out. Not in the catalogue: it is a draft, not a model to serve on
# its own.
DEEPSEEK_V3_MTP = ModelSpec(
    "DeepSeek-V3 MTP", layers=1, d_model=7168, n_heads=128, n_kv_heads=128, d_ff=18432, vocab=129280, head_dim=128,
    tokenizer="deepseek-v3",
    n_experts=256, top_k=8, n_shared_experts=1, d_expert=2048, n_dense_layers=0,
    q_lora_rank=1536, kv_lora_rank=512, qk_rope_dim=64, qk_nope_dim=128, v_head_dim=128,
    source="DeepSeek-AI 2024 §2.2: one MTP module (a MoE block) sharing the main model's embedding and head",
)  # fmt: skip
# "custom" starts from a small tied model (the shape of Llama-3.2-1B, 1.24B), where tying matters (002 A2.10); it has
# Llama 3's tokenizer until its vocabulary size is changed (ModelSpec.replace then makes the tokenizer unknown).
CUSTOM = ModelSpec(
    "custom", layers=16, d_model=2048, n_heads=32, n_kv_heads=8, d_ff=8192, vocab=128256, tied=True,
    tokenizer="llama3",
    source="starting shape: Llama-3.2-1B (Meta 2024)",
)  # fmt: skip

CATALOGUE: dict[str, ModelSpec] = {
    s.name: s for s in (LLAMA2_7B, LLAMA_65B, LLAMA3_8B, LLAMA3_70B, LLAMA31_405B, MIXTRAL_8X7B, DEEPSEEK_V3, CUSTOM)
}


def get_spec(name: str) -> ModelSpec:
    """The catalogued spec called ``name``; ValueError listing the names otherwise."""
    try:
        return CATALOGUE[name]
    except KeyError:
        raise ValueError(f"unknown model {name!r}; expected one of {', '.join(CATALOGUE)}") from None


# ----------------------------------------------------------------------------------------------------------------
# Parameter counts


@dataclass(frozen=True)
class ParamBreakdown:
    """Parameters by component (exact ints). ``total`` excludes the MTP module; ``mtp`` holds it separately."""

    embedding: int  # V D (input)
    unembedding: int  # V D (output head), 0 when tied
    attention: int  # all attention projections, all layers
    ffn: int  # dense FFNs + routed experts + shared experts, all layers
    router: int  # MoE gate weights (and DeepSeek-V3's routing bias)
    norms: int  # RMSNorm gains: 2 per layer, MLA's latent norms, the final norm
    ffn_active: int  # the FFN weights one token uses (dense + shared + top_k routed)
    mtp: int = 0  # DeepSeek-V3's multi-token-prediction module(s), beyond the shared embedding and head

    @property
    def embeddings(self) -> int:
        return self.embedding + self.unembedding

    @property
    def total(self) -> int:
        return self.embeddings + self.attention + self.ffn + self.router + self.norms

    @property
    def active(self) -> int:
        return self.embeddings + self.attention + self.ffn_active + self.router + self.norms

    def shares(self) -> dict[str, float]:
        """Fraction of ``total`` in embeddings, attention, FFN and the rest (router + norms)."""
        t = self.total
        return {
            "embeddings": self.embeddings / t,
            "attention": self.attention / t,
            "ffn": self.ffn / t,
            "router_and_norms": (self.router + self.norms) / t,
        }


def attention_params_per_layer(spec: ModelSpec) -> int:
    """Attention weights of one layer.

    Standard (MHA/GQA/MQA):  W_q (D x N H) + W_k, W_v (D x K H each) + W_o (N H x D) = 2 D N H + 2 D K H
    MLA:  [D x r_q + r_q x N (d_nope + d_rope)] (or D x N (d_nope + d_rope) without a query latent)
          + D x (r_kv + d_rope) + r_kv x N (d_nope + d_v) + N d_v x D
    """
    D, N, K, H = spec.d_model, spec.n_heads, spec.n_kv_heads, spec.head_dim
    if not spec.is_mla:
        return 2 * D * N * H + 2 * D * K * H
    q_dim = N * (spec.qk_nope_dim + spec.qk_rope_dim)
    q = D * spec.q_lora_rank + spec.q_lora_rank * q_dim if spec.q_lora_rank else D * q_dim
    kv_down = D * (spec.kv_lora_rank + spec.qk_rope_dim)
    kv_up = spec.kv_lora_rank * N * (spec.qk_nope_dim + spec.v_head_dim)
    out = N * spec.v_head_dim * D
    return q + kv_down + kv_up + out


def _moe_layer(spec: ModelSpec) -> tuple[int, int, int]:
    """(all FFN weights, active FFN weights, router weights) of one MoE layer; SwiGLU experts of 3 D d_e each."""
    expert = 3 * spec.d_model * spec.d_expert
    ffn = (spec.n_experts + spec.n_shared_experts) * expert
    active = (spec.top_k + spec.n_shared_experts) * expert
    router = spec.d_model * spec.n_experts + (spec.n_experts if spec.n_shared_experts else 0)  # + V3's bias
    return ffn, active, router


def param_breakdown(spec: ModelSpec) -> ParamBreakdown:
    """Exact parameter counts of ``spec`` by component (see :class:`ParamBreakdown`).

    embeddings  V D (+ V D untied)
    per layer   attention (:func:`attention_params_per_layer`) + 2 D norm gains (+ r_q + r_kv for MLA)
                + FFN: 3 D F (SwiGLU: gate, up, down) in a dense layer;
                  (E + E_shared) 3 D d_e experts + D E router in an MoE layer
    final norm  D
    """
    D, V = spec.d_model, spec.vocab
    attn = attention_params_per_layer(spec)
    norms_per_layer = 2 * D + (spec.q_lora_rank + spec.kv_lora_rank if spec.is_mla else 0)
    dense_ffn = 3 * D * spec.d_ff
    moe_ffn, moe_active, moe_router = _moe_layer(spec) if spec.is_moe else (0, 0, 0)
    nd, nm = spec.dense_layers, spec.moe_layers
    mtp = 0
    if spec.mtp_layers:
        # DeepSeek-V3's MTP module: two norms on its inputs, a 2D -> D projection, one (MoE) block and a final
        # norm; it shares the embedding and output head with the main model.
        block = attn + norms_per_layer + (moe_ffn + moe_router if spec.is_moe else dense_ffn)
        mtp = spec.mtp_layers * (2 * D + 2 * D * D + block + D)
    return ParamBreakdown(
        embedding=V * D,
        unembedding=0 if spec.tied else V * D,
        attention=spec.layers * attn,
        ffn=nd * dense_ffn + nm * moe_ffn,
        router=nm * moe_router,
        norms=spec.layers * norms_per_layer + D,
        ffn_active=nd * dense_ffn + nm * moe_active,
        mtp=mtp,
    )


def param_count(spec: ModelSpec, *, active: bool = False, include_mtp: bool = False) -> int:
    """Total (or, with ``active``, per-token active) parameters of ``spec``; MTP modules only when asked."""
    b = param_breakdown(spec)
    n = b.active if active else b.total
    return n + (b.mtp if include_mtp else 0)


def relative_error(count: float, published: float) -> float:
    """(count - published) / published: how far a derived count is from the authors' stated size."""
    return (count - published) / published


def simple_param_count(V: ArrayLike, D: ArrayLike, L: ArrayLike, F: ArrayLike | None = None) -> NDArray:
    """002 A10-01's MHA approximation: 2 V D + L (4 D^2 + 3 D F + 2 D); F = 8D/3 gives 2 V D + 12 L D^2 (+ 2 L D)."""
    V, D, L = (np.asarray(x, dtype=float) for x in (V, D, L))
    F = 8.0 * D / 3.0 if F is None else np.asarray(F, dtype=float)
    return 2 * V * D + L * (4 * D**2 + 3 * D * F + 2 * D)


# ----------------------------------------------------------------------------------------------------------------
# KV cache (per token, per sequence)


def kv_values_per_token(spec: ModelSpec, *, mha: bool = False) -> int:
    """Numbers cached per token of one sequence, over all layers.

    standard: 2 L K H           (2 for K and V; K = KV heads, not query heads; ``mha`` uses K = N)
    MLA:      L (r_kv + d_rope) (one latent and one shared RoPE key per layer; K, V are rebuilt from them)
    """
    if spec.is_mla and not mha:
        return spec.layers * (spec.kv_lora_rank + spec.qk_rope_dim)
    K = spec.n_heads if mha else spec.n_kv_heads
    return 2 * spec.layers * K * spec.head_dim


def kv_cache_bytes_per_token(spec: ModelSpec, bytes_per_value: float = 2.0, *, mha: bool = False) -> float:
    """KV-cache bytes per token of one sequence (bf16 = 2 bytes per value, fp8 = 1).

    Standard attention counts with :func:`core.kv_cache.kv_cache_bytes` (the one implementation of 2 L K H b);
    MLA caches L (r_kv + d_rope) values per token instead.
    """
    if not bytes_per_value > 0:
        raise ValueError(f"bytes_per_value must be > 0, got {bytes_per_value!r}")
    if spec.is_mla and not mha:
        return kv_values_per_token(spec) * bytes_per_value
    K = spec.n_heads if mha else spec.n_kv_heads
    return float(kv_cache_bytes(spec.layers, K, spec.head_dim, bytes_per_value))


# ----------------------------------------------------------------------------------------------------------------
# FLOPs


def forward_flops_per_token(spec: ModelSpec, context: ArrayLike = 0) -> NDArray | float:
    """Forward FLOPs for one token that attends to ``context`` positions.

    2 x (active weights it multiplies: everything active but the norm gains and the input embedding, a lookup;
         a tied model's one V x D matrix is still multiplied once, as the output head)
    + per layer 2 N context (d_qk + d_v) for the scores Q K^T and the weighted sum A V
    """
    b = param_breakdown(spec)
    # tied: ``active`` holds the shared V x D matrix once (unembedding = 0), and the output head multiplies by it
    lookup = 0 if spec.tied else b.embedding
    matmul = 2.0 * (b.active - lookup - b.norms)
    attn = 2.0 * spec.layers * spec.n_heads * (spec.qk_head_dim + spec.v_dim)
    return matmul + attn * np.asarray(context, dtype=float)


def forward_flops_formula(B: ArrayLike, S: ArrayLike, D: ArrayLike, L: ArrayLike, V: ArrayLike) -> NDArray:
    """002 A10-04 for MHA with F = 8D/3: L (24 B S D^2 + 4 B S^2 D) + 2 B S D V (the unembedding)."""
    B, S, D, L, V = (np.asarray(x, dtype=float) for x in (B, S, D, L, V))
    return L * (24 * B * S * D**2 + 4 * B * S**2 * D) + 2 * B * S * D * V


__all__ = [
    "CATALOGUE",
    "CUSTOM",
    "DEEPSEEK_V3",
    "DEEPSEEK_V3_MTP",
    "GB",
    "GIB",
    "KIB",
    "LLAMA2_7B",
    "LLAMA3_8B",
    "LLAMA3_70B",
    "LLAMA31_405B",
    "LLAMA_65B",
    "MIB",
    "MIXTRAL_8X7B",
    "ModelSpec",
    "ParamBreakdown",
    "attention_params_per_layer",
    "forward_flops_formula",
    "forward_flops_per_token",
    "get_spec",
    "kv_cache_bytes_per_token",
    "kv_values_per_token",
    "param_breakdown",
    "param_count",
    "relative_error",
    "simple_param_count",
]
