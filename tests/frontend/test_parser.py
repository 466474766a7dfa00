"""The script parser: trees equal to torch's own parser's, TorchScript's precedence table, statements through
the tree views, the deliberate normalizations, and errors that point at the offending text."""

from __future__ import annotations

import pytest
import torch
from script_corpus import NORMALIZED, PROGRAMS

from tsjit.errors import CompileError, SourceParseError, TsjitError
from tsjit.frontend.parser import Parser, parse_definitions, parse_expression, parse_function
from tsjit.frontend.tree_views import (
    Apply,
    Assert,
    Assign,
    AugAssign,
    BinOp,
    ClassDef,
    Const,
    Def,
    Delete,
    DictComp,
    DictLiteral,
    Expr,
    ExprStmt,
    For,
    Global,
    If,
    ListComp,
    ListLiteral,
    Raise,
    Return,
    Select,
    SliceExpr,
    Starred,
    StringLiteral,
    Subscript,
    TernaryIf,
    TupleLiteral,
    UnaryOp,
    Var,
    While,
    With,
    dotted_name,
)
from tsjit.source import lexer as lx
from tsjit.source.source_range import Source

torch_parse = getattr(torch._C, "_parse_source_def", None)
needs_torch_parser = pytest.mark.skipif(torch_parse is None, reason="torch._C._parse_source_def is gone")


def exp(text: str) -> str:
    """The one-line s-expression of an expression."""
    return parse_expression(text).tree.flat()


def body(text: str) -> list:
    """The statements of a function whose body is `text` (indented by the caller)."""
    return parse_function("def f(x, y, z):\n" + text).statements


# ---------------------------------------------------------------------------------------------------------------
# torch's own parser as the oracle


@needs_torch_parser
@pytest.mark.parametrize("name", sorted(set(PROGRAMS) - NORMALIZED))
def test_corpus_matches_torch_parser(name):
    source = PROGRAMS[name]
    assert str(parse_function(source, is_method=True)) == str(torch_parse(source)).rstrip("\n")


PRECEDENCE = [
    # (expression, TorchScript's tree)
    ("a + b * c", "(+ (variable (ident a)) (* (variable (ident b)) (variable (ident c))))"),
    ("a * b + c", "(+ (* (variable (ident a)) (variable (ident b))) (variable (ident c)))"),
    ("a - b - c", "(- (- (variable (ident a)) (variable (ident b))) (variable (ident c)))"),
    ("a ** b ** c", "(pow operator (variable (ident a)) (pow operator (variable (ident b)) (variable (ident c))))"),
    ("-a ** b", "(unary minus (pow operator (variable (ident a)) (variable (ident b))))"),
    ("-2 ** 2", "(unary minus (pow operator (const 2) (const 2)))"),
    ("a ** -b", "(pow operator (variable (ident a)) (unary minus (variable (ident b))))"),
    ("-a * b", "(* (unary minus (variable (ident a))) (variable (ident b)))"),
    ("-1", "(const -1)"),
    ("-1.5e3", "(const -1.5e3)"),
    ("- -1", "(const 1)"),
    ("a @ b * c", "(* (@ (variable (ident a)) (variable (ident b))) (variable (ident c)))"),
    ("a // b % c", "(% (floordiv (variable (ident a)) (variable (ident b))) (variable (ident c)))"),
    ("a << b + c", "(<< (variable (ident a)) (+ (variable (ident b)) (variable (ident c))))"),
    ("a & b << c", "(& (variable (ident a)) (<< (variable (ident b)) (variable (ident c))))"),
    ("a ^ b & c", "(^ (variable (ident a)) (& (variable (ident b)) (variable (ident c))))"),
    ("a | b ^ c", "(| (variable (ident a)) (^ (variable (ident b)) (variable (ident c))))"),
    ("a == b | c", "(eq (variable (ident a)) (| (variable (ident b)) (variable (ident c))))"),
    ("not a == b", "(not (eq (variable (ident a)) (variable (ident b))))"),
    ("not a and b", "(and (not (variable (ident a))) (variable (ident b)))"),
    ("a in b", "(in (variable (ident a)) (variable (ident b)))"),
    ("a not in b", "(not (in (variable (ident a)) (variable (ident b))))"),
    ("a is b", "(is (variable (ident a)) (variable (ident b)))"),
    ("a is not None", "(is not (variable (ident a)) (None))"),
    ("a if b else c", "(if (variable (ident b)) (variable (ident a)) (variable (ident c)))"),
    ("a if b else c if d else e", "(if (variable (ident b)) (variable (ident a)) "
                                  "(if (variable (ident d)) (variable (ident c)) (variable (ident e))))"),
    ("a or b if c else d",
     "(if (variable (ident c)) (or (variable (ident a)) (variable (ident b))) (variable (ident d)))"),
    ("x.y.z", "(. (. (variable (ident x)) (ident y)) (ident z))"),
    ("-x.y", "(unary minus (. (variable (ident x)) (ident y)))"),
    ("f(a)(b)[c].d", "(. (subscript (apply (apply (variable (ident f)) (list (variable (ident a))) (list)) "
                     "(list (variable (ident b))) (list)) (list (variable (ident c)))) (ident d))"),
    # TorchScript's table differs from Python here; this parser keeps TorchScript's reading
    ("a or b and c", "(and (or (variable (ident a)) (variable (ident b))) (variable (ident c)))"),
    ("a < b < c", "(< (< (variable (ident a)) (variable (ident b))) (variable (ident c)))"),
    ("~a + b", "(~ (+ (variable (ident a)) (variable (ident b))))"),
]


