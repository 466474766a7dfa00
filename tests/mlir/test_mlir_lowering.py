"""The programs the bridge must carry to every backend: the seed's LSTM cell, an MLP, a small CNN, and control
flow, each lowered to linalg-on-tensors, TOSA and StableHLO, run by IREE and compared with eager PyTorch.

The programs are written as graph text (and, for modules, ModuleValues), so they do not depend on torch.jit;
the LSTM cell is also taken from torch.jit's own graph of the seed's function when torch.jit is there.
"""

from __future__ import annotations

import pytest
import torch
from mlir_corpus import assert_close, graph_from_torch, script
from shared_programs import lstm_cell

import tsjit
import tsjit.mlir
import tsjit.mlir.iree
from tsjit.errors import MLIRError
from tsjit.ir import types
from tsjit.ir.parser import parse_ir
from tsjit.mlir import ModuleValue, Slot

BACKENDS = ("linalg-on-tensors", "tosa", "stablehlo")


def run_on_iree(target, inputs, backend):
    """Compile for `backend`, run with IREE, return the torch result."""
    return tsjit.mlir.iree.compile(tsjit.mlir.compile(target, inputs, output_type=backend))(*inputs)


# ---- the seed's LSTM cell (pytorch-ir-2018.md) -----------------------------------------------------------------
LSTM_CELL_IR = """
graph(%input : Tensor, %hidden : (Tensor, Tensor), %w_ih : Tensor, %w_hh : Tensor, %b_ih : Tensor,
      %b_hh : Tensor):
  %one : int = prim::Constant[value=1]()
  %four : int = prim::Constant[value=4]()
  %hx : Tensor, %cx : Tensor = prim::TupleUnpack(%hidden)
  %w_ih_t : Tensor = aten::t(%w_ih)
  %x_gates : Tensor = aten::mm(%input, %w_ih_t)
  %w_hh_t : Tensor = aten::t(%w_hh)
  %h_gates : Tensor = aten::mm(%hx, %w_hh_t)
  %sum.1 : Tensor = aten::add(%x_gates, %h_gates, %one)
  %sum.2 : Tensor = aten::add(%sum.1, %b_ih, %one)
  %gates : Tensor = aten::add(%sum.2, %b_hh, %one)
  %chunks : Tensor[] = aten::chunk(%gates, %four, %one)
  %ingate.1 : Tensor, %forgetgate.1 : Tensor, %cellgate.1 : Tensor, %outgate.1 : Tensor = prim::ListUnpack(%chunks)
  %ingate : Tensor = aten::sigmoid(%ingate.1)
  %forgetgate : Tensor = aten::sigmoid(%forgetgate.1)
  %cellgate : Tensor = aten::tanh(%cellgate.1)
  %outgate : Tensor = aten::sigmoid(%outgate.1)
  %kept : Tensor = aten::mul(%forgetgate, %cx)
  %added : Tensor = aten::mul(%ingate, %cellgate)
  %cy : Tensor = aten::add(%kept, %added, %one)
  %cy_tanh : Tensor = aten::tanh(%cy)
  %hy : Tensor = aten::mul(%outgate, %cy_tanh)
  %result : (Tensor, Tensor) = prim::TupleConstruct(%hy, %cy)
  return (%result)
"""


def lstm_inputs():
    torch.manual_seed(0)
    batch, inputs, hidden = 3, 10, 20
    return (torch.randn(batch, inputs), (torch.randn(batch, hidden), torch.randn(batch, hidden)),
            torch.randn(4 * hidden, inputs), torch.randn(4 * hidden, hidden), torch.randn(4 * hidden),
            torch.randn(4 * hidden))


@pytest.mark.parametrize("backend", BACKENDS)
def test_lstm_cell(backend):
    inputs = lstm_inputs()
    assert_close(run_on_iree(parse_ir(LSTM_CELL_IR.strip()), inputs, backend), lstm_cell(*inputs))


def test_lstm_cell_from_torch_jit_graph():
    graph = graph_from_torch(script(lstm_cell).graph)
    inputs = lstm_inputs()
    assert_close(run_on_iree(graph, inputs, "linalg-on-tensors"), lstm_cell(*inputs))


def test_lstm_cell_linalg_has_no_torch_ops_left():
    text = str(tsjit.mlir.compile(parse_ir(LSTM_CELL_IR.strip()), lstm_inputs(), output_type="linalg-on-tensors"))
    assert "linalg.matmul" in text and "!torch." not in text
    # the tuple argument became two arguments, the tuple result two results
    assert "func.func @forward(%arg0: tensor<3x10xf32>, %arg1: tensor<3x20xf32>, %arg2: tensor<3x20xf32>" in text


