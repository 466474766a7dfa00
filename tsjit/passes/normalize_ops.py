"""Normalize operator aliases: `aten::absolute` is `aten::abs`, `aten::multiply` is `aten::mul`, ...

    %y : Tensor = aten::greater_equal(%x, %c)     ->     %y : Tensor = aten::ge(%x, %c)

PyTorch spells many operators two ways; graphs use one, so passes need to know only that one (TorchScript's
NormalizeOps, run right after compiling). Only calls on tensors are renamed: `math.degrees(f)` on a float
stays aten::degrees.
"""

from __future__ import annotations

from tsjit import log
from tsjit.ir.graph import Block, Graph, Node
from tsjit.ir.symbols import Symbol
from tsjit.ir.types import TensorType

_ALIASES = {
    "absolute": "abs", "absolute_": "abs_", "clip": "clamp", "clip_": "clamp_", "linalg_det": "det",
    "ger": "outer", "arccos": "acos", "arccos_": "acos_", "arcsin": "asin", "arcsin_": "asin_",
    "arctan": "atan", "arctan_": "atan_", "arctan2": "atan2", "arctan2_": "atan2_", "arccosh": "acosh",
    "arccosh_": "acosh_", "arcsinh": "asinh", "arcsinh_": "asinh_", "arctanh": "atanh", "arctanh_": "atanh_",
    "fix": "trunc", "fix_": "trunc_", "negative": "neg", "negative_": "neg_", "subtract": "sub",
    "subtract_": "sub_", "greater_equal": "ge", "greater_equal_": "ge_", "greater": "gt", "greater_": "gt_",
    "less_equal": "le", "less_equal_": "le_", "less": "lt", "less_": "lt_", "not_equal": "ne",
    "not_equal_": "ne_", "divide": "div", "divide_": "div_", "multiply": "mul", "multiply_": "mul_",
    "linalg_matrix_power": "matrix_power", "row_stack": "vstack", "swapdims": "transpose",
    "swapdims_": "transpose_", "swapaxes": "transpose", "swapaxes_": "transpose_", "moveaxis": "movedim",
    "special_erf": "erf", "special_erfc": "erfc", "special_erfinv": "erfinv", "special_expit": "sigmoid",
    "special_exp2": "exp2", "special_expm1": "expm1", "special_logit": "logit",
    "special_logsumexp": "logsumexp", "special_round": "round", "special_log1p": "log1p",
    "special_sinc": "sinc", "special_digamma": "digamma", "special_psi": "digamma", "special_i0": "i0",
    "special_xlogy": "xlogy", "special_log_softmax": "log_softmax", "orgqr": "linalg_householder_product",
    "adjoint": "mH", "special_multigammaln": "mvlgamma", "special_polygamma": "polygamma",
    "special_softmax": "softmax", "special_gammainc": "igamma", "special_gammaincc": "igammac",
    "special_gammaln": "lgamma", "true_divide": "div", "true_divide_": "div_", "degrees": "rad2deg",
    "degrees_": "rad2deg_", "radians": "deg2rad", "radians_": "deg2rad_",
}
OPERATOR_ALIASES: dict[Symbol, Symbol] = {Symbol(f"aten::{a}"): Symbol(f"aten::{b}") for a, b in _ALIASES.items()}


def normalize_ops(graph: Graph) -> bool:
    """Rename aliased operators to their normal form; returns whether anything changed."""
    return _normalize_block(graph.block)


def _normalize_block(block: Block) -> bool:
    changed = False
    for node in list(block.nodes()):
        for inner in node.blocks:
            changed |= _normalize_block(inner)
        target = OPERATOR_ALIASES.get(node.kind)
        if target is not None and node.inputs and isinstance(node.inputs[0].type, TensorType) \
                and log.opt_allowed():
            _replace_kind(node, target)
            changed = True
    return changed


def _replace_kind(node: Node, kind: Symbol) -> None:
    graph = node.owning_graph
    with graph.insert_point_guard(node):
        replacement = graph.insert_node(graph.create(kind, list(node.inputs), 0))
    for output in node.outputs:
        new_output = replacement.add_output(output.type)
        output.replace_all_uses_with(new_output)
        new_output.copy_metadata(output)
    replacement.source_range = node.source_range
    node.destroy()