@pytest.mark.parametrize("text, expected", PRECEDENCE)
def test_precedence(text, expected):
    assert exp(text) == expected


@needs_torch_parser
@pytest.mark.parametrize("text", [text for text, _ in PRECEDENCE if text != "- -1"])
def test_precedence_matches_torch_parser(text):
    source = f"def f(self):\n    return {text}\n"
    assert str(parse_function(source, is_method=True)) == str(torch_parse(source)).rstrip("\n")


def test_tables_are_torchscripts():
    from tsjit.frontend.parser import BINARY_PRECEDENCE, RIGHT_ASSOCIATIVE, UNARY_PRECEDENCE

    assert BINARY_PRECEDENCE[lx.TK_AND] == BINARY_PRECEDENCE[lx.TK_OR] == 2
    assert UNARY_PRECEDENCE[lx.TK_NOT] == UNARY_PRECEDENCE["~"] == 3
    assert BINARY_PRECEDENCE[lx.TK_POW] > UNARY_PRECEDENCE["-"] == BINARY_PRECEDENCE["*"]
    assert RIGHT_ASSOCIATIVE == {lx.TK_POW, lx.TK_IF}


# ---------------------------------------------------------------------------------------------------------------
# expressions through the views


def test_literals():
    assert [type(parse_expression(t)).__name__ for t in ("1", "'s'", "True", "False", "None", "...", "Ellipsis")] \
        == ["Const", "StringLiteral", "TrueLiteral", "FalseLiteral", "NoneLiteral", "Dots", "Dots"]
    assert parse_expression("'a' \"b\" '''c'''").text == "abc"
    assert parse_expression(r"'\n\x41'").text == "\nA"
    assert parse_expression("NoneType").name.name == "NoneType"


@pytest.mark.parametrize("text, value, kind", [
    ("17", 17, "int"), ("0x1F", 31, "int"), ("-3", -3, "int"), ("2.5", 2.5, "float"), ("1e3", 1000.0, "float"),
    (".5", 0.5, "float"), ("2.", 2.0, "float"), ("0x1.8p1", 3.0, "float"), ("3j", 3j, "complex"),
    ("-2.5j", -2.5j, "complex"),
])
def test_numbers(text, value, kind):
    const = parse_expression(text)
    assert isinstance(const, Const) and const.text == text and const.value == value
    assert (const.is_integral, const.is_floating_point, const.is_complex) == (
        kind == "int", kind == "float", kind == "complex")


def test_integer_out_of_range():
    too_big = parse_expression("9223372036854775808")
    with pytest.raises(TsjitError, match="out of range"):
        _ = too_big.value
    assert parse_expression("-9223372036854775808").value == -(2**63)


def test_calls_and_attributes():
    call = parse_expression("torch.cat([x, y], dim=0, out=z)")
    assert isinstance(call, Apply) and dotted_name(call.callee) == "torch.cat"
    assert isinstance(call.inputs[0], ListLiteral) and [a.name.name for a in call.attributes] == ["dim", "out"]
    assert call.attributes[0].value.value == 0
    method = parse_expression("x.view(*sizes)")
    assert isinstance(method.callee, Select) and method.callee.selector.name == "view"
    assert isinstance(method.inputs[0], Starred)
    assert dotted_name(parse_expression("f().x")) is None


