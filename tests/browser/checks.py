"""Checks that several browser test files run on a page: stillness, overlapping labels of the main figure, axe-core,
and the dark scheme drawn. Each test opens a page once and runs every check that page needs on it (a page load is
the suite's dearest step: docs/performance.md, the test suite)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.browser.conftest import next_frames

ROOT = Path(__file__).resolve().parents[2]
AXE = ROOT / ".cache" / "axe" / "node_modules" / "axe-core" / "axe.min.js"

# Resolves once nothing in the page has changed for a second (a state, not a fixed wait: a page still drawing keeps
# it waiting).
STILL_JS = """() => new Promise(done => {
  let last = performance.now();
  const o = new MutationObserver(() => { last = performance.now(); });
  o.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  const t = setInterval(() => { if (performance.now() - last > 1000) { clearInterval(t); o.disconnect(); done(); } },
                        100);
})"""


# Every pair of text boxes of the page's main figure that overlap: titles, axis titles, tick labels, legend entries
# and annotations (an annotation counts with its background box: a readout box over a panel title is an overlap).
# A box is the text's own SVG box in screen coordinates (a rotated tick label stays a rotated rectangle), each corner
# moved 2 px toward its centre, so that two lines set solid (their line boxes meet, their letters do not) do not count.
OVERLAP_JS = """() => {
  const fig = document.querySelector("[data-testid='stMain'] .js-plotly-plot");
  if (!fig) return null;
  const vis = e => { for (let n = e; n && n !== fig; n = n.parentElement) { const s = getComputedStyle(n);
    if (s.visibility === 'hidden' || s.display === 'none' || +s.opacity === 0) return false; } return true; };
  // the element's box as four screen points (rotated text stays a rotated rectangle)
  const quad = (el) => { const b = el.getBBox(); const m = el.getScreenCTM();
    if (!m || b.width === 0 || b.height === 0) return null;
    return [[b.x, b.y], [b.x + b.width, b.y], [b.x + b.width, b.y + b.height], [b.x, b.y + b.height]]
      .map(([x, y]) => [m.a * x + m.c * y + m.e, m.b * x + m.d * y + m.f]); };
  const items = [];
  for (const g of fig.querySelectorAll('g.annotation')) {
    const t = g.querySelector('text'); if (!t || !t.textContent.trim() || !vis(g)) continue;
    const bg = g.querySelector('rect.bg'); const q = quad(bg && bg.getBBox().width > 0 ? bg : t);
    if (q) items.push({what: 'annotation: ' + t.textContent.slice(0, 40), q});
  }
  for (const t of fig.querySelectorAll('text')) {
    if (t.closest('g.annotation') || !t.textContent.trim() || !vis(t)) continue;
    const q = quad(t); if (!q) continue;
    const parent = t.parentNode && t.parentNode.getAttribute ? t.parentNode.getAttribute('class') || '' : '';
    const cls = ((t.getAttribute('class') || '') + ' ' + parent).trim();
    items.push({what: cls.split(' ')[0] + ': ' + t.textContent.slice(0, 40), q});
  }
  // separating axis test on two convex quads, each shrunk by 2 px toward its centre (touching is not overlapping)
  const shrink = q => { const cx = q.reduce((a, p) => a + p[0], 0) / 4, cy = q.reduce((a, p) => a + p[1], 0) / 4;
    return q.map(([x, y]) => { const dx = cx - x, dy = cy - y, d = Math.hypot(dx, dy) || 1;
                               return [x + 2 * dx / d, y + 2 * dy / d]; }); };
  const overlap = (a, b) => { for (const q of [a, b]) for (let i = 0; i < 4; i++) {
      const [x1, y1] = q[i], [x2, y2] = q[(i + 1) % 4]; const nx = y2 - y1, ny = x1 - x2;
      const pa = a.map(p => p[0] * nx + p[1] * ny), pb = b.map(p => p[0] * nx + p[1] * ny);
      if (Math.max(...pa) <= Math.min(...pb) || Math.max(...pb) <= Math.min(...pa)) return false; }
    return true; };
  const out = [];
  const qs = items.map(i => shrink(i.q));
  for (let i = 0; i < items.length; i++) for (let j = i + 1; j < items.length; j++)
    if (overlap(qs[i], qs[j])) out.push([items[i].what, items[j].what]);
  return {n: items.length, overlaps: out};
}"""


# Layout shifts, recorded from the first script of every document: each entry's time, value, and whether all it moved
# moved sideways only (same top, same height). And, at every animation frame, when Streamlit's frame was first
# settled (the sidebar mounted and the main column in the wide layout) and whether the page's title had been on screen
# before that (``bare``).
SHIFTS_JS = """(() => {
  window.__shifts = []; window.__settledAt = null; window.__bare = false;
  const sideways = e => e.sources.every(s => Math.abs(s.currentRect.y - s.previousRect.y) < 1
    && Math.abs(s.currentRect.height - s.previousRect.height) < 1);
  // every box it moved lies in the sidebar (320 px wide at 1280 x 720), before and after
  const inSidebar = e => e.sources.every(s => [s.previousRect, s.currentRect]
    .every(r => r.width * r.height === 0 || r.x + r.width <= 330));
  // what moved, for a failure's message: the element's test id (or class), its box's top and height before and after
  const what = s => { const n = s.node && (s.node.nodeType === 1 ? s.node : s.node.parentElement);
    const name = n ? (n.getAttribute('data-testid') || (n.getAttribute('class') || '').split(' ')[0] || n.tagName)
      : '?';
    return [name, s.previousRect.y, s.previousRect.height, s.currentRect.y, s.currentRect.height].map(
      v => typeof v === 'number' ? Math.round(v) : v).join(' '); };
  new PerformanceObserver(list => { for (const e of list.getEntries()) {
    if (!e.hadRecentInput) window.__shifts.push([e.startTime, e.value, sideways(e) ? 1 : 0, inSidebar(e) ? 1 : 0,
                                                 e.sources.slice(0, 3).map(what)]); } })
    .observe({type: 'layout-shift', buffered: true});
  const seen = () => { if (window.__titleAt === undefined
      && document.querySelector("[data-testid='stMain'] h1, [data-testid='stMain'] h2")) {
    window.__titleAt = performance.now(); } };
  new MutationObserver(seen).observe(document, {subtree: true, childList: true});
  const frame = () => {
    const block = document.querySelector("[data-testid='stMainBlockContainer']");
    const settled = !!document.querySelector("[data-testid='stSidebar']") && !!block
      && block.getBoundingClientRect().width >= 900;
    if (settled) { window.__settledAt = performance.now(); return; }
    if (document.querySelector("[data-testid='stMain'] h1, [data-testid='stMain'] h2")) window.__bare = true;
    requestAnimationFrame(frame); };
  requestAnimationFrame(frame);
})();"""

# The sums of the shifts :data:`SHIFTS_JS` recorded (a function of no argument, to call in the page): Streamlit's
# own start (its empty main column re-laid sideways when the page's config, wide, and the sidebar arrive, before
# anything of the page is on screen: ``bare`` false; up to the frame in which both had arrived), the sidebar's, and the
# page's (the rest), with every entry.
SHIFT_SUMS_JS = """() => {
  const boot = s => s[2] && window.__settledAt !== null && s[0] <= window.__settledAt + 100;
  return {cls_all: window.__shifts.reduce((a, s) => a + s[1], 0),
          cls_boot: window.__shifts.filter(boot).reduce((a, s) => a + s[1], 0), bare: window.__bare,
          shifts: window.__shifts.map(s => [...s.slice(0, 4).map(v => +v.toFixed(3)), s[4]]),
          cls_page: window.__shifts.filter(s => !boot(s) && !s[3]).reduce((a, s) => a + s[1], 0),
          cls_sidebar: window.__shifts.filter(s => !boot(s) && s[3]).reduce((a, s) => a + s[1], 0)};
}"""


def luminance(css: str) -> float:
    """Relative luminance (WCAG 2) of a CSS rgb()/rgba() colour."""
    parts = [float(v) for v in css[css.index("(") + 1 : css.index(")")].split(",")[:3]]
    lin = [c / 255 / 12.92 if c / 255 <= 0.04045 else ((c / 255 + 0.055) / 1.055) ** 2.4 for c in parts]
    return 0.2126 * lin[0] + 0.7152 * lin[1] + 0.0722 * lin[2]


def axe(page) -> list[dict]:
    """axe-core's serious and critical WCAG 2 A/AA violations on the open page (rule, impact, targets)."""
    if not AXE.exists():
        pytest.fail(f"axe-core is not installed at {AXE}; `make test` installs it (npm)")
    if not page.evaluate("() => typeof window.axe !== 'undefined'"):
        page.add_script_tag(path=str(AXE))
    result = page.evaluate(
        """async () => {
          const r = await axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa']}});
          return r.violations.filter(v => v.impact === 'serious' || v.impact === 'critical').map(v => ({
            id: v.id, impact: v.impact,
            nodes: v.nodes.slice(0, 4).map(n => n.target.join(' ') + ' :: ' + (n.failureSummary || '').slice(0, 160)),
          }));
        }"""
    )
    return result


