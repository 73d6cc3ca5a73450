"""A notebook as plain text and back, for rewriting a chapter in an editor: cells keep their ids and outputs.

    python tools/nbtext.py totext nbs/03_privacy/03_contract.ipynb > /tmp/contract.txt
    ... edit /tmp/contract.txt: move, split, add or delete cells ...
    python tools/nbtext.py fromtext /tmp/contract.txt nbs/03_privacy/03_contract.ipynb

Each cell starts with a marker line `#%% code <id>` or `#%% markdown <id>` (a new cell: `#%% code` or
`#%% markdown`, without an id; it gets a fresh one). A code cell whose source is unchanged keeps its outputs; a changed
one loses them (rerun the notebook with tools/run_nb.py). Cells are written back in the order of the text.
"""
import json
import re
import sys
import uuid
from pathlib import Path

MARK = re.compile(r"^#%% (code|markdown|raw)(?: ([0-9a-zA-Z_-]+))?\s*$")


def totext(path) -> str:
    nb = json.loads(Path(path).read_text())
    out = []
    for c in nb["cells"]:
        out.append(f"#%% {c['cell_type']} {c.get('id', '')}".rstrip())
        out.append("".join(c["source"]).rstrip("\n"))
    return "\n".join(out) + "\n"


def fromtext(text: str, path) -> None:
    path = Path(path)
    nb = json.loads(path.read_text()) if path.exists() else {"cells": [], "metadata": {}, "nbformat": 4,
                                                               "nbformat_minor": 5}
    old = {c.get("id"): c for c in nb["cells"]}
    cells, cur = [], None
    for line in text.splitlines():
        m = MARK.match(line)
        if m:
            cur = {"kind": m.group(1), "id": m.group(2), "lines": []}
            cells.append(cur)
        elif cur is not None:
            cur["lines"].append(line)
    new = []
    seen = set()
    for c in cells:
        src = "\n".join(c["lines"]).strip("\n")
        cid = c["id"]
        if cid in seen: raise ValueError(f"cell id {cid} appears twice")
        if cid: seen.add(cid)
        prev = old.get(cid) if cid else None
        if prev is not None and prev["cell_type"] == c["kind"] and "".join(prev["source"]).rstrip("\n") == src:
            new.append(prev)
            continue
        cell = {"cell_type": c["kind"], "id": cid or uuid.uuid4().hex[:8], "metadata": (prev or {}).get("metadata", {}),
                "source": src.splitlines(keepends=True)}
        if c["kind"] == "code": cell.update(execution_count=None, outputs=[])
        new.append(cell)
    nb["cells"] = new
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    cmd, *args = sys.argv[1:]
    if cmd == "totext": sys.stdout.write(totext(args[0]))
    elif cmd == "fromtext": fromtext(Path(args[0]).read_text(), args[1])
    else: raise SystemExit(__doc__)
