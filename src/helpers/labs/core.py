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

Each runner declares one :class:`Lab` record: its name, the page(s) that use it, its size table
for the small and full tiers, its benchmark settings; the record loads and checks the shipped
reference (:meth:`Lab.reference`). Every page renders a number not measured yet as
:data:`MISSING`, formats numbers with :func:`fmt`, and reads the numbers its prose glues from
the runner's ``prose_numbers(result)``, whose contract :func:`page_numbers` enforces. A new lab
is its ``measure_*`` functions, a ``run(device)``, a grader, ``main()`` and a page.

Used by every page in ``labs/`` (through its runner) and by ``appendix/status.md``
(through :mod:`.summary`).

>>> tier() in ("cpu", "gpu")
True
>>> reference_path("timing").name
'timing.json'
"""

from __future__ import annotations

import argparse
import copy
import functools
import json
import math
import os
import sys
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

from helpers import book
from helpers.bench.env import environment
from helpers.bench.sizes import has_cuda, pick, size_tier, use_tier

from .report import Claim

__all__ = ["SCHEMA", "ROOT", "REFERENCE_DIR", "Lab", "MISSING", "fmt", "page_numbers", "tier", "lab_device", "announce", "new_result",
           "summarize", "save_result", "load_result", "reference_path", "load_reference",
           "reference_or_none", "OTHER_CARD_DIR", "other_card_result",
           "progress", "fastest_config", "NoConfigRan", "run_cli", "provenance_line", "cpu_threads"]

#: Version of the result-file layout; bump it when a field changes meaning.
SCHEMA = 1
#: The repository root (``helpers.book.ROOT``, defined once).
ROOT = book.ROOT
#: Where the results measured on a real H200 are committed.
REFERENCE_DIR = ROOT / "labs" / "reference" / "h200"
#: Runs made on an H100 when the device pool lent that card instead of an H200, committed as
#: their runner wrote them; never read as H200 references (the truth loop and the status page
#: read :data:`REFERENCE_DIR` only), shown on a page under their card's name.
OTHER_CARD_DIR = ROOT / "labs" / "reference" / "h100"


#: What a page shows in place of a number the H200 reference (or this machine) has not
#: supplied: the one rendering of "not measured yet" in every lab.
MISSING = "(not measured yet)"


def _pair(what: str, value: Any) -> tuple:
    if not (isinstance(value, tuple) and len(value) == 2):
        raise ValueError(f"{what} must be a (small, full) pair, got {value!r}")
    return value


@dataclass(frozen=True, eq=False)
class Lab:
    """The record of one lab: what every runner declares once, at its top.

    Parameters
    ----------
    name : str
        The lab's snake_case name: the runner is ``helpers.labs.<name>``, its result file
        ``<name>.json`` and its shipped reference ``labs/reference/h200/<name>.json``.
    pages : tuple of str
        The page(s) that use the runner, relative to the repository root (the back-reference).
    sizes : mapping
        The size table: ``{key: (small, full)}``, read through the one size switch by
        :meth:`size`.
    budget_s, warmup_s : (float, float)
        Seconds of timed phase and of warm-up per :meth:`bench` call, small and full tier.
    min_reps : (int, int)
        Fewest timed repetitions per :meth:`bench` call, small and full tier.
    flush_cache : bool
        Whether :meth:`bench` flushes the cache before each repetition.
    claims : tuple of :class:`~helpers.labs.report.Claim`
        What the lab's models say about its measurements: each a *prediction* (with its
        tolerance) or a *bound*. Every row of the lab's comparison table names one of them, and
        the book's test over the shipped references holds every H200 value to its claim.

    >>> lab = Lab("demo_lab", pages=("labs/demo.md",), sizes={"n": (256, 8192)})
    >>> str(lab), lab.reference_file.name
    ('demo_lab', 'demo_lab.json')
    >>> lab.size("n") == pick(small=256, full=8192), lab.budget() == pick(small=0.1, full=0.3)
    (True, True)
    """

    name: str
    pages: tuple[str, ...]
    sizes: Mapping[str, tuple] = field(default_factory=dict)
    budget_s: tuple[float, float] = (0.1, 0.3)
    warmup_s: tuple[float, float] = (0.02, 0.05)
    min_reps: tuple[int, int] = (5, 5)
    flush_cache: bool = False
    claims: tuple = ()

    def __post_init__(self):
        if not (isinstance(self.name, str) and self.name
                and self.name.replace("_", "").isalnum()):
            raise ValueError(f"name must be a snake_case lab name, got {self.name!r}")
        if isinstance(self.pages, str) or not self.pages:
            raise ValueError(f"pages must be a non-empty tuple of page paths, got {self.pages!r}")
        for key, value in self.sizes.items():
            _pair(f"sizes[{key!r}]", value)
        for what in ("budget_s", "warmup_s", "min_reps"):
            small, full = _pair(what, getattr(self, what))
            if not (small > 0 and full > 0):
                raise ValueError(f"{what} must be positive in both tiers, got {(small, full)!r}")
        keys = [getattr(c, "key", None) for c in self.claims]
        # by name, not isinstance: a doctest run may import the report module a second time
        if not all(type(c).__name__ == Claim.__name__ and hasattr(c, "holds") for c in self.claims):
            raise ValueError(f"claims must be Claim records, got {self.claims!r}")
        if len(set(keys)) != len(keys):
            raise ValueError(f"claims must have distinct keys, got {keys}")

    def __str__(self) -> str:
        return self.name

    @property
    def reference_file(self) -> Path:
        """Where the lab's H200 reference lives (see :func:`reference_path`)."""
        return reference_path(self.name)

    def claim(self, key: str):
        """The declared :class:`~helpers.labs.report.Claim` named ``key``."""
        for c in self.claims:
            if c.key == key:
                return c
        raise ValueError(f"claim must be one of {[c.key for c in self.claims]} for lab "
                         f"{self.name!r}, got {key!r}")

    def size(self, key: str):
        """The size ``key`` of the size table at the size tier in force (a fresh copy)."""
        if key not in self.sizes:
            raise ValueError(f"size must be one of {sorted(self.sizes)}, got {key!r}")
        small, full = self.sizes[key]
        return copy.deepcopy(pick(small=small, full=full))

    def budget(self) -> float:
        """Seconds of timed phase per :meth:`bench` call at the size tier in force."""
        return pick(small=self.budget_s[0], full=self.budget_s[1])

    def bench(self, fn: Callable[[], Any], device: str, name: str, **overrides):
        """:func:`helpers.bench.bench` of ``fn`` with this lab's settings (environment not
        recorded: a result file records it once); ``overrides`` replace any of them."""
        from helpers.bench import bench

        settings = dict(warmup_s=pick(small=self.warmup_s[0], full=self.warmup_s[1]),
                        budget_s=self.budget(),
                        min_reps=pick(small=self.min_reps[0], full=self.min_reps[1]),
                        env=False)
        if self.flush_cache:
            settings["flush_cache"] = True
        settings.update(overrides)
        return bench(fn, device=device, name=name, **settings)

    def reference(self) -> dict | None:
        """The shipped H200 result, checked (:func:`load_result`), or None with a one-line
        note while it has not been measured: a page still executes, and says so."""
        ref = reference_or_none(self.name)
        if ref is None:
            print("H200 reference not measured yet for this lab.")
        elif ref.get("lab") != self.name:
            raise ValueError(f"{self.reference_file}: holds lab {ref.get('lab')!r}, "
                             f"expected {self.name!r}")
        return ref


