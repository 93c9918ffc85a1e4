"""The tables of tests/test_view_numbers.py for the pages of group 'tokens': per page, per view (tests/page_numbers.py
``views``), a list of ``Ref(passage, value or reason, ...)`` for every number the view's readouts, figure texts and
(outside the defaults) new texts show.

References are written here: exact binomial sums and fractions for pass@k, scipy's normal for the comparison, the
seeded binomial draws of the bias simulation redone with torch's own generator, the published configs (config.json)
of the KV-cache presets' models. The toy attention layer's statistics (hashed embeddings, seeded projections) would
need the whole toy re-implemented; their reasons name the tests that check the toy independently. The heads' figure's
readout line is recomputed with numpy from the toy layer's weights (core's output, as input data): the row entropies,
the uniform rows' entropies and the top weights, averaged here.
"""

from __future__ import annotations

import json
import math
from fractions import Fraction

import numpy as np
import torch
from scipy import stats

from core import tiny_gpt  # the tiny GPT's checkpoint and numpy attention
from core.attention_real import available as real_model_available  # which texts the page shows
from core.device import get_device  # only which device the page's simulation draws on (torch's streams differ)
from core.tokenizer import DEFAULT_TEXT, tokenize  # input data: the page's default sentence, split into words
from core.toy_attention import ToyModelSettings, toy_attention  # input data: the toy layer's weights
from tests import card_references as ref
from tests.page_numbers import Ref
from tests.test_page_numbers import COUNT, FORMULA, GIVEN, _preset
from views import attention as v_attention
from views import evaluation as v_evaluation

EV, AT = v_evaluation.SPEC, v_attention.SPEC

# fmt: off
# ============================================================================ 5. Evaluation
CONFIDENCE = "the confidence level of the interval (95%)"
SIM_CAPTION = ("the simulation's inputs restated (problems, n, seed), the device it ran on and its measured "
               "wall-clock time (not a lesson number)")


def _bias_curve(n: int, p: float) -> np.ndarray:
    """E[unbiased] - E[plug-in] for k = 1..n: 1 - (1-p)^k minus the exact binomial sum of 1 - (1 - c/n)^k."""
    c = np.arange(n + 1)
    pmf = stats.binom.pmf(c, n, p)  # (n+1,)
    k = np.arange(1, n + 1)
    plug = 1 - (1 - c[:, None] / n) ** k[None, :]  # (n+1, n)
    return (1 - (1 - p) ** k) - pmf @ plug


def _worst_k(n: int, p: float) -> int:
    return int(np.argmax(_bias_curve(n, p))) + 1


def _interior_threshold(n: int) -> float:
    """The p above which the plug-in's worst k lies strictly inside (1, n): bisection on p."""
    lo, hi = 1e-5, 0.99
    assert _worst_k(n, lo) == n and _worst_k(n, hi) < n
    for _ in range(60):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if _worst_k(n, mid) == n else (lo, mid)
    return hi


def _refs_estimators(n: int, c: int, k: int) -> list[Ref]:
    """The Estimators tab's readouts and figure texts for n samples, c correct, k attempts (Chen et al. 2021)."""
    unbiased, plugin = ref.pass_at_k(n, c, k), ref.pass_at_k_plugin(n, c, k)
    hat, hat_plugin = ref.pass_hat_k(n, c, k), float(Fraction(c, n) ** k)
    return [
        Ref(f"Unbiased pass@{k}: 0.9167", GIVEN, unbiased),
        Ref(f"Unbiased pass@{k} help: 1 − C(n−c, k)/C(n, k)", GIVEN, FORMULA),
        Ref(f"Plug-in pass@{k}: 0.8319", GIVEN, plugin),
        Ref(f"Plug-in pass@{k} help: 1 − (1 − c/n)^k, too low on average", GIVEN, FORMULA, FORMULA),
        Ref("Gap (unbiased − plug-in): 0.0847", unbiased - plugin),
        Ref(f"pass^{k}: all {k} correct: 0.0000", GIVEN, GIVEN, hat),
        Ref(f"pass^{k}: all {k} correct help: C(c, k)/C(n, k); plug-in 0.0024", GIVEN, GIVEN, hat_plugin),
        Ref(f"k = {k} unbiased 0.917 plug-in 0.832 gap 0.085", GIVEN, unbiased, plugin, unbiased - plugin),
        Ref(f"k = {k} pass@k 0.917 pass^k 0.000 gap 0.917", GIVEN, unbiased, hat, unbiased - hat),
        Ref(f"n = {n} samples, c = {c} correct · all {n} values of k shown", GIVEN, GIVEN, n),
        Ref(f"n = {n}, c = {c} · shaded: the gap where flaky behaviour hides · all {n} values of k shown",
            GIVEN, GIVEN, n),
        Ref("unbiased 1 − C(n−c,k)/C(n,k)", FORMULA),
        Ref("plug-in 1 − (1 − c/n)^k", FORMULA, FORMULA),
    ]


