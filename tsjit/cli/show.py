"""Print a program's graph, inlined graph, TorchScript code, or the optimized plan for example inputs.

    tsjit show model.pt                                   forward's graph (the default)
    tsjit show model.pt --code --method encode            the code of another method
    tsjit show model.py:Net --inlined                     every call inlined, as torch.jit's inlined_graph
    tsjit show model.py:f --plan --inputs 2x3 4:int64     what the graph executor runs for such inputs:
                                                          specialized to their types and optimized
"""

from __future__ import annotations

import argparse
import sys

from tsjit.cli.common import UsageError, add_inputs_argument, add_program_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_program_argument(parser)
    parser.add_argument("--graph", dest="views", action="append_const", const="graph", help="the graph (default)")
    parser.add_argument("--inlined", dest="views", action="append_const", const="inlined",
                        help="the graph with every call inlined")
    parser.add_argument("--code", dest="views", action="append_const", const="code", help="the TorchScript code")
    parser.add_argument("--plan", dest="views", action="append_const", const="plan",
                        help="the optimized graph the executor runs for --inputs")
    add_inputs_argument(parser)


def run(args: argparse.Namespace) -> int:
    views = list(dict.fromkeys(args.views or ["graph"]))
    if "plan" in views and not args.inputs:
        raise UsageError("--plan needs example inputs: --inputs SPEC...")
    from tsjit.cli.inputs import make_inputs  # deferred: torch and the compiler load only when a command runs
    from tsjit.cli.programs import load_program  # deferred: as above

    program = load_program(args.program, args.method, args.trusted)
    inputs = make_inputs(args.inputs, args.seed)
    for view in views:
        text = view_text(program, view, inputs)
        sys.stdout.write((f"# {view}\n" if len(views) > 1 else "") + text + ("" if text.endswith("\n") else "\n"))
    return 0


def view_text(program, view: str, inputs: tuple) -> str:
    method = program.method
    if view == "graph":
        return str(method.graph)
    if view == "inlined":
        return str(method.inlined_graph)
    if view == "code":
        return method.code
    return str(program.plan_graph(inputs))
