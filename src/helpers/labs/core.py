"""The lab framework: tiers, provenance, result files and progress.

Every lab in the book is one notebook in ``labs/`` plus a *runner* module in this package. The
runner does the measuring; the notebook predicts, calls the runner, compares and grades. The same
runner also works as a plain script, which is how the reference results shipped with the book
were measured on a real H200::

    python -m helpers.labs.<lab> --out DIR [--size small|full] [--device cpu|cuda]

It writes ``DIR/<lab>.json``: the measurements, the runner's settings and the provenance
(device, driver, CUDA, torch and Triton versions, clocks where ``nvidia-smi`` answers, commit,
date, repeat counts and spread). The files measured on the H200 are committed untouched under
``labs/reference/h200/`` and read back with :func:`load_reference`.

Three tiers, one notebook (:func:`tier`):

* ``"cpu"``: no usable CUDA GPU. The lab runs small sizes live on the CPU (Triton kernels
  through its interpreter) and shows the shipped H200 results beside them;
* ``"gpu"``: a CUDA GPU is usable; the lab runs full sizes live on it;
* the shipped H200 reference, always shown.

>>> tier() in ("cpu", "gpu")
True
>>> reference_path("timing").name
'timing.json'
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Callable, Iterable

from helpers.bench.env import environment
from helpers.bench.sizes import SIZE_ENV, has_cuda, size_tier

__all__ = ["SCHEMA", "ROOT", "REFERENCE_DIR", "tier", "lab_device", "announce", "new_result",
           "summarize", "save_result", "load_result", "reference_path", "load_reference",
           "reference_or_none",
           "progress", "fastest_config", "NoConfigRan", "run_cli", "provenance_line", "cpu_threads"]

#: Version of the result-file layout; bump it when a field changes meaning.
SCHEMA = 1
#: The repository root (the package is installed from ``src/`` in place).
ROOT = Path(__file__).resolve().parents[3]
#: Where the results measured on a real H200 are committed.
REFERENCE_DIR = ROOT / "labs" / "reference" / "h200"


def tier() -> str:
    """``"gpu"`` when a CUDA GPU is usable (and ``BOOK_FORCE_CPU`` is not set), else ``"cpu"``."""
    return "gpu" if has_cuda() else "cpu"


def lab_device() -> str:
    """The torch device string of the tier in force: ``"cuda"`` or ``"cpu"``."""
    return "cuda" if tier() == "gpu" else "cpu"


def announce() -> str:
    """Say in one line which tier runs; return the tier.

    The line is the same on every CPU, so a notebook's reference output does not depend on
    the machine that executed it.
    """
    t = tier()
    if t == "gpu":
        print(f"CUDA GPU found: this lab runs live on it at {size_tier()} sizes, "
              "beside the H200 reference results.")
    else:
        print("No CUDA GPU here: this lab runs its CPU tier at small sizes, "
              "beside the H200 reference results shipped with the book.")
    return t


def new_result(lab: str, device: str, **settings: Any) -> dict:
    """A result skeleton: the lab's name, tier, size tier, settings and provenance."""
    if not lab or not lab.replace("_", "").isalnum():
        raise ValueError(f"lab must be a snake_case name, got {lab!r}")
    return {
        "lab": lab,
        "schema": SCHEMA,
        "tier": "gpu" if device.startswith("cuda") else "cpu",
        "size_tier": size_tier(),
        "settings": settings,
        "provenance": environment(device),
        "measurements": {},
    }


def summarize(result) -> dict:
    """The JSON-ready summary of a :class:`~helpers.bench.timing.BenchResult`.

    Keeps the median, the 20th and 80th percentiles, the median's confidence interval, the
    minimum and maximum, the repeat count, the first (cold) call, and the relative spread
    ``(p80 - p20) / median``; drops the raw samples and the environment (recorded once per file).
    """
    keys = ("median_s", "p20_s", "p80_s", "ci_low_s", "ci_high_s", "min_s", "max_s", "mean_s",
            "n_reps", "number", "first_call_s", "warmup_reps", "n_outliers", "timer", "checked")
    out = {k: getattr(result, k) for k in keys}
    out["spread"] = result.spread
    return out


def save_result(result: dict, out_dir: str | os.PathLike) -> Path:
    """Write ``result`` to ``out_dir/<lab>.json`` (indented, keys in insertion order)."""
    for key in ("lab", "schema", "provenance", "measurements"):
        if key not in result:
            raise ValueError(f"result lacks {key!r}; build it with new_result()")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    path = out / f"{result['lab']}.json"
    path.write_text(json.dumps(result, indent=2, allow_nan=False) + "\n")
    return path


def load_result(path: str | os.PathLike) -> dict:
    """Read a result file and check its layout version."""
    data = json.loads(Path(path).read_text())
    if data.get("schema") != SCHEMA:
        raise ValueError(f"{path}: schema {data.get('schema')!r}, this book reads {SCHEMA}")
    return data


def reference_path(lab: str) -> Path:
    """Where the H200 reference result of ``lab`` lives in the repository."""
    return REFERENCE_DIR / f"{lab}.json"


def load_reference(lab: str) -> dict:
    """The H200 reference result of ``lab``, as measured and committed (never edited)."""
    path = reference_path(lab)
    if not path.exists():
        raise FileNotFoundError(
            f"no H200 reference for lab {lab!r} at {path}; it is produced on a GPU machine by "
            f"`python -m helpers.labs.{lab} --out labs/reference/h200`")
    return load_result(path)


def reference_or_none(lab: str) -> dict | None:
    """The H200 reference result of ``lab``, or None while it has not been measured.

    Lab pages use it so that they still execute (and say so) before the GPU run.
    """
    try:
        return load_reference(lab)
    except FileNotFoundError:
        return None


