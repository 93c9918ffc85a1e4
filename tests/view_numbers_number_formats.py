"""The tables of tests/test_view_numbers.py for the number-formats page: per view (tests/page_numbers.py ``views``), a
list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts and figure texts show.

The references are written here, never from core/number_formats.py:
- what each format stores: torch's own casts from float64 (``Tensor.to``, CPU), and torch.finfo for the limits;
- the loss-scaling shares: the same seeded magnitudes redrawn with numpy's generator, cast to fp16 by torch and
  classed by torch.finfo's limits; the dynamic scaler: GradScaler's rule written out, an overflow wherever S·max|g|
  reaches 65,520 (halfway from fp16's largest 65,504 to 2^16, where round to nearest goes to inf);
- softmax: torch's fp16 exp with the sum and the division rounded once, as the page describes; log-sum-exp by
  math.fsum in float64;
- running sums: torch's bf16, fp16 and fp32 additions, one at a time;
- the tiny GPT's magnitudes: the shipped file core/data/number_formats.npz read with np.load (not core), its
  thresholds found by value (2^-14, 2^-24, 2^-126); tests/test_views_number_formats.py reruns its command at a small
  scale and checks what the file holds.
"""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import torch

from tests.page_numbers import Ref
from tests.test_page_numbers import FORMULA, GIVEN, _preset
from views import number_formats as v_nf

NF = v_nf.SPEC
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "fp8 E4M3": torch.float8_e4m3fn,
          "fp8 E5M2": torch.float8_e5m2}  # fmt: skip
F16 = torch.finfo(torch.float16)
BF = torch.finfo(torch.bfloat16)
LIMIT = "a format's limit (torch.finfo), as the page's core tests check"
SEEDED = "the toy's stated settings (views/number_formats.py GRADIENTS, STEPS; GradScaler's defaults)"
COUNT = "a count of the toy: its steps or additions"


def cast(x: float, name: str) -> float:
    return float(torch.tensor(x, dtype=torch.float64).to(DTYPES[name]).to(torch.float64))


def _stored(x: float, name: str) -> tuple[str, list[float | str]]:
    """The panel's words for a cast, and the references of their numbers."""
    r = cast(x, name)
    if math.isinf(r):
        return "∞ (overflow), —", []
    if r == 0:
        return "0 (underflow: rounds to 0), error 100%", [
            "an underflow: 0",
            "what it rounds to: 0",
            "the whole of x lost: 100%",
        ]
    err = abs(r - x) / x
    sat = " (saturated)" if name == "fp8 E4M3" and x > 448 else ""
    tail = "exact" if err == 0 else f"error {100 * err:.3g}%"
    return f"{r:.6g}{sat}, {tail}", [r] + ([] if err == 0 else [100 * err])


def number_line(p: dict) -> list[Ref]:
    x = float(p["fmt_x"])
    f16, e4, e5 = (_stored(x, n) for n in ("fp16", "fp8 E4M3", "fp8 E5M2"))
    bf = cast(x, "bf16")
    refs = [
        Ref(f"bf16 relative error at x: {100 * abs(bf - x) / x:.3g}%", 100 * abs(bf - x) / x),
        Ref(f"fp16 stores: {f16[0].split(',')[0]}", *f16[1][:1]),
        Ref(f"fp8 E4M3 stores: {e4[0].split(',')[0]}", *e4[1][:1]),
        Ref(f"fp8 E5M2 stores: {e5[0].split(',')[0]}", *e5[1][:1]),
    ]
    words, values = [f"x = {p['fmt_x']}"], [x]
    for name in DTYPES:
        w, v = _stored(x, name)
        words.append(f"{name}: {w}")
        values += v
    return [*refs, Ref(" ".join(words), *values)]


FMT_DATA = Path(__file__).resolve().parents[1] / "core" / "data" / "number_formats.npz"
SHIPPED = "the shipped file core/data/number_formats.npz (np.load)"
TWO = "the base 2 of fp16's or bf16's limit written beside it (2⁻¹⁴ = torch.finfo(torch.float16).tiny)"
TINY = "the bound the view prints for a share below 10⁻⁵ (a few values of millions)"


