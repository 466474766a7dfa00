"""TorchScript's JIT-only builtins: the operators PyTorch's dispatcher does not have (`aten::len.t`,
`aten::add.int`, `aten::format`, `prim::min.int`, ...), each registered under PyTorch's exact schema.

Each module holds a table `OPERATORS` of (schema, Python function) rows, and some a table
`OPERATION_FACTORIES` of (schema, factory building the function from the node); `load()` registers every
row with `tsjit.ops.registry.register_lazily` (a row written as PyTorch prints its schema is never parsed). The
registry calls it the first time an operator without an implementation is asked for one: scripting and running
a program of dispatcher operators (`torch.sin`, `x + y` on tensors) never imports these tables.

- `lists`: list methods, indexing, slicing, `sort`, `min`/`max`/`sum`/`any`/`all` of lists.
- `dicts`: dict methods and indexing.
- `strings`: string methods, `str`, `format`, `%`, `ord`/`chr`/`hex`.
- `numbers`: int/float/complex/Scalar arithmetic, comparisons, bit operations, `math`.
- `tensors_scalars`: conversions between tensors and numbers, `torch.tensor` of numbers and lists, tensor
  and device properties, shape-list helpers.
- `tensor_ops`: `__interpolate`, `_no_grad_*` initializers, `.to()` spellings, `hacked_twin` indexing,
  autograd helpers.
- `environment`: grad mode, autocast, seeds, `warn`, `print`, `is_scripting`, `hash`, `id`.
- `tsjit.ops.prim_ops`: the prim ops with schemas (its NODE_OPERATIONS table is used by the interpreter).
"""

from __future__ import annotations

import importlib
import threading

from tsjit.ops.registry import register_lazily

_MODULES = ("lists", "dicts", "strings", "numbers", "tensors_scalars", "tensor_ops", "environment")
_lock = threading.RLock()
_loaded = False
_loading = False  # set while load() runs: importing prim_ops calls load() again on the same thread


def table_modules() -> list:
    """The modules whose OPERATORS / OPERATION_FACTORIES tables `load()` registers."""
    modules = [importlib.import_module(f"{__name__}.{name}") for name in _MODULES]
    return modules + [importlib.import_module("tsjit.ops.prim_ops")]


def load() -> bool:
    """Register every builtin with the operator registry (once; safe to call from several threads). Whether
    they are registered: not yet when called again while registering them (on the same thread)."""
    global _loaded, _loading
    if _loaded:
        return True
    with _lock:
        if _loaded or _loading:
            return _loaded
        _loading = True
        try:
            _register_tables()
            _loaded = True
        finally:
            _loading = False
    return True


def _register_tables() -> None:
    for module in table_modules():
        for schema, operation in module.OPERATORS:
            register_lazily(schema, operation)
        for schema, factory in getattr(module, "OPERATION_FACTORIES", ()):
            register_lazily(schema, operation_factory=factory)
