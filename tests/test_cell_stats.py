"""The notebooks' cells, measured by tools/cell_stats.py: the tool itself on a small notebook, and the rule that no
export cell of the repository is over `MAX_EXPORT_LINES` (60) lines."""
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import cell_stats  # noqa: E402


def _nb(*cells):
    return {"cells": [{"cell_type": k, "source": s, "metadata": {}, "outputs": []} for k, s in cells],
            "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


SMALL = _nb(("code", "#| default_exp x"),
            ("markdown", "# Title\n\nfour words in here"),
            ("code", "#| export\n\ndef f(): return 1\n\ndef g(): return 2\n"),           # 3 lines: f, blank, g
            ("code", "#| exporti\nclass C:\n    pass\n" + "y = 1\n" * 30),               # 32 lines, one definition
            ("code", "from fastcore.test import test_fail\ntest_fail(lambda: f(1))\ntest_fail(lambda: g(1))"),
            ("code", "#| hide\ntest_fail(lambda: f(2))"),                                # hidden: not counted
            ("code", "#| include: false\ntest_fail(lambda: f(3))"),                      # not shown either
            ("markdown", "two words"),
            ("code", "%timeit f()\ndef h(): pass"))                                    # does not parse: a regex


def test_cells_of_a_small_notebook():
    cells = cell_stats.cell_infos(SMALL, "a.ipynb")
    ex = [c for c in cells if c.exported]
    assert [(c.lines, c.defs) for c in ex] == [(3, ["f", "g"]), (32, ["C"])]
    assert [c.test_fails for c in cells if c.visible] == [0, 0, 0, 0, 2, 0, 0]
    assert cells[-1].defs == ["h"]
    s = cell_stats.summary(cells)
    assert s["export_cells"] == 2 and s["median_lines"] == 17.5 and s["max_lines"] == 32
    assert s["share_over_20"] == 0.5 and s["share_over_50"] == 0 and s["over_max"] == 0
    assert s["defs_per_export_cell"] == 1.5 and s["visible_test_fail"] == 2
    assert s["markdown_cells"] == 2 and s["median_markdown_words"] == (6 + 2) / 2
    assert [c.lines for c in cell_stats.worst_cells(cells, 1)["a.ipynb"]] == [32]


def test_phrases_and_command_line(tmp_path, capsys):
    nbs = tmp_path / "nbs"
    (nbs / "01_a").mkdir(parents=True)
    (nbs / "01_a/00_x.ipynb").write_text(json.dumps(_nb(("markdown", "The Centre, centred; centring."),
                                                        ("code", "#| export\ndef f(): pass"))), encoding="utf-8")
    counts = cell_stats.phrase_counts(nbs, ("centre", "centring", "seed text"))
    assert counts == {"centre": {"01_a/00_x.ipynb": 2}, "centring": {"01_a/00_x.ipynb": 1}, "seed text": {}}
    assert cell_stats.main(["--nbs", str(nbs), "--phrases"]) == 0
    out = capsys.readouterr().out
    assert "| export cells | 1 |" in out and "01_a/00_x.ipynb: 1 (cell 1: f)" in out and "'centre': 2" in out


def test_no_export_cell_over_the_limit():
    "fastcore's rhythm: one definition per export cell where that reads better, and none over 60 lines."
    cells = cell_stats.load_cells(ROOT / "nbs")
    assert sum(c.exported for c in cells) > 100                      # the notebooks were found
    long = [f"{c.notebook} cell {c.index} ({c.lines} lines{': ' + c.defs[0] if c.defs else ''})"
            for c in cells if c.exported and c.lines > cell_stats.MAX_EXPORT_LINES]
    assert not long, f"{len(long)} export cells over {cell_stats.MAX_EXPORT_LINES} lines:\n" + "\n".join(long)
