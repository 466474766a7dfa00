"""Symbolic autodiff end to end: scripted programs whose inputs require grad run through the executor's
DifferentiableGraphs, and their gradients are checked with torch.autograd.gradcheck (and gradgradcheck, where the
formulas' backward graphs are differentiable themselves) in float64.

Each program also states, in the spirit of the seed's check_ad ("Testing Autodiff"), which node kinds must end up
inside a prim::DifferentiableGraph of the executor's plan (`nonfusible`: in the DG's forward graph f, outside any
FusionGroup) and which inside f's prim::FusionGroups (`fusible`): a formula that stopped matching its schema would
leave its node outside, and autograd would still get the gradient right; this is what catches it.
"""

from __future__ import annotations

import types
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
import torch
import torch.nn.functional as F
from shared_programs import lstm_cell_s as lstm_cell

import tsjit
import tsjit.runtime.fusion as fusion
from tsjit.ir.graph import Graph
from tsjit.ir.symbols import prim
from tsjit.runtime.autodiff import unpack_gradient
from tsjit.runtime.differentiable_graph_op import differentiable_graph_operation
from tsjit.runtime.graph_executor import set_autodiff_subgraph_inlining


@pytest.fixture(autouse=True)
def every_formula_runs():
    """DifferentiableGraphs that fuse nothing stay (the executor inlines them by default), so that each program
    runs its formulas (torch.jit's tests call `_debug_set_autodiff_subgraph_inlining(False)` for this)."""
    set_autodiff_subgraph_inlining(False)
    yield
    set_autodiff_subgraph_inlining(True)


def _double(*shape: int, positive: bool = False) -> torch.Tensor:
    value = torch.rand(*shape, dtype=torch.float64) + 0.5 if positive else torch.randn(*shape, dtype=torch.float64)
    return value.requires_grad_()


# ---- the programs --------------------------------------------------------------------------------------------
def mlp(x, w1, b1, w2, b2):
    return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)


def addmm_relu(b, x, w):
    return torch.relu(torch.addmm(b, x, w, beta=0.5, alpha=2.0))


def matmul_batched(a, b):
    return torch.tanh(torch.matmul(a, b))


def matmul_vector(a, v):
    return torch.matmul(a, v).exp()


def matmul_vector_matrix(v, a):
    return torch.matmul(v, a).sigmoid()


def bmm_tanh(a, b):
    return torch.bmm(a, b).tanh()


def add_broadcast_alpha(a, b):
    return torch.add(a, b, alpha=2.5).sigmoid()


def sub_alpha(a, b):
    return torch.sub(a, b, alpha=0.5) * a


def mul_broadcast(a, b):
    return (a * b).tanh()


def div_tensors(a, b):
    return (a / b).exp()


def scalar_arithmetic(a):
    return ((a + 2) * 3 - 1.5) / 4 + (1 - a)


def unary_chain(a):
    return torch.sqrt(torch.exp(a.neg())) + torch.log(a) + torch.rsqrt(a) + a.reciprocal()


def abs_sigmoid(a):
    return torch.abs(a) * torch.sigmoid(a)


def pow_scalar(a):
    return torch.pow(a, 3) + a.pow(0.5)


def pow_tensor(a, b):
    return torch.pow(a, b).tanh()


def clamp_both(a):
    return torch.clamp(a, -0.5, 0.5) * a


def clamp_min(a):
    return torch.clamp(a, min=0.1).exp()


def where_select(c, a, b):
    return torch.where(c, a * 2, b.tanh())


def leaky_relu_silu(a):
    return F.silu(F.leaky_relu(a, 0.2)) * a


def gelu_exact(a):
    return F.gelu(a * 2) + a


def gelu_tanh(a):
    return F.gelu(a.tanh(), approximate="tanh") * a


def sum_all(a):
    return (a * a).sum() + a.exp().sum()


