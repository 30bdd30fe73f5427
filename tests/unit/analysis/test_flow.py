"""Attention flow (Abnar & Zuidema 2020) on hand-computed graphs, and against networkx's maximum
flow on the same real-valued capacities; the explanation helpers' pure functions."""

from __future__ import annotations

import numpy as np
import pytest

from contextlens.analysis.attribution import attention_rollout
from contextlens.analysis.faithfulness import parse_methods, word_scores
from contextlens.analysis.flow import SCALE, attention_flow, flow_graph
from contextlens.analysis.sublayers import block_rows, largest_drop
from contextlens.errors import DimensionError, InputError, UnknownOptionError

SWAP = [[0.0, 1.0], [1.0, 0.0]]  # each word attends only to the other


def test_two_layers_by_hand_where_flow_and_rollout_differ():
    # Â = 0.5·A + 0.5·I = [[.5, .5], [.5, .5]] at both layers. Into word 0 at layer 2 run two
    # edge-disjoint paths from input word 1, each of capacity min(.5, .5): a flow of 1.0, where
    # rollout multiplies along the paths: .5·.5 + .5·.5 = 0.5.
    a = np.array([[SWAP], [SWAP]])  # (2 layers, 1 head, 2, 2)
    flow = attention_flow(a, 0)
    assert flow.round(6).tolist() == [[0.5, 0.5], [1.0, 1.0]]
    assert attention_rollout(a)[1, 0].round(6).tolist() == [0.5, 0.5]


def test_a_path_carries_its_weakest_edge():
    # layer 1: word 1 keeps itself (Â[1] = [0, 1]), word 0 reads 0.2 of word 1 (A[0] = [0.6, 0.4] → Â[0] =
    # [0.8, 0.2]); layer 2: word 0 reads only word 1 (A[0] = [0, 1] → Â[0] = [0.5, 0.5]).
    a = np.array([[[[0.6, 0.4], [0.0, 1.0]]], [[[0.0, 1.0], [0.0, 1.0]]]])
    flow = attention_flow(a, 0)
    # input word 1 → word 0 at layer 2: via (1, 0) min(.2, .5) = .2, via (1, 1) min(1, .5) = .5
    assert flow[1].round(6).tolist() == [0.5, 0.7]


def test_the_special_node_is_the_last_column_and_keeps_what_it_got():
    a = np.array([[[[0.0, 0.5], [1.0, 0.0]]]])  # word 0 gave the other half to [CLS]
    flow = attention_flow(a, 0, np.array([[[0.5, 0.0]]]))
    # Â[0] = 0.5·[0, .5, .5] + 0.5·[1, 0, 0] = [.5, .25, .25]: one layer, flow = the weights
    assert flow.round(6).tolist() == [[0.5, 0.25, 0.25]]


def test_matches_networkx_on_random_attention():
    nx = pytest.importorskip("networkx")
    rng = np.random.default_rng(3)
    n, layers = 6, 3
    a = rng.dirichlet(np.ones(n + 1), size=(layers, 2, n))[..., :n]  # 2 heads, some weight to specials
    special = 1 - a.sum(-1)
    flow = attention_flow(a, 2, special)
    hat = np.stack([attention_rollout(a[k:k + 1], special[k:k + 1])[0] for k in range(layers)])
    m = n + 1
    g = nx.DiGraph()
    for lay in range(layers):
        for i in range(m):
            for j in range(m):
                g.add_edge((lay, j), (lay + 1, i), capacity=float(hat[lay, i, j]))
    for L in range(1, layers + 1):
        below = g.subgraph([(x, y) for x in range(L + 1) for y in range(m)])
        want = [nx.maximum_flow_value(below, (0, j), (L, 2)) for j in range(m)]
        np.testing.assert_allclose(flow[L - 1], want, atol=m * m * L / SCALE)


def test_flow_graph_is_integer_and_layered():
    g = flow_graph(np.array([[[0.5, 0.5], [0.0, 1.0]], [[1.0, 0.0], [0.25, 0.75]]]))
    assert g.dtype == np.int32 and g.shape == (6, 6)
    assert g[0, 2] == SCALE // 2 and g[3, 5] == 3 * SCALE // 4 and g[2, 0] == 0  # edges only go up a layer


def test_flow_checks_its_input():
    with pytest.raises(DimensionError):
        attention_flow(np.ones((2, 2, 2)), 0)
    with pytest.raises(InputError, match="target word index"):
        attention_flow(np.array([[SWAP]]), 2)


def test_pure_helpers():
    assert parse_methods(["ig", "all"]) == list(parse_methods("all"))
    with pytest.raises(UnknownOptionError, match="value-zeroing"):
        parse_methods("zeroing")
    with pytest.raises(InputError, match="at least one"):
        parse_methods(" , ")
    # a word's score: its pieces' attribution vectors summed, then the norm
    vectors = np.array([[[1.0, 0.0], [-1.0, 0.0], [0.0, 2.0]]])
    assert word_scores(vectors, [(0, 1), (2,)]).tolist() == [[0.0, 2.0]]
    moved, norms = block_rows(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([[1.0, 0.0], [0.0, -3.0]]))
    assert moved == [0.0, 2.0] and norms == [0.0, 4.0]
    rows = [{"layer": 1, "after": "attention", "cosine": 0.8}, {"layer": 1, "after": "ffn", "cosine": 0.9},
            {"layer": 2, "after": "attention", "cosine": 0.5}]
    assert largest_drop(rows, 1.0) == {"layer": 2, "after": "attention", "drop": pytest.approx(0.4)}
    assert largest_drop(rows, None) is None