def test_subscripts_and_slices():
    sub = parse_expression("x[1:2, ::3, ..., None, i]")
    assert isinstance(sub, Subscript) and len(sub.subscript_exprs) == 5
    first, second = sub.subscript_exprs[:2]
    assert isinstance(first, SliceExpr) and first.start.value == 1 and first.end.value == 2 and first.step is None
    assert second.start is None and second.step.value == 3 and second.start_or(0).value == 0
    assert [type(e).__name__ for e in sub.subscript_exprs[2:]] == ["Dots", "NoneLiteral", "Var"]
    assert exp("T[()]") == "(subscript (variable (ident T)) (list (tuple-literal (list))))"


def test_displays_and_comprehensions():
    assert isinstance(parse_expression("[x for x in xs]"), ListComp)
    nested = parse_expression("[[x for x in xs]]")
    assert isinstance(nested, ListLiteral) and isinstance(nested.inputs[0], ListComp)
    keyed = parse_expression("{k: [v for v in vs]}")
    assert isinstance(keyed, DictLiteral) and isinstance(keyed.value_inputs[0], ListComp)
    comp = parse_expression("{k: v for k, v in d.items()}")
    assert isinstance(comp, DictComp) and isinstance(comp.target, TupleLiteral) and comp.conditions == []
    filtered = parse_expression("[x for x in xs if x > 0 if x < 9]")
    assert [condition.range.text() for condition in filtered.conditions] == ["x > 0", "x < 9"]
    assert isinstance(parse_expression("f(x * 2 for x in xs)").inputs[0], ListComp)
    assert isinstance(parse_expression("(x for x in xs)"), ListComp)
    assert exp("()") == "(tuple-literal (list))" and exp("(a,)") == "(tuple-literal (list (variable (ident a))))"
    assert exp("{}") == "(dict-literal (list) (list))"


def test_ternary_and_unary_views():
    ternary = parse_expression("a if c else b")
    assert isinstance(ternary, TernaryIf) and ternary.cond.name.name == "c"
    negation = parse_expression("not x")
    assert isinstance(negation, UnaryOp) and negation.kind == lx.TK_NOT and negation.operand.name.name == "x"
    assert isinstance(parse_expression("a + b"), BinOp)


# ---------------------------------------------------------------------------------------------------------------
# statements and definitions


def test_def_and_decl():
    definition = parse_function(PROGRAMS["defaults_and_kwarg_only"])
    assert definition.name.name == "defaults_and_kwarg_only"
    params = definition.decl.params
    assert [p.ident.name for p in params] == ["x", "alpha", "beta", "name", "flag"]
    assert [p.kwarg_only for p in params] == [False, False, False, True, True]
    assert params[1].default_value.value == 1.0 and params[2].default_value.value == -2
    assert params[3].default_value is None and dotted_name(params[0].type) == "Tensor"
    assert dotted_name(definition.decl.return_type) == "Tensor"


def test_assignments():
    plain, chained, annotated, declared, tupled, starred = body(
        "    a = 1\n    b = c = 2\n    d: int = 3\n    e: float\n    f, g = x\n    h, *i = y\n")
    assert isinstance(plain, Assign) and plain.lhs.name.name == "a" and plain.type is None
    assert [t.name.name for t in chained.lhs_list] == ["b", "c"]
    assert annotated.type.name.name == "int" and annotated.rhs.value == 3
    assert declared.rhs is None and declared.type.name.name == "float"
    assert isinstance(tupled.lhs, TupleLiteral) and isinstance(starred.lhs.inputs[1], Starred)


@pytest.mark.parametrize("op, kind", [
    ("+=", "+"), ("-=", "-"), ("*=", "*"), ("/=", "/"), ("%=", "%"), ("|=", "|"), ("&=", "&"), ("^=", "^"),
    ("<<=", lx.TK_LSHIFT), (">>=", lx.TK_RSHIFT), ("**=", lx.TK_POW),
])
def test_aug_assign(op, kind):
    (statement,) = body(f"    x[0] {op} y\n")
    assert isinstance(statement, AugAssign) and statement.aug_op == kind and isinstance(statement.lhs, Subscript)


