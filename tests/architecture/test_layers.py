"""The layering holds: import-linter's contracts (pyproject.toml) and no import cycle among proton_tui's modules,
at module level or inside functions; and the code passes ruff."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import grimp
import pytest

from tests.helpers import REPO


def tool(name: str) -> str:
    found = shutil.which(name, path=os.path.dirname(sys.executable))
    if found is None:
        pytest.fail(f"{name} is not installed beside {sys.executable}: the test extra installs it")
    return found


def test_import_linter_contracts_are_kept():
    result = subprocess.run([tool("lint-imports")], cwd=REPO, capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]


def test_no_import_cycle_between_modules():
    graph = grimp.build_graph("proton_tui", exclude_type_checking_imports=True)  # imports inside functions count
    modules = sorted(graph.modules)
    cycles = []
    for module in modules:
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module and graph.chain_exists(imported, module):
                cycles.append((module, imported, graph.find_shortest_chain(imported, module)))
    assert not cycles, "\n".join(" -> ".join((module, *chain)) for module, _, chain in cycles)


def test_ruff_passes():
    result = subprocess.run([tool("ruff"), "check", "proton_tui", "tests", "benchmarks", "payload"], cwd=REPO,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout[-3000:]
