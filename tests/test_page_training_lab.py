"""The training lab in AppTest: it renders the shipped good run with its numbers, the controls move the readouts,
links reproduce it, bad links give a message and the defaults, presets load their shipped curves, dark theme and
presenter mode, hidden answers; Run trains a tiny step count live (a few seconds, torch imported on the click), the
same settings are not trained twice, Stop with nothing running says so, a second session gets the lock's message."""

import math

import pytest

from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    assert_link_reproduces,
    choose_preset,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
)
from views import training_lab as view_of

PAGE = "pages/19_Training_lab.py"
GOOD = view_of.shipped()[view_of.lab.DEFAULT.key()]


def test_default_shows_the_shipped_good_run(default):
    m = metrics(default)
    assert m["Held-out loss, last evaluation"] == f"{GOOD.val_loss[-1] / math.log(2):.2f} bits/byte"
    assert m["Curve"] == "shipped"
    fig = figures(default)[0]
    assert [t["name"] for t in fig["data"][:3]] == ["train loss", "held-out loss", "gradient norm, whole model"]
    assert len(slider_of(fig)["steps"]) == 8  # the drag row over the sweep


@pytest.mark.parametrize(
    ("widget", "key", "value", "lr"),
    [("select_slider", "lab_lr", "1e-2", 1e-2), ("select_slider", "lab_lr", "1e-4", 1e-4)],
)
def test_the_learning_rate_moves_the_readouts(reused, widget, key, value, lr):
    c = view_of.shipped()[view_of.lab.Settings(lr=lr).key()]
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        assert metrics(at)["Held-out loss, last evaluation"] == f"{c.val_loss[-1] / math.log(2):.2f} bits/byte"


def test_unshipped_settings_say_press_run(reused):
    with reused.change("segmented_control", "lab_batch", "8") as at:
        assert no_exception(at)
        assert any("Not precomputed: press Run" in i.value for i in at.info)
        assert metrics(at)["Curve"] == "nearest shipped"


def test_link_reproduces_the_figure():
    query = {"lab_lr": "3e-2", "lab_clip": "off"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["Curve"] == "nearest shipped"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES[:3])
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"lab_lr": bad, "lab_layers": bad})
    assert_bad_link_falls_back(at, default, bad)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads_its_shipped_curve(name):
    at = open_page(PAGE)
    choose_preset(at, "Training_lab", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert metrics(at)["Curve"] == "shipped", name


def test_run_trains_live_then_serves_the_cache_and_stop_says_nothing_runs():
    at = open_page(PAGE, {"lab_steps": "10", "lab_warmup": "0", "lab_seed": "7"})
    at.button(key="lab_run").click().run(timeout=60)
    assert no_exception(at)
    assert metrics(at)["Curve"] == "live run"
    at.button(key="lab_run").click().run()  # the same settings: the cached curve, no second run
    assert any("trained already" in i.value for i in at.info)
    at.button(key="lab_stop_button").click().run()
    assert any("Nothing is running" in i.value for i in at.info)


def test_a_second_session_gets_the_locks_message():
    at = open_page(PAGE, {"lab_steps": "20", "lab_warmup": "0", "lab_seed": "8"})
    assert view_of.RUN_LOCK.acquire(blocking=False)  # another session's run holds the process-wide lock
    try:
        at.button(key="lab_run").click().run()
        assert no_exception(at)
        assert any("Another session is training" in w.value for w in at.warning)
        assert metrics(at)["Curve"] == "nearest shipped"
    finally:
        view_of.RUN_LOCK.release()
