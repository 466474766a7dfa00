"""Graph preparation before import: the rewrites that let torch-mlir's pipelines accept what TorchScript emits.

Each function is a pass (`graph -> bool`, whether it changed anything) on tsjit's own copy of the program; the
user's graphs are never touched. The workarounds, each with the reason it is needed:

- `replace_raising_branches`: `prim::RaiseException` (from `raise`, `assert`, and checks inside library code
  such as `F.dropout`) has no lowering: linalg leaves `torch.constant.str` illegal, the others fail on the op.
  An If whose branch raises becomes an assert of the other branch's condition followed by that branch's nodes.
  The assert is `aten::_assert_scalar`, which linalg lowers to `cf.assert` (IREE raises its message). TOSA and
  StableHLO lower neither asserts nor the scalar comparisons feeding them, so for those backends the check is
  dropped: the compiled program does not check what the source asserted.
- dead code elimination (tsjit/passes/dead_code_elimination.py, keeping the asserts inserted here): an unused
  `prim::DictConstruct` survives torch-mlir's simplification and fails the backend contract ("unsupported by
  backend contract: type '!torch.dict<...>'"); unused lists and tuples go too, and so do unused constants
  (inlining leaves `Function` constants behind, which have no torch-dialect type) and unused aten ops (torch-mlir
  keeps scalar ops such as an unused `aten::gt.int`, which TOSA cannot lower).
- `select_ifs_to_where`: a prim::If whose branches only forward tensors defined outside it is canonicalized by
  torch-mlir into an `arith.select` of two tensors, which the linalg backend contract rejects. When the two
  tensors have the same static type it becomes `aten::where` on a 0-d bool tensor made from the condition.
- `lower_not`: torch-mlir's linalg backend has no lowering of `aten::__not__` ("failed to legalize operation
  'torch.aten.__not__'"), nor of `aten::eq.bool` against a constant False, but it has `aten::ne.bool`, so
  `not b` becomes `b != True`.
- `flip_float_comparisons`: the linalg backend lowers `aten::gt.float`, `ge.float` and `eq.float` but not
  `lt.float` ("failed to legalize operation 'torch.aten.lt.float'"), `le.float` or `ne.float`, so `a < b`
  becomes `b > a`, `a <= b` becomes `b >= a` and `a != b` becomes `(a == b) != True`.
- `expand_broadcast_tensors`: torch-mlir's shape function for `aten::broadcast_tensors` (which F.huber_loss and
  F.smooth_l1_loss call) fails ("'torch.shape.calculate.yield.shapes' op operand #0 must be variadic of Int
  list type"); with refined sizes each tensor is broadcast to the common shape with `aten::broadcast_to`.
- `replace_uninitialized`: `prim::Uninitialized` (the placeholder the exit transform yields on paths that return
  or break early, never read) has no lowering ("failed to legalize operation 'torch.prim.Uninitialized'"); it
  becomes a zero of its refined type.
- `expand_list_reductions`: torch-mlir has no op for `aten::sum`, `prim::max` or `prim::min` of an int or float
  list (they stay `torch.operator` "aten.sum.float", "prim.max.self_float", which no backend legalizes) but lowers
  their scalar forms: the sum of a list literal nothing writes (a list comprehension over a static size,
  unrolled: `sum([float(x[i].sum()) for i in range(x.size(0))])`, or a flattened list argument) becomes
  `0 + e0 + e1 + ...`, Python's order of additions, and its max and min `max(max(e0, e1), e2)`...
- `replace_empty_results`: torch-mlir and its backends mishandle tensors without elements: a reshape that merges
  the dimensions of a zero-element tensor dies of a floating point exception in torch-mlir (F.unfold of a batch
  of 0), StableHLO's gather of a 0x0 matrix aborts in LLVM (linalg.svd). A tensor without elements is all its
  type, so an aten op whose tensor results all have static sizes with a 0 (and writes nothing) is replaced by
  zeros of those types; so is a matrix product over a shared dimension of size 0 (op_db's linalg.pinv.singular,
  `pinv(a @ b.mT)` of 3x0 matrices: IREE's compiler crashed on the 3x3 linalg.matmul reading 3x0 operands).
- `decompose_range_ops`: `for j in range(a, b, step)` counts with `aten::__range_length` and
  `aten::__derive_index`, which the linalg backend lowers only when everything is constant; with a constant step
  they become int arithmetic, which it lowers.
- `remove_prints`: `prim::Print` and `aten::warn` have no lowering; compiled programs do not print or warn.
- `remove_grad_mode_contexts`: `with torch.no_grad():` creates a script object and enters and exits it
  (prim::CreateObject, Enter, Exit), which have no lowering; compiled programs compute no gradients anyway, so
  `aten::requires_grad_` (a factory's `requires_grad=`, an in-place write the importer refuses) is dropped too.
  `torch.is_grad_enabled()` has no op either; programs ask it to choose between paths that compute the same
  values: nn.MultiheadAttention's and nn.TransformerEncoderLayer's fast paths (taken when it is False) call fused
  kernels torch-mlir has no op for (`aten::_native_multi_head_attention`), so it is True and the composite path,
  which torch-mlir lowers, is compiled; so is `prim::requires_grad` (`x.requires_grad`, the same checks' other
  half, and an unknown op to torch-mlir). Compiled programs do not autocast: `torch.is_autocast_enabled()` (an
  unknown op, one of nn.MultiheadAttention's fast-path checks, which left the checks' If standing with its
  untaken branch unrefined: torch-mlir's inliner then failed on an unrefined `prim::unchecked_cast`) is False.
- `literal_tensors_to_constants`: `torch.tensor([1.0, 2.0, 3.0])` (`aten::tensor` of a list literal) has no lowering
  (linalg and StableHLO leave its list's constants illegal, TOSA the op); of constants, it is a tensor constant,
  which imports as a literal.
- `slice_bounds_to_ints`: TOSA lowers `aten::slice.Tensor` only with constant int bounds (`x[::2]`, `x[1:]` slice
  from or to None: "failed to legalize operation 'torch.aten.slice.Tensor'"), and TOSA and StableHLO lower
  `aten::slice_scatter` (what `y[1:] += 1` becomes) only so; a None start is 0 and a None end the dimension's
  size, which ATen reads the same (the FX route's slices end at INT64_MAX, but StableHLO's lowering of a
  slice_scatter to INT64_MAX, which remove_mutation makes of such a slice, runs out of memory: std::bad_alloc).
- `scalars_to_scalar_tensors`: `torch.tensor(3)` (`aten::tensor.int`, `.float`, `.bool`; TorchScript emits it
  for `y[0] = 3`) has no lowering, while `aten::scalar_tensor` has one.
- `reject_list_mutation_in_control_flow`: torch-mlir does not follow a list mutated inside a loop or branch
  (`out.append(y)` in a loop over a tensor's chunks): its pipeline either drops the writes (`aten::cat` sees the
  empty list) or leaves a module that crashes the MLIR printer (a segmentation fault, seen with
  `torch.cat(out), len(out)`). Such programs are refused with an error naming the node, before torch-mlir runs;
  loops decided at compile time (once refined sizes fix their trip counts) are unrolled first (for every backend),
  which removes many of them.
- `fold_tensor_properties`: `prim::type` (`x.device.type`, which nn.MultiheadAttention's fast-path checks read),
  `prim::is_cuda`, `prim::is_nested` and `prim::layout` (`x.layout == torch.strided` in torch.norm) have no op. A
  compiled program runs on one device, so `prim::device(%t)` becomes the examples' device (cpu without example
  tensors), `prim::type` of a constant device its string and `is_cuda` whether that device is cuda; the torch
  dialect has no nested tensors, so `is_nested` is False, and every tensor is strided (`prim::layout` is 0). The
  comparisons on them then fold (tsjit/passes/static_control_flow.py).
- `fold_tensor_identity_tests`: `a is b` / `a is not b` of two different tensor values has no lowering (the
  ops stay `torch.aten.__isnot__`), and a compiled function cannot tell its arguments apart by identity: they
  are distinct buffers with value semantics. So two different tensor values are not identical (`a is a` folds in
  static_control_flow). nn.MultiheadAttention asks `query is not key` before its other fast-path checks; called
  with three tensors, the fast path (`aten::_native_multi_head_attention`, not in the torch dialect) was kept.
- `decompose_unknown_operators` (tsjit/mlir/decompositions.py): operators the torch dialect does not define
  (`aten::diff`, `aten::soft_margin_loss`, ...) stay `torch.operator`, which no pipeline lowers; they are replaced
  by their definitions in TorchScript.
- `expand_unbind`, `expand_chunk`: `aten::unbind` (`input.unbind(0)`, the seed's LSTM loop over time steps) has
  no TOSA lowering, and torch-mlir neither folds `len` of its list (or of `aten::chunk`'s) nor indexes it at run
  time; with a refined size each becomes a ListConstruct of `select`s / `slice`s. A loop that indexes a list of
  tensors from outside it (`inputs[i]` in `for i in range(len(inputs))`) is unrolled once its trip count is
  known, for every backend, as is one that writes an outer list (`loop_needs_unrolling`; the other loops stay
  loops), which `for p in x.chunk(3): out.append(p * 2)` then no longer is.
- `remove_profiling`: `prim::profile` (graphs recorded by the profiling executor) forwards its input.
- `remove_mutation` (tsjit/passes/remove_mutation.py): in-place ops on tensors nobody else observes become
  out-of-place, so that the program can be imported with value semantics.
- `eliminate_static_control_flow` (tsjit/passes/static_control_flow.py): Ifs on constants are inlined (their dead
  branches may hold in-place ops); the TOSA and StableHLO contracts allow no control flow, so for them loops
  decided at compile time are unrolled as well.
- `loops_to_for_or_while` (tsjit/mlir/loops.py): loops that both count and test a condition are reshaped, because
  torch-mlir lowers a loop either as a for loop (dropping the condition) or as a while loop (dropping the count).
- `flatten_tuple_inputs`: the backend contract allows no tuple at the function boundary, so a tuple argument
  (the seed's `lstm_cell(input, (hx, cx), ...)`) becomes one argument per element and a TupleConstruct.
- `flatten_list_inputs`: nor a list, so a `Tensor[]` or `Tensor?[]` argument given N example tensors
  (`torch.cat(xs)` with `xs` an argument), or an `int[]`, `float[]` or `bool[]` argument given N example numbers
  (`sum(l)`, `a, b, c = l`), becomes N arguments and a ListConstruct, when the program only reads the list; the
  compiled program then takes lists of that length.
- `unpack_list_result`: nor a list result (`torch.split(x, 2)`, `torch.unbind(x)` returned, or `[1, 2]` in a
  returned tuple): once refinement knows its length, the program returns the list's elements in a flat tuple
  (torch-mlir otherwise leaves the `torch.constant.int`s of a returned list of ints unconverted).
- `return_written_inputs` (tsjit/passes/remove_mutation.py) and `return_one_result`: a program that writes its
  tensor inputs in place (`x[0] = 1.0`, `x.zero_()`) cannot be imported with value semantics, and the backend
  contract has no way to write an argument. As torch.export's functionalization does, each written input is
  cloned, remove_mutation removes the writes to the clone, and the clone's final value is returned after the
  program's result (one flat tuple); tsjit.mlir.iree copies it back into the caller's tensor, so that the caller
  sees what eager shows it. (Methods of modules do not get this yet: their writes stay an error.)
- `flatten_tuple_result`: torch-mlir's AdjustCallingConventions expands a returned tuple into several results
  but not a tuple nested in it (LSTM's `(output, (h, c))`, NamedTuples), leaving "'func.return' op has N
  operands"; a nested tuple result is returned flat, and the caller (tsjit.mlir.iree) nests it again by the
  program's result type. (These two change the signature the examples are flattened to, so unlike the other
  rewrites they do not ask `tsjit.log.opt_allowed()`: skipping one would break the call.)
- example arguments specialize `Optional[T]` arguments to T (the boundary allows no optional; nor a Union, whose
  member the example is then the argument's type), as TorchScript's
  profiling executor specializes on whether an optional is None.
- private attributes and methods: see tsjit/mlir/objects.py, where the object graph is written.

Tensor types are refined by tsjit.mlir.shapes, because torch-mlir does not infer types through control flow.
With refined types, recurrent layers are unrolled (`decompose_recurrent_layers`, tsjit/mlir/rnn.py: torch-mlir has
no op for `aten::lstm` / `aten::gru`) and sizes and dtypes the types state become constants
(`fold_static_types`, tsjit/passes/fold_static_types.py), after which static control flow is removed again.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import torch

from tsjit import log
from tsjit.errors import MLIRError, TsjitError
from tsjit.ir import types as ts
from tsjit.ir.constants import constant_value, must_be_none
from tsjit.ir.graph import Block, Graph, Node, Value
from tsjit.ir.scalar_type import code_to_dtype, dtype_to_code
from tsjit.ir.symbols import aten, prim
from tsjit.mlir import shapes
from tsjit.mlir.decompositions import decompose_unknown_operators
from tsjit.mlir.loops import loops_to_for_or_while
from tsjit.mlir.objects import ModuleValue, Slot, instances
from tsjit.mlir.rnn import decompose_recurrent_layers
from tsjit.mlir.types import Default, TensorAnnotation, annotation_from
from tsjit.passes.constant_propagation import inline_if_branch
from tsjit.passes.dead_code_elimination import eliminate_dead_code
from tsjit.passes.fold_static_types import fold_static_types
from tsjit.passes.pass_runner import run_pass
from tsjit.passes.remove_mutation import remove_mutation, return_written_inputs, written_inputs
from tsjit.passes.shape_analysis import may_change_tensor_metadata
from tsjit.passes.static_control_flow import eliminate_static_control_flow, only_read

_CPU = torch.device("cpu")
BACKENDS_WITH_ASSERTS = frozenset({"torch", "linalg-on-tensors"})
BACKENDS_WITHOUT_CONTROL_FLOW = frozenset({"tosa", "stablehlo"})


@dataclass
class PreparedProgram:
    """A program ready to import: the entry graph, and for modules the rewritten object graph."""

    graph: Graph
    module: ModuleValue | None
    value_semantics: bool
    annotations: list[TensorAnnotation | None] = field(default_factory=list)  # per (flattened) input
    result_type: ts.Type | None = None  # the program's own result type (the graph's may be flattened)
    written_inputs: tuple[int, ...] = ()  # (flattened) inputs the program writes, returned after its result
    list_lengths: tuple[int, ...] = ()  # the lengths of the result's lists, returned as their elements


# ---- programs ------------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Options:
    """How to prepare: keep asserts as runtime checks; whether tensors get value semantics (None: yes, and
    an in-place write that remove_mutation cannot remove is an error; False: import as torch-mlir's TorchScript
    importer did, non-value tensors with `torch.type_bound`, and let MaximizeValueSemantics try); whether to
    remove static control flow (for backends without control flow, see tsjit/passes/static_control_flow.py)."""

    checks: bool = True
    value_semantics: bool | None = None
    unroll: bool = False


def prepare_function(graph: Graph, examples: Sequence, options: Options, copy: bool = True) -> PreparedProgram:
    """A copy of `graph` (or, if not `copy`, a graph the caller owns itself) with the workarounds applied and
    types refined for the example arguments."""
    graph = graph.copy() if copy else graph
    result_type = graph.outputs[0].type if len(graph.outputs) == 1 else None
    examples = bind_defaults(graph, examples)
    lengths = _list_lengths_to_flatten(graph, examples)
    run_pass(flatten_list_inputs, graph, lengths)
    examples = [e for i, example in enumerate(examples) for e in (example if i in lengths else [example])]
    flat = _flat_examples(graph.inputs, examples)
    run_pass(flatten_tuple_inputs, graph)
    run_pass(flatten_tuple_result, graph)
    written = tuple(graph.inputs.index(v) for v in written_inputs(graph)) if options.value_semantics is not False \
        else ()
    if written:
        run_pass(return_written_inputs, graph)
        run_pass(return_one_result, graph)
    _specialize_inputs(graph, flat)
    _rewrite(graph, options, _device_of(flat))
    arguments = [_abstract_argument(v.type, e) for v, e in zip(graph.inputs, flat)]
    _refine([graph], graph, arguments, options)
    lengths = _list_lengths(shapes.refine_types(graph, arguments), graph.outputs[0].type) \
        if _returns_list(graph.outputs[0].type) else []
    if run_pass(unpack_list_result, graph, lengths):
        run_pass(eliminate_dead_code, graph, keep_assertions=True)  # (the lists, whose ops may not lower)
        shapes.refine_types(graph, arguments)
    else:
        lengths = []
    annotations = [annotation_from(e) for e in flat]
    return PreparedProgram(graph, None, _value_semantics([graph], options), annotations, result_type, written,
                           tuple(lengths))


def prepare_module(root: ModuleValue, method: str, examples: Sequence, options: Options,
                   copy: bool = True) -> PreparedProgram:
    """A copy of the object graph (one method graph per class, shared by its instances; if not `copy`, an object
    graph the caller owns itself, whose instances of a class already share their methods) with the workarounds
    applied to every method and types refined by running `method` on the example arguments."""
    root = _copy_object_graph(root) if copy else root
    entry = root.methods.get(method)
    if entry is None:
        raise MLIRError(f"{root.qualified_name} has no method {method!r}")
    examples = bind_defaults(entry, examples, offset=1)
    flat = [None, *_flat_examples(entry.inputs[1:], examples)]
    result_type = entry.outputs[0].type
    graphs = _method_graphs(root)
    if any(n.kind is prim.CallMethod and n.s("name") == method for g in graphs for n in g.all_nodes()):
        if any(isinstance(v.type, ts.TupleType) for v in entry.inputs[1:]):
            raise MLIRError(f"{root.qualified_name}.{method}: tuple arguments of a method that other methods "
                            f"call are not supported")
    else:  # (a method other methods call keeps its signature)
        run_pass(flatten_tuple_inputs, entry)
        run_pass(flatten_tuple_result, entry)
    _specialize_inputs(entry, flat)
    for graph in graphs:
        _rewrite(graph, options, _device_of(flat))
    arguments = [shapes.Abstract(root, True)] + [_abstract_argument(v.type, e)
                                                 for v, e in zip(entry.inputs[1:], flat[1:])]
    _refine(graphs, entry, arguments, options)
    annotations = [annotation_from(e) for e in flat]
    return PreparedProgram(entry, root, _value_semantics(graphs, options), annotations, result_type)


def _value_semantics(graphs: Sequence[Graph], options: Options) -> bool:
    if options.value_semantics is False:
        return False
    writer = next((n for graph in graphs for n in graph.all_nodes() if _writes_tensor(n)), None)
    if writer is not None:
        raise MLIRError(f"{writer.kind} writes a tensor that other values can see (a view, an input, an "
                        f"attribute): in-place writes are only removed from tensors nothing else aliases. "
                        f"value_semantics=False imports non-value tensors instead:\n{writer}")
    return True


def _rewrite(graph: Graph, options: Options, device: torch.device) -> None:
    """The rewrites that do not need refined types, in an order where each one's output suits the next."""
    run_pass(remove_profiling, graph)
    run_pass(decompose_unknown_operators, graph)
    run_pass(fold_tensor_properties, graph, device)
    run_pass(fold_tensor_identity_tests, graph)
    run_pass(remove_grad_mode_contexts, graph)
    run_pass(remove_prints, graph)
    run_pass(replace_raising_branches, graph, checks=options.checks)
    run_pass(lower_not, graph)
    run_pass(flip_float_comparisons, graph)
    run_pass(scalars_to_scalar_tensors, graph)
    run_pass(literal_tensors_to_constants, graph)
    run_pass(slice_bounds_to_ints, graph)
    run_pass(decompose_range_ops, graph)
    run_pass(eliminate_dead_code, graph, keep_assertions=True)
    if run_pass(eliminate_static_control_flow, graph, unroll_loops=_unrolls(options)):
        run_pass(eliminate_dead_code, graph, keep_assertions=True)  # (literals whose reads folded: a dict's)
    run_pass(remove_mutation, graph)
    run_pass(loops_to_for_or_while, graph)


