"""Tests of helpers.figures.profiling: valid, deterministic figures drawn from their inputs."""

from __future__ import annotations

import re
import xml.dom.minidom

import matplotlib.pyplot as plt
import pytest

from helpers import units
from helpers.figures import profiling as fp
from helpers.figures.svg import TEXT
from helpers.profiling import trace as tr



def _ids(svg):
    return re.findall(r'\bid="([^"]+)"', svg)


class TestSchedule:
    def test_sync_every_step_leaves_the_device_idle_while_the_host_catches_up(self):
        kw = dict(n_steps=3, kernels_per_step=2, launch_s=1.0, kernel_s=3.0, python_s=2.0)
        flawed = fp.schedule(sync_every_step=True, **kw)
        fixed = fp.schedule(sync_every_step=False, **kw)
        # flawed: each step = python 2 + first launch 1 + two kernels 6 (host waits) = 9
        assert flawed.end_s == pytest.approx(27.0)
        # fixed: the host runs ahead; the device runs 6 kernels back to back after the first
        # launch (t = 3): 3 + 18 = 21
        assert fixed.end_s == pytest.approx(21.0)
        assert sum(b - a for a, b in fp._gaps(fixed.device)) == 0
        assert sum(b - a for a, b in fp._gaps(flawed.device)) == pytest.approx(2 * 3.0)
        assert [lab for *_, lab in flawed.host].count("sync") == 3
        assert [lab for *_, lab in fixed.host].count("sync") == 1

    def test_launch_bound_limit_matches_the_model(self):
        s = fp.schedule(n_steps=1, kernels_per_step=10, launch_s=5.0, kernel_s=2.0,
                        python_s=0.0, sync_every_step=True)
        assert s.end_s == pytest.approx(tr.launch_bound_time_s(n_kernels=10, launch_s=5.0,
                                                               kernel_s=2.0) + 2.0)

    @pytest.mark.parametrize("kw", [dict(n_steps=0), dict(launch_s=0.0), dict(python_s=-1.0)])
    def test_bad_input(self, kw):
        base = dict(n_steps=2, kernels_per_step=2, launch_s=1.0, kernel_s=1.0, python_s=0.0,
                    sync_every_step=True)
        with pytest.raises(ValueError):
            fp.schedule(**{**base, **kw})


class TestOpeningAnimation:
    def test_valid_animated_deterministic_theme_aware(self):
        fig = fp.opening_animation()
        xml.dom.minidom.parseString(fig.svg)
        assert fig.animated and "<animate" in fig.svg and TEXT in fig.svg
        assert fig.svg == fp.opening_animation().svg
        ids = _ids(fig.svg)
        assert len(ids) == len(set(ids)) and all(i.startswith("prof-open-") for i in ids)
        for attr in re.findall(r'keyTimes="([^"]+)"', fig.svg):
            kt = [float(v) for v in attr.split(";")]
            assert kt[0] == 0 and kt[-1] == 1 and all(a <= b for a, b in zip(kt, kt[1:]))

    def test_labels_are_computed(self):
        kw = dict(n_steps=2, kernels_per_step=3, launch_s=2e-6, kernel_s=5e-6, python_s=4e-6)
        fig = fp.opening_animation(**kw)
        flawed = fp.schedule(sync_every_step=True, **kw)
        fixed = fp.schedule(sync_every_step=False, **kw)
        assert f"every step: {units.fmt_time(flawed.end_s)}" in fig.svg
        assert f"without it: {units.fmt_time(fixed.end_s)}" in fig.svg
        assert fixed.end_s < flawed.end_s


def test_structure_diagram():
    fig = fp.structure_diagram()
    xml.dom.minidom.parseString(fig.svg)
    assert not fig.animated
    for label in ("symptom", "timeline", "kernel", "source", "instruction", "Nsight Systems",
                  "Nsight Compute", "torch.profiler", "predicted effect"):
        assert f">{label}<" in fig.svg
    ids = _ids(fig.svg)
    assert len(ids) == len(set(ids)) and all(i.startswith("prof-struct-") for i in ids)


def _gpu_trace():
    ev = [{"ph": "X", "cat": "kernel", "name": "k", "ts": 10 + 100 * i, "dur": 20, "pid": 0,
           "tid": 7, "args": {"stream": 7}} for i in range(3)]
    ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaStreamSynchronize", "ts": 12,
               "dur": 20, "pid": 1, "tid": 1})
    ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::item", "ts": 11, "dur": 30, "pid": 1,
               "tid": 1})
    return tr.parse_trace(ev)


class TestTimeline:
    def test_rows_and_gaps(self):
        fig = fp.timeline_figure(_gpu_trace())
        ax = fig.axes[0]
        labels = [t.get_text() for t in ax.get_yticklabels()]
        assert labels == ["GPU 0\nstream 7", "host 1\nCUDA API", "host 1\nCPU ops"]
        # two gaps of 80 µs between three kernels, shaded
        assert len(ax.patches) == 2
        assert ax.get_xlabel() == "time (µs)"

    def test_zoom_and_errors(self):
        t = _gpu_trace()
        fig = fp.timeline_figure(t, start_s=100e-6, end_s=150e-6)
        assert fig.axes[0].get_xlim() == pytest.approx((0, 50))
        with pytest.raises(ValueError):
            fp.timeline_figure(t, start_s=2e-4, end_s=1e-4)
        with pytest.raises(ValueError):
            fp.timeline_figure(tr.parse_trace([]))


def test_timeline_starts_at_the_first_host_or_device_event():
    # an early non-work event (the profiler's own span) must not push the bars off the axis
    ev = [{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler", "ts": 0, "dur": 5000,
           "pid": 1, "tid": 1},
          {"ph": "X", "cat": "cpu_op", "name": "aten::add", "ts": 4000, "dur": 10, "pid": 1,
           "tid": 1}]
    t = tr.parse_trace(ev)
    assert t.start_s == pytest.approx(4000e-6)
    fig = fp.timeline_figure(t, end_s=t.start_s + 20e-6)
    ax = fig.axes[0]
    assert ax.get_xlim() == pytest.approx((0, 20))
    assert len(ax.collections) == 1 and ax.get_xlabel() == "time (µs)"
