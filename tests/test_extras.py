"""The extras, checked from their metadata: nothing is installed here.

setup.py makes each `extra_NAME_requirements` of settings.ini the extra [NAME]; `dppca_nb.core.extras.EXTRAS` says which
modules the package imports from each. This file checks that the two agree: every module of `EXTRAS[name]` is brought
by [NAME]'s requirements (directly or as a dependency of one, read from the metadata of what this environment has
installed, which is [dev]: everything); every import of an optional package in the package (and in
tools/render_docs.py, which `dppca docs` runs) is one that the extra of its place brings; and each command that needs
an extra names it, with the install command, when one of its modules is missing (simulated by hiding the module).
The browser test (tests/test_browser.py) checks the same of what the app's kernels really import while serving.
"""
import ast
import functools
import importlib.metadata as md
import os
import re
import runpy
import sys
import types
import unittest.mock
from configparser import ConfigParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CORE_IMPORTS = {"numpy", "scipy", "sklearn", "tqdm"}         # the core install (settings.ini `requirements`)

# Where an optional import sits decides the extra that must bring it: the extra whose command runs that code.
PLACES = [("dppca_nb/teach/", "teach"), ("dppca_nb/experiments/", "experiments"), ("dppca_nb/cli/docs.py", "docs"),
          ("tools/render_docs.py", "docs"), ("dppca_nb/privacy/audit.py", "experiments"),
          ("dppca_nb/algorithms/pictures.py", "experiments"),          # plot_scree and plot_scores draw with matplotlib
          ("dppca_nb/theory/price.py", "experiments")]                 # draw_price_of_privacy draws with matplotlib
ANYWHERE = {"dask": "dask", "distributed": "dask"}          # the Dask paths, wherever they are: [dask]
# Optional imports that no extra brings, each with the reason (and where the package says how to install it).
NO_EXTRA = {
    "msprime": "only regenerates the bundled genotypes (experiments.robust.simulate_grid_genotypes): a dev tool",
    "array_api_compat": "array-API input (GPU arrays); the error says `pip install array-api-compat`",
    "cupy": "a GPU user's own array library, looked up only to find a device",
}


def setup_extras() -> dict:
    """extras_require exactly as setup.py computes it: setup.py run against a stand-in for setuptools whose `setup`
    records its arguments (nothing is built, and setuptools need not be installed)."""
    seen = {}
    stand_in = types.SimpleNamespace(setup=lambda **kw: seen.update(kw), find_packages=lambda **kw: [])
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        with unittest.mock.patch.dict(sys.modules, {"setuptools": stand_in}):
            runpy.run_path(str(ROOT / "setup.py"), run_name="__main__")
    finally:
        os.chdir(cwd)
    return seen["extras_require"]


def _canon(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def requirement_closure(requirements) -> set:
    """The distributions (canonical names) that `requirements` install: each one and, from the installed metadata,
    its own requirements (with the extras asked for, markers evaluated here), recursively."""
    from packaging.requirements import Requirement
    todo, done = [Requirement(r) for r in requirements], set()
    while todo:
        req = todo.pop()
        name = _canon(req.name)
        key = (name, tuple(sorted(req.extras)))
        if key in done: continue
        done.add(key)
        try:
            reqs = md.requires(req.name) or []
        except md.PackageNotFoundError:
            continue                                     # not installed here (a platform-specific dependency)
        for r in map(Requirement, reqs):
            envs = [{"extra": e} for e in req.extras] or [{"extra": ""}]
            if r.marker is None or any(r.marker.evaluate(env) for env in envs):
                todo.append(r)
    return {name for name, _ in done}


@functools.lru_cache(maxsize=1)
def _module_distributions() -> dict:
    return md.packages_distributions()          # reads every installed distribution's file list: once


def distributions_of(module: str) -> set:
    "The installed distributions (canonical names) that provide top-level `module`."
    return {_canon(d) for d in _module_distributions().get(module, [])}


def _settings():
    cfg = ConfigParser(delimiters=["="])
    cfg.read(ROOT / "settings.ini", encoding="utf-8")
    return cfg["DEFAULT"]


def test_setup_makes_each_settings_extra_an_extra():
    cfg, extras = _settings(), setup_extras()
    named = {k[len("extra_"):-len("_requirements")]: cfg[k].split() for k in cfg
             if k.startswith("extra_") and k.endswith("_requirements")}
    assert {k: v for k, v in extras.items() if k != "dev"} == named
    dev = set(extras["dev"])
    for name, reqs in named.items():
        assert set(reqs) <= dev, f"[dev] lacks [{name}]'s {set(reqs) - dev}"


def test_teach_and_docs_bring_what_their_commands_need():
    "The two extras a fresh install was missing: [teach] has a Jupyter kernel, [docs] what `dppca docs` imports."
    extras = setup_extras()
    teach = {_canon(r.split(">")[0].split("=")[0].split("[")[0]) for r in extras["teach"]}
    assert {"voila", "ipykernel", "ipywidgets", "matplotlib"} <= teach, teach
    docs = requirement_closure(extras["docs"])
    assert {"nbconvert", "nbformat", "pygments", "beautifulsoup4", "jupyter-server-mathjax", "mistune"} <= docs


def test_every_module_of_an_extra_comes_with_it():
    from dppca_nb.core.extras import EXTRAS
    extras = setup_extras()
    assert set(EXTRAS) == set(extras) - {"dev"}
    for name, modules in EXTRAS.items():
        brought = requirement_closure(extras[name])
        for m in modules:
            dists = distributions_of(m)
            assert dists, f"{m} (of [{name}]) is not installed here: the test environment is [dev], which has all"
            assert dists & brought, f"[{name}] lists {m} (from {dists}) but its requirements do not bring it"


def _guarded(tree) -> set:
    "Ids of the import nodes inside a `try` whose handlers catch ImportError (an optional import with a fallback)."
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Try):
            names = {ast.unparse(h.type) for h in node.handlers if h.type is not None}
            if any(re.search(r"\b(ImportError|ModuleNotFoundError)\b", n) for n in names):
                out |= {id(n) for b in node.body for n in ast.walk(b) if isinstance(n, (ast.Import, ast.ImportFrom))}
    return out


