"""The one corpus pass (contextlens.passes.run): resume point, chunk numbers, progress, and
the runner closed whatever happens; hand-made runs with a recording runner (no model)."""

import pytest

from contextlens.corpus.targets import Sentence, WordMatcher
from contextlens.errors import InputError
from contextlens.passes.encoding import plan_chunk
from contextlens.passes.rows import EncodedChunk
from contextlens.passes.run import chunks, corpus_pass, make_runner

SENTENCES = [Sentence("d.txt", i, text) for i, text in enumerate(
    ["The bank.", "No target.", "A river bank.", "Banks and a bank.", "Nothing.", "bank"])]


class Recorder:
    chunk_size = 2

    def __init__(self, fail_at: int | None = None):
        self.seen, self.closed, self.fail_at = [], False, fail_at

    def encode(self, planned):
        if self.fail_at is not None and len(self.seen) == self.fail_at:
            raise RuntimeError("boom")
        self.seen.append([(p.number, [u.form for u in p.usages]) for p in planned])
        return EncodedChunk.empty([1], 3)

    def close(self):
        self.closed = True


def plan(sentences, first):
    return plan_chunk(sentences, WordMatcher(["bank"]))


def test_a_pass_goes_on_after_what_was_done_and_numbers_its_chunks():
    runner, got, reported = Recorder(), [], []
    end = corpus_pass(iter(SENTENCES), plan, runner, lambda c: got.append(c) or len(got), done=1, chunk=4,
                      progress=lambda done, n: reported.append((done, n)))
    assert [(c.number, c.first, c.done) for c in got] == [(5, 1, 3), (6, 3, 5), (7, 5, 6)]
    assert runner.seen == [[(2, ["bank"])], [(3, ["bank"])], [(5, ["bank"])]]  # sentence 0 was done before
    assert reported == [(3, 1), (5, 2), (6, 3)]
    assert tuple(end) == (6, 7, 3, {}) and runner.closed


def test_a_pass_closes_its_runner_when_a_chunk_fails():
    runner = Recorder(fail_at=1)
    with pytest.raises(RuntimeError, match="boom"):
        corpus_pass(iter(SENTENCES), plan, runner, lambda c: 0, chunk_size=3)
    assert runner.closed and len(runner.seen) == 1


def test_chunks_and_the_runner_choice():
    assert list(chunks(iter(range(5)), 2)) == [[0, 1], [2, 3], [4]] and list(chunks(iter([]), 3)) == []
    with pytest.raises(InputError, match="engine"):
        make_runner("spark", object(), [1])
    with pytest.raises(InputError, match="engine='ray' runs a transformer"):
        make_runner("ray", object(), [1])
