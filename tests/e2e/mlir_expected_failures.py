"""Expected failures of the e2e corpus through tsjit -> MLIR -> IREE (test_mlir_e2e.py), per backend, each with
its reason. Generated from a run of the corpus (`.venv/bin/python tests/e2e/test_mlir_e2e.py` prints every
failure with its error), then reviewed and grouped by cause. An entry that starts passing fails the test: remove
it. Case names are `function:<name>` (corpus.py) and `module:<name>` (module_corpus.py).

The groups, roughly in order of size:
- scalars on TOSA / StableHLO: their contracts have no scalar values, so int/float/bool arguments, results and
  scalar arithmetic (`aten::add.int`, `len`, list indexing) do not lower;
- torch-mlir has no op for an overload TorchScript uses (strings, dicts, list and scalar builtins, some
  functional ops): it is imported as `torch.operator`, which no pipeline legalizes;
- torch-mlir has no lowering of an op to one backend;
- lists mutated in loops, in-place writes to inputs or attributes, control flow decided at run time on TOSA /
  StableHLO;
- IREE rejecting what torch-mlir emits (f64 on TOSA, scf.while carrying a tensor, sort/top-k);
- programs whose results legitimately differ (random numbers, hooks that run outside `forward`).
- fork/wait, which has no torch-dialect form.
"""

# ruff: noqa: E501  (one entry per line, reasons in full)

from __future__ import annotations

BACKENDS = ("linalg-on-tensors", "tosa", "stablehlo")


def _no_op(kind: str) -> str:
    return (f"torch-mlir has no op for the overload of {kind} this program uses: it is imported as torch.operator, "
            f"which no backend pipeline legalizes")


def _strings(kind: str) -> str:
    return f"strings: {kind} has no torch-dialect op, and str values cannot cross into compiled code"


def _dicts(kind: str) -> str:
    return f"dicts: {kind} has no torch-dialect op (the backend contract has no dict type)"


def _no_lowering(backend: str, op: str) -> str:
    return f"torch-mlir has no lowering of {op} to {backend}"


TOSA_SCALARS = ("TOSA has no scalar values: int/float/bool arguments, results or scalar ops (aten::add.int, len, "
                "list indexing, `is None`) do not lower")
STABLEHLO_SCALARS = ("StableHLO (as torch-mlir lowers to it) keeps no scalar values: int/bool constants feeding scalar "
                     "ops, scalar arguments or results, and list ops stay unconverted")
CONTROL_FLOW = "control flow decided at run time: the TOSA and StableHLO contracts have no control flow"
LIST_MUTATION = ("a list mutated inside a loop that does not run a fixed number of times: torch-mlir cannot follow "
                 "list mutation through control flow (tsjit refuses it, see tsjit/mlir/prepare.py)")
SLICE_SCATTER_BOUNDS = ("a write into `x[1:]` becomes aten::slice_scatter with end None, which torch-mlir lowers to "
                        "TOSA and StableHLO only with constant bounds")
ALIASED_WRITE = ("an in-place write to a module attribute or to a method's input (running statistics, a counter): "
                 "remove_mutation only removes writes to tensors nothing else aliases")
ISINSTANCE = "prim::isinstance on a type known only at run time has no torch-dialect form"
OPTIONAL_TENSOR_ARGUMENT = ("an Optional[Tensor] argument left to its None default: the If on it yields a tensor of "
                            "unknown rank, which the backend contract rejects")
ITEM = "aten::item returns a Scalar (!torch.number), which the backend contract rejects"
STR_RESULT = "a str result cannot cross into compiled code"
STATE_WRITTEN = "module state written by forward (SetAttr) stays a global slot initializer, which the contract rejects"
PYTHON_OP = "a call into Python (prim::PythonOp, an ignored method) cannot be compiled"
DICT_VALUES = "dicts: a dict reaches the backend contract, which has no dict type"
LIST_SCALARS_LINALG = ("a list of scalars indexed at run time: torch-mlir's linalg backend leaves the list ops "
                       "(ListConstruct, __getitem__.t, list.t) unconverted")
TOSA_CAST = "IREE rejects the tosa.cast torch-mlir emits (operand/result types its TOSA profile lacks)"
TOSA_F64 = "IREE rejects TOSA with f64 (torch-mlir emits f64 tosa.cast / reductions for float scalars or .double())"
IREE_WHILE = ("IREE 3.13 cannot compile torch-mlir's scf.while carrying a tensor or flag (break / return in a loop): "
              "'failed to legalize unresolved target materialization'")
