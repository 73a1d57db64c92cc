"""Every shell block of README.md and docs/ runs as written, in a scratch folder, and every Python
block is run by a docs test.

A ```bash block runs with ``bash -e`` in a fresh temporary folder that holds only a link
``.venv/bin`` to the folder of the running interpreter, so the commands spelled ``.venv/bin/...`` are the
installed CLIs, and a command that writes files cannot touch the checkout.  A block is skipped
only when the line just above its fence says why::

    <!-- docs-test: skip: the reason -->

(installs from the network, serves until stopped, minutes of compute or a dataset; the reason
names where the same code is tested).  Commands are spelled one way, ``.venv/bin/…``.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SHELLS = ("bash", "sh", "shell", "console")
SKIP = re.compile(r"<!-- docs-test: skip: (?P<reason>.*?) -->\s*$")
FENCE = re.compile(r"^```(?P<lang>[\w-]*)\n(?P<body>.*?)^```", re.S | re.M)

#: the docs test that runs each document's Python blocks (each of them names its document)
PYTHON_BLOCK_TESTS = {
    "README.md": "tests/test_docs_core.py",
    "solving.md": "tests/test_docs_core.py",
    "tutorial.md": "tests/test_docs_core.py",
    "index.md": "tests/test_docs_core.py",
    "accounting.md": "tests/accounting/test_accounting_docs.py",
    "disjoint.md": "tests/darrm/models/disjoint/test_disjoint_docs.py",
    "experiments.md": "tests/experiments/test_experiments_docs.py",
    "groups.md": "tests/darrm/models/groups/test_group_docs.py",
    "shuffle.md": "tests/accounting/shuffle/test_shuffle_docs.py",
    "simulations.md": "tests/experiments/simulations/test_simulations_docs.py",
}


def blocks(path: Path) -> list[tuple[str, str, str | None, int]]:
    """(language, body, skip reason or None, line number) of every fenced block of ``path``."""
    text = path.read_text(encoding="utf-8")
    out = []
    for m in FENCE.finditer(text):
        before = text[: m.start()].rstrip("\n").rsplit("\n", 1)[-1]
        skip = SKIP.match(before)
        out.append((m.group("lang"), m.group("body"), skip.group("reason").strip() if skip else None,
                    text.count("\n", 0, m.start()) + 1))
    return out


SHELL_BLOCKS = [(path, body, reason, line) for path in DOCUMENTS
                for lang, body, reason, line in blocks(path) if lang in SHELLS]


def _id(case) -> str:
    return f"{case[0].name}:{case[3]}"


def test_the_documents_have_shell_blocks_and_every_skip_gives_its_reason():
    assert len(SHELL_BLOCKS) >= 10
    for path, _body, reason, line in SHELL_BLOCKS:
        assert reason is None or len(reason) >= 20, f"{path.name}:{line}: a skipped block needs a reason"
    assert sum(reason is None for *_, reason, _line in SHELL_BLOCKS) >= 2  # most are skipped: see why


def test_no_command_hides_in_a_fence_without_a_language():
    """A fence with no language is not run: commands must sit in a ```bash block."""
    command = re.compile(r"^\s*(\.venv/bin/)?(darrm|darrm-experiments|python3?|pip)\s", re.M)
    for path in DOCUMENTS:
        for lang, body, _reason, line in blocks(path):
            assert lang or not command.search(body), f"{path.name}:{line}: label the block ```bash"


def test_commands_are_spelled_through_the_virtual_environment():
    """One spelling: ``.venv/bin/darrm``, never a bare ``darrm``/``pip``/``mkdocs`` that depends on
    an activated environment."""
    bare = re.compile(r"^\s*(darrm|darrm-experiments|pip|mkdocs|pytest)\b", re.M)
    for path, body, _reason, line in SHELL_BLOCKS:
        assert not bare.search(body), f"{path.name}:{line}: spell the command .venv/bin/…"


def test_no_documented_command_writes_into_a_tracked_folder():
    """``--out`` goes to a folder of its own (runs/, out/) or a file in the working folder, never
    into the folders the repository tracks (experiments/, docs/, darrm/ …)."""
    ignored = {line.strip().strip("/") for line in (ROOT / ".gitignore").read_text().splitlines()
               if line.strip().endswith("/") and "*" not in line}
    tracked = {p.name for p in ROOT.iterdir() if p.is_dir() and not p.name.startswith(".")} - ignored
    assert {"runs", "out", "example-output"} <= ignored and {"darrm", "experiments", "docs"} <= tracked
    for path, body, _reason, line in SHELL_BLOCKS:
        for target in re.findall(r"--(?:out|plot|checkpoint)\s+(\S+)", body):
            top = Path(target).parts[0]
            assert top not in tracked, f"{path.name}:{line}: --out {target} would write into {top}/"


@pytest.mark.parametrize("case", [c for c in SHELL_BLOCKS if c[2] is None], ids=_id)
def test_shell_block_runs_in_a_scratch_folder(case, tmp_path):
    path, body, _reason, line = case
    (tmp_path / ".venv").mkdir()  # .venv/bin: the folder of this interpreter and the installed CLIs
    (tmp_path / ".venv" / "bin").symlink_to(Path(sys.executable).parent, target_is_directory=True)
    env = {**os.environ, "MPLBACKEND": "Agg", "PYTHONWARNINGS": "ignore"}
    run = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", body], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, f"{path.name}:{line} failed:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}"


def test_every_python_block_is_run_by_a_docs_test():
    """Each document with a ```python block has a test that runs its blocks; that test names it."""
    for path in DOCUMENTS:
        if any(lang == "python" for lang, *_ in blocks(path)):
            assert path.name in PYTHON_BLOCK_TESTS, f"{path.name}: no test runs its Python blocks"
            test = (ROOT / PYTHON_BLOCK_TESTS[path.name]).read_text(encoding="utf-8")
            assert path.name in test, f"{PYTHON_BLOCK_TESTS[path.name]} does not read {path.name}"
