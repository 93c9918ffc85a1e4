"""Training memory and parallelism: per-GPU bytes of weights, gradients, optimizer states and activations.

Covers the recipe's bytes per parameter (002 A10-09), ZeRO stages 0-3 (Rajbhandari et al. 2020), tensor, pipeline
and data parallelism, activation memory (002 A10-03's element count and Korthikanti et al. 2022's per-layer bytes)
with recomputation and its compute cost, the pipeline bubble, and training time and cost from 6ND with the traps
that give a wrong number. Bytes are bytes; GiB = 2^30. Sizes of the run (tp, pp, dp, ...) are whole numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction

import numpy as np
from numpy.typing import ArrayLike, NDArray

from core.hardware import GB, GIB, Gpu, get_gpu
from core.model_spec import ModelSpec, forward_flops_per_token, param_count

# ----------------------------------------------------------------------------------------------------------------
# Recipes: bytes per parameter


@dataclass(frozen=True)
class Recipe:
    """Bytes per parameter of each training state (002 A10-09, A5.1)."""

    key: str
    label: str
    weights: float  # the working copy the matmuls read (bf16)
    gradients: float
    master: float  # fp32 master weights (0 when training purely in bf16)
    adam_m: float
    adam_v: float

    @property
    def optimizer(self) -> float:
        """Master weights + both Adam moments: what ZeRO-1 shards."""
        return self.master + self.adam_m + self.adam_v

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer

    def items(self) -> dict[str, float]:
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "master weights": self.master,
            "Adam m": self.adam_m,
            "Adam v": self.adam_v,
        }


RECIPES: dict[str, Recipe] = {
    "standard": Recipe("standard", "mixed precision, AdamW (16 B/param)", 2, 2, 4, 4, 4),
    "fp32_grads": Recipe("fp32_grads", "fp32 gradient accumulation (18 B/param)", 2, 4, 4, 4, 4),
    "adam8bit": Recipe("adam8bit", "8-bit Adam moments (10 B/param)", 2, 2, 4, 1, 1),
    "pure_bf16": Recipe("pure_bf16", "pure bf16, no master copy (8 B/param)", 2, 2, 0, 2, 2),
}
RECOMPUTE: tuple[str, ...] = ("none", "selective", "full")


def get_recipe(recipe: str | Recipe) -> Recipe:
    if isinstance(recipe, Recipe):
        return recipe
    try:
        return RECIPES[recipe]
    except KeyError:
        raise ValueError(f"unknown recipe {recipe!r}; expected one of {', '.join(RECIPES)}") from None


def _whole(name: str, v: object, lo: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
    return int(v)


# ----------------------------------------------------------------------------------------------------------------
# Model states under TP x PP x DP and ZeRO


@dataclass(frozen=True)
class StateMemory:
    """Per-GPU bytes of the model states (activations excluded)."""

    weights: float
    gradients: float
    optimizer: float
    params_per_gpu: float  # N / (tp pp): the slice of the model one GPU computes with

    @property
    def total(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def bytes_per_param(self) -> float:
        """Bytes per parameter of the GPU's own slice after ZeRO (16 -> 4 + 12/8 = 5.5 for ZeRO-1 over 8)."""
        return self.total / self.params_per_gpu


def state_memory(
    n_params: float, recipe: str | Recipe = "standard", zero: int = 0, tp: int = 1, pp: int = 1, dp: int = 1
) -> StateMemory:
    """Weights, gradients and optimizer states on one GPU.

    TP and PP split the model: each GPU holds N / (tp pp) parameters. ZeRO then splits states over the dp
    replicas (Rajbhandari et al. 2020): stage 1 the optimizer states (master + m + v), stage 2 also the
    gradients, stage 3 also the weights. Stage 0 is plain data parallelism: a full copy per replica.
    """
    r = get_recipe(recipe)
    if not (math.isfinite(n_params) and n_params > 0):
        raise ValueError(f"the parameter count must be positive, got {n_params!r}")
    if zero not in (0, 1, 2, 3) or isinstance(zero, bool):
        raise ValueError(f"the ZeRO stage must be 0, 1, 2 or 3, got {zero!r}")
    tp, pp, dp = _whole("tp", tp), _whole("pp", pp), _whole("dp", dp)
    n = n_params / (tp * pp)
    return StateMemory(
        weights=n * r.weights / (dp if zero >= 3 else 1),
        gradients=n * r.gradients / (dp if zero >= 2 else 1),
        optimizer=n * r.optimizer / (dp if zero >= 1 else 1),
        params_per_gpu=n,
    )


