"""A fixed sample of PyTorch's op database (every SAMPLE_EVERY-th OpInfo of op_db), run as `make conformance` runs
all of it (opdb_runner.py): each variant through tsjit's script, trace and save -> load paths matches eager, or
fails as opdb_expected_failures.py says, where torch.jit fails too (or a written reason says why tsjit differs)."""

from __future__ import annotations

import pytest
from opdb_cases import full_name
from opdb_expected_failures import EXPECTED_FAILURES
from opdb_runner import TORCH_JIT, TSJIT, Results, check_expectations, run_op, selected_ops

SAMPLE_EVERY = 25

pytestmark = pytest.mark.filterwarnings("ignore")


@pytest.mark.parametrize("op", selected_ops(every=SAMPLE_EVERY), ids=full_name)
def test_op_matches_eager_or_fails_as_expected(op):
    results = Results()
    run_op(op, results, (TSJIT, TORCH_JIT))
    if not results.outcomes["tsjit"]:
        pytest.skip(f"eager PyTorch runs no CPU sample of {full_name(op)} (its samples need CUDA or float8)")
    assert check_expectations(results, EXPECTED_FAILURES) == []
