"""Tests of helpers.bench.simd: every route computes the right dot product and is timed; bad
kinds are refused."""

import pytest

from helpers.bench import simd


@pytest.mark.parametrize("kind", simd.KINDS)
def test_each_route_is_checked_and_timed(kind):
    r = simd.time_dot(kind, 64, budget_s=0.01)
    assert r.checked and r.median_s > 0


def test_operands_are_random_and_bad_input_is_refused():
    a, b = simd.make_operands(100)
    assert a.dtype.name == "float32" and (a != 0).all() and not (a == b).all()
    with pytest.raises(ValueError):
        simd.time_dot("fortran", 8)
    with pytest.raises(ValueError):
        simd.make_operands(0)


def test_numpy_reports_its_simd_features():
    feats = simd.numpy_simd_features()
    assert isinstance(feats, list)
