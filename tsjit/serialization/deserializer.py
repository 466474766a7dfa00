"""`load`: a TorchScript archive (written by torch.jit.save or tsjit.save) as a runnable module object.

tsjit.load (tsjit.api.archive) wraps the object as the RecursiveScriptModule users hold.

The steps are torch's ScriptModuleDeserializer's:

1. the zip is checked (archive_reader.py) and its `version` read;
2. `constants.pkl` is unpickled (storages from `constants/<k>`): the values of `CONSTANTS.c<i>`;
3. `data.pkl` is unpickled (storages from `data/<k>`); every class GLOBAL it names is compiled from the code/
   files on the spot (source_importer.py), and objects are built from their pickled state: attribute values
   by name, or through the class's `__setstate__`;
4. every function and method of the archive is compiled, so bad code fails here and not at the first call;
5. `_extra_files` entries named by the caller are filled from `extra/`.

The unpickler runs no Python: it knows the globals of the format and the archive's own classes, nothing else.
Every failure is a SerializationError naming the archive and the member at fault.
"""

from __future__ import annotations

import os
from typing import Any, BinaryIO

import torch

from tsjit.errors import SerializationError, TsjitError
from tsjit.ir import types as T
from tsjit.ir.objects import Object
from tsjit.ir.printer import EnumValue
from tsjit.runtime.function import runtime_function
from tsjit.serialization.archive_reader import DEFAULT_LIMITS, ArchiveLimits, ArchiveReader
from tsjit.serialization.source_importer import SourceImporter
from tsjit.serialization.unpickler import UnpicklerHooks, loads
from tsjit.serialization.untrusted import refuse_outside_world, run_with_step_budget
from tsjit.serialization.value_types import ValueTypeChecker


def load(path_or_file: str | os.PathLike | BinaryIO | bytes, _extra_files: dict[str, Any] | None = None,
         map_location: str | torch.device | None = None, _limits: ArchiveLimits = DEFAULT_LIMITS,
         trusted: bool = True) -> tuple[Any, Any]:
    """The module object saved in an archive (a path, a binary file or bytes), and its `class_hooks`
    (class type -> forward pre-hooks and hooks), which tsjit.api.module.wrap_module needs. With
    `trusted=False`, an archive whose code reaches outside the program is refused and `__setstate__` runs under a
    step budget (untrusted.py)."""
    reader = ArchiveReader(path_or_file, _limits)
    try:
        reader.refuse_torch_save_file()
        deserializer = ModuleDeserializer(reader, map_location, trusted)
        root = deserializer.deserialize()
        if _extra_files is not None:
            read_extra_files(reader, _extra_files)
    finally:
        reader.close()
    return root, deserializer.importer.class_hooks


def read_extra_files(reader: ArchiveReader, extra_files: dict[str, Any]) -> None:
    """Fill the entries the caller named with the bytes of `extra/<name>` (missing ones stay as they are)."""
    for name in list(extra_files):
        if reader.has_record(f"extra/{name}"):
            extra_files[name] = reader.read_record(f"extra/{name}")


class ModuleDeserializer:
    """One archive being loaded: its reader, its source importer and the storages read so far."""

    def __init__(self, reader: ArchiveReader, map_location: str | torch.device | None = None, trusted: bool = True):
        self.reader = reader
        self.trusted = trusted
        self.device = _device(map_location)
        self.byteorder = reader.byteorder()
        self.importer = SourceImporter(reader, reader.version())

    def deserialize(self) -> Any:
        if self.reader.has_record("constants.pkl"):
            constants = self.unpickle("constants")
            if not isinstance(constants, tuple):
                raise SerializationError(f"{self.reader.label}: constants.pkl does not hold a tuple")
            self.importer.constants = constants
        if not self.trusted:
            refuse_outside_world(self.importer, self.reader.label)
        root = self.unpickle("data")
        if not isinstance(getattr(root, "type", None), T.ClassType) or not root.type.is_module:
            raise SerializationError(f"{self.reader.label}: data.pkl does not hold a module")
        self.importer.define_all()
        return root

    def unpickle(self, name: str) -> Any:
        """The value of `<name>.pkl`, its storages read from `<name>/<key>`."""
        member = f"{name}.pkl"
        if not self.reader.has_record(member):
            raise SerializationError(f"{self.reader.label} has no {member}")
        hooks = ArchiveHooks(self, name)
        try:
            return loads(self.reader.read_record(member), f"{self.reader.label}: {self.reader.prefix}{member}",
                         hooks, self.reader.limits)
        except RecursionError:
            raise SerializationError(f"{self.reader.label}: {member} nests too deeply") from None