def _simulation(p: float, n: int, k: int, problems: int, seed: int) -> dict[str, float]:
    """The bias simulation redone: c ~ Binomial(n, p) per problem from torch's generator seeded as the page's (on
    the device the page draws on; MPS draws on the CPU), each problem scored by both estimators in exact fractions."""
    device = get_device()
    draw = torch.device("cpu") if device.type == "mps" else device
    gen = torch.Generator(device=draw).manual_seed(seed)
    count = torch.full((problems,), float(n), dtype=torch.float64, device=draw)
    prob = torch.full((problems,), p, dtype=torch.float64, device=draw)
    c = torch.binomial(count, prob, generator=gen).long().cpu().numpy()  # (problems,)
    unbiased = np.array([ref.pass_at_k(n, x, k) for x in range(n + 1)])[c]
    plugin = np.array([ref.pass_at_k_plugin(n, x, k) for x in range(n + 1)])[c]
    truth = 1 - (1 - p) ** k
    return {
        "truth": truth, "mean_u": unbiased.mean(), "mean_p": plugin.mean(),
        "se_u": unbiased.std() / math.sqrt(problems), "se_p": plugin.std() / math.sqrt(problems),
        "bias_exact": -float(_bias_curve(n, p)[k - 1]),
    }


def _refs_bias(p: float, n: int, k: int, problems: int, seed: int) -> list[Ref]:
    s = _simulation(p, n, k, problems, seed)
    return [
        Ref(f"{problems:,} problems of {n} samples drawn on {get_device()} in 0.04 s, seed {seed}.", SIM_CAPTION),
        Ref(f"Truth 1 − (1 − p)^{k}: 0.8319", FORMULA, FORMULA, GIVEN, s["truth"]),
        Ref(f"Truth 1 − (1 − p)^{k} help: p = {p:g}", FORMULA, FORMULA, GIVEN, GIVEN),
        Ref("Unbiased mean ± 0.0007: 0.8315", s["se_u"], s["mean_u"]),
        Ref("Unbiased mean ± 0.0007 help: ± one standard error; on the truth, up to noise", s["se_u"]),
        Ref("Plug-in mean ± 0.0007: 0.7592", s["se_p"], s["mean_p"]),
        Ref("Plug-in mean ± 0.0007 help: ± one standard error; below the truth (Jensen)", s["se_p"]),
        Ref("Plug-in bias: -0.0728", s["mean_p"] - s["truth"]),
        Ref("Plug-in bias help: exact: -0.0722", s["bias_exact"]),
        Ref("unbiased: mean 0.8315 ± 0.0007, bias -0.0005", s["mean_u"], s["se_u"], s["mean_u"] - s["truth"]),
        Ref("plug-in: mean 0.7592 ± 0.0007, bias -0.0728", s["mean_p"], s["se_p"], s["mean_p"] - s["truth"]),
        Ref(f"estimated pass@k of one problem p = {p:g}, n = {n}, k = {k}, {problems:,} problems · solid green: truth "
            "1 − (1 − p)^k = 0.8319", GIVEN, GIVEN, GIVEN, GIVEN, FORMULA, FORMULA, s["truth"]),
    ]


def _compare(acc_a: float, acc_b: float, N: int, **paired: int) -> tuple[float, float, float]:
    """(B - A, the 95% half-width, the two-sided p-value) in points, a z test on the difference."""
    se = ref.compare_se(acc_a, acc_b, N, **paired)
    diff = acc_b - acc_a
    return 100 * diff, 100 * ref.compare_half_width(acc_a, acc_b, N, **paired), 2 * stats.norm.sf(abs(diff) / se)


