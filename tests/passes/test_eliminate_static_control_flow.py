"""eliminate_static_control_flow: constants folded, constant tuples and list literals forwarded, constant Ifs
inlined, loops that surely run peeled."""

from __future__ import annotations

import torch
from pass_case import check_pass

from tsjit.ir.parser import parse_ir
from tsjit.passes.static_control_flow import eliminate_static_control_flow, peel_constant_loops

NESTED = """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %one : int = prim::Constant[value=1]()
  %r : Tensor = prim::Loop(%three, %true, %x)
    block0(%i : int, %acc : Tensor):
      %inner : Tensor = prim::Loop(%i, %true, %acc)
        block0(%j : int, %acc.2 : Tensor):
          %next : Tensor = aten::add(%acc.2, %j, %one)
          -> (%true, %next)
      %big : bool = aten::gt(%i, %one)
      %out : Tensor = prim::If(%big)
        block0():
          %neg : Tensor = aten::neg(%inner)
          -> (%neg)
        block1():
          -> (%inner)
      -> (%true, %out)
  return (%r)
"""


def test_static_loops_and_ifs_are_unrolled():
    check_pass(eliminate_static_control_flow, NESTED, inputs=[(torch.randn(3),)],
               present=["aten::add", "aten::add", "aten::neg"], absent=["prim::Loop", "prim::If"])


def test_without_loop_unrolling_only_constant_ifs_go():
    check_pass(eliminate_static_control_flow, NESTED, unroll_loops=False, changed=False, present=["prim::Loop"])


def test_a_predicate_picks_the_loops_that_unroll():
    """Picking the loops of the graph's own block unrolls the outer loop, and then the copies of the inner loop
    that its peeled iterations bring to that block; picking only nested loops changes nothing (the inner loop's
    trip count is the outer loop's counter, known only once the outer loop is peeled)."""
    picked = check_pass(eliminate_static_control_flow, NESTED, inputs=[(torch.randn(3),)],
                        unroll_loops=lambda loop: loop.owning_block.owning_node is None, absent=["prim::Loop"])
    assert "aten::neg" in str(picked)
    check_pass(eliminate_static_control_flow, NESTED, unroll_loops=lambda loop: loop.owning_block.owning_node
               is not None, changed=False, present=["prim::Loop", "prim::Loop"])


def test_list_literals_fold_only_when_nothing_writes_them_where_the_graph_does_not_say():
    # (an insert at a position known only at run time)
    graph = check_pass(eliminate_static_control_flow, """
graph(%x : Tensor, %i : int):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %read : int[] = prim::ListConstruct(%one, %two)
  %written : int[] = prim::ListConstruct(%one)
  %n : int = aten::len(%read)
  %m : int = aten::len(%written)
   = aten::insert(%written, %i, %two)
  %r : (int, int) = prim::TupleConstruct(%n, %m)
  return (%r)""", inputs=[(torch.randn(1), 0), (torch.randn(1), 5)], present=["aten::len(%written)", "aten::insert"])
    assert str(graph).count("aten::len") == 1


