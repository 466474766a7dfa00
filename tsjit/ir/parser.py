"""parse_ir: read graph text (what `print_graph` and PyTorch's `str(graph)` write) back into a Graph.

    graph = parse_ir('''
        graph(%x : Tensor, %n : int):
          %1 : int = prim::Constant[value=1]()
          %y : Tensor = aten::add(%x, %n, %1)
          return (%y)
    ''')

It reads everything PyTorch prints, including what `torch._C.parse_ir` cannot: nodes without outputs
(` = prim::Print(%x)`), class, enum and function types (`__torch__.M`, created or looked up by name in
`class_types`), partially refined tensors (`LongTensor`, `Tensor(2, *)`), `nan`/`inf`, complex, tuple, dict,
`annotate(...)` and device constants, tensors printed inline or as `<Tensor>` (zeros of the declared shape),
Python ops (`^f[]()(%x)`), scopes, and subgraphs printed after the graph as `with prim::FusionGroup_0 =
graph(...)`, which become the `Subgraph` attribute of the node printed as `prim::FusionGroup_0`.
`# file:line:col` comments are ignored. Values keep their names, and values printed as `%5` keep the number 5,
so reading and printing gives back the same text.

Layout is ignored: statements are told apart by their tokens, not by their indentation, because PyTorch's
indentation is not consistent (a node without outputs is indented one column more than its siblings, since its
line starts with ` = `). Errors are SourceParseErrors naming the line and column and underlining the text.
"""

from __future__ import annotations

import re
from typing import Any

import torch

from tsjit.errors import SourceParseError, TsjitError
from tsjit.ir import types
from tsjit.ir.graph import Graph
from tsjit.ir.printer import ATTRIBUTE_SETTERS, PYTHON_OP_NAME, PYTHON_OP_SCALARS, SUBGRAPH, EnumValue
from tsjit.ir.symbols import Symbol, attribute_symbol, prim
from tsjit.ir.tensor_text import ELIDED_TENSOR, find_inline_tensor_end, parse_tensor
from tsjit.ir.type_parser import TypeParser
from tsjit.source.lexer import (
    TK_ARROW,
    TK_DEDENT,
    TK_EOF,
    TK_FALSE,
    TK_IDENT,
    TK_INDENT,
    TK_NEWLINE,
    TK_NONE,
    TK_NONE_TYPE,
    TK_NUMBER,
    TK_RETURN,
    TK_STRINGLITERAL,
    TK_TRUE,
    TK_WITH,
    Lexer,
    Token,
)
from tsjit.source.source_range import Source, SourceRange

_LAYOUT = frozenset((TK_NEWLINE, TK_INDENT, TK_DEDENT))
_NAME_CHARACTERS = re.compile(r"[A-Za-z0-9_.]+")
_GROUP_HEADER = re.compile(r"^with (\S+) = graph\(", re.MULTILINE)
_BLOCK_NAME = re.compile(r"block[0-9]+")
# one word of ATen's legacy tensor print: a number, nan/inf, a scale's `*`, `Columns a to b`, `(i,j,.,.) =`;
# `Columns 1 to 7-1.6e+07` glues a column number to a wide first value
_TENSOR_WORD = re.compile(r"[0-9]*-?(?:nan|inf|[0-9][0-9.]*(?:e[+-][0-9]+)?)"
                          r"|\*|Columns|to|=|\((?:[0-9]+,)+\.,\.\)")
_SCALAR_TENSOR = re.compile(r"\{(?:-?(?:nan|inf)|-?[0-9][0-9.eE+\-]*|\([^(){}]*\))\}")
_LIST_KINDS = {"i": "is", "f": "fs", "s": "ss", "ty": "tys"}
_CONTAINER_KINDS = frozenset(("is", "fs", "ss", "tys", "ts"))
_VALUE_WORDS = frozenset(("nan", "inf", "nanj", "infj", "annotate", "torch"))
_TYPED_LIST_KINDS = {types.IntType: "is", types.FloatType: "fs", types.StringType: "ss"}
_SIMPLE_ESCAPES = {"\\": 92, "'": 39, '"': 34, "a": 7, "b": 8, "f": 12, "n": 10, "r": 13, "t": 9, "v": 11}
_OCTAL_DIGITS = frozenset(chr(c) for c in range(ord("0") - 7, ord("8")))  # `)` to `7`: see _unquote


