"""Special forms: calls whose arguments are not simply evaluated first (part of the IR emitter).

`annotate(List[int], [])` reads its first argument as a type, `isinstance(x, int)` may be decided statically,
`range`/`zip`/`enumerate` become loop iterables rather than values, `getattr(obj, "name")` needs a literal
name, `list(x)` and `dict(x)` desugar into comprehensions. Each handler takes the emitter, the Apply tree
and the type hint, and returns a SugaredValue (TorchScript's emitApplySpecialForm).
"""

from __future__ import annotations

import importlib

from tsjit.errors import CompileError
from tsjit.frontend.closures import emit_fork
from tsjit.frontend.resolver import to_sugared_value
from tsjit.frontend.sugared_value import (
    IterableTree,
    RangeValue,
    SimpleValue,
    SugaredValue,
    create_tuple,
    emit_builtin_call,
    insert_node,
    try_convert_to_type,
)
from tsjit.frontend.tree_views import (
    Apply,
    DictComp,
    DictLiteral,
    Ident,
    ListComp,
    ListLiteral,
    StringLiteral,
    TupleLiteral,
    Var,
)
from tsjit.ir import types as T
from tsjit.ir.constants import INT64_MAX
from tsjit.ir.symbols import aten, prim


def emit_annotate(emitter, apply: Apply, type_hint) -> SugaredValue:
    """`annotate(T, value)`: value converted to T; a None annotated Optional[T] remembers its T."""
    emitter.check_apply_num_inputs(apply, 2)
    type_ = emitter.type_parser.parse_type_from_expr(apply.inputs[0])
    value = try_convert_to_type(emitter.graph, type_, emitter.emit_expr(apply.inputs[1], type_))
    if not value.type.is_subtype_of(type_):
        raise CompileError(f"expected an expression of type {type_.annotation_str()} but found "
                           f"{value.type.annotation_str()}", apply.range)
    holds_none = isinstance(type_, T.OptionalType) or (isinstance(type_, T.UnionType)
                                                        and type_.can_hold_type(T.NoneType.get()))
    if holds_none and value.type.is_subtype_of(T.NoneType.get()):
        value = emitter.graph.insert_constant(None, type_)
    return SimpleValue(value)


def emit_getattr(emitter, apply: Apply, type_hint) -> SugaredValue:
    """`getattr(obj, "name")` and `getattr(obj, "name", default)`."""
    if not 2 <= len(apply.inputs) <= 3 or apply.attributes:
        raise CompileError(f"getattr expected to have number of arguments between 2 and 3 but found "
                           f"{len(apply.inputs)}", apply.range)
    obj = emitter.emit_sugared_expr(apply.inputs[0], 1)
    selector = apply.inputs[1]
    if not isinstance(selector, StringLiteral):
        raise CompileError("getattr's second argument must be a string literal", apply.range)
    if len(apply.inputs) == 3 and not obj.has_attr(apply.range, emitter, selector.text):
        return emitter.emit_sugared_expr(apply.inputs[2], 1)
    return obj.attr(apply.range, emitter, selector.text)


def emit_hasattr(emitter, apply: Apply, type_hint) -> SugaredValue:
    emitter.check_apply_num_inputs(apply, 2)
    return SimpleValue(emitter.emit_hasattr(apply.inputs[0], apply.inputs[1]).value)


def emit_isinstance(emitter, apply: Apply, type_hint) -> SugaredValue:
    emitter.check_apply_num_inputs(apply, 2)
    return SimpleValue(emitter.emit_isinstance(apply.inputs[0], apply.inputs[1]).value)


def emit_tuple(emitter, apply: Apply, type_hint) -> SugaredValue:
    """`tuple(x)` of something with a statically known length."""
    emitter.check_apply_num_inputs(apply, 1)
    items = emitter.emit_sugared_expr(apply.inputs[0], 1).as_tuple(apply.range, emitter)
    return SimpleValue(create_tuple(emitter.graph, [item.as_value(apply.range, emitter) for item in items]))


