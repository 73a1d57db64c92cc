"""Every Python example of docs/shuffle.md runs (its printed figures are illustrative)."""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "shuffle.md"


def test_shuffle_docs_examples_run():
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(encoding="utf-8"), re.S)
    assert len(blocks) >= 3
    for block in blocks:
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            exec(compile(block, str(DOC), "exec"), {})  # noqa: S102 - our own documentation
        assert buf.getvalue().strip(), block[:60]
