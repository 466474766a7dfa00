"""The importer: TorchScript types as torch-dialect types, graphs as `func.func`, modules as object graphs.

Imported text must verify in torch-mlir (parse_module runs the verifier); where the importer has a choice worth
seeing (a derefine, a fallback op, operand order), the test looks for it in what MLIR prints back.
"""

from __future__ import annotations

import pytest
import torch
from mlir_corpus import assert_close

import tsjit.mlir
import tsjit.mlir.iree
from tsjit.errors import MLIRError
from tsjit.ir import types as ts
from tsjit.ir.parser import parse_ir
from tsjit.mlir import ModuleValue, Slot
from tsjit.mlir.importer import FunctionSpec, import_function
from tsjit.mlir.objects import import_object_graph
from tsjit.mlir.pipelines import parse_module
from tsjit.mlir.types import mlir_type
from tsjit.ops import register_operator
from tsjit.source.source_range import Source, SourceRange


def graph_of(text: str, class_types: dict | None = None):
    return parse_ir(text.strip(), class_types=class_types)


def imported(text: str) -> str:
    """The function imported, verified, and printed back by MLIR in its readable form."""
    _, module = parse_module(import_function(graph_of(text), FunctionSpec("forward")))
    return str(module)


# ---- types -----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("type_", "value_semantics", "expected"), [
    (ts.TensorType.get(), True, "!torch.vtensor"),
    (ts.TensorType(dtype=torch.float32, sizes=(2, None)), True, "!torch.vtensor<[2,?],f32>"),
    (ts.TensorType(dtype=torch.int64, sizes=(3,)), False, "!torch.tensor<[3],si64>"),
    (ts.TensorType(dtype=torch.bool), True, "!torch.vtensor<*,i1>"),
    (ts.TensorType(sizes=()), True, "!torch.vtensor<[],unk>"),
    (ts.ListType(ts.IntType.get()), True, "!torch.list<int>"),
    (ts.OptionalType(ts.TensorType.get()), True, "!torch.optional<vtensor>"),
    (ts.TupleType([ts.TensorType.get(), ts.FloatType.get()]), True, "!torch.tuple<vtensor, float>"),
    (ts.DictType(ts.StringType.get(), ts.ListType(ts.TensorType.get())), False, "!torch.dict<str, list<tensor>>"),
    (ts.UnionType([ts.IntType.get(), ts.StringType.get()]), True, "!torch.union<int, str>"),
    (ts.ScalarTypeType.get(), True, "!torch.int"),
    (ts.NumberType.get(), True, "!torch.number"),
    (ts.DeviceType.get(), True, "!torch.Device"),
    (ts.ClassType("__torch__.M", is_module=True), True, '!torch.nn.Module<"__torch__.M">'),
])
def test_type_spelling_parses_in_torch_mlir(type_, value_semantics, expected):
    from torch_mlir import ir

    assert mlir_type(type_, value_semantics) == expected
    context, _ = parse_module("")
    with context:
        assert str(ir.Type.parse(expected)) == expected.replace("<*,unk>", "")


@pytest.mark.parametrize("type_", [ts.ComplexType.get(), ts.FutureType(ts.IntType.get()),
                                   ts.TensorType(dtype=torch.uint16)])
def test_types_without_torch_dialect_form_are_errors(type_):
    with pytest.raises(MLIRError, match="torch-dialect"):
        mlir_type(type_)


# ---- constants -----------------------------------------------------------------------------------------------
def test_scalar_constants_keep_their_exact_values():
    text = imported('''
graph(%x : Tensor):
  %nan : float = prim::Constant[value=nan]()
  %inf : float = prim::Constant[value=-inf]()
  %tiny : float = prim::Constant[value=1e-300]()
  %s : str = prim::Constant[value="h\\303\\251 \\"q\\""]()
  %d : Device = prim::Constant[value="cpu"]()
  %n : NoneType = prim::Constant()
  %l : int[] = prim::Constant[value=[1, -2]]()
  %t : (float, float, float, str, Device, NoneType, int[]) = prim::TupleConstruct(%nan, %inf, %tiny, %s, %d, %n, %l)
  return (%t)''')
    for expected in ("0x7FF8000000000000", "0xFFF0000000000000", "1.000000e-300", '"h\\C3\\A9 \\22q\\22"',
                     'torch.constant.device "cpu"', "torch.constant.none", "torch.prim.ListConstruct"):
        assert expected in text


