"""A fuzzer over the main commands' options: whatever the values (whole numbers at and
beyond their bounds, NaN and infinities, unicode with surrogates, control characters and
NUL, empty and huge strings), a command exits 0 or 2, never with a traceback, and under
``--json`` its stdout is strict JSON (no NaN) or empty.

Deterministic (``derandomize``) and bounded: a few hundred invocations over a 5-word
table, about ten seconds on a quiet machine."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from typer.testing import CliRunner

from contextlens.cli import app
from contextlens.vectors import EmbeddingTable

runner = CliRunner()
WORDS = {"bank": [1, 1, 0], "money": [1, 0, 0.1], "river": [0, 1, 0.1], "the": [0.1, 0.1, 1],
         "sat": [0.5, 0.2, 0]}
FUZZ = settings(max_examples=25, derandomize=True, deadline=None, database=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])

ints = st.one_of(st.integers(-3, 12), st.sampled_from([-1, 0, 64, 65, 10_000, 10_001, 2**31, 2**63, -(2**63),
                                                       10**30]))
floats = st.one_of(st.floats(allow_nan=True, allow_infinity=True),
                   st.sampled_from([0.0, 1.0, 1.0000001, -0.0]))
text = st.one_of(
    st.sampled_from(["", " ", "bank", "the bank", "sat bank river", "[/]", "[bold]bank", "-", "--", "\x00",
                     "bank\x00", "\udcff", "ba\u0000nk", "\x1b[31mbank", "x" * 5000, "bank " * 300]),
    st.text(st.characters(codec=None, exclude_categories=()), max_size=12),
)


def number(value) -> str:
    return repr(value) if isinstance(value, float) else str(value)


@pytest.fixture(scope="module")
def toy(tmp_path_factory):
    path = tmp_path_factory.mktemp("fuzz") / "toy.npz"
    EmbeddingTable(list(WORDS), list(WORDS.values()), name="toy").save(path)
    return str(path)


def check(args: list[str]) -> None:
    result = runner.invoke(app, args)
    shown = f"{args!r}\n{result.output[-2000:]}"
    assert result.exit_code in (0, 2), shown
    assert result.exception is None or isinstance(result.exception, SystemExit), (shown, result.exc_info)
    assert "Traceback" not in result.output, shown
    if "--json" in args:
        if result.exit_code == 0:
            json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"{c} in JSON: {shown}"))
        else:
            assert result.stdout == "", shown


@FUZZ
@given(word=text, sentence=text, method=st.sampled_from(["average", "attention", "static", "avg", "\udcff"]),
       window=ints, heads=ints, layer=ints, alpha=floats, scale=floats, self_flag=st.booleans())
def test_contextualize(toy, word, sentence, method, window, heads, layer, alpha, scale, self_flag):
    args = ["contextualize", sentence, "-w", word, "--vectors", toy, "--method", method, "--layer",
            str(layer), "--json"]
    if method == "average":
        args += ["--window", str(window), "--alpha", number(alpha)]
    elif method == "attention":
        args += ["--heads", str(heads), "--scale", number(scale),
                 "--include-self" if self_flag else "--exclude-self"]
    check(args)


@FUZZ
@given(s1=text, s2=text, word=text, n_layers=ints, seed=ints,
       projections=st.sampled_from([None, "random", "x"]))
def test_compare(toy, s1, s2, word, n_layers, seed, projections):
    extra = [] if projections is None else ["--projections", projections]
    check(["compare", s1, s2, "-w", word, "--vectors", toy, "--n-layers", str(n_layers), "--seed", str(seed),
           *extra, "--json"])


@FUZZ
@given(words=st.lists(text, min_size=1, max_size=2), sentences=st.lists(text, max_size=4), layer=ints,
       k=st.one_of(st.sampled_from(["auto", "0", "1", "2", "99", "-1", "two", "", "١"]), text),
       occurrence=st.one_of(st.none(), st.sampled_from(["0", "1", "all", "-1", "x", "99"])),
       command=st.sampled_from(
           ["explore", "senses"]))
def test_explore_and_senses(toy, words, sentences, layer, k, occurrence, command):
    args = [command, *(words[:1] if command == "senses" else words), "--vectors", toy, "--method", "average",
            "--layer", str(layer)]
    for s in sentences:
        args += ["-s", s]
    if occurrence is not None:
        args += ["--occurrence", occurrence]
    if command == "senses":
        args += ["--k", k]
    check([*args, "--json"])


@FUZZ
@given(texts=st.lists(text, min_size=0, max_size=5), word=text, heads=ints)
def test_layers(toy, texts, word, heads):
    check(["layers", *texts, "-w", word, "--vectors", toy, "--heads", str(heads), "--json"])


@FUZZ
@given(sentence=text, word=text, layer=ints, head=ints, heads=ints, rollout=st.booleans())
def test_attention(toy, sentence, word, layer, head, heads, rollout):
    check(["attention", sentence, "-w", word, "--vectors", toy, "--layer", str(layer), "--head", str(head),
           "--heads", str(heads), *(["--rollout"] if rollout else []), "--json"])


@FUZZ
@given(sentences=st.lists(text, max_size=4), words=st.one_of(st.none(), text), min_count=ints, pairs=ints,
       seed=ints)
def test_geometry(toy, sentences, words, min_count, pairs, seed):
    args = ["geometry", "--vectors", toy, "--min-count", str(min_count), "--pairs", str(pairs), "--seed",
            str(seed)]
    for s in sentences:
        args += ["-s", s]
    if words is not None:
        args += ["--words", words]
    check([*args, "--json"])


@FUZZ
@given(word=text, a=text, k=ints, method=st.sampled_from(["3cosadd", "3cosmul", "x"]),
       json_flag=st.booleans())
def test_neighbours_and_analogy(toy, word, a, k, method, json_flag):
    tail = ["--json"] if json_flag else []
    check(["neighbours", word, "--vectors", toy, "-k", str(k), *tail])
    check(["analogy", a, "bank", word, "--vectors", toy, "-k", str(k), "--method", method, *tail])


# -- no output may be an input: every command that writes, every input, by construction --------
def _leaves(cmd=None, path=()):
    import typer.main

    cmd = typer.main.get_command(app) if cmd is None else cmd
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            yield from _leaves(sub, (*path, name))
    else:
        yield path, cmd


def _roles(cmd) -> dict[str, str]:
    import inspect

    return {n: p.default.path_role for n, p in inspect.signature(cmd.callback).parameters.items()
            if getattr(p.default, "path_role", None)}


def _flag(param) -> str | None:
    return None if param.param_type_name == "argument" else next(
        (d for d in param.opts if d.startswith("--")), param.opts[0])


def _invocation(cmd, values: dict[str, str]) -> list[str]:
    """Arguments for ``cmd`` with ``values`` (parameter name -> path) and every other required
    parameter filled with a dummy: the path check runs before the command's own work."""
    options, arguments = [], []
    for p in cmd.params:
        value = values.get(p.name, "x" if p.required else None)
        if value is None:
            continue
        if _flag(p) is None:
            arguments.append(value)
        else:
            options += [_flag(p), value]
    return [*options, *arguments]


