"""The Environment: which names are bound while a function is emitted, as prim::Store / prim::Load.

One Environment frame per block being emitted (the function body, each branch of an if, each loop body),
chained to the frame around it (jit-overview.md "Environment"). A frame keeps two tables: first-class
variables by type, and SugaredValues (modules, functions, `range(3)`...) that have no graph Value. Assigning a
first-class variable emits a prim::Store, reading it a prim::Load; convert_to_ssa.py later turns these into
plain SSA values and block outputs:

    a = 1              = prim::Store[name="a"](%a.1)
    print(a)           %a : int = prim::Load[name="a"]()
                       = prim::Print(%a)

Names not found in any frame are the compiler's builtins (`print`, `range`, `len`, `float`...) and then
whatever the Resolver says. Reassigning a variable keeps its type (an int variable cannot become a str), and a
name defined in only one branch of an if remembers why it is unusable, so a later use reports it.
"""

from __future__ import annotations

from collections.abc import Callable

from tsjit.errors import CompileError
from tsjit.frontend.python_ast import IMPORT_FORM
from tsjit.frontend.sugared_value import (
    BuiltinFunction,
    CastValue,
    ExceptionValue,
    MagicMethod,
    NamedTupleConstructor,
    PrintValue,
    SimpleValue,
    SpecialFormValue,
    SugaredValue,
    insert_node,
    try_convert_to_type,
)
from tsjit.ir import types as T
from tsjit.ir.graph import Block, Value
from tsjit.ir.symbols import aten, prim


def meaningful_name(name: str) -> bool:
    """Whether a variable name is worth naming values after: not `$tmp`, not `_` followed by digits."""
    if not name or name.startswith("$"):
        return False
    return not (name.startswith("_") and name[1:].isdigit())


def _compiler_globals() -> dict[str, SugaredValue]:
    """The names the compiler itself binds (C++ Environment::getSugaredVar's `globals` table)."""
    def magic(name: str, base: SugaredValue) -> SugaredValue:
        return MagicMethod(name, base)

    return {
        "print": PrintValue(),
        "tuple": SpecialFormValue(prim.TupleConstruct),
        "float": magic("__float__", CastValue(T.FloatType.get(), aten.Float)),
        "complex": magic("__complex__", CastValue(T.ComplexType.get(), aten.Complex)),
        "int": magic("__int__", CastValue(T.IntType.get(), aten.Int)),
        "bool": magic("__bool__", CastValue(T.BoolType.get(), aten.Bool)),
        "str": magic("__str__", CastValue(T.StringType.get(), aten.str)),
        "repr": BuiltinFunction(prim.repr),  # (not in TorchScript: f-strings' `{x!r}`)
        "getattr": SpecialFormValue(prim.GetAttr),
        "hasattr": SpecialFormValue(prim.HasAttr),
        "isinstance": SpecialFormValue(prim.isinstance),
        IMPORT_FORM: SpecialFormValue(prim.Import),
        "_to_tensor": CastValue(T.TensorType.get(), prim.NumToTensor),
        "len": magic("__len__", BuiltinFunction(aten.len)),
        "hex": magic("__hex__", BuiltinFunction(aten.hex)),
        "oct": magic("__oct__", BuiltinFunction(aten.oct)),
        "round": magic("__round__", BuiltinFunction(aten.round)),
        "hash": BuiltinFunction(aten.hash),
        "id": BuiltinFunction(prim.id),
        "min": BuiltinFunction(prim.min),
        "max": BuiltinFunction(prim.max),
        "abs": BuiltinFunction(prim.abs),
        "all": BuiltinFunction(aten.all),
        "any": BuiltinFunction(aten.any),
        "divmod": BuiltinFunction(aten.divmod),
        "sum": BuiltinFunction(aten.sum),
        "list": SpecialFormValue(prim.list),
        "dict": SpecialFormValue(prim.dict),
        "ord": BuiltinFunction(aten.ord),
        "chr": BuiltinFunction(aten.chr),
        "bin": BuiltinFunction(aten.bin),
        "pow": BuiltinFunction(aten.pow),
        "range": SpecialFormValue(prim.range),
        "zip": SpecialFormValue(prim.zip),
        "enumerate": SpecialFormValue(prim.enumerate),
        "rangelist": BuiltinFunction(prim.rangelist),
        "sorted": BuiltinFunction(aten.sorted),
        # only AssertionError is bound here, for `assert`; other exceptions resolve through Python
        "AssertionError": ExceptionValue("AssertionError"),
    }


