"""The attention page's state and what it shows: per-head heatmaps of a seeded toy layer, its outputs, the causal
mask, the √d_k scale, the KV-cache calculator and a real model's heads (one tab each, built only when open)."""

from __future__ import annotations

import dataclasses
import functools

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import attention, attention_real, kv_cache, tiny_gpt, tokenizer, toy_attention
from core.model_spec import CATALOGUE, KIB, ModelSpec, kv_cache_bytes_per_token
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, inputs, with_answers
from views import predict as ask
from views.state import Answer, Field, Spec, State
from viz import format as fmt
from viz.attention import (
    SCALE_NAMES,
    attention_figure,
    attention_kv_cache_figure,
    attention_mask_figure,
    attention_outputs_figure,
    attention_scale_figure,
    sweep_steps,
)

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "Write causal self-attention from scratch and explain the √d_k and the mask."
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "saturating",
    "the mask goes in before",
    "mixes the values",
    "nearly one-hot",
    "√128 ≈ 11",
)

QUICK_CHECK = QuickCheck(
    question=(
        "A 70B model has 80 layers, 64 query heads and 8 KV heads of dimension 128, and caches in bf16. How much KV "
        "cache does one sequence of **32k tokens** (32,768) need?"
    ),
    options=(
        "128 MiB",
        "5 GiB",
        "10 GiB",
        "80 GiB",
    ),
    right=2,
    answer=(
        "2 · 80 · 8 · 128 · 2 bytes = 327,680 bytes = **320 KiB per token**; × 32,768 tokens = **10 GiB**. With one "
        "KV head per query head (64, MHA) it would be 80 GiB: load the preset “Llama-3.1-70B at 128k tokens” and "
        "set the context to 32768."
    ),
)

VIEWS = ("Heads", "Outputs", "Mask", "Scale", "KV cache", "Real model", "Tiny GPT")
DTYPES = tuple(kv_cache.BYTES_PER_VALUE)
GPT = tiny_gpt.SHIPPED_CONFIG  # the shipped tiny GPT's shape (layers, heads) for the tab's controls
GPT_BYTES = 64  # the tiny GPT tab reads the text's first 64 bytes: a heatmap's side without blocks (viz MAX_CELLS)
_TOP = inputs.KV_LIMITS


def kv_shape(spec: ModelSpec) -> dict[str, int]:
    """The KV calculator's shape fields of a catalogue model (core.model_spec, which the memory, serving, scaling
    and LoRA pages read too): layers L, query heads, KV heads K, head dim H."""
    return {"L": spec.layers, "Hq": spec.n_heads, "Hkv": spec.n_kv_heads, "hd": spec.head_dim}


def _kv_preset(name: str, tokens: int) -> dict:
    return kv_shape(CATALOGUE[name]) | {"ctx": tokens, "dtype": "bf16", "B": 1, "attn_view": "KV cache"}


_70B = kv_shape(CATALOGUE["Llama-3-70B"])  # the calculator's default shape


