"""Keyboard only: from the top of a page, Tab reaches the page's first control in the sidebar and the tab bar, and
a control operated with the arrow keys changes the page's link (WCAG 2.1.1)."""

from __future__ import annotations

import urllib.parse

import pytest

pytestmark = pytest.mark.browser

# What the focused element is: its accessible name, its role and whether it sits in the sidebar or a tab bar.
_FOCUSED = """() => {
  const e = document.activeElement;
  if (!e) return null;
  return {
    label: e.getAttribute('aria-label') || '',
    role: e.getAttribute('role') || '',
    sidebar: !!e.closest("[data-testid='stSidebar']"),
    tabs: !!e.closest("[data-testid='stTabs'] [role='tablist']"),
  };
}"""
TAB_LIMIT = 150  # Tab presses allowed to get anywhere on a page (the sidebar's page list alone takes 16)

# page, the label of its first control (after the presets and the reset), whether it has a tab bar, the control
# operated by keyboard (label, key pressed, its URL name)
CASES = [
    ("Scaling_laws", "Loss fit", False, ("MFU (%)", "ArrowRight", "mfu")),
    ("GRPO", "Rewards, one per answer (2 to 64)", True, ("ε added to the std", "ArrowRight", "eps")),
    ("Serving", "Model", True, (None, "ArrowRight", "srv_view")),  # None: the tab bar itself
]


def _query(page) -> dict[str, list[str]]:
    return urllib.parse.parse_qs(urllib.parse.urlparse(page.url).query)


def _tab_until(page, wanted) -> int:
    """Press Tab from where the focus is until ``wanted(focused)`` holds; the number of presses it took."""
    for presses in range(1, TAB_LIMIT + 1):
        page.keyboard.press("Tab")
        if wanted(page.evaluate(_FOCUSED) or {}):
            return presses
    raise AssertionError(f"not reached by {TAB_LIMIT} presses of Tab")


@pytest.mark.parametrize(("name", "first", "has_tabs", "operate"), CASES, ids=[c[0] for c in CASES])
def test_tab_reaches_the_controls_and_the_arrows_operate_them(open_shared, name, first, has_tabs, operate) -> None:
    watch = open_shared(f"/{name}")
    page = watch.page
    page.wait_for_selector("[data-testid='stSidebar'] [data-testid='stButton']", timeout=30_000)  # Reset is drawn
    watch.wait_idle()
    # Streamlit loads a widget's code on first use: the controls to reach may be drawn after the run has ended
    label = operate[0]
    page.wait_for_function(
        """([labels, tabs]) => labels.every(l => document.querySelector(`[aria-label="${CSS.escape(l)}"]`))
                               && (!tabs || document.querySelector("[data-testid='stTabs'] [role='tab']"))""",
        arg=[[first] + ([label] if label else []), has_tabs or label is None],
        timeout=30_000,
    )

    page.evaluate("() => document.activeElement && document.activeElement.blur()")  # the start of the page
    _tab_until(page, lambda f: f.get("sidebar") and f.get("label") == first)
    if has_tabs:
        page.evaluate("() => document.activeElement.blur()")
        _tab_until(page, lambda f: f.get("tabs") and f.get("role") == "tab")

    label, key, param = operate
    page.evaluate("() => document.activeElement.blur()")
    _tab_until(page, (lambda f: f.get("tabs")) if label is None else (lambda f: f.get("label") == label))
    before = _query(page).get(param)
    page.keyboard.press(key)
    page.wait_for_function(
        "([p, v]) => new URLSearchParams(location.search).get(p) !== v",
        arg=[param, before[0] if before else None],
        timeout=10_000,
    )
    watch.wait_idle()
    after = _query(page).get(param)
    assert after and after != before, (param, before, after)
    assert page.locator("[data-testid='stException']").count() == 0
    assert watch.errors == [] and watch.external == []
