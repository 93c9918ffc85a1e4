"""The accelerators the systems pages size things against: memory, dense and sparse peak FLOP/s, HBM bandwidth.

Units follow seed 002's A10 convention: memory in binary units (GiB = 2^30 bytes, binary as nvidia-smi's MiB are),
FLOP/s and bandwidth in decimal (TB/s = 1e12 bytes/s, as the spec sheets write them). The "80 GB" of an H100 is
treated as 80 GiB (002 A10-08: "4 x H100 (320 GiB total)"; A10-10: "512 x 80 GiB"); reading it as 80e9 bytes is
the GB-vs-GiB trap, which loses 1 - 1e9 / 2^30 = 6.9%.
"""

from __future__ import annotations

from dataclasses import dataclass

GIB = 2**30
GB = 10**9
GB_VS_GIB_LOSS = 1.0 - GB / GIB  # 0.0687: what reading "80 GB" as 80e9 bytes instead of 80 GiB loses


@dataclass(frozen=True)
class Gpu:
    """One accelerator. ``memory_bytes`` is its HBM; ``peak_flops`` dense bf16 FLOP/s; ``bandwidth`` bytes/s."""

    name: str
    memory_label: float  # the number on the box ("80 GB")
    peak_flops: float  # dense bf16 tensor-core FLOP/s
    sparse_flops: float  # the 2:4-sparse figure on the same sheet (a trap for dense work)
    bandwidth: float  # HBM bytes/s

    @property
    def memory_bytes(self) -> float:
        """The label read as GiB (the seeds' convention)."""
        return self.memory_label * GIB

    @property
    def memory_bytes_if_gb(self) -> float:
        """The label misread as decimal GB: 6.9% less (the trap)."""
        return self.memory_label * GB

    @property
    def ridge_point(self) -> float:
        """FLOP per byte where the roofline bends: peak / bandwidth (H100: 989e12 / 3.35e12 = 295)."""
        return self.peak_flops / self.bandwidth


# NVIDIA data sheets (H100 SXM, H200 SXM, A100 SXM 40 GB and 80 GB): dense bf16 tensor FLOP/s, sparse, HBM bandwidth.
GPUS: dict[str, Gpu] = {
    "H100": Gpu("H100 SXM 80 GB", 80, 989e12, 1979e12, 3.35e12),
    "H200": Gpu("H200 SXM 141 GB", 141, 989e12, 1979e12, 4.8e12),
    "A100-80": Gpu("A100 SXM 80 GB", 80, 312e12, 624e12, 2.039e12),
    "A100-40": Gpu("A100 SXM 40 GB", 40, 312e12, 624e12, 1.555e12),
}


def get_gpu(gpu: str | Gpu) -> Gpu:
    """A :class:`Gpu` from its key in :data:`GPUS` (or the Gpu itself); ValueError for an unknown name."""
    if isinstance(gpu, Gpu):
        return gpu
    try:
        return GPUS[gpu]
    except KeyError:
        raise ValueError(f"unknown GPU {gpu!r}; expected one of {', '.join(GPUS)}") from None


__all__ = ["GB", "GB_VS_GIB_LOSS", "GIB", "GPUS", "Gpu", "get_gpu"]
