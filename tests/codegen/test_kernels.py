"""Generated kernels against eager: every operator of the fuser's table, float32 and float64, empty to large
tensors, special values; the guard's fallbacks (ranks, strides, dtypes, requires_grad); compiler failures and
the on-disk cache. (Broadcasting and chunks: test_broadcast_and_chunk.py.)"""

from __future__ import annotations

import os
import sys

import pytest
import torch
from kernel_helpers import fused

import tsjit.runtime.fusion as fusion
from tsjit.codegen import compiler
from tsjit.codegen.c_kernel import generate_kernel
from tsjit.codegen.elementwise import OPERATORS, OPTIONAL_SCALAR, SCALAR, TENSOR
from tsjit.ir.parser import parse_ir
from tsjit.lru import LRUCache
from tsjit.runtime.run import run_graph

TYPE_NAMES = {torch.float32: "Float", torch.float64: "Double"}
# scalar operands: constants (the pow exponents eager special-cases among them) and the float argument %s; a
# tuple gives each scalar operand its own
SCALARS = {"aten::pow.Tensor_Scalar": ("2", "3", "0.5", "-0.5", "-1", "-2", "1.7", "%s"),
           "aten::clamp": (("None", "0.5"), ("-0.5", "None"), ("-0.5", "0.5"), ("%s", "1.5")),
           "aten::hardtanh": (("-0.5", "0.5"), ("%s", "2")), "aten::lerp.Scalar": ("0.25", "0.75", "%s")}
DEFAULT_SCALARS = ("1", "2", "-1.5", "%s")


def operator_calls() -> list[tuple[str, list[str]]]:
    """(kind, arguments) for every operator of the table, with each kind of scalar operand it accepts."""
    calls = []
    for name, entry in OPERATORS.items():
        has_scalars = SCALAR in entry.roles or OPTIONAL_SCALAR in entry.roles
        for choice in SCALARS.get(name, DEFAULT_SCALARS) if has_scalars else ("",):
            tensors = iter(["%x", "%y"])
            scalars = iter(choice) if isinstance(choice, tuple) else None
            arguments = [next(tensors) if role == TENSOR else next(scalars) if scalars else choice
                         for role in entry.roles]
            calls.append((name.partition(".")[0], arguments))
    return calls


def all_operators_graph(dtype: torch.dtype) -> tuple[str, list[str]]:
    """IR text computing every call from %x, %y and %s, each one a graph output."""
    tensor = f"{TYPE_NAMES[dtype]}(*, device=cpu)"
    lines, outputs, constants = [f"graph(%x : {tensor}, %y : {tensor}, %s : float):"], [], {}
    names = []
    for index, (kind, arguments) in enumerate(operator_calls()):
        for argument in arguments:
            if not argument.startswith("%") and argument not in constants:
                constants[argument] = f"%c{len(constants)}"
                if argument == "None":
                    lines.append(f"  {constants[argument]} : NoneType = prim::Constant()")
                else:
                    type_ = "float" if "." in argument else "int"
                    lines.append(f"  {constants[argument]} : {type_} = prim::Constant[value={argument}]()")
        values = ", ".join(constants.get(a, a) for a in arguments)
        lines.append(f"  %r{index} : {tensor} = {kind}({values})")
        outputs.append(f"%r{index}")
        names.append(f"{kind}({', '.join(arguments)})")
    lines.append(f"  return ({', '.join(outputs)})")
    return "\n".join(lines) + "\n", names


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
@pytest.mark.parametrize("size", [0, 1, 7, 1000])
def test_every_operator_matches_eager(dtype, size, fallbacks) -> None:
    text, names = all_operators_graph(dtype)
    _, operation = fused(text)
    generator = torch.Generator().manual_seed(size)
    x, y = (torch.randn(size, dtype=dtype, generator=generator) for _ in range(2))
    y = torch.where(y.abs() < 0.1, torch.full_like(y, 0.5), y)  # keep divisors away from 0
    ours = operation(x, y, 0.7)
    expected = run_graph(parse_ir(text), x, y, 0.7, optimize=False)
    assert not fallbacks, "the kernel should have run"
    assert len(ours) == len(expected) == len(names)
    for name, mine, theirs in zip(names, ours, expected):
        torch.testing.assert_close(mine, theirs, equal_nan=True, msg=lambda m, name=name: f"{name}: {m}")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_special_values_match_eager(dtype, fallbacks) -> None:
    text, names = all_operators_graph(dtype)
    _, operation = fused(text)
    specials = [0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 1e30, -1e30, float("inf"), float("-inf"), float("nan")]
    x = torch.tensor(specials, dtype=dtype).repeat_interleave(len(specials))
    y = torch.tensor(specials, dtype=dtype).repeat(len(specials))
    for scalar in (0.7, float("nan"), float("inf")):
        ours = operation(x, y, scalar)
        expected = run_graph(parse_ir(text), x, y, scalar, optimize=False)
        for name, mine, theirs in zip(names, ours, expected):
            torch.testing.assert_close(mine, theirs, equal_nan=True,
                                       msg=lambda m, name=name, s=scalar: f"{name} with %s={s}: {m}")
    assert not fallbacks


