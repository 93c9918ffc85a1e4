"""The GRPO page's pure view: figures(state, options) builds only the parts asked for, reproduces worked example C
(lesson 3.8) against a plain-python reference, gives zeros and no summary for a group without signal, and turns
rewards it cannot read into a notice and worked example C, all without importing Streamlit."""

from __future__ import annotations

import ast
import copy
import json
import math
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from tests.apptest import decode, trace
from views import Options
from views import grpo as view_of

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE_C = [1, 0, 0, 1, 1, 0, 0, 0]
ALL_PARTS = frozenset({"main", *view_of.VIEWS})


def _state(**values):
    return view_of.SPEC.state(values)


def _bars(view) -> np.ndarray:
    """The advantages drawn as bars in the main figure."""
    return decode(trace(view.figures["main"].to_dict(), "advantage")["y"])


def _readouts(view) -> dict[str, str]:
    return {r.label: r.value for r in view.readouts}


def _reference_advantages(rewards: list[float], divisor: str = "population", eps: float = 0.0) -> list[float]:
    """A plain loop over the group: (r_i − mean) / (std + ε), std over G or G − 1, or no std at all."""
    G = len(rewards)
    mean = sum(rewards) / G
    square = sum((r - mean) ** 2 for r in rewards)
    if divisor == "none":
        return [r - mean for r in rewards]
    std = math.sqrt(square / (G if divisor == "population" else G - 1))
    return [(r - mean) / (std + eps) for r in rewards]


def test_the_view_module_does_not_import_streamlit():
    tree = ast.parse(Path(view_of.__file__).read_text(encoding="utf-8"))
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not any(m.split(".")[0] == "streamlit" for m in modules)
    assert "pages.frame" not in modules  # only views.state, the Streamlit-free part of the frame


@pytest.mark.parametrize(
    "parts",
    [frozenset(), frozenset({"main"}), frozenset({"main", view_of.PPO}), frozenset({view_of.BATCH}), ALL_PARTS],
)
def test_only_the_requested_parts_are_built(parts):
    view = view_of.figures(_state(), Options(parts=parts))
    assert set(view.figures) == set(parts)
    assert ("ppo_table" in view.facts) == (view_of.PPO in parts)
    assert ("length_weights" in view.facts) == (view_of.BATCH in parts)
    assert len(view.readouts) == 6 and set(view.tables) == {"Group", "Difficulty"}  # always: cheap or lazy


def test_worked_example_c():
    view = view_of.figures(_state(), Options(parts=ALL_PARTS))
    assert view.notices == []
    assert Fraction(sum(EXAMPLE_C), len(EXAMPLE_C)) == Fraction(3, 8)  # mean 0.375
    m = _readouts(view)
    assert m["Mean reward"] == "0.375" and m["Std (÷G)"] == "0.484" and m["Correct answers"] == "3 of 8"
    assert m["Push up / down"] == "+1.29 / −0.77" and m["Mode factor"] == "× 1"
    bars = _bars(view)
    np.testing.assert_allclose(bars, _reference_advantages(EXAMPLE_C), rtol=1e-12)
    np.testing.assert_allclose(bars.round(2), [1.29, -0.77, -0.77, 1.29, 1.29, -0.77, -0.77, -0.77])
    assert view.facts["has_signal"] and view.facts["correct"] == "3 of 8"
    assert view.facts["summary"].startswith("**3 of 8 correct** · mean 0.375 · std 0.484.")
    assert f"multiplies them by {math.sqrt(7 / 8):.4g}" in view.facts["summary"]  # √((G−1)/G) = 0.9354
    marker = trace(view.figures[view_of.DIFFICULTY].to_dict(), "this group: P(signal)")
    assert list(marker["x"]) == [0.375] and marker["y"][0] == pytest.approx(1 - 0.375**8 - 0.625**8, abs=1e-3)
    group = view.tables["Group"]()
    np.testing.assert_allclose(group["advantage_sample"], _reference_advantages(EXAMPLE_C, "sample"), rtol=1e-12)
    np.testing.assert_allclose(group["advantage_none"], _reference_advantages(EXAMPLE_C, "none"), rtol=1e-12)


def test_the_batch_tab_table_weighs_answers_by_length():
    weights = view_of.figures(_state(), Options(parts=frozenset({view_of.BATCH}))).facts["length_weights"]
    assert weights["tokens |o_i|"].tolist() == list(view_of.LENGTHS)
    total = sum(view_of.LENGTHS)  # 2,300 tokens in the batch
    # GRPO: every answer weighs 1/G; the token mean over the batch (DAPO) weighs an answer by its share of tokens
    columns = {name: weights[name].tolist() for name in weights.columns[1:]}
    assert [0.25] * 4 in columns.values()
    assert [round(n / total, 4) for n in view_of.LENGTHS] in columns.values()


