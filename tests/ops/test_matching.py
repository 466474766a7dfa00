"""Overload matching: tsjit picks the overloads TorchScript picks, with the same conversions and errors.

The oracle is torch.jit: each case is scripted from a temporary source file, and the live non-constant nodes
of its graph (kind and `node.schema()`) are compared with what `insert_operator_call` inserts for the same call.
Graph text that torch prints is also parsed back, and every node must find the schema torch found.
"""

from __future__ import annotations

import importlib.util
import itertools
import re

import pytest
import torch

from tsjit.errors import SchemaError
from tsjit.ir.constants import constant_of
from tsjit.ir.graph import Graph
from tsjit.ir.parser import parse_ir
from tsjit.ir.symbols import aten, prim
from tsjit.ir.types import (
    BoolType,
    ComplexType,
    DictType,
    FloatType,
    IntType,
    ListType,
    NoneType,
    NumberType,
    OptionalType,
    StringType,
    TensorType,
    TupleType,
)
from tsjit.ops import matching
from tsjit.ops.matching import (
    MatchedSchema,
    eval_type_variables,
    find_schema_for_node,
    insert_operator_call,
    match_schema,
    match_schemas,
    match_type_variables,
    node_matches_schema,
)
from tsjit.ops.registry import find_operator, get_operators, register_operator

TENSOR, INT, FLOAT = TensorType.get(), IntType.get(), FloatType.get()
BOOL, STR = BoolType.get(), StringType.get()
ANNOTATIONS = {
    "Tensor": TENSOR, "int": INT, "float": FLOAT, "bool": BOOL, "str": STR, "complex": ComplexType.get(),
    "List[int]": ListType(INT), "List[str]": ListType(STR), "List[Tensor]": ListType(TENSOR),
    "List[float]": ListType(FLOAT), "Optional[int]": OptionalType(INT),
    "Optional[Tensor]": OptionalType(TENSOR),
    "Dict[str, Tensor]": DictType(STR, TENSOR), "Tuple[int, int]": TupleType((INT, INT)),
}


# ---- helpers -----------------------------------------------------------------------------------------------
def graph_with_inputs(params: str) -> tuple[Graph, dict]:
    """A graph whose inputs are declared like Python parameters: "x: Tensor, i: int"."""
    graph, values = Graph(), {}
    for name, annotation in re.findall(r"(\w+):\s*(\w+(?:\[[^\]]*\])?)", params):
        values[name] = graph.add_input(name, ANNOTATIONS[annotation])
    return graph, values


_counter = itertools.count()
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated:DeprecationWarning")


def script_graph(tmp_path, params: str, expression: str):
    """torch.jit's graph for `def f(<params>): return <expression>`."""
    return script_source(tmp_path, f"def f({params}):\n    return {expression}\n")


def script_source(tmp_path, source: str):
    """torch.jit's graph of the function `f` defined in `source`, scripted from a real file."""
    path = tmp_path / f"case_{next(_counter)}.py"
    header = "import torch\nfrom torch import Tensor\nfrom typing import Dict, List, Optional, Tuple\n\n"
    path.write_text(header + source)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return torch.jit.script(module.f).graph


def torch_calls(torch_graph) -> list[tuple[str, str | None]]:
    """(kind, schema) of the non-constant nodes of a scripted graph, without the packing of a tuple result."""
    nodes = [n for n in torch_graph.nodes() if n.kind() != "prim::Constant"]
    if nodes and nodes[-1].kind() == "prim::TupleConstruct":
        nodes.pop()
    return [(n.kind(), None if n.schema() == "(no schema)" else n.schema()) for n in nodes]


def live_calls(results) -> list[tuple[str, str | None]]:
    """(kind, schema) of the non-constant nodes the results depend on, in graph order."""
    results = results if isinstance(results, tuple) else (results,)
    live, stack = set(), [v.node for v in results]
    while stack:
        node = stack.pop()
        if node not in live and node.kind is not prim.Param:
            live.add(node)
            stack.extend(v.node for v in node.inputs)
    graph = results[0].owning_graph
    calls = [n for n in graph.nodes() if n in live and n.kind is not prim.Constant]
    return [(str(n.kind), _schema_text(n)) for n in calls]


