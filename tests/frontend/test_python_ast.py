"""The Python-AST frontend: the same trees as the text parser, torch.jit's frontend as an oracle, sources found
through inspect with ranges into the real file, and unsupported Python rejected at the right span."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import io
import sys
from typing import NamedTuple

import pytest
import torch
from script_corpus import PROGRAMS, programs_py_sources

import tsjit
from tsjit.errors import CompileError, SourceParseError, TsjitError
from tsjit.frontend.parser import parse_definitions, parse_expression
from tsjit.frontend.python_ast import build_definitions, get_jit_class_def, get_jit_def, get_source
from tsjit.frontend.tree_views import Apply, Assign, ClassDef, Def, Select, StringLiteral, Subscript, dotted_name
from tsjit.source import lexer as lx

# ---------------------------------------------------------------------------------------------------------------
# agreement with the text parser


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_corpus_agrees_with_text_parser(name):
    source = PROGRAMS[name]
    assert build_definitions(source) == parse_definitions(source)


# programs of tests/ir/corpus/programs.py that mix `and` with `or` or chain comparisons (see below)
PROGRAMS_PY_DIVERGENT = {"ternary_and_boolops", "string_compare"}


@pytest.mark.parametrize("name", sorted(programs_py_sources()))
def test_ir_corpus_programs_agree_with_text_parser(name):
    source = programs_py_sources()[name]
    same = build_definitions(source) == parse_definitions(source)
    assert same == (name not in PROGRAMS_PY_DIVERGENT)


@pytest.mark.parametrize("text, python_reading, torchscript_reading", [
    ("a or b and c", "(or (variable (ident a)) (and (variable (ident b)) (variable (ident c))))",
     "(and (or (variable (ident a)) (variable (ident b))) (variable (ident c)))"),
    ("a < b < c", "(and (< (variable (ident a)) (variable (ident b))) (< (variable (ident b)) (variable (ident c))))",
     "(< (< (variable (ident a)) (variable (ident b))) (variable (ident c)))"),
    ("a < b not in c", "(and (< (variable (ident a)) (variable (ident b))) "
                       "(not (in (variable (ident b)) (variable (ident c)))))",
     "(not (in (< (variable (ident a)) (variable (ident b))) (variable (ident c))))"),
    ("~a + b", "(+ (~ (variable (ident a))) (variable (ident b)))",
     "(~ (+ (variable (ident a)) (variable (ident b))))"),
])
def test_where_torchscript_text_reads_differently_from_python(text, python_reading, torchscript_reading):
    (definition,) = build_definitions(f"def f(a, b, c):\n    return {text}\n")
    assert definition.statements[0].expr.tree.flat() == python_reading
    assert parse_expression(text).tree.flat() == torchscript_reading


# ---------------------------------------------------------------------------------------------------------------
# torch.jit's Python frontend as the oracle

ORACLE_HEADER = """from __future__ import annotations
import torch
import torch.nn.functional as F
from torch import Tensor
from typing import *
"""


def _torch_comparable(source: str) -> bool:
    """Whether torch.jit's frontend should build exactly our tree for this source."""
    return not any(_differs_on_purpose(node, source) for node in ast.walk(ast.parse(source, type_comments=True)))


def _differs_on_purpose(node: ast.AST, source: str) -> bool:
    """Trees tsjit builds differently on purpose: defaults (torch leaves them out of the tree), number spellings
    other than Python's str (torch respells them), negative literals (folded here), docstrings (torch keeps
    them), classes, and type comments torch cannot place (on an assignment, or on the def's own line)."""
    if isinstance(node, ast.ClassDef) or _is_docstring(node):
        return True
    if isinstance(node, ast.arguments):
        return bool(node.defaults or any(node.kw_defaults))
    if isinstance(node, ast.Constant) and type(node.value) in (int, float, complex):
        return ast.get_source_segment(source, node) != str(node.value)
    if isinstance(node, ast.UnaryOp):
        return isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant)
    if isinstance(node, ast.Assign):
        return node.type_comment is not None
    return isinstance(node, ast.FunctionDef) and "# type:" in source.splitlines()[node.lineno - 1]


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


ORACLE_PROGRAMS = sorted(name for name, source in PROGRAMS.items() if _torch_comparable(source))


@pytest.fixture(scope="module")
def oracle_module(tmp_path_factory):
    """The comparable corpus programs as functions of a real module, so inspect finds their source."""
    path = tmp_path_factory.mktemp("oracle") / "tsjit_frontend_oracle.py"
    path.write_text(ORACLE_HEADER + "".join(PROGRAMS[name] for name in ORACLE_PROGRAMS), encoding="utf-8")
    spec = importlib.util.spec_from_file_location("tsjit_frontend_oracle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", ORACLE_PROGRAMS)
