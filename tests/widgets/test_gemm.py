"""Tests of helpers.widgets.gemm: the explorer builds, redraws, and shows the models' numbers."""

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import pytest  # noqa: E402

from helpers.models import gemm as gm  # noqa: E402
from helpers.widgets import gemm as gw  # noqa: E402


def test_explorer_builds_redraws_and_starts_at_the_page_values():
    box = gw.tiling_explorer()
    m, n, k, tile, stages = list(box.children[1].children)
    assert (m.value, n.value, k.value, tile.value, stages.value) == (4096, 4096, 4096, "128x256x64", 3)
    m.value = 4224
    tile.value = "64x64x32"
    stages.value = 6


def test_title_carries_the_wave_model():
    fig = gw.draw_tiling(4224, 4096, 4096, "128x256x64", 5)
    title = fig.axes[0].get_title()
    tiles = gm.tile_count(4224, 4096, 128, 256)
    assert f"{tiles} tiles, {gm.waves(tiles, 132)} waves" in title
    assert "does NOT fit" in title  # five stages of 128x256x64 bf16 exceed 227 KiB
    plt.close(fig)


def test_unknown_tile_is_refused():
    with pytest.raises(ValueError):
        gw.tiling_explorer(tile="100x100x100")
