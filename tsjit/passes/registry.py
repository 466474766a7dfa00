"""The pass registry: every pass tsjit has, by name, with what it does in one line.

`python -m tsjit.opt` runs passes by these names, the tests hold one `tests/passes/test_<name>.py` per entry, and
every function a pipeline hands to `run_pass` (the frontend's clean-up, the graph executor's stages, freezing, MLIR
preparation) is an entry here or in NOT_GRAPH_ONLY (tests/passes/test_pass_registry.py reads every `run_pass` call in
the package, and records the executor's stages running). A pass's name is its function's
name, so `eliminate_dead_code` is found the same way in a pipeline, on the command line and in a log.

Each entry runs on a graph alone (other parameters take their defaults), so it runs on IR text. The passes that
need more than a graph are listed in NOT_GRAPH_ONLY with the reason instead. Modules load when a pass is first
asked for: listing the registry imports nothing, and the registry imports no frontend or mlir module itself.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Pass:
    """A registered pass: `name(graph) -> bool` in `module`."""

    name: str
    module: str
    description: str

    def load(self) -> Callable[..., bool]:
        """The pass's function (importing its module on first use)."""
        return getattr(importlib.import_module(self.module), self.name)

    @property
    def module_stem(self) -> str:
        return self.module.rsplit(".", 1)[-1]


