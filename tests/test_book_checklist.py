"""Tests of helpers.book_checklist: every question and tunable is well formed and links pages of
the map; every tunable's check is a well-formed read-only command, and the ones this machine can
answer print a value."""

from __future__ import annotations

import importlib.util
import json
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from helpers import book_checklist, book_map

#: The layers issue 21 names for the tunables, bottom of the stack first.
TEN_LAYERS = ["OS and CPU", "Memory", "Storage", "Network", "GPU and driver", "CUDA runtime",
              "NCCL", "PyTorch", "Compiler", "Serving engine"]
#: The documentation sites the sources come from (the same list as tests/test_book_controls.py).
OFFICIAL = ("docs.nvidia.com", "docs.pytorch.org", "docs.vllm.ai", "huggingface.co",
            "docs.kernel.org", "docs.docker.com", "man7.org", "manpages.ubuntu.com")
TUNABLES = book_checklist.load_tunables()["items"]


def test_every_item_links_pages_that_the_map_knows():
    items = book_checklist.load_checklist()
    labels = book_map.load_map()["pages"]
    assert set(items) <= set(book_map.LAYERS) and len(items) >= 5
    for layer_items in items.values():
        for item in layer_items:
            assert item["q"].endswith("?") and item["do"]
            assert all(p in labels for p in item["pages"])


def test_markdown_links_written_pages_and_marks_the_others():
    text = str(book_checklist.checklist_markdown())
    toc = book_map.built_pages()
    data = book_map.load_map()
    for label in re.findall(r"<(sec-[\w-]+)>`", text):
        assert book_map.is_written(label, data, toc)
    # Layers appear from the top of the stack down.
    heads = re.findall(r"^### (L\d)", text, re.M)
    assert heads == sorted(heads, reverse=True)
    n_items = sum(len(v) for v in book_checklist.load_checklist().values())
    assert text.count("\n- **") + text.startswith("- **") == n_items


# --- the tunables ------------------------------------------------------------------------------

def test_at_least_a_hundred_tunables_over_the_ten_layers_each_with_a_check():
    data = book_checklist.load_tunables()
    names = [layer["name"] for layer in data["layers"].values()]
    assert names == TEN_LAYERS
    assert len(TUNABLES) >= 100
    groups = book_checklist.tunables_by_layer(data)
    assert all(len(items) >= 5 for items in groups.values()), {k: len(v) for k, v in groups.items()}
    labels = book_map.load_map()["pages"]
    for t in TUNABLES:
        assert t["q"].endswith("?") and t["trades"].endswith("."), t["tunable"]
        assert isinstance(t["check"], str) and t["check"].strip() and shlex.split(t["check"])
        assert all(p in labels for p in t["pages"])
        assert re.match(r"https://([\w.-]+)/", t["source"]).group(1) in OFFICIAL, t["source"]
    questions = [t["q"] for t in TUNABLES]
    assert len(set(questions)) == len(questions)


def test_the_knobs_the_issue_names_are_there():
    text = " ".join(t["tunable"] for t in TUNABLES)
    for knob in ["MTU", "net.core.rmem_max", "tcp_congestion_control", "NCCL_IB_HCA",
                 "GPUDirect RDMA", "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE",
                 "TORCH_NCCL_HEARTBEAT_TIMEOUT_SEC", "--kv-cache-dtype", "--tensor-parallel-size",
                 "--speculative-config"]:
        assert knob in text, knob


def test_every_check_is_read_only_and_its_python_compiles():
    for t in TUNABLES:
        assert book_checklist.check_problem(t["check"]) is None, t["check"]
        assert "sudo" not in shlex.split(t["check"])
        for code in book_checklist.python_sources(t["check"]):
            compile(code, t["tunable"], "exec")


def test_every_shell_check_passes_bash_syntax_check():
    if shutil.which("bash") is None:
        pytest.skip("no bash here")
    for t in TUNABLES:
        done = subprocess.run(["bash", "-n", "-c", t["check"]], capture_output=True, text=True,
                              timeout=10)
        assert done.returncode == 0, (t["check"], done.stderr)


@pytest.mark.parametrize("check, reason", [
    ("", "empty"),
    ("sysctl -w net.core.rmem_max=1", "change a setting"),
    ("sysctl net.core.rmem_max=1", "change a setting"),
    ("nvidia-smi -i 0 -pl 300", "change a setting"),
    ("ip link set dev eth0 mtu 9000", "change a setting"),
    ("ethtool -G eth0 rx 4096", "change a setting"),
    ("sudo sysctl net.core.rmem_max", "read-only programs"),
    ("cat /proc/cmdline | tee out", "read-only programs"),
    ("cat /proc/cmdline > out", "shell operator"),
    ("cat /proc/cmdline; rm x", "shell operator"),
    ("cat 'unterminated", "does not parse"),
    ('python -c "print("', "does not compile"),
    ("cat x ||", "empty command"),
])
def test_bad_checks_are_named(check, reason):
    assert reason in book_checklist.check_problem(check)


def _can_answer(t: dict) -> str | None:
    """Why this machine cannot answer ``t``'s check, or ``None``."""
    needs = t.get("needs")
    if needs == "gpu" and shutil.which("nvidia-smi") is None:
        return "no GPU driver here"
    if needs == "rdma" and not Path("/sys/class/infiniband").exists():
        return "no RDMA adapter here"
    if needs == "vllm" and importlib.util.find_spec("vllm") is None:
        return "vLLM is not installed here"
    for code in book_checklist.python_sources(t["check"]):
        for module in re.findall(r"(?:^|; )(?:import|from) (\w+)", code):
            if importlib.util.find_spec(module) is None:
                return f"{module} is not installed here"
    return None


