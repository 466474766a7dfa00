"""TorchScript archives: tsjit.save / tsjit.load against torch.jit.save / torch.jit.load as the oracle.

Every function of the e2e corpus (tests/e2e/corpus.py) and every module of the e2e module corpus
(tests/e2e/module_corpus.py) round-trips three ways with results equal to eager PyTorch: tsjit.save then
tsjit.load; tsjit.save then torch.jit.load; torch.jit.save then tsjit.load (skipped where torch.jit is absent).
The printed code compiles back to equivalent graphs: after one save/load cycle, saving is a fixed point.
Also: extra files, version records and upgraders, shared storages, objects pickled through `__setstate__`,
enums and NamedTuples in torch's archives, map_location, paths and file objects.
"""

from __future__ import annotations

import functools
import io
import math
import os
import re
import sys
import zipfile

import pytest
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
E2E = os.path.join(os.path.dirname(HERE), "e2e")
sys.path.insert(0, E2E)

import archive_programs  # noqa: E402
from corpus import CASES  # noqa: E402
from module_corpus import MODULE_CASES  # noqa: E402
from test_script_functions import same  # noqa: E402

from tsjit.api import script  # noqa: E402
from tsjit.api.archive import load, save  # noqa: E402
from tsjit.api.module import script_module  # noqa: E402
from tsjit.errors import SerializationError  # noqa: E402
from tsjit.ir import types as T  # noqa: E402
from tsjit.ir.objects import Object  # noqa: E402
from tsjit.serialization.archive_writer import ArchiveWriter  # noqa: E402
from tsjit.serialization.pickler import Pickler  # noqa: E402
from tsjit.serialization.serializer import serialize  # noqa: E402

PATHS = ["tsjit->tsjit", "tsjit->torch", "torch->tsjit"]
FUNCTIONS = {case.name: case for case in CASES}
MODULES = {case.name: case for case in MODULE_CASES if not case.xfail}
# (case, path) -> why that round trip still fails
KNOWN_MODULE_FAILURES: dict[tuple[str, str], str] = {}


def torch_bytes(scripted) -> bytes:
    buffer = io.BytesIO()
    torch.jit.save(scripted, buffer)
    return buffer.getvalue()


def loader(path: str):
    return (lambda data: torch.jit.load(io.BytesIO(data))) if path.endswith("torch") else load


@functools.cache
def saved_function(name: str, path: str) -> bytes:
    function = FUNCTIONS[name].function
    return torch_bytes(torch.jit.script(function)) if path.startswith("torch") else serialize(script(function))


def run_function(case, callable_):
    torch.manual_seed(0)
    return callable_(*case.make_inputs())


# torch.jit's own peephole pass drops `/ 1` on ints and returns 3 instead of 3.0 (corpus.py documents it)
KNOWN_FUNCTION_FAILURES = {("int_true_division_by_one", "tsjit->torch"): "torch.jit runs `a / 1` as `a`"}


def function_params():
    for name in FUNCTIONS:
        for path in PATHS:
            reason = KNOWN_FUNCTION_FAILURES.get((name, path))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(name, path, id=f"{name}-{path}", marks=marks)


@pytest.mark.parametrize("name, path", function_params())
def test_functions_round_trip(name, path):
    case = FUNCTIONS[name]
    loaded = loader(path)(saved_function(name, path))
    assert same(run_function(case, case.function), run_function(case, loaded))


def run_module(module, case):
    torch.manual_seed(1)
    inputs = case.make_inputs()
    torch.manual_seed(2)
    return module(*inputs)


def module_params():
    for name in MODULES:
        for path in PATHS:
            reason = KNOWN_MODULE_FAILURES.get((name, path))
            marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
            yield pytest.param(name, path, id=f"{name}-{path}", marks=marks)


@functools.cache
def exportable(name: str) -> bool:
    """Whether torch.jit.save accepts the module (it refuses ones that call Python, e.g. @ignore methods)."""
    try:
        torch_bytes(torch.jit.script(MODULES[name].build()))
    except RuntimeError:
        return False
    return True