def _refine(graphs: Sequence[Graph], entry: Graph, arguments: list[shapes.Abstract], options: Options) -> None:
    """Refine types. Recurrent layers (unrolled over their refined sequence length), static sizes and select-Ifs
    are found with refined types, and what replaces them is refined again. So are the decompositions that hold
    only for some dtypes (tsjit/mlir/decompositions.py), on values whose dtype only refinement knows, until
    none is left (a decomposition may call another one: polygamma's zeta)."""
    shapes.refine_types(entry, arguments)
    while any([run_pass(decompose_unknown_operators, graph) for graph in graphs]):
        shapes.refine_types(entry, arguments)
    if any([run_pass(decompose_recurrent_layers, graph) for graph in graphs]):
        for graph in graphs:
            run_pass(eliminate_dead_code, graph, keep_assertions=True)
        shapes.refine_types(entry, arguments)
    if any([run_pass(expand_unbind, graph) | run_pass(expand_chunk, graph) for graph in graphs]):
        for graph in graphs:
            run_pass(eliminate_static_control_flow, graph, unroll_loops=_unrolls(options))
            run_pass(eliminate_dead_code, graph, keep_assertions=True)
        shapes.refine_types(entry, arguments)
    # (again while unrolled loops leave sizes of constant dimensions: `x.size(i)` in `for i in range(x.dim())`)
    while not any(may_change_tensor_metadata(graph, callees_known=True) for graph in graphs) and \
            any([run_pass(fold_static_types, graph) for graph in graphs]):
        for graph in graphs:
            run_pass(eliminate_static_control_flow, graph, unroll_loops=_unrolls(options))
            run_pass(eliminate_dead_code, graph, keep_assertions=True)
        shapes.refine_types(entry, arguments)
    if any([run_pass(select_ifs_to_where, graph) for graph in graphs]):
        shapes.refine_types(entry, arguments)
    if any([run_pass(expand_broadcast_tensors, graph) for graph in graphs]):
        shapes.refine_types(entry, arguments)
    for graph in graphs:
        if run_pass(expand_list_reductions, graph):
            run_pass(eliminate_dead_code, graph, keep_assertions=True)
        run_pass(replace_uninitialized, graph)
        if run_pass(replace_empty_results, graph):
            run_pass(eliminate_dead_code, graph, keep_assertions=True)
        run_pass(reject_list_mutation_in_control_flow, graph)