def emit_tolist(emitter, apply: Apply, type_hint) -> SugaredValue:
    """`x.tolist()` needs the result type annotated: `l: List[List[float]] = x.tolist()`."""
    if type_hint is None:
        raise CompileError("Expected type hint for result of tolist()", apply.range)
    operand = emitter.emit_sugared_expr(apply.callee.value, 1).as_value(apply.callee.value.range, emitter)
    graph, dims, element = emitter.graph, 0, type_hint
    while isinstance(element, T.ListType):
        dims, element = dims + 1, element.elem
    element_code = {T.IntType.get(): 0, T.FloatType.get(): 1, T.BoolType.get(): 2}.get(element)
    if element_code is None:
        raise CompileError(f"Output annotation element type must be int, float or bool, got "
                           f"{type_hint.annotation_str()}", apply.range)
    inputs = [operand, graph.insert_constant(dims), graph.insert_constant(element_code)]
    return SimpleValue(insert_node(graph, prim.tolist, inputs, type_hint, apply.range).output())


def emit_range(emitter, apply: Apply, type_hint) -> SugaredValue:
    return RangeValue(apply.range, emitter, emitter.get_values(apply.inputs, maybe_unpack=True))


def emit_enumerate(emitter, apply: Apply, type_hint) -> SugaredValue:
    """`enumerate(x, start)`: an IterableTree of a range counting from start and x."""
    loc, inputs, attributes = apply.range, apply.inputs, apply.attributes
    if not inputs:
        raise CompileError("enumerate expected at least 1 arguments, got 0", loc)
    if len(inputs) + len(attributes) > 2:
        raise CompileError(f"enumerate expected at most 2 arguments, got {len(inputs) + len(attributes)}", loc)
    start = emitter.emit_sugared_expr(inputs[1], 1).as_value(loc, emitter) if len(inputs) == 2 else None
    if attributes:
        if attributes[0].name.name != "start":
            raise CompileError(f"enumerate expected kwarg name 'start', got '{attributes[0].name.name}'", loc)
        start = emitter.emit_sugared_expr(attributes[0].value, 1).as_value(loc, emitter)
    end = emitter.materialize_constant(INT64_MAX, loc, emitter.integral_constants)
    iterable = emitter.emit_sugared_expr(inputs[0], 1).iter(loc, emitter)
    counter = RangeValue(loc, emitter, [start, end] if start is not None else [end], iterable.static_len())
    tree = IterableTree()
    tree.add_child(loc, counter)
    tree.add_child(loc, iterable)
    return tree


def emit_zip(emitter, apply: Apply, type_hint) -> SugaredValue:
    if not apply.inputs:
        raise CompileError("zip expected at least 1 arguments, got 0", apply.range)
    tree = IterableTree()
    for expr in apply.inputs:
        tree.add_child(apply.range, emitter.emit_sugared_expr(expr, 1).iter(apply.range, emitter))
    return tree


def emit_list(emitter, apply: Apply, type_hint) -> SugaredValue:
    """`list()` (typed by the hint), `list(l)` of a list or str (aten::list), else `[e for e in x]`."""
    loc = apply.range
    if not apply.inputs:
        list_type = type_hint if type_hint is not None else T.ListType(T.TensorType.get())
        if not isinstance(list_type, T.ListType):
            raise CompileError(f"Expected list type annotation for list(), found {type_hint.annotation_str()}", loc)
        return SimpleValue(insert_node(emitter.graph, prim.ListConstruct, [], list_type).output())
    emitter.check_apply_num_inputs(apply, 1)
    iterable = emitter.emit_sugared_expr(apply.inputs[0], 1)
    if isinstance(iterable, SimpleValue) and isinstance(iterable.value.type, T.ListType | T.StringType):
        return SimpleValue(emit_builtin_call(emitter.graph, loc, aten.list, [iterable.value]))
    iter_name, element = _temp_var(emitter, loc, "$_iter"), _temp_var(emitter, loc, "$_elem")
    emitter.environment.set_sugared_var(loc, iter_name.name.name, iterable, None)
    comprehension = ListComp.create(loc, element, element, iter_name)
    return SimpleValue(emitter.emit_list_comprehension(comprehension, type_hint))


def _temp_var(emitter, loc, prefix: str) -> Var:
    return Var.create(loc, Ident.create(loc, emitter.create_temp_name(prefix)))


