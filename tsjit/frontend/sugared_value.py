"""SugaredValues: what a name or expression means while compiling, when it is not (yet) a graph Value.

`self`, a module, `torch`, `math.pi`, `range(3)`, `x.size` (a method not yet called) and `print` have no Value
in the graph. The emitter asks them how to desugar themselves when they are used (jit-overview.md
"SugaredValue"): `sv.attr("foo")` for `sv.foo`, `sv.call(args)` for `sv(args)`, `sv.iter()` for a for loop,
`sv.as_value()` where a first-class value is needed. A plain graph Value is wrapped as a SimpleValue.

    x.sigmoid()    SimpleValue(%x).attr("sigmoid") -> BuiltinFunction(aten::sigmoid, self=%x) -> .call()
    torch.tanh(x)  PythonModuleValue(torch).attr("tanh") -> BuiltinFunction(aten::tanh) -> .call(%x)
    range(n)       SpecialFormValue(prim::range), turned into a RangeValue by the emitter

Every method takes the source range `loc` (for errors) and the emitter (`emitter.graph` is where nodes go).
Arguments are lists of graph Values (or Python values, which become constants) and a dict of keyword
arguments. Subclass SugaredValue and override what your value supports; the defaults raise TorchScript's
errors ("cannot call a ...", "'...' object is not iterable"). The module/class frontend adds its own values
(modules, parameters lists) the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

import torch

from tsjit.errors import CompileError, SchemaError
from tsjit.ir import types as T
from tsjit.ir.constants import INT64_MAX, constant_of
from tsjit.ir.graph import Value
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.symbols import Symbol, aten, prim
from tsjit.ops.matching import (
    _Attempt,
    eval_type_variables,
    insert_matched_node,
    match_schemas,
    match_schemas_without_conversions,
    match_type_variables,
    pin_overload,
)
from tsjit.ops.registry import OperatorSchemas, get_operators
from tsjit.passes.inliner import insert_graph

# spelled as strings: inside a class body `aten.__range_length` would be name-mangled
RANGE_LENGTH, DERIVE_INDEX = Symbol("aten::__range_length"), Symbol("aten::__derive_index")


class SugaredValue:
    """The protocol; each method's default raises the error TorchScript gives for that use."""

    # whether such a value, found by the resolver for a name, stands for that name at every later use in the
    # function (a module namespace: it holds no graph values and nothing emitting changes), so the environment
    # asks the resolver once per name (`torch` in every statement of `x = torch.sin(x)`)
    resolved_once: ClassVar[bool] = False

    def kind(self) -> str:
        return type(self).__name__

    def as_value(self, loc, emitter) -> Value:
        raise CompileError(f"{self.kind()} cannot be used as a value", loc)

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        raise CompileError(f"attribute lookup is not defined on {self.kind()}", loc)

    def has_attr(self, loc, emitter, field: str) -> bool:
        raise CompileError(f"hasattr is not defined on {self.kind()}", loc)

    def set_attr(self, loc, emitter, field: str, value: Value) -> None:
        raise CompileError(f"attribute assignment is not defined on {self.kind()}", loc)

    def as_tuple(self, loc, emitter, size_hint: int | None = None) -> list[SugaredValue]:
        raise CompileError(f"{self.kind()} cannot be used as a tuple", loc)

    def as_tuple_value(self, loc, emitter) -> SugaredValue:
        raise CompileError(f"{self.kind()} cannot be used as a tuple value", loc)

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        raise CompileError(f"cannot call a {self.kind()}", loc)

    def iter(self, loc, emitter) -> SugaredValue:
        raise CompileError(f"'{self.kind()}' object is not iterable", loc)

    def len(self, loc, emitter) -> Value:
        raise CompileError(f"'{self.kind()}' object is not iterable", loc)

    def getitem(self, loc, emitter, index: Value, type_hint: T.Type | None = None) -> SugaredValue:
        raise CompileError(f"'{self.kind()}' object is not subscriptable", loc)

    def static_len(self) -> int | None:
        """The length when known at compile time (tuples, module lists): such loops are unrolled."""
        return None

    def should_emit_unrolled(self) -> bool:
        return self.static_len() is not None


