"""Benchmark of class mode under load (issue 36): N students of one class commit a guess within the same 10 s.

The goal: 200 students joined to one class on this 2-core machine (two workers behind nginx, the load generator on
the same machine), each submitting a guess within the same 10 seconds: every guess counted exactly once, the
teacher's count reaching 200 within 2 s of the last submission, p95 of a submission at most 1.5 s. If 200 is out of
reach, the largest class that meets every target (``--find-max``).

Run: python bench/bench_class_load.py --students 200 --workers 2 [--store sqlite|redis] [--join page|store]
     python bench/bench_class_load.py --students 20,50,100,200 --find-max

Starts deploy/serve.sh (``--workers`` Streamlit workers behind nginx; one server if nginx is not installed, said so)
on a fresh class store (a temporary SQLite file, or a redis-server of its own on a free port with persistence off),
runs each worker once through a student's page and a guess (untimed), measures the floor (a lone student's
submission on the idle app, median of 5), then for each N a fresh class (bench/class_load.py): the teacher's deck
player (its count fragment rerun every second as the browser reruns it, the deck's slides prepared first), N
students joined, their guesses at random times within the window, the counts, every guess counted exactly once,
and the follow signal (the class moved to slide 31, then 32, each drawn for the first time, then back to 31: the
time until every student's session reran).
Prints each run, then a table; exits 1 if a run had errors.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import statistics
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_load import group_cpu_seconds
from bench.class_load import (
    FOLLOW_SLIDES,
    TARGET_COUNT_LAG_S,
    TARGET_P95_S,
    WINDOW_S,
    ClassLoadResult,
    deployment,
    idle_submissions,
    redis_server,
    run_class,
    warm_workers,
)


def settle(pgid: int, timeout: float = 120.0) -> None:
    """Wait until the deployment is idle (under a tenth of a core over a second), so that one run's leftovers (a
    worker dropping its sessions) do not land in the next."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        before = group_cpu_seconds(pgid)
        time.sleep(1.0)
        if group_cpu_seconds(pgid) - before < 0.1:
            return


def ms(x: float) -> str:
    return "n/a" if math.isnan(x) else f"{1e3 * x:,.0f} ms"


def row(res: ClassLoadResult, floor: float) -> str:
    follow = "; ".join(
        f"{slide}: {ms(res.percentile(50, t))} / {ms(res.percentile(95, t))} / {ms(max(t, default=math.nan))}"
        for slide, t in res.follow
    )
    wall = res.window_wall_s or math.nan
    misses = res.misses()
    return (
        f"| {res.students} | {ms(res.p50)} | {ms(res.p95)} ({res.p95 / floor:.1f}× the floor) "
        f"| {ms(max(res.latencies, default=math.nan))} | {res.count_lag:+.2f} s | {res.last_finish_to_store_s:+.2f} s "
        f"| {'yes' if res.counted_once else 'NO'} | {follow or 'not measured'} "
        f"| {100 * res.server_cpu_s / wall:.0f}% | {100 * res.other_cpu_s / wall:.0f}% "
        f"| {res.load_average[0]:.1f} → {res.load_average[1]:.1f} "
        f"| {'met' if not misses else 'missed: ' + '; '.join(misses)} |"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--students", default="200", help="class sizes, comma-separated (e.g. 20,50,100,200)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--store", choices=("sqlite", "redis"), default="sqlite")
    parser.add_argument("--join", choices=("page", "store"), default="page",
                        help="students join through the page's form (default) or classroom.classes.join")  # fmt: skip
    parser.add_argument("--window", type=float, default=WINDOW_S, help="seconds within which every guess is sent")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--connect", type=int, default=8, help="students joining at a time (default 8)")
    parser.add_argument("--no-follow", action="store_true", help="skip the follow signal's measurement")
    parser.add_argument(
        "--find-max", action="store_true", help="if a size misses the goal, bisect for the largest that meets it"
    )
    args = parser.parse_args()
    sizes = [int(n) for n in args.students.split(",")]
    if not all(1 <= n <= 500 for n in sizes):
        parser.error("class sizes from 1 to 500")

    print(f"{os.cpu_count()} CPUs, load average at start {os.getloadavg()[0]:.1f}; the goal: p95 of a submission "
          f"<= {TARGET_P95_S} s, the teacher's count within {TARGET_COUNT_LAG_S} s of the last submission, every "
          f"guess counted once, guesses within {args.window:g} s")  # fmt: skip
    results: list[ClassLoadResult] = []
    with ExitStack() as stack:
        if args.store == "redis":
            store_url, store_pid = stack.enter_context(redis_server())
        else:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="class-load-"))
            store_url, store_pid = f"sqlite:///{folder}/classes.sqlite3", None
        dep = stack.enter_context(deployment(args.workers, {"LESSON_CLASS_STORE": store_url}))
        print(f"serving: {dep.note}; store: {args.store}; students join through "
              f"{'the page' if args.join == 'page' else 'classroom.classes.join'}")  # fmt: skip
        asyncio.run(warm_workers(dep.workers, store_url))
        floor_runs = asyncio.run(idle_submissions(dep.url, store_url, 5))
        floor = statistics.median(floor_runs)
        print(f"the floor (a lone student's submission, idle app, median of 5): {ms(floor)}")

        def measure(n: int) -> ClassLoadResult:
            settle(dep.proc.pid)
            print(f"== {n} students (load average {os.getloadavg()[0]:.1f})", flush=True)
            res = run_class(
                dep.url, store_url, n, window=args.window, join=args.join, seed=args.seed + n,
                follow_slides=() if args.no_follow else FOLLOW_SLIDES, wait_warm=True, server_pgid=dep.proc.pid,
                store_pid=store_pid, connect_limit=args.connect, log=lambda s: print(s, flush=True),
            )  # fmt: skip
            print(res.summary(), flush=True)
            results.append(res)
            return res

        for n in sizes:
            measure(n)
        if args.find_max:
            met = [r.students for r in results if not r.misses()]
            missed = [r.students for r in results if r.misses()]
            lo, hi = max(met, default=0), min((n for n in missed if n > max(met, default=0)), default=None)
            while hi is not None and hi - lo > 10:
                mid = max(lo + 10, min(hi - 10, round((lo + hi) / 20) * 10))
                if measure(mid).misses():
                    hi = mid
                else:
                    lo = mid
            print(f"\nthe largest class that met every target: {lo or 'none'}"
                  + (f" (missed at {hi})" if hi is not None else ""))  # fmt: skip
        if any(r.errors for r in results):
            print("\nthe deployment's log (tail):\n" + dep.log_tail())

    print(f"\n{dep.note}, store {args.store}, join through {args.join}, window {args.window:g} s; floor {ms(floor)}")
    print(
        "| students | submission p50 | p95 | max | teacher's count after the last | store's count after the last "
        "| counted once | follow to slide 31; 32; 31 again (p50 / p95 / max) | server CPU | other processes' CPU "
        "| load average | goal |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for res in sorted(results, key=lambda r: r.students):
        print(row(res, floor))
    print(f"load average at the end {os.getloadavg()[0]:.1f}")
    return 1 if any(r.errors for r in results) else 0


if __name__ == "__main__":
    raise SystemExit(main())
