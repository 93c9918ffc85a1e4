"""The number-formats page in AppTest: it renders with the lesson's numbers, the controls move the readouts, links
reproduce it, bad links give a message and the defaults, presets load, each tab draws its figure."""

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
from views import number_formats as view_of

PAGE = "pages/20_Number_formats.py"


def test_default_shows_the_number_line_and_what_each_format_stores(default):
    m = metrics(default)
    assert m["bf16 relative error at x"] == "0.0977%"  # 0.1 → 205 · 2⁻¹¹: tests/test_views_number_formats.py
    assert m["fp8 E4M3 stores"] == "0.101562"
    fig = figures(default)[0]
    assert len(fig["data"]) == 10  # five staircases, the edges, the line and markers at x, the bands and medians


def test_the_value_control_changes_its_readouts(reused):
    with reused.change("select_slider", "fmt_x", "100000") as at:
        assert no_exception(at)
        assert metrics(at)["fp8 E4M3 stores"] == "448 (saturated)"
        assert metrics(at)["fp16 stores"] == "∞ (overflow)"


def test_link_reproduces_the_figure():
    linked = assert_link_reproduces(PAGE, {"fmt_x": "5e-05"}, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["fp8 E4M3 stores"] == "0 (underflow: rounds to 0)"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"fmt_x": bad, "fmt_scale_log2": bad, "fmt_increment": bad})
    assert_bad_link_falls_back(at, default, bad)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "Number_formats", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure_and_its_readouts(tab):
    at = open_page(PAGE, {"fmt_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    words = {"Loss scaling": "loss scale", "Softmax": "Softmax in fp16", "Running sum": "stops growing"}[tab]
    assert any(words in t for t in titles), titles
    first = {"Loss scaling": "fp16: rounded to zero", "Softmax": "fp16 naive: top probability",
             "Running sum": "bf16 sum after 3,000"}[tab]  # fmt: skip
    assert first in metrics(at)
