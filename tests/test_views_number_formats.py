"""The number-formats view without Streamlit: what each format stores for x against torch's own casts, the drag over
the log grid (every step's panel the page would show at that x), the overflow behaviour the page states (E4M3
saturates at 448 in torch's CPU cast, fp16 and E5M2 go to inf), the loss-scaling tab, softmax and the running sum,
Predict first, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from core import number_formats_data as nfd
from core import tiny_gpt
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
    # what each format stores at x is held back; where the tiny GPT's numbers sit does not depend on x and stays
    formats = [r for r in hidden.readouts if r.label.startswith(("bf16", "fp16", "fp8"))]
    assert len(formats) == 4 and all(r.value == "?" for r in formats)
    assert all(r.value != "?" for r in hidden.readouts if r not in formats)
    assert "0.0977" not in hidden.figures["main"].to_json()
    # the other tabs' readouts do not hold the answer: shown, though their labels start with a format's name
    for tab in (view_of.LOSS, view_of.SOFTMAX, view_of.SUM):
        other = view_of.figures(view_of.SPEC.state({"predict_fmt": True, "fmt_view": tab}))
        assert other.facts["predict"] == "hidden" and other.readouts
        assert all(r.value != "?" for r in other.readouts), tab
    shown = view_of.figures(view_of.SPEC.state({"predict_fmt": True, "guess_fmt_err": 0.4}))
    r = _readouts(shown)
    assert r["bf16 relative error at x (the answer)"] == "0.0977%" and r["Your guess"] == "0.4%"
    assert r["Error"] == f"{0.4 - 0.09765625:+.3g} points"


def test_bad_input_gives_the_defaults_not_an_exception():
    state, problems = view_of.SPEC.parse({"fmt_x": "7", "fmt_increment": "2", "fmt_view": "nope"})
    assert problems
    view = view_of.figures(state, ALL)
    assert view.figures["main"] is view.figures[view_of.LINE]


# ------------------------------------------------------------------ the tiny GPT's magnitudes on the number line


def _shipped() -> dict[str, np.ndarray]:
    with np.load(nfd.DATA, allow_pickle=False) as z:
        return {k: np.asarray(z[k]) for k in z.files}


def test_the_shipped_magnitudes_file_holds_ordered_percentiles_and_shares():
    d = _shipped()
    assert (float(d["steps"]), float(d["batch"]), float(d["lr"])) == (60.0, 32.0, 3e-4)
    assert list(d["percentiles"]) == [0.1, 1.0, 50.0, 99.0, 99.9]
    assert list(d["thresholds"]) == [2.0**-133, 2.0**-126, 2.0**-24, 2.0**-14]
    with np.load(tiny_gpt.CHECKPOINT_PATH) as z:
        n_params = sum(z[k].size for k in z.files if k.startswith("param/"))
    # the linear layers' inputs per token: 4 blocks x (W_qkv's, W_o's, W_1's: d each; W_2's: 4d) + the head's d
    assert float(d["act/n"]) == 32 * 128 * (4 * 7 * 128 + 128)
    assert float(d["grad/n"]) == float(d["v/n"]) == n_params
    for key in ("act", "grad", "v"):
        pct = d[f"{key}/pct"]
        assert np.all(np.diff(pct) > 0) and pct[0] > 0, key
        below = d[f"{key}/below"]
        assert np.all(np.diff(below) >= 0) and 0 <= below[0] and below[-1] <= 1, key
        # the share a cast to fp16 rounds to zero lies under the share below its smallest subnormal
        assert float(d[f"{key}/fp16_zero"]) <= below[2] and 0 <= float(d[f"{key}/zero"]) < 1e-3, key
        assert d[f"{key}/hist"].sum() == pytest.approx(float(d[f"{key}/n"]) * (1 - float(d[f"{key}/zero"])))
    # Adam's v is an average of g²: its median sits within a small factor of the gradients' median squared
    assert 0.5 < d["v/pct"][2] / d["grad/pct"][2] ** 2 < 4


def test_the_command_at_a_small_scale_writes_the_same_keys(tmp_path):
    out = tmp_path / "fmt.npz"
    nfd.build(out, steps=2, batch=2, log=lambda _: None)
    with np.load(out) as z:
        assert set(z.files) == set(_shipped())
        assert float(z["act/n"]) == 2 * 128 * (4 * 7 * 128 + 128) and float(z["steps"]) == 2
        assert np.all(np.diff(z["v/pct"]) > 0) and np.all(np.diff(z["act/pct"]) > 0)


def test_one_step_v_is_one_minus_beta2_times_g_squared_and_activations_are_the_linear_inputs():
    raw = nfd.collect(steps=1, batch=2)
    beta2 = nfd.BETAS[1]
    for name, g in raw["grad"].items():
        # torch's exp_avg_sq after one step from zero: v_1 = (1 − β2) g_1² (the gradient AdamW received)
        np.testing.assert_allclose(raw["v"][name], (1 - beta2) * g.astype(np.float64) ** 2, rtol=1e-5, atol=0)
    # the first linear input: the first block's RMSNorm of the embedded batch, from the checkpoint in numpy
    params, cfg, _ = tiny_gpt.load_checkpoint()
    train, _ = tiny_gpt.split_bytes(tiny_gpt.corpus_bytes())
    starts = np.random.default_rng(nfd.SEED).integers(0, len(train) - cfg.ctx - 1, size=2)
    ids = train.astype(np.int64)[starts[:, None] + np.arange(cfg.ctx)]  # (2, ctx) the inputs
    x = params["wte"][ids].astype(np.float64)
    normed = x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * params["h0.norm1"]
    first = raw["act"][: normed.size]
    np.testing.assert_allclose(first, normed.ravel(), rtol=1e-4, atol=1e-6)
    assert raw["act"].size == 2 * cfg.ctx * (cfg.n_layer * 7 * cfg.d_model + cfg.d_model)


def test_the_bands_are_the_shipped_percentiles_and_the_same_at_every_drag_step():
    d = _shipped()
    default = view_of.figures(view_of.SPEC.defaults()).figures["main"]
    names = [t.name for t in default.data]
    assert names[-2:] == ["this project's tiny GPT: 1st to 99th percentile", "median"]
    bands, medians = default.data[-2], default.data[-1]
    assert list(medians.text) == ["activations", "weight gradients", "Adam's v"]
    for i, key in enumerate(("act", "grad", "v")):
        assert (bands.x[3 * i], bands.x[3 * i + 1]) == (d[f"{key}/pct"][1], d[f"{key}/pct"][3])
        assert medians.x[i] == d[f"{key}/pct"][2]
        assert view_of.X_RANGE[0] < d[f"{key}/pct"][1] and d[f"{key}/pct"][3] < view_of.X_RANGE[1]
    steps = default.layout.sliders[0].steps
    # every step restyles the line at x and the markers at x only, never the bands
    assert all(list(s.args[2]) == [names.index("x"), names.index("spacing at x")] for s in steps)
    for choice in ("1e-08", "100000"):
        at = view_of.figures(view_of.SPEC.state({"fmt_x": choice})).figures["main"]
        assert [t.name for t in at.data] == names
        assert at.data[-2].to_plotly_json() == bands.to_plotly_json()
        assert at.data[-1].to_plotly_json() == medians.to_plotly_json()


def test_the_magnitude_readouts_read_the_shipped_shares():
    d = _shipped()
    r = _readouts(view_of.figures(view_of.SPEC.defaults()))
    assert r["Tiny GPT: weight gradients below fp16's smallest normal 2⁻¹⁴"] == f"{100 * d['grad/below'][3]:.3g}%"
    assert r["Tiny GPT: Adam's v below fp16's smallest subnormal 2⁻²⁴"] == f"{100 * d['v/below'][2]:.3g}%"
    assert r["Tiny GPT: any of the three below bf16's smallest normal 2⁻¹²⁶"] == "0%"
