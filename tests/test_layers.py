"""The package's layers (see the index notebook): a module never imports a module of a higher layer, and no
import circle exists anywhere in the package, counting imports inside functions too (read from the AST)."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "dppca_nb"

# lowest first; a module may import its own layer and the layers before it
LAYERS = ["core", "backends", "data", "privacy", "algorithms", "theory", "estimators", "preprocessing",
          "experiments", "teach", "cli"]
ALIASES = {"bounds": "theory", "model_selection": "estimators"}   # top-level modules: a stable import path; the scorer


def _modules():
    mods = {}
    for f in PKG.rglob("*.py"):
        if f.name == "_modidx.py": continue
        rel = f.relative_to(ROOT).with_suffix("")
        name = ".".join(rel.parts)
        if name.endswith(".__init__"): name = name[: -len(".__init__")]
        mods[name] = f
    return mods


def _layer(mod):
    parts = mod.split(".")
    if len(parts) == 1: return None                       # dppca_nb itself: the lazy public API
    head = ALIASES.get(parts[1], parts[1])
    if head not in LAYERS: raise AssertionError(f"{mod}: not in a layer; add it to LAYERS or ALIASES in {__file__}")
    return LAYERS.index(head)


def import_graph():
    "{module: {imported package modules}} over every import statement, at any depth."
    mods = _modules()
    g = {m: set() for m in mods}
    for m, f in mods.items():
        pkg = m if f.name == "__init__.py" else m.rsplit(".", 1)[0]
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = pkg.split(".")
                    base = ".".join(base[: len(base) - node.level + 1])
                    tgt = ".".join(x for x in (base, node.module or "") if x)
                else: tgt = node.module or ""
                cands = [f"{tgt}.{a.name}" for a in node.names] + [tgt]
            elif isinstance(node, ast.Import): cands = [a.name for a in node.names]
            else: continue
            for c in cands:
                while c and c not in mods: c = c.rsplit(".", 1)[0] if "." in c else ""
                if c and c != m and c != "dppca_nb" and not m.startswith(c + "."): g[m].add(c)
    return g


def test_no_upward_import():
    bad = [f"{m} (layer {LAYERS[_layer(m)]}) imports {t} (layer {LAYERS[_layer(t)]})"
           for m, ts in import_graph().items() if _layer(m) is not None
           for t in ts if _layer(t) is not None and _layer(t) > _layer(m)]
    assert not bad, "upward imports:\n" + "\n".join(sorted(bad))


def test_no_import_circle():
    g = import_graph()
    state, cycles = {}, []
    def visit(v, path):
        state[v] = 1
        for w in sorted(g[v]):
            if state.get(w) == 1: cycles.append(" -> ".join(path[path.index(w):] + [w]))
            elif w not in state: visit(w, path + [w])
        state[v] = 2
    for v in sorted(g):
        if v not in state: visit(v, [v])
    assert not cycles, "import circles:\n" + "\n".join(cycles)


def test_each_layer_is_a_package():
    for layer in LAYERS:
        d = PKG / layer
        if layer in ("estimators", "preprocessing", "cli"):
            assert (PKG / f"{layer}.py").exists() or (d / "__init__.py").exists(), layer
        elif d.exists():
            assert (d / "__init__.py").exists(), f"{layer}/ has no __init__.py"
    flat = sorted(f.stem for f in PKG.glob("*.py")
                  if f.stem not in ("__init__", "_modidx", "estimators", "preprocessing", "cli", *ALIASES))
    assert not flat, f"modules outside a layer package: {flat}"


@pytest.mark.parametrize("mod", ["dppca_nb.core.validation", "dppca_nb.privacy.accounting"])
def test_graph_sees_imports(mod):
    assert "dppca_nb.core.validation" in import_graph()["dppca_nb.privacy.mechanisms"]
    assert mod in import_graph()
