"""What this machine says about its PCI devices, and a host copy measured as a stand-in for DMA.

* :func:`pci_devices` reads ``/sys/bus/pci/devices/*``: class, vendor, NUMA node, and the PCIe
  link's speed and width where the kernel exposes them (``current_link_speed``,
  ``current_link_width``, ``max_link_speed``, ``max_link_width``; added to sysfs in Linux 4.13
  by ``drivers/pci/pci-sysfs.c``). Virtual devices of a VM (virtio) and devices on a
  conventional PCI bus have no link, so those fields are ``None``.
* :func:`parse_link_speed` turns the kernel's text ("16.0 GT/s PCIe") into transfers per second
  and a generation.
* :func:`copy_times` times ``numpy.copyto`` over a range of sizes through :func:`bench`; the
  page fits the latency-bandwidth model to it. :func:`bounce_copy` is the same copy staged
  through a small buffer, chunk by chunk, as a driver without GPUDirect does.

Introduced in {ref}`sec-pcie-and-interconnects`.

Used by: foundations/pcie-and-interconnects.md.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..models.interconnect import PCIE_GENERATIONS
from .timing import BenchResult, bench

__all__ = ["PciDevice", "CLASS_NAMES", "parse_link_speed", "pci_devices", "copy_times",
           "bounce_copy", "make_buffers"]

_ROOT = Path("/sys/bus/pci/devices")

#: PCI base class (first byte of the class code) -> name, from the PCI Code and ID
#: Assignment specification as reproduced in Linux ``include/linux/pci_ids.h``.
CLASS_NAMES = {0x00: "unclassified", 0x01: "storage", 0x02: "network", 0x03: "display (GPU)",
               0x04: "multimedia", 0x05: "memory", 0x06: "bridge", 0x07: "communication",
               0x08: "system peripheral", 0x09: "input", 0x0C: "serial bus",
               0x12: "processing accelerator", 0xFF: "unassigned"}


@dataclass(frozen=True)
class PciDevice:
    """One entry of ``/sys/bus/pci/devices``; link fields are ``None`` where not exposed."""

    address: str
    class_code: int
    vendor: int
    numa_node: int | None
    current_speed_per_s: float | None  # transfers/s per lane
    current_width: int | None
    max_speed_per_s: float | None
    max_width: int | None

    @property
    def class_name(self) -> str:
        return CLASS_NAMES.get(self.class_code >> 16, f"class 0x{self.class_code >> 16:02x}")

    @property
    def has_link(self) -> bool:
        return self.current_speed_per_s is not None and self.current_width is not None

    @property
    def generation(self) -> int | None:
        """PCIe generation of the current link speed, or ``None``."""
        return _generation(self.current_speed_per_s)


def _generation(speed_per_s: float | None) -> int | None:
    if speed_per_s is None:
        return None
    for g, (rate, _) in PCIE_GENERATIONS.items():
        if abs(rate - speed_per_s) <= 1e-3 * rate:
            return g
    return None


def parse_link_speed(text: str | None) -> float | None:
    """Transfers per second per lane from sysfs text such as ``"16.0 GT/s PCIe"``.

    Returns ``None`` for ``None``, ``"Unknown"``, ``"Unknown speed"`` or anything unparsable.

    >>> parse_link_speed("16.0 GT/s PCIe"), parse_link_speed("2.5 GT/s"), parse_link_speed("Unknown")
    (16000000000.0, 2500000000.0, None)
    """
    if not text:
        return None
    m = re.match(r"\s*([0-9.]+)\s*GT/s", text)
    return float(m.group(1)) * 1e9 if m else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None


def _int(text: str | None, base: int = 10) -> int | None:
    try:
        return int(text, base) if text is not None else None
    except ValueError:
        return None


def pci_devices(root: str | Path = _ROOT) -> list[PciDevice]:
    """Every PCI device under ``root`` (sorted by address); ``[]`` where there is no sysfs.

    A width of 0 (the kernel's "link down") is reported as ``None``. A NUMA node of -1 (no
    affinity recorded) is reported as ``None``.
    """
    root = Path(root)
    if not root.is_dir():
        return []
    out = []
    for d in sorted(root.iterdir()):
        width = _int(_read(d / "current_link_width"))
        max_width = _int(_read(d / "max_link_width"))
        node = _int(_read(d / "numa_node"))
        out.append(PciDevice(
            address=d.name,
            class_code=_int(_read(d / "class"), 16) or 0,
            vendor=_int(_read(d / "vendor"), 16) or 0,
            numa_node=None if node is None or node < 0 else node,
            current_speed_per_s=parse_link_speed(_read(d / "current_link_speed")),
            current_width=width or None,
            max_speed_per_s=parse_link_speed(_read(d / "max_link_speed")),
            max_width=max_width or None,
        ))
    return out


def make_buffers(n_bytes: float, *, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """A source of random float64 values (never all zeros) and an empty destination."""
    n = int(n_bytes) // 8
    if n < 1:
        raise ValueError(f"n_bytes must be at least 8, got {n_bytes!r}")
    src = np.random.default_rng(seed).random(n) + 0.5
    dst = np.empty_like(src)
    dst.fill(0.0)  # touch every page, so the timed copies do not count page faults
    return src, dst


def copy_times(sizes_bytes, *, budget_s: float = 0.05, seed: int = 0) -> list[BenchResult]:
    """Time ``np.copyto(dst, src)`` for each size (bytes), checked against the source first."""
    out = []
    for n_bytes in sizes_bytes:
        src, dst = make_buffers(n_bytes, seed=seed)

        def check(_, src=src, dst=dst):
            if not np.array_equal(dst, src):
                raise RuntimeError("copy: destination differs from source")

        out.append(bench(lambda src=src, dst=dst: np.copyto(dst, src), name=f"copy {n_bytes:.0f} B",
                         warmup_s=min(0.02, budget_s / 4), budget_s=budget_s, min_reps=5,
                         check=check, env=False))
    return out


def bounce_copy(src: np.ndarray, dst: np.ndarray, bounce: np.ndarray) -> None:
    """Copy ``src`` to ``dst`` through ``bounce`` one chunk at a time (two copies per byte).

    This is what a driver does when a device cannot reach the destination directly: each chunk
    lands in a staging buffer first. Here one thread does both hops, so they do not overlap.
    """
    c = bounce.size
    for i in range(0, src.size, c):
        k = min(c, src.size - i)
        np.copyto(bounce[:k], src[i:i + k])
        np.copyto(dst[i:i + k], bounce[:k])
