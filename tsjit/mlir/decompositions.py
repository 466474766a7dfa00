"""Operators the torch dialect does not define, decomposed into ones it does (an MLIR preparation step).

(Some are defined but no backend lowers them: `aten::xlogy.Tensor`, the `*_copy` views such as `expand_copy`,
`unbind_copy`; they are decomposed too. So are the operators of `_PARTLY_LOWERED`, which torch-mlir defines but
lowers only for some arguments, with the arguments they are decomposed for in `_ONLY_WHEN`: torch.nn's modules
call them with the others, which the FX route's decompositions handle.)

tsjit's importer writes an operator this build of torch-mlir does not register as `torch.operator "aten.diff"`,
which no pipeline lowers ("failed to legalize operation 'torch.operator'" in torch-lower-to-backend-contract).
torch-mlir's FX route never meets them: torch.export runs PyTorch's decomposition table first. TorchScript
programs reach torch-mlir with the operator itself, so here each one is replaced by its definition in TorchScript
(the table below, one function per operator overload, named `name` or `name__overload`, with the operator's
schema as its signature), compiled once by tsjit's frontend and inlined at the node:

    %d : Tensor = aten::diff(%x, %n, %dim, %none, %none)
      ->  %l : int = aten::size(%x, %dim) ... %hi : Tensor = aten::narrow(%x, %dim, %one, ...)
          %d : Tensor = aten::sub(%hi, %lo, %one)

Arguments the program gives as constants (a reduction, `n`, the `train` flag) then fold with static control flow.
A decomposition computes what eager computes (the formula of ATen's own kernel); random operators the backends have
no form for draw from the distribution with the random operators they lower (sampling.py), while dropout in
training is not decomposed: such a node keeps its operator, and its program its failure. Where a definition
holds only for some arguments, `_ONLY_WHEN` says for which: constants (`matrix_power` of a non-negative power,
`cov` without weights) or the dtype the argument's type states (`conj`, `real` of a real tensor; `lgamma` of a
floating one).
Loops over sizes and list comprehensions in a definition run a fixed number of times once the argument types are
refined; MLIR preparation then unrolls them, so the sizes and permutations they compute reach torch-mlir as
constants.
"""

from __future__ import annotations

import functools
import math
import re

import torch

from tsjit import log
from tsjit.frontend.ir_emitter import compile_source
from tsjit.frontend.resolver import NativeResolver
from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value
from tsjit.ir.graph import Graph, Node, Value
from tsjit.ir.symbols import aten, prim
from tsjit.mlir import (
    floating_point,
    fourier,
    grid_sampling,
    incomplete_gamma,
    index_lists,
    linear_algebra,
    order_statistics,
    sampling,
    special_functions,
    spectral,
)
from tsjit.passes.inliner import inline_calls, insert_graph

_REDUCE = """
def _reduce(loss: Tensor, reduction: int) -> Tensor:
  if reduction == 1:
    return loss.mean()
  if reduction == 2:
    return loss.sum()
  return loss
"""

# torch-mlir defines these but lowers them only for some arguments (see the conditions in _ONLY_WHEN):
# - instance_norm without weight or bias: its DecomposeComplexOps pattern crashes the process ("LLVM ERROR:
#   SmallVector unable to grow"), so the missing ones are given as ones and zeros; and without input statistics
#   (nn.InstanceNorm2d(track_running_stats=True) in evaluation) it normalizes by the input's statistics anyway:
#   with running statistics it is then batch_norm in evaluation, per channel;
# - binary_cross_entropy_with_logits: with pos_weight its decomposition types `pos_weight * log_sigmoid(x)` as
#   pos_weight's shape ("'tensor.cast' op operand type 'tensor<3x4xf32>' and result type 'tensor<4xf32>'"); without
#   it, `1 - target` of a ones_like target folds into a literal of 2**64 (wrong values on every backend);
# - cross_entropy_loss with label smoothing: "found an op that was marked as backend illegal";
# - binary_cross_entropy, cosine_embedding_loss, and pad in "circular" mode: not decomposed at all; pad in
#   "reflect" and "replicate" modes: StableHLO lowers neither, TOSA not replication_pad1d (both as gathers);
# - upsample_*.vec (F.interpolate): StableHLO lowers no upsampling, linalg no bilinear (as gathers); (the
#   nearest-exact and trilinear ones, which the torch dialect lacks, share their helpers here);
# - diag_embed (and diag of a vector, which torch-mlir decomposes into it): StableHLO has no lowering (it leaves
#   "failed to legalize operation 'torch.constant.int'"); the FX route's decomposition is a where over a mask;
# - softshrink: torch-mlir's decomposition subtracts lambd below -lambd too (-1.52 -> -2.02, not -1.02);
# - prelu: torch-mlir's decomposition multiplies by the weight unshaped, broadcast along the last dimension, not
#   the channels' ("'linalg.generic' op inferred input/output operand #1 has shape's dimension #0 to be 4, but
#   found 3" for nn.PReLU(3) on a [2, 3, 4] input); ATen views it as [1, C, 1, ...];
# - scaled_dot_product_attention (without dropout): only linalg lowers it (nn.MultiheadAttention with a mask);
# - adaptive_avg_pool1d to a size that does not divide the input's: its decomposition asserts "only support cases
#   where input and output size are equal for non-unit output size"; each window is averaged on its own;
#   adaptive_avg_pool2d and adaptive_max_pool1d/2d to such sizes: their avg_pool and max_pool have the wrong extent
#   ("'tensor.cast' op operand type 'tensor<1x8x7x7xf32>' and result type 'tensor<1x8x5x7xf32>'"); the mean (and
#   the maximum) over a rectangle is taken one dimension at a time, window by window;
# - pad in "reflect" and "replicate" modes with negative amounts (which cut the input): "'tensor.cast' op operand
#   type 'tensor<5x3x4x9xf32>' and result type 'tensor<5x3x4x5xf32>'";
# - embedding_bag: linalg lowers only the sum mode, and there its offset2bag result is empty (as eager's CPU fast
#   path leaves it) while torch-mlir's own shape function gives it one element per index ("'tensor.cast' op
#   operand type 'tensor<0xi64>' and result type 'tensor<5xi64>'"); each bag is a row of a membership matrix, and
#   the auxiliary results are those of eager's general path (offset2bag, bag_size, max_indices);
# gru_cell, lstm_cell and the RNN cells are not in the torch dialect (nn.GRUCell, nn.LSTMCell, nn.RNNCell).
_PARTLY_LOWERED = """
def embedding_bag(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool = False, mode: int = 0,
                  sparse: bool = False, per_sample_weights: Optional[Tensor] = None,
                  include_last_offset: bool = False) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
  return _embedding_bags(weight, indices, offsets, mode, per_sample_weights, include_last_offset, None)
def embedding_bag__padding_idx(weight: Tensor, indices: Tensor, offsets: Tensor, scale_grad_by_freq: bool, mode: int,
                               sparse: bool, per_sample_weights: Optional[Tensor], include_last_offset: bool,
                               padding_idx: Optional[int]) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
  return _embedding_bags(weight, indices, offsets, mode, per_sample_weights, include_last_offset, padding_idx)
def _embedding_bags(weight: Tensor, indices: Tensor, offsets: Tensor, mode: int, per_sample_weights: Optional[Tensor],
                    include_last_offset: bool, padding_idx: Optional[int]) -> Tuple[Tensor, Tensor, Tensor, Tensor]:
  # bag b holds the indices from offsets[b] up to the next offset (the last bag to the end, or with
  # include_last_offset to the last offset, the count of indices); an index equal to padding_idx counts in no bag
  bags = offsets.size(0) - 1 if include_last_offset else offsets.size(0)
  positions = torch.arange(indices.size(0))
  bag = torch.sum((positions.unsqueeze(1) >= offsets.unsqueeze(0)).to(4), [1]) - 1
  member = bag.unsqueeze(0) == torch.arange(bags).unsqueeze(1)
  if padding_idx is not None:
    member = torch.logical_and(member, (indices != padding_idx).unsqueeze(0))
  bag_size = torch.sum(member.to(4), [1])
  rows = torch.index_select(weight, 0, indices)
  if per_sample_weights is not None:
    rows = rows * per_sample_weights.unsqueeze(1)
  if mode == 2:
    candidates = torch.where(member.unsqueeze(2), rows.unsqueeze(0), torch.full_like(rows, float("-inf")).unsqueeze(0))
    maxima, position = torch.max(candidates, 1)
    empty = (bag_size == 0).unsqueeze(1)
    max_indices = torch.where(empty, torch.zeros_like(position), torch.index_select(indices, 0,
                              position.reshape([-1])).reshape(position.shape))
    return torch.where(empty, torch.zeros_like(maxima), maxima), bag, bag_size, max_indices
  sums = torch.matmul(member.to(weight.dtype), rows)
  if mode == 1:
    sums = sums / torch.clamp_min(bag_size, 1).unsqueeze(1).to(weight.dtype)
  return sums, bag, bag_size, bag_size  # (eager's max_indices of a sum or mean: the bag sizes)
def instance_norm(input: Tensor, weight: Optional[Tensor], bias: Optional[Tensor], running_mean: Optional[Tensor],
                  running_var: Optional[Tensor], use_input_stats: bool, momentum: float, eps: float,
                  cudnn_enabled: bool) -> Tensor:
  channels = [input.size(1)]
  if weight is None:
    weight = input.new_ones(channels)
  if bias is None:
    bias = input.new_zeros(channels)
  if not use_input_stats and running_mean is not None and running_var is not None:
    return torch.batch_norm(input, weight, bias, running_mean, running_var, False, momentum, eps, cudnn_enabled)
  return torch.instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum, eps,
                             cudnn_enabled)
def binary_cross_entropy_with_logits(self: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                                     pos_weight: Optional[Tensor] = None, reduction: int = 1) -> Tensor:
  log_weight = torch.ones_like(target)
  if pos_weight is not None:
    log_weight = (pos_weight - 1) * target + 1
  loss = (1 - target) * self - log_weight * torch.log_sigmoid(self)
  if weight is not None:
    loss = loss * weight
  return _reduce(loss, reduction)
def cross_entropy_loss(self: Tensor, target: Tensor, weight: Optional[Tensor] = None, reduction: int = 1,
                       ignore_index: int = -100, label_smoothing: float = 0.0) -> Tensor:
  class_dim = 1 if self.dim() >= 2 else 0
  log_p = torch.log_softmax(self, class_dim)
  if self.dim() <= 2:
    nll = torch.nll_loss_forward(log_p, target, weight, reduction, ignore_index)[0]
  else:  # (not in the torch dialect)
    nll = torch.nll_loss_nd(log_p, target, weight, reduction, ignore_index)
  kept = target != ignore_index
  smooth = -log_p.sum(class_dim) * kept
  if reduction == 1:
    smooth = smooth.sum() / kept.sum()
  elif reduction == 2:
    smooth = smooth.sum()
  return (1 - label_smoothing) * nll + smooth * (label_smoothing / self.size(class_dim))
def binary_cross_entropy(self: Tensor, target: Tensor, weight: Optional[Tensor] = None,
                         reduction: int = 1) -> Tensor:
  loss = (target - 1) * torch.clamp_min(torch.log1p(-self), -100.0) - target * torch.clamp_min(torch.log(self), -100.0)
  if weight is not None:
    loss = loss * weight
  return _reduce(loss, reduction)
def cosine_embedding_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                          reduction: int = 1) -> Tensor:
  dim = target.dim()
  products = (input1 * input2).sum(dim)
  norms = torch.sqrt(((input1 * input1).sum(dim) + 1e-12) * ((input2 * input2).sum(dim) + 1e-12))
  cosine = products / norms
  zeros = torch.zeros_like(cosine)
  loss = torch.where(target == 1, 1 - cosine, zeros) + torch.where(target == -1, torch.clamp_min(cosine - margin, 0),
                                                                   zeros)
  return _reduce(loss, reduction)
def _circular(x: Tensor, dim: int, left: int, right: int) -> Tensor:
  size = x.size(dim)
  if left > 0:
    x = torch.cat([x.narrow(dim, size - left, left), x], dim)
  if right > 0:
    x = torch.cat([x, x.narrow(dim, left, right)], dim)
  return x
def _padded(x: Tensor, dim: int, left: int, right: int, mode: str) -> Tensor:
  if mode == "circular":
    return _circular(x, dim, left, right)
  last = x.size(dim) - 1
  position = torch.arange(-left, last + 1 + right)
  if mode == "reflect":
    index = last - torch.abs(last - torch.abs(position))
  else:
    index = torch.clamp(position, 0, last)
  return x.index_select(dim, index)
def pad(self: Tensor, pad: List[int], mode: str = "constant", value: Optional[float] = None) -> Tensor:
  x = self
  last = self.dim() - 1
  if len(pad) >= 2:
    x = _padded(x, last, pad[0], pad[1], mode)
  if len(pad) >= 4:
    x = _padded(x, last - 1, pad[2], pad[3], mode)
  if len(pad) >= 6:
    x = _padded(x, last - 2, pad[4], pad[5], mode)
  return x
def _adaptive_means(x: Tensor, dim: int, size: int) -> Tensor:
  length = x.size(dim)
  windows: List[Tensor] = []
  for i in range(size):
    start = (i * length) // size
    end = ((i + 1) * length + size - 1) // size
    windows.append(x.narrow(dim, start, end - start).mean([dim], True))
  return torch.cat(windows, dim)
def adaptive_avg_pool1d(self: Tensor, output_size: List[int]) -> Tensor:
  return _adaptive_means(self, -1, output_size[0])
def adaptive_avg_pool2d(self: Tensor, output_size: List[int]) -> Tensor:
  return _adaptive_means(_adaptive_means(self, -1, output_size[1]), -2, output_size[0])
def _adaptive_maxima(x: Tensor, dim: int, size: int) -> Tuple[Tensor, Tensor]:
  length = x.size(dim)
  values: List[Tensor] = []
  indices: List[Tensor] = []
  for i in range(size):
    start = (i * length) // size
    end = ((i + 1) * length + size - 1) // size
    value, index = x.narrow(dim, start, end - start).max(dim, True)
    values.append(value)
    indices.append(index + start)
  return torch.cat(values, dim), torch.cat(indices, dim)
def adaptive_max_pool1d(self: Tensor, output_size: List[int]) -> Tuple[Tensor, Tensor]:
  return _adaptive_maxima(self, -1, output_size[0])
def adaptive_max_pool2d(self: Tensor, output_size: List[int]) -> Tuple[Tensor, Tensor]:
  # each row's maximum per column window (its first column), then the first row holding the window's maximum:
  # the first maximum in row-major order, as ATen picks it
  by_columns, columns = _adaptive_maxima(self, -1, output_size[1])
  values, rows = _adaptive_maxima(by_columns, -2, output_size[0])
  return values, rows * self.size(-1) + columns.gather(-2, rows)
def _upsampled_sizes(input: Tensor, output_size: Optional[List[int]],
                     scale_factors: Optional[List[float]]) -> List[int]:
  if output_size is not None:
    return output_size
  assert scale_factors is not None
  return [int(float(input.size(i + 2)) * scale_factors[i]) for i in range(input.dim() - 2)]  # (floor: sizes >= 0)
def _source_ratio(size: int, out: int, scale_factors: Optional[List[float]], i: int) -> float:
  if scale_factors is not None and scale_factors[i] > 0:
    return 1.0 / scale_factors[i]
  return float(size) / float(out)
def _nearest(x: Tensor, dim: int, out: int, scale_factors: Optional[List[float]], i: int,
             offset: float = 0.0) -> Tensor:
  # (offset 0.5 for mode="nearest-exact": the source pixel nearest the output pixel's center, not its corner)
  size = x.size(dim)
  ratio = _source_ratio(size, out, scale_factors, i)
  index = torch.clamp(torch.floor((torch.arange(out, dtype=6) + offset) * ratio).to(3), 0, size - 1)  # (float32)
  return x.index_select(dim, index)
def _source_position(size: int, out: int, align_corners: bool, scale_factors: Optional[List[float]], i: int,
                     dtype: int) -> Tensor:
  position = torch.arange(out, dtype=dtype)
  if align_corners:
    ratio = 0.0
    if out > 1:
      ratio = float(size - 1) / float(out - 1)
    return position * ratio
  return (position + 0.5) * _source_ratio(size, out, scale_factors, i) - 0.5
def _ones(n: int) -> List[int]:
  # (a list, not a loop of unsqueezes: a loop that changes its tensor's rank has no type torch-mlir lowers)
  return [1 for _ in range(n)]
def _linear(x: Tensor, dim: int, out: int, align_corners: bool, scale_factors: Optional[List[float]], i: int) -> Tensor:
  size = x.size(dim)
  source = _source_position(size, out, align_corners, scale_factors, i, x.dtype)
  if not align_corners:
    source = torch.clamp(source, 0.0)
  low = torch.floor(source).to(3)  # (int32: TOSA casts no float to int64)
  high = torch.clamp(low + 1, 0, size - 1)
  weight = (source - low.to(x.dtype)).reshape([out] + _ones(x.dim() - 1 - dim))  # (along dim)
  below = x.index_select(dim, low)
  return below + (x.index_select(dim, high) - below) * weight
def _cubic_near(t: Tensor) -> Tensor:
  return (1.25 * t - 2.25) * t * t + 1.0
def _cubic_far(t: Tensor) -> Tensor:
  return ((-0.75 * t + 3.75) * t - 6.0) * t + 3.0
def _cubic(x: Tensor, dim: int, out: int, align_corners: bool, scale_factors: Optional[List[float]], i: int) -> Tensor:
  size = x.size(dim)
  source = _source_position(size, out, align_corners, scale_factors, i, x.dtype)
  floor = torch.floor(source)
  t = source - floor
  base = floor.to(3)  # (int32, as in _linear)
  weights = [_cubic_far(t + 1.0), _cubic_near(t), _cubic_near(1.0 - t), _cubic_far(2.0 - t)]
  result = torch.zeros_like(x.narrow(dim, 0, 1)).expand_as(x.index_select(dim, base))
  for k in range(4):
    weight = weights[k].reshape([out] + _ones(x.dim() - 1 - dim))
    result = result + x.index_select(dim, torch.clamp(base + (k - 1), 0, size - 1)) * weight
  return result
def upsample_linear1d(self: Tensor, output_size: List[int], align_corners: bool,
                      scales: Optional[float] = None) -> Tensor:
  factors: Optional[List[float]] = None
  if scales is not None:
    factors = [scales]
  return _linear(self, 2, output_size[0], align_corners, factors, 0)
def upsample_linear1d__vec(input: Tensor, output_size: Optional[List[int]], align_corners: bool,
                           scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  return _linear(input, 2, sizes[0], align_corners, scale_factors, 0)
def upsample_bicubic2d__vec(input: Tensor, output_size: Optional[List[int]], align_corners: bool,
                            scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  rows = _cubic(input, 2, sizes[0], align_corners, scale_factors, 0)
  return _cubic(rows, 3, sizes[1], align_corners, scale_factors, 1)
def upsample_nearest1d__vec(input: Tensor, output_size: Optional[List[int]],
                            scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  return _nearest(input, 2, sizes[0], scale_factors, 0)
def upsample_nearest2d__vec(input: Tensor, output_size: Optional[List[int]],
                            scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  return _nearest(_nearest(input, 2, sizes[0], scale_factors, 0), 3, sizes[1], scale_factors, 1)
def _upsample_nearest_exact1d__vec(input: Tensor, output_size: Optional[List[int]],
                                   scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  return _nearest(input, 2, sizes[0], scale_factors, 0, 0.5)
def _upsample_nearest_exact2d__vec(input: Tensor, output_size: Optional[List[int]],
                                   scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  return _nearest(_nearest(input, 2, sizes[0], scale_factors, 0, 0.5), 3, sizes[1], scale_factors, 1, 0.5)
def _upsample_nearest_exact3d__vec(input: Tensor, output_size: Optional[List[int]],
                                   scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  rows = _nearest(_nearest(input, 2, sizes[0], scale_factors, 0, 0.5), 3, sizes[1], scale_factors, 1, 0.5)
  return _nearest(rows, 4, sizes[2], scale_factors, 2, 0.5)
def upsample_trilinear3d__vec(input: Tensor, output_size: Optional[List[int]], align_corners: bool,
                              scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  planes = _linear(input, 2, sizes[0], align_corners, scale_factors, 0)
  return _linear(_linear(planes, 3, sizes[1], align_corners, scale_factors, 1), 4, sizes[2], align_corners,
                 scale_factors, 2)
def upsample_bilinear2d__vec(input: Tensor, output_size: Optional[List[int]], align_corners: bool,
                             scale_factors: Optional[List[float]]) -> Tensor:
  sizes = _upsampled_sizes(input, output_size, scale_factors)
  rows = _linear(input, 2, sizes[0], align_corners, scale_factors, 0)
  return _linear(rows, 3, sizes[1], align_corners, scale_factors, 1)
def softshrink(self: Tensor, lambd: float = 0.5) -> Tensor:
  return torch.where(self > lambd, self - lambd, torch.where(self < -lambd, self + lambd, torch.zeros_like(self)))
def prelu(self: Tensor, weight: Tensor) -> Tensor:
  if self.dim() >= 2:
    weight = weight.reshape([1, -1] + [1] * (self.dim() - 2))
  return torch.where(self > 0, self, weight * self)
def scaled_dot_product_attention(query: Tensor, key: Tensor, value: Tensor, attn_mask: Optional[Tensor] = None,
                                 dropout_p: float = 0.0, is_causal: bool = False, scale: Optional[float] = None,
                                 enable_gqa: bool = False) -> Tensor:
  factor = float(query.size(-1)) ** -0.5
  if scale is not None:
    factor = scale
  scores = torch.matmul(query, key.transpose(-2, -1)) * factor
  if is_causal:
    allowed = torch.ones([query.size(-2), key.size(-2)], dtype=11).tril()
    scores = scores.masked_fill(allowed.logical_not(), float("-inf"))
  if attn_mask is not None:
    if attn_mask.dtype == 11:
      scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
    else:
      scores = scores + attn_mask
  return torch.matmul(torch.softmax(scores, -1), value)
def gru_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor] = None,
             b_hh: Optional[Tensor] = None) -> Tensor:
  input_reset, input_update, input_new = torch.linear(input, w_ih, b_ih).chunk(3, 1)
  hidden_reset, hidden_update, hidden_new = torch.linear(hx, w_hh, b_hh).chunk(3, 1)
  reset = torch.sigmoid(input_reset + hidden_reset)
  update = torch.sigmoid(input_update + hidden_update)
  new = torch.tanh(input_new + reset * hidden_new)
  return new + update * (hx - new)
def lstm_cell(input: Tensor, hx: List[Tensor], w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor] = None,
              b_hh: Optional[Tensor] = None) -> Tuple[Tensor, Tensor]:
  gates = torch.linear(input, w_ih, b_ih) + torch.linear(hx[0], w_hh, b_hh)
  input_gate, forget_gate, cell_gate, output_gate = gates.chunk(4, 1)
  cell = torch.sigmoid(forget_gate) * hx[1] + torch.sigmoid(input_gate) * torch.tanh(cell_gate)
  return torch.sigmoid(output_gate) * torch.tanh(cell), cell
def rnn_tanh_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor] = None,
                  b_hh: Optional[Tensor] = None) -> Tensor:
  return torch.tanh(torch.linear(input, w_ih, b_ih) + torch.linear(hx, w_hh, b_hh))
def rnn_relu_cell(input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Optional[Tensor] = None,
                  b_hh: Optional[Tensor] = None) -> Tensor:
  return torch.relu(torch.linear(input, w_ih, b_ih) + torch.linear(hx, w_hh, b_hh))
"""

