"""The FlashAttention page's state and what it shows: the tiled forward of a small toy stepped block by block with
the online softmax's running max, running sum and rescale (main, with a drag over the step), the HBM traffic of
standard attention and of FlashAttention's Algorithm 1 as the sequence grows, and what the backward keeps (one tab
each, built only when open)."""

from __future__ import annotations

import functools
import math

import numpy as np
import pandas as pd
import plotly.graph_objects as go

from core import flash_attention as fa
from views import DEFAULT, Drag, Options, QuickCheck, Readout, View, with_answers
from views import predict as ask
from views.state import Field, Spec, State
from viz import format as fmt
from viz.flash_attention import backward_memory_figure, hbm_traffic_figure, tiles_figure
from viz.predict import predict_figure, with_guess

# the page's interview question: with answers hidden (hide=true) it stands in for the takeaway
QUESTION = (
    "FlashAttention's backward does more FLOPs than standard attention (with no mask). Why is it faster, and is it "
    "exact?"
)
# the answer's key phrases: with answers hidden (hide=true) no text outside the figures and the readouts' values
# quotes one (tests/test_hide_answers.py, at each page's defaults; each is there when shown)
ANSWER_PHRASES = (
    "never writes the N × N",
    "running max and a running sum",
    "recomputes the scores",
)

QUICK_CHECK = QuickCheck(
    question=(
        "One head, d = 64, fp16, 100 KiB of SRAM (M = 51,200 values). Count HBM reads and writes (in values, ℓ and "
        "m included) exactly as written in Algorithm 1 of Dao et al. 2022 (B_c = ⌈M/4d⌉, B_r = min(B_c, d)), "
        "against standard attention's 4N² reads and writes of S and P. By about what factor does Algorithm 1 move "
        "fewer values at long N, and what does the same count give at d = 128?"
    ),
    options=(
        "About 12.5× at d = 64 and 3.1× at d = 128",
        "About 8.2× at d = 64 and 2.1× at d = 128",
        "About 4.1× at d = 64 and 1.03× at d = 128",
    ),
    right=2,
    answer=(
        "The ratio tends to 4M/((12 + 16/d)·d²): 204,800 / (12.25 × 4,096) ≈ **4.1×** at d = 64, and "
        "204,800 / (12.125 × 16,384) ≈ **1.03×** at d = 128. Theorem 2's Θ(N²d²/M) drops the constants; read as a "
        "ratio it gives M/d² = 12.5×. Load the presets *Theorem 2: d = 64, 100 KiB SRAM* and *d = 128 with 100 KiB: "
        "the count as written saves little*."
    ),
)

VIEWS = ("Tiles", "HBM traffic", "Backward memory")
TILES, HBM, BACKWARD = VIEWS
HEAD_DIMS = ("32", "64", "128", "256")
BYTES_PER_ELEMENT = 2  # fp16 / bf16 values
STATS_BYTES = 4  # the logsumexp is kept in fp32
PANEL_ROWS = 4  # the readout panel lists at most this many rows of the current block
N_LOW, N_HIGH = 256, 262_144  # the HBM and backward figures' sequence lengths (powers of 2)

