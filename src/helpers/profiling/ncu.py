"""Hardware counters with Nsight Compute: build the ``ncu`` command line, run it, read its CSV.

A lab that wants to know how many bytes a kernel really moved between HBM (DRAM) and L2, and
through L2, runs the kernel under ``ncu`` and reads the counters::

    ncu --clock-control none --csv --metrics dram__bytes_read.sum,dram__bytes_write.sum,
        lts__t_bytes.sum,gpu__time_duration.sum --nvtx --nvtx-include RANGE/ python -m ...

``--clock-control none`` leaves the GPU's clocks as they are (ncu locks them to base clocks by
default, which changes the time but not the bytes). ``ncu`` replays each kernel once per pass of
metrics it needs, restoring memory in between, so the byte counts are those of one launch.

``--csv`` prints one row per (kernel launch, metric) with the header
``"ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size",
"Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"`` (Nsight
Compute 2025.3 on an H200; ``tests/profiling/data/ncu_matmul_h200.csv`` is such an output),
after the ``==PROF==`` lines of the profiler and whatever the program printed. Values carry
thousands separators ("8,410,368") and a unit column (``byte``, ``Kbyte``, ``Mbyte``, ``ns``,
``usecond``, ...): :func:`parse_csv` normalizes them to bytes and seconds.

Metrics (Nsight Compute Profiling Guide, "Metrics Reference" and "Memory Chart"):

* ``dram__bytes_read.sum``, ``dram__bytes_write.sum``: bytes read from and written to device
  memory (HBM) by the kernel. A store may stay in L2 after the kernel ends (L2 is write-back),
  so the write count can be below what the kernel stored;
* ``lts__t_bytes.sum``: bytes of all requests to the L2 slices (the traffic through L2);
* ``gpu__time_duration.sum``: the kernel's duration on the GPU.

References: NVIDIA Nsight Compute CLI User Guide (``--csv``, ``--metrics``, ``--kernel-name
regex:``, ``--launch-skip``, ``--launch-count``, ``--clock-control``, ``--nvtx``,
``--nvtx-include``); Nsight Compute Profiling Guide (metrics, replay).

>>> ncu_command(["python", "-c", "pass"], kernel_regex="attn", launch_count=2)[:4]
['ncu', '--clock-control', 'none', '--csv']

Library only: no page imports it.
"""

from __future__ import annotations

import csv
import io
import re
import shutil
import subprocess
from dataclasses import dataclass, field

__all__ = ["METRICS", "NcuError", "NcuNotFound", "KernelRow", "ncu_command", "parse_csv",
           "totals", "run_ncu", "run_ncu_text", "query_metric_names", "missing_metric",
           "base_name"]

#: The counters the book reads: DRAM bytes read and written, L2 traffic, kernel duration.
METRICS = ("dram__bytes_read.sum", "dram__bytes_write.sum", "lts__t_bytes.sum",
           "gpu__time_duration.sum")

#: Units ncu prints, to the SI base unit (bytes, seconds). ncu scales with decimal prefixes.
UNIT_SCALE = {
    "byte": 1.0, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
    "ns": 1e-9, "nsecond": 1e-9, "us": 1e-6, "usecond": 1e-6, "ms": 1e-3, "msecond": 1e-3,
    "s": 1.0, "second": 1.0,
}

#: Columns :func:`parse_csv` needs (the others are kept when present).
REQUIRED_COLUMNS = ("ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value")


class NcuError(RuntimeError):
    """ncu ran but failed (no permission for the counters, the program crashed, bad output)."""


class NcuNotFound(NcuError):
    """No ``ncu`` executable."""


@dataclass
class KernelRow:
    """One profiled kernel launch: its ncu ID, name, launch shape and metrics in base units."""

    id: int
    kernel: str
    block_size: str = ""
    grid_size: str = ""
    metrics: dict = field(default_factory=dict)  # name -> float (bytes, seconds) or None (n/a)
    units: dict = field(default_factory=dict)  # name -> unit, for units kept as printed


