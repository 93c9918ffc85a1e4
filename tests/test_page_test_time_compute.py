"""The test-time compute page in AppTest: it renders with the lesson's numbers, the controls move the readouts, links
reproduce it, bad links give a message and the defaults, presets load, each tab draws its figure."""

import pytest

from tests import ttc_reference as ref
from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    assert_link_reproduces,
    choose_preset,
    figures,
    metrics,
    no_exception,
    open_page,
)
from views import test_time_compute as view_of

PAGE = "pages/24_Test_time_compute.py"


def test_default_shows_best_of_n_with_its_peak(default):
    m = metrics(default)
    assert m["Best-of-n with a verifier"] == f"{1 - 0.9**16:.3f}"
    assert m["Gold score's peak"] == f"n* = {ref.peak_n()}"
    fig = figures(default)[0]
    assert len(fig["data"]) == 6  # two curves, one sample's p, the peak and two markers (the slider is the drag row)


@pytest.mark.parametrize(
    ("widget", "key", "value", "label", "expected"),
    [
        ("number_input", "ttc_p", 0.2, "Best-of-n with a verifier", f"{1 - 0.8**16:.3f}"),
        ("select_slider", "ttc_n", "64", "KL from the base policy", f"{ref.kl(64):.2f} nats"),
        ("number_input", "ttc_beta", 0.5, "Gold score's peak", f"n* = {ref.peak_n(1.0, 0.5)}"),
    ],
)
def test_each_control_changes_its_readout(reused, widget, key, value, label, expected):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        assert metrics(at)[label] == expected


def test_link_reproduces_the_figure():
    query = {"ttc_p": "0.25", "ttc_n": "128", "ttc_alpha": "1.5"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["Best-of-n with a verifier"] == f"{1 - 0.75**128:.3f}"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"ttc_vote_n": bad, "ttc_n": bad, "ttc_m": bad})
    assert_bad_link_falls_back(at, default, bad)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "Test_time_compute", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure(tab):
    at = open_page(PAGE, {"ttc_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    words = {"Majority vote": "Majority voting", "Per FLOP": "per FLOP", "Compute split": "A toy"}[tab]
    assert any(words in t for t in titles), titles
