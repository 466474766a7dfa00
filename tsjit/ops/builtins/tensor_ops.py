"""Tensor operations TorchScript defines outside the dispatcher: `interpolate`'s builtin (`__interpolate`),
the `_no_grad_*` initializers `nn.init` scripts to, `.to(...)`/`.cpu()` spellings, the `hacked_twin`
indexing overloads (plain `Tensor[]` where ATen takes `Tensor?[]`), `split` with sizes, `einsum` with
sublists, autograd entry points and the `prim::Autograd*` helpers of differentiable graphs.

An undefined tensor is None here, as everywhere in tsjit's runtime values.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
import torch._prims_common
import torch.nn.functional as F

from tsjit.ir.scalar_type import code_to_dtype
from tsjit.ops.builtins.common import fail

_ops = torch.ops.aten


def to_device_dtype(self: torch.Tensor, device: torch.device | None, dtype: int | None, non_blocking: bool,
                    copy: bool) -> torch.Tensor:
    """aten::to.prim_Device: `t.to(device, dtype)`, returning `self` itself when nothing changes."""
    if device is None and dtype is None and not copy:
        return self
    return self.to(device=device, dtype=None if dtype is None else code_to_dtype(dtype),
                   non_blocking=non_blocking, copy=copy)


def to_dtype(self: torch.Tensor, dtype: int | None, non_blocking: bool, copy: bool) -> torch.Tensor:
    return to_device_dtype(self, None, dtype, non_blocking, copy)


def to_other(self: torch.Tensor, non_blocking: bool, copy: bool) -> torch.Tensor:
    return to_device_dtype(self, None, None, non_blocking, copy)


def numpy_transpose(self: torch.Tensor) -> torch.Tensor:
    """`t.T`: all dimensions reversed."""
    return self.permute(*reversed(range(self.dim())))


def copy_from(self: torch.Tensor, other: Any) -> torch.Tensor:
    """aten::copy_.Tensor/int/float: copy a tensor in, or fill with a number."""
    return self.copy_(other) if isinstance(other, torch.Tensor) else self.fill_(other)


def split_with_sizes(self: torch.Tensor, split_sizes: list[int], dim: int) -> list[torch.Tensor]:
    return list(torch.split(self, split_sizes, dim))


def einsum_sublist(a: torch.Tensor, *rest: Any) -> torch.Tensor:
    """`torch.einsum(x, [0, 1], y, [1, 2], [0, 2])`: operands interleaved with their subscript lists."""
    return torch.einsum(a, *rest)


def dequantize_any(tensors: Any) -> Any:
    """aten::dequantize.any: the tensors of a tuple or a tensor list dequantized, other tuple members kept."""
    if isinstance(tensors, tuple):
        return tuple(torch.dequantize(t) if isinstance(t, torch.Tensor) else t for t in tensors)
    if isinstance(tensors, list):
        return [torch.dequantize(t) for t in tensors]
    fail("Unsupported type in dequantize, only List[Tensor] and Tuple[Tensor or other types] are supported")


# ------------------------------------------------------------------------------------- interpolation

def interpolate(input: torch.Tensor, size: Any, scale_factor: Any, mode: str, align_corners: bool | None,
                recompute_scale_factor: bool | None, antialias: bool) -> torch.Tensor:
    """aten::__interpolate, what `F.interpolate` compiles to."""
    return F.interpolate(input, size, scale_factor, mode, align_corners, recompute_scale_factor, antialias)


def upsample(input: torch.Tensor, size: Any, scale_factor: Any, mode: str,
             align_corners: bool | None) -> torch.Tensor:
    return F.interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input: torch.Tensor, size: Any, scale_factor: Any) -> torch.Tensor:
    return F.interpolate(input, size, scale_factor, "nearest")


def upsample_bilinear(input: torch.Tensor, size: Any, scale_factor: Any) -> torch.Tensor:
    return F.interpolate(input, size, scale_factor, "bilinear", align_corners=True)


# ------------------------------------------------------------------------------------ no-grad initializers

def _without_grad(method: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """An in-place initializer run with autograd off, as `nn.init` does."""

    def initialize(tensor: torch.Tensor, *args: Any) -> torch.Tensor:
        with torch.no_grad():
            return method(tensor, *args)

    return initialize


no_grad_uniform = _without_grad(lambda t, a, b, generator: t.uniform_(a, b, generator=generator))
no_grad_normal = _without_grad(lambda t, mean, std, generator: t.normal_(mean, std, generator=generator))
no_grad_fill = _without_grad(lambda t, value: t.fill_(value))
no_grad_zero = _without_grad(lambda t: t.zero_())
no_grad_embedding_renorm = _without_grad(torch.embedding_renorm_)


def grad_sum_to_size(self: torch.Tensor, size: list[int] | None) -> torch.Tensor:
    return self if size is None else self.sum_to_size(size)


def ncf_unsqueeze(self: torch.Tensor, ndim: int) -> torch.Tensor:
    """A 1-d tensor of C values reshaped to (1, C, 1, ...) with `ndim` dimensions (batch norm helpers)."""
    sizes = [1] * ndim
    sizes[1] = self.shape[0]
    return self.reshape(sizes)


def ncf_view(self: torch.Tensor, input_shape: list[int], normalized_ndim: int) -> torch.Tensor:
    kept = len(input_shape) - normalized_ndim
    return self.reshape(list(input_shape[:kept]) + [1] * normalized_ndim)


# ----------------------------------------------------------------------------------------------- autograd

def grad(outputs: list[torch.Tensor], inputs: list[torch.Tensor], grad_outputs: list | None,
         retain_graph: bool | None, create_graph: bool, allow_unused: bool) -> list[torch.Tensor | None]:
    return list(torch.autograd.grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                                    allow_unused=allow_unused))


def backward(self: torch.Tensor, gradient: torch.Tensor | None, retain_graph: bool | None,
             create_graph: bool) -> None:
    self.backward(gradient, create_graph if retain_graph is None else retain_graph, create_graph)


def backward_tensors(tensors: list[torch.Tensor], grad_tensors: list | None, retain_graph: bool | None,
                     create_graph: bool) -> None:
    torch.autograd.backward(tensors, grad_tensors, retain_graph, create_graph)


def autograd_add(a: torch.Tensor | None, b: torch.Tensor | None) -> torch.Tensor | None:
    """Gradient accumulation where None is an undefined (all-zero) gradient."""
    if a is None:
        return b
    return a if b is None else a + b


def _defined(value: Any) -> bool:
    """Whether an input of prim::Autograd{Any,All}... holds a gradient (tensor lists: any member)."""
    if isinstance(value, list):
        return any(t is not None for t in value)
    return value is not None


def autograd_any_non_zero(*values: Any) -> bool:
    return any(_defined(v) for v in values)


def autograd_all_zero(*values: Any) -> bool:
    return not any(_defined(v) for v in values)


def autograd_all_non_zero(*values: Any) -> bool:
    return all(_defined(v) for v in values)


def var_concat(*inputs: Any) -> torch.Tensor:
    """prim::VarConcat(tensors..., dim)."""
    return torch.cat(list(inputs[:-1]), inputs[-1])


def mm_tree_reduce(*inputs: Any) -> torch.Tensor:
    """prim::MMTreeReduce(A_1, ..., A_n, B_1, ..., B_n): `mm(A_1, B_1) + ... + mm(A_n, B_n)` (passes/batch_mm.py),
    as one `mm(cat(A_i, dim=1), cat(B_i, dim=0))` when the operands are matrices that concatenate: each product's
    inner sizes agree, all have the same rows and columns, one dtype and one device. Otherwise (operands of other
    ranks, or products that the adds broadcast) the products are added one by one."""
    half = len(inputs) // 2
    lhs, rhs = inputs[:half], inputs[half:]
    rows, columns, dtype, device = lhs[0].shape[0], rhs[0].shape[-1], lhs[0].dtype, lhs[0].device
    if all(a.dim() == 2 and b.dim() == 2 and a.shape[0] == rows and a.shape[1] == b.shape[0] and b.shape[1] == columns
           and a.dtype == dtype and b.dtype == dtype and a.device == device and b.device == device
           for a, b in zip(lhs, rhs)):
        return torch.mm(torch.cat(lhs, 1), torch.cat(rhs, 0))
    total = torch.mm(lhs[0], rhs[0])
    for a, b in zip(lhs[1:], rhs[1:]):
        total = total + torch.mm(a, b)
    return total


def var_stack(*inputs: Any) -> torch.Tensor:
    return torch.stack(list(inputs[:-1]), inputs[-1])


def _interpolate_rows() -> list[tuple[str, Callable]]:
    """aten::__interpolate's four overloads: `size` an int or a list, `scale_factor` a float or a list."""
    arguments = ('(Tensor input, {size}? size=None, {scale}? scale_factor=None, str mode="nearest", '
                 "bool? align_corners=None, bool? recompute_scale_factor=None, bool antialias=False) "
                 "-> Tensor")
    overloads = ((".scale_list", "int", "float[]"), (".size_list_scale_list", "int[]", "float[]"),
                 ("", "int", "float"), (".size_list", "int[]", "float"))
    return [(f"aten::__interpolate{overload}" + arguments.format(size=size, scale=scale), interpolate)
            for overload, size, scale in overloads]