# Pooling whose windows do not end exactly at the input's end (a trailing part no window reads, or ceil_mode's
# last window running past it): IREE's pooling ops require the input to end where the last window does ("'linalg.
# generic' op inferred input/output operand #1 has shape's dimension #0 to be 3, but found 2"), and torch-mlir's
# ceil_mode padding makes the input too long. Without padding (see _ONLY_WHEN), the input is cut or padded (with
# -inf for max) to the extent the windows read; a max pool's flat indices are then mapped back to the input's.
_POOLS = """
def _pool_setting(values: List[int], i: int, default: int) -> int:
  if len(values) == 0:
    return default
  return values[i] if len(values) > i else values[0]
def _fitted_along(x: Tensor, i: int, kernel: List[int], stride: List[int], dilation: List[int], ceil_mode: bool,
                  fill: float) -> Tensor:
  dim = x.dim() - len(kernel) + i
  size = x.size(dim)
  k = _pool_setting(kernel, i, 1)
  s = _pool_setting(stride, i, k)
  d = _pool_setting(dilation, i, 1)
  count = (size - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
  if ceil_mode and (count - 1) * s >= size:
    count = count - 1
  extent = (count - 1) * s + d * (k - 1) + 1
  if extent < size:
    return x.narrow(dim, 0, extent)
  if extent > size:
    return torch.constant_pad_nd(x, [0] * (2 * (x.dim() - 1 - dim)) + [0, extent - size], fill)
  return x
def _fitted(x: Tensor, kernel: List[int], stride: List[int], dilation: List[int], ceil_mode: bool,
            fill: float) -> Tensor:  # (no loop: one that carries tensors of changing sizes would stay a loop)
  x = _fitted_along(x, 0, kernel, stride, dilation, ceil_mode, fill)
  if len(kernel) > 1:
    x = _fitted_along(x, 1, kernel, stride, dilation, ceil_mode, fill)
  if len(kernel) > 2:
    x = _fitted_along(x, 2, kernel, stride, dilation, ceil_mode, fill)
  return x
def _original_indices(indices: Tensor, fitted: List[int], original: List[int]) -> Tensor:
  result = torch.zeros_like(indices)
  inner_fitted = 1
  inner_original = 1
  for i in range(len(fitted) - 1, -1, -1):
    coordinate = torch.remainder(torch.div(indices, inner_fitted, rounding_mode="floor"), fitted[i])
    result = result + coordinate * inner_original
    inner_fitted = inner_fitted * fitted[i]
    inner_original = inner_original * original[i]
  return result
def _max_pool_with_indices(self: Tensor, kernel_size: List[int], stride: List[int], dilation: List[int],
                           ceil_mode: bool) -> Tuple[Tensor, Tensor]:
  x = _fitted(self, kernel_size, stride, dilation, ceil_mode, float("-inf"))
  rank = len(kernel_size)
  kernel = [_pool_setting(kernel_size, i, 1) for i in range(rank)]
  strides = [_pool_setting(stride, i, kernel[i]) for i in range(rank)]
  dilations = [_pool_setting(dilation, i, 1) for i in range(rank)]
  if rank == 1:
    values, indices = torch.max_pool1d_with_indices(x, kernel, strides, [0], dilations, False)
  elif rank == 2:
    values, indices = torch.max_pool2d_with_indices(x, kernel, strides, [0, 0], dilations, False)
  else:
    values, indices = torch.max_pool3d_with_indices(x, kernel, strides, [0, 0, 0], dilations, False)
  spatial = list(range(self.dim() - rank, self.dim()))
  return values, _original_indices(indices, [x.size(d) for d in spatial], [self.size(d) for d in spatial])
def max_pool1d_with_indices(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
                            dilation: List[int] = [1], ceil_mode: bool = False) -> Tuple[Tensor, Tensor]:
  return _max_pool_with_indices(self, kernel_size, stride, dilation, ceil_mode)
def max_pool2d_with_indices(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
                            dilation: List[int] = [1], ceil_mode: bool = False) -> Tuple[Tensor, Tensor]:
  return _max_pool_with_indices(self, kernel_size, stride, dilation, ceil_mode)
def max_pool3d_with_indices(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
                            dilation: List[int] = [1], ceil_mode: bool = False) -> Tuple[Tensor, Tensor]:
  return _max_pool_with_indices(self, kernel_size, stride, dilation, ceil_mode)
def max_pool1d(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
               dilation: List[int] = [1], ceil_mode: bool = False) -> Tensor:
  x = _fitted(self, kernel_size, stride, dilation, ceil_mode, float("-inf"))
  return torch.max_pool1d(x, kernel_size, stride, [0], dilation, False)
def max_pool2d(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
               dilation: List[int] = [1], ceil_mode: bool = False) -> Tensor:
  x = _fitted(self, kernel_size, stride, dilation, ceil_mode, float("-inf"))
  return torch.max_pool2d(x, kernel_size, stride, [0], dilation, False)
def max_pool3d(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
               dilation: List[int] = [1], ceil_mode: bool = False) -> Tensor:
  x = _fitted(self, kernel_size, stride, dilation, ceil_mode, float("-inf"))
  return torch.max_pool3d(x, kernel_size, stride, [0], dilation, False)
def avg_pool1d(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
               ceil_mode: bool = False, count_include_pad: bool = True) -> Tensor:
  return torch.avg_pool1d(_fitted(self, kernel_size, stride, [1], False, 0.0), kernel_size,
                          stride if len(stride) > 0 else kernel_size, [0], False,
                          count_include_pad)
def avg_pool2d(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None) -> Tensor:
  return torch.avg_pool2d(_fitted(self, kernel_size, stride, [1], False, 0.0), kernel_size,
                          stride if len(stride) > 0 else kernel_size, [0], False,
                          count_include_pad, divisor_override)
def avg_pool3d(self: Tensor, kernel_size: List[int], stride: List[int] = [], padding: List[int] = [0],
               ceil_mode: bool = False, count_include_pad: bool = True,
               divisor_override: Optional[int] = None) -> Tensor:
  return torch.avg_pool3d(_fitted(self, kernel_size, stride, [1], False, 0.0), kernel_size,
                          stride if len(stride) > 0 else kernel_size, [0], False,
                          count_include_pad, divisor_override)
"""

