"""The commit-message hook that the README's developer section installs (`git config core.hooksPath tools/hooks`)."""
import importlib.machinery
import importlib.util
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HOOK = ROOT / "tools" / "hooks" / "commit-msg"


def _hook():
    loader = importlib.machinery.SourceFileLoader("commit_msg_hook", str(HOOK))
    spec = importlib.util.spec_from_loader("commit_msg_hook", loader)
    mod = importlib.util.module_from_spec(spec)
    loader.exec_module(mod)
    return mod


def test_subject_limit():
    check = _hook().check
    assert check("a" * 72) == []
    assert check("# git's comment\n\n" + "a" * 72 + "\n\nbody " + "b" * 200) == []
    assert "73 characters" in check("a" * 73)[0]
    assert check("subject\nbody without a blank line") == ["leave a blank line between the subject and the body"]
    assert check("\n# only comments\n") == ["the message is empty"]


def test_hook_refuses_a_long_subject(tmp_path):
    msg = tmp_path / "MSG"
    msg.write_text("x" * 80 + "\n")
    r = subprocess.run([sys.executable, str(HOOK), str(msg)], capture_output=True, text=True)
    assert r.returncode == 1 and "80 characters" in r.stderr
    msg.write_text("a fine subject\n\nand a body\n")
    assert subprocess.run([sys.executable, str(HOOK), str(msg)]).returncode == 0
