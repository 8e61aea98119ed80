"""Decomposition of trees into kinematic modules (000 §1, Fig. 1; 002 §A.1-A.2)."""

from __future__ import annotations

import numpy as np
import pytest

from denoc_bridge.multibody.modules import decompose_into_modules
from denoc_bridge.testing import random_model


@pytest.mark.parametrize(
    "parent,modules,module_parent",
    [
        ([-1, 0, 1, 2], [[0, 1, 2, 3]], [-1]),  # serial chain: one module
        ([-1, 0, 1, 0], [[0], [1, 2], [3]], [-1, 0, 0]),  # the gripper of 000 Fig. 4
        ([-1, -1, 1], [[0], [1, 2]], [-1, -1]),  # two chains on the base
        ([-1, 0, 1, 1, 3, 0], [[0], [1], [2], [3, 4], [5]], [-1, 0, 1, 1, 0]),
        ([], [], []),
    ],
)
def test_known_trees(parent, modules, module_parent):
    start, end, mparent, link_module = decompose_into_modules(np.array(parent, dtype=np.int64))
    assert [list(range(a, b)) for a, b in zip(start, end)] == modules
    assert mparent.tolist() == module_parent
    for i, links in enumerate(modules):
        assert all(link_module[k] == i for k in links)


def test_module_views_of_a_random_tree():
    model = random_model(9, 12, branching=0.5)
    n_children = np.bincount(model.parent[model.parent >= 0], minlength=model.n_links)
    seen = []
    for m in model.modules:
        seen += list(m.links)
        last = m.links[-1]
        assert n_children[last] != 1, "a module ends at a link with zero or several children"
        for k in list(m.links)[:-1]:
            assert n_children[k] == 1, "inside a module every link has exactly one child"
        first_parent = model.parent[m.links[0]]
        assert m.parent == (-1 if first_parent < 0 else model.link_module[first_parent])
        if m.parent >= 0:
            assert model.modules[m.parent].links[-1] == first_parent, "a module emerges from the last link"
        assert m.v_slice == slice(model.idx_v[m.links[0]], model.idx_v[m.links[0]] + m.nv)
        assert m.joint_names == model.joint_names[m.links.start : m.links.stop]
    assert seen == list(range(model.n_links))
