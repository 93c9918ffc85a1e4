"""Reading what a user typed: number boxes, text fields and uploads turned into checked values for core, with a
note for the page for every value that had to change (never a traceback). Pure: no Streamlit, no math.

The one whole-number clamp is :func:`clamp_whole_number`; the pages' text formats (lists of numbers, reward lists)
are written by the same module that reads them, so a value survives the round trip through a text box or a link.
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Sequence
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np

from core.grpo import G_MAX, G_MIN, flip_reward
from core.kl_leash import K_MAX, K_MIN, REWARD_LIMIT, Answers, default_names
from core.tokenizer import Tokens, tokenize
from views.state import Field

if TYPE_CHECKING:
    from core.toy_attention import ToyModelSettings

# ----------------------------------------------------------------------------------------------------------------
# Numbers (clamped with a note)


def read_number(x: Any, name: str, default: float, notes: list[str]) -> float:
    """``x`` as a float; the default (with a note) when it is missing, not a number or NaN."""
    try:
        value = float(x)
    except (TypeError, ValueError):
        notes.append(f"{name}={x!r} is not a number; using {default:g}.")
        return float(default)
    if math.isnan(value):
        notes.append(f"{name} is not a number; using {default:g}.")
        return float(default)
    return value


def to_whole(value: float, name: str, notes: list[str]) -> float:
    if math.isfinite(value) and value != round(value):
        notes.append(f"{name}={value:g} is not a whole number; rounded to {round(value)}.")
        return float(round(value))
    return value


def clip_noted(value: float, lo: float, hi: float, name: str, why: str, notes: list[str]) -> float:
    if value < lo or value > hi:
        new = min(max(value, lo), hi)
        notes.append(f"{name}={value:g} {why}; using {new:g}.")
        return new
    return value


def clamp_whole_number(x: Any, name: str, lo: int, hi: int, default: int) -> tuple[int, list[str]]:
    """``x`` as a whole number in lo..hi (a seed, a rank, a count); the default when it is missing, not a number,
    NaN or infinite; a fraction is rounded and a value outside lo..hi clamped. Never raises for a valid range.

    Returns the value and one note per change (replaced, rounded, clamped), for the page to show.
    """
    if lo > hi:
        raise ValueError(f"empty range {lo}..{hi} for {name}")
    try:
        value = float(x)
    except (TypeError, ValueError):
        value = math.nan
    if not math.isfinite(value):
        return default, [f"{name} must be a number; using {default}."]
    notes = []
    n = round(value)
    if n != value:
        notes.append(f"{name} = {value:g} is not a whole number; rounded to {n}.")
    if not lo <= n <= hi:
        clamped = min(max(n, lo), hi)
        notes.append(f"{name} = {n} must lie between {lo} and {hi}; using {clamped}.")
        n = clamped
    return int(n), notes


def clamp_field(
    x: Any, f: Field, lo: int | None = None, hi: int | None = None, name: str | None = None
) -> tuple[int, list[str]]:
    """A whole-number field's value clamped into its own range and, where a page needs it (a cross-field limit),
    into ``lo..hi`` as well; the field's default (moved into that range) when it is not a number. ``name``: what
    the notes call it (the field's name by default). See :func:`clamp_whole_number`."""
    lo_i = int(f.lo) if lo is None else max(int(f.lo), lo)
    hi_i = int(f.hi) if hi is None else min(int(f.hi), hi)
    return clamp_whole_number(x, name or f.name, lo_i, hi_i, min(max(int(f.default), lo_i), hi_i))


# ----------------------------------------------------------------------------------------------------------------
# Lists of numbers (the KL leash page's answers)


def format_values(values: Sequence[float]) -> str:
    """Numbers as the page's text fields show them: "0.5, 0.5" (6 significant digits, no trailing zeros)."""
    return ", ".join(f"{v:.6g}" for v in values)


def _parse_number(item: str) -> float:
    try:
        return float(item)
    except ValueError:
        pass
    try:
        return float(Fraction(item))  # "1/3"
    except OverflowError:
        return math.inf  # refused below, with the other infinities
    except (ValueError, ZeroDivisionError):
        raise ValueError(f"'{item}' is not a number") from None


def _items(text: str) -> list[str]:
    """The entries of a typed list: separated by commas, semicolons or spaces."""
    return [s for s in re.split(r"[,;\s]+", str(text).strip()) if s]


def parse_values(text: str, *, probabilities: bool = False) -> tuple[float, ...]:
    """Numbers from a text field: "0.5, 0.5", "1 0 -2" or "1/3; 2/3" (commas, semicolons or spaces).

    Raises ValueError with a short reason for an empty field, a word, NaN or infinity, rewards beyond
    ±REWARD_LIMIT, and (probabilities=True) negative or all-zero values.
    """
    items = _items(text)
    if not items:
        raise ValueError("the field is empty")
    values = tuple(_parse_number(s) for s in items)
    if not all(math.isfinite(v) for v in values):
        raise ValueError("NaN and infinity are not allowed")
    if probabilities:
        if any(v < 0 for v in values):
            raise ValueError("probabilities cannot be negative")
        if not any(v > 0 for v in values):
            raise ValueError("all values are zero; at least one answer needs a positive probability")
        if not math.isfinite(sum(values)):  # (fsum would raise OverflowError)
            raise ValueError("the values are too large to add up")
    elif any(abs(v) > REWARD_LIMIT for v in values):
        raise ValueError(f"rewards must lie within ±{REWARD_LIMIT:.0e}")
    return values


def read_answers(
    K: int, pi_ref: str, r: str, r_true: str, names: str, fallback: Answers | None = None
) -> tuple[Answers, list[str]]:
    """The answers from the page's four text fields, and a message for each field that had to be replaced.

    K: the number of answers (K_MIN..K_MAX); every list must have K values. r_true blank: the true reward is the
    proxy r (no reward hacking). names blank: y1, y2, ... A field that cannot be read keeps the
    ``fallback``'s value (the last valid input) when that has K values, else a neutral default (uniform pi_ref,
    zero rewards). pi_ref is returned as typed; :func:`normalize_reference` rescales it.
    """
    if not K_MIN <= K <= K_MAX:
        raise ValueError(f"K must be between {K_MIN} and {K_MAX}, got {K}")
    backup = fallback if fallback is not None and fallback.K == K else Answers.default(K)
    problems: list[str] = []

    def field(text: str, label: str, keep: tuple[float, ...], probabilities: bool = False) -> tuple[float, ...]:
        try:
            values = parse_values(text, probabilities=probabilities)
            if len(values) != K:
                raise ValueError(f"{len(values)} values for K = {K} answers")
            return values
        except ValueError as err:
            problems.append(f"{label} `{text}`: {err}. Using {format_values(keep)} instead.")
            return keep

    p = field(pi_ref, "Reference probabilities π_ref", backup.pi_ref, probabilities=True)
    r_vals = field(r, "Rewards r", backup.r)
    if str(r_true).strip():
        r_true_vals = field(r_true, "True rewards", backup.r_true if backup.proxy_gap else r_vals)
    else:
        r_true_vals = r_vals
    labels = tuple(s.strip() for s in str(names).split(",")) if str(names).strip() else default_names(K)
    if len(labels) != K or not all(labels):
        problems.append(f"Answer names `{names}`: need {K} names separated by commas. Numbering them instead.")
        labels = default_names(K)
    return Answers(p, r_vals, r_true_vals, labels), problems


def resize_texts(texts: dict[str, str], K: int, last: Answers) -> dict[str, str]:
    """The text fields after K changed: a field that already reads as K values stays as typed; the others are
    ``last`` (the answers in use) cut or padded to K (see :meth:`Answers.resized`).

    texts: field -> text, with the keys of :func:`answer_texts` (pi_ref, r, r_true, names).
    """
    padded = answer_texts(last.resized(K))
    out = {}
    for key, text in texts.items():
        _, problems = read_answers(K, **(padded | {key: text}))  # this field as typed, the others padded
        out[key] = padded[key] if problems else text
    return out


def answer_texts(answers: Answers) -> dict[str, str]:
    """The text fields that give ``answers`` back through :func:`read_answers` (blank = the default)."""
    return {
        "pi_ref": format_values(answers.pi_ref),
        "r": format_values(answers.r),
        "r_true": format_values(answers.r_true) if answers.proxy_gap else "",
        "names": "" if answers.names == default_names(answers.K) else ", ".join(answers.names),
    }


def read_numbers(text: str, name: str) -> tuple[list[float] | None, str | None]:
    """A typed list of numbers (commas, semicolons or spaces, as :func:`parse_values` reads them; the PPO page's GAE
    rewards and values) -> (the numbers, None), or (None, a message naming the field ``name``). An empty field is
    an empty list. Never raises for text."""
    values = []
    for item in _items(text):
        try:
            values.append(_parse_number(item))
        except ValueError:
            return None, f"{name}: `{item[:20]}` is not a number."
    if not all(math.isfinite(v) for v in values):
        return None, f"{name}: every entry must be a finite number."
    return values, None


# ----------------------------------------------------------------------------------------------------------------
# Reward lists (the GRPO page)


_SPLIT = re.compile(r"[\s,;]+")


def parse_rewards(text: str, G_min: int = G_MIN, G_max: int = G_MAX) -> np.ndarray:
    """Rewards typed as text ("1, 0, 0, 1" or "0.7 0.2 0.9"; commas, semicolons or spaces) as a float64 array.

    Raises ValueError with a message fit to show the user: a token that is not a number (its position and text),
    NaN or infinity, or a count outside G_min..G_max.
    """
    if not isinstance(text, str):
        raise ValueError(f"rewards must be given as text; got {type(text).__name__}")
    tokens = [t for t in _SPLIT.split(text.strip()) if t]
    if not tokens:
        raise ValueError(f"type between {G_min} and {G_max} rewards, separated by commas or spaces")
    values = []
    for i, tok in enumerate(tokens, start=1):
        try:
            v = float(tok)
        except ValueError:
            raise ValueError(f"reward {i} ({tok[:20]!r}) is not a number") from None
        if not math.isfinite(v):
            raise ValueError(f"reward {i} ({tok[:20]!r}) must be a finite number, not NaN or infinity")
        values.append(v)
    if not G_min <= len(values) <= G_max:
        raise ValueError(f"a group has between {G_min} and {G_max} answers; got {len(values)} rewards")
    return np.array(values, dtype=np.float64)


def format_rewards(rewards: Any) -> str:
    """One group's rewards as compact text for a text box or URL: "1,0,0,1"; non-integers with up to 6 digits."""
    r = np.asarray(rewards.detach().cpu() if hasattr(rewards, "detach") else rewards, dtype=np.float64)
    if not np.all(np.isfinite(r)):
        raise ValueError("rewards must be finite numbers (no NaN or infinity)")
    if r.ndim != 1:
        raise ValueError(f"format_rewards takes one group (1 axis); got shape {r.shape}")
    return ",".join(str(int(v)) if v == int(v) and abs(v) < 1e15 else f"{v:.6g}" for v in r)


def flip_in_text(text: str, i: int, default: str) -> str:
    """The click on answer ``i``: the reward list ``text`` (or ``default`` if it does not parse) with r_i -> 1 - r_i.

    Returns the new list as text (:func:`format_rewards`), ready to put back in the text box and the URL.
    """
    try:
        r = parse_rewards(text)
    except ValueError:
        r = parse_rewards(default)
    return format_rewards(flip_reward(r, i))


# ----------------------------------------------------------------------------------------------------------------
# Uploads (the LoRA page's matrix)


def load_matrix(data: bytes | str, filename: str) -> np.ndarray:
    """Parse an uploaded ``.npy`` (bytes) or ``.csv`` / ``.txt`` (text or UTF-8 bytes) into a checked matrix.

    CSV: one matrix row per line, values separated by commas (or by whitespace when there is no comma); lines
    starting with ``#`` are skipped. Every failure is a ValueError whose message can be shown to the user as is.
    """
    from core.lora import MAX_SIDE, validate_matrix  # torch: imported when a matrix is uploaded, not with the page

    name = filename.lower()
    if name.endswith(".npy"):
        if isinstance(data, str):
            raise ValueError("a .npy upload must be binary data")
        try:
            a = np.load(io.BytesIO(data), allow_pickle=False)
        except ValueError as err:  # pickled object arrays, bad header
            raise ValueError(f"not a readable .npy file of numbers: {err}") from None
        except (OSError, EOFError) as err:
            raise ValueError(f"not a readable .npy file: {err}") from None
        if not isinstance(a, np.ndarray):
            raise ValueError("the .npy file does not hold a single array")
        return validate_matrix(a)
    if name.endswith((".csv", ".txt")):
        if isinstance(data, bytes):
            try:
                data = data.decode("utf-8-sig")
            except UnicodeDecodeError:
                raise ValueError("the CSV file is not UTF-8 text") from None
        lines = [ln for ln in data.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if not lines:
            raise ValueError("the CSV file is empty")
        delimiter = "," if "," in lines[0] else None
        if len(lines) > MAX_SIDE:
            raise ValueError(f"the matrix must be at most {MAX_SIDE} x {MAX_SIDE}, got {len(lines)} rows")
        try:
            a = np.loadtxt(lines, delimiter=delimiter, dtype=np.float64, ndmin=2)
        except ValueError as err:
            raise ValueError(f"the CSV file is not a rectangular table of numbers: {err}") from None
        return validate_matrix(a)
    raise ValueError(f"unsupported file type {filename!r}: upload a .npy or .csv file")


# ----------------------------------------------------------------------------------------------------------------
# The attention page's toy layer and KV-cache calculator

# Most of each KV-calculator input (the page's fields end here; larger values are clamped with a note).
KV_LIMITS: dict[str, int] = {
    "layers": 1_000,
    "query_heads": 1_024,
    "kv_heads": 1_024,
    "head_dim": 4_096,
    "tokens": 100_000_000,
    "batch": 100_000,
}


def kv_calculator_inputs(
    layers: Any,
    query_heads: Any,
    kv_heads: Any,
    head_dim: Any,
    bytes_per_value: Any = 2,
    tokens: Any = 1,
    batch: Any = 1,
) -> tuple[dict[str, int], float, tuple[str, ...]]:
    """The KV calculator's inputs made valid for :func:`core.kv_cache.kv_cache_comparison`, with a note for every
    change or oddity (never raises): each count rounded to a whole number and clamped to 1..KV_LIMITS (a value that
    is not a finite number becomes 1), KV heads above the query heads become the query heads, KV heads that do not
    divide them are kept but noted (GQA needs equal groups), and a bytes per value that is not positive becomes 2.

    Returns the counts (keyed as KV_LIMITS), the bytes per value and the notes.
    """
    asked = {"layers": layers, "query_heads": query_heads, "kv_heads": kv_heads, "head_dim": head_dim}
    asked |= {"tokens": tokens, "batch": batch}
    ok, notes = {}, []
    for name, value in asked.items():
        v = float(value) if isinstance(value, int | float | np.number) and math.isfinite(value) else 1.0
        ok[name] = int(min(max(round(v), 1), KV_LIMITS[name]))
        if ok[name] != value:
            notes.append(f"{name.replace('_', ' ')}: using {ok[name]:,} (whole numbers from 1 to {KV_LIMITS[name]:,}).")
    if ok["kv_heads"] > ok["query_heads"]:
        notes.append(f"A model has at most one KV head per query head: using {ok['query_heads']} KV heads.")
        ok["kv_heads"] = ok["query_heads"]
    if ok["query_heads"] % ok["kv_heads"]:
        notes.append(
            f"{ok['kv_heads']} KV heads do not split {ok['query_heads']} query heads into equal groups; "
            "the size below still counts them, but a GQA model would not be built this way."
        )
    b = float(bytes_per_value)
    if not math.isfinite(b) or b <= 0:
        notes.append(f"bytes per value {bytes_per_value!r} is not a positive number: using 2 (bf16).")
        b = 2.0
    return ok, b, tuple(notes)


def toy_settings(
    d_model: int, heads: int, d_k: int | None = None, kv_heads: int | None = None, seed: int = 0
) -> tuple[ToyModelSettings, tuple[str, ...]]:
    """The valid :class:`core.toy_attention.ToyModelSettings` closest to what was asked, with a note for every
    change or oddity (never raises for whole numbers): d_k defaults to d_model // heads; KV heads that do not divide
    the heads become the nearest divisor.
    """
    # torch: imported with the attention page, not with every page that reads its inputs here
    from core.toy_attention import MAX_D_MODEL, MAX_HEADS, ToyModelSettings

    notes = []
    d_model_ok = int(min(max(d_model, 1), MAX_D_MODEL))
    heads_ok = int(min(max(heads, 1), MAX_HEADS, d_model_ok))
    if (d_model_ok, heads_ok) != (d_model, heads):
        notes.append(f"Using d_model = {d_model_ok} and {heads_ok} heads (limits: 1-{MAX_D_MODEL}, 1-{MAX_HEADS}).")
    if d_k is None:
        d_k_ok = d_model_ok // heads_ok
        if d_model_ok % heads_ok:
            notes.append(
                f"d_model = {d_model_ok} is not a multiple of {heads_ok} heads: each head gets d_k = {d_k_ok}, "
                f"so the heads cover {heads_ok * d_k_ok} of the {d_model_ok} dimensions."
            )
    else:
        d_k_ok = int(min(max(d_k, 1), MAX_D_MODEL))
        if d_k_ok != d_k:
            notes.append(f"Using d_k = {d_k_ok}.")
        if heads_ok * d_k_ok != d_model_ok:
            notes.append(
                f"heads x d_k = {heads_ok * d_k_ok} differs from d_model = {d_model_ok}: real layers choose "
                "d_k = d_model / heads, so the output projection maps the heads back to d_model."
            )
    kv_ok = None
    if kv_heads is not None and kv_heads != heads_ok:
        divisors = [n for n in range(1, heads_ok + 1) if heads_ok % n == 0]
        kv_ok = min(divisors, key=lambda n: (abs(n - kv_heads), n))
        if kv_ok != kv_heads:
            notes.append(f"{kv_heads} KV heads do not divide {heads_ok} heads: using {kv_ok}.")
        kv_ok = None if kv_ok == heads_ok else kv_ok
    return ToyModelSettings(d_model_ok, heads_ok, d_k_ok, kv_ok, max(int(seed), 0)), tuple(notes)


# ----------------------------------------------------------------------------------------------------------------
# Typed text (the attention page)


def typed_tokens(text: str, mode: str = "word", fallback: str | None = None) -> Tokens:
    """The tokens of a typed text (:func:`core.tokenizer.tokenize`); text with no tokens gives the ``fallback``
    text's tokens with a note (when given), else no tokens."""
    tokens = tokenize(text, mode)
    if tokens.total or not fallback:
        return tokens
    inner = tokenize(fallback, mode)
    return Tokens(inner.tokens, inner.total, mode, "No text to split: showing the example sentence.")
