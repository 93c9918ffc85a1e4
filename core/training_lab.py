"""The training lab: short runs of the tiny GPT (core.tiny_gpt) at a lab size, and the shipped sweep of their curves.

A lab run trains :data:`LAB_MODEL` (2 pre-norm layers of width 64, 4 heads, 64-byte context: 115,008 parameters)
with :func:`core.tiny_gpt.train` on one thread for :data:`LAB_STEPS` steps of 16 windows, evaluating on the first
32 held-out windows every 25 steps. The page's settings (:class:`Settings`) change one knob at a time: the peak
learning rate, warm-up, schedule, optimizer, batch, pre- or post-norm, depth, gradient clipping, steps and seed.

The shipped sweep (``core/data/training_lab.npz``, :func:`write_sweep`; ``make lab-sweep`` or
``python -m core.training_lab sweep``) holds the curves of :data:`SWEEP_LRS` at the default settings and of each
preset (:data:`PRESETS`), so that the page shows them without torch. It took 259 s on one thread of a 2-core CPU
that other jobs shared (about half that idle; docs/training_lab.md gives each curve's time). The file holds float
arrays and the settings as JSON in a uint8 array, read with ``np.load(..., allow_pickle=False)``.

An excursion above the uniform guess (:func:`above_uniform`): a finite loss above ln 256 nats (8 bits) per byte,
the loss of a uniform guess over the 256 bytes, and above the run's first loss (the untrained model's, which sits at
about ln 256 itself and at some seeds slightly above it), anywhere in the train or held-out curve. One that recovers
is a spike with fast recovery (seed 002, A5.5), not a divergence. Divergence (:func:`diverged`): a NaN or infinite
loss anywhere, or a train or held-out loss still above that ceiling at the end. core.tiny_gpt.train records only
NaN/inf; the rest is checked here.

torch is imported only by :func:`run` (through core.tiny_gpt.train): loading the sweep needs numpy alone.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from core.tiny_gpt import LN_256, GPTConfig, TrainConfig, corpus_sha256, n_params, train

SWEEP_PATH = Path(__file__).resolve().parent / "data" / "training_lab.npz"
BITS = 1.0 / math.log(2.0)  # nats -> bits
LAB_STEPS = 300
EVAL_EVERY = 25
VAL_WINDOWS = 32
SWEEP_LRS: tuple[float, ...] = (1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 1e-1, 3e-1)  # half-decades
SCHEDULES: tuple[str, ...] = ("cosine", "wsd", "linear", "constant")
OPTIMIZERS: tuple[str, ...] = ("adamw", "sgd")
NORMS: tuple[str, ...] = ("pre", "post")


@dataclass(frozen=True)
class Settings:
    """One lab run's knobs. clip None is no clipping; lr is the peak."""

    lr: float = 3e-3
    warmup: int = 20
    schedule: str = "cosine"
    optimizer: str = "adamw"
    batch: int = 16
    norm: str = "pre"
    layers: int = 2
    clip: float | None = 1.0
    steps: int = LAB_STEPS
    seed: int = 0

    def key(self) -> str:
        """A stable text key of the settings (the sweep's index and the live runs' cache)."""
        clip = "off" if self.clip is None else f"{self.clip:g}"
        return (
            f"lr={self.lr:g} warmup={self.warmup} schedule={self.schedule} optimizer={self.optimizer} "
            f"batch={self.batch} norm={self.norm} layers={self.layers} clip={clip} steps={self.steps} seed={self.seed}"
        )


DEFAULT = Settings()
LAB_MODEL = GPTConfig(n_layer=2, d_model=64, n_head=4, ctx=64, norm="pre")


