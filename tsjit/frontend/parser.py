"""The script parser: TorchScript source text to Trees (TorchScript's parser.cpp), a Pratt parser over the lexer.

    defs = parse_definitions("def f(x: int) -> int:\\n    return x + 1\\n")   # [Def]
    expr = Parser("a + b * c").parse_exp()                                    # (+ a (* b c))

Expressions are parsed by precedence climbing: `parse_exp(p)` parses the longest expression whose binary
operators all bind tighter than `p`. The tables below are TorchScript's (torch/csrc/jit/frontend/lexer.cpp),
including where they differ from Python, because this parser must read TorchScript source as torch.jit does:

    a or b and c     is (a or b) and c      (`and` and `or` share one level)
    a < b < c        is (a < b) < c         (no chained comparisons)
    ~a + b           is ~(a + b)            (`~` binds as loosely as `not`)

Trees are built only through the tree views' `create` methods. Where both frontends must agree (the Python-AST
frontend, python_ast.py, builds the same trees), the parser normalizes what TorchScript's does not:
`for a, b in xs` has one TupleLiteral target, a docstring (a statement that is only a string) is dropped, a
one-statement suite may follow its colon (`if x: return y`), `# type:` comments ending a statement are ignored
(as torch.jit's Python frontend ignores them), and `--1` folds to `1`, not to TorchScript's unparsable "--1".
Comprehensions are recognized inside brackets, parentheses and call arguments (TorchScript took `for` as a
binary operator, which made `[[x for x in xs]]` a single comprehension).

Errors point at the offending text: malformed text raises SourceParseError; syntax TorchScript does not support
("try blocks aren't supported") raises CompileError, as the Python-AST frontend does for the same constructs.
"""

from __future__ import annotations

from collections.abc import Callable

from tsjit.errors import CompileError, SourceParseError
from tsjit.frontend.tree_views import (
    Apply,
    Assert,
    Assign,
    Attribute,
    AugAssign,
    BinOp,
    Break,
    ClassDef,
    Const,
    Continue,
    Decl,
    Def,
    Delete,
    DictComp,
    DictLiteral,
    Dots,
    Expr,
    ExprStmt,
    FalseLiteral,
    For,
    Global,
    Ident,
    If,
    ListComp,
    ListLiteral,
    NoneLiteral,
    Param,
    Pass,
    Raise,
    Return,
    Select,
    SliceExpr,
    Starred,
    Stmt,
    StringLiteral,
    Subscript,
    TernaryIf,
    TrueLiteral,
    TupleLiteral,
    UnaryOp,
    Var,
    While,
    With,
    WithItem,
    number_value,
)
from tsjit.source import lexer as lx
from tsjit.source.lexer import Lexer, Token, parse_string_literal
from tsjit.source.source_range import Source, SourceRange

# token kind -> precedence; higher binds tighter (TorchScript's binary_prec, without `for`: see module docstring)
BINARY_PRECEDENCE = {
    lx.TK_IF: 1,
    lx.TK_AND: 2, lx.TK_OR: 2,
    # 3 is unary `not` (and `~`)
    lx.TK_IN: 4, lx.TK_NOTIN: 4, "<": 4, ">": 4, lx.TK_IS: 4, lx.TK_ISNOT: 4, lx.TK_EQ: 4, lx.TK_LE: 4,
    lx.TK_GE: 4, lx.TK_NE: 4,
    "|": 5,
    "^": 6,
    "&": 7,
    lx.TK_LSHIFT: 8, lx.TK_RSHIFT: 8,
    "+": 9, "-": 9,
    "*": 10, "/": 10, lx.TK_FLOOR_DIV: 10, "%": 10, "@": 10,
    lx.TK_POW: 11,
}
UNARY_PRECEDENCE = {lx.TK_NOT: 3, "~": 3, "-": 10, "*": 10}
RIGHT_ASSOCIATIVE = frozenset({lx.TK_POW, lx.TK_IF})
# the precedence of an assignment target or a comprehension target: above every comparison, so `in` ends it
LHS_PRECEDENCE = 4

