"""In a real browser: every lesson page's main control dragged on the row under its figure (pages/frame/drag.py).

For each page, a 20-step drag with the mouse button held: the figure draws all 20 steps and the page sends nothing to
the server while the button is down; on release one rerun writes the value into the link; and the figure the server
then draws for that value is the one the drag showed (its traces to 4 significant digits, its texts exactly), so a
step never shows a number the page would not. Each step's ``Plotly.update`` time is printed.
"""

from __future__ import annotations

import math
import statistics
import time
import urllib.parse

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.browser.conftest import DRAG_DRAWN_JS, DRAG_ROW_CLASS, DRAGGED_CLASS, GRIP_PX, next_frames
from views import catalog

pytestmark = pytest.mark.browser

# lesson page (URL name) -> (the link that shows its dragged figure, the field the drag writes)
DRAGS = {
    "Scaling_laws": ("/Scaling_laws?predict_scaling=false", "N"),
    "Loss_and_units": ("/Loss_and_units", "bpe_merges"),
    "Schedules": ("/Schedules", "wsd_decay"),
    "Attention": ("/Attention", "temp"),
    "Positions": ("/Positions", "rope_s"),
    "FlashAttention": ("/FlashAttention", "fa_step"),
    "MoE": ("/MoE", "moe_cf"),
    "Test_time_compute": ("/Test_time_compute", "ttc_n"),
    "Training_lab": ("/Training_lab", "lab_lr"),
    "Number_formats": ("/Number_formats", "fmt_x"),
    "Optimizers": ("/Optimizers", "opt_lr"),
    "Policy_gradient": ("/Policy_gradient", "pg_G"),
    "Distillation": ("/Distillation", "dist_d"),
    "Calibration": ("/Calibration", "cal_kappa"),
    "Training_memory": ("/Training_memory", "seq"),
    "Serving": ("/Serving", "batch"),
    "LoRA": ("/LoRA?rows=128&cols=128", "rank"),
    "KL_leash": ("/KL_leash", "beta"),
    "Reward_model": ("/Reward_model", "flip"),
    "PPO": ("/PPO", "rho"),
    "GRPO": ("/GRPO", "eps"),
    "Sampling": ("/Sampling", "T"),
    "Evaluation": ("/Evaluation", "k"),
}
STEPS = 20

# The dragged figure as numbers and texts: every trace's x, y and z as plotly holds them (typed arrays decoded), and the
# annotations' and title's texts
_FIGURE_JS = f"""() => {{
  const gd = document.querySelector(".{DRAGGED_CLASS}");
  const flat = (v) => v == null ? [] : (typeof v === "object" && "length" in v && typeof v !== "string")
    ? Array.from(v).flatMap(flat) : [v];
  const layout = gd._fullLayout || {{}};
  return {{
    traces: gd._fullData.map((t) => ["x", "y", "z"].map((k) => flat(t[k]))),
    texts: (layout.annotations || []).map((a) => a.text).concat([layout.title && layout.title.text]),
  }};
}}"""


def _close(a: object, b: object) -> bool:
    """Equal to 4 significant digits where both are numbers, exactly otherwise (recursively); NaN (a heatmap's masked
    cell, the FlashAttention page's) equals NaN."""
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        if math.isnan(a) or math.isnan(b):
            return math.isnan(a) and math.isnan(b)
        return abs(a - b) <= 5e-4 * max(abs(a), abs(b)) + 1e-12
    return a == b


def _first_difference(a: list, b: list) -> str:
    """Where two figures' traces first differ: the trace, the axis, the index and the two values."""
    if len(a) != len(b):
        return f"{len(a)} traces against {len(b)}"
    for t, (ta, tb) in enumerate(zip(a, b, strict=True)):
        for axis, xa, xb in zip("xyz", ta, tb, strict=True):
            if len(xa) != len(xb):
                return f"trace {t} {axis}: {len(xa)} values against {len(xb)}"
            for i, (u, v) in enumerate(zip(xa, xb, strict=True)):
                if not _close(u, v):
                    return f"trace {t} {axis}[{i}]: {u!r} against {v!r}"
    return "no difference"


def test_every_lesson_page_declares_a_drag() -> None:
    lessons = {e.url for e in catalog.PAGES if e.view is not None}
    assert set(DRAGS) == lessons


def _path(steps: int, start: int, top: int) -> list[int]:
    """``steps`` moves of one step each from ``start`` within 0..top: away from the nearer end, back when it is hit,
    the last one not onto ``start``."""
    out, i, way = [], start, 1 if start < top - start else -1
    for _ in range(steps):
        if not 0 <= i + way <= top:
            way = -way
        i += way
        out.append(i)
    if out[-1] == start and 0 <= 2 * out[-2] - start <= top:  # end elsewhere, so that the link changes
        out[-1] = 2 * out[-2] - start
    return out


def _rail(page, timeout: int = 30_000):
    """The first drag row's input once its chart is drawn and on screen: (the input, its step, its last step, the x of
    step i, the y of the rail)."""
    rail = page.locator(f".{DRAG_ROW_CLASS} input[type=range]").first
    rail.wait_for(timeout=timeout)
    page.wait_for_function(f"() => !!document.querySelector('.{DRAGGED_CLASS}')?.dataset.drawn", timeout=timeout)
    rail.scroll_into_view_if_needed()
    next_frames(page)
    start, top = (int(v) for v in rail.evaluate("(i) => [i.value, i.max]"))
    box = rail.bounding_box()

    def x_at(i: int) -> float:
        return box["x"] + GRIP_PX / 2 + (box["width"] - GRIP_PX) * i / top

    return rail, start, top, x_at, box["y"] + box["height"] / 2


