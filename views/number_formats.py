"""The number-formats page's state and what it shows: fp32, bf16, fp16 and the two fp8 formats on one log number line
(their spacing against x, where each overflows and underflows) with a value x dragged along a log grid and what each
format stores for it, and bands where the tiny GPT's activations, weight gradients and Adam's v sit (read from
core/data/number_formats.npz, shipped by ``make fmt-data``) (main); fp16 gradients under a loss scale and a dynamic
scaler's run; softmax with and without the max subtracted; a running sum that stalls in bf16 (one tab each, built only
when open)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import number_formats as nf
from core import number_formats_data as nfd
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz import format as fmt
from viz.number_formats import loss_scale_figure, running_sum_figure, softmax_figure, spacing_figure
from viz.predict import predict_figure

QUESTION = "Why did bf16 replace fp16 for training, and why does fp16 need loss scaling?"
ANSWER_PHRASES = (
    "same exponent range as fp32",
    "small gradients underflow",
    "half a unit in the last place",
)

QUICK_CHECK = QuickCheck(
    question=(
        "In bf16 (round to nearest), what is the spacing of the values just above 1, and does 1 + 0.003 survive?"
    ),
    options=(
        "2⁻⁷ = 0.0078125; no: it rounds back to 1",
        "2⁻⁸ ≈ 0.0039; yes: 0.003 is more than half of it",
        "2⁻¹⁰ ≈ 0.00098; yes: it survives",
    ),
    right=0,
    answer=(
        "The spacing is 2⁻⁷ = **0.0078125** (7 mantissa bits). 0.003 is less than half of it, 0.0039, so 1 + 0.003 "
        "rounds back to **1**: the update is lost (the Running sum tab shows the same with a sum). Seed 002 (A5.3) "
        "puts the limit at 0.4% of w: that is the worst case, at a power of two. The condition is an update below "
        "half the spacing, between 2⁻⁹ and 2⁻⁸ of w depending on where w sits between two powers of two. Just "
        "below one, at "
        "w = 0.99609375 (bf16's largest value below 1), an update of 0.2% of w (0.00199) already survives: it "
        "rounds to 1."
    ),
)

VIEWS = ("Number line", "Loss scaling", "Softmax", "Running sum")
LINE, LOSS, SOFTMAX, SUM = VIEWS
# x along a log grid: 1, 2, 5 per decade from 1e-8 to 1e5 (the drag's steps)
XS = (*(m * 10.0**e for e in range(-8, 5) for m in (1, 2, 5)), 1e5)
X_CHOICES = tuple(f"{x:g}" for x in XS)
X_RANGE = (1e-15, 1e6)  # the number line's x axis (down to Adam's v in the tiny GPT)
# the tiny GPT's magnitudes (core/number_formats_data.py, shipped): the file's key and the band's label
BANDS = (("act", "activations"), ("grad", "weight gradients"), ("v", "Adam's v"))
BAND_SOURCE = "this project's tiny GPT"
P1, P50, P99 = (nfd.PERCENTILES.index(p) for p in (1.0, 50.0, 99.0))
BF16_NORMAL, FP16_SUB, FP16_NORMAL = (nfd.THRESHOLDS.index(2.0**e) for e in (-126, -24, -14))
INCREMENTS = ("0.5", "1", "3", "0.001")
ADDITIONS = 3000  # the running sum's additions
GRADIENTS = 20_000  # seeded gradient magnitudes in the loss-scaling histogram
STEPS = 20_000  # the dynamic scaler's steps
LOGITS = (0.0, 1.0, 2.0, 3.0)  # the softmax row: the top logit minus these
# the Number line's per-format readouts: what predict-first holds back (the other tabs' readouts stay)
LINE_FORMAT_READOUTS = ("bf16 relative error at x", "fp16 stores", "fp8 E4M3 stores", "fp8 E5M2 stores")

SPEC = Spec(
    "Number_formats",
    (
        Field("fmt_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field(
            "fmt_x",
            "Value x",
            "choice",
            "0.1",
            choices=X_CHOICES,
            widget="select_slider",
            help="the value cast to each format (1, 2 and 5 per decade). The row under the figure drags it in the "
            "browser.",
        ),
        Field(
            "fmt_scale_log2",
            "Loss scale S = 2^k: k",
            "int",
            0,
            lo=0,
            hi=24,
            step=1,
            help="the gradients are multiplied by S before the cast to fp16 (k = 0: no scaling)",
        ),
        Field(
            "fmt_interval",
            "Scaler growth interval",
            "int",
            2000,
            lo=100,
            hi=5000,
            step=100,
            help="steps without an overflow before the dynamic scaler doubles S (torch's GradScaler: 2000)",
        ),
        Field("fmt_seed", "Seed of the toy gradients", "int", 0, lo=0, hi=9999, step=1),
        Field("fmt_logit_top", "Largest logit", "float", 8.0, lo=0.0, hi=30.0, step=0.5, fmt="%.1f"),
        Field(
            "fmt_increment",
            "Increment added",
            "choice",
            "0.5",
            choices=INCREMENTS,
            widget="segmented",
            help="the same value added again and again, the sum rounded to the format after every addition",
        ),
        ask.switch("predict_fmt"),
        ask.guess("guess_fmt_err", "Your guess: bf16's relative error at x, in %", "float", 0.0, 100.0),
    ),
    presets={
        "A5.3.1: a small gradient, 1e-7, in fp16 and bf16": {"fmt_x": "1e-07", "fmt_view": LINE},
        "Derived (A1.10's overflow): 100,000 in each format (torch's casts: fp16 and E5M2 → ∞, E4M3 → 448)": {
            "fmt_x": "100000",
            "fmt_view": LINE,
        },
        "A5.3: fp16 gradients under a loss scale S = 1,024": {"fmt_scale_log2": 10, "fmt_view": LOSS},
        "A1.10: softmax without the max, a logit of 11 in fp16: the sum overflows first": {
            "fmt_logit_top": 11.0,
            "fmt_view": SOFTMAX,
        },
        "A1.10: softmax without the max, a logit of 12 in fp16": {"fmt_logit_top": 12.0, "fmt_view": SOFTMAX},
        "A1.7.2 / A5.3: a bf16 sum of ones stalls at 256 (why accumulators and master weights stay fp32)": {
            "fmt_increment": "1",
            "fmt_view": SUM,
        },
    },
)


def _inf_from(fmt: nf.FloatFormat) -> float:
    """Where a cast to ``fmt`` gives ∞: half a spacing above its largest finite value (round to nearest, the tie to
    the even 2^(emax+1))."""
    return fmt.largest + float(nf.ulp(fmt.largest, fmt)) / 2


_INF_FROM = (_inf_from(nf.FP16), _inf_from(nf.FP32))  # 65,520 and 2^128 (1 − 2⁻²⁵)


def _value_text(x: float, r: float, fmt: nf.FloatFormat) -> str:
    """What a cast of x to ``fmt`` stores, as text: the value, or what happened to it."""
    if np.isnan(r):
        return "NaN"
    if np.isinf(r):
        return "∞ (overflow)"
    if r == 0 and x != 0:
        return "0 (underflow: rounds to 0)"
    if fmt.overflow == "saturate" and abs(x) > fmt.largest and abs(r) == fmt.largest:
        return f"{r:g} (saturated)"
    return f"{r:.6g}"


def _error_text(x: float, r: float) -> str:
    if not np.isfinite(r) or x == 0:
        return "—"
    err = abs(r - x) / abs(x)
    return "exact" if err == 0 else f"error {100 * err:.3g}%"


@functools.lru_cache(maxsize=1)
def _grid() -> tuple[np.ndarray, np.ndarray]:
    """(rounded, spacing): each format's cast of every x of the grid and its spacing there, (formats, xs)."""
    xs = np.array(XS)
    rounded = np.array([nf.round_to_format(xs, f) for f in nf.FORMATS])
    spacing = np.array([np.where((xs >= f.smallest_subnormal / 2) & (xs <= f.largest), nf.ulp(xs, f), np.nan)
                        for f in nf.FORMATS])  # fmt: skip
    return rounded, spacing


