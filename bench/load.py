"""Load generator that drives Streamlit sessions over its own websocket protocol, without a browser.

Each simulated viewer opens the app's HTML page (keeping the cookies it sets, as a browser would, so a sticky load
balancer sees the same client again), opens a session on ``/_stcore/stream`` (subprotocol ``streamlit``), then
every ~``interval`` seconds (jittered) asks for a rerun of a random page with a random valid link
(``BackMsg.rerun_script`` with ``page_name`` and ``query_string``, as a click on a shared link does) and reads
``ForwardMsg``s until ``script_finished``. The latency of a rerun is the time from sending it to its
``script_finished``. Exceptions the page shows (``delta.new_element.exception``) are counted with their text.

A session never has two reruns in flight: when a rerun is slower than the interval, the next one is sent as soon
as it finishes. The run is bounded (sessions, duration, a grace period for reruns in flight) and stops by itself;
it talks to loopback addresses only.

Run: python bench/load.py --url http://127.0.0.1:8501 --sessions 20 --seconds 60 --interval 2 [--stay]
Library: ``run_load(url, sessions, seconds, interval, pages=None, seed=0) -> LoadResult``; ``run_path(url, steps)``
replays one session's path through given pages in order.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import ipaddress
import random
import socket
import statistics
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import urlsplit

# Valid links per page (page_name -> query strings), within each control's range (read from pages/*.py).
PAGES: dict[str, tuple[str, ...]] = {
    "Scaling_laws": ("N=5e9&C=1e21", "N=1e10&C=1.2e21", "N=1.5e9&C=2.73e20", "N=7e10&C=5.76e23", "C=1e22"),
    "KL_leash": ("beta=0.5", "beta=1", "beta=0.1", "beta=2", "beta=10"),
    "LoRA": ("r=16&d=128", "r=4", "r=8&d=64&k=64", "r=32&d=256&k=256", "r=2&d=32&k=48"),
    "GRPO": ("r=1,0,1,1", "r=1,0,0,1,1,0,0,0", "r=1,1,1,1", "r=0.2,0.9,0.5&std=sample", "r=1,0&std=none"),
    "Evaluation": ("n=20&c=5", "n=10&c=3&k=5", "n=200&c=37&k=10", "n=100000&c=5000&k=100", "n=50&c=0"),
    "Attention": ("h=8&kv=2", "h=4&kv=4", "h=8&kv=1&dm=128", "h=2&kv=2&seed=3"),
}

MAX_SESSIONS = 500
MAX_SECONDS = 3600.0
MIN_INTERVAL = 0.05
STREAM_PATH = "/_stcore/stream"


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100) of ``values``, linear between order statistics; NaN if there are none."""
    if not values:
        return float("nan")
    if len(values) == 1:
        return values[0]
    cuts = statistics.quantiles(values, n=1000, method="inclusive")
    return cuts[min(max(round(q * 10) - 1, 0), len(cuts) - 1)]