def _refs_comparison(acc_a: float, acc_b: float, N: int, only_a: int | None = None, only_b: int | None = None,
                     independent: bool = True) -> list[Ref]:  # fmt: skip
    d, hw, p = _compare(acc_a, acc_b, N)
    refs = [
        Ref("**Independent.** B - A = +1.5 ± 3.9 points (95%): not significant, the interval contains 0.",
            d, hw, CONFIDENCE, "the null difference"),
        Ref("SE of A: 1.4 points", 100 * ref.standard_error(acc_a, N)),
        Ref("SE of A help: √(acc (1 − acc) / N)", FORMULA),
        Ref("SE of B: 1.4 points", 100 * ref.standard_error(acc_b, N)),
        Ref("B − A, independent: +1.5 ± 3.9", d, hw),
        Ref("B − A, independent help: points; ± the half-width of the 95% interval; two-sided p = 0.456",
            CONFIDENCE, p),
        Ref("accuracy (95% interval)", CONFIDENCE),
    ] if independent else []
    if only_a is not None:
        d, hw, p = _compare(acc_a, acc_b, N, only_a=only_a, only_b=only_b)
        refs += [
            Ref("**Paired.** B - A = +1.5 ± 1.9 points (95%): not significant, the interval contains 0.",
                d, hw, CONFIDENCE, "the null difference"),
            Ref("B − A, paired: +1.5 ± 1.9", d, hw),
            Ref("B − A, paired help: points; ± the half-width of the 95% interval; two-sided p = 0.123",
                CONFIDENCE, p),
        ]
    return refs


_E0 = EV.defaults()
_CODE = _preset(EV, "Code benchmark")
_D_PAIRED = _preset(EV, "D, paired")

# The Estimators explanation as the Code benchmark preset shows it (n = 200 changes its sentence on the worst k).
_ESTIMATORS_TEXT = [
    Ref("its average over the draws is exactly pass@k = 1 − (1 − p)^k", FORMULA),
    Ref("the curve 1 − (1 − x)^k bends downwards", FORMULA),
    Ref("Both agree at k = 1, and at k = n the blue one reaches 1", GIVEN, 1.0),
    Ref(f"With n = {_CODE['n']} samples the worst k lies strictly between 1 and n only when p is above 0.0135; for "
        "rarer successes the bias grows all the way to k = n, and as p approaches 1 the worst k moves down to 2. At "
        f"p = {_CODE['p']:g} it is k = 42.",
        GIVEN, GIVEN, _interior_threshold(_CODE["n"]), GIVEN, _worst_k(_CODE["n"], 0.999), GIVEN,
        _worst_k(_CODE["n"], _CODE["p"])),
    Ref("√(p(1 − p)/N)", FORMULA),
    Ref("(lesson, sections 3.9 and 9)", "the lesson's section numbers"),
    Ref("GPT-3 used 13-grams", "Brown et al. 2020's n-gram length, the source's number"),
]

EVALUATION = {
    "defaults": [*_refs_estimators(_E0["n"], _E0["c"], _E0["k"]), Ref("pass^k plug-in (c/n)^k", FORMULA)],
    "tab Bias simulation": _refs_bias(_E0["p"], _E0["n"], _E0["k"], _E0["problems"], _E0["sim_seed"]),
    "tab Model comparison": _refs_comparison(_E0["accA"] / 100, _E0["accB"] / 100, _E0["questions"]),
    "preset Code benchmark": _ESTIMATORS_TEXT + [
        r for r in _refs_estimators(_CODE["n"], _CODE["c"], _CODE["k"])
        if not r.snippet.startswith(("unbiased 1", "plug-in 1"))  # the legends, as at the defaults
    ],
    "preset D, paired": _refs_comparison(_D_PAIRED["accA"] / 100, _D_PAIRED["accB"] / 100, _D_PAIRED["questions"],
                                         _D_PAIRED["onlyA"], _D_PAIRED["onlyB"]),
}


# the shipped tiny GPT: its config as the checkpoint stores it (JSON), and its attention from core's numpy forward
# (that forward against torch and a reference implementation is core's tests' business)
_GPT = json.loads(bytes(np.load(tiny_gpt.CHECKPOINT_PATH)["config"]).decode("utf-8"))


