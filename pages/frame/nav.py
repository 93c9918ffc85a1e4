"""Navigation: the sidebar's page finder and its stage groups (only the current page's group unfolded), and the
previous and next links in lesson order under every lesson page. What the pages are comes from the catalogue
(views/catalog.py); this draws it.

The app keeps Streamlit's file-based navigation (every ``pages/*.py`` is a page at ``/<name without its number>``),
with Streamlit's own flat list hidden (``client.showSidebarNavigation = false``): a fresh server's first request to
a deep link runs that page with the shared frame (streamlit-1.67 findings: ``st.navigation`` beside a ``pages/``
folder breaks exactly that), and every old link keeps working.
"""

from __future__ import annotations

from pathlib import Path

import streamlit as st
from streamlit.errors import StreamlitPageNotFoundError

from pages.frame.style import nav_height
from views import catalog

ROOT = Path(__file__).resolve().parents[2]

# (script, label, icon) of every page, Home first, then lesson order: the older form of the catalogue.
PAGES: tuple[tuple[str, str, str], ...] = tuple((e.script, e.label, e.icon) for e in (catalog.HOME, *catalog.PAGES))

FINDER_KEY = "page_finder"
_FINDER_TARGET = "_page_finder_target"
FINDER_PLACEHOLDER = "Find a page…"


def existing_pages() -> list[tuple[str, str, str]]:
    """The entries of :data:`PAGES` whose script exists."""
    return [entry for entry in PAGES if (ROOT / entry[0]).exists()]


def page_link(script: str, **kwargs: object) -> None:
    """``st.page_link``, or nothing where the script runs without the app's pages (a page script run on its own, as
    AppTest of the file alone does)."""
    try:
        st.page_link(script, **kwargs)
    except StreamlitPageNotFoundError:
        pass


def _groups(current: str | None) -> list[tuple[str, list[catalog.Entry], bool]]:
    """The stage groups the navigation draws: (group, its pages whose script exists, whether it is open), in order;
    the current page's group open (none for Home or an unknown page)."""
    entry = catalog.by_url(current) if current else None
    out = []
    for group in catalog.GROUPS:
        pages = [e for e in catalog.in_group(group) if (ROOT / e.script).exists()]
        if pages:
            out.append((group, pages, entry is not None and entry.group == group))
    return out


def navigation(current: str | None, carry: dict[str, str] | None) -> None:
    """The sidebar's navigation under the page finder (:func:`page_finder`): Home, then one fold per stage group, the
    current page's unfolded.
    ``current``: the current page's URL name ("" for Home, None when unknown). ``carry``: the link values every link
    carries (presenter mode, hidden answers)."""
    page_link(catalog.HOME.script, label=catalog.HOME.label, icon=catalog.HOME.icon, query_params=carry)
    for group, pages, unfolded in _groups(current):
        with st.expander(group, expanded=unfolded):
            for e in pages:
                page_link(e.script, label=e.label, icon=e.icon, query_params=carry)


def navigation_height(current: str | None) -> float:
    """The compact height (px, unrounded) of the sidebar's navigation on page ``current``: its finder row, Home and
    the folds of :func:`navigation`, the current page's open (:func:`pages.frame.style.nav_height`)."""
    groups = _groups(current)
    return nav_height(len(groups), next((len(pages) for _, pages, unfolded in groups if unfolded), 0))


def page_finder(carry: dict[str, str] | None) -> None:
    """A selectbox of every page, searched by its label and keywords; choosing one opens it."""
    options = [e.finder_label for e in catalog.PAGES if (ROOT / e.script).exists()]
    st.selectbox(
        "Find a page",
        options,
        index=None,
        key=FINDER_KEY,
        placeholder=FINDER_PLACEHOLDER,
        label_visibility="collapsed",
        filter_mode="contains",
        on_change=_on_find,
        help="Type a topic (a title or a keyword: KV cache, ZeRO, GQA, DPO...) and pick the page.",
    )
    target = st.session_state.pop(_FINDER_TARGET, None)
    if target:
        try:
            st.switch_page(target, query_params=carry)
        except StreamlitPageNotFoundError:  # a page script run on its own has no other pages
            pass


def _on_find() -> None:
    """The finder's choice: remember its page for this run to switch to, and empty the finder for the next page."""
    label = st.session_state.get(FINDER_KEY)
    st.session_state[FINDER_KEY] = None
    entry = next((e for e in catalog.PAGES if e.finder_label == label), None)
    if entry is not None:
        st.session_state[_FINDER_TARGET] = entry.script


def lesson_links(current: str, carry: dict[str, str] | None) -> None:
    """Previous and next page in lesson order, in one row under the page."""
    before, after = catalog.neighbours(current)
    if before is None and after is None:
        return
    with st.container(horizontal=True, horizontal_alignment="distribute", key="lesson-order"):
        if before is not None:
            page_link(before.script, label=f"Previous: {before.label}", icon=":material/arrow_back:",
                      query_params=carry)  # fmt: skip
        if after is not None:
            page_link(after.script, label=f"Next: {after.label}", icon=":material/arrow_forward:",
                      query_params=carry)  # fmt: skip
