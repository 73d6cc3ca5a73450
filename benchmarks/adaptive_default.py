"""AdaptiveNoisePCA's default radius on the adaptive chapter's Gaussian reference design: the public bound 2 against the
private radius ('auto'), each against Analyze Gauss at the same guarantee, and the expected error's per-fit ratio.

Usage: python benchmarks/adaptive_default.py [--seeds 5] [--out benchmarks/adaptive_default.jsonl]
                                             [--report benchmarks/adaptive_default.md]
       python benchmarks/adaptive_default.py --report-only

The design (nbs/04_algorithms/10_adaptive.ipynb, `ratio_table`): `reference_design(p, k, 0.05, trace=0.25)` (rows of
norm about 0.5), p = 50 and 100, k = 1, 2, 3, n = 100p and 300p, epsilon 1, delta 1e-5, data seed 100 + s / 200 + s
and noise seed s for s = 0 .. seeds - 1. Per data set, the error ||P_hat - P||_F against the truth V of:

- adaptive R=2: `AdaptiveNoisePCA` with radius=None (the public bound 2, private centering);
- adaptive auto: `AdaptiveNoisePCA` with radius='auto' (the private median of the centered rows' norms where n has the
  rows it needs, as every other central clipping estimator's default) and mode 'auto' (data-driven: the warm start, the
  probe, `choose_mode`; benchmarks/adaptive_small.md measures where the steps pay, and why no public rule picks
  Analyze Gauss from the start instead);
- AG auto / AG R=2: `AnalyzeGaussPCA` at its defaults (radius='auto') and at radius=None (2);
- alg adaptive / alg AG: the algorithms `adaptive_dp_kpca` and `analyze_gauss` at radius 1, no centering (the chapter's
  ratio table);

the non-private PCA of the same rows (exact mean, no clipping: sampling's error alone, the floor no private fit
beats on average); and, for the two AdaptiveNoisePCA fits, expected_error_ over the distance to the non-private PCA of the rows as the fit
centered and clipped them (tests/test_adaptive_error.py's measure). One BLAS thread (threadpoolctl;
OPENBLAS_NUM_THREADS=1).
"""
from __future__ import annotations
import math
import os
import sys
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
PS, KS, RATIOS = (50, 100), (1, 2, 3), (100, 300)


def _clipped_pca_error(est, X, k):
    "The distance of the fit's components to the non-private PCA of the rows as it centred and clipped them (curator-only)."
    from dppca_nb.core.linalg import subspace_distance, top_k_eigvecs
    Y = X - est.mean_
    Y = Y * np.minimum(1, est.radius_ / np.linalg.norm(Y, axis=1))[:, None]
    return subspace_distance(est.components_.T, top_k_eigvecs(Y.T @ Y, k))


