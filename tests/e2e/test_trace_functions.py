"""Every function of the e2e corpus that torch.jit can trace, traced by tsjit: it matches eager PyTorch on
fresh inputs, and on inputs of other sizes wherever torch.jit's trace does (the oracle for what a trace can
generalize to: functions whose control flow depends on the data, or whose sizes are baked in, fail there too).
"""

from __future__ import annotations

import warnings

import pytest
import torch
from corpus import CASES, Case
from trace_oracle import OUT_OF_REACH, STRATEGIES, other_inputs, outcome, resized, same

from tsjit.api.trace import trace

jit = pytest.importorskip("torch.jit")


def torch_trace(case: Case, inputs: tuple):
    """torch.jit's trace of the case, or None where torch.jit cannot trace it (non-tensor inputs, ...)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return jit.trace(case.function, inputs, check_trace=False)
        except Exception:
            return None


def inputs_of(case: Case, seed: int) -> tuple:
    torch.manual_seed(seed)
    return case.make_inputs()


def check_on(case: Case, traced, oracle, make_inputs) -> None:
    """tsjit's trace computes what eager computes on the inputs, wherever torch.jit's trace does."""
    expected = outcome(case.function, make_inputs)
    if expected is OUT_OF_REACH or not same(expected, outcome(oracle, make_inputs)):
        pytest.skip("torch.jit's trace does not reproduce eager here either (data-dependent code or baked sizes)")
    assert same(expected, outcome(traced, make_inputs))


def traced_case(case: Case):
    example = inputs_of(case, 0)
    oracle = torch_trace(case, example)
    if oracle is None:
        pytest.skip("torch.jit cannot trace this function (inputs that are not tensors, ...)")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return trace(case.function, inputs_of(case, 0), check_trace=False), oracle


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_trace_matches_eager(case: Case):
    traced, oracle = traced_case(case)
    check_on(case, traced, oracle, lambda: inputs_of(case, 1))


@pytest.mark.parametrize("strategy", STRATEGIES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_trace_generalizes_over_sizes(case: Case, strategy: str):
    traced, oracle = traced_case(case)
    if other_inputs(inputs_of(case, 2), strategy) is None:
        pytest.skip("no tensor has a dimension to resize")
    check_on(case, traced, oracle, lambda: resized(inputs_of(case, 2), 3, strategy))

