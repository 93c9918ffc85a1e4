"""The scaling page in AppTest: it renders, every control moves the figure, links reproduce it, bad links fall
back to the defaults with a message."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
    trace,
)

PAGE = "pages/1_Scaling_laws.py"
ROOT = Path(__file__).resolve().parents[1]


def _u_curve(at) -> tuple[np.ndarray, np.ndarray, str, int]:
    fig = figures(at)[0]
    curve = trace(fig, "L(N, C/6N)")
    readout = fig["layout"]["annotations"][0]["text"]
    return decode(curve["x"]), decode(curve["y"]), readout, slider_of(fig)["active"]


def test_default_is_predict_question_one(default):
    m = metrics(default)
    assert m["Loss L(N, D)"] == "2.388"
    assert m["Tokens per parameter"] == "2.0"
    assert m["Fit's optimum N"] == "1.98B" and m["20-tokens rule N"] == "3.16B"
    helps = {m.label: m.proto.help for m in default.metric}
    assert "on 101B tokens, loss 2.311" in helps["Fit's optimum N"]
    assert "on 63.2B tokens, loss 2.318" in helps["20-tokens rule N"]
    assert default.warning.len == 0
    x, y, readout, active = _u_curve(default)
    assert x.shape == (241,) and np.all(np.isfinite(y))
    assert "N = 10.0B params" in readout and "2.0 tokens/param" in readout
    slider = slider_of(figures(default)[0])
    assert slider["steps"][active]["args"][0]["x"] == [[1e10]]
    assert len(slider["steps"]) == 98  # 97 log-spaced steps plus the plan itself


def test_home_page_renders_and_links_the_scaling_page():
    at = open_page(None)
    assert no_exception(at)
    assert any("Scaling" in str(link.proto.label) for link in at.get("page_link"))
    assert "torch" not in "".join(m.value for m in at.markdown)  # the home page itself has no torch in it


@pytest.mark.parametrize(
    ("widget", "key", "value"),
    [
        ("selectbox", "fit", "Epoch AI 2024"),
        ("number_input", "C", 5e22),
        ("number_input", "N", 3e9),
        ("segmented_control", "budget", "Hardware"),
    ],
)
def test_each_plot_control_changes_the_figure(default, reused, widget, key, value):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        before, after = _u_curve(default), _u_curve(at)
        assert not (
            np.array_equal(before[0], after[0]) and np.array_equal(before[1], after[1]) and before[2] == after[2]
        )


@pytest.mark.parametrize(
    ("widget", "key", "value"),
    [("selectbox", "gpu", "A100"), ("number_input", "gpus", 64.0), ("slider", "mfu", 20)],
)
def test_hardware_controls_change_training_time(widget, key, value):
    at = open_page(PAGE)
    base_time = metrics(at)["Training time"]
    base_readout = _u_curve(at)[2]
    getattr(at, widget)(key=key).set_value(value).run()
    assert metrics(at)["Training time"] != base_time
    assert _u_curve(at)[2] != base_readout  # the in-figure readout carries the training time


def test_hardware_budget_mode_uses_the_planner():
    at = open_page(PAGE, {"budget": "Hardware", "gpus": "8", "hours": "24.0", "mfu": "40", "N": "1.5e9"})
    assert no_exception(at)
    m = metrics(at)
    assert m["Budget C (FLOPs)"] == "2.73×10²⁰"
    assert m["Loss L(N, D)"] == "2.475" and m["Training time"] == "24.0 h" and m["Training states"] == "24.0 GB"
    at.number_input(key="hours").set_value(48.0).run()
    assert metrics(at)["Budget C (FLOPs)"] == "5.47×10²⁰"


def test_link_with_every_parameter_reproduces_the_figure():
    query = {
        "fit": "Epoch AI 2024",
        "budget": "FLOPs",
        "C": "3e+22",
        "N": "2e+09",
        "gpu": "A100",
        "gpus": "128",
        "hours": "100.0",
        "mfu": "35",
        "present": "true",
    }
    linked = open_page(PAGE, query)
    assert no_exception(linked) and linked.warning.len == 0
    clicked = open_page(PAGE)
    clicked.selectbox(key="fit").set_value("Epoch AI 2024")
    clicked.number_input(key="C").set_value(3e22)
    clicked.number_input(key="N").set_value(2e9)
    clicked.selectbox(key="gpu").set_value("A100")
    clicked.number_input(key="gpus").set_value(128.0)
    clicked.slider(key="mfu").set_value(35)
    clicked.toggle(key="present").set_value(True)
    clicked.run()
    for a, b in zip(_u_curve(linked), _u_curve(clicked), strict=True):
        assert np.array_equal(a, b)
    assert metrics(linked) == metrics(clicked)


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    assert_bad_link_falls_back(open_page(PAGE, {"C": bad, "N": bad, "mfu": bad, "gpus": bad}), default, bad)


def test_unknown_parameter_and_bad_choice_are_reported():
    at = open_page(PAGE, {"fit": "kaplan2020", "colour": "red"})
    assert no_exception(at)
    texts = " ".join(w.value for w in at.warning)
    assert "`fit=kaplan2020`, which is not a valid value here" in texts
    assert "Ignored the unknown link parameter `colour=red`: this page has no such control." in texts
    assert "colour" not in at.query_params and "fit" not in at.query_params  # both leave the link


@pytest.mark.parametrize(
    ("preset", "loss", "extra"),
    [
        ("Predict Q1: 10B params on 20B tokens", "2.388", {"Tokens per parameter": "2.0"}),
        ("Worked example A: 8 H100 for 24 h", "2.475", {"Training time": "24.0 h", "Training states": "24.0 GB"}),
        ("Example A over-trained: 0.5B params", "2.489", {"Tokens per parameter": "182.3"}),
        ("Llama 3 8B on 15T tokens", None, {"Tokens per parameter": "1,875.0"}),
        ("Check yourself: 7B on 2T tokens", None, {"Budget C = 6ND (FLOPs)": "8.40×10²²"}),
    ],
)
def test_presets(reused, preset, loss, extra):
    with reused.preset(preset) as at:
        assert no_exception(at)
        m = metrics(at)
        if loss:
            assert m["Loss L(N, D)"] == loss
        for label, value in extra.items():
            assert m[label] == value


def test_check_yourself_gpu_days_in_help():
    at = open_page(PAGE)
    choose_preset(at, "Scaling_laws", "Check yourself: 7B on 2T tokens").run()
    help_text = next(m.proto.help for m in at.metric if m.label == "Training time")
    assert "2,458 GPU-days" in help_text  # the lesson's "about 2,460"


def test_presenter_mode_folds_the_equation():
    at = open_page(PAGE, {"present": "true"})
    assert no_exception(at)
    assert any(e.label == "The equation" for e in at.expander)
    normal = open_page(PAGE)
    assert not any(e.label == "The equation" for e in normal.expander)


def test_answers_are_hidden_until_revealed(default):
    labels = [e.label for e in default.expander]
    assert "Reveal the answer" in labels and "Reveal a 60-90 second answer" in labels


def test_csv_downloads_present(default):
    labels = [b.proto.label for b in default.get("download_button")]
    assert any("U-curve" in label for label in labels) and any("Budget family" in label for label in labels)


def test_a_preset_after_a_deep_link_raises_no_false_warning():
    at = open_page(PAGE, {"C": "3e+22", "N": "2e+09"})
    assert at.warning.len == 0
    choose_preset(at, "Scaling_laws", "Llama 3 8B on 15T tokens").run()
    assert no_exception(at) and at.warning.len == 0
    assert metrics(at)["Tokens per parameter"] == "1,875.0"


def test_the_page_imports_neither_pandas_nor_torch_until_asked():
    # pandas takes about 0.6 s to import and torch about 1.8 s; the scaling page builds its tables only when a
    # download button is clicked and counts FLOPs with torch only when its own button is clicked, so neither its
    # first run (a cold start) nor a control change should pay for them (README, Cold start)
    code = (
        "import sys; from streamlit.testing.v1 import AppTest; "
        "at = AppTest.from_file('app.py', default_timeout=60); at.switch_page('pages/1_Scaling_laws.py'); at.run(); "
        "at.number_input(key='gpus').set_value(64).run(); "
        "assert not at.exception, at.exception; before = 'pandas' in sys.modules; print('torch' in sys.modules); "
        "from views import scaling; view = scaling.figures(scaling.SPEC.defaults()); "
        "frame = view.tables['U-curve'](); print(before, 'pandas' in sys.modules, type(frame).__name__, len(frame))"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split()[-5:] == ["False", "False", "True", "DataFrame", "241"]  # the click: the next test


# The lesson's stack for the FLOP-counter check (seed 001, section 5), by hand: (fan_in, fan_out) of each bias-free
# linear layer, d -> 4d -> d twice, over T tokens. An (m × k) by (k × n) matmul costs 2·m·n·k FLOPs.
D_FLOP, T_FLOP = 64, 128
FLOP_LAYERS = [(D_FLOP, 4 * D_FLOP), (4 * D_FLOP, D_FLOP)] * 2


def _flops_by_hand() -> dict[str, int]:
    T = T_FLOP
    n = sum(a * b for a, b in FLOP_LAYERS)
    forward = sum(2 * T * b * a for a, b in FLOP_LAYERS)  # Y = X·Wᵀ: (T × a) by (a × b)
    weights = sum(2 * b * a * T for a, b in FLOP_LAYERS)  # dW = dYᵀ·X: (b × T) by (T × a)
    inputs = [2 * T * a * b for a, b in FLOP_LAYERS]  # dX = dY·W: (T × b) by (b × a)
    return {
        "N": n,
        "forward": forward,
        "backward": weights + sum(inputs),
        "frozen": weights + sum(inputs[1:]),  # x without grad: the first layer's dX is not computed
        "skipped": inputs[0],
    }


def test_the_flop_check_counts_on_click():
    at = open_page(PAGE)
    (section,) = [e for e in at.expander if e.label == "Check 6ND with torch's FLOP counter"]
    assert any("FlopCounterMode" in m.value for m in section.markdown)
    assert [b.label for b in section.button] == ["Count with torch"]
    assert "Parameters N" not in metrics(at) and not any(c.value for c in at.code)  # nothing before the click
    at.button(key="flops-count").click().run()
    assert no_exception(at)
    h = _flops_by_hand()
    N, T = h["N"], T_FLOP
    per_token = {k: h[k] / (N * T) for k in ("forward", "backward", "frozen")}
    expected = {
        "Parameters N": (
            f"{N:,}",
            f"{len(FLOP_LAYERS)} bias-free linear layers in {len(FLOP_LAYERS) // 2} blocks of "
            f"{D_FLOP} → {4 * D_FLOP} → {D_FLOP}: N = {N // D_FLOP**2}·d²",
        ),
        "Forward FLOPs per token ÷ N": (
            f"{per_token['forward']:.1f}",
            f"{h['forward']:,} FLOPs for {T} tokens: a multiply and an add per weight and token",
        ),
        "Backward FLOPs per token ÷ N": (
            f"{per_token['backward']:.1f}",
            f"{h['backward']:,} FLOPs: each layer does two matmuls the size of its forward one, for the gradient of "
            "its weights (dW = dYᵀX) and of its input (dX = dY·W)",
        ),
        "Backward ÷ N, x without grad": (
            f"{per_token['frozen']:.1f}",
            f"{h['frozen']:,} FLOPs: with requires_grad=False on x the first layer computes no gradient for its "
            f"input, {h['skipped']:,} FLOPs fewer. A layer deep inside a network needs it: the layers below learn "
            "from it.",
        ),
        "Training FLOPs per token ÷ N": (
            f"{per_token['forward'] + per_token['backward']:.1f}",
            "forward plus backward: the 6 of 6ND",  # 2 + 4, the formula's constant
        ),
    }
    shown = {m.label: (m.value, m.proto.help) for m in at.metric if m.label in expected}
    assert shown == expected
    assert [v for v, _ in shown.values()] == ["65,536", "2.0", "4.0", "3.5", "6.0"]  # the lesson's numbers
    assert [c.value for c in at.code if c.value] == [
        "with FlopCounterMode(display=False) as forward: y = model(x)  # forward.get_total_flops()"
    ]
    at.number_input(key="N").set_value(3e9).run()  # a rerun keeps the counts (session state and the cache)
    assert {m.label: (m.value, m.proto.help) for m in at.metric if m.label in expected} == expected
