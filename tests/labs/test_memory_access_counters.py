"""The memory-access lab's hardware-counter mode without a GPU: its reads, the JSON assembled
from a stand-in for ncu (one group failing), and the page's per-float view of the counters."""

from __future__ import annotations

import json

import pytest

from helpers.labs import memory_access as lab
from helpers.labs import memory_access_worker as worker
from helpers.labs.analysis import memory_access as view
from helpers.profiling import ncu


def test_the_reads_keep_n_or_keep_the_span():
    cases = worker.counter_cases()
    n = lab.LAB.size("strided_elements")
    span = n * lab.SPAN_STRIDE * lab.ELEMENT_BYTES
    same_n = [c for c in cases if c["layout"] == "same_n"]
    same_span = [c for c in cases if c["layout"] == "same_span"]
    assert [c["stride"] for c in same_n] == list(worker.COUNTERS_LAB.size("strides"))
    assert all(c["n_elements"] == n for c in same_n)
    assert all(c["n_elements"] * c["stride"] * lab.ELEMENT_BYTES == span for c in same_span)
    # every read fits the buffer the child allocates (n x the largest stride)
    assert all((c["n_elements"] - 1) * c["stride"] < n * max(lab.STRIDES) for c in cases)
    sweep = [c for c in cases if c["layout"] == "span_sweep"]
    assert {c["stride"] for c in sweep} == {16, 64}
    assert max(c["n_elements"] * c["stride"] for c in sweep) == n * max(lab.STRIDES)


def _fake(fail_group=None):
    calls = []

    def runner(target, *, metrics, nvtx_range, kernel_regex, timeout_s, env):
        calls.append((target, tuple(metrics), nvtx_range, kernel_regex))
        if fail_group is not None and tuple(metrics) == worker.COUNTER_GROUPS[fail_group]:
            raise ncu.NcuError("ncu exited with 1: unknown metric")
        # each counted read moves 64 bytes per float and takes 1 ns per float
        return [ncu.KernelRow(i, "strided_sum_kernel", metrics={
                    m: (64.0 * c["n_elements"] if m == "dram__bytes_read.sum" else
                        1e-9 * c["n_elements"] if m == "gpu__time_duration.sum" else 1.0)
                    for m in metrics}) for i, c in enumerate(worker.counter_cases())]
    return runner, calls


def test_a_failing_group_is_recorded_and_the_other_kept(tmp_path):
    runner, calls = _fake(fail_group="requests")
    path = worker.measure_counters(tmp_path, runner=runner)
    assert path.name == "memory_access_counters.json"
    data = json.loads(path.read_text())
    assert data["lab"] == "memory_access_counters"
    assert set(data["measurements"]["errors"]) == {"requests"}
    assert len(calls) == len(worker.COUNTER_GROUPS)
    target, _, nvtx, regex = calls[0]
    assert target[-2:] == ["helpers.labs.memory_access_worker", "--counted-reads"]
    assert nvtx == worker.NVTX_RANGE and regex == "strided_sum"
    case = data["measurements"]["cases"][0]
    assert set(case["metrics"]) == set(worker.COUNTER_GROUPS["bytes"])
    rows = view.counter_rows(data)
    assert len(rows) == len(worker.counter_cases())
    assert all(r["dram_bytes_per_float"] == pytest.approx(64.0) for r in rows)
    assert all(r["time_per_float_s"] == pytest.approx(1e-9) for r in rows)
    assert [r["layout"] for r in view.counter_rows(data, "same_span")] == (
        ["same_span"] * sum(c["layout"] == "same_span" for c in worker.counter_cases()))
    assert "DRAM B/float" in view.format_counter_rows(rows)


def test_a_short_kernel_list_is_an_error_not_a_shifted_table(tmp_path):
    def runner(target, *, metrics, **kw):
        return [ncu.KernelRow(0, "strided_sum_kernel", metrics={m: 1.0 for m in metrics})]
    data = json.loads(worker.measure_counters(tmp_path, runner=runner).read_text())
    assert set(data["measurements"]["errors"]) == set(worker.COUNTER_GROUPS)
    assert all(c["metrics"] == {} for c in data["measurements"]["cases"])


def test_counters_need_a_gpu_here(tmp_path):
    from helpers.bench import has_cuda

    if has_cuda():
        pytest.skip("a GPU is usable: the command would measure")
    with pytest.raises(SystemExit, match="needs a CUDA GPU"):
        lab.main(["--counters", "--out", str(tmp_path)])


def test_sparse_strides_take_the_same_span_sweeps_rate():
    n, strides = 1 << 20, (1, 2, 16, 32, 64)

    def rows(count, t_per_float):
        return [{"stride": s, "n_elements": count(s),
                 "bench": {"median_s": count(s) * t_per_float[s]}} for s in strides]
    t = {1: 1e-12, 2: 2e-12, 16: 16e-12, 32: 20e-12, 64: 25e-12}
    result = {"tier": "cpu", "settings": {},
              "measurements": {"strided_read": {"n_elements": n, "element_bytes": 4,
                                                "rows": rows(lambda s: n, t)},
                               "strided_read_same_span": {"element_bytes": 4, "rows": rows(
                                   lambda s: n * 16 // s, t)}}}
    rates = view.sparse_rates(result)
    assert set(rates) == {32, 64}  # stride 16's accesses abut, and its n is the sweep's own
    assert rates[64] == pytest.approx(64 / 25e-12)
    pred = view.strided_time_predictions(result)
    assert pred[32] == pytest.approx(n * 20e-12) and pred[64] == pytest.approx(n * 25e-12)
    assert pred[16] == pytest.approx(n * 64 / (4 / 1e-12))  # the stride-1 stream's rate
    del result["measurements"]["strided_read_same_span"]
    assert view.sparse_rates(result) == {}
    assert view.strided_time_predictions(result)[64] == pytest.approx(n * 64 / (4 / 1e-12))
