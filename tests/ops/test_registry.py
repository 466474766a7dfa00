"""The operator registry: PyTorch's schemas loaded lazily by name, Operations, and run-time registration."""

from __future__ import annotations

import subprocess
import sys

import pytest
import torch
from torch_library_operators import LastingLibrary, dead_builtins

import tsjit.ops
from tsjit.errors import SchemaError
from tsjit.ir.schema import parse_schema
from tsjit.ir.symbols import aten
from tsjit.ops.registry import Operator, find_operator, get_operators, register_operator

LOOKED_UP_NAMES = [
    "aten::add", "aten::mul", "aten::sub", "aten::div", "aten::conv2d", "aten::linear", "aten::max",
    "aten::sum",
    "aten::zeros", "aten::to", "aten::view", "aten::cat", "aten::__getitem__", "aten::append", "aten::len",
    "aten::Int", "aten::Float", "aten::format", "aten::split", "aten::_foreach_add_", "prim::TupleUnpack",
    "prim::NumToTensor", "prim::Print", "prim::RaiseException", "prim::unchecked_cast", "quantized::add",
]


@pytest.mark.parametrize("name", LOOKED_UP_NAMES)
def test_lookup_gives_pytorchs_schemas_in_pytorchs_order(name):
    expected = [str(schema) for schema in torch._C._jit_get_schemas_for_operator(name)]
    assert expected, name
    assert [str(op.schema) for op in get_operators(name)] == expected


def test_every_pytorch_schema_loads_and_prints_like_pytorch():
    names = sorted({schema.name for schema in torch._C._jit_get_all_schemas()})
    for name in names:
        expected = [str(schema) for schema in torch._C._jit_get_schemas_for_operator(name)]
        assert [str(op.schema) for op in get_operators(name)] == expected


def test_lookup_is_stable_and_accepts_symbols():
    first = get_operators(aten.add)
    assert first == get_operators("aten::add")
    assert all(a is b for a, b in zip(first, get_operators(aten.add)))


def test_schemaless_and_unknown_names_have_no_operators():
    assert get_operators("prim::Constant") == []
    assert get_operators("nosuchns::nosuchop") == []


def test_find_operator_by_name_overload_and_schema():
    assert str(find_operator("aten::add.Tensor").schema).startswith("aten::add.Tensor(Tensor self")
    assert str(find_operator("aten::add").schema) == "aten::add(Scalar a, Scalar b) -> Scalar"
    text = "aten::add.int(int a, int b) -> int"
    assert find_operator(text) is find_operator("aten::add.int")
    assert find_operator(parse_schema(text)) is find_operator("aten::add.int")
    assert find_operator("aten::add.nosuchoverload") is None


def test_dispatcher_operation_calls_the_op_overload_resolved_once():
    operator = find_operator("aten::mul.Tensor")
    assert operator.has_operation
    assert operator.get_operation() is torch.ops.aten.mul.Tensor
    assert operator.get_operation() is operator.get_operation()


def test_kwarg_only_arguments_are_passed_positionally():
    x, y = torch.ones(2), torch.full((2,), 3.0)
    add = find_operator("aten::add.Tensor").get_operation()
    assert torch.equal(add(x, y, 2), x + 2 * y)


def test_operations_return_one_value_a_tuple_or_none():
    x = torch.tensor([[1.0, 5.0], [7.0, 2.0]])
    values, indices = find_operator("aten::max.dim").get_operation()(x, 1, False)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert find_operator("aten::_foreach_add_.Scalar").get_operation()([x], 1.0) is None
    assert x[0, 0].item() == 2.0


def test_jit_only_schema_has_no_operation_until_one_is_registered():
    operator = find_operator("aten::is_strides_like_format")  # a JIT-only schema tsjit never implements
    assert not operator.has_operation
    with pytest.raises(SchemaError, match=r"aten::is_strides_like_format\("):
        operator.get_operation()


