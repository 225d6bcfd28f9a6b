"""One name per quantity (CONTRIBUTING.md, "One name per quantity"), enforced on the signatures
of the public models in ``src/helpers/models/``.

The table in CONTRIBUTING.md is the only list: its "replaces" column names the argument names
that may not come back (``old`` everywhere, or ``old`` of ``module`` / ``module.function``
only), and a "(``module`` only)" in its meaning column keeps a name to those modules.
"""
from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

import helpers.models
from helpers.book import ROOT

CONTRIBUTING = ROOT / "CONTRIBUTING.md"

# (module, parameter) pairs still carrying a replaced name, in modules other work had open;
# tools/rename_after_merge.py renames them and empties this dict.
PENDING: dict = {}

# Exported twice on purpose, with the same meaning (one calls the other, or both are the same
# one-line definition); any other name exported by two model modules must mean one thing.
SAME_MEANING = {"simd_lanes", "weight_bytes", "waves",
                # memory_access's is "useful bytes per second of an access pattern", not
                # latency_bandwidth's n / T(n): renamed by the memory-access work, not here.
                "effective_bandwidth_bytes_per_s"}

RENAMED_FUNCTIONS = {("gpu_peaks", "peak_flop_per_s"): "sm_peak_flop_per_s",
                     ("gpu_peaks", "sparse_peak_flop_per_s"): "sm_sparse_peak_flop_per_s",
                     ("cpu_peak", "peak_flop_per_s"): "cpu_peak_flop_per_s"}


def names_table(text: str):
    """(canonical names, {old: [(scope or None, new names)]}, {name: allowed modules}) of the
    table under "## One name per quantity"."""
    section = text.split("## One name per quantity", 1)[1].split("\n## ", 1)[0]
    rows = [ln for ln in section.splitlines() if ln.startswith("| `")]
    canonical, replaced, only = set(), {}, {}
    for row in rows:
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert len(cells) == 4, row
        names = re.findall(r"`([a-z_][a-z0-9_]*)`", cells[0])
        canonical.update(names)
        m = re.search(r"\(([^()]*) only\)", cells[2])
        if m:
            for n in names:
                only[n] = set(re.findall(r"`([a-z_.]+)`", m.group(1)))
        for item in re.split(r"[,;]\s*(?=`)", cells[3]):
            m = re.match(r"`([a-z_][a-z0-9_]*)`(?: of `([a-z_.]+)`)?", item.strip())
            if m:
                replaced.setdefault(m.group(1), []).append((m.group(2), names))
    return canonical, replaced, only


def model_signatures():
    """(module, function, parameter names) of every public callable of the model modules."""
    out = []
    for info in pkgutil.iter_modules(helpers.models.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"helpers.models.{info.name}")
        for name in getattr(mod, "__all__", ()):
            obj = getattr(mod, name)
            if not callable(obj):
                continue
            try:
                params = tuple(inspect.signature(obj).parameters)
            except (TypeError, ValueError):
                continue
            out.append((info.name, name, params))
    return out


def _in_scope(scope: str | None, module: str, function: str) -> bool:
    return scope is None or scope in (module, f"{module}.{function}")


def violations(signatures, replaced, only):
    """{(module, parameter): message} for every use the table forbids."""
    bad = {}
    for module, function, params in signatures:
        for p in params:
            for scope, new in replaced.get(p, ()):
                if p not in new and _in_scope(scope, module, function):
                    bad[(module, p)] = f"{module}.{function}({p}): say {' or '.join(new)}"
            if p in only and module not in only[p]:
                bad[(module, p)] = (f"{module}.{function}({p}): {p} is kept to "
                                    f"{', '.join(sorted(only[p]))}")
    return bad


TABLE = names_table(CONTRIBUTING.read_text())
SIGNATURES = model_signatures()


def test_the_table_parses_and_every_name_in_it_is_used():
    canonical, replaced, only = TABLE
    assert len(canonical) > 40 and len(replaced) > 15 and only
    used = {p for _, _, params in SIGNATURES for p in params}
    coming = set(PENDING.values())
    assert sorted(canonical - used - coming) == [], "a name in the table no model uses (a typo?)"
    assert set(PENDING.values()) <= canonical


def test_no_replaced_name_is_a_parameter_of_a_public_model():
    bad = violations(SIGNATURES, TABLE[1], TABLE[2])
    assert sorted(m for k, m in bad.items() if k not in PENDING) == []


def test_pending_renames_are_still_pending():
    """An entry of PENDING whose rename has happened must go (tools/rename_after_merge.py)."""
    bad = violations(SIGNATURES, TABLE[1], TABLE[2])
    assert sorted(k for k in PENDING if k not in bad) == []


def test_the_check_catches_a_replaced_name():
    fake = [("roofline", "memory_time_s", ("n_bytes", "hbm_bytes_per_s")),
            ("dram", "lines_in_flight", ("bandwidth_bytes_per_s",)),
            ("latency_bandwidth", "transfer_time_s", ("bandwidth_bytes_per_s",)),
            ("transformer", "training_state_bytes", ("optimizer_bytes_per_param",)),
            ("gemm", "waves", ("n_tiles", "n_sms"))]
    bad = violations(fake, TABLE[1], TABLE[2])
    assert set(bad) == {("roofline", "hbm_bytes_per_s"), ("dram", "bandwidth_bytes_per_s"),
                        ("transformer", "optimizer_bytes_per_param")}
    assert "mem_bytes_per_s" in bad[("roofline", "hbm_bytes_per_s")]


def test_one_function_name_means_one_thing():
    seen = {}
    for module, function, params in SIGNATURES:
        seen.setdefault(function, []).append((module, params))
    twice = {f: v for f, v in seen.items() if len(v) > 1 and f not in SAME_MEANING}
    assert twice == {}
    for (module, old), new in RENAMED_FUNCTIONS.items():
        mod = importlib.import_module(f"helpers.models.{module}")
        assert new in mod.__all__ and old not in mod.__all__


@pytest.mark.parametrize("name", sorted(SAME_MEANING - {"effective_bandwidth_bytes_per_s"}))
def test_a_name_exported_twice_is_exported_twice(name):
    """SAME_MEANING lists only names that really are exported by two modules (the memory-access
    work may rename memory_access's effective_bandwidth_bytes_per_s: not checked here)."""
    homes = [m for m, f, _ in SIGNATURES if f == name]
    assert len(homes) >= 2, (name, homes)


def test_model_modules_take_prefixes_from_units():
    """No model defines its own GB, MiB, us, ... (CONTRIBUTING.md: prefixes only from
    helpers.units)."""
    prefix = re.compile(r"^_?(K|M|G|T|P|[KMGTP]i?B|[kMG]Hz|ns|us|ms|[KMGTP]FLOP)\s*=\s*[\d(]", re.M)
    offenders = []
    for path in sorted((ROOT / "src" / "helpers").rglob("*.py")):
        if path.name != "units.py" and prefix.search(path.read_text()):
            offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []


def test_prefix_check_can_fail():
    prefix = re.compile(r"^_?(K|M|G|T|P|[KMGTP]i?B|[kMG]Hz|ns|us|ms|[KMGTP]FLOP)\s*=\s*[\d(]", re.M)
    assert prefix.search("x = 1\nGiB = 2**30\n") and not prefix.search("GIGA_NOT = 1\n")
