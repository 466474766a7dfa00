"""TorchScript's lexer: text to tokens, with Python's indentation turned into INDENT/DEDENT/NEWLINE.

    lexer = Lexer(Source("def f(x):\\n    return x\\n"))
    lexer.expect(TK_DEF); name = lexer.expect(TK_IDENT).text
    if lexer.next_if("("): ...

Token kinds are strings. A single-character operator is its own kind (`"+"`, `"("`, `"!"`), every other kind
is the name of the C++ TokenKind (`TK_IDENT`, `TK_NUMBER`, `TK_ARROW` for `->`, `TK_POW` for `**`, ...), so
code reads like torch/csrc/jit/frontend/lexer.h. Some kinds (TK_APPLY, TK_LIST, ...) never come out of the
lexer; they name tree nodes.

Behaviour follows TorchScript's lexer:
- Blank lines and comments are skipped, except that `# type:` becomes a TK_TYPE_COMMENT token (the rest of the
  comment is lexed as ordinary tokens, for the parser to read as a type signature).
- Inside (), [] and {} newlines are ignored; elsewhere a newline becomes TK_NEWLINE, TK_INDENT or TK_NEWLINE
  followed by TK_DEDENTs, by comparing the next line's indentation with a stack of open indentation levels.
  Text may start indented (that indentation is level zero) and may end at any indentation.
- A backslash before a newline joins the lines.
- Numbers are what C's strtod reads (`1`, `1.`, `.5`, `1e-5`, `0x1F`, `0x1.8p1`), optionally followed by `j`.
- Keywords win over identifiers of the same length; the longest operator wins (`**=` over `**` over `*`).
Deliberate differences: string literals may carry Python prefixes (`r"..."`, `b'...'`, `f"..."`), and the
two-word operators `is not` / `not in` must end at a word boundary (C++ lexes `not input` as `not in`, `put`).
"""

from __future__ import annotations

import ast
import re
import warnings
from collections import deque
from collections.abc import Callable
from typing import Any

from tsjit.errors import SourceParseError
from tsjit.source.source_range import Source, SourceRange

