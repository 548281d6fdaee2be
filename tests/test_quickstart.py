"""The README's quickstart (and examples/quickstart.py) runs as written, offline, and prints what the README shows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def quickstart_block() -> str:
    """The first python code block under "## Using as a library"."""
    section = README.split("\n## Using as a library\n", 1)[1]
    return section.split("```python\n", 1)[1].split("```", 1)[0]


def shown_output(code: str) -> list[str]:
    """The comment lines that end the block: what the README says it prints."""
    lines = code.rstrip("\n").splitlines()
    shown: list[str] = []
    while lines and lines[-1].startswith("# "):
        shown.insert(0, lines.pop()[2:])
    return shown


def run_isolated(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run Python with HOME, MEM0_DIR and TMPDIR inside tmp_path and no API key, so nothing of the user's is used."""
    home = tmp_path / "home"
    temp = tmp_path / "tmp"
    home.mkdir()
    temp.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(HOME=str(home), MEM0_DIR=str(home / ".mem0"), TMPDIR=str(temp), MEM0_TELEMETRY="False")
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)


def test_the_readme_quickstart_shows_what_it_prints() -> None:
    shown = shown_output(quickstart_block())
    assert len(shown) == 2 and all(line.startswith("- ") for line in shown)


@pytest.mark.parametrize("where", ["README.md", "examples/quickstart.py"])
def test_the_quickstart_runs_offline_and_prints_exactly_what_the_readme_shows(where: str, tmp_path: Path) -> None:
    code = quickstart_block()
    args = ["-c", code] if where == "README.md" else [str(ROOT / "examples" / "quickstart.py")]
    done = run_isolated(args, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == shown_output(code)


def test_examples_quickstart_is_the_readme_quickstart() -> None:
    assert quickstart_block() in (ROOT / "examples" / "quickstart.py").read_text()