def test_register_custom_operator_and_run_it():
    operator = tsjit.ops.register_operator("my_ns::op(Tensor a, int b) -> Tensor", lambda a, b: a * b)
    assert isinstance(operator, Operator)
    assert get_operators("my_ns::op") == [operator]
    assert torch.equal(operator.get_operation()(torch.ones(2), 3), torch.full((2,), 3.0))


def test_register_as_decorator_returns_the_function():
    @register_operator("my_ns::twice(float x) -> float")
    def twice(x):
        return 2 * x

    assert twice(1.5) == 3.0
    assert find_operator("my_ns::twice").get_operation() is twice


def test_identical_schema_replaces_the_implementation():
    first = register_operator("my_ns::replaced(int x) -> int", lambda x: x + 1)
    second = register_operator("my_ns::replaced(int x)->int", lambda x: x + 2)
    assert second is first
    assert get_operators("my_ns::replaced") == [first]
    assert first.get_operation()(1) == 3


def test_different_schema_for_a_registered_overload_is_an_error():
    register_operator("my_ns::clash.a(int x) -> int", lambda x: x)
    with pytest.raises(SchemaError, match="already registered"):
        register_operator("my_ns::clash.a(float x) -> float", lambda x: x)


def test_overloads_keep_registration_order():
    register_operator("my_ns::ordered.first(int x) -> int", lambda x: x)
    register_operator("my_ns::ordered.second(float x) -> float", lambda x: x)
    assert [op.schema.overload_name for op in get_operators("my_ns::ordered")] == ["first", "second"]


def test_operation_factory_receives_the_node():
    def factory(node):
        return lambda x: (node, x)

    operator = register_operator("my_ns::made(int x) -> int", operation_factory=factory)
    node = object()
    assert operator.get_operation(node)(4) == (node, 4)


def test_operation_and_factory_together_are_rejected():
    with pytest.raises(SchemaError, match="not both"):
        register_operator("my_ns::both(int x) -> int", lambda x: x, operation_factory=lambda node: None)


# CPU time, not wall time: the numbers should not depend on what else the machine is doing
_TIMING_SCRIPT = """
import time
import torch
start = time.process_time()
import tsjit, tsjit.ops
import_seconds = time.process_time() - start
from tsjit.ops import registry
assert not registry._operators_by_kind, "import parsed schemas"
start = time.process_time()
operators = tsjit.ops.get_operators("aten::add")
lookup_seconds = time.process_time() - start
assert len(operators) == 16
print(import_seconds, lookup_seconds)
"""


def test_import_is_lazy_and_first_lookup_is_fast():
    result = subprocess.run([sys.executable, "-c", _TIMING_SCRIPT], capture_output=True, text=True,
                            check=True)
    import_seconds, lookup_seconds = map(float, result.stdout.split())
    print(f"import tsjit (torch already imported): {import_seconds * 1e3:.1f} ms; "
          f"first get_operators(aten.add): {lookup_seconds * 1e3:.1f} ms")
    assert import_seconds < 1.0
    assert lookup_seconds < 1.0


def test_an_operator_defined_with_torch_library_after_a_failed_lookup_is_found():
    """Looking a name up before `torch.library` defines it (scripting code that calls it, say) must not make it
    unknown for good; nor does a new overload of a known name stay hidden."""
    import tsjit

    def twice(x):
        return torch.ops.late_registry_test.twice(x)

    def scaled(x):
        return torch.ops.late_registry_test.twice.scaled(x, 3.0)

    assert get_operators("late_registry_test::twice") == []
    assert find_operator("late_registry_test::twice") is None
    library = LastingLibrary("late_registry_test")
    library.define("twice(Tensor x) -> Tensor")
    library.impl("twice", lambda x: x * 2, "CompositeExplicitAutograd")
    assert [str(op.schema) for op in get_operators("late_registry_test::twice")] == [
        "late_registry_test::twice(Tensor x) -> Tensor"]
    assert torch.equal(tsjit.script(twice)(torch.ones(2)), torch.full((2,), 2.0))
    assert find_operator("late_registry_test::twice.scaled") is None
    library.define("twice.scaled(Tensor x, float s) -> Tensor")
    library.impl("twice.scaled", lambda x, s: x * 2 * s, "CompositeExplicitAutograd")
    assert torch.equal(tsjit.script(scaled)(torch.ones(2)), torch.full((2,), 6.0))
    assert dead_builtins("late_registry_test") == []  # the refreshed packet's first operator object lives on


