"""The LoRA page's reported numbers: NF4's 4.127 bits, the QLoRA preset's headroom, Hu et al.'s measurements."""

from core import lora_memory
from tests.apptest import no_exception, open_page


def test_page_texts_quote_nf4_qlora_and_hu_as_reported():
    at = open_page("pages/3_LoRA.py")
    assert no_exception(at)
    text = " ".join(" ".join(m.value for m in at.markdown).split())
    assert "4.127 bits (0.516 bytes)" in text and "Dettmers et al. 2023" in text
    total = lora_memory.lora_memory(**lora_memory.PRESET_QLORA_65B).lora_total_bytes
    headroom = 48 * 2**30 - total  # a "48 GB" GPU holds 48 GiB
    assert f"{total / 1e9:.1f} GB ({total / 2**30:.1f} GiB) leaves at most about {headroom / 2**30:.1f} GiB" in text
    assert f"({headroom / 1e9:.1f} GB) of a 48 GiB (“48 GB”) GPU" in text and f"{headroom / 1e9:.1f}" == "5.2"
    assert "gradient checkpointing" in text
    assert "1.2 TB to 350 GB" in text and "35 MB" in text and "25% faster" in text and "Hu et al. (2021)" in text
    assert "PiSSA" in text and "OLoRA" in text and "subtracted from W₀" in text