# ----------------------------------------------------------------------------------------------------------------
# Activations


def activation_elements(
    B: ArrayLike, S: ArrayLike, D: ArrayLike, N: ArrayLike, L: ArrayLike = 1, flash: bool = False
) -> NDArray:
    """Activation elements kept for backward, 002 A10-03 (counts numbers; bytes depend on precision):

        L (14 B S D + B N S^2)      (F = 8D/3; N = query heads: GQA does not shrink the S x S matrix)

    With FlashAttention the S x S matrix is never stored; what remains per head is one softmax statistic per row:
    L (14 B S D + B N S).
    """
    B, S, D, N, L = (np.asarray(x, dtype=float) for x in (B, S, D, N, L))
    scores = B * N * S if flash else B * N * S**2
    return L * (14 * B * S * D + scores)


def activation_crossover(D: ArrayLike, N: ArrayLike) -> NDArray:
    """S where B N S^2 overtakes 14 B S D: S = 14 D / N (1,792 for N = 64, D = 8192)."""
    return 14 * np.asarray(D, dtype=float) / np.asarray(N, dtype=float)


def layer_activation_bytes(
    s: ArrayLike,
    b: ArrayLike,
    h: ArrayLike,
    a: ArrayLike,
    t: int = 1,
    *,
    sequence_parallel: bool = True,
    recompute: str = "none",
    flash: bool = False,
) -> NDArray:
    """Activation bytes of one transformer layer per GPU, Korthikanti et al. 2022 (16-bit activations, 1-byte
    dropout masks; s sequence, b micro-batch, h hidden, a heads, t tensor-parallel size):

        none:                 s b h (34 + 5 a s / h)                  (t = 1)
        TP:                   s b h (10 + 24 / t + 5 a s / (h t))
        TP + sequence par.:   s b h (34 / t + 5 a s / (h t))
        selective recompute:  the 5 a s / h term (the attention core) is recomputed, not stored
        full recompute:       2 s b h (only the layer's input; their Table 2); divided by t here under sequence
                              parallelism, an extension of ours

    FlashAttention never stores the S x S scores either, so its memory is that of selective recomputation. The
    coefficients assume a GPT-3 block (4h GeLU MLP, attention dropout: the 5 = 2 softmax + 1 mask + 2 dropout
    output); a model without attention dropout stores 2 a s / h instead of 5 a s / h.
    """
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE)}, got {recompute!r}")
    s, b, h, a = (np.asarray(x, dtype=float) for x in (s, b, h, a))
    t = _whole("t", t)
    sbh = s * b * h
    if recompute == "full":
        return 2 * sbh / (t if sequence_parallel else 1)
    linear = 34 / t if sequence_parallel else 10 + 24 / t
    scores = 0.0 if (recompute == "selective" or flash) else 5 * a * s / (h * t)
    return sbh * (linear + scores)


def korthikanti_crossover(h: ArrayLike, a: ArrayLike) -> NDArray:
    """s where 5 a s^2 b overtakes 34 s b h: s = 34 h / (5 a) (870 for h = 8192, a = 64)."""
    return 34 * np.asarray(h, dtype=float) / (5 * np.asarray(a, dtype=float))


