"""The graph fuser on IR text: which nodes end up in which prim::FusionGroup, and which stay out (other
dtypes, unrefined types, sizes known not to broadcast, writes in between, readers in between, inputs requiring
grad); chunks unpacked at once become prim::ConstantChunk, and the seed's LSTM cell is one group."""

from __future__ import annotations

import re
import textwrap

import torch
from pass_case import check_pass
from shared_programs import lstm_cell_s as lstm_cell

from tsjit.ir.symbols import prim
from tsjit.passes.graph_fuser import MAX_GROUP_SIZE, fuse_graph
from tsjit.runtime.run import run_graph

F = "Float(*, device=cpu)"
F2 = "Float(*, *, device=cpu)"


def fuse(text: str, changed: bool | None = None, **kwargs):
    """check_pass of fuse_graph on `text` (`F` spelling a refined float CPU vector type); the fused graph."""
    return check_pass(fuse_graph, re.sub(r"\bF\b", F, textwrap.dedent(text)).strip() + "\n", changed=changed, **kwargs)


def kinds(block) -> list[str]:
    return [str(node.kind) for node in block.nodes() if node.kind is not prim.Constant]


def groups(graph) -> list[list[str]]:
    """The kinds in each FusionGroup's subgraph, in program order (nested blocks included)."""
    return [kinds(n.g("Subgraph")) for n in graph.all_nodes() if n.kind is prim.FusionGroup]


def test_a_chain_becomes_one_group_with_its_constants_copied_in() -> None:
    graph = fuse("""
        graph(%x : F, %y : F, %a : float):
          %one : int = prim::Constant[value=1]()
          %s : F = aten::sin(%x)
          %m : F = aten::mul(%s, %y)
          %t : F = aten::add(%m, %y, %one)
          %r : F = aten::div(%t, %a)
          return (%r)""", changed=True)
    assert kinds(graph.block) == ["prim::FusionGroup"]
    assert groups(graph) == [["aten::sin", "aten::mul", "aten::add", "aten::div"]]
    (group,) = [n for n in graph.nodes() if n.kind is prim.FusionGroup]
    assert [v.debug_name for v in group.inputs] == ["x", "y", "a"]
    assert "with prim::FusionGroup_0 = graph(%x : Float(*, device=cpu)," in str(graph)
    subgraph_constants = [n for n in group.g("Subgraph").nodes() if n.kind is prim.Constant]
    assert len(subgraph_constants) == 1


def test_values_read_after_the_group_are_its_outputs() -> None:
    graph = fuse("""
        graph(%x : F):
          %a : F = aten::relu(%x)
          %b : F = aten::neg(%a)
          %c : F = aten::exp(%b)
          %n : int = aten::dim(%a)
          return (%c, %n)""")
    (group,) = [n for n in graph.nodes() if n.kind is prim.FusionGroup]
    assert [v.debug_name for v in group.outputs] == ["a", "c"]
    x = torch.randn(4)
    torch.testing.assert_close(run_graph(graph, x, optimize=False), (torch.exp(-torch.relu(x)), 1))


def test_only_refined_float_cpu_tensors_are_fused() -> None:
    for tensor_type in ("Tensor", "Long(*, device=cpu)", "Float(*)", "Half(*, device=cpu)"):
        fuse(f"""
            graph(%x : {tensor_type}):
              %a : {tensor_type} = aten::abs(%x)
              %b : {tensor_type} = aten::neg(%a)
              return (%b)""", changed=False)


def test_dtypes_do_not_mix_in_a_group() -> None:
    graph = fuse("""
        graph(%x : F, %d : Double(*, device=cpu)):
          %a : F = aten::sin(%x)
          %b : F = aten::cos(%a)
          %c : Double(*, device=cpu) = aten::sin(%d)
          %e : Double(*, device=cpu) = aten::mul(%c, %d)
          %f : Double(*, device=cpu) = aten::mul(%b, %e)
          return (%f)""")
    assert groups(graph) == [["aten::sin", "aten::cos"], ["aten::sin", "aten::mul"]]
    assert kinds(graph.block)[-1] == "aten::mul"  # Float times Double promotes: not fusible


