"""The warning under a link offered for sharing when its address is this computer's own (issue 30): a remote
candidate or student cannot open a 127.0.0.1 link."""

from __future__ import annotations

import pytest

from pages.frame.sidebar import LOOPBACK_WARNING, is_loopback
from tests.apptest import open_page


@pytest.mark.parametrize(
    ("url", "loopback"),
    [
        ("http://127.0.0.1:8501/Scaling_laws", True),
        ("http://127.8.9.10/x", True),  # all of 127.0.0.0/8 (RFC 1122, 3.2.1.3)
        ("http://localhost:8501/", True),
        ("http://LOCALHOST/", True),
        ("http://app.localhost/", True),  # RFC 6761, 6.3: .localhost names resolve to loopback
        ("http://[::1]:8501/Drills", True),
        ("http://192.168.1.20:8501/Drills", False),
        ("http://10.0.0.5/", False),
        ("https://lessons.example.org/Serving", False),
        ("http://[fe80::1]/", False),
        ("", False),  # no address known (a script run without a browser): no warning
    ],
)
def test_loopback_addresses_are_told_apart(url: str, loopback: bool) -> None:
    assert is_loopback(url) is loopback


def test_the_warning_is_one_line_that_names_the_fix() -> None:
    assert "\n" not in LOOPBACK_WARNING and "docs/deployment.md" in LOOPBACK_WARNING


def test_no_warning_where_the_page_does_not_know_its_address() -> None:
    at = open_page("pages/1_Scaling_laws.py")  # AppTest gives no browser address
    assert not any(LOOPBACK_WARNING in c.value for c in at.caption)