MAIN_PRESETS = {
    "The lesson sentence, designed heads": {
        "src": "text",
        "text": tokenizer.DEFAULT_TEXT,
        "split": "word",
        "dm": 64,
        "h": 4,
        "kv": 4,
        "dk": 0,
        "scale": "sqrt_dk",
        "temp": 1.0,
        "causal": True,
        "designed": True,
        "attn_view": "Heads",
    },
    "No scale at d_k = 128: one-hot rows": {"dm": 512, "h": 4, "kv": 4, "dk": 0, "scale": "none", "temp": 1.0},
    "The trap: 1/√d_model with 16 heads": {
        "dm": 512,
        "h": 16,
        "kv": 16,
        "dk": 0,
        "scale": "sqrt_dmodel",
        "temp": 1.0,
        "attn_view": "Scale",
    },
    "Causal mask: −∞ before vs × 0 after": {"causal": True, "attn_view": "Mask"},
    "GQA: 8 query heads share 2 KV heads": {"dm": 256, "h": 8, "kv": 2, "dk": 0, "attn_view": "Heads"},
    "512 random tokens": {"src": "random", "tokens": 512, "attn_view": "Heads"},
}
# Preset -> (catalogue model, its context window): every catalogue model with standard attention (the custom
# shape aside). A 128k-token context is Llama 3.1's (Meta, July 2024; Llama 3 had 8k); 3.1 kept Llama 3's
# shapes, so the catalogue's Llama-3 entries give its KV cache. LLaMA: 2k (Touvron et al. 2023); Mixtral: 32k
# (Jiang et al. 2024). DeepSeek-V3's MLA cache is no 2 L K H shape: see _MLA_NOTE.
KV_MODELS: dict[str, tuple[str, int]] = {
    "Llama-3.1-70B at 128k tokens": ("Llama-3-70B", 131_072),
    "Llama-3.1-8B at 128k tokens": ("Llama-3-8B", 131_072),
    "Llama-2-7B (MHA) at 4k tokens": ("Llama-2-7B", 4_096),
    "Llama-3.1-405B at 128k tokens": ("Llama-3.1-405B", 131_072),
    "LLaMA-65B (MHA) at 2k tokens": ("LLaMA-65B", 2_048),
    "Mixtral-8x7B at 32k tokens": ("Mixtral-8x7B", 32_768),
}
KV_PRESETS = {name: _kv_preset(model, tokens) for name, (model, tokens) in KV_MODELS.items()}
# Preset names used before the rename (a deck file may still name them; links carry values, not preset names).
PRESET_ALIASES = {
    "Llama-3-70B at 128k tokens": "Llama-3.1-70B at 128k tokens",
    "Llama-3-8B at 128k tokens": "Llama-3.1-8B at 128k tokens",
}

SPEC = Spec(
    "Attention",
    (
        Field("attn_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs", aliases=("view",)),
        Field("src", "Tokens from", "choice", "text", choices=("text", "random"), widget="segmented"),
        Field("text", "Text", "text", tokenizer.DEFAULT_TEXT, max_chars=20_000),
        Field("split", "Split on", "choice", "word", choices=("word", "char"), widget="segmented"),
        Field("tokens", "Random tokens", "int", 64, lo=2, hi=512, widget="slider", aliases=("n",)),
        Field("dm", "d_model", "int", 64, lo=1, hi=toy_attention.MAX_D_MODEL, step=8),
        Field("h", "Heads", "int", 4, lo=1, hi=toy_attention.MAX_HEADS, widget="slider"),
        Field(
            "kv",
            "KV heads",
            "int",
            4,
            lo=1,
            hi=toy_attention.MAX_HEADS,
            widget="slider",
            help="Query heads share K and V in groups",
        ),
        Field("dk", "d_k (0: d_model / heads)", "int", 0, lo=0, hi=toy_attention.MAX_D_MODEL),
        Field("layer_seed", "Seed", "int", 0, lo=0, hi=1e9, aliases=("seed",)),
        Field(
            "scale",
            "Scale of the logits",
            "choice",
            attention.SCALE_CHOICES[0],
            choices=attention.SCALE_CHOICES,
            widget="radio",
            extra=(("captions", [attention.SCALE_LABELS[c] for c in attention.SCALE_CHOICES]),),
        ),
        Field(
            "temp",
            "Temperature",
            "float",
            1.0,
            lo=0.05,
            hi=20.0,
            step=0.1,
            help="logits ÷ T. The row under the heads' heatmaps drags T in the browser while the figure is small "
            "(a short text: more tokens or heads are too heavy to send at every T; then change T here).",
        ),
        Field("causal", "Causal mask", "bool", True),
        Field("designed", "Designed heads", "bool", True, help="previous token, first token, same word"),
        Field("L", "Layers L", "int", _70B["L"], lo=1, hi=_TOP["layers"]),
        Field("Hq", "Query heads", "int", _70B["Hq"], lo=1, hi=_TOP["query_heads"]),
        Field("Hkv", "KV heads K", "int", _70B["Hkv"], lo=1, hi=_TOP["kv_heads"]),
        Field("hd", "Head dim H", "int", _70B["hd"], lo=1, hi=_TOP["head_dim"]),
        Field("dtype", "Number format", "choice", "bf16", choices=DTYPES),
        Field("ctx", "Context (tokens)", "int", 131_072, lo=1, hi=_TOP["tokens"], step=1024),
        Field("B", "Sequences (batch)", "int", 1, lo=1, hi=_TOP["batch"]),
        Field("rl", "Layer", "int", 1, lo=1, hi=attention_real.LAYERS, widget="slider"),
        Field("rh", f"Head (0: all {attention_real.HEADS})", "int", 0, lo=0, hi=attention_real.HEADS, widget="slider"),
        Field("gpt_layer", "Layer (tiny GPT)", "int", 1, lo=1, hi=GPT.n_layer, widget="slider"),
        Field("gpt_head", f"Head (tiny GPT; 0: all {GPT.n_head})", "int", 0, lo=0, hi=GPT.n_head, widget="slider"),
        ask.switch("predict_attn"),
        ask.guess(
            "guess_head",
            "Your guess: the panel that attends to the previous token",
            "int",
            1,
            toy_attention.MAX_HEADS + len(toy_attention.DESIGNED_PATTERNS),
        ),
    ),
    presets={**MAIN_PRESETS, **KV_PRESETS},
    answers={
        "Llama-3.1-70B at 128k tokens": Answer("KV cache per token", "320 KiB", "seed 002 A8.3, A10-07"),
    },
)


