"""The tables of tests/test_view_numbers.py for the pages of group 'systems': per page, per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show.

The references are written out here from the published configs (config.json on the Hugging Face hub), the NVIDIA
data sheets and the papers' formulas (Rajbhandari et al. 2020's ZeRO, Korthikanti et al. 2022's activation bytes,
the roofline, Leviathan et al. 2023); from the project only the pages' inputs are read (the SPEC's defaults and
presets). Where a readout templates the state's numbers, ``_memory`` / ``_serving`` compute its references from the
view's inputs, and each view lists the readouts it shows anew.
"""

from __future__ import annotations

import math

import numpy as np

from tests.page_numbers import Ref, _numbers_at, prepare
from tests.test_page_numbers import CITE, COUNT, FORMULA, GIVEN, MOE_TREND, NAME, _preset
from views import serving as v_serving
from views import training_memory as v_training_memory

TM, SV = v_training_memory.SPEC, v_serving.SPEC
GIB, GB, KIB = 2**30, 1e9, 2**10
DAY, YEAR = 86_400.0, 365 * 86_400.0
PEAK = 989e12  # H100 SXM and H200 SXM dense bf16 FLOP/s (data sheets)
BANDWIDTH = {"H100": 3.35e12, "H200": 4.8e12}  # HBM bytes/s (data sheets)
CARD_GIB = {"H100": 80, "H200": 141}  # the box's "80 GB" / "141 GB" read as GiB (the seeds' convention)
GPU_NAME = "the GPU's name (NVIDIA's data sheet: H100 SXM 80 GB, H200 SXM 141 GB)"
SOURCE = "the source's stated answer, quoted in the help (the seed's own number)"
SEED_NOTE = "a number of the seed's problem, quoted in its note (seed 002 A10)"
TIE = "an input of the seed's question (Llama-3.2-1B's V = 128,256 and D = 2,048 in A10-01)"
READOUT_NAME = "part of the answer's name (its inputs: the seed's question)"
LIVE = "the live readout's name (the page's input)"

# Published shapes: layers, hidden, query heads, KV heads, FFN width, vocabulary, tied embeddings
SHAPES: dict[str, tuple[int, int, int, int, int, int, bool]] = {
    "Llama-3-8B": (32, 4096, 32, 8, 14336, 128256, False),  # meta-llama/Meta-Llama-3-8B config.json
    "Llama-3-70B": (80, 8192, 64, 8, 28672, 128256, False),  # meta-llama/Meta-Llama-3-70B config.json
    "custom": (16, 2048, 32, 8, 8192, 128256, True),  # meta-llama/Llama-3.2-1B config.json (the page's custom shape)
}


def _parts(model: str) -> dict[str, int]:
    """Parameters by component of a Llama-layout model: q and o (D x D), k and v (D x K hd), SwiGLU 3 D F, two
    RMSNorm gains per layer and a final one, input embedding V D and (untied) output head V D."""
    L, D, N, K, F, V, tied = SHAPES[model]
    hd = D // N
    parts = {
        "embedding": V * D,
        "unembedding": 0 if tied else V * D,
        "attention": L * (2 * D * N * hd + 2 * D * K * hd),
        "ffn": L * 3 * D * F,
        "norms": L * 2 * D + D,
    }
    parts["total"] = sum(parts.values())
    return parts


# ================================================================================ 7. Training memory
BYTES = {"weights": 2, "gradients": 2, "optimizer": 4 + 4 + 4}  # bf16 weights and grads; fp32 master, Adam m, v
# Llama-3-70B's block counted as Korthikanti et al. 2022 count a GPT-3 block, in bf16 bytes per s·b·h (h = 8,192):
# attention: the norm's input, the QKV input, Q, K and V (8 of 64 heads each), the out-projection's input; MLP (SwiGLU
# of 28,672 = 3.5h): the norm's input, the gate/up input, then the gate and up outputs, plus the SiLU output and the
# product (the down input) unless a fused SwiGLU recomputes them
_ATTN_SBH = 2 + 2 + 2 + 2 * 2 * (8 * 128) / 8192 + 2
LLAMA70_BLOCK_SBH = (
    _ATTN_SBH + 2 + 2 + 4 * 2 * 28672 / 8192,  # every MLP intermediate stored
    _ATTN_SBH + 2 + 2 + 2 * 2 * 28672 / 8192,  # fused SwiGLU
)


def _states(n: float, zero: int, tp: int, pp: int, dp: int) -> tuple[float, float, float]:
    """ZeRO (Rajbhandari et al. 2020): stage 1 shards the optimizer states over dp, 2 also the gradients, 3 also the
    weights; TP and PP give each GPU N / (tp pp) parameters."""
    per = n / (tp * pp)
    return (
        per * BYTES["weights"] / (dp if zero >= 3 else 1),
        per * BYTES["gradients"] / (dp if zero >= 2 else 1),
        per * BYTES["optimizer"] / (dp if zero >= 1 else 1),
    )


def _activations(v: dict) -> float:
    """Korthikanti et al. 2022 with sequence parallelism, bytes on the first pipeline stage: per layer s b h (34/t
    + 5 a s/(h t)) without recomputation, s b h 34/t with selective recomputation (or no S x S scores stored),
    2 s b h / t with full; ceil(L / pp) layers, min(pp, m) micro-batches in flight (1F1B)."""
    if v["params"] is not None:
        return 0.0
    L, D, N, *_ = SHAPES[v["mem_model"]]
    s, b, t = v["seq"], v["mbs"], v["tp"]
    if v["recompute"] == "full":
        per_layer = 2 * s * b * D / t
    elif v["recompute"] == "selective" or v["flash"]:
        per_layer = s * b * D * 34 / t
    else:
        per_layer = s * b * D * (34 / t + 5 * N * s / (D * t))
    return per_layer * math.ceil(L / v["pp"]) * min(v["pp"], v["micro"])