def test_matches_torch_jit_frontend(name, oracle_module):
    fn = getattr(oracle_module, name)
    assert str(get_jit_def(fn)) == str(torch.jit.frontend.get_jit_def(fn, name)).rstrip("\n")


def test_oracle_covers_most_of_the_corpus():
    assert len(ORACLE_PROGRAMS) >= 25


# ---------------------------------------------------------------------------------------------------------------
# real functions, through inspect


def _identity(fn):
    return fn


@_identity
@_identity
def decorated(x: torch.Tensor, n: int = 2) -> torch.Tensor:
    """Doc."""
    y = x * n  # ünïcode comment
    return y + undefined_name  # noqa: F821


def with_type_comments(x, xs):
    # type: (Tensor, List[int]) -> Tensor
    ys = []  # type: List[int]
    ys.append(len(xs))
    return x


def with_same_line_type_comment(x):  # type: (int) -> int
    return x


def with_fstring(x: int, name: str) -> str:
    return f"{{literal}} {name} = {x}!"


def make_closure():
    def inner(a: int) -> int:
        return a ** 2

    return inner


class Module(torch.nn.Module):
    scale: int = 3

    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.ones(2))

    def forward(self, x):
        # type: (Tensor) -> Tensor
        return x * self.weight

    @torch.jit.export
    def helper(self, s: str = "héllo") -> str:
        return s + ""

    @property
    def doubled(self) -> int:
        return self.scale * 2

    @doubled.setter
    def doubled(self, value: int):
        self.scale = value // 2

    @staticmethod
    def static(x: int) -> int:
        return x


class Pair(NamedTuple):
    first: int
    second: list[int]


def test_decorators_are_skipped_and_ranges_point_into_this_file():
    definition = get_jit_def(decorated)
    assert definition.name.name == "decorated" and len(definition.statements) == 2
    ret = definition.statements[1]
    lines, first_line = inspect.getsourcelines(decorated)
    expected_line = first_line + next(i for i, line in enumerate(lines) if "undefined_name" in line)
    undefined = ret.expr.rhs
    assert undefined.range.text() == "undefined_name"
    assert undefined.range.filename == __file__ and undefined.range.start_line_col()[0] == expected_line
    assert f'File "{__file__}", line {expected_line}' in undefined.range.highlight()
    assert definition.decl.params[1].default_value.value == 2


def test_source_columns_count_characters_not_bytes():
    definition = get_jit_def(Module.helper, self_name="Module")
    assert definition.decl.params[1].default_value.range.text() == '"héllo"'
    assert get_jit_def(decorated).statements[0].range.text() == "y = x * n"


def test_methods_nested_functions_and_renaming():
    forward = get_jit_def(Module.forward, self_name="Module")
    assert [p.ident.name for p in forward.decl.params] == ["self", "x"]
    assert forward.decl.params[0].type is None and dotted_name(forward.decl.params[1].type) == "Tensor"
    assert get_jit_def(Module.forward, "renamed", self_name="Module").name.name == "renamed"
    with pytest.raises(CompileError, match="function parameters"):
        get_jit_def(Module.forward)  # not told it is a method, so self needs a type in the comment
    inner = get_jit_def(make_closure())
    assert inner.name.name == "inner" and inner.name.range.text() == "inner"


def test_type_comments():
    definition = get_jit_def(with_type_comments)
    assert [dotted_name(p.type) for p in definition.decl.params[:1]] == ["Tensor"]
    assert isinstance(definition.decl.params[1].type, Subscript)
    assignment = definition.statements[0]
    assert isinstance(assignment, Assign) and assignment.type is None  # ignored, as torch.jit does
    assert get_jit_def(with_same_line_type_comment).decl.params[0].type.name.name == "int"


def test_fstrings_become_format_calls():
    (ret,) = get_jit_def(with_fstring).statements
    call = ret.expr
    assert isinstance(call, Apply) and isinstance(call.callee, Select) and call.callee.selector.name == "format"
    template = call.callee.value
    assert isinstance(template, StringLiteral) and template.text == "{{literal}} {} = {}!"
    assert template.text.format("n", 1) == "{literal} n = 1!"
    assert [a.name.name for a in call.inputs] == ["name", "x"]


def with_conversions(name: str, n: int, names: list[str], pair: tuple[str, int]) -> str:
    return f"{name!r} {name!s} {n!r} {names!r} {pair!r} {repr(name)}"


