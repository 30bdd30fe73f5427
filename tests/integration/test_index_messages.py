"""The usage index answers a mistaken request with a message that says what happened and
what to do: another word list, a --db that is a file, two builds on one --db, a bound
out of range, a vectors path that is a folder."""

from __future__ import annotations

import pytest

from tests.missing import need

need("lancedb")
need("torch")

from contextlens.errors import FileFormatError, InputError, OutputPathError  # noqa: E402
from contextlens.index import build_index, induce_senses  # noqa: E402
from contextlens.index.build import make_index_encoder  # noqa: E402
from contextlens.index.search import search_usages  # noqa: E402
from contextlens.index.store import IndexMismatchError, UsageStore  # noqa: E402
from contextlens.static.pretrained import load_vectors  # noqa: E402
from tests.integration.tiny_models import tiny_bert  # noqa: E402

LINES = ["we sat on the bank of the river", "the bank raised its rates", "a spring by the river bank",
         "money in the bank", "the river ran past the old mill"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("messages")
    corpus = root / "corpus.txt"
    corpus.write_text("\n".join(LINES * 2) + "\n")
    model = str(tiny_bert(root))
    encoder = make_index_encoder(model, [2])
    db = root / "db"
    build_index(corpus, db, ["bank", "river"], model=model, layers=[2], encoder=encoder)
    return {"root": root, "corpus": corpus, "model": model, "encoder": encoder, "db": db}


def test_another_word_list_says_which_and_what_to_do(built):
    with pytest.raises(IndexMismatchError) as info:
        build_index(built["corpus"], built["db"], ["bank", "spring"], model=built["model"], layers=[2],
                    encoder=built["encoder"])
    assert str(info.value) == (
        f"{built['db']} holds an index built with the words bank, river (2) (this build: bank, spring (2)): "
        "an "
        "index keeps one setting of each, so build into a new --db folder (or give these settings again to "
        "resume or check it)")


def test_a_db_that_is_a_file_fails_before_the_model_loads(built, monkeypatch):
    db = built["root"] / "a-file"
    db.write_text("not an index")
    from contextlens.index import build as build_module

    monkeypatch.setattr(build_module, "make_index_encoder", lambda *a,
                        **k: pytest.fail("the model was loaded"))
    with pytest.raises(OutputPathError, match=r"cannot write .*a-file: it is a file, not a folder"):
        build_index(built["corpus"], db, ["bank"], model=built["model"])
    with pytest.raises(OutputPathError, match=r"a-file is a file, not a folder; choose another path"):
        build_index(built["corpus"], db / "sub", ["bank"], model=built["model"])
    assert db.read_text() == "not an index"


def test_the_second_of_two_simultaneous_builds_is_told_so(built, monkeypatch):
    create = UsageStore.create.__func__

    def raced(cls, path, params):  # the other build creates the tables between our check and our create
        create(cls, path, params)
        return create(cls, path, params)

    monkeypatch.setattr(UsageStore, "create", classmethod(raced))
    with pytest.raises(FileFormatError, match=r"already holds an index's tables: another build writing into "
                       r"this --db at the same time\? Two builds cannot share one --db: wait for the other "
                       r"to finish and run this again"):
        build_index(built["corpus"], built["root"] / "raced", ["bank"], model=built["model"], layers=[2],
                    encoder=built["encoder"])


def test_bounds_name_the_option_not_a_count_of_usages(built):
    with pytest.raises(InputError,
                       match=r"max_usages must be a whole number from 2 to 10,000, got 0; how many"):
        induce_senses(built["db"], "bank", max_usages=0)
    with pytest.raises(InputError, match=r"k must be a whole number from 1 to 10,000, got 0"):
        search_usages(built["db"], "the bank", "bank", k=0, encoder=built["encoder"][0])
    with pytest.raises(InputError, match=r"min_count must be a whole number >= 1, got 0"):
        build_index(built["corpus"], built["root"] / "x", all_words=True, min_count=0, model=built["model"])


def test_vectors_given_as_a_folder(tmp_path):
    with pytest.raises(InputError, match=f"{tmp_path} is a folder, not a vectors file; give the file itself"):
        load_vectors(str(tmp_path))
