"""PyTorch with its CPU kernels pinned, so that the instructions a CPU offers do not change a seeded network: MKL's
conditional numerical reproducibility (`MKL_CBWR=COMPATIBLE`) for the matrix products and ATen's unvectorized kernels
(`ATEN_CPU_CAPABILITY=default`) for the rest. A chaotic trainer can still end elsewhere on another machine (a
last-bit difference outside these kernels); the shield-paper page says how far.

Both are read when torch first computes, so this module sets them before it imports torch; training takes about 1.9× as
long. Import torch from here, not directly, wherever a trained network must repeat on another machine.
"""

from __future__ import annotations

import os

PINNED = {"MKL_CBWR": "COMPATIBLE", "ATEN_CPU_CAPABILITY": "default"}
"""The settings, as the environment variables MKL and ATen read."""

os.environ.update(PINNED)

import torch  # noqa: E402  (after the settings, which torch reads as it first computes)
from torch import nn  # noqa: E402
from torch.nn import functional  # noqa: E402

__all__ = ["functional", "kernels", "nn", "portable", "torch"]


def portable() -> bool:
    """Whether torch runs the pinned kernels (false when it computed before this module was imported)."""
    return torch.backends.cpu.get_cpu_capability() == "DEFAULT" and os.environ.get("MKL_CBWR") == PINNED["MKL_CBWR"]


def kernels() -> str:
    """The kernels in use, for a run's record: `portable`, or the CPU capability torch chose for this machine."""
    return "portable" if portable() else torch.backends.cpu.get_cpu_capability()
