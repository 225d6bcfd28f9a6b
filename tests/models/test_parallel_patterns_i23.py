"""Issue 23: the down-sweep swaps of Blelloch's scan, counted beside its additions."""

import numpy as np
import pytest

from helpers.models import parallel_patterns as pp


def simulate_blelloch_counting_swaps(values):
    """Blelloch's exclusive scan (padded to a power of two), counting the down-sweep's
    swaps (a left child receiving its parent's value) and all additions."""
    n = len(values)
    size = 1 << max(0, (n - 1).bit_length())
    a = np.zeros(size, dtype=np.int64)
    a[:n] = values
    adds = swaps = 0
    d = 1
    while d < size:
        for i in range(2 * d - 1, size, 2 * d):
            a[i] += a[i - d]
            adds += 1
        d *= 2
    a[size - 1] = 0
    d = size // 2
    while d >= 1:
        for i in range(2 * d - 1, size, 2 * d):
            t = a[i - d]
            a[i - d] = a[i]
            swaps += 1
            a[i] += t
            adds += 1
        d //= 2
    return a[:n], adds, swaps


def test_published_counts():
    # GPU Gems 3, 39.2.2: "2 x (n - 1) adds and n - 1 swaps" (n a power of two)
    for n in (2, 8, 1024, 1 << 20):
        assert pp.blelloch_scan_work(n) == 2 * (n - 1)
        assert pp.blelloch_scan_swaps(n) == n - 1


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8, 13, 64, 100])
def test_oracle_simulation(n):
    rng = np.random.default_rng(n)
    x = rng.integers(-50, 50, n)
    scan, adds, swaps = simulate_blelloch_counting_swaps(x)
    assert scan.tolist() == np.concatenate([[0], np.cumsum(x)[:-1]]).tolist()
    assert swaps == pp.blelloch_scan_swaps(n)
    assert adds == pp.blelloch_scan_work(n)


def test_swaps_are_half_the_additions():
    for n in (1, 7, 9, 4096):
        assert 2 * pp.blelloch_scan_swaps(n) == pp.blelloch_scan_work(n)


def test_bad_input():
    for bad in (0, -3, 2.5):
        with pytest.raises(ValueError, match="n"):
            pp.blelloch_scan_swaps(bad)