def _share(s: float) -> str:
    """A share as a percentage to 3 significant digits, more where those would round a share below 1 up to 100%;
    "< 0.001%" below 10⁻⁵ (a few values of millions)."""
    if 0 < s < 1e-5:
        return "< 0.001%"
    digits = 3
    while f"{100 * s:.{digits}g}" == "100" and s < 1:
        digits += 1
    return f"{100 * s:.{digits}g}%"


def _magnitude(x: float) -> str:
    """A magnitude to 3 significant digits: plain from 0.001 up, else as a power of ten (1.72×10⁻⁷)."""
    return f"{x:.3g}" if x >= 1e-3 else fmt.sci(x)


def _bands() -> list[tuple[str, float, float, float]]:
    """(label, 1st percentile, median, 99th percentile) of each shipped quantity's nonzero magnitudes."""
    d = nfd.shipped()
    return [(label, *(float(d[f"{key}/pct"][i]) for i in (P1, P50, P99))) for key, label in BANDS]


def _magnitude_readouts() -> list[Readout]:
    """Where the tiny GPT's activations, weight gradients and Adam's v sit against fp16's and bf16's limits."""
    d = nfd.shipped()

    def below(key: str, i: int) -> str:
        return _share(float(d[f"{key}/below"][i]))

    def median(key: str) -> str:
        return _magnitude(float(d[f"{key}/pct"][P50]))

    flushed = {key: _share(float(d[f"{key}/fp16_zero"])) for key in ("grad", "v")}
    bf16 = max(float(d[f"{key}/below"][BF16_NORMAL]) for key, _ in BANDS)
    g_med = float(d["grad/pct"][P50])
    return [
        Readout("Tiny GPT: activations below fp16's smallest normal 2⁻¹⁴", below("act", FP16_NORMAL),
                f"share of the nonzero inputs of the tiny GPT's linear layers; below 2⁻²⁴: {below('act', FP16_SUB)}; "
                f"median {median('act')}"),
        Readout("Tiny GPT: weight gradients below fp16's smallest normal 2⁻¹⁴", below("grad", FP16_NORMAL),
                f"below its smallest subnormal 2⁻²⁴: {below('grad', FP16_SUB)}; a cast to fp16 rounds "
                f"{flushed['grad']} to 0; median {median('grad')}"),
        Readout("Tiny GPT: Adam's v below fp16's smallest subnormal 2⁻²⁴", below("v", FP16_SUB),
                f"below its smallest normal 2⁻¹⁴: {below('v', FP16_NORMAL)}; a cast to fp16 rounds {flushed['v']} "
                f"to 0; median {median('v')}; the gradients' median squared: {_magnitude(g_med**2)}"),
        Readout("Tiny GPT: any of the three below bf16's smallest normal 2⁻¹²⁶", _share(bf16),
                "the largest of the three shares; bf16 keeps fp32's 8 exponent bits"),
    ]  # fmt: skip


