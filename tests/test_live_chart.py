"""The frame's live chart (pages/frame/charts.py): one element per chart key across reruns, a new figure in its
data, plotly.js copied from plotly's cartesian bundle (or the plotly package's full copy where their versions differ),
and Streamlit's own chart where the copy cannot be made or a figure needs a trace type the bundle lacks."""

from __future__ import annotations

import hashlib
import json
import re
import sys
import threading
from pathlib import Path

import plotly
import plotly.graph_objects as go
import pytest

import pages.frame.charts as live
from tests.apptest import charts, figures, no_exception, open_page

SCALING = "pages/1_Scaling_laws.py"


def _texts(fig: dict) -> list[str]:
    return [a.get("text", "") for a in fig["layout"].get("annotations", [])]


def test_a_new_figure_reaches_the_same_element():
    at = open_page(SCALING, {"gpus": "8"})
    first = charts(at)
    assert first and all(c.live for c in first)  # every chart of the page is live
    before = figures(at)[0]
    at.number_input(key="gpus").set_value(64).run()
    no_exception(at)
    after = charts(at)
    # the element keeps its id (the browser updates the mounted chart) while the figure it carries changes
    assert [c.id for c in after] == [c.id for c in first]
    assert json.loads(after[0].spec) != before
    # 8 GPUs -> 64: an eighth of the training time (4.4 days x 24 / 8 = 13.2 h)
    assert "training 4.4 days" in _texts(before)[0] and "training 13.2 h" in _texts(figures(at)[0])[0]


def test_the_alt_text_and_the_export_config_travel_with_the_figure():
    at = open_page(SCALING)
    chart = next(e for e in at.get("bidi_component") if e.proto.component_name == live.COMPONENT)
    (data,) = json.loads(chart.proto.json)
    assert data["config"]["toImageButtonOptions"]["filename"] == "isoflop-u-curve"
    assert data["config"]["toImageButtonOptions"]["format"] == "png"
    assert "Readouts, " in data["alt"]
    assert data["stretch"] is False
    presenter = open_page(SCALING, {"present": "true"})
    stretched = [
        json.loads(c.proto.json)[0]["stretch"]
        for c in presenter.get("bidi_component")
        if c.proto.component_name == live.COMPONENT
    ]
    assert stretched and all(stretched)  # presenter mode: as tall as the screen leaves


FULL = Path(plotly.__file__).parent / "package_data" / "plotly.min.js"


def test_the_cartesian_bundle_is_served_where_its_version_is_the_plotly_packages(tmp_path: Path, monkeypatch):
    """The headers name the version: "plotly.js v4.1.1" (the package's) and "plotly.js (cartesian - minified)
    v4.1.1" (the bundle's); read here with a pattern of the test's own."""

    def version(path: Path) -> str:
        return re.search(rb"plotly\.js[^\n]* v([0-9.]+)\n", path.read_bytes()[:400]).group(1).decode()

    live.plotly_js_source.cache_clear()
    try:
        chosen = live.plotly_js_source()
        assert chosen == (live.CARTESIAN_JS if version(live.CARTESIAN_JS) == version(FULL) else FULL)
        assert live.bundle_version(FULL) == version(FULL) and live.bundle_version(live.CARTESIAN_JS) == "4.1.1"
        # another version of plotly.js in the package than the bundle's: the package's full copy is served
        other = tmp_path / "plotly-cartesian.min.js"
        other.write_bytes(live.CARTESIAN_JS.read_bytes()[:400].replace(b" v4.1.1", b" v3.9.9"))
        monkeypatch.setattr(live, "CARTESIAN_JS", other)
        live.plotly_js_source.cache_clear()
        assert live.plotly_js_source() == FULL
        assert live.live_chart_draws(go.Figure(go.Sankey()))  # the full bundle draws every type
    finally:
        live.plotly_js_source.cache_clear()


def test_the_bundle_is_the_file_its_readme_names():
    readme = (live.CARTESIAN_JS.parent / "README.md").read_text(encoding="utf-8")
    (named,) = set(re.findall(r"\b[0-9a-f]{64}\b", readme))
    assert hashlib.sha256(live.CARTESIAN_JS.read_bytes()).hexdigest() == named


def test_plotly_js_is_copied_from_its_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    source = live.plotly_js_source()
    monkeypatch.setattr(live, "STATIC", tmp_path / "static")
    monkeypatch.setattr(live, "_ready", None)
    assert live.live_chart_ready()
    assert (tmp_path / "static" / live.PLOTLY_JS).read_bytes() == source.read_bytes()
    # a stale copy (another bundle, or another plotly version) is replaced
    (tmp_path / "static" / live.PLOTLY_JS).write_text("old")
    monkeypatch.setattr(live, "_ready", None)
    assert live.live_chart_ready()
    assert (tmp_path / "static" / live.PLOTLY_JS).stat().st_size == source.stat().st_size


