"""Compiling an archive's code/ files back into classes and functions (torch's import_source.cpp).

The code of an archive is TorchScript source, one file per qualifier: `__torch__.torch.nn.modules.linear.Linear`
is defined in `code/__torch__/torch/nn/modules/linear.py`. The importer compiles it with the ordinary frontend
(parser and IR emitter) and a resolver that knows the names printed code uses and nothing else, so loading
never runs Python:

    torch.add(x, y)            aten operators               ops.prim.NumToTensor(x)   other namespaces
    ops.aten.clamp.Tensor(x)   an exact overload (a node pinned to it)
    CONSTANTS.c0               the tuple in constants.pkl   __torch__.a.b.C           a class, function,
    annotate(List[int], [])    special forms, also           named tuple or enum of this archive
    unchecked_cast(T, x), uninitialized(T), fork(f), __torch__.M.__new__(__torch__.M)
    inf, nan                   floats

Files are parsed on first use and their definitions imported on demand, so classes may refer to each other in
any order. A class body declares attributes (`w : Tensor`), `__parameters__` / `__buffers__`, constants
(`k : Final[int] = 3`), `__annotations__["0"] = T` for names that are not identifiers, and methods; headers
say what it is: `class M(Module)`, `class P:`, `class T(NamedTuple)`, `class E(Enum)`, `class I(Interface)`.
Anything else, and any source that does not compile, is a SerializationError naming the file.
"""

from __future__ import annotations

import threading
from typing import Any

from tsjit.errors import CompileError, SerializationError, TsjitError
from tsjit.frontend import special_forms
from tsjit.frontend.ir_emitter import GraphFunction
from tsjit.frontend.operator_values import OperatorNamespaces
from tsjit.frontend.parser import parse_definitions
from tsjit.frontend.resolver import PRINTED_NUMBERS, Resolver, printed_number
from tsjit.frontend.script_type_parser import ScriptTypeParser, evaluate_default
from tsjit.frontend.sugared_value import (
    BuiltinModule,
    FunctionValue,
    NamedTupleConstructor,
    SimpleValue,
    SpecialFormValue,
    SugaredValue,
    insert_node,
    insert_unchecked_cast,
)
from tsjit.frontend.tree_views import (
    Assign,
    BinOp,
    ClassDef,
    Def,
    ExprStmt,
    ListLiteral,
    Pass,
    StringLiteral,
    Subscript,
    TupleLiteral,
    UnaryOp,
    Var,
)
from tsjit.ir import types as T
from tsjit.ir.printer import EnumValue
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.ir.symbols import prim
from tsjit.serialization.upgraders import apply_upgraders
from tsjit.source import lexer as lx
from tsjit.source.source_range import Source

SPECIAL_FORM_NAMES = {"fork": prim.fork, "annotate": prim.annotate, "unchecked_cast": prim.unchecked_cast,
                      "uninitialized": prim.Uninitialized}