def _unrolls(options: Options) -> bool | Callable[[Node], bool]:
    """Which loops decided at compile time are unrolled: all for backends without control flow; else those that
    torch-mlir cannot follow (`loop_needs_unrolling`), and only those: a list built in one loop (torch.norm's
    dimensions) left the Jacobi sweeps of tsjit/mlir/spectral.py, hundreds of iterations, unrolled too."""
    return True if options.unroll else loop_needs_unrolling


def loop_needs_unrolling(loop: Node) -> bool:
    """Whether a loop (its nested blocks included) writes a list defined outside it or reads an element of one
    (`xs[i]` in `for i in range(len(xs))`, the kernel sizes of a pooling decomposition's loop over dimensions):
    torch-mlir follows neither (see the module docstring), and indexes no list at run time; or whether it changes
    the rank of a tensor it carries."""
    return _changes_carried_rank(loop) or \
        any(node.kind in _LIST_ACCESSES and node.inputs and isinstance(node.inputs[0].type, ts.ListType)
            and not _inside(node.inputs[0].node, loop) for block in loop.blocks for node in block.all_nodes())


def _changes_carried_rank(loop: Node) -> bool:
    """Whether the refined types give a tensor the loop carries different ranks (before, in and after the loop:
    `for _ in range(x.dim() - 1 - dim): weight = weight.unsqueeze(-1)`): the torch dialect has no type for it."""
    body = loop.blocks[0]
    carried = zip(loop.inputs[2:], body.inputs[1:], body.outputs[1:], loop.outputs)
    return any(len({_rank(v) for v in values}.difference({None})) > 1 for values in carried)


def _rank(value) -> int | None:
    return value.type.rank if isinstance(value.type, ts.TensorType) else None


