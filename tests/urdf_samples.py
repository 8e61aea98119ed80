"""Random URDF documents for the URDF tests (tests/io/test_urdf.py, tests/io/test_fuzz.py)."""

from __future__ import annotations

import numpy as np

from denoc_bridge.testing import random_inertia


def random_urdf(
    seed: int | None = None,
    n_links: int = 8,
    *,
    fixed: float = 0.25,
    no_inertial: float = 0.15,
    branching: float = 0.35,
) -> str:
    """A random URDF document: random names (so that the order of siblings by joint name
    matters), links and joints declared in random order, revolute/continuous/prismatic/fixed
    joints with arbitrary (non-normalised) axes and rpy origins, inertial frames with rpy,
    and some links without ``<inertial>``.  Leaf links always have an inertia."""
    rng = np.random.default_rng(seed)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))

    def name() -> str:
        return "".join(rng.choice(letters, 6))

    links = [name() + f"_l{k}" for k in range(n_links + 1)]  # links[0] is the root
    parent = [-1] + [int(rng.integers(0, k)) if rng.random() < branching else k - 1 for k in range(1, n_links + 1)]
    has_child = {p for p in parent if p >= 0}

    def floats(x: np.ndarray) -> str:
        return " ".join(repr(float(v)) for v in x)

    elements = []
    for k, lk in enumerate(links):
        if k in has_child and rng.random() < no_inertial:
            elements.append(f'<link name="{lk}"/>')
            continue
        m = float(np.exp(rng.uniform(np.log(0.1), np.log(5))))
        I = random_inertia(rng, m)
        elements.append(
            f'<link name="{lk}"><inertial><origin xyz="{floats(0.1 * rng.standard_normal(3))}" '
            f'rpy="{floats(rng.uniform(-3, 3, 3))}"/><mass value="{m!r}"/>'
            f'<inertia ixx="{float(I[0, 0])!r}" ixy="{float(I[0, 1])!r}" ixz="{float(I[0, 2])!r}" '
            f'iyy="{float(I[1, 1])!r}" iyz="{float(I[1, 2])!r}" izz="{float(I[2, 2])!r}"/></inertial></link>'
        )
    for k in range(1, n_links + 1):
        jtype = "fixed" if rng.random() < fixed else str(rng.choice(["revolute", "continuous", "prismatic"]))
        axis = rng.standard_normal(3) * rng.uniform(0.5, 3.0)
        limit = '<limit lower="-1" upper="1" effort="1" velocity="1"/>' if jtype in ("revolute", "prismatic") else ""
        elements.append(
            f'<joint name="{name()}_j{k}" type="{jtype}"><parent link="{links[parent[k]]}"/>'
            f'<child link="{links[k]}"/><origin xyz="{floats(0.3 * rng.standard_normal(3))}" '
            f'rpy="{floats(rng.uniform(-3, 3, 3))}"/><axis xyz="{floats(axis)}"/>{limit}</joint>'
        )
    order = rng.permutation(len(elements))
    body = "\n  ".join(elements[i] for i in order)
    return f'<?xml version="1.0"?>\n<robot name="random_{seed}">\n  {body}\n</robot>\n'
