r"""Step 1 of the kernel: UTF-8 bytes -> tokens -> provisional word ids, compiled.

A byte scanner splits a block on exactly the characters ``str.split()`` splits on:
``"\n"`` ends a line, and the other 28 white-space code points (ASCII ``\t \v \f \r``,
``\x1c``-``\x1f`` and space; U+0085, U+00A0, U+1680, U+2000-U+200A, U+2028, U+2029,
U+202F, U+205F, U+3000) are recognised from their UTF-8 bytes. With ``words=True`` (an
ASCII block and ``tokenizer="words"``) it follows :func:`contextlens.text.tokenize`'s
pattern as it reads on ASCII: ``\d+(?:[.,:/]\d+)+``, else ``\w+(?:['-]\w+)*``, else one
symbol. Each token is hashed (FNV-1a) as it is read and looked up in an open-addressing
table of the words seen so far (their bytes are kept in a pool, each followed by
``"\n"``); a new word gets the next id.
"""

from __future__ import annotations

import numba
import numpy as np

from .jit import jit

__all__ = ["SEP", "map_tokens", "rehash_words", "sort_words", "POS", "IDS", "WORDS", "POOL", "TOKENS",
           "LINES", "IN_LINE", "NEED", "HASH", "START", "LEN", "COUNT"]

SEP = -2  # a line break in the id stream
_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
# byte classes, ordered so that "<= _LETTER" is \w (on ASCII) and ">= _SPACE" ends a token
_DIGIT, _LETTER, _NUM_SEP, _JOINER, _OTHER, _WIDE, _SPACE, _NEWLINE = range(8)


def _byte_classes() -> np.ndarray:
    cls = np.full(256, _OTHER, np.uint8)  # other ASCII symbols, and bytes of non-ASCII characters
    for c in range(128):
        ch = chr(c)
        cls[c] = (_NEWLINE if ch == "\n" else _SPACE if ch.isspace() else _DIGIT if ch.isdigit()
                  else _LETTER if ch.isalnum() or ch == "_" else _NUM_SEP if ch in ".,:/"
                  else _JOINER if ch in "'-" else _OTHER)
    cls[[0xC2, 0xE1, 0xE2, 0xE3]] = _WIDE  # the lead bytes of the non-ASCII white space
    return cls


_CLASS = _byte_classes()
# the int64 state of map_tokens: position, ids written, words, pool bytes used, tokens,
# non-blank lines, current line has a token, bytes the pool must grow by
POS, IDS, WORDS, POOL, TOKENS, LINES, IN_LINE, NEED = range(8)
HASH, START, LEN, COUNT = range(4)  # the columns of the word table


@numba.njit
def _wide_space(buf, i):
    """Bytes of the non-ASCII white-space character at ``buf[i]`` (0: none there)."""
    n, b = len(buf), buf[i]
    if b == 0xC2:  # U+0085, U+00A0
        return 2 if i + 1 < n and (buf[i + 1] == 0x85 or buf[i + 1] == 0xA0) else 0
    if i + 2 >= n:
        return 0
    b1, b2 = buf[i + 1], buf[i + 2]
    if b == 0xE1:  # U+1680
        return 3 if b1 == 0x9A and b2 == 0x80 else 0
    if b == 0xE2:  # U+2000..U+200A, U+2028, U+2029, U+202F; U+205F
        if b1 == 0x80 and (b2 <= 0x8A or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF):
            return 3
        return 3 if b1 == 0x81 and b2 == 0x9F else 0
    if b == 0xE3:  # U+3000
        return 3 if b1 == 0x80 and b2 == 0x80 else 0
    return 0


@numba.njit
def _ascii_word_end(buf, i):
    """End of the ASCII token starting at ``buf[i]`` under text.tokenize's pattern:
    ``\\d+(?:[.,:/]\\d+)+``, else ``\\w+(?:['-]\\w+)*``, else one symbol."""
    n = len(buf)
    if _CLASS[buf[i]] == _DIGIT:
        j = i
        while j < n and _CLASS[buf[j]] == _DIGIT:
            j += 1
        groups = 0
        while j + 1 < n and _CLASS[buf[j]] == _NUM_SEP and _CLASS[buf[j + 1]] == _DIGIT:
            j += 1
            while j < n and _CLASS[buf[j]] == _DIGIT:
                j += 1
            groups += 1
        if groups:
            return j
    if _CLASS[buf[i]] <= _LETTER:
        j = i
        while j < n and _CLASS[buf[j]] <= _LETTER:
            j += 1
        while j + 1 < n and _CLASS[buf[j]] == _JOINER and _CLASS[buf[j + 1]] <= _LETTER:
            j += 1
            while j < n and _CLASS[buf[j]] <= _LETTER:
                j += 1
        return j
    return i + 1


