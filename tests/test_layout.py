"""The package's layout: rooms import only from rooms below them, no import circle, and
no function longer than the limit (the layout of the ``causefs/__init__`` docstring)."""

import ast
from pathlib import Path

import pytest

import causefs

PACKAGE = Path(causefs.__file__).parent

#: every room of the package and its rank: a module imports from its own room or from
#: rooms of a lower rank only
RANKS = {
    "_version": 0, "core": 0,
    "numerics": 1, "datasets": 1,
    "model": 2,
    "budget": 3, "terms": 3,
    "kernels": 4, "qp": 4,
    "blocks": 5,
    "plugins": 6,
    "engine": 7,
    "estimator": 8,
    "selectors": 9, "testing": 9,
    "model_selection": 10,
    "app": 11,
    "plot": 12,
    "__init__": 13, "__main__": 13,
}

#: lines of code (no docstring, comment or blank line) a function may have
MAX_FUNCTION_LINES = 60


def _modules():
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        name = ".".join(("causefs",) + parts).removesuffix(".__init__")
        yield name, path, path.name == "__init__.py"


MODULES = {name: (path, is_package) for name, path, is_package in _modules()}


def _room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _imports(module: str, top_level_only: bool) -> set:
    """The causefs modules ``module`` imports (anywhere in it, or at its top level)."""
    path, is_package = MODULES[module]
    tree = ast.parse(path.read_text())
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    package = module if is_package else module.rsplit(".", 1)[0]
    found = set()
    for node in nodes:
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names if alias.name.startswith("causefs")}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if not target.startswith("causefs"):
                continue
            # ``from package import module`` imports that module (and the package, which
            # is being imported already when a module of its own does it)
            submodules = {f"{target}.{alias.name}" for alias in node.names
                          if f"{target}.{alias.name}" in MODULES}
            found |= submodules
            if len(submodules) < len(node.names):
                found.add(target)
    return {name for name in found if name in MODULES}


def test_every_module_lives_in_a_known_room():
    unknown = sorted({_room(m) for m in MODULES} - set(RANKS) - {"conf"})
    assert not unknown, f"rooms without a rank: {unknown}"


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_reaches_up_a_layer(module):
    room = _room(module)
    if room == "conf":
        return
    for target in _imports(module, top_level_only=False):
        other = _room(target)
        if other == room:
            continue
        assert RANKS[other] < RANKS[room], (
            f"{module} (room {room}, rank {RANKS[room]}) imports {target} (room {other}, "
            f"rank {RANKS[other]})")


def test_no_import_circle():
    graph = {m: _imports(m, top_level_only=True) - {m} for m in MODULES}
    state, stack = {}, []

    def visit(node):
        state[node] = "open"
        stack.append(node)
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import circle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = "done"

    for module in sorted(graph):
        if module not in state:
            visit(module)


def _code_lines(function: ast.AST, lines: list) -> int:
    body = function.body
    docstring = set()
    if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)):
        docstring = set(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(1 for number in range(function.lineno, function.end_lineno + 1)
               if number not in docstring and lines[number - 1].strip()
               and not lines[number - 1].strip().startswith("#"))


def test_no_function_is_longer_than_the_limit():
    long = []
    for module, (path, _) in MODULES.items():
        source = path.read_text()
        lines = source.splitlines()
        for node in ast.walk(ast.parse(source)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                count = _code_lines(node, lines)
                if count > MAX_FUNCTION_LINES:
                    long.append(f"{module}.{node.name}: {count} lines")
    assert not long, f"functions over {MAX_FUNCTION_LINES} lines of code: {long}"


def test_the_checks_can_fail(tmp_path, monkeypatch):
    """The import analysis sees a reach up a layer, including one inside a function."""
    module = "causefs.core.contracts"
    path = tmp_path / "contracts.py"
    path.write_text(MODULES[module][0].read_text()
                    + "\n\ndef _late():\n    from ..engine import run_cause_fs\n")
    monkeypatch.setitem(MODULES, module, (path, False))
    assert "causefs.engine" in _imports(module, top_level_only=False)
    assert "causefs.engine" not in _imports(module, top_level_only=True)
    with pytest.raises(AssertionError, match="imports causefs.engine"):
        test_no_module_reaches_up_a_layer(module)
