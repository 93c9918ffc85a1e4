"""Decoding: the next-token distribution after temperature, top-k, top-p and min-p, and what it does to text.

A language model gives logits z (one per vocabulary token) for the next token. Sampling draws from a distribution
made from them:

    temperature T:  p = softmax(z / T)         T -> 0 is argmax (greedy), T -> infinity is uniform; the order of
                                               the tokens never changes. T = 0 is its own branch (no division).
    top-k:          keep the k largest logits  (ties with the k-th are kept, as ``logits < kth`` masks only smaller)
    top-p:          keep the shortest prefix of the sorted tokens whose mass reaches the threshold p_top. A token
                    is dropped when the mass *before* it already reaches p_top:  cum - p_i >= p_top.  So the token
                    that crosses p_top is kept.
    min-p:          keep tokens with p_i >= min_p · max_j p_j  (Nguyen et al. 2024, "Turning up the heat: min-p
                    sampling for creative and coherent LLM outputs").

The kept logits are renormalised by a softmax. The order is each library's convention: Hugging Face transformers and
vLLM temper first, then truncate (so does seed 002, A8.7, and the default here); llama.cpp's default chain tempers
last. ``order="filters_first"`` truncates the T = 1 distribution and applies the temperature afterwards, which
can keep a different set of tokens when T != 1 with top-p or min-p (the page shows the difference); top-k alone
keeps the same tokens and gives the same distribution in either order, since temperature keeps the ranking.

Everything is vectorised over rows: logits of shape (V,) or (B, V) give probabilities of that shape.
:func:`sample_filter` works in torch, on the device of the logits (array-like input goes to core's device);
:func:`sample_filter_np` is the same filter in numpy (numpy in, numpy out), for the page's small vocabularies, so
that drawing them never imports torch (about 2 s). Both run the same steps below; only the few array operations
that differ between the libraries (softmax, sorting, the k-th largest, the one-hot argmax) have one line per library.
Ties are broken towards the earlier token in both (a stable sort for top-p, the first argmax for greedy).
Also here: entropy and the effective number of choices exp(H) (numpy in gives numpy out, a tensor gives a tensor),
seeded draws, a seeded Markov "model" for repetition loops (torch), a word bigram model trained on the bundled text,
and a preset vocabulary.
"""

from __future__ import annotations

import itertools
import math
import re
import sys
from collections import Counter
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from core.device import loaded_torch

if TYPE_CHECKING:
    import torch

Order = Literal["temperature_first", "filters_first"]
ORDERS: tuple[str, ...] = ("temperature_first", "filters_first")
DATA_DIR = Path(__file__).parent / "data"


# --------------------------------------------------------------------------------------------------------------
# validation


def _check_settings(
    temperature: float, top_k: int | None, top_p: float | None, min_p: float | None, order: str
) -> tuple[float, int | None, float | None, float | None]:
    try:
        T = float(temperature)
    except (TypeError, ValueError):
        raise ValueError(f"temperature must be a number, got {temperature!r}") from None
    if not math.isfinite(T) or T < 0:
        raise ValueError(f"temperature must be a finite number >= 0 (0 means greedy), got {temperature!r}")
    if top_k is not None:
        if isinstance(top_k, bool) or not float(top_k).is_integer() or top_k < 1:
            raise ValueError(f"top_k must be a whole number >= 1 (or None for no top-k), got {top_k!r}")
        top_k = int(top_k)
    if top_p is not None:
        p = float(top_p)
        if not (0.0 < p <= 1.0):
            raise ValueError(f"top_p must lie in (0, 1] (1 keeps everything), got {top_p!r}")
        top_p = p
    if min_p is not None:
        m = float(min_p)
        if not (0.0 <= m <= 1.0):
            raise ValueError(f"min_p must lie in [0, 1] (0 keeps everything), got {min_p!r}")
        min_p = m
    if order not in ORDERS:
        raise ValueError(f"order must be one of {ORDERS}, got {order!r}")
    return T, top_k, top_p, min_p


def _is_tensor(x: Any) -> bool:
    torch = loaded_torch()  # a tensor cannot exist before torch is imported: numpy callers never import it
    return torch is not None and isinstance(x, torch.Tensor)


