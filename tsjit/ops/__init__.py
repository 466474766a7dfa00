"""Operators: the registry of every schema tsjit can call, and overload matching.

- `tsjit.ops.registry`: `Operator` (a FunctionSchema plus its Operation), `register_operator`,
  `get_operators`, `find_operator`. PyTorch's schemas are loaded lazily, one operator name at a time.
- `tsjit.ops.matching`: TorchScript's schema matching and implicit conversions (`match_schemas`,
  `insert_operator_call`) and the schema of an existing node (`find_schema_for_node`).
"""

from tsjit.ops.registry import get_operators, register_operator

__all__ = ["get_operators", "register_operator"]
