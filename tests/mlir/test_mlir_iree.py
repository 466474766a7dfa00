"""Running lowered modules with IREE: results in the program's own shape, checks, and the artifact cache."""

from __future__ import annotations

import pytest
import torch
from mlir_corpus import assert_close

import tsjit
import tsjit.mlir
from tsjit import log
from tsjit.errors import MLIRError
from tsjit.ir.parser import parse_ir
from tsjit.lru import LRUCache
from tsjit.mlir import iree

MIXED_RESULTS = """
graph(%x : Tensor, %n : int, %f : float):
  %zero : int = prim::Constant[value=0]()
  %msg : str = prim::Constant[value="n must not be negative"]()
  %none : NoneType = prim::Constant()
  %ok : bool = aten::ge(%n, %zero)
   = prim::If(%ok)
    block0():
      -> ()
    block1():
       = prim::RaiseException(%msg, %none)
      -> ()
  %y : Tensor = aten::mul(%x, %f)
  %m : int = aten::mul(%n, %n)
  %g : float = aten::mul(%f, %f)
  %positive : Tensor = aten::gt(%x, %zero)
  %t : (Tensor, int, float, bool, Tensor) = prim::TupleConstruct(%y, %m, %g, %ok, %positive)
  return (%t)
"""


@pytest.fixture(scope="module")
def mixed():
    return iree.compile(tsjit.mlir.compile(parse_ir(MIXED_RESULTS.strip()), [torch.randn(4), 3, 1.5],
                                           output_type="linalg-on-tensors"))


def test_results_come_back_as_the_program_returns_them(mixed):
    x = torch.randn(4)
    y, m, g, ok, positive = mixed(x, 3, 0.5)
    assert_close((y, m, g, ok, positive), (x * 0.5, 9, 0.25, True, x > 0))
    assert isinstance(ok, bool) and positive.dtype == torch.bool


def test_failed_assert_raises_with_its_message(mixed):
    with pytest.raises(MLIRError, match="n must not be negative"):
        mixed(torch.randn(4), -1, 1.0)


def test_wrong_argument_count_is_an_error(mixed):
    with pytest.raises(MLIRError, match="takes 3 arguments"):
        mixed(torch.randn(4), 3)


def test_f64_stays_f64():
    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::sqrt(%x)\n  return (%y)")
    x = torch.tensor([2.0], dtype=torch.float64)
    got = iree.compile(tsjit.mlir.compile(graph, [x], output_type="linalg-on-tensors"))(x)
    assert got.dtype == torch.float64 and abs(got.item() - 2 ** 0.5) < 1e-15  # f32 would be 1e-8 off


def test_artifacts_are_cached_by_content(tmp_path, monkeypatch):
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(iree, "_memory_cache", LRUCache("iree", iree.cache_limit_bytes, weight=len))
    compiled = []
    real = iree._compile_with_iree
    monkeypatch.setattr(iree, "_compile_with_iree", lambda *a: compiled.append(a) or real(*a))
    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::tanh(%x)\n  return (%y)")
    lowered = tsjit.mlir.compile(graph, [torch.randn(7)], output_type="linalg-on-tensors")
    first = iree.compile(lowered)
    iree.compile(lowered)
    assert len(compiled) == 1 and len(list(tmp_path.glob("*.vmfb"))) == 1
    monkeypatch.setattr(iree, "_memory_cache", LRUCache("iree", iree.cache_limit_bytes, weight=len))
    iree.compile(lowered)
    assert len(compiled) == 1  # read back from disk
    other = tsjit.mlir.compile(graph, [torch.randn(8)], output_type="linalg-on-tensors")
    iree.compile(other)
    assert len(compiled) == 2
    x = torch.randn(7)
    assert_close(first(x), torch.tanh(x))


def test_nested_tuple_results_come_back_nested():
    graph = parse_ir("""
graph(%x : Tensor, %y : Tensor):
  %one : int = prim::Constant[value=1]()
  %s : Tensor = aten::add(%x, %y, %one)
  %p : Tensor = aten::mul(%x, %y)
  %inner : (Tensor, Tensor) = prim::TupleConstruct(%p, %x)
  %t : (Tensor, (Tensor, Tensor)) = prim::TupleConstruct(%s, %inner)
  return (%t)""".strip())
    x, y = torch.randn(3), torch.randn(3)
    for output_type in ("linalg-on-tensors", "stablehlo"):
        program = iree.compile(tsjit.mlir.compile(graph, [x, y], output_type=output_type))
        assert_close(program(x, y), (x + y, (x * y, x)))