def test_broadcasting_operands_are_fused_unless_their_sizes_differ() -> None:
    graph = fuse("""
        graph(%x : Float(*, *, device=cpu), %b : F, %s : Float(device=cpu)):
          %one : int = prim::Constant[value=1]()
          %a : Float(*, *, device=cpu) = aten::add(%x, %b, %one)
          %m : Float(*, *, device=cpu) = aten::mul(%a, %s)
          %r : Float(*, *, device=cpu) = aten::relu(%m)
          return (%r)""", changed=True)
    assert groups(graph) == [["aten::add", "aten::mul", "aten::relu"]]
    x, b, s = torch.randn(3, 4), torch.randn(4), torch.tensor(2.5)
    torch.testing.assert_close(run_graph(graph, x, b, s, optimize=False), torch.relu((x + b) * s))
    fuse("""
        graph(%x : Float(3, device=cpu), %y : Float(1, device=cpu)):
          %a : Float(3, device=cpu) = aten::mul(%x, %y)
          %r : Float(3, device=cpu) = aten::relu(%a)
          return (%r)""", changed=True)
    fuse("""
        graph(%x : Float(3, device=cpu), %y : Float(4, device=cpu)):
          %a : Float(3, device=cpu) = aten::mul(%x, %y)
          %r : Float(3, device=cpu) = aten::relu(%a)
          return (%r)""", changed=False)


def test_an_output_of_another_shape_than_the_first_stays_out() -> None:
    # %e is read after the group and has rank 1 where the group's result %r has rank 2: the kernel writes outputs
    # of one shape, so %e is computed outside
    graph = fuse("""
        graph(%x : Float(*, *, device=cpu), %b : F):
          %e : F = aten::exp(%b)
          %n : F = aten::neg(%e)
          %a : Float(*, *, device=cpu) = aten::mul(%x, %n)
          %r : Float(*, *, device=cpu) = aten::sin(%a)
          return (%r, %n)""")
    assert groups(graph) == [["aten::exp", "aten::neg"], ["aten::mul", "aten::sin"]]


LSTM_CELL = """
    graph(%x : F2, %hx : F2, %cx : F2, %w_ih : F2, %w_hh : F2, %b_ih : F, %b_hh : F):
      %one : int = prim::Constant[value=1]()
      %four : int = prim::Constant[value=4]()
      %9 : F2 = aten::t(%w_ih)
      %10 : F2 = aten::mm(%x, %9)
      %11 : F2 = aten::t(%w_hh)
      %12 : F2 = aten::mm(%hx, %11)
      %13 : F2 = aten::add(%10, %12, %one)
      %14 : F2 = aten::add(%13, %b_ih, %one)
      %gates : F2 = aten::add(%14, %b_hh, %one)
      %16 : Tensor[] = aten::chunk(%gates, %four, %one)
      %ingate.1 : F2, %forgetgate.1 : F2, %cellgate.1 : F2, %outgate.1 : F2 = prim::ListUnpack(%16)
      %ingate : F2 = aten::sigmoid(%ingate.1)
      %forgetgate : F2 = aten::sigmoid(%forgetgate.1)
      %cellgate : F2 = aten::tanh(%cellgate.1)
      %outgate : F2 = aten::sigmoid(%outgate.1)
      %25 : F2 = aten::mul(%forgetgate, %cx)
      %26 : F2 = aten::mul(%ingate, %cellgate)
      %cy : F2 = aten::add(%25, %26, %one)
      %28 : F2 = aten::tanh(%cy)
      %hy : F2 = aten::mul(%outgate, %28)
      %30 : (F2, F2) = prim::TupleConstruct(%hy, %cy)
      return (%30)"""


def test_the_lstm_cell_after_its_matmuls_is_one_group() -> None:
    generator = torch.Generator().manual_seed(0)
    args = [torch.randn(shape, generator=generator) for shape in ((3, 10), (3, 20), (3, 20), (80, 10), (80, 20),
                                                                  (80,), (80,))]
    graph = fuse(LSTM_CELL.replace("F2", F2), changed=True, inputs=[args])
    assert kinds(graph.block) == ["aten::t", "aten::mm", "aten::t", "aten::mm", "prim::FusionGroup",
                                  "prim::TupleConstruct"]
    assert groups(graph) == [["aten::add", "aten::add", "aten::add", "prim::ConstantChunk", "aten::sigmoid",
                              "aten::sigmoid", "aten::tanh", "aten::sigmoid", "aten::mul", "aten::mul", "aten::add",
                              "aten::tanh", "aten::mul"]]
    (group,) = [n for n in graph.nodes() if n.kind is prim.FusionGroup]
    assert [v.debug_name for v in group.inputs] == ["10", "12", "b_ih", "b_hh", "cx"]
    assert [v.debug_name for v in group.outputs] == ["cy", "hy"]
    text = str(graph)
    assert ("%ingate.1 : Float(*, *, device=cpu), %forgetgate.1 : Float(*, *, device=cpu), %cellgate.1 : "
            "Float(*, *, device=cpu), %outgate.1 : Float(*, *, device=cpu) = "
            "prim::ConstantChunk[chunks=4, dim=1](%gates)") in text
    assert "prim::Constant[value=4]" not in text  # the chunk count is an attribute now
    torch.testing.assert_close(run_graph(graph, *args, optimize=False), lstm_cell(*args))