def _schema_text(node) -> str | None:
    schema = find_schema_for_node(node)
    return None if schema is None else str(schema)


def inserted_kinds(graph: Graph) -> list[str]:
    return [str(node.kind) for node in graph.nodes()]


# ---- differential cases: the same call scripted by torch.jit and emitted by tsjit --------------------------
# (parameters, TorchScript expression, the same call for insert_operator_call: op, args, kwargs)
CASES = [
    ("x: Tensor, y: Tensor", "torch.add(x, y)", (aten.add, "x y", {})),
    ("x: Tensor, i: int", "torch.add(x, i)", (aten.add, "x i", {})),
    ("x: Tensor", "torch.add(x, 1)", (aten.add, ["x", 1], {})),
    ("x: Tensor, f: float", "torch.add(x, f, alpha=2)", (aten.add, "x f", {"alpha": 2})),
    ("x: Tensor", "torch.add(x, x, 2)", (aten.add, ["x", "x", 2], {})),
    ("i: int, j: int", "i + j", (aten.add, "i j", {})),
    ("f: float, i: int", "f + i", (aten.add, "f i", {})),
    ("i: int, f: float", "i + f", (aten.add, "i f", {})),
    ("f: float, g: float", "f + g", (aten.add, "f g", {})),
    ("c: complex, i: int", "c + i", (aten.add, "c i", {})),
    ("s: str, t: str", "s + t", (aten.add, "s t", {})),
    ("l: List[int], m: List[int]", "l + m", (aten.add, "l m", {})),
    ("b: bool, i: int", "torch.add(b, i)", (aten.add, "b i", {})),
    ("x: Tensor, b: bool", "torch.add(x, b)", (aten.add, "x b", {})),
    ("x: Tensor, s: str", "x.to(s)", (aten.to, "x s", {})),
    ("x: Tensor, i: int", "torch.zeros(i, 3)", (aten.zeros, ["i", 3], {})),
    ("i: int", "torch.zeros(i)", (aten.zeros, "i", {})),
    ("x: Tensor, t: Tensor", "torch.zeros(t, 3)", (aten.zeros, ["t", 3], {})),
    ("x: Tensor", "torch.max_pool2d(x, 2)", (aten.max_pool2d, ["x", 2], {})),
    ("x: Tensor, i: int", "torch.sum(x, i)", (aten.sum, "x i", {})),
    ("x: Tensor, i: int", "x.max(i)", (aten.max, "x i", {})),
    ("x: Tensor, y: Tensor", "torch.max(x, y)", (aten.max, "x y", {})),
    ("x: Tensor, i: int", "x.view(i, 3)", (aten.view, ["x", "i", 3], {})),
    ("t: Tensor", "torch.arange(t)", (aten.arange, "t", {})),
    ("i: int, b: bool", "torch.full([i], b)", (aten.full, [["i"], "b"], {})),
    ("l: List[int], t: Tensor", "l[t]", (aten.__getitem__, "l t", {})),
    ("l: List[str], i: int", "l[i]", (aten.__getitem__, "l i", {})),
    ("l: List[int]", "len(l)", (aten.len, "l", {})),
    ("x: Tensor", "len(x)", (aten.len, "x", {})),
    ("d: Dict[str, Tensor]", "d.values()", (aten.values, "d", {})),
    ("d: Dict[str, Tensor]", "d.keys()", (aten.keys, "d", {})),
    ("x: Tensor", "torch.relu(input=x)", (aten.relu, [], {"input": "x"})),
    ("o: Optional[int]", "torch.zeros(2, dtype=o)", (aten.zeros, [2], {"dtype": "o"})),
    ("x: Tensor, y: Tensor", "torch.cat([x, y])", (aten.cat, [["x", "y"]], {})),
    ("x: Tensor, y: Tensor", "torch.stack((x, y), 1)", (aten.stack, [("x", "y"), 1], {})),
    ("x: Tensor, p: Tuple[int, int]", "x.view(p)", (aten.view, "x p", {})),
    ("x: Tensor, i: int, f: float", "torch.clamp(x, i, f)", (aten.clamp, "x i f", {})),
    ("x: Tensor, y: Tensor", "torch.where(x > y, x, y)", None),
    ("x: Tensor, f: float", "x ** f", (aten.pow, "x f", {})),
    ("i: int, f: float", "i < f", (aten.lt, "i f", {})),
    ("x: Tensor, l: List[int]", "x.permute(l)", (aten.permute, "x l", {})),
    ("x: Tensor, i: int, j: int", "x.permute(i, j)", (aten.permute, "x i j", {})),
    ("x: Tensor, f: float", "torch.full_like(x, f)", (aten.full_like, "x f", {})),
]


