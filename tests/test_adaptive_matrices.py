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
    np.testing.assert_array_equal(B, B.transpose(0, 2, 1))                       # Sigma symmetrised, the entries mirrored
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


def _explicit(Sigma, sigma, n, rng):
    "The matrices as the model states them: Sigma + sigma (Z + Z^T) / sqrt 2, Z a full d x d standard Gaussian."
    Z = rng.standard_normal((n, *Sigma.shape))
    return Sigma + sigma / np.sqrt(2.0) * (Z + Z.transpose(0, 2, 1))


def test_spiked_matrices_have_the_models_law():
    """The stream draws A_i's d (d + 1) / 2 upper entries (sd sqrt 2 sigma on the diagonal, sigma off it) and mirrors
    them: the law of Sigma + sigma (Z + Z^T) / sqrt 2, whose entries A_ij, i <= j, are independent with these sds
    ((Z_ij + Z_ji) / sqrt 2 ~ N(0, 1), sqrt 2 Z_ii ~ N(0, 2)). Both draws are held to that law."""
    from scipy import stats
    d, s, n = 4, 0.1, 20_000
    Sigma, _ = spiked_sigma(d, 2, 10.0, np.random.default_rng(2))
    S = (Sigma + Sigma.T) / 2
    i, j = np.triu_indices(d)
    sd = np.where(i == j, np.sqrt(2.0), 1.0) * s
    target = np.diag(sd ** 2)
    for A in (SpikedMatrices(Sigma, s, n, seed=6)[0:n], _explicit(S, s, n, np.random.default_rng(7))):
        np.testing.assert_array_equal(A, A.transpose(0, 2, 1))
        E = (A - S)[:, i, j]                               # the 10 independent entries of each record
        # the empirical covariance of independent normals: entry (a, b) has sd sqrt((c_aa c_bb + c_ab^2) / n); 5 sds
        C = E.T @ E / n
        tol = 5 * np.sqrt((np.outer(sd ** 2, sd ** 2) + target ** 2) / n)
        assert np.all(np.abs(C - target) < tol)
        # ||A_i - Sigma||_F^2 / (2 sigma^2) = sum of d (d + 1) / 2 squared standard normals: chi^2 with 10 degrees
        f = ((A - S) ** 2).sum((1, 2)) / (2 * s * s)
        assert stats.kstest(f, stats.chi2(d * (d + 1) // 2).cdf).pvalue > 1e-3


def test_spiked_matrices_are_exactly_symmetric_and_read_the_same():
    "Exactly symmetric records (so clipping keeps them as they are), the same under any slicing."
    Sigma, _ = spiked_sigma(7, 2, 10.0, np.random.default_rng(3))
    A = SpikedMatrices(Sigma, 0.05, 40, seed=9)
    B = A[0:40]
    np.testing.assert_array_equal(B, B.transpose(0, 2, 1))
    np.testing.assert_array_equal(B[[3, 17, 39]], A[np.array([3, 17, 39])])
    np.testing.assert_array_equal(B[5:9], A[5:9])
    assert A[0:0].shape == (0, 7, 7)


def test_matrix_records_release_no_variances_part():
    "order_share (the variances along the basis) is a release on rows: with matrix records it is refused by name."
    import pytest
    with pytest.raises(ValueError, match="order_share: the variances along the basis are released for rows"):
        plan_adaptive_stochastic_kpca(100, 6, 2, 1.0, 1e-5, order_share=0.1)
    assert "variances" not in dict(plan_adaptive_stochastic_kpca(100, 6, 2, 1.0, 1e-5).contract.parts)