def _inside(node: Node, loop: Node) -> bool:
    """Whether `node` is in one of `loop`'s blocks (at any depth)."""
    while node.owning_block is not None and node.owning_block.owning_node is not None:
        node = node.owning_block.owning_node
        if node is loop:
            return True
    return False


def _copy_object_graph(root: ModuleValue) -> ModuleValue:
    """Copies of every instance; each class's methods are copied once and shared by all its instances, so that
    the types refined for one call are joined with those of every other call."""
    method_copies: dict[str, dict[str, Graph]] = {}
    copies: dict[int, ModuleValue] = {}
    for module in instances(root):
        methods = method_copies.setdefault(module.qualified_name,
                                           {name: g.copy() for name, g in module.methods.items()})
        slots = [Slot(s.name, s.type, copies.get(id(s.value), s.value)) for s in module.slots]
        copies[id(module)] = ModuleValue(module.qualified_name, slots, methods)
    return copies[id(root)]


def _method_graphs(root: ModuleValue) -> list[Graph]:
    unique = {id(g): g for module in instances(root) for g in module.methods.values()}
    return list(unique.values())


# ---- arguments -------------------------------------------------------------------------------------------
def _flat_examples(inputs, examples: Sequence) -> list:
    """One example (or annotation, or None) per input once tuple inputs are flattened."""
    if len(examples) > len(inputs):
        raise MLIRError(f"{len(examples)} example arguments or annotations for {len(inputs)} arguments")
    padded = list(examples) + [None] * (len(inputs) - len(examples))
    return [e for value, example in zip(inputs, padded) for e in _flatten_example(value.type, example)]


def bind_defaults(graph: Graph, examples: Sequence, offset: int = 0) -> list:
    """Inputs whose example is a Default become constants of that value and leave the signature; the examples of
    the inputs that stay. (Like the tuple flattening, this changes the signature the call is made with, so it
    does not ask `tsjit.log.opt_allowed()`.)"""
    kept = []
    for index, example in reversed(list(enumerate(examples))):
        if not isinstance(example, Default):
            kept.insert(0, example)
            continue
        value = graph.inputs[offset + index]
        constant = graph.insert_constant(example.value)
        first = next(iter(graph.block.nodes()))
        if first is not constant.node:
            constant.node.move_before(first)
        value.replace_all_uses_with(constant)
        graph.erase_input(offset + index)
    return kept


def _flatten_example(type_: ts.Type, example) -> list:
    if not isinstance(type_, ts.TupleType):
        return [example]
    parts = example if isinstance(example, tuple) else (None,) * len(type_.elements)
    return [e for t, part in zip(type_.elements, parts) for e in _flatten_example(t, part)]


def _specialize_inputs(graph: Graph, examples: Sequence) -> None:
    """Annotated tensor inputs get their refined type; an `Optional[T]` input given a T becomes T, a Union input
    the member its example belongs to."""
    for value, example in zip(graph.inputs, examples):
        annotation = annotation_from(example)
        declared = value.type.elem if isinstance(value.type, ts.OptionalType) else value.type
        if annotation is not None and not isinstance(declared, ts.TensorType):
            raise MLIRError(f"argument %{value.debug_name} : {value.type} got a tensor annotation")
        if annotation is not None:
            value.set_type(annotation.tensor_type())
        elif example is not None and isinstance(value.type, ts.OptionalType):
            value.set_type(declared)
        elif example is not None and isinstance(value.type, ts.UnionType):
            value.set_type(_member_of(value.type, example))


def _member_of(union: ts.UnionType, example) -> ts.Type:
    """The member of a Union input an example belongs to (the Union itself where none or several may hold it)."""
    try:
        example_type = ts.type_of(example)
    except TsjitError:
        return union
    members = [t for t in union.types if example_type.is_subtype_of(t)]
    return members[0] if len(members) == 1 else union


def _abstract_argument(type_: ts.Type, example) -> shapes.Abstract:
    annotation = annotation_from(example)
    if isinstance(annotation, TensorAnnotation):
        return shapes.meta_tensor([None if s == -1 else s for s in annotation.sizes], annotation.dtype)
    return shapes.stand_in(type_)


def flatten_tuple_inputs(graph: Graph) -> bool:
    """Replace each tuple input by its elements (recursively) and rebuild the tuple first thing:

        graph(%x : Tensor, %hidden : (Tensor, Tensor))   ->   graph(%x : Tensor, %hidden.0 : Tensor,
                                                                     %hidden.1 : Tensor):
                                                                %hidden : (Tensor, Tensor) = prim::TupleConstruct(...)
    """
    changed = False
    index = 0
    while index < len(graph.inputs):
        value = graph.inputs[index]
        if isinstance(value.type, ts.TupleType):
            _expand_tuple_input(graph, index)
            changed = True
        else:
            index += 1
    return changed


def _list_lengths_to_flatten(graph: Graph, examples: Sequence) -> dict[int, int]:
    """The inputs flatten_list_inputs expands: lists of tensors or numbers given a non-empty list of such examples
    and only read (a list the program writes to stays a list), by position, with their lengths."""
    return {i: len(e) for i, (value, e) in enumerate(zip(graph.inputs, examples))
            if isinstance(e, list | tuple) and e and _examples_fit(_declared(value.type), e) and only_read(value)}


_TENSOR_LISTS = (ts.ListType(ts.TensorType.get()), ts.ListType(ts.OptionalType(ts.TensorType.get())))
_NUMBER_LISTS = {ts.ListType(ts.IntType.get()): int, ts.ListType(ts.FloatType.get()): float,
                 ts.ListType(ts.BoolType.get()): bool}


def _examples_fit(type_: ts.Type, examples: Sequence) -> bool:
    """Whether every example is an element the flattened input's type takes (bools are not ints here)."""
    if type_ in _TENSOR_LISTS:
        return all(isinstance(e, torch.Tensor) for e in examples)
    python_type = _NUMBER_LISTS.get(type_)
    return python_type is not None and all(type(e) is python_type for e in examples)


def _declared(type_: ts.Type) -> ts.Type:
    """The type an `Optional[T]` input given an example has (see _specialize_inputs)."""
    return type_.elem if isinstance(type_, ts.OptionalType) else type_


def flatten_list_inputs(graph: Graph, lengths: dict[int, int]) -> bool:
    """Replace each list input of `lengths` (position -> length of its example list: `Tensor[]`, `Tensor?[]`,
    `int[]`, `float[]`, `bool[]`) by that many inputs of its element type (tensors for `Tensor?[]`) and a
    ListConstruct first thing; the backend contract allows no list at the function boundary, so the compiled
    program takes the elements (tsjit.mlir.iree flattens a list argument):

        graph(%xs : Tensor[])   ->   graph(%xs.0 : Tensor, %xs.1 : Tensor):
                                       %xs : Tensor[] = prim::ListConstruct(%xs.0, %xs.1)
    (Like the tuple flattening, this changes the signature, so it does not ask `tsjit.log.opt_allowed()`.)
    """
    for index in sorted(lengths, reverse=True):
        value = graph.inputs[index]
        list_type = _declared(value.type)
        element_type = ts.TensorType.get() if list_type in _TENSOR_LISTS else list_type.elem
        elements = [graph.insert_input(index + i, f"{value.debug_name}.{i}").set_type(element_type)
                    for i in range(lengths[index])]
        construct = graph.create(prim.ListConstruct, elements)
        construct.output().set_type(list_type)
        graph.block.prepend_node(construct)
        value.replace_all_uses_with(construct.output())
        graph.erase_input(graph.inputs.index(value))
    return bool(lengths)


def _expand_tuple_input(graph: Graph, index: int) -> None:
    value = graph.inputs[index]
    elements = [graph.insert_input(index + i, f"{value.debug_name}.{i}").set_type(t)
                for i, t in enumerate(value.type.elements)]
    construct = graph.create(prim.TupleConstruct, elements)
    construct.output().set_type(value.type)
    graph.block.prepend_node(construct)
    value.replace_all_uses_with(construct.output())
    graph.erase_input(graph.inputs.index(value))


