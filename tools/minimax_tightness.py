"""Measure the tightness of `minimax_lower_bound`: the best package estimator's mean error / lower, per model, on a grid.

Usage: OPENBLAS_NUM_THREADS=1 python tools/minimax_tightness.py [--out reports/minimax_tightness.csv] [--quick] [--reps 4]

Writes one row per (setting, estimator): the bound, the non-private floor, the private bound alone, the kind of the
reported bound's prior, the measured mean error and its standard error (`reps` runs: parameters drawn from the bound's
prior, fresh rows and fresh noise each) and the random level. The spectrum's `shape` is a column: "two-level" (the top k
eigenvalues equal, the bottom ones equal: the papers' spiked models) or "spread" (anything else); for sparse covariance
"star" (s off-diagonal entries in the hub's row) or "pair" (s = 1: a diagonal plus one symmetric pair). The estimators of
each class are read from the algorithm registry (every worst-case subspace algorithm of the class; an algorithm that
refuses a setting is left out of it, and the exact sampler `pure_dp_subspace` is run only where p k <= 24). Notebook 05_theory/03_minimax reads the file.
"""
import argparse
import csv
import math
import sys
import time
import warnings
from pathlib import Path
import numpy as np

from dppca_nb.theory.minimax import minimax_lower_bound
from dppca_nb.algorithms.registry import algorithms
from dppca_nb.algorithms.sparse_cov import dp_threshold_covariance
from dppca_nb.algorithms.local_sparse import local_sparse_pca
from dppca_nb.data.datasets import sample_gaussian
from dppca_nb.core.linalg import subspace_distance, random_subspace_level
from dppca_nb.core.validation import normalize_rows

warnings.simplefilter("ignore")
DELTA = 1e-5


def estimators(model):
    """Every registered worst-case subspace algorithm of a privacy class, as f(X, k, epsilon, delta, random_state); for the
    local class also Algorithm 1 on spatial signs (each user normalises her record first)."""
    pure = model.endswith("_pure")
    out = {}
    for a in algorithms().values():
        if a.output != "subspace" or not a.worst_case or a.model != model.removesuffix("_pure"): continue
        if (a.measure == "pure") != pure and not a.measure.startswith("pure when"): continue
        out[a.key] = lambda X, k, e, d, random_state=None, a=a: a.run(X, k, e, d, random_state=random_state, **a.quick).value
    if model == "local":
        f = out["local_gaussian_pca"]
        out["local_gaussian_pca_on_signs"] = lambda X, k, e, d, random_state=None: f(normalize_rows(X), k, e, d, random_state)
    return out


def shape_of(lam, k):
    "'two-level' if the top k eigenvalues are equal and the rest are equal, 'spread' otherwise."
    lam = np.sort(np.asarray(lam, float))[::-1]
    return "two-level" if np.ptp(lam[:k]) <= 1e-12 * lam[0] and np.ptp(lam[k:]) <= 1e-12 * lam[0] else "spread"


def spectra(p, k):
    """Two-level: Wang & Xu's spiked covariance (lam = 1, 4; trace <= 0.2) and a balanced spectrum of trace 0.9. Spread:
    geometric decay (ratio 0.8) and linear steps (the top from 2 to 1, the bottom from 0.5 to 0.1, relative), trace 0.9."""
    out = {}
    for lam in (1.0, 4.0):
        c = 1 / (5 * p * (lam + 1))
        out[f"spiked{lam:g}"] = np.array([c * (lam + 1)] * k + [c] * (p - k))
    out["balanced"] = np.array([0.45 / k] * k + [0.45 / (p - k)] * (p - k))
    g = 0.8 ** np.arange(p)
    out["geometric"] = 0.9 * g / g.sum()
    st = np.r_[np.linspace(2.0, 1.0, k), np.linspace(0.5, 0.1, p - k)]
    out["steps"] = 0.9 * st / st.sum()
    return out


def wide_spectra():
    "p = 100, k = 2 with 98 bottom eigenvalues at 0.002: the top (0.02, 0.015) (spread) or (0.02, 0.02) (two-level)."
    return {"wide": np.array([0.02, 0.015] + [0.002] * 98), "wide-two-level": np.array([0.02, 0.02] + [0.002] * 98)}


