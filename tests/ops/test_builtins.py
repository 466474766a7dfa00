"""Differential tests of tsjit's builtins against torch.jit, one small scripted function per case.

Each case is a function signature, a body and a list of inputs. torch.jit scripts the function from a
generated module; tsjit then runs the very graph torch.jit produced (read back with `parse_ir`), node by
node: schema nodes through tsjit's operator for the overload torch.jit chose, structural prim nodes through
`tsjit.ops.prim_ops.NODE_OPERATIONS`. Results must be the same TorchScript values (the same Python types,
containers, order and aliasing effects, since mutated arguments are returned), and failures must fail in
both with TorchScript's message.

Bodies stay straight-line (no `if`/`for`): control flow is the interpreter's job, not the builtins'.
"""

from __future__ import annotations

import copy
import functools
import importlib.util
import sys
import warnings

import pytest
import torch
from builtin_oracle import error_line, same_value, tsjit_operation

from tsjit.ir.parser import parse_ir
from tsjit.ir.schema import parse_schema
from tsjit.ops import prim_ops
from tsjit.ops.registry import find_operator

tensor = torch.tensor
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")  # torch.jit.script's own notice

LISTS = [
    ("a: List[int]", "len(a)", [([],), ([1, 2, 3],)]),
    ("a: List[int], i: int", "a[i]", [([1, 2, 3], 1), ([1, 2, 3], -1), ([1, 2, 3], 3), ([1, 2, 3], -4)]),
    ("a: List[int], x: int", "a.append(x)\n    return a", [([1], 2), ([], 0)]),
    ("a: List[int], i: int", "a.insert(i, 9)\n    return a",
     [([1, 2, 3], 1), ([1, 2, 3], 10), ([1, 2], -10)]),
    ("a: List[int]", "x = a.pop()\n    return a, x", [([1, 2, 3],), ([],)]),
    ("a: List[int], i: int", "x = a.pop(i)\n    return a, x", [([1, 2, 3], 0), ([1, 2, 3], -1), ([1], 5)]),
    ("a: List[int], i: int", "del a[i]\n    return a", [([1, 2, 3], 1), ([1, 2, 3], 3)]),
    ("a: List[int], i: int, x: int", "a[i] = x\n    return a", [([1, 2, 3], -1, 7), ([1], 1, 0)]),
    ("a: List[str]", "a.clear()\n    return a", [(["x", "y"],)]),
    ("a: List[int]", "a.reverse()\n    return a", [([1, 2, 3],)]),
    ("a: List[int], b: List[int]", "a.extend(b)\n    return a, b", [([1], [2, 3])]),
    ("a: List[int]", "b = a.copy()\n    b.append(4)\n    return a, b", [([1, 2],)]),
    ("a: List[int]", "b = list(a)\n    b.append(4)\n    return a, b", [([1, 2],)]),
    ("a: List[int]", "b = a\n    b.append(4)\n    return a", [([1, 2],)]),
    ("a: List[int], b: List[int]", "a + b", [([1], [2, 3])]),
    ("a: List[int], b: List[int]", "a += b\n    return a", [([1], [2, 3])]),
    ("a: List[int], n: int", "a * n", [([1, 2], 2), ([1, 2], 0)]),
    ("a: List[int], n: int", "n * a", [([1, 2], 3)]),
    ("a: List[int], n: int", "a *= n\n    return a", [([1, 2], 2), ([1, 2], -1)]),
    ("a: List[int]", "a[1:3], a[::-1], a[:-1], a[5:], a[::2]", [([1, 2, 3, 4, 5],)]),
    ("a: List[int], s: int", "a[::s]", [([1, 2, 3], 0)]),
    ("a: List[int], x: int", "x in a", [([1, 2], 2), ([1, 2], 3)]),
    ("a: List[str], x: str", "x in a", [(["a"], "a"), (["a"], "b")]),
    ("a: List[float], x: float", "x in a", [([1.5], 1.5), ([float("nan")], float("nan"))]),
    ("a: List[int], x: int", "a.remove(x)\n    return a", [([1, 2, 1], 1), ([1], 5)]),
    ("a: List[str], x: str", "a.index(x)", [(["a", "b"], "b"), (["a"], "z")]),
    ("a: List[float], x: float", "a.index(x)", [([1.0, 2.5], 2.5), ([1.0], 0.1)]),
    ("a: List[bool], x: bool", "a.count(x)", [([True, False, True], True)]),
    ("a: List[int]", "a.sort()\n    return a", [([3, 1, 2],)]),
    ("a: List[float]", "a.sort(reverse=True)\n    return a", [([3.0, 1.5, 2.0],)]),
    ("a: List[str]", "sorted(a)", [(["b", "a", "c"],)]),
    ("a: List[Tuple[int, str]]", "a.sort()\n    return a", [([(3, "a"), (1, "b"), (1, "a")],)]),
    ("a: List[int], b: List[int]", "a == b, a != b", [([1, 2], [1, 2]), ([1], [1, 2])]),
    ("a: List[float], b: List[float]", "a == b", [([float("nan")], [float("nan")]), ([1.0], [1.0])]),
    ("a: List[str], b: List[str]", "a == b, a != b", [(["a"], ["a"]), (["a"], ["b"])]),
    ("a: List[bool], b: List[bool]", "a == b", [([True], [True])]),
    ("a: List[int]", "min(a), max(a)", [([3, 1, 2],), ([],)]),
    ("a: List[float]", "min(a), max(a)", [([3.5, -1.0],)]),
    ("a: List[int], b: List[int]", "min(a, b), max(a, b)", [([1, 2], [1, 2, 0]), ([3], [1, 9])]),
    ("a: List[int]", "sum(a)", [([1, 2, 3],), ([2**40, 2**40],)]),
    ("a: List[float]", "sum(a)", [([0.5, 0.25],)]),
    ("a: List[bool]", "sum(a), any(a), all(a)", [([True, False],), ([],)]),
    ("a: List[torch.Tensor], x: torch.Tensor", "a.index(x), a.count(x)",
     [([tensor([1.0]), tensor([2.0]), tensor([2.0])], tensor([2.0]))]),
    ("a: List[torch.Tensor], x: torch.Tensor", "a.remove(x)\n    return len(a)",
     [([tensor([1.0]), tensor([2.0])], tensor([2.0]))]),
    ("a: List[torch.Tensor], b: List[torch.Tensor]", "a == b", [([tensor([1, 2])], [tensor([1, 2])])]),
]

