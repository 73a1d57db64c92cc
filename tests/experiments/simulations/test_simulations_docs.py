"""The Python examples of docs/simulations.md run."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[3] / "docs" / "simulations.md"


def test_docs_python_examples_run(tmp_path, monkeypatch):
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)
    assert len(blocks) == 2
    monkeypatch.chdir(tmp_path)
    for code in blocks:
        exec(compile(code, str(DOC), "exec"), {})
    assert (tmp_path / "out" / "sims" / "figure7_gamma.png").exists()