# ---- emitting calls of builtin operators ---------------------------------------------------------------------
def emit_builtin_call(graph, loc, symbol: Symbol | str, args: Sequence[Any] = (), kwargs: dict | None = None,
                      self_value: Any = None) -> Value:
    """A call of builtin `symbol`, choosing the overload (TorchScript's emitBuiltinCall).

    Besides the registry's operators, the builtins written in TorchScript (builtin_functions.py, such as
    `add(a: int, b: Tensor)`, which is how `1 + x` works) are candidates; one of those is inlined. They come
    after the operators, so they are compiled only when no operator accepts the call without conversions.
    """
    symbol = Symbol(symbol)
    operators = get_operators(symbol)
    exact = match_schemas_without_conversions(OperatorSchemas(operators), graph, list(args),
                                              dict(kwargs or {}), self=self_value) if operators else None
    if exact is not None:
        return insert_matched_call(graph, loc, symbol, exact[1])
    # breaks a real cycle: builtin_functions -> ir_emitter -> sugared_value (imported here, past the common case)
    from tsjit.frontend.builtin_functions import builtin_functions_for

    functions = builtin_functions_for(symbol)
    if not operators and not functions:
        raise CompileError(_unknown_builtin_message(symbol), loc)
    schemas = [op.schema for op in operators] + [fn.schema for fn in functions]
    try:
        index, matched = match_schemas(schemas, graph, list(args), dict(kwargs or {}), self=self_value)
    except SchemaError as error:
        raise CompileError(str(error).rstrip("\n") + "\n\nThe original call is", loc) from None
    if index >= len(operators):
        return insert_graph(graph, functions[index - len(operators)].graph, matched.inputs)[0]
    return insert_matched_call(graph, loc, symbol, matched)


def try_convert_to_type(graph, concrete: T.Type, value: Value, allow_conversions: bool = True) -> Value:
    """`value` converted towards `concrete` as overload matching would (C++ tryConvertToType): T for
    Optional[T], homogeneous tuples to lists, implicit number conversions. The caller checks the result."""
    return _Attempt(None, graph, allow_conversions, None).convert(concrete, value)


def insert_matched_call(graph, loc, symbol: Symbol, matched, exact: FunctionSchema | None = None) -> Value:
    """The node calling `symbol` with a matched call's inputs, and its result; `exact`: the node calls exactly
    that overload (`torch.ops.aten.clamp.Tensor(...)`), pinned to it where its input types would pick another."""
    node = insert_matched_node(graph, symbol, matched, loc)
    if exact is not None:
        pin_overload(node, exact)
    if len(node.outputs) == 1:
        return node.output()
    # several outputs (or none) are packed in a tuple, named after the schema's returns when they have names
    names = matched.return_field_names
    tuple_type = T.TupleType(tuple(matched.return_types), names) if names else None
    return create_tuple(graph, list(node.outputs), tuple_type)


def _unknown_builtin_message(symbol: Symbol) -> str:
    return (f"Unknown builtin op: {symbol}.\nCould not find any similar ops to {symbol}. This op may not exist "
            "or may not be currently supported in TorchScript.\n")


# ---- small graph builders (the C++ Graph::createX helpers the frontend needs) ---------------------------------
def insert_node(graph, kind, inputs: Sequence[Value] = (), output_type: T.Type | None = None, loc=None):
    """Insert a node of `kind` with one output of `output_type` (or none when it is None)."""
    node = graph.insert_node(graph.create(kind, list(inputs), 0 if output_type is None else 1))
    if output_type is not None:
        node.output().set_type(output_type)
    node.source_range = loc
    return node


def create_tuple(graph, values: Sequence[Value], tuple_type: T.Type | None = None) -> Value:
    tuple_type = tuple_type or T.TupleType(tuple(v.type for v in values))
    return insert_node(graph, prim.TupleConstruct, values, tuple_type).output()


def create_list(graph, element_type: T.Type, values: Sequence[Value]) -> Value:
    return insert_node(graph, prim.ListConstruct, values, T.ListType(element_type)).output()


def tuple_elements(graph, value: Value) -> list[Value]:
    """The elements of a tuple value: a TupleConstruct's inputs, else a new prim::TupleUnpack's outputs."""
    if value.node.kind is prim.TupleConstruct:
        return list(value.node.inputs)
    node = graph.insert_node(graph.create(prim.TupleUnpack, [value], 0))
    return [node.add_output(t) for t in value.type.elements]


def insert_unchecked_cast(graph, value: Value, type_: T.Type) -> Value:
    return insert_node(graph, prim.unchecked_cast, [value], type_).output()


def insert_none(graph, type_: T.Type | None = None) -> Value:
    """A None constant, typed `type_` (an Optional[T] remembers its T this way)."""
    return graph.insert_constant(None, type_)


# ---- first-class values --------------------------------------------------------------------------------------
TENSOR_CAST_METHODS = {
    "byte": torch.uint8, "char": torch.int8, "double": torch.float64, "float": torch.float32,
    "cfloat": torch.complex64, "cdouble": torch.complex128, "int": torch.int32, "long": torch.int64,
    "short": torch.int16, "half": torch.float16,
}
TENSOR_PROPERTIES = {
    "dtype": "prim", "device": "prim", "grad": "prim", "data": "prim", "shape": "prim", "is_cuda": "prim",
    "is_xpu": "prim", "is_sparse": "prim", "is_sparse_csr": "prim", "is_mkldnn": "prim", "is_mps": "prim",
    "is_quantized": "prim", "is_vulkan": "prim", "is_ipu": "prim", "is_meta": "prim", "is_leaf": "aten",
    "is_nested": "prim", "requires_grad": "prim", "layout": "prim", "T": "prim", "H": "prim", "mT": "aten",
    "mH": "aten", "ndim": "prim", "name": "prim", "real": "aten", "imag": "aten", "retains_grad": "aten",
    "is_cpu": "prim", "is_xla": "prim", "is_mtia": "prim", "is_maia": "prim", "itemsize": "prim",
    "nbytes": "prim",
}
DEVICE_PROPERTIES = {"type": "prim", "index": "prim"}


