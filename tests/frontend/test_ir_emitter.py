"""The IR emitter end to end: the seeds' programs give the seeds' graphs, and torch.jit's graphs for the same
source (up to value names), plus the typing rules, calls between functions and the decorators.

Graph text is compared after renaming every value in order of appearance (`%a.1`, `%5` -> `%v0`, `%v1`), so
the comparison is "up to value names"; where torch.jit is the oracle its graph is taken live.
"""

# ruff: noqa: UP006, UP035, UP045, E741, B007, UP031, UP032, F841  (programs written as TorchScript users do)

from __future__ import annotations

import re
from typing import Dict, List, Optional, Tuple

import pytest
import torch
from shared_programs import lstm_cell

from tsjit.api import CompilationUnit, ScriptFunction, ignore, script, unused
from tsjit.errors import CompileError, TsjitError
from tsjit.ir.symbols import prim

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit's own


def normalized(text: str) -> str:
    """Graph text with source comments dropped and values renamed by first appearance."""
    names: dict[str, str] = {}

    def rename(match: re.Match) -> str:
        return names.setdefault(match.group(0), f"%v{len(names)}")

    lines = [re.sub(r" # .*$", "", line) for line in text.strip().splitlines()]
    return re.sub(r"%[\w.]+", rename, "\n".join(lines))


def kinds(graph) -> list[str]:
    return [str(node.kind) for node in graph.nodes()]


def assert_same_graph_as_torch(fn) -> None:
    assert normalized(str(script(fn).graph)) == normalized(str(torch.jit.script(fn).graph))


# ---- pytorch-ir-2018.md ------------------------------------------------------------------------------------------
def seed_f(a, b):
    c = a + b
    d = c * c
    e = torch.tanh(d * c)
    return d + (e + e)


def test_seed_f():
    graph = script(seed_f).graph
    # the seed's graph, with today's `alpha` constant: add, mul, mul, tanh, add, add
    assert kinds(graph) == ["prim::Constant", "aten::add", "aten::mul", "aten::mul", "aten::tanh", "aten::add",
                            "aten::add"]
    assert_same_graph_as_torch(seed_f)


def seed_if_else(a, b, c):
    d = a + b
    if c:
        e = d + d
    else:
        e = b + d
    return e


def test_seed_if_else():
    expected = """
graph(%a.1 : Tensor,
      %b.1 : Tensor,
      %c.1 : Tensor):
  %5 : int = prim::Constant[value=1]()
  %d.1 : Tensor = aten::add(%a.1, %b.1, %5)
  %9 : bool = aten::Bool(%c.1)
  %e : Tensor = prim::If(%9)
    block0():
      %e.1 : Tensor = aten::add(%d.1, %d.1, %5)
      -> (%e.1)
    block1():
      %e.3 : Tensor = aten::add(%b.1, %d.1, %5)
      -> (%e.3)
  return (%e)"""
    assert script(seed_if_else).graph.str(False).strip() == expected.strip()


def seed_loop(x):
    z = x
    for i in range(x.size(0)):
        z = z * z
    return z


def test_seed_loop():
    expected = """
graph(%x.1 : Tensor):
  %7 : bool = prim::Constant[value=1]()
  %3 : int = prim::Constant[value=0]()
  %4 : int = aten::size(%x.1, %3)
  %z : Tensor = prim::Loop(%4, %7, %x.1)
    block0(%i : int, %z.11 : Tensor):
      %z.5 : Tensor = aten::mul(%z.11, %z.11)
      -> (%7, %z.5)
  return (%z)"""
    assert script(seed_loop).graph.str(False).strip() == expected.strip()


def simple_lstm(input, hidden, wih, whh, bih, bhh):
    # type: (Tensor, Tuple[Tensor, Tensor], Tensor, Tensor, Tensor, Tensor) -> Tuple[Tensor, Tensor]
    outputs = []
    inputs = input.unbind(0)
    for seq_idx in range(len(inputs)):
        hidden = lstm_cell(inputs[seq_idx], hidden, wih, whh, bih, bhh)
        hy, _ = hidden
        outputs.append(hy)
    return hidden


def test_lstm_cell():
    graph = script(lstm_cell).graph
    assert str(graph.inputs[1].type) == "(Tensor, Tensor)"
    assert "prim::TupleUnpack" in kinds(graph) and "prim::ListUnpack" in kinds(graph)
    assert_same_graph_as_torch(lstm_cell)