def _lab_name(lab: "Lab | str") -> str:
    return lab.name if isinstance(lab, Lab) else lab


def fmt(value, spec: str = ".3g", scale: float = 1.0) -> str:
    """``value / scale`` formatted with ``spec``, or :data:`MISSING` when there is no number.

    No number is None, NaN or an infinity: a page never prints ``nan`` or ``inf`` in place of
    a measurement. The page glues these strings, so a number measured on the H200 appears
    once the reference file exists, and the page still builds before it does.

    >>> fmt(4.3e12, ".3g", 1e12), fmt(7, "d"), fmt(0.953, ".0%")
    ('4.3', '7', '95%')
    >>> fmt(None), fmt(float("nan")), fmt(float("inf"))
    ('(not measured yet)', '(not measured yet)', '(not measured yet)')
    """
    if value is None or (not isinstance(value, str) and not math.isfinite(value)):
        return MISSING
    return format(value if scale == 1 else value / scale, spec)


def page_numbers(keys: Iterable[str]):
    """Decorate a runner's ``prose_numbers(result, ...)``: the contract for what a page glues.

    The decorated function returns a dict of exactly ``keys``, each value a string, in the
    order the function makes them (a page glues them in that order, and its reference notebook
    records the glue in that order); for ``result`` None it is not called, and every value is
    :data:`MISSING`, in the order of ``keys``. A key missing, extra, or not a string is a
    ValueError (a bug in the runner, not in the data).

    >>> @page_numbers(["n"])
    ... def prose_numbers(result):
    ...     return {"n": fmt(result["n"], "d")}
    >>> prose_numbers({"n": 3}), prose_numbers(None)
    ({'n': '3'}, {'n': '(not measured yet)'})
    """
    keys = tuple(keys)

    def decorate(compute: Callable[..., dict]) -> Callable[..., dict]:
        @functools.wraps(compute)
        def numbers(result: dict | None, *args, **kwargs) -> dict[str, str]:
            if result is None:
                return dict.fromkeys(keys, MISSING)
            out = compute(result, *args, **kwargs)
            if set(out) != set(keys):
                raise ValueError(f"{compute.__name__} must return the keys {sorted(keys)}; "
                                 f"missing {sorted(set(keys) - set(out))}, "
                                 f"extra {sorted(set(out) - set(keys))}")
            bad = {k: v for k, v in out.items() if not isinstance(v, str)}
            if bad:
                raise ValueError(f"{compute.__name__} must return strings, got {bad!r}")
            return out
        numbers.keys = keys
        return numbers
    return decorate


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


