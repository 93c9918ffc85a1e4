"""The sidebar every page shares (navigation, presenter mode, hidden answers, figure format, where core computes),
the page's set-up, the link to the exact view and collecting views for a deck."""

from __future__ import annotations

import ipaddress
import math
import urllib.parse

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from core.device import device_summary
from pages.frame.charts import plotly_preload
from pages.frame.nav import navigation, navigation_height, page_finder
from pages.frame.shims import _SEEN_THEME, frame_styled, history_shim, theme_watch
from pages.frame.style import _BASE_CSS, _DARK_CSS, _PRESENTER_CSS, NAV_CLASS

PRESENT_KEY = "present"
HIDE_KEY = "hide"
IMAGE_FORMAT_KEY = "image_format"
_PRESENTER_STATE = "_presenter_mode"
_HIDE_STATE = "_hide_answers"
NAV_KEY = NAV_CLASS  # the navigation's container (its compact CSS: pages/frame/style.py)
SWITCHES_KEY = "lesson-switches"
SWITCHES_HELP = "Presenter mode and hidden answers (both stay in the link you share)"
HIDDEN_CAPTION = "Answers hidden for screen-sharing (hide=true)"
PREDICT_CAPTION = "Hidden until you commit a guess (Predict first)"


# ---------------------------------------------------------------------- shared sidebar
def viewer_theme() -> str:
    """The viewer's theme, "light" or "dark", as the browser reports it (``st.context.theme.type``); "light" while
    neither it nor the watcher knows.

    Read once per run by :meth:`Page.setup`. Streamlit 1.67 caveats: switching the theme in the main menu (or
    the system's scheme) does not rerun the script, so :func:`theme_watch` asks for the rerun; and the first run of a
    session may report the wrong type (streamlit issue #11920), which the watcher's rerun corrects. While Streamlit
    reports no type, the theme the watcher last saw in the browser counts.
    """
    kind = st.context.theme.type
    if kind in ("light", "dark"):
        return kind
    return st.session_state.get(_SEEN_THEME, "light")


def _sidebar_frame(current: str | None = None) -> tuple[bool, str, bool]:
    """The sidebar every page shares: navigation (the page finder and the stage groups, ``current``'s unfolded: a
    page's URL name, "" for Home), presenter mode, hidden answers, image export format, and where core computes.
    Returns (presenter, image format, hide). A session's first run in presenter mode ends here, before the page's body,
    until the browser has the frame's CSS (:func:`frame_styled`: it reruns the page then)."""
    with st.sidebar:
        # filled after the switches (its links carry presenter mode and hide), in a box as tall as it is once the
        # frame's CSS has compacted it: the page's controls under it stay where they are when the CSS lands
        nav = st.container(key=NAV_KEY, gap=None, height=math.ceil(navigation_height(current)), border=False)
        with nav:  # the shims draw nothing (nor the CSS wait below): in a container without gaps, no room either
            history_shim()
            theme_watch(viewer_theme())
            plotly_preload()
            # one row: the page finder, and the session's two switches behind a button beside it (a row of their own
            # pushed the page's first control below the first screen at 1280 x 720)
            with st.container(horizontal=True, gap="small", vertical_alignment="center", key=SWITCHES_KEY):
                finder_slot = st.container(width="stretch")
                with st.popover("", icon=":material/co_present:", help=SWITCHES_HELP):
                    presenter = _presenter_toggle()
                    hide = _hide_toggle()
    carry = carried_params() or None
    with finder_slot:
        page_finder(carry)
    with nav:
        navigation(current, carry)
        styled = frame_styled(bool(presenter))
    if not styled:
        st.stop()
    return bool(presenter), image_format(), hide


def image_format() -> str:
    """The figures' download format as the session holds it ("png" until someone picks SVG)."""
    return st.session_state.get(IMAGE_FORMAT_KEY) or "png"


def sidebar_footer() -> None:
    """The bottom of the sidebar, under the page's controls: the figures' download format and where core computes.
    Drawn by the page's body (a change of the format reruns the body alone; its charts read it when drawn)."""
    with st.sidebar:
        st.segmented_control(
            "Figure download (camera button)",
            ["png", "svg"],
            format_func=str.upper,
            key=IMAGE_FORMAT_KEY,
            default="png",
            persist_state="session",
        )
        st.caption(f"Core computes on: {device_summary()}")


def carried_params() -> dict[str, str]:
    """The session settings a link to another page carries (presenter mode, hidden answers), as link values."""
    out = {}
    if st.session_state.get(_PRESENTER_STATE, False):
        out[PRESENT_KEY] = "true"
    if st.session_state.get(_HIDE_STATE, False):
        out[HIDE_KEY] = "true"
    return out


def _presenter_toggle() -> bool:
    """Presenter mode: in the URL (``?present=true``) like every control, and kept across page switches.

    It is not ``bind="query-params"``: Streamlit drops bound parameters on a page switch, and a lecture should
    not fall out of presenter mode when the teacher opens the next page. The session keeps the mode; the URL
    mirrors it on every page, so a shared link carries it too.
    """
    return _carried_toggle(
        PRESENT_KEY,
        _PRESENTER_STATE,
        ":material/co_present: Presenter mode",
        "Larger type, the sidebar folded so that the figure fills the screen, the takeaway and explanations folded. "
        "Stays in the link you share and across pages.",
    )


def _presenter_requested() -> bool:
    """Presenter mode as the link (``?present=true``/``false``) or else the session has it."""
    return _carried_requested(PRESENT_KEY, _PRESENTER_STATE)


