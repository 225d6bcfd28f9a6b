"""Tests of helpers.figures.start_here: the transfer
plot draws the model. (Validity, determinism and theme: tests/figures/test_svg_common.py.)"""

import re
import xml.etree.ElementTree as ET

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from helpers.figures import start_here as sh  # noqa: E402
from helpers.models import latency_bandwidth as lb  # noqa: E402

MAKERS = [sh.opening_animation, sh.structure_diagram, sh.bytes_diagram, sh.threads_animation,
          sh.replication_animation]


def test_uids_are_distinct_and_animations_move():
    figs = [m() for m in MAKERS]
    assert len({ET.fromstring(f.svg).get("data-figure") for f in figs}) == len(figs)
    for f in figs:
        assert f.animated == ("<animate" in f.svg)
    assert not sh.structure_diagram().animated and sh.opening_animation().animated


def test_labels_follow_the_arguments():
    assert "32-byte line" in sh.opening_animation(line_bytes=32).svg
    assert "3 of 4 hold it" in sh.replication_animation(n_replicas=3).svg
    assert "2 of 2 hold it" in sh.replication_animation(n_replicas=1).svg
    assert "= 128 bytes" in sh.bytes_diagram(line_bytes=128).svg
    with pytest.raises(ValueError):
        sh.bytes_diagram(line_bytes=16)
    with pytest.raises(ValueError):
        sh.replication_animation(n_replicas=0)


def test_transfer_figure_draws_the_model():
    fig = sh.transfer_time_figure(1e-7, 1e10, measured=[(64.0, 1.1e-7)])
    line = fig.axes[0].lines[0]
    x, y = line.get_xdata(), line.get_ydata()
    np.testing.assert_allclose(y, lb.transfer_time_s(x, 1e-7, 1e10))
    assert fig.axes[0].lines[-1].get_xdata()[0] == 64.0


def _key_times_are_valid(svg: str) -> None:
    """SMIL keyTimes must start at 0, end at 1 and never decrease (browsers reject others)."""
    for kt in re.findall(r'keyTimes="([^"]+)"', svg):
        vals = [float(v) for v in kt.split(";")]
        assert vals[0] == 0 and vals[-1] == 1, kt
        assert all(b >= a for a, b in zip(vals, vals[1:])), kt


@pytest.mark.parametrize("make", MAKERS)
def test_animation_key_times_are_valid(make):
    _key_times_are_valid(make().svg)