# Kinds the lexer produces or the parser uses for tree nodes; the value of each is its own name.
TK_EOF = "TK_EOF"
TK_WHITESPACE = "TK_WHITESPACE"
TK_WHITESPACE_EOF = "TK_WHITESPACE_EOF"
TK_NUMBER = "TK_NUMBER"
TK_NEWLINE = "TK_NEWLINE"
TK_INDENT = "TK_INDENT"
TK_DEDENT = "TK_DEDENT"
TK_DEF = "TK_DEF"
TK_EQUIVALENT = "TK_EQUIVALENT"
TK_IDENT = "TK_IDENT"
TK_STRING = "TK_STRING"
TK_STRINGLITERAL = "TK_STRINGLITERAL"
TK_CONST = "TK_CONST"
TK_LIST = "TK_LIST"
TK_DICT = "TK_DICT"
TK_OPTION = "TK_OPTION"
TK_APPLY = "TK_APPLY"
TK_COMPREHENSION = "TK_COMPREHENSION"
TK_RANGE_CONSTRAINT = "TK_RANGE_CONSTRAINT"
TK_PARAM = "TK_PARAM"
TK_INFERRED = "TK_INFERRED"
TK_ACCESS = "TK_ACCESS"
TK_ASSIGN = "TK_ASSIGN"
TK_AUG_ASSIGN = "TK_AUG_ASSIGN"
TK_ATTRIBUTE = "TK_ATTRIBUTE"
TK_IF = "TK_IF"
TK_ELSE = "TK_ELSE"
TK_ELIF = "TK_ELIF"
TK_WHILE = "TK_WHILE"
TK_EXPR_STMT = "TK_EXPR_STMT"
TK_RETURN = "TK_RETURN"
TK_IS = "TK_IS"
TK_ISNOT = "TK_ISNOT"
TK_NE = "TK_NE"
TK_EQ = "TK_EQ"
TK_LE = "TK_LE"
TK_GE = "TK_GE"
TK_FLOOR_DIV = "TK_FLOOR_DIV"
TK_IF_EXPR = "TK_IF_EXPR"
TK_TRUE = "TK_TRUE"
TK_FALSE = "TK_FALSE"
TK_NONE = "TK_NONE"
TK_AND = "TK_AND"
TK_OR = "TK_OR"
TK_NOT = "TK_NOT"
TK_LSHIFT = "TK_LSHIFT"
TK_RSHIFT = "TK_RSHIFT"
TK_CAST = "TK_CAST"
TK_PLUS_EQ = "TK_PLUS_EQ"
TK_MINUS_EQ = "TK_MINUS_EQ"
TK_TIMES_EQ = "TK_TIMES_EQ"
TK_DIV_EQ = "TK_DIV_EQ"
TK_MOD_EQ = "TK_MOD_EQ"
TK_BIT_OR_EQ = "TK_BIT_OR_EQ"
TK_BIT_AND_EQ = "TK_BIT_AND_EQ"
TK_BIT_XOR_EQ = "TK_BIT_XOR_EQ"
TK_LSHIFT_EQ = "TK_LSHIFT_EQ"
TK_RSHIFT_EQ = "TK_RSHIFT_EQ"
TK_POW_EQ = "TK_POW_EQ"
TK_GLOBAL = "TK_GLOBAL"
TK_BUILT_IN = "TK_BUILT_IN"
TK_SUBSCRIPT = "TK_SUBSCRIPT"
TK_VAR = "TK_VAR"
TK_NOTHING = "TK_NOTHING"
TK_DICT_LITERAL = "TK_DICT_LITERAL"
TK_LIST_LITERAL = "TK_LIST_LITERAL"
TK_TUPLE_LITERAL = "TK_TUPLE_LITERAL"
TK_FOR = "TK_FOR"
TK_IN = "TK_IN"
TK_NOTIN = "TK_NOTIN"
TK_STARRED = "TK_STARRED"
TK_UNARY_MINUS = "TK_UNARY_MINUS"
TK_POW = "TK_POW"
TK_ARROW = "TK_ARROW"
TK_DECL = "TK_DECL"
TK_SLICE_EXPR = "TK_SLICE_EXPR"
TK_TYPE_COMMENT = "TK_TYPE_COMMENT"
TK_RAISE = "TK_RAISE"
TK_ASSERT = "TK_ASSERT"
TK_DOTS = "TK_DOTS"
TK_LIST_COMP = "TK_LIST_COMP"
TK_DICT_COMP = "TK_DICT_COMP"
TK_BREAK = "TK_BREAK"
TK_CONTINUE = "TK_CONTINUE"
TK_DELETE = "TK_DELETE"
TK_PASS = "TK_PASS"
TK_CLASS_DEF = "TK_CLASS_DEF"
TK_IMPORT = "TK_IMPORT"
TK_WITH = "TK_WITH"
TK_WITH_ITEM = "TK_WITH_ITEM"
TK_AS = "TK_AS"
TK_PROP = "TK_PROP"
TK_ELLIPSIS = "TK_ELLIPSIS"
TK_NONE_TYPE = "TK_NONE_TYPE"

