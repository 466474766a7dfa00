"""Quantiles in TorchScript over sorts and gathers, for decompositions.DECOMPOSITIONS (the torch dialect has no
`aten::quantile`).

`quantile`, `nanquantile` (a tensor of quantiles, or one number): each row along `dim` (all elements when it is
None) sorted, NaNs last (`_sorted_nan_last`: the backends' sort leaves a NaN where it stands); the quantile's rank
q (n - 1) in the row, with n the count of its non-NaN elements for nanquantile. A row holding a NaN has quantile's
rank n - 1 (its NaN), as has a row of NaNs only nanquantile's. The interpolation takes the value below (`lower`),
above (`higher`), nearest (`nearest`, the rank rounded half to even) or interpolates (`linear`, `midpoint`), as
ATen's kernel does; a tensor of quantiles comes first in the result's shape.
"""

from __future__ import annotations

ORDER_STATISTICS = """
def _sorted_nan_last(x: Tensor) -> Tensor:
  # x's values along its last dimension in ascending order, NaNs last as ATen sorts them: the backends' sort
  # compares with `<`, which leaves a NaN where it happens to stand
  missing = torch.isnan(x)
  ordered = torch.sort(torch.where(missing, float("inf"), x), -1)[0]
  length = x.size(-1)
  return torch.where(torch.arange(length) >= length - missing.sum([-1], True), float("nan"), ordered)
def _quantile(self: Tensor, q: Tensor, dim: Optional[int], keepdim: bool, interpolation: str,
              ignore_nan: bool) -> Tensor:
  rank = self.dim()
  if dim is None:
    rows = self.reshape([-1])
    kept = [1 for _ in range(rank) if keepdim]
  else:
    axis = 0 if rank == 0 else (dim + rank if dim < 0 else dim)
    rows = self.reshape([1]) if rank == 0 else self.movedim(axis, -1)
    kept = [1 if d == axis else self.size(d) for d in range(rank) if keepdim or d != axis]
  ordered = _sorted_nan_last(rows)
  last = ordered.size(-1) - 1
  quantiles = q.to(self.dtype).reshape([-1])
  if ignore_nan:
    present = torch.logical_not(torch.isnan(ordered)).sum([-1], True)
    ranks = quantiles * (present - 1)
    ranks = torch.where(ranks < 0, torch.zeros_like(ranks), ranks)
  else:
    ranks = torch.where(torch.isnan(ordered).any(-1, True), float(last), quantiles * last)
  if interpolation == "lower":
    ranks = torch.floor(ranks)
  elif interpolation == "higher":
    ranks = torch.ceil(ranks)
  elif interpolation == "nearest":
    ranks = torch.round(ranks)
  below = ranks.to(4)
  values = ordered.gather(-1, below)
  if interpolation == "linear" or interpolation == "midpoint":
    weights = torch.full_like(ranks, 0.5) if interpolation == "midpoint" else ranks - below
    values = torch.lerp(values, ordered.gather(-1, torch.ceil(ranks).to(4)), weights)
  if q.dim() == 0:
    return values.reshape(kept)
  return values.movedim(-1, 0).reshape([quantiles.size(0)] + kept)
def quantile(self: Tensor, q: Tensor, dim: Optional[int] = None, keepdim: bool = False,
             interpolation: str = "linear") -> Tensor:
  return _quantile(self, q, dim, keepdim, interpolation, False)
def quantile__scalar(self: Tensor, q: float, dim: Optional[int] = None, keepdim: bool = False,
                     interpolation: str = "linear") -> Tensor:
  return _quantile(self, torch.scalar_tensor(q, dtype=self.dtype), dim, keepdim, interpolation, False)
def nanquantile(self: Tensor, q: Tensor, dim: Optional[int] = None, keepdim: bool = False,
                interpolation: str = "linear") -> Tensor:
  return _quantile(self, q, dim, keepdim, interpolation, True)
def nanquantile__scalar(self: Tensor, q: float, dim: Optional[int] = None, keepdim: bool = False,
                        interpolation: str = "linear") -> Tensor:
  return _quantile(self, torch.scalar_tensor(q, dtype=self.dtype), dim, keepdim, interpolation, True)
"""
