"""The command line's shared options, defined once, and the one way each becomes a value.

- Every option two commands share is defined here (flag, short flag, metavar, default,
  help), so ``-m`` means ``--model`` and ``--method`` defaults to ``attention`` in every
  command. An option a single command has stays in its module, defined the same way.
- A numeric option carries its bound (:func:`bounded`): ``handle_errors`` checks it with
  ``check_int`` / ``check_float`` before the command runs, so ``-k 0`` or ``--alpha nan``
  is one line and exit code 2, never an index error deep in a loop.
- :class:`EncoderChoice` (its ``encoder()``) is the one encoder factory of the CLI: a ``--model``, or a
  ``--method`` over a ``--vectors`` table. An option that does not apply to the chosen
  method (``--heads`` with ``average``, ``--alpha`` with a model) is rejected with a
  message naming the method, and ``--layer`` is checked against the encoder's
  ``layer_ids`` before any sentence is encoded.
- :func:`parse_ints` and :func:`parse_words` are the comma-list parsers; their errors name
  the option.
- Every path option or argument is declared an input (:func:`reads`) or an output
  (:func:`writes`); ``handle_errors`` refuses, before the command runs, an output that is an
  input (the same file, a link or a hard link, a file of an input folder: :func:`check_paths`),
  so a new command is covered by declaring its paths
  (``tests/integration/test_cli_fuzz.py`` fails on an undeclared one).

Help text is read as plain text (see ``_common.Command``): ``[score]`` is shown as is.
The choices listed in help texts are the library's (``tests/integration/test_cli_options.py``
checks each against the library's tuple), spelled out here so that ``contextlens --help``
needs no numpy.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import typer

from ..bounds import MAX_K, MAX_LAYERS
from ..errors import InputError, check_float, check_int, numbered

DEFAULT_VECTORS = "glove-6b-50d"
DEFAULT_METHOD = "attention"
STATIC_METHODS_HELP = "static | average | attention"  # encoders.registry.STATIC_METHODS
PROJECTIONS_HELP = "pca | tsne | umap"  # analysis.projection.PROJECTIONS
ENGINES_HELP = "torch | onnx | auto"  # encoders.engines.ENGINES
PRECISIONS_HELP = "fp32 | bf16"  # encoders.engines.PRECISIONS
MAX_WINDOW = 10_000
MAX_HEADS = 4096
MAX_LAYER_NUMBER = 10_000


def bounded(info, low: float | None = None, high: float | None = None, *, kind: type = int, hint: str = ""):
    """Give an option (a ``typer.Option``) its bound: ``handle_errors`` calls
    ``info.check(value)`` before the command runs."""
    flag = next((d for d in info.param_decls if d.startswith("--")), info.param_decls[0])
    checker = check_int if kind is int else check_float
    info.check = functools.partial(checker, flag, low=low, high=high, hint=hint)
    return info


def reads(info, *, corpus: bool = False):
    """Declare a path option (or argument) an input of its command (``corpus``: a folder is
    read as a corpus, so only its text files are the input): ``handle_errors`` refuses any
    output that is the same file (:func:`check_paths`). A FILE|NAME option counts as a path
    when a file or folder of that name exists."""
    info.path_role = "corpus" if corpus else "input"
    return info


def writes(info):
    """Declare a path option an output of its command (a file, or a folder it writes into)."""
    info.path_role = "output"
    return info


def check_paths(given: Iterable[tuple[str, str, Any]]) -> None:
    """Refuse an output that is an input: ``given`` holds ``(label, role, value)`` of a
    command's declared path parameters (role ``input``, ``corpus`` or ``output``; a value a
    path, a name, a list of them or None); see :func:`contextlens.files.check_outputs`."""
    outputs, inputs, corpora = [], [], set()
    for label, role, value in given:
        label = label.removesuffix("...")
        for v in value if isinstance(value, list | tuple) else [value]:
            if isinstance(v, str | os.PathLike) and str(v):
                (outputs if role == "output" else inputs).append((label, Path(v)))
                if role == "corpus":
                    corpora.add(label)
    if not outputs:
        return
    from ..corpus.reading import corpus_files
    from ..files import check_outputs

    def files_of(label: str, folder: Path):
        return corpus_files(folder) if label in corpora else (
            Path(root, name) for root, _, names in os.walk(folder) for name in names)

    check_outputs(outputs, inputs, files_of=files_of)


def option(default: Any, *decls: str, metavar: str | None = None, help: str, **kw) -> Any:
    """A ``typer.Option`` (one place to change how every option is made)."""
    return typer.Option(default, *decls, metavar=metavar, help=help, **kw)


def flag(*decls: str, help: str, default: bool | None = False) -> Any:
    """An on/off option; it shows no metavar."""
    return typer.Option(default, *decls, help=help)


# -- what to encode ---------------------------------------------------------------------
WORD = option(..., "--word", "-w", metavar="WORD", help="The target word.")
TEXT = typer.Argument(..., metavar="TEXT", help="The sentence.")
SENTENCES = reads(option(None, "--sentences", metavar="FILE", help="A file of sentences, one per line (# "
                         "comments ignored)."))
SENTENCE = option([], "--sentence", "-s", metavar="TEXT", help="A sentence (repeat for more).")
OCCURRENCE = option(None, "--occurrence", metavar="N", help="Which occurrence of the word in a sentence: 0 "
                    "(the first), 1... ('all' where every usage counts).")
SKIP_MISSING = flag("--skip-missing", help="Skip sentences that lack the word instead of failing.")
PROBE = option([], "--probe", "-p", metavar="WORD", help="A probe word to measure against (repeat for more).")

# -- which encoder -----------------------------------------------------------------------
VECTORS = reads(option(None, "--vectors", metavar="FILE|NAME", help="A static table: a vectors file (.npz, "
                       f"word2vec text/binary, GloVe text) or a packaged name. Default: {DEFAULT_VECTORS} "
                       "(unless --model)."))
MODEL = reads(option(None, "--model", "-m", metavar="NAME", help="A transformer instead of --vectors: "
                     "minilm, mpnet, smollm2, a local directory or a Hugging Face id. Reports every layer."))


def engine_option(*decls: str) -> Any:
    """``--engine``: what runs a transformer (``index build`` spells it ``--model-engine``:
    its ``--engine`` chooses local or Ray)."""
    return option(None, *(decls or ("--engine",)), metavar="ENGINE", help=f"With a model: what runs it: "
                  f"{ENGINES_HELP} (default auto: onnx where onnxruntime is installed, else torch).")


ENGINE = engine_option()
MODEL_ENGINE = engine_option("--model-engine")
# corpus-scale commands (index build, static distill): where the encoding runs
RUN_ENGINE = option("local", "--engine", metavar="NAME", help="local | ray (Ray Data).")
ADDRESS = option(None, "--address", metavar="ADDRESS", help="With --engine ray: auto (the running cluster) "
                 "or ray://HOST:10001 (default: a local cluster on this machine's cores).")
CONCURRENCY = bounded(option(1, "--concurrency", metavar="N", help="With --engine ray: encoder actors (one "
                             "model each)."), 1, 1024)
PRECISION = option(None, "--precision", metavar="KIND",
                   help=f"With a model: {PRECISIONS_HELP} (default fp32; bf16 is torch only and changes the "
                   "vectors: it prints its cosine to fp32 per layer).")

STATIC_VECTORS = reads(option(None, "--static-vectors", metavar="FILE|NAME", help="A static table (word2vec, "
                              "GloVe, fastText file or packaged name, e.g. glove-6b-50d) as the static side "
                              "instead of layer 0."))
METHOD = option(None, "--method", metavar="METHOD", help=f"How to mix --vectors: {STATIC_METHODS_HELP} "
                f"(default: {DEFAULT_METHOD}).")
ALPHA = bounded(option(None, "--alpha", metavar="X", help="average: weight of the word's own vector (0 = "
                       "neighbours only; default 0)."), 0.0, 1.0, kind=float)
WINDOW = bounded(option(None, "--window", metavar="N", help="average / attention: context window in words "
                        "each side (default: the whole sentence)."), 0, MAX_WINDOW)
INCLUDE_SELF = flag("--include-self/--exclude-self", default=None,
                    help="attention: may the word attend to itself (default: --exclude-self).")
CAUSAL = flag("--causal/--bidirectional", default=None, help="attention: only look left (default: "
              "--bidirectional).")
POSITIONS = option(None, "--positions", metavar="KIND",
                   help="attention: add positional encodings: sinusoidal.")
HEADS = bounded(option(None, "--heads", metavar="N", help="attention: number of heads (default 1)."), 1,
                MAX_HEADS)
N_LAYERS = bounded(option(None, "--n-layers", metavar="N",
                          help="attention: stacked attention layers (default 1)."),
                   1, MAX_LAYERS)
PROJECTIONS = option(None, "--projections", metavar="KIND", help="attention: 'random' (seeded) W_Q, W_K, W_V "
                     "per head (default: none, q = k = v).")
SCALE = bounded(option(None, "--scale", metavar="X", help="attention: score scale (default 1/sqrt(d); 0 "
                       "gives uniform weights)."), -1e6, 1e6, kind=float)
SEED = bounded(option(0, "--seed", metavar="N", help="Random seed: attention's random projections, t-SNE / "
                      "UMAP, sampling."), 0, 2**32 - 1)

# -- what to show ------------------------------------------------------------------------
LAYER_HELP = ("Layer number: 0 = the static row, then the model's own numbers; negative counts from the top "
              "(-1 = the last).")


def layer_option(default: int | None = -1, help: str = LAYER_HELP) -> Any:
    """``--layer N``: a layer number as the library means it (``Encoding.layer_position``)."""
    return bounded(option(default, "--layer", metavar="N", help=help), -MAX_LAYER_NUMBER, MAX_LAYER_NUMBER)


LAYER = layer_option()
PROJECTION = option(None, "--projection", metavar="METHOD",
                    help=f"Project the usages to 2-D: {PROJECTIONS_HELP}.")
JSON = flag("--json", help="Print one JSON object on stdout.")
PLOT = writes(option(None, "--plot", metavar="FILE", help="Write a figure; the suffix picks the format: "
                     ".png, .svg, .pdf."))
HTML = writes(option(None, "--html", metavar="FILE", help="Write the interactive views as one standalone "
                     "HTML file (opens offline in any browser)."))
DATA_DIR = reads(option(None, "--data-dir", metavar="DIR", help="The data directory (default: "
                        "$CONTEXTLENS_DATA, else ~/.cache/contextlens/data)."))


# -- the lab (``contextlens lab``) -----------------------------------------------------------
LAB_HOST = typer.Option("127.0.0.1", help="Address to listen on (localhost by default).")
LAB_PORT = typer.Option(8000, min=0, max=65535, help="Port to listen on (0: a free one, printed).")
LAB_MODELS = typer.Option(
    [], "--model", help="A transformer to offer next to the installed packaged ones: a packaged name, a "
    "local Hugging Face folder or (online) a hub id; repeat it for more. The first is the default (else "
    "minilm). Loaded on first use.")
LAB_VECTORS = reads(typer.Option("glove-6b-50d", help="Static table for the static, average and attention "
                                 "encoders."))
LAB_THREADS = typer.Option(1, min=0, max=256, help="CPU threads for the models (0: chosen from the cores and "
                           "the load).")
LAB_INDEX = reads(typer.Option(
    [], "--index", help="A usage index to search in the lab (the --db folder of `contextlens index build`); "
    "repeat it to search several indexes of one model as one (the shards of a corpus)."))
ALLOW_REMOTE = typer.Option(False, "--allow-remote", help="Allow a non-local --host: anyone who can reach it "
                            "can use the lab.")
TRUSTED_HOST = typer.Option(
    [], "--trusted-host", help="A Host name the lab also answers to (repeat it), e.g. its name on your "
    "network with --allow-remote. Other names are refused (DNS rebinding).")
BROWSER = typer.Option(True, "--browser/--no-browser", help="Open the lab in your browser.")


def top_k(default: int, help: str, *decls: str) -> Any:
    """``-k N``: how many of something to list (neighbours, answers, usages)."""
    return bounded(option(default, *(decls or ("-k",)), metavar="N", help=help), 1, MAX_K)


def k_senses(help: str = "Number of senses (clusters), or 'auto' (the largest eigengap).") -> Any:
    """``--k auto|N``: how many clusters; parsed by :func:`parse_k`."""
    return option("auto", "--k", "-k", metavar="auto|N", help=help)


def method_option(default: str = DEFAULT_METHOD, also: str = "") -> Any:
    """``--method`` with another default than :data:`METHOD` (``eval``: static, the table itself);
    ``also``: what else the command's --method chooses (a sentence).

    The option's value stays None when it is not given (the command applies ``default``
    over a table): a default value would read as given, and :func:`check_source` would
    refuse it beside ``--model``."""
    return option(None, "--method", metavar="METHOD", help=f"How to use --vectors: {STATIC_METHODS_HELP} "
                  f"(default: {default}).{' ' + also if also else ''}")


# -- parsers -----------------------------------------------------------------------------
def parse_ints(name: str, value: str | None) -> list[int] | None:
    """A comma list of whole numbers (``4,6``, ``-1``), None when not given.

    >>> parse_ints("--layers", "4, 6"), parse_ints("--layers", None)
    ([4, 6], None)
    >>> parse_ints("--layers", "a,b")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: --layers must be whole numbers separated by commas (e.g. 4,6), got 'a,b'
    """
    if value is None:
        return None
    parts = [p.strip() for p in value.split(",") if p.strip()]
    try:
        numbers = [int(p) for p in parts]
    except ValueError:
        numbers = []
    if not numbers or any(abs(n) > MAX_LAYER_NUMBER for n in numbers):
        raise InputError(f"{name} must be whole numbers separated by commas (e.g. 4,6), got {value!r}")
    return numbers


def parse_words(name: str, value: str | None) -> list[str] | None:
    """A comma list of words (``bank,spring``), None when not given.

    >>> parse_words("--words", "bank, spring,")
    ['bank', 'spring']
    >>> parse_words("--words", " , ")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: --words must be words separated by commas (e.g. bank,spring), got ' , '
    """
    if value is None:
        return None
    words = [w.strip() for w in value.split(",") if w.strip()]
    if not words:
        raise InputError(f"{name} must be words separated by commas (e.g. bank,spring), got {value!r}")
    return words


def parse_k(value: str) -> int | str:
    """``--k``: 'auto' or a number of clusters (at least 1).

    >>> parse_k("auto"), parse_k("3")
    ('auto', 3)
    >>> parse_k("two")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: --k must be 'auto' or a whole number of senses, got 'two'
    """
    if value == "auto":
        return value
    if not value.isascii() or not value.isdigit():
        raise InputError(f"--k must be 'auto' or a whole number of senses, got {value!r}")
    return check_int("--k", int(value), low=1, high=MAX_K)


def parse_occurrence(value: str | None, allow_all: bool = False) -> int | str | None:
    """``--occurrence``: None (the only one), a 0-based number or, where allowed, 'all'.

    >>> parse_occurrence("1"), parse_occurrence(None), parse_occurrence("all", allow_all=True)
    (1, None, 'all')
    >>> parse_occurrence("all")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: --occurrence must be a whole number (0 = the first), got 'all'
    """
    if value is None or (allow_all and value == "all"):
        return value
    if not value.isascii() or not value.isdigit():
        extra = " or 'all'" if allow_all else ""
        raise InputError(f"--occurrence must be a whole number (0 = the first){extra}, got {value!r}")
    return check_int("--occurrence", int(value), low=0, high=MAX_K)


def sentence_pairs(texts: list[str]) -> list[tuple[str, str]]:
    """``T1 T2 --pair T3 T4 ...`` (as the command line gives it) as pairs of sentences.

    >>> sentence_pairs(["a bank", "the bank", "--pair", "x", "y"])
    [('a bank', 'the bank'), ('x', 'y')]
    """
    groups: list[list[str]] = [[]]
    for t in texts:
        if t == "--pair":
            groups.append([])
        elif t.startswith("-") and len(t) > 1 and not t[1].isdigit() and not t[1].isspace():
            raise InputError(f"unknown option {t!r}; see contextlens layers --help")
        else:
            groups[-1].append(t)
    bad = [i for i, g in enumerate(groups) if len(g) != 2]
    if bad:
        raise InputError(f"{numbered('pair', bad[0])} has {len(groups[bad[0]])} sentence(s); give exactly "
                         "two: TEXT1 TEXT2 [--pair TEXT3 TEXT4]...")
    return [(a, b) for a, b in groups]


def check_output(path: Path | None, *, folder: bool = False) -> None:
    """Check before any work that ``path`` (a file, or with ``folder`` a directory) can be
    written: not a directory (not a file), under a folder that exists or can be made and
    that we may write to. The write itself still goes through ``files.atomic_output``.

    >>> check_output(Path("/dev/null/x.npz"))
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: cannot write /dev/null/x.npz: /dev/null is not a folder; choose a path in a folder you may write to
    """  # noqa: E501 (a doctest's expected output, printed whole)
    if path is None:
        return
    import tempfile

    problem = None
    if path.exists() and path.is_dir() != folder:
        problem = f"it is {'a file' if folder else 'a folder'}"
    else:
        parent = next((p for p in path.absolute().parents if p.exists()), None)
        if parent is not None and not parent.is_dir():
            problem = f"{parent} is not a folder"
        elif parent is not None:
            try:  # the one sure test (permissions, read-only or virtual file systems): an unnamed temp file
                tempfile.TemporaryFile(dir=parent).close()
            except OSError as e:
                problem = f"cannot create a file in {parent} ({e.strerror or e})"
    if problem:
        raise InputError(f"cannot write {path}: {problem}; choose a path in a folder you may write to")


def check_plot(plot: Path | None) -> None:
    """Check the figure path and format (the file suffix) before any work."""
    if plot is not None:
        from .. import plots

        plots.figure_format(plot)
        check_output(plot)


def check_html(html: Path | None) -> None:
    """Check the ``--html`` path (an .html file we may write) before any work."""
    if html is not None:
        from ..views import check_html_path

        check_output(check_html_path(html))


def check_projection(projection: str | None) -> None:
    if projection is not None:
        from ..analysis.projection import PROJECTIONS as valid
        from ..errors import check_choice

        check_choice("projection", projection, valid)


def static_table(name: str | None):
    """``--static-vectors``: the table (a file or packaged name), None when not given."""
    if name is None:
        return None
    from ..encoders.registry import resolve_vectors

    return resolve_vectors(name)


# -- the encoder -------------------------------------------------------------------------
def check_source(model: str | None, vectors: str | None, method: str | None) -> None:
    """A model, or a table and a method: never a model with a table or a method."""
    if model is not None and vectors is not None:
        raise InputError("give --vectors (a static table) or --model (a transformer), not both")
    if model is not None and method is not None:
        raise InputError(f"--method {method} mixes a static table (--vectors); --model {model} is a "
                         "transformer and mixes by itself: drop --method")


def check_engine(model: str | None, engine: str | None, precision: str | None) -> dict[str, str]:
    """``--engine`` / ``--precision`` as the library's keywords; given without a model, an error.

    >>> check_engine("minilm", "onnx", None)
    {'engine': 'onnx'}
    >>> check_engine(None, None, "bf16")
    Traceback (most recent call last):
    ...
    contextlens.errors.InputError: --precision applies to a transformer (--model); drop it or give --model
    """
    given = {k: v for k, v in (("engine", engine), ("precision", precision)) if v is not None}
    if given and model is None:
        flags = " and ".join(f"--{k}" for k in given)
        raise InputError(f"{flags} appl{'ies' if len(given) == 1 else 'y'} to a transformer (--model); "
                         f"drop {'it' if len(given) == 1 else 'them'} or give --model")
    return given


#: the fields of :class:`EncoderChoice` that mix a static table (encoders.registry.METHOD_OPTIONS)
MIXING = ("alpha", "window", "include_self", "causal", "positions", "heads", "n_layers", "projections",
          "scale")


@dataclass(frozen=True)
class EncoderChoice:
    """Which encoder the options describe: a ``--model`` (with its ``--engine`` and
    ``--precision``), or a ``--method`` over a ``--vectors`` table with its mixing options;
    :meth:`encoder` makes it, the CLI's one encoder factory.

    >>> choice = EncoderChoice.given({"word": "bank", "vectors": "t.npz", "heads": 2, "alpha": None})
    >>> choice.vectors, choice.model, choice.mixing
    ('t.npz', None, {'heads': 2, 'alpha': None})
    """

    model: str | None = None  # a transformer
    engine: str | None = None
    precision: str | None = None
    vectors: str | None = None  # or a static table, mixed by method
    method: str | None = None
    mixing: Mapping[str, Any] = field(default_factory=dict)  # its options (MIXING), None = not given
    seed: int = 0  # seeds attention's random projections
    layer: int | None = None  # checked against the encoder's layer_ids

    @classmethod
    def given(cls, options: Mapping[str, Any]) -> EncoderChoice:
        """The choice from a command's parameters (its ``locals()``): those named as a field or
        in :data:`MIXING`, the mixing options in the command's order (an error lists them so)."""
        named = {f.name for f in fields(cls)} - {"mixing"}
        return cls(**{k: v for k, v in options.items() if k in named},
                   mixing={k: v for k, v in options.items() if k in MIXING})

    def encoder(self):
        """The encoder, with ``layer`` checked against its ``layer_ids``.

        A mixing option set for a method that does not take it, or any set with ``model``,
        is an error naming the method. Over a table, ``attention`` excludes the word itself
        unless ``include_self`` is given; ``seed`` seeds random projections when there are some.
        """
        from ..encoders.registry import make_encoder, method_options

        model, method = self.model, self.method
        check_source(model, self.vectors, method)
        running = check_engine(model, self.engine, self.precision)
        if model is not None:
            given = sorted(k for k, v in self.mixing.items() if v is not None)
            if given:
                flags = ", ".join("--" + k.replace("_", "-") for k in given)
                raise InputError(f"{flags} mix{'es' if len(given) == 1 else ''} a static table (--vectors); "
                                 f"--model {model} is a transformer: drop {flags}")
            from ._common import spinner

            with spinner(f"loading {model}..."):
                encoder = make_encoder(model=model, **running)
        else:
            method = method or DEFAULT_METHOD
            options = method_options(method, **self.mixing)
            if method == "attention":
                options.setdefault("include_self", False)
                if options.get("projections") is not None:
                    options["seed"] = self.seed
            encoder = make_encoder(method, vectors=self.vectors or DEFAULT_VECTORS, **options)
        if self.layer is not None:
            encoder.layer_position(self.layer)
        return encoder