def new_result(lab: Lab | str, device: str, **settings: Any) -> dict:
    """A result skeleton: the lab's name, tier, size tier, settings and provenance."""
    lab = _lab_name(lab)
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


def reference_path(lab: Lab | str) -> Path:
    """Where the H200 reference result of ``lab`` lives in the repository."""
    return REFERENCE_DIR / f"{_lab_name(lab)}.json"


def load_reference(lab: Lab | str) -> dict:
    """The H200 reference result of ``lab``, as measured and committed (never edited)."""
    lab = _lab_name(lab)
    path = reference_path(lab)
    if not path.exists():
        raise FileNotFoundError(
            f"no H200 reference for lab {lab!r} at {path}; it is produced on a GPU machine by "
            f"`python -m helpers.labs.{lab} --out labs/reference/h200`")
    return load_result(path)


def reference_or_none(lab: Lab | str) -> dict | None:
    """The H200 reference result of ``lab``, or None while it has not been measured.

    Lab pages use it through :meth:`Lab.reference`, so that they still execute (and say so)
    before the GPU run.
    """
    try:
        return load_reference(lab)
    except FileNotFoundError:
        return None


def other_card_result(lab: Lab | str) -> dict | None:
    """The run of ``lab`` kept in :data:`OTHER_CARD_DIR` (checked by :func:`load_result`), or
    None if there is none: what a page shows, under the card's name, until an H200 run lands."""
    path = OTHER_CARD_DIR / f"{_lab_name(lab)}.json"
    return load_result(path) if path.exists() else None


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


def run_cli(lab: Lab | str, run: Callable[[str], dict], argv: list[str] | None = None) -> Path:
    """The command line of a runner: ``--out``, ``--size`` and ``--device``; saves the result."""
    lab = _lab_name(lab)
    parser = argparse.ArgumentParser(prog=f"python -m helpers.labs.{lab}",
                                     description=f"Run the {lab} lab and write {lab}.json.")
    parser.add_argument("--out", required=True, help="directory for the JSON result")
    parser.add_argument("--size", choices=("small", "full"), default=None,
                        help="problem sizes (default: full on a GPU, small on a CPU)")
    parser.add_argument("--device", choices=("cpu", "cuda"), default=None,
                        help="where to run (default: cuda if usable)")
    args = parser.parse_args(argv)
    device = args.device or lab_device()
    if device == "cuda" and not has_cuda():
        parser.error("--device cuda, but no CUDA GPU is usable here")
    with use_tier(args.size):   # --size goes straight to the size switch, not via os.environ
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
