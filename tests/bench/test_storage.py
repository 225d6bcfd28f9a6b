"""Tests of helpers.bench.storage: eviction verified by mincore, readers agree with the file,
checkpoints round-trip."""

import os
import sys

import numpy as np
import pytest

from helpers.bench import storage as stb

linux = pytest.mark.skipif(not sys.platform.startswith("linux"),
                           reason="posix_fadvise and mincore are Linux calls here")


def test_write_and_read_back(tmp_path):
    p = stb.write_test_file(tmp_path / "f.bin", 3 * stb.PAGE_BYTES + 100)
    data = bytes(stb.read_all(p))
    assert len(data) == os.path.getsize(p) and 0 not in data   # no zero bytes written
    buf = bytearray(len(data))
    assert stb.read_all(p, buf) is buf and bytes(buf) == data
    pages = np.frombuffer(data, dtype=np.uint8)[::stb.PAGE_BYTES]
    assert stb.mmap_touch(p) == int(pages.sum())
    with pytest.raises(ValueError):
        stb.write_test_file(tmp_path / "tiny", 10)


@linux
def test_evict_empties_the_cache_and_reading_fills_it(tmp_path):
    p = stb.write_test_file(tmp_path / "f.bin", 256 * stb.PAGE_BYTES)
    assert stb.evict(p)
    after = stb.resident_fraction(p)
    if after is None:
        pytest.skip("mincore unavailable")
    if after > 0.5:
        pytest.skip(f"this file system keeps pages after POSIX_FADV_DONTNEED ({after:.0%})")
    stb.read_all(p)
    assert stb.resident_fraction(p) == pytest.approx(1.0)


@linux
def test_cold_read_times_report_each_run(tmp_path):
    p = stb.write_test_file(tmp_path / "f.bin", 64 * stb.PAGE_BYTES)
    times, before = stb.cold_read_times_s(p, stb.read_all, repeats=2)
    assert len(times) == len(before) == 2 and all(t > 0 for t in times)


def test_checkpoint_round_trips_in_both_formats(tmp_path):
    ck = stb.write_checkpoint(tmp_path / "ck", 1 << 20, n_tensors=4)
    a = stb.load_checkpoint_pickle(ck["pickle"])
    b = stb.load_checkpoint_mmap(ck["npy"])
    assert set(a) == set(b) and len(a) == 4
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
        assert isinstance(b[k], np.memmap)
    assert stb.checksum(a) == pytest.approx(ck["checksum"])
    c = stb.deserialize_pickle(ck["pickle"].read_bytes())
    assert stb.checksum(c) == pytest.approx(ck["checksum"])
    assert ck["n_bytes"] == sum(x.nbytes for x in a.values())