class SimpleValue(SugaredValue):
    """A first-class graph Value; its attributes are tensor properties, methods and tuple/class fields."""

    def __init__(self, value: Value):
        self.value = value

    def kind(self) -> str:
        return f"value of type '{self.value.type.annotation_str()}'"

    def as_value(self, loc, emitter) -> Value:
        return self.value

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        value_type = self.value.type
        is_tensor = value_type.is_subtype_of(T.TensorType.get())
        if is_tensor and field in TENSOR_CAST_METHODS:
            return TensorCastValue(TENSOR_CAST_METHODS[field], self.value)
        found = self._property(loc, emitter, field, is_tensor) or self._field(loc, emitter, field)
        if found is not None:
            return found
        if field == "type" and BuiltinFunction.try_create(aten.to, self.value) is not None:
            return BuiltinFunction(aten.to, self.value)
        builtin = BuiltinFunction.try_create(Symbol.create("aten", field), self.value)
        if builtin is not None:
            return builtin
        if is_tensor and field == "tolist":
            return SpecialFormValue(prim.tolist)
        hint = " Did you forget to initialize an attribute in __init__()?" if isinstance(
            value_type, T.ClassType) else ""
        if field in getattr(value_type, "unresolved_class_attributes", ()):
            hint = (f" '{field}' is defined as a class attribute which currently is not supported. Consider "
                    "converting this to an instance attribute.")
        raise CompileError(f"'{value_type.annotation_str()}' object has no attribute or method '{field}'.{hint}",
                           loc)

    def _property(self, loc, emitter, field: str, is_tensor: bool) -> SugaredValue | None:
        """Tensor and Device properties that are prim::/aten:: operators (`x.shape` is prim::shape)."""
        table = TENSOR_PROPERTIES if is_tensor else (
            DEVICE_PROPERTIES if isinstance(self.value.type, T.DeviceType) else {})
        namespace = table.get(field)
        if namespace is None:
            return None
        symbol = Symbol.create(namespace, field)
        return SimpleValue(emit_builtin_call(emitter.graph, loc, symbol, [self.value]))

    def _field(self, loc, emitter, field: str) -> SugaredValue | None:
        """Fields of named tuples, of script classes (methods, attributes) and of enums (name, value)."""
        value_type = self.value.type
        if isinstance(value_type, T.TupleType) and value_type.names and field in value_type.names:
            index = value_type.names.index(field)
            graph = emitter.graph
            node = insert_node(graph, prim.TupleIndex, [self.value, graph.insert_constant(index)],
                               value_type.elements[index])
            return SimpleValue(node.output())
        if isinstance(value_type, T.ClassType | T.InterfaceType):
            return class_field(self.value, loc, emitter, field)
        if isinstance(value_type, T.EnumType):
            from tsjit.frontend.enum_values import enum_field  # breaks a real cycle: enum_values imports this module

            return enum_field(self.value, loc, emitter, field)
        return None

    def has_attr(self, loc, emitter, field: str) -> bool:
        value_type = self.value.type
        if not isinstance(value_type, T.ClassType):
            raise CompileError(f"hasattr's first argument must be an object, got {value_type.annotation_str()} "
                               "instead", loc)
        return field in value_type.methods or value_type.has_attribute(field) or field in value_type.constants

    def set_attr(self, loc, emitter, field: str, value: Value) -> None:
        set_class_attribute(self.value, loc, emitter, field, value)

    def as_tuple(self, loc, emitter, size_hint: int | None = None) -> list[SugaredValue]:
        value_type, graph = self.value.type, emitter.graph
        if isinstance(value_type, T.TupleType):
            return [SimpleValue(v) for v in tuple_elements(graph, self.value)]
        if isinstance(value_type, T.ListType):
            if size_hint is None:
                raise CompileError("cannot statically infer the expected size of a list in this context", loc)
            node = graph.insert_node(graph.create(prim.ListUnpack, [self.value], 0))
            return [SimpleValue(node.add_output(value_type.elem)) for _ in range(size_hint)]
        if isinstance(value_type, T.AnyTupleType):
            raise CompileError("Provided tuple is not fully defined/refined including its element types, please "
                               "provide a value of type like Tuple[int, int]", loc)
        raise CompileError(f"{value_type.annotation_str()} cannot be used as a tuple", loc)

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        value_type = self.value.type
        if isinstance(value_type, T.InterfaceType) and value_type.is_module:
            return self.attr(loc, emitter, "forward").call(loc, emitter, args, kwargs, n_binders)
        if isinstance(value_type, T.ClassType | T.InterfaceType):
            return self.attr(loc, emitter, "__call__").call(loc, emitter, args, kwargs, n_binders)
        return super().call(loc, emitter, args, kwargs, n_binders)

    def len(self, loc, emitter) -> Value:
        value_type = self.value.type
        if isinstance(value_type, T.ListType | T.StringType) or value_type.is_subtype_of(T.TensorType.get()):
            return emit_builtin_call(emitter.graph, loc, aten.len, [self.value])
        raise CompileError(f"'{value_type.annotation_str()}' object is not iterable", loc)

    def getitem(self, loc, emitter, index: Value, type_hint: T.Type | None = None) -> SugaredValue:
        value_type, graph = self.value.type, emitter.graph
        if isinstance(value_type, T.ListType | T.StringType | T.DictType):
            return SimpleValue(emit_builtin_call(graph, loc, aten.__getitem__, [self.value, index]))
        if value_type.is_subtype_of(T.TensorType.get()):
            return SimpleValue(emit_builtin_call(graph, loc, aten.select, [self.value, 0, index]))
        if isinstance(value_type, T.ClassType) and value_type.is_module and type_hint is not None:
            return SimpleValue(module_container_index(graph, loc, self.value, index, type_hint))
        if isinstance(value_type, T.ClassType):
            return self.attr(loc, emitter, "__getitem__").call(loc, emitter, [index], {}, 1)
        raise CompileError(f"'{value_type.annotation_str()}' object is not subscriptable", loc)

    def iter(self, loc, emitter) -> SugaredValue:
        value_type = self.value.type
        if isinstance(value_type, T.ListType | T.StringType) or value_type.is_subtype_of(T.TensorType.get()):
            return self
        if isinstance(value_type, T.DictType):
            return SimpleValue(emit_builtin_call(emitter.graph, loc, aten.keys, [self.value]))
        if isinstance(value_type, T.TupleType):
            return SugaredTupleValue([SimpleValue(v) for v in tuple_elements(emitter.graph, self.value)])
        raise CompileError(f"'{value_type.annotation_str()}' object is not iterable", loc)