def _panel(j: int) -> str:
    rounded, _ = _grid()
    x = XS[j]
    lines = [f"<b>x = {X_CHOICES[j]}</b>"]
    for f, r in zip(nf.FORMATS, rounded[:, j], strict=True):
        lines.append(f"{f.name}: {_value_text(x, float(r), f)}, {_error_text(x, float(r))}")
    return "<br>".join(lines)


def _stairs(fmt: nf.FloatFormat) -> tuple[np.ndarray, np.ndarray]:
    """The spacing staircase of ``fmt`` over its range clipped to the axis: x at each binade start, ulp there."""
    lo = max(fmt.smallest_subnormal, X_RANGE[0])
    hi = min(fmt.largest, X_RANGE[1])
    e_lo, e_hi = math.floor(math.log2(max(lo, fmt.smallest_normal))), math.floor(math.log2(hi))
    x = [lo] + [2.0**e for e in range(e_lo, e_hi + 1) if lo < 2.0**e <= hi] + [hi]
    x = np.array(sorted(set(x)))
    return x, nf.ulp(x, fmt)


@functools.lru_cache(maxsize=16)
def _line_fig(at: int, theme: str, pres: bool, guess: str | None) -> go.Figure:
    _, spacing = _grid()
    limits = [(f.smallest_subnormal, f.smallest_normal, f.largest) for f in nf.FORMATS]
    extra = f"<br><i>your guess: bf16 error {guess}%</i>" if guess is not None else ""
    panels = [_panel(j) + extra for j in range(len(XS))]
    return spacing_figure(
        [f.name for f in nf.FORMATS], [_stairs(f) for f in nf.FORMATS], limits, XS, X_CHOICES,
        [list(spacing[:, j]) for j in range(len(XS))], panels, x_range=X_RANGE, bands=_bands(), band_source=BAND_SOURCE,
        active=at, theme=theme, presenter=pres,
    )  # fmt: skip


