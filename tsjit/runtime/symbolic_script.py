"""Symbolic gradients as data: one table of TorchScript formulas keyed by operator schema (symbolic_script.cpp).

(seed: jit-overview.md "Derivate Splitting", "Testing Autodiff".) Each entry is a function written in TorchScript
that computes the operator and returns its result with a nested `backward` closing over what the gradient needs:

    "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor":
    def mul(self, other):
        def backward(grad_output):
            grad_self = (grad_output * other)._grad_sum_to_size(self.size())
            grad_other = (grad_output * self)._grad_sum_to_size(other.size())
            return grad_self, grad_other
        return self * other, backward

tsjit's own frontend compiles an entry on its first use (once; the result is cached), and lambda lifting (the
frontend's clean-up) turns the closure into a graph of its own taking the captured values as one `context`
tuple. `gradient_formula(node)` splits that into the two graphs autodiff.py splices:

    forward(op inputs...) -> (op results..., captured values...)
    backward(grads of the results..., captured values...) -> (one gradient per op input, None where there is none)

A formula's parameters are the schema's arguments in order (keyword-only ones included), so a node's inputs
are its arguments. Gradients of broadcast operands are summed back to the operand's size with
`_grad_sum_to_size`, to a size the forward captures as `_size_if_not_equal(self.size(), result.size())`: None
when nothing was broadcast, which the backward graph's executor specializes on (the input typed NoneType), so
that the sum disappears and the elementwise backward fuses. Where ATen has a backward operator (convolution,
pooling, layer_norm), the formula calls it. prim::ConstantChunk has no schema; autodiff.py writes its gradient
(a cat of the pieces' gradients).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from tsjit.errors import TsjitError
from tsjit.ir.graph import Graph, Node
from tsjit.ir.symbols import prim
from tsjit.ir.types import TupleType
from tsjit.passes.dead_code_elimination import eliminate_dead_code

_UNARY = {  # op name -> the gradient of `result = op(self)`, in terms of grad_output, self and result
    "sigmoid": "grad_output * (1 - result) * result",
    "tanh": "grad_output * (1 - result * result)",
    "exp": "grad_output * result",
    "log": "grad_output / self",
    "neg": "grad_output.neg()",
    "sqrt": "grad_output / (2 * result)",
    "rsqrt": "grad_output * result * result * result * -0.5",
    "abs": "grad_output * self.sign()",
    "reciprocal": "grad_output * result * result * -1",
    "relu": "torch.threshold_backward(grad_output, result, 0)",
    "silu": "grad_output * torch.sigmoid(self) * (1 + self * (1 - torch.sigmoid(self)))",
    "t": "grad_output.t()",
    "contiguous": "grad_output",
}

_UNARY_TEMPLATE = """
def {name}(self{extra}):
    result = torch.{name}(self{args})
    def backward(grad_output):
        return {gradient}{nones}
    return result, backward
"""


def _unary(name: str, gradient: str, extra: str = "", args: str = "", nones: str = "") -> str:
    return _UNARY_TEMPLATE.format(name=name, gradient=gradient, extra=extra, args=args, nones=nones)


_BINARY = """
def {name}(self, other{alpha_parameter}):
    result = torch.{name}(self, other{alpha_argument})
    self_size = torch._size_if_not_equal(self.size(), result.size())
    other_size = torch._size_if_not_equal(other.size(), result.size())
    def backward(grad_output):
        grad_self = ({grad_self})._grad_sum_to_size(self_size)
        grad_other = ({grad_other})._grad_sum_to_size(other_size)
        return grad_self, grad_other{alpha_none}
    return result, backward
"""

_SCALAR_BINARY = """
def {name}(self, other: number{alpha_parameter}):
    def backward(grad_output):
        return {grad_self}, None{alpha_none}
    return torch.{name}(self, other{alpha_argument}), backward
