"""Looking inside ``torch.compile``: graphs, graph breaks, guards, generated code, speed.

Lesson 12 (:ref:`sec-ml-compilers`) runs the compiler for real on a CPU (TorchInductor writes
C++ and builds it with the machine's C compiler) and reads what each stage produced, with the
functions of :mod:`.inspect`.

Used by: chapters/custom-operators.md, chapters/ml-compilers.md.
"""

from .inspect import (Compilation, CompileTiming, Explained, GeneratedCode, aten_graph, explain,
                      guard_lines,
                      generated_code, time_compiled, trace_compilations)

__all__ = ["explain", "Explained", "trace_compilations", "Compilation", "generated_code",
           "GeneratedCode", "time_compiled", "CompileTiming", "guard_lines", "aten_graph"]