CHAIN = """
graph(%x : Float(*, device=cpu), %y : Float(*, device=cpu)):
  %a : Float(*, device=cpu) = aten::sin(%x)
  %b : Float(*, device=cpu) = aten::mul(%a, %y)
  return (%b)
"""


def chain(x, y):
    return torch.sin(x) * y


@pytest.mark.parametrize("x, y", [
    (torch.randn(3, 1), torch.randn(4)),  # another rank than the kernel's
    (torch.randn(4, 3).t(), torch.randn(3, 4)),  # not contiguous
    (torch.arange(4), torch.randn(4)),  # another dtype
    (torch.randn(4, dtype=torch.float64), torch.randn(4)),  # promotion
    (torch.randn(4), 2.0),  # not a tensor at all
], ids=["rank", "transposed", "int64", "float64", "number"])
def test_inputs_the_kernel_cannot_take_run_the_subgraph(x, y, fallbacks) -> None:
    _, operation = fused(CHAIN)
    torch.testing.assert_close(operation(x, y), chain(x, y))
    assert len(fallbacks) == 1


def test_inputs_requiring_grad_fall_back_and_keep_autograd(fallbacks) -> None:
    _, operation = fused(CHAIN)
    x, y = torch.randn(5, requires_grad=True), torch.randn(5)
    operation(x, y).sum().backward()
    torch.testing.assert_close(x.grad, torch.cos(x.detach()) * y)
    assert len(fallbacks) == 1
    with torch.no_grad():
        result = operation(x, y)
    assert len(fallbacks) == 1 and not result.requires_grad
    torch.testing.assert_close(result, chain(x.detach(), y))


def test_outputs_are_fresh_tensors() -> None:
    group, operation = fused("""
        graph(%x : Float(*, device=cpu)):
          %a : Float(*, device=cpu) = aten::relu(%x)
          %b : Float(*, device=cpu) = aten::neg(%a)
          return (%a, %b)""".strip() + "\n")
    x = torch.rand(6)
    relu, neg = operation(x)
    assert len(group.outputs) == 2
    assert relu.data_ptr() != x.data_ptr() and neg.data_ptr() != relu.data_ptr()
    relu.add_(1)
    torch.testing.assert_close(neg, -x)


def test_a_subgraph_the_generator_cannot_compile_is_interpreted(fallbacks) -> None:
    _, operation = fused("""
        graph(%x : Float(*, device=cpu)):
          %dim : int = prim::Constant[value=0]()
          %none : NoneType = prim::Constant()
          %a : Float(*, device=cpu) = aten::sin(%x)
          %b : Float(*, device=cpu) = aten::cumsum(%a, %dim, %none)
          return (%b)""".strip() + "\n")
    x = torch.randn(5)
    torch.testing.assert_close(operation(x), torch.cumsum(torch.sin(x), 0))
    assert len(fallbacks) == 1


def test_a_failing_compiler_falls_back(monkeypatch, tmp_path, fallbacks) -> None:
    monkeypatch.setenv("CC", "false")  # found on PATH, fails every compilation
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))
    _, operation = fused(CHAIN)
    x, y = torch.randn(4), torch.randn(4)
    torch.testing.assert_close(operation(x, y), chain(x, y))
    assert len(fallbacks) == 1 and not list(tmp_path.rglob("*.so"))


def test_kernels_are_cached_on_disk_by_source(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))
    source = generate_kernel(fused(CHAIN)[0].g("Subgraph")).source + "/* cache test */\n"
    assert compiler.load_kernel(source, "tsjit_kernel", compile=False) is None
    assert compiler.load_kernel(source, "tsjit_kernel") is not None
    (library,) = tmp_path.rglob("*.so")
    os.utime(library, (1, 1))  # long unused
    # a new process: only the disk cache is left
    monkeypatch.setattr(compiler, "_loaded", LRUCache("compiler", compiler.loaded_limit))
    monkeypatch.setattr(compiler, "_compile", lambda *args: pytest.fail("compiled again"))
    assert compiler.load_kernel(source, "tsjit_kernel", compile=False) is not None
    assert library.stat().st_mtime > 1  # used now: the last to be evicted


