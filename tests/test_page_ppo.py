"""The PPO page in AppTest: the clip's readouts against a plain-python clip, presets that answer the seeds'
questions, links that reproduce a view, bad links and typed trajectories that give a message, tabs that build only
when open; and the pure view's notices for input the controls cannot produce."""

import math

import numpy as np
import pytest

from core import ppo
from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    choose_preset,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
)
from views import Options
from views import ppo as view_of

PAGE = "pages/9_PPO.py"
ALL = Options(parts=frozenset({"main", "batch", "gae", "kl", "memory"}))


def _clip_grad(rho: float, A: float, lo: float, hi: float) -> float:
    """d/dρ of min(ρA, clip(ρ, 1 - lo, 1 + hi)A), by cases (the one-sided value inside the range at a kink)."""
    if A > 0 and rho > 1 + hi:
        return 0.0
    if A < 0 and rho < 1 - lo:
        return 0.0
    return A


def _clip_obj(rho: float, A: float, lo: float, hi: float) -> float:
    return min(rho * A, min(max(rho, 1 - lo), 1 + hi) * A)


def _grad_text(g: float) -> str:
    return "0 · clipped" if g == 0 else ("+1 · full" if g > 0 else "−1 · full")


def test_default_ratio_one_full_gradient_and_batch_tab(default):
    m = metrics(default)
    assert m["Ratio ρ"] == "1.00" and m["Clip range"] == "[0.80, 1.20]"
    assert m["A > 0: gradient d/dρ"] == "+1 · full" and m["A < 0: gradient d/dρ"] == "−1 · full"
    assert m["A > 0: objective"] == "1.000" and m["A < 0: objective"] == "−1.000"
    # the token batch (draft texts: 400 tokens, σ = 0.15): 15.2% outside, 8.5% clipped, 92.0% of |d/dρ| kept
    assert (m["Outside the range"], m["Clipped (gradient 0)"], m["Share of |d/dρ| kept"]) == ("15.2%", "8.5%", "92.0%")
    assert default.warning.len == 0
    figs = figures(default)
    assert len(figs) == 2  # the clip and the open tab's batch, nothing else
    slider = slider_of(figs[0])
    assert len(slider["steps"]) == view_of.RHO_STEPS and slider["active"] == 50


def test_slider_steps_match_the_drag_values(default):
    """The page wires drag="rho" with rho_grid(): step i of the figure's slider must be the value i."""
    steps = slider_of(figures(default)[0])["steps"]
    grid = view_of.rho_grid()
    assert len(steps) == len(grid)
    for step, value in zip(steps, grid, strict=True):
        assert float(step["label"]) == pytest.approx(value, abs=5e-3)
        assert step["args"][0]["x"][0] == [value]
    assert all(view_of.SPEC["rho"].check(v) is None for v in grid)


CLIP_PRESETS = ("Ratio 1.3: above 1 + ε", "Ratio 0.7: below 1 − ε", "Ratio 1.05: inside the range",
                "DAPO clip-higher: ratio 1.25")  # fmt: skip


def test_clip_presets_show_their_answers():
    at = open_page(PAGE)  # one session, one preset after another (each a rerun)
    for preset in CLIP_PRESETS:
        choose_preset(at, "PPO", preset).run()
        assert no_exception(at) and at.warning.len == 0
        values = view_of.PRESETS[preset]
        rho, lo = values["rho"], values["clip_eps"]
        hi = values["clip_high"] if values["clip_higher"] else lo
        m = metrics(at)
        assert m["Ratio ρ"] == f"{rho:.2f}"
        for A, sign in ((1.0, ">"), (-1.0, "<")):
            assert m[f"A {sign} 0: gradient d/dρ"] == _grad_text(_clip_grad(rho, A, lo, hi))
            assert m[f"A {sign} 0: objective"] == f"{_clip_obj(rho, A, lo, hi):.3f}".replace("-", "−")
        if preset.startswith("Ratio 1.3"):  # the seeds' question: A > 0 no gradient, A < 0 the full gradient
            assert m["A > 0: gradient d/dρ"] == "0 · clipped" and m["A < 0: gradient d/dρ"] == "−1 · full"
        if preset.startswith("Ratio 0.7"):
            assert m["A > 0: gradient d/dρ"] == "+1 · full" and m["A < 0: gradient d/dρ"] == "0 · clipped"
        if preset.startswith("DAPO"):  # 1.25 > 1.2 but < 1.28: the good token keeps its gradient
            assert m["Clip range"] == "[0.80, 1.28]" and m["A > 0: gradient d/dρ"] == "+1 · full"
        slider = slider_of(figures(at)[0])
        assert slider["steps"][slider["active"]]["args"][0]["x"][0] == [rho]  # the figure's marker sits at ρ