@dataclass
class LoadResult:
    """What one load run measured. Times in seconds."""

    url: str
    sessions: int
    seconds: float
    interval: float
    latencies: list[float] = field(default_factory=list)  # one per finished rerun, send -> script_finished
    by_page: dict[str, list[float]] = field(default_factory=dict)
    runs: list[tuple[int, str, str, float]] = field(default_factory=list)  # (session, page, query, latency), in order
    exceptions: list[str] = field(default_factory=list)  # "page?query: Type: message" for each exception shown
    errors: list[str] = field(default_factory=list)  # connection failures, unknown pages, compile errors, timeouts
    # the URL name of the page each run ran, as its new_session message names it ("" for the main page), in order
    pages_run: list[str] = field(default_factory=list)
    sent: int = 0  # reruns requested
    reruns: int = 0  # reruns that reached script_finished
    bytes_received: int = 0  # websocket payload bytes
    upstreams: Counter = field(default_factory=Counter)  # X-Upstream header of each session's first page request
    routes: list[tuple[str, str]] = field(default_factory=list)  # X-Upstream of (the page request, the websocket)
    wall_seconds: float = 0.0
    cpu_seconds: float = 0.0  # this process's CPU time (user + system) during the run

    @property
    def unfinished(self) -> int:
        return self.sent - self.reruns

    def percentile(self, q: float) -> float:
        """The q-th percentile (0-100) of the rerun latencies (:func:`percentile`)."""
        return percentile(self.latencies, q)

    @property
    def p50(self) -> float:
        return self.percentile(50)

    @property
    def p95(self) -> float:
        return self.percentile(95)

    @property
    def throughput(self) -> float:
        """Finished reruns per second of wall-clock time."""
        return self.reruns / self.wall_seconds if self.wall_seconds > 0 else float("nan")

    @property
    def cpu_share(self) -> float:
        """The generator's CPU time as a fraction of one core over the run."""
        return self.cpu_seconds / self.wall_seconds if self.wall_seconds > 0 else float("nan")

    def summary(self) -> str:
        lines = [
            f"{self.url}: {self.sessions} sessions, {self.seconds:g} s, one rerun every ~{self.interval:g} s each",
            f"  reruns {self.reruns} finished of {self.sent} sent, {self.throughput:.2f}/s; "
            f"p50 {1e3 * self.p50:.0f} ms, p95 {1e3 * self.p95:.0f} ms, "
            f"max {1e3 * max(self.latencies, default=0):.0f} ms",
            f"  exceptions {len(self.exceptions)}, errors {len(self.errors)}, "
            f"received {self.bytes_received / 1e6:.1f} MB",
            f"  generator CPU {self.cpu_seconds:.2f} s over {self.wall_seconds:.1f} s wall "
            f"({100 * self.cpu_share:.0f}% of one core)",
        ]
        for page, lat in sorted(self.by_page.items()):
            lat = sorted(lat)
            lines.append(f"    {page:<13} n={len(lat):<4} median {1e3 * statistics.median(lat):.0f} ms")
        if self.upstreams:
            lines.append(f"  first page request served by: {dict(self.upstreams)}")
        for text in (self.exceptions + self.errors)[:10]:
            lines.append(f"  ! {text}")
        return "\n".join(lines)


def free_port() -> int:
    """A loopback port that is free now (for a server to start on)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def free_port_run(n: int) -> int:
    """The first of ``n`` consecutive loopback ports that are free now (for ``n`` workers behind a balancer)."""
    rng = random.Random()
    for _ in range(100):
        base = rng.randrange(20_000, 40_000)
        try:
            for port in range(base, base + n):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
        except OSError:
            continue
        return base
    raise RuntimeError("no run of free ports")


def check_loopback(url: str) -> tuple[str, int]:
    """(host, port) of an http(s) URL whose host resolves to loopback addresses only; ValueError otherwise."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"expected an http:// URL, got {url!r}")
    host = parts.hostname
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        addresses = {info[4][0] for info in socket.getaddrinfo(host, port, proto=socket.IPPROTO_TCP)}
    except socket.gaierror as e:
        raise ValueError(f"cannot resolve {host!r}: {e}") from None
    if not addresses or not all(ipaddress.ip_address(a.split("%")[0]).is_loopback for a in addresses):
        raise ValueError(f"refusing to load {host!r} ({', '.join(sorted(addresses))}): loopback addresses only")
    return host, port


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):  # type: ignore[override]
        raise urllib.error.HTTPError(newurl, code, f"redirect to {newurl} refused (loopback only)", headers, fp)


# No proxy from the environment and no redirect: every request stays on the loopback address it was given.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirect())


def _fetch_page(url: str, timeout: float) -> tuple[str, str]:
    """GET the app's HTML page like a browser: (Cookie header built from its Set-Cookie headers, X-Upstream)."""
    with _OPENER.open(url, timeout=timeout) as r:
        r.read()
        cookie = SimpleCookie()
        for header in r.headers.get_all("Set-Cookie") or []:
            cookie.load(header)
        return "; ".join(f"{k}={m.value}" for k, m in cookie.items()), r.headers.get("X-Upstream", "")


def _exception_text(msg) -> str | None:
    if msg.WhichOneof("type") != "delta" or msg.delta.WhichOneof("type") != "new_element":
        return None
    element = msg.delta.new_element
    if element.WhichOneof("type") != "exception":
        return None
    return f"{element.exception.type}: {element.exception.message[:300]}"