"""


def _binary(template: str, name: str, grad_self: str, grad_other: str = "", alpha: bool = False) -> str:
    return template.format(name=name, grad_self=grad_self, grad_other=grad_other,
                           alpha_parameter=", alpha: number" if alpha else "", alpha_none=", None" if alpha else "",
                           alpha_argument=", alpha=alpha" if alpha else "")


_MATMUL = """
def matmul(self, other):
    def backward(grad_output):
        s = self
        o = other
        g = grad_output
        if self.dim() == 1:
            s = self.unsqueeze(0)
            g = g.unsqueeze(-2)
        if other.dim() == 1:
            o = other.unsqueeze(-1)
            g = g.unsqueeze(-1)
        grad_self = torch.matmul(g, o.transpose(-1, -2))._grad_sum_to_size(s.size()).reshape(self.size())
        grad_other = torch.matmul(s.transpose(-1, -2), g)._grad_sum_to_size(o.size()).reshape(other.size())
        return grad_self, grad_other
    return torch.matmul(self, other), backward
"""

_REDUCED_SHAPE = """
    self_size = self.size()
    shape = self.size()
    if dim is None:
        for i in range(len(shape)):
            shape[i] = 1
    elif len(dim) == 0:
        for i in range(len(shape)):
            shape[i] = 1
    else:
        for d in dim:
            shape[d] = 1
"""

_FORMULAS: dict[str, str] = {
    # ---- matrix products ----------------------------------------------------------------------------------
    "aten::mm(Tensor self, Tensor mat2) -> Tensor": """
def mm(self, mat2):
    def backward(grad_output):
        return grad_output.mm(mat2.t()), self.t().mm(grad_output)
    return torch.mm(self, mat2), backward
""",
    "aten::bmm(Tensor self, Tensor mat2) -> Tensor": """
def bmm(self, mat2):
    def backward(grad_output):
        return grad_output.bmm(mat2.transpose(1, 2)), self.transpose(1, 2).bmm(grad_output)
    return torch.bmm(self, mat2), backward
""",
    "aten::matmul(Tensor self, Tensor other) -> Tensor": _MATMUL,
    "aten::addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor": """
def addmm(self, mat1, mat2, beta: number, alpha: number):
    result = torch.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    self_size = torch._size_if_not_equal(self.size(), result.size())
    def backward(grad_output):
        grad_self = (grad_output * beta)._grad_sum_to_size(self_size)
        grad_mat1 = grad_output.mm(mat2.t()) * alpha
        grad_mat2 = mat1.t().mm(grad_output) * alpha
        return grad_self, grad_mat1, grad_mat2, None, None
    return result, backward
""",
    "aten::linear(Tensor input, Tensor weight, Tensor? bias=None) -> Tensor": """
def linear(input, weight, bias: Optional[Tensor]):
    def backward(grad_output):
        grad_input = grad_output.matmul(weight)
        flat_grad = grad_output.reshape(-1, grad_output.size(-1))
        grad_weight = flat_grad.t().mm(input.reshape(-1, input.size(-1)))
        grad_bias: Optional[Tensor] = None
        if bias is not None:
            grad_bias = grad_output._grad_sum_to_size(bias.size())
        return grad_input, grad_weight, grad_bias
    return torch.linear(input, weight, bias), backward
