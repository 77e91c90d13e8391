"""The judges' house rules, read from the source's syntax trees (nothing is imported):
each judge and shared part is a folder that others use only through its ``__init__``,
one implementation starts the sandbox pool lazily, and judges and suites import each
other in one direction only."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import critiquebench

PACKAGE = Path(critiquebench.__file__).parent
JUDGES = PACKAGE / "judges"
FOLDERS = sorted(p.parent.name for p in JUDGES.glob("*/__init__.py"))


def _module(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> Iterator[tuple[int, str, str | None]]:
    """Every import of a file, at any depth (in functions, under TYPE_CHECKING):
    (line, module, name imported from it or None)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = _module(path) if path.name == "__init__.py" else _module(path).rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, None
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join([*anchor, base] if base else anchor)
            for alias in node.names:
                yield node.lineno, base, alias.name


def _folder_of(module: str) -> str | None:
    """The judges folder a module belongs to (``sql``, ``sandbox``, ...), or None."""
    parts = module.split(".")
    if parts[:2] == ["critiquebench", "judges"] and len(parts) > 2 and parts[2] in FOLDERS:
        return parts[2]
    return None


def test_the_judges_have_their_folders() -> None:
    expected = {"json", "markdown", "python", "sandbox", "sql", "static", "trigger"}
    assert expected <= set(FOLDERS)


def test_no_module_reaches_into_another_judges_folder() -> None:
    """A folder's private modules and names are its own: everything else in the judges
    package uses a folder only through the names its ``__init__`` offers."""
    breaches = []
    for path in sorted(JUDGES.rglob("*.py")):
        own = _folder_of(_module(path))
        for line, module, name in _imports(path):
            target = _folder_of(module)
            if target is None or target == own:
                continue
            inner = module.split(".")[3:]
            private_module = any(part.startswith("_") for part in inner)
            private_name = name is not None and name.startswith("_")
            if private_module or private_name:
                where = path.relative_to(PACKAGE)
                breaches.append(f"{where}:{line} imports {module}{f' {name}' if name else ''}")
    assert breaches == []


def _calls(path: Path) -> Iterator[str]:
    """The dotted names called in a file (``LazySandbox``, ``Sandbox.detect``, ...)."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            func = node.func
            if isinstance(func, ast.Name):
                yield func.id
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                yield f"{func.value.id}.{func.attr}"


def test_one_lazily_started_sandbox_pool_serves_every_judge() -> None:
    """Starting a pool (``Sandbox.detect``) and holding one lazily (``LazySandbox``)
    each happen in exactly one module of the package, in the sandbox folder: a judge
    that executes gets its pool from there, never by a copy of its own."""
    places: dict[str, set[str]] = {"LazySandbox": set(), "Sandbox.detect": set()}
    for path in sorted(PACKAGE.rglob("*.py")):
        for called in _calls(path):
            if called in places:
                places[called].add(str(path.relative_to(PACKAGE)))
    assert {name: len(found) for name, found in places.items()} == {
        "LazySandbox": 1,
        "Sandbox.detect": 1,
    }, places
    assert all(next(iter(found)).startswith("judges/sandbox/") for found in places.values())


def _node(module: str) -> str:
    """A module's place in the import graph: a judges folder, one module of the judges
    package's own (its ``__init__``, ``_registry``, ...), or a top-level room."""
    folder = _folder_of(module)
    if folder is not None:
        return f"judges.{folder}"
    parts = module.split(".")
    if parts[:2] == ["critiquebench", "judges"]:
        return ".".join(parts[1:3])
    return parts[1] if len(parts) > 1 else parts[0]


def _is_module(module: str) -> bool:
    relative = Path(*module.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative).is_dir()


def _type_checking_lines(path: Path) -> set[int]:
    """Lines under ``if TYPE_CHECKING:``: imports for annotations, never run."""
    lines: set[int] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and ast.unparse(node.test).endswith("TYPE_CHECKING"):
            for inner in node.body:
                lines.update(range(inner.lineno, (inner.end_lineno or inner.lineno) + 1))
    return lines


def _graph() -> dict[str, set[str]]:
    """Which places of the package import which, by every import that runs (at module
    level or inside a function)."""
    graph: dict[str, set[str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _node(_module(path))
        skipped = _type_checking_lines(path)
        for line, module, name in _imports(path):
            if line in skipped or not module.startswith("critiquebench."):
                continue
            full = f"{module}.{name}" if name else module
            target = _node(full if _is_module(full) else module)
            if target != source:
                graph.setdefault(source, set()).add(target)
    return graph


def _reaches(graph: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        room = todo.pop()
        for nxt in graph.get(room, ()):
            if nxt == goal:
                return True
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    return False


def test_no_import_circle_runs_through_judges_or_suites() -> None:
    graph = _graph()
    rooms = [room for room in graph if room == "suites" or room.startswith("judges")]
    circles = [room for room in rooms if _reaches(graph, room, room)]
    assert circles == [], {room: sorted(graph.get(room, ())) for room in circles}