def _actuals(spec, values):
    """Names in a case's argument spec become the graph's input Values; other Python values stay."""
    if isinstance(spec, str):
        return values.get(spec, spec) if " " not in spec else [values[name] for name in spec.split()]
    if isinstance(spec, list):
        return [_actuals(item, values) for item in spec]
    if isinstance(spec, tuple):
        return tuple(_actuals(item, values) for item in spec)
    return spec


@pytest.mark.parametrize("params, expression, call", [c for c in CASES if c[2] is not None],
                         ids=[c[1] for c in CASES if c[2] is not None])
def test_emitted_calls_match_torchscript(tmp_path, params, expression, call):
    expected = torch_calls(script_graph(tmp_path, params, expression))
    graph, values = graph_with_inputs(params)
    op, args, kwargs = call
    arguments = _actuals(args, values)
    arguments = arguments if isinstance(arguments, list) else [arguments]
    result = insert_operator_call(graph, op, arguments, {k: _actuals(v, values) for k, v in kwargs.items()})
    assert live_calls(result) == expected


FUNCTIONS = [
    """
def f(x: Tensor, n: int, l: List[int]):
    acc = 0
    for i in range(n):
        acc += i * 2
        l.append(acc)
    if acc > 3 and len(l) > 1:
        x = x * acc - l[0]
    return x, float(acc) / 2, l[-1] // 3
""",
    """
def f(d: Dict[str, Tensor], o: Optional[int], s: str):
    out = torch.zeros(2)
    for k, v in d.items():
        out = out + v.sum()
    if o is not None:
        out = out + o
    return out, s.upper() + s[0], s.split(","), int(out[0]) % 3
""",
    """
def f(x: Tensor, y: Tensor):
    z = torch.cat([x, y], 0).relu().max(0)[0]
    w = torch.where(x > y, x, y).view(-1, 1).matmul(z.view(1, -1))
    return w.size(), w.dim() == 2, w.shape[0] != 1.5, torch.tensor([1, 2]) + 1
""",
]


@pytest.mark.parametrize("source", [f"def f({p}):\n    return {e}\n" for p, e, _ in CASES] + FUNCTIONS)
def test_node_schemas_of_parsed_torchscript_graphs(tmp_path, source):
    """Read torch.jit's graph text back: every node finds the overload torch found, from input types alone."""
    torch_graph = script_source(tmp_path, source)
    graph = parse_ir(str(torch_graph))
    expected = [None if n.schema() == "(no schema)" else n.schema() for n in _torch_all_nodes(torch_graph)]
    assert [_schema_text(n) for n in graph.all_nodes()] == expected


def _torch_all_nodes(block):
    for node in block.nodes():
        yield node
        for inner in node.blocks():
            yield from _torch_all_nodes(inner)


# ---- error messages ----------------------------------------------------------------------------------------
def torch_error_variants(tmp_path, params: str, expression: str) -> str:
    """The "variants" part of torch.jit's error for a call that matches no overload."""
    with pytest.raises(RuntimeError) as caught:
        script_graph(tmp_path, params, expression)
    message = str(caught.value)
    return message[message.index("Arguments for call"):message.index("The original call is")].rstrip()


