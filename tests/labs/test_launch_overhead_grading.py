"""The launch-overhead lab grades a reader's model through nbval: the reference solution
passes, a solution that ignores the launch term fails with a message that says so."""

import pytest

NOTEBOOK = "labs/launch-overhead.ipynb"
MARKER = "# Exercise: launch model"

WRONG = '''# Exercise: launch model
def graph_speedup(n_kernels, launch_s, kernel_s, graph_launch_s, kernel_in_graph_s):
    return n_kernels * kernel_s / (graph_launch_s + n_kernels * kernel_in_graph_s)
'''

RIGHT = '''# Exercise: launch model
def graph_speedup(n_kernels, launch_s, kernel_s, graph_launch_s, kernel_in_graph_s):
    return (n_kernels * max(launch_s, kernel_s)) / (graph_launch_s + n_kernels * kernel_in_graph_s)
'''


@pytest.mark.slow
def test_a_solution_that_ignores_the_launch_term_fails(grade):
    passed, output = grade(NOTEBOOK, {MARKER: WRONG})
    assert not passed
    assert "FAIL launch model" in output and "ignores the launch term" in output


@pytest.mark.slow
def test_a_correct_solution_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
