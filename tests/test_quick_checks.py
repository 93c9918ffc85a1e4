"""The multiple-choice quick checks of the pages the lecture decks use (each view's ``QUICK_CHECK``, a
:class:`views.QuickCheck`): each has 2 to 5 options; every number of every option is checked against an independent
computation written here, the right option's against the truth and each distractor's against the wrong computation
it stands for (the mistake is named beside it), or allowed with a reason; the right option is not always the same
letter; and the page draws it: the options under the question, nothing chosen, the revealed answer naming the right
option first, and with ``?hide=true`` the options still there but neither the right one's name nor the answer sent.

The numbers are compared as tests/test_page_numbers.py compares a page's (``check_page``: at the printed precision,
every number of the option covered). The computations use the standard library, fractions and scipy, never core.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from itertools import product

import numpy as np
import pytest
from google.protobuf.json_format import MessageToDict
from scipy import stats

from tests.apptest import _elements, no_exception, open_page, opened
from tests.page_numbers import Ref, check_page
from views import QuickCheck, catalog

# The pages the lecture decks use, by URL name (views/catalog.py maps each to its script and view module).
DECK_PAGES = (
    "Attention", "Calibration", "Distillation", "Evaluation", "FlashAttention", "GRPO", "KL_leash", "LoRA",
    "Loss_and_units", "MoE", "Number_formats", "Optimizers", "PPO", "Policy_gradient", "Positions", "Scaling_laws",
    "Test_time_compute", "Training_lab", "Training_memory",
)  # fmt: skip
RIGHT = "the right answer"
GIVEN = "an input the question states"
COUNT = "a count the question states"


@dataclass(frozen=True)
class Option:
    """One option of a quick check: words it must contain (to tie the entry to its option), what it is (``RIGHT``, or
    the mistake a learner makes to reach it), and for each of its numbers in order an independent value in the
    printed unit or the reason it needs none."""

    says: str
    what: str
    values: tuple[float | str, ...]

    def __init__(self, says: str, what: str, *values: float | str) -> None:
        object.__setattr__(self, "says", says)
        object.__setattr__(self, "what", what)
        object.__setattr__(self, "values", values)


# ------------------------------------------------------------------------------------------ independent computations
def kv_cache(layers: int, kv_heads: int, head_dim: int, tokens: int, k_and_v: int = 2, width: int = 2) -> float:
    """Bytes of a KV cache: K and V for every layer, KV head and token, ``width`` bytes a value (bf16: 2)."""
    return k_and_v * layers * kv_heads * head_dim * width * tokens


def sigmoid(x: float) -> float:
    return 1 / (1 + math.exp(-x))


def flash_ratio(m: float, d: int) -> float:
    """Standard attention's HBM traffic over Algorithm 1's at long N, counted exactly: 4M/((12 + 16/d)·d²)."""
    return 4 * m / ((12 + 16 / d) * d * d)


def clipped_slope(rho: float, adv: float, eps: float = 0.2, clip_only: bool = False, pick=min) -> float:
    """d/dρ of PPO's min(ρA, clip(ρ, 1 − ε, 1 + ε)A) by a central difference; ``clip_only``: of clip(ρ)A alone;
    ``pick=max``: of the optimistic max instead of the min."""

    def objective(r: float) -> float:
        clipped = min(max(r, 1 - eps), 1 + eps) * adv
        return clipped if clip_only else pick(r * adv, clipped)

    h = 1e-6
    return round((objective(rho + h) - objective(rho - h)) / (2 * h), 9)


def group_mean_factor(G: int, leave_one_out: bool, p: float = 0.3, rewards: tuple[float, float] = (1.0, 0.0)) -> float:
    """The expected update over the true gradient for a two-action bandit with π(a₀) = sigmoid(θ), G draws per prompt,
    each draw's advantage its reward minus the mean of all G rewards (or of the other G − 1: RLOO), by enumerating
    every outcome of the G draws exactly."""
    score = (1 - p, -p)  # d/dθ log π(a) for a = a₀, a₁
    true = p * (1 - p) * (rewards[0] - rewards[1])  # dJ/dθ
    expected = 0.0
    for draws in product((0, 1), repeat=G):
        prob = math.prod(p if a == 0 else 1 - p for a in draws)
        r = [rewards[a] for a in draws]
        total = sum(r)
        base = [(total - r[i]) / (G - 1) if leave_one_out else total / G for i in range(G)]
        expected += prob * sum((r[i] - base[i]) * score[a] for i, a in enumerate(draws)) / G
    return expected / true


def rope_wavelengths(base: float, d: int, two_pi: bool = True, last_exponent: int | None = None) -> np.ndarray:
    """Each pair's wavelength in tokens, (2π·) base^(2i/d) for i = 0 … d/2 − 1 (the exponent's numerator 2i)."""
    two_i = np.arange(0, d, 2, dtype=float)
    if last_exponent is not None:
        two_i[-1] = last_exponent
    return (2 * math.pi if two_pi else 1.0) * base ** (two_i / d)


def capacity(cf: float, tokens: int, k: int, experts: int) -> int:
    """Slots per expert: ⌈cf · T · k / E⌉ (Switch Transformer's capacity, with k assignments per token)."""
    return math.ceil(Fraction(str(cf)) * tokens * k / experts)


def bf16_sum(x: float, y: float) -> float:
    """x + y rounded to bf16's grid near x in [1, 2): steps of 2⁻⁷, to nearest."""
    return x + round(y / 2**-7) * 2**-7


def samples_for(p: float, target: float) -> int:
    """The fewest n with 1 − (1 − p)ⁿ ≥ target (a perfect verifier picks any right sample)."""
    return next(n for n in range(1, 10_000) if 1 - (1 - p) ** n >= target)


# ------------------------------------------------------------------------------------------------ the inputs of each
L70 = (80, 8, 128)  # the attention check's layers, KV heads and head dimension
L70_QUERY_HEADS = 64  # the question's query heads (Llama-3-70B's): the distractor that sizes the cache by them
CTX = 32_768
GIB, MIB = 2**30, 2**20
SE = math.sqrt(0.7 * 0.3 / 1000)  # the evaluation check: 70% on 1,000 questions
M = 100 * 1024 // 2  # 100 KiB of SRAM in 2-byte fp16 values
TOY_BETA = 0.5  # the KL check: π_ref = (0.5, 0.5), rewards (1, 0), β halved to 0.5
MOE = (1.25, 512, 2, 8)  # cf, T, k, E
BETAS = (0.9, 0.98)
EPS = 0.2
G = 8
LAM = rope_wavelengths(500_000, 128)
BYTES = {"weights": 2, "gradients": 2, "optimizer": 4 + 4 + 4}  # bf16, bf16, fp32 master + Adam's m and v
WORLD = 8
P_TTC = 0.1


def per_gpu_gb(sharded: tuple[str, ...]) -> float:
    """GB of model states per GPU for the 7B check when the states named in ``sharded`` are split over 8 GPUs."""
    return sum(b / WORLD if name in sharded else b for name, b in BYTES.items()) * 7e9 / 1e9


CHECKS: dict[str, list[Option]] = {
    "Attention": [
        Option("MiB", "counted one layer, not 80", kv_cache(1, L70[1], L70[2], CTX) / MIB),
        Option("5 GiB", "forgot the factor 2 for K and V", kv_cache(*L70, CTX, k_and_v=1) / GIB),
        Option("10 GiB", RIGHT, kv_cache(*L70, CTX) / GIB),
        Option("80 GiB", "sized with the 64 query heads (MHA), not the 8 KV heads",
               kv_cache(L70[0], L70_QUERY_HEADS, L70[2], CTX) / GIB),
    ],
    "Calibration": [  # accuracy 0.72 below the stated 0.9 (a gap of 0.18): overconfident
        Option("Underconfident; 0.9 becomes 0.99", "both backwards: the direction, and the logit multiplied by T",
               GIVEN, float(Fraction(81, 82))),  # odds 9² = 81
        Option("Overconfident; 0.9 becomes 0.75", RIGHT, GIVEN, sigmoid(math.log(0.9 / 0.1) / 2)),
        Option("Underconfident; 0.9 becomes 0.75", "the direction backwards: accuracy below confidence is "
               "overconfidence", GIVEN, sigmoid(math.log(0.9 / 0.1) / 2)),
        Option("Overconfident; 0.9 becomes 0.99", "multiplied the logit by T (read T = 2 as sharpening)", GIVEN,
               float(Fraction(81, 82))),  # odds 9² = 81
    ],
    "Distillation": [
        Option("Reverse KL(q‖p): on one mode", RIGHT),
        Option("Forward KL(p‖q): on one mode", "the two directions backwards"),
        Option("Both between them", "took both fits as matching the teacher's mean (only the forward one does)"),
        Option("Both on one mode", "took both fits as mode-seeking (the forward one must cover every mode)"),
    ],
    "Evaluation": [
        Option("2.8", "gave the 95% interval's half-width (1.96 SE), not the standard error",
               100 * stats.norm.ppf(0.975) * SE),
        Option("0.046", "divided the per-question std by N instead of √N", 100 * math.sqrt(0.7 * 0.3) / 1000),
        Option("46", "gave one question's std, √(p(1 − p)), not the mean's", 100 * math.sqrt(0.7 * 0.3)),
        Option("1.4", RIGHT, 100 * SE),
    ],
    "FlashAttention": [
        Option("12.5×", "read Theorem 2's Θ(N²d²/M) as the ratio, M/d², dropping its constants",
               M / 64**2, GIVEN, M / 128**2, GIVEN),
        Option("8.2×", "counted M in bytes (102,400), not in fp16 values", flash_ratio(2 * M, 64), GIVEN,
               flash_ratio(2 * M, 128), GIVEN),
        Option("4.1×", RIGHT, flash_ratio(M, 64), GIVEN, flash_ratio(M, 128), GIVEN),
    ],
    "GRPO": [
        Option("None: every advantage is 0", RIGHT, float(np.abs(np.ones(4) - np.ones(4).mean()).max())),
        Option("A positive one", "no baseline, or the batch's mean (an easy prompt's answers then score above it)",
               COUNT),
        Option("drop the std (Dr. GRPO)", "credited the std with removing the signal: r − mean is 0 before any "
               "division"),
    ],
    "KL_leash": [
        Option("0.622", "wrote exp(β·r) for exp(r/β): halving β then loosens nothing", sigmoid(TOY_BETA * 1.0)),
        Option("0.881", RIGHT, sigmoid(1.0 / TOY_BETA)),
        Option("0.962", "doubled the probability's shift from 0.5, not the log-odds", 0.5 + 2 * (sigmoid(1.0) - 0.5)),
    ],
    "LoRA": [
        Option("trains as usual", "took the zero start (ΔW = 0) as all that matters"),
        Option("Only B trains", "the usual init's behaviour (A random): with A = 0, B's gradient s·g·(Ax)ᵀ is 0 too"),
        Option("Only A trains", "forgot that A's gradient s·Bᵀ·g·xᵀ carries B, which is 0"),
        Option("Nothing trains", RIGHT, 0.0),  # both gradients, written out in test_lora_zero_start_has_no_gradient
    ],
    "Loss_and_units": [
        Option("Perplexity doubles; bits per byte do not",
               "read perplexity as linear in the loss per token (it is its exponential)"),
        Option("Neither changes", "took perplexity from the total loss, not the loss per token"),
        Option("squared; bits per byte do not", RIGHT),
        Option("squared; bits per byte double", "divided the doubled loss per token by the old bytes per token"),
        Option("Perplexity doubles; bits per byte double", "both: perplexity read as linear in the loss per token, "
               "and the doubled loss per token divided by the old bytes per token"),
    ],
    "MoE": [
        Option("128 per expert", "forgot the capacity factor", capacity(1.0, 512, 2, 8),
               8 * capacity(1.0, 512, 2, 8)),
        Option("160 per expert", RIGHT, capacity(*MOE), 8 * capacity(*MOE)),
        Option("80 per expert", "counted tokens, not top-2 assignments (forgot k)", capacity(1.25, 512, 1, 8),
               8 * capacity(1.25, 512, 1, 8)),
        Option("40 per expert", "divided by k instead of multiplying", math.ceil(1.25 * 512 / (2 * 8)),
               8 * math.ceil(1.25 * 512 / (2 * 8))),
    ],
    "Number_formats": [
        Option("2⁻⁷ = 0.0078125; no", RIGHT, "the power's base (2⁻⁷: 7 stored mantissa bits)", 2.0**-7,
               bf16_sum(1.0, 0.003)),
        Option("2⁻⁸", "took the unit roundoff 2⁻⁸, half the spacing, for the spacing (0.003 is above half of it)",
               "the power's base", 2.0**-8, GIVEN),
        Option("2⁻¹⁰", "took fp16's 10 mantissa bits for bf16's 7", "the power's base", 2.0**-10),
    ],
    "Optimizers": [
        Option("1 η", "the bias-corrected first step (m̂/√v̂ = g/|g|), not the uncorrected one", 1.0),
        Option("5 η", "forgot the square root of v", (1 - BETAS[0]) / (1 - BETAS[1])),
        Option("0.71 η", RIGHT, (1 - BETAS[0]) / math.sqrt(1 - BETAS[1])),
        Option("3.16 η", "quoted the step at β2 = 0.999, the usual default, not at 0.98",
               (1 - BETAS[0]) / math.sqrt(1 - 0.999)),
    ],
    "PPO": [
        Option("−1.3 for A = −1", "gave ρ·A, the factor of ∇_θ log π in θ, not the derivative in ρ",
               clipped_slope(1.3, 1.0), GIVEN, 1.3 * -1.0, GIVEN),
        Option("+1 for A = +1; 0 for A = −1", "the flat side on the wrong sign of A: the max of the terms, not the min",
               clipped_slope(1.3, 1.0, pick=max), GIVEN, clipped_slope(1.3, -1.0, pick=max), GIVEN),
        Option("0 for both", "clip(ρ)·A without the min", clipped_slope(1.3, 1.0, clip_only=True), 1 - EPS, 1 + EPS),
        Option("0 for A = +1; −1 for A = −1", RIGHT, clipped_slope(1.3, 1.0), GIVEN, clipped_slope(1.3, -1.0), GIVEN),
    ],
    "Policy_gradient": [
        Option("Exactly ∇J; RLOO gives 7/8", "swapped the two: the group mean holds the answer's own reward, RLOO's "
               "mean does not", G - 1, G),
        Option("7/8 of ∇J; RLOO gives exactly", RIGHT, G - 1, G),  # the factor, test_group_mean_factors
        Option("8/7", "inverted the factor", G, G - 1),
        Option("RLOO gives 7/8", "took RLOO's leave-one-out mean as shrinking the gradient too", G - 1, G, G - 1, G),
    ],
    "Positions": [
        Option("2.56 million tokens; 29", RIGHT, LAM[-1] / 1e6, int((LAM > 8192).sum()), len(LAM)),
        Option("3.14 million", "took the last exponent as d/d = 1, not (d − 2)/d (pairs i = 0 … 63)",
               rope_wavelengths(500_000, 128, last_exponent=128)[-1] / 1e6, int((LAM > 8192).sum()), len(LAM)),
        Option("35 of the 64", "gave the first pair index above 8,192 (i = 35), not the count from it to 63",
               LAM[-1] / 1e6, int(np.argmax(LAM > 8192)), len(LAM)),
        Option("0.41 million tokens; 35 of", "forgot the 2π (1/θ is not a wavelength), and gave the first pair index "
               "above 8,192 (i = 35), not the count", rope_wavelengths(500_000, 128, two_pi=False)[-1] / 1e6,
               int(np.argmax(LAM > 8192)), len(LAM)),
    ],
    "Scaling_laws": [
        Option("6×10²⁰", RIGHT, 6 * 1e9 * 100e9),
        Option("2×10²⁰", "counted the forward pass only (2N per token)", 2 * 1e9 * 100e9),
        Option("3×10²⁰", "counted a multiply-add as one FLOP (fvcore's convention), not the question's 2",
               6 * 1e9 * 100e9 / 2),
    ],
    "Test_time_compute": [
        Option("10", "took 1/p, the expected number of draws to the first success", 1 / P_TTC),
        Option("22", RIGHT, samples_for(P_TTC, 0.9)),
        Option("9", "added the probabilities: n·p ≥ 0.9", 0.9 / P_TTC),
        Option("21", "rounded ln 0.1 / ln 0.9 = 21.9 down (1 − 0.9²¹ = 0.89)",
               math.floor(math.log(0.1) / math.log(0.9))),
    ],
    "Training_lab": [
        Option("learned all it can", "read the plateau as capacity: any context beats the bytes' frequencies"),
        Option("Nothing learns at all", "the plateau at 8 bits (uniform), not at 4.80"),
        Option("by its frequency alone: check the LR", RIGHT),
        Option("overfits", "read a training-loss plateau as overfitting"),
    ],
    "Training_memory": [
        Option("112 GB", "forgot that ZeRO-1 shards the optimizer states", per_gpu_gb(())),
        Option("14 GB", "sharded weights and gradients too (ZeRO-3)", per_gpu_gb(tuple(BYTES))),
        Option("26.25 GB", "sharded the gradients too (ZeRO-2)", per_gpu_gb(("gradients", "optimizer"))),
        Option("38.5 GB", RIGHT, per_gpu_gb(("optimizer",))),
    ],
}  # fmt: skip


def _entry(url: str) -> catalog.Entry:
    return next(e for e in catalog.PAGES if e.url == url)


def _check(url: str) -> QuickCheck:
    return catalog.view_module(url).QUICK_CHECK


# -------------------------------------------------------------------------------------------------- the checks' data
def test_every_deck_page_is_listed_and_draws_a_view() -> None:
    assert set(CHECKS) == set(DECK_PAGES)
    assert all(_entry(url).view for url in DECK_PAGES)


@pytest.mark.parametrize("url", DECK_PAGES)
def test_the_view_holds_a_multiple_choice_check(url: str) -> None:
    check = _check(url)
    assert isinstance(check, QuickCheck) and 2 <= len(check.options) <= 5
    assert check.question.strip() and check.answer.strip()
    assert all(len(o) <= 90 for o in check.options), [o for o in check.options if len(o) > 90]


@pytest.mark.parametrize("url", DECK_PAGES)
def test_every_number_of_every_option_is_the_truth_or_the_mistake_it_stands_for(url: str) -> None:
    check, table = _check(url), CHECKS[url]
    assert len(table) == len(check.options), url
    assert [i for i, o in enumerate(table) if o.what == RIGHT] == [check.right], url  # one right option, the view's
    problems = []
    for letter, (text, option) in zip("ABCDE", zip(check.options, table, strict=True), strict=False):
        assert option.says in text, (url, letter, option.says, text)
        problems += [f"{letter} ({option.what}): {p}" for p in check_page([text], [Ref(text, *option.values)])]
    assert not problems, f"{url}:\n" + "\n".join(problems)


def test_the_right_option_is_not_always_the_same_letter() -> None:
    rights = [_check(url).right for url in DECK_PAGES]
    counts = np.bincount(rights)
    assert len(set(rights)) >= 3 and counts.max() <= len(rights) // 2, rights


def test_group_mean_factors() -> None:
    """The policy-gradient check's factors, exactly: the group mean's expected update is (G − 1)/G of the true
    gradient, RLOO's all of it (a two-action bandit, every outcome of G = 8 draws enumerated)."""
    assert group_mean_factor(G, leave_one_out=False) == pytest.approx((G - 1) / G, abs=1e-12)
    assert group_mean_factor(G, leave_one_out=True) == pytest.approx(1.0, abs=1e-12)


def test_lora_zero_start_has_no_gradient() -> None:
    """The LoRA check: with A = B = 0, ∂L/∂B = s·g·(Ax)ᵀ and ∂L/∂A = s·Bᵀ·g·xᵀ are both 0 for any upstream gradient
    g, and ΔW = BA stays 0, so the next step starts from the same place."""
    rng = np.random.default_rng(0)
    x, g = rng.standard_normal((5, 3)), rng.standard_normal((6, 3))  # 3 inputs of width 5; upstream gradients
    a, b, s = np.zeros((2, 5)), np.zeros((6, 2)), 2.0
    assert not (s * g @ (a @ x).T).any() and not (s * b.T @ g @ x.T).any() and not (b @ a).any()


def test_the_wrong_fits_and_roundings_are_wrong() -> None:
    """Each distractor is wrong under the question's assumptions, not just another reading of it: 21 samples fall
    short of 90%; bf16's 1 + 0.003 is 1; the PPO token's slopes are 0 and −1."""
    assert 1 - 0.9**21 < 0.9 <= 1 - 0.9**22
    assert bf16_sum(1.0, 0.003) == 1.0 and bf16_sum(1.0, 0.004) == 1 + 2**-7
    assert (clipped_slope(1.3, 1.0), clipped_slope(1.3, -1.0)) == (0.0, -1.0)


# ----------------------------------------------------------------------------------------------------- on the page
def _radio(at):
    (radio,) = [r for r in at.radio if (r.key or "").startswith("quick-check-")]
    return radio


def _sent(at) -> str:
    """Every string the page sent (figures included), the quick check's options among them."""
    out: list[str] = []

    def strings(node: object) -> None:
        if isinstance(node, str):
            out.append(node)
        elif isinstance(node, dict):
            for v in node.values():
                strings(v)
        elif isinstance(node, list):
            for v in node:
                strings(v)

    for node in _elements(at._tree):
        if getattr(node, "proto", None) is not None:
            strings(MessageToDict(node.proto))
    return "\n".join(out)


@pytest.mark.parametrize("url", DECK_PAGES)
def test_the_page_shows_the_options_and_reveals_the_right_one(url: str) -> None:
    check, at = _check(url), opened(_entry(url).script)
    assert no_exception(at)
    letters = [f"{chr(65 + i)}. {o}" for i, o in enumerate(check.options)]
    radio = _radio(at)
    assert list(radio.options) == letters and radio.value is None  # nothing chosen until the reader picks
    assert check.question in [m.value for m in at.markdown]
    (reveal,) = [e for e in at.expander if e.label == "Reveal the answer"]
    assert [m.value for m in reveal.markdown] == [f"**{letters[check.right]}**", check.answer]


@pytest.mark.parametrize("url", DECK_PAGES)
def test_hide_true_sends_the_options_but_not_the_answer(url: str) -> None:
    check, at = _check(url), opened(_entry(url).script, {"hide": "true"})
    assert no_exception(at)
    assert list(_radio(at).options) == [f"{chr(65 + i)}. {o}" for i, o in enumerate(check.options)]
    assert "Reveal the answer" not in [e.label for e in at.expander]
    sent = _sent(at)
    assert f"**{chr(65 + check.right)}. " not in sent
    assert check.answer[:60] not in sent and check.answer[-60:] not in sent


def test_a_choice_is_the_readers_scratch_not_page_state() -> None:
    """Picking an option reruns the page without an error and without touching the link: the choice is a reader's
    scratch answer, not a control of the page (the link shares a state, not a guess)."""
    at = open_page(_entry("Calibration").script)
    link = dict(at.query_params)
    _radio(at).set_value(_radio(at).options[0]).run()
    assert no_exception(at) and dict(at.query_params) == link
    assert _radio(at).value == _radio(at).options[0]
