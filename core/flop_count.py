"""Training FLOPs counted by torch itself: the lesson's check that a forward pass costs 2N FLOPs per token and a
backward pass 4N, so that training on D tokens costs about 6ND (lesson 001, section 5).

torch is imported inside :func:`count_training_flops` only: importing this module costs nothing, and the scaling page
runs the count when its button is clicked.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import torch


@dataclass(frozen=True)
class FlopCount:
    """What torch's FLOP counter saw for one batch: the stack's parameters ``n_params`` (N), the batch's ``tokens``
    (T), and the exact integer FLOPs of the ``forward`` and the ``backward`` pass."""

    n_params: int
    tokens: int
    forward: int
    backward: int

    @property
    def ratios(self) -> tuple[float, float]:
        """(forward, backward) FLOPs per token in units of N: forward / (N·T) and backward / (N·T)."""
        per_token = self.n_params * self.tokens
        return self.forward / per_token, self.backward / per_token


def count_training_flops(
    d: int = 64,
    tokens: int = 128,
    pairs: int = 2,
    input_requires_grad: bool = True,
    device: torch.device | str | None = None,
    seed: int = 0,
) -> FlopCount:
    """Count the FLOPs of one forward and one backward pass of the lesson's stack with
    ``torch.utils.flop_counter.FlopCounterMode``.

    The stack: ``pairs`` blocks of Linear(d, 4d) → GELU → Linear(4d, d), all bias-free (as in modern LLMs), so
    N = pairs · 8d². The batch is ``tokens`` rows of width d; the loss is the mean square of the output.
    ``input_requires_grad`` makes the batch a tensor that needs its gradient, as the input of a layer deep inside a
    network does; without it the first layer skips the matmul that computes its input's gradient.

    What FlopCounterMode counts: the matrix-matrix products it has formulas for (mm, addmm, bmm, baddbmm,
    convolutions; on CUDA also the fused flash, memory-efficient and cuDNN attention kernels, as full T×T products
    with a backward of 2.5× the forward), each m×k by k×n product as 2·m·n·k FLOPs (a multiply and an add per term).
    Fused attention on the CPU counts 0 in torch 2.13, and matrix-vector products are not counted. Elementwise work
    (GELU, the square, the mean, the gradient's accumulation) is not counted either, so the counts here are exactly
    the matmuls' FLOPs.

    ``device``: where the stack runs (core's device, core/device.py, by default); the counts do not depend on it.
    The weights and the batch are drawn on the CPU from a generator seeded with ``seed`` (the same numbers on every
    device, torch's global random state untouched); the counts do not depend on them either.
    """
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    from core.device import default_dtype, get_device

    if min(d, tokens, pairs) < 1:
        raise ValueError(f"d, tokens and pairs must be positive, got d={d}, tokens={tokens}, pairs={pairs}")
    device = torch.device(device) if device is not None else get_device()
    dtype = default_dtype(device)
    generator = torch.Generator().manual_seed(seed)

    def weight(out_features: int, in_features: int) -> torch.nn.Parameter:
        w = torch.randn(out_features, in_features, generator=generator, dtype=torch.float64) / in_features**0.5
        return torch.nn.Parameter(w.to(device=device, dtype=dtype))

    layers: list[torch.nn.Module] = []
    for _ in range(pairs):
        up = torch.nn.Linear(d, 4 * d, bias=False, device="meta")  # shapes only: its weight is drawn above
        down = torch.nn.Linear(4 * d, d, bias=False, device="meta")
        up.weight, down.weight = weight(4 * d, d), weight(d, 4 * d)
        layers += [up, torch.nn.GELU(), down]
    model = torch.nn.Sequential(*layers)
    n_params = sum(p.numel() for p in model.parameters())
    x = torch.randn(tokens, d, generator=generator, dtype=torch.float64).to(device=device, dtype=dtype)
    x.requires_grad_(input_requires_grad)

    with FlopCounterMode(display=False) as forward:
        y = model(x)
    with FlopCounterMode(display=False) as backward:
        y.square().mean().backward()
    return FlopCount(n_params, tokens, int(forward.get_total_flops()), int(backward.get_total_flops()))