def _xp(z: Any) -> Any:
    """The array library of ``z``: torch for a tensor, numpy otherwise."""
    return sys.modules["torch"] if _is_tensor(z) else np


def _check_logits(z: Any) -> Any:
    """Shape (V,) or (B, V) with V >= 1; NaN and +inf rejected, -inf allowed (a banned token); array or tensor."""
    xp = _xp(z)
    if z.ndim not in (1, 2) or z.shape[-1] == 0:
        raise ValueError(f"logits must have shape (V,) or (B, V) with V >= 1, got {tuple(z.shape)}")
    if bool(xp.isnan(z).any()) or bool((z == math.inf).any()):
        raise ValueError("logits must not be NaN or +infinity")
    if not bool(xp.isfinite(z).any(-1).all()):
        raise ValueError("every row of logits needs at least one finite value")
    return z


def _as_logits(logits: Any) -> torch.Tensor:
    """Logits as a floating tensor of shape (V,) or (B, V): NaN and +inf rejected, -inf allowed (a banned token)."""
    import torch

    from core.device import as_tensor, default_dtype

    if isinstance(logits, torch.Tensor):
        z = logits if logits.is_floating_point() else logits.to(default_dtype(logits.device))
    else:
        z = as_tensor(_as_logits_np(logits))
    return _check_logits(z)


def _as_logits_np(logits: Any) -> np.ndarray:
    """Logits as a float64 numpy array of shape (V,) or (B, V), checked as :func:`_as_logits` checks a tensor."""
    try:
        z = np.asarray(logits, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"logits must be numbers, got {logits!r}") from None
    return _check_logits(z)


# --------------------------------------------------------------------------------------------------------------
# the filter


# The array operations that differ between torch and numpy, one line per library; every rule below is written once
# on top of them. z is a (B, V) float tensor or float64 array.


def _row_max(z: Any) -> Any:
    return z.amax(dim=-1, keepdim=True) if _is_tensor(z) else z.max(axis=-1, keepdims=True)  # (B, 1)


def _softmax(z: Any) -> Any:
    if _is_tensor(z):
        return sys.modules["torch"].softmax(z, dim=-1)  # (B, V)
    # p_i = exp(z_i - max z) / sum_j exp(z_j - max z)  (-inf gives exactly 0)
    e = np.exp(z - _row_max(z))  # (B, V)
    return e / e.sum(axis=-1, keepdims=True)


def _log_softmax(z: Any) -> Any:
    if _is_tensor(z):
        return sys.modules["torch"].log_softmax(z, dim=-1)  # (B, V)
    # log p_i = (z_i - max z) - log sum_j exp(z_j - max z)
    s = z - _row_max(z)  # (B, V)
    return s - np.log(np.exp(s).sum(axis=-1, keepdims=True))


def _drop(z: Any, mask: Any) -> Any:
    """z with the masked logits set to -inf (those tokens get probability 0)."""
    return z.masked_fill(mask, -math.inf) if _is_tensor(z) else np.where(mask, -math.inf, z)


def _kth_largest(z: Any, k: int) -> Any:
    if _is_tensor(z):
        return sys.modules["torch"].topk(z, k, dim=-1).values[..., -1:]  # (B, 1)
    V = z.shape[-1]
    return np.partition(z, V - k, axis=-1)[..., V - k : V - k + 1]  # (B, 1)


def _sort_descending(z: Any) -> tuple[Any, Any]:
    """(sorted logits, their vocabulary indices), largest first; ties keep the vocabulary order (stable)."""
    if _is_tensor(z):
        srt, idx = sys.modules["torch"].sort(z, dim=-1, descending=True, stable=True)  # (B, V), (B, V)
        return srt, idx
    idx = np.argsort(-z, axis=-1, kind="stable")  # (B, V)
    return np.take_along_axis(z, idx, axis=-1), idx


def _unsort(srt: Any, idx: Any) -> Any:
    """Sorted values back in vocabulary order: out[idx[j]] = srt[j]."""
    if _is_tensor(srt):
        return sys.modules["torch"].full_like(srt, -math.inf).scatter(-1, idx, srt)  # (B, V)
    out = np.empty_like(srt)  # (B, V)
    np.put_along_axis(out, idx, srt, axis=-1)
    return out


