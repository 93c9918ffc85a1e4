"""deploy/serve.sh: two Streamlit workers behind nginx, sticky sessions, pre-compressed static files."""

from __future__ import annotations

import gzip
import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.load import free_port, free_port_run, run_load
from tests.browser.conftest import ROOT

pytestmark = pytest.mark.server

NGINX = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
IMMUTABLE = "public, max-age=31536000, immutable"


class Proxy:
    def __init__(self, port: int, workers: list[str], output: list[str]) -> None:
        self.port = port
        self.url = f"http://127.0.0.1:{port}"
        self.workers = workers
        self.output = output  # serve.sh's lines so far

    @property
    def static_root(self) -> Path:
        """The folder nginx serves the static files from, as serve.sh printed it (in the checkout's .cache, or in
        the system's temp folder when the checkout is private: deploy/prepare.py)."""
        prefix = "serve.sh: static files from "
        return Path(next(line for line in self.output if line.startswith(prefix))[len(prefix) :].strip())

    def get(self, path: str, headers: dict[str, str] | None = None) -> tuple[http.client.HTTPResponse, bytes]:
        """One request on a new connection, nothing decoded (urllib would hide Content-Encoding)."""
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request("GET", path, headers=headers or {})
            r = conn.getresponse()
            return r, r.read()
        finally:
            conn.close()


