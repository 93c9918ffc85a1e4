"""Prepare nginx for deploy/serve.sh: pre-compress Streamlit's static files once, and render nginx.conf.

Streamlit sends its front-end files uncompressed (4.7 MB for the plotly chunk). This copies the installed
streamlit package's ``static/`` folder into a cache folder (outside the virtual environment, one per Streamlit
version and install), writes a ``.gz`` twin (gzip -9) of every compressible file, and renders
``nginx.conf.template`` so that nginx serves those twins with ``gzip_static on``. plotly.js for the frame's live
charts (``pages/frame/charts.py``, served at ``/app/static/``) goes into the same copy with its twin, and into the
app's own ``static/`` folder, so that a worker that cannot write there (a container's read-only app folder) finds it.

Run: python deploy/prepare.py --prefix DIR --port 8500 --workers 8601 8602 [--address 127.0.0.1]
[--static-cache DIR]; prints the static root it rendered into the config.
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import os
import re
import shutil
import stat
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
TEMPLATE = HERE / "nginx.conf.template"
DEFAULT_CACHE = HERE.parent / ".cache" / "nginx-static"
COMPRESSIBLE = {".js", ".mjs", ".css", ".html", ".json", ".map", ".svg", ".txt", ".ttf"}
MIN_BYTES = 1024  # smaller files gain nothing worth a second file


def streamlit_static() -> tuple[Path, str]:
    """The installed streamlit package's static folder and its version."""
    import streamlit

    return Path(streamlit.__file__).resolve().parent / "static", streamlit.__version__


def precompress(source: Path, dest: Path) -> int:
    """Copy ``source`` to ``dest`` (a new folder) with a .gz twin of each compressible file; the twins' count.

    A twin is kept only if it is smaller; it gets the original's modification time, so that nginx reports the
    same Last-Modified for both.
    """
    count = 0
    for src in _files(source):
        out = dest / src.relative_to(source)
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, out)
        if src.suffix in COMPRESSIBLE and src.stat().st_size >= MIN_BYTES:
            data = src.read_bytes()
            packed = gzip.compress(data, compresslevel=9, mtime=0)
            if len(packed) < len(data):
                gz = out.with_name(out.name + ".gz")
                gz.write_bytes(packed)
                st = src.stat()
                os.utime(gz, ns=(st.st_atime_ns, st.st_mtime_ns))
                count += 1
    return count


def app_static() -> tuple[Path, str]:
    """The app's ``static/`` folder with plotly.js in it (copied from the plotly package), and plotly's version."""
    import plotly

    sys.path.insert(0, str(HERE.parent))
    from pages.frame.charts import STATIC, live_chart_ready

    if not live_chart_ready():
        raise OSError(f"could not copy plotly.js into {STATIC}")
    return STATIC, plotly.__version__


def _files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file())


def static_root(cache: Path) -> Path:
    """The pre-compressed copy of this install's static folder, made on first use (atomically) and reused after."""
    source, version = streamlit_static()
    app, plotly_version = app_static()
    # the app's own files by name, size and time too: another plotly.js bundle in the same folder is another copy
    stamp = " ".join(f"{p.relative_to(app)}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in _files(app))
    tag = hashlib.sha256(f"{source} {app} {stamp}".encode()).hexdigest()[:8]
    root = cache / f"streamlit-{version}-plotly-{plotly_version}-{tag}"
    if (root / ".complete").exists():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=".partial-", dir=cache))
    try:
        n = precompress(source, work) + precompress(app, work / "app" / "static")
        (work / ".complete").write_text(f"{n} gzip twins of {source}\n")
        for path in [work, *work.rglob("*")]:  # nginx's workers may run as another user (nobody)
            path.chmod(0o755 if path.is_dir() else 0o644)
        try:
            work.rename(root)
        except OSError:  # another process finished first
            if not (root / ".complete").exists():
                raise
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return root


def private_folder(path: Path) -> Path | None:
    """The nearest existing folder at or above ``path`` that other users cannot enter (no o+x), or None."""
    for folder in [path, *path.parents]:
        if folder.is_dir() and not folder.stat().st_mode & stat.S_IXOTH:
            return folder
    return None


def cache_for(requested: Path, user: str | None) -> tuple[Path, str | None]:
    """Where the static copy goes, and a note when it cannot go where asked.

    nginx started as root serves files as ``user`` (nobody), who must be able to enter every folder above the copy.
    A checkout in a private folder (mode 700, as ``mktemp -d`` makes) is closed to nobody, and nginx would then
    answer every static file from the upstream instead: the copy goes to a per-user folder in the system's temp
    folder instead, and the note says so.
    """
    if user is None:
        return requested, None
    blocked = private_folder(requested)
    if blocked is None:
        return requested, None
    fallback = Path(tempfile.gettempdir()) / f"lesson-nginx-static-{os.geteuid()}"
    note = (
        f"serve.sh: {blocked} is private (mode {stat.S_IMODE(blocked.stat().st_mode):o}), so nginx's workers "
        f"({user.split()[0]}) cannot read {requested}; the pre-compressed static files go to {fallback} instead "
        "(set STATIC_CACHE to choose another folder that others can enter)"
    )
    return fallback, note


def render(prefix: Path, port: int, address: str, workers: list[int], root: Path, user: str | None) -> str:
    """nginx.conf text for ``workers`` (ports on 127.0.0.1) behind ``address:port``, rooted at ``prefix``."""
    values = {
        "PREFIX": str(prefix),
        "PORT": str(port),
        "ADDRESS": address,
        "STATIC_ROOT": str(root),
        "UPSTREAM_SERVERS": "\n".join(f"        server 127.0.0.1:{p} max_fails=3 fail_timeout=10s;" for p in workers),
        "USER_DIRECTIVE": f"user {user};" if user else "# (not root: nginx's workers run as this user)",
    }
    text = re.sub(r"@([A-Z_]+)@", lambda m: values[m.group(1)], TEMPLATE.read_text())
    if left := re.findall(r"@[A-Z_]+@", text):
        raise ValueError(f"unrendered placeholders in the nginx config: {left}")
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--prefix", type=Path, required=True, help="nginx prefix folder (config, pid, temp files)")
    parser.add_argument("--port", type=int, default=8500)
    parser.add_argument("--address", default="127.0.0.1")
    parser.add_argument("--workers", type=int, nargs="+", required=True, help="the Streamlit workers' ports")
    parser.add_argument("--static-cache", type=Path, default=Path(os.environ.get("STATIC_CACHE", DEFAULT_CACHE)))
    args = parser.parse_args(argv)
    # As root, nginx's workers switch to an unprivileged user: the static copy is world-readable for them, and
    # lies where they can reach it.
    user = "nobody nogroup" if os.geteuid() == 0 else None
    cache, note = cache_for(args.static_cache.resolve(), user)
    if note:
        print(note, file=sys.stderr)
        cache.mkdir(parents=True, exist_ok=True)
        cache.chmod(0o755)
    root = static_root(cache)
    if user is not None and (blocked := private_folder(root)) is not None:
        raise SystemExit(f"serve.sh: nginx's workers cannot enter {blocked}: set STATIC_CACHE to an open folder")
    for sub in ("body", "proxy", "fastcgi", "uwsgi", "scgi"):
        (args.prefix / "tmp" / sub).mkdir(parents=True, exist_ok=True)
    conf = render(args.prefix.resolve(), args.port, args.address, args.workers, root, user)
    (args.prefix / "nginx.conf").write_text(conf)
    print(root)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
