"""The explorer's pages: the list every sidebar and the home page draw their links from."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Every page of the explorer: (script relative to app.py, label, icon). The sidebar and the home page list
# the ones whose file exists.
PAGES: tuple[tuple[str, str, str], ...] = (
    ("app.py", "Home", ":material/explore:"),
    ("pages/1_Scaling_laws.py", "Scaling laws", ":material/trending_up:"),
    ("pages/2_KL_leash.py", "KL leash and DPO", ":material/compare_arrows:"),
    ("pages/3_LoRA.py", "LoRA", ":material/extension:"),
    ("pages/4_GRPO.py", "GRPO", ":material/groups:"),
    ("pages/5_Evaluation.py", "pass@k and error bars", ":material/straighten:"),
    ("pages/6_Attention.py", "Attention", ":material/visibility:"),
    ("pages/7_Training_memory.py", "Training memory", ":material/memory:"),
    ("pages/8_Serving.py", "Serving", ":material/rocket_launch:"),
    ("pages/9_PPO.py", "PPO: clip and advantage", ":material/content_cut:"),
    ("pages/10_Reward_model.py", "Reward model", ":material/balance:"),
    ("pages/11_Sampling.py", "Sampling and decoding", ":material/casino:"),
    ("pages/12_Loss_and_units.py", "Loss, units and SFT mask", ":material/calculate:"),
    ("pages/13_Schedules.py", "LR schedules and mid-training", ":material/trending_down:"),
    ("pages/14_Drills.py", "Interview drills", ":material/mic:"),
    ("pages/15_Deck.py", "Lecture decks", ":material/slideshow:"),
)


def existing_pages() -> list[tuple[str, str, str]]:
    """The entries of :data:`PAGES` whose script exists."""
    return [entry for entry in PAGES if (ROOT / entry[0]).exists()]