# augmented assignment token -> the binary operator kind it applies
AUG_ASSIGN_OPS = {
    lx.TK_PLUS_EQ: "+", lx.TK_MINUS_EQ: "-", lx.TK_TIMES_EQ: "*", lx.TK_DIV_EQ: "/", lx.TK_MOD_EQ: "%",
    lx.TK_BIT_OR_EQ: "|", lx.TK_BIT_AND_EQ: "&", lx.TK_BIT_XOR_EQ: "^", lx.TK_LSHIFT_EQ: lx.TK_LSHIFT,
    lx.TK_RSHIFT_EQ: lx.TK_RSHIFT, lx.TK_POW_EQ: lx.TK_POW,
}
# after `a,` these end a tuple instead of starting its next element
FOLLOWS_TUPLE = frozenset({*AUG_ASSIGN_OPS, lx.TK_NEWLINE, lx.TK_TYPE_COMMENT, "=", ")", ":"})
# words that are Python syntax TorchScript lacks; the lexer reads them as identifiers
UNSUPPORTED_WORDS = {
    "lambda": "lambda expressions", "yield": "yield expressions", "await": "await expressions",
    "try": "try blocks", "except": "try blocks", "finally": "try blocks", "nonlocal": "nonlocal variables",
    "from": "import statements", "async": "async functions",
}
VARARG_KWARG_MESSAGE = ("Compiled functions can't take variable number of arguments or use keyword-only "
                        "arguments with defaults")


