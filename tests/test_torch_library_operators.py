"""The tests' torch.library operators leave torch.jit's builtin table naming only live operator objects, so that
torch.jit, the oracle of many tests, keeps scripting modules in the same process."""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import torch
from torch_library_operators import LastingLibrary, dead_builtins

TESTS = pathlib.Path(__file__).parent


def test_overloads_defined_after_their_packet_leave_no_dead_builtins():
    library = LastingLibrary("lasting_library_test")
    library.define("triple(Tensor x) -> Tensor")
    library.define("triple.int(Tensor x, int s) -> Tensor")  # define's lookup makes the packet, then refreshes it
    library.impl("triple", lambda x: x * 3, "CompositeExplicitAutograd")
    assert torch.equal(torch.ops.lasting_library_test.triple(torch.ones(2)), torch.full((2,), 3.0))
    library.define("triple.float(Tensor x, float s) -> Tensor")
    assert dead_builtins("lasting_library_test") == []


_PLAIN_LIBRARY = """
import sys
import torch
sys.path.insert(0, sys.argv[1])
from torch_library_operators import dead_builtins

library = torch.library.Library("plain_library_test", "DEF")
library.define("triple(Tensor x) -> Tensor")
library.define("triple.int(Tensor x, int s) -> Tensor")
print(dead_builtins("plain_library_test"))
"""


def test_dead_builtins_finds_what_a_plain_library_leaves():
    """The check can fail: torch.library's own Library leaves the first packet's operator object dead (in a
    process of its own). Should torch keep those objects alive one day, LastingLibrary's `define` can go."""
    result = subprocess.run([sys.executable, "-c", _PLAIN_LIBRARY, str(TESTS)], capture_output=True, text=True,
                            check=True)
    assert result.stdout.strip() == "['plain_library_test::triple']"


def test_tests_define_operators_with_a_lasting_library():
    """A torch.library.Library made in a test's own process would bring the problem back."""
    made_here = re.compile(r"\bLibrary\(")
    offenders = [str(path.relative_to(TESTS)) for path in TESTS.rglob("*.py")
                 if path.name not in ("torch_library_operators.py", pathlib.Path(__file__).name)
                 and made_here.search(path.read_text())]
    assert offenders == []