class SourceImporter:
    """The classes and functions of one archive, compiled from its code/ files on demand."""

    def __init__(self, reader, version: int, constants: tuple = ()):
        self.reader = reader
        self.version = version
        self.constants = constants
        self.resolver = ArchiveResolver(self)
        self.type_parser = ScriptTypeParser(self.resolver)
        self._definitions: dict[str, dict[str, tuple[str, Def | ClassDef]]] = {}
        self._imported: dict[str, Any] = {}
        self._named_tuple_defaults: dict[str, dict[str, Any]] = {}
        self._paths: dict[int, str] = {}  # id of a function or method -> the code file defining it
        self.hooks: dict[int, tuple[list[str], list[str]]] = {}  # id of a module class -> (pre-hooks, hooks)
        self._defined: set[int] = set()  # ids of the functions compiled (and upgraded) so far
        self._lock = threading.RLock()

    # ---- lookup ---------------------------------------------------------------------------------------------
    def lookup(self, qualified_name: str) -> Any:
        """The type or function a qualified name of this archive denotes, importing it; None if unknown."""
        with self._lock:
            if qualified_name in self._imported:
                return self._imported[qualified_name]
            qualifier, _, name = qualified_name.rpartition(".")
            found = self._file_definitions(qualifier).get(name) if qualifier else None
            if found is None:
                return None
            path, definition = found
            return self._import(qualified_name, path, definition)

    def resolve_type(self, qualified_name: str) -> T.Type | None:
        found = self.lookup(qualified_name)
        return found if isinstance(found, T.Type) else None

    def _file_definitions(self, qualifier: str) -> dict[str, tuple[str, Def | ClassDef]]:
        """The top-level definitions of a qualifier's file by name (parsed once; empty if there is none)."""
        if qualifier not in self._definitions:
            path = "code/" + qualifier.replace(".", "/") + ".py"
            self._definitions[qualifier] = self._parse(path) if self.reader.has_record(path) else {}
        return self._definitions[qualifier]

    def _parse(self, path: str) -> dict[str, tuple[str, Def | ClassDef]]:
        limits = self.reader.limits
        if self.reader.members[path].file_size > limits.max_code_size:
            self.reader.fail(limits.exceeded(f"has a code file {self.reader.prefix}{path} of "
                                             f"{self.reader.members[path].file_size} bytes", "max_code_size"))
        text = self.reader.read_text(path)
        try:
            definitions = parse_definitions(Source(text, path, 1))
        except (TsjitError, RecursionError) as error:
            raise self.error(path, error) from None
        return {definition.name.name: (path, definition) for definition in definitions}

    def error(self, path: str, error: Exception) -> SerializationError:
        return SerializationError(f"{self.reader.label}: {self.reader.prefix}{path} is not valid TorchScript: "
                                  f"{error}")

    # ---- importing definitions -----------------------------------------------------------------------------
    def _import(self, qualified_name: str, path: str, definition: Def | ClassDef) -> Any:
        try:
            if isinstance(definition, Def):
                imported = GraphFunction(qualified_name, definition, self.resolver)
                self._imported[qualified_name] = imported
            else:
                imported = self._import_class(qualified_name, definition)
        except CompileError as error:
            raise self.error(path, error) from None
        for function in [imported, *getattr(imported, "methods", {}).values()]:
            self._paths[id(function)] = path
        return imported

    def _import_class(self, qualified_name: str, class_def: ClassDef) -> T.Type:
        base = _base_name(class_def)
        if base in ("Module", None):
            return self._import_script_class(qualified_name, class_def, is_module=base == "Module")
        if base == "NamedTuple":
            return self._import_named_tuple(qualified_name, class_def)
        if base == "Enum":
            return self._import_enum(qualified_name, class_def)
        if base in ("Interface", "ModuleInterface"):
            return self._import_interface(qualified_name, class_def, is_module=base == "ModuleInterface")
        raise CompileError(f"class {class_def.name.name} has an unknown base class {base}", class_def.range)

    def _import_script_class(self, qualified_name: str, class_def: ClassDef, is_module: bool) -> T.ClassType:
        """Attributes and constants first (methods may refer to the class), then the methods."""
        class_type = T.ClassType(qualified_name, is_module=is_module)
        self._imported[qualified_name] = class_type
        declarations = ClassBody(class_def)
        for name, type_expr in declarations.attributes:
            class_type.add_attribute(name, self.type_parser.parse_type_from_expr(type_expr),
                                     is_parameter=name in declarations.parameters,
                                     is_buffer=name in declarations.buffers)
        class_type.constants.update(declarations.constants)
        self.hooks[id(class_type)] = (declarations.pre_hooks, declarations.hooks)
        binding = ClassSelfBinding(class_type)
        for method in declarations.methods:
            method_name = f"{class_type.qualified_name}.{method.name.name}"
            class_type.methods[method.name.name] = GraphFunction(method_name, method, self.resolver,
                                                                 self_binding=binding)
        return class_type

    def _import_named_tuple(self, qualified_name: str, class_def: ClassDef) -> T.TupleType:
        names, types, defaults = [], [], {}
        for statement in class_def.body:
            name, type_expr, default = _field_declaration(statement)
            names.append(name)
            types.append(self.type_parser.parse_type_from_expr(type_expr))
            if default is not None:
                defaults[name] = literal(default)
        tuple_type = T.TupleType(tuple(types), tuple(names), qualified_name)
        self._named_tuple_defaults[qualified_name] = defaults
        self._imported[qualified_name] = tuple_type
        return tuple_type

    def _import_enum(self, qualified_name: str, class_def: ClassDef) -> T.EnumType:
        members = []
        for statement in class_def.body:
            if not (isinstance(statement, Assign) and len(statement.lhs_list) == 1
                    and isinstance(statement.lhs_list[0], Var) and statement.rhs is not None):
                raise CompileError("an enum body holds only `NAME = value` lines", statement.range)
            members.append((statement.lhs_list[0].name.name, literal(statement.rhs)))
        value_types = {type(value) for _, value in members}
        if len(value_types) != 1 or not value_types <= {int, float, str}:
            raise CompileError("enum values must all be int, all float or all str", class_def.range)
        value_type = T.type_of(members[0][1])
        enum_type = T.EnumType(qualified_name, value_type, members)
        self._imported[qualified_name] = enum_type
        return enum_type

    def _import_interface(self, qualified_name: str, class_def: ClassDef, is_module: bool) -> T.InterfaceType:
        interface = T.InterfaceType(qualified_name, is_module=is_module)
        self._imported[qualified_name] = interface
        for statement in class_def.body:
            if not isinstance(statement, Def):
                raise CompileError("an interface body holds only method declarations", statement.range)
            schema = self.type_parser.parse_schema_from_def(statement)
            arguments = [Argument("self", interface), *schema.arguments[1:]]
            interface.add_method(FunctionSchema(schema.name, "", arguments, schema.returns))
        return interface

    def class_hooks(self, class_type: T.ClassType) -> tuple[list[GraphFunction], list[GraphFunction]]:
        """A module class's forward pre-hooks and hooks (methods named in `__forward_(pre_)hooks__`)."""
        pre_hooks, hooks = self.hooks.get(id(class_type), ([], []))
        return [class_type.methods[n] for n in pre_hooks], [class_type.methods[n] for n in hooks]

    def named_tuple_defaults(self, qualified_name: str) -> dict[str, Any]:
        return self._named_tuple_defaults.get(qualified_name, {})

    # ---- compiling everything ------------------------------------------------------------------------------
    def import_all(self) -> None:
        """Import every definition of every code/ file (normally only what data.pkl names is imported)."""
        for path in self.reader.records_under("code"):
            if path.endswith(".py"):
                qualifier = path[len("code/"):-len(".py")].replace("/", ".")
                for name in list(self._file_definitions(qualifier)):
                    self.lookup(f"{qualifier}.{name}")

    def path_of(self, function: GraphFunction) -> str:
        """The archive member defining a function or method."""
        return self.reader.prefix + self._paths.get(id(function), "code")

    def define_all(self) -> None:
        """Compile every imported function and method now, so that broken code fails the load, and bring
        operators whose behaviour changed since the archive's version up to date (upgraders.py)."""
        while True:
            pending = [f for f in self.functions() if id(f) not in self._defined]
            if not pending:
                return
            for function in pending:
                self.define(function)

    def functions(self) -> list[GraphFunction]:
        """Every function and method imported so far."""
        with self._lock:
            imported = list(self._imported.values())
        functions = [item for item in imported if isinstance(item, GraphFunction)]
        for item in imported:
            if isinstance(item, T.ClassType):
                functions.extend(item.methods.values())
        return functions

    def define(self, function: GraphFunction) -> None:
        """Compile one function of the archive and upgrade its old operators, once."""
        if id(function) in self._defined:
            return
        try:
            function.ensure_defined()
        except (TsjitError, RecursionError) as error:
            raise self.error(self._paths.get(id(function), "code"), error) from None
        apply_upgraders(function.graph, self.version)
        self._defined.add(id(function))


