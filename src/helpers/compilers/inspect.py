"""Run ``torch.compile`` and read what each stage produced.

The stages, front to back, and the function here that shows each:

* **Capture** (TorchDynamo): Python bytecode is traced into FX graphs; what cannot be traced
  ends a graph (a *graph break*) and runs in Python. :func:`explain` counts graphs and breaks
  and gives each break's reason and source line (``torch._dynamo.explain``).
* **Guards**: each captured graph is reused only while checks on its inputs hold (types,
  dtypes, shapes, constants); a failed guard recompiles. :func:`trace_compilations` compiles
  with a backend that records every FX graph it is handed and, from Dynamo's ``guards`` log,
  the guards that protect it, so a recompilation can be watched.
* **Lowering and code generation** (TorchInductor): the graph is lowered, fused and turned
  into source, C++ on a CPU and Triton on a GPU. :func:`generated_code` returns that source
  (``torch._inductor.utils.run_and_get_code``).
* **The payoff**: :func:`time_compiled` times the first call (compilation) apart and then
  eager against compiled with :func:`helpers.bench.bench`.

Every function calls ``torch._dynamo.reset()`` first (not after: Dynamo's caches still hold
weak references to what it compiled), so results do not depend on what was
compiled before in the process. Inductor's on-disk cache (``TORCHINDUCTOR_CACHE_DIR``) may
still make a second compilation of the same graph faster than the first.

Library only: no page imports it.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from dataclasses import dataclass
from typing import Any, Callable, Sequence

# TorchInductor imports Triton. Triton fixes its mode (compiled or interpreted) when first
# imported, so the package that chooses the mode, helpers.kernels, must be imported first:
# otherwise Triton loads in compiled mode on a machine without a GPU, and the book's Triton
# kernels that call Triton's own jit functions (tl.sigmoid) later fail under the interpreter.
import helpers.kernels  # noqa: F401  (sets TRITON_INTERPRET=1 where there is no CUDA GPU)
import torch

from helpers.bench import BenchResult, bench, matches

# TorchInductor imports torch.utils.mkldnn, which uses the deprecated torch.jit.script_method
# at import time (torch 2.13 warns). Import it once here, the warning silenced, so that the
# first compilation does not raise it where warnings are errors (the book's tests).
with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)
    import torch._inductor.compile_fx  # noqa: E402,F401

__all__ = ["explain", "Explained", "trace_compilations", "Compilation", "generated_code",
           "GeneratedCode", "time_compiled", "CompileTiming", "guard_lines", "aten_graph"]


@contextlib.contextmanager
def _quiet_dynamo():
    """Silence Dynamo's own warnings (a graph break logs one) for the duration."""
    lg = logging.getLogger("torch._dynamo")
    old = lg.level
    lg.setLevel(logging.ERROR)
    try:
        yield
    finally:
        lg.setLevel(old)


@dataclass(frozen=True)
class Explained:
    """What TorchDynamo captured from one call (see :func:`explain`)."""

    graph_count: int
    graph_break_count: int
    op_count: int
    break_reasons: tuple[str, ...]  # first line of each break's reason
    break_lines: tuple[str, ...]  # the user source line where each break happened
    graphs: tuple[str, ...]  # the Python code of each captured FX graph


def explain(fn: Callable, *args, **kwargs) -> Explained:
    """Trace ``fn(*args, **kwargs)`` with ``torch._dynamo.explain``: graphs and breaks.

    >>> from helpers.compilers.workloads import rms_norm_skip   # branches on .item()
    >>> e = explain(rms_norm_skip, torch.ones(2, 4), torch.ones(4))
    >>> (e.graph_count, e.graph_break_count)
    (2, 1)
    """
    torch._dynamo.reset()
    with _quiet_dynamo():
        out = torch._dynamo.explain(fn)(*args, **kwargs)
    reasons, lines = [], []
    for br in out.break_reasons:
        reasons.append(str(br.reason).strip().splitlines()[0])
        user = [fs for fs in br.user_stack if fs.line]
        lines.append(user[-1].line.strip() if user else "")
    return Explained(graph_count=out.graph_count, graph_break_count=out.graph_break_count,
                     op_count=out.op_count, break_reasons=tuple(reasons),
                     break_lines=tuple(lines), graphs=tuple(g.code.strip() for g in out.graphs))