# ---------------------------------------------------------------------------------------------------------------
# What the page shows
# ---------------------------------------------------------------------------------------------------------------
# The heavy steps (the toy layer, each tab's figure) are cached here, keyed by plain hashable arguments, so that a
# change of one control rebuilds only what depends on it (a change of the KV calculator leaves the heatmaps alone).
# Cached figures are shared: callers must not mutate them (Page.chart copies before restyling for presenter mode).
_CACHE = 32

TOY_PARTS = ("Heads", "Outputs", "Mask", "Scale")
SCALE_TOKENS = 128  # most tokens of the scale study (its draws are random q and k, not the page's tokens)
# The heads' drag over the temperature: 41 log-spaced steps from 0.05 to 20 (a factor 400^(1/40) ≈ 1.16 apart, 4
# significant digits), T = 1 the middle one; the page's own T is merged in. A larger figure gets every other step,
# or no drag (viz.attention.sweep_steps keeps the steps' heatmaps within its cell budget).
TEMPERATURES: tuple[float, ...] = tuple(float(f"{0.05 * 400 ** (k / 40):.4g}") for k in range(41))


def tokens_of(state: State) -> tokenizer.Tokens:
    """The tokens the toy layer reads: the typed text split into words or characters, or seeded random words."""
    if state.src == "random":
        return tokenizer.random_tokens(int(state.tokens), int(state.layer_seed))
    return inputs.typed_tokens(state.text, state.split, fallback=tokenizer.DEFAULT_TEXT)


def toy_layer(state: State) -> tuple[toy_attention.ToyModelSettings, tuple[str, ...], str]:
    """The toy layer's settings closest to the state, a note for every change, and its variant (MHA, GQA, MQA)."""
    settings, notes = inputs.toy_settings(
        int(state.dm), int(state.h), int(state.dk) or None, int(state.kv), int(state.layer_seed)
    )
    return settings, notes, kv_cache.variant_name(settings.heads, settings.n_kv_heads)


def real_available() -> bool:
    """Whether the optional real model (all-MiniLM-L6-v2) is installed."""
    return attention_real.available()


@functools.lru_cache(maxsize=_CACHE)
def _toy(
    toks: tuple[str, ...],
    settings: toy_attention.ToyModelSettings,
    scale: str,
    temperature: float,
    causal: bool,
    designed: bool,
) -> toy_attention.ToyAttention:
    return toy_attention.toy_attention(toks, settings, scale, temperature, causal, designed)


@functools.lru_cache(maxsize=_CACHE)
def _sweep(
    toks: tuple[str, ...],
    settings: toy_attention.ToyModelSettings,
    scale: str,
    temps: tuple[float, ...],
    causal: bool,
    designed: bool,
) -> toy_attention.TemperatureSweep:
    return toy_attention.temperature_sweep(toks, settings, scale, temps, causal, designed)


