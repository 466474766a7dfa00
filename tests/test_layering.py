"""DESIGN.md's layering, checked on the imports themselves.

Every `import` in tsjit (at module level, inside functions, and under `if TYPE_CHECKING:`) is read with `ast`
and resolved to the tsjit module it names. Each module belongs to a layer; a module may import its own layer and
the layers below it (DESIGN.md, "Layout"):

    errors, log, progress, garbage_collection, lru  <-  source  <-  ir  <-  ops  <-  codegen  <-  passes
                 <-  frontend  <-  runtime  <-  serialization, mlir  <-  api  <-  cli  <-  tsjit/__init__, __main__, opt

An edge against that order fails the test unless ALLOWED lists it with its reason. `python tests/test_layering.py`
prints the numbers: imports (module level and in functions), edges against the order, and the import cycles
(strongly connected components of the module graph, with and without function-level imports; the allowlisted
edges left out).
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "tsjit"

# layer -> rank; a module may import a layer of lower or equal rank (equal: its own layer only)
RANKS = {
    "errors": 0, "log": 0, "progress": 0, "garbage_collection": 0, "lru": 0.5,  # lru uses log
    "source": 1,
    "ir": 2,
    "ops": 3,
    "codegen": 4,
    "passes": 5,
    "frontend": 6,
    "runtime": 7,
    "serialization": 8, "mlir": 8,
    "api": 9,
    "cli": 9.5,
    "tsjit": 10, "__main__": 10, "opt": 10,
}

# (importer, imported) -> why the edge points up; at most five
_OPERATOR_HOOK = ("Node.schema, Graph.insert and alias analysis need operators, which are written in terms of the "
                  "IR: ir/operator_hook.py is the one declared way up, importing ops when called")
ALLOWED: dict[tuple[str, str], str] = {
    ("tsjit.ir.operator_hook", "tsjit.ops.matching"): _OPERATOR_HOOK,
    ("tsjit.ir.operator_hook", "tsjit.ops.registry"): _OPERATOR_HOOK,
    ("tsjit.passes.create_autodiff_subgraphs", "tsjit.runtime.symbolic_script"):
        "which nodes are differentiable is the gradient formula table's answer (symbolic_script.py, whose formulas "
        "the frontend compiles); looking a node's schema up in it imports nothing else; imported when the pass runs",
    ("tsjit.frontend.ir_emitter", "tsjit.runtime.function"):
        "a compiled function called from Python (GraphFunction.__call__: a script object's method, prim::Enter) "
        "runs on its one runtime Function, built in runtime/function.py; imported when called",
}


@dataclass(frozen=True)
class Import:
    importer: str
    imported: str
    in_function: bool
    type_checking: bool


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    return {module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def layer(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "tsjit"


def resolve(name: str, modules: dict[str, Path]) -> str | None:
    """The longest prefix of a dotted name that is a tsjit module."""
    parts = name.split(".")
    while parts:
        candidate = ".".join(parts)
        if candidate in modules:
            return candidate
        parts.pop()
    return None


def _base_of(node: ast.ImportFrom, importer: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    package = importer.split(".") if is_package else importer.split(".")[:-1]
    package = package[: len(package) - node.level + 1]
    return ".".join(package + ([node.module] if node.module else []))


def _targets(node: ast.Import | ast.ImportFrom, importer: str, modules: dict[str, Path]) -> set[str]:
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    else:
        base = _base_of(node, importer, modules[importer].name == "__init__.py")
        names = [f"{base}.{alias.name}" for alias in node.names]
    return {target for name in names if (target := resolve(name, modules)) and target != importer}


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _walk(node: ast.AST, in_function: bool, type_checking: bool):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, in_function, type_checking
            continue
        inside = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        checking = type_checking or (isinstance(child, ast.If) and _is_type_checking(child))
        yield from _walk(child, inside, checking)


def imports(modules: dict[str, Path] | None = None) -> list[Import]:
    """Every import statement of the package naming a tsjit module, one entry per (statement, target)."""
    modules = modules or all_modules()
    found = []
    for importer, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        for node, in_function, type_checking in _walk(tree, False, False):
            for target in sorted(_targets(node, importer, modules)):
                found.append(Import(importer, target, in_function, type_checking))
    return found


def against_order(found: list[Import]) -> set[tuple[str, str]]:
    """Module edges whose imported layer sits above (or beside) the importer's."""
    edges = set()
    for edge in found:
        source, target = layer(edge.importer), layer(edge.imported)
        if source != target and RANKS[target] >= RANKS[source]:
            edges.add((edge.importer, edge.imported))
    return edges


