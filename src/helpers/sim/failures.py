r"""A seeded Monte Carlo of a checkpointed job under Poisson failures.

The job is :math:`n` segments, each :math:`\tau` of computation followed by a checkpoint of
:math:`\delta`. Failures arrive as a Poisson process of mean gap :math:`M`, at any time,
including during a checkpoint or a restart. A failure throws away the segment in progress (a
checkpoint only counts once it is complete) and costs a restart :math:`R`, after which the
segment starts again from its beginning. The simulation follows the failures one by one; it
knows nothing of :func:`helpers.models.checkpointing.expected_wall_time_s`, which the tests
compare with its mean.

>>> run = simulate_job(work_s=100.0, interval_s=10.0, checkpoint_s=1.0, restart_s=2.0,
...                    mtbf_s=50.0, n_runs=2000, seed=1)
>>> 0.7 < run.mean_goodput < 0.85
True

Used by: chapters/fault-tolerance.md.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..models._checks import positive as _positive
from ..models._checks import positive_int as _positive_int

__all__ = ["JobRuns", "simulate_job"]


@dataclass(frozen=True)
class JobRuns:
    """Wall times and failure counts of ``n_runs`` simulated runs of one job."""

    work_s: float
    wall_s: np.ndarray
    failures: np.ndarray

    @property
    def mean_wall_s(self) -> float:
        return float(self.wall_s.mean())

    @property
    def mean_goodput(self) -> float:
        """Useful work over mean wall time (the ratio of means, as Daly's :math:`T_s/T_w`)."""
        return self.work_s / self.mean_wall_s

    def wall_ci_s(self, z: float = 3.0) -> tuple[float, float]:
        """A normal confidence interval of the mean wall time, ``z`` standard errors wide."""
        se = float(self.wall_s.std(ddof=1)) / math.sqrt(len(self.wall_s))
        return self.mean_wall_s - z * se, self.mean_wall_s + z * se


def _segment_time(rng: np.random.Generator, length_s: float, restart_s: float,
                  mtbf_s: float) -> tuple[float, int]:
    """Wall time to complete one segment of ``length_s`` and the failures met doing so."""
    t, failures = 0.0, 0
    while True:
        gap = rng.exponential(mtbf_s)
        if gap >= length_s:
            return t + length_s, failures
        t += gap
        failures += 1
        while True:  # the restart itself must run for restart_s without a failure
            gap = rng.exponential(mtbf_s)
            if gap >= restart_s:
                t += restart_s
                break
            t += gap
            failures += 1


def simulate_job(*, work_s: float, interval_s: float, checkpoint_s: float, restart_s: float,
                 mtbf_s: float, n_runs: int = 1000, seed: int = 0) -> JobRuns:
    """Simulate ``n_runs`` independent runs of a job of ``work_s`` of computation.

    ``work_s / interval_s`` is rounded up to whole segments (a last, shorter segment keeps
    the total work exact). Failures are exponential with mean ``mtbf_s`` (memoryless, so a
    fresh draw after each event is exact).
    """
    ts = _positive("work_s", work_s)
    tau = _positive("interval_s", interval_s)
    d = _positive("checkpoint_s", checkpoint_s, allow_zero=True)
    r = _positive("restart_s", restart_s, allow_zero=True)
    m = _positive("mtbf_s", mtbf_s)
    n = _positive_int("n_runs", n_runs)
    n_full = int(ts // tau)
    rest = ts - n_full * tau
    segments = [tau + d] * n_full + ([rest + d] if rest > 1e-12 * tau else [])
    rng = np.random.default_rng(seed)
    wall = np.empty(n)
    fails = np.empty(n, dtype=np.int64)
    for i in range(n):
        total, k = 0.0, 0
        for length in segments:
            t, f = _segment_time(rng, length, r, m)
            total += t
            k += f
        wall[i], fails[i] = total, k
    return JobRuns(ts, wall, fails)