@functools.cache
def _fmt_data() -> dict[str, np.ndarray]:
    with np.load(FMT_DATA, allow_pickle=False) as z:
        return {k: np.asarray(z[k]) for k in z.files}


def _below(key: str, e: int) -> float:
    d = _fmt_data()
    return float(d[f"{key}/below"][list(d["thresholds"]).index(2.0**e)])


def _median(key: str) -> float:
    d = _fmt_data()
    return float(d[f"{key}/pct"][list(d["percentiles"]).index(50.0)])


def _pc(share: float) -> tuple[str, float | str]:
    """A share as the page prints it (a passage naming fp16 is matched word for word) and its reference: 3
    significant digits, a 4th where 3 would print a share below 1 as 100%."""
    if 0 < share < 1e-5:
        return "< 0.001%", TINY
    text = f"{100 * share:.3g}"
    return (f"{100 * share:.4g}" if text == "100" and share < 1 else text) + "%", 100 * share


def _mag(x: float) -> str:
    """A magnitude as the page prints it: 3 significant digits, as m.mm×10⁻ᵉ below 0.001."""
    if x >= 1e-3:
        return f"{x:.3g}"
    e = math.floor(math.log10(x))
    return f"{x / 10**e:.2f}×10" + str(e).translate(str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹"))


def magnitudes() -> list[Ref]:
    """The tiny GPT's activations, weight gradients and Adam's v against fp16's and bf16's limits (Number line)."""
    d = _fmt_data()
    a14, a24 = _pc(_below("act", -14)), _pc(_below("act", -24))
    g14, g24, g0 = _pc(_below("grad", -14)), _pc(_below("grad", -24)), _pc(float(d["grad/fp16_zero"]))
    v14, v24, v0 = _pc(_below("v", -14)), _pc(_below("v", -24)), _pc(float(d["v/fp16_zero"]))
    bf = _pc(max(_below(k, -126) for k in ("act", "grad", "v")))
    g2 = _median("grad") ** 2
    return [
        Ref(f"Tiny GPT: activations below fp16's smallest normal 2⁻¹⁴: {a14[0]}", TWO, a14[1]),
        Ref(f"Tiny GPT: activations below fp16's smallest normal 2⁻¹⁴ help: share of the nonzero inputs of the "
            f"tiny GPT's linear layers; below 2⁻²⁴: {a24[0]}; median {_mag(_median('act'))}",
            TWO, TWO, a24[1], _median("act")),
        Ref(f"Tiny GPT: weight gradients below fp16's smallest normal 2⁻¹⁴: {g14[0]}", TWO, g14[1]),
        Ref(f"Tiny GPT: weight gradients below fp16's smallest normal 2⁻¹⁴ help: below its smallest subnormal "
            f"2⁻²⁴: {g24[0]}; a cast to fp16 rounds {g0[0]} to 0; median {_mag(_median('grad'))}",
            TWO, TWO, g24[1], g0[1], "0, what an underflowing cast stores", _median("grad")),
        Ref(f"Tiny GPT: Adam's v below fp16's smallest subnormal 2⁻²⁴: {v24[0]}", TWO, v24[1]),
        Ref(f"Tiny GPT: Adam's v below fp16's smallest subnormal 2⁻²⁴ help: below its smallest normal 2⁻¹⁴: "
            f"{v14[0]}; a cast to fp16 rounds {v0[0]} to 0; median {_mag(_median('v'))}; the gradients' median "
            f"squared: {_mag(g2)}", TWO, TWO, v14[1], v0[1], "0, what an underflowing cast stores", _median("v"), g2),
        Ref(f"Tiny GPT: any of the three below bf16's smallest normal 2⁻¹²⁶: {bf[0]}", TWO, bf[1]),
        Ref("Tiny GPT: any of the three below bf16's smallest normal 2⁻¹²⁶ help: the largest of the three shares; bf16 "
            "keeps fp32's 8 exponent bits", TWO, "bf16's bit layout (8 exponent bits, as fp32's)"),
        Ref("this project's tiny GPT: 1st to 99th percentile",
            "the percentiles the bands span (core/number_formats_data.py PERCENTILES)", "ibid."),
    ]  # fmt: skip


# where a cast gives ∞: halfway from the largest finite value to 2^16 (round to nearest, the tie to the even 2^16)
F16_INF_FROM = (float(F16.max) + 2.0**16) / 2
E5_INF_FROM = (float(torch.finfo(torch.float8_e5m2).max) + 2.0**16) / 2
HELPS = [
    Ref(
        "so in the normal range the relative error is at most 2⁻⁸ ≈ 0.39%",
        "bf16's unit roundoff 2⁻⁸ (eps / 2 of torch.finfo(torch.bfloat16))",
        100 * float(BF.eps) / 2,
    ),
    Ref(
        "fp16 stores help: 5 exponent bits: ∞ from 65,520 (what rounds above the largest, 65,504), normal down to 2⁻¹⁴",
        "fp16's layout (IEEE 754)",
        F16_INF_FROM,
        float(F16.max),
        LIMIT,
    ),
    Ref(
        "torch 2.13's CPU cast saturates at 448, ±∞ included",
        "the torch this project runs (torch.__version__)",
        float(cast(float("inf"), "fp8 E4M3")),
    ),
    Ref(
        "largest 57,344; torch's cast (IEEE-style, the OCP non-saturating mode) gives ∞ from 61,440",
        float(torch.finfo(torch.float8_e5m2).max),
        E5_INF_FROM,
    ),
    Ref("saturating conversions give 57,344", float(torch.finfo(torch.float8_e5m2).max)),
]


@functools.cache
def _gradients(seed: int) -> np.ndarray:
    # log10 |g| ~ Normal(log10 1e-6, 1.5 decades), as the caption says
    return 10.0 ** np.random.default_rng(seed).normal(-6.0, 1.5, size=v_nf.GRADIENTS)


def _fate(g: np.ndarray, S: float, dtype: torch.dtype) -> tuple[float, float, float, float]:
    r = torch.tensor(S * g, dtype=torch.float64).to(dtype).to(torch.float64).abs().numpy()
    fi = torch.finfo(dtype)
    over = np.isinf(r)
    zero = r == 0
    sub = ~zero & ~over & (r < fi.smallest_normal)
    return tuple(float(m.mean()) for m in (zero, sub, ~zero & ~over & ~sub, over))  # type: ignore[return-value]


def _scaler(interval: int, seed: int) -> tuple[int, float]:
    """GradScaler's rule written out over the seeded per-step maxima: (skipped steps, the final scale)."""
    rng = np.random.default_rng(seed)
    g = 10.0 ** rng.normal(-3.0, 0.3, size=v_nf.STEPS)  # around 1e-3, 0.3 decades
    g = np.where(rng.random(v_nf.STEPS) < 0.0005, g * 1e4, g)  # rare spikes of 10⁴
    scale, good, skipped = 2.0**16, 0, 0
    for gi in g:
        if scale * gi >= 65520.0:
            skipped, scale, good = skipped + 1, scale / 2, 0
        else:
            good += 1
            if good == interval:
                scale, good = scale * 2, 0
    return skipped, scale


def loss_scaling(p: dict) -> list[Ref]:
    k, seed, interval = p["fmt_scale_log2"], p["fmt_seed"], p["fmt_interval"]
    g = _gradients(seed)
    zero, sub, normal, over = _fate(g, 2.0**k, torch.float16)
    bf_zero = _fate(g, 1.0, torch.bfloat16)[0]
    skipped, scale = _scaler(interval, seed)
    return [
        Ref("gradient magnitudes log-normal around 1e-6", SEEDED),
        Ref(f"fp16: rounded to zero: {100 * zero:.1f}%", 100 * zero),
        Ref(f"of the toy's gradients at S = 2^{k}", FORMULA, GIVEN),
        Ref(f"fp16: subnormal: {100 * sub:.1f}%", 100 * sub),
        Ref(f"fp16: normal: {100 * normal:.1f}%", 100 * normal),
        Ref(f"fp16: overflow to ∞: {100 * over:.1f}%", 100 * over),
        Ref(f"bf16: rounded to zero at S = 1: {100 * bf_zero:.1f}%", GIVEN, 100 * bf_zero),
        Ref("bf16: rounded to zero at S = 1 help", GIVEN),
        Ref(f"Dynamic scaler: steps skipped: {skipped:,} of {v_nf.STEPS:,}", skipped, SEEDED),
        Ref(f"from S = 2^16, doubled after {interval:,} good steps", FORMULA, "GradScaler's init_scale 2^16", GIVEN),
        Ref(f"Dynamic scaler: S at the end: 2^{math.log2(scale):g}", FORMULA, math.log2(scale)),
    ]


def _softmax_fp16(z: np.ndarray, subtract: bool) -> np.ndarray:
    t = torch.tensor(z, dtype=torch.float64).to(torch.float16)
    if subtract:
        t = (t.double() - t.double().max()).to(torch.float16)
    e = torch.exp(t.double()).to(torch.float16).double()
    s = e.sum().to(torch.float16).double()
    return (e / s).to(torch.float16).double().numpy()


def softmax(p: dict) -> list[Ref]:
    z = p["fmt_logit_top"] - np.array(v_nf.LOGITS)
    naive, stable = _softmax_fp16(z, False), _softmax_fp16(z, True)
    m = float(z.max())
    lse = m + math.log(math.fsum(math.exp(v - m) for v in z))
    top = "NaN (∞/∞)" if np.isnan(naive[0]) else f"{naive[0]:.4f}"
    row = math.fsum(math.exp(-k) for k in range(4))  # e⁰ + e⁻¹ + e⁻² + e⁻³
    f32_inf = float(torch.finfo(torch.float32).max) + 2.0 ** (127 - 23) / 2  # half fp32's top spacing above its max
    # the state the help names, from torch's own exps: NaN where an exp is inf, all 0 where only the sum is
    e = torch.exp(torch.tensor(z, dtype=torch.float64).to(torch.float16).double()).to(torch.float16).double()
    if bool(torch.isinf(e).any()):
        state = "fp16 naive: top probability help: exp overflowed: exp(x) of the top logit is ∞, and ∞/∞ is NaN"
    elif math.isinf(float(e.sum().to(torch.float16))):
        state = (
            "fp16 naive: top probability help: the sum overflowed: Σ exp(x) rounds to ∞ though no exp does, so every "
            "share is 0"
        )
    else:
        state = "fp16 naive: top probability help: no overflow: every exp and their sum stay finite in fp16"
    return [
        Ref("Logits x, x − 1, x − 2 and x − 3", "the row's offsets (views/number_formats.py LOGITS)"),
        Ref(f"fp16 naive: top probability: {top}", *([] if top.startswith("NaN") else [float(naive[0])])),
        Ref(state, *(["0: a finite exp over an ∞ sum"] if "sum overflowed" in state else [])),
        Ref(
            f"Σ exp(x) overflows fp16 for a top logit above: {math.log(F16_INF_FROM / row):.2f}",
            math.log(F16_INF_FROM / row),
        ),
        Ref(
            f"ln(65,520 / {row:.3f}): {row:.3f} = e⁰ + e⁻¹ + e⁻² + e⁻³, this row's sum over e^top",
            F16_INF_FROM,
            row,
            row,
        ),
        Ref(f"exp overflows fp16 above: {math.log(F16_INF_FROM):.2f}", math.log(F16_INF_FROM)),
        Ref("ln 65,520, where exp rounds above the largest, 65,504", F16_INF_FROM, float(F16.max)),
        Ref(f"fp32: above {math.log(f32_inf):.2f}", math.log(f32_inf)),
        Ref(f"fp16 with the max subtracted: {stable[0]:.4f}", float(stable[0])),
        Ref("every exp at most e⁰ = 1", FORMULA),
        Ref(f"log-sum-exp: {lse:.4f}", lse),
    ]


def _sum(inc: float, dtype: torch.dtype) -> tuple[float, int | None]:
    """The sum after the additions, and how many additions counted before it stopped (None: it never stopped)."""
    s = torch.tensor(0.0, dtype=dtype)
    step = torch.tensor(inc, dtype=dtype)
    for i in range(v_nf.ADDITIONS):
        nxt = s + step
        if bool(nxt == s):
            return float(s), i
        s = nxt
    return float(s), None


def running_sum(p: dict) -> list[Ref]:
    inc = float(p["fmt_increment"])
    bf, bf_n = _sum(inc, torch.bfloat16)
    f16, _ = _sum(inc, torch.float16)
    f32, _ = _sum(inc, torch.float32)
    n = f"{v_nf.ADDITIONS:,}"
    return [
        Ref("from 0.", "the sum's start"),
        Ref(f"bf16 sum after {n}: {bf:g}", COUNT, bf),
        Ref(f"bf16 sum after {n} help: reached in {bf_n:,} additions", COUNT, bf_n),
        Ref(f"fp16 sum after {n}: {f16:g}", COUNT, f16),
        Ref(f"fp32 sum after {n}: {f32:g}", COUNT, f32),
        Ref(f"fp32 sum after {n} help: exact: {v_nf.ADDITIONS * inc:g}", COUNT, v_nf.ADDITIONS * inc),
        Ref(
            "bf16 weight 1 plus an update of 0.001: "
            + ("lost" if bool(torch.tensor(1.0, dtype=torch.bfloat16) + 1e-3 == 1) else "kept"),
            GIVEN,
        ),
        Ref(
            "bf16 weight 1 plus an update of 0.001 help: the gap above 1 is 2⁻⁷; 0.001 is below half of it, 2⁻⁸, so "
            "the sum rounds back to 1",
            GIVEN,
            GIVEN,
            GIVEN,
            "2⁻⁷: bf16's eps, the gap above 1 (torch.finfo(torch.bfloat16).eps)",
            GIVEN,
            "half of bf16's eps 2⁻⁷ (torch.finfo)",
            GIVEN,
        ),
    ]


P0 = NF.defaults()


def _p(name: str) -> dict:
    return _preset(NF, name)


_LINE0 = number_line(P0) + HELPS + magnitudes()
_SMALL = "A5.3.1: a small gradient, 1e-7, in fp16 and bf16"
_BIG = "Derived (A1.10's overflow): 100,000 in each format (torch's casts: fp16 and E5M2 → ∞, E4M3 → 448)"
_SCALE = "A5.3: fp16 gradients under a loss scale S = 1,024"
_SOFT = "A1.10: softmax without the max, a logit of 12 in fp16"
_SOFT_SUM = "A1.10: softmax without the max, a logit of 11 in fp16: the sum overflows first"
_ONES = "A1.7.2 / A5.3: a bf16 sum of ones stalls at 256 (why accumulators and master weights stay fp32)"


def _new(refs: list[Ref], shown: list[Ref]) -> list[Ref]:
    return [r for r in refs if r.snippet not in {t.snippet for t in shown}]


NUMBER_FORMATS: dict[str, list[Ref]] = {
    "defaults": _LINE0,
    "tab Loss scaling": loss_scaling(P0),
    "tab Softmax": softmax(P0),
    "tab Running sum": running_sum(P0),
    f"preset {_SMALL}": _new(number_line(_p(_SMALL)), _LINE0),
    f"preset {_BIG}": _new(number_line(_p(_BIG)), _LINE0),
    f"preset {_SCALE}": loss_scaling(_p(_SCALE)),
    f"preset {_SOFT}": softmax(_p(_SOFT)),
    f"preset {_SOFT_SUM}": softmax(_p(_SOFT_SUM)),
    f"preset {_ONES}": running_sum(_p(_ONES)),
}

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/20_Number_formats.py": NUMBER_FORMATS}