def _recompute_pct(v: dict) -> float:
    """Selective recomputation runs the attention core's forward again: per token 2 L N (d_qk + d_v) S FLOPs
    (scores and weighted sum over the S keys), against three forwards of 2 x the weights it multiplies (all but the
    input embedding and the norm gains) plus that core."""
    if v["recompute"] == "none":
        return 0.0
    if v["recompute"] == "full":
        return 100 / 3
    L, D, N, *_ = SHAPES[v["mem_model"]]
    p = _parts(v["mem_model"])
    core = 2 * L * N * (2 * D // N) * v["seq"]
    forward = 2 * (p["total"] - p["embedding"] - p["norms"]) + core
    return 100 * core / (3 * forward)


def _n(v: dict) -> float:
    return float(v["params"]) if v["params"] is not None else float(_parts(v["mem_model"])["total"])


def _bubble(p: int, m: int) -> float:
    return (p - 1) / (m + p - 1)


def _m_for_10pct(p: int) -> int:
    return next(m for m in range(1, 10**6) if _bubble(p, m) <= 0.1) if p > 1 else 1


def _run_seconds(v: dict) -> float:
    gpus = v["tp"] * v["pp"] * v["dp"]
    return 6 * _n(v) * v["D"] / (gpus * PEAK * v["mem_mfu"] / 100)


def _duration(seconds: float) -> float:
    """The run's time in the unit the page prints (h below 3 days, days below 2 years, years of 365 days)."""
    return seconds / 3600 if seconds < 3 * DAY else seconds / DAY if seconds < 2 * YEAR else seconds / YEAR


BARS = (
    "a bar's per-GPU total at its ZeRO stage (a bare \"X GiB\" cannot be told from other texts' GiB): the chosen "
    "stage's is the 'Per GPU' readout checked here, a bar over the card is checked by value (its ✗), and the stages' "
    "sums are test_core_training_memory.py::test_zero_stages_against_a_direct_sum"
)


def _zero_help(z: int, dp: int) -> Ref:
    """The ZeRO arithmetic of the help: 16 -> 2 + 2 + 12/8 = 5.5 with ZeRO-1 over 8."""
    if z == 0:
        return Ref(
            "model states / the parameters this GPU computes with: 16 (ZeRO-0 keeps a full copy on every replica)",
            16,
            NAME,
        )
    w, g, o = BYTES["weights"], BYTES["gradients"], BYTES["optimizer"]
    terms, values = [], []
    for b, stage in ((w, 3), (g, 2), (o, 1)):
        terms.append(f"{b}/{dp}" if z >= stage else f"{b}")
        values += [b, dp] if z >= stage else [b]
    value = sum(b / dp if z >= stage else b for b, stage in ((w, 3), (g, 2), (o, 1)))
    return Ref(
        f"model states / the parameters this GPU computes with: 16 → {' + '.join(terms)} = {value:.3g} with "
        f"ZeRO-{z} over {dp}",
        16,
        *values,
        value,
        NAME,
        GIVEN,
    )


def _act_formula(v: dict) -> str:
    if v["recompute"] == "full":
        return "2 s b h / t (their 2sbh: only each layer's input is kept"
    if v["recompute"] == "selective" or v["flash"]:
        return "s b h · 34/t (the S × S scores are not stored)"
    return "s b h (34/t + 5 a s/(h t))"


def _mem(n: float) -> tuple[str, float]:
    """A byte count in the unit the training-memory page prints it at three significant figures: GiB, then TiB and
    PiB once the unit below would print 1,000 or more; (unit, value in it)."""
    for unit, scale in (("GiB", GIB), ("TiB", 2**40)):
        if abs(n) / scale < 999.5:
            return unit, n / scale
    return "PiB", n / 2**50


def _unit(seconds: float) -> str:
    return "h" if seconds < 3 * DAY else "days" if seconds < 2 * YEAR else "years"


def _answer(passage: str, value: float | str) -> Ref:
    """A problem's answer readout "<label>: <value>": the label's numbers are the seed's question (its context
    length, its card size), the value is checked."""
    label = passage.rsplit(": ", 1)[0]
    return Ref(passage, *[READOUT_NAME] * len(_numbers_at(prepare(label))), value)


def _stated(passage: str) -> Ref:
    """A problem's help that quotes the source's answer and its section only."""
    return Ref(passage, SOURCE)


def _memory(v: dict) -> dict[str, list[Ref]]:
    """Every readout and figure text of the training-memory page that depends on the state, keyed by a short name."""
    n, z, tp, pp, dp = _n(v), v["zero"], v["tp"], v["pp"], v["dp"]
    act = _activations(v)
    totals = [sum(_states(n, zz, tp, pp, dp)) + act for zz in range(4)]
    total = totals[z]
    states = sum(_states(n, z, tp, pp, dp))
    seconds = _run_seconds(v)
    gpus = tp * pp * dp
    card = CARD_GIB[v["mem_gpu"]] * GIB
    (u_total, v_total), (u_room, v_room), (u_act, v_act) = _mem(total), _mem(card - total), _mem(act)
    out = {
        "per_gpu": [
            Ref(f"Per GPU (ZeRO-1): 58.1 {u_total}", GIVEN, v_total),
            Ref("Per GPU (ZeRO-1) help: 62.4 GB: weights", GIVEN, total / GB),
        ],
        "headroom": [Ref(f"Headroom on the card: +21.9 {u_room}", v_room)],
        "headroom_help": [Ref("Headroom on the card help: H100 SXM 80 GB: 80 GiB", GPU_NAME, 80)],
        "states": [
            Ref(
                "All training states: 128 GB" if n * 16 < 1e12 else "All training states: 1.13 TB",
                16 * n / GB if n * 16 < 1e12 else 16 * n / 1e12,
            ),
            Ref(
                "All training states help: 8.03B parameters × 16 bytes (mixed precision, AdamW (16 B/param))",
                n,
                sum(BYTES.values()),
                sum(BYTES.values()),
            ),
        ],
        "recipe": [
            Ref("Bytes/param (recipe): 2+2+4+4+4 = 16", 2, 2, 4, 4, 4, sum(BYTES.values())),
            Ref(
                "Bytes/param (recipe) help: weights 2 + gradients 2 + master weights 4 + Adam m 4 + Adam v 4 = 16 "
                "bytes/param (mixed precision, AdamW (16 B/param)",
                2,
                2,
                4,
                4,
                4,
                16,
                16,
            ),
        ],
        "per_param": [Ref("Bytes/param on this GPU: 5.50", states / (n / (tp * pp)))],
        "per_param_help": [_zero_help(z, dp)],
        "activations": [Ref(f"Activations per GPU: 17.0 {u_act}", v_act)],
        "act_help": [
            Ref("Activations per GPU help: Korthikanti et al. 2022 (a GPT-3 block with attention dropout", NAME),
            Ref(_act_formula(v), CITE),
            Ref("recomputation adds 4.2% FLOPs", _recompute_pct(v)),
        ],
        "bubble": [
            Ref("Pipeline bubble: 0.0%", 100 * _bubble(pp, v["micro"])),
            Ref(
                "Pipeline bubble help: (p − 1)/(m + p − 1) with p = 1, m = 8; m ≥ 1 keeps it ≤ 10%",
                FORMULA,
                FORMULA,
                GIVEN,
                GIVEN,
                _m_for_10pct(pp),
                "the target the sentence sets",
            ),
        ],
        "gpus": [Ref("GPUs = TP × PP × DP: 8", gpus)],
        "time": [
            Ref(f"Training time: 176.2 {_unit(seconds)}", _duration(seconds)),
            Ref(
                "Training time help: C = 6ND = 4.82×10²² FLOPs at 40% of 9.89×10¹⁴ FLOP/s per GPU",
                FORMULA,
                6 * n * v["D"],
                GIVEN,
                PEAK,
            ),
        ],
        "cost": [
            Ref("Cost: $67,663", gpus * seconds / 3600 * v["price"]),
            Ref("Cost help: 33,832 GPU-hours at $2", gpus * seconds / 3600, GIVEN),
        ],
        "bars": [
            *(
                [Ref(f"^{_mem(t)[1]:.3g} {_mem(t)[0]} ✗", _mem(t)[1]) for t in totals if t > card]
                if sum(t > card for t in totals) <= 1
                else [Ref(f"^1.02 {u} ✗", BARS) for u in dict.fromkeys(_mem(t)[0] for t in totals if t > card)]
            ),
            Ref("^58.1 GiB", BARS),
        ],
        # the memory figure's readout line (its title) at the page's sequence length: the outlined bar's activations,
        # its total and its headroom on the card, as the readouts above print them
        "title": [
            Ref(
                f"seq 4,096: activations 17.0 {u_act} per GPU ZeRO-1 total 58.1 {u_total} per GPU, headroom +21.9 "
                f"{u_room} of 80 GiB",
                GIVEN,
                v_act,
                GIVEN,
                v_total,
                v_room,
                CARD_GIB[v["mem_gpu"]],
            )
        ],
        "gib_axis": [
            Ref("H100 SXM 80 GB: 80 GiB = 85.9 GB", GPU_NAME, GIVEN, 80 * GIB / GB),
            Ref("memory per GPU (GiB, 1 GiB = 2³⁰ B = 1.074 GB)", FORMULA, FORMULA, GIB / GB),
            Ref("idle share (p − 1)/(m + p − 1)", FORMULA),
            *[Ref(f"p = {p} stages", GIVEN) for p in (2, 4, 8, 16)],
        ],
        "your_run": [Ref("your run: p = 1, m = 8", GIVEN)],
    }
    if v["params"] is None:
        L, D, N, K, *_ = SHAPES[v["mem_model"]]
        B, S = v["mbs"], v["seq"]
        p = _parts(v["mem_model"])
        plain = L * (14 * B * S * D + B * N * S**2)
        flash = L * (14 * B * S * D + B * N * S)
        out["shape"] = [
            Ref("Activation elements (002 A10-03): 2.470×10¹⁰", flash if v["flash"] else plain),
            Ref(
                "Activation elements (002 A10-03) help: L(14BSD + BNS²) with L = 32, B = 1, S = 4,096, D = 4,096, "
                "N = 32: 2.470×10¹⁰ numbers without FlashAttention, 7.520×10⁹ with it",
                FORMULA,
                GIVEN,
                GIVEN,
                GIVEN,
                GIVEN,
                GIVEN,
                plain,
                flash,
            ),
            Ref(
                "It counts elements, not bytes (× 2 in",
                2,
            ),
            Ref(
                "for the whole model on one replica; the S² term wins for S > 14D/N = 1,792",
                FORMULA,
                14 * D / N,
            ),
            Ref("Parameters: embeddings: 1.051B", p["embedding"] + p["unembedding"]),
            Ref(
                "Parameters: embeddings help: V·D = 525,336,576 input + 525,336,576 output",
                p["embedding"],
                p["unembedding"],
            ),
            Ref("Parameters: attention: 1.342B", p["attention"]),
            Ref(
                "Parameters: attention help: 1,342,177,280 over 32 layers: 2·D·N·H + 2·D·K·H per layer with K = 8 KV "
                "heads",
                p["attention"],
                L,
                FORMULA,
                FORMULA,
                K,
            ),
            Ref("Parameters: FFN: 5.637B", p["ffn"]),
            Ref("Parameters: FFN help: 5,637,144,576: SwiGLU, 3·D·F per layer", p["ffn"], FORMULA),
            Ref("Parameters: norms: 266.2K", p["norms"]),
            Ref("Parameters: norms help: 266,240 RMSNorm gains", p["norms"]),
            Ref("Parameters: total: 8.030B", p["total"]),
            Ref(
                "Parameters: total help: 8,030,261,248 counted from the shape; published 8.030B",
                p["total"],
                "the authors' stated size (Llama Team 2024, the model card)",
            ),
        ]
    return out


def _pick(groups: dict[str, list[Ref]], *names: str) -> list[Ref]:
    return [r for name in names for r in groups[name]]


def _tm(name: str | None) -> dict:
    return TM.defaults() if name is None else _preset(TM, name)


_TM_ALL = ("per_gpu", "headroom", "headroom_help", "states", "recipe", "per_param", "per_param_help", "activations",
           "act_help", "shape", "bubble", "gpus", "time", "cost", "bars", "gib_axis", "your_run", "title")  # fmt: skip
BARE = "A bare parameter count has no shape: activations are left out (choose a model to see them)."
BARE_REFS = [Ref("Activations per GPU help: left out: a bare parameter count has no shape", GIVEN)]
L70_LINE = Ref(
    "Llama-3-70B: 70,553,706,496 parameters counted from its shape (Llama Team 2024; Meta-Llama-3-70B "
    "config; seed 002 A10-02).",
    NAME,
    NAME,
    _parts("Llama-3-70B")["total"],
    NAME,
    NAME,
)


def _tm_preset(key: str) -> str:
    return next(name for name in TM.presets if name.startswith(key + ":"))


def _tm_70b(key: str, *extra: Ref) -> list[Ref]:
    """The Llama-3-70B presets at TP 8, PP 8: the same readouts, and the problem's answers."""
    g = _memory(_tm(_tm_preset(key)))
    return [L70_LINE, *_pick(g, "per_gpu", "headroom", "states", "activations", "act_help", "shape", "bubble", "gpus",
                             "time", "cost", "bars", "your_run", "title"), *extra]  # fmt: skip


def _tm_bare(key: str, names: tuple[str, ...], *extra: Ref) -> list[Ref]:
    g = _memory(_tm(_tm_preset(key)))
    return [*_pick(g, *names), *BARE_REFS, *extra]


L70 = _parts("Llama-3-70B")
L70_MHA = L70["total"] + 80 * (2 * 8192 * 8192 - 2 * 8192 * 1024)  # K and V at 64 heads instead of 8
A10_06_TOKENS = 0.40 * 1024 * PEAK / (6 * 7.06e10)
A10_12_S = 6 * 7.06e10 * 15e12 / (2048 * PEAK * 0.40)

TRAINING_MEMORY: dict[str, list[Ref]] = {
    "defaults": _pick(_memory(_tm(None)), *_TM_ALL),
    "preset 001-3.2: A 7B model's training states": _tm_bare(
        "001-3.2",
        ("per_gpu", "headroom", "states", "activations", "time", "cost", "bars"),
        _answer("Training states of a 7B model: 112 GB", 16 * 7e9 / GB),
        _stated(
            "Training states of a 7B model help: A 7B model's training states: the source states 112 GB (lesson 001 "
            "section 3.2)."
        ),
    ),
    "preset 001-A: Worked example A: plan a small run": _tm_bare(
        "001-A",
        ("per_gpu", "headroom", "states", "per_param", "per_param_help", "activations", "time", "cost", "bars"),
        _answer("Compute budget (FLOPs): 2.734×10²⁰", 8 * 24 * 3600 * 0.4 * PEAK),  # 8 H100s for a day at 40% MFU
        _stated(
            "Compute budget (FLOPs) help: Worked example A: plan a small run: the source states 2.73×10²⁰ (lesson 001 "
            "section 4 A)."
        ),
        # N = sqrt(C/120), 20 tokens/param
        _answer("Parameters by the 20-tokens rule: 1.510B", math.sqrt(8 * 24 * 3600 * 0.4 * PEAK / 120)),
        _stated(
            "Parameters by the 20-tokens rule help: Worked example A: plan a small run: the source states 1.5×10⁹ "
            "(lesson 001 section 4 A)."
        ),
        _answer("Training states: 24 GB", 16 * 1.5e9 / GB),
        _stated(
            "Training states help: Worked example A: plan a small run: the source states 24 GB (lesson 001 "
            "section 4 A)."
        ),
        _answer("Serving compute per token (GFLOP): 3", 2 * 1.5e9 / 1e9),  # 2N FLOPs per token
        _stated(
            "Serving compute per token (GFLOP) help: Worked example A: plan a small run: the source states 3 (lesson "
            "001 section 4 A)."
        ),
    ),
}

TRAINING_MEMORY |= {
    "preset A10-01: Parameter count of a decoder-only LM": _tm_70b(
        "A10-01",
        # Llama-3.2-1B's V D, tied away
        _answer("Saved by tied embeddings at V = 128,256, D = 2,048: 262.7M", 128256 * 2048),
        _stated(
            "Saved by tied embeddings at V = 128,256, D = 2,048 help: Parameter count of a decoder-only LM: the "
            "source states 2.6×10⁸ (seed 002 A10-01)."
        ),
        # W_k, W_v: 64 -> 8 heads
        _answer("Saved by grouped-query attention, per layer: 117.4M", 2 * 8192 * 8192 - 2 * 8192 * 1024),
        _stated(
            "Saved by grouped-query attention, per layer help: Parameter count of a decoder-only LM: the source "
            "states 1.17×10⁸ (seed 002 A10-01)."
        ),
        _answer("Saved by grouped-query attention, all layers: 9.395B", 80 * (2 * 8192 * 8192 - 2 * 8192 * 1024)),
        _stated(
            "Saved by grouped-query attention, all layers help: Parameter count of a decoder-only LM: the source "
            "states 9.4×10⁹ (seed 002 A10-01)."
        ),
        _answer(
            "Llama-3-70B's shape with full multi-head attention (formula): 79.95B",
            80 * (4 * 8192**2 + 3 * 8192 * 28672 + 2 * 8192) + 2 * 128256 * 8192,
        ),
        Ref(
            "Llama-3-70B's shape with full multi-head attention (formula) help: Parameter count of a decoder-only LM: "
            "the source states about 80B "
            "(seed 002 A10-01). L(4D² + 3DF + 2D) + 2VD with full multi-head attention and Llama-3-70B's own F = "
            "28,672 = 3.5D; with F = 8D/3 the same formula is 12LD² + 2VD (+ 2LD) = 66.5B.",
            READOUT_NAME,
            READOUT_NAME,
            SOURCE,
            FORMULA,
            FORMULA,
            FORMULA,
            FORMULA,
            NAME,
            NAME,
            GIVEN,
            28672 / 8192,
            FORMULA,
            FORMULA,
            4 + 8,
            FORMULA,
            FORMULA,
            80 * (12 * 8192**2 + 2 * 8192) + 2 * 128256 * 8192,
        ),
    ),
    "preset A10-02: Is Llama-3-70B really 70B?": _tm_70b(
        "A10-02",
        _answer("Parameters in total: 70.55B", L70["total"]),
        _stated(
            "Parameters in total help: Is Llama-3-70B really 70B?: the source states 70.6B (in the follow-up's "
            "9.4/70.6); its grand total was lost in extraction (seed 002 A10-02, A2.10; Llama Team 2024)."
        ),
        _answer("Parameters per layer: 855.7M", (L70["attention"] + L70["ffn"] + L70["norms"] - 8192) / 80),
        _stated(
            "Parameters per layer help: Is Llama-3-70B really 70B?: the source states ≈ 8.56×10⁸ (seed 002 A10-02, "
            "A2.10; Llama Team 2024)."
        ),
        _answer(
            "Feed-forward share of a layer: 82.4%",
            100 * L70["ffn"] / (L70["attention"] + L70["ffn"] + L70["norms"] - 8192),
        ),
        _stated(
            "Feed-forward share of a layer help: Is Llama-3-70B really 70B?: the source states 82% (seed 002 A10-02, "
            "A2.10; Llama Team 2024)."
        ),
        _answer("Total with full multi-head attention: 79.95B", L70_MHA),
        _stated(
            "Total with full multi-head attention help: Is Llama-3-70B really 70B?: the source states about 80B (seed "
            "002 A10-02, A2.10; Llama Team 2024)."
        ),
        _answer(
            "Share saved by grouped-query attention (of the 80B multi-head total): 11.8%",
            100 * (L70_MHA - L70["total"]) / L70_MHA,
        ),
        _stated(
            "Share saved by grouped-query attention (of the 80B multi-head total) help: Is Llama-3-70B really 70B?: "
            "the source states 12% (seed 002 "
            "A10-02, A2.10; Llama Team 2024)."
        ),
        _answer("Embeddings' share of the model: 2.98%", 100 * (L70["embedding"] + L70["unembedding"]) / L70["total"]),
        _stated(
            "Embeddings' share of the model help: Is Llama-3-70B really 70B?: the source states 3% (seed 002 A10-02, "
            "A2.10; Llama Team 2024)."
        ),
        _answer("Attention's share of the model: 17.1%", 100 * L70["attention"] / L70["total"]),
        _stated(
            "Attention's share of the model help: Is Llama-3-70B really 70B?: the source states 17% (seed 002 A10-02, "
            "A2.10; Llama Team 2024)."
        ),
        _answer("Feed-forward share of the model: 79.9%", 100 * L70["ffn"] / L70["total"]),
        _stated(
            "Feed-forward share of the model help: Is Llama-3-70B really 70B?: the source states 80% (seed 002 "
            "A10-02, A2.10; Llama Team 2024)."
        ),
    ),
    "preset A10-03: Activation memory per layer": _tm_70b(
        "A10-03",
        _answer(
            "Sequence length past which attention scores dominate activation memory (tokens): 1,792", 14 * 8192 / 64
        ),  # 14 B S D = B N S^2
        Ref(
            "Sequence length past which attention scores dominate activation memory (tokens) help: Activation memory "
            "per layer: the source states "
            "1,792 tokens (seed 002 "
            "A10-03; Korthikanti et al. 2022). Note: L(14BSD + BNS^2) counts elements; 34sbh + 5as^2b counts bytes "
            "per layer.",
            SOURCE,
        ),
        _answer("The same by Korthikanti et al.'s count (tokens): 870.4", 34 * 8192 / (5 * 64)),  # 34 s b h = 5 a s^2 b
        Ref(
            "The same by Korthikanti et al.'s count (tokens) help: Activation memory per layer: derived from "
            "Korthikanti et al. 2022's "
            "34sbh + 5as²b: s = 34h/(5a), 870 tokens; the source does not state it. Their 5 = 2 (softmax output) + 1 "
            "(dropout mask) + 2 (dropout output) assumes a GPT-3 block with attention dropout; Llama-family models "
            "train without it, the term is 2as²b and the crossover 34h/(2a) = 2,176 tokens here; the 34 assumes a 4h "
            "GeLU MLP and only happens to land close: counted the same way for Llama-3-70B's SwiGLU block with GQA it "
            "is 40.5sbh with every MLP intermediate stored, 26.5sbh with a fused SwiGLU that recomputes the SiLU "
            "output and the product. Note: L(14BSD + BNS^2) counts elements; 34sbh + 5as^2b counts bytes per layer.",
            CITE,
            CITE,
            FORMULA,
            FORMULA,
            34 * 8192 / (5 * 64),
            CITE,
            CITE,
            CITE,
            CITE,
            NAME,
            5 - 1 - 2,
            FORMULA,
            FORMULA,
            34 * 8192 / (2 * 64),
            CITE,
            CITE,
            NAME,
            NAME,
            *LLAMA70_BLOCK_SBH,
            FORMULA,
            FORMULA,
            FORMULA,
            FORMULA,
            FORMULA,
        ),
    ),
    "preset A10-04: FLOPs in the forward pass": _tm_70b(
        "A10-04",
        _answer(
            "Attention projections with grouped-query heads (× B·S·D²): 4.5",
            2 * (2 * 8192 * 64 * 128 + 2 * 8192 * 8 * 128) / 8192**2,
        ),
        Ref(
            "Attention projections with grouped-query heads (× B·S·D²) help: FLOPs in the forward pass: the source "
            "states 4.5 (seed 002 A10-04). "
            "Note: 24 B S D^2 + 4 B S^2 D per layer for MHA; 4.5 B S D^2 for the projections under Llama-3-70B's "
            "GQA.",
            SOURCE,
        ),
        _answer(
            "Key and value projections: times fewer FLOPs than full multi-head: 8", 8192 / (8 * 128)
        ),  # D over K x head dim
        Ref(
            "Key and value projections: times fewer FLOPs than full multi-head help: FLOPs in the forward pass: the "
            "source states 8 (seed 002 A10-04). "
            "Note: 24 B S D^2 + 4 B S^2 D per layer for MHA; 4.5 B S D^2 for the projections under Llama-3-70B's "
            "GQA.",
            SOURCE,
        ),
    ),
    "preset A10-05: Where 6ND comes from": _tm_70b(
        "A10-05",
        _answer(
            "Sequence length past which attention FLOPs stop being small next to 6N (tokens): 49,152", 6 * 8192
        ),  # 4 B S^2 D = 24 B S D^2
        Ref(
            "Sequence length past which attention FLOPs stop being small next to 6N (tokens) help: Where 6ND comes "
            "from: the source states 49,000 "
            "(seed 002 A10-05; "
            "lesson 001 check yourself 1). S = 6D counts the full S² scores (no causal mask); with causal masking, "
            "which FlashAttention exploits, only half are computed and the crossover is 12D = 98,304, Kaplan et al. "
            "2020's 12·d_model (lesson 001 §3.2).",
            READOUT_NAME,
            FORMULA,
            SOURCE,
            SOURCE,
            SOURCE,
            FORMULA,
            FORMULA,
            12 * 8192,
            FORMULA,
        ),
        _answer("Training compute, 7B parameters on 2T tokens (FLOPs): 8.400×10²²", 6 * 7e9 * 2e12),
        _stated(
            "Training compute, 7B parameters on 2T tokens (FLOPs) help: Where 6ND comes from: the source states "
            "8.4×10²² (seed 002 A10-05; lesson 001 "
            "check yourself 1)."
        ),
    ),
}

A10_06 = "A10-06: MFU from measured throughput"
A10_06_PEAK = 1024 * PEAK  # 8 x 8 x 16 H100s
A10_06_MFU = 6 * 7.06e10 * 12_000 / A10_06_PEAK  # the seed's measured 12,000 tokens/s (002 A10-06)
MFU_NOTE = "Note: MFU = 6 N x tokens/s / (GPUs x peak) with N = 7.06e10."
A10_09 = "A10-09: Where 16 bytes per parameter come from"
A10_10 = "A10-10: Sharding a 100B training run"
A10_12 = "A10-12: Training time and cost"
A10_12_NOTE = (
    "Note: time = 6ND / (GPUs x 989e12 x MFU) with N = 7.06e10; a month needs 3x the compute, roughly 6,000 cards."
)
_BARE_GROUPS = ("per_gpu", "headroom", "states", "activations", "time", "cost", "bars")

TRAINING_MEMORY |= {
    "preset " + A10_06: _tm_bare(
        "A10-06",
        (*_BARE_GROUPS, "per_param", "per_param_help", "bubble", "gpus", "your_run"),
        _answer("Cluster peak (FLOP/s): 1.013×10¹⁸", A10_06_PEAK),
        _stated(
            "Cluster peak (FLOP/s) help: MFU from measured throughput: the source states 1.01×10¹⁸ (seed 002 "
            "A10-06, A5.4). " + MFU_NOTE
        ),
        _answer("Model FLOPs utilisation: 0.502%", 100 * A10_06_MFU),
        Ref(
            "Model FLOPs utilisation help: MFU from measured throughput: the source's number was lost in extraction; "
            "its own "
            "inputs and rounding give 0.503% (seed 002 A10-06, A5.4). This MFU (the seed's convention) counts 6N FLOPs "
            "per token and leaves out attention's FLOPs; PaLM's definition (Chowdhery et al. 2022, App. B) adds them. "
            "Core differs: the seed's rounded 1.01e18 cluster peak gives 0.503%; the unrounded 1.0127e18 gives "
            "0.502%. " + MFU_NOTE,
            100 * 6 * 7.06e10 * 12_000 / 1.01e18,
            FORMULA,
            "the seed's rounded cluster peak",
            100 * 6 * 7.06e10 * 12_000 / 1.01e18,
            A10_06_PEAK,
            100 * A10_06_MFU,
            FORMULA,
            GIVEN,
        ),
        _answer("Tokens per second for 40% utilisation: 956,314", 0.40 * A10_06_PEAK / (6 * 7.06e10)),
        Ref(
            "Tokens per second for 40% utilisation help: MFU from measured throughput: the source states 9.5×10⁵ "
            "(about 950,000) (seed 002 A10-06, A5.4). Core differs: the seed rounds the cluster peak to 1.01e18 before "
            "dividing and gets 953,730 (9.5e5); with the unrounded 1.0127e18 it is 956,314 (9.6e5 to two figures). "
            + MFU_NOTE,
            READOUT_NAME,
            SOURCE,
            SOURCE,
            "the seed's rounded cluster peak",
            0.40 * 1.01e18 / (6 * 7.06e10),
            0.40 * 1.01e18 / (6 * 7.06e10),
            A10_06_PEAK,
            0.40 * A10_06_PEAK / (6 * 7.06e10),
            0.40 * A10_06_PEAK / (6 * 7.06e10),
            FORMULA,
            GIVEN,
        ),
        _answer("Pipeline bubble, 8 stages, 8 micro-batches (share of wall-clock time): 46.7%", 100 * _bubble(8, 8)),
        _stated(
            "Pipeline bubble, 8 stages, 8 micro-batches (share of wall-clock time) help: MFU from measured "
            "throughput: the source states 47% (seed 002 A10-06, "
            "A5.4). " + MFU_NOTE
        ),
        _answer("The same bubble over the ideal compute time: 87.5%", 100 * (8 - 1) / 8),  # (p - 1)/m
        Ref(
            "The same bubble over the ideal compute time help: MFU from measured throughput: the source states 87.5% "
            "(seed 002 A10-06, A5.4). (p − 1)/m = bubble time ÷ ideal compute time (Narayanan et al. 2021); as a "
            "share of wall-clock the same pipeline idles (p − 1)/(m + p − 1) = 46.7%, the readout before this one: "
            "two conventions, do not mix them. " + MFU_NOTE,
            SOURCE,
            FORMULA,
            FORMULA,
            FORMULA,
            100 * _bubble(8, 8),
            FORMULA,
            GIVEN,
        ),
    ),
    "preset " + A10_09: _tm_bare(
        "A10-09",
        (*_BARE_GROUPS, "per_param", "per_param_help", "gpus"),
        *[
            x
            for label, value in (
                ("Bytes per parameter, mixed-precision Adam", 16),
                ("The same with fp32 gradients", 2 + 4 + 4 + 4 + 4),
                ("The same with 8-bit Adam moments", 2 + 2 + 4 + 1 + 1),
                ("The same with everything in bf16", 2 + 2 + 2 + 2),
            )  # 8-bit Adam: 1-byte moments; pure bf16: no master
            for x in (
                _answer(f"{label}: {value}", value),
                _stated(
                    f"{label} help: Where 16 bytes per parameter come from: the "
                    f"source states {value} (seed 002 A10-09, A5.1)."
                ),
            )
        ],
        _answer("Training states of a 70B model: 1,120 GB", 16 * 70e9 / GB),
        _stated(
            "Training states of a 70B model help: Where 16 bytes per parameter come from: the source states 1,120 GB "
            "(seed 002 A10-09, A5.1)."
        ),
        _answer("80 GiB cards they fill: 13.04", 16 * 70e9 / (80 * GIB)),
        _stated(
            "80 GiB cards they fill help: Where 16 bytes per parameter come from: the source states 13 "
            "(seed 002 A10-09, A5.1)."
        ),
    ),
    "preset " + A10_10: _tm_bare(
        "A10-10",
        (*_BARE_GROUPS, "bubble", "gpus", "your_run"),
        _answer("Training states in total: 1.6 TB", 16 * 100e9 / 1e12),
        _stated(
            "Training states in total help: Sharding a 100B training run: the source states 1.6 TB (seed 002 A10-10)."
        ),
        _answer("Memory of the 512 cards: 40 TiB", 512 * 80 / 1024),
        _stated(
            "Memory of the 512 cards help: Sharding a 100B training run: the source states 40 TiB (seed 002 A10-10)."
        ),
        _answer("The same in decimal terabytes: 43.98 TB", 512 * 80 * GIB / 1e12),
        _stated(
            "The same in decimal terabytes help: Sharding a 100B training run: the source states 44 TB (seed 002 "
            "A10-10)."
        ),
        _answer("Training states per card before ZeRO: 23.28 GiB", 16 * 100e9 / 64 / GIB),  # TP 8 x PP 8
        _stated(
            "Training states per card before ZeRO help: Sharding a 100B training run: the source states 23 GiB (seed "
            "002 A10-10)."
        ),
        _answer("Bytes per parameter per card with ZeRO stage 1: 5.5", 2 + 2 + 12 / 8),
        _stated(
            "Bytes per parameter per card with ZeRO stage 1 help: Sharding a 100B training run: the source states 5.5 "
            "(seed 002 A10-10)."
        ),
        _answer("Training states per card with ZeRO stage 1: 8.004 GiB", (2 + 2 + 12 / 8) * 100e9 / 64 / GIB),
        _stated(
            "Training states per card with ZeRO stage 1 help: Sharding a 100B training run: the source states 8 GiB "
            "(seed 002 A10-10)."
        ),
        _answer("Micro-batches for a 10% pipeline bubble: 63", _m_for_10pct(8)),
        _stated(
            "Micro-batches for a 10% pipeline bubble help: Sharding a 100B training run: the source states 63 (seed "
            "002 A10-10)."
        ),
    ),
    "preset " + A10_12: _tm_bare(
        "A10-12",
        (*_BARE_GROUPS, "per_param", "per_param_help", "bubble", "gpus", "your_run"),
        _answer("Training compute (FLOPs): 6.354×10²⁴", 6 * 7.06e10 * 15e12),
        _stated(
            "Training compute (FLOPs) help: Training time and cost: the source's number was lost in extraction; its "
            "own inputs and rounding give 6.354×10²⁴ (seed 002 A10-12). " + A10_12_NOTE
        ),
        _answer("Training time (days): 90.77", A10_12_S / DAY),
        _stated(
            "Training time (days) help: Training time and cost: the source states 91 (seed 002 A10-12). " + A10_12_NOTE
        ),
        _answer("Cost of the GPU time: $8.92M", 2048 * A10_12_S / 3600 * 2.0),
        Ref(
            "Cost of the GPU time help: Training time and cost: the source's number was lost in extraction; its own "
            "inputs and rounding give $8.95M (seed 002 A10-12). Core differs: the seed's 91 days are rounded up from "
            "90.77; unrounded the cost is $8,923,155, $8.9M either way. " + A10_12_NOTE,
            2048 * 91 * 24 * 2.0,
            SOURCE,
            A10_12_S / DAY,
            2048 * A10_12_S / 3600 * 2.0,
            2048 * A10_12_S / 3600 * 2.0,
            FORMULA,
            PEAK,
            GIVEN,
            A10_12_S / DAY / 30,
            2048 * A10_12_S / DAY / 30,
        ),
        _answer("Too short by this factor if utilisation is left out: 2.5", 1 / 0.40),
        _stated(
            "Too short by this factor if utilisation is left out help: Training time and cost: the source states 2.5 "
            "(seed 002 A10-12). " + A10_12_NOTE
        ),
        _answer("Speed-up a one-month run needs: 3.026", A10_12_S / DAY / 30),
        _stated(
            "Speed-up a one-month run needs help: Training time and cost: the source states 3 (seed 002 A10-12). "
            + A10_12_NOTE
        ),
        _answer("GPUs for a one-month run: 6,197", 2048 * A10_12_S / DAY / 30),
        _stated(
            "GPUs for a one-month run help: Training time and cost: the source states 6,000 (seed 002 A10-12). "
            + A10_12_NOTE
        ),
    ),
}


# ================================================================================ 8. Serving
KV_BYTES = {"bf16": 2, "fp8": 1}
W_BYTES = {"bf16": 2, "fp8": 1}
# DeepSeek-V3's config.json: 61 layers (3 dense, 58 MoE), hidden 7168, 128 heads, MLA ranks q 1536 / kv 512, RoPE
# dim 64, non-RoPE and value head dims 128, dense FFN 18432, 256 routed experts of 2048 (top 8) + 1 shared, V 129280
DS = {"L": 61, "dense": 3, "D": 7168, "heads": 128, "q_rank": 1536, "kv_rank": 512, "rope": 64, "nope": 128,
      "v": 128, "F": 18432, "E": 256, "k": 8, "shared": 1, "d_e": 2048, "V": 129280}  # fmt: skip


def _ds() -> dict[str, float]:
    """DeepSeek-V3's parameters from its config (MLA attention, DeepSeekMoE FFNs, untied embeddings)."""
    d = DS
    D, moe = d["D"], d["L"] - d["dense"]
    q = D * d["q_rank"] + d["q_rank"] * d["heads"] * (d["nope"] + d["rope"])
    kv = D * (d["kv_rank"] + d["rope"]) + d["kv_rank"] * d["heads"] * (d["nope"] + d["v"])
    attention = q + kv + d["heads"] * d["v"] * D
    norms = d["L"] * (2 * D + d["q_rank"] + d["kv_rank"]) + D
    expert = 3 * D * d["d_e"]
    router = D * d["E"] + d["E"]  # the gate and its balancing bias
    common = d["L"] * attention + norms + d["dense"] * 3 * D * d["F"] + moe * router + 2 * d["V"] * D
    routed = moe * d["E"] * expert
    return {"total": common + routed + moe * d["shared"] * expert, "routed": routed, "embedding": d["V"] * D,
            "attention": attention,
            "active": common + moe * (d["k"] + d["shared"]) * expert, "norms": norms}  # fmt: skip


def _model(name: str) -> dict[str, float]:
    """What a step needs of a model: total and active parameters, the input embedding (a lookup), the norm gains,
    the routed experts (MoE), KV values per token, attention FLOPs per cached token, and KV heads (1 for MLA)."""
    if name == "DeepSeek-V3":
        c = _ds()
        return {
            **c,
            "lookup": c["embedding"],
            "kv_values": DS["L"] * (DS["kv_rank"] + DS["rope"]),
            "kv_heads": 1,
            "layers": DS["L"],
            "attn": 2 * DS["L"] * DS["heads"] * (DS["nope"] + DS["rope"] + DS["v"]),
            "heads": DS["heads"],
        }
    L, D, N, K, *_ = SHAPES[name]
    p = _parts(name)
    # the input lookup multiplies nothing; a tied model's output head still multiplies its V x D matrix
    lookup = 0 if p["unembedding"] == 0 else p["embedding"]
    return {"total": p["total"], "active": p["total"], "routed": 0, "embedding": p["embedding"], "lookup": lookup,
            "norms": p["norms"], "kv_values": 2 * L * K * (D // N), "kv_heads": K, "layers": L,
            "attn": 2 * L * N * 2 * (D // N), "heads": N}  # fmt: skip


def _weights_read(m: dict, tokens: float, wb: float) -> float:
    """Weight bytes a step of ``tokens`` tokens reads: all of a dense model; of an MoE everything but the routed
    experts, plus the share of them some token picked, 1 - (1 - k/E)^T per MoE layer under uniform routing."""
    if not m["routed"]:
        return m["total"] * wb
    return (m["total"] - m["routed"] + m["routed"] * (1 - (1 - DS["k"] / DS["E"]) ** tokens)) * wb


def _step(name: str, gpu: str, tp: int, B: float, T: float, ctx: float, wb: float, kvb: float) -> dict[str, float]:
    """One forward step of B sequences adding T tokens each after ctx cached ones (the roofline, Williams et al.
    2009): FLOPs 2 per multiplied weight and token (the input embedding is a lookup) plus the attention over the
    mean key count ctx + T/2; bytes the weights read once plus the cache read and written; time the larger of bytes
    per GPU / bandwidth and FLOPs / (tp peak), where tensor parallelism splits the weights and FLOPs by tp but the
    cache only by KV heads (each GPU holds ceil(K / tp) of them; MLA's latent whole)."""
    m = _model(name)
    flops = B * T * (2 * (m["active"] - m["lookup"] - m["norms"]) + m["attn"] * (ctx + T / 2))
    weights = _weights_read(m, B * T, wb)
    kv = B * (ctx + T) * m["kv_values"] * kvb
    copies = tp * math.ceil(m["kv_heads"] / tp) / m["kv_heads"]
    memory_s, compute_s = (weights + kv * copies) / (tp * BANDWIDTH[gpu]), flops / (tp * PEAK)
    return {"flops": flops, "bytes": weights + kv, "weights": weights, "seconds": max(memory_s, compute_s),
            "memory_s": memory_s, "compute_s": compute_s}  # fmt: skip


def _expected(alpha: float, k: int) -> float:
    """Leviathan et al. 2023: tokens per target forward, the sum of alpha^i for i = 0..k."""
    return sum(alpha**i for i in range(k + 1))


def _speedup(v: dict, batch: float) -> float:
    """E t_plain / (k t_draft + t_verify) with roofline step times at the prompt's context."""
    name, gpu, tp, k = v["srv_model"], v["srv_gpu"], v["srv_gpus"], v["draft_k"]
    wb, kvb = W_BYTES[v["wfmt"]], KV_BYTES[v["kvfmt"]]
    plain = _step(name, gpu, tp, batch, 1, v["prompt"], wb, kvb)["seconds"]
    verify = _step(name, gpu, tp, batch, k + 1, v["prompt"], wb, kvb)["seconds"]
    draft = _step(v["draft"], gpu, tp, batch, 1, v["prompt"], wb, kvb)["seconds"]
    return _expected(v["accept"], k) * plain / (k * draft + verify)


def _lengths(ctx: int, used_pct: int, n: int = 256) -> np.ndarray:
    """The page's seeded length mix (its input): uniform in 0.5 to 1.5 times the mean used length, within 1..ctx."""
    u = np.random.default_rng(0).random(n)
    return np.clip(np.round(ctx * used_pct / 100 * (0.5 + u)), 1, ctx).astype(np.int64)


def _toy_distributions() -> tuple[np.ndarray, np.ndarray]:
    """The page's seeded toy target p and draft q over 8 tokens (its input): logits N(0, 1.5), the draft's with
    N(0, 1) noise added."""
    rng = np.random.default_rng(0)
    logits = rng.normal(0.0, 1.5, 8)
    p = np.exp(logits - logits.max())
    q = np.exp(logits + rng.normal(0.0, 1.0, 8) - logits.max())
    return p / p.sum(), q / q.sum()


GPU_SHEET = "the GPU's data sheet (NVIDIA: dense bf16 FLOP/s, HBM bandwidth)"


def _serving(v: dict) -> dict[str, list[Ref]]:
    """Every readout and figure text of the serving page that depends on the state, keyed by a short name."""
    name, gpu, tp, B, ctx = v["srv_model"], v["srv_gpu"], v["srv_gpus"], v["batch"], v["srv_ctx"]
    wb, kvb = W_BYTES[v["wfmt"]], KV_BYTES[v["kvfmt"]]
    m = _model(name)
    bw = BANDWIDTH[gpu]
    weights = m["total"] * wb
    one = _weights_read(m, 1, wb)  # bytes one token reads
    floor = one / (tp * bw)
    # the input-embedding table, counted in the floor although a lookup reads one row of it (the page's targets are
    # untied; a tied model's matrix is read whole as its output head)
    table = m["lookup"] * wb
    kv_tok = m["kv_values"] * kvb
    now = _step(name, gpu, tp, B, 1, ctx, wb, kvb)
    pre = _step(name, gpu, tp, 1, v["prompt"], 0, wb, kvb)
    copies = tp * math.ceil(m["kv_heads"] / tp) / m["kv_heads"]
    memory = tp * CARD_GIB[gpu] * GIB
    budget = v["kv_budget"] * GIB if v["kv_budget"] is not None else memory - weights - v["srv_reserve"] * GIB
    per_seq = ctx * kv_tok
    fit = math.floor(budget / (per_seq * copies))
    out = {
        "weights": [Ref("Weights: 15.0 GiB", weights / GIB)],
        "weights_help": [
            Ref("Weights help: 16.1 GB: every parameter resident (", weights / GB),
            Ref(", 16 bits per parameter)", 8 * wb),
        ],
        "kv": [Ref("KV cache per token: 128.0 KiB", kv_tok / KIB)],
        "kv_help": [Ref("KV cache per token help: 2 × layers × KV heads × head dim × bytes", FORMULA)],
        "ridge": [Ref("Ridge point: 295 FLOP/B", PEAK / bw)],
        "ridge_help": [Ref("peak / bandwidth = 9.89×10¹⁴ / 3.35×10¹² B/s", PEAK, bw)],
        "decode": [Ref("Decode, batch 1: 4.8 ms/token", GIVEN, 1e3 * floor)],
        "intensity": [Ref("Decode intensity, batch 16: 9.3 FLOP/B", GIVEN, now["flops"] / now["bytes"])],
        "prefill": [Ref("Prefill intensity, 512 tokens: 481 FLOP/B", GIVEN, pre["flops"] / pre["bytes"])],
        "fit": [Ref("Sequences of 8,192 tokens that fit: 65", GIVEN, fit)],
        "E": [Ref("Speculative: tokens per target forward: 3.36", _expected(v["accept"], v["draft_k"]))],
        "E_help": [
            Ref(
                "Speculative: tokens per target forward help: (1 − α^(k+1))/(1 − α) with α = 0.80, k = 4 "
                "(Leviathan et al. 2023)",
                FORMULA,
                FORMULA,
                FORMULA,
                GIVEN,
                GIVEN,
            )
        ],
    }
    if tp > 1:
        out["weights_help"] = [
            Ref(
                "Weights help: 141.1 GB: every parameter resident (",
                weights / GB,
            ),
            Ref(", 16 bits per parameter)", 8 * wb),
            Ref(
                ", in total over the 4 GPUs: 32.9 GiB each",
                GIVEN,
                weights / tp / GIB,
            ),
        ]
        out["decode_help"] = [
            Ref(
                "Decode, batch 1 help: a floor: all 141.1 GB of weights (the whole input-embedding table counted, of "
                "which a token reads one row) / (4 × 3.35 TB/s), at most 95 tokens/s; without the table 139.0 GB and "
                "10.4 ms; two all-reduces per layer and bandwidth below the data sheet's come on top",
                GIVEN,
                one / GB,
                GIVEN,
                bw / 1e12,
                1 / floor,
                (one - table) / GB,
                1e3 * (one - table) / (tp * bw),
            )
        ]
        out["decode_one"] = [
            Ref("Decode, batch 1, one GPU's bandwidth: 42.1 ms/token", COUNT, 1e3 * one / bw),
            Ref(
                "Decode, batch 1, one GPU's bandwidth help: all 141.1 GB of weights (the whole input-embedding table "
                "counted, of which a token reads one row) at one H100 SXM 80 GB's bandwidth (the reference of 002 "
                "A8.1/A10-11, whether or not they fit on one card); tensor parallelism over 4 GPUs reads 1/4 each: a "
                "floor of 10.5 ms",
                COUNT,
                one / GB,
                GPU_NAME,
                GIVEN,
                FORMULA,
                GIVEN,
                1e3 * floor,
            ),
        ]
    else:
        out["decode_help"] = [
            Ref(
                "Decode, batch 1 help: a floor: all 16.1 GB of weights (the whole input-embedding table counted, of "
                "which a token reads one row) / (1 × 3.35 TB/s), at most 209 tokens/s; without the table 15.0 GB and "
                "4.5 ms; bandwidth below the data sheet's comes on top",
                GIVEN,
                one / GB,
                GIVEN,
                bw / 1e12,
                1 / floor,
                (one - table) / GB,
                1e3 * (one - table) / (tp * bw),
            )
        ]
    emb_share = m["embedding"] * wb / now["bytes"]
    if m["kv_heads"] > 1:
        N, K = m["heads"], m["kv_heads"]
        out["intensity_help"] = [
            Ref(
                "Decode intensity, batch 16 help: at context 8,192: memory-bound. Each weight read does 2 FLOPs per "
                "sequence, so a dense model with 2-byte weights sits near 2B/2 = 16 at short context. This count "
                "charges the whole input-embedding table to every step (3.2% of the bytes here), which a lookup reads "
                "only B rows of.",
                GIVEN,
                GIVEN,
                FORMULA,
                wb,
                FORMULA,
                wb,
                2 * B / wb,
                100 * emb_share,
            ),
            Ref(
                "The KV cache adds each sequence's context in bytes and its attention in FLOPs: each cached value "
                "serves N/K = 32/8 = 4 query heads, 4 FLOP per cached byte with",
                N,
                K,
                N // K,
                m["attn"] / kv_tok,
            ),
            Ref("so a long context pulls the intensity toward 4: up where", m["attn"] / kv_tok),
        ]
    out["fit_help"] = [
        Ref(
            "Sequences of 8,192 tokens that fit help: KV budget 65.0 GiB / 1 GiB per sequence",
            GIVEN,
            budget / GIB,
            per_seq * copies / GIB,  # one sequence's cache with all its tensor-parallel copies
        )
    ]
    rest = f"{tp} × {CARD_GIB[gpu]} GiB − weights {weights / GIB:,.1f} GiB − reserve "
    out["fit_help"].append(Ref(rest + "0.0 GiB", GIVEN, CARD_GIB[gpu], weights / GIB,
                               (memory - weights - budget) / GIB))  # fmt: skip
    if tp > 1 and copies == 1:
        out["fit_help"].append(Ref("(tensor parallelism splits the cache by KV heads)", NAME))
    if name != "DeepSeek-V3":
        sp = _speedup(v, B)
        out["speedup"] = [Ref("Speculative speed-up, batch 16: ×2.05", GIVEN, sp)]
        out["speedup_help"] = [
            Ref(
                "Speculative speed-up, batch 16 help: draft custom, context 512,",
                GIVEN,
                GIVEN,
            ),
            Ref("weights; below ×1 it slows decoding down", FORMULA),
        ]
    lengths = _lengths(ctx, v["used"])
    used = lengths.sum()
    paged = sum(-(-int(n) // 16) * 16 for n in lengths)  # PagedAttention's blocks of 16 tokens (vLLM's default)
    out["roofline"] = [
        Ref(
            "reserved but unused: contiguous 74%, paged 0.3%",
            100 * (1 - used / (len(lengths) * ctx)),
            100 * (1 - used / paged),
        ),
        Ref(f"roofline of one {gpu}", NAME),
        Ref("ridge point: 295 FLOP/B", PEAK / bw),
        Ref("prefill of 512 tokens", GIVEN),
        Ref("decode, batch 16", GIVEN),
        Ref("context 8,192", GIVEN),
    ]
    # the roofline's readout panel at the page's batch (the drag's active step): the same step by hand; the bound is
    # the larger of the step's two times (a copied KV cache can leave a step memory-bound past the ridge)
    bound = "memory-bound" if now["memory_s"] >= now["compute_s"] else "compute-bound"
    if bound == "memory-bound" and now["flops"] / now["bytes"] >= PEAK / bw:
        bound += " (group intensity; each GPU reads a copied KV share)"
    out["decode_readout"] = [
        Ref(
            f"decode, batch 16, context 8,192 9.3 FLOP/B {bound} at most 31.1 TFLOP/s per GPU step: a floor of 9.92 "
            "ms at most 1,612 tokens/s",
            GIVEN,
            GIVEN,
            now["flops"] / now["bytes"],
            now["flops"] / (tp * now["seconds"]),  # FLOP/s: the check reads "TFLOP" as 10¹²
            1e3 * now["seconds"],
            B / now["seconds"],
        ),
        *([Ref("from the 4 GPUs together", GIVEN)] if tp > 1 else []),
    ]
    return out


def _sv(name: str | None) -> dict:
    return dict(SV.defaults()) if name is None else _preset(SV, name)


_SV_DEFAULTS = ("weights", "weights_help", "kv", "kv_help", "ridge", "ridge_help", "decode", "decode_help",
                "intensity", "intensity_help", "prefill", "fit", "fit_help", "E", "E_help", "speedup", "speedup_help",
                "roofline", "decode_readout")  # fmt: skip

SERVING: dict[str, list[Ref]] = {
    "defaults": _pick(_serving(_sv(None)), *_SV_DEFAULTS),
}

SAMPLED = ("a seeded sample of the acceptance rule (torch, on the app's device); its rate and fit to the target are "
           "test_content_serving.py::test_sampled_acceptance_rule_follows_the_target")  # fmt: skip
_P, _Q = _toy_distributions()

SERVING |= {
    "tab Speculative decoding": [
        Ref("For a dense model at small batch, a verify pass of k + 1 tokens reads the same weights", FORMULA),
        Ref("An MoE's k + 1 tokens can pick different experts", FORMULA),
        Ref("the MoE's speed-up too falls below 1 once decode turns compute-bound", FORMULA),
        Ref("accepted with probability min(1, p/q)", FORMULA),
        Ref("from the residual max(0, p − q)", FORMULA),
        Ref("up to (k + 1)× the routed-expert bytes", FORMULA),
        Ref("the same for 1 token as for k + 1", FORMULA),
        Ref(
            "SGLang's DeepSeek-V3 documentation reports 1.8× at batch 1 and 1.5× at batch 32 on 8 H200s with the MTP "
            "module as the draft (run as an EAGLE draft; the workload is not stated): larger at batch 1 than at 32",
            CITE,
        ),
        Ref(
            "speed-up for 8 H200s with the MTP draft at k = 1 and a = 0.85 (preset A2.8-MoE; SGLang states neither)",
            "the preset's GPUs",
            "the preset's draft length",
            "its acceptance (DeepSeek-AI 2024 §5.4.3: 85–90%)",
        ),
        Ref(
            "is higher at batch 32 (×1.36) than at batch 1 (×1.17), after a dip to ×1.06 at batch 4",
            GIVEN,
            MOE_TREND,
            GIVEN,
            MOE_TREND,
            MOE_TREND,
            GIVEN,
        ),
        Ref("Accepted drafts (sampled): 82.4%", SAMPLED),
        Ref(
            "Accepted drafts (sampled) help: 20,000 seeded speculative steps on a toy 8-token vocabulary (cpu); the "
            "rule accepts Σ min(p, q) = 82.5% of drafts",
            GIVEN,
            GIVEN,
            100 * float(np.minimum(_P, _Q).sum()),
        ),
        Ref("Sampled vs target: largest gap: 0.36 pts", SAMPLED),
        Ref(
            "Sampled vs target: largest gap help: sampled output vs the target p, token by token; χ² = 8.5 on 7 "
            "degrees of freedom (the draft alone is 14.0 pts off)",
            SAMPLED,
            _P.size - 1,
            100 * float(np.abs(_Q - _P).max()),
        ),
        Ref("below 1: slower than plain decoding", FORMULA),
        *[Ref(f"k = {k}", GIVEN) for k in (1, 2, 4, 8)],
        Ref("yours: α = 0.80, k = 4", GIVEN, GIVEN),
    ],
}


# fmt: off
def _sv_preset(key: str) -> dict:
    return _sv(next(name for name in SV.presets if name.startswith(key + ":")))


_SV_70B = ("weights", "weights_help", "kv", "decode", "decode_help", "decode_one", "intensity", "intensity_help",
           "prefill", "fit", "fit_help", "speedup", "decode_readout")
KV70_TOKEN = 2 * 80 * 8 * 128 * 2  # bytes: K and V, 80 layers, 8 KV heads of 128, bf16
W70_BYTES = 2 * L70["total"]
A10_08_NOTE = "Note: fp8 KV doubles the count (A10-08 follow-up)."
A10_11_NOTE = (
    "Note: the 42 ms is all 141 GB read at one H100's bandwidth (002 A8.1 calls it a reference point: the weights do "
    "not fit on one card); the serving preset spreads them over 4 GPUs, a quarter of it each."
)
_A10_11_AT0 = _step("Llama-3-70B", "H100", 1, 1, 1, 0, 2, 2)  # batch 1, one new token, no context
_A10_11_PRE = _step("Llama-3-70B", "H100", 1, 1, 2048, 0, 2, 2)

SERVING |= {
    "preset A10-07: KV cache bytes per token": [
        *_pick(_serving(_sv_preset("A10-07")), *_SV_70B),
        _answer("KV cache per token, grouped-query: 320 KiB", KV70_TOKEN / KIB),
        _stated("KV cache per token, grouped-query help: KV cache bytes per token: the source states 320 KiB (seed 002 "
                "A10-07, A8.3; DeepSeek-AI 2024)."),
        # 64 query heads as KV heads
        _answer("KV cache per token, full multi-head: 2,560 KiB", KV70_TOKEN * 64 / 8 / KIB),
        _stated("KV cache per token, full multi-head help: KV cache bytes per token: the source states 2,560 KiB "
                "(seed 002 A10-07, A8.3; DeepSeek-AI 2024)."),
        _answer("KV cache per token, multi-query: 40 KiB", KV70_TOKEN / 8 / KIB),  # one KV head
        _stated("KV cache per token, multi-query help: KV cache bytes per token: the source states 40 KiB (seed 002 "
            "A10-07, A8.3; DeepSeek-AI 2024)."),
        _answer("KV cache at 131,072 tokens, grouped-query: 40 GiB", KV70_TOKEN * 131072 / GIB),
        _stated("KV cache at 131,072 tokens, grouped-query help: KV cache bytes per token: the source states 40 GiB "
            "(seed 002 A10-07, "
                "A8.3; DeepSeek-AI 2024)."),
        _answer("KV cache at 131,072 tokens, full multi-head: 320 GiB", KV70_TOKEN * 64 / 8 * 131072 / GIB),
        _stated("KV cache at 131,072 tokens, full multi-head help: KV cache bytes per token: the source states 320 "
            "GiB (seed 002 A10-07, "
                "A8.3; DeepSeek-AI 2024)."),
        # one latent + RoPE key per layer
        _answer("KV cache per token, DeepSeek-V2's latent attention on 80 layers: 90 KiB", 80 * (512 + 64) * 2 / KIB),
        Ref("KV cache per token, DeepSeek-V2's latent attention on 80 layers help: KV cache bytes per token: the "
            "source states 90 KiB "
            "(seed 002 A10-07, A8.3; DeepSeek-AI 2024). An 80-layer model with DeepSeek-V2's MLA dimensions "
            "(512 + 64 values per layer); "
            "DeepSeek-V2 itself has 60 layers, 67.5 KiB.", READOUT_NAME, SOURCE, GIVEN,
            "DeepSeek-V2's kv_lora_rank (its config.json)", "DeepSeek-V2's qk_rope_head_dim (its config.json)",
            "DeepSeek-V2's layers (its config.json)", 60 * (512 + 64) * 2 / KIB),
        _answer("KV cache per token, DeepSeek-V3's latent attention: 68.62 KiB",
                DS["L"] * (DS["kv_rank"] + DS["rope"]) * 2 / KIB),
        _stated("KV cache per token, DeepSeek-V3's latent attention help: KV cache bytes per token: the source states "
            "68.6 KiB (seed 002 A10-07, A8.3; DeepSeek-AI 2024)."),
    ],
    "preset A10-08: How many sequences fit on one node?": [
        *_pick(_serving(_sv_preset("A10-08")), *_SV_70B),
        _answer("Weights in bf16: 131.4 GiB", W70_BYTES / GIB),
        _stated("Weights in bf16 help: How many sequences fit on one node?: the source states 131 GiB (seed 002 "
                "A10-08). " + A10_08_NOTE),
        _answer("Memory left after the weights: 188.6 GiB", (4 * 80 * GIB - W70_BYTES) / GIB),
        _stated("Memory left after the weights help: How many sequences fit on one node?: the source states 189 GiB "
                "(seed 002 A10-08). " + A10_08_NOTE),
        _answer("KV cache of one 8,192-token sequence: 2.5 GiB", 8192 * KV70_TOKEN / GIB),
        _stated("KV cache of one 8,192-token sequence help: How many sequences fit on one node?: the source states "
            "2.5 GiB (seed 002 A10-08). " + A10_08_NOTE),
        _answer("Sequences of 8,192 tokens that fit: 68", 170 * GIB // (8192 * KV70_TOKEN)),
        _stated("Sequences of 8,192 tokens that fit help: How many sequences fit on one node?: the source states 68 "
                "(seed 002 A10-08). " + A10_08_NOTE),
        _answer("Sequences that fit at 131,072 tokens each: 4", 170 * GIB // (131072 * KV70_TOKEN)),
        _stated("Sequences that fit at 131,072 tokens each help: How many sequences fit on one node?: the source "
            "states 4 (seed 002 "
                "A10-08). " + A10_08_NOTE),
        _answer("The same with the KV cache in fp8: 136", 170 * GIB // (8192 * KV70_TOKEN // 2)),
        _stated("The same with the KV cache in fp8 help: How many sequences fit on one node?: the source states 136 "
            "(seed 002 A10-08). " + A10_08_NOTE),
    ],
    "preset A10-11: Arithmetic intensity of prefill vs decode": [
        *_pick(_serving(_sv_preset("A10-11")), *_SV_70B, "speedup_help"),
        Ref("prefill of 2,048 tokens", GIVEN),
        Ref("decode, batch 1", GIVEN),
        _answer("H100's ridge point: FLOPs per byte: 295.2", PEAK / BANDWIDTH["H100"]),
        _stated("H100's ridge point: FLOPs per byte help: Arithmetic intensity of prefill vs decode: the source "
            "states 295 (seed 002 "
                "A10-11, A8.1). " + A10_11_NOTE),
        _answer("Decode at batch 1: FLOPs per byte: 0.9851", _A10_11_AT0["flops"] / _A10_11_AT0["bytes"]),
        Ref("Decode at batch 1: FLOPs per byte help: Arithmetic intensity of prefill vs decode: the source states 1 "
            "(seed 002 A10-11, A8.1). Core differs: 0.985 at context 0: core charges the whole input embedding (V × D "
            "= 1.05B weights, 1.5% of the bytes) to the step although a lookup reads one row of it, and writes the new "
            "token's K and V; without the table it is 1.0. The live readout \"Decode intensity, batch 1\" is at the "
            "page's context, which adds attention FLOPs and KV bytes. " + A10_11_NOTE,
            READOUT_NAME, SOURCE, _A10_11_AT0["flops"] / _A10_11_AT0["bytes"], GIVEN, L70["embedding"],
            100 * 2 * L70["embedding"] / _A10_11_AT0["bytes"],
            _A10_11_AT0["flops"] / (_A10_11_AT0["bytes"] - 2 * L70["embedding"]), LIVE, SOURCE, SOURCE, COUNT),
        _answer("Floor on decode time per token, batch 1 (weights read once): 42.1 ms",
                1e3 * W70_BYTES / BANDWIDTH["H100"]),
        _stated("Floor on decode time per token, batch 1 (weights read once) help: Arithmetic intensity of prefill vs "
            "decode: the source states "
            "42 ms (seed 002 A10-11, A8.1). " + A10_11_NOTE),
        _answer("Tokens per second at batch 1, at most: 23.74", BANDWIDTH["H100"] / W70_BYTES),
        _stated("Tokens per second at batch 1, at most help: Arithmetic intensity of prefill vs decode: the source "
            "states 24 (seed 002 A10-11, A8.1). " + A10_11_NOTE),
        _answer("Prefill of 2,048 tokens: FLOPs per byte: 2,047", _A10_11_PRE["flops"] / _A10_11_PRE["bytes"]),
        _stated("Prefill of 2,048 tokens: FLOPs per byte help: Arithmetic intensity of prefill vs decode: the source "
            "states 2,048 (seed 002 A10-11, A8.1). " + A10_11_NOTE),
    ],
}
# fmt: on


# fmt: off
_DSV = _sv_preset("A2.8-MoE")
_DSC = _ds()
_DS_ONE = _DSC["active"]  # bytes one token reads in fp8 (1 byte per weight): the active parameters
_DS_FLOOR = _DS_ONE / (8 * BANDWIDTH["H200"])
_DS_NOW = _step("DeepSeek-V3", "H200", 8, 16, 1, 8192, 1, 2)
_DS_LAT = DS["kv_rank"] + DS["rope"]  # cached values per layer and token: one latent and one RoPE key
_DS_ATTN = 2 * DS["heads"] * (DS["nope"] + DS["rope"] + DS["v"]) / (_DS_LAT * 2)  # FLOP per cached bf16 byte
_DS_ABSORBED = 2 * DS["heads"] * (_DS_LAT + DS["kv_rank"]) / (_DS_LAT * 2)  # latent-space attention (FlashMLA)
_DS_SEQ = 8192 * DS["L"] * _DS_LAT * 2  # one sequence's latent cache, bytes
# DeepSeek-V3's MTP module (DeepSeek-AI 2024 §2.2): two input norms, the 2D -> D projection, one MoE block (its
# attention, norms, all experts and router) and a final norm; it shares the embedding and output head
_DS_MTP = (2 * DS["D"] + 2 * DS["D"] * DS["D"] + _DSC["attention"] + 2 * DS["D"] + DS["q_rank"] + DS["kv_rank"]
           + (DS["E"] + DS["shared"]) * 3 * DS["D"] * DS["d_e"] + DS["D"] * DS["E"] + DS["E"] + DS["D"])
MOE_SPEEDUP = ("a roofline of DeepSeek-V3 and its MTP draft, written out in "
               "test_independent_systems.py::test_m1_moe_verify_pass_reads_more_experts_in_the_roofline_model")
_G = _serving(_DSV)
MOE_READ = ("the 37.6 GB one token reads (attention, the output head, the whole input-embedding table counted, of "
            "which a token reads one row, the 3 dense layers' MLPs, the shared expert, the routers and 8 of 256 routed "
            "experts per MoE layer: the active parameters, not all 671 GB)")
MOE_READ_VALUES = (_DS_ONE / GB, DS["dense"], DS["k"], DS["E"], _DSC["total"] / GB)
_DS_NO_TABLE = _DS_ONE - _DSC["embedding"]  # fp8 bytes without the input table, of which a token reads one row

SERVING |= {
    "preset A2.8-MoE: MoE: memory by total, FLOPs by active": [
        *_pick(_G, "weights", "weights_help", "kv", "ridge", "ridge_help", "decode", "intensity", "prefill", "fit",
               "fit_help", "E", "E_help", "decode_readout"),
        Ref("if the matmuls themselves run in fp8 the peak doubles and the ridge is 412", 2 * PEAK / BANDWIDTH["H200"]),
        Ref("Decode, batch 1 help: a floor: " + MOE_READ + " / (8 × 4.8 TB/s), at most 1,023 tokens/s", GIVEN,
            *MOE_READ_VALUES, GIVEN, BANDWIDTH["H200"] / 1e12, 1 / _DS_FLOOR),
        Ref("without the table 36.6 GB and 1.0 ms", _DS_NO_TABLE / GB, 1e3 * _DS_NO_TABLE / (8 * BANDWIDTH["H200"])),
        Ref("Decode, batch 1, one GPU's bandwidth: 7.8 ms/token", COUNT, 1e3 * _DS_ONE / BANDWIDTH["H200"]),
        Ref("Decode, batch 1, one GPU's bandwidth help: " + MOE_READ + " at one H200 SXM 141 GB's bandwidth (the "
            "reference of 002 A8.1/A10-11, whether or not they fit on one card); tensor parallelism over 8 GPUs reads "
            "1/8 each: a floor of 1.0 ms", COUNT, *MOE_READ_VALUES, GPU_NAME, GIVEN, FORMULA, GIVEN, 1e3 * _DS_FLOOR),
        Ref("Decode intensity, batch 16 help: at context 8,192: memory-bound. Each weight read does 2 FLOPs per "
            "sequence, so a dense model with 1-byte weights sits near 2B/1 = 32 at short context", GIVEN, GIVEN,
            FORMULA, 1, FORMULA, 1, 2 * 16 / 1),
        Ref("This count charges the whole input-embedding table to every step (0.3% of the bytes here)",
            100 * _DSC["embedding"] / _DS_NOW["bytes"]),
        Ref("2·128·(192 + 128) FLOPs per layer and cached token against its 576 cached values (rebuilding K and V from "
            "the latents not counted), 71.1 FLOP per cached byte with", FORMULA, DS["heads"], DS["nope"] + DS["rope"],
            DS["v"], _DS_LAT, _DS_ATTN),
        Ref("so a long context pulls the intensity toward 71.1: up where", _DS_ATTN),
        Ref("each cached latent (576 values) meets all 128 query heads in latent space, 2·128·(576 + 512) FLOPs per "
            "1,152 bytes ≈ 242 FLOP per cached byte with", _DS_LAT, DS["heads"], FORMULA, DS["heads"], _DS_LAT,
            DS["kv_rank"], _DS_LAT * 2, _DS_ABSORBED),
        Ref("values (≈ 2 h_q in", FORMULA),
        Ref("each GPU reads the whole latent for its 128/8 = 16 heads: ≈ 30 per byte it reads", DS["heads"], GIVEN,
            DS["heads"] / 8, _DS_ABSORBED / 8),
        Ref("This intensity counts the cache once for the group of 8 GPUs", GIVEN),
        Ref("(0.536 GiB held 8 times", _DS_SEQ / GIB, GIVEN),
        Ref("Speculative speed-up, batch 16: ×1.17", GIVEN, MOE_SPEEDUP),
        Ref("Speculative speed-up, batch 16 help: draft DeepSeek-V3 MTP, context 512, fp8 weights; below ×1 it slows "
            "decoding down. This is the page's roofline model's number (no fixed per-step costs). An MoE's verify "
            "pass checks 32 tokens",
            MOE_SPEEDUP),
        Ref("which pick more experts than the 16 tokens of a plain step: 434.3 GB of weights against 277.6 GB (×1.56), "
            "so in this model it costs more than one decode step", MOE_SPEEDUP),
        Ref("the same for 1 token as for k + 1", FORMULA),
        Ref("SGLang's DeepSeek-V3 documentation reports a larger gain at batch 1 than at 32 with this draft on 8 "
            "H200s at TP 8: 1.8× at batch 1 and 1.5× at batch 32 (MTP run as an EAGLE draft; workload not stated)",
            CITE),
        Ref("At batch 256, where a plain step already reads 99.97% of the "
            "routed experts, verifying costs ×1.00 a plain step and the speed-up is ×1.81, against E/(1 + k c) = "
            "1.85/(1 + 1 × 0.020) = 1.81 (c: a draft step's time over a plain step's)", MOE_SPEEDUP),
        Ref("DeepSeek-AI 2024 §5.4.3 report 1.8× the tokens per second with this draft at k = 1 (acceptance 85–90%)",
            CITE),
        Ref("MoE: total / active parameters: 671B / 37.6B", _DSC["total"], _DSC["active"]),
        Ref("roofline of one H200", NAME),
        Ref("ridge point: 206 FLOP/B", PEAK / BANDWIDTH["H200"]),
        _answer("Parameters in total: memory goes by these: 671.0B", _DSC["total"]),
        Ref("Parameters in total: memory goes by these help: MoE: memory by total, FLOPs by active: the source states "
            "671B (seed 002 A2.8; "
            "DeepSeek-AI 2024).", SOURCE),
        Ref("Note: main model without the MTP module, which is 11.6B of its own weights from the config (DeepSeek's "
            "README_WEIGHTS lists 11.5B) and 13.5B with its copies of the embedding and output head (2 × 0.93B), about "
            "the model card's 14B (671B + 14B = the 685B checkpoint).", _DS_MTP, CITE, _DS_MTP + 2 * _DSC["embedding"],
            FORMULA, _DSC["embedding"], CITE, CITE, CITE, CITE),
        _answer("Parameters active per token: compute goes by these: 37.55B", _DSC["active"]),
        Ref("Parameters active per token: compute goes by these help: MoE: memory by total, FLOPs by active: the "
            "source states 37B (seed 002 A2.8; "
            "DeepSeek-AI 2024). Core differs: 37.55B from the config: attention, the 3 dense MLPs, the shared + 8 "
            "routed experts, the routers, the embedding and the output head; 36.63B without the input embedding "
            "(0.93B, of which a token reads one row). The report says 37B. DeepSeek's README_WEIGHTS gives 36.7B "
            "'including 0.9B for Embedding and 0.9B for the output Head', which the config does not reproduce: with "
            "both it counts 37.55B (0.85B more), with the head alone 36.63B (0.07B less).", SOURCE,
            _DSC["active"], DS["dense"], DS["k"], _DSC["active"] - _DSC["embedding"], _DSC["embedding"], CITE, CITE,
            CITE, CITE, _DSC["active"], _DSC["active"] - 36.7e9, _DSC["active"] - _DSC["embedding"],
            36.7e9 - (_DSC["active"] - _DSC["embedding"])),
    ],
}
# fmt: on

TABLES: dict[str, dict[str, list[Ref]]] = {
    "pages/7_Training_memory.py": TRAINING_MEMORY,
    "pages/8_Serving.py": SERVING,
}
