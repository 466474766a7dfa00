"""Shape and dtype rules of the neural-network operators: matmul and linear, convolution, pooling,
normalization, attention (the table and its conventions are in shape_rules.py; these register into it)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import torch

from tsjit.ir import types as T
from tsjit.passes.shape_rules import (
    AbstractTensor,
    Decline,
    Sizes,
    broadcast,
    contiguous_rule,
    dtype_argument,
    known_bool,
    like,
    need,
    need_floating,
    numel,
    result_type,
    rule,
    same_size,
    tensor,
    wrap_dim,
)


def _same_dtypes(*tensors: AbstractTensor | None) -> torch.dtype:
    """Matrix products and convolutions take one dtype (floating, for the rules); where the dtypes differ, what
    the meta kernels say varies by operator, so they decide."""
    present = [t for t in tensors if t is not None]
    need_floating(*present)
    if len({t.dtype for t in present}) != 1:
        raise Decline
    return present[0].dtype


def _contract(a: int | None, b: int | None) -> None:
    need(same_size(a, b), "mat1 and mat2 shapes cannot be multiplied")


# ---- matrix products ---------------------------------------------------------------------------------------
@contiguous_rule("aten::mm")
def _mm(self: AbstractTensor, mat2: AbstractTensor) -> T.TensorType:
    need(len(self.sizes) == 2 and len(mat2.sizes) == 2, "mm expects 2-D tensors")
    _contract(self.sizes[1], mat2.sizes[0])
    return tensor(_same_dtypes(self, mat2), (self.sizes[0], mat2.sizes[1]))


@contiguous_rule("aten::bmm")
def _bmm(self: AbstractTensor, mat2: AbstractTensor) -> T.TensorType:
    need(len(self.sizes) == 3 and len(mat2.sizes) == 3, "bmm expects 3-D tensors")
    need(same_size(self.sizes[0], mat2.sizes[0]), "bmm: batch sizes differ")
    _contract(self.sizes[2], mat2.sizes[1])
    batch = self.sizes[0] if self.sizes[0] is not None else mat2.sizes[0]
    return tensor(_same_dtypes(self, mat2), (batch, self.sizes[1], mat2.sizes[2]))


def _added(self: AbstractTensor, product: T.TensorType) -> T.TensorType:
    """`addmm`/`baddbmm`: `self` broadcasts to the product's shape."""
    assert product.sizes is not None and product.dtype is not None
    need(self.dtype == product.dtype, "expected self and the product to have the same dtype")
    shape = broadcast(self.sizes, product.sizes)
    need(len(shape) == len(product.sizes), "self does not broadcast to the product")
    return product


@contiguous_rule("aten::addmm")
def _addmm(self: AbstractTensor, mat1: AbstractTensor, mat2: AbstractTensor, *scales: Any) -> T.TensorType:
    return _added(self, _mm(mat1, mat2))


@contiguous_rule("aten::baddbmm")
def _baddbmm(self: AbstractTensor, batch1: AbstractTensor, batch2: AbstractTensor, *scales: Any) -> T.TensorType:
    return _added(self, _bmm(batch1, batch2))


@rule("aten::matmul")
def _matmul(self: AbstractTensor, other: AbstractTensor) -> T.TensorType:
    """torch.matmul: vectors are promoted to matrices and back; batch dimensions broadcast."""
    a, b = self.sizes, other.sizes
    need(len(a) > 0 and len(b) > 0, "both arguments to matmul need to be at least 1D")
    dtype = _same_dtypes(self, other)
    if len(a) == 1 and len(b) == 1:
        _contract(a[0], b[0])
        return tensor(dtype, ())
    left = (1,) + a if len(a) == 1 else a
    right = b + (1,) if len(b) == 1 else b
    _contract(left[-1], right[-2])
    sizes = broadcast(left[:-2], right[:-2]) + (left[-2], right[-1])
    if len(a) == 1:
        sizes = sizes[:-2] + sizes[-1:]
    if len(b) == 1:
        sizes = sizes[:-1]
    return tensor(dtype, sizes)


