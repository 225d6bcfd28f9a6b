"""Tests of helpers.bench.sched: hogs get a share of a CPU, sleeps overshoot, settings read."""

import os
import time

import numpy as np
import pytest

from helpers.bench import sched


def test_hogs_report_a_share_per_process():
    with sched.Hogs(2) as h:
        time.sleep(0.2)
    assert len(h.shares) == 2 and all(0 < s <= 1.05 for s in h.shares)
    with sched.Hogs(0) as h:
        pass
    assert h.shares == []


def test_oversubscribed_hogs_share_the_cores():
    cores = len(os.sched_getaffinity(0))
    n = 4 * cores
    with sched.Hogs(n) as h:
        time.sleep(0.3)
    # together they cannot get more CPU than exists (small slack for timing at the edges)
    assert sum(h.shares) <= cores * 1.1


def test_sleep_overshoot_is_never_negative():
    o = sched.sleep_overshoot(1e-3, 20)
    assert o.shape == (20,) and np.all(o >= 0)


@pytest.mark.parametrize("kw", [dict(duration_s=0), dict(n=0)])
def test_sleep_overshoot_rejects_bad_input(kw):
    with pytest.raises(ValueError):
        sched.sleep_overshoot(**kw)


def test_hogs_reject_negative():
    with pytest.raises(ValueError):
        sched.Hogs(-1)


def test_settings_from_a_fake_tree(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc" / "sched_rr_timeslice_ms").write_text("100\n")
    (tmp_path / "proc" / "other").write_text("x\n")
    (tmp_path / "dbg").mkdir()
    (tmp_path / "dbg" / "base_slice_ns").write_text("2800000\n")
    got = sched.scheduler_settings(tmp_path / "proc", tmp_path / "dbg")
    assert got == {"sched_rr_timeslice_ms": "100", "base_slice_ns": "2800000"}
    assert sched.scheduler_settings(tmp_path / "x", tmp_path / "y") == {}