def sum_dims(a):
    return a.tanh().sum(dim=[0, 2], keepdim=True) * a.sum(-1).sum(0)


def mean_all_and_dims(a):
    return a.sigmoid().mean() + a.exp().mean(dim=1).sum() + a.mean(-1, keepdim=True).tanh().sum()


def views(a):
    return a.view(-1).reshape(4, 6).tanh().t().contiguous().exp()


def transpose_permute(a):
    return a.transpose(0, 1).sigmoid().permute(2, 0, 1).tanh()


def squeeze_unsqueeze(a):
    return a.unsqueeze(0).tanh().squeeze(0).sigmoid().unsqueeze(-1).squeeze(-1)


def expands(a, b):
    return a.expand(3, 4).tanh() + b.expand_as(a.expand(3, 4)).exp()


def select_slice(a):
    return a.select(1, 2).tanh() + a[:, 1:4].sum(1).sigmoid()


def softmax_attention(q, k, v):
    scores = torch.matmul(q, k.transpose(-2, -1)) / 2.0
    return torch.matmul(torch.softmax(scores, -1), v)


def log_softmax_loss(a, w):
    return torch.log_softmax(a.mm(w), 1).mean()


def layer_norm_affine(a, w, b):
    return F.layer_norm(a.tanh(), [5], w, b).sigmoid()


def layer_norm_plain(a):
    return F.layer_norm(a * 2, [3, 5]).exp()


def dropout_p0(a):
    return F.dropout(a.tanh(), 0.0, True).exp()


def dropout_eval(a):
    return F.dropout(a.sigmoid(), 0.5, False) * a


def conv2d_bias(x, w, b):
    return F.conv2d(x, w, b, stride=1, padding=1).tanh()


def conv2d_strided(x, w):
    return F.conv2d(x, w, None, stride=2).relu() * 2


def max_pool(x):
    return F.max_pool2d(x.tanh(), 2).exp()


def avg_pool(x):
    return F.avg_pool2d(x.exp(), 2, stride=1, padding=1).sigmoid()


def adaptive_avg_pool(x):
    return F.adaptive_avg_pool2d(x.sigmoid(), [2, 2]).tanh()


def small_convnet(x, w, b, w2, b2):
    y = F.max_pool2d(torch.relu(F.conv2d(x, w, b, padding=1)), 2)
    return F.linear(y.reshape(y.size(0), -1), w2, b2).log_softmax(1)


def residual_block(x, w1, b1, w2, b2, g, beta):
    y = F.linear(F.gelu(F.linear(x, w1, b1)), w2, b2)
    return F.layer_norm(x + y, [4], g, beta)


def used_twice(a, b):
    t = a * b
    return t.tanh() + t.sigmoid() * a


def outputs_one_unused(a, b):
    return (a * b).tanh(), (a + b).sigmoid()


def chunk_three(a):
    x, y, z = a.chunk(3, 1)
    return x.sigmoid() * y.tanh() + z


def chunk_piece_unused(a):
    x, y = a.chunk(2, 0)
    return x.tanh() * 2


def optional_bias(x, w, b: torch.Tensor | None):
    return F.linear(x, w, b).tanh() * 2


@dataclass
class Program:
    """A scripted program, its inputs, and what the executor's plan must put where."""

    fn: Callable[..., Any]
    inputs: Callable[[], tuple]
    nonfusible: list[str] = field(default_factory=list)  # kinds in some DifferentiableGraph's forward graph
    fusible: list[str] = field(default_factory=list)  # kinds in a FusionGroup inside a DifferentiableGraph
    gradgrad: bool = True


def _images(*shape: int) -> torch.Tensor:
    return _double(*shape)


