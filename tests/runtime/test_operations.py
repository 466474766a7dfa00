"""Operations: dispatcher nodes reach their exact overload, through the cheapest verified entry point; the
runtime's own node kinds (profiling checks) behave like TorchScript's."""

from __future__ import annotations

import textwrap

import pytest
import torch
from torch.utils._python_dispatch import TorchDispatchMode

from tsjit.errors import SchemaError
from tsjit.ir.constants import constant_value
from tsjit.ir.parser import parse_ir
from tsjit.ops.registry import register_operator
from tsjit.runtime.function import Function
from tsjit.runtime.operations import compile_operation, operation_for_node
from tsjit.runtime.run import run_graph


class RecordDispatches(TorchDispatchMode):
    """Records every OpOverload that reaches the dispatcher's Python key."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        self.seen.append(str(func))
        return func(*args, **(kwargs or {}))


def node_of(text: str, kind: str):
    graph = parse_ir(textwrap.dedent(text))
    return graph, next(node for node in graph.nodes() if node.kind == kind)


def test_each_node_dispatches_to_its_exact_overload(monkeypatch) -> None:
    # eager `x * 2.5` would dispatch aten.mul.Tensor with a wrapped number; the node is aten::mul.Scalar
    monkeypatch.setenv("TSJIT_FUSION", "0")  # fused, the three nodes would be one kernel
    graph = parse_ir(textwrap.dedent("""\
        graph(%x : Tensor, %y : Tensor):
          %f : float = prim::Constant[value=2.5]()
          %a : Tensor = aten::mul(%x, %f)
          %b : Tensor = aten::mul(%a, %y)
          %c : Tensor = aten::sin(%b)
          return (%c)"""))
    x, y = torch.ones(2), torch.full((2,), 3.0)
    function = Function("f", graph)
    function(x, y)  # the profiling run, then the optimized plan compiled, outside the recorder
    function(x, y)
    recorder = RecordDispatches()
    with recorder:
        result = function(x, y)
    assert recorder.seen == ["aten.mul.Scalar", "aten.mul.Tensor", "aten.sin.default"]
    torch.testing.assert_close(result, torch.sin(x * 2.5 * y))


def test_a_verified_binding_is_used_where_it_reaches_the_same_overload() -> None:
    _, sin = node_of("""\
        graph(%x : Tensor):
          %y : Tensor = aten::sin(%x)
          return (%y)""", "aten::sin")
    assert compile_operation(sin).operation is torch._C._VariableFunctions.sin
    _, mul = node_of("""\
        graph(%x : Tensor):
          %f : float = prim::Constant[value=2.5]()
          %y : Tensor = aten::mul(%x, %f)
          return (%y)""", "aten::mul")
    assert compile_operation(mul).operation is torch.ops.aten.mul.Scalar._op  # the binding picks mul.Tensor


def test_a_binding_whose_defaults_differ_from_the_schema_is_not_used() -> None:
    # torch._C._nn.mse_loss(x, y) does not reduce, although the schema's default reduction is the mean
    graph, node = node_of("""\
        graph(%x : Tensor, %y : Tensor):
          %mean : int = prim::Constant[value=1]()
          %loss : Tensor = aten::mse_loss(%x, %y, %mean)
          return (%loss)""", "aten::mse_loss")
    assert compile_operation(node).operation is torch.ops.aten.mse_loss.default._op
    x, y = torch.zeros(2, 3), torch.ones(2, 3)
    torch.testing.assert_close(run_graph(graph, x, y), torch.nn.functional.mse_loss(x, y))


COMPOSITES = {
    "aten::linear": ("""\
        graph(%x : Tensor, %w : Tensor, %b : Tensor):
          %y : Tensor = aten::linear(%x, %w, %b)
          return (%y)""", torch._C._nn.linear, (torch.randn(4, 3), torch.randn(5, 3), torch.randn(5))),
    "aten::chunk": ("""\
        graph(%x : Float(*, *)):
          %n : int = prim::Constant[value=4]()
          %d : int = prim::Constant[value=1]()
          %y : Tensor[] = aten::chunk(%x, %n, %d)
          return (%y)""", torch._C._VariableFunctions.chunk, (torch.randn(3, 8),)),
    "aten::dropout": ("""\
        graph(%x : Tensor):
          %p : float = prim::Constant[value=0.1]()
          %train : bool = prim::Constant[value=0]()
          %y : Tensor = aten::dropout(%x, %p, %train)
          return (%y)""", torch._C._VariableFunctions.dropout, (torch.randn(3),)),
    "aten::layer_norm": ("""\
        graph(%x : Tensor, %w : Tensor, %b : Tensor):
          %shape : int[] = prim::Constant[value=[1]]()
          %eps : float = prim::Constant[value=1e-05]()
          %cudnn : bool = prim::Constant[value=1]()
          %y : Tensor = aten::layer_norm(%x, %shape, %w, %b, %eps, %cudnn)
          return (%y)""", torch._C._VariableFunctions.layer_norm, (torch.randn(2, 1), torch.randn(1), torch.randn(1))),
}


@pytest.mark.parametrize("kind", sorted(COMPOSITES))
def test_composite_operators_use_their_binding_with_the_same_results(kind: str) -> None:
    # composite operators decompose before any dispatch mode sees them: the binding is proven by its name (the
    # operator has no other overload than out= variants) and by doing what the overload does up to its first
    # dispatch, or returning the same value without one (dropout in eval returns its input)
    text, binding, args = COMPOSITES[kind]
    _, node = node_of(text, kind)
    operation, inputs = compile_operation(node)
    assert operation is binding
    reference = getattr(torch.ops.aten, kind.partition("::")[2]).default._op
    graph_inputs = iter(args)
    full = [constant_value(value.node) if value.node.kind == "prim::Constant" else next(graph_inputs)
            for value in node.inputs]
    expected = reference(*full)
    torch.testing.assert_close(operation(*[full[i] for i in inputs]), expected)


def test_a_composite_binding_never_uses_its_own_defaults() -> None:
    # torch._C._nn.cross_entropy_loss defaults to no reduction, the schema to the mean; the difference shows only
    # after the first dispatch (log_softmax), so a composite's call passes every argument, defaults included
    graph, node = node_of("""\
        graph(%x : Float(*, *), %t : Long(*)):
          %none : NoneType = prim::Constant()
          %mean : int = prim::Constant[value=1]()
          %ignore : int = prim::Constant[value=-100]()
          %smoothing : float = prim::Constant[value=0.]()
          %loss : Tensor = aten::cross_entropy_loss(%x, %t, %none, %mean, %ignore, %smoothing)
          return (%loss)""", "aten::cross_entropy_loss")
    _, inputs = compile_operation(node)
    assert inputs == tuple(range(6))
    x, t = torch.randn(3, 4), torch.tensor([0, 3, 1])
    torch.testing.assert_close(run_graph(graph, x, t), torch.nn.functional.cross_entropy(x, t))


def test_a_composite_binding_raises_the_overloads_error() -> None:
    _, node = node_of(COMPOSITES["aten::linear"][0], "aten::linear")
    operation, _ = compile_operation(node)
    x, w, b = torch.randn(4, 3), torch.randn(5, 2), torch.randn(5)
    with pytest.raises(RuntimeError) as reference:
        torch.ops.aten.linear.default._op(x, w, b)
    with pytest.raises(RuntimeError) as error:
        operation(x, w, b)
    assert str(error.value) == str(reference.value)


def test_a_composite_with_other_overloads_than_out_variants_keeps_the_overload() -> None:
    from tsjit.runtime.operations import _only_overload

    assert _only_overload(torch.ops.aten.linear.default, {})
    assert not _only_overload(torch.ops.aten.linear.default, {"out": None})
    assert not _only_overload(torch.ops.aten.split.sizes, {})  # split.Tensor is another, not an out= variant


def test_trailing_constant_defaults_are_left_out_of_the_call() -> None:
    _, mean = node_of("""\
        graph(%x : Tensor):
          %dim : int[] = prim::Constant[value=[-1]]()
          %keep : bool = prim::Constant[value=0]()
          %none : NoneType = prim::Constant()
          %y : Tensor = aten::mean(%x, %dim, %keep, %none)
          return (%y)""", "aten::mean")
    operation, inputs = compile_operation(mean)
    assert inputs == (0, 1)
    torch.testing.assert_close(operation(torch.ones(2), [-1]), torch.tensor(1.0))
    torch.testing.assert_close(operation_for_node(mean)(torch.ones(2), [-1], False, None), torch.tensor(1.0))


@register_operator("tsjit_test::triple(int x) -> int")
def triple(x: int) -> int:
    return 3 * x


def test_python_operators_run_as_registered() -> None:
    _, node = node_of("""\
        graph(%x : int):
          %y : int = tsjit_test::triple(%x)
          return (%y)""", "tsjit_test::triple")
    assert compile_operation(node).operation is triple


def test_a_node_without_an_operator_is_a_schema_error_naming_it() -> None:
    _, node = node_of("""\
        graph(%x : int):
          %y : int = tsjit_test::missing(%x)
          return (%y)""", "tsjit_test::missing")
    with pytest.raises(SchemaError, match="tsjit_test::missing"):
        compile_operation(node)


FLOAT_2_3 = "Float(2, 3, strides=[3, 1], requires_grad=0, device=cpu)"
TYPE_CHECKED = f"""\
graph(%x : Tensor):
  %a : {FLOAT_2_3}, %ok : bool = prim::TypeCheck[types=[{FLOAT_2_3}]](%x)
  %r : (Tensor, bool) = prim::TupleConstruct(%a, %ok)
  return (%r)