def _sweep_kwargs(key: tuple, temps: tuple[float, ...], order: np.ndarray | None = None) -> dict:
    """attention_figure's weights and sweep arguments for the heads at ``temps`` (panels in ``order``)."""
    toks, settings, scale, temperature, causal, designed = key
    sweep = _sweep(toks, settings, scale, temps, causal, designed)
    summaries = sweep.summaries(settings.heads)  # over the model's own heads, before any shuffle
    if order is not None:
        sweep = dataclasses.replace(
            sweep, weights=sweep.weights[:, order], entropy=sweep.entropy[:, order], logit_std=sweep.logit_std[:, order]
        )
    active = temps.index(temperature)
    return {"weights": sweep.weights[active], "sweep": sweep, "summaries": summaries, "active": active}


@functools.lru_cache(maxsize=_CACHE)
def _heads_figure(toks, settings, scale, temperature, causal, designed, temps, theme, presenter) -> go.Figure:
    res = _toy(toks, settings, scale, temperature, causal, designed)
    columns = 4 if len(res.head_names) <= 8 else 6
    key = (toks, settings, scale, temperature, causal, designed)
    kw = _sweep_kwargs(key, temps) if temps else {"weights": res.weights}
    return attention_figure(
        tokens=res.tokens, head_names=res.head_names, columns=columns, theme=theme, presenter=presenter, **kw
    )


@functools.lru_cache(maxsize=_CACHE)
def _outputs_figure(toks, settings, scale, temperature, causal, designed, theme, presenter) -> go.Figure:
    res = _toy(toks, settings, scale, temperature, causal, designed)
    return attention_outputs_figure(
        res.outputs, res.tokens, res.head_names, columns=6, theme=theme, presenter=presenter
    )


@functools.lru_cache(maxsize=_CACHE)
def _mask(
    toks: tuple[str, ...],
    settings: toy_attention.ToyModelSettings,
    scale: str,
    temperature: float,
    theme: str,
    presenter: bool,
) -> tuple[attention.MaskComparison, go.Figure]:
    cmp = toy_attention.toy_mask_comparison(toks, settings, 0, scale, temperature)
    fig = attention_mask_figure(
        cmp.correct, cmp.buggy, toks, cmp.correct_row_sums, cmp.buggy_row_sums, theme=theme, presenter=presenter
    )
    return cmp, fig


@functools.lru_cache(maxsize=2 * _CACHE)
def _causality(
    toks: tuple[str, ...], settings: toy_attention.ToyModelSettings, scale: str
) -> toy_attention.CausalityCheck:
    return toy_attention.causality_check(toks, settings, scale=scale)


@functools.lru_cache(maxsize=2 * _CACHE)
def _statistics(tokens: int, d_model: int, temperature: float) -> attention.LogitStatistics:
    return attention.logit_statistics(tokens=tokens, d_model=d_model, temperature=temperature)


@functools.lru_cache(maxsize=_CACHE)
def _scale_figure(
    tokens: int, d_model: int, temperature: float, d_k: int, theme: str, presenter: bool
) -> tuple[attention.LogitStatistics, go.Figure]:
    stats = _statistics(tokens, d_model, temperature)
    fig = attention_scale_figure(
        stats.d_k,
        stats.variance,
        stats.entropy,
        stats.max_entropy,
        expected_variance=stats.expected_variance,
        current_d_k=d_k,
        theme=theme,
        presenter=presenter,
    )
    return stats, fig


@functools.lru_cache(maxsize=_CACHE)
def _kv_figure(kv: kv_cache.KVComparison, theme: str, presenter: bool) -> go.Figure:
    label, limit = kv_cache.GPU_MEMORY
    return attention_kv_cache_figure(
        kv.labels,
        kv.total,
        per_token_bytes=kv.per_token,
        context_tokens=kv.tokens,
        memory_limit_bytes=limit,
        memory_limit_label=label,
        theme=theme,
        presenter=presenter,
    )


@functools.lru_cache(maxsize=_CACHE)
def _real_figure(
    real_text: str, layer: int, head: int, theme: str, presenter: bool
) -> tuple[attention_real.RealAttention, go.Figure]:
    result = attention_real.real_attention(real_text)  # the model itself is loaded once per process
    weights, names = attention_real.layer_heads(result, layer, head)
    title = f"all-MiniLM-L6-v2, layer {layer}: attention per head (rows: queries, columns: keys)"
    columns = 6 if head == 0 else 1
    fig = attention_figure(
        weights, result.tokens, names, columns=columns, title=title, theme=theme, presenter=presenter
    )
    return result, fig


