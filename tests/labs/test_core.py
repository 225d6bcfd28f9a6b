"""The lab framework: tiers, result files, provenance, the comparison table."""

import json
import os

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from helpers.bench.sizes import FORCE_CPU_ENV, SIZE_ENV
from helpers.labs import core, report


def test_cpu_tier_is_announced_in_one_deterministic_line(monkeypatch, capsys):
    monkeypatch.setenv(FORCE_CPU_ENV, "1")
    assert core.announce() == "cpu" and core.lab_device() == "cpu"
    out = capsys.readouterr().out
    assert out.count("\n") == 1 and "No CUDA GPU here" in out


def test_result_round_trip(tmp_path, monkeypatch):
    monkeypatch.setenv(SIZE_ENV, "small")
    result = core.new_result("demo_lab", "cpu", budget_s=0.1)
    result["measurements"]["x_s"] = 1.5
    path = core.save_result(result, tmp_path)
    assert path.name == "demo_lab.json"
    back = core.load_result(path)
    assert back["measurements"] == {"x_s": 1.5}
    assert back["tier"] == "cpu" and back["size_tier"] == "small"
    for key in ("device", "torch", "python", "date_utc", "usable_cores"):
        assert key in back["provenance"]
    assert "measured" in core.provenance_line(back)


def test_commit_comes_from_book_commit_when_set(monkeypatch):
    monkeypatch.setenv("BOOK_COMMIT", "abc123def456")
    assert core.new_result("demo", "cpu")["provenance"]["commit"] == "abc123def456"


def test_bad_results_are_refused(tmp_path):
    with pytest.raises(ValueError, match="snake_case"):
        core.new_result("bad name!", "cpu")
    with pytest.raises(ValueError, match="measurements"):
        core.save_result({"lab": "x", "schema": 1, "provenance": {}}, tmp_path)
    with pytest.raises(ValueError, match="allowed|NaN|nan|Out of range"):
        core.save_result({"lab": "x", "schema": 1, "provenance": {},
                          "measurements": {"v": float("nan")}}, tmp_path)
    (tmp_path / "old.json").write_text(json.dumps({"schema": 0}))
    with pytest.raises(ValueError, match="schema"):
        core.load_result(tmp_path / "old.json")


def test_missing_reference_names_the_command(monkeypatch, tmp_path):
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    with pytest.raises(FileNotFoundError, match="python -m helpers.labs.nothing"):
        core.load_reference("nothing")


def test_every_shipped_reference_is_a_valid_gpu_result():
    files = sorted(core.REFERENCE_DIR.glob("*.json"))
    for path in files:
        data = core.load_result(path)
        assert data["lab"] == path.stem
        assert data["tier"] == "gpu" and data["size_tier"] == "full"
        assert "H200" in data["provenance"]["device_name"]
        assert data["provenance"]["commit"], f"{path.name} does not name the measured commit"


def test_table_text_and_html():
    rows = [report.Row("copy", "TB/s", 1e12, model=4.8e12, h200=4.0e12, yours=2e10)]
    t = report.Table("demo", rows, yours_label="this CPU")
    text = str(t)
    assert "+20%" in text and "0.02" in text and "this CPU" in text
    assert "<table" in t._repr_html_() and "<caption>demo</caption>" in t._repr_html_()
    assert report.Row("x", "s", 1.0).error() == "-"
    with pytest.raises(ValueError):
        report.Table("empty", [])
    with pytest.raises(ValueError):
        report.relative_error(1.0, 0.0)
    assert report.relative_error(1.1, 1.0) == pytest.approx(0.1)


def test_cpu_threads_sets_every_usable_core_on_a_cpu_and_nothing_on_a_gpu():
    import torch

    from helpers.bench.probes import usable_cores

    before = torch.get_num_threads()
    with core.cpu_threads("cpu") as n:
        assert n == usable_cores() == torch.get_num_threads()
    assert torch.get_num_threads() == before
    with core.cpu_threads("cuda:0") as n:
        assert n is None and torch.get_num_threads() == before


# --- fastest_config: the autotuning loop of the labs -------------------------------------------

def _timed(times, fail=()):
    """An ``attempt`` that records and returns ``times[cfg["i"]]``, or raises for ``fail``."""
    def attempt(cfg, entry):
        if cfg["i"] in fail:
            raise RuntimeError(f"config {cfg['i']} does not fit " + "x" * 300)
        entry["median_s"] = times[cfg["i"]]
        return entry["median_s"]
    return attempt


