"""The app run for measuring and testing: a server started as ``make run`` starts it, and an AppTest session opened
as a deep link opens a page. The benchmarks and the tests both use them (tests import bench, never the reverse)."""

from __future__ import annotations

import functools
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from streamlit.testing.v1 import AppTest

from bench.load import free_port
from pages.frame.shims import STYLED

ROOT = Path(__file__).resolve().parents[1]
TIMEOUT = 60
APP = str(ROOT / "app.py")


@functools.cache
def _components() -> Any:
    """Streamlit's registry of custom components, discovered once per process and shared by every AppTest, as one
    server shares it across its sessions. A fresh AppTest otherwise scans the metadata of every installed
    distribution on its first run (about 0.07 s of CPU each, the largest single cost of opening a page)."""
    from streamlit.components.v2.component_manager import BidiComponentManager

    manager = BidiComponentManager()
    manager.discover_and_register_components(start_file_watching=False)
    return manager


def open_page(page: str | None, query: dict[str, str] | None = None, context: dict[str, Any] | None = None) -> AppTest:
    """Run ``app.py`` and switch to ``page`` (e.g. "pages/1_Scaling_laws.py"), with URL parameters ``query``.

    ``page=None`` runs the home page. The query parameters are in place before the first run, as when a
    shared link is opened. ``context``: what the browser reports through ``st.context`` (``{"theme": "dark"}``).
    """
    at = AppTest.from_file(APP, default_timeout=TIMEOUT)
    if hasattr(at, "_bidi_component_manager"):  # AppTest builds (and scans for) its own unless one is set
        at._bidi_component_manager = _components()
    for key, value in (context or {}).items():
        at.context[key] = value
    if page is not None:
        at.switch_page(page)  # before the first run: the page is the very first thing this session runs
    for key, value in (query or {}).items():
        at.query_params[key] = value
    # no browser draws the frame's CSS here: presenter mode's first run would wait for it (pages/frame/shims.py)
    at.session_state[STYLED] = True
    return at.run()


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


# The servers :func:`running_server` holds open, by base URL (a test stalls one to play a slow server)
SERVERS: dict[str, subprocess.Popen] = {}


@contextmanager
def running_server(extra: tuple[str, ...] = (), script: str = "app.py") -> Iterator[str]:
    """A healthy server on a free port (:func:`start_server`), as its base URL; killed on exit (:func:`stop_server`)."""
    port = free_port()
    proc = start_server(port, extra, script)
    url = f"http://127.0.0.1:{port}"
    SERVERS[url] = proc
    try:
        yield url
    finally:
        del SERVERS[url]
        stop_server(proc)


def stop_server(proc: subprocess.Popen) -> None:
    """Stop a server :func:`start_server` started: killed at once. A test's or benchmark's server holds nothing to
    save, and Streamlit's orderly stop (SIGTERM) took 0.6-1 s of the caller's time, more under load: once per test
    file in the browser part."""
    proc.kill()
    proc.wait(10)