def module_container_index(graph, loc, container: Value, index: Value, type_hint: T.Type) -> Value:
    """`layers[i]` on a ModuleList or ModuleDict annotated with `type_hint` (`m: I = self.layers[i]`): every
    submodule must be of that type (say a module interface), so the index may be known only at run time."""
    for attribute in container.type.attributes:
        is_module = isinstance(attribute.type, T.ClassType | T.InterfaceType) and attribute.type.is_module
        if is_module and not attribute.type.is_subtype_of(type_hint):
            raise CompileError(f"Attribute {attribute.name} is not of annotated type {type_hint.annotation_str()}",
                               loc)
    return insert_node(graph, prim.ModuleContainerIndex, [container, index], type_hint, loc).output()


# ---- script classes: the hooks the module/class frontend fills in ---------------------------------------------
def class_field(value: Value, loc, emitter, field: str) -> SugaredValue | None:
    """`obj.field` on a script object: a bound method, or a prim::GetAttr of an attribute."""
    class_type = value.type
    if field in getattr(class_type, "methods", {}) or _interface_has(class_type, field):
        return MethodValue(value, [field])
    if isinstance(class_type, T.ClassType) and class_type.has_attribute(field):
        node = insert_node(emitter.graph, prim.GetAttr, [value], class_type.get_attribute(field), loc)
        node.s_("name", field)
        return SimpleValue(node.output().set_debug_name(f"_{field}" if field.isdigit() else field))
    if isinstance(class_type, T.ClassType) and field in class_type.properties:
        return MethodValue(value, [class_type.properties[field][0]]).call(loc, emitter, [], {}, 1)
    return None


def _interface_has(class_type, field: str) -> bool:
    return isinstance(class_type, T.InterfaceType) and class_type.method_schema(field) is not None


def set_class_attribute(value: Value, loc, emitter, field: str, new_value: Value) -> None:
    """`obj.field = v`: a prim::SetAttr, after checking the attribute's type (C++ SimpleValue::setAttr)."""
    class_type = value.type
    if not isinstance(class_type, T.ClassType):
        raise CompileError(f"Tried to set an attribute: {field} on a non-class: {class_type.annotation_str()}",
                           loc)
    if not class_type.has_attribute(field) and _is_initializing(emitter, class_type):
        if emitter.graph.insert_point.owning_block is not emitter.graph.block:
            raise CompileError("First assignment cannot be in a control-flow block. Initialize the field at the "
                               "top level first", loc)
        class_type.add_attribute(field, new_value.type)
    if not class_type.has_attribute(field) and field in class_type.properties:
        setter = class_type.properties[field][1]
        if setter is None:
            raise CompileError(f"Tried to set read-only attribute: {field}", loc)
        MethodValue(value, [setter]).call(loc, emitter, [new_value], {}, 0)
        return
    if not class_type.has_attribute(field):
        raise CompileError(f"Tried to set nonexistent attribute: {field}. Did you forget to initialize it in "
                           "__init__()?", loc)
    expected = class_type.get_attribute(field)
    if not new_value.type.is_subtype_of(expected):
        raise CompileError(f"Wrong type for attribute assignment. Expected {expected.annotation_str()} but got "
                           f"{new_value.type.annotation_str()}", loc)
    node = insert_node(emitter.graph, prim.SetAttr, [value, new_value], None, loc)
    node.s_("name", field)


