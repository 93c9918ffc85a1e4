"""viz.reward_model: the numbers inside the traces and plotly's validation of every figure."""

import numpy as np
import plotly.graph_objects as go
import pytest

from core.reward_model import (
    accuracy_vs_noise,
    bradley_terry_fit,
    bradley_terry_nll,
    length_bias_sweep,
    preference_probability,
    sample_pairs,
)
from tests.test_viz_style import _tick_and_title_px, contrast, marks, over, texts
from viz.reward_model import accuracy_noise_figure, bradley_terry_figure, length_bias_figure
from viz.style import PALETTE, READOUT

TRUE = np.array([-1.0, 0.0, 0.5, 1.5])


def _bt(shift=0.0):
    pairs = sample_pairs(TRUE + 2.0, 400, seed=0)
    fit = bradley_terry_fit(pairs, n_items=4)
    m = np.linspace(-6, 6, 121)
    shifted = bradley_terry_nll(fit.rewards + shift, pairs)
    return fit, bradley_terry_figure(fit, TRUE + 2.0, m, preference_probability(m, 0.0), shift=shift,
                                     shifted_nll=shifted)  # fmt: skip


def test_bradley_terry_figure_shows_the_sigmoid_and_centred_rewards():
    fit, fig = _bt(shift=3.0)
    curve, true_bars, fit_bars = fig.data
    assert float(curve.y[60]) == 0.5 and float(curve.y[-1]) == pytest.approx(1 / (1 + np.exp(-6)))
    np.testing.assert_allclose(true_bars.y, TRUE - TRUE.mean())  # the +2 is gone: only differences count
    np.testing.assert_allclose(fit_bars.y, fit.rewards + 3.0)
    assert fit_bars.name == "fitted reward + 3" and fit_bars.marker.color == PALETTE["optimised"]
    text = fig.layout.annotations[0].text
    nll = f"{fit.nll:.4f}"
    assert text.count(nll) == 2 and "after adding 3 to every reward" in text  # the same loss after the shift
    with pytest.raises(ValueError, match="labels"):
        bradley_terry_figure(fit, TRUE, [0.0], [0.5], labels=["a"])


def test_accuracy_noise_figure():
    s = accuracy_vs_noise(np.linspace(-2, 2, 8), flips=(0.0, 0.25, 0.5), n_train=200, n_test=500)
    fig = accuracy_noise_figure(s)
    np.testing.assert_allclose(fig.data[0].y, s.heldout_accuracy)
    np.testing.assert_allclose(fig.data[1].y, s.ceiling)
    np.testing.assert_allclose(fig.data[2].y, s.true_accuracy)
    band = fig.layout.shapes[0]
    assert (band.y0, band.y1) == (0.6, 0.75)
    assert not fig.layout.sliders and len(fig.data) == 3  # no flip rate given: no markers, no slider


def test_accuracy_noise_figure_slider_moves_the_markers_and_the_readout():
    s = accuracy_vs_noise(np.linspace(-2, 2, 8), flips=(0.0, 0.25, 0.5), n_train=200, n_test=500)
    fig = accuracy_noise_figure(s, 0.25).to_dict()
    slider = fig["layout"]["sliders"][0]
    assert [st["label"] for st in slider["steps"]] == ["0", "0.25", "0.5"] and slider["active"] == 1
    panel = fig["layout"]["annotations"][0]
    assert panel["name"] == READOUT and panel["x"] == 1.0 and fig["layout"]["xaxis"]["domain"][1] < 0.8
    for i, step in enumerate(slider["steps"]):
        updates, relayout, indices = step["args"]
        assert list(indices) == [3] and set(updates) == {"x", "y"} and set(relayout) == {"annotations[0].text"}
        assert list(updates["x"][0]) == [s.flip[i]] * 3
        np.testing.assert_allclose(updates["y"][0], [s.ceiling[i], s.true_accuracy[i], s.heldout_accuracy[i]],
                                   atol=5e-6)  # fmt: skip
        text = relayout["annotations[0].text"]
        assert f"held-out accuracy {100 * s.heldout_accuracy[i]:.1f}%" in text
        assert (
            f"true rewards (the ceiling, up to sampling noise) {100 * s.ceiling[i]:.1f}%" in text
            and f"fitted order vs the true order {100 * s.true_accuracy[i]:.1f}%" in text
        )
    assert panel["text"] == slider["steps"][1]["args"][1]["annotations[0].text"]
    assert list(fig["data"][3]["x"]) == [0.25] * 3
    with pytest.raises(ValueError):
        accuracy_noise_figure(s, 0.3)  # not a rate of the study


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("presenter", [False, True])
def test_accuracy_noise_figure_with_its_slider_is_valid_and_readable(theme, presenter):
    s = accuracy_vs_noise(np.linspace(-2, 2, 6), flips=(0.0, 0.25, 0.5), n_train=60, n_test=60)
    fig = accuracy_noise_figure(s, 0.0, theme=theme, presenter=presenter).to_dict()
    go.Figure(fig)
    low = [(w, c) for w, c, behind in texts(fig) if c is None or contrast(over(c, behind), behind) < 4.5]
    assert not low and not [r for _, r in marks(fig) if r is not None and r < 3.0]
    assert fig["layout"]["sliders"][0]["pad"]["t"] >= _tick_and_title_px(fig["layout"])


def test_length_bias_figure_marks_the_page_beta():
    s = length_bias_sweep()
    fig = length_bias_figure(s, 0.3)
    np.testing.assert_allclose(fig.data[0].y, s.mean_length)
    np.testing.assert_allclose(fig.data[2].y, s.true_reward)
    i = int(np.argmin(np.abs(np.log(s.beta / 0.3))))
    assert float(fig.data[3].x[0]) == pytest.approx(s.beta[i]) and float(fig.data[3].y[0]) == s.mean_length[i]
    assert fig.layout.shapes[0].y0 == pytest.approx(177.5)  # the SFT model's mean length
    assert fig.layout.shapes[1].y0 == pytest.approx(0.555)  # and its true quality
    assert f"{s.mean_length[i]:.0f} tokens" in fig.layout.annotations[2].text
    assert fig.layout.xaxis2.type == "log"


def test_every_figure_is_valid_plotly():
    s = accuracy_vs_noise(np.linspace(-2, 2, 5), flips=(0.0, 0.5), n_train=50, n_test=50)
    for fig in (_bt()[1], accuracy_noise_figure(s), length_bias_figure(length_bias_sweep(), 1.0)):
        go.Figure(fig.to_dict())  # raises ValueError on an invalid property