DICTS = [
    ("d: Dict[str, int], k: str", "d[k]", [({"a": 1}, "a"), ({"a": 1}, "b")]),
    ("d: Dict[int, float], k: int", "d[k]", [({1: 1.5}, 1), ({1: 1.5}, 2)]),
    ("d: Dict[str, int], k: str", "d.get(k), d.get(k, 7)", [({"a": 1}, "a"), ({"a": 1}, "b")]),
    ("d: Dict[str, int], k: str", "x = d.setdefault(k, 5)\n    return d, x",
     [({"a": 1}, "a"), ({"a": 1}, "z")]),
    ("d: Dict[str, int], k: str", "x = d.pop(k)\n    return d, x", [({"a": 1, "b": 2}, "a"), ({}, "a")]),
    ("d: Dict[str, int], k: str", "x = d.pop(k, 0)\n    return d, x", [({"a": 1}, "z")]),
    ("d: Dict[str, int]", "x = d.popitem()\n    return d, x", [({"a": 1, "b": 2},), ({},)]),
    ("d: Dict[str, int]", "d.keys(), d.values(), d.items(), len(d)", [({"b": 1, "a": 2},)]),
    ("d: Dict[int, str], e: Dict[int, str]", "d.update(e)\n    return d",
     [({1: "a", 2: "b"}, {2: "c", 0: "d"})]),
    ("d: Dict[str, int]", "e = d.copy()\n    e['z'] = 0\n    return d, e", [({"a": 1},)]),
    ("d: Dict[str, int]", "e = dict(d)\n    e['z'] = 0\n    return d, e", [({"a": 1},)]),
    ("d: Dict[str, int], k: str", "k in d", [({"a": 1}, "a"), ({"a": 1}, "b")]),
    ("d: Dict[bool, int], k: bool", "k in d, d[k]", [({True: 1}, True)]),
    ("d: Dict[str, int], k: str", "del d[k]\n    return d", [({"a": 1, "b": 2}, "a"), ({"a": 1}, "q")]),
    ("d: Dict[str, int]", "d.clear()\n    return d", [({"a": 1},)]),
    ("d: Dict[str, int], k: str, v: int", "d[k] = v\n    return d", [({"b": 1}, "a", 2), ({"a": 1}, "a", 3)]),
    ("a: int, b: int", "{'x': a, 'y': b, 'x': b}", [(1, 2)]),
    ("d: Dict[torch.Tensor, int], k: torch.Tensor", "k in d", [({tensor(1): 1}, tensor(1))]),
    ("d: Dict[float, int], k: float", "d.get(k, -1)", [({1.5: 1}, 1.5)]),
]

