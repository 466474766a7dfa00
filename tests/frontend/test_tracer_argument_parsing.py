"""The tracer binds Python calls as PyTorch's argument parser does under torch.jit's tracer (found by the op_db
conformance corpus): bools are not ints, unbatched convolutions keep their batch dimension. torch.jit's trace
is the oracle for the recorded node kinds."""

from __future__ import annotations

import pytest
import torch
import torch.nn.functional as F

from tsjit.api.trace import trace

pytestmark = pytest.mark.filterwarnings("ignore")


def torch_kinds(graph) -> list[str]:
    return [n.kind() for n in graph.nodes() if n.kind() != "prim::Constant"]


def our_kinds(graph) -> list[str]:
    return [str(n.kind) for n in graph.nodes() if str(n.kind) != "prim::Constant"]


def var_mean_unbiased(x):
    return torch.var_mean(x, True)


def conv1d_same_unbatched(x, w):
    return F.conv1d(x, w, padding="same")


def conv1d_unbatched(x, w):
    return F.conv1d(x, w)


def interpolate_recomputed(x):
    """The output size is `floor(x.size(2).float() * 1.7)`, a Float tensor in an int list: torch.jit's parser
    takes it while tracing, PyTorch's ordinary one does not (the binding is called from inside F.interpolate)."""
    return F.interpolate(x, scale_factor=1.7, mode="nearest", recompute_scale_factor=True)


def interpolate_area(x):
    return F.interpolate(x, scale_factor=0.6, mode="area")


def interpolate_bilinear(x):
    return F.interpolate(x, scale_factor=(1.3, 2.1), mode="bilinear", recompute_scale_factor=True)


CASES = [
    (interpolate_recomputed, (torch.randn(1, 2, 5),), (torch.randn(2, 3, 7),)),
    (interpolate_area, (torch.randn(1, 2, 5),), (torch.randn(2, 2, 9),)),
    (interpolate_bilinear, (torch.randn(1, 2, 5, 4),), (torch.randn(1, 3, 6, 3),)),
    (var_mean_unbiased, (torch.randn(5, 5),), None),
    (conv1d_same_unbatched, (torch.randn(4, 5), torch.randn(3, 4, 2)), None),
    (conv1d_unbatched, (torch.randn(4, 5), torch.randn(3, 4, 2)), None),
]