def one(p, k, r, s) -> dict:
    "The row of one data set: every method's error, the adaptive fits' radii and expected / measured."
    from dppca_nb.estimators import ESTIMATORS
    from dppca_nb.data.datasets import reference_design, sample_gaussian
    from dppca_nb.core.linalg import subspace_distance, top_k_eigvecs
    from dppca_nb.algorithms.adaptive import adaptive_dp_kpca
    from dppca_nb.algorithms.baselines import analyze_gauss
    Sig, V = reference_design(p, k, 0.05, trace=0.25, random_state=100 + s)
    X = sample_gaussian(Sig, r * p, 200 + s)
    row = dict(p=p, k=k, n_over_p=r, seed=s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lab, name, R in (("adaptive R=2", "AdaptiveNoisePCA", None), ("adaptive auto", "AdaptiveNoisePCA", "auto"),
                             ("AG R=2", "AnalyzeGaussPCA", None), ("AG auto", "AnalyzeGaussPCA", "auto")):
            f = ESTIMATORS[name](k, epsilon=1.0, delta=1e-5, radius=R, random_state=s).fit(X)
            row[lab] = float(subspace_distance(f.components_.T, V))
            if name == "AdaptiveNoisePCA":
                row[lab + " radius"] = float(f.radius_)
                e = f.expected_error_
                row[lab + " expected/measured"] = None if e is None else float(e / _clipped_pca_error(f, X, k))
        row["alg adaptive"] = float(subspace_distance(adaptive_dp_kpca(X, k, 1.0, 1e-5, random_state=s), V))
        row["alg AG"] = float(subspace_distance(analyze_gauss(X, k, 1.0, 1e-5, random_state=s), V))
        Y = X - X.mean(0)                                          # the non-private PCA: its error is sampling alone
        row["non-private"] = float(subspace_distance(top_k_eigvecs(Y.T @ Y, k), V))
    return row


def report(rows) -> str:
    import pandas as pd
    df = pd.DataFrame(rows)
    df["auto / AG auto"] = df["adaptive auto"] / df["AG auto"]
    df["R=2 / AG R=2"] = df["adaptive R=2"] / df["AG R=2"]
    df["auto / R=2"] = df["adaptive auto"] / df["adaptive R=2"]
    df["auto / alg AG"] = df["adaptive auto"] / df["alg AG"]
    df["alg adaptive / alg AG"] = df["alg adaptive"] / df["alg AG"]
    df["target"] = np.where(df["k"] == 1, 0.7, 0.8)
    seeds = sorted(df["seed"].unique())
    L = ["# AdaptiveNoisePCA's default radius: the public bound 2 against the private radius", "",
         f"Produced by `python benchmarks/adaptive_default.py` (rows in `benchmarks/adaptive_default.jsonl`); the design "
         f"and the methods are in the script's docstring. One BLAS thread, 2 shared cores; {len(seeds)} data sets per "
         "point (mean of the per-data-set errors; ratios are means of the per-data-set ratios).", "",
         "## Errors and ratios", "",
         "| p | k | n | adaptive R=2 | adaptive auto (radius_) | AG R=2 | AG auto | alg adaptive (R 1) | alg AG (R 1) | "
         "auto / R=2 | auto / AG auto | R=2 / AG R=2 | auto / alg AG | alg adaptive / alg AG | non-private PCA | "
         "target x AG auto | privacy part: auto / AG auto |",
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    part = lambda e, f: math.sqrt(max(e * e - f * f, 0.0))       # the error beyond sampling's, errors in quadrature
    below, parts = 0, []
    for (p, k, r), g in df.groupby(["p", "k", "n_over_p"]):
        m = g.mean(numeric_only=True)
        L.append(f"| {p} | {k} | {r}p | {m['adaptive R=2']:.4f} | {m['adaptive auto']:.4f} ({m['adaptive auto radius']:.3f}) | "
                 f"{m['AG R=2']:.4f} | {m['AG auto']:.4f} | {m['alg adaptive']:.4f} | {m['alg AG']:.4f} | "
                 f"{m['auto / R=2']:.2f} | {m['auto / AG auto']:.2f} | {m['R=2 / AG R=2']:.2f} | {m['auto / alg AG']:.2f} | "
                 f"{m['alg adaptive / alg AG']:.2f} | {m['non-private']:.4f} | {m['target'] * m['AG auto']:.4f} | "
                 f"{part(m['adaptive auto'], m['non-private']) / part(m['AG auto'], m['non-private']):.2f} |")
        below += m["target"] * m["AG auto"] <= m["non-private"]
        parts.append(part(m['adaptive auto'], m['non-private']) / part(m['AG auto'], m['non-private']))
    rng = lambda c: f"{df.groupby(['p', 'k', 'n_over_p'])[c].mean().min():.2f}-{df.groupby(['p', 'k', 'n_over_p'])[c].mean().max():.2f}"
    L += ["", "Over the 12 points (means per point): " + "; ".join(f"{c} {rng(c)}" for c in (
        "auto / R=2", "auto / AG auto", "R=2 / AG R=2", "auto / alg AG", "alg adaptive / alg AG")) + ".", "",
          "Against the non-private floor (the PCA of the same rows, exact mean, no clipping: its error against the truth is "
          f"sampling alone): at {below} of 12 points the issue's target at the estimators' defaults (0.7x AG auto for k = 1, "
          "0.8x for k > 1) lies at or below that floor, where no private fit can reach it. The error beyond the floor "
          "(sqrt(error^2 - floor^2), sampling and privacy taken as independent) of adaptive auto over AG auto's: "
          f"{min(parts):.2f}-{max(parts):.2f}.", "",
          "## expected_error_ / measured, fit by fit (measured: to the PCA of the rows as the fit centred and clipped them)", "",
          "| radius | fits with a number | min | median | max | within 2x |", "|---|---|---|---|---|---|"]
    for lab in ("adaptive R=2", "adaptive auto"):
        q = df[lab + " expected/measured"].dropna().to_numpy()
        L.append(f"| {lab[9:]} | {len(q)}/{len(df)} | {q.min():.2f} | {np.median(q):.2f} | {q.max():.2f} | "
                 f"{int(np.sum((q >= 0.5) & (q <= 2)))}/{len(q)} |")
    for k in KS:
        q = df[(df["k"] == k)]["adaptive auto expected/measured"].dropna()
        L.append(f"\nradius 'auto', k = {k}: {q.min():.2f}-{q.max():.2f}")
    return "\n".join(L) + "\n"


def main(argv=None):
    sys.path.insert(0, str(HERE))
    from defaults import seeded_main
    seeded_main(argv, doc=__doc__, name="adaptive_default", points=[(p, k, r) for p in PS for k in KS for r in RATIOS],
                one=one, report=report, seeds=5)


if __name__ == "__main__":
    main()
