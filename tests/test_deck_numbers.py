"""Every slide of every shipped deck, rendered the way the Deck page renders it (the page's ``figures(state,
options)`` through the slide's own options, the readouts and figures the slide shows):

(a) every number its speaker notes state appears on the slide: in a shown readout (label, value or help), in the
    text of a shown figure (title, annotations, axis titles, trace names, text labels), among the slide's notices or
    title, or among its inputs (the control values the player's sidebar shows, the sweep's steps). A number is
    matched at the precision the notes print it (half a unit in its last digit: "3.2B" accepts 3.15e9 to 3.25e9).
    Numbers of the notes that are not about the slide (a reference to another slide, a constant of a formula, a
    source's number) are listed per slide in ALLOWED, each with its reason; citation years ("et al. 2022") are
    skipped. A slide that opens with its answer held back (Predict first) is checked once a guess is in.
(b) a slide whose title asks a question (it ends with "?" or starts with "Predict") opens with its answer withheld:
    the page's "Predict first" mode is on with no guess yet, or the slide is ``withhold = true`` (the player then
    shows the title alone until the lecturer reveals the view: tests/test_page_deck.py).
(c) the notes' numbers that no readout computes (the allowed ones among them) are checked against independent
    formulas written here.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from itertools import pairwise

import pytest
from scipy.special import comb, expit

from decks import load_decks, page_label

try:  # the decks' renderers (the old player showed the view's first six readouts and every figure)
    from decks import unique_figures
except ImportError:  # pragma: no cover - the code before slides named their readouts and figures
    from decks.handout import unique_figures

DECKS = load_decks()[0]
SLIDES = [(name, n, s) for name, deck in sorted(DECKS.items()) for n, s in enumerate(deck.slides, 1)]
IDS = [f"{name}-{n}" for name, n, _ in SLIDES]

# A committed guess per page (an odd value, so that it cannot stand in for a number of the notes by chance).
GUESSES = {
    "guess_N": 7.77e9,
    "guess_pi": 0.777,
    "guess_adv": 7.77,
    "guess_pass": 0.777,
    "guess_rank": 77,
    "guess_pairs": 77,
    "guess_skipped": 77,
    "guess_dropped": 777,
    "guess_lab_bits": 7.77,
    "guess_fmt_err": 7.77,
    "guess_opt_lr": 0.0777,
    "guess_pg_scale": 0.777,
    "guess_ttc_peak": 777,
    "guess_dist_mean": 7.77,
    "guess_cal_acc": 0.777,
}

# Numbers of the notes that are not shown on their slide, by (deck, slide): the number as the notes print it, and why.
ALLOWED: dict[tuple[str, int], dict[str, str]] = {
    ("interview", 1): {
        "3.956e14": "one H100's useful FLOP/s, 40% of 989e12: checked in test_the_notes_arithmetic",
        "989": "the H100's dense bf16 peak in TFLOP/s (NVIDIA's datasheet), the slide's GPU",
    },
    ("interview", 4): {
        "1e-4": "TRL's epsilon in std + 1e-4 (GRPOTrainer), a source's constant: test_review3_n3",
        "0.04": "DeepSeekMath's KL coefficient (Shao et al. 2024, §4.2), a source's constant: test_review4_n2",
    },
    ("interview", 5): {
        "131,072": "one matrix's count, the title's question (the view counts the model): checked below",
        "0.78": "one matrix's share, 131,072 / 4096²: checked below",
        "128": "32 layers x 4 adapted matrices, the coincidence's arithmetic: checked below",
        "32": "Llama-2-7B's layers (Touvron et al. 2023), the view's model shape",
        "0.25": "16,777,216 of Llama-2-7B's actual 6,738,415,616 parameters: checked in test_the_notes_arithmetic",
        "6.74B": "Llama-2-7B's actual parameter count, 6,738,415,616 (the page counts 7B)",
    },
    ("lesson", 4): {
        "7": "the compute a compute-optimal model saves at the rule's loss: test_the_notes_arithmetic",
        "1.62": "the plan's N over the fit's optimum N, 3.2B / 1.98B: test_review3_n1",
    },
    ("lesson", 7): {
        "40B": "Hoffmann et al. 2022 §4: the optimum for Gopher's budget is between 40B and 70B (the paper's number)",
    },
    ("lesson", 14): {
        "0.7": "1 - c/n, the plug-in's base: checked in test_the_notes_arithmetic",
    },
    ("lesson", 15): {
        "86,400": "seconds in the preset's 24 hours",
        "989": "the H100's dense bf16 peak in TFLOP/s (NVIDIA's datasheet), the slide's GPU",
        "120": "the 120 of N = sqrt(C/120): 6 FLOPs x 20 tokens per parameter",
        "80": "an H100's 80 GiB of memory (the card the sentence compares with)",
        "85.9": "80 GiB in GB, 80 x 2^30 / 1e9: checked in test_the_notes_arithmetic",
    },
    ("lesson", 16): {
        "0.54": "the relative loss rise 2.48861 / 2.47524 - 1: checked in test_the_notes_arithmetic",
        "0.6": "the seed's rounded figure, quoted to say why it differs: checked in test_the_notes_arithmetic",
    },
    ("lesson", 18): {
        "15": "a smaller split of disagreements, 15 only A vs 30 only B, the width's lesson: test_review3_m1",
        "30": "a smaller split of disagreements, 15 only A vs 30 only B, the width's lesson: test_review3_m1",
        "1.3": "the paired half-width with 15 vs 30 disagreements: test_review3_m1",
    },
    ("lesson", 19): {
        "32": "Llama-2-7B's layers (Touvron et al. 2023), the view's model shape",
        "4096": "Llama-2-7B's width, the view's model shape",
        "65,536": "one matrix's count at rank 8: checked in test_the_notes_arithmetic",
    },
    ("lesson", 23): {
        "141": "the assignments dropped at the drag's step 1.25: checked in test_the_moe_slide_drag",
        "1.25": "that step's capacity factor (a choice of the drag)",
    },
    ("lesson", 24): {
        "256": "the bytes a byte-level model chooses from (its vocabulary of 256)",
        "1e-4": "a step of the slide's drag (the sweep's lowest peak learning rate)",
        "3e-2": "a step of the slide's drag (the LR-too-high preset's peak)",
        "5.73": "the 1e-4 curve's held-out loss in bits per byte: test_the_training_lab_slide",
        "4.80": "the training split's byte entropy in bits per byte: test_the_training_lab_slide",
    },
    ("lesson", 25): {
        "7": "bf16's stored mantissa bits (torch.finfo(torch.bfloat16).eps = 2^-7): test_the_number_formats_slide",
        "10": "fp16's stored mantissa bits (torch.finfo(torch.float16).eps = 2^-10): test_the_number_formats_slide",
        "19.2": "fp16's error at the drag's step 1e-7, by torch's own cast: test_the_number_formats_slide",
        "1e-8": "a step of the slide's drag, rounded to zero in fp16: test_the_number_formats_slide",
        "100,000": "the drag's last step: torch's casts give inf in fp16 and E5M2, 448 in E4M3: "
        "test_the_number_formats_slide",
    },
    ("lesson", 26): {
        "0.0316": "a step of the slide's drag (the sweep's learning rates): test_the_optimizers_slide",
        "0.076": "momentum's stable limit 2(1 + mu)/lambda_max at mu = 0.9: test_the_optimizers_slide",
    },
    ("lesson", 27): {
        "0.938": "the group mean's (G - 1)/G at the drag's step G = 16: test_the_policy_gradient_slide",
        "16": "a step of the slide's drag (the page's largest group size): test_the_policy_gradient_slide",
    },
    ("lesson", 28): {
        "6B": "Gao et al. 2022's gold reward model (the paper's number), not on the page's figure",
    },
    ("lesson", 30): {
        "4": "the model's name, GPT-4 (OpenAI 2023, arXiv 2303.08774), not a number of the slide",
    },
    ("lesson", 29): {
        "5.6": "the d at which the on-mode optimum overtakes the middle one: test_the_distillation_slide",
        "5.5": "a step of the slide's drag (the page's distances): test_the_distillation_slide",
        "6": "a step of the slide's drag (the page's distances): test_the_distillation_slide",
        "10.1": "Bishop 2006's section 10.1.2, a source's section number",
    },
    ("lesson", 31): {
        "1,900": "Llama 3 8B's real ratio, over 15T tokens on 8.03B (Meta 2024): checked in test_the_notes_arithmetic",
        "8.03B": "Llama 3 8B's parameter count (Meta 2024); the preset rounds it to 8B",
    },
    ("lesson", 33): {
        "14": "a reference to slide 14 (pass@k): test_the_cross_references",
        "17": "a reference to slide 17 (worked example D): test_the_cross_references",
        "8": "a reference to slide 8 (the SFT mask): test_the_cross_references",
        "10": "a reference to slide 10 (the reward hack): test_the_cross_references",
        "1e-4": "TRL's epsilon in std + 1e-4 (GRPOTrainer), a source's constant: test_review3_n3",
    },
}

_SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")
_SCALE = {"k": 1e3, "K": 1e3, "M": 1e6, "B": 1e9, "T": 1e12, "G": 1e9}
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-+]?)(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?P<frac>\.\d+)?(?:e(?P<exp>[-+]?\d+))?"
    r"(?:(?P<suffix>[kKMBT])(?![A-Za-z])|(?=\s?(?P<flop>[GT])FLOP))?"
)
_CITATION = re.compile(r"(?:et al\.,?|[A-Z][^\s(),]*,?)\s(?:19|20)\d\d\b")


def _plain(text: str) -> str:
    """Unicode minus and "×10²¹" written as a plain minus and "e21"."""
    text = text.replace("−", "-").replace("–", "-")
    return re.sub(r"\s?×\s?10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)", lambda m: "e" + m.group(1).translate(_SUPERSCRIPT), text)


def numbers(text: str) -> list[tuple[str, float, float]]:
    """The numbers of a text: (as written, value, half a unit of its last printed digit)."""
    out = []
    for m in _NUMBER.finditer(_plain(_CITATION.sub(" ", text))):
        digits = m.group("int").replace(",", "") + (m.group("frac") or "")
        decimals = len(m.group("frac") or "") - 1 if m.group("frac") else 0
        scale = 10.0 ** int(m.group("exp") or 0) * _SCALE.get(m.group("suffix") or m.group("flop") or "", 1.0)
        value = float(digits) * scale * (-1 if m.group("sign") == "-" else 1)
        written = m.group(0).strip()
        out.append((written.lstrip("+-"), value, 0.5 * 10.0**-decimals * scale))
    return out


def _figure_text(fig) -> list[str]:
    d = fig.to_plotly_json()
    layout = d.get("layout", {})
    out = [str((layout.get("title") or {}).get("text") or "")]
    out += [str(a.get("text") or "") for a in layout.get("annotations", []) or []]
    for key, axis in layout.items():
        if key.startswith(("xaxis", "yaxis")) and isinstance(axis, dict):
            out.append(str((axis.get("title") or {}).get("text") or ""))
    for trace in d["data"]:
        out.append(str(trace.get("name") or ""))
        text = trace.get("text")
        if isinstance(text, str):
            out.append(text)
        elif text is not None:
            out += [str(t) for t in list(text)]
    return out


def rendered(slide, reveal: bool = True):
    """The slide as the Deck page renders it (with a guess committed when ``reveal`` and the page asks first)."""
    view = slide.view()
    state = slide.state
    if reveal and view.facts.get("predict") == "hidden":
        guess = next(f.name for f in slide.spec.fields if f.name in GUESSES)
        state = state.replace(**{guess: GUESSES[guess]})
        view = slide.view(state=state)
    return state, view


def shown_text(slide) -> str:
    """Everything of the slide a number of its notes may be found in (see the module's docstring)."""
    state, view = rendered(slide)
    readouts = slide.shown_readouts(view) if hasattr(slide, "shown_readouts") else view.readouts[:6]
    figs = slide.shown_figures(view) if hasattr(slide, "shown_figures") else unique_figures(view.figures)
    parts = [slide.title, *(text for _, text in view.notices)]
    parts += [f"{r.label} {r.value} {r.help or ''}" for r in readouts]
    parts += [t for fig in figs for t in _figure_text(fig)]
    parts += [f"{f.name}={state[f.name]}" for f in slide.spec.fields]  # the controls in the player's sidebar
    if slide.sweep is not None:
        parts += [str(v) for v in slide.sweep.values]
    return "\n".join(parts)


def missing_numbers(deck: str, number: int, slide) -> list[str]:
    shown = [value for _, value, _ in numbers(shown_text(slide))]
    allowed = ALLOWED.get((deck, number), {})
    out = []
    for written, value, tol in numbers(slide.notes):
        if written in allowed:
            continue
        if not any(abs(y - value) <= tol * (1 + 1e-9) for y in shown):
            out.append(written)
    return out


# ---------------------------------------------------------------------- the parser itself
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3.2B model on 63B tokens", [("3.2B", 3.2e9, 0.05e9), ("63B", 63e9, 0.5e9)]),
        ("C = 8.40×10²² FLOPs", [("8.40e22", 8.4e22, 0.005e22)]),
        (
            "**8,388,608** in all, −0.77 and +1.29",
            [("8,388,608", 8388608, 0.5), ("0.77", -0.77, 0.005), ("1.29", 1.29, 0.005)],
        ),
        ("3 GFLOP per token, 989 TFLOP/s", [("3", 3e9, 0.5e9), ("989", 989e12, 0.5e12)]),
        ("Hoffmann et al. 2022, Büyükakyüz 2024, an H100, W0", []),
        ("16 B/param, 4.48 TB", [("16", 16, 0.5), ("4.48", 4.48, 0.005)]),
    ],
)
def test_numbers_are_read_with_their_printed_precision(text, expected) -> None:
    got = numbers(text)
    assert [w for w, _, _ in got] == [w for w, _, _ in expected]
    for (_, v, t), (_, ev, et) in zip(got, expected, strict=True):
        assert v == pytest.approx(ev) and t == pytest.approx(et)


