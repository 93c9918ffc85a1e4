"""Every number a lesson page's texts quote (takeaway, equation, explanation, quick check, interview answer, common
mistakes, captions: tests/page_numbers.py says which texts) at the page's defaults is either

(a) matched at its printed precision (half a unit in its last digit) by an independent reference written here: a
    formula from the paper, scipy, fractions, or the plain references of tests/card_references.py (which import no
    project module), never the core function that produced it; or
(b) allowed with a reason: a count or a name ("approach 3", "Llama 3 8B"), a source's own number (a paper's
    measurement, cited), an input the text states as given, a constant of a formula. Where a number would need a
    whole toy re-implemented (a trained model's output), the reason names the existing test that covers it.

The tables are per page: ``Ref(passage, value or reason, ...)``, one value per number of the passage in order. A
number of the page with neither fails the test with its page and context; a passage the page no longer holds fails
too (the text changed: update the table).
"""

from __future__ import annotations

import math

import pytest
from scipy import stats

from tests import card_references as ref
from tests.page_numbers import Ref, check_page, page_texts

# ------------------------------------------------------------------------------------------------- shared reasons
CITE = "a source's own number, cited beside it"
NAME = "part of a name (a model, a GPU, a method, an approach of Hoffmann et al.)"
FORMULA = "a constant of the formula written beside it"
GIVEN = "an input the text states as given"
FACTOR = "the factor the sentence is about (its input)"
COUNT = "a count or an ordinal of the text"
H100_PEAK = 989e12  # NVIDIA H100 SXM dense bf16 peak, FLOP/s (data sheet)

# fmt: off
# ============================================================================ 1. Scaling laws (default C = 1.2e21)
C1 = 1.2e21
H, EP = "hoffmann2022", "epoch2024"


def _worse_loss_excess(C: float, f: float) -> float:
    return max(ref.loss_excess_pct(C, f), ref.loss_excess_pct(C, 1 / f))


def _worse_waste(C: float, f: float) -> float:
    return max(ref.compute_waste_pct(C, f), ref.compute_waste_pct(C, 1 / f))


