"""The lazy CSV reader (read_table(..., lazy=True)): a Dask array of byte ranges of the file that computes to the
eager reader's array, with its errors, notices and column choices, whatever the block size; the blocks' row counts
found by the byte scan; the files it refuses; memory bounded by a block; a fit on it that equals the eager fit; and
the spill (spill=True): each block parsed once, under two threads too, its errors raised as before, its
temporary file removed with the array."""
import gc
import os
import subprocess
import sys
import tempfile
import threading
import time
import tracemalloc

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
import dppca_nb.data.tables as tables                                # noqa: E402
from dppca_nb.data.tables import TableError, _scan, read_table   # noqa: E402

BLOCKS = [1, 7, 40, 1 << 25]          # one record per block, boundaries inside records and quotes, one block


def _csv(X, header=None, eol="\n", last=True):
    rows = [",".join(repr(float(v)) for v in r) for r in X]
    return (eol.join(([",".join(header)] if header else []) + rows) + (eol if last else "")).encode()


def same(f, block_bytes, **kw):
    "The lazy table equals the eager one: values (exactly), names, header flag and notices; returns the lazy table."
    e, lz = read_table(f, **kw), read_table(f, lazy=True, block_bytes=block_bytes, **kw)
    assert isinstance(lz.X, da.Array) and lz.X.shape == e.X.shape         # the shape is known before computing
    np.testing.assert_array_equal(lz.X.compute(scheduler="synchronous"), e.X)
    sp = read_table(f, lazy=True, block_bytes=block_bytes, spill=True, **kw).X
    for _ in range(2): np.testing.assert_array_equal(sp.compute(scheduler="synchronous"), e.X)    # parsed, read back
    assert (lz.names, lz.has_header) == (e.names, e.has_header)
    assert [(n.kind, n.columns, n.text, n.public) for n in lz.notices] == [(n.kind, n.columns, n.text, n.public) for n in e.notices]
    return lz


@pytest.fixture
def data():
    return np.random.default_rng(5).normal(size=(31, 4))


@pytest.mark.parametrize("block_bytes", BLOCKS)
@pytest.mark.parametrize("eol,last,bom", [("\n", True, False), ("\r\n", True, False), ("\n", False, True), ("\r\n", False, False)])
def test_the_lazy_array_is_the_eager_one(tmp_path, data, block_bytes, eol, last, bom):
    f = tmp_path / "a.csv"
    for header in (["a", "b", "c", "d"], None):
        f.write_bytes((b"\xef\xbb\xbf" if bom else b"") + _csv(data, header, eol, last))
        lz = same(f, block_bytes)
        same(f, block_bytes, columns="4,2")
        same(f, block_bytes, drop="1", chunk_bytes=30)            # chunks inside a block too
    if block_bytes == 1: assert lz.X.numblocks[0] == len(data)     # a block per record: every boundary is a line break


@pytest.mark.parametrize("block_bytes", BLOCKS)
def test_quotes_blank_records_and_an_index_column(tmp_path, block_bytes):
    f = tmp_path / "q.csv"
    # quoted fields, a quoted line break inside a field (block cuts land inside it), blank lines and blank records
    f.write_bytes(b'"", "b","c"\n0,"1",2\n\n1,"3\n",4\r\n , ,""\n2,5,"6"\n\n3,"7\n\n",8\n4,9,10')
    t = same(f, block_bytes)
    np.testing.assert_array_equal(t.X.compute(), [[1, 2], [3, 4], [5, 6], [7, 8], [9, 10]])
    assert [n.kind for n in t.notices] == ["index"]                # the unnamed first column left out, publicly
    same(f, block_bytes, keep_index=True)                          # kept: it holds the row numbers (curator-only)


