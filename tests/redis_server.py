"""A redis-server of the tests' own: Debian's binary (``make test`` installs the package) on a free loopback port,
persistence off, never the packaged service (bench/class_load.py starts it). Used by the class tests
(tests/class_mode) and the class's browser test.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from bench.class_load import redis_server as _redis_server
from bench.load import free_port

__all__ = ["free_port", "redis_server"]


@contextmanager
def redis_server() -> Iterator[str]:
    """A running redis-server's URL; stopped on exit. Fails the test, saying what to install, when there is none."""
    if not Path(shutil.which("redis-server") or "/usr/bin/redis-server").exists():
        pytest.fail("Debian's redis-server is not installed; `make test` installs it with apt-get")
    try:
        server = _redis_server()
        url, _pid = server.__enter__()
    except RuntimeError as exc:
        pytest.fail(str(exc))
    try:
        yield url
    finally:
        server.__exit__(None, None, None)
