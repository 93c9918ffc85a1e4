"""The reward-model page in AppTest: the Bradley-Terry readouts against a plain-python loss, a constant that changes
nothing, the 60-75% band of seed 003 Q7, the length hack as β falls and DPO's loss as Bradley-Terry, with links to
the KL page; deep links, bad links, tabs built only when open."""

import math
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode

import numpy as np
import pytest
from scipy import optimize, special

from core.reward_model import sample_pairs
from tests.apptest import (
    BAD_LINK_VALUES,
    assert_bad_link_falls_back,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
    trace,
)
from views import Options
from views import reward_model as view_of
from viz.style import READOUT

PAGE = "pages/10_Reward_model.py"
ROOT = Path(__file__).resolve().parents[1]


def _nll(rewards, pairs) -> float:
    """Mean -log sigma(r_w - r_l), one pair at a time."""
    return sum(math.log1p(math.exp(-(rewards[w] - rewards[lo]))) for w, lo in pairs) / len(pairs)


def _kl_links(at) -> list[tuple[str, str]]:
    return [(link.proto.page, link.proto.query_string) for link in at.get("page_link") if "KL page" in link.proto.label]


def test_default_fit_and_noise_tab(default):
    m = metrics(default)
    assert default.warning.len == 0
    fitted = decode(trace(figures(default)[0], "fitted reward")["y"])
    assert fitted.shape == (7,) and abs(fitted.mean()) < 1e-9  # the fit picks mean 0
    pairs = sample_pairs(np.linspace(-1.5, 1.5, 7), 300, seed=0)
    assert m["Mean −log σ(r_w − r_l)"] == f"{_nll(fitted, pairs):.4f} nats"
    assert m["… after adding c = 0"] == m["Mean −log σ(r_w − r_l)"]
    wins = sum(fitted[w] > fitted[lo] for w, lo in pairs) / len(pairs)
    assert m["Training pairs ranked right"] == f"{100 * wins:.1f}%"
    # the noise tab is open by default at a flip rate of 0.2: inside the 60-75% band of real reward models (003 Q7)
    held = float(m["Held-out accuracy at flip 0.2"].rstrip("%"))
    assert 60 < held < 70 and held <= float(m["Ceiling: the true rewards"].rstrip("%")) + 2
    assert len(figures(default)) == 2


def test_adding_a_constant_changes_nothing(default):
    at = open_page(PAGE)
    choose_preset(at, "Reward_model", "Add a constant: c = 3 changes nothing").run()
    assert no_exception(at)
    m, m0 = metrics(at), metrics(default)
    assert m["… after adding c = 3"] == m0["Mean −log σ(r_w − r_l)"] == m["Mean −log σ(r_w − r_l)"]
    assert m["Mean fitted reward"] == "3.000" and m0["Mean fitted reward"] == "0.000"
    fitted = decode(trace(figures(at)[0], "fitted reward")["y"])
    np.testing.assert_allclose(fitted - 3.0, decode(trace(figures(default)[0], "fitted reward")["y"]), atol=1e-12)


def test_length_hack_as_beta_falls_and_the_link_to_the_kl_page():
    at = open_page(PAGE)
    choose_preset(at, "Reward_model", "Length hacking: a loose leash, β = 0.01").run()
    assert no_exception(at) and at.warning.len == 0
    m = metrics(at)
    # pi* ∝ pi_ref exp(r / beta) by hand at beta = 0.01: all mass on the 800-token answer (quality 0.5)
    lengths, ref, q = [50, 100, 200, 400, 800], [0.25, 0.35, 0.25, 0.10, 0.05], [0.2, 0.6, 0.8, 0.7, 0.5]
    r = [qi + 0.3 * math.log2(n) for qi, n in zip(q, lengths, strict=True)]
    w = [p * math.exp((ri - max(r)) / 0.01) for p, ri in zip(ref, r, strict=True)]
    pi = [x / sum(w) for x in w]
    mean_length = sum(p * n for p, n in zip(pi, lengths, strict=True))
    assert m["Mean length under π*"] == f"{mean_length:.0f} tokens" == "800 tokens"
    assert m["True quality"] == "0.500"  # below the SFT model's 0.555: the proxy was hacked
    assert m["Best β for true quality"] == "0.3"
    # the link opens the KL page on the same five answers: its r is the proxy, its r_true the quality
    answers = {
        "K": "5",
        "pi_ref": "0.25, 0.35, 0.25, 0.1, 0.05",
        "r": ", ".join(f"{ri:.6g}" for ri in r),
        "r_true": "0.2, 0.6, 0.8, 0.7, 0.5",
        "names": "50 tokens, 100 tokens, 200 tokens, 400 tokens, 800 tokens",
    }
    assert answers["r"] == "1.89316, 2.59316, 3.09316, 3.29316, 3.39316"
    assert _kl_links(at) == [("KL_leash", urlencode({"K": "5", "beta": "0.01"} | answers))]
    choose_preset(at, "Reward_model", "Length bias: the best β, 0.3").run()
    assert metrics(at)["True quality"] == "0.683"
    assert _kl_links(at) == [("KL_leash", urlencode({"K": "5", "beta": "0.3"} | answers))]


