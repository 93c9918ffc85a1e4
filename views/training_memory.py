"""The training-memory page's state and what it shows: per-GPU memory by component for ZeRO stages 0-3 against
the card, the pipeline bubble, training time and cost, the traps beside the right numbers, and seed 002's A10
memory problems as presets."""

from __future__ import annotations

import numpy as np
import pandas as pd

from core import training_memory
from core.hardware import GIB, GPUS
from core.model_spec import CATALOGUE, ModelSpec, param_breakdown, param_count
from core.systems_presets import PRESETS_BY_KEY
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View
from views.state import Field, Spec, State
from views.systems_common import (
    NONE,
    custom_fields,
    model_of,
    preset_name,
    problem_answer,
    problem_keys,
    problem_readouts,
)
from viz import format as fmt
from viz.training_memory import memory_text, pipeline_bubble_figure, training_memory_figure

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "Why can't I fine-tune a 7B model with full Adam on one 80 GB GPU, and what would you change?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "before a single activation",
    "two Adam moments",
    "fp32 master weights",
    "38.5 GB",
)

QUICK_CHECK = QuickCheck(
    question=(
        "A **7×10⁹-parameter** model trains with mixed-precision AdamW on **8 GPUs** with ZeRO-1: bf16 weights and "
        "gradients (2 + 2 bytes per parameter) and 12 bytes of fp32 optimizer state (master weights, m, v). How many "
        "GB (10⁹ bytes) of model states does each GPU hold?"
    ),
    options=(
        "112 GB",
        "14 GB",
        "26.25 GB",
        "38.5 GB",
    ),
    right=3,
    answer=(
        "Weights and gradients stay whole: 2 + 2 = 4 bytes per parameter. The 12 optimizer bytes are split 8 ways: "
        "1.5. So 5.5 bytes × 7×10⁹ = **38.5 GB** per GPU (35.9 GiB), against 112 GB without sharding. "
        "(The preset *001-3.2* shows it.)"
    ),
)

PROBLEMS = problem_keys("memory")
# The memory figure's drag over the sequence length: the powers of two from 1 to 2^20 (the field's range), the
# page's own value merged in.
SEQS: tuple[int, ...] = tuple(2**k for k in range(21))
TRAPS = ("GB instead of GiB", "sparse peak", "forgot the MFU", "MoE total instead of active")
ZERO_LABELS = ("ZeRO-0 (plain DP)", "ZeRO-1 (optimizer)", "ZeRO-2 (+ gradients)", "ZeRO-3 (+ weights)")

FIELDS: tuple[Field, ...] = (
    Field(
        "mem_model",
        "Model",
        "choice",
        "Llama-3-8B",
        choices=tuple(CATALOGUE),
        help="shapes from each config; custom: your own shape",
    ),
    *custom_fields("mem"),
    Field(
        "params",
        "… or a parameter count instead",
        "float",
        None,
        lo=1e6,
        hi=1e13,
        fmt="%.3e",
        optional=True,
        help="Empty: the model's own count. A bare count has no shape, so activations are left out.",
    ),
    Field("mem_gpu", "GPU", "choice", "H100", choices=tuple(GPUS)),
    Field("recipe", "Precision recipe", "choice", "standard", choices=tuple(training_memory.RECIPES)),
    Field("zero", "ZeRO stage", "int", 1, lo=0, hi=3, widget="slider", help="Rajbhandari et al. 2020"),
    Field("tp", "Tensor parallel (TP)", "int", 1, lo=1, hi=1024, help="must divide the attention heads"),
    Field("pp", "Pipeline stages (PP)", "int", 1, lo=1, hi=1024),
    Field("dp", "Data parallel (DP)", "int", 8, lo=1, hi=100_000, help="ZeRO shards over these replicas"),
    Field(
        "seq",
        "Sequence length",
        "int",
        4096,
        lo=1,
        hi=1_048_576,
        help="Drag the row under the memory figure to move it through the powers of two in the browser.",
    ),
    Field("mbs", "Micro-batch (sequences)", "int", 1, lo=1, hi=4096),
    Field(
        "recompute",
        "Activation recomputation",
        "choice",
        "selective",
        choices=training_memory.RECOMPUTE,
        widget="segmented",
    ),
    Field("flash", "FlashAttention (no S × S scores stored)", "bool", False),
    Field("micro", "Micro-batches per step (m)", "int", 8, lo=1, hi=100_000, help="fills the pipeline"),
    Field("D", "Training tokens D", "float", 1e12, lo=1e6, hi=1e15, fmt="%.3e"),
    Field("mem_mfu", "MFU (%)", "int", 40, lo=1, hi=100, widget="slider", help="model FLOPs utilisation"),
    Field("price", "Price per GPU-hour ($)", "float", 2.0, lo=0.0, hi=1000.0, step=0.5),
    Field(
        "mem_traps",
        "Traps: show the wrong number too",
        "multi",
        (),
        choices=TRAPS,
        help="each trap adds the number it gives beside the right one",
    ),
    Field("mem_problem", "Problem", "choice", NONE, choices=(NONE, *PROBLEMS), help="seed 002's A10, lesson 001"),
)
# Every preset sets every field (the tabs aside), so that it shows the same view whatever was set before.
_BASE = {f.name: f.default for f in FIELDS if f.widget != "tabs"}

