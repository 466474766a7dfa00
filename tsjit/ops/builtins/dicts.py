"""Dict builtins: indexing, `get`, `setdefault`, `pop`, `popitem`, `keys`, `values`, `items`, `update`, ...

TorchScript dicts are Python dicts here: insertion-ordered and shared by reference. PyTorch registers each
operation once per key type (str, int, bool, float, complex, Tensor); the implementations do not depend on
it, so the table below is generated per key type like C++'s CREATE_DICT_OPS.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tsjit.ops.builtins.common import fail
from tsjit.ops.builtins.printing import ivalue_str

_MISSING = object()


def length(values: dict) -> int:
    return len(values)


def keys(values: dict) -> list:
    return list(values)


def dict_values(values: dict) -> list:
    return list(values.values())


def items(values: dict) -> list[tuple]:
    return list(values.items())


def get_item(values: dict, key: Any) -> Any:
    value = values.get(key, _MISSING)
    if value is _MISSING:
        fail(f"KeyError: {ivalue_str(key)}")
    return value


def get(values: dict, key: Any) -> Any:
    return values.get(key)


def get_or_default(values: dict, key: Any, default_value: Any) -> Any:
    return values.get(key, default_value)


def set_default(values: dict, key: Any, default_value: Any) -> Any:
    return values.setdefault(key, default_value)


def set_item(values: dict, key: Any, value: Any) -> None:
    values[key] = value


def delete(values: dict, key: Any) -> None:
    pop(values, key)


def pop(values: dict, key: Any) -> Any:
    value = values.pop(key, _MISSING)
    if value is _MISSING:
        fail(f"KeyError: {ivalue_str(key)}")
    return value


def pop_or_default(values: dict, key: Any, default_value: Any) -> Any:
    return values.pop(key, default_value)


def pop_item(values: dict) -> tuple:
    """TorchScript's popitem removes the *first* item (Python's removes the last)."""
    if not values:
        fail("popitem(): dictionary is empty")
    key = next(iter(values))
    return key, values.pop(key)


def clear(values: dict) -> None:
    values.clear()


def update(values: dict, to_add: dict) -> None:
    values.update(to_add)


def copy(values: dict) -> dict:
    return dict(values)


def contains(values: dict, key: Any) -> bool:
    return key in values


def from_pairs(pairs: list[tuple]) -> dict:
    """`dict([(k, v), ...])`: later pairs overwrite earlier ones."""
    return dict(pairs)


def empty_dict() -> dict:
    return {}


def _operators_for_key_type(k: str) -> list[tuple[str, Callable]]:
    return [
        (f"aten::len.Dict_{k}(Dict({k}, t) self) -> int", length),
        (f"aten::keys.{k}(Dict({k}, t) self) -> {k}[](*)", keys),
        (f"aten::values.{k}(Dict({k}, t) self) -> t[](*)", dict_values),
        (f"aten::__getitem__.Dict_{k}(Dict({k}, t) self, {k} key) -> t(*)", get_item),
        (f"aten::get.{k}(Dict({k}, t) self, {k} key) -> t(*)?", get),
        (f"aten::get.default_{k}(Dict({k}, t) self, {k} key, t default_value) -> t(*)", get_or_default),
        (f"aten::setdefault.{k}(Dict({k}, t)(a!) self, {k}(b -> *) key, t(c -> *) default_value) -> t(*)",
         set_default),
        (f"aten::Delete.Dict_{k}(Dict({k}, t)(a!) self, {k} key) -> ()", delete),
        (f"aten::pop.Dict_{k}(Dict({k}, t)(a!) self, {k} key) -> t(*)", pop),
        (f"aten::pop.Dict_default_{k}(Dict({k}, t)(a!) self, {k} key, t default_value) -> t(*)",
         pop_or_default),
        (f"aten::popitem.{k}(Dict({k}, t)(a!) self) -> (({k}, t))", pop_item),
        (f"aten::clear.{k}(Dict({k}, t)(a!) self) -> ()", clear),
        (f"aten::update.{k}(Dict({k}, t)(a!) self, Dict({k}, t)(a!) to_add) -> ()", update),
        (f"aten::items.{k}(Dict({k}, t) self) -> (({k}, t)[])", items),
        (f"aten::copy.Dict_{k}(Dict({k}, t)(a) self) -> Dict({k}, t)", copy),
        (f"aten::__contains__.{k}(Dict({k}, t) dict, {k} key) -> bool", contains),
        (f"aten::_set_item.{k}(Dict({k}, t)(a!) l, {k}(b -> *) idx, t(c -> *) v) -> ()", set_item),
        (f"aten::dict.{k}(({k}, tVal)[] inputs) -> Dict({k}, tVal)", from_pairs),
        (f"aten::dict.Dict_{k}(Dict({k}, t)(a) self) -> Dict({k}, t)", copy),
    ]


OPERATORS: list[tuple[str, Callable]] = [
    ("aten::dict() -> Dict(str, Tensor)", empty_dict),
    *[row for key_type in ("str", "int", "bool", "float", "complex", "Tensor")
      for row in _operators_for_key_type(key_type)],
]
