"""The tree shows the architecture: each of the function's three programs imports only the ones below it.

lib/modelplane is pure and imports none of them; the handlers import neither the transport nor the
offline tools; the transport does not import the offline tools.
"""

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
FUNCTION = ROOT / "functions" / "modelplane_function"


@dataclass(frozen=True)
class Layer:
    name: str
    root: Path
    forbidden: tuple[str, ...]


LAYERS = (
    Layer("lib/modelplane", ROOT / "lib" / "modelplane", ("modelplane_function",)),
    Layer("handlers", FUNCTION / "handlers", ("modelplane_function.server", "modelplane_function.cli")),
    Layer("server", FUNCTION / "server", ("modelplane_function.cli",)),
)


def imported_modules(path: Path) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


def upward_imports(layer: Layer) -> list[str]:
    bad: list[str] = []
    for path in sorted(layer.root.rglob("*.py")):
        for module in sorted(imported_modules(path)):
            if any(module == f or module.startswith(f + ".") for f in layer.forbidden):
                bad.append(f"{path.relative_to(ROOT)} imports {module}")
    return bad


@pytest.mark.parametrize("layer", LAYERS, ids=lambda layer: layer.name)
def test_no_layer_imports_a_program_above_it(layer: Layer) -> None:
    assert upward_imports(layer) == []


def test_the_function_package_holds_exactly_the_three_programs() -> None:
    packages = sorted(p.name for p in FUNCTION.iterdir() if p.is_dir() and (p / "__init__.py").exists())
    modules = sorted(p.name for p in FUNCTION.glob("*.py"))
    assert (packages, modules) == (["cli", "handlers", "server"], ["__init__.py"])