PROGRAMS = [
    Program(lstm_cell, lambda: (_double(2, 3), _double(2, 3), _double(2, 3), _double(12, 3), _double(12, 3),
                                _double(12), _double(12)),
            ["aten::mm", "aten::t", "prim::ConstantChunk"], ["aten::sigmoid", "aten::tanh", "aten::mul"]),
    Program(mlp, lambda: (_double(4, 6), _double(8, 6), _double(8), _double(3, 8), _double(3)),
            ["aten::linear", "aten::relu"]),
    Program(addmm_relu, lambda: (_double(5), _double(3, 4), _double(4, 5)), ["aten::addmm", "aten::relu"]),
    Program(matmul_batched, lambda: (_double(2, 3, 4), _double(4, 5)), ["aten::matmul", "aten::tanh"]),
    Program(matmul_vector, lambda: (_double(3, 4), _double(4)), ["aten::matmul", "aten::exp"]),
    Program(matmul_vector_matrix, lambda: (_double(4), _double(2, 4, 3)), ["aten::matmul", "aten::sigmoid"]),
    Program(bmm_tanh, lambda: (_double(2, 3, 4), _double(2, 4, 5)), ["aten::bmm", "aten::tanh"]),
    Program(add_broadcast_alpha, lambda: (_double(3, 4), _double(4)), [], ["aten::add", "aten::sigmoid"]),
    Program(sub_alpha, lambda: (_double(3, 4), _double(1, 4)), [], ["aten::sub", "aten::mul"]),
    Program(mul_broadcast, lambda: (_double(3, 1), _double(1, 4)), [], ["aten::mul", "aten::tanh"]),
    Program(div_tensors, lambda: (_double(3, 4), _double(3, 4, positive=True)), [], ["aten::div", "aten::exp"]),
    Program(scalar_arithmetic, lambda: (_double(3, 4),), [], ["aten::add", "aten::mul", "aten::div"]),
    Program(unary_chain, lambda: (_double(3, 4, positive=True),), [],
            ["aten::sqrt", "aten::exp", "aten::neg", "aten::log", "aten::rsqrt", "aten::reciprocal"]),
    Program(abs_sigmoid, lambda: (_double(3, 4, positive=True),), [], ["aten::abs", "aten::sigmoid"]),
    Program(pow_scalar, lambda: (_double(3, 4, positive=True),), [], ["aten::pow"]),
    Program(pow_tensor, lambda: (_double(3, 4, positive=True), _double(3, 4)), [], ["aten::pow", "aten::tanh"]),
    Program(clamp_both, lambda: (_double(3, 4),), [], ["aten::clamp", "aten::mul"]),
    Program(clamp_min, lambda: (_double(3, 4),), [], ["aten::clamp", "aten::exp"]),
    Program(where_select, lambda: (torch.rand(3, 4) > 0.5, _double(3, 4), _double(3, 4)), ["aten::where"]),
    Program(leaky_relu_silu, lambda: (_double(3, 4),), [], ["aten::leaky_relu", "aten::silu"]),
    Program(gelu_exact, lambda: (_double(3, 4),), ["aten::gelu"], gradgrad=True),
    Program(gelu_tanh, lambda: (_double(3, 4),), ["aten::gelu"]),
    Program(sum_all, lambda: (_double(3, 4),), ["aten::sum"]),
    Program(sum_dims, lambda: (_double(2, 3, 4),), ["aten::sum", "aten::tanh"]),
    Program(mean_all_and_dims, lambda: (_double(3, 4),), ["aten::mean"]),
    Program(views, lambda: (_double(2, 3, 4),), ["aten::view", "aten::reshape", "aten::t", "aten::contiguous"]),
    Program(transpose_permute, lambda: (_double(2, 3, 4),), ["aten::transpose", "aten::permute"]),
    Program(squeeze_unsqueeze, lambda: (_double(3, 4),), ["aten::unsqueeze", "aten::squeeze"]),
    Program(expands, lambda: (_double(1, 4), _double(4)), ["aten::expand", "aten::expand_as"]),
    Program(select_slice, lambda: (_double(3, 5),), ["aten::select", "aten::slice"]),
    Program(softmax_attention, lambda: (_double(2, 3, 4), _double(2, 5, 4), _double(2, 5, 4)),
            ["aten::matmul", "aten::softmax", "aten::transpose"]),
    Program(log_softmax_loss, lambda: (_double(3, 4), _double(4, 5)), ["aten::mm", "aten::log_softmax", "aten::mean"]),
    Program(layer_norm_affine, lambda: (_double(3, 5), _double(5), _double(5)), ["aten::native_layer_norm"],
            gradgrad=False),
    Program(layer_norm_plain, lambda: (_double(2, 3, 5),), ["aten::native_layer_norm"], gradgrad=False),
    Program(dropout_p0, lambda: (_double(3, 4),), ["aten::tanh"]),
    Program(dropout_eval, lambda: (_double(3, 4),), ["aten::sigmoid"]),
    Program(conv2d_bias, lambda: (_images(2, 3, 5, 5), _double(4, 3, 3, 3), _double(4)), ["aten::conv2d"]),
    Program(conv2d_strided, lambda: (_images(1, 2, 6, 6), _double(3, 2, 2, 2)), ["aten::conv2d", "aten::relu"]),
    Program(max_pool, lambda: (_images(1, 2, 4, 4),), ["aten::max_pool2d_with_indices"]),
    Program(avg_pool, lambda: (_images(1, 2, 4, 4),), ["aten::avg_pool2d"]),
    Program(adaptive_avg_pool, lambda: (_images(1, 2, 5, 5),), ["aten::adaptive_avg_pool2d"]),
    Program(small_convnet, lambda: (_images(2, 1, 6, 6), _double(2, 1, 3, 3), _double(2), _double(3, 18),
                                    _double(3)), ["aten::conv2d", "aten::max_pool2d_with_indices", "aten::linear"]),
    Program(residual_block, lambda: (_double(3, 4), _double(6, 4), _double(6), _double(4, 6), _double(4),
                                     _double(4), _double(4)), ["aten::linear", "aten::gelu", "aten::native_layer_norm"],
            gradgrad=False),
    Program(used_twice, lambda: (_double(3, 4), _double(3, 4)), [], ["aten::mul", "aten::tanh", "aten::sigmoid"]),
    Program(outputs_one_unused, lambda: (_double(3, 4), _double(3, 4)), [], ["aten::tanh", "aten::sigmoid"]),
    Program(chunk_three, lambda: (_double(2, 6),), ["prim::ConstantChunk"], ["aten::sigmoid", "aten::tanh"]),
    Program(chunk_piece_unused, lambda: (_double(4, 3),), ["prim::ConstantChunk"]),
    Program(optional_bias, lambda: (_double(3, 4), _double(5, 4), _double(5)), ["aten::linear"]),
]