IREE_SORT = "IREE cannot legalize the tm_tensor.sort torch-mlir emits for sort / topk"
IREE_TOPK = "IREE rejects chlo.top_k with i64 indices (it infers i32)"
RANDOM = "training-mode dropout draws random numbers: IREE's generator differs from eager's"
EMBEDDING_BAG = "torch-mlir has no lowering of aten::embedding_bag.padding_idx to any backend"
EMBEDDING_RENORM = ("Embedding(max_norm) renormalizes its weight in place before the lookup (embedding_renorm_ on "
                    "the attribute), which the compiled program does not reproduce")
HOOKS = "forward hooks run in the module's __call__, not in the compiled forward method"
FORK = "fork/wait has no torch-dialect form: prim::fork runs its subgraph asynchronously, aten::wait waits for it"

_EVERY_BACKEND: dict[str, str] = {
    'function:bitwise_on_tensors': _no_op('aten::__xor__'),
    'function:device_and_dtype_arguments': STR_RESULT,
    'function:dict_annotated': _dicts('aten::values'),
    'function:dict_comprehension': _dicts('aten::_set_item'),
    'function:dict_constructor': _dicts('aten::dict'),
    'function:dict_get_optional': _dicts('aten::get'),
    'function:dict_int_keys': _dicts('aten::keys'),
    'function:dict_methods': _no_op('aten::copy'),
    'function:divmod_and_friends': _no_op('aten::divmod'),
    'function:exit_transform_raise': _no_op('aten::sqrt'),
    'function:float_arith': _no_op('aten::floordiv'),
    'function:functional_grid_sample': _no_op('aten::affine_grid_generator'),
    'function:forks_in_a_loop': FORK,
    'function:int_arith': _no_op('aten::__lshift__'),
    'function:int_bit_ops': _no_op('aten::__and__'),
    'function:int_float_promotion': _no_op('aten::add'),
    'function:jit_isinstance_container': ISINSTANCE,
    'function:list_augmented': _no_op('aten::add_'),
    'function:list_del_and_clear': _dicts('aten::Delete'),
    'function:list_methods': _no_op('aten::copy'),
    'function:loop_list_accumulate': LIST_MUTATION,
    'function:math_module': _no_op('aten::sqrt'),
    'function:min_max_abs': _no_op('prim::abs'),
    'function:optional_tensor_default': OPTIONAL_TENSOR_ARGUMENT,
    'function:pow_variants': _no_op('aten::pow'),
    'function:range_list_and_len': LIST_MUTATION,
    'function:string_format': _strings('aten::percentFormat'),
    'function:string_iteration': _no_op('aten::__getitem__'),
    'function:string_methods': _strings('aten::upper'),
    'function:string_split_join': _strings('aten::split'),
    'function:tensor_item': ITEM,
    'function:tensor_to_number': ITEM,
    'function:tuple_input': _no_op('aten::add'),
    'function:two_optionals': OPTIONAL_TENSOR_ARGUMENT,
    'module:attributes_typed': _no_op('aten::sum'),
    'module:batchnorm2d_momentum_none': ALIASED_WRITE,
    'module:batchnorm2d_train': ALIASED_WRITE,
    'module:buffers_and_none_parameter': ALIASED_WRITE,
    'module:embedding_max_norm': EMBEDDING_RENORM,
    'module:fork_submodule_and_method': FORK,
    'module:forward_hook_on_top_module': HOOKS,
    'module:ignored_method': PYTHON_OP,
    'module:lstm_dropout_train': RANDOM,
    'module:set_attributes': STATE_WRITTEN,
    'module:transformer_encoder_layer_norm_first_gelu_train': OPTIONAL_TENSOR_ARGUMENT,
}