@pytest.mark.parametrize(("function", "inputs", "other_inputs"), CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_trace_binds_like_torch_jit(function, inputs, other_inputs):
    ours = trace(function, inputs, check_trace=False)
    theirs = torch.jit.trace(function, inputs, check_trace=False)
    assert our_kinds(ours.graph) == torch_kinds(theirs.graph)
    for example in [inputs, other_inputs] if other_inputs else [inputs]:
        torch.testing.assert_close(ours(*example), function(*example), rtol=0, atol=0)


def test_a_graph_input_tensor_passed_for_an_int_is_converted_after_the_inputs():
    """A 0-dim tensor input where the schema wants an int (`narrow(x, 0, start, 2)`): its `aten::Int` goes at the
    top of the graph, since a graph input has no node to follow (found by op_db: narrow, tensor_split, polygamma)."""
    def narrow(x, start):
        return torch.narrow(x, 0, start, 2)

    x = torch.randn(5, 3)
    traced = trace(narrow, (x, torch.tensor(1)))
    traced.graph.lint()
    for start in (0, 2, 3):
        assert torch.equal(traced(x, torch.tensor(start)), narrow(x, torch.tensor(start)))


@pytest.mark.parametrize("method", [lambda x, y: x.where(x > 0, y), lambda x, y: x.polygamma(1) + y],
                         ids=["where", "polygamma"])
def test_a_method_receiver_binds_to_self_wherever_the_schema_puts_it(method):
    """`x.where(c, y)` is `where.self(Tensor condition, Tensor self, Tensor other)` and `x.polygamma(n)` is
    `polygamma(int n, Tensor self)`: the receiver is `self`, not the first argument (found by op_db's method
    variant: both were traced with their arguments swapped)."""
    x, y = torch.rand(4) + 0.5, torch.randn(4)
    traced = trace(method, (x, y))
    for size in (4, 6):
        x, y = torch.rand(size) + 0.5, torch.randn(size)
        torch.testing.assert_close(traced(x, y), method(x, y))


def test_a_run_time_error_of_a_traced_graph_names_the_node_and_the_traced_line():
    """Traced nodes carry a `file:line` location, not source text: the run-time error renders it beside the
    failing node (it used to raise a TypeError from the renderer instead of the program's error)."""
    from tsjit.runtime.interpreter import InterpreterError

    def add(x, y):
        return x + y

    traced = trace(add, (torch.randn(3), torch.randn(3)), check_trace=False)
    with pytest.raises(InterpreterError) as raised:
        traced(torch.randn(3), torch.randn(4))
    message = str(raised.value)
    assert "aten::add" in message and "test_tracer_argument_parsing.py:" in message
    assert isinstance(raised.value, RuntimeError)


@pytest.mark.parametrize("function", [
    lambda x: x.long().sum() * 1.5,                     # a 0-dim Long and a float: Float, not Double
    lambda x: (x * 5).long() * 0.5,                     # an integer tensor and a float: the default dtype
    lambda x: torch.where(x > 0.5, (x * 4).long(), 2.5),
    lambda x: x.double() * 1e-4,                        # a float64 tensor keeps the number's every digit
    lambda x: (x * 3).to(torch.int8) + 300,             # an int never widens an integer tensor
    lambda x: F.local_response_norm((x * 5).long().unsqueeze(0), 2),
], ids=["zero_dim", "int_tensor", "where", "double", "int8", "local_response_norm"])
def test_a_traced_python_number_promotes_as_the_number_did(function):
    """A Python number the traced code passed for a Tensor is recorded, as torch.jit records it, as a tensor
    constant that promotes like a wrapped number: the trace's results have eager's dtypes and values on every
    call (the optimized ones too), and its recorded and inferred types say so (found by op_db:
    nn.functional.local_response_norm on integer inputs)."""
    x = torch.rand(3, 4)
    traced = trace(function, (x,), check_trace=False)
    theirs = torch.jit.trace(function, (x,), check_trace=False)
    assert our_kinds(traced.graph) == torch_kinds(theirs.graph)
    for _ in range(3):
        result = traced(x)
        torch.testing.assert_close(result, function(x), rtol=0, atol=0)
        assert result.dtype == theirs(x).dtype
    assert traced.graph_for(x).outputs[0].type.dtype in (None, function(x).dtype)


def test_an_operator_with_effects_outside_aten_is_recorded_and_kept_as_torch_jit_keeps_it():
    """`record_function` calls `profiler::_record_function_enter_new` and `_exit`, whose results nobody reads: the
    dispatcher registered them CONSERVATIVE, so TorchScript keeps them (and the traced program still opens its
    profiling range); an unused aten operator goes."""
    def profiled(x):
        with torch.autograd.profiler.record_function("traced_block"):
            y = x * 2
        return y + 1

    x = torch.randn(3)
    traced = trace(profiled, (x,))
    assert our_kinds(traced.graph) == torch_kinds(torch.jit.trace(profiled, (x,)).graph)
    assert "profiler::_record_function_exit" in our_kinds(traced.graph)
    with torch.profiler.profile() as profile:
        torch.testing.assert_close(traced(x), profiled(x))
    assert "traced_block" in [event.name for event in profile.events()]

    def pure_unused(x):
        torch.ops.aten.sin(x)
        return x

    assert our_kinds(trace(pure_unused, (x,)).graph) == []


@pytest.mark.parametrize("function", [lambda x: torch.fill(x, True), lambda x: x.clone().fill_(False),
                                      lambda x: x.masked_fill(x > 0, True)],
                         ids=["fill", "fill_", "masked_fill"])
def test_a_bool_passed_for_a_scalar_runs_the_overload_the_binding_dispatched(function):
    """ATen's Scalar holds bools, TorchScript's number type does not: the traced node, pinned to the overload the
    binding dispatched (aten::fill.Scalar), runs with its bool (torch.jit's trace fails here on an internal
    assert; found by op_db: fill, arange)."""
    x = torch.randn(3, 3)
    traced = trace(function, (x,), check_trace=False)
    torch.testing.assert_close(traced(x), function(x), rtol=0, atol=0)
