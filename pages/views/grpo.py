"""The GRPO page's state: one group's rewards, the std convention and ε."""

from __future__ import annotations

from core import grpo
from pages.frame.state import Field, Spec

DEFAULT_REWARDS = "1,0,0,1,1,0,0,0"  # worked example C
EPS = {"0": 0.0, "1e-8": 1e-8, "1e-6": 1e-6, "1e-4": 1e-4, "1e-2": 1e-2, "0.1": 0.1}  # URL text -> ε


def _preset(p: grpo.GroupPreset) -> dict[str, str]:
    return {
        "rewards": grpo.format_rewards(p.rewards),
        "std": p.std,
        "eps": next(k for k, v in EPS.items() if v == p.eps),
    }


SPEC = Spec(
    "GRPO",
    (
        Field(
            "rewards",
            f"Rewards, one per answer ({grpo.G_MIN} to {grpo.G_MAX})",
            "text",
            DEFAULT_REWARDS,
            aliases=("r",),
            help="1 = the checker accepts the answer, 0 = it does not; or any real scores from a reward model. "
            "Commas or spaces between them. Clicking a bar flips that answer's reward.",
        ),
        Field(
            "std",
            "Divide by",
            "choice",
            grpo.STD_MODES[0],
            choices=grpo.STD_MODES,
            widget="radio",
            extra=(("captions", [grpo.STD_LABELS[m] for m in grpo.STD_MODES]),),
        ),
        Field(
            "eps",
            "ε added to the std",
            "choice",
            "0",
            choices=tuple(EPS),
            widget="select_slider",
            help="unused with no std",
        ),
    ),
    presets={name: _preset(p) for name, p in grpo.PRESETS.items()},
)
