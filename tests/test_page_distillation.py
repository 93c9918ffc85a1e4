"""The distillation page in AppTest: it renders with the lesson's numbers, the controls move the readouts, links
reproduce it, bad links give a message and the defaults, presets load, and each tab draws its figure (the dark
theme and presenter type: tests/test_page_theme.py)."""

import pytest

from tests import distillation_reference as ref
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
from views import distillation as view_of

PAGE = "pages/23_Distillation.py"


def test_default_shows_both_fits_at_d_4(default):
    m = metrics(default)
    assert m["Forward fit: KL(p‖q), KL(q‖p)"] == "{:.3f}, {:.3f}".format(*ref.forward_kls(4.0))
    assert m["Reverse fit: KL(p‖q), KL(q‖p)"] == "{:.3f}, {:.3f}".format(*ref.reverse_kls(4.0))
    fig = figures(default)[0]
    assert len(fig["data"]) == 3  # the teacher, the forward fit, the reverse fit (the slider: the drag row)
    assert fig["layout"]["title"]["text"].startswith("Fitting a student to a two-mode teacher")


def test_the_distance_moves_the_reverse_fit_onto_a_mode():
    at = open_page(PAGE, {"dist_d": "8"})
    assert no_exception(at)
    rm, rs = ref.reverse_fit(8.0)
    assert metrics(at)["Reverse fit: mean, sd"] == f"{rm:.2f}, {rs:.2f}".replace("-", "−")


def test_link_reproduces_the_figure():
    query = {"dist_d": "5.5", "dist_w": "0.4"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert no_exception(linked)


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"dist_w": bad, "dist_k": bad, "dist_T": bad, "dist_smooth": bad})
    assert_bad_link_falls_back(at, default, bad)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "Distillation", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure(tab):
    at = open_page(PAGE, {"dist_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    want = {view_of.TEMPERATURE: "Temperature softens", view_of.SEQUENCE: "A toy"}[tab]
    assert any(want in t for t in titles), titles


def test_the_kl_caption_waits_for_the_guess():
    """The caption under the KL figure says where the reverse fit sits, the predict-first question's answer: with the
    guess open (or hide=true) a caption saying why stands in its place; after the guess the caption is back."""
    said = "the reverse fit stays in the middle"
    hidden = open_page(PAGE, {"predict_dist": "true"})
    assert no_exception(hidden)
    captions = [c.value for c in hidden.caption]
    assert not any(said in c for c in captions)
    assert any("the note under this figure states the answer" in c for c in captions)
    screen = open_page(PAGE, {"hide": "true"})
    assert not any(said in c.value for c in screen.caption)
    shown = open_page(PAGE, {"predict_dist": "true", "guess_dist_mean": "1"})
    assert no_exception(shown)
    assert any(said in c.value for c in shown.caption)
