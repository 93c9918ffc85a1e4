"""The calibration page in AppTest: it renders with the lesson's numbers, the controls move the readouts, links
reproduce it, bad links give a message and the defaults, presets load, each tab draws its figure."""

import pytest

from tests import calibration_reference as ref
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
from views import calibration as view_of

PAGE = "pages/25_Calibration.py"


def test_default_shows_the_toy_with_its_fitted_temperature(default):
    m = metrics(default)
    assert m["ECE after tuning"] == f"{ref.toy(2.5)['tuned']:.3f}"
    assert m["Fitted temperature T"] == f"{ref.toy(2.5)['T']:.2f}"
    fig = figures(default)[0]
    assert len(fig["data"]) == 8  # the diagonal, three models, the exact curve, three count bars


@pytest.mark.parametrize(
    ("widget", "key", "value", "label", "expected"),
    [
        ("select_slider", "cal_kappa", "4", "ECE after tuning", f"{ref.toy(4.0)['tuned']:.3f}"),
        ("segmented_control", "cal_bins", "5", "ECE after tuning", f"{ref.toy(2.5, 5)['tuned']:.3f}"),
    ],
)
def test_each_control_changes_its_readout(reused, widget, key, value, label, expected):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        assert metrics(at)[label] == expected


def test_link_reproduces_the_figure():
    query = {"cal_kappa": "4", "cal_bins": "15", "cal_binning": "equal mass"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["ECE after tuning"] == f"{ref.toy(4.0, 15, 'mass')['tuned']:.3f}"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"cal_kappa": bad, "cal_k": bad, "cal_bins": bad})
    assert_bad_link_falls_back(at, default, bad)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "Calibration", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure(tab):
    at = open_page(PAGE, {"cal_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    words = {"Known miscalibration": "c^γ", "Temperature scaling": "Temperature scaling", "Emergence": "metrics"}[tab]
    assert any(words in t for t in titles), titles


def _captions(at) -> str:
    return "\n".join(str(c.value) for c in at.caption)


def test_predict_first_holds_back_the_dotted_curves_formula_until_the_guess():
    """Before the guess the caption keeps the toy's description but not sigmoid(logit c / κ), which with κ from the
    question gives the answer; after it the whole caption is back."""
    toy = "the tuning states sigmoid(κ · logit c) instead and changes nothing that is right."
    answer = "sigmoid(logit c / κ)"
    hidden = open_page(PAGE, {"predict_cal": "true"})
    assert no_exception(hidden)
    text = _captions(hidden)
    assert toy in text and answer not in text
    shown = open_page(PAGE, {"predict_cal": "true", "guess_cal_acc": "0.8"})
    assert no_exception(shown)
    assert toy in _captions(shown) and answer in _captions(shown)
    assert "Guo et al.'s ECE bins only the predicted class's confidence" in _captions(shown)