# Scans and selections along a dimension of known size n, by comparing every pair of its elements (n * n
# comparisons, where ATen scans or sorts; torch-mlir has no cummax, cummin or mode). NaN counts as equal to NaN
# and above every number, as ATen's scans and sorts take it. (mode: of a NaN mode, ATen's index is the first
# NaN's, this one the last's.)
_ALONG_A_DIMENSION = """
def _same(a: Tensor, b: Tensor) -> Tensor:
  same = a == b
  if a.is_floating_point():
    same = torch.logical_or(same, torch.logical_and(torch.isnan(a), torch.isnan(b)))
  return same
def _above(a: Tensor, b: Tensor) -> Tensor:
  above = a > b
  if a.is_floating_point():
    above = torch.logical_or(above, torch.logical_and(torch.isnan(a), torch.logical_not(torch.isnan(b))))
  return above
def _cumulative_extreme(self: Tensor, dim: int, largest: bool) -> Tuple[Tensor, Tensor]:
  if self.dim() == 0:
    return self.clone(), torch.zeros_like(self, dtype=4)
  x = self.movedim(dim, -1)
  positions = torch.arange(x.size(-1))
  seen = positions.unsqueeze(0) <= positions.unsqueeze(1)  # [i, j]: j <= i
  candidates = torch.where(seen, x.unsqueeze(-2), x.narrow(-1, 0, 1).unsqueeze(-1))  # [..., i, j]
  values = candidates.amax(-1) if largest else candidates.amin(-1)
  if x.is_floating_point():
    values = torch.where(torch.logical_and(seen, torch.isnan(x).unsqueeze(-2)).any(-1),
                         torch.full_like(values, float("nan")), values)
  hits = torch.logical_and(seen, _same(x.unsqueeze(-2), values.unsqueeze(-1)))
  indices = torch.where(hits, positions, -1).amax(-1)  # the last, as ATen takes a tie
  return values.movedim(-1, dim), indices.movedim(-1, dim)
def cummax(self: Tensor, dim: int) -> Tuple[Tensor, Tensor]:
  return _cumulative_extreme(self, dim, True)
def cummin(self: Tensor, dim: int) -> Tuple[Tensor, Tensor]:
  return _cumulative_extreme(self, dim, False)
def logcumsumexp(self: Tensor, dim: int) -> Tensor:
  # (torch-mlir's own decomposition, log(cumsum(exp(x))), overflows: 10000 gives inf) each prefix's logsumexp,
  # shifted by the prefix's maximum
  if self.dim() == 0:
    return self.clone()
  x = self.movedim(dim, -1)
  positions = torch.arange(x.size(-1))
  seen = positions.unsqueeze(0) <= positions.unsqueeze(1)  # [i, j]: j <= i
  prefixes = torch.where(seen, x.unsqueeze(-2), float("-inf"))  # [..., i, j]
  top = prefixes.amax(-1, keepdim=True)
  shift = torch.where(torch.isinf(top), torch.zeros_like(top), top)
  return (torch.log(torch.exp(prefixes - shift).sum(-1)) + shift.squeeze(-1)).movedim(-1, dim)
def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> Tuple[Tensor, Tensor]:
  if self.dim() == 0:
    return self.clone(), torch.zeros_like(self, dtype=4)
  x = self.movedim(dim, -1)
  counts = _same(x.unsqueeze(-1), x.unsqueeze(-2)).sum(-1)
  most = counts == counts.amax(-1, True)
  above_a_mode = torch.logical_and(_above(x.unsqueeze(-1), x.unsqueeze(-2)), most.unsqueeze(-2)).any(-1)
  chosen = torch.logical_and(most, torch.logical_not(above_a_mode))  # the smallest of the most frequent
  index = torch.where(chosen, torch.arange(x.size(-1)), -1).amax(-1, True)  # its last position
  values = x.gather(-1, index)
  if keepdim:
    return values.movedim(-1, dim), index.movedim(-1, dim)
  return values.squeeze(-1), index.squeeze(-1)
"""

