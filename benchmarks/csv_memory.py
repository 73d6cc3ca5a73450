"""Peak memory of reading a numeric CSV: the CLI's former reader (the whole text, then csv.reader into lists of
strings; copied below) against the chunked reader (dppca_nb.data.tables.read_table), side by side in one run; then a
default AnalyzeGaussPCA fit from the CSV, read eagerly (one float64 array) or lazily (read_table(lazy=True): a Dask
array of byte ranges of the file, each parsed when a pass over the data computes it, in every pass (spill=False) or
once, its float64 rows kept in a temporary binary file that the later passes read (spill=True, as `dppca fit --lazy`
reads)).

Usage: python benchmarks/csv_memory.py [--sizes 200000x20,1000000x20] [--fit-sizes 200000x20,1000000x20] [--out benchmarks/csv_memory.md]

Each read runs in a fresh Python process (OPENBLAS_NUM_THREADS=1) that imports numpy and the reader, reads the file,
checks the array against the one the generator wrote (exactly: 17 significant digits), and reports its peak RSS
(VmHWM of /proc/self/status: resource.getrusage's ru_maxrss would count the parent's RSS, which it inherits across
fork and exec). A process that only imports the same modules gives the baseline, subtracted from
both: what remains is the memory the read itself took, stated as a multiple of the float64 array (n * p * 8 bytes).
The files are N(0, 1) values written with 17 significant digits (about 24 bytes a field). Wall times are reported as
a ratio of the two readers in the same run, not as a claim about any machine.

The fits: AnalyzeGaussPCA(2, random_state=0) with its defaults (private radius, location and mean). *eager*:
read_table(path) (with its column notices, as the command line reads) then fit; *lazy, parsed each pass*:
read_table(path, lazy=True, check=False, spill=False) then fit; *one block at a time*: the same on dask's
synchronous scheduler; *lazy + notices, parsed each pass*: read_table(path, lazy=True, spill=False) (the notices in
one more pass) then fit; *lazy, spilled* and *lazy + notices, spilled*: the same two with spill=True (each block
parsed once; the second is what `dppca fit --lazy` reads). Their baseline process imports the estimators
and dask.array as well. The other lazy fits run on dask's default threaded scheduler (one thread per core; the
number is printed). Memory is stated as a multiple of the array and of one block (its 16 MiB of text, and its rows
as float64); the components and variances of the fits are compared entry by entry with the eager fit's.
"""
from __future__ import annotations
import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

OLD = r'''
import csv, gzip, io, sys
from pathlib import Path
import numpy as np

def _num(x):
    try: return float(x)
    except ValueError: return None

def old_read(path, delimiter=","):
    "The CLI's former reader (_data_text and _read_table), errors left out: the whole text, csv.reader, np.array."
    raw = Path(path).read_bytes()
    if raw[:2] == b"\x1f\x8b": raw = gzip.decompress(raw)
    text = raw.decode("utf-8-sig")
    rows = [r for r in csv.reader(io.StringIO(text, newline=""), delimiter=delimiter) if r and any(x.strip() for x in r)]
    header = None
    if any(_num(x) is None for x in rows[0]): header, rows = [x.strip() for x in rows[0]], rows[1:]
    width = len(header) if header else len(rows[0])
    for i, r in enumerate(rows):
        if len(r) != width: raise ValueError(f"row {i + 1} has {len(r)} fields")
    X = np.array(rows, dtype=np.float64).reshape(len(rows), width)
    if not np.isfinite(X).all(): raise ValueError("not finite")
    return X
'''

CHILD = OLD + r'''
import resource, time, json
from dppca_nb.data.tables import read_table
which, path, ref, out = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4]
if which.startswith("fit") or which == "none-fit":
    import dask.array
    from dppca_nb.estimators import AnalyzeGaussPCA
def peak_kb():
    "VmHWM, this process image's own peak RSS (ru_maxrss would carry over the parent's RSS across fork and exec)."
    try: return next(int(ln.split()[1]) for ln in open("/proc/self/status") if ln.startswith("VmHWM:"))
    except (OSError, StopIteration): return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
X, info = None, {}
if which == "old": X = old_read(path)
elif which == "new": X = read_table(path).X
elif which.startswith("fit"):
    import dask, multiprocessing
    if which == "fit-lazy-1": dask.config.set(scheduler="synchronous")      # one block at a time
    t = read_table(path, lazy=which != "fit-eager", check=which in ("fit-eager", "fit-lazy-check", "fit-spill-check"),
                   spill=which.startswith("fit-spill"))
    info["read_secs"] = time.perf_counter() - t0
    if which != "fit-eager":
        info.update(blocks=len(t.X.chunks[0]), block_rows=max(t.X.chunks[0]),
                    threads=1 if which == "fit-lazy-1" else dask.config.get("num_workers", None) or multiprocessing.cpu_count())
    est = AnalyzeGaussPCA(2, random_state=0).fit(t.X)
    np.save(out, np.c_[est.components_, est.explained_variance_])
secs = time.perf_counter() - t0
peak = peak_kb()                   # before the check, whose memory-mapped reference would count in the RSS
ok = X is None or bool(np.array_equal(X, np.load(ref, mmap_mode="r")))
print(json.dumps({"which": which, "maxrss_kb": peak, "secs": secs, "exact": ok, **info}))
'''


