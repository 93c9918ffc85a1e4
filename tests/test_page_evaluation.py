"""The evaluation page in AppTest: worked examples D and E, every control moves its figure, links reproduce the
view, bad links and out-of-range values fall back or are clamped with a message."""

import math

import numpy as np
import pytest

from core import evaluation
from tests.apptest import (
    BAD_LINK_VALUES,
    Reused,
    assert_bad_link_falls_back,
    assert_link_reproduces,
    charts,
    choose_preset,
    decode,
    figures,
    metrics,
    no_exception,
    open_page,
    opened,
    slider_of,
    trace,
)

PAGE = "pages/5_Evaluation.py"
ESTIMATORS, BIAS, COMPARE = "Estimators", "Bias simulation", "Model comparison"


def _data(at) -> list:
    """The meaningful data of the open view's figures: every trace's x and y, and the annotation texts."""
    out = []
    for fig in figures(at):
        for tr in fig["data"]:
            out += [decode(tr.get(axis, [])).tolist() for axis in ("x", "y")]
            out += [decode(tr.get("error_x", {}).get(part, [])).tolist() for part in ("array", "arrayminus")]
        out += [a["text"] for a in fig["layout"].get("annotations", [])]
    return out


def _notes(at) -> list[str]:
    """The page's info notices (clamped values), without the comparison's verdicts (which start in bold)."""
    return [i.value for i in at.info if not i.value.startswith("**")]


def _simulated_means(m: dict[str, str]) -> list[tuple[str, str]]:
    """(label, value) of the unbiased and the plug-in mean readouts, whose labels carry the SE."""
    return [next((k, v) for k, v in m.items() if k.startswith(name)) for name in ("Unbiased mean ±", "Plug-in mean ±")]


def _view(view: str, query: dict | None = None):
    return open_page(PAGE, {"eval_view": view, **(query or {})})


@pytest.fixture(scope="module")
def reused():
    return {view: Reused(PAGE, {"eval_view": view}) for view in (ESTIMATORS, BIAS, COMPARE)}


def test_the_k_drag_row_under_the_pass_at_k_curves(default):
    """The pass@k curves are drawn live with a drag row: a step at every k = 1..10, starting at k = 5, whose step for
    k = 8 moves the markers to 1 − C(7,8)/C(10,8) = 1 and 1 − 0.7⁸ and the label with them; the second figure keeps
    no slider."""
    chart, hat = charts(default)[:2]
    curves = figures(default)[0]
    assert chart.live and chart.sweep is not None and "sliders" not in curves["layout"]
    assert hat.sweep is None and "sliders" not in figures(default)[1]["layout"]
    slider = slider_of(curves)
    assert [s["label"] for s in slider["steps"]] == [str(k) for k in range(1, 11)]
    assert slider["active"] == 4 and slider["currentvalue"]["prefix"] == "k = "
    traces, layout, _ = slider["steps"][7]["args"]
    assert traces["x"][0] == [8, 8] and traces["y"][0] == pytest.approx([1.0, 1 - 0.7**8], abs=1e-12)
    label = f"<b>k = 8</b><br>unbiased 1.000<br>plug-in {1 - 0.7**8:.3f}<br>gap {0.7**8:.3f}"
    assert layout["annotations[0].text"] == label
    at = open_page(PAGE, {"k": "8"})
    assert slider_of(figures(at)[0])["active"] == 7
    assert figures(at)[0]["layout"]["annotations"][0]["text"] == layout["annotations[0].text"]