@pytest.mark.parametrize("params, expression, op, args", [
    ("x: Tensor", "torch.zeros(2, 2.5)", aten.zeros, [2, 2.5]),
    ("s: str, i: int", "torch.pow(s, i)", aten.pow, "s i"),
    ("l: List[int], f: float", "l[f]", aten.__getitem__, "l f"),
])
def test_no_match_lists_every_variant_like_torchscript(tmp_path, params, expression, op, args):
    expected = torch_error_variants(tmp_path, params, expression)
    graph, values = graph_with_inputs(params)
    arguments = _actuals(args, values)
    with pytest.raises(SchemaError) as caught:
        insert_operator_call(graph, op, arguments if isinstance(arguments, list) else [arguments])
    assert str(caught.value).rstrip() == expected
    assert inserted_kinds(graph) == [], "failed overloads must leave no nodes behind"


def test_single_schema_error_says_why():
    register_operator("my_match::only(Tensor a, int b) -> Tensor", lambda a, b: a)
    graph, values = graph_with_inputs("s: str")
    with pytest.raises(SchemaError) as caught:
        insert_operator_call(graph, "my_match::only", [values["s"], 1])
    assert str(caught.value) == ("my_match::only(Tensor a, int b) -> Tensor:\nExpected a value of type "
                                 "'Tensor' for argument 'a' but instead found type 'str'.\n")


def test_argument_count_and_keyword_errors():
    register_operator("my_match::kw(int a, *, int b=1) -> int", lambda a, b: a + b)
    graph, _ = graph_with_inputs("")
    with pytest.raises(SchemaError, match="Argument a not provided"):
        insert_operator_call(graph, "my_match::kw", [])
    with pytest.raises(SchemaError, match="Expected at most 1 arguments but found 2 positional arguments"):
        insert_operator_call(graph, "my_match::kw", [1, 2])
    with pytest.raises(SchemaError, match="Keyword argument c unknown"):
        insert_operator_call(graph, "my_match::kw", [1], {"c": 2})
    with pytest.raises(SchemaError, match="Keyword argument a specified twice"):
        insert_operator_call(graph, "my_match::kw", [1], {"a": 2})
    assert inserted_kinds(graph) == []


def test_unknown_operator_suggests_similar_names():
    graph = Graph()
    with pytest.raises(SchemaError, match=r"Unknown builtin op: aten::addd\.\nHere are some suggestions: \n"
                                          r"(\t\S+\n)*\taten::add\n"):
        insert_operator_call(graph, "aten::addd", [1, 2])
    with pytest.raises(SchemaError, match="Could not find any similar ops to zz::qqqq"):
        insert_operator_call(graph, "zz::qqqq", [])


def test_error_points_at_the_call_when_given_a_source_range():
    class Range:
        def highlight(self):
            return "    torch.zeros(2, 2.5)\n    ~~~~~~~~~~~ <--- HERE\n"

    with pytest.raises(SchemaError, match=r"The original call is:\n    torch.zeros\(2, 2.5\)\n"):
        insert_operator_call(Graph(), aten.zeros, [2, 2.5], source_range=Range())


# ---- conversions and literals ------------------------------------------------------------------------------
def test_first_pass_prefers_an_overload_without_conversions():
    graph, values = graph_with_inputs("x: Tensor")
    result = insert_operator_call(graph, aten.add, [values["x"], 1])
    assert find_schema_for_node(result.node).overload_name == "Scalar"
    assert inserted_kinds(graph) == ["prim::Constant", "prim::Constant", "aten::add"]


def test_tensor_converts_to_int_float_and_scalar_only_with_conversions():
    schema = find_operator("aten::add.int").schema
    graph, values = graph_with_inputs("t: Tensor, i: int")
    matched = match_schema(schema, graph, [values["t"], values["i"]])
    assert isinstance(matched, MatchedSchema) and matched.schema_name == "aten::add.int"
    assert matched.inputs[0].node.kind is aten.IntImplicit and matched.return_types == [INT]
    with pytest.raises(SchemaError, match="Expected a value of type 'int' for argument 'a'"):
        match_schema(schema, graph, [values["t"], values["i"]], allow_conversions=False)


def test_numbers_never_become_tensors_implicitly():
    graph, values = graph_with_inputs("i: int")
    with pytest.raises(SchemaError):
        match_schema(find_operator("aten::neg").schema, graph, [values["i"]])


def test_scalar_converts_to_int():
    graph = Graph()
    scalar = graph.add_input("n", NumberType.get())
    matched = match_schema(find_operator("aten::add.int").schema, graph, [scalar, 1])
    assert matched.inputs[0].node.kind is aten.Int