def _is_initializing(emitter, class_type: T.ClassType) -> bool:
    """Whether the emitter is in `__init__` of this very class, where assigning an attribute the class does not
    have yet declares it, typed by the assigned value (C++ SimpleValue::setAttr)."""
    graph = emitter.graph
    return emitter.function.name == "__init__" and bool(graph.inputs) and graph.inputs[0].type is class_type


class MethodValue(SugaredValue):
    """`obj.method` of a script object: calling it emits prim::CallMethod (several names: overloads)."""

    def __init__(self, self_value: Value, method_names: list[str]):
        self.self_value = self_value
        self.method_names = method_names

    def kind(self) -> str:
        return "method"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        graph, class_type = emitter.graph, self.self_value.type
        schemas = [_method_schema(class_type, name, loc) for name in self.method_names]
        try:
            index, matched = match_schemas(schemas, graph, list(args), dict(kwargs), self=self.self_value)
        except SchemaError as error:
            raise CompileError(str(error), loc) from None
        node = insert_node(graph, prim.CallMethod, matched.inputs, matched.return_types[0], loc)
        node.s_("name", self.method_names[index])
        return SimpleValue(node.output())


def _method_schema(class_type, name: str, loc):
    if isinstance(class_type, T.InterfaceType):
        return class_type.method_schema(name)
    method = class_type.methods[name]
    ensure = getattr(method, "ensure_defined", None)
    if ensure is not None:
        ensure(loc)
    return method.schema


# ---- builtins ------------------------------------------------------------------------------------------------
class BuiltinFunction(SugaredValue):
    """An operator by name (`aten::tanh`), maybe bound to `self` (`x.tanh`); overloads are chosen at the call."""

    def __init__(self, symbol: Symbol, self_value: Value | None = None):
        self.symbol = Symbol(symbol)
        self.self_value = self_value

    def kind(self) -> str:
        return "builtin"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        kwargs, requires_grad = self._factory_requires_grad(kwargs)
        symbol, kwargs = self._nonzero_as_tuple(loc, kwargs)
        value = emit_builtin_call(emitter.graph, loc, symbol, args, kwargs, self.self_value)
        if requires_grad is not None:
            value = emit_builtin_call(emitter.graph, loc, aten.requires_grad_, [value, requires_grad])
        return SimpleValue(value)

    def _factory_requires_grad(self, kwargs: dict) -> tuple[dict, Any]:
        """`torch.randn(3, requires_grad=True)`: Python's factory functions (those whose schemas take the
        TensorOptions `dtype`, `layout`, `device`, `pin_memory`) accept `requires_grad`, which PyTorch's
        argument parser applies to the result and the schemas do not have. The call is matched without it and
        the result gets `aten::requires_grad_`; a constant False (a new tensor's state) adds nothing.
        Returns the keyword arguments to match and the `requires_grad` value, if a node must apply it."""
        if self.self_value is not None or "requires_grad" not in kwargs:
            return kwargs, None
        schemas = [operator.schema for operator in get_operators(self.symbol)]
        if not any(s.argument_index("pin_memory") is not None for s in schemas) or any(
                s.argument_index("requires_grad") is not None for s in schemas):
            return kwargs, None
        rest = {name: value for name, value in kwargs.items() if name != "requires_grad"}
        requires_grad = kwargs["requires_grad"]
        constant = constant_of(requires_grad) if isinstance(requires_grad, Value) else requires_grad
        return rest, (None if constant is False else requires_grad)

    def _nonzero_as_tuple(self, loc, kwargs: dict) -> tuple[Symbol, dict]:
        """`torch.nonzero(x, as_tuple=...)`: Python's nonzero takes `as_tuple`, which its schemas do not have (nor
        does torch.jit). False is `aten::nonzero`; True is `aten::nonzero_numpy`, the indices per dimension, as a
        list (TorchScript's tensor lists) where Python gives a tuple. It decides the result's type, so it must be a
        constant. Returns the operator to call and the keyword arguments to match."""
        if self.symbol is not aten.nonzero or "as_tuple" not in kwargs:
            return self.symbol, kwargs
        as_tuple = kwargs["as_tuple"]
        constant = constant_of(as_tuple) if isinstance(as_tuple, Value) else as_tuple
        if not isinstance(constant, bool):
            raise CompileError("nonzero's as_tuple must be a constant bool: it decides the type of the result", loc)
        rest = {name: value for name, value in kwargs.items() if name != "as_tuple"}
        return (aten.nonzero_numpy if constant else aten.nonzero), rest

    @classmethod
    def try_create(cls, symbol: Symbol, self_value: Value | None) -> BuiltinFunction | None:
        """The builtin if some overload has a `self` argument that `self_value` fits (C++ tryCreate)."""
        for operator in get_operators(symbol):
            index = operator.schema.argument_index("self")
            if index is None:
                continue
            formal, env = operator.schema.arguments[index].type, {}
            if match_type_variables(formal, self_value.type, env) is not None:
                continue
            concrete = eval_type_variables(formal, env)
            if concrete is not None and self_value.type.is_subtype_of(concrete):
                return cls(symbol, self_value)
        return None