# ---------------------------------------------------------------------- (a) and (b), every slide
@pytest.mark.parametrize(("deck", "number", "slide"), SLIDES, ids=IDS)
def test_every_number_of_the_notes_is_on_its_slide(deck: str, number: int, slide) -> None:
    assert missing_numbers(deck, number, slide) == [], f"{deck} slide {number} ({slide.title!r})"


@pytest.mark.parametrize(("deck", "number", "slide"), SLIDES, ids=IDS)
def test_the_allow_list_is_needed(deck: str, number: int, slide) -> None:
    """Every allowed number is in the slide's notes and is not on the slide (no stale or blanket entry)."""
    allowed = ALLOWED.get((deck, number), {})
    written = {w for w, _, _ in numbers(slide.notes)}
    shown = [value for _, value, _ in numbers(shown_text(slide))]
    for entry in allowed:
        assert entry in written, f"{deck} slide {number}: {entry!r} is allowed but not in the notes"
        (value, tol) = next((v, t) for w, v, t in numbers(slide.notes) if w == entry)
        assert not any(abs(y - value) <= tol for y in shown), f"{deck} slide {number}: {entry!r} is on the slide"


QUESTIONS = [(d, n, s) for d, n, s in SLIDES if s.title.rstrip().endswith("?") or s.title.lower().startswith("predict")]


