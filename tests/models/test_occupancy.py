"""Tests of helpers.models.occupancy: invariants, two independent oracles (a block-by-block
placement simulator, and NVIDIA's own cuda_occupancy.h compiled and run), the Best Practices
Guide's worked example, and the errors."""

from __future__ import annotations

import dataclasses
import shutil
import subprocess
import sysconfig
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers import specs
from helpers.models import occupancy as occ

MODERN = (specs.SM80, specs.SM90, specs.SM100)
ALL = specs.SM_LIMITS


def _run(t, r, s=0, lim=specs.SM90):
    return occ.occupancy(threads_per_block=t, registers_per_thread=r, smem_bytes=s, limits=lim)


def _launchable(t, r, s, lim):
    try:
        return _run(t, r, s, lim)
    except ValueError:
        return None


configs = st.tuples(st.integers(1, 1024), st.integers(1, 255), st.integers(0, 227 * 1024),
                    st.sampled_from(ALL))


# --- the published worked example --------------------------------------------------------

def test_best_practices_guide_example():
    """CUDA C++ Best Practices Guide, "Calculating Occupancy": on compute capability 7.0, 37
    registers per thread give 12 resident 128-thread blocks (75 % occupancy) but only four
    320-thread blocks (63 %); registers are allocated in units of 256 per warp."""
    small = _run(128, 37, 0, specs.SM70)
    assert (small.blocks_per_sm, small.fraction) == (12, 0.75)
    assert small.binding == ("registers",)
    large = _run(320, 37, 0, specs.SM70)
    assert large.blocks_per_sm == 4 and large.binding == ("registers",)
    assert round(100 * large.fraction + 1e-9) == 63  # 62.5 %, which the guide rounds up
    assert occ.registers_per_warp(37) == 1280


def test_best_practices_guide_register_budget_for_full_occupancy():
    """Same section: with 65,536 registers and 2,048 threads, 100 % occupancy allows at most
    32 registers per thread, whatever the block size."""
    full = [r for r in range(1, 256)
            if occ.best_block_size(registers_per_thread=r, limits=specs.SM70).fraction == 1.0]
    assert max(full) == 32 == specs.SM70.registers_per_sm // specs.SM70.max_threads_per_sm


def test_plain_division_would_miss_the_guides_numbers():
    """Without the sub-partitions, 320-thread blocks would give 5 blocks, not the guide's 4; and
    without the 256-register unit, 128-thread blocks would give 13, not 12. Both rules matter."""
    lim = specs.SM70
    assert lim.registers_per_sm // (37 * 32 * 10) == 5
    assert lim.registers_per_sm // (37 * 128) == 13
    no_parts = dataclasses.replace(lim, register_sub_partitions=1)
    assert _run(320, 37, 0, no_parts).blocks_per_sm == 5


# --- limits and invariants ---------------------------------------------------------------

@given(configs)
def test_fraction_in_unit_interval_and_blocks_within_every_limit(cfg):
    t, r, s, lim = cfg
    o = _launchable(t, r, min(s, lim.max_smem_per_block_bytes), lim)
    if o is None:
        return
    assert 0 < o.fraction <= 1
    assert 1 <= o.blocks_per_sm == min(o.by_limit.values())
    assert o.binding and all(o.by_limit[k] == o.blocks_per_sm for k in o.binding)
    assert o.blocks_per_sm * o.registers_per_block <= lim.registers_per_sm
    assert o.blocks_per_sm * o.smem_per_block_bytes <= lim.smem_per_sm_bytes
    assert o.active_warps <= lim.max_warps_per_sm and o.blocks_per_sm <= lim.max_blocks_per_sm


@given(configs, st.integers(1, 64))
def test_more_registers_never_raise_occupancy(cfg, extra):
    t, r, s, lim = cfg
    s = min(s, lim.max_smem_per_block_bytes)
    lo, hi = _launchable(t, r, s, lim), _launchable(t, min(r + extra, 255), s, lim)
    if lo is None or hi is None:
        return
    assert hi.blocks_per_sm <= lo.blocks_per_sm


