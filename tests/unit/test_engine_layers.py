"""The engine's import contract (pyproject's import-linter contracts), checked by the real
``lint-imports`` on this tree, and on a copy given one upward import to show the check bites."""
from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ENGINE = ROOT / "platform" / "hudi_engine"
LINT = Path(sys.executable).with_name("lint-imports")


def lint(root: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(root / d) for d in ("platform", "jobs", "operator"))}
    return subprocess.run([str(LINT), "--config", str(root / "pyproject.toml"), "--no-cache"], cwd=root, env=env,
                          capture_output=True, text=True, timeout=300)


def test_the_engine_keeps_its_layers_and_the_api_boundary():
    result = lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.count("KEPT") == 3


def test_an_upward_import_breaks_the_layer_contract(tmp_path):
    for folder in ("platform", "jobs", "operator"):
        shutil.copytree(ROOT / folder, tmp_path / folder, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    instant = tmp_path / "platform" / "hudi_engine" / "timeline" / "instant.py"
    instant.write_text(instant.read_text() + "\nfrom ..services import clean  # noqa: E402,F401\n")
    result = lint(tmp_path)
    assert result.returncode != 0
    assert "Engine layers: storage and formats up to the public API BROKEN" in result.stdout
    assert "hudi_engine.timeline.instant -> hudi_engine.services.clean" in result.stdout


def test_only_the_commit_path_completes_an_instant():
    """``Timeline.complete`` writes a completed instant file; one function calls it."""
    callers = []
    for path in ENGINE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "complete":
                callers.append(str(path.relative_to(ENGINE)))
    assert callers == ["transaction/commit.py"]


def test_the_public_api_resolves_every_name_and_imports_without_spark():
    script = ("import sys, hudi_engine.api as api; assert 'pyspark' not in sys.modules, 'eager import'; "
              "missing = [n for n in api.__all__ if getattr(api, n, None) is None]; print(len(api.__all__), missing)")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(ROOT / d) for d in ("platform", "jobs", "operator"))}
    result = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    count, missing = result.stdout.split(" ", 1)
    assert int(count) > 30 and missing.strip() == "[]"


def test_the_api_names_type_checkers_see_are_the_names_it_exports():
    """``api`` lists its names twice (the lazy map, the ``TYPE_CHECKING`` imports): they agree."""
    tree = ast.parse((ENGINE / "api" / "__init__.py").read_text())
    exports = next(ast.literal_eval(n.value) for n in tree.body
                   if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", "") == "_EXPORTS")
    block = next(n for n in tree.body if isinstance(n, ast.If) and getattr(n.test, "id", "") == "TYPE_CHECKING")
    typed = {alias.asname or alias.name for node in block.body for alias in node.names}
    assert typed == set(exports)
