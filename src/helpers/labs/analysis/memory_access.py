"""What the memory-access lab's page computes from a result (``labs/memory-access.md``).

The runner :mod:`helpers.labs.memory_access` measures and writes a result; this module reads
one (the shipped H200 reference or the reader's run) and gives the page its stride panel, its
ratios and rates, and the rows of its model-vs-H200 table. The models are
:mod:`helpers.models.memory_access`.
"""

from __future__ import annotations

from helpers import specs
from helpers.labs.memory_access import ELEMENT_BYTES
from helpers.models.memory_access import (predicted_efficiency, predicted_strided_bytes_per_s,
                                          predicted_transpose_time_s)

__all__ = ["strided_panel", "stride_ratios", "transpose_rates", "comparison_rows",
           "comparison_table"]


def strided_panel(result: dict, peak_bytes_per_s: float | None = None) -> dict:
    """Strides, measured useful bandwidth and the model's, from a result (for the stride plot).

    The model is :func:`predicted_strided_bytes_per_s` with ``peak_bytes_per_s`` (the
    datasheet's HBM bandwidth for the H200), or, when it is None, the result's own stride-1
    bandwidth, which compares the *shape* of the curve on a machine without a datasheet figure.
    """
    sr = result["measurements"]["strided_read"]
    strides = [row["stride"] for row in sr["rows"]]
    measured = [row["useful_bytes_per_s"] for row in sr["rows"]]
    peak = measured[strides.index(1)] if peak_bytes_per_s is None else peak_bytes_per_s
    return {"strides": strides, "measured": measured,
            "model": predicted_strided_bytes_per_s(strides, peak,
                                                   segment_bytes=sr["segment_bytes"])}


def stride_ratios(result: dict) -> dict[int, float]:
    """Each stride's useful bandwidth over the stride-1 bandwidth (the measured efficiency)."""
    rows = result["measurements"]["strided_read"]["rows"]
    base = next(r["useful_bytes_per_s"] for r in rows if r["stride"] == 1)
    return {r["stride"]: r["useful_bytes_per_s"] / base for r in rows}


def transpose_rates(result: dict) -> dict[str, float]:
    """Bytes moved per second of each transpose (and the copy) in a result."""
    return {name: op["bytes_per_s"] for name, op in result["measurements"]["transpose"]["ops"].items()}


def comparison_rows(ref: dict | None, mine: dict | None = None,
                    peak_bytes_per_s: float = specs.H200_SXM.hbm_bytes_per_s) -> list:
    """Rows of the lab's table: the sector and transpose models at ``peak_bytes_per_s``, the H200
    reference and the reader's GPU run (a CPU run has no column: its strides differ)."""
    from helpers.labs.report import Row

    gpu_mine = mine if (mine is not None and mine.get("tier") == "gpu") else None
    rows = []
    for s in (1, 2, 8, 32):
        model = predicted_efficiency(s, ELEMENT_BYTES) * peak_bytes_per_s

        def bw(res, s=s):
            if res is None:
                return None
            return next((r["useful_bytes_per_s"] for r in
                         res["measurements"]["strided_read"]["rows"] if r["stride"] == s), None)
        rows.append(Row(f"strided read, stride {s}", "TB/s", 1e12, model=model, h200=bw(ref),
                        yours=bw(gpu_mine)))
    m, n = (ref or gpu_mine or {"measurements": {"transpose": {"shape": [8192, 8192]}}})[
        "measurements"]["transpose"]["shape"]
    bounds = {"copy": 1, "torch": 1, "triton_tiled": 1, "triton_naive": m}
    for op, write_stride in bounds.items():
        q = 2.0 * m * n * ELEMENT_BYTES
        model = q / predicted_transpose_time_s(m, n, peak_bytes_per_s, write_stride=write_stride)

        def rate(res, op=op):
            if res is None:
                return None
            return res["measurements"]["transpose"]["ops"].get(op, {}).get("bytes_per_s")
        rows.append(Row(f"{op.replace('_', ' ')} ({m} x {n})", "TB/s", 1e12, model=model,
                        h200=rate(ref), yours=rate(gpu_mine)))
    return rows


def comparison_table(ref: dict | None, mine: dict | None, peak_bytes_per_s: float):
    """The lab's table: model | H200 | error | yours (yours only from a GPU run)."""
    from helpers.labs.report import Table

    gpu_mine = mine if (mine is not None and mine.get("tier") == "gpu") else None
    return Table("Memory access: model vs measured", comparison_rows(ref, mine, peak_bytes_per_s),
                 yours_label="yours (GPU)" if gpu_mine is not None else None)