class MagicMethod(SugaredValue):
    """A builtin that a script class may override: `len(obj)` calls `obj.__len__()` (C++ MagicMethod)."""

    def __init__(self, desugared_name: str, base: SugaredValue):
        self.desugared_name = desugared_name
        self.base = base

    def kind(self) -> str:
        return "magic method"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        if args and isinstance(args[0], Value) and isinstance(args[0].type, T.ClassType):
            method = SimpleValue(args[0]).attr(loc, emitter, self.desugared_name)
            return method.call(loc, emitter, args[1:], kwargs, n_binders)
        return self.base.call(loc, emitter, args, kwargs, n_binders)


class CastValue(BuiltinFunction):
    """`int(x)`, `float(x)`, `bool(x)`, `str(x)`: identity on the right type, `len(x) > 0` for bool of
    containers, else the conversion operator."""

    def __init__(self, type_: T.Type, symbol: Symbol):
        super().__init__(symbol)
        self.type = type_

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        if len(args) == 1 and not kwargs:
            graph, value = emitter.graph, args[0]
            zero = graph.insert_constant(0)
            if value.type.is_subtype_of(self.type):
                return SimpleValue(value)
            if isinstance(self.type, T.BoolType) and _has_len(value.type):
                length = emit_builtin_call(graph, loc, aten.len, [value])
                return SimpleValue(emit_builtin_call(graph, loc, aten.gt, [length, zero]))
        return super().call(loc, emitter, args, kwargs, n_binders)


def _has_len(type_: T.Type) -> bool:
    return type_.is_subtype_of(T.AnyListType.get()) or isinstance(type_, T.StringType | T.DictType)


class TensorCastValue(SugaredValue):
    """`x.float()`, `x.long()`...: `aten::to(x, dtype)`."""

    def __init__(self, dtype: torch.dtype, self_value: Value):
        self.dtype = dtype
        self.self_value = self_value

    def kind(self) -> str:
        return "builtin"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        if args or kwargs:
            raise CompileError("tensor cast methods take no arguments", loc)
        graph = emitter.graph
        dtype = graph.insert_constant(self.dtype, source_range=loc)
        keywords = {"self": self.self_value, "dtype": dtype}
        return SimpleValue(emit_builtin_call(graph, loc, aten.to, [], keywords))


class PrintValue(SugaredValue):
    """`print(a, b)`: a prim::Print node."""

    def kind(self) -> str:
        return "print"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        if kwargs:
            raise CompileError("print doesn't accept any keyword arguments", loc)
        graph = emitter.graph
        insert_node(graph, prim.Print, [as_graph_value(graph, a) for a in args], None, loc)
        return NoneValue()


def as_graph_value(graph, value: Any) -> Value:
    return value if isinstance(value, Value) else graph.insert_constant(value)


class NoneValue(SugaredValue):
    def kind(self) -> str:
        return "None"


class SpecialFormValue(SugaredValue):
    """A name whose call needs special evaluation rules (`range`, `isinstance`, `annotate`, ...): the
    emitter handles `form` itself."""

    def __init__(self, form: Symbol):
        self.form = form

    def kind(self) -> str:
        return self.form.name


# ---- iteration -----------------------------------------------------------------------------------------------
class RangeValue(SugaredValue):
    """`range(end)` / `range(start, end[, step])` as a for-loop iterable."""

    def __init__(self, loc, emitter, inputs: list[Value], static_len: int | None = None):
        for i, value in enumerate(inputs):
            if not isinstance(value.type, T.IntType):
                raise CompileError(f"all inputs of range must be ints, found {value.type.annotation_str()} in "
                                   f"argument {i}", loc)
        if not inputs:
            raise CompileError("range expected at least 1 arguments, got 0", loc)
        if len(inputs) > 3:
            raise CompileError(f"range expected at most 3 arguments, got {len(inputs)}", loc)
        graph = emitter.graph
        self.has_only_end = len(inputs) == 1
        if self.has_only_end:
            self.end = inputs[0]
            self.start = graph.insert_constant(0, source_range=loc)
            self.step = graph.insert_constant(1, source_range=loc)
        else:
            self.start, self.end = inputs[0], inputs[1]
            self.step = inputs[2] if len(inputs) == 3 else graph.insert_constant(1, source_range=loc)
        self._static_len = static_len

    def kind(self) -> str:
        return "range"

    def iter(self, loc, emitter) -> SugaredValue:
        return self

    def static_len(self) -> int | None:
        return self._static_len

    def len(self, loc, emitter) -> Value:
        graph = emitter.graph
        if self._static_len is not None:
            return graph.insert_constant(self._static_len, source_range=loc)
        if self.has_only_end:
            return self.end
        return emit_builtin_call(graph, loc, RANGE_LENGTH, [self.start, self.end, self.step])

    def getitem(self, loc, emitter, index: Value, type_hint: T.Type | None = None) -> SugaredValue:
        if self.has_only_end:
            return SimpleValue(index)
        return SimpleValue(emit_builtin_call(emitter.graph, loc, DERIVE_INDEX,
                                             [index, self.start, self.step]))