@functools.cache
def _gpt_model() -> tuple[dict, tiny_gpt.GPTConfig]:
    """The shipped tiny GPT (core/data/tiny_gpt.npz), loaded once; its numpy forward needs no torch."""
    params, cfg, _ = tiny_gpt.load_checkpoint()
    return params, cfg


def gpt_bytes(state: State, toks: tuple[str, ...]) -> tuple[bytes, str | None]:
    """The bytes the tiny GPT tab reads: the typed text (or the random tokens joined by spaces) as UTF-8, its first
    GPT_BYTES bytes, and a note when it was cut."""
    text = state.text if state.src == "text" and state.text.strip() else " ".join(toks)
    data = text.encode("utf-8")
    if len(data) <= GPT_BYTES:
        return data, None
    return data[:GPT_BYTES], (
        f"The tiny GPT tab reads the text's first {GPT_BYTES} of its {len(data):,} bytes (one heatmap cell a byte)."
    )


@functools.lru_cache(maxsize=_CACHE)
def gpt_attention(data: bytes) -> np.ndarray:
    """Every layer's and head's causal attention weights of the tiny GPT over ``data``: (n_layer, n_head, T, T)."""
    params, cfg = _gpt_model()
    return tiny_gpt.attention_numpy(params, cfg, np.frombuffer(data, dtype=np.uint8))


@functools.lru_cache(maxsize=_CACHE)
def _gpt_figure(data: bytes, layer: int, head: int, theme: str, presenter: bool) -> go.Figure:
    w = gpt_attention(data)[layer - 1]  # (H, T, T)
    heads = range(w.shape[0]) if head == 0 else [head - 1]
    labels = [fmt.byte_label(b) for b in data]
    title = (
        f"Tiny GPT, layer {layer}: causal attention per head over bytes (rows: queries, columns: keys; nothing above "
        "the diagonal)"
    )
    return attention_figure(
        w[list(heads)],
        labels,
        [f"head {h + 1}" for h in heads],
        columns=4 if head == 0 else 1,
        title=title,
        theme=theme,
        presenter=presenter,
    )


