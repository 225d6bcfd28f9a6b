"""KV paging models: limits, an independent oracle (explicit slot counting) and PagedAttention's
published Fig. 3 example."""

import math

import pytest
from hypothesis import given, strategies as st

from helpers.models import kv_paging as kp
from helpers.models.transformer import LLAMA3_8B, kv_cache_bytes_per_token


@given(st.integers(0, 10_000), st.integers(1, 256))
def test_paging_waste_is_less_than_one_block(n, b):
    blocks = kp.blocks_needed(n, b)
    assert blocks * b >= n and (blocks - 1) * b < max(n, 1)
    assert 0 <= kp.paged_waste_tokens(n, b) <= b - 1
    assert blocks == math.ceil(n / b)  # oracle: float ceiling (exact at these sizes)


def test_blocks_by_filling_slots_one_at_a_time():
    # oracle: hand the sequence slots one by one, opening a block when the last one is full
    for b in (1, 3, 16):
        blocks, free_in_last = 0, 0
        for n in range(1, 60):
            if free_in_last == 0:
                blocks, free_in_last = blocks + 1, b
            free_in_last -= 1
            assert kp.blocks_needed(n, b) == blocks
            assert kp.paged_waste_tokens(n, b) == free_in_last


def test_pagedattention_fig3_contiguous_waste():
    # Kwon et al. (2023), Fig. 3: request A (7 prompt tokens, ends after 3 more) in a 2048-slot
    # chunk leaves 2038 slots never used; request B (3 + 2) in a 512-slot chunk leaves 507.
    assert kp.contiguous_waste_tokens(7 + 3, 2048) == 2038
    assert kp.contiguous_waste_tokens(3 + 2, 512) == 507
    # paged with vLLM's default block of 16 the same two waste 6 and 11 slots
    assert kp.paged_waste_tokens(10, 16) == 6 and kp.paged_waste_tokens(5, 16) == 11


def test_utilization_sharing_and_transfer():
    assert kp.kv_utilization([10, 5], [2048, 512]) == pytest.approx(15 / 2560)
    assert kp.kv_utilization(16, 16) == 1.0
    assert kp.prefix_sharing_saved_blocks(1, 500, 16) == 0
    assert kp.prefix_sharing_saved_blocks(8, 15, 16) == 0  # no full block: nothing shared
    assert kp.prefix_sharing_saved_blocks(8, 100, 16) == 7 * 6
    q = kv_cache_bytes_per_token(LLAMA3_8B, 2)
    assert q == 131072  # 2 x 32 layers x 8 KV heads x 128 x 2 bytes
    t = kp.kv_transfer_time_s(1000, q, 450e9)
    assert t == pytest.approx(1000 * 131072 / 450e9)
    assert kp.kv_transfer_time_s(1000, q, 450e9, latency_s=1e-5) == pytest.approx(t + 1e-5)


@pytest.mark.parametrize("call", [
    lambda: kp.blocks_needed(-1, 16), lambda: kp.blocks_needed(4, 0),
    lambda: kp.blocks_needed(4.5, 16), lambda: kp.contiguous_waste_tokens(20, 10),
    lambda: kp.kv_utilization(5, 0), lambda: kp.kv_utilization(6, 5),
    lambda: kp.prefix_sharing_saved_blocks(0, 4, 4), lambda: kp.kv_transfer_time_s(1, 0, 1),
    lambda: kp.kv_transfer_time_s(1, 1, 1, latency_s=-1),
])
def test_bad_inputs_raise(call):
    with pytest.raises(ValueError):
        call()
