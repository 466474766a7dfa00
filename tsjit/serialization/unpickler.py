"""A restricted unpickler for TorchScript's pickle dialect: an opcode interpreter that imports nothing.

Python's pickle.Unpickler resolves GLOBAL opcodes by importing modules; even with `find_class` overridden, a
pickle is a program, and the safest reader is one that cannot express anything but data. This one implements
the protocol-2 opcodes torch writes and reads (interop-facts.md A2) over a stack, a mark stack and a memo, as
torch's C++ Unpickler does, and gives meaning to exactly these globals:

    torch._utils _rebuild_tensor_v2      a tensor over a storage reference (BINPERSID)
    torch <Dtype>Storage                 a storage's dtype, inside a persistent id
    torch device / builtins complex      a Device / a complex number
    collections OrderedDict              a tensor's (always empty) backward hooks: read as None
    torch.jit._pickle build_intlist ...  typed lists, and restore_type_tag(container, "<type>")
    __torch__.<qualifier> <Name>         a TorchScript class or enum, if `hooks.resolve_class` knows it

Anything else, a malformed opcode stream or a value of the wrong kind is a SerializationError naming the
archive member and the byte offset. As in torch, NEWOBJ drops its (empty) argument tuple and BUILD and REDUCE
both call the pending global with the value on top of the stack.
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import Any

import torch

from tsjit.errors import SerializationError
from tsjit.ir import types as T
from tsjit.serialization.archive_reader import DEFAULT_LIMITS, ArchiveLimits
from tsjit.serialization.pickler import STORAGE_DTYPES


class UnpicklerHooks:
    """What the archive gives the unpickler: storages and classes. The defaults refuse both."""

    def load_storage(self, key: str, dtype: torch.dtype, location: str, numel: int) -> torch.UntypedStorage:
        raise SerializationError(f"the pickle refers to storage '{key}' but has no storages")

    def resolve_class(self, qualified_name: str) -> T.ClassType | T.EnumType | None:
        return None

    def create_object(self, class_type: T.ClassType, state: Any) -> Any:
        raise SerializationError(f"cannot create objects of class {class_type.qualified_name}")

    def enum_value(self, enum_type: T.EnumType, value: Any) -> Any:
        raise SerializationError(f"cannot create values of enum {enum_type.qualified_name}")


class _Global:
    """A GLOBAL on the stack: the function REDUCE or BUILD applies to the value on top of the stack."""

    def __init__(self, name: str, apply: Callable[[Any], Any]):
        self.name = name
        self.apply = apply


class _StorageType:
    """`torch <Dtype>Storage`: only meaningful inside a persistent id."""

    def __init__(self, dtype: torch.dtype):
        self.dtype = dtype


class _Storage:
    """A loaded storage (the result of BINPERSID) and the dtype it was pickled with."""

    def __init__(self, storage: torch.UntypedStorage, dtype: torch.dtype, numel: int):
        self.storage = storage
        self.dtype = dtype
        self.numel = numel


_INTERNAL = (_Global, _StorageType, _Storage)
_HASHABLE_KEYS = (str, int, float, bool, complex, torch.Tensor, torch.device)


class Unpickler:
    """Reads one TorchScript pickle; `load()` returns its value."""

    def __init__(self, data: bytes, member: str, hooks: UnpicklerHooks | None = None,
                 limits: ArchiveLimits = DEFAULT_LIMITS):
        self.data = bytes(data)
        self.member = member
        self.hooks = hooks or UnpicklerHooks()
        self.limits = limits
        # How deeply each container nests, and the containers holding it (by id; the objects are kept alive
        # here, so ids are not reused), so that nesting is bounded however the pickle builds it (a container
        # may be filled after it was put into another, or into itself): code that walks a value recursively
        # must not reach Python's recursion limit.
        self._depths: dict[int, int] = {}
        self._holder: dict[int, Any] = {}  # id of a container -> the first container holding it
        self._more_holders: dict[int, list[Any]] = {}  # ... -> the others (a memo shares containers)
        self._kept: list[Any] = []  # every container recorded in these dicts (few objects: the GC is slow)
        self.pos = 0
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}
        # Tuples holding a global or storage reference, at any depth, by id (the tuples themselves are kept
        # alive, so ids are not reused). Marked as they are built, so that checking a value costs O(1) however
        # deeply the memo shares tuples: walking them instead took 4x longer per 2 levels of sharing.
        self._tuples_with_references: dict[int, tuple] = {}

    def load(self) -> Any:
        """Run the opcodes up to STOP; the pickle must leave exactly one value."""
        if self._read(1) != b"\x80" or self._read(1) != b"\x02":
            self.fail("not a protocol-2 pickle (expected PROTO 2 at the start)", 0)
        while True:
            start = self.pos
            opcode = self._read(1)
            if opcode == b".":
                return self._result(start)
            handler = _OPCODES.get(opcode)
            if handler is None:
                self.fail(f"unsupported pickle opcode {opcode!r}", start)
            try:
                handler(self)
            except SerializationError:
                raise
            except (TypeError, ValueError, OverflowError, RuntimeError, IndexError) as error:
                self.fail(str(error), start)

    def _result(self, position: int) -> Any:
        if len(self.stack) != 1 or self.marks:
            self.fail(f"the pickle ended with {len(self.stack)} values on the stack instead of 1", position)
        return self._value(self.stack[0])

    def fail(self, message: str, position: int | None = None) -> None:
        at = self.pos if position is None else position
        raise SerializationError(f"{self.member}: {message} (at byte {at})")

    # ---- reading bytes -------------------------------------------------------------------------------------
    def _read(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            self.fail("the pickle is truncated")
        chunk = self.data[self.pos:self.pos + n]
        self.pos += n
        return chunk

    def _unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self._read(struct.calcsize(fmt)))[0]

    def _line(self) -> str:
        end = self.data.find(b"\n", self.pos, self.pos + 4096)
        if end < 0:
            self.fail("unterminated GLOBAL name")
        text = self._read(end - self.pos + 1)[:-1]
        try:
            return text.decode("ascii")
        except UnicodeDecodeError:
            self.fail("GLOBAL name is not ASCII")

    # ---- stack ---------------------------------------------------------------------------------------------
    def push(self, value: Any) -> None:
        self.stack.append(value)

    def pop(self) -> Any:
        if not self.stack or (self.marks and len(self.stack) <= self.marks[-1]):
            self.fail("pop from an empty stack")
        return self.stack.pop()

    def top(self) -> Any:
        if not self.stack:
            self.fail("the stack is empty")
        return self.stack[-1]

    def pop_mark(self) -> list[Any]:
        """The values pushed since the last MARK (removed from the stack)."""
        if not self.marks:
            self.fail("no MARK for this opcode")
        start = self.marks.pop()
        items = self.stack[start:]
        del self.stack[start:]
        return items

    def _value(self, value: Any) -> Any:
        """`value` as data: a global or storage reference (also inside tuples) where data is expected is an
        error. Tuples may hold them only on their way into a persistent id or a tensor rebuild."""
        if isinstance(value, _INTERNAL) or id(value) in self._tuples_with_references:
            self.fail("a global or storage reference is used as a value")
        return value

    def _push_tuple(self, items: list[Any]) -> None:
        built = tuple(items)
        if any(isinstance(v, _INTERNAL) or id(v) in self._tuples_with_references for v in built):
            self._tuples_with_references[id(built)] = built
        self._nest(built, built)
        self.push(built)

    def _nest(self, container: Any, items: Any) -> None:
        """Record that `container` holds `items`; fail if values now nest deeper than the limit. A depth that
        grows is passed on to every container holding this one: each container's depth grows at most
        max_nesting times, so the work stays linear in the pickle."""
        deepest = 0
        for item in items:
            if isinstance(item, list | tuple | dict):
                key = id(item)
                if key not in self._holder:
                    self._holder[key] = container
                    self._kept.append(item)
                else:
                    self._more_holders.setdefault(key, []).append(container)
                deepest = max(deepest, self._depths.get(key, 1))
        if deepest:
            self._raise_depth(container, deepest + 1)

    def _raise_depth(self, container: Any, depth: int) -> None:
        pending = [(container, depth)]
        while pending:
            container, depth = pending.pop()
            key = id(container)
            if depth <= self._depths.get(key, 1):
                continue
            if depth > self.limits.max_nesting:
                self.fail(self.limits.exceeded("values nest too deeply (or a container holds itself)",
                                               "max_nesting"))
            if key not in self._depths:
                self._kept.append(container)
            self._depths[key] = depth
            if key in self._holder:
                pending.append((self._holder[key], depth + 1))
                pending.extend((holder, depth + 1) for holder in self._more_holders.get(key, ()))

    # ---- opcodes -------------------------------------------------------------------------------------------
    def op_mark(self) -> None:
        self.marks.append(len(self.stack))

    def op_int(self, fmt: str) -> None:
        self.push(self._unpack(fmt))

    def op_long1(self) -> None:
        length = self._unpack("<B")
        if length > 8:
            self.fail(f"a {length}-byte integer does not fit in 64 bits")
        self.push(int.from_bytes(self._read(length), "little", signed=True))

    def op_binfloat(self) -> None:
        self.push(self._unpack(">d"))

    def op_binunicode(self) -> None:
        length = self._unpack("<I")
        try:
            self.push(self._read(length).decode("utf-8"))
        except UnicodeDecodeError:
            self.fail("a string is not valid UTF-8")

    def op_tuple(self) -> None:
        self._push_tuple(self.pop_mark())

    def op_tuple_n(self, n: int) -> None:
        items = [self.pop() for _ in range(n)]
        self._push_tuple(items[::-1])

    def op_appends(self) -> None:
        items = self.pop_mark()
        target = self.top()
        if not isinstance(target, list):
            self.fail("APPENDS to a value that is not a list")
        target.extend(self._value(v) for v in items)
        self._nest(target, items)

    def op_list(self) -> None:
        items = [self._value(v) for v in self.pop_mark()]
        self._nest(items, items)
        self.push(items)

    def op_dict(self) -> None:
        result: dict[Any, Any] = {}
        self._set_items(result, self.pop_mark())
        self.push(result)

    def op_setitems(self) -> None:
        items = self.pop_mark()
        target = self.top()
        if not isinstance(target, dict):
            self.fail("SETITEMS on a value that is not a dict")
        self._set_items(target, items)

    def op_setitem(self) -> None:
        value, key = self.pop(), self.pop()
        target = self.top()
        if not isinstance(target, dict):
            self.fail("SETITEM on a value that is not a dict")
        self._set_items(target, [key, value])

    def _set_items(self, target: dict, items: list[Any]) -> None:
        if len(items) % 2:
            self.fail("a dict needs an even number of keys and values")
        for key, value in zip(items[::2], items[1::2]):
            if not isinstance(key, _HASHABLE_KEYS):
                self.fail(f"a dict key of type {type(key).__name__}")
            target[key] = self._value(value)
        self._nest(target, items[1::2])

    def op_put(self, fmt: str) -> None:
        index = self._unpack(fmt)
        if index not in self.memo and len(self.memo) >= self.limits.max_memo_entries:
            self.fail(self.limits.exceeded("the memo is full", "max_memo_entries"))
        self.memo[index] = self.top()

    def op_get(self, fmt: str) -> None:
        index = self._unpack(fmt)
        if index not in self.memo:
            self.fail(f"memo entry {index} is read before it is written")
        self.push(self.memo[index])

    def op_global(self) -> None:
        module, name = self._line(), self._line()
        self.push(self._global(module, name))

    def op_newobj(self) -> None:
        if not isinstance(self.pop(), tuple):
            self.fail("NEWOBJ needs an argument tuple")
        if not isinstance(self.top(), _Global):
            self.fail("NEWOBJ of something that is not a class")

    def op_reduce(self) -> None:
        argument, function = self.pop(), self.pop()
        if not isinstance(function, _Global):
            self.fail("REDUCE or BUILD applied to a value that is not a global")
        self.push(function.apply(argument))

    def op_binpersid(self) -> None:
        pid = self.pop()
        if not (isinstance(pid, tuple) and len(pid) == 5 and pid[0] == "storage"):
            self.fail("a persistent id must be ('storage', dtype, key, location, numel)")
        _, storage_type, key, location, numel = pid
        if not (isinstance(storage_type, _StorageType) and isinstance(key, str) and isinstance(location, str)
                and _is_int(numel) and numel >= 0):
            self.fail(f"malformed storage reference {pid!r}")
        storage = self.hooks.load_storage(key, storage_type.dtype, location, numel)
        self.push(_Storage(storage, storage_type.dtype, numel))

    # ---- globals -------------------------------------------------------------------------------------------
    def _global(self, module: str, name: str) -> Any:
        """The meaning of `GLOBAL module name`; never an import."""
        known = _GLOBALS.get((module, name))
        if known is not None:
            return _Global(f"{module}.{name}", lambda argument: known(self, argument))
        if module == "torch" and name.endswith("Storage") and name[:-len("Storage")] in STORAGE_DTYPES:
            return _StorageType(STORAGE_DTYPES[name[:-len("Storage")]])
        if module != "__torch__" and not module.startswith("__torch__."):
            self.fail(f"the pickle refers to '{module}.{name}', which TorchScript archives do not use")
        return self._class_global(f"{module}.{name}")

    def _class_global(self, qualified_name: str) -> _Global:
        class_type = self.hooks.resolve_class(qualified_name)
        if isinstance(class_type, T.EnumType):
            return _Global(qualified_name, lambda value: self.hooks.enum_value(class_type, self._value(value)))
        if isinstance(class_type, T.ClassType):
            return _Global(qualified_name, lambda state: self.hooks.create_object(class_type, self._value(state)))
        self.fail(f"the pickle refers to '{qualified_name}', which is not a TorchScript class of this archive")

    def rebuild_tensor(self, arguments: Any) -> torch.Tensor:
        """`_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])`."""
        if not (isinstance(arguments, tuple) and 5 <= len(arguments) <= 7):
            self.fail("_rebuild_tensor_v2 needs (storage, offset, size, stride, requires_grad, ...)")
        storage, offset, size, stride, requires_grad = arguments[:5]
        if not isinstance(storage, _Storage):
            self.fail("_rebuild_tensor_v2 needs a storage reference as its first argument")
        self._check_view(storage, offset, size, stride)
        tensor = torch.empty(0, dtype=storage.dtype, device=storage.storage.device)
        tensor.set_(storage.storage, offset, size, stride)
        if requires_grad is True:
            self._require_grad(tensor)
        return tensor

    def _check_view(self, storage: _Storage, offset: Any, size: Any, stride: Any) -> None:
        """A tensor must lie inside its storage (torch's set_ would silently grow it)."""
        if not (_is_int(offset) and offset >= 0 and _int_tuple(size) and _int_tuple(stride)):
            self.fail("a tensor's offset, size and stride must be non-negative integers")
        if len(size) != len(stride):
            self.fail(f"a tensor has size {size} but stride {stride}")
        if 0 in size:
            return
        last = offset + sum((n - 1) * s for n, s in zip(size, stride))
        if last >= storage.numel:
            self.fail(f"a tensor (offset {offset}, size {size}, stride {stride}) reaches past the end of its "
                      f"storage of {storage.numel} elements")

    def _require_grad(self, tensor: torch.Tensor) -> None:
        if not (tensor.is_floating_point() or tensor.is_complex()):
            self.fail(f"a {tensor.dtype} tensor cannot require gradients")
        tensor.requires_grad_(True)

    def typed_list(self, arguments: Any, element: type | tuple[type, ...]) -> list:
        """`build_intlist((items,))` and friends: a list whose elements must all be of one kind."""
        if not (isinstance(arguments, tuple) and len(arguments) == 1 and isinstance(arguments[0], list)):
            self.fail("a typed list global needs a 1-tuple holding a list")
        items = self._value(arguments[0])
        if not all(isinstance(v, element) and not (element is int and isinstance(v, bool)) for v in items):
            self.fail("a typed list holds an element of the wrong kind")
        return items

    def restore_type_tag(self, arguments: Any) -> Any:
        """`restore_type_tag(container, "List[str]")`: the tag matters to C++ IValues, not to Python lists."""
        if not (isinstance(arguments, tuple) and len(arguments) == 2 and isinstance(arguments[0], list | dict)
                and isinstance(arguments[1], str)):
            self.fail("restore_type_tag needs (list or dict, type string)")
        return self._value(arguments[0])

    def device(self, arguments: Any) -> torch.device:
        if not (isinstance(arguments, tuple) and len(arguments) == 1 and isinstance(arguments[0], str)):
            self.fail("torch.device needs a 1-tuple holding a string")
        return torch.device(arguments[0])

    def complex_number(self, arguments: Any) -> complex:
        if not (isinstance(arguments, tuple) and len(arguments) == 2
                and all(isinstance(v, float | int) and not isinstance(v, bool) for v in arguments)):
            self.fail("complex needs (real, imag)")
        return complex(*arguments)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_tuple(value: Any) -> bool:
    return isinstance(value, tuple) and all(_is_int(v) and v >= 0 for v in value)


def _refused(what: str) -> Callable[[Unpickler, Any], Any]:
    return lambda self, _argument: self.fail(what)


_GLOBALS: dict[tuple[str, str], Callable[[Unpickler, Any], Any]] = {
    ("torch._utils", "_rebuild_tensor_v2"): Unpickler.rebuild_tensor,
    ("torch", "device"): Unpickler.device,
    ("builtins", "complex"): Unpickler.complex_number,
    ("collections", "OrderedDict"): lambda self, _argument: None,
    ("torch.jit._pickle", "build_intlist"): lambda self, a: self.typed_list(a, int),
    ("torch.jit._pickle", "build_doublelist"): lambda self, a: self.typed_list(a, float),
    ("torch.jit._pickle", "build_boollist"): lambda self, a: self.typed_list(a, bool),
    ("torch.jit._pickle", "build_tensorlist"): lambda self, a: self.typed_list(a, torch.Tensor),
    ("torch.jit._pickle", "restore_type_tag"): Unpickler.restore_type_tag,
    ("torch._utils", "_rebuild_qtensor"): _refused("quantized tensors are not supported"),
    ("torch._utils", "_rebuild_sparse_tensor"): _refused("sparse tensors are not supported"),
    ("torch._tensor", "_rebuild_from_type_v2"): _refused("tensor subclasses are not supported"),
    ("torch.jit._pickle", "build_tensor_from_id"): _refused("tensor-table references (a legacy format) are not "
                                                            "supported"),
}

_OPCODES: dict[bytes, Callable[[Unpickler], None]] = {
    b"(": Unpickler.op_mark,
    b"N": lambda self: self.push(None),
    b"\x88": lambda self: self.push(True),
    b"\x89": lambda self: self.push(False),
    b"K": lambda self: self.op_int("<B"),
    b"M": lambda self: self.op_int("<H"),
    b"J": lambda self: self.op_int("<i"),
    b"\x8a": Unpickler.op_long1,
    b"G": Unpickler.op_binfloat,
    b"X": Unpickler.op_binunicode,
    b")": lambda self: self.push(()),
    b"\x85": lambda self: self.op_tuple_n(1),
    b"\x86": lambda self: self.op_tuple_n(2),
    b"\x87": lambda self: self.op_tuple_n(3),
    b"t": Unpickler.op_tuple,
    b"]": lambda self: self.push([]),
    b"e": Unpickler.op_appends,
    b"l": Unpickler.op_list,
    b"}": lambda self: self.push({}),
    b"d": Unpickler.op_dict,
    b"u": Unpickler.op_setitems,
    b"s": Unpickler.op_setitem,
    b"q": lambda self: self.op_put("<B"),
    b"r": lambda self: self.op_put("<I"),
    b"h": lambda self: self.op_get("<B"),
    b"j": lambda self: self.op_get("<I"),
    b"c": Unpickler.op_global,
    b"\x81": Unpickler.op_newobj,
    b"R": Unpickler.op_reduce,
    b"b": Unpickler.op_reduce,
    b"Q": Unpickler.op_binpersid,
}


def loads(data: bytes, member: str, hooks: UnpicklerHooks | None = None, limits: ArchiveLimits = DEFAULT_LIMITS) -> Any:
    """The value of a TorchScript pickle (`member` names it in errors)."""
    return Unpickler(data, member, hooks, limits).load()