@jit
def map_tokens(buf, words, st, ids, slots, table, pool):
    """Split ``buf`` into tokens and look each up, adding new words; write the ids
    (``-2``: line break) to ``ids``.

    ``st`` (int64) carries the state in and out: position in ``buf``, ids written, words,
    pool bytes used, tokens, non-blank lines, whether the current line has a token.
    ``table`` (int64, ``(capacity, 4)``) holds each word's hash, start in ``pool``, length
    and count, side by side: one cache line per word. Returns 0 when ``buf`` is done, else
    stops before a new word the tables have no room for: 1 (the word table is full), 2
    (the slot table is half full), 3 (the pool has no room for ``st[NEED]`` more bytes);
    the caller grows them and calls again.
    """
    n = len(buf)
    i, k, n_words, pool_used = st[POS], st[IDS], st[WORDS], st[POOL]
    n_tokens, n_lines, in_line = st[TOKENS], st[LINES], st[IN_LINE]
    mask = np.uint64(len(slots) - 1)
    status = 0
    while i < n:
        c = _CLASS[buf[i]]
        if c == _SPACE:
            i += 1
            continue
        if c == _NEWLINE:
            ids[k] = SEP
            k += 1
            i += 1
            n_lines += in_line
            in_line = 0
            continue
        if c == _WIDE:
            w = _wide_space(buf, i)
            if w:
                i += w
                continue
        s = i
        h = _FNV_OFFSET
        if words:
            i = _ascii_word_end(buf, s)
            for t in range(s, i):
                h = (h ^ np.uint64(buf[t])) * _FNV_PRIME
        else:
            while i < n:
                c = _CLASS[buf[i]]
                if c >= _SPACE or (c == _WIDE and _wide_space(buf, i) > 0):
                    break
                h = (h ^ np.uint64(buf[i])) * _FNV_PRIME
                i += 1
        size = i - s
        j = h & mask
        while True:
            w = slots[j]
            if w < 0:
                break
            if table[w, HASH] == np.int64(h) and table[w, LEN] == size:
                p = table[w, START]
                t = 0
                while t < size and pool[p + t] == buf[s + t]:
                    t += 1
                if t == size:
                    break
            j = (j + np.uint64(1)) & mask
        if w < 0:  # a new word: room for it?
            status = 1 if n_words == len(table) else 2 if 2 * (n_words + 1) > len(slots) else 0
            if status == 0 and pool_used + size + 1 > len(pool):
                status, st[NEED] = 3, size + 1
            if status:
                i = s
                break
            w = n_words
            pool[pool_used:pool_used + size] = buf[s:i]
            pool[pool_used + size] = 0x0A
            table[w, HASH], table[w, START], table[w, LEN], table[w, COUNT] = np.int64(h), pool_used, size, 0
            pool_used += size + 1
            n_words += 1
            slots[j] = w
        table[w, COUNT] += 1
        ids[k] = w
        k += 1
        n_tokens += 1
        in_line = 1
    if status == 0:
        n_lines += in_line
        in_line = 0
    st[POS], st[IDS], st[WORDS], st[POOL] = i, k, n_words, pool_used
    st[TOKENS], st[LINES], st[IN_LINE] = n_tokens, n_lines, in_line
    return status


@jit
def rehash_words(table, n_words, size):
    """A slot table of ``size`` (a power of two) holding ids ``0..n_words-1``."""
    slots = np.full(size, -1, np.int32)
    mask = np.uint64(size - 1)
    for k in range(n_words):
        j = np.uint64(table[k, HASH]) & mask
        while slots[j] >= 0:
            j = (j + np.uint64(1)) & mask
        slots[j] = k
    return slots


@jit
def sort_words(pool, table, ids):
    """``ids`` sorted by their words' bytes (UTF-8 byte order is code point order, as
    ``sorted`` on the strings): an MSD radix sort on 7-byte chunks, each byte as 9 bits
    (``byte + 1``, ``0`` past the word's end, so a word sorts before its extensions)."""
    out = ids.copy()
    todo = [(0, len(out), 0)]  # (start, end, chunk) of runs whose earlier chunks are equal
    while todo:
        a, b, depth = todo.pop()
        keys = np.empty(b - a, np.uint64)
        for t in range(a, b):
            p, m = table[out[t], START] + 7 * depth, table[out[t], LEN] - 7 * depth
            x = np.uint64(0)
            for c in range(7):
                x = (x << np.uint64(9)) | (np.uint64(pool[p + c]) + np.uint64(1) if c < m else np.uint64(0))
            keys[t - a] = x
        order = np.argsort(keys, kind="mergesort")
        out[a:b] = out[a:b][order]
        keys = keys[order]
        s = 0
        for t in range(1, b - a + 1):
            if t == b - a or keys[t] != keys[s]:
                if t - s > 1:  # the same 7 bytes, so both go on: the next chunk decides
                    todo.append((a + s, a + t, depth + 1))
                s = t
    return out
