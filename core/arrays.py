"""Array helpers shared by core's modules: checked float arrays, and block reductions that split an axis into
near-equal blocks and sum or average each, so that a large matrix can be drawn as a small heatmap (the LoRA slider
frames, attention maps of hundreds of tokens).
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray


def as_float_array(x: ArrayLike, name: str) -> NDArray[np.float64]:
    """``x`` as a float64 array; ValueError (naming ``name``) for anything not numbers, NaN or infinity."""
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers, got {x!r}") from None
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name} must be finite numbers (no NaN or infinity)")
    return a


def block_edges(n: int, max_blocks: int) -> np.ndarray:
    """Edges 0 = e_0 < e_1 < ... < e_B = n of B = min(n, max_blocks) blocks whose sizes differ by at most one."""
    if n < 1 or max_blocks < 1:
        raise ValueError(f"n and max_blocks must be positive, got {n} and {max_blocks}")
    blocks = min(n, max_blocks)
    # e_b = floor(b n / B)
    return (np.arange(blocks + 1) * n) // blocks  # (B+1,)


def block_reduce(x: np.ndarray, edges: np.ndarray, axis: int, mean: bool = True) -> np.ndarray:
    """Sum (mean=False) or mean of ``x`` over the blocks [e_b, e_{b+1}) of ``axis``; a float input keeps its dtype."""
    sums = np.add.reduceat(x, edges[:-1], axis=axis)
    if not mean:
        return sums
    shape = [1] * x.ndim
    shape[axis] = edges.shape[0] - 1
    sizes = np.diff(edges)  # (B,)
    return sums / (sizes.astype(sums.dtype) if sums.dtype.kind == "f" else sizes).reshape(shape)


def block_average(x: np.ndarray, max_side: int) -> np.ndarray:
    """Average the last two axes of ``x`` (..., d, k) over near-equal blocks, to at most max_side x max_side."""
    x = np.asarray(x, dtype=np.float64)
    if x.ndim < 2:
        raise ValueError(f"block_average needs at least 2 dimensions, got shape {x.shape}")
    x = block_reduce(x, block_edges(x.shape[-2], max_side), axis=x.ndim - 2)  # (..., D, k)
    return block_reduce(x, block_edges(x.shape[-1], max_side), axis=x.ndim - 1)  # (..., D, K)


def block_centres(n: int, max_side: int) -> np.ndarray:
    """Centre of each block in the original 0-based index, for heatmap axes: (e_b + e_{b+1} - 1) / 2."""
    e = block_edges(n, max_side)
    return (e[:-1] + e[1:] - 1) / 2.0