def _list_lengths(result: shapes.Abstract, type_: ts.Type) -> list[int | None]:
    """The lengths refinement found for the lists of a result (the result itself, or the elements of a
    returned tuple), in order; None where it is unknown."""
    if isinstance(type_, ts.ListType):
        return [len(result.value) if isinstance(result.value, list) else None]
    if not isinstance(type_, ts.TupleType):
        return []
    values = result.value if isinstance(result.value, tuple) else (None,) * len(type_.elements)
    return [len(v) if isinstance(v, list) else None for v, t in zip(values, type_.elements)
            if isinstance(t, ts.ListType)]


def _returns_list(type_: ts.Type) -> bool:
    return isinstance(type_, ts.ListType) or \
        isinstance(type_, ts.TupleType) and any(isinstance(t, ts.ListType) for t in type_.elements)


_UNPACKED_ELEMENTS = (ts.TensorType, ts.IntType, ts.FloatType, ts.BoolType)


def unpack_list_result(graph: Graph, lengths: Sequence[int | None] = ()) -> bool:
    """Return the lists of the result (the result itself, or elements of a returned tuple) as their elements,
    once refinement knows their `lengths` (one per list, in order): the backend contract allows no list at the
    function boundary. The result becomes one flat tuple; tsjit.mlir.iree makes the lists again by the
    program's result type and these lengths:

        %parts : Tensor[] = aten::split(%x, %two, %zero)        %a : Tensor, %b : Tensor = prim::ListUnpack(%parts)
        return (%parts)                                   ->     %t : (Tensor, Tensor) = prim::TupleConstruct(%a, %b)
                                                                 return (%t)
    (It changes the signature the results come back in, so it does not ask `tsjit.log.opt_allowed()`.)
    """
    result = graph.outputs[0] if len(graph.outputs) == 1 else None
    if result is None or not lengths or None in lengths:
        return False
    lists = [t for t in (result.type.elements if isinstance(result.type, ts.TupleType) else [result.type])
             if isinstance(t, ts.ListType)]
    if len(lists) != len(lengths) or not all(isinstance(t.elem, _UNPACKED_ELEMENTS) for t in lists):
        return False
    with graph.insert_point_guard(graph.return_node):
        remaining = iter(lengths)
        leaves = [e for part in _tuple_leaves(graph, result) for e in
                  (_list_elements(graph, part, next(remaining)) if isinstance(part.type, ts.ListType) else [part])]
        elements = graph.insert_node(graph.create(prim.TupleConstruct, leaves))
        elements.output().set_type(ts.TupleType([leaf.type for leaf in leaves]))
    graph.return_node.replace_input(0, elements.output())
    return True


def _list_elements(graph: Graph, value, length: int) -> list:
    """A list's elements: the inputs of the ListConstruct it is (or of which it is an `aten::list` copy) when
    nothing writes either list, else a ListUnpack's outputs. (torch-mlir lowers neither `aten::list` nor a
    ListUnpack of its result.)"""
    source = value.node.input(0) if value.node.kind is aten.list and len(value.node.inputs) == 1 else value
    if source.node.kind is prim.ListConstruct and not _is_written_list(value) and not _is_written_list(source):
        return list(source.node.inputs)
    unpack = graph.insert_node(graph.create(prim.ListUnpack, [value], length))
    for output in unpack.outputs:
        output.set_type(value.type.elem)
    return list(unpack.outputs)


def flatten_tuple_result(graph: Graph) -> bool:
    """Return a tuple holding tuples as one flat tuple of its leaves, in order:

        return (%out, (%h, %c))   ->   %flat : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%out, %h, %c)
                                       return (%flat)
    """
    if len(graph.outputs) != 1:
        return False
    result = graph.outputs[0]
    if not isinstance(result.type, ts.TupleType) or not any(
            isinstance(t, ts.TupleType) for t in result.type.elements):
        return False
    with graph.insert_point_guard(graph.return_node):
        leaves = _tuple_leaves(graph, result)
        flat = graph.insert_node(graph.create(prim.TupleConstruct, leaves))
        flat.output().set_type(ts.TupleType([leaf.type for leaf in leaves]))
    graph.return_node.replace_input(0, flat.output())
    return True


def return_one_result(graph: Graph) -> bool:
    """Several graph outputs (the program's result, then the inputs it writes: return_written_inputs) become
    one flat tuple of their leaves; a None result has none. tsjit.mlir.iree splits the written inputs off again
    and copies them into the caller's tensors:

        return (%r, %x.w)   ->   %t : (Tensor, Tensor) = prim::TupleConstruct(%r, %x.w)
                                 return (%t)
    (It changes the signature the results come back in, so it does not ask `tsjit.log.opt_allowed()`.)
    """
    if len(graph.outputs) < 2:
        return False
    with graph.insert_point_guard(graph.return_node):
        leaves = [leaf for v in graph.outputs if not isinstance(v.type, ts.NoneType)
                  for leaf in _tuple_leaves(graph, v)]
        flat = graph.insert_node(graph.create(prim.TupleConstruct, leaves))
        flat.output().set_type(ts.TupleType([leaf.type for leaf in leaves]))
    while graph.outputs:
        graph.erase_output(0)
    graph.register_output(flat.output())
    return True


def _tuple_leaves(graph: Graph, value):
    if not isinstance(value.type, ts.TupleType):
        return [value]
    if value.node.kind is prim.TupleConstruct:
        elements = list(value.node.inputs)
    else:
        unpack = graph.insert_node(graph.create(prim.TupleUnpack, [value], len(value.type.elements)))
        for output, type_ in zip(unpack.outputs, value.type.elements):
            output.set_type(type_)
        elements = list(unpack.outputs)
    return [leaf for element in elements for leaf in _tuple_leaves(graph, element)]


# ---- workarounds -------------------------------------------------------------------------------------------
def replace_raising_branches(graph: Graph, checks: bool = True) -> bool:
    """An If with one raising branch becomes (an assert of) the other branch's condition and its nodes:

        prim::If(%ok)                                   %i : int = aten::Int(%ok)
          block0(): -> ()                      ->       aten::_assert_scalar(%i, "AssertionError: n > 0")
          block1(): prim::RaiseException(%msg) -> ()
    """
    changed = False
    for node in [n for n in reversed(list(graph.all_nodes())) if n.kind is prim.If]:
        raising = [_raises(block) for block in node.blocks]
        if raising.count(True) == 1 and log.opt_allowed():
            _keep_branch(graph, node, raising.index(False), checks)
            changed = True
    return changed


def _raises(block: Block) -> bool:
    return any(node.kind is prim.RaiseException for node in block.nodes())


def _keep_branch(graph: Graph, node: Node, kept: int, checks: bool) -> None:
    with graph.insert_point_guard(node):
        if checks:
            condition = node.input() if kept == 0 else graph.insert(aten.__not__, [node.input()])
            message = _exception_message(node.blocks[1 - kept])
            graph.insert(aten._assert_scalar, [graph.insert(aten.Int, [condition]), message])
    inline_if_branch(node, kept)


def _exception_message(block: Block) -> str:
    """The raised message when it is a constant, else the name of the exception class."""
    raise_node = next(n for n in block.nodes() if n.kind is prim.RaiseException)
    message, *exception_class = raise_node.inputs
    if message.node.kind is prim.Constant:
        return constant_value(message.node)
    name = constant_value(exception_class[0].node) if exception_class and \
        exception_class[0].node.kind is prim.Constant else None
    return f"{name or 'Exception'} raised"


def lower_not(graph: Graph) -> bool:
    """`aten::__not__(%b)` -> `aten::ne(%b, True)`."""
    nodes = [n for n in graph.all_nodes() if n.kind is aten.__not__ and log.opt_allowed()]
    for node in nodes:
        with graph.insert_point_guard(node):
            node.output().replace_all_uses_with(graph.insert(aten.ne, [node.input(), True]))
        node.destroy()
    return bool(nodes)


_FLIPPED_FLOAT_COMPARISONS = {aten.lt: aten.gt, aten.le: aten.ge}


