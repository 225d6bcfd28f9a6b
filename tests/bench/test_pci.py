"""Tests of helpers.bench.pci: the sysfs reader on a fake tree, the copies, the bounce copy."""

import numpy as np
import pytest

from helpers.bench import pci


def _dev(root, addr, **files):
    d = root / addr
    d.mkdir(parents=True)
    for name, text in files.items():
        (d / name).write_text(text + "\n")


def test_reads_a_fake_sysfs_tree(tmp_path):
    _dev(tmp_path, "0000:17:00.0", **{"class": "0x030200", "vendor": "0x10de", "numa_node": "0",
         "current_link_speed": "32.0 GT/s PCIe", "current_link_width": "16",
         "max_link_speed": "32.0 GT/s PCIe", "max_link_width": "16"})
    _dev(tmp_path, "0000:00:03.0", **{"class": "0x020000", "vendor": "0x1af4",
                                      "numa_node": "-1"})
    _dev(tmp_path, "0000:00:1f.0", **{"class": "0x060100", "vendor": "0x8086",
                                      "current_link_speed": "Unknown",
                                      "current_link_width": "0"})
    devs = pci.pci_devices(tmp_path)
    assert [d.address for d in devs] == ["0000:00:03.0", "0000:00:1f.0", "0000:17:00.0"]
    gpu = devs[-1]
    assert gpu.has_link and gpu.generation == 5 and gpu.current_width == 16
    assert gpu.class_name == "processing accelerator" or gpu.class_name == "display (GPU)"
    assert gpu.numa_node == 0
    virt, bridge = devs[0], devs[1]
    assert not virt.has_link and virt.numa_node is None and virt.class_name == "network"
    assert not bridge.has_link and bridge.current_width is None and bridge.generation is None


def test_no_sysfs_gives_an_empty_list(tmp_path):
    assert pci.pci_devices(tmp_path / "absent") == []


@pytest.mark.parametrize("text, want", [("8.0 GT/s PCIe", 8e9), ("2.5 GT/s", 2.5e9),
                                        ("64.0 GT/s PCIe", 64e9), ("Unknown", None),
                                        ("", None), (None, None)])
def test_parse_link_speed(text, want):
    assert pci.parse_link_speed(text) == want


def test_copy_times_checks_and_times():
    res = pci.copy_times([2**12, 2**16], budget_s=0.01)
    assert len(res) == 2 and all(r.checked and r.median_s > 0 for r in res)


def test_bounce_copy_is_exact_for_uneven_chunks():
    src, dst = pci.make_buffers(8 * 1000 + 8 * 7)
    bounce = np.empty(64)
    pci.bounce_copy(src, dst, bounce)
    assert np.array_equal(src, dst) and src.min() >= 0.5


def test_make_buffers_rejects_tiny():
    with pytest.raises(ValueError, match="n_bytes"):
        pci.make_buffers(4)
