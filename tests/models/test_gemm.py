"""The tiled-GEMM models: limits, oracles that enumerate tiles and simulate the loop, published numbers."""

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import specs
from helpers.models import gemm as gm
from helpers.models import roofline

dims = st.integers(1, 600)
blocks = st.sampled_from([16, 32, 64, 128, 256])


# --- published numbers ------------------------------------------------------------------------

def test_nvidia_linear_layer_intensities_are_reproduced():
    # NVIDIA GPU Performance Background User's Guide, "Understanding Performance": a linear
    # layer with 4096 outputs and 1024 inputs, fp16: 315 FLOPS/B at batch 512, 1 at batch 1.
    assert round(gm.problem_intensity_flop_per_byte(4096, 512, 1024, 2.0)) == 315
    assert round(gm.problem_intensity_flop_per_byte(4096, 1, 1024, 2.0)) == 1


def test_triton_tutorial_grouped_ordering_example_is_reproduced():
    # Triton "Matrix Multiplication" tutorial: 9 output blocks of a 9 x 9 grid (K 9 blocks
    # deep) load 90 blocks in row-major order and 54 when grouped by 3.
    one_wave = dict(m=9, n=9, k=9, block_m=1, block_n=1, bytes_per_element=1.0, blocks_per_wave=9)
    assert gm.wave_panel_bytes(**one_wave, group_m=1) / 9 == 90
    assert gm.wave_panel_bytes(**one_wave, group_m=3) / 9 == 54


def test_hopper_smem_limit_admits_3_but_not_5_stages_of_128x256x64_bf16():
    limits = specs.SM90
    assert gm.ctas_per_sm_by_smem(gm.smem_bytes(128, 256, 64, 2.0, 3), limits) == 1
    assert gm.ctas_per_sm_by_smem(gm.smem_bytes(128, 256, 64, 2.0, 5), limits) == 0


# --- oracles ----------------------------------------------------------------------------------

def _enumerate_tiles(m, n, bm, bn):
    return [(i, j) for i in range(0, m, bm) for j in range(0, n, bn)]


@given(dims, dims, blocks, blocks, st.integers(1, 200), st.integers(1, 4))
def test_tiles_and_waves_match_an_enumeration(m, n, bm, bn, sms, c):
    tiles = _enumerate_tiles(m, n, bm, bn)
    assert gm.tile_count(m, n, bm, bn) == len(tiles)
    # hand the tiles out to sms * c slots, wave after wave
    slots, wave_count, left = sms * c, 0, len(tiles)
    while left > 0:
        left -= slots
        wave_count += 1
    assert gm.waves(len(tiles), sms, c) == wave_count
    assert gm.wave_efficiency(len(tiles), sms, c) == pytest.approx(len(tiles) / (wave_count * slots))


@given(dims, dims, blocks, blocks)
def test_tile_quantization_matches_the_padded_area(m, n, bm, bn):
    padded = sum(bm * bn for _ in _enumerate_tiles(m, n, bm, bn))
    assert gm.tile_quantization_efficiency(m, n, bm, bn) == pytest.approx(m * n / padded)


def _simulated_loads(m, n, k, bm, bn, bk):
    """Elements loaded by the tiled loop, counting only in-bounds (unmasked) elements."""
    total = 0
    for i0 in range(0, m, bm):
        for j0 in range(0, n, bn):
            for k0 in range(0, k, bk):
                rows, cols, depth = min(bm, m - i0), min(bn, n - j0), min(bk, k - k0)
                total += rows * depth + depth * cols
    return total


@given(st.integers(1, 300), st.integers(1, 300), st.integers(1, 300), blocks, blocks,
       st.sampled_from([16, 32, 64]))
def test_load_bytes_match_a_simulated_tiled_loop(m, n, k, bm, bn, bk):
    assert gm.tiled_load_bytes(m, n, k, bm, bn, 2.0) == 2.0 * _simulated_loads(m, n, k, bm, bn, bk)


