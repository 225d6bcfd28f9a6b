"""Tests of helpers.book_controls: the control-ownership data is well formed, every page label
resolves, the page is placed in the book, and the defaults it states hold where they can be read."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import torch
import yaml

from helpers import book_controls, book_map
from helpers.book import toc_entries

from helpers.book import ROOT  # the repository root, computed once
#: The documentation sites the sources come from (official docs, man pages, kernel docs).
OFFICIAL = ("docs.nvidia.com", "docs.pytorch.org", "docs.vllm.ai", "huggingface.co",
            "docs.kernel.org", "docs.docker.com", "man7.org", "manpages.ubuntu.com")


def test_every_setting_is_well_formed():
    data = book_controls.load_controls()
    settings = data["settings"]
    assert len(settings) >= 50 and len({s["name"] for s in settings}) == len(settings)
    for s in settings:
        assert set(book_controls.FIELDS) <= set(s) <= set(book_controls.FIELDS) | {"default", "check"}
        assert s["layer"] in data["layers"] and s["scope"] in book_controls.SCOPES
        assert re.match(r"https://([\w.-]+)/", s["source"]).group(1) in OFFICIAL, s["source"]
        assert s["trades"].endswith(".") and s["trades"] == s["trades"].strip()
    # every layer owns something, and every layer the brief names is there
    assert all(book_controls.by_layer(data).values())
    names = {layer["name"] for layer in data["layers"].values()}
    assert {"GPU driver", "CUDA runtime", "NCCL", "PyTorch", "Serving engine", "Network stack",
            "Container runtime", "Operating system"} <= names


def test_the_settings_issue_21_names_are_owned_by_their_layers():
    by_name = {s["name"]: s["layer"] for s in book_controls.load_controls()["settings"]}
    wanted = {
        "nccl": ["NCCL_ALGO", "NCCL_PROTO", "NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_P2P_LEVEL",
                 "NCCL_NET_GDR_LEVEL", "NCCL_BUFFSIZE", "NCCL_NVLS_ENABLE", "NCCL_DEBUG",
                 "TORCH_NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_BLOCKING_WAIT",
                 "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC"],
        "network": ["MTU", "net.core.rmem_max, net.core.wmem_max",
                    "net.ipv4.tcp_congestion_control", "IRQ affinity"],
        "container": ["cgroup CPU quota", "cgroup memory limit", "shared-memory size",
                      "GPU visibility"],
        "engine": ["--gpu-memory-utilization", "--max-num-seqs", "--max-num-batched-tokens",
                   "--kv-cache-dtype", "--tensor-parallel-size", "--enable-prefix-caching",
                   "--enable-chunked-prefill", "--speculative-config"],
    }
    for layer, names in wanted.items():
        assert [by_name.get(n) for n in names] == [layer] * len(names), layer


def test_every_check_is_a_read_only_command():
    from helpers import book_checklist
    settings = book_controls.load_controls()["settings"]
    assert all("check" in s for s in settings)
    for s in settings:
        assert book_checklist.check_problem(s["check"]) is None, s["check"]


def test_every_page_label_resolves():
    """A label is on the map; a written page's file is in the book and defines the label."""
    data = book_map.load_map()
    toc = book_map.built_pages()
    for s in book_controls.load_controls()["settings"]:
        page = data["pages"][s["page"]]
        if book_map.is_written(s["page"], data, toc):
            text = (ROOT / f"{page['file']}.md").read_text(encoding="utf-8")
            assert f"({s['page']})=" in text, (s["name"], s["page"])


def test_page_is_in_the_toc_after_the_checklist_and_on_the_map():
    toc = [str(Path(e).with_suffix("")) for e in toc_entries(ROOT)]
    assert toc.index("appendix/control-ownership") == toc.index("appendix/checklist") + 1
    pages = book_map.load_map()["pages"]
    assert pages["sec-control-ownership"]["file"] == "appendix/control-ownership"
    assert pages["sec-control-ownership"]["layer"] == "frame"
    labels = list(pages)
    assert labels.index("sec-control-ownership") == labels.index("sec-checklist") + 1
    checklist = (ROOT / "appendix/checklist.md").read_text(encoding="utf-8")
    assert "{ref}`sec-control-ownership`" in checklist