def flip_float_comparisons(graph: Graph) -> bool:
    """`aten::lt(%a, %b)` on floats -> `aten::gt(%b, %a)`, `le` -> `ge` with the operands swapped, and
    `aten::ne(%a, %b)` -> `aten::ne(aten::eq(%a, %b), True)` (equal for NaN too: `a != a` is True)."""
    nodes = [n for n in graph.all_nodes() if (n.kind in _FLIPPED_FLOAT_COMPARISONS or n.kind is aten.ne)
             and len(n.inputs) == 2 and all(isinstance(v.type, ts.FloatType) for v in n.inputs)
             and log.opt_allowed()]
    for node in nodes:
        a, b = node.inputs
        with graph.insert_point_guard(node):
            if node.kind is aten.ne:
                replacement = graph.insert(aten.ne, [graph.insert(aten.eq, [a, b]), True])
            else:
                replacement = graph.insert(_FLIPPED_FLOAT_COMPARISONS[node.kind], [b, a])
        node.output().replace_all_uses_with(replacement)
        node.destroy()
    return bool(nodes)


def expand_broadcast_tensors(graph: Graph) -> bool:
    """`aten::broadcast_tensors` of a list of tensors whose refined sizes are all known -> each tensor
    broadcast to the common shape, a constant:

        %l : Tensor[] = prim::ListConstruct(%a, %b)           %s : int[] = prim::Constant[value=[4, 5]]()
        %r : Tensor[] = aten::broadcast_tensors(%l)     ->    %a.b : Tensor = aten::broadcast_to(%a, %s) ...
                                                              %r : Tensor[] = prim::ListConstruct(%a.b, %b.b)
    """
    nodes = [n for n in graph.all_nodes() if n.kind is aten.broadcast_tensors and _static_sizes(n.input())
             is not None and log.opt_allowed()]
    for node in nodes:
        tensors = list(node.input().node.inputs)
        shape = list(torch.broadcast_shapes(*_static_sizes(node.input())))
        with graph.insert_point_guard(node):
            sizes = graph.insert_constant(shape, ts.ListType(ts.IntType.get()))
            expanded = [graph.insert(aten.broadcast_to, [t, sizes]) for t in tensors]
            for tensor, value in zip(tensors, expanded):
                value.set_type(dataclasses.replace(tensor.type, sizes=tuple(shape), strides=None))
            rebuilt = graph.insert_node(graph.create(prim.ListConstruct, expanded))
        rebuilt.output().set_type(node.output().type)
        node.output().replace_all_uses_with(rebuilt.output())
        node.destroy()
    return bool(nodes)


def _static_sizes(tensors) -> list[tuple[int, ...]] | None:
    """The sizes of a ListConstruct's tensors when every one is known, else None."""
    if tensors.node.kind is not prim.ListConstruct:
        return None
    sizes = [getattr(v.type, "sizes", None) for v in tensors.node.inputs]
    known = all(s is not None and None not in s for s in sizes)
    return sizes if known and sizes else None


def replace_uninitialized(graph: Graph) -> bool:
    """`prim::Uninitialized` -> a zero of its type: 0, 0.0, False, None, or zeros of a tensor's refined rank
    and dtype (unknown sizes are 0: the value is never read)."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind is prim.Uninitialized]:
        with graph.insert_point_guard(node):
            zero = _zero_of(graph, node.output().type)
        if zero is not None and log.opt_allowed():
            node.output().replace_all_uses_with(zero)
            node.destroy()
            changed = True
    return changed


def replace_empty_results(graph: Graph) -> bool:
    """An aten op whose results are all tensors of static sizes without elements, or a matrix product over an
    empty dimension -> zeros of those types (the op itself is left for dead-code elimination, which keeps it where
    it may raise or has side effects)."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind.ns == "aten" and n.kind is not aten.zeros and
                                            (_has_only_empty_results(n) or _multiplies_over_nothing(n))]:
        if _writes_tensor(node) or not any(o.uses for o in node.outputs) or not log.opt_allowed():
            continue
        with graph.insert_point_guard(node):
            for output in node.outputs:
                output.replace_all_uses_with(_zero_of(graph, output.type))
        changed = True
    return changed


def _multiplies_over_nothing(node: Node) -> bool:
    """A matrix product whose operands' shared dimension has the static size 0: zeros of its (static) type."""
    if node.kind not in (aten.matmul, aten.mm, aten.bmm) or len(node.outputs) != 1:
        return False
    sizes = getattr(node.inputs[0].type, "sizes", None)
    result = node.output().type
    return bool(sizes) and sizes[-1] == 0 and isinstance(result, ts.TensorType) and result.dtype is not None and \
        result.sizes is not None and None not in result.sizes


def _has_only_empty_results(node: Node) -> bool:
    return bool(node.outputs) and all(
        isinstance(o.type, ts.TensorType) and o.type.dtype is not None and o.type.sizes is not None and
        None not in o.type.sizes and 0 in o.type.sizes for o in node.outputs)


_SCALAR_ZEROS = {ts.IntType: 0, ts.FloatType: 0.0, ts.BoolType: False, ts.NoneType: None}


def _zero_of(graph: Graph, type_: ts.Type):
    if type(type_) in _SCALAR_ZEROS:
        return graph.insert_constant(_SCALAR_ZEROS[type(type_)])
    if not isinstance(type_, ts.TensorType) or type_.sizes is None or type_.dtype is None:
        return None
    zeros = graph.insert(aten.zeros, [[s or 0 for s in type_.sizes]], {"dtype": type_.dtype})
    return zeros.set_type(type_)


def decompose_range_ops(graph: Graph) -> bool:
    """With a constant step s: `__range_length(lo, hi, s)` -> `max((hi - lo + s - 1) // s, 0)` (for s > 0; the
    mirror image for s < 0) and `__derive_index(i, start, s)` -> `start + i * s`."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in (aten.__range_length, aten.__derive_index)]:
        step = node.input(2)
        if step.node.kind is not prim.Constant or constant_value(step.node) == 0 or not log.opt_allowed():
            continue
        with graph.insert_point_guard(node):
            result = _range_arithmetic(graph, node, constant_value(step.node))
        node.output().replace_all_uses_with(result)
        node.destroy()
        changed = True
    return changed


def expand_list_reductions(graph: Graph) -> bool:
    """`aten::sum(%l)`, `prim::max(%l)`, `prim::min(%l)` of `%l = prim::ListConstruct(e0, e1, ...)` of ints or
    floats that nothing writes -> `((0 + e0) + e1) + ...`, `max(max(e0, e1), ...)`, `min(min(e0, e1), ...)`."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in _LIST_REDUCTIONS and len(n.inputs) == 1]:
        elements = node.input(0)
        if elements.node.kind is not prim.ListConstruct or _is_written_list(elements) or \
                not isinstance(elements.type, ts.ListType) or \
                type(elements.type.elem) not in (ts.IntType, ts.FloatType) or \
                node.kind is not aten.sum and not elements.node.inputs or not log.opt_allowed():
            continue
        with graph.insert_point_guard(node):
            result = _reduce(graph, node.kind, elements)
        node.output().replace_all_uses_with(result)
        node.destroy()
        changed = True
    return changed


_LIST_REDUCTIONS = (aten.sum, prim.max, prim.min)


def _reduce(graph: Graph, kind, elements: Value) -> Value:
    """The elements combined left to right: a sum from zero by adds (Python's order of additions, and the sum of
    no elements), a max or min by keeping the element so far unless a later one is greater (less), as Python's
    `max` and `min` keep the first of equal elements. torch-mlir has `prim::max.int` but no float max or min,
    so the choice is an If on `aten::gt`, which every backend lowers for ints and floats:

        %m : float = prim::max(%l)   ->   %c : bool = aten::gt(%e1, %e0)
                                          %m : float = prim::If(%c)
                                            block0(): -> (%e1)
                                            block1(): -> (%e0)
    """
    values = list(elements.node.inputs)
    if kind is aten.sum:
        values.insert(0, graph.insert_constant(0.0 if isinstance(elements.type.elem, ts.FloatType) else 0))
    result = values[0]
    for value in values[1:]:
        if kind is aten.sum:
            result = graph.insert(aten.add, [result, value])
        else:
            replaces = graph.insert(aten.gt, [value, result] if kind is prim.max else [result, value])
            result = _choose(graph, replaces, value, result)
    return result


