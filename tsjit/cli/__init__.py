"""The `tsjit` command (also `python -m tsjit`): look at, run, optimize, lower and time TorchScript programs.

Each subcommand is a module of this package: its docstring's first line is its help, `add_arguments(parser)`
declares its arguments and `run(args) -> int` does the work. SUBCOMMANDS lists them in the order `tsjit --help`
shows them. Subcommand modules import torch and the compiler inside `run`, so `tsjit --help` stays fast.

Exit status, as compiler tools have it: 0 done; 1 the program or its input failed (a tsjit error, printed as its
message, with `~~~~ <--- HERE` under the source line where it has one; `--verbose` adds the Python traceback);
2 usage errors (argparse's message and usage). Archives are loaded untrusted unless `--trusted` is given.
"""

from __future__ import annotations

import argparse
import sys
import traceback
from types import ModuleType

from tsjit.cli import bench, diff, lower, opt, run, show, svg
from tsjit.cli.common import CommandError, UsageError
from tsjit.errors import TsjitError

SUBCOMMANDS: tuple[ModuleType, ...] = (show, run, opt, lower, svg, diff, bench)

EXAMPLES = """examples:
  tsjit show model.pt                              the graph of an archive's forward
  tsjit show model.py:Net --code --inlined         a module in a Python file, scripted: its code and inlined graph
  tsjit show model.py:lstm_cell --plan --inputs 3x10 '(3x20,3x20)' 80x10 80x20 80 80
                                                   the optimized plan the executor runs for such inputs
  tsjit run model.pt --inputs 2x3:float32 4:int64  run on random inputs of these shapes and dtypes
  tsjit run model.pt --inputs args.pt --out y.pt   run on the tensors of a .pt file, save the result
  tsjit opt -p dce,cse graph.ir                    run passes on IR text (tsjit opt --list names them all)
  tsjit lower model.py:Net --to linalg --inputs 1x3x32x32 -o net.mlir --run
                                                   lower to MLIR, run it on IREE and compare with eager
  tsjit svg model.py:lstm_cell --plan --inputs 3x10 '(3x20,3x20)' 80x10 80x20 80 80 -o plan.svg
                                                   the plan as a picture (Graphviz): FusionGroups as clusters
  tsjit diff -p cse graph.ir -o cse.svg            a pass's effect: removed nodes red, added green
  tsjit bench --only lstm                          time tsjit against eager, torch.jit and torch.compile

exit status: 0 done, 1 the program or its input failed, 2 usage error
"""


def subcommand_name(module: ModuleType) -> str:
    return module.__name__.rsplit(".", 1)[-1]


def build_parser(prog: str = "tsjit") -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.splitlines()[0], epilog=EXAMPLES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(metavar="COMMAND", required=True)
    for module in SUBCOMMANDS:
        add_subcommand(commands, module)
    return parser


def add_subcommand(commands, module: ModuleType) -> argparse.ArgumentParser:
    """The subcommand's parser: help and description from its docstring, `--verbose`, then its own arguments."""
    doc = (module.__doc__ or "").strip()
    parser = commands.add_parser(subcommand_name(module), help=doc.splitlines()[0] if doc else None,
                                 description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_common_arguments(parser, module)
    return parser


def add_common_arguments(parser: argparse.ArgumentParser, module: ModuleType) -> None:
    """What every subcommand takes, then its own arguments (also used by `python -m tsjit.opt`)."""
    parser.add_argument("--verbose", action="store_true", help="on failure, also print the Python traceback")
    parser.set_defaults(subcommand=module, parser=parser, extra_arguments=None)
    module.add_arguments(parser)


def parse(parser: argparse.ArgumentParser, argv: list[str] | None) -> argparse.Namespace:
    """Arguments a subcommand does not declare are an error, unless it passes them on (its add_arguments sets
    `extra_arguments=[]`, as `bench` does for `python -m bench`)."""
    args, extra = parser.parse_known_args(argv)
    if extra and args.extra_arguments is None:
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    if extra:
        args.extra_arguments = extra
    return args


def main(argv: list[str] | None = None) -> int:
    """Run the command line `argv` (default: sys.argv[1:]) and return the exit status."""
    args = parse(build_parser(), argv)
    return execute(args)


def execute(args: argparse.Namespace) -> int:
    """Run the parsed subcommand; failures become a message on stderr and the exit status."""
    prog = args.parser.prog
    try:
        return args.subcommand.run(args)
    except UsageError as error:
        args.parser.error(str(error))  # exits with status 2
    except (TsjitError, CommandError) as error:
        return fail(prog, str(error), error, args.verbose)
    except OSError as error:
        where = f"{error.filename}: " if error.filename else ""
        return fail(prog, f"{where}{error.strerror or error}", error, args.verbose)
    except KeyboardInterrupt:
        return 130


def fail(prog: str, message: str, error: BaseException, verbose: bool) -> int:
    if verbose:
        traceback.print_exception(error, file=sys.stderr)
    sys.stderr.write(f"{prog}: error: {message.rstrip()}\n")
    return 1
