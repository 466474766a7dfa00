"""`python -m tsjit`: the `tsjit` command (tsjit/cli)."""

import sys

from tsjit.cli import main

sys.exit(main())