# ---- an MLP and a small CNN as object graphs ------------------------------------------------------------------
LINEAR_FORWARD = """
graph(%self : __torch__.Linear, %x : Tensor):
  %w : Tensor = prim::GetAttr[name="weight"](%self)
  %b : Tensor = prim::GetAttr[name="bias"](%self)
  %y : Tensor = aten::linear(%x, %w, %b)
  return (%y)
"""

MLP_FORWARD = """
graph(%self : __torch__.MLP, %x : Tensor):
  %l1 : __torch__.Linear = prim::GetAttr[name="l1"](%self)
  %h : Tensor = prim::CallMethod[name="forward"](%l1, %x)
  %r : Tensor = aten::relu(%h)
  %l2 : __torch__.Linear = prim::GetAttr[name="l2"](%self)
  %y : Tensor = prim::CallMethod[name="forward"](%l2, %r)
  return (%y)
"""


def linear_module(layer: torch.nn.Linear, class_types: dict) -> ModuleValue:
    tensor = types.TensorType.get()
    slots = [Slot("weight", tensor, layer.weight.detach()), Slot("bias", tensor, layer.bias.detach())]
    forward = parse_ir(LINEAR_FORWARD.strip(), class_types=class_types)
    return ModuleValue("__torch__.Linear", slots, {"forward": forward})


def mlp_module(eager: torch.nn.Sequential) -> ModuleValue:
    class_types: dict = {}
    l1, l2 = linear_module(eager[0], class_types), linear_module(eager[2], class_types)
    linear_type = class_types["__torch__.Linear"]
    return ModuleValue("__torch__.MLP", [Slot("l1", linear_type, l1), Slot("l2", linear_type, l2)],
                       {"forward": parse_ir(MLP_FORWARD.strip(), class_types=class_types)})


@pytest.mark.parametrize("backend", BACKENDS)
def test_mlp(backend):
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    x = torch.randn(5, 4)
    assert_close(run_on_iree(mlp_module(eager), (x,), backend), eager(x).detach())


CNN_FORWARD = """
graph(%self : __torch__.CNN, %x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %minus_one : int = prim::Constant[value=-1]()
  %false : bool = prim::Constant[value=0]()
  %ones : int[] = prim::ListConstruct(%one, %one)
  %twos : int[] = prim::ListConstruct(%two, %two)
  %zeros : int[] = prim::ListConstruct(%zero, %zero)
  %conv_w : Tensor = prim::GetAttr[name="conv_weight"](%self)
  %conv_b : Tensor = prim::GetAttr[name="conv_bias"](%self)
  %conv : Tensor = aten::conv2d(%x, %conv_w, %conv_b, %ones, %ones, %ones, %one)
  %relu : Tensor = aten::relu(%conv)
  %pool : Tensor = aten::max_pool2d(%relu, %twos, %twos, %zeros, %ones, %false)
  %flat : Tensor = aten::flatten(%pool, %one, %minus_one)
  %fc_w : Tensor = prim::GetAttr[name="fc_weight"](%self)
  %fc_b : Tensor = prim::GetAttr[name="fc_bias"](%self)
  %y : Tensor = aten::linear(%flat, %fc_w, %fc_b)
  return (%y)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_small_cnn(backend):
    torch.manual_seed(0)
    conv, fc = torch.nn.Conv2d(3, 4, 3, padding=1), torch.nn.Linear(64, 10)
    tensor = types.TensorType.get()
    slots = [Slot(name, tensor, p.detach()) for name, p in (("conv_weight", conv.weight), ("conv_bias", conv.bias),
                                                           ("fc_weight", fc.weight), ("fc_bias", fc.bias))]
    module = ModuleValue("__torch__.CNN", slots, {"forward": parse_ir(CNN_FORWARD.strip(), class_types={})})
    x = torch.randn(2, 3, 8, 8)
    expected = fc(torch.nn.functional.max_pool2d(torch.relu(conv(x)), 2).flatten(1)).detach()
    assert_close(run_on_iree(module, (x,), backend), expected)


# ---- control flow ----------------------------------------------------------------------------------------------
DYNAMIC_CONTROL_FLOW = """
graph(%x : Tensor, %n : int):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %s : Tensor = aten::sum(%x, %none)
  %positive : Tensor = aten::gt(%s, %zero)
  %c : bool = aten::Bool(%positive)
  %y : Tensor = prim::If(%c)
    block0():
      %doubled : Tensor = aten::mul(%x, %two)
      -> (%doubled)
    block1():
      %negated : Tensor = aten::neg(%x)
      -> (%negated)
  %r : Tensor = prim::Loop(%n, %true, %y)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::add(%acc, %i, %one)
      -> (%true, %next)
  return (%r)