def test_chunks_unpacked_at_once_become_constant_chunks() -> None:
    # only a chunk of a fusible tensor (%x, not %i) into a constant number (2, not %n) of pieces all unpacked
    graph = fuse("""
        graph(%x : F, %n : int, %i : Long(*, device=cpu)):
          %zero : int = prim::Constant[value=0]()
          %two : int = prim::Constant[value=2]()
          %l : Tensor[] = aten::chunk(%x, %two, %zero)
          %a : F, %b : F = prim::ListUnpack(%l)
          %m : Tensor[] = aten::chunk(%x, %n, %zero)
          %c : F, %d : F = prim::ListUnpack(%m)
          %k : Tensor[] = aten::chunk(%i, %two, %zero)
          %e : Long(*, device=cpu), %f : Long(*, device=cpu) = prim::ListUnpack(%k)
          return (%a, %b, %c, %d, %e, %f)""", changed=True)
    assert kinds(graph.block) == ["prim::ConstantChunk", "aten::chunk", "prim::ListUnpack",
                                              "aten::chunk", "prim::ListUnpack"]
    x, i = torch.randn(6), torch.arange(4)
    torch.testing.assert_close(run_graph(graph, x, 2, i, optimize=False), (*x.chunk(2), *x.chunk(2), *i.chunk(2)))


def test_a_chunk_whose_pieces_are_read_elsewhere_stays_out() -> None:
    graph = fuse("""
        graph(%x : Float(*, *, device=cpu)):
          %e : Float(*, *, device=cpu) = aten::exp(%x)
          %a : Float(*, *, device=cpu), %b : Float(*, *, device=cpu) = prim::ConstantChunk[chunks=2, dim=0](%e)
          %s : Float(*, *, device=cpu) = aten::sin(%a)
          %c : Float(*, *, device=cpu) = aten::cos(%s)
          return (%c, %b)""")
    assert groups(graph) == [["aten::sin", "aten::cos"]]
    assert kinds(graph.block)[:2] == ["aten::exp", "prim::ConstantChunk"]


def test_a_single_operator_is_left_alone() -> None:
    graph = fuse("""
        graph(%x : F):
          %none : NoneType = prim::Constant()
          %a : F = aten::sigmoid(%x)
          %s : Float(device=cpu) = aten::sum(%a, %none)
          %b : Float(device=cpu) = aten::tanh(%s)
          return (%b)""", changed=False)
    assert kinds(graph.block) == ["aten::sigmoid", "aten::sum", "aten::tanh"]


def test_producers_move_down_past_unrelated_nodes() -> None:
    graph = fuse("""
        graph(%x : F, %p : Float(*, *, device=cpu)):
          %a : F = aten::sin(%x)
          %m : Float(*, *, device=cpu) = aten::mm(%p, %p)
          %b : F = aten::cos(%a)
          return (%b, %m)""")
    assert kinds(graph.block) == ["aten::mm", "prim::FusionGroup"]
    assert groups(graph) == [["aten::sin", "aten::cos"]]


def test_a_producer_read_by_a_node_in_between_stays_out() -> None:
    graph = fuse("""
        graph(%x : F):
          %none : NoneType = prim::Constant()
          %a : F = aten::sin(%x)
          %s : Float(device=cpu) = aten::sum(%a, %none)
          %b : F = aten::cos(%a)
          %c : F = aten::exp(%b)
          return (%c, %s)""")
    assert kinds(graph.block) == ["aten::sin", "aten::sum", "prim::FusionGroup"]
    assert groups(graph) == [["aten::cos", "aten::exp"]]


def test_a_producer_is_not_moved_past_a_write_to_its_input() -> None:
    graph = fuse("""
        graph(%x : F, %y : F):
          %one : int = prim::Constant[value=1]()
          %a : F = aten::sin(%x)
          %w : F = aten::add_(%x, %y, %one)
          %b : F = aten::cos(%a)
          %c : F = aten::exp(%b)
          return (%c)""", run=False)  # run once below: add_ writes the input the runs before and after would share
    assert kinds(graph.block) == ["aten::sin", "aten::add_", "prim::FusionGroup"]
    x, y = torch.randn(3), torch.randn(3)
    expected = torch.exp(torch.cos(torch.sin(x)))
    torch.testing.assert_close(run_graph(graph, x, y, optimize=False), expected)


