"""What the subcommands share before any of them runs: the arguments that name a program and its inputs, and the
error that ends a command with a message instead of a traceback.

Nothing here imports torch, so building the parser (and `tsjit --help`) stays fast; the work is in programs.py and
inputs.py, which a subcommand imports when it runs.
"""

from __future__ import annotations

import argparse
import re

# dtype names accepted in input specs (torch.<name>)
DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "complex64", "complex128", "float", "double", "half", "long", "int")
NUMBER_KINDS = ("int", "float", "bool")


class CommandError(Exception):
    """The program or its input failed in a way the user can fix: the message is printed, the exit status is 1."""


class UsageError(Exception):
    """The command line asks for something that cannot be done (found after parsing): exit status 2, as argparse's
    own usage errors."""


def add_program_argument(parser: argparse.ArgumentParser) -> None:
    """The positional PROGRAM (an archive or file.py:name), `--method` and `--trusted`."""
    parser.add_argument("program", metavar="PROGRAM",
                        help="a TorchScript archive (.pt, written by tsjit.save or torch.jit.save), or file.py:name: "
                             "a function, an nn.Module class (built without arguments) or instance, scripted")
    parser.add_argument("--method", default="forward", help="the module's method (default: forward)")
    parser.add_argument("--trusted", action="store_true",
                        help="load the archive as trusted: its code may use file, process and network operators "
                             "(by default such archives are refused; see the README's threat model)")


def add_inputs_argument(parser: argparse.ArgumentParser, required: bool = False, tensors_file: bool = False) -> None:
    """`--inputs SPEC...`: example inputs as shapes and dtypes (random values), optionally a .pt of tensors."""
    extra = " or one .pt file holding a tuple or list of them (torch.save)" if tensors_file else ""
    parser.add_argument("--inputs", nargs="+", type=input_spec if not tensors_file else input_spec_or_file,
                        required=required, default=[], metavar="SPEC",
                        help="one per argument: SIZESxSIZES[:DTYPE] for a random tensor (2x3:float32, 4:int64; "
                             "scalar:float32 for 0-d; dtype float32 by default), int:3, float:0.5, bool:true for "
                             "numbers, (SPEC,SPEC) for a tuple" + extra)
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (default 0)")


def input_spec(text: str) -> str:
    """argparse `type`: checks the spelling of an input spec (the tensors are made later, by inputs.py)."""
    problem = spec_problem(text)
    if problem:
        raise argparse.ArgumentTypeError(f"bad input spec {text!r}: {problem}")
    return text


def input_spec_or_file(text: str) -> str:
    return text if text.endswith(".pt") else input_spec(text)


_SIZES = re.compile(r"(scalar|\d+(x\d+)*)")


def spec_problem(text: str) -> str | None:
    """What is wrong with an input spec, or None."""
    if text.startswith("(") and text.endswith(")"):
        parts = split_tuple(text)
        return next((p for p in map(spec_problem, parts) if p), None) if parts else "an empty tuple"
    head, _, tail = text.partition(":")
    if head in NUMBER_KINDS:
        return _number_problem(head, tail)
    if not _SIZES.fullmatch(head):
        return "sizes are numbers joined by x (2x3), or scalar"
    if tail and tail not in DTYPES:
        return f"unknown dtype {tail!r} (one of {', '.join(DTYPES)})"
    return None


def _number_problem(kind: str, value: str) -> str | None:
    if kind == "bool":
        return None if value.lower() in ("true", "false", "1", "0") else "bool:true or bool:false"
    try:
        (int if kind == "int" else float)(value)
    except ValueError:
        return f"{value!r} is not a{'n' if kind == 'int' else ''} {kind}"
    return None


def split_tuple(text: str) -> list[str]:
    """The top-level elements of `(a,(b,c))`."""
    parts, depth, current = [], 0, ""
    for char in text[1:-1]:
        depth += {"(": 1, ")": -1}.get(char, 0)
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += char
    return [p for p in [*parts, current] if p]