def dark_backgrounds(page, figure: bool) -> None:
    """The dark scheme gives a dark app background and dark figure backgrounds."""
    app = page.eval_on_selector("[data-testid='stApp']", "e => getComputedStyle(e).backgroundColor")
    assert luminance(app) < 0.05, app
    if not figure:
        return
    backgrounds = page.eval_on_selector_all(
        ".js-plotly-plot .main-svg:first-child", "es => es.map(e => getComputedStyle(e).backgroundColor)"
    )
    paper = [luminance(b) for b in backgrounds if "rgba(0, 0, 0, 0)" not in b]
    assert paper and max(paper) < 0.05, backgrounds


def chart_names(page) -> list[tuple[str | None, str]]:
    """Each chart's role and accessible name (``st.plotly_chart`` sets both on its container from ``alt``; the frame's
    live chart on its own element)."""
    return page.eval_on_selector_all(
        "[data-testid='stPlotlyChart'], .lesson-chart",
        "es => es.map(e => [e.getAttribute('role'), e.getAttribute('aria-label') || ''])",
    )


DARK_NOW = """() => {
  const dark = (e) => { const v = e && getComputedStyle(e).backgroundColor.match(/\\d+/g).map(Number);
                        return v && 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2] < 128; };
  const app = document.querySelector("[data-testid='stApp']");
  const papers = [...document.querySelectorAll(".js-plotly-plot .main-svg:first-child")];
  // a primary button's label takes the dark background colour, from CSS that only a dark run sends (pages/frame)
  const labels = [...document.querySelectorAll("button[kind='primary'] p")];
  const darkText = (e) => { const v = getComputedStyle(e).color.match(/\\d+/g).map(Number);
                            return 0.2126 * v[0] + 0.7152 * v[1] + 0.0722 * v[2] < 128; };
  return dark(app) && papers.every(dark) && labels.every(darkText)
    && document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']") !== null;
}"""


def wait_drawn_dark(page) -> None:
    """Wait until the theme watcher's rerun (pages/frame/shims.py) has drawn the page dark and finished: every figure
    and the dark CSS in place (:data:`DARK_NOW`), then two drawn frames."""
    try:
        page.wait_for_function("() => window.__lessonThemeDrawn === 'dark' && (" + DARK_NOW + ")()", timeout=60_000)
    except Exception as error:
        state = page.evaluate(
            """() => ({drawn: window.__lessonThemeDrawn, asked: window.__lessonThemeAsked,
                       checks: window.__lessonThemeChecks, runs: window.__lessonRuns,
                       script: document.querySelector("[data-testid='stApp']")?.getAttribute('data-test-script-state'),
                       app: getComputedStyle(document.querySelector("[data-testid='stApp']")).backgroundColor})"""
        )
        raise AssertionError(f"the page was not drawn dark: {state}") from error
    next_frames(page)
