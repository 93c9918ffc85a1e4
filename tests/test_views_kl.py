"""The KL leash page's view, ``figures(state, options)``, without Streamlit: the parts it builds, its numbers
against closed forms worked out here, its notices, and agreement with what the page itself shows."""

import ast
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.optimize import brentq

from tests.apptest import decode, figures, metrics, no_exception, open_page, trace
from views import Options
from views import kl_leash as view_of

PAGE = "pages/2_KL_leash.py"
ROOT = Path(__file__).resolve().parents[1]
TABS = view_of.VIEWS  # "Beta sweep", "Reward hacking", "Theorem check", "DPO": the parts' names
S = view_of.SPEC.defaults()


def _readouts(view) -> dict[str, str]:
    return {r.label: r.value for r in view.readouts}


def _pi_star(view) -> np.ndarray:
    return decode(trace(view.figures["main"].to_plotly_json(), "π*")["y"]).astype(float)


def _toy(beta: float) -> tuple[float, float, float]:
    """The lesson's toy (π_ref = (½, ½), r = (1, 0)) by hand: π*(better), KL(π* ‖ π_ref) and β·log Z."""
    p = math.e ** (1 / beta) / (math.e ** (1 / beta) + 1)
    kl = p * math.log(p / 0.5) + (1 - p) * math.log((1 - p) / 0.5)
    return p, kl, beta * math.log(0.5 * math.e ** (1 / beta) + 0.5)


def test_runs_outside_streamlit_without_torch_outside_the_theorem_check():
    # a plain python process, no Streamlit run; torch is for the theorem check only (the page test checks it comes)
    code = (
        "import sys; from views import Options; from views import kl_leash as v; "
        "s = v.SPEC.defaults(); a = set(v.figures(s, Options(parts=frozenset(v.VIEWS[:2] + v.VIEWS[3:]))).figures); "
        "print(sorted(a), 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split("\n")[-2] == "['Beta sweep', 'DPO', 'Reward hacking'] False"
    # the view module itself never imports Streamlit (views.state's package does, for now)
    tree = ast.parse((ROOT / "views/kl_leash.py").read_text())
    imported = [a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names]
    imported += [n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)]
    assert imported and not any(m.split(".")[0] == "streamlit" for m in imported)


def test_each_part_only_when_asked():
    few = view_of.SPEC.state({"policies": 1000})  # a quick theorem check
    assert set(view_of.figures(few).figures) == {"main"}  # default options: the bars only
    for tab in TABS:
        out = view_of.figures(few, Options(parts=frozenset({"main", tab})))
        assert set(out.figures) == {"main", tab}, tab
    everything = view_of.figures(few, Options(parts=frozenset({"main", *TABS})))
    assert set(everything.figures) == {"main", *TABS} and everything.notices == []
    assert {"hacking_caption", "theorem_caption", "dpo_readouts"} <= set(everything.facts)
    assert "dpo_readouts" not in view_of.figures(few).facts  # a closed tab's numbers are not computed


@pytest.mark.parametrize("beta", ["1", "0.5"])
def test_the_toy_matches_the_closed_form(beta):
    out = view_of.figures(S.replace(beta=beta))
    p, kl, beta_log_z = _toy(float(beta))
    np.testing.assert_allclose(out.facts["point"].pi, [p, 1 - p], rtol=1e-12)
    np.testing.assert_allclose(_pi_star(out), [p, 1 - p], atol=5e-5)  # the figure carries 4 decimals
    m = _readouts(out)
    assert m["E_π*[r]"] == f"{p:.3f}" and m["KL(π* ‖ π_ref)"] == f"{kl:.3f} nats"
    assert m["E[r] − β·KL"] == m["β·log Z"] == f"{beta_log_z:.3f}"
    assert "True E_π*[r_true]" not in m  # no proxy gap in the toy
    assert out.facts["answers"] == view_of.TOY_ANSWERS


def test_lesson_numbers_0731_and_0881():
    assert _readouts(view_of.figures(S))["E_π*[r]"] == "0.731"
    assert round(float(_pi_star(view_of.figures(S.replace(beta="0.5")))[0]), 3) == 0.881