def test_fastest_config_keeps_the_minimum_and_records_every_attempt():
    cfgs = [{"i": i} for i in range(4)]
    best, tried = core.fastest_config(cfgs, _timed([3e-3, 1e-3, 2e-3, 1e-3]))
    assert best is cfgs[1]                       # the first of two equal minima
    assert tried == [{"i": 0, "median_s": 3e-3}, {"i": 1, "median_s": 1e-3},
                     {"i": 2, "median_s": 2e-3}, {"i": 3, "median_s": 1e-3}]
    assert cfgs == [{"i": i} for i in range(4)]  # entries are copies: the configs are untouched


@given(st.lists(st.tuples(st.floats(1e-6, 1.0), st.booleans()), min_size=1, max_size=12)
       .filter(lambda xs: not all(f for _, f in xs)))
def test_fastest_config_is_the_argmin_of_what_ran(xs):
    times = [t for t, _ in xs]
    fail = {i for i, (_, f) in enumerate(xs) if f}
    best, tried = core.fastest_config([{"i": i} for i in range(len(xs))], _timed(times, fail))
    ran = [i for i in range(len(xs)) if i not in fail]
    assert best["i"] == min(ran, key=lambda i: times[i])
    assert [("error" in e) for e in tried] == [i in fail for i in range(len(xs))]


def test_fastest_config_records_failures_with_their_message():
    best, tried = core.fastest_config([{"i": 0}, {"i": 1}], _timed([1.0, 2.0], fail={0}),
                                      describe=lambda c: {"name": f"c{c['i']}"},
                                      error_key="failed")
    assert best == {"i": 1}
    assert tried[0]["failed"].startswith("RuntimeError: config 0 does not fit xx")
    assert len(tried[0]["failed"]) == len("RuntimeError: ") + 200  # the message is cut
    assert tried[1] == {"name": "c1", "median_s": 2.0}


def test_a_wrong_result_is_not_a_failed_configuration():
    def attempt(cfg, entry):
        raise AssertionError("max error 5 exceeds 0.06")
    with pytest.raises(AssertionError, match="max error"):
        core.fastest_config([{"i": 0}], attempt)


def test_fastest_config_raises_when_nothing_ran():
    with pytest.raises(ValueError, match="no tiling to try"):
        core.fastest_config([], _timed([]), what="tiling")
    tried = []
    with pytest.raises(core.NoConfigRan, match="no tiling ran: .*config 1 does not fit"):
        core.fastest_config([{"i": 0}, {"i": 1}], _timed([1, 1], fail={0, 1}), what="tiling",
                            tried=tried)
    assert [e["i"] for e in tried] == [0, 1] and all("error" in e for e in tried)
    assert issubclass(core.NoConfigRan, ValueError)


# --- the lab record ------------------------------------------------------------------------

def demo_lab(**kw):
    return core.Lab("demo_lab", **{"pages": ("labs/demo.md",), **kw})


def test_lab_sizes_follow_the_one_size_switch(monkeypatch):
    lab = demo_lab(sizes={"n": (256, 8192), "ks": ([1, 4], [1, 4, 16])}, budget_s=(0.1, 0.4))
    monkeypatch.setenv(SIZE_ENV, "small")
    assert lab.size("n") == 256 and lab.size("ks") == [1, 4] and lab.budget() == 0.1
    lab.size("ks").append(99)  # a caller's list is its own: the table is not changed
    assert lab.size("ks") == [1, 4]
    monkeypatch.setenv(SIZE_ENV, "full")
    assert lab.size("n") == 8192 and lab.size("ks") == [1, 4, 16] and lab.budget() == 0.4
    with pytest.raises(ValueError, match="size must be one of"):
        lab.size("m")


def test_lab_record_refuses_bad_declarations():
    with pytest.raises(ValueError, match="snake_case"):
        core.Lab("bad name", pages=("labs/x.md",))
    with pytest.raises(ValueError, match="pages"):
        core.Lab("x", pages="labs/x.md")
    with pytest.raises(ValueError, match=r"sizes\['n'\] must be a \(small, full\) pair"):
        demo_lab(sizes={"n": 256})
    with pytest.raises(ValueError, match="budget_s must be positive"):
        demo_lab(budget_s=(0.1, 0.0))