def optional_imports() -> list:
    "(file, module, guarded) for every absolute import of a package outside the core install and the standard library."
    files = sorted((ROOT / "dppca_nb").rglob("*.py")) + [ROOT / "tools" / "render_docs.py"]
    out = []
    for f in files:
        if f.name == "_modidx.py": continue
        tree = ast.parse(f.read_text(encoding="utf-8"))
        guarded = _guarded(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Import): mods = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module: mods = [node.module]
            else: continue
            for m in mods:
                top = m.split(".")[0]
                if top in sys.stdlib_module_names or top in CORE_IMPORTS or top == "dppca_nb": continue
                out.append((f.relative_to(ROOT).as_posix(), top, id(node) in guarded))
    return out


def test_every_optional_import_is_brought_by_the_extra_of_its_place():
    """Scan the package for imports of optional packages and map each to an extra: the Dask paths to [dask], the
    explorers and the app to [teach], the studies to [experiments], the docs to [docs]. The extra must bring it (its
    EXTRAS entry, checked against the metadata above); an import with a fallback (`except ImportError`) must be in some
    extra; anything else is in NO_EXTRA with its reason."""
    from dppca_nb.core.extras import EXTRAS
    found, problems = optional_imports(), []
    assert {"ipywidgets", "voila", "matplotlib", "pandas", "dask", "nbconvert", "pygments"} <= {m for _, m, _ in found}
    everywhere = {m for mods in EXTRAS.values() for m in mods}
    for path, mod, guarded in found:
        if mod in NO_EXTRA: continue
        extra = ANYWHERE.get(mod) or next((e for prefix, e in PLACES if path.startswith(prefix)), None)
        if extra is not None and mod in EXTRAS[extra]: continue
        if guarded and mod in everywhere: continue
        problems.append(f"{path} imports {mod}: " + (f"not in EXTRAS[{extra!r}]" if extra else
                                                     "no extra for this place (add it to PLACES) and no fallback"))
    assert not problems, "\n".join(sorted(set(problems)))
    assert set(NO_EXTRA) <= {m for _, m, _ in found}, "NO_EXTRA names a module the package no longer imports"


def test_require_extra_calls_name_modules_of_that_extra():
    "Every literal `require_extra(extra, what, modules)` in the package names an extra and modules it brings."
    from dppca_nb.core.extras import EXTRAS
    calls = []
    for f in (ROOT / "dppca_nb").rglob("*.py"):
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "require_extra":
                extra, what = (ast.literal_eval(a) for a in node.args[:2])
                mods = ast.literal_eval(node.args[2]) if len(node.args) > 2 else EXTRAS[extra]
                assert extra in EXTRAS and set(mods) <= set(EXTRAS[extra]), (f.name, extra, mods)
                calls.append((extra, what))
    assert {("teach", "dppca app"), ("docs", "dppca docs"), ("experiments", "dppca reproduce")} <= set(calls), calls


def _hidden(*names):
    "importlib.util.find_spec as if `names` were not installed."
    real = __import__("importlib.util").util.find_spec
    return unittest.mock.patch("importlib.util.find_spec", lambda m, *a: None if m in names else real(m, *a))


@pytest.mark.parametrize("argv, hide, extra", [
    (["app", "--no-browser", "--port", "1"], ("ipykernel",), "teach"),
    (["app", "--no-browser", "--port", "1"], ("voila",), "teach"),
    (["docs", "--out", "unused_docs_dir"], ("pygments",), "docs"),
    (["reproduce", "--quick", "--out", "unused_results_dir"], ("pandas",), "experiments"),
])
def test_a_command_names_the_extra_it_lacks(argv, hide, extra, capsys, tmp_path, monkeypatch):
    from dppca_nb.cli import main
    monkeypatch.chdir(ROOT)
    with _hidden(*hide):
        assert main([a if not a.startswith("unused") else str(tmp_path / a) for a in argv]) == 2
    err = capsys.readouterr().err
    assert f"dppca {argv[0]} needs the [{extra}] extra: pip install 'dppca_nb[{extra}]'" in err, err
    assert f"not installed here: {', '.join(hide)}" in err and "Traceback" not in err
    assert not any(tmp_path.iterdir()), "the command wrote something before it refused"


def test_every_explorer_draws_without_pandas():
    "The app's pages need no pandas: scikit-learn imports it only if installed (the reason test_browser allows it)."
    import subprocess, sys
    code = ("import sys; sys.modules['pandas'] = None\nimport matplotlib; matplotlib.use('Agg')\n"
            "from dppca_nb.teach.widgets import explorer, explorers\nfor n in explorers(): explorer(n)\n"
            "for e in explorers().values():\n    if e.price is not None: e.price()\n")       # and each price view
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
