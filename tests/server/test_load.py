"""The websocket load generator (bench/load.py) against one real Streamlit server: no browser involved."""

from __future__ import annotations

import concurrent.futures
import os
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from bench.harness import running_server, start_server
from bench.load import PAGES, LoadResult, check_loopback, free_port, run_load, run_path
from tests.apptest import BAD_LINK_VALUES
from tests.links import deep_link
from views import catalog

pytestmark = pytest.mark.server

# Each page's main link parameter, given every bad value the AppTest suite tries (text, NaN, inf, overflow, ...).
MAIN_KEY = {"Scaling_laws": "N", "KL_leash": "beta", "LoRA": "r", "GRPO": "r", "Evaluation": "n", "Attention": "h"}


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running_server() as url:
        yield url


def test_sessions_rerun_pages_to_script_finished(server: str) -> None:
    seconds, interval, sessions = 8.0, 1.0, 3
    res = run_load(server, sessions, seconds, interval, seed=0, switch_pages=False)
    assert res.errors == []
    assert res.exceptions == []
    assert res.sent == res.reruns  # every rerun asked for reached script_finished
    # Each session gets at least one rerun, and never more than its fastest jittered schedule (0.5 x interval) allows.
    per_session = [sum(1 for s, *_ in res.runs if s == i) for i in range(sessions)]
    assert all(1 <= n <= seconds / (0.5 * interval) + 1 for n in per_session), per_session
    assert len(res.latencies) == res.reruns == sum(len(v) for v in res.by_page.values())
    assert all(0 < t < seconds + 30 for t in res.latencies)
    assert res.p50 <= res.p95 <= max(res.latencies)
    # Sessions stay on one page each, the pages taken in turn; only valid links of that page are asked for.
    assert {page for _, page, *_ in res.runs} == set(list(PAGES)[:sessions])
    assert all(query in PAGES[page] for _, page, query, _ in res.runs)
    assert res.bytes_received > 10_000 * res.reruns  # a page's elements and figures, not an empty reply
    assert 0 < res.cpu_seconds < res.wall_seconds


def test_bad_link_values_are_handled_without_exception(server: str) -> None:
    pages = {page: tuple(f"{key}={v}" for v in BAD_LINK_VALUES) for page, key in MAIN_KEY.items()}
    res = run_load(server, len(pages), 3.0, 0.3, pages=pages, seed=1, switch_pages=False)
    assert res.errors == []
    assert res.exceptions == []
    assert res.sent == res.reruns
    assert {page for _, page, *_ in res.runs} == set(pages)  # every page got a bad link


def test_unknown_page_is_reported(server: str) -> None:
    res = run_path(server, [("No_such_page", "x=1"), ("GRPO", "r=1,0")])
    assert res.reruns == 2
    assert res.errors == ["page not found: 'No_such_page'"]
    assert res.exceptions == []


def test_switching_pages_in_one_session_shows_no_exception(server: str) -> None:
    steps = [("Evaluation", "n=100000&c=5000&k=100"), ("Evaluation", "n=20&c=5"), ("Attention", "h=2&kv=2")]
    res = run_path(server, steps)
    assert res.errors == []
    assert res.reruns == 3
    assert res.exceptions == []


@pytest.mark.parametrize("url", ["http://10.0.0.1:8501", "http://0.0.0.0:1", "ftp://127.0.0.1/", "127.0.0.1:8501"])
def test_refuses_non_loopback_urls(url: str) -> None:
    with pytest.raises(ValueError):
        check_loopback(url)


def test_accepts_loopback_urls() -> None:
    assert check_loopback("http://127.0.0.1:8501") == ("127.0.0.1", 8501)
    assert check_loopback("http://localhost:8500/") == ("localhost", 8500)
    assert check_loopback("http://[::1]:8500") == ("::1", 8500)


def test_percentiles_match_numpy() -> None:
    rng = np.random.default_rng(0)
    lat = rng.lognormal(-1, 1, 137).tolist()
    res = LoadResult(url="http://127.0.0.1:1", sessions=1, seconds=1, interval=1, latencies=lat)
    for q in (50, 95, 99):
        assert res.percentile(q) == pytest.approx(np.percentile(lat, q), rel=1e-12)
    assert res.p50 == pytest.approx(np.median(lat), rel=1e-12)


def _cpu_seconds(pid: int) -> float:
    """User plus system CPU time of process ``pid`` so far (/proc/PID/stat, fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads a process's CPU time from /proc")
def test_a_session_left_open_costs_the_server_no_cpu() -> None:
    """A viewer reading a page (a session open, nothing asked) leaves the server idle. With Streamlit's default file
    watcher the server spent a whole core for as long as a session was open (.streamlit/config.toml)."""
    port = free_port()
    proc = start_server(port)
    url = f"http://127.0.0.1:{port}"
    hold = 6.0  # the watcher's spin once began only after 4 s
    try:
        step = [("Scaling_laws", "")]
        assert run_path(url, step).reruns == 1  # imports and caches warmed
        cpu = _cpu_seconds(proc.pid)
        assert run_path(url, step).reruns == 1
        rerun = _cpu_seconds(proc.pid) - cpu
        cpu = _cpu_seconds(proc.pid)
        assert run_path(url, step, hold=hold).reruns == 1
        held = _cpu_seconds(proc.pid) - cpu
    finally:
        proc.terminate()
        proc.wait(10)
    print(f"server CPU: a rerun {rerun:.2f} s; a rerun, then the session held open {hold:.0f} s: {held:.2f} s")
    assert held - rerun < 0.5, (rerun, held)


def test_every_page_opens_from_a_deep_link_as_a_fresh_servers_first_request() -> None:
    """Each page's deep link is the first request of a server of its own (four servers at a time), and that page
    runs, with no exception: what ``st.navigation`` beside a pages/ folder broke (docs/architecture.md, Navigation).
    The browser files open nine of these pages this way in chromium."""
    # Home's own link is its path with no values: its first request must be Home's
    links = {"": ""} | {e.url: urllib.parse.urlsplit(deep_link(e.url)).query for e in catalog.PAGES}

    def first_request(page: str) -> LoadResult:
        with running_server() as url:
            return run_path(url, [(page, links[page])])

    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        results = dict(zip(links, pool.map(first_request, links), strict=True))
    for page, res in results.items():
        assert (res.errors, res.exceptions, res.reruns) == ([], [], 1), (page, links[page], res.errors, res.exceptions)
        assert res.pages_run == [page], (page, res.pages_run)
