"""`python -m tsjit.opt`: run passes on a graph written as IR text and print the result.

    python -m tsjit.opt -p dce,cse,constant_pooling graph.ir
    echo "$IR" | TSJIT_LOG_LEVEL='>common_subexpression_elimination' python -m tsjit.opt -p cse -
    python -m tsjit.opt --list

A pass is named as tsjit/passes/registry.py names it (its function's name: `eliminate_dead_code`), by a short
alias (`dce`, `cse`) or by its module when the module holds one pass (`dead_code_elimination`). `--list` shows
every registered pass with what it does, then the passes that need more than a graph, with the reason. Passes
run in the order given through `run_pass`, so TSJIT_LOG_LEVEL, TSJIT_OPT_LIMIT and TSJIT_LINT apply. Unknown
pass names and unreadable or unparsable input end with one line on stderr and exit status 2; a pass that fails on
the graph ends with exit status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from tsjit.errors import TsjitError
from tsjit.ir.parser import parse_ir
from tsjit.passes import registry
from tsjit.passes.pass_runner import run_pass


def resolve_passes(names: list[str]) -> list[Callable[..., bool]]:
    """The functions for `names`; raises ValueError naming the first unknown one."""
    resolved = []
    for name in names:
        try:
            resolved.append(registry.lookup(name).load())
        except KeyError:
            reason = registry.NOT_GRAPH_ONLY.get(name)
            why = f": it {reason}" if reason else " (python -m tsjit.opt --list names the passes)"
            raise ValueError(f"unknown pass {name!r}{why}") from None
    return resolved


def list_passes() -> str:
    """One line per registered pass (`name (aliases): description`), then the passes that need more."""
    aliases: dict[str, list[str]] = {}
    for alias, name in registry.aliases().items():
        aliases.setdefault(name, []).append(alias)
    lines = [f"{name}{' (' + ', '.join(sorted(aliases[name])) + ')' if name in aliases else ''}: {entry.description}"
             for name, entry in registry.PASSES.items()]
    lines.append("not runnable on IR text:")
    lines += [f"  {name}: {reason}" for name, reason in registry.NOT_GRAPH_ONLY.items()]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tsjit.opt", description="Run passes on IR text.")
    parser.add_argument("-p", "--passes", default="", help="comma-separated pass names, run in order")
    parser.add_argument("--list", action="store_true", help="name the available passes and exit")
    parser.add_argument("file", nargs="?", help="IR text file, or - for stdin")
    args = parser.parse_args(argv)
    if args.list:
        sys.stdout.write(list_passes())
        return 0
    if args.file is None:
        return _fail("no input: give an IR file, or - for stdin", 2)
    try:
        pipeline = resolve_passes([n.strip() for n in args.passes.split(",") if n.strip()])
    except ValueError as error:
        return _fail(str(error), 2)
    try:
        text = sys.stdin.read() if args.file == "-" else _read(args.file)
    except (OSError, UnicodeDecodeError) as error:
        return _fail(f"cannot read {args.file}: {getattr(error, 'strerror', None) or error}", 2)
    try:
        graph = parse_ir(text)
    except TsjitError as error:
        return _fail(f"cannot parse {args.file}: {_first_line(error)}", 2)
    for function in pipeline:
        try:
            run_pass(function, graph)
        except TsjitError as error:
            return _fail(f"pass {function.__name__} failed: {_first_line(error)}", 1)
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