def _choose(graph: Graph, condition: Value, then: Value, otherwise: Value) -> Value:
    """`then if condition else otherwise`, as a prim::If at the insertion point."""
    choice = graph.insert_node(graph.create(prim.If, [condition], num_outputs=1))
    for result in (then, otherwise):
        choice.add_block().register_output(result)
    return choice.output().set_type(then.type)


def _range_arithmetic(graph: Graph, node: Node, step: int):
    first, second = node.input(0), node.input(1)
    if node.kind is aten.__derive_index:
        return graph.insert(aten.add, [second, graph.insert(aten.mul, [first, step])])
    low, high = (first, second) if step > 0 else (second, first)
    span = graph.insert(aten.add, [graph.insert(aten.sub, [high, low]), abs(step) - 1])
    return graph.insert(prim.max, [graph.insert(aten.floordiv, [span, abs(step)]), 0])


def remove_prints(graph: Graph) -> bool:
    """Delete `prim::Print` and `aten::warn`, which have no outputs and no lowering."""
    nodes = [n for n in graph.all_nodes() if n.kind in (prim.Print, aten.warn) and log.opt_allowed()]
    for node in nodes:
        node.destroy()
    return bool(nodes)


_GRAD_MODES = frozenset({"__torch__.torch.autograd.grad_mode.no_grad",
                         "__torch__.torch.autograd.grad_mode.enable_grad"})


_GRAD_QUERIES = {aten.is_grad_enabled: True, prim.requires_grad: True, aten.is_autocast_enabled: False}


def remove_grad_mode_contexts(graph: Graph) -> bool:
    """Delete `no_grad()` / `enable_grad()` objects with their `__init__` call, Enter and Exit, answer
    `aten::is_grad_enabled()` and `prim::requires_grad(%t)` with True and `aten::is_autocast_enabled()` with
    False (see the module docstring); `x.requires_grad_(b)` (`torch.empty(..., requires_grad=b)`) is `x`, and
    `torch.get_default_dtype()` (prim::get_default_dtype) is the default dtype when the program is compiled:

        %g : __torch__...no_grad = prim::CreateObject()
        %n : NoneType = prim::CallMethod[name="__init__"](%g)      ->    (nothing)
        %e : NoneType = prim::Enter(%g)   ...   %t = prim::Exit(%g)
    """
    objects = [n for n in graph.all_nodes() if n.kind is prim.CreateObject
               and getattr(n.output().type, "qualified_name", None) in _GRAD_MODES and log.opt_allowed()]
    for node in objects:
        for use in list(node.output().uses):
            if not use.user.has_uses():
                use.user.destroy()
        if not node.has_uses():
            node.destroy()
    grad_mode = _replace_by_constant(graph, [n for n in graph.all_nodes() if n.kind in _GRAD_QUERIES
                                             and log.opt_allowed()], lambda node: _GRAD_QUERIES[node.kind])
    marks = [n for n in graph.all_nodes() if n.kind is aten.requires_grad_ and log.opt_allowed()]
    for node in marks:
        node.output().replace_all_uses_with(node.input(0))
        node.destroy()
    default_dtype = _replace_by_constant(graph, [n for n in graph.all_nodes() if n.kind is prim.get_default_dtype
                                                 and log.opt_allowed()],
                                         lambda node: dtype_to_code(torch.get_default_dtype()))
    return bool(objects) or grad_mode or bool(marks) or default_dtype


_DEFAULT_DTYPES = {ts.IntType: torch.int64, ts.FloatType: torch.float32, ts.BoolType: torch.bool}


def scalars_to_scalar_tensors(graph: Graph) -> bool:
    """`aten::tensor(%n, %dtype, %device, %requires_grad)` of a number -> `aten::scalar_tensor(%n, dtype=...,
    device=%device)`; without a dtype, the one torch.tensor picks for the number (int64, float32, bool)."""
    nodes = [n for n in graph.all_nodes()
             if n.kind is aten.tensor and type(n.input(0).type) in _DEFAULT_DTYPES and len(n.inputs) == 4
             and log.opt_allowed()]
    for node in nodes:
        value, dtype, device, _ = node.inputs
        with graph.insert_point_guard(node):
            if isinstance(dtype.type, ts.NoneType):
                dtype = graph.insert_constant(_DEFAULT_DTYPES[type(value.type)])
            number = value if not isinstance(value.type, ts.BoolType) else graph.insert(aten.Int, [value])
            tensor = graph.insert(aten.scalar_tensor, [number], {"dtype": dtype, "device": device})
        node.output().replace_all_uses_with(tensor.set_type(node.output().type))
        node.destroy()
    return bool(nodes)


def literal_tensors_to_constants(graph: Graph) -> bool:
    """`aten::tensor(%l, %dtype, %device, %requires_grad)` of a list literal of number constants (and constant
    other arguments) -> the tensor torch.tensor makes of them, as a constant."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind is aten.tensor and len(n.inputs) == 4]:
        literal = node.input(0).node
        if literal.kind is not prim.ListConstruct or not all(
                v.node.kind is prim.Constant and type(v.type) in _DEFAULT_DTYPES for v in literal.inputs) or \
                not all(v.node.kind is prim.Constant for v in node.inputs[1:]) or not log.opt_allowed():
            continue
        dtype, device, _ = (constant_value(v.node) for v in node.inputs[1:])
        value = torch.tensor([constant_value(v.node) for v in literal.inputs],
                             dtype=None if dtype is None else code_to_dtype(dtype), device=device)
        with graph.insert_point_guard(node):
            node.output().replace_all_uses_with(graph.insert_constant(value))
        node.destroy()
        changed = True
    return changed


def slice_bounds_to_ints(graph: Graph) -> bool:
    """`aten::slice(%tensor, %dim, None, None, %step)` -> `aten::slice(%tensor, %dim, 0, aten::size(%tensor, %dim),
    %step)`, and the same for `aten::slice_scatter`'s bounds (the size folds once refined types state it)."""
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind in _SLICE_BOUNDS and isinstance(n.input(0).type,
                                                                                        ts.TensorType)]:
        start = _SLICE_BOUNDS[node.kind]
        for index in (start, start + 1):
            if index < len(node.inputs) and must_be_none(node.input(index)) and log.opt_allowed():
                with graph.insert_point_guard(node):
                    node.replace_input(index, graph.insert_constant(0) if index == start else
                                       graph.insert(aten.size, [node.input(0), node.input(start - 1)]))
                changed = True
    return changed


_SLICE_BOUNDS = {aten.slice: 2, aten.slice_scatter: 3}  # (the start's position; the dim's before, the end's after)


_LIST_MUTATIONS = frozenset({aten.append, aten.insert, aten.extend, aten.pop, aten.clear, aten.remove,
                             aten.reverse, aten.sort, aten._set_item})
_LIST_ACCESSES = _LIST_MUTATIONS | {aten.__getitem__}


def expand_unbind(graph: Graph) -> bool:
    """`aten::unbind(%x, %d)` of a tensor whose refined size n at constant dimension d is known -> a
    ListConstruct of the n `aten::select`s, whose length and elements later passes read (torch-mlir lowers no
    `unbind` to TOSA, nor a `len` of one):

        %xs : Tensor[] = aten::unbind(%x, %zero)      ->     %a : Tensor = aten::select(%x, %zero, %zero)
                                                             %b : Tensor = aten::select(%x, %zero, %one)
                                                             %xs : Tensor[] = prim::ListConstruct(%a, %b)
    """
    nodes = [n for n in graph.all_nodes() if n.kind is aten.unbind and _unbound_count(n) is not None
             and log.opt_allowed()]
    for node in nodes:
        tensor, dimension = node.inputs
        with graph.insert_point_guard(node):
            parts = [graph.insert(aten.select, [tensor, dimension, i]) for i in range(_unbound_count(node))]
            construct = graph.insert_node(graph.create(prim.ListConstruct, parts))
        construct.output().set_type(node.output().type)
        node.output().replace_all_uses_with(construct.output())
        node.destroy()
    return bool(nodes)


def _unbound_count(node: Node) -> int | None:
    """The size of the dimension `aten::unbind` splits, when the refined type and a constant state it."""
    return _static_size(node.input(0), node.input(1)) if len(node.inputs) == 2 else None


