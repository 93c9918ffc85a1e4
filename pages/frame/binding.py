"""The state contract in Streamlit: a page's spec bound to its widgets and to the URL.

A link is read through the page's spec when the page's widgets are about to be created from it (``enter``); each
field draws its widget keyed by its URL name and bound to the URL (``draw_field``, ``draw_tabs``); presets and the
reset write values into those widgets; a plotly slider dragged in the browser writes its value back (``drag_sync``).

Streamlit 1.67 caveats for bound widgets (checked by tests): a selectbox with ``format_func`` puts the
*formatted* label in the URL, so use short readable options instead; and an *integer* ``number_input`` seeded
from the URL with ``inf`` or ``1e400`` raises OverflowError inside Streamlit, so a link's value is checked and
replaced (``_enter``) before any widget reads it; whole numbers are integer boxes, and the link writes them as
whole numbers (``gpus=4``, not ``gpus=4.0``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

import streamlit as st
from streamlit.errors import StreamlitAPIException
from streamlit.runtime.scriptrunner_utils.script_run_context import get_script_run_ctx

from pages.frame.charts import component_data
from views.state import APP_PARAMS, Field, Spec, same_value

# ---------------------------------------------------------------------- the state contract in Streamlit
_CURRENT_PAGE = "_frame_current_page"
PRESET_KEY = "preset"  # the presets' select box: key "preset-<page>"


def _enter(spec: Spec) -> list[str]:
    """Read the link through the page's spec when the page's widgets are about to be created from it.

    That happens when a session opens this page (first request, sidebar click, a link) and on the browser's
    Back and Forward. Old parameter names are renamed, values that cannot be used are replaced by sane ones
    (clamped into range or the default) before the widgets read the URL, and the messages are returned.
    On other reruns the widgets hold the state and the URL only mirrors it.
    """
    ctx = get_script_run_ctx()
    history = bool(ctx is not None and getattr(ctx, "is_history_navigation", False))
    entering = st.session_state.get(_CURRENT_PAGE) != spec.page
    st.session_state[_CURRENT_PAGE] = spec.page
    if not (entering or history):
        return []
    fields = spec.by_name
    by_alias = {a: f for f in spec.fields for a in f.aliases}
    raw = {k: _raw_param(fields.get(k) or by_alias.get(k), k) for k in st.query_params}
    resolved = spec.resolve_aliases(raw)
    for name, value in resolved.items():
        if name not in fields:
            continue
        parsed, problem = fields[name].parse(value)
        comma = fields[name].kind == "multi" and "," in value and len(st.query_params.get_all(name)) == 1
        if problem is not None or name not in raw or comma:  # refused, an old name, or a=x,y: set the widget
            st.session_state[name] = _widget_value(fields[name], parsed)
            _set_param(fields[name], parsed)
    for name in raw:  # old names (now renamed) and parameters this page does not know leave the link
        if name not in fields and name not in APP_PARAMS:
            _drop_param(name)
    _reseed_from_current_link(ctx)
    return spec.parse(raw)[1]


def _reseed_from_current_link(ctx: Any) -> None:
    """Make the widgets read the corrected link, not the one the browser sent.

    Streamlit seeds URL-bound widgets from the query string it received (a snapshot); a value its widget accepts
    but this page corrects (7.6 for a whole number) would otherwise show in the box while the page computes with 8.
    ``set_initial_query_params_from_current`` is the method Streamlit itself calls after a page switch.
    """
    try:
        with ctx.session_state.query_params() as qp:
            qp.set_initial_query_params_from_current()
    except (AttributeError, TypeError):  # another Streamlit version: the page still computes with the right value
        pass


def _raw_param(f: Field | None, name: str) -> str:
    """A link parameter as text (a multi-choice widget writes one parameter per choice: joined with commas)."""
    if f is not None and f.kind == "multi":
        return ",".join(st.query_params.get_all(name))
    return st.query_params.get(name)


def _set_param(f: Field, value: Any) -> None:
    """Write a field's value into the link (not at all when it is the default, as Streamlit does)."""
    if value == f.default:
        _drop_param(f.name)
        return
    try:
        if f.kind == "multi":
            st.query_params[f.name] = list(value)
        else:
            st.query_params[f.name] = f.to_text(value)
    except StreamlitAPIException:  # already bound to its widget (Back or Forward): the widget writes it
        pass


def _drop_param(name: str) -> None:
    try:
        del st.query_params[name]
    except (KeyError, StreamlitAPIException):
        pass


