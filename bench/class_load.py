"""Class mode under load (issue 36): one class, a teacher and N students, each in a websocket session of its own
that speaks Streamlit's protocol as bench/load.py does (no browser).

A run, on a deployment already serving (:func:`deployment`) and a class store it shares with this process:

1. A class on deck ``lesson`` at slide 30 (predict first: the calibration slide, a guess from 0 to 1), started
   through ``classroom.classes.start_class``.
2. The teacher's session opens the deck player (``/Deck?deck=lesson&slide=30&teach=<class>``, the teacher key in
   its cookie, as the teacher's browser holds it) and keeps its fragments' timers as the browser does (a fragment
   with ``run_every`` is rerun by the browser: ``auto_rerun`` names it and its interval); the answer count is read
   from the badge that the count fragment draws (``guesses 12 of 200``).
3. N students join: through the page (``/Class?code=...``, the join form's code and name submitted as the browser
   submits a form, the student's own link read back from the address the page sets), or through
   ``classroom.classes.join`` and then ``/Class?class_id=...&student=...``. Each session finds the answer form's
   widgets in the deltas of its page (an element carries its id, a user key ends it: ``...-class-guess``; the
   form's submit button ``is_form_submitter``; the fragment's id on each delta it draws).
4. Within one window (10 s), each student at a random time commits a guess: a rerun of the answer fragment alone
   (``fragment_id``) whose widget states hold the number input's value (``double_value``) and the submit button's
   ``trigger_value``, as the browser sends a form submit, with the "Follow the teacher" toggle as drawn. A
   submission's latency runs from sending it to its run's final ``script_finished`` (the box's own ``st.rerun``
   first ends one run early); its screen must then say "Your guess".
5. The count: the store's ``answer_count``, polled every 20 ms by this process, and the teacher's badge, each
   timed from the last submission's finish; every guess counted exactly once (the store's rows are the guesses
   sent, one per student).
6. The follow signal: the class's slide moved (``classroom.classes.set_slide``), and the time until every student's
   session has received the pushed rerun's ``script_finished``, with the new slide on it (:data:`FOLLOW_SLIDES`).

Loopback only; every process started here is stopped on exit.
"""

from __future__ import annotations

import asyncio
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, quote

from bench.load import STREAM_PATH, _fetch_page, check_loopback, free_port, free_port_run, percentile

ROOT = Path(__file__).resolve().parents[1]
DECK = "lesson"
SLIDE = 30  # "Predict: how often is a tuned model right when it says 0.9?": a guess from 0 to 1
QUESTION = f"{DECK}/{SLIDE}"
# the slides the follow check moves the class to, one after the other: 31 and 32 drawn for the first time (32, LoRA,
# builds its view in 3.6 s on a worker that has not imported torch), then 31 again (every worker has its copy)
FOLLOW_SLIDES = (31, 32, 31)
GUESS_KEY = "class-guess"
FOLLOW_KEY = "class-follow"
STYLED_GATE = "frame-styled-gate"  # pages/frame/shims.py's STYLED_GATE_KEY
# the goal (issue 36)
TARGET_P95_S = 1.5
TARGET_COUNT_LAG_S = 2.0
WINDOW_S = 10.0
BADGE = re.compile(r"guesses (\d+) of (\d+)")  # the badge: "Class ABCD-EFGH: guesses 12 of 200 (v reveals) · ..."
RUN_TIMEOUT_S = 180.0


def nginx_binary() -> str | None:
    return shutil.which("nginx") or ("/usr/sbin/nginx" if os.access("/usr/sbin/nginx", os.X_OK) else None)


# ---------------------------------------------------------------------------------------------------- processes


@dataclass
class Deployment:
    url: str  # what the sessions connect to (nginx, or the one server)
    workers: list[str]  # each worker's own address
    proc: subprocess.Popen  # the process group's leader (serve.sh, or the server)
    note: str  # how it is served, in words
    log: Any  # the deployment's output (a temporary file)

    def log_tail(self, chars: int = 3000) -> str:
        self.log.flush()
        self.log.seek(0)
        return self.log.read().decode(errors="replace")[-chars:]


