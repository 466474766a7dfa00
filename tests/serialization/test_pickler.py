"""TorchScript's pickle dialect: tsjit's pickler and restricted unpickler, with torch's own as the oracle.

- values round-trip through our pickler and unpickler (hypothesis generates them), tensors with shared storages;
- torch's reader (`torch._C._pickle_load_obj`) reads what we write, and we read what torch's writer
  (`torch._C._pickle_save`) writes, both as the small zip archives those functions use;
- the unpickler is an opcode interpreter with a fixed table of globals: pickles reaching for anything else
  (os.system, eval, a canary function of this module) fail with a SerializationError naming the member, and
  the canary is never called; malformed opcode streams fail the same way.
"""

from __future__ import annotations

import io
import math
import pickle
import pickletools
import struct
import zipfile

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tsjit.errors import SerializationError
from tsjit.ir import types as T
from tsjit.serialization.archive_writer import ArchiveWriter
from tsjit.serialization.pickler import STORAGE_DTYPES, Pickler
from tsjit.serialization.unpickler import UnpicklerHooks, loads

CANARY_CALLS: list = []


def canary(*args):
    """Must never run: the malicious pickles below name it as their global."""
    CANARY_CALLS.append(args)
    return 0


class StorageHooks(UnpicklerHooks):
    """Storages by key from a dict of bytes (what an archive's data/ directory holds)."""

    def __init__(self, records: dict[str, bytes]):
        self.records = records
        self.loaded: dict[str, torch.UntypedStorage] = {}

    def load_storage(self, key, dtype, location, numel):
        if key not in self.loaded:
            data = self.records[key]
            assert len(data) == numel * torch.empty(0, dtype=dtype).element_size()
            self.loaded[key] = torch.UntypedStorage.from_buffer(data, dtype=torch.uint8) if data else \
                torch.UntypedStorage(0)
        return self.loaded[key]


def dump(value, type_=None) -> tuple[bytes, dict[str, bytes]]:
    pickler = Pickler()
    return pickler.dumps(value, type_), {record.key: record.data() for record in pickler.storages}


def round_trip(value, type_=None):
    data, records = dump(value, type_)
    return loads(data, "test.pkl", StorageHooks(records))


def as_torch_archive(data: bytes, records: dict[str, bytes]) -> bytes:
    """The zip `torch._C._pickle_load_obj` reads: archive/data.pkl, archive/data/<k>, archive/version."""
    writer = ArchiveWriter("archive")
    for key, content in records.items():
        writer.write_record(f"data/{key}", content)
    writer.write_record("data.pkl", data)
    writer.write_record("version", b"3\n")
    return writer.finish()


def read_torch_archive(blob: bytes):
    """Our unpickler on the data.pkl of an archive torch._C._pickle_save wrote."""
    archive = zipfile.ZipFile(io.BytesIO(blob))
    records = {name.split("/", 2)[2]: archive.read(name) for name in archive.namelist() if "/data/" in name}
    return loads(archive.read("archive/data.pkl"), "data.pkl", StorageHooks(records))