def test_identity_tests_of_a_value_with_itself_and_tuple_elements_fold():
    x = torch.randn(1)
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor, %y : Tensor):
  %same : bool = aten::__isnot__(%x, %x)
  %other : bool = aten::__is__(%x, %y)
  %zero : int = prim::Constant[value=0]()
  %t : (bool, int) = prim::TupleConstruct(%same, %zero)
  %a : bool, %b : int = prim::TupleUnpack(%t)
  %c : int = aten::add(%b, %zero)
  %r : (bool, bool, int) = prim::TupleConstruct(%a, %other, %c)
  return (%r)""", inputs=[(x, x), (x, torch.randn(1))], present=["aten::__is__"],
               absent=["aten::__isnot__", "aten::add", "prim::TupleUnpack"])


def test_appends_to_a_list_literal_become_its_elements():
    """An unrolled list comprehension (nn.MultiheadAttention's `all([_check_arg_device(x) for x in args])`), and
    an unrolled loop reading the list it appends to: each read sees the elements appended before it."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %checks : bool[] = prim::ListConstruct()
  %1 : bool[] = aten::append(%checks, %true)
  %2 : bool[] = aten::append(%checks, %false)
  %all : bool = aten::all(%checks)
  %read : bool[] = prim::ListConstruct(%true)
  %n : int = aten::len(%read)
  %later : bool[] = aten::append(%read, %false)
  %m : int = aten::len(%read)
  %last : bool = aten::__getitem__(%read, %n)
  %r : (bool, int, int, bool) = prim::TupleConstruct(%all, %n, %m, %last)
  return (%r)""", inputs=[(torch.randn(1),)], absent=["aten::all", "aten::append", "aten::len", "aten::__getitem__"])


def test_appends_in_control_flow_or_to_an_escaping_list_stay():
    """A list appended to in a branch before an append in its block, or also held by a tuple (which could be
    unpacked and written) before its append, keeps its appends."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor, %c : bool):
  %true : bool = prim::Constant[value=1]()
  %branchy : bool[] = prim::ListConstruct()
   = prim::If(%c)
    block0():
      %2 : bool[] = aten::append(%branchy, %true)
      -> ()
    block1():
      -> ()
  %1 : bool[] = aten::append(%branchy, %true)
  %n : int = aten::len(%branchy)
  %held : bool[] = prim::ListConstruct()
  %t : (bool[], bool) = prim::TupleConstruct(%held, %true)
  %3 : bool[] = aten::append(%held, %true)
  %r : (int, (bool[], bool)) = prim::TupleConstruct(%n, %t)
  return (%r)""", changed=False)


def test_writes_at_constant_positions_give_the_literal_its_final_elements():
    """`l = [1, 2, 3]; l.append(4); l.insert(0, 5); v = l.pop(); l[1] = 10; del l[-1]; l.reverse()`, a copy
    of the result edited too, and the list returned: each read sees the elements written before it."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %minus : int = prim::Constant[value=-1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %four : int = prim::Constant[value=4]()
  %five : int = prim::Constant[value=5]()
  %ten : int = prim::Constant[value=10]()
  %l : int[] = prim::ListConstruct(%one, %two, %three)
  %1 : int[] = aten::append(%l, %four)
   = aten::insert(%l, %zero, %five)
  %first : int = aten::__getitem__(%l, %zero)
  %v : int = aten::pop(%l, %minus)
  %2 : int[] = aten::_set_item(%l, %one, %ten)
  %n : int = aten::len(%l)
   = aten::Delete(%l, %minus)
   = aten::reverse(%l)
  %copy : int[] = aten::list(%l)
   = aten::clear(%copy)
  %m : int = aten::len(%copy)
  %y : Tensor = aten::mul(%x, %v)
  %r : (Tensor, int, int, int, int[]) = prim::TupleConstruct(%y, %first, %n, %m, %l)
  return (%r)""", inputs=[(torch.randn(2),)], present=["prim::ListConstruct(%two, %ten, %five)"],
               absent=["aten::append", "aten::insert", "aten::pop", "aten::_set_item", "aten::Delete",
                       "aten::reverse", "aten::list", "aten::clear", "aten::len", "aten::__getitem__"])


def test_writes_that_would_fail_stay():
    # (popping from an empty list raises at run time, as it should)
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %minus : int = prim::Constant[value=-1]()
  %l : int[] = prim::ListConstruct()
  %v : int = aten::pop(%l, %minus)
  %y : Tensor = aten::mul(%x, %v)
  return (%y)""", changed=False, run=False, present=["aten::pop"])


def test_none_is_not_a_value_that_cannot_be_none():
    """An Optional[Tensor] argument given a tensor (nn.MultiheadAttention's `key_padding_mask is not None`)."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor, %y : Tensor?):
  %none : NoneType = prim::Constant()
  %given : bool = aten::__isnot__(%x, %none)
  %missing : bool = aten::__is__(%none, %x)
  %unknown : bool = aten::__is__(%y, %none)
  %r : (bool, bool, bool) = prim::TupleConstruct(%given, %missing, %unknown)
  return (%r)""", inputs=[(torch.randn(1), None)], present=["aten::__is__(%y, %none)"], absent=["aten::__isnot__"])


SIZE_PRODUCT = """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %sizes : int[] = prim::Constant[value=[2, 4, 3, 3]]()
  %tail : int[] = aten::slice(%sizes, %two, %none, %one)
  %copy : int[] = aten::list(%tail)
  %first : int = aten::__getitem__(%copy, %zero)
  %n : int = aten::len(%copy)
  %trips : int = aten::sub(%n, %one)
  %product : int = prim::Loop(%trips, %true, %first)
    block0(%i : int, %p : int):
      %j : int = aten::add(%i, %one)
      %size : int = aten::__getitem__(%copy, %j)
      %q : int = aten::mul(%p, %size)
      -> (%true, %q)
  %y : Tensor = aten::mul(%x, %product)
  return (%y)
"""


