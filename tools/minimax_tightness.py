"""Measure the tightness of `minimax_lower_bound`: the best package estimator's mean error / lower, per model, on a grid.

Usage: OPENBLAS_NUM_THREADS=1 python tools/minimax_tightness.py [--out reports/minimax_tightness.csv] [--quick] [--reps 4]

Writes one row per (setting, estimator): the bound, the non-private floor, the private bound alone, the kind of the
reported bound's prior, the measured mean error and its standard error (`reps` runs: parameters drawn from the bound's
prior, fresh rows and fresh noise each) and the random level. The spectrum's `shape` is a column: "two-level" (the top k
eigenvalues equal, the bottom ones equal: the papers' spiked models) or "spread" (anything else); for sparse covariance
"star" (s off-diagonal entries in the hub's row) or "pair" (s = 1: a diagonal plus one symmetric pair). The estimators of
each class are read from the algorithm registry (every worst-case subspace algorithm of the class; an algorithm that
refuses a setting is left out of it, and the exact sampler `pure_dp_subspace` is run only where p k <= 24).

Two more columns. `reference` is 1 for an estimator outside the registry, measured to tell which side of a gap is loose
(the tightness of the package is read from the rows with reference 0): for central pure DP the Laplace mechanism on the
clipped second moment (`laplace_pca`, pure epsilon-DP for every input), for sparse covariance the constant estimate
diag(baseline) (it reads no record: private at every budget). `grid` is "main" for the grid above or "independent" for
settings drawn at random (seeded, spread and two-level spectra, dimensions, budgets and sizes not on the main grid),
so that the medians can be read on settings the bound was not tuned to. Notebook 05_theory/03_minimax reads the file.
"""
import argparse
import csv
import math
import sys
import time
import warnings
from pathlib import Path
import numpy as np

from dppca_nb.theory.minimax import minimax_lower_bound, class_algorithms
from dppca_nb.algorithms.sparse_cov import dp_threshold_covariance
from dppca_nb.algorithms.local_sparse import local_sparse_pca
from dppca_nb.data.datasets import sample_gaussian
from dppca_nb.core.linalg import subspace_distance, random_subspace_level
from dppca_nb.core.validation import normalize_rows

warnings.simplefilter("ignore")
DELTA = 1e-5
REFERENCES = ("laplace_pca", "baseline_diagonal")            # outside the registry: which side of a gap is loose


def estimators(model):
    """Every registered worst-case subspace algorithm of a privacy class, as f(X, k, epsilon, delta, random_state); for the
    local class also Algorithm 1 on spatial signs (each user normalises her record first)."""
    out = class_algorithms(model)
    if model == "local":
        f = out["local_gaussian_pca"]
        out["local_gaussian_pca_on_signs"] = lambda X, k, e, d, random_state=None: f(normalize_rows(X), k, e, d, random_state)
    return out


def laplace_pca(X, k, e, d=0.0, random_state=None):
    """Pure epsilon-DP PCA by the Laplace mechanism (replace-one, rows clipped to the unit ball): the upper triangle of
    the clipped average x x' / n (with its diagonal) has l1 sensitivity at most 2 max ||u(x)||_1, ||u(x)||_1 =
    (||x||_1^2 + ||x||^2) / 2n <= (p + 1) / 2n; Laplace noise of scale (p + 1) / (n epsilon) on each entry, mirrored."""
    n, p = X.shape
    Y = X / np.maximum(1.0, np.linalg.norm(X, axis=1, keepdims=True))
    G = np.triu(np.random.default_rng(random_state).laplace(0.0, (p + 1) / (n * e), (p, p)))
    return np.linalg.eigh(Y.T @ Y / n + G + np.triu(G, 1).T)[1][:, -k:]


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


def run_subspace(model, ests, p, k, spec, lam, eps, n, reps, rows, s=None, grid="main"):
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
        rows.append(dict(grid=grid, model=model, p=p, k=k, spectrum=spec, shape=shape_of(lam, k), s=s or "", epsilon=eps,
                         delta=delta, n=n, lower=m.lower, floor=m.statistical, privacy=m.privacy, prior=m.prior.kind,
                         estimator=name, reference=int(name in REFERENCES),
                         mean=float(np.mean(errs)), se=float(np.std(errs, ddof=1) / math.sqrt(reps)), random_level=level))