def test_default_is_worked_example_e(default):
    m = metrics(default)
    assert round(float(m["Unbiased pass@5"]), 3) == 0.917  # 1 - 21/252
    assert round(float(m["Plug-in pass@5"]), 3) == 0.832  # 1 - 0.7^5
    assert m["Gap (unbiased − plug-in)"] == "0.0847"
    assert m["pass^5: all 5 correct"] == "0.0000"  # only 3 correct: 5 can never all be right
    assert default.warning.len == 0 and default.info.len == 0
    curves, hat = figures(default)
    unbiased, plugin = trace(curves, "unbiased"), trace(curves, "plug-in")
    assert decode(unbiased["x"]).tolist() == list(range(1, 11))
    u, g = decode(unbiased["y"]), decode(plugin["y"])
    assert u[0] == pytest.approx(0.3) and g[0] == pytest.approx(0.3)  # they agree at k = 1
    assert u[-1] == 1.0 and np.all(u >= g - 1e-12)  # at k = n the unbiased one is 1 (c >= 1)
    assert "unbiased 0.917" in curves["layout"]["annotations"][0]["text"]
    assert decode(trace(hat, "pass^k: all")["y"])[:4] == pytest.approx([0.3, 1 / 15, 1 / 120, 0.0])


def test_home_page_links_the_evaluation_page():
    at = open_page(None)
    assert no_exception(at)
    assert any("pass@k" in str(link.proto.label) for link in at.get("page_link"))


@pytest.mark.parametrize(
    ("view", "key", "value"),
    [
        (ESTIMATORS, "n", 40.0),
        (ESTIMATORS, "c", 7.0),
        (ESTIMATORS, "k", 2.0),
        (BIAS, "p", 0.1),
        (BIAS, "problems", 5000.0),
        (BIAS, "sim_seed", 3.0),
        (BIAS, "n", 50.0),
        (COMPARE, "accA", 65.0),
        (COMPARE, "accB", 80.0),
        (COMPARE, "questions", 250.0),
    ],
)
def test_each_control_changes_its_figure(reused, view, key, value):
    before = _data(opened(PAGE, {"eval_view": view}))
    with reused[view].change("number_input", key, value) as at:
        assert no_exception(at) and _notes(at) == []
        assert _data(at) != before


def test_axis_control_switches_the_k_axis():
    at = open_page(PAGE, {"n": "1000", "c": "30", "k": "100"})
    assert all(f["layout"]["xaxis"]["type"] == "log" for f in figures(at))  # auto: log for n > 100
    at.segmented_control(key="axis").set_value("linear").run()
    assert all(f["layout"]["xaxis"].get("type", "linear") == "linear" for f in figures(at))
    at = open_page(PAGE, {"axis": "log"})
    assert figures(at)[0]["layout"]["xaxis"]["type"] == "log"


def test_paired_counts_add_the_paired_interval():
    at = _view(COMPARE)
    assert len([t for t in figures(at)[0]["data"] if t["marker"].get("symbol") == "diamond"]) == 1
    at.number_input(key="onlyA").set_value(40.0)
    at.number_input(key="onlyB").set_value(55.0)
    at.run()
    diamonds = [t for t in figures(at)[0]["data"] if t["marker"].get("symbol") == "diamond"]
    assert [t["y"][0] for t in diamonds] == ["independent", "paired"]
    assert metrics(at)["B − A, paired"] == "+1.5 ± 1.9"


@pytest.mark.parametrize(
    ("view", "query"),
    [
        (ESTIMATORS, {"n": "300", "c": "45", "k": "17", "axis": "linear"}),
        (BIAS, {"n": "30", "k": "4", "p": "0.125", "problems": "20000", "sim_seed": "7"}),
        (COMPARE, {"accA": "60.5", "accB": "64.0", "questions": "2000", "onlyA": "100", "onlyB": "170"}),
    ],
)
def test_link_with_every_parameter_reproduces_the_view(view, query):
    linked = assert_link_reproduces(
        PAGE, {"eval_view": view, **query, "present": "true"}, _data, session={"eval_view": view}
    )
    assert linked.warning.len == 0 and _notes(linked) == []


BAD = BAD_LINK_VALUES


@pytest.mark.parametrize("view", [ESTIMATORS, BIAS, COMPARE])
@pytest.mark.parametrize("bad", BAD)
def test_bad_link_values_fall_back_to_defaults_with_a_message(view, bad):
    keys = ["n", "k", "problems", "questions", "axis"] + (
        ["c", "p", "sim_seed", "accA", "accB", "onlyA", "onlyB"] * (bad != "0")
    )
    assert_bad_link_falls_back(_view(view, dict.fromkeys(keys, bad)), opened(PAGE, {"eval_view": view}), bad)


