"""The chunked CSV reader (dppca_nb.data.tables): the same array and the same errors whatever the chunk size, from a
file, a .gz file or standard input; the columns that are not features; and the memory a read takes (tracemalloc)."""
import gzip
import io
import sys
import tracemalloc

import numpy as np
import pytest

from dppca_nb.data.tables import TableError, read_table, read_numeric_csv


def _csv(X, header=None, delim=","):
    rows = [delim.join(repr(float(v)) for v in r) for r in X]
    return "\n".join(([delim.join(header)] if header else []) + rows) + "\n"


@pytest.fixture
def data():
    return np.random.default_rng(3).normal(size=(23, 4))


@pytest.mark.parametrize("chunk_rows", [1, 2, 7, None])
@pytest.mark.parametrize("header", [True, False])
def test_every_chunk_size_reads_the_same_array(tmp_path, data, chunk_rows, header):
    f = tmp_path / "a.csv"
    f.write_text(_csv(data, ["a", "b", "c", "d"] if header else None))
    t = read_table(f, chunk_rows=chunk_rows)
    np.testing.assert_array_equal(t.X, data)                 # repr round-trips: exact
    assert t.names == (["a", "b", "c", "d"] if header else ["x1", "x2", "x3", "x4"]) and t.has_header is header
    t = read_table(f, chunk_rows=chunk_rows, columns="3,1")
    np.testing.assert_array_equal(t.X, data[:, [2, 0]])


def test_chunks_by_bytes_blank_lines_and_quotes(tmp_path, data):
    text = _csv(data, ["a", "b", "c", "d"]).replace("\n", "\n\n", 5)   # blank lines are skipped, not counted
    f = tmp_path / "b.csv"
    f.write_text(text)
    np.testing.assert_array_equal(read_table(f, chunk_bytes=50).X, data)
    f.write_text('a,"b"\n"1",2\n3,"4"\n')                     # quoted fields: the csv module's chunk path
    np.testing.assert_array_equal(read_table(f, chunk_rows=1).X, [[1, 2], [3, 4]])
    f.write_text('"a\nb",c\n1,2\n')                          # a header name with a line break: one record
    assert read_table(f, chunk_rows=1).names == ["a\nb", "c"]


@pytest.mark.parametrize("chunk_rows", [1, 2, 7])
def test_errors_count_rows_across_chunks(tmp_path, chunk_rows):
    body = "".join(f"{i},{i + 1}\n" for i in range(20))
    f = tmp_path / "e.csv"
    f.write_text("u,v\n" + body + "5,abc\n")
    with pytest.raises(TableError, match=r"^DATA row 21, column 'v': 'abc' is not a number"):
        read_table(f, chunk_rows=chunk_rows)
    f.write_text("u,v\n" + body + "5\n")
    with pytest.raises(TableError, match=r"^DATA row 21 has 1 fields, expected 2"):
        read_table(f, chunk_rows=chunk_rows, columns="u")   # a ragged line is found even where only u is parsed
    f.write_text(body + "nan,1\n")
    with pytest.raises(TableError, match=r"^DATA row 21, column 1: 'nan' is not a finite number"):
        read_table(f, chunk_rows=chunk_rows)
    f.write_text("u;v\n1;2\n")
    with pytest.raises(TableError, match="use --delimiter ';'"):
        read_table(f, chunk_rows=chunk_rows)


def test_gzip_and_standard_input(tmp_path, data, monkeypatch):
    text = _csv(data, ["a", "b", "c", "d"])
    (tmp_path / "a.csv.gz").write_bytes(gzip.compress(text.encode()))
    np.testing.assert_array_equal(read_table(tmp_path / "a.csv.gz", chunk_rows=2).X, data)
    for raw in (text.encode(), gzip.compress(text.encode())):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(raw)))
        np.testing.assert_array_equal(read_table("-", chunk_rows=3).X, data)   # grows from an unknown length
    (tmp_path / "cut.gz").write_bytes(gzip.compress(text.encode())[:-20])
    with pytest.raises(TableError, match="is not a readable gzip file"):
        read_table(tmp_path / "cut.gz")
    (tmp_path / "x.gz").write_text("1,2\n")
    with pytest.raises(TableError, match="ends in .gz but is not gzip-compressed"):
        read_table(tmp_path / "x.gz")


def test_a_long_unknown_length_grows_the_array(tmp_path, monkeypatch):
    X = np.arange(3000.0).reshape(1000, 3)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(gzip.compress(_csv(X).encode()))))
    np.testing.assert_array_equal(read_table("-", chunk_rows=64).X, X)      # 1024 rows first, no growth needed
    X = np.arange(9000.0).reshape(3000, 3)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_csv(X).encode())))
    np.testing.assert_array_equal(read_table("-", chunk_rows=500).X, X)     # 1024 -> 1536 -> 2304 -> 3456 rows


