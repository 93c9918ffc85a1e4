"""The loss page's state and what it shows: perplexity against bits per byte across tokenizers, the uniform
baseline, BPE merges, the SFT loss mask, packing masks and padding waste."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from core import loss_units, tiny_gpt
from core.sampling import bundled_text
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views.state import Answer, Field, Spec, State
from viz.loss_units import (
    bpe_merges_figure,
    packing_mask_figure,
    padding_figure,
    sft_mask_figure,
    tokenizer_units_figure,
)

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "Model A has perplexity 12, model B 20 on the same text. Is A better?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "changes with the tokenizer",
    "Only if they share a tokenizer",
    "divides the total loss by the bytes",
    "longer tokens raise it",
    "the perplexity per token, rises",
)

QUICK_CHECK = QuickCheck(
    question=(
        "A tokenizer with longer tokens cuts the same 1,000-byte text into half as many tokens, and the model's total "
        "loss on the text does not change. What happens to per-token perplexity and to bits per byte?"
    ),
    options=(
        "Perplexity doubles; bits per byte do not change",
        "Neither changes: the total loss is the same",
        "Perplexity is squared; bits per byte do not change",
        "Perplexity is squared; bits per byte double",
        "Perplexity doubles; bits per byte double",
    ),
    right=2,
    answer=(
        "The loss per token doubles, so the per-token perplexity is squared (e^{2L} = (e^L)²). Bits per byte, the "
        "total divided by 1,000 · ln 2, does not change (the definitions of seed 001, section 3.1)."
    ),
)

VIEWS = ("BPE merges", "SFT mask", "Packing", "Padding")
# The tab whose figure each of the lower controls drives: the page opens it when one moves (a preset had opened the
# SFT mask, and three steps of "BPE merges learned" then changed nothing on screen: walkthrough 1.9).
TAB_OF = {
    "bpe_merges": "BPE merges",
    **dict.fromkeys(("prompt_len", "resp_len", "sft_mask", "sft_reduce", "sft_batch"), "SFT mask"),
    "doc_lens": "Packing",
    **dict.fromkeys(("pad_batch", "pack_len"), "Padding"),
}
REDUCTIONS = ("token", "sequence")
HELDOUT = bundled_text("lesson_text_heldout.txt")
SECOND_EXAMPLE = (200, 300)  # (prompt, response) tokens of the batch's second example: a short chat turn
N_LENGTHS = 512  # the padding study's sequences (log-normal lengths, seed 0)
MAX_PACKED = 256  # tokens of the packed sequence the mask figure draws
STEP_SAMPLE_CHARS = 160  # characters of the text the merge stepper cuts into tokens
MAX_MERGES = 60  # the merge stepper's range, 1..MAX_MERGES (each a prefix of the page's largest BPE's merges)

SPEC = Spec(
    "Loss_and_units",
    (
        Field(
            "eval_text",
            "Text to score (the model is trained on the bundled text)",
            "text",
            HELDOUT,
            max_chars=loss_units.MAX_TEXT_CHARS,
            help=f"any text up to {loss_units.MAX_TEXT_CHARS:,} characters; the default is a held-out paragraph",
        ),
        Field("vocab_size", "Vocabulary size V (uniform baseline)", "int", 50_000, lo=2, hi=10_000_000, step=1000),
        Field("loss_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("bpe_merges", "BPE merges learned", "int", 10, lo=1, hi=MAX_MERGES, widget="slider"),
        Field("prompt_len", "Prompt tokens", "int", 2000, lo=0, hi=8192, step=50),
        Field("resp_len", "Response tokens", "int", 50, lo=1, hi=8192, step=10),
        Field("sft_mask", "Mask the prompt (m_t = 0)", "bool", True),
        Field("sft_reduce", "Average over", "choice", "token", choices=REDUCTIONS, widget="segmented"),
        Field("sft_batch", "Add a second example (a short chat turn)", "bool", False),
        Field("doc_lens", "Packed document lengths (comma-separated)", "text", "6,4,5", max_chars=400),
        Field("pad_batch", "Batch size", "int", 16, lo=1, hi=512, step=1),
        Field("pack_len", "Packed row length (tokens)", "int", 2048, lo=16, hi=32768, step=256),
    ),
    presets={
        "Lesson: 2,000-token prompt, 50-token answer, unmasked": {
            "loss_view": "SFT mask",
            "prompt_len": 2000,
            "resp_len": 50,
            "sft_mask": False,
            "sft_batch": False,
        },
        "Uniform baseline: V = 50,000": {"vocab_size": 50_000},
        "Llama 3's vocabulary: V = 128,256": {"vocab_size": 128_256},
        "Padding: 512 chat lengths, batches of 16": {"loss_view": "Padding", "pad_batch": 16, "pack_len": 2048},
        "Packing three documents": {"loss_view": "Packing", "doc_lens": "6,4,5"},
    },
    answers={
        "Uniform baseline: V = 50,000": Answer("Uniform loss ln V", "10.8 nats", "lesson 001 section 2"),
    },
)


def parse_doc_lens(text: str) -> list[int]:
    """``6,4,5`` -> [6, 4, 5]; ValueError unless whole numbers >= 1 that total at most MAX_PACKED tokens."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    try:
        lens = [int(p) for p in parts]
    except ValueError:
        raise ValueError("document lengths must be whole numbers separated by commas") from None
    if not lens or min(lens) < 1:
        raise ValueError("give at least one document length, each at least 1")
    if sum(lens) > MAX_PACKED:
        raise ValueError(f"the packed sequence has {sum(lens)} tokens; the figure draws at most {MAX_PACKED}")
    return lens


