"""Serving: why decode is memory-bound, how many sequences the KV cache lets a node serve, when speculative
decoding pays, and what an MoE holds against what it computes with (its router is the MoE page's)."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, cached_view, carried_params, draw_tabs, page_link
from views import Options, catalog
from views import serving as view_of

page = Page.setup(
    "Serving: the roofline, the KV cache and speculative decoding",
    ":material/rocket_launch:",
    "Decoding one token reads each weight it uses to do two FLOPs with it: it is bound by memory bandwidth, so "
    "serving is about batching, the size of the KV cache, and tricks that get more tokens out of each read.",
    r"\begin{gathered}\text{time} = \max\!\Big(\frac{\text{bytes}}{\text{bandwidth}}, "
    r"\frac{\text{FLOPs}}{\text{peak}}\Big),\quad I_{\text{decode}} \approx \frac{2NB}{2N} = B, \\ "
    r"\text{KV}_{\text{token}} = 2\,L\,K\,H\,b,\quad E = \frac{1-\alpha^{k+1}}{1-\alpha}\end{gathered}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        if page.control("srv_model") == "custom":
            for name in ("srv_layers", "srv_d", "srv_heads", "srv_kv", "srv_ff", "srv_vocab", "srv_tied"):
                page.control(name)
        for name in ("srv_gpu", "srv_gpus", "wfmt", "kvfmt", "srv_ctx", "srv_reserve", "kv_budget", "batch", "prompt"):
            page.control(name)
        page.control("srv_traps")
        page.control("srv_problem")

    with page.views():
        tabs = dict(zip(view_of.VIEWS, draw_tabs(view_of.SPEC["srv_view"]), strict=True))
        with tabs["KV capacity"]:
            page.control("used")
        with tabs["Speculative decoding"]:
            page.control_row("accept", "draft_k", "draft")

    state = page.state()
    open_parts = {name for name, tab in tabs.items() if tab.open}
    out = figures(state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset({"main"} | open_parts)))
    page.show_notices(out)
    if "main" in out.figures:
        page.figure(out.figures["main"], key="roofline", filename="roofline")
    page.readouts(out.readouts)

    with page.views():
        with tabs["KV capacity"]:
            if "KV capacity" in out.figures:
                st.caption(
                    "Contiguous allocation reserves the whole context for every sequence; PagedAttention (Kwon et al. "
                    "2023) hands out blocks of 16 tokens as a sequence grows, so only the last block is partly empty. "
                    "The lengths are a seeded mix around the mean share of the context actually used."
                )
                page.chart(out.figures["KV capacity"], "kv", "kv-capacity")
        with tabs["Speculative decoding"]:
            if "Speculative decoding" in out.figures:
                st.caption(
                    "A small draft proposes k tokens and the target scores all of them in one forward pass. Each "
                    "drafted token is accepted with probability min(1, p/q); at the first rejection the target "
                    "samples a replacement from the residual max(0, p − q), normalised, and if all k pass it adds one "
                    "token of its own, so the output follows the target's distribution exactly (Leviathan et al. "
                    "2023). For a dense model at small batch, a verify pass of k + 1 tokens reads the same weights as "
                    "one decode step and costs about as much; at large batch decode turns compute-bound and the extra "
                    "work can make it slower than plain decoding. An MoE's k + 1 tokens can pick different experts, "
                    "so its verify pass reads more experts than one decode step: up to (k + 1)× the routed-expert "
                    "bytes. The page's roofline model (bytes over bandwidth or FLOPs over peak, whichever is larger, "
                    "and no fixed per-step costs) therefore gives an MoE less gain than a dense model at small batch "
                    "and more at larger batch (once a plain step reads most experts anyway, while the dense model has "
                    "turned compute-bound); the MoE's speed-up too falls below 1 once decode turns compute-bound, at "
                    "far larger batches than a dense model's. Those orderings are the model's results, not "
                    "measurements: it leaves out the fixed per-step costs (all-reduces, kernel launches), the same "
                    "for 1 token as for k + 1, which can dominate a small-batch MoE step, and it assumes each drafted "
                    "token picks its experts independently. SGLang's DeepSeek-V3 documentation reports 1.8× at batch "
                    "1 and 1.5× at batch 32 on 8 H200s with the MTP module as the draft (run as an EAGLE draft; the "
                    "workload is not stated): larger at batch 1 than at 32, whereas the model's speed-up for 8 H200s "
                    "with the MTP draft at k = 1 and a = 0.85 (preset A2.8-MoE; SGLang states neither) is higher at "
                    "batch 32 (×1.36) than at batch 1 (×1.17), after a dip to ×1.06 at batch 4. The speed-up readout "
                    "gives the model's numbers. The two acceptance-rule readouts sample the rule (seeded, with torch "
                    "on the app's device) on a toy vocabulary: the kept tokens follow the target, not the draft."
                )
                page.chart(out.figures["Speculative decoding"], "spec", "speculative-decoding")
        moe = catalog.by_url("MoE")
        st.caption(
            "Mixture of experts: this page counts what an MoE holds and reads (the total and active parameters, the "
            "experts a decode step or a verify pass reads). The router itself, top-k routing with a capacity "
            "factor, the assignments it drops, and load balancing with a loss or a bias, now lives on the MoE page."
        )
        page_link(moe.script, label=moe.label, icon=moe.icon, query_params=carried_params() or None)

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
The black line is the **roofline** of one GPU (Williams et al. 2009): a step can go no faster than its bytes
over the memory bandwidth, nor than its FLOPs over the peak. Where the two meet, the **ridge point**
(peak / bandwidth, about 295 FLOP per byte on an H100), a workload turns from memory-bound to compute-bound.

- **Prefill** processes the whole prompt at once: every weight read is used for S tokens, so a dense bf16
  model's intensity is about S FLOP per byte, compute-bound once S passes the ridge. An MoE's prompt touches
  nearly every expert but computes with the active ones only, so its intensity is about S × active/total
  with bf16 weights (2S/b × active/total with b-byte weights), and it too depends on the prompt's length:
  DeepSeek-V3 (37.6B of 671B) in fp8 sits near 0.11 S, so the preset's 512-token prompt is memory-bound and
  a prompt passes an H200's ridge (206 FLOP per byte at the bf16 peak) only near 1,800 tokens, or near 3,700
  against the fp8 peak (412 FLOP per byte) that DeepSeek-V3's fp8 matmuls run at.
- **Decode** makes one token per sequence per step: every weight read serves only the B sequences of the batch,
  so its intensity is about B (2B/b with b-byte weights). Batch 1 is far left of the ridge: Llama-3-70B in bf16
  has a floor of about 42 ms per token on one H100's bandwidth whatever its FLOP/s (seed 002 A8.1). The
  light-blue line shows decode climbing as the batch grows; at long context it bends back, because each
  sequence also reads its own KV cache.
- **The KV cache** stores 2 × layers × KV heads × head dim numbers per token. Grouped-query attention (K < N
  heads) and multi-head latent attention (DeepSeek-V2/V3) shrink it; it, not the weights, decides how many
  sequences a node serves at long context. Tensor parallelism splits the weights evenly but the cache only by
  KV heads: once the GPUs outnumber the KV heads each head is copied, and MLA's latent, shared by all heads,
  is held whole by every GPU.
"""
        )

    page.quick_check(
        "Llama-3-70B in bf16 on 4 H100s with a 170 GiB KV budget: how many 8k-token sequences fit, and with fp8 KV?",
        "KV per token = 2 × 80 layers × 8 KV heads × 128 × 2 bytes = 320 KiB; 8,192 tokens take 2.5 GiB. "
        "170 / 2.5 = **68 sequences**; fp8 halves the bytes: **136**. (Preset *A10-08*.)",
    )
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Each decode step reads every weight it uses (and the KV cache) to do about two FLOPs per weight "
            "per sequence, so for a dense model with bf16 weights and a short context its arithmetic intensity is "
            "about the batch size B, below the GPU's ridge point (about 295 FLOP/byte on an H100) until B reaches the "
            "hundreds (002 A8.1, A10-11).",
            equation=r"\begin{gathered} I_{\text{decode}} \approx B\ \text{(bf16 weights, short context)} \\ "
            r"\text{memory-bound while } B < \frac{989\ \text{TFLOP/s}}{3.35\ \text{TB/s}} \approx 295 \end{gathered}",
            number="Llama-3-70B at batch 1 on one H100's bandwidth: a floor of 141 GB / 3.35 TB/s ≈ 42 ms per token, "
            "at most about 24 tokens/s (the input-embedding table counted whole, of which a token reads one row), a "
            "reference point since 141 GB does not fit on one 80 GB card (002 A10-11); tensor parallelism over 4 GPUs "
            "reads a quarter each, a floor of about 10.5 ms (002 A8.1; A10-11's trap that adding cards does not raise "
            "batch-1 speed holds for data-parallel replicas, not for tensor parallelism) plus the latency of two "
            "all-reduces per layer (Megatron-LM, Shoeybi et al. 2019).",
            trade_off="Bigger batches raise throughput but each user's latency and the KV memory grow; quantising "
            "weights and KV cuts bytes at some accuracy risk (002 A8.2, A8.9). Speculative decoding helps a dense "
            "model at small batch and hurts once decode is compute-bound (002 A8.6). At small batch an MoE's verify "
            "pass can read more experts than one decode step, so this page's roofline model (no fixed per-step "
            "costs) gives it less gain than a dense model there. SGLang's DeepSeek-V3 documentation reports, with the "
            "MTP module as the draft on 8 H200s, 1.8× at batch 1 and 1.5× at batch 32, falling with batch, whereas "
            "the model, for the same hardware and draft and assuming k = 1 and a = 0.85 (SGLang states neither), is "
            "higher at batch 32 (×1.36) than at batch 1 (×1.17), after a dip to ×1.06 at batch 4; the model leaves "
            "out fixed per-step costs and lets each token pick its experts independently.",
        ),
    )
    page.mistakes(
        [
            "Sizing the KV cache with query heads instead of KV heads: for Llama-3-70B (64 query, 8 KV heads) that "
            "is 2,560 KiB per token instead of 320, eight times too much (002 A8.3, A10-07).",
            "Thinking more FLOP/s speeds up batch-1 decode: it is bound by memory bandwidth. Fewer bytes per token "
            "(quantisation, an MoE's sparse reads), more bandwidth (a newer HBM generation, tensor parallelism "
            "splitting the reads) or more tokens per weight read help: speculation for one sequence's latency, "
            "batching for throughput only (002 A8.1, A10-11).",
            "Reserving the maximum context for every request: a 200-token answer in a 4,096-token slot wastes 95% "
            "of it; paged allocation (Kwon et al. 2023) wastes at most one block per sequence (002 A8.4).",
            "Sizing an MoE's memory by its active parameters: DeepSeek-V3 computes with 37B per token but must hold "
            "all 671B (DeepSeek-AI 2024; 002 A2.8).",
        ]
    )

    page.download(out.tables, "serving")
    page.finish()


page.run(_body)
