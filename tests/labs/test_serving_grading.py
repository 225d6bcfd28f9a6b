"""Grading the serving lab with nbval: an off-by-one block count fails, a ceiling passes."""

MARKER = "# Exercise: blocks_needed"
NOTEBOOK = "labs/serving.ipynb"

OFF_BY_ONE = '''# Exercise: blocks_needed
def blocks_needed(num_tokens, block_size):
    return num_tokens // block_size + 1
'''

RIGHT = '''# Exercise: blocks_needed
def blocks_needed(num_tokens, block_size):
    return -(-num_tokens // block_size)
'''


def test_an_off_by_one_ceiling_fails_with_a_readable_message(grade):
    passed, output = grade(NOTEBOOK, {MARKER: OFF_BY_ONE})
    assert not passed, output[-3000:]
    assert "FAIL blocks_needed" in output and "need 0 blocks, got 1" in output, output[-3000:]


def test_a_ceiling_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