def test_optional_accepts_value_and_none():
    schema = find_operator("aten::sum.dim_IntList").schema
    graph, values = graph_with_inputs("x: Tensor, i: int")
    assert match_schema(schema, graph, [values["x"], None]).inputs[1].type == NoneType.get()
    listed = match_schema(schema, graph, [values["x"], values["i"]]).inputs[1]
    assert listed.node.kind is prim.ListConstruct and listed.type == ListType(INT)


def test_fixed_size_list_repeats_a_single_int():
    graph, values = graph_with_inputs("x: Tensor, k: int")
    result = insert_operator_call(graph, aten.max_pool2d, [values["x"], values["k"]])
    kernel = result.node.inputs[1]
    assert kernel.node.kind is prim.ListConstruct and kernel.node.inputs == (values["k"], values["k"])
    assert len(result.node.inputs) == 6  # defaults filled in: stride, padding, dilation, ceil_mode


def test_defaults_are_constants_of_the_argument_type():
    graph, values = graph_with_inputs("x: Tensor")
    result = insert_operator_call(graph, aten.max_pool2d, [values["x"], 2])
    stride = result.node.inputs[2]
    assert stride.node.kind is prim.Constant and stride.type == ListType(INT)


def test_empty_list_literal_takes_the_argument_list_type():
    graph = Graph()
    result = insert_operator_call(graph, aten.zeros, [[]])
    size = result.node.inputs[0]
    assert size.node.kind is prim.ListConstruct and size.type == ListType(INT)
    length = insert_operator_call(graph, aten.len, [[]])
    assert length.node.inputs[0].type == ListType(TENSOR)  # like TorchScript: `[]` defaults to List[Tensor]


def test_list_literal_of_values_unifies_element_types():
    graph, values = graph_with_inputs("i: int, j: int, f: float")
    ints = insert_operator_call(graph, aten.len, [[values["i"], values["j"]]])
    assert ints.node.inputs[0].type == ListType(INT)
    mixed = insert_operator_call(graph, aten.len, [[values["i"], values["f"]]])
    assert mixed.node.inputs[0].type.annotation_str() == "List[Union[float, int]]"


def test_homogeneous_tuple_becomes_a_list():
    graph, values = graph_with_inputs("x: Tensor, p: Tuple[int, int]")
    result = insert_operator_call(graph, aten.view, [values["x"], values["p"]])
    size = result.node.inputs[1]
    assert size.node.kind is prim.ListConstruct and size.node.inputs[0].node.kind is prim.TupleUnpack


def test_string_converts_to_device():
    graph, values = graph_with_inputs("x: Tensor, s: str")
    result = insert_operator_call(graph, aten.to, [values["x"], values["s"]])
    assert result.node.inputs[1].node.kind is aten.device


def test_self_and_input_keyword():
    graph, values = graph_with_inputs("x: Tensor, y: Tensor")
    result = insert_operator_call(graph, aten.add, [values["y"]], self=values["x"])
    assert result.node.inputs[:2] == (values["x"], values["y"])
    relu = insert_operator_call(graph, aten.relu, [], {"input": values["x"]})
    assert relu.node.inputs == (values["x"],)


def test_kwarg_only_argument_by_keyword():
    graph, values = graph_with_inputs("x: Tensor, y: Tensor")
    result = insert_operator_call(graph, aten.add, [values["x"], values["y"]], {"alpha": 3})
    assert find_schema_for_node(result.node).overload_name == "Tensor"
    assert result.node.get("alpha") == 3


def test_several_outputs_come_back_as_a_tuple_with_field_names():
    graph, values = graph_with_inputs("x: Tensor, i: int")
    schemas = [op.schema for op in get_operators(aten.max)]
    _, matched = match_schemas(schemas, graph, [values["x"], values["i"]])
    assert matched.return_field_names == ["values", "indices"]
    outputs = insert_operator_call(graph, aten.max, [values["x"], values["i"]])
    assert isinstance(outputs, tuple) and [v.type for v in outputs] == [TENSOR, TENSOR]