""",
    # ---- elementwise ----------------------------------------------------------------------------------------
    "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor":
        _binary(_BINARY, "add", "grad_output", "grad_output if alpha == 1 else grad_output * alpha", alpha=True),
    "aten::sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor":
        _binary(_BINARY, "sub", "grad_output", "grad_output * -alpha", alpha=True),
    "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor":
        _binary(_BINARY, "mul", "grad_output * other", "grad_output * self"),
    "aten::div.Tensor(Tensor self, Tensor other) -> Tensor":
        _binary(_BINARY, "div", "grad_output / other", "grad_output * -self / (other * other)"),
    "aten::add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor":
        _binary(_SCALAR_BINARY, "add", "grad_output", alpha=True),
    "aten::sub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor":
        _binary(_SCALAR_BINARY, "sub", "grad_output", alpha=True),
    "aten::mul.Scalar(Tensor self, Scalar other) -> Tensor": _binary(_SCALAR_BINARY, "mul", "grad_output * other"),
    "aten::div.Scalar(Tensor self, Scalar other) -> Tensor": _binary(_SCALAR_BINARY, "div", "grad_output / other"),
    "aten::rsub.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor":
        _binary(_SCALAR_BINARY, "rsub", "grad_output * -alpha", alpha=True),
    "aten::pow.Tensor_Scalar(Tensor self, Scalar exponent) -> Tensor": """
def pow(self, exponent: number):
    def backward(grad_output):
        if exponent == 0.0:
            return torch.zeros_like(self), None
        return grad_output * exponent * torch.pow(self, exponent - 1), None
    return torch.pow(self, exponent), backward
""",
    "aten::pow.Tensor_Tensor(Tensor self, Tensor exponent) -> Tensor": """
def pow(self, exponent):
    result = torch.pow(self, exponent)
    def backward(grad_output):
        grad_self = (grad_output * exponent * torch.pow(self, exponent - 1))._grad_sum_to_size(self.size())
        grad_exponent = (grad_output * result * torch.log(self))._grad_sum_to_size(exponent.size())
        return grad_self, grad_exponent
    return result, backward
""",
    "aten::clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor": """
def clamp(self, min: Optional[number], max: Optional[number]):
    def backward(grad_output):
        grad = grad_output
        if min is not None:
            grad = grad * (self >= min).type_as(grad)
        if max is not None:
            grad = grad * (self <= max).type_as(grad)
        return grad, None, None
    return torch.clamp(self, min, max), backward
""",
    "aten::where.self(Tensor condition, Tensor self, Tensor other) -> Tensor": """
def where(condition, self, other):
    result = torch.where(condition, self, other)
    self_size = torch._size_if_not_equal(self.size(), result.size())
    other_size = torch._size_if_not_equal(other.size(), result.size())
    def backward(grad_output):
        zeros = torch.zeros_like(grad_output)
        grad_self = torch.where(condition, grad_output, zeros)._grad_sum_to_size(self_size)
        grad_other = torch.where(condition, zeros, grad_output)._grad_sum_to_size(other_size)
        return None, grad_self, grad_other
    return result, backward
""",
    "aten::leaky_relu(Tensor self, Scalar negative_slope=0.01) -> Tensor": """
def leaky_relu(self, negative_slope: number):
    def backward(grad_output):
        return torch.where(self > 0, grad_output, grad_output * negative_slope), None
    return torch.leaky_relu(self, negative_slope), backward
""",
    "aten::gelu(Tensor self, *, str approximate=\"none\") -> Tensor": """
def gelu(self, approximate: str):
    def backward(grad_output):
        return torch.ops.aten.gelu_backward(grad_output, self, approximate=approximate), None
    return torch.gelu(self, approximate=approximate), backward
""",
    "aten::dropout(Tensor input, float p, bool train) -> Tensor": """
def dropout(input, p: float, train: bool):
    mask: Optional[Tensor] = None
    scale = 1.0
    result = input
    if train and p > 0.0:
        keep = 1.0 - p
        if keep > 0.0:
            scale = 1.0 / keep
        m = torch.empty_like(input).bernoulli_(keep)
        result = input * m * scale
        mask = m
    def backward(grad_output):
        if mask is None:
            return grad_output, None, None
        return grad_output * mask * scale, None, None
    return result, backward
""",
    # ---- normalization and softmax --------------------------------------------------------------------------
    "aten::layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight=None, Tensor? bias=None, "
    "float eps=1.0000000000000001e-05, bool cudnn_enable=True) -> Tensor": """