def test_the_scan_counts_the_records_the_parser_keeps(tmp_path):
    "Blocks end after a line break outside quotes; blank records (spaces, delimiters, quotes) are not counted."
    import io
    text = b'a,b\n1,2\n\n"3\n",4\n , \n5,6'
    assert _scan(io.BytesIO(text), 4, ",", 6) == [(4, 16, 2), (16, 23, 1)]       # the cut skips the quoted break
    assert _scan(io.BytesIO(text), 4, ",", 1) == [(4, 8, 1), (8, 9, 0), (9, 16, 1), (16, 20, 0), (20, 23, 1)]
    big = b"".join(b'%d,"x\n\ny"\n' % i for i in range(3000))                    # quotes across the scan's 1 MiB pieces
    assert sum(r for *_, r in _scan(io.BytesIO(big), 0, ",", 1 << 12, piece=997)) == 3000


def test_the_scan_agrees_with_the_csv_module_on_random_files():
    """Random well-formed CSV text (quoted fields holding delimiters, quotes, line breaks; blank records; CRLF): each
    block ends where a record ends, and holds the non-blank records the csv module reads from its bytes."""
    import csv
    import io
    rng = np.random.default_rng(0)
    def field():
        if rng.random() < 0.3: return '"' + "".join(rng.choice(list('1 ,\n') + ['""', '\r\n'], size=rng.integers(0, 4))) + '"'
        return "".join(rng.choice(list("1 2"), size=rng.integers(0, 3)))
    def count(b): return sum(1 for r in csv.reader(io.StringIO(b.decode(), newline="")) if r and any(x.strip() for x in r))
    for _ in range(300):
        recs = [",".join(field() for _ in range(rng.integers(1, 4))) for _ in range(rng.integers(0, 6))]
        eol = str(rng.choice(["\n", "\r\n"]))
        text = (eol.join(recs) + (eol if rng.random() < .5 else "")).encode()
        for piece in (1, 5, 1 << 20):
            for block_bytes in (1, 4, 100):
                got = _scan(io.BytesIO(text), 0, ",", block_bytes, piece=piece)
                assert [b for b, *_ in got[1:]] == [e for _, e, _ in got[:-1]] and (not text or got[-1][1] == len(text))
                assert all(r == count(text[b:e]) for b, e, r in got), (text, piece, block_bytes, got)


@pytest.mark.parametrize("block_bytes", [1, 9, 1 << 25])
def test_errors_name_the_row_counted_across_blocks(tmp_path, block_bytes):
    body = "".join(f"{i},{i + 1}\n" for i in range(20))
    f = tmp_path / "e.csv"
    cases = [("u,v\n" + body + "5,abc\n", {}, r"^DATA row 21, column 'v': 'abc' is not a number"),
             ("u,v\n" + body + "5\n", {"columns": "u"}, r"^DATA row 21 has 1 fields, expected 2"),
             (body + "nan,1\n", {}, r"^DATA row 21, column 1: 'nan' is not a finite number"),
             ("u,v\n" + body[:41] + '"7\n",x\n' + body[41:], {}, r"^DATA row 11, column 'v': 'x' is not a number")]
    for text, kw, msg in cases:
        f.write_text(text)
        with pytest.raises(TableError, match=msg) as eager: read_table(f, **kw)
        X = read_table(f, lazy=True, block_bytes=block_bytes, check=False, **kw).X
        with pytest.raises(TableError) as lazy: X.compute(scheduler="synchronous")   # raised when the block is parsed
        assert str(lazy.value) == str(eager.value)
    f.write_bytes(b"u,v\n" + body.encode() * 30 + b"3,\xff\n")       # past the lines the header's check decodes
    with pytest.raises(TableError, match=rf"is not UTF-8 text \(byte {4 + 30 * len(body) + 2}\)"):
        read_table(f, lazy=True, block_bytes=block_bytes, check=False).X.compute()
    f.write_text("u,v\n")
    with pytest.raises(TableError, match="has a header but no data rows"): read_table(f, lazy=True)