def ncu_command(target: list[str], *, metrics=METRICS, kernel_regex: str | None = None,
                launch_skip: int = 0, launch_count: int | None = None,
                nvtx_range: str | None = None, ncu: str = "ncu",
                print_units: str | None = None) -> list[str]:
    """The ``ncu`` command line that profiles ``target`` (a program and its arguments).

    ``kernel_regex`` keeps kernels whose name matches (``--kernel-name regex:...``);
    ``launch_skip`` and ``launch_count`` skip and keep that many matching launches;
    ``nvtx_range`` keeps only kernels launched inside the NVTX push/pop range of that name
    (``--nvtx --nvtx-include NAME/``); ``print_units="base"`` asks for unscaled units
    (``--print-units base``).

    >>> ncu_command(["prog"], nvtx_range="count", launch_skip=1)[-6:]
    ['--launch-skip', '1', '--nvtx', '--nvtx-include', 'count/', 'prog']
    """
    if isinstance(target, str) or not target:
        raise ValueError(f"target must be a non-empty list of arguments, got {target!r}")
    if isinstance(metrics, str) or not metrics or not all(isinstance(m, str) and m
                                                           for m in metrics):
        raise ValueError(f"metrics must be a non-empty sequence of metric names, got {metrics!r}")
    if not (isinstance(launch_skip, int) and launch_skip >= 0):
        raise ValueError(f"launch_skip must be an integer >= 0, got {launch_skip!r}")
    if launch_count is not None and not (isinstance(launch_count, int) and launch_count >= 1):
        raise ValueError(f"launch_count must be an integer >= 1 or None, got {launch_count!r}")
    if print_units not in (None, "auto", "base"):
        raise ValueError(f"print_units must be None, 'auto' or 'base', got {print_units!r}")
    cmd = [ncu, "--clock-control", "none", "--csv", "--metrics", ",".join(metrics)]
    if print_units:
        cmd += ["--print-units", print_units]
    if kernel_regex:
        cmd += ["--kernel-name", f"regex:{kernel_regex}"]
    if launch_skip:
        cmd += ["--launch-skip", str(launch_skip)]
    if launch_count is not None:
        cmd += ["--launch-count", str(launch_count)]
    if nvtx_range:
        cmd += ["--nvtx", "--nvtx-include", f"{nvtx_range}/"]
    return cmd + list(target)


#: Count units ncu prints (kept as numbers); with a K, M or G prefix they are scaled.
COUNT_UNITS = ("", "cycle", "%", "inst", "warp", "thread", "block", "sector", "request",
               "register/thread", "byte/block", "ratio", "wavefront", "SM", "warp/cycle")
_PREFIX = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}


def _value(text: str, unit: str, where: str, keep_unknown: bool = False) -> float | None:
    text = text.strip()
    if text.lower() in ("n/a", ""):
        return None
    try:
        number = float(text.replace(",", ""))
    except ValueError:
        raise ValueError(f"{where}: metric value {text!r} is not a number") from None
    if unit in UNIT_SCALE:
        return number * UNIT_SCALE[unit]
    if unit in COUNT_UNITS:
        return number
    if unit[:1] in _PREFIX and unit[1:] in COUNT_UNITS and unit[1:]:
        return number * _PREFIX[unit[:1]]
    if keep_unknown:
        return number
    raise ValueError(f"{where}: unknown metric unit {unit!r}; known: {sorted(UNIT_SCALE)}")


