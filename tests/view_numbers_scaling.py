"""The tables of tests/test_view_numbers.py for the pages of group 'scaling': per page, per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show.

The scaling page's readouts, figure texts and explanation are templates of the budget C and the plan's N, the
schedules page's of the run's length, warm-up, floor and WSD decay, the sampling page's of the logits and the
filters: each has a function ``_refs_<page>(values)`` that writes the references from a view's inputs (the spec's
defaults with a preset's values over them), by the formulas of tests/card_references.py and those written here,
never by the page's own code. A view takes the passages it shows (a preset repeats no text the defaults show word
for word: tests/page_numbers.py ``view_texts``)."""

from __future__ import annotations

import itertools
import math
import re
from collections import Counter
from pathlib import Path

import numpy as np
import torch
from scipy import signal, special, stats

from core import tiny_gpt  # the tiny GPT's checkpoint and numpy forward (its logits are core's tests' business)
from core.sampling import VOCAB_PRESETS  # input data only: the presets' logits
from core.schedules import MIX_ANNEAL, MIX_PRETRAIN  # input data only: the illustrative mixture's weights
from tests import card_references as ref
from tests import test_page_numbers as tpn
from tests.page_numbers import Ref
from tests.test_page_numbers import COUNT, FORMULA, GIVEN, H100_PEAK, NAME, _preset
from views import sampling as v_sampling
from views import scaling as v_scaling
from views import schedules as v_schedules

SC, SH, SA = v_scaling.SPEC, v_schedules.SPEC, v_sampling.SPEC


def _pick(refs: dict[str, Ref], *names: str) -> list[Ref]:
    return [refs[n] for n in names]


def _all_but(refs: dict[str, Ref], *names: str) -> list[Ref]:
    return [r for n, r in refs.items() if n not in names]


# fmt: off
# ============================================================================================== 1. Scaling laws
H, EP = "hoffmann2022", "epoch2024"
PEAK = {"H100": H100_PEAK}  # dense bf16 FLOP/s per GPU (NVIDIA H100 SXM data sheet); the presets use the H100
RULE = "the rule's 20 tokens per parameter (Hoffmann et al. 2022)"
YEAR = 365 * 86_400.0


def _duration(seconds: float) -> tuple[float, str]:
    """A training time in the unit the readout prints it: hours under 3 days, days under 2 years, then years."""
    if seconds < 3 * 86_400:
        return seconds / 3600, "h"
    if seconds < 2 * YEAR:
        return seconds / 86_400, "days"
    return seconds / YEAR, "years"


def _decimal_bytes(x: float) -> tuple[float, str]:
    """Bytes in decimal units (1 GB = 10^9 bytes), as the readout prints them."""
    for scale, unit in ((1e12, "TB"), (1e9, "GB")):
        if x >= scale:
            return x / scale, unit
    return x / 1e6, "MB"


def _budget(v: dict) -> float:
    """C in FLOPs: the typed budget, or GPUs x hours x peak x MFU in Hardware mode."""
    if v["budget"] == "Hardware":
        return ref.hardware_flops(v["gpus"], v["hours"], PEAK[v["gpu"]], v["mfu"] / 100)
    return float(v["C"])


# the explanation's passages whose numbers do not depend on the state: tests/test_page_numbers.py's references
_EXPLAIN_FIXED = (
    "D = C/(6N) tokens", "(the closed form for a loss of the approach-3 form above)", "(2N FLOPs per generated token",
    "\"About 20 tokens per parameter\" comes from", "Epoch AI's refit of approach 3 (Besiroglu et al. 2024; their",
    "The published approach-3 constants", "44 at 2.7×10²⁰ FLOPs", "the optimum at Chinchilla's 6ND",
    "The paper counts Gopher's budget", "section 4", "their refit puts the optimum", "Quote 20 tokens per parameter",
    "approach-3 curve",
)
EXPLAIN_FIXED = [r for r in tpn.SCALING if r.snippet.startswith(_EXPLAIN_FIXED)]
assert len(EXPLAIN_FIXED) == len(_EXPLAIN_FIXED), "a passage of the explanation is missing from tpn.SCALING"