def test_operators_the_dispatcher_registered_conservative_have_side_effects():
    """TorchScript keeps a non-aten operator registered with CONSERVATIVE alias analysis even when nobody reads
    its result (torch.jit's scripted graph keeps `profiler::_record_function_enter_new`); one torch.library
    defines from its schema alone (FROM_SCHEMA) is pure, as are aten's."""
    from tsjit.ops.registry import is_conservative

    library = LastingLibrary("alias_kind_test")
    library.define("pure(Tensor x) -> Tensor")
    library.define("effect(Tensor x) -> Tensor", alias_analysis="CONSERVATIVE")
    assert is_conservative(find_operator("profiler::_record_function_enter_new").schema)
    assert is_conservative(find_operator("alias_kind_test::effect").schema)
    assert not is_conservative(find_operator("alias_kind_test::pure").schema)
    assert not is_conservative(find_operator("aten::sin").schema)


_FIRST_CALL_SCRIPT = """
import sys
import torch
import tsjit
from tsjit.ops import registry

parsed = []
parse = registry.parse_schema
registry.parse_schema = lambda text: parsed.append(text) or parse(text)
f = tsjit.CompilationUnit('''
def f(x, y):
    return torch.sigmoid(torch.add(torch.sin(x), y) * y)
''').f
assert torch.equal(f(torch.ones(2), torch.ones(2)), torch.sigmoid(torch.sin(torch.ones(2)) + 1))
tables = sorted(name for name in ("lists", "dicts", "strings", "numbers", "tensor_ops")
                if f"tsjit.ops.builtins.{name}" in sys.modules)
print(repr((parsed, tables)))
"""


def test_a_first_call_parses_the_overloads_it_uses_and_no_builtins_tables():
    """Scripting and running tensor operators parses the schema of each overload used, not those of every
    overload of the names (`aten::add` has 16), and imports none of the JIT-only builtins tables."""
    result = subprocess.run([sys.executable, "-c", _FIRST_CALL_SCRIPT], capture_output=True, text=True, check=True)
    parsed, tables = eval(result.stdout)
    assert sorted(parsed) == sorted([
        "aten::sin(Tensor self) -> Tensor", "aten::add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
        "aten::mul.Tensor(Tensor self, Tensor other) -> Tensor", "aten::sigmoid(Tensor self) -> Tensor"])
    assert tables == []


def test_an_operation_of_a_builtin_loads_the_builtins_tables_on_demand():
    script = ("import tsjit.ops.registry as registry\n"
              "length = registry.find_operator('aten::len.t').get_operation()\n"
              "assert length([1, 2, 3]) == 3\n"
              "assert registry.find_operator('aten::add.int').has_operation\n")
    subprocess.run([sys.executable, "-c", script], check=True)


def test_dispatcher_schemas_are_told_from_jit_only_ones_as_the_dispatcher_tells():
    """`_in_dispatcher` asks for a kernel rather than looking the schema up (a JIT-only one raises): the answers
    agree on every schema PyTorch has, and on a torch.library schema that has no kernel yet."""
    from tsjit.ops.registry import _in_dispatcher

    def looked_up(schema) -> bool:
        try:
            torch._C._dispatch_find_schema_or_throw(schema.name, schema.overload_name)
        except RuntimeError:
            return False
        return True

    library = LastingLibrary("kernel_less_test")
    library.define("bare(Tensor x) -> Tensor")
    schemas = torch._C._jit_get_all_schemas()
    assert sum(not looked_up(schema) for schema in schemas) > 100  # JIT-only schemas are among them
    for schema in [*schemas, *torch._C._jit_get_schemas_for_operator("kernel_less_test::bare")]:
        assert _in_dispatcher(schema) == looked_up(schema), schema