def test_what_the_lazy_reader_refuses(tmp_path, data, monkeypatch):
    import gzip
    import io
    import sys
    (tmp_path / "a.csv.gz").write_bytes(gzip.compress(_csv(data)))
    with pytest.raises(TableError, match=r"^DATA: .*a.csv.gz is gzip-compressed, and lazy=True reads byte ranges"):
        read_table(tmp_path / "a.csv.gz", lazy=True)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(_csv(data))))
    with pytest.raises(TableError, match=r"standard input \('-'\) has none"): read_table("-", lazy=True)
    f = tmp_path / "cr.csv"
    f.write_bytes(_csv(data, eol="\r"))                            # old Mac line breaks: refused by both readers
    with pytest.raises(TableError, match=r"lone carriage returns \('\\r'\): convert them"): read_table(f)
    with pytest.raises(TableError, match=r"lone carriage returns \('\\r'\): convert them"): read_table(f, lazy=True)
    f.write_bytes(_csv(data) * 9 + b"1,2,3,4\r" + _csv(data))        # past the header's lines: the scan refuses it
    with pytest.raises(TableError, match=r"a line break of a lone carriage return \('\\r'\)"): read_table(f, lazy=True)
    with pytest.raises(ValueError, match="block_bytes: expected a positive integer"): read_table(f, lazy=True, block_bytes=0)
    g = tmp_path / "g.csv"
    g.write_bytes(_csv(data))
    X = read_table(g, lazy=True, check=False).X
    g.write_bytes(_csv(data[:-1]))                                 # the file changed between the scan and the parse
    with pytest.raises(TableError, match="changed after it was opened lazily"): X.compute()


@pytest.mark.parametrize("block_bytes", [100, 1 << 25])
def test_notices_from_block_summaries(tmp_path, block_bytes):
    "Constant, duplicate and row-number columns, decided across blocks: a difference in the last block counts."
    n = 60
    z = np.random.default_rng(0).normal(size=n)
    X = np.c_[z, np.full(n, 2.5), z, np.arange(n), z, np.arange(1.0, n + 1), np.full(n, 2.5)]
    X[-1, 4] += 1                                                  # not a duplicate, but only the last row says so
    X[-1, 6] = 3                                                   # not constant
    f = tmp_path / "n.csv"
    f.write_bytes(_csv(X, ["a", "k", "a2", "i0", "z", "i1", "k2"]))
    t = same(f, block_bytes)
    assert {n.kind: n.columns for n in t.notices} == {"constant": ["k"], "duplicate": ["a2"], "row numbers": ["i0", "i1"]}