def _refs_scaling(v: dict) -> dict[str, Ref]:
    """Every readout, figure text and state-dependent explanation passage of the scaling page at the inputs ``v``
    (Hoffmann et al.'s fit selected, the presets' choice)."""
    C, N = _budget(v), float(v["N"])
    D, N_opt, N_ep, N_rule = C / (6 * N), ref.n_opt(C, H), ref.n_opt(C, EP), ref.rule_n(C)
    loss, excess = ref.isoflop_loss(C, N, H), 100 * (ref.isoflop_loss(C, N, H) / ref.min_loss(C, H) - 1)
    seconds = C / (v["gpus"] * PEAK[v["gpu"]] * v["mfu"] / 100)
    (time, t_unit), (mem, m_unit) = _duration(seconds), _decimal_bytes(ref.training_memory_bytes(N))
    tpp_h, tpp_ep = ref.tokens_per_param_opt(C, H), ref.tokens_per_param_opt(C, EP)
    return {
        "D": Ref("Tokens D = C/6N: 20.0B", FORMULA, D),
        "D help": Ref("Tokens D = C/6N help: training tokens", FORMULA),
        "tpp": Ref("Tokens per parameter: 2.0", D / N),
        "loss": Ref("Loss L(N, D): 2.388", loss),
        "excess": Ref("Above the fit's minimum: +3.32%", excess),
        "time": Ref(f"Training time: 4.4 {t_unit}", time),
        # (a passage holding "H100" is matched word for word: its digits would split the wildcarded pattern)
        "GPUs": Ref("Training time help: 8 ×", GIVEN),
        "time help": Ref("at 40% MFU = 35 GPU-days", GIVEN, ref.gpu_days(C, PEAK[v["gpu"]], v["mfu"] / 100)),
        "states": Ref(f"Training states: 160 {m_unit}", mem),
        "states help": Ref("Training states help: 16 bytes per parameter", ref.ADAM_MIXED_BYTES_PER_PARAM),
        "serving": Ref("Serving FLOPs per token: 2.00×10¹⁰", 2 * N),
        "serving help": Ref("Serving FLOPs per token help: 2N FLOPs", FORMULA),
        "C": Ref("Budget C = 6ND (FLOPs): 1.20×10²¹", FORMULA, ref.training_flops(N, D)),
        "C hardware": Ref("Budget C (FLOPs): 2.73×10²⁰", C),
        "N_opt": Ref("Fit's optimum N: 1.98B", N_opt),
        "N_opt help": Ref("Fit's optimum N help: on 101B tokens, loss 2.311",
                          C / (6 * N_opt), ref.isoflop_loss(C, N_opt, H)),
        "rule": Ref("20-tokens rule N: 3.16B", RULE, N_rule),
        "rule help": Ref("20-tokens rule N help: on 63.2B tokens, loss 2.318",
                         RULE, ref.rule_d(C), ref.isoflop_loss(C, N_rule, H)),
        "tpp_opt": Ref("Optimal tokens per parameter: 51.0", tpp_h),
        "tpp_opt help": Ref("Optimal tokens per parameter help: Hoffmann et al. 2022 (Chinchilla, approach 3)", NAME),
        "epoch": Ref("(Epoch AI replication) fit: 21.5", tpp_ep),
        "epoch help": Ref("(Epoch AI replication) fit help: its optimum: 3.05B params on 65.6B tokens",
                          N_ep, C / (6 * N_ep)),
        # the U-curve's figure
        "title": Ref("One budget, C = 1.20×10²¹ FLOPs", C),
        "plan": Ref(f"Your plan : N = 10.0B params on D = 20.0B tokens (2.0 tokens/param) loss 2.388 nats, +3.32% vs "
                    f"the fit's minimum training 4.4 {t_unit} · states 160 {m_unit} · serving 2.00×10¹⁰ FLOP/token",
                    GIVEN, D, D / N, loss, excess, time, mem, 2 * N),
        "minimum": Ref("fit's minimum (51 tokens/param)", tpp_h),
        "x axis": Ref("model size N (parameters); tokens D = C / (6N)", FORMULA),
        "curve": Ref("L(N, C/6N), Hoffmann et al. 2022 (Chinchilla, approach 3)", FORMULA, NAME),
        "rule legend": Ref("20 tokens per parameter", RULE),
        # the family's figure: one curve per decade of the page's budget range, 1e18 to 1e26
        "family": Ref("C = 1.0×10¹⁸", "a budget of the family, one per decade from 1e18 to 1e26 (its input)"),
        # the explanation, shown again by a preset whose budget changes its numbers
        "penalty": Ref("a model 2× off the optimum loses 0.6% in loss and one 3× off 1.6%",
                       tpn.FACTOR, tpn._worse_loss_excess(C, 2), tpn.FACTOR, tpn._worse_loss_excess(C, 3)),
        "waste": Ref("a model 2× off with 14% less compute, and that of one 3× off with 31% less",
                     tpn.FACTOR, tpn._worse_waste(C, 2), tpn.FACTOR, tpn._worse_waste(C, 3)),
        "fits": Ref("(Chinchilla, approach 3) wants 51 tokens per parameter, the Besiroglu et al. 2024 (Epoch AI "
                    "replication) fit 21", NAME, tpp_h, tpp_ep),
    }