@pytest.fixture(scope="module")
def proxy() -> Iterator[Proxy]:
    if NGINX is None:
        pytest.skip("nginx is not installed: `make nginx` (which `make test` runs) installs Debian's package")
    port, first = free_port(), free_port_run(2)
    env = {**os.environ, "PORT": str(port), "WORKER_PORT": str(first), "PYTHON": sys.executable, "NGINX": NGINX}
    proc = subprocess.Popen(
        ["bash", "deploy/serve.sh", "2"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # its own process group, so that a failed test can still stop everything
    )
    # serve.sh's output (and nginx's log, on the same pipe) read as it comes, so that a full pipe never stalls it
    output: list[str] = []
    reader = threading.Thread(target=lambda: output.extend(line.decode() for line in proc.stdout), daemon=True)
    reader.start()
    try:
        deadline = time.monotonic() + 90
        while True:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    reader.join(1)
                    pytest.fail(f"deploy/serve.sh did not start nginx on port {port}: {''.join(output)[-3000:]}")
                time.sleep(0.2)
        yield Proxy(port, [f"127.0.0.1:{first}", f"127.0.0.1:{first + 1}"], output)
    finally:
        proc.terminate()  # serve.sh's trap stops nginx and the workers
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            pass
    # Nothing of it is left: serve.sh exited, no process of its group remains, nobody listens on its ports.
    try:
        os.killpg(proc.pid, 0)
        left = True
    except ProcessLookupError:
        left = False
    if left:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    assert proc.returncode is not None and not left, "deploy/serve.sh left processes running after SIGTERM"
    for p in (port, first, first + 1):
        with pytest.raises(OSError), socket.create_connection(("127.0.0.1", p), timeout=1):
            pass


def _route_cookie(r: http.client.HTTPResponse) -> str | None:
    for header in r.headers.get_all("Set-Cookie") or []:
        if header.startswith("lesson_route="):
            return header.split(";", 1)[0]
    return None


def test_app_html_and_health_through_nginx(proxy: Proxy) -> None:
    r, body = proxy.get("/")
    assert r.status == 200
    assert r.headers["Server"] == "nginx"
    assert b'<div id="root">' in body
    assert r.headers["X-Upstream"] in proxy.workers
    r, body = proxy.get("/_stcore/health")
    assert (r.status, body) == (200, b"ok")
    assert r.headers["X-Upstream"] in proxy.workers


def test_plotly_chunk_is_served_from_its_gzip_twin_with_a_long_cache_header(proxy: Proxy) -> None:
    import streamlit

    js = Path(streamlit.__file__).resolve().parent / "static" / "static" / "js"
    chunk = max(js.glob("PlotlyChart.*.js"), key=lambda p: p.stat().st_size)
    original = chunk.read_bytes()
    assert len(original) > 3_000_000  # the chunk this is about: several MB, left uncompressed by Streamlit
    path = f"/static/js/{chunk.name}"

    r, body = proxy.get(path, {"Accept-Encoding": "gzip"})
    assert r.status == 200
    assert r.headers["Content-Encoding"] == "gzip"
    assert r.headers["Cache-Control"] == IMMUTABLE
    assert r.headers["X-Upstream"] == "static"  # nginx answered from the cache folder, not a worker
    assert r.headers["Content-Type"] == "application/javascript"
    assert len(body) < len(original) / 2
    assert gzip.decompress(body) == original
    # A .gz file written once: the same bytes as the twin in the folder nginx serves (serve.sh printed it)
    twin = proxy.static_root / "static" / "js" / f"{chunk.name}.gz"
    assert twin.read_bytes() == body, twin

    r, body = proxy.get(path)  # a client that does not accept gzip gets the file itself
    assert r.status == 200
    assert r.headers.get("Content-Encoding") is None
    assert body == original


def test_first_request_sets_a_route_cookie_and_later_requests_follow_it(proxy: Proxy) -> None:
    for _ in range(4):
        r, _ = proxy.get("/")
        cookie, first = _route_cookie(r), r.headers["X-Upstream"]
        assert cookie is not None and len(cookie) > len("lesson_route=") + 16
        for path in ("/_stcore/health", "/", "/Scaling_laws"):
            r, _ = proxy.get(path, {"Cookie": cookie})
            assert r.headers["X-Upstream"] == first
            assert _route_cookie(r) is None  # set once, not on every response


def test_different_cookies_spread_over_both_workers(proxy: Proxy) -> None:
    seen: dict[str, str] = {}
    for i in range(16):
        cookie = f"lesson_route=client{i}"
        upstreams = {proxy.get("/_stcore/health", {"Cookie": cookie})[0].headers["X-Upstream"] for _ in range(3)}
        assert len(upstreams) == 1, (cookie, upstreams)  # one client stays on one worker
        seen[cookie] = upstreams.pop()
    assert set(seen.values()) == set(proxy.workers)


def test_websocket_sessions_run_pages_through_nginx(proxy: Proxy) -> None:
    res = run_load(proxy.url, 2, 4.0, 1.0, seed=3, switch_pages=False)
    assert res.errors == []
    assert res.exceptions == []
    assert res.reruns >= 2 and res.sent == res.reruns
    # Each session's websocket went to the worker that served its first page request.
    assert len(res.routes) == 2
    assert all(page == ws and page in proxy.workers for page, ws in res.routes), res.routes


def test_plotly_js_for_the_live_charts_is_served_from_its_gzip_twin(proxy: Proxy) -> None:
    from pages.frame.charts import plotly_js_source

    original = plotly_js_source().read_bytes()  # plotly's cartesian bundle, or the plotly package's full copy
    r, body = proxy.get("/app/static/plotly.min.js", {"Accept-Encoding": "gzip"})
    assert r.status == 200
    assert r.headers["Content-Encoding"] == "gzip"
    assert r.headers["X-Upstream"] == "static"
    assert r.headers["Content-Type"] == "application/javascript"
    assert len(body) < len(original) / 2
    assert gzip.decompress(body) == original
    # a worker serves the same file itself (server.enableStaticServing), as `make run` does without nginx
    host, port = proxy.workers[0].split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    try:
        conn.request("GET", "/app/static/plotly.min.js")
        direct = conn.getresponse()
        assert direct.status == 200 and direct.read() == original
        assert direct.headers["Content-Type"] in ("text/javascript", "application/javascript")
    finally:
        conn.close()
