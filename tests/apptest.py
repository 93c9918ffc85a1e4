"""Helpers for AppTest page tests: open a page as a deep link would (fresh, or once per process for pages that are
only read), set widgets the way a link sets them, check that a link reproduces a state and that bad links fall
back, and read plotly figures' data."""

from __future__ import annotations

import base64
import functools
import json
import re
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np
from streamlit.testing.v1 import AppTest

from bench.harness import open_page
from pages.frame.charts import COMPONENT as LIVE_CHART

# Link values every page must survive: text, NaN, infinities, overflow, negative, zero, empty.
BAD_LINK_VALUES = ("abc", "nan", "NaN", "inf", "-inf", "1e400", "-5", "0", "")


@dataclass(frozen=True)
class Chart:
    """One figure on the page as the browser gets it: its plotly JSON, its text alternative and its element id."""

    spec: str
    alt: str
    id: str
    live: bool  # drawn by the frame's live chart (pages/frame/charts.py), not st.plotly_chart
    sweep: str | None = None  # the live chart's drag row (JSON), where its figure's slider became one


def _elements(node: Any) -> Iterator[Any]:
    children = getattr(node, "children", None)
    if children is None:
        yield node
        return
    for child in children.values():
        yield from _elements(child)


def charts(at: AppTest) -> list[Chart]:
    """Every plotly figure on the page, in page order: the frame's live charts and ``st.plotly_chart`` alike."""
    out = []
    for element in _elements(at._tree):
        kind = getattr(element, "type", None)
        if kind == "plotly_chart":
            out.append(Chart(element.proto.spec, element.proto.alt, element.proto.id, live=False))
        elif kind == "bidi_component" and element.proto.component_name == LIVE_CHART:
            (data,) = json.loads(element.proto.json)  # the frame sends a component's data as a one-item list
            out.append(Chart(data["figure"], data["alt"], element.proto.id, live=True, sweep=data.get("sweep")))
    return out


def figures(at: AppTest) -> list[dict[str, Any]]:
    """The plotly figures on the page, as JSON dicts, in page order; a live chart's drag row under ``"sweep"``."""
    out = []
    for chart in charts(at):
        fig = json.loads(chart.spec)
        if chart.sweep is not None:
            fig["sweep"] = json.loads(chart.sweep)
        out.append(fig)
    return out


def trigger(at: AppTest, chart: Chart, event: str, value: str) -> AppTest:
    """What the browser sends when a live chart's script calls ``setTriggerValue(event, value)`` (a drag row's
    ``value`` at the end of a drag, a ``click`` on a point), then the rerun it starts."""
    from streamlit.components.v2.bidi_component.main import _make_trigger_id
    from streamlit.proto.WidgetStates_pb2 import WidgetStates

    states = WidgetStates()
    states.CopyFrom(at._tree.get_widget_states())
    state = states.widgets.add()
    state.id = _make_trigger_id(chart.id, "events")
    state.json_trigger_value = json.dumps([{"event": event, "value": value}])
    return at._run(states)


def slider_of(fig: dict[str, Any]) -> dict[str, Any]:
    """The figure's drag control in plotly's slider form (``active``, ``steps`` of ``label``, ``method``,
    ``args``): the drag row the browser got (``fig["sweep"]``), or plotly's own slider where the figure kept it."""
    sweep = fig.get("sweep")
    if sweep is None:
        return fig["layout"]["sliders"][0]
    steps = [step | {"label": label} for step, label in zip(sweep["steps"], sweep["labels"], strict=True)]
    return {"active": sweep["active"], "steps": steps, "currentvalue": {"prefix": sweep["prefix"]}}


def decode(value: Any) -> np.ndarray:
    """A plotly data array: a plain list, or plotly's base64 typed array {dtype, bdata, shape}."""
    if isinstance(value, dict) and "bdata" in value:
        arr = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        if "shape" in value:
            shape = value["shape"]
            shape = [int(s) for s in shape.split(",")] if isinstance(shape, str) else shape
            arr = arr.reshape(shape)
        return arr
    return np.asarray(value)


