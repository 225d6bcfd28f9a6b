"""Tests of helpers.bench.cpu_info: parsing /proc/cpuinfo text, and the real file where present."""

from helpers.bench import cpu_info

X86 = """processor\t: 0
model name\t: Intel(R) Xeon(R) Processor
cpu MHz\t\t: 2600.000
flags\t\t: fpu sse sse2 avx fma avx2 avx512f avx512bw
processor\t: 1
cpu MHz\t\t: 1200.000
"""
ARM = """processor\t: 0
Features\t: fp asimd evtstrm aes crc32
"""


def test_parses_the_first_core():
    assert cpu_info.nominal_clock_hz(X86) == 2.6e9
    assert {"avx2", "avx512f", "fma"} <= cpu_info.cpu_flags(X86)
    assert cpu_info.fp32_simd_lanes(cpu_info.cpu_flags(X86)) == 16
    assert cpu_info.fp32_simd_lanes(cpu_info.cpu_flags(ARM)) == 4
    assert cpu_info.nominal_clock_hz(ARM) is None


def test_missing_information_is_none_not_an_error(tmp_path):
    assert cpu_info.cpuinfo_text(tmp_path / "absent") == ""
    assert cpu_info.nominal_clock_hz("") is None and cpu_info.cpu_flags("") == set()
    assert cpu_info.fp32_simd_lanes({"sse2"}) is None
    assert cpu_info.fp32_simd_lanes({"avx2"}) is None  # AVX2 without FMA has no vector FMA


def test_this_machine_reads_consistently():
    text = cpu_info.cpuinfo_text()
    clock = cpu_info.nominal_clock_hz(text)
    assert clock is None or 1e8 < clock < 1e10