@pytest.mark.parametrize(("deck", "number", "slide"), QUESTIONS, ids=[f"{d}-{n}" for d, n, _ in QUESTIONS])
def test_a_slide_that_asks_opens_with_its_answer_withheld(deck: str, number: int, slide) -> None:
    _, opened = rendered(slide, reveal=False)
    assert getattr(slide, "withhold", False) or opened.facts.get("predict") == "hidden", (
        f"{deck} slide {number} ({slide.title!r}) shows its answer before the room has guessed"
    )


def test_the_questions_are_found() -> None:
    assert {(d, n) for d, n, _ in QUESTIONS} >= {("lesson", 1), ("lesson", 2), ("lesson", 17), ("interview", 6)}


# A slide that relies on the page's Predict first (whether or not it is also withheld: after v it opens predicting).
PREDICTS = [(d, n, s) for d, n, s in SLIDES if rendered(s, reveal=False)[1].facts.get("predict") == "hidden"]


def _holds_no_answer(fig) -> bool:
    """A figure the page draws in place of its answer while predicting (viz.predict.predict_figure: axes, inputs
    and the question). Any other figure may draw the answer in a marker or a curve, where no text check sees it."""
    annotations = fig.to_plotly_json().get("layout", {}).get("annotations", []) or []
    return any(str(a.get("text") or "").startswith("<b>Predict first.</b>") for a in annotations)


@pytest.mark.parametrize(("deck", "number", "slide"), PREDICTS, ids=[f"{d}-{n}" for d, n, _ in PREDICTS])
def test_a_slide_that_predicts_first_shows_nothing_that_gives_the_answer_away(deck: str, number: int, slide) -> None:
    """Until the guess is in, the slide shows only the figures the page hides while predicting (no other tab's
    figure), and no shown readout states the answer that the reveal gives (its first readout, the truth)."""
    _, opened = rendered(slide, reveal=False)
    leaks = [fig.layout.title.text or "untitled" for fig in slide.shown_figures(opened) if not _holds_no_answer(fig)]
    assert leaks == [], f"{deck} slide {number} ({slide.title!r}) shows {leaks} before the room has guessed"
    _, revealed = rendered(slide)
    truth = revealed.readouts[0]
    (_, answer, tol), *_ = numbers(truth.value)
    for r in slide.shown_readouts(opened):
        said = [y for _, y, _ in numbers(f"{r.label} {r.value} {r.help or ''}")]
        assert not any(abs(y - answer) <= tol for y in said), f"{deck} slide {number}: {r.label} {r.value} gives it"


def test_the_predict_first_slides_are_found() -> None:
    assert {(d, n) for d, n, _ in PREDICTS} >= {("lesson", 1), ("interview", 4), ("interview", 6)}


def test_the_leak_check_sees_another_tabs_figure() -> None:
    """The check above fails for the GRPO slide opened on "Which prompts teach?" (this group's markers at p = 1
    sit at P(signal) 0 and mean |A| 0: the answer), as interview slide 4 did."""
    slide = next(s for d, n, s in PREDICTS if d == "interview" and n == 4)
    leaky = replace(slide, state=slide.state.replace(grpo_view="Which prompts teach?"))
    _, opened = rendered(leaky, reveal=False)
    assert [fig.layout.title.text for fig in leaky.shown_figures(opened) if not _holds_no_answer(fig)] != []


@pytest.mark.parametrize(("deck", "number", "slide"), PREDICTS, ids=[f"{d}-{n}" for d, n, _ in PREDICTS])
def test_the_notes_say_where_the_guess_goes(deck: str, number: int, slide) -> None:
    """The guess field is in the player's sidebar, inside the expander "<page> controls" (pages/15_Deck.py)."""
    assert f"sidebar's *{page_label(slide.page)} controls* expander" in _flat(slide.notes), f"{deck} slide {number}"


@pytest.mark.parametrize(("deck", "number", "slide"), SLIDES, ids=IDS)
def test_a_slide_that_names_its_figures_names_their_readouts(deck: str, number: int, slide) -> None:
    """Otherwise the view's first six readouts show, which may describe a figure the slide leaves out (lesson slide 2
    showed the KL leash's readouts under the DPO loss curve)."""
    assert not slide.figures or slide.readouts, f"{deck} slide {number} ({slide.title!r})"


@pytest.mark.parametrize(("deck", "number", "slide"), SLIDES, ids=IDS)
def test_a_continued_readout_follows_the_one_it_continues(deck: str, number: int, slide) -> None:
    """A readout whose label starts with "…" ("… with the Epoch fit") continues the view's readout before it: a
    slide that shows it must show that one just before it, or it reads as a continuation of another."""
    _, view = rendered(slide)
    pool = [*view.readouts]
    for key, value in view.facts.items():
        if key.endswith("_readouts") and isinstance(value, list):
            pool += value
    shown = slide.shown_readouts(view)
    for i, r in enumerate(shown):
        if r.label.startswith("…"):
            before = pool[pool.index(r) - 1]
            assert i > 0 and shown[i - 1] == before, f"{deck} slide {number}: {r.label!r} not after {before.label!r}"


# ---------------------------------------------------------------------- the two named slides
def test_the_dpo_slide_shows_dpo_with_worked_example_b() -> None:
    slide = next(s for d, _, s in SLIDES if d == "lesson" and s.title == "3.7 DPO: worked example B")
    _, view = rendered(slide)
    readouts = slide.shown_readouts(view) if hasattr(slide, "shown_readouts") else view.readouts[:6]
    values = {r.label: r.value for r in readouts}
    beta, lw, ll, rw, rl = 0.1, -10.0, -15.0, -12.0, -14.0  # worked example B (lesson §3.7)
    margin = beta * (lw - rw) - beta * (ll - rl)
    assert values.get("DPO loss") == f"{-math.log(expit(margin)):.3f}" == "0.554"
    assert values.get("Weight") == f"{expit(-margin):.3f}" == "0.426"
    assert "loss −log σ(m)" in shown_text(slide)


