"""The number-formats view without Streamlit: what each format stores for x against torch's own casts, the drag over
the log grid (every step's panel the page would show at that x), the overflow behaviour the page states (E4M3
saturates at 448 in torch's CPU cast, fp16 and E5M2 go to inf), the loss-scaling tab, softmax and the running sum,
Predict first, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from views import Options
from views import number_formats as view_of

ALL = Options(parts=frozenset({"main", *view_of.VIEWS}))
DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "fp8 E4M3": torch.float8_e4m3fn,
          "fp8 E5M2": torch.float8_e5m2}  # fmt: skip


def _torch(x: float, name: str) -> float:
    return float(torch.tensor(x, dtype=torch.float64).to(DTYPES[name]).to(torch.float64))


def _readouts(view) -> dict[str, str]:
    return {r.label: r.value for r in view.readouts}


@pytest.mark.parametrize("x", ["1e-08", "1e-07", "0.1", "500", "50000", "100000"])
def test_each_format_stores_what_torch_stores(x):
    view = view_of.figures(view_of.SPEC.state({"fmt_x": x}))
    for name in DTYPES:
        want, got = _torch(float(x), name), view.facts["rounded"][name]
        assert (math.isnan(want) and math.isnan(got)) or want == got, (x, name, want, got)


def test_an_overflowing_cast_saturates_in_e4m3_and_goes_to_inf_in_fp16_and_e5m2():
    r = _readouts(view_of.figures(view_of.SPEC.state({"fmt_x": "100000"})))
    assert r["fp8 E4M3 stores"] == "448 (saturated)" and _torch(1e5, "fp8 E4M3") == 448.0
    assert r["fp16 stores"] == r["fp8 E5M2 stores"] == "∞ (overflow)"
    assert math.isinf(_torch(1e5, "fp16")) and math.isinf(_torch(1e5, "fp8 E5M2"))


def test_the_default_readouts_and_the_bf16_error():
    view = view_of.figures(view_of.SPEC.defaults())
    bf = _torch(0.1, "bf16")
    assert bf == 205 / 2**11  # 0.1 = 1.6 · 2⁻⁴, the significand 1.6 · 2⁷ = 204.8 rounds to 205
    assert _readouts(view)["bf16 relative error at x"] == f"{100 * abs(bf - 0.1) / 0.1:.3g}%" == "0.0977%"


def test_the_drag_covers_the_grid_and_each_step_shows_its_panel():
    view = view_of.figures(view_of.SPEC.defaults())
    drag = view.drags["main"]
    assert drag.field == "fmt_x" and drag.values == view_of.X_CHOICES
    fig = view.figures["main"]
    steps = fig.layout.sliders[0].steps
    assert len(steps) == len(view_of.X_CHOICES) and fig.layout.sliders[0].active == view_of.X_CHOICES.index("0.1")
    for choice, step in zip(view_of.X_CHOICES, steps, strict=True):
        assert step.args[1]["annotations[0].text"].startswith(f"<b>x = {choice}</b>")
        # the step's panel is the panel the page draws when x is that step's value
        at = view_of.figures(view_of.SPEC.state({"fmt_x": choice})).figures["main"]
        assert at.layout.annotations[0].text == step.args[1]["annotations[0].text"]


def test_loss_scaling_moves_gradients_out_of_the_underflow():
    shares = []
    for k in (0, 10):
        view = view_of.figures(view_of.SPEC.state({"fmt_view": view_of.LOSS, "fmt_scale_log2": k}), ALL)
        f = view.facts["fate"]
        assert f.zero + f.subnormal + f.normal + f.overflow == pytest.approx(1.0)
        shares.append(f.normal)
        assert view.facts["bf16_zero"] == 0.0  # bf16 has fp32's range: the toy's gradients do not flush
    assert shares[1] > shares[0] + 0.5
    assert view_of.LOSS in view.figures


def test_naive_softmax_overflows_in_fp16_above_ln_65504_and_the_stable_one_does_not():
    for top, overflows in ((8.0, False), (12.0, True)):
        view = view_of.figures(view_of.SPEC.state({"fmt_view": view_of.SOFTMAX, "fmt_logit_top": top}), ALL)
        assert bool(np.isnan(view.facts["naive"]).any()) == overflows == (top > math.log(65504))
        assert np.isfinite(view.facts["stable"]).all() and view.facts["stable"].sum() == pytest.approx(1, abs=2e-3)


def test_a_bf16_sum_of_ones_stops_at_256():
    view = view_of.figures(view_of.SPEC.state({"fmt_view": view_of.SUM, "fmt_increment": "1"}), ALL)
    s = torch.tensor(256.0, dtype=torch.bfloat16)
    assert bool(s + 1 == s) and not bool(s - 1 + 1 == s - 1)
    assert view.facts["stall"] == (257, 256.0)  # the 257th addition is the first that leaves the sum unchanged


def test_predict_first_hides_the_answer_then_reveals_it():
    hidden = view_of.figures(view_of.SPEC.state({"predict_fmt": True}))
    assert hidden.facts["predict"] == "hidden" and "main" not in hidden.drags
    assert all(r.value == "?" for r in hidden.readouts)
    assert "0.0977" not in hidden.figures["main"].to_json()
    shown = view_of.figures(view_of.SPEC.state({"predict_fmt": True, "guess_fmt_err": 0.4}))
    r = _readouts(shown)
    assert r["bf16 relative error at x (the answer)"] == "0.0977%" and r["Your guess"] == "0.4%"
    assert r["Error"] == f"{0.4 - 0.09765625:+.3g} points"


def test_bad_input_gives_the_defaults_not_an_exception():
    state, problems = view_of.SPEC.parse({"fmt_x": "7", "fmt_increment": "2", "fmt_view": "nope"})
    assert problems
    view = view_of.figures(state, ALL)
    assert view.figures["main"] is view.figures[view_of.LINE]
