"""LESSON_BODY, the comparison switch of bench/bench_body.py: a page's body ends before or after its readouts, the
rest of the page (frame, controls, main figure, share link) as usual; any other value changes nothing."""

import pytest

from tests.apptest import charts, no_exception, open_page

SCALING = "pages/1_Scaling_laws.py"


def _main_metrics(at) -> int:
    return sum(1 for m in at.metric if m not in at.sidebar.metric)


def _subheaders(at) -> list[str]:
    return [h.value for h in at.subheader]


@pytest.mark.parametrize(
    ("cut", "metrics", "texts"), [(None, 12, True), ("bogus", 12, True), ("readouts", 12, False), ("figure", 0, False)]
)
def test_the_body_ends_where_lesson_body_says(monkeypatch: pytest.MonkeyPatch, cut, metrics, texts):
    if cut is None:
        monkeypatch.delenv("LESSON_BODY", raising=False)
    else:
        monkeypatch.setenv("LESSON_BODY", cut)
    at = open_page(SCALING)
    assert no_exception(at)
    ids = [c.id for c in charts(at)]
    assert ids and ids[0].endswith("isoflop")  # the main figure is always drawn
    assert _main_metrics(at) == metrics
    assert ("Quick check" in _subheaders(at)) is texts
    assert any(i.endswith("family") for i in ids) is texts  # the views after the readouts go with the texts
    assert at.sidebar.number_input(key="gpus").value == 8  # the controls stay
    assert len(at.sidebar.code) == 1  # finish() ran: the link to this exact view
