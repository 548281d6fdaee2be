"""Running the examples of the README and the docs pages as a reader would, offline, and checking they print what
the page shows.

Examples are found by sybil: fenced ``python`` blocks and ``console`` blocks (``$ command`` lines, each followed by
what it prints), and ``<!-- skip: next "why" -->`` before a block that cannot run offline (it is reported as
skipped, with that reason). Each page runs in a fresh folder of its own, its blocks in order, with HOME, TMPDIR and
MEM0_DIR inside that folder and no API key, so nothing of the user's is read or written: a page's Python blocks in
one namespace (a later block goes on from an earlier one, as notebook cells do), each command of a console block in
a new process.

An example that needs an optional extra says so with a condition the page's namespace can evaluate,
``<!-- skip: next if(not has("faiss"), reason="needs FAISS: pip install -e '.[stores]'") -->`` (:func:`has`), so it
runs wherever the extra is installed and is skipped, saying why, where it is not.

What a block shows: for Python, the ``# `` comment lines that end the block are its output; for a console block,
the lines under each command. ``...`` alone on a line stands for any lines (none included), and inside a line for
any text. A command is expected to exit 0, or with the status an ``[exit N]`` line under it names.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import re
import shlex
import subprocess
import sys
import tempfile
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from sybil import Example, Sybil
from sybil.parsers.markdown import CodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent.parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
TIMEOUT = 600
EXIT_LINE = re.compile(r"^\[exit (\d+)\]$")


def shown_lines(text: str) -> list[str]:
    """The lines a page shows as output, trailing blank lines dropped."""
    lines = text.rstrip("\n").splitlines()
    return lines


def line_matches(shown: str, actual: str) -> bool:
    """One shown line against one printed line: ``...`` inside stands for any text; trailing spaces ignored."""
    pattern = ".*".join(re.escape(part) for part in shown.rstrip().split("..."))
    return re.fullmatch(pattern, actual.rstrip()) is not None


def output_matches(shown: list[str], actual: list[str]) -> bool:
    """Whether the printed lines are what the page shows (``...`` alone on a line: any lines, none included)."""
    if not shown:
        return not actual
    head, rest = shown[0], shown[1:]
    if head.strip() == "...":
        return any(output_matches(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and line_matches(head, actual[0]) and output_matches(rest, actual[1:])


def has(module: str) -> bool:
    """Whether ``module`` can be imported here (for a page's ``skip: ... if(not has(...))`` conditions)."""
    return importlib.util.find_spec(module) is not None


@dataclass
class PageRun:
    """A page's folder and how far its examples have run."""

    folder: Path
    done: set[int] = field(default_factory=set)


def environment(folder: Path) -> dict[str, str]:
    """A reader's environment inside ``folder``: HOME, TMPDIR and MEM0_DIR there, no API keys, telemetry off, this
    interpreter's scripts (``mem0-hygiene``) first on PATH."""
    home = folder / "home"
    temp = folder / "tmp"
    home.mkdir(exist_ok=True)
    temp.mkdir(exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    bindir = str(Path(sys.executable).parent)
    env.update(
        HOME=str(home),
        TMPDIR=str(temp),
        MEM0_DIR=str(home / ".mem0"),
        MEM0_TELEMETRY="False",
        PATH=bindir + os.pathsep + env.get("PATH", ""),
        COLUMNS="120",
        NO_COLOR="1",
        TERM="dumb",
    )
    env.pop("FORCE_COLOR", None)
    return env


def python_shown(code: str) -> list[str] | None:
    """The ``# `` comment lines that end a Python block (None when it shows no output)."""
    lines = code.rstrip("\n").splitlines()
    shown: list[str] = []
    while lines and (lines[-1].startswith("# ") or lines[-1] == "#"):
        shown.insert(0, lines.pop()[2:])
    return shown or None


def run_python(example: Example) -> str | None:
    """Run a Python block in its page's namespace (a page's blocks continue each other, as cells of a notebook),
    in the page's folder and environment, and compare what it printed with what the page shows."""
    code = example.parsed
    run = example.namespace["page"]
    printed = io.StringIO()
    saved_env, saved_cwd, saved_tempdir = dict(os.environ), os.getcwd(), tempfile.tempdir
    os.environ.clear()
    os.environ.update(environment(run.folder))
    os.chdir(run.folder)
    tempfile.tempdir = str(run.folder.parent / "t")  # not the process's (cached) temp folder: the pages' own
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, f"{example.path}:{example.line}", "exec"), example.namespace)
    except Exception:
        return f"the example raised:\n{traceback.format_exc()[-3000:]}"
    finally:
        tempfile.tempdir = saved_tempdir
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
    shown = python_shown(code)
    if shown is not None and not output_matches(shown, shown_lines(printed.getvalue())):
        return f"the example printed:\n{printed.getvalue()}\nthe page shows:\n" + "\n".join(shown)
    return None


def console_steps(text: str) -> list[tuple[str, list[str], int]]:
    """(command, the lines it shows, its exit status) for each ``$`` line of a console block."""
    steps: list[tuple[str, list[str], int]] = []
    for line in text.rstrip("\n").splitlines():
        if line.startswith("$ "):
            steps.append((line[2:], [], 0))
        elif steps and steps[-1][0].endswith("\\") and not steps[-1][1]:
            command, shown, status = steps[-1]
            steps[-1] = (command[:-1] + " " + line.strip(), shown, status)
        elif steps:
            exit_line = EXIT_LINE.match(line.strip())
            command, shown, status = steps[-1]
            if exit_line:
                steps[-1] = (command, shown, int(exit_line.group(1)))
            else:
                shown.append(line)
        else:
            raise ValueError(f"a console block must start with a `$ command` line, not {line!r}")
    return steps


def run_console(example: Example) -> str | None:
    run = example.namespace["page"]
    for command, shown, status in console_steps(example.parsed):
        done = subprocess.run(
            ["bash", "-c", command],
            cwd=run.folder,
            env=environment(run.folder),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=TIMEOUT,
        )
        if done.returncode != status:
            return f"`{command}` exited {done.returncode}, the page says {status}:\n{done.stdout[-3000:]}"
        if not output_matches(shown, shown_lines(done.stdout)):
            return f"`{command}` printed:\n{done.stdout}\nthe page shows:\n" + "\n".join(shown)
    return None


SYBIL = Sybil(
    parsers=[
        SkipParser(),
        CodeBlockParser("python", evaluator=run_python),
        CodeBlockParser("console", evaluator=run_console),
    ],
    path=str(ROOT),
)


def page_examples(page: Path) -> list[Example]:
    """The examples of one page (skip markers included), in page order."""
    return list(SYBIL.parse(page))


def example_id(page: Path, example: Example) -> str:
    return f"{page.relative_to(ROOT)}:{example.line}"


def quoted(command: str) -> str:
    return " ".join(shlex.quote(part) for part in shlex.split(command))