def _gpt_weights(text: str, layer: int) -> np.ndarray:
    params, cfg, _ = tiny_gpt.load_checkpoint()
    return tiny_gpt.attention_numpy(params, cfg, np.frombuffer(text.encode("utf-8")[:64], dtype=np.uint8))[layer - 1]


def _gpt_future(text: str, layer: int) -> float:
    """The largest weight a query gives a later key (strictly above the diagonal)."""
    w = _gpt_weights(text, layer)
    T = w.shape[1]
    return float(max(w[h, i, j] for h in range(w.shape[0]) for i in range(T) for j in range(i + 1, T)))


def _gpt_per_head(text: str, layer: int) -> list[float]:
    """Each head's weight on the byte just before, averaged over the queries after the first."""
    w = _gpt_weights(text, layer)
    return [float(np.mean([w[h, t, t - 1] for t in range(1, w.shape[1])])) for h in range(w.shape[0])]


def _uniform_previous(n: int) -> float:
    """Uniform attention's weight on the previous byte: query t (from 0) sees t + 1 bytes, averaged over t = 1..n-1."""
    return sum(1 / (t + 1) for t in range(1, n)) / (n - 1)


def _gpt_previous(text: str, layer: int) -> float:
    """The weight on the byte just before, averaged over the heads and the queries after the first."""
    w = _gpt_weights(text, layer)
    return float(np.mean([[w[h, t, t - 1] for t in range(1, w.shape[1])] for h in range(w.shape[0])]))


# ====================================================================== 6. Attention (default: d_k = 16, MHA 4 heads)
TOY = ("a statistic of the seeded toy layer (hashed embeddings, seeded projections: the whole toy would be "
       "re-implemented); its weights are checked against a numpy softmax by "
       "test_views_attention.py::test_head_rows_sum_to_one_and_match_a_numpy_softmax and the mean over the model "
       "heads by test_core_attention.py::test_head_summary_averages_the_model_heads_only")
TOY_CAUSALITY = ("the toy layer's largest change of an earlier output without the mask "
                 "(test_core_attention.py::test_toy_causality_check)")
TOY_BUGGY = ("the first row's own share of its unmasked softmax in the toy layer "
             "(test_core_attention.py::test_mask_after_softmax_bug_loses_exactly_the_future_mass)")
ROUNDING = "float64 rounding of a row sum (one unit in the last place of 1, 2^-52), not a lesson number"
ONE_HOT = "a one-hot row's largest weight (the readout's scale)"
ROW_SUM = 1.0  # a softmax row sums to 1
DRAWS = "the scale study's number of random draws (a setting of the figure)"
GRID = "the heatmap's display grid, at most 64 cells a side (viz.attention.MAX_CELLS)"
GPU = ("the GPU the chart draws, an 80 GB H100 (drawn at 80 GiB: "
       "test_views_attention.py::test_the_kv_chart_draws_an_80_gb_gpu_at_80_gib_on_its_gib_axis)")
BF16 = "bf16's 2 bytes per value"
LAST = "the last token's index, counted from 0 as the heatmap's labels count"
REAL = ("all-MiniLM-L6-v2's attention on the sentence (the real model's output; its layer equals torch's "
        "TransformerEncoderLayer in test_core_attention_real.py::test_one_layer_equals_torch_transformer_encoder_layer "
        "and the share is the mean of the [CLS] and [SEP] columns in test_core_attention_real.py::"
        "test_special_token_share)")
MINILM = {"layers": 6, "heads": 12, "hidden": 384}  # sentence-transformers/all-MiniLM-L6-v2, config.json


def _multiplier(scale: str, d_k: int, d_model: int, temp: float = 1.0) -> float:
    return {"sqrt_dk": 1 / math.sqrt(d_k), "none": 1.0, "sqrt_dmodel": 1 / math.sqrt(d_model)}[scale] / temp


def _bound(T: int, causal: bool = True) -> float:
    """The uniform row's entropy, averaged over the rows: log t for causal row t (t = 1..T), log T without a mask."""
    return float(np.mean([ref.uniform_row_entropy(t) for t in range(1, T + 1)])) if causal else math.log(T)