class Parser:
    """Parses definitions, statements and expressions from one Source (TorchScript's Parser)."""

    def __init__(self, source: Source | str):
        self.lexer = Lexer(source)

    # ---------------------------------------------------------------------------------------------------------
    # entry points

    def parse_function(self, is_method: bool = False) -> Def:
        """`def name(params) -> ret: body`, with an optional `# type: (...) -> ...` signature comment."""
        with self.lexer.nested():
            start = self.lexer.expect(lx.TK_DEF)
            name = self.parse_ident()
            decl = self._parse_signature_comment(self._parse_decl(), is_method)
            if not self.lexer.next_if(lx.TK_INDENT):
                body = _present([self._parse_simple_suite_stmt(is_method)])
                return Def.create(start.range, name, decl, body)
            decl = self._parse_signature_comment(decl, is_method, own_line=True)
            return Def.create(start.range, name, decl, self._parse_block_rest(is_method))

    def parse_class(self) -> ClassDef:
        """`class Name(Base): body`; the body holds methods and class-level (annotated) assignments."""
        start = self.lexer.expect(lx.TK_CLASS_DEF)
        name = self.parse_ident()
        superclass = None
        if self.lexer.next_if("("):
            superclass = None if self.lexer.cur().kind == ")" else self.parse_exp()
            self.lexer.expect(")")
        self.lexer.expect(":")
        return ClassDef.create(start.range, name, superclass, self._parse_suite(in_class=True))

    def parse_type_comment(self) -> Decl:
        """`# type: (T1, T2) -> R` as a Decl whose parameters have empty names."""
        start = self.lexer.expect(lx.TK_TYPE_COMMENT)
        params = self._parse_list("(", ",", ")", self._parse_bare_type)
        return_type = self.parse_exp() if self.lexer.next_if(lx.TK_ARROW) else None
        return Decl.create(start.range, params, return_type)

    def parse_ident(self) -> Ident:
        token = self.lexer.expect(lx.TK_IDENT)
        return Ident.create(token.range, token.text)

    # ---------------------------------------------------------------------------------------------------------
    # expressions

    def parse_exp(self, precedence: int = 0) -> Expr:
        """The longest expression whose binary operators all have precedence above `precedence`."""
        with self.lexer.nested():
            prefix = self._parse_prefix()
            while BINARY_PRECEDENCE.get(self.lexer.cur().kind, 0) > precedence:
                token = self.lexer.next()
                binary = BINARY_PRECEDENCE[token.kind] - (token.kind in RIGHT_ASSOCIATIVE)
                prefix = self._parse_binary(token, prefix, binary)
            return prefix

    def parse_exp_or_exp_tuple(self) -> Expr:
        """`e`, or `e1, e2, ...` (a trailing comma allowed) as a TupleLiteral."""
        first = self.parse_exp()
        if self.lexer.cur().kind != ",":
            return first
        items = [first]
        while self.lexer.next_if(","):
            if self.lexer.cur().kind in FOLLOWS_TUPLE:
                break
            items.append(self.parse_exp())
        return TupleLiteral.create(first.range, items)

    def _parse_prefix(self) -> Expr:
        kind = self.lexer.cur().kind
        if kind not in UNARY_PRECEDENCE:
            return self._parse_postfix(self._parse_base_exp())
        token = self.lexer.next()
        return _make_unary(token, self.parse_exp(UNARY_PRECEDENCE[kind]))

    def _parse_binary(self, token: Token, lhs: Expr, precedence: int) -> Expr:
        if token.kind == lx.TK_IF:
            return self._parse_ternary(token, lhs, precedence)
        self._reject_unsupported_aug_assign(token)
        rhs = self.parse_exp(precedence)
        if token.kind == lx.TK_NOTIN:
            # `a not in b` is `not (a in b)`: no tree kind of its own
            return UnaryOp.create(token.range, lx.TK_NOT, BinOp.create(token.range, lx.TK_IN, lhs, rhs))
        return BinOp.create(token.range, token.kind, lhs, rhs)

    def _parse_ternary(self, token: Token, true_expr: Expr, precedence: int) -> Expr:
        cond = self.parse_exp()
        self.lexer.expect(lx.TK_ELSE)
        return TernaryIf.create(token.range, cond, true_expr, self.parse_exp(precedence))

    def _reject_unsupported_aug_assign(self, token: Token) -> None:
        """`x //= y` and `x @= y` lex as an operator then `=`; say what they are instead of a confusing error."""
        cur = self.lexer.cur()
        if token.kind in (lx.TK_FLOOR_DIV, "@") and cur.kind == "=" and cur.range.start == token.range.end:
            where = SourceRange(token.range.source, token.range.start, cur.range.end)
            raise CompileError(f"unsupported kind of augmented assignment: {token.text}=", where)

    def _parse_base_exp(self) -> Expr:
        """An atom: literal, name or bracketed display (TorchScript's parseBaseExp)."""
        token = self.lexer.cur()
        parse = self._BASE_PARSERS.get(token.kind)
        if parse is not None:
            return parse(self)
        if token.kind == lx.TK_IDENT:
            _reject_unsupported_word(token)
        if token.kind == "+":
            raise CompileError("unsupported unary operator: +", token.range)
        name = self.parse_ident()
        return Var.create(name.range, name)

    def _parse_postfix(self, prefix: Expr) -> Expr:
        """Attribute access, calls and subscripts after an atom."""
        while True:
            kind = self.lexer.cur().kind
            if kind == ".":
                self.lexer.next()
                prefix = Select.create(prefix.range, prefix, self.parse_ident())
            elif kind == "(":
                prefix = self._parse_apply(prefix)
            elif kind == "[":
                prefix = self._parse_subscript(prefix)
            else:
                return prefix

    def _parse_number(self) -> Expr:
        token = self.lexer.next()
        try:
            number_value(token.text)
        except ValueError:
            raise SourceParseError(f"invalid number literal {token.text}", token.range) from None
        return Const.create(token.range, token.text)

    def _parse_keyword_literal(self) -> Expr:
        token = self.lexer.next()
        literal = {lx.TK_TRUE: TrueLiteral, lx.TK_FALSE: FalseLiteral, lx.TK_NONE: NoneLiteral}[token.kind]
        return literal.create(token.range)

    def _parse_dots(self) -> Expr:
        return Dots.create(self.lexer.next().range)

    def _parse_none_type(self) -> Expr:
        """`NoneType` is a keyword to the lexer but an ordinary name to Python."""
        token = self.lexer.next()
        return Var.create(token.range, Ident.create(token.range, token.text))

    def _parse_string_literals(self) -> Expr:
        """Adjacent string literals concatenate, as in Python."""
        start = self.lexer.cur().range
        parts = []
        while self.lexer.cur().kind == lx.TK_STRINGLITERAL:
            parts.append(parse_string_literal(self.lexer.next()))
        return StringLiteral.create(start, "".join(parts))

    def _parse_parenthesized(self) -> Expr:
        """`()`, `(e)`, `(e1, e2, ...)` or a generator `(e for x in xs)` (a list comprehension here)."""
        start = self.lexer.expect("(")
        if self.lexer.next_if(")"):
            return TupleLiteral.create(start.range, [])
        first = self.parse_exp_or_exp_tuple()
        if self.lexer.cur().kind == lx.TK_FOR:
            first = self._parse_list_comprehension(start.range, first)
        self.lexer.expect(")")
        return first

    def _parse_list_display(self) -> Expr:
        """`[e1, e2, ...]` or `[e for x in xs]`."""
        start = self.lexer.expect("[")
        if self.lexer.next_if("]"):
            return ListLiteral.create(start.range, [])
        first = self.parse_exp()
        if self.lexer.cur().kind == lx.TK_FOR:
            comprehension = self._parse_list_comprehension(start.range, first)
            self.lexer.expect("]")
            return comprehension
        items = self._parse_rest_of_sequence(first, "]")
        return ListLiteral.create(start.range, items)

    def _parse_dict_display(self) -> Expr:
        """`{k1: v1, ...}` or `{k: v for x in xs}`; set displays are rejected."""
        start = self.lexer.expect("{")
        keys: list[Expr] = []
        values: list[Expr] = []
        while self.lexer.cur().kind != "}":
            if self.lexer.cur().kind == lx.TK_POW:
                raise CompileError("Dict expansion (e.g. `{**dict}`) is not supported", self.lexer.cur().range)
            keys.append(self.parse_exp())
            self._expect_dict_colon(keys[-1])
            values.append(self.parse_exp())
            if len(keys) == 1 and self.lexer.cur().kind == lx.TK_FOR:
                return self._parse_dict_comprehension(start.range, keys[0], values[0])
            if not self.lexer.next_if(","):
                break
        self.lexer.expect("}")
        return DictLiteral.create(start.range, keys, values)

    def _expect_dict_colon(self, key: Expr) -> None:
        if self.lexer.cur().kind in (",", "}", lx.TK_FOR):
            raise CompileError("set literals and set comprehensions aren't supported", key.range)
        self.lexer.expect(":")

    def _parse_rest_of_sequence(self, first: Expr, end: str) -> list[Expr]:
        """The elements after `first` of a comma-separated display ending in `end` (consumed)."""
        items = [first]
        while self.lexer.next_if(","):
            if self.lexer.cur().kind == end:
                break
            items.append(self.parse_exp())
        self.lexer.expect(end)
        return items

    def _parse_comprehension_clause(self) -> tuple[Expr, Expr, list[Expr]]:
        """`for target in iter if c1 if c2` of a comprehension: exactly one generator, as in TorchScript, and any
        number of conditions."""
        self.lexer.expect(lx.TK_FOR)
        target = self._parse_target_list(lx.TK_IN)
        self.lexer.expect(lx.TK_IN)
        iterable = self.parse_exp(BINARY_PRECEDENCE[lx.TK_IF])
        conditions = []
        while self.lexer.next_if(lx.TK_IF):
            conditions.append(self.parse_exp(BINARY_PRECEDENCE[lx.TK_IF]))
        cur = self.lexer.cur()
        if cur.kind == lx.TK_FOR:
            raise CompileError("Only a single generator is currently supported", cur.range)
        return target, iterable, conditions

    def _parse_list_comprehension(self, start: SourceRange, elt: Expr) -> Expr:
        target, iterable, conditions = self._parse_comprehension_clause()
        return ListComp.create(start, elt, target, iterable, conditions)

    def _parse_dict_comprehension(self, start: SourceRange, key: Expr, value: Expr) -> Expr:
        target, iterable, conditions = self._parse_comprehension_clause()
        self.lexer.expect("}")
        return DictComp.create(start, key, value, target, iterable, conditions)

    def _parse_target_list(self, end: str) -> Expr:
        """Loop targets up to `end` (not consumed): one expression, or several as a TupleLiteral."""
        first = self.parse_exp(LHS_PRECEDENCE)
        targets = [first]
        while self.lexer.next_if(","):
            if self.lexer.cur().kind == end:
                break
            targets.append(self.parse_exp(LHS_PRECEDENCE))
        if len(targets) == 1 and self.lexer.cur().kind != ",":
            return first
        return TupleLiteral.create(first.range, targets)

    def _parse_apply(self, callee: Expr) -> Expr:
        """`callee(args, name=value, ...)`; a lone generator argument becomes a list comprehension."""
        start = self.lexer.cur().range
        inputs: list[Expr] = []
        attributes: list[Attribute] = []

        def parse_argument() -> None:
            if self.lexer.cur().kind == lx.TK_IDENT and self.lexer.lookahead().kind == "=":
                attributes.append(self._parse_keyword_argument())
            else:
                inputs.append(self._parse_positional_argument())

        close = self._parse_sequence("(", ",", ")", parse_argument)
        return Apply.create(_span(start, close.range), callee, inputs, attributes)

    def _parse_keyword_argument(self) -> Attribute:
        name = self.parse_ident()
        self.lexer.expect("=")
        return Attribute.create(name.range, name, self.parse_exp())

    def _parse_positional_argument(self) -> Expr:
        cur = self.lexer.cur()
        if cur.kind == lx.TK_POW:
            raise CompileError("keyword-arg expansion is not supported", cur.range)
        argument = self.parse_exp()
        if self.lexer.cur().kind == lx.TK_FOR:
            return self._parse_list_comprehension(argument.range, argument)
        return argument

    def _parse_subscript(self, value: Expr) -> Expr:
        start = self.lexer.cur().range
        subscripts: list[Expr] = []
        close = self._parse_sequence("[", ",", "]", lambda: subscripts.append(self._parse_subscript_exp()))
        return Subscript.create(_span(start, close.range), value, subscripts)

    def _parse_subscript_exp(self) -> Expr:
        """One subscript: an expression or a slice `[start]:[end][:[step]]`."""
        start = self.lexer.cur().range
        first = None if self.lexer.cur().kind == ":" else self.parse_exp()
        if not self.lexer.next_if(":"):
            return first
        second = self._parse_optional_exp(",", "]", ":")
        third = self._parse_optional_exp(",", "]") if self.lexer.next_if(":") else None
        return SliceExpr.create(start, first, second, third)

    def _parse_optional_exp(self, *ends: str) -> Expr | None:
        return None if self.lexer.cur().kind in ends else self.parse_exp()

    _BASE_PARSERS: dict[str, Callable[[Parser], Expr]] = {
        lx.TK_NUMBER: _parse_number,
        lx.TK_TRUE: _parse_keyword_literal,
        lx.TK_FALSE: _parse_keyword_literal,
        lx.TK_NONE: _parse_keyword_literal,
        lx.TK_NONE_TYPE: _parse_none_type,
        lx.TK_STRINGLITERAL: _parse_string_literals,
        lx.TK_DOTS: _parse_dots,
        lx.TK_ELLIPSIS: _parse_dots,
        "(": _parse_parenthesized,
        "[": _parse_list_display,
        "{": _parse_dict_display,
    }

    # ---------------------------------------------------------------------------------------------------------
    # statements

    def parse_stmt(self, in_class: bool = False) -> Stmt | None:
        """One statement; None for a docstring, which is dropped."""
        with self.lexer.nested():
            kind = self.lexer.cur().kind
            if kind == lx.TK_DEF:
                return self.parse_function(is_method=in_class)
            parse = self._STMT_PARSERS.get(kind)
            if parse is not None:
                return parse(self)
            self._reject_unsupported_statement()
            return self._parse_simple_stmt()

    def _reject_unsupported_statement(self) -> None:
        token = self.lexer.cur()
        if token.kind == lx.TK_IDENT:
            _reject_unsupported_word(token)
        messages = {
            lx.TK_IMPORT: "import statements aren't supported",
            lx.TK_CLASS_DEF: "class definitions are only supported at the top level",
            "@": "decorators aren't supported in TorchScript source",
        }
        if token.kind in messages:
            raise CompileError(messages[token.kind], token.range)

    def _parse_simple_stmt(self) -> Stmt | None:
        """An expression statement or an assignment of any form."""
        lhs = self.parse_exp_or_exp_tuple()
        if self.lexer.cur().kind not in (lx.TK_NEWLINE, lx.TK_TYPE_COMMENT):
            return self._parse_assign(lhs)
        self._skip_type_comment()
        self.lexer.expect(lx.TK_NEWLINE)
        if isinstance(lhs, StringLiteral):
            return None
        return ExprStmt.create(lhs.range, lhs)

    def _parse_assign(self, lhs: Expr) -> Stmt:
        """What follows the first target: `: T`, `= rhs` (repeatable), `op= rhs`, or `: T = rhs`."""
        type = self.parse_exp() if self.lexer.next_if(":") else None
        kind = self.lexer.cur().kind
        if kind in AUG_ASSIGN_OPS:
            return self._parse_aug_assign(lhs, type)
        if kind == "=":
            return self._parse_plain_assign(lhs, type)
        if type is None:
            self.lexer.expected("newline")
        self._end_simple_stmt()
        return Assign.create(lhs.range, [lhs], None, type)

    def _parse_plain_assign(self, lhs: Expr, type: Expr | None) -> Stmt:
        self.lexer.expect("=")
        targets, rhs = [lhs], self.parse_exp_or_exp_tuple()
        while self.lexer.next_if("="):
            targets.append(rhs)
            rhs = self.parse_exp_or_exp_tuple()
        if type is not None and len(targets) > 1:
            raise SourceParseError("Annotated multiple assignment is not supported in python", type.range)
        self._end_simple_stmt()
        return Assign.create(lhs.range, targets, rhs, type)

    def _parse_aug_assign(self, lhs: Expr, type: Expr | None) -> Stmt:
        op = self.lexer.next()
        if type is not None:
            raise SourceParseError("an augmented assignment can't have a type annotation", type.range)
        if isinstance(lhs, TupleLiteral):
            raise SourceParseError("augmented assignment can only have one LHS expression", lhs.range)
        rhs = self.parse_exp_or_exp_tuple()
        self._skip_type_comment()
        self.lexer.expect(lx.TK_NEWLINE)
        return AugAssign.create(lhs.range, lhs, AUG_ASSIGN_OPS[op.kind], rhs)

    def _skip_type_comment(self) -> None:
        """Drop a `# type:` comment ending a simple statement: torch.jit ignores them (`# type: ignore`, and
        `x = []  # type: List[int]` too: write `x: List[int] = []`)."""
        if self.lexer.cur().kind != lx.TK_TYPE_COMMENT:
            return
        while self.lexer.cur().kind not in (lx.TK_NEWLINE, lx.TK_INDENT, lx.TK_EOF):
            self.lexer.next()

    def _parse_if(self) -> Stmt:
        start = self.lexer.next()
        cond = self.parse_exp()
        self.lexer.expect(":")
        true_branch = self._parse_suite()
        false_branch: list[Stmt] = []
        if self.lexer.cur().kind == lx.TK_ELIF:
            false_branch = [self._parse_if()]
        elif self.lexer.next_if(lx.TK_ELSE):
            self.lexer.expect(":")
            false_branch = self._parse_suite()
        return If.create(start.range, cond, true_branch, false_branch)

    def _parse_while(self) -> Stmt:
        start = self.lexer.next()
        cond = self.parse_exp()
        self.lexer.expect(":")
        body = self._parse_suite()
        self._reject_loop_else("while")
        return While.create(start.range, cond, body)

    def _parse_for(self) -> Stmt:
        start = self.lexer.next()
        target = self._parse_target_list(lx.TK_IN)
        self.lexer.expect(lx.TK_IN)
        iterable = self.parse_exp_or_exp_tuple()
        self.lexer.expect(":")
        body = self._parse_suite()
        self._reject_loop_else("for")
        return For.create(start.range, [target], [iterable], body)

    def _reject_loop_else(self, loop: str) -> None:
        token = self.lexer.cur()
        if token.kind == lx.TK_ELSE:
            raise CompileError(f"else branches of {loop} loops aren't supported", token.range)

    def _parse_with(self) -> Stmt:
        start = self.lexer.next()
        items = self._parse_list(lx.TK_NOTHING, ",", ":", self._parse_with_item)
        return With.create(start.range, items, self._parse_suite())

    def _parse_with_item(self) -> WithItem:
        target = self.parse_exp()
        if not self.lexer.next_if(lx.TK_AS):
            return WithItem.create(target.range, target)
        name = self.parse_ident()
        return WithItem.create(target.range, target, Var.create(name.range, name))

    def _parse_return(self) -> Stmt:
        start = self.lexer.next()
        value = None
        if self.lexer.cur().kind not in (lx.TK_NEWLINE, lx.TK_TYPE_COMMENT):
            value = self.parse_exp_or_exp_tuple()
        self._end_simple_stmt()
        return Return.create(start.range, value)

    def _parse_raise(self) -> Stmt:
        """`raise E` (`raise E from cause` drops the cause); a bare `raise` has nothing to raise in TorchScript."""
        start = self.lexer.next()
        if self.lexer.cur().kind in (lx.TK_NEWLINE, lx.TK_TYPE_COMMENT):
            raise CompileError("raise statements without an exception aren't supported", start.range)
        exception = self.parse_exp()
        cur = self.lexer.cur()
        if cur.kind == lx.TK_IDENT and cur.text == "from":
            self.lexer.next()
            self.parse_exp()
        self._end_simple_stmt()
        return Raise.create(start.range, exception)

    def _parse_assert(self) -> Stmt:
        start = self.lexer.next()
        test = self.parse_exp()
        message = self.parse_exp() if self.lexer.next_if(",") else None
        self._end_simple_stmt()
        return Assert.create(start.range, test, message)

    def _parse_keyword_stmt(self) -> Stmt:
        """`pass`, `break` or `continue`."""
        token = self.lexer.next()
        self._end_simple_stmt()
        kinds = {lx.TK_PASS: Pass, lx.TK_BREAK: Break, lx.TK_CONTINUE: Continue}
        return kinds[token.kind].create(token.range)

    def _parse_delete(self) -> Stmt:
        start = self.lexer.next()
        targets = self._parse_list(lx.TK_NOTHING, ",", lx.TK_NOTHING, self.parse_exp)
        self._end_simple_stmt()
        return Delete.create(start.range, targets)

    def _parse_global(self) -> Stmt:
        start = self.lexer.next()
        names = self._parse_list(lx.TK_NOTHING, ",", lx.TK_NOTHING, self.parse_ident)
        self._end_simple_stmt()
        return Global.create(start.range, names)

    def _end_simple_stmt(self) -> None:
        self._skip_type_comment()
        self.lexer.expect(lx.TK_NEWLINE)

    _STMT_PARSERS: dict[str, Callable[[Parser], Stmt]] = {
        lx.TK_IF: _parse_if,
        lx.TK_WHILE: _parse_while,
        lx.TK_FOR: _parse_for,
        lx.TK_WITH: _parse_with,
        lx.TK_RETURN: _parse_return,
        lx.TK_RAISE: _parse_raise,
        lx.TK_ASSERT: _parse_assert,
        lx.TK_PASS: _parse_keyword_stmt,
        lx.TK_BREAK: _parse_keyword_stmt,
        lx.TK_CONTINUE: _parse_keyword_stmt,
        lx.TK_DELETE: _parse_delete,
        lx.TK_GLOBAL: _parse_global,
    }

    def _parse_suite(self, in_class: bool = False) -> list[Stmt]:
        """The body after a colon: an indented block, or one simple statement on the same line."""
        if self.lexer.next_if(lx.TK_INDENT):
            return self._parse_block_rest(in_class)
        return _present([self._parse_simple_suite_stmt(in_class)])

    def _parse_block_rest(self, in_class: bool) -> list[Stmt]:
        """The statements of an indented block whose INDENT has been read, through its DEDENT."""
        statements = [self.parse_stmt(in_class)]
        while not self.lexer.next_if(lx.TK_DEDENT):
            statements.append(self.parse_stmt(in_class))
        return _present(statements)

    def _parse_simple_suite_stmt(self, in_class: bool) -> Stmt | None:
        token = self.lexer.cur()
        if token.kind in (lx.TK_IF, lx.TK_WHILE, lx.TK_FOR, lx.TK_WITH, lx.TK_DEF, lx.TK_NEWLINE):
            self.lexer.expected("an indented block")
        return self.parse_stmt(in_class)

    # ---------------------------------------------------------------------------------------------------------
    # definitions

    def _parse_decl(self) -> Decl:
        """`(params) [-> type] :`"""
        start = self.lexer.cur().range
        params = self._parse_formal_params()
        return_type = self.parse_exp() if self.lexer.next_if(lx.TK_ARROW) else None
        self.lexer.expect(":")
        return Decl.create(start, params, return_type)

    def _parse_formal_params(self) -> list[Param]:
        params: list[Param] = []
        kwarg_only = False

        def parse_param() -> None:
            nonlocal kwarg_only
            self._reject_variadic_param()
            if not kwarg_only and self.lexer.next_if("*"):
                kwarg_only = True
            else:
                params.append(self._parse_formal_param(kwarg_only))

        self._parse_sequence("(", ",", ")", parse_param)
        return params

    def _reject_variadic_param(self) -> None:
        """`*args` and `**kwargs` cannot be compiled."""
        star = self.lexer.cur()
        if star.kind == lx.TK_POW or (star.kind == "*" and self.lexer.lookahead().kind == lx.TK_IDENT):
            name = self.lexer.lookahead()
            where = SourceRange(star.range.source, star.range.start, max(name.range.end, star.range.end))
            raise CompileError(VARARG_KWARG_MESSAGE, where)

    def _parse_formal_param(self, kwarg_only: bool) -> Param:
        name = self.parse_ident()
        type = self.parse_exp() if self.lexer.next_if(":") else None
        default = self.parse_exp() if self.lexer.next_if("=") else None
        return Param.create(name.range, name, type, default, kwarg_only)

    def _parse_bare_type(self) -> Param:
        type = self.parse_exp()
        return Param.create(type.range, Ident.create(type.range, ""), type)

    def _parse_signature_comment(self, decl: Decl, is_method: bool, own_line: bool = False) -> Decl:
        """A `# type: (...) -> ...` comment after the def's colon, on its line or as the body's first line."""
        if self.lexer.cur().kind != lx.TK_TYPE_COMMENT:
            return decl
        if self.lexer.lookahead().kind == "(":
            decl = merge_types_from_type_comment(decl, self.parse_type_comment(), is_method)
        else:
            self._skip_type_comment()
        if own_line:
            self.lexer.expect(lx.TK_NEWLINE)
        return decl

    # ---------------------------------------------------------------------------------------------------------
    # sequences and nesting

    def _parse_sequence(self, begin: str, separator: str, end: str, parse: Callable[[], object]) -> Token | None:
        """`begin item sep item ... end`, returning the end token; TK_NOTHING means there is no such token."""
        if begin != lx.TK_NOTHING:
            self.lexer.expect(begin)
        while self.lexer.cur().kind != end:
            parse()
            if not self.lexer.next_if(separator):
                return None if end == lx.TK_NOTHING else self.lexer.expect(end)
        return self.lexer.expect(end)

    def _parse_list(self, begin: str, separator: str, end: str, parse: Callable[[], object]) -> list:
        items: list = []
        self._parse_sequence(begin, separator, end, lambda: items.append(parse()))
        return items


