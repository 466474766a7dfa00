"""List builtins: `len`, indexing, `append`, `pop`, slicing, `sort`, `min`/`max`, `sum`, list equality, ...

TorchScript lists are Python lists here: mutable and shared by reference, so `append` on a list another
value also holds is seen through both. Element comparisons follow TorchScript (C++ `==`, no identity
shortcut, so a NaN never equals itself); a tensor element compares with `bool(a.eq(b))`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch

from tsjit.ops.builtins.common import fail, int64, list_index, slice_indices
from tsjit.ops.builtins.printing import ivalue_str

Equal = Callable[[Any, Any], bool]


def _scalar_equal(a: Any, b: Any) -> bool:
    return a == b


def _tensor_equal(a: torch.Tensor, b: torch.Tensor) -> bool:
    return bool(a.eq(b))


def _element_equal(element_type: str) -> Equal:
    return _tensor_equal if element_type == "Tensor" else _scalar_equal


# ------------------------------------------------------------------------------------------ generic t[] ops

def length(values: list) -> int:
    return len(values)


def get_item(values: list, index: int) -> Any:
    """`l[i]`: negative indices count from the end; out of range is TorchScript's error. (Python's own
    indexing has the same rules, so the fast path is a plain subscript.)"""
    try:
        return values[index]
    except IndexError:
        fail("list index out of range")


def set_item(values: list, index: int, element: Any) -> list:
    """`l[i] = x` (aten::_set_item.t); returns the list, as the schema says."""
    try:
        values[index] = element
    except IndexError:
        fail("list index out of range")
    return values


def append(values: list, element: Any) -> list:
    values.append(element)
    return values


def insert(values: list, index: int, element: Any) -> None:
    """Python's insert: out-of-range indices clamp to the ends."""
    values.insert(index, element)


def pop(values: list, index: int) -> Any:
    if not values:
        fail("pop from empty list")
    return values.pop(list_index(index, len(values)))


def delete(values: list, index: int) -> None:
    del values[list_index(index, len(values))]


def clear(values: list) -> None:
    values.clear()


def reverse(values: list) -> None:
    values.reverse()


def extend(values: list, other: list) -> None:
    values.extend(other)


def copy(values: list) -> list:
    return list(values)


def add(a: list, b: list) -> list:
    return a + b


def add_in_place(values: list, other: list) -> list:
    values.extend(other)
    return values


def repeat(values: list, times: int) -> list:
    if times < 0:
        fail("vector::reserve")
    return values * times


def repeat_right(times: int, values: list) -> list:
    return repeat(values, times)


def repeat_in_place(values: list, times: int) -> list:
    values[:] = values * max(times, 0)
    return values


def slice_list(values: list, start: int | None, end: int | None, step: int) -> list:
    return [values[i] for i in slice_indices(len(values), start, end, step)]


def range_list(n: int) -> list[int]:
    """prim::rangelist: `list(range(n))`."""
    return list(range(n))


# ----------------------------------------------------------------------- ops specialized by element type

def _contains(equal: Equal) -> Callable[[list, Any], bool]:
    return lambda values, item: any(equal(value, item) for value in values)


def _position(values: list, element: Any, equal: Equal) -> int | None:
    return next((i for i, value in enumerate(values) if equal(value, element)), None)


def _remove(equal: Equal) -> Callable[[list, Any], None]:
    def remove(values: list, element: Any) -> None:
        position = _position(values, element, equal)
        if position is None:
            fail("list.remove(x): x not in list")
        del values[position]

    return remove


def _index(equal: Equal) -> Callable[[list, Any], int]:
    def index(values: list, element: Any) -> int:
        position = _position(values, element, equal)
        if position is None:
            fail(f"'{_element_text(element)}' is not in list")
        return position

    return index


def _element_text(element: Any) -> str:
    """How C++ streams a list element in an error: bools as 0/1, doubles with 6 significant digits."""
    if isinstance(element, bool):
        return str(int(element))
    if isinstance(element, float):
        return f"{element:g}"
    return ivalue_str(element)


def _count(equal: Equal) -> Callable[[list, Any], int]:
    return lambda values, element: sum(1 for value in values if equal(value, element))


def _list_equal(equal: Equal) -> Callable[[list, list], bool]:
    return lambda a, b: len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))


def _list_not_equal(equal: Equal) -> Callable[[list, list], bool]:
    equal_lists = _list_equal(equal)
    return lambda a, b: not equal_lists(a, b)


def sort(values: list, reverse: bool) -> None:
    values.sort(reverse=reverse)


def sorted_copy(values: list) -> list:
    return sorted(values)


# ------------------------------------------------------------------------------- min, max, sum, any, all

def min_of_lists(a: list, b: list) -> list:
    """prim::min.int_list: the lexicographically smaller list itself (not a copy); `a` on a tie."""
    return b if b < a else a


def max_of_lists(a: list, b: list) -> list:
    return b if b > a else a


def min_element(values: list) -> Any:
    if not values:
        fail("min() arg is an empty sequence")
    return _fold(values, lambda element, best: element < best)


def max_element(values: list) -> Any:
    if not values:
        fail("max() arg is an empty sequence")
    return _fold(values, lambda element, best: element > best)


def _fold(values: list, better: Callable[[Any, Any], bool]) -> Any:
    best = values[0]
    for element in values[1:]:
        if better(element, best):
            best = element
    return best


