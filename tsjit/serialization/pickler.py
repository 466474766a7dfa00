"""A protocol-2 pickle writer in TorchScript's dialect (data.pkl, constants.pkl).

TorchScript pickles are ordinary pickles that use a handful of globals (interop-facts.md A2). A module with a
parameter and an int attribute pickles as

    GLOBAL '__torch__ M'  EMPTY_TUPLE NEWOBJ               the object, then its state dict
    EMPTY_DICT MARK
      'w' GLOBAL 'torch._utils _rebuild_tensor_v2' MARK     a tensor: a storage reference, offset, size, stride
          MARK 'storage' GLOBAL 'torch FloatStorage' '0' 'cpu' 6 TUPLE BINPERSID
          0 (2, 3) (3, 1) True GLOBAL 'collections OrderedDict' () REDUCE
      TUPLE REDUCE
      'n' 4
    SETITEMS BUILD STOP

Runtime lists and dicts are plain Python containers without element types, so every value is written with
its static TorchScript type: List[int]/float/bool/Tensor use the `build_*list` globals, other lists and dicts
are wrapped in `restore_type_tag(container, "<annotation>")`. Strings and globals are memoized by value,
tensors, containers and objects by identity, as torch's Pickler does. Tensor bytes are not pickled: each
distinct storage gets a key ("0", "1", ...) and is collected in `Pickler.storages` for the archive writer.
"""

from __future__ import annotations

import ctypes
import struct
from collections.abc import Callable
from typing import Any

import torch

from tsjit.errors import SerializationError
from tsjit.ir import types as T
from tsjit.ir.printer import EnumValue

# c10 ScalarType names: the storage class `torch.<Name>Storage` names a storage's dtype
STORAGE_DTYPES: dict[str, torch.dtype] = {
    "Byte": torch.uint8, "Char": torch.int8, "Short": torch.int16, "Int": torch.int32, "Long": torch.int64,
    "Half": torch.float16, "Float": torch.float32, "Double": torch.float64, "ComplexHalf": torch.complex32,
    "ComplexFloat": torch.complex64, "ComplexDouble": torch.complex128, "Bool": torch.bool,
    "BFloat16": torch.bfloat16, "Float8_e5m2": torch.float8_e5m2, "Float8_e4m3fn": torch.float8_e4m3fn,
    "Float8_e5m2fnuz": torch.float8_e5m2fnuz, "Float8_e4m3fnuz": torch.float8_e4m3fnuz,
    "UInt16": torch.uint16, "UInt32": torch.uint32, "UInt64": torch.uint64,
}
STORAGE_NAMES: dict[torch.dtype, str] = {dtype: name for name, dtype in STORAGE_DTYPES.items()}

SPECIALIZED_LISTS: dict[type, str] = {
    T.IntType: "build_intlist", T.FloatType: "build_doublelist", T.BoolType: "build_boollist",
    T.TensorType: "build_tensorlist",
}

# opcodes (pickletools names)
PROTO, STOP, MARK = b"\x80", b".", b"("
GLOBAL, REDUCE, BUILD, NEWOBJ, BINPERSID = b"c", b"R", b"b", b"\x81", b"Q"
NONE, NEWTRUE, NEWFALSE = b"N", b"\x88", b"\x89"
BININT1, BININT2, BININT, LONG1, BINFLOAT, BINUNICODE = b"K", b"M", b"J", b"\x8a", b"G", b"X"
EMPTY_TUPLE, TUPLE1, TUPLE2, TUPLE3, TUPLE = b")", b"\x85", b"\x86", b"\x87", b"t"
EMPTY_LIST, APPENDS, EMPTY_DICT, SETITEMS = b"]", b"e", b"}", b"u"
BINPUT, LONG_BINPUT, BINGET, LONG_BINGET = b"q", b"r", b"h", b"j"

# a hook that gives the state to pickle for a TorchScript object and the state's type: the value of
# `__getstate__` and its return type, or (None for the type) the dict of attributes, written in slot order;
# the module writer gives the Pickler one that can call methods
ObjectState = Callable[[Any], tuple[Any, T.Type | None]]


class StorageRecord:
    """A storage to write as `<dir>/<key>`, and a tensor viewing it (which keeps it alive)."""

    def __init__(self, key: str, tensor: torch.Tensor):
        self.key = key
        self.tensor = tensor

    def data(self) -> bytes:
        """The storage's bytes, little-endian as torch writes them."""
        storage = self.tensor.untyped_storage()
        if storage.device.type != "cpu":
            storage = storage.cpu()
        if storage.nbytes() == 0:
            return b""
        return ctypes.string_at(storage.data_ptr(), storage.nbytes())


