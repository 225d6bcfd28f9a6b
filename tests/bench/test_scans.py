"""The NumPy scans of helpers.bench.scans against np.cumsum (the oracle) and their errors."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.bench import scans


@settings(max_examples=50)
@given(st.lists(st.integers(-10**6, 10**6), min_size=1, max_size=3000))
def test_scans_equal_cumsum(values):
    x = np.array(values, dtype=np.int64)
    assert np.array_equal(scans.hillis_steele_scan(x), np.cumsum(x))
    assert np.array_equal(scans.blelloch_scan(x), np.concatenate([[0], np.cumsum(x)[:-1]]))


def test_inputs_are_not_modified_and_errors():
    x = np.arange(10)
    scans.hillis_steele_scan(x)
    scans.blelloch_scan(x)
    assert np.array_equal(x, np.arange(10))
    for bad in (np.zeros((2, 2)), np.array([])):
        with pytest.raises(ValueError, match="1-D"):
            scans.blelloch_scan(bad)
        with pytest.raises(ValueError, match="1-D"):
            scans.hillis_steele_scan(bad)
