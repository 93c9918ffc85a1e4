"""The browser shims the frame mounts in the sidebar: one history entry per action of the person (Back and Forward),
a rerun when the browser switches the theme without telling the script, and presenter mode's wait for its CSS."""

from __future__ import annotations

import streamlit as st

# Streamlit 1.67 pushes a history entry for every change of the link, which breaks Back in three ways: on a page
# switch it first pushes the old page's path with its link cleared (Back landed on the old page with its defaults);
# the new page's restored values come as another push (Back needed two steps); and one rerun writes each changed
# control as its own push (a preset took several Backs). This shim keeps one history entry per action of the
# person: the first same-page push after a key press or a pointer press adds an entry, later ones replace it, and
# page switches go through unchanged. A value the browser commits itself (a number typed, then Enter) comes as a
# replaceState: the first one after a press also adds an entry. So Back undoes a whole action (a preset, a drag, a
# typed value) or returns to the last page.
#
# The switch's stray write (the old page's link cleared) is the server's answer to the click: it comes one round
# trip later, which on a loaded server took more than 5 s (the 5-s window this shim used to have then let it through:
# Back landed on the old page with an empty link; tests/browser/test_navigation_browser.py stalls the server to show
# it). So a click on a page link marks the page it may leave, and every same-page write while that page is still
# shown is dropped, push or replace, until the switch is seen (a write with another path), Back or Forward, or the
# person's next press elsewhere (a click on the current page's own link switches nothing: the page stays live).
# ``window.__lessonHistoryLog`` keeps the last 40 writes and what became of each, for a test that fails.
_HISTORY_JS = """
export default function () {
  if (window.__lessonHistory) return;
  window.__lessonHistory = true;
  const push = window.history.pushState.bind(window.history);
  const replace = window.history.replaceState.bind(window.history);
  const log = window.__lessonHistoryLog = [];
  const note = (what, url) => {
    log.push([Math.round(performance.now()), what, String(url)]);
    if (log.length > 40) log.shift();
  };
  let leaving = null;  // the path a click on a page link may leave, until the switch is seen
  let acted = false;
  // page links have no href of their own: any click on one may switch the page
  const pageLink = (target) => target.closest && target.closest("[data-testid='stPageLink-NavLink']");
  const act = (event) => {
    acted = true;
    if (!pageLink(event.target)) leaving = null;  // a press elsewhere: a new action, no switch pending
  };
  document.addEventListener("pointerdown", act, true);
  document.addEventListener("keydown", act, true);
  document.addEventListener("click", (event) => {
    if (pageLink(event.target)) { leaving = window.location.pathname; note("page link", leaving); }
  }, true);
  const stray = (target) => leaving !== null && leaving === window.location.pathname
    && target.pathname === window.location.pathname;
  window.history.pushState = function (state, title, url) {
    const target = new URL(url, window.location.href);
    if (target.pathname !== window.location.pathname) {
      leaving = null;
      acted = false;
      note("push: page switch", url);
      return push(state, title, url);
    }
    if (stray(target)) { note("dropped: the old page's write during a switch", url); return; }
    if (!acted) { note("push as replace", url); return replace(state, title, url); }
    acted = false;
    note("push", url);
    return push(state, title, url);
  };
  // A value typed into a number box (or another widget the browser commits itself) reaches the address bar by
  // replaceState: after a press of the person's, a same-page change of the link is an action of its own.
  window.history.replaceState = function (state, title, url) {
    const target = new URL(url, window.location.href);
    if (stray(target)) { note("dropped: the old page's replace during a switch", url); return; }
    const same = target.pathname === window.location.pathname && target.href !== window.location.href;
    if (!acted || !same) { note("replace", url); return replace(state, title, url); }
    acted = false;
    note("replace as push", url);
    return push(state, title, url);
  };
  // Back and Forward are no action on the page: what Streamlit writes after them replaces the entry.
  window.addEventListener("popstate", () => { acted = false; leaving = null; note("popstate", window.location.href); });
}
"""
_history_component = None


def history_shim() -> None:
    """Mount the history shim (see ``_HISTORY_JS``) once per page."""
    global _history_component
    if _history_component is None:
        _history_component = st.components.v2.component("lesson_history", js=_HISTORY_JS)
    _history_component(key="lesson-history", height=0)


