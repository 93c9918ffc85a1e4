"""core.number_formats against torch as the independent reference: every format limit against torch.finfo and the
bit patterns read through torch's views, numpy rounding against torch's own casts (subnormals, ties, overflow), the
overflow behaviour of each cast pinned, the bf16 running sum against a loop of torch bf16 additions, the dynamic loss
scaler against a loop over torch's own _amp_update_scale_, softmax and log-sum-exp against torch; and the module
importing and running its numpy functions without importing torch."""

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch

from core import number_formats as nf

ROOT = Path(__file__).resolve().parents[1]
DTYPES = {fmt.name: getattr(torch, fmt.torch_dtype) for fmt in nf.FORMATS}
INT_VIEW = {8: torch.uint8, 16: torch.int16, 32: torch.int32}
IDS = [fmt.name for fmt in nf.FORMATS]


def _torch_round(x: np.ndarray, fmt: nf.FloatFormat) -> np.ndarray:
    """x (float32 values; float64 for the fp32 target) cast by torch to fmt and back to float64."""
    src = np.asarray(x, dtype=np.float64 if fmt is nf.FP32 else np.float32)
    return torch.from_numpy(src).to(DTYPES[fmt.name]).to(torch.float64).numpy()


def _from_codes(codes, fmt: nf.FloatFormat) -> np.ndarray:
    """The values of the given bit patterns, decoded by torch (an integer tensor viewed as the float dtype)."""
    t = torch.tensor(codes, dtype=torch.int64).to(INT_VIEW[fmt.bits])
    return t.view(DTYPES[fmt.name]).to(torch.float64).numpy()


def _next_up(x: np.ndarray, fmt: nf.FloatFormat) -> np.ndarray:
    """The next representable value above positive x, by adding 1 to torch's bit pattern."""
    t = torch.from_numpy(np.asarray(x, dtype=np.float64)).to(DTYPES[fmt.name])
    bits = t.view(INT_VIEW[fmt.bits]).to(torch.int64) + 1
    return _from_codes(bits.tolist(), fmt)