SPEC = Spec(
    "FlashAttention",
    (
        Field("fa_view", "View", "choice", VIEWS[0], choices=VIEWS, widget="tabs"),
        Field("fa_tokens", "Tokens T (toy)", "int", 16, lo=2, hi=16, step=1, widget="slider"),
        Field("fa_dim", "Head dimension d (toy)", "int", 4, lo=1, hi=16, step=1),
        Field("fa_bq", "Query block B_r (rows)", "int", 4, lo=1, hi=16, step=1, widget="slider"),
        Field("fa_bk", "Key block B_c (columns)", "int", 4, lo=1, hi=16, step=1, widget="slider"),
        Field(
            "fa_causal",
            "Causal mask",
            "bool",
            True,
            help="a block whose keys all come after all its queries is skipped: nothing loaded, nothing computed",
        ),
        Field(
            "fa_step",
            "Step",
            "int",
            6,
            lo=1,
            hi=256,
            step=1,
            help="one (query block, key block) tile at a time, in Algorithm 1's order: key blocks outside, query "
            "blocks inside. The row under the figure drags the step in the browser.",
        ),
        Field("fa_seed", "Seed of the toy Q, K, V", "int", 0, lo=0, hi=9999, step=1),
        Field("fa_n", "Sequence length N", "int", 4096, lo=N_LOW, hi=N_HIGH, step=256),
        Field("fa_hd", "Head dimension d", "choice", "64", choices=HEAD_DIMS, widget="segmented"),
        Field(
            "fa_sram",
            "SRAM M (KiB)",
            "int",
            100,
            lo=1,
            hi=1024,
            step=4,
            help="on-chip memory one block of work may use; values counted in 2-byte fp16, so M in elements is "
            "half the bytes",
        ),
        Field("fa_heads", "Heads", "int", 32, lo=1, hi=128, step=1),
        ask.switch("predict_fa"),
        ask.guess("guess_skipped", "Your guess: blocks skipped", "int", 0, 256),
    ),
    presets={
        "A8.8: the online softmax, no mask": {"fa_causal": False, "fa_step": 6, "fa_view": TILES},
        "Causal: T = 16, 4 × 4 blocks": {
            "fa_causal": True,
            "fa_tokens": 16,
            "fa_bq": 4,
            "fa_bk": 4,
            "fa_step": 6,
            "fa_view": TILES,
        },
        "One tile: plain softmax": {"fa_bq": 16, "fa_bk": 16, "fa_tokens": 16, "fa_step": 1, "fa_view": TILES},
        "Theorem 2: d = 64, 100 KiB SRAM": {"fa_hd": "64", "fa_sram": 100, "fa_n": 4096, "fa_view": HBM},
        "d = 128 with 100 KiB: the count as written saves little": {
            "fa_hd": "128",
            "fa_sram": 100,
            "fa_n": 4096,
            "fa_view": HBM,
        },
        "A8.8: what the backward keeps at 32k tokens": {
            "fa_n": 32_768,
            "fa_hd": "128",
            "fa_heads": 32,
            "fa_view": BACKWARD,
        },
    },
)


# ---------------------------------------------------------------------------------------------------------------
# the toy
# ---------------------------------------------------------------------------------------------------------------