def emit_dict(emitter, apply: Apply, type_hint) -> SugaredValue:
    """`dict()`, `dict(d)`, `dict(pairs)`, `dict({...})`, `dict(k=v)`: desugared to a dict comprehension
    over (key, value) pairs, with keyword arguments set afterwards."""
    loc, graph = apply.range, emitter.graph
    if apply.inputs:
        first = emitter.emit_sugared_expr(apply.inputs[0], 1)
        if isinstance(first, SimpleValue) and isinstance(first.value.type, T.DictType):
            result = emit_builtin_call(graph, loc, aten.dict, [first.value])
            return SimpleValue(_add_keyword_items(emitter, apply, result))
    apply = _normalize_dict_call(apply)
    if not apply.inputs and not apply.attributes:
        dict_type = type_hint if type_hint is not None else T.DictType(T.StringType.get(), T.TensorType.get())
        if not isinstance(dict_type, T.DictType):
            raise CompileError(f"Expected a type annotation of Dict for dict constructor dict(), got "
                               f"{type_hint.annotation_str()}", loc)
        return SimpleValue(insert_node(graph, prim.DictConstruct, [], dict_type).output())
    if apply.inputs and isinstance(apply.inputs[0], DictComp):
        result = emitter.emit_dict_comprehension(apply.inputs[0], type_hint)
        return SimpleValue(_add_keyword_items(emitter, apply, result))
    emitter.check_apply_num_inputs(apply, 1)
    pairs = emitter.emit_sugared_expr(apply.inputs[0], 1)
    iter_name = _temp_var(emitter, loc, "$_iter")
    key, value = _temp_var(emitter, loc, "$_key"), _temp_var(emitter, loc, "$_value")
    emitter.environment.set_sugared_var(loc, iter_name.name.name, pairs, None)
    comprehension = DictComp.create(loc, key, value, TupleLiteral.create(loc, [key, value]), iter_name)
    result = emitter.emit_dict_comprehension(comprehension, type_hint)
    return SimpleValue(_add_keyword_items(emitter, apply, result))


def _normalize_dict_call(apply: Apply) -> Apply:
    """Empty containers drop out, a dict literal becomes a list of pairs, keywords join the pairs."""
    inputs, attributes, loc = list(apply.inputs), list(apply.attributes), apply.range
    if inputs and _is_empty_container(inputs[0]):
        inputs = []
    if inputs and isinstance(inputs[0], DictLiteral):
        literal = inputs[0]
        pairs = [TupleLiteral.create(loc, [k, v]) for k, v in zip(literal.key_inputs, literal.value_inputs)]
        inputs = [ListLiteral.create(loc, pairs)]
    if attributes and (not inputs or isinstance(inputs[0], ListLiteral)):
        pairs = list(inputs[0].inputs) if inputs else []
        pairs += [TupleLiteral.create(loc, [StringLiteral.create(loc, a.name.name), a.value]) for a in attributes]
        inputs, attributes = [ListLiteral.create(loc, pairs)], []
    return Apply.create(loc, apply.callee, inputs, attributes)


def _is_empty_container(expr) -> bool:
    if isinstance(expr, DictLiteral):
        return not expr.key_inputs
    return isinstance(expr, ListLiteral) and not expr.inputs


def _add_keyword_items(emitter, apply: Apply, result):
    for keyword in apply.attributes:
        key = emitter.graph.insert_constant(keyword.name.name, source_range=keyword.range)
        value = emitter.emit_expr(keyword.value)
        emit_builtin_call(emitter.graph, keyword.range, aten._set_item, [result, key, value])
    return result


def emit_import(emitter, apply: Apply, type_hint) -> SugaredValue:
    """An import statement's binding (python_ast.build_Import): module `apply.inputs[0]` (relative to the
    function's package when it starts with dots), or its attribute or submodule `apply.inputs[1]`, imported when
    the function compiles and resolved as a global holding that object would be."""
    module, *attribute = [argument.text for argument in apply.inputs]
    package = getattr(emitter.resolver, "namespace", {}).get("__package__")
    try:
        found = importlib.import_module(module, package)
        if attribute and not hasattr(found, attribute[0]):  # a submodule not imported yet
            found = importlib.import_module(f"{module}.{attribute[0]}", package)
        elif attribute:
            found = getattr(found, attribute[0])
    except (ImportError, TypeError) as error:
        raise CompileError(f"cannot import {'.'.join([module, *attribute])}: {error}", apply.range) from None
    return to_sugared_value(found, emitter, apply.range)


SPECIAL_FORMS = {
    prim.annotate: emit_annotate, prim.GetAttr: emit_getattr, prim.HasAttr: emit_hasattr,
    prim.isinstance: emit_isinstance, prim.TupleConstruct: emit_tuple, prim.tolist: emit_tolist,
    prim.range: emit_range, prim.enumerate: emit_enumerate, prim.zip: emit_zip, prim.list: emit_list,
    prim.dict: emit_dict, prim.fork: emit_fork,  # closures.py
    prim.Import: emit_import,
}
