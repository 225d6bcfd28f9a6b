"""Environment capture: what a measurement ran on, recorded next to every result.

:func:`environment` returns a plain dict (JSON-ready): the date, the commit, the Python,
NumPy, PyTorch and Triton versions, the CPU, the cores this process may use, and for CUDA the
device name, driver, CUDA runtime and, where ``nvidia-smi`` answers, the clocks.
"""

from __future__ import annotations

import datetime as _dt
import os
import platform
import shutil
import subprocess
from pathlib import Path

__all__ = ["environment", "cpu_model", "usable_cores", "git_commit"]


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


def git_commit(path: str | os.PathLike | None = None) -> str | None:
    """The commit of the repository at ``path`` (default: this package's), or None."""
    if shutil.which("git") is None:
        return None
    where = str(path or Path(__file__).resolve().parent)
    return _run(["git", "-C", where, "rev-parse", "--short=12", "HEAD"])


def _versions() -> dict:
    versions = {"python": platform.python_version()}
    for mod in ("numpy", "torch", "triton"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception:  # absent or broken: record that
            versions[mod] = None
    return versions


def _cuda_info() -> dict:
    import torch

    info: dict = {"cuda_runtime": torch.version.cuda}
    idx = torch.cuda.current_device()
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
    env = {
        "date_utc": _dt.datetime.now(_dt.timezone.utc).isoformat(timespec="seconds"),
        "commit": git_commit(),
        "platform": platform.platform(),
        "cpu": cpu_model(),
        "usable_cores": usable_cores(),
        "omp_num_threads": os.environ.get("OMP_NUM_THREADS"),
        "device": device,
        **_versions(),
    }
    if device.startswith("cuda"):
        env.update(_cuda_info())
    return env