SCALING = [
    Ref("D = C/(6N) tokens", FORMULA),
    Ref("Hoffmann et al.'s approach 3); the square is the \"20 tokens per parameter\" rule of thumb, N = √(C/120)",
        NAME, "the rule's 20 tokens per parameter (Hoffmann et al. 2022, approaches 1-2)", 6 * 20),
    Ref("a model 2× off the optimum loses 0.6% in loss and one 3× off 1.6%",
        FACTOR, _worse_loss_excess(C1, 2), FACTOR, _worse_loss_excess(C1, 3)),
    Ref("a model 2× off with 14% less compute, and that of one 3× off with 31% less",
        FACTOR, _worse_waste(C1, 2), FACTOR, _worse_waste(C1, 3)),
    Ref("(2N FLOPs per generated token", FORMULA),
    Ref("(Chinchilla, approach 3) wants 51 tokens per parameter", NAME, ref.tokens_per_param_opt(C1, H)),
    Ref("(Epoch AI replication) fit 21", ref.tokens_per_param_opt(C1, EP)),
    Ref("\"About 20 tokens per parameter\" comes from Hoffmann et al.'s approaches 1 and 2", CITE, NAME, NAME),
    Ref("Epoch AI's refit of approach 3 (Besiroglu et al. 2024: 18 to 23 between 10²⁰ and 10²⁴ FLOPs)",
        NAME, ref.tokens_per_param_opt(1e24, EP), ref.tokens_per_param_opt(1e20, EP), GIVEN, GIVEN),
    Ref("The published approach-3 constants", NAME),
    Ref("44 at 2.7×10²⁰ FLOPs, 51 at 1.2×10²¹ and 93 at Chinchilla's own 5.9×10²³",
        ref.tokens_per_param_opt(2.7e20, H), GIVEN, ref.tokens_per_param_opt(1.2e21, H), GIVEN,
        ref.tokens_per_param_opt(5.88e23, H), "Chinchilla's budget, 5.88e23 FLOPs (Hoffmann et al. 2022, Table 3)"),
    Ref("its optimum at Chinchilla's budget (5.88×10²³) is 32.5B parameters, well under the 70B",
        "Chinchilla's budget (Hoffmann et al. 2022, Table 3)", ref.n_opt(5.88e23, H), "Chinchilla's size (ibid.)"),
    Ref("for Gopher's budget (5.76×10²³, where these constants give 32.2B), about 40B from approach 3 and 63B to 67B "
        "from approaches 1 and 2, concluded that the optimum lies between 40B and 70B, and trained 70B",
        "Gopher's budget (Hoffmann et al. 2022, Table 3)", ref.n_opt(5.76e23, H), *[CITE] * 9),
    Ref("section 4", "the paper's section"),
    Ref("their refit puts the optimum at Chinchilla's budget at 73.0B and agrees with approaches 1 and 2",
        ref.n_opt(5.88e23, EP), NAME, NAME),
    Ref("Quote 20 tokens per parameter", "the rule of thumb the page explains (Hoffmann et al. 2022)"),
    Ref("approach-3 curve", NAME),
    Ref("A model with **1B parameters** is trained on **100B tokens**", GIVEN),
    Ref("C ≈ 6·N·D = 6 · 10⁹ · 10¹¹ = **6×10²⁰ FLOPs** (set C = 6e20 and N = 1e9 to see it: 100 tokens per parameter",
        FORMULA, FORMULA, GIVEN, GIVEN, ref.training_flops(1e9, 1e11), ref.training_flops(1e9, 1e11), GIVEN,
        1e11 / 1e9),
    Ref("the Hoffmann fit's minimum at 1.45B parameters", ref.n_opt(6e20, H)),
    Ref("far past 20 tokens per parameter", "the rule of thumb (Hoffmann et al. 2022)"),
    Ref("approaches 1 and 2 (and Epoch AI's refit of their approach 3", NAME),
    Ref("put the optimum near 20 tokens per parameter", "the rule of thumb (Hoffmann et al. 2022)"),
    Ref("Eight H100s for a day at 40% MFU give 2.7×10²⁰ FLOPs: about a 1.5B model on 30B tokens by the 20-tokens rule",
        GIVEN, ref.hardware_flops(8, 24, H100_PEAK, 0.4), ref.rule_n(2.7e20), ref.rule_d(2.7e20), "the rule's 20"),
    Ref("(the published approach-3 fit drawn here says 1.01B on 44 tokens per parameter",
        NAME, ref.n_opt(2.7e20, H), ref.tokens_per_param_opt(2.7e20, H)),  # at the budget the sentence states
    Ref("Llama 3 8B on 15T tokens (~1,900 tokens per parameter)", NAME, NAME, GIVEN, 15e12 / 8e9),
    Ref("with 50% of its compute under Hoffmann's fit (18% under Epoch's)",
        100 * ref.compute_share_same_loss(8e9, 15e12, H), 100 * ref.compute_share_same_loss(8e9, 15e12, EP)),
    Ref("serving costs 2N FLOPs", FORMULA),
    Ref("still improving log-linearly at 15T tokens (Meta 2024, the Llama 3 announcement)", CITE, NAME),
    Ref("Treating 20 tokens per parameter as a law", "the rule of thumb the mistake names"),
    Ref("approaches 1 and 2 (and Epoch AI's refit), a training-compute optimum", NAME),
    Ref("the published approach-3 fit itself drifts", NAME),
    Ref("from 40 to 98 tokens per parameter between 10²⁰ and 10²⁴ FLOPs",
        ref.tokens_per_param_opt(1e20, H), ref.tokens_per_param_opt(1e24, H), GIVEN, GIVEN),
    Ref("Forgetting what 6ND leaves out", FORMULA),
    Ref("activation recomputation (8N instead of 6N per token). And 6ND counts FLOPs",
        "8 = 6 + 2: one more forward pass of 2N (Chinchilla's convention)", FORMULA, FORMULA),
    Ref("Kaplan's N ∝ C^0.73", "Kaplan et al. 2020's exponent, the source's number"),
    Ref("about 16 bytes per parameter", ref.ADAM_MIXED_BYTES_PER_PARAM),
    Ref("D = \\frac{C}{6N}", FORMULA),
    Ref("N_{\\text{opt}} = G\\left(\\frac{C}{6}\\right)", FORMULA),
    Ref("\\frac{1}{\\alpha+\\beta}", FORMULA),
    Ref("C \\approx 6ND,\\qquad N_{\\text{opt}} \\approx \\sqrt{C/120}", FORMULA, 6 * 20),
    Ref("Hoffmann et al. 2022 (Chinchilla, approach 3)", NAME),
]