def activation_bytes(
    spec: ModelSpec,
    seq: int,
    mbs: int = 1,
    tp: int = 1,
    pp: int = 1,
    *,
    recompute: str = "none",
    flash: bool = False,
    sequence_parallel: bool = True,
    n_microbatches: int | None = None,
) -> float:
    """Activation bytes on the busiest GPU (the first pipeline stage).

    layers on a stage = ceil(L / pp); under a 1F1B schedule the first stage holds the activations of
    min(pp, m) micro-batches at once (Korthikanti et al. 2022), so activations ~ L layers' worth whatever pp is.
    Per layer: :func:`layer_activation_bytes` with h = d_model and a = query heads. Logits and the embedding
    output are not included.
    """
    seq, mbs = _whole("seq", seq), _whole("mbs", mbs)
    tp, pp = _whole("tp", tp), _whole("pp", pp)
    m = pp if n_microbatches is None else _whole("n_microbatches", n_microbatches)
    per_layer = layer_activation_bytes(
        seq, mbs, spec.d_model, spec.n_heads, tp, sequence_parallel=sequence_parallel, recompute=recompute, flash=flash
    )
    return float(per_layer) * math.ceil(spec.layers / pp) * min(pp, m)


def recompute_cost(spec: ModelSpec, seq: ArrayLike, recompute: str = "none") -> NDArray | float:
    """Extra training FLOPs of recomputation, as a fraction of the step's FLOPs (3 forwards' worth).

    full:       one more forward of every layer: 2N / 6N = 1/3 (6ND becomes 8ND; HFU = MFU x 4/3)
    selective:  one more forward of the attention core only: 2 L N_h (d_qk + d_v) S / (3 forward(S))
    """
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {', '.join(RECOMPUTE)}, got {recompute!r}")
    seq = np.asarray(seq, dtype=float)
    if recompute == "none":
        return np.zeros_like(seq)
    if recompute == "full":
        return np.full_like(seq, 1.0 / 3.0)
    core = 2.0 * spec.layers * spec.n_heads * (spec.qk_head_dim + spec.v_dim) * seq
    return core / (3.0 * forward_flops_per_token(spec, seq))


# ----------------------------------------------------------------------------------------------------------------
# The whole per-GPU picture


@dataclass(frozen=True)
class TrainingMemory:
    """Per-GPU bytes by component, with the configuration that produced them."""

    weights: float
    gradients: float
    optimizer: float
    activations: float
    n_gpus: int
    n_params: int
    recipe: Recipe
    recompute_cost: float  # extra FLOPs as a fraction of a step without recomputation

    @property
    def states(self) -> float:
        return self.weights + self.gradients + self.optimizer

    @property
    def total(self) -> float:
        return self.states + self.activations

    def components(self) -> dict[str, float]:
        return {
            "weights": self.weights,
            "gradients": self.gradients,
            "optimizer states": self.optimizer,
            "activations": self.activations,
        }

    def headroom(self, gpu: str | Gpu) -> float:
        """GPU memory minus ``total`` in bytes (negative: it does not fit)."""
        return get_gpu(gpu).memory_bytes - self.total

    def fits(self, gpu: str | Gpu) -> bool:
        return self.headroom(gpu) >= 0


def check_parallel(spec: ModelSpec, tp: int, pp: int, dp: int) -> None:
    """ValueError unless tp divides the query heads (and the KV heads divide or are divided by tp) and pp <= L."""
    tp, pp, dp = _whole("tp", tp), _whole("pp", pp), _whole("dp", dp)
    if spec.n_heads % tp:
        raise ValueError(f"TP = {tp} does not divide the {spec.n_heads} attention heads of {spec.name}")
    if not spec.is_mla and spec.n_kv_heads % tp and tp % spec.n_kv_heads:
        raise ValueError(f"TP = {tp} and the {spec.n_kv_heads} KV heads of {spec.name}: neither divides the other")
    if pp > spec.layers:
        raise ValueError(f"PP = {pp} stages for {spec.layers} layers: some stage would hold no layer")


