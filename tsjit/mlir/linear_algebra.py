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
- `_householder_qr`: QR by Householder reflections as geqrf computes them (dlarfg's reflector: beta of the sign
  opposite to the diagonal's, no reflection of a column already zero below the diagonal), so that R's signs, the
  reflectors and tau are LAPACK's; Q (orgqr, householder_product) applies the reflectors to the identity, ormqr
  to its other operand (Q or Q^T, on either side), and lstsq's "gels" driver solves by QR of A (least squares) or
  of A^T (the least norm solution of a wide A).
- `linalg_matrix_exp`: scaling and squaring (each matrix halved until its 1-norm is at most 1/2, its Taylor series
  to the terms below the dtype's precision, squared back): not ATen's Pade-like polynomials of degree 1 to 18,
  the same exponential to rounding (float32, 1-norms 0.5 to 44: within 6e-6 of the largest entry, eager 1.3e-6);
- `_bunch_kaufman`: LDL^T with Bunch and Kaufman's pivots as sytf2 chooses them (1x1 or 2x2 blocks, pivots
  1-based and negative for a 2x2 block); a 2x2 block takes two steps of the loop, the second one idle. ldl_solve
  solves with it as sytrs does, each step choosing by the pivots (data) between a 1x1 and a 2x2 block.
Singular value and eigenvalue decompositions are iterative: tsjit/mlir/spectral.py.
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
def _householder_qr(A: Tensor) -> Tuple[Tensor, Tensor]:
  # geqrf's (a, tau): R on and above the diagonal, below it the reflectors' vectors v (v_j = 1 implied),
  # H_j = I - tau_j v v^T, A = H_0 ... H_{k-1} R
  m = A.size(-2)
  n = A.size(-1)
  k = min(m, n)
  rows = torch.arange(m).unsqueeze(-1)
  columns = torch.arange(n)
  steps = torch.arange(k)
  a = A
  tau = torch.zeros(A.size()[:-2] + [k], dtype=A.dtype)
  for j in range(k):
    column = a.narrow(-1, j, 1)
    alpha = column.narrow(-2, j, 1)
    below = rows > j
    norm_below = torch.sqrt(torch.sum(torch.where(below, column * column, torch.zeros_like(column)), [-2], True))
    reflect = norm_below != 0  # (else H_j = I, as dlarfg)
    beta = torch.where(alpha >= 0, -torch.ones_like(alpha), torch.ones_like(alpha)) * torch.sqrt(
        alpha * alpha + norm_below * norm_below)
    tau_j = torch.where(reflect, (beta - alpha) / beta, torch.zeros_like(beta))
    v = torch.where(rows == j, torch.ones_like(column), torch.where(
        below, column / torch.where(reflect, alpha - beta, torch.ones_like(alpha)), torch.zeros_like(column)))
    reflected = a - tau_j * v * torch.matmul(v.transpose(-2, -1), a)
    pivot_column = torch.where(rows == j, torch.where(reflect, beta, alpha), torch.where(below, v, a))
    a = torch.where(columns > j, reflected, torch.where(columns == j, pivot_column, a))
    tau = torch.where(steps == j, tau_j.squeeze(-1), tau)
  return a, tau
def _reflector(a: Tensor, j: int) -> Tensor:
  # the vector v (..., m, 1) of reflector j stored below a's diagonal
  rows = torch.arange(a.size(-2)).unsqueeze(-1)
  column = a.narrow(-1, j, 1)
  return torch.where(rows == j, torch.ones_like(column), torch.where(rows > j, column, torch.zeros_like(column)))
def _reflect(a: Tensor, tau: Tensor, B: Tensor, backwards: bool) -> Tensor:
  # H_0 ... H_{k-1} B (backwards: the last reflector first) or H_{k-1} ... H_0 B = Q^T B
  k = tau.size(-1)
  x = B
  for step in range(k):
    j = k - 1 - step if backwards else step
    v = _reflector(a, j)
    x = x - tau.narrow(-1, j, 1).unsqueeze(-1) * v * torch.matmul(v.transpose(-2, -1), x)
  return x
def _householder_product(A: Tensor, tau: Tensor, columns: int) -> Tensor:
  # the first `columns` columns of Q = H_0 ... H_{k-1} (orgqr)
  identity = torch.eye(A.size(-2), columns, dtype=A.dtype) + torch.zeros(A.size()[:-1] + [columns], dtype=A.dtype)
  return _reflect(A, tau, identity, True)
def geqrf(self: Tensor) -> Tuple[Tensor, Tensor]:
  return _householder_qr(self)
def linalg_householder_product(input: Tensor, tau: Tensor) -> Tensor:
  return _householder_product(input, tau, input.size(-1))
def orgqr(self: Tensor, input2: Tensor) -> Tensor:
  return _householder_product(self, input2, self.size(-1))
def ormqr(self: Tensor, input2: Tensor, input3: Tensor, left: bool = True, transpose: bool = False) -> Tensor:
  # Q C, Q^T C (left) or C Q, C Q^T as the reflectors applied one by one: C Q = (Q^T C^T)^T
  if left:
    return _reflect(self, input2, input3, not transpose)
  return _reflect(self, input2, input3.transpose(-2, -1), transpose).transpose(-2, -1)
def _exp_taylor(A: Tensor, degree: int) -> Tensor:
  # I + A + A^2 / 2! + ... + A^degree / degree!, by Horner's rule
  identity = torch.eye(A.size(-1), dtype=A.dtype).expand_as(A)
  result = identity
  for step in range(degree):
    result = identity + torch.matmul(A, result) / float(degree - step)
  return result
def linalg_matrix_exp(self: Tensor) -> Tensor:
  # scaling and squaring: A halved s times until its 1-norm is at most 1/2, the Taylor series to the terms below
  # the dtype's precision there, squared s times (s per matrix; the loops run to the largest)
  norm = self.abs().sum(-2).amax(-1)
  halvings = torch.clamp(torch.ceil(torch.log2(norm.to(6) * 2.0)), 0.0).unsqueeze(-1).unsqueeze(-1)  # (IREE has no
  # float64 log2; one halving too few leaves a norm of at most 1, whose Taylor series is still as precise)
  most = int(halvings.max().to(4))
  A = self
  for i in range(most):
    A = torch.where(halvings > i, A * 0.5, A)
  result = _exp_taylor(A, 18 if self.dtype == 7 else 10)  # (0.5^19 / 19! and 0.5^11 / 11! below their epsilons)
  for i in range(most):
    result = torch.where(halvings > i, torch.matmul(result, result), result)
  return result
def matrix_exp(self: Tensor) -> Tensor:
  return linalg_matrix_exp(self)
def linalg_qr(A: Tensor, mode: str = "reduced") -> Tuple[Tensor, Tensor]:  # (mode "r": see _ONLY_WHEN)
  a, tau = _householder_qr(A)
  if mode == "complete":
    return _householder_product(a, tau, A.size(-2)), torch.triu(a)
  k = min(A.size(-2), A.size(-1))
  return _householder_product(a, tau, k), torch.triu(a.narrow(-2, 0, k))
def qr(self: Tensor, some: bool = True) -> Tuple[Tensor, Tensor]:
  return linalg_qr(self, "reduced" if some else "complete")
def _bunch_kaufman(A: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
  # sytrf's (LD, pivots, info) of the symmetric matrix in A's lower triangle (..., n, n): P A P^T = L D L^T with
  # D of 1x1 and 2x2 blocks; a 2x2 block takes two steps, the second (`skip`) only repeats the first's pivot
  n = A.size(-1)
  index = torch.arange(n)
  rows = index.unsqueeze(-1)
  a = torch.tril(A) + torch.tril(A, -1).transpose(-2, -1)  # (the trailing matrix kept symmetric)
  scalar = torch.zeros(A.size()[:-2] + [1, 1], dtype=4)  # torch.int64, one per matrix
  skip = scalar != 0
  pending = scalar
  info = scalar
  pivots = torch.zeros(A.size()[:-2] + [n], dtype=4)
  for k in range(n):
    active = torch.logical_not(skip)
    column = a.narrow(-1, k, 1)
    absakk = torch.abs(column.narrow(-2, k, 1))
    magnitudes = torch.where(rows > k, torch.abs(column), torch.zeros_like(column))
    imax = torch.argmax(magnitudes, -2, True)
    colmax = torch.amax(magnitudes, [-2], True)
    zero = torch.logical_or(torch.maximum(absakk, colmax) == 0, torch.isnan(absakk))
    row_imax = torch.gather(a, -2, imax.expand(imax.size()[:-1] + [n]))
    rowmax = torch.amax(torch.where(torch.logical_and(index >= k, index != imax), torch.abs(row_imax),
                                    torch.zeros_like(row_imax)), [-1], True)
    alpha_colmax = 0.6403882032022076 * colmax  # (1 + sqrt(17)) / 8
    keep = torch.logical_or(absakk >= alpha_colmax, absakk * torch.where(rowmax == 0, torch.ones_like(rowmax),
                                                                            rowmax) >= alpha_colmax * colmax)
    one_exchange = torch.abs(torch.gather(row_imax, -1, imax)) >= 0.6403882032022076 * rowmax
    pivoted = torch.logical_and(active, torch.logical_not(zero))
    two = torch.logical_and(pivoted, torch.logical_not(torch.logical_or(keep, one_exchange)))
    kp = torch.where(torch.logical_or(zero, keep), torch.full_like(imax, k), imax)
    kk = k + two.to(4)
    # rows and columns kk, kp of the trailing matrix exchanged
    order = torch.where(index == kk, kp, torch.where(index == kp, kk, index))
    exchanged = torch.gather(torch.gather(a, -2, order.transpose(-2, -1).expand(a.size())), -1, order.expand(a.size()))
    trailing = torch.logical_and(rows >= k, index >= k)
    a = torch.where(torch.logical_and(torch.logical_and(pivoted, kp != kk), trailing), exchanged, a)
    column = a.narrow(-1, k, 1)
    d = column.narrow(-2, k, 1)
    # a 1x1 pivot: the multipliers x / d, the trailing matrix less x x^T / d
    one = torch.logical_and(pivoted, torch.logical_not(two))
    inverse = 1 / torch.where(one, d, torch.ones_like(d))
    x = torch.where(rows > k, column, torch.zeros_like(column))
    after_one = torch.where(torch.logical_and(rows > k, index > k), a - inverse * x * x.transpose(-2, -1),
                            torch.where(torch.logical_and(rows > k, index == k), x * inverse, a))
    # a 2x2 pivot D = [[d, b], [b, c]]: the multipliers [x_k x_k+1] D^-1 (as sytf2 computes them)
    second = min(k + 1, n - 1)
    next_column = a.narrow(-1, second, 1)
    b = torch.where(two, column.narrow(-2, second, 1), torch.ones_like(d))
    d11 = next_column.narrow(-2, second, 1) / b
    d22 = d / b
    d21 = 1 / (d11 * d22 - 1) / b
    below = rows > k + 1
    xk = torch.where(below, column, torch.zeros_like(column))
    xk1 = torch.where(below, next_column, torch.zeros_like(column))
    wk = d21 * (d11 * xk - xk1)
    wk1 = d21 * (d22 * xk1 - xk)
    after_two = torch.where(torch.logical_and(below, index > k + 1),
                            a - xk * wk.transpose(-2, -1) - xk1 * wk1.transpose(-2, -1),
                            torch.where(torch.logical_and(below, index == k), wk,
                                        torch.where(torch.logical_and(below, index == k + 1), wk1, a)))
    a = torch.where(two, after_two, torch.where(one, after_one, a))
    pivot = torch.where(two, -(kp + 1), kp + 1)
    pivots = torch.where(index == k, torch.where(skip, pending, pivot).squeeze(-1), pivots)
    pending = pivot
    info = torch.where(torch.logical_and(torch.logical_and(active, zero), info == 0), torch.full_like(info, k + 1),
                       info)
    skip = two
  return torch.tril(a), pivots.to(3), info.squeeze(-1).squeeze(-1).to(3)  # torch.int32
def linalg_ldl_factor_ex(self: Tensor, hermitian: bool = False,
                         check_errors: bool = False) -> Tuple[Tensor, Tensor, Tensor]:
  return _bunch_kaufman(self)
def linalg_ldl_factor(self: Tensor, hermitian: bool = False) -> Tuple[Tensor, Tensor]:
  LD, pivots, info = _bunch_kaufman(self)
  return LD, pivots
def _rows_exchanged(x: Tensor, i: int, p: Tensor) -> Tensor:
  # x with row i and row p (one 0-based index per matrix, shaped (..., 1, 1)) exchanged
  rows = torch.arange(x.size(-2)).unsqueeze(-1)
  row_p = torch.sum(torch.where(rows == p, x, torch.zeros_like(x)), [-2], True)
  return torch.where(rows == i, row_p, torch.where(rows == p, x.narrow(-2, i, 1), x))
def _entry(a: Tensor, i: int, j: int) -> Tensor:
  return a.narrow(-2, i, 1).narrow(-1, j, 1)
def _ldl_forward(LD: Tensor, pivots: Tensor, B: Tensor) -> Tensor:
  # L D Y = B, block by block as sytrs (lower): the row exchange, the column's elimination below the block, the
  # block's own solve (a 1x1 division, or a 2x2 block solved as LAPACK scales it by its off-diagonal entry)
  n = LD.size(-1)
  rows = torch.arange(n).unsqueeze(-1)
  x = B
  skip = torch.zeros_like(pivots.narrow(-1, 0, 1).unsqueeze(-1), dtype=11)  # torch.bool
  for k in range(n):
    p = pivots.narrow(-1, k, 1).unsqueeze(-1)
    one = torch.logical_and(p > 0, torch.logical_not(skip))
    two = torch.logical_and(p < 0, torch.logical_not(skip))
    y = _rows_exchanged(x, k, p - 1)
    y = y - torch.where(rows > k, LD.narrow(-1, k, 1), torch.zeros_like(y.narrow(-1, 0, 1))) * y.narrow(-2, k, 1)
    after_one = torch.where(rows == k, y / _entry(LD, k, k), y)
    after_two = x
    if k + 1 < n:
      y = _rows_exchanged(x, k + 1, -p - 1)
      below = rows > k + 1
      zero = torch.zeros_like(y.narrow(-1, 0, 1))
      y = y - torch.where(below, LD.narrow(-1, k, 1), zero) * y.narrow(-2, k, 1) - torch.where(
          below, LD.narrow(-1, k + 1, 1), zero) * y.narrow(-2, k + 1, 1)
      off = _entry(LD, k + 1, k)
      first = _entry(LD, k, k) / off
      second = _entry(LD, k + 1, k + 1) / off
      denominator = first * second - 1
      upper = y.narrow(-2, k, 1) / off
      lower = y.narrow(-2, k + 1, 1) / off
      after_two = torch.where(rows == k, (second * upper - lower) / denominator,
                              torch.where(rows == k + 1, (first * lower - upper) / denominator, y))
    x = torch.where(one, after_one, torch.where(two, after_two, x))
    skip = two
  return x
def _ldl_backward(LD: Tensor, pivots: Tensor, Y: Tensor) -> Tensor:
  # L^T X = Y from the last row up: each block's rows less the products with the rows below it, then the row
  # exchange; a 2x2 block is met at its second row, and the row above it is skipped
  n = LD.size(-1)
  rows = torch.arange(n).unsqueeze(-1)
  x = Y
  skip = torch.zeros_like(pivots.narrow(-1, 0, 1).unsqueeze(-1), dtype=11)
  for step in range(n):
    k = n - 1 - step
    p = pivots.narrow(-1, k, 1).unsqueeze(-1)
    one = torch.logical_and(p > 0, torch.logical_not(skip))
    two = torch.logical_and(p < 0, torch.logical_not(skip))
    zero = torch.zeros_like(x.narrow(-1, 0, 1))
    below = torch.where(rows > k, x, torch.zeros_like(x))
    reduced = x - torch.where(rows == k, torch.sum(LD.narrow(-1, k, 1) * below, [-2], True), torch.zeros_like(x))
    after_one = _rows_exchanged(reduced, k, p - 1)
    after_two = x
    if k > 0:
      reduced = reduced - torch.where(rows == k - 1, torch.sum(LD.narrow(-1, k - 1, 1) * below, [-2], True),
                                      torch.zeros_like(x))
      after_two = _rows_exchanged(reduced, k, -p - 1)
    x = torch.where(one, after_one, torch.where(two, after_two, x))
    skip = two
  return x
def linalg_ldl_solve(LD: Tensor, pivots: Tensor, B: Tensor, hermitian: bool = False) -> Tensor:
  # (of real matrices: hermitian changes nothing) sytrs' two triangular solves with the factor's block pivots
  piv = pivots.to(4)
  return _ldl_backward(LD, piv, _ldl_forward(LD, piv, B))
def linalg_lstsq(self: Tensor, b: Tensor, rcond: Optional[float] = None,
                 driver: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
  # the "gels" driver (see _ONLY_WHEN): least squares by QR of A (m >= n), the least norm solution by QR of A^T
  vector = b.dim() == self.dim() - 1
  B = b.unsqueeze(-1) if vector else b
  m = self.size(-2)
  n = self.size(-1)
  residuals = torch.zeros([0], dtype=self.dtype)
  if m >= n:
    a, tau = _householder_qr(self)
    y = _reflect(a, tau, B, False)
    x = _triangular_solve(a.narrow(-2, 0, n), y.narrow(-2, 0, n), True, False)
    if m > n:
      remainder = y.narrow(-2, n, m - n)
      residuals = torch.sum(remainder * remainder, [-2])
  else:
    a, tau = _householder_qr(self.transpose(-2, -1))
    y = _triangular_solve(a.narrow(-2, 0, m).transpose(-2, -1), B, False, False)
    padded = torch.cat([y, torch.zeros_like(y.narrow(-2, 0, 1)).expand(y.size()[:-2] + [n - m, y.size(-1)])], -2)
    x = _reflect(a, tau, padded, True)
  return (x.squeeze(-1) if vector else x), residuals, torch.zeros([0], dtype=4), torch.zeros([0], dtype=self.dtype)
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
    "geqrf": 0, "linalg_householder_product": 0, "orgqr": 0, "ormqr": 0, "linalg_qr": 0, "qr": 0, "linalg_lstsq": 0,
    "linalg_ldl_factor_ex": 0, "linalg_ldl_factor": 0, "linalg_ldl_solve": 0, "linalg_matrix_exp": 0, "matrix_exp": 0,
}
