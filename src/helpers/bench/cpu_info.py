"""What a CPU says about itself that a peak-rate estimate needs: its clock and SIMD width.

Read from ``/proc/cpuinfo`` (Linux). Both are best-effort: under a hypervisor the "cpu MHz"
line is often the nominal (base or TSC) clock and turbo clocks are invisible, and nothing
in ``/proc/cpuinfo`` says how many FMA units a core has. Pages therefore report the FMA issue
rate that a measurement *implies* rather than claim a peak. Introduced in
{ref}`sec-gpu-architecture`.

Used by: chapters/gpu-architecture.md, foundations/cpu-architecture.md,
foundations/simd-vectorization.md.
"""

from __future__ import annotations

import re
from pathlib import Path

__all__ = ["cpuinfo_text", "nominal_clock_hz", "cpu_flags", "fp32_simd_lanes"]

_CPUINFO = Path("/proc/cpuinfo")


def cpuinfo_text(path: str | Path = _CPUINFO) -> str:
    """The text of ``/proc/cpuinfo``, or ``""`` where there is none (macOS, Windows)."""
    try:
        return Path(path).read_text()
    except OSError:
        return ""


def nominal_clock_hz(text: str | None = None) -> float | None:
    """The first core's "cpu MHz" in Hz, or ``None`` if the line is absent.

    >>> nominal_clock_hz("processor : 0\\ncpu MHz\\t\\t: 2600.000\\n")
    2600000000.0
    """
    text = cpuinfo_text() if text is None else text
    m = re.search(r"^cpu MHz\s*:\s*([\d.]+)", text, re.M)
    return float(m.group(1)) * 1e6 if m else None


def cpu_flags(text: str | None = None) -> set[str]:
    """The first core's feature flags (x86 ``flags``, Arm ``Features``)."""
    text = cpuinfo_text() if text is None else text
    m = re.search(r"^(?:flags|Features)\s*:(.*)$", text, re.M)
    return set(m.group(1).split()) if m else set()


def fp32_simd_lanes(flags: set[str]) -> int | None:
    """FP32 lanes of the widest vector FMA the flags advertise: 16 for AVX-512, 8 for AVX2
    with FMA, 4 for Arm NEON (``asimd``); ``None`` if none is advertised.

    >>> fp32_simd_lanes({"avx2", "fma", "avx512f"}), fp32_simd_lanes({"avx2", "fma"})
    (16, 8)
    """
    if "avx512f" in flags:
        return 16
    if "avx2" in flags and "fma" in flags:
        return 8
    if "asimd" in flags:
        return 4
    return None