def test_fstring_conversions_are_repr_and_str_calls():
    """`{x!r}` and `{x!s}` (torch.jit refuses both): repr quotes strings as Python does, in containers too."""
    args = ("mean", 3, ["a", "b"], ("c", 1))
    scripted = tsjit.script(with_conversions)
    assert scripted(*args) == with_conversions(*args) == "'mean' mean 3 ['a', 'b'] ('c', 1) 'mean'"
    buffer = io.BytesIO()
    tsjit.save(scripted, buffer)
    buffer.seek(0)
    assert tsjit.load(buffer)(*args) == with_conversions(*args)


def with_local_imports(x: torch.Tensor) -> torch.Tensor:
    import math

    import torch.nn.functional as F
    from torch.nn.functional import gelu
    from torch.nn.functional import relu as positive
    return positive(x) + gelu(x) + F.silu(x) * math.pi


def test_imports_inside_a_function_bind_what_python_binds():
    """`import` and `from ... import` in a function body (torch.jit refuses them) bind the module, attribute or
    submodule found when the function compiles, as the same names bound as globals would be."""
    x = torch.randn(4)
    assert torch.allclose(tsjit.script(with_local_imports)(x), with_local_imports(x))


def test_a_failing_import_is_a_compile_error():
    def imports_nothing(x: torch.Tensor) -> torch.Tensor:
        from torch.nn import no_such_name
        return no_such_name(x)

    with pytest.raises(CompileError, match="cannot import torch.nn.no_such_name"):
        tsjit.script(imports_nothing)


def test_class_definitions():
    definition = get_jit_class_def(Module, "__torch__.Module")
    assert isinstance(definition, ClassDef) and definition.name.name == "__torch__.Module"
    assert dotted_name(definition.superclass) == "torch.nn.Module"
    assert [type(s).__name__ for s in definition.body] == ["Assign", "Def", "Def", "Def", "Def"]
    assert [d.name.name for d in definition.body if isinstance(d, Def)] == ["__init__", "forward", "helper",
                                                                             "static"]
    (prop,) = definition.properties
    assert prop.name.name == "doubled" and prop.getter.name.name == "__doubled_getter"
    assert prop.setter.name.name == "__doubled_setter"
    pair = get_jit_class_def(Pair)
    assert pair.name.name == "Pair" and [s.lhs.name.name for s in pair.body] == ["first", "second"]
    assert all(s.rhs is None for s in pair.body)


def test_get_source_reports_file_and_first_line():
    source = get_source(decorated)
    assert source.filename == __file__ and source.text.startswith("@_identity")
    assert source.starting_line == inspect.getsourcelines(decorated)[1]


def test_sources_that_cannot_be_compiled():
    with pytest.raises(CompileError, match="Can't get source"):
        get_jit_def(len)
    square = lambda x: x * x  # noqa: E731
    with pytest.raises(CompileError, match="Expected a single top-level function"):
        get_jit_def(square)


def test_python_syntax_errors_point_at_the_source():
    with pytest.raises(SourceParseError, match="invalid syntax") as info:
        build_definitions("def f(x):\n    return x +\n", filename="broken.py", starting_line=7)
    assert 'File "broken.py", line 8' in str(info.value)


def test_lone_carriage_returns_end_lines():
    (definition,) = build_definitions("def f(x):\r    y = x\r    return y\r")
    assert definition.statements[1].range.text() == "return y"


def test_build_definitions_reads_many():
    text = "".join(PROGRAMS[name] for name in ("arithmetic", "script_class", "one_line_def"))
    assert [type(d).__name__ for d in build_definitions(text)] == ["Def", "ClassDef", "Def"]
    with pytest.raises(CompileError, match="at the top level aren't supported"):
        build_definitions("import torch\n")


def test_deep_nesting_is_an_error_not_a_crash():
    with pytest.raises(TsjitError, match="nested too deeply"):
        build_definitions("def f(x):\n    return " + "-" * 5000 + "x\n")
    assert sys.getrecursionlimit() >= 1000


# ---------------------------------------------------------------------------------------------------------------
# unsupported Python: the message names the construct and the span underlines it

