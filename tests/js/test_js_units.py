"""The chair page's JavaScript units (api/static/core, api/static/lib) and the check that its
views change the state only through core/state.js, under Node's built-in test runner:
`node --test tests/js` runs the same files. Node 20 is enough; nothing is installed.
Without node the test skips, except under CI=true, where it fails."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent


def test_page_units_pass_under_node() -> None:
    node = shutil.which("node")
    if node is None:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail("node is not installed (CI=true: the page's unit tests must run)")
        pytest.skip("node is not installed; the page's JavaScript unit tests need Node 20")
    files = sorted(str(path) for path in HERE.glob("*.test.mjs"))
    assert files, "no JavaScript unit tests found"
    result = subprocess.run(
        [node, "--test", *files],
        cwd=HERE.parents[1],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, (
        f"node --test failed:\n{result.stdout[-6000:]}\n{result.stderr[-2000:]}"
    )
    assert "# fail 0" in result.stdout
