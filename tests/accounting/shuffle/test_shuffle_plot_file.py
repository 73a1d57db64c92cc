"""`darrm shuffle --plot` writes a PNG whatever the file's suffix, atomically (issue 15 fuzzing)."""

from __future__ import annotations

import pytest

from darrm.cli import main


def test_plot_with_another_suffix_is_still_a_png(tmp_path, capsys):
    pytest.importorskip("matplotlib")
    plot = tmp_path / "eps.json"  # matplotlib used to guess the format from the suffix and fail
    assert main(["shuffle", "--n", "500", "--eps0", "1", "--delta", "1e-6", "--plot", str(plot)]) == 0
    assert plot.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["eps.json"]
