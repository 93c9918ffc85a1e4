"""The tables of tests/test_view_numbers.py for the training lab: per view (tests/page_numbers.py ``views``), a list
of ``Ref(passage, value or reason, ...)`` for every number the view's readouts and figure texts show.

The references read the shipped sweep's file itself (``np.load`` of core/data/training_lab.npz, its JSON index
matched by the settings written out here), never core.training_lab or views.training_lab: the loss in bits per
byte is nats / ln 2, the highest train loss and the peak gradient norm are maxima of the stored arrays, the uniform
guess is log2 256 = 8 bits. tests/test_views_training_lab.py re-runs a shipped curve with core's train().
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np

from tests.page_numbers import Ref
from tests.test_page_numbers import FORMULA, GIVEN

SWEEP = Path(__file__).resolve().parents[1] / "core" / "data" / "training_lab.npz"
LAB = "the lab's evaluation: the first 32 held-out windows of 64 bytes (core/training_lab.py)"
UNIFORM = math.log2(256)  # bits per byte of a uniform guess over the bytes
STEP = "a step of the run (where the stored curve has its maximum)"
DEFAULT = {"lr": 3e-3, "warmup": 20, "schedule": "cosine", "optimizer": "adamw", "batch": 16, "norm": "pre",
           "layers": 2, "clip": 1.0, "steps": 300, "seed": 0}  # fmt: skip


def _curve(**changes: object) -> dict[str, np.ndarray]:
    """The stored arrays of the curve whose settings are the defaults with ``changes``."""
    want = DEFAULT | changes
    with np.load(SWEEP, allow_pickle=False) as z:
        index = json.loads(bytes(z["index"]).decode("utf-8"))["curves"]
        (i,) = [i for i, e in enumerate(index) if e["settings"] == want]
        return {k: z[f"c{i}/{k}"] for k in ("loss", "grad_norm", "val_steps", "val_loss")}


def readouts(c: dict[str, np.ndarray], clip: float | None, source: str) -> list[Ref]:
    """The readouts of one curve (bits = nats / ln 2)."""
    val_bits = float(c["val_loss"][-1]) / math.log(2)
    loss = np.where(np.isfinite(c["loss"]), c["loss"], np.inf)
    top, at = float(loss.max()) / math.log(2), int(loss.argmax()) + 1
    g = int(np.argmax(c["grad_norm"]))
    above = top > UNIFORM  # a spike above the uniform guess; every shipped curve ends below it (no divergence)
    assert float(c["loss"][-1]) / math.log(2) < UNIFORM and float(c["val_loss"][-1]) / math.log(2) < UNIFORM
    clipped = "no clipping" if clip is None else f"clipped to {clip:g}"
    refs = [
        Ref(f"Held-out loss, last evaluation: {val_bits:.2f} bits/byte", val_bits),
        Ref(f"Held-out loss, last evaluation help: step {int(c['val_steps'][-1])}, {float(c['val_loss'][-1]):.3f} "
            "nats per byte, on the first 32 held-out windows of 64 bytes", GIVEN, float(c["val_loss"][-1]), LAB, LAB),
        Ref(f"Highest train loss: {top:.2f} bits/byte", top),
        Ref(f"Highest train loss help: at step {at}: "
            + ("above the uniform guess's 8 bits, then back below: a spike with fast recovery" if above
               else "never above the uniform guess's 8 bits"), STEP, UNIFORM),
        Ref(f"Peak gradient norm: {float(c['grad_norm'][g]):.3g}", float(c["grad_norm"][g])),
        Ref(f"Peak gradient norm help: before clipping, at step {g + 1}; {clipped}", STEP,
            *([] if clip is None else [GIVEN])),
    ]  # fmt: skip
    return refs + ([Ref(f"Curve help: {source}", GIVEN)] if any(ch.isdigit() for ch in source) else [])


def panel(c: dict[str, np.ndarray], head: str, head_values: tuple) -> list[Ref]:
    """The readout panel in the figure's corner."""
    val_bits = float(c["val_loss"][-1]) / math.log(2)
    loss = np.where(np.isfinite(c["loss"]), c["loss"], np.inf)
    top, at = float(loss.max()) / math.log(2), int(loss.argmax()) + 1
    return [
        Ref(f"{head} held-out at step {int(c['val_steps'][-1])}: {val_bits:.2f} bits/byte highest train loss: "
            f"{top:.2f} bits (step {at})", *head_values, GIVEN, val_bits, top, STEP),
    ]  # fmt: skip


FIGURE = [Ref("uniform guess, 8 bits/byte", UNIFORM)]
GOOD = _curve()
DEFAULTS = [*readouts(GOOD, 1.0, "precomputed by make lab-sweep at these settings"),
            *panel(GOOD, "peak LR 3e-3", (GIVEN,)), *FIGURE]  # fmt: skip
TWIN_BITS = float(GOOD["val_loss"][-1]) / math.log(2)


def preset(changes: dict, clip: float | None, twin: str, twin_values: tuple, twin_curve: dict | None = None,
           layers: int = 2, sweep: str = "") -> list[Ref]:  # fmt: skip
    """A preset's view: its curve's readouts and panel, its twin's readout and legend entry. ``sweep``: the preset's
    learning rate is a step of the sweep, whose figure (with that step's panel) it shows instead, the twin a step of
    the same drag."""
    c = _curve(**changes)
    tc = GOOD if twin_curve is None else twin_curve
    tb = float(tc["val_loss"][-1]) / math.log(2)
    refs = [
        *readouts(c, clip, ""),
        *(panel(c, f"peak LR {sweep}", (GIVEN,)) if sweep else panel(c, "shipped curve", ())),
        Ref(f"Its twin's held-out loss: {tb:.2f} bits/byte", tb),
        Ref(f"Its twin's held-out loss help: {twin}", *twin_values),
    ]
    if not sweep:  # the twin's legend entry; a sweep step's twin is another step of the drag, not a trace of its own
        refs.append(Ref(f"held-out, {twin}", *twin_values))
    if not sweep:
        refs.append(Ref("uniform guess, 8 bits/byte", UNIFORM))
    shown = {r.snippet for r in DEFAULTS}  # a preset's view lists only the texts the defaults do not show
    return [r for r in refs if r.snippet not in shown]


LAB_VIEWS: dict[str, list[Ref]] = {
    "defaults": DEFAULTS,
    "preset A5.5: learning rate too high": preset({"lr": 3e-2}, 1.0, "peak LR 3e-3", (GIVEN,), sweep="3e-2"),
    "preset A1.6: no warm-up": preset({"warmup": 0}, 1.0, "20 warm-up steps", (GIVEN,)),
    "preset post-norm: stalls in this toy": preset({"norm": "post", "layers": 6}, 1.0, "pre-norm, same depth", (),
                                              _curve(layers=6), layers=6),
    "preset A1.11: no gradient clipping": preset({"clip": None}, None, "clipped at norm 1", (GIVEN,)),
}  # fmt: skip

TABLES: dict[str, dict[str, list[Ref]]] = {"pages/19_Training_lab.py": LAB_VIEWS}
_ = FORMULA