def test_predict_1_opens_with_the_answer_held_back() -> None:
    slide = DECKS["lesson"].slide(1)
    _, opened = rendered(slide, reveal=False)
    assert opened.facts.get("predict") == "hidden"
    hidden = {r.label: r.value for r in opened.readouts}
    assert hidden["Fit's optimum N"] == "?" and hidden["20-tokens rule N"] == "?"


# ---------------------------------------------------------------------- (c) the notes' arithmetic, independently
E, A, B, ALPHA, BETA = 1.69, 406.4, 410.7, 0.34, 0.28  # Hoffmann et al. 2022, approach 3 (rounded constants)
EPOCH = (1.8172, 482.01, 2085.43, 0.3478, 0.3658)  # Besiroglu et al. 2024


def _loss(n: float, d: float, fit=(E, A, B, ALPHA, BETA)) -> float:
    e, a, b, al, be = fit
    return e + a / n**al + b / d**be


def _optimum(c: float, fit=(E, A, B, ALPHA, BETA)) -> float:
    """The fit's loss-minimising N on the budget C (closed form of the iso-FLOP minimum)."""
    _, a, b, al, be = fit
    g = (al * a / (be * b)) ** (1 / (al + be))
    return g * (c / 6) ** (be / (al + be))


def _near(value: float, written: str) -> bool:
    (_, shown, tol), *_ = numbers(written)
    return abs(value - shown) <= tol * (1 + 1e-9)


def test_the_moe_slide_drag() -> None:
    """The MoE slide's notes quote the drag's steps: 141 dropped at capacity factor 1.25 and none from 2 on, counted
    by tests/moe_reference.py's plain loop over tokens (not core.moe)."""
    from tests.moe_reference import routing_by_hand

    slide = DECKS["lesson"].slide(23)
    assert slide.page == "MoE" and "141 dropped at 1.25, none from 2" in _flat(slide.notes)
    s = slide.state
    T, E, k, skew, seed = s.moe_tokens, s.moe_experts, s.moe_top_k, s.moe_skew, s.moe_seed
    assert routing_by_hand(T, E, k, skew, seed, 1.25)[1] == 141
    assert routing_by_hand(T, E, k, skew, seed, 1.75)[1] > 0
    assert all(routing_by_hand(T, E, k, skew, seed, cf)[1] == 0 for cf in (2.0, 2.5, 3.0))


def test_the_notes_arithmetic() -> None:
    # lesson 1: 10B on 20B tokens; the rule N = sqrt(C/120); the fit's minimum
    c = 6 * 10e9 * 20e9
    assert _near(c, "1.2e21") and _near(20e9 / 10e9, "2")
    n_rule = math.sqrt(c / 120)
    assert _near(n_rule, "3.2B") and _near(c / 6 / n_rule, "63B") and _near(_loss(n_rule, c / 6 / n_rule), "2.318")
    assert _near(_loss(10e9, 20e9), "2.388")
    n_opt = _optimum(c)
    assert _near(n_opt, "2.0B") and _near(c / 6 / n_opt, "101B") and _near(_loss(n_opt, c / 6 / n_opt), "2.311")
    assert _near(c / 6 / n_opt**2, "51")
    # ... and its sweep from 100B down to 1B passes the minimum: the loss falls to it, then rises a little
    sweep = [10 ** (11 - 2 * k / 15) for k in range(16)]
    losses = [_loss(n, c / 6 / n) for n in sweep]
    bottom = losses.index(min(losses))
    assert _near(sweep[0], "100B") and _near(sweep[-1], "1B") and 0 < bottom < 15
    assert all(a > b for a, b in pairwise(losses[: bottom + 1])) and all(a < b for a, b in pairwise(losses[bottom:]))
    assert 0 < losses[-1] / _loss(n_opt, c / 6 / n_opt) - 1 < 0.01  # "a little": 0.6% at 1B
    # lesson 4: the plan's 3.2B, the rule's 3.16B rounded, above the fit's minimum
    assert _near(n_rule, "3.16B")
    assert _near((_loss(3.2e9, c / 6 / 3.2e9) / _loss(n_opt, c / 6 / n_opt) - 1) * 100, "0.29")
    # ... and the compute C' < C at which the fit's optimum reaches the rule's loss (bisection on the optimum's loss)
    target, lo_c, hi_c = _loss(3.2e9, c / 6 / 3.2e9), 1e19, c
    for _ in range(200):
        mid = math.sqrt(lo_c * hi_c)
        lo_c, hi_c = (mid, hi_c) if _loss(_optimum(mid), mid / 6 / _optimum(mid)) > target else (lo_c, mid)
    assert _near((1 - lo_c / c) * 100, "7")
    # lesson 5: pi*(better) at beta = 1 for pi_ref = (1/2, 1/2), r = (1, 0)
    assert _near(math.e / (math.e + 1), "0.73")
    # lesson 7: Chinchilla's budget; the fit's optimum 32.5B; Epoch's 73B; the rule's 70B on 1.4T
    c7 = 6 * 70e9 * 1.4e12
    assert _near(c7, "5.9e23") and _near(_optimum(c7), "32.5B") and _near(_optimum(c7, EPOCH), "73B")
    assert _near(math.sqrt(c7 / 120), "70B")
    # lesson 13: worked example C
    r = [1, 0, 0, 1, 1, 0, 0, 0]
    mean = sum(r) / 8
    std = math.sqrt(sum((x - mean) ** 2 for x in r) / 8)
    assert _near(mean, "0.375") and _near(std, "0.484")
    assert _near((1 - mean) / std, "+1.29") and _near((0 - mean) / std, "-0.77")
    # lesson 14 and interview 6: worked example E
    n, k, correct = 10, 5, 3
    assert _near(1 - comb(n - correct, k, exact=True) / comb(n, k, exact=True), "0.917")
    assert _near(1 - (1 - correct / n) ** k, "0.832") and _near(correct / n, "0.30") and _near(1 - correct / n, "0.7")
    # lesson 15 and interview 1: worked example A and "check yourself"
    c15 = 8 * 86_400 * 0.40 * 989e12
    assert _near(c15, "2.73e20") and _near(math.sqrt(c15 / 120), "1.5B") and _near(c15 / 6 / 1.5e9, "30B")
    assert _near(16 * 1.5e9 / 1e9, "24") and _near(80 * 2**30 / 1e9, "85.9")
    assert _near(2 * 1.5e9 / 1e9, "3") and _near(_optimum(c15), "1.0B")
    assert _near(0.40 * 989e12, "3.956e14")
    c_i1 = 6 * 7e9 * 2e12
    assert _near(c_i1, "8.4e22") and _near(c_i1 / (0.40 * 989e12) / 86_400, "2,458")
    assert _near(c_i1 / (0.40 * 989e12) / 86_400 / 256, "10")
    # lesson 16: over-trained, same (unrounded) budget: 0.5B on 91B tokens
    d16 = c15 / 6 / 0.5e9
    lo, hi = _loss(1.5e9, c15 / 6 / 1.5e9), _loss(0.5e9, d16)
    assert _near(d16, "91B") and _near(d16 / 0.5e9, "182") and _near(lo, "2.475") and _near(hi, "2.489")
    assert _near((hi / lo - 1) * 100, "0.54") and _near((2.489 / 2.475 - 1) * 100, "0.6")
    assert _near((hi / _loss(_optimum(c15), c15 / 6 / _optimum(c15)) - 1) * 100, "0.77")
    # lessons 17 and 18: worked example D
    se = [math.sqrt(p * (1 - p) / 1000) * 100 for p in (0.710, 0.725)]
    assert all(_near(s, "1.4") for s in se) and _near(1.96 * math.hypot(*se), "3.9") and _near(72.5 - 71.0, "1.5")
    # lesson 19 and interview 5: LoRA counts (Llama-2-7B shape: 32 layers, width 4096)
    assert _near(8 * (4096 + 4096), "65,536") and _near(32 * 4 * 8 * 8192, "8,388,608")
    assert _near(32 * 4 * 8 * 8192 / 7e9 * 100, "0.12") and _near(16 * 32 * 4 * 8 * 8192 / 1e6, "134")
    assert _near(16 * 8192, "131,072") and _near(16 * 8192 / 4096**2 * 100, "0.78") and _near(4096**2, "16.8M")
    assert _near(4 * 16 * 8192, "524,288") and _near(32 * 4 * 16 * 8192, "16,777,216") and 32 * 4 == 128
    assert 128 * 16 * 8192 == 4096 * 4096 and _near(32 * 4 * 16 * 8192 / 7e9 * 100, "0.24")
    llama2_7b = 6_738_415_616  # Llama-2-7B's parameters, counted from its shape (32 layers, 4096, 11008, 32,000)
    assert llama2_7b == 32_000 * 4096 * 2 + 32 * (4 * 4096**2 + 3 * 4096 * 11008 + 2 * 4096) + 4096
    assert _near(llama2_7b, "6.74B") and _near(32 * 4 * 16 * 8192 / llama2_7b * 100, "0.25")
    # lesson 21: Llama 3 8B on 15T tokens; the fits' optimal tokens per parameter at 6 * 8e9 * 15e12
    c21 = 6 * 8e9 * 15e12
    assert _near(15e12 / 8e9, "1,875")
    assert round(15e12 / 8.03e9, -2) == 1900  # "about 1,900": two significant figures (over 15T tokens: at least)
    assert _near(c21 / 6 / _optimum(c21) ** 2, "95") and _near(c21 / 6 / _optimum(c21, EPOCH) ** 2, "18")
    # lesson 3: ln V for V = 50,000
    assert _near(math.log(50_000), "10.8")


