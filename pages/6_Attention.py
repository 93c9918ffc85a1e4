"""Attention: per-head heatmaps of a seeded toy layer, the √d_k scale, the causal mask, KV heads and the KV cache."""

import pandas as pd
import plotly.graph_objects as go
import streamlit as st

from core import attention as attn
from core import attention_real as real
from pages.frame import InterviewAnswer, Page, Readout, cached, cached_figures, draw_tabs, preset_buttons
from pages.views import attention as view_of
from viz import attention as va

page = Page.setup(
    "Attention: heads, the √d_k scale, masks and the KV cache",
    "🔦",
    "Each query mixes the values of the tokens it may see, weighted by a softmax of dot products; dividing by √d_k "
    "keeps that softmax from saturating, the mask goes in before it, and the KV heads set the cache.",
    r"\begin{gathered}\mathrm{Attention}(Q, K, V) = "
    r"\operatorname{softmax}\!\left(\frac{Q K^\top}{\sqrt{d_k}} + M\right) V,"
    r"\quad M_{ij} = -\infty \text{ where key } j \text{ comes after query } i \\"
    r"\text{KV cache per token} = 2 \cdot L \cdot K \cdot H \cdot b \text{ bytes}\end{gathered}",
    spec=view_of.SPEC,
)

VIEWS = view_of.VIEWS
REAL_LAYERS, REAL_HEADS = real.LAYERS, real.HEADS

with page.controls(presets=list(view_of.MAIN_PRESETS)):
    st.subheader("Tokens")
    source = page.control("src")
    text = page.control("text", disabled=source != "text")
    split = page.control("split")
    n_random = page.control("tokens", disabled=source != "random")
    st.subheader("Toy layer")
    d_model, heads, kv_heads = page.control("dm"), page.control("h"), page.control("kv")
    d_k_asked, seed = page.control("dk"), page.control("layer_seed")
    settings, setting_notes = attn.settings_with_notes(d_model, heads, d_k_asked or None, kv_heads, seed)
    variant = attn.variant_name(settings.heads, settings.n_kv_heads)
    st.caption(
        f"d_k = {settings.d_k} · {variant}: {settings.heads} query heads, {settings.n_kv_heads} KV "
        f"head{'s' if settings.n_kv_heads > 1 else ''}"
    )
    st.subheader("Softmax")
    scale, temperature = page.control("scale"), page.control("temp")
    causal, designed = page.control("causal"), page.control("designed")
    with st.expander("KV-cache calculator", expanded=False):
        preset_buttons(view_of.SPEC, list(view_of.KV_PRESETS))
        layers, q_heads, c_kv, head_dim = (page.control(name) for name in ("L", "Hq", "Hkv", "hd"))
        dtype, context, batch = page.control("dtype"), page.control("ctx"), page.control("B")

if source == "random":
    tokens = attn.random_tokens(n_random, seed)
else:
    tokens = attn.tokenize(text, split, fallback=attn.DEFAULT_TEXT)
for note in (tokens.note, *setting_notes):
    if note:
        page.notice(note, "info")
toks = tokens.tokens
T = len(toks)


@cached_figures
def _toy(toks: tuple, settings: attn.ToyModelSettings, scale: str, temperature: float, causal: bool, designed: bool):
    return attn.toy_attention(toks, settings, scale, temperature, causal, designed)


@cached_figures
def _heads_figure(toks, settings, scale, temperature, causal, designed) -> go.Figure:
    res = _toy(toks, settings, scale, temperature, causal, designed)
    return va.attention_figure(res.weights, res.tokens, res.head_names, columns=4 if len(res.head_names) <= 8 else 6)


@cached_figures
def _outputs_figure(toks, settings, scale, temperature, causal, designed) -> go.Figure:
    res = _toy(toks, settings, scale, temperature, causal, designed)
    return va.attention_outputs_figure(res.outputs, res.tokens, res.head_names, columns=6)


@cached_figures
def _mask(toks: tuple, settings: attn.ToyModelSettings, scale: str, temperature: float):
    cmp = attn.toy_mask_comparison(toks, settings, 0, scale, temperature)
    fig = va.attention_mask_figure(cmp.correct, cmp.buggy, toks, cmp.correct_row_sums, cmp.buggy_row_sums)
    return cmp, fig


