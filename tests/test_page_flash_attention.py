"""The FlashAttention page in AppTest: it renders with the lesson's numbers, the controls move the readouts, links
reproduce it, bad links give a message and the defaults, presets load, each tab draws its figure, dark theme and
presenter mode, hidden answers."""

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
from views import flash_attention as view_of

PAGE = "pages/17_FlashAttention.py"


def _skipped(T: int, bq: int, bk: int) -> int:
    """Tiles whose first key comes after their last query."""
    return sum(c0 > min(r0 + bq, T) - 1 for r0 in range(0, T, bq) for c0 in range(0, T, bk))


def test_default_shows_the_tiles_with_the_causal_mask(default):
    m = metrics(default)
    assert m["Blocks skipped"] == f"{_skipped(16, 4, 4)} of 16"
    assert m["Step"] == "6 of 16"
    assert float(m["Max |flash − plain|"]) < 1e-14
    fig = figures(default)[0]
    assert len(fig["data"]) == 3  # the scores, the skipped tiles and the current tile (the slider is the drag row)


@pytest.mark.parametrize(
    ("widget", "key", "value", "label", "expected"),
    [
        ("slider", "fa_tokens", 12, "Blocks skipped", f"{_skipped(12, 4, 4)} of 9"),
        ("slider", "fa_bq", 2, "Blocks skipped", f"{_skipped(16, 2, 4)} of 32"),
        ("slider", "fa_bk", 8, "Blocks skipped", f"{_skipped(16, 4, 8)} of 8"),
        ("toggle", "fa_causal", False, "Blocks skipped", "0 of 16"),
        ("number_input", "fa_step", 3.0, "Step", "3 of 16"),
    ],
)
def test_each_control_changes_its_readout(reused, widget, key, value, label, expected):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        assert metrics(at)[label] == expected


def test_link_reproduces_the_figure():
    query = {"fa_tokens": "12", "fa_bq": "3", "fa_bk": "5", "fa_step": "4", "fa_seed": "3"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["Blocks skipped"] == f"{_skipped(12, 3, 5)} of 12"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"fa_tokens": bad, "fa_bq": bad, "fa_step": bad, "fa_sram": bad})
    assert_bad_link_falls_back(at, default, bad)


def test_a_step_past_the_end_gives_a_note():
    at = open_page(PAGE, {"fa_bq": "8", "fa_bk": "8", "fa_step": "20"})
    assert no_exception(at)
    assert "This tiling takes 4 steps: showing step 4 instead of 20." in " ".join(x.value for x in at.info)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "FlashAttention", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure(tab):
    at = open_page(PAGE, {"fa_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    assert any({"HBM traffic": "HBM traffic", "Backward memory": "backward keeps"}[tab] in t for t in titles), titles
    if tab == "HBM traffic":
        ratio = 4 * 51_200 / ((12 + 16 / 64) * 64**2)
        assert metrics(at)["As N grows"] == f"{ratio:.2f}×"
    else:
        assert metrics(at)["P kept, N = 4,096"] == f"{32 * 4096**2 * 2 / 2**30:.0f} GiB"