def test_bad_text_gives_a_notice_and_the_toys_value():
    out = view_of.figures(S.replace(pi_ref="abc, 1", r="0, 1"))
    assert [kind for kind, _ in out.notices] == ["warning"] and "not a number" in out.notices[0][1]
    assert out.facts["answers"].pi_ref == (0.5, 0.5) and out.facts["answers"].r == (0.0, 1.0)
    # the same state gives the same view: nothing of an earlier call leaks in
    view_of.figures(S.replace(pi_ref="0.2, 0.8"))
    np.testing.assert_array_equal(_pi_star(view_of.figures(S.replace(pi_ref="abc, 1", r="0, 1"))), _pi_star(out))
    wrong_k = view_of.figures(S.replace(K=3))  # the toy's two values for three answers: a neutral set
    assert len(wrong_k.notices) == 2 and wrong_k.facts["answers"].pi_ref == (1 / 3,) * 3


def test_reference_not_summing_to_one_gives_an_info():
    out = view_of.figures(S.replace(pi_ref="1, 1"))
    assert out.notices == [("info", "π_ref sums to 2, not 1, so it was normalised to 0.5, 0.5.")]
    np.testing.assert_allclose(_pi_star(out), _pi_star(view_of.figures(S)), rtol=1e-12)


def test_reward_hack_caption_matches_an_independent_root():
    state = view_of.SPEC.state(view_of.SPEC.presets["Reward hack"])
    out = view_of.figures(state, Options(parts=frozenset({"Reward hacking"})))
    pi_ref, r = np.array([0.3, 0.4, 0.299, 0.001]), np.array([1, 0.5, 0, 2])

    def exploit_share(log_beta: float) -> float:
        w = pi_ref * np.exp((r - r.max()) / math.exp(log_beta))
        return w[3] / w.sum() - 0.9

    beta = math.exp(brentq(exploit_share, math.log(1e-3), math.log(10.0), xtol=1e-14))
    q = pi_ref * np.exp((r - r.max()) / beta)
    q /= q.sum()
    kl = float(np.sum(q * np.log(q / pi_ref)))
    assert (
        f"β < **{beta:.3g}**" in out.facts["hacking_caption"] and f"**{kl:.2f} nats**" in out.facts["hacking_caption"]
    )
    assert "**exploit**" in out.facts["hacking_caption"] and f"{beta:.3g}" == "0.126" and f"{kl:.2f}" == "6.00"
    assert _readouts(out)["True E_π*[r_true]"] == "0.740"


def test_theorem_check_caption_and_the_bound():
    out = view_of.figures(S.replace(policies=2000), Options(parts=frozenset({"Theorem check"})))
    assert out.facts["theorem_caption"].startswith("2,000 policies drawn with torch on ")
    _, _, beta_log_z = _toy(1.0)
    assert float(np.max(np.asarray(out.facts["cloud"].objective))) <= beta_log_z + 1e-9  # none beats π*


def test_dpo_readouts_match_the_sigmoid_by_hand():
    out = view_of.figures(S, Options(parts=frozenset({"DPO"})))  # the defaults are worked example B
    margin = 0.1 * ((-10 + 12) - (-15 + 14))
    m = {r.label: r.value for r in out.facts["dpo_readouts"]}
    assert m["Margin"] == f"{margin:.3f}" and m["DPO loss"] == f"{math.log1p(math.exp(-margin)):.3f}" == "0.554"
    assert m["Weight"] == f"{1 / (1 + math.exp(margin)):.3f}" == "0.426" and "dpo_note" not in out.facts


def test_the_view_of_a_link_is_what_the_page_shows():
    values = view_of.SPEC.presets["Reward hack"] | view_of.SPEC.presets["DPO: Both answers less likely"]
    state = view_of.SPEC.state(values | {"kl_view": "DPO"})
    out = view_of.figures(state, Options(parts=frozenset({"main", "DPO"})))
    at = open_page(PAGE, view_of.SPEC.query(state))
    assert no_exception(at) and at.warning.len == 0
    shown = metrics(at)
    assert shown == _readouts(out) | {r.label: r.value for r in out.facts["dpo_readouts"]}
    assert shown["True E_π*[r_true]"] == "0.740"
    bars, dpo = figures(at)
    np.testing.assert_array_equal(decode(trace(bars, "π*")["y"]), _pi_star(out))
    assert [i.value for i in at.info] == [out.facts["dpo_note"]]
    assert dpo["layout"]["annotations"] == out.figures["DPO"].to_plotly_json()["layout"]["annotations"]
