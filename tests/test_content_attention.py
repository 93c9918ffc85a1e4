"""The attention page's interview texts: the assumption behind Var(q·k) = d_k, cache ratios, Llama 3.1's context."""

from tests.apptest import no_exception, open_page


def test_page_texts():
    at = open_page("pages/6_Attention.py")
    assert no_exception(at)
    text = " ".join(" ".join(m.value for m in at.markdown).split())
    assert "independent with mean 0 and variance 1" in text and "Var(q·k) = d_k" in text
    assert "independent zero-mean, unit-variance components" in text
    assert "cache-size ratios, not decoding speed-ups" in text and "ratios of cache size, not of decoding speed" in text
    assert "speed up memory-bound decoding (8×" not in text
    assert "128k-token context of Llama 3.1" in text
    assert "log t for causal row t" in text