def same(a, b) -> bool:
    if isinstance(a, torch.Tensor):
        return isinstance(b, torch.Tensor) and a.dtype == b.dtype and a.shape == b.shape and \
            a.stride() == b.stride() and a.requires_grad == b.requires_grad and torch.equal(a, b)
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    if isinstance(a, list | tuple):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and list(a) == list(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


# ---- values --------------------------------------------------------------------------------------------------
LEAVES = {
    T.IntType.get(): st.integers(-2**63, 2**63 - 1), T.FloatType.get(): st.floats(allow_nan=True),
    T.BoolType.get(): st.booleans(), T.StringType.get(): st.text(max_size=8), T.NoneType.get(): st.none(),
    T.ComplexType.get(): st.complex_numbers(allow_nan=False, allow_infinity=False),
    T.DeviceType.get(): st.sampled_from([torch.device("cpu"), torch.device("meta")]),
    T.TensorType.get(): st.builds(lambda shape, dtype: torch.randn(shape).to(dtype),
                                  st.lists(st.integers(0, 3), max_size=3).map(tuple),
                                  st.sampled_from([torch.float32, torch.float64, torch.int64, torch.bool])),
}
types = st.recursive(st.sampled_from(list(LEAVES)), lambda inner: st.one_of(
    inner.map(T.ListType),
    inner.filter(lambda t: not isinstance(t, T.NoneType | T.OptionalType)).map(T.OptionalType),
    st.lists(inner, max_size=3).map(lambda e: T.TupleType(e)),
    st.tuples(st.sampled_from([T.StringType.get(), T.IntType.get()]), inner).map(lambda kv: T.DictType(*kv))),
    max_leaves=6)


def values_of(type_: T.Type):
    """A strategy for values of a TorchScript type."""
    if type_ in LEAVES:
        return LEAVES[type_]
    if isinstance(type_, T.ListType):
        return st.lists(values_of(type_.elem), max_size=3)
    if isinstance(type_, T.OptionalType):
        return st.one_of(st.none(), values_of(type_.elem))
    if isinstance(type_, T.TupleType):
        return st.tuples(*(values_of(e) for e in type_.elements))
    return st.dictionaries(values_of(type_.key), values_of(type_.value), max_size=3)


typed_values = types.flatmap(lambda type_: st.tuples(st.just(type_), values_of(type_)))


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(typed_values)
def test_values_round_trip(typed_value):
    type_, value = typed_value
    assert same(value, round_trip(value, type_))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(typed_values)
def test_torch_reads_what_we_write(typed_value):
    type_, value = typed_value
    assert same(value, torch._C._pickle_load_obj(as_torch_archive(*dump(value, type_))))


@pytest.mark.parametrize("value", [
    ({"a": [1, 2], "b": [3]}, [[1.5]], (True, None, "é", -2**63, 2**62)),
    [torch.ones(2, 3), torch.arange(5)[1:4], torch.zeros(0, 2)],
    (1 + 2j, torch.device("cpu"), [True, False], {"x": torch.tensor(3.0)}),
])
def test_we_read_what_torch_writes(value):
    assert same(value, read_torch_archive(torch._C._pickle_save(value)))


def test_static_types_choose_the_list_encoding():
    data, _ = dump([[1], [2]], T.ListType(T.ListType(T.IntType.get())))
    text = disassembly(data)
    assert "build_intlist" in text and "restore_type_tag" in text and "'List[List[int]]'" in text
    data, _ = dump([None, 1], T.ListType(T.OptionalType(T.IntType.get())))
    assert "'List[Optional[int]]'" in disassembly(data)
    data, _ = dump((1, 2), T.ListType(T.IntType.get()))  # a tuple held as List[int] is written as a list
    assert round_trip((1, 2), T.ListType(T.IntType.get())) == [1, 2] and "build_intlist" in disassembly(data)


def test_integers_use_the_smallest_opcode():
    opcodes = [op.name for op, _, _ in pickletools.genops(dump((255, 65535, -1, 2**31, -2**40))[0])]
    assert opcodes.count("BININT1") == 1 and opcodes.count("BININT2") == 1 and opcodes.count("BININT") == 1
    assert opcodes.count("LONG1") == 2
    with pytest.raises(SerializationError, match="64 bits"):
        dump(2**64)


def test_strings_and_globals_are_memoized():
    text = disassembly(dump(["same", "same", "same"])[0])
    assert text.count("BINUNICODE 'same'") == 1 and text.count("BINGET") == 2


def disassembly(data: bytes) -> str:
    out = io.StringIO()
    pickletools.dis(data, out)
    return out.getvalue()


# ---- tensors -------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", sorted(set(STORAGE_DTYPES.values()), key=str))
def test_every_storage_dtype_round_trips(dtype):
    tensor = torch.arange(6).to(dtype) if dtype != torch.bool else torch.tensor([True, False, True])
    loaded = round_trip(tensor)
    assert loaded.dtype == dtype and torch.equal(loaded.view(torch.uint8), tensor.view(torch.uint8))


def test_views_share_one_storage():
    base = torch.arange(6.0)
    view, transposed = base[1:3], base.view(2, 3).t()
    data, records = dump([base, view, transposed])
    assert list(records) == ["0"] and disassembly(data).count("BINPERSID") == 1
    loaded = loads(data, "test.pkl", StorageHooks(records))
    assert all(same(a, b) for a, b in zip([base, view, transposed], loaded))
    loaded[0][2] = 100.0
    assert loaded[1][1] == 100.0 and loaded[2][2, 0] == 100.0


def test_parameters_keep_requires_grad_and_stay_leaves():
    loaded = round_trip(torch.nn.Parameter(torch.ones(2)))
    assert loaded.requires_grad and loaded.is_leaf


# ---- the restricted unpickler ---------------------------------------------------------------------------------
def protocol2(*parts: bytes) -> bytes:
    return b"\x80\x02" + b"".join(parts) + b"."


def global_(module: str, name: str) -> bytes:
    return b"c" + module.encode() + b"\n" + name.encode() + b"\n"


def unicode_(text: str) -> bytes:
    data = text.encode()
    return b"X" + struct.pack("<I", len(data)) + data


class Reduces:
    def __reduce__(self):
        return (canary, ("reduced",))


MALICIOUS = {
    "os.system": protocol2(global_("os", "system"), unicode_("echo hi"), b"\x85R"),
    "posix.system": protocol2(global_("posix", "system"), unicode_("echo hi"), b"\x85R"),
    "builtins.eval": protocol2(global_("builtins", "eval"), unicode_("1"), b"\x85R"),
    "canary": protocol2(global_(__name__, "canary"), b"\x29R"),
    "canary via BUILD": protocol2(global_(__name__, "canary"), b")\x81}b"),
    "torch.load": protocol2(global_("torch", "load"), unicode_("x"), b"\x85R"),
    "python pickle": pickle.dumps(Reduces(), protocol=2),
    "protocol 0": b"cos\nsystem\n(S'echo hi'\ntR.",
    "protocol 4": pickle.dumps([1, 2], protocol=4),
}


@pytest.mark.parametrize("name", MALICIOUS)
def test_pickles_reaching_for_other_globals_are_refused(name):
    with pytest.raises(SerializationError, match="evil.pkl"):
        loads(MALICIOUS[name], "evil.pkl")
    assert CANARY_CALLS == []


MALFORMED = {
    "truncated": protocol2(unicode_("abc"))[:-3],
    "no stop": b"\x80\x02K\x01",
    "empty": b"",
    "memo read before write": protocol2(b"h\x05"),
    "appends to a dict": protocol2(b"}(K\x01e"),
    "two values": protocol2(b"K\x01K\x02"),
    "mark never closed": protocol2(b"(K\x01"),
    "pop past the stack": protocol2(b"\x86"),
    "huge string length": protocol2(b"X\xff\xff\xff\xff"),
    "long integer": protocol2(b"\x8a\x09" + b"\x01" * 9),
    "unknown opcode": protocol2(b"\xff"),
    "global as a value": protocol2(global_("torch", "device")),
    "storage as a value": protocol2(b"(" + unicode_("storage") + global_("torch", "FloatStorage") + unicode_("0")
                                    + unicode_("cpu") + b"K\x02tQ"),
    "bad persistent id": protocol2(unicode_("nope"), b"Q"),
    "reduce of a non-global": protocol2(b"K\x01)R"),
    "unhashable key": protocol2(b"}(]K\x01u"),
    "device from a number": protocol2(global_("torch", "device"), b"K\x01\x85R"),
    "intlist of strings": protocol2(global_("torch.jit._pickle", "build_intlist"), b"](", unicode_("a"), b"e\x85R"),
    "non-utf8 string": protocol2(b"X\x01\x00\x00\x00\xff"),
    "quantized tensor": protocol2(global_("torch._utils", "_rebuild_qtensor"), b")R"),
}


@pytest.mark.parametrize("name", MALFORMED)
def test_malformed_pickles_fail_with_the_member_named(name):
    with pytest.raises(SerializationError, match="broken.pkl"):
        loads(MALFORMED[name], "broken.pkl", StorageHooks({"0": b"\x00" * 8}))


def tensor_pickle(offset: int, size: tuple, stride: tuple, requires_grad: bool = False,
                  storage: str = "FloatStorage", numel: int = 2) -> bytes:
    def ints(values):
        return b"(" + b"".join(b"K" + bytes([v]) for v in values) + b"t"
    return protocol2(global_("torch._utils", "_rebuild_tensor_v2"), b"(",
                     b"(", unicode_("storage"), global_("torch", storage), unicode_("0"), unicode_("cpu"),
                     b"K" + bytes([numel]), b"tQ", b"K" + bytes([offset]), ints(size), ints(stride),
                     b"\x88" if requires_grad else b"\x89", b"N", b"tR")


def test_tensors_must_lie_inside_their_storage():
    hooks = StorageHooks({"0": b"\x00" * 8})
    assert loads(tensor_pickle(0, (2,), (1,)), "t.pkl", hooks).shape == (2,)
    for bad in (tensor_pickle(1, (2,), (1,)), tensor_pickle(0, (2, 2), (1, 1)), tensor_pickle(0, (3,), (1,))):
        with pytest.raises(SerializationError, match="reaches past the end"):
            loads(bad, "t.pkl", StorageHooks({"0": b"\x00" * 8}))


def test_integer_tensors_cannot_require_grad():
    with pytest.raises(SerializationError, match="cannot require gradients"):
        loads(tensor_pickle(0, (2,), (1,), requires_grad=True, storage="IntStorage"), "t.pkl",
              StorageHooks({"0": b"\x00" * 8}))


def test_classes_come_from_the_hooks_only():
    class_type = T.ClassType("__torch__.M")
    class_type.add_attribute("n", T.IntType.get())

    class ClassHooks(UnpicklerHooks):
        def resolve_class(self, qualified_name):
            return class_type if qualified_name == "__torch__.M" else None

        def create_object(self, found, state):
            return ("object", found.qualified_name, state)

    data = protocol2(global_("__torch__", "M"), b")\x81}(", unicode_("n"), b"K\x05ub")
    assert loads(data, "data.pkl", ClassHooks()) == ("object", "__torch__.M", {"n": 5})
    with pytest.raises(SerializationError, match="not a TorchScript class"):
        loads(protocol2(global_("__torch__", "Other"), b")\x81}b"), "data.pkl", ClassHooks())
