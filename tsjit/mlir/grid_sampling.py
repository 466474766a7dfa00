"""Grid sampling (F.grid_sample) of 2-D and 3-D inputs in TorchScript, for decompositions.DECOMPOSITIONS: the torch
dialect has no `aten::grid_sampler_3d`, and torch-mlir's own lowering of `aten::grid_sampler` gives wrong values.

Each grid point's coordinates (x, y and for 3-D z, in [-1, 1]) become positions in the input as ATen's kernel
computes them (with or without `align_corners`, clamped for border padding); the values at integer positions
are gathered from the input flattened per channel, 0 outside it (zeros padding). Nearest sampling rounds the
positions half to even (as nearbyint); bilinear (trilinear in 3-D) sums the 2^d corners around each position,
each weighted by the product of its distances to the opposite corner. Reflection padding and bicubic sampling are
not decomposed (see decompositions._ONLY_WHEN).
"""

from __future__ import annotations

GRID_SAMPLING = """
def _grid_position(coordinate: Tensor, size: int, align_corners: bool, padding_mode: int) -> Tensor:
  if align_corners:
    position = (coordinate + 1.0) / 2.0 * float(size - 1)
  else:
    position = ((coordinate + 1.0) * float(size) - 1.0) / 2.0
  if padding_mode == 1:
    position = torch.clamp(position, 0.0, float(size - 1))
  return position
def _grid_values(flat: Tensor, coordinates: List[Tensor], sizes: List[int]) -> Tensor:
  # input[n, :, (z,) y, x] at each grid point, 0 outside the input (coordinates and sizes x first)
  inside = torch.ones_like(coordinates[0], dtype=11)  # torch.bool
  index = torch.zeros_like(coordinates[0])
  stride = 1
  for d in range(len(sizes)):
    inside = torch.logical_and(inside, torch.logical_and(coordinates[d] >= 0, coordinates[d] < sizes[d]))
    index = index + torch.clamp(coordinates[d], 0, sizes[d] - 1) * stride
    stride = stride * sizes[d]
  points = coordinates[0].size()
  gathered = flat.gather(2, index.reshape([points[0], 1, -1]).expand([flat.size(0), flat.size(1), -1]))
  return torch.where(inside.unsqueeze(1), gathered.reshape([flat.size(0), flat.size(1)] + points[1:]), 0.0)
def _corner_term(flat: Tensor, positions: List[Tensor], lows: List[Tensor], sizes: List[int], corner: int) -> Tensor:
  # the values at one corner (bit d of `corner`: the upper neighbour along dimension d) times their weights
  coordinates: List[Tensor] = []
  weight = torch.ones_like(positions[0])
  for d in range(len(sizes)):
    if (corner >> d) & 1 == 1:
      coordinates.append(lows[d].to(4) + 1)
      weight = weight * (positions[d] - lows[d])
    else:
      coordinates.append(lows[d].to(4))
      weight = weight * (lows[d] + 1.0 - positions[d])
  return _grid_values(flat, coordinates, sizes) * weight.unsqueeze(1)
def _grid_sample(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
  dims = grid.size(-1)
  sizes = [input.size(input.dim() - 1 - d) for d in range(dims)]
  flat = input.reshape([input.size(0), input.size(1), -1])
  positions = [_grid_position(grid.select(-1, d), sizes[d], align_corners, padding_mode) for d in range(dims)]
  if interpolation_mode == 1:
    return _grid_values(flat, [torch.round(p).to(4) for p in positions], sizes)
  lows = [torch.floor(p) for p in positions]
  result = _corner_term(flat, positions, lows, sizes, 0)
  for corner in range(1, 1 << dims):
    result = result + _corner_term(flat, positions, lows, sizes, corner)
  return result
def grid_sampler_2d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
  return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)
def grid_sampler_3d(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                    align_corners: bool) -> Tensor:
  return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)
def grid_sampler(input: Tensor, grid: Tensor, interpolation_mode: int, padding_mode: int,
                 align_corners: bool) -> Tensor:
  return _grid_sample(input, grid, interpolation_mode, padding_mode, align_corners)
"""
