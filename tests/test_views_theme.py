"""Every figure a page's view builds follows ``Options``: the dark theme's background and text, and presenter
mode's type (at least 16 px everywhere). Catches a builder call in views that forgets to pass them on."""

from __future__ import annotations

import importlib

import pytest
from apptest import font_sizes

from views import Options, catalog
from views import attention as attention_view
from views import calibration as calibration_view
from views import distillation as distillation_view
from views import evaluation as evaluation_view
from views import flash_attention as flash_view
from views import grpo as grpo_view
from views import moe as moe_view
from views import number_formats as number_formats_view
from views import optimizers as optimizers_view
from views import policy_gradient as policy_gradient_view
from views import positions as positions_view
from views import test_time_compute as ttc_view
from viz.style import DARK, PRESENTER_MIN

VIEWS = tuple(e.view for e in catalog.PAGES if e.view is not None)  # every page's view, from the catalogue
# every part name any view knows (a view builds the ones it has); LoRA's "init" trains for seconds: left out
PARTS = frozenset(
    {"main", "family", "Beta sweep", "Reward hacking", "Theorem check", "DPO", "rank", "cost", "bubble",
     "KV capacity", "Speculative decoding", "batch", "gae", "kl", "memory", "noise", "length", "dpo",
     "order", "loops", "SFT mask", "Packing", "Padding", "WSD branches", "Kaplan's read-off", "Data mixture",
     grpo_view.DIFFICULTY, grpo_view.PPO, grpo_view.BATCH, *evaluation_view.VIEWS, *attention_view.VIEWS,
     *positions_view.VIEWS, *flash_view.VIEWS, *moe_view.VIEWS, *number_formats_view.VIEWS,
     *optimizers_view.VIEWS, *policy_gradient_view.VIEWS, *ttc_view.VIEWS,
     *distillation_view.VIEWS, *calibration_view.VIEWS}
)  # fmt: skip
EXPECTED = {"scaling": 2, "kl_leash": 5, "lora": 3, "grpo": 4, "evaluation": 4, "attention": 7, "training_memory": 2,
            "serving": 3, "ppo": 6, "reward_model": 4, "sampling": 3, "loss_units": 4, "schedules": 4,
            "positions": 3, "flash_attention": 3, "moe": 3, "training_lab": 1,
            "number_formats": 4, "optimizers": 6, "policy_gradient": 4, "test_time_compute": 4,
            "distillation": 3, "calibration": 4}  # fmt: skip


def test_every_view_has_its_figure_count():
    """A new page's view joins :data:`EXPECTED` with the number of figures its tabs build."""
    assert set(EXPECTED) == set(VIEWS)


@pytest.mark.parametrize("name", VIEWS)
def test_every_figure_of_a_view_follows_the_options(name):
    module = importlib.import_module(f"views.{name}")
    view = module.figures(module.SPEC.defaults(), Options(theme="dark", presenter=True, parts=PARTS))
    assert len(view.figures) >= EXPECTED[name]  # every tab's figure was built
    for key, fig in view.figures.items():
        layout = fig.to_plotly_json()["layout"]
        assert layout["paper_bgcolor"] == DARK.background and layout["font"]["color"] == DARK.text, key
        small = [(where, size) for where, size in font_sizes(fig.to_plotly_json()) if size < PRESENTER_MIN]
        assert not small, (key, small)