def trace(fig: dict[str, Any], name_part: str) -> dict[str, Any]:
    """The first trace whose name contains ``name_part``."""
    for tr in fig["data"]:
        if name_part in (tr.get("name") or ""):
            return tr
    raise KeyError(f"no trace named like {name_part!r}: {[t.get('name') for t in fig['data']]}")


def font_sizes(obj: Any, where: str = "") -> Iterator[tuple[str, float]]:
    """(where, size) of every font size written in a figure's JSON."""
    if isinstance(obj, dict):
        for key, value in obj.items():
            if key.endswith("font") and isinstance(value, dict) and "size" in value:
                yield f"{where}.{key}", value["size"]
            yield from font_sizes(value, f"{where}.{key}")
    elif isinstance(obj, list):
        for i, value in enumerate(obj):
            yield from font_sizes(value, f"{where}[{i}]")


# Readouts that report a wall-clock time, not a computed number: two runs of one view differ (the LoRA page's SVD
# reads 0.8 ms from a process-wide cache and 3.4 ms when an earlier test has pushed that matrix out of it).
MEASURED = frozenset({"SVD (once per matrix)"})


def metrics(at: AppTest, measured: bool = False) -> dict[str, str]:
    """label -> value of every st.metric on the page; the MEASURED ones only when ``measured`` is true."""
    return {m.label: m.value for m in at.metric if measured or m.label not in MEASURED}


def no_exception(at: AppTest) -> bool:
    return len(at.exception) == 0


@functools.lru_cache(maxsize=64)
def _opened(page: str | None, query: tuple[tuple[str, str], ...]) -> AppTest:
    return open_page(page, dict(query))


def opened(page: str | None, query: dict[str, str] | None = None) -> AppTest:
    """:func:`open_page`, run once per process for each (page, query): for tests that only READ the page (compare
    against its defaults). Never click, set or run what it returns; use :func:`open_page` for a page you change."""
    return _opened(page, tuple(sorted((query or {}).items())))


# widget kinds a link can set, tried in this order; the link's text becomes the widget's value type
_WIDGETS = ("number_input", "slider", "select_slider", "selectbox", "segmented_control", "pills", "radio")
_WIDGETS += ("toggle", "checkbox", "text_input", "text_area")


def set_from_link(at: AppTest, key: str, raw: str) -> None:
    """Set the widget ``key`` to what the link text ``raw`` asks for, as a user would (not run yet).

    number_input: float; slider: int or float like its current value; toggle and checkbox: raw == "true"; pills
    with several choices: [raw]; everything else: the text itself.
    """
    for kind in _WIDGETS:
        try:
            widget = getattr(at, kind)(key=key)
        except KeyError:
            continue
        if kind == "number_input":
            value: Any = float(raw)
        elif kind == "slider":
            value = type(widget.value)(float(raw)) if not isinstance(widget.value, tuple) else raw
        elif kind in ("toggle", "checkbox"):
            value = raw == "true"
        elif kind == "pills" and isinstance(widget.value, list | tuple):
            value = [raw]
        else:
            value = raw
        widget.set_value(value)
        return
    raise KeyError(f"no widget with key {key!r} on the page")


def assert_link_reproduces(
    page: str,
    query: dict[str, str],
    read: Callable[[AppTest], Any],
    session: dict[str, Any] | None = None,
) -> AppTest:
    """The link ``query`` and the same values set by hand on the default page give the same ``read(at)`` (and
    the same metrics). ``session``: state set before the widgets (the open tab; its keys in ``query`` are not
    set as widgets). Returns the linked page."""
    linked = open_page(page, query)
    assert no_exception(linked), linked.exception
    clicked = open_page(page)
    for key, value in (session or {}).items():
        clicked.session_state[key] = value
    for key, raw in query.items():
        if key not in (session or {}):
            set_from_link(clicked, key, raw)
    clicked.run()
    assert no_exception(clicked), clicked.exception
    assert read(linked) == read(clicked)
    assert metrics(linked) == metrics(clicked)
    return linked