_LINALG: dict[str, str] = {
    'function:break_in_while_with_else_state': IREE_WHILE,
    'function:casts': _no_lowering('linalg-on-tensors', 'torch.aten.Int.float'),
    'function:constant_folding': STR_RESULT,
    'function:early_return_in_nested_loops': IREE_WHILE,
    'function:for_with_break_uses_counter': IREE_WHILE,
    'function:list_aug_assign_item': _no_lowering('linalg-on-tensors', 'torch.constant.int'),
    'function:list_of_optionals': _no_lowering('linalg-on-tensors', 'torch.aten.len.t'),
    'function:numbers_to_tensors': _no_lowering('linalg-on-tensors', 'tensor.from_elements'),
    'function:optional_int_or': _no_lowering('linalg-on-tensors', 'torch.aten.__is__'),
    'function:optional_reassign': _no_lowering('linalg-on-tensors', 'torch.aten.__is__'),
    'function:raise_in_branch': _no_lowering('linalg-on-tensors', 'torch.constant.int'),
    'function:return_in_loop': IREE_WHILE,
    'function:sort_and_topk': IREE_SORT,
    'function:tensor_advanced_indexing': _no_lowering('linalg-on-tensors', 'arith.cmpi'),
    'function:tensor_tolist': _no_lowering('linalg-on-tensors', 'torch.constant.int'),
    'function:union_with_none': _no_lowering('linalg-on-tensors', 'torch.aten.__isnot__'),
    'function:while_true_break': IREE_WHILE,
    'module:dropout_train': RANDOM,
    'module:sequential_mlp_train': RANDOM,
}

_TOSA: dict[str, str] = {
    'function:all_any': TOSA_SCALARS,
    'function:assert_isinstance_refines': TOSA_SCALARS,
    'function:bool_logic': CONTROL_FLOW,
    'function:break_in_while_with_else_state': TOSA_SCALARS,
    'function:calls_unused_when_flag': TOSA_SCALARS,
    'function:casts': TOSA_SCALARS,
    'function:comparisons': TOSA_SCALARS,
    'function:constant_folding': TOSA_SCALARS,
    'function:continue_in_while': TOSA_SCALARS,
    'function:default_float_arg_int': _no_lowering('tosa', 'torch.aten.mul.Scalar'),
    'function:early_return': TOSA_SCALARS,
    'function:early_return_in_nested_loops': TOSA_SCALARS,
    'function:enumerate_start': TOSA_SCALARS,
    'function:exit_transform_continue': TOSA_SCALARS,
    'function:for_with_break_uses_counter': TOSA_SCALARS,
    'function:functional_batch_norm_training': TOSA_F64,
    'function:functional_cross_entropy': TOSA_F64,
    'function:functional_embedding_bag': TOSA_CAST,
    'function:functional_max_pool2d_indices': _no_lowering('tosa', 'torch.aten.max_pool2d_with_indices'),
    'function:functional_norms': _no_lowering('tosa', 'torch.aten.avg_pool3d'),
    'function:functional_softmin_and_dtype': TOSA_SCALARS,
    'function:if_elif_else': TOSA_SCALARS,
    'function:if_without_else': TOSA_SCALARS,
    'function:int_augmented': TOSA_SCALARS,
    'function:int_true_division_by_one': TOSA_SCALARS,
    'function:isinstance_of_several_types': _no_lowering('tosa', 'the scalar results (torch-verify-tosa-backend-contract rejects the func.func)'),
    'function:list_annotated_empty': TOSA_SCALARS,
    'function:list_aug_assign_item': TOSA_SCALARS,
    'function:list_comprehension': TOSA_SCALARS,
    'function:list_of_lists': CONTROL_FLOW,
    'function:list_of_optionals': TOSA_SCALARS,
    'function:list_of_tensors': TOSA_SCALARS,
    'function:list_ops': _no_lowering('tosa', 'the scalar results (torch-verify-tosa-backend-contract rejects the func.func)'),
    'function:list_sum_max': TOSA_SCALARS,
    'function:list_unpack': TOSA_SCALARS,
    'function:loop_carried_many': CONTROL_FLOW,
    'function:loop_with_if_assigning_new_var': CONTROL_FLOW,
    'function:mixed_types_in_branches_unused': TOSA_SCALARS,
    'function:named_tuple': TOSA_SCALARS,
    'function:nested_if_return': TOSA_SCALARS,
    'function:nested_ternary': TOSA_SCALARS,
    'function:numbers_to_tensors': TOSA_SCALARS,
    'function:optional_assert_refines': TOSA_SCALARS,
    'function:optional_int_and': TOSA_SCALARS,
    'function:optional_int_or': TOSA_SCALARS,
    'function:optional_list': TOSA_SCALARS,
    'function:optional_reassign': TOSA_SCALARS,
    'function:optional_ternary': TOSA_SCALARS,
    'function:print_values': TOSA_SCALARS,
    'function:raise_in_branch': _no_lowering('tosa', 'torch.aten.mul.Scalar'),
    'function:return_in_loop': TOSA_SCALARS,
    'function:seed_if_else': TOSA_SCALARS,
    'function:shadowed_builtin_names': TOSA_SCALARS,
    'function:starred_unpack': TOSA_SCALARS,
    'function:sum_of_list_comprehension': TOSA_SCALARS,
    'function:tensor_advanced_indexing': _no_lowering('tosa', 'torch.aten.tensor'),
    'function:tensor_casts': TOSA_F64,
    'function:tensor_factories': TOSA_F64,
    'function:tensor_properties': TOSA_SCALARS,
    'function:tensor_reductions': TOSA_F64,
    'function:tensor_scalar_mixed': _no_lowering('tosa', 'torch.aten.mul.Scalar'),
    'function:tensor_tolist': TOSA_SCALARS,
    'function:ternary': CONTROL_FLOW,
    'function:tuple_add': TOSA_SCALARS,
    'function:tuple_index_slice': TOSA_SCALARS,
    'function:tuple_return_annotation': TOSA_SCALARS,
    'function:type_comment_signature': TOSA_SCALARS,
    'function:union_isinstance': TOSA_SCALARS,
    'function:union_with_none': TOSA_SCALARS,
    'function:variable_annotations': CONTROL_FLOW,
    'function:while_loop': TOSA_SCALARS,
    'function:while_true_break': TOSA_SCALARS,
    'function:while_with_complex_condition': TOSA_SCALARS,
    'module:dropout_train': TOSA_F64,
    'module:lstm_dropout_train': TOSA_F64,
    'module:sequential_mlp_train': TOSA_F64,
    'module:tuple_result_keyword_call': TOSA_SCALARS,
}

