"""Twenty concurrent websocket sessions for half a minute, each rerunning random pages with random valid link values
(drawn from the pages' own state specs, list-like text fields included): no exception reaches any session or the
server's log, every rerun finishes."""

from __future__ import annotations

import importlib
import os
import pkgutil
import random
import subprocess
import urllib.parse
from collections.abc import Callable, Iterator
from typing import Any

import pytest

import views
from bench.harness import start_server, stop_server
from bench.load import free_port, run_load
from views import inputs, loss_units, sampling
from views.state import Field, Spec, State

pytestmark = pytest.mark.server

SPECS: list[Spec] = [
    m.SPEC
    for m in (importlib.import_module(f"views.{i.name}") for i in pkgutil.iter_modules(views.__path__))
    if hasattr(m, "SPEC")
]


def _value(f: Field, rng: random.Random):
    if f.kind in ("choice",):
        return rng.choice(f.choices)
    if f.kind == "multi":
        return tuple(c for c in f.choices if rng.random() < 0.5)
    if f.kind == "bool":
        return rng.random() < 0.5
    if f.kind == "text":
        return f.default
    lo, hi = f.lo, f.hi
    x = lo + (hi - lo) * rng.random() ** 4  # mostly small values: the heaviest corners stay rare
    return round(x) if f.kind == "int" else x


def _numbers(rng: random.Random, n: int, lo: float, hi: float) -> str:
    return ",".join(f"{rng.uniform(lo, hi):.3g}" for _ in range(n))


def _kl_lists(state: State, rng: random.Random) -> dict[str, str]:
    K = state["K"]  # every list has one entry per answer
    return {
        "pi_ref": _numbers(rng, K, 0.01, 1.0),
        "r": _numbers(rng, K, -2.0, 2.0),
        "r_true": rng.choice(["", _numbers(rng, K, -2.0, 2.0)]),  # blank: the proxy is the truth
        "names": ",".join(f"a{i}" for i in range(1, K + 1)),
    }


def _gae_lists(state: State, rng: random.Random) -> dict[str, str]:
    T = rng.randint(1, 8)
    return {"gae_r": _numbers(rng, T, -1.0, 1.0), "gae_v": _numbers(rng, T, -1.0, 1.0) + ",0"}  # T + 1 values


def _logits(state: State, rng: random.Random) -> dict[str, str]:
    tokens = rng.sample("ABCDEFGHIJ", rng.randint(2, 8))
    return {"logits": ",".join(f"{t}={rng.uniform(-4.0, 4.0):.3g}" for t in tokens)}


# Text fields that hold lists, per page: (the fields, and the fields they depend on) -> random values the page's own
# parser reads without a message (checked below), drawn when one of them is picked.
LIST_TEXTS: dict[str, tuple[frozenset[str], Callable[[State, random.Random], dict[str, str]]]] = {
    "GRPO": (
        frozenset({"rewards"}),
        lambda state, rng: {"rewards": ",".join(rng.choice("01") for _ in range(rng.randint(2, 16)))},
    ),
    "KL_leash": (frozenset({"K", "pi_ref", "r", "r_true", "names"}), _kl_lists),
    "PPO": (frozenset({"gae_r", "gae_v"}), _gae_lists),
    "Sampling": (frozenset({"logits"}), _logits),
    "Loss_and_units": (
        frozenset({"doc_lens"}),
        lambda state, rng: {"doc_lens": ",".join(str(rng.randint(1, 12)) for _ in range(rng.randint(1, 8)))},
    ),
}


def random_links(spec: Spec, n: int, rng: random.Random) -> tuple[str, ...]:
    """n valid links of a page: a preset or the defaults, with one to three fields set at random (a list-like text
    field, or a field such a list depends on, redraws the page's lists so that they agree)."""
    links = []
    for _ in range(n):
        base = dict(rng.choice([{}, *spec.presets.values()]))
        picked = rng.sample(spec.fields, k=min(len(spec.fields), rng.randint(1, 3)))
        for f in picked:
            base[f.name] = _value(f, rng)
        lists, draw = LIST_TEXTS.get(spec.page, (frozenset(), None))
        if draw is not None and lists & {f.name for f in picked}:
            base.update(draw(spec.state(base), rng))
        state = spec.state(base)
        links.append(urllib.parse.urlencode(spec.query(state)))
    return tuple(links)