def saved_module(name: str, path: str) -> bytes:
    """The module's archive; for a module torch cannot export, tsjit must refuse it as well."""
    case = MODULES[name]
    if not exportable(name):
        with pytest.raises(SerializationError, match="Python function call"):
            serialize(script_module(case.build()))
        pytest.skip("torch.jit.save refuses this module too")
    if path.startswith("torch"):
        return torch_bytes(torch.jit.script(case.build()))
    return serialize(script_module(case.build()))


@pytest.mark.parametrize("name, path", module_params())
def test_modules_round_trip(name, path):
    case = MODULES[name]
    data = saved_module(name, path)
    loaded, eager = loader(path)(data), case.build()
    assert same(run_module(eager, case), run_module(loaded, case))
    for attribute in case.state:
        assert same(getattr(eager, attribute), getattr(loaded, attribute)), attribute


# ---- the printed code compiles back --------------------------------------------------------------------------
def code_files(data: bytes) -> dict[str, list[str]]:
    """The code/ files of an archive by qualifier, as sorted top-level definitions, with mangling removed and
    temporaries renumbered by first appearance (`_0`...), so only what the code does is compared."""
    archive = zipfile.ZipFile(io.BytesIO(data))
    files: dict[str, list[str]] = {}
    for name in archive.namelist():
        if name.endswith(".py"):
            key = re.sub(r"/___torch_mangle_\d+", "", name.split("/", 1)[1])
            text = re.sub(r"___torch_mangle_\d+\.", "", archive.read(name).decode())
            files[key] = sorted(files.get(key, []) + [renumber(d) for d in re.split(r"(?m)^(?=class |def )", text)
                                                      if d])
    return files


def renumber(text: str) -> str:
    names: dict[str, str] = {}
    return re.sub(r"\b_\d+\b", lambda m: names.setdefault(m.group(0), f"_#{len(names)}"), text)


def fixed_point_params():
    for name in FUNCTIONS:
        yield pytest.param(lambda name=name: script(FUNCTIONS[name].function), id=name)
    for name in MODULES:
        yield pytest.param(lambda name=name: load(saved_module(name, "tsjit->tsjit")), id=name)


@pytest.mark.parametrize("make", fixed_point_params())
def test_printed_code_compiles_back_to_equivalent_graphs(make):
    """Saving what was loaded prints the same code. The first cycle may still simplify (a graph compiled from
    printed code can fold constants a Python-scripted one kept, temporaries named `_0` by the module frontend
    become unnamed), so the fixed point is checked from the second save on."""
    once = serialize(load(serialize(make())))
    assert code_files(serialize(load(once))) == code_files(once)


# ---- the code files are torch's -------------------------------------------------------------------------------
# where tsjit's code files differ from torch.jit.save's for the module corpus, and why (none is the printer's)
KNOWN_CODE_DIFFERENCES = {
    "multihead_attention_key_padding_mask": "a string literal continued over source lines keeps other whitespace",
    "transformer_encoder_layer_norm_first_gelu_train": "the same multi-line string literal",
    "methods_calling_methods_eval": "torch.jit.save leaves out the exported method `exported`",
    "methods_calling_methods_train": "torch.jit.save leaves out the exported method `exported`",
}


def normalized_code(data: bytes) -> dict[str, list[str]]:
    """The code files as `code_files` gives them (mangling removed, top-level definitions sorted, temporaries
    renumbered), with `Final` constants sorted. A class whose name was mangled (because one of the two compilers
    met another class of that name earlier in the process: a traced LSTM takes `...rnn.LSTM`) is written to
    `<module>/___torch_mangle_N.py` apart from the functions of its module, and its temporaries are numbered from
    0 there; torch orders constants by iterating a Python set, so their order changes from process to process."""
    return {path: sorted(re.sub(r"(?m)(^ *\w+ : Final\[.*\n)+", lambda m: "".join(sorted(m.group(0).splitlines(True))),
                                definition) for definition in definitions)
            for path, definitions in code_files(data).items()}


