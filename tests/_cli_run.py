"""The command line run in this process, for the CLI tests: `run(*args)` -> (exit status, stdout, stderr)."""
import contextlib
import io
import warnings

from dppca_nb.cli import main


def run(*args):
    "main(args) in this process: (exit status, stdout, stderr)."
    o, e = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(o), contextlib.redirect_stderr(e), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rc = main([str(a) for a in args])
    return rc, o.getvalue(), e.getvalue()