def configs(s: Settings) -> tuple[GPTConfig, TrainConfig]:
    """The tiny GPT's shape and training config for settings ``s`` (one thread, the lab's evaluation)."""
    cfg = replace(LAB_MODEL, n_layer=s.layers, norm=s.norm)  # type: ignore[arg-type]
    tcfg = TrainConfig(
        steps=s.steps, batch=s.batch, lr=s.lr, warmup=s.warmup, schedule=s.schedule, optimizer=s.optimizer,
        grad_clip=s.clip, seed=s.seed, threads=1, eval_every=EVAL_EVERY, val_windows=VAL_WINDOWS,
    )  # fmt: skip
    return cfg, tcfg


# The presets the bank asks a candidate to diagnose from a curve (seed 002: A1.6, A1.11, A4.4, A5.5), each with the
# run it is compared with. Chosen from the probes in docs/training_lab.md, at settings a real run might use.
PRESETS: dict[str, Settings] = {
    "good": DEFAULT,
    "lr_high": replace(DEFAULT, lr=3e-2),
    "no_warmup": replace(DEFAULT, warmup=0),
    "post_deep": replace(DEFAULT, norm="post", layers=6),
    "pre_deep": replace(DEFAULT, norm="pre", layers=6),
    "no_clip": replace(DEFAULT, clip=None),
}


@dataclass
class Curve:
    """A run's record: per step the train loss, global and per-layer gradient norms (before clipping) and LR; the
    held-out loss at val_steps (all losses in nats per byte)."""

    settings: Settings
    loss: NDArray[np.float64]
    grad_norm: NDArray[np.float64]
    layer_grad_norm: NDArray[np.float64]  # (steps done, layers)
    lr: NDArray[np.float64]
    val_steps: NDArray[np.int64]
    val_loss: NDArray[np.float64]
    seconds: float = 0.0
    tokens_per_s: float = 0.0
    stopped: bool = False
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def steps_done(self) -> int:
        return int(self.loss.size)

    @property
    def final_val(self) -> float:
        """The last held-out loss (nats per byte), NaN if none was measured."""
        return float(self.val_loss[-1]) if self.val_loss.size else math.nan


def _ceiling(c: Curve) -> float:
    """ln 256, or the run's first loss where the untrained model starts above it."""
    return max(LN_256, float(c.loss[0])) if c.loss.size else LN_256


def above_uniform(c: Curve) -> bool:
    """A finite loss above ln 256 nats per byte (a uniform guess) and above the run's first loss, in the train or
    held-out curve: an excursion, whether or not the run recovers from it."""
    both = np.concatenate([c.loss, c.val_loss])
    return bool((both[np.isfinite(both)] > _ceiling(c)).any())


def diverged(c: Curve) -> bool:
    """A NaN/inf loss anywhere, or a last train or held-out loss still above ln 256 (and the first loss) at the end.
    An excursion above the uniform guess that comes back below it (:func:`above_uniform`) is a spike with fast
    recovery (seed 002, A5.5), not a divergence."""
    both = np.concatenate([c.loss, c.val_loss])
    if (~np.isfinite(both)).any():
        return True
    last = [float(x[-1]) for x in (c.loss, c.val_loss) if x.size]
    return any(x > _ceiling(c) for x in last)


def spikes(c: Curve, factor: float = 1.3, after: int = 50) -> int:
    """Steps after ``after`` whose train loss exceeds ``factor`` times the lowest loss seen before them."""
    loss = c.loss
    if loss.size <= after:
        return 0
    best = np.minimum.accumulate(np.where(np.isfinite(loss), loss, np.inf))
    return int((loss[after:] > factor * best[after - 1 : -1]).sum())