@cached
def _causality(toks: tuple, settings: attn.ToyModelSettings, scale: str) -> attn.CausalityCheck:
    return attn.causality_check(toks, settings, scale=scale)


@cached
def _statistics(tokens: int, d_model: int, temperature: float) -> attn.LogitStatistics:
    return attn.logit_statistics(tokens=tokens, d_model=d_model, temperature=temperature)


@cached_figures
def _scale_figure(tokens: int, d_model: int, temperature: float, d_k: int):
    stats = _statistics(tokens, d_model, temperature)
    fig = va.attention_scale_figure(
        stats.d_k,
        stats.variance,
        stats.entropy,
        stats.max_entropy,
        expected_variance=stats.expected_variance,
        current_d_k=d_k,
    )
    return stats, fig


@cached_figures
def _kv_figure(kv: attn.KVComparison) -> go.Figure:
    label, limit = attn.GPU_MEMORY
    return va.attention_kv_cache_figure(
        kv.labels,
        kv.total,
        per_token_bytes=kv.per_token,
        context_tokens=kv.tokens,
        memory_limit_bytes=limit,
        memory_limit_label=label,
    )


@cached_figures
def _real_figure(real_text: str, layer: int, head: int) -> tuple:
    result = real.real_attention(real_text)  # the model itself is loaded once per process
    weights, names = real.layer_heads(result, layer, head)
    title = f"all-MiniLM-L6-v2, layer {layer}: attention per head (rows: queries, columns: keys)"
    return result, va.attention_figure(weights, result.tokens, names, columns=6 if head == 0 else 1, title=title)


res = _toy(toks, settings, scale, temperature, causal, designed)
summary = attn.head_summary(res, settings.heads)
kv = attn.kv_cache_comparison(layers, q_heads, c_kv, head_dim, attn.BYTES_PER_VALUE[dtype], context, batch)
for note in (*res.notes, *kv.notes):
    page.notice(note, "info")

with page.figure_area():
    tabs = dict(zip(VIEWS, draw_tabs(view_of.SPEC["attn_view"]), strict=True))

toy_basics = [
    Readout("Tokens", f"{T:,}", f"of {tokens.total:,}" if tokens.truncated else None),
    Readout("d_k per head", f"{settings.d_k}", f"d_model {settings.d_model} ÷ {settings.heads} heads"),
    Readout("Logits multiplied by", f"{res.multiplier:.4g}", "scale ÷ temperature"),
]
readouts: list[Readout] = []
with tabs["Heads"]:
    if tabs["Heads"].open:
        readouts += toy_basics
        page.chart(_heads_figure(toks, settings, scale, temperature, causal, designed), "fig-heads", "attention-heads")
        readouts += [
            Readout("Logit std", f"{summary.logit_std:.2f}", "std of q·k × multiplier, mean over the model heads"),
            Readout(
                "Row entropy",
                f"{summary.entropy:.2f} nats",
                f"mean over the model heads: {summary.entropy_share:.0%} of the uniform-row bound "
                f"{summary.max_entropy:.2f} (log t for causal row t, averaged; log T without the mask)",
            ),
            Readout("Largest weight per row", f"{summary.max_weight:.2f}", "mean over rows; 1 = one-hot"),
            Readout(f"KV heads ({variant})", f"{settings.n_kv_heads}", "query heads in a group share one K and V"),
        ]
with tabs["Outputs"]:
    if tabs["Outputs"].open:
        readouts += toy_basics
        page.chart(
            _outputs_figure(toks, settings, scale, temperature, causal, designed), "fig-outputs", "attention-outputs"
        )
        st.caption("Each row is y_t = Σ_j A_tj v_j: a weighted mix of the value vectors the token may see.")
