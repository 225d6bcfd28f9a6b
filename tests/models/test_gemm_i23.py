"""Issue 23: fractional waves (tiles / slots) beside whole waves."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import specs
from helpers.models import gemm as gm


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 100_000), st.integers(1, 200), st.integers(1, 4))
def test_whole_waves_are_the_ceiling_and_efficiency_the_ratio(t, s, c):
    f = gm.fractional_waves(t, s, c)
    assert math.ceil(f - 1e-12) == gm.waves(t, s, c)
    assert f / gm.waves(t, s, c) == pytest.approx(gm.wave_efficiency(t, s, c), rel=1e-12)


def test_oracle_balanced_schedule():
    # hand T unit tiles to S*c slots one at a time, always to the least loaded slot, splitting
    # the work of the last round evenly (Stream-K style): the finish time in tile-times
    t, s = 1000, 132
    loads = [0.0] * s
    for _ in range(t):
        i = loads.index(min(loads))
        loads[i] += 1
    whole = max(loads)
    balanced = sum(loads) / s
    assert whole == gm.waves(t, s)
    assert balanced == pytest.approx(gm.fractional_waves(t, s))


def test_a100_wave_of_256x128_tiles():
    # An A100 (108 SMs) running 256x128 tiles one per SM has a wave of 108 tiles; a 1792 x
    # 1792 output is 7 x 14 = 98 tiles, under one wave (the example as H. Benoit's notes on
    # "What Shapes Do Matrix Multiplications Like?" print it; NVIDIA's guide, section 3.2, was
    # not read for a printed fractional count, so this is a worked example, not a source's
    # number for the fractional form)
    a100 = specs.A100_SXM_80GB.sm_count
    tiles = gm.tile_count(1792, 1792, 256, 128)
    assert tiles == 98
    assert gm.fractional_waves(tiles, a100) == pytest.approx(98 / 108)
    assert gm.waves(tiles, a100) == 1
    assert gm.fractional_waves(108, a100) == 1.0


def test_bad_input():
    with pytest.raises(ValueError, match="n_sms"):
        gm.fractional_waves(10, 0)
    with pytest.raises(ValueError, match="n_tiles"):
        gm.fractional_waves(-1, 8)
