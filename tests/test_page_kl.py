"""The KL leash page in AppTest: lesson numbers, every control moves a figure, links reproduce it, bad links and
bad typing fall back with a message, presets, tabs that only build the open view."""

from pathlib import Path

import numpy as np
import pytest

from tests.apptest import (
    BAD_LINK_VALUES,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    slider_of,
    trace,
)
from views import kl_leash as view_of

PAGE = "pages/2_KL_leash.py"
ROOT = Path(__file__).resolve().parents[1]
HACK = {
    "K": "4",
    "pi_ref": "0.3, 0.4, 0.299, 0.001",
    "r": "1, 0.5, 0, 2",
    "r_true": "1, 0.5, 0, -1",
    "names": "helpful, fine, poor, exploit",
    "beta": "0.5",
}


def _bars(at) -> dict:
    """The bars figure: pi_ref, pi*, the in-figure readout, the slider's active step, the answers' labels."""
    fig = figures(at)[0]
    slider = slider_of(fig)
    return {
        "pi_ref": decode(trace(fig, "π_ref")["y"]),
        "pi": decode(trace(fig, "π*")["y"]),
        "panel": fig["layout"]["annotations"][0]["text"],
        "active": slider["steps"][slider["active"]]["label"],
        "steps": len(slider["steps"]),
        "labels": [step["label"] for step in slider["steps"]],
        "x": list(trace(fig, "π*")["x"]),
    }


def _view(at) -> dict:
    """The open tab's figure (the second on the page)."""
    figs = figures(at)
    assert len(figs) == 2, "exactly the bars and the open tab's view"
    return figs[1]


def _same(a: dict, b: dict) -> bool:
    return all(np.array_equal(a[k], b[k]) if isinstance(a[k], np.ndarray) else a[k] == b[k] for k in a)


def _infos(at) -> str:
    return " ".join(i.value for i in at.info)


def _warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


def test_default_is_the_lessons_toy_at_beta_1(default):
    m = metrics(default)
    assert m["KL(π* ‖ π_ref)"] == "0.111 nats" and m["E_π*[r]"] == "0.731" and m["Entropy H(π*)"] == "0.582 nats"
    assert m["E[r] − β·KL"] == m["β·log Z"] == "0.620"  # the theorem, side by side
    bars = _bars(default)
    np.testing.assert_allclose(bars["pi_ref"], [0.5, 0.5])
    assert np.round(bars["pi"], 3).tolist() == [0.731, 0.269]
    # one slider step per β of the sidebar's select slider (61 round log-spaced values), so a drag maps to a value
    assert bars["active"] == "1" and bars["steps"] == len(view_of.BETAS) == 61
    assert [float(x) for x in bars["labels"]] == [float(b) for b in view_of.BETAS]  # the last reads 1e+03
    assert "KL(π* ‖ π_ref) = 0.111 nats" in bars["panel"]
    assert default.warning.len == 0 and default.info.len == 0
    assert "π*(y1)" in [t.get("name") for t in _view(default)["data"]]  # the beta sweep tab is open


def test_quick_check_halving_beta_gives_0881():
    at = open_page(PAGE)
    at.select_slider(key="beta").set_value("0.5").run()
    assert no_exception(at)
    bars = _bars(at)
    assert round(float(bars["pi"][0]), 3) == 0.881 and bars["active"] == "0.5" and bars["steps"] == 61
    assert metrics(at)["E_π*[r]"] == "0.881"


@pytest.mark.parametrize(
    ("widget", "key", "value"),
    [
        ("slider", "K", 3),
        ("select_slider", "beta", "0.1"),
        ("text_input", "pi_ref", "0.9, 0.1"),
        ("text_input", "r", "0, 1"),
        ("text_input", "r_true", "1, -1"),
        ("text_input", "names", "yes, no"),
    ],
)
def test_each_leash_control_changes_the_bars(default, reused, widget, key, value):
    with reused.change(widget, key, value) as at:
        assert no_exception(at) and at.warning.len == 0
        assert not _same(_bars(default), _bars(at))


