"""``python -m helpers.labs.quantization``: the lab's runner (:func:`helpers.labs.quantization.main`)."""

from helpers.labs.quantization import main

if __name__ == "__main__":
    main()
