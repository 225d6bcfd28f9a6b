"""Tests of helpers.bench.linux, run for real on this (Linux) machine."""

from __future__ import annotations

import sys

import pytest

from helpers.bench import linux as lb
from helpers.models import linux as lm

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")


def test_descriptor_exhaustion_matches_the_model_exactly():
    probe = lb.fd_exhaustion(64)
    assert probe["error"] == "EMFILE"
    assert probe["opened"] == lm.connection_capacity(probe["soft"], probe["at_start"])
    assert probe["at_start"] >= lm.STD_STREAMS


def test_limits_and_open_descriptors():
    soft, hard = lb.nofile_limits()
    assert 0 < lb.open_fds() <= soft <= hard


def test_proc_cpu_time_agrees_with_the_processes_own_clock():
    d = lb.duty_cycle_utilization(1.0, duration_s=0.4)
    # /proc counts in ticks: agreement within a few ticks whatever the machine's load.
    assert abs(d["proc_cpu_s"] - d["self_cpu_s"]) <= 3 / lb.clk_tck() + 0.02
    assert 0.0 < d["utilization"] <= 1.05
    idle = lb.duty_cycle_utilization(0.0, duration_s=0.3)
    assert idle["utilization"] < 0.1


def test_sigterm_drains_and_sigkill_does_not():
    term = lb.shutdown("SIGTERM", request_s=0.1, after_s=0.25)
    kill = lb.shutdown("SIGKILL", request_s=0.1, after_s=0.25)
    assert term["drained"] and term["returncode"] == 0 and term["completed"] >= 1
    assert not kill["drained"] and kill["returncode"] == -9 and kill["completed"] is None


def test_settings_are_read():
    s = lb.settings()
    assert s["clock ticks per second"] == lb.clk_tck()
    assert "/" in s["open files (soft / hard)"]


@pytest.mark.parametrize("call", [
    lambda: lb.fd_exhaustion(3),
    lambda: lb.duty_cycle_utilization(1.5),
    lambda: lb.duty_cycle_utilization(0.5, duration_s=0),
    lambda: lb.shutdown("SIGHUP"),
    lambda: lb.shutdown("SIGTERM", request_s=0),
])
def test_bad_input_raises(call):
    with pytest.raises(ValueError):
        call()
