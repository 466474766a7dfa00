"""Dead code elimination's use of AliasDb: writes through containers and views (the frontend tests cover the
rest of DCE against torch.jit)."""

from __future__ import annotations

import pytest

from tsjit.ir.graph import Graph
from tsjit.ir.parser import parse_ir
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.pass_runner import run_pass

CASES = {
    # kept: the caller sees f through the returned list (torch.jit drops the add_ here and returns -x)
    "stored_then_written_list_returned": ("""
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %f : Tensor = aten::neg(%x)
  %l : Tensor[] = prim::ListConstruct(%f)
  %w : Tensor = aten::add_(%f, %1, %1)
  return (%l)""", ["prim::Constant", "aten::neg", "prim::ListConstruct", "aten::add_"]),
    # same for a tuple
    "tuple_of_fresh_written": ("""
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %f : Tensor = aten::neg(%x)
  %t : (Tensor, Tensor) = prim::TupleConstruct(%f, %x)
  %w : Tensor = aten::add_(%f, %1, %1)
  return (%t)""", ["prim::Constant", "aten::neg", "prim::TupleConstruct", "aten::add_"]),
    # kept, as torch.jit keeps it: what was stored away counts as observable
    "stored_then_written_list_dead": ("""
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %f : Tensor = aten::neg(%x)
  %l : Tensor[] = prim::ListConstruct(%f)
  %w : Tensor = aten::add_(%f, %1, %1)
  return (%x)""", ["prim::Constant", "aten::neg", "aten::add_"]),
    "element_read_back_and_written": ("""
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %f : Tensor = aten::neg(%x)
  %l : Tensor[] = prim::ListConstruct(%f)
  %g : Tensor = aten::__getitem__(%l, %0)
  %w : Tensor = aten::add_(%g, %1, %1)
  return (%f)""", ["prim::Constant", "prim::Constant", "aten::neg", "prim::ListConstruct", "aten::__getitem__",
                   "aten::add_"]),
    "write_to_a_fresh_tensor_returned_through_a_view": ("""
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %f : Tensor = aten::neg(%x)
  %v : Tensor = aten::select(%f, %0, %0)
  %w : Tensor = aten::add_(%f, %1, %1)
  return (%v)""", ["prim::Constant", "prim::Constant", "aten::neg", "aten::select", "aten::add_"]),
    "write_to_a_dead_fresh_tensor": ("""
graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %s : int[] = prim::Constant[value=[-1]]()
  %f : Tensor = aten::neg(%x)
  %v : Tensor = aten::view(%f, %s)
  %w : Tensor = aten::add_(%v, %1, %1)
  return (%x)""", []),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_writes_are_live_when_someone_can_see_them(name):
    text, kinds = CASES[name]
    graph = parse_ir(text)
    run_pass(eliminate_dead_code, graph)
    assert [str(n.kind) for n in graph.nodes()] == kinds


def test_unused_fork_is_dead_but_its_wait_is_not():
    graph = parse_ir("""graph(%x : Tensor):
  %f : Future[Tensor] = prim::fork_0(%x)
  %g : Future[Tensor] = prim::fork_1(%x)
  %r : Tensor = aten::wait(%g)
  return (%x)
with prim::fork_0 = graph(%a : Tensor):
  %1 : int = prim::Constant[value=1]()
  %b : Tensor = aten::add_(%a, %1, %1)
  return (%b)
with prim::fork_1 = graph(%a : Tensor):
  return (%a)
""")
    assert eliminate_dead_code(graph)
    assert [str(n.kind) for n in graph.nodes()] == ["prim::fork", "aten::wait"]
    assert isinstance(next(iter(graph.nodes())).g("Subgraph"), Graph)