def _widget_value(f: Field, value: Any) -> Any:
    """A field's value as its widget holds it."""
    if f.kind == "int" and f.widget == "number" and value is not None:
        return int(value)
    if f.kind == "multi":
        return list(value)
    return value


def _load_values(spec: Spec, values: Any) -> None:
    """Write values (a preset, the defaults) into the page's URL-bound widgets."""
    for name, value in values.items():
        st.session_state[name] = _widget_value(spec[name], value)


def preset_buttons(spec: Spec, names: Sequence[str] | None = None, group: str | None = None) -> None:
    """The spec's presets (or ``names``) in one select box, with the page's reset beside it: choosing a preset writes
    its values into the widgets. The box shows the preset that the page's values match (the first, in the spec's
    order), or its placeholder once a control has moved away from every preset; under it, that preset's note.
    ``group``: a second box of the page's presets (a tab's), keyed ``preset-<page>-<group>``, without the reset.

    One line whatever the number of presets (one button each took 60 px apiece), so that the page's first control
    is on the first screen at 1280 x 720 (issue 30)."""
    names = list(spec.presets if names is None else names)
    key = f"{PRESET_KEY}-{spec.page}" + (f"-{group}" if group else "")
    matched = matching_preset(spec, names, current_values(spec))
    st.session_state[key] = matched  # before the box is drawn: it follows the controls, not only its own choice
    with st.container(horizontal=True, gap="small", vertical_alignment="bottom", key=f"{key}-row"):
        st.selectbox(
            "Presets",
            names,
            index=None,
            key=key,
            placeholder=f"Choose a preset ({len(names)})",
            on_change=_on_preset,
            args=(spec, key),
            label_visibility="collapsed",
            width="stretch",
        )
        if group is None:
            reset_button(spec)
    if matched is not None and spec.preset_help.get(matched):
        st.caption(spec.preset_help[matched])


def reset_button(spec: Spec, label: str = "") -> None:
    """Every control of the page back to its default value (an icon button beside the presets)."""
    st.button(
        label,
        icon=":material/restart_alt:",
        key=f"reset-{spec.page}",
        on_click=_load_values,
        args=(spec, spec.defaults()),
        help="Reset: every control of this page back to its default value.",
        width="stretch" if label else "content",
    )


def _on_preset(spec: Spec, key: str) -> None:
    name = st.session_state.get(key)
    if name in spec.presets:
        _load_values(spec, spec.presets[name])


def current_values(spec: Spec) -> dict[str, Any]:
    """The page's values as its widgets hold them at the start of this run: a widget's state where the session has
    one, else the link's value (a control of a tab that is not open), else the default; as widgets hold them."""
    out: dict[str, Any] = {}
    for f in spec.fields:
        if f.name in st.session_state:
            out[f.name] = st.session_state[f.name]
            continue
        value = f.default
        raw = _raw_param(f, f.name) if f.name in st.query_params else None
        if raw is not None:
            parsed, problem = f.parse(raw)
            value = parsed if problem is None else f.default
        out[f.name] = _widget_value(f, value)
    return out


def matching_preset(spec: Spec, names: Sequence[str], values: dict[str, Any]) -> str | None:
    """The first of ``names`` whose every value equals the page's (``values``, as widgets hold them), or None."""
    for name in names:
        if all(same_value(values.get(field), _widget_value(spec[field], v)) for field, v in spec.presets[name].items()):
            return name
    return None


def draw_field(f: Field, **overrides: Any) -> Any:
    """The Streamlit widget of one field: keyed by its URL name, bound to the URL. Returns its typed value."""
    extra = dict(f.extra)
    extra.update(overrides)
    common = {"key": f.name, "bind": "query-params", "help": f.help, **extra}
    w = f.widget
    if w == "number":
        if f.kind == "int":  # an int box, so that the link writes 4, not 4.0 (link values it cannot hold: _enter)
            default = f.default if f.default is None else int(f.default)
            fmt = "%d" if f.fmt in (None, "%.0f") else f.fmt
            value = st.number_input(f.label, int(f.lo), int(f.hi), default, int(f.step or 1), fmt, **common)
            return int(value) if value is not None else f.default
        default = f.default if f.default is None else float(f.default)
        value = st.number_input(f.label, f.lo, f.hi, default, f.step, f.fmt, **common)
        return f.default if value is None else float(value)
    if w == "slider":
        if f.kind == "int":
            return int(st.slider(f.label, int(f.lo), int(f.hi), int(f.default), int(f.step or 1), **common))
        return float(st.slider(f.label, float(f.lo), float(f.hi), float(f.default), f.step, f.fmt, **common))
    if w == "select_slider":
        return st.select_slider(f.label, list(f.choices), f.default, **common)
    if w == "selectbox":
        return st.selectbox(f.label, list(f.choices), list(f.choices).index(f.default), **common)
    if w == "radio":
        return st.radio(f.label, list(f.choices), list(f.choices).index(f.default), **common)
    if w == "segmented":
        value = st.segmented_control(f.label, list(f.choices), default=f.default, **common)
        return f.default if value is None else value
    if w == "pills":
        value = st.pills(f.label, list(f.choices), selection_mode="multi", default=list(f.default), **common)
        return tuple(c for c in f.choices if c in (value or []))
    if w == "toggle":
        return bool(st.toggle(f.label, f.default, **common))
    if w == "text":
        return st.text_input(f.label, f.default, **common)
    raise ValueError(f"field {f.name!r}: unknown widget {w!r}")