def parse_ir(text: str, graph: Graph | None = None, class_types: dict[str, Any] | None = None) -> Graph:
    """The Graph that `text` prints; fills `graph` if given. `class_types` maps qualified names to the
    ClassType (or EnumType, InterfaceType) objects to use for them; unknown `__torch__` names get a new
    ClassType, which is added to the dict."""
    parser = _IRParser(text, {} if class_types is None else class_types)
    return parser.parse(Graph() if graph is None else graph)


class _GraphState:
    """What one graph's parse tracks: values by printed name, %N numbers, and subgraph nodes in order."""

    def __init__(self, graph: Graph):
        self.graph = graph
        self.values: dict[str, Any] = {}
        self.numbered: dict[Any, int] = {}
        self.created: list[Any] = []
        self.groups: list[Any] = []


class _IRParser:
    def __init__(self, text: str, class_types: dict[str, Any]):
        self.text = text
        self.source = Source(text)
        self.class_types = class_types
        self.group_names = frozenset(_GROUP_HEADER.findall(text))
        self.previous_end = 0
        self.lexer: Lexer | None = None
        self.type_parsers: dict[str, TypeParser] = {}

    @property
    def tokens(self) -> Lexer:
        """The lexer over the text, which parse() sets before reading any token."""
        assert self.lexer is not None, "tokens are read only inside parse()"
        return self.lexer

    def named_type(self, name: str) -> Any:
        """The type a name stands for: the caller's, or `Function` (first-class functions print only that)."""
        if name == "Function":
            return types.FunctionType(None)
        return self.class_types.get(name)

    # ---- entry point and errors ------------------------------------------------------------------------
    def parse(self, graph: Graph) -> Graph:
        try:
            self.lexer = _layout_free_lexer(self.source)
            self.type_parsers = {dialect: TypeParser(self.lexer, dialect, self.named_type)
                                 for dialect in ("ir", "annotation")}
            self.graph(graph)
            self.expect(TK_EOF)
        except SourceParseError as error:
            raise _with_position(error) from None
        except Exception as error:  # noqa: BLE001 - bad text must surface as a parse error, never a crash
            where = self.lexer.cur().range if self.lexer else SourceRange(self.source, 0, len(self.text))
            raise _with_position(SourceParseError(f"invalid IR: {error}", where)) from error
        for parser in self.type_parsers.values():
            _keep_named_types(parser, self.class_types)
        return graph

    def error(self, message: str, token: Token | None = None) -> SourceParseError:
        token = token or self.cur()
        return _with_position(SourceParseError(message, token.range))

    # ---- tokens ----------------------------------------------------------------------------------------
    def cur(self) -> Token:
        lexer = self.tokens
        while lexer.cur().kind in _LAYOUT:
            lexer.next()
        return lexer.cur()

    def next(self) -> Token:
        self.cur()
        return self.tokens.next()

    def next_if(self, kind: str) -> bool:
        if self.cur().kind != kind:
            return False
        self.next()
        return True

    def expect(self, kind: str) -> Token:
        self.cur()
        return self.tokens.expect(kind)

    def is_word(self, word: str) -> bool:
        return self.cur().kind == TK_IDENT and self.cur().text == word

    def skip_to(self, offset: int) -> None:
        """Consume the tokens of text read directly (inline tensors, scopes) up to `offset`."""
        while self.cur().kind != TK_EOF and self.cur().range.start < offset:
            self.next()

    def joined_name(self) -> str:
        """A name the lexer splits: `%x.1` is an identifier and the number `.1`, `%self.b.0.bias` five tokens.
        Adjacent tokens made of name characters form one name."""
        first = self.next()
        if not _NAME_CHARACTERS.fullmatch(first.text):
            raise self.error("expected a name", first)
        name, end = first.text, first.range.end
        while self.cur().range.start == end and _NAME_CHARACTERS.fullmatch(self.cur().text):
            token = self.next()
            name, end = name + token.text, token.range.end
        return name

    def comma_list(self, open_: str, close: str, parse_item) -> list:
        self.expect(open_)
        items = []
        if self.cur().kind != close:
            items.append(parse_item())
            while self.next_if(","):
                items.append(parse_item())
        self.expect(close)
        return items

    # ---- graphs and blocks -----------------------------------------------------------------------------
    def graph(self, graph: Graph) -> None:
        # graph(%x.1 : Tensor,
        #       %n.1 : int):
        #   ...nodes...
        #   return (%x)
        # with prim::FusionGroup_0 = graph(...)      <- one section per subgraph node, in print order
        state = _GraphState(graph)
        if not self.is_word("graph"):
            raise self.error("expected 'graph'")
        self.next()
        for declaration in self.comma_list("(", ")", self.declaration):
            self.bind(state, graph.block.add_input(), *declaration)
        self.expect(":")
        self.nodes(state, graph.block, end=TK_RETURN)
        self.expect(TK_RETURN)
        for value in self.comma_list("(", ")", lambda: self.use(state)):
            graph.register_output(value)
        _restore_numbers(graph, state)
        for index, node in enumerate(state.groups):
            self.subgraph_section(node, index)

    def subgraph_section(self, node, index: int) -> None:
        start = self.expect(TK_WITH)
        name = self.kind_name()
        if name != f"{node.kind}_{index}":
            raise self.error(f"expected the subgraph of {node.kind}_{index} here, found {name}", start)
        self.expect("=")
        subgraph = Graph()
        self.graph(subgraph)
        node.g_(SUBGRAPH, subgraph)

    def nodes(self, state: _GraphState, block, end: str) -> None:
        while self.cur().kind not in (end, TK_EOF):
            self.node(state, block)

    def block(self, state: _GraphState, node) -> None:
        #     block0(%i.1 : int, %x.23 : Tensor):
        #       ...nodes...
        #       -> (%5, %x.21)
        block = node.add_block()
        self.next()
        for declaration in self.comma_list("(", ")", self.declaration):
            self.bind(state, block.add_input(), *declaration)
        self.expect(":")
        with self.tokens.nested():
            self.nodes(state, block, end=TK_ARROW)
        self.expect(TK_ARROW)
        for value in self.comma_list("(", ")", lambda: self.use(state)):
            block.register_output(value)

    # ---- values ----------------------------------------------------------------------------------------
    def declaration(self) -> tuple[Token, str, Any]:
        """`%name` with an optional `: Type` (Tensor when absent): the `%` token, the name and the type."""
        token = self.expect("%")
        name = self.joined_name()
        return token, name, self.parse_type() if self.next_if(":") else types.TensorType.get()

    def bind(self, state: _GraphState, value, token: Token, name: str, type_: Any) -> None:
        """Give a freshly created value its printed name and type."""
        if name in state.values:
            raise self.error(f"value %{name} is defined twice", token)
        state.values[name] = value
        state.created.append(value)
        if name.isdigit():
            state.numbered[value] = int(name)
        else:
            value.set_debug_name(name)
        value.set_type(type_)

    def use(self, state: _GraphState) -> Any:
        token = self.expect("%")
        name = self.joined_name()
        if name not in state.values:
            raise self.error(f"cannot find a value named %{name} (values must be defined before their uses)",
                             token)
        return state.values[name]

    # ---- nodes -----------------------------------------------------------------------------------------
    def node(self, state: _GraphState, block) -> None:
        #   %a : int, %b : int = prim::TupleUnpack(%t)
        #    = prim::Print(%x)                              <- no outputs: the line starts with ` = `
        #   %y : Tensor = ^python_side[]()(%x)             <- a Python op: name, attributes, scalars, inputs
        outputs = self.comma_list_without_brackets(self.declaration) if self.cur().kind == "%" else []
        self.expect("=")
        node = self.create_node(state)
        for declaration in outputs:
            self.bind(state, node.add_output(), *declaration)
        if self.cur().kind == "[":
            self.attributes(node)
        if node.kind is prim.PythonOp:
            self.python_scalars(node)
        for value in self.comma_list("(", ")", lambda: self.use(state)):
            node.add_input(value)
        self.scope(node)
        block.append_node(node)
        while self.cur().kind == TK_IDENT and _BLOCK_NAME.fullmatch(self.cur().text):
            self.block(state, node)

    def comma_list_without_brackets(self, parse_item) -> list:
        items = [parse_item()]
        while self.next_if(","):
            items.append(parse_item())
        return items

    def create_node(self, state: _GraphState):
        """A node of the kind at the current token; `^name` is a Python op, `prim::X_N` a subgraph node."""
        if self.next_if("^"):
            return state.graph.create(prim.PythonOp, (), 0).s_(PYTHON_OP_NAME, self.joined_name())
        token = self.cur()
        name = self.kind_name()
        is_group = name in self.group_names
        try:
            node = state.graph.create(Symbol(name.rpartition("_")[0] if is_group else name), (), 0)
        except TsjitError as error:
            raise self.error(str(error), token) from None
        if is_group:
            state.groups.append(node)
        return node

    def kind_name(self) -> str:
        """`ns::name`; the lexer has no `::`, so it is two `:` tokens."""
        namespace = self.joined_name()
        self.expect(":")
        self.expect(":")
        return f"{namespace}::{self.joined_name()}"

    def python_scalars(self, node) -> None:
        """`(2.5, "x")` after a Python op's attributes: kept as printed, split at top-level commas."""
        start = self.expect("(").range.end
        depth, pieces, piece_start = 0, [], start
        while depth or self.cur().kind != ")":
            token = self.next()
            if token.kind == TK_EOF:
                raise self.error("unterminated scalar arguments of a Python op", token)
            depth += (token.kind in "([{") - (token.kind in ")]}")
            if token.kind == "," and depth == 0:
                pieces.append(self.text[piece_start:token.range.start].strip())
                piece_start = token.range.end
        end = self.next().range.start
        if self.text[start:end].strip():
            pieces.append(self.text[piece_start:end].strip())
        node.ss_(PYTHON_OP_SCALARS, pieces)

    def scope(self, node) -> None:
        """`, scope: __module.l1/aten::linear` after the inputs: the rest of the line up to a comment."""
        if self.cur().kind != "," or self.tokens.lookahead().text != "scope":
            return
        self.next()
        self.next()
        start = self.expect(":").range.end
        line_end = self.text.find("\n", start)
        line_end = len(self.text) if line_end == -1 else line_end
        comment = self.text.find(" # ", start, line_end)
        end = line_end if comment == -1 else comment
        node.scope = self.text[start:end].strip()
        self.skip_to(end)

    # ---- attributes ------------------------------------------------------------------------------------
    def attributes(self, node) -> None:
        self.comma_list("[", "]", lambda: self.attribute(node))

    def attribute(self, node) -> None:
        name = attribute_symbol(self.joined_name())
        self.expect("=")
        declared = _declared_type(node, name)
        kind, value = self.literal(declared)
        if declared is not None and kind in _CONTAINER_KINDS:
            kind = "ival"  # constants hold lists as IValues (tsjit.ir.constants)
        getattr(node, ATTRIBUTE_SETTERS[kind])(name, value)

    def literal(self, declared: Any = None) -> tuple[str, Any]:
        """One attribute value or element: (attribute kind, Python value). `declared` is the type the value
        is known to have, from a constant's output type or an enclosing `annotate` or container."""
        token = self.cur()
        tensor = self.tensor_literal(declared)
        if tensor is not None:
            return "t", tensor
        if token.kind == TK_STRINGLITERAL:
            return "s", self.string()
        if token.kind in (TK_TRUE, TK_FALSE, TK_NONE):
            self.next()
            return "ival", {TK_TRUE: True, TK_FALSE: False, TK_NONE: None}[token.kind]
        if token.kind == TK_NONE_TYPE or (token.kind == "(" and declared is None and self.type_follows()):
            return "ty", self.parse_type()
        if token.kind in "[({<":
            with self.tokens.nested():
                return {"[": self.list_literal, "(": self.tuple_literal, "{": self.dict_literal,
                        "<": self.graph_placeholder}[token.kind](declared)
        if token.kind in (TK_NUMBER, "-") or token.text in ("nan", "inf", "nanj", "infj"):
            return _as_declared_number(*self.number(), declared)
        if token.kind == TK_IDENT:
            return self.named_literal(declared)
        raise self.error(f"expected an attribute value but found '{token.text}'")

    def type_follows(self) -> bool:
        """Whether `(` opens a tuple type (`types=[(int, str)]`) rather than a tuple value: values never start
        with a name other than nan, inf, annotate or torch."""
        after = self.tokens.lookahead()
        return after.kind == TK_NONE_TYPE or (after.kind == TK_IDENT and after.text not in _VALUE_WORDS)

    def named_literal(self, declared: Any) -> tuple[str, Any]:
        """Literals starting with a name: `annotate(T, v)`, `torch.device("cpu")`, an enum member, a type."""
        if self.is_word("annotate") and self.tokens.lookahead().kind == "(":
            return self.annotated()
        if self.is_word("torch") and self.tokens.lookahead().kind == ".":
            return self.device()
        if isinstance(declared, types.EnumType):
            return "ival", self.enum_member(declared)
        return "ty", self.parse_type()

    def tensor_literal(self, declared: Any) -> Any:
        """A tensor at the current token, read from the raw text: `{2.5}`, `<Tensor>` or an inline print."""
        start = self.cur().range.start
        end = _tensor_literal_end(self.text, start)
        if end is None:
            return None
        try:
            tensor = parse_tensor(self.text[start:end], declared)
        except (ValueError, RuntimeError) as error:
            raise self.error(f"invalid tensor constant ({error})") from None
        self.skip_to(end)
        return tensor

    def string(self) -> str:
        token = self.next()
        try:
            return _unquote(token.text)
        except ValueError as error:
            raise self.error(str(error), token) from None

    def number(self) -> tuple[str, Any]:
        # 3, -3, 2., 1e+20, -inf, nan, and complex: 2.+1.j, 1.5-2.j, nan+infj, 1.-nanj
        real = self.real_number()
        after = self.cur()
        if after.kind in "+-" and after.range.start == self.previous_end and self.imaginary_follows():
            sign = -1.0 if self.next().kind == "-" else 1.0
            return "c", complex(float(real.real), sign * self.real_number(imaginary=True))
        if isinstance(real, complex):
            return "c", real
        return ("f" if isinstance(real, float) else "i"), real

    def imaginary_follows(self) -> bool:
        token = self.tokens.lookahead()
        return token.text.endswith("j") and (token.kind == TK_NUMBER or token.text in ("nanj", "infj"))

    def real_number(self, imaginary: bool = False) -> Any:
        negative = self.next_if("-")
        token = self.next()
        self.previous_end = token.range.end
        text = token.text
        if text.endswith("j") and not imaginary:
            return complex(0.0, _parse_float(text[:-1], negative))
        if imaginary:
            if not text.endswith("j"):
                raise self.error("expected the imaginary part of a complex number", token)
            return _parse_float(text[:-1], negative)
        if token.kind != TK_NUMBER and text not in ("nan", "inf"):
            raise self.error("expected a number", token)
        if any(c in text for c in ".eE") or text in ("nan", "inf"):
            return _parse_float(text, negative)
        try:
            return -int(text) if negative else int(text)
        except ValueError:
            raise self.error(f"invalid integer {text}", token) from None

    def list_literal(self, declared: Any) -> tuple[str, Any]:
        # [1, 2] is an `is` attribute, [1., 2.] `fs`, ["a"] `ss`, [int, Tensor] `tys`; [<Tensors>] and
        # [<Graphs>] stand for tensor and graph lists whose contents PyTorch does not print
        for placeholder, kind in (("[<Tensors>]", "ts"), ("[<Graphs>]", "gs")):
            if self.text.startswith(placeholder, self.cur().range.start):
                self.skip_to(self.cur().range.start + len(placeholder))
                return kind, []
        element = declared.elem if isinstance(declared, types.ListType) else None
        elements = self.comma_list("[", "]", lambda: self.literal(element))
        kinds = {kind for kind, _ in elements}
        values = [value for _, value in elements]
        if kinds == {"i", "f"}:  # a float list prints 1e10 as `10000000000`
            kinds, values = {"f"}, [float(v) for v in values]
        if len(kinds) == 1 and kinds <= _LIST_KINDS.keys() and not any(isinstance(v, bool) for v in values):
            return _LIST_KINDS[kinds.pop()], values
        return "ival", values

    def tuple_literal(self, declared: Any) -> tuple[str, Any]:
        elements = declared.elements if isinstance(declared, types.TupleType) else ()
        self.expect("(")
        values: list[Any] = []
        while self.cur().kind != ")":
            values.append(self.literal(elements[len(values)] if len(values) < len(elements) else None)[1])
            if not self.next_if(","):
                break
        self.expect(")")
        return "ival", tuple(values)

    def dict_literal(self, declared: Any) -> tuple[str, Any]:
        is_dict = isinstance(declared, types.DictType)
        key_type, value_type = (declared.key, declared.value) if is_dict else (None, None)

        def entry() -> tuple[Any, Any]:
            key = self.literal(key_type)[1]
            self.expect(":")
            return key, self.literal(value_type)[1]

        return "ival", dict(self.comma_list("{", "}", entry))

    def graph_placeholder(self, declared: Any) -> tuple[str, Any]:
        """`<Graph>`: a graph attribute PyTorch does not print (it reads back as an empty graph)."""
        self.expect("<")
        if not self.is_word("Graph"):
            raise self.error("expected <Graph> or <Tensor>")
        self.next()
        self.expect(">")
        return "g", Graph()

    def annotated(self) -> tuple[str, Any]:
        # annotate(List[int], [])   annotate(Dict[str, Optional[int]],{"a": None})
        self.next()
        self.expect("(")
        declared = self.parse_type(dialect="annotation")
        self.expect(",")
        _, value = self.literal(declared)
        self.expect(")")
        element = declared.elem if isinstance(declared, types.ListType) else None
        return _TYPED_LIST_KINDS.get(type(element), "ival"), value

    def device(self) -> tuple[str, Any]:
        self.next()
        self.expect(".")
        if not self.is_word("device"):
            raise self.error("expected torch.device")
        self.next()
        self.expect("(")
        token = self.cur()
        name = self.string()
        self.expect(")")
        try:
            return "ival", torch.device(name)
        except RuntimeError as error:
            raise self.error(f"invalid device {name!r} ({error})", token) from None

    def enum_member(self, enum_type: Any) -> EnumValue:
        # %2 : Enum<__torch__.Color> = prim::Constant[value=__torch__.Color.RED]()
        token = self.cur()
        qualified = self.joined_name()
        owner, _, name = qualified.rpartition(".")
        members = dict(enum_type.names_values)
        if owner != enum_type.qualified_name or (members and name not in members):
            raise self.error(f"{qualified} is not a member of {enum_type.qualified_name}", token)
        return EnumValue(enum_type, name, members.get(name))

    # ---- types -----------------------------------------------------------------------------------------
    def parse_type(self, dialect: str = "ir") -> Any:
        self.cur()
        return self.type_parsers[dialect].parse_type()


