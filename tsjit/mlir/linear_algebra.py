"""Linear algebra in TorchScript (LU and Cholesky factorizations and the solves built on them), for
decompositions.DECOMPOSITIONS.

The torch dialect has no `aten::linalg_solve_ex`, `aten::linalg_cholesky_ex`, `aten::triangular_solve`... Each is
written here as LAPACK computes it, one step per row or column in a loop over the matrix's size: of real matrices
whose sizes the types state (see decompositions._ONLY_WHEN), so that MLIR preparation unrolls the loops and
torch-mlir sees slices, matmuls and selects of static shapes:

- `_lu`: Gaussian elimination with partial pivoting (getrf: the first largest magnitude of the column is the
  pivot, whole rows are exchanged, the multipliers are kept below the diagonal), also giving the row permutation as
  a 0/1 matrix P (P A = L U), by which solves permute (a product with ones and zeros is exact);
- `_triangular_solve`: substitution one row at a time (the rows not yet solved are zero, so one matmul with the
  whole triangle sums only the solved ones);
- `_cholesky`: the Cholesky–Banachiewicz factorization, column by column, reading the lower triangle.
`info` is LAPACK's: the 1-based index of the first zero pivot (LU) or non-positive leading minor (Cholesky), else 0.
Singular value and eigenvalue decompositions (svd, eig, eigh, and pinv, lstsq, matrix_rank, the nuclear norm built on
them) are iterative: no finite decomposition, they keep their operators. QR (geqrf, householder_product) and LDL
(Bunch-Kaufman pivoting) would unroll too but are not written yet.
"""

from __future__ import annotations

