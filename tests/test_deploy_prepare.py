"""deploy/prepare.py's choice of where the pre-compressed static files go, for nginx's workers to read them.

A checkout inside a private folder (mode 700, as ``mktemp -d`` makes) is closed to the user nginx's workers switch
to when nginx starts as root (nobody): the copy must then go where that user can read it (issue 29).
"""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from deploy.prepare import cache_for, private_folder


@pytest.fixture
def folder() -> Iterator[Path]:
    """A fresh folder in the system's temp folder, private as mkdtemp makes it (mode 700)."""
    path = Path(tempfile.mkdtemp(prefix="lesson-prepare-test-"))
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


def test_a_private_checkout_sends_the_static_copy_to_an_open_folder_and_says_why(folder: Path) -> None:
    assert oct(folder.stat().st_mode & 0o777) == "0o700"
    requested = folder / "checkout" / ".cache" / "nginx-static"
    got, note = cache_for(requested, "nobody nogroup")
    assert got == Path(tempfile.gettempdir()) / f"lesson-nginx-static-{os.geteuid()}"
    assert not got.is_relative_to(folder)
    assert note is not None and f"{folder} is private (mode 700)" in note and "STATIC_CACHE" in note
    assert private_folder(requested) == folder


def test_an_open_checkout_or_a_non_root_nginx_keeps_the_requested_folder(folder: Path) -> None:
    requested = folder / "checkout" / ".cache" / "nginx-static"
    assert cache_for(requested, None) == (requested, None)  # not root: the workers run as this user
    folder.chmod(0o755)
    assert private_folder(requested) is None
    assert cache_for(requested, "nobody nogroup") == (requested, None)


@pytest.mark.skipif(os.geteuid() != 0, reason="only root can switch to nobody to try the folders as nginx would")
def test_nobody_can_read_a_file_in_the_fallback_and_not_in_the_private_checkout(folder: Path) -> None:
    # the independent check: a process running as nobody, as nginx's workers do, opens both files
    requested = folder / "checkout" / ".cache" / "nginx-static"
    requested.mkdir(parents=True)
    got, _ = cache_for(requested, "nobody nogroup")
    got.mkdir(parents=True, exist_ok=True)
    got.chmod(0o755)
    inside, outside = requested / "probe.txt", got / f"probe-{os.getpid()}.txt"
    for path in (inside, outside):
        path.write_text("x")
        path.chmod(0o644)
    nobody = pwd.getpwnam("nobody")

    def readable(path: Path) -> bool:
        cat = shutil.which("cat") or "/bin/cat"  # not this Python: it may lie in root's private home
        run = subprocess.run(
            [cat, str(path)], user=nobody.pw_uid, group=nobody.pw_gid, extra_groups=[], capture_output=True
        )
        return run.returncode == 0

    try:
        assert not readable(inside) and readable(outside)
    finally:
        outside.unlink()


def test_another_plotly_bundle_in_the_app_folder_gets_a_fresh_copy_with_its_own_twin(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The copy is reused while the files are the same, and made again when the app's plotly.js changes (the frame
    moved from the plotly package's full bundle to the cartesian one in the same folder: the old copy's twin, served
    by nginx before the file, would have been the old bundle)."""
    import gzip

    import deploy.prepare as prepare

    streamlit, app = folder / "streamlit-static", folder / "app-static"
    streamlit.mkdir()
    (streamlit / "index.html").write_text("<html>" + "x" * 2000 + "</html>")
    app.mkdir()
    bundle = app / "plotly.min.js"
    bundle.write_text("var full = 1;" * 400)
    monkeypatch.setattr(prepare, "streamlit_static", lambda: (streamlit, "1.67.0"))
    monkeypatch.setattr(prepare, "app_static", lambda: (app, "7.1.0"))
    first = prepare.static_root(folder / "cache")
    assert prepare.static_root(folder / "cache") == first
    bundle.write_text("var cartesian = 1;" * 300)
    second = prepare.static_root(folder / "cache")
    assert second != first
    twin = second / "app" / "static" / "plotly.min.js.gz"
    assert gzip.decompress(twin.read_bytes()) == bundle.read_bytes()
