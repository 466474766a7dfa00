"""The operator registry: every FunctionSchema tsjit knows, each with a way to obtain its Operation.

An `Operator` is a FunctionSchema plus how to get the Python callable (the "Operation") that runs it
(seed: jit-overview.md "Operator", pytorch-ir-2018.md "Operator registration"). Operations take a node's
inputs positionally and return its output: one value, a tuple for several outputs, None for none.

Where operators come from:
- PyTorch's own schemas (the dispatcher's and the JIT-only builtins), loaded lazily one operator name at a
  time on the first lookup of that name: `import tsjit` parses nothing. Each Operator keeps its schema's text
  and parses it on first use of `schema`: overload matching stops at the first overload that fits, so scripting
  `torch.add(x, y)` parses `aten::add.Tensor`, not all 16 overloads of `aten::add`.
- Dispatcher schemas (`aten::add.Tensor`) run by calling the exact `torch.ops.aten.add.Tensor` OpOverload,
  resolved once, the first time the operation is asked for.
- JIT-only schemas (`aten::add.int`, `aten::len.t`, prim ops with schemas) are known by schema only; tsjit's
  builtins supply their implementations through `register_lazily`. The builtins tables are loaded the first
  time an operator without an implementation is asked for one (`has_operation`, `get_operation`): emitting
  and matching need schemas only, so a program of tensor operators never loads them.
- tsjit's builtins tables (`tsjit.ops.builtins`) are registered as schema text with `register_lazily`: a row
  whose text is the schema PyTorch prints for its overload gives that operator its implementation without
  being parsed; any other row is parsed and registered when its operator name is first looked up.
- Anyone registers more at run time:

      @register_operator("my::scale(Tensor a, float s) -> Tensor")
      def scale(a, s):
          return a * s

  Registering a schema identical to a known one replaces that operator's implementation in place.
  `conservative=True` marks an operator whose effects its schema does not tell (it logs, it keeps state):
  alias analysis then assumes it writes all its inputs and has side effects, so no pass removes, merges or
  reorders it.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from typing import Any, overload

import torch

from tsjit.errors import SchemaError
from tsjit.ir.schema import FunctionSchema, parse_schema, parse_schema_or_name
from tsjit.ir.symbols import Symbol

Operation = Callable[..., Any]
OperationFactory = Callable[[Any], Operation]  # node (or None) -> Operation


class Operator:
    """A FunctionSchema plus its implementation: a fixed Operation or a factory that builds one from a node.

    Factories serve operators whose behaviour depends on the node (how many values `prim::TupleUnpack` pushes,
    attributes); they receive the node, or None when asked without one. The schema may be given as its text
    (`schema_text`, as torch prints it), parsed on the first use of `schema`.
    """

    __slots__ = ("_schema", "schema_text", "overload_name", "_operation", "_operation_factory")

    def __init__(self, schema: FunctionSchema | str, operation: Operation | None = None,
                 operation_factory: OperationFactory | None = None):
        if isinstance(schema, FunctionSchema):
            self._schema: FunctionSchema | None = schema
            self.schema_text = str(schema)
            self.overload_name = schema.overload_name
        else:
            self._schema = None
            self.schema_text = schema
            self.overload_name = _overload_of(schema)
        self._operation: Operation | None = None
        self._operation_factory: OperationFactory | None = None
        self.set_operation(operation, operation_factory=operation_factory)

    @property
    def schema(self) -> FunctionSchema:
        if self._schema is None:
            parsed = parse_schema(self.schema_text)
            with _lock:  # one object per operator, whichever thread parsed first
                if self._schema is None:
                    self._schema = parsed
        return self._schema

    @property
    def has_operation(self) -> bool:
        self._load_builtins_if_missing()
        return self._operation is not None or self._operation_factory is not None

    @property
    def depends_on_node(self) -> bool:
        """Whether the Operation is built from the node (a factory other than a dispatcher overload's)."""
        self._load_builtins_if_missing()
        return self._operation is None and not isinstance(self._operation_factory, _DispatcherOperation)

    def set_operation(self, operation: Operation | None = None, *,
                      operation_factory: OperationFactory | None = None) -> None:
        """Install an implementation (either a callable or a factory), replacing the previous one."""
        if operation is not None and operation_factory is not None:
            raise SchemaError(f"{self.schema_text}: give an operation or an operation_factory, not both")
        self._operation, self._operation_factory = operation, operation_factory

    def get_operation(self, node=None) -> Operation:
        """The callable running this operator (for `node`, when the implementation depends on it)."""
        self._load_builtins_if_missing()
        if self._operation is not None:
            return self._operation
        if self._operation_factory is not None:
            return self._operation_factory(node)
        raise SchemaError(f"operator {self.schema_text} has no implementation; register one with "
                          f"tsjit.ops.register_operator")

    def _load_builtins_if_missing(self) -> None:
        """The builtins tables implement JIT-only schemas: loaded the first time one is needed."""
        if self._operation is None and self._operation_factory is None and not _builtins_loaded:
            _load_builtins()

    def __repr__(self) -> str:
        return f"Operator({self.schema_text!r})"


class OperatorSchemas(Sequence[FunctionSchema]):
    """The schemas of some operators, each parsed when first read: overload matching reads them in order and
    stops at the first that fits."""

    __slots__ = ("_operators",)

    def __init__(self, operators: Sequence[Operator]):
        self._operators = operators

    def __len__(self) -> int:
        return len(self._operators)

    @overload
    def __getitem__(self, index: int) -> FunctionSchema: ...

    @overload
    def __getitem__(self, index: slice) -> list[FunctionSchema]: ...

    def __getitem__(self, index: int | slice) -> FunctionSchema | list[FunctionSchema]:
        if isinstance(index, slice):
            return [operator.schema for operator in self._operators[index]]
        return self._operators[index].schema


def _overload_of(schema_text: str) -> str:
    """The overload name in schema text without parsing it: `aten::add.int(int a, ...)` -> `int`."""
    return schema_text.split("(", 1)[0].partition(".")[2].strip()


# ---- the registry: operator name -> its operators in a stable order (PyTorch's, then later registrations)
_operators_by_kind: dict[Symbol, list[Operator]] = {}
_conservative_operators: set[str] = set()  # operator names registered with conservative=True
# registrations given as schema text for names not looked up yet, keyed by the name's text (a Symbol finds its
# string's entry): (schema, operation, factory) in order
_pending_by_kind: dict[str, list[tuple[str, Operation | None, OperationFactory | None]]] = {}
_lock = threading.RLock()
_builtins_loaded = False  # whether tsjit.ops.builtins has registered its tables
# operators tsjit has and PyTorch does not, by name: their schemas are known from the first lookup (the frontend
# matches calls against them) and their implementations, rows of the builtins tables, load as PyTorch's JIT-only
# builtins' do
TSJIT_SCHEMAS: dict[str, tuple[str, ...]] = {
    "prim::get_default_dtype": ("prim::get_default_dtype() -> ScalarType",),  # torch.get_default_dtype()
    "prim::repr": ("prim::repr(t elem) -> str",),  # repr(x), f"{x!r}" (TorchScript has neither)
}


def get_operators(kind: Symbol | str) -> list[Operator]:
    """All operators named `kind` (`aten.add`) in matching order: PyTorch's order, then registrations."""
    return list(_operators_for(Symbol(kind)))


def find_operator(schema_or_name: FunctionSchema | str) -> Operator | None:
    """The operator with this exact schema or this `ns::name.overload` ("ns::name": the empty overload)."""
    parsed = parse_schema_or_name(schema_or_name) if isinstance(schema_or_name, str) else schema_or_name
    kind = Symbol(parsed.name)
    for operators in (_operators_for(kind), _with_new_torch_operators(kind)):
        found = (_find_identical(operators, parsed) if isinstance(parsed, FunctionSchema)
                 else _find_overload(operators, parsed.overload_name))
        if found is not None:
            return found
    return None


def register_operator(schema: FunctionSchema | str, fn: Operation | None = None, *,
                      operation_factory: OperationFactory | None = None, conservative: bool = False):
    """Register an operator at run time and return its Operator.

    Without `fn` and `operation_factory` this is a decorator, `@register_operator("my::op(Tensor a) -> int")`,
    which registers the decorated function and returns the function unchanged.

    An identical schema that is already known gets the new implementation (that is how builtins implement
    PyTorch's JIT-only schemas); a different schema under an existing `ns::name.overload` is an error.
    """
    schema = _as_schema(schema)
    if conservative:
        with _lock:
            _conservative_operators.add(schema.operator_name)
    if fn is not None or operation_factory is not None:
        return _register(schema, fn, operation_factory)

    def decorator(function: Operation) -> Operation:
        _register(schema, function, None)
        return function

    return decorator


def register_lazily(schema: str, fn: Operation | None = None, *,
                    operation_factory: OperationFactory | None = None) -> None:
    """`register_operator(schema, fn)`, applied on the first lookup of its operator name, and without parsing
    `schema` when it is the text PyTorch prints for a known overload of that name (then only the implementation
    is new; the builtins tables are written so).

    Registrations of one name are applied in the order given, after PyTorch's schemas of that name, so
    matching order is what registering them eagerly would give.
    """
    kind = schema.split("(", 1)[0].split(".", 1)[0].strip()
    with _lock:
        if kind in _operators_by_kind:
            _apply_registration(kind, schema, fn, operation_factory)
        else:
            _pending_by_kind.setdefault(kind, []).append((schema, fn, operation_factory))


def is_conservative(schema: FunctionSchema) -> bool:
    """Whether the operator of `schema` was registered with conservative=True."""
    return schema.operator_name in _conservative_operators


def _register(schema: FunctionSchema, fn: Operation | None, factory: OperationFactory | None) -> Operator:
    with _lock:
        operators = _operators_for(Symbol(schema.name))
        existing = _find_overload(operators, schema.overload_name)
        if existing is None:
            operators.append(Operator(schema, fn, factory))
            return operators[-1]
        if existing.schema_text != str(schema):
            raise SchemaError(f"cannot register {schema}: {schema.operator_name} is already registered as "
                              f"{existing.schema_text}")
        existing.set_operation(fn, operation_factory=factory)
        return existing


def _apply_registration(kind: str, schema: str, fn: Operation | None, factory: OperationFactory | None) -> None:
    """A `register_lazily` row for a loaded name: the implementation of the overload printed as `schema`, or
    (other text) the parsed schema registered."""
    existing = _find_overload(_operators_for(Symbol(kind)), _overload_of(schema))
    if existing is not None and existing.schema_text == schema:
        existing.set_operation(fn, operation_factory=factory)
    else:
        _register(parse_schema(schema), fn, factory)


def _load_builtins() -> None:
    """Register tsjit's builtins tables."""
    global _builtins_loaded
    # breaks a real cycle: the builtins tables register through this module
    from tsjit.ops import builtins

    _builtins_loaded = builtins.load()


def _operators_for(kind: Symbol) -> list[Operator]:
    """The registry's own list for `kind`, loading PyTorch's schemas of that name on first use."""
    operators = _operators_by_kind.get(kind)
    if operators:
        return operators
    if operators is not None:  # none yet: `torch.library` may have defined some since
        return _with_new_torch_operators(kind)
    with _lock:
        if kind not in _operators_by_kind:
            _operators_by_kind[kind] = _load_torch_operators(kind) + [
                Operator(text) for text in TSJIT_SCHEMAS.get(str(kind), ())]
            for schema, fn, factory in _pending_by_kind.pop(kind, ()):
                _apply_registration(kind, schema, fn, factory)
        return _operators_by_kind[kind]


def _with_new_torch_operators(kind: Symbol) -> list[Operator]:
    """The registry's list for `kind` (already loaded) with the schemas PyTorch has gained since added: an
    operator defined with `torch.library` after a lookup of its name found nothing is found once it exists (a
    lookup that misses costs one query of the dispatcher, about a microsecond)."""
    with _lock:
        operators = _operators_by_kind[kind]
        known = {op.schema_text for op in operators}
        operators.extend(op for op in _load_torch_operators(kind) if op.schema_text not in known)
        return operators


def _find_identical(operators: list[Operator], schema: FunctionSchema) -> Operator | None:
    text = str(schema)
    return next((op for op in operators if op.schema_text == text), None)


def _find_overload(operators: list[Operator], overload: str) -> Operator | None:
    return next((op for op in operators if op.overload_name == overload), None)


def _as_schema(schema: FunctionSchema | str) -> FunctionSchema:
    return schema if isinstance(schema, FunctionSchema) else parse_schema(schema)


# ---- PyTorch's operators -----------------------------------------------------------------------------------
def _load_torch_operators(kind: Symbol) -> list[Operator]:
    """PyTorch's schemas named `kind`, in PyTorch's order (the order TorchScript matches overloads in), each
    parsed when first used."""
    return [_torch_operator(schema) for schema in torch._C._jit_get_schemas_for_operator(kind)]


def _torch_operator(schema: torch._C.FunctionSchema) -> Operator:
    operator = Operator(str(schema))
    if not _in_dispatcher(schema):
        return operator
    if _is_conservative_in_dispatcher(schema):
        with _lock:
            _conservative_operators.add(f"{schema.name}.{schema.overload_name}" if schema.overload_name
                                        else schema.name)
    operator.set_operation(operation_factory=_DispatcherOperation(operator))
    return operator


def _is_conservative_in_dispatcher(schema: torch._C.FunctionSchema) -> bool:
    """Whether the dispatcher registered a non-aten operator with CONSERVATIVE alias analysis: TorchScript takes
    such an operator to have effects beyond its outputs (`profiler::_record_function_enter_new` starts a profiling
    range), so it is never removed or reordered. aten and prim operators follow their schemas. The dispatcher
    tells the kind only in its dump of the operator."""
    if schema.name.split("::", 1)[0] in ("aten", "prim"):
        return False
    dump = torch._C._dispatch_dump(f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name)
    return "alias analysis kind: CONSERVATIVE" in dump


def _in_dispatcher(schema: torch._C.FunctionSchema) -> bool:
    """Whether the dispatcher has `schema`; if not, it is one of TorchScript's JIT-only schemas (`aten::add.int`).

    Asked as whether it has a kernel, which answers without raising: a dispatcher lookup of a JIT-only schema
    raises a C++ exception (~20 us; `aten::add` has twelve such overloads). Every aten and prim operator of the
    dispatcher has a kernel; one another library defines may have none yet, so that one is looked up."""
    name = f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name
    if torch._C._dispatch_has_kernel(name):
        return True
    if schema.name.split("::", 1)[0] in ("aten", "prim"):
        return False
    try:
        torch._C._dispatch_find_schema_or_throw(schema.name, schema.overload_name)
    except RuntimeError:
        return False
    return True


class _DispatcherOperation:
    """An operation factory for a dispatcher schema: resolves the OpOverload once, on first request."""

    __slots__ = ("operator", "_operation")

    def __init__(self, operator: Operator):
        self.operator = operator
        self._operation: Operation | None = None

    def __call__(self, node=None) -> Operation:
        if self._operation is None:
            schema = self.operator.schema
            self._operation = _call_by_position(_op_overload(schema), schema)
        return self._operation


DEFAULT_OVERLOAD = "default"  # how torch.ops spells the empty overload name


def _op_overload(schema: FunctionSchema) -> torch._ops.OpOverload:
    """`torch.ops.<ns>.<name>.<overload>` for a schema (the empty overload is spelled `default`)."""
    ns, _, name = schema.name.partition("::")
    packet = getattr(getattr(torch.ops, ns), name)
    return getattr(packet, schema.overload_name or DEFAULT_OVERLOAD)


def _call_by_position(op_overload: torch._ops.OpOverload, schema: FunctionSchema) -> Operation:
    """Adapt an OpOverload to positional inputs: graph nodes pass kwarg-only arguments positionally too."""
    keywords = [argument.name for argument in schema.arguments if argument.kwarg_only]
    if not keywords:
        return op_overload
    positional = len(schema.arguments) - len(keywords)

    def operation(*inputs):
        return op_overload(*inputs[:positional], **dict(zip(keywords, inputs[positional:])))

    operation.__name__ = f"{schema.operator_name}"
    operation.op_overload = op_overload  # type: ignore[attr-defined]  # lets the runtime call the overload directly
    return operation