SPEC = Spec(
    "Training_memory",
    FIELDS,
    presets={
        preset_name(PRESETS_BY_KEY[k]): {**_BASE, **v}
        for k, v in {
            "001-3.2": {"params": 7e9, "zero": 1, "dp": 8, "mem_problem": "001-3.2"},
            "001-A": {"params": 1.5e9, "zero": 0, "dp": 8, "D": 3.04e10, "mem_mfu": 40, "mem_problem": "001-A"},
            "A10-01": {"mem_model": "Llama-3-70B", "zero": 1, "tp": 8, "pp": 8, "dp": 8, "mem_problem": "A10-01"},
            "A10-02": {"mem_model": "Llama-3-70B", "zero": 1, "tp": 8, "pp": 8, "dp": 8, "mem_problem": "A10-02"},
            "A10-03": {
                "mem_model": "Llama-3-70B",
                "zero": 1,
                "tp": 8,
                "pp": 8,
                "dp": 8,
                "seq": 4096,
                "mbs": 1,
                "recompute": "none",
                "mem_problem": "A10-03",
            },
            "A10-04": {"mem_model": "Llama-3-70B", "zero": 1, "tp": 8, "pp": 8, "dp": 8, "mem_problem": "A10-04"},
            "A10-05": {"mem_model": "Llama-3-70B", "zero": 1, "tp": 8, "pp": 8, "dp": 8, "mem_problem": "A10-05"},
            "A10-06": {"params": 7.06e10, "zero": 0, "tp": 8, "pp": 8, "dp": 16, "micro": 8, "mem_problem": "A10-06"},
            "A10-09": {"params": 7e10, "zero": 3, "dp": 16, "mem_problem": "A10-09"},
            "A10-10": {"params": 1e11, "zero": 1, "tp": 8, "pp": 8, "dp": 8, "micro": 63, "mem_problem": "A10-10"},
            "A10-12": {
                "params": 7.06e10,
                "zero": 1,
                "tp": 8,
                "pp": 8,
                "dp": 32,
                "micro": 64,
                "D": 15e12,
                "mem_mfu": 40,
                "price": 2.0,
                "mem_problem": "A10-12",
            },
        }.items()
    },
    answers={preset_name(PRESETS_BY_KEY[k]): problem_answer(k) for k in PROBLEMS},
)


def recipe_text(recipe: training_memory.Recipe) -> str:
    """The recipe's bytes per parameter itemised: "weights 2 + gradients 2 + ... = 16 bytes/param"."""
    return " + ".join(f"{name} {b:g}" for name, b in recipe.items().items()) + f" = {recipe.total:g} bytes/param"


def n_gpus(state: State) -> int:
    return int(state.tp * state.pp * state.dp)