def test_sessions_that_ask_at_once_on_a_fresh_server_all_get_live_charts(tmp_path: Path, monkeypatch):
    """A class opening its first page: many sessions' threads ask for the copy at once. Each answer is True, one thread
    copies, the copy is the source byte for byte and readable by every user (nginx may be another), and no temporary
    file is left (with one tmp name per process, two threads' copies raced and the loser turned live charts off for
    the whole process: 79 of 200 rounds of 4 threads, measured 2026-12-06)."""
    source = live.plotly_js_source()
    digest = hashlib.sha256(source.read_bytes()).hexdigest()
    copies: list[str] = []
    copyfile = live.shutil.copyfile

    def counted(src, dst):
        copies.append(str(dst))
        return copyfile(src, dst)

    monkeypatch.setattr(live.shutil, "copyfile", counted)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as the interpreter can
    try:
        for round_ in range(12):
            static = tmp_path / f"static{round_}"
            monkeypatch.setattr(live, "STATIC", static)
            monkeypatch.setattr(live, "_ready", None)
            gate = threading.Barrier(8)
            answers: list[bool] = []

            def ask(gate: threading.Barrier, answers: list[bool]) -> None:
                gate.wait()
                answers.append(live.live_chart_ready())

            threads = [threading.Thread(target=ask, args=(gate, answers)) for _ in range(8)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            assert answers == [True] * 8, (round_, answers)
            assert len(copies) == round_ + 1  # one copy a round: the other threads waited for its answer
            assert [p.name for p in static.iterdir()] == [live.PLOTLY_JS]
            copied = static / live.PLOTLY_JS
            assert hashlib.sha256(copied.read_bytes()).hexdigest() == digest
            assert copied.stat().st_mode & 0o444 == 0o444
    finally:
        sys.setswitchinterval(old)


# Figures with a trace type the cartesian bundle lacks: the KL page's policy cloud (4,000 dots in WebGL, scattergl).
# Streamlit's own chart draws them, with its own full copy of plotly.js, loaded when such a figure is first shown.
OUTSIDE_THE_BUNDLE = {"kl_theorem_figure": {"scattergl"}}


def test_every_figure_the_lessons_draw_but_the_policy_cloud_has_trace_types_of_the_cartesian_bundle():
    """Every figure builder's example (tests/test_viz_style.py, one per public builder) uses only trace types the
    cartesian bundle registers (its README's list, checked against the bundle itself in the browser:
    tests/browser/test_live_chart_browser.py), but :data:`OUTSIDE_THE_BUNDLE`."""
    from tests.test_viz_style import EXAMPLES

    used = {name: {t.type for t in make(theme="light", presenter=False).data} for name, make in EXAMPLES.items()}
    assert len(used) >= 50  # 55 on 2026-12-04
    outside = {name: types - live.CARTESIAN_TRACES for name, types in used.items() if types - live.CARTESIAN_TRACES}
    assert outside == OUTSIDE_THE_BUNDLE
    assert set().union(*used.values()) >= {"scatter", "bar", "heatmap"}


def test_the_policy_cloud_is_streamlits_chart_and_the_other_kl_figures_are_live():
    at = open_page("pages/2_KL_leash.py", {"kl_view": "Theorem check"})
    no_exception(at)
    drawn = {json.loads(c.spec)["data"][0]["type"]: c.live for c in charts(at)}
    assert drawn.get("scattergl") is (live.plotly_js_source() != live.CARTESIAN_JS), drawn
    assert sum(drawn.values()) >= 1, drawn  # the page's main figure stays live


def test_a_figure_with_a_trace_type_outside_the_bundle_goes_to_streamlits_chart(monkeypatch):
    monkeypatch.setattr(live, "plotly_js_source", lambda: live.CARTESIAN_JS)
    assert live.live_chart_draws(go.Figure([go.Scatter(y=[1, 2]), go.Heatmap(z=[[1, 2]]), go.Bar(y=[1])]))
    assert not live.live_chart_draws(go.Figure([go.Scatter(y=[1, 2]), go.Sankey()]))
    assert not live.live_chart_draws(go.Figure(go.Scattergl(y=[1, 2])))


def test_unwritable_static_folder_falls_back_to_streamlits_chart(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    blocker = tmp_path / "static"
    blocker.write_text("a file where the folder should be")  # mkdir fails even for root
    monkeypatch.setattr(live, "STATIC", blocker)
    monkeypatch.setattr(live, "_ready", None)
    assert not live.live_chart_ready()
    at = open_page(SCALING)
    no_exception(at)
    assert charts(at) and not any(c.live for c in charts(at))
    assert at.get("plotly_chart")  # the same figures, drawn by st.plotly_chart


def test_the_environment_switch_gives_streamlits_chart(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LESSON_CHART", "streamlit")
    at = open_page(SCALING)
    no_exception(at)
    assert charts(at) and not any(c.live for c in charts(at))