# ============================================================================ 2. KL leash (default: the lesson's toy)
TOY = ((0.5, 0.5), (1.0, 0.0))  # pi_ref and rewards of the lesson's two-answer toy

KL = [
    Ref("β sets the leash (its length is 1/β)", FORMULA),
    Ref("so its length is 1/β", FORMULA),
    Ref("the KL term charges about log(1/π_ref(y)) nats", FORMULA),
    Ref("the leash's length is 1/β", FORMULA),
    Ref("an answer with π_ref = 0 stays at 0 for every β", GIVEN, ref.kl_policy((0.0, 1.0), (3.0, 0.0), 0.1, 0)),
    Ref("In the lesson's toy (π_ref = (0.5, 0.5), rewards (1, 0)), β = 1 gives π* = (0.731, 0.269). "
        "**Halve β to 0.5.**",
        GIVEN, GIVEN, GIVEN, GIVEN, GIVEN, ref.kl_policy(*TOY, 1.0, 0), ref.kl_policy(*TOY, 1.0, 1), GIVEN),
    Ref("π* ∝ (0.5·e², 0.5·e⁰), so π*(better) = e²/(e² + 1) = **0.881**",
        GIVEN, GIVEN, FORMULA, ref.kl_policy(*TOY, 0.5, 0)),
    Ref("Set β = 0.5 in the sidebar", GIVEN),
    Ref("Two equally likely answers scored 1 and 0: β = 1 gives (0.73, 0.27), β = 0.5 already 0.88 on the better one; "
        "as β → 0", GIVEN, GIVEN, GIVEN, ref.kl_policy(*TOY, 1.0, 0), ref.kl_policy(*TOY, 1.0, 1), GIVEN,
        ref.kl_policy(*TOY, 0.5, 0), "the limit the sentence names"),
    Ref("(exactly 0 stays 0 over a fixed set of answers)", GIVEN, ref.kl_policy((0.0, 1.0), (3.0, 0.0), 0.1, 0)),
    Ref("costs about log(1/π_ref) nats of KL (about 23 nats for one in 10¹⁰)", FORMULA, math.log(1e10), GIVEN),
    Ref("\\pi^*(y) = \\frac{1}{Z(x)}", FORMULA),
]

# ============================================================================ 3. LoRA (default: Llama-2-7B, r = 8)
NF4_BITS = float(ref.BITS_PER_PARAM["nf4"])
ALL_LINEAR = ("q", "k", "v", "o", "gate", "up", "down")
QLORA_65B_GB = ref.lora_memory("LLaMA-65B", ALL_LINEAR, 64, "lora_total_bytes", "nf4") / 1e9
QKVO = ("q", "k", "v", "o")