@rule("aten::mv")
def _mv(self: AbstractTensor, vec: AbstractTensor) -> T.TensorType:
    need(len(self.sizes) == 2 and len(vec.sizes) == 1, "mv expects a matrix and a vector")
    _contract(self.sizes[1], vec.sizes[0])
    return tensor(_same_dtypes(self, vec), self.sizes[:1])


@rule("aten::dot")
def _dot(self: AbstractTensor, other: AbstractTensor) -> T.TensorType:
    need(len(self.sizes) == 1 and len(other.sizes) == 1, "1D tensors expected")
    need(same_size(self.sizes[0], other.sizes[0]), "inconsistent tensor size")
    return tensor(_same_dtypes(self, other), ())


@rule("aten::outer")
def _outer(self: AbstractTensor, vec2: AbstractTensor) -> T.TensorType:
    need(len(self.sizes) == 1 and len(vec2.sizes) == 1, "outer: expected 1-D arguments")
    return tensor(result_type(self, vec2), (self.sizes[0], vec2.sizes[0]))


@rule("aten::bilinear")
def _bilinear(input1: AbstractTensor, input2: AbstractTensor, weight: AbstractTensor,
              bias: AbstractTensor | None = None) -> T.TensorType:
    """`x1^T W x2 + b` over the last dimension; the leading dimensions of the inputs must agree."""
    dtype = _same_dtypes(input1, input2, weight, bias)
    need(len(weight.sizes) == 3 and len(input1.sizes) == len(input2.sizes) > 0, "bilinear: bad ranks")
    need(all(same_size(a, b) for a, b in zip(input1.sizes[:-1], input2.sizes[:-1])), "bilinear: batch sizes")
    need(same_size(input1.sizes[-1], weight.sizes[1]) and same_size(input2.sizes[-1], weight.sizes[2]),
         "bilinear: input sizes do not fit the weight")
    return tensor(dtype, input1.sizes[:-1] + weight.sizes[:1])


@contiguous_rule("aten::linear")
def _linear(input: AbstractTensor, weight: AbstractTensor, bias: AbstractTensor | None = None) -> T.TensorType:
    need(len(input.sizes) > 0 and 1 <= len(weight.sizes) <= 2, "linear: bad ranks")
    dtype = _same_dtypes(input, weight, bias)
    _contract(input.sizes[-1], weight.sizes[-1])
    sizes = input.sizes[:-1] + weight.sizes[:-1]
    if bias is not None:
        need(len(broadcast(bias.sizes, sizes)) == len(sizes), "linear: bias does not broadcast")
    return tensor(dtype, sizes)


# ---- convolution and pooling -------------------------------------------------------------------------------
def _expand_param(values: int | Sequence[int], count: int, name: str) -> list[int]:
    values = [values] if isinstance(values, int) else list(values)
    need(len(values) in (1, count), f"expected {name} to be a single integer or a list of {count}")
    return values * count if len(values) == 1 else values


def _conv_size(size: int | None, kernel: int | None, stride: int, padding: int, dilation: int) -> int | None:
    if size is None or kernel is None:
        return None
    extent = dilation * (kernel - 1) + 1
    need(size + 2 * padding >= extent, "kernel size can't be greater than actual input size")
    return (size + 2 * padding - extent) // stride + 1


def _convolution(dims: int, input: AbstractTensor, weight: AbstractTensor, bias: AbstractTensor | None,
                 stride: Any, padding: Any, dilation: Any, groups: int) -> T.TensorType:
    if isinstance(padding, str) or groups < 1:
        raise Decline  # 'same' padding and bad groups are left to the meta kernel
    need(len(weight.sizes) == dims + 2, "weight has the wrong number of dimensions")
    batched = len(input.sizes) == dims + 2
    need(batched or len(input.sizes) == dims + 1, "input has the wrong number of dimensions")
    dtype = _same_dtypes(input, weight, bias)
    sizes = input.sizes if batched else (1,) + input.sizes
    need(same_size(sizes[1], None if weight.sizes[1] is None else weight.sizes[1] * groups),
         "input channels do not match the weight")
    strides, paddings = _expand_param(stride, dims, "stride"), _expand_param(padding, dims, "padding")
    dilations = _expand_param(dilation, dims, "dilation")
    need(all(s > 0 for s in strides) and all(p >= 0 for p in paddings) and all(d > 0 for d in dilations))
    spatial = [_conv_size(size, kernel, s, p, d) for size, kernel, s, p, d
               in zip(sizes[2:], weight.sizes[2:], strides, paddings, dilations)]
    result = (sizes[0], weight.sizes[0], *spatial)
    return tensor(dtype, result if batched else result[1:])


