"""The optimization checklist, generated from ``book_checklist.yml``.

Two parts. The *questions* are asked of a slow workload, by layer of the learning map
(:mod:`helpers.book_map`), each with what to measure or change. The *tunables* are the knobs,
grouped by the software layer that owns them (OS and CPU, memory, storage, network, GPU and driver,
CUDA runtime, NCCL, PyTorch, compiler, serving engine), each with what it trades, a read-only
command that prints its current value on a Linux GPU host, and the official documentation it was
checked against. Both link the pages that explain them by label; a page not yet written is named
and marked *(to come)*, exactly as on the learning map, and a tunable that no page teaches links
the closest page and says so.

Used by: appendix/checklist.md.
"""

from __future__ import annotations

import shlex
from functools import lru_cache
from pathlib import Path

import yaml

from .book_map import LAYERS, ROOT, Markdown, _item, built_pages, load_map

__all__ = ["CHECKLIST_PATH", "TUNABLE_FIELDS", "OPTIONAL_TUNABLE_FIELDS", "NEEDS",
           "load_checklist", "load_tunables", "tunables_by_layer", "check_problem",
           "python_sources", "checklist_markdown", "tunables_markdown"]

CHECKLIST_PATH = Path(__file__).with_name("book_checklist.yml")
#: Fields every tunable has, and those it may have.
TUNABLE_FIELDS = ("layer", "q", "tunable", "trades", "check", "pages", "source")
OPTIONAL_TUNABLE_FIELDS = ("needs", "closest")
#: What a check may need to print a value: a GPU and its driver, an RDMA adapter, vLLM.
NEEDS = ("gpu", "rdma", "vllm")
_NEEDS_TEXT = {"gpu": "a GPU and its driver", "rdma": "an RDMA adapter", "vllm": "vLLM"}

#: Programs a check may run: each only reads. Flags that would change a setting are refused below.
_READERS = {"cat", "grep", "sysctl", "ip", "ss", "ethtool", "nvidia-smi", "nvcc", "printenv",
            "echo", "env", "python", "python3", "ps", "pgrep", "lsmod", "df", "findmnt", "curl",
            "ibv_devinfo", "numactl", "lscpu", "nproc"}
#: Arguments that turn a reader into a writer, by program.
_WRITES = {
    "nvidia-smi": {"-pm", "-lgc", "-rgc", "-lmc", "-rmc", "-pl", "-c", "-mig", "-ac", "-rac",
                   "-r", "-e", "-am", "--persistence-mode", "--power-limit", "--compute-mode",
                   "--lock-gpu-clocks", "--reset-gpu-clocks", "--gpu-reset", "--ecc-config"},
    "ip": {"set", "add", "del", "delete", "change", "replace", "flush"},
    "sysctl": {"-w", "--write", "-p", "--load", "--system"},
    "ethtool": {"-s", "-C", "-G", "-L", "-K", "-A", "-E", "-X", "-N", "-U", "-r", "-f", "-W"},
    "curl": {"-X", "--request", "-d", "--data", "-o", "--output", "-O", "-T", "--upload-file",
             "-F", "--form"},
    "numactl": {"--membind", "-m", "--cpunodebind", "-N", "--physcpubind", "-C", "--interleave",
                "-i", "--preferred"},
    "env": {"-i", "-u", "-S"},
}
_OPERATORS = {"|", "||", "&&"}


@lru_cache(maxsize=4)
def _load(path: str) -> dict:
    return yaml.safe_load(Path(path).read_text(encoding="utf-8"))


def _segments(check: str) -> list[list[str]]:
    """The simple commands of a check, split at pipes and ``||``/``&&``; raises ValueError on a
    quoting error or on any other shell operator (a redirection, ``;``, ``&``)."""
    lex = shlex.shlex(check, posix=True, punctuation_chars=True)
    lex.whitespace_split = True
    segments, current = [], []
    for token in lex:
        if token in _OPERATORS:
            segments.append(current)
            current = []
        elif token and set(token) <= set("();<>|&"):
            raise ValueError(f"shell operator {token!r}")
        else:
            current.append(token)
    segments.append(current)
    return segments


