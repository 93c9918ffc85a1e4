"""The evaluation page's state: one problem's samples, the bias simulation, and two models' accuracies."""

from __future__ import annotations

from core import evaluation as ev
from pages.frame.state import Field, Spec

VIEWS = ("Estimators", "Bias simulation", "Model comparison")  # tab labels, also the link's values

SPEC = Spec(
    "Evaluation",
    (
        Field("n", "n: samples drawn", "int", 10, lo=1, hi=ev.N_MAX, help=f"1 to {ev.N_MAX:,}"),
        Field("c", "c: samples correct", "int", 3, lo=0, hi=ev.N_MAX, help="0 to n"),
        Field("k", "k: attempts allowed", "int", 5, lo=1, hi=ev.N_MAX, help="1 to n"),
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
        "Worked example E": "n = 10 samples, c = 3 correct: pass@5 is 0.917, the plug-in says 0.832.",
        "Code benchmark": "HumanEval style: 200 samples per problem, pass@10.",
        "Worked example D": "71.0% vs 72.5% on the same 1,000 questions.",
        "D, paired": "The same, with 40 questions only A got right and 55 only B got right.",
    },
)