def training_memory(
    spec: ModelSpec,
    recipe: str | Recipe = "standard",
    zero: int = 0,
    tp: int = 1,
    pp: int = 1,
    dp: int = 1,
    seq: int = 4096,
    mbs: int = 1,
    recompute: str = "none",
    *,
    flash: bool = False,
    sequence_parallel: bool = True,
    n_microbatches: int | None = None,
) -> TrainingMemory:
    """Per-GPU bytes of weights, gradients, optimizer states (:func:`state_memory` on the spec's total
    parameters: every expert of an MoE is resident) and activations (:func:`activation_bytes`)."""
    check_parallel(spec, tp, pp, dp)
    r = get_recipe(recipe)
    n = param_count(spec)
    st = state_memory(n, r, zero, tp, pp, dp)
    act = activation_bytes(
        spec,
        seq,
        mbs,
        tp,
        pp,
        recompute=recompute,
        flash=flash,
        sequence_parallel=sequence_parallel,
        n_microbatches=n_microbatches,
    )
    return TrainingMemory(
        weights=st.weights,
        gradients=st.gradients,
        optimizer=st.optimizer,
        activations=act,
        n_gpus=tp * pp * dp,
        n_params=n,
        recipe=r,
        recompute_cost=float(recompute_cost(spec, seq, recompute)),
    )


# ----------------------------------------------------------------------------------------------------------------
# Pipeline bubble


def pipeline_bubble(p: ArrayLike, m: ArrayLike) -> NDArray:
    """Idle fraction of wall clock of a p-stage pipeline with m micro-batches (GPipe / 1F1B): (p-1)/(m+p-1)."""
    p, m = np.asarray(p, dtype=float), np.asarray(m, dtype=float)
    if np.any(p < 1) or np.any(m < 1):
        raise ValueError("p and m must be >= 1")
    return (p - 1) / (m + p - 1)


def pipeline_bubble_megatron(p: ArrayLike, m: ArrayLike) -> NDArray:
    """The bubble against ideal compute time, as Narayanan et al. 2021 report it: (p-1)/m (0.875 at p = m = 8)."""
    p, m = np.asarray(p, dtype=float), np.asarray(m, dtype=float)
    if np.any(p < 1) or np.any(m < 1):
        raise ValueError("p and m must be >= 1")
    return (p - 1) / m


def microbatches_for_bubble(p: int, target: float) -> int:
    """Least m with (p-1)/(m+p-1) <= target: m >= (p-1)(1-target)/target (63 for p = 8 and 10%)."""
    p = _whole("p", p)
    if not 0 < target < 1:
        raise ValueError(f"the target bubble must lie strictly between 0 and 1, got {target!r}")
    b = Fraction(target).limit_denominator(10**9)  # exact for decimal targets: 0.1 is 1/10, not 0.1000000000000000055
    return max(1, math.ceil((p - 1) * (1 - b) / b))


# ----------------------------------------------------------------------------------------------------------------
# Time, cost and MFU


def mfu(tokens_per_s: ArrayLike, n_params: ArrayLike, n_gpus: ArrayLike, peak_flops: ArrayLike) -> NDArray:
    """Model FLOPs utilisation = 6 N x tokens/s / (n_GPU x peak); N = active parameters for an MoE."""
    tps, N, g, F = (np.asarray(x, dtype=float) for x in (tokens_per_s, n_params, n_gpus, peak_flops))
    return 6 * N * tps / (g * F)


def tokens_per_s_for_mfu(target: ArrayLike, n_params: ArrayLike, n_gpus: ArrayLike, peak_flops: ArrayLike) -> NDArray:
    """The throughput that reaches an MFU of ``target``: target x n_GPU x peak / (6 N)."""
    t, N, g, F = (np.asarray(x, dtype=float) for x in (target, n_params, n_gpus, peak_flops))
    return t * g * F / (6 * N)


@dataclass(frozen=True)
class TrainingRun:
    """Time and cost of a run: C = 6 N D FLOPs at n_GPU x peak x MFU useful FLOP/s."""

    flops: float
    seconds: float
    gpu_hours: float
    cost: float  # in the currency of the price per GPU-hour

    @property
    def days(self) -> float:
        return self.seconds / 86400.0


