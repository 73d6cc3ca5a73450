"""How the notebooks read, in numbers: `python tools/cell_stats.py [--worst 3] [--json]`.

Over every notebook under `nbs/` (`nbs/**/*.ipynb`, checkpoints left out) it measures:

* the export cells (`#| export`, `#| exports`, `#| exporti`): their number, the median and the largest line count
  (the lines a reader sees: directive lines and blank lines at either end left out), the share over 20 and over
  50 lines, and the top-level definitions (`def`, `class`) per export cell;
* the `test_fail` calls in visible cells (a cell marked `#| hide` or `#| include: false` is not visible);
* the median markdown cell's word count;
* per notebook, its worst cells: the longest export cells, with the first name each defines.

`--phrases` counts words a reader should not meet (see `PHRASES`) in the notebooks' markdown and code, per notebook.
The functions are used by `tests/test_cell_stats.py`, which holds every export cell to `MAX_EXPORT_LINES`.
"""
from __future__ import annotations

import argparse
import ast
import json
import re
import statistics
import sys
from dataclasses import asdict, dataclass
from pathlib import Path

from render_docs import split_directives     # the docs' reading of `#| ...` lines (tools/ is on the path)

ROOT = Path(__file__).resolve().parents[1]
NBS = ROOT / "nbs"
MAX_EXPORT_LINES = 60                 # no export cell over this (the project's rule)
EXPORT = {"export", "exports", "exporti"}
PHRASES = ("centre", "centring", "anchors", "earlier version", "deliberate change", "seed text")

_TEST_FAIL = re.compile(r"\btest_fail\s*\(")
_DEF = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)", re.M)


def notebooks(nbs: Path = NBS) -> list[Path]:
    "Every notebook under `nbs`, sorted, checkpoints left out."
    return [p for p in sorted(Path(nbs).rglob("*.ipynb")) if ".ipynb_checkpoints" not in p.parts]


def directives(source: str) -> tuple[dict, list[str]]:
    "The nbdev directives of a cell (`{'export': [], 'include:': ['false']}`) and its other lines, blank edges left out."
    found, body = split_directives(source)
    keep = body.split("\n") if body else []
    while keep and not keep[0].strip(): keep.pop(0)
    while keep and not keep[-1].strip(): keep.pop()
    return found, keep


def definitions(code: str) -> list[str]:
    "The names a cell defines at top level (functions and classes), in order; a regex where the cell does not parse."
    try:
        tree = ast.parse(code)
    except SyntaxError:                                    # IPython magics and the like
        return _DEF.findall(code)
    return [n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]


@dataclass
class CellInfo:
    notebook: str                 # path relative to nbs/
    index: int                    # position in the notebook
    kind: str                     # "markdown" or "code"
    lines: int                    # lines a reader sees (directives and blank ends left out)
    exported: bool
    visible: bool                 # not `#| hide`, not `#| include: false`
    defs: list
    test_fails: int               # test_fail calls
    words: int                    # words (markdown cells)


def cell_infos(nb: dict, name: str = "") -> list[CellInfo]:
    "One `CellInfo` per markdown or code cell of the notebook `nb` (a parsed .ipynb)."
    out = []
    for i, c in enumerate(nb.get("cells", [])):
        if c.get("cell_type") not in ("markdown", "code"): continue
        src = "".join(c.get("source", ""))
        d, body = directives(src)
        code = c["cell_type"] == "code"
        visible = "hide" not in d and d.get("include:", [""])[:1] != ["false"]
        text = "\n".join(body)
        out.append(CellInfo(name, i, c["cell_type"], len(body), code and bool(EXPORT & d.keys()), visible,
                            definitions(text) if code else [],
                            len(_TEST_FAIL.findall("\n".join(l for l in body if "import" not in l))) if code else 0,
                            0 if code else len(text.split())))
    return out


def load_cells(nbs: Path = NBS) -> list[CellInfo]:
    "The cells of every notebook under `nbs`."
    nbs = Path(nbs)
    return [c for p in notebooks(nbs)
            for c in cell_infos(json.loads(p.read_text(encoding="utf-8")), p.relative_to(nbs).as_posix())]


