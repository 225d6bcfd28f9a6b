"""A still clock for the timing tests: no assertion may depend on the machine being idle.

:class:`StillClock` is a fake ``time`` module whose clock stands still except while work
sleeps on it. Patched into :mod:`helpers.bench.timing` (bench's host timer) and
:mod:`helpers.bench.toy_stream` (whose event stamps and sleep kernels then use it, from the
worker thread too), it makes every duration a test sees exactly the one the work asked for,
however busy the machine is, so the timing logic is asserted exactly instead of within an
upper bound that only an idle machine keeps.
"""

from __future__ import annotations

import threading

import pytest


class StillClock:
    """``perf_counter``, ``perf_counter_ns`` and ``sleep``, on a clock only ``sleep`` moves."""

    def __init__(self):
        self.now_ns = 0
        self.sleeps: list[float] = []  # every duration slept, in order
        self._lock = threading.Lock()

    def perf_counter_ns(self) -> int:
        return self.now_ns

    def perf_counter(self) -> float:
        return self.now_ns * 1e-9

    def sleep(self, seconds: float) -> None:
        with self._lock:
            self.sleeps.append(seconds)
            self.now_ns += round(seconds * 1e9)


@pytest.fixture
def still_clock(monkeypatch):
    from helpers.bench import timing, toy_stream

    clock = StillClock()
    monkeypatch.setattr(timing, "time", clock)
    monkeypatch.setattr(toy_stream, "time", clock)
    return clock