def _one_hot_argmax(z: Any) -> Any:
    """Greedy: all the mass on each row's largest logit, the first one on ties."""
    if _is_tensor(z):
        return sys.modules["torch"].zeros_like(z).scatter_(-1, z.argmax(dim=-1, keepdim=True), 1.0)  # (B, V)
    return (np.arange(z.shape[-1]) == z.argmax(axis=-1)[:, None]).astype(z.dtype)  # (B, V)


def _top_k(z: Any, k: int) -> Any:
    kth = _kth_largest(z, min(k, z.shape[-1]))  # (B, 1) the k-th largest logit
    return _drop(z, z < kth)  # (B, V) ties with the k-th survive


def _top_p(z: Any, p_top: float) -> Any:
    srt, idx = _sort_descending(z)  # (B, V)
    probs = _softmax(srt)  # (B, V)
    cum = _xp(z).cumsum(probs, -1)  # (B, V)
    # drop a token when the mass before it already reaches p_top: cum_i - p_i >= p_top (the crossing token stays)
    drop = cum - probs >= p_top  # (B, V)
    drop[..., 0] = False  # the top token always stays (guards p_top smaller than rounding of its own mass)
    return _unsort(_drop(srt, drop), idx)  # (B, V) back in vocabulary order


def _min_p(z: Any, m: float) -> Any:
    logp = _log_softmax(z)  # (B, V)
    # keep p_i >= min_p · p_max, i.e. log p_i >= log min_p + log p_max
    thresh = math.log(m) + _row_max(logp) if m > 0 else -math.inf  # (B, 1)
    return _drop(z, logp < thresh)


def _truncate(z: Any, top_k: int | None, top_p: float | None, min_p: float | None) -> Any:
    if top_k is not None:
        z = _top_k(z, top_k)
    if top_p is not None and top_p < 1.0:
        z = _top_p(z, top_p)
    if min_p is not None and min_p > 0.0:
        z = _min_p(z, min_p)
    return z


def _filtered(z: Any, T: float, top_k: int | None, top_p: float | None, min_p: float | None, order: str) -> Any:
    """The filter on checked (B, V) logits (tensor or array) and checked settings: (B, V) probabilities."""
    if T == 0.0:
        return _one_hot_argmax(z)  # greedy: argmax, its own branch (no division by zero)
    if order == "temperature_first":
        return _softmax(_truncate(z / T, top_k, top_p, min_p))  # (B, V)
    kept = _truncate(z, top_k, top_p, min_p)  # (B, V) truncated at T = 1
    return _softmax(kept / T)  # (B, V)


def sample_filter(
    logits: Any,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    order: Order = "temperature_first",
) -> torch.Tensor:
    """The distribution a sampler draws the next token from, after temperature, top-k, top-p and min-p.

    logits: (V,) or (B, V), a tensor (its device is kept) or array-like (sent to core's device); -inf marks a
    banned token. temperature = 0 is greedy: a one-hot row at the argmax (the first one on ties). None (or
    top_p = 1, min_p = 0) switches a truncation off. order: "temperature_first" (divide by T, then top-k -> top-p ->
    min-p on the tempered distribution: Hugging Face's order; vLLM also tempers first, but its V1 sampler applies
    min-p before top-k and top-p) or "filters_first" (truncate
    softmax(z), then temper the kept logits; llama.cpp's default chain tempers last). Returns probabilities of the
    logits' shape; dropped tokens are exactly 0. Raises ValueError for T < 0, top_k < 1, top_p outside (0, 1],
    min_p outside [0, 1], NaN or empty logits. :func:`sample_filter_np` is the same in numpy, without torch.
    """
    return _sample_filter(_as_logits(logits), temperature, top_k, top_p, min_p, order)


def sample_filter_np(
    logits: Any,
    temperature: float = 1.0,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    order: Order = "temperature_first",
) -> np.ndarray:
    """:func:`sample_filter` in numpy: array-like logits (V,) or (B, V) in, float64 probabilities out; no torch.

    The same steps, settings, checks and errors (ties go to the earlier token in both); for the page's vocabularies
    of a few dozen tokens, where importing torch would cost more than the whole computation.
    """
    return _sample_filter(_as_logits_np(logits), temperature, top_k, top_p, min_p, order)


