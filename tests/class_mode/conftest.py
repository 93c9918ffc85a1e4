"""Fixtures of the class tests: the two class stores, a fresh SQLite file and a redis-server of the tests' own
(tests/redis_server.py); every test that takes ``store`` runs on both."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest

from classroom.store import ClassStore, RedisStore, SqliteStore
from tests.redis_server import redis_server

STORES = ("sqlite", "redis")


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    with redis_server() as url:
        yield url


@pytest.fixture(params=STORES)
def store(request, tmp_path) -> ClassStore:
    """Each class test runs on both stores."""
    if request.param == "sqlite":
        return SqliteStore(tmp_path / "classes.sqlite3")
    url = request.getfixturevalue("redis_url")
    return RedisStore(url, prefix=f"test-{uuid.uuid4().hex[:12]}:")