def check_problem(check: object) -> str | None:
    """Why ``check`` is not a well-formed read-only command, or ``None`` when it is.

    A check is one shell line of simple commands joined by ``|``, ``||`` or ``&&``; each runs a
    program from a list of readers, with no argument that would change a setting, no redirection
    and no ``sudo``; Python code given with ``-c`` must compile.

    >>> check_problem("sysctl net.core.rmem_max") is None
    True
    >>> check_problem("sysctl -w net.core.rmem_max=1")
    "'sysctl' with '-w' would change a setting"
    >>> check_problem("sudo cat /proc/cmdline")
    "'sudo' is not one of the read-only programs"
    >>> check_problem("cat /proc/cmdline > out.txt")
    "does not parse as a read-only shell line: shell operator '>'"
    """
    if not isinstance(check, str) or not check.strip():
        return "is empty"
    try:
        segments = _segments(check)
        shlex.split(check)
    except ValueError as exc:
        return f"does not parse as a read-only shell line: {exc}"
    for words in segments:
        if not words:
            return "has an empty command between operators"
        program, args = words[0], words[1:]
        if program not in _READERS:
            return f"{program!r} is not one of the read-only programs"
        bad = [a for a in args if a in _WRITES.get(program, ())]
        if program == "sysctl":
            bad += [a for a in args if "=" in a]
        if bad:
            return f"{program!r} with {bad[0]!r} would change a setting"
    for code in python_sources(check):
        try:
            compile(code, "<check>", "exec")
        except SyntaxError as exc:
            return f"has Python code that does not compile: {exc.msg}"
    return None


def python_sources(check: str) -> list[str]:
    """The Python code of each ``python -c CODE`` command in ``check``.

    >>> python_sources('printenv X || python -c "import os; print(os.sep)"')
    ['import os; print(os.sep)']
    """
    out = []
    for words in _segments(check):
        if words and words[0] in ("python", "python3") and len(words) >= 3 and words[1] == "-c":
            out.append(words[2])
    return out


def load_checklist(path: str | Path | None = None) -> dict:
    """The questions, ``{layer: [{"q", "do", "pages"}, ...]}``, layers as in the map, checked for shape."""
    data = _load(str(path or CHECKLIST_PATH))
    if not isinstance(data, dict) or "questions" not in data:
        raise ValueError("the checklist file needs a questions key")
    questions = data["questions"]
    labels = load_map()["pages"]
    for layer, items in questions.items():
        if layer not in LAYERS:
            raise ValueError(f"unknown layer {layer!r} in the checklist; the map has {LAYERS}")
        for item in items:
            if set(item) != {"q", "do", "pages"} or not item["pages"]:
                raise ValueError(f"checklist item needs q, do and pages: {item!r}")
            unknown = [p for p in item["pages"] if p not in labels]
            if unknown:
                raise ValueError(f"checklist item {item['q']!r} names pages not on the map: {unknown}")
    return questions


