"""Explorer of the page "Containers, namespaces and cgroups" ({ref}`sec-containers-and-cgroups`).

* :func:`throttle_explorer`: move the threads, the quota and the work; see when the work
  finishes under the CFS quota (:func:`helpers.models.cgroups.throttled_wall_s`).

Used by: foundations/containers-and-cgroups.md.
"""

from __future__ import annotations

from .. import units
from ..figures import containers_and_cgroups as figs
from . import explorer, float_slider, int_slider, log_slider

__all__ = ["draw_throttle", "throttle_explorer"]


def draw_throttle(threads: int, quota_cpus: float, work_ms: float, *, cores: int,
                  period_s: float):
    """The explorer's figure: CPUs in use over time for these settings."""
    return figs.throttle_timeline_figure(cpu_work_s=work_ms * units.ms, threads=int(threads),
                                         cores=cores, quota_s=quota_cpus * period_s,
                                         period_s=period_s)


def throttle_explorer(*, threads: int = 128, quota_cpus: float = 4.0, work_ms: float = 800.0,
                      cores: int = 128, period_s: float = 0.1):
    """Sliders for the thread count, the quota (CPUs) and the CPU work (ms) of a request
    burst on a host of ``cores`` CPUs with the kernel's default period."""
    return explorer(
        lambda threads, quota_cpus, work_ms: draw_throttle(threads, quota_cpus, work_ms,
                                                          cores=cores, period_s=period_s),
        {"threads": int_slider("threads in the pool", threads, 1, cores),
         "quota_cpus": float_slider("quota (CPUs)", quota_cpus, 0.5, 32.0, 0.5, fmt=".1f"),
         "work_ms": log_slider("CPU work (ms)", work_ms, 10.0, 10000.0)},
        title="CFS quota: when does a burst of CPU work finish?")