COMPILER_GLOBALS = _compiler_globals()


class Environment:
    """One frame of the name environment, for block `block`; `next` is the enclosing frame."""

    def __init__(self, emitter, resolver, block: Block, next: Environment | None = None):
        self.emitter = emitter
        self.resolver = resolver
        self.block = block
        self.next = next
        self.type_table: dict[str, T.Type] = {}
        self.value_table: dict[str, SugaredValue] = {}
        self.error_messages: dict[str, Callable[[], str]] = {}
        self.resolved: dict[str, SugaredValue] = {}  # (bottom frame) what the resolver gave, if resolved_once

    @property
    def graph(self):
        return self.block.owning_graph

    # ---- errors remembered for later uses ----------------------------------------------------------------------
    def _bottom(self) -> Environment:
        frame = self
        while frame.next is not None:
            frame = frame.next
        return frame

    def set_variable_type_error(self, name: str, message: Callable[[], str]) -> None:
        """Remember why `name` is unusable (defined in one branch only, or with two types)."""
        self._bottom().error_messages[name] = message

    def find_variable_type_error(self, name: str) -> str | None:
        message = self._bottom().error_messages.get(name)
        return message() if message is not None else None

    # ---- loads and stores --------------------------------------------------------------------------------------
    def insert_load(self, name: str, type_: T.Type) -> SugaredValue:
        load = insert_node(self.graph, prim.Load, [], type_)
        load.s_("name", name)
        if meaningful_name(name):
            load.output().set_debug_name(name)
        return SimpleValue(load.output())

    def insert_store(self, name: str, loc, value: Value, type_: T.Type) -> None:
        store = insert_node(self.graph, prim.Store, [value], None, loc)
        store.s_("name", name)
        self.type_table[name] = type_

    # ---- lookup ------------------------------------------------------------------------------------------------
    def find_in_this_frame(self, name: str) -> SugaredValue | None:
        if name in self.value_table:
            return self.value_table[name]
        if name in self.type_table:
            return self.insert_load(name, self.type_table[name])
        return None

    def find_in_parent_frame(self, name: str) -> SugaredValue | None:
        return self.next.find_in_any_frame(name) if self.next is not None else None

    def find_in_any_frame(self, name: str) -> SugaredValue | None:
        frame: Environment | None = self
        while frame is not None:
            found = frame.find_in_this_frame(name)
            if found is not None:
                return found
            frame = frame.next
        return None

    def set_type(self, name: str, type_: T.Type) -> None:
        self.type_table[name] = type_

    def defined_variables(self) -> list[str]:
        return list(self.type_table)

    def get_sugared_var(self, name: str, loc, required: bool = True) -> SugaredValue | None:
        """What `name` means here: a variable, a compiler builtin, or what the resolver finds."""
        found = self.find_in_any_frame(name) or COMPILER_GLOBALS.get(name)
        if found is None:
            found = self._resolve(name, loc)
        if found is None and required:
            self.throw_var_not_found(name, loc)
        return found

    def _resolve(self, name: str, loc) -> SugaredValue | None:
        bottom = self._bottom()
        found = bottom.resolved.get(name)
        if found is not None:
            return found
        resolved_type = self.resolver.resolve_type(name, loc)
        if isinstance(resolved_type, T.TupleType) and resolved_type.names is not None:
            return NamedTupleConstructor(resolved_type)
        found = self.resolver.resolve_value(name, self.emitter, loc)
        if found is not None and found.resolved_once:
            bottom.resolved[name] = found
        return found

    def get_var(self, name: str, loc) -> Value:
        return self.get_sugared_var(name, loc).as_value(loc, self.emitter)

    def throw_var_not_found(self, name: str, loc) -> None:
        message = self.find_variable_type_error(name)
        if message is not None:
            raise CompileError(f"{message}and was used here", loc)
        raise CompileError(f"undefined value {name}", loc)

    def remove_var(self, name: str, loc, check_if_removed: bool = False) -> None:
        removed = False
        frame: Environment | None = self
        while frame is not None:
            in_values = frame.value_table.pop(name, None) is not None
            in_types = frame.type_table.pop(name, None) is not None
            removed = in_values or in_types
            frame = frame.next
        if check_if_removed and not removed:
            self.throw_var_not_found(name, loc)

    # ---- assignment --------------------------------------------------------------------------------------------
    def set_var(self, loc, name: str, value: Value) -> None:
        self.set_sugared_var(loc, name, SimpleValue(value), None)

    def set_sugared_var(self, loc, name: str, value: SugaredValue, annotated_type: T.Type | None) -> None:
        """Bind `name`: first-class values are stored (keeping an outer variable's type), others remembered."""
        simple = value.value if isinstance(value, SimpleValue) else None
        if (simple is not None and not simple.has_debug_name() and meaningful_name(name)
                and simple.node.owning_block is self.block):
            simple.set_debug_name(name)
        parent = self.find_in_parent_frame(name)
        if parent is not None:
            simple = self._check_reassignment(loc, name, value, simple, parent, annotated_type)
        if simple is None:
            self.value_table[name] = value
            return
        if annotated_type is not None and not simple.type.is_subtype_of(annotated_type):
            why_not = ""
            if isinstance(annotated_type, T.InterfaceType) and isinstance(simple.type, T.ClassType | T.InterfaceType):
                why_not = f"\n{annotated_type.why_not_implemented_by(simple.type)}"
            raise CompileError(f"Variable '{name}' is annotated with type {annotated_type.annotation_str()} but "
                               f"is being assigned to a value of type {simple.type.annotation_str()}{why_not}", loc)
        self.insert_store(name, loc, simple, annotated_type or simple.type)

    def _check_reassignment(self, loc, name: str, value: SugaredValue, simple: Value | None,
                            parent: SugaredValue, annotated_type: T.Type | None) -> Value:
        """A variable of an enclosing block may only be reassigned a first-class value of its type."""
        if annotated_type is not None:
            raise CompileError(f"Attempting to declare and annotate the type of variable '{name}' but it is "
                               "already defined in an outer block", loc)
        if simple is None:
            raise CompileError(f"Cannot re-assign '{name}' to a value of type {value.kind()} because {name} is not "
                               "a first-class value.  Only reassignments to first-class values are allowed", loc)
        if not isinstance(parent, SimpleValue):
            raise CompileError(f"Cannot re-assign '{name}' because it has type {value.kind()} and {name} is not a "
                               "first-class value.  Only reassignments to first-class values are allowed", loc)
        parent_type = T.unshaped_type(parent.value.type)
        simple = try_convert_to_type(self.graph, parent_type, simple)
        if not simple.type.is_subtype_of(parent_type):
            message = (f"Variable '{name}' previously had type {parent.value.type.annotation_str()} but is now "
                       f"being assigned to a value of type {simple.type.annotation_str()}")
            if isinstance(parent.value.type, T.ListType) and isinstance(simple.type, T.ListType):
                message += ("\nEmpty lists default to List[Tensor]. Add a variable annotation to the assignment "
                            "to create an empty list of another type (torch.jit.annotate(List[T, []]) where T is "
                            "the type of elements in the list for Python 2)")
            raise CompileError(message + "\n", loc)
        return simple