def _readout(p: dict, readout: str) -> Ref:
    """The heads' figure's title and its readout line at the view's T: the multiplier scale/T, and over the model's own
    heads (not the designed ones) the mean row entropy -Σ a log a in nats, its share of the mean entropy of rows uniform
    over the keys each may see (:func:`_bound`), and the mean largest weight of a row; numpy on the toy layer's weights.
    ``readout``: the line as the view prints it (its numbers are compared with these)."""
    d_k = p["dk"] or p["dm"] // p["h"]
    settings = ToyModelSettings(p["dm"], p["h"], d_k, p["kv"], p["layer_seed"])
    tokens = tokenize(DEFAULT_TEXT, "word").tokens
    w = toy_attention(tokens, settings, p["scale"], p["temp"], p["causal"], p["designed"]).weights
    a = w[: p["h"]].astype(np.float64)  # (model heads, T, T)
    entropy = float(-np.where(a > 0, a * np.log(np.where(a > 0, a, 1.0)), 0.0).sum(axis=-1).mean())
    bound = _bound(len(tokens), p["causal"])
    top = float(a.max(axis=-1).mean())
    return Ref("Attention weights per head (rows: queries, columns: keys; each row sums to 1) " + readout,
               ROW_SUM, GIVEN, _multiplier(p["scale"], d_k, p["dm"], p["temp"]), entropy, 100 * entropy / bound, bound,
               top)  # fmt: skip


def _d_k(dm: int, h: int) -> list[Ref]:
    return [Ref(f"d_k per head: {dm // h}", Fraction(dm, h)), Ref(f"d_k per head help: d_model {dm} ÷ {h} heads",
                                                                    GIVEN, GIVEN)]


def _toy_stats(T: int) -> list[Ref]:
    return [
        Ref("Logit std: 0.90", TOY),
        Ref("Row entropy: 1.39 nats", TOY),
        Ref("Row entropy help: mean over the model heads: 88% of the uniform-row bound 1.59", TOY, _bound(T)),
        Ref("Largest weight per row: 0.45", TOY),
    ]


def _shape_caption(dm: int, h: int, kv: int, variant: str) -> Ref:
    return Ref(f"d_k = {dm // h} · {variant}: {h} query heads, {kv} KV heads", Fraction(dm, h), GIVEN, GIVEN)


def _scale_refs(T: int, dm: int, h: int, temp: float = 1.0) -> list[Ref]:
    """The Scale tab: theory Var = d_k · multiplier² (ref.logit_variance) and the study's random tokens."""
    d_k = dm // h
    n = max(min(T, 128), 2)  # the study draws as many tokens as the text has, at most 128 (its x axis is d_k)
    var = {c: ref.logit_variance(d_k, c, dm) / temp**2 for c in ("sqrt_dk", "none", "sqrt_dmodel")}
    return [
        Ref(f"Random q, k with independent zero-mean, unit-variance components, {n} tokens, no mask, 8 draws; dotted "
            "lines: theory d_k · multiplier². 1/√d_model uses your d_model.", GIVEN, DRAWS, FORMULA),
        Ref("Var(logit), 1/√d_k: 1", FORMULA, var["sqrt_dk"]),
        Ref("Var(logit), no scale: 16", var["none"]),
        Ref("Var(logit), 1/√d_model: 0.25", FORMULA, var["sqrt_dmodel"]),
        Ref(f"Var(logit), 1/√d_k help: theory d_k · multiplier² at your d_k = {d_k}", FORMULA, d_k),
        Ref(f"Var(logit), no scale help: theory d_k · multiplier² at your d_k = {d_k}", d_k),
        Ref(f"Var(logit), 1/√d_model help: theory d_k · multiplier² at your d_k = {d_k}", FORMULA, d_k),
        Ref("uniform row: log T = 2.40", math.log(n)),
        Ref(f"your d_k = {d_k}", d_k),
        Ref("1/√d_k", FORMULA),
        Ref("1/√d_model", FORMULA),
    ]


