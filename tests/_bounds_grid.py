"""A fixed grid of the theory layer's numbers (every registered bound, with its options varied, and the rates and study
predictions that read a noise scale), and the reference values it had: `tests/data/bounds_reference.json`.

    python tests/_bounds_grid.py --write      # write the reference (done once, before a refactor of the theory layer)

tests/test_bounds.py recomputes the grid and asks for the same numbers, bit for bit (same inputs, same floats).
"""
import json
import sys
from pathlib import Path

import numpy as np

REFERENCE = Path(__file__).resolve().parent / "data" / "bounds_reference.json"

LAM10 = [0.05, 0.05] + [0.01] * 8
LAM12 = [0.2] + [0.1] * 11
LAM_SM = [0.1] + [0.02] * 9
LAM_G = [10.0, 10.0] + [1.0] * 8


def _settings():
    "(label, method, n, p, k, epsilon, delta, options) of every point of the grid."
    from dppca_nb.data.datasets import block_covariance
    S12 = block_covariance(12, 3, correlation=0.6, trace=0.2).tolist()
    out = []
    for m in ("analyze_gauss", "local_gaussian_pca"):
        big = 10 ** 6 if m == "analyze_gauss" else 10 ** 10
        for n in (10 ** 3, big):
            for eps, dlt in ((0.5, 1e-4), (2.0, 1e-6)):
                out.append((m, n, 10, 2, eps, dlt, dict(eigenvalues=LAM10)))
        out.append((m, big, 10, 2, 0.5, 1e-4, dict(eigenvalues=LAM10, noise_shape="upper")))
        out.append((m, big, 10, 2, 0.5, 1e-4, dict(eigenvalues=LAM10, sensitivity_rule="paper")))
        out.append((m, big, 10, 2, 0.5, 1e-4, dict(eigenvalues=LAM10, sensitivity_rule="loose", calibration="classic")))
        out.append((m, 10 ** 4, 10, 2, 0.5, 1e-4, dict(eigenvalues=LAM10, data="clipped")))
    for n in (300, 3000, 10 ** 4):
        out.append(("g_dppca", n, 10, 2, 1.0, 1e-5, dict(eigenvalues=LAM_G)))
    out.append(("g_dppca", 1000, 10, 2, 1.0, 1e-5, dict(eigenvalues=LAM_G, design="regular")))
    out.append(("g_dppca", 1000, 10, 2, 1.0, 1e-5, dict(eigenvalues=LAM_G, design="regular", degree=8)))
    out.append(("g_dppca", 3000, 10, 2, 1.0, 1e-5, dict(eigenvalues=LAM_G, sensitivity_rule="paper", data="elliptical")))
    out.append(("g_dppca", 3000, 10, 2, 0.5, 1e-5, dict(eigenvalues=LAM_G, calibration="classic")))
    out.append(("smooth_gaussian", 10 ** 5, 10, 1, 1.0, 1e-5, dict(eigenvalues=LAM_SM)))
    out.append(("smooth_cauchy", 10 ** 5, 10, 1, 1.0, 0.0, dict(eigenvalues=LAM_SM)))
    out.append(("smooth_sensitivity_pca", 10 ** 4, 10, 1, 1.0, 1e-5, dict(eigenvalues=LAM_SM, constants="paper")))
    for n in (10 ** 3, 10 ** 5):
        out.append(("dp_threshold", n, 12, None, 1.0, 1e-5, dict(Sigma=S12)))
    out.append(("dp_threshold", 10 ** 4, 12, None, 0.5, 1e-5, dict(Sigma=S12, noise_shape="upper", gamma=0.8)))
    out.append(("dp_threshold", 10 ** 4, 12, None, 0.5, 1e-5, dict(Sigma=S12, sensitivity_rule="loose", calibration="classic",
                                                                    data="clipped", s=1)))
    for pen in (None, "max", "safe", 0.3):
        out.append(("local_sparse", 10 ** 9, 12, 1, 1.0, 1e-5, dict(eigenvalues=np.divide(LAM12, 2).tolist(), s=3, penalty=pen)))
    out.append(("local_sparse_pca", 10 ** 5, 12, 1, 1.0, 1e-5, dict(eigenvalues=np.divide(LAM12, 2).tolist(), s=3,
                                                                    sensitivity_rule="paper", calibration="classic", eta=1e-4)))
    out.append(("adaptive_dp_kpca", 5000, 10, 1, 1.0, 1e-5, dict(eigenvalues=LAM_SM)))
    return out


def compute() -> dict:
    "The grid's numbers: every ErrorBounds field, the building blocks that read a noise scale, the rates and predictions."
    from dppca_nb.theory.error_bounds import error_bounds, dp_threshold_bounds
    from dppca_nb.bounds import threshold_error_bound, naive_error_bound, local_critical_n
    from dppca_nb.experiments.smooth import predicted_errors
    from dppca_nb.data.datasets import block_covariance
    rows = []
    for m, n, p, k, eps, dlt, kw in _settings():
        b = error_bounds(m, n, p, k, eps, dlt, **kw)
        rows.append(dict(call=[m, n, p, k, eps, dlt, {key: v for key, v in kw.items() if key not in ("Sigma",)}],
                         method=b.method, lower=b.lower, upper=b.upper, lower_class=b.lower_class,
                         upper_probability=b.upper_probability, conditions_hold=b.conditions_hold, notes=list(b.notes),
                         metric=b.metric, cap=b.cap))
    S = block_covariance(12, 3, correlation=0.6, trace=0.2)
    d = dp_threshold_bounds(S, 10 ** 4, 1.0, 1e-5)
    extra = dict(dp_threshold_bounds={key: (float(v) if isinstance(v, (float, np.floating)) else v) for key, v in d.items()},
                 threshold_error_bound=threshold_error_bound(10 ** 4, 50, 3, 1.0, 1e-5),
                 naive_error_bound=naive_error_bound(10 ** 4, 50, 1.0, 1e-5, noise_shape="upper"),
                 local_critical_n=local_critical_n(40, 1 / 400, 0.5, 1e-4),
                 predicted_errors={key: v.tolist() for key, v in predicted_errors([10 ** 3, 10 ** 5], 0.2, 10, 2, 1.0, 1e-5).items()})
    return dict(bounds=rows, extra=extra)


if __name__ == "__main__" and "--write" in sys.argv:
    REFERENCE.parent.mkdir(exist_ok=True)
    REFERENCE.write_text(json.dumps(compute(), indent=1) + "\n")
    print(f"wrote {REFERENCE}")