@pytest.mark.parametrize("tensor", [torch.tensor([True, False, True]), torch.arange(6).reshape(2, 3),
                                    torch.tensor(2.5, dtype=torch.float64), torch.zeros(0, 3),
                                    torch.linspace(-1, 1, 5).to(torch.bfloat16)],
                         ids=["bool", "int64", "0-d f64", "empty", "bf16"])
def test_tensor_constants_arrive_bit_exact(tensor):
    graph = graph_of('''
graph(%x : Tensor):
  %c : Tensor = prim::Constant[value=0]()
  return (%c)''')
    constant = next(iter(graph.nodes()))
    constant.t_("value", tensor)
    constant.output().set_type(ts.TensorType.create_from_tensor(tensor))
    lowered = tsjit.mlir.compile(graph, [torch.zeros(1)], output_type="linalg-on-tensors")
    got = tsjit.mlir.iree.compile(lowered)(torch.zeros(1))
    assert got.dtype == tensor.dtype and torch.equal(got, tensor)


# ---- nodes -----------------------------------------------------------------------------------------------------
def test_values_flowing_into_wider_types_are_derefined():
    text = imported('''
graph(%c : bool, %n : int):
  %none : NoneType = prim::Constant()
  %r : int? = prim::If(%c)
    block0():
      -> (%n)
    block1():
      -> (%none)
  return (%r)''')
    assert "torch.derefine %arg1 : !torch.int to !torch.optional<int>" in text
    assert "torch.derefine %none : !torch.none to !torch.optional<int>" in text


def test_a_loop_that_changes_a_carried_tensors_rank_carries_what_its_iterations_share():
    """Refinement types the value entering the loop Float(3) and the result Float(3, 1) (`w = w.unsqueeze(-1)`
    once): the loop carries a tensor of unknown rank, cast from and to both (a cast between the two would not
    verify)."""
    text = imported('''
graph(%w : Float(3)):
  %one : int = prim::Constant[value=1]()
  %true : bool = prim::Constant[value=1]()
  %minus_one : int = prim::Constant[value=-1]()
  %r : Float(3, 1) = prim::Loop(%one, %true, %w)
    block0(%i : int, %w.1 : Float(3)):
      %w.2 : Float(3, 1) = aten::unsqueeze(%w.1, %minus_one)
      -> (%true, %w.2)
  return (%r)''')
    assert "torch.prim.Loop" in text and "!torch.vtensor<*,f32>" in text
    assert "!torch.vtensor<[3],f32> to !torch.vtensor<*,f32>" in text
    assert "!torch.vtensor<*,f32> to !torch.vtensor<[3,1],f32>" in text


def test_unregistered_ops_fall_back_to_torch_operator_and_lowering_names_them():
    register_operator("tsjit_test::double(Tensor a) -> Tensor", lambda a: a * 2)
    text = '''
graph(%x : Tensor):
  %y : Tensor = tsjit_test::double(%x)
  return (%y)'''
    assert 'torch.operator "tsjit_test.double"' in imported(text)
    graph = graph_of(text)
    next(iter(graph.nodes())).source_range = SourceRange(Source("y = double(x)\n", "prog.py"), 4, 13)
    with pytest.raises(MLIRError, match=r'blocked by torch\.operator \(from tsjit_test::double at "prog\.py":1:4\)'):
        tsjit.mlir.compile(graph, [torch.randn(2)])


def test_dict_construct_takes_all_keys_then_all_values():
    text = imported('''
graph(%a : Tensor, %b : Tensor):
  %ka : str = prim::Constant[value="a"]()
  %kb : str = prim::Constant[value="b"]()
  %d : Dict(str, Tensor) = prim::DictConstruct(%ka, %a, %kb, %b)
  return (%d)''')
    assert "keys(%str, %str_0 : !torch.str, !torch.str) values(%arg0, %arg1 :" in text


def test_nodes_without_a_torch_dialect_form_are_named():
    with pytest.raises(MLIRError, match="prim::isinstance"):
        imported('''
graph(%x : Union(Tensor, int)):
  %b : bool = prim::isinstance[types=[int]](%x)
  return (%b)''')


