"""The sampling page's state and what it shows: next-token bars under temperature, top-k, top-p and min-p, the
order switch, and greedy loops against nucleus sampling."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd

from core import sampling, tiny_gpt
from views import DEFAULT, Drag, Options, Readout, View, with_answers
from views.state import Answer, Field, Spec, State
from viz.format import byte_label
from viz.sampling import DEFAULT_TEMPERATURES, generation_figure, order_figure, sampling_figure

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = "What do temperature and top-p do, and in which order?"
# the answer's key phrases and numbers: with answers hidden (hide=true) no text outside the figures and the
# readouts' values quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "reshapes it",
    "cut its tail",
    "without changing their order",
    "smallest set of tokens",
    "keeps 20 tokens",
)

SOURCES = ("keeper", "flat", "bigram", "tiny GPT")
ORDERS = ("temperature first", "filters first")
VIEWS = ("Order of the steps", "Greedy loops")
BIGRAM_SHOWN = 30  # the bigram's most likely next words that the bars show
GPT_SHOWN = 30  # the tiny GPT's most likely next bytes that the bars show
# a phrase of the tiny GPT's held-out text (core.tiny_gpt.split_bytes: every 10th 4 KiB chunk of its corpus)
GPT_PROMPT = "The reward model is only trustworthy near the answers it was trained on"
CHAIN_V, CHAIN_LEN = 12, 40
MAX_LOGITS = 200

SPEC = Spec(
    "Sampling",
    (
        Field(
            "vocab",
            "Next-token logits from",
            "choice",
            "keeper",
            choices=SOURCES,
            help="keeper: a confident model after “…wiped the”; flat: an unsure one; bigram: a word bigram model "
            "trained on the bundled text; tiny GPT: the app's byte-level transformer (the training lab's model) "
            "after your prompt",
        ),
        Field(
            "logits",
            "Your own logits (token=logit, comma-separated; empty: the preset's)",
            "text",
            "",
            max_chars=4000,
            help="e.g. `A=0.69, B=0.18, C=-0.22`; replaces the preset vocabulary",
        ),
        Field("word", "Previous word (bigram model)", "text", "the", max_chars=40),
        Field(
            "gpt_prompt",
            "Prompt (tiny GPT: the bars are its next byte)",
            "text",
            GPT_PROMPT,
            max_chars=1000,
            help="Any text; the model reads its UTF-8 bytes, at most the last 128 (its context). The default is a "
            "phrase of its held-out text.",
        ),
        Field("T", "Temperature T", "float", 1.0, lo=0.0, hi=2.0, step=0.05, widget="slider", help="0 = greedy"),
        Field("top_k", "top-k (empty: off)", "int", None, lo=1, hi=1000, optional=True, step=1),
        Field("top_p", "top-p (1: off)", "float", 1.0, lo=0.01, hi=1.0, step=0.01, widget="slider"),
        Field("min_p", "min-p (0: off)", "float", 0.0, lo=0.0, hi=1.0, step=0.01, widget="slider"),
        Field("order", "Order", "choice", ORDERS[0], choices=ORDERS, widget="segmented"),
        Field("samp_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("chain_seed", "Markov chain seed", "int", 0, lo=0, hi=9999, step=1),
    ),
    presets={
        "Order matters: T = 2, top-p 0.9": {
            "vocab": "keeper",
            "logits": "",
            "T": 2.0,
            "top_p": 0.9,
            "top_k": None,
            "min_p": 0.0,
        },
        "Greedy: T = 0": {"T": 0.0, "top_p": 1.0, "top_k": None, "min_p": 0.0},
        "Sharp: T = 0.5": {"T": 0.5, "top_p": 1.0, "top_k": None, "min_p": 0.0},
        "Flat: T = 2": {"T": 2.0, "top_p": 1.0, "top_k": None, "min_p": 0.0},
        "min-p 0.1 at T = 1.5": {"T": 1.5, "top_p": 1.0, "top_k": None, "min_p": 0.1},
        "top-k 5": {"T": 1.0, "top_p": 1.0, "top_k": 5, "min_p": 0.0},
        "Quick check: 0.5, 0.3, 0.2 at top-p 0.6": {
            "logits": "A=-0.6931, B=-1.204, C=-1.6094",
            "T": 1.0,
            "top_p": 0.6,
            "top_k": None,
            "min_p": 0.0,
        },
        "Bigram model after “the”": {"vocab": "bigram", "word": "the", "logits": "", "T": 1.0, "top_p": 0.9},
        "Tiny GPT: its next byte, top-p 0.9": {
            "vocab": "tiny GPT",
            "gpt_prompt": GPT_PROMPT,
            "logits": "",
            "T": 1.0,
            "top_k": None,
            "top_p": 0.9,
            "min_p": 0.0,
        },
    },
    preset_help={
        "Order matters: T = 2, top-p 0.9": "Tempering first keeps 20 tokens; truncating first keeps 8.",
        "Quick check: 0.5, 0.3, 0.2 at top-p 0.6": "The crossing token B is kept: 0.625 and 0.375.",
    },
    answers={
        "Order matters: T = 2, top-p 0.9": Answer(
            "Kept tokens",
            "20",
            "derived on this page: its 30-token vocabulary at T = 2, top-p 0.9, tempered first as in seed 002 A8.7",
        ),
        "Quick check: 0.5, 0.3, 0.2 at top-p 0.6": Answer(
            "Kept tokens", "2", "this page's quick check, by seed 002 A8.7's rule: top-p 0.6 keeps A and the crossing B"
        ),
    },
)


def logits_text(tokens: tuple[str, ...] | list[str], logits: tuple[float, ...] | list[float]) -> str:
    """The ``token=logit, ...`` text of a vocabulary (what the logits field reads), to copy and edit."""
    return ", ".join(f"{t}={z:g}" for t, z in zip(tokens, logits, strict=True))


def sampling_presets() -> tuple[str, ...]:
    """The sources that are a fixed vocabulary (core.sampling's presets): the page offers their logits as text."""
    return tuple(sampling.VOCAB_PRESETS)


def preset_logits_text(name: str) -> str:
    """:func:`logits_text` of the vocabulary preset ``name`` (the page offers it to copy and edit)."""
    preset = sampling.VOCAB_PRESETS[name]
    return logits_text(preset.tokens, preset.logits)


def parse_logits(text: str) -> tuple[list[str], list[float]]:
    """``token=logit, ...`` -> (tokens, logits); ValueError with a readable message for anything else."""
    tokens, logits = [], []
    for i, part in enumerate(p.strip() for p in text.replace("\n", ",").split(",")):
        if not part:
            continue
        name, sep, value = part.rpartition("=")
        if not sep:
            name, value = f"t{i + 1}", part  # a bare number gets a name
        try:
            z = float(value)
        except ValueError:
            raise ValueError(f"`{part}` is not token=number") from None
        if math.isnan(z) or z == math.inf:
            raise ValueError(f"`{part}`: a logit must be a number or -inf (a banned token)")
        tokens.append(name.strip() or f"t{i + 1}")
        logits.append(z)
    if not logits:
        raise ValueError("no logits given")
    if len(logits) > MAX_LOGITS:
        raise ValueError(f"{len(logits)} logits; the page shows at most {MAX_LOGITS}")
    if not any(math.isfinite(z) for z in logits):
        raise ValueError("at least one logit must be finite")
    return tokens, logits


def readable(data: bytes) -> str:
    """Bytes as text for a caption: UTF-8 where it decodes, control bytes escaped, spaces kept."""
    text = data.decode("utf-8", errors="backslashreplace")
    return "".join(c if c.isprintable() or c == " " else c.encode("unicode_escape").decode("ascii") for c in text)


@functools.cache
def tiny_gpt_model() -> tuple[dict, tiny_gpt.GPTConfig]:
    """The shipped tiny GPT's weights and config (core/data/tiny_gpt.npz, loaded once; numpy, no torch)."""
    params, cfg, _ = tiny_gpt.load_checkpoint()
    return params, cfg


def prompt_bytes(prompt: str, ctx: int) -> tuple[bytes, list[tuple[str, str]]]:
    """The bytes the tiny GPT reads for ``prompt`` and a notice per change: empty -> the default phrase; non-ASCII
    -> its UTF-8 bytes; longer than ``ctx`` bytes -> the last ``ctx``."""
    notices: list[tuple[str, str]] = []
    if not prompt:
        notices.append(("warning", f"The prompt is empty; using the default phrase “{GPT_PROMPT}”."))
        prompt = GPT_PROMPT
    data = prompt.encode("utf-8")
    if len(data) != len(prompt):
        notices.append(
            (
                "info",
                f"Your prompt has characters outside ASCII: the model reads their UTF-8 bytes, {len(data):,} bytes "
                f"for {len(prompt):,} characters.",
            )
        )
    if len(data) > ctx:
        notices.append(
            (
                "info",
                f"Your prompt is {len(data):,} bytes; the tiny GPT reads at most {ctx} (its context), so it sees the "
                f"last {ctx}.",
            )
        )
        data = data[-ctx:]
    return data, notices


def gpt_next_byte(prompt: str) -> tuple[np.ndarray, bytes, list[tuple[str, str]]]:
    """(the 256 next-byte logits after the prompt, the bytes read, notices) from the tiny GPT's numpy forward."""
    params, cfg = tiny_gpt_model()
    data, notices = prompt_bytes(prompt, cfg.ctx)
    z = tiny_gpt.logits_numpy(params, cfg, np.frombuffer(data, dtype=np.uint8))[-1]  # (256,) after the last byte
    return z.astype(np.float64), data, notices


def candidates(state: State) -> tuple[list[str], list[float], str, list[tuple[str, str]]]:
    """(tokens, logits, context, notices) of the state's source."""
    notices: list[tuple[str, str]] = []
    if state.logits.strip():
        try:
            tokens, logits = parse_logits(state.logits)
            return tokens, logits, "your logits", notices
        except ValueError as err:
            notices.append(("warning", f"Your logits could not be read ({err}); showing the preset's instead."))
    if state.vocab == "bigram":
        model = sampling.word_bigram_model()
        word = state.word.strip().lower() or "the"
        if word not in model.vocab:
            notices.append(("warning", f"“{state.word[:40]}” is not in the bigram's vocabulary; using “the”."))
            word = "the"
        z = model.next_logits(word)
        top = np.argsort(-z, kind="stable")[:BIGRAM_SHOWN]
        notices.append(
            (
                "info",
                f"The bigram's {BIGRAM_SHOWN} most likely tokens after “{word}” out of its {len(model.vocab)} "
                "(words and punctuation marks), renormalised among themselves.",
            )
        )
        return [model.vocab[i] for i in top], [float(z[i]) for i in top], f"… {word}", notices
    if state.vocab == "tiny GPT":
        z, data, read = gpt_next_byte(state.gpt_prompt)
        cfg = tiny_gpt_model()[1]
        notices += read
        top = np.argsort(-z, kind="stable")[:GPT_SHOWN]
        p = np.exp(z - z.max())
        mass = float(p[top].sum() / p.sum())
        at_t = ""
        if float(state.T) > 0 and float(state.T) != 1.0:
            # the share at the page's temperature: softmax(z / T) over all 256 bytes
            q = np.exp((z - z.max()) / float(state.T))
            at_t = f", at T = {float(state.T):g} {100 * float(q[top].sum() / q.sum()):.1f}%"
        notices.append(
            (
                "info",
                f"The tiny GPT's {GPT_SHOWN} most likely next bytes out of 256 (␣ is a space), renormalised among "
                f"themselves: a top-{GPT_SHOWN} cut made before the temperature and the filters, so the kept counts "
                f"are counts among these {GPT_SHOWN}. At T = 1 they hold {100 * mass:.1f}% of its probability"
                f"{at_t}. The model: {cfg.n_layer} layers, {tiny_gpt.n_params(cfg) / 1e6:.1f}M parameters, trained "
                "on this app's cards, decks, README and docs/using.md.",
            )
        )
        tail = readable(data)
        context = f"the tiny GPT after “{'…' if len(tail) > 60 else ''}{tail[-60:]}”"
        return [byte_label(int(i)) for i in top], [float(z[i]) for i in top], context, notices
    preset = sampling.VOCAB_PRESETS[state.vocab]
    return list(preset.tokens), list(preset.logits), preset.context, notices


def settings(state: State) -> dict:
    return {
        "top_k": state.top_k,
        "top_p": state.top_p if state.top_p != 1.0 else None,
        "min_p": state.min_p if state.min_p != 0.0 else None,
    }


def core_order(state: State) -> str:
    return sampling.ORDERS[ORDERS.index(state.order)] if state.order in ORDERS else sampling.ORDERS[0]


def figures(state: State, options: Options = DEFAULT) -> View:
    """The bars with the temperature slider (``main``), the order comparison (``order``), loops (``loops``)."""
    view = View()
    tokens, logits, context, notices = candidates(state)
    view.notices += notices
    kw = settings(state)
    order = core_order(state)
    try:
        final = sampling.sample_filter_np(logits, state.T, order=order, **kw)
        other = sampling.sample_filter_np(
            logits, state.T, order=sampling.ORDERS[1 - sampling.ORDERS.index(order)], **kw
        )
    except ValueError as err:
        view.notices.append(("warning", f"These settings cannot be sampled: {err}. Showing T = 1 with no filters."))
        state = state.replace(T=1.0, top_k=None, top_p=1.0, min_p=0.0)
        kw = settings(state)
        final = other = sampling.sample_filter_np(logits, 1.0)
    T = float(state.T)
    temps = sorted({float(t) for t in DEFAULT_TEMPERATURES} | {T})
    view.facts.update(temps=temps, tokens=tokens, logits=logits, context=context, final=final)
    if options.wants("main"):
        view.figures["main"] = sampling_figure(logits, tokens, T, order=order, temperatures=temps, **kw, **options.look)
        view.drags["main"] = Drag("T", tuple(temps))
    if options.wants("order"):
        view.figures["order"] = order_figure(logits, tokens, T, **kw, **options.look)
    if options.wants("loops"):
        W = sampling.markov_logits(CHAIN_V, int(state.chain_seed))
        gens = {
            "greedy (T = 0)": sampling.generate_markov(W, 0, CHAIN_LEN, 0.0, seed=state.chain_seed),
            "nucleus (T = 1, top-p 0.9)": sampling.generate_markov(
                W, 0, CHAIN_LEN, 1.0, top_p=0.9, seed=state.chain_seed
            ),
            "your settings": sampling.generate_markov(W, 0, CHAIN_LEN, T, seed=state.chain_seed, **kw),
        }
        view.figures["loops"] = generation_figure(gens, **options.look)
        view.facts["generations"] = gens

    kept = int((final > 0).sum())
    H = abs(float(sampling.entropy_nats(final)))  # abs: a one-hot row gives -0.0, shown as "-0.000"
    top = int(np.argmax(final))
    order_sorted = np.argsort(-final, kind="stable")
    last_kept = tokens[int(order_sorted[kept - 1])]
    view.facts.update(kept=kept, H=H, other_kept=int((other > 0).sum()))
    this_name = state.order if state.order in ORDERS else ORDERS[0]
    other_name = ORDERS[1 - ORDERS.index(this_name)]
    view.facts["kept_by_order"] = {this_name: kept, other_name: int((other > 0).sum())}
    view.readouts = [
        Readout("Kept tokens", f"{kept} of {len(tokens)}", "tokens with non-zero probability after the filters"),
        Readout("Entropy H", f"{H:.3f} nats", "−Σ p ln p of the distribution sampled from"),
        Readout("Effective choices exp(H)", f"{math.exp(H):.2f}", "1 for greedy, V for uniform"),
        Readout("Top token", f"{tokens[top]}: {final[top]:.3f}", "its probability after the filters"),
        Readout("Least likely kept token", last_kept, "with top-p: the token that crosses the threshold p_top is kept"),
        Readout(
            f"Kept with {other_name}",
            f"{int((other > 0).sum())}",
            f"the same settings applied in the other order ({other_name})",
        ),
    ]
    if T == 0.0:
        view.notices.append(("info", "T = 0 is greedy decoding: the argmax, its own branch (no division by zero)."))

    view.tables = {
        "Next token": lambda: pd.DataFrame(
            {
                "token": tokens,
                "logit": logits,
                "p_sampled": final,
                f"p_{other_name.replace(' ', '_')}": other,
            }
        )
    }
    return with_answers(SPEC, state, view)