def toy_qkv(T: int, d: int, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The toy's Q, K, V (T, d), float64, seeded standard normal, drawn in that order."""
    rng = np.random.default_rng(seed)
    return rng.standard_normal((T, d)), rng.standard_normal((T, d)), rng.standard_normal((T, d))


def plain_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, causal: bool) -> np.ndarray:
    """softmax(Q K^T / √d + mask) V in one go, as Algorithm 0 computes it (numpy, no tiles)."""
    T, d = q.shape
    s = q @ k.T / math.sqrt(d)
    if causal:
        s = np.where(np.tri(T, dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


@functools.lru_cache(maxsize=32)
def _run(T: int, d: int, bq: int, bk: int, causal: bool, seed: int) -> tuple[fa.FlashForward, np.ndarray, float]:
    q, k, v = toy_qkv(T, d, seed)
    out = fa.flash_attention_forward(q, k, v, bq, bk, causal=causal)
    scores = q @ k.T / math.sqrt(d)
    if causal:
        scores = np.where(np.tri(T, dtype=bool), scores, np.nan)
    error = float(np.max(np.abs(out.output - plain_attention(q, k, v, causal))))
    scores.setflags(write=False)
    return out, scores, error


def _panel(step: fa.BlockStep, k: int, n: int) -> str:
    """The readout panel at one step: the tile, then each of its rows' running max m, sum ℓ and rescale."""
    (r0, r1), (c0, c1) = step.rows, step.cols
    lines = [f"<b>step {k} of {n}</b>", f"queries {r0}–{r1 - 1}, keys {c0}–{c1 - 1}"]
    if step.skipped:
        return "<br>".join([*lines, "skipped: every key of the block", "comes after every query"])
    lines.append("row: m, ℓ, rescale e^(m_old − m_new)")
    for r in range(r1 - r0)[:PANEL_ROWS]:
        first = step.rescale[r] == 0
        scale = "first block" if first else f"× {step.rescale[r]:.3f}"
        lines.append(f"{r0 + r}: {step.m[r]:.3f}, {step.l[r]:.3f}, {scale}".replace("-", "−"))
    if r1 - r0 > PANEL_ROWS:
        lines.append(f"(and {r1 - r0 - PANEL_ROWS} more rows)")
    return "<br>".join(lines)


@functools.lru_cache(maxsize=32)
def _tiles(T: int, d: int, bq: int, bk: int, causal: bool, seed: int, step: int, theme: str, pres: bool) -> go.Figure:
    out, scores, _ = _run(T, d, bq, bk, causal, seed)
    n = len(out.trace)
    panels = [_panel(s, k + 1, n) for k, s in enumerate(out.trace)]
    blocks = [(s.rows, s.cols) for s in out.trace]
    skipped = [b for b, s in zip(blocks, out.trace, strict=True) if s.skipped]
    return tiles_figure(scores, blocks, skipped, panels, active=step - 1, theme=theme, presenter=pres)


def steps_of(state: State) -> int:
    """How many (query block, key block) steps the toy's tiling takes: ceil(T/B_r) · ceil(T/B_c)."""
    T = int(state.fa_tokens)
    return -(-T // int(state.fa_bq)) * -(-T // int(state.fa_bk))


# ---------------------------------------------------------------------------------------------------------------
# the HBM traffic and the backward's memory
# ---------------------------------------------------------------------------------------------------------------


def lengths() -> np.ndarray:
    """The sequence lengths the two sweeps draw: powers of 2 from 256 to 262,144."""
    return 2 ** np.arange(int(math.log2(N_LOW)), int(math.log2(N_HIGH)) + 1, dtype=np.int64)


def flat_ratio(d: int, M: int) -> float:
    """The standard count over the flash count as N grows: 4n² against (12 + 16/d) n² d² / M (core's docstring)."""
    return 4 * M / ((12 + 16 / d) * d * d)


@functools.lru_cache(maxsize=32)
def _hbm(n: int, d: int, sram: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    N = np.unique(np.append(lengths(), n))
    std = fa.attention_hbm_bytes(N, d, sram, "standard", BYTES_PER_ELEMENT)
    flash = fa.attention_hbm_bytes(N, d, sram, "flash", BYTES_PER_ELEMENT)
    at = int(np.searchsorted(N, n))
    return N, std, flash, int(std[at]), int(flash[at])


@functools.lru_cache(maxsize=32)
def _backward(n: int, d: int, heads: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, int]:
    N = np.unique(np.append(lengths(), n))
    std = fa.attention_activation_bytes(N, d, heads, "standard", BYTES_PER_ELEMENT)
    flash = fa.attention_activation_bytes(N, d, heads, "flash", BYTES_PER_ELEMENT, stats_bytes_per_element=STATS_BYTES)
    at = int(np.searchsorted(N, n))
    return N, std, flash, int(std[at]), int(flash[at])


def figures(state: State, options: Options = DEFAULT) -> View:
    """The figures of the tabs named in ``options.parts`` (``Tiles``, ``HBM traffic``, ``Backward memory``; ``main`` is
    the open tab's, also returned as ``figures["main"]``; the drag over the step is the Tiles figure's), each tab's
    readouts, the notes on the input, and the table behind the Tiles figure.

    Facts the page's texts quote: ``steps``, ``skipped``, ``error`` (max |flash − plain|), ``predict``; per tab
    ``ratio`` and ``flat`` (HBM traffic) and ``saved`` (Backward memory). Bad input gives a note, never an exception.
    """
    parts = set(options.parts)
    if "main" in parts:
        parts.add(state.fa_view)
    view = View()
    T, d, bq, bk = int(state.fa_tokens), int(state.fa_dim), int(state.fa_bq), int(state.fa_bk)
    causal, seed = bool(state.fa_causal), int(state.fa_seed)
    notes = []
    if bq > T or bk > T:
        notes.append(f"A block larger than T = {T} tokens is one tile of all {T}.")
    n = steps_of(state)
    step = int(state.fa_step)
    if step > n:
        notes.append(f"This tiling takes {n} steps: showing step {n} instead of {step}.")
        step = n
    for note in notes:
        view.notices.append(("info", note))
    out, _, error = _run(T, d, bq, bk, causal, seed)
    skipped = sum(s.skipped for s in out.trace)
    now = out.trace[step - 1]
    view.facts.update(steps=n, skipped=skipped, error=error, step=step)

    predicting = ask.mode(state, "predict_fa", "guess_skipped")
    view.facts["predict"] = predicting
    question = (
        f"With{'' if causal else 'out'} the causal mask on T = {T} tokens and {bq} × {bk} blocks, how many of "
        f"the {n} blocks are skipped outright?"
    )
    if TILES in parts:
        if predicting == "hidden":
            view.figures[TILES] = predict_figure(
                question, x_title="key position j", y_title="query position i", x_range=(-0.5, T - 0.5),
                y_range=(T - 0.5, -0.5), **options.look,
            )  # fmt: skip
        else:
            view.figures[TILES] = _tiles(T, d, bq, bk, causal, seed, step, options.theme, options.presenter)
            view.drags[TILES] = Drag("fa_step", tuple(range(1, n + 1)))
    (r0, r1), (c0, c1) = now.rows, now.cols
    readouts = [
        Readout(
            "Step",
            f"{step} of {n}",
            f"queries {r0}–{r1 - 1} against keys {c0}–{c1 - 1}" + (": skipped by the mask" if now.skipped else ""),
        ),
        Readout(
            "Blocks skipped",
            f"{skipped} of {n}" if causal else f"0 of {n}",
            "tiles whose keys all come after all their queries" if causal else "no mask: every tile is computed",
        ),
        Readout(
            "Max |flash − plain|",
            f"{error:.0e}",
            "the largest difference between the tiled output and softmax(QKᵀ/√d)V computed in one go: round-off",
        ),
    ]
    view.readouts = readouts

    if HBM in parts or BACKWARD in parts:
        N, hd = int(state.fa_n), int(state.fa_hd)
    if HBM in parts:
        sram = int(state.fa_sram) * 1024
        M = sram // BYTES_PER_ELEMENT
        if M < hd:
            view.notices.append(("warning", f"An SRAM of {state.fa_sram} KiB holds fewer than d = {hd} values."))
            sram, M = 100 * 1024, 100 * 1024 // BYTES_PER_ELEMENT
        Ns, std, flash, s_at, f_at = _hbm(N, hd, sram)
        flat = flat_ratio(hd, M)
        b_c, b_r = fa.flash_block_sizes(hd, M)[1], fa.flash_block_sizes(hd, M)[0]
        view.figures[HBM] = hbm_traffic_figure(Ns, std, flash, N, flat, hd, sram // 1024, **options.look)
        view.facts.update(ratio=s_at / f_at, flat=flat)
        view.readouts += [
            Readout(
                f"Standard at N = {N:,}",
                fmt.binary_bytes(s_at),
                "Algorithm 0: S and P written and read back, 4Nd + 4N² values of 2 bytes, one head",
            ),
            Readout(
                "FlashAttention (Algorithm 1)",
                fmt.binary_bytes(f_at),
                f"B_c = {b_c}, B_r = {b_r} from M = {M:,} values: Q and O pass through once per key block",
            ),
            Readout("Bytes moved: standard ÷ flash", f"{s_at / f_at:.2f}×", "at this N"),
            Readout(
                "As N grows",
                f"{flat:.2f}×",
                "4M / ((12 + 16/d)·d²): the ratio levels off; it does not keep growing with N",
            ),
        ]
    if BACKWARD in parts:
        H = int(state.fa_heads)
        Ns, std, flash, s_at, f_at = _backward(N, hd, H)
        view.figures[BACKWARD] = backward_memory_figure(Ns, std, flash, N, H, hd, **options.look)
        view.facts["saved"] = s_at / f_at
        view.readouts += [
            Readout(
                f"P kept, N = {N:,}",
                fmt.binary_bytes(s_at),
                f"standard: the N × N probabilities of {H} heads, 2 bytes each, one layer, one sequence",
            ),
            Readout(
                "O and logsumexp kept",
                fmt.binary_bytes(f_at),
                f"FlashAttention: O (N × d, 2 bytes) and one fp32 logsumexp per row, {H} heads",
            ),
            Readout(
                "Bytes kept: standard ÷ flash",
                f"{s_at / f_at:,.0f}×",
                "N²·2 over N·(2d + 4) bytes: N/(d + 2), growing with N",
            ),
        ]

    view.tables["Tiles"] = lambda: pd.DataFrame(
        [
            {
                "step": k + 1,
                "query_rows": f"{s.rows[0]}-{s.rows[1] - 1}",
                "key_cols": f"{s.cols[0]}-{s.cols[1] - 1}",
                "skipped": s.skipped,
                "row": s.rows[0] + r,
                "running_max": float(s.m[r]),
                "running_sum": float(s.l[r]),
                "rescale": float(s.rescale[r]),
            }
            for k, s in enumerate(out.trace)
            for r in range(s.rows[1] - s.rows[0])
        ]
    )
    if predicting == "hidden":
        ask.hide(view, question, ("Blocks skipped", "Step"), tables=("Tiles",))
    elif predicting == "revealed":
        g = int(state.guess_skipped)
        if TILES in view.figures:
            view.figures[TILES] = with_guess(
                view.figures[TILES], -0.5, f"your guess: {g} blocks skipped", axis="x", theme=options.theme
            )
        truth = skipped if causal else 0
        ask.reveal(
            view,
            Readout(
                "Blocks skipped (the answer)",
                f"{truth}",
                f"of {n}: the dotted tiles above the diagonal" if causal else f"of {n}: no mask, none skipped",
            ),
            f"{g}",
            f"{g - truth:+d}".replace("-", "−"),
            "your guess minus the answer",
            value=truth,
        )
    if "main" in parts:
        view.show_as_main(state.fa_view)
    return with_answers(SPEC, state, view)