_GUARD_KINDS = ("TENSOR_MATCH", "TYPE_MATCH", "ID_MATCH", "CONSTANT_MATCH", "EQUALS_MATCH",
                "LAMBDA_GUARD")
_COMPILE_ID = re.compile(r"^\[(\d+)/(\d+)\]")


def guard_lines(tree: str, *, inputs_only: bool = True) -> tuple[str, ...]:
    """The guard checks in a Dynamo guard tree (its ``guards`` log), one line each.

    Each line is ``KIND: check`` with the trailing source comment and the dispatch-key set of
    tensor checks removed (it names PyTorch's internal dispatch keys, not a property of the
    input a reader chooses). With
    ``inputs_only`` keep only checks on the function's arguments (``L['...']``), which is where
    shapes, dtypes and values are guarded; the rest guard global state and module identities.

    >>> guard_lines("| | +- TENSOR_MATCH: check_tensor(L['x'], size=[8])  # f.py:1\\n"
    ...             "| +- ID_MATCH: ___check_obj_id(G['torch'], 1)")
    ("TENSOR_MATCH: check_tensor(L['x'], size=[8])",)
    """
    out = []
    for raw in tree.splitlines():
        line = raw.lstrip("| +-").split("  #")[0].strip()
        line = re.sub(r"DispatchKeySet\([^)]*\), ", "", line)
        if not line.startswith(_GUARD_KINDS):
            continue
        if inputs_only and "L['" not in line:
            continue
        out.append(line)
    return tuple(out)


@dataclass(frozen=True)
class Compilation:
    """One graph TorchDynamo compiled: its FX code and the input guards that protect it."""

    frame: int  # which Python frame (function) was compiled
    recompile: int  # 0 for the first compilation of the frame, 1 for the next, ...
    graph_code: str
    guards: tuple[str, ...]