DECOMPOSITIONS = _REDUCE + _PARTLY_LOWERED + index_lists.INDEX_LISTS + _ALONG_A_DIMENSION + _POOLS + """
def _chunk_cat(tensors: List[Tensor], dim: int, num_chunks: int) -> Tensor:
  pieces: List[Tensor] = []
  at = dim
  for tensor in tensors:
    at = dim + tensor.dim() if dim < 0 else dim
    length = tensor.size(at)
    chunk = (length + num_chunks - 1) // num_chunks
    if chunk * num_chunks > length:
      sizes = tensor.size()
      sizes[at] = chunk * num_chunks - length
      tensor = torch.cat([tensor, tensor.new_zeros(sizes)], at)
    pieces.append(tensor.reshape(tensor.size()[:at] + [num_chunks, -1]))
  return torch.cat(pieces, at + 1)
def _clamped_indices(self: Tensor, indices: List[Optional[Tensor]]) -> List[Optional[Tensor]]:
  # (where the mask is False an index may be out of bounds: in bounds, its value is then not used)
  clamped: List[Optional[Tensor]] = []
  for d in range(len(indices)):
    index = indices[d]
    if index is None:
      clamped.append(None)
    else:
      clamped.append(torch.clamp(index, -self.size(d), self.size(d) - 1))
  return clamped
def _unsafe_masked_index(self: Tensor, mask: Tensor, indices: List[Optional[Tensor]], fill: number) -> Tensor:
  return torch.where(mask, torch.ops.aten.index(self, _clamped_indices(self, indices)), fill)
def _unsafe_masked_index_put_accumulate(self: Tensor, mask: Tensor, indices: List[Optional[Tensor]],
                                        values: Tensor) -> Tensor:
  return torch.index_put(self, _clamped_indices(self, indices), torch.where(mask, values, 0), True)
def multilabel_margin_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
  classes = 1 if self.dim() == 0 else self.size(-1)
  x = self.reshape([-1, classes])
  # the labels of a row are its targets up to the first -1
  labelled = torch.cumsum((target.reshape([-1, classes]) == -1).to(4), 1) == 0
  label = torch.where(labelled, target.reshape([-1, classes]), 0)
  is_label = torch.logical_and(label.unsqueeze(2) == torch.arange(classes).reshape([1, 1, classes]),
                               labelled.unsqueeze(2)).any(1)
  # [row, label j, class i]: the hinge 1 - (x[label j] - x[i]), summed over the classes i that are no label
  hinge = torch.clamp_min(1.0 - x.gather(1, label).unsqueeze(2) + x.unsqueeze(1), 0.0)
  kept = torch.logical_and(labelled.unsqueeze(2), is_label.logical_not().unsqueeze(1))
  loss = torch.where(kept, hinge, 0.0).sum([1, 2]) / classes
  if self.dim() <= 1:
    loss = loss.reshape([])
  return _reduce(loss, reduction)
def positive(self: Tensor) -> Tensor:
  return self
def resolve_neg(self: Tensor) -> Tensor:
  return self
def resolve_conj(self: Tensor) -> Tensor:
  return self
def ravel(self: Tensor) -> Tensor:
  return self.reshape([-1])
def resize_as(self: Tensor, the_template: Tensor, memory_format: Optional[int] = None) -> Tensor:
  # the storage's first elements in the template's sizes (of a contiguous tensor no smaller: _ONLY_WHEN)
  return self.reshape([-1]).narrow(0, 0, the_template.numel()).reshape(the_template.size())
def narrow_copy(self: Tensor, dim: int, start: int, length: int) -> Tensor:
  return self.narrow(dim, start, length).clone()
def hypot(self: Tensor, other: Tensor) -> Tensor:
  return torch.sqrt(self * self + other * other)
def sinc(self: Tensor) -> Tensor:
  x = self * 3.141592653589793
  return torch.where(self == 0, torch.ones_like(x), torch.sin(x) / x)
def erfc(self: Tensor) -> Tensor:
  return 1.0 - torch.erf(self)
def vdot(self: Tensor, other: Tensor) -> Tensor:
  return torch.dot(self, other)
def equal(self: Tensor, other: Tensor) -> bool:
  if self.size() != other.size():
    return False
  return bool(torch.eq(self, other).all())
def std_mean(self: Tensor, unbiased: bool = True) -> Tuple[Tensor, Tensor]:
  return torch.std(self, unbiased), torch.mean(self)
def diff(self: Tensor, n: int = 1, dim: int = -1, prepend: Optional[Tensor] = None,
         append: Optional[Tensor] = None) -> Tensor:
  x = self
  if prepend is not None:
    x = torch.cat([prepend, x], dim)
  if append is not None:
    x = torch.cat([x, append], dim)
  if n == 0:
    return x
  length = x.size(dim) - 1
  if x.dtype == 11:  # torch.bool (the native resolver knows no dtype names)
    return torch.logical_xor(x.narrow(dim, 1, length), x.narrow(dim, 0, length))
  return x.narrow(dim, 1, length) - x.narrow(dim, 0, length)
def pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-06, keepdim: bool = False) -> Tensor:
  dim = max(max(x1.dim(), x2.dim()), 1) - 1
  return torch.linalg_vector_norm(x1 - x2 + eps, p, [dim], keepdim)
def cross(self: Tensor, other: Tensor, dim: Optional[int] = None) -> Tensor:
  if dim is not None:
    return torch.linalg_cross(self, other, dim=dim)
  first = -1  # (the deprecated default: the first dimension of size 3)
  for i in range(self.dim()):
    if first == -1 and self.size(i) == 3:
      first = i
  return torch.linalg_cross(self, other, dim=first)
def linalg_multi_dot(tensors: List[Tensor]) -> Tensor:
  # left to right (ATen orders the products by cost: the same product, rounded differently); a first or last
  # vector is a row or a column, as matmul takes it
  result = tensors[0]
  for i in range(1, len(tensors)):
    result = torch.matmul(result, tensors[i])
  return result
def block_diag(tensors: List[Tensor]) -> Tensor:
  columns = 0
  for i in range(len(tensors)):
    columns += tensors[i].size(-1) if tensors[i].dim() > 0 else 1
  rows: List[Tensor] = []
  left = 0
  for i in range(len(tensors)):
    block = tensors[i].reshape([-1, tensors[i].size(-1) if tensors[i].dim() > 0 else 1])
    rows.append(torch.constant_pad_nd(block, [left, columns - left - block.size(1)], 0.0))
    left += block.size(1)
  return torch.cat(rows, 0)
def cdist(x1: Tensor, x2: Tensor, p: float = 2.0, compute_mode: Optional[int] = None) -> Tensor:
  # every pair's p-norm distance, from the differences (ATen's matrix-product form for p = 2 rounds differently)
  differences = x1.unsqueeze(-2) - x2.unsqueeze(-3)
  if p == 0.0:
    return (differences != 0).to(x1.dtype).sum(-1)
  if p == float("inf"):
    return differences.abs().amax(-1)
  return torch.linalg_vector_norm(differences, p, [-1])
def poisson_nll_loss(input: Tensor, target: Tensor, log_input: bool, full: bool, eps: float,
                     reduction: int) -> Tensor:  # (with full: see _ONLY_WHEN)
  if log_input:
    loss = torch.exp(input) - target * input
  else:
    loss = input - target * torch.log(input + eps)
  if full:  # Stirling's approximation of log(target!), for targets above 1
    stirling = target * torch.log(target) - target + 0.5 * torch.log(6.283185307179586 * target)  # (2 pi)
    loss = loss + torch.where(target > 1, stirling, torch.zeros_like(stirling))
  return _reduce(loss, reduction)
def soft_margin_loss(self: Tensor, target: Tensor, reduction: int = 1) -> Tensor:
  return _reduce(torch.log1p(torch.exp(-target * self)), reduction)
def margin_ranking_loss(input1: Tensor, input2: Tensor, target: Tensor, margin: float = 0.0,
                        reduction: int = 1) -> Tensor:
  return _reduce(torch.clamp_min(-target * (input1 - input2) + margin, 0), reduction)
def hinge_embedding_loss(self: Tensor, target: Tensor, margin: float = 1.0, reduction: int = 1) -> Tensor:
  zeros = torch.zeros_like(self)
  beyond_margin = torch.where(target != 1, torch.clamp_min(margin - self, 0), zeros)
  return _reduce(beyond_margin + torch.where(target != -1, self, zeros), reduction)
def multi_margin_loss(self: Tensor, target: Tensor, p: float = 1, margin: float = 1, weight: Optional[Tensor] = None,
                      reduction: int = 1) -> Tensor:
  classes = 1 if self.dim() == 0 else self.size(-1)
  x = self.reshape([-1, classes])
  label = target.reshape([-1, 1])
  # [row, class i]: the hinge margin - (x[target] - x[i]) (squared for p = 2, ATen's other p), over i != target
  hinge = torch.clamp_min(margin - x.gather(1, label) + x, 0.0)
  if p == 2:
    hinge = hinge * hinge
  if weight is not None:
    hinge = hinge * weight.gather(0, label.reshape([-1])).unsqueeze(1)
  loss = torch.where(torch.arange(classes).unsqueeze(0) != label, hinge, 0.0).sum(1) / classes
  if target.dim() == 0:
    loss = loss.reshape([])
  return _reduce(loss, reduction)
def huber_loss(self: Tensor, target: Tensor, reduction: int = 1, delta: float = 1.0) -> Tensor:
  z = torch.abs(self - target)
  return _reduce(torch.where(z < delta, 0.5 * z * z, delta * (z - 0.5 * delta)), reduction)
def smooth_l1_loss(self: Tensor, target: Tensor, reduction: int = 1, beta: float = 1.0) -> Tensor:
  z = torch.abs(self - target)
  if beta == 0.0:
    return _reduce(z, reduction)
  return _reduce(torch.where(z < beta, 0.5 * z * z / beta, z - 0.5 * beta), reduction)
def triplet_margin_loss(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float = 1.0, p: float = 2.0,
                        eps: float = 1e-06, swap: bool = False, reduction: int = 1) -> Tensor:
  positive_distance = pairwise_distance(anchor, positive, p, eps, False)
  negative_distance = pairwise_distance(anchor, negative, p, eps, False)
  if swap:
    negative_distance = torch.min(negative_distance, pairwise_distance(positive, negative, p, eps, False))
  return _reduce(torch.clamp_min(margin + positive_distance - negative_distance, 0), reduction)
def nansum(self: Tensor, dim: Optional[List[int]] = None, keepdim: bool = False,
           dtype: Optional[int] = None) -> Tensor:
  return torch.sum(torch.where(torch.isnan(self), torch.zeros_like(self), self), dim, keepdim, dtype=dtype)
def nanmean(self: Tensor, dim: Optional[List[int]] = None, keepdim: bool = False,
            dtype: Optional[int] = None) -> Tensor:
  present = torch.logical_not(torch.isnan(self))
  return nansum(self, dim, keepdim, dtype) / torch.sum(present, dim, keepdim)
def msort(self: Tensor) -> Tensor:
  return torch.sort(self, 0)[0]
def linalg_diagonal(A: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
  return torch.diagonal(A, offset, dim1, dim2)
def _max_unpool(values: Tensor, positions: Tensor, area: int) -> Tensor:
  # values (..., n) written at their flat positions (..., n) into planes of `area` zeros; of equal positions the
  # last one's value, as ATen's loop over a plane writes them (`last`: 1 + the index of the last value, 0: none)
  hit = (positions.unsqueeze(-1) == torch.arange(area)).long()
  last = torch.amax(hit * torch.arange(1, values.size(-1) + 1).unsqueeze(-1), [-2])
  picked = torch.gather(values, -1, torch.clamp(last - 1, 0, None))
  return torch.where(last > 0, picked, torch.zeros_like(picked))
def max_unpool2d(self: Tensor, indices: Tensor, output_size: List[int]) -> Tensor:
  area = output_size[0] * output_size[1]
  return _max_unpool(self.flatten(-2), indices.flatten(-2), area).reshape(self.size()[:-2] + output_size)
def max_unpool3d(self: Tensor, indices: Tensor, output_size: List[int], stride: List[int],
                 padding: List[int]) -> Tensor:
  area = output_size[0] * output_size[1] * output_size[2]
  return _max_unpool(self.flatten(-3), indices.flatten(-3), area).reshape(self.size()[:-3] + output_size)
def _gradient_along(x: Tensor, dim: int, h: float, edge_order: int) -> Tensor:
  # central differences inside; at the ends one-sided ones of first or second order (numpy's, as ATen's)
  n = x.size(dim)
  inside = (x.narrow(dim, 2, n - 2) - x.narrow(dim, 0, n - 2)) / (2 * h)
  if edge_order == 1:
    first = (x.narrow(dim, 1, 1) - x.narrow(dim, 0, 1)) / h
    last = (x.narrow(dim, n - 1, 1) - x.narrow(dim, n - 2, 1)) / h
  else:
    first = (-1.5 * x.narrow(dim, 0, 1) + 2 * x.narrow(dim, 1, 1) - 0.5 * x.narrow(dim, 2, 1)) / h
    last = (0.5 * x.narrow(dim, n - 3, 1) - 2 * x.narrow(dim, n - 2, 1) + 1.5 * x.narrow(dim, n - 1, 1)) / h
  return torch.cat([first, inside, last], dim)
def gradient__scalarint(self: Tensor, spacing: Optional[float] = None, dim: Optional[int] = None,
                        edge_order: int = 1) -> List[Tensor]:
  h = 1.0 if spacing is None else spacing
  if dim is None:
    return [_gradient_along(self, d, h, edge_order) for d in range(self.dim())]
  return [_gradient_along(self, dim, h, edge_order)]
def gradient__scalararray(self: Tensor, spacing: float, dim: List[int], edge_order: int = 1) -> List[Tensor]:
  return [_gradient_along(self, d, spacing, edge_order) for d in dim]
def take(self: Tensor, index: Tensor) -> Tensor:
  flat = self.reshape([-1])
  wrapped = torch.where(index < 0, index + flat.size(0), index)
  return torch.index_select(flat, 0, wrapped.reshape([-1])).reshape(index.size())
def atleast_3d(self: Tensor) -> Tensor:
  if self.dim() == 0:
    return self.reshape([1, 1, 1])
  if self.dim() == 1:
    return self.unsqueeze(0).unsqueeze(-1)
  if self.dim() == 2:
    return self.unsqueeze(-1)
  return self
def special_ndtr(self: Tensor) -> Tensor:
  return 0.5 * (1.0 + torch.erf(self * 0.7071067811865476))
def special_xlog1py(self: Tensor, other: Tensor) -> Tensor:
  product = torch.where(self == 0, torch.zeros_like(self * other), self * torch.log1p(other))
  return torch.where(torch.isnan(other), other + product, product)
def xlogy__Tensor(self: Tensor, other: Tensor) -> Tensor:
  product = torch.where(self == 0, torch.zeros_like(self * other), self * torch.log(other))
  return torch.where(torch.isnan(other), other + product, product)
def special_entr(self: Tensor) -> Tensor:
  entropy = torch.where(self > 0, -self * torch.log(self), torch.zeros_like(self))
  negative = torch.where(self < 0, torch.full_like(self, float("-inf")), entropy)
  return torch.where(torch.isnan(self), self, negative)
def unsafe_chunk(self: Tensor, chunks: int, dim: int = 0) -> List[Tensor]:
  return torch.chunk(self, chunks, dim)
def unsafe_split__Tensor(self: Tensor, split_size: int, dim: int = 0) -> List[Tensor]:
  return torch.split(self, split_size, dim)
def tensor_split__tensor_indices_or_sections(self: Tensor, tensor_indices_or_sections: Tensor,
                                             dim: int = 0) -> List[Tensor]:
  # (indices, see _ONLY_WHEN) the pieces between the indices, sliced as ATen slices them; their values are data,
  # so each piece's extent along dim is a size known at run time only (read one by one here: collected into a
  # list for _pieces_between, the last piece came out whole on IREE)
  along = self.transpose(0, dim)
  pieces: List[Tensor] = []
  start = 0
  for i in range(tensor_indices_or_sections.size(0)):
    end = int(tensor_indices_or_sections[i])
    pieces.append(along[start:end].transpose(0, dim))
    start = end
  pieces.append(along[start:].transpose(0, dim))
  return pieces
def tensor_split__indices(self: Tensor, indices: List[int], dim: int = 0) -> List[Tensor]:
  return _pieces_between(self, indices, dim)
def hsplit__array(self: Tensor, indices: List[int]) -> List[Tensor]:
  return _pieces_between(self, indices, 1 if self.dim() > 1 else 0)
def vsplit__array(self: Tensor, indices: List[int]) -> List[Tensor]:
  return _pieces_between(self, indices, 0)
def dsplit__array(self: Tensor, indices: List[int]) -> List[Tensor]:
  return _pieces_between(self, indices, 2)
def _pieces_between(self: Tensor, indices: List[int], dim: int) -> List[Tensor]:
  # the pieces between the indices along dim, sliced as ATen's tensor_split slices them (an index past the end
  # or before the previous one gives an empty piece)
  along = self.transpose(0, dim)
  pieces: List[Tensor] = []
  start = 0
  for end in indices:
    pieces.append(along[start:end].transpose(0, dim))
    start = end
  pieces.append(along[start:].transpose(0, dim))
  return pieces
def empty_permuted(size: List[int], physical_layout: List[int], dtype: Optional[int] = None,
                   layout: Optional[int] = None, device: Optional[Device] = None,
                   pin_memory: Optional[bool] = None) -> Tensor:
  # the physical dimensions' tensor, viewed in logical order: dimension d is physical dimension
  # physical_layout.index(d)
  physical = torch.empty([size[d] for d in physical_layout], dtype=dtype, layout=layout, device=device,
                         pin_memory=pin_memory)
  return physical.permute([physical_layout.index(d) for d in range(len(physical_layout))])
def polygamma(n: int, self: Tensor) -> Tensor:
  return _polygamma(n, self)
def special_polygamma(n: int, self: Tensor) -> Tensor:
  return _polygamma(n, self)
def _polygamma(n: int, self: Tensor) -> Tensor:
  # (n >= 1 of a floating tensor, see _ONLY_WHEN) (-1)^(n+1) n! zeta(n + 1, x), as ATen computes it; the order
  # is a tensor that depends on x (a NaN where x is one, as the result is): a constant one (full_like) made
  # special_zeta's decomposition NaN everywhere on IREE
  factorial = 1.0
  for k in range(2, n + 1):
    factorial = factorial * k
  order = torch.where(torch.isnan(self), self, torch.full_like(self, n + 1))
  return (factorial if n % 2 == 1 else -factorial) * torch.special_zeta(order, self)
def nonzero(self: Tensor) -> Tensor:
  # (of a 0-d tensor, see _ONLY_WHEN) a row without columns if it is nonzero, none otherwise
  return torch.nonzero(self.reshape([1]))[:, 0:0]
def nonzero_static(self: Tensor, size: int, fill_value: int = -1) -> Tensor:
  # the k-th nonzero element (in row-major order) for each row k < size by a one-hot comparison of the running
  # count of nonzeros with k; rows past the count hold fill_value
  rank = self.dim()
  if rank == 0:
    return torch.full([size, 0], fill_value, dtype=4)
  nonzero = self.reshape([-1]) != 0
  order = torch.cumsum(nonzero.to(4), 0) - 1
  match = torch.logical_and(order.unsqueeze(0) == torch.arange(size).unsqueeze(1), nonzero.unsqueeze(0))
  index = torch.sum(match.to(4) * torch.arange(nonzero.size(0)).unsqueeze(0), [1], True)
  coordinates: List[Tensor] = []
  for d in range(rank):
    stride = 1
    for e in range(d + 1, rank):
      stride = stride * self.size(e)
    coordinates.append(torch.remainder(torch.div(index, stride, rounding_mode="floor"), self.size(d)))
  return torch.where(match.any(1, True), torch.cat(coordinates, 1), fill_value)
def median(self: Tensor) -> Tensor:
  flat = self.reshape([-1])
  middle = torch.sort(flat)[0][(flat.size(0) - 1) // 2]
  return torch.where(torch.isnan(flat).any(), torch.full_like(middle, float("nan")), middle)
def std_mean__dim(self: Tensor, dim: Optional[List[int]], unbiased: bool = True,
                  keepdim: bool = False) -> Tuple[Tensor, Tensor]:
  return torch.std(self, dim, unbiased, keepdim), torch.mean(self, dim, keepdim)
def isin__Tensor_Tensor(elements: Tensor, test_elements: Tensor, assume_unique: bool = False,
                        invert: bool = False) -> Tensor:
  found = torch.eq(elements.unsqueeze(-1), test_elements.reshape([-1])).any(-1)
  if invert:
    return torch.logical_not(found)
  return found
def addmv(self: Tensor, mat: Tensor, vec: Tensor, beta: float = 1, alpha: float = 1) -> Tensor:
  product = torch.mv(mat, vec) * alpha
  return torch.where(torch.scalar_tensor(beta) == 0, product, self * beta + product)  # beta = 0 ignores self
def addr(self: Tensor, vec1: Tensor, vec2: Tensor, beta: float = 1, alpha: float = 1) -> Tensor:
  product = torch.outer(vec1, vec2) * alpha
  return torch.where(torch.scalar_tensor(beta) == 0, product, self * beta + product)
def allclose(self: Tensor, other: Tensor, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False) -> bool:
  return bool(torch.isclose(self, other, rtol, atol, equal_nan).all())
def conj(self: Tensor) -> Tensor:
  return self
def conj_physical(self: Tensor) -> Tensor:
  return self
def real(self: Tensor) -> Tensor:
  return self
def isreal(self: Tensor) -> Tensor:
  return torch.ones_like(self, dtype=11)
def isfinite(self: Tensor) -> Tensor:  # (defined, but linalg does not lower it)
  if self.is_floating_point():
    return torch.logical_not(torch.logical_or(torch.isnan(self), torch.isinf(self)))
  return torch.ones_like(self, dtype=11)
def angle(self: Tensor) -> Tensor:
  half_turns = torch.where(self < 0, torch.full_like(self, 3.141592653589793), torch.zeros_like(self))
  return torch.where(torch.isnan(self), self, half_turns)
def dist(self: Tensor, other: Tensor, p: float = 2) -> Tensor:
  return torch.linalg_vector_norm(self - other, p)
def rsub__Tensor(self: Tensor, other: Tensor, alpha: float = 1) -> Tensor:
  return torch.sub(other, self, alpha=alpha)
def linalg_vecdot(x: Tensor, y: Tensor, dim: int = -1) -> Tensor:
  return torch.sum(x * y, [dim])
def diagflat(self: Tensor, offset: int = 0) -> Tensor:
  return torch.diag_embed(self.reshape([-1]), offset)
def diag_embed(self: Tensor, offset: int = 0, dim1: int = -2, dim2: int = -1) -> Tensor:
  # a matrix per row of the last dimension: the row's elements where the column is the row plus offset, indexed
  # by the row (offset >= 0) or the column (offset < 0), the row padded with zeros to the matrix's size
  size = self.size(-1) + (offset if offset >= 0 else -offset)
  rows = torch.arange(size).unsqueeze(-1)
  columns = torch.arange(size)
  padded = self
  if offset != 0:
    padded = torch.cat([self, self.new_zeros(self.shape[:-1] + [size - self.size(-1)])], -1)
  values = padded.unsqueeze(-1) if offset >= 0 else padded.unsqueeze(-2)
  return torch.where(columns - rows == offset, values, torch.zeros_like(values)).movedim([-2, -1], [dim1, dim2])
def diag(self: Tensor, diagonal: int = 0) -> Tensor:  # (of a vector: _ONLY_WHEN; a matrix's is its diagonal)
  return torch.diag_embed(self, diagonal)
def _along(index: Tensor, rank: int, dim: int) -> Tensor:
  return index.reshape([1] * dim + [-1] + [1] * (rank - dim - 1))
def _wrapped(index: Tensor, size: int) -> Tensor:
  return torch.where(index < 0, index + size, index).reshape([-1])
def index_fill__int_Scalar(self: Tensor, dim: int, index: Tensor, value: float) -> Tensor:
  x = self.reshape([1]) if self.dim() == 0 else self
  d = dim + x.dim() if dim < 0 else dim
  hit = torch.eq(torch.arange(x.size(d)).unsqueeze(1), _wrapped(index, x.size(d)).unsqueeze(0)).any(1)
  return torch.where(_along(hit, x.dim(), d), torch.full_like(x, value), x).reshape(self.size())
def index_copy(self: Tensor, dim: int, index: Tensor, source: Tensor) -> Tensor:
  x = self.reshape([1]) if self.dim() == 0 else self
  d = dim + x.dim() if dim < 0 else dim
  src = source.reshape([1]) if source.dim() == 0 else source
  positions = _along(_wrapped(index, x.size(d)), x.dim(), d).expand_as(src)
  return x.scatter(d, positions, src).reshape(self.size())
def index_add(self: Tensor, dim: int, index: Tensor, source: Tensor, alpha: float = 1) -> Tensor:
  x = self.reshape([1]) if self.dim() == 0 else self
  d = dim + x.dim() if dim < 0 else dim
  src = source.reshape([1]) if source.dim() == 0 else source
  positions = _along(_wrapped(index, x.size(d)), x.dim(), d).expand_as(src)
  return x.scatter_add(d, positions, src * alpha).reshape(self.size())
def index_reduce(self: Tensor, dim: int, index: Tensor, source: Tensor, reduce: str,
                 include_self: bool = True) -> Tensor:
  x = self.reshape([1]) if self.dim() == 0 else self
  d = dim + x.dim() if dim < 0 else dim
  src = source.reshape([1]) if source.dim() == 0 else source
  positions = _along(_wrapped(index, x.size(d)), x.dim(), d).expand_as(src)
  return x.scatter_reduce(d, positions, src, reduce, include_self=include_self).reshape(self.size())
def put(self: Tensor, index: Tensor, source: Tensor, accumulate: bool = False) -> Tensor:
  flat = self.reshape([-1])
  positions = _wrapped(index, flat.size(0))
  if accumulate:
    return flat.scatter_add(0, positions, source.reshape([-1])).reshape(self.size())
  return flat.scatter(0, positions, source.reshape([-1])).reshape(self.size())
def searchsorted__Tensor(sorted_sequence: Tensor, self: Tensor, out_int32: bool = False, right: bool = False,
                         side: Optional[str] = None, sorter: Optional[Tensor] = None) -> Tensor:
  boundaries = sorted_sequence
  if sorter is not None:
    boundaries = torch.gather(boundaries, -1, sorter)
  if boundaries.dim() > 1:
    boundaries = boundaries.unsqueeze(-2)
  values = self.unsqueeze(-1)
  if right or (side is not None and side == "right"):
    found = torch.sum(boundaries <= values, [-1])
  else:
    found = torch.sum(boundaries < values, [-1])
  if out_int32:
    return found.to(3)  # torch.int32
  return found
def take_along_dim(self: Tensor, indices: Tensor, dim: Optional[int] = None) -> Tensor:
  if dim is None:
    return torch.gather(self.reshape([-1]), 0, indices.reshape([-1]))
  d = dim + self.dim() if dim < 0 else dim
  index_shape = [indices.size(i) if i == d else max(self.size(i), indices.size(i)) for i in range(self.dim())]
  self_shape = [self.size(i) if i == d else max(self.size(i), indices.size(i)) for i in range(self.dim())]
  return torch.gather(self.expand(self_shape), d, indices.expand(index_shape))
def nanmedian(self: Tensor) -> Tensor:
  flat = self.reshape([-1])
  present = torch.sum(torch.logical_not(torch.isnan(flat)))
  middle = torch.clamp_min(torch.floor_divide(present - 1, 2), 0)
  return torch.index_select(_sorted_nan_last(flat), 0, middle.reshape([1])).reshape([])
def _linspace(start: Tensor, end: Tensor, steps: int) -> Tensor:
  first = start.to(7)  # torch.float64, as ATen computes
  return first + (end.to(7) - first) * torch.arange(steps, dtype=7) / max(steps - 1, 1)
def linspace__Tensor_Tensor(start: Tensor, end: Tensor, steps: int, dtype: Optional[int] = None,
                            layout: Optional[int] = None, device: Optional[Device] = None,
                            pin_memory: Optional[bool] = None) -> Tensor:
  return _linspace(start, end, steps).to(6 if dtype is None else dtype)
def logspace__Tensor_Tensor(start: Tensor, end: Tensor, steps: int, base: float = 10.0, dtype: Optional[int] = None,
                            layout: Optional[int] = None, device: Optional[Device] = None,
                            pin_memory: Optional[bool] = None) -> Tensor:
  return torch.pow(base, _linspace(start, end, steps)).to(6 if dtype is None else dtype)
def logspace(start: float, end: float, steps: int, base: float = 10.0, dtype: Optional[int] = None,
             layout: Optional[int] = None, device: Optional[Device] = None,
             pin_memory: Optional[bool] = None) -> Tensor:
  exponents = _linspace(torch.scalar_tensor(start, dtype=7), torch.scalar_tensor(end, dtype=7), steps)
  return torch.pow(base, exponents).to(6 if dtype is None else dtype)
def fft_fftshift(self: Tensor, dim: Optional[List[int]] = None) -> Tensor:
  if dim is None:
    return torch.roll(self, [size // 2 for size in self.size()], [i for i in range(self.dim())])
  return torch.roll(self, [self.size(d) // 2 for d in dim], dim)
def fft_ifftshift(self: Tensor, dim: Optional[List[int]] = None) -> Tensor:
  if dim is None:
    return torch.roll(self, [(size + 1) // 2 for size in self.size()], [i for i in range(self.dim())])
  return torch.roll(self, [(self.size(d) + 1) // 2 for d in dim], dim)
def kron(self: Tensor, other: Tensor) -> Tensor:
  rank = max(self.dim(), other.dim())
  a = self.reshape([1] * (rank - self.dim()) + self.size())
  b = other.reshape([1] * (rank - other.dim()) + other.size())
  a_shape: List[int] = []
  b_shape: List[int] = []
  result_shape: List[int] = []
  for i in range(rank):
    a_shape.append(a.size(i))
    a_shape.append(1)
    b_shape.append(1)
    b_shape.append(b.size(i))
    result_shape.append(a.size(i) * b.size(i))
  return (a.reshape(a_shape) * b.reshape(b_shape)).reshape(result_shape)
def inner(self: Tensor, other: Tensor) -> Tensor:
  if self.dim() == 0 or other.dim() == 0:
    return self * other
  product = torch.matmul(self.reshape([-1, self.size(-1)]), other.reshape([-1, other.size(-1)]).t())
  return product.reshape(self.size()[:-1] + other.size()[:-1])
def vstack(tensors: List[Tensor]) -> Tensor:
  return torch.cat([torch.atleast_2d(t) for t in tensors], 0)
def dstack(tensors: List[Tensor]) -> Tensor:
  return torch.cat([atleast_3d(t) for t in tensors], 2)
def cartesian_prod(tensors: List[Tensor]) -> Tensor:
  if len(tensors) == 1:
    return tensors[0]
  grids = torch.meshgrid(tensors, indexing="ij")
  return torch.stack([grids[i].reshape([-1]) for i in range(len(tensors))], 1)
def _trapezoids(y: Tensor, x: Tensor, dim: int) -> Tensor:
  d = dim + y.dim() if dim < 0 else dim
  length = y.size(d) - 1
  if x.dim() == 1:
    dx = diff(x, 1, 0).reshape([-1] + [1] * (y.dim() - d - 1))
  else:
    dx = diff(x, 1, dim)
  return (y.narrow(d, 1, length) + y.narrow(d, 0, length)) * dx / 2
def trapezoid__x(y: Tensor, x: Tensor, dim: int = -1) -> Tensor:
  return torch.sum(_trapezoids(y, x, dim), [dim])
def trapz__x(y: Tensor, x: Tensor, dim: int = -1) -> Tensor:
  return torch.sum(_trapezoids(y, x, dim), [dim])
def cumulative_trapezoid__x(y: Tensor, x: Tensor, dim: int = -1) -> Tensor:
  return torch.cumsum(_trapezoids(y, x, dim), dim)
def matrix_power(self: Tensor, n: int) -> Tensor:
  if n == 0:
    return torch.eye(self.size(-1), dtype=self.dtype).expand_as(self).clone()
  result = self
  for _ in range(n - 1):
    result = torch.matmul(result, self)
  return result
def linalg_vander(x: Tensor, N: Optional[int] = None) -> Tensor:
  x = torch.atleast_1d(x).unsqueeze(-1)
  columns = x.size(-2) if N is None else N
  if columns <= 1:
    return torch.ones_like(x).narrow(-1, 0, columns)
  return torch.cat([torch.ones_like(x), torch.cumprod(x.expand(x.size()[:-1] + [columns - 1]), -1)], -1)
def cov(self: Tensor, correction: int = 1, fweights: Optional[Tensor] = None,
        aweights: Optional[Tensor] = None) -> Tensor:
  observations = self.reshape([1, -1]) if self.dim() < 2 else self
  centered = observations - observations.mean([1], True)
  factor = max(observations.size(1) - correction, 0)  # ATen divides by zero too (and warns)
  return (torch.matmul(centered, centered.t()) / factor).squeeze()
def corrcoef(self: Tensor) -> Tensor:
  c = cov(self)
  if c.dim() == 0:
    return c / c
  deviation = torch.sqrt(torch.diagonal(c))
  return torch.clamp(c / deviation.unsqueeze(1) / deviation.unsqueeze(0), -1, 1)
def histc(self: Tensor, bins: int = 100, low: float = 0, high: float = 0) -> Tensor:
  flat = self.reshape([-1])
  first = torch.full([], low, dtype=self.dtype)
  last = torch.full([], high, dtype=self.dtype)
  from_data = first == last
  first = torch.where(from_data, flat.min(), first)
  last = torch.where(from_data, flat.max(), last)
  widened = first == last
  first = torch.where(widened, first - 1, first)
  last = torch.where(widened, last + 1, last)
  inside = torch.logical_and(flat >= first, flat <= last)
  position = torch.clamp_max(((flat - first) * bins / (last - first)).to(4), bins - 1)  # torch.int64
  hits = torch.logical_and(position.unsqueeze(1) == torch.arange(bins), inside.unsqueeze(1))
  return torch.sum(hits, [0]).to(self.dtype)
def _histogramdd(self: Tensor, bins: List[int], bounds: Optional[List[float]], weight: Optional[Tensor],
                 density: bool) -> Tuple[Tensor, List[Tensor]]:
  # points (..., D); per dimension bins[d] equal bins between the bounds (`range`: the points' extremes without
  # one, widened by 0.5 when equal, as ATen's); a point's bin is the count of edges not above it, less one (the last
  # bin holds its upper edge), points outside the bounds count in none
  dims = len(bins)
  points = self.reshape([-1, dims])
  edges: List[Tensor] = []
  inside = torch.ones_like(points.select(1, 0), dtype=11)  # torch.bool
  flat = torch.zeros_like(points.select(1, 0), dtype=4)  # torch.int64
  for d in range(dims):
    values = points.select(1, d)
    if bounds is None:
      first = values.min()
      last = values.max()
    else:
      first = torch.full([], bounds[2 * d], dtype=self.dtype)
      last = torch.full([], bounds[2 * d + 1], dtype=self.dtype)
    widened = first == last
    low = torch.where(widened, first - 0.5, first)
    high = torch.where(widened, last + 0.5, last)
    edge = torch.linspace(low, high, bins[d] + 1).to(self.dtype)
    edges.append(edge)
    inside = torch.logical_and(inside, torch.logical_and(values >= low, values <= high))
    position = torch.clamp_max(torch.sum((values.unsqueeze(1) >= edge).to(4), [1]) - 1, bins[d] - 1)
    flat = flat * bins[d] + torch.clamp_min(position, 0)
  count = 1
  for b in bins:
    count = count * b
  hits = torch.logical_and(flat.unsqueeze(1) == torch.arange(count), inside.unsqueeze(1)).to(self.dtype)
  if weight is not None:
    hits = hits * weight.reshape([-1, 1])
  hist = torch.sum(hits, [0]).reshape(bins)
  if density:
    hist = hist / hist.sum()
    for d in range(dims):
      widths = edges[d][1:] - edges[d][:-1]
      hist = hist / widths.reshape([bins[d] if e == d else 1 for e in range(dims)])
  return hist, edges
def histogramdd(self: Tensor, bins: List[int], bounds: Optional[List[float]] = None, weight: Optional[Tensor] = None,
                density: bool = False) -> Tuple[Tensor, List[Tensor]]:
  return _histogramdd(self, bins, bounds, weight, density)
def histogramdd__int_bins(self: Tensor, bins: int, bounds: Optional[List[float]] = None,
                          weight: Optional[Tensor] = None, density: bool = False) -> Tuple[Tensor, List[Tensor]]:
  return _histogramdd(self, [bins for _ in range(self.size(-1))], bounds, weight, density)
def histogram__bin_ct(self: Tensor, bins: int = 100, bounds: Optional[List[float]] = None,
                      weight: Optional[Tensor] = None, density: bool = False) -> Tuple[Tensor, Tensor]:
  hist, edges = _histogramdd(self.reshape([-1, 1]), [bins], bounds, weight, density)
  return hist, edges[0]
def linalg_matrix_norm__str_ord(self: Tensor, ord: str = "fro", dim: List[int] = [-2, -1], keepdim: bool = False,
                                dtype: Optional[int] = None) -> Tensor:
  if ord == "nuc":
    return _nuclear_norm(self if dtype is None else self.to(dtype), dim, keepdim)
  return torch.linalg_vector_norm(self, 2, dim, keepdim, dtype=dtype)
def squeeze__dims(self: Tensor, dim: List[int]) -> Tensor:
  rank = self.dim()
  shape: List[int] = []
  for i in range(rank):
    squeezed = False
    for d in dim:
      squeezed = squeezed or ((d + rank if d < 0 else d) == i and self.size(i) == 1)
    if not squeezed:
      shape.append(self.size(i))
  return self.reshape(shape)
def lgamma(self: Tensor) -> Tensor:
  x = self.to(7)  # torch.float64: the Lanczos sum (g = 7, n = 9) below is exact to double precision
  reflected = x < 0.5
  z = torch.where(reflected, 1.0 - x, x) - 1.0
  series = 0.99999999999980993 + 676.5203681218851 / (z + 1) - 1259.1392167224028 / (z + 2) + \
      771.32342877765313 / (z + 3) - 176.61502916214059 / (z + 4) + 12.507343278686905 / (z + 5) - \
      0.13857109526572012 / (z + 6) + 9.9843695780195716e-6 / (z + 7) + 1.5056327351493116e-7 / (z + 8)
  t = z + 7.5
  logarithm = 0.9189385332046727 + (z + 0.5) * torch.log(t) - t + torch.log(series)  # 0.918... = log(2 pi) / 2
  # sin in float32 (IREE's CPU runtime has no float64 sin), of x - round(x) where its relative error stays small
  sine = torch.abs(torch.sin(3.141592653589793 * (x - torch.round(x)).to(6))).to(7)
  mirrored = torch.log(3.141592653589793 / sine) - logarithm
  return torch.where(reflected, mirrored, logarithm).to(self.dtype)
def mvlgamma(self: Tensor, p: int) -> Tensor:
  terms = lgamma(self.unsqueeze(-1) - torch.arange(p, dtype=self.dtype) / 2)
  return torch.sum(terms, [-1]) + p * (p - 1) / 4 * 1.1447298858494002  # log(pi)
def log_softmax__int(self: Tensor, dim: int, dtype: int) -> Tensor:  # (given a dtype: see _ONLY_WHEN)
  return torch.log_softmax(self.to(dtype), dim)
def softmax__int(self: Tensor, dim: int, dtype: int) -> Tensor:
  return torch.softmax(self.to(dtype), dim)
def linalg_norm(self: Tensor, ord: Optional[float] = None, dim: Optional[List[int]] = None, keepdim: bool = False,
                dtype: Optional[int] = None) -> Tensor:
  if ord is None:  # the 2-norm of the vector or Frobenius norm of the matrix: the same sum
    return torch.linalg_vector_norm(self, 2, dim, keepdim, dtype=dtype)
  return torch.linalg_vector_norm(self, ord, dim, keepdim, dtype=dtype)
def expand_copy(self: Tensor, size: List[int], implicit: bool = False) -> Tensor:
  return self.expand(size, implicit=implicit).clone()
def diagonal_copy(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
  return torch.diagonal(self, offset, dim1, dim2).clone()
def split_with_sizes_copy(self: Tensor, split_sizes: List[int], dim: int = 0) -> List[Tensor]:
  return torch.split_with_sizes(self, split_sizes, dim)  # views: under value semantics no write tells them apart
def unbind_copy__int(self: Tensor, dim: int = 0) -> List[Tensor]:
  return torch.unbind(self, dim)
def unfold_copy(self: Tensor, dimension: int, size: int, step: int) -> Tensor:
  return self.unfold(dimension, size, step).clone()
def alias_copy(self: Tensor) -> Tensor:
  return self.clone()
def _strided_positions(size: List[int], stride: List[int], storage_offset: Optional[int]) -> Tensor:
  # the flat position in a contiguous storage of each element of the strided view (a program's input is
  # contiguous, see _ONLY_WHEN)
  position = torch.zeros(size, dtype=4)
  if storage_offset is not None:
    position = position + storage_offset
  for k in range(len(size)):
    shape = [1 for _ in size]
    shape[k] = size[k]
    position = position + torch.arange(size[k]).reshape(shape) * stride[k]
  return position
def as_strided(self: Tensor, size: List[int], stride: List[int], storage_offset: Optional[int] = None) -> Tensor:
  return as_strided_copy(self, size, stride, storage_offset)  # (a view nothing writes: see _ONLY_WHEN)
def as_strided_copy(self: Tensor, size: List[int], stride: List[int], storage_offset: Optional[int] = None) -> Tensor:
  position = _strided_positions(size, stride, storage_offset)
  return self.reshape([-1]).index_select(0, position.reshape([-1])).reshape(size)
def t_copy(self: Tensor) -> Tensor:
  return self.t().clone()
def view_copy(self: Tensor, size: List[int]) -> Tensor:
  return self.view(size).clone()
def permute_copy(self: Tensor, dims: List[int]) -> Tensor:
  return self.permute(dims).clone()
def unsqueeze_copy(self: Tensor, dim: int) -> Tensor:
  return self.unsqueeze(dim).clone()
def transpose_copy__int(self: Tensor, dim0: int, dim1: int) -> Tensor:
  return self.transpose(dim0, dim1).clone()
def diagonal_scatter(self: Tensor, src: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
  # each position of the diagonal's plane takes src's element of its row where it is on the diagonal
  plane = self.movedim([dim1, dim2], [-2, -1])
  rows = torch.arange(plane.size(-2)).unsqueeze(-1)
  columns = torch.arange(plane.size(-1))
  first_row = max(-offset, 0)
  along = (rows - first_row).clamp(0, max(src.size(-1) - 1, 0)).reshape([-1])
  chosen = src.index_select(-1, along).unsqueeze(-1)
  return torch.where(columns - rows == offset, chosen, plane).movedim([-2, -1], [dim1, dim2])
def as_strided_scatter(self: Tensor, src: Tensor, size: List[int], stride: List[int],
                       storage_offset: Optional[int] = None) -> Tensor:
  # src's elements written at their flat positions in self's storage (contiguous, see _ONLY_WHEN)
  position = _strided_positions(size, stride, storage_offset)
  flat = self.reshape([-1]).scatter(0, position.reshape([-1]), src.reshape([-1]).to(self.dtype))
  return flat.reshape(self.shape)
def im2col(self: Tensor, kernel_size: List[int], dilation: List[int], padding: List[int],
           stride: List[int]) -> Tensor:
  # each kernel position's strided window of the padded input, one block of rows per channel
  x = torch.constant_pad_nd(self, [padding[1], padding[1], padding[0], padding[0]], 0.0)
  rows = (x.size(-2) - dilation[0] * (kernel_size[0] - 1) - 1) // stride[0] + 1
  columns = (x.size(-1) - dilation[1] * (kernel_size[1] - 1) - 1) // stride[1] + 1
  windows: List[Tensor] = []
  for i in range(kernel_size[0]):
    for j in range(kernel_size[1]):
      top = i * dilation[0]
      left = j * dilation[1]
      windows.append(x[..., top:top + stride[0] * (rows - 1) + 1:stride[0],
                       left:left + stride[1] * (columns - 1) + 1:stride[1]])
  # (sizes, not flatten: torch-mlir views a flattened empty tensor as [0, -1, ...] and divides by its zero size)
  blocks = self.size(-3) * kernel_size[0] * kernel_size[1]
  return torch.stack(windows, -3).reshape(self.shape[:-3] + [blocks, rows * columns])
def col2im(self: Tensor, output_size: List[int], kernel_size: List[int], dilation: List[int], padding: List[int],
           stride: List[int]) -> Tensor:
  # im2col's adjoint: each kernel position's block of rows placed in its strided window of the padded output,
  # the windows summed
  height = output_size[0] + 2 * padding[0]
  width = output_size[1] + 2 * padding[1]
  rows = (height - dilation[0] * (kernel_size[0] - 1) - 1) // stride[0] + 1
  columns = (width - dilation[1] * (kernel_size[1] - 1) - 1) // stride[1] + 1
  positions = kernel_size[0] * kernel_size[1]
  blocks = self.reshape(self.shape[:-2] + [self.size(-2) // positions, positions, rows, columns])
  row_dim = self.dim() - 1  # (the output's and each block's: one more than self's batch and channel dims)
  band = self.new_zeros(self.shape[:-2] + [self.size(-2) // positions, rows, width])
  zeros = self.new_zeros(self.shape[:-2] + [self.size(-2) // positions, height, width])
  windows: List[Tensor] = []
  for i in range(kernel_size[0]):
    for j in range(kernel_size[1]):
      top = i * dilation[0]
      left = j * dilation[1]
      block = blocks.select(row_dim, i * kernel_size[1] + j)
      placed = band.slice_scatter(block, row_dim + 1, left, left + stride[1] * (columns - 1) + 1, stride[1])
      windows.append(zeros.slice_scatter(placed, row_dim, top, top + stride[0] * (rows - 1) + 1, stride[0]))
  out = torch.stack(windows).sum(0)
  return out[..., padding[0]:padding[0] + output_size[0], padding[1]:padding[1] + output_size[1]]
def squeeze_copy(self: Tensor) -> Tensor:
  return self.squeeze().clone()
def squeeze_copy__dim(self: Tensor, dim: int) -> Tensor:
  return self.squeeze(dim).clone()
def squeeze_copy__dims(self: Tensor, dim: List[int]) -> Tensor:
  return squeeze__dims(self, dim).clone()
def clamp_max__Tensor(self: Tensor, max: Tensor) -> Tensor:
  return torch.minimum(self, max)
def clamp_min__Tensor(self: Tensor, min: Tensor) -> Tensor:
  return torch.maximum(self, min)
def tan(self: Tensor) -> Tensor:  # (float32: _ONLY_WHEN) reduced by pi/2 in three parts (Cody and Waite's)
  k = torch.round(self * 0.6366197723675814)
  r = self - k * 1.5703125 - k * 4.837512969970703e-4 - k * 7.549789954891882e-8  # |r| <= pi/4
  z = r * r  # sine and cosine of r by their Taylor series, to the terms below float32's precision there
  sine = r * (1.0 + z * (-1.0 / 6 + z * (1.0 / 120 + z * (-1.0 / 5040 + z * (1.0 / 362880 - z / 39916800)))))
  cosine = 1.0 + z * (-0.5 + z * (1.0 / 24 + z * (-1.0 / 720 + z * (1.0 / 40320 + z * (-1.0 / 3628800 +
                                                                                      z / 479001600)))))
  odd = k - 2.0 * torch.floor(k * 0.5) == 1.0  # (torch-mlir's StableHLO remainder of a negative k is negative)
  return torch.where(odd, -cosine / sine, sine / cosine)
def log10(self: Tensor) -> Tensor:  # (defined, but IREE's CPU backend has no log10f)
  return torch.log(self) * 0.43429448190325176  # 1 / log(10)
def _signbit(self: Tensor) -> Tensor:  # (-0.0 is negative: its reciprocal is -inf; a NaN's sign is not seen)
  return torch.where(self == 0, torch.reciprocal(self) < 0, self < 0)
def signbit(self: Tensor) -> Tensor:
  return _signbit(self)
def copysign__Tensor(self: Tensor, other: Tensor) -> Tensor:
  magnitude = torch.abs(self)
  return torch.where(_signbit(other), -magnitude, magnitude)
def logsumexp(self: Tensor, dim: List[int], keepdim: bool = False) -> Tensor:  # (of a 0-d tensor: _ONLY_WHEN)
  return self.clone()  # ATen's max + log(sum(exp(x - max))) is x itself, infinities included
def argmin(self: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:  # (dim None: _ONLY_WHEN)
  if keepdim:
    return torch.argmin(self.reshape([-1]), 0).reshape([1] * self.dim())
  return torch.argmin(self.reshape([-1]), 0)
def argmax(self: Tensor, dim: Optional[int] = None, keepdim: bool = False) -> Tensor:
  if keepdim:
    return torch.argmax(self.reshape([-1]), 0).reshape([1] * self.dim())
  return torch.argmax(self.reshape([-1]), 0)
def vsplit__int(self: Tensor, sections: int) -> List[Tensor]:
  return torch.split(self, self.size(0) // sections, 0)
def hsplit__int(self: Tensor, sections: int) -> List[Tensor]:
  dim = 0 if self.dim() == 1 else 1
  return torch.split(self, self.size(dim) // sections, dim)
def dsplit__int(self: Tensor, sections: int) -> List[Tensor]:
  return torch.split(self, self.size(2) // sections, 2)
def nll_loss_nd(self: Tensor, target: Tensor, weight: Optional[Tensor] = None, reduction: int = 1,
                ignore_index: int = -100) -> Tensor:
  if self.dim() <= 2:
    return torch.nll_loss_forward(self, target, weight, reduction, ignore_index)[0]
  order = [0] + [d for d in range(2, self.dim())] + [1]  # the class dimension last
  flat = self.permute(order).reshape([-1, self.size(1)])
  loss = torch.nll_loss_forward(flat, target.reshape([-1]), weight, reduction, ignore_index)[0]
  if reduction == 0:
    return loss.reshape(target.size())
  return loss
def _lu_diagonal(A: Tensor) -> Tuple[Tensor, Tensor]:
  # U's diagonal (..., n) of the LU factorization with partial pivoting (as LAPACK's getrf) and the sign of its row
  # permutation (...): Gaussian elimination, one step per column (unrolled over the static size, see _ONLY_WHEN)
  n = A.size(-1)
  index = torch.arange(n)
  rows = index.unsqueeze(-1)
  a = A
  sign = torch.ones_like(A.sum([-2, -1]))
  diagonal = torch.zeros_like(A.sum([-1]))
  for k in range(n):
    candidates = torch.where(rows >= k, torch.abs(a.narrow(-1, k, 1)), torch.full_like(a.narrow(-1, k, 1), -1.0))
    p = torch.argmax(candidates, -2, True)
    row_k = a.narrow(-2, k, 1)
    row_p = torch.gather(a, -2, p.expand(row_k.size()))
    a = torch.where(rows == k, row_p, torch.where(rows == p, row_k, a))
    sign = torch.where(p.reshape(sign.size()) != k, -sign, sign)
    pivot = row_p.narrow(-1, k, 1)
    diagonal = torch.where(index == k, pivot.squeeze(-1), diagonal)
    column = a.narrow(-1, k, 1)
    factors = torch.where(pivot == 0, torch.zeros_like(column), column / pivot)
    a = torch.where(rows > k, a - factors * row_p, a)
  return diagonal, sign
def det(self: Tensor) -> Tensor:
  diagonal, sign = _lu_diagonal(self)
  return sign * torch.prod(diagonal, -1)
def linalg_det(A: Tensor) -> Tensor:
  return det(A)
def linalg_slogdet(A: Tensor) -> Tuple[Tensor, Tensor]:
  diagonal, sign = _lu_diagonal(A)
  return sign * torch.prod(torch.sign(diagonal), -1), torch.sum(torch.log(torch.abs(diagonal)), [-1])
def logdet(self: Tensor) -> Tensor:
  sign, logabsdet = linalg_slogdet(self)
  return torch.where(sign < 0, torch.full_like(logabsdet, float("nan")), logabsdet)
def erfinv(self: Tensor) -> Tensor:  # (defined, but no backend lowers it): M. Giles' single-precision rational
  # approximation ("Approximating the erfinv function", 2010), within 5e-7 of ATen's in float32 on (-1, 1)
  w = -torch.log((1 - self) * (1 + self))
  central = w - 2.5
  p = 2.81022636e-08 * central + 3.43273939e-07
  p = ((p * central - 3.5233877e-06) * central - 4.39150654e-06) * central + 0.00021858087
  p = ((p * central - 0.00125372503) * central - 0.00417768164) * central + 0.246640727
  p = p * central + 1.50140941
  tail = torch.sqrt(w) - 3.0
  q = -0.000200214257 * tail + 0.000100950558
  q = ((q * tail + 0.00134934322) * tail - 0.00367342844) * tail + 0.00573950773
  q = ((q * tail - 0.0076224613) * tail + 0.00943887047) * tail + 1.00167406
  q = q * tail + 2.83297682
  result = torch.where(w < 5.0, p, q) * self
  return torch.where(torch.abs(self) == 1, self * float("inf"), result)
def feature_dropout(input: Tensor, p: float, train: bool) -> Tensor:
  return input
def alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
  return input
def feature_alpha_dropout(input: Tensor, p: float, train: bool) -> Tensor:
  return input
""" + special_functions.SPECIAL_FUNCTIONS + linear_algebra.LINEAR_ALGEBRA + spectral.SPECTRAL + \
    incomplete_gamma.INCOMPLETE_GAMMA + fourier.FOURIER + floating_point.FLOATING_POINT + sampling.SAMPLING + \
    order_statistics.ORDER_STATISTICS + grid_sampling.GRID_SAMPLING

