"""Explorer of the page "Matrix multiplication" ({ref}`sec-gemm`).

:func:`tiling_explorer`: pick M, N, K and a tile; see the tiles, the waves on the SMs, the
wave and tile efficiencies, the tile's intensity and its shared-memory footprint. The drawing
calls the tested models of :mod:`helpers.models.gemm`; the static book shows the initial
values, which are the ones the page discusses.

Used by: chapters/gemm.md.
"""

from __future__ import annotations

import ipywidgets as widgets

from .. import specs, units
from ..figures.style import COLORS, new_figure
from ..models import gemm as gm
from ..models import roofline
from . import explorer, int_slider

__all__ = ["tiling_explorer", "draw_tiling", "TILES"]

#: Tile shapes offered: (BM, BN, BK).
TILES = ((64, 64, 32), (128, 128, 32), (128, 128, 64), (128, 256, 64), (256, 128, 64))
_STYLE = {"description_width": "initial"}


def draw_tiling(m: int, n: int, k: int, tile: str, stages: int, gpu: specs.GPUSpec = specs.H200_SXM):
    """The explorer's figure: the rate the wave model allows against M, with the chosen M
    marked, and the numbers of the chosen problem in the title."""
    bm, bn, bk = (int(v) for v in tile.split("x"))
    peak = gpu.peak_flop_per_s("bf16")
    tiles = gm.tile_count(m, n, bm, bn)
    eff = gm.wave_efficiency(tiles, gpu.sm_count)
    teff = gm.tile_quantization_efficiency(m, n, bm, bn)
    smem = gm.smem_bytes(bm, bn, bk, 2.0, stages)
    fits = gm.ctas_per_sm_by_smem(smem, specs.SM90) > 0
    fig, ax = new_figure(width_in=7.5, height_in=3.4)
    ms = list(range(bm, 4 * max(m, bm) + 1, max(16, bm // 8)))
    rates = [peak * gm.wave_efficiency(gm.tile_count(x, n, bm, bn), gpu.sm_count)
             * gm.tile_quantization_efficiency(x, n, bm, bn) / units.T for x in ms]
    ax.plot(ms, rates, color=COLORS["memory"], lw=1.4, label="wave x tile model")
    ax.axhline(peak / units.T, color=COLORS["neutral"], ls="--", lw=1, label="bf16 dense peak")
    ax.plot([m], [peak * eff * teff / units.T], "o", color=COLORS["accent"], ms=8, label="your M")
    ax.set_xlabel(f"M (N = {n}, K = {k}, tiles {bm} x {bn})")
    ax.set_ylabel("model rate (TFLOP/s)")
    ax.set_ylim(0, peak / units.T * 1.1)
    ax.legend(loc="lower right", fontsize=8)
    ax.set_title(
        f"{tiles} tiles, {gm.waves(tiles, gpu.sm_count)} waves on {gpu.sm_count} SMs: wave eff. "
        f"{eff:.0%}, tile eff. {teff:.0%}\n"
        f"tile intensity {gm.tile_intensity_flop_per_byte(bm, bn, 2.0):.0f} FLOP/B (problem "
        f"{gm.problem_intensity_flop_per_byte(m, n, k, 2.0):.0f}), smem {smem / units.KiB:.0f} KiB "
        f"{'fits' if fits else 'does NOT fit'} ({roofline.matmul_flop(m, n, k) / units.G:.3g} GFLOP)",
        fontsize=9)
    return fig


def tiling_explorer(m: int = 4096, n: int = 4096, k: int = 4096, tile: str = "128x256x64",
                    stages: int = 3) -> widgets.VBox:
    """Move M, N, K, the tile and the pipeline stages (bf16 on an H200)."""
    names = [f"{a}x{b}x{c}" for a, b, c in TILES]
    if tile not in names:
        raise ValueError(f"tile must be one of {names}, got {tile!r}")
    controls = {
        "m": int_slider("M", m, 128, 16384, 128),
        "n": int_slider("N", n, 128, 16384, 128),
        "k": int_slider("K", k, 128, 16384, 128),
        "tile": widgets.Dropdown(options=names, value=tile, description="tile BM x BN x BK",
                                 style=_STYLE),
        "stages": int_slider("pipeline stages", stages, 1, 6),
    }
    return explorer(draw_tiling, controls, title="Tiling explorer (bf16, H200)")
