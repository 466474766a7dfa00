"""The TorchScript lexer: token kinds, indentation, literals, errors, and robustness on arbitrary text."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tsjit.errors import SourceParseError, TsjitError
from tsjit.source import lexer as lx
from tsjit.source.lexer import Lexer, kind_to_string, parse_string_literal
from tsjit.source.source_range import Source


def tokens(text: str) -> list[tuple[str, str]]:
    """(kind, text) of every token up to and including EOF."""
    lexer = Lexer(text)
    out = []
    while True:
        token = lexer.next()
        out.append((token.kind, token.text))
        if token.kind == lx.TK_EOF:
            return out


def kinds(text: str) -> list[str]:
    return [kind for kind, _ in tokens(text)]


def test_function_with_indentation():
    source = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    assert kinds(source) == [
        lx.TK_DEF, lx.TK_IDENT, "(", lx.TK_IDENT, ")", ":", lx.TK_INDENT,
        lx.TK_IF, lx.TK_IDENT, ":", lx.TK_INDENT,
        lx.TK_RETURN, lx.TK_NUMBER, lx.TK_NEWLINE, lx.TK_DEDENT,
        lx.TK_RETURN, lx.TK_NUMBER, lx.TK_NEWLINE, lx.TK_DEDENT, lx.TK_EOF,
    ]


def test_newlines_inside_brackets_are_ignored():
    assert kinds("x = (1,\n     2)\ny = [3,\n4]\n") == [
        lx.TK_IDENT, "=", "(", lx.TK_NUMBER, ",", lx.TK_NUMBER, ")", lx.TK_NEWLINE,
        lx.TK_IDENT, "=", "[", lx.TK_NUMBER, ",", lx.TK_NUMBER, "]", lx.TK_NEWLINE, lx.TK_EOF,
    ]


def test_line_continuation_blank_lines_and_comments():
    assert kinds("x = 1 + \\\n    2  # comment\n\n   \n# whole line\ny = 3") == [
        lx.TK_IDENT, "=", lx.TK_NUMBER, "+", lx.TK_NUMBER, lx.TK_NEWLINE,
        lx.TK_IDENT, "=", lx.TK_NUMBER, lx.TK_EOF,
    ]


def test_indented_start_and_any_final_indentation():
    # the first line's indentation is level zero; the text may end at any indentation
    assert kinds("    x = 1\n    if y:\n        z\n        ") == [
        lx.TK_IDENT, "=", lx.TK_NUMBER, lx.TK_NEWLINE, lx.TK_IF, lx.TK_IDENT, ":", lx.TK_INDENT,
        lx.TK_IDENT, lx.TK_NEWLINE, lx.TK_DEDENT, lx.TK_EOF,
    ]


def test_without_layout_newlines_and_indentation_are_ignored():
    text = "graph(%x):\n  %y = f(%x)\n    block0():\n -> (%y)\n"
    with pytest.raises(SourceParseError, match="invalid indent level 1"):
        tokens(text)
    lexer = Lexer(text, layout=False)
    seen = {lexer.next().kind for _ in range(len(text))}
    assert lx.TK_EOF in seen and not seen & {lx.TK_NEWLINE, lx.TK_INDENT, lx.TK_DEDENT}


def test_type_comment_is_a_token_and_the_rest_is_lexed():
    assert tokens("def f(x):\n    # type: (int) -> int\n    return x\n")[6:13] == [
        (lx.TK_INDENT, "    "), (lx.TK_TYPE_COMMENT, "# type:"), ("(", "("), (lx.TK_IDENT, "int"), (")", ")"),
        (lx.TK_ARROW, "->"), (lx.TK_IDENT, "int"),
    ]


@pytest.mark.parametrize("text, kind", [
    ("->", lx.TK_ARROW), ("**", lx.TK_POW), ("**=", lx.TK_POW_EQ), ("//", lx.TK_FLOOR_DIV),
    ("+=", lx.TK_PLUS_EQ), ("-=", lx.TK_MINUS_EQ), ("*=", lx.TK_TIMES_EQ), ("/=", lx.TK_DIV_EQ),
    ("%=", lx.TK_MOD_EQ), ("|=", lx.TK_BIT_OR_EQ), ("&=", lx.TK_BIT_AND_EQ), ("^=", lx.TK_BIT_XOR_EQ),
    ("<<=", lx.TK_LSHIFT_EQ), (">>=", lx.TK_RSHIFT_EQ), ("<<", lx.TK_LSHIFT), (">>", lx.TK_RSHIFT),
    ("==", lx.TK_EQ), ("!=", lx.TK_NE), ("<=", lx.TK_LE), (">=", lx.TK_GE), ("<=>", lx.TK_EQUIVALENT),
    ("...", lx.TK_DOTS), ("@", "@"), ("~", "~"), ("!", "!"), ("?", "?"), ("def", lx.TK_DEF),
    ("elif", lx.TK_ELIF), ("while", lx.TK_WHILE), ("for", lx.TK_FOR), ("in", lx.TK_IN), ("is", lx.TK_IS),
    ("is not", lx.TK_ISNOT), ("not in", lx.TK_NOTIN), ("not", lx.TK_NOT), ("and", lx.TK_AND),
    ("or", lx.TK_OR), ("True", lx.TK_TRUE), ("False", lx.TK_FALSE), ("None", lx.TK_NONE),
    ("NoneType", lx.TK_NONE_TYPE), ("Ellipsis", lx.TK_ELLIPSIS), ("pass", lx.TK_PASS), ("del", lx.TK_DELETE),
    ("raise", lx.TK_RAISE), ("assert", lx.TK_ASSERT), ("with", lx.TK_WITH), ("as", lx.TK_AS),
    ("class", lx.TK_CLASS_DEF), ("import", lx.TK_IMPORT), ("global", lx.TK_GLOBAL), ("break", lx.TK_BREAK),
    ("continue", lx.TK_CONTINUE), ("return", lx.TK_RETURN),

])
def test_operators_and_keywords(text, kind):
    assert tokens(text) == [(kind, text), (lx.TK_EOF, "")]


@pytest.mark.parametrize("text", ["define", "iffy", "notable", "is_not", "None_", "_x1", "isnot"])
def test_identifiers_that_start_with_keywords(text):
    assert tokens(text) == [(lx.TK_IDENT, text), (lx.TK_EOF, "")]


def test_two_word_operators_end_at_a_word_boundary():
    assert kinds("x is not y") == [lx.TK_IDENT, lx.TK_ISNOT, lx.TK_IDENT, lx.TK_EOF]
    assert kinds("not input") == [lx.TK_NOT, lx.TK_IDENT, lx.TK_EOF]
    assert kinds("is nothing") == [lx.TK_IS, lx.TK_IDENT, lx.TK_EOF]


@pytest.mark.parametrize("text", ["1", "123", "1.", ".5", "1.5", "1e5", "1E-5", "2.5e+3", "0x1F", "0X1f",
                                  "0x1.8p1", "2j", "1.5j", "1e3j", "007"])
def test_numbers(text):
    assert tokens(text) == [(lx.TK_NUMBER, text), (lx.TK_EOF, "")]


def test_numbers_stop_where_strtod_stops():
    assert tokens("1e") == [(lx.TK_NUMBER, "1"), (lx.TK_IDENT, "e"), (lx.TK_EOF, "")]
    assert tokens("0x") == [(lx.TK_NUMBER, "0"), (lx.TK_IDENT, "x"), (lx.TK_EOF, "")]
    assert tokens("x.1") == [(lx.TK_IDENT, "x"), (lx.TK_NUMBER, ".1"), (lx.TK_EOF, "")]
    assert tokens("1_0")[:2] == [(lx.TK_NUMBER, "1"), (lx.TK_IDENT, "_0")]
    assert kinds("-1") == ["-", lx.TK_NUMBER, lx.TK_EOF]


@pytest.mark.parametrize("text, value", [
    ('"abc"', "abc"), ("'abc'", "abc"), ('""', ""), ("'''a\nb'''", "a\nb"), ('"""x"y"""', 'x"y'),
    (r'"a\nb\t\"c\\"', 'a\nb\t"c\\'), (r"'\x41\101\u00e9'", "AAé"), (r'r"a\nb"', "a\\nb"), ("u'x'", "x"),
    (r"R'\d'", "\\d"),
])
def test_string_literals(text, value):
    lexer = Lexer(text)
    token = lexer.expect(lx.TK_STRINGLITERAL)
    assert token.text == text
    assert parse_string_literal(token) == value
    assert lexer.cur().kind == lx.TK_EOF


