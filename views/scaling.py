"""The scaling page's state and what it shows: the iso-FLOP U-curve of a budget, and a family of budgets."""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING

from core import flop_count, scaling
from core.model_spec import CATALOGUE, param_count
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Answer, Field, Spec, State
from viz import format as fmt
from viz.predict import predict_figure, with_guess
from viz.scaling import isoflop_family_figure, isoflop_figure

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "How big a model should I train for this budget, and why does Llama train far past 20 tokens per parameter?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "flat-bottomed",
    "compute-optimal model",
    "grow together",
    "trade against each other",
    "1.5B model on 30B tokens",
    "cheaper to serve",
)

_QUICK_OPTIMUM_N = float(scaling.chinchilla_optimum(6e20)[0])  # the Hoffmann fit's optimal N at 6e20 FLOPs
QUICK_CHECK = QuickCheck(
    question=(
        "A dense model with **1B parameters** is trained on **100B tokens**. Counting a multiply-add as 2 FLOPs, "
        "about how many FLOPs does training (forward and backward) cost?"
    ),
    options=(
        "6×10²⁰ FLOPs",
        "2×10²⁰ FLOPs",
        "3×10²⁰ FLOPs",
    ),
    right=0,
    answer=(
        "C ≈ 6·N·D = 6 · 10⁹ · 10¹¹ = **6×10²⁰ FLOPs** (set C = 6e20 and N = 1e9 to see it: 100 tokens per "
        f"parameter, a little *left* of the Hoffmann fit's minimum at {fmt.count(_QUICK_OPTIMUM_N)} "
        "parameters: a smaller model on more tokens than that fit's optimum). A counter that counts a multiply-add "
        "as one FLOP (fvcore) would report 3×10²⁰."
    ),
)

if TYPE_CHECKING:
    import pandas as pd

FIT_NAMES = tuple(f.short for f in scaling.FITS.values())
# Models whose size the plan can take from the shared catalogue (core.model_spec): the dense ones, since a
# Chinchilla fit describes dense models (an MoE's total and active counts would both mislead here).
NO_MODEL = "none"
MODEL_CHOICES = (NO_MODEL, *(name for name, s in CATALOGUE.items() if name != "custom" and not s.is_moe))


def model_params(name: str) -> float | None:
    """N of a catalogue model (param_count of its shape), or None for ``none``."""
    return None if name == NO_MODEL else float(param_count(CATALOGUE[name]))


SPEC = Spec(
    "Scaling_laws",
    (
        Field("fit", "Loss fit", "choice", FIT_NAMES[0], choices=FIT_NAMES),
        Field("budget", "Budget from", "choice", "FLOPs", choices=("FLOPs", "Hardware"), widget="segmented"),
        Field("gpu", "GPU", "choice", "H100", choices=tuple(scaling.ACCELERATORS), help="peak dense bf16 FLOP/s"),
        Field("gpus", "GPUs", "int", 8, lo=1, hi=1e6, step=1),
        Field("hours", "Hours", "float", 24.0, lo=0.1, hi=100_000.0, step=1.0),
        Field("mfu", "MFU (%)", "int", 40, lo=1, hi=100, widget="slider", help="model FLOPs utilisation"),
        Field(
            "scale_model",
            "Model (sets N)",
            "choice",
            NO_MODEL,
            choices=MODEL_CHOICES,
            help="Choosing a model writes its parameter count (counted from its shape) into N; N stays editable.",
        ),
        Field("C", "Budget C (FLOPs)", "float", 1.2e21, *scaling.C_RANGE, fmt="%.3e", help="1e18 to 1e26"),
        Field(
            "N",
            "Your plan: model size N (parameters)",
            "float",
            1e10,
            *scaling.N_RANGE,
            fmt="%.3e",
            help="Drag the slider under the figure to move the plan along the curve.",
        ),
        ask.switch("predict_scaling"),
        ask.guess("guess_N", "Your guess: the bottom's N (parameters)", "float", *scaling.N_RANGE, fmt="%.3e"),
    ),
    presets={
        "Predict Q1: 10B params on 20B tokens": {"budget": "FLOPs", "C": 1.2e21, "N": 1e10, "scale_model": NO_MODEL},
        "Worked example A: 8 H100 for 24 h": {
            "budget": "Hardware",
            "gpu": "H100",
            "gpus": 8,
            "hours": 24.0,
            "mfu": 40,
            "N": 1.5e9,
            "scale_model": NO_MODEL,
        },
        "Example A over-trained: 0.5B params": {
            "budget": "Hardware",
            "gpu": "H100",
            "gpus": 8,
            "hours": 24.0,
            "mfu": 40,
            "N": 5e8,
            "scale_model": NO_MODEL,
        },
        "Chinchilla's budget, Gopher's size": {"budget": "FLOPs", "C": 5.88e23, "N": 2.8e11, "scale_model": NO_MODEL},
        "Llama 3 8B on 15T tokens": {"budget": "FLOPs", "C": 7.2e23, "N": 8e9, "scale_model": NO_MODEL},
        "Check yourself: 7B on 2T tokens": {
            "budget": "FLOPs",
            "C": 8.4e22,
            "N": 7e9,
            "gpu": "H100",
            "gpus": 256,
            "scale_model": NO_MODEL,
        },
    },
    answers={
        "Predict Q1: 10B params on 20B tokens": Answer(
            "Tokens per parameter", "2", "lesson 001, answers to section 1 (predict question 1)"
        ),
        "Worked example A: 8 H100 for 24 h": Answer(
            "Budget C = 6ND (FLOPs)", "2.73×10²⁰", "lesson 001 section 4, worked example A"
        ),
        "Example A over-trained: 0.5B params": Answer(
            "Loss L(N, D)", "2.489", "lesson 001 section 4, worked example A"
        ),
        "Llama 3 8B on 15T tokens": Answer(
            "Tokens per parameter", "1,900", "lesson 001 section 3.3 (about 1,900 tokens per parameter)"
        ),
        "Check yourself: 7B on 2T tokens": Answer(
            "Budget C = 6ND (FLOPs)", "8.4×10²²", "lesson 001 section 8, check yourself 1"
        ),
    },
)