def layer_norm(input, normalized_shape: List[int], weight: Optional[Tensor], bias: Optional[Tensor], eps: float,
               cudnn_enable: bool):
    output, mean, rstd = torch.native_layer_norm(input, normalized_shape, weight, bias, eps)
    def backward(grad_output):
        grads = torch.ops.aten.native_layer_norm_backward(grad_output, input, normalized_shape, mean, rstd,
                                                          weight, bias, [True, weight is not None, bias is not None])
        return grads[0], None, grads[1], grads[2], None, None
    return output, backward
""",
    "aten::softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor": """
def softmax(self, dim: int, dtype: Optional[int]):
    result = torch.softmax(self, dim, dtype)
    def backward(grad_output):
        grad_self = (grad_output - (grad_output * result).sum(dim, True)) * result
        return grad_self.type_as(self), None, None
    return result, backward
""",
    "aten::log_softmax.int(Tensor self, int dim, ScalarType? dtype=None) -> Tensor": """
def log_softmax(self, dim: int, dtype: Optional[int]):
    result = torch.log_softmax(self, dim, dtype)
    def backward(grad_output):
        grad_self = grad_output - torch.exp(result) * grad_output.sum(dim, True)
        return grad_self.type_as(self), None, None
    return result, backward
""",
    # ---- reductions -----------------------------------------------------------------------------------------
    "aten::sum(Tensor self, *, ScalarType? dtype=None) -> Tensor": """
def sum(self, dtype: Optional[int]):
    self_size = self.size()
    def backward(grad_output):
        return grad_output.expand(self_size), None
    return torch.sum(self, dtype=dtype), backward
""",
    "aten::sum.dim_IntList(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor": """
def sum(self, dim: Optional[List[int]], keepdim: bool, dtype: Optional[int]):""" + _REDUCED_SHAPE + """
    def backward(grad_output):
        return grad_output.reshape(shape).expand(self_size), None, None, None
    return torch.sum(self, dim, keepdim, dtype=dtype), backward
""",
    "aten::mean(Tensor self, *, ScalarType? dtype=None) -> Tensor": """
def mean(self, dtype: Optional[int]):
    self_size = self.size()
    count = self.numel()
    def backward(grad_output):
        return grad_output.expand(self_size) / count, None
    return torch.mean(self, dtype=dtype), backward
""",
    "aten::mean.dim(Tensor self, int[1]? dim, bool keepdim=False, *, ScalarType? dtype=None) -> Tensor": """
def mean(self, dim: Optional[List[int]], keepdim: bool, dtype: Optional[int]):""" + _REDUCED_SHAPE + """
    result = torch.mean(self, dim, keepdim, dtype=dtype)
    count = self.numel() / max(result.numel(), 1)
    def backward(grad_output):
        return grad_output.reshape(shape).expand(self_size) / count, None, None, None
    return result, backward
""",
    # ---- views ----------------------------------------------------------------------------------------------
    "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)": """
def view(self, size: List[int]):
    self_size = self.size()
    def backward(grad_output):
        return grad_output.reshape(self_size), None
    return self.view(size), backward
""",
    "aten::reshape(Tensor(a) self, SymInt[] shape) -> Tensor(a)": """
def reshape(self, shape: List[int]):
    self_size = self.size()
    def backward(grad_output):
        return grad_output.reshape(self_size), None
    return self.reshape(shape), backward
""",
    "aten::transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)": """
def transpose(self, dim0: int, dim1: int):
    def backward(grad_output):
        return grad_output.transpose(dim0, dim1), None, None
    return self.transpose(dim0, dim1), backward
""",
    "aten::permute(Tensor(a) self, int[] dims) -> Tensor(a)": """
def permute(self, dims: List[int]):
    inverse = [0] * len(dims)
    for i in range(len(dims)):
        d = dims[i]
        if d < 0:
            d = d + len(dims)
        inverse[d] = i
    def backward(grad_output):
        return grad_output.permute(inverse), None
    return self.permute(dims), backward
