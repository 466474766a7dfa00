"""Tree views: typed, named access to the Trees the script frontends build (TorchScript's tree_views.h).

A view wraps one Tree, checks its kind, and names its subtrees, so the IR emitter reads `apply.callee` instead
of `tree.trees[0]`. Lists come back as Python lists and optional subtrees as `X | None`; underneath they are
TK_LIST and TK_OPTION trees. Every view has `.tree`, `.range` (its SourceRange) and `.kind`, compares equal
to another view of an equal tree (ranges ignored), and is built with `View.create(range, ...)`, which both
frontends use so a tree's layout is defined here only. `Expr.wrap(tree)` / `Stmt.wrap(tree)` return the
specific view for the tree's kind, so code can switch on `isinstance` or on `.kind`.

Top level and helpers (field: type):
    Ident        name: str                                                  TK_IDENT
    Attribute    name: Ident, value: Expr  (a keyword argument `name=value`) TK_ATTRIBUTE
    Param        ident: Ident, type: Expr|None, default_value: Expr|None,
                 kwarg_only: bool                                           TK_PARAM
    Decl         params: list[Param], return_type: Expr|None                TK_DECL
    Def          name: Ident, decl: Decl, statements: list[Stmt]            TK_DEF
    Property     name: Ident, getter: Def, setter: Def|None                 TK_PROP
    ClassDef     name: Ident, superclass: Expr|None, body: list[Stmt],
                 properties: list[Property]                                 TK_CLASS_DEF
Statements (Stmt):
    If           cond: Expr, true_branch: list[Stmt], false_branch: list[Stmt]   TK_IF (elif: a nested If)
    While        cond: Expr, body: list[Stmt]                               TK_WHILE
    For          targets: list[Expr], itrs: list[Expr], body: list[Stmt]    TK_FOR
                 (one target and one iterable: `for a, b in x` has a TupleLiteral target)
    Global       names: list[Ident]                                         TK_GLOBAL
    Assign       lhs_list: list[Expr], lhs: Expr (the only one), rhs: Expr|None, type: Expr|None   TK_ASSIGN
                 (`a = b = c` has lhs_list [a, b]; `x: int` alone has no rhs)
    AugAssign    lhs: Expr, aug_op: str (a kind: + - * / % | & ^ TK_POW TK_LSHIFT TK_RSHIFT), rhs: Expr
                                                                            TK_AUG_ASSIGN
    Return       expr: Expr  (a NoneLiteral for a bare `return`)            TK_RETURN
    Raise        expr: Expr                                                 TK_RAISE
    Assert       test: Expr, msg: Expr|None                                 TK_ASSERT
    Pass, Break, Continue                                                   TK_PASS, TK_BREAK, TK_CONTINUE
    Delete       targets: list[Expr]                                        TK_DELETE
    With         targets: list[WithItem], body: list[Stmt]                  TK_WITH
    ExprStmt     expr: Expr                                                 TK_EXPR_STMT
    Def          (a method inside a ClassDef body)
Expressions (Expr):
    Var          name: Ident                                                TK_VAR
    Const        text: str, is_integral, is_floating_point, is_complex: bool, value: int|float|complex
                 (`-1` folds to Const "-1")                                 TK_CONST
    StringLiteral  text: str (the value, escapes resolved, adjacent literals joined)   TK_STRINGLITERAL
    TrueLiteral, FalseLiteral, NoneLiteral, Dots (`...`)          TK_TRUE, TK_FALSE, TK_NONE, TK_DOTS
    BinOp        lhs: Expr, rhs: Expr; kind one of BinOp.KINDS: TK_AND TK_OR < > TK_EQ TK_NE TK_LE TK_GE TK_IS
                 TK_ISNOT TK_IN + - * / % @ TK_POW TK_FLOOR_DIV TK_LSHIFT TK_RSHIFT & ^ |
                 (`a not in b` is UnaryOp TK_NOT over BinOp TK_IN)
    UnaryOp      operand: Expr; kind TK_UNARY_MINUS, ~ or TK_NOT
    TernaryIf    cond: Expr, true_expr: Expr, false_expr: Expr              TK_IF_EXPR
    Apply        callee: Expr, inputs: list[Expr], attributes: list[Attribute]   TK_APPLY
    Select       value: Expr, selector: Ident  (`value.selector`)           "."
    Subscript    value: Expr, subscript_exprs: list[Expr]                   TK_SUBSCRIPT
    SliceExpr    start, end, step: Expr|None; start_or(n), end_or(n), step_or(n)   TK_SLICE_EXPR
    TupleLiteral inputs: list[Expr]                                         TK_TUPLE_LITERAL
    ListLiteral  inputs: list[Expr]                                         TK_LIST_LITERAL
    DictLiteral  key_inputs: list[Expr], value_inputs: list[Expr]           TK_DICT_LITERAL
    ListComp     elt, target, iter: Expr; conditions: list[Expr] (if any)  TK_LIST_COMP
    DictComp     key, value, target, iter: Expr; conditions (if any)        TK_DICT_COMP
    Starred      expr: Expr  (`*x`)                                         TK_STARRED
    WithItem     target: Expr, var: Var|None  (`target as var`)             TK_WITH_ITEM
`dotted_name(expr)` gives "a.b.c" for a Var/Select chain (or None), for resolving names like `torch.nn.ReLU`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from tsjit.errors import CompileError
from tsjit.frontend.tree import Compound, String, Tree
from tsjit.ir.constants import INT64_MAX, INT64_MIN
from tsjit.source import lexer as lx
from tsjit.source.lexer import kind_to_string
from tsjit.source.source_range import SourceRange


class TreeView:
    """A typed window onto one Tree; subclasses name the kinds they accept in KINDS."""

    __slots__ = ("tree",)
    KINDS: ClassVar[frozenset[str]] = frozenset()

    def __init__(self, tree: Tree | TreeView):
        if isinstance(tree, TreeView):
            tree = tree.tree
        if tree.kind not in self.KINDS:
            where = None if tree.is_atom else tree.range
            raise CompileError(f"{kind_to_string(tree.kind)} is not a valid {type(self).__name__}", where)
        self.tree = tree

    @classmethod
    def _of(cls, tree: Compound) -> Any:
        """The view of a tree just built with this view's kind: `create` knows the kind fits, so unlike the
        constructor this checks nothing (the parser creates a dozen views per statement)."""
        view = _new_object(cls)
        view.tree = tree
        return view

    @property
    def range(self) -> SourceRange:
        return self.tree._range

    @property
    def kind(self) -> str:
        return self.tree.kind

    def subtree(self, i: int) -> Tree:
        return self.tree.trees[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, TreeView):
            return NotImplemented
        return self.tree == other.tree

    def __hash__(self) -> int:
        return hash(self.tree)

    def __str__(self) -> str:
        return str(self.tree)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.tree!r})"


# ------------------------------------------------------------------------------------------------------------
# building trees: lists, options and compounds


def _tree(node: Tree | TreeView) -> Tree:
    return node.tree if isinstance(node, TreeView) else node


def _compound(kind: str, range: SourceRange, subtrees: Sequence[Tree | TreeView] = ()) -> Compound:
    return Compound(kind, range, [t.tree if isinstance(t, TreeView) else t for t in subtrees])


def _list(range: SourceRange, items: Sequence[Tree | TreeView]) -> Compound:
    """A TK_LIST tree (TorchScript's List<T>)."""
    return _compound(lx.TK_LIST, range, items)


def _option(range: SourceRange, item: Tree | TreeView | None) -> Compound:
    """A TK_OPTION tree with zero or one subtree (TorchScript's Maybe<T>)."""
    return _compound(lx.TK_OPTION, range, [] if item is None else [item])


# ------------------------------------------------------------------------------------------------------------
# reading trees: each field of a view is a property reading one subtree


def _expect(tree: Tree, kind: str) -> None:
    if tree.kind != kind:
        where = None if tree.is_atom else tree.range
        found = kind_to_string(tree.kind)
        raise CompileError(f"expected a {kind_to_string(kind)} tree but found {found}", where)


def _items(tree: Tree, view: Callable[[Tree], Any]) -> list:
    _expect(tree, lx.TK_LIST)
    return [view(t) for t in tree.trees]


def _optional(tree: Tree, view: Callable[[Tree], Any]) -> Any:
    _expect(tree, lx.TK_OPTION)
    return view(tree.trees[0]) if tree.trees else None


def _field(index: int, read: Callable[[Tree], Any]) -> Any:
    """A read-only property giving `read(subtree(index))` (a view's tree is always a Compound)."""
    return property(lambda view: read(view.tree._trees[index]))


def _expr(index: int) -> Any:
    return _field(index, lambda t: _wrap_tree(Expr, t))


def _maybe_expr(index: int) -> Any:
    return _field(index, lambda t: _optional(t, lambda item: _wrap_tree(Expr, item)))


def _expr_list(index: int) -> Any:
    return _field(index, lambda t: _items(t, lambda item: _wrap_tree(Expr, item)))


def _trailing_expr_list(index: int) -> Any:
    """An expression list that trees without it leave out (comprehension conditions: torch.jit's trees have none)."""
    return property(lambda view: _items(view.tree.trees[index], Expr.wrap) if len(view.tree.trees) > index else [])


def _stmt_list(index: int) -> Any:
    return _field(index, lambda t: _items(t, lambda item: _wrap_tree(Stmt, item)))


def _wrap_tree(base: type[Stmt] | type[Expr], tree: Tree) -> Any:
    """`base.wrap(tree)` for a Tree: the view of the tree's kind. A kind with a view of its own needs no check
    (the view's KINDS has it), so the view is made without one: the emitter reads every field this way."""
    view_class = base.VIEWS.get(tree.kind)
    if view_class is None:
        return base(tree)  # checks the kind: an error for a tree that is not a `base`
    view = _new_object(view_class)
    view.tree = tree
    return view


_new_object = object.__new__


def _ident(index: int) -> Any:
    return _field(index, Ident)


# ------------------------------------------------------------------------------------------------------------
# base kinds: Stmt and Expr


class Stmt(TreeView):
    """Any statement; `Stmt.wrap(tree)` gives the specific statement view."""

    KINDS = frozenset({
        lx.TK_IF, lx.TK_FOR, lx.TK_WHILE, lx.TK_GLOBAL, lx.TK_ASSIGN, lx.TK_AUG_ASSIGN, lx.TK_RETURN,
        lx.TK_EXPR_STMT, lx.TK_RAISE, lx.TK_ASSERT, lx.TK_PASS, lx.TK_BREAK, lx.TK_DELETE, lx.TK_CONTINUE,
        lx.TK_DEF, lx.TK_WITH,
    })
    VIEWS: ClassVar[dict[str, type[Stmt]]] = {}

    @classmethod
    def wrap(cls, tree: Tree | TreeView) -> Stmt:
        return _wrap_tree(Stmt, _tree(tree))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        Stmt.VIEWS.update(dict.fromkeys(cls.KINDS, cls))


class Expr(TreeView):
    """Any expression; `Expr.wrap(tree)` gives the specific expression view."""

    KINDS = frozenset({
        lx.TK_IF_EXPR, lx.TK_AND, lx.TK_OR, "<", ">", lx.TK_IS, lx.TK_ISNOT, lx.TK_EQ, lx.TK_LE, lx.TK_GE,
        lx.TK_NE, "+", "-", lx.TK_UNARY_MINUS, "~", "*", lx.TK_STARRED, "/", "%", lx.TK_NOT, lx.TK_CONST,
        lx.TK_STRINGLITERAL, lx.TK_TRUE, lx.TK_FALSE, lx.TK_NONE, lx.TK_APPLY, ".", lx.TK_SUBSCRIPT,
        lx.TK_SLICE_EXPR, lx.TK_VAR, lx.TK_LIST_LITERAL, lx.TK_TUPLE_LITERAL, lx.TK_DICT_LITERAL, "@",
        lx.TK_POW, lx.TK_LSHIFT, lx.TK_RSHIFT, lx.TK_FLOOR_DIV, "&", "^", "|", lx.TK_LIST_COMP,
        lx.TK_DICT_COMP, lx.TK_DOTS, lx.TK_IN, lx.TK_WITH_ITEM,
    })
    VIEWS: ClassVar[dict[str, type[Expr]]] = {}

    @classmethod
    def wrap(cls, tree: Tree | TreeView) -> Expr:
        return _wrap_tree(Expr, _tree(tree))

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        Expr.VIEWS.update(dict.fromkeys(cls.KINDS, cls))


# ------------------------------------------------------------------------------------------------------------
# helpers and definitions


class Ident(TreeView):
    """A name: `(ident x)`."""

    KINDS = frozenset({lx.TK_IDENT})
    name: str = _field(0, lambda t: t.string_value)

    @classmethod
    def create(cls, range: SourceRange, name: str) -> Ident:
        return cls._of(Compound(lx.TK_IDENT, range, [String(name)]))


class Attribute(TreeView):
    """A keyword argument `name=value` of a call."""

    KINDS = frozenset({lx.TK_ATTRIBUTE})
    name: Ident = _ident(0)
    value: Expr = _expr(1)

    @classmethod
    def create(cls, range: SourceRange, name: Ident, value: Expr) -> Attribute:
        return cls._of(_compound(lx.TK_ATTRIBUTE, range, [name, value]))


class Param(TreeView):
    """A formal parameter: name, optional annotation, optional default, and whether it is keyword-only."""

    KINDS = frozenset({lx.TK_PARAM})
    ident: Ident = _ident(0)
    type: Expr | None = _maybe_expr(1)
    default_value: Expr | None = _maybe_expr(2)
    kwarg_only: bool = _field(3, lambda t: t.kind == lx.TK_TRUE)

    def with_type(self, type: Expr | None) -> Param:
        return Param.create(self.range, self.ident, type, self.default_value, self.kwarg_only)

    @classmethod
    def create(cls, range: SourceRange, ident: Ident, type: Expr | None = None,
               default_value: Expr | None = None, kwarg_only: bool = False) -> Param:
        flag = _compound(lx.TK_TRUE if kwarg_only else lx.TK_FALSE, range)
        subtrees = [ident, _option(range, type), _option(range, default_value), flag]
        return cls(_compound(lx.TK_PARAM, range, subtrees))


class Decl(TreeView):
    """A signature: the parameters and the optional return annotation."""

    KINDS = frozenset({lx.TK_DECL})
    params: list[Param] = _field(0, lambda t: _items(t, Param))
    return_type: Expr | None = _maybe_expr(1)

    @classmethod
    def create(cls, range: SourceRange, params: Sequence[Param], return_type: Expr | None = None) -> Decl:
        return cls(_compound(lx.TK_DECL, range, [_list(range, params), _option(range, return_type)]))


class Def(Stmt):
    """A function or method definition."""

    KINDS = frozenset({lx.TK_DEF})
    name: Ident = _ident(0)
    decl: Decl = _field(1, Decl)
    statements: list[Stmt] = _stmt_list(2)

    def with_name(self, name: str) -> Def:
        subtrees = [Ident.create(self.name.range, name), *self.tree.trees[1:]]
        return Def(_compound(lx.TK_DEF, self.range, subtrees))

    def with_decl(self, decl: Decl) -> Def:
        subtrees = self.tree.trees
        return Def(_compound(lx.TK_DEF, self.range, [subtrees[0], decl, subtrees[2]]))

    @classmethod
    def create(cls, range: SourceRange, name: Ident, decl: Decl, statements: Sequence[Stmt]) -> Def:
        return cls(_compound(lx.TK_DEF, range, [name, decl, _list(range, statements)]))


class Property(TreeView):
    """A class property: its name, getter and optional setter (methods named `__<name>_getter/setter`)."""

    KINDS = frozenset({lx.TK_PROP})
    name: Ident = _ident(0)
    getter: Def = _field(1, Def)
    setter: Def | None = _field(2, lambda t: _optional(t, Def))

    @classmethod
    def create(cls, range: SourceRange, name: Ident, getter: Def, setter: Def | None = None) -> Property:
        return cls(_compound(lx.TK_PROP, range, [name, getter, _option(range, setter)]))


class ClassDef(TreeView):
    """A class: its name, optional base class, body (methods and class-level assignments) and properties."""

    KINDS = frozenset({lx.TK_CLASS_DEF})
    name: Ident = _ident(0)
    superclass: Expr | None = _maybe_expr(1)
    body: list[Stmt] = _stmt_list(2)
    properties: list[Property] = _field(3, lambda t: _items(t, Property))

    def with_name(self, name: str) -> ClassDef:
        subtrees = [Ident.create(self.name.range, name), *self.tree.trees[1:]]
        return ClassDef(_compound(lx.TK_CLASS_DEF, self.range, subtrees))

    @classmethod
    def create(cls, range: SourceRange, name: Ident, superclass: Expr | None, body: Sequence[Stmt],
               properties: Sequence[Property] = ()) -> ClassDef:
        subtrees = [name, _option(range, superclass), _list(range, body), _list(range, properties)]
        return cls(_compound(lx.TK_CLASS_DEF, range, subtrees))


# ------------------------------------------------------------------------------------------------------------
# statements


class If(Stmt):
    """`if cond: true_branch else: false_branch`; an `elif` is an If alone in the false branch."""

    KINDS = frozenset({lx.TK_IF})
    cond: Expr = _expr(0)
    true_branch: list[Stmt] = _stmt_list(1)
    false_branch: list[Stmt] = _stmt_list(2)

    def with_new_branches(self, true_branch: Sequence[Stmt], false_branch: Sequence[Stmt]) -> If:
        return If.create(self.range, self.cond, true_branch, false_branch)

    @classmethod
    def create(cls, range: SourceRange, cond: Expr, true_branch: Sequence[Stmt],
               false_branch: Sequence[Stmt] = ()) -> If:
        subtrees = [cond, _list(range, true_branch), _list(range, false_branch)]
        return cls(_compound(lx.TK_IF, range, subtrees))


class While(Stmt):
    KINDS = frozenset({lx.TK_WHILE})
    cond: Expr = _expr(0)
    body: list[Stmt] = _stmt_list(1)

    @classmethod
    def create(cls, range: SourceRange, cond: Expr, body: Sequence[Stmt]) -> While:
        return cls(_compound(lx.TK_WHILE, range, [cond, _list(range, body)]))


class For(Stmt):
    """`for target in iterable: body`; both frontends give exactly one target and one iterable."""

    KINDS = frozenset({lx.TK_FOR})
    targets: list[Expr] = _expr_list(0)
    itrs: list[Expr] = _expr_list(1)
    body: list[Stmt] = _stmt_list(2)

    @classmethod
    def create(cls, range: SourceRange, targets: Sequence[Expr], itrs: Sequence[Expr],
               body: Sequence[Stmt]) -> For:
        subtrees = [_list(range, targets), _list(range, itrs), _list(range, body)]
        return cls(_compound(lx.TK_FOR, range, subtrees))


class Global(Stmt):
    KINDS = frozenset({lx.TK_GLOBAL})
    names: list[Ident] = _field(0, lambda t: _items(t, Ident))

    @classmethod
    def create(cls, range: SourceRange, names: Sequence[Ident]) -> Global:
        return cls(_compound(lx.TK_GLOBAL, range, [_list(range, names)]))


class Assign(Stmt):
    """`a = b = rhs`, `x: T = rhs` or `x: T`; targets are Var, Select, Subscript, tuples and Starred."""

    KINDS = frozenset({lx.TK_ASSIGN})
    lhs_list: list[Expr] = _expr_list(0)
    rhs: Expr | None = _maybe_expr(1)
    type: Expr | None = _maybe_expr(2)

    @property
    def lhs(self) -> Expr:
        """The target of an assignment that has exactly one."""
        targets = self.lhs_list
        if len(targets) != 1:
            raise CompileError("expected a single assignment target", self.range)
        return targets[0]

    @classmethod
    def create(cls, range: SourceRange, lhs_list: Sequence[Expr], rhs: Expr | None,
               type: Expr | None = None) -> Assign:
        subtrees = [_list(range, lhs_list), _option(range, rhs), _option(range, type)]
        return cls._of(_compound(lx.TK_ASSIGN, range, subtrees))


class AugAssign(Stmt):
    """`lhs op= rhs`; aug_op is the kind of the binary operator (`"+"`, `TK_POW`, `TK_LSHIFT`, ...)."""

    KINDS = frozenset({lx.TK_AUG_ASSIGN})
    OPS: ClassVar[frozenset[str]] = frozenset(
        {"+", "-", "*", "/", "%", "|", "&", "^", lx.TK_POW, lx.TK_LSHIFT, lx.TK_RSHIFT})
    lhs: Expr = _expr(0)
    aug_op: str = _field(1, lambda t: t.kind)
    rhs: Expr = _expr(2)

    @classmethod
    def create(cls, range: SourceRange, lhs: Expr, aug_op: str, rhs: Expr) -> AugAssign:
        if aug_op not in cls.OPS:
            raise CompileError(f"{kind_to_string(aug_op)} is not an augmented assignment operator", range)
        return cls(_compound(lx.TK_AUG_ASSIGN, range, [lhs, _compound(aug_op, range), rhs]))


class Return(Stmt):
    KINDS = frozenset({lx.TK_RETURN})
    expr: Expr = _expr(0)

    @classmethod
    def create(cls, range: SourceRange, expr: Expr | None = None) -> Return:
        value = NoneLiteral.create(range) if expr is None else expr
        return cls._of(_compound(lx.TK_RETURN, range, [value]))


class Raise(Stmt):
    KINDS = frozenset({lx.TK_RAISE})
    expr: Expr = _expr(0)

    @classmethod
    def create(cls, range: SourceRange, expr: Expr) -> Raise:
        return cls(_compound(lx.TK_RAISE, range, [expr]))


class Assert(Stmt):
    KINDS = frozenset({lx.TK_ASSERT})
    test: Expr = _expr(0)
    msg: Expr | None = _maybe_expr(1)

    @classmethod
    def create(cls, range: SourceRange, test: Expr, msg: Expr | None = None) -> Assert:
        return cls(_compound(lx.TK_ASSERT, range, [test, _option(range, msg)]))


class Pass(Stmt):
    KINDS = frozenset({lx.TK_PASS})

    @classmethod
    def create(cls, range: SourceRange) -> Pass:
        return cls(_compound(lx.TK_PASS, range))


class Break(Stmt):
    KINDS = frozenset({lx.TK_BREAK})

    @classmethod
    def create(cls, range: SourceRange) -> Break:
        return cls(_compound(lx.TK_BREAK, range))


class Continue(Stmt):
    KINDS = frozenset({lx.TK_CONTINUE})

    @classmethod
    def create(cls, range: SourceRange) -> Continue:
        return cls(_compound(lx.TK_CONTINUE, range))


class Delete(Stmt):
    KINDS = frozenset({lx.TK_DELETE})
    targets: list[Expr] = _expr_list(0)

    @classmethod
    def create(cls, range: SourceRange, targets: Sequence[Expr]) -> Delete:
        return cls(_compound(lx.TK_DELETE, range, [_list(range, targets)]))


class With(Stmt):
    KINDS = frozenset({lx.TK_WITH})
    targets: list[WithItem] = _field(0, lambda t: _items(t, WithItem))
    body: list[Stmt] = _stmt_list(1)

    @classmethod
    def create(cls, range: SourceRange, targets: Sequence[WithItem], body: Sequence[Stmt]) -> With:
        return cls(_compound(lx.TK_WITH, range, [_list(range, targets), _list(range, body)]))


class ExprStmt(Stmt):
    KINDS = frozenset({lx.TK_EXPR_STMT})
    expr: Expr = _expr(0)

    @classmethod
    def create(cls, range: SourceRange, expr: Expr) -> ExprStmt:
        return cls._of(_compound(lx.TK_EXPR_STMT, range, [expr]))


# ------------------------------------------------------------------------------------------------------------
# expressions


class Var(Expr):
    KINDS = frozenset({lx.TK_VAR})
    name: Ident = _ident(0)

    @classmethod
    def create(cls, range: SourceRange, name: Ident) -> Var:
        return cls._of(_compound(lx.TK_VAR, range, [name]))


class Const(Expr):
    """A number literal, kept as spelled in the source (`1`, `0x1F`, `2.5e-3`, `3j`; `-1` folds into `"-1"`)."""

    KINDS = frozenset({lx.TK_CONST})
    text: str = _field(0, lambda t: t.string_value)

    @property
    def is_complex(self) -> bool:
        return self.text.endswith("j")

    @property
    def is_floating_point(self) -> bool:
        return not self.is_complex and _is_float_spelling(self.text)

    @property
    def is_integral(self) -> bool:
        return not self.is_floating_point and not self.is_complex

    @property
    def value(self) -> int | float | complex:
        """The number; an integer must fit in 64 bits, as TorchScript's ints do."""
        try:
            value = number_value(self.text)
        except ValueError:
            raise CompileError(f"invalid number literal {self.text}", self.range) from None
        if isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX:
            message = "Integral constant out of range (must fit in a signed 64 bit integer)"
            raise CompileError(message, self.range)
        return value

    @classmethod
    def create(cls, range: SourceRange, text: str) -> Const:
        return cls._of(Compound(lx.TK_CONST, range, [String(text)]))


def number_value(text: str) -> int | float | complex:
    """The value of a number spelled as Python or C's strtod spell them; ValueError if it is not one."""
    if text.endswith("j"):
        return complex(0, _float_value(text[:-1]))
    if _is_float_spelling(text):
        return _float_value(text)
    return int(text, 0)


def _is_float_spelling(text: str) -> bool:
    digits = text.lstrip("-").lower()
    if digits.startswith("0x"):
        return "." in digits or "p" in digits
    return digits == "inf" or any(c in digits for c in ".e")


def _float_value(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return float.fromhex(text)


class StringLiteral(Expr):
    KINDS = frozenset({lx.TK_STRINGLITERAL})
    text: str = _field(0, lambda t: t.string_value)

    @classmethod
    def create(cls, range: SourceRange, text: str) -> StringLiteral:
        return cls._of(Compound(lx.TK_STRINGLITERAL, range, [String(text)]))


class _Leaf(Expr):
    """An expression with no subtrees, identified by its kind alone."""

    KINDS = frozenset()

    @classmethod
    def create(cls, range: SourceRange):
        (kind,) = cls.KINDS
        return cls(_compound(kind, range))


class TrueLiteral(_Leaf):
    KINDS = frozenset({lx.TK_TRUE})


class FalseLiteral(_Leaf):
    KINDS = frozenset({lx.TK_FALSE})


class NoneLiteral(_Leaf):
    KINDS = frozenset({lx.TK_NONE})


class Dots(_Leaf):
    """`...` (also spelled `Ellipsis`)."""

    KINDS = frozenset({lx.TK_DOTS})


class BinOp(Expr):
    """A binary operator; its kind says which (see the module docstring)."""

    KINDS = frozenset({
        lx.TK_AND, lx.TK_OR, "<", ">", lx.TK_IS, lx.TK_ISNOT, lx.TK_EQ, lx.TK_LE, lx.TK_GE, lx.TK_NE, "+",
        "*", "/", "-", "@", lx.TK_POW, lx.TK_LSHIFT, lx.TK_RSHIFT, "%", "&", "^", "|", lx.TK_FLOOR_DIV,
        lx.TK_IN,
    })
    lhs: Expr = _expr(0)
    rhs: Expr = _expr(1)

    @classmethod
    def create(cls, range: SourceRange, kind: str, lhs: Expr, rhs: Expr) -> BinOp:
        return cls(_compound(kind, range, [lhs, rhs]))


class UnaryOp(Expr):
    """`-x` (TK_UNARY_MINUS), `~x` or `not x` (TK_NOT)."""

    KINDS = frozenset({lx.TK_UNARY_MINUS, "~", lx.TK_NOT})
    operand: Expr = _expr(0)

    @classmethod
    def create(cls, range: SourceRange, kind: str, operand: Expr) -> UnaryOp:
        return cls(_compound(kind, range, [operand]))


class TernaryIf(Expr):
    """`true_expr if cond else false_expr`."""

    KINDS = frozenset({lx.TK_IF_EXPR})
    cond: Expr = _expr(0)
    true_expr: Expr = _expr(1)
    false_expr: Expr = _expr(2)

    @classmethod
    def create(cls, range: SourceRange, cond: Expr, true_expr: Expr, false_expr: Expr) -> TernaryIf:
        return cls(_compound(lx.TK_IF_EXPR, range, [cond, true_expr, false_expr]))


class Apply(Expr):
    """A call `callee(*inputs, **attributes)`; a method call is a call of a Select: `x.add(y)`."""

    KINDS = frozenset({lx.TK_APPLY})
    callee: Expr = _expr(0)
    inputs: list[Expr] = _expr_list(1)
    attributes: list[Attribute] = _field(2, lambda t: _items(t, Attribute))

    @classmethod
    def create(cls, range: SourceRange, callee: Expr, inputs: Sequence[Expr],
               attributes: Sequence[Attribute] = ()) -> Apply:
        subtrees = [callee, _list(range, inputs), _list(range, attributes)]
        return cls._of(_compound(lx.TK_APPLY, range, subtrees))


class Select(Expr):
    """Attribute access `value.selector`."""

    KINDS = frozenset({"."})
    value: Expr = _expr(0)
    selector: Ident = _ident(1)

    @classmethod
    def create(cls, range: SourceRange, value: Expr, selector: Ident) -> Select:
        return cls._of(_compound(".", range, [value, selector]))


class Subscript(Expr):
    """`value[e1, e2, ...]`; each subscript is an expression, a SliceExpr or Dots."""

    KINDS = frozenset({lx.TK_SUBSCRIPT})
    value: Expr = _expr(0)
    subscript_exprs: list[Expr] = _expr_list(1)

    @classmethod
    def create(cls, range: SourceRange, value: Expr, subscript_exprs: Sequence[Expr]) -> Subscript:
        return cls._of(_compound(lx.TK_SUBSCRIPT, range, [value, _list(range, subscript_exprs)]))


class SliceExpr(Expr):
    """`start:end:step` inside a subscript, each part optional."""

    KINDS = frozenset({lx.TK_SLICE_EXPR})
    start: Expr | None = _maybe_expr(0)
    end: Expr | None = _maybe_expr(1)
    step: Expr | None = _maybe_expr(2)

    def start_or(self, alternative: int) -> Expr:
        return self._or(self.start, alternative)

    def end_or(self, alternative: int) -> Expr:
        return self._or(self.end, alternative)

    def step_or(self, alternative: int) -> Expr:
        return self._or(self.step, alternative)

    def _or(self, part: Expr | None, alternative: int) -> Expr:
        return part if part is not None else Const.create(self.range, str(alternative))

    @classmethod
    def create(cls, range: SourceRange, start: Expr | None, end: Expr | None,
               step: Expr | None = None) -> SliceExpr:
        subtrees = [_option(range, start), _option(range, end), _option(range, step)]
        return cls(_compound(lx.TK_SLICE_EXPR, range, subtrees))


class TupleLiteral(Expr):
    KINDS = frozenset({lx.TK_TUPLE_LITERAL})
    inputs: list[Expr] = _expr_list(0)

    @classmethod
    def create(cls, range: SourceRange, inputs: Sequence[Expr]) -> TupleLiteral:
        return cls._of(_compound(lx.TK_TUPLE_LITERAL, range, [_list(range, inputs)]))


class ListLiteral(Expr):
    KINDS = frozenset({lx.TK_LIST_LITERAL})
    inputs: list[Expr] = _expr_list(0)

    @classmethod
    def create(cls, range: SourceRange, inputs: Sequence[Expr]) -> ListLiteral:
        return cls._of(_compound(lx.TK_LIST_LITERAL, range, [_list(range, inputs)]))


class DictLiteral(Expr):
    KINDS = frozenset({lx.TK_DICT_LITERAL})
    key_inputs: list[Expr] = _expr_list(0)
    value_inputs: list[Expr] = _expr_list(1)

    @classmethod
    def create(cls, range: SourceRange, keys: Sequence[Expr], values: Sequence[Expr]) -> DictLiteral:
        return cls(_compound(lx.TK_DICT_LITERAL, range, [_list(range, keys), _list(range, values)]))


class ListComp(Expr):
    """`[elt for target in iter if c1 if c2]` (one generator; torch.jit takes no conditions, tsjit does)."""

    KINDS = frozenset({lx.TK_LIST_COMP})
    elt: Expr = _expr(0)
    target: Expr = _expr(1)
    iter: Expr = _expr(2)
    conditions: list[Expr] = _trailing_expr_list(3)

    @classmethod
    def create(cls, range: SourceRange, elt: Expr, target: Expr, iter: Expr, conditions: Sequence[Expr] = ()
               ) -> ListComp:
        trailing = [_list(range, conditions)] if conditions else []
        return cls(_compound(lx.TK_LIST_COMP, range, [elt, target, iter, *trailing]))


class DictComp(Expr):
    """`{key: value for target in iter if c}` (one generator, any number of conditions)."""

    KINDS = frozenset({lx.TK_DICT_COMP})
    key: Expr = _expr(0)
    value: Expr = _expr(1)
    target: Expr = _expr(2)
    iter: Expr = _expr(3)
    conditions: list[Expr] = _trailing_expr_list(4)

    @classmethod
    def create(cls, range: SourceRange, key: Expr, value: Expr, target: Expr, iter: Expr,
               conditions: Sequence[Expr] = ()) -> DictComp:
        trailing = [_list(range, conditions)] if conditions else []
        return cls(_compound(lx.TK_DICT_COMP, range, [key, value, target, iter, *trailing]))


class Starred(Expr):
    KINDS = frozenset({lx.TK_STARRED})
    expr: Expr = _expr(0)

    @classmethod
    def create(cls, range: SourceRange, expr: Expr) -> Starred:
        return cls(_compound(lx.TK_STARRED, range, [expr]))


class WithItem(Expr):
    """One item of a with statement: `target` or `target as var`."""

    KINDS = frozenset({lx.TK_WITH_ITEM})
    target: Expr = _expr(0)
    var: Var | None = _field(1, lambda t: _optional(t, Var))

    @classmethod
    def create(cls, range: SourceRange, target: Expr, var: Var | None = None) -> WithItem:
        return cls(_compound(lx.TK_WITH_ITEM, range, [target, _option(range, var)]))


def dotted_name(expr: Expr) -> str | None:
    """"a.b.c" for the expression `a.b.c` made of a Var and Selects; None for anything else."""
    if isinstance(expr, Var):
        return expr.name.name
    if isinstance(expr, Select):
        base = dotted_name(expr.value)
        return None if base is None else f"{base}.{expr.selector.name}"
    return None
