"""The package's house rules, read from the source: no import circles, rooms talk through
their ``__init__``, and the package root shows only the architecture.

The import graph is computed from the AST of every module of ``src/critiquebench``:
module-level imports and imports inside functions count (both run); imports under
``if TYPE_CHECKING:`` do not (they never run, and a type may name a room that
imports this one). ``from x import y`` where ``y`` is a submodule imports the
submodule. A *room* is a first-level subpackage of ``critiquebench`` (``cli.py``
belongs to ``_cli``); a subpackage of a room (``analysis/stats``) is a sub-room,
and the same rule holds between sub-rooms: a private name or module (``_x``) is
used only inside the package that holds it.
"""

from __future__ import annotations

import ast
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[2] / "src" / "critiquebench"
PACKAGE = "critiquebench"

ROOT_ENTRIES = frozenset(
    {
        # Public entry modules.
        "__init__.py",
        "cli.py",
        "py.typed",
        # The architecture's rooms.
        "_cli",  # the command line's private parts (cli.py is its public face)
        "analysis",
        "critics",
        "judges",
        "loop",
        "models",
        "pipeline",
        "quality",
        "runtime",  # process plumbing: Prefect server, warm children, exit, progress
        "suites",
        "testing",  # stub providers and judges for users' own tests
        # Package data.
        "data",
    }
)
"""What the package root may hold."""


@dataclass(frozen=True)
class Import:
    """One import statement's effect: ``importer`` loads ``module`` and, when the
    statement names one, takes ``name`` from it (``None`` for ``import x.y``)."""

    importer: str
    module: str
    name: str | None
    line: int
    runs: bool  # False under ``if TYPE_CHECKING:``