def kv_comparison(state: State) -> tuple[kv_cache.KVComparison, tuple[str, ...]]:
    """The KV-cache calculator's shape next to MHA and MQA (bytes), and a note for every input that had to change."""
    counts, bytes_per_value, notes = inputs.kv_calculator_inputs(
        state.L, state.Hq, state.Hkv, state.hd, kv_cache.BYTES_PER_VALUE[state.dtype], state.ctx, state.B
    )
    return kv_cache.kv_cache_comparison(**counts, bytes_per_value=bytes_per_value), notes


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (``Heads``, ``Outputs``, ``Mask``, ``Scale``,
    ``KV cache``, ``Real model``; ``main`` is the state's own tab, also returned as ``figures["main"]``), each
    tab's readouts, the notes on the input, and the tables behind the figures.

    Readouts: ``facts["readouts"][tab]`` for each built tab; ``view.readouts`` joins them (a label shown once).
    Facts the page's texts quote: ``tokens``, ``settings``, ``variant``, ``toy``, ``kv``, ``real_available`` (and
    ``real_install_hint`` when it is not), and per tab ``summary``, ``mask``, ``causality`` (None below two
    tokens), ``scale_tokens``, ``scale_stats``, ``real``, ``real_layer``. Bad input gives a note, never an exception.
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.attn_view)
    view = View()
    tokens = tokens_of(state)
    settings, setting_notes, variant = toy_layer(state)
    toks = tokens.tokens
    T = len(toks)
    scale, temperature = state.scale, float(state.temp)
    key = (toks, settings, scale, temperature, bool(state.causal), bool(state.designed))
    res = _toy(*key)
    look = (options.theme, options.presenter)  # the figure caches' keys end with these
    kv, kv_notes = kv_comparison(state)
    for note in (tokens.note, *setting_notes, *res.notes, *kv_notes):
        if note:
            view.notices.append(("info", note))
    available = real_available()
    view.facts.update(tokens=tokens, settings=settings, variant=variant, toy=res, kv=kv, real_available=available)
    if not available:
        view.facts["real_install_hint"] = attention_real.install_hint()
    readouts: dict[str, list[Readout]] = {}
    toy_basics = [
        Readout("Tokens", f"{T:,}", f"of {tokens.total:,}" if tokens.truncated else None),
        Readout("d_k per head", f"{settings.d_k}", f"d_model {settings.d_model} ÷ {settings.heads} heads"),
        Readout("Logits multiplied by", f"{res.multiplier:.4g}", "scale ÷ temperature"),
    ]

    predicting = ask.mode(state, "predict_attn", "guess_head")
    if predicting != "off" and toy_attention.DESIGNED_PATTERNS[0] not in res.head_names:
        view.notices.append(("info", "Predict first asks for the previous-token head: turn on the designed heads."))
        predicting = "off"
    view.facts["predict"] = predicting
    # the drag over T: not while predict first hides the heads' names (the figure then has no slider)
    drag = "Heads" in parts and predicting != "hidden"
    temps = sweep_steps(TEMPERATURES, len(res.head_names), T, temperature) if drag else ()
    if "Heads" in parts and predicting != "off":
        view.figures["Heads"] = _predict_heads(res, state, predicting, view, options, key, temps)
    elif "Heads" in parts:
        view.figures["Heads"] = _heads_figure(*key, temps, *look)
    if temps:
        view.drags["Heads"] = Drag("temp", temps)
    if "Heads" in parts:
        summary = toy_attention.head_summary(res, settings.heads)
        view.facts["summary"] = summary
        readouts["Heads"] = [
            *toy_basics,
            Readout("Logit std", f"{summary.logit_std:.2f}", "std of q·k × multiplier, mean over the model heads"),
            Readout(
                "Row entropy",
                f"{summary.entropy:.2f} nats",
                f"mean over the model heads: {summary.entropy_share:.0%} of the uniform-row bound "
                f"{summary.max_entropy:.2f} (the log of the number of keys each causal row sees, averaged; log T "
                "without the mask)",
            ),
            Readout("Largest weight per row", f"{summary.max_weight:.2f}", "mean over rows; 1 = one-hot"),
            Readout(f"KV heads ({variant})", f"{settings.n_kv_heads}", "query heads in a group share one K and V"),
        ]
    if "Outputs" in parts and predicting == "hidden":  # its panels carry the heads' names
        order, names = _panels(res, state, "hidden")
        view.figures["Outputs"] = attention_outputs_figure(
            res.outputs[order], res.tokens, names, columns=6, **options.look
        )
    elif "Outputs" in parts:
        view.figures["Outputs"] = _outputs_figure(*key, *look)
        readouts["Outputs"] = list(toy_basics)
    if "Mask" in parts:
        cmp, view.figures["Mask"] = _mask(toks, settings, scale, temperature, *look)
        low, high = cmp.buggy_sum_range
        readouts["Mask"] = [
            *toy_basics,
            Readout("Correct row sums", "1.000", f"largest error {cmp.correct_sum_error:.1e}"),
            Readout("Buggy row sums", f"{low:.3f} – {high:.3f}", "the future's share is lost, row by row"),
        ]
        check = _causality(toks, settings, scale) if T >= 2 else None
        if check is not None:
            edit = f"token {check.position} '{check.old_token}' → '{check.new_token}'"
            readouts["Mask"] += [
                Readout("Earlier outputs, masked", f"{check.max_change_before_causal:.2g}", f"largest change, {edit}"),
                Readout("Earlier outputs, no mask", f"{check.max_change_before_unmasked:.3f}", "they see the future"),
            ]
        view.facts.update(mask=cmp, causality=check)
    if "Scale" in parts:
        n = max(min(T, SCALE_TOKENS), 2)
        stats, view.figures["Scale"] = _scale_figure(n, settings.d_model, temperature, settings.d_k, *look)
        view.facts.update(scale_tokens=n, scale_stats=stats)
        readouts["Scale"] = [
            *toy_basics,
            *(
                Readout(
                    f"Var(logit), {SCALE_NAMES[c]}",
                    f"{attention.expected_logit_variance(settings.d_k, c, settings.d_model, temperature):.3g}",
                    f"theory d_k · multiplier² at your d_k = {settings.d_k}",
                )
                for c in attention.SCALE_CHOICES
            ),
        ]
    if "KV cache" in parts:
        view.figures["KV cache"] = _kv_figure(kv, *look)
        readouts["KV cache"] = _kv_readouts(kv)
    if "Real model" in parts and available:
        layer, head = int(state.rl), int(state.rh)
        real_text = state.text if state.src == "text" and state.text.strip() else " ".join(toks)
        result, view.figures["Real model"] = _real_figure(real_text, layer, head, *look)
        view.facts.update(real=result, real_layer=layer)
        readouts["Real model"] = [
            Readout("WordPiece tokens", f"{len(result.tokens)}", "with [CLS] and [SEP]"),
            Readout("d_k per head", "32", "384 dimensions ÷ 12 heads; logits × 1/√32 = 0.177"),
            Readout(
                f"[CLS] + [SEP] weight, layer {layer}",
                f"{attention_real.special_token_share(result, layer):.0%}",
                "mean over heads and queries: heads with nothing to do often park their weight on these tokens (Clark "
                "et al. 2019 found it in BERT)",
            ),
        ]
    if "Tiny GPT" in parts:
        data, note = gpt_bytes(state, toks)
        if note:
            view.notices.append(("info", note))
        layer, head = int(state.gpt_layer), int(state.gpt_head)
        w = gpt_attention(data)[layer - 1]  # (H, T, T)
        view.figures["Tiny GPT"] = _gpt_figure(data, layer, head, *look)
        view.facts.update(gpt_bytes=data, gpt_weights=w, gpt_layer=layer, gpt_head=head)
        T = len(data)
        # each head's mean weight on the byte just before the query, over the queries after the first
        per_head = [float(np.mean([w[h, t, t - 1] for t in range(1, T)])) if T > 1 else 0.0 for h in range(len(w))]
        previous = per_head[head - 1] if head else float(np.mean(per_head))
        uniform = float(np.mean([1 / (t + 1) for t in range(1, T)])) if T > 1 else 0.0  # query t sees t + 1 bytes
        future = float(np.triu(w, 1).max()) if T > 1 else 0.0
        which = (
            f"head {head} of layer {layer}"
            if head
            else f"averaged over layer {layer}'s {len(w)} heads (from {min(per_head):.0%} to {max(per_head):.0%})"
        )
        readouts["Tiny GPT"] = [
            Readout("Bytes", f"{T}", "the bytes the tiny GPT reads (the text's first 64 at most), one token each"),
            Readout(
                "Weight on a later byte", f"{future:.3g}", "the largest weight above the diagonal: the causal mask"
            ),
            Readout(
                f"Weight on the previous byte, layer {layer}",
                f"{previous:.0%}",
                f"the weight a byte puts on the byte just before it, {which}, over the queries after the first; "
                f"uniform attention over the visible bytes would give {uniform:.0%} on this text",
            ),
        ]
    if "main" in parts and state.attn_view in view.figures:
        view.figures["main"] = view.figures[state.attn_view]

    view.facts["readouts"] = readouts
    shown: set[str] = set()
    for name in VIEWS:  # each tab's readouts in tab order; a label already shown (toy basics) is not repeated
        for item in readouts.get(name, []):
            if item.label not in shown:
                shown.add(item.label)
                view.readouts.append(item)

    view.tables = {
        "Heads": lambda: pd.DataFrame(
            {
                "head": res.head_names,
                "kv_head": res.kv_group,
                "logit_std": res.logit_std,
                "mean_row_entropy_nats": res.entropy,
                "tokens": T,
                "scale": scale,
                "temperature": temperature,
            }
        ),
        "KV cache": lambda: pd.DataFrame(
            {
                "variant": kv.labels,
                "kv_heads": kv.kv_heads,
                "bytes_per_token": kv.per_token,
                "total_bytes": kv.total,
                "tokens": kv.tokens,
                "batch": kv.batch,
            }
        ),
    }
    if predicting == "hidden":  # the table names the heads
        ask.hide(view, PREDICT_QUESTION, tables=("Heads",))
    elif "predict_reveal" in view.facts:
        ask.reveal(view, *view.facts["predict_reveal"], value=previous_token_panel(res, state))
    return with_answers(SPEC, state, view)