def test_tab_presets_open_their_tab_with_answers():
    at = open_page(PAGE)
    choose_preset(at, "PPO", "GAE: reward only at the end").run()
    assert no_exception(at) and at.warning.len == 0
    m = metrics(at)
    # plain backward loop: A_t = delta_t + gamma lam A_{t+1}
    r, v, gamma, lam = [0, 0, 0, 0, 0, 1], [0.5, 0.5, 0.5, 0.6, 0.7, 0.8, 0], 1.0, 0.95
    A = 0.0
    for t in reversed(range(len(r))):
        A = r[t] + gamma * v[t + 1] - v[t] + gamma * lam * A
    assert m["A_0 at this λ"] == f"{A:.3f}"
    assert m["Best λ (toy chain)"] == "0.7" and m["variance at λ = 0 / 1"] == "0.000 / 0.315"
    assert "Outside the range" not in m  # the batch tab is closed: not computed
    assert len(figures(at)) == 3  # clip, trajectory, bias/variance

    choose_preset(at, "PPO", "Memory: InstructGPT, 175B policy, 6B reward model").run()
    m = metrics(at)
    # policy 175B x 16 + reference 175B x 2 + reward model 6B x 2 + critic 6B x 16 bytes
    assert m["PPO total"] == f"{(175 * 18 + 6 * 18) / 1000:.2f} TB"
    assert m["DPO total"] == f"{175 * 18 / 1000:.2f} TB"
    assert "A_0 at this λ" not in m and len(figures(at)) == 2
    links = [
        (link.proto.page, link.proto.query_string) for link in at.get("page_link") if "memory page" in link.proto.label
    ]
    assert links == [("Training_memory", "")]  # the bytes per parameter come from there

    choose_preset(at, "PPO", "KL: a policy twice as far").run()
    m = metrics(at)
    p = [t * t / q for t, q in zip(view_of.KL_TARGET, view_of.KL_REF, strict=True)]  # pi_ref^-1 target^2
    p = [x / sum(p) for x in p]
    kl = sum(a * math.log(a / b) for a, b in zip(p, view_of.KL_REF, strict=True))
    assert m["Exact KL(π_θ ‖ π_ref)"] == f"{kl:.3f} nats"
    assert m["k3 < 0 in the sample"] == "0%"


def test_kl_tab_default_matches_the_lesson_style_example():
    at = open_page(PAGE, {"ppo_view": "KL estimators"})
    m = metrics(at)
    p, q = view_of.KL_TARGET, view_of.KL_REF
    kl = sum(a * math.log(a / b) for a, b in zip(p, q, strict=True))
    k2 = sum(a * math.log(b / a) ** 2 / 2 for a, b in zip(p, q, strict=True))
    assert m["Exact KL(π_θ ‖ π_ref)"] == f"{kl:.3f} nats" == "0.285 nats"
    assert m["k1: mean ± std"].startswith(f"{kl:.3f} ±") and m["k3: mean ± std"].startswith(f"{kl:.3f} ±")
    assert m["k2: mean ± std"].startswith(f"{k2:.3f} ±")  # biased: 0.294


def test_link_reproduces_the_view():
    query = {"rho": "1.25", "clip_eps": "0.1", "clip_higher": "true", "clip_high": "0.3", "ppo_view": "GAE",
             "gamma": "0.9", "lam": "0.5", "gae_r": "1, 0, 2", "gae_v": "0.5, 0.5, 0.5, 0"}  # fmt: skip
    linked = open_page(PAGE, query)
    assert no_exception(linked) and linked.warning.len == 0
    clicked = open_page(PAGE, {"ppo_view": "GAE"})
    clicked.slider(key="rho").set_value(1.25)
    clicked.slider(key="clip_eps").set_value(0.1)
    clicked.toggle(key="clip_higher").set_value(True).run()  # ε_high is enabled by the toggle
    clicked.slider(key="clip_high").set_value(0.3)
    clicked.slider(key="gamma").set_value(0.9)
    clicked.slider(key="lam").set_value(0.5)
    clicked.text_input(key="gae_r").set_value("1, 0, 2")
    clicked.text_input(key="gae_v").set_value("0.5, 0.5, 0.5, 0").run()
    assert metrics(linked) == metrics(clicked)
    assert metrics(linked)["Clip range"] == "[0.90, 1.30]"
    a, b = figures(linked), figures(clicked)
    assert a[0]["layout"]["annotations"][0]["text"] == b[0]["layout"]["annotations"][0]["text"]
    assert slider_of(a[0])["active"] == slider_of(b[0])["active"] == 75


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_give_a_warning_not_an_exception(default, bad):
    assert_bad_link_falls_back(
        open_page(PAGE, {"rho": bad, "clip_eps": bad, "clip_high": bad, "tok_n": bad, "ppo_view": bad}),
        default,
        bad,
        warning="The link asked for",
    )