@pytest.mark.parametrize("name", ["", "Unnamed: 0"])
def test_an_unnamed_leading_column_is_an_index(tmp_path, data, name):
    f = tmp_path / "i.csv"
    f.write_text(_csv(np.c_[np.arange(23.0), data], [name, "a", "b", "c", "d"]))
    t = read_table(f)
    np.testing.assert_array_equal(t.X, data)
    (n,) = t.notices
    assert n.kind == "index" and n.public and "--keep-index" in n.text
    t = read_table(f, keep_index=True)
    assert t.X.shape == (23, 5) and [n.kind for n in t.notices] == ["row numbers"]   # kept: the data say so, privately
    assert read_table(f, columns="a,b").names == ["a", "b"]      # the user chose: nothing left out
    r = tmp_path / "r.csv"
    r.write_text(f"{name},a\nr1,1\nr2,2\n")                        # row names as text (R's write.csv): not parsed
    np.testing.assert_array_equal(read_table(r).X, [[1], [2]])
    # a named first column is not an index, and read_numeric_csv keeps every column
    assert read_numeric_csv(tmp_path / "i.csv")[0].shape == (23, 5)


def test_constant_duplicate_and_row_number_columns_are_curator_notices(tmp_path, data):
    X = np.c_[data[:, 0], np.full(23, 2.5), data[:, 1], data[:, 0], np.arange(1, 24.0)]
    f = tmp_path / "c.csv"
    f.write_text(_csv(X, ["a", "k", "b", "a2", "id"]))
    t = read_table(f)
    assert t.X.shape == (23, 5)                                   # nothing dropped
    got = {n.kind: n for n in t.notices}
    assert set(got) == {"constant", "duplicate", "row numbers"} and not any(n.public for n in t.notices)
    assert got["constant"].columns == ["k"] and got["duplicate"].columns == ["a2"] and got["row numbers"].columns == ["id"]
    for n in t.notices: assert "not private" in n.text and f"--drop {n.columns[0]}" in n.text
    g = tmp_path / "c_no_header.csv"
    g.write_text(_csv(X))                                         # no header: --drop by number
    assert "--drop 2" in next(n.text for n in read_table(g).notices if n.kind == "constant")
    assert read_table(f, check=False).notices == []
    assert read_table(tmp_path / "c.csv", drop="k,a2,id").notices == []


def test_memory_is_the_array_and_a_few_chunks(tmp_path):
    "Deterministic: tracemalloc counts the allocations (numpy's too), not the process's RSS."
    n, p = 20000, 10
    X = np.random.default_rng(0).normal(size=(n, p))
    f = tmp_path / "m.csv"
    f.write_text(_csv(X, [f"c{j}" for j in range(p)]))
    chunk = 1 << 16
    tracemalloc.start()
    try:
        t = read_table(f, chunk_bytes=chunk, check=False)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_array_equal(t.X, X)
    # the array (1.6 MB), its 5% + 16 rows of slack, and per chunk: the lines (bytes and str) and loadtxt's output
    assert peak < 1.2 * X.nbytes + 8 * chunk, (peak, X.nbytes, f.stat().st_size)


def test_the_cli_prints_the_notices_but_never_publishes_them(tmp_path, data, capsys):
    import json
    from dppca_nb.cli import main
    X = np.c_[np.arange(23.0), data, np.ones(23)]
    f = tmp_path / "d.csv"
    f.write_text(_csv(X, ["Unnamed: 0", "a", "b", "c", "d", "k"]))
    out = tmp_path / "comp.csv"
    assert main(["fit", str(f), "--method", "analyze-gauss", "-k", "1", "--epsilon", "1", "--delta", "1e-6",
                 "--radius", "10", "--seed", "0", "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "dppca fit: note: column 1 has no name" in err and "dppca fit: curator-only note: column 'k'" in err
    rec = (tmp_path / "comp.csv.json").read_text()
    assert "one value in every row" not in rec and "say so publicly" not in rec and "has no name" not in rec
    assert "Unnamed: 0" not in rec and '"k"' in rec              # the index left out (the header says so); k kept
    assert main(["fit", str(f), "--method", "analyze-gauss", "-k", "1", "--epsilon", "1", "--delta", "1e-6",
                 "--radius", "10", "--out", str(out), "--force", "--keep-index", "--drop", "k"]) == 0
    err = capsys.readouterr().err
    assert "has no name" not in err and "curator-only note: column 'Unnamed: 0' holds the row numbers (0, 1, ...)" in err
    assert main(["fit", str(f), "--method", "analyze-gauss", "-k", "1", "--epsilon", "1", "--delta", "1e-6",
                 "--radius", "10", "--out", str(out), "--force", "--drop", "k"]) == 0
    assert "note: column 1 has no name" in capsys.readouterr().err   # the same public note: nothing curator-only left