def test_k_pads_the_answers_and_says_the_reference_was_normalised():
    at = open_page(PAGE)
    at.slider(key="K").set_value(4).run()
    assert at.text_input(key="pi_ref").value == "0.5, 0.5, 0.5, 0.5"
    assert at.text_input(key="r").value == "1, 0, 0, 0"
    bars = _bars(at)
    np.testing.assert_allclose(bars["pi_ref"], [0.25] * 4)
    assert "normalised" in _infos(at) and "sums to 2" in _infos(at)
    at.slider(key="K").set_value(2).run()
    assert at.text_input(key="pi_ref").value == "0.5, 0.5" and at.info.len == 0  # back to the toy


def test_reference_zero_keeps_pi_star_zero_even_with_the_top_reward():
    at = open_page(PAGE, {"K": "3", "pi_ref": "0.5, 0.5, 0", "r": "0, 1, 100", "beta": "0.001"})
    assert no_exception(at) and at.warning.len == 0
    pi = _bars(at)["pi"]
    assert pi[2] == 0 and pi[1] == pytest.approx(1.0)


def test_bad_typing_falls_back_to_the_toys_value_with_a_message(default):
    # the view is a pure function of the typed state: a field that cannot be read gets the toy's value for it
    at = open_page(PAGE)
    at.text_input(key="pi_ref").set_value("0.2, 0.8").run()
    assert not _same(_bars(at), _bars(default))
    for bad, reason in [
        ("abc, 1", "not a number"),
        ("-0.5, 1", "negative"),
        ("0, 0", "all values are zero"),
        ("0.2, 0.3, 0.5", "3 values for K = 2"),
        ("", "empty"),
    ]:
        at.text_input(key="pi_ref").set_value(bad).run()
        assert no_exception(at), bad
        assert reason in _warnings(at), (bad, _warnings(at))
        assert _same(_bars(at), _bars(default)), bad  # π_ref = (0.5, 0.5), not the 0.2, 0.8 typed before
    at.text_input(key="pi_ref").set_value("0.2, 0.8")
    at.text_input(key="r").set_value("0, 1").run()
    np.testing.assert_allclose(_bars(at)["pi_ref"], [0.2, 0.8])
    at.text_input(key="r").set_value("1, nan").run()
    assert "NaN" in _warnings(at)
    bars = _bars(at)
    np.testing.assert_allclose(bars["pi_ref"], [0.2, 0.8])  # the other fields stay as typed
    assert np.round(bars["pi"], 3).tolist() == [0.405, 0.595]  # r = the toy's (1, 0): 0.2e / (0.2e + 0.8)


def test_link_with_every_parameter_reproduces_the_figures():
    query = HACK | {"kl_view": "Reward hacking", "sqrt": "true", "present": "true"}
    linked = open_page(PAGE, query)
    assert no_exception(linked) and linked.warning.len == 0
    clicked = open_page(PAGE)
    clicked.slider(key="K").set_value(4)
    for key in ("pi_ref", "r", "r_true", "names"):
        clicked.text_input(key=key).set_value(HACK[key])
    clicked.select_slider(key="beta").set_value("0.5")
    clicked.toggle(key="sqrt").set_value(True)
    clicked.toggle(key="present").set_value(True)
    clicked.session_state["kl_view"] = "Reward hacking"
    clicked.run()
    assert _same(_bars(linked), _bars(clicked))
    a, b = _view(linked), _view(clicked)
    assert np.array_equal(decode(a["data"][0]["x"]), decode(b["data"][0]["x"]))
    assert a["layout"]["xaxis"]["title"]["text"].startswith("√KL")
    assert metrics(linked) == metrics(clicked)
    assert _bars(linked)["x"][3] == "exploit<br>r = 2 (true −1)"


def test_dpo_link_reproduces_the_pair_and_the_step():
    query = {"kl_view": "DPO", "logp_w": "-11", "logp_l": "-16", "ref_w": "-12", "ref_l": "-14", "dpo_beta": "0.5"}
    linked = open_page(PAGE, query | {"step": "4 log Z cancels"})
    assert no_exception(linked) and linked.warning.len == 0
    clicked = open_page(PAGE, {"kl_view": "DPO"})
    for key in ("logp_w", "logp_l", "ref_w", "ref_l", "dpo_beta"):
        clicked.number_input(key=key).set_value(float(query[key]))
    clicked.radio(key="step").set_value("4 log Z cancels")
    clicked.run()
    assert metrics(linked) == metrics(clicked)
    m = metrics(linked)
    assert m["r̂_w"] == "0.500" and m["r̂_l"] == "−1.000" and m["Margin"] == "1.500"
    assert any("log Z" in t.value or "cancel" in t.value for t in linked.markdown)
    assert any(r"\mathcal{L}_{\text{DPO}}" in x.value for x in linked.latex)