PREDICT_QUESTION = "One of these panels is a head that attends to the previous token. Which one?"


def _panels(res: toy_attention.ToyAttention, state: State, predicting: str) -> tuple[np.ndarray, list[str]]:
    """Predict first shuffles the heads (seeded by the layer's seed) and names them "panel 1", "panel 2", ...; once the
    guess is in, each panel also gets its head's own name."""
    order = np.random.default_rng(int(state.layer_seed)).permutation(len(res.head_names))
    names = [f"panel {j + 1}" for j in range(len(order))]
    if predicting == "revealed":
        names = [f"{name}: {res.head_names[h]}" for name, h in zip(names, order, strict=True)]
        g = int(state.guess_head) - 1
        if 0 <= g < len(names):
            names[g] += " (your guess)"
    return order, names


def previous_token_panel(res: toy_attention.ToyAttention, state: State) -> int:
    """The panel (1-based) that shows the previous-token head under Predict first's shuffle."""
    order, _ = _panels(res, state, "hidden")
    return int(np.flatnonzero(order == res.head_names.index(toy_attention.DESIGNED_PATTERNS[0]))[0]) + 1


def _predict_heads(
    res: toy_attention.ToyAttention,
    state: State,
    predicting: str,
    view: View,
    options: Options,
    key: tuple,
    temps: tuple[float, ...] = (),
) -> go.Figure:
    """The heads' heatmaps as shuffled, anonymous panels; the question, or the truth beside the guess. ``temps``: the
    drag's temperatures (none while the question is open)."""
    order, names = _panels(res, state, predicting)
    columns = 4 if len(names) <= 8 else 6
    kw = _sweep_kwargs(key, temps, order) if temps else {"weights": res.weights[order]}
    fig = attention_figure(tokens=res.tokens, head_names=names, columns=columns, **kw, **options.look)
    if predicting == "hidden":
        return fig
    truth, g = previous_token_panel(res, state), int(state.guess_head)
    guessed = res.head_names[order[g - 1]] if g <= len(order) else "no such panel"
    view.facts["predict_reveal"] = (
        Readout("Previous-token head", f"panel {truth}", "the designed head whose query for token t is key t − 1"),
        f"panel {g}",
        "right" if g == truth else "wrong",
        f"panel {g} is {guessed}",
    )
    return fig


