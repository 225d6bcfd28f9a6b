"""Grading the collectives lab with nbval: a factor without (n-1)/n fails, the right one passes."""

MARKER = "# Exercise: bus bandwidth factor"
NOTEBOOK = "labs/collectives.ipynb"

WITHOUT_N_MINUS_ONE_OVER_N = '''# Exercise: bus bandwidth factor
def busbw_factor(collective, ranks):
    if collective == "all_reduce":
        return 2.0  # forgets (n-1)/n
    return 1.0
'''

RIGHT = '''# Exercise: bus bandwidth factor
def busbw_factor(collective, ranks):
    per_link = (ranks - 1) / ranks
    return 2 * per_link if collective == "all_reduce" else per_link
'''


def test_a_factor_without_n_minus_one_over_n_fails_with_a_readable_message(grade):
    passed, output = grade(NOTEBOOK, {MARKER: WITHOUT_N_MINUS_ONE_OVER_N})
    assert not passed, output[-3000:]
    assert "FAIL bus bandwidth factor" in output, output[-3000:]
    assert "all_reduce on 1 ranks: got 2, expected 0" in output, output[-3000:]


def test_the_right_factor_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