def training_run(
    n_params: float, tokens: float, n_gpus: int, peak_flops: float, mfu: float, price_per_gpu_hour: float = 2.0
) -> TrainingRun:
    """C = 6 N D; time = C / (n_GPU F MFU); cost = n_GPU x hours x price. N = active parameters for an MoE."""
    if n_gpus < 1:
        raise ValueError(f"a run needs at least one GPU, got {n_gpus!r}")
    for name, v in (("n_params", n_params), ("tokens", tokens), ("peak_flops", peak_flops), ("mfu", mfu)):
        if not (math.isfinite(v) and v > 0):
            raise ValueError(f"{name} must be positive, got {v!r}")
    if mfu > 1:
        raise ValueError(f"MFU is a fraction of the peak (0.4 = 40%), got {mfu!r}")
    if not (math.isfinite(price_per_gpu_hour) and price_per_gpu_hour >= 0):
        raise ValueError(f"the price must be >= 0, got {price_per_gpu_hour!r}")
    C = 6.0 * n_params * tokens
    seconds = C / (n_gpus * peak_flops * mfu)
    gpu_hours = n_gpus * seconds / 3600.0
    return TrainingRun(flops=C, seconds=seconds, gpu_hours=gpu_hours, cost=gpu_hours * price_per_gpu_hour)


@dataclass(frozen=True)
class Trap:
    """A common mistake: the number it gives beside the right one."""

    name: str
    quantity: str
    wrong: float
    right: float
    unit: str

    @property
    def ratio(self) -> float:
        return self.wrong / self.right


def training_traps(
    n_params: float,
    tokens: float,
    n_gpus: int,
    gpu: str | Gpu,
    mfu: float,
    price_per_gpu_hour: float = 2.0,
    *,
    total_params: float | None = None,
) -> tuple[Trap, ...]:
    """The wrong numbers beside the right ones (002 A10-06, A10-10, A10-12): the sparse peak, forgetting the MFU,
    an MoE's total parameters instead of its active ones (when ``total_params`` is given), and the cluster's
    memory read in GB instead of GiB."""
    g = get_gpu(gpu)
    right = training_run(n_params, tokens, n_gpus, g.peak_flops, mfu, price_per_gpu_hour)
    traps = [
        Trap(
            "sparse peak",
            "training time",
            training_run(n_params, tokens, n_gpus, g.sparse_flops, mfu).seconds,
            right.seconds,
            "s",
        ),
        Trap(
            "forgot the MFU",
            "training time",
            training_run(n_params, tokens, n_gpus, g.peak_flops, 1.0).seconds,
            right.seconds,
            "s",
        ),
    ]
    if total_params is not None and total_params != n_params:
        wrong = training_run(total_params, tokens, n_gpus, g.peak_flops, mfu, price_per_gpu_hour)
        traps.append(Trap("MoE total instead of active", "training time", wrong.seconds, right.seconds, "s"))
    traps.append(
        Trap("GB instead of GiB", "cluster memory", n_gpus * g.memory_bytes_if_gb, n_gpus * g.memory_bytes, "bytes")
    )
    return tuple(traps)


__all__ = [
    "GB",
    "GIB",
    "RECIPES",
    "RECOMPUTE",
    "Recipe",
    "StateMemory",
    "TrainingMemory",
    "TrainingRun",
    "Trap",
    "activation_bytes",
    "activation_crossover",
    "activation_elements",
    "check_parallel",
    "get_recipe",
    "korthikanti_crossover",
    "layer_activation_bytes",
    "mfu",
    "microbatches_for_bubble",
    "pipeline_bubble",
    "pipeline_bubble_megatron",
    "recompute_cost",
    "state_memory",
    "tokens_per_s_for_mfu",
    "training_memory",
    "training_run",
    "training_traps",
]
