"""`dppca fit` on four real tables, every method: how far each release lands from the non-private PCA.

Usage: python tools/real_tables.py [--out reports/real_tables.csv] [--seeds 3] [--epsilons 1,10]

The tables are scikit-learn's bundled iris, wine, breast cancer and diabetes (`sklearn.datasets.load_*`, no download),
written to CSV files with a header, with public bounds of every column: for iris, wine and breast cancer each column's
minimum and maximum as the dataset's documentation (`DESCR`) publishes them; diabetes's documentation says each column
is centered and scaled to a sum of squares of 1 (standard deviation 1/sqrt(n)), and we declare 5 of those on either
side of 0. Each method runs as a user runs it (`dppca fit TABLE.csv --method M -k 2 --epsilon E [--delta 1e-5]
--bounds TABLE_bounds.csv --scale S --seed SEED`), with `--scale none` and `--scale private`. For each run the CSV
holds:

- measured: ||P_hat - P||_F between the printed components and scikit-learn's PCA of the table (centered; with
  `--scale private`, standardized): the PCA the user would get without privacy;
- random: the same distance for a random k-dimensional subspace, sqrt(2k(1 - k/p));
- share_of_random: measured / random; noise: 1 where measured >= 0.7 x random (the estimators' utility level);
- measured_own: the distance to the method's own non-private target, where it is not PCA: g-dppca's is the top-k
  eigenvectors of the table's Kendall's tau (what its expected error predicts); else the same as measured;
- expected: the expected error `fit` printed (blank where it printed none); warned: 1 where it printed a
  UtilityWarning; refused: fit's error where it refused to run.
"""
import argparse
import contextlib
import csv
import io
import json
import os
import re
import sys
import tempfile
import time
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

TABLES = ("iris", "wine", "breast_cancer", "diabetes")
FIELDS = ("table", "n", "p", "method", "scale", "epsilon", "seed", "measured", "measured_own", "random",
          "share_of_random", "noise", "expected", "warned", "seconds", "refused")


def documented_bounds(d, p):
    "Each column's (min, max) from the summary statistics of a scikit-learn dataset's DESCR (its first p rows)."
    text = d.DESCR[d.DESCR.index("Summary Statistics"):]
    rows = re.findall(r"^\s*[^:=\n]+:\s+(-?[\d.]+)\s+(-?[\d.]+)", text, flags=re.M)[:p]
    assert len(rows) == p, d.DESCR[:80]
    return np.array(rows, dtype=np.float64).T


def write_tables(folder: Path) -> dict:
    "Each table and its public bounds as CSV files with a header in `folder`; returns {name: X}."
    from sklearn import datasets
    out = {}
    for name in TABLES:
        d = getattr(datasets, f"load_{name}")()
        X = d.data
        n, p = X.shape
        cols = [re.sub(r"\W+", "_", c).strip("_") for c in d.feature_names]
        B = np.full((2, p), 5 / np.sqrt(n)) * [[-1], [1]] if name == "diabetes" else documented_bounds(d, p)
        for what, M in (("", X), ("_bounds", B)):
            np.savetxt(folder / f"{name}{what}.csv", M, delimiter=",", header=",".join(cols), comments="", fmt="%.17g")
        out[name] = X
    return out


def run_main(*args):
    "dppca's main(args) in this process: (exit status, stdout, stderr)."
    from dppca_nb.cli import main
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main([str(a) for a in args])
    return rc, o.getvalue(), e.getvalue()


