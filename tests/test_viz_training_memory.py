"""viz.training_memory: the bars carry core's bytes in GiB, the card's line and the trap's line sit where they
should, and plotly accepts both figures."""

import numpy as np
import plotly.graph_objects as go
import pytest

from core.hardware import GB, GIB, GPUS
from core.training_memory import pipeline_bubble, state_memory
from viz.training_memory import pipeline_bubble_figure, training_memory_figure


def _memory_figure(**kw):
    states = [state_memory(7e9, zero=z, dp=8) for z in range(4)]
    comps = {
        "weights": [s.weights for s in states],
        "gradients": [s.gradients for s in states],
        "optimizer states": [s.optimizer for s in states],
        "activations": [10 * GIB] * 4,
    }
    h100 = GPUS["H100"]
    return training_memory_figure(["ZeRO-0", "ZeRO-1", "ZeRO-2", "ZeRO-3"], comps, h100.memory_bytes, "H100", **kw)


def test_training_memory_bars_in_gib():
    fig = _memory_figure(chosen=1, gb_misread_bytes=80 * GB)
    go.Figure(fig.to_dict())  # validates every property
    bars = {t.name: np.asarray(t.y) for t in fig.data}
    # 7B, ZeRO-0: 2 + 2 + 12 bytes per parameter = 112 GB (lesson 001 section 3.2) = 104.3 GiB of states
    states0 = sum(bars[k][0] for k in ("weights", "gradients", "optimizer states"))
    assert states0 * GIB == pytest.approx(112e9)
    # ZeRO-1 over 8: the optimizer's 12 bytes shrink to 1.5
    assert bars["optimizer states"][1] * GIB == pytest.approx(7e9 * 12 / 8)
    assert bars["activations"].tolist() == [10.0] * 4
    lines = [s for s in fig.layout.shapes if s.type == "line"]
    assert lines[0].y0 == 80.0  # the card: 80 GiB
    assert lines[1].y0 == pytest.approx(80e9 / 2**30)  # the trap: 74.5 GiB
    texts = [a.text for a in fig.layout.annotations]
    assert any("80 GiB = 85.9 GB" in t for t in texts)
    assert any("114.3 GiB" in t and "✗" in t for t in texts)  # ZeRO-0 does not fit
    assert "GiB" in fig.layout.yaxis.title.text and "1.074 GB" in fig.layout.yaxis.title.text
    rect = next(s for s in fig.layout.shapes if s.type == "rect")
    assert rect.x0 == pytest.approx(0.52)


def test_training_memory_rejects_ragged_components():
    with pytest.raises(ValueError):
        training_memory_figure(["a", "b"], {"weights": [1.0]}, 80 * GIB, "H100")


def test_pipeline_bubble_figure_values():
    m = np.arange(1, 65)
    fig = pipeline_bubble_figure(m, {p: pipeline_bubble(p, m) for p in (2, 8)}, (8, 8, 7 / 15), target=0.1)
    go.Figure(fig.to_dict())
    p8 = next(t for t in fig.data if t.name == "p = 8 stages")
    # (p - 1)/(m + p - 1) by hand: m = 1 -> 7/8, m = 8 -> 7/15, m = 63 -> 7/70 = 10%
    assert p8.y[0] == pytest.approx(7 / 8) and p8.y[7] == pytest.approx(7 / 15) and p8.y[62] == pytest.approx(0.1)
    dot = fig.data[-1]
    assert dot.x[0] == 8 and dot.y[0] == pytest.approx(0.4667, abs=1e-4)
    assert fig.layout.shapes[0].y0 == 0.1
