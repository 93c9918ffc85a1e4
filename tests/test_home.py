"""The home page: renders, lists the stages, links the pages that exist, and never imports torch."""

import subprocess
import sys
from pathlib import Path

from pages.frame import PAGES, existing_pages
from tests.apptest import no_exception, open_page

ROOT = Path(__file__).resolve().parents[1]


def test_home_renders_with_stage_table():
    at = open_page(None)
    assert no_exception(at)
    text = " ".join(m.value for m in at.markdown)
    for stage in [
        "Pretraining",
        "Mid-training",
        "SFT",
        "Preference tuning",
        "RL with verifiable rewards",
        "Evaluation",
    ]:
        assert stage in text
    labels = [link.proto.label for link in at.get("page_link")]
    for _, label, _ in existing_pages():
        assert label in labels
    assert any("Core computes on" in c.value for c in at.caption)


def test_every_existing_page_is_registered():
    on_disk = {f"pages/{p.name}" for p in (ROOT / "pages").glob("*.py") if p.name != "__init__.py"}
    registered = {path for path, _, _ in PAGES}
    assert on_disk <= registered


def test_home_page_does_not_import_torch():
    code = (
        "import sys; from streamlit.testing.v1 import AppTest; "
        "at = AppTest.from_file('app.py', default_timeout=60).run(); "
        "assert not at.exception, at.exception; print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-1] == "False"


def test_stage_table_links_each_stage_to_its_pages():
    """Each row of the stage table links the pages that explore it (issues 17 and 18): found by the row's stage
    name in its first column and the page links in its last ("Explore") column."""
    at = open_page(None)
    assert no_exception(at)
    cols = list(at.columns)
    links: dict[str, set[str]] = {}
    for i, col in enumerate(cols):
        first = [m.value for m in col.markdown]
        if first and first[0].startswith("**") and i + 4 < len(cols):
            links[first[0].strip("*")] = {link.proto.page for link in cols[i + 4].get("page_link")}
    assert {"Sampling", "Loss_and_units"} <= links["Pretraining"]
    assert links["Mid-training"] == {"Schedules", "Positions", "FlashAttention"}
    assert "Loss_and_units" in links["SFT"]
    assert {"Reward_model", "PPO", "KL_leash"} <= links["Preference tuning"]
    assert {"GRPO", "PPO"} <= links["RL with verifiable rewards"]
