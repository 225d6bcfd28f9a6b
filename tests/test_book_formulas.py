"""The formula sheet against the helper package it is generated from."""

from __future__ import annotations

import inspect

import pytest

from helpers import book_formulas as bf

from helpers.book import ROOT  # the repository root, computed once
ENTRIES = bf.formula_entries(ROOT)

# The number of public model functions whose docstrings lack an equation or a source when this
# sheet was written. They may only fall: a new model must state both (CONVENTIONS section 3).
MAX_WITHOUT_EQUATION = 45
MAX_WITHOUT_REFERENCE = 34


def test_every_public_model_function_is_on_the_sheet():
    import helpers.models as models
    import importlib
    import pkgutil

    expected = set()
    for info in pkgutil.iter_modules(models.__path__):
        if info.name.startswith("_"):
            continue
        mod = importlib.import_module(f"helpers.models.{info.name}")
        expected |= {(info.name, n) for n in mod.__all__ if inspect.isfunction(getattr(mod, n))}
    assert {(e.module, e.name) for e in ENTRIES} == expected
    text = bf.formula_sheet_markdown(ROOT).text
    missing = [e.name for e in ENTRIES if f"**`{e.name}`**" not in text]
    assert not missing


def test_models_without_an_equation_or_a_source_do_not_grow():
    no_eq = sorted(f"{e.module}.{e.name}" for e in ENTRIES if not e.equation)
    no_ref = sorted(f"{e.module}.{e.name}" for e in ENTRIES
                    if not (e.references or e.module_references))
    assert len(no_eq) <= MAX_WITHOUT_EQUATION, (
        f"{len(no_eq)} model functions lack a '.. math::' line (limit {MAX_WITHOUT_EQUATION}): {no_eq}")
    assert len(no_ref) <= MAX_WITHOUT_REFERENCE, (
        f"{len(no_ref)} model functions lack a References section (limit {MAX_WITHOUT_REFERENCE}): {no_ref}")


def test_equations_reach_the_sheet_without_rest_markup():
    for e in ENTRIES:
        if e.equation:
            assert ":math:" not in e.equation and "``" not in e.equation, e.name
            assert "the page labels" not in e.equation, e.name


def test_a_labelled_equation_is_taught_by_the_page_that_labels_it():
    e = next(e for e in ENTRIES if e.name == "amdahl_speedup")
    assert e.eq_label == "eq-amdahl"
    assert e.page == "chapters/performance-models" and e.page_label == "sec-performance-models"
    assert e.unit == "dimensionless"
    assert e.equation == r"\text{speedup} = \frac{1}{(1 - f) + f / s}"


def test_teaching_page_labels_exist():
    for e in ENTRIES:
        if e.page:
            assert e.page_label, e.name
            assert f"({e.page_label})=" in (ROOT / f"{e.page}.md").read_text()


def test_block_form_math_and_missing_docstring():
    doc = """Bytes.

    .. math::

        Q = 2 L d

    Returns
    -------
    float
        Bytes.
    """
    d = bf.parse_docstring(doc)
    assert d["equation"] == "Q = 2 L d" and d["references"] is None
    assert bf.parse_docstring(None)["equation"] is None


@pytest.mark.parametrize("name,unit", [
    ("kernel_time_lower_bound_s", "s"), ("attainable_flop_per_s", "FLOP/s"),
    ("kv_cache_bytes", "bytes"), ("effective_bandwidth_bytes_per_s", "bytes/s"),
    ("little_arrival_rate_per_s", "1/s"), ("matmul_flop", "FLOP"),
])
def test_unit_from_the_name_suffix(name, unit):
    assert bf.unit_of(name) == unit


def test_the_sheet_has_no_doctest_and_follows_reading_order():
    """Docstring examples stay in the code; a lesson's formulas sit under its page, in the
    order of the table of contents, and every teaching page's section names its entries."""
    text = bf.formula_sheet_markdown(ROOT).text
    assert ">>>" not in text
    from helpers.book import toc_entries

    labels = [bf._label_of(ROOT / f"{f}.md") for f in toc_entries(ROOT)]
    shown = [lab for lab in labels if lab and f"### {{ref}}`{lab}`" in text]
    assert shown == sorted(shown, key=lambda lab: text.index(f"### {{ref}}`{lab}`"))
    e = next(e for e in ENTRIES if e.name == "amdahl_speedup")
    section = text[text.index("### {ref}`sec-performance-models`"):]
    section = section[:section.index("\n### ", 1)]
    assert "**`amdahl_speedup`**" in section
    assert e.inputs and all(f"`{p}`" in section for p in e.inputs)