# kind -> (name in messages, spelling in source or "" if it has none); the C++ TC_FORALL_TOKEN_KINDS table.
TOKEN_KINDS: dict[str, tuple[str, str]] = {
    TK_EOF: ("eof", ""), TK_WHITESPACE: ("whitespace", ""), TK_WHITESPACE_EOF: ("whitespace_eof", ""),
    TK_NUMBER: ("number", ""), TK_NEWLINE: ("newline", ""), TK_INDENT: ("indent", ""),
    TK_DEDENT: ("dedent", ""), TK_DEF: ("def", "def"), TK_EQUIVALENT: ("equivalent", "<=>"),
    TK_IDENT: ("ident", ""), TK_STRING: ("string", ""), TK_STRINGLITERAL: ("string_literal", ""),
    TK_CONST: ("const", ""), TK_LIST: ("list", ""), TK_DICT: ("dict", ""), TK_OPTION: ("option", ""),
    TK_APPLY: ("apply", ""), TK_COMPREHENSION: ("comprehension", ""),
    TK_RANGE_CONSTRAINT: ("range_constraint", ""), TK_PARAM: ("param", ""), TK_INFERRED: ("inferred", ""),
    TK_ACCESS: ("access", ""), TK_ASSIGN: ("assign", ""), TK_AUG_ASSIGN: ("aug_assign", ""),
    TK_ATTRIBUTE: ("attribute", ""), TK_IF: ("if", "if"), TK_ELSE: ("else", "else"),
    TK_ELIF: ("elif", "elif"), TK_WHILE: ("while", "while"), TK_EXPR_STMT: ("expression statement", ""),
    TK_RETURN: ("return", "return"), TK_IS: ("is", "is"), TK_ISNOT: ("is not", "is not"),
    TK_NE: ("ne", "!="), TK_EQ: ("eq", "=="), TK_LE: ("le", "<="), TK_GE: ("ge", ">="),
    TK_FLOOR_DIV: ("floordiv", "//"), TK_IF_EXPR: ("if", ""), TK_TRUE: ("True", "True"),
    TK_FALSE: ("False", "False"), TK_NONE: ("None", "None"), TK_AND: ("and", "and"), TK_OR: ("or", "or"),
    TK_NOT: ("not", "not"), TK_LSHIFT: ("<<", "<<"), TK_RSHIFT: (">>", ">>"), TK_CAST: ("cast", ""),
    TK_PLUS_EQ: ("+=", "+="), TK_MINUS_EQ: ("-=", "-="), TK_TIMES_EQ: ("*=", "*="), TK_DIV_EQ: ("/=", "/="),
    TK_MOD_EQ: ("%=", "%="), TK_BIT_OR_EQ: ("|=", "|="), TK_BIT_AND_EQ: ("&=", "&="),
    TK_BIT_XOR_EQ: ("^=", "^="), TK_LSHIFT_EQ: ("<<=", "<<="), TK_RSHIFT_EQ: (">>=", ">>="),
    TK_POW_EQ: ("**=", "**="), TK_GLOBAL: ("global", "global"), TK_BUILT_IN: ("built-in", ""),
    TK_SUBSCRIPT: ("subscript", ""), TK_VAR: ("variable", ""), TK_NOTHING: ("nothing", ""),
    TK_DICT_LITERAL: ("dict-literal", ""), TK_LIST_LITERAL: ("list-literal", ""),
    TK_TUPLE_LITERAL: ("tuple-literal", ""), TK_FOR: ("for", "for"), TK_IN: ("in", "in"),
    TK_NOTIN: ("not in", "not in"), TK_STARRED: ("starred", ""), TK_UNARY_MINUS: ("unary minus", ""),
    TK_POW: ("pow operator", "**"), TK_ARROW: ("arrow", "->"), TK_DECL: ("decl", ""),
    TK_SLICE_EXPR: ("slice expr", ""), TK_TYPE_COMMENT: ("type comment", "# type:"),
    TK_RAISE: ("raise", "raise"), TK_ASSERT: ("assert", "assert"), TK_DOTS: ("dots", "..."),
    TK_LIST_COMP: ("list comprehension", ""), TK_DICT_COMP: ("dict comprehension", ""),
    TK_BREAK: ("break", "break"), TK_CONTINUE: ("continue", "continue"), TK_DELETE: ("del", "del"),
    TK_PASS: ("pass", "pass"), TK_CLASS_DEF: ("class", "class"), TK_IMPORT: ("import", "import"),
    TK_WITH: ("with", "with"), TK_WITH_ITEM: ("withitem", ""), TK_AS: ("as", "as"),
    TK_PROP: ("property", ""), TK_ELLIPSIS: ("Ellipsis", "Ellipsis"), TK_NONE_TYPE: ("NoneType", "NoneType"),
}

