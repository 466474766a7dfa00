"""Draw what one pass does to a graph: before and after side by side, removed nodes red, added nodes green.

    tsjit diff -p cse graph.ir -o cse.svg                 a pass of the registry (tsjit opt --list) on IR text
    tsjit diff -p fuse_graph model.py:f --inlined -o fused.svg
                                                          on a program's graph (an archive or file.py:name)
    tsjit diff -p dce graph.ir --dot                      the DOT source (no Graphviz needed)

Nodes are matched by identity across the pass: what the pass destroyed is removed, what it created is added, the
rest is grey on both sides (tsjit/passes/pass_diff.py). The graph is read as `tsjit svg` reads it (--inlined,
--plan --inputs), and the pass runs on a copy of it through run_pass, so TSJIT_LOG_LEVEL and TSJIT_LINT apply.
"""

from __future__ import annotations

import argparse
import sys

from tsjit.cli.common import CommandError
from tsjit.cli.svg import add_graph_arguments, add_picture_arguments, program_graph, write_picture


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-p", "--pass", dest="pass_name", required=True, metavar="PASS",
                        help="the pass, as tsjit opt names it (eliminate_dead_code, dce, cse, fuse_graph, ...)")
    add_graph_arguments(parser)
    add_picture_arguments(parser)


def run(args: argparse.Namespace) -> int:
    # deferred: the IR and the passes load only when a command runs, so `tsjit --help` stays fast
    from tsjit.cli.opt import resolve_passes
    from tsjit.errors import TsjitError  # deferred: as above
    from tsjit.passes.pass_diff import diff_pass  # deferred: as above

    (function,) = resolve_passes([args.pass_name])
    graph = program_graph(args).copy()  # a program's graphs and plans are its own: the pass changes a copy
    try:
        diff = diff_pass(function, graph)
    except TsjitError as error:
        raise CommandError(f"pass {function.__name__} failed: {error}") from error
    write_picture(diff.dot(), args)
    sys.stderr.write(f"{function.__name__}: {'changed' if diff.changed else 'unchanged'}, "
                     f"{len(diff.removed)} nodes removed, {len(diff.added)} added\n")
    return 0