def _id(program: Program) -> str:
    return program.fn.__name__


def linear_relu_linear(x, w1, b1, w2, b2):  # mlp's body, scripted apart: each function caches its plans
    return F.linear(torch.relu(F.linear(x, w1, b1)), w2, b2)


def test_groups_that_fuse_nothing_are_inlined_by_default() -> None:
    set_autodiff_subgraph_inlining(True)
    inputs = (_double(4, 6), _double(8, 6), _double(8), _double(3, 8), _double(3))
    assert not differentiable_graphs(tsjit.script(linear_relu_linear).graph_for(*inputs))
    cell_inputs = PROGRAMS[0].inputs()
    assert differentiable_graphs(tsjit.script(lstm_cell).graph_for(*cell_inputs))


def differentiable_graphs(graph: Graph) -> list:
    return [n for n in graph.all_nodes() if str(n.kind) == "prim::DifferentiableGraph"]


def kinds_in_forward_graphs(graph: Graph) -> tuple[set[str], set[str]]:
    """(kinds in the DGs' forward graphs outside fusion groups, kinds inside their fusion groups)."""
    outside, fused = set(), set()
    for node in differentiable_graphs(graph):
        for inner in unpack_gradient(node).f.all_nodes():
            if str(inner.kind) == "prim::FusionGroup":
                fused.update(str(n.kind) for n in inner.g("Subgraph").all_nodes())
            else:
                outside.add(str(inner.kind))
    return outside, fused


