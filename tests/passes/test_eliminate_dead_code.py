"""eliminate_dead_code: against torch.jit's DCE on small programs, its use of AliasDb (writes through containers
and views), and the assertions MLIR preparation keeps."""

from __future__ import annotations

import pytest
import torch
from pass_case import check_pass

from tsjit.ir.alias_analysis import AliasDb
from tsjit.ir.graph import Graph
from tsjit.ir.parser import parse_ir
from tsjit.passes import dead_code_elimination
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


DEAD_CODE = {
    "fresh_list_append": """graph(%x : Tensor):
  %l : Tensor[] = prim::ListConstruct()
  %a : Tensor[] = aten::append(%l, %x)
  return (%x)""",
    "returned_list_append": """graph(%x : Tensor):
  %l : Tensor[] = prim::ListConstruct()
  %a : Tensor[] = aten::append(%l, %x)
  return (%l)""",
    "input_list_append": """graph(%x : Tensor, %l : Tensor[]):
  %a : Tensor[] = aten::append(%l, %x)
  return (%x)""",
    "write_to_a_view_of_an_input": """graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %v : Tensor = aten::select(%x, %0, %0)
  %w : Tensor = aten::add_(%v, %v, %1)
  return (%0)""",
    "write_to_a_fresh_tensor": """graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %y : Tensor = aten::add(%x, %x, %1)
  %n : NoneType = prim::Constant()
  %w : Tensor = aten::clone(%x, %n)
  %v : Tensor = aten::mul_(%w, %2)
  return (%x)""",
    "print_and_raise": """graph(%x : Tensor, %c : bool):
   = prim::Print(%x)
  %s : str = prim::Constant[value="boom"]()
   = prim::If(%c)
    block0():
       = prim::RaiseException(%s, %s)
      -> ()
    block1():
      -> ()
  return (%x)""",
    "dead_if_output": """graph(%x : Tensor, %c : bool):
  %1 : int = prim::Constant[value=1]()
  %a : Tensor, %b : Tensor = prim::If(%c)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%x, %y)
    block1():
      %z : Tensor = aten::add(%x, %x, %1)
      -> (%z, %x)
  return (%a)""",
    "dead_loop_carried_value": """graph(%x : Tensor, %n : int):
  %t : bool = prim::Constant[value=1]()
  %1 : int = prim::Constant[value=1]()
  %a : Tensor, %b : int = prim::Loop(%n, %t, %x, %n)
    block0(%i : int, %a.1 : Tensor, %b.1 : int):
      %a.2 : Tensor = aten::add(%a.1, %a.1, %1)
      %b.2 : int = aten::add(%b.1, %1)
      -> (%t, %a.2, %b.2)
  return (%a)""",
    "dead_if": """graph(%x : Tensor, %c : bool):
  %r : Tensor = prim::If(%c)
    block0():
      %y : Tensor = aten::neg(%x)
      -> (%y)
    block1():
      -> (%x)
  return (%x)""",
}


@pytest.mark.parametrize("name", DEAD_CODE)
def test_dead_code_elimination_agrees_with_torch(name):
    check_pass(eliminate_dead_code, DEAD_CODE[name], changed=None, oracle="_jit_pass_dce_graph")


ASSERTION = """
graph(%x : Tensor, %n : int):
  %zero : int = prim::Constant[value=0]()
  %msg : str = prim::Constant[value="n > 0"]()
  %k : str = prim::Constant[value="a"]()
  %d : Dict(str, Tensor) = prim::DictConstruct(%k, %x)
  %ok : bool = aten::gt(%n, %zero)
  %i : int = aten::Int(%ok)
   = aten::_assert_scalar(%i, %msg)
  %y : Tensor = aten::neg(%x)
  return (%y)"""


def test_assertions_are_dead_unless_kept():
    check_pass(eliminate_dead_code, ASSERTION, present=["aten::neg"], absent=["aten::_assert_scalar", "DictConstruct"],
               inputs=[(torch.randn(2), 1)])


def test_keep_assertions_keeps_them_and_what_they_read():
    """MLIR preparation's flag: unused containers, constants and pure ops go, the checks it inserted stay."""
    check_pass(eliminate_dead_code, ASSERTION, keep_assertions=True, inputs=[(torch.randn(2), 1), (torch.randn(2), 0)],
               present=["aten::gt", "aten::Int", "aten::_assert_scalar", "aten::neg"], absent=["DictConstruct"])


