"""In a real browser: the frame's live chart (pages/frame/charts.py) stays mounted when a control changes, and the
figure it shows is the new one: the same drawing as a fresh tab's on the new link; and the plotly.js it loaded
registers the trace types the frame counts on (pages/frame/charts.py: the cartesian bundle's, from its README)."""

import pytest

from pages.frame import charts

pytestmark = pytest.mark.browser

_STATE = """() => {
  const gd = document.querySelector(".lesson-chart");
  return {
    mark: gd.__testMark || null,
    panel: gd.querySelector("g.annotation-text-g").textContent,
    drawn: gd.dataset.drawn === gd.dataset.version,
    role: gd.getAttribute("role"),
    label: gd.getAttribute("aria-label"),
  };
}"""


def test_a_control_change_updates_the_mounted_chart(open_shared):
    watch = open_shared("/Scaling_laws?gpus=8")
    page = watch.page
    # both charts drawn (each mounts and draws on its own): a draw of the second after the patch below would count
    page.wait_for_function(
        """() => { const charts = [...document.querySelectorAll('.lesson-chart')];
                   return charts.length >= 2
                     && charts.every(c => c.dataset.version && c.dataset.drawn === c.dataset.version); }""",
        timeout=60_000,
    )
    page.evaluate("() => { document.querySelector('.lesson-chart').__testMark = 'first'; }")
    # the budget family (the second chart) does not depend on the GPU count: count the figures handed to plotly for it
    page.evaluate(
        "() => { const gd = document.querySelectorAll('.lesson-chart')[1]; const react = window.Plotly.react;"
        " window.__familyDraws = 0;"
        " window.Plotly.react = function (el, ...rest) { if (el === gd) window.__familyDraws += 1;"
        " return react.call(this, el, ...rest); }; }"
    )
    traces = set(page.evaluate("() => Object.keys(window.Plotly.PlotSchema.get().traces)"))
    if charts.plotly_js_source() == charts.CARTESIAN_JS:
        assert traces == charts.CARTESIAN_TRACES, traces
    else:  # the plotly package's full bundle
        assert traces > charts.CARTESIAN_TRACES | {"scattergl", "sankey"}, traces
    before = page.evaluate(_STATE)
    assert "training 4.4 days" in before["panel"] and before["drawn"], before
    assert before["role"] == "figure" and "Readouts, " in before["label"], before

    box = page.locator("[data-testid='stSidebar'] .st-key-gpus input")
    box.fill("64")
    box.press("Enter")
    page.wait_for_function(
        "() => document.querySelector('.lesson-chart g.annotation-text-g').textContent.includes('training 13.2 h')",
        timeout=30_000,
    )
    watch.wait_idle()
    after = page.evaluate(_STATE)
    assert after["mark"] == "first", after  # the same element: plotly diffed the new figure in, no new chart
    assert after["drawn"] and "Readouts, " in after["label"], after
    assert "gpus=64" in page.url
    assert page.evaluate("() => window.__familyDraws") == 0  # no new figure, no new draw

    fresh = open_shared(page.url.replace(watch.base, ""))
    fresh.page.wait_for_selector(".lesson-chart .main-svg", timeout=60_000)
    assert fresh.page.evaluate(_STATE)["panel"] == after["panel"]
    assert watch.errors == [] and fresh.errors == []
    assert watch.external == [] and fresh.external == []
