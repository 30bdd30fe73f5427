"""Sets files that used to end in a traceback (issue 21, item 6): a lone surrogate in a word
or the name, lists nested 100,000 deep, a 5,000-digit number; and paths that are not sets
files (a device, a folder, /proc/self/mem). Each is one InputError naming the file."""

from __future__ import annotations

import pytest

from contextlens.bias import read_sets
from contextlens.errors import InputError

GOOD = '"Y": ["c", "d"], "A": ["e"], "B": ["f"]'


@pytest.mark.parametrize(("body", "says"), [
    ('{"X": ["\\ud800a", "b"], ' + GOOD + "}",
     r's.json: "X"\[0\] is .\\ud800a., which holds a lone surrogate \(U\+D800\), not a character; write the '
     r"character itself, or both halves of its \\u escape pair"),
    ('{"name": "\\udc80", "X": ["a", "b"], ' + GOOD + "}",
     r'"name" is .\\udc80., which holds a lone surrogate'),
    ('{"X": ["ok", "b\\udfff"], ' + GOOD + "}", r'"X"\[1\] .* \(U\+DFFF\)'),
    ("[" * 100_000 + "]" * 100_000, r"s.json: nested too deeply to read .*; give a JSON file \{\"X\""),
    ('{"X": [' + "[" * 100_000 + "]" * 100_000 + "], " + GOOD + "}", "nested too deeply"),
    ('{"X": [' + "7" * 5000 + "], " + GOOD + "}",
     r"s.json: not usable JSON \(Exceeds the limit \(4300 digits\) for integer string conversion: value has "
     r"5000 digits\); a sets file holds words, not numbers"),
    ('{"X": [1e999, "b"], ' + GOOD + "}", r'"X"\[0\] is inf; every entry must be a non-empty word'),
    ('{"X": [' + "[" * 900 + "]" * 900 + "], " + GOOD + "}",
     r'"X"\[0\] is .*; every entry must be a non-empty'),
])
def test_a_sets_file_that_used_to_traceback_is_one_line(tmp_path, body, says):
    path = tmp_path / "s.json"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(InputError, match=says) as info:
        read_sets(path)
    assert "\n" not in str(info.value) and len(str(info.value)) < 400
    str(info.value).encode("utf-8")  # printable: no lone surrogate in the message itself


@pytest.mark.parametrize(("path", "says"), [
    ("/dev/null",
     "/dev/null is not a regular file (a device, a pipe or a socket), so not a sets file; give a JSON "
                  'file {"X": [...], "Y": [...], "A": [...], "B": [...]}'),
    ("/",
     '/ is a folder, not a sets file; give a JSON file {"X": [...], "Y": [...], "A": [...], "B": [...]}'),
    ("/proc/self/mem", "/proc/self/mem: cannot be read (Input/output error); give a JSON file"),
])
def test_a_path_that_is_not_a_sets_file_says_what_it_is(path, says):
    with pytest.raises(InputError) as info:
        read_sets(path)
    assert str(info.value).startswith(says)


def test_sets_with_crlf_or_cr_line_ends_read_the_same(tmp_path):
    body = '{"X": ["a", "b"],\n"Y": ["c", "d"],\n"A": ["e"],\n"B": ["f"]}\n'
    sets = []
    for eol in ("\n", "\r\n", "\r"):
        (tmp_path / "s.json").write_bytes(body.replace("\n", eol).encode())
        sets.append(read_sets(tmp_path / "s.json"))
    assert sets[0] == sets[1] == sets[2] and sets[0].X == ("a", "b")


def test_a_set_whose_words_are_one_key_once_lower_cased_says_so():
    from contextlens.bias import WordSets, weat_table
    from contextlens.vectors import EmbeddingTable

    table = EmbeddingTable(["bank", "river", "money", "good", "bad"],
                           [[1, 0], [0, 1], [1, 1], [1, 2], [2, 1]], name="toy")
    sets = WordSets("dup", X=("Bank", "bank"), Y=("river", "money"), A=("good",), B=("bad",))
    with pytest.raises(InputError) as info:
        weat_table(table, sets)
    assert str(info.value) == ("test 'dup': set X needs at least 2 word(s), but its 2 words are only 1 "
                               "word(s) of toy ('Bank' and 'bank' are both 'bank'); give more words")