def test_int_and_float_arguments_are_converted_to_the_element_type(fallbacks) -> None:
    _, operation = fused("""
        graph(%x : Double(*, device=cpu), %k : int, %f : float):
          %a : Double(*, device=cpu) = aten::mul(%x, %k)
          %b : Double(*, device=cpu) = aten::add(%a, %f, %k)
          return (%b)""".strip() + "\n")
    x = torch.randn(9, dtype=torch.float64)
    torch.testing.assert_close(operation(x, 3, 0.1), torch.add(x * 3, 0.1, alpha=3))
    assert not fallbacks


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_large_tensors_run_in_chunks_on_several_threads(threads, monkeypatch, fallbacks) -> None:
    monkeypatch.setattr(fusion, "PARALLEL_MIN_ELEMENTS", 100)
    previous = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        text, names = all_operators_graph(torch.float32)
        _, operation = fused(text)
        for size in (99, 100, 1001, 70_001):
            x, y = torch.randn(size), torch.rand(size) + 0.5
            ours = operation(x, y, 1.25)
            expected = run_graph(parse_ir(text), x, y, 1.25, optimize=False)
            for name, mine, theirs in zip(names, ours, expected):
                torch.testing.assert_close(mine, theirs, equal_nan=True, msg=lambda m, name=name: f"{name}: {m}")
    finally:
        torch.set_num_threads(previous)
    assert not fallbacks


def test_without_the_vector_math_library_kernels_are_built_plain(monkeypatch, tmp_path, fallbacks) -> None:
    monkeypatch.setenv("TSJIT_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(compiler, "VARIANTS", (("-DTSJIT_VECTOR_MATH", "-lno_such_library"), ()))
    monkeypatch.setattr(compiler, "_loaded", LRUCache("compiler", compiler.loaded_limit))
    text, names = all_operators_graph(torch.float64)
    _, operation = fused(text)
    x, y = torch.randn(100, dtype=torch.float64), torch.rand(100, dtype=torch.float64) + 0.5
    for mine, theirs in zip(operation(x, y, 2.0), run_graph(parse_ir(text), x, y, 2.0, optimize=False)):
        torch.testing.assert_close(mine, theirs, equal_nan=True)
    assert not fallbacks and len(list(tmp_path.rglob("*.so"))) == 1


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="libmvec is glibc's")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_every_operator_builds_with_vector_math(dtype, tmp_path) -> None:
    source = generate_kernel(fused(all_operators_graph(dtype)[0])[0].g("Subgraph")).source
    assert compiler._compile(source, compiler.find_compiler(), compiler.VARIANTS[0], str(tmp_path / "k.so"))


def test_views_are_read_through_their_strides(fallbacks) -> None:
    _, operation = fused(CHAIN.replace("Float(*, device=cpu)", "Float(*, *, device=cpu)"))
    gates = torch.randn(3, 80)
    x, y = gates[:, 20:40], gates[:, 60:]  # chunks of the LSTM's gates: not contiguous, but in row-major order
    views = [(x, y), (x, y.contiguous()), (x[:0], y[:0]), (x[:1], y[1:2]), (torch.randn(3, 1).expand(3, 20), y),
             (gates[:, ::4], y), (torch.randn(1, 20).expand(3, 20), x)]
    for a, b in views:
        expected = chain(a, b)
        result = operation(a, b)
        torch.testing.assert_close(result, expected)
        assert result.stride() == expected.stride()
    assert not fallbacks
    a, b = x.t(), y.t()  # eager's result would be transposed: the subgraph runs
    torch.testing.assert_close(operation(a, b), chain(a, b))
    assert len(fallbacks) == 1


def test_slices_of_higher_rank_tensors(fallbacks) -> None:
    _, operation = fused(CHAIN.replace("Float(*, device=cpu)", "Float(*, *, *, device=cpu)"))
    base = torch.randn(4, 5, 12)
    x, y = base[..., :6], base[..., 6:]
    for a, b in ((x, y), (base[:, :3, :6], y[:, :3]), (base[:, 1:4, 2:9:2], y[:, :3, :4])):
        torch.testing.assert_close(operation(a, b), chain(a, b))
    assert not fallbacks
