"""The public subsample's size for the coarse location: its factor over `private_location_rows` (4 in
`privacy.grid_releases.fit_subsample_rows`) against the error and the cost of the default fits it serves.

Usage: python benchmarks/location_rows.py [--seeds 3] [--out benchmarks/location_rows.jsonl]
                                          [--report benchmarks/location_rows.md] [--report-only]

A measurement for a later default, not a change of one: the factor is replaced for the duration of each fit
(`factor_of`), the package is left as it is. One BLAS thread. At each factor: AnalyzeGaussPCA and AdaptiveNoisePCA at
their defaults (epsilon 1, delta 1e-4, k = 5) on the anchors' design (n = 1e5, p = 40) and on the reference design at
n = 1e5, p = 100 (AdaptiveNoisePCA's cost design), their mean error over the seeds, and the cost of one default fit
over one X.T @ X (best of interleaved rounds, seed 0). At factor 4 (the package's) the subsample holds 78776 rows at
p = 40 and every row at p = 100.
"""
from __future__ import annotations
import contextlib
import os
import sys
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from defaults import _reference, _interleaved, seeded_main, DELTA  # noqa: E402

FACTORS = (1, 2, 4)
DESIGNS = {"anchors (n 1e5, p 40)": (100_000, 40), "reference (n 1e5, p 100)": (100_000, 100)}
ESTIMATORS = ("AnalyzeGaussPCA", "AdaptiveNoisePCA")


@contextlib.contextmanager
def factor_of(f):
    "The fit's public subsample computed with `f` x private_location_rows in place of 4, for the duration of the block."
    from dppca_nb.privacy import centering as C
    from dppca_nb.privacy import grid_releases as G
    before = C.fit_subsample_rows
    def rows(n, p, *, location_epsilon=None, radius_epsilon=None, quantile=0.5, radius_bounds=None, location_bounds=None):
        need = [G.SUBSAMPLE_ROWS]
        if location_epsilon: need.append(f * G.private_location_rows(location_epsilon, p, n_grid=n, bounds=location_bounds))
        if radius_epsilon: need.append(16 * G.private_radius_rows(radius_epsilon, quantile=quantile, bounds=radius_bounds, p=p))
        return min(int(n), max(need))
    C.fit_subsample_rows = rows
    try: yield rows
    finally: C.fit_subsample_rows = before


def _est(name, seed):
    import dppca_nb.estimators as E
    return getattr(E, name)(5, epsilon=1.0, delta=DELTA, random_state=seed)


POINTS = [(d, f, e) for d in DESIGNS for f in FACTORS for e in ESTIMATORS]
_DATA: dict = {}


def one(dname, f, name, seed) -> dict:
    "The row of one fit: its error, the subsample's rows and (seed 0) its cost over one X.T @ X."
    import warnings
    from dppca_nb.core.linalg import subspace_distance
    n, p = DESIGNS[dname]
    if dname not in _DATA: _DATA[dname] = _reference(n, p=p, k=5)[:2]
    X, V = _DATA[dname]
    with factor_of(f) as rows, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        err = float(subspace_distance(_est(name, seed).fit(X).components_.T, V))
        best = _interleaved([("one X.T @ X", lambda: X.T @ X), ("fit", lambda: _est(name, 0).fit(X))], 3)[0] if seed == 0 else None
    return dict(design=dname, factor=f, estimator=name, seed=seed, error=err,
                subsample_rows=rows(n, p, location_epsilon=0.1, radius_epsilon=0.05),
                ratio=None if best is None else best["fit"] / best["one X.T @ X"])


def _rows(rows) -> list:
    "One row per (design, factor, estimator): the errors over the seeds, their mean and s.d., seed 0's cost."
    out = {}
    for r in rows: out.setdefault((r["design"], r["factor"], r["estimator"]), []).append(r)
    agg = []
    for (d, f, e), v in out.items():
        errs = [x["error"] for x in v]
        agg.append(dict(design=d, factor=f, estimator=e, subsample_rows=v[0]["subsample_rows"], error=float(np.mean(errs)),
                        error_sd=float(np.std(errs, ddof=1)) if len(errs) > 1 else 0.0,
                        ratio=next(x["ratio"] for x in v if x["ratio"] is not None), code=v[0].get("code")))
    return agg


def report(rows) -> str:
    rows = _rows(rows)
    code = sorted({r.get("code") or "?" for r in rows})
    L = ["# The coarse location's public subsample: its factor against error and cost", "",
         f"Produced by `python benchmarks/location_rows.py` (rows in `benchmarks/location_rows.jsonl`; code {', '.join(code)}); "
         "one BLAS thread, 2 shared cores. The defaults of each estimator (epsilon 1, delta 1e-4, k = 5), the factor "
         "over `private_location_rows` replaced for the fit (the package's is 4). Error: mean ± s.d. of "
         "||V_hat V_hat' - V V'||_F over the seeds; cost: one default fit over one X.T @ X, best of 3 interleaved rounds.", "",
         "| design | estimator | factor | subsample rows | error | cost (x one X'X) |", "|---|---|---|---|---|---|"]
    for r in rows:
        L.append(f"| {r['design']} | {r['estimator']} | {r['factor']} | {r['subsample_rows']} | {r['error']:.4f} ± "
                 f"{r['error_sd']:.4f} | {r['ratio']:.2f} |")
    L += ["", "Against the package's factor 4, per design and estimator (error ratio; cost ratio):", ""]
    for d in DESIGNS:
        for e in ESTIMATORS:
            v = {r["factor"]: r for r in rows if r["design"] == d and r["estimator"] == e}
            if 4 not in v: continue
            L.append(f"- {d}, {e}: " + "; ".join(f"factor {f}: error {v[f]['error'] / v[4]['error']:.3f}x, cost "
                                                 f"{v[f]['ratio'] / v[4]['ratio']:.2f}x" for f in FACTORS if f in v and f != 4))
    return "\n".join(L) + "\n"


def main(argv=None):
    seeded_main(argv, doc=__doc__, name="location_rows", points=POINTS, one=one, report=report, seeds=3)


if __name__ == "__main__":
    main()
