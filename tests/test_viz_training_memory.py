"""viz.training_memory: the bars carry core's bytes in GiB, the card's line and the trap's line sit where they
should, and plotly accepts both figures."""

import numpy as np
import plotly.graph_objects as go
import pytest

from core.hardware import GB, GIB, GPUS
from core.training_memory import pipeline_bubble, state_memory
from viz.training_memory import memory_text, pipeline_bubble_figure, training_memory_figure


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
    assert any("114 GiB" in t and "✗" in t for t in texts)  # ZeRO-0 does not fit: 104.3 + 10 GiB, 3 figures
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


def test_a_sequence_length_slider_moves_the_activations_the_totals_and_the_readout():
    seqs = [1024, 2048, 4096]
    acts = np.array([[a] * 4 for a in (5 * GIB, 10 * GIB, 80 * GIB)])  # (steps, bars)
    trap = 80 * GB  # its line's label is annotation 1: the totals start at 2
    fig = _memory_figure(chosen=1, gb_misread_bytes=trap, seqs=seqs, seq_components={"activations": acts}, active=1)
    go.Figure(fig.to_dict())  # validates every property, the slider's included
    plain = _memory_figure(chosen=1, gb_misread_bytes=trap)  # 10 GiB of activations: the same bars
    assert [t.y.tolist() for t in fig.data] == [list(t.y) for t in plain.data]
    # the plot keeps its height: 76 px for the drag row's slider, 12 between the readout title and the legend
    assert fig.layout.height == plain.layout.height + 76 + 12
    assert fig.layout.margin.t >= plain.layout.margin.t + 12
    slider = fig.layout.sliders[0]
    assert slider.active == 1 and [s.label for s in slider.steps] == ["1,024", "2,048", "4,096"]
    states1 = 7e9 * (2 + 2 + 12 / 8)  # ZeRO-1 over 8: 35.86 GiB, and 5, 10 or 80 GiB of activations
    shown = [  # (activations, ZeRO-1's total, headroom) to three significant figures
        ("5.00 GiB", "40.9 GiB", "+39.1 GiB"),
        ("10.0 GiB", "45.9 GiB", "+34.1 GiB"),
        ("80.0 GiB", "116 GiB", "−35.9 GiB"),
    ]
    for i, step in enumerate(slider.steps):
        restyle, relayout, traces = step.args
        assert list(traces) == [3]  # the activations' bars; weights, gradients and optimizer states stay
        assert list(restyle["y"][0]) == [acts[i, 0] / GIB] * 4
        assert list(restyle["customdata"][0]) == [acts[i, 0] / 1e9] * 4
        total = states1 + acts[i, 1]
        # annotation 0: the card's label, 1: the trap's, then one total per bar
        headroom = (80 * GIB - total) / GIB
        assert f"{total / GIB:.3g} GiB" == shown[i][1] and f"{headroom:+.3g} GiB" == shown[i][2].replace("−", "-")
        assert relayout["annotations[3].text"].startswith(f"<b>{shown[i][1]}</b>")
        assert relayout["annotations[3].y"] == pytest.approx(total / GIB)
        assert ("✗" in relayout["annotations[3].text"]) == (total > 80 * GIB)
        assert relayout["yaxis.range"][1] == pytest.approx(max(80, (7e9 * 16 + acts[i, 0]) / GIB) * 1.15)
        assert relayout["title.text"] == (
            f"seq {seqs[i]:,}: activations {shown[i][0]} per GPU<br>ZeRO-1 total {shown[i][1]} per GPU, "
            f"headroom {shown[i][2]} of 80 GiB"
        )
    assert fig.layout.title.text == slider.steps[1].args[1]["title.text"]
    with pytest.raises(ValueError, match="shape"):
        _memory_figure(chosen=1, seqs=seqs, seq_components={"activations": acts[:2]}, active=1)
    with pytest.raises(ValueError, match="active"):
        _memory_figure(chosen=1, seqs=seqs, seq_components={"activations": acts}, active=3)


def test_the_slider_figure_in_presenter_mode_keeps_its_type_and_folds_the_y_title():
    from tests.apptest import font_sizes

    acts = np.full((2, 4), 10 * GIB)
    fig = _memory_figure(chosen=1, seqs=[2048, 4096], seq_components={"activations": acts}, active=1, presenter=True)
    assert all(size >= 16 for _, size in font_sizes(fig.to_plotly_json()["layout"]))
    # the readout's line takes height from the plot: the y axis's title goes on two lines
    assert fig.layout.yaxis.title.text == "memory per GPU (GiB,<br>1 GiB = 2³⁰ B = 1.074 GB)"


def test_memory_text_three_figures_larger_units_and_tiny_amounts():
    """Three significant figures in GiB; TiB, PiB, EiB once the unit below would print 1,000; '<0.1 GiB' for a
    non-zero amount under 0.1 GiB (4.25 MiB of activations at a sequence of 1), a headroom with its sign."""
    assert memory_text(0) == "0 GiB" and memory_text(34 * 4096 * 32) == "<0.1 GiB"
    assert [memory_text(x * GIB) for x in (0.1, 0.125, 8, 17, 58.14, 523.4, 999.4)] == [
        "0.100 GiB", "0.125 GiB", "8.00 GiB", "17.0 GiB", "58.1 GiB", "523 GiB", "999 GiB",
    ]  # fmt: skip
    assert memory_text(999.6 * GIB) == "0.976 TiB"  # 999.6 / 1,024: 1,000 GiB would be a fourth figure
    assert memory_text(4393.1 * GIB) == "4.29 TiB" and memory_text(5_247_232 * GIB) == "5.00 PiB"
    assert memory_text(1.15e20) == "99.7 EiB"  # 1.15e20 / 2^60
    assert memory_text(21.94 * GIB, signed=True) == "+21.9 GiB" and memory_text(-4522 * GIB, signed=True) == "−4.42 TiB"
    assert memory_text(0.05 * GIB, signed=True) == "+0.0500 GiB"  # a headroom keeps its figures and its sign
    with pytest.raises(ValueError):
        memory_text(float("nan"))
