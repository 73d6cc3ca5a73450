import os

# One BLAS thread per test process: two competing OpenBLAS threads on a busy 2-core machine can slow
# small matrix products 10-100 times, and pytest-xdist already runs one process per core.
for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(var, "1")
os.environ.setdefault("MPLBACKEND", "Agg")

# Property tests: CI runs a fixed (derandomized) set of examples so a submission's result does not depend on
# luck; locally hypothesis explores fresh examples on every run (and remembers failures in .hypothesis/).
try:
    from hypothesis import settings as _hsettings
    _hsettings.register_profile("ci", derandomize=True, print_blob=True)
    if os.environ.get("CI"):
        _hsettings.load_profile("ci")
except ImportError:
    pass
