"""Quantiles, k-th values and segment reductions in TorchScript over sorts, gathers and masked reductions, for
decompositions.DECOMPOSITIONS (the torch dialect has neither `aten::quantile` nor `aten::segment_reduce`).

`quantile`, `nanquantile` (a tensor of quantiles, or one number): each row along `dim` (all elements when it is
None) sorted, NaNs last (`_sorted_nan_last`: the backends' sort leaves a NaN where it stands); the quantile's rank
q (n - 1) in the row, with n the count of its non-NaN elements for nanquantile. A row holding a NaN has quantile's
rank n - 1 (its NaN), as has a row of NaNs only nanquantile's. The interpolation takes the value below (`lower`),
above (`higher`), nearest (`nearest`, the rank rounded half to even) or interpolates (`linear`, `midpoint`), as
ATen's kernel does; a tensor of quantiles comes first in the result's shape.

`segment_reduce` along axis 0 of `data`, given 1-D segment `lengths` or `offsets`: a segments x positions mask
says which values each segment holds, and the masked values are reduced (`sum`, `mean`, `max`, `min`, `prod`,
NaNs propagating), the `initial` value taking part as in ATen's kernel; an empty segment holds `initial`, or without
one the reduction's identity (0, 1, -inf, inf) and NaN for a mean.

`kthvalue` (torch-mlir lowers it to a tm_tensor.topk whose region IREE rejects): the k-th of each row sorted NaNs
last, at the position of the occurrence of that value which the k-th place takes among its equals (ATen's
quickselect returns one of the equal values' positions, not always that one).
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
def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> Tuple[Tensor, Tensor]:
  if self.dim() == 0:
    return self.clone(), torch.zeros_like(self, dtype=4)
  rows = self.movedim(dim, -1)
  ordered = _sorted_nan_last(rows) if rows.is_floating_point() else torch.sort(rows, -1)[0]
  value = ordered.narrow(-1, k - 1, 1)
  # its position: the occurrence of the value that the k-th place takes among its equals (NaNs equal each other)
  missing = torch.isnan(rows)
  value_missing = torch.isnan(value)
  below = torch.where(value_missing, torch.logical_not(missing), rows < value).to(4).sum([-1], True)
  same = torch.where(value_missing, missing, rows == value)
  chosen = torch.logical_and(same, torch.cumsum(same.to(4), -1) - 1 == k - 1 - below)
  index = torch.sum(chosen.to(4) * torch.arange(rows.size(-1)), [-1], True)
  if keepdim:
    return value.movedim(-1, dim), index.movedim(-1, dim)
  return value.squeeze(-1), index.squeeze(-1)
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
def segment_reduce(data: Tensor, reduce: str, lengths: Optional[Tensor] = None, indices: Optional[Tensor] = None,
                   offsets: Optional[Tensor] = None, axis: int = 0, unsafe: bool = False,
                   initial: Optional[number] = None) -> Tensor:
  if lengths is not None:
    ends = torch.cumsum(lengths, 0)
    starts = ends - lengths
  else:
    assert offsets is not None
    starts = offsets[:-1]
    ends = offsets[1:]
  position = torch.arange(data.size(0))
  trailing = [1 for _ in range(data.dim() - 1)]
  inside = torch.logical_and(position >= starts.unsqueeze(1), position < ends.unsqueeze(1))
  inside = inside.reshape(inside.size() + trailing)
  values = data.unsqueeze(0)
  if reduce == "max" or reduce == "min":
    largest = reduce == "max"
    if largest:
      result = torch.amax(torch.where(inside, values, float("-inf")), [1])
    else:
      result = torch.amin(torch.where(inside, values, float("inf")), [1])
    if initial is None:
      return result
    # (not clamp: the backends' clamp does not propagate a NaN)
    kept = torch.logical_or(result >= initial if largest else result <= initial, torch.isnan(result))
    return torch.where(kept, result, torch.full_like(result, initial))
  if reduce == "prod":
    result = torch.prod(torch.where(inside, values, 1.0), 1)
    return result if initial is None else result * initial
  total = torch.sum(torch.where(inside, values, 0.0), [1])
  if initial is not None:
    total = total + initial
  if reduce == "sum":
    return total
  count = (ends - starts).reshape([-1] + trailing)
  empty = torch.full_like(total, float("nan")) if initial is None else torch.full_like(total, initial)
  return torch.where(count > 0, total / count, empty)
"""