@given(configs, st.integers(1, 64 * 1024))
def test_more_shared_memory_never_raises_occupancy(cfg, extra):
    t, r, s, lim = cfg
    s = min(s, lim.max_smem_per_block_bytes)
    lo = _launchable(t, r, s, lim)
    hi = _launchable(t, r, min(s + extra, lim.max_smem_per_block_bytes), lim)
    if lo is None or hi is None:
        return
    assert hi.blocks_per_sm <= lo.blocks_per_sm


@pytest.mark.parametrize("lim", MODERN, ids=lambda l: l.compute_capability)
def test_light_kernels_fill_the_sm(lim):
    # 256-thread blocks, 32 registers, no shared memory: warp slots and registers bind together.
    o = _run(256, 32, 0, lim)
    assert o.fraction == 1.0 and set(o.binding) == {"warps", "registers"}
    # 32-thread blocks run out of block slots first: half the warp slots stay empty.
    tiny = _run(32, 16, 0, lim)
    assert tiny.binding == ("blocks",) and tiny.fraction == 0.5


@pytest.mark.parametrize("lim", MODERN, ids=lambda l: l.compute_capability)
def test_shared_memory_reservation_is_per_block(lim):
    # The largest block that fits leaves room for exactly one block per SM.
    assert _run(128, 32, lim.max_smem_per_block_bytes, lim).blocks_per_sm == 1
    # Half the SM's shared memory per block fits twice only if the reserved KiB fits too.
    half = lim.smem_per_sm_bytes // 2
    assert _run(128, 32, half - lim.smem_reserved_per_block_bytes, lim).blocks_per_sm == 2
    assert _run(128, 32, half - lim.smem_reserved_per_block_bytes + 1, lim).blocks_per_sm == 1


@given(st.integers(1, 10**7), st.integers(1, 32), st.integers(1, 200))
def test_waves_cover_the_grid_with_one_partial_wave_at_most(n, b, sms):
    w = occ.waves(n, b, sms)
    assert (w - 1) * b * sms < n <= w * b * sms


# --- oracle 1: place blocks on a simulated SM one at a time -------------------------------

