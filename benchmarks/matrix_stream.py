"""Where one trial of the study `adaptive_matrices_figure1` spends its time, with the stream drawn lazily per read (each
record a full d x d Gaussian Z_i, A_i = Sigma + sigma (Z_i + Z_i^T) / sqrt 2, Sigma as `spiked_sigma` returns it) and
with the study's draw (each record's d (d + 1) / 2 independent entries, drawn once per trial into one array).

Usage: python benchmarks/matrix_stream.py [--n 20000] [--sigma 0.025] [--report benchmarks/matrix_stream.md]

One trial of every method at d = 200, k = 2, epsilon 1, delta 0.01, the study's radius; both variants in one run, one
BLAS thread (threadpoolctl; OPENBLAS_NUM_THREADS=1), process CPU seconds (the machine's 2 cores are shared).
"""
from __future__ import annotations
import argparse
import os
import time
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
import numpy as np  # noqa: E402

HERE = Path(__file__).resolve().parent


class LazyFullDraw:
    "The per-read stream: record i is Sigma + sigma (Z + Z^T) / sqrt 2, Z a full d x d draw from the seed (seed, i)."
    def __init__(self, Sigma, sigma, n, seed):
        self.Sigma, self.sigma, self.seed, self.shape = np.asarray(Sigma, float), float(sigma), int(seed), (n, *Sigma.shape)

    def _one(self, i):
        Z = np.random.default_rng([self.seed, int(i)]).standard_normal(self.shape[1:])
        return self.Sigma + (self.sigma / np.sqrt(2.0)) * (Z + Z.T)

    def __len__(self): return self.shape[0]

    def __getitem__(self, idx):
        ii = range(*idx.indices(self.shape[0])) if isinstance(idx, slice) else np.atleast_1d(idx)
        return np.stack([self._one(i) for i in ii]) if len(ii) else np.zeros((0, *self.shape[1:]))


def methods(A, n, d, k, R, rng):
    "The study's five methods on A, in its order, as (name, thunk)."
    from dppca_nb.algorithms.adaptive import plan_gauss, moment_sum
    from dppca_nb.algorithms.adaptive_matrices import adaptive_stochastic_kpca, projector_perturbation, noisy_power_method
    from dppca_nb.core.linalg import top_k_eigvecs
    eps, dlt, gap = 1.0, 0.01, 10.0 / k - 1.0
    return [("adaptive", lambda: adaptive_stochastic_kpca(A, k, eps, dlt, radius=R, random_state=rng)),
            ("DP-Gauss-1", lambda: plan_gauss(n, d, k, eps, dlt, radius=R, matrices=True).release(A, rng).value),
            ("DP-Gauss-2", lambda: projector_perturbation(A, k, eps, dlt, gap=gap, radius=R, random_state=rng)),
            ("DP-Power-Method", lambda: noisy_power_method(A, k, eps, dlt, radius=R, random_state=rng)),
            ("not private", lambda: top_k_eigvecs(moment_sum(A, R, n, d, {}, matrices=True) / n, k))]


def timed(f):
    t = time.process_time()
    f()
    return time.process_time() - t


def run(n, sigma, d=200, k=2):
    "{variant: {step: CPU seconds}} of one trial."
    from dppca_nb.experiments.adaptive import SpikedMatrices, spiked_sigma, matrix_radius
    Sigma, _ = spiked_sigma(d, k, 10.0, np.random.default_rng(0))
    R, out = matrix_radius(Sigma, sigma), {}
    lazy = LazyFullDraw(Sigma, sigma, n, 7)
    out["per read, full d x d draw"] = {m: timed(f) for m, f in methods(lazy, n, d, k, R, np.random.default_rng(1))}
    box = {}
    row = {"draw": timed(lambda: box.setdefault("A", SpikedMatrices(Sigma, sigma, n, 7)[0:n]))}
    row.update({m: timed(f) for m, f in methods(box["A"], n, d, k, R, np.random.default_rng(1))})
    out["drawn once, upper triangle"] = row
    return out


def report(res, n, sigma) -> str:
    steps = ["draw", "adaptive", "DP-Gauss-1", "DP-Gauss-2", "DP-Power-Method", "not private"]
    lines = ["# One trial of adaptive_matrices_figure1: where the time goes\n",
             f"Produced by `python benchmarks/matrix_stream.py --n {n} --sigma {sigma}`; design in its docstring. "
             "CPU seconds of one process, one BLAS thread, d = 200, k = 2, on a machine of 2 shared cores.\n",
             "| variant | " + " | ".join(steps) + " | total |", "|---" * (len(steps) + 2) + "|"]
    for v, row in res.items():
        lines.append(f"| {v} | " + " | ".join(f"{row[s]:.1f}" if s in row else "-" for s in steps)
                     + f" | {sum(row.values()):.1f} |")
    a, b = (sum(r.values()) for r in res.values())
    lines.append(f"\nRatio of the totals (per read / drawn once): {a / b:.2f}.")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20_000)
    ap.add_argument("--sigma", type=float, default=0.025)
    ap.add_argument("--report", default=str(HERE / "matrix_stream.md"))
    a = ap.parse_args()
    from threadpoolctl import threadpool_limits
    with threadpool_limits(1, "blas"):
        res = run(a.n, a.sigma)
    text = report(res, a.n, a.sigma)
    Path(a.report).write_text(text)
    print(text)