_PASSES = "tsjit.passes"
_MLIR = "tsjit.mlir.prepare"
_TABLE = (
    # the frontend's clean-up, in its order (tsjit/frontend/cleanup_passes.py)
    ("modified_loops_to_while_loops", "tsjit.frontend.cleanup_passes",
     "a loop with both a trip count and a condition (`for` with `break`) becomes a while loop counting itself"),
    ("normalize_ops", f"{_PASSES}.normalize_ops", "aliased operators renamed to their normal form (absolute -> abs)"),
    ("lower_simple_tuples", f"{_PASSES}.lower_tuples",
     "tuple elements read straight from the prim::TupleConstruct that built them, then dead code removed"),
    ("constant_propagation_immutable_types", f"{_PASSES}.constant_propagation",
     "nodes whose inputs are constants of immutable types run at compile time; Ifs on constants inlined"),
    ("constant_propagation", f"{_PASSES}.constant_propagation",
     "constant_propagation_immutable_types on any values, tensors and lists too, unless alias analysis sees a write"),
    ("constant_pooling", f"{_PASSES}.constant_pooling", "equal constants merged into one, hoisted to the top"),
    ("order_outputs_by_first_use", f"{_PASSES}.output_order",
     "outputs of every If and Loop sorted by their first use, as TorchScript's CanonicalizeOutputs"),
    ("annotate_warns", f"{_PASSES}.annotate_warns", "each aten::warn gets a process-unique warn_id (warn once)"),
    ("inline_calls", f"{_PASSES}.inliner", "calls whose callee graph is known are replaced by its nodes"),
    # the graph executor's stages, in order (tsjit/runtime/graph_executor.py)
    ("specialize_autograd_zero", f"{_PASSES}.specialize_autograd_zero",
     "AutogradAdd, AutogradAnyNonZero and _grad_sum_to_size folded for inputs known undefined"),
    ("propagate_shapes", f"{_PASSES}.shape_analysis",
     "tensor types refined with dtype, rank, device and sizes from the graph's input types"),
    ("eliminate_dead_code", f"{_PASSES}.dead_code_elimination",
     "nodes whose results nobody uses and whose writes nobody sees removed, with dead If and Loop outputs"),
    ("eliminate_common_subexpression", f"{_PASSES}.common_subexpression_elimination",
     "a node equal to an earlier one that dominates it (same kind, inputs, attributes; no writes between) reuses it"),
    ("peephole_optimize", f"{_PASSES}.peephole",
     "local rewrites from a rule table (x + 0, x.dim() of a known rank, no-op to/type_as/expand_as, ...)"),
    ("unroll_loops", f"{_PASSES}.loop_unrolling",
     "small counted loops repeated 8 times (constant short trip counts fully), with an epilogue loop"),
    ("loop_invariant_code_motion", f"{_PASSES}.loop_invariant_code_motion",
     "pure nodes of a loop body whose inputs come from outside the loop (weights' aten::t) moved before the loop"),
    ("create_autodiff_subgraphs", f"{_PASSES}.create_autodiff_subgraphs",
     "runs of nodes with gradient formulas (reading values that may require grad) grouped into "
     "prim::DifferentiableGraph nodes"),
    ("batch_mm", f"{_PASSES}.batch_mm",
     "sums of at least three aten::mm results become one prim::MMTreeReduce (a product of the concatenated operands)"),
    ("transpose_weight_gradients", f"{_PASSES}.transpose_weight_gradients",
     "in a backward graph, t(mm(t(a), b)) becomes mm(t(b), a): a weight's gradient in the weight's layout"),
    ("fuse_graph", f"{_PASSES}.graph_fuser",
     "runs of elementwise float operators grouped into prim::FusionGroup nodes (one compiled kernel each)"),
    ("fuse_concats", f"{_PASSES}.concat_fusion",
     "aten::cat of one prim::FusionGroup's outputs moved into it as a prim::VarConcat its kernel writes (fuse_graph's "
     "last step)"),
    ("check_strict_fusion", f"{_PASSES}.check_strict_fusion",
     "refuses a `with strict_fusion():` block holding anything but prim::FusionGroup nodes; never changes the graph"),
    # the profiling executor's, after fusion (tsjit/runtime/profiling_graph_executor.py)
    ("insert_type_guards", f"{_PASSES}.insert_type_guards",
     "each prim::FusionGroup behind a prim::TypeCheck of its inputs' types, with a prim::FallbackGraph"),
    ("guard_elimination", f"{_PASSES}.guard_elimination",
     "prim::TypeCheck inputs other checks imply removed; checks moved to their definitions and coalesced"),
    # freezing (tsjit/passes/freeze_module.py, frozen_graph_optimizations.py)
    ("unroll_constant_loops", f"{_PASSES}.loop_unrolling",
     "small counted loops with a constant trip count replaced by copies of their body"),
    ("peephole_alias_sensitive", f"{_PASSES}.peephole_alias_sensitive",
     "rewrites that ask alias analysis: dim() of a convolution's result, x + 0, x * 1 (freezing)"),
    ("remove_dropout", f"{_PASSES}.remove_dropout", "dropout in evaluation mode (train=False) replaced by its input"),
    ("fold_frozen_conv_batchnorm", f"{_PASSES}.frozen_conv_folding",
     "batch_norm of a convolution with constant weights folded into the convolution's weight and bias"),
    ("fold_frozen_conv_add_or_sub", f"{_PASSES}.frozen_conv_folding",
     "adding or subtracting a constant after a convolution with constant weights folded into its bias"),
    ("fold_frozen_conv_mul_or_div", f"{_PASSES}.frozen_conv_folding",
     "multiplying or dividing by a constant after a convolution with constant weights folded into its weights"),
    ("fold_frozen_linear_batchnorm", f"{_PASSES}.frozen_linear_folding",
     "batch_norm of a linear layer with constant weights folded into the linear's weight and bias"),
    ("frozen_linear_transpose", f"{_PASSES}.frozen_linear_transpose",
     "linear with a constant weight becomes matmul by the pre-transposed weight (plus the bias)"),
    ("optimize_frozen_graph", f"{_PASSES}.frozen_graph_optimizations",
     "freeze's pipeline: remove_dropout, then the conv and linear foldings until none applies"),
    ("optimize_for_inference_graph", f"{_PASSES}.frozen_graph_optimizations",
     "optimize_for_inference's pipeline: optimize_frozen_graph, then frozen_linear_transpose"),
    # generic rewrites MLIR preparation needs (tsjit/mlir/prepare.py runs them)
    ("remove_mutation", f"{_PASSES}.remove_mutation",
     "in-place ops on tensors nothing else observes become out-of-place (writes into select/slice views too)"),
    ("return_written_inputs", f"{_PASSES}.remove_mutation",
     "tensor inputs written in place are cloned first thing and returned as extra outputs (then removable)"),
    ("inline_fork_wait", f"{_PASSES}.inline_fork_wait",
     "forks whose future is only waited on run their subgraph where forked; the waits read its result"),
    ("eliminate_static_control_flow", f"{_PASSES}.static_control_flow",
     "scalar ops on constants folded, isinstance checks the types decide answered, constant tuples, list and dict "
     "literals forwarded, list literals' writes folded, unused literals removed, Ifs on constants inlined, "
     "constant loops peeled"),
    ("fold_static_types", f"{_PASSES}.fold_static_types",
     "aten::size, aten::dim and prim::dtype of tensors whose refined type states them become constants"),
    # MLIR preparation: torch-mlir's workarounds, in prepare.py's order (each documented there)
    ("decompose_unknown_operators", "tsjit.mlir.decompositions",
     "operators the torch dialect lacks or no backend lowers (aten::diff, addmv, expand_copy, ...) replaced by "
     "their TorchScript definitions"),
    ("remove_profiling", _MLIR, "prim::profile forwards its input"),
    ("fold_tensor_properties", _MLIR,
     "prim::device, is_cuda, is_nested and prim::type of a constant device become constants (cpu by default)"),
    ("fold_tensor_identity_tests", _MLIR, "`a is b` of two different tensor values becomes False, `is not` True"),
    ("remove_grad_mode_contexts", _MLIR, "no_grad()/enable_grad() objects and their Enter/Exit removed"),
    ("remove_prints", _MLIR, "prim::Print and aten::warn removed (compiled programs do not print)"),
    ("replace_raising_branches", _MLIR,
     "an If with one raising branch becomes an aten::_assert_scalar of its condition and the other branch"),
    ("lower_not", _MLIR, "aten::__not__(b) becomes aten::ne(b, True)"),
    ("flip_float_comparisons", _MLIR,
     "float a < b, a <= b and a != b become b > a, b >= a and (a == b) != True (the ones linalg lowers)"),
    ("scalars_to_scalar_tensors", _MLIR, "aten::tensor of a number becomes aten::scalar_tensor"),
    ("literal_tensors_to_constants", _MLIR, "aten::tensor of a list literal of number constants becomes a constant"),
    ("slice_bounds_to_ints", _MLIR,
     "a tensor slice's (and slice_scatter's) None start and end become 0 and the dimension's size"),
    ("decompose_range_ops", _MLIR,
     "aten::__range_length and aten::__derive_index with a constant step become int arithmetic"),
    ("expand_list_reductions", _MLIR,
     "aten::sum, prim::max, prim::min of an int or float list literal nothing writes become scalar adds, max, min"),
    ("loops_to_for_or_while", "tsjit.mlir.loops",
     "loops reshaped so torch-mlir lowers them right: for loops guard a computed condition, while loops peeled"),
    ("reject_list_mutation_in_control_flow", _MLIR,
     "refuses a list mutated inside a loop or branch (torch-mlir mishandles it); never changes the graph"),
    ("flatten_tuple_inputs", _MLIR, "each tuple input becomes one input per element, rebuilt by a TupleConstruct"),
    ("expand_unbind", _MLIR, "aten::unbind of a known size becomes a ListConstruct of selects"),
    ("expand_chunk", _MLIR, "aten::chunk of a known size becomes a ListConstruct of slices"),
    ("flatten_tuple_result", _MLIR, "a returned tuple holding tuples is returned flat"),
    ("return_one_result", _MLIR, "several graph outputs are returned as one flat tuple of their leaves"),
    ("decompose_recurrent_layers", "tsjit.mlir.rnn",
     "aten::lstm, gru, rnn_tanh and rnn_relu unrolled over their time steps into matmuls and activations"),
    ("select_ifs_to_where", _MLIR,
     "an If that only forwards tensors of one static type becomes aten::where on the condition"),
    ("expand_broadcast_tensors", _MLIR,
     "aten::broadcast_tensors of tensors of known sizes becomes aten::broadcast_to of each to the common shape"),
    ("replace_uninitialized", _MLIR, "prim::Uninitialized becomes a zero of its refined type"),
    ("replace_empty_results", _MLIR,
     "an aten op whose results are tensors without elements, or a matrix product over an empty dimension, "
     "becomes zeros of their types"),
)
PASSES: dict[str, Pass] = {name: Pass(name, module, description) for name, module, description in _TABLE}

