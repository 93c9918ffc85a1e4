"""Fixtures of the class tests: the two class stores, a fresh SQLite file and a redis-server of the test's own.

The Redis server is Debian's ``redis-server`` binary (``make test`` installs the package), started on a free loopback
port with persistence off, never the packaged service; one per test process, each test under a prefix of its own.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from classroom.store import ClassStore, RedisStore, SqliteStore

STORES = ("sqlite", "redis")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    binary = shutil.which("redis-server") or "/usr/bin/redis-server"
    if not Path(binary).exists():
        pytest.fail("Debian's redis-server is not installed; `make test` installs it with apt-get")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
         "--daemonize", "no", "--loglevel", "warning"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
    )  # fmt: skip
    url = f"redis://127.0.0.1:{port}/0"
    import redis

    client = redis.Redis.from_url(url)
    deadline = time.monotonic() + 20
    while True:  # ready when it answers a ping: a state, not a fixed wait
        try:
            client.ping()
            break
        except redis.ConnectionError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                pytest.fail(f"redis-server did not start: {proc.stderr.read().decode() if proc.stderr else ''}")
            time.sleep(0.05)
    try:
        yield url
    finally:
        client.close()
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()


@pytest.fixture(params=STORES)
def store(request, tmp_path) -> ClassStore:
    """Each class test runs on both stores."""
    if request.param == "sqlite":
        return SqliteStore(tmp_path / "classes.sqlite3")
    url = request.getfixturevalue("redis_url")
    return RedisStore(url, prefix=f"test-{uuid.uuid4().hex[:12]}:")
