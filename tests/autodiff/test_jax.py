"""The JAX bridge (denoc_bridge.autodiff.jax): values, gradients against central differences,
jit / vmap / jacrev against the plain calls and the dense derivatives, refused inputs."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import denoc_bridge as db  # noqa: E402
from denoc_bridge.autodiff.jax import forward_dynamics, to_tangent  # noqa: E402
from denoc_bridge.multibody.joints import JointType  # noqa: E402
from denoc_bridge.testing import random_model  # noqa: E402

MODELS = ("panda", "solo12", "tree", "panda_mimic", "fourbar", "geared_fivebar")


def _is_tree(model) -> bool:
    return type(model) is db.Model and not model.loops


def _model(name: str) -> db.Model | db.MimicModel:
    if name == "tree":  # a free-flyer and every joint type (spherical, planar, continuous, ...)
        return random_model(seed=9, n_links=10, branching=0.4, floating_base=True)
    if name == "panda_mimic":  # the fingers coupled: reduced coordinates, nv = 8
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", db.PhysicsWarning)
            return db.load_robot("panda", mimic=True)
    if name == "fourbar":  # one loop closure: the constrained accelerations
        return db.generators.fourbar()
    if name == "geared_fivebar":  # a mimic gear and gripper on a closed five-bar
        return db.generators.geared_fivebar()
    return db.load_robot(name)


@pytest.fixture(scope="module", params=MODELS)
def case(request):
    model = _model(request.param)
    rng = np.random.default_rng(3)
    q = db.random_configuration(model, rng)
    v = 0.3 * rng.standard_normal(model.nv)
    if request.param in ("fourbar", "geared_fivebar"):  # a state on the constraint manifold
        q0 = db.generators.GEARED_FIVEBAR_Q if request.param == "geared_fivebar" else db.neutral_configuration(model)
        q = db.loops.project_configuration(model, q0)
        v = db.loops.project_velocity(model, q, v)
    tau = 0.1 * rng.standard_normal(model.nv)
    w = rng.standard_normal(model.nv)
    return model, forward_dynamics(model), q, v, tau, w


def test_the_tree_has_every_curved_joint():
    types = set(_model("tree").joint_type.tolist())
    assert {JointType.FREEFLYER, JointType.SPHERICAL, JointType.PLANAR, JointType.CONTINUOUS} <= types


def test_values_are_the_package_forward_dynamics(case):
    model, f, q, v, tau, _ = case
    a = f(q, v, tau)
    assert a.dtype == jnp.float64 and a.shape == (model.nv,)
    np.testing.assert_array_equal(np.asarray(a), db.forward_dynamics(model, q, v, tau))


def _loss(f, w, nv):
    return lambda q, v, tau: jnp.dot(w, f(q, v, tau)) + 0.5 * jnp.dot(f(q, v, tau), f(q, v, tau)) / nv


def test_gradients_match_central_differences(case):
    """jax.grad of a scalar loss, every entry of q (all nq coordinates, quaternions and (cos,
    sin) pairs included: the forward dynamics normalise them), v and tau, against central
    differences of the loss computed by the package alone."""
    model, f, q, v, tau, w = case
    grads = jax.grad(_loss(f, w, model.nv), argnums=(0, 1, 2))(q, v, tau)

    def loss_np(x):
        a = db.forward_dynamics(model, *x)
        return w @ a + 0.5 * a @ a / model.nv

    def shifted(k, i, t):
        x = [q.copy(), v.copy(), tau.copy()]
        x[k][i] += t
        return loss_np(x)

    h = 1e-4  # the five-point central stencil: O(h^4) truncation, O(eps / h) rounding
    for k, g in enumerate(grads):
        num = np.empty(g.shape)
        for i in range(g.size):
            num[i] = (8 * (shifted(k, i, h) - shifted(k, i, -h)) - shifted(k, i, 2 * h) + shifted(k, i, -2 * h)) / (
                12 * h
            )
        err = np.abs(np.asarray(g) - num).max() / np.abs(num).max()
        assert err < 1e-7, (model.name, "q v tau".split()[k], err)


def test_vjp_is_the_package_adjoint_and_to_tangent_recovers_it(case):
    """The cotangent of q is the tangent one pushed to R^nq: orthogonal to every quaternion and
    (cos, sin) pair, and to_tangent maps it back to forward_dynamics_vjp's exactly."""
    model, f, q, v, tau, w = case
    qdd, pullback = jax.vjp(f, q, v, tau)
    Gq, gv, gtau = pullback(jnp.asarray(w))
    if _is_tree(model):
        ref = db.forward_dynamics_vjp(model, q, v, tau, w)
    else:  # mimic models and loops: the products with the dense derivatives
        ref = tuple(w @ d for d in db.forward_dynamics_derivatives(model, q, v, tau))
    np.testing.assert_allclose(np.asarray(gv), ref[1], rtol=0, atol=1e-12 * np.abs(ref[1]).max())
    np.testing.assert_allclose(np.asarray(gtau), ref[2], rtol=0, atol=1e-12 * np.abs(ref[2]).max())
    gq = np.asarray(to_tangent(model)(q, Gq))
    np.testing.assert_allclose(gq, ref[0], rtol=0, atol=1e-12 * np.abs(ref[0]).max())
    Gq = np.asarray(Gq)
    for k, t in enumerate(model.joint_type):
        i = model.idx_q[k]
        pair = {JointType.SPHERICAL: (i, 4), JointType.FREEFLYER: (i + 3, 4), JointType.CONTINUOUS: (i, 2)}
        pair[JointType.PLANAR] = (i + 2, 2)
        if t in pair:
            a, m = pair[t]
            assert abs(Gq[a : a + m] @ q[a : a + m]) < 1e-12 * np.abs(Gq).max()
    if model.nq == model.nv and all(t in (JointType.REVOLUTE, JointType.PRISMATIC) for t in model.joint_type):
        np.testing.assert_array_equal(gq, Gq)  # a vector space: one convention


