"""The cost of the JAX bridge: jax.grad through denoc_bridge.autodiff.jax against the package's calls.

    python benchmarks/autodiff_jax.py [--chain 1000] [--batch 64] [--repeats 9] [--min-time 0.05]
                                      [--out DIR] [--quick]

On panda and a serial chain of ``--chain`` revolute joints (``denoc_bridge.io.robots.serial_chain``),
timed side by side in one process (medians of interleaved rounds,
:func:`denoc_bridge.benchmarking.interleaved`):

* ``fd``: one :func:`denoc_bridge.forward_dynamics` call;
* ``vjp``: one :func:`denoc_bridge.forward_dynamics_vjp` call (the adjoint, which also runs
  a factorised forward dynamics);
* ``jax fd``: ``jax.jit(f)`` of the bridge (one ``pure_callback``);
* ``jax grad``: ``jax.jit(jax.grad(loss, argnums=(0, 1, 2)))`` of ``loss = w . f(q, v, tau)``
  (one callback: the adjoint; XLA drops the primal callback, whose value the gradient does not
  need: a ``pure_callback`` is pure);
* ``jax value_and_grad``: the same with the loss (two callbacks).

The overhead of a ``pure_callback`` is ``jax fd - fd``, ``jax grad - vjp`` and
``(jax value_and_grad - fd - vjp) / 2``.  Then
a batch of ``--batch`` panda states under ``jax.vmap`` with each ``vmap_method``, against the
package's batch entry (on all its threads and on one, ``db.set_num_threads(1)``: on a loaded machine the thread pool's
start dominates small batches) and a Python loop of adjoints.  Prints a markdown table; ``--out`` also
writes ``autodiff_jax.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp  # noqa: E402

import denoc_bridge as db  # noqa: E402
from denoc_bridge.autodiff.jax import forward_dynamics  # noqa: E402
from denoc_bridge.benchmarking import interleaved, machine  # noqa: E402
from denoc_bridge.io.robots import serial_chain  # noqa: E402


def _state(model, rng):
    q = db.random_configuration(model, rng)
    return q, 0.1 * rng.standard_normal(model.nv), 0.01 * rng.standard_normal(model.nv), rng.standard_normal(model.nv)


def single(model, repeats: int, min_time: float) -> dict:
    rng = np.random.default_rng(0)
    q, v, tau, w = _state(model, rng)
    f = forward_dynamics(model)
    jq, jv, jtau, jw = (jnp.asarray(x) for x in (q, v, tau, w))
    jf = jax.jit(f)

    def loss(q, v, tau):
        return jnp.dot(jw, f(q, v, tau))

    jgrad = jax.jit(jax.grad(loss, argnums=(0, 1, 2)))
    jvgrad = jax.jit(jax.value_and_grad(loss, argnums=(0, 1, 2)))
    g = jgrad(jq, jv, jtau)  # compiled; and checked against the package's adjoint
    ref = db.forward_dynamics_vjp(model, q, v, tau, w)
    err = max(float(np.abs(np.asarray(a) - b).max() / np.abs(b).max()) for a, b in zip(g, ref))
    fns = {
        "fd": lambda: db.forward_dynamics(model, q, v, tau),
        "vjp": lambda: db.forward_dynamics_vjp(model, q, v, tau, w),
        "jax fd": lambda: jf(jq, jv, jtau).block_until_ready(),
        "jax grad": lambda: jax.block_until_ready(jgrad(jq, jv, jtau)),
        "jax value_and_grad": lambda: jax.block_until_ready(jvgrad(jq, jv, jtau)),
    }
    t = interleaved(fns, repeats, min_time)
    return dict(
        model=model.name,
        nv=model.nv,
        us={k: x * 1e6 for k, x in t.items()},
        grad_over_fd=t["jax grad"] / t["fd"],
        grad_over_vjp=t["jax grad"] / t["vjp"],
        jax_fd_over_fd=t["jax fd"] / t["fd"],
        callback_us=(t["jax fd"] - t["fd"]) * 1e6,
        callback_us_in_grad=(t["jax grad"] - t["vjp"]) * 1e6,
        callback_us_in_value_and_grad=(t["jax value_and_grad"] - t["fd"] - t["vjp"]) / 2 * 1e6,
        grad_rel_diff=err,
    )


def batch(model, B: int, repeats: int, min_time: float) -> dict:
    rng = np.random.default_rng(1)
    Q = np.stack([db.random_configuration(model, rng) for _ in range(B)])
    V, T, W = (
        0.1 * rng.standard_normal((B, model.nv)),
        0.01 * rng.standard_normal((B, model.nv)),
        rng.standard_normal((B, model.nv)),
    )
    jQ, jV, jT, jW = (jnp.asarray(x) for x in (Q, V, T, W))

    def one_thread():
        n = db.get_num_threads()
        db.set_num_threads(1)
        try:
            return db.forward_dynamics(model, Q, V, T)
        finally:
            db.set_num_threads(n)

    fns = {
        "package batch fd": lambda: db.forward_dynamics(model, Q, V, T),
        "package batch fd, 1 thread": one_thread,
        "package loop of vjp": lambda: [db.forward_dynamics_vjp(model, Q[b], V[b], T[b], W[b]) for b in range(B)],
    }
    for method in ("expand_dims", "sequential"):
        f = forward_dynamics(model, vmap_method=method)

        def loss(q, v, tau, w, f=f):
            return jnp.dot(w, f(q, v, tau))

        jf = jax.jit(jax.vmap(f))
        jg = jax.jit(jax.vmap(jax.grad(loss, argnums=(0, 1, 2))))
        fns[f"vmap fd, {method}"] = lambda jf=jf: jf(jQ, jV, jT).block_until_ready()
        fns[f"vmap grad, {method}"] = lambda jg=jg: jax.block_until_ready(jg(jQ, jV, jT, jW))
    t = interleaved(fns, repeats, min_time)
    return dict(model=model.name, batch=B, us={k: x * 1e6 for k, x in t.items()})


def run(chain: int, B: int, repeats: int, min_time: float) -> dict:
    rows = [single(db.load_robot("panda"), repeats, min_time), single(serial_chain(chain), repeats, min_time)]
    return dict(
        machine=machine(), jax=jax.__version__, rows=rows, batch=batch(db.load_robot("panda"), B, repeats, min_time)
    )


def markdown(result: dict) -> str:
    lines = [
        "| model | DOF | fd (us) | vjp (us) | jax fd (us) | jax grad (us) | jax value_and_grad (us) | grad / fd "
        "| grad / vjp | callback (us): in fd, grad, value_and_grad |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in result["rows"]:
        u = r["us"]
        lines.append(
            f"| {r['model']} | {r['nv']:,} | {u['fd']:.1f} | {u['vjp']:.1f} | {u['jax fd']:.1f} | {u['jax grad']:.1f} "
            f"| {u['jax value_and_grad']:.1f} | {r['grad_over_fd']:.1f}x | {r['grad_over_vjp']:.2f}x "
            f"| {r['callback_us']:.0f}, {r['callback_us_in_grad']:.0f}, {r['callback_us_in_value_and_grad']:.0f} |"
        )
    b = result["batch"]
    lines += ["", f"A batch of {b['batch']} states of {b['model']} (us per batch):", "", "| call | us |", "|---|---:|"]
    lines += [f"| {k} | {x:.0f} |" for k, x in b["us"].items()]
    lines += ["", f"jax {result['jax']}; machine: {result['machine']}"]
    return "\n".join(lines)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--chain", type=int, default=1000)
    p.add_argument("--batch", type=int, default=64)
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--min-time", type=float, default=0.05)
    p.add_argument("--out", default=None)
    p.add_argument("--quick", action="store_true", help="a 50-DOF chain, a batch of 8, 3 short rounds")
    a = p.parse_args(argv)
    if a.quick:
        a.chain, a.batch, a.repeats, a.min_time = 50, 8, 3, 0.005
    result = run(a.chain, a.batch, a.repeats, a.min_time)
    text = markdown(result)
    print(text)
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        with open(os.path.join(a.out, "autodiff_jax.json"), "w") as f:
            json.dump(result, f, indent=1, default=str)
        with open(os.path.join(a.out, "autodiff_jax.md"), "w") as f:
            f.write(text + "\n")
    return result


if __name__ == "__main__":
    main()
