"""The size sweep's rotation through several tensors (issue 17: its large kernels must stream
from HBM, not from the L2 a single tensor stays in): how many tensors, and that a chain over a
list negates each the right number of times and is checked per tensor."""

from __future__ import annotations

import pytest
import torch

from helpers.kernels import launch_chain as lc
from helpers.labs import launch_overhead as lab

L2 = 50 * 2**20  # an H200's L2


@pytest.mark.parametrize("numel", [1, 1 << 10, 1 << 20, 3 << 20, 1 << 22, 12 << 20, 1 << 24,
                                   1 << 26])
def test_the_rotation_holds_twice_the_l2_when_the_chain_is_long_enough(numel):
    k = lc.sweep_buffers(numel, 100, L2)
    assert 1 <= k <= 100
    if k < 100:  # not capped by the chain: the tensors hold at least twice the L2 ...
        assert k * 4 * numel >= 2 * L2
        if k > 1:  # ... and one fewer would not
            assert (k - 1) * 4 * numel < 2 * L2


def test_no_rotation_without_an_l2_or_for_a_tensor_twice_its_size():
    assert lc.sweep_buffers(1 << 10, 100, 0.0) == 1
    assert lc.sweep_buffers(1 << 26, 100, L2) == 1
    assert lc.sweep_buffers(1, 7, L2) == 7  # at most one tensor per kernel


def test_the_full_sweep_has_sizes_between_32_and_128_mb():
    full = lab.LAB.sizes["sweep_numels"][1]
    between = [n for n in full if 32e6 <= 8.0 * n <= 128e6]
    assert len(between) >= 5 and full == sorted(full)


def test_a_chain_over_a_list_negates_each_tensor_by_its_turns():
    xs = [lc.make_input(5, "cpu", seed=i) for i in range(3)]
    before = [x.clone() for x in xs]
    lc.chain(xs, 7)  # tensors 0, 1, 2 negated 3, 2, 2 times
    assert torch.equal(xs[0], -before[0]) and torch.equal(xs[1], before[1])
    lc.check_chain(xs, before, 7)
    with pytest.raises(AssertionError, match="tensor 0"):
        lc.check_chain(xs, before, 6)  # a count that assumes tensor 0 went twice