def test_lists_of_constants_and_loops_computing_only_scalars_fold_without_loop_unrolling():
    """F.group_norm's batch-size check, `list(x.size()[2:])` of known sizes multiplied in a loop, folds to 9."""
    check_pass(eliminate_static_control_flow, SIZE_PRODUCT, unroll_loops=False, inputs=[(torch.randn(3),)],
               present=["prim::Constant[value=9]", "aten::mul(%x"],
               absent=["prim::Loop", "aten::slice", "aten::list", "aten::len"])


def test_a_tensor_loop_that_never_runs_goes_without_loop_unrolling():
    """`for k in range(A.size(-1))` of a 0x0 matrix (the LU decomposition of linalg.det): its initial values."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %r : Tensor = prim::Loop(%zero, %true, %x)
    block0(%i : int, %acc : Tensor):
      %y : Tensor = aten::mul(%acc, %acc)
      -> (%true, %y)
  return (%r)""", unroll_loops=False, inputs=[(torch.randn(3),)], absent=["prim::Loop", "aten::mul"])


def test_a_list_something_writes_is_not_folded():
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %sizes : int[] = prim::Constant[value=[2, 4]]()
  %copy : int[] = aten::list(%sizes)
  %w : int[] = aten::append(%copy, %one)
  %n : int = aten::len(%copy)
  %y : Tensor = aten::mul(%x, %n)
  return (%y)""", changed=False, inputs=[(torch.randn(3),)], present=["aten::list", "aten::len"])


LOOP_OVER_A_LIST = """
graph(%a : Tensor, %b : Tensor):
  %true : bool = prim::Constant[value=1]()
  %xs : Tensor[] = prim::ListConstruct(%a, %b)
  %n : int = aten::len(%xs)
  %r : Tensor = prim::Loop(%n, %true, %a)
    block0(%i : int, %acc : Tensor):
      %x : Tensor = aten::__getitem__(%xs, %i)
      %next : Tensor = aten::mul(%acc, %x)
      -> (%true, %next)
  return (%r)
"""


def test_a_loop_over_a_list_literal_unrolls_into_its_elements():
    check_pass(eliminate_static_control_flow, LOOP_OVER_A_LIST, inputs=[(torch.randn(3), torch.randn(3))],
               present=["aten::mul(%a, %a)", "aten::mul"], absent=["prim::Loop", "aten::len", "aten::__getitem__"])


def test_a_list_that_is_written_keeps_its_length_and_elements_unknown():
    check_pass(eliminate_static_control_flow, """
graph(%a : Tensor):
  %xs : Tensor[] = prim::ListConstruct(%a)
  %n : int = aten::len(%xs)
   = aten::insert(%xs, %n, %a)
  return (%n)""", changed=False)


def test_a_list_held_by_a_literal_that_is_only_read_folds():
    # (`grid = [[1, 2], [3, 4]]; grid[1][0]`: the rows are only read through the grid)
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %row0 : int[] = prim::ListConstruct(%one, %three)
  %row1 : int[] = prim::ListConstruct(%three, %one)
  %grid : int[][] = prim::ListConstruct(%row0, %row1)
  %row : int[] = aten::__getitem__(%grid, %one)
  %v : int = aten::__getitem__(%row, %zero)
  %n : int = aten::len(%row1)
  %y : Tensor = aten::mul(%x, %v)
  %z : Tensor = aten::add(%y, %n, %one)
  return (%z)""", inputs=[(torch.randn(3),)], absent=["aten::__getitem__", "aten::len"])