def _sample_filter(z: Any, temperature: Any, top_k: Any, top_p: Any, min_p: Any, order: Any) -> Any:
    """Both public filters once the logits are a checked (V,) or (B, V) tensor or array: check the settings, filter
    row-wise, and return the logits' shape."""
    T, top_k, top_p, min_p = _check_settings(temperature, top_k, top_p, min_p, order)
    squeeze = z.ndim == 1
    out = _filtered(z[None, :] if squeeze else z, T, top_k, top_p, min_p, order)  # (B, V)
    return out[0] if squeeze else out


def kept_count(probs: Any) -> Any:
    """How many tokens have non-zero probability (per row); numpy in gives numpy out, a tensor gives a tensor."""
    p = probs if _is_tensor(probs) else np.asarray(probs)
    return (p > 0).sum(-1)


def entropy_nats(probs: Any) -> Any:
    """H(p) = -sum_i p_i ln p_i in nats along the last axis (0 ln 0 = 0); numpy in, numpy out; tensor in, tensor out."""
    p = probs if _is_tensor(probs) else np.asarray(probs, dtype=np.float64)
    xp = _xp(p)
    # H = -sum p log p, with the p = 0 terms counted as 0
    plogp = xp.where(p > 0, p * xp.log(xp.where(p > 0, p, 1.0)), 0.0)  # (..., V)
    H = -plogp.sum(-1)  # (...)
    return H.clamp_min(0.0) if _is_tensor(H) else np.maximum(H, 0.0)


def effective_choices(probs: Any) -> Any:
    """exp(H): the number of equally likely tokens with the same entropy (1 for greedy, V for uniform)."""
    H = entropy_nats(probs)
    return _xp(H).exp(H)


def draw(probs: Any, n: int, seed: int = 0) -> torch.Tensor:
    """n seeded draws of token ids from one distribution (V,) with torch.multinomial (with replacement)."""
    import torch

    p = probs if isinstance(probs, torch.Tensor) else torch.as_tensor(np.asarray(probs, dtype=np.float64))
    if p.ndim != 1:
        raise ValueError("draw takes one distribution of shape (V,)")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    g = torch.Generator(device=p.device).manual_seed(int(seed))
    return torch.multinomial(p, int(n), replacement=True, generator=g)


# --------------------------------------------------------------------------------------------------------------
# a seeded Markov "model": repetition loops under greedy decoding


@dataclass(frozen=True)
class Generation:
    """A generated token sequence and where it starts repeating (a cycle), if it does."""

    tokens: tuple[int, ...]
    loop_start: int | None  # first index of the repeating part, None if no cycle of the tail was found
    loop_period: int | None
    distinct: int  # number of distinct tokens


def markov_logits(V: int = 12, seed: int = 0, sharpness: float = 2.0) -> torch.Tensor:
    """(V, V) next-token logits of a seeded first-order Markov chain: row a = logits of the token after a.

    sharpness scales standard normal logits (larger = more confident, like a trained model's peaked rows).
    """
    import torch

    from core.device import default_dtype, get_device

    if V < 2:
        raise ValueError(f"V must be >= 2, got {V}")
    g = torch.Generator().manual_seed(int(seed))
    W = torch.randn(V, V, generator=g, dtype=torch.float64) * float(sharpness)  # (V, V) on the CPU: same on all
    dev = get_device()
    return W.to(device=dev, dtype=default_dtype(dev))


