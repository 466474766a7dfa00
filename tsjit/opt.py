"""`python -m tsjit.opt`: run passes on a graph written as IR text and print the result.

    python -m tsjit.opt -p dce,cse,constant_pooling graph.ir
    echo "$IR" | TSJIT_LOG_LEVEL='>common_subexpression_elimination' python -m tsjit.opt -p cse -
    python -m tsjit.opt --list

A pass is named by its module under tsjit/passes (`dead_code_elimination`), by its function
(`eliminate_dead_code`) or by a short alias (`dce`, `cse`). Every module there with a graph-only entry point
is a pass: its first public function (in source order) that takes just `graph` (other parameters defaulted) and
returns bool. Passes run in the order given through `run_pass`, so TSJIT_LOG_LEVEL, TSJIT_OPT_LIMIT and
TSJIT_LINT apply. Unknown pass names and unreadable or unparsable input end with one line on stderr and exit
status 2; a pass that fails on the graph ends with exit status 1.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import sys
from collections.abc import Callable

from tsjit.errors import TsjitError

ALIASES = {"dce": "dead_code_elimination", "cse": "common_subexpression_elimination"}
_NOT_PASSES = frozenset({"pass_runner"})


def available_passes() -> dict[str, Callable[..., bool]]:
    """Module name -> entry point, for every pass module that imports and has a graph-only entry point."""
    import tsjit.passes

    passes = {}
    for info in sorted(pkgutil.iter_modules(tsjit.passes.__path__), key=lambda m: m.name):
        if info.name in _NOT_PASSES:
            continue
        try:
            module = importlib.import_module(f"tsjit.passes.{info.name}")
        except Exception:  # a module that does not import is not available; the others still are
            continue
        entry = _entry_point(module)
        if entry is not None:
            passes[info.name] = entry
    return passes


def _entry_point(module) -> Callable[..., bool] | None:
    functions = [f for name, f in vars(module).items()
                 if inspect.isfunction(f) and f.__module__ == module.__name__ and not name.startswith("_")]
    functions.sort(key=lambda f: f.__code__.co_firstlineno)
    return next((f for f in functions if _takes_only_a_graph(f)), None)


def _takes_only_a_graph(function: Callable) -> bool:
    parameters = list(inspect.signature(function).parameters.values())
    if not parameters or parameters[0].name != "graph" or inspect.signature(function).return_annotation not in (
            bool, "bool"):
        return False
    return all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) for p in parameters[1:])


def resolve_passes(names: list[str], passes: dict[str, Callable[..., bool]]) -> list[Callable[..., bool]]:
    """The entry points for `names`; raises ValueError naming the first unknown one."""
    by_function = {f.__name__: f for f in passes.values()}
    resolved = []
    for name in names:
        function = passes.get(ALIASES.get(name, name)) or by_function.get(name)
        if function is None:
            raise ValueError(f"unknown pass {name!r} (python -m tsjit.opt --list names the passes)")
        resolved.append(function)
    return resolved


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tsjit.opt", description="Run passes on IR text.")
    parser.add_argument("-p", "--passes", default="", help="comma-separated pass names, run in order")
    parser.add_argument("--list", action="store_true", help="name the available passes and exit")
    parser.add_argument("file", nargs="?", help="IR text file, or - for stdin")
    args = parser.parse_args(argv)
    passes = available_passes()
    if args.list:
        aliases = {module: alias for alias, module in ALIASES.items()}
        for name, function in passes.items():
            alias = f" ({aliases[name]})" if name in aliases else ""
            print(f"{name}{alias}: {function.__name__}")
        return 0
    if args.file is None:
        return _fail("no input: give an IR file, or - for stdin", 2)
    try:
        pipeline = resolve_passes([n.strip() for n in args.passes.split(",") if n.strip()], passes)
    except ValueError as error:
        return _fail(str(error), 2)
    try:
        text = sys.stdin.read() if args.file == "-" else _read(args.file)
    except (OSError, UnicodeDecodeError) as error:
        return _fail(f"cannot read {args.file}: {getattr(error, 'strerror', None) or error}", 2)
    from tsjit.ir.parser import parse_ir
    from tsjit.passes.pass_runner import run_pass

    try:
        graph = parse_ir(text)
    except TsjitError as error:
        return _fail(f"cannot parse {args.file}: {_first_line(error)}", 2)
    for function in pipeline:
        try:
            run_pass(function, graph)
        except TsjitError as error:
            return _fail(f"pass {function.__module__.rsplit('.', 1)[-1]} failed: {_first_line(error)}", 1)
    sys.stdout.write(str(graph))
    return 0


def _read(path: str) -> str:
    with open(path, encoding="utf-8") as file:
        return file.read()


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0].rstrip(":") if text else type(error).__name__


def _fail(message: str, status: int) -> int:
    sys.stderr.write(f"tsjit.opt: {message}\n")
    return status


if __name__ == "__main__":
    sys.exit(main())