def scored_text(state: State) -> tuple[str, list[tuple[str, str]]]:
    """The text to score, or the held-out paragraph with a notice when the state's text cannot be used."""
    try:
        return loss_units.check_text(state.eval_text), []
    except ValueError as err:
        return HELDOUT, [("warning", f"The text cannot be scored ({err}); scoring the held-out paragraph instead.")]


@functools.cache
def tiny_gpt_heldout() -> tuple[float, int]:
    """(nats per byte, bytes) of the shipped tiny GPT on its own held-out split: the number its training stored in
    the checkpoint's metadata (core.tiny_gpt.val_loss_numpy, about 1 s to recompute; tests/test_page_loss_units.py
    recomputes it), and the split's size."""
    _, _, meta = tiny_gpt.load_checkpoint()
    return float(meta["val_loss"]), len(tiny_gpt.split_bytes(tiny_gpt.corpus_bytes())[1])


def figures(state: State, options: Options = DEFAULT) -> View:
    """Units across tokenizers (``main``) and one figure per tab: ``SFT mask``, ``Packing``, ``Padding``."""
    view = View()
    text, notices = scored_text(state)
    view.notices += notices
    same, per = loss_units.compare_tokenizers(eval_text=text)
    view.facts.update(same=same, per=per, text=text)
    if options.wants("main"):
        view.figures["main"] = tokenizer_units_figure(same, per, **options.look)
    ppl = [s.perplexity for s in per]
    bpb = [s.bits_per_byte for s in per]
    V = int(state.vocab_size)
    gpt_nats, gpt_bytes = tiny_gpt_heldout()
    view.facts.update(tiny_gpt_nats=gpt_nats)
    unmasked = loss_units.sft_loss_weights(int(state.prompt_len), int(state.resp_len), mask_prompt=False).prompt_share
    view.facts.update(unmasked_share=unmasked)
    view.readouts = [
        Readout(
            "Bits per byte, one byte model",
            f"{same[0].bits_per_byte:.4f}",
            "the same for every tokenization: the total loss does not depend on how bytes are grouped",
        ),
        Readout(
            "Perplexity, one byte model",
            f"{same[0].perplexity:.2f} to {same[-1].perplexity:.1f}",
            f"{same[0].n_tokens} byte tokens to {same[-1].n_tokens} {same[-1].tokenizer} tokens: one total loss "
            "per token of each tokenizer, a unit conversion rather than a token-level model's perplexity",
        ),
        Readout(
            "Perplexity, bigram models",
            f"{min(ppl):.1f} to {max(ppl):.0f}",
            f"one bigram model per tokenizer: a factor of {max(ppl) / min(ppl):.0f}",
        ),
        Readout(
            "Bits per byte, bigram models",
            f"{min(bpb):.2f} to {max(bpb):.2f}",
            f"one bigram model per tokenizer: a factor of {max(bpb) / min(bpb):.1f}",
        ),
        Readout(
            "Bits per byte, tiny GPT (its own held-out text)",
            f"{gpt_nats / math.log(2):.3f}",
            f"{gpt_nats:.3f} nats per byte / ln 2: the app's tiny GPT (a byte-level transformer, the training lab's "
            f"model, trained on this app's cards, decks, README and docs/using.md), scored on its own held-out split, "
            f"every 10th 4 KiB (4,096-byte) chunk of that corpus ({gpt_bytes:,} bytes, each byte predicted from the "
            "bytes before it in its 128-byte window). Other text and other training data than the rows above: not "
            "comparable with them",
        ),
        Readout("Uniform loss ln V", f"{loss_units.uniform_loss(V):.2f} nats", f"perplexity e^(ln V) = V = {V:,}"),
        Readout(
            "Unmasked SFT loss weight on the prompt",
            f"{100 * unmasked:.1f}%",
            f"{state.prompt_len:,} / ({state.prompt_len:,} + {state.resp_len:,}) tokens: the share of the loss terms, "
            "and of the loss itself only if every token's loss is the same",
        ),
    ]
    view.tables = {
        "Tokenizers": lambda: pd.DataFrame(
            [
                {"construction": kind, **s.__dict__}
                for kind, scores in (("one byte model", same), ("bigram per tokenizer", per))
                for s in scores
            ]
        )
    }

    if options.wants("BPE merges"):
        n = int(state.bpe_merges)
        bpe = loss_units.get_tokenizer("bpe-800")
        learned = bpe.merges(MAX_MERGES)  # the first MAX_MERGES merges: those of every smaller vocabulary
        merges = learned[:n]
        table = pd.DataFrame(
            {
                "rank": np.arange(1, len(merges) + 1),
                "left": [_show(a) for a, _ in merges],
                "right": [_show(b) for _, b in merges],
                "new token": [_show(a + b) for a, b in merges],
            }
        )
        small = loss_units.train_bpe(bundled_text(), 256 + n)
        sample = text[:STEP_SAMPLE_CHARS]
        pieces = small.pieces(sample)
        view.facts.update(merge_table=table, pieces=[_show(p) for p in pieces], sample=sample)
        # the text's tokens after 0..MAX_MERGES merges, in one pass; the slider's steps are every count
        tokens = loss_units.merge_prefix_counts(bpe, text, MAX_MERGES)
        view.figures["BPE merges"] = bpe_merges_figure(
            tokens,
            [(_show(a), _show(b)) for a, b in learned],
            n,
            same[0].total_nll_nats,
            same[0].n_bytes,
            **options.look,
        )
        view.drags["BPE merges"] = Drag("bpe_merges", tuple(range(1, MAX_MERGES + 1)))
        view.facts.update(merge_tokens=tokens)
        view.tables["BPE merges"] = lambda: table

    if options.wants("SFT mask"):
        P, R = int(state.prompt_len), int(state.resp_len)
        prompts, responses = [P], [R]
        if state.sft_batch:
            prompts.append(SECOND_EXAMPLE[0])
            responses.append(SECOND_EXAMPLE[1])
        w = loss_units.sft_loss_weights(
            prompts, responses, mask_prompt=bool(state.sft_mask), reduction=state.sft_reduce
        )
        view.figures["SFT mask"] = sft_mask_figure(w, **options.look)
        per_token = [float(w.weights[b][~w.is_pad[b] & ~w.is_prompt[b]][0]) for b in range(len(prompts))]
        view.facts.update(sft=w, answer_weight=per_token)

    if options.wants("Packing"):
        try:
            lens = parse_doc_lens(state.doc_lens)
        except ValueError as err:
            view.notices.append(("warning", f"Packed document lengths: {err}; showing 6,4,5."))
            lens = [6, 4, 5]
        naive = loss_units.packing_attention_mask(lens, block_diagonal=False)
        block = loss_units.packing_attention_mask(lens, block_diagonal=True)
        view.figures["Packing"] = packing_mask_figure(lens, **options.look)
        view.facts.update(
            doc_lens=lens, leaks=int((naive & ~block).sum()), positions=loss_units.position_ids(lens).tolist()
        )

    if options.wants("Padding"):
        lengths = loss_units.example_lengths(N_LENGTHS, seed=0)
        B, S = int(state.pad_batch), int(state.pack_len)
        reports = [loss_units.padding_waste(lengths, B, scheme, S) for scheme in ("pad_to_longest", "bucket", "pack")]
        view.figures["Padding"] = padding_figure(reports, **options.look)
        view.facts.update(padding=reports)
        view.tables["Padding"] = lambda: pd.DataFrame(
            [
                {"scheme": r.scheme, "slots": r.slots, "real_tokens": r.real_tokens, "rows": r.n_rows, "waste": r.waste}
                for r in reports
            ]
        )
    return with_answers(SPEC, state, view)


def _show(token: bytes) -> str:
    """A token's bytes as readable text: spaces as ␣, undecodable bytes as hex."""
    return token.decode("utf-8", errors="backslashreplace").replace(" ", "␣").replace("\n", "⏎")
