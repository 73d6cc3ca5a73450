"""Side-by-side timings, one ratio per row, measured in one run with the BLAS threads stated: Kendall's tau, the local model's shortcuts, Fantope ADMM against cvxpy, private PCA against the libraries a user would pick instead, the Dask path against numpy, and the time of the teaching explorers' redraws."""


from __future__ import annotations
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import resource
import time
import numpy as np
from dppca_nb.core.validation import as_generator
from dppca_nb.core.linalg import random_orthonormal, random_subspace_level, subspace_distance
from dppca_nb.data.datasets import sample_gaussian, reference_design

__all__ = ['SIZES', 'SECTIONS', 'machine_info', 'best_time', 'run_limited', 'bench_kendall', 'bench_kendall_design', 'bench_local', 'fantope_instance',
           'bench_fantope', 'pca_methods', 'bench_libraries', 'bench_dask', 'bingham3_mean', 'bench_bingham',
           'bench_explorers', 'bench_fit_cost', 'bench_private_radius', 'bench_local_randomizer', 'bench_accuracy', 'bench_adaptive_fit', 'run_all', 'merge_results', 'rows_markdown', 'section_markdown', 'pca_markdown', 'run_line', 'results_markdown', 'load_results', 'speedup_figure']

def machine_info(blas_threads: int | None = None) -> dict:
    "The machine, the library versions and the BLAS in use (with its thread count under the current limits)."
    from threadpoolctl import threadpool_info
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((ln.split(":", 1)[1].strip() for ln in f if ln.startswith("model name")), cpu)
    except OSError: pass
    try: mem_gb = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    except (ValueError, OSError, AttributeError): mem_gb = float("nan")
    vers = {}
    for m in ("numpy", "scipy", "sklearn", "dask", "distributed", "cvxpy", "matplotlib"):
        try: vers[m] = importlib.import_module(m).__version__
        except ImportError: vers[m] = "not installed"
    for m in ("diffprivlib", "opendp"):                                 # the libraries: version only, no import
        try: vers[m] = importlib.metadata.version(m)
        except importlib.metadata.PackageNotFoundError: vers[m] = "not installed"
    blas = [dict(api=d.get("internal_api"), version=d.get("version"), architecture=d.get("architecture"),
                 threads=d.get("num_threads")) for d in threadpool_info() if d.get("user_api") == "blas"]
    try: load = os.getloadavg()
    except OSError: load = (float("nan"),) * 3
    return dict(date=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), cpu=cpu, cores=os.cpu_count(),
                memory_gb=round(mem_gb, 1), python=platform.python_version(), versions=vers, blas=blas,
                blas_threads=blas_threads, load_average=tuple(round(x, 2) for x in load))

def best_time(fn, *args, repeat: int = 3, **kwargs):
    "(best wall-clock seconds over `repeat` calls of fn(*args, **kwargs), the last result)."
    best, out = math.inf, None
    for _ in range(max(1, int(repeat))):
        t = time.perf_counter(); out = fn(*args, **kwargs); best = min(best, time.perf_counter() - t)
    return best, out

