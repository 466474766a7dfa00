"""`save`: a scripted module (or function) as a TorchScript archive that torch.jit.load and tsjit.load read.

The steps are torch's ScriptModuleSerializer's:

1. `extra/<name>` for each `_extra_files` entry;
2. the module object pickled into `data.pkl`, its tensors' storages into `data/<k>`; the classes of the objects
   met on the way are the first types to print;
3. `code/<qualifier>.py`: every named type the module needs (its class, submodule classes, named tuples, enums,
   interfaces, free functions), each printed into the file of its qualifier; printing a type registers the
   types it uses, which are printed in turn;
4. `constants.pkl`: the tuple of values the code refers to as `CONSTANTS.c<i>` (tensors in `constants/<k>`);
5. `version`: 3, or the newest operator version bump the code relies on (see OPERATOR_VERSIONS), and
   `byteorder`.

A ScriptFunction is saved as torch saves one: as the `forward` of a `__torch__.PlaceholderModule`, without its
argument defaults.
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO

from tsjit.errors import SerializationError
from tsjit.frontend.concrete_module_type import CONCRETE_TYPES, NameMangler
from tsjit.frontend.resolver import in_package
from tsjit.ir import types as T
from tsjit.ir.objects import Object
from tsjit.ir.schema import Argument, FunctionSchema
from tsjit.runtime.function import runtime_function
from tsjit.serialization.archive_writer import ArchiveWriter, archive_name_for, write_archive_bytes
from tsjit.serialization.named_type_printer import NamedTypePrinter
from tsjit.serialization.pickler import Pickler, attribute_state
from tsjit.serialization.python_printer import MIN_PRODUCED_VERSION, DependencyTable

SOURCE_COMPRESSION_THRESHOLD = 200  # torch deflates code files larger than this


def save(module: Any, path_or_file: str | os.PathLike | BinaryIO, _extra_files: dict[str, Any] | None = None
         ) -> None:
    """Write `module` (a scripted module, a runtime module object or a ScriptFunction) as an archive."""
    data = serialize(module, archive_name_for(path_or_file), _extra_files)
    write_archive_bytes(path_or_file, data)


def serialize(module: Any, archive_name: str = "archive", extra_files: dict[str, Any] | None = None) -> bytes:
    """The bytes of the archive for `module`."""
    return ModuleSerializer(archive_name, module_hooks(module)).serialize(root_object(module), extra_files or {})


def root_object(module: Any) -> Any:
    """The runtime object to pickle: a scripted module's `_c`, the object itself, or a placeholder module
    around a ScriptFunction."""
    obj = getattr(module, "_c", module)
    if isinstance(getattr(obj, "type", None), T.ClassType):
        return obj
    if hasattr(module, "graph_function"):
        return placeholder_module(module.graph_function)
    raise SerializationError(f"cannot save a {type(module).__name__}: expected a scripted module or function")


class ModuleSerializer:
    """One archive being written: its printers (one per code file), constant table and named-type table."""

    def __init__(self, archive_name: str, class_hooks=None):
        self.writer = ArchiveWriter(archive_name)
        self.class_hooks = class_hooks
        self.constant_table: list[Any] = []
        self.deps = DependencyTable()
        self.printers: dict[str, NamedTypePrinter] = {}
        self.converted: list[Any] = []
        self.names = TypeNameUniquer()

    def serialize(self, obj: Any, extra_files: dict[str, Any]) -> bytes:
        for name, content in extra_files.items():
            self.writer.write_record(f"extra/{name}", _as_bytes(content, name))
        data = Pickler(object_state=object_state, type_printer=self.names.type_printer)
        self.write_pickle(data, obj, obj.type, "data")
        for class_type in data.class_types:
            self.convert_named_type(class_type)
        self.convert_types(obj.type)
        self.write_code_files()
        constants = Pickler(object_state=object_state, type_printer=self.names.type_printer)
        self.write_pickle(constants, tuple(self.constant_table), None, "constants")
        version = self.version()
        # torch writes versions from 6 on as `.data/version`, and older readers look for `version`
        self.writer.write_record(".data/version" if version >= 6 else "version", f"{version}\n".encode())
        self.writer.write_record("byteorder", b"little")
        return self.writer.finish()

    def write_pickle(self, pickler: Pickler, value: Any, type_: T.Type | None, name: str) -> None:
        """`<name>.pkl` and the storages it refers to, as `<name>/<key>`."""
        data = pickler.dumps(value, type_)
        for record in pickler.storages:
            self.writer.write_record(f"{name}/{record.key}", record.data())
        self.writer.write_record(f"{name}.pkl", data)

    def convert_types(self, root_type: Any) -> None:
        """Print the root type and, transitively, every named type printed code depends on."""
        self.deps.add(root_type)
        index = 0
        while index < len(self.deps):  # printing a type may add more dependencies
            self.convert_named_type(self.deps[index])
            index += 1

    def convert_named_type(self, named_type: Any) -> None:
        if any(named_type is done for done in self.converted):
            return
        self.converted.append(named_type)
        qualifier = self.names.name_of(named_type).rpartition(".")[0]
        printer = self.printers.get(qualifier)
        if printer is None:
            printer = self.printers[qualifier] = NamedTypePrinter(self.constant_table, self.deps, True,
                                                                  self.names.type_printer,
                                                                  class_hooks=self.class_hooks)
        printer.print_named_type(named_type)

    def write_code_files(self) -> None:
        for qualifier, printer in self.printers.items():
            source = printer.text().encode("utf-8")
            path = "code/" + qualifier.replace(".", "/") + ".py"
            self.writer.write_record(path, source, compress=len(source) > SOURCE_COMPRESSION_THRESHOLD)

    def version(self) -> int:
        return max([MIN_PRODUCED_VERSION, *(printer.min_version for printer in self.printers.values())])


class TypeNameUniquer:
    """Archive-wide unique qualified names, as torch's TypeNameUniquer gives them: the first type to claim a
    name keeps it; another type with that name (a class of a loaded archive beside a scripted class of the same
    name, the overloads of F.interpolate) gets `___torch_mangle_<N>` before its last atom. The pickler and the
    printers spell every named type through `type_printer`, so the data and the code agree. Enums keep their
    names (their constants print by name): two enums with one name cannot be saved together."""

    def __init__(self):
        self.names: dict[Any, str] = {}
        self.mangler = NameMangler()

    def name_of(self, named_type: Any) -> str:
        key = _identity_of(named_type)
        if key not in self.names:
            name = qualified_name_of(named_type)
            if isinstance(named_type, T.EnumType) and name in self.mangler.taken:
                raise SerializationError(f"cannot save two different enums named {name}")
            self.names[key] = self.mangler.claim(name)
        return self.names[key]

    def type_printer(self, type_: T.Type) -> str | None:
        """The archive's name for a named type (a class, interface, enum, NamedTuple or function); None for
        the others, which spell themselves."""
        if isinstance(type_, T.ClassType | T.InterfaceType | T.EnumType | T.FunctionType) or (
                isinstance(type_, T.TupleType) and type_.qualified_name is not None):
            return self.name_of(type_)
        return None


def _identity_of(named_type: Any) -> Any:
    """What makes two named types one: the function of a function type, the declaration of a class, interface or
    enum (compared by identity), the fields of a NamedTuple (compared by value, whatever shapes its elements
    were refined to)."""
    if isinstance(named_type, T.FunctionType):
        return id(named_type.function)
    if isinstance(named_type, T.TupleType):
        return T.unshaped_type(named_type)
    return id(named_type)


def qualified_name_of(named_type: Any) -> str:
    if isinstance(named_type, T.FunctionType):
        function = named_type.function
        return getattr(function, "qualname", None) or function.name
    name = getattr(named_type, "qualified_name", None)
    if not name or not in_package(name, "__torch__"):
        raise SerializationError(f"cannot save type {name or named_type!r}: its qualified name must start with "
                                 "__torch__")
    return name


def module_hooks(module: Any):
    """`class_hooks(class_type) -> (pre-hooks, hooks)` for the module classes of a scripted (or loaded)
    module: their concrete module types keep the compiled hooks."""
    known: dict[int, Any] = {}
    pending = [module]
    while pending:
        current = pending.pop()
        concrete_type = getattr(current, "_concrete_type", None)
        if concrete_type is not None:
            known[id(current._c.type)] = concrete_type
            pending.extend(current._modules.values())

    def class_hooks(class_type: T.ClassType) -> tuple[list, list]:
        concrete_type = known.get(id(class_type)) or CONCRETE_TYPES.find(class_type)
        if concrete_type is None:
            return [], []
        return list(concrete_type.pre_hook_functions), list(concrete_type.hook_functions)

    return class_hooks


def object_state(obj: Any) -> tuple[Any, T.Type | None]:
    """A class with `__getstate__` and `__setstate__` pickles what `__getstate__` returns; other objects their
    attributes."""
    methods = obj.type.methods
    if "__getstate__" not in methods or "__setstate__" not in methods:
        return attribute_state(obj)
    getstate = methods["__getstate__"]
    return runtime_function(getstate)(obj), getstate.schema.returns[0].type


def placeholder_module(function: Any) -> Any:
    """The module torch.jit.save writes for a function: `__torch__.PlaceholderModule` with the function as
    `forward` (taking `self`) and a `training` attribute."""
    class_type = T.ClassType("__torch__.PlaceholderModule", is_module=True)
    class_type.add_attribute("training", T.BoolType.get())
    class_type.methods["forward"] = _PlaceholderMethod(function, class_type)
    return Object(class_type, {"training": True})


class _PlaceholderMethod:
    """A function's graph with a `self` input in front, and its schema without defaults."""

    def __init__(self, function: Any, class_type: T.ClassType):
        self.name = "forward"
        self.qualname = "__torch__.PlaceholderModule.forward"
        self.graph = function.graph.copy()
        self.graph.insert_input(0, "self").set_type(class_type)
        schema = function.schema
        arguments = [Argument("self", class_type), *(Argument(a.name, a.type) for a in schema.arguments)]
        self.schema = FunctionSchema("forward", "", arguments, list(schema.returns))


def _as_bytes(content: Any, name: str) -> bytes:
    if isinstance(content, str):
        return content.encode("utf-8")
    if isinstance(content, bytes | bytearray):
        return bytes(content)
    raise SerializationError(f"extra file '{name}' must be str or bytes, not {type(content).__name__}")
