"""The import graph of docs/architecture.md: each layer imports only the layers below it.
Lazy imports inside functions count too, since they are edges all the same."""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
OURS = {
    "kgmem",
    "schemas",
    "transforms",
    "stores",
    "memory",
    "pipelines",
    "dagster_project",
    "benchmarks",
}
FORBIDDEN = {
    "schemas": OURS - {"schemas"} | {"dagster"},
    "transforms": OURS - {"schemas", "transforms"} | {"dagster"},
    "stores": OURS - {"schemas", "transforms", "stores"} | {"dagster"},
    "memory": {"kgmem", "pipelines", "dagster_project", "benchmarks", "dagster"},
    "pipelines": OURS - {"schemas", "transforms", "stores", "pipelines"} | {"dagster"},
    "dagster_project": {"kgmem", "benchmarks"},
    "benchmarks": {"kgmem"},
}


def imported_packages(path: Path) -> set[str]:
    """Top-level package of every absolute import in the file."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_imports_nothing_above_it(layer: str):
    breaches = {
        str(path.relative_to(ROOT)): sorted(imported_packages(path) & FORBIDDEN[layer])
        for path in sorted((ROOT / layer).rglob("*.py"))
    }
    assert {file: up for file, up in breaches.items() if up} == {}


def test_the_check_sees_a_breach(tmp_path: Path):
    module = tmp_path / "bad.py"
    module.write_text("def f():\n    from stores.workspace import default_home\n")
    assert "stores" in imported_packages(module) & FORBIDDEN["transforms"]