class ClassBody:
    """The declarations of a class body, sorted out: attributes, parameters, buffers, constants, methods."""

    def __init__(self, class_def: ClassDef):
        self.attributes: list[tuple[str, Any]] = []
        self.parameters: set[str] = set()
        self.buffers: set[str] = set()
        self.constants: dict[str, Any] = {}
        self.methods: list[Def] = []
        self.pre_hooks: list[str] = []
        self.hooks: list[str] = []
        if class_def.properties:
            raise CompileError("properties in archived classes are not supported", class_def.range)
        for statement in class_def.body:
            self.add(statement)

    def add(self, statement) -> None:
        if isinstance(statement, Def):
            self.methods.append(statement)
        elif isinstance(statement, Assign):
            self.add_assignment(statement)
        elif not (isinstance(statement, Pass) or _is_docstring(statement)):
            raise CompileError("unexpected statement in a class body", statement.range)

    def add_assignment(self, statement: Assign) -> None:
        if len(statement.lhs_list) != 1:
            raise CompileError("unexpected assignment in a class body", statement.range)
        target = statement.lhs_list[0]
        if isinstance(target, Subscript):
            self.add_annotation_entry(statement, target)
            return
        if not isinstance(target, Var):
            raise CompileError("unexpected assignment in a class body", statement.range)
        name = target.name.name
        if name in ("__parameters__", "__buffers__"):
            (self.parameters if name == "__parameters__" else self.buffers).update(_string_list(statement.rhs))
        elif name in ("__forward_hooks__", "__forward_pre_hooks__"):
            (self.hooks if name == "__forward_hooks__" else self.pre_hooks).extend(_string_list(statement.rhs))
        elif name == "__annotations__":
            return  # `__annotations__ = []` only introduces the `__annotations__["0"] = T` lines
        elif statement.type is not None and _is_final(statement.type):
            self.constants[name] = literal(statement.rhs) if statement.rhs is not None else None
        elif statement.type is not None and statement.rhs is None:
            self.attributes.append((name, statement.type))
        else:
            raise CompileError(f"unexpected assignment to '{name}' in a class body", statement.range)

    def add_annotation_entry(self, statement: Assign, target: Subscript) -> None:
        """`__annotations__["0"] = SomeType` declares attribute "0"."""
        key = target.subscript_exprs[0] if len(target.subscript_exprs) == 1 else None
        if not (isinstance(target.value, Var) and target.value.name.name == "__annotations__"
                and isinstance(key, StringLiteral) and statement.rhs is not None):
            raise CompileError("unexpected assignment in a class body", statement.range)
        self.attributes.append((key.text, statement.rhs))


