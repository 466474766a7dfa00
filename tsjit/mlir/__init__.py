"""tsjit's bridge to MLIR: TorchScript graphs and modules to torch-mlir's `torch` dialect and its backends.

    lowered = tsjit.mlir.compile(graph, [torch.randn(2, 3), 4], output_type="linalg-on-tensors")
    print(lowered)                                  # the linalg MLIR
    run = tsjit.mlir.iree.compile(lowered)          # IREE, CPU
    run(torch.randn(2, 3), 4)                       # torch tensors in, torch tensors out

- `types`: TorchScript types as torch-dialect types; argument annotations.
- `importer`: Graph -> `func.func` in the torch dialect, node for node.
- `objects`: modules (ModuleValue) -> `torch.class_type` / `torch.nn_module` object graphs.
- `script_objects`: tsjit ScriptModules (`tsjit.script(nn_module)`) -> ModuleValue, so `compile` takes them.
- `shapes`: tensor types refined by running the graph on meta tensors (torch-mlir does not see through
  control flow).
- `prepare`: the rewrites that let torch-mlir's pipelines accept what TorchScript emits, each with its reason
  (also in `remove_mutation`, `loops`, `unroll`, and `rnn`: LSTM / GRU / RNN layers unrolled into aten ops).
- `pipelines`: `compile`, running torch-mlir's pass pipelines and naming the op that blocks a failure.
- `iree`: compile a lowered module with IREE and call it with torch tensors.
"""

from tsjit.mlir.objects import ModuleValue, Slot
from tsjit.mlir.pipelines import OUTPUT_TYPES, LoweredModule, compile
from tsjit.mlir.types import TensorAnnotation

__all__ = ["OUTPUT_TYPES", "LoweredModule", "ModuleValue", "Slot", "TensorAnnotation", "compile"]
