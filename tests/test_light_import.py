"""The core install is numpy, scipy and scikit-learn: fitting any estimator must not need dask, matplotlib,
ipywidgets, pandas or tqdm (they come with the extras and are imported only where they are used).

A fresh interpreter hides those packages (an import finder refuses them, as if they were not installed, and notes
who asked), imports `dppca_nb.estimators` and fits every estimator it defines on small data. The test fails when a
fit fails, when a module of the package asked for one of them (even inside a try/except), or when one of them ends
up in `sys.modules`. Third-party code may ask (scikit-learn tries pandas and falls back): that is allowed.
tests/test_install.py checks the same on a real core-only install.
"""
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HEAVY = ("dask", "distributed", "matplotlib", "ipywidgets", "pandas", "tqdm")

SCRIPT = textwrap.dedent("""
    import importlib, importlib.abc, inspect, json, os, sys, traceback
    HEAVY, ROOT = set(sys.argv[1].split(",")), sys.argv[2]
    PKG = os.path.join(ROOT, "dppca_nb") + os.sep
    MACHINERY = os.path.dirname(importlib.__file__) + os.sep
    asked = []          # (heavy module, the package file and line that asked for it)

    class Hide(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] not in HEAVY: return None
            for fr in traceback.extract_stack()[-2::-1]:        # from the caller of this finder outwards:
                if fr.filename.startswith(("<frozen", MACHINERY)): continue    # skip the import machinery
                if fr.filename.startswith(PKG):                 # the first other frame is the one that asked
                    asked.append((name, f"{os.path.relpath(fr.filename, ROOT)}:{fr.lineno}"))
                break
            raise ModuleNotFoundError(f"No module named {name!r} (hidden: not part of the core install)", name=name)

    sys.meta_path.insert(0, Hide())
    import numpy as np
    from sklearn.base import BaseEstimator
    import dppca_nb.estimators as E

    classes = {n: c for n in dir(E) if not n.startswith("_") and inspect.isclass(c := getattr(E, n))
               and issubclass(c, BaseEstimator) and c.__module__.startswith("dppca_nb")}
    X = np.random.default_rng(0).normal(size=(300, 6)) / 4        # rows well inside the unit ball
    fitted, failed = [], {}
    for name, cls in sorted(classes.items()):
        try:
            cls(random_state=0).fit(X); fitted.append(name)
        except Exception as e: failed[name] = f"{type(e).__name__}: {e}"
    loaded = sorted({m.split(".")[0] for m in sys.modules} & HEAVY)
    print(json.dumps(dict(fitted=fitted, failed=failed, asked=asked, loaded=loaded)))
""")


def _run():
    r = subprocess.run([sys.executable, "-c", SCRIPT, ",".join(HEAVY), str(ROOT)], capture_output=True, text=True,
                       cwd=ROOT, env={**os.environ, "OPENBLAS_NUM_THREADS": "1"})
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.splitlines()[-1])


def test_every_estimator_fits_without_the_extras():
    out = _run()
    assert len(out["fitted"]) + len(out["failed"]) >= 7, f"expected every estimator, found {out}"
    assert not out["failed"], "estimators that need an extra to fit:\n" + "\n".join(
        f"  {k}: {v}" for k, v in out["failed"].items())
    assert not out["asked"], "package modules that import an extra on the estimators' path:\n" + "\n".join(
        f"  {mod} from {where}" for mod, where in out["asked"])
    assert not out["loaded"], f"loaded while fitting: {out['loaded']}"
