"""``fetch`` and ``contextlens data fetch`` against a local HTTP server (127.0.0.1 only:
these tests never contact the internet) serving small archives in the published layouts."""

from __future__ import annotations

import functools
import hashlib
import http.server
import io
import json
import socket
import tarfile
import threading
import zipfile
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from contextlens.cli import data as data_cli
from contextlens.datasets import load_analogies, load_semcor, load_wic, load_wsd_eval
from contextlens.evaluation.fetch import ChecksumError, DatasetFetchError, fetch

WIC_FILES = {
    "WiC_dataset/train/train.data.txt": "bank\tN\t1-0\tthe bank .\tbank of it\n",
    "WiC_dataset/train/train.gold.txt": "F\n",
    "WiC_dataset/dev/dev.data.txt": "go\tV\t0-0\tgo .\tgo home\n",
    "WiC_dataset/dev/dev.gold.txt": "T\n",
    "WiC_dataset/README.txt": "WiC\n",
}


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture()
def server(tmp_path, monkeypatch):
    """``(folder served, base URL)``; proxies are bypassed for 127.0.0.1."""
    for var in ("http_proxy", "HTTP_PROXY", "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    www = tmp_path / "www"
    www.mkdir()
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(www)))
    thread = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield www, f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()
    thread.join(5)


def make_zip(path: Path, files: dict[str, str]) -> str:
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def make_tgz(path: Path, files: dict[str, str]) -> str:
    with tarfile.open(path, "w:gz") as tar:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def leftovers(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.name.startswith(".")] if root.exists() else []


def test_fetch_wic_zip_into_the_published_layout(server, tmp_path):
    www, base = server
    sha = make_zip(www / "WiC_dataset.zip", WIC_FILES)
    root, seen = tmp_path / "data", []
    path = fetch("wic", root, url=f"{base}/WiC_dataset.zip", sha256=sha, report=lambda *a: seen.append(a))
    assert path == root / "wic"
    assert [it.label for it in load_wic(root, "train")] == [False]
    assert (root / "wic/README.txt").is_file() and not leftovers(root)
    assert seen == [(f"{base}/WiC_dataset.zip", sha, True)]


def test_fetch_checksum_mismatch_writes_nothing(server, tmp_path):
    www, base = server
    make_zip(www / "WiC_dataset.zip", WIC_FILES)
    root = tmp_path / "data"
    with pytest.raises(ChecksumError, match="is not the expected 0000"):
        fetch("wic", root, url=f"{base}/WiC_dataset.zip", sha256="0" * 64)
    assert not (root / "wic").exists() and not leftovers(root)


def test_fetch_http_404_is_a_clear_error(server, tmp_path):
    _, base = server
    with pytest.raises(DatasetFetchError, match="the server answered 404") as e:
        fetch("wic", tmp_path / "data", url=f"{base}/nothing.zip")
    assert "by hand" in str(e.value) and str(tmp_path / "data/wic/train/train.data.txt") in str(e.value)
    assert not leftovers(tmp_path / "data")


def test_fetch_offline_says_so_and_where_files_go(tmp_path):
    with socket.socket() as s:  # a port nobody listens on: connection refused, like a machine offline
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(DatasetFetchError, match="looks offline") as e:
        fetch("analogy", tmp_path / "data", url=f"http://127.0.0.1:{port}/questions-words.txt", timeout=5)
    assert str(tmp_path / "data/analogy/questions-words.txt") in str(e.value)


def test_fetch_archive_in_another_layout_is_refused(server, tmp_path):
    www, base = server
    make_zip(www / "other.zip", {"something/else.txt": "x"})
    with pytest.raises(DatasetFetchError, match="not the published layout"):
        fetch("wic", tmp_path / "data", url=f"{base}/other.zip")
    assert not (tmp_path / "data/wic").exists() and not leftovers(tmp_path / "data")


def test_fetch_unsafe_archive_is_refused(server, tmp_path):
    www, base = server
    make_zip(www / "evil.zip", {**WIC_FILES, "../evil.txt": "x"})
    with pytest.raises(DatasetFetchError, match="unsafe member"):
        fetch("wic", tmp_path / "data", url=f"{base}/evil.zip")
    assert not (tmp_path / "evil.txt").exists() and not (tmp_path / "data/wic").exists()


