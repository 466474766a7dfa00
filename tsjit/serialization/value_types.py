"""Whether an unpickled value has the type its class declares for it, in time linear in the pickle.

An archive's data.pkl gives every attribute a value, and its code/ files declare the attribute's type
(`k : int`); nothing forces the two to agree. torch.jit refuses a disagreement at load; a loader that does not
hands `forward` a nested list where it expects an int. The check walks a value only as deep as the declared type
reaches (a value declared `Any` or `int` is never walked), and remembers each (value, type) pair it has
answered: the memo of a pickle shares containers, and a list holding two references to a list holding two
references to ... has 2**n paths through n objects.
"""

from __future__ import annotations

from typing import Any

import torch

from tsjit.ir import types as T
from tsjit.ops.prim_ops import is_instance

# The Python classes the values of leaf types have (bool is an int to Python, not to TorchScript).
_LEAF_CLASSES: dict[type, tuple[type, ...]] = {
    T.IntType: (int,), T.FloatType: (float,), T.BoolType: (bool,), T.StringType: (str,),
    T.ComplexType: (complex,), T.DeviceType: (torch.device,), T.TensorType: (torch.Tensor,),
    T.NumberType: (int, float, complex),
}


class ValueTypeChecker:
    """`matches(value, type)`, memoized by the identity of the value (the values must outlive the checker)."""

    def __init__(self) -> None:
        self._answers: dict[tuple[int, T.Type], bool] = {}

    def matches(self, value: Any, type_: T.Type) -> bool:
        key = (id(value), type_)
        answer = self._answers.get(key)
        if answer is None:
            self._answers[key] = True  # a container reaching itself matches, as far as it goes
            answer = self._answers[key] = self._check(value, type_)
        return answer

    def _check(self, value: Any, type_: T.Type) -> bool:
        if isinstance(type_, T.AnyType):
            return True
        leaf = _LEAF_CLASSES.get(type(type_))
        if leaf is not None:
            return isinstance(value, leaf) and (type_ == T.BoolType.get()) == isinstance(value, bool)
        if isinstance(type_, T.OptionalType):
            return value is None or self.matches(value, type_.elem)
        if isinstance(type_, T.UnionType):
            return any(self.matches(value, member) for member in type_.contained_types())
        if isinstance(type_, T.NoneType):
            return value is None
        if isinstance(type_, T.ListType):
            return isinstance(value, list) and all(self.matches(v, type_.elem) for v in value)
        if isinstance(type_, T.TupleType):
            return isinstance(value, tuple) and len(value) == len(type_.elements) and all(
                self.matches(v, t) for v, t in zip(value, type_.elements))
        if isinstance(type_, T.DictType):
            return isinstance(value, dict) and all(
                self.matches(k, type_.key) and self.matches(v, type_.value) for k, v in value.items())
        return self._named(value, type_)

    @staticmethod
    def _named(value: Any, type_: T.Type) -> bool:
        """Objects, enum members and the rest: by the type the value carries."""
        if isinstance(value, list | dict | tuple):
            return False
        return is_instance(value, type_)