def one_run(folder: Path, X, name: str, method: str, scale: str, eps: float, seed: int, k: int = 2) -> dict:
    "One `dppca fit` on a table: its row of the report."
    from sklearn.decomposition import PCA
    from sklearn.preprocessing import StandardScaler
    from dppca_nb.cli import get_method
    from dppca_nb.core.linalg import subspace_distance, random_subspace_level
    n, p = X.shape
    alg = get_method(method)
    out = folder / f"c_{os.getpid()}.csv"
    args = ["fit", folder / f"{name}.csv", "--method", method, "-k", k, "--epsilon", eps, "--seed", seed, "--out", out,
            "--force", "--bounds", folder / f"{name}_bounds.csv", "--scale", scale]
    if alg.measure != "pure" or scale == "private": args += ["--delta", "1e-5"]
    t0 = time.perf_counter()
    rc, _, err = run_main(*args)
    row = dict(table=name, n=n, p=p, method=method, scale=scale, epsilon=eps, seed=seed,
               random=round(random_subspace_level(p, k), 4), seconds=round(time.perf_counter() - t0, 2))
    if rc:
        return dict(row, refused=err.strip().splitlines()[-1].split("error: ", 1)[-1])
    rec = json.loads(Path(str(out) + ".json").read_text())
    ref = PCA(k).fit(StandardScaler().fit_transform(X) if scale == "private" else X).components_.T
    V = np.array(rec["released"]["components"]).T
    measured, own = subspace_distance(V, ref), None
    if alg.key == "g_dppca":
        from dppca_nb.algorithms.kendall import kendall_tau
        from dppca_nb.core.linalg import top_k_eigvecs
        own = subspace_distance(V, top_k_eigvecs(kendall_tau(StandardScaler().fit_transform(X) if scale == "private"
                                                             else X), k))
    e = rec["released"].get("expected_error")
    return dict(row, measured=round(measured, 4), measured_own=round(measured if own is None else own, 4),
                share_of_random=round(measured / row["random"], 3),
                noise=int(measured >= 0.7 * row["random"]), expected="" if e is None else round(float(e), 4),
                warned=int(any(w.startswith("UtilityWarning") for w in rec["released"]["warnings"])))


def real_tables(epsilons=(1.0, 10.0), seeds=(0, 1, 2), scales=("none", "private"), methods=None, log=None) -> list:
    "Every method on every table, at each epsilon, scale and seed: the report's rows."
    from dppca_nb.algorithms.registry import algorithms
    from dppca_nb.cli import method_name
    methods = methods or [method_name(a) for a in algorithms().values()]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        tables = write_tables(folder)
        for name, X in tables.items():
            for m in methods:
                for scale in scales:
                    for eps in epsilons:
                        for seed in seeds:
                            rows.append(one_run(folder, X, name, m, scale, eps, seed))
                            if log: log(rows[-1])
    return rows


def summary(rows, scale="private") -> str:
    "Per method, at `scale`: runs, noise runs, warned, warned where noise, expected errors printed, within 2x of measured_own."
    lines = [f"{'method':24s} runs noise warned both expected within_2x"]
    for m in dict.fromkeys(r["method"] for r in rows):
        rs = [r for r in rows if r["method"] == m and r["scale"] == scale and not r.get("refused")]
        noise, warned = [str(r["noise"]) == "1" for r in rs], [str(r["warned"]) == "1" for r in rs]
        ex = [r for r in rs if r["expected"] not in ("", None)]
        close = sum(0.5 <= float(r["expected"]) / max(float(r["measured_own"]), 1e-12) <= 2 for r in ex)
        lines.append(f"{m:24s} {len(rs):4d} {sum(noise):5d} {sum(warned):6d} {sum(a and b for a, b in zip(noise, warned)):4d} "
                     f"{len(ex):8d} {close:9d}")
    return "\n".join(lines)


def _num(x):
    return f"{x:g}" if isinstance(x, float) else x


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="reports/real_tables.csv")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--epsilons", default="1,10")
    ap.add_argument("--methods", default=None, help="comma-separated methods (default: every registered one)")
    ap.add_argument("--summary", action="store_true", help="print the summary of the CSV at --out, and run nothing")
    a = ap.parse_args(argv)
    if a.summary:
        print(summary(list(csv.DictReader(open(a.out)))))
        return
    log = lambda r: print(f"{r['table']:14s} {r['method']:24s} {r['scale']:8s} eps {r['epsilon']:<4g} seed {r['seed']}: "
                          + (f"refused ({r['refused'][:60]})" if "refused" in r else
                             f"{r['measured']:.3f} of random {r['random']:.3f} ({r['seconds']} s)"), file=sys.stderr)
    rows = real_tables(tuple(float(e) for e in a.epsilons.split(",")), tuple(range(a.seeds)),
                       methods=a.methods.split(",") if a.methods else None, log=log)
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "w", newline="") as fh:
        w = csv.DictWriter(fh, FIELDS, lineterminator="\n")
        w.writeheader()
        for r in rows: w.writerow({f: _num(r.get(f, "")) for f in FIELDS})
    print(f"wrote {out}: {len(rows)} runs")
    print(summary([{f: str(_num(r.get(f, ""))) for f in FIELDS} for r in rows]))


if __name__ == "__main__":
    main()