# -------------------------------------------------------------------------------------------------------------
# helpers shared with the Python-AST frontend


def merge_types_from_type_comment(decl: Decl, type_decl: Decl, is_method: bool) -> Decl:
    """The signature `decl` with the types of a `# type: (...) -> ...` comment (a method's self has none)."""
    params = decl.params
    skip = 1 if is_method and params else 0
    expected = len(params) - skip
    annotations = type_decl.params
    if expected != len(annotations):
        what = "method" if is_method else "function"
        raise CompileError(f"Number of type annotations ({len(annotations)}) did not match the number of "
                               f"{what} parameters ({expected})", decl.range)
    typed = [param.with_type(annotation.type) for param, annotation in zip(params[skip:], annotations)]
    return Decl.create(decl.range, params[:skip] + typed, type_decl.return_type)


def fold_unary_minus(range: SourceRange, operand: Expr) -> Expr:
    """`-<number>` is a negative constant (so `-1` can be a default or attribute value); else a UnaryOp."""
    if not isinstance(operand, Const):
        return UnaryOp.create(range, lx.TK_UNARY_MINUS, operand)
    text = operand.text
    return Const.create(range, text[1:] if text.startswith("-") else "-" + text)


def _make_unary(token: Token, operand: Expr) -> Expr:
    if token.kind == "*":
        return Starred.create(token.range, operand)
    if token.kind == "-":
        return fold_unary_minus(token.range, operand)
    return UnaryOp.create(token.range, token.kind, operand)