@pytest.mark.parametrize("program", PROGRAMS, ids=_id)
def test_gradients_match_autograd(program: Program) -> None:
    torch.manual_seed(0)
    scripted = tsjit.script(program.fn)
    inputs = program.inputs()
    torch.testing.assert_close(scripted(*inputs), program.fn(*inputs))
    assert torch.autograd.gradcheck(scripted, inputs, fast_mode=True)
    if program.gradgrad:
        assert torch.autograd.gradgradcheck(scripted, inputs, fast_mode=True)


@pytest.mark.parametrize("program", PROGRAMS, ids=_id)
def test_check_ad_nodes_in_differentiable_graphs(program: Program) -> None:
    torch.manual_seed(0)
    scripted = tsjit.script(program.fn)
    graph = scripted.graph_for(*program.inputs())
    assert differentiable_graphs(graph), f"no prim::DifferentiableGraph in:\n{graph}"
    outside, fused = kinds_in_forward_graphs(graph)
    missing = [k for k in program.nonfusible if k not in outside | fused]
    assert not missing, f"not in a DifferentiableGraph: {missing}\n{graph}"
    unfused = [k for k in program.fusible if k not in fused]
    assert not unfused, f"not in a FusionGroup of a DifferentiableGraph: {unfused}\n{graph}"


def test_profiled_sizes_fold_the_broadcast_sizes_and_other_sizes_take_the_general_split() -> None:
    """The profiling executor splits for the profiled sizes: f computes no sizes for df (the broadcast sizes are
    df's constants) and returns no temporary df does not read; inputs of other sizes (here: no broadcast any
    more, which the folded sizes would get wrong) run the subgraph split for any sizes, with eager's gradients."""
    scripted = tsjit.script(add_broadcast_alpha)
    (node,) = differentiable_graphs(scripted.graph_for(_double(3, 4), _double(1, 4)))
    gradient = unpack_gradient(node)
    assert not {"aten::size", "aten::_size_if_not_equal"} & {str(n.kind) for n in gradient.f.all_nodes()}
    assert set(range(gradient.f_real_outputs, len(gradient.f.outputs))) <= set(gradient.df_input_captured_outputs)
    assert node.has_attribute("Fallback")
    for inputs in ((_double(3, 4), _double(1, 4)), (_double(3, 4), _double(3, 4)), (_double(3, 4), _double(1, 4))):
        expected = torch.autograd.grad(add_broadcast_alpha(*inputs).sum(), inputs)
        torch.testing.assert_close(torch.autograd.grad(scripted(*inputs).sum(), inputs), expected)


def rnn_steps(xs, h, w):
    for t in range(xs.size(0)):
        h = torch.tanh(torch.mm(xs[t], w) + h) * torch.sigmoid(h)
    return h


def test_a_loop_over_a_sequence_splits_with_the_profiled_sizes() -> None:
    """`xs[t]` at the loop counter keeps the sizes of a step, so the forward graph of the loop body's
    DifferentiableGraph computes no sizes for df (the broadcast sizes of its adds are df's constants), as in the
    cell called once; the gradients are eager's. Eight steps: the loop unrolled by eight runs once, its
    remainder loop never (nothing profiled there)."""
    scripted = tsjit.script(rnn_steps)
    inputs = (_double(8, 2, 4), _double(2, 4), _double(4, 4))
    graph = scripted.graph_for(*inputs)
    forward_kinds = [{str(n.kind) for n in unpack_gradient(node).f.all_nodes()}
                     for node in differentiable_graphs(graph) if node.has_attribute("Fallback")]
    assert any("prim::FusionGroup" in kinds and not {"aten::size", "aten::_size_if_not_equal"} & kinds
               for kinds in forward_kinds), f"every forward graph computes sizes:\n{graph}"
    expected = torch.autograd.grad(rnn_steps(*inputs).sum(), inputs)
    torch.testing.assert_close(torch.autograd.grad(scripted(*inputs).sum(), inputs), expected)