def run_limited(fn, *args, limit_s: float = 60.0, memory_gb: float | None = None, **kwargs) -> dict:
    "Run fn(*args, **kwargs) in a forked child killed after `limit_s`: dict(status, value, seconds)."
    import multiprocessing as mp
    if "fork" not in mp.get_all_start_methods():                      # no fork: run here, unprotected
        try:
            t = time.perf_counter(); v = fn(*args, **kwargs)
            return dict(status="ok", value=v, seconds=time.perf_counter() - t)
        except ImportError as e: return dict(status="not installed", value=str(e), seconds=None)
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    import tempfile
    err = tempfile.TemporaryFile()

    def child():
        os.dup2(err.fileno(), 2)                                      # keep the child's last words for a crash report
        import faulthandler
        faulthandler.disable()                                        # a test runner's fault handler would print to its own stream
        if memory_gb is not None:
            lim = int(memory_gb * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
        try:
            from dppca_nb.privacy.accounting import PrivacyAccountant, set_default_accountant
            set_default_accountant(PrivacyAccountant())               # the child's own ledger (a ledger stays in its process)
            t = time.perf_counter(); v = fn(*args, **kwargs)
            send.send(("ok", v, time.perf_counter() - t))
        except ImportError as e: send.send(("not installed", str(e), None))
        except MemoryError: send.send(("out of memory", f"over the {memory_gb} GB limit", None))
        except Exception as e: send.send(("error", f"{type(e).__name__}: {e}"[:300], None))

    proc = ctx.Process(target=child, daemon=True)
    proc.start()
    send.close()
    try:
        if recv.poll(limit_s): status, value, secs = recv.recv()
        else: status, value, secs = "timeout", f"no answer within {limit_s:g} s", None
    except EOFError: status, value, secs = "crashed", None, None
    if proc.is_alive(): proc.kill()
    proc.join()
    if status == "crashed":
        import signal
        code = proc.exitcode
        value = f"killed by {signal.Signals(-code).name}" if code is not None and code < 0 else f"exit code {code}"
        err.seek(0)
        last = [ln for ln in err.read().decode(errors="replace").splitlines() if ln.strip()][-1:]
        if last: value += f"; last stderr line: {last[0][:200]}"
    err.close(); recv.close()
    return dict(status=status, value=value, seconds=secs)

def _row(section, case, baseline, t_base, method, t_method, note="", **extra):
    "One row of the table; speed-up t_base / t_method, None where a time is missing (no baseline: baseline and t_base None)."
    ratio = t_base / t_method if (t_base is not None and t_method is not None and t_base > 0 and t_method > 0) else None
    return dict(section=section, case=case, baseline=baseline, t_baseline=t_base, method=method, t_method=t_method,
                speedup=ratio, note=note, **extra)

def _fmt_t(t): return "–" if t is None else (f"{t * 1e3:.3g} ms" if t < 1 else f"{t:.3g} s")

def _spiked(p, k, n, seed, a=None, trace=0.2):
    "n rows of the reference design (`dppca_nb.data.datasets.reference_design`), a k = 0.065 unless `a` is given; returns (X, V, Sigma)."
    rng = as_generator(seed)
    Sigma, V = reference_design(p, k, 0.065 / k if a is None else a, trace=trace, random_state=rng)
    return sample_gaussian(Sigma, n, rng), V, Sigma

def bench_kendall(ns=(2000, 5000), p: int = 100, n_fast: int = 20_000, *, repeat: int = 1, seed: int = 0) -> list:
    "Kendall's tau over all pairs (the full U-statistic): fast kernel vs pairwise loop at each n in `ns`, and the fast kernel alone at `n_fast`."
    from dppca_nb.algorithms.kendall import kendall_tau
    rows = []
    for n in ns:
        X = _spiked(p, 3, n, seed)[0]
        tf, Kf = best_time(kendall_tau, X, method="fast", design="full", repeat=repeat)
        tp, Kp = best_time(kendall_tau, X, method="pairwise", design="full", repeat=repeat)
        err = float(np.abs(Kf - Kp).max() / np.abs(Kp).max())
        rows.append(_row("Kendall's tau", f"n={n}, p={p}", "pairwise loop", tp, "fast kernel", tf,
                         f"max relative difference {err:.1e}", max_relative_difference=err))
    if n_fast:
        X = _spiked(p, 3, n_fast, seed)[0]
        c0 = time.process_time()
        tf, _ = best_time(kendall_tau, X, method="fast", design="full", repeat=repeat)   # all pairs (the default above n = 5000: a design)
        cpu = (time.process_time() - c0) / max(1, repeat)
        rows.append(_row("Kendall's tau", f"n={n_fast}, p={p}, all pairs", "", None, "fast kernel alone", tf,
                         f"CPU {cpu:.3g} s per call", 
                         cpu_seconds=cpu))
    return rows

def bench_kendall_design(n: int = 1_000_000, p: int = 40, *, degree: int = 20, k: int = 5, epsilon: float = 1.0,
                         delta: float = 1e-5, n_error: int = 20_000, n_seeds: int = 10, n_full_time: int = 20_000,
                         repeat: int = 3, seed: int = 0) -> list:
    """g-DPPCA over the regular pair design (`design="regular"`): the fit time at `n` against the full U-statistic's
    (measured at `n_full_time`, extrapolated as n^2), and the mean subspace error against the full U-statistic's at
    `n_error` over `n_seeds` data sets (private, and of the noise-free tau), on Gaussian rows of the reference design."""
    from dppca_nb.algorithms.robust import g_dppca
    from dppca_nb.algorithms.kendall import kendall_tau
    from dppca_nb.core.linalg import top_k_eigvecs
    rows = []
    X, V, _ = _spiked(p, k, n_full_time, seed)
    tf, _ = best_time(g_dppca, X, k, epsilon, delta, design="full", random_state=0, repeat=1)
    t_full = tf * (n / n_full_time) ** 2
    X, V, _ = _spiked(p, k, n, seed)
    c0 = time.process_time()
    tr, Vr = best_time(g_dppca, X, k, epsilon, delta, design="regular", degree=degree, random_state=0, repeat=repeat)
    cpu = (time.process_time() - c0) / max(1, repeat)
    rows.append(_row("Kendall's tau design", f"g_dppca fit, n={n:.0e}, p={p}, k={k}, eps={epsilon}",
                     f"full U-statistic (extrapolated as n^2 from n={n_full_time})", t_full, f"regular design, d={degree}",
                     tr, f"CPU {cpu:.3g} s per fit; error {subspace_distance(Vr, V):.3g}",
                     cpu_seconds=cpu, baseline_extrapolated=True))
    from dppca_nb.estimators import RobustKendallPCA                  # the estimator at its defaults (design chosen from n)
    est = RobustKendallPCA(k, epsilon=epsilon, delta=delta, random_state=0)
    c0 = time.process_time()
    te, est = best_time(est.fit, X, repeat=repeat)
    cpu = (time.process_time() - c0) / max(1, repeat)
    rows.append(_row("Kendall's tau design", f"RobustKendallPCA fit, n={n:.0e}, p={p}, k={k}, eps={epsilon}",
                     f"full U-statistic (extrapolated as n^2 from n={n_full_time})", t_full, "RobustKendallPCA().fit (defaults)",
                     te, f"CPU {cpu:.3g} s per fit; error "
                     f"{subspace_distance(est.components_.T, V):.3g}", cpu_seconds=cpu, baseline_extrapolated=True))
    del X
    err = {key: [] for key in ("full", "regular", "full_tau", "regular_tau")}
    t_f, t_r = [], []
    for s in range(n_seeds):
        X, V, _ = _spiked(p, k, n_error, seed + 1 + s)
        for design, times in (("full", t_f), ("regular", t_r)):
            kw = dict(design=design) if design == "full" else dict(design=design, degree=degree)
            t, Vh = best_time(g_dppca, X, k, epsilon, delta, random_state=s, repeat=1, **kw)
            times.append(t)
            err[design].append(subspace_distance(Vh, V))
            err[design + "_tau"].append(subspace_distance(top_k_eigvecs(kendall_tau(X, random_state=s, **kw), k), V))
    m = {key: float(np.mean(v)) for key, v in err.items()}
    ratio, ratio_tau = m["regular"] / m["full"], m["regular_tau"] / m["full_tau"]
    rows.append(_row("Kendall's tau design", f"error, n={n_error}, p={p}, k={k}, eps={epsilon}, {n_seeds} data sets",
                     "full U-statistic", float(np.median(t_f)), f"regular design, d={degree}", float(np.median(t_r)),
                     f"mean error {m['full']:.4f} (full) vs {m['regular']:.4f}: ratio {ratio:.3f}; noise-free tau: {m['full_tau']:.4f} vs {m['regular_tau']:.4f} "
                     f"(ratio {ratio_tau:.3f})", error_full=m["full"], error_regular=m["regular"], error_ratio=ratio,
                     error_full_tau=m["full_tau"], error_regular_tau=m["regular_tau"], error_ratio_tau=ratio_tau))
    return rows

def bench_local(n: int = 100_000, p: int = 40, n_wishart: float = 1e9, *, k: int = 5, epsilon: float = 1.0,
                delta: float = 1e-5, repeat: int = 1, seed: int = 0) -> list:
    "Local model: per-record randomizer vs aggregate shortcut at (n, p); the Wishart path at `n_wishart`."
    from dppca_nb.algorithms.local import local_second_moment, local_second_moment_wishart
    X, V, Sigma = _spiked(p, k, n, seed)
    tp, _ = best_time(local_second_moment, X, epsilon, delta, simulate="per_record", random_state=1, repeat=repeat)
    ta, _ = best_time(local_second_moment, X, epsilon, delta, simulate="aggregate", random_state=1, repeat=repeat)
    tw, _ = best_time(local_second_moment_wishart, Sigma, n_wishart, epsilon, delta, random_state=1, repeat=max(3, repeat))
    return [_row("Local model", f"n={n:.0e}, p={p}", "per-record randomizer", tp, "aggregate shortcut", ta,
                 "same distribution of S_hat"),
            _row("Local model", f"n={n_wishart:.0e}, p={p}", "per-record (extrapolated)", tp * n_wishart / n,
                 "Wishart path", tw, f"per-record time = measured at n={n:.0e} x {n_wishart / n:.0e}")]

def _cvxpy_fps(S, k, lam):
    import cvxpy as cp
    p = S.shape[0]
    X = cp.Variable((p, p), symmetric=True)
    prob = cp.Problem(cp.Maximize(cp.trace(S @ X) - lam * cp.sum(cp.abs(X))),
                      [X >> 0, np.eye(p) - X >> 0, cp.trace(X) == k])
    prob.solve(solver="CLARABEL")
    return float(prob.value)

def fantope_instance(p: int, k: int = 2, s: int = 10, *, noise: float = 0.05, seed: int = 0):
    "A test program for the Fantope solvers: (S, lam) with S = sparse rank-k spike + symmetric Gaussian noise."
    from dppca_nb.privacy.mechanisms import symmetric_gaussian
    rng = as_generator(seed)
    V = np.zeros((p, k)); V[:min(s, p)] = np.linalg.qr(rng.normal(size=(min(s, p), k)))[0]
    S = V @ V.T + symmetric_gaussian(p, noise, rng)
    return S, 2 * noise * math.sqrt(math.log(p))

def bench_fantope(ps=(100, 400), *, k: int = 2, limit_s: float = 300.0, memory_gb: float = 6.0, seed: int = 0) -> list:
    "Fantope ADMM (tol 1e-6) vs cvxpy/Clarabel on the same program at each p; cvxpy under a time and memory limit."
    from dppca_nb.algorithms.fantope import fantope_admm, fantope_objective
    rows = []
    for p in ps:
        S, lam = fantope_instance(p, k, seed=seed)
        ta, res = best_time(fantope_admm, S, k, lam, tol=1e-6)
        obj = fantope_objective(S, res.X, lam)
        r = run_limited(_cvxpy_fps, S, k, lam, limit_s=limit_s, memory_gb=memory_gb)
        if r["status"] == "ok":
            note = f"objective ADMM {obj:.6g}, cvxpy {r['value']:.6g}; ADMM {res.n_iter} iterations"
        else: note = f"cvxpy: {r['status']} ({r['value']}); ADMM objective {obj:.6g}, {res.n_iter} iterations"
        rows.append(_row("Fantope", f"p={p}, k={k}, lambda={lam:.3g}", "cvxpy (Clarabel)", r["seconds"],
                         "fantope_admm", ta, note, objective_method=obj,
                         objective_baseline=r["value"] if r["status"] == "ok" else None))
    return rows

def _fit_sklearn(X, k, epsilon, delta, seed):
    from sklearn.decomposition import PCA
    return PCA(n_components=k, random_state=seed).fit(X).components_.T

def _fit_diffprivlib(X, k, epsilon, delta, seed):
    import warnings
    from diffprivlib.models import PCA
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return PCA(n_components=k, epsilon=epsilon, data_norm=1.0, centered=True, random_state=seed).fit(X).components_.T

def _fit_opendp(X, k, epsilon, delta, seed):
    import opendp.prelude as dp
    dp.enable_features("contrib", "idealized-numerics", "honest-but-curious")
    model = dp.sklearn.decomposition.PCA(epsilon=epsilon, row_norm=1.0, n_samples=X.shape[0], n_features=X.shape[1],
                                          n_components=k)
    certified = float(model.measurement().map(1))                  # the privacy loss OpenDP certifies (before the one fit)
    model.fit(X)
    return np.asarray(model.components_).T, dict(certified_epsilon=certified)

def _fit_analyze_gauss(X, k, epsilon, delta, seed):
    from dppca_nb.algorithms.baselines import analyze_gauss
    return analyze_gauss(X, k, epsilon, delta, random_state=seed)

def _fit_estimator(cls):
    def fit(X, k, epsilon, delta, seed):
        est = cls(n_components=k, epsilon=epsilon, random_state=seed)
        if "delta" in est.get_params(): est.set_params(delta=delta)
        return est.fit(X).components_.T
    fit.__name__ = cls.__name__
    return fit

def _guarantee_label(cls) -> str:
    "The guarantee of an estimator's algorithm, read from the algorithm registry (model and measure)."
    a = cls._algorithm()
    kind = "LDP (local model)" if a.model == "local" else "DP, replace-one"
    return ("eps-DP (pure)" if a.measure == "pure" else "(eps, delta)-" + kind)

def pca_methods() -> list:
    "(name, guarantee, fit function, installed) for every method of the side-by-side comparison."
    out = [("scikit-learn PCA", "not private", _fit_sklearn, True),
           ("analyze_gauss", "(eps, delta)-DP, replace-one", _fit_analyze_gauss, True)]
    try:
        from dppca_nb.estimators import available_estimators
        for name, cls in available_estimators().items():
            if name.endswith("PCA"):
                out.append((name, _guarantee_label(cls), _fit_estimator(cls), True))
    except ImportError: pass
    out += [("diffprivlib PCA", "eps-DP (pure)", _fit_diffprivlib, importlib.util.find_spec("diffprivlib") is not None),
            ("OpenDP PCA", "certifies 2 eps (pure)", _fit_opendp, importlib.util.find_spec("opendp") is not None)]
    return out

def bench_libraries(n: int = 100_000, p: int = 40, ks=(5, 20), epsilons=(0.1, 0.5, 1.0), *, delta: float = 1e-4,
                    reps: int = 3, limit_s: float = 60.0, memory_gb: float = 6.0, methods=None, seed: int = 0) -> list:
    "Time per fit and mean subspace error of each method at each (k, epsilon), every fit in a child under `limit_s`."
    rows = []
    methods = pca_methods() if methods is None else methods
    for k in ks:
        X, V, _ = _spiked(p, k, n, seed)
        for name, guarantee, fit, installed in methods:
            stopped = None
            for eps in epsilons:
                row = dict(method=name, guarantee=guarantee, k=k, epsilon=eps, seconds=None, error=None,
                           random_level=random_subspace_level(p, k), status="ok")
                if not installed: row["status"] = "not installed here"
                elif stopped: row["status"] = f"not run (timed out at eps={stopped})"
                else:
                    times, errs = [], []
                    for rep in range(reps):
                        r = run_limited(fit, X, k, eps, delta, rep, limit_s=limit_s, memory_gb=memory_gb)
                        if r["status"] != "ok":
                            row["status"] = f"{r['status']}: {r['value']}" if r["status"] != "timeout" else f"did not finish within {limit_s:g} s"
                            if times: row["status"] = f"{len(times)} of {reps} fits finished, then: " + row["status"]
                            if r["status"] == "timeout": stopped = eps
                            break
                        Vh, extra = r["value"] if isinstance(r["value"], tuple) else (r["value"], {})
                        row.update(extra)                               # e.g. OpenDP's certified epsilon
                        times.append(r["seconds"]); errs.append(subspace_distance(Vh, V))
                    if times: row.update(seconds=float(np.median(times)), error=float(np.mean(errs)), reps=len(times))
                rows.append(row)
                if name == "scikit-learn PCA" and row["status"] == "ok":        # not private: one eps is enough
                    row["epsilon"] = None
                    break
    return rows

def bench_dask(n: int = 1_000_000, p: int = 50, *, chunk_rows: int = 100_000, n_kendall: int = 5000,
               p_kendall: int = 100, n_workers: int = 2, memory_limit: str = "2GB", processes: bool = True,
               repeat: int = 3, seed: int = 0) -> tuple[list, dict]:
    """Dask on a LocalCluster vs numpy: overhead ratios (rows) and the workers' peak memory on a lazily generated X (dict).

    `memory_limit` applies to worker processes only: with `processes=False` the workers are threads of this process,
    whose whole resident memory Dask would compare with the limit, pausing the workers (for good: a hang) once the
    process, not the work, passes 80% of it; so threads run without a limit."""
    import logging
    import dask.array as da
    from dask.distributed import LocalCluster, Client, wait
    from dppca_nb.backends.statistics import second_moment_sums, worker_memory
    from dppca_nb.algorithms.baselines import analyze_gauss
    from dppca_nb.algorithms.local import local_second_moment
    from dppca_nb.algorithms.kendall import kendall_tau
    second_moment = lambda A: second_moment_sums(A)["M"]            # the exact sum x x^T, one blocked pass
    rows = []
    if not processes: memory_limit = 0                 # 0: no limit, no pausing (see the docstring)
    cluster = LocalCluster(n_workers=n_workers, processes=processes, threads_per_worker=1, memory_limit=memory_limit,
                           dashboard_address=":0", silence_logs=logging.CRITICAL)
    client = Client(cluster)
    def same_data(shape, chunks, scale=1.0):
        "(numpy X, dask X persisted on the workers): the same numbers, generated on the workers and fetched once."
        Xd = client.persist(da.random.default_rng(seed).standard_normal(shape, chunks=chunks) * scale)
        wait(Xd)
        return Xd.compute(), Xd
    try:
        # peak memory: X generated lazily in the tasks, reduced block by block (fresh workers)
        Xl = da.random.default_rng(seed).standard_normal((n, p), chunks=(chunk_rows, p))
        base = worker_memory(client)
        tl, _ = best_time(second_moment, Xl, repeat=1)
        mem = dict(array_mb=Xl.nbytes / 1e6, chunk_mb=chunk_rows * p * 8 / 1e6, memory_limit=memory_limit,
                   n_workers=n_workers, processes=processes, seconds=tl,
                   workers_mb_before={i: round(v[1], 1) for i, v in enumerate(base.values())},
                   workers_peak_mb={i: round(v[1], 1) for i, v in enumerate(worker_memory(client).values())})
        # overhead ratios, the data already in memory on both sides
        X, Xd = same_data((n, p), (chunk_rows, p))
        tn, Mn = best_time(lambda A: A.T @ A, X, repeat=repeat)
        td, Md = best_time(second_moment, Xd, repeat=repeat)
        rel = float(np.abs(Md - Mn).max() / np.abs(Mn).max())
        rows.append(_row("Dask vs numpy", f"X'X, n={n:.0e}, p={p}, {Xd.numblocks[0]} blocks", "numpy X.T @ X", tn,
                         f"Dask, {n_workers} workers", td, f"overhead {td / tn:.2f}x; max relative difference {rel:.1e}",
                         max_relative_difference=rel))
        tn, _ = best_time(analyze_gauss, X, 5, 1.0, 1e-5, random_state=0, repeat=repeat)
        td, _ = best_time(analyze_gauss, Xd, 5, 1.0, 1e-5, random_state=0, repeat=repeat)
        rows.append(_row("Dask vs numpy", f"Analyze Gauss, n={n:.0e}, p={p}", "analyze_gauss (numpy)", tn,
                         "analyze_gauss (dask X)", td, f"overhead {td / tn:.2f}x"))
        m = min(n, 100_000)
        q = min(p, 40)
        Xs, Xsd = same_data((m, q), (max(1, m // (2 * n_workers)), q), 1 / math.sqrt(q))
        tn, _ = best_time(local_second_moment, Xs, 1.0, 1e-5, simulate="per_record", random_state=0, repeat=1)
        td, _ = best_time(local_second_moment, Xsd, 1.0, 1e-5, random_state=0, repeat=1)   # per record, in the partitions
        rows.append(_row("Dask vs numpy", f"local model per record, n={m:.0e}, p={Xs.shape[1]}",
                         "local_second_moment (per_record)", tn, "local_second_moment (dask X)", td, f"overhead {td / tn:.2f}x"))
        if n_kendall:
            Xk, Xkd = same_data((n_kendall, p_kendall), (math.ceil(n_kendall / 4), p_kendall))
            tn, Kn = best_time(kendall_tau, Xk, repeat=1)
            td, Kd = best_time(kendall_tau, Xkd, repeat=1)
            rel = float(np.abs(Kd - Kn).max() / np.abs(Kn).max())
            rows.append(_row("Dask vs numpy", f"Kendall's tau, n={n_kendall}, p={p_kendall}, 4 blocks (10 tasks)",
                             "kendall_tau (numpy)", tn, "kendall_tau (dask X)", td,
                             f"overhead {td / tn:.2f}x (a cross-block kernel per block pair: every pair once); max relative difference {rel:.1e}",
                             max_relative_difference=rel))
        del Xd, Xsd, X
    finally:
        client.close(); cluster.close()
    return rows, mem

def bingham3_mean(eigenvalues, nx: int = 200, nphi: int = 400) -> float:
    "Exact E[u'Au] of the d = 3 Bingham law with density ~ exp(-u'Au), A with the given eigenvalues, by quadrature."
    lam = np.sort(np.asarray(eigenvalues, dtype=float)); lam = lam - lam[0]
    x, wx = np.polynomial.legendre.leggauss(nx)
    phi = np.arange(nphi) * 2 * np.pi / nphi
    X_, P_ = np.meshgrid(x, phi, indexing="ij")
    t = (1 - X_ ** 2) * (lam[1] * np.cos(P_) ** 2 + lam[2] * np.sin(P_) ** 2)
    w = wx[:, None] * np.exp(-t)
    return float((w * t).sum() / w.sum()) + float(np.sort(eigenvalues)[0])

def _draw_ours(A, n, seed):
    from dppca_nb.privacy.samplers import bingham_sample
    return bingham_sample(A, seed, size=n)

def _draw_diffprivlib(A, n, seed):
    from diffprivlib.mechanisms import Bingham
    C = np.linalg.eigvalsh(A).max() * np.eye(len(A)) - A
    mech = Bingham(epsilon=4.0, sensitivity=1.0, random_state=seed)
    return np.array([mech.randomise(C) for _ in range(n)])

def _draw_opendp(A, n, seed):
    import opendp.prelude as dp
    from opendp.extras.numpy import _sscp_domain
    from opendp.extras.sklearn._make_eigenvector import make_private_eigenvector
    dp.enable_features("contrib", "idealized-numerics", "honest-but-curious")
    C = np.linalg.eigvalsh(A).max() * np.eye(len(A)) - A
    meas = make_private_eigenvector(_sscp_domain(norm=1.0, p=2, num_features=len(A)), dp.symmetric_distance(), 4.0)
    return np.array([meas(C) for _ in range(n)])                       # OpenDP's CSPRNG: not seedable

def bench_bingham(eigenvalues=(0.0, 1.0, 3.0), n_draws: int = 5000, *, limit_s: float = 120.0, seed: int = 0) -> dict:
    "Mean of u'Au of each sampler (ours, diffprivlib's, OpenDP's) against the exact d = 3 Bingham value; each under `limit_s`."
    Q = random_orthonormal(3, 3, seed)
    A = Q @ np.diag(np.asarray(eigenvalues, dtype=float)) @ Q.T
    exact = bingham3_mean(eigenvalues)
    rows = []
    for name, draw in (("dppca_nb.privacy.samplers.bingham_sample", _draw_ours), ("diffprivlib mechanisms.Bingham", _draw_diffprivlib),
                       ("OpenDP make_private_eigenvector", _draw_opendp)):
        r = run_limited(draw, A, n_draws, seed + 1, limit_s=limit_s)
        row = dict(sampler=name, status=r["status"] if r["status"] != "timeout" else f"did not finish within {limit_s:g} s",
                   draws=None, seconds=r["seconds"], mean=None, se=None, z=None)
        if r["status"] == "not installed": row["status"] = "not installed here"
        elif r["status"] == "ok":
            t = np.einsum("ij,jk,ik->i", r["value"], A, r["value"])
            se = float(t.std(ddof=1) / math.sqrt(len(t)))
            row.update(draws=len(t), mean=float(t.mean()), se=se, z=float((t.mean() - exact) / se))
        elif r["status"] != "timeout": row["status"] = f"{r['status']}: {r['value']}"
        rows.append(row)
    return dict(d=3, eigenvalues=list(map(float, eigenvalues)), exact_mean=exact, n_draws=n_draws, rows=rows)

def _fmt_v(v): return f"{v:.4g}" if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) else str(v)

def bench_explorers(repeat: int = 3) -> list:
    "The redraw of each explorer of `widgets.explorers()` after its first slider moves: best wall and CPU time of `repeat` probes."
    from dppca_nb.core.validation import check_int
    from dppca_nb.teach.widgets import explorers, probe_explorer
    repeat = check_int(repeat, "repeat")
    rows = []
    for name in explorers():
        probes = [probe_explorer(name, slider=0) for _ in range(repeat)]
        p0 = probes[0]
        wall, cpu = min(r["seconds"] for r in probes), min(r["cpu_seconds"] for r in probes)
        changed = all(r["changed"] for r in probes)
        rows.append(_row("Explorers", f"{name}: {p0['slider']} {_fmt_v(p0['from'])} -> {_fmt_v(p0['to'])}", None, None,
                         "redraw (compute + PNG)", wall,
                         f"CPU {_fmt_t(cpu)}; best of {repeat}; under 1 s of CPU: {'yes' if cpu < 1 else 'no'}"
                         + ("" if changed else "; the figure did NOT change"),
                         cpu_seconds=cpu, slider=p0["slider"], changed=changed, repeat=repeat))
    return rows

def _interleaved_best(fns, repeat: int) -> tuple[dict, dict]:
    """Best wall-clock and best CPU (process) seconds of each (name, fn) over `repeat` interleaved rounds: on a busy
    machine both sides of a ratio meet the same load, and the CPU time leaves out the waits for a processor."""
    best = {name: math.inf for name, _ in fns}
    cpu = dict(best)
    for _ in range(max(1, int(repeat))):
        for name, fn in fns:
            c, t = time.process_time(), time.perf_counter(); fn()
            best[name] = min(best[name], time.perf_counter() - t); cpu[name] = min(cpu[name], time.process_time() - c)
    return best, {k: max(v, 1e-9) for k, v in cpu.items()}

def _peak_extra(fn, *args, **kwargs) -> int:
    "Peak bytes allocated (tracemalloc: numpy's buffers included) while fn(*args, **kwargs) runs, above what was held before."
    import tracemalloc
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn(*args, **kwargs)
        return max(0, tracemalloc.get_traced_memory()[1] - base)
    finally:
        tracemalloc.stop()

def bench_fit_cost(n: int = 1_000_000, p: int = 20, *, k: int = 5, epsilon: float = 1.0, delta: float = 1e-5,
                   repeat: int = 5, seed: int = 0) -> list:
    """The cost of a central fit at the machine's limit: each method's time over one `X.T @ X` on the same float64
    array (the floor: every method needs that product) and its extra peak memory over the data's size."""
    from sklearn.decomposition import PCA
    from dppca_nb.backends.statistics import second_moment_sums
    from dppca_nb.algorithms.baselines import analyze_gauss
    from dppca_nb.estimators import AnalyzeGaussPCA
    X = _spiked(p, k, n, seed)[0]                               # E||x||^2 = 0.2: a few rows over the radius 1
    methods = [("second_moment_sums(radius=1)", lambda: second_moment_sums(X, radius=1.0)),
               ("second_moment_sums(radius=1, center=)", lambda: second_moment_sums(X, radius=1.0, center=np.full(p, 0.01))),
               ("analyze_gauss", lambda: analyze_gauss(X, k, epsilon, delta, random_state=0)),
               ("AnalyzeGaussPCA(centering='none').fit", lambda: AnalyzeGaussPCA(k, epsilon=epsilon, delta=delta, centering="none", random_state=0).fit(X)),
               ("AnalyzeGaussPCA().fit (private centering)", lambda: AnalyzeGaussPCA(k, epsilon=epsilon, delta=delta, random_state=0).fit(X)),
               ("scikit-learn PCA(svd_solver='covariance_eigh').fit", lambda: PCA(k, svd_solver="covariance_eigh").fit(X))]
    fns = [("one X.T @ X", lambda: X.T @ X)] + methods
    best, cpu = _interleaved_best(fns, repeat)
    t0, c0 = best["one X.T @ X"], cpu["one X.T @ X"]
    rows = []
    for name, fn in methods:
        mem = _peak_extra(fn) / X.nbytes
        ratio, cratio = best[name] / t0, cpu[name] / c0
        rows.append(_row("Fit cost", f"n={n:.0e}, p={p}, float64", "one X.T @ X", t0, name, best[name],
                         f"{ratio:.2f}x one X.T @ X (CPU time: {cratio:.2f}x); extra peak memory {mem:.2f}x the data",
                         cost_ratio=ratio, cpu_ratio=cratio, memory_ratio=mem))
    return rows

def bench_private_radius(sizes=((100_000, 40), (1_000_000, 20)), *, k: int = 5, epsilon: float = 1.0,
                         delta: float = 1e-5, repeat: int = 5, seed: int = 0) -> list:
    """The cost of a private clipping bound: `AnalyzeGaussPCA(radius="private")` against the same estimator with the
    fixed radius 1 (a few rows clipped) on the same array, in interleaved rounds, at each (n, p) of `sizes` (the
    reference design): without centering (one private radius) and at the defaults (private centering: a private
    radius for the mean's rows and one for the centered rows)."""
    import warnings
    from dppca_nb.estimators import AnalyzeGaussPCA
    cases = [("AnalyzeGaussPCA(centering='none', radius={}).fit", dict(centering="none")),
             ("AnalyzeGaussPCA(radius={}).fit (private centering)", {})]
    rows = []
    for n, p in sizes:
        X = _spiked(p, k, n, seed)[0]                           # E||x||^2 = 0.2: the private radius is about 0.9
        def fit(X=X, **kw):                                 # this size's array, bound now
            def f():
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")             # a ClippingWarning is not what is timed
                    return AnalyzeGaussPCA(k, epsilon=epsilon, delta=delta, random_state=0, **kw).fit(X)
            return f
        fns = [(name.format(repr(r)), fit(radius=r, **kw)) for name, kw in cases for r in (1.0, "private")]
        best, cpu = _interleaved_best(fns, repeat)
        for name, _ in cases:
            a, b = name.format(repr(1.0)), name.format(repr("private"))
            ratio, cratio = best[b] / best[a], cpu[b] / cpu[a]
            rows.append(_row("Private radius", f"n={n:.0e}, p={p}, k={k}, float64", a, best[a], b, best[b],
                             f"{ratio:.2f}x the fixed-radius fit (CPU time: {cratio:.2f}x)",
                             cost_ratio=ratio, cpu_ratio=cratio))
        del X
    return rows

def bench_local_randomizer(n: int = 100_000, p: int = 40, *, epsilon: float = 1.0, delta: float = 1e-5,
                           repeat: int = 3, seed: int = 0) -> list:
    """The local model's per-record path over the normal-variate floor: drawing the same n p(p+1)/2 variates alone
    (into one reused chunk buffer, the cheapest way), against the streamed reports (noise, triangular products, sums)."""
    from dppca_nb.algorithms.local import local_second_moment, REPORT_CHUNK_ENTRIES
    X = _spiked(p, 3, n, seed)[0]
    d = p * (p + 1) // 2
    m = max(1, REPORT_CHUNK_ENTRIES // d)
    def floor():
        rng, buf = np.random.default_rng(1), np.empty((m, d))
        for i in range(0, n, m): rng.standard_normal(out=buf[:min(m, n - i)])
    fns = [("floor", floor)] + [(f"per_record, noise_shape={s!r}", lambda s=s: local_second_moment(
        X, epsilon, delta, simulate="per_record", noise_shape=s, random_state=1)) for s in ("vecd", "upper")]
    best, cpu = _interleaved_best(fns, repeat)
    rows = []
    for name, fn in fns[1:]:
        ratio, cratio = best[name] / best["floor"], cpu[name] / cpu["floor"]
        mem = _peak_extra(fn)
        rows.append(_row("Local randomizer", f"n={n:.0e}, p={p} ({n * d:.1e} variates)", "normal variates alone",
                         best["floor"], name, best[name],
                         f"{ratio:.2f}x the floor (CPU time: {cratio:.2f}x); streaming: peak {mem / 1e6:.1f} MB "
                         f"(all reports at once: {n * d * 8 / 1e6:.0f} MB)", cost_ratio=ratio, cpu_ratio=cratio, peak_bytes=mem))
    return rows

def bench_accuracy(n: int = 100_000, p: int = 40, *, k: int = 5, epsilon: float = 1.0, delta: float = 1e-4,
                   n_fits: int = 10, n_smooth: int = 300_000, smooth_fits: int = 10, seed: int = 0) -> list:
    """Mean subspace error ||V_hat V_hat' - V V'||_F over `n_fits` fits (seeds 0, 1, ...) on the reference design (one data
    set, as in `bench_libraries`): AnalyzeGaussPCA at its defaults and with centering="none", scikit-learn's PCA (not
    private), and SmoothSensitivityPCA at `n_smooth` rows over `smooth_fits` fits; time: median per fit."""
    from sklearn.decomposition import PCA
    from dppca_nb.estimators import AnalyzeGaussPCA, SmoothSensitivityPCA
    rows = []
    def measure(X, V, make, fits):
        errs, times = [], []
        for s in range(fits):
            est = make(s)
            t = time.perf_counter(); est.fit(X); times.append(time.perf_counter() - t)
            errs.append(subspace_distance(est.components_.T, V))
        return float(np.mean(errs)), float(np.std(errs, ddof=1)) if fits > 1 else float("nan"), float(np.median(times))
    X, V, _ = _spiked(p, k, n, seed)
    e_sk, _, t_sk = measure(X, V, lambda s: PCA(k, random_state=s), 1)
    cases = [("AnalyzeGaussPCA() (defaults: private centering)", X, V, n,
              lambda s: AnalyzeGaussPCA(k, epsilon=epsilon, delta=delta, random_state=s), n_fits),
             ("AnalyzeGaussPCA(centering='none')", X, V, n,
              lambda s: AnalyzeGaussPCA(k, epsilon=epsilon, delta=delta, centering="none", random_state=s), n_fits)]
    if n_smooth:
        Xs, Vs, _ = _spiked(p, k, n_smooth, seed)
        cases.append(("SmoothSensitivityPCA() (defaults)", Xs, Vs, n_smooth,
                      lambda s: SmoothSensitivityPCA(k, epsilon=epsilon, delta=delta, random_state=s), smooth_fits))
    for name, Xc, Vc, m, make, fits in cases:
        err, sd, t = measure(Xc, Vc, make, fits)
        rows.append(_row("Accuracy", f"n={m:.0e}, p={p}, k={k}, eps={epsilon}, delta={delta:g}, {fits} fits", None, None,
                         name, t, f"mean error {err:.4f} (s.d. {sd:.3f} over fits); not private at n={n:.0e}: {e_sk:.4f}; "
                         f"random guess {random_subspace_level(p, k):.3g}", error=err, error_sd=sd, n_fits=fits,
                         error_not_private=e_sk, seconds_not_private=t_sk))
    return rows

def bench_adaptive_fit(n: int = 100_000, p: int = 100, *, epsilon: float = 1.0, delta: float = 1e-5, repeat: int = 5,
                       seed: int = 0) -> list:
    """The adaptive DP-PCA's fit (`algorithms.adaptive`) over one `X.T @ X` on the same float64 array, in interleaved
    rounds: `adaptive_dp_pca` (k = 1, the secret shuffle: one gather of the rows), the same with shuffle=False (one
    streaming pass over row blocks), `adaptive_dp_kpca` at k = 3 at its default (one block run of p x 3 iterates) and
    with subspace='deflation' (three runs), and `AdaptiveNoisePCA` at its defaults (private centering, and the
    ordering step whose variances its expected error runs on), with order_share=0 (no expected error) and with
    centering='none'. The algorithm's rows also give the cost per pass over the rows: the ratio over the default
    n_passes (the warm start's read of its share of the rows counted in)."""
    import inspect
    from dppca_nb.algorithms.adaptive import adaptive_dp_pca, adaptive_dp_kpca
    from dppca_nb.estimators import AdaptiveNoisePCA
    X = _spiked(p, 1, n, seed)[0]
    passes = int(inspect.signature(adaptive_dp_kpca).parameters["n_passes"].default)
    methods = [("adaptive_dp_pca (k=1)", lambda: adaptive_dp_pca(X, 1, epsilon, delta, random_state=0)),
               ("adaptive_dp_pca (k=1, shuffle=False)", lambda: adaptive_dp_pca(X, 1, epsilon, delta, shuffle=False, random_state=0)),
               ("adaptive_dp_kpca (k=3, block: the default)", lambda: adaptive_dp_kpca(X, 3, epsilon, delta, random_state=0)),
               ("adaptive_dp_kpca (k=3, deflation)", lambda: adaptive_dp_kpca(X, 3, epsilon, delta, subspace="deflation",
                                                                            random_state=0)),
               ("AdaptiveNoisePCA(1, centering='none', order_share=0).fit", lambda: AdaptiveNoisePCA(
                   1, epsilon=epsilon, delta=delta, centering="none", order_share=0.0, random_state=0).fit(X)),
               ("AdaptiveNoisePCA(1, order_share=0).fit (private centering)", lambda: AdaptiveNoisePCA(
                   1, epsilon=epsilon, delta=delta, order_share=0.0, random_state=0).fit(X)),
               ("AdaptiveNoisePCA(1).fit (defaults: the expected error simulated)", lambda: AdaptiveNoisePCA(
                   1, epsilon=epsilon, delta=delta, random_state=0).fit(X))]
    best, cpu = _interleaved_best([("one X.T @ X", lambda: X.T @ X)] + methods, repeat)
    t0, c0 = best["one X.T @ X"], cpu["one X.T @ X"]
    rows = []
    for name, fn in methods:
        ratio, cratio = best[name] / t0, cpu[name] / c0
        mem = _peak_extra(fn) / X.nbytes
        per = ratio / passes if name.startswith("adaptive_dp") else None
        rows.append(_row("Adaptive fit cost", f"n={n:.0e}, p={p}, float64", "one X.T @ X", t0, name, best[name],
                         f"{ratio:.2f}x one X.T @ X (CPU time: {cratio:.2f}x)" +
                         ("" if per is None else f", {per:.2f}x per pass ({passes} passes)") +
                         f"; extra peak memory {mem:.2f}x the data",
                         cost_ratio=ratio, cpu_ratio=cratio, memory_ratio=mem, n_passes=passes if per else None,
                         per_pass_ratio=per))
    return rows

SIZES = {
    "full": dict(kendall=dict(ns=(2000, 5000), p=100, n_fast=20_000),
                 kendall_design=dict(n=1_000_000, p=40, n_error=20_000, n_seeds=10),
                 local=dict(n=100_000, p=40, n_wishart=1e9),
                 fantope=dict(ps=(100, 400), limit_s=900.0),          # a guard against runaways: cvxpy takes ~240 s at p=100 unloaded
                 libraries=dict(n=100_000, p=40, ks=(5, 20), epsilons=(0.1, 0.5, 1.0), reps=3, limit_s=60.0),
                 dask=dict(n=1_000_000, p=50, chunk_rows=100_000, n_kendall=5000, p_kendall=100),
                 bingham=dict(n_draws=5000, limit_s=120.0),
                 explorers=dict(repeat=3),
                 fit_cost=dict(n=1_000_000, p=20, repeat=9),
                 private_radius=dict(sizes=((100_000, 40), (1_000_000, 20)), repeat=9),
                 local_randomizer=dict(n=100_000, p=40, repeat=5),
                 accuracy=dict(n=100_000, p=40, n_fits=10, n_smooth=300_000, smooth_fits=10),
                 adaptive=dict(n=100_000, p=100, repeat=5)),
    "small": dict(kendall=dict(ns=(200, 400), p=20, n_fast=2000),
                  kendall_design=dict(n=20_000, p=10, n_error=1000, n_seeds=2, n_full_time=1000, repeat=1),
                  local=dict(n=5000, p=10, n_wishart=1e9),
                  fantope=dict(ps=(10, 20), limit_s=60.0),
                  libraries=dict(n=5000, p=10, ks=(2,), epsilons=(0.5,), reps=1, limit_s=30.0),
                  dask=dict(n=50_000, p=10, chunk_rows=10_000, n_kendall=400, p_kendall=10, processes=False, repeat=1),
                  bingham=dict(n_draws=500, limit_s=60.0),
                  explorers=dict(repeat=1),
                  fit_cost=dict(n=20_000, p=10, repeat=1),
                  private_radius=dict(sizes=((20_000, 10),), repeat=1),
                  local_randomizer=dict(n=2000, p=10, repeat=1),
                  accuracy=dict(n=5000, p=10, k=2, n_fits=2, n_smooth=10_000, smooth_fits=2),
                  adaptive=dict(n=20_000, p=20, repeat=1)),
}

SECTIONS = ("kendall", "kendall_design", "local", "fantope", "libraries", "dask", "bingham", "explorers", "fit_cost",
            "private_radius", "local_randomizer", "accuracy", "adaptive")

def run_all(size: str = "full", *, blas_threads: int = 1, sections=SECTIONS, log=print) -> dict:
    "Run the benchmark sections at `size` ('full' or 'small') under `blas_threads` BLAS threads; a dict for `results_markdown`."
    from threadpoolctl import threadpool_limits
    from dppca_nb.core.validation import check_choice
    check_choice(size, "size", tuple(SIZES))
    funcs = dict(kendall=bench_kendall, kendall_design=bench_kendall_design, local=bench_local, fantope=bench_fantope, libraries=bench_libraries, dask=bench_dask,
                 bingham=bench_bingham, explorers=bench_explorers, fit_cost=bench_fit_cost,
                 private_radius=bench_private_radius, local_randomizer=bench_local_randomizer, accuracy=bench_accuracy,
                 adaptive=bench_adaptive_fit)
    for s in sections: check_choice(s, "sections", SECTIONS)
    out = dict(size=size, rows=[], pca=[], dask_memory=None, bingham=None, seconds={})
    with threadpool_limits(limits=blas_threads, user_api="blas"):
        out["machine"] = machine_info(blas_threads)
        for s in sections:
            t = time.perf_counter()
            if log: log(f"[benchmarks] {s} ...")
            res = funcs[s](**SIZES[size][s])
            if s == "libraries": out["pca"] = res
            elif s == "dask": out["rows"] += res[0]; out["dask_memory"] = res[1]
            elif s == "bingham": out["bingham"] = res
            else: out["rows"] += res
            out["seconds"][s] = round(time.perf_counter() - t, 1)
            if log: log(f"[benchmarks] {s} done in {out['seconds'][s]} s")
    return out

_ROW_SECTION = {"Kendall's tau": "kendall", "Kendall's tau design": "kendall_design", "Local model": "local", "Fantope": "fantope", "Dask vs numpy": "dask",
                "Explorers": "explorers", "Fit cost": "fit_cost", "Private radius": "private_radius", "Local randomizer": "local_randomizer", "Accuracy": "accuracy",
                "Adaptive fit cost": "adaptive"}

def merge_results(old: dict, new: dict) -> dict:
    """`old` with the sections that `new` ran replaced by `new`'s results (rows kept in section order); the
    environment of each merged section (`new`'s machine, versions, date) is stored under `environments`."""
    out = json.loads(json.dumps(old, default=str))                     # a deep copy
    ran = [s for s in SECTIONS if s in new["seconds"]]
    keep = [r for r in out["rows"] if _ROW_SECTION.get(r["section"]) not in ran]
    added = [r for r in new["rows"] if _ROW_SECTION.get(r["section"]) in ran]
    order = {s: i for i, s in enumerate(SECTIONS)}
    out["rows"] = sorted(keep + added, key=lambda r: order[_ROW_SECTION.get(r["section"], "dask")])   # stable sort
    if "libraries" in ran: out["pca"] = new["pca"]
    if "dask" in ran: out["dask_memory"] = new["dask_memory"]
    if "bingham" in ran: out["bingham"] = new["bingham"]
    out.setdefault("environments", {})
    for s in ran:
        out["seconds"][s] = new["seconds"][s]
        out["environments"][s] = new["machine"]
    return out

def _env_line(res: dict, section: str) -> list:
    "A line stating the environment of a section merged from another run (empty if it ran with the rest)."
    m = res.get("environments", {}).get(section)
    if not m: return []
    blas = "; ".join(f"{b['api']} {b['version']} ({b['architecture']}), {b['threads']} thread(s)" for b in m["blas"])
    return [f"**Measured separately**, {m['date']}, and merged with `benchmarks/run.py --merge` (or `--merge-from`); its environment: "
            f"Python {m['python']}, " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) +
            f"; BLAS {blas}; load average at start {m['load_average'][0]}.", ""]

def rows_markdown(res: dict, sections=None) -> str:
    "The rows of a `run_all` result as a markdown table; `sections`: only the rows of these sections (`SECTIONS` names)."
    L = ["| section | case | baseline | time | method | time | speed-up | note |", "|---|---|---|---|---|---|---|---|"]
    for r in res["rows"]:
        if sections is not None and _ROW_SECTION.get(r["section"]) not in sections: continue
        sp = "–" if r.get("speedup") is None else f"{r['speedup']:.3g}x"
        L.append(f"| {r['section']} | {r['case']} | {r.get('baseline') or '–'} | {_fmt_t(r.get('t_baseline'))} | {r['method']} | "
                 f"{_fmt_t(r['t_method'])} | {sp} | {r['note']} |")
    return "\n".join(L)

def run_line(res: dict, section: str) -> str:
    "When, where and under how many BLAS threads the rows of `section` were measured (its own run if merged)."
    m = res.get("environments", {}).get(section) or res["machine"]
    blas = ", ".join(sorted({f"{b['api']} {b['threads']} thread(s)" for b in m["blas"]}))
    return (f"Measured {m['date']} on {m['cpu']}, {m['cores']} cores (load average {m['load_average'][0]} at the start); "
            f"BLAS limited to {m['blas_threads']} thread(s) with threadpoolctl ({blas}).")

def section_markdown(res: dict, section: str) -> str:
    "The rows of one section (a `SECTIONS` name) as a markdown table, after the line that says when and how they were measured."
    return run_line(res, section) + "\n\n" + rows_markdown(res, [section])

def pca_markdown(res: dict, k=None) -> str:
    "The side-by-side private PCA rows of a `run_all` result as a markdown table; `k`: only the rows at that k."
    L = ["| method | guarantee | k | epsilon | time per fit | error | random guess | status |", "|---|---|---|---|---|---|---|---|"]
    for r in res["pca"]:
        if k is not None and r["k"] != k: continue
        e = "–" if r["error"] is None else f"{r['error']:.3g}"
        st = r["status"] + (f"; certifies eps = {r['certified_epsilon']:.3g}" if r.get("certified_epsilon") is not None else "")
        L.append(f"| {r['method']} | {r['guarantee']} | {r['k']} | {'–' if r['epsilon'] is None else r['epsilon']} | "
                 f"{_fmt_t(r['seconds'])} | {e} | {r['random_level']:.3g} | {st} |")
    return "\n".join(L)

def results_markdown(res: dict) -> str:
    "The markdown report of a `run_all` result: machine, the ratio table, the PCA comparison, the Dask memory."
    m = res["machine"]
    blas = "; ".join(f"{b['api']} {b['version']} ({b['architecture']}), {b['threads']} thread(s)" for b in m["blas"])
    L = [f"# Benchmarks ({res['size']} run)", "",
         ("The first run: " if res.get("environments") else "Measured ") +
         f"{m['date']} on {m['cpu']}, {m['cores']} cores, {m['memory_gb']} GB memory (shared machine; load average at "
         f"start {m['load_average'][0]}); Python {m['python']}, " + ", ".join(f"{k} {v}" for k, v in m["versions"].items()) + ".",
         f"BLAS: {blas}; limited to {m['blas_threads']} thread(s) with threadpoolctl. Dask workers: one thread each.",
         "Each row is measured side by side in one run; speed-up = baseline time / method time (best of the repeats)." +
         (" Sections merged from later runs (`--merge`) say when, and under what load, below the table." if res.get("environments") else ""),
         "Produced by `python benchmarks/run.py`; explained in `nbs/10_benchmarks/00_benchmarks.ipynb`.", "",
         "## All rows", "", rows_markdown(res)]
    for s in SECTIONS:                                                # row sections merged from another run: when, under what load
        m = res.get("environments", {}).get(s)
        names = sorted({r["section"] for r in res["rows"] if _ROW_SECTION.get(r["section"]) == s})
        if m and names:
            L += ["", f"Rows of {', '.join(names)}: **measured separately**, {m['date']} on {m['cores']} cores (load average at "
                  f"start {m['load_average'][0]}: other jobs shared the machine), and merged with `benchmarks/run.py --merge`."]
    if res.get("pca"):
        L += ["", "## Private PCA side by side", ""] + _env_line(res, "libraries") + [
              "Reference design: Sigma = a VV' + b I, E||x||^2 = 0.2, a k = 0.065; delta = 1e-4 for the (eps, delta) methods; "
              "estimators at their defaults. Error: mean ||V_hat V_hat' - V V'||_F over the repetitions; time: median per fit. "
              "The guarantees differ (pure eps-DP vs (eps, delta)-DP vs local DP): compare errors within a guarantee. "
              "OpenDP's PCA certifies 2 eps for a requested eps (`measurement().map(1)`, read before each fit and given in "
              "the status column); its rows are listed at the requested eps.", "", pca_markdown(res)]
    d = res.get("dask_memory")
    if d:
        L += ["", "## Dask: memory", "",
              f"X'X of a {d['array_mb']:.0f} MB array generated lazily in {d['chunk_mb']:.0f} MB blocks on {d['n_workers']} "
              f"{'worker processes' if d['processes'] else 'worker threads (one process)'} (memory limit {d['memory_limit'] or 'none'} each), "
              f"{_fmt_t(d['seconds'])}: peak resident memory per worker {', '.join(f'{v:.0f} MB' for v in d['workers_peak_mb'].values())} "
              f"(before the run: {', '.join(f'{v:.0f} MB' for v in d['workers_mb_before'].values())}); the array never exists in full."]
    b = res.get("bingham")
    if b:
        L += ["", "## The libraries' Bingham samplers", ""] + _env_line(res, "bingham") + [
              f"d = {b['d']}, A = Q diag({', '.join(f'{v:g}' for v in b['eigenvalues'])}) Q' (random rotation Q), density ~ exp(-u'Au); "
              f"exact E[u'Au] = {b['exact_mean']:.4f} by numerical integration; up to {b['n_draws']} draws per sampler; "
              "z = (mean - exact) / standard error (|z| > 4: not the Bingham law). Explained in `nbs/10_benchmarks/00_benchmarks.ipynb`, section 6.", "",
              "| sampler | draws | time | mean of u'Au (± s.e.) | z | status |", "|---|---|---|---|---|---|"]
        for r in b["rows"]:
            mean = "–" if r["mean"] is None else f"{r['mean']:.4f} ± {r['se']:.4f}"
            z = "–" if r["z"] is None else f"{r['z']:.1f}"
            L.append(f"| {r['sampler']} | {r['draws'] or '–'} | {_fmt_t(r['seconds'])} | {mean} | {z} | {r['status']} |")
    L += ["", "Section times: " + ", ".join(f"{k} {v} s" for k, v in res["seconds"].items()) + "."]
    return "\n".join(L) + "\n"

def load_results(path=None) -> dict | None:
    "The last full run stored by `benchmarks/run.py` (benchmarks/results.json), or None if absent."
    from pathlib import Path
    path = Path(__file__).resolve().parent / "results.json" if path is None else Path(path)
    return json.loads(path.read_text()) if path.exists() else None

def speedup_figure(res: dict):
    "Horizontal bars of the speed-ups of a `run_all` result (log scale), one per row with a ratio."
    import matplotlib.pyplot as plt
    rows = [r for r in res["rows"] if r["speedup"]]
    fig, ax = plt.subplots(figsize=(7, 0.35 * len(rows) + 1.2))
    y = np.arange(len(rows))[::-1]
    colors = {"Kendall's tau": "C0", "Local model": "C1", "Fantope": "C2", "Dask vs numpy": "C3"}
    ax.barh(y, [r["speedup"] for r in rows], color=[colors.get(r["section"], "C4") for r in rows])
    ax.set_yticks(y, [f"{r['method']} vs {r['baseline']}\n{r['case']}" for r in rows], fontsize=7)
    ax.set_xscale("log"); ax.axvline(1, color="k", lw=0.8)
    ax.set_xlabel("speed-up = baseline time / method time (log scale)")
    ax.set_title(f"{res['size']} run, {res['machine']['cores']} cores, {res['machine']['blas_threads']} BLAS thread(s)", fontsize=9)
    fig.tight_layout()
    return fig
