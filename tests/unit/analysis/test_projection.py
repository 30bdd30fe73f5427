"""2-D projections: hand-computed PCA, and every degenerate input answered before native code
runs (t-SNE on points without variance used to kill the process with SIGSEGV)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from contextlens.analysis.explore import explore
from contextlens.analysis.projection import COINCIDE, project
from contextlens.analysis.senses import SenseClusterer, senses
from contextlens.encoders.static import StaticEncoder
from contextlens.errors import InputError, ZeroVectorError
from contextlens.vectors import EmbeddingTable

TEN = np.random.default_rng(0).normal(size=(10, 6))


def test_pca_of_points_on_a_line_by_hand():
    # mean (1, 0); the first axis is (1, 0) (largest loading positive); the second has no variance
    xy = project(np.array([[0.0, 0.0], [1.0, 0.0], [2.0, 0.0]]))
    np.testing.assert_allclose(xy, [[-1.0, 0.0], [0.0, 0.0], [1.0, 0.0]], atol=1e-12)


@pytest.mark.parametrize("method", ["pca", "tsne", "umap"])
@pytest.mark.parametrize("points", [np.ones((2, 50)), np.zeros((4, 3)), 7.0 + np.zeros((5, 2)),
                                    np.ones((3, 8)) + 1e-9 * np.arange(3)[:, None]])
def test_coinciding_points_are_all_at_the_origin(method, points):
    assert project(points, method).tolist() == [[0.0, 0.0]] * len(points)


def test_the_coincidence_threshold_is_relative_to_the_size_of_the_points():
    near = np.ones((3, 4)) * 1000 + np.eye(3, 4) * 1000 * COINCIDE * 0.5
    assert not project(near).any()
    apart = np.ones((3, 4)) * 1000 + np.eye(3, 4) * 1000 * COINCIDE * 10
    assert project(apart).any()


@pytest.mark.parametrize("method", ["pca", "tsne", "umap"])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_coordinates_are_an_error_naming_the_row(method, bad):
    x = TEN.copy()
    x[3, 1] = bad
    with pytest.raises(InputError, match=r"points \[3\] have NaN or infinite coordinates"):
        project(x, method)


@pytest.mark.parametrize("method", ["pca", "tsne", "umap"])
def test_fewer_than_two_points_or_a_wrong_shape_are_errors(method):
    with pytest.raises(InputError, match="at least 2 points, got 1"):
        project(np.ones((1, 3)), method)
    with pytest.raises(InputError, match=r"\(n, dim\) array"):
        project(np.ones(3), method)


@pytest.mark.parametrize("n", [2, 3])
def test_umap_below_four_points_says_what_to_use(n):
    with pytest.raises(InputError, match=f"UMAP needs at least 4 points, got {n}; use pca or tsne"):
        project(TEN[:n], "umap")


def test_tsne_takes_two_points_one_dimension_and_huge_coordinates():
    two = project(TEN[:2], "tsne")
    assert np.isfinite(two).all() and two[0, 0] == pytest.approx(-two[1, 0])  # mirror images
    assert np.isfinite(project(TEN[:, :1], "tsne")).all()  # scikit-learn's own PCA start needs dim >= 2
    # t-SNE sees the points centred and scaled to unit radius: moving or scaling them changes nothing
    np.testing.assert_allclose(project(TEN * 1e200 + 5e200, "tsne"), project(TEN, "tsne"), rtol=1e-5,
                               atol=1e-4)


def test_pca_stays_in_the_units_of_the_points_even_when_huge():
    np.testing.assert_allclose(project(TEN * 1e300), project(TEN) * 1e300, rtol=1e-9)


def test_tsne_on_identical_points_does_not_kill_the_process():
    # on the old code this child died of SIGSEGV (returncode -11)
    code = ("import numpy as np; from contextlens.analysis.projection import project; "
            "print(project(np.ones((2, 50)), 'tsne').tolist())")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "[[0.0, 0.0], [0.0, 0.0]]", done.stderr[-2000:]


# ---- the same guards through the analyses ---------------------------------------------------
def table(bank):
    return EmbeddingTable(["the", "bank", "a", "river"], [[1, 0], bank, [0, 1], [1, 1]], name="t")


S = ["the bank", "a bank", "river bank"]


@pytest.mark.parametrize("bank", [[np.nan, 1.0], [np.inf, 0.0]])
def test_explore_and_senses_name_the_usages_that_are_not_finite(bank):
    t = table([1.0, 1.0])  # a table refuses such values, so they stand for a model's broken output
    t.vectors.setflags(write=True)
    t.vectors[1] = bank
    enc = StaticEncoder(t)
    with pytest.raises(InputError, match=r"usages of 'bank' \[0, 1, 2\] have NaN or infinite"):
        explore(enc, S, "bank", projection="pca")
    with pytest.raises(InputError, match=r"usages \[0, 1, 2\] have NaN or infinite"):
        senses(enc, S, "bank", k=2)


def test_explore_of_a_static_word_projects_its_usages_to_one_point():
    got = explore(StaticEncoder(table([0.5, 0.5])), S, "bank", projection="tsne")
    assert got["words"][0]["spread"] == pytest.approx(0.0, abs=1e-12)
    assert got["projection"]["points"] == [[0.0, 0.0]] * 3


def test_clustering_is_unchanged_by_huge_or_tiny_scales_and_rejects_zero_rows():
    x = np.array([[1.0, 0.1], [1.0, 0.0], [0.1, 1.0], [0.0, 1.0], [0.05, 1.0]])
    want = SenseClusterer().fit(x)
    for scale in (1e-300, 1e300):
        got = SenseClusterer().fit(x * scale)
        assert got.labels_.tolist() == want.labels_.tolist()
        assert got.silhouette_ == pytest.approx(want.silhouette_)
    with pytest.raises(ZeroVectorError, match=r"usages \[1\] are zero vectors"):
        SenseClusterer(k=2).fit(np.array([[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]]))


def test_identical_usages_form_one_cluster():
    got = SenseClusterer(k=2).fit(np.ones((4, 3)))
    assert got.k_ == 1 and got.labels_.tolist() == [0, 0, 0, 0] and got.silhouette_ is None


def test_analyses_run_their_numeric_steps_through_run():
    calls = []

    def run(fn, *args, **kwargs):
        calls.append(fn.__name__)
        return fn(*args, **kwargs)

    enc = StaticEncoder(table([0.5, 0.5]))
    assert explore(enc, S, "bank", projection="pca", run=run)["projection"]["points"] == [[0.0, 0.0]] * 3
    senses(enc, S, "bank", k=2, projection="pca", run=run)
    assert calls == ["project", "cluster_senses", "project"]
