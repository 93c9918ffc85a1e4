"""The evaluation page's figures(state, options) as a plain function: only the parts asked for are built, the
worked examples E and D come out in its readouts, bad inputs are clamped with a note, the tables are lazy."""

from __future__ import annotations

import ast
import copy
import json
import math
from fractions import Fraction
from pathlib import Path

import pytest
import scipy.stats

from core import evaluation
from tests.apptest import decode
from views import Options
from views import evaluation as view_of

DEFAULTS = view_of.SPEC.defaults()
ESTIMATORS, BIAS, COMPARISON = "Estimators", "Bias simulation", "Model comparison"
FIGURES = {ESTIMATORS: {"pass-at-k", "pass-hat-k"}, BIAS: {"bias"}, COMPARISON: {"compare"}}
SMALL = DEFAULTS.replace(problems=2000)  # keeps the simulation fast


def _parts(*names: str) -> Options:
    return Options(parts=frozenset(names))


def _readouts(view) -> dict[str, str]:
    return {r.label: r.value for r in view.readouts}


def test_the_module_does_not_import_streamlit():
    tree = ast.parse(Path(view_of.__file__).read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert not any(name.split(".")[0] == "streamlit" for name in imported), imported


@pytest.mark.parametrize("part", [ESTIMATORS, BIAS, COMPARISON])
def test_only_the_requested_part_is_built(part, monkeypatch):
    if part != BIAS:  # the simulation must not even run when its tab is closed
        monkeypatch.setattr(evaluation, "simulate_estimators", lambda *a, **k: pytest.fail("simulated for another tab"))
    view = view_of.figures(SMALL, _parts(part))
    assert set(view.figures) == FIGURES[part]
    assert len(view.readouts) == {ESTIMATORS: 4, BIAS: 4, COMPARISON: 3}[part]
    assert set(view.tables) == {ESTIMATORS: {"pass@k"}, BIAS: {"Simulation"}, COMPARISON: {"Comparison"}}[part]
    assert all(callable(t) for t in view.tables.values())  # lazy: built when a download asks


def test_no_parts_gives_the_clamped_inputs_only():
    view = view_of.figures(DEFAULTS, _parts())
    assert view.figures == {} and view.readouts == [] and view.tables == {} and view.notices == []
    facts = {k: view.facts[k] for k in ("n", "c", "k", "p", "problems", "seed", "acc_a", "acc_b", "N")}
    assert facts == {"n": 10, "c": 3, "k": 5, "p": 0.3, "problems": 100_000, "seed": 0, "acc_a": 0.71} | {
        "acc_b": 0.725,
        "N": 1000,
    }
    assert view.facts["only_a"] is None and view.facts["only_b"] is None


def test_main_is_the_state_s_own_tab():
    assert set(view_of.figures(DEFAULTS).figures) == FIGURES[ESTIMATORS]  # DEFAULT options: parts {"main"}
    assert set(view_of.figures(DEFAULTS.replace(eval_view=COMPARISON)).figures) == FIGURES[COMPARISON]


def test_worked_example_e_in_the_readouts():
    state = DEFAULTS.replace(**view_of.SPEC.presets["Worked example E"])
    m = _readouts(view_of.figures(state, _parts(ESTIMATORS)))
    unbiased = 1 - Fraction(math.comb(7, 5), math.comb(10, 5))  # 1 - C(n-c, k)/C(n, k) = 1 - 21/252
    plugin = 1 - Fraction(7, 10) ** 5
    assert m["Unbiased pass@5"] == f"{float(unbiased):.4f}" == "0.9167"
    assert m["Plug-in pass@5"] == f"{float(plugin):.4f}" == "0.8319"
    assert round(float(m["Unbiased pass@5"]), 3) == 0.917 and round(float(m["Plug-in pass@5"]), 3) == 0.832
    assert m["Gap (unbiased − plug-in)"] == f"{float(unbiased - plugin):.4f}"
    assert m["pass^5: all 5 correct"] == "0.0000"  # C(3, 5) = 0


def _plain_paired(N: int, right_a: int, right_b: int, only_a: int, only_b: int) -> tuple[float, float]:
    """(difference, SE) from one +1/0/-1 score per question, by a plain loop: the per-question differences."""
    both = right_a - only_a
    d = [0] * both + [-1] * only_a + [1] * only_b + [0] * (N - both - only_a - only_b)
    mean = sum(d) / N
    var = sum((x - mean) ** 2 for x in d) / N
    return mean, math.sqrt(var / N)


@pytest.mark.parametrize("preset", ["Worked example D", "D, paired"])
def test_worked_example_d_in_the_readouts_and_verdicts(preset):
    state = DEFAULTS.replace(**view_of.SPEC.presets[preset])
    view = view_of.figures(state, _parts(COMPARISON))
    m = _readouts(view)
    z = scipy.stats.norm.ppf(0.975)
    se_a, se_b = math.sqrt(0.71 * 0.29 / 1000), math.sqrt(0.725 * 0.275 / 1000)
    assert m["SE of A"] == f"{100 * se_a:.1f} points" == "1.4 points"
    assert m["SE of B"] == f"{100 * se_b:.1f} points" == "1.4 points"
    half = z * math.hypot(se_a, se_b)  # independent: the two errors add in quadrature
    assert m["B − A, independent"] == f"+1.5 ± {100 * half:.1f}" == "+1.5 ± 3.9"
    if preset == "D, paired":
        diff, se = _plain_paired(1000, 710, 725, 40, 55)
        assert m["B − A, paired"] == f"{100 * diff:+.1f} ± {100 * z * se:.1f}" == "+1.5 ± 1.9"
    assert ("B − A, paired" in m) == (preset == "D, paired")
    verdicts = view.facts["verdicts"]
    assert len(verdicts) == 1 + (preset == "D, paired")
    assert all(kind == "info" and "not significant" in text for kind, text in verdicts)
    assert verdicts[0][1].startswith("**Independent.** B - A = +1.5 ± 3.9 points (95%)")


def test_a_significant_difference_is_a_success():
    state = DEFAULTS.replace(accA=70.0, accB=75.0, questions=5000)
    ((kind, text),) = view_of.figures(state, _parts(COMPARISON)).facts["verdicts"]
    assert kind == "success" and "significant, B is better" in text


def test_verdict_sentences():
    same = evaluation.compare_models(0.710, 0.725, 1000)  # worked example D: the interval contains 0
    assert view_of.verdict(same) == "B - A = +1.5 ± 3.9 points (95%): not significant, the interval contains 0."
    tight = evaluation.compare_models(0.710, 0.725, 1000, only_a=15, only_b=30)
    assert view_of.verdict(tight).endswith(": significant, B is better on this benchmark.")
    worse = evaluation.compare_models(0.9, 0.5, 1000)
    z = scipy.stats.norm.ppf(0.975)
    half = 100 * z * math.hypot(math.sqrt(0.9 * 0.1 / 1000), math.sqrt(0.5 * 0.5 / 1000))
    assert (
        view_of.verdict(worse)
        == f"B - A = -40.0 ± {half:.1f} points (95%): significant, A is better on this benchmark."
    )


@pytest.mark.parametrize(
    ("changes", "note", "facts", "shown"),
    [
        ({"c": 20}, "c=20 must lie between 0 and n", {"c": 10}, {"Unbiased pass@5": "1.0000"}),
        ({"k": 50}, "k=50 must lie between 1 and n", {"k": 10}, {"Unbiased pass@10": "1.0000"}),
        ({"onlyA": 40}, "needs both counts", {"only_a": None}, {}),
        ({"onlyA": 40, "onlyB": 50}, "only B right=50 does not fit", {"only_b": 55}, {}),
    ],
)
def test_out_of_range_inputs_are_clamped_with_an_info_note(changes, note, facts, shown):
    state = DEFAULTS.replace(**changes)
    for parts in (_parts(), _parts(ESTIMATORS)):  # the notes come whatever is drawn
        view = view_of.figures(state, parts)
        assert [kind for kind, _ in view.notices] == ["info"] and note in view.notices[0][1]
        assert {k: view.facts[k] for k in facts} == facts
    m = _readouts(view)
    for label, value in shown.items():
        assert m[label] == value


def test_the_every_k_table_is_lazy_and_exact():
    view = view_of.figures(DEFAULTS.replace(n=2000, c=30, k=100), _parts(ESTIMATORS))
    r = view.facts["curves"]
    assert r.ks.size < 2000 and set(view.tables) == {"pass@k", view_of.EVERY_K}
    shown, every = view.tables["pass@k"](), view.tables[view_of.EVERY_K]()
    assert len(shown) == r.ks.size and every["k"].tolist() == list(range(1, 2001))
    for k in (1, 100, 777, 2000):
        exact = 1 - Fraction(math.comb(2000 - 30, k), math.comb(2000, k))
        assert every["pass_at_k_unbiased"][k - 1] == pytest.approx(float(exact), rel=1e-12)
    assert view_of.EVERY_K not in view_of.figures(DEFAULTS, _parts(ESTIMATORS)).tables  # n = 10: every k is shown


def test_bias_simulation_readouts_progress_and_caption():
    calls: list[tuple[float, str]] = []
    view = view_of.figures(SMALL, _parts(BIAS), progress=lambda f, text: calls.append((f, text)))
    assert calls and calls[-1] == (1.0, "Simulating 2,000 problems of 10 samples… 100%")
    assert [f for f, _ in calls] == sorted(f for f, _ in calls)
    m = _readouts(view)
    truth = 1 - 0.7**5
    assert m["Truth 1 − (1 − p)^5"] == f"{truth:.4f}" == "0.8319"
    (label, value) = next((k, v) for k, v in m.items() if k.startswith("Unbiased mean ±"))
    assert abs(float(value) - truth) < 4 * float(label.split(" ± ")[1]) + 5e-5
    pmf = scipy.stats.binom.pmf(range(11), 10, 0.3)
    exact_bias = sum(w * (1 - (1 - c / 10) ** 5) for c, w in enumerate(pmf)) - truth
    assert view.readouts[3].help == f"exact: {exact_bias:+.4f}" == "exact: -0.0722"
    assert view.facts["simulation_caption"].startswith("2,000 problems of 10 samples drawn on ")
    assert view.facts["simulation_caption"].endswith(", seed 0.")


def test_the_simulation_key_ignores_other_controls():
    key = view_of.simulation_state(SMALL)
    assert view_of.simulation_state(SMALL.replace(accA=50.0, c=7, axis="log", eval_view=BIAS)) == key
    for name, value in (("p", 0.5), ("n", 20), ("k", 3), ("problems", 3000), ("sim_seed", 1)):
        assert view_of.simulation_state(SMALL.replace(**{name: value})) != key


def _worst_k_by_scipy(n: int, p: float) -> int:
    """argmin over k of E[plug-in pass@k] - pass@k, with scipy's binomial weights."""
    weights = scipy.stats.binom.pmf(range(n + 1), n, p)
    bias = [
        sum(w * (1 - (1 - c / n) ** k) for c, w in enumerate(weights)) - (1 - (1 - p) ** k) for k in range(1, n + 1)
    ]
    return 1 + min(range(n), key=bias.__getitem__)


@pytest.mark.parametrize(("n", "p"), [(10, 0.3), (40, 0.5), (7, 0.05)])
def test_where_worst_quotes_the_worst_k(n, p):
    facts = view_of.figures(DEFAULTS.replace(n=n, c=1, k=1, p=p), _parts()).facts
    assert f"With n = {n:,} samples" in facts["where_worst"]
    assert facts["where_worst"].endswith(f"At p = {p:g} it is k = {_worst_k_by_scipy(n, p)}.")


def test_where_worst_outside_the_exact_range_and_the_thresholds():
    facts = view_of.figures(DEFAULTS.replace(n=2, c=1, k=1), _parts()).facts
    assert facts["where_worst"] == "With n = 2 there is no k strictly between 1 and n: the bias is 0 at k = 1."
    facts = view_of.figures(DEFAULTS.replace(n=1000, c=1, k=1), _parts()).facts
    assert "about 2.7/n (0.25 at n = 10, 0.027 at n = 100)" in facts["where_worst"]
    thresholds = facts["interior_thresholds"]
    assert set(thresholds) == {10, 100}
    for n, t in thresholds.items():  # the worst k is n just below the threshold and inside just above it
        assert _worst_k_by_scipy(n, t * 0.999) == n and _worst_k_by_scipy(n, t * 1.001) < n


# ---------------------------------------------------------------------------------------------------- the k slider
def _plain(obj):
    """A figure's JSON with plotly's typed arrays decoded to lists, so that two figures compare with ==."""
    if isinstance(obj, dict):
        if "bdata" in obj:
            return decode(obj).tolist()
        return {k: _plain(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple):
        return [_plain(v) for v in obj]
    return obj


def _pass_at_k(state) -> tuple[dict, object]:
    view = view_of.figures(state)
    return _plain(json.loads(view.figures["pass-at-k"].to_json())), view.drags.get("pass-at-k")


def _dragged(fig: dict, i: int) -> dict:
    """``fig`` (plain JSON) after the browser applies slider step ``i`` (Plotly.update(gd, traces, layout, indices):
    a trace attribute's list holds one value per listed trace; a layout key is a path), without its slider."""
    out = copy.deepcopy(fig)
    traces, layout, indices = out["layout"]["sliders"][0]["steps"][i]["args"]
    for key, values in traces.items():
        for pos, index in enumerate(indices):
            out["data"][index][key] = values[pos % len(values)]
    for path, value in layout.items():
        head, key = path.split(".")
        name, index = head[:-1].split("[")
        out["layout"][name][int(index)][key] = value
    del out["layout"]["sliders"]
    return out


def _without_slider(fig: dict) -> dict:
    return {**fig, "layout": {k: v for k, v in fig["layout"].items() if k != "sliders"}}


@pytest.mark.parametrize(
    ("changes", "steps"),
    [
        ({}, 10),
        ({"n": 200, "c": 20, "k": 10}, None),
        ({"n": 120, "c": 0, "k": 120}, 120),
        ({"n": 1, "c": 1, "k": 1}, 1),
    ],
)
def test_each_k_step_draws_the_view_at_that_k(changes, steps):
    """Step i of the slider turns the pass@k figure into the one the view draws at k = values[i]: the markers, the
    dotted line and the label at k, nothing left over (the first, a middle and the last step)."""
    state = DEFAULTS.replace(**changes)
    fig, drag = _pass_at_k(state)
    slider = fig["layout"]["sliders"][0]
    assert drag.field == "k" and [s["label"] for s in slider["steps"]] == [f"{k:,}" for k in drag.values]
    assert steps is None or len(drag.values) == steps
    for i in sorted({0, len(drag.values) // 2, len(drag.values) - 1}):
        there, _ = _pass_at_k(state.replace(k=drag.values[i]))
        assert _dragged(fig, i) == _without_slider(there), drag.values[i]


def test_a_thinned_curve_keeps_its_grid_and_each_step_moves_what_marks_k():
    """n = 100,000: the curves show the display grid and the page's k (here off the grid); a step at another k
    moves the markers, the line and the label to what the view draws there, and leaves the curves alone."""
    state = DEFAULTS.replace(n=100_000, c=300, k=4321)
    fig, drag = _pass_at_k(state)
    assert 20 <= len(drag.values) <= 120 and {1, 4321, 100_000} <= set(drag.values)
    grid = set(evaluation.display_k_grid(100_000).tolist())
    assert 4321 not in grid and set(drag.values) - {4321} <= grid  # every other step on the curves' own grid
    for i in (0, len(drag.values) // 3, len(drag.values) - 1):
        there, _ = _pass_at_k(state.replace(k=drag.values[i]))
        dragged = _dragged(fig, i)
        assert dragged["data"][2:] == there["data"][2:]
        assert dragged["layout"]["annotations"] == there["layout"]["annotations"]


def test_k_steps_match_exact_binomials_at_the_printed_precision():
    """Worked example E (n = 10, c = 3): pass@5 = 1 − C(7,5)/C(10,5) = 0.917 against the plug-in 1 − 0.7⁵ = 0.832;
    at k = 8 every draw of 8 holds a correct sample (1 − C(7,8)/C(10,8) = 1); and n = 200, c = 20 at k = 50."""
    for n, c, k in ((10, 3, 5), (10, 3, 8), (10, 3, 1), (200, 20, 50)):
        fig, drag = _pass_at_k(DEFAULTS.replace(n=n, c=c, k=10 if n == 200 else 5))  # the step of k, from another k
        step = fig["layout"]["sliders"][0]["steps"][drag.values.index(k)]
        unbiased = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
        plugin = 1 - (1 - Fraction(c, n)) ** k
        text = (
            f"<b>k = {k:,}</b><br>unbiased {float(unbiased):.3f}<br>plug-in {float(plugin):.3f}<br>"
            f"gap {float(unbiased - plugin):.3f}"
        )
        traces, layout, indices = step["args"]
        assert layout["annotations[0].text"] == text and list(indices) == [2, 3]
        assert traces["x"] == [[k, k], [k, k]] and traces["name"] == [f"k = {k:,}"] * 2
        assert traces["y"][0] == pytest.approx([float(unbiased), float(plugin)], abs=1e-12)
    step = _pass_at_k(DEFAULTS.replace(k=2))[0]["layout"]["sliders"][0]["steps"][4]  # the lesson's numbers
    assert step["args"][1]["annotations[0].text"] == "<b>k = 5</b><br>unbiased 0.917<br>plug-in 0.832<br>gap 0.085"


@pytest.mark.parametrize("n", [1, 10, 121, 200, 5_000, 100_000])
def test_the_k_drag_starts_at_the_pages_k_and_every_value_is_valid(n):
    for k in sorted({1, max(1, n // 7), n}):
        state = DEFAULTS.replace(n=n, c=n // 3, k=k)
        view = view_of.figures(state)
        drag = view.drags["pass-at-k"]
        slider = view.figures["pass-at-k"].layout.sliders[0]
        assert all(view_of.SPEC.check({"n": n, "k": v}) == [] and v <= n for v in drag.values)
        assert all(type(v) is int for v in drag.values) and list(drag.values) == sorted(set(drag.values))
        assert drag.values[slider.active] == k and drag.values[0] == 1 and drag.values[-1] == n
        assert len(drag.values) == (n if n <= view_of.EVERY_K_STEPS else len(drag.values))
        assert n <= view_of.EVERY_K_STEPS or 20 <= len(drag.values) <= 120
        assert slider.currentvalue.prefix == "k = "


def test_no_k_slider_while_the_answer_is_held_back():
    hidden = view_of.figures(DEFAULTS.replace(predict_eval=True))
    assert hidden.drags == {} and not hidden.figures["pass-at-k"].layout.sliders
    revealed = view_of.figures(DEFAULTS.replace(predict_eval=True, guess_pass=0.8))
    slider = revealed.figures["pass-at-k"].layout.sliders[0]  # the guess line is drawn on the same figure
    assert revealed.drags["pass-at-k"].values[slider.active] == 5
    assert not revealed.figures["pass-hat-k"].layout.sliders  # the drag is on the pass@k figure only
