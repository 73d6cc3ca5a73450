"""Measure the tightness of `minimax_lower_bound`: the best package estimator's mean error / lower, per model, on a grid.

Usage: OPENBLAS_NUM_THREADS=1 python tools/minimax_tightness.py [--out reports/minimax_tightness.csv] [--quick]

Writes one row per (setting, estimator): the bound, the non-private floor, the measured mean error and its standard error
(`reps` runs: fresh rows and fresh noise each), the random level and whether the setting is in the fast-rate regime (the best
estimator below half the random level). The rotation-equivariant estimators are measured at V_0; Algorithm 2 and
DP-thresholding on parameters drawn from the bound's prior. Notebook 05_theory/03_minimax reads the file.
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
from dppca_nb.algorithms.baselines import analyze_gauss
from dppca_nb.algorithms.local import local_gaussian_pca
from dppca_nb.algorithms.smooth import smooth_sensitivity_pca
from dppca_nb.algorithms.robust import g_dppca
from dppca_nb.algorithms.pure import pure_dp_pca
from dppca_nb.algorithms.local_sparse import local_sparse_pca
from dppca_nb.algorithms.sparse_cov import dp_threshold_covariance
from dppca_nb.data.datasets import sample_gaussian
from dppca_nb.core.linalg import subspace_distance, random_subspace_level
from dppca_nb.core.validation import normalize_rows

warnings.simplefilter("ignore")
DELTA = 1e-5
CENTRAL = {"analyze_gauss": analyze_gauss, "smooth_sensitivity": smooth_sensitivity_pca, "g_dppca": g_dppca,
           "pure_dp_pca": lambda X, k, e, d, random_state=None: pure_dp_pca(X, k, e, random_state=random_state)}
PURE = {"pure_dp_pca": CENTRAL["pure_dp_pca"],
        "smooth_sensitivity_cauchy": lambda X, k, e, d, random_state=None: smooth_sensitivity_pca(X, k, e, 0.0, random_state=random_state)}
LOCAL = {"local_gaussian_pca": local_gaussian_pca,
         "local_gaussian_pca_on_signs": lambda X, k, e, d, random_state=None: local_gaussian_pca(normalize_rows(X), k, e, d, random_state=random_state)}


def spectra(p, k):
    "Wang & Xu's spiked covariance (lam = 1, 4; trace <= 0.2) and a balanced two-level spectrum of trace 0.9."
    out = {}
    for lam in (1.0, 4.0):
        c = 1 / (5 * p * (lam + 1))
        out[f"spiked{lam:g}"] = np.array([c * (lam + 1)] * k + [c] * (p - k))
    out["balanced"] = np.array([0.45 / k] * k + [0.45 / (p - k)] * (p - k))
    return out


def run_subspace(model, ests, p, k, spec, lam, eps, n, reps, rows, prior_from=None, s=None):
    delta = 0.0 if model.endswith("_pure") else DELTA
    kw = dict(s=s, privacy="local") if model == "sparse" else {}
    m = minimax_lower_bound(model, n=n, p=p, k=k, epsilon=eps, delta=delta, eigenvalues=lam, **kw)
    level = random_subspace_level(p, k)
    for name, f in ests.items():
        errs = []
        for r in range(reps):
            S, V = m.draw(r) if prior_from == "prior" else (np.diag(lam), np.eye(p)[:, :k])
            X = sample_gaussian(S, n, random_state=1000 + r)
            errs.append(subspace_distance(f(X, k, eps, delta, random_state=r), V))
        rows.append(dict(model=model, p=p, k=k, spectrum=spec, s=s or "", epsilon=eps, delta=delta, n=n, lower=m.lower,
                         floor=m.statistical, estimator=name, mean=float(np.mean(errs)),
                         se=float(np.std(errs, ddof=1) / math.sqrt(reps)), random_level=level))


def run_covariance(p, s, eps, n, reps, rows):
    base = np.full(p, 0.5 / p)
    m = minimax_lower_bound("sparse_covariance", n=n, p=p, epsilon=eps, delta=DELTA, eigenvalues=base, s=s)
    errs = []
    for r in range(reps):
        S, _ = m.draw(r)
        errs.append(np.linalg.norm(dp_threshold_covariance(sample_gaussian(S, n, random_state=1000 + r), eps, DELTA, random_state=r) - S, 2))
    rows.append(dict(model="sparse_covariance", p=p, k="", spectrum="flat0.5", s=s, epsilon=eps, delta=DELTA, n=n, lower=m.lower,
                     floor=m.statistical, estimator="dp_threshold_covariance", mean=float(np.mean(errs)),
                     se=float(np.std(errs, ddof=1) / math.sqrt(reps)), random_level=float(np.linalg.norm(np.diag(base), 2))))


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="reports/minimax_tightness.csv")
    ap.add_argument("--quick", action="store_true", help="a small grid (minutes)")
    ap.add_argument("--reps", type=int, default=4)
    a = ap.parse_args(argv)
    shapes = [(10, 2), (20, 3)] if a.quick else [(10, 2), (20, 3), (40, 5)]
    epss = (0.5, 2.0)
    rows, t0 = [], time.time()
    for p, k in shapes:
        for spec, lam in spectra(p, k).items():
            for eps in epss:
                for n in (2_000, 6_000, 20_000, 60_000, 200_000):
                    run_subspace("central", CENTRAL, p, k, spec, lam, eps, n, a.reps, rows)
                    run_subspace("central_pure", PURE, p, k, spec, lam, eps, n, a.reps, rows)
                for n in (100_000, 300_000, 1_000_000):
                    if p * n <= 2e7: run_subspace("local", LOCAL, p, k, spec, lam, eps, n, a.reps, rows)
            print(f"{p} {k} {spec} done, {len(rows)} rows, {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    for p, s in ((20, 4), (40, 8)):
        lam = np.array([0.6 / p * 5] + [0.6 / p] * (p - 1))
        for eps in epss:
            for n in (20_000, 200_000, 1_000_000):
                run_subspace("sparse", {"local_sparse_pca": local_sparse_pca}, p, 1, "spiked4", lam, eps, n, a.reps, rows, "prior", s)
    for p, s in ((20, 2), (20, 5), (40, 5)):
        for eps in epss:
            for n in (10_000, 100_000, 1_000_000):
                run_covariance(p, s, eps, n, a.reps, rows)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows: w.writerow({key: (f"{v:.6g}" if isinstance(v, float) else v) for key, v in r.items()})
    print(f"wrote {len(rows)} rows to {a.out} in {time.time() - t0:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