def _module_name(path: Path, source: Path) -> str:
    parts = path.relative_to(source.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _modules(source: Path) -> dict[str, Path]:
    """Every module of the package (suite data folders hold no package code)."""
    found = {}
    for path in sorted(source.rglob("*.py")):
        if (path.parent / "__init__.py").exists() and "data" not in path.relative_to(source).parts:
            found[_module_name(path, source)] = path
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _statements(
    nodes: list[ast.stmt], runs: bool
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    for node in nodes:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node, runs
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            yield from _statements(node.body, False)
            yield from _statements(node.orelse, runs)
        else:
            for child in ast.iter_child_nodes(node):
                if isinstance(child, ast.stmt):
                    yield from _statements([child], runs)
                else:
                    # Statements nested in expressions' bodies do not exist; walk
                    # handler/clause lists (try, match) through their statements.
                    for grandchild in ast.walk(child):
                        if isinstance(grandchild, ast.Import | ast.ImportFrom):
                            yield grandchild, runs


def imports_of(name: str, path: Path, modules: dict[str, Path]) -> list[Import]:
    """The package-internal imports of module ``name``."""
    tree = ast.parse(path.read_text(), str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = []
    for node, runs in _statements(tree.body, True):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name
                while target and target not in modules:
                    target = target.rpartition(".")[0]
                if target:
                    found.append(Import(name, target, None, node.lineno, runs))
            continue
        base = node.module or ""
        if node.level:
            anchor = package.split(".")
            anchor = anchor[: len(anchor) - node.level + 1]
            base = ".".join([*anchor, base] if base else anchor)
        if base not in modules:
            continue
        for alias in node.names:
            submodule = f"{base}.{alias.name}"
            if submodule in modules:
                found.append(Import(name, submodule, None, node.lineno, runs))
            else:
                found.append(Import(name, base, alias.name, node.lineno, runs))
    return found


def all_imports(source: Path = SOURCE) -> list[Import]:
    modules = _modules(source)
    return [item for name, path in modules.items() for item in imports_of(name, path, modules)]


def _room(module: str) -> str:
    """The first-level room a module belongs to (``cli`` is the face of ``_cli``)."""
    parts = module.split(".")
    if len(parts) == 1:
        return PACKAGE
    return "_cli" if parts[1] == "cli" else parts[1]


def _private_owner(module: str, name: str | None) -> str | None:
    """The package that holds the first private part of ``module`` (+ ``name``), or
    ``None`` when the path is public all the way."""
    parts = [*module.split("."), *([name] if name else [])]
    for index, part in enumerate(parts):
        if part.startswith("_") and not part.startswith("__"):
            return ".".join(parts[:index] if index > 1 else parts[: index + 1])
    return None


def private_violation(item: Import) -> bool:
    """Whether ``item`` reaches into a private module or name of another (sub-)room.

    A private part is usable inside the package that holds it; at the package root
    each private module is a room of its own (``critiquebench._cli``)."""
    owner = _private_owner(item.module, item.name)
    if owner is None:
        return False
    if owner.count(".") == 1:  # a private room or module at the package root
        return _room(item.importer) != owner.split(".")[1]
    return not (item.importer == owner or item.importer.startswith(owner + "."))


def private_violations(imports: list[Import]) -> list[Import]:
    return [item for item in imports if private_violation(item)]


def _shortest_cycle_through(start: str, graph: dict[str, set[str]]) -> tuple[str, ...] | None:
    parents: dict[str, str] = {}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                cycle = [node]
                while cycle[-1] != start:
                    cycle.append(parents[cycle[-1]])
                return tuple(reversed(cycle))
            if nxt not in parents:
                parents[nxt] = node
                queue.append(nxt)
    return None


def _canonical(cycle: tuple[str, ...]) -> tuple[str, ...]:
    turn = cycle.index(min(cycle))
    return cycle[turn:] + cycle[:turn]


def import_cycles(edges: set[tuple[str, str]]) -> list[tuple[str, ...]]:
    """The shortest import circle through each module that lies on one, shortest first."""
    graph: dict[str, set[str]] = {}
    for importer, imported in edges:
        if importer != imported:
            graph.setdefault(importer, set()).add(imported)
    cycles = {
        _canonical(cycle)
        for node in sorted(graph)
        if (cycle := _shortest_cycle_through(node, graph)) is not None
    }
    return sorted(cycles, key=lambda cycle: (len(cycle), cycle))


def runtime_edges(imports: list[Import]) -> set[tuple[str, str]]:
    return {(item.importer, item.module) for item in imports if item.runs}


def root_violations(source: Path = SOURCE) -> list[str]:
    return sorted(
        entry.name
        for entry in source.iterdir()
        if entry.name not in ROOT_ENTRIES and entry.name != "__pycache__"
    )


def _show(cycle: tuple[str, ...]) -> str:
    return " -> ".join((*cycle, cycle[0]))


def test_the_import_graph_has_no_circles() -> None:
    edges = runtime_edges(all_imports())
    cycles = import_cycles(edges)
    assert not cycles, "import circles:\n" + "\n".join(map(_show, cycles))


def test_no_module_imports_another_room_s_private_names() -> None:
    found = private_violations(all_imports())
    assert not found, "private imports across rooms:\n" + "\n".join(
        f"{item.importer}:{item.line} imports {item.module}"
        + (f".{item.name}" if item.name else "")
        for item in found
    )


def test_the_package_root_holds_only_the_rooms_and_the_entry_modules() -> None:
    extra = root_violations()
    assert not extra, f"the package root holds {extra}: move each into its room"


ANALYSIS_LAYERS = {"stats": 0, "views": 0, "report": 1, "render": 2}
"""The analysis rooms, each above the ones it may use: the report is computed from the
views with the statistics, and the renderers read only the report (and the views)."""


def layer_violations(imports: list[Import]) -> list[Import]:
    """Imports (type-only ones too) from an analysis room to one not below it."""

    def layer(module: str) -> str | None:
        parts = module.split(".")
        inside = len(parts) > 2 and parts[1] == "analysis" and parts[2] in ANALYSIS_LAYERS
        return parts[2] if inside else None

    found = []
    for item in imports:
        importer, imported = layer(item.importer), layer(item.module)
        if (
            importer
            and imported
            and importer != imported
            and ANALYSIS_LAYERS[importer] <= ANALYSIS_LAYERS[imported]
        ):
            found.append(item)
    return found


def test_each_analysis_room_uses_only_the_rooms_below_it() -> None:
    found = layer_violations(all_imports())
    assert not found, "\n".join(
        f"{item.importer}:{item.line} imports {item.module}" for item in found
    )


# The rules themselves, on small packages written here.


def _write(root: Path, files: dict[str, str]) -> Path:
    source = root / "critiquebench"
    for name, text in files.items():
        path = source / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return source


def test_the_graph_counts_function_imports_and_submodules_but_not_type_checking(
    tmp_path: Path,
) -> None:
    source = _write(
        tmp_path,
        {
            "__init__.py": "",
            "a/__init__.py": "",
            "a/_one.py": (
                "from typing import TYPE_CHECKING\n"
                "if TYPE_CHECKING:\n    from critiquebench.b import thing\n"
                "def f():\n    from critiquebench.a import _two\n"
            ),
            "a/_two.py": "from . import _one\n",
            "b/__init__.py": "import critiquebench.a._one\nthing = 1\n",
        },
    )
    imports = all_imports(source)
    edges = runtime_edges(imports)
    assert ("critiquebench.a._one", "critiquebench.a._two") in edges
    assert ("critiquebench.a._two", "critiquebench.a._one") in edges
    assert ("critiquebench.a._one", "critiquebench.b") not in edges
    assert import_cycles(edges) == [("critiquebench.a._one", "critiquebench.a._two")]
    assert [(item.importer, item.module) for item in private_violations(imports)] == [
        ("critiquebench.b", "critiquebench.a._one")
    ]


def test_sub_rooms_go_through_each_other_s_init(tmp_path: Path) -> None:
    source = _write(
        tmp_path,
        {
            "__init__.py": "",
            "_lazy.py": "",
            "cli.py": "from critiquebench._cli._x import y\n",
            "_cli/__init__.py": "",
            "_cli/_x.py": "y = 1\n",
            "r/__init__.py": "",
            "r/_top.py": "from critiquebench._lazy import z\n",
            "r/s/__init__.py": "from critiquebench.r.s._m import f\n",
            "r/s/_m.py": "from critiquebench.r import _top\nf = 1\n_g = 2\n",
            "r/t/__init__.py": "",
            "r/t/_n.py": (
                "from critiquebench.r.s import f\n"
                "from critiquebench.r.s import _g\n"
                "from critiquebench.r.s._m import f\n"
            ),
        },
    )
    found = {
        (item.importer, item.module, item.name) for item in private_violations(all_imports(source))
    }
    assert found == {
        ("critiquebench.r._top", "critiquebench._lazy", "z"),
        ("critiquebench.r.t._n", "critiquebench.r.s", "_g"),
        ("critiquebench.r.t._n", "critiquebench.r.s._m", "f"),
    }


@pytest.mark.parametrize(
    ("edges", "expected"),
    [
        ({("a", "b"), ("b", "c"), ("c", "a"), ("b", "a")}, [("a", "b"), ("a", "b", "c")]),
        ({("a", "b"), ("b", "c")}, []),
    ],
)
def test_circles_are_reported_shortest_first(
    edges: set[tuple[str, str]], expected: list[tuple[str, ...]]
) -> None:
    assert import_cycles(edges) == expected
