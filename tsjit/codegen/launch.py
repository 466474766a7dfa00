"""How a fused kernel runs on given inputs: the shape it iterates over and the strides it reads each input with.

A kernel (c_kernel.py) writes contiguous outputs of one shape, reads every tensor input through one stride per
kernel dimension and takes each chunk of a value to be as large as the outputs along the chunk's dimension.
`LaunchPlanner` checks that the actual inputs fit those assumptions, from their shapes and strides only:

- their ranks are the subgraph's (the kernel was generated for them);
- the subgraph's shapes work out as eager's would: operands broadcast, chunked dimensions divide evenly, every
  output has the same shape (the iteration shape) and every chunk the iteration size along its dimension; the
  pieces of a prim::VarConcat output have that shape too (the output is that many pieces long along its dim);
- eager's results would be contiguous: over the dimensions that are neither of size 1 nor broadcast (stride 0),
  every input's strides decrease (contiguous tensors, chunks and other row-major slices, expanded tensors; a
  transposed input, whose eager result is transposed too, does not fit).

Then it gives the iteration shape, the number of elements and the kernel's size and stride arguments, with
dimensions merged where every input is contiguous across them (so that a contiguous group is one row, and the
kernel's inner loop is as long as it can be), unless the subgraph chunks or concatenates: chunks and pieces move
along one dimension.
None means the kernel cannot run on these inputs; the runtime then interprets the subgraph, which raises eager's
errors for shapes that do not broadcast.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from tsjit.codegen.c_kernel import chunk_dimension, kernel_rank
from tsjit.ir.graph import Graph, Value
from tsjit.ir.symbols import prim
from tsjit.ir.types import TensorType

Shape = tuple[int, ...]
CONCAT = (-1, -1)  # a step that concatenates


class Launch(NamedTuple):
    """What a kernel call needs besides the data: the outputs' shape, their element count, and the kernel's
    sizes followed by each tensor input's strides, one per kernel dimension."""

    shape: Shape
    numel: int
    geometry: tuple[int, ...]


class LaunchPlanner:
    """Called with (shape, strides, shape, strides, ...) of a subgraph's tensor inputs: their Launch, or None."""

    def __init__(self, subgraph: Graph):
        self.rank = kernel_rank(subgraph)
        tensors = [v for v in subgraph.inputs if isinstance(v.type, TensorType)]
        self.input_ranks = [v.type.rank for v in tensors]
        self.slots: dict[Value, int] = {value: i for i, value in enumerate(tensors)}
        # inputs, outputs, chunk (dim, chunks), or CONCAT for a prim::VarConcat
        self.steps: list[tuple[list[int], list[int], tuple[int, int] | None]] = []
        self.chunks: list[tuple[int, int, int]] = []  # an output slot of each chunk, its dim, its kernel dimension
        self.concatenates = False
        for node in subgraph.nodes():
            if node.kind is prim.Constant:
                continue
            operands = [self.slots[v] for v in node.inputs if v in self.slots]
            outputs = [self.slot(v) for v in node.outputs]
            chunk = None
            if node.kind is prim.VarConcat:
                chunk, self.concatenates = CONCAT, True
            elif node.kind is prim.ConstantChunk:
                rank = node.input().type.rank
                chunk = (node.i("dim") % rank, node.i("chunks"))
                self.chunks.append((outputs[0], chunk[0] - rank, chunk_dimension(node, self.rank)))
            self.steps.append((operands, outputs, chunk))
        self.outputs = [self.slots[v] for v in subgraph.outputs]

    def slot(self, value: Value) -> int:
        self.slots[value] = len(self.slots)
        return self.slots[value]

    def __call__(self, layout: tuple) -> Launch | None:
        shapes, strides = layout[0::2], layout[1::2]
        if any(len(shape) != rank for shape, rank in zip(shapes, self.input_ranks)):
            return None
        if not all(_row_major(shape, stride) for shape, stride in zip(shapes, strides)):
            return None
        values = self.shapes(list(shapes))
        if values is None:
            return None
        shape = values[self.outputs[0]]
        if any(values[slot] != shape for slot in self.outputs):
            return None
        padded = (1,) * (self.rank - len(shape)) + shape
        if any(values[slot][dim] != padded[dimension] for slot, dim, dimension in self.chunks):
            return None
        sizes, input_strides = padded, [_kernel_strides(s, t, self.rank) for s, t in zip(shapes, strides)]
        if not self.chunks and not self.concatenates:
            sizes, input_strides = _merge_dimensions(sizes, input_strides)
        return Launch(shape, math.prod(shape), (*sizes, *[s for each in input_strides for s in each]))

    def shapes(self, values: list) -> list | None:
        """The shapes of the subgraph's tensors, from its inputs' (None where eager would fail, or the chunks are
        not all of one size)."""
        values += [()] * (len(self.slots) - len(values))
        for operands, outputs, chunk in self.steps:
            if chunk is CONCAT:  # its pieces, of one shape, are what the kernel iterates over
                shapes = {values[slot] for slot in operands}
                if len(shapes) != 1:
                    return None
                values[outputs[0]] = shapes.pop()
                continue
            if chunk is not None:
                dim, chunks = chunk
                shape = values[operands[0]]
                if shape[dim] % chunks:
                    return None
                for slot in outputs:
                    values[slot] = (*shape[:dim], shape[dim] // chunks, *shape[dim + 1:])
                continue
            shape = _broadcast([values[slot] for slot in operands])
            if shape is None:
                return None
            values[outputs[0]] = shape
        return values


def _broadcast(shapes: list[Shape]) -> Shape | None:
    """The shape operands of these shapes broadcast to, or None if they do not."""
    rank = max(map(len, shapes), default=0)
    result = []
    for sizes in zip(*[(1,) * (rank - len(shape)) + shape for shape in shapes]):
        known = {s for s in sizes if s != 1}
        if len(known) > 1:
            return None
        result.append(known.pop() if known else 1)
    return tuple(result)


def _row_major(shape: Shape, strides: Shape) -> bool:
    """Whether the strides of the dimensions that are neither of size 1 nor broadcast decrease."""
    kept = [stride for size, stride in zip(shape, strides) if size != 1 and stride != 0]
    return all(outer > inner for outer, inner in zip(kept, kept[1:]))


def _kernel_strides(shape: Shape, strides: Shape, rank: int) -> list[int]:
    """An input's stride in each kernel dimension: 0 where it broadcasts (missing or of size 1)."""
    own = [0 if size == 1 else stride for size, stride in zip(shape, strides)]
    return [0] * (rank - len(own)) + own


def _merge_dimensions(sizes: Shape, strides: list[list[int]]) -> tuple[Shape, list[list[int]]]:
    """Merge each dimension into the next inner one where every input is contiguous across the two (or the
    dimension has size 1), padding with leading dimensions of size 1 to keep the kernel's rank."""
    merged_sizes, merged = [sizes[-1]], [[each[-1]] for each in strides]
    for d in range(len(sizes) - 2, -1, -1):
        if sizes[d] == 1 or all(each[d] == own[0] * merged_sizes[0] for each, own in zip(strides, merged)):
            merged_sizes[0] *= sizes[d]
        else:
            merged_sizes.insert(0, sizes[d])
            for each, own in zip(strides, merged):
                own.insert(0, each[d])
    padding = len(sizes) - len(merged_sizes)
    return (1,) * padding + tuple(merged_sizes), [[0] * padding + own for own in merged]