def test_dpo_is_bradley_terry_on_the_implicit_reward_and_links_the_kl_dpo_tab():
    at = open_page(PAGE)
    choose_preset(at, "Reward_model", "DPO: worked example B").run()
    assert no_exception(at)
    m = metrics(at)
    loss = math.log1p(math.exp(-(0.2 - (-0.1))))  # worked example B: implicit rewards 0.2 and -0.1
    assert m["DPO loss"] == m["Bradley-Terry −log σ(r̂_w − r̂_l)"] == f"{loss:.3f}" == "0.554"
    assert m["Implicit reward r̂_w"] == "+0.200" and m["Implicit reward r̂_l"] == "−0.100"
    assert _kl_links(at) == [("KL_leash", "kl_view=DPO")]  # worked example B is the KL page's default pair
    at.radio(key="dpo_pair").set_value("Both answers less likely").run()
    links = _kl_links(at)
    assert links[0][1].startswith("kl_view=DPO&") and "logp_w=-13" in links[0][1]


def test_link_reproduces_the_view():
    query = {"rm_items": "5", "rm_pairs": "200", "rm_shift": "-2", "rm_seed": "3", "rm_view": "Length bias",
             "rm_beta": "0.5", "len_bonus": "0.2"}  # fmt: skip
    linked = open_page(PAGE, query)
    assert no_exception(linked) and linked.warning.len == 0
    clicked = open_page(PAGE, {"rm_view": "Length bias"})
    clicked.slider(key="rm_items").set_value(5)
    clicked.number_input(key="rm_pairs").set_value(200.0)
    clicked.number_input(key="rm_shift").set_value(-2.0)
    clicked.number_input(key="rm_seed").set_value(3.0)
    clicked.select_slider(key="rm_beta").set_value("0.5")
    clicked.slider(key="len_bonus").set_value(0.2).run()
    assert metrics(linked) == metrics(clicked)
    assert metrics(linked)["Mean fitted reward"] == "−2.000"


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_give_a_warning_not_an_exception(default, bad):
    assert_bad_link_falls_back(
        open_page(PAGE, {"rm_items": bad, "rm_pairs": bad, "rm_beta": bad, "rm_view": bad, "train_pairs": bad}),
        default,
        bad,
        warning="The link asked for",
    )


def test_tabs_build_only_when_open():
    s = view_of.SPEC.defaults()
    assert set(view_of.figures(s).figures) == {"main"}
    every = view_of.figures(s, Options(parts=frozenset({"main", "noise", "length", "dpo"})))
    assert set(every.figures) == {"main", "noise", "length", "dpo"} and every.notices == []
    at = open_page(PAGE, {"rm_view": "DPO"})
    m = metrics(at)
    assert "DPO loss" in m and "Held-out accuracy at flip 0.2" not in m and "True quality" not in m
    assert len(figures(at)) == 2


NOISE = Options(parts=frozenset({"main", "noise"}))


def _noise_fig(flip: str) -> dict:
    return view_of.figures(view_of.SPEC.defaults().replace(flip=flip), NOISE).figures["noise"].to_dict()


def test_flip_slider_steps_are_the_drag_values(default):
    """The label-noise figure's drag: one step per flip rate (the field's choices), the page's 0.2 active; step i
    draws the markers and the readout panel exactly as the view does at flip = values[i]. The main figure (the
    Bradley-Terry fit) does not depend on the flip rate and has no drag."""
    view = view_of.figures(view_of.SPEC.defaults(), NOISE)
    assert set(view.drags) == {"noise"}
    drag = view.drags["noise"]
    assert drag.field == "flip" and drag.values == view_of.FLIP_TEXT
    assert all(view_of.SPEC["flip"].check(v) is None for v in drag.values)
    fig = figures(default)[1]  # the noise tab is open by default
    slider = slider_of(fig)
    assert [s["label"] for s in slider["steps"]] == list(drag.values)
    assert drag.values[slider["active"]] == "0.2" and slider["currentvalue"]["prefix"] == "flip rate = "
    markers = len(fig["data"]) - 1
    assert {tuple(s["args"][2]) for s in slider["steps"]} == {(markers,)}  # only the markers move
    for i in (0, 3, len(drag.values) - 1):
        step, at = slider["steps"][i], _noise_fig(drag.values[i])
        assert list(decode(step["args"][0]["x"][0])) == list(decode(at["data"][markers]["x"]))
        assert list(decode(step["args"][0]["y"][0])) == list(decode(at["data"][markers]["y"]))
        assert at["layout"]["annotations"][0]["name"] == READOUT
        assert step["args"][1] == {"annotations[0].text": at["layout"]["annotations"][0]["text"]}


