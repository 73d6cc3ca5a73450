"""The command line run in this process, for the CLI tests: `run(*args)` -> (exit status, stdout, stderr)."""
import contextlib
import io
import warnings

from dppca_nb.cli import main


def run(*args, warnings_filter="ignore"):
    "main(args) in this process: (exit status, stdout, stderr); warnings filtered by `warnings_filter`."
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e), warnings.catch_warnings():
        warnings.simplefilter(warnings_filter)
        rc = main([str(a) for a in args])
    return rc, o.getvalue(), e.getvalue()