@pytest.mark.parametrize("page_name", list(DRAGS))
def test_the_main_control_drags_in_the_browser(open_shared, page_name: str) -> None:
    path, field = DRAGS[page_name]
    watch = open_shared(path)
    page = watch.page
    _, start, top, x_at, y = _rail(page)
    before = page.evaluate(_FIGURE_JS)
    sent, runs, drawn = page.evaluate(
        f"() => [window.__lessonSent, window.__lessonRuns, +(document.querySelector('.{DRAGGED_CLASS}')"
        ".dataset.dragSteps || 0)]"
    )
    page.mouse.move(x_at(start), y)
    page.mouse.down()
    first = None
    for i in _path(STEPS, start, top):
        page.mouse.move(x_at(i), y, steps=2)
        page.wait_for_function(DRAG_DRAWN_JS, timeout=30_000)  # this step drawn
        first = first or page.evaluate(_FIGURE_JS)
    assert page.evaluate("() => window.__lessonSent") == sent, "a message went to the server during the drag"
    shown = page.evaluate(_FIGURE_JS)
    steps_drawn, times = page.evaluate(
        f"() => {{ const h = document.querySelector('.{DRAGGED_CLASS}'); return [+h.dataset.dragSteps, h.__dragMs]; }}"
    )
    assert steps_drawn - drawn == STEPS
    assert first != before  # the figure moved (a short sweep may bounce back to where it started)
    url_before = page.url
    page.mouse.up()
    released = time.monotonic()
    # one rerun writes the step into the link; the server's figure for that value is the one the drag showed
    page.wait_for_function("(runs) => window.__lessonRuns > runs", arg=runs, timeout=30_000)
    page.wait_for_function("(url) => location.href !== url", arg=url_before, timeout=30_000)
    followed = time.monotonic() - released  # the row waits 300 ms for the drag to end; printed, not held to a time
    next_frames(page)  # the chart takes the rerun's figure
    page.wait_for_function(
        f"() => {{ const h = document.querySelector('.{DRAGGED_CLASS}'); "
        "return h.dataset.drawn === h.dataset.version; }",
        timeout=30_000,
    )
    next_frames(page)
    after = page.evaluate(_FIGURE_JS)
    assert _close(after["texts"], shown["texts"]), (after["texts"], shown["texts"])
    assert _close(after["traces"], shown["traces"]), _first_difference(after["traces"], shown["traces"])
    value = urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query).get(field)
    assert value, page.url
    print(
        f"{page_name}: {STEPS} steps, Plotly.update median {statistics.median(times[-STEPS:]):.1f} ms, "
        f"max {max(times[-STEPS:]):.1f} ms; {field} = {value[0]} in the link {followed:.2f} s after the release"
    )
    assert watch.errors == [] and watch.external == []


# Counts the messages to the server that carry a drag row's release (its trigger's JSON, ``{"index": ...}``, sent as
# a JSON string): the deck's warming sends fragment reruns of its own while a slide is shown, which ``__lessonSent``
# counts too
_COUNT_RELEASES_JS = r"""() => {
  const proto = window.WebSocket.prototype, send = proto.send;
  window.__dragReleases = 0;
  proto.send = function (data) {
    const bytes = ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
      : new Uint8Array(data);
    if (/\\?"index\\?":/.test(new TextDecoder().decode(bytes))) window.__dragReleases += 1;  // JSON in JSON
    return send.call(this, data);
  };
}"""


def test_a_slides_figure_drags_in_the_browser_and_sends_nothing(open_shared) -> None:
    """The deck has no field for a lesson page's drag (slide 4: the scaling plan's N), so its figure's row is free:
    a mouse drag and the arrow keys on the row draw their steps, the slide stays, and no release goes to the server
    (the page's own row sends one 300 ms after the drag ends)."""
    watch = open_shared("/Deck?deck=lesson&slide=4", width=1280, height=720)
    page = watch.page
    rail, start, top, x_at, y = _rail(page, timeout=60_000)
    page.evaluate(_COUNT_RELEASES_JS)
    assert rail.get_attribute("aria-label") == "plan: N, under the figure"
    before = page.evaluate(_FIGURE_JS)
    page.mouse.move(x_at(start), y)
    page.mouse.down()
    for i in _path(10, start, top):
        page.mouse.move(x_at(i), y, steps=2)
        page.wait_for_function(DRAG_DRAWN_JS, timeout=30_000)
    page.mouse.up()
    dragged = int(rail.evaluate("(i) => i.value"))
    assert page.evaluate(_FIGURE_JS) != before
    rail.focus()
    page.keyboard.press("ArrowRight" if dragged < top else "ArrowLeft")
    page.wait_for_function(DRAG_DRAWN_JS, timeout=30_000)
    assert int(rail.evaluate("(i) => i.value")) != dragged  # the key moved the row, not the slide
    # an absence, so a bound: the page's row sends its release 300 ms after the last change; five times that
    with pytest.raises(PlaywrightTimeout):
        page.wait_for_function("() => window.__dragReleases > 0", timeout=1_500)
    assert "slide=4" in page.url and page.get_by_role("heading", name="Scaling in one picture").count() == 1
    assert watch.errors == [] and watch.external == []
