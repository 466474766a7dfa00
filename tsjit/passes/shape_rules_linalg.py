"""Shape and dtype rules of diagonals, block matrices and matrix norms: diag, diag_embed, block_diag, renorm,
linalg_cond, linalg_matrix_rank (the table and its conventions are in shape_rules.py; these register into it)."""

from __future__ import annotations

from typing import Any

import torch

from tsjit.ir import types as T
from tsjit.passes.shape_rules import (
    AbstractTensor,
    Decline,
    complex_to_float,
    known_bool,
    like,
    need,
    result_type,
    rule,
    same_size,
    tensor,
    wrap_dim,
)


def _plus(size: int | None, offset: int) -> int | None:
    return None if size is None else size + abs(offset)


@rule("aten::diag")
def _diag(self: AbstractTensor, diagonal: int = 0) -> T.TensorType:
    """A vector as the `diagonal`-th diagonal of a square matrix, or a matrix's `diagonal`-th diagonal."""
    need(len(self.sizes) in (1, 2), "diag(): Supports 1D or 2D tensors")
    if len(self.sizes) == 1:
        side = _plus(self.sizes[0], diagonal)
        return tensor(self.dtype, (side, side))
    rows, columns = self.sizes
    if rows is None or columns is None:
        return tensor(self.dtype, (None,))
    length = min(rows, columns - diagonal) if diagonal >= 0 else min(rows + diagonal, columns)
    return tensor(self.dtype, (max(length, 0),))


@rule("aten::diag_embed")
def _diag_embed(self: AbstractTensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> T.TensorType:
    """The last dimension as the diagonal of new square dimensions `dim1`, `dim2`; the others keep their order."""
    rank = len(self.sizes) + 1
    first, second = wrap_dim(dim1, rank), wrap_dim(dim2, rank)
    need(first != second, "diagonal dimensions cannot be identical")
    need(len(self.sizes) > 0, "diag_embed expects at least a 1-D tensor")
    side = _plus(self.sizes[-1], offset)
    rest = iter(self.sizes[:-1])
    return tensor(self.dtype, [side if i in (first, second) else next(rest) for i in range(rank)])


@rule("aten::block_diag")
def _block_diag(tensors: list[AbstractTensor]) -> T.TensorType:
    """The tensors (numbers as 1x1, vectors as rows) along the diagonal of one matrix."""
    if not tensors:
        raise Decline
    need(all(len(t.sizes) <= 2 for t in tensors), "block_diag: Input tensors must have 2 or fewer dimensions")
    blocks = [(1, 1) if not t.sizes else (1, t.sizes[0]) if len(t.sizes) == 1 else t.sizes for t in tensors]
    rows = [b[0] for b in blocks]
    columns = [b[1] for b in blocks]
    total_rows = None if None in rows else sum(rows)  # type: ignore[arg-type]
    total_columns = None if None in columns else sum(columns)  # type: ignore[arg-type]
    return tensor(result_type(*tensors), (total_rows, total_columns))


@rule("aten::renorm")
def _renorm(self: AbstractTensor, p: Any, dim: int, maxnorm: Any) -> T.TensorType:
    if not self.dtype.is_floating_point:
        raise Decline
    need(p > 0, "renorm: non-positive-norm not supported")
    need(maxnorm >= 0, "renorm: expected maxnorm to be >= 0")
    need(len(self.sizes) > 1, "renorm: input needs at least 2 dimensions")
    wrap_dim(dim, len(self.sizes))
    return like(self)


def _batch_of_matrices(self: AbstractTensor) -> None:
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise Decline  # integer matrices fail with each function's own message
    need(len(self.sizes) >= 2, "expected a tensor with 2 or more dimensions")


@rule("aten::linalg_cond")
def _cond(self: AbstractTensor, p: Any = None) -> T.TensorType:
    """The condition number of each matrix (real); only the 2-norms accept non-square matrices."""
    _batch_of_matrices(self)
    if p not in (None, 2, -2):
        raise Decline  # the other norms need square, invertible-looking matrices: the meta kernel decides
    return tensor(complex_to_float(self.dtype), self.sizes[:-2])


@rule("aten::linalg_matrix_rank.atol_rtol_tensor", "aten::linalg_matrix_rank.atol_rtol_float")
def _matrix_rank(input: AbstractTensor, atol: Any = None, rtol: Any = None, hermitian: Any = False
                 ) -> T.TensorType:
    """The rank of each matrix, as int64; tolerance tensors broadcast with the batch, which the meta kernel does."""
    _batch_of_matrices(input)
    if isinstance(atol, AbstractTensor) or isinstance(rtol, AbstractTensor):
        raise Decline
    need(not known_bool(hermitian) or same_size(input.sizes[-1], input.sizes[-2]),
         "linalg.eigh: A must be batches of square matrices")
    return tensor(torch.int64, input.sizes[:-2])
