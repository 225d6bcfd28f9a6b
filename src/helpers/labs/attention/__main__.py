"""``python -m helpers.labs.attention``: the lab's runner (:func:`helpers.labs.attention.main`)."""

from helpers.labs.attention import main

if __name__ == "__main__":
    main()