def _static_size(tensor, dimension) -> int | None:
    """The refined size of `tensor` at the constant `dimension`, when both are known."""
    sizes = getattr(tensor.type, "sizes", None)
    if sizes is None or dimension.node.kind is not prim.Constant:
        return None
    index = constant_value(dimension.node)
    if not isinstance(index, int) or not -len(sizes) <= index < len(sizes):
        return None
    return sizes[index]


def expand_chunk(graph: Graph) -> bool:
    """`aten::chunk(%x, %n, %d)` of a tensor whose refined size s at constant dimension d is known (s > 0) and a
    constant n -> a ListConstruct of slices of ceil(s / n) (the last one shorter), as torch.chunk splits (for the
    same reasons as expand_unbind: `for p in x.chunk(3)` then unrolls):

        %ps : Tensor[] = aten::chunk(%x, %two, %zero)   ->   %a : Tensor = aten::slice(%x, %zero, %zero, %two, %one)
        (x of size 4 at dimension 0)                          %b : Tensor = aten::slice(%x, %zero, %two, %four, %one)
                                                              %ps : Tensor[] = prim::ListConstruct(%a, %b)
    """
    nodes = [n for n in graph.all_nodes() if n.kind is aten.chunk and _chunk_bounds(n) and log.opt_allowed()]
    for node in nodes:
        tensor, _, dimension = node.inputs
        with graph.insert_point_guard(node):
            parts = [graph.insert(aten.slice, [tensor, dimension, start, end, 1]) for start, end in _chunk_bounds(node)]
            construct = graph.insert_node(graph.create(prim.ListConstruct, parts))
        construct.output().set_type(node.output().type)
        node.output().replace_all_uses_with(construct.output())
        node.destroy()
    return bool(nodes)


def _chunk_bounds(node: Node) -> list[tuple[int, int]]:
    """The (start, end) of each piece `aten::chunk` makes, when its size, count and dimension are known."""
    if len(node.inputs) != 3 or node.input(1).node.kind is not prim.Constant:
        return []
    size, chunks = _static_size(node.input(0), node.input(2)), constant_value(node.input(1).node)
    if not size or not isinstance(chunks, int) or chunks <= 0:
        return []
    step = -(-size // chunks)
    return [(start, min(start + step, size)) for start in range(0, size, step)]


def _is_written_list(value) -> bool:
    return any(use.user.kind in _LIST_MUTATIONS for use in value.uses)


def _list_mutation_in_control_flow(graph: Graph) -> Node | None:
    """The first node writing a list that was defined outside the block the node is in."""
    for node in graph.all_nodes():
        if node.kind in _LIST_MUTATIONS and node.inputs and isinstance(node.inputs[0].type, ts.ListType):
            if node.inputs[0].node.owning_block is not node.owning_block:
                return node
    return None


def reject_list_mutation_in_control_flow(graph: Graph) -> bool:
    """Refuse a list mutated inside a loop or branch, which torch-mlir mishandles (see the module docstring)."""
    node = _list_mutation_in_control_flow(graph)
    if node is not None:
        raise MLIRError(f"{node.kind} writes a list inside a loop or branch that does not run a fixed number of "
                        f"times; torch-mlir cannot follow list mutation through control flow:\n{node}")
    return False


def fold_tensor_properties(graph: Graph, device: torch.device = _CPU) -> bool:
    """`prim::device(%t)` -> the constant `device`, `prim::is_cuda(%t)` -> whether it is cuda,
    `prim::is_nested(%t)` -> False, `prim::layout(%t)` -> 0 (strided); then `prim::type(%d)` of a constant
    device -> its type:

        %d : Device = prim::device(%x)                  %d : Device = prim::Constant[value="cpu"]()
        %s : str = prim::type(%d)               ->      %s : str = prim::Constant[value="cpu"]()
    """
    known = {prim.device: device, prim.is_cuda: device.type == "cuda", prim.is_nested: False,
             prim.layout: 0}  # torch.strided
    changed = _replace_by_constant(graph, [n for n in graph.all_nodes() if n.kind in known and log.opt_allowed()],
                                   lambda node: known[node.kind])
    types = [n for n in graph.all_nodes() if n.kind is prim.type and n.input().node.kind is prim.Constant
             and log.opt_allowed()]
    return _replace_by_constant(graph, types, lambda node: constant_value(node.input().node).type) or changed


def fold_tensor_identity_tests(graph: Graph) -> bool:
    """`aten::__is__(%a, %b)` of two different tensor values -> False, `aten::__isnot__` -> True."""
    nodes = [n for n in graph.all_nodes() if n.kind in (aten.__is__, aten.__isnot__) and n.input(0) is not n.input(1)
             and all(isinstance(v.type, ts.TensorType) for v in n.inputs) and log.opt_allowed()]
    return _replace_by_constant(graph, nodes, lambda node: node.kind is aten.__isnot__)


def _replace_by_constant(graph: Graph, nodes: list[Node], value_of) -> bool:
    for node in nodes:
        with graph.insert_point_guard(node):
            node.output().replace_all_uses_with(graph.insert_constant(value_of(node)))
        node.destroy()
    return bool(nodes)


def _device_of(examples: Sequence) -> torch.device:
    """The device of the first example tensor, cpu without one."""
    return next((e.device for e in examples if isinstance(e, torch.Tensor)), torch.device("cpu"))


def remove_profiling(graph: Graph) -> bool:
    """`%y = prim::profile(%x)` only records the type of `%x`: its uses read `%x` instead."""
    nodes = [n for n in graph.all_nodes() if n.kind is prim.profile and log.opt_allowed()]
    for node in nodes:
        for output in node.outputs:
            output.replace_all_uses_with(node.input())
        node.destroy()
    return bool(nodes)


def select_ifs_to_where(graph: Graph) -> bool:
    """An If whose branches only forward tensors of one static type becomes `aten::where`:

        %y = prim::If(%c)                               %ci : int = aten::Int(%c)
          block0(): -> (%a)                    ->       %ct : Tensor = aten::scalar_tensor(%ci, dtype=bool)
          block1(): -> (%b)                             %y : Tensor = aten::where(%ct, %a, %b)
    """
    changed = False
    for node in [n for n in graph.all_nodes() if n.kind is prim.If]:
        if all(block.is_empty() for block in node.blocks) and _selects_same_static_tensors(node) and \
                log.opt_allowed():
            _replace_with_where(graph, node)
            changed = True
    return changed


def _selects_same_static_tensors(node: Node) -> bool:
    pairs = zip(node.blocks[0].outputs, node.blocks[1].outputs)
    tensor_pairs = [(a, b) for a, b in pairs if isinstance(a.type, ts.TensorType)]
    return bool(tensor_pairs) and all(a is b or _same_static_type(a.type, b.type) for a, b in tensor_pairs)


def _same_static_type(a: ts.Type, b: ts.Type) -> bool:
    complete = isinstance(a, ts.TensorType) and a.sizes is not None and None not in a.sizes
    return complete and isinstance(b, ts.TensorType) and (a.sizes, a.dtype) == (b.sizes, b.dtype)


def _replace_with_where(graph: Graph, node: Node) -> None:
    """Tensor outputs become `where` selections; other outputs (ints, bools) stay with the If."""
    with graph.insert_point_guard(node):
        mask = graph.insert(aten.scalar_tensor, [graph.insert(aten.Int, [node.input()])], {"dtype": torch.bool})
        for output, a, b in zip(node.outputs, node.blocks[0].outputs, node.blocks[1].outputs):
            if a is b:
                output.replace_all_uses_with(a)
            elif isinstance(a.type, ts.TensorType):
                output.replace_all_uses_with(graph.insert(aten.where, [mask, a, b]))
    if not node.has_uses():
        node.destroy()


def _writes_tensor(node: Node) -> bool:
    """Whether the node writes to a tensor in place."""
    schema = node.maybe_schema() if node.kind.ns == "aten" else None
    if schema is None:
        return False
    return any(a.alias_info is not None and a.alias_info.is_write and isinstance(a.type, ts.TensorType)
               for a in schema.arguments)
