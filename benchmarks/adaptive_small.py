"""Where AdaptiveNoisePCA's adaptive steps pay for their warm start, probe and spreads: the estimator's default fit with
the adaptive steps against AnalyzeGaussPCA's default fit, on the adaptive chapter's Gaussian reference design, over n/p
from 10 to 300, p 20-100, k 1-3 and epsilon 1-10; and the same at the algorithms' public radius 1. It decides the public
rule `gauss_from_start` (dppca_nb/algorithms/adaptive.py) under which the estimator's plan is Analyze Gauss from the start.

Usage: python benchmarks/adaptive_small.py [--seeds 3] [--out benchmarks/adaptive_small.jsonl]
                                           [--report benchmarks/adaptive_small.md] [--report-only]

The design (as benchmarks/adaptive_default.py): `reference_design(p, k, 0.05, trace=0.25)` (rows of norm about 0.5),
data seed 100 + s / 200 + s, noise seed s, delta 1e-5. Per data set, ||P_hat - P||_F against the truth V of:

- steps: `AdaptiveNoisePCA` at its defaults with the rule off (`GAUSS_FROM_START = 0`: the warm start, the probe and the
  adaptive steps wherever the spreads are affordable);
- gauss: `AdaptiveNoisePCA` at its defaults with the rule everywhere (`GAUSS_FROM_START = inf`: Analyze Gauss from the
  start wherever its radius is the private one);
- AG: `AnalyzeGaussPCA` at its defaults (gauss = AG: the same components, up to sign);
- alg steps / alg AG: `adaptive_dp_kpca` (rule off) and `analyze_gauss` at their defaults (public radius 1, twice the
  rows' norm; no centering).

The rule's statistic is n epsilon / p (public); 'rule' is gauss where the radius is private and n epsilon / p is below
the threshold, else steps. One BLAS thread (threadpoolctl; OPENBLAS_NUM_THREADS=1). Not measured on the real tables
(tools/real_tables.py shows the effect there).
"""
from __future__ import annotations
import argparse
import json
import os
import subprocess
import sys
import warnings
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent
PS, KS, RATIOS, EPSILONS = (20, 50, 100), (1, 2, 3), (10, 20, 40, 80, 150, 300), (1.0, 3.0, 10.0)


def one(p, k, r, eps, s) -> dict:
    "The row of one data set: the three fits' errors and what the adaptive plan did."
    from dppca_nb.estimators import AdaptiveNoisePCA, AnalyzeGaussPCA
    from dppca_nb.data.datasets import reference_design, sample_gaussian
    from dppca_nb.core.linalg import subspace_distance
    from dppca_nb.algorithms import adaptive
    from dppca_nb.algorithms.baselines import analyze_gauss
    Sig, V = reference_design(p, k, 0.05, trace=0.25, random_state=100 + s)
    X = sample_gaussian(Sig, r * p, 200 + s)
    row = dict(p=p, k=k, n_over_p=r, epsilon=eps, seed=s, n=r * p)
    kw = dict(epsilon=eps, delta=1e-5, random_state=s)
    keep = adaptive.GAUSS_FROM_START
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lab, T in (("steps", 0.0), ("gauss", float("inf"))):
            try:
                adaptive.GAUSS_FROM_START = T
                f = AdaptiveNoisePCA(k, **kw).fit(X)
                if lab == "steps": a = adaptive.adaptive_dp_kpca(X, k, eps, 1e-5, random_state=s)
            finally:
                adaptive.GAUSS_FROM_START = keep
            row[lab] = float(subspace_distance(f.components_.T, V))
            if lab == "steps": row["steps ran"], row["private radius"] = _has_steps(f.contract_), f._radius_auto == "private"
        g = AnalyzeGaussPCA(k, **kw).fit(X)
        row["AG"] = float(subspace_distance(g.components_.T, V))
        row["gauss = AG"] = bool(np.array_equal(np.abs(f.components_), np.abs(g.components_)))
        row["alg steps"] = float(subspace_distance(a, V))
        row["alg AG"] = float(subspace_distance(analyze_gauss(X, k, eps, 1e-5, random_state=s), V))
    row["random"] = float(np.sqrt(2 * k * (1 - k / p)))
    return row


