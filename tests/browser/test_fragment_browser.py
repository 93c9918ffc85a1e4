"""In a real browser: a change of one of a page's own controls reruns the page's body alone (``Page.run``, a
fragment). The rerun's messages carry the body's elements (its figures, readouts, controls) and none of the frame
that ``Page.setup`` drew (the navigation links, the title); a switch of the frame (presenter mode) still reruns the
whole page."""

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.browser.conftest import next_frames, open_switches, rerun

pytestmark = pytest.mark.browser


class Messages:
    """The kinds of element that the server sent over the page's websocket since the last :meth:`take`."""

    def __init__(self, page) -> None:
        self.kinds: list[str] = []
        self.fragments: list[str] = []  # per element: the id of the fragment that sent it ("" for the whole script)
        page.on("websocket", lambda ws: ws.on("framereceived", self._on_frame))

    def _on_frame(self, payload) -> None:
        if isinstance(payload, str):
            return
        msg = ForwardMsg()
        msg.ParseFromString(payload)
        kind = msg.WhichOneof("type")
        if kind == "delta":
            delta = msg.delta
            which = delta.WhichOneof("type")
            element = delta.new_element.WhichOneof("type") if which == "new_element" else which
            # headings by their text: the page's title is the frame's, the section headings are the body's
            self.kinds.append(f"heading: {delta.new_element.heading.body}" if element == "heading" else element)
            self.fragments.append(delta.fragment_id)

    def take(self) -> tuple[list[str], set[str]]:
        """(kinds of element, ids of the fragments that sent them) since the last call."""
        out = (self.kinds, set(self.fragments))
        self.kinds, self.fragments = [], []
        return out


def _wait_panel(page, text: str) -> None:
    page.wait_for_function(
        f"() => [...document.querySelectorAll('.js-plotly-plot g.annotation-text-g')]"
        f".some((g) => g.textContent.includes({text!r}))",
        timeout=30_000,
    )


TITLE = "heading: Scaling laws: the iso-FLOP U-curve"


def test_a_control_change_reruns_the_body_alone(open_shared):
    watch = open_shared("/Scaling_laws?gpus=8")
    page = watch.page
    messages = Messages(page)
    page.reload()  # a new session, now with the websocket watched from its first message
    watch.wait_idle(60_000)
    _wait_panel(page, "training 4.4 days")
    kinds, senders = messages.take()
    assert kinds.count("page_link") >= 13 and TITLE in kinds, kinds  # the first run sends the whole page
    assert "" in senders and len(senders) == 2, senders  # the script's frame, and the body's fragment
    body = (senders - {""}).pop()

    box = page.locator("[data-testid='stSidebar'] .st-key-gpus input")
    box.fill("64")
    with rerun(page):  # the body's rerun started and finished
        box.press("Enter")
    _wait_panel(page, "training 13.2 h")
    kinds, senders = messages.take()
    assert senders == {body}, senders  # the body's fragment alone, not the whole script
    assert "page_link" not in kinds and TITLE not in kinds, kinds  # the frame stays on screen, unsent
    assert kinds.count("metric") >= 12 and "bidi_component" in kinds and "number_input" in kinds, kinds
    assert "gpus=64" in page.url  # the link follows a rerun of the body

    open_switches(page)
    with rerun(page):  # the whole page's rerun started and finished (idle before the click is idle already)
        page.locator("label:has-text('Presenter mode')").first.click()
    page.wait_for_selector("[data-testid='stMain'] .js-plotly-plot", timeout=30_000)
    kinds, senders = messages.take()
    assert "" in senders, senders  # a switch of the frame reruns the whole page
    assert kinds.count("page_link") >= 13 and "heading: Scaling laws" in kinds, kinds  # presenter mode's short title
    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.errors == [] and watch.external == []


_READOUT_BOXES = """(strip) => [...document.querySelectorAll(`${strip} > [data-testid='stElementContainer']`)]
  .map((e) => { const r = e.getBoundingClientRect(); return [Math.round(r.left), Math.round(r.top), r.width]; })"""
MAIN_STRIP = "[class*='st-key-readouts-']"
TAB_STRIP = "[data-testid='stTabs'] [data-testid='stHorizontalBlock']:has([data-testid='stMetric'])"


def test_the_readouts_strip_lays_out_as_the_grid_did(open_shared):
    # one wrapping strip of 12 metrics (not 3 rows of 4 columns): four to a line, equal widths, the same left edges
    # on every line, within the main column
    watch = open_shared("/Scaling_laws")
    page = watch.page
    # every metric drawn (Streamlit loads a metric's code on first use: on a busy machine they come over frames)
    page.wait_for_function(
        "s => document.querySelectorAll(`${s} [data-testid='stMetricValue']`).length >= 12",
        arg=MAIN_STRIP,
        timeout=30_000,
    )
    next_frames(page)
    boxes = page.evaluate(_READOUT_BOXES, MAIN_STRIP)
    assert len(boxes) == 12, boxes
    lines = sorted({top for _, top, _ in boxes})
    assert len(lines) == 3, boxes
    lefts = [sorted(left for left, top, _ in boxes if top == line) for line in lines]
    assert all(len(line) == 4 for line in lefts) and lefts[0] == lefts[1] == lefts[2], lefts
    widths = [width for _, _, width in boxes]
    assert max(widths) - min(widths) < 1 and 150 < widths[0] < 260, widths
    main = page.locator("[data-testid='stMainBlockContainer']").bounding_box()
    assert lefts[0][0] >= main["x"] and lefts[0][3] + widths[0] <= main["x"] + main["width"] + 1
    assert watch.errors == []

    # a tab's row of readouts (metric_row, unkeyed) shares its line equally, as its columns did
    watch = open_shared("/PPO")
    watch.page.wait_for_selector(TAB_STRIP, timeout=30_000)
    boxes = watch.page.evaluate(_READOUT_BOXES, TAB_STRIP)
    assert len(boxes) == 3 and len({top for _, top, _ in boxes}) == 1, boxes
    assert max(w for *_, w in boxes) - min(w for *_, w in boxes) < 1, boxes
