"""Builtins written in TorchScript itself (TorchScript's builtin_functions.cpp).

Some operators have overloads that no ATen schema provides, so TorchScript writes them as small functions:
`1 + x` is `aten::add(int, Tensor)`, which is `b + a` with the operands swapped; `x.shape` is `prim::shape`,
which is `a.size()`. When overload matching picks one of these, its body is inlined at the call:

    def f(x):            graph(%x.1 : Tensor):
        return 2 * x       %2 : int = prim::Constant[value=2]()
                           %3 : Tensor = aten::mul(%x.1, %2)     <- the body of `mul(a: int, b: Tensor)`

The sources below are TorchScript's, so the inlined bodies and their source ranges (`<string>:3:9`) match.
Each compiles on the first lookup of its name, with the native resolver (`torch.neg` is `aten::neg`).
"""

from __future__ import annotations

import re
import threading

from tsjit.frontend.ir_emitter import compile_source
from tsjit.frontend.resolver import NativeResolver
from tsjit.ir.symbols import Symbol

SCALAR_OPERATORS = """
def mul(a : {Scalar}, b : Tensor) -> Tensor:
  return b * a
def add(a : {Scalar}, b : Tensor) -> Tensor:
  return b + a
def ne(a : {Scalar}, b : Tensor) -> Tensor:
  return b != a
def eq(a : {Scalar}, b : Tensor) -> Tensor:
  return b == a
def sub(a : {Scalar}, b : Tensor) -> Tensor:
  return torch.neg(b) + a
def div(a : {Scalar}, b : Tensor) -> Tensor:
  return torch.reciprocal(b) * a
"""

SCALAR_OPERATORS_NO_COMPLEX = """
def lt(a : {Scalar}, b : Tensor) -> Tensor:
  return b > a
def le(a : {Scalar}, b : Tensor) -> Tensor:
  return b >= a
def gt(a : {Scalar}, b : Tensor) -> Tensor:
  return b < a
def ge(a : {Scalar}, b : Tensor) -> Tensor:
  return b <= a
"""

NTUPLE_OPERATORS = """
def _{name}(x: BroadcastingList{Length}[{Scalar}]) -> List[{Scalar}]:
  return x
"""

FLOORDIV = """
def floordiv(self : Tensor, other : {Rhs_Type}) -> Tensor:
  return torch.floor_divide(self, other)
"""

TENSOR_PROPERTIES = """
def ndim(a : Tensor) -> int:
  return a.dim()
def T(a : Tensor) -> Tensor:
  return a.numpy_T()
def H(a : Tensor) -> Tensor:
  return a.matrix_H()
def mT(a : Tensor) -> Tensor:
  return a.mT
def mH(a : Tensor) -> Tensor:
  return a.mH
def shape(a : Tensor) -> List[int]:
  return a.size()
"""

ATEN_OPERATORS = """
def _assert_int_or_pair(vals: List[int], name: str, message: str):
  pass
def list_with_default(out_size: List[int], defaults: List[int]):
  assert len(defaults) > len(out_size)
  return out_size
def _assert(condition : bool, message : str):
  assert condition, message
# existing device operator is registered with input name `a`, which prevents
# torch.device(type="cuda") from working. add shim-layer here
def device(type: str):
  return torch.device(type)
def type(self: Tensor, dtype: int, non_blocking: bool=False, copy: bool=False) -> Tensor:
  return self.to(dtype, non_blocking, copy)
"""

ATEN_OPERATORS_ADDITIONAL = """
def _assert(condition : Tensor, message : str):
  assert bool(condition), message
def __contains__(self: str, key: str):
    return self.find(key, 0, len(self)) != -1
"""


def _sources() -> list[tuple[str, str]]:
    """(namespace, source) in TorchScript's load order, which is the order overloads are tried in."""
    sources = [("aten", SCALAR_OPERATORS.format(Scalar=s)) for s in ("float", "int", "complex")]
    sources += [("aten", SCALAR_OPERATORS_NO_COMPLEX.format(Scalar=s)) for s in ("float", "int")]
    lengths = (("single", 1), ("pair", 2), ("triple", 3), ("quadruple", 4))
    sources += [("aten", NTUPLE_OPERATORS.format(name=name, Length=n, Scalar=s))
                for s in ("float", "int") for name, n in lengths]
    sources += [("aten", FLOORDIV.format(Rhs_Type=rhs)) for rhs in ("number", "Tensor")]
    sources += [("aten", ATEN_OPERATORS), ("aten", ATEN_OPERATORS_ADDITIONAL), ("prim", TENSOR_PROPERTIES)]
    return sources


class _Registry:
    """Parses a source on the first lookup of a name it defines, and compiles the functions of that name; while
    one compiles, lookups find nothing (the sources use builtins too, and TorchScript compiles them without
    these). Scripting `x * y` thus compiles the three `mul(a: Scalar, b: Tensor)` and nothing else."""

    def __init__(self):
        self.sources = _sources()
        self.names = [set(re.findall(r"^def (\w+)", source, re.MULTILINE)) for _, source in self.sources]
        self.parsed: dict[int, list] = {}  # source index -> its functions
        self.functions: dict[Symbol, list] = {}
        self.loading = False
        self.lock = threading.RLock()

    def get(self, symbol: Symbol) -> list:
        with self.lock:
            if self.loading:
                return []
            self.loading = True
            try:
                functions = self._named(symbol)
                for function in functions:
                    function.ensure_defined()
            finally:
                self.loading = False
            return functions

    def _named(self, symbol: Symbol) -> list:
        if symbol not in self.functions:
            self.functions[symbol] = [
                function for index, (namespace, _) in enumerate(self.sources)
                if namespace == symbol.ns and symbol.name in self.names[index]
                for function in self._parse(index) if function.name == symbol.name]
        return self.functions[symbol]

    def _parse(self, index: int) -> list:
        if index not in self.parsed:
            self.parsed[index] = compile_source(self.sources[index][1], NativeResolver())
        return self.parsed[index]


_REGISTRY = _Registry()


def builtin_functions_for(symbol: Symbol) -> list:
    """The TorchScript-defined builtins named `symbol` (compiled GraphFunctions), in overload order."""
    return _REGISTRY.get(symbol)