""",
    "aten::squeeze(Tensor(a) self) -> Tensor(a)": """
def squeeze(self):
    self_size = self.size()
    def backward(grad_output):
        return grad_output.reshape(self_size)
    return self.squeeze(), backward
""",
    "aten::squeeze.dim(Tensor(a) self, int dim) -> Tensor(a)": """
def squeeze(self, dim: int):
    self_size = self.size()
    def backward(grad_output):
        return grad_output.reshape(self_size), None
    return self.squeeze(dim), backward
""",
    "aten::unsqueeze(Tensor(a) self, int dim) -> Tensor(a)": """
def unsqueeze(self, dim: int):
    def backward(grad_output):
        return grad_output.squeeze(dim), None
    return self.unsqueeze(dim), backward
""",
    "aten::expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)": """
def expand(self, size: List[int], implicit: bool):
    self_size = self.size()
    def backward(grad_output):
        return grad_output._grad_sum_to_size(self_size), None, None
    return self.expand(size, implicit=implicit), backward
""",
    "aten::expand_as(Tensor(a) self, Tensor other) -> Tensor(a)": """
def expand_as(self, other):
    self_size = self.size()
    def backward(grad_output):
        return grad_output._grad_sum_to_size(self_size), None
    return self.expand_as(other), backward
""",
    "aten::select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)": """
def select(self, dim: int, index: int):
    self_size = self.size()
    def backward(grad_output):
        return torch.ops.aten.select_backward(grad_output, self_size, dim, index), None, None
    return self.select(dim, index), backward
""",
    "aten::slice.Tensor(Tensor(a) self, int dim=0, SymInt? start=None, SymInt? end=None, SymInt step=1) -> Tensor(a)":
    """
def slice(self, dim: int, start: Optional[int], end: Optional[int], step: int):
    self_size = self.size()
    def backward(grad_output):
        first = 0
        if start is not None:
            first = start
        last = 9223372036854775807
        if end is not None:
            last = end
        return torch.ops.aten.slice_backward(grad_output, self_size, dim, first, last, step), None, None, None, None
    return torch.slice(self, dim, start, end, step), backward
""",
    "aten::_grad_sum_to_size(Tensor(a) self, int[]? size) -> Tensor(a)": """
def _grad_sum_to_size(self, size: Optional[List[int]]):
    result = self._grad_sum_to_size(size)
    self_size = torch._size_if_not_equal(self.size(), result.size())
    def backward(grad_output):
        if self_size is None:
            return grad_output, None
        return grad_output.expand(self_size), None
    return result, backward
""",
    # ---- convolution and pooling ----------------------------------------------------------------------------
    "aten::conv2d(Tensor input, Tensor weight, Tensor? bias=None, SymInt[2] stride=[1, 1], SymInt[2] padding=[0, 0], "
    "SymInt[2] dilation=[1, 1], SymInt groups=1) -> Tensor": """
def conv2d(input, weight, bias: Optional[Tensor], stride: List[int], padding: List[int], dilation: List[int],
           groups: int):
    def backward(grad_output):
        bias_sizes: Optional[List[int]] = None
        if bias is not None:
            bias_sizes = [weight.size(0)]
        grads = torch.ops.aten.convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
                                                    dilation, False, [0, 0], groups,
                                                    [True, True, bias is not None])
        return grads[0], grads[1], grads[2], None, None, None, None
    return torch.conv2d(input, weight, bias, stride, padding, dilation, groups), backward
""",
    "aten::convolution(Tensor input, Tensor weight, Tensor? bias, SymInt[] stride, SymInt[] padding, "
    "SymInt[] dilation, bool transposed, SymInt[] output_padding, SymInt groups) -> Tensor": """