class ClassSelfBinding:
    """A method's `self`: a plain value of the class type (archived code reaches everything explicitly)."""

    def __init__(self, class_type: T.ClassType):
        self.class_type = class_type

    def make_sugared(self, value) -> SugaredValue:
        value.set_type(self.class_type)
        return SimpleValue(value)


# ---- the resolver ------------------------------------------------------------------------------------------------
class ArchiveResolver(Resolver):
    """The names archived code may use (torch's SourceImporter environment), and this archive's types."""

    def __init__(self, importer: SourceImporter):
        self.importer = importer

    def resolve_value(self, name: str, emitter, loc) -> SugaredValue | None:
        if name == "torch":
            return BuiltinModule("aten")
        if name == "ops":
            return OperatorNamespaces()  # `ops.prim.NumToTensor`, `ops.aten.clamp.Tensor`
        if name == "CONSTANTS":
            return ConstantTable(self.importer.constants)
        if name == "__torch__":
            return ArchiveNamespace(self.importer, name)
        if name in SPECIAL_FORM_NAMES:
            return SpecialFormValue(SPECIAL_FORM_NAMES[name])
        return printed_number(name, emitter, loc)

    def resolve_type(self, name: str, loc) -> T.Type | None:
        return self.importer.resolve_type(name) if name.startswith("__torch__.") else None