UNSUPPORTED = [
    # (function body, message, highlighted text)
    ("    return lambda y: y\n", "lambda expressions aren't supported", "lambda y: y"),
    ("    return {1, 2}\n", "set literals aren't supported", "{1, 2}"),
    ("    return {i for i in x}\n", "set comprehensions aren't supported", "{i for i in x}"),
    ("    return (y := 1)\n", "assignment expressions aren't supported", "y := 1"),
    ("    yield x\n", "yield expressions aren't supported", "yield x"),
    ("    yield from x\n", "yield expressions aren't supported", "yield from x"),
    ("    try:\n        pass\n    finally:\n        pass\n", "try blocks aren't supported", "try"),
    ("    try:\n        pass\n    except E:\n        pass\n", "try blocks aren't supported", "try"),
    ("    global g\n", "global variables aren't supported", "global"),
    ("    nonlocal g\n", "nonlocal variables aren't supported", "nonlocal"),
    ("    from os import *\n", "import * isn't supported", "from"),
    ("    def g():\n        pass\n", "function definitions aren't supported", "def"),
    ("    class A:\n        pass\n", "class definitions aren't supported", "class"),
    ("    async def g():\n        pass\n", "async function definitions aren't supported", "async def"),
    ("    match x:\n        case 1:\n            pass\n", "match statements aren't supported", "match"),
    ("    y: int\n", "annotated assignments without assigned value aren't supported", "y: int"),
    ("    self.y: int = 1\n", "Type annotations on instance attributes must be declared in __init__",
     "self.y: int = 1"),
    ("    x //= 2\n", "unsupported kind of augmented assignment: FloorDiv", "//="),
    ("    x @= y\n", "unsupported kind of augmented assignment: MatMult", "@="),
    ("    return +x\n", "unsupported unary operator: UAdd", "+x"),
    ("    return f(**x)\n", "keyword-arg expansion is not supported", "**x"),
    ("    return {**x}\n", "Dict expansion", "{**x}"),
    ("    return [i for i in x for j in i]\n", "Only a single generator", "[i for i in x for j in i]"),
    ("    while x:\n        pass\n    else:\n        pass\n", "else branches of while loops aren't supported", "else"),
    ("    for i in x:\n        pass\n    else:\n        pass\n", "else branches of for loops aren't supported", "else"),
    ("    raise\n", "raise statements without an exception aren't supported", "raise"),
    ("    __jit_y = 1\n", "can't start with __jit", "__jit_y"),
    ("    return b'bytes'\n", "bytes literals aren't supported", "b'bytes'"),
    # (before Python 3.12, the parts of an f-string carry the position of the whole f-string)
    ("    return f'{x!a}'\n", "Don't support conversion !a in JoinedStr", ("{x!a}", "f'{x!a}'")),
    ("    return f'{x:>10}'\n", "Don't support formatting in JoinedStr", ("{x:>10}", "f'{x:>10}'")),
    ("    with a as (b, c):\n        pass\n", "with-statement targets must be simple names", "(b, c)"),
]


@pytest.mark.parametrize("text, message, highlighted", UNSUPPORTED)
def test_unsupported_python_is_rejected(text, message, highlighted):
    with pytest.raises(CompileError) as info:
        build_definitions("def f(self, x, a, y):\n" + text)
    error = info.value
    assert message in str(error) and "<--- HERE" in str(error)
    assert error.source_range.text() in (highlighted if isinstance(highlighted, tuple) else (highlighted,))


@pytest.mark.parametrize("signature, highlighted", [("*args", "*args"), ("x, **kwargs", "**kwargs")])
def test_variadic_parameters_are_rejected(signature, highlighted):
    with pytest.raises(CompileError, match="variable number of arguments") as info:
        build_definitions(f"def f({signature}):\n    pass\n")
    assert info.value.source_range.text() == highlighted


@pytest.mark.parametrize("header, message, highlighted", [
    ("class A(B, C):", "multiple inheritance isn't supported", "C"),
    ("class A(metaclass=M):", "metaclass", "metaclass=M"),
])
def test_unsupported_class_headers(header, message, highlighted):
    with pytest.raises(CompileError, match=message) as info:
        build_definitions(header + "\n    pass\n")
    assert info.value.source_range.text() == highlighted


def test_per_argument_type_comments_are_rejected():
    with pytest.raises(CompileError, match="per-argument type comments"):
        build_definitions("def f(a,  # type: int\n      b):\n    pass\n")


def test_type_comment_arity_is_checked():
    with pytest.raises(CompileError, match=r"Number of type annotations \(2\) did not match"):
        build_definitions("def f(x):\n    # type: (int, int) -> int\n    return x\n")


def test_accepted_python_only_syntax():
    """Generators are list comprehensions and a raise's cause is dropped, as in torch.jit."""
    (definition,) = build_definitions("def f(x):\n    y = sum(i for i in x)\n    raise E(y) from None\n")
    assert definition.statements[0].rhs.inputs[0].kind == lx.TK_LIST_COMP
    assert definition.statements[1].expr.callee.name.name == "E"


def _trailing_comment_and_pass(x):
    if x:
        return 1
    else:
        pass
        # a comment indented deeper than the def: inspect keeps it in the block


def test_function_source_lines_are_what_inspect_finds():
    from tsjit.frontend.python_ast import _source_lines

    functions = [f for f in vars(torch.nn.functional).values() if inspect.isfunction(f)]
    functions += [_trailing_comment_and_pass, test_function_source_lines_are_what_inspect_finds]
    for function in functions:
        assert _source_lines(function) == inspect.getsourcelines(function), function.__qualname__
