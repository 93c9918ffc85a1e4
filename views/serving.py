"""The serving page's state and what it shows: the roofline of prefill and decode, KV-cache capacity under
contiguous and paged allocation, speculative decoding, an MoE's total against active parameters, the traps beside the
right numbers, and seed 002's A10 serving problems as presets. The mixture-of-experts router (capacity, dropped tokens,
balancing) is the MoE page's (views/moe.py)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from core import serving
from core.hardware import GB, GIB, GPUS, Gpu
from core.model_spec import (
    CATALOGUE,
    DEEPSEEK_V3_MTP,
    KIB,
    ModelSpec,
    kv_cache_bytes_per_token,
    param_breakdown,
)
from core.systems_presets import PRESETS_BY_KEY
from views import DEFAULT, Drag, Options, Readout, View
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
from viz.serving import decode_bound, kv_capacity_figure, roofline_figure, speculative_figure

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "Why is LLM decoding memory-bound, and what do you do about it?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "bound by memory bandwidth",
    "two FLOPs",
    "about the batch size",
    "until B reaches the hundreds",
    "42 ms",
)

PROBLEMS = problem_keys("serving")
TRAPS = ("GB instead of GiB", "query heads for KV heads", "sparse peak")
VIEWS = ("KV capacity", "Speculative decoding")
KV_BYTES = {"bf16": 2.0, "fp8": 1.0}
SPEC_K = (1, 2, 4, 8)
SAMPLES = 20_000  # draws of the acceptance-rule check
# Drafts: the catalogue plus DeepSeek-V3's own MTP module, the one draft that has DeepSeek-V3's tokenizer.
DRAFTS = {**CATALOGUE, DEEPSEEK_V3_MTP.name: DEEPSEEK_V3_MTP}

FIELDS: tuple[Field, ...] = (
    Field("srv_model", "Model", "choice", "Llama-3-8B", choices=tuple(CATALOGUE), help="custom: your own shape"),
    *custom_fields("srv"),
    Field("srv_gpu", "GPU", "choice", "H100", choices=tuple(GPUS)),
    Field(
        "srv_gpus",
        "GPUs (tensor parallel)",
        "int",
        1,
        lo=1,
        hi=64,
        help="must divide the attention heads; the KV cache splits only by KV heads",
    ),
    Field("wfmt", "Weight format", "choice", "bf16", choices=tuple(serving.BITS_PER_PARAM)),
    Field("kvfmt", "KV-cache format", "choice", "bf16", choices=tuple(KV_BYTES), widget="segmented"),
    Field("srv_ctx", "Context per sequence (tokens)", "int", 8192, lo=1, hi=1_048_576),
    Field(
        "kv_budget",
        "KV budget (GiB)",
        "float",
        None,
        lo=0.1,
        hi=100_000.0,
        optional=True,
        help="Empty: all memory left after the weights and the reserve.",
        extra=(("placeholder", "empty: all memory left"),),
    ),
    Field(
        "srv_reserve",
        "Overhead reserve (GiB, all GPUs)",
        "float",
        0.0,
        lo=0.0,
        hi=100_000.0,
        step=1.0,
        help="CUDA context, the framework's buffers, transient activations: taken off before the KV budget "
        "(002 A10-08)",
    ),
    Field("batch", "Decode batch (sequences)", "int", 16, lo=1, hi=4096),
    Field("prompt", "Prompt length (tokens)", "int", 512, lo=1, hi=131_072, help="prefill; speculative context"),
    Field("srv_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
    Field("used", "Tokens used (% of the context, mean)", "int", 25, lo=1, hi=100, widget="slider"),
    Field("accept", "Acceptance rate α", "float", 0.8, lo=0.0, hi=1.0, step=0.01, widget="slider"),
    Field("draft_k", "Draft length k", "int", 4, lo=1, hi=16, widget="slider"),
    Field(
        "draft",
        "Draft model",
        "choice",
        "custom",
        choices=tuple(DRAFTS),
        help="custom = Llama-3.2-1B shape (Llama 3's tokenizer); the draft must have the target's tokenizer (the "
        "same tokens with the same ids), not only a vocabulary of the same size",
    ),
    Field("srv_traps", "Traps: show the wrong number too", "multi", (), choices=TRAPS),
    Field("srv_problem", "Problem", "choice", NONE, choices=(NONE, *PROBLEMS), help="seed 002's A10"),
)
# Every preset sets every field (the tabs aside), so that it shows the same view whatever was set before.
_BASE = {f.name: f.default for f in FIELDS if f.widget != "tabs"}

SPEC = Spec(
    "Serving",
    FIELDS,
    presets={
        preset_name(PRESETS_BY_KEY[k]): {**_BASE, **v}
        for k, v in {
            "A10-07": {"srv_model": "Llama-3-70B", "srv_gpus": 4, "kvfmt": "bf16", "srv_problem": "A10-07"},
            "A10-08": {
                "srv_model": "Llama-3-70B",
                "srv_gpu": "H100",
                "srv_gpus": 4,
                "kv_budget": 170.0,
                "srv_ctx": 8192,
                "srv_problem": "A10-08",
            },
            "A10-11": {
                "srv_model": "Llama-3-70B",
                "srv_gpu": "H100",
                "srv_gpus": 4,
                "batch": 1,
                "prompt": 2048,
                "srv_problem": "A10-11",
            },
            "A2.8-MoE": {
                "srv_model": "DeepSeek-V3",
                "srv_gpu": "H200",
                "srv_gpus": 8,
                "wfmt": "fp8",
                # its own MTP module drafts one token, accepted 85-90% of the time (DeepSeek-AI 2024 §5.4.3)
                "draft": DEEPSEEK_V3_MTP.name,
                "draft_k": 1,
                "accept": 0.85,
                "srv_problem": "A2.8-MoE",
            },
        }.items()
    },
    answers={preset_name(PRESETS_BY_KEY[k]): problem_answer(k) for k in PROBLEMS},
)


# The decode batches the roofline's drag steps through: 1 to 4,096 in powers of two and 1.25 and 1.5 times them
BATCH_STEPS = tuple(sorted({b for k in range(13) for b in (2**k, 5 * 2**k // 4, 3 * 2**k // 2) if b <= 4096}))


def batch_steps(batch: int) -> tuple[int, ...]:
    """The drag's batches: :data:`BATCH_STEPS` and the page's own ``batch``, so that the drag starts exactly there."""
    return tuple(sorted(set(BATCH_STEPS) | {int(batch)}))


def _lengths(ctx: int, used_pct: int, n: int = 256) -> np.ndarray:
    """A seeded mix of n sequence lengths, uniform between 0.5 and 1.5 times the mean used length, in 1..ctx."""
    mean = ctx * used_pct / 100
    u = np.random.default_rng(0).random(n)  # (n,)
    return np.clip(np.round(mean * (0.5 + u)), 1, ctx).astype(np.int64)


def toy_distributions(vocab: int = 8, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A seeded target p and draft q over a small vocabulary: the draft is the target's logits plus noise."""
    rng = np.random.default_rng(seed)
    logits = rng.normal(0.0, 1.5, vocab)  # (V,)
    p = np.exp(logits - logits.max())
    q = np.exp(logits + rng.normal(0.0, 1.0, vocab) - logits.max())
    return p / p.sum(), q / q.sum()