# Streamlit's main menu (or the system's colour scheme, which its default "System" follows) switches the app's
# theme in the browser without rerunning the script, so what the last run drew for its theme (the figures'
# backgrounds, the dark theme's button labels: pages/frame/style.py) would stay as it was until the next rerun. This
# piece compares the theme the app shows (its background) with the theme the last run drew with (sent as its data on
# every run): when they differ it asks for one rerun, which reads the new theme, and it asks at most once per theme the
# app shows. If the rerun still draws the other theme, nothing more happens until the person switches again: it never
# loops. Pages with no figure (Home, the drills before a card's answer) follow too. For the tests, which wait for
# states rather than times: ``window.__lessonThemeChecks`` counts its checks, ``__lessonThemeDrawn`` is the theme the
# last run drew with and ``__lessonThemeAsked`` the last theme it asked for.
_THEME_JS = """
export default function (component) {
  const { setTriggerValue, parentElement } = component;
  const watch = parentElement.__lessonTheme || (parentElement.__lessonTheme = { asked: null, timer: null });
  watch.drawn = component.data[0].drawn;  // "light" or "dark": the theme the last run drew with
  window.__lessonThemeDrawn = watch.drawn;
  watch.ask = setTriggerValue;
  const dark = (css) => {
    const m = css && css.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return null;
    const v = m[1].split(",").map(Number);
    if (v.length > 3 && v[3] === 0) return null;  // transparent: not drawn yet
    return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2] < 128;
  };
  const check = () => {
    window.__lessonThemeChecks = (window.__lessonThemeChecks || 0) + 1;
    const app = document.querySelector("[data-testid='stApp']");
    const appDark = app ? dark(getComputedStyle(app).backgroundColor) : null;
    if (appDark === null) return;
    const kind = appDark ? "dark" : "light";
    if (kind === watch.drawn) { watch.asked = null; return; }
    if (watch.asked === kind) return;
    watch.asked = window.__lessonThemeAsked = kind;
    watch.ask("theme", kind);
  };
  check();
  if (watch.timer === null) watch.timer = setInterval(check, 300);
  return () => { clearInterval(watch.timer); watch.timer = null; };
}
"""
_theme_component = None
_SEEN_THEME = "_frame_seen_theme"


def theme_watch(drawn: str) -> None:
    """Mount the theme watcher (see ``_THEME_JS``) once per page: a theme switch in the browser reruns the page.
    ``drawn``: the theme this run draws with ("light" or "dark")."""
    global _theme_component
    if _theme_component is None:
        _theme_component = st.components.v2.component("lesson_theme_watch", js=_THEME_JS)

    def _on_switch() -> None:
        kind = getattr(st.session_state.get("lesson-theme"), "theme", None)
        if kind in ("light", "dark"):
            st.session_state[_SEEN_THEME] = kind

    # the data as a one-item list, as charts.component_data sends it (a dict's values would be checked for dataframes)
    _theme_component(key="lesson-theme", data=[{"drawn": drawn}], on_theme_change=_on_switch, height=0)


# Presenter mode's type (a 22-px base) and paddings come with the frame's CSS, which Streamlit 1.67 draws through a
# lazily loaded element 0.1-1 s after a page's first elements: a page opened in presenter mode (a deck link) was drawn
# at the normal size and then jumped to the large one (a layout shift of 0.16-0.60 at 1280 x 720). So a session whose
# first run is in presenter mode draws the frame (config, CSS, the sidebar, which starts collapsed) and stops; this
# piece reports once the CSS is in place (``--lesson-frame`` on the root element, pages/frame/style.py), and that
# reruns the page with its body. It reports after 3 s without the CSS too, so a page never stays empty. Once per
# session: a session that starts in normal mode has the CSS element already when the person turns presenter mode on
# (the element is redrawn in place, and the jump follows their own click).
_STYLED_JS = """
export default function (component) {
  const { setTriggerValue } = component;
  const start = performance.now();
  let done = false;
  const check = () => {
    if (done) return;
    const css = getComputedStyle(document.documentElement).getPropertyValue("--lesson-frame").trim();
    if (css || performance.now() - start > 3000) {
      done = true;
      setTriggerValue("styled", css ? "css" : "timeout");
      return;
    }
    setTimeout(check, 16);
  };
  check();
  return () => { done = true; };
}
"""
_styled_component = None
STYLED = "_frame_styled"  # the session's browser has drawn the frame's CSS (AppTest, with no browser, sets it)
STYLED_GATE_KEY = "frame-styled-gate"  # the piece's key: its element is on the page while the body waits


def frame_styled(presenter: bool) -> bool:
    """Whether the page may draw its body now: ``False`` on a session's first run in presenter mode until the
    browser has the frame's CSS (``_STYLED_JS`` then reruns the page). Call it in the sidebar."""
    if st.session_state.get(STYLED):
        return True
    if not presenter:
        st.session_state[STYLED] = True
        return True
    global _styled_component
    if _styled_component is None:
        _styled_component = st.components.v2.component("lesson_styled", js=_STYLED_JS)

    def _on_styled() -> None:
        st.session_state[STYLED] = True

    _styled_component(key=STYLED_GATE_KEY, on_styled_change=_on_styled, height=0)
    return False