def _simulate(t, r, s, lim):
    """Place blocks until one no longer fits, tracking every resource by itself: block slots,
    warp slots, shared memory in allocation units, and the register file as P sub-partitions,
    each warp taking its register chunk from whichever sub-partition has the most left."""
    warps = -(-t // lim.warp_size)
    chunk = -(-r * lim.warp_size // lim.register_alloc_unit) * lim.register_alloc_unit
    smem = -(-(s + lim.smem_reserved_per_block_bytes) // lim.smem_alloc_unit_bytes)
    free_parts = [lim.registers_per_sm // lim.register_sub_partitions] * lim.register_sub_partitions
    free_warps, free_smem = lim.max_warps_per_sm, lim.smem_per_sm_bytes // lim.smem_alloc_unit_bytes
    placed = 0
    while placed < lim.max_blocks_per_sm and free_warps >= warps and free_smem >= smem:
        trial = list(free_parts)
        for _ in range(warps):
            i = max(range(len(trial)), key=trial.__getitem__)
            if trial[i] < chunk:
                return placed
            trial[i] -= chunk
        free_parts, free_warps, free_smem = trial, free_warps - warps, free_smem - smem
        placed += 1
    return placed


@given(configs)
def test_agrees_with_a_block_by_block_simulation(cfg):
    t, r, s, lim = cfg
    s = min(s, lim.max_smem_per_block_bytes)
    o = _launchable(t, r, s, lim)
    if o is not None:
        assert o.blocks_per_sm == _simulate(t, r, s, lim)


@pytest.mark.parametrize("r", [16, 32, 37, 40, 64, 96, 128, 168, 255])
@pytest.mark.parametrize("s", [0, 12 * 1024, 48 * 1024, 100 * 1024])
def test_best_block_size_is_the_best_of_all_block_sizes(r, s):
    lim = specs.SM90
    best = occ.best_block_size(registers_per_thread=r, smem_bytes=s, limits=lim)
    scores = {t: o.blocks_per_sm * t for t in range(32, 1025, 32)
              if (o := _launchable(t, r, s, lim)) is not None}
    top = max(scores.values())
    assert best.blocks_per_sm * best.threads_per_block == top
    assert best.threads_per_block == max(t for t, v in scores.items() if v == top)


# --- oracle 2: NVIDIA's occupancy header, compiled and run --------------------------------

_C_DRIVER = r"""
#include <stdio.h>
#include "cuda_occupancy.h"
int main(void) {
  int major, minor, tpsm, regs_sm, regs_blk, t, r; long smem_sm, smem_blk, reserved, s;
  while (scanf("%d %d %d %d %d %ld %ld %ld %d %d %ld", &major, &minor, &tpsm, &regs_sm,
               &regs_blk, &smem_sm, &smem_blk, &reserved, &t, &r, &s) == 11) {
    struct cudaOccDeviceProp p; struct cudaOccFuncAttributes a; struct cudaOccDeviceState st;
    struct cudaOccResult res;
    memset(&p, 0, sizeof p); memset(&a, 0, sizeof a); memset(&st, 0, sizeof st);
    p.computeMajor = major; p.computeMinor = minor; p.maxThreadsPerBlock = 1024;
    p.maxThreadsPerMultiprocessor = tpsm; p.regsPerBlock = regs_blk;
    p.regsPerMultiprocessor = regs_sm; p.warpSize = 32; p.sharedMemPerBlock = 48 * 1024;
    p.sharedMemPerMultiprocessor = smem_sm; p.numSms = 1;
    p.sharedMemPerBlockOptin = smem_blk; p.reservedSharedMemPerBlock = reserved;
    a.maxThreadsPerBlock = 1024; a.numRegs = r; a.sharedSizeBytes = 0;
    a.partitionedGCConfig = PARTITIONED_GC_OFF; a.shmemLimitConfig = FUNC_SHMEM_LIMIT_OPTIN;
    a.maxDynamicSharedSizeBytes = smem_blk; a.numBlockBarriers = 1;
    st.cacheConfig = CACHE_PREFER_NONE; st.carveoutConfig = SHAREDMEM_CARVEOUT_DEFAULT;
    int err = cudaOccMaxActiveBlocksPerMultiprocessor(&res, &p, &a, &st, t, (size_t)s);
    printf("%d %d\n", err, err ? -1 : res.activeBlocksPerMultiprocessor);
  }
  return 0;
}
"""


def _occupancy_header() -> Path | None:
    here = Path(sysconfig.get_paths()["purelib"]) / "triton/backends/nvidia/include"
    for d in (here, Path("/usr/local/cuda/include")):
        if (d / "cuda_occupancy.h").exists():
            return d
    return None


@pytest.fixture(scope="module")
def nvidia_calculator(tmp_path_factory):
    include, cc = _occupancy_header(), shutil.which("cc") or shutil.which("gcc")
    if include is None or cc is None:
        pytest.skip("needs cuda_occupancy.h (shipped with Triton) and a C compiler")
    d = tmp_path_factory.mktemp("occ")
    (d / "occ.c").write_text(_C_DRIVER)
    subprocess.run([cc, "-O1", "-I", str(include), "-o", str(d / "occ"), str(d / "occ.c")],
                   check=True, capture_output=True)

    def run(rows):
        text = "\n".join(" ".join(str(v) for v in row) for row in rows) + "\n"
        out = subprocess.run([str(d / "occ")], input=text, capture_output=True, text=True,
                             check=True).stdout.split("\n")
        return [tuple(int(v) for v in line.split()) for line in out if line]

    return run


@pytest.mark.parametrize("lim", MODERN, ids=lambda l: l.compute_capability)
def test_agrees_with_nvidias_occupancy_header(nvidia_calculator, lim):
    major, minor = (int(v) for v in lim.compute_capability.split("."))
    cases = [(t, r, s) for t in (32, 64, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768, 1024)
             for r in (1, 16, 24, 32, 33, 37, 40, 48, 56, 64, 72, 80, 96, 128, 168, 200, 255)
             for s in (0, 1, 1000, 8 * 1024, 20_000, 48 * 1024, 70_000, 100 * 1024,
                       lim.max_smem_per_block_bytes)]
    rows = [(major, minor, lim.max_threads_per_sm, lim.registers_per_sm,
             lim.max_registers_per_block, lim.smem_per_sm_bytes, lim.max_smem_per_block_bytes,
             lim.smem_reserved_per_block_bytes, t, r, s) for t, r, s in cases]
    theirs = nvidia_calculator(rows)
    assert len(theirs) == len(cases)
    mismatches = []
    for (t, r, s), (err, blocks) in zip(cases, theirs):
        ours = _launchable(t, r, s, lim)
        mine = 0 if ours is None else ours.blocks_per_sm
        if err != 0 or mine != blocks:
            mismatches.append((t, r, s, err, blocks, mine))
    assert not mismatches, mismatches[:10]


# --- the data it reads -------------------------------------------------------------------

@pytest.mark.parametrize("lim", MODERN, ids=lambda l: l.compute_capability)
def test_reserved_shared_memory_is_the_gap_between_sm_and_block(lim):
    # The tuning guides: "CUDA reserves 1 KB of shared memory per thread block", hence 163 KB
    # per block of 164 on the A100 and 227 of 228 on the H100.
    assert lim.smem_per_sm_bytes - lim.max_smem_per_block_bytes == lim.smem_reserved_per_block_bytes == 1024


def test_lookup_and_validation():
    assert specs.sm_limits("H200") is specs.SM90 and specs.sm_limits("8.0") is specs.SM80
    with pytest.raises(ValueError, match="unknown compute capability"):
        specs.sm_limits("7.5")
    with pytest.raises(ValueError, match="max_warps_per_sm x warp_size"):
        dataclasses.replace(specs.SM90, max_warps_per_sm=48)
    with pytest.raises(ValueError, match="registers_per_sm"):
        dataclasses.replace(specs.SM90, registers_per_sm=0)
    with pytest.raises(ValueError, match="cannot exceed"):
        dataclasses.replace(specs.SM90, max_smem_per_block_bytes=228 * 1024)


# --- bad input ---------------------------------------------------------------------------

@pytest.mark.parametrize("kw, match", [
    (dict(threads_per_block=0), "threads_per_block"),
    (dict(threads_per_block=1025), "threads_per_block"),
    (dict(threads_per_block=64.5), "threads_per_block"),
    (dict(registers_per_thread=0), "registers_per_thread"),
    (dict(registers_per_thread=256), "registers_per_thread"),
    (dict(smem_bytes=-1), "smem_bytes"),
    (dict(smem_bytes=227 * 1024 + 1), "smem_bytes"),
    (dict(threads_per_block=1024, registers_per_thread=65), "launch would fail"),
    (dict(limits="h100"), "SMLimits"),
])
def test_bad_input(kw, match):
    args = dict(threads_per_block=128, registers_per_thread=32, smem_bytes=0, limits=specs.SM90)
    with pytest.raises(ValueError, match=match):
        occ.occupancy(**{**args, **kw})


def test_bad_input_in_the_helpers():
    with pytest.raises(ValueError, match="threads_per_block"):
        occ.warps_per_block(0)
    with pytest.raises(ValueError, match="registers_per_thread"):
        occ.registers_per_warp(True)
    with pytest.raises(ValueError, match="smem_bytes"):
        occ.smem_per_block_bytes(-5)
    with pytest.raises(ValueError, match="n_sms"):
        occ.waves(10, 1, 0)
    with pytest.raises(ValueError, match="registers_per_thread"):
        occ.best_block_size(registers_per_thread=300, limits=specs.SM90)
