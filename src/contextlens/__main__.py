"""``python -m contextlens``: the same as the ``contextlens`` command."""

from contextlens.cli import main

if __name__ == "__main__":
    main()