def _has_steps(c) -> bool:
    "Whether a fit's contract holds the adaptive steps' gradient part (else Analyze Gauss from the start)."
    return any(a == "gradient" or _has_steps(b) for a, b in (c.parts or ()))


def report(rows) -> str:
    import pandas as pd
    from dppca_nb.algorithms.adaptive import GAUSS_FROM_START as T
    df = pd.DataFrame(rows)
    df["s"] = df["n_over_p"] * df["epsilon"]
    df["rule"] = np.where(df["private radius"] & (df["s"] < T), df["gauss"], df["steps"])
    for a in ("steps", "gauss", "rule"): df[a + " / AG"] = df[a] / df["AG"]
    df["alg steps / alg AG"] = df["alg steps"] / df["alg AG"]
    seeds = sorted(df["seed"].unique())
    key = ["p", "k", "n_over_p", "epsilon"]
    per = df.groupby(key).mean(numeric_only=True).reset_index()
    L = ["# AdaptiveNoisePCA at small n/p: the adaptive steps against Analyze Gauss", "",
         f"Produced by `python benchmarks/adaptive_small.py` (rows in `benchmarks/adaptive_small.jsonl`, code "
         f"{rows[0].get('code', '?')}); the design and the fits are in the script's docstring. One BLAS thread, 2 shared "
         f"cores; {len(seeds)} data sets per point; errors ||P_hat - P||_F to the truth, means per point; ratios are means "
         "of the per-data-set ratios. 'steps': the estimator's default fit with the rule off; 'gauss': Analyze Gauss from "
         "the start (the rule everywhere; the same components as AnalyzeGaussPCA's default fit in "
         f"{int(df['gauss = AG'].sum())} of {len(df)} fits); 'rule': the default (gauss at the private radius where "
         f"n epsilon / p < {T:g}); 'alg': the algorithms at their public radius 1 (twice the rows' norm), rule off.", "",
         "## By n epsilon / p (every p, k; a point: one p, k, n/p, epsilon)", "",
         "| n eps / p | points | steps / AG (mean) | steps worse than AG | rule / AG (mean) | alg steps / alg AG (mean) | "
         "alg steps worse |", "|---|---|---|---|---|---|---|"]
    for v, g in per.groupby("s"):
        L.append(f"| {v:g} | {len(g)} | {g['steps / AG'].mean():.3f} | {int((g['steps / AG'] > 1).sum())}/{len(g)} | "
                 f"{g['rule / AG'].mean():.3f} | {g['alg steps / alg AG'].mean():.3f} | "
                 f"{int((g['alg steps / alg AG'] > 1).sum())}/{len(g)} |")
    L += ["", "## Every point", "", "| p | k | n/p | epsilon | n eps / p | private radius | steps | gauss | AG | "
          "steps / AG | rule / AG | alg steps | alg AG | alg steps / alg AG |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, m in per.iterrows():
        L.append(f"| {m['p']:.0f} | {m['k']:.0f} | {m['n_over_p']:.0f} | {m['epsilon']:g} | {m['s']:g} | "
                 f"{m['private radius']:.2f} | {m['steps']:.4f} | {m['gauss']:.4f} | {m['AG']:.4f} | "
                 f"{m['steps / AG']:.2f} | {m['rule / AG']:.2f} | {m['alg steps']:.4f} | {m['alg AG']:.4f} | "
                 f"{m['alg steps / alg AG']:.2f} |")
    return "\n".join(L) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--out", default=str(HERE / "adaptive_small.jsonl"))
    ap.add_argument("--report", default=str(HERE / "adaptive_small.md"))
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args(argv)
    if not a.report_only:
        from threadpoolctl import threadpool_limits
        code = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout.strip()
        with threadpool_limits(limits=1, user_api="blas"), open(a.out, "w") as f:
            for p in PS:
                for k in KS:
                    for r in RATIOS:
                        for e in EPSILONS:
                            for s in range(a.seeds):
                                f.write(json.dumps(dict(one(p, k, r, e, s), code=code)) + "\n"); f.flush()
                    print(f"[adaptive_small] p {p} k {k} done", file=sys.stderr, flush=True)
    Path(a.report).write_text(report([json.loads(x) for x in Path(a.out).read_text().splitlines()]))
    print(f"wrote {a.report}", file=sys.stderr)


if __name__ == "__main__":
    main()