# operators whose names begin with an underscore (the table's other such names are helpers)
_OPERATORS_NAMED_PRIVATE = linear_algebra.OPERATORS_NAMED_PRIVATE | {
    "_chunk_cat", "_unsafe_masked_index", "_unsafe_masked_index_put_accumulate", "_upsample_nearest_exact1d__vec",
    "_upsample_nearest_exact2d__vec", "_upsample_nearest_exact3d__vec"}

_MOST_COMPARISONS = 1 << 20  # max_unpool as a one-hot comparison of at most this many pairs per plane
_MOST_WINDOWS = 16  # adaptive pooling decomposed into at most this many windows (each one its own slice and mean)

# operator -> the condition on its constant arguments under which the decomposition holds (by argument position)
_ONLY_WHEN = {
    "instance_norm": lambda node: _is_constant(node, 1, None) or _is_constant(node, 2, None) or
    _is_constant(node, 5, False),
    "cross_entropy_loss": lambda node: not _is_constant(node, 5, 0.0) and _is_constant(node, 2, None),
    "adaptive_avg_pool1d": lambda node: _constant_ints(node, 1) in [[n] for n in range(2, _MOST_WINDOWS + 1)],
    "adaptive_avg_pool2d": lambda node: _uneven_windows(node),
    "adaptive_max_pool1d": lambda node: _uneven_windows(node),
    "adaptive_max_pool2d": lambda node: _uneven_windows(node),
    # bilinear or nearest, with zeros or border padding (not reflection, not bicubic); torch-mlir's own lowering
    # of grid_sampler (F.grid_sample) gives wrong values
    "grid_sampler_2d": lambda node: _grid_sampler_modes(node),
    "grid_sampler_3d": lambda node: _grid_sampler_modes(node),
    "grid_sampler": lambda node: (_has_rank(node, 0, 4) or _has_rank(node, 0, 5)) and _grid_sampler_modes(node),
    # (a negative amount cuts: _padded's positions then start or end inside the input, as ATen's do)
    "pad": lambda node: _is_constant_where(node, 2, lambda mode: mode == "circular") and _is_constant_list(node, 1, 6)
    or _is_constant_where(node, 2, lambda mode: mode in ("reflect", "replicate")) and
    len(_constant_ints(node, 1) or [0] * 7) <= 6,
    "poisson_nll_loss": lambda node: _is_constant(node, 3, True),  # (torch-mlir's is "backend illegal" with full)
    "diff": lambda node: _is_constant(node, 1, 0) or _is_constant(node, 1, 1),  # a loop over n would change shapes
    # in training it draws a random mask, unless p is 0 (ATen then returns the input)
    "feature_dropout": lambda node: _is_constant(node, 2, False) or _is_constant(node, 1, 0.0),
    "alpha_dropout": lambda node: _is_constant(node, 2, False) or _is_constant(node, 1, 0.0),
    "feature_alpha_dropout": lambda node: _is_constant(node, 2, False) or _is_constant(node, 1, 0.0),
    # torch-mlir's copysign and signbit view floats as integers (`aten.view.dtype`), which linalg leaves as an
    # illegal `torch.constant.int`: the sign is read by comparisons instead (of floating tensors, see _signbit);
    # logsumexp of a 0-d tensor and argmin/argmax over all elements are "backend illegal" in torch-mlir
    "copysign__Tensor": lambda node: _has_dtype(node, 0, _FLOATING_DTYPES) and _has_dtype(node, 1, _FLOATING_DTYPES),
    "signbit": lambda node: _has_dtype(node, 0, _FLOATING_DTYPES),
    "logsumexp": lambda node: _has_rank(node, 0, 0),
    # (torch-mlir's own lowering, a tm_tensor.topk, has a region IREE rejects: "region block must end with a
    # linalg_ext.yield i1")
    "kthvalue": lambda node: _has_dtype(node, 0, _REAL_DTYPES - {torch.bool}),
    "diag": lambda node: _has_rank(node, 0, 1),
    "logcumsumexp": lambda node: _has_dtype(node, 0, _FLOATING_DTYPES),
    "argmin": lambda node: _is_constant(node, 1, None),
    "argmax": lambda node: _is_constant(node, 1, None),
    "squeeze_copy__dims": lambda node: _constant_ints(node, 1) is not None,
    # histograms of points whose count and dimensions the types state, into bins the program gives as constants
    "histogramdd": lambda node: _has_static_sizes(node, 0, _FLOATING_DTYPES) and _constant_ints(node, 1) is not None,
    "histogramdd__int_bins": lambda node: _has_static_sizes(node, 0, _FLOATING_DTYPES) and _is_constant_where(
        node, 1, lambda bins: True),
    "histogram__bin_ct": lambda node: (_has_static_sizes(node, 0, _FLOATING_DTYPES) or _has_rank(node, 0, 0)) and
    _is_constant_where(node, 1, lambda bins: True),
    # (its loops over the length and the count of elements drawn unroll only when both are known)
    "combinations": lambda node: _has_static_sizes(node, 0, _REAL_DTYPES) and _is_constant_where(
        node, 1, lambda r: True),
    **{name: lambda node: _is_constant_where(node, 0, lambda n: n >= 1) and _has_dtype(node, 1, _FLOATING_DTYPES)
       for name in ("polygamma", "special_polygamma")},
    "nonzero": lambda node: _has_rank(node, 0, 0),  # (torch-mlir's own of a 0-d tensor crashes the process)
    "nonzero_static": lambda node: _has_static_sizes(node, 0, _REAL_DTYPES) or _has_rank(node, 0, 0),
    # segments along axis 0 given by 1-D lengths or offsets (not by indices)
    "segment_reduce": lambda node: _is_constant_where(node, 1, lambda r: r in ("sum", "mean", "max", "min", "prod"))
    and _is_constant(node, 3, None) and _is_constant(node, 5, 0) and (
        _has_rank(node, 2, 1) if _is_constant(node, 4, None) else _has_rank(node, 4, 1)),
    # a list of indices as long as the type states (a 0-d tensor, a count of sections, makes as many pieces as its
    # value says: a list whose length is data)
    "tensor_split__tensor_indices_or_sections": lambda node: _has_rank(node, 1, 1) and _has_static_sizes(
        node, 1, frozenset({torch.int64})),
    # as_strided reads the storage: a contiguous one, which a program's input is (as IREE passes it) and an
    # intermediate tensor need not be (a transpose's view)
    "as_strided_copy": lambda node: _reads_contiguous_storage(node),
    # (resize_as_ once remove_mutation made it out of place) an input's storage, or a copy of it, no smaller than
    # the template (a larger one's new elements are uninitialized memory), in contiguous order
    "resize_as": lambda node: _is_constant(node, 2, None) and _is_input_storage(node.inputs[0]) and _numel(
        node.inputs[0]) is not None and _numel(node.inputs[1]) is not None and _numel(node.inputs[0]) >= _numel(
        node.inputs[1]),
    "as_strided_scatter": lambda node: _reads_contiguous_storage(node, 2),
    # a one-hot comparison of every value's position with every output position (at most _MOST_COMPARISONS)
    "max_unpool2d": lambda node: _is_small_unpool(node, 2),
    "gradient__scalarint": lambda node: _has_static_sizes(node, 0, _FLOATING_DTYPES),  # (of integers: floats)
    "gradient__scalararray": lambda node: _has_static_sizes(node, 0, _FLOATING_DTYPES),
    "max_unpool3d": lambda node: _is_small_unpool(node, 3),
    # the view as a copy, when nothing writes to it or to the viewed input (a write would show through the view)
    "as_strided": lambda node: _reads_contiguous_storage(node) and not _is_written(node.inputs[0]) and
    not _is_written(node.outputs[0]),
    # LU with partial pivoting by a loop over the columns: of real matrices whose sizes the types state
    "det": lambda node: _has_static_real_matrix(node, 0),
    "linalg_det": lambda node: _has_static_real_matrix(node, 0),
    "linalg_slogdet": lambda node: _has_static_real_matrix(node, 0),
    "logdet": lambda node: _has_static_real_matrix(node, 0),
    "conj": lambda node: _has_dtype(node, 0, _REAL_DTYPES),  # (conjugation and parts of complex tensors differ)
    "conj_physical": lambda node: _has_dtype(node, 0, _REAL_DTYPES),
    "real": lambda node: _has_dtype(node, 0, _REAL_DTYPES),
    "isreal": lambda node: _has_dtype(node, 0, _REAL_DTYPES),
    "isfinite": lambda node: _has_dtype(node, 0, _REAL_DTYPES),
    "angle": lambda node: _has_dtype(node, 0, _FLOATING_DTYPES),  # of an integer tensor: a float tensor
    "linalg_vecdot": lambda node: _has_dtype(node, 0, _REAL_DTYPES),
    "lgamma": lambda node: _has_dtype(node, 0, _FLOATING_DTYPES),
    # IREE's tanf reduces its argument by pi/2 rounded to float: near a pole (cos x ~ 1e-4) a quarter of the
    # digits go (op_db's tan of -1.5706: -6326.25, eager -6328.0); its sinf and cosf lose relative precision
    # near 0, so the reduced argument's tangent is computed by series
    "tan": lambda node: _has_dtype(node, 0, frozenset({torch.float32})),
    # (without padding; an average pool only without ceil_mode, whose last window ATen averages over less)
    **{f"max_pool{n}d{indices}": lambda node: _pool_to_fit(node, 4, 5) for n in (1, 2, 3)
       for indices in ("", "_with_indices")},
    **{f"avg_pool{n}d": lambda node: _is_constant(node, 4, False) and _pool_to_fit(node, None, 4) for n in (1, 2, 3)},
    "erfinv": lambda node: _has_dtype(node, 0, _SINGLE_PRECISION),
    "mvlgamma": lambda node: _has_dtype(node, 0, _FLOATING_DTYPES),
    "matrix_power": lambda node: _is_constant_where(node, 1, lambda n: n >= 0),  # a negative power inverts
    "cov": lambda node: _is_constant(node, 2, None) and _is_constant(node, 3, None),  # without weights
    "linalg_matrix_norm__str_ord": lambda node: _is_constant(node, 1, "fro") or (  # "nuc": spectral.py
        _is_constant(node, 1, "nuc") and _has_static_matrix(node, 0, _SPECTRAL_DTYPES)),
    "linalg_norm": lambda node: _is_constant(node, 1, None) or _is_constant_where(  # a vector norm
        node, 2, lambda dim: dim is not None and len(dim) == 1),
    "log_softmax__int": lambda node: _is_constant_where(node, 2, lambda dtype: dtype is not None),  # (else lowered)
    "softmax__int": lambda node: _is_constant_where(node, 2, lambda dtype: dtype is not None),
    **{name: lambda node: _has_dtype(node, 0, _FLOATING_DTYPES) for name in special_functions.FLOATING_ONLY},
    **{name: lambda node: _has_dtype(node, 0, _FLOATING_DTYPES) for name in floating_point.FLOATING_ONLY},
    **{name: lambda node: _has_dtype(node, 0, _SPECTRAL_DTYPES) and _has_dtype(node, 1, frozenset(
        {node.inputs[0].type.dtype})) for name in floating_point.OF_LIKE_FLOATS},
    **{name: lambda node: _has_dtype(node, 0, _SINGLE_PRECISION) for name in special_functions.SINGLE_PRECISION_ONLY},
    "special_zeta": lambda node: _has_dtype(node, 0, _FLOATING_DTYPES) and _has_dtype(  # (the result's dtype is
        node, 1, frozenset({node.inputs[0].type.dtype})),                               # the first argument's)
    **{name: lambda node: _has_dtype(node, 0, _FLOATING_DTYPES) and _has_dtype(node, 1, frozenset(
        {node.inputs[0].type.dtype})) for name in ("igamma", "igammac")},
    # factorizations unrolled over the static sizes (linear_algebra.py), LU with partial pivoting only
    **{name: lambda node, index=index: _has_static_real_matrix(node, index)
       for name, index in linear_algebra.STATIC_MATRIX_ARGUMENT.items()},
    **{name: lambda node: _has_static_real_matrix(node, 0) and _is_constant(node, 1, True)
       for name in ("linalg_lu_factor_ex", "linalg_lu_factor", "_lu_with_info", "linalg_lu")},
    "linalg_qr": lambda node: _has_static_real_matrix(node, 0) and _is_constant_where(  # (mode "r": Q is empty)
        node, 1, lambda mode: mode in ("reduced", "complete")),
    "linalg_lstsq": lambda node: _has_static_real_matrix(node, 0) and _is_constant(node, 3, "gels"),
    "linalg_tensorsolve": lambda node: _has_static_real_matrix(node, 0) and _is_constant(node, 2, None),
    # cyclic Jacobi over the static sizes (spectral.py), in single or double precision (its tolerances' epsilon);
    # U and V of full_matrices only when they are square
    **{name: lambda node, index=index: _has_static_matrix(node, index, _SPECTRAL_DTYPES)
       for name, index in spectral.STATIC_MATRIX_ARGUMENT.items()},
    "linalg_cond__p_str": lambda node: _has_static_matrix(node, 0, _SPECTRAL_DTYPES) and _is_constant(node, 1, "fro"),
    "svd": lambda node: _has_static_matrix(node, 0, _SPECTRAL_DTYPES) and (
        _is_constant(node, 1, True) or _is_square(node, 0)),
    "linalg_svd": lambda node: _has_static_matrix(node, 0, _SPECTRAL_DTYPES) and (
        _is_constant(node, 1, False) or _is_square(node, 0)),
    "scaled_dot_product_attention": lambda node: _is_constant(node, 4, 0.0) and _is_constant(node, 7, False),
    # DFTs as products with tables of the static lengths (fourier.py), of real inputs
    **{name: lambda node: _has_static_sizes(node, 0, _SPECTRAL_DTYPES) for name in fourier.TRANSFORMS},
    **{name: lambda node: _has_static_sizes(node, 0, _SPECTRAL_DTYPES | _COMPLEX_DTYPES)
       for name in fourier.OF_COMPLEX_INPUTS},
    **{name: lambda node, index=index: _is_constant(node, index, None)  # (sampling.py: the backends' own seed)
       for name, index in sampling.GENERATOR_ARGUMENT.items()},
}


