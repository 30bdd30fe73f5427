"""The command line's tables (``cli/tables.py``): whatever the width, every number is shown
whole, once, and every line of the table fits."""

from __future__ import annotations

import io
import re
from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console

from contextlens.cli.tables import FitTable

NUMBER = re.compile(r"(?<![\w.])-?\d+\.\d+(?![\w])")
PART = re.compile(r"\((?:continued:\s+)?columns?\s+[\d–]+\s+of\s+\d+(?:;\s+the\s+rest\s+below)?\)")
words = st.text("abcdefghij_/-", min_size=1, max_size=20)


def render(table: FitTable, width: int) -> str:
    screen = io.StringIO()
    Console(file=screen, width=width, color_system=None).print(table)
    return screen.getvalue()


@settings(max_examples=60, deadline=None)
@given(width=st.integers(40, 200), n_numbers=st.integers(1, 14), n_rows=st.integers(1, 6),
       data=st.data())
def test_every_number_is_shown_whole_once_and_every_line_fits(width, n_numbers, n_rows, data):
    labels = data.draw(st.lists(words, min_size=n_rows, max_size=n_rows))
    notes = data.draw(st.lists(st.lists(words, max_size=6).map(" ".join), min_size=n_rows, max_size=n_rows))
    values = data.draw(st.lists(st.lists(st.floats(-1e4, 1e4, allow_nan=False), min_size=n_numbers,
                                         max_size=n_numbers), min_size=n_rows, max_size=n_rows))
    cells = [[f"{v:.3f}" for v in row] for row in values]
    rows = [[label, *row, note] for label, row, note in zip(labels, cells, notes)]
    columns = ["label", *(f"value {j}" for j in range(n_numbers)), "note"]
    out = render(FitTable("a table", columns, rows, "l" + "r" * n_numbers + "l"), width)
    lines = out.splitlines()
    assert all(len(line) <= width for line in lines if re.search("[│┃┏└]", line)), out
    shown = Counter(NUMBER.findall(PART.sub("", out)))
    assert shown == Counter(c for row in cells for c in row), out


def test_a_table_that_fits_is_drawn_as_rich_draws_it():
    """Nothing to give: the natural widths, one table, as before (the README's tables)."""
    table = FitTable("'bank' in the two sentences", ["layer", "cosine"], [["static", "1.000"],
                                                                          ["attention 1", "0.920"]], "lr")
    assert render(table, 80).splitlines() == [
        "'bank' in the two       ",
        "sentences               ",
        "┏━━━━━━━━━━━━━┳━━━━━━━━┓",
        "┃ layer       ┃ cosine ┃",
        "┡━━━━━━━━━━━━━╇━━━━━━━━┩",
        "│ static      │  1.000 │",
        "│ attention 1 │  0.920 │",
        "└─────────────┴────────┘",
    ]


def test_a_table_too_wide_goes_on_below_repeating_its_row_labels():
    columns = ["layer · head", *(f"word{j}" for j in range(12))]
    rows = [[f"layer {i} mean", *(f"0.{i}{j:02d}" for j in range(12))] for i in range(1, 3)]
    out = render(FitTable("weights", columns, rows, "l" + "r" * 12), 80)
    assert "weights (columns 1–" in out and "(continued: columns " in out
    assert out.count("layer 1 mean") == 2 and all(len(line) <= 80 for line in out.splitlines())