STRINGS = [
    ("a: int, b: float, c: List[int], d: Dict[str, float], e: Tuple[int, str], f: Optional[int], g: bool",
     "'{} {} {} {} {} {} {}'.format(a, b, c, d, e, f, g)",
     [(1, 2.5, [1, 2], {"a": 1.0}, (1, "x"), None, True), (-3, 0.1, [], {}, (0, ""), 4, False)]),
    ("a: int", "'{} and {}'.format(a)", [(1,)]),
    ("a: int", "'x{}y'.format(a, a, a)", [(1,)]),
    ("x: float", "str(x)", [(1.0,), (0.1,), (1e20,), (1e-7,), (-0.0,), (float("inf"),), (float("nan"),),
                            (2.0**60,), (123456789.0,)]),
    ("x: List[float], y: Tuple[int]", "str(x) + str(y)", [([1.0, 2.5], (1,))]),
    ("x: List[str], y: complex", "str(x) + str(y)", [(["a", "b"], 1 - 2j)]),
    ("t: torch.Tensor", "str(t) + '|{}'.format(t)",
     [(tensor([1.0, 2.5]),), (tensor([[1, 2], [3, 4]]),), (tensor(2.5),),
                                                   (torch.arange(8.0).reshape(2, 2, 2),)]),
    ("t: torch.Tensor", "'{} {}'.format(t.device, t.dtype)", [(tensor([1]),)]),
    ("a: str, b: str", "a + b, a == b, a != b, a < b, a >= b", [("ab", "ac"), ("b", "b")]),
    ("a: str, i: int", "a[i]", [("abc", 1), ("abc", -1), ("abc", 5)]),
    ("a: str", "a[1:], a[::-1], a[:-1], len(a), list(a)", [("hello",), ("",)]),
    ("a: str", "a.split(), a.split(','), a.split(',', 1), a.rsplit(',', 1)", [(" a,b , c ",), ("",)]),
    ("a: str", "a.split('')", [("abc",)]),
    ("a: str", "a.splitlines(), a.splitlines(True)", [("a\r\nb\nc",)]),
    ("sep: str, parts: List[str]", "sep.join(parts)", [(", ", ["a", "b", "c"]), ("", [])]),
    ("a: str, p: str", "a.startswith(p), a.endswith(p), a.find(p), a.rfind(p), a.count(p)",
     [("abcabc", "bc"), ("abc", "z"), ("aaaa", "aa")]),
    ("a: str", "a.index('z')", [("abc",)]),
    ("a: str", "a.lower(), a.upper(), a.swapcase(), a.capitalize(), a.title()", [("hello wORLD1a",)]),
    ("a: str", "a.strip(), a.lstrip(), a.rstrip(), a.strip('xa')", [("  xa hi ax \n",)]),
    ("a: str", "a.isdigit(), a.isalpha(), a.isalnum(), a.isspace(), a.isupper(), a.islower(), a.istitle()",
     [("123",), ("Abc",), ("",), (" \t",), ("ABC1",), ("Hello World",)]),
    ("a: str", "a.center(7, '*'), a.ljust(5), a.rjust(5, '-'), a.zfill(5)", [("ab",), ("-12",)]),
    ("a: str", "a.replace('a', 'xy'), a.replace('a', '', 1), a.partition('b'), a.rpartition('b')",
     [("abab",), ("zzz",)]),
    ("a: str", "a.expandtabs(4)", [("a\tb\nc\td",)]),
    ("a: int, b: str", "'%d and %s' % (a, b)", [(1, "x")]),
    ("a: float", "'%f|%e|%s' % (a, a, a)", [(2.5,)]),
    ("a: str", "ord(a)", [("a",), ("ab",)]),
    ("i: int", "chr(i), hex(i), bin(i), oct(i)", [(65,), (-255,), (0,)]),
    ("a: str", "int(a)", [("12",), (" -7",), ("12x",), ("",)]),
    ("a: str", "float(a)", [("1.5",), ("1e3",), ("inf",), ("abc",), ("1.5x",)]),
]