def test_the_profiled_split_runs_only_on_the_profiled_device() -> None:
    """The guard of a split made for profiled CPU inputs compares devices too: inputs of the same sizes and dtype
    on another device (meta here) take the general split, not the one profiled on the CPU."""
    scripted = tsjit.script(add_broadcast_alpha)
    inputs = (_double(3, 4), _double(1, 4))
    (node,) = differentiable_graphs(scripted.graph_for(*inputs))
    operation = differentiable_graph_operation(node)
    assert operation.guard.general is None
    operation(*inputs)
    assert operation.guard.general is None
    meta = [torch.empty(v.shape, dtype=v.dtype, device="meta", requires_grad=True) for v in inputs]
    result = operation(*meta)
    assert operation.guard.general is not None and result.device.type == "meta" and result.shape == (3, 4)


def test_the_backward_of_a_loop_sums_the_weight_gradient_in_one_product() -> None:
    """check_ad for the backward graph: over eight unrolled steps, df's eight products of the weight's gradient
    (`mm(t(xs[t]), grad)`) and the adds summing them become one prim::MMTreeReduce (passes/batch_mm.py); the
    gradients are eager's."""
    scripted = tsjit.script(rnn_steps)
    inputs = (_double(8, 2, 4), _double(2, 4), _double(4, 4))
    scripted.graph_for(*inputs)
    result = scripted(*inputs)
    gradients = torch.autograd.grad(result.sum(), inputs)
    df_graphs = [plan.graph for plan in result.grad_fn.op.df.plans.values()]
    kinds = [str(n.kind) for graph in df_graphs for n in graph.all_nodes()]
    assert kinds.count("prim::MMTreeReduce") == 1 and "aten::mm" in kinds, "\n".join(map(str, df_graphs))
    torch.testing.assert_close(gradients, torch.autograd.grad(rnn_steps(*inputs).sum(), inputs))


def test_weight_gradients_come_in_the_weights_layout() -> None:
    """The LSTM cell reads its weights transposed: df computes their gradients as `mm(t(grad), x)`
    (passes/transpose_weight_gradients.py), contiguous like the weights, so that autograd keeps them; the
    gradients are eager's."""
    scripted = tsjit.script(lstm_cell)
    x, hx, cx = _double(1, 4), _double(1, 5), _double(1, 5)
    weights = (_double(20, 4), _double(20, 5), _double(20), _double(20))
    scripted.graph_for(x, hx, cx, *weights)
    hy, cy = scripted(x, hx, cx, *weights)
    gradients = torch.autograd.grad((hy + cy).sum(), (x, hx, cx, *weights))
    op = hy.grad_fn.op
    kinds = [str(n.kind) for plan in op.df.plans.values() for n in plan.graph.nodes()]
    assert kinds.count("aten::mm") >= 2 and "aten::t" in kinds
    assert all(g.is_contiguous() for g in gradients[3:5])
    hy, cy = lstm_cell(x, hx, cx, *weights)
    torch.testing.assert_close(gradients, torch.autograd.grad((hy + cy).sum(), (x, hx, cx, *weights)))


