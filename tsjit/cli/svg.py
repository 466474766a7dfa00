"""Draw a program's graph, or its optimized plan for example inputs, as an SVG picture (Graphviz).

    tsjit svg model.pt -o forward.svg                    forward's graph (to stdout without -o)
    tsjit svg model.py:Net --inlined -o net.svg          every call inlined
    tsjit svg model.py:lstm_cell --plan --inputs 3x10 '(3x20,3x20)' 80x10 80x20 80 80 -o plan.svg
                                                         the plan the executor runs for such inputs
    tsjit svg graph.ir --dot                             the DOT source of IR text (no Graphviz needed)

Boxes are nodes, edges are values labelled with their types, the blocks of prim::If and prim::Loop and the
subgraphs of prim::FusionGroup and prim::DifferentiableGraph are nested clusters (tsjit/ir/graphviz.py). The
picture needs Graphviz's `dot` (apt-get install graphviz); --dot writes its source instead.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tsjit.cli.common import CommandError, UsageError, add_inputs_argument, add_program_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_graph_arguments(parser)
    add_picture_arguments(parser)


def run(args: argparse.Namespace) -> int:
    # deferred: the IR loads only when a command runs, so `tsjit --help` stays fast
    from tsjit.ir.graphviz import graph_to_dot

    write_picture(graph_to_dot(program_graph(args)), args)
    return 0


def add_graph_arguments(parser: argparse.ArgumentParser) -> None:
    """PROGRAM (an archive, file.py:name or a .ir file of IR text) and which of its graphs (`tsjit diff` too)."""
    add_program_argument(parser)
    parser.add_argument("--inlined", action="store_true", help="the graph with every call inlined")
    parser.add_argument("--plan", action="store_true", help="the optimized graph the executor runs for --inputs")
    add_inputs_argument(parser)


def add_picture_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("-o", "--output", metavar="FILE", help="write the picture to FILE (default: stdout)")
    parser.add_argument("--dot", action="store_true", help="write Graphviz's DOT source instead of SVG")


def program_graph(args: argparse.Namespace):
    """The graph args name: IR text of a .ir file, or a program's graph, inlined graph or plan."""
    if args.plan and args.inlined:
        raise UsageError("--plan and --inlined are different graphs: choose one")
    if args.plan and not args.inputs:
        raise UsageError("--plan needs example inputs: --inputs SPEC...")
    if args.program.endswith(".ir"):
        if args.plan or args.inlined:
            raise UsageError("--plan and --inlined need a program (an archive or file.py:name), not IR text")
        return read_graph(args.program)
    # deferred: torch and the compiler load only when a command runs
    from tsjit.cli.inputs import make_inputs
    from tsjit.cli.programs import load_program  # deferred: as above

    program = load_program(args.program, args.method, args.trusted)
    if args.plan:
        return program.plan_graph(make_inputs(args.inputs, args.seed))
    return program.method.inlined_graph if args.inlined else program.method.graph


def read_graph(path: str):
    """The graph of an IR text file."""
    # deferred: the IR loads only when a command runs
    from tsjit.cli.opt import read_input
    from tsjit.errors import TsjitError  # deferred: as above
    from tsjit.ir.parser import parse_ir  # deferred: as above

    try:
        return parse_ir(read_input(path))
    except TsjitError as error:
        raise CommandError(f"cannot parse {path}: {error}") from error


def write_picture(dot_source: str, args: argparse.Namespace) -> None:
    """The SVG of `dot_source` (or the source itself with --dot) to -o FILE or stdout."""
    # deferred: as run's import
    from tsjit.ir.graphviz import render_svg

    text = dot_source if args.dot else render_svg(dot_source)
    if args.output:
        Path(args.output).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