# The KV presets' models as their published config.json files give them: layers, query heads, KV heads, head dim
# (hidden size / query heads), and the context the preset names (Llama 3.1: 131,072; Llama 2: 4,096; LLaMA: 2,048;
# Mixtral: 32,768).
KV_MODELS = {
    "Llama-3.1-70B at 128k tokens": ((80, 64, 8, 8192 // 64), 131_072),
    "Llama-3.1-8B at 128k tokens": ((32, 32, 8, 4096 // 32), 131_072),
    "Llama-2-7B (MHA) at 4k tokens": ((32, 32, 32, 4096 // 32), 4_096),
    "Llama-3.1-405B at 128k tokens": ((126, 128, 8, 16384 // 128), 131_072),
    "LLaMA-65B (MHA) at 2k tokens": ((80, 64, 64, 8192 // 64), 2_048),
    "Mixtral-8x7B at 32k tokens": ((32, 32, 8, 4096 // 32), 32_768),
}
_UNITS = ("B", "KiB", "MiB", "GiB", "TiB")


def _binary(n_bytes: float) -> tuple[float, str]:
    """A byte count in the largest binary unit that keeps it at 1 or more, as the page prints sizes."""
    power = min(int(math.log2(n_bytes) // 10), len(_UNITS) - 1)
    return n_bytes / 1024**power, _UNITS[power]


def _shown(value: float) -> str:
    return f"{value:,.0f}" if value >= 100 or float(value).is_integer() else f"{value:,.3g}"


def _refs_kv(model: str) -> list[Ref]:
    """The KV-cache calculator's readouts for a preset model: 2 · L · K · H · 2 bytes per token (bf16), one sequence."""
    (L, Hq, K, H), tokens = KV_MODELS[model]
    per = {name: ref.kv_bytes_per_token(L, heads, H, 2) for name, heads in (("MHA", Hq), ("GQA", K), ("MQA", 1))}
    chosen = "MHA" if K == Hq else "MQA" if K == 1 else "GQA"
    total, unit = _binary(per[chosen] * tokens)
    mha_total, mha_unit = _binary(per["MHA"] * tokens)
    refs = [
        Ref(f"KV cache per token: {_shown(per[chosen] / 1024)} KiB", per[chosen] / 1024),
        Ref(f"KV cache per token help: 2 · L {L} · K {K} · H {H} · 2 bytes. DeepSeek-V3's MLA caches 512 + 64 values "
            "per layer per token (68.6 KiB in bf16 over 61 layers): not a 2·L·K·H shape",
            FORMULA, GIVEN, GIVEN, GIVEN, BF16,
            "DeepSeek-V3's kv_lora_rank (config.json)", "its qk_rope_head_dim (config.json)",
            (512 + 64) * 61 * 2 / 1024, "its num_hidden_layers (config.json)", FORMULA),
        Ref(f"At {tokens:,} tokens: {_shown(total)} {unit}", tokens, total),
        Ref(f"KV cache at {tokens:,} tokens", tokens),
        Ref("one 80 GB GPU (80 GiB)", GPU),
    ]
    if chosen == "MHA":
        refs.append(Ref(f"At {tokens:,} tokens help: 1 sequence(s); MHA, one KV head per query head", tokens, GIVEN))
    else:
        refs.append(Ref(f"At {tokens:,} tokens help: 1 sequence(s); {Hq // K}× smaller than MHA "
                        f"({_shown(mha_total)} {mha_unit})", tokens, GIVEN, Fraction(Hq, K), mha_total))
    for name, heads in (("MHA", Hq), ("MQA", 1)):
        if name == chosen:
            continue
        t, u = _binary(per[name] * tokens)
        refs += [
            Ref(f"{name} per token: {_shown(per[name] / 1024)} KiB", per[name] / 1024),
            Ref(f"{name} per token help: {name}: {heads} KV head{'s' if heads > 1 else ''}; {_shown(t)} {u} in all",
                "MQA's one KV head" if heads == 1 else "the query heads (MHA: one KV head each)", t),
        ]
    return refs


_A0 = AT.defaults()
_T0 = len(DEFAULT_TEXT.split())  # the default sentence's words (split on words)
_NO_SCALE = _preset(AT, "No scale at d_k = 128: one-hot rows")
_TRAP = _preset(AT, "The trap: 1/√d_model with 16 heads")
_GQA = _preset(AT, "GQA: 8 query heads share 2 KV heads")
_RANDOM = _preset(AT, "512 random tokens")

ATTENTION = {
    "defaults": [
        Ref(f"Tokens: {_T0}", _T0),
        *_d_k(_A0["dm"], _A0["h"]),
        Ref("Logits multiplied by: 0.25", _multiplier(_A0["scale"], _A0["dm"] // _A0["h"], _A0["dm"], _A0["temp"])),
        *_toy_stats(_T0),
        Ref("Largest weight per row help: mean over rows; 1 = one-hot", ONE_HOT),
        Ref("KV heads (MHA): 4", _A0["kv"]),
        _readout(_A0, "T = 1 : logits × 0.25 · model heads' mean row entropy 1.39 nats (88% of uniform rows' 1.59), "
                 "mean top weight 0.45"),
        Ref("head 1", COUNT),
    ],
    "tab Outputs": [],
    "tab Mask": [
        Ref("Causality check: change token 10 'tired' → 'zebra' and rerun the layer. With the mask, every earlier "
            "output moves by 0 (nothing); without it, by up to 0.447.", _T0 - 1, 0.0, TOY_CAUSALITY),
        Ref("Correct row sums: 1.000", ROW_SUM),
        Ref("Correct row sums help: largest error 1.1e-16", ROUNDING),
        Ref("Buggy row sums: 0.021 – 1.000", TOY_BUGGY, ROW_SUM),  # the last row sees every key: nothing is lost
        Ref("Earlier outputs, masked: 0", 0.0),
        Ref("Earlier outputs, masked help: largest change, token 10 'tired' → 'zebra'", _T0 - 1),
        Ref("Earlier outputs, no mask: 0.447", TOY_CAUSALITY),
        Ref("Causal mask: add −∞ before the softmax, or multiply by 0 after it?", FORMULA),
        Ref("× 0 after softmax (bug)", FORMULA),
    ],
    "tab Scale": _scale_refs(_T0, _A0["dm"], _A0["h"], _A0["temp"]),
    "tab KV cache": _refs_kv("Llama-3.1-70B at 128k tokens"),
    "tab Real model": [
        Ref(f"all-MiniLM-L6-v2, a {MINILM['layers']}-layer encoder ({MINILM['heads']} heads of d_k = 32)",
            MINILM["layers"], MINILM["heads"], MINILM["hidden"] / MINILM["heads"]),
        # every word of the sentence is one WordPiece (test_core_attention_real.py::test_wordpiece), with [CLS], [SEP]
        Ref("WordPiece tokens: 13", _T0 + 2),
        Ref("d_k per head: 32", MINILM["hidden"] / MINILM["heads"]),
        Ref("d_k per head help: 384 dimensions ÷ 12 heads; logits × 1/√32 = 0.177",
            MINILM["hidden"], MINILM["heads"], FORMULA, MINILM["hidden"] / MINILM["heads"],
            1 / math.sqrt(MINILM["hidden"] / MINILM["heads"])),
        Ref("[CLS] + [SEP] weight, layer 1: 35%", GIVEN, REAL),
        Ref("[CLS] + [SEP] weight, layer 1 help", GIVEN),
        Ref("all-MiniLM-L6-v2, layer 1: attention per head", GIVEN),
        *[Ref(f"L1 head {i}", COUNT) for i in range(1, MINILM["heads"] + 1)],
    ] if real_model_available() else [],
    "tab Tiny GPT": [
        Ref("a byte-level decoder of 4 layers with 4 heads of d_k = 32", _GPT["n_layer"], _GPT["n_head"],
            _GPT["d_model"] / _GPT["n_head"]),
        Ref("leaves every weight above the diagonal at 0", _gpt_future(DEFAULT_TEXT, 1)),
        Ref("Bytes: 48", len(DEFAULT_TEXT.encode("utf-8"))),
        Ref("Bytes help: the bytes the tiny GPT reads (the text's first 64 at most)",
            "the tab's cut (views.attention)"),
        Ref("run in numpy on the sidebar's tokens as UTF-8 (their first 64 bytes)", "the encoding's name",
            "the tab's cut (views.attention)"),
        Ref("Weight on a later byte: 0", _gpt_future(DEFAULT_TEXT, 1)),
        Ref("Weight on the previous byte, layer 1: 48%", GIVEN, 100 * _gpt_previous(DEFAULT_TEXT, 1)),
        Ref("Weight on the previous byte, layer 1 help: the weight a byte puts on the byte just before it, averaged "
            "over layer 1's 4 heads (from 32% to 66%), over the queries after the first; uniform attention over the "
            "visible bytes would give 7% on this text", GIVEN, GIVEN, _GPT["n_head"],
            100 * min(_gpt_per_head(DEFAULT_TEXT, 1)), 100 * max(_gpt_per_head(DEFAULT_TEXT, 1)),
            100 * _uniform_previous(len(DEFAULT_TEXT.encode("utf-8")))),
        Ref("Tiny GPT, layer 1: causal attention", GIVEN),
    ],
    "preset No scale at d_k = 128: one-hot rows": [
        _shape_caption(_NO_SCALE["dm"], _NO_SCALE["h"], _NO_SCALE["kv"], "MHA"),
        Ref("Logits are multiplied by 1; 1/√d_k at temperature 1 would be 0.08839.",
            _multiplier("none", 128, 512), FORMULA, GIVEN, 1 / math.sqrt(_NO_SCALE["dm"] // _NO_SCALE["h"])),
        *_d_k(_NO_SCALE["dm"], _NO_SCALE["h"]),
        Ref("Logits multiplied by: 1", _multiplier(_NO_SCALE["scale"], 128, _NO_SCALE["dm"])),
        *_toy_stats(_T0),
        _readout(_NO_SCALE, "T = 1 : logits × 1 · model heads' mean row entropy 0.21 nats (13% of uniform rows' "
                 "1.59), mean top weight 0.93"),
    ],
    "preset The trap: 1/√d_model with 16 heads": [
        _shape_caption(_TRAP["dm"], _TRAP["h"], _TRAP["kv"], "MHA"),
        Ref("Logits are multiplied by 0.04419; 1/√d_k at temperature 1 would be 0.1768.",
            _multiplier(_TRAP["scale"], _TRAP["dm"] // _TRAP["h"], _TRAP["dm"]), FORMULA, GIVEN,
            1 / math.sqrt(_TRAP["dm"] // _TRAP["h"])),
        *_d_k(_TRAP["dm"], _TRAP["h"]),
        Ref("Logits multiplied by: 0.04419", _multiplier(_TRAP["scale"], _TRAP["dm"] // _TRAP["h"], _TRAP["dm"])),
        *_scale_refs(_T0, _TRAP["dm"], _TRAP["h"]),
    ],
    "preset GQA: 8 query heads share 2 KV heads": [
        _shape_caption(_GQA["dm"], _GQA["h"], _GQA["kv"], "GQA"),
        *_d_k(_GQA["dm"], _GQA["h"]),
        Ref("Logits multiplied by: 0.1768", _multiplier("sqrt_dk", _GQA["dm"] // _GQA["h"], _GQA["dm"])),
        *_toy_stats(_T0),
        Ref("KV heads (GQA): 2", _GQA["kv"]),
        _readout(_GQA, "T = 1 : logits × 0.1768 · model heads' mean row entropy 1.44 nats (90% of uniform rows' "
                 "1.59), mean top weight 0.42"),
        Ref("head 1 · KV 1", "a panel's head and the KV head it reads: consecutive groups of h/K query heads share one "
            "(test_core_attention.py::test_gqa_in_the_toy_model_shares_keys_within_groups)"),
    ],
    "preset 512 random tokens": [
        Ref("Tokens: 512", _RANDOM["tokens"]),
        *_toy_stats(_RANDOM["tokens"]),
        Ref("Attention weights per head (rows: queries, columns: keys; each row sums to 1) 512 tokens shown as 64×64 "
            "blocks of about 8: a cell is the weight a query block gives to a key block (rows still sum to 1)",
            ROW_SUM, _RANDOM["tokens"], GRID, GRID, _RANDOM["tokens"] / 64, ROW_SUM),
    ],
    **{f"preset {name}": _refs_kv(name)
       for name in KV_MODELS if name != "Llama-3.1-70B at 128k tokens"},
}
# fmt: on

TABLES: dict[str, dict[str, list[Ref]]] = {
    "pages/5_Evaluation.py": EVALUATION,
    "pages/6_Attention.py": ATTENTION,
}