def test_lists_of_numbers_are_passed_as_their_elements():
    # (the backend contract allows no list argument: the program takes as many numbers as the example had)
    def program(x: torch.Tensor, weights: list[float], shape: list[int] | None):
        if shape is None:
            return x, 0
        rows, columns = shape
        return x * sum(weights) + max(weights) - min(weights), rows * columns

    function = tsjit.script(program)
    compiled = iree.compile(tsjit.mlir.compile(function, [torch.randn(3), [0.5, 2.0, -1.0], [2, 3]],
                                               output_type="linalg-on-tensors"))
    x = torch.randn(3)
    for weights, shape in (([0.5, 2.0, -1.0], [2, 3]), ([-3.0, -0.5, 4.0], [5, 1])):
        assert_close(compiled(x, weights, shape), program(x, weights, shape))


def test_the_artifact_caches_are_bounded(tmp_path, monkeypatch, capsys):
    """With room for two artifacts, a third evicts the least recently used one, from memory and from disk; the
    program compiled from it still runs, and compiling it again gives a right program."""
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setenv("TSJIT_LOG_LEVEL", "iree")
    log.reset()
    monkeypatch.setattr(iree, "_memory_cache", LRUCache("iree", iree.cache_limit_bytes, weight=len))
    compiled = []
    real = iree._compile_with_iree
    monkeypatch.setattr(iree, "_compile_with_iree", lambda *a: compiled.append(a) or real(*a))
    graph = parse_ir("graph(%x : Tensor):\n  %y : Tensor = aten::tanh(%x)\n  return (%y)")
    modules = [tsjit.mlir.compile(graph, [torch.randn(n)], output_type="linalg-on-tensors") for n in (3, 4, 5)]
    first = iree.compile(modules[0])
    monkeypatch.setenv("TSJIT_IREE_CACHE_MB", str(2.5 * len(first.vmfb) / 2 ** 20))
    iree.compile(modules[1])
    iree.compile(modules[2])
    assert len(compiled) == 3 and len(iree._memory_cache) == 2 and len(list(tmp_path.glob("*.vmfb"))) == 2
    assert "evicted the 1 least recently used" in capsys.readouterr().err
    x = torch.randn(3)
    assert_close(first(x), torch.tanh(x))
    again = iree.compile(modules[0])
    assert len(compiled) == 4
    assert_close(again(x), torch.tanh(x))
    iree.compile(modules[2])  # the most recent is still cached
    assert len(compiled) == 4
    log.reset()


def _write_inputs(x: torch.Tensor, y: torch.Tensor, rows: torch.Tensor):
    x[0] = 1.0
    x[1:2] = x[0:1]
    x[:, 3] = 2
    y.zero_()
    return x.sum(), rows * 2


def test_writes_to_inputs_are_copied_back_into_the_callers_tensors():
    function = tsjit.script(_write_inputs)
    examples = [torch.randn(3, 4), torch.randn(2), torch.randn(2)]
    for output_type in ("linalg-on-tensors", "tosa"):
        program = iree.compile(tsjit.mlir.compile(function, examples, output_type=output_type))
        assert program.written_inputs == (0, 1)
        ours, theirs = [e.clone() for e in examples], [e.clone() for e in examples]
        assert_close(program(*ours), _write_inputs(*theirs))
        assert_close(ours, theirs)


def _resize_inputs(x: torch.Tensor, y: torch.Tensor, like_x: torch.Tensor, smaller: torch.Tensor):
    return torch.resize_as_(x, like_x), y.resize_as_(smaller).sum() + y.sum()


def test_inputs_resized_in_place_take_their_new_sizes_and_first_elements():
    """resize_as_ of an input no larger than it (decompositions.py: the storage's first elements in the template's
    sizes); the caller's tensor takes the new sizes, as eager's does."""
    function = tsjit.script(_resize_inputs)
    examples = [torch.randn(5, 5, 5), torch.randn(4, 6), torch.randn(5, 5, 5), torch.randn(3, 5)]
    program = iree.compile(tsjit.mlir.compile(function, examples, output_type="linalg-on-tensors"))
    ours, theirs = [e.clone() for e in examples], [e.clone() for e in examples]
    assert_close(program(*ours), _resize_inputs(*theirs))
    assert [t.shape for t in ours] == [t.shape for t in theirs]
    assert_close(ours, theirs)