@given(blocks, blocks, st.sampled_from([16, 32, 64]))
def test_tile_intensity_is_flop_over_loads_of_one_tile(bm, bn, bk):
    flop = 2 * bm * bn * bk
    loads = (bm * bk + bk * bn) * 2.0
    assert gm.tile_intensity_flop_per_byte(bm, bn, 2.0) == pytest.approx(flop / loads)
    # a whole product of whole tiles: FLOP over the loop's loads is the tile intensity
    m, n, k = 4 * bm, 3 * bn, 5 * bk
    assert (roofline.matmul_flop(m, n, k) / gm.tiled_load_bytes(m, n, k, bm, bn, 2.0)
            == pytest.approx(gm.tile_intensity_flop_per_byte(bm, bn, 2.0)))


@given(st.integers(1, 12), st.integers(1, 12), st.integers(1, 12))
def test_grouped_order_visits_every_tile_once_in_bands(mt, nt, g):
    order = gm.grouped_tile_order(mt, nt, g)
    assert sorted(order) == [(i, j) for i in range(mt) for j in range(nt)]
    # the first min(g, mt) * nt programs stay in the first band of rows
    band = order[:min(g, mt) * nt]
    assert {i for i, _ in band} == set(range(min(g, mt)))


def test_row_major_is_group_one():
    assert gm.grouped_tile_order(3, 4, 1) == [(i, j) for i in range(3) for j in range(4)]


@given(st.integers(1, 1200), st.integers(1, 1200), st.integers(1, 4),
       st.sampled_from([64, 128, 256]), st.integers(1, 300))
def test_wave_panel_bytes_lie_between_the_minimum_and_no_reuse(m, n, k, b, per):
    q = gm.wave_panel_bytes(m, n, k, b, b, 2.0, 8, per)
    mt, nt = math.ceil(m / b), math.ceil(n / b)
    assert q >= (mt * b + nt * b) * k * 2.0 - 1e-9           # each panel at least once
    assert q <= mt * nt * 2 * b * k * 2.0 + 1e-9              # at most two panels per tile


# --- limits and invariants ---------------------------------------------------------------------

def test_tile_intensity_grows_with_the_tile():
    assert gm.tile_intensity_flop_per_byte(128, 128, 2.0) > gm.tile_intensity_flop_per_byte(64, 64, 2.0)


def test_whole_tiles_waste_nothing_and_a_full_wave_is_efficient():
    assert gm.tile_quantization_efficiency(1024, 1024, 128, 256) == 1.0
    assert gm.wave_efficiency(264, 132) == 1.0
    assert gm.wave_efficiency(1, 132) == pytest.approx(1 / 132)


def test_accumulator_and_smem_footprints():
    assert gm.accumulator_registers(128, 128, 4) == 128.0
    assert gm.accumulator_registers(128, 128, 4, accumulator_bytes=2.0) == 64.0
    assert gm.smem_bytes(128, 128, 64, 2.0, 4) == 4 * (128 * 64 * 2) * 2.0


@pytest.mark.parametrize("call", [
    lambda: gm.tile_count(0, 1, 16, 16),
    lambda: gm.tile_count(1, 1, 16, -16),
    lambda: gm.waves(0, 132),
    lambda: gm.waves(10, 0),
    lambda: gm.wave_efficiency(10, 132, 0),
    lambda: gm.tile_intensity_flop_per_byte(128, 128, 0.0),
    lambda: gm.smem_bytes(128, 128, 64, 2.0, 0),
    lambda: gm.accumulator_registers(128, 128, True),
    lambda: gm.grouped_tile_order(2, 2, 0),
    lambda: gm.ctas_per_sm_by_smem(-1, specs.SM90),
    lambda: gm.wave_panel_bytes(8, 8, 8, 4, 4, 2.0, 1, 0),
    lambda: gm.problem_intensity_flop_per_byte(1, 1, 0, 2.0),
    lambda: gm.tiled_load_bytes(1, 1, 1, 16, 16, float("nan")),
])
def test_bad_arguments_raise_value_error(call):
    with pytest.raises(ValueError):
        call()