def test_control_flow():
    (statement,) = body("    if x:\n        pass\n    elif y:\n        return 1\n    else:\n        return\n")
    assert isinstance(statement, If) and len(statement.true_branch) == 1
    (nested,) = statement.false_branch
    assert isinstance(nested, If) and isinstance(nested.false_branch[0], Return)
    assert isinstance(nested.false_branch[0].expr, type(parse_expression("None")))
    loop, = body("    while x < 3:\n        break\n")
    assert isinstance(loop, While) and len(loop.body) == 1
    for_loop, = body("    for i, (a, b) in enumerate(z):\n        continue\n")
    assert isinstance(for_loop, For) and len(for_loop.targets) == 1 and len(for_loop.itrs) == 1
    assert isinstance(for_loop.targets[0], TupleLiteral)
    iterate_tuple, = body("    for i in x, y:\n        pass\n")
    assert isinstance(iterate_tuple.itrs[0], TupleLiteral)


def test_other_statements():
    raise_, raise_from, assert_, delete, with_, expression, global_ = body(
        "    raise ValueError('x')\n    raise E from err\n    assert x, 'm'\n    del x[0], y\n"
        "    with a as b, c:\n        pass\n    f(x)\n    global g\n")
    assert isinstance(raise_, Raise) and isinstance(raise_.expr, Apply)
    assert raise_from.expr.name.name == "E"
    assert isinstance(assert_, Assert) and assert_.msg.text == "m"
    assert isinstance(delete, Delete) and len(delete.targets) == 2
    assert isinstance(with_, With) and with_.targets[0].var.name.name == "b" and with_.targets[1].var is None
    assert isinstance(expression, ExprStmt) and isinstance(global_, Global)


def test_class_definitions():
    (counter,) = parse_definitions(PROGRAMS["script_class"])
    assert isinstance(counter, ClassDef) and counter.name.name == "Counter" and counter.superclass is None
    assert [m.name.name for m in counter.body] == ["__init__", "increment"] and counter.properties == []
    (point,) = parse_definitions(PROGRAMS["named_tuple_class"])
    assert point.superclass.name.name == "NamedTuple" and all(isinstance(s, Assign) for s in point.body)
    assert parse_definitions("class A():\n    pass\n")[0].superclass is None


def test_parse_definitions_reads_many():
    text = "".join(PROGRAMS[name] for name in ("arithmetic", "script_class", "one_line_def"))
    assert [type(d).__name__ for d in parse_definitions(text)] == ["Def", "ClassDef", "Def"]
    assert parse_definitions("") == [] and parse_definitions("\n\n# only a comment\n") == []


def test_indented_source():
    method = "    def forward(self, x):\n        return x\n"
    assert parse_function(method, is_method=True).name.name == "forward"


# ---------------------------------------------------------------------------------------------------------------
# normalizations shared with the Python-AST frontend


def test_docstrings_are_dropped():
    definition = parse_function(PROGRAMS["docstring"])
    assert [type(s).__name__ for s in definition.statements] == ["Assign", "Return"]
    assert parse_function("def f():\n    'only a docstring'\n").statements == []


def test_type_comments():
    signature = parse_function(PROGRAMS["signature_type_comment"]).decl
    assert [dotted_name(p.type) for p in signature.params] == ["Tensor", "int"]
    assert dotted_name(signature.return_type) == "Tensor"
    same_line = parse_function(PROGRAMS["same_line_type_comment"]).decl
    assert isinstance(same_line.params[1].type, Subscript)
    method = parse_function("def m(self, x):\n    # type: (int) -> int\n    return x\n", is_method=True)
    assert method.decl.params[0].type is None and method.decl.params[1].type.name.name == "int"
    statements = parse_function(PROGRAMS["assignment_type_comment"]).statements
    # torch.jit ignores type comments on statements, so `xs = []  # type: List[int]` stays untyped
    assert statements[0].type is None and statements[2].kind == lx.TK_EXPR_STMT
    decl = Parser("# type: (int, List[int]) -> None").parse_type_comment()
    assert [p.ident.name for p in decl.params] == ["", ""]


def test_ranges_cover_their_text():
    source = Source("def f(x):\n    return foo(x, 1) + bar\n")
    (statement,) = parse_function(source).statements
    assert statement.expr.range.text() == "foo(x, 1) + bar"
    assert statement.expr.lhs.callee.range.text() == "foo"


# ---------------------------------------------------------------------------------------------------------------
# errors

