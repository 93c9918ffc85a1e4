"""Training memory: what one GPU holds during training (weights, gradients, optimizer states, activations),
how ZeRO, tensor and pipeline parallelism shrink it, and what the run costs."""

import streamlit as st

from pages.frame import InterviewAnswer, Page, cached_view
from views import Options
from views import training_memory as view_of

page = Page.setup(
    "Training memory: what fits on one GPU",
    ":material/memory:",
    "Mixed-precision Adam keeps about 16 bytes per parameter before a single activation; sharding those states "
    "(ZeRO) and the model (tensor and pipeline parallelism) is what lets a large model train on 80 GiB cards.",
    r"\begin{gathered}M_{\text{GPU}} = \frac{N}{t\,p}\Big(\frac{2}{d_3} + \frac{2}{d_2} + \frac{12}{d_1}\Big) "
    r"+ M_{\text{act}},\quad d_j = \begin{cases} d & \text{ZeRO stage} \ge j \\ 1 & \text{otherwise}\end{cases}, "
    r"\\ \text{bubble} = \frac{p-1}{m+p-1}\end{gathered}",
    spec=view_of.SPEC,
    question=view_of.QUESTION,
    answer_phrases=view_of.ANSWER_PHRASES,
)
figures = cached_view(view_of.figures)