def test_string_continues_across_escaped_newline_but_not_a_bare_one():
    assert kinds('"a\\\nb"') == [lx.TK_STRINGLITERAL, lx.TK_EOF]
    with pytest.raises(SourceParseError, match="expected a valid token"):
        tokens('"a\nb"')


@pytest.mark.parametrize("text", ['f"x{y}"', 'b"bytes"', r'"\q"'])
def test_unsupported_string_literals_are_errors(text):
    with pytest.raises(SourceParseError):
        parse_string_literal(Lexer(text).cur())


def test_every_token_has_its_range():
    lexer = Lexer(Source("  a +\n  bcd", "f.py"))
    first = lexer.next()
    assert (first.range.start, first.range.end, first.range.text()) == (2, 3, "a")
    assert lexer.next().kind == "+"
    newline = lexer.next()
    assert (newline.kind, newline.text) == (lx.TK_NEWLINE, "  ")  # it spans the next line's indentation
    last = lexer.next()
    assert last.text == "bcd"
    assert last.range.start_line_col() == (2, 2)


def test_cur_lookahead_next_if():
    lexer = Lexer("a ( b")
    assert lexer.cur().text == "a"
    assert lexer.lookahead().kind == "("
    assert not lexer.next_if("(")
    assert lexer.next_if(lx.TK_IDENT)
    assert lexer.next_if("(")
    assert lexer.expect(lx.TK_IDENT).text == "b"
    assert lexer.cur().kind == lx.TK_EOF
    assert lexer.next().kind == lx.TK_EOF
    assert lexer.next().kind == lx.TK_EOF


