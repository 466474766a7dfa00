"""What the parser fuzzers found, kept found: each input once gave an untyped exception, now a parse error that
says what is wrong."""

from __future__ import annotations

import pytest

from tsjit.errors import SourceParseError
from tsjit.frontend.parser import parse_expression
from tsjit.ir.parser import parse_ir
from tsjit.ir.schema import parse_schema
from tsjit.ir.type_parser import parse_type
from tsjit.source.lexer import Lexer


def deep_blocks(depth: int) -> str:
    """A graph of `depth` prim::If nodes, each inside the first block of the one before."""
    body = ""
    for level in reversed(range(depth)):
        indent = "  " * (2 * level + 1)
        body = (f"{indent}%r{level} : int = prim::If(%c)\n{indent}  block0():\n{body}{indent}    -> (%k)\n"
                f"{indent}  block1():\n{indent}    -> (%k)\n")
    return f"graph(%c : bool, %k : int):\n{body}  return (%k)\n"


NESTED = [
    # RecursionError (types, schemas) or IndexError from an emptied token queue (IR text)
    (lambda: parse_type("(" * 400 + "int" + ")" * 400, "ir")),
    (lambda: parse_type("(" * 400 + "int" + ")" * 400, "schema")),
    (lambda: parse_type("List[" * 400 + "int" + "]" * 400, "annotation")),
    (lambda: parse_type("Dict(str, " * 400 + "int" + ")" * 400, "ir")),
    (lambda: parse_schema("f(" + "(" * 400 + "int" + ")" * 400 + " x) -> int")),
    (lambda: parse_ir("graph(%x : " + "(" * 400 + "int" + ")" * 400 + "):\n  return (%x)\n")),
    (lambda: parse_ir("graph():\n  %x : int[] = prim::Constant[value=" + "[" * 500 + "]" * 500 + "]()\n"
                      "  return (%x)\n")),
    (lambda: parse_ir(deep_blocks(300))),
    (lambda: parse_expression("(" * 1000 + "1" + ")" * 1000)),
]


@pytest.mark.parametrize("parse", NESTED)
def test_deep_nesting_is_a_parse_error(parse):
    with pytest.raises(SourceParseError, match="nested too deeply"):
        parse()


def test_nesting_below_the_limit_parses():
    nested = parse_type("List[" * 90 + "int" + "]" * 90, "annotation")
    for _ in range(90):
        nested = nested.elem
    assert str(nested) == "int"
    assert len(list(parse_ir(deep_blocks(40)).nodes())) == 1


@pytest.mark.parametrize("parse, message", [
    (lambda: parse_schema("f(int x=" + "9" * 5000 + ") -> int"), "out of range"),  # was ValueError (int digits)
    (lambda: parse_type("Float(" + "9" * 5000 + ")", "ir"), "expected an integer"),
    (lambda: parse_type("Float(requires_grad=1.5)", "ir"), "expected an integer"),  # was ValueError
])
def test_numbers_out_of_reach_are_parse_errors(parse, message):
    with pytest.raises(SourceParseError, match=message):
        parse()


def test_a_lexing_error_after_the_current_token_leaves_it_current():
    """`next()` lexes the following token before it consumes the current one: when that fails, the error
    handler still finds a current token (the IR parser's did not: IndexError on an empty deque)."""
    lexer = Lexer("a $")
    with pytest.raises(SourceParseError, match="valid token"):
        lexer.next()
    assert lexer.cur().text == "a"