def run_covariance(p, s, base, spec, eps, n, reps, rows):
    m = minimax_lower_bound("sparse_covariance", n=n, p=p, epsilon=eps, delta=DELTA, eigenvalues=base, s=s)
    ests = {"dp_threshold_covariance": lambda X: dp_threshold_covariance(X, eps, DELTA, random_state=r),
            "baseline_diagonal": lambda X: np.diag(base)}          # a constant: reads no record
    errs = {name: [] for name in ests}
    for r in range(reps):
        S, _ = m.draw(r)
        X = sample_gaussian(S, n, random_state=1000 + r)
        for name, f in ests.items(): errs[name].append(np.linalg.norm(f(X) - S, 2))
    for name, e in errs.items():
        rows.append(dict(grid="main", model="sparse_covariance", p=p, k="", spectrum=spec, shape="pair" if s == 1 else "star", s=s,
                         epsilon=eps, delta=DELTA, n=n, lower=m.lower, floor=m.statistical, privacy=m.privacy, prior=m.prior.kind,
                         estimator=name, reference=int(name in REFERENCES), mean=float(np.mean(e)),
                         se=float(np.std(e, ddof=1) / math.sqrt(reps)), random_level=float(np.linalg.norm(np.diag(base), 2))))


def independent_settings(count: int, seed: int = 20260607):
    """Settings drawn at random, none on the main grid: p in 6..40, k in 1..min(4, p // 3), half two-level (top / bottom
    ratio 1.5 to 6) and half spread (sorted uniform values, the top k raised by 1.5 to 4), trace 0.3 to 1; epsilon
    log-uniform on [0.1, 3]; n log-uniform on [1,000, 200,000] (central) and [50,000, 1,000,000] (local, p n <= 2e7)."""
    rng, out = np.random.default_rng(seed), []
    for i in range(count):
        p = int(rng.integers(6, 41)); k = int(rng.integers(1, min(4, p // 3) + 1))
        if i % 2 == 0: lam = np.r_[np.full(k, rng.uniform(1.5, 6.0)), np.ones(p - k)]
        else: lam = np.sort(rng.uniform(0.1, 1.0, p))[::-1] * np.r_[np.full(k, rng.uniform(1.5, 4.0)), np.ones(p - k)]
        lam = lam * rng.uniform(0.3, 1.0) / lam.sum()
        eps = float(np.exp(rng.uniform(math.log(0.1), math.log(3.0))))
        n_c = int(round(float(np.exp(rng.uniform(math.log(1e3), math.log(2e5)))), -2))
        n_l = int(round(min(float(np.exp(rng.uniform(math.log(5e4), math.log(1e6)))), 2e7 / p), -3))
        out.append((p, k, f"random{i}", lam, round(eps, 3), n_c, n_l))
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default="reports/minimax_tightness.csv")
    ap.add_argument("--quick", action="store_true", help="a small grid (minutes)")
    ap.add_argument("--reps", type=int, default=4)
    a = ap.parse_args(argv)
    shapes = [(10, 2)] if a.quick else [(10, 2), (20, 3), (40, 5)]
    epss = (0.5, 2.0)
    ests = {mdl: estimators(mdl) for mdl in ("central", "central_pure", "local")}
    ests["central_pure"]["laplace_pca"] = laplace_pca
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
    for p, k, spec, lam, eps, n_c, n_l in independent_settings(4 if a.quick else 40):
        run_subspace("central", ests["central"], p, k, spec, lam, eps, n_c, a.reps, rows, grid="independent")
        run_subspace("central_pure", ests["central_pure"], p, k, spec, lam, eps, n_c, a.reps, rows, grid="independent")
        run_subspace("local", ests["local"], p, k, spec, lam, eps, n_l, a.reps, rows, grid="independent")
    print(f"independent grid done, {len(rows)} rows, {time.time() - t0:.0f}s", file=sys.stderr, flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    with open(a.out, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        for r in rows: w.writerow({key: (f"{v:.6g}" if isinstance(v, float) else v) for key, v in r.items()})
    print(f"wrote {len(rows)} rows to {a.out} in {time.time() - t0:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