@pytest.mark.parametrize(
    ("query", "words"),
    [
        ({"gae_r": "", "gae_v": "0", "gamma": "1.5"}, ("empty", "outside 0 to 1")),
        ({"gae_r": "1, 2", "gae_v": "0, 0"}, ("one more value",)),
        ({"gae_r": "1, x", "gae_v": "0, 0, 0"}, ("not a number",)),
    ],
)
def test_bad_trajectories_give_a_message(query, words):
    at = open_page(PAGE, {"ppo_view": "GAE", **query})
    assert no_exception(at)
    for word in words:
        assert any(word in w.value for w in at.warning), [w.value for w in at.warning]
    assert len(figures(at)) == 2  # the clip and the bias/variance study; no trajectory to draw


def test_view_turns_core_errors_into_notices():
    s = view_of.SPEC.defaults()
    for state, words in [
        (s.replace(clip_eps=0.0), "eps_low must be a positive number"),
        (s.replace(clip_eps=-0.2), "eps_low must be a positive number"),
        (s.replace(gamma=1.5), "gamma must lie in [0, 1]"),
        (s.replace(lam=-0.1), "lam must lie in [0, 1]"),
        (s.replace(gae_r="", gae_v=""), "trajectory is empty"),
        (s.replace(tok_n=0), "positive whole number"),
    ]:
        out = view_of.figures(state, ALL)
        assert any(words in text for _, text in out.notices), (words, out.notices)
    assert view_of.figures(s, ALL).notices == []
    assert set(view_of.figures(s, ALL).figures) == {"main", "batch", "gae", "gae_bv", "kl", "memory"}
    assert set(view_of.figures(s).figures) == {"main"}  # a tab's figure only when asked for


def _gae_loop(r: list[float], v: list[float], gamma: float, lam: float) -> list[float]:
    """A_t = δ_t + γλ A_{t+1}, one step at a time, backwards."""
    out, A = [0.0] * len(r), 0.0
    for t in reversed(range(len(r))):
        A = r[t] + gamma * v[t + 1] - v[t] + gamma * lam * A
        out[t] = A
    return out


def test_gae_tab_checks_both_limits_live():
    r, v, gamma = [1.0, 0.0, 2.0, -0.5], [0.5, 0.4, 0.3, 0.6, 0.2], 0.9  # bootstrap V(s_T) = 0.2
    # plain-python references: the one-step TD error and the discounted return with the bootstrap, minus V(s_t)
    delta = [r[t] + gamma * v[t + 1] - v[t] for t in range(4)]
    mc = [sum(gamma ** (k - t) * r[k] for k in range(t, 4)) + gamma ** (4 - t) * v[4] - v[t] for t in range(4)]
    assert _gae_loop(r, v, gamma, 0.0) == pytest.approx(delta) and _gae_loop(r, v, gamma, 1.0) == pytest.approx(mc)
    err0, err1 = ppo.gae_limit_residuals(r, v, gamma, np.array(delta), np.array(mc))
    assert err0 < 1e-12 and err1 < 1e-12
    # the check can fail: advantages off by 0.1 at one step show as 0.1
    bad = np.array(mc) + np.array([0.0, 0.1, 0.0, 0.0])
    assert ppo.gae_limit_residuals(r, v, gamma, np.array(delta), bad)[1] == pytest.approx(0.1)
    at = open_page(PAGE, {"ppo_view": "GAE", "gae_r": "1, 0, 2, -0.5", "gae_v": "0.5, 0.4, 0.3, 0.6, 0.2",
                          "gamma": "0.9", "lam": "0.5"})  # fmt: skip
    assert no_exception(at)
    m = metrics(at)
    for label in ("λ = 0: max |A − δ|", "λ = 1: max |A − (G − V)|"):
        assert float(m[label]) < 1e-12, (label, m[label])