def test_without_writers_liveness_is_uses_and_side_effects():
    graph = parse_ir("""graph(%x : Tensor):
  %1 : int = prim::Constant[value=1]()
  %dead : Tensor = aten::neg(%x)
  %also_dead : Tensor = aten::add(%dead, %x, %1)
  %s : str = prim::Constant[value="hi"]()
  = prim::Print(%s)
  %y : Tensor = aten::relu(%x)
  return (%y)""")
    assert eliminate_dead_code(graph)
    graph.lint()
    assert [str(n.kind) for n in graph.nodes()] == ["prim::Constant", "prim::Print", "aten::relu"]
    assert not eliminate_dead_code(graph)


def test_a_write_nested_in_a_block_still_counts():
    graph = parse_ir("""graph(%x : Tensor, %c : bool):
  %1 : int = prim::Constant[value=1]()
  %f : Tensor = aten::neg(%x)
  %r : Tensor = prim::If(%c)
    block0():
      %w : Tensor = aten::add_(%x, %1, %1)
      -> (%f)
    block1():
      -> (%f)
  return (%f)""")
    eliminate_dead_code(graph)
    graph.lint()
    assert "aten::add_" in str(graph)  # writes the caller's %x


def test_nested_writes_are_looked_up_once_per_node(monkeypatch):
    """Liveness asks what each node writes, nested blocks included: each node's own writes are looked up once, not
    once per enclosing If (which made a deep nest quadratic)."""
    depth = 30
    lines = ["graph(%x : Tensor, %c : bool):", "  %1 : int = prim::Constant[value=1]()",
             "  %l : Tensor[] = prim::ListConstruct()"]
    for level in range(depth):
        indent = "  " + "    " * level
        lines += [f"{indent}%r{level} : Tensor = prim::If(%c)", f"{indent}  block0():",
                  f"{indent}    %a{level} : Tensor[] = aten::append(%l, %x)"]
    for level in reversed(range(depth)):
        indent = "  " + "    " * level
        inner = f"%r{level + 1}" if level + 1 < depth else "%x"
        lines += [f"{indent}    -> ({inner})", f"{indent}  block1():", f"{indent}    -> (%x)"]
    lines += ["  return (%r0, %l)"]
    graph = parse_ir("\n".join(lines))
    looked_up = []
    real = AliasDb.direct_writes
    monkeypatch.setattr(AliasDb, "direct_writes", lambda db, node: looked_up.append(node) or real(db, node))
    eliminate_dead_code(graph)
    graph.lint()
    assert str(graph).count("aten::append") == depth  # the list is returned: every append stays
    assert len(looked_up) == len(set(looked_up))


def _with_alias_db_only(graph: Graph) -> bool:
    """eliminate_dead_code's marking with an AliasDb from the start, as it was before the first marking without."""
    eliminator = dead_code_elimination._DeadCodeEliminator(graph, False, AliasDb(graph))
    eliminator.mark_block(graph.block)
    eliminator.sweep(graph.block)
    return eliminator.changed


@pytest.mark.parametrize("text", [case[0] for case in CASES.values()] + list(DEAD_CODE.values()))
def test_marking_without_an_alias_db_first_gives_the_same_graph(text):
    quick, full = parse_ir(text), parse_ir(text)
    assert eliminate_dead_code(quick) == _with_alias_db_only(full)
    assert str(quick) == str(full)


def test_an_alias_db_is_built_only_for_writes_nothing_else_decides(monkeypatch):
    """`aten::append` to a list read later is live whatever AliasDb says: no AliasDb is built. A list appended to
    and never read again needs one to find the append dead."""
    built = []
    real = AliasDb.__init__
    monkeypatch.setattr(AliasDb, "__init__", lambda db, *args, **kwargs: built.append(1) or real(db, *args, **kwargs))
    read_later = parse_ir("""graph(%x : Tensor):
  %l : Tensor[] = prim::ListConstruct()
  %a : Tensor[] = aten::append(%l, %x)
  %dead : Tensor = aten::neg(%x)
  %0 : int = prim::Constant[value=0]()
  %y : Tensor = aten::cat(%l, %0)
  return (%y)""")
    assert eliminate_dead_code(read_later) and not built
    assert "aten::append" in str(read_later) and "aten::neg" not in str(read_later)
    never_read = parse_ir("""graph(%x : Tensor):
  %l : Tensor[] = prim::ListConstruct()
  %a : Tensor[] = aten::append(%l, %x)
  return (%x)""")
    assert eliminate_dead_code(never_read) and len(built) == 1
    assert [str(n.kind) for n in never_read.nodes()] == []