PATH_CASES = [(path, out, source) for path, cmd in _leaves() for out,
              role in _roles(cmd).items() if role == "output"
              for source, r in _roles(cmd).items() if r != "output"]


def test_every_path_parameter_is_declared_an_input_or_an_output():
    import inspect

    undeclared = []
    for path, cmd in _leaves():
        signature, roles = inspect.signature(cmd.callback).parameters, _roles(cmd)
        for p in cmd.params:
            looks = "Path" in str(signature[p.name].annotation) or any(
                k in (p.metavar or "") for k in ("FILE", "DIR", "PATH"))
            if looks and p.name not in roles:
                undeclared.append(f"{' '.join(path)} {_flag(p) or p.name}")
    assert not undeclared, f"declare these with options.reads / options.writes: {undeclared}"
    assert len(PATH_CASES) > 60  # every command that writes, with each of its inputs


@pytest.mark.parametrize("link", ["same", "symlink", "hardlink"])
@pytest.mark.parametrize(("command", "out", "source"), PATH_CASES, ids=lambda v: "-".join(v) if isinstance(
    v, tuple) else v)
def test_an_output_that_is_an_input_is_refused_before_any_work(tmp_path, command, out, source, link):
    cmd = dict(_leaves())[command]
    given = tmp_path / "input.txt"
    given.write_text("the bank of the river\n")
    target = {"same": given, "symlink": tmp_path / "soft", "hardlink": tmp_path / "hard"}[link]
    if link == "symlink":
        target.symlink_to(given)
    elif link == "hardlink":
        os.link(given, target)
    args = [*command, *_invocation(cmd, {source: str(given), out: str(target)})]
    result = runner.invoke(app, args)
    assert result.exit_code == 2 and result.stdout == "", (args, result.output)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and " is the input " in lines[0] and str(given) in lines[0], (args, result.stderr)
    assert given.read_text() == "the bank of the river\n" and sorted(p.name
                                                                     for p in tmp_path.iterdir()) == sorted(
        {"input.txt", target.name})