_SCALING_DEFAULTS = _refs_scaling(dict(SC.defaults()))
_SCALING_ONLY_AT_DEFAULTS = ("D help", "states help", "serving help", "tpp_opt help", "x axis", "curve", "rule legend",
                             "family")
_EXPLANATION = ("penalty", "waste", "fits")


def _scaling_preset(name: str) -> list[Ref]:
    refs = _refs_scaling(_preset(SC, name))
    shown = _all_but(refs, *_SCALING_ONLY_AT_DEFAULTS)
    if _preset(SC, name)["budget"] != "Hardware":
        shown = [r for r in shown if r is not refs["C hardware"]]
    return shown + EXPLAIN_FIXED


SCALING = {
    "defaults": _all_but(_SCALING_DEFAULTS, "C hardware", *_EXPLANATION),
    **{f"preset {name}": _scaling_preset(name) for name in (
        "Worked example A: 8 H100 for 24 h", "Example A over-trained: 0.5B params",
        "Chinchilla's budget, Gopher's size", "Llama 3 8B on 15T tokens", "Check yourself: 7B on 2T tokens")},
}

# ============================================================================================== 13. Schedules
LM = ref.LOSS_MODEL  # Tissue et al. 2024's form with the page's illustrative constants (tests/card_references.py)


def _warmup_term(steps: int, warmup: int) -> float:
    """-C·S2 at the end of a constant run: the warm-up's rises are negative drops, each carried forward by the
    momentum m_i = lam m_(i-1) + (eta_(i-1) - eta_i) (an IIR filter, scipy) and summed into S2."""
    eta = np.array([min(s / warmup, 1.0) for s in range(1, steps + 1)])
    m = signal.lfilter([1.0], [1.0, -LM["lam"]], np.concatenate([[0.0], eta[:-1] - eta[1:]]))
    return -LM["C"] * float(m.sum())