def test_a_tuple_result_becomes_several_results():
    graph = graph_of('''
graph(%x : Tensor, %n : int):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %n, %one)
  %t : (Tensor, int) = prim::TupleConstruct(%y, %n)
  return (%t)''')
    run = tsjit.mlir.iree.compile(tsjit.mlir.compile(graph, [torch.randn(3), 2], output_type="linalg-on-tensors"))
    x = torch.randn(3)
    assert_close(run(x, 4), (x + 4, 4))


def test_without_value_semantics_arguments_carry_torch_type_bound():
    graph = graph_of('''
graph(%x : Tensor):
  %two : int = prim::Constant[value=2]()
  %y : Tensor = aten::mul(%x, %two)
  return (%y)''')
    from tsjit.mlir.pipelines import _prepare, import_program
    from tsjit.mlir.prepare import Options

    program = _prepare(graph, [torch.randn(2, 3)], Options(value_semantics=False), "forward")
    assert "!torch.tensor {torch.type_bound = !torch.vtensor<[2,3],f32>}" in import_program(program).replace(
        "!torch.tensor<[2,3],f32> {", "!torch.tensor {")
    run = tsjit.mlir.iree.compile(tsjit.mlir.compile(graph, [torch.randn(2, 3)], output_type="linalg-on-tensors",
                                                     value_semantics=False))
    x = torch.randn(2, 3)
    assert_close(run(x), x * 2)


# ---- object graphs ---------------------------------------------------------------------------------------------
SCALE_FORWARD = '''
graph(%self : __torch__.Scale, %x : Tensor):
  %w : Tensor = prim::GetAttr[name="w"](%self)
  %f : float = prim::GetAttr[name="factor"](%self)
  %y : Tensor = aten::mul(%x, %w)
  %z : Tensor = aten::mul(%y, %f)
  return (%z)'''

ROOT_FORWARD = '''
graph(%self : __torch__.Root, %x : Tensor):
  %s : __torch__.Scale = prim::GetAttr[name="scale"](%self)
  %y : Tensor = prim::CallMethod[name="forward"](%s, %x)
  %z : Tensor = prim::CallMethod[name="twice"](%self, %y)
  return (%z)'''

ROOT_TWICE = '''
graph(%self : __torch__.Root, %x : Tensor):
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::add(%x, %x, %one)
  return (%y)'''


def root_module() -> ModuleValue:
    classes: dict = {}
    scale = ModuleValue("__torch__.Scale", [Slot("w", ts.TensorType.get(), torch.arange(3.0)),
                                            Slot("factor", ts.FloatType.get(), 1.5)],
                        {"forward": graph_of(SCALE_FORWARD, classes)})
    methods = {"forward": graph_of(ROOT_FORWARD, classes), "twice": graph_of(ROOT_TWICE, classes)}
    return ModuleValue("__torch__.Root", [Slot("scale", classes["__torch__.Scale"], scale)], methods)


def test_object_graph_declares_private_attributes_and_methods_except_the_entry_point():
    context, module = parse_module(import_object_graph(root_module(), ["forward"], value_semantics=True))
    text = str(module)
    for expected in ('torch.attr private "w" : !torch.tensor', 'torch.attr private "factor" : !torch.float',
                     'torch.method "forward", @__torch__.Root.forward',
                     'torch.method private "twice", @__torch__.Root.twice',
                     'torch.slot "w", %0 : !torch.tensor<[3],f32>', "func.func private @__torch__.Scale.forward",
                     'torch.slot "scale", %1 : !torch.nn.Module<"__torch__.Scale">'):
        assert expected in text


def test_object_graph_lowers_to_one_function_and_runs():
    lowered = tsjit.mlir.compile(root_module(), [torch.randn(3)], output_type="linalg-on-tensors")
    assert "func.func @forward(%arg0: tensor<3xf32>) -> tensor<3xf32>" in str(lowered)
    x = torch.randn(3)
    assert_close(tsjit.mlir.iree.compile(lowered)(x), x * torch.arange(3.0) * 1.5 * 2)


def test_a_module_reachable_by_two_paths_is_rejected():
    root = root_module()
    root.slots.append(Slot("again", root.slots[0].type, root.slots[0].value))
    with pytest.raises(MLIRError, match="two paths"):
        tsjit.mlir.compile(root, [torch.randn(3)])