def draw_tabs(f: Field) -> Any:
    """The tabs of a field whose widget is ``tabs``: only the open tab's body needs to run (check ``.open``)."""
    return st.tabs(list(f.choices), default=f.default, key=f.name, bind="query-params")


# A few lines of JavaScript, rendered in the page itself (components v2: no iframe, no second plotly.js): when
# a drag of the chart's own plotly slider ends, report the step's value so that the page's state follows.
_DRAG_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  const data = component.data[0];  // sent as a one-item list (component_data)
  const selector = `.st-key-${data.chart} .js-plotly-plot`;
  const attach = () => {
    const gd = document.querySelector(selector);
    if (!gd || typeof gd.on !== "function" || gd.__lessonDrag === data.field) return;
    gd.__lessonDrag = data.field;
    gd.on("plotly_sliderend", (event) => {
      const step = event && event.step;
      if (!step) return;
      const index = step._index !== undefined ? step._index : (event.slider ? event.slider.active : null);
      setTriggerValue("value", JSON.stringify({ index: index, value: step.value, at: Date.now() }));
    });
  };
  // the chart may be drawn after this piece mounts (plotly.js loading): look every frame until it is there, so
  // that a drag started as soon as the figure shows reaches the link (for ten seconds at most, a chart that never
  // comes costing nothing after); then every 400 ms for a chart drawn anew
  let frame = 0, timer = 0, frames = 0;
  const first = () => { attach(); if (document.querySelector(selector)?.__lessonDrag === data.field) return;
                        if (++frames < 600) frame = requestAnimationFrame(first); };
  first();
  timer = setInterval(attach, 400);
  return () => { cancelAnimationFrame(frame); clearInterval(timer); };
}
"""
_drag_component = None


def drag_writer(f: Field, state_key: str, values: Sequence[Any] | None = None) -> Callable[[], None]:
    """The callback that writes the step a drag ended on into field ``f``: it reads the event the browser sent
    (JSON ``{"index": i}`` or ``{"value": v}`` in ``st.session_state[state_key].value``) and writes
    ``values[i]`` (or ``v``) when the field accepts it; anything else changes nothing."""

    def _on_drag() -> None:
        result = st.session_state.get(state_key)
        try:
            event = json.loads(getattr(result, "value", None) or "{}")
            index = event.get("index")
            if values is not None and index is not None and not 0 <= int(index) < len(values):
                return
            raw = values[int(index)] if values is not None and index is not None else event.get("value")
        except (TypeError, ValueError, IndexError, AttributeError):
            return  # a message the page cannot read changes nothing
        if raw is None:
            return
        value, problem = f.parse(raw if isinstance(raw, str) else f.to_text(raw))
        if problem is None:
            st.session_state[f.name] = _widget_value(f, value)

    return _on_drag


def drag_sync(f: Field, chart_key: str, values: Sequence[Any] | None = None) -> None:
    """Mount the listener that writes the value a plotly slider was dragged to into field ``f`` (a chart drawn by
    ``st.plotly_chart``; the live chart has its own drag row, :mod:`pages.frame.drag`).

    ``values``: the field's value at each slider step, in order; without them the step's ``value`` is parsed.
    """
    global _drag_component
    if _drag_component is None:
        _drag_component = st.components.v2.component("lesson_drag_sync", js=_DRAG_JS)
    key = f"drag-{chart_key}"
    _drag_component(
        key=key,
        data=component_data({"chart": chart_key, "field": f.name}),
        on_value_change=drag_writer(f, key, values),
        height=0,
    )
