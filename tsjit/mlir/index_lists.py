"""Permutations, contractions, grids and combinations over index lists that are constants in the program, in
TorchScript for decompositions.DECOMPOSITIONS (the torch dialect has none of `aten::movedim.intlist`,
`aten::tensordot`, `aten::meshgrid`, `aten::pdist`, `aten::combinations`).

Their loops and list comprehensions unroll once the lists and ranks are known, so permute/reshape/slice see
constant lists. `combinations` follows ATen's kernel: the r-dimensional grid of indices into the 1-D input, masked
to the strictly (with replacement: weakly) increasing ones, whose coordinates in row-major order, itertools'
order, are the index tuples; their count, C(n, r) or C(n + r - 1, r), is known from the static length, so the
coordinates are `nonzero_static`'s (a one-hot comparison with the running count).
"""

from __future__ import annotations

INDEX_LISTS = """
def _wrapped_dims(dims: List[int], rank: int) -> List[int]:
  return [d + rank if d < 0 else d for d in dims]
def _other_dims(dims: List[int], rank: int) -> List[int]:
  return [d for d in range(rank) if d not in dims]
def movedim__intlist(self: Tensor, source: List[int], destination: List[int]) -> Tensor:
  rank = self.dim()
  sources = _wrapped_dims(source, rank)
  destinations = _wrapped_dims(destination, rank)
  rest = _other_dims(sources, rank)
  order: List[int] = []
  for d in range(rank):
    if d in destinations:
      order.append(sources[destinations.index(d)])
    else:
      order.append(rest[len(order) - len([e for e in destinations if e < d])])
  return self.permute(order)
def tensordot(self: Tensor, other: Tensor, dims_self: List[int], dims_other: List[int]) -> Tensor:
  contracted_self = _wrapped_dims(dims_self, self.dim())
  contracted_other = _wrapped_dims(dims_other, other.dim())
  free_self = _other_dims(contracted_self, self.dim())
  free_other = _other_dims(contracted_other, other.dim())
  size = 1
  for d in contracted_self:
    size = size * self.size(d)
  left = self.permute(free_self + contracted_self).reshape([-1, size])
  right = other.permute(contracted_other + free_other).reshape([size, -1])
  return torch.mm(left, right).reshape([self.size(d) for d in free_self] + [other.size(d) for d in free_other])
def meshgrid__indexing(tensors: List[Tensor], indexing: str) -> List[Tensor]:
  count = len(tensors)
  axes = [1 - i if indexing == "xy" and count >= 2 and i < 2 else i for i in range(count)]
  sizes = [tensors[axes.index(d)].numel() for d in range(count)]
  return [tensors[i].reshape([-1 if d == axes[i] else 1 for d in range(count)]).expand(sizes) for i in range(count)]
def meshgrid(tensors: List[Tensor]) -> List[Tensor]:
  return meshgrid__indexing(tensors, "ij")
def pdist(self: Tensor, p: float = 2.0) -> Tensor:
  pairs = torch.triu_indices(self.size(0), self.size(0), 1)
  differences = torch.index_select(self, 0, pairs[0]) - torch.index_select(self, 0, pairs[1])
  return torch.linalg_vector_norm(differences, p, [1], False)
def combinations(self: Tensor, r: int = 2, with_replacement: bool = False) -> Tensor:
  if r == 0:
    return self.new_empty([0])
  n = self.size(0)
  # how many: C(n, r), or C(n + r - 1, r) with replacement
  pool = n + r - 1 if with_replacement else n
  count = 1
  for i in range(r):
    count = count * (pool - i) // (i + 1)
  grid = [n for _ in range(r)]
  increasing = torch.ones(grid, dtype=11)
  for d in range(r - 1):
    before = torch.arange(n).reshape([n if e == d else 1 for e in range(r)]).expand(grid)
    after = torch.arange(n).reshape([n if e == d + 1 else 1 for e in range(r)]).expand(grid)
    increasing = torch.logical_and(increasing, before <= after if with_replacement else before < after)
  indices = nonzero_static(increasing, count)
  return torch.index_select(self, 0, indices.reshape([-1])).reshape([count, r])
"""
