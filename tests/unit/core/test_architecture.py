"""The floors of ARCHITECTURE.md, checked against the code: every import between two parts of
contextlens (at the top of a module or inside a function) goes down a floor or stays on its own
part, torch and transformers are imported only by ``encoders/``, and every package says what it
holds in its docstring."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

import contextlens

SRC = Path(contextlens.__file__).parent
ARCHITECTURE = SRC.parent.parent / "ARCHITECTURE.md"
SHARED = 2  # on floors 0-2 (single-purpose modules) a part may also import another of its own floor


def floors() -> dict[str, int]:
    """The table of ARCHITECTURE.md: ``| N | `part`, `part` | ... |`` rows, floor N for each part."""
    out = {}
    for line in ARCHITECTURE.read_text(encoding="utf-8").splitlines():
        row = re.match(r"\|\s*(\d+)\s*\|([^|]*)\|", line)
        if row:
            for part in re.findall(r"`([a-z_]+)/?`", row.group(2)):
                out[part] = int(row.group(1))
    return out


def part_of(module: str) -> str:
    """``contextlens.encoders.base`` -> ``encoders``; ``contextlens.errors`` -> ``errors``."""
    return module.split(".")[1]


def imports(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every contextlens or torch/transformers import in the file."""
    module = ".".join(path.relative_to(SRC.parent).with_suffix("").parts)
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    package = package.removesuffix(".__init__")
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                name = ".".join(base + ([node.module] if node.module else []))
            else:
                name = node.module or ""
            found.append((node.lineno, name))
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


MODULES = sorted(p for p in SRC.rglob("*.py") if "__pycache__" not in p.parts)


def test_every_part_has_a_floor():
    table = floors()
    parts = {p.relative_to(SRC).parts[0].removesuffix(".py") for p in MODULES} - {"__init__", "__main__"}
    assert parts - set(table) == set(), "add these to ARCHITECTURE.md's table of floors"
    assert set(table) - parts == set(), "ARCHITECTURE.md names parts the code does not have"


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(SRC)))
def test_imports_go_down_the_floors(path):
    table = floors()
    rel = path.relative_to(SRC)
    if rel.parts[0] in ("__init__.py", "__main__.py"):
        return  # the public API and ``python -m`` sit above everything
    own = rel.parts[0].removesuffix(".py")
    wrong = []
    for line, name in imports(path):
        if name.split(".")[0] in ("torch", "transformers") and own != "encoders":
            wrong.append(f"line {line}: {name} (only encoders/ imports torch or transformers)")
        if not name.startswith("contextlens."):
            continue
        other = part_of(name)
        if other != own and not (table[other] < table[own] or table[other] == table[own] <= SHARED):
            wrong.append(f"line {line}: {name} (floor {table[other]}) from floor {table[own]}")
    assert not wrong, f"{rel}: " + "; ".join(wrong)


@pytest.mark.parametrize("package", sorted(p.parent for p in SRC.rglob("__init__.py")),
                         ids=lambda p: str(p.relative_to(SRC.parent)))
def test_every_package_says_what_it_holds(package):
    doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text(encoding="utf-8")))
    assert doc and len(doc) > 40, f"{package.name}/__init__.py needs a docstring saying what it holds"