def test_varargs_schema_takes_the_remaining_arguments():
    graph, values = graph_with_inputs("x: Tensor, i: int")
    printed = insert_operator_call(graph, prim.Print, [values["x"], values["i"], "a"])
    assert printed == ()
    node = graph.return_node.prev
    assert node.kind is prim.Print and len(node.inputs) == 3
    formatted = insert_operator_call(graph, aten.format, ["{} {}", values["x"], values["i"]])
    assert formatted.type == STR and len(formatted.node.inputs) == 3


# ---- type variables ----------------------------------------------------------------------------------------
def test_type_variables_bind_and_evaluate():
    env = {}
    t_list = find_operator("aten::append.t").schema.arguments[0].type
    assert match_type_variables(t_list, ListType(INT), env) is None and env == {"t": INT}
    assert eval_type_variables(find_operator("aten::append.t").schema.returns[0].type, env) == ListType(INT)
    assert "previously matched to type int" in match_type_variables(t_list, ListType(STR), env)
    assert eval_type_variables(t_list, {}) is None


def test_append_getitem_len_resolve_the_element_type():
    graph, values = graph_with_inputs("l: List[str], s: str, i: int")
    appended = insert_operator_call(graph, aten.append, [values["l"], values["s"]])
    assert appended.type == ListType(STR)
    assert insert_operator_call(graph, aten.__getitem__, [values["l"], values["i"]]).type == STR
    assert insert_operator_call(graph, aten.len, [values["l"]]).type == INT
    with pytest.raises(SchemaError, match="Could not match type int to t in argument 'el'"):
        insert_operator_call(graph, aten.append, [values["l"], values["i"]])


def test_dict_type_variables():
    graph, values = graph_with_inputs("d: Dict[str, Tensor]")
    assert insert_operator_call(graph, aten.values, [values["d"]]).type == ListType(TENSOR)


def test_none_fits_an_optional_type_variable_when_a_node_is_matched():
    graph = Graph()
    none = graph.insert_constant(None)
    node = graph.insert_node(graph.create(prim.unchecked_unwrap_optional, [none]))
    schema = get_operators(prim.unchecked_unwrap_optional)[0].schema
    assert node_matches_schema(node, schema)


# ---- existing nodes ----------------------------------------------------------------------------------------
def test_find_schema_for_node_uses_input_types_and_respects_counts():
    graph, values = graph_with_inputs("i: int, j: int, x: Tensor")
    add_ints = graph.insert_node(graph.create(aten.add, [values["i"], values["j"]]))
    assert str(find_schema_for_node(add_ints)) == "aten::add.int(int a, int b) -> int"
    add_tensor_no_alpha = graph.insert_node(graph.create(aten.add, [values["x"], values["x"]]))
    assert find_schema_for_node(add_tensor_no_alpha) is None  # alpha is missing: no schema fits
    assert find_schema_for_node(graph.insert_node(graph.create(prim.ListConstruct, []))) is None
    assert str(add_ints.schema) == "aten::add.int(int a, int b) -> int"


def test_node_matches_schema_checks_the_kind():
    graph, values = graph_with_inputs("i: int, j: int")
    node = graph.insert_node(graph.create(aten.sub, [values["i"], values["j"]]))
    assert not node_matches_schema(node, find_operator("aten::add.int").schema)
    assert node_matches_schema(node, find_operator("aten::sub.int").schema)


def test_blocklisted_view_dtype_is_never_chosen():
    graph, values = graph_with_inputs("x: Tensor, i: int")
    node = graph.insert_node(graph.create(aten.view, [values["x"], values["i"]]))
    assert find_schema_for_node(node) is None
    emitted = insert_operator_call(graph, aten.view, [values["x"], values["i"]])
    assert str(find_schema_for_node(emitted.node)) == "aten::view(Tensor(a) self, SymInt[] size) -> Tensor(a)"


# ---- through the Graph API ---------------------------------------------------------------------------------
def test_graph_insert_and_node_schema_use_matching():
    graph, values = graph_with_inputs("x: Tensor, i: int")
    result = graph.insert(aten.add, (values["x"], 3))
    assert str(result.node.schema).startswith("aten::add.Scalar(")
    assert graph.insert(aten.add, (values["i"], values["i"])).type == INT