def _acceptance_check(view: View) -> list[Readout]:
    """Leviathan et al.'s acceptance rule sampled with torch on core's device: the kept tokens follow the target."""
    import torch

    from core.device import get_device

    p, q = toy_distributions()
    x, accepted = serving.speculative_sample(p, q, SAMPLES, seed=0)  # on core's device, seeded there
    freq = torch.bincount(x, minlength=p.size).cpu().numpy() / SAMPLES  # (V,)
    rate = float(accepted.float().mean())
    # chi-square statistic of the sampled counts against n p, V - 1 degrees of freedom
    chi2 = float(np.sum((freq * SAMPLES - SAMPLES * p) ** 2 / (SAMPLES * p)))
    expected_rate = float(np.minimum(p, q).sum())
    view.facts["acceptance"] = {"token": np.arange(p.size), "target_p": p, "draft_q": q, "sampled": freq}
    view.facts.update(acceptance_rate=rate, chi2=chi2)
    return [
        Readout(
            "Accepted drafts (sampled)",
            f"{100 * rate:.1f}%",
            f"{SAMPLES:,} seeded speculative steps on a toy {p.size}-token vocabulary ({get_device()}); the rule "
            f"accepts Σ min(p, q) = {100 * expected_rate:.1f}% of drafts (Leviathan et al. 2023)",
        ),
        Readout(
            "Sampled vs target: largest gap",
            f"{100 * np.abs(freq - p).max():.2f} pts",
            f"sampled output vs the target p, token by token; χ² = {chi2:.1f} on {p.size - 1} degrees of freedom "
            f"(the draft alone is {100 * np.abs(q - p).max():.1f} pts off): the output follows the target exactly",
        ),
    ]