def test_simple_lstm_calls_then_inlines_the_cell():
    function = script(simple_lstm)
    loop = next(n for n in function.graph.nodes() if n.kind is prim.Loop)
    assert [str(n.kind) for n in loop.blocks[0].nodes()] == ["aten::__getitem__", "prim::CallFunction"]
    # the unused list of outputs and its appends are dead code, as in torch.jit's graph
    assert "aten::append" not in kinds(function.graph)
    inlined = function.inlined_graph
    assert not any(n.kind is prim.CallFunction for n in inlined.all_nodes())
    assert sum(str(n.kind) == "aten::sigmoid" for n in inlined.all_nodes()) == 3
    assert_same_graph_as_torch(simple_lstm)


def test_simple_lstm_runs_like_eager():
    torch.manual_seed(0)
    inputs = (torch.randn(5, 2, 4), (torch.randn(2, 3), torch.randn(2, 3)), torch.randn(12, 4),
              torch.randn(12, 3), torch.randn(12), torch.randn(12))
    expected = simple_lstm(*inputs)
    actual = script(simple_lstm)(*inputs)
    assert all(torch.allclose(a, b) for a, b in zip(expected, actual))


# ---- jit-overview.md "Exit Transform" ----------------------------------------------------------------------------
def continue_in_while(i: int):
    while i < 5:
        if i == 3:
            i += 1
            continue
        i += 2
    return i


def test_exit_transform_continue():
    """The continue becomes If outputs (the next loop condition and i): no prim::LoopContinuation is left."""
    graph = script(continue_in_while).graph
    loop = next(n for n in graph.nodes() if n.kind is prim.Loop)
    body_if = next(n for n in loop.blocks[0].nodes() if n.kind is prim.If)
    assert [str(o.type) for o in body_if.outputs] == ["bool", "int"]
    assert list(loop.blocks[0].outputs) == list(body_if.outputs)
    assert not any(n.kind in (prim.LoopContinuation, prim.ContinueStmt) for n in graph.all_nodes())
    assert_same_graph_as_torch(continue_in_while)
    assert script(continue_in_while)(0) == continue_in_while(0)


def raise_or_return(i: float):
    if i < 0:
        raise Exception("Negative input")
    else:
        return i ** 0.5
    print(i)  # unreachable


def test_exit_transform_raise():
    """The raising branch outputs prim::Uninitialized and the unreachable print is gone."""
    expected = """
graph(%i.1 : float):
  %6 : str = prim::Constant[value="builtins.Exception"]()
  %5 : str = prim::Constant[value="Negative input"]()
  %2 : int = prim::Constant[value=0]()
  %9 : float = prim::Constant[value=0.5]()
  %19 : float = prim::Uninitialized()
  %3 : bool = aten::lt(%i.1, %2)
  %20 : float = prim::If(%3)
    block0():
       = prim::RaiseException(%5, %6)
      -> (%19)
    block1():
      %10 : float = aten::pow(%i.1, %9)
      -> (%10)
  return (%20)"""
    assert script(raise_or_return).graph.str(False).strip() == expected.strip()
    with pytest.raises(Exception, match="Negative input"):
        script(raise_or_return)(-1.0)


def optional_continue(cond: bool, i: int):
    for _ in range(3):
        if cond:
            if i < 3:
                x = torch.jit.annotate(Optional[int], None)
                continue
            x = 1
        else:
            x = 2
        print(x)
    return i


def test_exit_transform_keeps_refined_types_of_loop_carried_values():
    """jit-overview.md's example: x is Optional[int] at the continue but int at the print."""
    graph = script(optional_continue).graph
    prints = [n for n in graph.all_nodes() if n.kind is prim.Print]
    assert [str(n.inputs[0].type) for n in prints] == ["int"]
    assert_same_graph_as_torch(optional_continue)


def early_return(x, n: int):
    if n > 2:
        return x
    y = x * 2
    return y


def test_early_return_folds_into_one_if():
    graph = script(early_return).graph
    assert kinds(graph).count("prim::If") == 1
    assert_same_graph_as_torch(early_return)


def break_loop(x, n: int):
    for i in range(n):
        if i > 3:
            break
        x = x + i
    return x


def test_break_makes_a_while_loop_that_counts():
    """A for loop with a break has a trip count and a condition: it becomes a while loop (canonicalized)."""
    graph = script(break_loop).graph
    loop = next(n for n in graph.nodes() if n.kind is prim.Loop)
    assert loop.inputs[0].node.kind is prim.Constant and loop.inputs[0].node.i("value") == 2**63 - 1
    assert_same_graph_as_torch(break_loop)
    assert torch.equal(script(break_loop)(torch.zeros(1), 10), break_loop(torch.zeros(1), 10))