class IterableTree(SugaredValue):
    """`zip(a, b)` and `enumerate(x)`: iterables walked in lockstep; an item is a tuple of their items."""

    def __init__(self):
        self.children: list[SugaredValue] = []
        self.unroll_length: int | None = None

    def kind(self) -> str:
        return "iterabletree"

    def add_child(self, loc, child: SugaredValue) -> None:
        child_len = child.static_len()
        if not self.children:
            self.unroll_length = child_len
        elif (self.unroll_length is None) != (child_len is None):
            raise CompileError("Can not iterate over a module list or tuple with a value that does not have a "
                               "statically determinable length\n", loc)
        elif child_len is not None:
            self.unroll_length = min(child_len, self.unroll_length)
        self.children.append(child)

    def iter(self, loc, emitter) -> SugaredValue:
        return self

    def static_len(self) -> int | None:
        return self.unroll_length

    def base_iterables(self) -> list[SugaredValue]:
        leaves = []
        for child in self.children:
            leaves.extend(child.base_iterables() if isinstance(child, IterableTree) else [child])
        return leaves

    def len(self, loc, emitter) -> Value:
        graph = emitter.graph
        lengths = [leaf.len(loc, emitter) for leaf in self.base_iterables()]
        return emit_builtin_call(graph, loc, prim.min, [create_list(graph, T.IntType.get(), lengths)])

    def getitem(self, loc, emitter, index: Value, type_hint: T.Type | None = None) -> SugaredValue:
        return SugaredTupleValue([child.getitem(loc, emitter, index) for child in self.children])


class SugaredTupleValue(SugaredValue):
    """A tuple of sugared values (items of zip/enumerate, iteration over a tuple): iterating it unrolls."""

    def __init__(self, items: list[SugaredValue]):
        self.items = items

    def kind(self) -> str:
        return "Tuple"

    def as_tuple(self, loc, emitter, size_hint: int | None = None) -> list[SugaredValue]:
        return list(self.items)

    def as_value(self, loc, emitter) -> Value:
        return create_tuple(emitter.graph, [item.as_value(loc, emitter) for item in self.items])

    def getitem(self, loc, emitter, index: Value, type_hint: T.Type | None = None) -> SugaredValue:
        position = constant_of(index)
        if not isinstance(position, int) or isinstance(position, bool):
            raise CompileError("Expected integer literal for index but got a variable or non-integer. ModuleList/"
                               "Sequential indexing is only supported with integer literals. For example, "
                               "'i = 4; self.layers[i](x)' will fail because i is not a literal. Enumeration is "
                               "supported, e.g. 'for index, v in enumerate(self): out = v(inp)'", loc)
        if not -len(self.items) <= position < len(self.items):
            raise CompileError(f"Index {position} out of range of length {len(self.items)}", loc)
        return self.items[position]

    def iter(self, loc, emitter) -> SugaredValue:
        return self

    def static_len(self) -> int | None:
        return len(self.items)


# ---- functions -----------------------------------------------------------------------------------------------
class FunctionValue(SugaredValue):
    """A compiled TorchScript function (or its overloads): a call emits prim::CallFunction."""

    def __init__(self, callees: list):
        self.callees = callees

    def kind(self) -> str:
        return "function"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        for callee in self.callees:
            callee.ensure_defined(loc)
        graph = emitter.graph
        try:
            index, matched = match_schemas([c.schema for c in self.callees], graph, list(args), dict(kwargs))
        except SchemaError as error:
            raise CompileError(str(error), loc) from None
        return SimpleValue(insert_function_call(graph, loc, self.callees[index], matched))


def insert_function_call(graph, loc, callee, matched) -> Value:
    """`%f : Function = prim::Constant[name="f"]()` and `prim::CallFunction(%f, args...)`."""
    function = insert_node(graph, prim.Constant, [], T.FunctionType(callee))
    function.s_("name", callee.name)
    call = insert_node(graph, prim.CallFunction, [function.output(), *matched.inputs], matched.return_types[0], loc)
    return call.output()


