"""The book's structure as data: the pages of ``_toc.yml``, in order.

Used by the tooling (``tools/nb_refs.py``), the book's hygiene tests and the browser tests, so
all of them agree on what the book's pages are.

Library only: no page imports it.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

__all__ = ["ROOT", "SRC", "toc_entries", "page_sources", "notebook_pages", "is_notebook",
           "OTHER_SIMD_ENV"]

#: The repository root (the package is installed editable from ``src/``): the one definition.
ROOT = Path(__file__).resolve().parents[2]
#: The folder holding the helper package, for a subprocess's ``PYTHONPATH``.
SRC = ROOT / "src"

#: The environment in which ``tools/nb_refs.py compare`` (the nbval stage of ``tools/test``) runs
#: the pages: another SIMD path than the machine's default, on which the references are made.
#: A CPU float that a page compares beyond the digits it reproduces to then fails on every
#: machine, the one that made the reference included (CONTRIBUTING.md, "What nbval compares"):
#: ATen's AVX2 kernels (not its scalar ones, on which Inductor's C++ code does not compile in
#: torch 2.13), MKL and oneDNN held to SSE4, numpy's AVX2 and AVX-512 loops off.
OTHER_SIMD_ENV = {
    "ATEN_CPU_CAPABILITY": "avx2",
    "MKL_ENABLE_INSTRUCTIONS": "SSE4_2",
    "ONEDNN_MAX_CPU_ISA": "SSE41",
    "NPY_DISABLE_CPU_FEATURES": "X86_V3 X86_V4 AVX512_ICL AVX512_SPR",
    # numpy's OpenBLAS picks its kernels by CPU family (SkylakeX on AVX-512, Haswell on AVX2
    # CPUs such as most desktops and older EPYCs), and np.linalg and np.dot round differently
    # with each: a least-squares fit and a 64-term dot product that passed on an AVX-512 EPYC
    # changed in their 15th digit on an AVX2 machine. Its generic "Prescott" kernels gave the
    # dot product the AVX-512 bits, so the AVX2 family it is.
    "OPENBLAS_CORETYPE": "Haswell",
    # glibc picks FMA versions of exp, pow, sin, log10, ... on CPUs that have FMA, and about 7
    # results in 10,000 differ in their last bit from the versions older x86 CPUs run.
    "GLIBC_TUNABLES": "glibc.cpu.hwcaps=-FMA,-AVX2",
    # Inductor's on-disk cache is not keyed on ATEN_CPU_CAPABILITY (torch 2.13): a kernel built
    # for AVX-512 and loaded by an AVX2 run gave a max error of 9.9 on an RMS norm, and the
    # reverse crashed with "free(): invalid pointer". The other path keeps a cache of its own.
    "TORCHINDUCTOR_CACHE_DIR": str(Path(tempfile.gettempdir()) / "torchinductor-book-other-simd"),
}


def toc_entries(root: str | Path) -> list[str]:
    """Every ``file`` of ``<root>/_toc.yml`` (the root page first), in reading order."""
    import yaml

    toc = yaml.safe_load((Path(root) / "_toc.yml").read_text())
    found = [toc["root"]]

    def walk(node) -> None:
        if isinstance(node, dict):
            if "file" in node:
                found.append(node["file"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(toc.get("parts", []))
    walk(toc.get("chapters", []))
    return found


def page_sources(root: str | Path) -> list[Path]:
    """The source file of every page in the table of contents (``.md`` unless given)."""
    root = Path(root)
    return [(root / e) if Path(e).suffix else (root / e).with_suffix(".md") for e in toc_entries(root)]


def is_notebook(page: Path) -> bool:
    """True if ``page`` is a MyST notebook (it declares a kernel) rather than plain text."""
    return page.exists() and "kernelspec:" in page.read_text(encoding="utf-8")[:2000]


def notebook_pages(root: str | Path) -> list[Path]:
    """The pages that execute: those of :func:`page_sources` that are notebooks."""
    return [p for p in page_sources(root) if is_notebook(p)]