def _refs_schedules(v: dict) -> dict[str, Ref]:
    """Every readout, caption and figure text of the schedules page at the inputs ``v``."""
    steps, W, floor, shape = v["run_steps"], v["warmup"], v["lr_floor"], v["wsd_shape"]
    D, b, n = round(v["wsd_decay"] * steps), v["branch_at"], v["kaplan_n"]

    def end(kind: str, length: int = steps) -> float:
        return ref.schedule_end_loss(kind, length, W, floor, D, shape)

    read, own = (ref.kaplan_read_off(steps, n, which, W, floor) for which in ("read", "own"))
    return {
        "cosine": Ref("Modelled end loss: cosine: 2.128", end("cosine")),
        "wsd": Ref("Modelled end loss: WSD: 2.156", end("wsd")),
        "wsd help": Ref("Modelled end loss: WSD help: 2,000 decay steps", D),
        "constant": Ref("Modelled end loss: constant: 2.229", end("constant")),
        "constant help": Ref("enters the annealing term (+0.15 here", _warmup_term(steps, W)),
        "warm-up": Ref("Warm-up: 100 steps", GIVEN),
        "warm-up help": Ref("Warm-up help: 1.0% of the run", 100 * W / steps),
        "wsd legend": Ref("WSD (2,000-step linear decay)", D),
        # the branch points: the control's step, a quarter and a half of the run (inputs)
        "branches": Ref("decay from step 2,500", "a branch point: the control's step, or a quarter or a half of the "
                        "run (inputs)"),
        "branch caption": Ref("The decay branched at step 5,000 ends at 2.175 (modelled)", GIVEN, end("wsd", b + D)),
        # Kaplan's read-off tab
        "kaplan caption": Ref("A 2,500-step run read off the 10,000-step cosine: 2.292; the same length with its own "
                              "cosine: 2.263 (modelled)", GIVEN, GIVEN, read, own),
        "kaplan": Ref("Read off at 2,500 steps: 2.292", GIVEN, read),
        "kaplan help": Ref("against 2.263 with its own cosine: 0.028 too high", own, read - own),
        "kaplan help step": Ref("Read off at 2,500 steps help", GIVEN),
        "kaplan legend": Ref("one cosine schedule of 10,000 steps", GIVEN),
        # the data mixture tab: the illustrative weights, normalised, before the decay and after its ramp
        "web": Ref("Web share: stable → end of decay: 80% → 35%",
                   100 * MIX_PRETRAIN[0] / sum(MIX_PRETRAIN), 100 * MIX_ANNEAL[0] / sum(MIX_ANNEAL)),
    }


_SCHED_DEFAULTS = _refs_schedules(dict(SH.defaults()))
_BRANCH = "Branch a WSD decay at step 3,000"
_LONG = "Long warm-up (10%)"
SCHEDULES = {
    "defaults": _pick(_SCHED_DEFAULTS, "cosine", "wsd", "wsd help", "constant", "constant help", "warm-up",
                      "warm-up help", "wsd legend", "branches"),
    "tab Kaplan's read-off": _pick(_SCHED_DEFAULTS, "kaplan caption", "kaplan", "kaplan help", "kaplan help step",
                                   "kaplan legend"),
    "tab Data mixture": _pick(_SCHED_DEFAULTS, "web"),
    f"preset {_BRANCH}": _pick(_refs_schedules(_preset(SH, _BRANCH)), "branch caption", "branches"),
    f"preset {_LONG}": _pick(_refs_schedules(_preset(SH, _LONG)), "branch caption", "cosine", "wsd", "constant",
                             "warm-up", "warm-up help"),
}

# ============================================================================================== 11. Sampling
DATA = Path(__file__).resolve().parents[1] / "core" / "data" / "lesson_text.txt"  # the bundled text (input data)
WORDS = re.compile(r"[A-Za-zé']+|[.,:;]")  # the bigram model's words and punctuation marks
SMOOTHING = 0.05  # add-k: p(b | a) = (c(a, b) + k) / (c(a) + k V)
SHOWN = 30  # the bars show the bigram's 30 most likely next words, renormalised among themselves


def _bigram_logits(word: str) -> tuple[np.ndarray, int, str]:
    """The add-k bigram's 30 most likely next words after ``word`` (their log-probabilities), V and the likeliest."""
    words = [w.lower() for w in WORDS.findall(DATA.read_text(encoding="utf-8"))]
    V = len(set(words))
    after = Counter(b for a, b in itertools.pairwise(words) if a == word)
    c_word = sum(1 for a in words[:-1] if a == word)
    counts = np.array(sorted(after.values(), reverse=True) + [0] * (V - len(after)), dtype=float)[:SHOWN]
    return np.log((counts + SMOOTHING) / (c_word + SMOOTHING * V)), V, after.most_common(1)[0][0]


def _gpt_logits(prompt: str) -> tuple[np.ndarray, list[str], float]:
    """The tiny GPT's 30 likeliest next bytes after ``prompt``'s last 128 UTF-8 bytes: their logits (logits_numpy's
    last row), their labels (␣ a space, escapes for control bytes) and the share of the full softmax they hold."""
    params, cfg, _ = tiny_gpt.load_checkpoint()
    ids = np.frombuffer(prompt.encode("utf-8")[-cfg.ctx :], dtype=np.uint8)
    z = tiny_gpt.logits_numpy(params, cfg, ids)[-1].astype(np.float64)
    top = np.argsort(-z, kind="stable")[:SHOWN]
    p = special.softmax(z)
    labels = ["␣" if b == 32 else chr(b) if 33 <= b <= 126 else f"\\x{b:02x}" for b in top]
    return z[top], labels, float(p[top].sum())


