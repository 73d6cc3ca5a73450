"""Small helpers to edit notebooks from scripts (cells keep their ids; new cells get fresh ids).

    from tools.nbedit import NB
    nb = NB("nbs/00_core.ipynb")
    nb.show()                                   # index, id, type, first line of every cell
    nb.replace("acfc2422", "old text", "new text")   # exact, unique substring of that cell
    nb.set("acfc2422", "whole new source")
    nb.insert_after("acfc2422", [("code", "#| export\\ndef f(): ..."), ("markdown", "Some text")])
    nb.delete("9c0cd6a3")
    nb.save()                                   # then: nbdev_export; python tools/run_nb.py nbs/00_core.ipynb
"""
import json, uuid
from pathlib import Path


class NB:
    def __init__(self, path):
        self.path = Path(path)
        self.nb = json.loads(self.path.read_text())

    @property
    def cells(self): return self.nb["cells"]

    def src(self, cid): return "".join(self._cell(cid)["source"])

    def _cell(self, cid):
        hits = [c for c in self.cells if c.get("id") == cid]
        if len(hits) != 1: raise KeyError(f"{self.path}: no unique cell with id {cid!r}")
        return hits[0]

    def _index(self, cid):
        return next(i for i, c in enumerate(self.cells) if c.get("id") == cid)

    def find(self, text):
        "Ids of the cells whose source contains `text`."
        return [c["id"] for c in self.cells if text in "".join(c["source"])]

    def show(self, width=100):
        for i, c in enumerate(self.cells):
            first = "".join(c["source"]).split("\n")[0][:width]
            print(i, c.get("id"), c["cell_type"][:4], first)

    def set(self, cid, source):
        c = self._cell(cid)
        c["source"] = source.splitlines(keepends=True)
        if c["cell_type"] == "code": c["outputs"], c["execution_count"] = [], None

    def replace(self, cid, old, new, count=1):
        s = self.src(cid)
        n = s.count(old)
        if n != count: raise ValueError(f"{self.path} cell {cid}: {old!r} occurs {n} times, expected {count}")
        self.set(cid, s.replace(old, new))

    @staticmethod
    def _new(kind, source):
        c = {"cell_type": kind, "id": uuid.uuid4().hex[:8], "metadata": {}, "source": source.splitlines(keepends=True)}
        if kind == "code": c.update(execution_count=None, outputs=[])
        return c

    def insert_after(self, cid, cells):
        "Insert [(kind, source), ...] after cell `cid` (None: at the top); returns the new ids."
        i = -1 if cid is None else self._index(cid)
        new = [self._new(k, s) for k, s in cells]
        self.cells[i + 1:i + 1] = new
        return [c["id"] for c in new]

    def append(self, cells):
        new = [self._new(k, s) for k, s in cells]
        self.cells.extend(new)
        return [c["id"] for c in new]

    def delete(self, cid):
        del self.cells[self._index(cid)]

    def save(self):
        self.path.write_text(json.dumps(self.nb, indent=1, ensure_ascii=False) + "\n")