SINGLE_CHAR_TOKENS = "+-*/%@()[]:,={}><.?!&^|~"

_SPELLED = {spelling: kind for kind, (_, spelling) in TOKEN_KINDS.items() if spelling}
_KEYWORDS = {spelling: kind for spelling, kind in _SPELLED.items() if spelling.isidentifier()}
_OPERATORS = {c: c for c in SINGLE_CHAR_TOKENS}
_OPERATORS.update({spelling: kind for spelling, kind in _SPELLED.items() if not spelling[0].isalpha()})
# How deeply parsers over a Lexer may recurse (Lexer.nested): far beyond real programs, types and graphs, and
# well inside Python's recursion limit at the few frames each level costs.
MAX_NESTING = 100
_NESTING = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}


def _operator_pattern() -> str:
    spellings = sorted(_OPERATORS, key=len, reverse=True)
    return "|".join(re.escape(spelling) for spelling in spellings)


_NUMBER = (r"(?:0[xX](?:[0-9a-fA-F]+(?:\.[0-9a-fA-F]*)?|\.[0-9a-fA-F]+)(?:[pP][+-]?[0-9]+)?"
           r"|(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?)j?")
_STRING = (r"(?:[rR][bBfF]?|[bBfF][rR]?|[uU])?"
           r"""(?:'''(?:[^\\]|\\[\s\S])*?'''|\"\"\"(?:[^\\]|\\[\s\S])*?\"\"\""""
           r"""|'(?:[^'\\\n]|\\[\s\S])*'|"(?:[^"\\\n]|\\[\s\S])*")""")
_TWO_WORDS = r"(?:is[ \t]+not|not[ \t]+in)(?![A-Za-z0-9_])"
# Group numbers select the kind: 1 number, 2 string, 3 "is not"/"not in", 4 identifier or keyword, 5 operator.
_TOKEN_PATTERN = f"({_NUMBER})|({_STRING})|({_TWO_WORDS})|([A-Za-z_][A-Za-z0-9_]*)|({_operator_pattern()})"
_TOKEN = re.compile(_TOKEN_PATTERN)
_BLANKS_AND_TOKEN = re.compile(rf"[ \t\r\f\v]*(?:{_TOKEN_PATTERN})")


def _skip_blanks(text: str, pos: int) -> int:
    """The position after the blanks (C's isspace, except newline) at `pos`."""
    while pos < len(text) and text[pos] in " \t\r\f\v":
        pos += 1
    return pos


def is_identifier(text: str) -> bool:
    """Whether `text` lexes as exactly one TK_IDENT token (a name that is no keyword)."""
    return _IDENTIFIER.fullmatch(text) is not None and text not in _KEYWORDS


_IDENTIFIER = re.compile("[A-Za-z_][A-Za-z0-9_]*")


def kind_to_string(kind: str) -> str:
    """The name TorchScript uses for a kind in messages: `ident`, `number`, `(`, `arrow`, ..."""
    return TOKEN_KINDS[kind][0] if kind in TOKEN_KINDS else kind


class Token:
    """One token: its kind, its exact source text and where it is."""

    __slots__ = ("kind", "text", "range")

    def __init__(self, kind: str, text: str, range: SourceRange):
        self.kind = kind
        self.text = text
        self.range = range

    def __repr__(self) -> str:
        return f"Token({self.kind!r}, {self.text!r}, {self.range!r})"