def convolution(input, weight, bias: Optional[Tensor], stride: List[int], padding: List[int], dilation: List[int],
                transposed: bool, output_padding: List[int], groups: int):
    def backward(grad_output):
        bias_sizes: Optional[List[int]] = None
        if bias is not None:
            bias_sizes = [weight.size(1) * groups if transposed else weight.size(0)]
        grads = torch.ops.aten.convolution_backward(grad_output, input, weight, bias_sizes, stride, padding,
                                                    dilation, transposed, output_padding, groups,
                                                    [True, True, bias is not None])
        return grads[0], grads[1], grads[2], None, None, None, None, None, None
    return torch.convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                             groups), backward
""",
    "aten::max_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, int[2] dilation=1, "
    "bool ceil_mode=False) -> Tensor": """
def max_pool2d(self, kernel_size: List[int], stride: List[int], padding: List[int], dilation: List[int],
               ceil_mode: bool):
    result, indices = torch.ops.aten.max_pool2d_with_indices(self, kernel_size, stride, padding, dilation,
                                                             ceil_mode)
    def backward(grad_output):
        grad_self = torch.ops.aten.max_pool2d_with_indices_backward(grad_output, self, kernel_size, stride,
                                                                    padding, dilation, ceil_mode, indices)
        return grad_self, None, None, None, None, None
    return result, backward
""",
    "aten::avg_pool2d(Tensor self, int[2] kernel_size, int[2] stride=[], int[2] padding=0, bool ceil_mode=False, "
    "bool count_include_pad=True, int? divisor_override=None) -> Tensor": """
def avg_pool2d(self, kernel_size: List[int], stride: List[int], padding: List[int], ceil_mode: bool,
               count_include_pad: bool, divisor_override: Optional[int]):
    def backward(grad_output):
        grad_self = torch.ops.aten.avg_pool2d_backward(grad_output, self, kernel_size, stride, padding, ceil_mode,
                                                       count_include_pad, divisor_override)
        return grad_self, None, None, None, None, None, None
    return torch.avg_pool2d(self, kernel_size, stride, padding, ceil_mode, count_include_pad,
                            divisor_override), backward
""",
    "aten::adaptive_avg_pool2d(Tensor self, SymInt[2] output_size) -> Tensor": """
def adaptive_avg_pool2d(self, output_size: List[int]):
    def backward(grad_output):
        return torch.ops.aten._adaptive_avg_pool2d_backward(grad_output, self), None
    return torch.adaptive_avg_pool2d(self, output_size), backward
""",
}
_FORMULAS.update({
    f"aten::{name}(Tensor self) -> Tensor": _unary(name, gradient) for name, gradient in _UNARY.items()
    if name not in ("t", "contiguous")})
_FORMULAS["aten::t(Tensor(a) self) -> Tensor(a)"] = _unary("t", _UNARY["t"])
_FORMULAS["aten::contiguous(Tensor(a) self, *, MemoryFormat memory_format=0) -> Tensor(a)"] = _unary(
    "contiguous", _UNARY["contiguous"], extra=", memory_format: int", args="", nones=", None")

SYMBOLIC_SCRIPTS: dict[str, str] = _FORMULAS
"""Every formula, by the operator's schema as the dispatcher prints it."""


@dataclass(frozen=True)
class GradientFormula:
    """A compiled formula: `forward` returns the op's results then the captured values; `backward` takes the
    results' gradients then the captured values and returns one gradient (or None) per op input."""

    forward: Graph
    backward: Graph
    num_outputs: int


_compiled: dict[str, GradientFormula] = {}
_lock = threading.Lock()


def is_differentiable(node: Node) -> bool:
    """Whether `node` may be part of a differentiable graph (TorchScript's isDifferentiable): a constant, a
    constant chunk (autodiff.py writes its gradient) or an operator with a formula."""
    return node.kind in (prim.Constant, prim.ConstantChunk) or has_gradient_formula(node)


def has_gradient_formula(node: Node) -> bool:
    """Whether `node`'s operator has a formula in the table (TorchScript's hasGradientInfoForSchema)."""
    return _schema_key(node) in SYMBOLIC_SCRIPTS


