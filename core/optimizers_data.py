"""The optimizers page's shipped numbers (core/data/optimizers.npz): what needs torch and would cost the page more
than its first figure, computed once by ``make optim-data`` (``python -m core.optimizers_data --out ...``, one
thread) and read back here with numpy alone.

- ``grad/<init>/<norm>/L<depth>``: :func:`core.optimizers.grad_norm_by_depth` (seed 0, d 64, 4 heads, 32 bytes,
  batch 4) for init ``xavier`` and ``gpt2``, norm ``pre`` and ``post``, depths 4 and 12: each block's gradient norm.
- ``coord/<param>``: :func:`core.optimizers.mup_coord_check` at widths :data:`COORD_WIDTHS`, LR 0.01, 5 Adam steps,
  (n_widths, steps, 3): the mean |coordinate| of hidden layer 1, hidden layer 2 and the output at each step's
  forward pass, before that step's update (index 0 at initialisation, index 4 after 4 updates).
- ``sweep/<param>``, ``sweep/lrs``, ``sweep/widths``: :func:`core.optimizers.mup_lr_sweep` (150 steps, batch 64,
  seeds 0, 1, 2, the mean over them) at widths :data:`SWEEP_WIDTHS` and :data:`SWEEP_LRS`: the final training loss
  per width and LR.
- ``seconds``: the wall time of the whole build on one thread.
"""

from __future__ import annotations

import argparse
import functools
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray

DATA = Path(__file__).resolve().parent / "data" / "optimizers.npz"
DEPTHS = (4, 12)
INITS = ("xavier", "gpt2")
NORMS = ("pre", "post")
COORD_WIDTHS = (32, 64, 128, 256)
COORD_LR, COORD_STEPS = 0.01, 5
SWEEP_WIDTHS = (32, 128, 512)
SWEEP_LRS = tuple(float(x) for x in np.geomspace(1e-4, 1e-1, 13))  # a quarter decade apart
SWEEP_STEPS, SWEEP_SEEDS = 150, 3


def build(out: Path) -> None:
    """Compute every array above on one thread and write them to ``out``."""
    import torch

    from core import optimizers as opt

    torch.set_num_threads(1)
    t0 = time.perf_counter()
    arrays: dict[str, NDArray[np.float64]] = {}
    for init in INITS:
        for norm in NORMS:
            for depth in DEPTHS:
                arrays[f"grad/{init}/{norm}/L{depth}"] = opt.grad_norm_by_depth(depth, norm, init)  # type: ignore[arg-type]
    for param in ("sp", "mup"):
        arrays[f"coord/{param}"] = opt.mup_coord_check(COORD_WIDTHS, param, COORD_LR, COORD_STEPS)  # type: ignore[arg-type]
        loss, _ = opt.mup_lr_sweep(SWEEP_WIDTHS, SWEEP_LRS, param, steps=SWEEP_STEPS, seeds=SWEEP_SEEDS)  # type: ignore[arg-type]
        arrays[f"sweep/{param}"] = loss
    arrays["sweep/lrs"] = np.asarray(SWEEP_LRS)
    arrays["sweep/widths"] = np.asarray(SWEEP_WIDTHS, dtype=np.float64)
    arrays["coord/widths"] = np.asarray(COORD_WIDTHS, dtype=np.float64)
    arrays["seconds"] = np.asarray(time.perf_counter() - t0)
    np.savez_compressed(out, **arrays)  # type: ignore[arg-type]


@functools.cache
def shipped() -> dict[str, NDArray[np.float64]]:
    """Every array of the shipped file (numpy only, no pickle)."""
    with np.load(DATA, allow_pickle=False) as z:
        return {k: np.asarray(z[k]) for k in z.files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA)
    build(parser.parse_args().out)


if __name__ == "__main__":
    main()