@pytest.mark.parametrize(
    ("query", "note", "shown"),
    [
        ({"n": "10", "c": "20", "k": "5"}, "c=20 must lie between 0 and n", {"Unbiased pass@5": "1.0000"}),
        ({"n": "10", "c": "3", "k": "50"}, "k=50 must lie between 1 and n", {"Unbiased pass@10": "1.0000"}),
    ],
)
def test_out_of_range_values_are_clamped_with_a_note(query, note, shown):
    at = open_page(PAGE, query)
    assert no_exception(at) and at.warning.len == 0
    assert any(note in text for text in _notes(at))
    for label, value in shown.items():
        assert metrics(at)[label] == value


@pytest.mark.parametrize(
    ("query", "warning", "shown"),
    [
        (
            {"n": "10.4", "c": "3", "k": "5"},
            "`n=10.4`, a whole number here; using `10`.",
            {"Unbiased pass@5": "0.9167"},
        ),
        ({"n": "10", "c": "3", "k": "2.6"}, "`k=2.6`, a whole number here; using `3`.", {"Unbiased pass@3": "0.7083"}),
    ],
)
def test_non_whole_counts_in_a_link_are_rounded_with_a_warning(query, warning, shown):
    at = open_page(PAGE, query)
    assert no_exception(at) and _notes(at) == []
    assert [w.value for w in at.warning] == [f"The link asked for {warning}"]
    for label, value in shown.items():  # 1 - C(7, k) / C(10, k)
        assert metrics(at)[label] == value


def test_paired_counts_that_do_not_fit_are_corrected_with_a_note():
    at = _view(COMPARE, {"onlyA": "40", "onlyB": "50"})  # B - A = 15 questions, so only B must be 55
    assert no_exception(at)
    assert any("only B right=50 does not fit" in text for text in _notes(at))
    assert metrics(at)["B − A, paired"] == "+1.5 ± 1.9"
    at = _view(COMPARE, {"onlyA": "40"})
    assert any("needs both counts" in text for text in _notes(at)) and "B − A, paired" not in metrics(at)


def test_preset_worked_example_e():
    at = open_page(PAGE, {"n": "200", "c": "1", "k": "100"})
    choose_preset(at, "Evaluation", "Worked example E").run()
    m = metrics(at)
    assert m["Unbiased pass@5"] == f"{1 - 21 / 252:.4f}" and m["Plug-in pass@5"] == f"{1 - 0.7**5:.4f}"


def test_preset_code_benchmark_and_its_simulation():
    at = _view(COMPARE)
    choose_preset(at, "Evaluation", "Code benchmark").run()
    assert at.session_state["eval_view"] == ESTIMATORS
    m = metrics(at)
    assert m["Unbiased pass@10"] == f"{evaluation.pass_at_k(200, 20, 10):.4f}"
    assert m["Plug-in pass@10"] == f"{1 - 0.9**10:.4f}"
    assert "all 200 values of k" in figures(at)[0]["layout"]["xaxis"]["title"]["text"]
    at.session_state["eval_view"] = BIAS
    at.run()
    m = metrics(at)
    assert m["Truth 1 − (1 − p)^10"] == f"{1 - 0.95**10:.4f}" == "0.4013"
    (label, value), (_, plug_value) = _simulated_means(m)
    mean, se = float(value), float(label.split(" ± ")[1])
    assert abs(mean - 0.4013) < 3 * se + 5e-5  # unbiased: on the truth up to noise (and rounding)
    plug_mean = float(plug_value)
    assert plug_mean < 0.4013 - 3 * se  # the plug-in sits clearly below


