"""The tracer on functions: the graphs it records are torch.jit.trace's (compared as text, values renumbered),
and they run like eager PyTorch, also on inputs of other sizes where the trace read sizes as data."""

from __future__ import annotations

import gc
import re
import warnings

import pytest
import torch
import torch.nn.functional as F

from tsjit.api.function import ScriptFunction, script
from tsjit.api.trace import trace
from tsjit.frontend.torch_tracing_flags import get_tracing_state
from tsjit.frontend.tracer import TracedSize, TraceFrame, TracingState
from tsjit.ir.graph import Graph
from tsjit.ir.symbols import prim

jit = pytest.importorskip("torch.jit")
OFFSET = torch.tensor([0.5, -1.0, 2.0])


def quietly(function, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args, **kwargs)


def canonical(text: str) -> str:
    """Graph text without source comments and scopes, values numbered in order of appearance."""
    text = re.sub(r"(, scope: [^\s#]+)?( # \S+:\d+:\d+)?$", "", text, flags=re.M)
    names: dict[str, str] = {}
    return re.sub(r"%([\w.]+)", lambda m: "%" + names.setdefault(m.group(1), str(len(names))), text)


def kinds(graph) -> list[str]:
    return [str(node.kind) for node in graph.all_nodes()]


# ---- the same graphs as torch.jit.trace ------------------------------------------------------------------------
def sizes_as_data(x, y):
    n = x.size(0)
    z = x.view(n, -1) + 2
    return (z * y.shape[1]).relu(), torch.zeros(3, dtype=torch.float64), x.numel() * x


def shapes_in_lists(x):
    b, c = x.shape
    return x.new_zeros(x.shape), x.reshape(b, -1), torch.ones(x.size(0), 2), x.sum(dim=0, keepdim=True)


def in_place_and_views(x, y):
    x.add_(1)
    z = x.view(-1)
    z.mul_(2)
    return x, y.unsqueeze(0), z.t() if z.dim() == 2 else z


def indexing(x, t):
    y = x.clone()
    y[0] = t
    y[:, 1:2] = t[:1]
    y[..., 0] = 3.0
    y[x > 0] = 0.0
    return y, x[:, 1], x[None, ..., -1], x[x > 0], x[[0, 1]], x[0, 0], x[: x.size(0) - 1]


def conversions(x):
    return x.float(), x.double(), x.cpu(), x.to(torch.float16), x.to(x), x.type_as(x), x.long()


def python_functions(x):
    return F.max_pool2d(x, 2), F.relu(x), 1 - x, 2 / x, x ** 2, 2 ** x, x // 2, x % 2, -x, x @ x.transpose(-1, -2)


def composites(x):
    return (F.layer_norm(x, x.shape[-1:]), F.dropout(x, 0.5, False), F.softmax(x, -1), x.flatten(0), F.gelu(x),
            torch.where(x > 0, x, 0.0), torch.cat([x, x], 1).chunk(2, 1)[0], torch.stack([x, x]).max(0)[0])


def constants(x):
    return x + OFFSET + torch.tensor([1.0, 2.0, 3.0]) + x.size(0)


def iteration(x):
    return sum(row for row in x) + x.unbind(0)[1]


def convolution(x, w):
    return F.conv2d(x, w, padding=1), F.conv2d(x, w, padding="same"), F.conv_transpose2d(x, w.transpose(0, 1))


FUNCTIONS = {
    "sizes_as_data": (sizes_as_data, lambda: (torch.randn(2, 3), torch.randn(2, 3))),
    "shapes_in_lists": (shapes_in_lists, lambda: (torch.randn(2, 3),)),
    "in_place_and_views": (in_place_and_views, lambda: (torch.randn(2, 3), torch.randn(3))),
    "indexing": (indexing, lambda: (torch.randn(3, 3), torch.randn(3))),
    "conversions": (conversions, lambda: (torch.randn(2),)),
    "python_functions": (python_functions, lambda: (torch.randn(1, 1, 4, 4),)),
    "composites": (composites, lambda: (torch.randn(3, 3),)),
    "constants": (constants, lambda: (torch.randn(3),)),
    "iteration": (iteration, lambda: (torch.randn(4, 4),)),
    "convolution": (convolution, lambda: (torch.randn(1, 2, 5, 5), torch.randn(2, 2, 3, 3))),
}