def test_a_row_written_through_its_literal_has_the_length_the_write_gives_it():
    # `grid[0].append(5)` writes %row0: its length is 3, not the literal's 2
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %five : int = prim::Constant[value=5]()
  %row0 : int[] = prim::ListConstruct(%one, %one)
  %grid : int[][] = prim::ListConstruct(%row0)
  %row : int[] = aten::__getitem__(%grid, %zero)
  %w : int[] = aten::append(%row, %five)
  %n : int = aten::len(%row0)
  %y : Tensor = aten::mul(%x, %n)
  return (%y)""", inputs=[(torch.randn(3),)], present=["prim::Constant[value=3]"],
                absent=["aten::len", "prim::ListConstruct"])  # (the literals, unused once read, go)


def test_a_for_loop_has_all_its_iterations_peeled_at_once():
    """Five iterations peeled by one call (each call walks the whole graph: one iteration a call made unrolling
    quadratic); what is left of the loop goes once its trip count folds to 0."""
    graph = parse_ir("""
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %five : int = prim::Constant[value=5]()
  %two : int = prim::Constant[value=2]()
  %r : Tensor = prim::Loop(%five, %true, %x)
    block0(%i : int, %acc : Tensor):
      %next : Tensor = aten::mul(%acc, %two)
      -> (%true, %next)
  return (%r)""")
    assert peel_constant_loops(graph, {})
    assert str(graph).count("aten::mul") == 6
    check_pass(eliminate_static_control_flow, str(graph), inputs=[(torch.randn(3),)], absent=["prim::Loop"])


def test_isinstance_checks_the_types_decide_fold_and_their_ifs_go():
    """An inlined `var: Union[Tensor, float]` given a tensor (F.gaussian_nll_loss): `isinstance(var, float)` is
    False and `isinstance(var, Tensor)` True; on a value still typed the Union nothing is decided."""
    graph = check_pass(eliminate_static_control_flow, """
