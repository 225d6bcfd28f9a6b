"""Tests of helpers.models.syscalls: limits, oracles (a counted loop of calls, a simulated
sampler), and the errors.

No published number is reproduced: the sources give the forms (the binomial error of sampled
times, the per-call cost of small reads), not numbers this model could recompute exactly."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import syscalls as sm

sizes = st.integers(min_value=0, max_value=10**10)
chunks = st.integers(min_value=1, max_value=10**8)


@given(sizes, chunks)
def test_call_count_is_the_ceiling(n, c):
    k = sm.n_calls(n, c)
    assert k * c >= n and (k - 1) * c < n or (n == 0 and k == 0)


@given(sizes, chunks, chunks)
def test_bigger_chunks_never_cost_more(n, c1, c2):
    lo, hi = sorted((c1, c2))
    kw = dict(per_call_s=1e-6, copy_bytes_per_s=5e9)
    assert sm.chunked_io_time_s(n, hi, **kw) <= sm.chunked_io_time_s(n, lo, **kw) * (1 + 1e-12)


def test_limits_of_the_chunked_model():
    # Huge chunks: one call plus the copy. Free calls: the copy alone.
    assert sm.chunked_io_time_s(1e6, 1e9, per_call_s=1e-6, copy_bytes_per_s=1e9) == \
        pytest.approx(1e-6 + 1e-3)
    assert sm.chunked_io_time_s(1e6, 1, per_call_s=0.0, copy_bytes_per_s=1e9) == \
        pytest.approx(1e-3)


def test_chunked_model_matches_a_counted_loop():
    # Oracle: walk the file chunk by chunk, charging each call its fixed cost and its bytes.
    n, c, t_sys, b = 1_000_003, 4096, 7e-7, 3e9
    t, left = 0.0, n
    while left > 0:
        k = min(c, left)
        t += t_sys + k / b
        left -= k
    assert sm.chunked_io_time_s(n, c, per_call_s=t_sys, copy_bytes_per_s=b) == pytest.approx(t)


@given(st.floats(0.0, 1.0), st.integers(1, 10**6))
def test_sampling_error_limits(f, n):
    s = sm.sampling_stderr(f, n)
    assert 0.0 <= s <= 0.5 / math.sqrt(n) + 1e-15
    if f in (0.0, 1.0):
        assert s == 0.0


@pytest.mark.parametrize("f, n", [(0.3, 200), (0.05, 1000), (0.5, 50)])
def test_sampling_error_matches_a_simulated_sampler(f, n):
    # Oracle: sample a timeline where the function runs a fraction f of the time.
    rng = np.random.default_rng(0)
    estimates = (rng.random((20_000, n)) < f).mean(axis=1)
    assert estimates.std() == pytest.approx(sm.sampling_stderr(f, n), rel=0.05)


@pytest.mark.parametrize("call, name", [
    (lambda: sm.n_calls(-1, 10), "n_bytes"), (lambda: sm.n_calls(10, 0), "chunk_bytes"),
    (lambda: sm.chunked_io_time_s(10, 4, per_call_s=-1, copy_bytes_per_s=1), "per_call_s"),
    (lambda: sm.chunked_io_time_s(10, 4, per_call_s=1, copy_bytes_per_s=0), "copy_bytes_per_s"),
    (lambda: sm.sampling_stderr(1.5, 10), "fraction_true"),
    (lambda: sm.sampling_stderr(0.5, 0), "n_samples"),
])
def test_errors(call, name):
    with pytest.raises(ValueError, match=name):
        call()
