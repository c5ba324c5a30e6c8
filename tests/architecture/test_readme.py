"""The README's sample output is what the command it shows prints."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SAMPLE = re.compile(r"```\n\$ proton-tui (?P<args>[^\n]+)\n(?P<output>.*?)```", re.DOTALL)


def test_the_readme_sample_is_what_view_prints():
    samples = list(SAMPLE.finditer((REPO / "README.md").read_text()))
    assert samples, "README.md shows no `$ proton-tui view ...` sample"
    for sample in samples:
        result = subprocess.run([sys.executable, "-m", "proton_tui", *sample["args"].split()], cwd=REPO,
                                capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60)
        assert result.returncode == 0, result.stderr
        assert result.stdout == sample["output"], f"README.md's sample of `{sample['args']}` is out of date"
