"""The GRPO page in AppTest: worked example C by default, a click on a bar flips that reward, every mode rescales,
links reproduce a group, bad links and typed lists fall back to the default group with a message."""

import json
import math

import numpy as np
import pytest

from tests.apptest import (
    BAD_LINK_VALUES,
    charts,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
    trace,
    trigger,
)
from views import grpo as view_of

PAGE = "pages/4_GRPO.py"
EXAMPLE_C = [1, 0, 0, 1, 1, 0, 0, 0]


def _bars(at) -> np.ndarray:
    """The advantages drawn as bars (trace 1 of the first figure)."""
    return decode(trace(figures(at)[0], "advantage")["y"])


def _click(at, i: object):
    """What the browser sends when answer ``i``'s bar is clicked (the live chart's ``click`` event names the point
    index, which is the answer index on both bar traces), then a rerun."""
    return trigger(at, charts(at)[0], "click", json.dumps({"point": i, "trace": 1, "at": 1}))


def test_default_is_worked_example_c(default):
    m = metrics(default)
    assert m["Mean reward"] == "0.375"
    assert m["Std (÷G)"] == "0.484"
    assert m["Correct answers"] == "3 of 8"
    assert m["Push up / down"] == "+1.29 / −0.77"
    assert m["Mode factor"] == "× 1"
    assert default.warning.len == 0 and default.info.len == 0
    np.testing.assert_allclose(_bars(default).round(2), [1.29, -0.77, -0.77, 1.29, 1.29, -0.77, -0.77, -0.77])
    bars_fig = figures(default)[0]
    assert bars_fig["layout"]["clickmode"] == "event+select"
    assert decode(trace(bars_fig, "answer slot")["customdata"])[:, 0].tolist() == list(range(8))
    assert len(figures(default)) == 2  # the bars and the open tab's difficulty figure, nothing else
    assert "sample std multiplies them by 0.9354" in default.caption[0].value


def test_clicking_a_bar_flips_that_reward():
    at = open_page(PAGE)
    chart_before = charts(at)[0].id
    _click(at, 7)  # answer 8: wrong -> correct
    assert no_exception(at)
    assert at.text_input(key="rewards").value == "1,0,0,1,1,0,0,1"
    assert at.query_params["rewards"] == "1,0,0,1,1,0,0,1"  # the link follows the click
    assert metrics(at)["Correct answers"] == "4 of 8"
    np.testing.assert_allclose(_bars(at), [1, -1, -1, 1, 1, -1, -1, 1])
    assert charts(at)[0].id == chart_before  # the chart stays mounted; a click is an event, gone after its rerun
    at.run()  # a plain rerun (another control, a resize) leaves the group alone
    assert at.text_input(key="rewards").value == "1,0,0,1,1,0,0,1"
    _click(at, 7)  # and clicking the same bar again flips it back
    assert at.text_input(key="rewards").value == "1,0,0,1,1,0,0,0"
    np.testing.assert_allclose(_bars(at).round(2), [1.29, -0.77, -0.77, 1.29, 1.29, -0.77, -0.77, -0.77])


def test_empty_or_odd_selections_change_nothing(default):
    at = open_page(PAGE)
    for i in (None, 99, -1, "3", 2.5):
        _click(at, i)
        assert no_exception(at) and at.text_input(key="rewards").value == "1,0,0,1,1,0,0,0"
        np.testing.assert_array_equal(_bars(at), _bars(default))


def test_click_and_preset_after_a_deep_link_raise_no_link_warning():
    at = open_page(PAGE, {"r": "1,0,1", "std": "sample"})  # the old name of `rewards` still works
    assert at.text_input(key="rewards").value == "1,0,1" and at.warning.len == 0
    assert dict(at.query_params) == {"rewards": "1,0,1", "std": "sample"}
    _click(at, 1)
    assert at.text_input(key="rewards").value == "1,1,1" and at.warning.len == 0
    assert at.query_params["rewards"] == "1,1,1" and "r" not in at.query_params
    choose_preset(at, "GRPO", "One correct of 16").run()
    assert at.radio(key="std").value == "population" and at.warning.len == 0