def summary(cells: list[CellInfo]) -> dict:
    "The numbers of the table: export cells, their lines and definitions, visible test_fail calls, markdown words."
    ex = [c for c in cells if c.exported]
    lines = [c.lines for c in ex]
    words = [c.words for c in cells if c.kind == "markdown"]
    n = len(ex)
    return dict(
        notebooks=len({c.notebook for c in cells}), export_cells=n,
        median_lines=statistics.median(lines) if lines else 0, max_lines=max(lines, default=0),
        share_over_20=sum(x > 20 for x in lines) / n if n else 0.0,
        share_over_50=sum(x > 50 for x in lines) / n if n else 0.0,
        over_max=sum(x > MAX_EXPORT_LINES for x in lines),
        defs_per_export_cell=sum(len(c.defs) for c in ex) / n if n else 0.0,
        visible_test_fail=sum(c.test_fails for c in cells if c.visible),
        markdown_cells=len(words), median_markdown_words=statistics.median(words) if words else 0)


def worst_cells(cells: list[CellInfo], per_notebook: int = 3) -> dict[str, list[CellInfo]]:
    "Each notebook's longest export cells, longest first."
    by = {}
    for c in cells:
        if c.exported: by.setdefault(c.notebook, []).append(c)
    return {nb: sorted(cs, key=lambda c: -c.lines)[:per_notebook] for nb, cs in by.items()}


def phrase_counts(nbs: Path = NBS, phrases=PHRASES) -> dict[str, dict[str, int]]:
    "Case-insensitive counts of each phrase in the notebooks' markdown and code cells: {phrase: {notebook: count}}."
    nbs = Path(nbs)
    out = {ph: {} for ph in phrases}
    for p in notebooks(nbs):
        nb = json.loads(p.read_text(encoding="utf-8"))
        text = "\n".join("".join(c.get("source", "")) for c in nb.get("cells", [])).lower()
        for ph in phrases:
            k = text.count(ph.lower())
            if k: out[ph][p.relative_to(nbs).as_posix()] = k
    return out


def table(s: dict) -> str:
    "The summary as a markdown table."
    rows = [("notebooks", s["notebooks"]), ("export cells", s["export_cells"]),
            ("median export cell (lines)", s["median_lines"]), ("largest export cell (lines)", s["max_lines"]),
            ("export cells over 20 lines", f"{s['share_over_20']:.0%}"),
            ("export cells over 50 lines", f"{s['share_over_50']:.0%}"),
            (f"export cells over {MAX_EXPORT_LINES} lines", s["over_max"]),
            ("definitions per export cell", f"{s['defs_per_export_cell']:.2f}"),
            ("test_fail calls in visible cells", s["visible_test_fail"]),
            ("median markdown cell (words)", s["median_markdown_words"])]
    return "\n".join(["| measure | value |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="cell_stats.py", description=__doc__.splitlines()[0])
    ap.add_argument("--nbs", default=str(NBS), help="the notebooks' folder (default nbs/)")
    ap.add_argument("--worst", type=int, default=3, metavar="N", help="export cells listed per notebook (default 3)")
    ap.add_argument("--phrases", action="store_true", help="count the phrases of PHRASES per notebook")
    ap.add_argument("--json", action="store_true", help="print the numbers as JSON")
    a = ap.parse_args(argv)
    cells = load_cells(Path(a.nbs))
    s = summary(cells)
    worst = worst_cells(cells, a.worst)
    counts = phrase_counts(Path(a.nbs)) if a.phrases else None
    if a.json:
        print(json.dumps(dict(summary=s, worst={k: [asdict(c) for c in v] for k, v in worst.items()},
                              phrases=counts), indent=1))
        return 0
    print(table(s))
    print(f"\nLongest export cells per notebook (over {MAX_EXPORT_LINES} lines marked *):")
    for nb, cs in sorted(worst.items(), key=lambda kv: -kv[1][0].lines):
        items = ", ".join(f"{c.lines}{'*' if c.lines > MAX_EXPORT_LINES else ''} "
                          f"(cell {c.index}{': ' + c.defs[0] if c.defs else ''})" for c in cs)
        print(f"  {nb}: {items}")
    if counts is not None:
        print("\nPhrases (case-insensitive, markdown and code cells):")
        for ph, by in counts.items():
            where = ", ".join(f"{k} {v}" for k, v in sorted(by.items(), key=lambda kv: -kv[1]))
            print(f"  {ph!r}: {sum(by.values())}" + (f" ({where})" if where else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