def progress(iterable: Iterable, desc: str, total: int | None = None):
    """A text progress bar on stderr that clears itself when done.

    Long sweeps (a full-size run on a GPU, a runner used as a script) show progress; the bar is
    removed on completion so a finished notebook keeps only its results.
    """
    from tqdm import tqdm

    return tqdm(iterable, desc=desc, total=total, leave=False, file=sys.stderr,
                dynamic_ncols=True, mininterval=0.5)


class NoConfigRan(ValueError):
    """:func:`fastest_config` had no configuration, or every one failed."""


def fastest_config(configs: Iterable, attempt: Callable[[Any, dict], float], *,
                   describe: Callable[[Any], dict] = dict, error_key: str = "error",
                   what: str = "configuration", tried: list | None = None
                   ) -> tuple[Any, list[dict]]:
    """Try every configuration, keep the fastest, record the failures: a lab's autotuning loop.

    For each ``cfg`` of ``configs`` (in order) an entry ``describe(cfg)`` is made and
    ``attempt(cfg, entry)`` is called: it runs the configuration, checks it, times it, writes
    what it measured into ``entry`` and returns the time in seconds. An ``AssertionError``
    (a wrong result: a bug, not a configuration that does not fit) propagates. Any other
    exception marks the configuration as failed: ``entry[error_key]`` becomes
    ``"ExceptionType: message"`` (the message cut at 200 characters) and the sweep goes on.
    Every entry is appended to ``tried`` (a new list unless one is given, so that a caller
    keeps the record even when every configuration fails).

    Returns
    -------
    tuple
        ``(fastest cfg, tried)``; of equal times the first is kept.

    Raises
    ------
    NoConfigRan
        (a ValueError) if ``configs`` is empty or every configuration failed; the message
        names ``what`` and lists the attempts.

    >>> fastest_config([3, 1, 2], lambda c, e: c * 1e-3, describe=lambda c: {"c": c})
    (1, [{'c': 3}, {'c': 1}, {'c': 2}])
    """
    tried = [] if tried is None else tried
    best, n_tried = None, 0
    for cfg in configs:
        n_tried += 1
        entry = describe(cfg)
        try:
            seconds = attempt(cfg, entry)
        except AssertionError:
            raise
        except Exception as exc:  # e.g. a configuration that does not compile or fit
            entry[error_key] = f"{type(exc).__name__}: {str(exc)[:200]}"
            tried.append(entry)
            continue
        tried.append(entry)
        if best is None or seconds < best[0]:
            best = (seconds, cfg)
    if not n_tried:
        raise NoConfigRan(f"no {what} to try: the list of configurations is empty")
    if best is None:
        raise NoConfigRan(f"no {what} ran: {tried}")
    return best[1], tried


@contextmanager
def cpu_threads(device: str):
    """Every usable core for torch on a CPU (as the book's probes); nothing on a GPU.

    Yields the number of threads set on a CPU and ``None`` on a CUDA device."""
    if device.startswith("cuda"):
        yield None
    else:
        from helpers.bench.probes import threads

        with threads() as n:
            yield n


def provenance_line(result: dict) -> str:
    """One sentence saying where and how a result was measured."""
    p = result["provenance"]
    parts = [p.get("device_name") or p.get("cpu") or "unknown device"]
    if p.get("driver"):
        parts.append(f"driver {p['driver']}")
    if p.get("cuda_runtime"):
        parts.append(f"CUDA {p['cuda_runtime']}")
    for mod in ("torch", "triton"):
        if p.get(mod):
            parts.append(f"{mod} {p[mod]}")
    if p.get("sm_clock_mhz"):
        after = (p.get("after_run") or {}).get("sm_clock_mhz")
        clock = f"SM clock {p['sm_clock_mhz']} MHz at the start"
        clock += f", {after} MHz at the end" if after else ""
        parts.append(f"{clock} (max {p.get('max_sm_clock_mhz')})")
    parts.append(f"commit {p.get('commit') or 'unrecorded'}")
    parts.append(f"measured {p.get('date_utc', 'on an unrecorded date')}")
    return ", ".join(parts) + "."


def run_cli(lab: str, run: Callable[[str], dict], argv: list[str] | None = None) -> Path:
    """The command line of a runner: ``--out``, ``--size`` and ``--device``; saves the result."""
    parser = argparse.ArgumentParser(prog=f"python -m helpers.labs.{lab}",
                                     description=f"Run the {lab} lab and write {lab}.json.")
    parser.add_argument("--out", required=True, help="directory for the JSON result")
    parser.add_argument("--size", choices=("small", "full"), default=None,
                        help="problem sizes (default: full on a GPU, small on a CPU)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="where to run (default: cuda if usable)")
    args = parser.parse_args(argv)
    if args.size:
        os.environ[SIZE_ENV] = args.size
    device = args.device or lab_device()
    if device == "cuda" and not has_cuda():
        parser.error("--device cuda, but no CUDA GPU is usable here")
    result = run(device)
    if device.startswith("cuda"):  # the clocks at the start describe an idle GPU; add the end's
        end = environment(device)
        result["provenance"]["after_run"] = {k: end.get(k) for k in (
            "date_utc", "sm_clock_mhz", "mem_clock_mhz", "temperature_c")}
    path = save_result(result, args.out)
    print(f"{lab}: wrote {path}", file=sys.stderr)
    return path


def finite(x: float) -> float:
    """``x`` as a float, or a ValueError if it is NaN or infinite (results must be real numbers)."""
    x = float(x)
    if not math.isfinite(x):
        raise ValueError(f"a measured value must be finite, got {x!r}")
    return x