class ArchiveHooks(UnpicklerHooks):
    """What one pickle of the archive may refer to: its storage directory and the archive's classes."""

    def __init__(self, deserializer: ModuleDeserializer, directory: str):
        self.deserializer = deserializer
        self.reader = deserializer.reader
        self.directory = directory
        self.storages: dict[str, torch.UntypedStorage] = {}
        self.value_types = ValueTypeChecker()

    def load_storage(self, key: str, dtype: torch.dtype, location: str, numel: int) -> torch.UntypedStorage:
        """The storage `<dir>/<key>`, read once and shared by every tensor viewing it."""
        record = f"{self.directory}/{key}"
        nbytes = numel * torch.empty(0, dtype=dtype).element_size()
        storage = self.storages.get(key)
        if storage is None:
            storage = self.storages[key] = self.read_storage(record, nbytes, dtype, location)
        if storage.nbytes() != nbytes:
            raise SerializationError(f"{self.reader.label}: storage {record} is {storage.nbytes()} bytes, but a "
                                     f"tensor needs {numel} elements of {dtype}")
        return storage

    def read_storage(self, record: str, nbytes: int, dtype: torch.dtype, location: str) -> torch.UntypedStorage:
        data = self.reader.read_record(record) if nbytes else b""
        if len(data) != nbytes:
            raise SerializationError(f"{self.reader.label}: storage {self.reader.prefix}{record} holds "
                                     f"{len(data)} bytes, expected {nbytes}")
        flat = torch.frombuffer(bytearray(data), dtype=torch.uint8) if data else torch.empty(0, dtype=torch.uint8)
        if self.deserializer.byteorder == "big":
            flat = _swap_bytes(flat, dtype)
        device = self.deserializer.device or _location_device(location, self.reader.label)
        if device.type != "cpu":
            try:
                flat = flat.to(device)
            except (RuntimeError, AssertionError) as error:  # torch asserts that CUDA was compiled in
                raise SerializationError(f"{self.reader.label}: storage {self.reader.prefix}{record} is located "
                                         f"on '{location}', which is not available here ({error}); load with "
                                         "map_location='cpu'") from None
        return flat.untyped_storage()

    def resolve_class(self, qualified_name: str) -> T.ClassType | T.EnumType | None:
        found = self.deserializer.importer.lookup(qualified_name)
        return found if isinstance(found, T.ClassType | T.EnumType) else None

    def create_object(self, class_type: T.ClassType, state: Any) -> Any:
        if "__setstate__" in class_type.methods:
            return self.restore_with_setstate(class_type, state)
        if not isinstance(state, dict):
            raise SerializationError(f"{self.reader.label}: the state of a {class_type.qualified_name} object "
                                     "is not a dict of attributes")
        missing = [name for name in class_type.attribute_names if name not in state]
        if missing:
            raise SerializationError(f"{self.reader.label}: a {class_type.qualified_name} object has no value "
                                     f"for attribute(s) {', '.join(missing)}")
        for attribute in class_type.attributes:
            value = state[attribute.name]
            if not self.value_types.matches(value, attribute.type):
                raise SerializationError(f"{self.reader.label}: attribute '{attribute.name}' of a "
                                         f"{class_type.qualified_name} object is declared "
                                         f"{attribute.type.annotation_str()} but data.pkl gives it {_describe(value)}")
        return Object(class_type, {name: state[name] for name in class_type.attribute_names})

    def restore_with_setstate(self, class_type: T.ClassType, state: Any) -> Any:
        """Call the class's `__setstate__`; then no attribute that cannot be None may still be None."""
        obj = Object(class_type, dict.fromkeys(class_type.attribute_names))
        setstate = class_type.methods["__setstate__"]
        self.deserializer.importer.define(setstate)
        try:
            if self.deserializer.trusted:
                runtime_function(setstate)(obj, state)
            else:
                run_with_step_budget(runtime_function(setstate).graph, (obj, state), self.reader.limits)
        except TsjitError as error:
            raise SerializationError(f"{self.reader.label}: {class_type.qualified_name}.__setstate__ failed: "
                                     f"{error}") from None
        for attribute in class_type.attributes:
            if getattr(obj, attribute.name) is None and not _can_be_none(attribute.type):
                raise SerializationError(f"{self.reader.label}: __setstate__ of {class_type.qualified_name} left "
                                         f"attribute '{attribute.name}' uninitialized")
        return obj

    def enum_value(self, enum_type: T.EnumType, value: Any) -> Any:
        for name, member_value in enum_type.names_values:
            if member_value == value and type(member_value) is type(value):
                return EnumValue(enum_type, name, member_value)
        raise SerializationError(f"{self.reader.label}: {value!r} is not a value of enum {enum_type.qualified_name}")


def _device(map_location: str | torch.device | None) -> torch.device | None:
    if map_location is None:
        return None
    try:
        return torch.device(map_location)
    except (RuntimeError, TypeError) as error:
        raise SerializationError(f"map_location {map_location!r} is not a device: {error}") from None


def _location_device(location: str, label: str) -> torch.device:
    try:
        return torch.device(location)
    except RuntimeError:
        raise SerializationError(f"{label}: unknown storage location {location!r}") from None


def _swap_bytes(flat: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """Big-endian storage bytes in the host's (little-endian) order."""
    itemsize = torch.empty(0, dtype=dtype).element_size()
    if itemsize == 1 or flat.numel() == 0:
        return flat
    return flat.view(-1, itemsize).flip(1).reshape(-1).contiguous()


def _can_be_none(type_: T.Type) -> bool:
    return isinstance(type_, T.OptionalType | T.NoneType | T.AnyType) or (
        isinstance(type_, T.UnionType) and type_.can_hold_type(T.NoneType.get()))


def _describe(value: Any) -> str:
    """A value's kind for an error message, without printing a value that may be huge."""
    if isinstance(value, list | tuple | dict):
        return f"a {type(value).__name__} of {len(value)} element(s)"
    class_type = getattr(value, "type", None)
    if isinstance(class_type, T.Type):
        return f"a {class_type} object"
    return f"a value of Python type {type(value).__name__}"