class _GuardLog(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.trees: dict[tuple[int, int], str] = {}

    def emit(self, record):
        msg = record.getMessage()
        if "TREE_GUARD_MANAGER" not in msg:
            return
        ctx = str(getattr(record, "compile_id", "") or "")
        m = re.search(r"(\d+)/(\d+)", ctx)
        key = (int(m.group(1)), int(m.group(2))) if m else (0, len(self.trees))
        self.trees[key] = msg


def trace_compilations(fn: Callable, calls: Sequence[tuple]) -> list[Compilation]:
    """Compile ``fn`` with a recording backend, call it once per argument tuple in ``calls``.

    The backend returns the FX graph unchanged (it runs as traced, without Inductor, so this is
    quick) after recording its code; Dynamo's ``guards`` log gives the guards of each
    compilation. A call whose arguments pass an existing graph's guards compiles nothing, so
    ``len(result)`` counts compilations.

    >>> r = trace_compilations(lambda x: x * 2, [(torch.ones(3),), (torch.ones(3),)])
    >>> len(r)
    1
    """
    torch._dynamo.reset()
    graphs: list[str] = []

    def backend(gm, example_inputs):
        graphs.append(gm.code.strip())
        return gm.forward

    handler = _GuardLog()
    glog = logging.getLogger("torch._dynamo.guards.__guards")
    torch._logging.set_logs(guards=True)
    glog.addHandler(handler)
    propagate, glog.propagate = glog.propagate, False  # capture, do not print to stderr
    try:
        compiled = torch.compile(fn, backend=backend)
        with _quiet_dynamo():
            for args in calls:
                compiled(*args)
    finally:
        glog.removeHandler(handler)
        glog.propagate = propagate
        torch._logging.set_logs()
    keys = sorted(handler.trees)
    out = []
    for i, code in enumerate(graphs):
        frame, rec = keys[i] if i < len(keys) else (0, i)
        tree = handler.trees.get((frame, rec), "")
        out.append(Compilation(frame=frame, recompile=rec, graph_code=code,
                               guards=guard_lines(tree)))
    return out


def aten_graph(fn: Callable, *args, decompose: bool = False) -> str:
    """The ATen-level graph of ``fn(*args)`` (``make_fx``), the IR below PyTorch's Python API.

    With ``decompose``, operations are first broken up by TorchInductor's own decomposition
    table, the rewriting it applies before lowering, e.g. ``silu(x)`` into
    ``x / (1 + exp(-x))``.

    >>> "aten.sin" in aten_graph(lambda x: x.sin() * 2, torch.ones(2))
    True
    """
    from torch._inductor.decomposition import select_decomp_table
    from torch.fx.experimental.proxy_tensor import make_fx

    table = select_decomp_table() if decompose else None
    return make_fx(fn, decomposition_table=table)(*args).code.strip()


@dataclass(frozen=True)
class GeneratedCode:
    """What TorchInductor wrote for one compiled call."""

    result: Any
    modules: tuple[str, ...]  # the generated Python wrapper module(s), whole
    kernels: tuple[str, ...]  # the kernel sources inside them (C++ on a CPU, Triton on a GPU)
    kernel_names: tuple[str, ...]  # e.g. ``cpp_fused_add_mul_silu_0``


_KERNEL = re.compile(r"^(\w+) = async_compile\.\w+\((.*?)'''\s*(.*?)'''", re.S | re.M)


def generated_code(fn: Callable, *args, **compile_kwargs) -> GeneratedCode:
    """Compile ``fn`` with TorchInductor, run it on ``args``, return the generated source.

    Kernel sources are the triple-quoted strings that the wrapper hands to
    ``async_compile`` (``cpp_pybinding`` on a CPU, ``triton`` on a GPU); their names say which
    operations Inductor fused into each (``cpp_fused_<ops>_<n>``).
    """
    from torch._inductor.utils import run_and_get_code

    torch._dynamo.reset()
    with _quiet_dynamo():
        result, modules = run_and_get_code(torch.compile(fn, **compile_kwargs), *args)
    names, kernels = [], []
    for mod in modules:
        for m in _KERNEL.finditer(mod):
            names.append(m.group(1))
            kernels.append(m.group(3).strip())
    return GeneratedCode(result=result, modules=tuple(modules), kernels=tuple(kernels),
                         kernel_names=tuple(names))


@dataclass(frozen=True)
class CompileTiming:
    """Eager against compiled: first-call (compile) time apart, then steady-state medians."""

    compile_s: float  # the compiled function's first call, compilation included
    eager: BenchResult
    compiled: BenchResult

    @property
    def speedup(self) -> float:
        """Eager median time over compiled median time."""
        return self.eager.median_s / self.compiled.median_s

    @property
    def break_even_calls(self) -> float:
        """Calls after which the compile time is paid back (inf if compiled is not faster):
        :func:`helpers.models.compilation.break_even_calls`."""
        from helpers.models.compilation import break_even_calls

        return break_even_calls(self.compile_s, self.eager.median_s, self.compiled.median_s)


def time_compiled(fn: Callable, *args, device: str = "cpu", budget_s: float = 0.5,
                  rtol: float = 1e-4, atol: float = 1e-5, **compile_kwargs) -> CompileTiming:
    """Time ``fn(*args)`` eager and under ``torch.compile`` with :func:`helpers.bench.bench`.

    The compiled function is checked against the eager result before it is timed; its first
    call (tracing, lowering, code generation and the C/C++ or Triton build) is reported as
    ``compile_s``, apart from the steady-state samples.
    """
    torch._dynamo.reset()
    reference = fn(*args)
    compiled = torch.compile(fn, **compile_kwargs)
    check = matches(reference.detach().cpu().numpy(), rtol=rtol, atol=atol)
    with _quiet_dynamo():
        c = bench(lambda: compiled(*args), device=device, name="compiled", budget_s=budget_s,
                  check=lambda r: check(r.detach().cpu().numpy()))
    e = bench(lambda: fn(*args), device=device, name="eager", budget_s=budget_s)
    return CompileTiming(compile_s=c.first_call_s, eager=e, compiled=c)
