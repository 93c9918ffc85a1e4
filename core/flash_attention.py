"""FlashAttention's tiled forward pass, stepped block by block, and the HBM traffic and saved-activation counts
that make it fast: the core of the "FlashAttention and the memory hierarchy" page.

Source: Dao, Fu, Ermon, Rudra, Ré, "FlashAttention: Fast and Memory-Efficient Exact Attention with IO-Awareness",
NeurIPS 2022 (arXiv 2205.14135): Algorithm 0 (standard attention), Algorithm 1 (the tiled forward), Theorem 2 (its
IO complexity), section 3.1 (recomputation in the backward). The streaming softmax it rests on is older: Milakov &
Gimelshein 2018, "Online normalizer calculation for softmax" (arXiv 1805.02867).

The online softmax. A row's softmax needs its maximum and its normaliser over *all* keys, but the keys arrive one
block at a time. Keep a running max m and a running sum l = sum_j e^(S_j - m); when a block of logits S~ arrives
(Algorithm 1 lines 10-12, with its block statistics m~ = rowmax(S~), P~ = e^(S~ - m~), l~ = rowsum(P~))::

    m_new = max(m, m~)
    l_new = e^(m - m_new) l + e^(m~ - m_new) l~
    O_new = diag(l_new)^-1 ( diag(l) e^(m - m_new) O + e^(m~ - m_new) P~ V_j )

e^(m - m_new) <= 1 is the rescale of everything accumulated so far: a larger max found later shrinks the earlier
terms, so every exponent stays <= 0 (no overflow) and the result is the exact softmax, not an approximation.
Algorithm 1 keeps O normalised in HBM after every block (the diag(l_new)^-1); FlashAttention-2 (Dao 2023, arXiv
2307.08691) swaps the two loops (query blocks outside) and divides by l once at the end. This module follows
Algorithm 1 as written: the outer loop runs over key/value blocks j, the inner one over query blocks i.

Conventions here, not all of them the paper's:

* ``scale`` multiplies the logits, S = scale · Q K^T (1/sqrt(d) by default, like torch's
  ``scaled_dot_product_attention``); Algorithm 1 has no scale, the paper's Algorithm 2 writes it tau.
* causal means bottom-right aligned (key j visible to query i when j <= i + T_k - T_q), as in :mod:`core.attention`
  and the flash-attn code release from version 2.1; it needs T_q <= T_k. torch's ``is_causal=True`` is top-left
  aligned instead; the two agree when T_q = T_k.
* Under the causal mask a block whose keys all lie after all its queries is skipped (nothing loaded, nothing
  computed). Algorithm 1 has no mask; the paper skips all-zero blocks in block-sparse FlashAttention (its
  Algorithm 5), and the released kernels skip causal blocks the same way.

numpy only (float32 stays float32, float64 stays float64, integers become float64): a page's first figure needs no
torch, and the toy sizes a page steps through need no GPU. Torch tensors are not followed; convert them first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

Method = Literal["standard", "flash"]
METHODS: tuple[str, ...] = ("standard", "flash")


# ---------------------------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------------------------


def _check_whole(name: str, value: Any, least: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < least:
        raise ValueError(f"{name} must be a whole number >= {least}, got {value!r}")
    return int(value)


def _whole_array(name: str, value: ArrayLike) -> NDArray[np.int64]:
    """A whole number >= 1, or an array of them, as int64 (a page may sweep the sequence length)."""
    a = np.asarray(value)
    if a.dtype == bool or not np.issubdtype(a.dtype, np.integer) or a.size == 0 or np.any(a < 1):
        raise ValueError(f"{name} must be whole numbers >= 1, got {value!r}")
    return a.astype(np.int64)


def _out(a: NDArray[np.int64]) -> int | NDArray[np.int64]:
    return int(a) if a.ndim == 0 else a


def _check_method(method: str) -> None:
    if method not in METHODS:
        raise ValueError(f"method {method!r}: expected one of {', '.join(METHODS)}")


def _scale_value(scale: float | None, d: int) -> float:
    if scale is None:
        return 1.0 / math.sqrt(d)
    if isinstance(scale, bool) or not isinstance(scale, int | float | np.floating) or not math.isfinite(scale):
        raise ValueError(f"scale must be a finite number, got {scale!r}")
    if scale < 0:
        raise ValueError(f"scale must be >= 0, got {scale!r}")
    return float(scale)


def _inputs(q: ArrayLike, k: ArrayLike, v: ArrayLike) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """q, k, v as (..., T, d) arrays of one floating dtype (float16 -> float32, integers -> float64), checked."""
    arrays = [np.asarray(x) for x in (q, k, v)]
    for name, a in zip("qkv", arrays, strict=True):
        if a.ndim < 2:
            raise ValueError(f"{name} must have shape (..., tokens, d); got {a.shape}")
        if not (np.issubdtype(a.dtype, np.number) and not np.issubdtype(a.dtype, np.complexfloating)):
            raise ValueError(f"{name} must hold real numbers, got dtype {a.dtype}")
    q, k, v = arrays
    if not (q.shape[:-2] == k.shape[:-2] == v.shape[:-2]):
        raise ValueError(f"q, k, v need the same leading (batch, head) shape, got {q.shape}, {k.shape}, {v.shape}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k need the same last dimension d, got {q.shape[-1]} and {k.shape[-1]}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v need the same number of tokens, got {k.shape[-2]} and {v.shape[-2]}")
    if min(q.shape[-2], k.shape[-2], q.shape[-1], v.shape[-1]) < 1:
        raise ValueError(f"need at least one token and d >= 1, got shapes {q.shape}, {k.shape}, {v.shape}")
    dtype = np.result_type(q.dtype, k.dtype, v.dtype, np.float32)
    q, k, v = (a.astype(dtype, copy=False) for a in (q, k, v))
    if not all(np.isfinite(a).all() for a in (q, k, v)):
        raise ValueError("q, k and v must be finite (no NaN or inf)")
    return q, k, v


# ---------------------------------------------------------------------------------------------------------------
# The tiled forward (Algorithm 1), with a trace of every block
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BlockStep:
    """One (query block i, key block j) step of the tiled forward, after it ran.

    ``m`` and ``l`` are the running row max and row sum of the block's query rows after the step, shape
    (..., rows); ``rescale`` = e^(m_old - m_new) is the factor the earlier partial output and sum were multiplied by
    (0 on a row's first block, where there was nothing yet; 1 where the max did not move and on skipped blocks).
    """

    q_block: int  # i, 0-based
    k_block: int  # j, 0-based
    rows: tuple[int, int]  # query rows [start, stop) of block i
    cols: tuple[int, int]  # key columns [start, stop) of block j
    skipped: bool  # True when the causal mask hides the whole block (nothing loaded or computed)
    m: np.ndarray  # (..., rows) running max after the step
    l: np.ndarray  # (..., rows) running sum of e^(S - m) after the step  # noqa: E741
    rescale: np.ndarray  # (..., rows) e^(m_old - m_new) applied to the old O and l


@dataclass(frozen=True)
class FlashForward:
    """The tiled forward's output, its trace, its final row statistics and the HBM elements it moved."""

    output: np.ndarray  # (..., T_q, d_v), equal to softmax(S) V
    trace: tuple[BlockStep, ...]  # in the loop order of Algorithm 1: key blocks outside, query blocks inside
    m: np.ndarray  # (..., T_q) row max of S
    l: np.ndarray  # (..., T_q) row sum of e^(S - m)  # noqa: E741
    hbm_reads: int  # elements loaded HBM -> SRAM (over all leading batch/head entries)
    hbm_writes: int  # elements stored SRAM -> HBM, the initialisation of O, l, m included
    block_q: int  # B_r as given
    block_k: int  # B_c as given

    @property
    def logsumexp(self) -> np.ndarray:
        """m + log l per row, the one statistic the flash-attn code release saves for the backward."""
        return self.m + np.log(self.l)


def flash_attention_forward(
    q: ArrayLike,
    k: ArrayLike,
    v: ArrayLike,
    block_q: int,
    block_k: int,
    causal: bool = False,
    scale: float | None = None,
) -> FlashForward:
    """Attention softmax(scale · Q K^T + M) V by Algorithm 1 of Dao et al. 2022, one (B_r x B_c) tile at a time.

    q: (..., T_q, d), k: (..., T_k, d), v: (..., T_k, d_v); block_q = B_r query rows, block_k = B_c key rows per
    tile (the last tile of each is ragged when the block does not divide T; a block larger than T is one tile).
    Returns the output, the trace of every (i, j) step, the final m and l, and the elements the loop moved between
    "HBM" (the full arrays) and "SRAM" (the tiles), counted as Algorithm 1 does its loads and stores: line 2
    writes O, l, m; line 6 loads K_j, V_j; line 8 loads Q_i, O_i, l_i, m_i; lines 12-13 write O_i, l_i, m_i.
    Skipped causal blocks move nothing. See the module docstring for the causal and scale conventions.
    """
    q, k, v = _inputs(q, k, v)
    B_r, B_c = _check_whole("block_q", block_q), _check_whole("block_k", block_k)
    if not isinstance(causal, bool | np.bool_):
        raise ValueError(f"causal must be True or False, got {causal!r}")
    T_q, d = q.shape[-2:]
    T_k, d_v = v.shape[-2:]
    if causal and T_q > T_k:
        raise ValueError(
            f"causal attention here is bottom-right aligned and needs T_q <= T_k, got {T_q} > {T_k} "
            "(the first queries would see no key)"
        )
    tau = _scale_value(scale, d)
    offset = T_k - T_q  # query i sits at key position i + offset
    lead = q.shape[:-2]
    # line 2: O = 0, l = 0, m = -inf, in HBM
    O = np.zeros((*lead, T_q, d_v), dtype=q.dtype)  # (..., T_q, d_v)  # noqa: E741
    l = np.zeros((*lead, T_q), dtype=q.dtype)  # (..., T_q)  # noqa: E741
    m = np.full((*lead, T_q), -np.inf, dtype=q.dtype)  # (..., T_q)
    writes, reads = O.size + l.size + m.size, 0
    trace: list[BlockStep] = []
    # line 3: T_r = ceil(T_q / B_r) query blocks, T_c = ceil(T_k / B_c) key blocks (the last ones ragged)
    row_ranges = [(r, min(r + B_r, T_q)) for r in range(0, T_q, B_r)]
    for j, c0 in enumerate(range(0, T_k, B_c)):
        c1 = min(c0 + B_c, T_k)
        # line 6: load K_j, V_j
        K_j, V_j = k[..., c0:c1, :], v[..., c0:c1, :]  # (..., B_c, d), (..., B_c, d_v)
        reads += K_j.size + V_j.size
        for i, (r0, r1) in enumerate(row_ranges):
            if causal and c0 > r1 - 1 + offset:  # the block's first key lies after its last query: all masked
                ones = np.ones((*lead, r1 - r0), dtype=q.dtype)
                trace.append(
                    BlockStep(i, j, (r0, r1), (c0, c1), True, m[..., r0:r1].copy(), l[..., r0:r1].copy(), ones)
                )
                continue
            # line 8: load Q_i, O_i, l_i, m_i
            Q_i, O_i, l_i, m_i = q[..., r0:r1, :], O[..., r0:r1, :], l[..., r0:r1], m[..., r0:r1]
            reads += Q_i.size + O_i.size + l_i.size + m_i.size
            # line 9: S_ij = scale · Q_i K_j^T
            S = (Q_i * tau) @ np.swapaxes(K_j, -1, -2)  # (..., B_r, B_c)
            if causal:
                rows, cols = np.arange(r0, r1)[:, None], np.arange(c0, c1)[None, :]
                S = np.where(cols <= rows + offset, S, -np.inf)  # -inf where key j comes after query i
            # line 10: m~ = rowmax(S), P~ = e^(S - m~), l~ = rowsum(P~)  (a fully masked row gets P~ = 0, l~ = 0)
            m_blk = S.max(axis=-1)  # (..., B_r)
            P = np.exp(S - np.where(np.isfinite(m_blk), m_blk, 0)[..., None])  # (..., B_r, B_c)
            l_blk = P.sum(axis=-1)  # (..., B_r)
            # line 11: m_new = max(m, m~), l_new = e^(m - m_new) l + e^(m~ - m_new) l~
            m_new = np.maximum(m_i, m_blk)  # (..., B_r), finite: every row sees key 0 in its first block
            alpha = np.exp(m_i - m_new)  # rescale of the old O and l (e^-inf = 0 on the first block)
            beta = np.exp(m_blk - m_new)  # weight of this block (0 where the mask hid the whole row)
            l_new = alpha * l_i + beta * l_blk
            # line 12: O_i = diag(l_new)^-1 (diag(l) e^(m - m_new) O_i + e^(m~ - m_new) P~ V_j)
            O_new = ((l_i * alpha)[..., None] * O_i + beta[..., None] * (P @ V_j)) / l_new[..., None]
            # lines 12-13: write O_i, l_i, m_i
            O[..., r0:r1, :], l[..., r0:r1], m[..., r0:r1] = O_new, l_new, m_new
            writes += O_new.size + l_new.size + m_new.size
            trace.append(BlockStep(i, j, (r0, r1), (c0, c1), False, m_new.copy(), l_new.copy(), alpha))
    return FlashForward(O, tuple(trace), m, l, int(reads), int(writes), B_r, B_c)


# ---------------------------------------------------------------------------------------------------------------
# HBM traffic: Algorithm 0 vs Algorithm 1 (Theorem 2)
# ---------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class HBMTraffic:
    """Elements read from HBM into SRAM and written back, for one head of one sequence (ints, or arrays of them)."""

    reads: Any
    writes: Any

    @property
    def total(self) -> Any:
        return self.reads + self.writes


def flash_block_sizes(d: int, sram_elements: int) -> tuple[int, int]:
    """(B_r, B_c) of Algorithm 1 line 1 for head size d and an SRAM of M elements:

        B_c = ceil(M / 4d),   B_r = min(ceil(M / 4d), d)

    Each of the tiles K_j, V_j, Q_i, O_i then holds about M/4 elements (and S_ij = B_r x B_c at most about M/4).
    """
    d = _check_whole("d", d)
    M = _check_whole("sram_elements", sram_elements)
    B_c = -(-M // (4 * d))  # ceil(M / 4d)
    return min(B_c, d), B_c


def attention_hbm_traffic(
    n: ArrayLike, d: int, method: Method, *, block_k: int | None = None, sram_elements: int | None = None
) -> HBMTraffic:
    """Elements moved between HBM and SRAM by one head's forward attention over n tokens (T_q = T_k = n, d_v = d),
    counted exactly for the algorithms as the paper writes them (Dao et al. 2022), not for a real kernel.

    "standard", Algorithm 0, each operand read once and each result written once::

        line 1: read Q, K (2nd), write S = Q K^T (n²)
        line 2: read S (n²), write P = softmax(S) (n²)
        line 3: read P (n²), V (nd), write O = P V (nd)
        reads = 3nd + 2n²,   writes = 2n² + nd,   total = 4nd + 4n² = Θ(nd + n²)   (Theorem 2)

    Reading each operand once is the floor of "load by blocks": a blocked matmul with a small SRAM re-reads its
    operands, so a real standard implementation moves at least this much. No SRAM size enters the count.

    "flash", Algorithm 1 with T_c = ceil(n / B_c) key blocks (B_c = block_k, or from sram_elements = M by line 1)::

        line 2:     write O, l, m                       nd + 2n
        line 6:     read K_j, V_j, all j                2nd
        line 8:     read Q_i, O_i, l_i, m_i, all i, j   T_c (2nd + 2n)
        lines 12-13: write O_i, l_i, m_i, all i, j      T_c (nd + 2n)

    so total = 3nd + 2n + T_c (3nd + 4n). With T_c ≈ n / (M / 4d) = 4nd / M that is about (12 + 16/d) n² d² / M
    at large n (the 16/d from l and m), the Θ(n² d² / M) of Theorem 2 (stated for d <= M <= nd); against the
    standard 4n² that saves a factor of about 4M / ((12 + 16/d) d²), which grows with the SRAM and shrinks with d.
    B_r does not enter: every pass over the query blocks moves all of Q and O whatever their tiling. The row
    statistics l, m are counted at the same width as the matrices.
    Not counted: causal block skipping (see :func:`flash_attention_forward`'s counters), the backward pass.
    """
    _check_method(method)
    N = _whole_array("n", n)
    d = _check_whole("d", d)
    if method == "standard":
        # Algorithm 0: reads Q, K, S, P, V; writes S, P, O
        return HBMTraffic(_out(3 * N * d + 2 * N**2), _out(2 * N**2 + N * d))
    if (block_k is None) == (sram_elements is None):
        raise ValueError("the flash count needs exactly one of block_k (B_c) and sram_elements (M)")
    B_c = flash_block_sizes(d, sram_elements)[1] if block_k is None else _check_whole("block_k", block_k)
    T_c = -(-N // B_c)  # ceil(n / B_c)
    # reads: K_j, V_j once (line 6); Q_i, O_i, l_i, m_i once per key block (line 8)
    reads = 2 * N * d + T_c * (2 * N * d + 2 * N)
    # writes: O, l, m initialised (line 2); O_i, l_i, m_i once per key block (lines 12-13)
    writes = (N * d + 2 * N) + T_c * (N * d + 2 * N)
    return HBMTraffic(_out(reads), _out(writes))


def attention_hbm_bytes(
    n: ArrayLike, d: int, sram_bytes: int, method: Method, bytes_per_element: int = 2
) -> int | NDArray[np.int64]:
    """Bytes moved between HBM and SRAM by one head's forward attention: :func:`attention_hbm_traffic`'s total
    times bytes_per_element, with an SRAM of M = floor(sram_bytes / bytes_per_element) elements.

    A count of the paper's algorithms, not a measurement: a real kernel moves other amounts (FlashAttention-2's
    loop order loads Q and writes O once, and K, V once per query block), and bytes / bandwidth is a floor on the
    time, not a time. "standard" does not depend on sram_bytes. Theorem 2 assumes d <= M, checked here for "flash".
    """
    _check_method(method)
    bpe = _check_whole("bytes_per_element", bytes_per_element)
    M = _check_whole("sram_bytes", sram_bytes) // bpe
    if method == "flash" and M < d:
        raise ValueError(f"an SRAM of {sram_bytes} bytes holds {M} elements, fewer than d = {d} (Theorem 2: d <= M)")
    traffic = attention_hbm_traffic(n, d, method, sram_elements=M if method == "flash" else None)
    return traffic.total * bpe


# ---------------------------------------------------------------------------------------------------------------
# What the backward needs kept: the n x n probabilities vs the output and row statistics (section 3.1)
# ---------------------------------------------------------------------------------------------------------------


def attention_activation_bytes(
    n: ArrayLike,
    d: int,
    heads: int,
    method: Method,
    bytes_per_element: int = 2,
    *,
    stats_per_row: int = 1,
    stats_bytes_per_element: int = 4,
) -> int | NDArray[np.int64]:
    """Bytes one sequence's attention keeps from its forward for its backward, beyond its inputs Q, K, V (which both
    methods keep), for n tokens, head size d and ``heads`` heads.

    "standard": the probabilities P, n x n per head (the paper's standard backward, Algorithm 3 of its appendix,
    reads P back):
        heads · n² · bytes_per_element.
    "flash": the output O and the softmax row statistics; S and P are recomputed block by block from Q, K and
    the statistics in the backward (section 3.1), more FLOPs for far less memory:
        heads · (n d · bytes_per_element + stats_per_row · n · stats_bytes_per_element).

    stats_per_row = 1 is the logsumexp m + log l that the flash-attn code release saves (``softmax_lse``, float32,
    hence stats_bytes_per_element = 4); the 2022 paper's Algorithm 2 keeps m and l separately (stats_per_row = 2).
    O is also the input of the output projection, which keeps it anyway in a whole-layer count; dropout masks are
    not counted (Algorithm 0 has no dropout).
    """
    _check_method(method)
    N = _whole_array("n", n)
    d, H = _check_whole("d", d), _check_whole("heads", heads)
    bpe = _check_whole("bytes_per_element", bytes_per_element)
    if method == "standard":
        # P: (heads, n, n)
        return _out(H * N**2 * bpe)
    k = _check_whole("stats_per_row", stats_per_row)
    sbpe = _check_whole("stats_bytes_per_element", stats_bytes_per_element)
    # O: (heads, n, d); statistics: (heads, n) each
    return _out(H * (N * d * bpe + k * N * sbpe))
