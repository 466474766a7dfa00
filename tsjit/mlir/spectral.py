"""Singular value and symmetric eigenvalue decompositions in TorchScript (cyclic Jacobi), for
decompositions.DECOMPOSITIONS.

The torch dialect has no `aten::linalg_svdvals`, `aten::linalg_eigh`, `aten::linalg_pinv`... LAPACK reaches them
by iterations whose count depends on the data (bidiagonal or tridiagonal QR); here they are computed by the cyclic
Jacobi method instead, whose sweeps (one rotation per pair of columns) converge quadratically: a fixed number of
sweeps (`_SWEEPS_SINGLE`, `_SWEEPS_DOUBLE`) reaches single or double precision on the small matrices whose sizes
the types state (see decompositions._ONLY_WHEN). Each method is one loop over the pairs of every sweep: iteration
i rotates p = i mod n with q = p + d mod n for the distances d = 1 .. n // 2, which visits every pair once a sweep
(for an even n, the pairs at distance n / 2 twice: the second rotation is the identity). The loop carries tensors
only, so that it stays a loop (scf.for) on linalg, and its trip count exceeds what type refinement runs iteration
by iteration (nested loops over the pairs were, a hundred rotations of meta tensors each time the types are
refined); it reads columns and rows by masked sums rather than narrow, whose shape refinement would not know for an
unknown p:

- `_one_sided_jacobi` (Hestenes): rotations of the columns of A (m x n, m >= n) until they are orthogonal,
  W = A V; the singular values are the columns' norms, in descending order as LAPACK returns them, U = W / S;
- `_symmetric_jacobi`: rotations J^T A J of the symmetric matrix (read from one triangle, as LAPACK reads it)
  until it is diagonal; the eigenvalues in ascending order, the eigenvectors the product of the rotations.
Singular vectors and eigenvectors are unique only up to sign (and within repeated values): these are valid
decompositions but not necessarily with LAPACK's signs. What is built on them without that freedom (singular
values, eigenvalues, pinv, the nuclear norm, matrix_rank's count of singular values above the tolerance, the
condition number in the 2-norm) agrees with eager to rounding.
"""

from __future__ import annotations

# sweeps (of about n^2 / 2 rotations each) that reach single and double precision for n up to a dozen or two
# (quadratic convergence once the rotations are small: 5 and 7 sweeps did on random matrices of n <= 12)
_SWEEPS_SINGLE = 7
_SWEEPS_DOUBLE = 9