def test_the_training_lab_slide() -> None:
    """Lesson 24's notes: the 1e-4 curve ends at 5.73 bits per byte (read from the shipped file itself, nats / ln 2),
    above the training split's byte entropy, 4.80 bits (the corpus file and its split written out, not core); at seed
    0 the 3e-2 curve's train loss is above ln 256 for two steps."""
    import json
    from pathlib import Path

    import numpy as np

    root = Path(__file__).resolve().parents[1]
    default = {"lr": 3e-3, "warmup": 20, "schedule": "cosine", "optimizer": "adamw", "batch": 16, "norm": "pre",
               "layers": 2, "clip": 1.0, "steps": 300, "seed": 0}  # fmt: skip
    with np.load(root / "core/data/training_lab.npz", allow_pickle=False) as z:
        index = json.loads(bytes(z["index"]).decode("utf-8"))["curves"]
        at = {
            e["settings"]["lr"]: i
            for i, e in enumerate(index)
            if e["settings"] == default | {"lr": e["settings"]["lr"]}
        }
        low = float(z[f"c{at[1e-4]}/val_loss"][-1]) / math.log(2)
        high = z[f"c{at[3e-2]}/loss"]
    data = (root / "core/data/tiny_corpus.txt").read_bytes()
    chunks = [data[i : i + 4096] for i in range(0, len(data), 4096)]  # chunk i held out when i % 10 == 9
    counts = np.bincount(
        np.frombuffer(b"".join(c for i, c in enumerate(chunks) if i % 10 != 9), np.uint8), minlength=256
    )
    f = counts[counts > 0] / counts.sum()
    unigram = float(-(f * np.log2(f)).sum())
    assert _near(low, "5.73") and _near(unigram, "4.80") and low > unigram
    assert int((high > math.log(256)).sum()) == 2


def test_the_number_formats_slide() -> None:
    """Lesson 25's notes, by torch's own casts (torch 2.13, CPU) and torch.finfo, not core: bf16 and fp16 keep 7 and
    10 mantissa bits (eps 2^-7 and 2^-10); along the drag, 1e-7 is an fp16 subnormal stored 19.2% off, 1e-8 rounds to
    zero in fp16 while bf16 stays within 2^-8, and torch's casts take 100,000 to inf in fp16 and E5M2 while E4M3
    saturates at 448; at 0.1 the errors the notes quote (the readouts and the figure show them too)."""
    import torch

    slide = DECKS["lesson"].slide(25)
    notes = _flat(slide.notes)
    assert slide.page == "Number_formats" and slide.state["fmt_x"] == "0.1"

    def cast(x, dtype):
        return float(torch.tensor(x, dtype=torch.float64).to(dtype).to(torch.float64))

    def error_pct(x, dtype):
        return 100 * abs(cast(x, dtype) - x) / x

    bf16, fp16, e4m3, e5m2 = torch.bfloat16, torch.float16, torch.float8_e4m3fn, torch.float8_e5m2
    assert torch.finfo(bf16).eps == 2.0**-7 and torch.finfo(fp16).eps == 2.0**-10
    assert "only 7 of its mantissa bits" in notes and "with 10 mantissa bits" in notes
    assert _near(error_pct(0.1, bf16), "0.0977") and _near(cast(0.1, bf16), "0.100098")
    assert error_pct(0.1, bf16) <= 100 * 2.0**-8
    assert _near(cast(0.1, fp16), "0.0999756") and _near(error_pct(0.1, fp16), "0.0244")
    assert _near(cast(0.1, e4m3), "0.101562") and _near(error_pct(0.1, e4m3), "1.56")
    assert _near(cast(0.1, e5m2), "0.09375") and _near(error_pct(0.1, e5m2), "6.25")
    assert 0 < cast(1e-7, fp16) < torch.finfo(fp16).smallest_normal and _near(error_pct(1e-7, fp16), "19.2")
    assert cast(1e-8, fp16) == 0 and error_pct(1e-8, bf16) <= 100 * 2.0**-8
    assert math.isinf(cast(1e5, fp16)) and math.isinf(cast(1e5, e5m2)) and cast(1e5, e4m3) == 448
    assert {"1e-07", "1e-08", "100000"} <= set(slide.spec["fmt_x"].choices)
    assert "At 1e-7 fp16 is among its subnormals (an error of 19.2%) and at 1e-8 it rounds to zero" in notes


