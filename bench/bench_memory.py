"""Server memory over 1,000 distinct interactions: resident set size of one Streamlit worker, sampled as it goes.

Run: python bench/bench_memory.py [--interactions 1000] [--every 50]. Starts ``streamlit run app.py`` on a free
loopback port and replays, in one websocket session (bench/load.py), distinct (page, link) pairs taken in turn
from every lesson page's random walk (bench/links.py). Prints the server's RSS after every ``--every`` reruns and
checks issue 13's goals: under 600 MB after 1,000 interactions, and less than 5% growth over the last 500.
"""

from __future__ import annotations

import argparse
import itertools
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.bench_load import stop, wait_healthy
from bench.links import VIEWS, walk
from bench.load import free_port, run_path

ROOT = Path(__file__).resolve().parents[1]
GOAL_MB, GOAL_GROWTH = 600.0, 0.05


def rss_mb(pid: int) -> float:
    """Resident set size of process ``pid`` in MB (10^6 bytes), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024 / 1e6
    raise RuntimeError(f"no VmRSS for {pid}")


def interactions(count: int, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` distinct (page, query) pairs, the pages taken in turn, each page's links along its own walk."""
    walks = {page: walk(page, 100 * count, seed) for page in VIEWS}
    seen: set[tuple[str, str]] = set()
    out: list[tuple[str, str]] = []
    for page in itertools.cycle(VIEWS):
        for query in walks[page]:
            if (page, query) not in seen:
                seen.add((page, query))
                out.append((page, query))
                break
        if len(out) == count:
            return out
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--interactions", type=int, default=1000)
    parser.add_argument("--every", type=int, default=50)
    args = parser.parse_args()
    steps = interactions(args.interactions)
    log = tempfile.TemporaryFile()
    port = free_port()
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    samples: list[tuple[int, float]] = []
    try:
        url = f"http://127.0.0.1:{port}"
        wait_healthy(url, proc)
        samples.append((0, rss_mb(proc.pid)))
        start = time.monotonic()
        errors = exceptions = 0
        for done in range(0, len(steps), args.every):
            res = run_path(url, steps[done : done + args.every])
            errors += len(res.errors)
            exceptions += len(res.exceptions)
            samples.append((done + res.reruns, rss_mb(proc.pid)))
            print(f"  {samples[-1][0]:5d} interactions: {samples[-1][1]:6.0f} MB", file=sys.stderr, flush=True)
        seconds = time.monotonic() - start
    finally:
        stop(proc)
    final = samples[-1][1]
    half = min(samples, key=lambda s: abs(s[0] - samples[-1][0] / 2))
    growth = final / half[1] - 1
    print(f"{len(steps)} distinct interactions over the {len(VIEWS)} lesson pages in {seconds:.0f} s")
    print(f"errors {errors}, exceptions shown {exceptions}; load average {os.getloadavg()[0]:.1f}")
    print("| interactions | RSS |")
    print("|---|---|")
    for n, mb in samples[:: max(1, len(samples) // 10)] + ([samples[-1]] if len(samples) % 10 != 1 else []):
        print(f"| {n} | {mb:.0f} MB |")
    print(
        f"\nafter {samples[-1][0]}: {final:.0f} MB (goal < {GOAL_MB:.0f}: {'met' if final < GOAL_MB else 'MISSED'}); "
        f"growth over the last {samples[-1][0] - half[0]}: {100 * growth:+.1f}% "
        f"(goal < {100 * GOAL_GROWTH:.0f}%: {'met' if growth < GOAL_GROWTH else 'MISSED'})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