def _body(page: Page) -> None:
    """The controls, figures and texts: a change of one of these controls reruns this alone (Page.run)."""
    with page.controls():
        st.caption("Model")
        if page.control("mem_model") == "custom":
            for name in ("mem_layers", "mem_d", "mem_heads", "mem_kv", "mem_ff", "mem_vocab", "mem_tied"):
                page.control(name)
        page.control("params")
        page.control("mem_gpu")
        recipe = page.control("recipe")
        st.caption(view_of.recipe_text(view_of.training_memory.RECIPES[recipe]))
        st.caption("Parallelism (GPUs = TP × PP × DP)")
        for name in ("zero", "tp", "pp", "dp", "micro"):
            page.control(name)
        st.caption("Activations")
        for name in ("seq", "mbs", "recompute", "flash"):
            page.control(name)
        st.caption("Time and cost")
        for name in ("D", "mem_mfu", "price"):
            page.control(name)
        page.control("mem_traps")
        page.control("mem_problem")

    state = page.state()
    out = figures(state, Options(theme=page.theme, presenter=page.presenter, parts=frozenset({"main", "bubble"})))
    page.show_notices(out)
    if "main" in out.figures:
        page.figure(out.figures["main"], key="memory", filename="training-memory")
    page.readouts(out.readouts)

    with page.views():
        st.subheader("The pipeline bubble")
        st.caption(
            "With p pipeline stages a step starts and ends with stages waiting for work: the idle share is "
            "(p − 1)/(m + p − 1) for m micro-batches (GPipe and 1F1B alike). More micro-batches shrink it."
        )
        page.chart(out.figures["bubble"], "bubble", "pipeline-bubble")

    @page.explain()
    def _explanation() -> None:
        st.markdown(
            """
Each bar is one GPU's memory under one ZeRO stage; the outlined bar is your choice, the red line the card.

- **Model states.** In the usual mixed-precision recipe every parameter costs 2 bytes of bf16 weights, 2 of
  gradients, and 12 for the optimizer: a 4-byte fp32 master copy and Adam's two 4-byte moments. That is the
  lesson's 16 bytes per parameter: **112 GB for a 7B model** before any activation.
- **ZeRO** (Rajbhandari et al. 2020) splits these states over the d data-parallel replicas instead of copying
  them: stage 1 the optimizer states, stage 2 also the gradients, stage 3 also the weights (at the price of
  gathering weights in every forward and backward).
- **Tensor and pipeline parallelism** split the model itself: each GPU computes with N/(t·p) parameters.
  Tensor parallelism splits each layer's heads and FFN columns (so t must divide the heads); pipeline
  parallelism gives each stage a run of layers and pays the bubble.
- **Activations** grow with sequence length and micro-batch. Korthikanti et al. (2022) count
  s·b·h·(34 + 5·a·s/h) bytes per layer for a GPT-3 block (a 4h GeLU MLP, attention dropout); the second term is
  the attention's S × S scores, which selective recomputation or FlashAttention never store. The page applies
  the same coefficients to every model: Llama-family models have a SwiGLU MLP and no dropout, so for them the
  score term is 2·a·s/h, and the 34 only happens to land close: counted the same way for Llama-3-70B's block
  (SwiGLU MLP of 3.5h, K and V with 8 of the 64 heads) it is 40.5·s·b·h with every MLP intermediate stored
  and 26.5·s·b·h with a fused SwiGLU that recomputes the SiLU output and the product. Full recomputation keeps
  only each layer's input and costs one more forward pass (a third more FLOPs); FlashAttention's backward also
  recomputes the scores, a cost this page does not count.
- **Units.** Bars and the card are in GiB (2³⁰ bytes), binary units as nvidia-smi's MiB are; the seeds read an
  "80 GB" H100 as 80 GiB = 85.9 GB (nvidia-smi shows 79.6 GiB in total, and less is free after the CUDA
  context). Reading it as 80×10⁹ bytes (the GB trap) loses 6.9%.
"""
        )
        if out.facts.get("n_total") is not None and state.params is None:
            st.caption(
                f"{out.facts['spec'].name}: {out.facts['n_total']:,} parameters counted from its shape "
                f"({out.facts['spec'].source})."
            )

    page.quick_check(view_of.QUICK_CHECK)
    page.interview(
        view_of.QUESTION,
        InterviewAnswer(
            sentence="Training holds far more than the weights: bf16 weights and gradients plus fp32 master weights "
            "and two Adam moments come to 16 bytes per parameter, before activations (001 §3.2; 002 A10-09).",
            equation=r"16\,\text{B} \times 7\times10^{9} = 112\ \text{GB} = 104\ \text{GiB} > 80\ \text{GiB}",
            number="112 GB of states for 7B (001 §3.2); with ZeRO-1 over 8 GPUs each holds 4 + 12/8 = 5.5 bytes per "
            "parameter, 38.5 GB (002 A10-10; Rajbhandari et al. 2020).",
            trade_off="ZeRO-1/2 shard 12-14 of the 16 bytes at plain data parallelism's communication volume per "
            "optimizer step without gradient accumulation (with it, ZeRO-2 reduce-scatters every micro-batch and "
            "moves more); "
            "ZeRO-3 adds about 50% for gathering the weights (Rajbhandari et al. 2020 §7), tensor parallelism adds "
            "all-reduces in every layer, pipeline parallelism the bubble (002 A5.2); full recomputation buys "
            "memory with one more forward pass, a third more FLOPs (Korthikanti et al. 2022); LoRA (Hu et al. "
            "2021) or 8-bit Adam (Dettmers et al. 2022) cut the states themselves.",
        ),
    )
    page.mistakes(
        [
            "Counting only the weights: training needs about 16 bytes per parameter (Adam's moments and the fp32 "
            "master copy dominate), and activations on top (001 §3.2; 002 A10-09).",
            "Mixing GB and GiB: an 80 GB card holds about 80 GiB (the seeds' reading; nvidia-smi shows 79.6 GiB); "
            "reading it as 80×10⁹ bytes, or comparing GB of demand with GiB of supply, is off by 7% (002 A10, its "
            "unit convention).",
            "Expecting pipeline parallelism to be free: with m micro-batches and p stages a share (p − 1)/(m + p − 1) "
            "of wall-clock idles; p = 8 needs m ≥ 63 to keep it at most 10% (002 A5.4, A10-10).",
            "Quoting the sparse peak (2:4 sparsity doubles the data sheet's number) or forgetting MFU when estimating "
            "training time: dense training gets 30-50% of the dense peak (002 A5.4, A10-12).",
        ]
    )

    page.download(out.tables, "training-memory")
    page.finish()


page.run(_body)