SHELL = [t for t in TUNABLES if not book_checklist.python_sources(t["check"])]
PYTHON = [t for t in TUNABLES if t["check"].startswith("python -c ") and
          len(book_checklist.python_sources(t["check"])) == 1 and " | " not in t["check"]
          and " || " not in t["check"]]


@pytest.mark.parametrize("t", SHELL, ids=[t["tunable"][:40] for t in SHELL])
def test_shell_checks_print_a_value_where_this_machine_has_it(t):
    why = _can_answer(t)
    if why:
        pytest.skip(why)
    program = shlex.split(t["check"])[0]
    if shutil.which(program) is None:
        pytest.skip(f"{program} is not installed here")
    done = subprocess.run(["bash", "-c", t["check"]], capture_output=True, text=True, timeout=20)
    if done.returncode != 0:
        # Hosts differ (containers hide sysctls, a device or module may be absent): a check
        # that fails here says the host lacks it, which the test cannot tell from a wrong
        # command on another machine; the command's form is checked above on every host.
        pytest.skip(f"this host cannot answer it: {(done.stderr or done.stdout).strip()[:120]}")
    assert done.stdout.strip(), (t["check"], "exited 0 but printed nothing")


_RUNNER = """
import contextlib, io, json, sys
out = {}
for code in json.load(sys.stdin):
    buf = io.StringIO()
    try:
        with contextlib.redirect_stdout(buf):
            exec(compile(code, "<check>", "exec"), {"__name__": "__check__"})
        out[code] = ["ok", buf.getvalue()]
    except Exception as exc:
        out[code] = ["error", f"{type(exc).__name__}: {exc}"]
print(json.dumps(out))
"""


def test_python_checks_print_a_value_on_this_machine():
    """One interpreter runs every Python check that needs no GPU, RDMA or vLLM: a misspelt
    attribute (an invented setting) raises, and the test names it."""
    runnable = [t for t in PYTHON if _can_answer(t) is None]
    assert len(runnable) >= 20
    codes = [book_checklist.python_sources(t["check"])[0] for t in runnable]
    done = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(codes),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(done.stdout.strip().splitlines()[-1])
    bad = {code: r for code, r in results.items() if r[0] != "ok" or not r[1].strip()}
    assert not bad, bad


def test_tunables_markdown_has_a_section_per_layer_and_an_entry_per_tunable():
    text = str(book_checklist.tunables_markdown())
    assert re.findall(r"^### (.+)$", text, re.M) == TEN_LAYERS
    entries = re.findall(r"^- \*\*(.+?)\*\* .+\n  Check.*: `(.+)`  \n  Taught in .+$", text, re.M)
    order = [t for group in book_checklist.tunables_by_layer().values() for t in group]
    assert [(q, c) for q, c in entries] == [(t["q"], t["check"]) for t in order]
    toc, data = book_map.built_pages(), book_map.load_map()
    for label in re.findall(r"<(sec-[\w-]+)>`", text):
        assert book_map.is_written(label, data, toc)
    n_closest = sum(bool(t.get("closest")) for t in TUNABLES)
    assert text.count("the link is the closest one") == n_closest > 0


_GOOD = dict(layer="x", q="Q?", tunable="K", trades="T.", check="cat /proc/cmdline",
             pages=["sec-map"], source="https://docs.kernel.org/")


def _file(**change) -> dict:
    return {"questions": {}, "tunable_layers": {"x": {"name": "X", "map": "L1"}},
            "tunables": [{**_GOOD, **change}]}


@pytest.mark.parametrize("bad, match", [
    ({"L9": []}, "needs a questions key"),
    ({"questions": {"L9": []}}, "unknown layer"),
    ({"questions": {"L1": [{"q": "x?", "do": "y"}]}}, "needs q, do and pages"),
    ({"questions": {"L1": [{"q": "x?", "do": "y", "pages": ["sec-nowhere"]}]}}, "not on the map"),
])
def test_bad_checklists_are_rejected(tmp_path, bad, match):
    path = tmp_path / "c.yml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ValueError, match=match):
        book_checklist.load_checklist(path)


@pytest.mark.parametrize("bad, match", [
    ({"questions": {}}, "tunable_layers and tunables"),
    ({**_file(), "tunable_layers": {"x": {"name": "X", "map": "L9"}}}, "map layer"),
    (_file(check=None), "is empty"),
    ({**_file(), "tunables": [{k: v for k, v in _GOOD.items() if k != "check"}]}, "needs"),
    (_file(layer="y"), "unknown layer"),
    (_file(pages=["sec-nowhere"]), "not on the map"),
    (_file(source="http://x.org/"), "https"),
    (_file(check="sysctl -w vm.swappiness=1"), "change a setting"),
    (_file(check="rm -rf /tmp/x"), "read-only programs"),
    (_file(needs="moon"), "valid"),
    (_file(closest="yes"), "closest"),
])
def test_bad_tunables_are_rejected(tmp_path, bad, match):
    path = tmp_path / "c.yml"
    path.write_text(yaml.safe_dump(bad))
    with pytest.raises(ValueError, match=match):
        book_checklist.load_tunables(path)