def page_problems(page: str, state: State) -> list[str]:
    """What the page's own parsers say about the list-like text fields of ``state`` (empty: they read cleanly)."""
    problems: list[Any] = []

    def attempt(read: Callable[[], object]) -> None:
        try:
            read()
        except ValueError as exc:
            problems.append(str(exc))

    if page == "GRPO":
        attempt(lambda: inputs.parse_rewards(state["rewards"]))
    elif page == "KL_leash":
        problems += inputs.read_answers(state["K"], state["pi_ref"], state["r"], state["r_true"], state["names"])[1]
    elif page == "PPO":
        (rewards, p1), (values, p2) = inputs.read_numbers(state["gae_r"], "r"), inputs.read_numbers(state["gae_v"], "V")
        problems += [p for p in (p1, p2) if p]
        if not problems and (not rewards or len(values) != len(rewards) + 1):
            problems.append(f"{len(rewards)} rewards, {len(values)} values")
    elif page == "Sampling" and state["logits"]:
        attempt(lambda: sampling.parse_logits(state["logits"]))
    elif page == "Loss_and_units":
        attempt(lambda: loss_units.parse_doc_lens(state["doc_lens"]))
    return problems


@pytest.fixture(scope="module")
def server() -> Iterator[tuple[str, subprocess.Popen]]:
    """A server as ``make run`` starts it, and its process (whose output goes to the file ``proc.log``)."""
    port = free_port()
    proc = start_server(port)
    try:
        yield f"http://127.0.0.1:{port}", proc
    finally:
        stop_server(proc)


def server_log(proc: subprocess.Popen) -> str:
    """What the server has written so far (read with pread: the server shares the file's offset, which must not
    move under it)."""
    fd = proc.log.fileno()  # type: ignore[attr-defined]
    return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", errors="replace")


def test_random_links_are_valid_states() -> None:
    rng = random.Random(1)
    lists_seen: dict[str, set[str]] = {}
    for spec in SPECS:
        for link in random_links(spec, 40, rng):
            query = dict(urllib.parse.parse_qsl(link, keep_blank_values=True))
            state, problems = spec.parse(query)
            assert problems == [], (spec.page, link)
            assert page_problems(spec.page, state) == [], (spec.page, link)
            lists_seen.setdefault(spec.page, set()).update(
                set(query) & LIST_TEXTS.get(spec.page, (frozenset(), None))[0]
            )
    # the list fields do get values other than their defaults
    assert {"rewards"} <= lists_seen["GRPO"] and {"pi_ref", "r"} <= lists_seen["KL_leash"]
    assert {"gae_r", "gae_v"} <= lists_seen["PPO"] and "logits" in lists_seen["Sampling"]
    assert "doc_lens" in lists_seen["Loss_and_units"]


def test_the_page_parsers_refuse_lists_that_do_not_agree() -> None:
    kl = next(s for s in SPECS if s.page == "KL_leash")
    assert page_problems("KL_leash", kl.state({"K": 3, "r": "1,0"})) != []  # 2 rewards for 3 answers
    ppo_spec = next(s for s in SPECS if s.page == "PPO")
    assert page_problems("PPO", ppo_spec.state({"gae_r": "1,1", "gae_v": "0,0"})) != []  # needs 3 values


def test_twenty_sessions_for_half_a_minute_raise_nothing(server: tuple[str, subprocess.Popen]) -> None:
    """Twenty sessions (one per page once there are more pages than twenty), each a random link of a random page every
    2 s (and switching pages), for 30 s: about 300 reruns asked; each session opens a different page first, so every
    page runs (bench/bench_load.py measures the same load for longer)."""
    url, proc = server
    rng = random.Random(0)
    links = {spec.page: random_links(spec, 12, rng) for spec in SPECS}
    sessions = max(20, len(links))
    res = run_load(url, sessions=sessions, seconds=30.0, interval=2.0, pages=links, seed=0, switch_pages=True, grace=90)
    assert res.errors == []
    assert res.exceptions == [], res.exceptions[:3]
    assert res.reruns > 50
    assert len(links) <= sessions and set(res.by_page) == set(links), sorted(set(links) - set(res.by_page))
    assert res.sent == res.reruns
    log = server_log(proc)  # an exception caught by Streamlit reaches the page; one outside a script only the log
    assert "Traceback" not in log and "Exception" not in log, log[-3000:]