def _is_constant(node: Node, index: int, expected) -> bool:
    return _is_constant_where(node, index, lambda value: value == expected)


def _is_constant_where(node: Node, index: int, condition) -> bool:
    value = node.inputs[index]
    return value.node.kind is prim.Constant and condition(constant_value(value.node))


_FLOATING_DTYPES = frozenset({torch.float16, torch.bfloat16, torch.float32, torch.float64})
_SINGLE_PRECISION = frozenset({torch.float16, torch.bfloat16, torch.float32})
_SPECTRAL_DTYPES = frozenset({torch.float32, torch.float64})
_COMPLEX_DTYPES = frozenset({torch.complex64, torch.complex128})
_REAL_DTYPES = _FLOATING_DTYPES | {torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64}


def _is_small_unpool(node: Node, rank: int) -> bool:
    """Whether a max_unpool's input and output sizes are static (the output size need not be a constant yet:
    F.max_unpool computes it in loops that unroll later), the values per plane times the positions per plane at
    most _MOST_COMPARISONS."""
    sizes = getattr(node.inputs[0].type, "sizes", None)
    output_sizes = getattr(node.outputs[0].type, "sizes", None)
    if not sizes or not output_sizes or None in sizes[-rank:] or None in output_sizes[-rank:]:
        return False
    return math.prod(sizes[-rank:]) * math.prod(output_sizes[-rank:]) <= _MOST_COMPARISONS


