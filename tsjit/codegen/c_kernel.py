"""The C source of one FusionGroup subgraph: loops computing every output element from the input elements.

    with prim::FusionGroup_0 = graph(%g : Float(*, *, device=cpu), %b : Float(*, device=cpu)):
      %1 : int = prim::Constant[value=1]()
      %s : Float(*, *, device=cpu) = aten::add(%g, %b, %1)
      %i : Float(*, *, device=cpu), %f : Float(*, *, device=cpu) = prim::ConstantChunk[chunks=2, dim=1](%s)
      %r : Float(*, *, device=cpu) = aten::mul(%i, %f)
      return (%r)

becomes (after the includes, `typedef float T;` and the helpers of elementwise.C_HELPERS)

    void tsjit_kernel(int64_t begin, int64_t end, const int64_t* restrict geometry, const T* restrict in0,
                      const T* restrict in1, T* restrict out0) {
      const int64_t size0 = geometry[0];                (the sizes, then each tensor input's strides)
      const int64_t size1 = geometry[1];
      const int64_t e0_0 = geometry[2];
      ... e0_1, e1_0, e1_1 likewise ...
      const T* const pb0 = in0;                         (chunk 0 of %s reads %g and %b where %r is computed,
      const T* const pb1 = in1;
      const T* const pb3 = in0 + 1 * size1 * e0_1;       chunk 1 one chunk size further along dimension 1)
      const T* const pb4 = in1 + 1 * size1 * e1_1;
      const int64_t n = size1;
      if (n <= 0) return;
      for (int64_t row = begin / n; row * n < end; row++) {
        ... lo, hi: the row's part of [begin, end); o0, o1: the inputs' offsets at the row's coordinates ...
        for (int64_t i = lo; i < hi; i += 32) {
          const int64_t m = hi - i < 32 ? hi - i : 32;
          T gb0[32];
          if (e0_1 != 1) TSJIT_SIMD for (int64_t j = 0; j < m; j++) gb0[j] = pb0[o0 + (i + j) * e0_1];
          const T* restrict b0 = e0_1 == 1 ? pb0 + o0 + i : gb0;
          ... b1 (of %b) likewise ...
          T v2[32];
          TSJIT_SIMD for (int64_t j = 0; j < m; j++) v2[j] = (b0[j] + b1[j]);
          ... b3, b4 and v5 (the second chunk) likewise ...
          T v6[32];
          TSJIT_SIMD for (int64_t j = 0; j < m; j++) v6[j] = (v2[j] * v5[j]);
          TSJIT_SIMD for (int64_t j = 0; j < m; j++) out0[row * n + i + j] = v6[j];
        }
      }
    }

The kernel computes the elements [begin, end) of its outputs, which are contiguous and all of one shape (but a
prim::VarConcat output, below), the iteration shape (`size0`... `sizeR-1`, R the largest rank in the subgraph), so
that threads can split the work.
Every tensor input is read through its strides in each of those dimensions (`e0_0`... after the sizes): broadcast
dimensions have stride 0, so inputs of other (broadcastable) shapes and 0-dim tensors need nothing else, and an
input is read in place when its innermost stride is 1, gathered into a buffer otherwise. A prim::ConstantChunk
computes nothing: chunk c of a value is the value read c chunk sizes further along the chunk's dimension, so the
nodes computing a chunked value are computed once per chunk read (each on its part of the value; the kernel's
launch, tsjit.codegen.launch, makes sure that every chunk has the iteration size along its dimension). An
output that is a prim::VarConcat of pieces along a dimension (passes/concat_fusion.py) is the mirror image: each
piece, of the iteration shape, is written one piece size further along that dimension of the output, which the
launch allocates that many times larger there:

      const int64_t block0 = size1;                     (the elements of one index of the dimensions outside dim)
      ... for each row: const int64_t base0 = row * n / block0 * block0 * 4 + row * n % block0;
          out0[base0 + 2 * block0 + i + j] = v7[j];      (piece 2 of 4)

The elements go in blocks of BLOCK, one operation at a time over the block: the elements of a block are
independent, so the CPU overlaps their math calls and the compiler vectorizes the simple operations, where one
element at a time through a long chain waits for each result in turn (about 2x slower); a block's
temporaries stay in the L1 cache. The sizes and strides come as one array (`geometry`), which the runtime builds
once per launch: each argument of a call through ctypes costs about 0.1 us, a few times the kernel's own work on
tiny tensors. TSJIT_SIMD is `omp simd` when the vector math library is used (compiler.py).
Int and float inputs are passed by value and converted to T once, as eager converts Scalars to the tensor's
dtype. Constants are written as literals. `generate_kernel` raises NotFusible for a subgraph it cannot compile
(another node kind, another dtype, an unknown rank, a non-tensor output), so a FusionGroup that did not come
from the graph fuser still runs, by falling back to its subgraph.
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

Shift = tuple[int, ...]  # per kernel dimension, how many of its sizes a chunk moves the index along it


class NotFusible(Exception):
    """The subgraph holds something the kernel generator cannot compile (the message says what)."""


class Kernel(NamedTuple):
    """A generated kernel: its C source, the kind of each subgraph input, the element dtype, the output count, the
    number of dimensions it iterates over (at least 1) and, per output, None or what it concatenates: its `dim`
    (counted from the left, in the output's rank) and the number of pieces."""

    source: str
    arguments: tuple[str, ...]
    dtype: torch.dtype
    num_outputs: int
    rank: int
    concats: tuple[tuple[int, int] | None, ...] = ()


def generate_kernel(subgraph: Graph) -> Kernel:
    """The kernel computing `subgraph` elementwise; raises NotFusible if it cannot."""
    return _Generator(subgraph).kernel()


def kernel_rank(subgraph: Graph) -> int:
    """The number of dimensions the kernel iterates over: the largest rank of the subgraph's tensors (the outputs',
    as every value broadcasts into them), at least 1 so that 0-dim tensors are one element."""
    ranks = [v.type.rank for n in subgraph.nodes() for v in (*n.inputs, *n.outputs) if isinstance(v.type, TensorType)]
    if None in ranks:
        raise NotFusible("a tensor of the subgraph has no known rank")
    return max([1, *ranks])


def chunk_dimension(node: Node, rank: int) -> int:
    """The kernel dimension a prim::ConstantChunk splits: its `dim` counted from the right, as broadcasting
    aligns dimensions."""
    input_rank = node.input().type.rank
    dim = node.i("dim")
    if not -input_rank <= dim < input_rank:
        raise NotFusible(f"chunk dimension {dim} out of range for rank {input_rank}")
    return rank - input_rank + dim % input_rank


class _Generator:
    def __init__(self, subgraph: Graph):
        self.subgraph = subgraph
        self.dtype = _element_dtype(subgraph)
        self.rank = kernel_rank(subgraph)
        self.shifts = _shifts(subgraph, self.rank)
        self.tensor_inputs: dict[Value, int] = {}
        self.operands: dict[tuple[Value, Shift], Operand] = {}
        self.parameters = ["int64_t begin", "int64_t end", "const int64_t* restrict geometry"]
        self.geometry = [f"size{d}" for d in range(self.rank)]  # the names of geometry[0], geometry[1], ...
        self.prologue: list[str] = []
        self.row_prologue: list[str] = []  # once per row, after the inputs' offsets
        self.body: list[str] = []

    def kernel(self) -> Kernel:
        tensors = [v for v in self.subgraph.inputs if isinstance(v.type, TensorType)]
        if not tensors:
            raise NotFusible("no input is a tensor")
        for value in tensors:  # each tensor's strides in every kernel dimension (0 where it broadcasts)
            self.geometry += [f"e{len(self.tensor_inputs)}_{d}" for d in range(self.rank)]
            self.tensor_inputs[value] = len(self.tensor_inputs)
        arguments = tuple(self.add_input(i, value) for i, value in enumerate(self.subgraph.inputs))
        for node in self.subgraph.nodes():
            for shift in self.shifts.get(node, ()):
                self.add_node(node, shift)
        zero = (0,) * self.rank
        concats: list[tuple[int, int] | None] = []
        for k, value in enumerate(self.subgraph.outputs):
            if not isinstance(value.type, TensorType) or value.node.kind in _NOT_COMPUTED:
                raise NotFusible(f"output %{value.debug_name} is not a computed tensor")
            self.parameters.append(f"T* restrict out{k}")
            if value.node.kind is prim.VarConcat:
                concats.append(self.add_concat_output(k, value.node))
                continue
            concats.append(None)
            self.body.append(f"{LOOP} out{k}[row * n + i + j] = {self.operand(value, zero, TENSOR).expr};")
        return Kernel(self.source(), arguments, self.dtype, len(self.subgraph.outputs), self.rank, tuple(concats))

    def add_concat_output(self, k: int, node: Node) -> tuple[int, int]:
        """Output k, `prim::VarConcat(pieces..., dim)`: each piece written at its offset along `dim`. Returns the
        dim (of the output's rank) and the number of pieces."""
        *pieces, dim = node.inputs
        if dim.node.kind is not prim.Constant or type(constant_value(dim.node)) is not int:
            raise NotFusible(f"the dim of %{node.output().debug_name} is not an int constant")
        rank = pieces[0].type.rank
        if rank is None or not -rank <= constant_value(dim.node) < rank:
            raise NotFusible(f"the dim of %{node.output().debug_name} is out of range")
        output_dim = constant_value(dim.node) % rank
        dimension = self.rank - rank + output_dim
        self.prologue.append(f"const int64_t block{k} = {' * '.join(f'size{d}' for d in range(dimension, self.rank))};")
        self.row_prologue.append(f"const int64_t base{k} = row * n / block{k} * block{k} * {len(pieces)} + "
                                 f"row * n % block{k};")
        zero = (0,) * self.rank
        for c, piece in enumerate(pieces):
            expr = self.operand(piece, zero, TENSOR).expr
            self.body.append(f"{LOOP} out{k}[base{k} + {c} * block{k} + i + j] = {expr};")
        return output_dim, len(pieces)

    def source(self) -> str:
        last, outer = self.rank - 1, range(self.rank - 2, -1, -1)
        offsets = ", ".join(f"o{k} = 0" for k in range(len(self.tensor_inputs)))
        lines = ["#include <stdint.h>", "#include <tgmath.h>", f"typedef {C_TYPES[self.dtype]} T;",
                 _vector_math_declarations(self.dtype), C_HELPERS,
                 f"void {KERNEL_NAME}({', '.join(self.parameters)}) {{"]
        lines += [f"  const int64_t {name} = geometry[{k}];" for k, name in enumerate(self.geometry)]
        lines += [f"  {line}" for line in self.prologue]
        lines += [f"  const int64_t n = size{last};", "  if (n <= 0) return;",
                  "  for (int64_t row = begin / n; row * n < end; row++) {",
                  "    const int64_t lo = begin > row * n ? begin - row * n : 0;",
                  "    const int64_t hi = end - row * n < n ? end - row * n : n;",
                  f"    int64_t q = row, {offsets};"]
        lines += [f"    {line}" for line in self.row_prologue]
        for d in outer:  # the row's coordinates, innermost first, and each input's offset from them
            terms = " ".join(f"o{k} += x * e{k}_{d};" for k in range(len(self.tensor_inputs)))
            lines.append(f"    {{ const int64_t x = q % size{d}; q /= size{d}; {terms} }}")
        lines += [f"    for (int64_t i = lo; i < hi; i += {BLOCK}) {{",
                  f"      const int64_t m = hi - i < {BLOCK} ? hi - i : {BLOCK};"]
        lines += [f"      {line}" for line in self.body]
        lines += ["    }", "  }", "}", ""]
        return "\n".join(lines)

    def add_input(self, index: int, value: Value) -> str:
        type_ = value.type
        if isinstance(type_, TensorType):
            self.parameters.append(f"const T* restrict in{self.tensor_inputs[value]}")
            return TENSOR_ARGUMENT
        if isinstance(type_, IntType | FloatType):
            c_type, kind = ("int64_t", INT_ARGUMENT) if isinstance(type_, IntType) else ("double", FLOAT_ARGUMENT)
            self.parameters.append(f"{c_type} s{index}")
            self.prologue.append(f"const T c{index} = (T)s{index};")
            self.operands[value, ()] = Operand(f"c{index}", UNKNOWN)
            return kind
        raise NotFusible(f"input %{value.debug_name} has type {type_}")

    def add_node(self, node: Node, shift: Shift) -> None:
        if node.kind is prim.Constant or node.kind is prim.ConstantChunk:  # read where their users read them
            return
        if node.kind is prim.VarConcat:  # written where the outputs are
            if any(use.user.kind is not prim.Return for use in node.output().uses):
                raise NotFusible(f"%{node.output().debug_name} concatenates, and is read inside the kernel")
            return
        schema = node.maybe_schema()
        entry = OPERATORS.get(schema.operator_name) if schema is not None else None
        if entry is None or len(node.outputs) != 1:
            raise NotFusible(f"no kernel computes {node.kind}")
        if len(entry.roles) != len(node.inputs):
            raise NotFusible(f"{node.kind} has {len(node.inputs)} inputs, expected {len(entry.roles)}")
        operands = [self.operand(value, shift, role) for value, role in zip(node.inputs, entry.roles)]
        name = f"v{len(self.operands)}"
        self.body.append(f"T {name}[{BLOCK}];")
        self.body.append(f"{LOOP} {name}[j] = {entry.emit(*operands)};")
        self.operands[node.output(), shift] = Operand(f"{name}[j]", UNKNOWN)

    def operand(self, value: Value, shift: Shift, role: str) -> Operand:
        """`value` as an operand of the given role, at the index moved by `shift`."""
        is_tensor = isinstance(value.type, TensorType)
        if is_tensor != (role == TENSOR):
            raise NotFusible(f"%{value.debug_name} of type {value.type} cannot be a {role!r} operand")
        if not is_tensor:
            return self.scalar(value, role)
        if value.type.dtype is not self.dtype:
            raise NotFusible(f"%{value.debug_name} is not of dtype {self.dtype}")
        node = value.node
        if node.kind is prim.ConstantChunk:  # chunk c of a tensor: the tensor, c chunk sizes further along dim
            moved = list(shift)
            moved[chunk_dimension(node, self.rank)] += value.offset
            return self.operand(node.input(), tuple(moved), TENSOR)
        if (value, shift) not in self.operands:
            if value not in self.tensor_inputs:
                raise NotFusible(f"%{value.debug_name} is not computed in the kernel")
            self.operands[value, shift] = self.read_input(self.tensor_inputs[value], shift)
        return self.operands[value, shift]

    def scalar(self, value: Value, role: str) -> Operand:
        if value.node.kind is prim.Constant:
            constant = constant_value(value.node)
            operand = Operand(c_literal(constant), constant)
        elif (value, ()) in self.operands:
            operand = self.operands[value, ()]
        else:
            raise NotFusible(f"%{value.debug_name} is not computed in the kernel")
        if operand.expr is None and role != OPTIONAL_SCALAR:
            raise NotFusible(f"%{value.debug_name} is None")
        return operand

    def read_input(self, k: int, shift: Shift) -> Operand:
        """A block of tensor input k at the index moved by `shift`: read in place when its innermost stride is 1,
        else gathered (strided, or broadcast with stride 0) into a buffer first."""
        name, last = f"b{len(self.operands)}", f"e{k}_{self.rank - 1}"
        moves = "".join(f" + {c} * size{d} * e{k}_{d}" for d, c in enumerate(shift) if c)
        self.prologue.append(f"const T* const p{name} = in{k}{moves};")
        self.body += [f"T g{name}[{BLOCK}];",
                      f"if ({last} != 1) {LOOP} g{name}[j] = p{name}[o{k} + (i + j) * {last}];",
                      f"const T* restrict {name} = {last} == 1 ? p{name} + o{k} + i : g{name};"]
        return Operand(f"{name}[j]", UNKNOWN)


_NOT_COMPUTED = frozenset({prim.Param, prim.Constant, prim.ConstantChunk})


def _shifts(subgraph: Graph, rank: int) -> dict[Node, list[Shift]]:
    """For each node, the shifts at which the kernel computes it: none for what the outputs read directly, and for
    what a chunk reads, the chunk's index along its dimension (so each chunk of a value computes its own part)."""
    zero = (0,) * rank
    needed: dict[Value, list[Shift]] = {value: [zero] for value in subgraph.outputs}
    shifts: dict[Node, list[Shift]] = {}
    for node in reversed(list(subgraph.nodes())):
        node_shifts = shifts[node] = list(dict.fromkeys(s for v in node.outputs for s in needed.get(v, ())))
        for value in node.inputs:
            if node.kind is prim.ConstantChunk:
                dimension = chunk_dimension(node, rank)
                moved = [s[:dimension] + (s[dimension] + c,) + s[dimension + 1:]
                         for c, out in enumerate(node.outputs) for s in needed.get(out, ())]
            else:
                moved = node_shifts
            needed[value] = list(dict.fromkeys([*needed.get(value, []), *moved]))
    return shifts


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