@pytest.mark.parametrize(
    ("view", "widget", "key", "value"),
    [
        ("Reward hacking", "toggle", "sqrt", True),
        ("Theorem check", "slider", "policies", 5000),
        ("DPO", "number_input", "logp_l", -12.0),
        ("DPO", "number_input", "dpo_beta", 0.5),
    ],
)
def test_each_view_control_changes_its_figure(view, widget, key, value):
    at = open_page(PAGE, {"kl_view": view})
    before = _view(at)
    getattr(at, widget)(key=key).set_value(value).run()
    assert no_exception(at)
    assert _view(at)["data"] != before["data"] or _view(at)["layout"] != before["layout"]


def test_theorem_view_modes_and_verdict():
    # the link uses the old names of kl_view and policies (view, n): they still work and the link says the new ones
    at = open_page(PAGE, {"view": "Theorem check", "n": "5000"})
    assert at.warning.len == 0 and dict(at.query_params) == {"kl_view": "Theorem check", "policies": "5000"}
    fig = _view(at)
    assert fig["layout"]["title"]["text"].startswith("5,000 random policies: none beats π*")
    assert trace(fig, "π*")["x"] is not None and "scattergl" in [t["type"] for t in fig["data"]]
    objective = open_page(PAGE, {"kl_view": "Theorem check", "policies": "5000", "thm": "objective"})
    assert [t["type"] for t in _view(objective)["data"]] == ["bar"]


def test_tabs_build_only_the_open_view(default):
    names = [t.get("name") or "" for f in figures(default) for t in f["data"]]
    assert not any("random policies" in n or "loss −log σ" in n for n in names)
    dpo = open_page(PAGE, {"kl_view": "DPO"})
    assert "loss −log σ(m)" in [t.get("name") for t in _view(dpo)["data"]]


@pytest.mark.parametrize("bad", BAD_LINK_VALUES)
def test_bad_link_values_fall_back_to_defaults_with_a_message(default, bad):
    keys = ("K", "beta", "pi_ref", "r", "r_true", "names", "policies", "logp_w", "dpo_beta", "kl_view", "thm", "step")
    at = open_page(PAGE, dict.fromkeys(keys, bad))
    assert no_exception(at)
    assert metrics(at) == metrics(default)
    assert _same(_bars(at), _bars(default))
    if bad:
        assert at.warning.len >= 1
        assert "nan" not in " ".join(m.value for m in at.metric).lower()


def test_bad_dpo_link_values_fall_back():
    at = open_page(PAGE, {"kl_view": "DPO", "logp_w": "5", "ref_l": "inf", "dpo_beta": "-1"})
    assert no_exception(at)
    assert metrics(at)["DPO loss"] == "0.554"
    assert "logp_w=5" in _warnings(at) and "dpo_beta=-1" in _warnings(at)


def test_unknown_parameter_is_reported():
    at = open_page(PAGE, {"colour": "red"})
    assert no_exception(at)
    assert _warnings(at) == "Ignored the unknown link parameter `colour=red`: this page has no such control."
    assert "colour" not in at.query_params  # it leaves the link


@pytest.mark.parametrize(
    ("preset", "expect"),
    [
        ("Lesson's toy (two answers)", {"E_π*[r]": "0.731", "β·log Z": "0.620"}),
        ("Reward hack", {"True E_π*[r_true]": "0.740"}),
        ("Five answers", {}),
    ],
)
def test_leash_presets(preset, expect):
    at = open_page(PAGE, {"kl_view": "Reward hacking"})
    choose_preset(at, "KL_leash", preset).run()
    assert no_exception(at) and at.warning.len == 0
    m = metrics(at)
    for label, value in expect.items():
        assert m[label] == value
    assert m["E[r] − β·KL"] == m["β·log Z"]
    bars = _bars(at)
    if preset == "Reward hack":
        assert "exploit" in bars["x"][3]
        captions = " ".join(c.value for c in at.caption)
        assert "**exploit**" in captions and "**0.126**" in captions and "**6.00 nats**" in captions
    if preset == "Five answers":
        assert len(bars["pi"]) == 5 and at.slider(key="K").value == 5