def run_subspace(model, ests, p, k, spec, lam, eps, n, reps, rows, s=None):
    delta = 0.0 if model.endswith("_pure") else DELTA
    kw = dict(s=s, privacy="local") if model == "sparse" else {}
    m = minimax_lower_bound(model, n=n, p=p, k=k, epsilon=eps, delta=delta, eigenvalues=lam, **kw)
    level = random_subspace_level(p, k)
    for name, f in ests.items():
        if name == "pure_dp_subspace" and p * k > 24: continue     # its exact sampler's acceptance rate vanishes beyond
        errs = []
        try:
            for r in range(reps):
                S, V = m.draw(r)
                X = sample_gaussian(S, n, random_state=1000 + r)
                errs.append(subspace_distance(f(X, k, eps, delta, random_state=r), V))
        except (ValueError, RuntimeError) as exc:   # a planner that refuses the setting, or an exact sampler that gives up
            print(f"  {name} refuses p={p} k={k}: {str(exc)[:80]}", file=sys.stderr)
            continue
        rows.append(dict(model=model, p=p, k=k, spectrum=spec, shape=shape_of(lam, k), s=s or "", epsilon=eps, delta=delta, n=n,
                         lower=m.lower, floor=m.statistical, privacy=m.privacy, prior=m.prior.kind, estimator=name,
                         mean=float(np.mean(errs)), se=float(np.std(errs, ddof=1) / math.sqrt(reps)), random_level=level))


def run_covariance(p, s, base, spec, eps, n, reps, rows):
    m = minimax_lower_bound("sparse_covariance", n=n, p=p, epsilon=eps, delta=DELTA, eigenvalues=base, s=s)
    errs = []
    for r in range(reps):
        S, _ = m.draw(r)
        errs.append(np.linalg.norm(dp_threshold_covariance(sample_gaussian(S, n, random_state=1000 + r), eps, DELTA, random_state=r) - S, 2))
    rows.append(dict(model="sparse_covariance", p=p, k="", spectrum=spec, shape="pair" if s == 1 else "star", s=s, epsilon=eps,
                     delta=DELTA, n=n, lower=m.lower, floor=m.statistical, privacy=m.privacy, prior=m.prior.kind,
                     estimator="dp_threshold_covariance", mean=float(np.mean(errs)), se=float(np.std(errs, ddof=1) / math.sqrt(reps)),
                     random_level=float(np.linalg.norm(np.diag(base), 2))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="reports/minimax_tightness.csv")
    ap.add_argument("--quick", action="store_true", help="a small grid (minutes)")
    ap.add_argument("--reps", type=int, default=4)
    a = ap.parse_args(argv)
    shapes = [(10, 2)] if a.quick else [(10, 2), (20, 3), (40, 5)]
    epss = (0.5, 2.0)
    ests = {mdl: estimators(mdl) for mdl in ("central", "central_pure", "local")}
    rows, t0 = [], time.time()
    for p, k in shapes:
        for spec, lam in spectra(p, k).items():
            for eps in epss:
                for n in ((2_000, 20_000) if a.quick else (2_000, 6_000, 20_000, 60_000, 200_000)):
                    run_subspace("central", ests["central"], p, k, spec, lam, eps, n, a.reps, rows)
                    run_subspace("central_pure", ests["central_pure"], p, k, spec, lam, eps, n, a.reps, rows)
                for n in ((300_000,) if a.quick else (100_000, 300_000, 1_000_000)):
                    if p * n <= 2e7: run_subspace("local", ests["local"], p, k, spec, lam, eps, n, a.reps, rows)
            print(f"{p} {k} {spec} done, {len(rows)} rows, {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    for spec, lam in wide_spectra().items():               # where every central algorithm sits at the random level
        for n in (2_000, 10_000):
            for eps in ((0.1, 0.3) if a.quick else (0.05, 0.1, 0.3, 1.0)):
                run_subspace("central", ests["central"], 100, 2, spec, lam, eps, n, a.reps, rows)
                run_subspace("central_pure", ests["central_pure"], 100, 2, spec, lam, eps, n, a.reps, rows)
        print(f"100 2 {spec} done, {len(rows)} rows, {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    for p, s in (((20, 4),) if a.quick else ((20, 4), (40, 8))):
        lam = np.array([0.6 / p * 5] + [0.6 / p] * (p - 1))
        for eps in epss:
            for n in ((200_000,) if a.quick else (20_000, 200_000, 1_000_000)):
                run_subspace("sparse", {"local_sparse_pca": local_sparse_pca}, p, 1, "spiked4", lam, eps, n, a.reps, rows, s)
    cov = ((20, 2), (20, 1)) if a.quick else ((20, 2), (20, 5), (40, 5), (20, 1), (40, 1))
    for p, s in cov:
        for spec, base in (("flat0.5", np.full(p, 0.5 / p)), ("flat0.05", np.full(p, 0.05 / p))):
            if spec == "flat0.05" and s > 1: continue
            for eps in epss:
                for n in ((100_000,) if a.quick else (10_000, 100_000, 1_000_000)):
                    run_covariance(p, s, base, spec, eps, n, a.reps, rows)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows: w.writerow({key: (f"{v:.6g}" if isinstance(v, float) else v) for key, v in r.items()})
    print(f"wrote {len(rows)} rows to {a.out} in {time.time() - t0:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
