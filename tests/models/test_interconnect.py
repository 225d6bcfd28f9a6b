"""Tests of helpers.models.interconnect: limits, independent oracles, published numbers."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import specs
from helpers.models import interconnect as ic
from helpers.models.latency_bandwidth import transfer_time_s

GENS = sorted(ic.PCIE_GENERATIONS)
LANES = [1, 2, 4, 8, 16]

# The Linux kernel's macro, re-typed as the kernel computes it (integer Mb/s per lane):
# drivers/pci/pci.h, PCIE_SPEED2MBS_ENC. pcie_bandwidth_capable() multiplies by the width.
KERNEL_MBS_ENC = {1: 2500 * 8 // 10, 2: 5000 * 8 // 10, 3: 8000 * 128 // 130,
                  4: 16000 * 128 // 130, 5: 32000 * 128 // 130, 6: 64000 * 1 // 1}


@pytest.mark.parametrize("gen", GENS)
@pytest.mark.parametrize("lanes", LANES)
def test_pcie_matches_the_kernels_integer_arithmetic(gen, lanes):
    kernel_bits_per_s = KERNEL_MBS_ENC[gen] * lanes * 1e6
    ours = ic.pcie_bytes_per_s(generation=gen, lanes=lanes) * 8
    # The kernel truncates each lane's Mb/s to an integer: at most 1 Mb/s per lane below ours.
    assert 0 <= ours - kernel_bits_per_s < lanes * 1e6 + 1e-3


def test_kernel_log_line_reproduced():
    # The kernel logs "252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)".
    assert KERNEL_MBS_ENC[4] * 16 / 1e3 == pytest.approx(252.048)
    assert ic.pcie_bytes_per_s(generation=4, lanes=16) * 8 / 1e9 == pytest.approx(252.048,
                                                                                rel=1e-4)


@pytest.mark.parametrize("gen, link", [(4, specs.PCIE_GEN4_X16), (5, specs.PCIE_GEN5_X16)])
def test_datasheet_pcie_numbers_are_the_raw_bidirectional_rate(gen, link):
    # NVIDIA A100 datasheet "PCIe Gen4: 64 GB/s"; H100 datasheet "PCIe Gen5: 128 GB/s".
    raw = ic.pcie_raw_bidirectional_bytes_per_s(generation=gen, lanes=16)
    assert raw == link.bidirectional_bytes_per_s
    # After encoding, each direction carries 128/130 of half of it.
    assert ic.pcie_bytes_per_s(generation=gen, lanes=16) == pytest.approx(
        link.per_direction_bytes_per_s * 128 / 130)


def test_each_generation_doubles_and_width_scales_linearly():
    for g in range(3, 5):  # gen 6 drops the encoding, so it more than doubles
        assert ic.pcie_bytes_per_s(generation=g + 1, lanes=16) == pytest.approx(
            2 * ic.pcie_bytes_per_s(generation=g, lanes=16))
    for w in (1, 2, 4, 8):
        assert ic.pcie_bytes_per_s(generation=5, lanes=2 * w) == pytest.approx(
            2 * ic.pcie_bytes_per_s(generation=5, lanes=w))
    # The move from 8b/10b to 128b/130b: gen 3 at 8 GT/s carries more than 1.5x gen 2 at 5.
    assert ic.pcie_bytes_per_s(generation=3, lanes=1) / ic.pcie_bytes_per_s(
        generation=2, lanes=1) == pytest.approx(8 * 128 / 130 / (5 * 0.8))


@pytest.mark.parametrize("kw", [dict(generation=7, lanes=16), dict(generation=0, lanes=16),
                                dict(generation=True, lanes=16), dict(generation=5, lanes=3),
                                dict(generation=5, lanes=0), dict(generation=5, lanes=-16),
                                dict(generation=5, lanes=16.5)])
def test_pcie_rejects_bad_input(kw):
    with pytest.raises(ValueError, match="generation|lanes"):
        ic.pcie_bytes_per_s(**kw)


@given(w=st.floats(1e3, 1e13), b=st.floats(1e6, 1e13), eta=st.floats(0.01, 1.0))
def test_weight_time_is_the_transfer_time_without_latency(w, b, eta):
    t = ic.weight_transfer_time_s(weight_bytes=w, link_bytes_per_s=b, efficiency=eta)
    assert t == pytest.approx(float(transfer_time_s(w, 0.0, eta * b)))
    assert t >= ic.weight_transfer_time_s(weight_bytes=w, link_bytes_per_s=b)


def test_h200_hbm_against_pcie_ratio():
    h = specs.gpu("H200")
    w = 140e9
    t_pcie = ic.weight_transfer_time_s(weight_bytes=w, link_bytes_per_s=h.pcie.per_direction_bytes_per_s)
    t_hbm = ic.weight_transfer_time_s(weight_bytes=w, link_bytes_per_s=h.hbm_bytes_per_s)
    assert t_pcie / t_hbm == pytest.approx(4.8e12 / 64e9) == pytest.approx(75.0)


@pytest.mark.parametrize("kw", [dict(weight_bytes=0, link_bytes_per_s=1e9),
                                dict(weight_bytes=-1, link_bytes_per_s=1e9),
                                dict(weight_bytes=1e9, link_bytes_per_s=0),
                                dict(weight_bytes=float("nan"), link_bytes_per_s=1e9),
                                dict(weight_bytes=1e9, link_bytes_per_s=1e9, efficiency=0),
                                dict(weight_bytes=1e9, link_bytes_per_s=1e9, efficiency=1.5)])
def test_weight_time_rejects_bad_input(kw):
    with pytest.raises(ValueError):
        ic.weight_transfer_time_s(**kw)


def _simulate_pipeline(n_bytes, hops, chunk):
    """Event simulation: chunk j leaves hop i when it has arrived from hop i-1 and hop i has
    finished chunk j-1 (a flow shop with one machine per hop)."""
    n_chunks = max(1, math.ceil(n_bytes / chunk - 1e-9))
    done = [0.0] * len(hops)  # time each hop finished its previous chunk
    for _ in range(n_chunks):
        ready = 0.0
        for i, b in enumerate(hops):
            start = max(ready, done[i])
            done[i] = start + chunk / b
            ready = done[i]
    return done[-1]


@settings(max_examples=60, deadline=None)
@given(hops=st.lists(st.floats(1e8, 1e11), min_size=1, max_size=4),
       n_chunks=st.integers(1, 300), chunk=st.floats(1e3, 1e8))
def test_staged_copy_matches_a_pipeline_simulation(hops, n_chunks, chunk):
    n = n_chunks * chunk
    got = ic.staged_copy_time_s(n_bytes=n, hop_bytes_per_s=hops, chunk_bytes=chunk)
    assert got == pytest.approx(_simulate_pipeline(n, hops, chunk), rel=1e-9)


@given(hops=st.lists(st.floats(1e8, 1e11), min_size=1, max_size=4), n=st.floats(1e6, 1e11))
def test_staged_copy_limits(hops, n):
    direct = n / min(hops)
    store_forward = sum(n / b for b in hops)
    one = ic.staged_copy_time_s(n_bytes=n, hop_bytes_per_s=hops)
    fine = ic.staged_copy_time_s(n_bytes=n, hop_bytes_per_s=hops, chunk_bytes=n / 1e6)
    serial = ic.staged_copy_time_s(n_bytes=n, hop_bytes_per_s=hops, overlapped=False)
    assert one == pytest.approx(store_forward) == pytest.approx(serial)
    assert direct <= fine * (1 + 1e-12) and fine <= one * (1 + 1e-12)
    assert fine == pytest.approx(direct, rel=1e-5 * len(hops) * max(hops) / min(hops))


@pytest.mark.parametrize("kw", [dict(n_bytes=1e9, hop_bytes_per_s=[]),
                                dict(n_bytes=0, hop_bytes_per_s=[1e9]),
                                dict(n_bytes=1e9, hop_bytes_per_s=[1e9, -1]),
                                dict(n_bytes=1e9, hop_bytes_per_s=[1e9], chunk_bytes=0)])
def test_staged_copy_rejects_bad_input(kw):
    with pytest.raises(ValueError):
        ic.staged_copy_time_s(**kw)