@pytest.mark.parametrize(
    ("preset", "expected"),
    [
        ("Worked example D", {"SE of A": "1.4 points", "SE of B": "1.4 points", "B − A, independent": "+1.5 ± 3.9"}),
        ("D, paired", {"B − A, independent": "+1.5 ± 3.9", "B − A, paired": "+1.5 ± 1.9"}),
    ],
)
def test_presets_worked_example_d(preset, expected):
    at = open_page(PAGE, {"accA": "50", "onlyA": "3", "onlyB": "9"})
    choose_preset(at, "Evaluation", preset).run()
    assert no_exception(at) and at.session_state["eval_view"] == COMPARE
    m = metrics(at)
    for label, value in expected.items():
        assert m[label] == value
    assert ("B − A, paired" in m) == (preset == "D, paired")
    verdicts = [i.value for i in at.info if i.value.startswith("**")]
    assert (
        _notes(at) == []
        and len(verdicts) == 1 + (preset == "D, paired")
        and all("not significant" in v for v in verdicts)
    )  # the lesson: not significant


def test_significant_difference_is_called_so():
    # the link uses the old names (view, N, seed) of eval_view, questions and sim_seed: they still work
    at = open_page(PAGE, {"view": COMPARE, "accA": "70", "accB": "75", "N": "5000", "seed": "7"})
    assert no_exception(at) and at.warning.len == 0
    expected = {"eval_view": COMPARE, "accA": "70", "accB": "75", "questions": "5000", "sim_seed": "7"}
    assert dict(at.query_params) == expected
    assert metrics(at) == metrics(_view(COMPARE, {"accA": "70", "accB": "75", "questions": "5000"}))
    assert any("significant, B is better" in s.value for s in at.success)


def test_quick_check_answer_matches_the_page():
    at = _view(COMPARE, {"accA": "70", "questions": "1000"})
    assert metrics(at)["SE of A"] == "1.4 points"
    answer = next(e for e in at.expander if e.label == "Reveal the answer")
    assert "1.4 points" in answer.markdown[0].value


def test_large_n_is_exact_fast_and_small():
    at = open_page(PAGE, {"n": "100000", "c": "3", "k": "5000"})
    assert no_exception(at)
    assert metrics(at)["Unbiased pass@5,000"] == f"{evaluation.pass_at_k(100_000, 3, 5000):.4f}"
    size = sum(len(chart.spec) for chart in charts(at))
    assert size <= 300_000, size  # both figures together
    assert "of 100,000 values of k (log-spaced)" in figures(at)[0]["layout"]["xaxis"]["title"]["text"]
    labels = [b.proto.label for b in at.get("download_button")]
    assert any("every k = 1…100,000" in label for label in labels)
    assert any(label.startswith("pass@k (CSV)") for label in labels)


def test_simulation_view_shows_a_histogram_per_estimator():
    at = _view(BIAS)
    (fig,) = figures(at)
    shares = [decode(t["y"]) for t in fig["data"] if t["type"] == "bar"]
    assert len(shares) == 2 and all(math.isclose(s.sum(), 1.0) for s in shares)
    assert metrics(at)["Truth 1 − (1 − p)^5"] == "0.8319"
    assert "100,000 problems" in " ".join(c.value for c in at.caption)
    assert at.get("progress") == []  # a fast run shows no progress bar (and a slow one removes it)


def test_presenter_mode_folds_the_equation():
    at = open_page(PAGE, {"present": "true"})
    assert no_exception(at)
    assert any(e.label == "The equation" for e in at.expander)
    assert figures(at)[0]["layout"]["font"]["size"] == 20


def test_answers_are_hidden_until_revealed(default):
    labels = [e.label for e in default.expander]
    assert "Reveal the answer" in labels and "Reveal a 60-90 second answer" in labels


@pytest.mark.parametrize(("view", "name"), [(ESTIMATORS, "pass@k"), (BIAS, "Simulation"), (COMPARE, "Comparison")])
def test_csv_download_per_view(view, name):
    at = _view(view)
    assert [b.proto.label for b in at.get("download_button")] == [f"{name} (CSV)"]