def _logits(v: dict) -> tuple[np.ndarray, str]:
    """The logits of the view's source and the name of its likeliest token."""
    if v["logits"].strip():
        pairs = [part.split("=") for part in v["logits"].split(",")]
        z = np.array([float(x) for _, x in pairs])
        return z, pairs[int(np.argmax(z))][0].strip()
    if v["vocab"] == "bigram":
        z, _, top = _bigram_logits(v["word"])
        return z, top
    if v["vocab"] == "tiny GPT":
        z, labels, _ = _gpt_logits(v["gpt_prompt"])
        return z, labels[0]
    preset = VOCAB_PRESETS[v["vocab"]]
    return np.array(preset.logits, dtype=float), preset.tokens[int(np.argmax(preset.logits))]


def _filtered(z: np.ndarray, T: float, top_k: int | None, top_p: float, min_p: float, first: str) -> np.ndarray:
    """The distribution sampled from: softmax(z/T) then top-k (ties kept), top-p (Holtzman et al. 2020: the token
    that crosses p_top stays) and min-p (Nguyen et al. 2024: p >= min_p p_max), each on the renormalised
    distribution; or, filters first, the same truncation of softmax(z) and then the temperature on the kept
    logits. T = 0: the argmax alone."""
    if T == 0:
        return np.eye(len(z))[int(np.argmax(z))]
    keep = np.ones(len(z), dtype=bool)
    base = z / T if first == "temper" else z

    def p() -> np.ndarray:
        return special.softmax(np.where(keep, base, -np.inf))

    if top_k is not None:
        keep &= base >= np.sort(base)[::-1][min(top_k, len(z)) - 1]
    if top_p < 1.0:
        keep &= tpn._top_p_keep(p(), top_p)
    if min_p > 0.0:
        keep &= p() >= min_p * p().max()
    return special.softmax(np.where(keep, z / T, -np.inf))


def _refs_sampling(v: dict) -> dict[str, Ref]:
    """Every readout, caption and figure text of the sampling page at the inputs ``v``."""
    (z, top), T = _logits(v), float(v["T"])
    args = (T, v["top_k"], v["top_p"], v["min_p"])
    final, other = _filtered(z, *args, "temper"), _filtered(z, *args, "truncate")
    kept, kept_other = int((final > 0).sum()), int((other > 0).sum())
    H = float(stats.entropy(final))
    Tshown = "T = 0 (greedy)" if T == 0 else "T = 1"
    return {
        "kept": Ref("Kept tokens: 30 of 30", kept, COUNT),
        "H": Ref("Entropy H: 1.988 nats", H),
        "exp H": Ref("Effective choices exp(H): 7.30", math.exp(H)),
        "exp H help": Ref("Effective choices exp(H) help: 1 for greedy", math.exp(stats.entropy([1.0]))),
        "top": Ref(f"Top token: {top}: 0.356", final.max()),
        "other": Ref("Kept with filters first: 30", kept_other),
        "annotation": Ref(f"{Tshown} kept tokens: 30 entropy H = 1.988 nats exp(H) = 7.30 choices", GIVEN, kept, H,
                          math.exp(H)),
        "legend temper": Ref("temperature first (30 kept)", kept),
        "legend truncate": Ref("truncation first (30 kept)", kept_other),
        "caption": Ref(f"Temperature first keeps 30 {'token' if kept == 1 else 'tokens'}, truncation first 30. "
                       "Truncating the T = 1 distribution", kept, kept_other, GIVEN),
        "greedy": Ref("T = 0 is greedy decoding", GIVEN),
    }


