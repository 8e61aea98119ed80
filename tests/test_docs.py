"""The documentation: every Python block of the README and of the site's pages runs as a user pastes
it (and gives the numbers it states, where a check below says which); the site builds strictly with
``denoc-bridge docs``, loads nothing from another host, and a page opened in headless Chromium shows
what it should.

A block runs in a fresh namespace, in a temporary folder (blocks write files), with
``__name__ == "__main__"``.  An HTML comment on the lines just above a block changes that:

* ``<!-- test: continue -->``: the block continues the previous block of the page (its namespace);
* ``<!-- test: script -->``: the block runs as a script of its own, in a new process (Dask starts
  worker processes that import the script again);
* ``<!-- test: slow -->``: the block's test is marked slow (``pytest -m "not slow"`` leaves it out).
"""

from __future__ import annotations

import os
import re
import socketserver
import subprocess
import sys
import textwrap
import threading
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from browser import screenshot

import denoc_bridge as db
from denoc_bridge.cli import docs as docs_cli
from denoc_bridge.cli.main import main

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
PAGES = sorted(p for p in (ROOT / "docs").rglob("*.md") if "_ext" not in p.parts)
BLOCK = re.compile(r"((?:<!--[^\n]*-->[^\n]*\n)*)```python\n(.*?)```", re.S)
MARKER = re.compile(r"<!--\s*test:\s*([^>]*?)\s*-->")
EXPECTED_MARKERS = {"continue", "script", "slow"}


@dataclass
class Snippet:
    """One runnable unit: a block, or a block and the blocks that continue it."""

    path: Path
    numbers: list[int]
    codes: list[str]
    marks: set[str] = field(default_factory=set)

    @property
    def id(self) -> str:
        return f"{self.path.relative_to(ROOT)}:{'+'.join(map(str, self.numbers))}"


def snippets(path: Path) -> list[Snippet]:
    out: list[Snippet] = []
    for n, match in enumerate(BLOCK.finditer(path.read_text(encoding="utf-8")), start=1):
        marks = {m.strip() for found in MARKER.findall(match.group(1)) for m in found.split()}
        assert marks <= EXPECTED_MARKERS, f"{path.name}, block {n}: unknown test markers {marks - EXPECTED_MARKERS}"
        if "continue" in marks:
            assert out, f"{path.name}: block {n} continues nothing"
            out[-1].numbers.append(n)
            out[-1].codes.append(match.group(2))
            out[-1].marks |= marks - {"continue"}
        else:
            out.append(Snippet(path, [n], [match.group(2)], marks))
    return out


ALL = [s for path in [README, *PAGES] for s in snippets(path)]


def _params():
    for s in ALL:
        marks = [pytest.mark.slow] if "slow" in s.marks else []
        yield pytest.param(s, id=s.id, marks=marks)