def _assert_same(a: np.ndarray, b: np.ndarray) -> None:
    """Equal values, NaN where NaN, and the same sign of zero."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    assert a.shape == b.shape
    bad = ~((a == b) | (np.isnan(a) & np.isnan(b))) | (np.signbit(a) != np.signbit(b)) & ~np.isnan(a)
    assert not bad.any(), list(zip(a[bad][:8], b[bad][:8], strict=True))


# ------------------------------------------------------------------------------------------------- the formats


@pytest.mark.parametrize("fmt", nf.FORMATS, ids=IDS)
def test_limits_equal_torch_finfo(fmt):
    fi = torch.finfo(DTYPES[fmt.name])
    assert fmt.bits == fi.bits
    assert fmt.largest == fi.max and -fmt.largest == fi.min
    assert fmt.smallest_normal == fi.smallest_normal == fi.tiny
    assert fmt.eps == fi.eps
    assert fmt.unit_roundoff == fi.eps / 2
    assert fmt.smallest_subnormal == _from_codes([1], fmt)[0]  # bit pattern 0...01
    assert fmt.smallest_normal == 2.0 ** (1 - fmt.bias)


@pytest.mark.parametrize("fmt", nf.FORMATS, ids=IDS)
def test_infinity_and_nan_patterns_as_torch_reads_them(fmt):
    exp_ones = (2**fmt.exponent_bits - 1) << fmt.mantissa_bits  # s=0, exponent all ones, mantissa 0
    all_ones = exp_ones | (2**fmt.mantissa_bits - 1)
    as_torch = _from_codes([exp_ones, all_ones], fmt)
    assert np.isnan(as_torch[1])  # every format has NaN at the all-ones pattern
    assert np.isinf(as_torch[0]) == fmt.has_inf
    if fmt.finite_only:  # E4M3fn: 1111.000 is 256, a value, and 1111.110 is the largest
        assert as_torch[0] == 256.0 and _from_codes([all_ones - 1], fmt)[0] == fmt.largest == 448.0


def test_the_stated_values():
    assert (nf.FP8_E4M3.largest, nf.FP8_E5M2.largest, nf.FP16.largest) == (448.0, 57344.0, 65504.0)
    assert nf.FP16.smallest_normal == pytest.approx(6.1035e-5, rel=1e-4)
    assert nf.FP16.smallest_subnormal == pytest.approx(5.96e-8, rel=1e-3)
    assert nf.BF16.smallest_normal == nf.FP32.smallest_normal  # same exponent: same range
    assert nf.exp_overflow_threshold(nf.FP32) == pytest.approx(88.72, abs=0.005)
    assert nf.exp_overflow_threshold(nf.FP16) == pytest.approx(11.09, abs=0.005)
    assert nf.format_by_name("bf16") is nf.BF16
    with pytest.raises(ValueError):
        nf.format_by_name("fp4")


@pytest.mark.parametrize("fmt", [nf.FP8_E4M3, nf.FP8_E5M2], ids=["e4m3", "e5m2"])
def test_decode_codes_equals_torch_for_all_256(fmt):
    _assert_same(nf.decode_codes(fmt), _from_codes(list(range(256)), fmt))


# ------------------------------------------------------------------------------------------------- rounding


def _probe_values(fmt: nf.FloatFormat, rng: np.random.Generator) -> np.ndarray:
    """Random magnitudes across the whole range (below the smallest subnormal to past the largest), every tie between
    neighbours in the subnormals, around 1 and at the top (the overflow tie included), the neighbours of each tie,
    and 0, inf, NaN; both signs. Float32 values (float64 for the fp32 target): what the torch cast reads."""
    wide = np.float64 if fmt is nf.FP32 else np.float32
    lo, hi = math.log2(fmt.smallest_subnormal) - 2, math.log2(fmt.largest) + 1
    top = fmt.largest - np.arange(6)[::-1] * nf.ulp(fmt.largest, fmt)
    if fmt.bits == 8:
        v = nf.decode_codes(fmt)
        grid = np.unique(v[np.isfinite(v) & (v >= 0)])
    else:
        grid = np.concatenate([np.arange(64) * fmt.smallest_subnormal, 1 + np.arange(-64, 64) * fmt.eps / 2, top])
        grid = np.unique(grid)
    grid = np.append(grid, fmt.largest + nf.ulp(fmt.largest, fmt))  # the step past the largest: its tie overflows
    mids = ((grid[1:] + grid[:-1]) / 2).astype(wide)  # exact: one bit more than the format
    with np.errstate(over="ignore"):
        parts = [
            np.exp2(rng.uniform(lo, hi, 3000)).astype(wide),
            grid.astype(wide),
            mids,
            np.nextafter(mids, wide(0)),
            np.nextafter(mids, wide(np.inf)),
            np.array([0, np.inf, np.nan, 1e30], wide),
        ]
    x = np.concatenate(parts).astype(np.float64)
    return np.concatenate([x, -x])


@pytest.mark.parametrize("fmt", nf.FORMATS, ids=IDS)
def test_round_to_format_equals_torch_cast(fmt):
    x = _probe_values(fmt, np.random.default_rng(fmt.bits + fmt.mantissa_bits))
    with np.errstate(over="ignore"):
        _assert_same(nf.round_to_format(x, fmt), _torch_round(x, fmt))
    _assert_same(nf.torch_cast(x[np.abs(x) < 1e30], fmt), _torch_round(x[np.abs(x) < 1e30], fmt))


def test_overflow_behaviour_of_torch_casts_pinned():
    big = np.array([448, 449, 464, 465, 479, 480, 500, 1e4, 1e30, np.inf])
    # float8_e4m3fn: torch 2.13's CPU cast saturates, +-inf included; NaN stays NaN
    _assert_same(_torch_round(big, nf.FP8_E4M3), np.full(big.size, 448.0))
    _assert_same(_torch_round(-big, nf.FP8_E4M3), np.full(big.size, -448.0))
    assert np.isnan(_torch_round(np.array([np.nan]), nf.FP8_E4M3)).all()
    _assert_same(nf.round_to_format(np.concatenate([big, -big]), nf.FP8_E4M3), np.repeat([448.0, -448.0], big.size))
    # OFP8's non-saturating conversion (the module's "nan" mode): round first, then NaN above 448
    nonsat = nf.round_to_format([448, 463.9, 464, 464.1, 465, 500, np.inf], nf.FP8_E4M3, overflow="nan")
    _assert_same(nonsat, [448, 448, 448, np.nan, np.nan, np.nan, np.nan])
    with pytest.raises(ValueError):
        nf.round_to_format(1.0, nf.FP8_E4M3, overflow="inf")
    # E5M2: largest 57,344; the tie 61,440 rounds up (57,344's mantissa 11 is odd) into inf
    x = np.array([57344, 61439, 61440, 65536, 1e6])
    want = [57344, 57344, np.inf, np.inf, np.inf]
    _assert_same(_torch_round(x, nf.FP8_E5M2), want)
    _assert_same(nf.round_to_format(x, nf.FP8_E5M2), want)
    # fp16: largest 65,504; the tie 65,520 goes to inf
    x = np.array([65504, 65519, 65520, 70000])
    want = [65504, 65504, np.inf, np.inf]
    _assert_same(_torch_round(x, nf.FP16), want)
    _assert_same(nf.round_to_format(x, nf.FP16), want)
    assert nf.FP8_E4M3.overflow == "saturate" and nf.FP8_E5M2.overflow == nf.FP16.overflow == "inf"


@pytest.mark.parametrize("fmt", nf.FORMATS, ids=IDS)
def test_ulp_is_the_gap_to_torchs_next_value(fmt):
    rng = np.random.default_rng(7)
    x = np.exp2(rng.uniform(math.log2(fmt.smallest_subnormal), math.log2(fmt.largest) - 1, 400))
    r = _torch_round(x, fmt)
    r = r[r > 0]
    assert np.array_equal(nf.ulp(r, fmt), _next_up(r, fmt) - r)
    assert nf.ulp(1.0, fmt) == fmt.eps and nf.ulp(0.0, fmt) == fmt.smallest_subnormal


@pytest.mark.parametrize("fmt", nf.FORMATS, ids=IDS)
def test_relative_error_against_torch_and_the_unit_roundoff(fmt):
    rng = np.random.default_rng(11)
    x = np.exp2(rng.uniform(math.log2(fmt.smallest_normal), math.log2(fmt.largest) - 1, 500))
    x = x if fmt is nf.FP32 else x.astype(np.float32).astype(np.float64)
    ref = np.abs(_torch_round(x, fmt) - x) / x
    assert np.array_equal(nf.relative_error(x, fmt), ref)
    assert ref.max() <= fmt.unit_roundoff  # the normal range: at most 2^-(p+1)
    assert nf.relative_error(0.0, fmt) == 0.0


def test_representable_values_against_torchs_bit_patterns():
    one, four = (torch.tensor([1.0, 4.0], dtype=torch.bfloat16).view(torch.int16)).tolist()
    _assert_same(nf.representable_values(nf.BF16, 1.0, 4.0), _from_codes(list(range(one, four + 1)), nf.BF16))
    assert len(nf.representable_values(nf.BF16, 1.0, 4.0)) == 2 * 2**7 + 1
    n = int(torch.tensor(2 * nf.FP16.smallest_normal, dtype=torch.float16).view(torch.int16))
    _assert_same(
        nf.representable_values(nf.FP16, 1e-9, 2 * nf.FP16.smallest_normal), _from_codes(list(range(1, n + 1)), nf.FP16)
    )  # every subnormal, then the first normal binade
    for fmt in (nf.FP8_E4M3, nf.FP8_E5M2):
        v = _from_codes(list(range(1, 128)), fmt)
        _assert_same(nf.representable_values(fmt, 1e-12, 1e12), v[np.isfinite(v)])
    assert len(nf.representable_values(nf.FP8_E4M3, 1e-12, 1e12)) == 126  # 127 positive codes less NaN
    with pytest.raises(ValueError):
        nf.representable_values(nf.FP32, 1.0, 1e6)


# ------------------------------------------------------------------------------------------------- loss scaling


@pytest.mark.parametrize("scale", [1.0, 2.0**16, 2.0**24])
def test_gradient_fate_against_torch_fp16(scale):
    g = nf.seeded_gradient_magnitudes(4000, seed=3)
    h = torch.from_numpy(scale * g).to(torch.float16).to(torch.float64).abs()
    fate = nf.gradient_fate(g, nf.FP16, scale)
    finite = torch.isfinite(h)
    assert fate.overflow == (~finite).double().mean().item()
    assert fate.zero == (h == 0).double().mean().item()
    assert fate.subnormal == ((h > 0) & (h < nf.FP16.smallest_normal)).double().mean().item()
    assert fate.zero + fate.subnormal + fate.normal + fate.overflow == pytest.approx(1.0, abs=1e-12)


def test_loss_scaling_rescues_small_gradients_and_bf16_needs_none():
    g = nf.seeded_gradient_magnitudes(20000, seed=1)  # median 1e-6, 1.5 decades
    plain, scaled = nf.gradient_fate(g, nf.FP16), nf.gradient_fate(g, nf.FP16, 2.0**16)
    assert plain.zero > 0.1 and plain.normal < 0.2 and plain.overflow == 0.0
    assert scaled.zero < 1e-3 and scaled.normal > 0.95
    assert nf.gradient_fate(g, nf.BF16).normal == 1.0


def test_dynamic_loss_scaler_against_torchs_update_rule():
    gmax = nf.seeded_gradient_maxima(1500, seed=5, typical=1e-3, spike_prob=0.01)
    interval = 50
    run = nf.dynamic_loss_scaler(gmax, nf.FP16, growth_interval=interval)
    # the plain loop: the scaled gradient cast by torch to fp16, the scale updated by torch's own kernel
    scale = torch.tensor(2.0**16)  # GradScaler's default init_scale
    tracker = torch.zeros((), dtype=torch.int32)
    scales, skipped = [], []
    for g in gmax:
        scales.append(scale.item())
        inf = torch.tensor(float(g) * scale.item(), dtype=torch.float64).to(torch.float16).isinf()
        skipped.append(bool(inf))
        torch._amp_update_scale_(scale, tracker, inf.float(), 2.0, 0.5, interval)
    assert np.array_equal(run.scales, scales) and np.array_equal(run.skipped, skipped)
    assert run.final_scale == scale.item()
    assert 0 < run.skipped.sum() < len(gmax) and run.scales.max() > 2.0**16  # it both backed off and grew


def test_gradscaler_defaults_match_torch():
    import inspect

    params = inspect.signature(torch.amp.GradScaler.__init__).parameters
    defaults = inspect.signature(nf.dynamic_loss_scaler).parameters
    for name in ("init_scale", "growth_factor", "backoff_factor", "growth_interval"):
        assert defaults[name].default == params[name].default


# ------------------------------------------------------------------------------------------------- softmax


def test_naive_softmax_overflows_in_fp16_and_the_stable_one_does_not():
    x = np.array([[1.0, 5.0, 12.0], [0.5, -3.0, 2.0]])  # 12 > ln(65504) = 11.09
    xh = torch.tensor(x, dtype=torch.float16)
    e = torch.exp(xh)  # torch in fp16, no max subtracted
    naive_torch = (e / e.sum(dim=-1, keepdim=True)).double().numpy()
    assert np.isnan(naive_torch[0]).any() and np.isfinite(naive_torch[1]).all()
    naive = nf.softmax_naive(x, nf.FP16)
    _assert_same(np.isnan(naive), np.isnan(naive_torch))
    assert np.allclose(naive[1], naive_torch[1], rtol=2e-3)
    stable = nf.softmax_stable(x, nf.FP16)
    ref = torch.softmax(torch.tensor(x, dtype=torch.float64), dim=-1).numpy()
    assert np.allclose(stable, ref, rtol=4e-3, atol=1e-7)
    th = nf.exp_overflow_threshold(nf.FP16)
    assert torch.isinf(torch.exp(torch.tensor(th + 0.01, dtype=torch.float16)))
    assert torch.isfinite(torch.exp(torch.tensor(th - 0.01, dtype=torch.float16)))


def test_logsumexp_and_log_softmax_against_torch():
    x = np.array([[1000.0, 999.0, -5.0], [-1000.0, -1001.0, -1002.0], [0.1, 0.2, 0.3]])
    with np.errstate(over="ignore", divide="ignore"):
        assert not np.isfinite(np.log(np.exp(x).sum(axis=-1))).all()  # the naive form fails on rows 1 and 2
    t = torch.tensor(x)
    assert np.allclose(nf.logsumexp(x), torch.logsumexp(t, dim=-1).numpy(), rtol=1e-15, atol=0)
    assert np.allclose(nf.log_softmax(x), torch.log_softmax(t, dim=-1).numpy(), rtol=1e-13, atol=1e-13)


# ------------------------------------------------------------------------------------------------- running sums


@pytest.mark.parametrize(("increment", "start"), [(1.0, 0.0), (0.01, 0.0), (3.0, 0.0), (1e-3, 1.0), (0.1, 7.0)])
def test_bf16_running_sum_stalls_where_torch_does(increment, start):
    run = nf.running_sum(increment, nf.BF16, start)
    inc = torch.tensor(increment, dtype=torch.bfloat16)
    s = torch.tensor(start, dtype=torch.bfloat16)
    step, values = 0, [s.item()]
    while True:  # the plain loop: a bf16 addition per step, torch rounding
        step += 1
        nxt = s + inc
        values.append(nxt.item())
        if nxt == s:
            break
        s = nxt
    assert run.stall_step == step and run.stalled_at == s.item()
    assert np.array_equal(run.values, values)
    half_ulp = nf.ulp(run.stalled_at, nf.BF16) / 2
    assert float(nf.round_to_format(increment, nf.BF16)) <= half_ulp  # stalled: the increment is at most half an ulp
    # an fp32 accumulator over the same steps lands near the exact sum
    acc = torch.tensor(start, dtype=torch.float32)
    for _ in range(step):
        acc = acc + torch.tensor(increment, dtype=torch.float32)
    assert acc.item() == pytest.approx(run.exact, rel=1e-4)


def test_the_classic_stall_at_256_and_the_closed_form():
    run = nf.running_sum(1.0, nf.BF16)
    assert run.stalled_at == 256.0 and run.stall_step == 257  # 256 additions reach 256, the 257th is lost
    for k in range(-10, 4):
        inc = 2.0**k
        assert nf.running_sum(inc, nf.BF16, max_steps=5000).stalled_at == nf.stall_value(inc, nf.BF16)
    assert nf.running_sum(1.0, nf.FP32, max_steps=1000).stall_step is None


def test_update_is_lost_against_torch_bf16():
    w = np.array([1.0, 1.0, 1.0, 1.0, 100.0, 100.0])
    dw = np.array([1e-3, 3e-3, 4e-3, 1e-2, 0.2, 0.3])
    wt = torch.tensor(w, dtype=torch.bfloat16)
    ref = ((wt + torch.tensor(dw, dtype=torch.float32)).to(torch.bfloat16) == wt).numpy()
    assert np.array_equal(nf.update_is_lost(w, dw, nf.BF16), ref)
    assert ref.tolist() == [True, True, False, False, True, False]  # below about 2^-8 = 0.39% of w: lost


# ------------------------------------------------------------------------------------------------- cold import


def test_numpy_functions_do_not_import_torch():
    probe = (
        "import sys\n"
        "from core import number_formats as nf\n"
        "for f in nf.FORMATS:\n"
        "    nf.round_to_format([1e-6, 1.0, 1e6], f); nf.ulp(1.0, f); nf.relative_error(3.0, f)\n"
        "nf.decode_codes(nf.FP8_E4M3); nf.representable_values(nf.BF16, 1, 8)\n"
        "nf.gradient_fate(nf.seeded_gradient_magnitudes(100), nf.FP16, 2**16)\n"
        "nf.dynamic_loss_scaler(nf.seeded_gradient_maxima(100), growth_interval=10)\n"
        "nf.softmax_naive([1, 20], nf.FP16); nf.softmax_stable([1, 20], nf.FP16); nf.logsumexp([1, 2])\n"
        "nf.running_sum(1.0); nf.update_is_lost(1.0, 1e-3)\n"
        "print('torch' in sys.modules)\n"
    )
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "False"
