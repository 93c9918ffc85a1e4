"""``streamlit run`` with a timestamp (epoch ms) at each stop of a rerun request's way through the server.

Used by bench/bench_step_parts.py: run as ``python bench/traced_server.py SCRIPT --server.port N ...``; one line per
event goes to the file named by ``LESSON_TRACE`` (``<ms> <thread> recv <BackMsg type>``, ``event <ScriptRunner
event>``, ``send <ForwardMsg type>``). Patches three methods of Streamlit 1.67's runtime; nothing else changes.
"""

from __future__ import annotations

import os
import sys
import threading
import time

from streamlit.runtime import app_session
from streamlit.web.server.starlette import starlette_websocket

_LOG = open(os.environ["LESSON_TRACE"], "a", buffering=1)  # open for the server's whole life


def _write(*words: object) -> None:
    thread = threading.current_thread().name.replace(" ", "_")
    _LOG.write(f"{time.time() * 1000:.1f} {thread} {' '.join(map(str, words))}\n")


def _traced(cls: type, name: str, describe) -> None:
    original = getattr(cls, name)

    def method(self, *args, **kwargs):
        _write(*describe(*args, **kwargs))
        return original(self, *args, **kwargs)

    setattr(cls, name, method)


_traced(app_session.AppSession, "handle_backmsg", lambda msg: ("recv", msg.WhichOneof("type")))
_traced(app_session.AppSession, "_on_scriptrunner_event", lambda sender, event, **_: ("event", event.name))
_traced(starlette_websocket.StarletteSessionClient, "write_forward_msg", lambda msg: ("send", msg.WhichOneof("type")))

if __name__ == "__main__":
    from streamlit.web import cli

    sys.argv = ["streamlit", "run", *sys.argv[1:]]
    cli.main()
