"""A fixed sample of PyTorch's op database (every SAMPLE_EVERY-th OpInfo of op_db), run as `make conformance` runs
all of it (opdb_runner.py): each variant through tsjit's script, trace and save -> load paths matches eager, or
fails as opdb_expected_failures.py says, where torch.jit fails too (or a written reason says why tsjit differs)."""

from __future__ import annotations

import pytest
import torch
from opdb_cases import VARIANTS, full_name
from opdb_expected_failures import EXPECTED_FAILURES
from opdb_runner import TORCH_JIT, TSJIT, Results, check_expectations, run_op, selected_ops

from tsjit.api import script
from tsjit.errors import TsjitError

SAMPLE_EVERY = 25

pytestmark = pytest.mark.filterwarnings("ignore")


def _absolute(x: torch.Tensor) -> torch.Tensor:
    return torch.ops.aten.abs(x)


def scripts_torch_ops_calls() -> bool:
    """Whether tsjit compiles `torch.ops.aten.X(...)` calls (the `aten` variant of the corpus needs them)."""
    try:
        script(_absolute)
    except TsjitError:
        return False
    return True


@pytest.mark.xfail(not scripts_torch_ops_calls(), strict=True,
                   reason="the torch.ops.aten.X call form is being added (branch callforms); until then the sample "
                          "leaves out the aten variant, which `make conformance` still runs and reports")
def test_torch_ops_call_form_compiles():
    assert torch.equal(script(_absolute)(torch.tensor([-1.0, 2.0])), torch.tensor([1.0, 2.0]))


@pytest.mark.parametrize("op", selected_ops(every=SAMPLE_EVERY), ids=full_name)
def test_op_matches_eager_or_fails_as_expected(op):
    variants = VARIANTS if scripts_torch_ops_calls() else tuple(v for v in VARIANTS if v != "aten")
    results = Results()
    run_op(op, results, (TSJIT, TORCH_JIT), variants)
    assert results.outcomes["tsjit"], f"{full_name(op)} has no variant with a sample eager accepts"
    assert check_expectations(results, EXPECTED_FAILURES) == []
