"""Screenshots of every page for the docs: light, dark, and presenter mode, each at 1280 x 720 (the first screen,
not the whole page), written to docs/screenshots/<page>-<light|dark|presenter>.png.

Run with ``make screenshots``: it starts the app on a free loopback port, drives Debian's chromium through
playwright (as the browser tests do) and stops the app again. Nothing is fetched off the machine.
"""

from __future__ import annotations

import io
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pages.frame import PAGES  # noqa: E402
from pages.frame.shims import STYLED_GATE_KEY  # noqa: E402

OUT = ROOT / "docs" / "screenshots"
SIZE = {"width": 1280, "height": 720}
MODES = (("light", "light", ""), ("dark", "dark", ""), ("presenter", "light", "?present=true"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _serve(port: int) -> subprocess.Popen:
    cmd = [sys.executable, "-m", "streamlit", "run", "app.py", "--server.port", str(port)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=1):
                return proc
        except OSError:
            time.sleep(0.2)
    proc.kill()
    raise RuntimeError("streamlit did not start")


def url_name(path: str) -> str:
    """The page's URL path ("" for home) and file stem for its screenshots."""
    return "" if path == "app.py" else path.split("_", 1)[1].removesuffix(".py")


def _small_png(raw: bytes) -> bytes:
    """The screenshot as a palette PNG (256 colours): a fraction of the size, no visible loss on these flat UIs."""
    from PIL import Image

    image = Image.open(io.BytesIO(raw)).convert("RGB")
    buffer = io.BytesIO()
    image.quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(
        buffer, format="PNG", optimize=True
    )
    return buffer.getvalue()


def main() -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        sys.exit("Debian's chromium is needed (make chromium)")
    OUT.mkdir(parents=True, exist_ok=True)
    port = _free_port()
    proc = _serve(port)
    base = f"http://127.0.0.1:{port}"
    try:
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=chromium, args=["--disable-dev-shm-usage", "--disable-gpu"])
            for mode, scheme, query in MODES:
                context = browser.new_context(viewport=SIZE, color_scheme=scheme)
                page = context.new_page()
                for path, _, _ in PAGES:
                    name = url_name(path)
                    page.goto(f"{base}/{name}{query}", wait_until="domcontentloaded")
                    # the run finished, and no page body waits for presenter mode's CSS (pages/frame/shims.py)
                    page.wait_for_function(
                        f"""() => document.querySelector("[data-testid='stApp'][data-test-script-state='notRunning']")
                            && !document.querySelector(".st-key-{STYLED_GATE_KEY}")""",
                        timeout=90_000,
                    )
                    if path != "app.py" and "Drills" not in path and "Class" not in path:  # (a form first)
                        page.wait_for_selector(".js-plotly-plot .main-svg", timeout=60_000)
                    page.wait_for_timeout(800)
                    target = OUT / f"{name or 'Home'}-{mode}.png"
                    target.write_bytes(_small_png(page.screenshot()))
                    print(f"{target.relative_to(ROOT)}: {target.stat().st_size / 1024:.0f} KiB")
                context.close()
            browser.close()
    finally:
        proc.terminate()
        proc.wait(10)
    total = sum(p.stat().st_size for p in OUT.glob("*.png"))
    print(f"{len(list(OUT.glob('*.png')))} screenshots, {total / 2**20:.1f} MiB")


if __name__ == "__main__":
    main()
