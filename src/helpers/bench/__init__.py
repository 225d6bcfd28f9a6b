"""Measurement: the one benchmark helper, environment capture and the size switch.

Device-facing code lives here, apart from the pure models in :mod:`helpers.models`.
"""

from .env import environment
from .sizes import has_cuda, pick, size_tier
from .timing import BenchResult, CacheFlusher, bench, timer_resolution_s

__all__ = ["bench", "BenchResult", "CacheFlusher", "timer_resolution_s", "environment",
           "pick", "size_tier", "has_cuda"]
