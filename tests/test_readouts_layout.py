"""The readouts are one wrapping row of metrics, not a grid of columns: a keyed strip (``readouts-N``, N to a line)
for a page's main readouts, an unkeyed one for a tab's row. A tab's own controls (``controls-N-<field>``) and the CSV
buttons are rows too. Fewer elements for the browser to render on each rerun (README, Performance); the browser tests
check the lines they make."""

import re

import pytest

from pages.frame import _BASE_CSS, CONTROLS_PER_ROW_MAX, READOUTS_PER_ROW_MAX
from tests.apptest import no_exception, open_page


def _blocks(node, path=()):
    """(block, its ancestors' types) for every block under ``node``."""
    for child in getattr(node, "children", {}).values():
        if getattr(child, "children", None) is not None:
            yield child, path
            yield from _blocks(child, (*path, child.type))


def _metric_blocks(at):
    """(block, its ancestors' types) for every block that holds a metric directly."""
    return [
        (block, path)
        for block, path in _blocks(at.main)
        if any(getattr(c, "type", "") == "metric" for c in block.children.values())
    ]


@pytest.mark.parametrize(
    ("page", "per_row", "count"),
    [("pages/1_Scaling_laws.py", 4, 12), ("pages/4_GRPO.py", 3, 6), ("pages/2_KL_leash.py", 5, 5)],
)
def test_main_readouts_are_one_keyed_strip(page, per_row, count):
    at = open_page(page)
    assert no_exception(at)
    strips = [b for b, _ in _metric_blocks(at) if b.proto.id.endswith(f"-readouts-{per_row}")]
    assert len(strips) == 1
    strip = strips[0].proto
    assert strip.flex_container.direction == strip.flex_container.HORIZONTAL and strip.flex_container.wrap
    metrics = [c for c in strips[0].children.values() if getattr(c, "type", "") == "metric"]
    assert len(metrics) == len(strips[0].children) == count  # the metrics alone, no column in between


def test_no_metric_sits_in_a_column():
    # the PPO page's tabs hold four more rows of readouts (metric_row); every row is a strip, none a column
    at = open_page("pages/9_PPO.py")
    blocks = _metric_blocks(at)
    assert len(blocks) >= 2
    for block, path in blocks:
        assert block.type == "flex_container" and block.proto.flex_container.wrap, (block.type, path)
        assert "column" not in path


def test_css_gives_each_strip_its_share_of_the_line():
    for n in range(1, READOUTS_PER_ROW_MAX + 1):
        rule = re.search(rf"\.st-key-readouts-{n} > [^{{]+\{{ flex: 0 0 calc\(\(100% - (\d+)rem\) / (\d+)\)", _BASE_CSS)
        assert rule and rule.groups() == (str(n - 1), str(n)), n


def _widget_keys(block) -> list[str]:
    return [getattr(c, "key", None) for c in block.children.values()]


@pytest.mark.parametrize(
    ("page", "query", "rows"),
    [
        (
            "pages/9_PPO.py",
            {},
            {
                "controls-2-noise": ["noise", "tok_n"],
                "controls-2-gae_r": ["gae_r", "gae_v", "gamma", "lam", "critic_err"],
                "controls-2-drift": ["drift", "kl_n"],
                "controls-2-pol_b": ["pol_b", "rm_b"],
            },
        ),
        (
            "pages/8_Serving.py",
            {},
            {"controls-3-accept": ["accept", "draft_k", "draft"]},
        ),
        (
            "pages/10_Reward_model.py",
            {},
            {"controls-2-flip": ["flip", "train_pairs"], "controls-2-rm_beta": ["rm_beta", "len_bonus"]},
        ),
        ("pages/2_KL_leash.py", {}, {"controls-2-thm": ["thm", "policies"]}),
    ],
)
def test_a_tabs_controls_are_one_keyed_row(page, query, rows):
    at = open_page(page, query)
    assert no_exception(at)
    found = {}
    for block, path in _blocks(at.main):
        m = re.search(r"-(controls-\d+-\w+)$", getattr(block.proto, "id", ""))
        if m:
            assert block.type == "flex_container" and block.proto.flex_container.wrap, (block.type, path)
            found[m.group(1)] = _widget_keys(block)
    assert found == rows
    if page != "pages/2_KL_leash.py":  # the KL page's DPO tab keeps two columns: its inputs beside the derivation
        assert not [b for b, _ in _blocks(at.main) if b.type == "column"]


def test_the_csv_buttons_are_one_row():
    at = open_page("pages/1_Scaling_laws.py")
    rows = [
        block
        for block, _ in _blocks(at.main)
        if any(str(getattr(c, "key", "")).startswith("csv-") for c in block.children.values())
    ]
    assert len(rows) == 1 and rows[0].type == "flex_container"
    assert rows[0].proto.flex_container.direction == rows[0].proto.flex_container.HORIZONTAL
    assert [c.key for c in rows[0].children.values()] == [
        "csv-scaling-U-curve",
        "csv-scaling-Budget family",
    ]


def test_css_gives_each_control_its_share_of_the_line():
    for n in range(1, CONTROLS_PER_ROW_MAX + 1):
        rule = re.search(
            rf'\[class\*="st-key-controls-{n}-"\] > [^{{]+\{{ flex: 0 0 calc\(\(100% - (\d+)rem\) / (\d+)\)', _BASE_CSS
        )
        assert rule and rule.groups() == (str(n - 1), str(n)), n