with tabs["Mask"]:
    if tabs["Mask"].open:
        readouts += toy_basics
        cmp, mask_fig = _mask(toks, settings, scale, temperature)
        page.chart(mask_fig, "fig-mask", "attention-mask")
        low, high = cmp.buggy_sum_range
        readouts += [
            Readout("Correct row sums", "1.000", f"largest error {cmp.correct_sum_error:.1e}"),
            Readout("Buggy row sums", f"{low:.3f} – {high:.3f}", "the future's share is lost, row by row"),
        ]
        if T >= 2:
            check = _causality(toks, settings, scale)
            edit = f"token {check.position} '{check.old_token}' → '{check.new_token}'"
            readouts += [
                Readout("Earlier outputs, masked", f"{check.max_change_before_causal:.2g}", f"largest change, {edit}"),
                Readout("Earlier outputs, no mask", f"{check.max_change_before_unmasked:.3f}", "they see the future"),
            ]
            st.caption(
                f"Causality check: change {edit} and rerun the layer. With the mask, every earlier output moves by "
                f"{check.max_change_before_causal:.2g} (nothing); without it, by up to "
                f"{check.max_change_before_unmasked:.3f}."
            )
        else:
            st.caption("The causality check needs at least two tokens.")
with tabs["Scale"]:
    if tabs["Scale"].open:
        readouts += toy_basics
        stats_tokens = min(T, 128)
        stats, scale_fig = _scale_figure(max(stats_tokens, 2), settings.d_model, temperature, settings.d_k)
        page.chart(scale_fig, "fig-scale", "attention-scale")
        st.caption(
            f"Random q, k with independent zero-mean, unit-variance components, {max(stats_tokens, 2)} tokens, "
            "no mask, 8 draws; dotted lines: "
            "theory d_k · multiplier². 1/√d_model uses your d_model."
        )
        readouts += [
            Readout(
                f"Var(logit), {va.SCALE_NAMES[c]}",
                f"{attn.expected_logit_variance(settings.d_k, c, settings.d_model, temperature):.3g}",
                f"theory d_k · multiplier² at your d_k = {settings.d_k}",
            )
            for c in attn.SCALE_CHOICES
        ]
with tabs["KV cache"]:
    if tabs["KV cache"].open:
        page.chart(_kv_figure(kv), "fig-kv", "attention-kv-cache")
        c = kv.chosen
        readouts += [
            Readout(
                "KV cache per token",
                attn.format_bytes(kv.per_token[c], "KiB"),
                f"2 · L {kv.layers} · K {kv.kv_heads[c]} · H {kv.head_dim} · {kv.bytes_per_value:g} bytes",
            ),
            Readout(
                f"At {kv.tokens:,} tokens" + (f" × {kv.batch:,}" if kv.batch > 1 else ""),
                attn.format_bytes(kv.total[c]),
                f"{kv.batch:,} sequence(s); {kv.saving_vs_mha:,.0f}× smaller than MHA "
                f"({attn.format_bytes(kv.total[0])})",
            ),
        ]
        readouts += [
            Readout(f"{name} per token", attn.format_bytes(b, "KiB"), f"{label}; {attn.format_bytes(total)} in all")
            for i, (name, label, b, total) in enumerate(zip(kv.names, kv.labels, kv.per_token, kv.total, strict=True))
            if i != c
        ]
        st.caption("Set the shape, number format, context and batch in the sidebar's KV-cache calculator.")
with tabs["Real model"]:
    if not real.available():
        st.caption(real.install_hint())
    else:
        left, right = st.columns(2)
        with left:
            layer = page.control("rl")
        with right:
            head = page.control("rh")
        if tabs["Real model"].open:
            real_text = text if source == "text" and text.strip() else " ".join(toks)
            result, real_fig = _real_figure(real_text, layer, head)
            if result.note:
                st.caption(result.note)
            page.chart(real_fig, "fig-real", "attention-real-model")
            readouts += [
                Readout("WordPiece tokens", f"{len(result.tokens)}", "with [CLS] and [SEP]"),
                Readout("d_k per head", "32", "384 dimensions ÷ 12 heads; logits × 1/√32 = 0.177"),
                Readout(
                    f"Weight on [CLS] and [SEP], layer {layer}",
                    f"{real.special_token_share(result, layer):.0%}",
                    "mean over heads and queries: heads with nothing to do park their weight on these tokens",
                ),
            ]
            st.caption(
                "all-MiniLM-L6-v2, a 6-layer encoder (12 heads of d_k = 32), run offline from the installed package; "
                "WordPiece tokens with [CLS] and [SEP]; no causal mask (an encoder sees both sides)."
            )

page.readouts(readouts)