def test_markdown_has_one_section_per_layer_and_an_entry_per_setting():
    data = book_controls.load_controls()
    text = str(book_controls.controls_markdown())
    heads = re.findall(r"^## (.+)$", text, re.M)
    assert heads == [layer["name"] for layer in data["layers"].values()]
    # a definition-list entry: the bold name, then three definitions (how/who/reach, trades, links)
    entries = re.findall(r"^\*\*(.+)\*\*\n: \*\*How:\*\* .+\n: .+\n: Taught in .+$", text, re.M)
    assert [e.strip("`") for e in entries] == [s["name"] for s in by_layer_order(data)]
    toc, pages = book_map.built_pages(), book_map.load_map()
    for label in re.findall(r"<(sec-[\w-]+)>`", text):
        assert book_map.is_written(label, pages, toc)
    for s in data["settings"]:
        assert f"[documentation]({s['source']})" in text
        if "default" in s:
            assert f"Default: {s['default']}." in text


def by_layer_order(data: dict) -> list[dict]:
    return [s for group in book_controls.by_layer(data).values() for s in group]


def test_anchor_matches_the_ids_sphinx_gives_the_section_titles():
    assert [book_controls.anchor(layer["name"])
            for layer in book_controls.load_controls()["layers"].values()] == [
        "serving-engine", "pytorch", "nccl", "cuda-runtime", "gpu-driver", "network-stack",
        "container-runtime", "operating-system"]


# --- the stated defaults against an independent reading --------------------------------------

def _default(name: str) -> str:
    settings = book_controls.load_controls()["settings"]
    return next(s for s in settings if s["name"] == name)["default"]


def test_pytorch_defaults_match_the_installed_torch():
    # A fresh interpreter's flags (this test does not set them; conftest does not either).
    assert _default("torch.backends.cuda.matmul.allow_tf32") == str(
        torch.backends.cuda.matmul.allow_tf32)
    assert _default("torch.backends.cudnn.benchmark") == str(torch.backends.cudnn.benchmark)


def test_transparent_huge_page_modes_match_the_kernel_when_readable():
    path = Path("/sys/kernel/mm/transparent_hugepage/enabled")
    if not path.exists():
        pytest.skip("this kernel exposes no transparent huge pages")
    modes = set(re.findall(r"\w+", path.read_text()))
    entry = next(s for s in book_controls.load_controls()["settings"]
                 if s["name"] == "transparent huge pages")
    assert modes == set(re.findall(r"`(\w+)`", entry["set"]))


def test_cgroup_cpu_max_default_has_the_kernel_format():
    # The kernel documents cpu.max as "$MAX $PERIOD" with default "max 100000" (cgroup-v2.rst).
    value = _default("cgroup CPU quota").split(" (")[0]
    quota, period = value.split()
    assert quota == "max" and int(period) > 0


_LAYERS = {"x": {"name": "X", "set": "s", "who": "w"}}


def _one(**change) -> dict:
    """A controls file with one setting, good but for ``change``."""
    good = dict(name="a", layer="x", set="s", who="w", scope="process", trades="T.",
                page="sec-map", source="https://x.org/")
    return {"layers": _LAYERS, "settings": [{**good, **change}]}


@pytest.mark.parametrize("bad, match", [
    ({"layers": {}}, "exactly two keys"),
    ({"layers": {"x": {"name": "X"}}, "settings": []}, "needs exactly"),
    ({"layers": _LAYERS, "settings": [{"name": "a", "layer": "x"}]}, "needs"),
    (_one(layer="y"), "unknown layer"),
    (_one(scope="planet"), "scope"),
    (_one(page="sec-nowhere"), "not on the map"),
    (_one(source="http://x.org/"), "https"),
    ({"layers": _LAYERS, "settings": _one()["settings"] * 2}, "twice"),
    (_one(who=" "), "empty"),
    (_one(check="sysctl -w vm.swappiness=1"), "change a setting"),
])
def test_bad_controls_are_rejected(tmp_path, bad, match):
    path = tmp_path / "c.yml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ValueError, match=match):
        book_controls.load_controls(path)
