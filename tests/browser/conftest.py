"""Browser-test fixtures: a real server started as the README's run command does, and Debian's chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from bench.load import free_port

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts"


def start_server(port: int, extra: tuple[str, ...] = (), script: str = "app.py") -> subprocess.Popen:
    """``streamlit run app.py`` (or ``script``) on a free loopback port (as ``make run`` does), waiting until it is
    healthy."""
    cmd = [sys.executable, "-m", "streamlit", "run", script, "--server.port", str(port), *extra]
    # the server's output goes to a file, not a pipe: nobody reads a pipe, and a full one would stall the server
    log = tempfile.TemporaryFile()
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy())
    proc.log = log  # type: ignore[attr-defined]
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1) as r:
                if r.status == 200:
                    return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    log.seek(0)
    raise RuntimeError(f"streamlit did not become healthy on port {port}: {log.read().decode()[-2000:]}")


@contextmanager
def running_server(extra: tuple[str, ...] = (), script: str = "app.py") -> Iterator[str]:
    """A healthy server on a free port (:func:`start_server`), as its base URL; stopped (killed after 10 s) on exit."""
    port = free_port()
    proc = start_server(port, extra, script)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if not path:
        pytest.fail("Debian's chromium is not installed; `make test` installs it with apt-get")
    return path


@pytest.fixture(scope="session")
def browser(chromium_path: str) -> Iterator:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(
            executable_path=chromium_path,
            args=[
                "--disable-dev-shm-usage",
                "--disable-gpu",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ],
        )
        yield b
        b.close()


@pytest.fixture
def server() -> Iterator[str]:
    """A freshly started server per test, so that each deep link is the very first request it sees."""
    with running_server() as url:
        yield url


@pytest.fixture(scope="module")
def module_server() -> Iterator[str]:
    """One server for a test file's tests that do not need to be its first request (presets, drags)."""
    with running_server() as url:
        yield url


def next_frames(page, frames: int = 2) -> None:
    """Return once the browser has drawn ``frames`` more frames: what the last messages changed is on screen (a
    state to wait for, not a fixed time)."""
    page.evaluate(
        """n => new Promise(done => { const step = k => k ? requestAnimationFrame(() => step(k - 1)) : done();
                                        step(n); })""",
        frames,
    )


class PageWatch:
    """Records requests that leave localhost and console errors of one browser page."""

    def __init__(self, page, base: str) -> None:
        self.page = page
        self.base = base
        self.external: list[str] = []
        self.errors: list[str] = []
        page.on("request", self._on_request)
        page.on("pageerror", lambda e: self.errors.append(str(e)))

    def _on_request(self, request) -> None:
        url = request.url
        if not (url.startswith(("http://127.0.0.1", "ws://127.0.0.1", "data:", "blob:", "about:"))):
            self.external.append(url)

    def wait_idle(self, timeout: float = 30_000) -> None:
        """Wait until the app is connected and its script has finished running (Streamlit's own e2e suite waits on
        both: before the websocket connects, a cold page also reads 'notRunning')."""
        self.page.wait_for_selector(
            "[data-testid='stApp'][data-test-connection-state='CONNECTED'][data-test-script-state='notRunning']",
            timeout=timeout,
        )
        next_frames(self.page)

    def drag_slider(self, fractions: tuple[float, ...], read: Callable[[], Any]) -> list[Any]:
        """Drag the first plotly slider's grip through ``fractions`` of its rail, calling ``read()`` after each
        move while the mouse button is still down (plotly sliders update the figure during the drag)."""
        page = self.page
        grip = page.locator("g.slider-container rect.slider-grip-rect").first
        rail = page.locator("g.slider-container rect.slider-rail-rect").first
        grip.scroll_into_view_if_needed()
        page.wait_for_timeout(300)
        g, r = grip.bounding_box(), rail.bounding_box()
        y = g["y"] + g["height"] / 2
        page.mouse.move(g["x"] + g["width"] / 2, y)
        page.mouse.down()
        seen = []
        for frac in fractions:
            page.mouse.move(r["x"] + r["width"] * frac, y, steps=4)
            page.wait_for_timeout(120)  # an animation frame or so
            seen.append(read())
        page.mouse.up()
        return seen

    def shot(self, name: str) -> Path:
        ARTIFACTS.mkdir(exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


def _opener(browser, base: str) -> Iterator[Callable[..., PageWatch]]:
    contexts = []

    def _open(path: str, width: int = 1400, height: int = 1000, color_scheme: str = "light") -> PageWatch:
        ctx = browser.new_context(viewport={"width": width, "height": height}, color_scheme=color_scheme)
        contexts.append(ctx)
        page = ctx.new_page()
        watch = PageWatch(page, base)
        page.goto(base + path, wait_until="domcontentloaded")
        page.wait_for_selector("[data-testid='stApp']", timeout=60_000)
        watch.wait_idle(60_000)
        return watch

    yield _open
    for ctx in contexts:
        ctx.close()


@pytest.fixture
def open_page(browser, server):
    """open_page(path) -> PageWatch: a new tab on the fresh server, at ``path`` (a deep link)."""
    yield from _opener(browser, server)


@pytest.fixture
def open_shared(browser, module_server):
    """open_shared(path) -> PageWatch: a new tab (a new session) on the test file's shared server, at ``path``."""
    yield from _opener(browser, module_server)
