"""Comparisons of a float tensor with a float number, before torch-mlir's TOSA pipeline.

torch-mlir's TOSA conversion of `torch.aten.gt.Scalar` (and ge, lt, le, eq, ne) makes the number an f64 constant
and casts the tensor to f64 to compare them; TOSA's profiles have no f64, so IREE rejects the module
("'tosa.cast' op is not profile-aligned: element type 'f64' is not legal"). torch-mlir's own decompositions compare
that way (softplus's threshold, in nn.Mish and nn.Softplus; hardshrink), and so does F.huber_loss. Eager PyTorch
compares a float tensor with a number in the tensor's dtype, so on the backend contract the number becomes a 0-d
literal of that dtype, which the conversion broadcasts without a cast:

    %c = torch.constant.float 2.000000e+01                  %c = torch.vtensor.literal(dense<2.0e+01> : tensor<f32>)
    %b = torch.aten.gt.Scalar %x, %c              ->        %b = torch.aten.gt.Tensor %x, %c
    (with %x : !torch.vtensor<[3,4],f32>)
"""

from __future__ import annotations

import re

_COMPARISONS = frozenset(f"torch.aten.{name}.Scalar" for name in ("gt", "ge", "lt", "le", "eq", "ne"))
_FLOAT_TENSOR = re.compile(r"!torch\.vtensor<.*,(f16|bf16|f32)>")


def compare_with_tensor_literals(module) -> bool:
    """Rewrite, in a torch-backend-contract module, every comparison of a float tensor with a float constant."""
    from torch_mlir import ir  # deferred: optional and slow to import (the mlir extra)

    found = [op for op in walk_operations(module.operation) if _compares_with_a_float(op)]
    for op in found:
        tensor, number = op.operands
        with ir.InsertionPoint(op), op.location:
            element = ir.Type.parse(_FLOAT_TENSOR.fullmatch(str(tensor.type)).group(1))
            value = ir.FloatAttr(number.owner.attributes["value"]).value
            splat = ir.DenseElementsAttr.get_splat(ir.RankedTensorType.get([], element),
                                                   ir.FloatAttr.get(element, value))
            literal = ir.Operation.create("torch.vtensor.literal", [ir.Type.parse(f"!torch.vtensor<[],{element}>")],
                                          attributes={"value": splat})
            compared = ir.Operation.create(op.name.replace(".Scalar", ".Tensor"), [op.results[0].type],
                                           [tensor, literal.results[0]])
        op.results[0].replace_all_uses_with(compared.results[0])
        op.erase()
    return bool(found)


def _compares_with_a_float(op) -> bool:
    if op.name not in _COMPARISONS:
        return False
    tensor, number = op.operands
    return _FLOAT_TENSOR.fullmatch(str(tensor.type)) is not None and \
        getattr(number.owner, "name", None) == "torch.constant.float"


def walk_operations(operation):
    """Every operation nested in `operation`'s regions, outermost first."""
    for region in operation.regions:
        for block in region.blocks:
            for op in block.operations:
                yield op.operation
                yield from walk_operations(op.operation)
