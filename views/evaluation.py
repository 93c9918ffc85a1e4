"""The evaluation page's state and what it shows: pass@k from one problem's samples (``Estimators``), the bias
of the plug-in by simulation (``Bias simulation``) and two models' accuracies (``Model comparison``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from functools import lru_cache
from typing import Any

import numpy as np
import pandas as pd

from core import evaluation
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, inputs, with_answers
from views import predict as ask
from views.state import Answer, Field, Spec, State
from viz import format as fmt
from viz.evaluation import comparison_figure_of, curve_figures, simulation_figure_of
from viz.predict import predict_figure, with_guess

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "What does pass@k measure, and why not estimate it as 1 − (1 − c/n)^k?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "unbiased formula",
    "concave",
    "k-subsets",
    "too low",
    "biased low",
)

QUICK_CHECK = QuickCheck(
    question=(
        "A model scores **70%** on a benchmark of **1,000** independent questions. What is the standard error of "
        "this accuracy, in percentage points?"
    ),
    options=(
        "2.8 points",
        "0.046 points",
        "46 points",
        "1.4 points",
    ),
    right=3,
    answer=(
        "√(0.7 · 0.3 / 1000) ≈ 0.0145, so about **1.4 points**; a 95% interval is roughly ±2.8 points. (Set A to "
        "70% and N to 1,000 in the comparison tab.)"
    ),
)

VIEWS = ("Estimators", "Bias simulation", "Model comparison")  # tab labels, also the link's values and the parts
ESTIMATORS, BIAS, COMPARISON = VIEWS
EVERY_K = "pass@k, every k"  # the lazy table of every k = 1..n, offered beside the curves when they are thinned
SIMULATION_FIELDS = ("n", "k", "p", "problems", "sim_seed")  # all the bias simulation reads
AXES = {"auto": None, "linear": False, "log": True}
EVERY_K_STEPS = 120  # up to this n the k slider under the pass@k curves has a step at every k; above, about 100

SPEC = Spec(
    "Evaluation",
    (
        Field("n", "n: samples drawn", "int", 10, lo=1, hi=evaluation.N_MAX, help=f"1 to {evaluation.N_MAX:,}"),
        Field("c", "c: samples correct", "int", 3, lo=0, hi=evaluation.N_MAX, help="0 to n"),
        Field(
            "k",
            "k: attempts allowed",
            "int",
            5,
            lo=1,
            hi=evaluation.N_MAX,
            help="1 to n. The slider under the pass@k curves drags k in the browser.",
        ),
        Field("axis", "k axis", "choice", "auto", choices=("auto", "linear", "log"), widget="segmented"),
        Field("p", "p: true chance one sample is correct", "float", 0.3, lo=0.0, hi=1.0, step=0.01, fmt="%.3f"),
        Field("problems", "Problems simulated", "int", 100_000, lo=1, hi=1e6, help="each with n samples; up to 10⁶"),
        Field("sim_seed", "Seed", "int", 0, lo=0, hi=1e9, aliases=("seed",)),
        Field("accA", "Accuracy of A (%)", "float", 71.0, lo=0.0, hi=100.0, step=0.1, fmt="%.1f"),
        Field("accB", "Accuracy of B (%)", "float", 72.5, lo=0.0, hi=100.0, step=0.1, fmt="%.1f"),
        Field("questions", "N: questions (the same for both)", "int", 1000, lo=1, hi=1e9, aliases=("N",)),
        Field(
            "onlyA",
            "Questions only A got right",
            "int",
            None,
            lo=0,
            hi=1e9,
            optional=True,
            extra=(("placeholder", "empty: independent"),),
        ),
        Field(
            "onlyB",
            "Questions only B got right",
            "int",
            None,
            lo=0,
            hi=1e9,
            optional=True,
            extra=(("placeholder", "empty: independent"),),
        ),
        Field("eval_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs", aliases=("view",)),
        ask.switch("predict_eval"),
        ask.guess("guess_pass", "Your guess: pass@k (0 to 1)", "float", 0.0, 1.0, step=0.01, fmt="%.3f"),
    ),
    presets={
        "Worked example E": {"n": 10, "c": 3, "k": 5, "p": 0.3, "eval_view": VIEWS[0]},
        "Code benchmark": {"n": 200, "c": 20, "k": 10, "p": 0.05, "eval_view": VIEWS[0]},
        "Worked example D": {
            "accA": 71.0,
            "accB": 72.5,
            "questions": 1000,
            "onlyA": None,
            "onlyB": None,
            "eval_view": VIEWS[2],
        },
        "D, paired": {"accA": 71.0, "accB": 72.5, "questions": 1000, "onlyA": 40, "onlyB": 55, "eval_view": VIEWS[2]},
    },
    preset_help={
        "Worked example E": "n = 10 samples, c = 3 correct, k = 5: the lesson's worked example E.",
        "Code benchmark": "HumanEval style: 200 samples per problem, pass@10.",
        "Worked example D": "71.0% vs 72.5% on the same 1,000 questions.",
        "D, paired": "The same, with 40 questions only A got right and 55 only B got right.",
    },
    answers={
        "Worked example E": Answer("Unbiased pass@5", "0.917", "lesson 001 section 4, worked example E"),
        "Worked example D": Answer("B − A, independent", "+1.5 ± 3.9", "lesson 001 section 4, worked example D"),
    },
)


Progress = Callable[[float, str], None]  # (fraction done, a line saying what is running)


def simulation_state(state: State) -> State:
    """``state`` with every field the simulation does not read at its default: the key under which a page can
    cache the ``Bias simulation`` part, so that moving an unrelated control does not draw the problems again."""
    return SPEC.defaults().replace(**{name: state[name] for name in SIMULATION_FIELDS})


def figures(state: State, options: Options = DEFAULT, progress: Progress | None = None) -> View:
    """The parts named in ``options.parts`` (tab labels of :data:`VIEWS`; ``main`` is the state's own tab).

    Values out of range (c > n, k > n, p outside [0, 1], mismatched paired counts) are clamped, each with an
    ``info`` notice, whatever parts are asked for. ``progress(fraction, text)`` follows the bias simulation.
    Figures: ``pass-at-k`` and ``pass-hat-k`` (Estimators), ``bias`` (Bias simulation), ``compare`` (Model
    comparison). The readouts and tables are those of the parts built, in tab order; ``facts`` holds the clamped
    inputs, the core results of the parts built and the comparison's ``verdicts`` as (kind, markdown) pairs.
    """
    view = View()
    n, c, k, notes = clamp_pass_at_k_inputs(state.n, state.c, state.k)
    p, _, _, problems, more = clamp_simulation_inputs(state.p, n, k, state.problems)
    seed, seed_notes = inputs.clamp_field(state.sim_seed, SPEC["sim_seed"])
    acc_a, acc_b, N, only_a, only_b, cmp_notes = clamp_comparison_inputs(
        state.accA, state.accB, state.questions, state.onlyA, state.onlyB, percent=True
    )
    view.notices = [("info", note) for note in notes + more + seed_notes + cmp_notes]
    view.facts.update(
        n=n, c=c, k=k, p=p, problems=problems, seed=seed, acc_a=acc_a, acc_b=acc_b, N=N, only_a=only_a, only_b=only_b,
        predict=ask.mode(state, "predict_eval", "guess_pass"), where_worst=where_worst(n, p),
        interior_thresholds={m: _interior(m) for m in (10, 100)},
    )  # fmt: skip
    parts = {part for part in VIEWS if options.wants(part) or (options.wants("main") and state.eval_view == part)}
    look = options.look
    if ESTIMATORS in parts and view.facts["predict"] == "hidden":
        _estimators_hidden(view, n, c, k, look)
    elif ESTIMATORS in parts:
        _estimators(view, n, c, k, AXES.get(state.axis), look, drag=True)
        if view.facts["predict"] == "revealed":
            _reveal(view, float(state.guess_pass), k, look)
    if BIAS in parts:
        _bias(view, p, n, k, problems, seed, progress, look)
    if COMPARISON in parts:
        _comparison(view, acc_a, acc_b, N, only_a, only_b, look)
    return with_answers(SPEC, state, view)


_interior = lru_cache(maxsize=64)(evaluation.plugin_bias_interior_threshold)  # p above which 1 < worst k < n
_worst_k = lru_cache(maxsize=256)(evaluation.plugin_bias_worst_k)


def where_worst(n: int, p: float) -> str:
    """The explanation's sentence on where the plug-in's bias is largest: for n samples and the simulation's p
    when 3 <= n <= 500 (the exact bias builds an (n + 1) x n table), in general otherwise."""
    if 3 <= n <= 500:
        return (
            f"With n = {n:,} samples the worst k lies strictly between 1 and n only when p is above "
            f"{_interior(n):.3g}; for rarer successes the bias grows all the way to k = n, and as p approaches 1 "
            f"the worst k moves down to 2. At p = {p:g} it is k = {_worst_k(n, p)}."
        )
    if n < 3:
        return f"With n = {n} there is no k strictly between 1 and n: the bias is 0 at k = 1."
    return (
        "The worst k lies strictly between 1 and n only when p is above a threshold of about 2.7/n "
        f"({_interior(10):.2f} at n = 10, {_interior(100):.3f} at n = 100); for rarer successes the bias grows "
        "all the way to k = n, and as p approaches 1 the worst k moves down to 2."
    )


def k_steps(n: int, k: int) -> tuple[int, ...]:
    """The k slider's values for n samples: every k = 1..n up to :data:`EVERY_K_STEPS`, else about 100 log-spaced
    k from 1 to n, each on the curves' display grid (:func:`core.evaluation.display_k_grid`); ``k`` always one."""
    if n <= EVERY_K_STEPS:
        return tuple(range(1, n + 1))
    grid = evaluation.display_k_grid(n)  # the curves' k without the chosen one (every k up to 1,500)
    at = np.minimum(np.searchsorted(grid, np.geomspace(1, n, 100)), grid.size - 1)  # the first grid k >= each
    return tuple(int(x) for x in np.union1d(grid[at], [k]))


def _estimators(
    view: View, n: int, c: int, k: int, log_x: bool | None, look: dict[str, Any], drag: bool = False
) -> None:
    r = evaluation.pass_at_k_curves(n, c, k)
    ks = k_steps(n, k) if drag else None  # a slider over k on the pass@k figure
    view.figures.update(zip(("pass-at-k", "pass-hat-k"), curve_figures(r, log_x, slider_ks=ks, **look), strict=True))
    if ks is not None:
        view.drags["pass-at-k"] = Drag("k", ks)
    view.facts["curves"] = r
    view.readouts += [
        Readout(f"Unbiased pass@{k:,}", f"{r.unbiased_at_k:.4f}", "1 − C(n−c, k)/C(n, k)"),
        Readout(f"Plug-in pass@{k:,}", f"{r.plugin_at_k:.4f}", "1 − (1 − c/n)^k, too low on average"),
        Readout("Gap (unbiased − plug-in)", f"{r.gap:.4f}"),
        Readout(
            f"pass^{k:,}: all {k:,} correct", f"{r.hat_at_k:.4f}", f"C(c, k)/C(n, k); plug-in {r.hat_plugin_at_k:.4f}"
        ),
    ]
    view.tables["pass@k"] = lambda: pd.DataFrame(r.columns())
    if not r.every_k:  # the display grid is log-spaced: every k, built only when asked for
        view.tables[EVERY_K] = lambda: pd.DataFrame(evaluation.pass_at_k_curves(n, c, k, every_k=True).columns())


def _question(n: int, c: int, k: int) -> str:
    return f"{c:,} of n = {n:,} samples are correct. What is the unbiased estimate of pass@{k:,}?"


def _estimators_hidden(view: View, n: int, c: int, k: int, look: dict[str, Any]) -> None:
    """Predict first, no guess yet: the estimators' readouts without pass@k, and no curve (it holds the answer)."""
    _estimators(view, n, c, k, None, look)  # the readouts and tables, then everything that gives pass@k goes
    view.figures.pop("pass-at-k")
    view.figures.pop("pass-hat-k")  # it draws pass@k beside pass^k
    view.facts.pop("curves")
    question = _question(n, c, k)
    view.figures["pass-at-k"] = predict_figure(
        question, x_title="k (attempts)", y_title="probability", x_range=(1, max(n, 2)), y_range=(0, 1.05), **look
    )
    ask.hide(view, question, (f"Unbiased pass@{k:,}", "Gap"), tables=view.tables)


def _reveal(view: View, guess_pass: float, k: int, look: dict[str, Any]) -> None:
    r = view.facts["curves"]
    view.figures["pass-at-k"] = with_guess(
        view.figures["pass-at-k"], guess_pass, f"your guess {guess_pass:.3f}", axis="y", theme=look["theme"]
    )
    ask.reveal(
        view,
        Readout(f"pass@{k:,}, the truth", f"{r.unbiased_at_k:.4f}", "the unbiased estimate 1 − C(n−c, k)/C(n, k)"),
        f"{guess_pass:.3f}",
        f"{guess_pass - r.unbiased_at_k:+.4f}",
        f"your guess minus pass@{k:,}; the plug-in's error is {r.plugin_at_k - r.unbiased_at_k:+.4f}",
        value=r.unbiased_at_k,
    )


def _bias(
    view: View, p: float, n: int, k: int, problems: int, seed: int, progress: Progress | None, look: dict[str, Any]
) -> None:
    def report(fraction: float) -> None:
        progress(fraction, f"Simulating {problems:,} problems of {n:,} samples… {fraction:.0%}")

    sim = evaluation.simulate_estimators(p, n, k, problems, seed=seed, progress=None if progress is None else report)
    view.figures["bias"] = simulation_figure_of(sim, **look)
    view.facts["simulation"] = sim
    view.facts["simulation_caption"] = (
        f"{problems:,} problems of {n:,} samples drawn on {sim.device} in {sim.seconds:.2f} s, seed {seed}."
    )
    view.readouts += [
        Readout(f"Truth 1 − (1 − p)^{k:,}", f"{sim.truth:.4f}", f"p = {p:g}"),
        Readout(
            f"Unbiased mean ± {fmt.spread(sim.se_unbiased)}",
            f"{sim.mean_unbiased:.4f}",
            "± one standard error; on the truth, up to noise",
        ),
        Readout(
            f"Plug-in mean ± {fmt.spread(sim.se_plugin)}",
            f"{sim.mean_plugin:.4f}",
            "± one standard error; below the truth (Jensen)",
        ),
        Readout("Plug-in bias", f"{sim.bias_plugin:+.4f}", f"exact: {sim.bias_plugin_exact:+.4f}"),
    ]
    view.tables["Simulation"] = lambda: pd.DataFrame(sim.columns())


def verdict(m: evaluation.ModelComparison) -> str:
    """The comparison in one plain sentence, in percentage points: 'B - A = +1.5 ± 3.9 points (95%): not
    significant, the interval contains 0.'"""
    pts = f"{100 * m.difference:+.1f} ± {100 * m.half_width:.1f} points ({m.confidence:.0%})"
    if m.significant:
        better = "B" if m.difference > 0 else "A"
        return f"B - A = {pts}: significant, {better} is better on this benchmark."
    return f"B - A = {pts}: not significant, the interval contains 0."


def _comparison(
    view: View, acc_a: float, acc_b: float, N: int, only_a: int | None, only_b: int | None, look: dict[str, Any]
) -> None:
    comps = [evaluation.compare_models(acc_a, acc_b, N)]
    if only_a is not None:
        comps.append(evaluation.compare_models(acc_a, acc_b, N, only_a=only_a, only_b=only_b))
    view.figures["compare"] = comparison_figure_of(comps, **look)
    view.facts["comparisons"] = comps
    view.facts["verdicts"] = [
        ("success" if m.significant else "info", f"**{m.method.capitalize()}.** {verdict(m)}") for m in comps
    ]
    view.readouts += [
        Readout("SE of A", f"{100 * comps[0].se_a:.1f} points", "√(acc (1 − acc) / N)"),
        Readout("SE of B", f"{100 * comps[0].se_b:.1f} points"),
    ] + [
        Readout(
            f"B − A, {m.method}",
            f"{100 * m.difference:+.1f} ± {100 * m.half_width:.1f}",
            f"points; ± the half-width of the {m.confidence:.0%} interval; two-sided p = {m.p_value:.3f}",
        )
        for m in comps
    ]
    view.tables["Comparison"] = lambda: pd.DataFrame([asdict(m) for m in comps])


# ---------------------------------------------------------------------- the page's inputs made valid
def clamp_pass_at_k_inputs(
    n: Any, c: Any, k: Any, *, n_max: int | None = None, defaults: tuple[int, int, int] | None = None
) -> tuple[int, int, int, list[str]]:
    """Make (n, c, k) valid for :func:`pass_at_k`: 1 <= n <= n_max, 0 <= c <= n, 1 <= k <= n, whole numbers.

    ``n_max`` and ``defaults`` (n, c, k) are the evaluation page's fields' range and defaults unless given.
    Returns the clamped values and one note per change, for the page to show. Never raises.
    """
    spec = SPEC
    n_max = int(spec["n"].hi) if n_max is None else n_max
    defaults = defaults or (spec["n"].default, spec["c"].default, spec["k"].default)
    notes: list[str] = []
    n_f = inputs.to_whole(inputs.read_number(n, "n", defaults[0], notes), "n", notes)
    n_i = int(inputs.clip_noted(n_f, spec["n"].lo, n_max, "n", f"is outside {spec['n'].lo:g}..{n_max:,}", notes))
    c_f = inputs.to_whole(inputs.read_number(c, "c", defaults[1], notes), "c", notes)
    c_i = int(
        inputs.clip_noted(c_f, 0, n_i, "c", "must lie between 0 and n (no more correct samples than samples)", notes)
    )
    k_f = inputs.to_whole(inputs.read_number(k, "k", defaults[2], notes), "k", notes)
    if k_f == 0:
        notes.append("k=0: pass@0 is always 0; using k=1.")
        k_f = 1.0
    k_i = int(
        inputs.clip_noted(k_f, 1, n_i, "k", "must lie between 1 and n (the estimator needs k <= n samples)", notes)
    )
    return n_i, c_i, k_i, notes


def clamp_simulation_inputs(
    p: Any, n: Any, k: Any, problems: Any, *, n_max: int | None = None, problems_max: int | None = None
) -> tuple[float, int, int, int, list[str]]:
    """Make (p, n, k, problems) valid for :func:`simulate_estimators`; returns them and the notes. Defaults and
    ranges: the evaluation page's fields."""
    spec = SPEC
    fp, fm = spec["p"], spec["problems"]
    problems_max = int(fm.hi) if problems_max is None else problems_max
    notes: list[str] = []
    p_f = inputs.read_number(p, "p", fp.default, notes)
    p_f = inputs.clip_noted(p_f, fp.lo, fp.hi, "p", f"is a probability and must lie in [{fp.lo:g}, {fp.hi:g}]", notes)
    defaults = (spec["n"].default, 0, spec["k"].default)  # the simulation reads no c
    n_i, _, k_i, more = clamp_pass_at_k_inputs(n, 0, k, n_max=n_max, defaults=defaults)
    notes += more
    m = inputs.to_whole(inputs.read_number(problems, "problems", fm.default, notes), "problems", notes)
    m_i = int(inputs.clip_noted(m, fm.lo, problems_max, "problems", f"must lie in {fm.lo:g}..{problems_max:,}", notes))
    return p_f, n_i, k_i, m_i, notes


def clamp_comparison_inputs(
    acc_a: Any, acc_b: Any, N: Any, only_a: Any = None, only_b: Any = None, *, percent: bool = False
) -> tuple[float, float, int, int | None, int | None, list[str]]:
    """Make the inputs of :func:`compare_models` valid; returns them and the notes. Never raises.

    Accuracies are returned as fractions. With ``percent=True`` they are given in percent (71.0 means 0.71) and
    clamped to 0..100; otherwise accuracies above 1 (up to 100) are read as percentages, with a note. For the
    paired analysis the counts must fit the accuracies: only_a <= A's correct, only_a <= B's wrong, and
    only_b - only_a = B's correct - A's correct; only_a is clamped into its feasible range and only_b is then set
    from it (each change noted).
    """
    spec = SPEC
    notes: list[str] = []
    accs = []
    for name, raw, f in (("accuracy A", acc_a, spec["accA"]), ("accuracy B", acc_b, spec["accB"])):
        default = f.default / 100  # the page's fields are in percent
        if percent:
            a = inputs.clip_noted(
                inputs.read_number(raw, name, 100 * default, notes), 0.0, 100.0, name, "must lie in 0..100%", notes
            )
            accs.append(a / 100)
            continue
        a = inputs.read_number(raw, name, default, notes)
        if 1 < a <= 100:
            notes.append(f"{name}={a:g} read as {a:g}%.")
            a /= 100
        accs.append(inputs.clip_noted(a, 0.0, 1.0, name, "must lie in [0, 1] (or 0-100%)", notes))
    fN = spec["questions"]
    N_f = inputs.to_whole(inputs.read_number(N, "N", fN.default, notes), "N", notes)
    N_i = int(inputs.clip_noted(N_f, fN.lo, fN.hi, "N", f"must lie in {fN.lo:g}..{fN.hi:,.0f}", notes))
    missing_a, missing_b = only_a is None or only_a == "", only_b is None or only_b == ""
    if missing_a or missing_b:
        if missing_a != missing_b:
            notes.append("The paired analysis needs both counts; showing the independent one only.")
        return accs[0], accs[1], N_i, None, None, notes

    right_a, right_b = round(accs[0] * N_i), round(accs[1] * N_i)
    delta = right_b - right_a  # only_b - only_a must equal this
    oa = inputs.to_whole(inputs.read_number(only_a, "only A right", max(0, -delta), notes), "only A right", notes)
    ob = inputs.to_whole(inputs.read_number(only_b, "only B right", max(0, delta), notes), "only B right", notes)
    lo, hi = max(0, -delta), min(right_a, N_i - right_b)  # feasible range of only_a
    if lo > hi:  # cannot happen for accuracies in [0, 1]; kept as a guard
        notes.append("The counts cannot fit these accuracies; showing the independent analysis only.")
        return accs[0], accs[1], N_i, None, None, notes
    oa_i = int(inputs.clip_noted(oa, lo, hi, "only A right", f"must lie in {lo}..{hi} for these accuracies", notes))
    ob_i = oa_i + delta
    if ob != ob_i:
        notes.append(
            f"only B right={ob:g} does not fit: B - A = {delta} questions, so only B right = "
            f"only A right + {delta} = {ob_i}; using {ob_i}."
        )
    return accs[0], accs[1], N_i, oa_i, ob_i, notes