def _shape_readouts(spec: ModelSpec, state: State) -> list[Readout]:
    """Seed 002 A10-03's activation element count and the model's parameters by component (A10-01/02)."""
    B, S, D, N, L = int(state.mbs), int(state.seq), spec.d_model, spec.n_heads, spec.layers
    # L (14 B S D + B N S^2) elements; FlashAttention keeps B N S softmax statistics instead of the S x S scores
    plain = float(training_memory.activation_elements(B, S, D, N, L))
    flash = float(training_memory.activation_elements(B, S, D, N, L, flash=True))
    cross = float(training_memory.activation_crossover(D, N))
    b = param_breakdown(spec)
    out = [
        Readout(
            "Activation elements (002 A10-03)",
            fmt.sci(flash if state.flash else plain, 4),
            f"L(14BSD + BNS²) with L = {L}, B = {B}, S = {S:,}, D = {D:,}, N = {N}: {fmt.sci(plain, 4)} numbers "
            f"without FlashAttention, {fmt.sci(flash, 4)} with it (BNS softmax statistics instead of BNS²). It counts "
            f"elements, not bytes (× 2 in bf16), for the whole model on one replica; the S² term wins for "
            f"S > 14D/N = {cross:,.0f}",
        ),
        Readout(
            "Parameters: embeddings",
            fmt.count(b.embeddings, 4),
            f"V·D = {b.embedding:,} input"
            + (" (tied: the output head reuses it)" if spec.tied else f" + {b.unembedding:,} output"),
        ),
        Readout(
            "Parameters: attention",
            fmt.count(b.attention, 4),
            f"{b.attention:,} over {L} layers"
            + ("" if spec.is_mla else f": 2·D·N·H + 2·D·K·H per layer with K = {spec.n_kv_heads} KV heads"),
        ),
        Readout(
            "Parameters: FFN",
            fmt.count(b.ffn, 4),
            f"{b.ffn:,}: SwiGLU, 3·D·F per layer"
            + (f"; all {spec.n_experts} experts, one token uses {fmt.count(b.ffn_active, 4)}" if spec.is_moe else ""),
        ),
        Readout(
            "Parameters: norms" + (" and router" if spec.is_moe else ""),
            fmt.count(b.norms + b.router, 4),
            f"{b.norms:,} RMSNorm gains" + (f" + {b.router:,} router weights" if spec.is_moe else ""),
        ),
        Readout(
            "Parameters: total / active" if spec.is_moe else "Parameters: total",
            f"{fmt.count(b.total, 4)} / {fmt.count(b.active, 4)}" if spec.is_moe else fmt.count(b.total, 4),
            f"{b.total:,} counted from the shape"
            + (f"; {b.active:,} touched per token: memory holds all, FLOPs use the active" if spec.is_moe else "")
            + (f"; published {fmt.count(spec.published_params, 4)}" if spec.published_params else ""),
        ),
    ]
    return out


def _activation_formula(recompute: str, flash: bool) -> str:
    """The per-layer formula the activation readout uses (tensor and sequence parallelism over t GPUs)."""
    if recompute == "full":
        return "2 s b h / t (their 2sbh: only each layer's input is kept; split by sequence parallelism here)"
    if recompute == "selective" or flash:
        return "s b h · 34/t (the S × S scores are not stored)"
    return "s b h (34/t + 5 a s/(h t))"


def _zero_example(recipe: training_memory.Recipe, zero: int, dp: int) -> str:
    """The bytes/param arithmetic of this ZeRO stage over this many data-parallel replicas (Rajbhandari et al. 2020:
    stage 1 shards the optimizer states, 2 also the gradients, 3 also the weights)."""
    parts = (recipe.weights, recipe.gradients, recipe.optimizer)
    if zero == 0 or dp == 1:
        why = "ZeRO-0 keeps a full copy on every replica" if zero == 0 else "one replica leaves nothing to shard over"
        return f"{recipe.total:g} ({why})"
    terms = [f"{b:g}/{dp}" if zero >= stage else f"{b:g}" for b, stage in zip(parts, (3, 2, 1), strict=True)]
    value = sum(b / dp if zero >= stage else b for b, stage in zip(parts, (3, 2, 1), strict=True))
    return f"{recipe.total:g} → {' + '.join(terms)} = {value:.3g} with ZeRO-{zero} over {dp}"


