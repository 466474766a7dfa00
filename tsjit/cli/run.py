"""Run a program on example inputs and print its result (or save it with --out).

    tsjit run model.pt --inputs 2x3:float32 4:int64       random inputs of these shapes and dtypes (--seed)
    tsjit run model.pt --inputs args.pt --out result.pt   the tuple or list of inputs torch.save wrote; the
                                                          result saved with torch.save
    tsjit run model.py:f --inputs 3 int:2                 a function in a Python file, scripted first
"""

from __future__ import annotations

import argparse

from tsjit.cli.common import add_inputs_argument, add_program_argument


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_program_argument(parser)
    add_inputs_argument(parser, tensors_file=True)
    parser.add_argument("--out", metavar="FILE", help="save the result with torch.save instead of printing it")


def run(args: argparse.Namespace) -> int:
    import torch  # deferred: torch and the compiler load only when a command runs

    from tsjit.cli.inputs import make_inputs  # deferred: as above
    from tsjit.cli.programs import load_program  # deferred: as above

    program = load_program(args.program, args.method, args.trusted)
    with torch.no_grad():  # inference: the result prints without autograd's history
        result = program(*make_inputs(args.inputs, args.seed))
    if args.out:
        torch.save(result, args.out)
    else:
        print(result)
    return 0
