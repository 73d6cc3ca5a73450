"""Every notebook in nbs/ runs through nbdev's own runner, one pytest item per notebook.

Cells flagged with a `tst_flags` flag from settings.ini (such as `slow`) are skipped unless the
environment variable DPPCA_TEST_FLAGS names them (e.g. DPPCA_TEST_FLAGS=slow); `#| eval: false`
cells never run.
"""
import os
import warnings
from configparser import ConfigParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"


def _notebooks():
    out = []
    for p in sorted(NBS.rglob("*.ipynb")):
        rel = p.relative_to(NBS)
        if any(part.startswith(("_", ".")) for part in rel.parts) or ".ipynb_checkpoints" in rel.parts:
            continue
        out.append(p)
    return out


def _flags():
    cfg = ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini", encoding="utf-8")
    skip = cfg["DEFAULT"].get("tst_flags", "").split()
    force = os.environ.get("DPPCA_TEST_FLAGS", "").split()
    return skip, force


def _tables():
    """The package's registries, each filled first (every module imported): the algorithms, their bounds and rates,
    the studies and the explorers."""
    import dppca_nb.theory.rates as tr
    import dppca_nb.theory.bounds as tb
    from dppca_nb.algorithms.registry import REGISTRY, algorithms
    from dppca_nb.experiments.study import STUDIES, load_all_studies
    from dppca_nb.teach import widgets
    algorithms(), tb.load_all_bounds(), load_all_studies(), widgets.explorers()
    return [REGISTRY, tb.BOUNDS, tb.BOUND_NAMES, tr.RATES, STUDIES, widgets._EXPLORERS]


@pytest.fixture
def package_registry():
    """The notebooks run in this process (nbdev's runner): a notebook that registers its algorithm, bound, study or
    explorer again (from `__main__`) would leave that entry to the next notebook. Give each notebook the package's
    own tables back."""
    tables = _tables()
    saved = [dict(t) for t in tables]
    yield
    for t, s in zip(tables, saved):
        t.clear()
        t.update(s)


@pytest.mark.parametrize("nb", _notebooks(), ids=lambda p: str(p.relative_to(NBS)))
def test_notebook(nb, capsys, package_registry):
    from nbdev.test import test_nb
    skip, force = _flags()
    # a warning class a notebook defines lives in its `__main__`: pytest-xdist could not rebuild such a warning in the
    # controller (INTERNALERROR), so a notebook's own warnings stay in the notebook (its cells test the ones it means)
    with warnings.catch_warnings():
        warnings.showwarning = lambda *args, **kwargs: None      # filters unchanged: fastcore's test_warns still sees them
        ok, seconds = test_nb(nb, skip_flags=skip, force_flags=force, showerr=True)
    assert ok, f"{nb.name} failed (see the traceback above)"
