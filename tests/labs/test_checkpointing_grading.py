"""Grading the checkpointing lab with nbval: an in-place save fails, an atomic one passes."""

MARKER = "# Exercise: atomic save"
NOTEBOOK = "labs/checkpointing.ipynb"

IN_PLACE = '''# Exercise: atomic save
def my_save(path, data):
    with open(path, "wb") as f:  # overwrites the checkpoint where it lies
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
'''

RIGHT = '''# Exercise: atomic save
def my_save(path, data):
    tmp = path + ".partial"
    with open(tmp, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)
'''


def test_an_in_place_save_fails_with_a_readable_message(grade):
    passed, output = grade(NOTEBOOK, {MARKER: IN_PLACE})
    assert not passed, output[-3000:]
    assert "FAIL atomic save" in output and "neither the old contents nor the new" in output, \
        output[-3000:]


def test_an_atomic_save_passes(grade):
    passed, output = grade(NOTEBOOK, {MARKER: RIGHT})
    assert passed, output[-3000:]
