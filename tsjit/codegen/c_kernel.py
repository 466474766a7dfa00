"""The C source of one FusionGroup subgraph: loops computing every output element from the input elements.

    with prim::FusionGroup_0 = graph(%x : Float(*, device=cpu), %y : Float(*, device=cpu), %a : float):
      %1 : int = prim::Constant[value=1]()
      %s : Float(*, device=cpu) = aten::sin(%x)
      %r : Float(*, device=cpu) = aten::add(%s, %y, %a)
      return (%r)

becomes (after the includes, `typedef float T;` and the helpers of elementwise.C_HELPERS)

    void tsjit_kernel(int64_t rows, int64_t n, const T* restrict in0, int64_t st0, const T* restrict in1,
                      int64_t st1, double s2, T* restrict out0) {
      const T c2 = (T)s2;
      for (int64_t r = 0; r < rows; r++) for (int64_t i = 0; i < n; i += 32) {
        const int64_t m = n - i < 32 ? n - i : 32;
        T v4[32];
        TSJIT_SIMD for (int64_t j = 0; j < m; j++) v4[j] = sin(in0[r * st0 + i + j]);
        T v5[32];
        TSJIT_SIMD for (int64_t j = 0; j < m; j++) v5[j] = (v4[j] + c2 * in1[r * st1 + i + j]);
        TSJIT_SIMD for (int64_t j = 0; j < m; j++) out0[r * n + i + j] = v5[j];
      }
    }

The elements go in blocks of BLOCK, one operation at a time over the block: the elements of a block are
independent, so the CPU overlaps their math calls and the compiler vectorizes the simple operations, where one
element at a time through a long chain waits for each result in turn (about 2x slower); a block's
temporaries stay in the L1 cache. TSJIT_SIMD is `omp simd` when the vector math library is used (compiler.py).
The kernel computes `rows` rows of n elements of one float dtype: every output is contiguous, every tensor input
has rows `st` elements apart (one row of all elements for contiguous inputs; row-major slices like the chunks of a
matrix otherwise: the runtime's guard makes sure); int and float inputs are passed by value and converted to T
once, as eager converts Scalars to the tensor's dtype. Constants are written as literals. `generate_kernel` raises
NotFusible for a subgraph it cannot compile (another node kind, another dtype, a non-tensor output), so a
FusionGroup that did not come from the graph fuser still runs, by falling back to its subgraph.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import torch

from tsjit.codegen.elementwise import C_HELPERS, OPERATORS, OPTIONAL_SCALAR, TENSOR, UNKNOWN, Operand
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import prim
from tsjit.ir.types import FloatType, IntType, TensorType

KERNEL_NAME = "tsjit_kernel"
LOOP = "TSJIT_SIMD for (int64_t j = 0; j < m; j++)"
# glibc's libmvec has vector versions of these (float and double; sin, cos, exp, log and pow since glibc 2.22,
# the others since 2.35), within 4 ulps of the correctly rounded result like PyTorch's SLEEF kernels
VECTOR_MATH_FUNCTIONS = {"sin": 1, "cos": 1, "tan": 1, "exp": 1, "exp2": 1, "expm1": 1, "log": 1, "log2": 1,
                         "log10": 1, "log1p": 1, "pow": 2, "atan": 1, "atan2": 2, "asin": 1, "acos": 1, "sinh": 1,
                         "cosh": 1, "tanh": 1, "asinh": 1, "acosh": 1, "atanh": 1, "erf": 1, "erfc": 1}
BLOCK = 32  # elements computed together, one operation at a time
C_TYPES = {torch.float32: "float", torch.float64: "double"}
TENSOR_ARGUMENT, INT_ARGUMENT, FLOAT_ARGUMENT = "tensor", "int", "float"


class NotFusible(Exception):
    """The subgraph holds something the kernel generator cannot compile (the message says what)."""


class Kernel(NamedTuple):
    """A generated kernel: its C source, the kind of each subgraph input, the element dtype, the output count."""

    source: str
    arguments: tuple[str, ...]
    dtype: torch.dtype
    num_outputs: int


def generate_kernel(subgraph: Graph) -> Kernel:
    """The kernel computing `subgraph` elementwise; raises NotFusible if it cannot."""
    return _Generator(subgraph).kernel()


class _Generator:
    def __init__(self, subgraph: Graph):
        self.subgraph = subgraph
        self.dtype = _element_dtype(subgraph)
        self.operands: dict[Value, Operand] = {}
        self.parameters: list[str] = ["int64_t rows", "int64_t n"]
        self.prologue: list[str] = []
        self.body: list[str] = []

    def kernel(self) -> Kernel:
        arguments = tuple(self.add_input(i, value) for i, value in enumerate(self.subgraph.inputs))
        if TENSOR_ARGUMENT not in arguments:
            raise NotFusible("no input is a tensor")
        for node in self.subgraph.nodes():
            self.add_node(node)
        for k, value in enumerate(self.subgraph.outputs):
            if not isinstance(value.type, TensorType) or value not in self.operands or value.node.kind is prim.Constant:
                raise NotFusible(f"output %{value.debug_name} is not a computed tensor")
            self.parameters.append(f"T* restrict out{k}")
            self.body.append(f"{LOOP} out{k}[r * n + i + j] = {self.operands[value].expr};")
        return Kernel(self.source(), arguments, self.dtype, len(self.subgraph.outputs))

    def source(self) -> str:
        lines = ["#include <stdint.h>", "#include <tgmath.h>", f"typedef {C_TYPES[self.dtype]} T;",
                 _vector_math_declarations(self.dtype), C_HELPERS,
                 f"void {KERNEL_NAME}({', '.join(self.parameters)}) {{"]
        lines += [f"  {line}" for line in self.prologue]
        lines.append(f"  for (int64_t r = 0; r < rows; r++) for (int64_t i = 0; i < n; i += {BLOCK}) {{")
        lines.append(f"    const int64_t m = n - i < {BLOCK} ? n - i : {BLOCK};")
        lines += [f"    {line}" for line in self.body]
        lines += ["  }", "}", ""]
        return "\n".join(lines)

    def add_input(self, index: int, value: Value) -> str:
        type_ = value.type
        if isinstance(type_, TensorType):
            self.parameters += [f"const T* restrict in{index}", f"int64_t st{index}"]
            self.operands[value] = Operand(f"in{index}[r * st{index} + i + j]", UNKNOWN)
            return TENSOR_ARGUMENT
        if isinstance(type_, IntType | FloatType):
            c_type, kind = ("int64_t", INT_ARGUMENT) if isinstance(type_, IntType) else ("double", FLOAT_ARGUMENT)
            self.parameters.append(f"{c_type} s{index}")
            self.prologue.append(f"const T c{index} = (T)s{index};")
            self.operands[value] = Operand(f"c{index}", UNKNOWN)
            return kind
        raise NotFusible(f"input %{value.debug_name} has type {type_}")

    def add_node(self, node: Node) -> None:
        if node.kind is prim.Constant:
            value = constant_value(node)
            self.operands[node.output()] = Operand(c_literal(value), value)
            return
        schema = node.maybe_schema()
        entry = OPERATORS.get(schema.operator_name) if schema is not None else None
        if entry is None or len(node.outputs) != 1:
            raise NotFusible(f"no kernel computes {node.kind}")
        operands = [self.operand(value, role) for value, role in zip(node.inputs, entry.roles)]
        if len(operands) != len(node.inputs):
            raise NotFusible(f"{node.kind} has {len(node.inputs)} inputs, expected {len(entry.roles)}")
        name = f"v{len(self.operands)}"
        self.body.append(f"T {name}[{BLOCK}];")
        self.body.append(f"{LOOP} {name}[j] = {entry.emit(*operands)};")
        self.operands[node.output()] = Operand(f"{name}[j]", UNKNOWN)

    def operand(self, value: Value, role: str) -> Operand:
        operand = self.operands.get(value)
        if operand is None:
            raise NotFusible(f"%{value.debug_name} is not computed in the kernel")
        is_tensor = isinstance(value.type, TensorType)
        if is_tensor != (role == TENSOR):
            raise NotFusible(f"%{value.debug_name} of type {value.type} cannot be a {role!r} operand")
        if is_tensor and value.type.dtype is not self.dtype:
            raise NotFusible(f"%{value.debug_name} is not of dtype {self.dtype}")
        if operand.expr is None and role != OPTIONAL_SCALAR:
            raise NotFusible(f"%{value.debug_name} is None")
        return operand


def _vector_math_declarations(dtype: torch.dtype) -> str:
    """With TSJIT_VECTOR_MATH defined, the math functions are declared `omp declare simd` (libmvec provides the
    vector versions) and every loop is `omp simd`; without it, plain scalar loops."""
    c_type, suffix = C_TYPES[dtype], "f" if dtype is torch.float32 else ""
    lines = ["#ifdef TSJIT_VECTOR_MATH"]
    for name, arity in VECTOR_MATH_FUNCTIONS.items():
        # the parentheses keep <tgmath.h>'s macro of the same name from expanding
        lines += ["#pragma omp declare simd notinbranch", f"{c_type} ({name}{suffix})({', '.join([c_type] * arity)});"]
    lines += ['#define TSJIT_SIMD _Pragma("omp simd")', "#else", "#define TSJIT_SIMD", "#endif"]
    return "\n".join(lines)


def _element_dtype(subgraph: Graph) -> torch.dtype:
    """The one float dtype of the subgraph's tensors."""
    dtypes = {v.type.dtype for n in subgraph.nodes() for v in (*n.inputs, *n.outputs)
              if isinstance(v.type, TensorType)}
    (dtype,) = dtypes if len(dtypes) == 1 else (None,)
    if dtype not in C_TYPES:
        raise NotFusible(f"the subgraph's tensors must have one dtype among float32 and float64, not {dtypes}")
    return dtype


def c_literal(value: Any) -> str | None:
    """A constant as a C expression of type T; None for None. Other constants cannot be kernel operands."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise NotFusible(f"the constant {value!r} cannot be a kernel operand")
    if isinstance(value, int):
        if not -2 ** 63 < value < 2 ** 63:
            raise NotFusible(f"the constant {value} does not fit in int64")
        return f"((T){value}LL)"
    if math.isnan(value):
        return "((T)NAN)"
    if math.isinf(value):
        return "((T)INFINITY)" if value > 0 else "(-(T)INFINITY)"
    return f"((T){value!r})"