# ---- convert_to_ssa on the emitter's load/store form -------------------------------------------------------------
def test_convert_to_ssa_erases_loads_and_stores():
    import tsjit
    from tsjit.frontend.convert_to_ssa import convert_to_ssa
    from tsjit.passes.dead_code_elimination import eliminate_dead_code

    graph = tsjit.parse_ir("""\
graph(%c.1 : bool):
  %a.1 : int = prim::Constant[value=1]()
   = prim::Store[name="a"](%a.1)
   = prim::If(%c.1)
    block0():
      %a.3 : int = prim::Load[name="a"]()
      %2 : int = aten::add(%a.3, %a.3)
       = prim::Store[name="a"](%2)
      -> ()
    block1():
      -> ()
  %a : int = prim::Load[name="a"]()
   = prim::ReturnStmt(%a)
  %r : int = prim::Uninitialized()
  return (%r)""")
    convert_to_ssa(graph)
    eliminate_dead_code(graph)
    assert normalized(str(graph)) == normalized("""
graph(%c.1 : bool):
  %a.1 : int = prim::Constant[value=1]()
  %a : int = prim::If(%c.1)
    block0():
      %2 : int = aten::add(%a.1, %a.1)
      -> (%2)
    block1():
      -> (%a.1)
  return (%a)""")


def test_with_statement_exit_stays_after_an_early_return():
    """prim::Enter/Exit take the prim::With form during the exit transform, so a return inside the with
    leaves the prim::Exit in place, unguarded."""
    import tsjit
    from tsjit.frontend.exit_transform import transform_exits

    graph = tsjit.parse_ir("""\
graph(%x : Tensor, %c : bool):
  %o : Tensor = prim::Enter(%x)
   = prim::If(%c)
    block0():
       = prim::ReturnStmt(%o)
      -> ()
    block1():
      -> ()
  %e : Tensor = prim::Exit(%x)
   = prim::ReturnStmt(%x)
  %r : Tensor = prim::Uninitialized()
  return (%r)""")
    transform_exits(graph)
    top = kinds(graph)
    assert "prim::With" not in top
    assert top.index("prim::Enter") < top.index("prim::Exit")
    assert not any(n.kind is prim.ReturnStmt for n in graph.all_nodes())
    graph.lint()


# ---- typing -----------------------------------------------------------------------------------------------------
def optional_refinement(x: Optional[int]):
    if x is not None and x > 2:
        return x
    return 0


def test_optional_refined_in_and_condition():
    graph = script(optional_refinement).graph
    casts = [n for n in graph.all_nodes() if n.kind is prim.unchecked_cast]
    assert casts and all(str(n.output().type) == "int" for n in casts)
    assert_same_graph_as_torch(optional_refinement)


def assert_refines(x: Optional[int]):
    assert x is not None
    return x + 1


def test_assert_refines_optional():
    assert str(script(assert_refines).schema) == "assert_refines(int? x) -> int"
    assert script(assert_refines)(2) == 3
    assert_same_graph_as_torch(assert_refines)


def static_none_check(x, y: Optional[torch.Tensor] = None):
    if y is None:
        return x
    return x + y


def test_none_argument_and_default():
    function = script(static_none_check)
    assert str(function.schema) == "static_none_check(Tensor x, Tensor? y=None) -> Tensor"
    x = torch.ones(2)
    assert torch.equal(function(x), x) and torch.equal(function(x, y=x), 2 * x)


def branches_unify_to_optional(flag: bool):
    if flag:
        x = None
    else:
        x = 1
    return x


def test_branches_unify():
    assert str(script(branches_unify_to_optional).schema.returns[0].type) == "int?"


def loop_carried_types(n: int):
    total = 0.0
    count = 0
    for i in range(n):
        total += i
        count += 1
    return total, count


def test_loop_carried_variables_keep_their_types():
    graph = script(loop_carried_types).graph
    loop = next(n for n in graph.nodes() if n.kind is prim.Loop)
    assert sorted(str(o.type) for o in loop.outputs) == ["float", "int"]
    assert script(loop_carried_types)(4) == (6.0, 4)


def int_float_promotion(a: int, b: float):
    return a + b, a * 2, b / a


def test_number_promotion_through_overloads():
    assert str(script(int_float_promotion).schema.returns[0].type) == "(float, int, float)"
    assert_same_graph_as_torch(int_float_promotion)


def empty_containers():
    a: List[int] = []
    b = torch.jit.annotate(List[float], [])
    c = []
    return a, b, c


