"""A page that follows a "class" whose version is a number in a file ($LESSON_FOLLOW_FILE), through class mode's
real follow signal (pages/frame/follow.py): the browser test changes the file and waits for every open page."""

from __future__ import annotations

import os
from pathlib import Path

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from pages.frame.follow import Follower, available, streamlit_rerun

FILE = Path(os.environ["LESSON_FOLLOW_FILE"])


def version(_: str) -> int:
    return int(FILE.read_text().strip())


@st.cache_resource
def follower() -> Follower:
    f = Follower(version, streamlit_rerun)
    f.start()
    return f


f = follower()
seen = version("c")
f.follow(get_script_run_ctx().session_id, "c", seen)
local = st.slider("a control of the student's own", 0, 10, 3, key="own")
st.markdown(f"available {available()} · version {seen} · own {local} · reruns asked {f.reruns}")