def test_lab_names_a_result_and_its_reference():
    lab = demo_lab()
    assert str(lab) == "demo_lab" and f"{lab}.json" == "demo_lab.json"
    assert core.new_result(lab, "cpu")["lab"] == "demo_lab"
    assert core.reference_path(lab) == core.reference_path("demo_lab") == lab.reference_file


def test_lab_bench_uses_its_settings_and_takes_overrides(monkeypatch):
    import helpers.bench

    seen = []
    monkeypatch.setattr(helpers.bench, "bench", lambda fn, **kw: seen.append(kw) or kw)
    monkeypatch.setenv(SIZE_ENV, "small")
    lab = demo_lab(budget_s=(0.2, 1.0), warmup_s=(0.01, 0.1), min_reps=(3, 7), flush_cache=True)
    lab.bench(lambda: None, "cpu", "x")
    assert seen[-1] == dict(device="cpu", name="x", warmup_s=0.01, budget_s=0.2, min_reps=3,
                            env=False, flush_cache=True)
    monkeypatch.setenv(SIZE_ENV, "full")
    lab.bench(lambda: None, "cpu", "y", number=4)
    assert seen[-1]["budget_s"] == 1.0 and seen[-1]["min_reps"] == 7 and seen[-1]["number"] == 4
    assert "flush_cache" not in demo_lab().bench(lambda: None, "cpu", "z")


def test_lab_reference_is_checked_or_none_with_one_line(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path)
    lab = demo_lab()
    assert lab.reference() is None
    assert capsys.readouterr().out == "H200 reference not measured yet for this lab.\n"
    result = core.new_result(lab, "cpu")
    core.save_result(result, tmp_path)
    assert lab.reference()["lab"] == "demo_lab" and capsys.readouterr().out == ""
    (tmp_path / "demo_lab.json").write_text(json.dumps({**result, "lab": "other"}))
    with pytest.raises(ValueError, match="holds lab 'other'"):
        lab.reference()


def test_fmt_has_one_rule_for_no_number():
    assert core.fmt(None) == core.MISSING == "(not measured yet)"
    for x in (float("nan"), float("inf"), -float("inf"), np.float32("nan"), np.float64("inf")):
        assert core.fmt(x) == core.MISSING
    assert core.fmt(4.5e11, ".3g", 1e9) == "450" and core.fmt(7, "d") == "7"
    assert core.fmt(np.float32(0.5), ".2f") == "0.50" and core.fmt("x", "s") == "x"


def test_page_numbers_enforces_the_contract():
    @core.page_numbers(["a", "b"])
    def good(result, scale=1):
        return {"b": core.fmt(result["b"] * scale), "a": "x"}

    # the function's own order is kept: a page's glue, and so its reference notebook, follow it
    assert list(good({"b": 2}, scale=3)) == ["b", "a"] and good({"b": 2}, scale=3)["b"] == "6"
    assert list(good(None)) == ["a", "b"] and set(good(None).values()) == {core.MISSING}
    assert good.__name__ == "good" and good.keys == ("a", "b")

    @core.page_numbers(["a"])
    def extra(result):
        return {"a": "1", "c": "2"}

    @core.page_numbers(["a"])
    def not_text(result):
        return {"a": 1.0}

    with pytest.raises(ValueError, match=r"missing \[\], extra \['c'\]"):
        extra({})
    with pytest.raises(ValueError, match="must return strings"):
        not_text({})


def test_nothing_outside_labs_imports_a_lab_runner():
    """Models, figures and widgets sit below the runners: a figure takes its model from
    helpers.models, never through a runner (which imports torch, kernels and the bench)."""
    import ast

    src = core.ROOT / "src" / "helpers"
    offenders = []
    for path in sorted(src.rglob("*.py")):
        if "labs" in path.relative_to(src).parts[:1]:
            continue  # the framework, the runners and their analysis modules (labs/analysis)
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import) else
                     [("." * node.level) + (node.module or "")]
                     if isinstance(node, ast.ImportFrom) else [])
            if any(n.startswith("helpers.labs") or n.lstrip(".").startswith("labs")
                   for n in names):
                offenders.append(f"{path.relative_to(src)}:{node.lineno}")
    assert offenders == []


def test_every_runner_declares_a_lab_record_with_its_pages():
    from helpers.labs import summary

    for name, _ in summary.LABS:
        module = summary.lab_module(name)
        if not isinstance(module.LAB, core.Lab):  # not migrated yet (checkpointing)
            continue
        assert module.LAB.name == name
        for page in module.LAB.pages:
            assert (core.ROOT / page).exists(), page
            assert page in module.__doc__, f"{name}: its docstring must name {page}"
        assert module.reference_or_none == module.LAB.reference