# ---------------------------------------------------------------------------------------------------- helpers

def _layout_free_lexer(source: Source) -> Lexer:
    """A TorchScript lexer that never emits NEWLINE/INDENT/DEDENT: the IR's indentation cannot be lexed
    Python-style (`   = prim::Print(%x)` after a node with blocks dedents to a column never indented to),
    so layout tokens are switched off."""
    return Lexer(source, layout=False)


def _keep_named_types(parser: TypeParser, class_types: dict[str, Any]) -> None:
    """Record the class, enum and interface types the text named but `class_types` lacked."""
    for name, named_type in parser.placeholders.items():
        class_types.setdefault(name, named_type)


def _with_position(error: SourceParseError) -> SourceParseError:
    """The error with `(line L, column C)` added to its message."""
    source_range: SourceRange = error.source_range
    if source_range is None or "(line " in error.message:
        return error
    line, column = source_range.line_col()
    return SourceParseError(f"{error.message} (line {line}, column {column + 1})", source_range)


def _tensor_literal_end(text: str, start: int) -> int | None:
    """Where a tensor literal starting at `start` ends, or None if there is none there."""
    if text.startswith(ELIDED_TENSOR, start):
        return start + len(ELIDED_TENSOR)
    scalar = _SCALAR_TENSOR.match(text, start)
    if scalar:
        return scalar.end()
    return _inline_tensor_end(text, start)