def test_the_optimizers_slide() -> None:
    """Lesson 26's notes: on f = (1/2)(50 x^2 + y^2) plain SGD's limit is 2/50 = 0.04 and momentum 0.9's is
    2(1 + 0.9)/50 = 0.076 (the largest root of each eigen-direction's recurrence crosses 1 there, numpy.roots); at
    eta = 0.1 torch.optim's SGD and SGD with momentum diverge and its Adam ends at 0.052 after the slide's 60 steps;
    0.0316 is a step of the page's drag, where torch's SGD converges."""
    import numpy as np
    import torch

    from views.optimizers import LR_CHOICES

    slide = DECKS["lesson"].slide(26)
    assert slide.page == "Optimizers" and slide.state["opt_wd"] == 0.0 and slide.state["opt_kappa"] == 50.0
    notes = _flat(slide.notes)
    assert "2/λ_max = 0.04" in notes and "ends at 0.052" in notes and "= 0.076" in notes

    def radius(lam: float, lr: float, mu: float) -> float:
        return max(abs(r) for r in np.roots([1.0, -(1 + mu - lr * lam), mu]))

    for mu, limit in ((0.0, "0.04"), (0.9, "0.076")):
        exact = 2 * (1 + mu) / 50
        assert _near(exact, limit)
        assert radius(50, exact * (1 - 1e-6), mu) < 1 < radius(50, exact * (1 + 1e-6), mu)

    def final_loss(lr: float, kind: str, steps: int = 60) -> float:
        p = torch.tensor([-1.5, 1.0], dtype=torch.float64, requires_grad=True)
        scale = torch.tensor([50.0, 1.0], dtype=torch.float64)
        opt = {
            "sgd": lambda: torch.optim.SGD([p], lr=lr),
            "momentum": lambda: torch.optim.SGD([p], lr=lr, momentum=0.9),
            "adam": lambda: torch.optim.Adam([p], lr=lr),
        }[kind]()
        for _ in range(steps):
            opt.zero_grad()
            (0.5 * (scale * p * p).sum()).backward()
            opt.step()
        return float(0.5 * (scale * p * p).detach().sum())

    start = 0.5 * (50 * 1.5**2 + 1.0)
    assert final_loss(0.1, "sgd") > 1e6 and final_loss(0.1, "momentum") > 1e6
    assert _near(final_loss(0.1, "adam"), "0.052")
    assert "0.0316" in LR_CHOICES and final_loss(float("0.0316"), "sgd") < start


def test_the_policy_gradient_slide() -> None:
    """Lesson 27's notes, by exact sums over every ordered group of answers written out here (not core): on the page's
    bandit (rewards 1, 0.6, 0.3, 0; pi = 0.1, 0.2, 0.3, 0.4; softmax logits, score e_a - pi) the group mean's expected
    update is 0.750 of grad J at G = 4 and 0.5 at G = 2 (and (G - 1)/G at G = 3, the formula the notes' 0.938 at
    G = 16 uses); RLOO's is grad J, with (4/3)^2 = 1.78 times the group mean's total variance and the same ratio of
    mean to standard deviation along grad J; the std-normalised estimate (population std) is 2.69 on grad J with
    cosine 0.986; J = 0.310, and four answers without a baseline have tr Cov 1.81 |grad J|^2."""
    from itertools import product

    from views.policy_gradient import G_CHOICES

    slide = DECKS["lesson"].slide(27)
    assert slide.page == "Policy_gradient" and slide.state["pg_G"] == "4" and slide.state["predict_pg"] is True
    assert slide.state["pg_rewards"].startswith("graded") and slide.state["pg_policy"].startswith("untrained")
    notes = _flat(slide.notes)
    assert "(G − 1)/G = 0.750" in notes and "(4/3)² = 1.78" in notes and "0.938 ∇J at G = 16" in notes
    assert "0.5 ∇J at G = 2" in notes and "2.69 ∇J with cosine 0.986" in notes
    assert {"2", "16"} <= set(G_CHOICES)
    pi, r = [0.1, 0.2, 0.3, 0.4], [1.0, 0.6, 0.3, 0.0]
    J = sum(p * x for p, x in zip(pi, r, strict=True))
    grad = [pi[k] * (r[k] - J) for k in range(4)]
    gg = sum(x * x for x in grad)

    def moments(G: int, kind: str) -> tuple[list[float], list[list[float]]]:
        """E[g] and E[g g^T] of g = (1/G) sum_i A_i (e_{a_i} - pi) over the 4^G ordered groups."""
        mean, second = [0.0] * 4, [[0.0] * 4 for _ in range(4)]
        for group in product(range(4), repeat=G):
            p = math.prod(pi[a] for a in group)
            rs = [r[a] for a in group]
            m = sum(rs) / G
            if kind == "none":
                adv = rs
            elif kind == "group_mean":
                adv = [x - m for x in rs]
            elif kind == "rloo":
                adv = [x - (sum(rs) - x) / (G - 1) for x in rs]
            else:  # the group's mean and population std
                sd = math.sqrt(sum((x - m) ** 2 for x in rs) / G)
                adv = [0.0 if sd == 0 else (x - m) / sd for x in rs]
            g = [sum(A * ((a == k) - pi[k]) for A, a in zip(adv, group, strict=True)) / G for k in range(4)]
            for k in range(4):
                mean[k] += p * g[k]
                for j in range(4):
                    second[k][j] += p * g[k] * g[j]
        return mean, [[second[k][j] - mean[k] * mean[j] for j in range(4)] for k in range(4)]

    def on_grad(v: list[float]) -> float:
        return sum(a * b for a, b in zip(v, grad, strict=True)) / gg

    def sd_along(cov: list[list[float]]) -> float:
        return math.sqrt(sum(grad[k] * cov[k][j] * grad[j] for k in range(4) for j in range(4))) / gg

    for G in (2, 3, 4):
        assert on_grad(moments(G, "group_mean")[0]) == pytest.approx((G - 1) / G, abs=1e-12)
    assert _near(on_grad(moments(2, "group_mean")[0]), "0.5") and _near(15 / 16, "0.938")
    mean_gm, cov_gm = moments(4, "group_mean")
    mean_lo, cov_lo = moments(4, "rloo")
    assert _near(on_grad(mean_gm), "0.750") and on_grad(mean_lo) == pytest.approx(1.0, abs=1e-12)
    trace_gm, trace_lo = (sum(c[k][k] for k in range(4)) for c in (cov_gm, cov_lo))
    assert _near(trace_lo / trace_gm, "1.78") and _near((4 / 3) ** 2, "1.78")
    assert on_grad(mean_gm) / sd_along(cov_gm) == pytest.approx(on_grad(mean_lo) / sd_along(cov_lo), rel=1e-9)
    mean_n, _ = moments(4, "norm")
    cosine = sum(a * b for a, b in zip(mean_n, grad, strict=True)) / math.sqrt(sum(x * x for x in mean_n) * gg)
    assert _near(on_grad(mean_n), "2.69") and _near(cosine, "0.986")
    _, cov_none = moments(4, "none")
    assert _near(J, "0.310") and _near(sum(cov_none[k][k] for k in range(4)) / gg, "1.81")


