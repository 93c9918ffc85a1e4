"""Independent references for the numbers the interview cards quote: each ``what`` of a card's [[card.checks]]
computed again here from its published formula (or scipy, fractions, torch autograd, an exact enumeration), never
through core. This module imports no project module: where a ``what`` is a toy of the lesson (the length-bias toy,
the annealing loss model's constants, a model's shape), its data are copied here with their source, and
tests/test_card_numbers.py checks that the copies still equal core's data, so a changed toy fails loudly instead of
silently agreeing with itself.

tests/test_card_numbers.py compares every card check's ``shown`` text with REFERENCES[what](**args) at the printed
precision (:func:`parse_shown` below says how a printed number is read).

Units: a reference returns its quantity in the unit that QUANTITIES in tests/test_cards.py uses for the same
``what`` (the unit of the check's ``value``). That unit is 1 (a plain number, a fraction, bytes, FLOPs, days, ...)
unless UNITS below says otherwise (percent, KiB, GiB, GFLOP).

Known limits of independence (also in the report of issue 28):
- ``lora_init_run``: only the fields that the initialisation fixes whatever the random draw (the output change at
  step 0 with B = 0, the gradient of A at step 0 with B = 0, every norm under A = B = 0) are re-derived, by a small
  torch fit of our own; a field that depends on the page's random draw raises NotImplementedError.
- ``lora_memory`` for Llama-2-7B and LLaMA-65B counts N as the nominal 7e9 and 65e9 the lesson uses (the published
  shapes give 6,738,415,616 and 65,285,660,672), the same convention as core; the trainable count r(d_out + d_in)
  per matrix comes from the published shapes.
"""

from __future__ import annotations

import functools
import math
import re
import statistics
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np
from scipy import optimize, signal, special, stats

# ================================================================================================ printed numbers

_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[+\-\u2212])?(?P<int>\d{1,3}(?:,\d{3})+|\d+)(?:\.(?P<frac>\d+))?(?:e(?P<exp>[+\-]?\d+))?"
    r"(?![\d])"
)
# scale units right after the number (attached, or after one space); longest first
_SCALES: tuple[tuple[str, Fraction], ...] = (
    ("percentage points", Fraction(1, 100)),
    ("points", Fraction(1, 100)),
    ("TFLOP", Fraction(10**12)),
    ("GFLOP", Fraction(10**9)),
    ("PFLOP", Fraction(10**15)),
    ("TiB", Fraction(2**40)),
    ("GiB", Fraction(2**30)),
    ("MiB", Fraction(2**20)),
    ("KiB", Fraction(2**10)),
    ("TB", Fraction(10**12)),
    ("GB", Fraction(10**9)),
    ("MB", Fraction(10**6)),
    ("kB", Fraction(10**3)),
    ("%", Fraction(1, 100)),
)
_ATTACHED = {
    "k": Fraction(10**3),
    "K": Fraction(10**3),
    "M": Fraction(10**6),
    "B": Fraction(10**9),
    "T": Fraction(10**12),
}
_WORDS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve".split())}


@dataclass(frozen=True)
class Printed:
    """A number as a card prints it: ``number`` and ``half_unit`` in the printed unit, ``scale`` the printed
    unit's size (None: the quantity's own unit, e.g. "40" after "KiB per token" was said once), ``exact`` when the
    text says "exactly"."""

    number: Fraction
    half_unit: Fraction
    scale: Fraction | None
    exact: bool = False

    def value(self, unit: Fraction) -> Fraction:
        """The printed number in a quantity's unit (``unit``: the size of that unit, e.g. 1/100 for percent)."""
        return self.number * (self.scale if self.scale is not None else unit) / unit

    def half(self, unit: Fraction) -> Fraction:
        """Half a unit in the last digit shown, in the quantity's unit."""
        return self.half_unit * (self.scale if self.scale is not None else unit) / unit

    def matches(self, x: float, unit: Fraction = Fraction(1)) -> bool:
        """Whether ``x`` (in the quantity's unit) prints as this number: within half a unit of its last digit (the
        tie included: 0.03125 may print as 0.0312), with 1e-9 relative slack for the rounding of a float."""
        if not math.isfinite(x):
            return False
        diff = abs(Fraction(x) - self.value(unit))
        slack = Fraction(1, 10**9) * max(abs(self.value(unit)), Fraction(1, 10**12))
        if self.exact:
            return diff <= Fraction(1, 10**12) * max(abs(self.value(unit)), Fraction(1))
        return diff <= self.half(unit) + slack


def parse_shown(shown: str) -> Printed:
    """Read the one number in a check's ``shown`` text and its printed precision.

    Rules (half a unit in the last digit shown):
    - "2.475" -> 2.475 +- 5e-4; "0.0312" -> +- 5e-5; "-0.77", "+1.29" (sign kept; "−" counts as minus).
    - An integer without thousands separators counts every digit: "128" +- 0.5, "90" +- 0.5, "800" +- 0.5.
    - An integer with thousands separators: trailing zeros are not significant, "2,460" means 2,460 +- 5 (so 2457.6
      passes), "131,072" +- 0.5, "8,388,608" +- 0.5.
    - Scientific notation: "8.4e22" -> 8.4e22 +- 5e20; "6e20" -> +- 5e19; "1.016e9" -> +- 5e5.
    - A letter right after the number scales it: k/K 1e3, M 1e6, B 1e9 ("1.5B" -> 1.5e9 +- 5e7), T 1e12.
    - A unit after it (attached or after one space) scales it: "%" and "points"/"percentage points" 1/100
      ("0.39%" -> 0.0039 +- 5e-5 as a fraction, or 0.39 +- 0.005 in percent), "KiB" 2^10, "GiB" 2^30, "MB" 1e6,
      "GB" 1e9, "GFLOP" 1e9, .... Any other word after the number ("tokens", "nats", "days", "FLOP/byte") is a
      label: the number is in the quantity's own unit.
    - A number word when there are no digits: "about four times" -> 4 +- 0.5.
    - "exactly" anywhere in the text: no rounding allowed ("exactly 0.0" -> 0 within 1e-12).
    - The first number is the one checked; a later one names its parameter ("44 tokens per parameter at 2.7e20").
    Raises ValueError when the text holds no number.
    """
    matches = list(_NUMBER.finditer(shown))
    if not matches:
        words = [w for w in re.findall(r"[a-z]+", shown.lower()) if w in _WORDS]
        if len(words) != 1:
            raise ValueError(f"{shown!r} holds no number (digits or one number word)")
        return Printed(Fraction(_WORDS[words[0]]), Fraction(1, 2), None, "exactly" in shown.lower())
    m = matches[0]
    int_part, frac, exp = m.group("int"), m.group("frac"), m.group("exp")
    digits = int_part.replace(",", "")
    number = Fraction(int(digits))
    if frac:
        number += Fraction(int(frac), 10 ** len(frac))
        last = Fraction(1, 10 ** len(frac))
    elif "," in int_part:
        stripped = digits.rstrip("0")
        last = Fraction(10 ** (len(digits) - len(stripped))) if stripped else Fraction(1)
    else:
        last = Fraction(1)
    if m.group("sign") in ("-", "\u2212"):
        number = -number
    if exp:
        number *= Fraction(10) ** int(exp)
        last *= Fraction(10) ** int(exp)
    half = last / 2
    rest = shown[m.end() :]
    scale: Fraction | None = None
    if rest[:1] in _ATTACHED and not rest[1:2].isalpha() and not exp:
        scale = _ATTACHED[rest[0]]
    else:
        after = rest[1:] if rest.startswith(" ") else rest
        for name, size in _SCALES:
            if after.startswith(name) and not after[len(name) : len(name) + 1].isalpha():
                scale = size
                break
    return Printed(number, half, scale, "exactly" in shown.lower())


def printed_in(text: str, shown: str) -> bool:
    """Whether ``shown`` occurs in ``text`` as a whole number: not inside a longer number ("0.3" in "0.35", "40" in
    "140" or "40,960")."""
    for m in re.finditer(re.escape(shown), text):
        before, after = text[: m.start()], text[m.end() :]
        if shown[:1].isdigit() and (before[-1:].isdigit() or (before[-1:] in ".," and before[-2:-1].isdigit())):
            continue
        if shown[-1:].isdigit() and (after[:1].isdigit() or (after[:1] in ".," and after[1:2].isdigit())):
            continue
        return True
    return False


# ================================================================================================ scaling laws

# L(N, D) = E + A / N^alpha + B / D^beta: Hoffmann et al. 2022 (approach 3) and Besiroglu et al. 2024 (Epoch AI's
# refit of the same data), as published.
CHINCHILLA_FITS: dict[str, tuple[float, float, float, float, float]] = {
    "hoffmann2022": (1.69, 406.4, 410.7, 0.34, 0.28),
    "epoch2024": (1.8172, 482.01, 2085.43, 0.3478, 0.3658),
}


def training_flops(N: float, D: float) -> float:
    """C = 6 N D (Kaplan et al. 2020; Hoffmann et al. 2022): 2 FLOPs per weight forward, 4 backward, per token."""
    return 6.0 * N * D


def chinchilla_loss(N: float, D: float, fit: str = "hoffmann2022") -> float:
    E, A, B, alpha, beta = CHINCHILLA_FITS[fit]
    return E + A / N**alpha + B / D**beta


def isoflop_loss(C: float, N: float, fit: str = "hoffmann2022") -> float:
    """The loss of N parameters trained with the whole budget C: D = C / (6 N)."""
    return chinchilla_loss(N, C / (6.0 * N), fit)


def n_opt(C: float, fit: str = "hoffmann2022") -> float:
    """Hoffmann et al. 2022, eq. (4): N_opt = G (C/6)^(beta/(alpha+beta)), G = (alpha A / (beta B))^(1/(alpha+beta))."""
    _, A, B, alpha, beta = CHINCHILLA_FITS[fit]
    G = (alpha * A / (beta * B)) ** (1.0 / (alpha + beta))
    return G * (C / 6.0) ** (beta / (alpha + beta))


def n_opt_numerical(C: float, fit: str = "hoffmann2022") -> float:
    """The minimiser of isoflop_loss over log10 N, by scipy (a second route to N_opt, for the self-test)."""
    res = optimize.minimize_scalar(
        lambda lg: isoflop_loss(C, 10.0**lg, fit), bounds=(3.0, 16.0), method="bounded", options={"xatol": 1e-12}
    )
    return 10.0**res.x


def min_loss(C: float, fit: str = "hoffmann2022") -> float:
    """The least loss a budget C reaches, minimised numerically by scipy (not by the closed form)."""
    return isoflop_loss(C, n_opt_numerical(C, fit), fit)


def tokens_per_param_opt(C: float, fit: str = "hoffmann2022") -> float:
    N = n_opt(C, fit)
    return C / (6.0 * N) / N


def rule_n(C: float) -> float:
    """The 20-tokens-per-parameter rule: C = 6 N (20 N) = 120 N^2."""
    return math.sqrt(C / 120.0)


def rule_d(C: float) -> float:
    return 20.0 * rule_n(C)


def loss_excess_pct(C: float, factor: float, fit: str = "hoffmann2022") -> float:
    """How much higher (%) the loss of factor x N_opt is than the optimum at the same budget C."""
    N = n_opt(C, fit)
    return 100.0 * (isoflop_loss(C, factor * N, fit) / isoflop_loss(C, N, fit) - 1.0)


def compute_share_same_loss(N: float, D: float, fit: str = "hoffmann2022") -> float:
    """The budget at which a compute-optimal model reaches the loss of (N, D), as a fraction of 6 N D (brentq on
    the optimal-loss envelope, N_opt from the closed form)."""
    target = chinchilla_loss(N, D, fit)
    lg = optimize.brentq(lambda x: isoflop_loss(10.0**x, n_opt(10.0**x, fit), fit) - target, 10.0, 40.0, xtol=1e-13)
    return 10.0**lg / training_flops(N, D)


SECONDS_PER_DAY = 86_400.0


def hardware_flops(n_gpus: float, hours: float, peak_flops: float, mfu: float) -> float:
    return n_gpus * hours * 3600.0 * peak_flops * mfu


def train_days(C: float, n_gpus: float, peak_flops: float, mfu: float) -> float:
    return C / (n_gpus * peak_flops * mfu) / SECONDS_PER_DAY


def gpu_days(C: float, peak_flops: float, mfu: float) -> float:
    return train_days(C, 1, peak_flops, mfu)


# Mixed-precision Adam: bf16 weights (2) and gradients (2), fp32 master weights (4) and two moments (4 + 4)
# (Rajbhandari et al. 2020, ZeRO, section 3.1: 16 bytes per parameter).
ADAM_MIXED_BYTES_PER_PARAM = 2 + 2 + 4 + 4 + 4


def training_memory_bytes(N: float) -> float:
    return ADAM_MIXED_BYTES_PER_PARAM * N


def serving_gflop_per_token(C: float, N: float) -> float:
    """Inference: one multiply and one add per weight per generated token, 2 N FLOPs (C does not enter)."""
    return 2.0 * N / 1e9


# ================================================================================================ KL leash, DPO


def kl_policy(pi_ref: tuple[float, ...], r: tuple[float, ...], beta: float, index: int) -> float:
    """pi*(y) = pi_ref(y) exp(r(y)/beta) / Z, the maximiser of E[r] - beta KL(pi || pi_ref) (Rafailov et al.
    2023, eq. 4)."""
    w = [p * math.exp(x / beta) for p, x in zip(pi_ref, r, strict=True)]
    return w[index] / math.fsum(w)


def kl_divergence(p: tuple[float, ...], q: tuple[float, ...]) -> float:
    """KL(p || q) in nats, terms with p = 0 counting 0 (scipy.special.rel_entr)."""
    return float(np.sum(special.rel_entr(np.asarray(p, dtype=float), np.asarray(q, dtype=float))))


def kl_max_objective(pi_ref: tuple[float, ...], r: tuple[float, ...], beta: float) -> float:
    """The optimum's value, max_pi E[r] - beta KL = beta log Z, Z = sum pi_ref exp(r/beta) (closed form)."""
    return beta * math.log(sum(p * math.exp(x / beta) for p, x in zip(pi_ref, r, strict=True)))


def dpo(field: str, logp_w: float, logp_l: float, ref_w: float, ref_l: float, beta: float) -> float:
    """Rafailov et al. 2023: r_hat = beta (log pi - log pi_ref); L = -log sigma(r_hat_w - r_hat_l). The gradient
    weight is -dL/dmargin, taken here by torch autograd (not by the formula sigma(-margin))."""
    import torch

    reward_w, reward_l = beta * (logp_w - ref_w), beta * (logp_l - ref_l)
    margin = reward_w - reward_l
    if field == "reward_w":
        return reward_w
    if field == "reward_l":
        return reward_l
    if field == "margin":
        return margin
    if field == "loss":
        return math.log1p(math.exp(-margin))  # -log sigma(m) = log(1 + e^-m)
    m = torch.tensor(margin, dtype=torch.float64, requires_grad=True)
    loss = -torch.nn.functional.logsigmoid(m)
    (grad,) = torch.autograd.grad(loss, m)
    if field == "weight":
        return -float(grad)
    lw = torch.tensor(logp_w, dtype=torch.float64, requires_grad=True)
    ll = torch.tensor(logp_l, dtype=torch.float64, requires_grad=True)
    loss = -torch.nn.functional.logsigmoid(beta * ((lw - ref_w) - (ll - ref_l)))
    gw, gl = torch.autograd.grad(loss, (lw, ll))
    if field == "grad_logp_w":
        return float(gw)
    if field == "grad_logp_l":
        return float(gl)
    raise KeyError(f"dpo field {field!r} has no reference")


# ================================================================================================ GRPO, evaluation


def grpo_advantage(rewards: tuple[float, ...], index: int, std: str = "population") -> float:
    """A_i = (r_i - mean) / std over the group (Shao et al. 2024), std with divisor G or G - 1 (exact fractions)."""
    r = [Fraction(x) for x in rewards]
    centred = r[index] - sum(r) / len(r)
    if std == "none" or centred == 0:
        return float(centred)  # an all-equal group: exactly 0 in every mode
    sd = statistics.pstdev(r) if std == "population" else statistics.stdev(r)
    return float(centred / Fraction(sd))


def grpo_std(rewards: tuple[float, ...]) -> float:
    return float(statistics.pstdev([Fraction(x) for x in rewards]))


def grpo_sample_factor(rewards: tuple[float, ...]) -> float:
    """Advantages with the sample std over those with the population std: pstdev / stdev."""
    r = [Fraction(x) for x in rewards]
    return float(statistics.pstdev(r) / statistics.stdev(r))