@contextmanager
def deployment(workers: int, env: dict[str, str]) -> Iterator[Deployment]:
    """The app served as deploy/serve.sh serves it (``workers`` Streamlit workers behind nginx, sticky sessions), with
    ``env`` added to the environment; one server without nginx when ``workers`` is 1 or nginx is not installed.
    Stopped on exit: serve.sh's trap stops nginx and the workers, and whatever of the group is left is killed."""
    from bench.bench_load import wait_healthy

    log = tempfile.TemporaryFile()
    nginx = nginx_binary()
    full_env = {**os.environ, **env}
    if workers > 1 and nginx is not None:
        port, first = free_port(), free_port_run(workers)
        full_env |= {"PORT": str(port), "WORKER_PORT": str(first), "PYTHON": sys.executable, "NGINX": nginx}
        cmd = ["bash", "deploy/serve.sh", str(workers)]
        worker_urls = [f"http://127.0.0.1:{p}" for p in range(first, first + workers)]
        note = f"{workers} workers behind nginx (deploy/serve.sh)"
    else:
        port = free_port()
        cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
        worker_urls = [f"http://127.0.0.1:{port}"]
        note = "one server, no nginx" + (" (nginx is not installed: `make nginx`)" if workers > 1 else "")
    proc = subprocess.Popen(cmd, cwd=ROOT, env=full_env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        try:
            wait_healthy(url, proc, timeout=120)
            for w in worker_urls:
                wait_healthy(w, proc, timeout=60)
        except RuntimeError as exc:
            log.seek(0)
            raise RuntimeError(f"{exc}: {log.read().decode(errors='replace')[-3000:]}") from None
        yield Deployment(url, worker_urls, proc, note, log)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)  # whatever of the group is left (none after serve.sh's trap)
        except ProcessLookupError:
            pass
        proc.wait()
        log.close()


@contextmanager
def redis_server() -> Iterator[tuple[str, int]]:
    """A redis-server of our own on a free loopback port, persistence off (as tests/redis_server.py starts one):
    its URL and pid; stopped on exit."""
    import redis

    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        raise RuntimeError("redis-server is not installed (`make redis` installs Debian's package)")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    client = redis.Redis.from_url(url)
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                client.ping()
                break
            except redis.ConnectionError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("redis-server did not start") from None
                time.sleep(0.05)
        yield url, proc.pid
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def machine_busy_seconds() -> float:
    """CPU seconds every process of the machine has used so far, all cores together (/proc/stat: all but idle and
    I/O wait)."""
    with open("/proc/stat") as f:
        user, nice, system, _idle, _iowait, irq, softirq, steal = (int(x) for x in f.readline().split()[1:9])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def group_rss_mb(pgid: int) -> float:
    """Resident memory of every process in process group ``pgid`` (the workers, nginx), in MB."""
    total = 0
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[2]) == pgid:
                total += int(fields[21]) * os.sysconf("SC_PAGE_SIZE")  # field 24 of stat: rss in pages
        except (OSError, ValueError, IndexError):
            continue
    return total / 1e6


def process_cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of one process so far."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# ---------------------------------------------------------------------------------------------------- a session


@dataclass
class Run:
    """What one script run drew, up to its final ``script_finished`` (a run ended early for a rerun goes on into the
    next): its widgets by id, its texts, the fragment it ran (if one), exceptions, the status it finished with."""

    widgets: dict[str, tuple[str, Any, str]] = field(default_factory=dict)  # id -> (type, element, fragment id)
    texts: list[str] = field(default_factory=list)
    exceptions: list[str] = field(default_factory=list)
    full: bool = False  # a run of the whole page (not a fragment's alone)
    status: int = -1
    finished_at: float = 0.0

    def widget(self, kind: str, test: Any) -> tuple[str, Any, str] | None:
        return next(((i, e, f) for i, (k, e, f) in self.widgets.items() if k == kind and test(i, e)), None)