def _hide_toggle() -> bool:
    """Hidden answers (``?hide=true``): carried like presenter mode, in the link and across page switches."""
    return _carried_toggle(
        HIDE_KEY,
        _HIDE_STATE,
        ":material/visibility_off: Hide answers",
        "For screen-sharing: quick checks and interview prompts show no answer at all. Stays in the link "
        "you share and across pages.",
    )


def _carried_requested(key: str, state_key: str) -> bool:
    """A carried switch as the link (``?<key>=true``/``false``) sets it, or else as the session keeps it (under
    ``state_key``, which survives page switches; the widget's own key does not)."""
    raw = (st.query_params.get(key) or "").strip().lower()
    if raw in ("true", "false"):
        st.session_state[state_key] = raw == "true"
    return bool(st.session_state.get(state_key, False))


def _carried_toggle(key: str, state_key: str, label: str, help: str) -> bool:
    """The sidebar toggle of a carried switch: its value from :func:`_carried_requested`, mirrored in the URL."""
    on = _carried_requested(key, state_key)
    st.session_state[key] = on
    st.toggle(label, key=key, on_change=_on_carried_change, args=(key, state_key), help=help, width="content")
    if on:
        st.query_params[key] = "true"
    return on


def _on_carried_change(key: str, state_key: str) -> None:
    value = bool(st.session_state[key])
    st.session_state[state_key] = value
    if value:
        st.query_params[key] = "true"
    elif key in st.query_params:
        del st.query_params[key]


def share_link() -> None:
    """The link that reproduces this exact view (the address bar holds the same)."""
    # a shared interview's seat and session stay out: whoever opened a copy of the candidate's link would take the seat
    query = urllib.parse.urlencode(
        {k: st.query_params.get(k) for k in st.query_params if k not in ("seat", "interview")}
    )
    url = str(getattr(st.context, "url", "") or "").split("?")[0]
    # a popover, not an expander: the browser draws a popover's body only when it is opened, so the code box's
    # syntax highlighter (a 280 ms script on a cold start, bench/bench_cold.py) is not loaded for every page view
    with st.popover("Link to this exact view", icon=":material/link:", width="stretch"):
        st.code(f"{url}?{query}" if query else url, language=None, wrap_lines=True)
        st.caption("Every control is in the link. Answers stay hidden until revealed.")
        loopback_warning(url)


LOOPBACK_WARNING = (
    ":material/warning: This address works on this computer only: another device cannot open it. To share it, serve "
    "the app on your network (docs/deployment.md, “Expose the server on a network”) and open it at this computer's "
    "network address."
)


def is_loopback(url: str) -> bool:
    """Whether ``url`` points at this computer only (localhost, 127.0.0.0/8, ::1): a link no one else can open."""
    host = (urllib.parse.urlsplit(url).hostname or "").lower()
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def loopback_warning(url: str) -> None:
    """One line under a link offered for sharing, when that link is a loopback address."""
    if is_loopback(url):
        st.caption(LOOPBACK_WARNING)


# ---------------------------------------------------------------------- collecting views for a deck
# The session's draft deck: dicts (page, query, title, notes; sweep and parts for a slide copied from a deck), read
# by the deck player.
DECK_DRAFT = "_deck_draft"


def add_to_deck(page: str, query: dict[str, str]) -> None:
    """'Add this view to a deck': record this page and its link values in the session's draft deck."""
    draft = st.session_state.setdefault(DECK_DRAFT, [])
    with st.expander(f":material/slideshow: Add this view to a deck ({len(draft)} so far)"):
        st.text_input("Slide title (optional)", key="deck-add-title", max_chars=120)
        st.text_area("Speaker notes (optional, Markdown)", key="deck-add-notes", height=90, max_chars=4000)
        st.button("Add this view", key="deck-add", on_click=_add_view, args=(page, dict(query)), width="stretch")
        if draft:
            try:
                st.page_link(
                    "pages/15_Deck.py",
                    label="Open the draft deck",
                    icon=":material/slideshow:",
                    query_params={"deck": "draft"},
                )
            except StreamlitPageNotFoundError:  # a page script run on its own has no other pages
                pass


def _add_view(page: str, query: dict[str, str]) -> None:
    st.session_state.setdefault(DECK_DRAFT, []).append(
        {
            "page": page,
            "query": query,
            "title": st.session_state.get("deck-add-title", ""),
            "notes": st.session_state.get("deck-add-notes", ""),
        }
    )
    st.session_state["deck-add-title"] = ""
    st.session_state["deck-add-notes"] = ""
    st.toast(f"Added to the draft deck ({len(st.session_state[DECK_DRAFT])} views)")


def home_frame() -> None:
    """The frame of the home page: page config and the shared sidebar."""
    _page_config("LLM lesson explorer")
    _sidebar_frame(current="")
    sidebar_footer()


def _page_config(title: str) -> None:
    """``st.set_page_config`` for every page: wide, and in presenter mode the sidebar starts collapsed (its controls
    stay one click away, behind the arrow at the top left) so that the figure has the screen's width; then the
    frame's CSS for presenter mode or not and the viewer's theme.

    No page icon: Streamlit 1.67 draws a ``:material/...:`` favicon by fetching its SVG from fonts.gstatic.com (a
    request off the machine; checked in the browser tests), and an emoji favicon needs a colour-emoji font. The
    tab keeps Streamlit's own icon."""
    presenter = _presenter_requested()
    st.set_page_config(
        page_title=title,
        layout="wide",
        initial_sidebar_state="collapsed" if presenter else "auto",
    )
    # the frame's CSS, first. It may still arrive after the first elements are drawn (st.html renders late), so what
    # it moves is kept small: the page's top gap and the title's size are the theme's (config.toml)
    st.html((_PRESENTER_CSS if presenter else _BASE_CSS) + (_DARK_CSS if viewer_theme() == "dark" else ""))