def fit_label(short: str) -> str:
    """The full label of the fit whose short name is ``short`` (the sidebar's caption under the choice)."""
    return scaling.FITS[scaling.fit_by_short_name(short)].label


# Budgets (FLOPs) the page's texts quote, whatever the state: the approach-3 fit's drift between 1e20 and 1e24,
# worked example A (2.73e20), the quick check (6e20), Chinchilla's 6ND (5.88e23, 5.9e23), Gopher's budget as
# Hoffmann et al. 2022 count it, which they gave Chinchilla too (5.76e23, where they project 40B to 67B) and Llama 3 8B.
TEXT_BUDGETS = (1e20, 2.7e20, 2.73e20, 6e20, 1.2e21, 5.76e23, 5.9e23, 5.88e23, 1e24)
LLAMA3_8B = (7.2e23, 8e9)  # (C, N): 8B parameters on 15T tokens


@lru_cache(maxsize=1)
def text_numbers() -> dict[str, dict]:
    """The numbers the page's texts quote that do not depend on the state: the fit's optimal tokens per parameter
    (``tokens_per_param[C]``, Hoffmann's fit; ``epoch_tokens_per_param[C]``, Epoch AI's refit), its optimal N
    (``optimum_N[C]``) at each of :data:`TEXT_BUDGETS`, and the share of Llama 3 8B's compute a compute-optimal
    model would need (``llama_efficiency[fit key]``); ``epoch_optimum_N[C]`` is Epoch AI's optimal N."""
    return {
        "tokens_per_param": {C: float(scaling.optimal_tokens_per_param(C)) for C in TEXT_BUDGETS},
        "epoch_tokens_per_param": {C: float(scaling.optimal_tokens_per_param(C, "epoch2024")) for C in TEXT_BUDGETS},
        "optimum_N": {C: float(scaling.chinchilla_optimum(C)[0]) for C in TEXT_BUDGETS},
        "epoch_optimum_N": {C: float(scaling.chinchilla_optimum(C, "epoch2024")[0]) for C in TEXT_BUDGETS},
        "llama_efficiency": {fit: float(scaling.compute_efficiency(*LLAMA3_8B, fit)) for fit in scaling.FITS},
    }


def hardware(state: State) -> scaling.Hardware:
    return scaling.Hardware.from_preset(state.gpu, state.gpus, state.mfu)


def budget(state: State) -> tuple[float, bool]:
    """The budget C in FLOPs, and whether a hardware budget had to be clamped into the page's range."""
    if state.budget == "Hardware":
        hw = hardware(state)
        return scaling.clamp_budget(float(scaling.hardware_flops(state.gpus, state.hours, hw.peak_flops, hw.mfu)))
    return float(state.C), False