NUMBERS = [
    ("a: int, b: int", "a + b, a - b, a * b, a / b, a // b, a % b, a ** b",
     [(7, 2), (-7, 2), (7, -2), (2**62, 4), (2, -1)]),
    ("a: int, b: int", "a // b", [(1, 0)]),
    ("a: int, b: int", "a ** b", [(0, -1)]),
    ("a: float, b: float", "a + b, a - b, a * b, a / b, a // b, a % b, a ** b",
     [(7.5, 2.0), (-7.5, 2.0), (1.0, 0.0), (0.0, 0.0), (-8.0, 1.0 / 3)]),
    ("a: int, b: float", "a + b, a - b, a * b, a / b, a // b, a % b, a ** b, a < b, a == b",
     [(3, 1.5), (-3, 0.5), (2, 2.0)]),
    ("a: float, b: int", "a + b, a / b, a // b, a % b, a > b, a <= b, a != b", [(3.5, 2), (-3.5, 2)]),
    ("a: int, b: int", "a < b, a > b, a <= b, a >= b, a == b, a != b", [(1, 2), (2, 2)]),
    ("a: int, b: int", "a & b, a | b, a ^ b, a << b, a >> b", [(12, 3), (-8, 1), (1, 70)]),
    ("a: bool, b: bool", "not a, a == b, a != b", [(True, False), (True, True)]),
    ("a: float, b: float", "a < b, a > b, a <= b, a >= b, a == b, a != b", [(1.5, 2.5), (2.0, 2.0),
                                                                           (float("nan"), 1.0)]),
    ("a: int", "-a, abs(a), float(a), bool(a), str(a)", [(5,), (-3,), (0,)]),
    ("a: float", "-a, abs(a), int(a), bool(a), round(a), math.floor(a), math.ceil(a)",
     [(2.5,), (3.5,), (-2.7,), (0.0,)]),
    ("a: float", "int(a)", [(float("inf"),), (float("nan"),)]),
    ("a: float", "math.floor(a)", [(1e300,)]),
    ("a: float", "math.sqrt(a), math.log(a), math.exp(a), math.sin(a), math.atan(a), math.log10(a)",
     [(2.0,), (0.0,), (-1.0,)]),
    ("a: float, b: float", "math.log(a, b), math.atan2(a, b), math.fmod(a, b), math.copysign(a, b)",
     [(8.0, 2.0), (1.0, -0.0)]),
    ("a: float", "math.isnan(a), math.isinf(a), math.isfinite(a), math.erf(a), math.gamma(a)",
     [(0.5,), (float("nan"),), (float("inf"),)]),
    ("a: int, b: int", "divmod(a, b), math.gcd(a, b), math.factorial(a)", [(7, 2), (-7, 2), (12, -18)]),
    ("a: float", "math.frexp(a), math.modf(a), math.ldexp(a, 3)", [(10.0,), (-2.5,)]),
    ("a: int, b: float", "min(a, b), max(a, b)", [(1, 2.5), (3, 1.5)]),
    ("a: float, b: float", "min(a, b), max(a, b)", [(float("nan"), 1.0), (1.0, float("nan"))]),
    ("a: int, b: int", "complex(a, b)", [(1, 2)]),
    ("a: complex, b: complex", "a + b, a - b, a * b, a / b, a == b", [(1 + 2j, 3 - 1j)]),
    ("a: Optional[int]", "a is None, a is not None", [(None,), (3,)]),
    ("a: List[int], b: List[int]", "a is b", [([1], [1])]),
]

