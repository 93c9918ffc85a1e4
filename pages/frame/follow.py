"""Class mode's follow signal: the follower reruns a student's page only when the teacher changes the class.

One watcher thread per server process reads, every ``POLL_S``, the version of each class that has a student session
in this process (one store read per class, however many students it has) and asks Streamlit to rerun exactly the
sessions that have drawn an older version. A rerun is the one Streamlit itself starts when a watched source file
changes with ``runOnSave`` (``AppSession.request_rerun`` with the session's last client state, on the server's event
loop): it reruns the page the student has open with their widgets as they are. So a class costs nothing per student
while the teacher waits, and one rerun per student per change, which the student needs anyway to draw the new
slide. A session that is gone is dropped when the next change tries to rerun it; a store that cannot be read is
tried again at the next poll.

The rerun goes through Streamlit's runtime (``Runtime.instance()``, its sessions and event loop), which is not a
documented API: :func:`available` says whether it is there, and a page without it falls back to a fragment that
polls (``FALLBACK_POLL_S``), which costs a fragment rerun per student per poll.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

POLL_S = 0.25
FALLBACK_POLL_S = 2.0
_LOG = logging.getLogger(__name__)


@dataclass
class _Watch:
    class_id: str
    seen: int  # the version the session drew
    asked: int | None = None  # the version a rerun was asked for (asked once per version)


@dataclass
class Follower:
    """Sessions that follow classes. ``version_of(class_id)`` reads the store (None: the class is gone);
    ``rerun(session_id)`` asks for the session's rerun and says False when the session no longer exists."""

    version_of: Callable[[str], int | None]
    rerun: Callable[[str], bool]
    watches: dict[str, _Watch] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)
    reruns: int = 0  # reruns asked for, over the follower's life (for the benchmark)
    polls: int = 0

    def follow(self, session_id: str, class_id: str, seen: int) -> None:
        """The session has drawn ``class_id`` at version ``seen``: rerun it when the class moves past it."""
        with self.lock:
            self.watches[session_id] = _Watch(class_id, seen)

    def leave(self, session_id: str) -> None:
        with self.lock:
            self.watches.pop(session_id, None)

    def poll(self) -> int:
        """One round: read each followed class once, ask for the reruns it needs; the number asked for."""
        with self.lock:
            watches = list(self.watches.items())
        versions: dict[str, int | None] = {}
        for class_id in {w.class_id for _, w in watches}:
            try:
                versions[class_id] = self.version_of(class_id)
            except Exception as exc:  # the store is down: try again at the next poll
                _LOG.warning("class %s: the store could not be read: %s", class_id[:6], exc)
        asked = 0
        for session_id, w in watches:
            version = versions.get(w.class_id, w.seen)
            current = -1 if version is None else version  # a deleted class: one last rerun to say so
            if current == w.seen or current == w.asked:
                continue
            if self.rerun(session_id):
                w.asked = current
                asked += 1
            else:
                self.leave(session_id)
        self.reruns += asked
        self.polls += 1
        return asked

    def start(self, interval: float = POLL_S) -> threading.Thread:
        def loop() -> None:
            stop = threading.Event()
            while not stop.wait(interval):
                try:
                    self.poll()
                except Exception:  # never let the thread die: a class would stop following
                    _LOG.exception("class follow poll failed")

        thread = threading.Thread(target=loop, name="class-follow", daemon=True)
        thread.start()
        return thread


def available() -> bool:
    """Whether Streamlit's runtime offers what :func:`streamlit_rerun` needs (checked, not assumed)."""
    try:
        from streamlit.runtime import Runtime

        runtime: Any = Runtime.instance()
        return callable(getattr(runtime, "get_app_session", None)) and hasattr(runtime, "_get_async_objs")
    except Exception:
        return False


def streamlit_rerun(session_id: str) -> bool:
    """Ask Streamlit to rerun ``session_id``'s open page with its widgets as they are, on the server's event loop.
    False when the session is gone."""
    from streamlit.runtime import Runtime

    runtime: Any = Runtime.instance()
    session = runtime.get_app_session(session_id)
    if session is None:
        return False
    loop = runtime._get_async_objs().eventloop
    loop.call_soon_threadsafe(lambda: session.request_rerun(session._client_state))
    return True