LORA = [
    Ref("Training them with Adam costs about 16 bytes each; the frozen base costs 2 bytes per parameter in bf16, or "
        "4.127 bits (0.516 bytes) in QLoRA's NF4 with double quantisation: 4 bits per weight, an fp8 absmax per block "
        "of 64 weights (0.125 bits) and an fp32 constant per 256 blocks (0.002 bits)",
        ref.ADAM_MIXED_BYTES_PER_PARAM, float(ref.BITS_PER_PARAM["bf16"]) / 8, NF4_BITS, NF4_BITS / 8,
        "NF4's code width (Dettmers et al. 2023)", "QLoRA's block size (Dettmers et al. 2023)", 8 / 64,
        "QLoRA's second-level block (Dettmers et al. 2023)", 32 / (64 * 256)),
    Ref("Full fine-tuning needs 16 bytes per parameter", ref.ADAM_MIXED_BYTES_PER_PARAM),
    Ref("beside the 16-bytes-per-parameter estimate", ref.ADAM_MIXED_BYTES_PER_PARAM),
    Ref("the QLoRA preset's 46.3 GB leaves 1.7 GB of a 48 GB GPU", QLORA_65B_GB, 48 - QLORA_65B_GB,
        "the QLoRA paper's single 48 GB GPU (Dettmers et al. 2023)"),
    Ref("for GPT-3 175B with r = 4 on W_q and W_v, training memory down from 1.2 TB to 350 GB, a 35 MB checkpoint "
        "instead of 350 GB, and 25% faster training", CITE),
    Ref("With B = 0 and A random, ΔW = 0 at the start and B gets a gradient at once; with A = B = 0 both gradients",
        GIVEN, 0.0, GIVEN),
    Ref("so B = 0 silences A's gradient for one step only, while A = B = 0", GIVEN, GIVEN),
    Ref("with **A = 0 and B = 0**", GIVEN, GIVEN),
    Ref("is zero because A = 0, and ∂L/∂A = s Bᵀ g xᵀ is zero because B = 0", GIVEN, GIVEN),
    Ref("The start is right (ΔW = 0), but one factor must be non-zero: B = 0 with A random", 0.0, GIVEN),
    Ref("Llama-2-7B, r = 8 on q, k, v, o: 8,388,608 trainable parameters (0.12%), 134 MB of training states against "
        "112 GB for full fine-tuning; the frozen bf16 base is 14 GB",
        NAME, NAME, GIVEN, ref.lora_memory("Llama-2-7B", QKVO, 8, "trainable"),
        ref.lora_memory("Llama-2-7B", QKVO, 8, "share_pct"),
        ref.lora_memory("Llama-2-7B", QKVO, 8, "adapter_state_bytes") / 1e6,
        ref.lora_memory("Llama-2-7B", QKVO, 8, "full_ft_bytes") / 1e9,
        ref.lora_memory("Llama-2-7B", QKVO, 8, "base_bytes") / 1e9),
    Ref("Hu et al. (2021) report for GPT-3 175B: 1.2 TB of training memory down to 350 GB, a 35 MB checkpoint, and 25% "
        "faster training", CITE),
    Ref("with q, k, v, o adapted spares mainly the MLP's, 27-31% of a Llama-2-7B block's saved activations in bf16 "
        "depending on the norm's kernel (10-16% with every linear adapted",
        "measured with torch's saved-tensor hooks on a Llama-2-7B block: test_independent_tokens.py::"
        "test_lora_saves_27_to_31_percent_of_a_blocks_activations_with_qkvo_and_10_to_16_with_every_linear"),
    Ref("ΔW ≠ 0 at step 0", "the inequality the mistake states", COUNT),
    Ref("Quoting QLoRA's base as 4 bits per parameter: NF4 with double quantisation costs about 4.127 bits",
        "the misquote the mistake names (NF4's code width)", NF4_BITS),
    Ref("the 65B-on-48-GB result", CITE),
    Ref("\\sqrt{\\frac{\\sum_{i>r}\\sigma_i^2}{\\sum_i \\sigma_i^2}}", FORMULA),
]

# ==================================================================== 4. GRPO (default: rewards 1,0,0,1,1,0,0,0, ε = 0)
EXAMPLE_C = (1, 0, 0, 1, 1, 0, 0, 0)
NEARLY_EQUAL = (0.5,) * 7 + (0.501,)  # the preset "Nearly equal scores (tiny std)"
NE_STD = ref.grpo_std(NEARLY_EQUAL)
NE_CENTRED = 0.501 - sum(NEARLY_EQUAL) / 8

