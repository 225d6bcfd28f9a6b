"""Tests of helpers.models.gemm.quantized_rate_flop_per_s (the GEMM lab's truth loop): limits,
an oracle that simulates the waves tile by tile, and the number the lab's page states."""

import math

import pytest

from helpers.models import gemm as gm


def _simulated_rate(m, n, bm, bn, rate, sms):
    """An independent oracle: the real FLOP over the time of whole waves of padded tiles, each
    tile taking its padded work at one SM's share of the full-wave rate."""
    tiles = [(i, j) for i in range(math.ceil(m / bm)) for j in range(math.ceil(n / bn))]
    per_sm = rate / sms
    tile_time = 2.0 * bm * bn / per_sm  # per unit of K: padded tiles do the same work
    n_waves = math.ceil(len(tiles) / sms)
    return 2.0 * m * n / (n_waves * tile_time)


@pytest.mark.parametrize("m, n, bm, bn, sms", [
    (8192, 8192, 128, 256, 132), (3072, 3072, 128, 256, 132), (1000, 3000, 128, 128, 108),
    (257, 129, 128, 128, 4), (64, 64, 128, 256, 132)])
def test_against_a_wave_by_wave_simulation(m, n, bm, bn, sms):
    got = gm.quantized_rate_flop_per_s(m, n, bm, bn, peak_flop_per_s=1e15, n_sms=sms)
    assert got == pytest.approx(_simulated_rate(m, n, bm, bn, 1e15, sms))


def test_limits():
    # full waves of whole tiles: the full-wave rate itself
    assert gm.quantized_rate_flop_per_s(132 * 128, 256, 128, 256, peak_flop_per_s=7.0,
                                        n_sms=132) == pytest.approx(7.0)
    # one tile more than a wave nearly halves it (the source's example)
    one_more = gm.quantized_rate_flop_per_s(133 * 128, 128, 128, 128, peak_flop_per_s=1.0,
                                            n_sms=132)
    assert one_more == pytest.approx(133 / 264)
    # linear in the full-wave rate
    a = gm.quantized_rate_flop_per_s(5000, 5000, 128, 256, peak_flop_per_s=1.0, n_sms=132)
    b = gm.quantized_rate_flop_per_s(5000, 5000, 128, 256, peak_flop_per_s=3.0, n_sms=132)
    assert b == pytest.approx(3 * a)


def test_the_pages_number():
    # the H200's dense bf16 peak, 128 x 256 tiles at 8192: 2048 tiles in 16 waves of 132
    r = gm.quantized_rate_flop_per_s(8192, 8192, 128, 256, peak_flop_per_s=989.4e12, n_sms=132)
    assert r == pytest.approx(989.4e12 * 2048 / (16 * 132))


@pytest.mark.parametrize("kw, match", [
    (dict(peak_flop_per_s=0.0), "peak_flop_per_s"),
    (dict(peak_flop_per_s=math.inf), "peak_flop_per_s"),
    (dict(n_sms=0), "n_sms"),
    (dict(blocks_per_sm=0), "blocks_per_sm"),
])
def test_bad_input_names_the_argument(kw, match):
    args = dict(peak_flop_per_s=1.0, n_sms=132) | kw
    with pytest.raises(ValueError, match=match):
        gm.quantized_rate_flop_per_s(1024, 1024, 128, 128, **args)