TENSORS = [
    ("x: torch.Tensor", "x.dim(), x.size(), x.shape, len(x), x.device, x.dtype, x.is_cuda, x.requires_grad",
     [(torch.zeros(2, 3),), (torch.zeros(4, dtype=torch.int32),)]),
    ("x: torch.Tensor", "len(x)", [(tensor(2.0),)]),
    ("x: torch.Tensor", "x.is_nested, x.is_quantized, x.is_sparse, x.is_meta, x.layout", [(tensor([1.0]),)]),
    ("x: torch.Tensor", "int(x), float(x), bool(x)", [(tensor(2.5),), (tensor([7]),), (tensor([1, 2]),)]),
    ("x: torch.Tensor", "x.size() == [2, 3], x.stride(), x.element_size()", [(torch.zeros(2, 3),)]),
    ("a: int, b: float, c: bool", "torch.tensor(a), torch.tensor(b), torch.tensor(c), torch.tensor([a, a])",
     [(3, 2.5, True)]),
    ("a: List[float]", "torch.tensor(a), torch.tensor(a, dtype=torch.float64), torch.as_tensor(a)",
     [([1.0, 2.5],), ([],)]),
    ("a: List[int]", "torch.tensor(a)", [([],), ([1, 2],)]),
    ("a: List[List[int]]", "torch.tensor(a)", [([[1, 2], [3, 4]],), ([[1], [2, 3]],)]),
    ("x: torch.Tensor", "y: List[List[float]] = x.tolist()\n    return y", [(torch.ones(2, 2),)]),
    ("x: torch.Tensor", "y: List[int] = x.tolist()\n    return y", [(torch.ones(2),)]),
    ("x: torch.Tensor", "x.T, x.mT, x.cpu(), x.to(torch.float64)", [(torch.arange(6.0).reshape(2, 3),)]),
    ("x: torch.Tensor", "x.item() == 1, x.item() / 2, float(x.item()), int(x.item())",
     [(tensor(1),), (tensor(2.5),)]),
    ("x: torch.Tensor", "torch.jit.is_scripting(), torch.is_grad_enabled(), torch.is_autocast_enabled()",
     [(tensor(1),)]),
    ("x: torch.Tensor", "x.device.type, x.device.index", [(tensor(1),)]),
    ("a: List[int], b: List[int]", "torch.broadcast_shapes(a, b)", [([2, 1], [1, 3]), ([2], [3])]),
    ("x: str", "warnings.warn(x)", [("careful",)]),
    ("x: torch.Tensor", "x.device == torch.device('cpu'), torch.device('cpu', 0).index", [(tensor(1),)]),
    ("x: torch.Tensor, y: torch.Tensor", "x is y, x is not y", [(tensor(1), tensor(1))]),
    ("x: torch.Tensor", "x.split([1, 2])", [(torch.arange(3),)]),
]

STRUCTURES = [
    ("t: Tuple[int, str, float]", "t[0], t[-1], t[0:2]", [((1, "x", 2.5),)]),
    ("t: Tuple[int, str]", "a, b = t\n    return b, a", [((1, "x"),)]),
    ("a: List[int]", "x, y = a\n    return y, x", [([1, 2],), ([1, 2, 3],)]),
    ("x: Union[int, str]", "isinstance(x, int), isinstance(x, str)", [(1,), ("a",)]),
    ("x: Any", "isinstance(x, List[int]), isinstance(x, Tuple[int, str])", [([1],), ((1, "a"),), ("a",)]),
    ("x: int", "raise ValueError('bad ' + str(x))", [(3,)]),
    ("x: int", "raise Exception('plain')", [(3,)]),
]

CASES = [*LISTS, *DICTS, *STRINGS, *NUMBERS, *TENSORS, *STRUCTURES]

_HEADER = """import math
import warnings
import torch
from typing import Any, Dict, List, Optional, Tuple, Union
from torch.jit import annotate
"""


def _source(index: int, signature: str, body: str) -> str:
    statements = body if "return" in body or body.startswith("raise") or "\n" in body else f"return {body}"
    return f"def case_{index}({signature}):\n    {statements}\n"


