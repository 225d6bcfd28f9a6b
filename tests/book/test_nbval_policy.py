"""What nbval compares is reproducible on any machine (CONTRIBUTING.md, "What nbval compares").

Two checks. The nbval stage runs the pages on another SIMD path than the one their references were
made on, and the variables that choose it really change the kernels taken (so a CPU float glued
beyond its reproducible digits fails on every machine). And, statically, no lab page glues a float
from the reader's live run (``mine``, measured on this CPU) at full precision in a compared cell:
such a value goes through ``units.shown`` or into a cell tagged ``nbval-ignore-output``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from helpers.book import OTHER_SIMD_ENV, notebook_pages

from helpers.book import ROOT  # the repository root, computed once
PROBE = r"""
import ctypes, glob, json, os, numpy, torch
from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__
libs = glob.glob(os.path.join(os.path.dirname(numpy.__file__) + ".libs", "*openblas*"))
blas = ctypes.CDLL(libs[0]) if libs else None
core = getattr(blas, "scipy_openblas_get_corename64_", None)
if core is not None:
    core.restype = ctypes.c_char_p
print(json.dumps({"aten": torch.backends.cpu.get_cpu_capability(),
                  "numpy": sorted(f for f in __cpu_dispatch__ if __cpu_features__.get(f)),
                  "openblas": core().decode() if core is not None else None}))
"""


def _kernels(extra_env: dict[str, str]) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in OTHER_SIMD_ENV}
    env.update(extra_env)
    out = subprocess.run([sys.executable, "-W", "error", "-c", PROBE], env=env, check=True,
                         capture_output=True, text=True, timeout=120)
    return json.loads(out.stdout)


def test_the_other_simd_path_takes_other_kernels_than_the_default():
    other = _kernels(OTHER_SIMD_ENV)
    assert other["aten"] in ("AVX2", "DEFAULT")  # AVX2, or scalar on a CPU without it
    assert not {"X86_V3", "X86_V4", "AVX512_ICL", "AVX512_SPR"} & set(other["numpy"])
    default = _kernels({})
    if default["aten"] == other["aten"] and not default["numpy"]:
        pytest.skip("this CPU has no vector path above AVX2: both runs take the same kernels")
    assert (other["aten"], other["numpy"]) != (default["aten"], default["numpy"])


def test_the_other_simd_path_takes_other_blas_kernels_than_the_default():
    other, default = _kernels(OTHER_SIMD_ENV), _kernels({})
    assert default["openblas"], "numpy's OpenBLAS should tell its kernel family"
    assert other["openblas"] == OTHER_SIMD_ENV["OPENBLAS_CORETYPE"], other
    if default["openblas"] == other["openblas"]:
        pytest.skip(f"this CPU's own OpenBLAS kernels are {default['openblas']}: both runs "
                    "take the same BLAS kernels")
    assert other["openblas"] != default["openblas"], (other, default)


LIBM_PROBE = r"""
import hashlib, math, random
r = random.Random(1)
h = hashlib.sha256()
for _ in range(20000):
    h.update(math.exp(r.uniform(-50.0, 50.0)).hex().encode())