_STABLEHLO: dict[str, str] = {
    'function:bool_logic': STABLEHLO_SCALARS,
    'function:break_in_while_with_else_state': STABLEHLO_SCALARS,
    'function:casts': STABLEHLO_SCALARS,
    'function:constant_folding': STR_RESULT,
    'function:continue_in_while': STABLEHLO_SCALARS,
    'function:early_return': CONTROL_FLOW,
    'function:early_return_in_nested_loops': STABLEHLO_SCALARS,
    'function:exit_transform_continue': STABLEHLO_SCALARS,
    'function:for_with_break_uses_counter': STABLEHLO_SCALARS,
    'function:functional_max_pool2d_indices': _no_lowering('stablehlo', 'stablehlo.reduce_window'),
    'function:if_elif_else': STABLEHLO_SCALARS,
    'function:if_without_else': CONTROL_FLOW,
    'function:list_aug_assign_item': STABLEHLO_SCALARS,
    'function:list_of_optionals': STABLEHLO_SCALARS,
    'function:list_sum_max': STABLEHLO_SCALARS,
    'function:loop_carried_many': STABLEHLO_SCALARS,
    'function:loop_with_if_assigning_new_var': STABLEHLO_SCALARS,
    'function:nested_if_return': STABLEHLO_SCALARS,
    'function:numbers_to_tensors': STABLEHLO_SCALARS,
    'function:optional_int_and': STABLEHLO_SCALARS,
    'function:optional_int_or': STABLEHLO_SCALARS,
    'function:optional_reassign': STABLEHLO_SCALARS,
    'function:return_in_loop': STABLEHLO_SCALARS,
    'function:seed_if_else': CONTROL_FLOW,
    'function:sort_and_topk': IREE_TOPK,
    'function:tensor_advanced_indexing': STABLEHLO_SCALARS,
    'function:tensor_tolist': STABLEHLO_SCALARS,
    'function:ternary': CONTROL_FLOW,
    'function:union_with_none': STABLEHLO_SCALARS,
    'function:variable_annotations': STABLEHLO_SCALARS,
    'function:while_loop': STABLEHLO_SCALARS,
    'function:while_true_break': STABLEHLO_SCALARS,
    'function:while_with_complex_condition': STABLEHLO_SCALARS,
    'module:dropout_train': RANDOM,
    'module:sequential_mlp_train': RANDOM,
}

EXPECTED_FAILURES: dict[str, dict[str, str]] = {
    "linalg-on-tensors": {**_EVERY_BACKEND, **_LINALG},
    "tosa": {**_EVERY_BACKEND, **_TOSA},
    "stablehlo": {**_EVERY_BACKEND, **_STABLEHLO},
}