def _upsample_rows() -> list[tuple[str, Callable]]:
    """The older `__upsample*` builtins, with int scale factors."""
    arguments = "(Tensor input, {size}? size=None, {scale}? scale_factor=None{mode}) -> Tensor"
    mode = ', str mode="nearest", bool? align_corners=None'
    variants = [("__upsample", "", "int", "int", mode, upsample),
                ("__upsample", ".size_list", "int[]", "int", mode, upsample),
                ("__upsample_nearest", "", "int", "int", "", upsample_nearest),
                ("__upsample_nearest", ".size_list", "int[]", "int", "", upsample_nearest),
                ("__upsample_bilinear", "", "int", "int", "", upsample_bilinear),
                ("__upsample_bilinear", ".size_list", "int[]", "int", "", upsample_bilinear),
                ("__upsample_bilinear", ".scale_list", "int", "int[]", "", upsample_bilinear),
                ("__upsample_bilinear", ".size_list_scale_list", "int[]", "int[]", "", upsample_bilinear)]
    return [(f"aten::{name}{overload}" + arguments.format(size=size, scale=scale, mode=extra), fn)
            for name, overload, size, scale, extra, fn in variants]


def _dequantize_list(qtensors: list[torch.Tensor]) -> list[torch.Tensor]:
    return [torch.dequantize(t) for t in qtensors]