print(h.hexdigest())
"""


def test_the_other_simd_path_takes_other_libm_versions_than_the_default():
    def digest(extra_env):
        env = {k: v for k, v in os.environ.items() if k not in OTHER_SIMD_ENV}
        env.update(extra_env)
        return subprocess.run([sys.executable, "-c", LIBM_PROBE], env=env, check=True,
                              capture_output=True, text=True, timeout=120).stdout
    flags = Path("/proc/cpuinfo").read_text() if Path("/proc/cpuinfo").exists() else ""
    if " fma " not in flags:
        pytest.skip("this CPU has no FMA: glibc takes its plain versions on both paths")
    assert digest(OTHER_SIMD_ENV) != digest({})


def test_the_other_simd_path_keeps_its_own_inductor_cache():
    # A kernel cached by one SIMD path and loaded by the other computes garbage (torch 2.13).
    cache = OTHER_SIMD_ENV["TORCHINDUCTOR_CACHE_DIR"]
    assert Path(cache).is_absolute()
    assert os.environ.get("TORCHINDUCTOR_CACHE_DIR") != cache
    from torch._inductor.runtime.cache_dir_utils import default_cache_dir

    assert Path(default_cache_dir()) != Path(cache)


def test_the_nbval_stage_compares_on_the_other_simd_path(monkeypatch):
    import importlib.util

    assert "tools/nb_refs.py compare" in (ROOT / "tools" / "test").read_text()
    spec = importlib.util.spec_from_file_location("nb_refs", ROOT / "tools" / "nb_refs.py")
    nb_refs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(nb_refs)
    seen = {}

    def fake_call(cmd, cwd, env):
        seen.update(cmd=cmd, env=env)
        return 0

    monkeypatch.setattr(subprocess, "call", fake_call)
    page = ROOT / "labs" / "timing.md"
    assert nb_refs.compare([page], jobs=2) == 0
    assert all(seen["env"][k] == v for k, v in OTHER_SIMD_ENV.items())
    assert "--nbval" in seen["cmd"] and "labs/timing.ipynb" in seen["cmd"]


#: Glued floats of a live run that are exact on every machine, with the reason.
DETERMINISTIC = {
    "labquant_mem_worst_pct": "a ratio of two byte counts (allocated tensors against the model)",
    "labquant_mem_c8_mb": "a byte count of allocated tensors, in MB",
    "labquant_mem_g32_mb": "a byte count of allocated tensors, in MB",
}

_FLOAT = re.compile(r"^-?\d+\.\d+(e[-+]\d+)?$|^-?\d(\.\d+)?e[-+]\d+$")


def _significant_digits(text: str) -> int:
    mantissa = text.lstrip("-").split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa.rstrip("0")) if "." in text else len(mantissa)


def live_run_floats(ref: Path) -> list[str]:
    """Glued floats of more than 6 significant digits, in cells that nbval compares and that read
    the reader's live run (``mine``), unless listed in :data:`DETERMINISTIC`: '<key> = <value>'."""
    nb = json.loads(ref.read_text())
    found = []
    for cell in nb["cells"]:
        if cell["cell_type"] != "code":
            continue
        tags = cell["metadata"].get("tags", [])
        if "nbval-ignore-output" in tags or "nbval-skip" in tags:
            continue
        if not re.search(r"\bmine\b", "".join(cell["source"])):
            continue
        for out in cell.get("outputs", []):
            text = out.get("data", {}).get("application/papermill.record/text/plain")
            if text is None or not _FLOAT.match(text):
                continue
            name = out["metadata"]["scrapbook"]["name"]
            if _significant_digits(text) > 6 and name not in DETERMINISTIC:
                found.append(f"{name} = {text}")
    return found


def test_the_rule_recognizes_a_full_precision_cpu_float():
    assert _significant_digits("0.009663900238887635") == 16
    assert _significant_digits("1.0") == 1 and _significant_digits("2048.0") == 4
    assert _significant_digits("1.25e-05") == 3 and _FLOAT.match("1.25e-05")
    assert not _FLOAT.match("'0.01'") and not _FLOAT.match("2048")


@pytest.mark.parametrize("page", [p for p in notebook_pages(ROOT) if p.parent.name == "labs"],
                         ids=lambda p: p.stem)
def test_no_lab_compares_a_float_of_the_live_run_at_full_precision(page):
    ref = page.with_suffix(".ipynb")
    if not ref.exists():
        pytest.skip(f"{ref.name} has no reference yet (tools/nb_refs.py check reports it)")
    bad = live_run_floats(ref)
    assert not bad, (f"{page.relative_to(ROOT)} glues floats of this machine's run at full "
                     f"precision in cells nbval compares: {bad}. Glue units.shown(x, spec) and "
                     "write {glue:text}`key` with no spec, or tag the cell nbval-ignore-output.")