def figures(state: State, options: Options = DEFAULT) -> View:
    """The U-curve of the budget with the plan on it (``main``), the budget family (``family``), readouts."""
    fit_key = scaling.fit_by_short_name(state.fit)
    C, clamped = budget(state)
    hw = hardware(state)
    study = scaling.isoflop_study(C, state.N, fit_key, hw)
    view = View()
    if clamped:
        view.notices.append(
            ("info", "The hardware budget fell outside 1e18 to 1e26 FLOPs and was clamped to that range.")
        )
    model_n = model_params(state.scale_model)
    if model_n is not None and state.N != model_n:
        view.notices.append(
            (
                "info",
                f"N = {fmt.count(state.N)} is not {state.scale_model}'s {fmt.count(model_n)} parameters: the plan "
                "uses N. Choose the model again to take its size.",
            )
        )
    view.facts.update(
        C=C, study=study, fit_key=fit_key, predict="off", model_n=model_n, fit_label=scaling.FITS[fit_key].label,
        other_label=scaling.FITS[study.other_fit].label, text_numbers=text_numbers(),
        # how far above the minimum a model 2x and 3x off the optimum lands (the worse side of each)
        penalty_pct={f: float(max(scaling.loss_penalty_pct(study.current.C, [f, 1 / f], fit_key))) for f in (2.0, 3.0)},
        # the same in compute: the % of the budget a compute-optimal model saves at that loss (no budget dependence)
        waste_pct={f: float(max(scaling.compute_waste_pct(study.current.C, [f, 1 / f], fit_key))) for f in (2.0, 3.0)},
    )  # fmt: skip
    predicting = ask.mode(state, "predict_scaling", "guess_N")
    question = f"On a budget of {fmt.sci(C)} FLOPs, which model size N sits at the bottom of the U-curve?"
    if predicting == "hidden" and options.wants("main"):
        view.figures["main"] = predict_figure(
            question, x_title="model size N (parameters)", y_title="loss", x_range=scaling.N_RANGE, log_x=True,
            **options.look,
        )  # fmt: skip
    elif options.wants("main"):
        view.figures["main"] = isoflop_figure(
            study.curve,
            study.current,
            study.slider,
            study.slider_active,
            scaling.FITS[fit_key].label,
            (scaling.FITS[study.other_fit].label, study.other.N_opt),
            **options.look,
        )
        view.drags["main"] = Drag("N", tuple(float(n) for n in study.slider.N))
    family_study = None
    if options.wants("family") and predicting != "hidden":
        family_study = scaling.isoflop_study(C, scaling.chinchilla_optimum(C, fit_key)[0], fit_key)
        view.figures["family"] = isoflop_family_figure(
            family_study.budgets,
            family_study.family_N,
            family_study.family_loss,
            family_study.family_N_opt,
            family_study.family_loss_opt,
            C,
            **options.look,
        )
    p, other = study.current, study.other
    other_label = scaling.FITS[study.other_fit].label
    view.readouts = [
        Readout("Tokens D = C/6N", fmt.count(p.D), "training tokens the budget buys at this model size"),
        Readout("Tokens per parameter", f"{p.tokens_per_param:,.1f}"),
        Readout("Loss L(N, D)", f"{p.loss:.3f}", "nats per token, from the selected fit"),
        Readout("Above the fit's minimum", f"{p.excess_pct:+.2f}%"),
        Readout(
            "Training time",
            fmt.duration(p.train_seconds),
            f"{state.gpus:,} × {state.gpu} at {state.mfu}% MFU = {p.gpu_days:,.0f} GPU-days",
        ),
        Readout("Training states", fmt.nbytes(p.memory_bytes), "16 bytes per parameter (mixed-precision Adam)"),
        Readout("Serving FLOPs per token", fmt.sci(p.serving_flops_per_token), "2N FLOPs per generated token"),
        Readout("Budget C = 6ND (FLOPs)", fmt.sci(p.C)),
        Readout("Fit's optimum N", fmt.count(p.N_opt), f"on {fmt.count(p.D_opt)} tokens, loss {p.loss_opt:.3f}"),
        Readout("20-tokens rule N", fmt.count(p.N_rule), f"on {fmt.count(p.D_rule)} tokens, loss {p.loss_rule:.3f}"),
        Readout("Optimal tokens per parameter", f"{p.tokens_per_param_opt:,.1f}", scaling.FITS[fit_key].label),
        Readout(
            f"… with the {other_label} fit",
            f"{other.tokens_per_param_opt:,.1f}",
            f"its optimum: {fmt.count(other.N_opt)} params on {fmt.count(other.D_opt)} tokens",
        ),
    ]

    # the tables are built when their button is clicked, and only then is pandas imported (0.6 s off a cold start)
    def family_table() -> pd.DataFrame:
        import pandas as pd

        fam = family_study or scaling.isoflop_study(C, scaling.chinchilla_optimum(C, fit_key)[0], fit_key)
        return pd.DataFrame(scaling.family_columns(fam))

    def curve_table() -> pd.DataFrame:
        import pandas as pd

        return pd.DataFrame(scaling.curve_columns(study, fit_key))

    view.tables = {"U-curve": curve_table, "Budget family": family_table}
    if predicting == "hidden":
        answers = ("Above the fit's minimum", "Fit's optimum N", "20-tokens rule N", "Optimal tokens", "… with the")
        ask.hide(view, question, answers, tables=view.tables)
    elif predicting == "revealed":
        _reveal(view, options, state.guess_N, p, C, fit_key)
    return with_answers(SPEC, state, view)