def _inline_tensor_end(text: str, start: int) -> int | None:
    """An inline print is words of `_TENSOR_WORD` up to its `[ CPUFloatType{2} ]` suffix."""
    position = start
    while True:
        while text.startswith(" ", position):
            position += 1
        if text.startswith("[ ", position):
            return find_inline_tensor_end(text, position)
        word_end = text.find(" ", position)
        word_end = len(text) if word_end == -1 else word_end
        if word_end == position or not _TENSOR_WORD.fullmatch(text, position, word_end):
            return None
        position = word_end


def _parse_float(text: str, negative: bool) -> float:
    value = float(text)
    return -value if negative else value


def _unquote(literal: str) -> str:
    """The value of a string as c10::printQuotedString writes it: C escapes, and three-character octal
    escapes whose digits may be *below* `0` (`\\0)+` is the signed char -61, the UTF-8 byte C3)."""
    body, out, i = literal[1:-1], bytearray(), 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out += char.encode("utf-8")
            i += 1
        elif body[i + 1:i + 2] in _SIMPLE_ESCAPES:
            out.append(_SIMPLE_ESCAPES[body[i + 1]])
            i += 2
        elif len(body) >= i + 4 and all(c in _OCTAL_DIGITS for c in body[i + 1:i + 4]):
            d0, d1, d2 = (ord(c) - ord("0") for c in body[i + 1:i + 4])
            out.append((d0 * 64 + d1 * 8 + d2) % 256)
            i += 4
        else:
            raise ValueError(f"invalid escape sequence in string {literal}")
    try:
        return out.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"string {literal} is not UTF-8 ({error.reason})") from None


def _declared_type(node, name: Symbol) -> Any:
    """A constant's output type, which says what its `value` attribute holds."""
    if node.kind is prim.Constant and name.name == "value" and len(node.outputs) == 1:
        return node.outputs[0].type
    return None


def _as_declared_number(kind: str, value: Any, declared: Any) -> tuple[str, Any]:
    """A float printed without a dot (1e16 prints as `10000000000000000`) is still a float where the type
    says so; likewise a complex number printed as a real one."""
    if kind == "i" and isinstance(declared, types.FloatType):
        return "f", float(value)
    if kind in ("i", "f") and isinstance(declared, types.ComplexType):
        return "c", complex(value)
    return kind, value


def _restore_numbers(graph: Graph, state: _GraphState) -> None:
    """Values printed as `%5` get the unique number 5 back, so the graph prints as it was read; every other
    value is numbered after them, and so are values created later."""
    graph._unique = max(state.numbered.values(), default=-1) + 1
    for value in state.created:
        if value in state.numbered:
            value.unique = state.numbered[value]
        else:
            value.unique = graph._next_unique()