_DSV3 = CATALOGUE["DeepSeek-V3"]
# MLA (DeepSeek-AI 2024) caches one latent and one shared RoPE key per layer: L (r_kv + d_rope) values per token
_MLA_NOTE = (
    f"DeepSeek-V3's MLA caches {_DSV3.kv_lora_rank} + {_DSV3.qk_rope_dim} values per layer per token "
    f"({kv_cache_bytes_per_token(_DSV3) / KIB:.1f} KiB in bf16 over {_DSV3.layers} layers): not a 2·L·K·H shape, so "
    "this calculator cannot hold it; the serving page shows it"
)


def _kv_readouts(kv: kv_cache.KVComparison) -> list[Readout]:
    c = kv.chosen
    ratio = kv.saving_vs_mha  # the group size; not whole where the KV heads do not divide the query heads
    versus = (
        "MHA, one KV head per query head"
        if ratio == 1
        else f"{ratio:,.3g}× smaller than MHA ({fmt.binary_bytes(kv.total[0])})"
    )
    return [
        Readout(
            "KV cache per token",
            fmt.binary_bytes(kv.per_token[c], "KiB"),
            f"2 · L {kv.layers} · K {kv.kv_heads[c]} · H {kv.head_dim} · {kv.bytes_per_value:g} bytes. {_MLA_NOTE}.",
        ),
        Readout(
            f"At {kv.tokens:,} tokens" + (f" × {kv.batch:,}" if kv.batch > 1 else ""),
            fmt.binary_bytes(kv.total[c]),
            f"{kv.batch:,} sequence(s); {versus}",
        ),
        *(
            Readout(f"{name} per token", fmt.binary_bytes(b, "KiB"), f"{label}; {fmt.binary_bytes(total)} in all")
            for i, (name, label, b, total) in enumerate(zip(kv.names, kv.labels, kv.per_token, kv.total, strict=True))
            if i != c
        ),
    ]