SPECTRAL = f"""
def _sweeps(dtype: int) -> int:
  return {_SWEEPS_SINGLE} if dtype == 6 else {_SWEEPS_DOUBLE}  # torch.float32, else float64
def _jacobi_tangent(alpha: Tensor, beta: Tensor, gamma: Tensor) -> Tensor:
  # t = tan(theta) of the rotation that makes columns (or rows) p, q orthogonal: the smaller root of
  # t^2 + 2 zeta t - 1 = 0, zeta = (beta - alpha) / (2 gamma); 0 when they already are (gamma = 0)
  rotate = gamma != 0
  zeta = (beta - alpha) / (2 * torch.where(rotate, gamma, torch.ones_like(gamma)))
  magnitude = torch.abs(zeta)
  # sqrt(1 + zeta^2) without overflowing for a large zeta
  root = torch.where(magnitude > 1, magnitude * torch.sqrt(1 + (1 / torch.where(magnitude > 1, zeta, torch.ones_like(
      zeta))) ** 2), torch.sqrt(1 + zeta * zeta))
  t = torch.where(zeta >= 0, torch.ones_like(zeta), -torch.ones_like(zeta)) / (magnitude + root)
  return torch.where(rotate, t, torch.zeros_like(t))
def _slice(x: Tensor, index: Tensor, i: int, dim: int) -> Tensor:
  # x.narrow(dim, i, 1) (index: the positions along dim), as a masked sum: its shape does not depend on i, which
  # type refinement does not know in a loop it does not run iteration by iteration
  return torch.sum(torch.where(index == i, x, torch.zeros_like(x)), [dim], True)
def _rotated(x: Tensor, index: Tensor, p: int, q: int, c: Tensor, s: Tensor, dim: int) -> Tensor:
  # x with its slices p, q along dim replaced by c x_p - s x_q and s x_p + c x_q
  xp = _slice(x, index, p, dim)
  xq = _slice(x, index, q, dim)
  return torch.where(index == p, c * xp - s * xq, torch.where(index == q, s * xp + c * xq, x))
def _one_sided_jacobi(A: Tensor) -> Tuple[Tensor, Tensor]:
  # (W, V) with W = A V of orthogonal columns, V orthogonal, of A (..., m, n), m >= n
  n = A.size(-1)
  columns = torch.arange(n)
  w = A
  v = torch.eye(n, dtype=A.dtype) + torch.zeros(A.size()[:-2] + [n, n], dtype=A.dtype)
  for i in range(_sweeps(A.dtype) * n * (n // 2)):  # (one loop over the sweeps' pairs: see the module's docstring)
    p = i % n
    q = (p + 1 + i // n % (n // 2)) % n
    wp = _slice(w, columns, p, -1)
    wq = _slice(w, columns, q, -1)
    t = _jacobi_tangent(torch.sum(wp * wp, [-2], True), torch.sum(wq * wq, [-2], True),
                        torch.sum(wp * wq, [-2], True))
    c = 1 / torch.sqrt(1 + t * t)
    w = _rotated(w, columns, p, q, c, c * t, -1)
    v = _rotated(v, columns, p, q, c, c * t, -1)
  return w, v
def _descending(values: Tensor, w: Tensor, v: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
  # values (..., k) in descending order, and the columns of w (..., m, k) and v (..., n, k) in the same order
  ordered, order = torch.sort(values, -1, True)
  return ordered, torch.gather(w, -1, order.unsqueeze(-2).expand(w.size())), torch.gather(
      v, -1, order.unsqueeze(-2).expand(v.size()))
def _singular_values(A: Tensor) -> Tensor:
  tall = A if A.size(-2) >= A.size(-1) else A.transpose(-2, -1)
  w, v = _one_sided_jacobi(tall)
  return torch.sort(torch.sqrt(torch.sum(w * w, [-2])), -1, True)[0]
def _svd(A: Tensor) -> Tuple[Tensor, Tensor, Tensor]:
  # (U (..., m, k), S (..., k), V (..., n, k)), k = min(m, n), S descending; U's columns of zero singular values
  # are zero
  transposed = A.size(-2) < A.size(-1)
  w, v = _one_sided_jacobi(A.transpose(-2, -1) if transposed else A)
  norms = torch.sqrt(torch.sum(w * w, [-2]))
  s, w, v = _descending(norms, w, v)
  u = w / torch.where(s == 0, torch.ones_like(s), s).unsqueeze(-2)
  if transposed:
    return v, s, u
  return u, s, v
def _symmetric(A: Tensor, UPLO: str) -> Tensor:
  if UPLO == "U" or UPLO == "u":
    return torch.triu(A) + torch.triu(A, 1).transpose(-2, -1)
  return torch.tril(A) + torch.tril(A, -1).transpose(-2, -1)
def _symmetric_jacobi(A: Tensor) -> Tuple[Tensor, Tensor]:
  # (eigenvalues ascending (..., n), eigenvectors (..., n, n)) of a symmetric A
  n = A.size(-1)
  index = torch.arange(n)
  rows = index.unsqueeze(-1)
  a = A
  v = torch.eye(n, dtype=A.dtype) + torch.zeros_like(A)
  for i in range(_sweeps(A.dtype) * n * (n // 2)):
    p = i % n
    q = (p + 1 + i // n % (n // 2)) % n
    row_p = _slice(a, rows, p, -2)
    t = _jacobi_tangent(_slice(row_p, index, p, -1), _slice(_slice(a, rows, q, -2), index, q, -1),
                        _slice(row_p, index, q, -1))
    c = 1 / torch.sqrt(1 + t * t)
    a = _rotated(_rotated(a, index, p, q, c, c * t, -1), rows, p, q, c, c * t, -2)
    v = _rotated(v, index, p, q, c, c * t, -1)
  values, order = torch.sort(torch.diagonal(a, 0, -2, -1), -1)
  return values, torch.gather(v, -1, order.unsqueeze(-2).expand(v.size()))
def _epsilon(dtype: int) -> float:
  return 1.1920928955078125e-07 if dtype == 6 else 2.220446049250313e-16  # torch.float32, else float64
def _default_rtol(A: Tensor, atol_given: bool) -> float:
  # torch.linalg's: eps * max(m, n) unless only atol is given
  return 0.0 if atol_given else _epsilon(A.dtype) * max(A.size(-2), A.size(-1))
def _cutoff(magnitudes: Tensor, atol: Tensor, rtol: Tensor) -> Tensor:
  # max(atol, rtol * the largest magnitude), (..., 1)
  return torch.maximum(atol.unsqueeze(-1), rtol.unsqueeze(-1) * torch.amax(magnitudes, [-1], True))
def _pinv(A: Tensor, atol: Tensor, rtol: Tensor, hermitian: bool) -> Tensor:
  if A.numel() == 0:  # (as ATen's, without the tolerances: they would broadcast their own batch shape into it)
    return torch.zeros(A.size()[:-2] + [A.size(-1), A.size(-2)], dtype=A.dtype)
  if hermitian:
    values, vectors = _symmetric_jacobi(_symmetric(A, "L"))
    kept = torch.abs(values) > _cutoff(torch.abs(values), atol, rtol)
    inverse = torch.where(kept, 1 / torch.where(kept, values, torch.ones_like(values)), torch.zeros_like(values))
    return torch.matmul(vectors * inverse.unsqueeze(-2), vectors.transpose(-2, -1))
  u, s, v = _svd(A)
  kept = s > _cutoff(s, atol, rtol)
  inverse = torch.where(kept, 1 / torch.where(kept, s, torch.ones_like(s)), torch.zeros_like(s))
  return torch.matmul(v * inverse.unsqueeze(-2), u.transpose(-2, -1))
def _batch_zeros(A: Tensor) -> Tensor:
  # zeros of A's dtype, one per matrix of the batch: the shape tolerances and cutoffs broadcast to
  return torch.zeros_like(A.sum([-2, -1]))
def _tolerances(A: Tensor, atol: Optional[Tensor], rtol: Optional[Tensor]) -> Tuple[Tensor, Tensor]:
  zero = _batch_zeros(A)
  absolute = zero if atol is None else atol.to(A.dtype) + zero
  if rtol is None and atol is None:
    # (the default rtol, not `where(atol > 0, ...)` of a zero atol: torch-mlir's torch-lower-to-backend-contract
    # crashed, a segmentation fault, on that where of a folded condition after a Jacobi loop)
    return absolute, zero + _default_rtol(A, False)
  if rtol is None:
    return absolute, torch.where(absolute > 0, zero, zero + _default_rtol(A, False))
  return absolute, rtol.to(A.dtype) + zero
def linalg_svdvals(A: Tensor, driver: Optional[str] = None) -> Tensor:
  return _singular_values(A)
def svd(self: Tensor, some: bool = True, compute_uv: bool = True) -> Tuple[Tensor, Tensor, Tensor]:
  if not compute_uv:
    zeros = _batch_zeros(self)
    return (zeros.reshape(zeros.size() + [1, 1]).expand(self.size()[:-1] + [self.size(-2)]).clone(),
            _singular_values(self), zeros.reshape(zeros.size() + [1, 1]).expand(
                self.size()[:-2] + [self.size(-1), self.size(-1)]).clone())
  return _svd(self)
def linalg_svd(A: Tensor, full_matrices: bool = True, driver: Optional[str] = None) -> Tuple[Tensor, Tensor, Tensor]:
  u, s, v = _svd(A)
  return u, s, v.transpose(-2, -1)
def linalg_eigh(self: Tensor, UPLO: str = "L") -> Tuple[Tensor, Tensor]:
  return _symmetric_jacobi(_symmetric(self, UPLO))
def linalg_eigvalsh(self: Tensor, UPLO: str = "L") -> Tensor:
  return _symmetric_jacobi(_symmetric(self, UPLO))[0]
def _float_tolerances(A: Tensor, atol: Optional[float], rtol: Optional[float]) -> Tuple[Tensor, Tensor]:
  # _tolerances of float atol and rtol: they are known at compile time, so the default rtol needs no where
  zero = _batch_zeros(A)
  absolute = zero if atol is None else zero + atol
  return absolute, zero + (_default_rtol(A, atol is not None and atol > 0) if rtol is None else rtol)
def linalg_pinv__atol_rtol_tensor(self: Tensor, atol: Optional[Tensor] = None, rtol: Optional[Tensor] = None,
                                  hermitian: bool = False) -> Tensor:
  absolute, relative = _tolerances(self, atol, rtol)
  return _pinv(self, absolute, relative, hermitian)
def linalg_pinv__atol_rtol_float(self: Tensor, atol: Optional[float] = None, rtol: Optional[float] = None,
                                 hermitian: bool = False) -> Tensor:
  absolute, relative = _float_tolerances(self, atol, rtol)
  return _pinv(self, absolute, relative, hermitian)
def linalg_pinv(self: Tensor, rcond: float, hermitian: bool = False) -> Tensor:
  zero = _batch_zeros(self)
  return _pinv(self, zero, zero + rcond, hermitian)
def linalg_pinv__rcond_tensor(self: Tensor, rcond: Tensor, hermitian: bool = False) -> Tensor:
  zero = _batch_zeros(self)
  return _pinv(self, zero, zero + rcond.to(self.dtype), hermitian)
def pinverse(self: Tensor, rcond: float = 1e-15) -> Tensor:
  zero = _batch_zeros(self)
  return _pinv(self, zero, zero + rcond, False)
def _matrix_rank(A: Tensor, atol: Tensor, rtol: Tensor, hermitian: bool) -> Tensor:
  # the count of singular values (of eigenvalues' magnitudes, for a hermitian A) above the cutoff
  if hermitian:
    magnitudes = torch.abs(_symmetric_jacobi(_symmetric(A, "L"))[0])
  else:
    magnitudes = _singular_values(A)
  return torch.sum(magnitudes > _cutoff(magnitudes, atol, rtol), [-1])
def linalg_matrix_rank__atol_rtol_tensor(input: Tensor, atol: Optional[Tensor] = None, rtol: Optional[Tensor] = None,
                                         hermitian: bool = False) -> Tensor:
  absolute, relative = _tolerances(input, atol, rtol)
  return _matrix_rank(input, absolute, relative, hermitian)
def linalg_matrix_rank__atol_rtol_float(self: Tensor, atol: Optional[float] = None, rtol: Optional[float] = None,
                                        hermitian: bool = False) -> Tensor:
  absolute, relative = _float_tolerances(self, atol, rtol)
  return _matrix_rank(self, absolute, relative, hermitian)
def linalg_matrix_rank(self: Tensor, tol: float, hermitian: bool = False) -> Tensor:
  zero = _batch_zeros(self)
  return _matrix_rank(self, zero + tol, zero, hermitian)
def linalg_matrix_rank__tol_tensor(input: Tensor, tol: Tensor, hermitian: bool = False) -> Tensor:
  zero = _batch_zeros(input)
  return _matrix_rank(input, zero + tol.to(input.dtype), zero, hermitian)
def _nuclear_norm(self: Tensor, dim: List[int], keepdim: bool) -> Tensor:
  # the sum of the singular values of the matrices of dims dim (moved last by movedim.int: the int[] overload's
  # decomposition appends to lists in a loop, one more loop for MLIR preparation to unroll)
  first = min(dim[0] % self.dim(), dim[1] % self.dim())
  second = max(dim[0] % self.dim(), dim[1] % self.dim())
  matrices = self
  if first != self.dim() - 2 or second != self.dim() - 1:
    matrices = self.movedim(second, -1).movedim(first, -2)
  norm = torch.sum(_singular_values(matrices), [-1])
  if keepdim:
    return norm.unsqueeze(first).unsqueeze(second)
  return norm
def nuclear_norm(self: Tensor, keepdim: bool = False) -> Tensor:
  return _nuclear_norm(self, [0, 1], keepdim)
def nuclear_norm__dim(self: Tensor, dim: List[int], keepdim: bool = False) -> Tensor:
  return _nuclear_norm(self, dim, keepdim)
def _infinite_if_singular(A: Tensor) -> Tensor:
  # A's inverse, infinite where A is singular (as ATen fills it for the condition number)
  inverse, info = linalg_inv_ex(A)
  return torch.where((info > 0).unsqueeze(-1).unsqueeze(-1), float("inf"), inverse)
def _extreme_sum(A: Tensor, summed: int, largest: bool) -> Tensor:
  # the norm of order 1 (columns summed, the largest), -1, inf (rows summed), -inf
  sums = A.abs().sum(summed)
  return sums.amax(-1) if largest else sums.amin(-1)
def linalg_cond(self: Tensor, p: Optional[number] = None) -> Tensor:
  # in the 2-norm (p None, 2, -2) the ratio of the extreme singular values, else norm(A) norm(A^-1)
  order = 2.0 if p is None else float(p)
  if order == 2.0 or order == -2.0:
    values = _singular_values(self)
    ratio = values.select(-1, 0) / values.select(-1, -1)
    return 1 / ratio if order == -2.0 else ratio
  summed = -2 if order == 1.0 or order == -1.0 else -1
  return _extreme_sum(self, summed, order > 0) * _extreme_sum(_infinite_if_singular(self), summed, order > 0)
def linalg_cond__p_str(self: Tensor, p: str) -> Tensor:  # ("fro": _ONLY_WHEN; "nuc" takes the SVD of the inverse)
  inverse = _infinite_if_singular(self)
  return torch.sqrt((self * self).sum([-2, -1])) * torch.sqrt((inverse * inverse).sum([-2, -1]))
"""

# operator -> the position of the matrix whose sizes and real dtype the loops need (decompositions' _ONLY_WHEN)
STATIC_MATRIX_ARGUMENT = {
    "linalg_svdvals": 0, "svd": 0, "linalg_svd": 0, "linalg_eigh": 0, "linalg_eigvalsh": 0,
    "linalg_pinv__atol_rtol_tensor": 0, "linalg_pinv__atol_rtol_float": 0, "linalg_pinv": 0,
    "linalg_pinv__rcond_tensor": 0, "pinverse": 0, "nuclear_norm": 0, "nuclear_norm__dim": 0,
    "linalg_matrix_rank__atol_rtol_tensor": 0, "linalg_matrix_rank__atol_rtol_float": 0, "linalg_matrix_rank": 0,
    "linalg_matrix_rank__tol_tensor": 0, "linalg_cond": 0,
}
