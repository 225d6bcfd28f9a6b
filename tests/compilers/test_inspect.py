"""Looking inside torch.compile: a known graph break counted and fixed, guards, generated code."""

from __future__ import annotations

import pytest
import torch

from helpers import compilers as C


def with_break(x):
    y = torch.nn.functional.gelu(x)
    if y.sum().item() > 0:  # Python branch on a tensor's value: Dynamo must stop here
        y = y * 2
    return y + 1


def fixed(x):
    y = torch.nn.functional.gelu(x)
    y = torch.where(y.sum() > 0, y * 2, y)  # the branch as a tensor operation
    return y + 1


def with_print(x):
    y = x.sin()
    print("debug")  # noqa: T201  (a side effect Dynamo cannot put in a graph)
    return y.cos()


def test_item_branch_is_one_break_and_two_graphs():
    e = C.explain(with_break, torch.randn(32))
    assert (e.graph_count, e.graph_break_count) == (2, 1)
    assert "item" in e.break_reasons[0]
    assert e.break_lines[0] == "if y.sum().item() > 0:  # Python branch on a tensor's value: Dynamo must stop here"
    assert len(e.graphs) == 2 and "gelu" in e.graphs[0]


def test_the_fix_is_one_graph_with_the_same_result():
    x = torch.randn(32)
    e = C.explain(fixed, x)
    assert (e.graph_count, e.graph_break_count) == (1, 0)
    assert e.break_reasons == ()
    for sign in (1.0, -1.0):
        torch.testing.assert_close(fixed(sign * x.abs()), with_break(sign * x.abs()))


def test_print_is_a_break_too(capsys):
    e = C.explain(with_print, torch.randn(8))
    assert e.graph_break_count == 1 and e.graph_count == 2


def test_guards_specialise_then_generalise_the_shape():
    def f(x, s):
        return torch.nn.functional.silu(x) * s

    calls = [(torch.randn(8), 2.0), (torch.randn(8), 2.0), (torch.randn(16), 2.0),
             (torch.randn(32), 2.0), (torch.randn(16), 3.0)]
    comps = C.trace_compilations(f, calls)
    # 8 compiles; the same call again does not; 16 fails the size guard and recompiles with a
    # symbolic size, which 32 passes; a new float value fails the value guard: 3 compilations.
    assert len(comps) == 3
    assert [c.recompile for c in comps] == [0, 1, 2]
    first = " ".join(comps[0].guards)
    assert "size=[8]" in first and "L['s'] == 2.0" in first
    assert "size=[None]" in " ".join(comps[1].guards)
    assert "SymInt" in comps[1].graph_code and "SymInt" not in comps[0].graph_code


def test_guard_lines_keep_input_checks_only():
    tree = ("TREE_GUARD_MANAGER:\n| +- GLOBAL_STATE: ___check_global_state()\n"
            "| | +- TENSOR_MATCH: check_tensor(L['x'], Tensor, DispatchKeySet(CPU, AutogradCPU), "
            "size=[4])  # f.py:3 in f\n"
            "| | | +- ID_MATCH: ___check_obj_id(G['torch'], 1)\n"
            "+- LAMBDA_GUARD: 2 <= L['x'].size()[0]  # comment")
    assert C.guard_lines(tree) == ("TENSOR_MATCH: check_tensor(L['x'], Tensor, size=[4])",
                                   "LAMBDA_GUARD: 2 <= L['x'].size()[0]")
    assert len(C.guard_lines(tree, inputs_only=False)) == 3


def test_inductor_fuses_an_elementwise_chain_into_one_cpp_kernel():
    def chain(x):
        return 0.5 * x * (1.0 + torch.tanh(0.79788456 * (x + 0.044715 * x ** 3)))

    x = torch.randn(256)
    g = C.generated_code(chain, x)
    torch.testing.assert_close(g.result, chain(x))
    assert len(g.kernels) == 1 and g.kernel_names[0].startswith("cpp_fused_")
    assert "tanh" in g.kernel_names[0]
    assert 'extern "C"' in g.kernels[0] and "in_ptr0" in g.kernels[0]


def test_time_compiled_checks_and_reports_compile_apart():
    def chain(x):
        return torch.sigmoid(x) * x + x.exp() - 1.0

    x = torch.randn(4096)
    t = C.time_compiled(chain, x, budget_s=0.05)
    assert t.compiled.checked
    assert t.compile_s == t.compiled.first_call_s  # the first call, apart from the samples
    # Tracing and code generation against the fastest steady call: a busy machine only
    # lengthens the compilation, and the best of the samples needs one undisturbed call.
    assert t.compile_s > t.compiled.min_s > 0
    assert t.speedup == pytest.approx(t.eager.median_s / t.compiled.median_s)


def test_time_compiled_rejects_a_wrong_compilation():
    calls = {"n": 0}

    def drifting(x):  # returns a different value on its first (eager reference) call
        calls["n"] += 1
        return x + (1.0 if calls["n"] == 1 else 2.0)

    with pytest.raises(AssertionError):
        C.time_compiled(drifting, torch.randn(16), budget_s=0.05)


def test_aten_graph_and_inductor_decomposition_of_silu():
    x = torch.randn(4)
    plain = C.aten_graph(lambda t: torch.nn.functional.silu(t), x)
    assert "aten.silu" in plain
    low = C.aten_graph(lambda t: torch.nn.functional.silu(t), x, decompose=True)
    assert "aten.silu" not in low
    for op in ("aten.neg", "aten.exp", "aten.div"):
        assert op in low
