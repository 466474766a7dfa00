"""Every test folder sees tests/ on sys.path, so `import shared_programs` (the programs the folders share) works
wherever pytest starts."""

import sys
from pathlib import Path

TESTS = str(Path(__file__).resolve().parent)
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