def write_csv(path: Path, n: int, p: int, seed: int = 0, scale=1.0) -> Path:
    "N(0, 1) values times `scale`, 17 significant digits, a header c1..cp; the array saved beside it (.npy) for the check."
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, p)) * scale
    np.save(path.with_suffix(".npy"), X)
    with open(path, "w") as fh:
        fh.write(",".join(f"c{j + 1}" for j in range(p)) + "\n")
        for i in range(0, n, 50000): np.savetxt(fh, X[i:i + 50000], delimiter=",", fmt="%.17g")
    return path.with_suffix(".npy")


def measure(which: str, path: Path, ref: Path, out: Path | None = None) -> dict:
    env = {**os.environ, "OPENBLAS_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)}
    r = subprocess.run([sys.executable, "-c", CHILD, which, str(path), str(ref), str(out)], capture_output=True, text=True, env=env)
    if r.returncode: raise RuntimeError(r.stderr[-2000:])
    return json.loads(r.stdout.strip().splitlines()[-1])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--sizes", default="200000x20,1000000x20")
    ap.add_argument("--fit-sizes", default="200000x20,1000000x20")
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "csv_memory.md"))
    a = ap.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for size in a.sizes.split(","):
            n, p = map(int, size.split("x"))
            f = Path(tmp) / f"X_{n}x{p}.csv"
            ref = write_csv(f, n, p)
            base = measure("none", f, ref)["maxrss_kb"]
            res = {w: measure(w, f, ref) for w in ("old", "new")}
            arr = n * p * 8
            row = dict(n=n, p=p, file_mb=f.stat().st_size / 1e6, array_mb=arr / 1e6, baseline_mb=base * 1024 / 1e6)
            for w, r in res.items():
                assert r["exact"], f"{w} read a different array"
                extra = (r["maxrss_kb"] - base) * 1024
                row[f"{w}_peak_mb"], row[f"{w}_extra_mb"], row[f"{w}_x_array"] = r["maxrss_kb"] * 1024 / 1e6, extra / 1e6, extra / arr
                row[f"{w}_secs"] = r["secs"]
            row["memory_ratio"] = row["old_extra_mb"] / row["new_extra_mb"]
            row["time_ratio"] = row["old_secs"] / row["new_secs"]
            print(json.dumps(row), flush=True)
            rows.append(row)
        fits = [fit_row(Path(tmp), size) for size in a.fit_sizes.split(",") if size]
    write_md(rows, fits, a.out)


def write_md(rows: list, fits: list, out: str) -> None:
    "The markdown report from the rows `main` printed (one JSON object a line: the reads, then the fits)."
    lines = ["# Peak memory of reading a numeric CSV", "",
             "Made by `OPENBLAS_NUM_THREADS=1 python benchmarks/csv_memory.py` (one run; each read in a fresh process; peak",
             "RSS by `/proc/self/status` VmHWM, minus a process that imports the same modules and reads nothing). *old*: the",
             "whole text, `csv.reader` into lists of strings, `np.array`; *new*: `dppca_nb.data.tables.read_table`,",
             "chunks of about 1 MiB parsed into one preallocated float64 array. Both read exactly the array written.", "",
             "| n x p | file (MB) | float64 array (MB) | old: peak - baseline (MB) | old / array | new: peak - baseline (MB) | new / array | old / new memory | old / new time |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['n']:,} x {r['p']} | {r['file_mb']:.0f} | {r['array_mb']:.0f} | {r['old_extra_mb']:.0f} | "
                     f"{r['old_x_array']:.1f}x | {r['new_extra_mb']:.0f} | {r['new_x_array']:.2f}x | {r['memory_ratio']:.1f} | "
                     f"{r['time_ratio']:.2f} |")
    lines += ["", f"Baseline process (numpy and the package imported): {rows[0]['baseline_mb']:.0f} MB.", ""]
    lines += fit_lines(fits)
    Path(out).write_text("\n".join(lines))
    print(f"wrote {out}")