def _greedy_loop(seed: int = 0, V: int = 12, steps: int = 40) -> tuple[int, int]:
    """(start, period) of greedy decoding from token 0 on the page's seeded Markov chain: logits N(0, 1) x 2 drawn by
    torch with the seed; a first-order chain repeats from the first token it revisits."""
    W = torch.randn(V, V, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * 2.0
    seen, tok = {0: 0}, 0
    for i in range(1, steps + 1):
        tok = int(W[tok].argmax())
        if tok in seen:
            return seen[tok], i - seen[tok]
        seen[tok] = i
    raise AssertionError("no loop within the generated tokens")


_LOOP_START, _LOOP_PERIOD = _greedy_loop(int(SA.defaults()["chain_seed"]))
SAMPLING_PRESETS = {
    "Order matters: T = 2, top-p 0.9": ("caption", "kept", "H", "exp H", "top", "other", "annotation", "legend temper",
                                        "legend truncate"),
    "Greedy: T = 0": ("caption", "greedy", "kept", "H", "exp H", "top", "other", "annotation", "legend temper",
                      "legend truncate"),
    "Sharp: T = 0.5": ("H", "exp H", "top", "annotation"),
    "Flat: T = 2": ("H", "exp H", "top", "annotation"),
    "min-p 0.1 at T = 1.5": ("caption", "kept", "H", "exp H", "top", "other", "annotation", "legend temper",
                             "legend truncate"),
    "top-k 5": ("caption", "kept", "H", "exp H", "top", "other", "annotation", "legend temper", "legend truncate"),
    "Quick check: 0.5, 0.3, 0.2 at top-p 0.6": ("caption", "kept", "H", "exp H", "top", "other", "annotation",
                                                 "legend temper", "legend truncate"),
    "Bigram model after “the”": ("caption", "kept", "H", "exp H", "top", "other", "annotation", "legend temper",
                                 "legend truncate"),
}
SAMPLING = {
    "defaults": _pick(_refs_sampling(dict(SA.defaults())), "kept", "H", "exp H", "exp H help", "top", "other",
                      "annotation", "legend temper", "legend truncate"),
    "tab Greedy loops": [
        Ref("A seeded Markov chain over 12 tokens", "the chain's size, an input of the page (CHAIN_V)"),
        Ref(f"Greedy decoding repeats a 6-token loop{' from the first step' if _LOOP_START == 0 else ''};",
            _LOOP_PERIOD),
    ],
    **{f"preset {name}": _pick(_refs_sampling(_preset(SA, name)), *keys) for name, keys in SAMPLING_PRESETS.items()},
}
SAMPLING[f"preset {'Bigram model after “the”'}"].append(
    Ref("The bigram's 30 most likely tokens after “the” out of its 291 (words and punctuation marks)",
        "the bars' count, an input of the page",
        _bigram_logits("the")[1]))
_TINY = "Tiny GPT: its next byte, top-p 0.9"
SAMPLING[f"preset {_TINY}"] = [
    *_pick(_refs_sampling(_preset(SA, _TINY)), "kept", "H", "exp H", "top", "other", "annotation", "legend temper",
           "legend truncate"),
    Ref("Temperature first keeps 4 tokens, truncation first 4. Truncating the T = 1 distribution",
        int((_filtered(_gpt_logits(v_sampling.GPT_PROMPT)[0], 1.0, None, 0.9, 0.0, "temper") > 0).sum()),
        int((_filtered(_gpt_logits(v_sampling.GPT_PROMPT)[0], 1.0, None, 0.9, 0.0, "truncate") > 0).sum()), GIVEN),
    Ref("The tiny GPT's 30 most likely next bytes out of 256 (␣ is a space), renormalised among themselves: a top-30 "
        "cut made before the temperature and the filters, so the kept counts are counts among these 30. At T = 1 they "
        "hold 99.9% of its probability. The model: 4 layers, 0.8M parameters",
        "the bars' count, an input of the page", 2**8, "the bars' count, an input of the page",
        "the bars' count, an input of the page", GIVEN, 100 * _gpt_logits(v_sampling.GPT_PROMPT)[2],
        tiny_gpt.SHIPPED_CONFIG.n_layer, tiny_gpt.n_params(tiny_gpt.SHIPPED_CONFIG)),
]
# fmt: on

TABLES: dict[str, dict[str, list[Ref]]] = {
    "pages/1_Scaling_laws.py": SCALING,
    "pages/11_Sampling.py": SAMPLING,
    "pages/13_Schedules.py": SCHEDULES,
}