def test_empty_containers_take_annotated_types():
    assert str(script(empty_containers).schema.returns[0].type) == "(int[], float[], Tensor[])"


def scalar_before_tensor(x):
    return 1 - x


def test_builtin_written_in_torchscript_is_inlined():
    """`1 - x` is `sub(a: int, b: Tensor)`, defined in TorchScript as `torch.neg(b) + a`."""
    assert kinds(script(scalar_before_tensor).graph) == ["prim::Constant", "aten::neg", "aten::add"]
    assert_same_graph_as_torch(scalar_before_tensor)


def unannotated_arguments_are_tensors(a, b: int):
    return a


def test_schema_from_annotations():
    function = script(unannotated_arguments_are_tensors)
    assert str(function.schema) == "unannotated_arguments_are_tensors(Tensor a, int b) -> Tensor"
    # a parameter that is read is loaded under its name, so the input itself becomes `%a.1`
    assert [v.debug_name for v in function.graph.inputs] == ["a.1", "b"]


# ---- calls between functions -------------------------------------------------------------------------------------
def test_compilation_unit_functions_call_each_other():
    cu = CompilationUnit("""
def quad(x):
    return double(double(x))
def double(x):
    return x * 2
""")
    assert [n.kind for n in cu.quad.graph.nodes()].count(prim.CallFunction) == 2
    assert torch.equal(cu.quad(torch.ones(2)), torch.full((2,), 4.0))
    assert normalized(str(cu.quad.inlined_graph)).count("aten::mul") == 2


def test_compilation_unit_resolves_names_where_it_is_created():
    helper = script(with_defaults)
    cu = CompilationUnit("""
def f(x):
    return helper(x, 3.0, 0)
""")
    assert torch.equal(cu.f(torch.ones(1)), torch.full((1,), 3.0))


def test_python_numbers_are_not_captured():
    scale = 3.0  # noqa: F841  (named by the source below)
    with pytest.raises(CompileError, match="python value of type 'float' cannot be used as a value"):
        CompilationUnit("""
def f(x):
    return x * scale
""")


def test_inline_calls_pass():
    from tsjit.passes.inliner import inline_calls

    cu = CompilationUnit("""
def inner(x: int) -> int:
    return x + 1
def outer(x: int) -> int:
    return inner(inner(x))
""")
    graph = cu.outer.graph.copy()
    assert inline_calls(graph)
    assert not inline_calls(graph)
    assert [str(n.kind) for n in graph.nodes()].count("aten::add") == 2
    graph.lint()


@ignore
def left_to_python(x):
    return x + 1


def calls_ignored(x):
    return left_to_python(x)


@unused
def dropped(x: int) -> int:
    return x + 1


def calls_unused(x: int):
    return dropped(x)


def test_ignored_function_becomes_a_python_op():
    graph = script(calls_ignored).graph
    python_ops = [n for n in graph.nodes() if n.kind is prim.PythonOp]
    assert len(python_ops) == 1 and python_ops[0].s("name") == "left_to_python"
    assert str(python_ops[0].output().type) == "Tensor"


def test_unused_function_raises_when_called():
    graph = script(calls_unused).graph
    assert "prim::RaiseException" in [str(n.kind) for n in graph.all_nodes()]
    with pytest.raises(Exception, match="annotated to be ignored"):
        script(calls_unused)(1)


# ---- ScriptFunction ----------------------------------------------------------------------------------------------
def with_defaults(x, scale: float = 2.0, offset: int = 1):
    return x * scale + offset


def test_script_function_calls_bind_arguments():
    function = script(with_defaults)
    assert isinstance(function, ScriptFunction) and script(function) is function
    assert str(function.schema) == "with_defaults(Tensor x, float scale=2., int offset=1) -> Tensor"
    x = torch.ones(1)
    assert torch.equal(function(x), with_defaults(x))
    assert torch.equal(function(x, offset=3), with_defaults(x, offset=3))
    assert torch.equal(function(x, 3), with_defaults(x, 3.0))  # an int is a float here
    with pytest.raises(TsjitError, match="Expected a value of type 'float' for argument 'scale'"):
        function(x, "a")
    with pytest.raises(TsjitError, match="missing value for argument 'x'"):
        function()


def test_script_is_cached_per_function():
    assert script(with_defaults) is script(with_defaults)


def test_script_rejects_non_functions():
    with pytest.raises(TsjitError):
        script(42)


def test_errors_are_compile_errors():
    with pytest.raises(CompileError):
        CompilationUnit("def f(x):\n    return y\n")


