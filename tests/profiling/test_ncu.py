"""Tests of helpers.profiling.ncu: the command line, the CSV reader and the runner's errors.

The CSV fixture ``data/ncu_matmul_h200.csv`` is the verbatim output of ``ncu --clock-control
none --csv --metrics dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,
gpu__time_duration.sum --kernel-name regex:. --launch-skip 1 --launch-count 2 python t.py`` on an
H200 (Nsight Compute 2025.3.1, torch 2.11), where ``t.py`` multiplies a 2048 x 2048 bf16 matrix
by itself twice: two launches of one cuBLAS (nvjet) kernel, with the profiler's own lines first.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from helpers.profiling import ncu

DATA = Path(__file__).parent / "data"
HEADER = ('"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream",'
          '"Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit",'
          '"Metric Value"')


def _line(kid, kernel, metric, unit, value):
    return (f'"{kid}","512","python3.12","127.0.0.1","{kernel}","1","7","(384, 1, 1)",'
            f'"(2, 64, 1)","0","9.0","Command line profiler metrics","{metric}","{unit}",'
            f'"{value}"')


def test_recorded_h200_output():
    rows = ncu.parse_csv((DATA / "ncu_matmul_h200.csv").read_text())
    assert [r.id for r in rows] == [0, 1]
    assert all(r.kernel.startswith("nvjet_sm90") for r in rows)
    assert rows[0].grid_size == "(2, 64, 1)" and rows[0].block_size == "(384, 1, 1)"
    m = rows[0].metrics
    assert m["dram__bytes_read.sum"] == 8_410_368.0
    assert m["dram__bytes_write.sum"] == 0.0  # the 8 MiB product stays in the 50 MiB L2
    assert m["lts__t_bytes.sum"] == 107_396_512.0
    assert m["gpu__time_duration.sum"] == pytest.approx(25_536e-9)
    # oracle: the matrix read (2048^2 bf16 = 8 MiB) is what reaches DRAM, within a few pages
    assert 2048 * 2048 * 2 <= m["dram__bytes_read.sum"] < 1.01 * 2048 * 2048 * 2
    t = ncu.totals(rows)
    assert t["n_kernels"] == 2 and t["incomplete"] == []
    assert t["dram__bytes_read.sum"] == 8_410_368.0 + 8_413_184.0
    assert t["gpu__time_duration.sum"] == pytest.approx((25_536 + 25_472) * 1e-9)


@pytest.mark.parametrize("unit, value, want", [
    ("byte", "1,234", 1234.0), ("Kbyte", "1.5", 1500.0), ("Mbyte", "2", 2e6),
    ("Gbyte", "0.25", 2.5e8), ("ns", "25,536", 25.536e-6), ("usecond", "3.5", 3.5e-6),
    ("msecond", "1.25", 1.25e-3), ("second", "2", 2.0)])
def test_units_are_normalized_to_bytes_and_seconds(unit, value, want):
    text = "\n".join([HEADER, _line(0, "k", "m", unit, value)])
    assert ncu.parse_csv(text)[0].metrics["m"] == pytest.approx(want)


def test_rows_are_grouped_per_launch_and_n_a_is_none():
    text = "\n".join(["program output", "==PROF== Connected to process 1", HEADER,
                      _line(3, "b", "dram__bytes_read.sum", "byte", "10"),
                      _line(2, "a", "dram__bytes_read.sum", "byte", "5"),
                      _line(3, "b", "lts__t_bytes.sum", "byte", "n/a"),
                      "==PROF== Disconnected from process 1", ""])
    rows = ncu.parse_csv(text)
    assert [(r.id, r.kernel) for r in rows] == [(2, "a"), (3, "b")]
    assert rows[1].metrics == {"dram__bytes_read.sum": 10.0, "lts__t_bytes.sum": None}
    t = ncu.totals(rows, metrics=("dram__bytes_read.sum", "lts__t_bytes.sum"))
    assert t["dram__bytes_read.sum"] == 15.0
    assert t["lts__t_bytes.sum"] is None and t["incomplete"] == ["lts__t_bytes.sum"]
    assert ncu.totals([])["n_kernels"] == 0


@pytest.mark.parametrize("text, match", [
    ("==PROF== No kernels were profiled.\n", "no ncu CSV header"),
    ('"ID","Kernel Name","Metric Name","Metric Value"\n"0","k","m","1"\n', "lacks columns"),
    (HEADER + '\n"0","k","m"\n', "fields"),
    (HEADER + "\n" + _line(0, "k", "m", "byte", "lots"), "not a number"),
    (HEADER + "\n" + _line(0, "k", "m", "furlong", "1"), "unknown metric unit"),
    (HEADER + "\n" + _line("x", "k", "m", "byte", "1"), "not an integer"),
])
def test_malformed_output_raises_a_clear_error(text, match):
    with pytest.raises(ValueError, match=match):
        ncu.parse_csv(text)
    with pytest.raises(ValueError, match="str"):
        ncu.parse_csv(b"bytes")


def test_command_line():
    cmd = ncu.ncu_command(["python", "-m", "x"], kernel_regex="attn|sdpa", launch_skip=2,
                          launch_count=3)
    assert cmd == ["ncu", "--clock-control", "none", "--csv", "--metrics",
                   ",".join(ncu.METRICS), "--kernel-name", "regex:attn|sdpa", "--launch-skip",
                   "2", "--launch-count", "3", "python", "-m", "x"]
    assert ncu.ncu_command(["p"], nvtx_range="r")[-4:] == ["--nvtx", "--nvtx-include", "r/", "p"]
    for bad in (dict(launch_skip=-1), dict(launch_count=0), dict(metrics="dram")):
        with pytest.raises(ValueError):
            ncu.ncu_command(["p"], **bad)
    with pytest.raises(ValueError, match="target"):
        ncu.ncu_command("python x.py")


def test_missing_ncu_is_a_clear_error():
    with pytest.raises(ncu.NcuNotFound, match="not found on PATH"):
        ncu.run_ncu(["python", "-c", "pass"], ncu="ncu-that-does-not-exist-here")


def test_a_failing_ncu_is_reported(tmp_path):
    fake = tmp_path / "fake-ncu"
    fake.write_text("#!/bin/sh\necho '==ERROR== ERR_NVGPUCTRPERM - no permission' >&2\nexit 1\n")
    fake.chmod(0o755)
    with pytest.raises(ncu.NcuError, match="ERR_NVGPUCTRPERM"):
        ncu.run_ncu(["python", "-c", "pass"], ncu=str(fake))
    ok = tmp_path / "ok-ncu"  # a stand-in that prints the recorded output
    ok.write_text(f"#!/bin/sh\ncat {DATA / 'ncu_matmul_h200.csv'}\n")
    ok.chmod(0o755)
    rows = ncu.run_ncu(["python", "-c", "pass"], ncu=str(ok))
    assert len(rows) == 2