def _reject_unsupported_word(token: Token) -> None:
    what = UNSUPPORTED_WORDS.get(token.text)
    if what is not None:
        raise CompileError(f"{what} aren't supported", token.range)


def _span(first: SourceRange, last: SourceRange) -> SourceRange:
    return SourceRange(first.source, first.start, last.end)


def _present(statements: list[Stmt | None]) -> list[Stmt]:
    return [statement for statement in statements if statement is not None]


# -------------------------------------------------------------------------------------------------------------
# module-level entry points


def parse_definitions(source: Source | str) -> list[Def | ClassDef]:
    """Every top-level `def` and `class` of a TorchScript source text, in order."""
    parser = Parser(source)
    definitions: list[Def | ClassDef] = []
    while parser.lexer.cur().kind != lx.TK_EOF:
        if parser.lexer.next_if(lx.TK_NEWLINE):
            continue
        definitions.append(_parse_definition(parser))
    return definitions


def _parse_definition(parser: Parser) -> Def | ClassDef:
    token = parser.lexer.cur()
    if token.kind == lx.TK_CLASS_DEF:
        return parser.parse_class()
    if token.kind == "@":
        raise CompileError("decorators aren't supported in TorchScript source", token.range)
    return parser.parse_function()


def parse_function(source: Source | str, is_method: bool = False) -> Def:
    """The single `def` making up `source`."""
    parser = Parser(source)
    definition = parser.parse_function(is_method)
    _expect_end(parser)
    return definition


def parse_expression(source: Source | str) -> Expr:
    """A single expression (a type annotation string, for instance)."""
    parser = Parser(source)
    expression = parser.parse_exp_or_exp_tuple()
    _expect_end(parser)
    return expression


def _expect_end(parser: Parser) -> None:
    while parser.lexer.next_if(lx.TK_NEWLINE):
        pass
    parser.lexer.expect(lx.TK_EOF)