def _conv_rule(dims: int):
    def conv(input: AbstractTensor, weight: AbstractTensor, bias: AbstractTensor | None = None, stride: Any = 1,
             padding: Any = 0, dilation: Any = 1, groups: int = 1) -> T.TensorType:
        return _convolution(dims, input, weight, bias, stride, padding, dilation, groups)
    return conv


for _dims in (1, 2, 3):
    rule(f"aten::conv{_dims}d")(_conv_rule(_dims))


def _pool_size(size: int | None, kernel: int, stride: int, padding: int, dilation: int, ceil_mode: bool
               ) -> int | None:
    """ATen's pooling_output_shape: with ceil_mode the last window must start inside the input."""
    if size is None:
        return None
    need(kernel > 0 and stride > 0 and dilation > 0 and 0 <= padding <= kernel // 2, "bad pooling parameters")
    numerator = size + 2 * padding - dilation * (kernel - 1) - 1 + (stride - 1 if ceil_mode else 0)
    out = numerator // stride + 1
    if ceil_mode and (out - 1) * stride >= size + padding:
        out -= 1
    need(out > 0, "output size is too small")
    return out


def _pool(dims: int, self: AbstractTensor, kernel_size: Any, stride: Any, padding: Any, dilation: Any,
          ceil_mode: Any) -> T.TensorType:
    need(len(self.sizes) in (dims + 1, dims + 2), "pooling: input has the wrong number of dimensions")
    kernels = _expand_param(kernel_size, dims, "kernel_size")
    strides = kernels if stride in ([], None) else _expand_param(stride, dims, "stride")
    paddings, dilations = _expand_param(padding, dims, "padding"), _expand_param(dilation, dims, "dilation")
    spatial = [_pool_size(size, k, s, p, d, known_bool(ceil_mode)) for size, k, s, p, d
               in zip(self.sizes[-dims:], kernels, strides, paddings, dilations)]
    return tensor(self.dtype, self.sizes[:-dims] + tuple(spatial))


def _max_pool_rule(dims: int):
    def max_pool(self: AbstractTensor, kernel_size: Any, stride: Any = (), padding: Any = 0, dilation: Any = 1,
                 ceil_mode: Any = False) -> T.TensorType:
        need_floating(self)
        return _pool(dims, self, kernel_size, stride, padding, dilation, ceil_mode)
    return max_pool


def _avg_pool_rule(dims: int):
    def avg_pool(self: AbstractTensor, kernel_size: Any, stride: Any = (), padding: Any = 0, ceil_mode: Any = False,
                 *options: Any) -> T.TensorType:
        need_floating(self)
        return _pool(dims, self, kernel_size, stride, padding, 1, ceil_mode)
    return avg_pool


def _adaptive_pool_rule(dims: int):
    def adaptive_pool(self: AbstractTensor, output_size: Any) -> T.TensorType:
        need_floating(self)
        need(len(self.sizes) in (dims + 1, dims + 2), "adaptive pooling: input has the wrong number of dimensions")
        need(all(size != 0 for size in self.sizes[-dims:]), "adaptive pooling: empty spatial dimension")
        sizes = _expand_param(output_size, dims, "output_size")
        need(all(s >= 0 for s in sizes), "adaptive pooling: negative output size")
        return tensor(self.dtype, self.sizes[:-dims] + tuple(sizes))
    return adaptive_pool


for _dims in (1, 2, 3):
    rule(f"aten::max_pool{_dims}d")(_max_pool_rule(_dims))
    rule(f"aten::avg_pool{_dims}d")(_avg_pool_rule(_dims))
    rule(f"aten::adaptive_avg_pool{_dims}d")(_adaptive_pool_rule(_dims))


# ---- normalization -----------------------------------------------------------------------------------------
@rule("aten::batch_norm", "aten::instance_norm")
def _batch_norm(input: AbstractTensor, *parameters: Any) -> T.TensorType:
    need_floating(input)
    need(len(input.sizes) >= 2, "batch_norm expects at least 2 dimensions")
    channels = input.sizes[1]
    for parameter in parameters[:4]:
        if isinstance(parameter, AbstractTensor):
            need(len(parameter.sizes) == 1 and same_size(parameter.sizes[0], channels), "bad parameter size")
    return like(input)


@rule("aten::layer_norm")
def _layer_norm(input: AbstractTensor, normalized_shape: list[int], weight: AbstractTensor | None = None,
                bias: AbstractTensor | None = None, *options: Any) -> T.TensorType:
    need_floating(input)
    count = len(normalized_shape)
    need(0 < count <= len(input.sizes), "layer_norm: bad normalized_shape")
    need(all(same_size(a, b) for a, b in zip(input.sizes[-count:], normalized_shape)),
         "layer_norm: input does not end with normalized_shape")
    for parameter in (weight, bias):
        if parameter is not None:
            need(parameter.sizes == tuple(normalized_shape) or None in parameter.sizes, "bad parameter size")
    return like(input)


@rule("aten::group_norm")
def _group_norm(input: AbstractTensor, groups: int, *parameters: Any) -> T.TensorType:
    need_floating(input)
    need(len(input.sizes) >= 2 and groups > 0, "group_norm: bad input")
    need(input.sizes[1] is None or input.sizes[1] % groups == 0, "channels not divisible by groups")
    return like(input)


@rule("aten::native_layer_norm")
def _native_layer_norm(input: AbstractTensor, normalized_shape: list[int], weight: AbstractTensor | None,
                       bias: AbstractTensor | None, eps: Any) -> list[T.TensorType]:
    """layer_norm's result, and the mean and reciprocal deviation per normalized group (size 1 over its dims)."""
    output = _layer_norm(input, normalized_shape, weight, bias)
    kept = len(input.sizes) - len(normalized_shape)
    statistics = tensor(input.dtype, input.sizes[:kept] + (1,) * len(normalized_shape))
    return [output, statistics, statistics]


def _batch_statistics(input: AbstractTensor, training: Any) -> T.TensorType:
    """The saved mean and inverse deviation per channel, in training mode. In evaluation mode eager saves empty
    tensors and the meta kernel per-channel ones: the rule does not choose."""
    if not known_bool(training):
        raise Decline
    return tensor(input.dtype, input.sizes[1:2])


@rule("aten::native_batch_norm", "aten::_native_batch_norm_legit")
def _native_batch_norm(input: AbstractTensor, weight: AbstractTensor | None, bias: AbstractTensor | None,
                       running_mean: AbstractTensor | None, running_var: AbstractTensor | None, training: Any,
                       momentum: Any, eps: Any) -> list[T.TensorType]:
    output = _batch_norm(input, weight, bias, running_mean, running_var)
    statistics = _batch_statistics(input, training)
    return [output, statistics, statistics]


@rule("aten::_native_batch_norm_legit.no_stats")
def _native_batch_norm_without_stats(input: AbstractTensor, weight: AbstractTensor | None,
                                     bias: AbstractTensor | None, training: Any, momentum: Any, eps: Any
                                     ) -> list[T.TensorType]:
    return _native_batch_norm(input, weight, bias, None, None, training, momentum, eps)


@rule("aten::native_group_norm")
def _native_group_norm(input: AbstractTensor, weight: AbstractTensor | None, bias: AbstractTensor | None,
                       N: int, C: int, HxW: int, group: int, eps: Any) -> list[T.TensorType]:
    """group_norm's result, and the mean and reciprocal deviation per sample and group."""
    output = _group_norm(input, group)
    need(input.sizes[:2] == (N, C) or None in input.sizes[:2], "native_group_norm: N and C do not fit the input")
    need(numel(input.sizes) is None or numel(input.sizes) == N * C * HxW, "native_group_norm: bad HxW")
    for parameter in (weight, bias):
        need(parameter is None or parameter.sizes in ((C,), (None,)), "native_group_norm: bad parameter size")
    statistics = tensor(input.dtype, (N, group))
    return [output, statistics, statistics]


@rule("aten::rms_norm")
def _rms_norm(input: AbstractTensor, normalized_shape: list[int], weight: AbstractTensor | None = None,
              eps: Any = None) -> T.TensorType:
    if weight is not None and weight.dtype != input.dtype:
        raise Decline
    return _layer_norm(input, normalized_shape, weight)


@rule("aten::prelu")
def _prelu(self: AbstractTensor, weight: AbstractTensor) -> T.TensorType:
    need_floating(self, weight)
    if weight.dtype != self.dtype or len(weight.sizes) > 1:
        raise Decline
    channels = self.sizes[1] if len(self.sizes) >= 2 else 1
    need(weight.sizes in ((), (1,)) or same_size(weight.sizes[0], channels), "prelu: weight does not fit")
    return like(self)


@rule("aten::glu")
def _glu(self: AbstractTensor, dim: int = -1) -> T.TensorType:
    need_floating(self)
    need(len(self.sizes) > 0, "glu does not support scalars")
    position = wrap_dim(dim, len(self.sizes))
    size = self.sizes[position]
    need(size is None or size % 2 == 0, "glu: halving dimension must be even")
    sizes = list(self.sizes)
    sizes[position] = None if size is None else size // 2
    return tensor(self.dtype, sizes)


@rule("aten::_softmax_backward_data")
def _softmax_backward(grad_output: AbstractTensor, output: AbstractTensor, dim: int, input_dtype: Any
                      ) -> T.TensorType:
    need_floating(grad_output, output)
    if dtype_argument(input_dtype, grad_output.dtype) != grad_output.dtype or output.sizes != grad_output.sizes:
        raise Decline  # a half-precision input's gradient and mismatched sizes: the meta kernel decides
    wrap_dim(dim, len(grad_output.sizes))
    return like(grad_output)


# ---- resampling: unfolding, interpolation, unpooling, grid sampling ------------------------------------------
@rule("aten::im2col")
def _im2col(self: AbstractTensor, kernel_size: Any, dilation: Any, padding: Any, stride: Any) -> T.TensorType:
    """Sliding (kh, kw) blocks as columns: (N, C * kh * kw, number of blocks), N absent for a 3-D input."""
    need_floating(self)
    need(len(self.sizes) in (3, 4), "im2col expects a 3-D or 4-D input")
    kernels, dilations = _expand_param(kernel_size, 2, "kernel_size"), _expand_param(dilation, 2, "dilation")
    paddings, strides = _expand_param(padding, 2, "padding"), _expand_param(stride, 2, "stride")
    need(all(k > 0 for k in kernels) and all(d > 0 for d in dilations) and all(s > 0 for s in strides)
         and all(p >= 0 for p in paddings), "im2col: bad parameters")
    channels = self.sizes[-3]
    need(channels != 0 and all(size != 0 for size in self.sizes[-2:]), "im2col: empty input")
    blocks = [_conv_size(size, k, s, p, d) for size, k, s, p, d
              in zip(self.sizes[-2:], kernels, strides, paddings, dilations)]
    need(all(b is None or b > 0 for b in blocks), "im2col: the kernel does not fit the input")
    columns = None if channels is None else channels * kernels[0] * kernels[1]
    count = None if None in blocks else blocks[0] * blocks[1]  # type: ignore[operator]
    return tensor(self.dtype, self.sizes[:-3] + (columns, count))


@rule("aten::col2im")
def _col2im(self: AbstractTensor, output_size: Any, kernel_size: Any, dilation: Any, padding: Any, stride: Any
            ) -> T.TensorType:
    """im2col's inverse: (N, C * kh * kw, number of blocks) columns summed into (N, C, *output_size)."""
    need_floating(self)
    need(len(self.sizes) in (2, 3), "col2im expects a 2-D or 3-D input")
    sizes = _expand_param(output_size, 2, "output_size")
    kernels, dilations = _expand_param(kernel_size, 2, "kernel_size"), _expand_param(dilation, 2, "dilation")
    paddings, strides = _expand_param(padding, 2, "padding"), _expand_param(stride, 2, "stride")
    need(all(k > 0 for k in kernels) and all(d > 0 for d in dilations) and all(s > 0 for s in strides)
         and all(p >= 0 for p in paddings) and all(size > 0 for size in sizes), "col2im: bad parameters")
    columns, count = self.sizes[-2:]
    need(columns is None or (columns != 0 and columns % (kernels[0] * kernels[1]) == 0),
         "col2im: the input's columns are not a multiple of the kernel's size")
    blocks = [_conv_size(size, k, s, p, d) for size, k, s, p, d in zip(sizes, kernels, strides, paddings, dilations)]
    need(count is None or None in blocks or count == blocks[0] * blocks[1],  # type: ignore[operator]
         "col2im: the number of blocks does not fit output_size")
    channels = None if columns is None else columns // (kernels[0] * kernels[1])
    return tensor(self.dtype, self.sizes[:-2] + (channels, *sizes))


def _upsample_rule(dims: int):
    def upsample(input: AbstractTensor, output_size: list[int] | None, align_corners: Any,
                 scale_factors: list[float] | None) -> T.TensorType:
        """The batch and channels kept, the spatial sizes given, or scaled (rounded down)."""
        need_floating(input)
        need(len(input.sizes) == dims + 2, "upsample: input has the wrong number of dimensions")
        need((output_size is None) != (scale_factors is None), "upsample: give output_size or scale_factors")
        if output_size is None:
            need(len(scale_factors) == dims, "upsample: one scale factor per spatial dimension")  # type: ignore
            output_size = [None if size is None else math.floor(size * scale)  # type: ignore[misc]
                           for size, scale in zip(input.sizes[2:], scale_factors)]  # type: ignore[arg-type]
        need(len(output_size) == dims and all(s is None or s > 0 for s in output_size), "upsample: bad sizes")
        need(all(size != 0 for size in input.sizes[1:]), "upsample: empty input")
        return tensor(input.dtype, input.sizes[:2] + tuple(output_size))
    return upsample


rule("aten::upsample_linear1d.vec")(_upsample_rule(1))
rule("aten::upsample_bilinear2d.vec", "aten::upsample_bicubic2d.vec")(_upsample_rule(2))
rule("aten::upsample_trilinear3d.vec")(_upsample_rule(3))


def _max_unpool(dims: int, self: AbstractTensor, indices: AbstractTensor, output_size: list[int]) -> T.TensorType:
    """The pooled values scattered into (N, C, *output_size), N absent for an unbatched input."""
    need_floating(self)
    need(indices.dtype is torch.int64, "max_unpool: indices must be int64")
    need(len(self.sizes) in (dims + 1, dims + 2), "max_unpool: input has the wrong number of dimensions")
    need(len(output_size) == dims, "max_unpool: output_size has the wrong length")
    need(len(indices.sizes) == len(self.sizes) and all(same_size(a, b) for a, b in zip(indices.sizes, self.sizes)),
         "max_unpool: indices and input shapes differ")
    need(all(size != 0 for size in self.sizes[1:]), "max_unpool: empty input")
    return tensor(self.dtype, self.sizes[:-dims] + tuple(output_size))


@rule("aten::max_unpool2d")
def _max_unpool2d(self: AbstractTensor, indices: AbstractTensor, output_size: list[int]) -> T.TensorType:
    return _max_unpool(2, self, indices, output_size)


@rule("aten::max_unpool3d")
def _max_unpool3d(self: AbstractTensor, indices: AbstractTensor, output_size: list[int], stride: list[int],
                  padding: list[int]) -> T.TensorType:
    need(len(stride) == 3 and len(padding) == 3 and all(s > 0 for s in stride), "max_unpool3d: bad parameters")
    return _max_unpool(3, self, indices, output_size)


@rule("aten::grid_sampler")
def _grid_sampler(input: AbstractTensor, grid: AbstractTensor, interpolation_mode: int, padding_mode: int,
                  align_corners: Any) -> T.TensorType:
    """Samples of (N, C, *spatial) at the grid's (N, *out, dims) points: (N, C, *out)."""
    dtype = _same_dtypes(input, grid)
    dims = len(input.sizes) - 2
    need(dims in (2, 3) and len(grid.sizes) == dims + 2 and same_size(grid.sizes[-1], dims),
         "grid_sampler: bad input or grid shape")
    need(same_size(input.sizes[0], grid.sizes[0]), "grid_sampler: batch sizes differ")
    need(interpolation_mode in (0, 1, 2) and padding_mode in (0, 1, 2), "grid_sampler: bad mode")
    if interpolation_mode == 2 and dims == 3:
        raise Decline  # bicubic needs 4-D input: the meta kernel says so
    need(all(size != 0 for size in input.sizes[2:]), "grid_sampler: empty spatial dimension")
    return tensor(dtype, input.sizes[:2] + grid.sizes[1:-1])


# ---- recurrent layers --------------------------------------------------------------------------------------
def _recurrent(input: AbstractTensor, states: list[AbstractTensor], params: list[AbstractTensor], has_biases: Any,
               num_layers: Any, bidirectional: Any, batch_first: Any, ranks: tuple[int, ...] = (3,)
               ) -> list[T.TensorType]:
    """The outputs of every step, (L, N, D*H) ((N, L, D*H) batch first, (L, D*H) unbatched where `ranks` allow
    it), D directions, and the last states, of the initial states' sizes, (D*num_layers, N, H) (H: the first
    state's last size, the projection's for an LSTM whose two states differ in size)."""
    need_floating(input, *states, *params)
    if len({t.dtype for t in (input, *states, *params)}) != 1 or not params or not isinstance(num_layers, int):
        raise Decline  # mixed dtypes: the meta kernel says which
    directions = 2 if known_bool(bidirectional) else 1
    projections = len(states) == 2 and states[0].sizes[-1] != states[1].sizes[-1]
    if len(params) != num_layers * directions * ((4 if known_bool(has_biases) else 2) + projections):
        raise Decline  # a wrong parameter count: the meta kernel's message
    rank = len(input.sizes)
    need(rank in ranks and all(len(s.sizes) == rank for s in states), "RNN: input and hidden states' ranks")
    need(len(params[0].sizes) == 2 and same_size(params[0].sizes[1], input.sizes[-1]),
         "RNN: input.size(-1) must be equal to input_size")
    need(all(same_size(s.sizes[0], num_layers * directions) for s in states), "RNN: hidden states per layer")
    batch = input.sizes[0] if known_bool(batch_first) and rank == 3 else input.sizes[1] if rank == 3 else 1
    need(rank == 2 or all(same_size(s.sizes[1], batch) for s in states), "RNN: batch sizes differ")
    size = states[0].sizes[-1]
    return [tensor(input.dtype, input.sizes[:-1] + (None if size is None else directions * size,)),
            *(like(s) for s in states)]


@rule("aten::lstm.input")
def _lstm(input: AbstractTensor, hx: list[AbstractTensor], params: list[AbstractTensor], has_biases: Any,
          num_layers: int, dropout: Any, train: Any, bidirectional: Any, batch_first: Any) -> list[T.TensorType]:
    need(len(hx) == 2, "lstm expects two hidden states")
    return _recurrent(input, hx, params, has_biases, num_layers, bidirectional, batch_first)


@rule("aten::gru.input")
def _gru(input: AbstractTensor, hx: AbstractTensor, params: list[AbstractTensor], has_biases: Any,
         num_layers: int, dropout: Any, train: Any, bidirectional: Any, batch_first: Any) -> list[T.TensorType]:
    return _recurrent(input, [hx], params, has_biases, num_layers, bidirectional, batch_first)


@rule("aten::rnn_tanh.input", "aten::rnn_relu.input")
def _rnn(input: AbstractTensor, hx: AbstractTensor, params: list[AbstractTensor], has_biases: Any,
         num_layers: int, dropout: Any, train: Any, bidirectional: Any, batch_first: Any) -> list[T.TensorType]:
    """Unlike lstm and gru, these take unbatched (L, input_size) inputs too."""
    return _recurrent(input, [hx], params, has_biases, num_layers, bidirectional, batch_first, ranks=(2, 3))


# ---- similarity and losses -------------------------------------------------------------------------------
@rule("aten::cosine_similarity")
def _cosine_similarity(x1: AbstractTensor, x2: AbstractTensor, dim: int = 1, eps: Any = 1e-8) -> T.TensorType:
    dtype = _same_dtypes(x1, x2)
    sizes = broadcast(x1.sizes, x2.sizes)
    position = wrap_dim(dim, len(sizes))
    return tensor(dtype, sizes[:position] + sizes[position + 1:])


@rule("aten::binary_cross_entropy_with_logits")
def _bce_with_logits(self: AbstractTensor, target: AbstractTensor, weight: AbstractTensor | None = None,
                     pos_weight: AbstractTensor | None = None, reduction: int = 1) -> T.TensorType:
    dtype = _same_dtypes(self, target, weight, pos_weight)
    if self.sizes != target.sizes or weight is not None or pos_weight is not None or reduction not in (0, 1, 2):
        raise Decline  # eager requires equal sizes, the meta kernel broadcasts: it decides; weights too
    return like(self) if reduction == 0 else tensor(dtype, ())


# ---- attention ---------------------------------------------------------------------------------------------
@rule("aten::scaled_dot_product_attention")
def _attention(query: AbstractTensor, key: AbstractTensor, value: AbstractTensor, attn_mask: Any = None,
               dropout_p: float = 0.0, is_causal: Any = False, scale: Any = None, enable_gqa: Any = False
               ) -> T.TensorType:
    need_floating(query, key, value)
    need(query.dtype == key.dtype == value.dtype, "query, key and value must have the same dtype")
    need(len(query.sizes) >= 2 and len(key.sizes) == len(query.sizes) == len(value.sizes), "attention: ranks")
    if known_bool(enable_gqa) or attn_mask is not None:
        raise Decline
    _contract(query.sizes[-1], key.sizes[-1])
    need(same_size(key.sizes[-2], value.sizes[-2]), "key and value lengths differ")
    batch = broadcast(query.sizes[:-2], key.sizes[:-2], value.sizes[:-2])
    return tensor(query.dtype, batch + (query.sizes[-2], value.sizes[-1]))


@rule("aten::_native_multi_head_attention")
def _native_attention(query: AbstractTensor, key: AbstractTensor, value: AbstractTensor, embed_dim: int,
                      num_heads: int, *weights_mask_and_flags: Any) -> list[T.TensorType]:
    """nn.MultiheadAttention's fast path on batch-first (B, L, E) inputs: the output, and the attention
    weights (B, L, S) averaged over heads, (B, H, L, S) per head, or an empty vector when not asked for."""
    need_floating(query, key, value)
    if len(query.sizes) != 3 or len(key.sizes) != 3 or len(weights_mask_and_flags) < 7:
        raise Decline
    need_weights, average = (known_bool(flag) for flag in weights_mask_and_flags[5:7])
    batch, length, source = query.sizes[0], query.sizes[1], key.sizes[1]
    heads: Sizes = (num_heads,) if not average else ()
    weights = (batch, *heads, length, source) if need_weights else (0,)
    return [like(query), tensor(query.dtype, weights)]


@rule("aten::_transformer_encoder_layer_fwd")
def _encoder_layer(src: AbstractTensor, *parameters: Any) -> T.TensorType:
    need_floating(src)
    return like(src)
