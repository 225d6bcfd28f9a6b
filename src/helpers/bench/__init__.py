"""Measurement: the one benchmark helper, environment capture, the size switch, a toy stream.

Device-facing code lives here, apart from the pure models in :mod:`helpers.models`.

* :func:`bench` times a callable the one way the book times anything, and :func:`interleaved`
  times variants of it in alternation for a comparison (:mod:`.timing`);
* :func:`environment` records what a measurement ran on (:mod:`.env`);
* :func:`pick`, :func:`size_tier`, :func:`has_cuda` choose problem sizes (:mod:`.sizes`);
* :func:`~helpers.bench.device.uniform`, :func:`~helpers.bench.device.copy_rate` and
  :func:`~helpers.bench.device.graph_bench` give the lab runners seeded inputs, the device's copy
  rate and CUDA-graph replay timing, one implementation each (:mod:`.device`);
* :class:`ToyStream` and :class:`ToyEvent` show asynchronous execution on a CPU
  (:mod:`.toy_stream`).

Used by many pages, among them: appendix/status.md, chapters/cuda-execution.md,
chapters/custom-operators.md, chapters/fusion-and-attention.md, chapters/gemm.md,
chapters/gpu-architecture.md.
"""

from .env import environment
from .sizes import has_cuda, pick, size_tier
from .timing import (BenchResult, CacheFlusher, bench, clock_read_cost_s, clock_steps_ns,
                     fresh_pages, interleaved, matches, sync, timer_resolution_s)
from .toy_stream import ToyEvent, ToyStream, sleep_kernel

__all__ = ["bench", "interleaved", "sync", "BenchResult", "CacheFlusher", "matches", "fresh_pages", "timer_resolution_s", "clock_steps_ns",
           "clock_read_cost_s", "environment", "pick", "size_tier", "has_cuda", "ToyStream",
           "ToyEvent", "sleep_kernel"]
