"""Tests of helpers.models.virtual_memory: limits and invariants, independent oracles (a
simulated radix walk, a real mapping's fault count, a simulated block allocator), and the
published x86-64 and Core i7 numbers."""

import math
import mmap
import resource

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.models import virtual_memory as vm

# --- published numbers ------------------------------------------------------------------------


def test_x86_64_page_table_depths():
    # CS:APP 3e section 9.7.1: the Core i7 translates 48-bit addresses with a four-level table;
    # a 2 MiB page ends the walk one level early; 57-bit (five-level) paging adds a level.
    assert vm.page_table_levels(48) == 4
    assert vm.page_table_levels(48, vm.PAGE_2M) == 3
    assert vm.page_table_levels(57) == 5


def test_core_i7_tlb_reach():
    # H&P 5th ed. figure 2.19: 64 first-level data-TLB entries and 512 second-level entries
    # for 4 KiB pages.
    assert vm.tlb_reach_bytes(64) == 256 * 1024
    assert vm.tlb_reach_bytes(512) == 2 * 2**20


# --- limits and invariants ------------------------------------------------------------------

@given(st.integers(13, 64))
def test_levels_grow_by_one_per_index_width(v):
    assert vm.page_table_levels(v + 9) == vm.page_table_levels(v) + 1


@given(st.integers(1, 1 << 40), st.sampled_from([vm.PAGE_4K, vm.PAGE_2M]))
def test_faults_cover_the_bytes_with_less_than_a_page_to_spare(n, page):
    f = vm.first_touch_faults(n, page)
    assert (f - 1) * page < n <= f * page


@given(st.lists(st.integers(1, 5000), min_size=1, max_size=50), st.integers(1, 256))
def test_block_waste_is_below_one_block_per_sequence(lens, b):
    w = vm.block_allocation_waste(lens, b)
    allocated = sum(lens) / (1 - w)
    assert 0 <= w < 1
    assert allocated - sum(lens) <= len(lens) * (b - 1) + 1e-6
    assert vm.block_allocation_waste(lens, 1) == 0.0


# --- independent oracles ---------------------------------------------------------------------

def test_levels_match_a_simulated_radix_walk():
    # Build a sparse radix tree for a few addresses and count the table reads of a lookup.
    def walk_depth(v_bits, page_bits, idx_bits):
        remaining, depth = v_bits - page_bits, 0
        while remaining > 0:
            remaining -= idx_bits
            depth += 1
        return depth
    for v in (32, 39, 48, 57):
        for page_bits in (12, 21, 30):
            if v > page_bits:
                assert vm.page_table_levels(v, 2.0**page_bits) == walk_depth(v, page_bits, 9)


@pytest.mark.skipif(not hasattr(resource, "getrusage"), reason="needs getrusage")
def test_fault_count_matches_a_real_mapping():
    import os
    page = os.sysconf("SC_PAGE_SIZE")
    n = 256 * page
    m = mmap.mmap(-1, n)
    a = np.frombuffer(m, dtype=np.uint8)
    f0 = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    a[::page] = 1
    got = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - f0
    del a
    m.close()
    # The kernel may fault around or a stray allocation may add a few; never fewer than 1/2.
    assert vm.first_touch_faults(n, page) / 2 <= got <= vm.first_touch_faults(n, page) + 8


def test_block_waste_matches_a_simulated_allocator():
    rng = np.random.default_rng(3)
    lens = rng.integers(1, 2000, 300)
    b = 16
    free = list(range(100_000))
    table = {i: [] for i in range(len(lens))}
    filled = {i: 0 for i in range(len(lens))}
    for i, n in enumerate(lens):            # grow each sequence token by token
        for _ in range(int(n)):
            if filled[i] % b == 0:
                table[i].append(free.pop())
            filled[i] += 1
    slots = b * sum(len(t) for t in table.values())
    assert vm.block_allocation_waste(lens.tolist(), b) == pytest.approx(1 - lens.sum() / slots)


def test_first_touch_time_is_faults_times_fault_cost():
    assert vm.first_touch_s(10 * vm.PAGE_4K + 1, 1e-6) == pytest.approx(11e-6)


# --- bad input --------------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda: vm.page_table_levels(12),
    lambda: vm.page_table_levels(48, 3000),
    lambda: vm.page_table_levels(48, pte_bytes=8192),
    lambda: vm.tlb_reach_bytes(0),
    lambda: vm.first_touch_faults(-1),
    lambda: vm.first_touch_s(1 << 20, math.nan),
    lambda: vm.block_allocation_waste([], 16),
    lambda: vm.block_allocation_waste([0, 3], 16),
    lambda: vm.block_allocation_waste([5], 0),
])
def test_bad_input_raises_value_error(call):
    with pytest.raises(ValueError):
        call()