def _moe_verify_note(
    spec: ModelSpec, draft: ModelSpec, gpu: Gpu, state: State, tp: int, E: float, step_fmt: dict[str, Any]
) -> str:
    """Why the page's roofline model gives an MoE a low speculative speed-up at small batch (the verify pass's tokens
    read more experts), what the model leaves out, and, for DeepSeek-V3 with its MTP draft, the measured speed-ups."""
    B, k = int(state.batch), int(state.draft_k)
    fmt_ = step_fmt["weight_format"]
    plain_w = float(serving.weight_bytes_read(spec, B, fmt_))
    verify_w = float(serving.weight_bytes_read(spec, B * (k + 1), fmt_))
    ratio = verify_w / plain_w
    note = (
        ". This is the page's roofline model's number (no fixed per-step costs). "
        f"An MoE's verify pass checks {B * (k + 1):,} tokens, which "
        f"pick more experts than the {B:,} {'token' if B == 1 else 'tokens'} of a plain step: "
        f"{verify_w / GB:,.1f} GB of weights against {plain_w / GB:,.1f} GB (×{ratio:.2f}), so in this model it "
        "costs " + ("more than one decode step" if round(ratio, 2) > 1 else "about one decode step") + ". The model "
        "leaves out the fixed per-step costs that can dominate a small-batch MoE step (all-reduces, kernel launches), "
        "the same for 1 token as for k + 1, and lets each token pick its experts independently, so it can "
        "understate the small-batch speed-up"
    )
    # the smallest batch (of 1, 2, 4, ..., 4096) at which a plain step reads 99% of the routed experts
    grid = 2 ** np.arange(0, 13)
    reach = 1.0 - (1.0 - spec.top_k / spec.n_experts) ** grid
    if not np.any(reach >= 0.99):
        return note
    b_all = int(grid[np.argmax(reach >= 0.99)])
    ctx = state.prompt
    sp = float(
        serving.speculative_speedup_vs_batch(state.accept, k, b_all, spec, draft, gpu, context=ctx, tp=tp, **step_fmt)
    )
    t_plain = float(serving.forward_step(spec, gpu, b_all, 1, ctx, tp=tp, **step_fmt).seconds)
    t_verify = float(serving.forward_step(spec, gpu, b_all, k + 1, ctx, tp=tp, **step_fmt).seconds)
    c = float(serving.forward_step(draft, gpu, b_all, 1, ctx, tp=tp, **step_fmt).seconds) / t_plain
    note += (
        f". At batch {b_all:,}, where a plain step already reads {100 * reach[grid == b_all][0]:.2f}% of the "
        f"routed experts, verifying costs ×{t_verify / t_plain:.2f} a plain step and the speed-up is ×{sp:.2f}, "
        f"against E/(1 + k c) = {E:.2f}/(1 + {k} × {c:.3f}) = {E / (1 + k * c):.2f} (c: a draft step's time over "
        "a plain step's)"
    )
    if spec.name == "DeepSeek-V3" and draft.name == DEEPSEEK_V3_MTP.name:
        note += (
            ". SGLang's DeepSeek-V3 documentation reports a larger gain at batch 1 than at 32 with this draft on 8 "
            "H200s at TP 8: 1.8× at batch 1 and 1.5× at batch 32 (MTP run as an EAGLE draft; workload not stated)"
            + (
                "; DeepSeek-AI 2024 §5.4.3 report 1.8× the tokens per second with this draft at k = 1 (acceptance "
                "85–90%)"
                if k == 1
                else "; DeepSeek's one MTP module drafts one token: k > 1 reuses it on its own drafts, which "
                "DeepSeek-AI 2024 do not measure (their 1.8× is at k = 1, acceptance 85–90%), and the acceptance of "
                "the later drafts would not stay at the first's"
            )
        )
    return note