@asynccontextmanager
async def _open_session(index: int, base: str, res: LoadResult) -> AsyncIterator[Any]:
    """GET the page (keeping its cookies), then open the session's websocket carrying them."""
    from websockets.asyncio.client import connect
    from websockets.typing import Origin, Subprotocol

    cookie, upstream = await asyncio.to_thread(_fetch_page, base + "/", 30.0)
    if upstream:
        res.upstreams[upstream] += 1
    async with connect(
        "ws" + base[len("http") :] + STREAM_PATH,
        subprotocols=[Subprotocol("streamlit")],
        origin=Origin(base),  # as a browser sends it; Streamlit checks it against the Host it is given
        additional_headers={"Cookie": cookie} if cookie else None,
        max_size=None,
        compression=None,
        open_timeout=30,
        proxy=None,  # never a proxy from the environment
    ) as ws:
        if upstream:
            res.routes.append((upstream, ws.response.headers.get("X-Upstream", "")))
        yield ws


async def _rerun(ws: Any, index: int, page: str, query: str, res: LoadResult, timeout: float) -> bool:
    """Ask for one rerun of ``page`` with ``query`` and read until its script_finished; False on timeout."""
    from streamlit.proto.BackMsg_pb2 import BackMsg
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    back = BackMsg()
    back.rerun_script.page_name = page
    back.rerun_script.query_string = query
    start = time.monotonic()
    await ws.send(back.SerializeToString())
    res.sent += 1
    try:
        async with asyncio.timeout(timeout):
            while True:
                raw = await ws.recv()
                res.bytes_received += len(raw)
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                kind = msg.WhichOneof("type")
                if (text := _exception_text(msg)) is not None:
                    res.exceptions.append(f"{page}?{query}: {text}")
                elif kind == "new_session":
                    ran = msg.new_session.page_script_hash
                    names = {p.page_script_hash: p.url_pathname for p in msg.new_session.app_pages}
                    res.pages_run.append(names.get(ran, f"? {ran}"))
                elif kind == "page_not_found":
                    res.errors.append(f"page not found: {page!r}")
                elif kind == "script_finished":
                    if msg.script_finished == ForwardMsg.FINISHED_WITH_COMPILE_ERROR:
                        res.errors.append(f"{page}?{query}: compile error")
                    break
    except TimeoutError:
        res.errors.append(f"session {index}: {page}?{query} unfinished after {timeout:.0f} s")
        return False
    latency = time.monotonic() - start
    res.reruns += 1
    res.latencies.append(latency)
    res.by_page.setdefault(page, []).append(latency)
    res.runs.append((index, page, query, latency))
    return True


async def _session(
    index: int,
    base: str,
    res: LoadResult,
    pages: dict[str, tuple[str, ...]],
    switch_pages: bool,
    seed: int,
    deadline: float,
    grace: float,
) -> None:
    rng = random.Random(seed * 100_003 + index)
    names = list(pages)
    # the page a session opens first (with as many sessions as pages, every page is opened), and stays on without
    # switch_pages
    home = names[(index + seed) % len(names)]
    # Viewers arrive spread over the first interval rather than all at once.
    await asyncio.sleep(rng.uniform(0, res.interval))
    if time.monotonic() >= deadline:
        return
    try:
        async with _open_session(index, base, res) as ws:
            next_send, first = time.monotonic(), True
            # A session that arrived before the deadline gets its first rerun (its page load) even if opening
            # it took until past the deadline; after that, no new rerun starts past the deadline.
            while first or next_send < deadline:
                await asyncio.sleep(max(0.0, next_send - time.monotonic()))
                page = rng.choice(names) if switch_pages and not first else home
                first = False
                start = time.monotonic()
                # Reruns still in flight at the end get ``grace`` seconds to finish.
                if not await _rerun(ws, index, page, rng.choice(pages[page]), res, max(deadline + grace - start, 1.0)):
                    return
                # Jittered think time, counted from the previous send; never two reruns in flight.
                next_send = max(start + res.interval * rng.uniform(0.5, 1.5), time.monotonic())
    except Exception as e:  # OSError, TimeoutError, websockets' handshake errors and ConnectionClosed
        res.errors.append(f"session {index}: {type(e).__name__}: {e}")