def test_clicking_into_a_group_without_signal_and_out_again():
    at = open_page(PAGE, {"rewards": "1,1,1,0"})
    _click(at, 3)
    assert at.text_input(key="rewards").value == "1,1,1,1"
    assert np.all(_bars(at) == 0) and metrics(at)["Push up / down"] == "none"
    info = " ".join(i.value for i in at.info)
    assert "No learning signal" in info and "KL term" in info and "DAPO" in info
    _click(at, 0)  # a zero-height bar is still clickable through its full-height slot
    assert at.text_input(key="rewards").value == "0,1,1,1" and metrics(at)["Correct answers"] == "3 of 4"


@pytest.mark.parametrize(
    ("mode", "factor", "text"),
    [("sample", math.sqrt(7 / 8), "× 0.9354"), ("none", math.sqrt(0.375 * 0.625), "× 0.4841")],
)
def test_each_mode_rescales_the_bars(default, mode, factor, text):
    at = open_page(PAGE)
    at.radio(key="std").set_value(mode).run()
    assert no_exception(at)
    np.testing.assert_allclose(_bars(at), _bars(default) * factor, rtol=1e-12)
    assert metrics(at)["Mode factor"] == text
    y_range = figures(at)[0]["layout"]["yaxis"]["range"]
    assert y_range == figures(default)[0]["layout"]["yaxis"]["range"]  # a shared axis: the bars shrink


def test_eps_changes_the_scale(default):
    at = open_page(PAGE)
    at.select_slider(key="eps").set_value("0.1").run()
    scale = 1 / (math.sqrt(0.375 * 0.625) + 0.1)
    assert metrics(at)["Scale 1/(std + ε)"] == f"{scale:.4g}"
    np.testing.assert_allclose(_bars(at), (np.array(EXAMPLE_C) - 0.375) * scale, rtol=1e-12)


def test_the_eps_slider_under_the_bars_steps_through_every_eps(default):
    """The bars' slider (plotly's own: the chart takes clicks) has a step per ε choice, starts at the page's ε, and
    its step for ε = 0.1 carries the bars the page draws once ε is 0.1."""
    slider = slider_of(figures(default)[0])
    assert [s["label"] for s in slider["steps"]] == list(view_of.EPS)
    assert slider["active"] == 0 and slider["currentvalue"]["prefix"] == "ε added to the std = "
    step = slider["steps"][list(view_of.EPS).index("0.1")]
    assert step["method"] == "update" and step["args"][2] == [0, 1]
    scale = 1 / (math.sqrt(0.375 * 0.625) + 0.1)
    np.testing.assert_allclose(decode(step["args"][0]["y"][1]), (np.array(EXAMPLE_C) - 0.375) * scale, rtol=1e-12)
    at = open_page(PAGE)
    at.select_slider(key="eps").set_value("0.1").run()
    np.testing.assert_array_equal(_bars(at), decode(step["args"][0]["y"][1]))
    assert step["args"][0]["text"][1] == trace(figures(at)[0], "advantage")["text"]
    assert slider_of(figures(at)[0])["active"] == list(view_of.EPS).index("0.1")


def test_link_with_every_parameter_reproduces_the_group():
    query = {"rewards": "0.2,0.9,0.4,0.4,1", "std": "sample", "eps": "1e-4", "present": "true"}
    linked = open_page(PAGE, query)
    assert no_exception(linked) and linked.warning.len == 0
    typed = open_page(PAGE)
    typed.text_input(key="rewards").set_value("0.2, 0.9, 0.4, 0.4, 1")
    typed.radio(key="std").set_value("sample")
    typed.select_slider(key="eps").set_value("1e-4")
    typed.toggle(key="present").set_value(True)
    typed.run()
    np.testing.assert_array_equal(_bars(linked), _bars(typed))
    assert metrics(linked) == metrics(typed)
    assert metrics(linked)["Correct answers"] == "—"
    difficulty = figures(linked)[1]
    assert not any((t.get("name") or "").startswith("this group") for t in difficulty["data"])  # not 0/1 rewards


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ("abc", "is not a number"),
        ("nan", "not NaN or infinity"),
        ("1,nan,0", "not NaN or infinity"),
        ("inf,0", "not NaN or infinity"),
        ("1e400,0", "not NaN or infinity"),
        ("1", "between 2 and 64 answers; got 1"),
        (",".join(["1"] * 65), "got 65"),
        ("1e308,-1e308", "too large"),
        (" , ; ", "type between 2 and 64"),
    ],
)
def test_bad_rewards_fall_back_to_the_default_group(default, bad, message):
    at = open_page(PAGE, {"rewards": bad})
    assert no_exception(at)
    warnings = " ".join(w.value for w in at.warning)
    assert message in warnings and "worked example C" in warnings
    np.testing.assert_array_equal(_bars(at), _bars(default))
    assert metrics(at) == metrics(default)


