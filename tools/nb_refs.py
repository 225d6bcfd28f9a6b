#!/usr/bin/env python
"""Reference notebooks for nbval, generated from the book's MyST-markdown pages.

Each page ``foo.md`` that is a notebook (it has a ``kernelspec``) gets a sibling ``foo.ipynb``
holding the outputs of a run on a CPU in a fixed environment. ``pytest --nbval`` re-runs the
page and compares every output against it, except cells tagged ``nbval-ignore-output``
(timings, device names, measured values). A reference is *stale* when the page's code or cell
tags changed since it was made; ``check`` fails on a stale or missing reference, so a changed
page cannot be compared against old outputs.

    python tools/nb_refs.py update [PAGE.md ...]   # execute pages, write their .ipynb
    python tools/nb_refs.py check  [PAGE.md ...]   # fail if a reference is missing or stale
    python tools/nb_refs.py list                   # print the reference notebooks' paths
    python tools/nb_refs.py compare [--jobs N] [PAGE.md ...]
                                # nbval: run the pages on another SIMD path, compare outputs

Authors edit only the ``.md``; they run ``update`` and commit both files, reviewing the
``.ipynb`` diff like a golden file. PNG images are dropped from references (nbval never
compares them), which keeps the files small.

``compare`` is the nbval stage of ``tools/test``: it runs ``pytest --nbval`` over the reference
notebooks with ``helpers.book.OTHER_SIMD_ENV`` set, so the pages run on other kernels than the
ones that made their references (CONTRIBUTING.md, "What nbval compares").
"""

from __future__ import annotations

import argparse
import concurrent.futures as cf
import hashlib
import os
import pathlib
import sys

from helpers.bench.sizes import SIZE_ENV

# The same kernel environment as tests/conftest.py: the reference run and the test run agree.
os.environ["PYTHONHASHSEED"] = "0"
os.environ["OMP_NUM_THREADS"] = "1"
os.environ[SIZE_ENV] = "small"
os.environ.pop("MPLBACKEND", None)

import jupytext  # noqa: E402
import nbformat  # noqa: E402
from nbclient import NotebookClient  # noqa: E402

from helpers.book import OTHER_SIMD_ENV, ROOT, notebook_pages  # noqa: E402

SIGNATURE_KEY = "book_source_sha256"


def sources(files: list[str]) -> list[pathlib.Path]:
    if files:
        return [pathlib.Path(f).resolve() for f in files]
    return notebook_pages(ROOT)


def code_signature(nb) -> str:
    """Hash of the code cells and their tags: what decides the outputs."""
    h = hashlib.sha256()
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        h.update(cell.source.encode())
        h.update(repr(sorted(cell.metadata.get("tags", []))).encode())
        h.update(b"\x00")
    return h.hexdigest()


def update(md: pathlib.Path, timeout: int) -> str:
    nb = jupytext.read(md)
    client = NotebookClient(nb, timeout=timeout, kernel_name="python3",
                            resources={"metadata": {"path": str(md.parent)}},
                            record_timing=False)
    client.execute()
    for key in ("widgets", "language_info"):
        nb.metadata.pop(key, None)
    nb.metadata[SIGNATURE_KEY] = code_signature(nb)
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
        cell.pop("id", None)
        for out in cell.get("outputs", []):
            for mime in ("image/png", "image/jpeg"):
                out.get("data", {}).pop(mime, None)
    nb.nbformat_minor = 4
    ref = md.with_suffix(".ipynb")
    nbformat.write(nb, ref)
    return f"updated {ref.relative_to(ROOT)}"


def check(md: pathlib.Path) -> str | None:
    ref = md.with_suffix(".ipynb")
    rel = ref.relative_to(ROOT)
    if not ref.exists():
        return f"{rel} is missing"
    stored = nbformat.read(ref, as_version=4).metadata.get(SIGNATURE_KEY)
    if stored != code_signature(jupytext.read(md)):
        return f"{rel} is stale: the code or tags of {md.name} changed since it was made"
    return None


def compare(pages: list[pathlib.Path], jobs: int) -> int:
    """nbval over the pages' reference notebooks, run on another SIMD path; pytest's status."""
    import subprocess

    env = {**os.environ, **OTHER_SIMD_ENV}
    print("==> comparing on another SIMD path than the references': "
          + " ".join(f"{k}={v!r}" for k, v in OTHER_SIMD_ENV.items()), flush=True)
    refs = [str(md.with_suffix(".ipynb").relative_to(ROOT)) for md in pages]
    cmd = [sys.executable, "-m", "pytest", "-q", "--nbval", "--nbval-current-env",
           "--nbval-sanitize-with", "tests/nbval_sanitize.cfg"]
    if jobs > 1:
        cmd += ["-n", str(jobs), "--dist", "loadfile"]
    return subprocess.call(cmd + refs, cwd=ROOT, env=env)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("cmd", choices=["update", "check", "list", "compare"])
    ap.add_argument("files", nargs="*")
    ap.add_argument("--timeout", type=int, default=600, help="per-cell timeout, seconds")
    ap.add_argument("--jobs", type=int, default=1, help="pages executed at once (update, compare)")
    args = ap.parse_intermixed_args()
    pages = sources(args.files)
    if args.cmd == "list":
        print("\n".join(str(md.with_suffix(".ipynb").relative_to(ROOT)) for md in pages))
        return 0
    if args.cmd == "compare":
        return compare(pages, args.jobs)
    if args.cmd == "update":
        failures = 0
        with cf.ProcessPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            futures = {pool.submit(update, md, args.timeout): md for md in pages}
            for fut in cf.as_completed(futures):
                try:
                    print(fut.result(), flush=True)
                except Exception as exc:  # report every failing page, then fail
                    failures += 1
                    print(f"FAILED {futures[fut].relative_to(ROOT)}: {exc}", file=sys.stderr)
        return 1 if failures else 0
    problems = [p for p in map(check, pages) if p]
    for p in problems:
        print(f"{p} -> run: python tools/nb_refs.py update", file=sys.stderr)
    if not problems:
        print(f"{len(pages)} reference notebooks are current")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