class ConstantTable(SugaredValue):
    """`CONSTANTS.c<i>`: element i of the archive's constants.pkl, as a prim::Constant."""

    def __init__(self, constants: tuple):
        self.constants = constants

    def kind(self) -> str:
        return "constant table"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        index = field[1:]
        if not (field.startswith("c") and index.isdigit() and len(index) <= len(str(len(self.constants)))
                and int(index) < len(self.constants)):
            raise CompileError(f"CONSTANTS has no entry '{field}' ({len(self.constants)} constants)", loc)
        return SimpleValue(emitter.graph.insert_constant(self.constants[int(index)], source_range=loc))


class ArchiveNamespace(SugaredValue):
    """A prefix of qualified names (`__torch__`, `__torch__.torch.nn`); attributes descend until they name a
    definition of the archive."""

    def __init__(self, importer: SourceImporter, prefix: str):
        self.importer = importer
        self.prefix = prefix

    def kind(self) -> str:
        return f"namespace {self.prefix}"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        qualified_name = f"{self.prefix}.{field}"
        try:
            found = self.importer.lookup(qualified_name)
        except SerializationError as error:
            raise CompileError(str(error), loc) from None
        if found is None:
            return ArchiveNamespace(self.importer, qualified_name)
        return self.sugared(found, qualified_name, loc)

    def sugared(self, found: Any, qualified_name: str, loc) -> SugaredValue:
        if isinstance(found, GraphFunction):
            return FunctionValue([found])
        if isinstance(found, T.ClassType):
            return ClassValue(found, self.importer)
        if isinstance(found, T.TupleType):
            return NamedTupleConstructor(found, self.importer.named_tuple_defaults(qualified_name))
        if isinstance(found, T.EnumType):
            return EnumClassValue(found)
        raise CompileError(f"{qualified_name} cannot be used as a value", loc)


class ClassValue(SugaredValue):
    """A class of the archive: `__torch__.M.__new__(__torch__.M)` creates an uninitialized object, and
    `__torch__.M.hook` is one of M's forward hooks (a parent module calls its submodules' hooks so)."""

    def __init__(self, class_type: T.ClassType, importer: SourceImporter):
        self.class_type = class_type
        self.importer = importer

    def kind(self) -> str:
        return f"class {self.class_type.qualified_name}"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        if field == "__new__":
            return SpecialFormValue(prim.CreateObject)
        pre_hooks, hooks = self.importer.hooks.get(id(self.class_type), ([], []))
        if field in pre_hooks or field in hooks:
            return FunctionValue([self.class_type.methods[field]])
        raise CompileError(f"class {self.class_type.qualified_name} has no attribute '{field}'", loc)


class EnumClassValue(SugaredValue):
    """An enum of the archive: `__torch__.Color.RED` is a constant."""

    def __init__(self, enum_type: T.EnumType):
        self.enum_type = enum_type

    def kind(self) -> str:
        return f"enum {self.enum_type.qualified_name}"

    def attr(self, loc, emitter, field: str) -> SugaredValue:
        for name, value in self.enum_type.names_values:
            if name == field:
                constant = emitter.graph.insert_constant(EnumValue(self.enum_type, name, value), self.enum_type)
                return SimpleValue(constant)
        raise CompileError(f"enum {self.enum_type.qualified_name} has no member '{field}'", loc)