"""


@pytest.mark.parametrize("x, matches", [
    (torch.ones(2, 3), True),
    (torch.ones(3, 2), False),
    (torch.ones(3, 2).t(), False),  # the strides differ
    (torch.ones(2, 3, dtype=torch.float64), False),
    (torch.ones(2, 3, requires_grad=True), False),
])
def test_type_check_compares_every_known_property(x: torch.Tensor, matches: bool) -> None:
    passed, ok = run_graph(parse_ir(TYPE_CHECKED), x)
    assert passed is x and ok is matches


def test_requires_grad_check_compares_requires_grad_under_grad_mode() -> None:
    graph = parse_ir(textwrap.dedent("""\
        graph(%x : Tensor):
          %a : Tensor, %ok : bool = prim::RequiresGradCheck[types=[Tensor(requires_grad=1)]](%x)
          return (%ok)"""))
    assert run_graph(graph, torch.ones(1, requires_grad=True)) is True
    assert run_graph(graph, torch.ones(1)) is False
    with torch.no_grad():
        assert run_graph(graph, torch.ones(1, requires_grad=True)) is False


def test_profile_nodes_pass_their_inputs_through() -> None:
    graph = parse_ir(textwrap.dedent("""\
        graph(%x : Tensor):
          %p : Tensor = prim::profile[profiled_type=Float(2, strides=[1], requires_grad=0, device=cpu), seen_none=0](%x)
          %y : Tensor = aten::neg(%p)
           = prim::profile()
          return (%y)"""))
    torch.testing.assert_close(run_graph(graph, torch.ones(2)), -torch.ones(2))


def test_repeated_calls_of_one_operator_share_one_resolution(monkeypatch) -> None:
    """A graph calling an operator many times with the same constants and input types resolves the call once
    (a first call pays the resolution per distinct call, not per node); other constants resolve anew."""
    from tsjit.runtime import operations

    resolved = []
    new_operation = operations._new_dispatcher_operation
    monkeypatch.setattr(operations, "_new_dispatcher_operation",
                        lambda *args: resolved.append(args[2]) or new_operation(*args))
    monkeypatch.setattr(operations, "_dispatcher_operations", {})
    lines = ["graph(%x : Tensor, %y : Tensor):",
             "  %one : int = prim::Constant[value=1]()", "  %two : int = prim::Constant[value=2]()"]
    previous = "x"
    for i in range(6):
        alpha = "two" if i == 5 else "one"
        lines.append(f"  %v{i} : Tensor = aten::add(%{previous}, %y, %{alpha})")
        previous = f"v{i}"
    graph = parse_ir("\n".join(lines + [f"  return (%{previous})"]))
    adds = [node for node in graph.nodes() if node.kind == "aten::add"]
    compiled = [compile_operation(node) for node in adds]
    assert resolved == [adds[0], adds[5]]
    operations_run = [c.operation for c in compiled]
    assert all(o is operations_run[0] for o in operations_run[1:5]) and operations_run[5] is not operations_run[0]
    x, y = torch.randn(3), torch.randn(3)
    torch.testing.assert_close(run_graph(graph, x, y), x + 7 * y)
