"""The class's guesses binned for the projector (classroom.classes.guess_histogram) against a plain loop over the
guesses, and the two figures of class mode carrying those numbers."""

from __future__ import annotations

import copy
import math

import numpy as np
import pytest

from classroom.classes import guess_histogram
from viz.class_guesses import choices_figure, guesses_figure


def _loop_counts(values: list[float], edges: np.ndarray) -> list[int]:
    """Each value into the bin [e_i, e_(i+1)), the last bin closed: counted one by one."""
    counts = [0] * (len(edges) - 1)
    for v in values:
        for i in range(len(counts)):
            last = i == len(counts) - 1
            if edges[i] <= v < edges[i + 1] or (last and v == edges[i + 1]):
                counts[i] += 1
                break
    return counts


@pytest.mark.parametrize(
    ("values", "truth"),
    [([0.2, 0.5, 0.5, 0.9, 1.4, 0.75], 0.75), ([3.0] * 30 + [10.0] * 10, 0.0), (list(np.linspace(-5, 5, 400)), 8.0)],
)
def test_every_guess_lands_in_one_bin_and_the_truth_is_on_the_axis(values, truth) -> None:
    edges, counts = guess_histogram(tuple(values), truth)
    assert counts.sum() == len(values)
    assert list(counts) == _loop_counts(values, edges)
    assert edges[0] <= min(min(values), truth) and edges[-1] >= max(max(values), truth)
    bins = len(edges) - 1
    assert bins == min(20, max(5, math.ceil(math.sqrt(len(values)))))
    assert np.allclose(np.diff(edges), (edges[-1] - edges[0]) / bins)  # equal widths


def test_identical_guesses_and_truth_make_one_bin_and_no_guesses_make_empty_bins() -> None:
    edges, counts = guess_histogram((2.0, 2.0), 2.0)
    assert list(edges) == [1.5, 2.5] and list(counts) == [2]
    edges, counts = guess_histogram((), 3.0)
    assert list(counts) == [0] and list(edges) == [2.5, 3.5]


def test_log_bins_are_equal_in_decades_and_hold_every_guess() -> None:
    values = [2e9, 3e9, 7e9, 1.5e10, 8e10, 1e12]
    edges, counts = guess_histogram(tuple(values), 7e10, log=True)
    logs = np.log10(edges)
    assert np.allclose(np.diff(logs), (logs[-1] - logs[0]) / (len(edges) - 1))
    assert counts.sum() == len(values) and edges[0] == pytest.approx(2e9) and edges[-1] == pytest.approx(1e12)
    assert list(counts) == _loop_counts([float(np.log10(v)) for v in values], logs)


def test_the_guesses_figure_draws_the_counts_the_truth_and_the_own_guess() -> None:
    edges, counts = np.array([0.0, 0.5, 1.0, 1.5]), np.array([2, 5, 1])
    fig = guesses_figure(edges, counts, 0.75, own=1.2)
    bars, truth, own = fig.data
    assert list(bars.x) == [0.25, 0.75, 1.25] and list(bars.y) == [2, 5, 1]
    assert list(truth.x) == [0.75, 0.75] and truth.name == "true value 0.75"
    assert list(own.x) == [1.2, 1.2] and own.name == "your guess 1.2"
    assert fig.layout.title.text == "The class's guesses: 8"
    assert len(guesses_figure(edges, counts, 0.75).data) == 2  # the projector: no one's own guess


def test_the_choices_figure_names_the_right_option_and_outlines_the_own() -> None:
    fig = choices_figure(["KL(p‖q)", "KL(q‖p)", "both"], [4, 9, 2], answer=1, own=0, theme="dark", presenter=True)
    (bars,) = fig.data
    assert list(bars.x) == ["A. KL(p‖q)", "B. KL(q‖p) (right)", "C. both"] and list(bars.y) == [4, 9, 2]
    assert list(bars.marker.line.width) == [4, 0, 0]
    assert fig.layout.title.text == "The class's answers: 15"


def test_a_phone_copy_widens_the_plots_and_hides_the_title_and_the_readout_panel() -> None:
    from viz.style import READOUT, figure, get_theme, grid, phone_copy, readout_panel

    ids, layout = grid(1, 2)
    for axis in ("xaxis", "xaxis2"):  # a page's plots in the left 70%, its readout panel right of them
        layout[axis]["domain"] = [round(v * 0.7, 6) for v in layout[axis]["domain"]]
    layout["annotations"] = [readout_panel("<b>n = 4</b>", get_theme("light"))]
    layout["title"] = {"text": "a title"}
    data = [{"type": "scatter", "x": [0, 1], "y": [0, 1], "xaxis": x, "yaxis": y} for x, y in ids]
    fig = figure(data, layout)
    before = {k: tuple(v["domain"]) for k, v in fig.layout.to_plotly_json().items() if k.startswith("xaxis")}
    right = max(d[1] for d in before.values())
    phone = phone_copy(fig)
    after = {k: tuple(v["domain"]) for k, v in phone.layout.to_plotly_json().items() if k.startswith("xaxis")}
    assert right < 1 and max(d[1] for d in after.values()) == pytest.approx(1.0)
    for k, (lo, hi) in before.items():
        assert after[k] == pytest.approx((lo / right, hi / right))
    assert phone.layout.title.text is None
    panels = [a for a in phone.layout.annotations if a.name == READOUT]
    assert panels and all(a.visible is False for a in panels)
    assert fig.layout.title.text and all(a.visible is not False for a in fig.layout.annotations)  # the original kept


class _Frozen(dict):
    """A trace's properties that fail the test on any change to its own keys: plotly's own copy of a figure
    (``go.Figure(fig)``) pops the source trace's ``type`` and puts it back, which a session drawing the same shared
    figure saw as a KeyError."""

    def _changed(self, *args, **kwargs):
        raise AssertionError(f"the source figure's trace was changed: {args[:1]}")

    pop = popitem = clear = update = setdefault = __setitem__ = __delitem__ = _changed

    def __deepcopy__(self, memo: dict) -> dict:  # a copy is a plain dict, free to change
        return copy.deepcopy(dict(self), memo)


def test_a_phone_copy_never_changes_the_shared_figure_even_for_a_moment() -> None:
    import plotly.graph_objects as go

    from viz.style import phone_copy

    fig = go.Figure([go.Bar(x=[1, 2], y=[3, 4]), go.Scatter(x=[0, 1], y=[1, 0])], {"title": {"text": "t"}})
    fig._data = [_Frozen(d) for d in fig._data]  # what each trace object reads its properties from
    with pytest.raises(AssertionError, match="changed"):
        go.Figure(fig)  # the guard sees plotly's copy (without this check, a guard that saw nothing would pass)
    phone = phone_copy(fig)
    assert [t.type for t in phone.data] == ["bar", "scatter"] and [t.type for t in fig.data] == ["bar", "scatter"]
    assert list(phone.data[0].y) == [3, 4] and fig.layout.title.text == "t" and phone.layout.title.text is None