def assert_bad_link_falls_back(at: AppTest, default: AppTest, bad: str, warning: str = "not a valid value") -> None:
    """A page opened with the value ``bad`` in its link shows the defaults' readouts, none of them NaN or infinity,
    and (for a non-empty value, which is a request) a warning containing ``warning`` ("" = any warning)."""
    assert no_exception(at), at.exception
    got, want = metrics(at), metrics(default)
    assert got == want, {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
    assert not any(re.search(r"\b(nan|inf)\b", v.lower()) for v in metrics(at).values())
    if bad:  # an empty value is no request at all
        assert any(warning in w.value for w in at.warning), [w.value for w in at.warning]


def assert_presets_show_their_answers(
    page: str,
    spec: Any,
    answers: dict[str, tuple[str, str]],
    also: dict[str, dict[str, str]] | None = None,
) -> None:
    """Every preset of ``spec`` (named "<key>: question", as in core.systems_presets) chosen in turn on one page:
    no exception, no warning, the page's first readout is the problem's lead answer (issue 30), the answer named
    ``answers[key] = (name, value)`` (its name in core, spaces for underscores) shows ``value`` under its plain label,
    every answer of the problem has its readout, and each readout in ``also[key]`` (label -> value) matches."""
    from core.systems_presets import PRESETS_BY_KEY
    from views.systems_common import ANSWER_LABELS

    assert set(answers) == {p.split(":")[0] for p in spec.presets}
    at = open_page(page)
    for name in spec.presets:
        key = name.split(":")[0]
        choose_preset(at, spec.page, name).run()
        assert no_exception(at), name
        assert at.warning.len == 0, (name, [w.value for w in at.warning])
        m = metrics(at)
        labels = ANSWER_LABELS[key]
        assert next(iter(m)) == spec.answers[name].readout == next(iter(labels.values())), name
        answer, value = answers[key]
        assert m[labels[answer.replace(" ", "_")]] == value, name
        assert set(labels) == set(PRESETS_BY_KEY[key].expected) and set(labels.values()) <= set(m), name
        for label, value in (also or {}).get(key, {}).items():
            assert m[label] == value, (name, label)


def widget_values(at: AppTest) -> dict[tuple[str, str], Any]:
    """(kind, key) -> value of every keyed widget a link can set, as the page shows them now (not the preset boxes,
    which follow the other widgets)."""
    return {
        (kind, w.key): w.value for kind in _WIDGETS for w in getattr(at, kind) if w.key and not _is_preset_box(w.key)
    }


def _is_preset_box(key: str) -> bool:
    return key.startswith("preset-")


def choose_preset(at: AppTest, page: str, name: str) -> AppTest:
    """Choose the preset ``name`` in the preset box of ``page`` ("": any page) that lists it (the sidebar's, or a
    tab's, keyed ``preset-<page>[-<group>]``), as a viewer does; returns ``at``, to be run."""
    boxes = [b for b in at.selectbox if b.key and b.key.startswith(f"preset-{page}") and name in b.options]
    assert boxes, (page, name, [b.key for b in at.selectbox])
    boxes[0].set_value(name)
    return at


class Reused:
    """One page per module for tests that make ONE change and read the result (one run per test instead of a
    fresh page plus a run). :meth:`change` sets a widget, runs, and afterwards puts the widget back, to be applied
    by the next test's run; when the change moved other widgets too, the next test starts from a fresh page, so
    a test that asserts "this changed the page" always starts from the defaults. :meth:`click` presses a button
    (a preset) and afterwards puts back every widget it moved: for tests that assert absolute values."""

    def __init__(self, page: str | None, query: dict[str, str] | None = None) -> None:
        self.page, self.query = page, query
        self.at = open_page(page, query)
        self.defaults = widget_values(self.at)
        self.clean = True

    @contextmanager
    def change(self, kind: str, key: str, value: Any) -> Iterator[AppTest]:
        if not self.clean:
            self.at = open_page(self.page, self.query)
        widget = getattr(self.at, kind)(key=key)
        old = widget.value
        widget.set_value(value)
        self.at.run()
        self.clean = False
        try:
            yield self.at
        finally:
            moved = {k for k, v in widget_values(self.at).items() if self.defaults.get(k, v) != v} - {(kind, key)}
            if not moved and no_exception(self.at):
                getattr(self.at, kind)(key=key).set_value(old)
                self.clean = True

    @contextmanager
    def preset(self, name: str) -> Iterator[AppTest]:
        """Choose the page's preset ``name``; afterwards put back every widget it moved."""
        with self._then_restore(lambda at: choose_preset(at, "", name).run()) as at:  # any preset box
            yield at

    @contextmanager
    def click(self, key: str) -> Iterator[AppTest]:
        """Press the button ``key``; afterwards put back every widget it moved."""
        with self._then_restore(lambda at: at.button(key=key).click().run()) as at:
            yield at

    @contextmanager
    def _then_restore(self, act: Any) -> Iterator[AppTest]:
        if not self.clean:
            self.at = open_page(self.page, self.query)
        act(self.at)
        self.clean = False
        try:
            yield self.at
        finally:
            moved = {k: self.defaults[k] for k, v in widget_values(self.at).items() if self.defaults.get(k, v) != v}
            try:
                for (kind, widget_key), value in moved.items():
                    getattr(self.at, kind)(key=widget_key).set_value(value)
                self.clean = no_exception(self.at)
            except Exception:  # a widget whose choices moved: the next test starts afresh
                self.clean = False


# A source as the pages cite one: a seed and its section ("seed 002, A6.6", "seed 003, Q7") or an author and a year
# ("Schulman et al., 2017", "Bradley and Terry, 1952", "Schulman, 2020").
SOURCE = re.compile(
    r"seed 00[0-3], (?:A\d+\.\d+|Q\d+|section \d)|[A-Z][\w-]+(?: et al\.| and [A-Z][\w-]+)?,? (?:19|20)\d\d"
)


def assert_texts_cite(texts: dict[str, str], expected: dict[str, list[str]]) -> None:
    """Every interview text (quick check, answer parts, mistakes) cites a source, and the ones ``expected`` names."""
    assert set(texts) == set(expected)
    for key, text in texts.items():
        assert SOURCE.search(text), f"{key} cites nothing: {text}"
        for source in expected[key]:
            assert source in text, (key, source)


def explanation(at: AppTest, start: str) -> str:
    """The page's explanation (the markdown that begins with ``start``), with the line breaks inside a paragraph
    read as spaces, as markdown shows them."""
    text = next(m.value for m in at.markdown if start in m.value)
    return re.sub(r"(?<!\n)\n(?!\n)", " ", text.strip())


def interview_texts(at: AppTest) -> dict[str, str]:
    """The texts a reader may repeat in an interview: the quick check's answer, the interview answer's sentence,
    number and trade-off, and each common mistake ("mistake 1", ...). Answers must be shown (no ?hide=true)."""
    out: dict[str, str] = {}
    for exp in at.expander:
        texts = [m.value for m in exp.markdown]
        if exp.label == "Reveal the answer":
            out["quick check"] = " ".join(texts)
        elif exp.label.startswith("Reveal a 60-90 second answer"):
            for head, key in (("**In one sentence.**", "sentence"), ("**One number.**", "number"),
                              ("**One trade-off.**", "trade-off")):  # fmt: skip
                out[key] = " ".join(t for t in texts if t.startswith(head))
    lists = [m.value for m in at.markdown if m.value.startswith("- ")]
    assert len(lists) == 1, "one list of common mistakes"
    for i, item in enumerate(lists[0][2:].split("\n- "), 1):
        out[f"mistake {i}"] = item
    return out
