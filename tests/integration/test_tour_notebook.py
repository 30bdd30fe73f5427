"""``examples/tour.ipynb`` executed in a real kernel (nbclient + ipykernel): no cell errs, the
worked example's numbers are the course's, and the HTML outputs hold the views (head, model,
neuron, layers, senses, occlusion, lens, probes, cka), each with the data the library computes."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.missing import need
from tests.view_pages import page_views

need("nbclient")
need("nbformat")
need("ipykernel")
need("torch")

TOUR = Path(__file__).resolve().parents[2] / "examples" / "tour.ipynb"


@pytest.fixture(scope="module")
def executed(tmp_path_factory, data_dir):  # section 7 probes SemCor and samples the shared corpora
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(TOUR, as_version=4)
    src = str(Path(__file__).resolve().parents[2] / "src")  # the kernel runs this checkout's code
    env = {"PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH", "")) if p),
           # the tour's index folder goes with the test's files
           "TMPDIR": str(tmp_path_factory.mktemp("tour"))}
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(TOUR.parent)}},
                   env={**os.environ, **env}).execute()
    return nb


def outputs(nb, kind: str) -> list:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == kind]


@pytest.mark.slow
def test_the_tour_runs_and_shows_the_views(executed):
    assert not outputs(executed, "error")
    text = "".join(o["text"] for o in outputs(executed, "stream") if o["name"] == "stdout")
    # the course's worked figures
    assert "bank → loan   q·k = 0.5000   q·k/√d = 0.3536   weight = 0.5000" in text
    assert "k = 2 silhouette 0.407 labels [0, 0, 0, 1, 1, 1]" in text  # as the README's senses example
    shown = [v for o in outputs(executed, "execute_result") if "text/html" in o["data"]
             for v in page_views(o["data"]["text/html"])]
    assert [v["kind"] for v in shown] == ["neuron", "head", "model", "neuron", "layers", "senses",
                                          "occlusion", "lens",
                                         "probes", "cka"]
    neuron = shown[0]
    assert neuron["tokens"] == ["bank", "loan"] and neuron["scale"] == pytest.approx(2 ** -0.5)
    head = shown[1]["attention"]
    assert head["words"]["tokens"] == ["We", "sat", "on", "the", "bank", "of", "the", "river", "."]
    assert head["pieces"]["tokens"][0] == "[CLS]" and head["heads"] == 12 and len(head["layer_ids"]) == 6
    assert shown[5]["labels"] == [0, 0, 0, 1, 1, 1]
    occlusion, lens = shown[6], shown[7]
    assert [o["word"] for o in occlusion["others"]] == ["We", "sat", "on", "the", "of", "the", "river", "."]
    assert len(occlusion["layers"]) == 6 and "Spearman(occlusion, attention) by layer:" in text
    assert [t["word"] for t in lens["layers"][-1]["tracked"]] == ["river"] and len(lens["layers"]) == 31
    (pos,), cka = shown[8]["results"], shown[9]
    assert (pos["task"], pos["model"], [r["layer"] for r in pos["rows"]]) == ("pos", "minilm", list(range(7)))
    assert all(r["n_train"] == 2048 and r["n_test"] == 2048 for r in pos["rows"])
    printed = f"pos accuracy by layer: {[round(r['accuracy'], 3) for r in pos['rows']]}"
    assert printed in text and f"expected layer: {pos['expected_layer']}" in text
    assert cka["layers"] == [list(range(7))] * 2 and cka["n_sentences"] == 100
    assert [round(cka["matrix"][k][k], 6) for k in range(7)] == [1.0] * 7


def test_the_tour_is_stored_without_outputs():
    import nbformat

    nb = nbformat.read(TOUR, as_version=4)
    nbformat.validate(nb)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


@pytest.mark.slow
def test_the_tour_shows_no_third_party_warning(executed):
    """Issue 20 item 7: no warning of a library we call (tqdm without ipywidgets, UMAP, FAISS)
    reaches the tour's outputs."""
    err = "".join(o["text"] for o in outputs(executed, "stream") if o["name"] == "stderr")
    assert "Warning" not in err and "WARNING" not in err, err