class Session:
    """One browser's websocket session, read by a task of its own: every run it is sent or pushed is kept in
    ``runs``; ``query`` is the address bar's query string as the page last set it; ``page_hash`` the page it shows
    (a rerun names it, as the browser's does); the fragments the page asked the browser to rerun on a timer are in
    ``timers`` (until the server stops them)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.ws: Any = None
        self.runs: list[Run] = []
        self.query = ""
        self.page_hash = ""
        self.timers: dict[str, float] = {}  # fragment id -> interval (s), as the page's auto_rerun messages set them
        self.closed: str | None = None
        self.bytes = 0
        self.upstream = ""
        self.on_text: Any = None  # called with (time, text) for every text drawn
        self._current = Run()
        self._changed: asyncio.Event | None = None
        self._reader: asyncio.Task | None = None
        self._stack: Any = None

    async def open(self, base: str, cookie: str = "") -> None:
        """GET the page (keeping its cookies: the balancer's route), then the websocket, with ``cookie`` added."""
        from contextlib import AsyncExitStack

        from websockets.asyncio.client import connect
        from websockets.typing import Origin, Subprotocol

        route, self.upstream = await asyncio.to_thread(_fetch_page, base + "/", 60.0)
        cookies = "; ".join(c for c in (route, cookie) if c)
        self._changed = asyncio.Event()
        self._stack = AsyncExitStack()
        self.ws = await self._stack.enter_async_context(
            connect(
                "ws" + base[len("http") :] + STREAM_PATH,
                subprotocols=[Subprotocol("streamlit")],
                origin=Origin(base),
                additional_headers={"Cookie": cookies} if cookies else None,
                max_size=None,
                compression=None,
                open_timeout=60,
                ping_interval=None,  # a browser sends no websocket pings (the server pings it)
                proxy=None,
            )
        )
        self._reader = asyncio.create_task(self._read())

    async def close(self) -> None:
        if self._stack is not None:
            await self._stack.aclose()
            self._stack = None
        if self._reader is not None:
            self._reader.cancel()
            await asyncio.gather(self._reader, return_exceptions=True)

    async def _read(self) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        try:
            async for raw in self.ws:
                now = time.monotonic()
                self.bytes += len(raw)
                msg = ForwardMsg()
                msg.ParseFromString(raw)
                self._on(msg, now)
        except Exception as exc:  # ConnectionClosed and the like
            self.closed = f"{type(exc).__name__}: {exc}"
        else:
            self.closed = "closed by the server"
        finally:
            assert self._changed is not None
            self._changed.set()

    def _on(self, msg: Any, now: float) -> None:
        from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

        kind = msg.WhichOneof("type")
        run = self._current
        if kind == "new_session":
            if not msg.metadata.run.fragment_ids:
                run.full = True
        elif kind == "navigation":  # the page that runs (the browser's current page from now on)
            self.page_hash = msg.navigation.page_script_hash
        elif kind == "page_info_changed":
            self.query = msg.page_info_changed.query_string
        elif kind == "auto_rerun":
            self.timers[msg.auto_rerun.fragment_id] = msg.auto_rerun.interval
        elif kind == "stop_auto_rerun":
            for fid in msg.stop_auto_rerun.fragment_ids:
                self.timers.pop(fid, None)
        elif kind == "delta" and msg.delta.WhichOneof("type") == "new_element":
            element = msg.delta.new_element
            etype = element.WhichOneof("type")
            sub = getattr(element, etype)
            if etype == "exception":
                run.exceptions.append(f"{sub.type}: {sub.message[:300]}")
            elif getattr(sub, "id", ""):
                run.widgets[sub.id] = (etype, sub, msg.delta.fragment_id)
            text = getattr(sub, "body", None)
            if isinstance(text, str) and text:
                run.texts.append(text)
                if self.on_text is not None:
                    self.on_text(now, text)
        elif kind == "script_finished":
            if msg.script_finished == ForwardMsg.FINISHED_EARLY_FOR_RERUN:
                return  # the run goes on in the next one
            run.status, run.finished_at = msg.script_finished, now
            self.runs.append(run)
            self._current = Run()
            assert self._changed is not None
            self._changed.set()

    async def wait_runs(self, n: int, timeout: float = RUN_TIMEOUT_S) -> Run:
        """The ``n``-th finished run (1-based), waiting for it."""
        assert self._changed is not None
        async with asyncio.timeout(timeout):
            while len(self.runs) < n:
                if self.closed is not None:
                    raise ConnectionError(f"{self.name}: {self.closed}")
                self._changed.clear()
                if len(self.runs) >= n:
                    break
                await self._changed.wait()
        return self.runs[n - 1]

    async def rerun(
        self,
        page: str,
        query: str,
        fragment_id: str = "",
        widgets: tuple[Any, ...] = (),
        auto: bool = False,
        timeout: float = RUN_TIMEOUT_S,
    ) -> tuple[Run, float]:
        """Ask for a run as the browser does (``BackMsg.rerun_script``) and wait for its final ``script_finished``:
        the run and its latency from the send."""
        from streamlit.proto.BackMsg_pb2 import BackMsg

        back = BackMsg()
        rs = back.rerun_script
        # as the browser asks: the page it shows by its hash (the last navigation message's), else by the name in its
        # address (a page opened by its link)
        rs.query_string = query
        if self.page_hash:
            rs.page_script_hash = self.page_hash
        else:
            rs.page_name = page
        rs.fragment_id, rs.is_auto_rerun = fragment_id, auto
        rs.widget_states.widgets.extend(widgets)
        n = len(self.runs) + 1
        start = time.monotonic()
        await self.ws.send(back.SerializeToString())
        run = await self.wait_runs(n, timeout)
        return run, run.finished_at - start


def widget_state(widget_id: str, **value: Any) -> Any:
    """One widget's state as the browser sends it: ``double_value=0.4``, ``trigger_value=True``, ..."""
    from streamlit.proto.WidgetStates_pb2 import WidgetState

    state = WidgetState(id=widget_id)
    for name, v in value.items():
        setattr(state, name, v)
    return state


def styled_trigger(component_id: str) -> Any:
    """What the frame's CSS gate (pages/frame/shims.py) sends once the browser has drawn the frame's CSS: the
    component's event ``styled``, in its trigger aggregator (a JSON list of events), as the browser sends it."""
    import json

    from streamlit.runtime.state.session_state import STREAMLIT_INTERNAL_KEY_PREFIX

    aggregator = f"{STREAMLIT_INTERNAL_KEY_PREFIX}_{component_id}__events"
    return widget_state(aggregator, json_trigger_value=json.dumps([{"event": "styled", "value": "css"}]))


@dataclass
class AnswerForm:
    """The answer box's widgets as a student's page drew them."""

    fragment_id: str
    guess_id: str
    submit_id: str
    follow_id: str | None

    @classmethod
    def find(cls, run: Run) -> AnswerForm:
        guess = run.widget("number_input", lambda i, e: i.endswith("-" + GUESS_KEY))
        if guess is None:
            raise LookupError(f"no answer box ({GUESS_KEY}) among the page's widgets; texts: {run.texts[:8]}")
        submit = run.widget("button", lambda i, e: e.is_form_submitter and e.form_id == guess[1].form_id)
        if submit is None:
            raise LookupError("the answer form has no submit button")
        if not guess[2] or submit[2] != guess[2]:
            raise LookupError("the answer form is not drawn by a fragment")
        follow = run.widget("checkbox", lambda i, e: i.endswith("-" + FOLLOW_KEY))
        return cls(guess[2], guess[0], submit[0], follow[0] if follow else None)

    def submission(self, value: float) -> tuple[Any, ...]:
        """The widget states of committing ``value``: the form's number input and its submit button's trigger, and
        the page's other widget the browser holds a value for (the follow toggle, on)."""
        states = [widget_state(self.guess_id, double_value=value), widget_state(self.submit_id, trigger_value=True)]
        if self.follow_id is not None:
            states.append(widget_state(self.follow_id, bool_value=True))
        return tuple(states)


# ---------------------------------------------------------------------------------------------------- the people


class Teacher:
    """The teacher's deck player: opened with the class's teacher key in its cookie; its timed fragments rerun as
    the browser reruns them (one at a time, each when its interval has passed); every badge it draws is kept."""

    def __init__(self, base: str, class_id: str, key: str) -> None:
        self.base, self.class_id, self.key = base, class_id, key
        self.session = Session("teacher")
        self.counts: list[tuple[float, int, int]] = []  # (time, answered, students) per badge drawn
        self.warm = False  # the deck's slides and handout all prepared (the player says so)
        self.errors: list[str] = []
        self.fragment_runs = 0
        self._ticker: asyncio.Task | None = None
        self.session.on_text = self._text

    def _text(self, now: float, text: str) -> None:
        if (m := BADGE.search(text)) is not None:
            self.counts.append((now, int(m[1]), int(m[2])))
        if "and the handout are ready" in text or "handout could not be built" in text:
            self.warm = True

    async def open(self) -> Run:
        from classroom.classes import CLASS_ID_PATTERN

        assert CLASS_ID_PATTERN.fullmatch(self.class_id)
        cookie = f"lesson_teach_{self.class_id.replace('-', '_')}={self.key}"
        await self.session.open(self.base, cookie)
        run, _ = await self.session.rerun("Deck", f"deck={DECK}&slide={SLIDE}&teach={self.class_id}")
        gate = run.widget("bidi_component", lambda i, e: i.endswith("-" + STYLED_GATE))
        if gate is not None:  # presenter mode's first run waits for the browser's word that its CSS is drawn
            run, _ = await self.session.rerun("Deck", self.session.query, widgets=(styled_trigger(gate[0]),))
        if run.exceptions:
            raise RuntimeError(f"the deck player raised: {run.exceptions}")
        if not self.counts:
            raise RuntimeError(f"the deck player drew no class count; texts: {run.texts[:10]}")
        self._ticker = asyncio.create_task(self._tick())
        return run

    async def _tick(self) -> None:
        due: dict[str, float] = {}
        while True:
            now = time.monotonic()
            for fid, interval in list(self.session.timers.items()):
                due.setdefault(fid, now + interval)
            for fid in list(due):
                if fid not in self.session.timers:
                    del due[fid]
            ready = [f for f, t in due.items() if t <= now]
            if not ready:
                await asyncio.sleep(0.02)
                continue
            fid = min(ready, key=due.__getitem__)
            due[fid] = now + self.session.timers[fid]
            try:
                run, _ = await self.session.rerun("Deck", self.session.query, fragment_id=fid, auto=True)
            except (ConnectionError, TimeoutError) as exc:
                self.errors.append(f"teacher: {type(exc).__name__}: {exc}")
                return
            self.fragment_runs += 1
            self.errors.extend(f"teacher: {e}" for e in run.exceptions)

    def shown(self) -> int:
        """The count the projector shows now (-1 before the first badge)."""
        return self.counts[-1][1] if self.counts else -1

    def first_time_at(self, n: int) -> float | None:
        return next((t for t, answered, _ in self.counts if answered >= n), None)

    async def wait(self, test: Any, what: str, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while not test():
            if self.errors:
                raise RuntimeError(self.errors[0])
            if time.monotonic() > deadline:
                raise TimeoutError(f"the teacher's screen: {what} not seen within {timeout:.0f} s")
            await asyncio.sleep(0.05)

    async def close(self) -> None:
        if self._ticker is not None:
            self._ticker.cancel()
            await asyncio.gather(self._ticker, return_exceptions=True)
        await self.session.close()


@dataclass
class Student:
    index: int
    name: str
    session: Session
    token: str = ""
    form: AnswerForm | None = None
    guess: float = 0.0
    load_s: float = 0.0  # joining (or opening the link) until the class page is drawn
    sent_at: float = 0.0
    latency: float = float("nan")
    finished_at: float = 0.0
    outcome: str = ""  # what the answer box said after the submission


async def join_student(
    index: int, base: str, code: str, join: str, class_id: str = "", token: str = "", name: str | None = None
) -> Student:
    """A student's session, joined (``join="page"``: the join form; ``"store"``: the link of a student the store
    already has) and showing the class's slide with its answer box."""
    name = f"student {index:03d}" if name is None else name
    s = Student(index, name, Session(name))
    await s.session.open(base)
    start = time.monotonic()
    if join == "page":
        first, _ = await s.session.rerun("Class", f"code={code}")
        code_box = first.widget("text_input", lambda i, e: e.label == "Class code")
        name_box = first.widget("text_input", lambda i, e: e.label.startswith("Your name"))
        submit = first.widget("button", lambda i, e: e.is_form_submitter and e.form_id == "class-join")
        if code_box is None or name_box is None or submit is None:
            raise LookupError(f"{name}: no join form; texts: {first.texts[:8]}")
        states = (widget_state(code_box[0], string_value=code), widget_state(name_box[0], string_value=name),
                  widget_state(submit[0], trigger_value=True))  # fmt: skip
        run, _ = await s.session.rerun("Class", s.session.query or f"code={code}", widgets=states)
        link = parse_qs(s.session.query)
        if link.get("class_id") != [class_id] or not link.get("student"):
            raise RuntimeError(f"{name}: the join did not set the student's link ({s.session.query!r}): {run.texts}")
        s.token = link["student"][0]
    else:
        s.token = token
        query = f"class_id={quote(class_id)}&student={quote(token)}"
        run, _ = await s.session.rerun("Class", query)
        s.session.query = s.session.query or query
    s.load_s = time.monotonic() - start
    if run.exceptions:
        raise RuntimeError(f"{name}: the class page raised {run.exceptions}")
    s.form = AnswerForm.find(run)
    return s


async def submit(s: Student, value: float) -> None:
    """Commit ``value`` in the answer box; the latency to the box's final run, and what the box then said."""
    assert s.form is not None
    s.guess = value
    s.sent_at = time.monotonic()
    run, s.latency = await s.session.rerun(
        "Class", s.session.query, fragment_id=s.form.fragment_id, widgets=s.form.submission(value)
    )
    s.finished_at = run.finished_at
    said = [t for t in run.texts if t.startswith("Your guess") or "answer" in t.lower()]
    s.outcome = said[0] if said else f"(nothing; texts {run.texts[:4]})"
    if run.exceptions:
        s.outcome = f"exception: {run.exceptions[0]}"


# ---------------------------------------------------------------------------------------------------- a run


@dataclass
class ClassLoadResult:
    students: int
    join: str
    window: float
    latencies: list[float] = field(default_factory=list)  # per submission, send -> final script_finished
    loads: list[float] = field(default_factory=list)  # per student, joining until the page is drawn
    join_wall_s: float = 0.0  # every student joined: from the first join's start to the last one's page
    connect_limit: int = 0  # students joining at a time
    last_finish_to_store_s: float = float("nan")  # the store's count reaching N, after the last submission's finish
    last_finish_to_teacher_s: float = float("nan")  # the teacher's badge showing N, after the last submission's finish
    teacher_count: int = -1  # the badge's last count
    teacher_students: int = -1  # the badge's student count
    counted_once: bool = False
    count_problems: list[str] = field(default_factory=list)
    outcomes: Counter = field(default_factory=Counter)  # what each answer box said after the submission
    errors: list[str] = field(default_factory=list)
    follow: list[tuple[int, list[float]]] = field(default_factory=list)  # (slide, time until each session reran)
    follow_cpu_s: list[float] = field(default_factory=list)  # the deployment's CPU per move, until every session reran
    follow_missed: int = 0  # sessions that did not rerun (or not to the new slide) within the limit
    window_wall_s: float = 0.0  # from the window's start to the last submission's finish
    server_cpu_s: float = 0.0  # the deployment's CPU (every worker, nginx) over that stretch
    store_cpu_s: float = 0.0  # redis-server's, when it is the store
    generator_cpu_s: float = 0.0  # this process's (the load generator's and the store poller's)
    other_cpu_s: float = 0.0  # every other process of the machine's (other work on a shared machine)
    server_rss_mb: float = 0.0  # the deployment's resident memory with every student connected
    load_average: tuple[float, float] = (0.0, 0.0)  # 1-minute load average before and after the window
    upstreams: Counter = field(default_factory=Counter)  # which worker served each student (its first request)

    def percentile(self, q: float, values: list[float] | None = None) -> float:
        return percentile(self.latencies if values is None else values, q)

    @property
    def p50(self) -> float:
        return self.percentile(50)

    @property
    def p95(self) -> float:
        return self.percentile(95)

    @property
    def count_lag(self) -> float:
        """The teacher's count reaching N after the last submission's finish (what the goal holds)."""
        return self.last_finish_to_teacher_s

    def misses(self) -> list[str]:
        """The goal's targets this run missed (empty: every target met)."""
        out = []
        if self.errors:
            out.append(f"{len(self.errors)} errors")
        if not self.counted_once:
            out.append("not every guess counted exactly once")
        if len(self.latencies) != self.students:
            out.append(f"{self.students - len(self.latencies)} submissions unfinished")
        if not self.p95 <= TARGET_P95_S:
            out.append(f"p95 {self.p95:.2f} s > {TARGET_P95_S} s")
        if not self.count_lag <= TARGET_COUNT_LAG_S:
            out.append(f"count lag {self.count_lag:.2f} s > {TARGET_COUNT_LAG_S} s")
        return out

    def summary(self) -> str:
        cores = os.cpu_count() or 1
        wall = self.window_wall_s or float("nan")
        lines = [
            f"{self.students} students (joined through {'the page' if self.join == 'page' else 'the store'}), "
            f"guesses within {self.window:g} s",
            f"  submission p50 {1e3 * self.p50:.0f} ms, p95 {1e3 * self.p95:.0f} ms, "
            f"max {1e3 * max(self.latencies, default=float('nan')):.0f} ms ({len(self.latencies)} finished)",
            f"  the count reaching {self.students} after the last submission's finish: store "
            f"{self.last_finish_to_store_s:+.2f} s, teacher's badge {self.last_finish_to_teacher_s:+.2f} s "
            f"(badge {self.teacher_count} of {self.teacher_students})",
            f"  counted exactly once: {'yes' if self.counted_once else 'NO'}"
            + (f" ({'; '.join(self.count_problems[:3])})" if self.count_problems else ""),
            f"  answer boxes said: {dict(self.outcomes.most_common(3))}",
            f"  joining, {self.connect_limit} at a time: per student p50 {1e3 * self.percentile(50, self.loads):.0f} "
            f"ms, p95 {1e3 * self.percentile(95, self.loads):.0f} ms, all in {self.join_wall_s:.1f} s; workers "
            f"{dict(self.upstreams)}",
            f"  CPU over the window ({wall:.1f} s): server {self.server_cpu_s:.1f} s "
            f"({100 * self.server_cpu_s / wall:.0f}% of one core, {cores} cores)"
            + (f", redis {self.store_cpu_s:.1f} s" if self.store_cpu_s else "")
            + f", generator {self.generator_cpu_s:.1f} s, other processes {self.other_cpu_s:.1f} s; load average "
            f"{self.load_average[0]:.1f} -> {self.load_average[1]:.1f}; server memory {self.server_rss_mb:.0f} MB",
        ]
        for (slide, times), cpu in zip(self.follow, self.follow_cpu_s, strict=True):
            lines.append(
                f"  follow to slide {slide}: {len(times)} of {self.students} reran, p50 "
                f"{1e3 * self.percentile(50, times):.0f} ms, p95 {1e3 * self.percentile(95, times):.0f} ms, "
                f"max {1e3 * max(times, default=float('nan')):.0f} ms; server CPU {cpu:.1f} s "
                f"({1e3 * cpu / max(len(times), 1):.0f} ms a student)"
            )
        misses = self.misses()
        lines.append("  goal: " + ("every target met" if not misses else "missed: " + "; ".join(misses)))
        lines.extend(f"  ! {e}" for e in self.errors[:10])
        return "\n".join(lines)


class _StorePoller:
    """This process's own reads of the store's count for the class's question, every ``every`` seconds, in a thread
    (a store of its own: connections are not shared across threads): when it first reached ``n``."""

    def __init__(self, store_url: str, class_id: str, n: int, every: float = 0.02) -> None:
        from classroom.store import open_store

        self.store = open_store(store_url)
        self.class_id, self.n, self.every = class_id, n, every
        self.reached_at: float | None = None
        self.last = -1
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True, name="class-count-poll")

    def _run(self) -> None:
        while not self._stop.is_set():
            self.last = self.store.answer_count(self.class_id, QUESTION)
            if self.last >= self.n and self.reached_at is None:
                self.reached_at = time.monotonic()
                return
            self._stop.wait(self.every)

    def __enter__(self) -> _StorePoller:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join(5)


async def _gather_limited(coros: list[Any], limit: int) -> list[Any]:
    sem = asyncio.Semaphore(limit)

    async def one(c: Any) -> Any:
        async with sem:
            return await c

    return await asyncio.gather(*(one(c) for c in coros), return_exceptions=True)


async def run_class_async(
    url: str,
    store_url: str,
    students: int,
    window: float = WINDOW_S,
    join: str = "page",
    seed: int = 0,
    follow_slides: tuple[int, ...] = FOLLOW_SLIDES,
    wait_warm: bool = True,
    server_pgid: int | None = None,
    store_pid: int | None = None,
    connect_limit: int = 8,
    log: Any = print,
) -> ClassLoadResult:
    """One class of ``students`` on the app at ``url`` whose class store is ``store_url`` (the deployment's)."""
    from bench.bench_load import group_cpu_seconds
    from classroom import classes as cl
    from classroom.store import open_store

    check_loopback(url)
    if join not in ("page", "store"):
        raise ValueError(f"join must be 'page' or 'store', not {join!r}")
    base = url.rstrip("/")
    rng = random.Random(seed)
    res = ClassLoadResult(students, join, window)
    store = open_store(store_url)
    started = cl.start_class(store, DECK, time.time(), slide=SLIDE)
    question = cl.Question(QUESTION, "number", answer=0.5, lo=0.0, hi=1.0)  # the range is what the check needs

    teacher = Teacher(base, started.class_id, started.teacher_key)
    people: list[Student] = []
    try:
        await teacher.open()
        if wait_warm:  # the deck player prepares every slide in the background once: let it finish first
            await teacher.wait(lambda: teacher.warm, "the slides prepared", 600)
        log(f"  teacher ready; {students} students joining ({join})")

        tokens = [""] * students
        if join == "store":
            tokens = [cl.join(store, started.code, f"student {i:03d}", "bench", time.time()).token
                      for i in range(students)]  # fmt: skip
        res.connect_limit = connect_limit
        join0 = time.monotonic()
        joined = await _gather_limited(
            [join_student(i, base, started.code, join, started.class_id, tokens[i]) for i in range(students)],
            connect_limit,
        )
        res.join_wall_s = time.monotonic() - join0
        for i, s in enumerate(joined):
            if isinstance(s, BaseException):
                res.errors.append(f"student {i:03d} could not join: {type(s).__name__}: {s}")
            else:
                people.append(s)
                res.loads.append(s.load_s)
                res.upstreams[s.session.upstream or "direct"] += 1
        if res.errors:
            return res
        # the teacher's count shows every student (a state, not a fixed wait)
        await teacher.wait(lambda: bool(teacher.counts) and teacher.counts[-1][2] >= students,
                           f"{students} students", 120)  # fmt: skip

        # every guess a different number in [0, 1], sent at a random time within the window
        guesses = [round((i + 1) / (students + 1), 6) for i in range(students)]
        rng.shuffle(guesses)
        at = [rng.uniform(0.0, window) for _ in people]
        cpu0, gen0, all0 = (
            group_cpu_seconds(server_pgid) if server_pgid else 0.0,
            time.process_time(),
            machine_busy_seconds(),
        )
        store0 = process_cpu_seconds(store_pid) if store_pid else 0.0
        res.load_average = (os.getloadavg()[0], 0.0)
        log(f"  {students} students joined; guesses within {window:g} s")
        with _StorePoller(store_url, started.class_id, students) as poller:
            start = time.monotonic() + 0.5

            async def one(s: Student, delay: float, value: float) -> None:
                await asyncio.sleep(max(0.0, start + delay - time.monotonic()))
                await submit(s, value)

            done = await asyncio.gather(*(one(s, d, g) for s, d, g in zip(people, at, guesses, strict=True)),
                                        return_exceptions=True)  # fmt: skip
            for s, d in zip(people, done, strict=True):
                if isinstance(d, BaseException):
                    res.errors.append(f"{s.name}: submission failed: {type(d).__name__}: {d}")
                else:
                    res.latencies.append(s.latency)
                    res.outcomes["Your guess" if s.outcome.startswith("Your guess") else s.outcome[:80]] += 1
            last_finish = max((s.finished_at for s in people if s.finished_at), default=time.monotonic())
            res.window_wall_s = last_finish - start
            res.server_cpu_s = (group_cpu_seconds(server_pgid) - cpu0) if server_pgid else 0.0
            res.store_cpu_s = (process_cpu_seconds(store_pid) - store0) if store_pid else 0.0
            res.generator_cpu_s = time.process_time() - gen0
            res.other_cpu_s = machine_busy_seconds() - all0 - res.server_cpu_s - res.store_cpu_s - res.generator_cpu_s
            res.load_average = (res.load_average[0], os.getloadavg()[0])
            res.server_rss_mb = group_rss_mb(server_pgid) if server_pgid else 0.0
            # the counts reaching N: the store's (polled) and the teacher's badge (its fragment reruns every second)
            try:
                await teacher.wait(lambda: teacher.shown() >= students and poller.reached_at is not None,
                                   f"the count {students}", 60)  # fmt: skip
            except TimeoutError as exc:
                res.errors.append(str(exc))
        if poller.reached_at is not None:
            res.last_finish_to_store_s = poller.reached_at - last_finish
        if (t := teacher.first_time_at(students)) is not None:
            res.last_finish_to_teacher_s = t - last_finish
        res.teacher_count = teacher.shown()
        res.teacher_students = teacher.counts[-1][2] if teacher.counts else -1
        res.errors.extend(teacher.errors)

        # every guess counted exactly once: one row per student, the number they sent, no other row
        rows = store.all_answers(started.class_id)
        sent = {s.token: s.guess for s in people}
        per_token = Counter(a.token for a in rows if a.question == QUESTION)
        problems = []
        if dups := [t for t, n in per_token.items() if n > 1]:
            problems.append(f"{len(dups)} students counted more than once")
        if missing := set(sent) - set(per_token):
            problems.append(f"{len(missing)} guesses missing")
        if extra := set(per_token) - set(sent):
            problems.append(f"{len(extra)} answers from no student of the run")
        if wrong := [a for a in rows if a.token in sent and float(a.value) != sent[a.token]]:
            problems.append(f"{len(wrong)} answers differ from the guess sent")
        if (n := store.answer_count(started.class_id, QUESTION)) != students:
            problems.append(f"answer_count {n}")
        if len(cl.tally(store, started.class_id, question).numbers) != students:
            problems.append("the tally differs")
        res.count_problems = problems
        res.counted_once = not problems and len(rows) == students

        if follow_slides:
            await teacher.close()  # the deck player would move the class back to its own slide on its next full run
            for slide in follow_slides:
                before = [len(s.session.runs) for s in people]
                cpu0 = group_cpu_seconds(server_pgid) if server_pgid else 0.0
                t0 = time.monotonic()
                await asyncio.to_thread(cl.set_slide, store, started.class_id, started.teacher_key, slide, time.time())
                reran = await asyncio.gather(*(s.session.wait_runs(b + 1, 120) for s, b in zip(people, before,
                                                                                                strict=True)),
                                             return_exceptions=True)  # fmt: skip
                times = []
                for s, r in zip(people, reran, strict=True):
                    if isinstance(r, BaseException):
                        res.follow_missed += 1
                        res.errors.append(f"{s.name}: no rerun to slide {slide}: {type(r).__name__}: {r}")
                    elif not r.full or not any(t.startswith(f"### {slide}.") for t in r.texts):
                        res.follow_missed += 1
                        res.errors.append(f"{s.name}: the pushed run did not draw slide {slide}: {r.texts[:3]}")
                    else:
                        times.append(r.finished_at - t0)
                res.follow.append((slide, times))
                res.follow_cpu_s.append((group_cpu_seconds(server_pgid) - cpu0) if server_pgid else 0.0)
        return res
    finally:  # the class is left open: closing it would push a rerun to every session still held by a worker
        await asyncio.gather(teacher.close(), *(s.session.close() for s in people), return_exceptions=True)


def run_class(url: str, store_url: str, students: int, **kw: Any) -> ClassLoadResult:
    """:func:`run_class_async` in an event loop of its own (in a thread: the caller may run one already)."""
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as pool:
        return pool.submit(asyncio.run, run_class_async(url, store_url, students, **kw)).result()


async def idle_submissions(url: str, store_url: str, n: int = 5) -> list[float]:
    """The floor: ``n`` submissions, one at a time, each by a student alone in a class of their own, on the warm
    app with nothing else running (the same fragment rerun the load measures), a second after the page was drawn,
    as a student reads the question first (sent at once, while the page's run was still being wound up, the
    submission took 45-50 ms instead of 9-17)."""
    from classroom import classes as cl
    from classroom.store import open_store

    store = open_store(store_url)
    out = []
    for i in range(n):
        started = cl.start_class(store, DECK, time.time(), slide=SLIDE)
        token = cl.join(store, started.code, "floor", "bench", time.time()).token
        s = await join_student(i, url.rstrip("/"), started.code, "store", started.class_id, token, "floor")
        try:
            await asyncio.sleep(1.0)
            await submit(s, 0.5)
            if not s.outcome.startswith("Your guess"):
                raise RuntimeError(f"an idle submission was not taken: {s.outcome}")
            out.append(s.latency)
        finally:
            await s.session.close()
    return out


async def warm_workers(worker_urls: list[str], store_url: str) -> None:
    """Each worker once through what a student asks of it (the class page of slide 30, a guess), untimed: first
    imports and the slide's copy for phones built, as in a lecture that has been running a while."""
    for w in worker_urls:
        await idle_submissions(w, store_url, 1)