def test_the_test_time_compute_slide() -> None:
    """The test-time compute slide's notes, by math alone (not core): the gold score d (alpha - beta d) at the preset's
    alpha = 1, beta = 0.25 peaks at d = alpha / (2 beta) = 2, KL = 4 nats; log n - (n - 1)/n reaches 4 at n = 147.4
    (bisection on the increasing formula), and 147 is the best whole n; at the preset's n = 512 the formula gives 5.24
    nats and the gold score 0.979, below the peak's 1."""
    slide = next(s for s in DECKS["lesson"].slides if s.page == "Test_time_compute")
    notes = _flat(slide.notes)
    assert slide.state["ttc_alpha"] == 1.0 and slide.state["ttc_beta"] == 0.25 and slide.state["ttc_n"] == "512"
    alpha, beta = 1.0, 0.25

    def kl(n: float) -> float:
        return math.log(n) - (n - 1) / n

    def gold(n: float) -> float:
        return math.sqrt(kl(n)) * (alpha - beta * math.sqrt(kl(n)))

    d = alpha / (2 * beta)
    lo, hi = 1.0, 1e6
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if kl(mid) < d * d else (lo, mid)
    best = max(range(1, 1025), key=gold)
    assert _near(d, "2") and _near(d * d, "4") and 147 < lo < 148 and best == 147
    assert _near(kl(512), "5.24") and _near(gold(512), "0.979") and gold(512) < alpha**2 / (4 * beta)
    assert "n* = 147" in notes and "= 2, a KL of 4 nats" in notes and "5.24 nats and a gold score of +0.979" in notes


def test_the_distillation_slide() -> None:
    """The distillation slide's notes, by scipy alone (not core): the teacher, two equal Gaussians of width 1 at -d/2
    and +d/2 on the page's grid (-25..25, 1001 points, normalised there); at d = 5 the best one-Gaussian reverse
    fit is centred (mean 0) with sd 2.39, below the forward fit's sqrt(1 + d^2/4) = 2.69; the on-mode optimum's
    KL(q || p) falls below the middle one's between the drag's steps 5.5 and 6, at d = 5.6 (brentq), and tends to
    log 2 for far modes."""
    import numpy as np
    from scipy import optimize, stats

    slide = next(s for s in DECKS["lesson"].slides if s.page == "Distillation")
    notes = _flat(slide.notes)
    assert slide.state["dist_d"] == "5" and slide.state["dist_w"] == "0.5" and slide.state["dist_k"] == "1"
    x = np.linspace(-25.0, 25.0, 1001)

    def gauss(m: float, s: float) -> np.ndarray:
        g = stats.norm.pdf(x, m, s)
        return g / g.sum()

    def middle(d: float) -> tuple[float, float]:
        p = (gauss(-d / 2, 1.0) + gauss(d / 2, 1.0)) / 2
        r = optimize.minimize_scalar(lambda ls: stats.entropy(gauss(0.0, math.exp(ls)), p), bounds=(-1, 2.5),
                                     method="bounded", options={"xatol": 1e-10})  # fmt: skip
        return math.exp(r.x), float(r.fun)

    def on_mode(d: float) -> float:
        p = (gauss(-d / 2, 1.0) + gauss(d / 2, 1.0)) / 2
        r = optimize.minimize(lambda t: stats.entropy(gauss(t[0], math.exp(t[1])), p), [-d / 2, 0.0],
                              method="Nelder-Mead", options={"xatol": 1e-9, "fatol": 1e-13})  # fmt: skip
        return float(r.fun)

    sd5, kl5 = middle(5.0)
    assert kl5 < on_mode(5.0) and _near(sd5, "2.39") and _near(math.sqrt(1 + 25 / 4), "2.69")
    jump = optimize.brentq(lambda d: on_mode(d) - middle(d)[1], 5.5, 6.0, xtol=1e-6)
    assert _near(jump, "5.6") and abs(on_mode(12.0) - math.log(2)) < 1e-3
    assert "The answer is 0.00" in notes and "sd 2.39" in notes and "near d = 5.6" in notes


def test_the_calibration_slide() -> None:
    """The calibration slide's answer by math alone (not core): the toy states sigmoid(kappa logit c), so at a stated
    0.9 the accuracy is sigmoid(logit(0.9) / kappa) = 9^(1/kappa) / (9^(1/kappa) + 1), 0.707 at the slide's kappa = 2.5;
    the readouts' sampled ECEs and fitted T are the view's (checked on the slide by the test above)."""
    slide = next(s for s in DECKS["lesson"].slides if s.page == "Calibration")
    notes = _flat(slide.notes)
    assert slide.state["cal_kappa"] == "2.5" and slide.state["predict_cal"] is True
    kappa = 2.5
    odds = 9 ** (1 / kappa)  # logit(0.9) = ln 9
    assert _near(odds / (odds + 1), "0.707") and _near(expit(math.log(9) / kappa), "0.707")
    assert "The answer is 0.707" in notes and "κ = 2.5" in notes


def test_the_cross_references() -> None:
    lesson = DECKS["lesson"]
    notes = lesson.slide(33).notes
    refs = {int(n): what for what, n in re.findall(r"([^,(]+?) \(slide (\d+)\)", " ".join(notes.split()))}
    assert set(refs) == {8, 10, 14, 17}
    assert "pass@k" in lesson.slide(14).title and "Worked example D" in lesson.slide(17).title
    assert "SFT" in lesson.slide(8).title and "reward hack" in lesson.slide(10).title


# ---------------------------------------------------------------------- the review's items on the decks
def _flat(text: str) -> str:
    return " ".join(text.split())


def test_w2_the_over_training_rise_is_computed_from_the_unrounded_losses() -> None:
    notes = _flat(next(s for d, _, s in SLIDES if d == "lesson" and "over-trained" in s.title).notes)
    match = re.search(r"2\.489\D{0,3}\s?\+?(\d+\.\d+)%", notes)
    assert match, "the over-training slide quotes no rise after 2.489"
    c = 8 * 86_400 * 0.40 * 989e12  # worked example A's budget, as the preset computes it
    rise = (_loss(0.5e9, c / 6 / 0.5e9) / _loss(1.5e9, c / 6 / 1.5e9) - 1) * 100  # 0.540%, not 0.6%
    assert _near(rise, match.group(1)), f"+{match.group(1)}% quoted; the unrounded losses give +{rise:.3f}%"


def test_w4_twenty_tokens_is_a_rule_of_thumb_not_the_drawn_fits_optimum() -> None:
    slide = next(s for d, _, s in SLIDES if d == "lesson" and s.title.startswith("Mistake: 20 tokens"))
    notes = _flat(slide.notes)
    assert "optimum of one fit" not in notes and "rule of thumb" in notes and "approaches 1 and 2" in notes
    match = re.search(r"about (\d+) tokens per parameter at this budget", notes)
    assert match, "the slide does not say what the drawn (approach-3) curve asks for"
    c = float(slide.state["C"])
    assert _near(c / 6 / _optimum(c) ** 2, match.group(1))


def test_m7_the_plotted_optimum_is_named_beside_the_rule() -> None:
    lesson = DECKS["lesson"]
    chinchilla = _flat(lesson.slide(7).notes)
    assert "32.5B" in chinchilla and "40B and 70B" in chinchilla and "73B" in chinchilla
    assert "has its minimum lower" in _flat(lesson.slide(1).notes)
    assert "fit's own minimum" in _flat(lesson.slide(15).notes)