def figures(state: State, options: Options = DEFAULT) -> View:
    """The per-GPU memory of ZeRO stages 0-3 (``main``), the pipeline bubble (``bubble``), readouts, problems."""
    view = View()
    spec, problem = model_of(state, "mem_model", "mem")
    if problem:
        view.notices.append(("warning", problem))
    gpu = GPUS[state.mem_gpu]
    recipe = training_memory.RECIPES[state.recipe]
    gpus = n_gpus(state)
    view.facts.update(gpus=gpus, spec=spec, gpu=gpu)

    # ---- model states and activations for each ZeRO stage
    memories: list[tuple[float, float, float, float]] = []  # (weights, gradients, optimizer, activations)
    if state.params is None:
        try:
            for z in range(4):
                m = training_memory.training_memory(
                    spec, recipe, z, state.tp, state.pp, state.dp, state.seq, state.mbs, state.recompute,
                    flash=state.flash, n_microbatches=state.micro,
                )  # fmt: skip
                memories.append((m.weights, m.gradients, m.optimizer, m.activations))
        except ValueError as e:
            view.notices.append(("warning", f"This parallel layout does not work: {e}. Choose another TP or PP."))
        n_total = param_count(spec)
        n_compute = param_count(spec, active=True)
        view.facts["recompute_cost"] = float(training_memory.recompute_cost(spec, state.seq, state.recompute))
    else:
        for z in range(4):
            s = training_memory.state_memory(state.params, recipe, z, state.tp, state.pp, state.dp)
            memories.append((s.weights, s.gradients, s.optimizer, 0.0))
        n_total = n_compute = float(state.params)
        view.notices.append(
            ("info", "A bare parameter count has no shape: activations are left out (choose a model to see them).")
        )
    view.facts.update(n_total=n_total, n_compute=n_compute)

    readouts: list[Readout] = []
    # the drag over the sequence length: activations at each step (core's own function, once per length; they are
    # the same for every ZeRO stage), when the figure shows activations at all
    seqs: list[int] = []
    if memories and state.params is None:
        seqs = sorted(set(SEQS) | {int(state.seq)})
        acts = [
            training_memory.activation_bytes(
                spec, s, state.mbs, state.tp, state.pp,
                recompute=state.recompute, flash=state.flash, n_microbatches=state.micro,
            )
            for s in seqs
        ]  # fmt: skip
        seq_activations = np.repeat(np.asarray(acts)[:, None], 4, axis=1)  # (steps, ZeRO stages)
    if memories:
        w, g, o, a = memories[state.zero]
        total = w + g + o + a
        headroom = gpu.memory_bytes - total
        view.facts.update(total=total, headroom=headroom)
        if headroom < 0:
            view.notices.append(
                (
                    "warning",
                    f"Does not fit: ZeRO-{state.zero} needs {memory_text(total)} per GPU and the {gpu.name} has "
                    f"{gpu.memory_bytes / GIB:,.0f} GiB. Raise the ZeRO stage, add GPUs (DP, TP or PP), recompute "
                    "activations, shorten the micro-batch or choose a larger card.",
                )
            )
        if options.wants("main"):
            view.figures["main"] = training_memory_figure(
                ZERO_LABELS,
                {
                    "weights": [m[0] for m in memories],
                    "gradients": [m[1] for m in memories],
                    "optimizer states": [m[2] for m in memories],
                    "activations": [m[3] for m in memories],
                },
                gpu.memory_bytes,
                gpu.name,
                chosen=state.zero,
                gb_misread_bytes=gpu.memory_bytes_if_gb if "GB instead of GiB" in state.mem_traps else None,
                **(
                    {
                        "seqs": seqs,
                        "seq_components": {"activations": seq_activations},
                        "active": seqs.index(int(state.seq)),
                    }
                    if seqs
                    else {}
                ),
                **options.look,
            )
            if seqs:
                view.drags["main"] = Drag("seq", tuple(seqs))
        states = w + g + o
        # memory as the figure's bars and readout print it (three significant figures, TiB and up past 1,000)
        readouts += [
            Readout(
                f"Per GPU (ZeRO-{state.zero})",
                memory_text(total),
                f"{fmt.nbytes(total)}: weights, gradients, optimizer states and activations on one GPU",
            ),
            Readout(
                "Headroom on the card",
                memory_text(headroom, signed=True),
                f"{gpu.name}: {gpu.memory_bytes / GIB:,.0f} GiB; negative = does not fit",
            ),
            Readout(
                "All training states",
                fmt.nbytes(n_total * recipe.total),
                f"{fmt.count(n_total)} parameters × {recipe.total:g} bytes ({recipe.label}), before any sharding",
            ),
            Readout(
                "Bytes/param (recipe)",
                "+".join(f"{b:g}" for b in recipe.items().values()) + f" = {recipe.total:g}",
                f"{recipe_text(recipe)} ({recipe.label}; 002 A10-09, A5.1)",
            ),
            Readout(
                "Bytes/param on this GPU",
                f"{states / (n_total / (state.tp * state.pp)):.2f}",
                "model states / the parameters this GPU computes with: " + _zero_example(recipe, state.zero, state.dp),
            ),
            Readout(
                "Activations per GPU",
                memory_text(a),
                "left out: a bare parameter count has no shape"
                if state.params is not None
                else "Korthikanti et al. 2022 (a GPT-3 block with attention dropout; applied here to every model): "
                + _activation_formula(state.recompute, state.flash)
                + f" bytes per layer, × layers; recomputation adds {100 * view.facts.get('recompute_cost', 0.0):.1f}%"
                " FLOPs"
                + (
                    " (FlashAttention's backward recomputes the scores too, not counted here)"
                    if state.flash and state.recompute != "full"
                    else ""
                ),
            ),
        ]
        if state.params is None:
            readouts += _shape_readouts(spec, state)
        if "GB instead of GiB" in state.mem_traps:
            wrong = gpu.memory_bytes_if_gb - total
            readouts.append(
                Readout(
                    "✗ Headroom if the label were GB",
                    memory_text(wrong, signed=True),
                    f"reading {gpu.memory_label:g} GB as {gpu.memory_label:g}×10⁹ bytes loses 6.9%; "
                    f"right: {memory_text(headroom, signed=True)}",
                )
            )

    # ---- pipeline bubble
    bubble = float(training_memory.pipeline_bubble(state.pp, state.micro))
    view.facts["bubble"] = bubble
    readouts.append(
        Readout(
            "Pipeline bubble",
            f"{100 * bubble:.1f}%",
            f"(p − 1)/(m + p − 1) with p = {state.pp}, m = {state.micro}; "
            f"m ≥ {training_memory.microbatches_for_bubble(state.pp, 0.1) if state.pp > 1 else 1} keeps it ≤ 10%",
        )
    )
    m_grid = np.unique(np.round(np.logspace(0, 3, 60)).astype(int))
    depths = sorted({2, 4, 8, 16} | ({int(state.pp)} if 1 < state.pp <= 1024 else set()))
    if options.wants("bubble"):
        view.figures["bubble"] = pipeline_bubble_figure(
            m_grid,
            {p: training_memory.pipeline_bubble(p, m_grid) for p in depths},
            (int(state.pp), int(state.micro), bubble),
            target=0.1,
            **options.look,
        )

    # ---- time and cost
    run = training_memory.training_run(n_compute, state.D, gpus, gpu.peak_flops, state.mem_mfu / 100, state.price)
    view.facts["run"] = run
    readouts += [
        Readout("GPUs = TP × PP × DP", f"{gpus:,}"),
        Readout(
            "Training time",
            fmt.duration(run.seconds),
            f"C = 6ND = {fmt.sci(run.flops)} FLOPs at {state.mem_mfu}% of {fmt.sci(gpu.peak_flops)} FLOP/s per GPU"
            + (" (N = active parameters)" if spec.is_moe and state.params is None else ""),
        ),
        Readout("Cost", f"${run.cost:,.0f}", f"{run.gpu_hours:,.0f} GPU-hours at ${state.price:g}"),
    ]
    traps = training_memory.training_traps(
        n_compute,
        state.D,
        gpus,
        gpu,
        state.mem_mfu / 100,
        state.price,
        total_params=n_total if n_total != n_compute else None,
    )
    for trap in traps:
        if trap.name in state.mem_traps and trap.unit == "s":
            readouts.append(
                Readout(
                    f"✗ Training time, {trap.name}",
                    fmt.duration(trap.wrong),
                    f"right: {fmt.duration(trap.right)}; the trap is off by ×{trap.ratio:.2f}",
                )
            )
    if "MoE total instead of active" in state.mem_traps and n_total == n_compute:
        view.notices.append(("info", "The MoE trap needs a mixture-of-experts model (Mixtral, DeepSeek-V3)."))
    # a problem's answers lead while the page shows the problem's own inputs (its preset); once a control moves,
    # the page's own readouts lead and the problem's fixed answers follow them
    answers = problem_readouts(state.mem_problem)
    on_preset = state.mem_problem != NONE and SPEC.preset_of(state) == preset_name(PRESETS_BY_KEY[state.mem_problem])
    view.readouts = answers + readouts if on_preset else readouts + answers

    def memory_table() -> pd.DataFrame:
        rows = [
            {"ZeRO stage": z, "weights_GiB": m[0] / GIB, "gradients_GiB": m[1] / GIB, "optimizer_GiB": m[2] / GIB}
            | {"activations_GiB": m[3] / GIB, "total_GiB": sum(m) / GIB, "gpu_GiB": gpu.memory_bytes / GIB}
            for z, m in enumerate(memories)
        ]
        return pd.DataFrame(rows)

    def bubble_table() -> pd.DataFrame:
        return pd.DataFrame(
            {"m": m_grid} | {f"bubble_p{p}": training_memory.pipeline_bubble(p, m_grid) for p in depths}
        )

    view.tables = {"Memory per GPU": memory_table, "Pipeline bubble": bubble_table}
    return view
