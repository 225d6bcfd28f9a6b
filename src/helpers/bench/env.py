"""Environment capture: what a measurement ran on, recorded next to every result.

:func:`environment` returns a plain dict (JSON-ready): the date, the commit, the Python,
NumPy, PyTorch and Triton versions, the CPU, its cache sizes, the cores this process may use,
the threads PyTorch will use, the clock behind ``time.perf_counter``, and for CUDA the device
name, driver, CUDA runtime and, where ``nvidia-smi`` answers, the clocks and power limit.

>>> env = environment("cpu")
>>> env["device"], env["usable_cores"] >= 1, "perf_counter" in env["clock"]
('cpu', True, True)

Used by many pages, among them: appendix/status.md, chapters/gemm.md,
chapters/gpu-architecture.md, chapters/measurement.md, chapters/memory-optimization.md,
chapters/performance-models.md.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import subprocess
import time
from pathlib import Path

__all__ = ["environment", "cpu_model", "usable_cores", "git_commit", "cache_sizes_bytes",
           "llc_bytes", "cuda_index"]


def _run(cmd: list[str], timeout: float = 5.0) -> str | None:
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=True)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def cpu_model() -> str:
    """The CPU's model name, from /proc/cpuinfo where there is one."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.lower().startswith(("model name", "hardware", "cpu model")):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def usable_cores() -> int:
    """Cores this process may run on (its affinity mask), not the host's total.

    ``os.cpu_count()`` reports every core of the host, which in a container can be far more
    than the process may use.
    """
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1


def _parse_size(text: str) -> int | None:
    text = text.strip().upper()
    scale = {"K": 1024, "M": 1024**2, "G": 1024**3}
    try:
        if text and text[-1] in scale:
            return int(text[:-1]) * scale[text[-1]]
        return int(text)
    except ValueError:
        return None


def cache_sizes_bytes(root: str | os.PathLike = "/sys/devices/system/cpu/cpu0/cache") -> dict:
    """CPU cache sizes in bytes by level name (``"L1d"``, ``"L1i"``, ``"L2"``, ``"L3"``).

    Read from Linux's sysfs (which reports binary kilobytes); empty where it is absent. In a
    virtual machine these are what the hypervisor reports, and a last-level cache is shared
    with other cores (and possibly other tenants).

    >>> sizes = cache_sizes_bytes()
    >>> all(v > 0 for v in sizes.values())
    True
    """
    out: dict = {}
    base = Path(root)
    if not base.is_dir():
        return out
    for index in sorted(base.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = _parse_size((index / "size").read_text())
        except OSError:
            continue
        if size is None:
            continue
        suffix = {"Data": "d", "Instruction": "i"}.get(kind, "")
        out[f"L{level}{suffix}"] = size
    return out


def llc_bytes() -> int | None:
    """Size of the last-level (largest-numbered) cache in bytes, or None if unknown."""
    sizes = cache_sizes_bytes()
    if not sizes:
        return None
    top = max(sizes, key=lambda k: (int(k[1]), sizes[k]))
    return sizes[top]


def git_commit(path: str | os.PathLike | None = None) -> str | None:
    """The commit of the repository at ``path`` (default: this package's), or None.

    The environment variable ``BOOK_COMMIT``, when set, wins: a copy of the working tree on
    a GPU machine may carry no ``.git``, or a stale one, so whoever sends the copy names the
    commit it was made from.
    """
    if os.environ.get("BOOK_COMMIT"):
        return os.environ["BOOK_COMMIT"]
    if shutil.which("git") is None:
        return None
    where = str(path or Path(__file__).resolve().parent)
    return _run(["git", "-C", where, "rev-parse", "--short=12", "HEAD"])


def _versions() -> dict:
    """Versions of the packages a measurement depends on, read from their installed metadata.

    Triton is not imported here: whether it runs kernels through its interpreter is fixed when
    it is first imported (:mod:`helpers.kernels` decides that), and recording the environment
    must not decide it first.
    """
    from importlib import metadata

    versions = {"python": platform.python_version()}
    for mod in ("numpy", "torch", "triton"):
        try:
            versions[mod] = metadata.version(mod)
        except metadata.PackageNotFoundError:  # absent: record that
            versions[mod] = None
    return versions


def _torch_threads() -> int | None:
    try:
        import torch
    except Exception:
        return None
    return int(torch.get_num_threads())


def cuda_index(device: str) -> int:
    """The device index of ``"cuda"`` (the current device) or ``"cuda:N"``.

    >>> cuda_index("cuda:3")
    3
    """
    if device == "cuda":
        import torch

        return int(torch.cuda.current_device())
    prefix, _, idx = device.partition(":")
    if prefix != "cuda" or not idx.isdigit():
        raise ValueError(f"device must be 'cuda' or 'cuda:N', got {device!r}")
    return int(idx)


def _cuda_info(device: str) -> dict:
    import torch

    idx = cuda_index(device)
    info: dict = {"cuda_runtime": torch.version.cuda, "cuda_index": idx}
    props = torch.cuda.get_device_properties(idx)
    info.update(device_name=props.name, sm_count=props.multi_processor_count,
                memory_bytes=float(props.total_memory),
                compute_capability=f"{props.major}.{props.minor}")
    query = _run(["nvidia-smi", f"--id={idx}", "--query-gpu=driver_version,clocks.sm,clocks.mem,"
                  "clocks.max.sm,power.limit,temperature.gpu", "--format=csv,noheader,nounits"])
    if query:
        fields = [f.strip() for f in query.split(",")]
        names = ["driver", "sm_clock_mhz", "mem_clock_mhz", "max_sm_clock_mhz", "power_limit_w",
                 "temperature_c"]
        info.update(dict(zip(names, fields)))
    return info


def environment(device: str = "cpu") -> dict:
    """A JSON-ready description of the machine and software a measurement ran on."""
    clock = time.get_clock_info("perf_counter")
    env = {
        "date_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "usable_cores": usable_cores(),
        "cpu_caches_bytes": cache_sizes_bytes(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "torch_threads": _torch_threads(),
        "clock": f"perf_counter: {clock.implementation}, resolution {clock.resolution:g} s",
        "device": device,
        **_versions(),
    }
    if device.startswith("cuda"):
        env.update(_cuda_info(device))
    return env