def test_a_group_without_signal_gives_zeros_and_no_summary():
    for std in ("population", "sample", "none"):
        view = view_of.figures(_state(rewards="1,1,1,1", std=std), Options(parts=ALL_PARTS))
        assert view.notices == []
        assert np.all(_bars(view) == 0)
        assert view.facts["has_signal"] is False and view.facts["summary"] is None
        m = _readouts(view)
        assert m["Push up / down"] == "none" and m["Correct answers"] == "4 of 4"
        scale = next(r for r in view.readouts if r.label.startswith("Scale"))
        assert scale.value == "— (no signal)"  # not "0": with a std, 1/(0 + 0) has no value
        assert ("no division" in scale.help) if std == "none" else ("undefined" in scale.help)
        group = view.tables["Group"]()
        assert all(np.all(group[f"advantage_{mode}"] == 0) for mode in ("population", "sample", "none"))
    with_signal = view_of.figures(_state(rewards="1,0,0,1,1,0,0,0", std="none"), Options(parts=frozenset()))
    scale = next(r for r in with_signal.readouts if r.label.startswith("Scale"))
    assert scale.value == "1" and "ε does not enter" in scale.help  # no division, so ε cannot cap anything


def test_each_mode_and_eps_rescale_as_the_reference_says():
    rewards = [0.2, 0.9, 0.4, 0.4, 1.0]
    for std in ("population", "sample", "none"):
        view = view_of.figures(_state(rewards="0.2, 0.9, 0.4, 0.4, 1", std=std, eps="0.1"))
        eps = 0.0 if std == "none" else 0.1
        expected = _reference_advantages(rewards, std, eps)
        np.testing.assert_allclose(_bars(view), expected, rtol=1e-12)
        assert _readouts(view)["Correct answers"] == "—" and view.facts["correct"] is None


@pytest.mark.parametrize(
    ("bad", "message"),
    [("abc", "is not a number"), ("1", "got 1"), ("1,nan,0", "not NaN or infinity"), ("1e308,-1e308", "too large")],
)
def test_rewards_it_cannot_read_give_a_notice_and_worked_example_c(bad, message):
    view = view_of.figures(_state(rewards=bad), Options(parts=ALL_PARTS))
    assert len(view.notices) == 1
    kind, text = view.notices[0]
    assert kind == "warning" and message in text and "worked example C" in text
    assert _readouts(view) == _readouts(view_of.figures(_state()))
    np.testing.assert_allclose(_bars(view), _reference_advantages(EXAMPLE_C), rtol=1e-12)


def test_the_open_tab_is_part_of_the_link():
    f = view_of.SPEC["grpo_view"]
    assert f.widget == "tabs" and f.choices == view_of.VIEWS and f.default == view_of.VIEWS[0]
    state = _state(grpo_view=view_of.BATCH)
    assert view_of.SPEC.query(state) == {"grpo_view": view_of.BATCH}
    assert view_of.SPEC.parse(view_of.SPEC.query(state)) == (state, [])


# ---------------------------------------------------------------------------------------------------- the ε slider
def _plain(obj):
    """A figure's JSON with plotly's typed arrays decoded to lists, so that two figures compare with ==."""
    if isinstance(obj, dict):
        if "bdata" in obj:
            return decode(obj).tolist()
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def _json(fig) -> dict:
    return _plain(json.loads(fig.to_json()))


def _dragged(fig: dict, i: int) -> dict:
    """``fig`` (plain JSON) after the browser applies slider step ``i`` (Plotly.update(gd, traces, layout, indices):
    a trace attribute's list holds one value per listed trace), without its slider."""
    out = copy.deepcopy(fig)
    traces, layout, indices = out["layout"]["sliders"][0]["steps"][i]["args"]
    for key, values in traces.items():
        for pos, index in enumerate(indices):
            out["data"][index][key] = values[pos % len(values)]
    assert layout == {}  # nothing outside the two bar traces quotes ε
    del out["layout"]["sliders"]
    return out


def _without_slider(fig: dict) -> dict:
    return {**fig, "layout": {k: v for k, v in fig["layout"].items() if k != "sliders"}}