"""


def dynamic_control_flow(x, n):
    y = x * 2 if bool(x.sum() > 0) else -x
    for i in range(n):
        y = y + i
    return y


def test_data_dependent_if_and_loop_on_linalg():
    graph = parse_ir(DYNAMIC_CONTROL_FLOW.strip())
    run = tsjit.mlir.iree.compile(tsjit.mlir.compile(graph, [torch.randn(2, 3), 3],
                                                     output_type="linalg-on-tensors"))
    for x, n in ((torch.ones(2, 3), 4), (-torch.ones(2, 3), 0), (torch.randn(2, 3), 2)):
        assert_close(run(x, n), dynamic_control_flow(x, n))


@pytest.mark.parametrize("backend", ["tosa", "stablehlo"])
def test_data_dependent_control_flow_names_the_blocking_op(backend):
    with pytest.raises(MLIRError, match=r"unconverted: .*torch\.prim\.If \(from prim::If\)"):
        tsjit.mlir.compile(parse_ir(DYNAMIC_CONTROL_FLOW.strip()), [torch.randn(2, 3), 3], output_type=backend)


STATIC_CONTROL_FLOW = """
graph(%self : __torch__.Static, %x : Tensor):
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %true : bool = prim::Constant[value=1]()
  %flag : bool = prim::GetAttr[name="use_relu"](%self)
  %y : Tensor = prim::If(%flag)
    block0():
      %relu : Tensor = aten::relu(%x)
      -> (%relu)
    block1():
      -> (%x)
  %r : Tensor = prim::Loop(%three, %true, %y)
    block0(%i : int, %acc : Tensor):
      %product : Tensor = aten::mul(%acc, %x)
      %next : Tensor = aten::add(%product, %i, %one)
      -> (%true, %next)
  return (%r)
"""


@pytest.mark.parametrize("backend", BACKENDS)
def test_if_on_an_attribute_and_a_counted_loop(backend):
    module = ModuleValue("__torch__.Static", [Slot("use_relu", types.BoolType.get(), True)],
                         {"forward": parse_ir(STATIC_CONTROL_FLOW.strip(), class_types={})})
    x = torch.randn(2, 3)
    expected = torch.relu(x)
    for i in range(3):
        expected = expected * x + i
    assert_close(run_on_iree(module, (x,), backend), expected)


@pytest.mark.parametrize("backend", ["torch", "linalg-on-tensors"])
def test_dynamic_batch_size_from_an_annotation(backend):
    """(StableHLO lowers it too, but IREE 3.13 rejects its stablehlo.dynamic_broadcast_in_dim.)"""
    torch.manual_seed(0)
    eager = torch.nn.Sequential(torch.nn.Linear(4, 8), torch.nn.ReLU(), torch.nn.Linear(8, 3))
    lowered = tsjit.mlir.compile(mlp_module(eager), [([-1, 4], torch.float32, True)], output_type=backend)
    argument = {"torch": "!torch.vtensor<[?,4],f32>", "linalg-on-tensors": "tensor<?x4xf32>"}[backend]
    assert f"@forward(%arg0: {argument})" in str(lowered)
    run = tsjit.mlir.iree.compile(lowered)
    for batch in (1, 6):
        x = torch.randn(batch, 4)
        assert_close(run(x), eager(x).detach())


def weights_per_dimension(x: torch.Tensor, w: torch.Tensor):
    for _ in range(x.dim() - 2):
        w = w.unsqueeze(-1)
    return x * w


def test_a_loop_that_changes_a_tensors_rank_on_linalg():
    """A loop over sizes that unsqueezes what it carries (F.interpolate's weights): left a loop on linalg, its
    tensor entered with rank 1 and left with rank 3, which no loop carries (the imported module did not verify);
    peeled to its end, it runs."""
    x, w = torch.randn(2, 3, 4, 4), torch.randn(3)
    got = run_on_iree(tsjit.script(weights_per_dimension), [x, w], "linalg-on-tensors")
    assert_close(got, weights_per_dimension(x, w))
