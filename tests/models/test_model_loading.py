"""Tests of helpers.models.model_loading: limits, chunk-level simulations as oracles, errors.

No published load time is reproduced: published cold starts depend on drives, networks and
loaders whose rates the sources do not all state, so none could be checked end to end (see
the page's "Check it"). The page checks the model against its own measured parts instead."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import model_loading as ml

sizes = st.floats(min_value=0.0, max_value=1e13, allow_nan=False)
rates = st.floats(min_value=1e6, max_value=1e12, allow_nan=False)
fracs = st.floats(min_value=0.0, max_value=1.0, allow_nan=False)


# --- limits and invariants ---------------------------------------------------------------

@given(sizes, rates, rates)
def test_read_time_limits_are_cold_and_warm(n, bs, bc):
    assert ml.read_time_s(n, storage_bytes_per_s=bs, cache_bytes_per_s=bc,
                          cached_fraction=0.0) == pytest.approx(n / bs)
    assert ml.read_time_s(n, storage_bytes_per_s=bs, cache_bytes_per_s=bc,
                          cached_fraction=1.0) == pytest.approx(n / bc)


@given(sizes, rates, rates, fracs, fracs)
def test_more_cache_helps_when_the_cache_is_faster(n, r1, r2, h1, h2):
    bs, bc = sorted((r1, r2))  # cache at least as fast as storage
    lo, hi = sorted((h1, h2))
    t_lo = ml.read_time_s(n, storage_bytes_per_s=bs, cache_bytes_per_s=bc, cached_fraction=lo)
    t_hi = ml.read_time_s(n, storage_bytes_per_s=bs, cache_bytes_per_s=bc, cached_fraction=hi)
    assert t_hi <= t_lo * (1 + 1e-12) + 1e-300


@given(sizes, rates, rates, st.floats(min_value=0.0, max_value=100.0))
def test_pipelining_never_loses_and_gains_at_most_half(n, br, bd, t0):
    serial = ml.cold_start_s(n, read_bytes_per_s=br, deserialize_bytes_per_s=bd, fixed_s=t0)
    piped = ml.cold_start_s(n, read_bytes_per_s=br, deserialize_bytes_per_s=bd, fixed_s=t0,
                            overlap=True)
    assert piped <= serial * (1 + 1e-12)
    assert piped - t0 >= 0.5 * (serial - t0) * (1 - 1e-12)   # max(a, b) >= (a + b) / 2


@given(sizes, rates)
def test_a_mapped_format_costs_only_the_read(n, br):
    assert ml.cold_start_s(n, read_bytes_per_s=br) == pytest.approx(n / br)
    assert ml.cold_start_s(n, read_bytes_per_s=br, overlap=True) == pytest.approx(n / br)


# --- oracles: chunk-by-chunk simulations ------------------------------------------------------

@pytest.mark.parametrize("h", [0.0, 0.25, 0.5, 0.9, 1.0])
def test_read_time_matches_a_page_by_page_sum(h):
    rng = np.random.default_rng(1)
    n_pages, page = 20_000, 4096.0
    cached = rng.random(n_pages) < h            # which pages are in the cache
    bs, bc = 2e9, 9e9
    total = float(np.sum(np.where(cached, page / bc, page / bs)))
    h_actual = cached.mean()
    model = ml.read_time_s(n_pages * page, storage_bytes_per_s=bs, cache_bytes_per_s=bc,
                           cached_fraction=h_actual)
    assert model == pytest.approx(total, rel=1e-9)


def _pipeline(n_chunks, t_read, t_deser):
    """Two-stage pipeline: chunk i's deserialisation starts when it is read and the previous
    chunk is deserialised."""
    read_done = deser_done = 0.0
    for _ in range(n_chunks):
        read_done += t_read
        deser_done = max(read_done, deser_done) + t_deser
    return deser_done


@pytest.mark.parametrize("br, bd", [(4e9, 2e9), (2e9, 4e9), (3e9, 3e9)])
def test_pipelined_form_matches_a_simulated_pipeline(br, bd):
    n, chunks = 16e9, 4096
    sim = _pipeline(chunks, n / chunks / br, n / chunks / bd)
    model = ml.cold_start_s(n, read_bytes_per_s=br, deserialize_bytes_per_s=bd, overlap=True)
    one_chunk = n / chunks / min(br, bd)
    assert model <= sim <= model + one_chunk * (1 + 1e-9)   # fill and drain: one chunk
    serial = _pipeline(1, n / br, n / bd)                   # one chunk: no overlap at all
    assert serial == pytest.approx(ml.cold_start_s(n, read_bytes_per_s=br,
                                                   deserialize_bytes_per_s=bd))


def test_docstring_example_numbers():
    assert ml.cold_start_s(16e9, read_bytes_per_s=4e9, deserialize_bytes_per_s=2e9,
                           fixed_s=1.0) == pytest.approx(13.0)
    assert ml.cold_start_s(16e9, read_bytes_per_s=4e9, deserialize_bytes_per_s=2e9,
                           fixed_s=1.0, overlap=True) == pytest.approx(9.0)


# --- errors ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kw, name", [
    (dict(n_bytes=-1.0), "n_bytes"), (dict(storage_bytes_per_s=0.0), "storage_bytes_per_s"),
    (dict(cache_bytes_per_s=math.nan), "cache_bytes_per_s"),
    (dict(cached_fraction=1.5), "cached_fraction"),
])
def test_read_time_rejects_bad_input(kw, name):
    args = dict(n_bytes=1e9, storage_bytes_per_s=1e9, cache_bytes_per_s=1e10) | kw
    n = args.pop("n_bytes")
    with pytest.raises(ValueError, match=name):
        ml.read_time_s(n, **args)


@pytest.mark.parametrize("kw, name", [
    (dict(read_bytes_per_s=0.0), "read_bytes_per_s"),
    (dict(deserialize_bytes_per_s=-1.0), "deserialize_bytes_per_s"),
    (dict(fixed_s=-0.1), "fixed_s"),
])
def test_cold_start_rejects_bad_input(kw, name):
    args = dict(read_bytes_per_s=1e9) | kw
    with pytest.raises(ValueError, match=name):
        ml.cold_start_s(1e9, **args)
