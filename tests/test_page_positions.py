"""The positions page in AppTest: it renders with the lesson's numbers, the controls move the figure, links reproduce
it, bad links give a message and the defaults, presets load, each tab draws its figure, dark theme and presenter mode,
hidden answers."""

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
from views import positions as view_of

PAGE = "pages/16_Positions.py"


def _beyond(d: int, base: float, L: int) -> int:
    return sum(2 * math.pi * base ** (2 * i / d) > L for i in range(d // 2))


def test_default_shows_the_wavelengths_with_yarn_at_s_4(default):
    m = metrics(default)
    assert m["Pairs with λ > L"] == f"{_beyond(128, 1e4, 8192)} of 64"
    assert m["YaRN attention factor"] == f"{0.1 * math.log(4) + 1:.4f}"
    assert m["s·L"] == f"{4 * 8192:,} tokens"
    fig = figures(default)[0]
    assert len(fig["data"]) == 4  # original, L, the scaled wavelengths and s·L (the slider is the drag row)


@pytest.mark.parametrize(
    ("widget", "key", "value", "label", "expected"),
    [
        ("number_input", "rope_base", 500_000.0, "Pairs with λ > L", f"{_beyond(128, 5e5, 8192)} of 64"),
        ("number_input", "rope_ctx", 2048.0, "Pairs with λ > L", f"{_beyond(128, 1e4, 2048)} of 64"),
        ("number_input", "rope_d", 64.0, "Pairs with λ > L", f"{_beyond(64, 1e4, 8192)} of 32"),
        ("number_input", "rope_s", 16.0, "YaRN attention factor", f"{0.1 * math.log(16) + 1:.4f}"),
    ],
)
def test_each_control_changes_its_readout(reused, widget, key, value, label, expected):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        assert metrics(at)[label] == expected


def test_link_reproduces_the_figure():
    query = {"rope_d": "64", "rope_base": "500000", "rope_ctx": "4096", "rope_method": "llama3", "rope_s": "8"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["Pairs with λ > L"] == f"{_beyond(64, 5e5, 4096)} of 32"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"rope_d": bad, "rope_base": bad, "rope_ctx": bad, "rope_s": bad})
    assert_bad_link_falls_back(at, default, bad)


def test_an_odd_head_dim_and_an_unknown_method_give_notes():
    at = open_page(PAGE, {"rope_d": "127", "rope_method": "rope2"})
    assert no_exception(at)
    texts = " ".join(x.value for x in (*at.info, *at.warning))
    assert "d must be even: using d = 128" in texts and "`rope_method=rope2`" in texts


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "Positions", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure(tab):
    at = open_page(PAGE, {"pos_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any({"Relative position": "only m − n", "Decay": "RoFormer"}[tab] in t for t in titles), titles