# Passes that need more than a graph, and why; they are not runnable on IR text.
NOT_GRAPH_ONLY: dict[str, str] = {
    "freeze_module": "needs the module object whose attributes become constants (tsjit/passes/freeze_module.py)",
    "propagate_attributes": "needs the module object whose never-written attributes it reads "
                            "(tsjit/passes/freeze_module.py)",
    "lift_closures": "needs the frontend's clean-up callback, run on every graph it lifts "
                     "(tsjit/frontend/lift_closures.py)",
    "inline_forked_closures": "needs the frontend's clean-up callback, run on every forked graph "
                              "(tsjit/frontend/lift_closures.py)",
    "refine_types": "needs the example arguments' abstract values (tsjit/mlir/shapes.py)",
    "flatten_list_inputs": "needs the lengths of the example lists it expands (tsjit/mlir/prepare.py)",
    "unpack_list_result": "needs the length refinement found for the returned list (tsjit/mlir/prepare.py)",
}

SHORT_NAMES = {"dce": "eliminate_dead_code", "cse": "eliminate_common_subexpression"}


def aliases() -> dict[str, str]:
    """Other names a pass answers to: the short names, and the module of a tsjit/passes module holding a single
    pass (`dead_code_elimination` for `eliminate_dead_code`)."""
    by_module: dict[str, list[str]] = {}
    for entry in PASSES.values():
        if entry.module.startswith(f"{_PASSES}."):
            by_module.setdefault(entry.module_stem, []).append(entry.name)
    single = {stem: names[0] for stem, names in by_module.items() if len(names) == 1 and stem not in PASSES}
    return {**single, **SHORT_NAMES}


def lookup(name: str) -> Pass:
    """The pass called `name` (or one of its aliases); raises KeyError naming it."""
    entry = PASSES.get(name) or PASSES.get(aliases().get(name, ""))
    if entry is None:
        raise KeyError(name)
    return entry