class Pickler:
    """Writes TorchScript values as a protocol-2 pickle; `dumps(value, type_)` returns the bytes.

    `object_state(obj)` gives the state of script objects (default: their attributes in slot order);
    `type_printer` the names classes, enums and type tags are written with (default: their own; the archive
    writer passes its unique names, as torch's pickler takes a type renamer).
    Storages get keys in order of first use, shared by every tensor viewing them.
    """

    def __init__(self, object_state: ObjectState | None = None, storage_prefix: str = "",
                 type_printer: T.TypePrinter | None = None):
        self.out = bytearray()
        self.object_state = object_state or attribute_state
        self.type_printer = type_printer
        self.storage_prefix = storage_prefix
        self.storages: list[StorageRecord] = []
        self.class_types: list[T.ClassType] = []  # of the objects pickled, in order of first appearance
        self._memo_next = 0
        self._memo_by_value: dict[tuple[str, Any], int] = {}
        self._memo_by_identity: dict[int, int] = {}
        self._keep_alive: list[Any] = []

    def dumps(self, value: Any, type_: T.Type | None = None) -> bytes:
        """The pickle of `value` with static type `type_` (inferred from the value when None)."""
        self.out += PROTO + b"\x02"
        self.push(value, type_)
        self.out += STOP
        return bytes(self.out)

    # ---- values --------------------------------------------------------------------------------------------
    def push(self, value: Any, type_: T.Type | None = None) -> None:
        """Write one value; mutable values seen before become a memo reference."""
        type_ = _static_type(value, type_)
        if not _memoized_by_identity(value):
            self._push_value(value, type_)
            return
        memo = self._memo_by_identity.get(id(value))
        if memo is not None:
            self._get(memo)
            return
        self._push_value(value, type_)
        self._keep_alive.append(value)
        self._memo_by_identity[id(value)] = self._put()

    def _push_value(self, value: Any, type_: T.Type) -> None:
        if value is None:
            self.out += NONE
        elif isinstance(type_, T.EnumType):  # first: an IntEnum member is also an int
            self.push_enum(value, type_)
        elif isinstance(value, bool):
            self.out += NEWTRUE if value else NEWFALSE
        elif isinstance(value, int):
            self.push_int(value)
        elif isinstance(value, float):
            self.out += BINFLOAT + struct.pack(">d", value)
        elif isinstance(value, str):
            self.push_string(value)
        else:
            self._push_compound(value, type_)

    def _push_compound(self, value: Any, type_: T.Type) -> None:
        if isinstance(value, torch.Tensor):
            self.push_tensor(value)
        elif isinstance(value, tuple) and isinstance(type_, T.ListType):
            self.push_list(list(value), type_)  # a tuple held where the type says List[T] is read as a list
        elif isinstance(value, tuple):
            self.push_tuple(value, type_)
        elif isinstance(value, list):
            self.push_list(value, type_)
        elif isinstance(value, dict):
            self.push_dict(value, type_)
        elif isinstance(value, complex):
            self.push_reduce("builtins", "complex", lambda: self._push_items((value.real, value.imag), TUPLE2))
        elif isinstance(value, torch.device):
            self.push_device(value)
        elif isinstance(getattr(value, "type", None), T.ClassType):
            self.push_object(value)
        else:
            raise SerializationError(f"cannot pickle a value of Python type '{type(value).__name__}'")

    def push_int(self, value: int) -> None:
        if 0 <= value < 1 << 8:
            self.out += BININT1 + struct.pack("<B", value)
        elif 0 <= value < 1 << 16:
            self.out += BININT2 + struct.pack("<H", value)
        elif -(1 << 31) <= value < 1 << 31:
            self.out += BININT + struct.pack("<i", value)
        elif -(1 << 63) <= value < 1 << 63:
            self.out += LONG1 + b"\x08" + struct.pack("<q", value)
        else:
            raise SerializationError(f"integer {value} does not fit in 64 bits")

    def push_string(self, value: str) -> None:
        """A BINUNICODE, memoized by value (torch's pickles reuse attribute names through the memo)."""
        key = ("str", value)
        if key in self._memo_by_value:
            self._get(self._memo_by_value[key])
            return
        data = value.encode("utf-8", "surrogatepass")
        self.out += BINUNICODE + struct.pack("<I", len(data)) + data
        self._memo_by_value[key] = self._put()

    def push_global(self, module: str, name: str) -> None:
        """`GLOBAL module name`, memoized by name."""
        key = ("global", f"{module}\n{name}\n")
        if key in self._memo_by_value:
            self._get(self._memo_by_value[key])
            return
        self.out += GLOBAL + key[1].encode("utf-8")
        self._memo_by_value[key] = self._put()

    def push_reduce(self, module: str, name: str, push_arguments: Callable[[], None]) -> None:
        """`GLOBAL; <argument tuple>; REDUCE`: a call of one of the format's globals."""
        self.push_global(module, name)
        push_arguments()
        self.out += REDUCE

    def push_device(self, device: torch.device) -> None:
        self.push_reduce("torch", "device", lambda: self._push_items((str(device),), TUPLE1))

    def push_tuple(self, value: tuple, type_: T.Type) -> None:
        element_types = _element_types(type_, len(value))
        if not value:
            self.out += EMPTY_TUPLE
            return
        ending = {1: TUPLE1, 2: TUPLE2, 3: TUPLE3}.get(len(value))
        if ending is None:
            self.out += MARK
        for element, element_type in zip(value, element_types):
            self.push(element, element_type)
        self.out += ending or TUPLE

    def push_list(self, value: list, type_: T.Type) -> None:
        element_type = _list_element_type(type_)
        builder = SPECIALIZED_LISTS.get(type(element_type))
        if builder is not None:
            self.push_reduce("torch.jit._pickle", builder, lambda: self._list_argument(value, element_type))
            return
        self.push_global("torch.jit._pickle", "restore_type_tag")
        self._list_body(value, element_type)
        self.push_string(T.unshaped_type(type_).annotation_str(self.type_printer))
        self.out += TUPLE2 + REDUCE

    def _list_argument(self, value: list, element_type: T.Type) -> None:
        self.out += MARK
        self._list_body(value, element_type)
        self.out += TUPLE

    def _list_body(self, value: list, element_type: T.Type) -> None:
        self.out += EMPTY_LIST + MARK
        for element in value:
            self.push(element, element_type)
        self.out += APPENDS

    def push_dict(self, value: dict, type_: T.Type) -> None:
        key_type, value_type = _dict_types(type_)
        self.push_global("torch.jit._pickle", "restore_type_tag")
        self.out += EMPTY_DICT + MARK
        for key, item in value.items():
            self.push(key, key_type)
            self.push(item, value_type)
        self.out += SETITEMS
        self.push_string(T.unshaped_type(type_).annotation_str(self.type_printer))
        self.out += TUPLE2 + REDUCE

    def push_tensor(self, tensor: torch.Tensor) -> None:
        """`_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, OrderedDict())`."""
        _check_plain_tensor(tensor)
        self.push_global("torch._utils", "_rebuild_tensor_v2")
        self.out += MARK
        self.push_storage(tensor)
        self.push_int(tensor.storage_offset())
        self._push_items(tuple(tensor.size()), TUPLE)
        self._push_items(tuple(tensor.stride()), TUPLE)
        self.out += NEWTRUE if tensor.requires_grad else NEWFALSE
        self.push_reduce("collections", "OrderedDict", lambda: self._push_items((), EMPTY_TUPLE))
        self.out += TUPLE + REDUCE

    def push_storage(self, tensor: torch.Tensor) -> None:
        """The persistent id `('storage', torch.<Dtype>Storage, key, location, numel)`, once per storage."""
        storage = tensor.untyped_storage()
        identity = ("storage", storage._cdata, tensor.dtype)
        if identity in self._memo_by_value:
            self._get(self._memo_by_value[identity])
            return
        key = self._storage_key(storage._cdata, tensor)
        self.out += MARK
        self.push_string("storage")
        self.push_global("torch", STORAGE_NAMES[tensor.dtype] + "Storage")
        self.push_string(key)
        self.push_string(str(tensor.device))
        self.push_int(storage.nbytes() // tensor.element_size())
        self.out += TUPLE + BINPERSID
        self._memo_by_value[identity] = self._put()

    def _storage_key(self, storage_id: int, tensor: torch.Tensor) -> str:
        """The archive key of a storage: shared by every dtype viewing it, new keys in order of first use."""
        for record in self.storages:
            if record.tensor.untyped_storage()._cdata == storage_id:
                return record.key
        record = StorageRecord(self.storage_prefix + str(len(self.storages)), tensor)
        self.storages.append(record)
        return record.key

    def push_object(self, obj: Any) -> None:
        """`GLOBAL '<qualifier> <Name>'; (); NEWOBJ; <state>; BUILD`."""
        if not any(obj.type is known for known in self.class_types):
            self.class_types.append(obj.type)
        qualifier, _, name = obj.type.annotation_str(self.type_printer).rpartition(".")
        self.push_global(qualifier, name)
        self.out += EMPTY_TUPLE + NEWOBJ
        state, state_type = self.object_state(obj)
        if state_type is None:
            self._push_attribute_state(state, obj.type)
        else:
            self.push(state, state_type)
        self.out += BUILD

    def _push_attribute_state(self, state: dict[str, Any], class_type: T.ClassType) -> None:
        self.out += EMPTY_DICT + MARK
        for attribute in class_type.attributes:
            if attribute.name not in state:
                raise SerializationError(f"object of type {class_type.qualified_name} has no value for "
                                         f"attribute '{attribute.name}'")
            self.push_string(attribute.name)
            self.push(state[attribute.name], attribute.type)
        self.out += SETITEMS

    def push_enum(self, value: Any, enum_type: T.EnumType) -> None:
        """`GLOBAL '<qualifier> <Enum>'; <value>; REDUCE` (the argument is the bare value, not a tuple)."""
        qualifier, _, name = enum_type.annotation_str(self.type_printer).rpartition(".")
        self.push_reduce(qualifier, name, lambda: self.push(value.value, enum_type.value_type))

    # ---- helpers -------------------------------------------------------------------------------------------
    def _push_items(self, items: tuple, ending: bytes) -> None:
        """Push `items` and build a tuple of them with `ending` (TUPLE adds the MARK it needs)."""
        if ending == TUPLE:
            self.out += MARK
        for item in items:
            self.push(item)
        self.out += ending

    def _put(self) -> int:
        memo = self._memo_next
        self._memo_next += 1
        self.out += BINPUT + struct.pack("<B", memo) if memo < 256 else LONG_BINPUT + struct.pack("<I", memo)
        return memo

    def _get(self, memo: int) -> None:
        self.out += BINGET + struct.pack("<B", memo) if memo < 256 else LONG_BINGET + struct.pack("<I", memo)


def attribute_state(obj: Any) -> tuple[dict[str, Any], None]:
    """The default object state: every attribute, read from the runtime object."""
    state = {}
    for name in obj.type.attribute_names:
        value = getattr(obj, name, _MISSING)
        if value is not _MISSING:
            state[name] = value
    return state, None


_MISSING = object()


def _memoized_by_identity(value: Any) -> bool:
    return isinstance(value, list | dict | torch.Tensor) or isinstance(getattr(value, "type", None), T.ClassType)


def _static_type(value: Any, type_: T.Type | None) -> T.Type:
    """The type to write `value` with: the static type, narrowed through Optional/Union/Any to the value's."""
    if type_ is None or isinstance(type_, T.AnyType | T.UnionType | T.AnyListType | T.AnyTupleType):
        return _type_of(value)
    if isinstance(type_, T.OptionalType):
        return _static_type(value, None if value is None else type_.elem)
    return type_


def _type_of(value: Any) -> T.Type:
    if isinstance(value, EnumValue):
        return value.enum_type
    runtime_type = getattr(value, "type", None)
    if isinstance(runtime_type, T.ClassType | T.EnumType):
        return runtime_type
    try:
        return T.type_of(value)
    except Exception as error:  # TsjitError for values without a TorchScript type
        raise SerializationError(f"cannot pickle {type(value).__name__} value: {error}") from None


def _element_types(type_: T.Type, count: int) -> tuple[T.Type | None, ...]:
    if isinstance(type_, T.TupleType) and len(type_.elements) == count:
        return tuple(type_.elements)
    return (None,) * count


def _list_element_type(type_: T.Type) -> T.Type:
    if not isinstance(type_, T.ListType):
        raise SerializationError(f"a list value has static type {type_.annotation_str()}")
    return type_.elem


def _dict_types(type_: T.Type) -> tuple[T.Type, T.Type]:
    if not isinstance(type_, T.DictType):
        raise SerializationError(f"a dict value has static type {type_.annotation_str()}")
    return type_.key, type_.value


def _check_plain_tensor(tensor: torch.Tensor) -> None:
    if tensor.layout != torch.strided or tensor.is_quantized or tensor.dtype not in STORAGE_NAMES:
        raise SerializationError(f"cannot save a tensor with layout {tensor.layout} and dtype {tensor.dtype}")