def test_a_block_is_parsed_at_a_time(tmp_path):
    "tracemalloc (deterministic, numpy's allocations too): a reduction over the lazy array never holds the array."
    n, p = 20000, 10
    X = np.random.default_rng(1).normal(size=(n, p))
    f = tmp_path / "m.csv"
    f.write_bytes(_csv(X, [f"c{j}" for j in range(p)]))
    block = 1 << 16                                                # about 2,700 rows, 0.2 MB as float64, per block
    t = read_table(f, lazy=True, block_bytes=block, chunk_bytes=1 << 14, check=False)
    assert t.X.numblocks[0] == -(-f.stat().st_size // block) and max(t.X.chunks[0]) * p * 8 < 0.15 * X.nbytes
    tracemalloc.start()
    try:
        s = t.X.sum(axis=0).compute(scheduler="synchronous")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    np.testing.assert_allclose(s, X.sum(axis=0), rtol=1e-12)     # summed in another order: rounding only
    # one block's array and text (the bytes, their lines and str copies) and the graph: far below the array (1.6 MB)
    assert peak < 0.5 * X.nbytes, (peak, X.nbytes)


@pytest.mark.filterwarnings("ignore::UserWarning")       # a small table's UtilityWarning: not what is tested here
@pytest.mark.parametrize("name", ["AnalyzeGaussPCA", "SmoothSensitivityPCA"])
def test_a_fit_on_the_lazy_table_equals_the_eager_fit(tmp_path, name):
    import dppca_nb.estimators as est
    X = np.random.default_rng(2).normal(size=(4000, 5)) * [3, 2, 1, 1, 0.5]
    f = tmp_path / "fit.csv"
    f.write_bytes(_csv(X, list("abcde")))
    E = getattr(est, name)
    a = E(2, random_state=0).fit(read_table(f).X)
    b = E(2, random_state=0).fit(read_table(f, lazy=True, block_bytes=1 << 16).X)   # 6 blocks
    # the same noise draws; the sums differ only in the order the row blocks are added (relative rounding about
    # n * 2^-53 ~ 1e-12 of each entry), which moves the components by that over the eigengap (O(1) here)
    np.testing.assert_allclose(b.components_, a.components_, atol=1e-9)
    np.testing.assert_allclose(b.explained_variance_, a.explained_variance_, rtol=1e-9)
    c = E(2, random_state=0).fit(read_table(f, lazy=True, block_bytes=1 << 16, spill=True).X)
    np.testing.assert_array_equal(c.components_, b.components_)   # spilled: the same values, the same sums
    np.testing.assert_array_equal(c.explained_variance_, b.explained_variance_)


@pytest.fixture
def parses(monkeypatch):
    "The first rows of the blocks `_read_block` parsed, in call order (it is counted, then parses as before)."
    calls, parse = [], tables._read_block
    def counted(*a, **kw): calls.append(a[5]); return parse(*a, **kw)
    monkeypatch.setattr(tables, "_read_block", counted)
    return calls


@pytest.fixture
def spill_dir(tmp_path, monkeypatch):
    "The folder the spill's temporary folders go to (tempfile's own default, pointed here)."
    d = tmp_path / "spill"
    d.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(d))
    return d


def test_a_spilled_block_is_parsed_once(tmp_path, data, parses):
    f = tmp_path / "s.csv"
    f.write_bytes(_csv(np.tile(data, (40, 1)), list("abcd")))
    e = read_table(f).X
    X = read_table(f, lazy=True, block_bytes=1 << 12, check=False, spill=True).X
    assert X.numblocks[0] > 3 and parses == []                     # nothing parsed before a compute
    for scheduler in ("threads", "synchronous", "threads"):
        A = X.compute(scheduler=scheduler)
        assert A.dtype == np.float64 and A.tobytes() == e.tobytes()   # bit for bit
    assert sorted(parses) == sorted(set(parses)) and len(parses) == X.numblocks[0]
    parses.clear()
    Y = read_table(f, lazy=True, block_bytes=1 << 12, check=False).X
    Y.compute(); Y.compute()
    assert len(parses) == 2 * Y.numblocks[0]                       # without it (the default): every block, every pass


@pytest.mark.parametrize("block_bytes", [9, 1 << 25])
def test_a_bad_field_raises_the_same_error_spilled(tmp_path, block_bytes, spill_dir):
    f = tmp_path / "e.csv"
    f.write_text("u,v\n" + "".join(f"{i},{i + 1}\n" for i in range(20)) + "5,abc\n")
    with pytest.raises(TableError) as eager: read_table(f)
    X = read_table(f, lazy=True, block_bytes=block_bytes, check=False, spill=True).X
    for _ in range(2):                                             # a block that failed is parsed (and fails) again
        with pytest.raises(TableError) as lazy: X.compute(scheduler="threads")
        assert str(lazy.value) == str(eager.value)
    assert str(eager.value).startswith("DATA row 21, column 'v': 'abc' is not a number")
    with pytest.raises(TableError) as checked: read_table(f, lazy=True, block_bytes=block_bytes, spill=True)   # notices
    assert str(checked.value) == str(eager.value)