@pytest.mark.parametrize("bad", [*BAD_LINK_VALUES, "mean"])
def test_bad_mode_and_eps_in_link_fall_back_with_a_message(default, bad):
    at = open_page(PAGE, {"std": bad, "eps": bad})
    assert no_exception(at)
    np.testing.assert_array_equal(_bars(at), _bars(default))
    texts = " ".join(w.value for w in at.warning)
    assert f"std={bad}" in texts
    if bad != "0":  # eps=0 is a valid choice
        assert f"eps={bad}" in texts


def test_typed_garbage_is_reported_and_the_default_group_shown(default):
    at = open_page(PAGE)
    at.text_input(key="rewards").set_value("1, 0, yes, 1").run()
    assert no_exception(at)
    assert any("reward 3 ('yes') is not a number" in w.value for w in at.warning)
    np.testing.assert_array_equal(_bars(at), _bars(default))
    _click(at, 1)  # a click then acts on the group shown, and repairs the text
    assert at.text_input(key="rewards").value == "1,1,0,1,1,0,0,0" and at.warning.len == 0


@pytest.mark.parametrize(
    ("preset", "bars", "extra"),
    [
        ("Worked example C (3 of 8 correct)", [1.29, -0.77, -0.77, 1.29, 1.29, -0.77, -0.77, -0.77], {}),
        ("All correct (no signal)", [0, 0, 0, 0], {"Push up / down": "none", "Correct answers": "4 of 4"}),
        ("One correct of 16", [3.87] + [-0.26] * 15, {"Push up / down": "+3.87 / −0.26"}),
        ("Nearly equal scores (tiny std)", [-0.38] * 7 + [2.65], {"Scale 1/(std + ε)": "3,024"}),
    ],
)
def test_presets(preset, bars, extra):
    at = open_page(PAGE, {"std": "none", "eps": "0.1"})
    choose_preset(at, "GRPO", preset).run()
    assert no_exception(at)
    np.testing.assert_allclose(_bars(at).round(2), bars)
    assert at.radio(key="std").value == "population" and at.select_slider(key="eps").value == "0"
    m = metrics(at)
    for label, value in extra.items():
        assert m[label] == value


def test_tabs_hold_difficulty_table_and_batch_contrast(default):
    assert [t.label for t in default.tabs] == ["Which prompts teach?", "PPO vs GRPO", "Within group vs batch"]
    difficulty = figures(default)[1]
    marker = trace(difficulty, "this group: P(signal)")
    assert marker["x"] == [0.375] and marker["y"][0] == pytest.approx(1 - 0.375**8 - 0.625**8, abs=1e-3)
    assert default.table.len == 0  # the closed tabs' tables are not built
    ppo = open_page(PAGE, {"grpo_view": "PPO vs GRPO"})  # a link opens a tab, and only its parts are built
    assert no_exception(ppo) and ppo.warning.len == 0 and len(figures(ppo)) == 2
    table = ppo.table[0].value
    assert list(table.columns) == ["PPO", "GRPO"] and "Models in memory" in table.index
    batch = open_page(PAGE, {"grpo_view": "Within group vs batch"})
    assert no_exception(batch) and len(figures(batch)) == 2
    contrast = figures(batch)[1]
    across = decode(trace(contrast, "across the batch")["y"]).reshape(3, 8)
    assert np.all(across[1] > 0) and np.all(across[2] < 0)  # the mistake: easy prompts pushed up wholesale
    weights = batch.table[0].value
    assert weights["tokens |o_i|"].tolist() == [100, 200, 400, 1600]
    assert metrics(batch) == metrics(default)


def test_presenter_mode_folds_the_equation_and_explanations():
    at = open_page(PAGE, {"present": "true"})
    assert no_exception(at)
    labels = [e.label for e in at.expander]
    assert "The equation" in labels and "What the figure shows" in labels


def test_answers_are_hidden_until_revealed(default):
    labels = [e.label for e in default.expander]
    assert "Reveal the answer" in labels and "Reveal a 60-90 second answer" in labels


def test_csv_downloads_present(default):
    labels = [b.proto.label for b in default.get("download_button")]
    assert any("Group" in label for label in labels) and any("Difficulty" in label for label in labels)
