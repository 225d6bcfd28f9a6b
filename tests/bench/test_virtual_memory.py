"""Tests of helpers.bench.virtual_memory: the kernel readers on fixture files and on this
machine, and the first-touch measurement's fault count."""

import pytest

from helpers.bench import virtual_memory as vmb


def test_thp_mode_and_rss_parse_fixture_files(tmp_path):
    (tmp_path / "enabled").write_text("always [madvise] never\n")
    (tmp_path / "status").write_text("Name:\tpython\nVmRSS:\t   2048 kB\n")
    assert vmb.thp_mode(tmp_path / "enabled") == "madvise"
    assert vmb.thp_mode(tmp_path / "absent") is None
    assert vmb.rss_bytes(tmp_path / "status") == 2048 * 1024
    assert vmb.rss_bytes(tmp_path / "absent") is None


def test_page_size_is_a_power_of_two():
    p = vmb.page_size_bytes()
    assert p >= 4096 and p & (p - 1) == 0


def test_first_touch_faults_about_once_per_page():
    ft = vmb.first_touch(128 * vmb.page_size_bytes(), budget_s=0.02)
    assert ft.pages == 128
    assert 32 <= ft.faults <= 128 + 8   # fault-around may map a few pages per fault
    assert ft.s_per_page > 0 and ft.s_per_fault > 0
    r, pages = vmb.retouch(128 * vmb.page_size_bytes(), budget_s=0.02)
    assert pages == 128 and r.median_s > 0
    with pytest.raises(ValueError):
        vmb.first_touch(10)
    with pytest.raises(ValueError):
        vmb.retouch(10)