OPERATORS: list[tuple[str, Callable]] = [
    ("aten::cpu(Tensor(a) self) -> Tensor(b|a)", lambda self: self.cpu()),
    ("aten::cuda(Tensor(a) self) -> Tensor(b|a)", lambda self: self.cuda()),
    ("aten::numpy_T.a(Tensor(a) self) -> Tensor(a)", numpy_transpose),
    ("aten::matrix_H.a(Tensor(a) self) -> Tensor(a)", lambda self: self.H),
    ("aten::mT.a(Tensor(a) self) -> Tensor(a)", lambda self: self.mT),
    ("aten::mH.a(Tensor(a) self) -> Tensor(a)", lambda self: self.mH),
    ("prim::abs(Tensor x) -> Tensor", torch.abs),
    ("aten::to.prim_Device(Tensor(a) self, Device? device, int? dtype=None, bool non_blocking=False, "
     "bool copy=False) -> Tensor(b|a)", to_device_dtype),
    ("aten::to.prim_dtype(Tensor(a) self, int? dtype=None, bool non_blocking=False, bool copy=False) "
     "-> Tensor(b|a)", to_dtype),
    ("aten::to.prim_other(Tensor(a) self, bool non_blocking=False, bool copy=False) -> Tensor(b|a)",
     to_other),
    *[(f"aten::copy_.{kind}(Tensor(a!) self, {kind} other) -> Tensor(a!)", copy_from)
      for kind in ("Tensor", "int", "float")],
    ("aten::index.Tensor_hacked_twin(Tensor self, Tensor[] indices) -> Tensor", _ops.index.Tensor),
    ("aten::_unsafe_index.Tensor_hacked_twin(Tensor self, Tensor[] indices) -> Tensor",
     _ops._unsafe_index.Tensor),
    ("aten::index_put.hacked_twin(Tensor self, Tensor[] indices, Tensor values, bool accumulate=False) "
     "-> Tensor", _ops.index_put.default),
    ("aten::index_put_.hacked_twin(Tensor(a!) self, Tensor[] indices, Tensor values, bool accumulate=False) "
     "-> Tensor(a!)", _ops.index_put_.default),
    ("aten::_unsafe_index_put.hacked_twin(Tensor self, Tensor[] indices, Tensor values, "
     "bool accumulate=False) -> Tensor", _ops._unsafe_index_put.default),
    ("aten::_index_put_impl_.hacked_twin(Tensor(a!) self, Tensor[] indices, Tensor values, "
     "bool accumulate=False, bool unsafe=False) -> Tensor(a!)", _ops._index_put_impl_.default),
    ("aten::split(Tensor(a -> *) self, int[] split_sizes, int dim=0) -> Tensor(a)[]", split_with_sizes),
    ("aten::einsum.sublist(Tensor a, ...) -> Tensor", einsum_sublist),
    ("aten::dequantize.tensor(Tensor qtensor) -> Tensor", torch.dequantize),
    ("aten::dequantize.list(Tensor[] qtensors) -> Tensor[]", _dequantize_list),
    ("aten::dequantize.any(Any tensors) -> Any", dequantize_any),
    ("aten::is_non_overlapping_and_dense(Tensor self) -> bool",
     torch._prims_common.is_non_overlapping_and_dense_or_false),
    *_interpolate_rows(),
    *_upsample_rows(),
    ("aten::_no_grad_uniform_(Tensor(a!) tensor, float a, float b, Generator? generator=None) -> Tensor(a!)",
     no_grad_uniform),
    ("aten::_no_grad_normal_(Tensor(a!) tensor, float mean, float std, Generator? generator=None) "
     "-> Tensor(a!)", no_grad_normal),
    ("aten::_no_grad_fill_(Tensor(a!) tensor, float val) -> Tensor(a!)", no_grad_fill),
    ("aten::_no_grad_zero_(Tensor(a!) tensor) -> Tensor(a!)", no_grad_zero),
    ("aten::_no_grad_embedding_renorm_(Tensor weight, Tensor input, float max_norm, float norm_type) "
     "-> Tensor", no_grad_embedding_renorm),
    ("aten::_grad_sum_to_size(Tensor(a) self, int[]? size) -> Tensor(a)", grad_sum_to_size),
    ("aten::_ncf_unsqueeze(Tensor(a) self, int ndim) -> Tensor(a)", ncf_unsqueeze),
    ("aten::_ncf_view(Tensor(a) self, int[] input_shape, int normalized_ndim) -> Tensor(a)", ncf_view),
    ("aten::_pack_sequence(Tensor output, Tensor batch_sizes, Tensor? sorted_indices, "
     "Tensor? unsorted_indices) -> (Tensor, Tensor, Tensor?, Tensor?)", lambda *parts: parts),
    ("aten::grad(Tensor[] outputs, Tensor[] inputs, Tensor?[]? grad_outputs=None, bool? retain_graph=None, "
     "bool create_graph=False, bool allow_unused=False) -> Tensor?[]", grad),
    ("aten::backward(Tensor self, Tensor? gradient=None, bool? retain_graph=None, bool create_graph=False) "
     "-> ()", backward),
    ("aten::backward.TensorList(Tensor[] tensors, Tensor?[]? grad_tensors=None, bool? retain_graph=None, "
     "bool create_graph=False) -> ()", backward_tensors),
    ("prim::AutogradZero() -> Tensor", lambda: None),
    ("prim::AutogradAdd(Any a, Any b) -> Any", autograd_add),
    ("prim::AutogradAnyNonZero(...) -> bool", autograd_any_non_zero),
    ("prim::AutogradAllZero(...) -> bool", autograd_all_zero),
    ("prim::AutogradAllNonZero(...) -> bool", autograd_all_non_zero),
    ("prim::VarConcat(...) -> Tensor", var_concat),
    ("prim::VarStack(...) -> Tensor", var_stack),
    ("prim::MMTreeReduce(...) -> Tensor", mm_tree_reduce),
    ("onnx::Reshape(Tensor input, Tensor shape) -> Tensor",
     lambda input, shape: input.reshape(shape.tolist())),
    ("onnx::Shape(Tensor t) -> Tensor", lambda t: torch.tensor(t.shape, dtype=torch.int64)),
]