def cycles(edges: set[tuple[str, str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan)."""
    graph: dict[str, list[str]] = {}
    for source, target in edges:
        graph.setdefault(source, []).append(target)
        graph.setdefault(target, [])
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components = []

    def visit(start: str) -> None:
        work = [(start, iter(graph[start]))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(graph[successor])))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        components.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(components, key=len, reverse=True)


def runtime_edges(found: list[Import], with_functions: bool) -> set[tuple[str, str]]:
    """The edges executed at run time (not under TYPE_CHECKING), without the allowlisted ones."""
    return {(edge.importer, edge.imported) for edge in found
            if not edge.type_checking and (with_functions or not edge.in_function)} - set(ALLOWED)


def report() -> str:
    found = imports()
    top = [edge for edge in found if not edge.in_function and not edge.type_checking]
    in_functions = [edge for edge in found if edge.in_function]
    checking = [edge for edge in found if edge.type_checking and not edge.in_function]
    wrong = against_order(found)
    lines = [f"imports of tsjit modules: {len(top)} at module level, {len(in_functions)} in functions, "
             f"{len(checking)} under TYPE_CHECKING",
             "function-level imports (any module) without a reason comment: "
             f"{len(unexplained_function_level_imports())}",
             f"module edges against DESIGN's order: {len(wrong)} ({len(wrong - set(ALLOWED))} not allowlisted)"]
    lines += [f"  {source} -> {target}" for source, target in sorted(wrong)]
    for label, with_functions in (("module-level imports only", False), ("all imports", True)):
        components = cycles(runtime_edges(found, with_functions))
        crossing = sum(len({layer(m) for m in c}) > 1 for c in components)
        lines.append(f"cycles ({label}): {len(components)}, sizes {[len(c) for c in components]}, "
                     f"{crossing} across folders")
        lines += [f"  {' '.join(component)}" for component in components]
    return "\n".join(lines)


def test_imports_follow_design_order():
    wrong = against_order(imports())
    assert not wrong - set(ALLOWED), "edges against DESIGN.md's layering:\n" + "\n".join(
        f"  {source} -> {target}" for source, target in sorted(wrong - set(ALLOWED)))


def test_allowlist_is_short_and_used():
    assert len(ALLOWED) <= 5
    assert set(ALLOWED) <= against_order(imports()), "an allowlisted edge no longer exists: remove it"


def unexplained_function_level_imports() -> list[str]:
    """Imports inside functions (of any module) without a comment saying which cycle they break or what
    expensive import they defer, on their line or the line above."""
    found = []
    for path in all_modules().values():
        text = path.read_text()
        lines = text.splitlines()
        for node, in_function, _ in _walk(ast.parse(text), False, False):
            said = lines[node.end_lineno - 1] + lines[node.lineno - 2]
            if in_function and "breaks a real cycle" not in said and "deferred:" not in said:
                found.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno}")
    return found


def test_function_level_imports_say_why():
    assert unexplained_function_level_imports() == []


def test_no_import_cycle_crosses_a_layer():
    """Cycles closed by a function-level import stay inside one folder (a cycle across folders would need an
    edge against the order); module-level cycles would not even import."""
    found = imports()
    assert cycles(runtime_edges(found, with_functions=False)) == []
    crossing = [c for c in cycles(runtime_edges(found, with_functions=True)) if len({layer(m) for m in c}) > 1]
    assert crossing == []


if __name__ == "__main__":
    sys.exit(print(report()))
