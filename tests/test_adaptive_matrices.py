"The adaptive k-PCA on a stream of matrices: the study's lazy stream, and neighbouring streams' published metadata."
import numpy as np
from dppca_nb.experiments.adaptive import SpikedMatrices, spiked_sigma, matrix_radius
from dppca_nb.algorithms.adaptive_matrices import adaptive_stochastic_kpca, plan_adaptive_stochastic_kpca


def test_spiked_matrices_same_record_every_read():
    "Record i is the same matrix whether read by a slice or an index array, and symmetric with mean Sigma."
    Sigma, _ = spiked_sigma(6, 2, 10.0, np.random.default_rng(0))
    A = SpikedMatrices(Sigma, 0.1, 500, seed=3)
    assert A.shape == (500, 6, 6) and len(A) == 500
    np.testing.assert_array_equal(A[10:13], A[np.array([10, 11, 12])])
    B = A[0:500]
    np.testing.assert_allclose(B, B.transpose(0, 2, 1), rtol=0, atol=1e-13)    # Sigma = V D V^T + I: symmetric up to rounding
    # the mean of 500 records: off-diagonal sd 0.1 / sqrt(500) ~ 0.0045 per entry; 6 sd is 0.027
    assert np.abs(B.mean(0) - Sigma).max() < 0.027
    assert matrix_radius(Sigma, 0.1) ** 2 > np.sqrt((B * B).sum((1, 2))).max()     # no record beyond the public bound


def test_neighbouring_streams_publish_the_same_metadata():
    "One matrix replaced (far outside the bound): the same contract, the same public extras' keys, the same schedule."
    Sigma, _ = spiked_sigma(8, 2, 10.0, np.random.default_rng(1))
    A = SpikedMatrices(Sigma, 0.01, 2000, seed=4)[0:2000]
    B = A.copy(); B[7] = -100 * np.eye(8)
    R = matrix_radius(Sigma, 0.01)
    ra, rb = (adaptive_stochastic_kpca(M, 2, 1.0, 0.01, radius=R, mode="adaptive", random_state=5, return_release=True)
              for M in (A, B))
    assert ra.contract == rb.contract == plan_adaptive_stochastic_kpca(2000, 8, 2, 1.0, 0.01, radius=R, mode="adaptive").contract
    assert sorted(ra.extras) == sorted(rb.extras) and ra.extras["schedule"] == rb.extras["schedule"]
    assert rb.diagnostics["n_clipped"] == ra.diagnostics["n_clipped"] + 1 and "n_clipped" not in rb.extras
