"""Number formats and mixed precision: fp32, bf16, fp16 and the two fp8 formats from their bit layouts, rounding to
each in numpy, the spacing and relative error, loss scaling for fp16, softmax overflow, and a running sum that stalls.

The lesson context is seed 002, A1.10 (numerical stability) and A5.3 (mixed precision): bf16 keeps fp32's exponent
range and gives up mantissa bits; fp16 has the precision but not the range, so small gradients underflow and need a
loss scale; fp8 needs a scale per tensor or per tile; reductions and master weights stay in fp32.

A binary floating-point format with e exponent bits and p stored mantissa bits (IEEE 754-2019, §3.3-3.4)::

    bias            = 2^(e-1) - 1
    emin            = 1 - bias                         exponent of the smallest normal
    emax            = (2^e - 2) - bias                 IEEE: the all-ones exponent is kept for inf and NaN
    largest finite  = (2 - 2^-p) · 2^emax
    smallest normal = 2^emin
    smallest subnormal = 2^(emin - p)
    machine epsilon = 2^-p                             the gap from 1 to the next value up; unit roundoff 2^-(p+1)

fp32 is 8+23 bits, bf16 8+7 (the top half of fp32), fp16 5+10 (IEEE binary16). The fp8 formats are Micikevicius et
al. 2022, "FP8 Formats for Deep Learning" (arXiv 2209.05433), standardised as the OCP 8-bit floating point
specification (OFP8, revision 1.0, 2023). E5M2 follows the IEEE rules above (largest 1.75 · 2^15 = 57,344, with
infinities and NaN). E4M3 is the exception: it has no infinities and only one NaN pattern per sign (S.1111.111), so
the all-ones exponent holds ordinary values (the "fn" in torch.float8_e4m3fn: finite, NaN only)::

    emax = (2^e - 1) - bias = 8,   largest finite = (2 - 2·2^-p) · 2^emax = 1.75 · 256 = 448

(with the mantissa 111 taken by NaN, the largest mantissa at emax is 110).

Rounding is round to nearest, ties to even, onto the format's grid, subnormals included. What happens above the
largest finite value depends on the format and on the conversion, and this module names it per format in
``FloatFormat.overflow``:

- fp32, bf16, fp16 and E5M2: a value that rounds above the largest finite value becomes infinity (IEEE 754 §7.4,
  round to nearest). The threshold is halfway to the next power of two, which the tie sends up: 65,520 for fp16,
  61,440 for E5M2.
- E4M3 (float8_e4m3fn): torch 2.13's CPU casts (Tensor.to, copy_, from float32, float64, float16 or bfloat16)
  saturate: every value above 448, and +-inf too, becomes +-448; NaN stays NaN. The tests pin this against torch's
  own cast. The OFP8 spec allows a saturating and a non-saturating conversion; in the non-saturating one (ml_dtypes'
  default, and the scalar c10 conversion in torch's Float8_e4m3fn.h as stored upstream) a value that rounds above
  448 becomes NaN, so 464 (the tie between 448 and the 480 that NaN took) goes to 448 and 465 to NaN. Both are
  offered (``overflow="saturate"`` or ``"nan"``); the page should say which it draws. Whether a GPU kernel saturates
  is the kernel's choice (scaled matmuls usually clamp to the range first) and is not checked here.

Loss scaling follows torch.amp.GradScaler (torch/amp/grad_scaler.py; the update is aten's _amp_update_scale_): start
at init_scale = 2^16; on a step whose scaled gradients hold an inf or NaN, skip the optimizer step and multiply the
scale by backoff_factor = 0.5; after growth_interval = 2000 steps in a row without one, multiply it by
growth_factor = 2 (kept only if the result is finite). Micikevicius et al. 2018, "Mixed Precision Training" (arXiv
1710.03740) introduced the fp32 master copy and loss scaling.

Numbers are float64 numpy throughout; torch appears only inside :func:`torch_cast`, a reference the tests and an
optional check use, so importing this module and drawing a figure never imports torch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Overflow = Literal["inf", "saturate", "nan"]


@dataclass(frozen=True)
class FloatFormat:
    """A binary floating-point format: its bit layout, and every limit computed from it (see the module docstring)."""

    name: str
    exponent_bits: int
    mantissa_bits: int  # stored fraction bits p (the leading 1 of a normal value is implicit)
    torch_dtype: str  # the name of the torch dtype: torch.<torch_dtype>
    finite_only: bool = False  # the "fn" layout: no infinities, the all-ones exponent holds values, one NaN pattern
    overflow: Overflow = "inf"  # what a cast of a value above the largest finite gives (torch 2.13, CPU)

    @property
    def bits(self) -> int:
        return 1 + self.exponent_bits + self.mantissa_bits

    @property
    def bias(self) -> int:
        # bias = 2^(e-1) - 1
        return 2 ** (self.exponent_bits - 1) - 1

    @property
    def min_exponent(self) -> int:
        # emin = 1 - bias
        return 1 - self.bias

    @property
    def max_exponent(self) -> int:
        # IEEE: emax = (2^e - 2) - bias; fn: the all-ones exponent holds values, emax = (2^e - 1) - bias
        top = 2**self.exponent_bits - (1 if self.finite_only else 2)
        return top - self.bias

    @property
    def largest(self) -> float:
        # IEEE: (2 - 2^-p) 2^emax; fn: the all-ones mantissa at emax is NaN, so (2 - 2 * 2^-p) 2^emax
        p = self.mantissa_bits
        top_mantissa = 2.0 - (2.0 if self.finite_only else 1.0) * 2.0**-p
        return math.ldexp(top_mantissa, self.max_exponent)

    @property
    def smallest_normal(self) -> float:
        # 2^emin
        return math.ldexp(1.0, self.min_exponent)

    @property
    def smallest_subnormal(self) -> float:
        # 2^(emin - p)
        return math.ldexp(1.0, self.min_exponent - self.mantissa_bits)

    @property
    def eps(self) -> float:
        # machine epsilon 2^-p: the gap between 1 and the next representable value
        return math.ldexp(1.0, -self.mantissa_bits)

    @property
    def unit_roundoff(self) -> float:
        # u = eps / 2: the largest relative error of round to nearest in the normal range
        return self.eps / 2

    @property
    def has_inf(self) -> bool:
        return not self.finite_only

    @property
    def has_nan(self) -> bool:
        return True

    @property
    def dynamic_range_decades(self) -> float:
        """log10(largest / smallest subnormal): the decades the format spans, subnormals included."""
        return math.log10(self.largest) - math.log10(self.smallest_subnormal)


FP32 = FloatFormat("fp32", 8, 23, "float32")
BF16 = FloatFormat("bf16", 8, 7, "bfloat16")
FP16 = FloatFormat("fp16", 5, 10, "float16")
FP8_E4M3 = FloatFormat("fp8 E4M3", 4, 3, "float8_e4m3fn", finite_only=True, overflow="saturate")
FP8_E5M2 = FloatFormat("fp8 E5M2", 5, 2, "float8_e5m2")
FORMATS: tuple[FloatFormat, ...] = (FP32, BF16, FP16, FP8_E4M3, FP8_E5M2)


def format_by_name(name: str) -> FloatFormat:
    """The format called ``name`` ("fp32", "bf16", "fp16", "fp8 E4M3", "fp8 E5M2")."""
    for fmt in FORMATS:
        if fmt.name == name:
            return fmt
    raise ValueError(f"unknown format {name!r}; known: {[f.name for f in FORMATS]}")


# ---------------------------------------------------------------------------------------------------------------
# Rounding, spacing and error
# ---------------------------------------------------------------------------------------------------------------


def _binade_exponent(a: NDArray[np.float64], fmt: FloatFormat) -> NDArray[np.float64]:
    """floor(log2 a) for a > 0, clamped below at emin (the subnormals share emin's spacing); emin where a == 0."""
    with np.errstate(divide="ignore"):
        _, e = np.frexp(a)  # a = m 2^e with m in [0.5, 1): the leading bit is 2^(e-1)
    e = np.where(a > 0, e.astype(np.float64) - 1.0, float(fmt.min_exponent))
    return np.maximum(e, float(fmt.min_exponent))


def round_to_format(x: ArrayLike, fmt: FloatFormat, overflow: Overflow | None = None) -> NDArray[np.float64]:
    """x rounded to the nearest value of ``fmt`` (ties to even, subnormals kept), as float64.

    ``overflow`` overrides what a value that rounds above the largest finite value becomes: "inf" (IEEE), "saturate"
    (+-largest, +-inf included) or "nan" (OFP8's non-saturating E4M3). ``None`` takes ``fmt.overflow``, which is what
    torch 2.13's cast does on the CPU. A format without infinities cannot give "inf"; asking for it raises.
    """
    mode = fmt.overflow if overflow is None else overflow
    if mode == "inf" and not fmt.has_inf:
        raise ValueError(f"{fmt.name} has no infinity: choose overflow='saturate' or 'nan'")
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    finite = np.isfinite(a)
    a_f = np.where(finite, a, 0.0)
    # quantum q = 2^(max(floor(log2 a), emin) - p); a / q is exact (q is a power of two) and np.rint rounds half to even
    q = np.exp2(_binade_exponent(a_f, fmt) - fmt.mantissa_bits)
    r = np.rint(a_f / q) * q
    over = r > fmt.largest
    if mode == "inf":
        r = np.where(over, np.inf, r)
        r = np.where(finite, r, a)  # inf stays inf, NaN stays NaN
    elif mode == "saturate":
        r = np.where(over, fmt.largest, r)
        r = np.where(np.isinf(a), fmt.largest, r)
        r = np.where(np.isnan(a), np.nan, r)
    elif mode == "nan":
        r = np.where(over | ~finite, np.nan, r)
    else:
        raise ValueError(f"unknown overflow mode {mode!r}")
    return np.copysign(r, x)


def ulp(x: ArrayLike, fmt: FloatFormat) -> NDArray[np.float64]:
    """The spacing of ``fmt`` at |x|: the gap between consecutive values in the binade that holds |x|.

    ulp(x) = 2^(max(floor(log2|x|), emin) - p); for a representable x it is the distance to the next value up in
    magnitude, and it is the subnormals' fixed spacing 2^(emin - p) below the smallest normal (and at 0).
    """
    a = np.abs(np.asarray(x, dtype=np.float64))
    return np.exp2(_binade_exponent(np.where(np.isfinite(a), a, 0.0), fmt) - fmt.mantissa_bits)


def relative_error(x: ArrayLike, fmt: FloatFormat) -> NDArray[np.float64]:
    """|round(x) - x| / |x| (0 at x == 0; inf where the cast overflows to inf or NaN)."""
    x = np.asarray(x, dtype=np.float64)
    r = round_to_format(x, fmt)
    with np.errstate(divide="ignore", invalid="ignore"):
        err = np.abs(r - x) / np.abs(x)
    err = np.where(x == 0, 0.0, err)
    return np.where(np.isfinite(r), err, np.inf)


def decode_codes(fmt: FloatFormat) -> NDArray[np.float64]:
    """The value of every bit pattern of an 8-bit format, index = the code 0..255 (s eeee mmm or s eeeee mm)."""
    if fmt.bits != 8:
        raise ValueError(f"{fmt.name} has {fmt.bits} bits; decode_codes lists 8-bit formats only")
    codes = np.arange(256)
    p, e_bits = fmt.mantissa_bits, fmt.exponent_bits
    sign = np.where(codes >> 7, -1.0, 1.0)
    exp_field = (codes >> p) & (2**e_bits - 1)
    man = (codes & (2**p - 1)).astype(np.float64)
    # normal: (1 + m / 2^p) 2^(E - bias); subnormal (E = 0): (m / 2^p) 2^emin
    value = np.where(
        exp_field == 0,
        man / 2**p * 2.0**fmt.min_exponent,
        (1.0 + man / 2**p) * np.exp2(exp_field.astype(np.float64) - fmt.bias),
    )
    top = exp_field == 2**e_bits - 1
    if fmt.finite_only:
        value = np.where(top & (man == 2**p - 1), np.nan, value)  # S.1111.111 is NaN
    else:
        value = np.where(top, np.where(man == 0, np.inf, np.nan), value)
    return sign * value


def representable_values(fmt: FloatFormat, lo: float, hi: float, limit: int = 200_000) -> NDArray[np.float64]:
    """Every positive finite value of ``fmt`` in [lo, hi], ascending (0 < lo <= hi); for a log number line.

    For an 8-bit format this is a slice of :func:`decode_codes`; for wider ones the values are built binade by
    binade, and more than ``limit`` of them raise (fp32 holds 2^23 values per binade).
    """
    if not 0 < lo <= hi:
        raise ValueError("need 0 < lo <= hi")
    if fmt.bits == 8:
        v = decode_codes(fmt)
        v = np.unique(v[np.isfinite(v) & (v > 0)])
        return v[(v >= lo) & (v <= hi)]
    hi = min(hi, fmt.largest)
    if lo > hi:
        return np.empty(0)
    e_lo = int(_binade_exponent(np.array([lo]), fmt)[0])
    e_hi = int(_binade_exponent(np.array([hi]), fmt)[0])
    p = fmt.mantissa_bits
    per = 2**p
    sub = lo < fmt.smallest_normal
    count = (e_hi - e_lo + 1) * per + (per if sub else 0)
    if count > limit:
        raise ValueError(f"about {count} values of {fmt.name} in [{lo:g}, {hi:g}]: over the limit {limit}")
    parts = []
    if sub:  # subnormals: k 2^(emin - p), k = 1 .. 2^p - 1
        parts.append(np.arange(1, per) * fmt.smallest_subnormal)
    for e in range(e_lo, e_hi + 1):  # (1 + k / 2^p) 2^e
        parts.append((1.0 + np.arange(per) / per) * 2.0**e)
    v = np.concatenate(parts)
    return v[(v >= lo) & (v <= hi)]


def exp_overflow_threshold(fmt: FloatFormat) -> float:
    """ln(largest finite): exp(x) overflows the format above it (about 88.72 for fp32, 11.09 for fp16)."""
    return math.log(fmt.largest)


def torch_cast(x: ArrayLike, fmt: FloatFormat) -> NDArray[np.float64]:
    """x cast to ``fmt`` by torch (from float64) and back, as float64: the reference :func:`round_to_format` follows.

    Imports torch (about 2 s the first time); nothing else in this module does.
    """
    import torch

    t = torch.as_tensor(np.asarray(x, dtype=np.float64))
    return t.to(getattr(torch, fmt.torch_dtype)).to(torch.float64).numpy()


# ---------------------------------------------------------------------------------------------------------------
# Loss scaling
# ---------------------------------------------------------------------------------------------------------------


def _non_saturating(fmt: FloatFormat) -> Overflow:
    """The overflow mode that marks an overflow: inf where the format has it, NaN where it does not."""
    return "inf" if fmt.has_inf else "nan"


@dataclass(frozen=True)
class GradientFate:
    """Where gradient magnitudes land once multiplied by a loss scale and cast to a format (fractions sum to 1)."""

    scale: float
    zero: float  # rounded to zero (underflow): |S g| at or below half the smallest subnormal
    subnormal: float  # kept with fewer significant bits: below the smallest normal
    normal: float  # full precision
    overflow: float  # above the largest finite: inf (fp16), which makes GradScaler skip the step


def gradient_fate(grads: ArrayLike, fmt: FloatFormat = FP16, scale: float = 1.0) -> GradientFate:
    """The share of ``grads`` that a cast of ``scale · grads`` to ``fmt`` zeroes, makes subnormal, keeps or overflows.

    Counted from the cast itself (:func:`round_to_format`), so the ties at the edges follow round to nearest even; an
    overflow is counted as one even in E4M3, whose torch cast would saturate it to 448 instead.
    """
    g = np.abs(np.asarray(grads, dtype=np.float64)).ravel()
    if g.size == 0:
        raise ValueError("no gradients")
    r = np.abs(round_to_format(scale * g, fmt, _non_saturating(fmt)))
    n = g.size
    over = ~np.isfinite(r)
    zero = r == 0
    sub = ~zero & ~over & (r < fmt.smallest_normal)
    normal = ~zero & ~over & ~sub
    return GradientFate(float(scale), *(float(m.sum()) / n for m in (zero, sub, normal, over)))


def seeded_gradient_magnitudes(
    n: int, seed: int = 0, median: float = 1e-6, sigma_decades: float = 1.5
) -> NDArray[np.float64]:
    """n gradient magnitudes, log-normal: log10|g| ~ Normal(log10 median, sigma_decades). An illustration, not data."""
    rng = np.random.default_rng(seed)
    return 10.0 ** rng.normal(math.log10(median), sigma_decades, size=n)


def seeded_gradient_maxima(
    steps: int,
    seed: int = 0,
    typical: float = 1e-3,
    sigma_decades: float = 0.3,
    spike_prob: float = 0.0005,
    spike_factor: float = 1e4,
) -> NDArray[np.float64]:
    """The largest unscaled gradient magnitude of each step: log-normal around ``typical``, with rare spikes.

    A spike multiplies that step's maximum by ``spike_factor`` (a bad batch). Illustrative, seeded.
    """
    rng = np.random.default_rng(seed)
    g = 10.0 ** rng.normal(math.log10(typical), sigma_decades, size=steps)
    spikes = rng.random(steps) < spike_prob
    return np.where(spikes, g * spike_factor, g)


@dataclass(frozen=True)
class LossScalerRun:
    """A dynamic loss scaler over a run: the scale each step used, which steps it skipped, the scale after the run."""

    scales: NDArray[np.float64]  # (steps,) the scale the step's backward used
    skipped: NDArray[np.bool_]  # (steps,) True where the scaled gradients overflowed and the step was skipped
    final_scale: float

    @property
    def skipped_steps(self) -> NDArray[np.int64]:
        return np.flatnonzero(self.skipped)


def dynamic_loss_scaler(
    grad_maxima: ArrayLike,
    fmt: FloatFormat = FP16,
    init_scale: float = 2.0**16,
    growth_factor: float = 2.0,
    backoff_factor: float = 0.5,
    growth_interval: int = 2000,
) -> LossScalerRun:
    """GradScaler's rule stepped over a run's per-step largest unscaled gradient magnitudes.

    A step overflows when ``scale · max|g|`` rounds to inf (or, in a format without inf, beyond the largest finite
    value). Then::

        overflow:   skip the step, scale <- scale · backoff_factor, good <- 0
        otherwise:  good <- good + 1; if good == growth_interval: scale <- scale · growth_factor (if finite), good <- 0

    (torch.amp.GradScaler.update, aten _amp_update_scale_). Only the largest gradient is modelled: a real backward can
    also overflow in an intermediate activation's gradient.
    """
    g = np.asarray(grad_maxima, dtype=np.float64)
    scales = np.empty(g.size)
    skipped = np.zeros(g.size, dtype=bool)
    scale, good = float(init_scale), 0
    for i, gi in enumerate(g):
        scales[i] = scale
        if not np.isfinite(round_to_format(scale * gi, fmt, _non_saturating(fmt))):
            skipped[i] = True
            scale *= backoff_factor
            good = 0
        else:
            good += 1
            if good == growth_interval:
                grown = scale * growth_factor
                if math.isfinite(grown):
                    scale = grown
                good = 0
    return LossScalerRun(scales, skipped, scale)


# ---------------------------------------------------------------------------------------------------------------
# Softmax and log-sum-exp in a format
# ---------------------------------------------------------------------------------------------------------------


def softmax_naive(x: ArrayLike, fmt: FloatFormat) -> NDArray[np.float64]:
    """softmax(x) = exp(x) / sum exp(x) with each exp and the sum stored in ``fmt``, no max subtracted.

    exp(x_i) rounds to inf once x_i > ln(largest) (11.09 in fp16), the sum is inf, and inf / inf is NaN. The
    division is computed in float64 and rounded once (a wider accumulator, as torch's CPU kernels use).
    """
    x = round_to_format(x, fmt)
    with np.errstate(over="ignore", invalid="ignore"):
        e = round_to_format(np.exp(x), fmt)
        s = round_to_format(e.sum(axis=-1, keepdims=True), fmt)
        return round_to_format(e / s, fmt)


def softmax_stable(x: ArrayLike, fmt: FloatFormat) -> NDArray[np.float64]:
    """softmax with the max subtracted first: exp(x - max) <= 1, so nothing overflows (shift invariance)."""
    x = round_to_format(x, fmt)
    # softmax(x) = softmax(x - c) for any c; c = max(x) makes the largest exp equal to e^0 = 1
    z = round_to_format(x - x.max(axis=-1, keepdims=True), fmt)
    e = round_to_format(np.exp(z), fmt)
    s = round_to_format(e.sum(axis=-1, keepdims=True), fmt)
    return round_to_format(e / s, fmt)


def logsumexp(x: ArrayLike) -> NDArray[np.float64]:
    """log sum_i exp(x_i) = m + log sum_i exp(x_i - m), m = max_i x_i: finite wherever the answer is (float64)."""
    x = np.asarray(x, dtype=np.float64)
    m = x.max(axis=-1, keepdims=True)
    # log sum exp(x) = m + log sum exp(x - m)
    return (m + np.log(np.exp(x - m).sum(axis=-1, keepdims=True)))[..., 0]


def log_softmax(x: ArrayLike) -> NDArray[np.float64]:
    """log softmax(x) = x - logsumexp(x): never log of a probability that underflowed to 0 (float64)."""
    x = np.asarray(x, dtype=np.float64)
    return x - logsumexp(x)[..., None]


# ---------------------------------------------------------------------------------------------------------------
# A running sum that stalls, and updates that are lost
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunningSum:
    """A sum s <- round(s + increment) in a format, stepped until it stops growing (or max_steps)."""

    values: NDArray[np.float64]  # (steps + 1,) the sum after each step, values[0] = start
    stall_step: int | None  # the first step whose addition left the sum unchanged; None if it never stalled
    stalled_at: float  # the sum where it stopped (the last value)
    exact: float  # start + steps · increment over the same steps (the lost one included): a wide accumulator's sum


def running_sum(increment: float, fmt: FloatFormat = BF16, start: float = 0.0, max_steps: int = 100_000) -> RunningSum:
    """Add ``increment`` again and again, rounding the sum to ``fmt`` after every addition (ties to even).

    The sum stops growing at the first s where increment <= ulp(s) / 2 (at equality the tie goes to the even
    neighbour, which is s itself when s's last mantissa bit is 0): with bf16 and increment 1 that is s = 256, after
    256 steps. On the way each addition rounds, so the stalled value can sit above the exact sum as well as below
    it (increment 3: the sum climbs in steps of 4 once it passes 512 and stops at 1024 after 278 additions, where
    the exact sum is 834). An fp32 accumulator reaches the exact sum; this is why reductions, master weights and
    optimizer state are kept in fp32 (Micikevicius et al. 2018).
    """
    inc = float(round_to_format(increment, fmt))
    s = float(round_to_format(start, fmt))
    values = [s]
    stall = None
    for step in range(1, max_steps + 1):
        nxt = float(round_to_format(s + inc, fmt))
        values.append(nxt)
        if nxt == s:
            stall = step
            break
        s = nxt
    steps = len(values) - 1
    return RunningSum(np.array(values), stall, values[-1], float(start) + steps * float(increment))


def stall_value(increment: float, fmt: FloatFormat = BF16) -> float:
    """The smallest power of two 2^k with ulp(2^k) / 2 >= ``increment`` (> 0): where equal increments from 0 stall.

    ulp(2^k) / 2 = 2^(k - p - 1), so k = ceil(log2 increment) + p + 1. A sum of equal increments from 0 stalls at the
    first value where increment <= half its ulp; for a power-of-two increment that is exactly this 2^k.
    """
    if increment <= 0:
        raise ValueError("increment must be positive")
    k = math.ceil(math.log2(increment)) + fmt.mantissa_bits + 1
    return math.ldexp(1.0, k)


def update_is_lost(w: ArrayLike, dw: ArrayLike, fmt: FloatFormat = BF16) -> NDArray[np.bool_]:
    """True where w + dw, rounded to ``fmt``, is w again: the update vanished (|dw| below about half an ulp of w)."""
    w = round_to_format(w, fmt)
    return round_to_format(w + np.asarray(dw, dtype=np.float64), fmt) == w