GRPO = [
    Ref("flip that answer's reward between 1 and 0", GIVEN),
    Ref("in the loss (as in DAPO, Yu et al. 2025)", CITE),
    Ref("Dividing by the sample std (G − 1, as several RL libraries do)", FORMULA),
    Ref("by the same √((G−1)/G): across a batch", FORMULA),
    Ref("the policy-gradient term J changes, by c = √((G−1)/G) = 0.935 at G = 8", FORMULA, math.sqrt(7 / 8), GIVEN),
    Ref("β raised by 1/c = √(G/(G−1)), 1.07 at G = 8. Adam nearly ignores the first part; the 7% larger β",
        FORMULA, FORMULA, math.sqrt(8 / 7), GIVEN, 100 * (math.sqrt(8 / 7) - 1)),
    Ref("(for 0/1 rewards, the nearly always solved", GIVEN),
    Ref("averages each answer's token terms (1/|o_i|) and then the G answers", FORMULA),
    Ref("every answer weighs 1/G in total", FORMULA),
    Ref("Dr. GRPO drops 1/|o_i| and divides", FORMULA),
    Ref("tokens of the batch, 1/Σ|o_j|, so every token", FORMULA),
    Ref("(clip-higher: ε_high = 0.28 against ε_low = 0.2)", "DAPO's clip bounds (Yu et al. 2025)"),
    Ref("the std is about 3×10⁻⁴, so differences of 0.001 become advantages of order 1, a blow-up of about 3,000 "
        "times. ε caps the scale at 1/ε, but here ε = 10⁻⁴ still leaves a scale of about 2,300 (the odd answer gets "
        "+2.03); it takes ε of order 10⁻² (a scale of about 97, an advantage of +0.085) to keep such a group from "
        "counting like a real 0/1 split",
        NE_STD, 0.501 - 0.5, "an order of magnitude", 1 / NE_STD, FORMULA, GIVEN, 1 / (NE_STD + 1e-4),
        NE_CENTRED / (NE_STD + 1e-4), "an order of magnitude", 1 / (NE_STD + 1e-2), NE_CENTRED / (NE_STD + 1e-2),
        GIVEN, GIVEN),
    Ref("(1 − pᴳ − (1 − p)ᴳ)", FORMULA),
    Ref("A group of **4 answers**", GIVEN),
    Ref("every advantage is 0 in every mode", ref.grpo_advantage((1, 1, 1, 1), 0, "none")),
    Ref("Worked example C: 3 of 8 answers correct gives mean 0.375 and std 0.484, so each correct answer gets +1.29 "
        "and each wrong one −0.77", GIVEN, GIVEN, sum(EXAMPLE_C) / 8, ref.grpo_std(EXAMPLE_C),
        ref.grpo_advantage(EXAMPLE_C, 0), ref.grpo_advantage(EXAMPLE_C, 1)),
    Ref("a group of equal rewards gives 0/0 = NaN", FORMULA),
    Ref("a rounding residue over a std of about 3×10⁻⁸ can hand every answer an advantage of ±1",
        "an illustration: a float32 residue of the order of its machine epsilon, 1.19e-7 (IEEE 754); the ratio ±1 "
        "follows from any residue over its own std"),
    Ref("an advantage of ±1 out of nothing", "a residue divided by its own std: ±1 for any two-valued residue"),
    Ref("the sample std's factor √((G−1)/G) is the same", FORMULA),
    Ref("P(\\text{group has signal}) = 1 - p^G - (1-p)^G", FORMULA),
    Ref("**3 of 8 correct** · mean 0.375 · std 0.484. Within this group, switching the divisor rescales every bar: the "
        "sample std multiplies them by 0.9354, no std by 0.4841 (= std + ε)",
        GIVEN, GIVEN, sum(EXAMPLE_C) / 8, ref.grpo_std(EXAMPLE_C), ref.grpo_sample_factor(EXAMPLE_C),
        ref.grpo_std(EXAMPLE_C) + 0.0),
    Ref("the sample-std factor √((G−1)/G) is the same for every group", FORMULA),
    Ref("Curves for 0/1 rewards; the marker is this group's success rate (for 0/1 rewards)", GIVEN),
]

# ============================================================================ 5. Evaluation


def _plugin_bias(n: int, p: float, k: int) -> float:
    """E[pass@k] - E[plug-in]: the unbiased estimator's mean is 1 - (1-p)^k; the plug-in's is an exact binomial sum."""
    plug = sum(stats.binom.pmf(c, n, p) * (1 - (1 - c / n) ** k) for c in range(n + 1))
    return (1 - (1 - p) ** k) - plug


def _worst_k(n: int, p: float) -> int:
    return max(range(1, n + 1), key=lambda k: _plugin_bias(n, p, k))


def _interior_threshold(n: int) -> float:
    """The p above which the plug-in's worst k lies strictly inside (1, n): bisection on p."""
    lo, hi = 1e-4, 0.99
    assert _worst_k(n, lo) == n and _worst_k(n, hi) < n
    for _ in range(50):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _worst_k(n, mid) == n else (lo, mid)
    return hi