def code_params():
    for name in MODULES:
        reason = KNOWN_CODE_DIFFERENCES.get(name)
        yield pytest.param(name, id=name, marks=[pytest.mark.xfail(reason=reason, strict=True)] if reason else [])


@pytest.mark.parametrize("name", code_params())
def test_code_files_equal_torch_jit_save(name):
    if not exportable(name):
        pytest.skip("torch.jit.save refuses this module")
    case = MODULES[name]
    theirs = normalized_code(torch_bytes(torch.jit.script(case.build())))
    assert normalized_code(serialize(script_module(case.build()))) == theirs


# ---- archive contents ------------------------------------------------------------------------------------------
def archive_members(data: bytes) -> dict[str, bytes]:
    archive = zipfile.ZipFile(io.BytesIO(data))
    return {name.split("/", 1)[1]: archive.read(name) for name in archive.namelist()}


def test_layout_of_a_saved_module(tmp_path):
    path = tmp_path / "model.pt"
    save(script_module(archive_programs.SharedStorage()), path, _extra_files={"notes.txt": "hello"})
    archive = zipfile.ZipFile(path)
    assert {name.split("/")[0] for name in archive.namelist()} == {"model"}
    members = archive_members(path.read_bytes())
    assert list(members)[0] == "extra/notes.txt" and members["extra/notes.txt"] == b"hello"
    assert members["version"] == b"3\n" and members["byteorder"] == b"little"
    assert members["constants.pkl"] == b"\x80\x02)."
    assert list(k for k in members if k.startswith("data/")) == ["data/0"]
    assert "code/__torch__/archive_programs.py" in members


def test_extra_files_both_ways():
    data = serialize(script_module(archive_programs.SharedStorage()), extra_files={"a.json": b"{}", "b": "x"})
    extra = {"a.json": "", "missing": "kept"}
    load(data, _extra_files=extra)
    assert extra == {"a.json": b"{}", "missing": "kept"}
    theirs = {"a.json": ""}
    torch.jit.load(io.BytesIO(data), _extra_files=theirs)
    assert theirs == {"a.json": b"{}"}
    buffer = io.BytesIO()
    torch.jit.save(torch.jit.script(archive_programs.SharedStorage()), buffer, _extra_files={"c": b"\x00\x01"})
    ours = {"c": ""}
    load(buffer.getvalue(), _extra_files=ours)
    assert ours == {"c": b"\x00\x01"}