C, P = CompileError, SourceParseError
ERRORS = [
    # (function body, error: P for malformed text, C for what TorchScript does not support, message, highlighted)
    ("    return lambda y: y\n", C, "lambda expressions aren't supported", "lambda"),
    ("    try:\n        pass\n    except E:\n        pass\n", C, "try blocks aren't supported", "try"),
    ("    return {1, 2}\n", C, "set literals", "1"),
    ("    return {x for x in y}\n", C, "set literals", "x"),
    ("    return [i for i in x for j in i]\n", C, "Only a single generator", "for"),
    ("    x //= 2\n", C, "unsupported kind of augmented assignment: //=", "//="),
    ("    x @= 2\n", C, "unsupported kind of augmented assignment: @=", "@="),
    ("    while x:\n        pass\n    else:\n        pass\n", C, "else branches of while loops", "else"),
    ("    for i in x:\n        pass\n    else:\n        pass\n", C, "else branches of for loops", "else"),
    ("    import os\n", C, "import statements aren't supported", "import"),
    ("    from os import path\n", C, "import statements aren't supported", "from"),
    ("    return f(**x)\n", C, "keyword-arg expansion is not supported", "**"),
    ("    return {**x}\n", C, "Dict expansion", "**"),
    ("    raise\n", C, "raise statements without an exception", "raise"),
    ("    return +x\n", C, "unsupported unary operator: +", "+"),
    ("    yield x\n", C, "yield expressions aren't supported", "yield"),
    ("    nonlocal x\n", C, "nonlocal variables aren't supported", "nonlocal"),
    ("    async def g():\n        pass\n", C, "async functions aren't supported", "async"),
    ("    class A:\n        pass\n", C, "class definitions are only supported at the top level", "class"),
    ("    @decorator\n    def g():\n        pass\n", C, "decorators aren't supported", "@"),
    ("    a, b += 1\n", P, "augmented assignment can only have one LHS expression", "a, b"),
    ("    a: int = b = 1\n", P, "Annotated multiple assignment", "int"),
    ("    return f'{x}'\n", P, "f-strings are not supported", "f'{x}'"),
    ("    return b'x'\n", P, "bytes literals are not supported", "b'x'"),
    ("    return 0x\n", P, "expected newline but found 'ident'", "x"),
    ("    x = (1\n", P, "expected ) but found 'eof'", ""),
    ("    if x:\n    return 1\n", P, "expected an indented block", ""),
    ("    if x: if y: pass\n", P, "expected an indented block", "if"),
    ("    return [1, 2 for x in y]\n", P, "expected ] but found 'for'", "for"),
    ("    return " + "(" * 150 + "x" + ")" * 150 + "\n", P, "nested too deeply", "("),
]


@pytest.mark.parametrize("text, error, message, highlighted", ERRORS)
def test_errors_point_at_the_problem(text, error, message, highlighted):
    with pytest.raises(error) as info:
        parse_function("def f(x, y):\n" + text)
    assert message in str(info.value)
    if highlighted:  # (errors at a newline or at the end have nothing to underline)
        assert info.value.source_range.text() == highlighted and "<--- HERE" in str(info.value)


@pytest.mark.parametrize("signature, highlighted", [("*args", "*args"), ("**kwargs", "**kwargs"),
                                                    ("x, *rest", "*rest")])
def test_variadic_parameters_are_rejected(signature, highlighted):
    with pytest.raises(CompileError, match="variable number of arguments") as info:
        parse_function(f"def f({signature}):\n    pass\n")
    assert info.value.source_range.text() == highlighted


def test_type_comment_arity_is_checked():
    with pytest.raises(CompileError, match=r"Number of type annotations \(1\) did not match the number of "
                                               r"function parameters \(2\)"):
        parse_function("def f(x, y):\n    # type: (int) -> int\n    return x\n")


def test_decorated_top_level_definitions_are_rejected():
    with pytest.raises(CompileError, match="decorators"):
        parse_definitions("@torch.jit.script\ndef f(x):\n    return x\n")


def test_errors_name_the_file_and_line():
    source = Source("def f(x):\n    return lambda: x\n", filename="model.py", starting_line=10)
    with pytest.raises(CompileError) as info:
        parse_function(source)
    assert 'File "model.py", line 11' in str(info.value)


def test_views_check_kinds():
    with pytest.raises(TsjitError, match="is not a valid Def"):
        Def(parse_expression("x").tree)
    assert isinstance(Expr.wrap(parse_expression("x").tree), Var)
    # equality ignores ranges
    assert Expr.wrap(parse_expression("'s'")) == StringLiteral.create(parse_expression("  'other'").range, "s")
