"""The optimizers page in AppTest: it renders with the lesson's numbers, the controls move the readouts, links
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
from views import optimizers as view_of

PAGE = "pages/21_Optimizers.py"


def test_default_shows_the_paths_with_sgds_limit(default):
    m = metrics(default)
    assert m["SGD's stable limit η_max"] == f"{2 / 10:.3g}"  # the bowl's Hessian diag(10, 1)
    fig = figures(default)[0]
    assert len(fig["data"]) == 7  # contours, five paths, the minimum (the slider is the drag row)


@pytest.mark.parametrize(
    ("widget", "key", "value", "label", "expected"),
    [
        ("number_input", "opt_kappa", 40.0, "SGD's stable limit η_max", f"{2 / 40:.3g}"),
        ("selectbox", "opt_surface", view_of.SURFACES[1], "Condition number κ", "258"),
    ],
)
def test_each_control_changes_its_readout(reused, widget, key, value, label, expected):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        assert metrics(at)[label] == expected


def test_link_reproduces_the_figure():
    query = {"opt_kappa": "25", "opt_lr": "0.0316", "opt_steps": "40", "opt_wd": "0.3"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["SGD's stable limit η_max"] == f"{2 / 25:.3g}"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"opt_kappa": bad, "opt_lr": bad, "opt_steps": bad})
    assert_bad_link_falls_back(at, default, bad)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "Optimizers", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure(tab):
    at = open_page(PAGE, {"opt_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    words = {view_of.BIAS: "first steps", view_of.WARMUP: "warm-up", view_of.NORMS: "RMSNorm only the scale",
             view_of.DEPTH: "by depth", view_of.MUP: "muP"}[tab]  # fmt: skip
    assert any(words in t for t in titles), titles