def _pairs(r, n, flip, rng):
    """The page's labels, written out: n pairs of distinct random answers i, j = i + U{1..K-1} mod K, i wins with
    probability σ(r_i − r_j), then each label flipped with probability ``flip``; (winner, loser) rows."""
    i = rng.integers(0, r.size, n)
    j = (i + rng.integers(1, r.size, n)) % r.size
    i_wins = (rng.random(n) < special.expit(r[i] - r[j])) ^ (rng.random(n) < flip)
    return np.stack([np.where(i_wins, i, j), np.where(i_wins, j, i)], axis=1)


def _fit(pairs, n, l2=1e-3):
    """Bradley-Terry maximum likelihood with the page's small ridge, by scipy's BFGS (the page uses Newton)."""
    loss = lambda r: np.sum(np.logaddexp(0.0, r[pairs[:, 1]] - r[pairs[:, 0]])) + l2 / 2 * np.sum(r**2)  # noqa: E731
    return optimize.minimize(loss, np.zeros(n), method="BFGS", options={"gtol": 1e-10}).x


def _right(r, pairs):
    return 100 * float(np.mean(r[pairs[:, 0]] > r[pairs[:, 1]]))


def test_flip_step_readout_against_an_independent_study():
    """Step 0.4's readout at the printed precision: the study redone by hand (one generator, seed 0, 400 training
    then 2,000 held-out pairs per flip rate in turn, twelve answers from −3 to 3), fitted with scipy."""
    r = np.linspace(-3.0, 3.0, 12)
    rng = np.random.default_rng(0)
    for flip in view_of.FLIPS[:5]:  # the generator runs through the rates before 0.4
        train, test = _pairs(r, 400, flip, rng), _pairs(r, 2000, flip, rng)
    fit = _fit(train, r.size)
    order = np.array([(a, b) if r[a] > r[b] else (b, a) for a in range(12) for b in range(a + 1, 12)])
    held, ceiling, truth = _right(fit, test), _right(r, test), _right(fit, order)
    view = view_of.figures(view_of.SPEC.defaults(), NOISE)
    step = view.figures["noise"].layout.sliders[0].steps[view_of.FLIP_TEXT.index("0.4")]
    text = step.args[1]["annotations[0].text"]
    for shown in ("<b>flip rate 0.4</b>", f"held-out accuracy {held:.1f}%", f"up to sampling noise) {ceiling:.1f}%",
                  f"fitted order vs the true order {truth:.1f}%"):  # fmt: skip
        assert shown in text, (shown, text)
    # the markers: the ceiling, the true order and the held-out accuracy at 0.4, as fractions
    np.testing.assert_allclose(step.args[0]["y"][0], [ceiling / 100, truth / 100, held / 100], atol=5e-4)
    assert list(step.args[0]["x"][0]) == [0.4] * 3


def test_the_noise_drag_is_declared_only_with_its_figure():
    """The flip rate's figure is a tab's: closed (another tab open), no figure and no drag."""
    view = view_of.figures(view_of.SPEC.defaults(), Options(parts=frozenset({"main", "length"})))
    assert "noise" not in view.figures and view.drags == {}


def test_the_first_figure_and_the_presets_do_not_import_torch():
    """A fresh interpreter: the view's import, its default figures (the fit and the label-noise tab with its flip drag,
    open by default on the page) and each preset with its tab leave torch unimported (the fit runs in numpy)."""
    code = """if True:
        import sys
        from views import Options
        from views import reward_model as v
        parts = dict(zip(v.VIEWS, ("noise", "length", "dpo")))
        out = v.figures(v.SPEC.defaults(), Options(parts=frozenset({"main", "noise"})))
        seen = [sorted(out.figures), sorted(out.drags), "torch" in sys.modules]
        states = [v.SPEC.state(p) for p in v.SPEC.presets.values()] + [v.SPEC.state({"rm_items": 3, "rm_pairs": 10})]
        want = [frozenset({"main", parts[s.rm_view]}) for s in states]
        ok = [set(v.figures(s, Options(parts=w)).figures) == w for s, w in zip(states, want)]
        print(seen, all(ok), "torch" in sys.modules)
    """
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == "[['main', 'noise'], ['noise'], False] True False"