def test_tuple_type_comment_signature():
    function = script(lstm_cell)
    assert str(function.schema.returns[0].type) == "(Tensor, Tensor)"
    assert isinstance(function.schema.arguments[1].type.elements, tuple)
    assert Tuple  # typing names in annotations resolve through the function's globals


# ---- comprehension conditions (torch.jit refuses them; torch.nn.functional.gaussian_nll_loss has one) ----------
def evens_doubled(xs: List[int]) -> List[int]:
    return [x * 2 for x in xs if x % 2 == 0]


def chained_conditions(xs: List[int]) -> List[int]:
    return [x for x in xs if x > 1 if x != 3]


def mismatched_sum(a: List[int], b: List[int]) -> int:
    return sum(y for x, y in zip(a, b) if x != y)


def static_condition(xs: List[int]) -> List[int]:
    return [x for x in xs if torch.jit.is_scripting()]


def keys_kept(xs: List[int]) -> Dict[int, int]:
    return {x: x * x for x in xs if x > 0}


@pytest.mark.parametrize("function", [evens_doubled, chained_conditions, static_condition, keys_kept],
                         ids=lambda f: f.__name__)
def test_comprehension_conditions_filter_like_python(function):
    for xs in ([], [1, 2, 3, 4, -2], [3, 3]):
        expected = list(xs) if function is static_condition else function(xs)  # is_scripting() is True there
        assert script(function)(xs) == expected


def test_comprehension_conditions_are_ifs_in_the_loop_and_parse_from_source():
    graph = script(chained_conditions).graph
    loop = next(node for node in graph.nodes() if node.kind is prim.Loop)
    outer = next(node for node in loop.blocks[0].nodes() if node.kind is prim.If)
    assert any(node.kind is prim.If for node in outer.blocks[0].nodes())
    assert script(mismatched_sum)([1, 2, 3], [1, 5, 4]) == 9
    unit = CompilationUnit("def f(xs: List[int]) -> Dict[int, int]:\n    return {x: 1 for x in xs if x > 1 if x < 4}\n")
    assert unit.f([1, 2, 3, 4]) == {2: 1, 3: 1}


# ---- with torch.no_grad(): torch's class compiled from its source, its grad-mode calls never dead code ---------
def no_grad_block(x: torch.Tensor) -> Tuple[bool, bool, bool]:
    y = x * 2
    with torch.no_grad():
        z = x * 3
    w = x * 4
    return y.requires_grad, z.requires_grad, w.requires_grad


def test_no_grad_block_turns_grad_mode_off_and_back_on():
    x = torch.ones(2, requires_grad=True)
    assert script(no_grad_block)(x) == no_grad_block(x) == (True, False, True)
    assert torch.is_grad_enabled()
    enter = script(no_grad_block).graph
    assert any(node.kind is prim.Enter for node in enter.nodes())


# ---- torch.autograd.Function.apply: a Python call (prim::PythonOp), as torch.jit compiles nn.CrossMapLRN2d ------
class Scale(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, factor):
        ctx.factor = factor
        return x * factor

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.factor, None


def scaled(x: torch.Tensor, factor: float) -> torch.Tensor:
    return Scale.apply(x, factor) + 1


def test_autograd_function_apply_is_a_python_call():
    x = torch.randn(3, requires_grad=True)
    function = script(scaled)
    assert [str(node.kind) for node in function.graph.nodes()].count("prim::PythonOp") == 1
    result = function(x, 2.0)
    assert torch.equal(result, scaled(x, 2.0))
    result.sum().backward()
    assert torch.equal(x.grad, torch.full((3,), 2.0))


def test_a_module_file_is_parsed_for_overloads_only_when_the_function_is_declared_overloaded(monkeypatch):
    """torch.nn.functional declares @_overload functions (interpolate), so scripting F.relu asks its file; only a
    function that follows an overload decorator there has the whole file parsed for its declarations."""
    import ast
    import inspect

    import torch.nn.functional as F

    from tsjit.frontend import resolver

    parsed = []
    monkeypatch.setattr(resolver, "_module_overload_spans", {})
    parse = ast.parse
    monkeypatch.setattr(ast, "parse", lambda text, *args, **kwargs: parsed.append(text) or parse(text, *args, **kwargs))
    assert resolver.overload_declarations(F.relu) == []
    assert parsed == []
    assert len(resolver.overload_declarations(F.interpolate)) >= 2
    assert len(resolver.overload_declarations(F.upsample)) >= 2
    with open(inspect.getsourcefile(F), encoding="utf-8") as source:
        assert parsed.count(source.read()) == 1  # the whole file, once