@pytest.fixture(scope="module")
def scripted(tmp_path_factory):
    """case index -> the torch.jit ScriptFunction of that case (all cases in one generated module)."""
    path = tmp_path_factory.mktemp("builtin_cases") / "builtin_cases.py"
    path.write_text(_HEADER + "\n\n".join(_source(i, s, b) for i, (s, b, _) in enumerate(CASES)))
    spec = importlib.util.spec_from_file_location("builtin_cases", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["builtin_cases"] = module
    spec.loader.exec_module(module)
    return functools.cache(lambda index: torch.jit.script(getattr(module, f"case_{index}")))


def run_with_tsjit(function, args: tuple):
    """Run torch.jit's graph of `function` with tsjit's operations (see the module docstring)."""
    graph = parse_ir(str(function.graph))
    values = dict(zip(graph.inputs, args))
    for node, torch_node in zip(graph.nodes(), function.graph.nodes(), strict=True):
        assert node.kind == torch_node.kind(), "parse_ir changed the node order"
        result = _operation(node, torch_node)(*[values[v] for v in node.inputs])
        outputs = node.outputs
        values.update(zip(outputs, result if len(outputs) > 1 else [result]))
    return values[graph.outputs[0]]


def _operation(node, torch_node):
    factory = prim_ops.NODE_OPERATIONS.get(node.kind)
    if factory is not None:
        return factory(node)
    return tsjit_operation(_operator_name(torch_node), node)


def _case_ids():
    return [f"{i}:{body.splitlines()[0][:50]}" for i, (_, body, _) in enumerate(CASES)]


@pytest.mark.parametrize("index", range(len(CASES)), ids=_case_ids())
def test_builtin_matches_torch_jit(scripted, index):
    function = scripted(index)
    for args in CASES[index][2]:
        _compare(function, args)


def _compare(function, args: tuple) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            expected = function(*copy.deepcopy(args))
        except Exception as error:
            _expect_same_failure(function, args, error)
            return
        actual = run_with_tsjit(function, copy.deepcopy(args))
    assert same_value(expected, actual), f"{args}: torch.jit gives {expected!r}, tsjit {actual!r}"


def _expect_same_failure(function, args: tuple, error: Exception) -> None:
    """tsjit fails too: with TorchScript's message, or with the Python exception a `raise` named."""
    message = error_line(error)
    with pytest.raises(Exception) as ours:
        run_with_tsjit(function, copy.deepcopy(args))
    raised = ours.value
    if message.startswith("builtins."):
        assert f"builtins.{type(raised).__name__}: {raised}" == message
    else:
        assert str(raised) == message, f"{args}"


def test_the_cases_exercise_every_builtin_that_nn_modules_use(scripted):
    """Every JIT-only operator and prim node kind found in torch.jit's graphs of torch.nn's modules and
    functionals appears in some case above (the list was gathered by scripting all of torch.nn)."""
    used = set()
    for index in range(len(CASES)):
        for node in scripted(index).graph.nodes():
            used.add(_operator_name(node))
    missing = sorted(NN_MODULE_BUILTINS - used - _COVERED_ELSEWHERE)
    assert not missing


def _operator_name(torch_node) -> str:
    """`ns::name.overload` of the schema torch.jit matched for a node, or the kind of a schema-less node."""
    text = torch_node.schema()
    return torch_node.kind() if text == "(no schema)" else parse_schema(text).operator_name


# JIT-only operators and structural kinds in the inlined graphs of scripted torch.nn modules and functionals
NN_MODULE_BUILTINS = {
    "aten::Bool.Tensor", "aten::Float.Scalar", "aten::Int.float", "aten::__contains__.int_list",
    "aten::__contains__.str_list", "aten::__derive_index", "aten::__getitem__.t", "aten::__is__",
    "aten::__isnot__", "aten::__not__", "aten::__range_length", "aten::add.int", "aten::add.str",
    "aten::add.t", "aten::all.bool", "aten::any.bool", "aten::append.t", "aten::broadcast_shapes",
    "aten::div", "aten::div.float", "aten::eq", "aten::eq.float", "aten::eq.int", "aten::eq.int_list",
    "aten::eq.str", "aten::floor.float", "aten::floordiv.int", "aten::format", "aten::ge.int",
    "aten::gt.float", "aten::gt.int", "aten::is_autocast_enabled", "aten::is_grad_enabled",
    "aten::le.float", "aten::le.float_int", "aten::le.int", "aten::len.str", "aten::len.t", "aten::list.t",
    "aten::lt.float", "aten::lt.int", "aten::mul.float", "aten::mul.int", "aten::mul.int_float",
    "aten::ne.float", "aten::ne.int", "aten::ne.int_list", "aten::ne.str", "aten::neg.int",
    "aten::remainder.int", "aten::size", "aten::slice.t", "aten::sqrt.float", "aten::sub.int", "aten::warn",
    "prim::Constant", "prim::GetAttr", "prim::ListConstruct", "prim::ListUnpack", "prim::RaiseException",
    "prim::TupleConstruct", "prim::TupleIndex", "prim::TupleUnpack", "prim::Uninitialized", "prim::device",
    "prim::dtype", "prim::is_nested", "prim::min.self_int", "prim::requires_grad", "prim::type",
    "prim::unchecked_cast",
}
# exercised by the other builtin tests: range loops (test_builtin_operators), attributes and refinements
# (test_prim_ops)
_COVERED_ELSEWHERE = {"aten::__derive_index", "aten::__range_length", "prim::GetAttr", "prim::unchecked_cast"}


def test_every_nn_module_builtin_is_implemented():
    for name in NN_MODULE_BUILTINS:
        if name in prim_ops.NODE_OPERATIONS:
            continue
        operator = find_operator(name)
        assert operator is not None and operator.has_operation, name


# JIT-only schemas that are not builtins tsjit implements here: torch.distributed RPC and RRefs, Python ops
# of the frontend, await/wait and the profiling executor's guards, fusion groups and MKLDNN rewrites (the
# interpreter and graph executor own those that tsjit runs).
_NOT_BUILTINS = {
    "prim::rpc_async", "prim::rpc_remote", "prim::rpc_sync", "aten::to_here", "aten::local_value",
    "aten::is_owner", "aten::owner_name", "aten::owner", "aten::confirmed_by_owner", "aten::dist_backward",
    "prim::PythonOp", "prim::IgnoredPythonOp", "prim::awaitable_nowait", "prim::awaitable_wait", "aten::wait",
    "prim::BailoutTemplate", "prim::BailOut", "prim::Guard", "prim::FallbackGraph", "prim::TypeCheck",
    "prim::RequiresGradCheck", "prim::profile", "prim::profile_ivalue", "prim::FusionGroup",
    "prim::DifferentiableGraph", "prim::TensorExprGroup", "prim::TensorExprDynamicGroup",
    "prim::TensorExprDynamicGuard", "prim::StaticSubgraph", "prim::StaticRuntimeCopyOuts",
    "prim::oneDNNFusionGroup", "prim::oneDNNFusionGuard", "prim::FusedConcat",
    "prim::MMBatchSide", "prim::ConstantMKLDNNTensor", "prim::BroadcastMKLDNNTensors",
    "prim::mkldnn_convolution", "prim::MKLDNNHardTanh", "prim::MKLDNNHardTanh_", "prim::MKLDNNHardSwish",
    "prim::MKLDNNHardSwish_", "prim::MKLDNNHardSigmoid", "prim::MKLDNNHardSigmoid_", "prim::MKLDNNClamp",
    "prim::MKLDNNClamp_", "prim::MKLDNNScalarMul", "prim::MKLDNNScalarMul_", "prim::MKLDNNLayerNorm",
    "prim::MKLDNNLayerNorm_", "profiler::_call_end_callbacks_on_jit_fut",
    "profiler::_call_end_callbacks_on_jit_fut._RecordFunction", "aten::is_strides_like_format",
}


def test_jit_only_operators_are_implemented():
    """Of PyTorch's JIT-only schemas (those the dispatcher does not have), tsjit implements all but the
    ones listed above."""
    dispatcher = set(torch._C._dispatch_get_all_op_names())
    names = [parse_schema(str(s)).operator_name for s in torch._C._jit_get_all_schemas()]
    jit_only = [name for name in names if name not in dispatcher]
    implemented = [name for name in jit_only if find_operator(name).has_operation]
    missing = sorted(set(jit_only) - set(implemented))
    assert len(implemented) >= 720
    assert missing == sorted(_NOT_BUILTINS)