def seeded(make_inputs) -> tuple:
    torch.manual_seed(0)
    return make_inputs()


@pytest.mark.parametrize("name", FUNCTIONS)
def test_graph_is_torch_jits(name: str):
    function, make_inputs = FUNCTIONS[name]
    expected = canonical(str(quietly(jit.trace, function, seeded(make_inputs), check_trace=False).graph))
    assert canonical(str(quietly(trace, function, seeded(make_inputs), check_trace=False).graph)) == expected


@pytest.mark.parametrize("name", FUNCTIONS)
def test_trace_runs_like_eager(name: str):
    function, make_inputs = FUNCTIONS[name]
    traced = quietly(trace, function, make_inputs())
    inputs = make_inputs()
    copies = tuple(t.clone() for t in inputs)
    assert _same(function(*inputs), traced(*copies))
    assert all(torch.equal(a, b) for a, b in zip(inputs, copies))  # inputs mutated alike


def _same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return a.shape == b.shape and a.dtype == b.dtype and torch.allclose(a, b, equal_nan=True)
    return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))


# ---- generalizing over sizes ---------------------------------------------------------------------------------
def test_sizes_read_from_tensors_generalize():
    traced = trace(shapes_in_lists, (torch.randn(2, 3),))
    x = torch.randn(5, 7)
    assert _same(shapes_in_lists(x), traced(x))


def test_slicing_with_a_size_generalizes():
    def drop_last(x):
        return x[: x.size(0) - 1]

    traced = trace(drop_last, (torch.randn(4, 2),))
    assert traced(torch.randn(7, 2)).shape == (6, 2)
    assert "aten::Int" in kinds(traced.graph)


def test_random_operators_take_traced_sizes():
    def noise(x):
        return x + torch.rand(x.shape)

    traced = trace(noise, (torch.randn(2, 3),), check_trace=False)
    assert "aten::rand" in kinds(traced.graph)
    x = torch.zeros(4, 5)
    torch.manual_seed(3)
    expected = noise(x)
    torch.manual_seed(3)
    assert torch.equal(traced(x), expected)


def test_shape_is_a_tuple_of_traced_sizes():
    sizes = []
    trace(lambda x: sizes.append(x.shape) or x.view(x.shape[:1] + (-1,)), (torch.randn(2, 3),))
    assert isinstance(sizes[0], TracedSize) and isinstance(sizes[0][1:], TracedSize)
    assert [int(n) for n in sizes[0]] == [2, 3]


# ---- inputs and outputs --------------------------------------------------------------------------------------
def containers(t, items, d):
    return t[0] + t[1][0] + items[1] + d["b"], (t[0], [items[0]])


def container_inputs():
    return ((torch.randn(2), (torch.randn(2),)), [torch.randn(2), torch.randn(2)],
            {"a": torch.randn(2), "b": torch.randn(2)})


def test_container_inputs_and_outputs_are_torch_jits():
    expected = quietly(jit.trace, containers, container_inputs(), strict=False, check_trace=False).graph
    traced = trace(containers, container_inputs(), strict=False, check_trace=False)
    assert canonical(str(traced.graph)) == canonical(str(expected))


def test_container_inputs_run_with_other_values():
    traced = trace(containers, container_inputs(), strict=False)
    inputs = container_inputs()
    assert _same(containers(*inputs), traced(*inputs))


def test_input_names_come_from_the_parameters():
    graph = trace(lambda first, second: first * second, (torch.ones(1), torch.ones(1))).graph
    assert [value.debug_name for value in graph.inputs] == ["first", "second"]


def keyword_example(x, y, z=None):
    return x * 2 + y if z is None else z


def test_example_kwarg_inputs_order_inputs_by_parameter_as_torch_jit():
    examples = {"y": torch.ones(2), "x": torch.full((2,), 3.0)}
    expected = jit.trace(keyword_example, example_kwarg_inputs=dict(examples))
    traced = trace(keyword_example, example_kwarg_inputs=dict(examples))
    assert canonical(str(traced.graph)) == canonical(str(expected.graph))
    x, y = torch.randn(2), torch.randn(2)
    torch.testing.assert_close(traced(x, y), keyword_example(x, y))
    torch.testing.assert_close(traced(y=y, x=x), keyword_example(x, y))