def div_ints(x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
    return torch.div(x, y)


def full_default(x: torch.Tensor) -> torch.Tensor:
    return torch.full([2], 1) + x


def gelu_tanh(x: torch.Tensor) -> torch.Tensor:
    return torch.nn.functional.gelu(x, approximate="tanh")


def int_division(a: int, b: int) -> float:
    return a / b


@pytest.mark.parametrize("function, record, version", [
    (div_ints, "version", b"4\n"), (full_default, "version", b"5\n"), (gelu_tanh, ".data/version", b"10\n"),
    (int_division, "version", b"3\n"),
])
def test_version_records_follow_the_operators_used(function, record, version):
    ours = archive_members(serialize(script(function)))
    theirs = archive_members(torch_bytes(torch.jit.script(function)))
    assert ours[record] == theirs[record] == version


def hand_written_archive(version: int, source: str) -> bytes:
    """A minimal archive, as a user (or an older PyTorch) might write one."""
    writer = ArchiveWriter("old")
    writer.write_record("data.pkl", b"\x80\x02c__torch__\nOld\n)\x81}(X\x08\x00\x00\x00training\x88ub.")
    writer.write_record("code/__torch__.py", source.encode())
    writer.write_record("constants.pkl", b"\x80\x02).")
    writer.write_record("version", f"{version}\n".encode())
    return writer.finish()


OLD_SOURCE = """class Old(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
  def forward(self: __torch__.Old, x: Tensor, y: Tensor) -> Tuple[Tensor, Tensor]:
    return (torch.div(x, y), torch.full([2], 1))
"""


@pytest.mark.parametrize("version", [3, 4, 5])
def test_upgraders_keep_the_behaviour_of_old_archives(version):
    data = hand_written_archive(version, OLD_SOURCE)
    x, y = torch.tensor([5, -5]), torch.tensor([2, 2])
    ours, theirs = load(data)(x, y), torch.jit.load(io.BytesIO(data))(x, y)
    assert same(theirs, ours)
    assert ours[0].tolist() == ([2, -2] if version < 4 else [2.5, -2.5])
    assert ours[1].dtype == (torch.float32 if version < 5 else torch.int64)


MODULE_HEADER = """class Old(Module):
  __parameters__ = []
  __buffers__ = []
  training : bool
"""


@pytest.mark.parametrize("source", [
    "import os\nos.system('touch pwned')\n",
    MODULE_HEADER + "  def forward(self: __torch__.Old, x: Tensor) -> Tensor:\n"
                    "    return __import__('os').system('touch pwned')\n",
    MODULE_HEADER + "  def forward(self: __torch__.Old, x: Tensor) -> Tensor:\n    return eval('x')\n",
    MODULE_HEADER + "  def forward(self: __torch__.Old, x: Tensor) -> Tensor:\n    return (lambda: x)()\n",
    MODULE_HEADER + "  def forward(self: __torch__.Old, x: Tensor) -> Tensor:\n    return canary(x)\n",
    MODULE_HEADER + "  def forward(self: __torch__.Old, x: Tensor) -> Tensor:\n    return torch.no_such_op(x)\n",
    MODULE_HEADER + "  os.system('x')\n",
    "class Old(object):\n  pass\n",
    MODULE_HEADER + "  def forward(self: __torch__.Old, x: Tensor) -> Tensor:\n    return x\n  x = (\n",
])
def test_code_that_is_not_torchscript_is_refused(source, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SerializationError, match=r"old/code/__torch__\.py is not valid TorchScript"):
        load(hand_written_archive(3, source))
    assert os.listdir(tmp_path) == []


EVERY_DEFINITION = """class Net(Module):
  __parameters__ = ["w", ]
  __buffers__ = []
  __forward_hooks__ = ["add_one", ]
  w : Tensor
  training : bool
  __annotations__["0"] = int
  big : Final[float] = inf
  z : Final[complex] = 2.+1.j
  def forward(self: __torch__.Net, x: Tensor) -> Tensor:
    p = __torch__.P(x, 2)
    c = __torch__.Color.RED
    y = torch.mul(x, self.w)
    if torch.eq(c, __torch__.Color.RED):
      y = torch.add(y, getattr(self, "0"))
    return torch.add(y, (p)[1])
  def add_one(self: __torch__.Net, input: Tuple[Tensor], output: Tensor) -> Tensor:
    return torch.add(output, 1)
class P(NamedTuple):
  a : Tensor
  b : int
class Color(Enum):
  RED = "red"
  BLUE = "blue"
"""


def test_hand_written_archive_with_every_kind_of_definition():
    """A forward hook, an attribute that is not an identifier, Final constants, a NamedTuple and an enum."""
    class_type = T.ClassType("__torch__.Net", is_module=True)
    class_type.add_attribute("w", T.TensorType.get(), is_parameter=True)
    class_type.add_attribute("training", T.BoolType.get())
    class_type.add_attribute("0", T.IntType.get())
    pickler = Pickler()
    data = pickler.dumps(Object(class_type, {"w": torch.nn.Parameter(torch.full((2,), 3.0)), "training": True,
                                             "0": 10}), class_type)
    writer = ArchiveWriter("net")
    for record in pickler.storages:
        writer.write_record(f"data/{record.key}", record.data())
    for name, content in (("data.pkl", data), ("code/__torch__.py", EVERY_DEFINITION.encode()),
                          ("constants.pkl", b"\x80\x02)."), ("version", b"3\n")):
        writer.write_record(name, content)
    archive, x = writer.finish(), torch.ones(2)
    ours, theirs = load(archive), torch.jit.load(io.BytesIO(archive))
    assert same(theirs(x), ours(x)) and same(ours(x), torch.tensor([16.0, 16.0]))  # the hook adds 1
    assert same(theirs.forward(x), ours.forward(x))
    assert ours.big == math.inf and ours.z == 2 + 1j


def test_views_keep_sharing_their_storage():
    for data in (serialize(script_module(archive_programs.SharedStorage())),
                 torch_bytes(torch.jit.script(archive_programs.SharedStorage()))):
        loaded = load(data)
        assert loaded.base.untyped_storage().data_ptr() == loaded.view.untyped_storage().data_ptr()
        assert same(loaded(torch.zeros(3)), torch.tensor([3.0, 4.0, 5.0]))


def test_objects_enums_and_named_tuples_from_torch():
    scripted = archive_programs.scripted_with_objects()
    loaded = load(torch_bytes(scripted))
    x = torch.randn(1)
    assert same(scripted(x), loaded(x))
    assert loaded.state.n == 5  # restored by __setstate__ from the pickled (105, t)


def test_each_load_has_its_own_class_names():
    """As torch.jit.load gives each load its own compilation unit, loading an archive twice names its classes,
    enums and NamedTuples as the archive does both times: saving either load writes the same code files."""
    scripted = archive_programs.scripted_with_objects()
    data = torch_bytes(scripted)
    first, second = load(data), load(data)
    assert first._c.type is not second._c.type
    assert "___torch_mangle" not in str(second.graph)
    saved = [{k: v for k, v in archive_members(serialize(m)).items() if k.startswith("code/")} for m in (first, second)]
    assert saved[0] == saved[1]
    x = torch.randn(1)
    assert same(scripted(x), second(x)) and same(scripted(x), torch.jit.load(io.BytesIO(serialize(second)))(x))


class _Projection(torch.nn.Module):
    """Scripted by this test only, so that its name is not mangled yet in tsjit's namespace."""

    __constants__ = ["features"]

    def __init__(self, features: int):
        super().__init__()
        self.features = features
        self.weight = torch.nn.Parameter(torch.randn(features))

    def forward(self, x):
        return x[..., :self.features] * self.weight


class _Head(torch.nn.Module):
    def __init__(self, body):
        super().__init__()
        self.body = body
        self.head = _Projection(2)

    def forward(self, x):
        return self.head(self.body(x))


def test_a_loaded_class_beside_a_scripted_class_of_the_same_name():
    """A loaded model given a new scripted head of the same class: tsjit names both classes
    __torch__...._Projection (each load has its own namespace). Saving names the second one ___torch_mangle_<N>,
    in the code and in data.pkl, as torch.jit.save does; torch.jit.load and tsjit.load read it back."""
    body = torch.jit.script(torch.nn.Sequential(_Projection(3)))
    ours = script_module(_Head(load(torch_bytes(body))))
    assert ours.head._c.type.qualified_name == getattr(ours.body, "0")._c.type.qualified_name
    data = serialize(ours)
    members = archive_members(data)
    defining = [k for k, v in members.items() if k.endswith(".py") and b"class _Projection(Module)" in v]
    assert len(defining) == 2 and any(re.search(r"/___torch_mangle_\d+\.py$", k) for k in defining)
    x = torch.randn(2, 3)
    for reloaded in (load(data), torch.jit.load(io.BytesIO(data))):
        assert same(ours(x), reloaded(x))


def test_map_location_and_paths(tmp_path):
    path = tmp_path / "m.pt"
    torch.jit.save(torch.jit.script(archive_programs.SharedStorage()), str(path))
    for source in (path, str(path), open(path, "rb"), path.read_bytes()):  # noqa: SIM115
        loaded = load(source, map_location="cpu")
        assert loaded.base.device.type == "cpu"
    assert load(path, map_location="meta").base.device.type == "meta"
    with pytest.raises(SerializationError, match="map_location"):
        load(path, map_location="no-such-device")


def test_saving_unsupported_things_fails_clearly():
    with pytest.raises(SerializationError, match="expected a scripted module or function"):
        serialize(torch.nn.Linear(2, 2))
    with pytest.raises(SerializationError, match="extra file"):
        serialize(script_module(archive_programs.SharedStorage()), extra_files={"x": 3})