def _reads_contiguous_storage(node: Node, sizes: int = 1) -> bool:
    """Whether an as_strided's input is a program input and its sizes and strides (arguments `sizes` and the next)
    are constants."""
    return node.inputs[0].node.kind is prim.Param and _constant_ints(node, sizes) is not None and \
        _constant_ints(node, sizes + 1) is not None


def _is_input_storage(value: Value) -> bool:
    """Whether the tensor is a program input (contiguous, as IREE passes it) or a clone of one."""
    if value.node.kind is aten.clone:
        value = value.node.inputs[0]
    return value.node.kind is prim.Param


def _numel(value: Value) -> int | None:
    """The tensor's element count if its type states its sizes."""
    sizes = getattr(value.type, "sizes", None)
    return math.prod(sizes) if sizes is not None and all(s is not None for s in sizes) else None


def _is_written(value: Value) -> bool:
    """Whether an operator writes to the value in place (its schema marks the argument written)."""
    for use in value.uses:
        schema = use.user.maybe_schema() if use.user.kind.ns == "aten" else None
        argument = schema.arguments[use.offset] if schema is not None and use.offset < len(schema.arguments) else None
        if argument is not None and argument.alias_info is not None and argument.alias_info.is_write:
            return True
    return False


def _has_dtype(node: Node, index: int, dtypes: frozenset) -> bool:
    """Whether the argument's type states a dtype among `dtypes` (an unrefined tensor says nothing)."""
    return getattr(node.inputs[index].type, "dtype", None) in dtypes


