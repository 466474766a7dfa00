"""Lower a program to MLIR (torch-mlir's pipelines) and print or write it; optionally run it on IREE.

    tsjit lower model.py:Net --to linalg --inputs 1x3x32x32            the linalg-on-tensors module on stdout
    tsjit lower model.pt --to tosa --inputs 4x10 -o model.mlir          written to a file
    tsjit lower model.py:f --to stablehlo --inputs 8x8 8x8 --run        compiled with IREE (llvm-cpu), run on
                                                                        the inputs and compared with eager

`--inputs` are the example arguments whose shapes and dtypes the MLIR is compiled for (needed for tensors).
`--run` compares IREE's result with the Python original's for a file.py:name program, and with tsjit's own run
for an archive (it has no Python original); a mismatch beyond --rtol/--atol exits with status 1. The comparison
goes to stdout when the MLIR is written to a file, to stderr when the MLIR is printed.
"""

from __future__ import annotations

import argparse
import sys

from tsjit.cli.common import CommandError, add_inputs_argument, add_program_argument

TARGETS = {"torch": "torch", "linalg": "linalg-on-tensors", "linalg-on-tensors": "linalg-on-tensors",
           "tosa": "tosa", "stablehlo": "stablehlo"}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_program_argument(parser)
    parser.add_argument("--to", choices=list(TARGETS), default="linalg",
                        help="torch: the torch backend contract; linalg (linalg-on-tensors), tosa, stablehlo: a "
                             "backend (default: linalg)")
    add_inputs_argument(parser)
    parser.add_argument("-o", "--output", metavar="FILE", help="write the MLIR here instead of printing it")
    parser.add_argument("--run", action="store_true", help="compile with IREE, run on the inputs, compare with eager")
    parser.add_argument("--rtol", type=float, default=1e-4, help="relative tolerance of --run (default 1e-4)")
    parser.add_argument("--atol", type=float, default=1e-5, help="absolute tolerance of --run (default 1e-5)")


def run(args: argparse.Namespace) -> int:
    from tsjit.cli.inputs import make_inputs  # deferred: torch and the compiler load only when a command runs
    from tsjit.cli.programs import load_program  # deferred: as above
    from tsjit.mlir import pipelines  # deferred: as above, and torch-mlir with it

    program = load_program(args.program, args.method, args.trusted)
    inputs = make_inputs(args.inputs, args.seed)
    lowered = pipelines.compile(program.compiled, inputs, TARGETS[args.to], method=args.method)
    text = str(lowered)
    if args.output:
        with open(args.output, "w", encoding="utf-8") as file:
            file.write(text)
    else:
        sys.stdout.write(text)
    if not args.run:
        return 0
    report = compare_on_iree(program, lowered, inputs, args.rtol, args.atol)
    print(report, file=sys.stdout if args.output else sys.stderr)
    return 0


def compare_on_iree(program, lowered, inputs: tuple, rtol: float, atol: float) -> str:
    """Run the lowered module on IREE; a line saying how close it came to the reference, or a CommandError."""
    import torch  # deferred: as above

    from tsjit.mlir import iree  # deferred: IREE loads only for --run

    actual = iree.compile(lowered)(*inputs)
    with torch.no_grad():
        expected = program.eager(*inputs) if program.original is not None else program(*inputs)
    reference = "eager" if program.original is not None else "tsjit (an archive has no Python original)"
    try:
        torch.testing.assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=True, check_dtype=False)
    except AssertionError as error:
        raise CommandError(f"IREE's result differs from {reference}:\n{error}") from None
    return f"IREE's result matches {reference}: largest difference {max_difference(expected, actual):.3g} " \
           f"(rtol {rtol:g}, atol {atol:g})"


def max_difference(expected, actual) -> float:
    """The largest absolute difference over the tensors of two results that assert_close found close."""
    import torch  # deferred: as above

    if isinstance(expected, tuple | list):
        return max((max_difference(e, a) for e, a in zip(expected, actual)), default=0.0)
    if not isinstance(expected, torch.Tensor) or not expected.numel():
        return 0.0
    dtype = torch.complex128 if expected.is_complex() or actual.is_complex() else torch.float64
    return (expected.to(dtype) - actual.to(dtype)).abs().max().item()