@pytest.mark.parametrize(
    ("preset", "loss", "weight"),
    [("DPO: Worked example B", "0.554", "0.426"), ("DPO: Start of training (pi = pi_ref)", "0.693", "0.500")],
)
def test_dpo_presets_give_the_lessons_numbers(preset, loss, weight):
    at = open_page(PAGE, {"kl_view": "DPO"})
    choose_preset(at, "KL_leash", preset).run()
    m = metrics(at)
    assert m["DPO loss"] == loss and m["Weight"] == weight
    assert at.info.len == 0


def test_both_fell_note():
    at = open_page(PAGE, {"kl_view": "DPO"})
    choose_preset(at, "KL_leash", "DPO: Both answers less likely").run()
    assert "less* likely" in _infos(at) and metrics(at)["Margin"] == "0.500"
    assert any("both log-probabilities fell" in a["text"] for a in _view(at)["layout"]["annotations"])


def test_presenter_mode_folds_the_equation():
    at = open_page(PAGE, {"present": "true"})
    assert no_exception(at)
    assert any(e.label == "The equation" for e in at.expander)


def test_answers_hidden_and_csv_present(default):
    labels = [e.label for e in default.expander]
    assert "Reveal the answer" in labels and "Reveal a 60-90 second answer" in labels
    assert any("Beta sweep" in b.proto.label for b in default.get("download_button"))


def test_torch_is_imported_only_for_the_theorem_check():
    import subprocess
    import sys

    code = (  # one fresh interpreter: the DPO view first (no torch), then the theorem check in the same process
        "import sys; from tests.apptest import open_page\n"
        "for view in ('DPO', 'Theorem check'):\n"
        "    at = open_page('pages/2_KL_leash.py', {'kl_view': view})\n"
        "    print(len(at.exception), 'torch' in sys.modules)"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    outs = run.stdout.strip().splitlines()[-2:]
    assert outs == ["0 False", "0 True"], run.stderr[-2000:]


def test_reward_hacking_links_the_reward_models_length_bias_and_its_link_lands_on_the_same_policy():
    at = open_page(PAGE, {"kl_view": "Reward hacking"})
    assert no_exception(at)
    links = [
        (link.proto.page, link.proto.query_string)
        for link in at.get("page_link")
        if "Reward model page" in link.proto.label
    ]
    assert links == [("Reward_model", "rm_view=Length+bias")]
    # the reward model page's length-bias link at beta = 0.3 (its best beta): the same five answers here
    from views import reward_model as rm_view

    state = rm_view.SPEC.state({"rm_view": "Length bias", "rm_beta": "0.3"})
    query = rm_view.figures(state, rm_view.Options(parts=frozenset({"length"}))).facts["kl_link"]
    linked = open_page(PAGE, query)
    assert no_exception(linked) and linked.warning.len == 0
    bars = _bars(linked)
    assert [x.split("<br>")[0] for x in bars["x"]] == [
        "50 tokens",
        "100 tokens",
        "200 tokens",
        "400 tokens",
        "800 tokens",
    ]
    assert bars["x"][-1].endswith("r = 3.39316 (true 0.5)")  # the proxy and the quality both came along
    # pi* ∝ pi_ref exp(r / beta) by hand, r = quality + 0.3 log2(length) as the link rounds it (6 digits)
    ref, q, lengths = [0.25, 0.35, 0.25, 0.10, 0.05], [0.2, 0.6, 0.8, 0.7, 0.5], [50, 100, 200, 400, 800]
    r = [float(f"{qi + 0.3 * np.log2(n):.6g}") for qi, n in zip(q, lengths, strict=True)]
    w = [p * np.exp((ri - max(r)) / 0.3) for p, ri in zip(ref, r, strict=True)]
    np.testing.assert_allclose(bars["pi"], [x / sum(w) for x in w], atol=5e-6)  # the figure keeps 5 decimals
    # and the true quality the reward model page reports at beta = 0.3 (0.683) is this policy's
    assert sum(x / sum(w) * qi for x, qi in zip(w, q, strict=True)) == pytest.approx(0.683, abs=5e-4)