def run(
    s: Settings,
    on_step: Callable[[int, dict[str, Any]], None] | None = None,
    should_stop: Callable[[], bool] | None = None,
) -> Curve:
    """Train the lab model with settings ``s`` (imports torch); ``on_step`` and ``should_stop`` as in
    core.tiny_gpt.train."""
    cfg, tcfg = configs(s)
    r = train(cfg, tcfg, on_step=on_step, should_stop=should_stop)
    return Curve(
        s,
        np.asarray(r.loss, dtype=np.float64),
        np.asarray(r.grad_norm, dtype=np.float64),
        np.asarray(r.layer_grad_norm, dtype=np.float64).reshape(len(r.loss), s.layers),
        np.asarray(r.lr, dtype=np.float64),
        np.asarray(r.val_steps, dtype=np.int64),
        np.asarray(r.val_loss, dtype=np.float64),
        seconds=r.seconds,
        tokens_per_s=r.tokens_per_s,
        stopped=r.stopped,
    )


# ---------------------------------------------------------------------------------------------------------------
# the shipped sweep
# ---------------------------------------------------------------------------------------------------------------


def sweep_settings() -> list[Settings]:
    """Every curve the sweep holds, once each: the LRs at the defaults, then the presets' runs."""
    out = [replace(DEFAULT, lr=lr) for lr in SWEEP_LRS]
    for s in PRESETS.values():
        if s not in out:
            out.append(s)
    return out


_ARRAYS = ("loss", "grad_norm", "layer_grad_norm", "lr", "val_steps", "val_loss")


def save_sweep(path: Path | str, curves: list[Curve], meta: dict[str, Any] | None = None) -> int:
    """Write curves to a compressed .npz (``c<i>/<array>``, the settings and times as JSON in ``index``)."""
    arrays: dict[str, NDArray] = {}
    index = []
    for i, c in enumerate(curves):
        for name in _ARRAYS:
            arrays[f"c{i}/{name}"] = np.asarray(getattr(c, name))
        index.append({"settings": asdict(c.settings), "seconds": c.seconds, "tokens_per_s": c.tokens_per_s})
    arrays["index"] = np.frombuffer(json.dumps({"curves": index, "meta": meta or {}}).encode("utf-8"), np.uint8)
    with open(path, "wb") as f:
        np.savez_compressed(f, **arrays)
    return Path(path).stat().st_size


def load_sweep(path: Path | str = SWEEP_PATH) -> tuple[dict[str, Curve], dict[str, Any]]:
    """({settings key: curve}, meta) from a file written by :func:`save_sweep`; no pickle is loaded."""
    out: dict[str, Curve] = {}
    with np.load(path, allow_pickle=False) as z:
        index = json.loads(bytes(z["index"]).decode("utf-8"))
        for i, entry in enumerate(index["curves"]):
            s = Settings(**entry["settings"])
            arr = {name: z[f"c{i}/{name}"] for name in _ARRAYS}
            out[s.key()] = Curve(s, **arr, seconds=entry["seconds"], tokens_per_s=entry["tokens_per_s"])
    return out, index["meta"]


def write_sweep(out: Path | str = SWEEP_PATH, log: Callable[[str], None] = print) -> list[Curve]:
    """Run every curve of :func:`sweep_settings` and save them to ``out``."""
    curves = []
    start = time.perf_counter()
    for s in sweep_settings():
        c = run(s)
        curves.append(c)
        div = "  diverged" if diverged(c) else "  above ln 256, recovered" if above_uniform(c) else ""
        log(f"{s.key()}: {c.seconds:.1f} s, {c.tokens_per_s:,.0f} tokens/s, val {c.final_val * BITS:.3f} bits{div}")
    total = time.perf_counter() - start
    meta = {"seconds": total, "corpus_sha256": corpus_sha256(), "params": n_params(LAB_MODEL)}
    size = save_sweep(out, curves, meta)
    log(f"{len(curves)} curves in {total:.0f} s; {out}: {size:,} bytes")
    return curves


def main(argv: list[str] | None = None) -> int:
    """``sweep [--out PATH]``: run and save the shipped sweep."""
    parser = argparse.ArgumentParser(prog="python -m core.training_lab", description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=["sweep"])
    parser.add_argument("--out", default=str(SWEEP_PATH))
    args = parser.parse_args(argv)
    write_sweep(args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