def test_external_wrenches_values_and_gradients(case):
    """``f(q, v, tau, f_ext)``: the value is the package's, and the gradients of q, v, tau and
    every wrench entry match central differences of the package's forward dynamics (the wrench
    cotangent: the links' twists at ``(dqdd/dtau)^T lam``)."""
    model, f, q, v, tau, w = case
    rng = np.random.default_rng(11)
    F = 0.2 * rng.standard_normal((model.n_links, 6))
    a = f(q, v, tau, F)
    np.testing.assert_array_equal(np.asarray(a), db.forward_dynamics(model, q, v, tau, F))

    def loss(q, v, tau, F):
        a = f(q, v, tau, F)
        return jnp.dot(w, a) + 0.5 * jnp.dot(a, a) / model.nv

    grads = jax.jit(jax.grad(loss, argnums=(0, 1, 2, 3)))(q, v, tau, F)

    def loss_np(x):
        a = db.forward_dynamics(model, *x)
        return w @ a + 0.5 * a @ a / model.nv

    h = 1e-4
    for k, g in enumerate(grads):
        g = np.asarray(g).ravel()
        num = np.empty(g.size)
        for i in range(g.size):
            vals = []
            for t in (h, -h, 2 * h, -2 * h):
                x = [q.copy(), v.copy(), tau.copy(), F.copy()]
                x[k].reshape(-1)[i] += t
                vals.append(loss_np(x))
            num[i] = (8 * (vals[0] - vals[1]) - vals[2] + vals[3]) / (12 * h)
        err = np.abs(g - num).max() / np.abs(num).max()
        assert err < 1e-7, (model.name, "q v tau f_ext".split()[k], err)


def test_wrench_cotangent_is_the_jacobian_product():
    """On a tree the f_ext cotangent is ``J_k Minv lam`` with Pinocchio's LOCAL joint Jacobians."""
    import pinocchio as pin

    model = db.load_robot("solo12")
    rng = np.random.default_rng(5)
    q, v, tau = db.random_configuration(model, rng), rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    F, lam = rng.standard_normal((model.n_links, 6)), rng.standard_normal(model.nv)
    _, pullback = jax.vjp(forward_dynamics(model), q, v, tau, F)
    gF = np.asarray(pullback(jnp.asarray(lam))[3])
    pm = db.to_pinocchio(model)
    pd = pm.createData()
    pin.computeJointJacobians(pm, pd, q)
    mu = db.inverse_mass_matrix(model, q) @ lam
    for k in range(model.n_links):
        J = pin.getJointJacobian(pm, pd, k + 1, pin.ReferenceFrame.LOCAL)
        np.testing.assert_allclose(gF[k], J @ mu, rtol=0, atol=1e-12 * np.abs(J @ mu).max())
    with pytest.raises(db.InputError, match=r"f_ext must have shape \(13, 6\) \(model 'solo' has n_links=13\)"):
        forward_dynamics(model)(q, v, tau, F[:3])