def test_example_kwarg_inputs_trace_module_forward():
    class Difference(torch.nn.Module):
        def forward(self, a, b):
            return a - b

    examples = {"b": torch.ones(2), "a": torch.zeros(2)}
    expected = jit.trace(Difference(), example_kwarg_inputs=dict(examples))
    traced = trace(Difference(), example_kwarg_inputs=dict(examples))
    assert canonical(str(traced.graph)) == canonical(str(expected.graph))
    a, b = torch.randn(2), torch.randn(2)
    torch.testing.assert_close(traced(b=b, a=a), a - b)


@pytest.mark.parametrize("examples, message", [
    ([torch.ones(2)], "example_kwarg_inputs should be a dict, not list"),
    ({"q": torch.ones(2)}, "keyword_example() got an unexpected keyword argument 'q'"),
])
def test_example_kwarg_inputs_errors(examples, message):
    with pytest.raises(TypeError, match=re.escape(message)):
        trace(keyword_example, example_kwarg_inputs=examples)


def test_values_are_named_after_python_variables():
    def named(x):
        scaled = x * 2
        return scaled + 1

    assert "%scaled" in str(trace(named, (torch.ones(2),)).graph)


def test_nodes_carry_the_calling_line():
    node = next(n for n in quietly(trace, constants, (torch.randn(3),)).graph.nodes() if n.kind.name == "add")
    assert node.source_range.filename == __file__


# ---- calls into TorchScript ----------------------------------------------------------------------------------
def doubled(x, n: int):
    for _ in range(n):
        x = x * 2
    return x


def calling(scripted):
    def calls_script(x):
        return scripted(x, 3) + x.size(0)

    return calls_script


HOOKED = not {"get_tracing_state", "no_trace_running"}.isdisjoint(ScriptFunction.__call__.__code__.co_names)


@pytest.mark.xfail(not HOOKED, reason="ScriptFunction.__call__ does not yet hand calls to the tracer (the "
                                      "hook in tsjit/api/function.py the tracer's report describes)")
def test_script_function_call_keeps_its_loop():
    ours, theirs = calling(script(doubled)), calling(quietly(jit.script, doubled))
    traced = trace(ours, (torch.randn(2, 3),))
    assert canonical(str(traced.graph)) == canonical(str(quietly(jit.trace, theirs, torch.randn(2, 3)).graph))
    assert prim.Loop in [n.kind for n in traced.inlined_graph.all_nodes()]
    x = torch.randn(4, 3)
    assert torch.equal(traced(x), theirs(x))


def test_traced_function_is_a_script_function_callable_from_script():
    traced = trace(lambda x: x * 2 + 1, (torch.randn(2),))
    assert isinstance(traced, ScriptFunction)

    @script
    def caller(x):
        return traced(x) - 1

    assert torch.equal(caller(torch.ones(3)), torch.full((3,), 2.0))


# ---- the state -------------------------------------------------------------------------------------------------
def test_no_tracing_state_outside_a_trace():
    seen = []
    trace(lambda x: seen.append(get_tracing_state()) or x + 1, (torch.ones(1),))
    assert seen[0] is not None and get_tracing_state() is None


def test_tensors_are_held_weakly():
    frame = TraceFrame(Graph())
    state = TracingState(frame)
    tensor = torch.ones(2)
    state.set_value(tensor, frame.graph.add_input("t"))
    assert frame.lookup(tensor) is frame.graph.inputs[0]
    del tensor
    gc.collect()
    assert not frame._values


def test_unknown_bindings_record_what_they_dispatch():
    traced = trace(lambda x: x.type(torch.float64), (torch.randn(2),))
    assert "aten::_to_copy" in kinds(traced.graph)
    assert traced(torch.ones(3)).dtype is torch.float64


def profiled(x):
    with torch.autograd.profiler.record_function("step"):  # profiler ops pass a torch.classes object along
        return x * 2


def test_custom_class_objects_are_traced_values():
    x = torch.randn(3)
    traced = trace(profiled, (x,), check_trace=False)
    assert torch.equal(traced(x), profiled(x))