def gradient_formula(node: Node) -> GradientFormula | None:
    """The compiled formula for `node`'s operator (compiled on first use, then cached), or None."""
    key = _schema_key(node)
    if key not in SYMBOLIC_SCRIPTS:
        return None
    with _lock:
        if key not in _compiled:
            _compiled[key] = _compile(key, SYMBOLIC_SCRIPTS[key])
        return _compiled[key]


def _schema_key(node: Node) -> str | None:
    if node.kind.ns not in ("aten",):
        return None
    schema = node.maybe_schema()
    return str(schema) if schema is not None else None


def _compile(key: str, source: str) -> GradientFormula:
    """Compile one formula with tsjit's frontend and split its graph into forward and backward."""
    # deferred: the frontend loads with the first formula compiled
    from tsjit.frontend.ir_emitter import compile_source
    from tsjit.frontend.resolver import NativeResolver  # deferred: as compile_source

    (function,) = compile_source(source, NativeResolver())
    function.ensure_defined()
    graph = function.graph.copy()
    result, pair = _returned_pair(graph, key)
    closure, context = pair.inputs
    backward = _backward_graph(closure.node.g("Subgraph"))
    results = list(result.node.inputs) if result.node.kind is prim.TupleConstruct else [result]
    captured = _constants_copied_into(backward, list(context.node.inputs), len(backward.inputs) - len(
        context.node.inputs))
    graph.block.return_node.remove_all_inputs()
    for value in results + captured:
        graph.register_output(value)
    eliminate_dead_code(graph)
    return GradientFormula(graph, backward, len(results))


def _constants_copied_into(backward: Graph, captured: list, first: int) -> list:
    """The captured values left once those that are constants are copied into `backward` (whose captured
    inputs start at `first`) instead of passing through the forward graph's outputs."""
    kept = []
    for index, value in reversed(list(enumerate(captured))):
        if value.node.kind is not prim.Constant:
            kept.insert(0, value)
            continue
        with backward.insert_point_guard(next(backward.nodes(), backward.return_node)):
            copy = backward.insert_node(backward.create_clone(value.node, lambda v: v))
        backward.inputs[first + index].replace_all_uses_with(copy.output())
        backward.erase_input(first + index)
    return kept


def _returned_pair(graph: Graph, key: str):
    """(result, (closure, context)) from the formula's `return result, backward`."""
    returned = graph.outputs[0].node
    if returned.kind is not prim.TupleConstruct or len(returned.inputs) != 2:
        raise TsjitError(f"the formula of {key} must return (result, backward)")
    pair = returned.inputs[1].node
    if pair.kind is not prim.TupleConstruct or pair.inputs[0].node.kind is not prim.Closure:
        raise TsjitError(f"the formula of {key} must return its nested `backward` function")
    return returned.inputs[0], pair


def _backward_graph(closure: Graph) -> Graph:
    """The lifted closure `graph(%context, %grads...)` as `graph(%grads..., %captured...)` returning the
    gradients flat."""
    backward = closure.copy()
    context = backward.inputs[0]
    if context.uses:
        unpack = context.uses[0].user
        for value in unpack.outputs:
            value.replace_all_uses_with(backward.add_input().copy_metadata(value))
        unpack.destroy()
    backward.erase_input(0)
    returned = backward.outputs[0]
    if isinstance(returned.type, TupleType):
        if returned.node.kind is prim.TupleConstruct:
            grads = list(returned.node.inputs)
        else:  # returned from inside an If
            unpack = backward.create(prim.TupleUnpack, [returned], 0).insert_before(backward.return_node)
            grads = [unpack.add_output().set_type(t) for t in returned.type.elements]
        backward.block.return_node.remove_all_inputs()
        for value in grads:
            backward.register_output(value)
    eliminate_dead_code(backward)
    return backward
