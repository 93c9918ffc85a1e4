"""The catalogue of the explorer's pages: one table of every page (script, URL name, label, icon, stage group,
keywords, view module), in lesson order, read by the sidebar's navigation and page finder, the home page, the
lecture decks and the drills. No Streamlit here: the frame draws what this lists.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import cache
from types import ModuleType

from views.state import State

# The stages a lesson goes through, in order: the sidebar's groups.
GROUPS: tuple[str, ...] = (
    "Pretraining",
    "Architecture",
    "Systems",
    "Post-training and RL",
    "Inference",
    "Evaluation",
    "Practice",
)


@dataclass(frozen=True)
class Entry:
    """One page: its script (relative to app.py), its URL name (``/Scaling_laws``, also its spec's ``page``), the
    label and Material icon of its links, its stage group, the words the page finder matches besides the label, and
    the view module that draws it from a state (``views.<view>``; None for the players: drills and decks)."""

    script: str
    url: str
    label: str
    icon: str
    group: str
    keywords: tuple[str, ...] = ()
    view: str | None = None

    @property
    def finder_label(self) -> str:
        """The page finder's option: the label, then its keywords, which the finder's search matches too."""
        return f"{self.label} · {', '.join(self.keywords)}" if self.keywords else self.label


HOME = Entry("app.py", "", "Home", ":material/explore:", "")

# Every page, grouped by stage and in lesson order within a group.
PAGES: tuple[Entry, ...] = (
    Entry("pages/1_Scaling_laws.py", "Scaling_laws", "Scaling laws", ":material/trending_up:", "Pretraining",
          ("Chinchilla", "compute-optimal", "6ND", "tokens per parameter", "iso-FLOP", "Kaplan"), "scaling"),
    Entry("pages/12_Loss_and_units.py", "Loss_and_units", "Loss, units and SFT mask", ":material/calculate:",
          "Pretraining", ("perplexity", "bits per byte", "cross-entropy", "tokenizer", "BPE", "SFT loss mask",
                          "packing", "padding"), "loss_units"),
    Entry("pages/13_Schedules.py", "Schedules", "LR schedules and mid-training", ":material/trending_down:",
          "Pretraining", ("learning rate", "warm-up", "cosine", "WSD", "cool-down", "annealing", "data mixture"),
          "schedules"),
    Entry("pages/19_Training_lab.py", "Training_lab", "Training lab: a tiny GPT", ":material/science:", "Pretraining",
          ("training loop", "loss curve", "learning rate", "warm-up", "gradient clipping", "gradient norm",
           "post-norm", "divergence", "loss spike"), "training_lab"),
    Entry("pages/20_Number_formats.py", "Number_formats", "Number formats and mixed precision",
          ":material/decimal_increase:", "Pretraining",
          ("bf16", "fp16", "fp8", "fp32", "mixed precision", "loss scaling", "overflow", "underflow", "log-sum-exp",
           "master weights"), "number_formats"),
    Entry("pages/21_Optimizers.py", "Optimizers", "Optimizers and normalisation", ":material/route:", "Pretraining",
          ("SGD", "momentum", "Adam", "AdamW", "bias correction", "weight decay", "LayerNorm", "RMSNorm", "pre-LN",
           "post-LN", "muP"), "optimizers"),
    Entry("pages/6_Attention.py", "Attention", "Attention", ":material/visibility:", "Architecture",
          ("softmax", "√d_k scale", "causal mask", "MHA", "GQA", "MQA", "KV cache", "heads"), "attention"),
    Entry("pages/16_Positions.py", "Positions", "Positions: RoPE and long context", ":material/rotate_right:",
          "Architecture", ("RoPE", "rotary", "position interpolation", "NTK-aware", "YaRN", "long context",
                           "wavelength", "rope_theta"), "positions"),
    Entry("pages/17_FlashAttention.py", "FlashAttention", "FlashAttention and the memory hierarchy", ":material/bolt:",
          "Architecture", ("FlashAttention", "online softmax", "tiling", "SRAM", "HBM", "IO-aware",
                           "recomputation", "memory-bound"), "flash_attention"),
    Entry("pages/18_MoE.py", "MoE", "Mixture of experts", ":material/hub:", "Architecture",
          ("mixture of experts", "MoE", "router", "top-k", "capacity factor", "load balancing", "experts",
           "all-to-all"), "moe"),
    Entry("pages/7_Training_memory.py", "Training_memory", "Training memory", ":material/memory:", "Systems",
          ("ZeRO", "activations", "recomputation", "checkpointing", "tensor parallelism", "pipeline",
           "MFU", "mixed precision", "Adam states"), "training_memory"),
    Entry("pages/3_LoRA.py", "LoRA", "LoRA", ":material/extension:", "Post-training and RL",
          ("QLoRA", "low rank", "SVD", "adapters", "fine-tuning", "NF4"), "lora"),
    Entry("pages/2_KL_leash.py", "KL_leash", "KL leash and DPO", ":material/compare_arrows:", "Post-training and RL",
          ("KL", "beta", "DPO", "reward hacking", "RLHF", "optimal policy"), "kl_leash"),
    Entry("pages/10_Reward_model.py", "Reward_model", "Reward model", ":material/balance:", "Post-training and RL",
          ("Bradley-Terry", "preference pairs", "label noise", "length bias"), "reward_model"),
    Entry("pages/22_Policy_gradient.py", "Policy_gradient", "The policy gradient from scratch", ":material/functions:",
          "Post-training and RL", ("REINFORCE", "policy gradient", "baseline", "variance", "RLOO",
                                   "score function", "Dr. GRPO"), "policy_gradient"),
    Entry("pages/9_PPO.py", "PPO", "PPO: clip and advantage", ":material/content_cut:", "Post-training and RL",
          ("clipped surrogate", "ratio", "GAE", "advantage", "critic", "value model", "KL estimators"), "ppo"),
    Entry("pages/4_GRPO.py", "GRPO", "GRPO", ":material/groups:", "Post-training and RL",
          ("group advantage", "Dr. GRPO", "DAPO", "RLVR", "verifiable rewards"), "grpo"),
    Entry("pages/23_Distillation.py", "Distillation", "Distillation", ":material/school:", "Post-training and RL",
          ("distillation", "forward KL", "reverse KL", "mode-seeking", "mode-covering", "soft targets",
           "temperature", "on-policy distillation", "GKD", "MiniLLM", "sequence-level"), "distillation"),
    Entry("pages/11_Sampling.py", "Sampling", "Sampling and decoding", ":material/casino:", "Inference",
          ("temperature", "top-k", "top-p", "nucleus", "min-p", "greedy"), "sampling"),
    Entry("pages/8_Serving.py", "Serving", "Serving", ":material/rocket_launch:", "Inference",
          ("roofline", "prefill", "decode", "KV cache", "PagedAttention", "speculative decoding", "quantisation",
           "MoE", "batching"), "serving"),
    Entry("pages/5_Evaluation.py", "Evaluation", "pass@k and error bars", ":material/straighten:", "Evaluation",
          ("pass@k", "pass^k", "error bars", "confidence interval", "paired test"), "evaluation"),
    Entry("pages/24_Test_time_compute.py", "Test_time_compute", "Test-time compute", ":material/hourglass_top:",
          "Evaluation", ("best-of-n", "verifier", "self-consistency", "majority vote", "over-optimisation",
                         "reasoning models", "inference compute", "compute split"), "test_time_compute"),
    Entry("pages/25_Calibration.py", "Calibration", "Calibration and emergence", ":material/adjust:", "Evaluation",
          ("calibration", "ECE", "reliability diagram", "temperature scaling", "overconfidence", "emergence",
           "exact match"), "calibration"),
    Entry("pages/14_Drills.py", "Drills", "Interview drills", ":material/mic:", "Practice",
          ("interview cards", "flashcards", "FSRS", "mock interview")),
    Entry("pages/15_Deck.py", "Deck", "Lecture decks", ":material/slideshow:", "Practice",
          ("lecture", "slides", "presenter", "handout")),
    Entry("pages/26_Class.py", "Class", "Join a class", ":material/groups:", "Practice",
          ("class mode", "students", "join code", "peer instruction", "lecture")),
)  # fmt: skip

# Pages whose figures() names a tab's part differently from the tab's label (the page scripts hold the same map).
TAB_PARTS: dict[str, dict[str, str]] = {
    "PPO": {"Token batch": "batch", "GAE": "gae", "KL estimators": "kl", "Memory": "memory"},
    "Reward_model": {"Label noise": "noise", "Length bias": "length", "DPO": "dpo"},
    "Sampling": {"Order of the steps": "order", "Greedy loops": "loops"},
}


def by_url(url: str) -> Entry | None:
    """The page whose URL name is ``url`` (``"GRPO"``); None for an unknown one."""
    return next((e for e in PAGES if e.url == url), None)


def by_script(script: str) -> Entry | None:
    """The page whose script is ``script`` (``"pages/4_GRPO.py"``); None for an unknown one."""
    return next((e for e in PAGES if e.script == script), None)


def in_group(group: str) -> list[Entry]:
    """The pages of one stage group, in lesson order."""
    return [e for e in PAGES if e.group == group]


def neighbours(url: str) -> tuple[Entry | None, Entry | None]:
    """The previous and next page in lesson order (None at either end, and for a page not in the table)."""
    urls = [e.url for e in PAGES]
    if url not in urls:
        return None, None
    i = urls.index(url)
    return (PAGES[i - 1] if i > 0 else None), (PAGES[i + 1] if i + 1 < len(PAGES) else None)


def find(query: str) -> list[Entry]:
    """The pages whose finder label (label and keywords) contains ``query``, ignoring case, in lesson order: what the
    sidebar's page finder (a selectbox filtering with "contains") offers for the same text."""
    text = query.strip().lower()
    return [e for e in PAGES if text in e.finder_label.lower()]


def view_module(url: str) -> ModuleType | None:
    """The view module that draws page ``url`` from a state (imported on first use); None for a player."""
    entry = by_url(url)
    if entry is None or entry.view is None:
        return None
    return importlib.import_module(f"{__package__}.{entry.view}")


@cache
def view_modules() -> dict[str, ModuleType]:
    """Every page's view module by its URL name (imports them all: the decks and drills need the whole table)."""
    return {e.url: module for e in PAGES if (module := view_module(e.url)) is not None}


def parts_for(page: str, state: State, extra: tuple[str, ...] | list[str] = ()) -> frozenset[str]:
    """The figures() parts a view of ``page`` in ``state`` draws: ``main``, the tab its state opens (under the part
    name the view uses, TAB_PARTS), and ``extra``."""
    parts = {"main", *extra}
    module = view_module(page)
    if module is None:
        return frozenset(parts)
    for f in module.SPEC.fields:
        if f.widget == "tabs":
            tab = state[f.name]
            parts.add(tab)
            parts.add(TAB_PARTS.get(page, {}).get(tab, tab))
    return frozenset(parts)