# ---- special forms printed code uses --------------------------------------------------------------------------
def emit_unchecked_cast(emitter, apply, type_hint) -> SugaredValue:
    """`unchecked_cast(T, x)`: x as T, no check (prim::unchecked_cast)."""
    emitter.check_apply_num_inputs(apply, 2)
    type_ = emitter.type_parser.parse_type_from_expr(apply.inputs[0])
    return SimpleValue(insert_unchecked_cast(emitter.graph, emitter.emit_expr(apply.inputs[1]), type_))


def emit_uninitialized(emitter, apply, type_hint) -> SugaredValue:
    """`uninitialized(T)`: a value of type T that is never read (prim::Uninitialized)."""
    emitter.check_apply_num_inputs(apply, 1)
    type_ = emitter.type_parser.parse_type_from_expr(apply.inputs[0])
    return SimpleValue(insert_node(emitter.graph, prim.Uninitialized, [], type_, apply.range).output())


def emit_create_object(emitter, apply, type_hint) -> SugaredValue:
    """`C.__new__(C)`: a prim::CreateObject of class C (read as a type, like the callee's owner)."""
    emitter.check_apply_num_inputs(apply, 1)
    class_type = emitter.type_parser.parse_type_from_expr(apply.callee.value)
    if not isinstance(class_type, T.ClassType) or emitter.type_parser.parse_type_from_expr(apply.inputs[0]) \
            is not class_type:
        raise CompileError("__new__ must be called as C.__new__(C) on a class C", apply.range)
    return SimpleValue(insert_node(emitter.graph, prim.CreateObject, [], class_type, apply.range).output())


for _form, _emit in ((prim.unchecked_cast, emit_unchecked_cast), (prim.Uninitialized, emit_uninitialized),
                     (prim.CreateObject, emit_create_object)):
    special_forms.SPECIAL_FORMS.setdefault(_form, _emit)


# ---- helpers ---------------------------------------------------------------------------------------------------
def _base_name(class_def: ClassDef) -> str | None:
    base = class_def.superclass
    if base is None:
        return None
    if not isinstance(base, Var):
        raise CompileError("a class base must be a simple name", base.range)
    return base.name.name


def _field_declaration(statement) -> tuple[str, Any, Any]:
    """`name : T` or `name : T = default` in a NamedTuple body."""
    if not (isinstance(statement, Assign) and len(statement.lhs_list) == 1 and isinstance(statement.lhs_list[0], Var)
            and statement.type is not None):
        raise CompileError("a NamedTuple body holds only `name : Type` fields", statement.range)
    return statement.lhs_list[0].name.name, statement.type, statement.rhs


def literal(expr) -> Any:
    """The value of a constant as printed code writes it: literals, tuples and lists of them, `inf`, `nan`,
    and complex sums such as `2.+1.j`."""
    if isinstance(expr, Var) and expr.name.name in PRINTED_NUMBERS:
        return PRINTED_NUMBERS[expr.name.name]
    if isinstance(expr, UnaryOp) and expr.kind == lx.TK_UNARY_MINUS:
        return -literal(expr.operand)
    if isinstance(expr, BinOp) and expr.kind in ("+", "-"):
        lhs, rhs = literal(expr.lhs), literal(expr.rhs)
        return lhs + rhs if expr.kind == "+" else lhs - rhs
    if isinstance(expr, TupleLiteral | ListLiteral):
        items = [literal(e) for e in expr.inputs]
        return tuple(items) if isinstance(expr, TupleLiteral) else items
    return evaluate_default(expr)


def _is_docstring(statement) -> bool:
    return isinstance(statement, ExprStmt) and isinstance(statement.expr, StringLiteral)


def _string_list(expr) -> list[str]:
    if not (isinstance(expr, ListLiteral) and all(isinstance(e, StringLiteral) for e in expr.inputs)):
        raise CompileError("expected a list of strings", expr.range)
    return [e.text for e in expr.inputs]


def _is_final(type_expr) -> bool:
    return isinstance(type_expr, Subscript) and isinstance(type_expr.value, Var) and \
        type_expr.value.name.name == "Final"