def test_fetch_merges_into_a_partial_copy(server, tmp_path):
    www, base = server
    make_zip(www / "WiC_dataset.zip", WIC_FILES)
    root = tmp_path / "data"
    (root / "wic/test").mkdir(parents=True)
    (root / "wic/test/test.data.txt").write_text("kept\n")
    fetch("wic", root, url=f"{base}/WiC_dataset.zip")
    assert (root / "wic/test/test.data.txt").read_text() == "kept\n"
    assert len(load_wic(root, "dev")) == 1 and not leftovers(root)


def test_fetch_plain_file_without_checksum_reports_it(server, tmp_path):
    www, base = server
    text = ": family\nboy girl brother sister\n"
    (www / "questions-words.txt").write_text(text)
    seen = []
    fetch("analogy", tmp_path / "data", url=f"{base}/questions-words.txt", report=lambda *a: seen.append(a))
    assert load_analogies(tmp_path / "data/analogy/questions-words.txt")[0].name == "family"
    assert seen == [(f"{base}/questions-words.txt", hashlib.sha256(text.encode()).hexdigest(), False)]


def test_fetch_tar_gz_of_the_wsd_framework(server, tmp_path):
    www, base = server
    top = "WSD_Evaluation_Framework/Evaluation_Datasets/semeval2007/semeval2007"
    xml = ('<corpus><text id="d0"><sentence id="d0.s0"><instance id="d0.s0.t0" lemma="go" pos="VERB">go'
           '</instance></sentence></text></corpus>')
    sha = make_tgz(www / "wsd.tgz", {f"{top}.data.xml": xml, f"{top}.gold.key.txt": "d0.s0.t0 go%2:38:00::\n",
                                     "WSD_Evaluation_Framework/Training_Corpora/x.txt": "x"})
    fetch("wsd", tmp_path / "data", url=f"{base}/wsd.tgz", sha256=sha)
    sentences, gold = load_wsd_eval(tmp_path / "data", "semeval2007")
    assert gold == {"d0.s0.t0": ("go%2:38:00::",)}
    assert not (tmp_path / "data/wsd/eval/Training_Corpora").exists()


def test_fetch_semcor_packs_the_naf_folder(server, tmp_path):
    www, base = server
    naf = ('<NAF><text><wf id="w0" sent="1">Go</wf></text><terms><term id="t0" pos="VB" lemma="go">'
           '<span><target id="w0"/></span><externalReferences><externalRef reftype="lexical_key" '
           'reference="2:38:00::"/></externalReferences></term></terms></NAF>')
    make_zip(www / "master.zip", {"wsd_corpora-master/semcor1.6/brown1/br-a01.naf": "<NAF/>",
                                  "wsd_corpora-master/semcor3.0/brown1/br-a01.naf": naf})
    path = fetch("semcor", tmp_path / "data", url=f"{base}/master.zip")
    assert path == tmp_path / "data/wsd/semcor"
    (sentence,) = load_semcor(tmp_path / "data")
    assert sentence.id == "brown1/br-a01.s1" and sentence.instances[0].keys == ("go%2:38:00::",)


def test_data_fetch_cli(server, tmp_path):
    www, base = server
    sha = make_zip(www / "WiC_dataset.zip", WIC_FILES)
    app = typer.Typer()
    app.callback()(lambda: None)
    data_cli.register(app)
    root = tmp_path / "data"
    ok = CliRunner().invoke(app, ["data", "fetch", "wic", "--data-dir", str(root), "--url",
                                  f"{base}/WiC_dataset.zip", "--sha256", sha, "--json"])
    assert ok.exit_code == 0, ok.output
    out = json.loads(ok.stdout)
    assert out["complete"] and out["downloads"] == [{"url": f"{base}/WiC_dataset.zip", "sha256": sha,
                                                      "verified": True}]
    bad = CliRunner().invoke(app, ["data", "fetch", "wic", "--data-dir", str(tmp_path / "d2"), "--url",
                                   f"{base}/WiC_dataset.zip", "--sha256", "f" * 64])
    assert bad.exit_code == 2 and "error:" in bad.output and "sha256" in bad.output
    unknown = CliRunner().invoke(app, ["data", "fetch", "wikc", "--data-dir", str(root)])
    assert unknown.exit_code == 2 and "did you mean 'wic'" in unknown.output
