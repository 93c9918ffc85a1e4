"""Where a control step's *before* goes: the press to Streamlit's script state turning ``running``, split at each stop.

bench/bench_controls.py splits a step into *before* (the press to the script state ``running``), *run* and *redraw*.
This script splits *before* further, with the browser's clock and the server's (both epoch ms, one machine):

- press -> sent: the browser's main thread from the key or pointer press to the rerun request on the websocket
  (the widget's own handlers, React rendering the change, Streamlit writing the URL);
- sent -> received: the request on the wire and in the server's event loop;
- received -> started: the server starting the script run (ScriptRunner's SCRIPT_STARTED);
- started -> first sent: the run's first message (``new_session``) queued for the websocket;
- first sent -> arrived: the message on the wire until the browser's socket handler runs;
- arrived -> running: the browser's main thread until the app's script state reads ``running``.

The server is bench/traced_server.py (``streamlit run`` with timestamps). ``--profile`` adds Chrome's sampling
profiler over press -> running and prints the main thread's busy time by script file.

Run: .venv/bin/python bench/bench_step_parts.py [--pages Scaling_laws,Serving] [--controls 3] [--steps 4] [--profile]
"""

from __future__ import annotations

import argparse
import collections
import os
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench import bench_controls as bc  # noqa: E402
from bench.links import VIEWS as PAGES  # noqa: E402
from bench.links import spec_of  # noqa: E402
from bench.load import free_port  # noqa: E402

PARTS = (
    "press -> sent",
    "sent -> received",
    "received -> started",
    "started -> first sent",
    "first sent -> arrived",
    "arrived -> running",
    "before",
)

# Marks each stop in the browser, and the two marker functions the profiler finds in its samples.
_TRACE_JS = r"""
() => {
  const now = () => performance.timeOrigin + performance.now();
  const spin = (ms) => { const e = performance.now() + ms; while (performance.now() < e) {} };
  window.__STEP_PRESSED = function __STEP_PRESSED() { spin(3); };
  window.__STEP_RUNNING = function __STEP_RUNNING() { spin(3); };
  const t = (window.__parts = {armed: false, press: null, sent: null, arrived: null, running: null});
  const start = () => { if (t.armed) { t.armed = false; t.press = now(); if (t.profile) window.__STEP_PRESSED(); } };
  document.addEventListener("keydown", start, true);
  document.addEventListener("pointerdown", start, true);
  const send = WebSocket.prototype.send;
  WebSocket.prototype.send = function (data) {
    if (t.press !== null && t.sent === null) t.sent = now();
    if (!this.__traced) {
      this.__traced = true;
      this.addEventListener("message", () => { if (t.sent !== null && t.arrived === null) t.arrived = now(); });
    }
    return send.call(this, data);
  };
  const app = document.querySelector("[data-testid='stApp']");
  new MutationObserver(() => {
    if (t.press !== null && t.running === null && app.getAttribute("data-test-script-state") === "running") {
      t.running = now();
      if (t.profile) window.__STEP_RUNNING();
    }
  }).observe(app, {attributes: true, attributeFilter: ["data-test-script-state"]});
}
"""
_ARM_JS = """(p) => Object.assign(window.__parts,
  {armed: true, profile: p, press: null, sent: null, arrived: null, running: null})"""


def _server(script: str, trace: Path) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "LESSON_TRACE": str(trace)}
    cmd = [sys.executable, str(ROOT / "bench/traced_server.py"), script, "--server.port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{script} did not start")


def _server_stops(trace: Path, since: float, until: float) -> tuple[float, float, float] | None:
    """(rerun request received, script started, first message sent) between ``since`` and ``until`` (epoch ms)."""
    events = []
    for line in trace.read_text().splitlines():
        ms, _thread, *words = line.split(" ")
        if since <= float(ms) <= until:
            events.append((float(ms), " ".join(words)))
    received = next((ms for ms, w in events if w == "recv rerun_script"), None)
    started = next((ms for ms, w in events if w == "event SCRIPT_STARTED" and received and ms >= received), None)
    first = next((ms for ms, w in events if w.startswith("send") and started and ms >= started), None)
    return None if None in (received, started, first) else (received, started, first)


def _profile_window(profile: dict) -> collections.Counter:
    """Main-thread milliseconds by script file between the two marker functions' first samples."""
    nodes = {n["id"]: n for n in profile["nodes"]}
    parent = {c: n["id"] for n in profile["nodes"] for c in n.get("children", ())}

    def names(i):
        while i is not None:
            yield nodes[i]["callFrame"]["functionName"]
            i = parent.get(i)

    times, t = [], profile["startTime"]
    for d in profile["timeDeltas"]:
        t += d
        times.append(t)
    pressed = running = None
    for s, ts in zip(profile["samples"], times, strict=True):
        stack = set(names(s))
        if pressed is None and "__STEP_PRESSED" in stack:
            pressed = ts
        elif pressed is not None and "__STEP_RUNNING" in stack:
            running = ts
            break
    busy: collections.Counter = collections.Counter()
    if pressed is None or running is None:
        return busy
    for i, (s, ts) in enumerate(zip(profile["samples"], times, strict=True)):
        if pressed <= ts < running and i + 1 < len(times):
            frame = nodes[s]["callFrame"]
            busy[frame["url"].rsplit("/", 1)[-1] or frame["functionName"]] += (times[i + 1] - ts) / 1000
    return busy