@functools.lru_cache(maxsize=8)
def _scaler(interval: int, seed: int) -> nf.LossScalerRun:
    return nf.dynamic_loss_scaler(nf.seeded_gradient_maxima(STEPS, seed), nf.FP16, growth_interval=interval)


@functools.lru_cache(maxsize=8)
def _gradients(seed: int) -> np.ndarray:
    return nf.seeded_gradient_magnitudes(GRADIENTS, seed)


@functools.lru_cache(maxsize=8)
def _sums(increment: str) -> dict[str, nf.RunningSum]:
    return {f.name: nf.running_sum(float(increment), f, max_steps=ADDITIONS) for f in (nf.BF16, nf.FP16, nf.FP32)}


def _padded(values: np.ndarray) -> np.ndarray:
    """A running sum's values over all the additions: a stalled sum stays where it stopped."""
    out = np.full(ADDITIONS + 1, values[-1])
    out[: values.size] = values
    return out


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (``Number line``, ``Loss scaling``, ``Softmax``,
    ``Running sum``; ``main`` is the open tab's), the open tab's readouts and the table behind the number line.

    Facts: ``predict``, ``rounded`` (format name -> the value stored for x), ``bf16_error``; per tab ``fate``,
    ``skipped`` (Loss scaling), ``naive``, ``stable`` (Softmax), ``stall`` (Running sum).
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.fmt_view)
    view = View()
    j = X_CHOICES.index(state.fmt_x) if state.fmt_x in X_CHOICES else X_CHOICES.index("0.1")
    x = XS[j]
    rounded, _ = _grid()
    stored = {f.name: float(r) for f, r in zip(nf.FORMATS, rounded[:, j], strict=True)}
    bf16_err = abs(stored["bf16"] - x) / x
    view.facts.update(rounded=stored, bf16_error=bf16_err)
    predicting = ask.mode(state, "predict_fmt", "guess_fmt_err")
    view.facts["predict"] = predicting
    question = f"x = {X_CHOICES[j]} cast to bf16: what is the relative error, in percent?"
    # the open tab: the page names it in ``parts`` (its tab bar keeps the state); a player asks for ``main``
    open_tab = state.fmt_view if state.fmt_view in parts else next((v for v in VIEWS if v in parts), LINE)
    if LINE in parts:
        if predicting == "hidden":
            view.figures[LINE] = predict_figure(
                question, x_title="x", y_title="spacing ulp(x)", x_range=X_RANGE, log_x=True, **options.look
            )
        else:
            guess = None if predicting != "revealed" else f"{float(state.guess_fmt_err):g}"
            view.figures[LINE] = _line_fig(j, options.theme, options.presenter, guess)
            view.drags[LINE] = Drag("fmt_x", X_CHOICES)
    if open_tab == LINE:
        view.readouts = [
            Readout("bf16 relative error at x", f"{100 * bf16_err:.3g}%",
                    "|bf16(x) − x| / x. Rounding moves x by at most half the spacing, so in the normal range the "
                    "relative error is at most 2⁻⁸ ≈ 0.39%"),
            Readout("fp16 stores", _value_text(x, stored["fp16"], nf.FP16),
                    "5 exponent bits: ∞ from 65,520 (what rounds above the largest, 65,504), normal down to 2⁻¹⁴"),
            Readout("fp8 E4M3 stores", _value_text(x, stored["fp8 E4M3"], nf.FP8_E4M3),
                    "torch 2.13's CPU cast saturates at 448, ±∞ included (no infinity in E4M3; older torch casts and "
                    "the OCP non-saturating mode give its not-a-number code, S.1111.111)"),
            Readout("fp8 E5M2 stores", _value_text(x, stored["fp8 E5M2"], nf.FP8_E5M2),
                    "largest 57,344; torch's cast (IEEE-style, the OCP non-saturating mode) gives ∞ from 61,440 (what "
                    "rounds above it); saturating conversions give 57,344"),
            *_magnitude_readouts(),
        ]  # fmt: skip
    if LOSS in parts or open_tab == LOSS:
        k, interval, seed = int(state.fmt_scale_log2), int(state.fmt_interval), int(state.fmt_seed)
        S = 2.0**k
        g = _gradients(seed)
        fate = nf.gradient_fate(g, nf.FP16, S)
        bf16_zero = nf.gradient_fate(g, nf.BF16, 1.0).zero
        run = _scaler(interval, seed)
        view.facts.update(fate=fate, skipped=int(run.skipped.sum()), final_scale=run.final_scale, bf16_zero=bf16_zero)
        if LOSS in parts:
            lg = np.log10(S * g)
            edges = np.linspace(-14.0, 8.0, 89)
            counts, _ = np.histogram(np.clip(lg, edges[0], edges[-1]), edges)
            bounds = [("rounds to zero", nf.FP16.smallest_subnormal / 2),
                      ("normal from here", nf.FP16.smallest_normal), ("overflow to ∞", nf.FP16.largest)]  # fmt: skip
            view.figures[LOSS] = loss_scale_figure(
                edges, counts, bounds, np.arange(1, STEPS + 1), np.log2(run.scales), run.skipped,
                scale_text="gradients times S", **options.look,
            )  # fmt: skip
        if open_tab == LOSS:
            view.readouts = [
                Readout("fp16: rounded to zero", f"{100 * fate.zero:.1f}%", f"of the toy's gradients at S = 2^{k}"),
                Readout("fp16: subnormal", f"{100 * fate.subnormal:.1f}%", "kept, with fewer significant bits"),
                Readout("fp16: normal", f"{100 * fate.normal:.1f}%"),
                Readout("fp16: overflow to ∞", f"{100 * fate.overflow:.1f}%",
                        "any overflow makes GradScaler skip the step"),
                Readout("bf16: rounded to zero at S = 1", f"{100 * bf16_zero:.1f}%",
                        "bf16 keeps fp32's exponent range: no loss scale needed"),
                Readout("Dynamic scaler: steps skipped", f"{int(run.skipped.sum()):,} of {STEPS:,}",
                        f"from S = 2^16, doubled after {interval:,} good steps, halved on an overflow"),
                Readout("Dynamic scaler: S at the end", f"2^{math.log2(run.final_scale):g}"),
            ]  # fmt: skip
    if SOFTMAX in parts or open_tab == SOFTMAX:
        top = float(state.fmt_logit_top)
        z = top - np.array(LOGITS)
        naive = nf.softmax_naive(z, nf.FP16)
        stable = nf.softmax_stable(z, nf.FP16)
        exact = np.exp(z - z.max()) / np.exp(z - z.max()).sum()
        view.facts.update(naive=naive, stable=stable)
        if SOFTMAX in parts:
            view.figures[SOFTMAX] = softmax_figure(
                np.arange(len(z)), [("fp16, no max subtracted", naive), ("fp16, max subtracted", stable),
                                    ("float64", exact)], **options.look,
            )  # fmt: skip
        if open_tab == SOFTMAX:
            if np.isnan(naive).any():
                state_help = "exp overflowed: exp(x) of the top logit is ∞, and ∞/∞ is NaN"
            elif not naive.any():
                state_help = "the sum overflowed: Σ exp(x) rounds to ∞ though no exp does, so every share is 0"
            else:
                state_help = "no overflow: every exp and their sum stay finite in fp16"
            row = math.fsum(math.exp(-d) for d in LOGITS)  # Σ exp(x) = e^top · row
            view.readouts = [
                Readout("fp16 naive: top probability", "NaN (∞/∞)" if np.isnan(naive[0]) else f"{naive[0]:.4f}",
                        state_help),
                Readout("Σ exp(x) overflows fp16 for a top logit above", f"{math.log(_INF_FROM[0] / row):.2f}",
                        f"ln(65,520 / {row:.3f}): {row:.3f} = e⁰ + e⁻¹ + e⁻² + e⁻³, this row's sum over e^top"),
                Readout("exp overflows fp16 above", f"{math.log(_INF_FROM[0]):.2f}",
                        "ln 65,520, where exp rounds above the largest, 65,504; fp32: above "
                        f"{math.log(_INF_FROM[1]):.2f}"),
                Readout("fp16 with the max subtracted", f"{stable[0]:.4f}", "every exp at most e⁰ = 1"),
                Readout("log-sum-exp", f"{float(nf.logsumexp(z)):.4f}", "m + log Σ exp(x − m), m the max"),
            ]  # fmt: skip
    if SUM in parts or open_tab == SUM:
        inc = state.fmt_increment if state.fmt_increment in INCREMENTS else INCREMENTS[0]
        sums = _sums(inc)
        b = sums["bf16"]
        view.facts["stall"] = (b.stall_step, b.stalled_at)
        if SUM in parts:
            steps = np.arange(ADDITIONS + 1)
            series = [(f"{name} sum", _padded(s.values)) for name, s in sums.items()]
            series.append(("exact", steps * float(inc)))
            view.figures[SUM] = running_sum_figure(steps, series, **options.look)
        if open_tab == SUM:
            lost = bool(nf.update_is_lost(1.0, 1e-3, nf.BF16))
            stall = (f"reached in {b.stall_step - 1:,} additions; every later one rounds back to it"
                     if b.stall_step is not None else "still growing")  # fmt: skip
            view.readouts = [
                Readout(f"bf16 sum after {ADDITIONS:,}", f"{b.stalled_at:g}", stall),
                Readout(f"fp16 sum after {ADDITIONS:,}", f"{sums['fp16'].stalled_at:g}"),
                Readout(f"fp32 sum after {ADDITIONS:,}", f"{sums['fp32'].stalled_at:g}",
                        f"exact: {ADDITIONS * float(inc):g}"),
                Readout("bf16 weight 1 plus an update of 0.001", "lost" if lost else "kept",
                        "the gap above 1 is 2⁻⁷; 0.001 is below half of it, 2⁻⁸, so the sum rounds back to 1"),
            ]  # fmt: skip
    view.tables[LINE] = lambda: pd.DataFrame(
        {"format": [f.name for f in nf.FORMATS], "x": x, "stored": list(stored.values()),
         "largest": [f.largest for f in nf.FORMATS], "smallest normal": [f.smallest_normal for f in nf.FORMATS],
         "smallest subnormal": [f.smallest_subnormal for f in nf.FORMATS]}
    )  # fmt: skip
    if predicting == "hidden":
        ask.hide(view, question, LINE_FORMAT_READOUTS, tables=(LINE,))
    elif predicting == "revealed":
        g = float(state.guess_fmt_err)
        ask.reveal(
            view,
            Readout("bf16 relative error at x (the answer)", f"{100 * bf16_err:.3g}%"),
            f"{g:g}%",
            f"{g - 100 * bf16_err:+.3g} points".replace("-", "−"),
            "your guess minus the answer, in percentage points",
            value=100 * bf16_err,  # the guess is in %, bf16_err a fraction
        )
    view.show_as_main(open_tab)
    return with_answers(SPEC, state, view)
