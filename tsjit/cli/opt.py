"""Run passes on a graph written as IR text and print the result (also `python -m tsjit.opt`).

    tsjit opt -p dce,cse,constant_pooling graph.ir
    echo "$IR" | TSJIT_LOG_LEVEL='>common_subexpression_elimination' tsjit opt -p cse -
    tsjit opt --list

A pass is named as tsjit/passes/registry.py names it (its function's name: `eliminate_dead_code`), by a short
alias (`dce`, `cse`) or by its module when the module holds one pass (`dead_code_elimination`); the registry holds
every pass, MLIR preparation's included. `--list` shows each with what it does, then the passes that need more
than a graph, with the reason. Passes run in the order given through `run_pass`, so TSJIT_LOG_LEVEL,
TSJIT_OPT_LIMIT and TSJIT_LINT apply. An unknown pass name is a usage error (exit status 2); unreadable or
unparsable input, or a pass failing on the graph, exit with status 1.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from tsjit.cli.common import CommandError, UsageError
from tsjit.errors import TsjitError
from tsjit.passes import registry


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-p", "--passes", default="", help="comma-separated pass names, run in order")
    parser.add_argument("--list", action="store_true", help="name the available passes and exit")
    parser.add_argument("file", nargs="?", help="IR text file, or - for stdin")


def run(args: argparse.Namespace) -> int:
    if args.list:
        sys.stdout.write(list_passes())
        return 0
    if args.file is None:
        raise UsageError("no input: give an IR file, or - for stdin")
    pipeline = resolve_passes([n.strip() for n in args.passes.split(",") if n.strip()])
    from tsjit.ir.parser import parse_ir  # deferred: the IR and the passes load only when a graph is given
    from tsjit.passes.pass_runner import run_pass  # deferred: as above

    try:
        graph = parse_ir(read_input(args.file))
    except TsjitError as error:
        raise CommandError(f"cannot parse {args.file}: {error}") from error
    for function in pipeline:
        try:
            run_pass(function, graph)
        except TsjitError as error:
            raise CommandError(f"pass {function.__name__} failed: {error}") from error
    sys.stdout.write(str(graph))
    return 0


def resolve_passes(names: list[str]) -> list[Callable[..., bool]]:
    """The functions for `names`; a usage error names the first unknown one."""
    resolved = []
    for name in names:
        try:
            resolved.append(registry.lookup(name).load())
        except KeyError:
            reason = registry.NOT_GRAPH_ONLY.get(name)
            why = f": it {reason}" if reason else " (--list names the passes)"
            raise UsageError(f"unknown pass {name!r}{why}") from None
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


def read_input(path: str) -> str:
    """The IR text of a file, or of stdin for `-`."""
    if path == "-":
        return sys.stdin.read()
    try:
        with open(path, encoding="utf-8") as file:
            return file.read()
    except (OSError, UnicodeDecodeError) as error:
        raise CommandError(f"cannot read {path}: {getattr(error, 'strerror', None) or error}") from None