def _run_coroutine(coro: Any) -> Any:
    """``asyncio.run`` in a thread of its own: callers may already run an event loop (playwright's sync API does)."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, coro).result()


def run_path(url: str, steps: list[tuple[str, str]], timeout: float = 60.0, hold: float = 0.0) -> LoadResult:
    """One session that reruns ``steps`` ((page_name, query_string) pairs) in order, each as soon as the previous
    one finished: a viewer's path through the app, replayed; then keeps the session open ``hold`` more seconds, as a
    viewer reading the page does. Loopback only."""
    check_loopback(url)
    base = url.rstrip("/")
    res = LoadResult(url=base, sessions=1, seconds=0.0, interval=0.0)

    async def _path() -> None:
        try:
            async with _open_session(0, base, res) as ws:
                for page, query in steps:
                    if not await _rerun(ws, 0, page, query, res, timeout):
                        return
                await asyncio.sleep(hold)
        except Exception as e:
            res.errors.append(f"session 0: {type(e).__name__}: {e}")

    cpu0, wall0 = time.process_time(), time.monotonic()
    _run_coroutine(_path())
    res.wall_seconds = time.monotonic() - wall0
    res.cpu_seconds = time.process_time() - cpu0
    return res


async def run_load_async(
    url: str,
    sessions: int,
    seconds: float,
    interval: float,
    pages: dict[str, tuple[str, ...]] | None = None,
    seed: int = 0,
    grace: float = 30.0,
    switch_pages: bool = True,
) -> LoadResult:
    """:func:`run_load` for callers that already run an event loop."""
    check_loopback(url)
    if not 1 <= sessions <= MAX_SESSIONS:
        raise ValueError(f"sessions must be 1 to {MAX_SESSIONS}, got {sessions}")
    if not 0 < seconds <= MAX_SECONDS:
        raise ValueError(f"seconds must be in (0, {MAX_SECONDS:g}], got {seconds}")
    if interval < MIN_INTERVAL:
        raise ValueError(f"interval must be at least {MIN_INTERVAL} s, got {interval}")
    pages = {k: tuple(v) for k, v in (pages or PAGES).items()}
    if not pages or not all(pages.values()):
        raise ValueError("pages must map each page name to at least one query string")
    base = url.rstrip("/")
    res = LoadResult(url=base, sessions=sessions, seconds=seconds, interval=interval)
    cpu0, wall0 = time.process_time(), time.monotonic()
    deadline = wall0 + seconds
    await asyncio.gather(*(_session(i, base, res, pages, switch_pages, seed, deadline, grace) for i in range(sessions)))
    res.wall_seconds = time.monotonic() - wall0
    res.cpu_seconds = time.process_time() - cpu0
    return res


def run_load(
    url: str,
    sessions: int,
    seconds: float,
    interval: float,
    pages: dict[str, tuple[str, ...]] | None = None,
    seed: int = 0,
    grace: float = 30.0,
    switch_pages: bool = True,
) -> LoadResult:
    """Drive ``sessions`` concurrent Streamlit sessions at ``url`` (loopback only) for ``seconds``.

    Each session reruns a random page of ``pages`` (page_name -> valid query strings; default :data:`PAGES`)
    every ``interval`` seconds on average (uniformly jittered by ±50%). New reruns stop at ``seconds``; reruns
    still running then get ``grace`` more seconds. Seeded: the same ``seed`` asks for the same sequence.
    With ``switch_pages=False`` session i stays on one page (the pages taken in turn), changing only its link's
    values, as a viewer who opened one shared link does; otherwise each rerun may land on another page of the
    same session, as a viewer following links between pages does.
    """
    return _run_coroutine(run_load_async(url, sessions, seconds, interval, pages, seed, grace, switch_pages))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--url", default="http://127.0.0.1:8501", help="the app's address (loopback only)")
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=2.0, help="mean seconds between a session's reruns")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--page", action="append", choices=sorted(PAGES), help="only these pages (repeatable)")
    parser.add_argument("--stay", action="store_true", help="each session stays on one page (no page switches)")
    args = parser.parse_args(argv)
    pages = {p: PAGES[p] for p in args.page} if args.page else None
    try:
        res = run_load(
            args.url, args.sessions, args.seconds, args.interval, pages, args.seed, switch_pages=not args.stay
        )
    except ValueError as e:
        parser.error(str(e))
    print(res.summary())
    return 1 if res.exceptions or res.errors else 0


if __name__ == "__main__":
    raise SystemExit(main())