def load_tunables(path: str | Path | None = None) -> dict:
    """The tunables, ``{"layers": {key: {"name", "map"}}, "items": [{...}, ...]}``, checked.

    Raises ``ValueError`` naming the first tunable with a missing or unknown field, an unknown
    layer, a page the map does not know, a source that is not ``https``, a check that is not a
    well-formed read-only command (:func:`check_problem`), or an unknown ``needs``.
    """
    data = _load(str(path or CHECKLIST_PATH))
    if not isinstance(data, dict) or not {"tunable_layers", "tunables"} <= set(data):
        raise ValueError("the checklist file needs tunable_layers and tunables keys")
    layers, labels = data["tunable_layers"], load_map()["pages"]
    for key, layer in layers.items():
        if set(layer) != {"name", "map"} or layer["map"] not in LAYERS:
            raise ValueError(f"tunable layer {key!r} needs a name and a map layer of {LAYERS}")
    for t in data["tunables"]:
        keys = set(t)
        if not set(TUNABLE_FIELDS) <= keys <= set(TUNABLE_FIELDS) | set(OPTIONAL_TUNABLE_FIELDS):
            raise ValueError(f"tunable {t.get('tunable')!r} needs {list(TUNABLE_FIELDS)} (and may "
                             f"have {list(OPTIONAL_TUNABLE_FIELDS)}), got {sorted(keys)}")
        if t["layer"] not in layers:
            raise ValueError(f"tunable {t['tunable']!r} names unknown layer {t['layer']!r}")
        if not t["pages"] or any(p not in labels for p in t["pages"]):
            raise ValueError(f"tunable {t['tunable']!r} names pages not on the map: {t['pages']}")
        if not str(t["source"]).startswith("https://"):
            raise ValueError(f"tunable {t['tunable']!r} needs an https source, got {t['source']!r}")
        problem = check_problem(t["check"])
        if problem:
            raise ValueError(f"tunable {t['tunable']!r}: check {t['check']!r} {problem}")
        if t.get("needs", "gpu") not in NEEDS:
            raise ValueError(f"tunable {t['tunable']!r} needs {t['needs']!r}; valid: {NEEDS}")
        if "closest" in t and t["closest"] is not True:
            raise ValueError(f"tunable {t['tunable']!r}: closest is true or absent")
    return {"layers": layers, "items": data["tunables"]}


def tunables_by_layer(data: dict | None = None) -> dict[str, list[dict]]:
    """The tunables grouped by owning layer, layers in the file's order (bottom of the stack first)."""
    data = data or load_tunables()
    return {key: [t for t in data["items"] if t["layer"] == key] for key in data["layers"]}


def checklist_markdown(root: str | Path | None = None) -> Markdown:
    """The questions as MyST markdown: one section per layer, top of the stack first."""
    items, data, toc = load_checklist(), load_map(), built_pages(root or ROOT)
    out = []
    for layer in reversed(LAYERS):
        if layer not in items:
            continue
        info = data["layers"][layer]
        out.append(f"### {layer}: {info['name']}\n\n*{info['scope']}*\n")
        for item in items[layer]:
            links = ", ".join(_item(p, data, toc) for p in item["pages"])
            out.append(f"- **{item['q']}** {item['do']} ({links})")
        out.append("")
    return Markdown("\n".join(out))


def tunables_markdown(root: str | Path | None = None) -> Markdown:
    """The tunables as MyST markdown: one section per owning layer, and in it one entry per knob
    (the question; the knob and what it trades; the command that prints its value; the pages that
    teach it and the documentation)."""
    tunables, data, toc = load_tunables(), load_map(), built_pages(root or ROOT)
    out = []
    for key, items in tunables_by_layer(tunables).items():
        layer = tunables["layers"][key]
        out.append(f"### {layer['name']}\n\n*Map layer {layer['map']}: "
                   f"{data['layers'][layer['map']]['name']}.*\n")
        for t in items:
            links = ", ".join(_item(p, data, toc) for p in t["pages"])
            if t.get("closest"):
                links += "; no page teaches this knob yet, the link is the closest one"
            needs = f" (needs {_NEEDS_TEXT[t['needs']]})" if "needs" in t else ""
            name = t["tunable"] if " " in t["tunable"] else f"`{t['tunable']}`"  # a variable or flag
            out.append(f"- **{t['q']}** {name}: {t['trades']}  \n"
                       f"  Check{needs}: `{t['check']}`  \n"
                       f"  Taught in {links} · [documentation]({t['source']})")
        out.append("")
    return Markdown("\n".join(out))
