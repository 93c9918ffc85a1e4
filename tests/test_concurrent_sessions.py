"""Twenty concurrent websocket sessions for a minute, each rerunning random pages with random valid link values
(drawn from the pages' own state specs): no exception reaches any session, every rerun finishes."""

from __future__ import annotations

import importlib
import pkgutil
import random
import urllib.parse
from collections.abc import Iterator

import pytest

import pages.views
from bench.load import run_load
from pages.views.state import Field, Spec
from tests.browser.conftest import running_server

pytestmark = pytest.mark.server

SPECS: list[Spec] = [
    m.SPEC
    for m in (importlib.import_module(f"pages.views.{i.name}") for i in pkgutil.iter_modules(pages.views.__path__))
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


def random_links(spec: Spec, n: int, rng: random.Random) -> tuple[str, ...]:
    """n valid links of a page: a preset or the defaults, with one to three fields set at random."""
    links = []
    for _ in range(n):
        base = dict(rng.choice([{}, *spec.presets.values()]))
        for f in rng.sample(spec.fields, k=min(len(spec.fields), rng.randint(1, 3))):
            base[f.name] = _value(f, rng)
        state = spec.state(base)
        links.append(urllib.parse.urlencode(spec.query(state)))
    return tuple(links)


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    with running_server() as url:
        yield url


def test_random_links_are_valid_states() -> None:
    rng = random.Random(1)
    for spec in SPECS:
        for link in random_links(spec, 20, rng):
            assert spec.parse(dict(urllib.parse.parse_qsl(link)))[1] == [], (spec.page, link)


def test_twenty_sessions_for_a_minute_raise_nothing(server: str) -> None:
    rng = random.Random(0)
    links = {spec.page: random_links(spec, 12, rng) for spec in SPECS}
    res = run_load(server, sessions=20, seconds=60.0, interval=2.0, pages=links, seed=0, switch_pages=True, grace=90)
    assert res.errors == []
    assert res.exceptions == [], res.exceptions[:3]
    assert res.reruns > 100
    assert res.sent == res.reruns
