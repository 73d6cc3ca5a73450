"""Write README.md from nbs/index.ipynb (Quarto's nbdev_readme cannot run here).

Usage: python tools/make_readme.py [--check]
With --check, exit 1 when README.md differs from what would be written.

Cells marked `#| hide` are left out; a `#| echo: false` cell shows only its markdown output. Relative links and
images of the notebook (`[...](00_core/00_validation.ipynb)`, `![...](images/architecture.svg)`) are written
relative to the README (`nbs/...`), so that they resolve on the code host.
"""
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
_RELATIVE = re.compile(r"(!?\[[^\]]*\]\()(?![a-z][a-z0-9+.-]*:|#|/)([^)\s]+)(\))", re.I)


def relink(md: str) -> str:
    "Markdown links relative to nbs/ made relative to the repository root."
    return _RELATIVE.sub(lambda m: f"{m[1]}nbs/{m[2]}{m[3]}", md)


HEADER = "<!-- Generated from nbs/index.ipynb by tools/make_readme.py: edit the notebook, not this file. -->\n\n"


def render() -> str:
    import nbformat
    from nbconvert import MarkdownExporter
    nb = nbformat.read(ROOT / "nbs" / "index.ipynb", as_version=4)
    nb.metadata["language_info"] = {"name": "python"}
    cells = []
    for cell in nb.cells:
        if cell.cell_type == "code":
            directives = [l for l in cell.source.splitlines() if l.startswith("#|")]
            if any(l.replace(" ", "") == "#|hide" for l in directives): continue
            md = [o["data"]["text/markdown"] for o in cell.get("outputs", [])
                  if o.get("output_type") in ("display_data", "execute_result") and "text/markdown" in o.get("data", {})]
            if any(l.replace(" ", "") == "#|echo:false" for l in directives):
                # show only the (markdown) output of the cell, as nbdev's docs do
                if md: cells.append(nbformat.v4.new_markdown_cell(relink("".join(md))))
                continue
            # keep the code and its printed output, drop nbdev directives and execution noise
            cell.source = "\n".join(l for l in cell.source.splitlines() if not l.startswith("#|"))
            cell.outputs = [o for o in cell.get("outputs", []) if o.get("output_type") == "stream"]
        elif cell.cell_type == "markdown": cell.source = relink(cell.source)
        cells.append(cell)
    nb.cells = cells
    body, _ = MarkdownExporter().from_notebook_node(nb)
    lines = body.splitlines()
    # nbdev front matter: '# title' then '> description'
    return HEADER + "\n".join(l.rstrip() for l in lines).strip() + "\n"


if __name__ == "__main__":
    text = render()
    target = ROOT / "README.md"
    if "--check" in sys.argv:
        ok = target.exists() and target.read_text(encoding="utf-8") == text
        if not ok: print("README.md is out of date: run python tools/make_readme.py")
        sys.exit(0 if ok else 1)
    target.write_text(text, encoding="utf-8")
