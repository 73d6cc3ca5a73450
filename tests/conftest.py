import os

# One BLAS thread per test process: two competing OpenBLAS threads on a busy 2-core machine can slow
# small matrix products 10-100 times, and pytest-xdist already runs one process per core.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")