class _NestingLevel:
    """`with lexer.nested():` one level deeper while the body runs. A plain context manager rather than a
    generator one: parsers enter it for every expression and statement, and this costs a fraction as much."""

    __slots__ = ("_lexer",)

    def __init__(self, lexer: Lexer):
        self._lexer = lexer

    def __enter__(self) -> None:
        lexer = self._lexer
        lexer._depth += 1
        if lexer._depth > MAX_NESTING:
            lexer._depth -= 1
            lexer.report_error(f"text is nested too deeply (more than {MAX_NESTING} levels)")

    def __exit__(self, *exc_info: object) -> None:
        self._lexer._depth -= 1


class Lexer:
    """A stream of tokens over a Source with one token of lookahead beyond the current one.

    With `layout=False` newlines and indentation are ignored everywhere, as inside brackets: for text such as
    graph dumps, whose indentation does not follow Python's rules.
    """

    def __init__(self, source: Source | str, layout: bool = True):
        self.source = source if isinstance(source, Source) else Source(source)
        self._text = self.source.text
        self._pos = 0
        self._layout = layout
        self._nesting = 0
        self._depth = 0
        self._queue: deque[Token] = deque()
        self._nesting_level = _NestingLevel(self)
        self._indent_stack = [self._first_indent() if layout else 0]
        self._lex()

    def _first_indent(self) -> int:
        """The indentation of the first non-blank line: blocks close when lines return to it."""
        first_indent = self._lex_raw(whitespace_token=True)
        return first_indent.range.end - first_indent.range.start

    def cur(self) -> Token:
        """The current token (not consumed)."""
        return self._queue[0]

    def lookahead(self) -> Token:
        """The token after the current one."""
        if len(self._queue) < 2:
            self._lex()
        return self._queue[1]

    def next(self) -> Token:
        """Consume and return the current token. The token after it is lexed first, so that a lexing error
        leaves the current token in place for the error message (the queue is never empty)."""
        queue = self._queue
        if len(queue) < 2:
            self._lex()
        return queue.popleft()

    def next_if(self, kind: str) -> bool:
        """Consume the current token if it is of `kind`; say whether it was."""
        if self._queue[0].kind != kind:
            return False
        self.next()
        return True

    def nested(self) -> _NestingLevel:
        """Bound the recursion of a parser reading this stream (one level per `with`), so that absurdly nested
        text is a parse error at the current token rather than a RecursionError."""
        return self._nesting_level

    def expect(self, kind: str) -> Token:
        """Consume and return the current token, which must be of `kind`."""
        if self._queue[0].kind != kind:
            self.expected(kind_to_string(kind))
        return self.next()

    def parse_list(self, begin: str, end: str, item: Callable[[], Any], separator: str = ",") -> list[Any]:
        """`begin item, item, ... end` (possibly empty), collecting what `item` returns for each element."""
        self.expect(begin)
        items = []
        if self._queue[0].kind != end:
            items.append(item())
            while self.next_if(separator):
                items.append(item())
        self.expect(end)
        return items

    def expected(self, what: str, token: Token | None = None):
        """Raise TorchScript's "expected X but found 'Y' here" error at `token` (default: the current one)."""
        token = token or self._queue[0]
        raise SourceParseError(f"expected {what} but found '{kind_to_string(token.kind)}' here", token.range)

    def report_error(self, what: str, token: Token | None = None):
        """Raise a parse error with message `what` pointing at `token` (default: the current one)."""
        raise SourceParseError(what, (token or self._queue[0]).range)

    def _lex(self) -> None:
        """Queue the next token(s): track bracket nesting, turn indentation into NEWLINE/INDENT/DEDENT."""
        match = _BLANKS_AND_TOKEN.match(self._text, self._pos)  # the common case: blanks, then a token
        token = self._token_from_match(match) if match is not None else self._lex_raw()
        kind = token.kind
        nesting = _NESTING.get(kind)
        if nesting is not None:
            self._nesting += nesting
        elif kind == TK_WHITESPACE or kind == TK_WHITESPACE_EOF:
            self._lex_indentation(token)
            return
        self._queue.append(token)

    def _lex_indentation(self, token: Token) -> None:
        """Queue INDENT for a line indented deeper than the open block, else NEWLINE and a DEDENT per block
        it closes; the end of the text closes every block opened after the first line."""
        if token.kind == TK_WHITESPACE_EOF:
            depth = self._indent_stack[0]
        else:
            depth = token.range.end - token.range.start
        if depth > self._indent_stack[-1]:
            self._indent_stack.append(depth)
            self._queue.append(Token(TK_INDENT, token.text, token.range))
            return
        self._queue.append(Token(TK_NEWLINE, token.text, token.range))
        while self._indent_stack[-1] != depth:
            self._indent_stack.pop()
            self._queue.append(Token(TK_DEDENT, token.text, token.range))
            if not self._indent_stack:
                self.report_error(f"invalid indent level {depth}", token)

    def _lex_raw(self, whitespace_token: bool = False) -> Token:
        """The next raw token; with whitespace_token, the indentation of the next line is itself a token."""
        text, start = self._text, self._pos
        pos = _skip_blanks(text, start)
        while pos < len(text):
            char = text[pos]
            if char == "#" and not text.startswith("# type:", pos):
                newline = text.find("\n", pos)
                pos = len(text) if newline == -1 else newline
            elif char == "\\" and text.startswith("\\\n", pos) and not whitespace_token:
                pos += 2
            elif char == "\n":
                pos += 1
                whitespace_token = self._layout and self._nesting == 0
            else:
                break
            start = pos
            pos = _skip_blanks(text, pos)
        if whitespace_token:
            return self._make_token(TK_WHITESPACE_EOF if pos >= len(text) else TK_WHITESPACE, start, pos)
        if pos >= len(text):
            return self._make_token(TK_EOF, pos, pos)
        return self._match_token(pos)

    def _match_token(self, pos: int) -> Token:
        match = _TOKEN.match(self._text, pos)
        if match is None:
            # torch reports the character where lexing of this token began (before blanks), quirk included
            found = self._text[self._pos] if self._pos < len(self._text) else ""
            raise SourceParseError(f"expected a valid token but found '{found}' here",
                                   SourceRange(self.source, pos, pos + 1))
        return self._token_from_match(match)

    def _token_from_match(self, match: re.Match) -> Token:
        group = match.lastindex
        assert group is not None  # exactly one alternative of the pattern matched
        start, end = match.span(group)
        text = match.group(group)
        if group == 4:
            kind = _KEYWORDS.get(text, TK_IDENT)
        elif group == 5:
            kind = _OPERATORS[text]
        elif group == 1:
            kind = TK_NUMBER
        elif group == 2:
            kind = TK_STRINGLITERAL
        else:
            kind = TK_ISNOT if text[0] == "i" else TK_NOTIN
        self._pos = end
        return Token(kind, text, SourceRange(self.source, start, end))

    def _make_token(self, kind: str, start: int, end: int) -> Token:
        self._pos = end
        return Token(kind, self._text[start:end], SourceRange(self.source, start, end))


def parse_string_literal(token: Token) -> str:
    """The value of a TK_STRINGLITERAL token, with Python's escapes and prefixes (f-strings are rejected)."""
    text = token.text
    prefix = text[:min(i for i in (text.find("'"), text.find('"')) if i >= 0)].lower()
    if not prefix and "\\" not in text:
        quote_length = 3 if text[:3] in ("'''", '"""') and len(text) >= 6 else 1
        return text[quote_length:-quote_length]
    if "f" in prefix:
        raise SourceParseError("f-strings are not supported here", token.range)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            value = ast.literal_eval(text)
    except (SyntaxError, ValueError, Warning) as error:
        raise SourceParseError(f"invalid string literal ({error})", token.range) from None
    if isinstance(value, bytes):
        raise SourceParseError("bytes literals are not supported", token.range)
    return value
