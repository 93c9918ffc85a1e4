"""In a real browser: the PPO and reward-model pages (issue 17). Each page opens by a deep link in a new session
(the file's first test is the very first request of a fresh server; the next is its page's first run in that
server): the link reaches the figure, its tab and the readouts, with no exception and no request off the machine.
Then one preset, whose answer shows in the readouts. PPO's ρ drag is in test_navigation_browser.py."""

import math

import pytest

from tests.browser.test_navigation_browser import _open_deep, _preset, _query, _readouts

pytestmark = pytest.mark.browser


def test_ppo_deep_link_then_preset(open_first):
    watch, page = _open_deep(open_first, "/PPO?rho=0.7&ppo_view=GAE", "PPO")
    # ρ = 0.7 < 1 − ε: A > 0 keeps the full gradient (objective 0.7), A < 0 is clipped (min(−0.7, −0.8) = −0.8)
    shown = dict(_readouts(page))
    assert shown["Ratio ρ"] == "0.70" and shown["A < 0: gradient d/dρ"] == "0 · clipped", shown
    assert shown["A > 0: objective"] == "0.700" and shown["A < 0: objective"] == "−0.800"
    panel = page.locator(".js-plotly-plot").first.locator("g.annotation-text-g").first.text_content()
    assert "ρ = 0.70" in panel, panel
    assert page.locator(".js-plotly-plot").count() >= 2  # the GAE tab the link names drew its figure
    watch.shot("ppo-deep-link-gae")

    shown = _preset(page, "Ratio 1.3", "PPO")
    # ρ = 1.3 > 1 + ε: A > 0 is clipped at 1.2, A < 0 keeps −1.3 and its full gradient
    assert shown["A > 0: gradient d/dρ"] == "0 · clipped" and shown["A > 0: objective"] == "1.200", shown
    assert shown["A < 0: gradient d/dρ"] == "−1 · full" and shown["A < 0: objective"] == "−1.300"
    assert _query(page)["rho"] == ["1.3"], page.url
    assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)


def test_reward_model_deep_link_then_preset(open_shared):
    watch, page = _open_deep(open_shared, "/Reward_model?rm_items=5&rm_view=DPO", "Reward_model")
    shown = dict(_readouts(page))
    # worked example B on the DPO tab: implicit rewards +0.2 and −0.1, loss −log σ(0.3)
    dpo = f"{math.log1p(math.exp(-0.3)):.3f}"
    assert shown["DPO loss"] == dpo == shown["Bradley-Terry −log σ(r̂_w − r̂_l)"] == "0.554", shown
    base = shown["Mean −log σ(r_w − r_l)"]
    assert shown["… after adding c = 0"] == base
    watch.shot("reward-model-deep-link-dpo")

    shown = _preset(page, "Add a constant", "Reward_model")
    # Bradley-Terry sees differences only: every reward + 3 leaves the loss as it was
    assert shown["Mean fitted reward"] == "3.000", shown
    assert shown["… after adding c = 3"] == shown["Mean −log σ(r_w − r_l)"] == base
    assert float(_query(page)["rm_shift"][0]) == 3, page.url
    assert watch.errors == [] and watch.external == [], (watch.errors, watch.external)
