"""Where a cold start goes: server start to the first figure painted, split into its phases, with the browser's
main-thread time by script, for the floor page and a deep link to the scaling page.

Each run starts a fresh server (``streamlit run``) and a fresh browser context (empty cache), opens the page as the
server's first request, and records, from the server's start:

- healthy: the server answers ``/_stcore/health``;
- socket: the page's websocket opens (the HTML, CSS and the app's main scripts have loaded and run);
- first / last message: the first and the last websocket message of the first script run (the server's run, with
  its imports, as the browser receives it);
- painted: the first plotly figure's SVG is in the page.

Alongside, Chrome's sampling profiler records the page's main thread from navigation to the figure: the busy time
(everything but idle) by script file, which names the work that the floor page does not do (plotly drawing a
larger figure, React mounting more elements, KaTeX, markdown).

Run: .venv/bin/python bench/bench_cold.py [--runs 3] [--json out.json] [--pages all | Attention,LoRA]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.harness import start_server  # noqa: E402
from bench.load import free_port  # noqa: E402

DEEP_LINK = "/Scaling_laws?C=2.73e%2B20&N=1.5e%2B09"
CASES = (("floor", "bench/floor_app.py", "/"), ("scaling deep link", "app.py", DEEP_LINK))
PHASES = ("healthy", "socket", "first message", "last message", "painted")


def _script(url: str) -> str:
    """A profile node's script, as its file name (Chrome's own categories, such as ``(program)``, as they are)."""
    return url.rsplit("/", 1)[-1].split("?")[0] or ""


def one_cold_start(browser, script: str, path: str) -> tuple[dict[str, float], collections.Counter]:
    """(seconds from the server's start for each of PHASES, main-thread milliseconds by script) for one cold start."""
    port = free_port()
    start = time.perf_counter()
    proc = start_server(port, script=script)
    t: dict[str, float] = {"healthy": time.perf_counter() - start}
    messages: list[float] = []
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    try:
        page = context.new_page()

        def on_socket(ws) -> None:
            t.setdefault("socket", time.perf_counter() - start)
            ws.on("framereceived", lambda _frame: messages.append(time.perf_counter() - start))

        page.on("websocket", on_socket)
        cdp = context.new_cdp_session(page)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 500})
        cdp.send("Profiler.start")
        page.goto(f"http://127.0.0.1:{port}{path}", timeout=90_000)
        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=90_000)
        t["painted"] = time.perf_counter() - start
        profile = cdp.send("Profiler.stop")["profile"]
    finally:
        context.close()
        proc.terminate()
        proc.wait(10)
    before_paint = [m for m in messages if m <= t["painted"]] or [t["painted"]]
    t["first message"], t["last message"] = before_paint[0], before_paint[-1]
    nodes = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    busy: collections.Counter = collections.Counter()
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        frame = nodes[sample]
        name = _script(frame["url"]) or frame["functionName"]
        if name != "(idle)":
            busy[name] += delta / 1000
    return t, busy


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="cold starts per case, taken in turn")
    parser.add_argument("--json", help="write the medians here")
    parser.add_argument(
        "--pages",
        default="",
        help="other lesson pages to start cold at their own address, comma-separated URL names, or 'all' (issue 31: "
        "the slowest other lesson page)",
    )
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from bench.links import VIEWS

    others = (
        [p for p in VIEWS if p != "Scaling_laws"] if args.pages == "all" else [p for p in args.pages.split(",") if p]
    )
    unknown = [p for p in others if p not in VIEWS]
    if unknown:
        parser.error(f"not lesson pages: {', '.join(unknown)}")
    cases = CASES + tuple((p, "app.py", f"/{p}") for p in others)

    phases: dict[str, list[dict[str, float]]] = {name: [] for name, _, _ in cases}
    busy: dict[str, list[collections.Counter]] = {name: [] for name, _, _ in cases}
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path="/usr/bin/chromium")
        for _ in range(args.runs):
            for name, script, path in cases:
                t, b = one_cold_start(browser, script, path)
                phases[name].append(t)
                busy[name].append(b)
                print(f"  {name}: painted at {t['painted']:.2f} s", file=sys.stderr)
        browser.close()

    med = {name: {ph: statistics.median(run[ph] for run in runs) for ph in PHASES} for name, runs in phases.items()}
    names = [name for name, _, _ in cases]
    floor = med[names[0]]
    print(f"| phase (s from server start, median of {args.runs}) | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    for ph in PHASES:
        print(f"| {ph} | " + " | ".join(f"{med[n][ph]:.2f}" for n in names) + " |")
    ratios = " | ".join(f"{med[n]['painted'] / floor['painted']:.2f}" for n in names)
    print(f"| painted, ratio to the floor (goal <= 1.3, issue 31) | {ratios} |")

    scripts = {name: collections.Counter() for name in busy}
    for name, counters in busy.items():
        for key in set().union(*counters):
            scripts[name][key] = statistics.median(c.get(key, 0.0) for c in counters)
    f_busy, a_busy = scripts[names[0]], scripts[names[1]]
    print()
    print("| browser main thread, navigation to painted (ms, median) | " + " | ".join(names) + " |")
    print("|---" * (len(names) + 1) + "|")
    print("| all busy time | " + " | ".join(f"{sum(scripts[n].values()):.0f}" for n in names) + " |")
    for key, _ in sorted(a_busy.items(), key=lambda kv: -(kv[1] - f_busy.get(kv[0], 0.0)))[:10]:
        print(f"| {key} | " + " | ".join(f"{scripts[n].get(key, 0.0):.0f}" for n in names) + " |")
    if args.json:
        Path(args.json).write_text(
            json.dumps({"phases": med, "busy_ms": {k: dict(v) for k, v in scripts.items()}}, indent=1)
        )


if __name__ == "__main__":
    main()