def test_parse_list():
    lexer = Lexer("(a, b, c) []")
    assert lexer.parse_list("(", ")", lambda: lexer.expect(lx.TK_IDENT).text) == ["a", "b", "c"]
    assert lexer.parse_list("[", "]", lambda: lexer.next()) == []


def test_expect_error_names_both_kinds_and_underlines_the_token():
    lexer = Lexer("foo(1)")
    lexer.next()
    with pytest.raises(SourceParseError) as info:
        lexer.expect(lx.TK_IDENT)
    assert str(info.value) == "expected ident but found '(' here:\nfoo(1)\n   ~ <--- HERE\n"


def test_invalid_character():
    with pytest.raises(SourceParseError) as info:
        tokens("x = $y")
    assert str(info.value) == "expected a valid token but found ' ' here:\nx = $y\n    ~ <--- HERE\n"


def test_invalid_dedent():
    with pytest.raises(SourceParseError, match="invalid indent level 2"):
        tokens("if x:\n    a\n  b\n")
    with pytest.raises(SourceParseError, match="invalid indent level 0"):
        tokens("  a\nb\n")


def test_kind_to_string():
    assert kind_to_string(lx.TK_IDENT) == "ident"
    assert kind_to_string(lx.TK_ARROW) == "arrow"
    assert kind_to_string(lx.TK_STRINGLITERAL) == "string_literal"
    assert kind_to_string("+") == "+"


@settings(max_examples=600, deadline=None)
@given(st.text(max_size=80) | st.text(alphabet="()[]{}\n\t #\\'\"ab1.2eji-+*/:=!<>|&", max_size=80))
def test_any_text_gives_tokens_or_a_tsjit_error(text):
    try:
        lexer = Lexer(text)
        for _ in range(len(text) + 10):
            token = lexer.next()
            assert token.range.start <= token.range.end <= len(text)
            if token.kind == lx.TK_STRINGLITERAL:
                try:
                    parse_string_literal(token)
                except SourceParseError:
                    pass
            if token.kind == lx.TK_EOF:
                break
        else:
            pytest.fail("no EOF token")
    except TsjitError as error:
        assert "HERE" in str(error) or "\n" in str(error)