class ClosureValue(SugaredValue):
    def __init__(self, value: Value):
        self.value = value

    def kind(self) -> str:
        return "closure"

    def as_value(self, loc, emitter) -> Value:
        return self.value


# ---- exceptions ----------------------------------------------------------------------------------------------
class ExceptionValue(SugaredValue):
    """An exception class: calling it gives the message (`raise ValueError("bad", x)`)."""

    def __init__(self, name: str, qualified_name: str | None = None):
        self.name = name
        self.qualified_name = qualified_name

    def kind(self) -> str:
        return "exception"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        if self.qualified_name is None:
            return self._builtin_message(loc, emitter, args)
        graph = emitter.graph
        values = [as_graph_value(graph, a) for a in [*args, *kwargs.values()]]
        if not values:
            message = graph.insert_constant("", source_range=loc)
        elif len(values) == 1:
            message = values[0]
        else:
            message = create_tuple(graph, values)
        qualified = graph.insert_constant(self.qualified_name, source_range=loc)
        return ExceptionMessageValue(message, qualified)

    def _builtin_message(self, loc, emitter, args: list) -> SugaredValue:
        """AssertionError (bound by the compiler itself): the message is `"AssertionError: " + str(arg)`."""
        graph = emitter.graph
        message = graph.insert_constant(self.name + ": ", source_range=loc)
        for arg in args:
            text = as_graph_value(graph, arg)
            if not text.type.is_subtype_of(T.StringType.get()):
                text = emit_builtin_call(graph, loc, aten.str, [text])
            message = emit_builtin_call(graph, loc, aten.add, [message, text])
        return ExceptionMessageValue(message, None)


class ExceptionMessageValue(SugaredValue):
    """An exception instance: its message and its class's qualified name (None for AssertionError)."""

    def __init__(self, message: Value, qualified_name: Value | None):
        self.message = message
        self.qualified_name = qualified_name

    def kind(self) -> str:
        return "exception message"


# ---- named tuples and slices ---------------------------------------------------------------------------------
class NamedTupleConstructor(SugaredValue):
    """Calling a NamedTuple class: match its fields like a schema, then a prim::TupleConstruct."""

    def __init__(self, tuple_type: T.TupleType, defaults: dict[str, Any] | None = None):
        self.tuple_type = tuple_type
        self.defaults = defaults or {}

    def kind(self) -> str:
        return "NamedTuple"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        fields = zip(self.tuple_type.names, self.tuple_type.elements)
        arguments = [Argument(name, type_, **({"default_value": self.defaults[name]} if name in self.defaults
                                                else {})) for name, type_ in fields]
        schema = FunctionSchema(self.tuple_type.qualified_name or "NamedTuple", "", arguments, [])
        try:
            _, matched = match_schemas([schema], emitter.graph, list(args), dict(kwargs))
        except SchemaError as error:
            raise CompileError(str(error), loc) from None
        return SimpleValue(create_tuple(emitter.graph, matched.inputs, self.tuple_type))


class SliceValue(SugaredValue):
    """`slice(a, b, c)` used as an index."""

    def __init__(self, start: Value | None, stop: Value | None, step: Value | None):
        self.start, self.stop, self.step = start, stop, step

    def kind(self) -> str:
        return "Python slice value"


class PythonSliceClass(SugaredValue):
    """The builtin `slice`: calling it gives a SliceValue with None parts defaulted."""

    def kind(self) -> str:
        return "Python slice class"

    def call(self, loc, emitter, args: list, kwargs: dict, n_binders: int = 1) -> SugaredValue:
        if kwargs:
            raise CompileError("Slice does not accept any keyword arguments", loc)
        if not 1 <= len(args) <= 3:
            raise CompileError(f"slice accepts exactly 1, 2 or 3 arguments, got: {len(args)}", loc)
        graph = emitter.graph

        def value_or(given: Value | None, default: int) -> Value:
            if given is None or given.type.is_subtype_of(T.NoneType.get()):
                return graph.insert_constant(default, source_range=loc)
            return given

        parts = [None, *args, None] if len(args) == 1 else [*args, None][:3]
        return SliceValue(value_or(parts[0], 0), value_or(parts[1], INT64_MAX), value_or(parts[2], 1))


# ---- modules: `torch` inside CompilationUnit source ----------------------------------------------------------
class BuiltinModule(SugaredValue):
    """A namespace of operators: `torch.foo` in source compiled without Python is `aten::foo`."""

    resolved_once = True

    def __init__(self, namespace: str):
        self.namespace = namespace

    def kind(self) -> str:
        return "builtin module"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        if field == "autograd":
            return BuiltinModule("aten")
        if field == "ops" and self.namespace == "aten":
            # breaks a real cycle: operator_values imports this module
            from tsjit.frontend.operator_values import OperatorNamespaces

            return OperatorNamespaces()
        return BuiltinFunction(Symbol.create(self.namespace, field))
