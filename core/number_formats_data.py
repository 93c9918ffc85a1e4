"""Where a real training run's numbers sit on the number line: the magnitudes of the tiny GPT's activations, weight
gradients and Adam's second moment v, computed once by ``make fmt-data`` (``python -m core.number_formats_data --out
core/data/number_formats.npz``, on the CPU, one thread: 35 s here, 41-44 s in reruns beside other processes,
docs/tiny_gpt.md) and read back here with numpy alone (the number-formats page never imports torch). With one thread a
rerun on the same machine writes the same numbers.

The run. The shipped checkpoint (core/data/tiny_gpt.npz, docs/tiny_gpt.md) is loaded into its torch model, in fp32,
and trained on for :data:`STEPS` more steps with a fresh ``torch.optim.AdamW`` at the shipped run's settings (β =
0.9, 0.95; ε 1e-8; weight decay 0.1 on the matrices, none on the norm gains; gradient clipping at 1.0; batches of 32
windows of 128 bytes of the training split drawn by a numpy Generator, seed 0) at a constant learning rate of 3e-4,
the last learning rate of the shipped run's cosine schedule (10% of its peak, 3e-3). Recorded:

- ``act``: the activations, taken as the inputs of the linear layers (every matrix product with a weight: the normed
  stream entering W_q, W_k and W_v (once: they share it), the attention output entering W_o, the normed stream
  entering W_1, the GELU output entering W_2, and the final normed stream entering the tied head), in the last step's
  forward pass. Not the residual stream itself.
- ``grad``: the weight gradients, every parameter's (the embedding, the matrices and the norm gains; 820,352 values)
  after the last step's backward, as AdamW receives them (after clipping; ``clip`` says whether the last step clipped).
- ``v``: Adam's second moment, ``exp_avg_sq`` from torch.optim.AdamW's state after the last step: the exponential
  moving average (1 − β2) Σ_k β2^(t−k) g_k², without the bias correction 1 / (1 − β2^t) that the update applies
  (what the optimizer keeps in memory).

For each of the three, ``<name>/pct`` holds the percentiles :data:`PERCENTILES` of the nonzero |values| (numpy's
default, linear interpolation), ``<name>/zero`` the share that is exactly zero, ``<name>/n`` the count of values,
``<name>/below`` the share of the nonzero |values| below each of :data:`THRESHOLDS` (bf16's smallest subnormal 2^-133
and smallest normal 2^-126, fp16's smallest subnormal 2^-24 and smallest normal 2^-14), ``<name>/above`` the share above
fp16's largest, 65,504, and ``<name>/fp16_zero`` the share of the nonzero values that a cast to fp16 (torch's, round to
nearest) turns into 0. Also ``hist/edges`` and ``<name>/hist``: a histogram of log10 of the nonzero |values|.
``percentiles`` and ``thresholds`` repeat the two tuples; ``steps``, ``batch``, ``lr``, ``grad_norm`` (each step's
global norm before clipping), ``loss`` (each step's training loss) and ``seconds`` (the run's wall time, loading the
checkpoint included).
"""

from __future__ import annotations

import argparse
import functools
import time
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

DATA = Path(__file__).resolve().parent / "data" / "number_formats.npz"
QUANTITIES = ("act", "grad", "v")
PERCENTILES = (0.1, 1.0, 50.0, 99.0, 99.9)
THRESHOLDS = (2.0**-133, 2.0**-126, 2.0**-24, 2.0**-14)
FP16_LARGEST = 65504.0
HIST_EDGES = np.arange(-40.0, 6.01, 0.25)  # log10 |value|, quarter decades
STEPS, BATCH, LR, SEED, THREADS = 60, 32, 3e-4, 0, 1
BETAS, WEIGHT_DECAY, CLIP = (0.9, 0.95), 0.1, 1.0


def summary(values: NDArray) -> dict[str, NDArray[np.float64]]:
    """The stored summary of one quantity's values: percentiles of the nonzero |values|, shares (see the module)."""
    import torch

    a = np.abs(np.asarray(values, dtype=np.float32).ravel())
    nz = a[a > 0]
    cast = torch.from_numpy(nz).to(torch.float16)
    hist, _ = np.histogram(np.clip(np.log10(nz.astype(np.float64)), HIST_EDGES[0], HIST_EDGES[-1]), HIST_EDGES)
    return {
        "pct": np.percentile(nz.astype(np.float64), PERCENTILES),
        "zero": np.asarray(1.0 - nz.size / a.size),
        "n": np.asarray(float(a.size)),
        "below": np.array([np.mean(nz < t) for t in THRESHOLDS]),
        "above": np.asarray(np.mean(nz > FP16_LARGEST)),
        "fp16_zero": np.asarray(float((cast == 0).float().mean())),
        "hist": hist.astype(np.float64),
    }