@pytest.mark.parametrize(
    "values", [{}, {"std": "sample", "eps": "1e-4"}, {"rewards": "0.5 " * 7 + "0.501"}, {"rewards": "1" + ",0" * 20}]
)
def test_each_eps_step_draws_the_view_at_that_eps(values):
    """Step i of the slider turns the figure into the one the view draws at ε = values[i]: bars, labels, hover
    formula and customdata of both traces, nothing else left over (the first, a middle and the last step)."""
    state = _state(**values)
    view = view_of.figures(state)
    drag = view.drags["main"]
    fig = _json(view.figures["main"])
    slider = fig["layout"]["sliders"][0]
    assert drag.field == "eps" and drag.values == tuple(view_of.EPS)
    assert [s["label"] for s in slider["steps"]] == list(drag.values)
    for i in (0, len(drag.values) // 2, len(drag.values) - 1):
        there = _json(view_of.figures(state.replace(eps=drag.values[i])).figures["main"])
        assert _dragged(fig, i) == _without_slider(there), drag.values[i]
        assert there["layout"]["sliders"][0]["active"] == i


def _reference_labels(rewards: list[Fraction], eps: float, divisor: str = "population") -> list[str]:
    """The bar labels at ε, from exact fractions: (r_i − mean) / (std + ε) to two decimals, signed."""
    G = len(rewards)
    mean = sum(rewards) / G
    var = sum((r - mean) ** 2 for r in rewards) / (G if divisor == "population" else G - 1)
    std = math.sqrt(var)
    return [f"{float(r - mean) / (std + eps):+.2f}" for r in rewards]


def test_eps_steps_match_a_reference_at_the_printed_precision():
    """Worked example C at ε = 0.1 (+1.07 / −0.64), and the explanation's nearly equal scores: ε = 10⁻⁴ leaves the
    odd answer +2.03, ε = 10⁻² brings it to +0.08; the hover quotes std + ε to four significant digits."""
    steps = {s["label"]: s for s in _json(view_of.figures(_state()).figures["main"])["layout"]["sliders"][0]["steps"]}
    example_c = [Fraction(r) for r in EXAMPLE_C]
    assert steps["0.1"]["args"][0]["text"][1] == _reference_labels(example_c, 0.1)
    assert _reference_labels(example_c, 0.1)[:2] == ["+1.07", "-0.64"]
    assert f"/ {math.sqrt(15 / 64) + 0.1:.4g} =" in steps["0.1"]["args"][0]["hovertemplate"][1]

    nearly = [Fraction(1, 2)] * 7 + [Fraction(501, 1000)]
    view = view_of.figures(_state(rewards="0.5 " * 7 + "0.501"))
    steps = {s["label"]: s for s in _json(view.figures["main"])["layout"]["sliders"][0]["steps"]}
    for eps, odd in (("1e-4", "+2.03"), ("1e-2", "+0.08")):
        labels = steps[eps]["args"][0]["text"][1]
        assert labels == _reference_labels(nearly, float(eps)) and labels[-1] == odd
        bars = steps[eps]["args"][0]["y"][1]
        mean = sum(nearly) / 8
        std = math.sqrt(sum((r - mean) ** 2 for r in nearly) / 8)  # 3.307e-4
        assert bars[-1] == pytest.approx(float(nearly[-1] - mean) / (std + float(eps)), rel=1e-12)


@pytest.mark.parametrize("eps", list(view_of.EPS))
def test_the_eps_drag_starts_at_the_pages_eps_and_every_value_is_valid(eps):
    view = view_of.figures(_state(eps=eps, std="sample"))
    drag = view.drags["main"]
    slider = view.figures["main"].layout.sliders[0]
    assert all(view_of.SPEC["eps"].check(v) is None for v in drag.values)
    assert drag.values[slider.active] == eps and 20 <= len(drag.values) <= 120
    assert slider.currentvalue.prefix == "ε added to the std = "
    # one y axis for every ε: the bars move, the axis does not
    at_zero = view_of.figures(_state(std="sample")).figures["main"]
    assert view.figures["main"].layout.yaxis.range == at_zero.layout.yaxis.range


@pytest.mark.parametrize(
    "values",
    [
        {"predict_grpo": True},  # Predict first, no guess yet: the bars would give the answer away
        {"std": "none"},  # no std: ε does not enter
        {"rewards": "1,1,1,1"},  # no signal: every advantage is 0 whatever ε
    ],
)
def test_no_eps_slider_where_eps_does_not_show(values):
    view = view_of.figures(_state(**values))
    assert view.drags == {} and not view.figures["main"].layout.sliders


def test_a_revealed_guess_keeps_the_eps_slider():
    view = view_of.figures(_state(predict_grpo=True, guess_adv=1.0, eps="1e-2"))
    slider = view.figures["main"].layout.sliders[0]
    assert view.drags["main"].values[slider.active] == "1e-2"
