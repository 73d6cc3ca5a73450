"""Where AdaptiveNoisePCA's adaptive steps pay for their warm start, probe and spreads: the estimator's default fit
(data-driven: the warm start, the probe, `choose_mode`) and mode='gauss' (Analyze Gauss from the start) against
AnalyzeGaussPCA's default fit, on two designs: the adaptive chapter's Gaussian reference design, over n/p from 10 to
300, p 20-100, k 1-3 and epsilon 1-10 (and the same at the algorithms' public radius 1); and the low-noise design
`signed_spike` (dppca_nb.experiments.adaptive), where the adaptive method is meant to pay. It decides whether a public
rule (on n, p, epsilon) can choose Analyze Gauss from the start for the estimator: it cannot (the .md's conclusion).

Usage: python benchmarks/adaptive_small.py [--seeds 3] [--part all|gauss|low] [--out benchmarks/adaptive_small.jsonl]
                                           [--low-out benchmarks/adaptive_small_low.jsonl]
                                           [--report benchmarks/adaptive_small.md] [--report-only]

Gaussian design (as benchmarks/adaptive_default.py): `reference_design(p, k, 0.05, trace=0.25)` (rows of norm about
0.5), data seed 100 + s / 200 + s, noise seed s, delta 1e-5. Per data set, ||P_hat - P||_F against the truth V of:

- steps: `AdaptiveNoisePCA` at its defaults (mode 'auto': the warm start, the probe and the adaptive steps wherever
  the spreads are affordable);
- gauss: `AdaptiveNoisePCA(mode='gauss')` (Analyze Gauss from the start);
- AG: `AnalyzeGaussPCA` at its defaults (gauss = AG: the same components, up to sign);
- alg steps / alg AG: `adaptive_dp_kpca` and `analyze_gauss` at their defaults (public radius 1, twice the rows'
  norm; no centering).

Low-noise design (the rows `benchmarks/adaptive_small_low.jsonl`): `signed_spike(n, 100, 1, spike=0.5, sigma0)`, data
and noise seed s, epsilon 1, delta 1e-5, n 2e4 and 1e5, sigma0 1e-3 and 2.5e-2; the fits `AdaptiveNoisePCA` default,
mode='gauss', mode='adaptive' and `AnalyzeGaussPCA` default (||P_hat - P||_F; 'steps ran': the default's released
spreads are not empty, i.e. `choose_mode` kept the adaptive steps).

One BLAS thread (threadpoolctl; OPENBLAS_NUM_THREADS=1). Not measured on the real tables.
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
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for lab, mode in (("steps", "auto"), ("gauss", "gauss")):
            f = AdaptiveNoisePCA(k, mode=mode, **kw).fit(X)
            row[lab] = float(subspace_distance(f.components_.T, V))
            if lab == "steps":
                a = adaptive.adaptive_dp_kpca(X, k, eps, 1e-5, random_state=s)
                row["steps ran"], row["private radius"] = _has_steps(f.contract_), f._radius_auto == "private"
        g = AnalyzeGaussPCA(k, **kw).fit(X)
        row["AG"] = float(subspace_distance(g.components_.T, V))
        row["gauss = AG"] = bool(np.array_equal(np.abs(f.components_), np.abs(g.components_)))
        row["alg steps"] = float(subspace_distance(a, V))
        row["alg AG"] = float(subspace_distance(analyze_gauss(X, k, eps, 1e-5, random_state=s), V))
    row["random"] = float(np.sqrt(2 * k * (1 - k / p)))
    return row


LOW_NS, LOW_SIGMAS = (20_000, 100_000), (1e-3, 2.5e-2)


def one_low(n, sigma0, s) -> dict:
    "The row of one low-noise data set: the four fits' errors and whether the default kept the adaptive steps."
    from dppca_nb.estimators import AdaptiveNoisePCA, AnalyzeGaussPCA
    from dppca_nb.experiments.adaptive import signed_spike
    from dppca_nb.core.linalg import subspace_distance
    X, V = signed_spike(n, 100, 1, spike=0.5, sigma0=sigma0, random_state=s)
    row, kw = dict(n=n, p=100, k=1, sigma0=sigma0, epsilon=1.0, seed=s), dict(epsilon=1.0, delta=1e-5, random_state=s)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fits = {"default": AdaptiveNoisePCA(1, **kw), "gauss": AdaptiveNoisePCA(1, mode="gauss", **kw),
                "adaptive": AdaptiveNoisePCA(1, mode="adaptive", **kw), "AG": AnalyzeGaussPCA(1, **kw)}
        for lab, f in fits.items(): row[lab] = float(subspace_distance(f.fit(X).components_.T, V))
    row["steps ran"] = len(fits["default"].spreads_) > 0
    row["gauss = AG"] = bool(np.array_equal(np.abs(fits["gauss"].components_), np.abs(fits["AG"].components_)))
    return row


def _has_steps(c) -> bool:
    "Whether a fit's contract holds the adaptive steps' gradient part (else Analyze Gauss from the start)."
    return any(a == "gradient" or _has_steps(b) for a, b in (c.parts or ()))


def report(rows, low) -> str:
    import pandas as pd
    df = pd.DataFrame(rows)
    df["s"] = df["n_over_p"] * df["epsilon"]
    for a in ("steps", "gauss"): df[a + " / AG"] = df[a] / df["AG"]
    df["alg steps / alg AG"] = df["alg steps"] / df["alg AG"]
    seeds = sorted(df["seed"].unique())
    key = ["p", "k", "n_over_p", "epsilon"]
    per = df.groupby(key).mean(numeric_only=True).reset_index()
    lo = pd.DataFrame(low)
    for a in ("default", "gauss", "adaptive"): lo[a + " / AG"] = lo[a] / lo["AG"]
    lper = lo.groupby(["n", "sigma0"]).mean(numeric_only=True).reset_index()
    by_s = per[(per["s"] >= 20) & (per["s"] <= 450)].groupby("s")["steps / AG"].mean()     # the table's column
    win = lper["default / AG"]
    L = ["# AdaptiveNoisePCA at small n/p: the adaptive steps against Analyze Gauss", "",
         f"Produced by `python benchmarks/adaptive_small.py` (rows in `benchmarks/adaptive_small.jsonl`, code "
         f"{rows[0].get('code', '?')}, and `benchmarks/adaptive_small_low.jsonl`, code {low[0].get('code', '?')}); the "
         "designs and the fits are in the script's docstring. One BLAS thread, 2 shared cores; errors ||P_hat - P||_F "
         "to the truth, means per point; ratios are means of the per-data-set ratios.", "",
         "## Conclusion", "",
         f"- Gaussian reference design ({len(seeds)} data sets per point): at the private radius the estimator's "
         f"data-driven default ('steps') is on average {by_s.min():.2f} to {by_s.max():.2f} times AnalyzeGaussPCA's error "
         "at every n eps / p from 20 to 450 (the mean over the points at each n eps / p): no clear gain, since the "
         "gradients' spread is not small against R^2 when R is the rows' median norm.",
         f"- Low-noise design (signed_spike, p 100, k 1, epsilon 1, {lo['seed'].nunique()} data sets per point): the "
         f"default is {win.min():.2f} to {win.max():.2f} times AnalyzeGaussPCA's error (up to "
         f"{1 / win.min():.1f}x smaller) where sigma0 = 1e-3; it kept the adaptive steps in {int(lo['steps ran'].sum())} of "
         f"{len(lo)} fits (at sigma0 = 2.5e-2 `choose_mode` finished with Analyze Gauss, after paying for the warm start "
         "and the probe).",
         "- The two designs share n, p and epsilon: the difference is the rows' noise level, which is private. A public "
         "rule (say Analyze Gauss from the start below n eps / p = 1000) would give Analyze Gauss's error on the first "
         "design and throw away the adaptive method's gain on the second. So the estimator's default stays data-driven "
         "(the warm start, the probe, `choose_mode`), and `mode='gauss'` is the way to ask for Analyze Gauss from the "
         f"start (the same components as AnalyzeGaussPCA's default fit in {int(df['gauss = AG'].sum() + lo['gauss = AG'].sum())}"
         f" of {len(df) + len(lo)} fits).", "",
         "## Low-noise design (a point: one n, sigma0)", "",
         "| n | sigma0 | n eps / p | default | mode='gauss' | mode='adaptive' | AG | default / AG | gauss / AG | "
         "adaptive / AG | steps ran |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, m in lper.iterrows():
        L.append(f"| {m['n']:.0f} | {m['sigma0']:g} | {m['n'] / 100:g} | {m['default']:.4f} | {m['gauss']:.4f} | "
                 f"{m['adaptive']:.4f} | {m['AG']:.4f} | {m['default / AG']:.2f} | {m['gauss / AG']:.2f} | "
                 f"{m['adaptive / AG']:.2f} | {m['steps ran']:.2f} |")
    L += ["", "## Gaussian design, by n epsilon / p (every p, k; a point: one p, k, n/p, epsilon)", "",
          "'steps': the estimator's default fit; 'gauss': mode='gauss'; 'alg': the algorithms at their public radius "
          "1 (twice the rows' norm).", "",
          "| n eps / p | points | steps / AG (mean) | steps worse than AG | gauss / AG (mean) | alg steps / alg AG (mean) | "
          "alg steps worse |", "|---|---|---|---|---|---|---|"]
    for v, g in per.groupby("s"):
        L.append(f"| {v:g} | {len(g)} | {g['steps / AG'].mean():.3f} | {int((g['steps / AG'] > 1).sum())}/{len(g)} | "
                 f"{g['gauss / AG'].mean():.3f} | {g['alg steps / alg AG'].mean():.3f} | "
                 f"{int((g['alg steps / alg AG'] > 1).sum())}/{len(g)} |")
    L += ["", "## Gaussian design, every point", "", "| p | k | n/p | epsilon | n eps / p | private radius | steps | gauss | AG | "
          "steps / AG | alg steps | alg AG | alg steps / alg AG |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for _, m in per.iterrows():
        L.append(f"| {m['p']:.0f} | {m['k']:.0f} | {m['n_over_p']:.0f} | {m['epsilon']:g} | {m['s']:g} | "
                 f"{m['private radius']:.2f} | {m['steps']:.4f} | {m['gauss']:.4f} | {m['AG']:.4f} | "
                 f"{m['steps / AG']:.2f} | {m['alg steps']:.4f} | {m['alg AG']:.4f} | "
                 f"{m['alg steps / alg AG']:.2f} |")
    return "\n".join(L) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--part", choices=("all", "gauss", "low"), default="all")
    ap.add_argument("--out", default=str(HERE / "adaptive_small.jsonl"))
    ap.add_argument("--low-out", default=str(HERE / "adaptive_small_low.jsonl"))
    ap.add_argument("--report", default=str(HERE / "adaptive_small.md"))
    ap.add_argument("--report-only", action="store_true")
    a = ap.parse_args(argv)
    if not a.report_only:
        from threadpoolctl import threadpool_limits
        code = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=HERE).stdout.strip()
        with threadpool_limits(limits=1, user_api="blas"):
            if a.part in ("all", "gauss"):
                with open(a.out, "w") as f:
                    for p in PS:
                        for k in KS:
                            for r in RATIOS:
                                for e in EPSILONS:
                                    for s in range(a.seeds):
                                        f.write(json.dumps(dict(one(p, k, r, e, s), code=code)) + "\n"); f.flush()
                            print(f"[adaptive_small] p {p} k {k} done", file=sys.stderr, flush=True)
            if a.part in ("all", "low"):
                with open(a.low_out, "w") as f:
                    for n in LOW_NS:
                        for sg in LOW_SIGMAS:
                            for s in range(a.seeds):
                                f.write(json.dumps(dict(one_low(n, sg, s), code=code)) + "\n"); f.flush()
    read = lambda fn: [json.loads(x) for x in Path(fn).read_text().splitlines()]
    Path(a.report).write_text(report(read(a.out), read(a.low_out)))
    print(f"wrote {a.report}", file=sys.stderr)


if __name__ == "__main__":
    main()
