"""Tests of helpers.widgets.memory_optimization: explorers build, redraw, show the models."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.models import memory_access as ma  # noqa: E402
from helpers.widgets import memory_optimization as mw  # noqa: E402


def _controls(box):
    return list(box.children[1].children)


def test_coalescing_explorer_builds_redraws_and_starts_at_the_page_values():
    box = mw.coalescing_explorer(stride=8, bytes_per_element=4)
    stride, size, offset = _controls(box)
    assert (stride.value, size.value, offset.value) == (8, 4, 0)
    stride.value = 1
    size.value = 16
    offset.value = 3
    stride.value = 0


def test_bank_explorer_builds_and_redraws():
    box = mw.bank_explorer(stride_words=32)
    stride, broadcast = _controls(box)
    assert stride.value == 32 and broadcast.value is False
    stride.value = 33
    broadcast.value = True


@pytest.mark.parametrize("stride, b, offset", [(1, 4, 0), (1, 4, 1), (2, 4, 0), (8, 4, 0),
                                               (3, 16, 1)])
def test_request_title_reports_the_model(stride, b, offset):
    fig = mw.draw_request(stride, b, offset)
    n = ma.sectors_per_request(stride_elements=stride, bytes_per_element=b,
                               base_bytes=offset * b)
    title = fig.axes[0].get_title()
    plt.close(fig)
    assert f": {n} sectors" in title


@pytest.mark.parametrize("stride, degree", [(1, 1), (2, 2), (3, 1), (32, 32), (33, 1)])
def test_bank_figure_tallest_bar_is_the_conflict_degree(stride, degree):
    fig = mw.draw_banks(stride, False)
    heights = [p.get_height() for p in fig.axes[0].patches]
    title = fig.axes[0].get_title()
    plt.close(fig)
    assert max(heights) == degree and f"{degree}-way" in title
    assert sum(heights) == ma.WARP_SIZE  # every thread reads a distinct word


def test_broadcast_is_one_pass():
    fig = mw.draw_banks(32, True)
    heights = [p.get_height() for p in fig.axes[0].patches]
    plt.close(fig)
    assert max(heights) == 1 and sum(heights) == 1


def test_bad_element_size_is_rejected():
    with pytest.raises(ValueError, match="bytes_per_element must be one of"):
        mw.coalescing_explorer(bytes_per_element=3)