def find_loop(tokens: tuple[int, ...] | list[int], min_repeats: int = 2) -> tuple[int | None, int | None]:
    """(start, period) of the shortest cycle that repeats to the end of the sequence at least min_repeats times."""
    t = list(tokens)
    n = len(t)
    for period in range(1, n // min_repeats + 1):
        # the tail repeats with this period from some start on
        start = n - period
        while start - 1 >= 0 and t[start - 1] == t[start - 1 + period]:
            start -= 1
        if n - start >= min_repeats * period:
            return start, period
    return None, None


def generate_markov(
    W: torch.Tensor,
    start: int,
    n: int,
    temperature: float = 0.0,
    top_k: int | None = None,
    top_p: float | None = None,
    min_p: float | None = None,
    seed: int = 0,
) -> Generation:
    """n tokens from the Markov chain W (V, V) starting at token ``start``, with the given sampler (seeded)."""
    import torch

    V = W.shape[-1]
    if not 0 <= start < V:
        raise ValueError(f"start must be a token id in [0, {V}), got {start}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    P = sample_filter(W, temperature, top_k, top_p, min_p)  # (V, V): the filtered next-token rows
    g = torch.Generator(device=P.device).manual_seed(int(seed))
    out, tok = [start], start
    for _ in range(n):
        tok = int(torch.multinomial(P[tok], 1, generator=g))
        out.append(tok)
    s, per = find_loop(out)
    return Generation(tuple(out), s, per, len(set(out)))


# --------------------------------------------------------------------------------------------------------------
# a word bigram model trained on the bundled text, and a preset vocabulary


WORD_RE = re.compile(r"[A-Za-zé']+|[.,:;]")


@cache
def bundled_text(name: str = "lesson_text.txt") -> str:
    """The bundled public-domain text (written for this project) used to train the small models."""
    return (DATA_DIR / name).read_text(encoding="utf-8")


@dataclass(frozen=True)
class BigramModel:
    """A word bigram model with add-k smoothing: vocab (V words) and log-probabilities (V, V) as numpy."""

    vocab: tuple[str, ...]
    log_probs: np.ndarray  # (V, V): row a = log p(next word | a)

    def next_logits(self, word: str) -> np.ndarray:
        """The next-word logits (log-probabilities) after ``word`` (lower case); ValueError for an unknown word."""
        w = word.lower()
        if w not in self.vocab:
            raise ValueError(f"{word!r} is not in the model's vocabulary")
        return self.log_probs[self.vocab.index(w)]


@cache
def word_bigram_model(k: float = 0.05) -> BigramModel:
    """Train the word bigram model on the bundled text (a few ms): p(b | a) = (c(a, b) + k) / (c(a) + k V)."""
    words = [w.lower() for w in WORD_RE.findall(bundled_text())]
    vocab = tuple(sorted(set(words)))
    ix = {w: i for i, w in enumerate(vocab)}
    V = len(vocab)
    C = np.zeros((V, V))
    pairs = Counter(itertools.pairwise(words))
    for (a, b), c in pairs.items():
        C[ix[a], ix[b]] = c
    # p(b | a) = (c(a, b) + k) / (c(a) + k V)
    P = (C + k) / (C.sum(axis=1, keepdims=True) + k * V)
    return BigramModel(vocab, np.log(P))


@dataclass(frozen=True)
class VocabPreset:
    """A preset next-token distribution: a context, candidate tokens and their (editable) logits."""

    key: str
    label: str
    context: str
    tokens: tuple[str, ...]
    logits: tuple[float, ...]


# The continuation of "The keeper climbed the stairs and wiped the": invented logits with a confident head and a
# long tail, so that top-p and min-p keep visibly different sets.
_PRESET_TOKENS = (
    "lens", "glass", "lamp", "window", "light", "table", "floor", "cloth", "book", "map",
    "salt", "door", "rail", "dust", "steps", "bread", "sea", "notebook", "stove", "boots",
    "wind", "clock", "sky", "gulls", "fog", "reef", "tide", "cake", "tea", "whale",
)  # fmt: skip
_PRESET_LOGITS = (
    4.0, 3.6, 3.1, 2.4, 2.0, 1.2, 1.0, 0.9, 0.6, 0.4,
    0.3, 0.2, 0.1, 0.0, -0.2, -0.4, -0.5, -0.6, -0.8, -1.0,
    -1.1, -1.3, -1.5, -1.6, -1.8, -2.0, -2.2, -2.5, -2.8, -3.0,
)  # fmt: skip

VOCAB_PRESETS: dict[str, VocabPreset] = {
    "keeper": VocabPreset(
        "keeper", "“…climbed the stairs and wiped the”", "The keeper climbed the stairs and wiped the",
        _PRESET_TOKENS, _PRESET_LOGITS,
    ),
    "flat": VocabPreset(
        "flat", "An unsure model (flat logits)", "Once upon a", _PRESET_TOKENS,
        tuple(round(0.1 * x, 3) for x in _PRESET_LOGITS),
    ),
}  # fmt: skip