def grpo_signal_probability(p: float, G: int) -> float:
    """P(a group of G is neither all right nor all wrong) = 1 - p^G - (1-p)^G, by an exact sum over the binomial."""
    pf = Fraction(p)
    return float(sum(math.comb(G, j) * pf**j * (1 - pf) ** (G - j) for j in range(1, G)))


def pass_at_k(n: int, c: int, k: int) -> float:
    """Chen et al. 2021: 1 - C(n-c, k) / C(n, k), in exact fractions."""
    return float(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))


def pass_at_k_plugin(n: int, c: int, k: int) -> float:
    return float(1 - (1 - Fraction(c, n)) ** k)


def pass_hat_k(n: int, c: int, k: int) -> float:
    """pass^k: the chance that k samples drawn without replacement are all correct, C(c, k) / C(n, k)."""
    return float(Fraction(math.comb(c, k), math.comb(n, k)))


def standard_error(p: float, n: int) -> float:
    return math.sqrt(p * (1 - p) / n)


def _paired_differences(acc_a: float, acc_b: float, N: int, only_a: int, only_b: int) -> np.ndarray:
    """Per-question differences B - A: +1 on the questions only B got right, -1 on those only A got right."""
    return np.concatenate([np.ones(only_b), -np.ones(only_a), np.zeros(N - only_a - only_b)])


def compare_se(acc_a: float, acc_b: float, N: int, only_a: int | None = None, only_b: int | None = None) -> float:
    """SE of acc_b - acc_a: independent scores, sqrt(SE_A^2 + SE_B^2); paired (only_a, only_b given), the standard
    error of the mean of the per-question differences (population variance over the N questions)."""
    if only_a is None:
        return math.sqrt(standard_error(acc_a, N) ** 2 + standard_error(acc_b, N) ** 2)
    d = _paired_differences(acc_a, acc_b, N, only_a, only_b)
    return math.sqrt(np.var(d) / N)


def compare_half_width(acc_a: float, acc_b: float, N: int, confidence: float = 0.95, **kw: Any) -> float:
    """z SE with z the two-sided normal quantile (1.95996 at 95%, scipy.stats.norm)."""
    return float(stats.norm.ppf(0.5 + confidence / 2)) * compare_se(acc_a, acc_b, N, **kw)


def perplexity(nll_nats: float) -> float:
    return math.exp(nll_nats)


def uniform_loss(V: int) -> float:
    """Cross-entropy of the uniform prediction over V tokens: -sum (1/V) ln(1/V) (scipy.stats.entropy)."""
    return float(stats.entropy(np.full(V, 1.0 / V)))


def uniform_row_entropy(t: int) -> float:
    return float(stats.entropy(np.full(t, 1.0 / t)))


def sft_prompt_share_pct(prompt_len: int, resp_len: int, mask_prompt: bool) -> float:
    """The prompt's share (%) of the loss terms of one example, each token's loss counted once (equal per-token
    losses): P / (P + R) unmasked, 0 masked."""
    return 0.0 if mask_prompt else float(100 * Fraction(prompt_len, prompt_len + resp_len))


# ================================================================================================ attention, KV


def logit_variance(d_k: int, choice: str, d_model: int | None = None) -> float:
    """Var(c q.k) for q, k with independent unit-variance components: c^2 d_k (each of the d_k products has
    variance 1), c = 1 ("none"), 1/sqrt(d_k) ("sqrt_dk", Vaswani et al. 2017) or 1/sqrt(d_model)."""
    c2 = {"none": Fraction(1), "sqrt_dk": Fraction(1, d_k)}.get(choice)
    if c2 is None and choice == "sqrt_dmodel":
        c2 = Fraction(1, d_model)
    return float(c2 * d_k)


def kv_bytes_per_token(layers: int, kv_heads: int, head_dim: int, bytes: float) -> float:
    """K and V (2) for every layer, KV head and head dimension."""
    return 2 * layers * kv_heads * head_dim * bytes


def kv_kib_per_token(layers: int, kv_heads: int, head_dim: int, bytes: float) -> float:
    return kv_bytes_per_token(layers, kv_heads, head_dim, bytes) / 2**10


def kv_gib(layers: int, kv_heads: int, head_dim: int, bytes: float, tokens: int) -> float:
    return tokens * kv_bytes_per_token(layers, kv_heads, head_dim, bytes) / 2**30