def collect(steps: int = STEPS, batch: int = BATCH, lr: float = LR, seed: int = SEED) -> dict[str, Any]:
    """Run ``steps`` AdamW steps from the shipped checkpoint (see the module) and return the raw values: ``act``
    (the last step's linear-layer inputs, 1-D), ``grad`` and ``v`` (dicts of parameter name -> array), ``grad_norm``
    and ``loss`` per step, ``clip`` (whether the last step clipped)."""
    import torch
    from torch.nn import functional as F
    from torch.overrides import TorchFunctionMode

    from core import tiny_gpt as tg

    params, cfg, _ = tg.load_checkpoint()
    train_bytes, _ = tg.split_bytes(tg.corpus_bytes())
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = tg.torch_model(cfg, params, device="cpu")
    named = model.named_arrays()
    matrices = [t for t in named.values() if t.ndim >= 2]
    gains = [t for t in named.values() if t.ndim < 2]
    groups = [{"params": matrices, "weight_decay": WEIGHT_DECAY}, {"params": gains, "weight_decay": 0.0}]
    opt = torch.optim.AdamW(groups, lr=lr, betas=BETAS)
    weights = {t.untyped_storage().data_ptr() for t in matrices}  # wte.T shares wte's storage: the tied head

    class LinearInputs(TorchFunctionMode):
        """Keeps the left operand of every product x @ W with W a weight matrix (or the head's wte.T)."""

        def __init__(self) -> None:
            super().__init__()
            self.kept: list[torch.Tensor] = []

        def __torch_function__(self, func, types, args=(), kwargs=None):  # type: ignore[no-untyped-def]
            if func in (torch.Tensor.__matmul__, torch.Tensor.matmul, torch.matmul) and len(args) == 2:
                w = args[1]
                if isinstance(w, torch.Tensor) and w.ndim == 2 and w.untyped_storage().data_ptr() in weights:
                    x = args[0].detach()
                    if not any(x is k or (x.shape == k.shape and x.data_ptr() == k.data_ptr()) for k in self.kept):
                        self.kept.append(x)  # W_q, W_k and W_v share one input: kept once
            return func(*args, **(kwargs or {}))

    grad_norms, losses, clipped, act = [], [], False, np.zeros(0, np.float32)
    for step in range(1, steps + 1):
        xy = torch.from_numpy(tg._batch(train_bytes, rng, batch, cfg.ctx))
        last = step == steps
        mode = LinearInputs()
        if last:
            with mode:
                logits = model(xy[:, :-1])
        else:
            logits = model(xy[:, :-1])
        # loss = −mean log p(next byte)
        loss = F.cross_entropy(logits.reshape(-1, 256), xy[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        norm = float(torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP))
        grad_norms.append(norm)
        losses.append(float(loss.detach()))
        clipped = norm > CLIP
        opt.step()
        if last:
            act = torch.cat([k.reshape(-1) for k in mode.kept]).numpy().copy()
    grad = {n: t.grad.detach().numpy().copy() for n, t in named.items()}
    v = {n: opt.state[t]["exp_avg_sq"].detach().numpy().copy() for n, t in named.items()}
    return {"act": act, "grad": grad, "v": v, "grad_norm": grad_norms, "loss": losses, "clip": clipped}


def build(out: Path, steps: int = STEPS, batch: int = BATCH, log: Any = print) -> dict[str, NDArray[np.float64]]:
    """Run :func:`collect` on :data:`THREADS` threads and write the summaries to ``out``; returns the arrays."""
    import torch

    old = torch.get_num_threads()
    torch.set_num_threads(THREADS)
    try:
        t0 = time.perf_counter()
        raw = collect(steps, batch)
        arrays: dict[str, NDArray[np.float64]] = {}
        for name in QUANTITIES:
            values = raw[name] if name == "act" else np.concatenate([a.ravel() for a in raw[name].values()])
            arrays |= {f"{name}/{k}": v for k, v in summary(values).items()}
        arrays |= {
            "hist/edges": HIST_EDGES.copy(),
            "percentiles": np.asarray(PERCENTILES),
            "thresholds": np.asarray(THRESHOLDS),
            "steps": np.asarray(float(steps)),
            "batch": np.asarray(float(batch)),
            "lr": np.asarray(LR),
            "grad_norm": np.asarray(raw["grad_norm"]),
            "loss": np.asarray(raw["loss"]),
            "clip": np.asarray(float(raw["clip"])),
        }
        arrays["seconds"] = np.asarray(time.perf_counter() - t0)
    finally:
        torch.set_num_threads(old)
    np.savez_compressed(out, **arrays)  # type: ignore[arg-type]
    for name in QUANTITIES:
        pct = ", ".join(f"{p:g}%: {v:.3g}" for p, v in zip(PERCENTILES, arrays[f"{name}/pct"], strict=True))
        log(f"{name}: {int(arrays[f'{name}/n']):,} values, zero {arrays[f'{name}/zero']:.4f}; {pct}")
    log(f"{steps} steps of {batch} x 128 bytes in {float(arrays['seconds']):.1f} s; {out}")
    return arrays


@functools.cache
def shipped() -> dict[str, NDArray[np.float64]]:
    """Every array of the shipped file (numpy only, no pickle)."""
    with np.load(DATA, allow_pickle=False) as z:
        return {k: np.asarray(z[k]) for k in z.files}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=DATA)
    parser.add_argument("--steps", type=int, default=STEPS)
    parser.add_argument("--batch", type=int, default=BATCH)
    args = parser.parse_args()
    build(args.out, args.steps, args.batch)


if __name__ == "__main__":
    main()