def test_jacrev_is_the_dense_derivatives(case):
    model, f, q, v, tau, _ = case
    Jq, Jv, Jtau = jax.jacrev(f, argnums=(0, 1, 2))(q, v, tau)
    assert Jq.shape == (model.nv, model.nq)
    dq, dv, Minv = db.forward_dynamics_derivatives(model, q, v, tau)
    Jq_tangent = np.asarray(jax.vmap(lambda G: to_tangent(model)(q, G))(Jq))
    # two routes through M^-1 (the dense derivatives may invert the GIM by its LTDL and solve for
    # qdd with that inverse, the matrix-free products run the O(n) forward dynamics): they agree
    # within first-order perturbation theory, 10 sqrt(n) kappa(M) eps (the tree: kappa 2.5e4,
    # 1.8e-11 measured), or 1e-11 where M is well conditioned
    kappa = np.linalg.cond(db.mass_matrix(model, q))
    tol = max(1e-11, 10 * np.sqrt(model.nv) * kappa * np.finfo(float).eps)
    for J, ref in ((Jq_tangent, dq), (Jv, dv), (Jtau, Minv)):
        np.testing.assert_allclose(np.asarray(J), ref, rtol=0, atol=tol * np.abs(ref).max())


@pytest.mark.parametrize("vmap_method", ["expand_dims", pytest.param("sequential", marks=pytest.mark.slow)])
def test_jit_and_vmap_equal_the_plain_calls(vmap_method):
    model = _model("tree")
    f = forward_dynamics(model, vmap_method=vmap_method)
    rng = np.random.default_rng(5)
    B = 4
    Q = np.stack([db.random_configuration(model, rng) for _ in range(B)])
    V, T, W = (0.3 * rng.standard_normal((B, model.nv)) for _ in range(3))
    loss = _loss(f, W[0], model.nv)
    grad = jax.grad(loss, argnums=(0, 1, 2))
    np.testing.assert_array_equal(np.asarray(jax.jit(f)(Q[0], V[0], T[0])), np.asarray(f(Q[0], V[0], T[0])))
    for a, b in zip(jax.jit(grad)(Q[0], V[0], T[0]), grad(Q[0], V[0], T[0])):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(Q, V, T)), db.forward_dynamics(model, Q, V, T))
    np.testing.assert_array_equal(np.asarray(jax.vmap(f, in_axes=(0, None, 0))(Q, V[0], T))[2], f(Q[2], V[0], T[2]))
    batched = jax.jit(jax.vmap(grad))(Q, V, T)
    for b in range(B):
        for a, c in zip(batched, grad(Q[b], V[b], T[b])):
            np.testing.assert_array_equal(np.asarray(a[b]), np.asarray(c))
    # nested batches: a jacobian per state (jacrev's vmap inside the outer one), a grid of states
    jac = jax.jacrev(f, argnums=0)
    J = jax.jit(jax.vmap(jac))(Q, V, T)
    np.testing.assert_array_equal(np.asarray(J[1]), np.asarray(jac(Q[1], V[1], T[1])))
    grid = jax.vmap(jax.vmap(f, in_axes=(None, 0, None)), in_axes=(0, None, 0))(Q, V, T)
    assert grid.shape == (B, B, model.nv)
    np.testing.assert_array_equal(np.asarray(grid[1, 2]), np.asarray(f(Q[1], V[2], T[1])))


