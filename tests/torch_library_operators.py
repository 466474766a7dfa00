"""Operators the tests define with torch.library, defined so that torch.jit keeps working in the same process.

torch.jit's builtin table (torch.jit._builtins) knows each operator object that torch.ops hands out by its id()
alone and keeps no reference to it. torch.library lets such objects die: `Library.define` of an overload of a
name that already has a packet gives the packet a new operator object (torch._ops._refresh_packet; `define`'s
own `hasattr` makes the packet when it defines a name's second overload), and a destroyed Library deletes its
packets. The dead object's id stays in the table, and whatever object of its size is allocated at that address
next is a builtin to torch.jit.script: a Conv2d's 4-tuple `_reversed_padding_repeated_twice` then fails with
"builtin cannot be used as a value" in a later test of the same pytest-xdist worker (each worker imports every
test module when it collects). So tests define their operators with a LastingLibrary.
"""

from __future__ import annotations

import gc
import types
from typing import Any

import torch
import torch.jit._builtins as torch_jit_builtins

_KEPT: list[Any] = []  # the libraries and the operator objects packets held before a define, for the process


class LastingLibrary(torch.library.Library):
    """A library that defines operators of `namespace` ("DEF"): never destroyed, and its `define` keeps the
    operator object of the name's packet alive."""

    def __init__(self, namespace: str):
        super().__init__(namespace, "DEF")
        _KEPT.append(self)

    def define(self, schema: str, *args: Any, **kwargs: Any) -> Any:
        name = schema.split("(")[0].split(".")[0]
        packet = getattr(getattr(torch.ops, self.ns), name, None)  # the lookup `Library.define` makes first
        if packet is not None:
            _KEPT.append(packet._op)
        return super().define(schema, *args, **kwargs)


def dead_builtins(namespace: str) -> list[str]:
    """The operators of `namespace` that torch.jit's builtin table names by the id of no live operator object of
    that name (each a torch.jit.script of some later object at that address waiting to go wrong)."""
    live = {id(value): value.__name__ for value in gc.get_objects() if type(value) is types.BuiltinFunctionType}
    table = torch_jit_builtins._get_builtin_table()
    return sorted(op for key, op in table.items()
                  if op.startswith(f"{namespace}::") and live.get(key) != op.split("::")[1])
