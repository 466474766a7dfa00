"""The tracer warns and fails where torch.jit's does, with torch.jit's messages: a tensor turned into a Python
value, torch.tensor constants, len() of and iteration over a tensor, list and dict outputs, outputs that do not
depend on the inputs, constants that require grad, inputs that cannot be traced, and check_trace's findings."""

from __future__ import annotations

import re
import warnings

import pytest
import torch

from tsjit.api.trace import TracingCheckError, trace
from tsjit.errors import TsjitError
from tsjit.frontend.tracer import TracerWarning

jit = pytest.importorskip("torch.jit")
GLOBAL = torch.randn(3)
NEEDS_GRAD = torch.randn(3, requires_grad=True)


def tracer_warnings(tracer, function, inputs, **options) -> set[str]:
    """The first lines of the TracerWarnings (torch's or ours) tracing `function` raises."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tracer(function, inputs, **options)
    return {str(w.message).splitlines()[0] for w in caught if w.category.__name__ == "TracerWarning"}


def failure(tracer, function, inputs, **options) -> str:
    """The error message, the tensor it may show elided (C++ and Python print tensors differently)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(Exception) as raised:
            tracer(function, inputs, **options)
    message = re.sub(r"\(.*\) of traced region", "(...) of traced region", str(raised.value), flags=re.S)
    return message.split("\nTensor:")[0].splitlines()[0]


WARNING_CASES = {
    "bool": lambda x: x + 1 if x.sum() > 0 else x,
    "int": lambda x: x * int(x.sum()),
    "float": lambda x: x * float(x.sum()),
    "item": lambda x: x * x.sum().item(),
    "index": lambda x: x * [1, 2, 3, 4, 5][x.size(0)],  # no warning
    "tolist": lambda x: x + torch.tensor(x.tolist()),
    "numpy": lambda x: x + torch.as_tensor(x.numpy()),
    "tensor_constant": lambda x: x + torch.tensor([1.0, 2.0, 3.0]),
    "len": lambda x: x * len(x),
    "iterate": lambda x: sum(row for row in x),
    "list_output": lambda x: [x + 1],
    "none": lambda x: x.relu() * 2,
}


@pytest.mark.parametrize("name", WARNING_CASES)
def test_warnings_match_torch_jit(name: str):
    function, inputs = WARNING_CASES[name], (torch.randn(3, 3),)
    expected = tracer_warnings(jit.trace, function, inputs, check_trace=False)
    assert tracer_warnings(trace, function, inputs, check_trace=False) == expected
    assert bool(expected) == (name not in ("none", "index"))


def test_warning_points_at_the_traced_line():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        trace(lambda x: x * int(x.sum()), (torch.randn(2),), check_trace=False)
    [warning] = [w for w in caught if w.category is TracerWarning]
    assert warning.filename == __file__


FAILURE_CASES = {
    "dict_output": (lambda x: {"a": x + 1}, (torch.randn(2),)),
    "no_dependence": (lambda x: GLOBAL, (torch.randn(3),)),
    "constant_requires_grad": (lambda x: x * NEEDS_GRAD, (torch.randn(3),)),
    "untraceable_input": (lambda x, n: x * n, (torch.randn(2), 3)),
    "not_a_tensor_output": (lambda x: 3, (torch.randn(2),)),
    "no_output": (lambda x: None, (torch.randn(2),)),
}


@pytest.mark.parametrize("name", FAILURE_CASES)
def test_failures_match_torch_jit(name: str):
    function, inputs = FAILURE_CASES[name]
    expected = failure(jit.trace, function, inputs, check_trace=False)
    assert failure(trace, function, inputs, check_trace=False) == expected


def test_dict_output_allowed_when_not_strict():
    traced = trace(lambda x: {"a": x + 1}, (torch.ones(2),), strict=False)
    assert torch.equal(traced(torch.ones(3))["a"], torch.full((3,), 2.0))


def test_nondeterministic_trace_warns_like_torch_jit():
    def noisy(x):
        return x + torch.rand(x.shape)

    expected = tracer_warnings(jit.trace, noisy, (torch.randn(3),))
    assert expected == tracer_warnings(trace, noisy, (torch.randn(3),))
    assert any(message.startswith("Trace had nondeterministic nodes") for message in expected)


def branchy(x):
    return x * 2 if x.sum() > 0 else x - 1


def test_graphs_differing_across_check_inputs_fail_like_torch_jit():
    options = {"check_inputs": [(torch.ones(2),), (-torch.ones(2),)]}
    expected = failure(jit.trace, branchy, (torch.ones(2),), **options)
    assert failure(trace, branchy, (torch.ones(2),), **options) == expected == "Tracing failed sanity checks!"


def test_check_error_shows_the_graph_diff():
    with pytest.raises(TracingCheckError, match="Graphs differed across invocations") as raised:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            trace(branchy, (torch.ones(2),), check_inputs=[(-torch.ones(2),)])
    assert "aten::mul" in str(raised.value) and "aten::sub" in str(raised.value)


def test_tracing_errors_are_tsjit_errors():
    with pytest.raises(TsjitError):
        trace(lambda x: GLOBAL, (torch.randn(3),))