SE_70 = ref.standard_error(0.7, 1000)

EVALUATION = [
    Ref("plugging c/n into 1 − (1 − p)^k (that is too low)", FORMULA),
    Ref("exactly pass@k = 1 − (1 − p)^k", FORMULA),
    Ref("the curve 1 − (1 − x)^k bends downwards", FORMULA),
    Ref("Both agree at k = 1, and at k = n the blue one reaches 1", GIVEN, ref.pass_at_k(10, 1, 10)),
    Ref("With n = 10 samples the worst k lies strictly between 1 and n only when p is above 0.253; for rarer "
        "successes the bias grows all the way to k = n, and as p approaches 1 the worst k moves down to 2. At p = 0.3 "
        "it is k = 7.",
        GIVEN, GIVEN, _interior_threshold(10), GIVEN, _worst_k(10, 0.999), GIVEN, _worst_k(10, 0.3)),
    Ref("√(p(1 − p)/N)", FORMULA),
    Ref("(lesson, sections 3.9 and 9)", "the lesson's section numbers"),
    Ref("GPT-3 used 13-grams", CITE),
    Ref("A model scores **70%** on a benchmark of **1,000** independent questions", GIVEN),
    Ref("√(0.7 · 0.3 / 1000) ≈ 0.0145, so about **1.4 points**; a 95% interval is roughly ±2.8 points. (Set A to 70% "
        "and N to 1,000", GIVEN, GIVEN, GIVEN, SE_70, 100 * SE_70, GIVEN, 100 * stats.norm.ppf(0.975) * SE_70,
        GIVEN, GIVEN),
    Ref("why not estimate it as 1 − (1 − c/n)^k", FORMULA),
    Ref("n = 10, c = 3: pass@5 is 1 − 21/252 = 0.917, while the plug-in 1 − 0.7⁵ gives 0.832",
        GIVEN, GIVEN, GIVEN, FORMULA, math.comb(7, 5), math.comb(10, 5), ref.pass_at_k(10, 3, 5), FORMULA, 1 - 3 / 10,
        ref.pass_at_k_plugin(10, 3, 5)),
    Ref("because 1 − (1 − x)^k is concave", FORMULA),
    Ref("(Codex drew 200 for k up to 100)", "Chen et al. 2021's n and largest k, the source's numbers"),
    Ref("Plugging c/n into 1 − (1 − p)^k", FORMULA),
    Ref("(for n = 10, above p ≈ 0.25; for n = 100, above 0.027)",
        GIVEN, _interior_threshold(10), GIVEN, _interior_threshold(100)),
    Ref("with n = k the estimate is 0 or 1 per problem", ref.pass_at_k(5, 0, 5), ref.pass_at_k(5, 1, 5)),
    Ref("71.0% vs 72.5% on 1,000 questions is 1.5 ± 3.9 points", GIVEN, GIVEN, GIVEN, 72.5 - 71.0,
        100 * ref.compare_half_width(0.710, 0.725, 1000)),
    Ref("\\widehat{\\text{pass@}k} = 1 - \\frac", FORMULA),
    Ref("\\text{plug-in } 1 - \\left(1 - \\tfrac{c}{n}\\right)^k", FORMULA, FORMULA),
    Ref("\\mathrm{SE} = \\sqrt{\\hat p (1 - \\hat p) / N}", FORMULA),
    Ref("\\widehat{\\text{pass@}k} = 1 - \\binom{n-c}{k}", FORMULA),
]


# fmt: on

PAGES: dict[str, list[Ref]] = {
    "pages/1_Scaling_laws.py": SCALING,
    "pages/2_KL_leash.py": KL,
    "pages/3_LoRA.py": LORA,
    "pages/4_GRPO.py": GRPO,
    "pages/5_Evaluation.py": EVALUATION,
}


@pytest.mark.parametrize("page", sorted(PAGES, key=lambda p: int(p.split("/")[1].split("_")[0])))
def test_every_number_of_the_page_texts_is_checked_or_allowed(page: str) -> None:
    problems = check_page(page_texts(page), PAGES[page])
    assert not problems, f"{page}:\n" + "\n".join(problems)