def test_a_new_lab_is_a_record_measure_functions_and_a_grader(tmp_path, monkeypatch, capsys):
    """What a new runner writes: its record, a measure function, run(), prose_numbers and
    main(); the framework gives it sizes, timing, the result file, the reference and MISSING."""
    from helpers.labs.grading import Verdict

    monkeypatch.setattr(core, "REFERENCE_DIR", tmp_path / "reference")
    LAB = core.Lab("demo_lab", pages=("labs/demo.md",), sizes={"n": (64, 4096)},
                   budget_s=(0.01, 0.1), warmup_s=(0.001, 0.01))

    def measure_sum(device):
        xs = list(range(1, LAB.size("n") + 1))
        want = len(xs) * (len(xs) + 1) // 2
        r = LAB.bench(lambda: sum(xs), device, "sum", check=lambda got: got == want)
        return {"n": len(xs), "bench": core.summarize(r)}

    def run(device):
        result = core.new_result(LAB, device, budget_s=LAB.budget())
        result["measurements"]["sum"] = measure_sum(device)
        return result

    @core.page_numbers(["n", "median_us"])
    def prose_numbers(result):
        m = result["measurements"]["sum"]
        return {"n": core.fmt(m["n"], "d"),
                "median_us": core.fmt(m["bench"]["median_s"], ".3g", 1e-6)}

    def grade(answer):
        return Verdict("sum", "PASS" if answer == 64 * 65 // 2 else "FAIL", [])

    assert LAB.reference() is None and prose_numbers(LAB.reference()) == {
        "n": core.MISSING, "median_us": core.MISSING}
    path = core.run_cli(LAB, run, ["--out", str(tmp_path / "reference"), "--device", "cpu",
                                   "--size", "small"])
    ref = LAB.reference()
    assert path.name == "demo_lab.json" and ref["measurements"]["sum"]["n"] == 64
    assert ref["settings"]["budget_s"] == 0.01 and prose_numbers(ref)["n"] == "64"
    assert grade(2080).passed and not grade(2079).passed


def test_size_flag_reaches_the_size_switch_without_the_environment(monkeypatch, tmp_path):
    """``--size full`` is handed to the size switch directly: the run sees the full tier, and
    the process's environment is the same afterwards (it used to keep BOOK_SIZE=full)."""
    monkeypatch.setenv(SIZE_ENV, "small")
    lab = demo_lab(sizes={"n": (2, 3)})
    seen = []

    def run(device):
        seen.append((lab.size("n"), os.environ[SIZE_ENV]))
        return core.new_result(lab, device)

    core.run_cli(lab, run, ["--out", str(tmp_path), "--device", "cpu", "--size", "full"])
    assert seen == [(3, "small")] and os.environ[SIZE_ENV] == "small"
    assert json.loads((tmp_path / "demo_lab.json").read_text())["size_tier"] == "full"
    core.run_cli(lab, run, ["--out", str(tmp_path), "--device", "cpu"])
    assert seen[-1] == (2, "small")


def test_a_table_names_the_card_of_its_reference_column():
    from helpers.labs.report import Claim, Row, Table

    claim = Claim("t", "a time", "prediction", model="m", ceilings="c", tolerance=0.1, why="w")
    t = Table("t", [Row("x", "us", 1e-6, model=1e-6, h200=1.05e-6, claim=claim)],
              reference_label="H100")
    head = str(t).splitlines()[0].split()
    assert "H100" in head and "H200" not in head and head[-2:] == ["vs", "H100"]
    assert "<th>vs H100</th>" in t._repr_html_()


def test_runs_on_another_card_are_kept_apart_and_listed():
    files = sorted(core.OTHER_CARD_DIR.glob("*.json"))
    readme = (core.OTHER_CARD_DIR / "README.md").read_text()
    for path in files:
        data = core.load_result(path)
        assert data["lab"] == path.stem and data["tier"] == "gpu"
        assert "H200" not in data["provenance"]["device_name"], f"{path.name} belongs in h200/"
        assert data["provenance"]["commit"], f"{path.name} does not name the measured commit"
        assert f"`{path.name}`" in readme, f"{path.name} is not listed in {core.OTHER_CARD_DIR}/README.md"
        assert core.other_card_result(path.stem) == data
    assert core.other_card_result("no_such_lab") is None