def test_in_place_operators_are_never_fused() -> None:
    graph = fuse("""
        graph(%x : F):
          %a : F = aten::sin(%x)
          %b : F = aten::relu_(%a)
          %c : F = aten::cos(%b)
          return (%c)""")
    assert "aten::relu_" in kinds(graph.block) and not groups(graph)


def test_an_input_requiring_grad_turns_fusion_off() -> None:
    fuse("""
        graph(%x : Float(*, requires_grad=1, device=cpu)):
          %a : Float(*, device=cpu) = aten::sin(%x)
          %b : Float(*, device=cpu) = aten::cos(%a)
          return (%b)""", changed=False)


def test_groups_form_inside_nested_blocks() -> None:
    graph = fuse("""
        graph(%x : F, %flag : bool):
          %r : F = prim::If(%flag)
            block0():
              %a : F = aten::sin(%x)
              %b : F = aten::cos(%a)
              -> (%b)
            block1():
              -> (%x)
          return (%r)""")
    assert groups(graph) == [["aten::sin", "aten::cos"]]
    (if_node,) = graph.nodes()
    assert kinds(if_node.blocks[0]) == ["prim::FusionGroup"]


def test_independent_chains_become_separate_groups() -> None:
    graph = fuse("""
        graph(%x : F, %y : F):
          %a : F = aten::sin(%x)
          %b : F = aten::sin(%y)
          %c : F = aten::cos(%a)
          %d : F = aten::cos(%b)
          return (%c, %d)""")
    assert groups(graph) == [["aten::sin", "aten::cos"], ["aten::sin", "aten::cos"]]


def test_adjacent_groups_sharing_a_value_merge_into_one() -> None:
    """%a is read by both chains: the second chain's group cannot pull its producer past the first chain's
    reader, so the walk leaves two groups side by side, which then merge (one kernel, as a backward graph's
    gradients of chunk pieces)."""
    graph = fuse("""
        graph(%x : F, %y : F):
          %a : F = aten::sigmoid(%x)
          %b : F = aten::mul(%a, %y)
          %c : F = aten::tanh(%b)
          %d : F = aten::mul(%a, %x)
          %e : F = aten::neg(%d)
          return (%c, %e)""", changed=True)
    assert groups(graph) == [["aten::sigmoid", "aten::mul", "aten::tanh", "aten::mul", "aten::neg"]]
    (group,) = [n for n in graph.nodes() if n.kind is prim.FusionGroup]
    assert [v.debug_name for v in group.outputs] == ["c", "e"]
    x, y = torch.randn(5), torch.randn(5)
    a = torch.sigmoid(x)
    torch.testing.assert_close(run_graph(graph, x, y), (torch.tanh(a * y), -(a * x)))


def test_adjacent_groups_of_other_shapes_stay_apart() -> None:
    """A kernel writes outputs of one shape: a group reading the other's result stays apart when their outputs
    differ in size (here one broadcasts the other's)."""
    graph = fuse("""
        graph(%x : Float(1, device=cpu), %y : Float(4, device=cpu)):
          %a : Float(1, device=cpu) = aten::sigmoid(%x)
          %b : Float(1, device=cpu) = aten::tanh(%a)
          %c : Float(4, device=cpu) = aten::mul(%y, %a)
          %d : Float(4, device=cpu) = aten::neg(%c)
          return (%b, %d)""")
    assert groups(graph) == [["aten::sigmoid", "aten::tanh"], ["aten::mul", "aten::neg"]]


def test_in_the_pass_test_shape():
    check_pass(fuse_graph, f"""
graph(%x : {F}, %y : {F}):
  %a : {F} = aten::mul(%x, %y)
  %b : {F} = aten::sigmoid(%a)
  %c : {F} = aten::tanh(%b)
  return (%c)""", present=["prim::FusionGroup_0", "with prim::FusionGroup_0", "aten::mul", "aten::sigmoid",
                            "aten::tanh"])


def test_a_long_chain_is_cut_into_groups_of_at_most_the_bound() -> None:
    """A kernel's size is bounded (MAX_GROUP_SIZE): a chain of 600 operators becomes three groups."""
    lines = [f"  %v{k + 1} : F = aten::sin(%v{k})" for k in range(600)]
    graph = fuse("graph(%v0 : F):\n" + "\n".join(lines) + "\n  return (%v600)", changed=True)
    sizes = [len(group) for group in groups(graph)]
    assert sum(sizes) == 600 and max(sizes) == MAX_GROUP_SIZE and len(sizes) == 3