# Published configs (config.json on the Hugging Face hub): layers, KV heads, head dim.
KV_CONFIGS: dict[str, tuple[int, int, int]] = {
    "Llama-3-70B": (80, 8, 8192 // 64),  # meta-llama/Meta-Llama-3-70B: 80 layers, 8 KV heads, 64 heads of 8192
    "Llama-3-8B": (32, 8, 4096 // 32),
    "Llama-2-7B": (32, 32, 4096 // 32),
}


def kv_sequences_that_fit(model: str, context: int, n_gpus: int, kv_budget_gib: float) -> float:
    """floor(budget / (context x KV bytes per token x copies)); with t GPUs of tensor parallelism each holds
    ceil(K / t) of the K KV heads, so the group holds t ceil(K/t) / K copies of the cache (bf16 values)."""
    layers, K, head_dim = KV_CONFIGS[model]
    copies = Fraction(n_gpus * -(-K // n_gpus), K)
    per_seq = context * kv_bytes_per_token(layers, K, head_dim, 2) * copies
    return float(math.floor(Fraction(kv_budget_gib) * 2**30 / per_seq))


# ================================================================================================ systems

# NVIDIA data sheets, dense bf16 tensor FLOP/s and HBM bandwidth (bytes/s).
GPU_SHEETS: dict[str, tuple[float, float]] = {
    "H100": (989e12, 3.35e12),  # H100 SXM
    "H200": (989e12, 4.8e12),  # H200 SXM
    "A100-80": (312e12, 2.039e12),  # A100 SXM 80 GB
    "A100-40": (312e12, 1.555e12),  # A100 SXM 40 GB
}


def ridge_point(gpu: str) -> float:
    """FLOP per byte where the roofline bends (Williams et al. 2009): peak FLOP/s / bandwidth."""
    peak, bandwidth = GPU_SHEETS[gpu]
    return peak / bandwidth


def pipeline_bubble_pct(p: int, m: int) -> float:
    """Idle share (%) of wall-clock time of a p-stage pipeline with m micro-batches: each stage works m of the
    m + p - 1 slots (GPipe, Huang et al. 2019), counted by enumerating the slots."""
    busy = sum(1 for stage in range(p) for slot in range(m + p - 1) if stage <= slot < stage + m)
    return float(100 * (1 - Fraction(busy, p * (m + p - 1))))


def contiguous_waste_pct(lengths: tuple[int, ...], max_len: int) -> float:
    """Share (%) of contiguously reserved KV slots (max_len per sequence) that hold no token."""
    return float(100 * (1 - Fraction(sum(lengths), len(lengths) * max_len)))


# ================================================================================================ LoRA


def lora_params(d: int, k: int, r: int) -> float:
    """B (d x r) and A (r x k): r (d + k) (Hu et al. 2021)."""
    return float(d * r + r * k)


def lora_share(d: int, k: int, r: int) -> float:
    return float(Fraction(d * r + r * k, d * k))


def lora_share_pct(d: int, k: int, r: int) -> float:
    return float(100 * Fraction(d * r + r * k, d * k))


def lora_scale(alpha: float, r: int) -> float:
    return alpha / r


# QLoRA (Dettmers et al. 2023): NF4 codes (4 bits), one fp8 absmax per block of 64 weights, one fp32 constant per
# 256 of those blocks (double quantisation): 4 + 8/64 + 32/(64 * 256) bits per parameter.
BITS_PER_PARAM: dict[str, Fraction] = {
    "fp32": Fraction(32),
    "bf16": Fraction(16),
    "int8": Fraction(8),
    "nf4": Fraction(4) + Fraction(8, 64) + Fraction(32, 64 * 256),
}


def base_bits_per_param(base: str) -> float:
    return float(BITS_PER_PARAM[base])


def nf4_block_overhead_bits() -> float:
    return float(BITS_PER_PARAM["nf4"] - 4)


def base_bytes_ratio(base: str, to: str) -> float:
    return float(BITS_PER_PARAM[base] / BITS_PER_PARAM[to])


@dataclass(frozen=True)
class DecoderShape:
    """hidden, layers, MLP width, KV width (KV heads x head dim), vocabulary, and N (None: counted from the shape)."""

    hidden: int
    layers: int
    intermediate: int
    kv_width: int
    vocab: int
    n_params: float | None


# HF configs; N nominal where the lesson uses the model's name (7e9, 65e9), counted for Llama-3-8B (8,030,261,248).
LORA_SHAPES: dict[str, DecoderShape] = {
    "Llama-2-7B": DecoderShape(4096, 32, 11008, 4096, 32000, 7e9),
    "Llama-3-8B (GQA)": DecoderShape(4096, 32, 14336, 1024, 128256, None),
    "LLaMA-65B": DecoderShape(8192, 80, 22016, 8192, 32000, 65e9),
}


def _lora_matrix_shapes(s: DecoderShape) -> dict[str, tuple[int, int]]:
    h, kv, ff = s.hidden, s.kv_width, s.intermediate
    return {"q": (h, h), "k": (kv, h), "v": (kv, h), "o": (h, h), "gate": (ff, h), "up": (ff, h), "down": (h, ff)}


def _count_params(s: DecoderShape) -> int:
    """Llama layout: per layer the 7 matrices and 2 RMSNorm vectors; untied input and output embeddings; final norm."""
    per_layer = sum(a * b for a, b in _lora_matrix_shapes(s).values()) + 2 * s.hidden
    return s.layers * per_layer + 2 * s.vocab * s.hidden + s.hidden


def lora_memory(model: str, targets: tuple[str, ...], r: int, field: str, base: str = "bf16") -> float:
    """LoRA's accounting at model scale: trainable n = layers x sum r (d_out + d_in); 16 bytes per trainable
    parameter for its weights, gradients and Adam states; full fine-tuning 16 N; the frozen base N x its bytes."""
    s = LORA_SHAPES[model]
    shapes = _lora_matrix_shapes(s)
    n = s.layers * sum(r * (shapes[t][0] + shapes[t][1]) for t in dict.fromkeys(targets))
    N = s.n_params if s.n_params is not None else float(_count_params(s))
    base_bytes = N * float(BITS_PER_PARAM[base]) / 8
    values = {
        "trainable": float(n),
        "share": n / N,
        "share_pct": 100 * n / N,
        "adapter_state_bytes": float(ADAM_MIXED_BYTES_PER_PARAM * n),
        "full_ft_bytes": float(ADAM_MIXED_BYTES_PER_PARAM * N),
        "base_bytes": base_bytes,
        "lora_total_bytes": base_bytes + ADAM_MIXED_BYTES_PER_PARAM * n,
        "checkpoint_bytes": 2.0 * n,  # a bf16 adapter file
        "full_checkpoint_bytes": 2.0 * N,
    }
    return values[field]


def lora_init_run(init: str, field: str, r: int = 8, alpha: float = 16.0, steps: int = 200) -> float:
    """A small LoRA fit of our own (torch, float64, Adam at lr 0.01 on a random low-rank target, d = k = 64): h =
    W0 x + (alpha/r) B A x with A (r x k) random N(0, 1/k) and B = 0 ("B0"), A = B = 0 ("zeros"), A = 0 and B
    random ("A0"), or both random. Only fields that the initialisation fixes whatever the draw have a reference:
    ``delta_at_init`` (max |h - W0 x| at step 0) under B0, zeros or A0; ``grad_A0_norm`` under B0 or zeros;
    ``grad_B0_norm`` under A0 or zeros; ``norm_A``/``norm_B``/``max_norm_A``/``max_norm_B`` (the largest over every
    step) under zeros. Others raise NotImplementedError (they depend on the page's draw)."""
    import torch

    fixed = {
        "delta_at_init": ("B0", "zeros", "A0"),
        "grad_A0_norm": ("B0", "zeros"),
        "grad_B0_norm": ("A0", "zeros"),
        "max_norm_A": ("zeros",),
        "max_norm_B": ("zeros",),
    }
    if init not in fixed.get(field, ()):
        raise NotImplementedError(f"lora_init_run {init}/{field} depends on the page's random draw")
    d = k = 64
    g = torch.Generator().manual_seed(12345)
    W0 = torch.randn(d, k, generator=g, dtype=torch.float64) / math.sqrt(k)
    target = (
        torch.randn(d, 4, generator=g, dtype=torch.float64) @ torch.randn(4, k, generator=g, dtype=torch.float64)
    ) / k
    X = torch.randn(256, k, generator=g, dtype=torch.float64)
    Y = X @ (W0 + target).T
    A = torch.randn(r, k, generator=g, dtype=torch.float64) / math.sqrt(k)
    B = torch.randn(d, r, generator=g, dtype=torch.float64) / math.sqrt(r)
    if init in ("zeros", "A0"):
        A = torch.zeros_like(A)
    if init in ("zeros", "B0"):
        B = torch.zeros_like(B)
    A.requires_grad_(True)
    B.requires_grad_(True)
    s = alpha / r
    with torch.no_grad():
        delta = float((s * (X @ A.T) @ B.T).abs().max())
    opt = torch.optim.Adam([A, B], lr=0.01)
    norms_A, norms_B, grads = [], [], {}
    for t in range(steps + 1):
        norms_A.append(float(torch.linalg.norm(A.detach())))
        norms_B.append(float(torch.linalg.norm(B.detach())))
        if t == steps:
            break
        opt.zero_grad()
        loss = ((X @ W0.T + s * (X @ A.T) @ B.T - Y) ** 2).mean()
        loss.backward()
        if t == 0:
            grads = {"grad_A0_norm": float(torch.linalg.norm(A.grad)), "grad_B0_norm": float(torch.linalg.norm(B.grad))}
        opt.step()
    return {"delta_at_init": delta, "max_norm_A": max(norms_A), "max_norm_B": max(norms_B), **grads}[field]


# ================================================================================================ length-bias toy

# The KL page's length toy (core/reward_model.py LENGTH_TOY, copied; tests/test_card_numbers.py checks the copy):
# five answers of 50..800 tokens, the SFT model's probabilities, their true quality, and the proxy's reward per
# doubling of the length.
LENGTH_TOY_LENGTHS = (50, 100, 200, 400, 800)
LENGTH_TOY_PI_REF = (0.25, 0.35, 0.25, 0.10, 0.05)
LENGTH_TOY_QUALITY = (0.2, 0.6, 0.8, 0.7, 0.5)
LENGTH_TOY_COEF = 0.3


def _beta_grid() -> list[float]:
    """The KL page's beta steps: 1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8 per decade from 1e-3, and 1e3 at the end."""
    mantissas = (1, 1.25, 1.5, 2, 2.5, 3, 4, 5, 6, 8)
    return [float(Fraction(str(m)) * Fraction(10) ** e) for e in range(-3, 3) for m in mantissas] + [1000.0]


def _length_optimum(beta: float, length_coef: float) -> dict[str, float]:
    """pi* = pi_ref exp(r/beta) / Z, proxy r = quality + c log2(length); its expectations and KL(pi* || pi_ref)."""
    r = [q + length_coef * math.log2(n) for q, n in zip(LENGTH_TOY_QUALITY, LENGTH_TOY_LENGTHS, strict=True)]
    logw = [math.log(p) + x / beta for p, x in zip(LENGTH_TOY_PI_REF, r, strict=True)]
    logZ = special.logsumexp(logw)
    pi = [math.exp(lw - logZ) for lw in logw]
    return {
        "mean_length": sum(p * n for p, n in zip(pi, LENGTH_TOY_LENGTHS, strict=True)),
        "true_reward": sum(p * q for p, q in zip(pi, LENGTH_TOY_QUALITY, strict=True)),
        "proxy_reward": sum(p * x for p, x in zip(pi, r, strict=True)),
        "kl": kl_divergence(tuple(pi), LENGTH_TOY_PI_REF),
    }


def length_bias(beta: float, field: str, length_coef: float = LENGTH_TOY_COEF) -> float:
    return _length_optimum(beta, length_coef)[field]


def length_bias_best(field: str, length_coef: float = LENGTH_TOY_COEF) -> float:
    """Over the page's beta steps: the beta with the best true quality, or that quality."""
    best = max(_beta_grid(), key=lambda b: _length_optimum(b, length_coef)["true_reward"])
    return best if field == "best_beta" else _length_optimum(best, length_coef)["true_reward"]


# ================================================================================================ schedules

# The annealing loss model of Tissue, Wang and Wang 2024 (arXiv:2408.11029), L(s) = L0 + A S1^-alpha - C S2, with
# the page's illustrative constants (core/schedules.py AnnealingLossModel, copied and checked by the tests).
LOSS_MODEL = {"L0": 2.0, "A": 8.0, "alpha": 0.5, "C": 1.5e-4, "lam": 0.999}


def _lr(
    kind: str, steps: int, warmup: int | None, final_lr_frac: float, decay_steps: int | None, shape: str
) -> list[float]:
    """The LR (relative to the peak) at steps 1..steps: linear warm-up s/W, then cosine to final_lr_frac
    (Loshchilov and Hutter 2017), WSD's stable phase and a decay over its last decay_steps (default 20%) shaped
    linear, cosine or 1 - sqrt (Hägele et al. 2024), or constant."""
    W = max(1, round(0.01 * steps)) if warmup is None else warmup
    f = final_lr_frac
    D = (max(1, round(0.2 * steps)) if decay_steps is None else decay_steps) if kind == "wsd" else 0
    out = []
    for s in range(1, steps + 1):
        if s <= W:
            out.append(s / W)
        elif kind == "constant":
            out.append(1.0)
        elif kind == "cosine":
            u = min(max((s - W) / (steps - W), 0.0), 1.0)
            out.append(f + (1 - f) * (1 + math.cos(math.pi * u)) / 2)
        else:
            u = min(max((s - (steps - D)) / D, 0.0), 1.0)
            drop = {"linear": u, "cosine": (1 - math.cos(math.pi * u)) / 2, "1-sqrt": math.sqrt(u)}[shape]
            out.append(1 - (1 - f) * drop)
    return out


def _annealing_loss(lr: list[float]) -> np.ndarray:
    """S1 = sum eta_i; S2 = sum m_i, m_i = lam m_(i-1) + (eta_(i-1) - eta_i), eta_0 = eta_1 (an IIR filter, scipy)."""
    eta = np.asarray(lr, dtype=float)
    drops = np.concatenate([[0.0], eta[:-1] - eta[1:]])
    m = signal.lfilter([1.0], [1.0, -LOSS_MODEL["lam"]], drops)
    S1, S2 = np.cumsum(eta), np.cumsum(m)
    return LOSS_MODEL["L0"] + LOSS_MODEL["A"] * S1 ** -LOSS_MODEL["alpha"] - LOSS_MODEL["C"] * S2


def schedule_end_loss(
    kind: str,
    steps: int,
    warmup: int,
    final_lr_frac: float,
    decay_steps: int | None = None,
    decay_shape: str = "linear",
) -> float:
    return float(_annealing_loss(_lr(kind, steps, warmup, final_lr_frac, decay_steps, decay_shape))[-1])


def kaplan_read_off(long_steps: int, n: int, which: str, warmup: int | None, final_lr_frac: float = 0.1) -> float:
    """A short run of n steps: its loss read off a long cosine run at step n ("read"), against the end of a cosine
    of its own length ("own", warm-up capped at n - 1), and their difference ("gap")."""
    W = max(1, round(0.01 * long_steps)) if warmup is None else warmup
    read = float(_annealing_loss(_lr("cosine", long_steps, W, final_lr_frac, None, "linear"))[n - 1])
    own = float(_annealing_loss(_lr("cosine", n, min(W, n - 1), final_lr_frac, None, "linear"))[-1])
    return {"read": read, "own": own, "gap": read - own}[which]


# ================================================================================================ the table

REFERENCES: dict[str, Callable[..., float]] = {
    "training_flops": training_flops,
    "chinchilla_loss": chinchilla_loss,
    "isoflop_loss": isoflop_loss,
    "min_loss": min_loss,
    "n_opt": n_opt,
    "tokens_per_param_opt": tokens_per_param_opt,
    "rule_n": rule_n,
    "rule_d": rule_d,
    "hardware_flops": hardware_flops,
    "gpu_days": gpu_days,
    "train_days": train_days,
    "loss_excess_pct": loss_excess_pct,
    "compute_share_same_loss": compute_share_same_loss,
    "training_memory_bytes": training_memory_bytes,
    "kl_policy": kl_policy,
    "kl_divergence": kl_divergence,
    "kl_max_objective": kl_max_objective,
    "dpo": dpo,
    "grpo_advantage": grpo_advantage,
    "grpo_std": grpo_std,
    "grpo_sample_factor": grpo_sample_factor,
    "grpo_signal_probability": grpo_signal_probability,
    "pass_at_k": pass_at_k,
    "pass_at_k_plugin": pass_at_k_plugin,
    "pass_hat_k": pass_hat_k,
    "standard_error": standard_error,
    "compare_se": compare_se,
    "compare_half_width": compare_half_width,
    "lora_params": lora_params,
    "lora_share_pct": lora_share_pct,
    "lora_share": lora_share,
    "lora_memory": lora_memory,
    "lora_scale": lora_scale,
    "lora_init_run": lora_init_run,
    "base_bits_per_param": base_bits_per_param,
    "nf4_block_overhead_bits": nf4_block_overhead_bits,
    "base_bytes_ratio": base_bytes_ratio,
    "length_bias": length_bias,
    "length_bias_best": length_bias_best,
    "schedule_end_loss": schedule_end_loss,
    "kaplan_read_off": kaplan_read_off,
    "kv_kib_per_token": kv_kib_per_token,
    "kv_gib": kv_gib,
    "logit_variance": logit_variance,
    "uniform_row_entropy": uniform_row_entropy,
    "uniform_loss": uniform_loss,
    "sft_prompt_share_pct": sft_prompt_share_pct,
    "perplexity": perplexity,
    "pipeline_bubble_pct": pipeline_bubble_pct,
    "ridge_point": ridge_point,
    "contiguous_waste_pct": contiguous_waste_pct,
    "serving_gflop_per_token": serving_gflop_per_token,
    "kv_sequences_that_fit": kv_sequences_that_fit,
}

# The unit a ``what`` is in, as its size in the plain unit (default 1): percent is 1/100 of a fraction, KiB 2^10
# bytes, GiB 2^30 bytes, GFLOP 1e9 FLOPs. A function of the check's args where the unit depends on them.
UNITS: dict[str, Fraction | Callable[..., Fraction]] = {
    "lora_share_pct": Fraction(1, 100),
    "loss_excess_pct": Fraction(1, 100),
    "sft_prompt_share_pct": Fraction(1, 100),
    "pipeline_bubble_pct": Fraction(1, 100),
    "contiguous_waste_pct": Fraction(1, 100),
    "lora_memory": lambda field, **_: Fraction(1, 100) if field == "share_pct" else Fraction(1),
    "kv_kib_per_token": Fraction(2**10),
    "kv_gib": Fraction(2**30),
    "serving_gflop_per_token": Fraction(10**9),
}


def unit_of(what: str, kwargs: dict[str, Any]) -> Fraction:
    """The size of ``what``'s unit for these args (1 unless UNITS says otherwise)."""
    unit = UNITS.get(what, Fraction(1))
    return unit(**kwargs) if callable(unit) else unit


# ---- references added by the topic owners (one entry each; keep this marker line) ----

# -- tokens (attention-10, evaluation-08): the true pass^5 at p = c/n, the attention scale and the score tensor --


def _pass_hat_k_plugin(n: int, c: int, k: int) -> float:
    """(c/n)^k, exactly with fractions: the true pass^k of a model whose per-attempt success rate is c/n."""
    return float(Fraction(c, n) ** k)


def _attention_scale(choice: str, d_k: int, d_model: int | None = None) -> float:
    """The factor on q.k: 1/sqrt(d_k) (Vaswani et al. 2017), 1 (none) or 1/sqrt(d_model) (the trap)."""
    return {"sqrt_dk": lambda: 1 / math.sqrt(d_k), "none": lambda: 1.0, "sqrt_dmodel": lambda: 1 / math.sqrt(d_model)}[
        choice
    ]()


def _score_tensor_entries(batch: int, heads: int, tokens: int) -> float:
    """Entries of the (B, h, T, T) score tensor of one layer: one score per query-key pair, per head and sequence."""
    return float(batch * heads * tokens * tokens)


REFERENCES["pass_hat_k_plugin"] = _pass_hat_k_plugin
REFERENCES["attention_scale"] = _attention_scale
REFERENCES["score_tensor_entries"] = _score_tensor_entries
REFERENCES["score_tensor_gib"] = lambda batch, heads, tokens, bytes: (
    _score_tensor_entries(batch, heads, tokens) * bytes / 2**30
)
UNITS["score_tensor_gib"] = Fraction(2**30)  # in GiB, as the check's value


# scaling (topic owner: scaling): the compute-equivalent by its own root-find, on a numerical (not closed-form)
# optimum, so the closed form of core.scaling.compute_equivalent is not repeated here.
def _optimal_loss_numerical(C: float, fit: str) -> float:
    return isoflop_loss(C, n_opt_numerical(C, fit), fit)


def _compute_equivalent_numerical(target: float, fit: str) -> float:
    """The budget C at which the best model on C (scipy minimum over N) reaches ``target`` (brentq in log10 C)."""
    lg = optimize.brentq(lambda x: _optimal_loss_numerical(10.0**x, fit) - target, 12.0, 32.0, xtol=1e-12)
    return 10.0**lg


def compute_waste_pct(C: float, factor: float, fit: str = "hoffmann2022") -> float:
    """% of the budget C a compute-optimal model saves at the loss of a model ``factor`` times the optimal size."""
    target = isoflop_loss(C, factor * n_opt_numerical(C, fit), fit)
    return 100.0 * (1.0 - _compute_equivalent_numerical(target, fit) / C)


REFERENCES["compute_waste_pct"] = compute_waste_pct
UNITS["compute_waste_pct"] = Fraction(1, 100)
REFERENCES["compute_multiple_same_loss"] = lambda N, D, fit="hoffmann2022": (
    training_flops(N, D) / _compute_equivalent_numerical(chinchilla_loss(N, D, fit), fit)
)
REFERENCES["loss_rise_pct"] = lambda C, N_from, N_to, fit="hoffmann2022": (
    100.0 * (isoflop_loss(C, N_to, fit) / isoflop_loss(C, N_from, fit) - 1.0)
)
UNITS["loss_rise_pct"] = Fraction(1, 100)
REFERENCES["training_memory_gib"] = lambda N: ADAM_MIXED_BYTES_PER_PARAM * N / 2**30
UNITS["training_memory_gib"] = Fraction(2**30)  # in GiB, as the check's value


# -- systems (topic owner: systems; systems-05, -08, -09): Llama-family parameter counts from the released configs,
# weight bytes at a format's bits (scales included), batch-1 decode floors at the data sheet's bandwidth --

# config.json of Meta-Llama-3-8B / -70B: layers, hidden, query heads, KV heads, intermediate, vocabulary (untied)
LLAMA_CONFIGS: dict[str, tuple[int, int, int, int, int, int]] = {
    "Llama-3-8B": (32, 4096, 32, 8, 14336, 128256),
    "Llama-3-70B": (80, 8192, 64, 8, 28672, 128256),
}
# bits per weight: int4 with one 16-bit scale per group of 128 weights (symmetric, no zero-point)
WEIGHT_BITS: dict[str, Fraction] = {"bf16": Fraction(16), "fp8": Fraction(8), "int4": 4 + Fraction(16, 128)}


def _llama_params(model: str, *, mha: bool = False) -> int:
    """Per layer: W_q and W_o (D x D each), W_k and W_v (D x D_kv each, D_kv = KV heads x head dim), SwiGLU's gate,
    up and down (3 D F), two RMSNorm gains (2 D); untied input and output embeddings (2 V D); the final norm (D)."""
    L, D, heads, kv, F, V = LLAMA_CONFIGS[model]
    d_kv = (heads if mha else kv) * (D // heads)
    return L * (2 * D * D + 2 * D * d_kv + 3 * D * F + 2 * D) + 2 * V * D + D


def _weight_bytes(model: str, fmt: str) -> float:
    return float(_llama_params(model) * WEIGHT_BITS[fmt] / 8)


def _decode_floor_s(model: str, fmt: str, gpu: str, tp: int = 1) -> float:
    """Batch 1: every weight read once per token, split over tp GPUs, at the data sheet's bandwidth (a floor)."""
    return _weight_bytes(model, fmt) / (tp * GPU_SHEETS[gpu][1])


def _ffn_share(model: str) -> float:
    L, D, _heads, _kv, F, _V = LLAMA_CONFIGS[model]
    return float(Fraction(L * 3 * D * F, _llama_params(model)))


REFERENCES["weight_bytes"] = _weight_bytes
REFERENCES["decode_floor_ms"] = lambda model, fmt, gpu, tp=1: 1e3 * _decode_floor_s(model, fmt, gpu, tp)
REFERENCES["decode_tokens_per_s"] = lambda model, fmt, gpu, tp=1: 1 / _decode_floor_s(model, fmt, gpu, tp)
REFERENCES["bits_per_param"] = lambda fmt: float(WEIGHT_BITS[fmt])
REFERENCES["param_count"] = lambda model: float(_llama_params(model))
REFERENCES["param_count_mha"] = lambda model: float(_llama_params(model, mha=True))
REFERENCES["gqa_saving_params"] = lambda model: float(_llama_params(model, mha=True) - _llama_params(model))
REFERENCES["ffn_share"] = _ffn_share
# attention's FLOPs per cached KV byte in decode: 4 d FLOPs per layer per cached token (q.k and the weighted sum of v,
# 2 FLOPs per multiply-add) over 2 K H b bytes per layer per cached token, d = H_q H: 2 H_q / (K b)
REFERENCES["decode_attention_flop_per_kv_byte"] = lambda model, bytes: (
    2 * LLAMA_CONFIGS[model][2] / (LLAMA_CONFIGS[model][3] * bytes)
)
REFERENCES["unembedding_params"] = lambda model: float(LLAMA_CONFIGS[model][5] * LLAMA_CONFIGS[model][1])


def _speculative_expected_tokens(alpha: float, k: int) -> float:
    """Leviathan et al. 2023, eq. 1: each of k drafts is accepted with probability alpha until the first rejection,
    and the verify pass adds one token of its own: the sum of alpha^i for i = 0..k, summed term by term here."""
    return float(sum(Fraction(alpha).limit_denominator(10**6) ** i for i in range(k + 1)))


REFERENCES["speculative_expected_tokens"] = _speculative_expected_tokens


# -- positions (topic owner: positions; positions-01 .. -07): RoPE's rotation, frequencies and wavelengths, ALiBi's
# slopes, the long-context scalings and RoFormer's decay bound, each written out from its paper in plain Python (no
# numpy, no core). Pairs are counted from i = 0: theta_i = base^(-2i/d), i = 0 .. d/2 - 1 (RoFormer, Su et al. 2021).


def _orderings(n: int) -> float:
    """n! orderings of n distinct tokens, as the product 1 * 2 * ... * n."""
    return float(math.prod(range(1, n + 1)))


def _rope_pair_score(
    theta: float, m: float, n: float, q: tuple[float, float] = (1.0, 0.0), k: tuple[float, float] = (1.0, 0.0)
) -> float:
    """One pair of dimensions: the query (2-vector) rotated by m*theta, the key by n*theta, then their dot product,
    with the 2 x 2 rotation matrix [[cos a, -sin a], [sin a, cos a]] written out (RoFormer eq. 13)."""

    def rotate(v: tuple[float, float], a: float) -> tuple[float, float]:
        return (math.cos(a) * v[0] - math.sin(a) * v[1], math.sin(a) * v[0] + math.cos(a) * v[1])

    qr, kr = rotate(q, m * theta), rotate(k, n * theta)
    return qr[0] * kr[0] + qr[1] * kr[1]


def _rope_theta(d: int, base: float, i: int) -> float:
    """theta_i = base^(-2i/d) radians per token."""
    return base ** (-2 * i / d)


def _rope_wavelength(d: int, base: float, i: int) -> float:
    """lambda_i = 2 pi / theta_i = 2 pi base^(2i/d) tokens: the distance over which pair i turns once."""
    return 2 * math.pi * base ** (2 * i / d)


def _rope_pairs_longer_than(d: int, base: float, context: int) -> float:
    """How many of the d/2 pairs have a wavelength above ``context`` tokens (turn less than once within it)."""
    return float(sum(1 for i in range(d // 2) if _rope_wavelength(d, base, i) > context))


def _alibi_slope(n_heads: int, head: int) -> float:
    """ALiBi (Press et al. 2022): for n heads (a power of 2) the slopes are the geometric sequence that starts at
    2^(-8/n) with that ratio, so head h (1-based) has 2^(-8h/n); for 8 heads 1/2, 1/4, ..., 1/256."""
    start = 2 ** (-8 / n_heads)  # the first slope, and the ratio between neighbours
    return start**head


def _alibi_penalty(n_heads: int, head: int, distance: int) -> float:
    """What ALiBi subtracts from the score of a key ``distance`` tokens before the query: slope * distance."""
    return _alibi_slope(n_heads, head) * distance


def _context_ratio(new: int, old: int) -> float:
    return float(Fraction(new, old))


def _pi_frequency(d: int, base: float, s: float, i: int) -> float:
    """Position interpolation (Chen et al. 2023): positions m -> m/s, i.e. theta_i -> theta_i / s."""
    return _rope_theta(d, base, i) / s


def _ntk_base(base: float, s: float, d: int) -> float:
    """NTK-aware scaling (bloc97, 2023): base' = base * s^(d/(d-2))."""
    return base * s ** (d / (d - 2))


def _ntk_slowdown(d: int, base: float, s: float, i: int) -> float:
    """How many times longer pair i's wavelength is under NTK-aware scaling: lambda_i(base') / lambda_i(base)."""
    return _rope_wavelength(d, _ntk_base(base, s, d), i) / _rope_wavelength(d, base, i)


def _yarn_attention_factor(s: float) -> float:
    """YaRN (Peng et al. 2023): sqrt(1/t) = 0.1 ln s + 1, the factor on q and on k."""
    return 0.1 * math.log(s) + 1


def _yarn_logit_multiplier(s: float) -> float:
    """1/t = (0.1 ln s + 1)^2: what the q and k factors do to the logits q.k together."""
    return _yarn_attention_factor(s) ** 2


def _llama31_pair_count(
    d: int, base: float, L: int, which: str, low_freq_factor: float = 1.0, high_freq_factor: float = 4.0
) -> float:
    """Llama 3.1's RoPE scaling (Meta's reference apply_scaling; Hugging Face's "llama3" rope type): a pair whose
    wavelength exceeds L / low_freq_factor has its frequency divided by the factor ("slowed"), one below
    L / high_freq_factor is left alone ("kept"), one in between is blended ("blended")."""
    counts = {"slowed": 0, "kept": 0, "blended": 0}
    for i in range(d // 2):
        lam = _rope_wavelength(d, base, i)
        if lam > L / low_freq_factor:
            counts["slowed"] += 1
        elif lam < L / high_freq_factor:
            counts["kept"] += 1
        else:
            counts["blended"] += 1
    return float(counts[which])


def _roformer_relative_bound(d: int, base: float, distance: float) -> float:
    """RoFormer's relative upper bound (Su et al. 2021, long-term decay): (1/(d/2)) sum_{j=1}^{d/2} |S_j|, with the
    partial sums S_j = sum_{k=0}^{j-1} e^{i (m-n) theta_k}, in complex arithmetic (cmath)."""
    import cmath

    total, partial = 0.0, 0j
    for k in range(d // 2):
        partial += cmath.exp(1j * distance * _rope_theta(d, base, k))
        total += abs(partial)
    return total / (d // 2)


def _rope_mean_score(d: int, base: float, distance: float, correlation: float = 1.0) -> float:
    """E[q_m . k_n] for components of unit variance, q_j and k_j correlated by rho, independent otherwise: each pair
    contributes E[q_a k_a + q_b k_b] cos((m-n) theta_i) = 2 rho cos((m-n) theta_i). rho = 1 is a vector with itself
    (d at distance 0); rho = 0 is independent q and k (0 at every distance)."""
    return math.fsum(2 * correlation * math.cos(distance * _rope_theta(d, base, i)) for i in range(d // 2))


REFERENCES["orderings"] = _orderings
REFERENCES["rope_pair_score"] = _rope_pair_score
REFERENCES["rope_wavelength"] = _rope_wavelength
REFERENCES["rope_pairs_longer_than"] = _rope_pairs_longer_than
REFERENCES["alibi_slope"] = _alibi_slope
REFERENCES["alibi_penalty"] = _alibi_penalty
REFERENCES["context_ratio"] = _context_ratio
REFERENCES["pi_frequency"] = _pi_frequency
REFERENCES["ntk_base"] = _ntk_base
REFERENCES["ntk_slowdown"] = _ntk_slowdown
REFERENCES["yarn_attention_factor"] = _yarn_attention_factor
REFERENCES["yarn_logit_multiplier"] = _yarn_logit_multiplier
REFERENCES["llama31_pair_count"] = _llama31_pair_count
REFERENCES["roformer_relative_bound"] = _roformer_relative_bound
REFERENCES["rope_mean_score"] = _rope_mean_score


# -- flash_attention (topic owner: flash_attention; flash_attention-01 .. -07): Dao et al. 2022 (arXiv 2205.14135)
# Algorithm 0 read and written line by line, Algorithm 1's loads and stores summed over an explicit loop of its blocks
# (block sizes by its line 1), Theorem 2's limit from those counts, the online softmax's sum by the direct formula
# (Milakov & Gimelshein 2018), what the backward keeps (section 3.1; the release's float32 logsumexp), the matmul
# FLOPs of exact attention (2abc per (a x b)(b x c) product), the causal blocks skipped, the decode step's reads.


def _hbm_elements(
    n: int,
    d: int,
    method: str,
    sram_bytes: int | None = None,
    bytes: int = 2,
) -> float:
    """Elements moved between HBM and SRAM by one head's forward over n tokens.

    "standard", Algorithm 0 line by line: 1. read Q, K, write S; 2. read S, write P; 3. read P, V, write O.
    "flash", Algorithm 1 with M = sram_bytes / bytes elements: line 2 writes O, l, m; for every key block j line 6
    loads K_j, V_j and, for every query block i, line 8 loads Q_i, O_i, l_i, m_i and lines 12-13 store O_i, l_i, m_i.
    """
    if method == "standard":
        Q = K = V = O = n * d  # noqa: E741
        S = P = n * n
        line_1, line_2, line_3 = (Q + K) + S, S + P, (P + V) + O
        return float(line_1 + line_2 + line_3)
    M = sram_bytes // bytes
    B_c = -(-M // (4 * d))
    B_r = min(B_c, d)
    moved = n * d + 2 * n  # line 2: O, l, m
    for c0 in range(0, n, B_c):
        cols = min(B_c, n - c0)
        moved += 2 * cols * d  # K_j, V_j
        for r0 in range(0, n, B_r):
            rows = min(B_r, n - r0)
            moved += 2 * rows * d + 2 * rows  # load Q_i, O_i, l_i, m_i
            moved += rows * d + 2 * rows  # store O_i, l_i, m_i
    return float(moved)


def _block_cols(d: int, sram_bytes: int, bytes: int) -> int:
    """Algorithm 1 line 1: B_c = ceil(M / 4d), M the SRAM in elements."""
    return math.ceil(Fraction(sram_bytes // bytes, 4 * d))


def _flash_block_size(d: int, sram_bytes: int, bytes: int, which: str) -> float:
    """B_c = ceil(M / 4d) ("cols") or B_r = min(ceil(M / 4d), d) ("rows")."""
    B_c = _block_cols(d, sram_bytes, bytes)
    return float(B_c if which == "cols" else min(B_c, d))


def _hbm_ratio_limit(d: int, sram_bytes: int, bytes: int) -> float:
    """Algorithm 0 over Algorithm 1 as n grows: 4n^2 against (n / B_c) passes moving 3nd + 4n each: 4 B_c / (3d + 4)."""
    return float(Fraction(4 * _block_cols(d, sram_bytes, bytes), 3 * d + 4))


def _online_softmax_sum(logits: tuple[float, ...], block: int) -> float:
    """The softmax's denominator relative to the row max, sum_j e^(s_j - max s), summed at once (the online recurrence
    over blocks of ``block`` logits must give the same; the split does not enter this direct sum)."""
    top = max(logits)
    return math.fsum(math.exp(s - top) for s in logits)


def _matmul_flops(a: int, b: int, c: int) -> int:
    return 2 * a * b * c


def _attention_matmul_flops(n: int, d: int) -> dict[str, int]:
    """One head's products: forward S = Q K^T and O = P V; standard backward dV = P^T dO, dP = dO V^T, dQ = dS K,
    dK = dS^T Q; FlashAttention's backward also recomputes S = Q K^T (Dao et al. 2022, section 3.1)."""
    S, PV = _matmul_flops(n, d, n), _matmul_flops(n, n, d)
    dV, dP, dQ, dK = _matmul_flops(n, n, d), _matmul_flops(n, d, n), _matmul_flops(n, n, d), _matmul_flops(n, n, d)
    forward, backward = S + PV, dV + dP + dQ + dK
    return {"forward": forward, "backward": backward, "flash_backward": backward + S}


def _causal_blocks_skipped(t: int, bq: int, bk: int) -> float:
    """Tiles (query block i, key block j) whose first key comes after their last query (T_q = T_k = t)."""
    return float(sum(1 for r0 in range(0, t, bq) for c0 in range(0, t, bk) if c0 > min(r0 + bq, t) - 1))


def _probabilities_bytes(n: int, heads: int, bytes: int) -> int:
    return heads * n * n * bytes


def _flash_saved_bytes(n: int, d: int, heads: int, bytes: int, stats_bytes: int) -> int:
    """O (n x d per head) and one logsumexp per row and head."""
    return heads * n * d * bytes + heads * n * stats_bytes


# the largest finite values (IEEE 754): fp32 (2 - 2^-23) 2^127, fp16 (2 - 2^-10) 2^15
_FLOAT_MAX = {"float32": (2 - 2.0**-23) * 2.0**127, "float16": (2 - 2.0**-10) * 2.0**15}

REFERENCES["hbm_elements"] = _hbm_elements
REFERENCES["hbm_score_share_pct"] = lambda n, d: 100 * 4 * n * n / _hbm_elements(n, d, "standard")
REFERENCES["standard_hbm_mib"] = lambda n, d, bytes: _hbm_elements(n, d, "standard") * bytes / 2**20
REFERENCES["qkvo_mib"] = lambda n, d, bytes: 4 * n * d * bytes / 2**20  # read Q, K, V; write O
REFERENCES["sram_elements"] = lambda sram_bytes, bytes: float(sram_bytes // bytes)
REFERENCES["flash_block_size"] = _flash_block_size
REFERENCES["flash_key_blocks"] = lambda n, d, sram_bytes, bytes: float(
    math.ceil(Fraction(n, _block_cols(d, sram_bytes, bytes)))
)
REFERENCES["hbm_ratio"] = lambda n, d, sram_bytes, bytes: (
    _hbm_elements(n, d, "standard") / _hbm_elements(n, d, "flash", sram_bytes, bytes)
)
REFERENCES["hbm_ratio_limit"] = _hbm_ratio_limit
REFERENCES["online_softmax_sum"] = _online_softmax_sum
REFERENCES["online_rescale"] = lambda m_old, m_new: math.exp(m_old - m_new)
REFERENCES["exp_overflow_x"] = lambda dtype: math.log(_FLOAT_MAX[dtype])
REFERENCES["probabilities_gib"] = lambda n, heads, bytes: _probabilities_bytes(n, heads, bytes) / 2**30
REFERENCES["flash_saved_mib"] = lambda n, d, heads, bytes, stats_bytes: (
    _flash_saved_bytes(n, d, heads, bytes, stats_bytes) / 2**20
)
REFERENCES["logsumexp_kib"] = lambda n, heads, stats_bytes: heads * n * stats_bytes / 2**10
REFERENCES["saved_ratio"] = lambda n, d, heads, bytes, stats_bytes: (
    _probabilities_bytes(n, heads, bytes) / _flash_saved_bytes(n, d, heads, bytes, stats_bytes)
)
REFERENCES["attention_forward_flops"] = lambda n, d: float(_attention_matmul_flops(n, d)["forward"])
REFERENCES["attention_forward_flops_ratio"] = lambda n_from, n_to, d: (
    _attention_matmul_flops(n_to, d)["forward"] / _attention_matmul_flops(n_from, d)["forward"]
)
REFERENCES["flash_backward_forward_flops"] = lambda n, d: (
    _attention_matmul_flops(n, d)["flash_backward"] / _attention_matmul_flops(n, d)["forward"]
)
REFERENCES["recompute_extra_flops_pct"] = lambda n, d: (
    100
    * (
        (_attention_matmul_flops(n, d)["forward"] + _attention_matmul_flops(n, d)["flash_backward"])
        / (_attention_matmul_flops(n, d)["forward"] + _attention_matmul_flops(n, d)["backward"])
        - 1
    )
)
REFERENCES["causal_blocks_skipped"] = _causal_blocks_skipped
# a decode step, one head: K and V of n cached tokens (n x d each) against one row of n scores
REFERENCES["decode_kv_elements"] = lambda n, d: float(2 * n * d)
REFERENCES["decode_kv_over_scores"] = lambda n, d: 2 * n * d / n
UNITS["hbm_score_share_pct"] = Fraction(1, 100)
UNITS["recompute_extra_flops_pct"] = Fraction(1, 100)
UNITS["standard_hbm_mib"] = Fraction(2**20)
UNITS["qkvo_mib"] = Fraction(2**20)
UNITS["flash_saved_mib"] = Fraction(2**20)
UNITS["probabilities_gib"] = Fraction(2**30)
UNITS["logsumexp_kib"] = Fraction(2**10)


# -- moe (topic owner: moe; moe-01 .. -07): top-k gating and its gradient (softmax written out, the derivative of a
# renormalised gate by its closed form), Switch's capacity and balance loss (Fedus et al. 2022, eq. 3-6) counted
# token by token, DeepSeek-V3's biased selection and unbiased gates (DeepSeek-AI 2024, §2.1.2, eq. 13-16), DeepSeekMoE's
# combinations (math.comb and a product formula), parameters from the released configs term by term, and the
# expert-parallel all-to-all payload per token (2 k D values, dispatch and combine). Plain Python: no numpy, no core.


def _softmax(logits: tuple[float, ...]) -> list[float]:
    top = max(logits)
    e = [math.exp(z - top) for z in logits]
    total = math.fsum(e)
    return [x / total for x in e]


def _top_k(scores: tuple[float, ...], k: int) -> list[int]:
    """Indices of the k largest scores, best first, ties to the lower index."""
    return sorted(range(len(scores)), key=lambda e: (-scores[e], e))[:k]


def _moe_router_prob(logits: tuple[float, ...], index: int) -> float:
    """p_e = softmax(z)_e (Switch eq. 1)."""
    return _softmax(logits)[index]


def _moe_topk_gate(logits: tuple[float, ...], k: int, rank: int) -> float:
    """The gate of the rank-th selected expert (0 = best) renormalised over the k selected: p_e / sum_{j in S} p_j,
    which equals a softmax over the k selected logits alone (Mixtral: Softmax(TopK(x W_g)))."""
    sel = _top_k(logits, k)
    z = [logits[e] for e in sel]
    return _softmax(tuple(z))[rank]


def _moe_gate_grad(logits: tuple[float, ...], k: int, rank: int, wrt: int) -> float:
    """d g_i / d z_j for the renormalised gate of the rank-th selected expert i: g_i (1[i = j] - g_j) when j is
    selected, 0 when it is not (the unselected logits do not enter the gates)."""
    sel = _top_k(logits, k)
    if wrt not in sel:
        return 0.0
    g = _softmax(tuple(logits[e] for e in sel))
    i, j = rank, sel.index(wrt)
    return g[i] * ((1.0 if i == j else 0.0) - g[j])


def _moe_capacity(tokens: int, experts: int, top_k: int, cf: float) -> float:
    """C = ceil(cf T k / E) slots per expert (Switch eq. 3 with k assignments per token, rounded up), exactly."""
    return float(math.ceil(Fraction(str(cf)) * tokens * top_k / experts))


def _moe_dropped(choices: tuple[int, ...], n_experts: int, cf: float) -> float:
    """Top-1 assignments over capacity: tokens in order, each expert keeps its first C and drops the rest."""
    cap = _moe_capacity(len(choices), n_experts, 1, cf)
    seen = [0] * n_experts
    dropped = 0
    for e in choices:
        seen[e] += 1
        dropped += seen[e] > cap
    return float(dropped)


def _moe_aux_loss(probs: tuple[float, ...], n_experts: int, top_k: int = 1, form: str = "switch") -> float:
    """E sum_e f_e P_e (Switch eq. 4-6 without alpha) with each token's top-k of its own probabilities: f_e = count_e
    / (T k) ("switch") or count_e / T ("hf_topk", transformers' load_balancing_loss_func), P_e = mean_t p_{t,e}.
    ``probs``: the T rows of E router probabilities, one after another (row-major)."""
    E = n_experts
    probs = tuple(tuple(probs[t * E : (t + 1) * E]) for t in range(len(probs) // E))
    T = len(probs)
    counts = [0] * E
    for row in probs:
        for e in _top_k(row, top_k):
            counts[e] += 1
    per = T * top_k if form == "switch" else T
    P = [math.fsum(row[e] for row in probs) / T for e in range(E)]
    return E * math.fsum(Fraction(counts[e], per) * P[e] for e in range(E))


def _moe_bias_gate(affinities: tuple[float, ...], bias: tuple[float, ...], k: int, rank: int) -> float:
    """DeepSeek-V3 (eq. 13, 16): select the top-k of s + b, gate with the unbiased s normalised over the selected."""
    sel = _top_k(tuple(s + b for s, b in zip(affinities, bias, strict=True)), k)
    return affinities[sel[rank]] / math.fsum(affinities[e] for e in sel)


def _moe_bias_expert(affinities: tuple[float, ...], bias: tuple[float, ...], k: int, rank: int) -> float:
    """The index of the rank-th expert that s + b selects."""
    return float(_top_k(tuple(s + b for s, b in zip(affinities, bias, strict=True)), k)[rank])


def _moe_bias_steps(shift: float, gamma: float) -> float:
    """Steps of +-gamma a bias needs to move by ``shift`` (one step of gamma per training step at most)."""
    return float(math.ceil(Fraction(str(shift)) / Fraction(str(gamma))))


def _moe_combinations(experts: int, top_k: int, m: int = 1) -> float:
    """C(m E, m k), the expert sets a token can use, as the product (n - k + 1) ... n / k! (DeepSeekMoE §3.1)."""
    n, k = m * experts, m * top_k
    return float(Fraction(math.prod(range(n - k + 1, n + 1)), math.prod(range(1, k + 1))))


# Mixtral-8x7B's config.json (mistralai/Mixtral-8x7B-v0.1): layers, hidden, query heads, KV heads, head dim, expert
# intermediate size, vocabulary, experts, experts per token; untied embeddings, no biases, a bias-free router
MIXTRAL_CONFIG: tuple[int, int, int, int, int, int, int, int, int] = (32, 4096, 32, 8, 128, 14336, 32000, 8, 2)


def _mixtral_params(active: bool = False) -> int:
    """Per layer: W_q, W_o (D x 32*128 each), W_k, W_v (D x 8*128 each); E (or k) SwiGLU experts of 3 D F; the router
    D x E; two RMSNorm gains (2 D). Then the input and output embeddings (2 V D) and the final norm (D)."""
    L, D, H, K, hd, F, V, E, k = MIXTRAL_CONFIG
    attention = 2 * D * H * hd + 2 * D * K * hd
    experts = (k if active else E) * 3 * D * F
    router = D * E
    norms = 2 * D
    return L * (attention + experts + router + norms) + 2 * V * D + D


# DeepSeek-V3's sizes as its authors state them (DeepSeek-AI 2024, arXiv 2412.19437, abstract and §4.2; model card)
DEEPSEEK_V3_PUBLISHED: tuple[float, float] = (671e9, 37e9)


def _moe_expert_params(d_model: int, d_expert: int, experts: int = 1) -> float:
    """``experts`` SwiGLU experts of width d_e: W_gate and W_up (D x d_e) and W_down (d_e x D) each, no biases."""
    return float(experts * 3 * d_model * d_expert)


def _moe_a2a_bytes(
    d_model: int,
    top_k: int,
    dispatch_bytes: float = 2,
    combine_bytes: float = 2,
    ep: int | None = None,
    layers: int = 1,
) -> float:
    """One token's payload over the expert-parallel all-to-all, forward: its D values sent to each of its k experts
    (dispatch) and the k outputs sent back (combine), k D (b_dispatch + b_combine) bytes per MoE layer; with ``ep``
    devices and uniform routing a selected expert is remote with probability (ep - 1) / ep."""
    remote = Fraction(1) if ep is None else Fraction(ep - 1, ep)
    per_layer = top_k * remote * d_model * (Fraction(str(dispatch_bytes)) + Fraction(str(combine_bytes)))
    return float(layers * per_layer)


REFERENCES["moe_router_prob"] = _moe_router_prob
REFERENCES["moe_topk_gate"] = _moe_topk_gate
REFERENCES["moe_gate_grad"] = _moe_gate_grad
REFERENCES["moe_capacity"] = _moe_capacity
REFERENCES["moe_dropped"] = _moe_dropped
REFERENCES["moe_aux_loss"] = _moe_aux_loss
REFERENCES["moe_bias_gate"] = _moe_bias_gate
REFERENCES["moe_bias_expert"] = _moe_bias_expert
REFERENCES["moe_bias_steps"] = _moe_bias_steps
REFERENCES["moe_combinations"] = _moe_combinations
REFERENCES["moe_expert_params"] = _moe_expert_params
REFERENCES["mixtral_params"] = lambda active=False: float(_mixtral_params(active))
REFERENCES["mixtral_weight_bytes"] = lambda bytes: float(_mixtral_params() * bytes)
# forward FLOPs of the weights one token uses: 2 per active parameter (no attention-score term)
# 2 FLOPs (a multiply and an add) per active weight that multiplies: the input embedding (V D) is a lookup
REFERENCES["mixtral_active_flops"] = lambda: float(
    2 * (_mixtral_params(active=True) - MIXTRAL_CONFIG[6] * MIXTRAL_CONFIG[1])
)
REFERENCES["deepseek_v3_total_over_active"] = lambda: DEEPSEEK_V3_PUBLISHED[0] / DEEPSEEK_V3_PUBLISHED[1]
REFERENCES["moe_a2a_bytes"] = _moe_a2a_bytes


def _moe_a2a_device_bytes(
    d_model: int, top_k: int, experts: int, ep: int, dispatch_bytes: float = 2, combine_bytes: float = 2
) -> float:
    """The same payload when a token is sent once to each remote device holding one or more of its experts (and one
    partial sum comes back from each): E/P experts per device, the k experts a uniform k-subset of E. A device holds
    none of them with probability C(E - E/P, k) / C(E, k), counted here as a product of ratios, so the expected
    remote devices are (P - 1)(1 - that)."""
    per = experts // ep
    miss = Fraction(1)
    for i in range(top_k):  # C(E - E/P, k) / C(E, k) = prod_i (E - E/P - i) / (E - i)
        miss *= Fraction(experts - per - i, experts - i)
    devices = (ep - 1) * (1 - miss)
    return float(devices * d_model * (Fraction(str(dispatch_bytes)) + Fraction(str(combine_bytes))))


REFERENCES["moe_a2a_device_bytes"] = _moe_a2a_device_bytes


# -- training_lab (topic owner: training_lab; training_lab-01 .. -08): units of a byte-level loss (nats, bits,
# perplexity), the tiny GPT's corpus split and byte frequencies read from the corpus file itself (no project module),
# its shipped schedule (linear warm-up from peak/W, cosine to 10%: the _lr above), Adam's moments written out
# (Kingma & Ba 2015, Algorithm 1 and §2.1, §3), clipping by the global norm (Pascanu et al. 2013, Algorithm 1),
# decoupled weight decay as torch's AdamW applies it (theta <- theta (1 - lr lambda)), Goyal et al.'s linear scaling
# rule and GPT-2's 1/sqrt(2L) residual initialisation. Plain Python and numpy.

_TINY_CORPUS = Path(__file__).resolve().parents[1] / "core" / "data" / "tiny_corpus.txt"
# the tiny GPT's split (docs/tiny_gpt.md): 4096-byte chunks, chunk i held out when i % 10 == 9
_TINY_CHUNK, _TINY_EVERY = 4096, 10


def _tiny_split(split: str) -> bytes:
    data = _TINY_CORPUS.read_bytes()
    chunks = [data[i : i + _TINY_CHUNK] for i in range(0, len(data), _TINY_CHUNK)]
    held = split == "val"
    return b"".join(c for i, c in enumerate(chunks) if (i % _TINY_EVERY == _TINY_EVERY - 1) == held)


def _tiny_corpus_bytes(split: str) -> float:
    return float(len(_tiny_split(split)))


def _tiny_unigram_nats(split: str = "train") -> float:
    """The entropy of the split's byte frequencies, nats per byte: the loss of a model that ignores the context and
    predicts each byte with its frequency (scipy.stats.entropy of the byte counts)."""
    counts = np.bincount(np.frombuffer(_tiny_split(split), dtype=np.uint8), minlength=256)
    return float(stats.entropy(counts[counts > 0]))


def _tiny_passes(steps: int, batch: int, ctx: int) -> float:
    """Bytes read by training (steps x batch x ctx predicted bytes) over the training split's size."""
    return steps * batch * ctx / _tiny_corpus_bytes("train")


def _tiny_lr(step: int, steps: int = 600, warmup: int = 30, peak: float = 3e-3, final_lr_frac: float = 0.1) -> float:
    """The learning rate at ``step`` (1-based) of a linear warm-up then cosine to final_lr_frac (the _lr above)."""
    return peak * _lr("cosine", steps, warmup, final_lr_frac, None, "linear")[step - 1]


def _weight_decay_shrink(
    wd: float, steps: int = 600, warmup: int = 30, peak: float = 3e-3, final_lr_frac: float = 0.1
) -> float:
    """What is left of a weight that gets no gradient after the run: prod_t (1 - lr_t wd) (torch's AdamW)."""
    out = 1.0
    for s in range(1, steps + 1):
        out *= 1 - _tiny_lr(s, steps, warmup, peak, final_lr_frac) * wd
    return out


def _adam_uncorrected_factor(beta1: float, beta2: float, t: int) -> float:
    """Adam's step without bias correction over the corrected one, for a steady gradient: m_t / sqrt(v_t) with
    m_t = (1 - beta1^t) g and v_t = (1 - beta2^t) g^2 (Kingma & Ba 2015, §3), against m_hat / sqrt(v_hat) = 1."""
    return (1 - beta1**t) / math.sqrt(1 - beta2**t)


def _adam_spike(field: str, spike: float, beta1: float = 0.9, beta2: float = 0.95) -> float:
    """One coordinate whose gradient has been 1 long enough that m = v = 1 (bias corrections ~1), then one gradient
    of ``spike``: the step over the learning rate ("step", eps = 0) and the new v ("v")."""
    m = beta1 + (1 - beta1) * spike
    v = beta2 + (1 - beta2) * spike**2
    return {"step": m / math.sqrt(v), "v": v}[field]


def _clip_scale(norm: float, max_norm: float) -> float:
    """The factor clipping by global norm applies: min(1, c / ||g||)."""
    return min(1.0, max_norm / norm)


def _clipped_component(grads: tuple[float, ...], max_norm: float, index: int) -> float:
    norm = math.sqrt(math.fsum(g * g for g in grads))
    return grads[index] * _clip_scale(norm, max_norm)


def _global_norm(norms: tuple[float, ...]) -> float:
    """||g|| = sqrt(sum_l ||g_l||^2) from per-layer norms."""
    return math.sqrt(math.fsum(n * n for n in norms))


REFERENCES["nats_to_bits"] = lambda nats: nats / math.log(2)
REFERENCES["prob_to_nats"] = lambda p: -math.log(p)
REFERENCES["tiny_corpus_bytes"] = _tiny_corpus_bytes
REFERENCES["tiny_unigram_nats"] = _tiny_unigram_nats
REFERENCES["tiny_passes"] = _tiny_passes
REFERENCES["tiny_lr"] = _tiny_lr
REFERENCES["weight_decay_shrink"] = _weight_decay_shrink
REFERENCES["ema_window"] = lambda beta: 1 / (1 - beta)  # sum_k beta^k, the EMA's effective number of steps
REFERENCES["adam_uncorrected_factor"] = _adam_uncorrected_factor
REFERENCES["adam_spike"] = _adam_spike
REFERENCES["clip_scale"] = _clip_scale
REFERENCES["clipped_component"] = _clipped_component
REFERENCES["global_norm"] = _global_norm
REFERENCES["norm_share_pct"] = lambda norms, index: 100 * norms[index] ** 2 / _global_norm(norms) ** 2
REFERENCES["linear_scaling_lr"] = lambda base_lr, batch, base_batch: base_lr * batch / base_batch  # Goyal et al.
REFERENCES["residual_init_std"] = lambda std, layers: std / math.sqrt(2 * layers)  # GPT-2, 2 residual layers a block
# bits per byte from a per-token loss: L_token N_tokens / (N_bytes ln 2), N_bytes / N_tokens = bytes_per_token
REFERENCES["bits_per_byte_from_tokens"] = lambda nats_per_token, bytes_per_token: (
    nats_per_token / (bytes_per_token * math.log(2))
)
# an ideal arithmetic coder driven by the model: bits per byte over the 8 bits of a raw byte, in percent
REFERENCES["ideal_code_share_pct"] = lambda nats: 100 * nats / math.log(2) / 8
UNITS["norm_share_pct"] = Fraction(1, 100)
UNITS["ideal_code_share_pct"] = Fraction(1, 100)
# the shipped run's settings as docs/tiny_gpt.md states them (30 warm-up steps of 600; matrices start at N(0, 0.02^2))
TINY_SHIPPED = {"warmup": 30, "steps": 600, "init_std": 0.02}
REFERENCES["shipped_warmup_pct"] = lambda: 100 * TINY_SHIPPED["warmup"] / TINY_SHIPPED["steps"]
REFERENCES["lr_over_init_std"] = lambda lr: lr / TINY_SHIPPED["init_std"]
REFERENCES["decay_per_step"] = lambda lr, wd: lr * wd  # torch's AdamW: theta <- theta (1 - lr wd) before the step
UNITS["shipped_warmup_pct"] = Fraction(1, 100)


# -- number_formats (topic owner: number_formats; number_formats-01 .. -06): every limit from torch.finfo or from
# torch's own reading of a bit pattern, every rounding by torch's own cast or bf16/fp16 arithmetic (torch 2.13, CPU),
# GradScaler's rule by torch's own _amp_update_scale_ with the defaults read from torch.amp.GradScaler's signature,
# softmax, logsumexp, log_softmax and cross-entropy by torch's functions. Formats are named as the lesson names them.

_TORCH_FORMATS = {
    "fp32": "float32",
    "bf16": "bfloat16",
    "fp16": "float16",
    "fp8 E4M3": "float8_e4m3fn",
    "fp8 E5M2": "float8_e5m2",
}


def _fmt_dtype(fmt: str) -> Any:
    import torch

    return getattr(torch, _TORCH_FORMATS[fmt])


def _fmt_cast_torch(x: float, fmt: str) -> Any:
    """x (float64) cast by torch to the format, as a 0-d tensor of that format."""
    import torch

    return torch.tensor(float(x), dtype=torch.float64).to(_fmt_dtype(fmt))


def _fmt_largest(fmt: str) -> float:
    import torch

    return float(torch.finfo(_fmt_dtype(fmt)).max)


def _fmt_smallest_normal(fmt: str) -> float:
    import torch

    return float(torch.finfo(_fmt_dtype(fmt)).smallest_normal)


def _fmt_smallest_subnormal(fmt: str) -> float:
    """The bit pattern 0...01 (the smallest positive code) read as the format by torch."""
    import torch

    dtype = _fmt_dtype(fmt)
    ints = {8: torch.uint8, 16: torch.int16, 32: torch.int32}[torch.finfo(dtype).bits]
    return float(torch.tensor([1], dtype=ints).view(dtype).to(torch.float64)[0])


def _fmt_unit_roundoff_pct(fmt: str) -> float:
    """Round to nearest errs by at most half the spacing at 1 (torch.finfo's eps), in percent of the value."""
    import torch

    return 100 * torch.finfo(_fmt_dtype(fmt)).eps / 2


def _fmt_cast(x: float, fmt: str) -> float:
    import torch

    return float(_fmt_cast_torch(x, fmt).to(torch.float64))


def _fmt_cast_error_pct(x: float, fmt: str) -> float:
    return 100 * abs(_fmt_cast(x, fmt) - x) / abs(x)


def _fmt_spacing(x: float, fmt: str) -> float:
    """The gap from x (cast to the format) to the next value up, by torch.nextafter in that format."""
    import torch

    t = _fmt_cast_torch(x, fmt)
    up = torch.nextafter(t, torch.tensor(float("inf"), dtype=t.dtype))
    return float(up.to(torch.float64) - t.to(torch.float64))


def _fmt_add(a: float, b: float, fmt: str) -> float:
    """a + b with both operands and the sum in the format (torch's arithmetic on tensors of that dtype)."""
    import torch

    return float((_fmt_cast_torch(a, fmt) + _fmt_cast_torch(b, fmt)).to(torch.float64))


def _fmt_running_sum(increment: float, fmt: str, steps: int = 100_000) -> float:
    """s <- s + increment in the format, ``steps`` times from 0 (stopping early once an addition leaves s unchanged,
    after which every further one would too)."""
    s, inc = _fmt_cast_torch(0.0, fmt), _fmt_cast_torch(increment, fmt)
    for _ in range(steps):
        nxt = s + inc
        if bool(nxt == s):
            break
        s = nxt
    return float(s)


def _fmt_naive_mean_square(d: int, value: float, fmt: str) -> float:
    """The mean of d squares, all value^2, summed one after another in the format (a naive accumulator), over d."""
    return _fmt_running_sum(value * value, fmt, d) / d


def _fmt_scaler_default(name: str) -> float:
    import inspect

    import torch

    return float(inspect.signature(torch.amp.GradScaler.__init__).parameters[name].default)


def _fmt_scaler_scale(overflows: int, good: int) -> float:
    """GradScaler's scale after ``overflows`` steps with an inf in the gradients, then ``good`` steps without: torch's
    own update (torch._amp_update_scale_, what GradScaler.update calls) from GradScaler's defaults."""
    import torch

    scale = torch.full((1,), _fmt_scaler_default("init_scale"))
    tracker = torch.zeros(1, dtype=torch.int32)
    growth, backoff = _fmt_scaler_default("growth_factor"), _fmt_scaler_default("backoff_factor")
    interval = int(_fmt_scaler_default("growth_interval"))
    for found_inf in [1.0] * overflows + [0.0] * good:
        torch._amp_update_scale_(scale, tracker, torch.full((1,), found_inf), growth, backoff, interval)
    return float(scale[0])


def _fmt_softmax_prob(logits: tuple[float, ...], index: int, fmt: str) -> float:
    """torch.softmax (which subtracts the max) on the logits cast to the format."""
    import torch

    z = torch.tensor(logits, dtype=torch.float64).to(_fmt_dtype(fmt))
    return float(torch.softmax(z, dim=-1)[index].to(torch.float64))


def _fmt_naive_softmax_prob(logits: tuple[float, ...], index: int, fmt: str) -> float:
    """softmax without the max subtracted, by torch's own ops in the format: each exp and their sum stored in it
    (an inf sum makes every finite share 0; an inf exp makes its share inf/inf = NaN)."""
    import torch

    dt = _fmt_dtype(fmt)
    e = torch.exp(torch.tensor(logits, dtype=torch.float64).to(dt).to(torch.float64)).to(dt)
    s = e.to(torch.float64).sum().to(dt)
    return float((e.to(torch.float64) / s.to(torch.float64)).to(dt)[index].to(torch.float64))


def _fmt_exp(x: float) -> float:
    return math.exp(x)


def _fmt_logsumexp(logits: tuple[float, ...]) -> float:
    import torch

    return float(torch.logsumexp(torch.tensor(logits, dtype=torch.float64), dim=-1))


def _fmt_log_softmax(logits: tuple[float, ...], index: int) -> float:
    import torch

    return float(torch.log_softmax(torch.tensor(logits, dtype=torch.float32), dim=-1)[index])


def _fmt_cross_entropy_nats(logits: tuple[float, ...], target: int) -> float:
    import torch

    z = torch.tensor([logits], dtype=torch.float32)
    return float(torch.nn.functional.cross_entropy(z, torch.tensor([target])))


def _fmt_inf_from(fmt: str) -> float:
    """The largest finite value plus half the gap from the value below it (torch.nextafter toward 0)."""
    import torch

    top = torch.tensor(torch.finfo(_fmt_dtype(fmt)).max, dtype=_fmt_dtype(fmt))
    below = torch.nextafter(top, torch.zeros((), dtype=top.dtype))
    t, b = float(top.to(torch.float64)), float(below.to(torch.float64))
    return t + (t - b) / 2


def _fmt_min_relative_half_spacing_pct(fmt: str) -> float:
    """At the format's largest value below 2 (torch.nextafter from 2 toward 0): half the gap above it, over it."""
    import torch

    two = torch.tensor(2.0, dtype=_fmt_dtype(fmt))
    w = torch.nextafter(two, torch.zeros((), dtype=two.dtype))
    return 100 * _fmt_spacing(float(w.to(torch.float64)), fmt) / 2 / float(w.to(torch.float64))


def _fmt_ema_step_pct(beta: float) -> float:
    """torch.optim.Adam's own update of exp_avg_sq (v, stored without bias correction): v set to 1 after a first step,
    then one step with g^2 = 2; the change over v, in percent, is (1 - beta2)(g^2 - v) / v = 1 - beta2."""
    import torch

    w = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    opt = torch.optim.Adam([w], lr=0.0, betas=(0.9, beta))
    w.grad = torch.full((1,), math.sqrt(2.0), dtype=torch.float64)
    opt.step()
    opt.state[w]["exp_avg_sq"].fill_(1.0)
    opt.step()
    return 100 * (float(opt.state[w]["exp_avg_sq"][0]) - 1.0)


_FMT_NPZ = Path(__file__).resolve().parents[1] / "core" / "data" / "number_formats.npz"


def _fmt_tiny_grad_pct(pct: float) -> float:
    """The shipped npz's weight-gradient percentiles, read with numpy, at the percentile it lists."""
    with np.load(_FMT_NPZ, allow_pickle=False) as z:
        return float(z["grad/pct"][list(z["percentiles"]).index(pct)])


REFERENCES["fmt_largest"] = _fmt_largest
REFERENCES["fmt_smallest_normal"] = _fmt_smallest_normal
REFERENCES["fmt_smallest_subnormal"] = _fmt_smallest_subnormal
REFERENCES["fmt_unit_roundoff_pct"] = _fmt_unit_roundoff_pct
REFERENCES["fmt_cast"] = _fmt_cast
REFERENCES["fmt_cast_error_pct"] = _fmt_cast_error_pct
REFERENCES["fmt_spacing"] = _fmt_spacing
REFERENCES["fmt_half_spacing"] = lambda x, fmt: _fmt_spacing(x, fmt) / 2
REFERENCES["fmt_add"] = _fmt_add
# the decades a format spans, its largest finite value over its smallest subnormal
REFERENCES["fmt_decades"] = lambda fmt: math.log10(_fmt_largest(fmt) / _fmt_smallest_subnormal(fmt))
# e^x is inf once it reaches where a cast gives inf: the largest finite value plus half the gap below it (the tie
# goes to the even 2^(emax+1), which is inf)
REFERENCES["fmt_inf_from"] = _fmt_inf_from
REFERENCES["fmt_exp_overflow"] = lambda fmt: math.log(_fmt_inf_from(fmt))
# half the gap at the largest value below 2, over that value: the smallest relative half-spacing, in percent
REFERENCES["fmt_min_relative_half_spacing_pct"] = _fmt_min_relative_half_spacing_pct
REFERENCES["fmt_ema_step_pct"] = _fmt_ema_step_pct
REFERENCES["fmt_tiny_grad_pct"] = _fmt_tiny_grad_pct
REFERENCES["fmt_running_sum"] = _fmt_running_sum
REFERENCES["fmt_naive_mean_square"] = _fmt_naive_mean_square
# RMSNorm's output over the right one: the true RMS over the naive one
REFERENCES["fmt_naive_rms_factor"] = lambda d, value, fmt: math.sqrt(
    value * value / _fmt_naive_mean_square(d, value, fmt)
)
REFERENCES["fmt_scaler_default"] = _fmt_scaler_default
REFERENCES["fmt_scaler_scale"] = _fmt_scaler_scale
REFERENCES["fmt_softmax_prob"] = _fmt_softmax_prob
REFERENCES["fmt_logsumexp"] = _fmt_logsumexp
REFERENCES["fmt_naive_softmax_prob"] = _fmt_naive_softmax_prob
REFERENCES["fmt_exp"] = _fmt_exp
REFERENCES["fmt_log_softmax"] = _fmt_log_softmax
REFERENCES["fmt_cross_entropy_nats"] = _fmt_cross_entropy_nats
UNITS["fmt_unit_roundoff_pct"] = Fraction(1, 100)
UNITS["fmt_cast_error_pct"] = Fraction(1, 100)
UNITS["fmt_ema_step_pct"] = Fraction(1, 100)
UNITS["fmt_min_relative_half_spacing_pct"] = Fraction(1, 100)


# -- optimizers (topic owner: optimizers; optimizers-01 .. -07): one-parameter steps through torch.optim's own Adam,
# AdamW, SGD and RAdam; the L2-regularised minimum of the page's valley by scipy; SGD's and the heavy ball's rates on a
# quadratic from the roots of each eigen-direction's characteristic polynomial (numpy.roots), not from the closed
# forms; Adam's moments run from zero as recurrences (Kingma & Ba 2015, Algorithm 1); the weights of v-hat summed one
# by one; LayerNorm and RMSNorm by torch.nn on the page's seeded vector; the shipped pre-/post-LN and muP arrays read
# from core/data/optimizers.npz with numpy alone, as the page reads them (no core).

_OPT_NPZ = Path(__file__).resolve().parents[1] / "core" / "data" / "optimizers.npz"


def _opt_shipped(key: str) -> np.ndarray:
    with np.load(_OPT_NPZ, allow_pickle=False) as z:
        return np.asarray(z[key])


def _torch_first_step(optimizer: str, theta: float, grad: float, lr: float, wd: float) -> float:
    """How far one step of torch.optim.Adam (weight_decay: L2 in the gradient) or AdamW (decoupled) moves a single
    weight at ``theta`` whose loss gradient is ``grad`` (betas 0.9, 0.999, eps 1e-8)."""
    import torch

    w = torch.tensor([float(theta)], dtype=torch.float64, requires_grad=True)
    cls = {"adam_l2": torch.optim.Adam, "adamw": torch.optim.AdamW}[optimizer]
    opt = cls([w], lr=lr, weight_decay=wd)
    w.grad = torch.tensor([float(grad)], dtype=torch.float64)
    opt.step()
    return float(theta - w.detach()[0])


def _valley_l2_minimum(wd: float, field: str) -> float:
    """The minimiser of the page's valley plus the L2 term, (1 - x)^2 + 10 (y - x^2)^2 + (wd / 2)(x^2 + y^2), by
    scipy: its x, its y, or the valley's own loss there ("loss")."""

    def f(p):
        return (1 - p[0]) ** 2 + 10 * (p[1] - p[0] ** 2) ** 2

    res = optimize.minimize(lambda p: f(p) + wd / 2 * (p[0] ** 2 + p[1] ** 2), [0.5, 0.5], tol=1e-12)
    return {"x": float(res.x[0]), "y": float(res.x[1]), "loss": float(f(res.x))}[field]


def _bowl_eigenvalues(kappa: float) -> tuple[float, float]:
    """The bowl f = (1/2)(kappa x^2 + y^2): Hessian eigenvalues kappa and 1."""
    return float(kappa), 1.0


def _radius(lam: float, lr: float, momentum: float = 0.0) -> float:
    """The spectral radius of one eigen-direction under torch's SGD (v <- mu v + g, theta <- theta - lr v): the largest
    root modulus of z^2 - (1 + mu - lr lam) z + mu (z - (1 - lr lam) when mu = 0)."""
    coeffs = [1.0, -(1 + momentum - lr * lam), momentum] if momentum else [1.0, -(1 - lr * lam)]
    return float(max(abs(r) for r in np.roots(coeffs)))


def _sgd_stable_limit(kappa: float, momentum: float = 0.0) -> float:
    """The largest learning rate at which every eigen-direction contracts (radius < 1), by bisection on the roots."""
    lo, hi = 0.0, 10.0
    for _ in range(200):
        mid = (lo + hi) / 2
        ok = all(_radius(lam, mid, momentum) < 1 for lam in _bowl_eigenvalues(kappa))
        lo, hi = (mid, hi) if ok else (lo, mid)
    return lo


def _sgd_best_rate(kappa: float) -> float:
    """SGD's best contraction per step over the learning rate (bounded scalar search over the roots' radius)."""
    lam = _bowl_eigenvalues(kappa)
    res = optimize.minimize_scalar(
        lambda lr: max(_radius(x, lr) for x in lam),
        bounds=(0, 2 / max(lam)),
        method="bounded",
        options={"xatol": 1e-12},
    )
    return float(res.fun)


def _heavy_ball_rate(kappa: float) -> float:
    """The heavy ball's best contraction per step over (lr, mu) (Nelder-Mead from several starts over the roots)."""
    lam = _bowl_eigenvalues(kappa)

    def worst(p):
        lr, mu = p
        if not (0 < lr and 0 <= mu < 1):
            return 10.0
        return max(_radius(x, lr, mu) for x in lam)

    starts = [(0.02, 0.5), (0.05, 0.7), (0.06, 0.6), (0.03, 0.9)]
    best = min((optimize.minimize(worst, s, method="Nelder-Mead", options={"xatol": 1e-12, "fatol": 1e-12,
                                                                           "maxiter": 20000}) for s in starts),
               key=lambda r: r.fun)  # fmt: skip
    return float(best.fun)


def _bowl_final_loss(optimizer: str, kappa: float, lr: float, steps: int) -> float:
    """torch.optim's SGD, SGD with momentum 0.9, or Adam (0.9, 0.999) on f = (1/2)(kappa x^2 + y^2) from (-1.5, 1)
    with exact gradients: f after ``steps`` steps."""
    import torch

    p = torch.tensor([-1.5, 1.0], dtype=torch.float64, requires_grad=True)
    scale = torch.tensor([float(kappa), 1.0], dtype=torch.float64)
    opt = {
        "sgd": lambda: torch.optim.SGD([p], lr=lr),
        "momentum": lambda: torch.optim.SGD([p], lr=lr, momentum=0.9),
        "adam": lambda: torch.optim.Adam([p], lr=lr),
    }[optimizer]()
    for _ in range(steps):
        opt.zero_grad()
        (0.5 * (scale * p * p).sum()).backward()
        opt.step()
    with torch.no_grad():
        return float(0.5 * (scale * p * p).sum())


def _adam_uncorrected_peak(beta1: float, beta2: float, field: str, steps: int = 5000) -> float:
    """Over t = 1..steps, the largest uncorrected step m_t / sqrt(v_t) for a steady gradient of 1 (the recurrences run
    from m_0 = v_0 = 0): its size ("value") or its step ("step")."""
    m = v = 0.0
    best, at = -1.0, 0
    for t in range(1, steps + 1):
        m, v = beta1 * m + (1 - beta1), beta2 * v + (1 - beta2)
        if m / math.sqrt(v) > best:
            best, at = m / math.sqrt(v), t
    return float(at) if field == "step" else best


def _adam_n_eff(t: int, beta2: float) -> float:
    """v-hat_t's weights on g_1^2 .. g_t^2 go as beta2^(t - i): (sum w)^2 / sum w^2, summed term by term."""
    w = [beta2 ** (t - i) for i in range(1, t + 1)]
    return math.fsum(w) ** 2 / math.fsum(x * x for x in w)


def _adam_v_rel_std_pct(t: int, beta2: float) -> float:
    """For i.i.d. zero-mean Gaussian gradients, Var(g^2) = 2 E[g^2]^2, so v-hat's relative std is
    sqrt(2 sum w^2) / sum w, in percent."""
    w = [beta2 ** (t - i) for i in range(1, t + 1)]
    return 100 * math.sqrt(2 * math.fsum(x * x for x in w)) / math.fsum(w)


def _radam_first_adaptive_step(beta2: float) -> float:
    """The first step at which RAdam uses its adaptive step: rho_t = rho_inf - 2 t beta2^t / (1 - beta2^t) with
    rho_inf = 2 / (1 - beta2) - 1 (Liu et al. 2020, Algorithm 2), above torch.optim.RAdam's threshold of 5."""
    rho_inf = 2 / (1 - beta2) - 1
    t = 1
    while rho_inf - 2 * t * beta2**t / (1 - beta2**t) <= 5:
        t += 1
    return float(t)


def _norm_stat(which: str, stat: str, shift: float = 2.0, dim: int = 8) -> float:
    """The page's vector (numpy's default_rng(0), ``dim`` standard normals, plus ``shift``), or torch.nn.LayerNorm
    (eps 1e-5) or torch.nn.RMSNorm (eps None: float64's machine epsilon) of it, no affine: its mean or its RMS."""
    import torch

    x = torch.as_tensor(np.random.default_rng(0).standard_normal(dim) + shift, dtype=torch.float64)
    y = {
        "x": lambda: x,
        "layernorm": lambda: torch.nn.LayerNorm(dim, eps=1e-5, elementwise_affine=False, dtype=torch.float64)(x),
        "rmsnorm": lambda: torch.nn.RMSNorm(dim, elementwise_affine=False, dtype=torch.float64)(x),
    }[which]()
    return float(y.mean()) if stat == "mean" else float(torch.sqrt((y * y).mean()))


def _depth_grad(init: str, norm: str, depth: int, block: int) -> float:
    """The shipped gradient norm of one block (0 = first, -1 = last) at initialisation."""
    return float(_opt_shipped(f"grad/{init}/{norm}/L{depth}")[block])


def _mup_best_lr(param: str, width: int) -> float:
    """The sweep's learning rate with the lowest final loss at ``width`` (numpy's nanargmin over the shipped row)."""
    widths = [int(w) for w in _opt_shipped("sweep/widths")]
    row = _opt_shipped(f"sweep/{param}")[widths.index(width)]
    return float(_opt_shipped("sweep/lrs")[int(np.nanargmin(row))])


def _mup_best_loss(param: str, width: int) -> float:
    widths = [int(w) for w in _opt_shipped("sweep/widths")]
    return float(np.nanmin(_opt_shipped(f"sweep/{param}")[widths.index(width)]))


def _mup_coord(param: str, width: int, layer: int = 2, step: int = -1) -> float:
    """The coordinate check's mean |coordinate| (layer 0, 1: the hidden layers, 2: the output) after a step."""
    widths = [int(w) for w in _opt_shipped("coord/widths")]
    return float(_opt_shipped(f"coord/{param}")[widths.index(width), step, layer])


REFERENCES["opt_first_step"] = _torch_first_step
REFERENCES["valley_l2_minimum"] = _valley_l2_minimum
REFERENCES["sgd_stable_limit"] = _sgd_stable_limit
REFERENCES["sgd_best_rate"] = _sgd_best_rate
REFERENCES["heavy_ball_rate"] = _heavy_ball_rate
REFERENCES["bowl_final_loss"] = _bowl_final_loss
REFERENCES["adam_uncorrected_peak"] = _adam_uncorrected_peak
REFERENCES["adam_n_eff"] = _adam_n_eff
REFERENCES["adam_v_rel_std_pct"] = _adam_v_rel_std_pct
REFERENCES["radam_first_adaptive_step"] = _radam_first_adaptive_step
REFERENCES["norm_stat"] = _norm_stat
REFERENCES["depth_grad"] = _depth_grad
REFERENCES["depth_grad_ratio"] = lambda init, num, den, depth, num_block=-1, den_block=-1: (
    _depth_grad(init, num, depth, num_block) / _depth_grad(init, den, depth, den_block)
)
REFERENCES["mup_best_lr"] = _mup_best_lr
REFERENCES["mup_best_loss"] = _mup_best_loss
REFERENCES["mup_coord"] = _mup_coord


def _adam_uncorrected_below_eta(beta1: float, beta2: float, field: str = "count", steps: int = 5000) -> float:
    """With a steady gradient, the uncorrected step m_t / sqrt(v_t) by the moment loop (g = 1): how many of the first
    steps are below eta ("count"), or the first step at or above eta ("first_at_eta")."""
    m = v = 0.0
    for t in range(1, steps + 1):
        m, v = beta1 * m + (1 - beta1), beta2 * v + (1 - beta2)
        if m / math.sqrt(v) >= 1:
            return float(t - 1 if field == "count" else t)
    raise AssertionError("never reached eta")


def _adam_step_bound(t: int, beta1: float, beta2: float) -> float:
    """The largest bias-corrected |m_hat_t / sqrt(v_hat_t)| over all gradient sequences: maximise numerically with
    scipy over g_1..g_t (started from a few seeded points), no closed form."""
    rng = np.random.default_rng(0)

    def neg_step(g):
        m = v = 0.0
        for x in g:
            m, v = beta1 * m + (1 - beta1) * x, beta2 * v + (1 - beta2) * x * x
        return -abs(m / (1 - beta1**t)) / math.sqrt(v / (1 - beta2**t))

    return max(-optimize.minimize(neg_step, rng.standard_normal(t) + 1, tol=1e-12).fun for _ in range(4))


def _mup_loss_at_lr(param: str, width: int, lr_index: int) -> float:
    """The shipped sweep's final loss (the mean over its seeds) at one learning rate of the sweep."""
    widths = [int(w) for w in _opt_shipped("sweep/widths")]
    return float(_opt_shipped(f"sweep/{param}")[widths.index(width), lr_index])


def _adam_m_only_uncorrected(beta1: float, t: int = 1, field: str = "step", level: float = 0.99) -> float:
    """Adam's step over eta with m left uncorrected and v-hat corrected, for a steady gradient of 1: sqrt(v-hat_t) is
    exactly 1, so the step is m_t, by the moment loop from m_0 = 0; ``first_at``: the first step where it reaches
    ``level``."""
    m = 0.0
    for step in range(1, 100_000):
        m = beta1 * m + (1 - beta1)
        if field == "step" and step == t:
            return m
        if field == "first_at" and m >= level:
            return float(step)
    raise AssertionError("not reached")


REFERENCES["adam_m_only_uncorrected"] = _adam_m_only_uncorrected
REFERENCES["adam_beta2_threshold"] = lambda beta1: 1 - (1 - beta1) ** 2  # (1 - b1)/sqrt(1 - b2) > 1 iff b2 > this
REFERENCES["adam_uncorrected_below_eta"] = _adam_uncorrected_below_eta
REFERENCES["adam_step_bound"] = _adam_step_bound
REFERENCES["mup_loss_at_lr"] = _mup_loss_at_lr
UNITS["adam_v_rel_std_pct"] = Fraction(1, 100)
# the limit of n_eff as t grows: (1 + beta2) / (1 - beta2), exactly with fractions
REFERENCES["adam_n_eff_limit"] = lambda beta2: float((1 + Fraction(str(beta2))) / (1 - Fraction(str(beta2))))


# -- policy_gradient (topic owner: policy_gradient; policy_gradient-01 .. -07): REINFORCE on a bandit over K answers
# with a softmax policy over the logits (score e_a - pi: d log pi_a / d theta_k = [a = k] - pi_k). Every moment is an
# exact sum written out with plain loops: over the K answers, or over the K^G ordered groups of G answers, each with
# probability prod pi_{a_i}; the best constant baselines by scipy's minimize_scalar on that sum, not by a formula.


def _pg_score(pi: tuple, a: int, k: int) -> float:
    return (1.0 if a == k else 0.0) - pi[k]


def _pg_advantages(rs: list[float], kind: str, pi: tuple, r: tuple, b: float) -> list[float]:
    """Each sampled answer's weight in its group: the reward minus a baseline (or GRPO's centred and scaled reward)."""
    G = len(rs)
    m = sum(rs) / G
    if kind == "none":
        return list(rs)
    if kind == "constant":
        return [x - b for x in rs]
    if kind == "mean":
        J = sum(p * x for p, x in zip(pi, r, strict=True))
        return [x - J for x in rs]
    if kind == "optimal":
        return [x - _pg_best_constant(pi, r) for x in rs]
    if kind == "group_mean":
        return [x - m for x in rs]
    if kind == "leave_one_out":
        return [x - (sum(rs) - x) / (G - 1) for x in rs]
    if kind == "group_norm":  # population std, no epsilon; an all-equal group has advantage 0
        sd = math.sqrt(sum((x - m) ** 2 for x in rs) / G)
        return [0.0 if sd == 0 else (x - m) / sd for x in rs]
    raise ValueError(f"unknown estimator {kind!r}")


_PG_CACHE: dict[tuple, tuple[list[float], list[list[float]]]] = {}


def _pg_moments(pi, r, kind: str, G: int = 1, b: float = 0.0) -> tuple[list[float], list[list[float]]]:
    """E[g] and Cov[g] of g = (1/G) sum_i A_i (e_{a_i} - pi), summed over every ordered group of G answers."""
    from itertools import product

    pi, r = tuple(float(x) for x in pi), tuple(float(x) for x in r)
    key = (pi, r, kind, G, b)
    if key not in _PG_CACHE:
        K = len(pi)
        mean, second = [0.0] * K, [[0.0] * K for _ in range(K)]
        for group in product(range(K), repeat=G):
            p = math.prod(pi[a] for a in group)
            adv = _pg_advantages([r[a] for a in group], kind, pi, r, b)
            g = [sum(A * _pg_score(pi, a, k) for A, a in zip(adv, group, strict=True)) / G for k in range(K)]
            for k in range(K):
                mean[k] += p * g[k]
                for j in range(K):
                    second[k][j] += p * g[k] * g[j]
        _PG_CACHE[key] = (mean, [[second[k][j] - mean[k] * mean[j] for j in range(K)] for k in range(K)])
    return _PG_CACHE[key]


def _pg_true_gradient(pi, r) -> list[float]:
    """grad J = sum_a pi_a r_a (e_a - pi), the sum itself."""
    return [sum(pi[a] * r[a] * _pg_score(tuple(pi), a, k) for a in range(len(pi))) for k in range(len(pi))]


def _pg_trace(pi, r, kind: str, G: int = 1, b: float = 0.0) -> float:
    cov = _pg_moments(pi, r, kind, G, b)[1]
    return sum(cov[k][k] for k in range(len(pi)))


def _pg_best_constant(pi, r) -> float:
    """The constant b with the lowest tr Cov of one answer's (r_a - b)(e_a - pi), found numerically."""
    pi, r = tuple(pi), tuple(r)
    return float(optimize.minimize_scalar(lambda b: _pg_trace(pi, r, "constant", 1, float(b)), bracket=(-1, 2)).x)


def _pg_trcov(pi, r, estimator: str, G: int = 1, b: float = 0.0, per: str = "abs") -> float:
    """tr Cov[g] of one update of G answers; per="grad": in units of |grad J|^2."""
    tr = _pg_trace(pi, r, estimator, G, b)
    return tr / sum(x * x for x in _pg_true_gradient(pi, r)) if per == "grad" else tr


def _pg_on_grad(pi, r, estimator: str, G: int = 1, field: str = "scale") -> float:
    """E[g] against grad J: the projection <E g, grad J> / |grad J|^2 ("scale"), the cosine, or the projection's mean
    over its own standard deviation along grad J ("snr")."""
    mean, cov = _pg_moments(pi, r, estimator, G)
    grad = _pg_true_gradient(pi, r)
    gg = sum(x * x for x in grad)
    scale = sum(m * x for m, x in zip(mean, grad, strict=True)) / gg
    if field == "scale":
        return scale
    if field == "cosine":
        return scale * math.sqrt(gg) / math.sqrt(sum(m * m for m in mean))
    sd = math.sqrt(sum(grad[k] * cov[k][j] * grad[j] for k in range(len(pi)) for j in range(len(pi)))) / gg
    return scale / sd


def _pg_per_parameter_trcov(pi, r) -> float:
    """tr Cov of one answer when each logit k has its own best constant b_k (each component's variance minimised
    numerically on its own)."""
    K = len(pi)

    def var_k(k: int, b: float) -> float:
        m = sum(pi[a] * (r[a] - b) * _pg_score(tuple(pi), a, k) for a in range(K))
        return sum(pi[a] * ((r[a] - b) * _pg_score(tuple(pi), a, k)) ** 2 for a in range(K)) - m * m

    best = [optimize.minimize_scalar(lambda b, k=k: var_k(k, float(b)), bracket=(-1, 2)) for k in range(K)]
    return sum(float(res.fun) for res in best)


def _pg_baseline_sum(pi, b: float, k: int) -> float:
    """sum_a pi_a b ([a = k] - pi_k) in exact fractions (the probabilities as written, which sum to 1)."""
    P = [Fraction(str(x)) for x in pi]
    assert sum(P) == 1
    B = Fraction(str(b))
    return float(sum(P[a] * B * ((1 if a == k else 0) - P[k]) for a in range(len(P))))


def _pg_norm_binary(p: float, G: int, std: str = "population") -> float:
    """E[g] / grad J for GRPO's mean-and-std advantage with 0/1 rewards: a two-answer bandit (right with probability
    p), every ordered group of G answers; std="sample" rescales each advantage by sqrt((G - 1) / G)."""
    scale = _pg_on_grad((p, 1 - p), (1.0, 0.0), "group_norm", G)
    return scale * (math.sqrt((G - 1) / G) if std == "sample" else 1.0)


REFERENCES["pg_expected_reward"] = lambda pi, r: sum(p * x for p, x in zip(pi, r, strict=True))
REFERENCES["pg_gradient"] = lambda pi, r, k: _pg_true_gradient(pi, r)[k]
REFERENCES["pg_score"] = lambda pi, a, k: _pg_score(tuple(pi), a, k)
REFERENCES["pg_score_sq_norm"] = lambda pi, a: sum(_pg_score(tuple(pi), a, k) ** 2 for k in range(len(pi)))
REFERENCES["pg_score_sq_mean"] = lambda pi: sum(
    pi[a] * sum(_pg_score(tuple(pi), a, k) ** 2 for k in range(len(pi))) for a in range(len(pi))
)
REFERENCES["pg_baseline_term"] = lambda pi, b, a, k: pi[a] * b * _pg_score(tuple(pi), a, k)
REFERENCES["pg_baseline_sum"] = _pg_baseline_sum
REFERENCES["pg_optimal_baseline"] = _pg_best_constant
REFERENCES["pg_trcov"] = _pg_trcov
REFERENCES["pg_trcov_gap"] = lambda pi, r, estimator, other, G=1: (
    _pg_trcov(pi, r, estimator, G) - _pg_trcov(pi, r, other, G)
)
REFERENCES["pg_trcov_ratio"] = lambda pi, r, num, den, G: _pg_trcov(pi, r, num, G) / _pg_trcov(pi, r, den, G)
REFERENCES["pg_on_grad"] = _pg_on_grad
REFERENCES["pg_per_parameter_trcov"] = _pg_per_parameter_trcov
REFERENCES["pg_norm_binary"] = _pg_norm_binary
REFERENCES["pg_norm_binary_ratio"] = lambda p, q, G: _pg_norm_binary(p, G) / _pg_norm_binary(q, G)
REFERENCES["pg_norm_binary_limit"] = lambda G: math.sqrt(G - 1)  # one odd answer out of G: sqrt(q(1-q)) G / G
REFERENCES["pg_sample_std_factor"] = lambda G: math.sqrt(G / (G - 1))  # Bessel's correction on the std


# -- test-time compute (topic owner: test_time_compute; test_time_compute-01 .. -07): best-of-n with a perfect verifier
# as 1 - (1 - p)^n in exact fractions; the formula log n - (n - 1)/n (Stiennon et al. 2020; an upper bound on the KL of
# best-of-n, Beirami et al. 2024) by math; the exact KL of best-of-n on a discrete distribution by enumerating every
# tuple of n samples (itertools.product, ties shared evenly); the gold score d (alpha - beta d), d = sqrt(KL) (Gao et
# al. 2022's best-of-n form) with its peak by calculus and the best whole n by a scan; the majority vote by summing
# over the integer partitions of the wrong votes (fractions; ties broken uniformly); 6ND against 2N per token.


def _ttc_verifier_success(p: float, n: int) -> float:
    return float(1 - (1 - Fraction(str(p))) ** n)


def _ttc_samples_needed(p: float, target: float, field: str = "whole") -> float:
    """The n at which 1 - (1 - p)^n first reaches ``target``: the real root ln(1 - target) / ln(1 - p), or the
    smallest whole n found by counting up."""
    if field == "real":
        return math.log(1 - target) / math.log(1 - p)
    n, miss = 0, Fraction(1)
    while 1 - miss < Fraction(str(target)):
        n, miss = n + 1, miss * (1 - Fraction(str(p)))
    return float(n)


def _ttc_bon_kl_formula(n: int) -> float:
    return math.log(n) - (n - 1) / n


def _ttc_bon_kl_exact(probs: list[float], rewards: list[float], n: int) -> float:
    """KL(best-of-n || base) by enumeration: every tuple of n draws, its probability, the chosen output (the highest
    reward; among tied samples each equally likely)."""
    import itertools

    k = len(probs)
    chosen = [0.0] * k
    for draw in itertools.product(range(k), repeat=n):
        weight = math.prod(probs[i] for i in draw)
        top = max(rewards[i] for i in draw)
        tied = [i for i in draw if rewards[i] == top]
        for i in tied:
            chosen[i] += weight / len(tied)
    return sum(q * math.log(q / p) for q, p in zip(chosen, probs, strict=True) if q > 0)


def _ttc_gold(n: int, alpha: float = 1.0, beta: float = 0.25) -> float:
    d = math.sqrt(_ttc_bon_kl_formula(n))
    return d * (alpha - beta * d)


def _ttc_gold_peak(field: str, alpha: float = 1.0, beta: float = 0.25) -> float:
    """d (alpha - beta d) peaks where its derivative alpha - 2 beta d is 0: d* = alpha / (2 beta), KL* = d*^2, score
    alpha^2 / (4 beta); ``n``: the real n whose formula KL is KL* (scipy's brentq), ``n_best``: the best whole n."""
    d = alpha / (2 * beta)
    if field == "d":
        return d
    if field == "kl":
        return d * d
    if field == "gold":
        return alpha * alpha / (4 * beta)
    n_real = optimize.brentq(lambda x: math.log(x) - (x - 1) / x - d * d, 1.0, 1e12)
    if field == "n":
        return n_real
    return float(max(range(1, int(n_real) + 3), key=lambda m: _ttc_gold(m, alpha, beta)))


def _partitions(w: int, most: int, parts: int) -> Any:
    """The partitions of w into at most ``parts`` parts, each at most ``most`` (non-increasing tuples)."""
    if w == 0:
        yield ()
        return
    if parts == 0:
        return
    for first in range(min(w, most), 0, -1):
        for rest in _partitions(w - first, first, parts - 1):
            yield (first, *rest)


def _ttc_majority_vote(p: float, n: int, m: float) -> float:
    """P(the correct answer is the plurality of n votes): c correct ~ Binomial(n, p); the w = n - c wrong votes fall
    uniformly on m wrong answers. For each partition of w (the wrong answers' vote counts, sorted) its probability is
    m!/((m - k)! prod mult!) * w!/prod(parts!) / m^w (k non-empty answers); the correct answer wins outright above
    every part and with probability 1/(1 + J) when J parts tie it. ``m = inf``: every wrong vote is its own answer."""
    pf = Fraction(str(p))
    total = Fraction(0)
    for c in range(1, n + 1):
        w = n - c
        weight = math.comb(n, c) * pf**c * (1 - pf) ** w
        if math.isinf(m):
            win = Fraction(1) if (c >= 2 or w == 0) else Fraction(1, n)
        else:
            mi = int(m)
            win = Fraction(0)
            for part in _partitions(w, c, mi):
                k = len(part)
                ways = math.perm(mi, k) // math.prod(math.factorial(part.count(v)) for v in set(part))
                ways *= math.factorial(w) // math.prod(math.factorial(v) for v in part)
                win += Fraction(ways, mi**w) / (1 + part.count(c))
        total += weight * win
    return float(total)


REFERENCES["ttc_verifier_success"] = _ttc_verifier_success
REFERENCES["ttc_samples_needed"] = _ttc_samples_needed
REFERENCES["ttc_bon_kl_formula"] = _ttc_bon_kl_formula
REFERENCES["ttc_bon_kl_exact"] = _ttc_bon_kl_exact
REFERENCES["ttc_gold"] = _ttc_gold
REFERENCES["ttc_gold_peak"] = _ttc_gold_peak
REFERENCES["ttc_majority_vote"] = _ttc_majority_vote
REFERENCES["ttc_plurality_threshold"] = lambda m: float(Fraction(1, int(m) + 1))  # p > (1 - p)/m  <=>  p > 1/(m + 1)
# training 6 N D once against about 2 N per token processed at inference: equal after 3 D tokens, whatever N
REFERENCES["ttc_breakeven_tokens"] = lambda D: 6 * D / 2
REFERENCES["ttc_breakeven_answers"] = lambda D, T: 3 * D / T  # the break-even tokens 3 D, in answers of T tokens
REFERENCES["ttc_all_miss"] = lambda p, n: float((1 - Fraction(str(p))) ** n)  # all n samples wrong: (1 - p)^n


@functools.cache
def _ttc_split_toy(budget: float, queries: float, tokens: float) -> tuple[float, float, float]:
    """The compute-split toy of A7.4 rewritten from its stated assumptions (not core): shares f = 0.005..0.995 by
    0.005, model sizes 10^7..10^13 on 121 log-spaced points, f C = 6 N D with D >= N, (1 - f) C = R k 2 N T with at
    least one sample per query (k >= 1), Hoffmann et al. 2022's fit L = 1.69 + 406.4/N^0.34 + 410.7/D^0.28, 41
    problem thresholds h over 2.1 +- 0.3, one sample's success sigmoid((h - L)/0.05), a problem solved with
    1 - (1 - p)^k; the best accuracy, the first (smallest) share reaching it: (share, N, D/N)."""
    h = np.linspace(1.8, 2.4, 41)
    best = (-1.0, 0.0, 0.0, 0.0)
    for f in np.linspace(0.005, 0.995, 199):
        for N in np.logspace(7, 13, 121):
            D = f * budget / (6 * N)
            k = (1 - f) * budget / (2 * N * tokens * queries)
            if k < 1 or D < N:
                continue
            loss = 1.69 + 406.4 / N**0.34 + 410.7 / D**0.28
            p = special.expit((h - loss) / 0.05)
            acc = float(np.mean(1 - (1 - np.minimum(p, 1 - 1e-16)) ** k))
            if acc > best[0]:
                best = (acc, float(f), float(N), float(D / N))
    return best[1], best[2], best[3]


def _ttc_split(budget: float, queries: float, field: str, tokens: float = 1000.0) -> float:
    share, N, dn = _ttc_split_toy(float(budget), float(queries), float(tokens))
    return {"share": share, "params": N, "tokens_per_param": dn}[field]


REFERENCES["ttc_split"] = _ttc_split


# -- distillation (distillation-01..07): the two-mode teacher on its grid, the soft targets and the two-token toy,
# rewritten from the page's stated definitions with scipy.stats and fractions (not core) --
_DIST_GRID = np.linspace(-25.0, 25.0, 1001)  # the page's grid (spacing 0.05), on which every KL is a sum


def _dist_gauss(m: float, s: float) -> np.ndarray:
    q = stats.norm.pdf(_DIST_GRID, m, s)
    return q / q.sum()


def _dist_teacher(d: float, w: float) -> np.ndarray:
    p = w * stats.norm.pdf(_DIST_GRID, -d / 2, 1.0) + (1 - w) * stats.norm.pdf(_DIST_GRID, d / 2, 1.0)
    return p / p.sum()


@functools.cache
def _dist_reverse_local(d: float, w: float, start: str) -> tuple[float, float, float]:
    """A local minimum of KL(q || p) over one Gaussian q (mean, sd, KL): from the left or right mode (mean and sd
    free, Nelder-Mead), or the middle one (mean held at 0, the symmetric optimum for w = 0.5; sd free)."""
    p = _dist_teacher(d, w)
    if start == "middle":
        r = optimize.minimize_scalar(
            lambda ls: stats.entropy(_dist_gauss(0.0, math.exp(ls)), p), bounds=(-1.0, 2.5), method="bounded",
            options={"xatol": 1e-10},
        )  # fmt: skip
        return 0.0, math.exp(r.x), float(r.fun)
    m0 = -d / 2 if start == "left" else d / 2
    r = optimize.minimize(
        lambda t: stats.entropy(_dist_gauss(t[0], math.exp(t[1])), p), [m0, 0.0], method="Nelder-Mead",
        options={"xatol": 1e-9, "fatol": 1e-13, "maxiter": 4000},
    )  # fmt: skip
    return float(r.x[0]), math.exp(r.x[1]), float(r.fun)


def _dist_fit_kl(d: float, w: float, fit: str, direction: str) -> float:
    """KL(p || q) ("forward") or KL(q || p) ("reverse") of the forward fit (moment matching: the mixture's mean
    w(-d/2) + (1-w) d/2 and variance 1 + w(1-w) d²) or of the best reverse fit (the lowest of the local minima)."""
    p = _dist_teacher(d, w)
    if fit == "forward":
        q = _dist_gauss(w * (-d / 2) + (1 - w) * d / 2, math.sqrt(1 + w * (1 - w) * d * d))
    else:
        m, s, _ = min((_dist_reverse_local(d, w, a) for a in ("left", "right", "middle")), key=lambda o: o[2])
        q = _dist_gauss(m, s)
    return float(stats.entropy(p, q) if direction == "forward" else stats.entropy(q, p))


def _dist_jump(w: float = 0.5) -> float:
    """The d at which the reverse fit's mode optimum becomes lower than its middle optimum (brentq on the gap)."""
    return float(
        optimize.brentq(
            lambda d: _dist_reverse_local(d, w, "left")[2] - _dist_reverse_local(d, w, "middle")[2], 5.0, 6.5,
            xtol=1e-6,
        )
    )  # fmt: skip


def _dist_soft(logits: list[float], T: float) -> np.ndarray:
    return special.softmax(np.asarray(logits, dtype=float) / T)


def _dist_grad_norm(student: list[float], teacher: list[float], T: float, scaled: bool) -> float:
    """|d/dz of T^s KL(p_T || q_T)|: (q_T - p_T)/T, times T² when scaled (Hinton et al. 2015, eq. 2)."""
    g = (_dist_soft(student, T) - _dist_soft(teacher, T)) / T
    return float(np.linalg.norm(g * T * T if scaled else g))


def _dist_limit_grad_norm(student: list[float], teacher: list[float]) -> float:
    """|z - v| / N for the centred logits: the T²-scaled gradient's high-T limit (Hinton et al. 2015, eq. 4)."""
    z, v = np.asarray(student, dtype=float), np.asarray(teacher, dtype=float)
    return float(np.linalg.norm((z - z.mean()) - (v - v.mean())) / len(z))


_DIST_TOY = ((Fraction(1, 2), Fraction(1, 20)), (Fraction(1, 20), Fraction(2, 5)))  # p(A A), p(A B); p(B A), p(B B)


def _dist_toy_mass(method: str, which: str, eps: float = 0.0) -> float:
    """q(A A) ("mode") or q(A A) + q(B B) ("coherent") of a factorised student on the page's toy teacher:
    token-level, the teacher's marginals; sequence-level, (1 - eps) on the mode A A's tokens plus eps/2 on each;
    whole-sequence reverse KL, argmin over q1 q2 of KL(q || p) (scipy, several starts); gkd, q1 = the teacher's first
    marginal and q2 = argmin E_{y1 ~ q1} KL(q2 || p(.|y1)), which is q2 ∝ exp(E_{y1 ~ q1} log p(.|y1))."""
    p = np.array([[float(x) for x in row] for row in _DIST_TOY])
    if method == "token-level":
        a = (_DIST_TOY[0][0] + _DIST_TOY[0][1], _DIST_TOY[1][0] + _DIST_TOY[1][1])
        b = (_DIST_TOY[0][0] + _DIST_TOY[1][0], _DIST_TOY[0][1] + _DIST_TOY[1][1])
        mode, coherent = a[0] * b[0], a[0] * b[0] + a[1] * b[1]
        return float(mode if which == "mode" else coherent)
    if method == "sequence-level":
        e = Fraction(str(eps))
        on, off = 1 - e + e / 2, e / 2
        return float(on * on if which == "mode" else on * on + off * off)
    if method == "gkd":
        q1 = p.sum(axis=1)
        cond = p / q1[:, None]
        q2 = special.softmax(q1 @ np.log(cond))
    else:

        def rev(t: np.ndarray) -> float:
            q = np.outer(special.softmax(t[:2]), special.softmax(t[2:]))
            return float(stats.entropy(q.ravel(), p.ravel()))

        starts = [np.zeros(4), np.array([2.0, 0, 2, 0]), np.array([0, 2.0, 0, 2]), np.array([2.0, 0, 0, 2])]
        best = min((optimize.minimize(rev, s, method="Nelder-Mead", options={"xatol": 1e-10, "fatol": 1e-14,
                                                                             "maxiter": 8000}) for s in starts),
                   key=lambda r: r.fun)  # fmt: skip
        q1, q2 = special.softmax(best.x[:2]), special.softmax(best.x[2:])
    q = np.outer(q1, q2)
    return float(q[0, 0] if which == "mode" else q[0, 0] + q[1, 1])


REFERENCES["dist_forward_sd"] = lambda d, w=0.5: math.sqrt(1 + w * (1 - w) * d * d)  # moment matching, width 1
REFERENCES["dist_fit_kl"] = lambda d, fit, direction, w=0.5: _dist_fit_kl(float(d), float(w), fit, direction)
REFERENCES["dist_reverse_local_kl"] = lambda d, w, start: _dist_reverse_local(float(d), float(w), start)[2]
REFERENCES["dist_reverse_jump"] = lambda w=0.5: _dist_jump(float(w))
REFERENCES["dist_soft_top"] = lambda logits, T: float(_dist_soft(logits, T).max())
REFERENCES["dist_soft_entropy"] = lambda logits, T: float(stats.entropy(_dist_soft(logits, T)))
REFERENCES["dist_grad_norm"] = _dist_grad_norm
REFERENCES["dist_limit_grad_norm"] = _dist_limit_grad_norm
REFERENCES["dist_toy_mass"] = _dist_toy_mass


# -- calibration (topic owner: calibration; calibration-01 .. -06): ECE from per-bin counts in exact fractions (Guo et
# al. 2017 eq. 3); the population ECE of accuracy c^gamma for c ~ Beta(a, b) as |E[c] - E[c^gamma]| by scipy's beta
# function (no bins at all: the reference ignores n_bins, which is the identity the card states); the expected ECE of
# one bin of n calibrated predictions at confidence c by summing the binomial distribution in fractions; the toy's
# sigmoid(kappa logit c) and its inverse, temperature scaling of a softmax, the Brier score of a constant forecast; the
# emergence toy's exact-match crossing x0 - log10(-ln(tau) / k) / alpha (Schaeffer et al. 2023's power law, written in
# log10-compute as the page does) and its shift log10(k) / alpha.


def _cal_ece_bins(counts: list[int], confidences: list[float], right: list[int]) -> float:
    n = sum(counts)
    return float(
        sum(
            Fraction(m, n) * abs(Fraction(r, m) - Fraction(str(c)))
            for m, c, r in zip(counts, confidences, right, strict=True)
        )
    )


def _cal_power_population_ece(gamma: float, a: float = 5.0, b: float = 2.0, n_bins: int = 10) -> float:
    """|E[c] - E[c^gamma]| for c ~ Beta(a, b): E[c^g] = B(a + g, b) / B(a, b). The same for every n_bins (unused)."""
    return abs(a / (a + b) - float(special.beta(a + gamma, b) / special.beta(a, b)))


def _cal_single_bin_bias(n: int, c: float = 0.5) -> float:
    """E|k/n - c| for k ~ Binomial(n, c): the expected ECE of n calibrated predictions at confidence c, one bin."""
    q = Fraction(str(c))
    return float(sum(math.comb(n, k) * q**k * (1 - q) ** (n - k) * abs(Fraction(k, n) - q) for k in range(n + 1)))


def _cal_logit_scale(p: float, scale: float) -> float:
    """sigmoid(scale * logit p) = p^s / (p^s + (1 - p)^s)."""
    return p**scale / (p**scale + (1 - p) ** scale)


def _cal_softmax_top(logits: list[float], T: float = 1.0) -> float:
    e = [math.exp(z / T) for z in logits]
    return max(e) / sum(e)


def _cal_brier_constant(c: float, rate: float) -> float:
    """Mean (c - a)^2 of a forecast that states c on every question when a share ``rate`` of them is right."""
    q, r = Fraction(str(c)), Fraction(str(rate))
    return float(r * (1 - q) ** 2 + (1 - r) * q**2)


def _cal_em_crossing(tau: float, k: int, alpha: float = 0.5, x0: float = 22.0) -> float:
    """Where exp(-k 10^(-alpha (x - x0))) = tau: 10^(-alpha (x - x0)) = -ln(tau) / k."""
    return x0 - math.log10(-math.log(tau) / k) / alpha


REFERENCES["cal_ece_bins"] = _cal_ece_bins
REFERENCES["cal_power_population_ece"] = _cal_power_population_ece
REFERENCES["cal_single_bin_bias"] = _cal_single_bin_bias
REFERENCES["cal_tuned_accuracy"] = lambda stated, kappa: _cal_logit_scale(stated, 1 / kappa)
REFERENCES["cal_sharpen"] = lambda c, kappa: _cal_logit_scale(c, kappa)
REFERENCES["cal_softmax_top"] = _cal_softmax_top
REFERENCES["cal_brier_constant"] = _cal_brier_constant
# Brier 1950's own score sums the squared error over both outcomes: (c - a)^2 + ((1 - c) - (1 - a))^2, twice the binary
REFERENCES["cal_brier_two_class"] = lambda c, rate: float(
    Fraction(str(rate)) * (2 * (1 - Fraction(str(c))) ** 2) + (1 - Fraction(str(rate))) * 2 * Fraction(str(c)) ** 2
)
REFERENCES["cal_em_crossing"] = _cal_em_crossing
REFERENCES["cal_em_delay"] = lambda k, alpha=0.5: math.log10(k) / alpha  # p^k(x) = p(x - log10(k) / alpha)
REFERENCES["cal_em_per_token"] = lambda tau, k: tau ** (1 / k)