def figures(state: State, options: Options = DEFAULT) -> View:
    """The roofline (``main``) and the tabs' figures (``KV capacity``, ``Speculative decoding``)."""
    view = View()
    spec, problem = model_of(state, "srv_model", "srv")
    if problem:
        view.notices.append(("warning", problem))
    gpu = GPUS[state.srv_gpu]
    tp = int(state.srv_gpus)
    kvb = KV_BYTES[state.kvfmt]
    traps = state.srv_traps
    readouts: list[Readout] = []
    view.facts.update(spec=spec, gpu=gpu)

    weights = serving.weight_bytes(spec, state.wfmt)
    kv_tok = kv_cache_bytes_per_token(spec, kvb)
    readouts += [
        Readout(
            "Weights",
            f"{weights / GIB:,.1f} GiB",
            f"{weights / GB:,.1f} GB: every parameter resident ({state.wfmt}, "
            f"{serving.BITS_PER_PARAM[state.wfmt]:.4g} bits per parameter)"
            + (f", in total over the {tp} GPUs: {weights / tp / GIB:,.1f} GiB each" if tp > 1 else "")
            + (
                ". int4 here: symmetric groups of 128 weights with one 16-bit scale; a zero-point per group (AWQ, "
                "GPTQ) adds a little, and servers often keep the embeddings and output head in 16 bits, which this "
                "count quantises too"
                if state.wfmt == "int4"
                else ""
            ),
        ),
        Readout(
            "KV cache per token",
            f"{kv_tok / KIB:,.1f} KiB",
            "MLA: one latent + one RoPE key per layer" if spec.is_mla else "2 × layers × KV heads × head dim × bytes",
        ),
    ]
    if "query heads for KV heads" in traps:
        wrong = kv_cache_bytes_per_token(spec, kvb, mha=True)
        readouts.append(
            Readout(
                "✗ KV per token with query heads",
                f"{wrong / KIB:,.1f} KiB",
                f"right: {kv_tok / KIB:,.1f} KiB; off by ×{wrong / kv_tok:.1f}",
            )
        )

    # ---- KV capacity at the page's context (the roofline's readout panel says when a batch's cache does not fit)
    cap_error = ""
    try:
        cap = serving.kv_sequences_that_fit(
            spec,
            int(state.srv_ctx),
            gpu=gpu,
            n_gpus=tp,
            weight_format=state.wfmt,
            kv_bytes_per_value=kvb,
            reserve_bytes=state.srv_reserve * GIB,
            kv_budget_bytes=None if state.kv_budget is None else state.kv_budget * GIB,
        )
    except ValueError as e:
        cap, cap_error = None, str(e)
    kv_fit = None if cap is None else (cap.per_sequence_held, cap.sequences, cap.replication)
    # the weights (and the reserve) alone fill the GPUs: no batch fits at all
    unfit = (
        "✗ the weights alone<br>do not fit"
        if cap is None and weights + state.srv_reserve * GIB >= tp * gpu.memory_bytes
        else None
    )

    # ---- roofline (needs a TP that divides the heads)
    tp_ok = spec.n_heads % tp == 0
    if not tp_ok:
        view.notices.append(
            (
                "warning",
                f"{tp} GPUs cannot split the {spec.n_heads} attention heads of {spec.name} evenly: choose a "
                "tensor-parallel size that divides them (1, 2, 4, 8, ...).",
            )
        )
    else:
        ridge = gpu.ridge_point
        batches = 2.0 ** np.arange(0, 13)  # 1 .. 4096
        dec = serving.forward_step(
            spec, gpu, batches, 1, state.srv_ctx, weight_format=state.wfmt, kv_bytes_per_value=kvb, tp=tp
        )
        pre = serving.forward_step(spec, gpu, 1, state.prompt, 0, weight_format=state.wfmt, tp=tp)
        now = serving.forward_step(
            spec, gpu, state.batch, 1, state.srv_ctx, weight_format=state.wfmt, kv_bytes_per_value=kvb, tp=tp
        )
        per_gpu = lambda s: s.flops / (tp * s.seconds)  # noqa: E731  (attained FLOP/s per GPU)
        bound = serving.decode_time_bound(spec, gpu, weight_format=state.wfmt, tp=tp)
        view.facts.update(decode_ms=1e3 * bound, ridge=ridge, decode_intensity=float(now.intensity))
        if options.wants("main"):
            x = np.logspace(-1, 4.7, 240)
            # the drag's steps: one decode step at every batch of the grid and the page's, in one pass
            steps = batch_steps(int(state.batch))
            swept = serving.forward_step(
                spec, gpu, np.asarray(steps), 1, state.srv_ctx, weight_format=state.wfmt, kv_bytes_per_value=kvb, tp=tp
            )
            view.figures["main"] = roofline_figure(
                x,
                serving.attainable_flops(x, gpu),
                gpu.peak_flops,
                gpu.bandwidth,
                state.srv_gpu,
                points=[(f"prefill of {state.prompt:,} tokens", float(pre.intensity), float(per_gpu(pre)))],
                decode_curve=(batches, dec.intensity, per_gpu(dec)),
                batch_sweep=(
                    steps,
                    swept.intensity,
                    per_gpu(swept),
                    swept.seconds,
                    swept.memory_seconds,
                    swept.compute_seconds,
                ),
                batch=int(state.batch),
                context=int(state.srv_ctx),
                kv_fit=kv_fit,
                unfit=unfit,
                n_gpus=tp,
                sparse_attainable=serving.attainable_flops(x, gpu, sparse=True) if "sparse peak" in traps else None,
                **options.look,
            )
            view.drags["main"] = Drag("batch", steps)
        one_token = float(serving.weight_bytes_read(spec, 1, state.wfmt))
        # an untied model's input-embedding table is counted whole, though a token's lookup reads one row of it (a
        # tied model reads the whole matrix anyway, as its output head)
        table = 0.0 if spec.tied else param_breakdown(spec).embedding * serving.BITS_PER_PARAM[state.wfmt] / 8
        table_note = (
            "the whole input-embedding table counted, of which a token reads one row"
            if not spec.tied
            else "the embedding matrix tied to the output head, which reads all of it"
        )
        if spec.is_moe:
            parts = ["attention", "the output head", table_note]
            if spec.n_dense_layers:
                nd = spec.n_dense_layers
                parts.append(f"the {nd} dense layers' MLPs" if nd > 1 else "the dense layer's MLP")
            if spec.n_shared_experts:
                parts.append(
                    "the shared expert" if spec.n_shared_experts == 1 else f"the {spec.n_shared_experts} shared experts"
                )
            parts.append("the routers")
            routed = (
                "routed experts per MoE layer" if spec.n_shared_experts or spec.n_dense_layers else "experts per layer"
            )
            read = (
                f"the {one_token / GB:,.1f} GB one token reads ({', '.join(parts)} and {spec.top_k} of "
                f"{spec.n_experts} {routed}: the active parameters, not all {weights / GB:,.0f} GB)"
            )
        else:
            read = f"all {one_token / GB:,.1f} GB of weights ({table_note})"
        if table:
            without = (one_token - table) / (tp * gpu.bandwidth)
            read_floor = f"; without the table {(one_token - table) / GB:,.1f} GB and {1e3 * without:,.1f} ms"
        else:
            read_floor = ""
        readouts += [
            Readout(
                "Ridge point",
                f"{ridge:,.0f} FLOP/B",
                f"dense bf16 peak / bandwidth = {fmt.sci(gpu.peak_flops)} / {gpu.bandwidth / 1e12:g}×10¹² B/s"
                + (
                    f"; if the matmuls themselves run in fp8 the peak doubles and the ridge is {2 * ridge:,.0f} "
                    "(weight-only formats keep the bf16 peak)"
                    if state.wfmt == "fp8" and gpu.name.startswith("H")
                    else ""
                ),
            ),
            Readout(
                "Decode, batch 1",
                f"{1e3 * bound:,.1f} ms/token",
                f"a floor: {read} / ({tp} × {gpu.bandwidth / 1e12:g} TB/s), at most {1 / bound:,.0f} tokens/s"
                f"{read_floor}; "
                + (
                    "two all-reduces per layer and bandwidth below the data sheet's come on top"
                    if tp > 1
                    else "bandwidth below the data sheet's comes on top"
                ),
            ),
        ]
        if tp > 1:
            one = serving.decode_time_bound(spec, gpu, weight_format=state.wfmt, tp=1)
            view.facts["decode_ms_one_gpu"] = 1e3 * one
            readouts.append(
                Readout(
                    "Decode, batch 1, one GPU's bandwidth",
                    f"{1e3 * one:,.1f} ms/token",
                    f"{read} at one {gpu.name}'s bandwidth (the reference of 002 A8.1/A10-11, whether or not they "
                    f"fit on one card); tensor parallelism over {tp} GPUs reads 1/{tp} each: a floor of "
                    f"{1e3 * bound:,.1f} ms",
                )
            )
        bpp = serving.BITS_PER_PARAM[state.wfmt] / 8
        # 2B/b at the precision "near" deserves: whole numbers from 10 up, two figures below; "=" only when exact
        quotient = 2 * state.batch / bpp
        shown = f"{quotient:,.0f}" if quotient >= 10 else f"{quotient:.2g}"
        near = ("= " if float(shown.replace(",", "")) == quotient else "≈ ") + shown
        emb_share = param_breakdown(spec).embedding * bpp / float(now.bytes)
        # attention FLOPs per cached byte: per layer and cached token 2 N (d_qk + d_v) FLOPs against its KV bytes
        attn_per_byte = (
            2 * spec.layers * spec.n_heads * (spec.qk_head_dim + spec.v_dim) / kv_cache_bytes_per_token(spec, kvb)
        )
        if spec.is_mla:
            # absorbed projections (FlashMLA): per head and cached token, q·[latent; rope] and p·latent
            lat = spec.kv_lora_rank + spec.qk_rope_dim
            lat_bytes = lat * kvb
            absorbed = 2 * spec.n_heads * (lat + spec.kv_lora_rank) / lat_bytes
            serves = (
                f"this page counts MLA's attention as multi-head attention over the decompressed K and V, "
                f"2·{spec.n_heads}·({spec.qk_head_dim} + {spec.v_dim}) FLOPs per layer and cached token against "
                f"its {lat} cached values (rebuilding K and V from the latents not counted)"
            )
            kernel = (
                f". MLA decode kernels do more per byte: with the up-projections absorbed into the query and the "
                f"output, each cached latent ({lat} values) meets all {spec.n_heads} query heads in latent space, "
                f"2·{spec.n_heads}·({lat} + {spec.kv_lora_rank}) FLOPs per {lat_bytes:,.0f} bytes ≈ "
                f"{absorbed:,.0f} FLOP per cached byte with {state.kvfmt} values (≈ 2 h_q in bf16, DeepSeek's "
                "FlashMLA notes)"
                + (
                    f"; under tensor parallelism each GPU reads the whole latent for its {spec.n_heads}/{tp} = "
                    f"{spec.n_heads / tp:g} heads: ≈ {absorbed / tp:,.0f} per byte it reads"
                    if tp > 1
                    else ""
                )
            )
        else:
            serves = (
                f"each cached value serves N/K = {spec.n_heads}/{spec.n_kv_heads} = "
                f"{spec.n_heads // spec.n_kv_heads} query heads"
            )
            kernel = ""
        rep = serving.kv_replication(spec, tp)
        if rep > 1:
            group = (
                f". This intensity counts the cache once for the group of {tp} GPUs; "
                + (
                    "every GPU reads MLA's whole latent"
                    if spec.is_mla
                    else f"with {tp} GPUs over {spec.n_kv_heads} KV heads the group reads {rep:g} copies of the cache"
                )
                + ", so each GPU reads more cache per FLOP and its own intensity is lower (the step time counts "
                "those reads)"
            )
        else:
            group = ""
        # memory- or compute-bound by the larger of the step's two times, as the roofline's readout panel says
        label, group_disagrees = decode_bound(
            float(now.memory_seconds), float(now.compute_seconds), float(now.intensity), ridge
        )
        readouts += [
            Readout(
                f"Decode intensity, batch {state.batch:,}",
                f"{float(now.intensity):,.1f} FLOP/B",
                f"at context {state.srv_ctx:,}: {label}"
                + (
                    " by the step's times, though this intensity is past the ridge: it counts the cache once for "
                    "the group, and each GPU reads a copied KV share (below)"
                    if group_disagrees
                    else ""
                )
                + f". Each weight read does 2 FLOPs per sequence, so a dense model with {bpp:.4g}-byte weights sits "
                f"near 2B/{bpp:.4g} {near}"
                + " at short context"
                + (
                    "; an MoE reads more experts as the batch grows, so its intensity stays below that"
                    if spec.is_moe
                    else ""
                )
                + f". This count charges the whole input-embedding table to every step ({100 * emb_share:.1f}% of "
                "the bytes here), which a lookup reads only B rows of. The KV cache adds each sequence's context in "
                f"bytes and its attention in FLOPs: {serves}, {attn_per_byte:,.3g} FLOP per cached byte with "
                f"{state.kvfmt} values at any batch, so a long context pulls the intensity toward "
                f"{attn_per_byte:,.3g}: up where the weights alone give less (small batches), down where they give "
                "more" + kernel + group,
            ),
            Readout(f"Prefill intensity, {state.prompt:,} tokens", f"{float(pre.intensity):,.0f} FLOP/B"),
        ]
        if "sparse peak" in traps:
            readouts.append(
                Readout(
                    "✗ Ridge with the sparse peak",
                    f"{gpu.sparse_flops / gpu.bandwidth:,.0f} FLOP/B",
                    f"right: {ridge:,.0f}; 2:4 sparsity doubles the sheet's peak, dense matmuls never see it",
                )
            )

    # ---- KV capacity
    if cap_error:
        view.notices.append(("warning", f"{cap_error[0].upper()}{cap_error[1:]}."))
    if cap is not None:
        if cap.replication > 1:
            why = (
                "MLA's latent is shared by all heads, so tensor parallelism cannot split it and every GPU holds all "
                "of it; serving stacks such as SGLang can run MLA's attention data-parallel instead (each GPU "
                "holds its own sequences' latents)"
                if spec.is_mla
                else f"{tp} GPUs share {spec.n_kv_heads} KV heads, so each KV head is replicated"
            )
            held = f" ({cap.per_sequence / GIB:,.3g} GiB held {cap.replication:g} times: {why})"
        else:
            held = " (tensor parallelism splits the cache by KV heads)" if tp > 1 else ""
        readouts += [
            Readout(
                f"Sequences of {state.srv_ctx:,} tokens that fit",
                f"{cap.sequences:,}",
                f"KV budget {cap.kv_budget / GIB:,.1f} GiB / {cap.per_sequence_held / GIB:,.3g} GiB per sequence"
                f"{held}; {tp} × {gpu.memory_label:g} GiB − weights {cap.weights / GIB:,.1f} GiB − reserve "
                f"{cap.reserve / GIB:,.1f} GiB"
                + (
                    " (no overhead taken off: real servers keep a few GiB per GPU for the CUDA context and activations)"
                    if cap.reserve == 0 and state.kv_budget is None
                    else ""
                ),
            )
        ]
        if state.kv_budget is not None and state.srv_reserve > 0:
            view.notices.append(
                ("info", "The KV budget is given directly, so the overhead reserve is not subtracted from it again.")
            )
        if "GB instead of GiB" in traps:
            lost = tp * (gpu.memory_bytes - gpu.memory_bytes_if_gb)
            wrong_budget = min(cap.kv_budget, cap.memory - lost - cap.weights)
            wrong_n = int(wrong_budget // cap.per_sequence_held) if wrong_budget > 0 else 0
            readouts.append(
                Readout(
                    "✗ Sequences if the label were GB",
                    f"{wrong_n:,}",
                    f"right: {cap.sequences:,}; {tp} × {gpu.memory_label:g} GB is {lost / GIB:,.1f} GiB less",
                )
            )
        if options.wants("KV capacity"):
            top = max(131_072, int(state.srv_ctx))
            ctxs = np.unique(np.concatenate([2 ** np.arange(9, int(np.log2(top)) + 1), [int(state.srv_ctx)]]))
            kv_held = kv_tok * cap.replication  # bytes per token, all tensor-parallel copies together
            pairs = [
                serving.sequences_by_allocator(cap.kv_budget, kv_held, _lengths(int(c), state.used), int(c))
                for c in ctxs
            ]
            now_pair = serving.sequences_by_allocator(
                cap.kv_budget, kv_held, _lengths(int(state.srv_ctx), state.used), int(state.srv_ctx)
            )
            waste = serving.allocation_waste(_lengths(int(state.srv_ctx), state.used), int(state.srv_ctx))
            trap = None
            if "query heads for KV heads" in traps:
                mha = kv_cache_bytes_per_token(spec, kvb, mha=True)
                trap = ("query heads for KV heads", [p[0] * kv_tok / mha for p in pairs])
            view.figures["KV capacity"] = kv_capacity_figure(
                ctxs,
                [p[0] for p in pairs],
                [p[1] for p in pairs],
                (int(state.srv_ctx), *now_pair),
                waste=(waste.contiguous, waste.paged),
                trap=trap,
                **options.look,
            )
            view.facts.update(paged=now_pair[1], contiguous=now_pair[0], waste=waste)

    # ---- speculative decoding
    E = float(serving.expected_tokens_per_forward(state.accept, state.draft_k))
    draft = DRAFTS[state.draft]
    readouts.append(
        Readout(
            "Speculative: tokens per target forward",
            f"{E:.2f}",
            f"(1 − α^(k+1))/(1 − α) with α = {state.accept:.2f}, k = {state.draft_k} (Leviathan et al. 2023)",
        )
    )
    if options.wants("Speculative decoding"):
        readouts += _acceptance_check(view)
    try:
        serving.check_draft_tokenizer(spec, draft)
        refused = None
    except ValueError as e:
        refused = str(e)
    if refused is not None:
        view.notices.append(("warning", f"Speculative speed-up not computed: {refused}."))
    elif tp_ok and draft.n_heads % tp == 0:
        step_fmt = {"weight_format": state.wfmt, "kv_bytes_per_value": kvb}
        sp_now = float(
            serving.speculative_speedup_vs_batch(
                state.accept, state.draft_k, state.batch, spec, draft, gpu, context=state.prompt, tp=tp, **step_fmt
            )
        )
        readouts.append(
            Readout(
                f"Speculative speed-up, batch {state.batch:,}",
                f"×{sp_now:.2f}",
                f"draft {draft.name}, context {state.prompt:,}, {state.wfmt} weights; below ×1 it slows decoding down"
                + (_moe_verify_note(spec, draft, gpu, state, tp, E, step_fmt) if spec.is_moe else ""),
            )
        )
        if options.wants("Speculative decoding"):
            a = np.linspace(0, 1, 101)
            b = 2.0 ** np.arange(0, 13)
            ks = sorted(set(SPEC_K) | {int(state.draft_k)})
            view.figures["Speculative decoding"] = speculative_figure(
                a,
                {k: serving.expected_tokens_per_forward(a, k) for k in ks},
                b,
                {
                    k: serving.speculative_speedup_vs_batch(
                        state.accept, k, b, spec, draft, gpu, context=state.prompt, tp=tp, **step_fmt
                    )
                    for k in ks
                },
                (float(state.accept), int(state.draft_k), E),
                **options.look,
            )
    elif tp_ok:  # same tokenizer, but the draft's heads do not split over tp GPUs
        view.notices.append(
            ("warning", f"The draft {draft.name} cannot be split over {tp} GPUs: choose another draft.")
        )

    # ---- mixture of experts
    if spec.is_moe:
        b = param_breakdown(spec)
        readouts.append(
            Readout(
                "MoE: total / active parameters",
                f"{fmt.count(b.total)} / {fmt.count(b.active)}",
                "memory holds every expert; each token's FLOPs use only the active ones. The router that picks "
                "them, its capacity and dropped tokens, and load balancing are on the MoE page",
            )
        )

    # a problem's answers lead while the page shows the problem's own inputs (its preset); once a control moves,
    # the page's own readouts lead and the problem's fixed answers follow them
    answers = problem_readouts(state.srv_problem)
    on_preset = state.srv_problem != NONE and SPEC.preset_of(state) == preset_name(PRESETS_BY_KEY[state.srv_problem])
    view.readouts = answers + readouts if on_preset else readouts + answers

    def decode_table() -> pd.DataFrame:
        if not tp_ok:
            return pd.DataFrame()
        b = 2.0 ** np.arange(0, 13)
        s = serving.forward_step(
            spec, gpu, b, 1, state.srv_ctx, weight_format=state.wfmt, kv_bytes_per_value=kvb, tp=tp
        )
        return pd.DataFrame(
            {
                "batch": b,
                "intensity_flop_per_byte": s.intensity,
                "step_ms": 1e3 * s.seconds,
                "tflops_per_gpu": s.flops / (tp * s.seconds) / 1e12,
            }
        )

    view.tables = {"Decode roofline": decode_table}
    if "acceptance" in view.facts:
        view.tables["Acceptance rule"] = lambda: pd.DataFrame(view.facts["acceptance"])
    return view