def measure(page, trace: Path, step, n: int, profile: bool) -> tuple[dict[str, list[float]], collections.Counter]:
    """``n`` steps (``step(i)`` changes the control once), each split into PARTS (ms), and the profile's busy time."""
    parts: dict[str, list[float]] = {p: [] for p in PARTS}
    busy: collections.Counter = collections.Counter()
    cdp = page.context.new_cdp_session(page) if profile else None
    if cdp:
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 200})
    for i in range(n):
        if cdp:
            cdp.send("Profiler.start")
        page.evaluate(_ARM_JS, profile)
        step(i)
        if cdp:
            busy.update(_profile_window(cdp.send("Profiler.stop")["profile"]))
        t = page.evaluate("() => window.__parts")
        if None in (t["press"], t["sent"], t["arrived"], t["running"]):
            continue  # the step did not rerun (the value did not change)
        stops = _server_stops(trace, t["press"] - 5, t["running"] + 5)
        if stops is None:
            continue
        received, started, first = stops
        values = (
            t["sent"] - t["press"],
            received - t["sent"],
            started - received,
            first - started,
            t["arrived"] - first,
            t["running"] - t["arrived"],
            t["running"] - t["press"],
        )
        for name, value in zip(PARTS, values, strict=True):
            parts[name].append(value)
    return parts, busy


def _row(label: str, parts: dict[str, list[float]]) -> str:
    cells = [f"{statistics.median(parts[p]):.0f}" if parts[p] else "-" for p in PARTS]
    return f"| {label} | {len(parts['before'])} | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default=",".join(PAGES), help="comma-separated URL names")
    parser.add_argument("--controls", type=int, default=3, help="the first N sidebar controls of each page")
    parser.add_argument("--steps", type=int, default=4, help="steps per control")
    parser.add_argument("--profile", action="store_true", help="main-thread busy time by script, press -> running")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    print(f"load average at the start: {os.getloadavg()[0]:.2f}")
    print("| page: control (widget) | steps | " + " | ".join(PARTS) + " |")
    print("|---|---|" + "---|" * len(PARTS))
    with tempfile.TemporaryDirectory() as tmp, sync_playwright() as pw:
        floor_trace, app_trace = Path(tmp, "floor.log"), Path(tmp, "app.log")
        floor, floor_url = _server("bench/floor_app.py", floor_trace)
        app, app_url = _server("app.py", app_trace)
        browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=["--disable-dev-shm-usage"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.goto(floor_url, timeout=90_000)
            page.wait_for_selector(".js-plotly-plot", timeout=60_000)
            bc._idle(page)
            page.evaluate(bc._OBSERVE_JS)
            page.evaluate(_TRACE_JS)
            box = page.locator("[data-testid='stSidebar'] .st-key-n")
            parts, busy = measure(
                page, floor_trace, lambda i: bc._step(page, box, "slider", i, bc.Steps()), 2 * args.steps, args.profile
            )
            print(_row("floor: n (slider)", parts), flush=True)
            profiles = [("floor", busy, len(parts["before"]))]
            page.close()
            for name in [p for p in args.pages.split(",") if p]:
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(f"{app_url}/{name}", timeout=90_000)
                page.wait_for_selector(".js-plotly-plot", timeout=60_000)
                bc._idle(page)
                page.evaluate(bc._OBSERVE_JS)
                page.evaluate(_TRACE_JS)
                for field, widget in bc._sidebar_fields(page, spec_of(name))[: args.controls]:
                    box = page.locator(f"[data-testid='stSidebar'] .st-key-{field}").first
                    step = lambda i, p=page, box=box, widget=widget: bc._step(p, box, widget, i, bc.Steps())  # noqa: E731
                    parts, busy = measure(page, app_trace, step, args.steps, args.profile)
                    print(_row(f"{name}: {field} ({widget})", parts), flush=True)
                    profiles.append((f"{name}: {field}", busy, len(parts["before"])))
                page.close()
        finally:
            floor.kill()
            app.kill()
    if args.profile:
        print("\nmain thread busy, press -> running, ms per step by script file (top 6)")
        for label, busy, n in profiles:
            top = ", ".join(f"{k} {v / max(n, 1):.0f}" for k, v in busy.most_common(6))
            print(f"- {label}: {top}")
    print(f"load average at the end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
