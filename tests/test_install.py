"""A real core install: build the wheel, install it into a fresh virtual environment with its core
dependencies only (numpy, scipy, scikit-learn, from the package registry), and use it there.

It takes a minute or two (most of it pip). Skipped, with the reason, when pip cannot reach the package index;
any other failure of pip fails the test.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import venv
from configparser import ConfigParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
EXTRAS_ONLY = ("dask", "distributed", "matplotlib", "ipywidgets", "pandas", "voila")

# what pip prints when the index cannot be reached at all (as opposed to a broken requirement or build)
_NO_NETWORK = re.compile(r"NewConnectionError|Failed to establish a new connection|Temporary failure in name resolution"
                         r"|Name or service not known|Network is unreachable|ConnectTimeoutError|ProxyError"
                         r"|Could not fetch URL .*(connection|timed out)", re.I)


def _settings():
    cfg = ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini", encoding="utf-8")
    return cfg["DEFAULT"]


def _run(cmd, **kw):
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME")}
    return subprocess.run([str(c) for c in cmd], capture_output=True, text=True, env={**env, **kw.pop("env", {})}, **kw)


@pytest.fixture(scope="module")
def core_env(tmp_path_factory):
    "A fresh venv with the built wheel and its core dependencies; returns (python, folder)."
    tmp = tmp_path_factory.mktemp("install")
    # build from a copy of what the wheel is made of: an in-tree build would reuse ROOT/build/, where a module
    # deleted from the package since the last build still lies (and would be shipped)
    src = tmp / "src"
    shutil.copytree(ROOT / "dppca_nb", src / "dppca_nb", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    for f in ("setup.py", "settings.ini", "README.md", "LICENSE"): shutil.copy(ROOT / f, src / f)
    r = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", tmp / "wheel", "."], cwd=src)
    assert r.returncode == 0, "building the wheel failed:\n" + r.stdout + r.stderr
    (wheel,) = (tmp / "wheel").glob("dppca_nb-*.whl")
    venv.create(tmp / "venv", with_pip=True, clear=True)
    py = tmp / "venv" / ("Scripts" if os.name == "nt" else "bin") / "python"
    r = _run([py, "-m", "pip", "install", "-q", "--disable-pip-version-check", wheel], cwd=tmp)
    if r.returncode != 0 and _NO_NETWORK.search(r.stdout + r.stderr):
        pytest.skip("pip cannot reach the package index (no network): the core install is not tested here\n"
                    + (r.stdout + r.stderr)[-800:])
    assert r.returncode == 0, "installing the wheel with its core dependencies failed:\n" + r.stdout + r.stderr
    return py, tmp


@pytest.mark.timeout(900)
def test_the_core_install_is_light(core_env):
    py, tmp = core_env
    code = "import importlib.util, json, sys; print(json.dumps([m for m in sys.argv[1:] if importlib.util.find_spec(m)]))"
    r = _run([py, "-c", code, *EXTRAS_ONLY], cwd=tmp)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [], f"the core install pulled in: {r.stdout}"


@pytest.mark.timeout(900)
def test_the_core_install_fits_every_estimator(core_env):
    py, tmp = core_env
    code = textwrap.dedent("""
        import json, numpy as np, dppca_nb
        from dppca_nb import AnalyzeGaussPCA
        from dppca_nb.estimators import available_estimators
        X = np.random.default_rng(0).normal(size=(300, 6)) / 4        # rows well inside the unit ball
        fitted = sorted(n for n, cls in available_estimators().items() if cls(random_state=0).fit(X) is not None)
        pca = AnalyzeGaussPCA(n_components=2, epsilon=1.0, delta=1e-6, random_state=0).fit(X)
        print(json.dumps(dict(version=dppca_nb.__version__, file=dppca_nb.__file__, fitted=fitted,
                              shape=list(pca.components_.shape), guarantee=pca.privacy_["guarantee"])))
    """)
    r = _run([py, "-c", code], cwd=tmp, env={"OPENBLAS_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    out = json.loads(r.stdout.splitlines()[-1])
    assert out["version"] == _settings()["version"]
    assert str(tmp) in out["file"], f"imported dppca_nb from {out['file']}, not from the fresh install"
    assert len(out["fitted"]) >= 7 and out["shape"] == [2, 6], out
    assert "DP" in out["guarantee"], out                               # a stated guarantee, e.g. "(1, 1e-06)-DP"


@pytest.mark.timeout(900)
def test_the_core_install_runs_dppca_fit(core_env):
    py, tmp = core_env
    X = __import__("numpy").random.default_rng(1).normal(size=(200, 4)) / 3
    csv = tmp / "data.csv"
    csv.write_text("\n".join(",".join(f"{v:.6f}" for v in row) for row in X) + "\n")
    dppca = py.parent / ("dppca.exe" if os.name == "nt" else "dppca")
    r = _run([dppca, "fit", csv, "--method", "analyze-gauss", "-k", "2", "--epsilon", "1", "--delta", "1e-6",
              "--out", tmp / "components.csv"], cwd=tmp, env={"OPENBLAS_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    assert "DP" in r.stdout, r.stdout
