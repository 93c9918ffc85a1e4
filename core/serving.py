"""Inference and serving: the roofline of prefill and decode, KV-cache capacity, speculative decoding,
quantisation and an MoE's memory against its compute (the router toy is core.moe's).

Units: bytes, seconds, FLOP; bandwidth in bytes/s and peaks in FLOP/s (decimal, as spec sheets write them);
memory sizes in bytes, shown as GiB = 2^30 by the pages (002 A10's convention). The roofline model: a step takes
max(bytes moved / bandwidth, FLOPs / peak) (Williams et al. 2009).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.hardware import GIB, Gpu, get_gpu
from core.model_spec import ModelSpec, forward_flops_per_token, kv_cache_bytes_per_token, param_breakdown

# ----------------------------------------------------------------------------------------------------------------
# Number formats of weights and KV values

# Bits per parameter, scales included, applied to every weight (embeddings and output head too, which servers often
# keep in 16 bits). int4: symmetric groups of 128 with one 16-bit scale (4 + 16/128); an asymmetric scheme with a
# zero-point per group (AWQ, GPTQ) stores a little more. NF4 (Dettmers et al.
# 2023): blocks of 64 with one fp32 absmax (4 + 32/64 = 4.5); with double quantisation the absmaxes become 8-bit with
# one fp32 constant per 256 of them: 4 + 8/64 + 32/(64 x 256) = 4.127.
BITS_PER_PARAM: dict[str, float] = {
    "fp32": 32.0,
    "bf16": 16.0,
    "fp8": 8.0,
    "int8": 8.0,
    "int4": 4.0 + 16.0 / 128.0,
    "nf4": 4.0 + 32.0 / 64.0,
    "nf4_dq": 4.0 + 8.0 / 64.0 + 32.0 / (64.0 * 256.0),
}


def bytes_per_param(fmt: str) -> float:
    """Bytes per stored parameter of a format in :data:`BITS_PER_PARAM` (bits / 8)."""
    try:
        return BITS_PER_PARAM[fmt] / 8.0
    except KeyError:
        raise ValueError(f"unknown format {fmt!r}; expected one of {', '.join(BITS_PER_PARAM)}") from None


def _bpp(fmt: str | float) -> float:
    if isinstance(fmt, str):
        return bytes_per_param(fmt)
    if not (math.isfinite(fmt) and fmt > 0):
        raise ValueError(f"bytes per parameter must be > 0, got {fmt!r}")
    return float(fmt)


def weight_bytes(spec: ModelSpec, fmt: str | float = "bf16") -> float:
    """Bytes of all weights (every expert of an MoE is resident): N_total x bytes per parameter."""
    return param_breakdown(spec).total * _bpp(fmt)


# ----------------------------------------------------------------------------------------------------------------
# Roofline of one forward step


def _check_tp(spec: ModelSpec, tp: int) -> int:
    if isinstance(tp, bool) or not isinstance(tp, (int, np.integer)) or tp < 1:
        raise ValueError(f"TP must be a whole number >= 1, got {tp!r}")
    if spec.n_heads % tp:
        raise ValueError(f"TP = {tp} does not divide the {spec.n_heads} attention heads of {spec.name}")
    return int(tp)


def weight_bytes_read(spec: ModelSpec, tokens: ArrayLike, fmt: str | float = "bf16") -> NDArray:
    """Weight bytes one step must read when it processes ``tokens`` tokens together.

    Dense: every weight once. MoE: everything but the routed experts, plus the routed experts some token picked;
    with uniform routing, per MoE layer, an expert is untouched by T tokens with probability (1 - k/E)^T, so
    E (1 - (1 - k/E)^T) experts are read (one token reads k; a large batch reads them all).
    """
    b = param_breakdown(spec)
    T = np.asarray(tokens, dtype=float)
    if not spec.is_moe:
        return np.full_like(T, b.total * _bpp(fmt))
    routed_per_layer = spec.n_experts * 3 * spec.d_model * spec.d_expert
    routed = spec.moe_layers * routed_per_layer
    touched = 1.0 - (1.0 - spec.top_k / spec.n_experts) ** T  # expected fraction of routed experts read
    return ((b.total - routed) + routed * touched) * _bpp(fmt)


@dataclass(frozen=True)
class Step:
    """One forward step of ``batch`` sequences, each adding ``new_tokens`` after ``context`` cached ones."""

    flops: NDArray
    weight_bytes: NDArray
    kv_bytes: NDArray
    seconds: NDArray  # roofline: max(bytes per GPU / bandwidth, flops / (tp peak)) + all-reduce latency
    memory_seconds: NDArray
    compute_seconds: NDArray

    @property
    def bytes(self) -> NDArray:
        return self.weight_bytes + self.kv_bytes

    @property
    def intensity(self) -> NDArray:
        """FLOP per byte moved, the KV cache counted once for the whole tensor-parallel group; a GPU that reads a
        replicated cache (KV heads fewer than the GPUs, MLA's latent) sees less, as the step time counts."""
        return self.flops / self.bytes


def forward_step(
    spec: ModelSpec,
    gpu: str | Gpu,
    batch: ArrayLike = 1,
    new_tokens: ArrayLike = 1,
    context: ArrayLike = 0,
    *,
    weight_format: str | float = "bf16",
    kv_bytes_per_value: float = 2.0,
    tp: int = 1,
    allreduce_latency_s: float = 0.0,
) -> Step:
    """Roofline of one step (broadcasts over batch, new_tokens and context).

    FLOPs  = B T forward_flops_per_token(context + T/2)       (T = new tokens; causal: the mean key count)
    bytes  = weights read + B (context + T) KV bytes per token (reading the cache, writing the new entries)
    time   = max(bytes per GPU / bandwidth, FLOPs / (tp x peak)) + 2 L x all-reduce latency when tp > 1

    Tensor parallelism gives each of tp GPUs 1/tp of the weights and of the FLOPs (Megatron: two all-reduces per
    layer), but the cache only by KV heads: each GPU reads its ceil(K / tp) KV heads' share, all of MLA's latent
    (:func:`kv_replication`).
    """
    g = get_gpu(gpu)
    tp = _check_tp(spec, tp)
    B, T, ctx = (np.asarray(x, dtype=float) for x in (batch, new_tokens, context))
    if np.any(B < 1) or np.any(T < 1) or np.any(ctx < 0):
        raise ValueError("batch and new_tokens must be >= 1 and context >= 0")
    flops = B * T * forward_flops_per_token(spec, ctx + T / 2.0)
    w = weight_bytes_read(spec, B * T, weight_format)
    kv = B * (ctx + T) * kv_cache_bytes_per_token(spec, kv_bytes_per_value)
    mem_s = (w + kv * kv_replication(spec, tp)) / (tp * g.bandwidth)
    comp_s = flops / (tp * g.peak_flops)
    latency = 2 * spec.layers * allreduce_latency_s if tp > 1 else 0.0
    return Step(
        flops=flops,
        weight_bytes=w,
        kv_bytes=kv,
        seconds=np.maximum(mem_s, comp_s) + latency,
        memory_seconds=mem_s,
        compute_seconds=comp_s,
    )


def attainable_flops(intensity: ArrayLike, gpu: str | Gpu, *, sparse: bool = False) -> NDArray:
    """The roofline (Williams et al. 2009): attainable FLOP/s = min(peak, intensity x bandwidth).

    ``sparse`` uses the 2:4-sparse peak of the data sheet (the trap: dense matmuls never reach it).
    """
    g = get_gpu(gpu)
    peak = g.sparse_flops if sparse else g.peak_flops
    return np.minimum(peak, np.asarray(intensity, dtype=float) * g.bandwidth)


def decode_intensity(
    spec: ModelSpec,
    batch: ArrayLike,
    context: ArrayLike = 0,
    *,
    weight_format: str | float = "bf16",
    kv_bytes_per_value: float = 2.0,
) -> NDArray:
    """FLOP per byte of one decode step of ``batch`` sequences (about B at bf16 and short context, 002 A10-11)."""
    return forward_step(
        spec, "H100", batch, 1, context, weight_format=weight_format, kv_bytes_per_value=kv_bytes_per_value
    ).intensity


def prefill_intensity(spec: ModelSpec, seq: ArrayLike, *, weight_format: str | float = "bf16") -> NDArray:
    """FLOP per byte of prefilling one prompt of ``seq`` tokens (about S at bf16, 002 A10-11)."""
    return forward_step(spec, "H100", 1, seq, 0, weight_format=weight_format).intensity


def simple_intensity(n_params: ArrayLike, tokens: ArrayLike, bytes_per_param: float = 2.0) -> NDArray:
    """002 A10-11's estimate: 2 N T FLOPs over N b bytes of weights = 2T / b (T tokens per weight read)."""
    N, T = np.asarray(n_params, dtype=float), np.asarray(tokens, dtype=float)
    return 2 * N * T / (N * bytes_per_param)


def decode_time_bound(
    spec: ModelSpec,
    gpu: str | Gpu,
    *,
    weight_format: str | float = "bf16",
    tp: int = 1,
    allreduce_latency_s: float = 0.0,
) -> float:
    """Batch-1 decode lower bound in seconds per token: model bytes / (tp x bandwidth) (+ all-reduce latency).

    Llama-3-70B in bf16 on one H100's bandwidth: 141 GB / 3.35 TB/s = 42 ms (002 A8.1).
    """
    g = get_gpu(gpu)
    tp = _check_tp(spec, tp)
    latency = 2 * spec.layers * allreduce_latency_s if tp > 1 else 0.0
    return float(weight_bytes_read(spec, 1, weight_format)) / (tp * g.bandwidth) + latency


# ----------------------------------------------------------------------------------------------------------------
# KV-cache capacity


@dataclass(frozen=True)
class KVCapacity:
    """How many sequences of one context length fit next to the weights (bytes over all GPUs)."""

    memory: float
    weights: float
    reserve: float
    kv_budget: float
    per_sequence: float  # one sequence's cache, counted once
    sequences: int
    replication: float = 1.0  # copies of each cached value held across the tensor-parallel group

    @property
    def per_sequence_held(self) -> float:
        """Bytes one sequence takes from the budget, all copies together: per_sequence x replication."""
        return self.per_sequence * self.replication

    @property
    def left_after_weights(self) -> float:
        return self.memory - self.weights


def kv_sequences_that_fit(
    spec: ModelSpec,
    context: int,
    *,
    gpu: str | Gpu = "H100",
    n_gpus: int = 1,
    weight_format: str | float = "bf16",
    kv_bytes_per_value: float = 2.0,
    reserve_bytes: float = 0.0,
    kv_budget_bytes: float | None = None,
) -> KVCapacity:
    """Concurrent sequences of ``context`` tokens: floor(KV budget / (context x KV bytes per token)).

    KV budget = n_GPU x memory - weights - reserve (CUDA context, framework, transient activations; all totals
    over the ``n_gpus`` GPUs of one tensor-parallel group), unless ``kv_budget_bytes`` gives it directly (002 A10-08
    budgets 170 GiB). Tensor parallelism splits the weights evenly but the cache only by KV heads: with t GPUs and
    K KV heads each GPU holds ceil(K / t) heads, so the group holds t ceil(K / t) / K copies of the cache (1 when
    t divides K; t / K when t > K, where KV heads are replicated). MLA's latent (DeepSeek-V2/V3) is one vector per
    layer shared by all heads, K = 1 in effect: every GPU holds all of it (t copies; serving stacks such as SGLang can
    run MLA's attention data-parallel instead, each GPU holding its own sequences' latents). ValueError when the
    weights do not fit.
    """
    g = get_gpu(gpu)
    if isinstance(n_gpus, bool) or not isinstance(n_gpus, (int, np.integer)) or n_gpus < 1:
        raise ValueError(f"the number of GPUs must be a whole number >= 1, got {n_gpus!r}")
    if isinstance(context, bool) or not isinstance(context, (int, np.integer)) or context < 1:
        raise ValueError(f"the context must be a whole number of tokens >= 1, got {context!r}")
    if not (math.isfinite(reserve_bytes) and reserve_bytes >= 0):
        raise ValueError(f"the reserve must be >= 0 bytes, got {reserve_bytes!r}")
    memory = n_gpus * g.memory_bytes
    weights = weight_bytes(spec, weight_format)
    if weights + reserve_bytes >= memory:
        raise ValueError(
            f"{spec.name}'s weights ({weights / GIB:.1f} GiB) plus the reserve ({reserve_bytes / GIB:.1f} GiB) do "
            f"not fit in {n_gpus} x {g.name} ({memory / GIB:.0f} GiB): use more GPUs or a smaller format"
        )
    left = memory - weights - reserve_bytes
    if kv_budget_bytes is not None:
        if not (math.isfinite(kv_budget_bytes) and 0 < kv_budget_bytes <= memory - weights):
            raise ValueError(
                f"the KV budget must be positive and at most the {(memory - weights) / GIB:.1f} GiB left after the "
                f"weights, got {kv_budget_bytes / GIB:.1f} GiB"
            )
        left = float(kv_budget_bytes)
    per_seq = context * kv_cache_bytes_per_token(spec, kv_bytes_per_value)
    replication = kv_replication(spec, int(n_gpus))
    return KVCapacity(
        memory=memory,
        weights=weights,
        reserve=memory - weights - left,
        kv_budget=left,
        per_sequence=per_seq,
        sequences=math.floor(left / (per_seq * replication)),
        replication=replication,
    )


def kv_replication(spec: ModelSpec, tp: int) -> float:
    """Copies of the KV cache a tensor-parallel group of ``tp`` GPUs holds: tp ceil(K / tp) / K with K the KV
    heads (1 for MLA's shared latent). 1 when tp divides K; tp / K once tp exceeds K."""
    if isinstance(tp, bool) or not isinstance(tp, (int, np.integer)) or tp < 1:
        raise ValueError(f"TP must be a whole number >= 1, got {tp!r}")
    k = 1 if spec.is_mla else spec.n_kv_heads
    return tp * math.ceil(k / tp) / k


@dataclass(frozen=True)
class AllocationWaste:
    """Reserved-but-unused share of KV memory under two allocators (0.95 = 95% wasted)."""

    contiguous: float  # each sequence reserves max_len slots
    paged: float  # each sequence gets ceil(len / block) blocks of ``block`` slots
    contiguous_slots: int
    paged_slots: int
    used_slots: int


def allocation_waste(lengths: ArrayLike, max_len: int, block: int = 16) -> AllocationWaste:
    """Waste of contiguous allocation (reserve max_len per sequence; a 200-token answer in a 4,096 reservation
    wastes 95%, 002 A8.4) against PagedAttention's fixed blocks (Kwon et al. 2023: at most block - 1 per sequence)."""
    n = np.asarray(lengths)
    if n.ndim != 1 or n.size == 0 or not np.issubdtype(n.dtype, np.integer):
        raise ValueError("lengths must be a non-empty 1-D array of whole numbers")
    if max_len < 1 or block < 1:
        raise ValueError("max_len and block must be >= 1")
    if np.any(n < 1) or np.any(n > max_len):
        raise ValueError(f"every length must lie in 1..max_len = {max_len}")
    used = int(n.sum())
    contiguous = n.size * int(max_len)
    paged = int((-(-n // block) * block).sum())  # ceil(len / block) blocks each
    return AllocationWaste(
        contiguous=1 - used / contiguous,
        paged=1 - used / paged,
        contiguous_slots=contiguous,
        paged_slots=paged,
        used_slots=used,
    )


def sequences_by_allocator(
    kv_budget_bytes: float, kv_bytes_per_token: float, lengths: ArrayLike, max_len: int, block: int = 16
) -> tuple[float, float]:
    """Concurrent sequences a KV budget holds when sequences have the given length mix, under two allocators:

    contiguous:  budget / (max_len x bytes per token)                   (every sequence reserves max_len slots)
    paged:       budget / (mean ceil(len / block) block x bytes per token)   (Kwon et al. 2023)

    Both are floats (expected counts); the lengths only set the paged allocator's mean reservation.
    """
    if not (kv_budget_bytes > 0 and kv_bytes_per_token > 0):
        raise ValueError("the KV budget and the bytes per token must be > 0")
    waste = allocation_waste(lengths, max_len, block)
    n = np.asarray(lengths).size
    contiguous = kv_budget_bytes / (max_len * kv_bytes_per_token)
    paged = kv_budget_bytes / (waste.paged_slots / n * kv_bytes_per_token)
    return float(contiguous), float(paged)


# ----------------------------------------------------------------------------------------------------------------
# Speculative decoding (Leviathan et al. 2023; Chen et al. 2023)


def expected_tokens_per_forward(alpha: ArrayLike, k: ArrayLike) -> NDArray:
    """Tokens a target forward yields with draft length k and acceptance rate alpha (i.i.d. acceptances):

    E = (1 - alpha^(k+1)) / (1 - alpha)          (k + 1 at alpha = 1; 1 at alpha = 0)
    """
    a, k = np.asarray(alpha, dtype=float), np.asarray(k, dtype=float)
    if np.any((a < 0) | (a > 1)) or np.any(k < 0):
        raise ValueError("alpha must lie in [0, 1] and k must be >= 0")
    # sum_{i=0}^{k} alpha^i, written so that alpha = 1 needs no special case: -expm1((k+1) log a) / -expm1(log a)
    with np.errstate(divide="ignore", invalid="ignore"):
        geometric = np.expm1((k + 1) * np.log(a)) / np.expm1(np.log(a))
    return np.where(a >= 1.0, k + 1, np.where(a <= 0.0, 1.0, geometric))


def speculative_speedup(alpha: ArrayLike, k: ArrayLike, cost_ratio: ArrayLike = 0.0) -> NDArray:
    """Leviathan et al.'s improvement factor when a verify pass costs one target forward (bandwidth-bound decode):

    speed-up = E / (1 + k c),  c = time of a draft forward / time of a target forward
    """
    c = np.asarray(cost_ratio, dtype=float)
    if np.any(c < 0):
        raise ValueError("the cost ratio must be >= 0")
    return expected_tokens_per_forward(alpha, k) / (1 + np.asarray(k, dtype=float) * c)


def check_draft_tokenizer(target: ModelSpec, draft: ModelSpec) -> None:
    """ValueError unless the draft has the target's tokenizer (the same tokens with the same ids, not only as many):
    the acceptance rule min(1, p(x) / q(x)) compares two distributions over one set of tokens (Leviathan et al. 2023;
    Chen et al. 2023), so a draft with another tokenizer proposes ids the target reads as other tokens. Equal
    vocabulary sizes do not show it: Mixtral-8x7B (Mistral's tokenizer) and Llama-2-7B both have 32,000 tokens.
    A spec whose tokenizer is unknown ("", e.g. a custom vocabulary size) is refused too."""
    if not target.tokenizer or not draft.tokenizer:
        unknown = target if not target.tokenizer else draft
        raise ValueError(
            f"{unknown.name} ({unknown.vocab:,} tokens) has no known tokenizer, so no draft can be shown to share it: "
            "speculative decoding accepts a drafted token with probability min(1, p(x)/q(x)), which needs both "
            "models to use the same tokenizer (same tokens, same ids)"
        )
    if draft.tokenizer != target.tokenizer:
        size = (
            f"; an equal vocabulary size ({target.vocab:,}) is not enough"
            if draft.vocab == target.vocab
            else f" ({draft.vocab:,} against {target.vocab:,} tokens)"
        )
        raise ValueError(
            f"the draft {draft.name} uses the {draft.tokenizer} tokenizer and the target {target.name} the "
            f"{target.tokenizer} tokenizer{size}: speculative decoding accepts a drafted token with probability "
            "min(1, p(x)/q(x)), which needs both models to use the same tokenizer (same tokens, same ids); choose a "
            "draft with the target's tokenizer"
        )


def speculative_speedup_vs_batch(
    alpha: float,
    k: int,
    batch: ArrayLike,
    spec: ModelSpec,
    draft: ModelSpec,
    gpu: str | Gpu = "H100",
    *,
    context: float = 1024,
    tp: int = 1,
    draft_tp: int | None = None,
    weight_format: str | float = "bf16",
    kv_bytes_per_value: float = 2.0,
) -> NDArray:
    """Speed-up over plain decoding at each batch size, with roofline step times (:func:`forward_step`, the same
    weight and KV formats for target and draft):

        speed-up(B) = E x t_target(B, 1) / (k t_draft(B, 1) + t_target(B, k + 1))

    The model is a roofline (:func:`forward_step`: bytes over bandwidth or FLOPs over the bf16 peak, whichever is
    larger, fp8 weights included) with no fixed per-step costs (all-reduce latency 0). Dense model: at small B the
    verify pass of k + 1 tokens reads the same weights as one token and costs about as much, so the speed-up is near
    E / (1 + k c), c being a draft step's time over a plain step's. MoE: the k + 1 tokens of each sequence can pick
    different experts, so the verify pass reads more routed experts than a plain step (:func:`weight_bytes_read`,
    at most k + 1 times the routed-expert bytes). In this model an MoE therefore gains less than a dense model at
    small B; its speed-up is low at small B (it can dip below its B = 1 value while more experts get touched) and
    nears E / (1 + k c) once a plain step already reads every expert, so at larger B, where a dense model has turned
    compute-bound, an MoE gains more. On the A2.8-MoE setup (8 H200s at TP 8, fp8 weights, bf16 cache, context
    512, k = 1, a = 0.85): DeepSeek-V3 with its MTP draft x1.17 at B = 1, x1.36 at B = 32 and x1.81 at B = 256,
    Llama-3-70B drafted by Llama-3-8B x1.66 at B = 1 and x0.86 at B = 256. Both orderings are the model's, not
    measurements: it leaves out the fixed per-step costs that can dominate a small-batch MoE step (all-reduces,
    kernel launches; the same for 1 token as for k + 1) and assumes each token picks its experts independently.
    SGLang's DeepSeek-V3 documentation reports, for DeepSeek-V3 with its MTP draft on 8 H200s at TP 8, 1.8x at
    batch 1 and 1.5x at batch 32: the opposite trend to the model's. At large B decode turns compute-bound,
    verifying k + 1 tokens costs up to k + 1 times as much, and the speed-up falls, below 1 once that outweighs E
    (002 A8.6). The draft runs on ``draft_tp`` GPUs (default: tp). ValueError when the draft's tokenizer differs
    from the target's (see :func:`check_draft_tokenizer`).
    """
    check_draft_tokenizer(spec, draft)
    E = expected_tokens_per_forward(alpha, k)
    B = np.asarray(batch, dtype=float)
    fmt = {"weight_format": weight_format, "kv_bytes_per_value": kv_bytes_per_value}
    plain = forward_step(spec, gpu, B, 1, context, tp=tp, **fmt).seconds
    verify = forward_step(spec, gpu, B, k + 1, context, tp=tp, **fmt).seconds
    drafting = k * forward_step(draft, gpu, B, 1, context, tp=tp if draft_tp is None else draft_tp, **fmt).seconds
    return E * plain / (drafting + verify)


def speculative_sample(
    p: object, q: object, n: int, generator: object | None = None, *, seed: int | None = None
) -> tuple[object, object]:
    """n independent outcomes of one speculative step with target p and draft q (torch, on p's device).

    Draw x ~ q; accept with probability min(1, p(x) / q(x)); on rejection draw from the residual
    max(0, p - q) / sum(max(0, p - q)). The outcome is distributed exactly as p (Leviathan et al. 2023, Thm 1).
    Randomness: ``seed`` makes a generator on p's device (CUDA, MPS or CPU); a ``generator`` given instead is used
    on its own device (the draws happen there and the results move to p's device), since torch refuses a generator
    of another device. Returns (tokens (n,), accepted (n,) bool), both on p's device.
    """
    import torch

    from core.device import as_tensor

    p_t = p if isinstance(p, torch.Tensor) else as_tensor(p)
    q_t = as_tensor(q, dtype=p_t.dtype, device=p_t.device) if not isinstance(q, torch.Tensor) else q.to(p_t)
    if p_t.dim() != 1 or p_t.shape != q_t.shape:
        raise ValueError("p and q must be 1-D distributions over the same vocabulary")
    for name, d in (("p", p_t), ("q", q_t)):
        if bool((d < 0).any()) or abs(float(d.sum()) - 1.0) > 1e-6:
            raise ValueError(f"{name} must be a probability distribution (non-negative, summing to 1)")
    if generator is not None and seed is not None:
        raise ValueError("give a generator or a seed, not both")
    if seed is not None:
        generator = torch.Generator(device=p_t.device).manual_seed(int(seed))
    device = p_t.device
    where = generator.device if generator is not None else device  # the draws run where the generator lives
    p_g, q_g = p_t.to(where), q_t.to(where)
    x = torch.multinomial(q_g, n, replacement=True, generator=generator)  # (n,)
    u = torch.rand(n, generator=generator, device=where, dtype=p_g.dtype)  # (n,)
    # accept x with probability min(1, p(x) / q(x))  (q(x) > 0 for every drawn x)
    accepted = u * q_g[x] <= p_g[x]  # (n,)
    residual = torch.clamp(p_g - q_g, min=0)  # (V,)
    if float(residual.sum()) > 0:
        redraw = torch.multinomial(residual / residual.sum(), n, replacement=True, generator=generator)  # (n,)
        x = torch.where(accepted, x, redraw)
    return x.to(device), accepted.to(device)


# ----------------------------------------------------------------------------------------------------------------
# Mixture of experts: memory by total, compute by active


@dataclass(frozen=True)
class MoEAccounting:
    total_params: int
    active_params: int
    weight_bytes: float  # every expert resident
    flops_per_token: float  # 2 x active weights (forward, no attention)


def moe_accounting(spec: ModelSpec, fmt: str | float = "bf16") -> MoEAccounting:
    """Memory scales with total parameters, compute with active ones (002 A2.8: DeepSeek-V3 671B / 37B)."""
    b = param_breakdown(spec)
    return MoEAccounting(b.total, b.active, b.total * _bpp(fmt), float(forward_flops_per_token(spec, 0)))


__all__ = [
    "BITS_PER_PARAM",
    "AllocationWaste",
    "KVCapacity",
    "MoEAccounting",
    "Step",
    "allocation_waste",
    "attainable_flops",
    "bytes_per_param",
    "check_draft_tokenizer",
    "decode_intensity",
    "decode_time_bound",
    "expected_tokens_per_forward",
    "forward_step",
    "kv_replication",
    "kv_sequences_that_fit",
    "moe_accounting",
    "prefill_intensity",
    "sequences_by_allocator",
    "simple_intensity",
    "speculative_sample",
    "speculative_speedup",
    "speculative_speedup_vs_batch",
    "weight_bytes",
    "weight_bytes_read",
]