def _has_rank(node: Node, index: int, rank: int) -> bool:
    """Whether the argument's type states this rank."""
    type_ = node.inputs[index].type
    return isinstance(type_, ts.TensorType) and type_.rank == rank


def _has_static_real_matrix(node: Node, index: int) -> bool:
    """Whether the argument is a floating tensor of rank at least 2 whose sizes the type states."""
    return _has_static_matrix(node, index, _FLOATING_DTYPES)


def _has_static_matrix(node: Node, index: int, dtypes: frozenset) -> bool:
    """Whether the argument is a tensor of a dtype among `dtypes`, of rank at least 2, whose sizes the type
    states."""
    return _has_static_sizes(node, index, dtypes) and len(node.inputs[index].type.sizes) >= 2


def _has_static_sizes(node: Node, index: int, dtypes: frozenset) -> bool:
    """Whether the argument is a tensor of a dtype among `dtypes`, of rank at least 1, whose sizes the type
    states."""
    type_ = node.inputs[index].type
    return _has_dtype(node, index, dtypes) and bool(type_.sizes) and all(size is not None for size in type_.sizes)


def _is_square(node: Node, index: int) -> bool:
    """Whether the argument's type states equal sizes of its last two dimensions."""
    sizes = node.inputs[index].type.sizes
    return sizes[-1] == sizes[-2]


def _pool_to_fit(node: Node, dilation_index: int | None, ceil_index: int) -> bool:
    """Whether a pool without padding, of constant settings and known sizes, has ceil_mode or reads an input
    extent other than the input's (see _POOLS)."""
    kernel, stride, padding = (_constant_ints(node, i) for i in (1, 2, 3))
    dilation = [1] if dilation_index is None else _constant_ints(node, dilation_index)
    sizes = getattr(node.inputs[0].type, "sizes", None)
    ceil = node.inputs[ceil_index]
    if None in (kernel, stride, padding, dilation) or any(padding) or sizes is None or not kernel or \
            ceil.node.kind is not prim.Constant or None in sizes[len(sizes) - len(kernel):]:
        return False
    ceil_mode = constant_value(ceil.node)
    return ceil_mode or any(
        _pool_extent(size, _setting(kernel, i, 1), _setting(stride, i, None), _setting(dilation, i, 1), ceil_mode)
        != size for i, size in enumerate(sizes[len(sizes) - len(kernel):]))


def _setting(values: list, i: int, default):
    return (values[i] if len(values) > i else values[0]) if values else default


def _pool_extent(size: int, kernel: int, stride: int | None, dilation: int, ceil_mode: bool) -> int:
    """The input extent a pool's windows read (ATen's output size, from the first window's start to the last's
    end)."""
    stride = stride or kernel
    span = size - dilation * (kernel - 1) - 1
    count = (span + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (count - 1) * stride >= size:
        count -= 1
    return (count - 1) * stride + dilation * (kernel - 1) + 1


def _grid_sampler_modes(node: Node) -> bool:
    """Whether grid sampling is bilinear or nearest (constant 0 or 1) with zeros or border padding (0 or 1)."""
    return _is_constant_where(node, 2, lambda mode: mode in (0, 1)) and \
        _is_constant_where(node, 3, lambda mode: mode in (0, 1))


def _uneven_windows(node: Node) -> bool:
    """Whether an adaptive pool to constant sizes (at most _MOST_WINDOWS each) has a size that does not divide
    the input's (known) one: windows of different lengths, which torch-mlir's fixed-kernel pools cannot express."""
    outputs = _constant_ints(node, 1)
    sizes = getattr(node.inputs[0].type, "sizes", None)
    if outputs is None or sizes is None or len(sizes) < len(outputs) or not all(
            0 < n <= _MOST_WINDOWS for n in outputs):
        return False
    inputs = sizes[len(sizes) - len(outputs):]
    return None not in inputs and any(size % n for size, n in zip(inputs, outputs))


def _is_constant_list(node: Node, index: int, longest: int) -> bool:
    """Whether the argument is a list of at most `longest` non-negative constants (a constant or a literal)."""
    numbers = _constant_ints(node, index)
    return numbers is not None and len(numbers) <= longest and all(n >= 0 for n in numbers)


def _constant_ints(node: Node, index: int) -> list | None:
    """The argument's value if it is a constant list or a list literal of constants, else None."""
    value = node.inputs[index]
    if value.node.kind is prim.Constant:
        constant = constant_value(value.node)
        return list(constant) if isinstance(constant, list | tuple) else None  # (None for an absent int[]?)
    if value.node.kind is prim.ListConstruct and all(v.node.kind is prim.Constant for v in value.node.inputs):
        return [constant_value(v.node) for v in value.node.inputs]
    return None


def decompose_unknown_operators(graph: Graph) -> bool:
    """Replace each node of an operator in DECOMPOSITIONS (matched by schema, name and overload) by the body of
    its decomposition, inlined; and so the operators that body calls (diag of a vector is diag_embed, which
    is a where moved by movedim), but none inside its own decomposition, and at most _MOST_NESTED deep."""
    found = [(n, name, ()) for n in graph.all_nodes() if (name := _decomposition_of(n)) is not None and
             log.opt_allowed()]
    changed = bool(found)
    while found:
        node, name, outer = found.pop()
        before = node.prev
        with graph.insert_point_guard(node):
            outputs = insert_graph(graph, _graphs()[name], list(node.inputs))
        for old, new in zip(node.outputs, _results(graph, node, outputs)):
            if new not in node.inputs:  # (an identity's result is its input, whose type is its own: `real` of a
                new.set_type(old.type)  # real tensor in an untaken branch was typed Tensor, unrefined)
            old.replace_all_uses_with(new)
        inserted = _nodes_between(before, node)
        node.destroy()
        if len(outer) < _MOST_NESTED:
            found += [(n, inner, (*outer, name)) for n in inserted if (inner := _decomposition_of(n)) is not None
                      and inner not in (*outer, name) and log.opt_allowed()]
    return changed


_MOST_NESTED = 4


def _nodes_between(first: Node, last: Node) -> list[Node]:
    """The nodes after `first` and before `last` in their block, and the nodes nested in them."""
    nodes = []
    node = first.next
    while node is not last:
        nodes.append(node)
        nodes += [inner for block in node.blocks for inner in block.all_nodes()]
        node = node.next
    return nodes


def _results(graph: Graph, node: Node, outputs: list) -> list:
    """The decomposition's results as the node's outputs: a tuple it returns is unpacked for a multi-result op."""
    if len(node.outputs) == 1:
        return outputs
    unpack = graph.create(prim.TupleUnpack, [outputs[0]], num_outputs=len(node.outputs))
    with graph.insert_point_guard(node):
        return list(graph.insert_node(unpack).outputs)


def _decomposition_of(node: Node) -> str | None:
    """The name of the node's decomposition (`name` or `name__overload`), if it has one for its arguments."""
    if node.kind.ns != "aten" or node.kind.name not in _defined_operators():
        return None
    schema = node.maybe_schema()
    if schema is None:
        return None
    name = schema.name.split("::")[-1] + (f"__{schema.overload_name}" if schema.overload_name else "")
    when = _ONLY_WHEN.get(name)
    if name not in _defined() or (when is not None and not when(node)):
        return None
    return name


@functools.cache
def _defined() -> frozenset[str]:
    """The overloads the table defines (`name` or `name__overload`), read from the source without compiling it;
    `_helpers` are not operators, except the few operators whose names begin with an underscore
    (linear_algebra.OPERATORS_NAMED_PRIVATE)."""
    return frozenset(n for n in re.findall(r"^def (\w+)", DECOMPOSITIONS, re.MULTILINE)
                     if not n.startswith("_") or n in _OPERATORS_NAMED_PRIVATE)


@functools.cache
def _defined_operators() -> frozenset[str]:
    """The operator names of the overloads the table defines (`squeeze` for `squeeze__dims`)."""
    return frozenset(n.split("__")[0] for n in _defined())


@functools.cache
def _graphs() -> dict[str, Graph]:
    """Every decomposition compiled by tsjit's frontend, helpers inlined (compiled on the first use)."""
    compiled = {}
    for function in compile_source(DECOMPOSITIONS, NativeResolver(), prefix="tsjit.mlir.decompositions"):
        function.ensure_defined()
        graph = function.graph.copy()
        inline_calls(graph)
        compiled[function.qualname.rsplit(".", 1)[-1]] = graph
    return compiled
