"""Time tsjit against eager PyTorch, torch.jit and torch.compile (the repository's bench/, `python -m bench`).

    tsjit bench                          every benchmark
    tsjit bench --only lstm --rounds 5   one benchmark; the arguments are python -m bench's:
                                         --only NAME, --rounds N, --no-compile, --threads N, --cpu-time
    tsjit bench -- --help                python -m bench's own help (its list of benchmarks)

The benchmarks are part of the repository, not of the installed package: this runs the bench/ beside the tsjit
package, as an editable install (`pip install -e .`, what `make` does) has it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from tsjit.cli.common import CommandError

REPOSITORY = Path(__file__).resolve().parents[2]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.set_defaults(extra_arguments=[])  # every other argument goes to python -m bench


def run(args: argparse.Namespace) -> int:
    if not (REPOSITORY / "bench" / "__main__.py").is_file():
        raise CommandError(f"no benchmarks beside this tsjit ({REPOSITORY / 'bench'} does not exist): they are in "
                           f"the repository; install it with pip install -e . and run tsjit bench there")
    sys.path.insert(0, str(REPOSITORY))
    from bench.__main__ import main  # deferred: the benchmarks import torch.compile's machinery

    passed_on = [a for a in args.extra_arguments if a != "--"]
    main(passed_on, prog=f"{args.parser.prog}")
    return 0