def test_two_threads_ask_for_the_same_block(tmp_path, data, monkeypatch):
    "Four threads compute the array at once; a slow parse makes them meet on each block: each is parsed once."
    f = tmp_path / "t.csv"
    f.write_bytes(_csv(np.tile(data, (20, 1))))
    calls, parse = [], tables._read_block
    def slow(*a):
        calls.append(a[5]); time.sleep(0.05); return parse(*a)
    monkeypatch.setattr(tables, "_read_block", slow)
    X = read_table(f, lazy=True, block_bytes=1 << 12, check=False, spill=True).X
    go, out = threading.Barrier(4), [None] * 4
    def run(i):
        go.wait(); out[i] = X.compute(scheduler="threads", num_workers=2)
    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads: t.start()
    for t in threads: t.join()
    e = read_table(f).X
    assert all(o is not None and o.tobytes() == e.tobytes() for o in out)
    assert sorted(calls) == sorted(set(calls)) and len(calls) == X.numblocks[0]


def test_the_temporary_files_are_removed(tmp_path, data, spill_dir):
    f = tmp_path / "r.csv"
    f.write_bytes(_csv(data))
    t = read_table(f, lazy=True, block_bytes=100, check=False, spill=True)
    assert os.listdir(spill_dir) == []                             # made at the first parse, not before
    s = t.X.sum(axis=0)
    t.X.compute()
    (d,) = os.listdir(spill_dir)
    assert os.listdir(spill_dir / d) == ["rows.f64"] and (spill_dir / d / "rows.f64").stat().st_size == data.nbytes
    del t
    gc.collect()
    assert os.listdir(spill_dir) == [d]                            # an array made from it still reads it
    np.testing.assert_allclose(s.compute(), data.sum(axis=0), rtol=1e-12)
    del s
    gc.collect()
    assert os.listdir(spill_dir) == []                             # gone with the last array
    code = ("import sys, tempfile; tempfile.tempdir = sys.argv[2]; from dppca_nb.data.tables import read_table; "
            "X = read_table(sys.argv[1], lazy=True, block_bytes=100, spill=True).X; X.compute(); import os; print(os.listdir(sys.argv[2]))")
    r = subprocess.run([sys.executable, "-c", code, str(f), str(spill_dir)], capture_output=True, text=True,
                       env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)})
    assert r.returncode == 0 and r.stdout.startswith("['dppca-table-"), r.stderr
    assert os.listdir(spill_dir) == []                             # held to the end: removed at exit


def test_where_the_disk_refuses_every_pass_parses(tmp_path, data, parses, monkeypatch):
    import pickle
    f = tmp_path / "d.csv"
    f.write_bytes(_csv(data))
    def full(*a, **kw): raise OSError(28, "No space left on device")
    with monkeypatch.context() as m:
        m.setattr(tempfile, "mkdtemp", full)
        X = read_table(f, lazy=True, block_bytes=100, check=False, spill=True).X
        with pytest.warns(RuntimeWarning, match=r"cannot keep the parsed blocks in a temporary file \(.*No space left"):
            np.testing.assert_array_equal(X.compute(), data)
        np.testing.assert_array_equal(X.compute(), data)
    assert len(parses) == 2 * X.numblocks[0]
    parses.clear()
    Y = pickle.loads(pickle.dumps(read_table(f, lazy=True, block_bytes=100, check=False, spill=True).X))   # another process's copy
    np.testing.assert_array_equal(Y.compute(), data)
    np.testing.assert_array_equal(Y.compute(), data)
    assert len(parses) == 2 * Y.numblocks[0]                       # parses each time: the file lives in this process


def test_a_kept_block_is_not_parsed_again_when_the_file_changes(tmp_path, data):
    "The blocks read in the first pass come back as read; a block not yet parsed still refuses the changed file."
    f = tmp_path / "c.csv"
    f.write_bytes(_csv(data))
    X = read_table(f, lazy=True, block_bytes=100, check=False, spill=True).X
    first = X[:5].compute()
    f.write_bytes(_csv(data[:-1]))
    np.testing.assert_array_equal(X[:5].compute(), first)
    with pytest.raises(TableError, match="changed after it was opened lazily"): X.compute()