def _reveal(view: View, options: Options, guess_N: float, p: scaling.Plan, C: float, fit_key: str) -> None:
    """The guess on the U-curve, and the truth, the guess and the error among the readouts."""
    if "main" in view.figures:
        view.figures["main"] = with_guess(
            view.figures["main"], guess_N, f"your guess: {fmt.count(guess_N)}", theme=options.theme
        )
    penalty = float(scaling.loss_penalty_pct(C, guess_N / p.N_opt, fit_key))
    ask.reveal(
        view,
        Readout("The bottom: N_opt", fmt.count(p.N_opt), "the fit's minimum on this budget"),
        fmt.count(guess_N),
        ask.ratio_text(guess_N, p.N_opt),
        f"a model of your size would land {penalty:.2f}% above the minimum loss",
        value=p.N_opt,  # in parameters, as the guess (the readout writes billions: "1.98B")
    )


# The lesson's check of 6ND (lesson 001, section 5 "In code"): torch's FLOP counter on a stack of bias-free linear
# layers. The page runs it when its button is clicked (core.flop_count imports torch inside the count only).
FLOP_CHECK_TITLE = "Check 6ND with torch's FLOP counter"
FLOP_CHECK_SIZE = {"d": 64, "tokens": 128, "pairs": 2}  # width, tokens in the batch, Linear(d, 4d)-GELU-Linear(4d, d)
FLOP_CHECK_TEXT = (
    "Where does the 6 of C ≈ 6ND come from? The button builds the lesson's stack of four bias-free linear layers "
    "(width d = 64 widened to 4d and back, with a GELU in between, twice), runs a batch of T = 128 tokens forward "
    "and backward under PyTorch's `FlopCounterMode`, and divides each pass's FLOPs by N·T. The counter charges every "
    "matrix-matrix product 2·m·n·k FLOPs (an m×k by k×n product: a multiply and an add per term; tools such as "
    "fvcore count multiply-adds, half of this, and would show 1, 2 and 3) and skips elementwise work such as GELU; "
    "the stack has no attention, whose matmuls grow with the context and come on top of 6N per token."
)
FLOP_CHECK_CODE = "with FlopCounterMode(display=False) as forward: y = model(x)  # forward.get_total_flops()"


def flop_check(d: int = 64, tokens: int = 128, pairs: int = 2) -> list[Readout]:
    """The lesson's FLOP count as readouts: N, the forward and backward FLOPs per token in units of N, the backward
    pass with an input that needs no gradient, and their sum, the 6 of 6ND. Imports torch (core.flop_count)."""
    full = flop_count.count_training_flops(d, tokens, pairs)
    frozen_x = flop_count.count_training_flops(d, tokens, pairs, input_requires_grad=False)
    forward, backward = full.ratios
    skipped = full.backward - frozen_x.backward  # the first layer's input gradient, not computed
    return [
        Readout(
            "Parameters N",
            f"{full.n_params:,}",
            f"{2 * pairs} bias-free linear layers in {pairs} blocks of {d} → {4 * d} → {d}: N = {8 * pairs}·d²",
        ),
        Readout(
            "Forward FLOPs per token ÷ N",
            f"{forward:.1f}",
            f"{full.forward:,} FLOPs for {tokens} tokens: a multiply and an add per weight and token",
        ),
        Readout(
            "Backward FLOPs per token ÷ N",
            f"{backward:.1f}",
            f"{full.backward:,} FLOPs: each layer does two matmuls the size of its forward one, for the gradient of "
            "its weights (dW = dYᵀX) and of its input (dX = dY·W)",
        ),
        Readout(
            "Backward ÷ N, x without grad",
            f"{frozen_x.ratios[1]:.1f}",
            f"{frozen_x.backward:,} FLOPs: with requires_grad=False on x the first layer computes no gradient for its "
            f"input, {skipped:,} FLOPs fewer. A layer deep inside a network needs it: the layers below learn from it.",
        ),
        Readout("Training FLOPs per token ÷ N", f"{forward + backward:.1f}", "forward plus backward: the 6 of 6ND"),
    ]
