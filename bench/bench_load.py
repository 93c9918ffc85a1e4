"""Benchmark of serving: many websocket sessions against one Streamlit worker, then against workers behind nginx.

Run: python bench/bench_load.py [--sessions 20] [--seconds 60] [--interval 2] [--workers 2] [--stay]. Starts one
Streamlit server on a free loopback port and drives it with bench/load.py (each session reruns a random lesson
page every ~interval seconds, with a link drawn from 200 along a random walk of that page's controls, one control
changed per step: bench/links.py); then starts deploy/serve.sh with --workers workers behind nginx and drives it
the same way. Every worker first runs each page once at its defaults (imports), untimed. Prints, per
target: rerun latency p50/p95, finished reruns per second, exceptions shown, the load generator's own CPU time
and the servers' CPU time (every process of the server's process group: workers, and nginx), and the machine's
load average, since other work on the machine changes these numbers. Needs nginx for the second part
(`make nginx`); without it that part is skipped.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.links import pools
from bench.load import LoadResult, free_port, free_port_run, run_load, run_path

ROOT = Path(__file__).resolve().parents[1]
CLK_TCK = os.sysconf("SC_CLK_TCK")


def group_cpu_seconds(pgid: int) -> float:
    """User + system CPU seconds of every live process in process group ``pgid`` (and its reaped children)."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == pgid:  # field 5 of stat: pgrp
            total += sum(int(f) for f in fields[11:15])  # utime, stime, cutime, cstime
    return total / CLK_TCK


def wait_healthy(url: str, proc: subprocess.Popen, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            with urllib.request.urlopen(url + "/_stcore/health", timeout=2) as r:
                if r.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError(f"{url} not healthy after {timeout} s")


def stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    try:
        proc.wait(20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def warm(worker_urls: list[str], links: dict[str, tuple[str, ...]]) -> None:
    """Run each page once on each worker (first imports), untimed, at its defaults (not a link the load asks for)."""
    for url in worker_urls:
        res = run_path(url, [(page, "") for page in links])
        if res.errors:
            raise RuntimeError(f"warm-up of {url} failed: {res.errors}")


def measure(
    name: str, url: str, proc: subprocess.Popen, args: argparse.Namespace, links: dict[str, tuple[str, ...]]
) -> tuple[str, LoadResult, float]:
    cpu0 = group_cpu_seconds(proc.pid)
    res = run_load(
        url, args.sessions, args.seconds, args.interval, pages=links, seed=args.seed, switch_pages=not args.stay
    )
    server_cpu = group_cpu_seconds(proc.pid) - cpu0
    print(f"== {name}  (load average {os.getloadavg()[0]:.1f})")
    print(res.summary())
    print(f"  server CPU {server_cpu:.1f} s ({100 * server_cpu / res.wall_seconds:.0f}% of one core)")
    return name, res, server_cpu


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--interval", type=float, default=2.0)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stay", action="store_true", help="each session stays on one page")
    args = parser.parse_args()
    print(f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.1f}")
    # every lesson page, 200 links each along a random walk (bench/links.py): a class changing one control at a time
    links = pools(200, seed=args.seed)
    rows = []

    log = tempfile.TemporaryFile()  # a file, not an unread pipe that would stall the server once full
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc)
        warm([url], links)
        rows.append(measure("1 worker, direct", url, proc, args, links))
    finally:
        stop(proc)

    nginx = shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)
    if nginx is None:
        print("nginx not installed (`make nginx`): the scale-out part is skipped")
    else:
        port, first = free_port(), free_port_run(args.workers)
        env = {**os.environ, "PORT": str(port), "WORKER_PORT": str(first), "PYTHON": sys.executable, "NGINX": nginx}
        proc = subprocess.Popen(
            ["bash", "deploy/serve.sh", str(args.workers)],
            cwd=ROOT,
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            wait_healthy(url, proc)
            warm([f"http://127.0.0.1:{p}" for p in range(first, first + args.workers)], links)
            rows.append(measure(f"{args.workers} workers behind nginx", url, proc, args, links))
        finally:
            stop(proc)

    print(
        f"\n{args.sessions} sessions, one rerun every ~{args.interval:g} s each, {args.seconds:g} s"
        f"{' (each on one page)' if args.stay else ' (random page each rerun)'}"
    )
    print("| target | p50 | p95 | reruns/s | reruns | exceptions | generator CPU | server CPU |")
    print("|---|---|---|---|---|---|---|---|")
    for name, res, server_cpu in rows:
        print(
            f"| {name} | {1e3 * res.p50:.0f} ms | {1e3 * res.p95:.0f} ms | {res.throughput:.2f} | {res.reruns} "
            f"| {len(res.exceptions)} | {res.cpu_seconds:.1f} s ({100 * res.cpu_share:.0f}%) "
            f"| {server_cpu:.0f} s ({100 * server_cpu / res.wall_seconds:.0f}%) |"
        )
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
