"""The MoE page in AppTest: it renders with the lesson's numbers, the controls move the readouts, links reproduce
it, bad links give a message and the defaults, presets load, each tab draws its figure, dark theme and presenter
mode, hidden answers."""

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
)
from views import moe as view_of

PAGE = "pages/18_MoE.py"


def test_default_shows_the_routing_with_its_capacity(default):
    m = metrics(default)
    assert m["Capacity C"] == f"{math.ceil(1.0 * 512 * 2 / 8)}"
    assert m["Assignments dropped"] == "245 of 1,024"  # counted with a plain loop in tests/test_views_moe.py
    fig = figures(default)[0]
    assert len(fig["data"]) == 3  # kept, dropped and the capacity line (the slider is the drag row)


@pytest.mark.parametrize(
    ("widget", "key", "value", "label", "expected"),
    [
        ("number_input", "moe_experts", 16.0, "Capacity C", f"{math.ceil(512 * 2 / 16)}"),
        ("number_input", "moe_top_k", 1.0, "Capacity C", f"{math.ceil(512 / 8)}"),
        ("segmented_control", "moe_cf", "2", "Capacity C", f"{math.ceil(2 * 512 * 2 / 8)}"),
    ],
)
def test_each_control_changes_its_readout(reused, widget, key, value, label, expected):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        assert metrics(at)[label] == expected


def test_link_reproduces_the_figure():
    query = {"moe_experts": "6", "moe_top_k": "1", "moe_skew": "2.5", "moe_cf": "1.5", "moe_seed": "3"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["Capacity C"] == f"{math.ceil(1.5 * 512 / 6)}"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"moe_experts": bad, "moe_cf": bad, "moe_tokens": bad})
    assert_bad_link_falls_back(at, default, bad)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "MoE", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure(tab):
    at = open_page(PAGE, {"moe_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any({"Balancing": "balanced two ways", "Parameters": "total parameters"}[tab] in t for t in titles), titles
