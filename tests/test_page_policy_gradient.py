"""The policy-gradient page in AppTest: it renders with the lesson's numbers, the controls move the readouts, links
reproduce it, bad links give a message and the defaults, presets load, each tab draws its figure, and the GRPO and PPO
pages are linked."""

import pytest

from tests import policy_gradient_reference as ref
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
from views import policy_gradient as view_of

PAGE = "pages/22_Policy_gradient.py"
PI, R = (0.1, 0.2, 0.3, 0.4), (1.0, 0.6, 0.3, 0.0)


def test_default_shows_the_spread_with_the_group_means_shrink(default):
    m = metrics(default)
    assert m["Expected reward J"] == f"{ref.objective(PI, R):.3f}"
    assert m["Group mean: E[g] on ∇J"] == f"{3 / 4:.3f}"  # (G − 1)/G at G = 4
    fig = figures(default)[0]
    assert len(fig["data"]) == 1 + 7 + 3  # draws, 7 bars, means, the true gradient, zero (the slider: the drag row)


@pytest.mark.parametrize(
    ("widget", "key", "value", "label", "expected"),
    [
        ("segmented_control", "pg_G", "8", "Group mean: E[g] on ∇J", f"{7 / 8:.3f}"),
        ("segmented_control", "pg_G", "2", "RLOO: variance ÷ the group mean's", f"{(2 / 1) ** 2:.2f}"),
    ],
)
def test_each_control_changes_its_readout(reused, widget, key, value, label, expected):
    with reused.change(widget, key, value) as at:
        assert no_exception(at)
        assert metrics(at)[label] == expected


def test_link_reproduces_the_figure():
    query = {"pg_G": "6", "pg_b": "0.25", "pg_policy": "uniform: 0.25 each", "pg_seed": "3"}
    linked = assert_link_reproduces(PAGE, query, lambda at: figures(at)[0]["data"])
    assert metrics(linked)["Group mean: E[g] on ∇J"] == f"{5 / 6:.3f}"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    at = open_page(PAGE, {"pg_G": bad, "pg_lr": bad, "pg_steps": bad})
    assert_bad_link_falls_back(at, default, bad)


@pytest.mark.parametrize("name", list(view_of.SPEC.presets))
def test_every_preset_loads(name):
    at = open_page(PAGE)
    choose_preset(at, "Policy_gradient", name).run()
    assert no_exception(at) and at.warning.len == 0, name
    assert figures(at), name


@pytest.mark.parametrize("tab", view_of.VIEWS[1:])
def test_each_tab_draws_its_figure(tab):
    at = open_page(PAGE, {"pg_view": tab})
    assert no_exception(at)
    titles = [f["layout"]["title"]["text"] for f in figures(at)]
    want = {"Zero in expectation": "adds zero in expectation", "Group baselines": "Group baselines",
            "Learning": "Expected reward along training"}[tab]  # fmt: skip
    assert any(want in t for t in titles), titles