def test_refused_inputs():
    model = _model("panda")
    f = forward_dynamics(model)
    q, z = db.neutral_configuration(model), np.zeros(model.nv)
    with pytest.raises(db.InputError, match=r"q must have shape \(9,\) \(model 'panda' has nq=9\), got shape \(8,\)"):
        f(q[:-1], z, z)
    with pytest.raises(
        db.InputError, match=r"tau must have shape \(9,\).*got shape \(2, 9\); map a batch with jax.vmap"
    ):
        f(q, z, np.zeros((2, model.nv)))
    with pytest.raises(db.InputTypeError, match=r"v has dtype float32.*jnp.asarray\(v, dtype=jnp.float64\)"):
        f(q, z.astype(np.float32), z)
    np.testing.assert_array_equal(np.asarray(f(q, np.zeros(model.nv, int), z)), np.asarray(f(q, z, z)))
    jax.config.update("jax_enable_x64", False)
    try:
        with pytest.raises(db.InputTypeError, match=r'jax.config.update\("jax_enable_x64", True\)'):
            f(q, z, z)
    finally:
        jax.config.update("jax_enable_x64", True)
    bad = z.copy()
    bad[3] = np.nan
    # the package's message (naming the joint), raised in the callback and re-raised by JAX
    with pytest.raises(Exception, match=r"v\[3\] = nan is not finite \(joint 'panda_joint4' \(revolute\)\)"):
        f(q, bad, z)
    with pytest.raises(db.InputError, match="vmap_method must be one of"):
        forward_dynamics(model, vmap_method="loop")
    with pytest.raises(db.InputTypeError):
        forward_dynamics("panda")  # type: ignore[arg-type]


@pytest.mark.parametrize("name", ["panda_mimic", "fourbar", "geared_fivebar"])
def test_mimic_and_loop_batches_equal_the_plain_calls(name):
    """vmap over states of the constrained models: the package's batch entry (bit for bit) and one
    dense adjoint per state (to round-off: the batch entry of a mimic model sums in another order,
    and the loss's cotangent contains qdd)."""
    model = _model("panda_mimic" if name == "panda_mimic" else name)
    f = forward_dynamics(model)
    rng = np.random.default_rng(6)
    B = 3
    if name == "panda_mimic":
        Q = np.stack([db.random_configuration(model, rng) for _ in range(B)])
        V = 0.3 * rng.standard_normal((B, model.nv))
    else:
        q0 = db.generators.GEARED_FIVEBAR_Q if name == "geared_fivebar" else db.neutral_configuration(model)
        Q = np.stack(
            [db.loops.project_configuration(model, q0 + 0.05 * rng.standard_normal(model.nq)) for _ in range(B)]
        )
        V = np.stack([db.loops.project_velocity(model, q, rng.standard_normal(model.nv)) for q in Q])
    T, W = (0.3 * rng.standard_normal((B, model.nv)) for _ in range(2))
    grad = jax.grad(_loss(f, W[0], model.nv), argnums=(0, 1, 2))
    np.testing.assert_array_equal(np.asarray(jax.vmap(f)(Q, V, T)), db.forward_dynamics(model, Q, V, T))
    batched = jax.jit(jax.vmap(grad))(Q, V, T)
    for b in range(B):
        for a, c in zip(batched, grad(Q[b], V[b], T[b])):
            np.testing.assert_allclose(np.asarray(a[b]), np.asarray(c), rtol=0, atol=1e-13 * np.abs(c).max())


def test_a_mimic_model_has_the_reduced_coordinates():
    model = _model("panda_mimic")
    f = forward_dynamics(model)
    assert model.nq == model.nv == 8  # the second finger follows the first
    with pytest.raises(db.InputError, match=r"q must have shape \(8,\) \(model 'panda' has nq=8\)"):
        f(np.zeros(9), np.zeros(8), np.zeros(8))


def test_optional_dependency():
    """denoc_bridge never imports JAX; without JAX the bridge's import names the extra."""
    code = (
        "import sys\n"
        "import denoc_bridge, denoc_bridge.autodiff\n"
        "print('jax' in sys.modules)\n"
        "sys.modules['jax'] = None\n"
        "try:\n"
        "    import denoc_bridge.autodiff.jax\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = {**os.environ, "PYTHONPATH": root + os.pathsep + os.environ.get("PYTHONPATH", "")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert out.stdout.splitlines() == [
        "False",
        "denoc_bridge.autodiff.jax needs JAX: pip install 'denoc-bridge[autodiff]' (or pip install jax)",
    ], out.stdout + out.stderr