def _python(script: Path, cwd: Path) -> subprocess.CompletedProcess:
    path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    env = {**os.environ, "PYTHONPATH": path}
    return subprocess.run([sys.executable, str(script)], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


# ------------------------------------------------------------------ what some blocks must give
def check_readme_example(ns, out, tmp_path):
    assert out.count(" ok") == 6 and "MISMATCH" not in out, out
    assert float(out.split("\n")[-2]) < 1e-12  # forward dynamics undoes inverse dynamics
    assert out.split("\n")[-1].startswith("completed 2000 steps in ")
    traj = ns["traj"]
    assert traj.status == "completed" and traj.n_steps == 2000 and len(traj.t) == 2001
    assert (tmp_path / "panda.html").stat().st_size > 500_000


def check_getting_started(ns, out, tmp_path):
    assert out.count(" ok") == 6 and "MISMATCH" not in out, out
    assert np.abs(ns["traj"].q - ns["q"]).max() < 1e-12, "gravity compensation holds the arm still"
    assert ns["fall"].status == "completed" and np.ptp(ns["fall"].q[:, 1]) > 0.1, "the arm falls"
    assert (tmp_path / "panda.html").is_file() and (tmp_path / "panda.png").is_file()


def check_talos(ns, out, tmp_path):
    q, v, a, tau = ns["q"], ns["v"], ns["a"], ns["tau"]
    ref = pin.rnea(ns["pin_model"], ns["pin_data"], q, v, a)
    assert np.abs(tau - ref).max() <= 1e-12 * np.abs(ref).max(), "inverse_dynamics vs pin.rnea"
    assert "M1 (parent 0): ('root_joint',)" in out
    assert out.count(" ok") == 6 and "MISMATCH" not in out, out


def check_pin_convention(ns, out, tmp_path):
    model, data, q, v, tau, fext = (ns[k] for k in ("model", "data", "q", "v", "tau", "fext"))
    ref = pin.aba(model, model.createData(), q, v, tau, fext)
    assert np.abs(ns["a"] - ref).max() <= 1e-12 * np.abs(ref).max() and np.array_equal(data.ddq, ns["a"])
    assert np.array_equal(data.M, ns["M"]) and np.array_equal(ns["M"], ns["M"].T)
    assert float(out) < 1e-11


def check_rope(ns, out, tmp_path):
    traj = ns["traj"]
    assert traj.t[-1] == pytest.approx(1.75, rel=1e-12) and len(traj.t) == 1751
    drift = np.abs(traj.energy_drift(relative=True)).max()
    np.testing.assert_allclose(drift, 1.5417732e-5, rtol=1e-6, err_msg="the rope's energy error: 1.5417732e-5")
    assert (tmp_path / "rope.npz").is_file()
    assert len(ns["frames"].t) == round(1.75 * 30) + 1


def check_limits(ns, out, tmp_path):
    assert np.ptp(ns["free"].q[:, 7]) > 1.0, "without limits the finger leaves"
    assert ns["held"].q[:, 7].min() >= 0.0 and ns["held"].q[:, 7].max() <= 0.04 + 1e-12


def check_feedforward(ns, out, tmp_path):
    assert ns["tau"].shape == (201, 6)
    assert float(out) < 1e-9, "the forced PUMA reaches its target"


def check_loops(ns, out, tmp_path):
    model, q, v, a, tau = ns["model"], ns["q"], ns["v"], ns["a"], ns["tau"]
    assert tau.shape == (4,), "inverse_dynamics(actuated=...) returns every joint's torque"
    err, _, _ = db.loops.loop_kinematics(model, q, v)
    assert np.abs(err).max() < 1e-12, "project_configuration closes the loop"
    np.testing.assert_allclose(db.forward_dynamics(model, q, v, tau), a, rtol=0, atol=1e-10 * np.abs(a).max())
    np.testing.assert_allclose(tau[2:], 0.0, atol=1e-12, err_msg="R3, R4 are passive")
    traj = ns["traj"]
    assert traj.t[-1] == pytest.approx(10.0) and traj.constraint_error.max() < 1e-10


def check_mimic(ns, out, tmp_path):
    lines = out.split("\n")
    assert lines[0] == "26 36" and float(lines[1]) < 1e-13 and lines[2] == "completed (501, 31)", out


def check_dynamics(ns, out, tmp_path):
    first, second = out.split("\n")[:2]
    udut, inverse = map(float, first.split())
    assert udut < 1e-15 and inverse < 1e-12
    assert second.startswith("(1000, 4)") and float(second.split()[-1]) < 1e-12


def check_derivatives(ns, out, tmp_path):
    pinocchio, differences = map(float, out.split())
    assert pinocchio < 1e-11 and differences < 1e-8


def check_autodiff(ns, out, tmp_path):
    shapes, agreement, batch, wrenches = out.split("\n")[:4]
    assert shapes == "(19,) (18,)" and float(agreement) < 1e-12 and batch == "(16, 18)", out
    assert float(wrenches) < 1e-12, out  # the wrench cotangent: the twists at mu


def check_lqr(ns, out, tmp_path):
    held, fell = map(float, out.split())
    assert held < 1e-4 and fell > 1.0, out  # 5e-6 rad after 5 s; the open loop falls past 1 rad


def check_loop_derivatives(ns, out, tmp_path):
    keeps_closed, symmetric = map(float, out.split())
    assert keeps_closed < 1e-13 and symmetric < 1e-13, out


def check_matrix_free(ns, out, tmp_path):
    against_differences, adjoint = map(float, out.split())
    assert against_differences < 1e-6 and adjoint < 1e-6, out  # 4e-8 and 2e-8 at 10,000 DOF


def check_implicit(ns, out, tmp_path):
    status, speed, jacobian = out.split()
    assert status == "completed" and float(speed) < 1e-6 and jacobian == "dense", out


def check_validation(ns, out, tmp_path):
    assert ns["report"].passed and out.count(" ok") == 6


def check_gripper(ns, out, tmp_path):
    for number in ("113.3333", "33.3333", "3.5714", "-3.4286", "24.0476"):
        assert number in out, number


def check_inline_sweep(ns, out, tmp_path):
    assert out.startswith("4 cases: 4 completed"), out
    assert len(list((tmp_path / "sweep_chain" / "cases").glob("case*.npz"))) == 4


def check_coupling(ns, out, tmp_path):
    assert abs(ns["q"][1:].sum() - 0.2) < 1e-12 and abs(ns["a"][1:].sum()) < 1e-12
    assert np.abs(ns["a"]).max() > 1.0  # it moves


def check_bad_input(ns, out, tmp_path):
    lines = out.split("\n")
    assert [line.split(":")[0] for line in lines] == ["InputError", "InputError", "URDFError", "RobotNotFoundError"]
    assert "joint 'panda_joint4'" in lines[0] and "did you mean panda?" in lines[3]


def check_visualisation(ns, out, tmp_path):
    for name in ("fourbar.html", "fourbar.png", "fourbar_energy.png"):
        assert (tmp_path / name).stat().st_size > 10_000, name


def check_sweep_script(run, tmp_path):
    assert run.returncode == 0, run.stderr[-3000:]
    assert run.stdout.startswith("9 cases: 9 completed (9 run now"), run.stdout
    assert len(list((tmp_path / "sweep_rope" / "cases").glob("case*.npz"))) == 9


#: a fragment of the first block of a snippet -> its check (each fragment names exactly one snippet)
CHECKS = {
    "traj = db.simulate(model, q0, np.zeros(model.nv), t_final=2.0": check_readme_example,
    "print(model.nq, model.nv, [m.joint_names": check_getting_started,
    'resolve_robot("talos")': check_talos,
    "import denoc_bridge.pin as dbp": check_pin_convention,
    "from denoc_bridge.generators import rope": check_rope,
    "free = db.simulate(model, q0, np.zeros(model.nv), 2.0, 1e-3, limits=False)": check_limits,
    "db.feedforward(model, motion)": check_feedforward,
    "from denoc_bridge.generators import fourbar": check_loops,
    'add_joint_coupling("sum"': check_coupling,
    'load_robot("pr2", mimic=True)': check_mimic,
    "Q = np.stack": check_dynamics,
    "forward_dynamics_derivatives(model": check_derivatives,
    "cartpole_urdf(1)": check_lqr,
    "serial_chain(10_000)": check_matrix_free,
    "from denoc_bridge.autodiff.jax import": check_autodiff,
    'method="sdirk2", limits=False': check_implicit,
    "closed = generators.fourbar()": check_loop_derivatives,
    "random_model(seed=3": check_validation,
    "print(np.round(U, 4))": check_gripper,
    'scheduler="inline"': check_inline_sweep,
    "for call in (": check_bad_input,
    'viz.export_html(model, traj, "fourbar.html")': check_visualisation,
    'if __name__ == "__main__":      # in a script': check_sweep_script,
}


def check_of(snippet: Snippet):
    found = [fn for fragment, fn in CHECKS.items() if fragment in snippet.codes[0]]
    assert len(found) <= 1, f"{snippet.id}: several checks match"
    return found[0] if found else None


def test_every_check_names_one_snippet():
    for fragment in CHECKS:
        hits = [s.id for s in ALL if fragment in s.codes[0]]
        assert len(hits) == 1, f"check fragment {fragment!r} matches {hits}"


def test_the_readme_is_a_front_door():
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= 200
    quickstart = text.split("## Quickstart", 1)[1]
    first = re.search(r"```(\w*)\n(.*?)```", quickstart, re.S)
    assert first.group(2).splitlines() == [
        'pip install ".[robots]" && denoc-bridge simulate panda --duration 2',
        'pip install -e ".[test]" && python -m pytest -n auto',
    ], "the Quickstart's two commands (.ci/run runs the second)"
    assert [s for s in ALL if s.path == README], "the README's Python example"


@pytest.mark.parametrize("snippet", list(_params()))
def test_block_runs(snippet: Snippet, tmp_path, monkeypatch, capsys):
    check = check_of(snippet)
    if "script" in snippet.marks:
        script = tmp_path / "block.py"
        script.write_text("\n".join(snippet.codes), encoding="utf-8")
        run = _python(script, tmp_path)
        if check is not None:
            check(run, tmp_path)
        else:
            assert run.returncode == 0, run.stderr[-3000:]
        return
    monkeypatch.chdir(tmp_path)
    namespace = {"__name__": "__main__"}
    for number, code in zip(snippet.numbers, snippet.codes):
        exec(compile(code, f"{snippet.path}, python block {number}", "exec"), namespace)
    out = capsys.readouterr().out.strip()
    if check is not None:
        check(namespace, out, tmp_path)


@pytest.mark.slow
def test_a_sweep_script_without_the_guard_gets_one_clear_error(tmp_path):
    (snippet,) = [s for s in ALL if 'if __name__ == "__main__":      # in a script' in s.codes[0]]
    head, _, body = snippet.codes[0].partition('if __name__ == "__main__":')
    script = tmp_path / "unguarded.py"
    script.write_text(head + textwrap.dedent(body.split("\n", 1)[1]), encoding="utf-8")
    run = _python(script, tmp_path)
    assert run.returncode == 1
    last = run.stderr.strip().splitlines()[-1]
    assert last.startswith("denoc_bridge.sweeps.ClusterStartError: the LocalCluster's worker processes did not start")
    assert 'if __name__ == "__main__":' in last and 'scheduler="inline"' in last
    assert not (tmp_path / "sweep_rope" / "cases").exists() or not any((tmp_path / "sweep_rope" / "cases").iterdir())


# ------------------------------------------------------------------ the command and the site
def test_docs_command_is_in_the_help(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    assert "docs" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["docs", "--help"])
    out = capsys.readouterr().out
    assert "--serve" in out and "--open" in out and "--output" in out


def test_docs_command_without_mkdocs_says_what_to_install(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(docs_cli, "missing_packages", lambda: ["mkdocs-material"])
    assert main(["docs", "--output", str(tmp_path / "site")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and 'pip install ".[docs]"' in err and "mkdocs-material" in err


def test_docs_command_outside_a_clone_says_so(monkeypatch, capsys, tmp_path):
    monkeypatch.setattr(docs_cli, "__file__", str(tmp_path / "site-packages" / "denoc_bridge" / "cli" / "docs.py"))
    monkeypatch.chdir(tmp_path)
    assert main(["docs"]) == 2
    err = capsys.readouterr().err
    assert "from a clone of the repository" in err and "pip install -e ." in err


def test_docs_command_refuses_an_output_that_holds_other_files(tmp_path, capsys):
    (tmp_path / "notes.txt").write_text("mine")
    assert main(["docs", "--output", str(tmp_path)]) == 2
    assert "holds other files" in capsys.readouterr().err and (tmp_path / "notes.txt").is_file()


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site as ``denoc-bridge docs --output DIR`` builds it (mkdocs build --strict)."""
    out = tmp_path_factory.mktemp("docs") / "site"
    assert main(["docs", "--output", str(out)]) == 0
    return out


EXTERNAL = re.compile(
    r"""<(?:script|link|img|iframe|source|video|audio)\b[^>]*\b(?:src|href)\s*=\s*["']?(?:https?:)?//""", re.I
)


@pytest.mark.slow
def test_site_builds_strictly_and_loads_nothing_from_another_host(site):
    pages = sorted(site.rglob("*.html"))
    names = {p.relative_to(site).as_posix() for p in pages}
    for page in ("index.html", "getting-started.html", "guide/derivatives.html", "reproductions/rope.html"):
        assert page in names, page
    assert (
        "api/dynamics.html" in names
        and 'id="denoc_bridge.forward_dynamics"' in (site / "api/dynamics.html").read_text()
    )
    for page in pages:  # the theme's scripts, styles and pictures are all local
        text = page.read_text(encoding="utf-8")
        assert not EXTERNAL.search(text), f"{page.name} loads {EXTERNAL.search(text).group(0)}"
    for css in site.rglob("*.css"):  # no web fonts or pictures from elsewhere
        assert not re.search(r"url\(\s*[\"']?(?:https?:)?//", css.read_text(encoding="utf-8")), css.name
    # the figures the pages show, the benchmark's included, are in the site
    for figure in ("figures/gallery_panda_modules.png", "figures/rope.png", "figures/scaling.png"):
        assert (site / figure).is_file(), figure


#: Chromium's own background services (its clock, sign-in, search suggestions, autofill, its
#: component updater: Debian's chromium 156 asks update.googleapis.com despite
#: --disable-component-update), asked whatever the page: not the page's requests
BROWSER_SERVICES = {
    "clients2.google.com",
    "accounts.google.com",
    "www.google.com",
    "content-autofill.googleapis.com",
    "update.googleapis.com",
}


def _host(request_line: str) -> str:
    """The host of a proxy request line: ``CONNECT host:443 HTTP/1.1`` or ``GET http://host/... HTTP/1.1``."""
    target = request_line.split()[1]
    return target.split("://", 1)[-1].split("/", 1)[0].rsplit(":", 1)[0]


class _RecordingProxy(socketserver.ThreadingTCPServer):
    """A proxy that forwards nothing: it records what the browser asks for and answers 502."""

    daemon_threads = True

    def __init__(self):
        self.requests: list[str] = []

        class Handler(socketserver.StreamRequestHandler):
            def handle(handler):
                line = handler.rfile.readline().decode("latin-1").strip()
                if line:
                    self.requests.append(line)
                handler.wfile.write(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\n\r\n")

        super().__init__(("127.0.0.1", 0), Handler)


@pytest.mark.slow
def test_pages_in_a_browser_ask_no_other_host(site, chromium, tmp_path):
    """The landing page and a reproduction page, served on 127.0.0.1 as ``denoc-bridge docs --serve``
    serves them, in headless Chromium: drawn (text, the gallery), and not one request to another
    host (they would go through the recording proxy)."""
    # a probe page that does load from another host: the proxy must see it (else it sees nothing)
    (site / "probe.html").write_text('<html><body><img src="http://example.org/x.png"></body></html>')
    server, url = docs_cli.start_server(site, 0)
    proxy = _RecordingProxy()
    threading.Thread(target=proxy.serve_forever, daemon=True).start()
    try:
        shots = {}
        for page in ("index.html", "reproductions/rope.html"):
            png = tmp_path / page.replace("/", "_").replace(".html", ".png")
            shots[page] = screenshot(
                chromium, url + page, png, 3000, size=(1280, 900), proxy=f"127.0.0.1:{proxy.server_address[1]}"
            )
        asked = [r for r in proxy.requests if _host(r) not in BROWSER_SERVICES]
        assert asked == [], f"the pages asked other hosts: {asked}"
        screenshot(
            chromium, url + "probe.html", tmp_path / "probe.png", 500, proxy=f"127.0.0.1:{proxy.server_address[1]}"
        )
    finally:
        server.shutdown()
        proxy.shutdown()
    assert any(_host(r) == "example.org" for r in proxy.requests), "the probe's request did not reach the proxy"
    for page, img in shots.items():
        dark = (img.max(axis=-1) < 0.4).mean()
        assert 0.01 < dark < 0.5, f"{page}: no text drawn ({dark:.1%} dark pixels)"
        assert (img[:60].mean(axis=(0, 1)) < 0.6).all(), f"{page}: no header bar"
    # the gallery on the landing page: the robots' blue, below the introduction
    img = shots["index.html"]
    r, g, b = img[..., 0], img[..., 1], img[..., 2]
    blue = (b > 0.45) & (b > r + 0.2) & (b > g + 0.05)
    assert blue[300:].mean() > 0.002, "the landing page shows no gallery"