def parse_csv(text: str, *, keep_unknown_units: bool = False) -> list[KernelRow]:
    """Per-kernel rows from the output of ``ncu --csv`` (profiler and program lines skipped).

    Each row's metrics are in bytes and seconds (counts as printed, a K/M/G prefix scaled).
    With ``keep_unknown_units`` a unit this reader does not know (``cycle/nsecond``, ...)
    keeps the printed number and the row's ``units`` names it. Raises ``ValueError`` naming the problem when
    there is no CSV header, a required column is missing, a row is short, a value is not a
    number or a unit is unknown.

    >>> rows = parse_csv('==PROF== Connected\\n"ID","Kernel Name","Metric Name","Metric Unit",'
    ...                  '"Metric Value"\\n"0","k","dram__bytes_read.sum","Kbyte","1,024"\\n')
    >>> rows[0].kernel, rows[0].metrics
    ('k', {'dram__bytes_read.sum': 1024000.0})
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be the ncu output as a str, got {type(text).__name__}")
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith('"ID",')), None)
    if start is None:
        raise ValueError("no ncu CSV header (a line starting with \"ID\",) in the output: was "
                         "ncu run with --csv, and did it profile any kernel?")
    reader = csv.reader(io.StringIO("\n".join(lines[start:])))
    header = next(reader)
    missing = [c for c in REQUIRED_COLUMNS if c not in header]
    if missing:
        raise ValueError(f"ncu CSV header lacks columns {missing}: got {header}")
    col = {name: header.index(name) for name in header}
    rows: dict[int, KernelRow] = {}
    for n, rec in enumerate(reader, start=start + 2):
        if not rec or (len(rec) == 1 and not rec[0].strip()):
            continue
        if rec[0].startswith("=="):  # a profiler message after the table
            continue
        if len(rec) != len(header):
            raise ValueError(f"ncu CSV line {n}: {len(rec)} fields, the header has "
                             f"{len(header)}: {rec}")
        try:
            kid = int(rec[col["ID"]])
        except ValueError:
            raise ValueError(f"ncu CSV line {n}: ID {rec[col['ID']]!r} is not an integer") from None
        row = rows.setdefault(kid, KernelRow(
            kid, rec[col["Kernel Name"]],
            rec[col["Block Size"]] if "Block Size" in col else "",
            rec[col["Grid Size"]] if "Grid Size" in col else ""))
        name = rec[col["Metric Name"]]
        unit = rec[col["Metric Unit"]].strip()
        row.metrics[name] = _value(rec[col["Metric Value"]], unit, f"ncu CSV line {n} ({name})",
                                   keep_unknown_units)
        row.units[name] = unit
    return [rows[k] for k in sorted(rows)]


def totals(rows: list[KernelRow], metrics=METRICS) -> dict:
    """Sum of each metric over ``rows`` (the kernels of one call), with the kernels' names.

    A metric missing or n/a in some kernel makes its total None (and lists it under
    ``"incomplete"``).

    >>> totals([KernelRow(0, "a", metrics={"x": 1.0}), KernelRow(1, "b", metrics={"x": 2.0})],
    ...        metrics=("x",))
    {'x': 3.0, 'kernels': ['a', 'b'], 'n_kernels': 2, 'incomplete': []}
    """
    out: dict = {}
    incomplete = []
    for m in metrics:
        values = [r.metrics.get(m) for r in rows]
        if not rows or any(v is None for v in values):
            out[m] = None
            incomplete.append(m)
        else:
            out[m] = float(sum(values))
    out["kernels"] = [r.kernel for r in rows]
    out["n_kernels"] = len(rows)
    out["incomplete"] = incomplete
    return out


def run_ncu_text(target: list[str], *, timeout_s: float = 120.0, env: dict | None = None,
                 ncu: str = "ncu", **options) -> str:
    """Run ``target`` under :func:`ncu_command` (``options`` go there); return ncu's stdout
    (the program's own lines, then the CSV).

    Raises :class:`NcuNotFound` when there is no ``ncu``, :class:`NcuError` when it fails (its
    last output lines in the message).
    """
    exe = shutil.which(ncu)
    if exe is None:
        raise NcuNotFound(f"{ncu!r} not found on PATH: install NVIDIA Nsight Compute (it ships "
                          "with the CUDA toolkit, e.g. /usr/local/cuda/bin/ncu) or add it to PATH")
    cmd = ncu_command(target, ncu=exe, **options)
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
    except subprocess.TimeoutExpired:
        raise NcuError(f"ncu ran past {timeout_s:g} s: {' '.join(cmd)}") from None
    tail = "\n".join((proc.stdout + proc.stderr).strip().splitlines()[-8:])
    if proc.returncode != 0 or "==ERROR==" in proc.stdout + proc.stderr and '"ID",' not in proc.stdout:
        raise NcuError(f"ncu exited with {proc.returncode}: {tail}")
    return proc.stdout


def run_ncu(target: list[str], *, timeout_s: float = 120.0, env: dict | None = None,
            ncu: str = "ncu", **options) -> list[KernelRow]:
    """Run ``target`` under :func:`ncu_command` (``options`` go there) and parse its CSV.

    Raises :class:`NcuNotFound` when there is no ``ncu``, :class:`NcuError` when it fails (its
    last output lines in the message) or profiles no kernel.
    """
    text = run_ncu_text(target, timeout_s=timeout_s, env=env, ncu=ncu, **options)
    tail = "\n".join(text.strip().splitlines()[-8:])
    try:
        rows = parse_csv(text)
    except ValueError as exc:
        raise NcuError(f"{exc}; ncu's last lines: {tail}") from None
    if not rows:
        raise NcuError(f"ncu profiled no kernel: {tail}")
    return rows


def base_name(metric: str) -> str:
    """A metric's base name, without its rollup and submetric (``.sum``, ``.avg.pct_...``).

    >>> base_name("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed")
    'sm__pipe_tensor_op_hmma_cycles_active'
    """
    if not isinstance(metric, str) or not metric:
        raise ValueError(f"metric must be a non-empty str, got {metric!r}")
    return metric.split(".", 1)[0]


_METRIC_NAME = re.compile(r"^\s*([a-z0-9]+__[A-Za-z0-9_]+)")


def query_metric_names(text: str) -> set[str]:
    """Base metric names listed in the output of ``ncu --query-metrics`` (one per line,
    the name first).

    >>> sorted(query_metric_names("Device gh100\\nMetric Name  Type\\n"
    ...                           "smsp__inst_executed_pipe_xu  Counter  inst  # of ..."))
    ['smsp__inst_executed_pipe_xu']
    """
    if not isinstance(text, str):
        raise ValueError(f"text must be ncu's output as a str, got {type(text).__name__}")
    return {m.group(1) for line in text.splitlines() if (m := _METRIC_NAME.match(line))}


_MISSING = re.compile(r"[Ff]ailed to find metric[s]?\s*:?\s*(?:regex:)?\s*([A-Za-z0-9_.]+)")


def missing_metric(message: str) -> str | None:
    """The metric an ncu error message says it cannot find, or None.

    >>> missing_metric("==ERROR== Failed to find metric sm__nothing.sum")
    'sm__nothing.sum'
    """
    m = _MISSING.search(message or "")
    return m.group(1) if m else None