def test_insertion_before_a_node_and_rollback_there():
    graph, values = graph_with_inputs("x: Tensor, i: int")
    last = insert_operator_call(graph, aten.neg, [values["x"]])
    with graph.insert_point_guard(last.node):
        insert_operator_call(graph, aten.zeros, [values["i"], 3])
        with pytest.raises(SchemaError):
            insert_operator_call(graph, aten.zeros, [values["i"], 2.5])
    kinds = inserted_kinds(graph)
    assert kinds[-1] == "aten::neg" and kinds.count("aten::zeros") == 1
    assert kinds.count("prim::ListConstruct") == 1
    graph.lint()


# ---- plans: a call of the same types matched again -------------------------------------------------------------
def _calls_of_every_kind(graph: Graph, values: dict) -> None:
    """Calls whose matches are plans (Values only), and calls that are matched every time (Python values,
    conversions, varargs), each kind twice over."""
    x, y, i = values["x"], values["y"], values["i"]
    for _ in range(2):
        insert_operator_call(graph, aten.add, [x, y])  # aten::add.Tensor with its default alpha
        insert_operator_call(graph, aten.add, [i, i])  # the Tensor and Scalar overloads fail first
        insert_operator_call(graph, aten.add, [y], {"alpha": i}, self=x)
        insert_operator_call(graph, aten.relu, [], {"input": x})
        insert_operator_call(graph, aten.max, [x, i])  # named outputs
        insert_operator_call(graph, aten.add, [x, 1])  # a Python value
        insert_operator_call(graph, aten.view, [x, values["p"]])  # a tuple converted to a list
        insert_operator_call(graph, aten.max_pool2d, [x, i])  # an int repeated as a list
        insert_operator_call(graph, prim.Print, [x, i])  # varargs


def test_planned_calls_insert_what_matching_inserts(monkeypatch):
    """The graph of the same calls, matched every time and through the plans earlier calls left: the same text,
    node schemas included."""
    params = "x: Tensor, y: Tensor, i: int, p: Tuple[int, int]"
    matched, values = graph_with_inputs(params)
    with monkeypatch.context() as patched:
        patched.setattr(matching, "_call_types", lambda args, kwargs, self_arg: None)  # no plans
        _calls_of_every_kind(matched, values)
    matching._plans.clear()
    for _ in range(2):  # the first graph makes the plans, the second uses them from its first call on
        planned, values = graph_with_inputs(params)
        _calls_of_every_kind(planned, values)
    assert str(planned) == str(matched)
    assert [str(n.schema) for n in planned.nodes() if n.maybe_schema() is not None] == \
        [str(n.schema) for n in matched.nodes() if n.maybe_schema() is not None]
    assert matching._plans, "calls of Values only leave plans"
    planned.lint()


def test_defaults_of_a_planned_call_are_new_constants():
    graph, values = graph_with_inputs("x: Tensor, y: Tensor")
    first, second = (insert_operator_call(graph, aten.add, [values["x"], values["y"]]) for _ in range(2))
    alphas = first.node.inputs[2], second.node.inputs[2]
    assert alphas[0] is not alphas[1] and all(a.node.kind is prim.Constant and constant_of(a) == 1
                                              for a in alphas)


def test_an_overload_registered_after_a_failed_match_is_found():
    """Registration adds schemas: a call that no overload took before is matched against the new one."""
    register_operator("tsjit_matching_plans::f(Tensor a) -> Tensor", lambda a: a)
    register_operator("tsjit_matching_plans::f.int(int a) -> int", lambda a: a)
    graph, values = graph_with_inputs("x: Tensor, y: Tensor")
    with pytest.raises(SchemaError):
        insert_operator_call(graph, "tsjit_matching_plans::f", [values["x"], values["y"]])
    register_operator("tsjit_matching_plans::f.two(Tensor a, Tensor b) -> Tensor", lambda a, b: a + b)
    result = insert_operator_call(graph, "tsjit_matching_plans::f", [values["x"], values["y"]])
    assert str(result.node.schema).startswith("tsjit_matching_plans::f.two(")