def sum_ints(values: list[int]) -> int:
    """aten::sum.int accumulates in a C++ `int`, so the total wraps at 32 bits, as in torch.jit."""
    total = int64(sum(values)) & 0xFFFFFFFF
    return total - (1 << 32) if total >= 1 << 31 else total


def sum_floats(values: list) -> Any:
    total = 0.0 if not values or not isinstance(values[0], complex) else 0j
    for value in values:
        total += value
    return total


def sum_bools(values: list[bool]) -> int:
    return sum(1 for value in values if value)


def any_true(values: list) -> bool:
    return any(values)


def all_true(values: list) -> bool:
    return all(values)


def _specialized(element_type: str) -> list[tuple[str, Callable]]:
    """remove/index/count/eq/ne/sort/sorted for lists of one element type (C++'s
    CREATE_SPECIALIZED_LIST_OPS)."""
    equal = _element_equal(element_type)
    t = element_type
    return [
        (f"aten::remove.{t}({t}[](a!) self, {t} el) -> ()", _remove(equal)),
        (f"aten::index.list_{t}({t}[] self, {t} el) -> int", _index(equal)),
        (f"aten::count.{t}({t}[] self, {t} el) -> int", _count(equal)),
        (f"aten::eq.{t}_list({t}[] a, {t}[] b) -> bool", _list_equal(equal)),
        (f"aten::ne.{t}_list({t}[] a, {t}[] b) -> bool", _list_not_equal(equal)),
        (f"aten::sort.{t}({t}[](a!) self, bool reverse=False) -> ()", sort),
        (f"aten::sorted.{t}({t}[](a) input) -> {t}[]", sorted_copy),
    ]


def _comparable(element_type: str) -> list[tuple[str, Callable]]:
    """prim::min/max of two lists and of one list's elements (ints, floats and bools only)."""
    t = element_type
    return [
        (f"prim::min.{t}_list({t}[] l, {t}[] r) -> {t}[]", min_of_lists),
        (f"prim::max.{t}_list({t}[] l, {t}[] r) -> {t}[]", max_of_lists),
        (f"prim::min.self_{t}({t}[] self) -> {t}", min_element),
        (f"prim::max.self_{t}({t}[] self) -> {t}", max_element),
    ]


_ELEMENT_TYPES = ("int", "float", "bool", "Tensor", "str")

OPERATORS: list[tuple[str, Callable]] = [
    ("aten::len.t(t[] a) -> int", length),
    ("aten::len.any(Any[] a) -> int", length),
    ("aten::__getitem__.t(t[](a) list, int idx) -> t(*)", get_item),
    ("aten::select.t(t[](a) list, int idx) -> t(*)", get_item),
    ("aten::_set_item.t(t[](a!) l, int idx, t(b -> *) el) -> t[](a!)", set_item),
    ("aten::append.t(t[](a!) self, t(c -> *) el) -> t[](a!)", append),
    ("aten::insert.t(t[](a!) self, int idx, t(b -> *) el) -> ()", insert),
    ("aten::pop.t(t[](a!) self, int idx=-1) -> t(*)", pop),
    ("aten::Delete.t(t[](a!) self, int idx) -> ()", delete),
    ("aten::clear.t(t[](a!) self) -> ()", clear),
    ("aten::reverse.t(t[](a!) self) -> ()", reverse),
    ("aten::extend.t(t[](a!) self, t[] other) -> ()", extend),
    ("aten::copy.t(t[](a) self) -> t[]", copy),
    ("aten::list.t(t[] l) -> t[]", copy),
    ("aten::add.t(t[] a, t[] b) -> t[]", add),
    ("aten::add_.t(t[](a!) self, t[] b) -> t[]", add_in_place),
    ("aten::mul.left_t(t[] l, int n) -> t[]", repeat),
    ("aten::mul.right_(int n, t[] l) -> t[]", repeat_right),
    ("aten::mul_.t(t[](a!) l, int n) -> t[](a!)", repeat_in_place),
    ("aten::slice.t(t[] l, int? start=None, int? end=None, int step=1) -> t[]", slice_list),
    ("aten::sort.any(t[](a!) self, bool reverse=False) -> ()", sort),
    ("aten::sorted.any(t[](a) self) -> t[]", sorted_copy),
    ("aten::__contains__.int_list(int[] l, int item) -> bool", _contains(_scalar_equal)),
    ("aten::__contains__.float_list(float[] l, float item) -> bool", _contains(_scalar_equal)),
    ("aten::__contains__.str_list(str[] l, str item) -> bool", _contains(_scalar_equal)),
    *[row for element_type in _ELEMENT_TYPES for row in _specialized(element_type)],
    *[row for element_type in ("int", "float", "bool") for row in _comparable(element_type)],
    ("aten::sum.int(int[] self) -> int", sum_ints),
    ("aten::sum.float(float[] self) -> float", sum_floats),
    ("aten::sum.complex(complex[] self) -> complex", sum_floats),
    ("aten::sum.bool(bool[] self) -> int", sum_bools),
    ("aten::any.str(str[] self) -> bool", any_true),
    ("aten::any.int(int[] self) -> bool", any_true),
    ("aten::any.float(float[] self) -> bool", any_true),
    ("aten::any.bool(bool[] self) -> bool", any_true),
    ("aten::all.int(int[] self) -> bool", all_true),
    ("aten::all.float(float[] self) -> bool", all_true),
    ("aten::all.bool(bool[] self) -> bool", all_true),
    ("prim::rangelist(int n) -> int[]", range_list),
]