def test_m8_the_rank_16_slide_says_the_view_counts_the_whole_model() -> None:
    notes = _flat(next(s for d, _, s in SLIDES if d == "interview" and "rank 16" in s.title).notes)
    assert "whole model" in notes and "16,777,216" in notes and "coincidence" in notes


def test_z_vanishes_slide_shows_the_loss_of_the_difference_and_points_to_the_derivation() -> None:
    """The derivation's step 4 is drawn by the page script only (pages/2_KL_leash.py), never by figures(): the
    revealed slide shows the DPO loss over the margin, and its notes send the lecturer to the page for step 4."""
    slide = next(s for d, _, s in SLIDES if d == "interview" and "Z(x)" in s.title)
    _, view = rendered(slide)
    assert [f.layout.xaxis.title.text for f in slide.shown_figures(view)] == [
        "margin m = r̂_w − r̂_l (implicit reward difference)"
    ]
    assert [r.label for r in slide.shown_readouts(view)] == ["r̂_w", "r̂_l", "Margin", "DPO loss"]
    assert "Open this view on its page" in _flat(slide.notes) and "step 4" in _flat(slide.notes)


def test_m9_the_plug_in_is_low_because_the_function_is_concave() -> None:
    notes = _flat(next(s for d, _, s in SLIDES if d == "interview" and "pass@k" in s.title).notes)
    assert "concave" in notes and "Jensen" in notes and "with replacement" in notes
    assert "reuses the same samples" not in notes
    # the claim itself, exactly: E[1 - (1 - c/n)^k] < 1 - (1 - p)^k for c ~ Binomial(n, p), and the plug-in is the
    # chance that k draws with replacement hit a correct sample, the unbiased estimator the same without replacement
    from scipy.stats import binom

    n, k, p = 10, 5, 0.3
    expected_plug_in = sum(binom.pmf(c, n, p) * (1 - (1 - c / n) ** k) for c in range(n + 1))
    expected_unbiased = sum(binom.pmf(c, n, p) * (1 - comb(n - c, k) / comb(n, k)) for c in range(n + 1))
    assert expected_plug_in < 1 - (1 - p) ** k == pytest.approx(expected_unbiased)


# ---------------------------------------------------------------------- the second review of the decks (review 3)
def test_review3_m1_the_paired_interval_names_the_assumed_split() -> None:
    """The paired interval rests on counts example D does not give: the notes name the preset's split, and the
    half-width (sqrt(d - delta^2 / n) / n, d disagreements, delta their imbalance) at that split and a smaller one."""
    from scipy.stats import norm

    slide = DECKS["lesson"].slide(18)
    notes = _flat(slide.notes)
    assert "assumed split" in notes and "40 questions only A got right, 55 only B" in notes
    assert (slide.state["onlyA"], slide.state["onlyB"], slide.state["questions"]) == (40, 55, 1000)
    z = norm.ppf(0.975)

    def half_width(only_a: int, only_b: int, n: int = 1000) -> float:  # in percentage points
        return z * math.sqrt(only_a + only_b - (only_b - only_a) ** 2 / n) / n * 100

    assert _near(half_width(40, 55), "1.9") and half_width(40, 55) > 1.5  # not significant
    assert "with 15 vs 30 (the same 1.5-point gap) it would be 1.5 ± 1.3 points, significant" in notes
    assert _near(half_width(15, 30), "1.3") and half_width(15, 30) < 1.5 and 30 - 15 == 55 - 40


def test_review3_n1_the_loss_gap_names_its_budget_and_the_compute_saving_is_the_invariant() -> None:
    notes = _flat(DECKS["lesson"].slide(4).notes)
    assert "at this budget (C = 1.2e21)" in notes and "shrinks as C grows" in notes and "at any budget" in notes
    c = 6 * 10e9 * 20e9
    ratio = 3.2e9 / _optimum(c)
    assert _near(ratio, "1.62")

    def gap_and_saving(budget: float) -> tuple[float, float]:
        n = ratio * _optimum(budget)
        target = _loss(n, budget / 6 / n)
        best = _loss(_optimum(budget), budget / 6 / _optimum(budget))
        lo_c, hi_c = budget * 1e-3, budget  # bisection for the budget at which the optimum reaches the plan's loss
        for _ in range(200):
            mid = math.sqrt(lo_c * hi_c)
            lo_c, hi_c = (mid, hi_c) if _loss(_optimum(mid), mid / 6 / _optimum(mid)) > target else (lo_c, mid)
        return (target / best - 1) * 100, (1 - lo_c / budget) * 100

    rows = [gap_and_saving(b) for b in (1e18, 1e20, c, 1e24, 1e26)]
    assert _near(rows[2][0], "0.29") and all(g1 > g2 for (g1, _), (g2, _) in pairwise(rows))  # the gap shrinks
    assert all(_near(s, "7") and s == pytest.approx(rows[2][1], rel=1e-9) for _, s in rows)  # the saving does not


def test_review3_n2_recomputation_is_priced_into_the_mfu_not_left_out_of_6nd() -> None:
    notes = _flat(DECKS["lesson"].slide(31).notes)
    assert "attention's FLOPs at long context and recomputation" not in notes
    assert "Recomputation is not a missing term" in notes and "lower MFU" in notes and "Chowdhery et al. 2022" in notes


def test_review3_n3_an_all_equal_group_is_zero_over_zero_without_epsilon() -> None:
    import numpy as np

    r = np.array([1.0, 1.0, 1.0, 1.0])
    centred, std = r - r.mean(), r.std()
    with np.errstate(invalid="ignore"):
        assert np.isnan(centred / (std + 0.0)).all()  # epsilon = 0: 0/0
    assert (centred / (std + 1e-4) == 0).all()  # TRL's std + 1e-4: exactly 0
    for deck, n in (("interview", 4), ("lesson", 33)):
        slide = DECKS[deck].slide(n)
        notes = _flat(slide.notes)
        assert "0/0" in notes and "std + 1e-4" in notes and slide.state["eps"] in ("0", 0, 0.0)
    lesson = DECKS["lesson"].slide(33)
    _, view = rendered(lesson)
    assert not [r for r in lesson.shown_readouts(view) if r.label.startswith("Scale")]  # 1/(0 + 0) is not 0


def test_review3_n4_slide_1_names_the_fit_once() -> None:
    notes = _flat(DECKS["lesson"].slide(1).notes)
    assert notes.count("fit drawn") == 1 and "rounded constants" in notes


# ---------------------------------------------------------------------- the fourth review of the decks
def test_review4_n2_an_all_equal_group_leaves_only_a_kl_term_where_the_loss_has_one() -> None:
    for deck, n in (("interview", 4), ("lesson", 33)):
        notes = _flat(DECKS[deck].slide(n).notes)
        assert "where the loss has one" in notes and "DAPO" in notes and "TRL" in notes, f"{deck} slide {n}"
    assert "Shao et al. 2024: β = 0.04" in _flat(DECKS["interview"].slide(4).notes)


def test_review4_n3_the_rate_is_mfu_times_peak_not_the_mfu() -> None:
    notes = _flat(DECKS["lesson"].slide(31).notes)
    assert "the achieved rate, the MFU" not in notes and "achieved rate, MFU × peak FLOP/s" in notes
