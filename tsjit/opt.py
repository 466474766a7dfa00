"""`python -m tsjit.opt`: the `tsjit opt` subcommand under its older name (the logic is in tsjit/cli/opt.py).

    python -m tsjit.opt -p dce,cse,constant_pooling graph.ir
    python -m tsjit.opt --list
"""

from __future__ import annotations

import argparse
import sys

from tsjit import cli
from tsjit.cli import opt


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tsjit.opt", description=opt.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    cli.add_common_arguments(parser, opt)
    return cli.execute(cli.parse(parser, argv))


if __name__ == "__main__":
    sys.exit(main())