graph(%x : Float(3), %u : Union(Tensor, float)):
  %two : int = prim::Constant[value=2]()
  %is_float : bool = prim::isinstance[types=[float]](%x)
  %r : Tensor = prim::If(%is_float)
    block0():
      %f : float = prim::unchecked_cast(%x)
      %y : Tensor = aten::mul(%x, %f)
      -> (%y)
    block1():
      %z : Tensor = aten::mul(%x, %two)
      -> (%z)
  %is_tensor : bool = prim::isinstance[types=[Tensor]](%x)
  %open : bool = prim::isinstance[types=[float]](%u)
  %out : (Tensor, bool, bool) = prim::TupleConstruct(%r, %is_tensor, %open)
  return (%out)""", inputs=[(torch.randn(3), 1.5)], present=["prim::isinstance[types=[float]](%u)"],
                       absent=["prim::If", "prim::unchecked_cast", "prim::isinstance[types=[float]](%x)",
                               "prim::isinstance[types=[Tensor]]"])
    assert "bool = prim::Constant[value=1]()" in str(graph)


def test_reads_of_a_dict_literal_are_forwarded():
    """`d[k]`, `d.get`, `in`, `len`, `keys()`, `values()` and `items()` of a dict literal of constant keys (e2e's
    dict_literal: `for k in d.keys(): out = out + d[k]`); the literal goes once nothing reads it."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %a : str = prim::Constant[value="a"]()
  %b : str = prim::Constant[value="b"]()
  %z : str = prim::Constant[value="z"]()
  %y : Tensor = aten::neg(%x)
  %d : Dict(str, Tensor) = prim::DictConstruct(%a, %x, %b, %y, %a, %y)
  %first : Tensor = aten::__getitem__(%d, %a)
  %missing : Tensor = aten::get(%d, %z, %x)
  %has : bool = aten::__contains__(%d, %z)
  %n : int = aten::len(%d)
  %keys : str[] = aten::keys(%d)
  %count : int = aten::len(%keys)
  %out : Tensor = prim::Loop(%count, %true, %first)
    block0(%i : int, %acc : Tensor):
      %k : str = aten::__getitem__(%keys, %i)
      %v : Tensor = aten::__getitem__(%d, %k)
      %next : Tensor = aten::add(%acc, %v, %one)
      -> (%true, %next)
  %values : Tensor[] = aten::values(%d)
  %stacked : Tensor = aten::stack(%values, %one)
  %items : (str, Tensor)[] = aten::items(%d)
  %m : int = aten::len(%items)
  %r : (Tensor, Tensor, bool, int, Tensor, int) = prim::TupleConstruct(%out, %missing, %has, %n, %stacked, %m)
  return (%r)""", inputs=[(torch.randn(3),)],
               absent=["prim::DictConstruct", "aten::__getitem__", "aten::get", "aten::__contains__", "aten::keys",
                       "aten::items", "aten::len", "prim::Loop"])


def test_a_written_dict_and_a_missing_key_stay():
    """A dict written in place, and a read of a key the literal lacks (which raises at run time)."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %a : str = prim::Constant[value="a"]()
  %z : str = prim::Constant[value="z"]()
  %d : Dict(str, Tensor) = prim::DictConstruct(%a, %x)
   = aten::_set_item(%d, %z, %x)
  %n : int = aten::len(%d)
  %e : Dict(str, Tensor) = prim::DictConstruct(%a, %x)
  %missing : Tensor = aten::__getitem__(%e, %z)
  %r : (int, Tensor) = prim::TupleConstruct(%n, %missing)
  return (%r)""", changed=False, inputs=[(torch.randn(3),)])


def test_inserts_pops_and_item_writes_of_a_list_literal_fold():
    """e2e's list_ops: `l.append(4); l.insert(0, 5); v = l.pop(); l[1] = 10`, then a loop over the list and the
    list returned (after its last write, anything may hold it)."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %minus : int = prim::Constant[value=-1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %four : int = prim::Constant[value=4]()
  %five : int = prim::Constant[value=5]()
  %ten : int = prim::Constant[value=10]()
  %l : int[] = prim::ListConstruct(%one, %two, %three)
  %1 : int[] = aten::append(%l, %four)
   = aten::insert(%l, %zero, %five)
  %v : int = aten::pop(%l, %minus)
  %2 : int[] = aten::_set_item(%l, %one, %ten)
  %n : int = aten::len(%l)
  %s : int = prim::Loop(%n, %true, %zero)
    block0(%i : int, %acc : int):
      %e : int = aten::__getitem__(%l, %i)
      %next : int = aten::add(%acc, %e)
      -> (%true, %next)
  %y : Tensor = aten::mul(%x, %s)
  %r : (Tensor, int, int[]) = prim::TupleConstruct(%y, %v, %l)
  return (%r)""", inputs=[(torch.randn(3),)], present=["prim::Constant[value=20]", "aten::mul(%x"],
               absent=["aten::append", "aten::insert", "aten::pop", "aten::_set_item", "prim::Loop"])


def test_a_list_write_that_raises_or_follows_an_escape_stays():
    """A pop of an empty literal raises at run time; a list held by a tuple before its write could be read
    through the tuple."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %empty : int[] = prim::ListConstruct()
  %v : int = aten::pop(%empty, %zero)
  %held : int[] = prim::ListConstruct(%one)
  %t : (int[], int) = prim::TupleConstruct(%held, %one)
   = aten::insert(%held, %zero, %one)
  %r : (int, (int[], int)) = prim::TupleConstruct(%v, %t)
  return (%r)""", changed=False, inputs=[(torch.randn(1),)])


def test_the_rows_of_a_list_of_lists_fold_once_its_loop_is_unrolled():
    """e2e's list_of_lists: once `for row in grid` is unrolled, the unused outer literal goes, and with it the
    rows' last use that is not a read, so that the inner loops over them fold without unrolling tensor loops."""
    check_pass(eliminate_static_control_flow, """
graph(%x : Tensor):
  %true : bool = prim::Constant[value=1]()
  %zero : int = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %r0 : int[] = prim::ListConstruct(%one, %two)
  %r1 : int[] = prim::ListConstruct(%two, %two)
  %grid : int[][] = prim::ListConstruct(%r0, %r1)
  %rows : int = aten::len(%grid)
  %total : int = prim::Loop(%rows, %true, %zero)
    block0(%i : int, %acc : int):
      %row : int[] = aten::__getitem__(%grid, %i)
      %n : int = aten::len(%row)
      %sum : int = prim::Loop(%n, %true, %acc)
        block0(%j : int, %inner : int):
          %e : int = aten::__getitem__(%row, %j)
          %next : int = aten::add(%inner, %e)
          -> (%true, %next)
      -> (%true, %sum)
  %y : Tensor = aten::mul(%x, %total)
  return (%y)""", unroll_loops=False, inputs=[(torch.randn(3),)], present=["prim::Constant[value=7]"],
               absent=["prim::Loop", "prim::ListConstruct"])


def test_a_copy_of_a_list_literal_is_a_literal_its_writes_fold_into():
    """e2e's tensor_list_indexing: `parts = list(x.chunk(2)); parts[1] = parts[1] * 2` once the chunk is a
    literal."""
    check_pass(eliminate_static_control_flow, """
graph(%a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %minus : int = prim::Constant[value=-1]()
  %two : int = prim::Constant[value=2]()
  %chunks : Tensor[] = prim::ListConstruct(%a, %b)
  %parts : Tensor[] = aten::list(%chunks)
  %second : Tensor = aten::__getitem__(%parts, %one)
  %doubled : Tensor = aten::mul(%second, %two)
  %w : Tensor[] = aten::_set_item(%parts, %one, %doubled)
  %last : Tensor = aten::__getitem__(%parts, %minus)
  return (%last)""", inputs=[(torch.randn(2), torch.randn(2))],
               absent=["aten::list", "aten::_set_item", "aten::__getitem__"])