BLOCK = 1 << 24                    # read_table's default block_bytes
FITS = {"fit-eager": "eager", "fit-lazy": "lazy, parsed each pass", "fit-lazy-1": "lazy, parsed each pass, one block at a time",
        "fit-lazy-check": "lazy + notices, parsed each pass", "fit-spill": "lazy, spilled",
        "fit-spill-check": "lazy + notices, spilled"}


def fit_row(tmp: Path, size: str) -> dict:
    "The fits of one size, each in a fresh process: peak memory, times, and how far their components differ."
    n, p = map(int, size.split("x"))
    f = tmp / f"F_{n}x{p}.csv"
    ref = write_csv(f, n, p, scale=np.linspace(3, 0.5, p))     # a spectrum the fit can find
    base = measure("none-fit", f, ref)["maxrss_kb"]
    arr = n * p * 8
    row = dict(n=n, p=p, file_mb=f.stat().st_size / 1e6, array_mb=arr / 1e6, baseline_mb=base * 1024 / 1e6)
    for w in FITS:
        r = measure(w, f, ref, tmp / f"{w}.npy")
        extra = (r["maxrss_kb"] - base) * 1024
        row[w] = dict(r, extra_mb=extra / 1e6, x_array=extra / arr)
        if "block_rows" in r: row[w].update(x_block_text=extra / BLOCK, x_block_array=extra / (r["block_rows"] * p * 8))
    C = {w: np.load(tmp / f"{w}.npy") for w in FITS}
    for w in FITS: row[w]["max_diff"] = float(np.abs(C[w] - C["fit-eager"]).max())
    print(json.dumps(row), flush=True)
    return row


def fit_lines(fits: list) -> list:
    if not fits: return []
    out = ["## Fitting from the CSV: one array, or a Dask array of byte ranges", "",
           "A default `AnalyzeGaussPCA(2, random_state=0)` fit (private radius, location and mean) from the CSV, each in a",
           "fresh process (`OPENBLAS_NUM_THREADS=1`); peak RSS minus a process that imports the estimators and `dask.array`.",
           "The columns are N(0, 1) times 3 down to 0.5. *eager*: `read_table(path)` (one float64 array, with the column",
           "notices) and fit; *lazy, parsed each pass*: `read_table(path, lazy=True, check=False, spill=False)` and fit, on",
           "dask's threaded scheduler; *one block at a time*: the same on dask's synchronous scheduler; *lazy + notices*:",
           "`read_table(path, lazy=True, spill=False)` (the notices in one more pass) and fit, threaded; *spilled*: the same",
           "with `spill=True`: each block parsed once, its float64 rows written to a temporary binary file that the later",
           "passes read a block at a time (*lazy + notices, spilled* is what `dppca fit --lazy` reads). A block is 16 MiB",
           "of the file, parsed in 1 MiB chunks.", "",
           "| n x p | fit | peak - baseline (MB) | / array | / block's text | / block's float64 rows | read (s) | read + fit (s) | time / eager | components, variances: max difference from eager |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in fits:
        e = r["fit-eager"]
        for w, label in FITS.items():
            q = r[w]
            blk = (f"{q['x_block_text']:.2f}x | {q['x_block_array']:.1f}x" if "x_block_text" in q else "- | -")
            diff = "-" if w == "fit-eager" else f"{q['max_diff']:.1e}"
            out.append(f"| {r['n']:,} x {r['p']} | {label} | {q['extra_mb']:.0f} | {q['x_array']:.2f}x | {blk} | "
                       f"{q['read_secs']:.1f} | {q['secs']:.1f} | {q['secs'] / e['secs']:.2f} | {diff} |")
    out.append("")
    for r in fits:
        lz = r["fit-lazy"]
        out += [f"- {r['n']:,} x {r['p']}: file {r['file_mb']:.0f} MB, float64 array {r['array_mb']:.0f} MB, {lz['blocks']} blocks "
                f"of at most {lz['block_rows']:,} rows ({lz['block_rows'] * r['p'] * 8 / 1e6:.1f} MB as float64), {lz['threads']} "
                f"dask threads where threaded; baseline process {r['baseline_mb']:.0f} MB."]
    out += ["", "A lazy read's time is the scan that counts each block's rows (it parses no number). Without the spill the fit",
            "then parses every block once per pass over the data; with it, the first pass parses each block once and writes",
            "its rows (n * p * 8 bytes of temporary disk in all, the size of the float64 array, removed with the array) and",
            "the later passes read them back. The lazy fits' memory is dask's own and a block or two per thread: it hardly",
            "grows with n (compare the two sizes: five times the rows); the eager fit's grows with the array.", ""]
    return out


if __name__ == "__main__":
    main()