def test_the_gate_gradients_are_concatenated_by_their_kernel(monkeypatch) -> None:
    """check_ad for the LSTM cell's backward graph: the four gates' gradients, which one FusionGroup computes,
    are concatenated in that group (a prim::VarConcat its kernel writes in place: passes/concat_fusion.py), no
    aten::cat left in df; the gradients are eager's, from the kernel (no group interpreted)."""
    monkeypatch.setenv("TSJIT_SYNC_COMPILE", "1")
    fallbacks: list = []
    interpreted = fusion.interpreted
    monkeypatch.setattr(fusion, "interpreted", lambda subgraph: lambda *values: (fallbacks.append(values),
                                                                                    interpreted(subgraph)(*values))[1])
    scripted = tsjit.script(lstm_cell)
    x, hx, cx = torch.randn(1, 4), torch.randn(1, 5), torch.randn(1, 5)
    weights = tuple(torch.randn(shape, requires_grad=True) for shape in ((20, 4), (20, 5), (20,), (20,)))
    scripted.graph_for(x, hx, cx, *weights)
    hy, cy = scripted(x, hx, cx, *weights)
    gradients = torch.autograd.grad((hy + cy).sum(), weights)
    df_graphs = [plan.graph for plan in hy.grad_fn.op.df.plans.values()]
    kinds = [str(n.kind) for graph in df_graphs for n in graph.nodes()]
    concats = [str(n.kind) for graph in df_graphs for group in graph.nodes() if group.kind is prim.FusionGroup
               for n in group.g("Subgraph").nodes() if n.kind is prim.VarConcat]
    assert "aten::cat" not in kinds and concats, "\n".join(map(str, df_graphs))
    hy, cy = lstm_cell(x, hx, cx, *weights)
    torch.testing.assert_close(gradients, torch.autograd.grad((hy + cy).sum(), weights), rtol=1e-5, atol=1e-5)
    assert not fallbacks


def test_backward_plans_by_undefined_gradients_give_eagers_gradients() -> None:
    """Behind the size guard, df's plan is found by which output gradients autograd passes as None: a loss of
    hy alone, of cy alone and of both each get their own plan, and each gives eager's gradients. (A copy of the
    cell, whose executor no other test has specialized for other sizes.)"""
    scripted = tsjit.script(types.FunctionType(lstm_cell.__code__, lstm_cell.__globals__, "lstm_cell_copy"))
    x, hx, cx = _double(1, 4), _double(1, 5), _double(1, 5)
    inputs = (x, hx, cx, _double(20, 4), _double(20, 5), _double(20), _double(20))
    scripted.graph_for(*inputs)
    for pick in ((0,), (1,), (0, 1), (1,)):
        outputs = scripted(*inputs)
        gradients = torch.autograd.grad(sum(outputs[k].sum() for k in pick), inputs)
        expected = lstm_cell(*inputs)
        torch.testing.assert_close(gradients, torch.autograd.grad(sum(expected[k].sum() for k in pick), inputs))
    op = outputs[0].grad_fn.op
    assert op.fixed_types and len(op.backward_plans) == 3


def test_the_backward_node_runs_df_when_called_directly() -> None:
    """The backward node's `apply` is the generated backward itself (no BackwardCFunction.apply between the
    engine and it): called as a user calls `grad_fn.apply`, it gives the gradients of f's inputs, eager's."""
    scripted = tsjit.script(lstm_cell)
    inputs = (_double(1, 4), _double(1, 5), _double(1, 5), _double(20, 4), _double(20, 5), _double(20), _double(20))
    scripted.graph_for(*inputs)
    hy, cy = scripted(*inputs)
    grads = [None, None]
    grads[hy.output_nr] = torch.ones_like(hy)  # the node's outputs are f's, in f's order
    gradients = [g for g in hy.grad_fn.apply(*grads) if g is not None]
    assert type(hy.grad_fn).apply is not torch.autograd.function.BackwardCFunction.apply
    expected = torch.autograd.grad(lstm_cell(*inputs)[0].sum(), inputs)
    assert sorted(g.shape for g in gradients) == sorted(g.shape for g in expected)
    for gradient in gradients:
        assert any(g.shape == gradient.shape and torch.allclose(g, gradient) for g in expected)