LINEAR_ALGEBRA = """
def _permutation(order: Tensor, n: int, dtype: int) -> Tensor:
  # the matrix P of a row order (..., n): (P @ B)[i] = B[order[i]]
  return (order.unsqueeze(-1) == torch.arange(n)).to(dtype)
def _lu(A: Tensor) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
  # (LU, pivots (int32, 1-based as LAPACK's), info (int32), P) of A (..., m, n) with P A = L U
  m = A.size(-2)
  n = A.size(-1)
  rows = torch.arange(m).unsqueeze(-1)
  columns = torch.arange(n)
  a = A
  order = torch.arange(m) + torch.zeros_like(A.sum([-1]), dtype=4)  # torch.int64, batched
  pivots: List[Tensor] = []
  for k in range(min(m, n)):
    column = a.narrow(-1, k, 1)
    p = torch.argmax(torch.where(rows >= k, torch.abs(column), torch.full_like(column, -1.0)), -2, True)
    row_k = a.narrow(-2, k, 1)
    row_p = torch.gather(a, -2, p.expand(row_k.size()))
    a = torch.where(rows == k, row_p, torch.where(rows == p, row_k, a))
    order_p = torch.gather(order, -1, p.squeeze(-1))
    order_k = order.narrow(-1, k, 1)
    order = torch.where(rows.squeeze(-1) == k, order_p, torch.where(rows.squeeze(-1) == p.squeeze(-1), order_k, order))
    pivots.append(p.squeeze(-1))
    pivot = row_p.narrow(-1, k, 1)
    factors = torch.where(pivot == 0, torch.zeros_like(column), a.narrow(-1, k, 1) / pivot)
    below = rows > k
    a = torch.where(torch.logical_and(below, columns > k), a - factors * row_p,
                    torch.where(torch.logical_and(below, columns == k), factors, a))
  pivot_rows = torch.cat(pivots, -1) if len(pivots) > 0 else torch.zeros(A.size()[:-2] + [0], dtype=4)
  singular = torch.diagonal(a, 0, -2, -1) == 0
  first = torch.argmax(singular.to(6), -1) + 1  # torch.float32
  info = torch.where(singular.any(-1), first, torch.zeros_like(first)).to(3)  # torch.int32
  return a, (pivot_rows + 1).to(3), info, _permutation(order, m, A.dtype)
def _triangular_solve(A: Tensor, B: Tensor, upper: bool, unit: bool) -> Tensor:
  # X of A X = B for a triangular A (..., n, n) (only its triangle is read) and B (..., n, k)
  n = A.size(-1)
  a = torch.triu(A) if upper else torch.tril(A)
  rows = torch.arange(n).unsqueeze(-1)
  x = torch.zeros_like(torch.matmul(a, B))
  for step in range(n):
    i = n - 1 - step if upper else step
    row = B.narrow(-2, i, 1) - torch.matmul(a.narrow(-2, i, 1), x)
    if not unit:
      row = row / a.narrow(-2, i, 1).narrow(-1, i, 1)
    x = torch.where(rows == i, row, x)
  return x
def _lu_solve(LU: Tensor, P: Tensor, B: Tensor, adjoint: bool) -> Tensor:
  # X of A X = B (or A^T X = B) where P A = L U
  if adjoint:
    y = _triangular_solve(LU.transpose(-2, -1), B, False, False)
    return torch.matmul(P.transpose(-2, -1), _triangular_solve(LU.transpose(-2, -1), y, True, True))
  y = _triangular_solve(LU, torch.matmul(P, B), False, True)
  return _triangular_solve(LU, y, True, False)
def _pivot_permutation(pivots: Tensor, n: int, dtype: int) -> Tensor:
  # P of LAPACK's pivots (..., k): row exchanges k <-> pivots[k] - 1, in order
  order = torch.arange(n) + torch.zeros_like(pivots.narrow(-1, 0, 1), dtype=4)
  index = torch.arange(n)
  for k in range(pivots.size(-1)):
    p = pivots.narrow(-1, k, 1).to(4) - 1
    order_p = torch.gather(order, -1, p)
    order_k = order.narrow(-1, k, 1)
    order = torch.where(index == k, order_p, torch.where(index == p, order_k, order))
  return _permutation(order, n, dtype)
def _is_vector(A: Tensor, B: Tensor) -> bool:
  # torch.linalg.solve's rule: B is a batch of vectors
  return B.dim() == 1 or (B.dim() == A.dim() - 1 and B.size() == A.size()[:-1])
def _solve(A: Tensor, B: Tensor, left: bool) -> Tuple[Tensor, Tensor]:
  LU, pivots, info, P = _lu(A)
  if _is_vector(A, B):
    return _lu_solve(LU, P, B.unsqueeze(-1), False).squeeze(-1), info
  if left:
    return _lu_solve(LU, P, B, False), info
  return _lu_solve(LU, P, B.transpose(-2, -1), True).transpose(-2, -1), info
def linalg_solve_ex(A: Tensor, B: Tensor, left: bool = True, check_errors: bool = False) -> Tuple[Tensor, Tensor]:
  return _solve(A, B, left)
def linalg_solve(A: Tensor, B: Tensor, left: bool = True) -> Tensor:
  return _solve(A, B, left)[0]
def linalg_inv_ex(A: Tensor, check_errors: bool = False) -> Tuple[Tensor, Tensor]:
  identity = torch.eye(A.size(-1), dtype=A.dtype)
  return _solve(A, identity.expand_as(A), True)
def linalg_inv(A: Tensor) -> Tensor:
  return linalg_inv_ex(A)[0]
def linalg_tensorinv(self: Tensor, ind: int = 2) -> Tensor:
  rows = 1
  for i in range(ind):
    rows = rows * self.size(i)
  inverse = linalg_inv(self.reshape([rows, -1]))
  return inverse.reshape(self.size()[ind:] + self.size()[:ind])
def linalg_tensorsolve(self: Tensor, other: Tensor, dims: Optional[List[int]] = None) -> Tensor:
  return linalg_solve(self.reshape([other.numel(), -1]), other.reshape([-1])).reshape(self.size()[other.dim():])
def linalg_lu_factor_ex(A: Tensor, pivot: bool = True, check_errors: bool = False) -> Tuple[Tensor, Tensor, Tensor]:
  LU, pivots, info, P = _lu(A)
  return LU, pivots, info
def linalg_lu_factor(A: Tensor, pivot: bool = True) -> Tuple[Tensor, Tensor]:
  LU, pivots, info, P = _lu(A)
  return LU, pivots
def _lu_with_info(self: Tensor, pivot: bool = True, check_errors: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
  LU, pivots, info, P = _lu(self)
  return LU, pivots, info
def _unpack(LU: Tensor) -> Tuple[Tensor, Tensor]:
  m = LU.size(-2)
  k = min(m, LU.size(-1))
  lower = torch.tril(LU.narrow(-1, 0, k), -1) + torch.eye(m, k, dtype=LU.dtype)
  return lower, torch.triu(LU.narrow(-2, 0, k))
def linalg_lu(A: Tensor, pivot: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
  LU, pivots, info, P = _lu(A)
  lower, upper = _unpack(LU)
  return P.transpose(-2, -1), lower, upper
def lu_unpack(LU_data: Tensor, LU_pivots: Tensor, unpack_data: bool = True,
              unpack_pivots: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
  lower, upper = _unpack(LU_data)
  P = _pivot_permutation(LU_pivots, LU_data.size(-2), LU_data.dtype)
  return P.transpose(-2, -1), lower, upper
def linalg_lu_solve(LU: Tensor, pivots: Tensor, B: Tensor, left: bool = True, adjoint: bool = False) -> Tensor:
  P = _pivot_permutation(pivots, LU.size(-1), LU.dtype)
  if left:
    return _lu_solve(LU, P, B, adjoint)
  return _lu_solve(LU, P, B.transpose(-2, -1), not adjoint).transpose(-2, -1)
def lu_solve(self: Tensor, LU_data: Tensor, LU_pivots: Tensor) -> Tensor:
  return _lu_solve(LU_data, _pivot_permutation(LU_pivots, LU_data.size(-1), LU_data.dtype), self, False)
def linalg_solve_triangular(self: Tensor, B: Tensor, upper: bool, left: bool = True,
                            unitriangular: bool = False) -> Tensor:
  if left:
    return _triangular_solve(self, B, upper, unitriangular)
  return _triangular_solve(self.transpose(-2, -1), B.transpose(-2, -1), not upper, unitriangular).transpose(-2, -1)
def triangular_solve(self: Tensor, A: Tensor, upper: bool = True, transpose: bool = False,
                     unitriangular: bool = False) -> Tuple[Tensor, Tensor]:
  if transpose:
    return _triangular_solve(A.transpose(-2, -1), self, not upper, unitriangular), A.clone()
  return _triangular_solve(A, self, upper, unitriangular), A.clone()
def _cholesky(A: Tensor) -> Tuple[Tensor, Tensor]:
  # (L, info) of A = L L^T from A's lower triangle
  n = A.size(-1)
  rows = torch.arange(n).unsqueeze(-1)
  columns = torch.arange(n)
  lower = torch.zeros_like(A)
  info = torch.zeros_like(A.sum([-2, -1]), dtype=3)  # torch.int32
  for j in range(n):
    remainder = A.narrow(-1, j, 1) - torch.matmul(lower, lower.narrow(-2, j, 1).transpose(-2, -1))
    square = remainder.narrow(-2, j, 1)
    info = torch.where(torch.logical_and(info == 0, square.squeeze(-1).squeeze(-1) <= 0),
                       torch.full_like(info, j + 1), info)
    diagonal = torch.sqrt(square)
    lower = torch.where(columns == j, torch.where(rows > j, remainder / diagonal,
                                                  torch.where(rows == j, diagonal, lower)), lower)
  return lower, info
def linalg_cholesky_ex(self: Tensor, upper: bool = False, check_errors: bool = False) -> Tuple[Tensor, Tensor]:
  if upper:
    lower, info = _cholesky(self.transpose(-2, -1))
    return lower.transpose(-2, -1), info
  return _cholesky(self)
def linalg_cholesky(self: Tensor, upper: bool = False) -> Tensor:
  return linalg_cholesky_ex(self, upper)[0]
def cholesky(self: Tensor, upper: bool = False) -> Tensor:
  return linalg_cholesky_ex(self, upper)[0]
def cholesky_solve(self: Tensor, input2: Tensor, upper: bool = False) -> Tensor:
  lower = input2.transpose(-2, -1) if upper else input2
  return _triangular_solve(lower.transpose(-2, -1), _triangular_solve(lower, self, False, False), True, False)
def cholesky_inverse(self: Tensor, upper: bool = False) -> Tensor:
  return cholesky_solve(torch.eye(self.size(-1), dtype=self.dtype).expand_as(self), self, upper)
"""

# definitions above that are operators although their names begin with an underscore (as helpers' do)
OPERATORS_NAMED_PRIVATE = frozenset({"_lu_with_info"})

# operator -> the position of the matrix whose sizes and real dtype the unrolled loops need (decompositions'
# _ONLY_WHEN); the pivots of lu_unpack and lu_solve are data, their count is the matrix's
STATIC_MATRIX_ARGUMENT = {
    "linalg_solve_ex": 0, "linalg_solve": 0, "linalg_inv_ex": 0, "linalg_inv": 0, "linalg_tensorinv": 0,
    "linalg_tensorsolve": 0, "linalg_lu_factor_ex": 0, "linalg_lu_factor": 0, "_lu_with_info": 0, "linalg_lu": 0,
    "lu_unpack": 0, "linalg_lu_solve": 0, "lu_solve": 1, "linalg_solve_triangular": 0, "triangular_solve": 1,
    "linalg_cholesky_ex": 0, "linalg_cholesky": 0, "cholesky": 0, "cholesky_solve": 1, "cholesky_inverse": 0,
}
