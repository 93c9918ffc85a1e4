"""The KL leash page's wording and the cost of moving onto a rare answer, against plain-python references."""

import math

import pytest

from core import kl_leash
from tests.apptest import no_exception, open_page


@pytest.mark.parametrize("rare", [1e-2, 1e-6, 1e-10])
def test_moving_onto_a_rare_answer_costs_about_log_one_over_pi_ref(rare):
    pi_ref = [1 - rare, rare]
    # a reward gap of 40 at beta = 0.5: pi* = pi_ref · (1, e^80) / Z, nearly all mass on the rare answer
    pi = kl_leash.kl_regularized_policy(pi_ref, [0.0, 40.0], 0.5)
    expected = [
        (1 - rare) / ((1 - rare) + rare * math.exp(80)),
        rare * math.exp(80) / ((1 - rare) + rare * math.exp(80)),
    ]
    assert pi.tolist() == pytest.approx(expected, rel=1e-9)
    ref_kl = sum(p * math.log(p / q) for p, q in zip(expected, pi_ref, strict=True) if p > 0)
    assert kl_leash.kl_divergence(pi, pi_ref) == pytest.approx(ref_kl, rel=1e-9)
    assert ref_kl == pytest.approx(math.log(1 / rare), abs=1e-3)  # the page's "about log(1/pi_ref) nats"
    assert math.log(1e10) == pytest.approx(23.03, abs=0.01)  # "about 23 nats for one in 10^10"


def test_large_beta_is_a_short_leash():
    pi_ref, r = [0.5, 0.5], [1.0, 0.0]
    kls = [kl_leash.kl_divergence(kl_leash.kl_regularized_policy(pi_ref, r, b), pi_ref) for b in (0.1, 1.0, 10.0)]
    assert kls[0] > kls[1] > kls[2] > 0  # a larger beta keeps pi* closer to pi_ref


def test_every_text_on_the_page_agrees_on_the_leash():
    at = open_page("pages/2_KL_leash.py")
    assert no_exception(at)
    text = " ".join(" ".join(m.value for m in at.markdown).split())
    assert "length of the leash" not in text and "large β (long leash)" not in text
    assert "its length is 1/β" in text and "a large β (a short leash)" in text and "a small β (a long leash)" in text
    assert "Too small a β (a long leash)" in text and "reward hacking comes from a small β" in text
    assert "log(1/π_ref(y)) nats" in text and "π_ref = 0 stays 0." not in text