with page.explain():
    st.markdown(
        """
**Heads.** Every query token takes a softmax over its dot products with the keys; row *t* of a heatmap is that
distribution (it sums to 1), and the output is the same mix of value vectors. The toy layer draws its embeddings,
position signal and projections from the seed; the three designed heads are built by hand to show patterns real
models learn: look at the previous token, park on the first token, find earlier copies of the same word.

**Scale.** If the components of q and k are independent with mean 0 and variance 1, q·k is a sum of d_k
products of variance 1 each, so Var(q·k) = d_k (the argument of Vaswani et al. 2017; trained q and k need not
satisfy it). Without a scale the rows turn one-hot as d_k grows (entropy falls towards 0, from its ceiling: log T
for a row that sees T keys, log t for causal row t) and the softmax's gradient vanishes; 1/√d_k keeps the
variance at 1.
1/√d_model is the classic slip: with h heads it divides by √h too much and flattens every row.

**Mask.** Adding −∞ before the softmax removes the future from the denominator. Multiplying by 0 afterwards leaves
it there, so every row sums to less than 1, by a different amount per position.

**KV cache.** At decode time each new token needs the keys and values of all earlier ones, so they are kept:
2·L·K·H·b bytes per token. Only the K KV heads count, which is why GQA (groups of query heads sharing one K and V)
and MQA (one for all) exist; the attention FLOPs stay the same. The 8× (GQA) and 64× (MQA) of Llama-3-70B's shape
are cache-size ratios, not decoding speed-ups: at small batch and short context, reading the weights dominates
the memory traffic, and the gain in speed grows with batch size and context length.
"""
    )

page.quick_check(
    "A 70B model has 80 layers, 8 KV heads of dimension 128, and caches in bf16. How much KV cache does one "
    "sequence of **32k tokens** (32,768) need?",
    "2 · 80 · 8 · 128 · 2 bytes = 327,680 bytes = **320 KiB per token**; × 32,768 tokens = **10 GiB**. With one "
    "KV head per query head (64, MHA) it would be 80 GiB: load the Llama-3-70B preset and set the context to 32768.",
)
page.interview(
    "“Write causal self-attention from scratch and explain the √d_k and the mask.”",
    InterviewAnswer(
        sentence="Each token's query is compared with every visible key, the softmax of those scores weights the "
        "values, and the scale and the mask are what keep that softmax healthy and honest.",
        equation=r"\operatorname{softmax}\!\left(QK^\top/\sqrt{d_k} + M\right)V,\qquad"
        r"\operatorname{Var}(q\cdot k) = d_k",
        number="With independent zero-mean, unit-variance components of q and k, unscaled logits at d_k = 128 have "
        "a standard deviation of √128 ≈ 11, enough to make rows nearly one-hot at initialisation; Llama-3-70B's GQA "
        "cache is 320 KiB per token, 40 GiB at the 128k-token context of Llama 3.1 (Llama 3 itself had 8k).",
        trade_off="Fewer KV heads shrink the cache (8× for Llama-3-70B's GQA, 64× for MQA: ratios of cache size, "
        "not of decoding speed, since at small batch the weight reads dominate memory traffic) but share K and V "
        "across heads; MQA loses measurable quality, GQA little (Ainslie et al. 2023), and neither reduces the "
        "attention FLOPs.",
    ),
)
page.mistakes(
    [
        "Dividing by √d_model instead of √d_k: the dot product runs over one head's d_k dimensions.",
        "Masking after the softmax (multiply by 0): the future still sits in the denominator and rows no longer "
        "sum to 1.",
        "Inverting the mask: masked_fill fills where the mask is True, so a True-means-allowed mask needs ~mask.",
        "With a KV cache, a plain tril for the new queries: they are the last positions, so the diagonal moves "
        "right by the number of cached tokens.",
        "Sizing the KV cache with the query heads, or forgetting the factor 2 for K and V.",
        "Saying GQA saves attention FLOPs: K and V are repeated back to every query head; it saves memory and "
        "bandwidth.",
    ]
)

page.download(
    {
        "Heads": pd.DataFrame(
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
        "KV cache": pd.DataFrame(
            {
                "variant": kv.labels,
                "kv_heads": kv.kv_heads,
                "bytes_per_token": kv.per_token,
                "total_bytes": kv.total,
                "tokens": kv.tokens,
                "batch": kv.batch,
            }
        ),
    },
    "attention",
)
page.finish()
