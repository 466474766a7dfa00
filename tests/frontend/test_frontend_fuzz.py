"""Fuzzing: the lexer and parser (and the Python-AST frontend) give a tree or a tsjit error for any text, never
another exception, and every tree they give reads back through the tree views."""

from __future__ import annotations

import inspect
import os

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from script_corpus import PROGRAMS

from tsjit.errors import TsjitError
from tsjit.frontend import tree_views as tv
from tsjit.frontend.parser import parse_definitions, parse_expression
from tsjit.frontend.python_ast import build_definitions
from tsjit.frontend.tree import Tree
from tsjit.source import lexer as lx

# TSJIT_FUZZ_EXAMPLES=20000 fuzzes harder than the default run
FUZZ = settings(max_examples=int(os.environ.get("TSJIT_FUZZ_EXAMPLES", "300")), deadline=None,
                suppress_health_check=[HealthCheck.too_slow])

# every view, by the kind of tree it reads (statement and expression views register themselves)
VIEWS: dict[str, type[tv.TreeView]] = {
    **tv.Stmt.VIEWS, **tv.Expr.VIEWS, lx.TK_DECL: tv.Decl, lx.TK_PARAM: tv.Param, lx.TK_CLASS_DEF: tv.ClassDef,
    lx.TK_IDENT: tv.Ident, lx.TK_ATTRIBUTE: tv.Attribute, lx.TK_PROP: tv.Property,
}

FRAGMENTS = [
    "def ", "class ", "if ", "elif ", "else", "while ", "for ", " in ", "not ", " is ", " and ", " or ", "return ",
    "raise ", "assert ", "with ", " as ", "del ", "pass", "break", "continue", "global ", "lambda", "yield",
    "import ", "try:", "async ", "@", "*", "**", "//", "->", "...", "=", "+=", "//=", "**=", ":", ",", ".", "(",
    ")", "[", "]", "{", "}", "'", '"', '"""', "#", "# type: ", "# type: (int) -> int", "\\\n", "\n", "\n    ",
    "\n        ", "\t", "\r", "\r\n", "\f", "\x00", " ", "x", "self", "0", "1.5e3", "0x1F", "2j", "-", "~", "not in",
    "is not", "None", "True", "f'{x}'", "r'\\d'", "b'x'", "é", "😀", "__jit", "Ellipsis", "NoneType",
]


def check_views(trees: list) -> None:
    """Read every field of every view over every subtree, so malformed trees cannot hide."""
    pending: list[Tree] = [tree.tree if isinstance(tree, tv.TreeView) else tree for tree in trees]
    while pending:
        tree = pending.pop()
        # an AugAssign's operator is a bare `+`-kind marker, not an expression
        pending.extend(tree.trees[::2] if tree.kind == lx.TK_AUG_ASSIGN else tree.trees)
        view_class = VIEWS.get(tree.kind)
        if view_class is not None:
            _read_fields(view_class(tree))


def _read_fields(view: tv.TreeView) -> None:
    for name, _ in inspect.getmembers(type(view), lambda member: isinstance(member, property)):
        try:
            getattr(view, name)
        except TsjitError:
            pass  # Assign.lhs of a chained assignment, Const.value out of range: user errors, reported as such


def parses_or_fails_cleanly(parse, text: str) -> None:
    try:
        result = parse(text)
    except TsjitError as error:
        str(error)
        return
    trees = result if isinstance(result, list) else [result]
    check_views(trees)
    for tree in trees:
        str(tree)


def all_frontends(text: str) -> None:
    for parse in (parse_definitions, parse_expression, build_definitions):
        parses_or_fails_cleanly(parse, text)


@FUZZ
@given(st.text(max_size=200))
def test_arbitrary_text(text):
    all_frontends(text)


@FUZZ
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_token_soup(fragments):
    all_frontends("".join(fragments))


@st.composite
def mutated_programs(draw):
    """A corpus program with a few characters deleted, replaced or inserted (fragments or any character)."""
    text = list(draw(st.sampled_from(sorted(PROGRAMS.values()))))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(text)))
        edit = draw(st.sampled_from(["delete", "insert", "replace"]))
        fragment = draw(st.one_of(st.sampled_from(FRAGMENTS), st.characters()))
        if edit == "delete":
            del text[position:position + draw(st.integers(1, 8))]
        elif edit == "insert":
            text.insert(position, fragment)
        else:
            text[position:position + 1] = [fragment]
    return "".join(text)


@FUZZ
@given(mutated_programs())
def test_mutated_programs(text):
    all_frontends(text)


@FUZZ
@given(st.sampled_from(sorted(PROGRAMS.values())), st.data())
def test_truncated_and_reindented_programs(text, data):
    """Programs cut short anywhere, or with one line's indentation changed."""
    cut = data.draw(st.integers(0, len(text)))
    all_frontends(text[:cut])
    lines = text.split("\n")
    index = data.draw(st.integers(0, len(lines) - 1))
    lines[index] = data.draw(st.sampled_from(["", " ", "  ", "\t", "        "])) + lines[index].lstrip()
    all_frontends("\n".join(lines))


def test_corpus_trees_read_back_through_views():
    for text in PROGRAMS.values():
        check_views(parse_definitions(text))
        check_views(build_definitions(text))
