"""Grading the data-parallel lab with nbval: counting all communication as exposed fails."""

MARKER = "# Exercise: exposed communication"
NOTEBOOK = "labs/data-parallel.ipynb"

ALL_EXPOSED = '''# Exercise: exposed communication
def my_exposed_comm(compute, comm):
    return sum(b - a for a, b in comm)  # forgets that computation hides communication
'''

RIGHT = '''# Exercise: exposed communication
def my_exposed_comm(compute, comm):
    from helpers.models.distributed_analysis import exposed_comm_s
    return exposed_comm_s(compute, comm)
'''


def test_counting_all_communication_fails_with_a_readable_message(grade):
    passed, output = grade(NOTEBOOK, {MARKER: ALL_EXPOSED})
    assert not passed, output[-3000:]
    assert "FAIL exposed communication" in output, output[-3000:]
    assert "counts all communication as exposed" in output, output[-3000:]


def test_a_right_answer_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
