"""The Python-AST frontend: a Python function or class to Trees (TorchScript's torch/jit/frontend.py).

    definition = get_jit_def(fn)              # Def, from the function's source (via inspect, then ast)
    class_def = get_jit_class_def(cls)        # ClassDef with methods, class-level assignments, properties
    definitions = build_definitions(text)     # every top-level def/class of a source string

It builds the same trees as the text parser (parser.py) for the same source, through the same tree-view
`create` methods; tests check the two against each other. Where the two TorchScript frontends diverge, this
one follows Python, as torch.jit.script does: `a or b and c` is `a or (b and c)`, `a < b < c` is
`a < b and b < c`, `~a + b` is `(~a) + b`. The shared normalizations are listed in parser.py.

Ranges point into the real file: the Source is the function's original (indented) text with its file name and
first line, so errors print `File "model.py", line 12` and underline the offending code. Python syntax
TorchScript lacks is rejected with TorchScript's wording ("try blocks aren't supported") and the span of the
construct underlined; decorators are skipped (their effect is the caller's business: tsjit.ignore, ...).
"""

from __future__ import annotations

import ast
import functools
import inspect
import types
import warnings
from collections.abc import Callable, Sequence

from tsjit.errors import CompileError, SourceParseError
from tsjit.frontend.example_types import recorded_types, with_parameter_types
from tsjit.frontend.parser import Parser, fold_unary_minus, merge_types_from_type_comment
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
    Ident,
    If,
    ListComp,
    ListLiteral,
    NoneLiteral,
    Param,
    Pass,
    Property,
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
)
from tsjit.source import lexer as lx
from tsjit.source.source_range import Source, SourceRange

RESERVED_PREFIX = "__jit"
IMPORT_FORM = RESERVED_PREFIX + "_import"  # the special form an import statement becomes (special_forms.emit_import)
VARARG_KWARG_MESSAGE = ("Compiled functions can't take variable number of arguments or use keyword-only "
                        "arguments with defaults")

# ast node type -> (what the error calls it, the keyword starting it or "" to underline the whole node)
UNSUPPORTED_NODES: dict[type, tuple[str, str]] = {
    ast.FunctionDef: ("function definitions", "def"),
    ast.ClassDef: ("class definitions", "class"),
    ast.AsyncFunctionDef: ("async function definitions", "async def"),
    ast.AsyncFor: ("async for loops", "async for"),
    ast.AsyncWith: ("async with statements", "async with"),
    ast.Try: ("try blocks", "try"),
    ast.Global: ("global variables", "global"),
    ast.Nonlocal: ("nonlocal variables", "nonlocal"),
    ast.Match: ("match statements", "match"),
    ast.AnnAssign: ("annotated assignments", ""),
    ast.Lambda: ("lambda expressions", ""),
    ast.NamedExpr: ("assignment expressions", ""),
    ast.Set: ("set literals", ""),
    ast.SetComp: ("set comprehensions", ""),
    ast.Yield: ("yield expressions", ""),
    ast.YieldFrom: ("yield expressions", ""),
    ast.Await: ("await expressions", ""),
}
if hasattr(ast, "TryStar"):
    UNSUPPORTED_NODES[ast.TryStar] = ("try blocks", "try")

BINARY_OPS = {
    ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.Pow: lx.TK_POW, ast.Mod: "%",
    ast.FloorDiv: lx.TK_FLOOR_DIV, ast.BitAnd: "&", ast.BitXor: "^", ast.BitOr: "|", ast.LShift: lx.TK_LSHIFT,
    ast.RShift: lx.TK_RSHIFT, ast.MatMult: "@",
}
AUG_ASSIGN_OPS = {op: kind for op, kind in BINARY_OPS.items() if op not in (ast.FloorDiv, ast.MatMult)}
UNARY_OPS = {ast.Not: lx.TK_NOT, ast.Invert: "~", ast.USub: lx.TK_UNARY_MINUS}
BOOL_OPS = {ast.And: lx.TK_AND, ast.Or: lx.TK_OR}
COMPARE_OPS = {
    ast.Eq: lx.TK_EQ, ast.NotEq: lx.TK_NE, ast.Lt: "<", ast.LtE: lx.TK_LE, ast.Gt: ">", ast.GtE: lx.TK_GE,
    ast.Is: lx.TK_IS, ast.IsNot: lx.TK_ISNOT, ast.In: lx.TK_IN, ast.NotIn: lx.TK_NOTIN,
}


# ---------------------------------------------------------------------------------------------------------------
# entry points


def _bounded_recursion(build: Callable) -> Callable:
    """Deeply nested code exhausts Python's recursion (in ast.parse or here): report it as a CompileError."""

    @functools.wraps(build)
    def guarded(*args, **kwargs):
        try:
            return build(*args, **kwargs)
        except RecursionError:
            raise CompileError("program is nested too deeply to compile") from None

    return guarded


@_bounded_recursion
def get_jit_def(fn: Callable, def_name: str | None = None, self_name: str | None = None) -> Def:
    """The Def of a Python function (a method when self_name, its class's name, is given)."""
    context, module = _parse_object_source(fn)
    node = _single_definition(module, ast.FunctionDef, context)
    definition = _Builder(context).build_def(node, def_name, is_method=self_name is not None)
    types = recorded_types(fn)  # from `script(..., example_inputs=...)`
    return with_parameter_types(definition, types) if types else definition


@_bounded_recursion
def get_jit_class_def(cls: type, self_name: str | None = None) -> ClassDef:
    """The ClassDef of a Python class, named self_name if given (a qualified name, say)."""
    context, module = _parse_object_source(cls)
    node = _single_definition(module, ast.ClassDef, context)
    return _Builder(context).build_class_def(node, self_name)


@_bounded_recursion
def build_definitions(text: str, filename: str | None = None, starting_line: int = 1) -> list[Def | ClassDef]:
    """Every top-level def and class of a source text, like parser.parse_definitions, through Python's ast."""
    context, module = parse_source(Source(text, filename, starting_line))
    builder = _Builder(context)
    return [builder.build_definition(node) for node in module.body if not _is_docstring(node)]


def get_source(obj: object) -> Source:
    """The source text of a function or class, with its file and first line (decorators included)."""
    try:
        lines, first_line = _source_lines(obj)
        filename = inspect.getsourcefile(obj)
    except (OSError, TypeError) as error:
        raise CompileError(f"Can't get source for {obj!r}. TorchScript requires source access in order to carry "
                           "out compilation, make sure original .py files are available.") from error
    return Source("".join(lines), filename, max(first_line, 1))


def _source_lines(obj: object) -> tuple[list[str], int]:
    """What `inspect.getsourcelines(obj)` gives, for a function without tokenizing it. inspect finds where a
    definition ends by tokenizing its block (~3% of the encoder layer's first call: multi_head_attention_forward
    is 400 lines); a function's code object knows its last line. When what follows that line may still belong
    to the block (a trailing `pass` or `)` compiles to no instruction of its own), inspect decides."""
    function = inspect.unwrap(obj) if inspect.isfunction(obj) else obj
    if not inspect.isfunction(function) or function.__name__ == "<lambda>":
        return inspect.getsourcelines(obj)
    lines, start = inspect.findsource(function)
    end = _last_line(function.__code__)
    if end <= start or not _block_ends_after(lines, start, end):
        return inspect.getsourcelines(obj)
    return lines[start:end], start + 1


def _last_line(code: types.CodeType) -> int:
    """The last source line any instruction of `code` or of the code nested in it comes from."""
    last = max((end for _, end, _, _ in code.co_positions() if end is not None), default=code.co_firstlineno)
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType):
            last = max(last, _last_line(constant))
    return last


def _block_ends_after(lines: list[str], start: int, end: int) -> bool:
    """Whether the definition starting at index `start` of `lines` surely ends with line number `end`, as inspect
    would end it: the next line that is not blank is indented no deeper than the definition and closes no bracket,
    or is a comment that is not indented deeper (inspect takes those that are into the block)."""
    indent = len(lines[start]) - len(lines[start].lstrip())
    for line in lines[end:]:
        stripped = line.strip()
        if not stripped:
            continue
        if len(line) - len(line.lstrip()) > indent:
            return False
        if not stripped.startswith("#"):
            return stripped[0] not in ")]}"
    return True


def parse_source(source: Source) -> tuple[SourceContext, ast.Module]:
    """Python's ast of a Source, which may be indented (a method's source), and the context mapping positions.

    A lone carriage return ends a line for Python, so it becomes a newline here too, keeping lines aligned.
    """
    if "\r" in source.text.replace("\r\n", ""):
        text = source.text.replace("\r\n", "\n").replace("\r", "\n")
        source = Source(text, source.filename, source.starting_line)
    text = source.text
    first_code_line = next((line for line in text.splitlines() if line.strip()), "")
    indented = first_code_line[:1] in (" ", "\t")
    prefix_lines = 1 if indented else 0
    parse_text = "if 1:\n" + text if indented else text
    module = _parse_python(parse_text, source, prefix_lines)
    if indented:
        module.body = module.body[0].body
    return SourceContext(source, prefix_lines), module


# ---------------------------------------------------------------------------------------------------------------
# source positions


class SourceContext:
    """Turns ast positions (1-based lines, UTF-8 byte columns) into SourceRanges of one Source."""

    def __init__(self, source: Source, prefix_lines: int = 0):
        self.source = source
        self._first_ast_line = 1 + prefix_lines
        self._ascii = source.text.isascii()  # then byte columns are character columns: no line to look at

    def offset(self, lineno: int, col_offset: int) -> int:
        """The character offset in the Source of an ast position."""
        index = lineno - self._first_ast_line
        start = self.source.line_start(index)
        if self._ascii:
            return start + col_offset
        end = self.source.text.find("\n", start)
        line = self.source.text[start:] if end == -1 else self.source.text[start:end]
        return start + _char_column(line, col_offset)

    def span(self, start: int, end: int) -> SourceRange:
        return SourceRange(self.source, start, end)

    def range(self, node: ast.AST) -> SourceRange:
        """The whole extent of an ast node."""
        start = self.offset(node.lineno, node.col_offset)
        return self.span(start, self.offset(node.end_lineno, node.end_col_offset))

    def start_range(self, node: ast.AST, length: int) -> SourceRange:
        """`length` characters from the start of a node (its keyword, usually)."""
        start = self.offset(node.lineno, node.col_offset)
        return self.span(start, start + length)

    def text(self, node: ast.AST) -> str:
        return self.range(node).text()

    def find_between(self, word: str, start: int, end: int) -> SourceRange:
        """The first `word` in [start, end), or [start, end) itself if it is not there."""
        position = self.source.text.find(word, start, end)
        if position == -1:
            return self.span(start, end)
        return self.span(position, position + len(word))


def _char_column(line: str, byte_column: int) -> int:
    if line.isascii():
        return byte_column
    return len(line.encode("utf-8")[:byte_column].decode("utf-8", errors="ignore"))


def _parse_python(text: str, source: Source, prefix_lines: int) -> ast.Module:
    """ast.parse with type comments (retried without them: Python rejects some placements), warnings muted."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return ast.parse(text, type_comments=True)
        except SyntaxError:
            pass
        return _parse_python_plain(text, source, prefix_lines)


def _parse_python_plain(text: str, source: Source, prefix_lines: int) -> ast.Module:
    try:
        return ast.parse(text)
    except SyntaxError as error:
        raise _syntax_error(error, source, prefix_lines) from None
    except ValueError as error:
        raise SourceParseError(str(error), SourceRange(source, 0, len(source.text))) from None


def _syntax_error(error: SyntaxError, source: Source, prefix_lines: int) -> SourceParseError:
    """Python's SyntaxError as a SourceParseError pointing at the same place of the Source."""
    last_line = source.line_index(len(source.text))
    line_index = min(max((error.lineno or 1) - 1 - prefix_lines, 0), last_line)
    start = min(source.line_start(line_index) + max((error.offset or 1) - 1, 0), len(source.text))
    message = "invalid syntax" if error.msg == "invalid syntax" else f"invalid syntax ({error.msg})"
    return SourceParseError(message, SourceRange(source, start, start + 1))


def _parse_object_source(obj: object) -> tuple[SourceContext, ast.Module]:
    return parse_source(get_source(obj))


def _single_definition(module: ast.Module, kind: type, context: SourceContext) -> ast.AST:
    if len(module.body) != 1 or not isinstance(module.body[0], kind):
        what = "function" if kind is ast.FunctionDef else "class"
        raise CompileError(f"Expected a single top-level {what}", context.span(0, len(context.source.text)))
    return module.body[0]


def _is_docstring(node: ast.AST) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def unsupported(context: SourceContext, node: ast.AST, reason: str = "") -> CompileError:
    """TorchScript's "X aren't supported" error, underlining the construct's keyword or, lacking one, all of it."""
    name, keyword = UNSUPPORTED_NODES.get(type(node), (type(node).__name__, ""))
    where = context.start_range(node, len(keyword)) if keyword else context.range(node)
    return CompileError(f"{name} {reason + ' ' if reason else ''}aren't supported", where)


# ---------------------------------------------------------------------------------------------------------------
# the builder


class _Builder:
    """Builds trees from ast nodes of one source; `build_<NodeType>` methods handle each kind of node."""

    def __init__(self, context: SourceContext):
        self.context = context
        self.function_name: str | None = None
        self.in_class = False

    # definitions -----------------------------------------------------------------------------------------------

    def build_definition(self, node: ast.AST) -> Def | ClassDef:
        if isinstance(node, ast.FunctionDef):
            return self.build_def(node)
        if isinstance(node, ast.ClassDef):
            return self.build_class_def(node)
        raise unsupported(self.context, node, "at the top level")

    def build_def(self, node: ast.FunctionDef, def_name: str | None = None, is_method: bool = False) -> Def:
        keyword = self.context.start_range(node, len("def"))
        name = def_name or node.name
        decl = self._build_decl(node, keyword)
        if node.type_comment is not None:
            decl = merge_types_from_type_comment(decl, self._signature_comment(node), is_method)
        outer, self.function_name = self.function_name, name
        body = self._build_stmts(node.body)
        self.function_name = outer
        return Def.create(keyword, Ident.create(self._name_range(node, keyword), name), decl, body)

    def build_class_def(self, node: ast.ClassDef, self_name: str | None = None) -> ClassDef:
        keyword = self.context.start_range(node, len("class"))
        superclass = self._build_superclass(node)
        properties = _PropertyCollector(self)
        body = []
        for statement in node.body:
            if not properties.take(statement):
                body.append(self._build_class_stmt(statement))
        name = Ident.create(self._name_range(node, keyword), self_name or node.name)
        return ClassDef.create(keyword, name, superclass, _present(body), properties.build())

    def _build_class_stmt(self, node: ast.stmt) -> Stmt | None:
        if isinstance(node, ast.FunctionDef):
            return self.build_def(node, is_method=True)
        self.in_class = True
        try:
            return self.build_stmt(node)
        finally:
            self.in_class = False

    def _build_superclass(self, node: ast.ClassDef) -> Expr | None:
        if node.keywords:
            raise CompileError("class keyword arguments (metaclass=...) aren't supported",
                               self.context.range(node.keywords[0]))
        if len(node.bases) > 1:
            raise CompileError("multiple inheritance isn't supported", self.context.range(node.bases[1]))
        return self.build_expr(node.bases[0]) if node.bases else None

    def _name_range(self, node: ast.FunctionDef | ast.ClassDef, keyword: SourceRange) -> SourceRange:
        line_end = self.context.source.text.find("\n", keyword.end)
        line_end = len(self.context.source.text) if line_end == -1 else line_end
        return self.context.find_between(node.name, keyword.end, line_end)

    def _build_decl(self, node: ast.FunctionDef, keyword: SourceRange) -> Decl:
        arguments = node.args
        self._reject_variadic(arguments)
        positional = [*arguments.posonlyargs, *arguments.args]
        defaults = [None] * (len(positional) - len(arguments.defaults)) + list(arguments.defaults)
        params = [self._build_param(arg, default, False) for arg, default in zip(positional, defaults)]
        params += [self._build_param(arg, default, True) for arg, default in zip(arguments.kwonlyargs,
                                                                                  arguments.kw_defaults)]
        return_type = self.build_expr(node.returns) if node.returns is not None else None
        return Decl.create(keyword, params, return_type)

    def _reject_variadic(self, arguments: ast.arguments) -> None:
        for arg, stars in ((arguments.vararg, "*"), (arguments.kwarg, "**")):
            if arg is not None:
                name = self.context.start_range(arg, len(arg.arg))
                raise CompileError(VARARG_KWARG_MESSAGE, self.context.span(name.start - len(stars), name.end))

    def _build_param(self, arg: ast.arg, default: ast.expr | None, kwarg_only: bool) -> Param:
        if arg.type_comment is not None:
            raise CompileError("per-argument type comments aren't supported; annotate the def instead",
                               self.context.range(arg))
        name = Ident.create(self.context.start_range(arg, len(arg.arg)), arg.arg)
        type = self.build_expr(arg.annotation) if arg.annotation is not None else None
        value = self.build_expr(default) if default is not None else None
        return Param.create(self.context.range(arg), name, type, value, kwarg_only)

    def _signature_comment(self, node: ast.FunctionDef) -> Decl:
        """The `# type: (...) -> ...` comment of a def, parsed where it stands in the file."""
        start = self.context.offset(node.lineno, node.col_offset)
        end = self.context.offset(node.body[0].lineno, node.body[0].col_offset)
        return self._comment_parser(start, end, node.type_comment).parse_type_comment()

    def _comment_parser(self, start: int, end: int, comment: str) -> Parser:
        """A Parser over the `# type:` comment saying `comment` in [start, end) of the source."""
        text = self.context.source.text
        position = text.find("# type:", start, end)
        while position != -1 and text[position + len("# type:"):].split("\n", 1)[0].strip() != comment.strip():
            position = text.find("# type:", position + 1, end)
        if position == -1:
            raise CompileError("could not locate the type comment", self.context.span(start, end))
        line_index = self.context.source.line_index(position)
        column = position - self.context.source.line_start(line_index)
        line = text[position:].split("\n", 1)[0]
        starting_line = self.context.source.starting_line + line_index
        return Parser(Source(" " * column + line, self.context.source.filename, starting_line))

    # statements ------------------------------------------------------------------------------------------------

    def _build_stmts(self, nodes: Sequence[ast.stmt]) -> list[Stmt]:
        built = [self.build_stmt(node) for node in nodes]
        return _present([s for stmt in built for s in (stmt if isinstance(stmt, list) else [stmt])])

    def build_stmt(self, node: ast.stmt) -> Stmt | None:
        method = getattr(self, "build_" + type(node).__name__, None)
        if method is None:
            raise unsupported(self.context, node)
        return method(node)

    def build_Import(self, node: ast.Import) -> list[Stmt]:
        """`import a.b` binds `a`, `import a.b as c` binds `c` to `a.b` (torch.jit refuses import statements):
        assignments of IMPORT_FORM's result, the module found when the function compiles."""
        return [self._import_binding(node, alias.asname or alias.name.split(".")[0],
                                     alias.name if alias.asname else alias.name.split(".")[0], None)
                for alias in node.names]

    def build_ImportFrom(self, node: ast.ImportFrom) -> list[Stmt]:
        """`from .m import a as b` binds `b` to attribute (or submodule) `a` of module `.m`."""
        module = "." * node.level + (node.module or "")
        if any(alias.name == "*" for alias in node.names):
            raise CompileError("import * isn't supported", self._keyword(node, "from"))
        return [self._import_binding(node, alias.asname or alias.name, module, alias.name) for alias in node.names]

    def _import_binding(self, node: ast.stmt, name: str, module: str, attribute: str | None) -> Stmt:
        where = self.context.range(node)
        arguments = [StringLiteral.create(where, module)] + ([StringLiteral.create(where, attribute)] if attribute
                                                              else [])
        value = Apply.create(where, Var.create(where, Ident.create(where, IMPORT_FORM)), arguments)
        return Assign.create(where, [Var.create(where, Ident.create(where, name))], value)

    def build_Expr(self, node: ast.Expr) -> Stmt | None:
        """An expression statement; a lone string (a docstring) is dropped."""
        if _is_docstring(node):
            return None
        return ExprStmt.create(self.context.range(node), self.build_expr(node.value))

    def build_Assign(self, node: ast.Assign) -> Stmt:
        """`a = b = value`; a `# type:` comment on it is ignored, as torch.jit does."""
        targets = [self.build_expr(target) for target in node.targets]
        value = self.build_expr(node.value)
        return Assign.create(self.context.span(targets[0].range.start, value.range.end), targets, value)

    def build_AnnAssign(self, node: ast.AnnAssign) -> Stmt:
        if node.value is None and not self.in_class:
            raise unsupported(self.context, node, "without assigned value")
        self._check_instance_attribute_annotation(node)
        value = self.build_expr(node.value) if node.value is not None else None
        target = self.build_expr(node.target)
        return Assign.create(self.context.range(node), [target], value, self.build_expr(node.annotation))

    def _check_instance_attribute_annotation(self, node: ast.AnnAssign) -> None:
        target = node.target
        is_self_attribute = isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
            and target.value.id == "self"
        if is_self_attribute and self.function_name != "__init__":
            raise CompileError("Type annotations on instance attributes must be declared in __init__, not "
                               f"'{self.function_name}'", self.context.range(node))

    def build_AugAssign(self, node: ast.AugAssign) -> Stmt:
        op = AUG_ASSIGN_OPS.get(type(node.op))
        if op is None:
            start = self.context.offset(node.target.end_lineno, node.target.end_col_offset)
            symbol = {ast.FloorDiv: "//=", ast.MatMult: "@="}[type(node.op)]
            where = self.context.find_between(symbol, start, self.context.range(node.value).start)
            raise CompileError(f"unsupported kind of augmented assignment: {type(node.op).__name__}", where)
        lhs = self.build_expr(node.target)
        return AugAssign.create(self.context.range(node), lhs, op, self.build_expr(node.value))

    def build_Delete(self, node: ast.Delete) -> Stmt:
        targets = [self.build_expr(target) for target in node.targets]
        return Delete.create(self._keyword(node, "del"), targets)

    def build_Return(self, node: ast.Return) -> Stmt:
        value = self.build_expr(node.value) if node.value is not None else None
        return Return.create(self._keyword(node, "return"), value)

    def build_Raise(self, node: ast.Raise) -> Stmt:
        """`raise E`; a cause (`from e`) is dropped, a bare `raise` rejected, as in the text parser."""
        keyword = self._keyword(node, "raise")
        if node.exc is None:
            raise CompileError("raise statements without an exception aren't supported", keyword)
        return Raise.create(keyword, self.build_expr(node.exc))

    def build_Assert(self, node: ast.Assert) -> Stmt:
        message = self.build_expr(node.msg) if node.msg is not None else None
        return Assert.create(self._keyword(node, "assert"), self.build_expr(node.test), message)

    def build_While(self, node: ast.While) -> Stmt:
        self._reject_loop_else(node, "while")
        return While.create(self._keyword(node, "while"), self.build_expr(node.test), self._build_stmts(node.body))

    def build_For(self, node: ast.For) -> Stmt:
        self._reject_loop_else(node, "for")
        target, iterable = self.build_expr(node.target), self.build_expr(node.iter)
        return For.create(self._keyword(node, "for"), [target], [iterable], self._build_stmts(node.body))

    def _reject_loop_else(self, node: ast.While | ast.For, loop: str) -> None:
        if node.orelse:
            body_end = self.context.offset(node.body[-1].end_lineno, node.body[-1].end_col_offset)
            else_start = self.context.range(node.orelse[0]).start
            where = self.context.find_between("else", body_end, else_start)
            raise CompileError(f"else branches of {loop} loops aren't supported", where)

    def build_If(self, node: ast.If) -> Stmt:
        keyword = self._keyword(node, "if")
        true_branch, false_branch = self._build_stmts(node.body), self._build_stmts(node.orelse)
        return If.create(keyword, self.build_expr(node.test), true_branch, false_branch)

    def build_With(self, node: ast.With) -> Stmt:
        items = [self._build_with_item(item) for item in node.items]
        return With.create(self._keyword(node, "with"), items, self._build_stmts(node.body))

    def _build_with_item(self, item: ast.withitem) -> WithItem:
        target = self.build_expr(item.context_expr)
        variable = item.optional_vars
        if variable is None:
            return WithItem.create(target.range, target)
        if not isinstance(variable, ast.Name):
            raise CompileError("with-statement targets must be simple names", self.context.range(variable))
        return WithItem.create(target.range, target, self.build_expr(variable))

    def build_Pass(self, node: ast.Pass) -> Stmt:
        return Pass.create(self._keyword(node, "pass"))

    def build_Break(self, node: ast.Break) -> Stmt:
        return Break.create(self._keyword(node, "break"))

    def build_Continue(self, node: ast.Continue) -> Stmt:
        return Continue.create(self._keyword(node, "continue"))

    def _keyword(self, node: ast.AST, keyword: str) -> SourceRange:
        return self.context.start_range(node, len(keyword))

    # expressions -----------------------------------------------------------------------------------------------

    def build_expr(self, node: ast.expr) -> Expr:
        method = getattr(self, "expr_" + type(node).__name__, None)
        if method is None:
            raise unsupported(self.context, node)
        return method(node)

    def _exprs(self, nodes: Sequence[ast.expr]) -> list[Expr]:
        return [self.build_expr(node) for node in nodes]

    def expr_Name(self, node: ast.Name) -> Expr:
        where = self.context.range(node)
        if node.id.startswith(RESERVED_PREFIX):
            raise CompileError(f"names of variables used in JIT-ed functions can't start with {RESERVED_PREFIX}",
                               where)
        if node.id == "Ellipsis":
            return Dots.create(where)
        return Var.create(where, Ident.create(where, node.id))

    def expr_Constant(self, node: ast.Constant) -> Expr:
        where, value = self.context.range(node), node.value
        if value is None or isinstance(value, bool):
            return {None: NoneLiteral, True: TrueLiteral, False: FalseLiteral}[value].create(where)
        if isinstance(value, (int, float, complex)):
            return Const.create(where, self.context.text(node))
        if isinstance(value, str):
            return StringLiteral.create(where, value)
        if value is Ellipsis:
            return Dots.create(where)
        raise CompileError(f"{type(value).__name__} literals aren't supported", where)

    def expr_JoinedStr(self, node: ast.JoinedStr) -> Expr:
        """An f-string is `"...{}...".format(values)`, as in torch.jit."""
        template, values = [], []
        for part in node.values:
            if isinstance(part, ast.Constant):
                template.append(part.value.replace("{", "{{").replace("}", "}}"))
                continue
            self._check_formatted_value(part)
            template.append("{}")
            values.append(self._converted(part))
        where = self.context.range(node)
        method = Select.create(where, StringLiteral.create(where, "".join(template)), Ident.create(where, "format"))
        return Apply.create(where, method, values)

    def _converted(self, part: ast.FormattedValue) -> Expr:
        """`{x}`, and `{x!s}` / `{x!r}` as `str(x)` / `repr(x)` (torch.jit supports no conversion)."""
        value = self.build_expr(part.value)
        if part.conversion == -1:
            return value
        convert = {ord("s"): "str", ord("r"): "repr"}[part.conversion]
        return Apply.create(value.range, Var.create(value.range, Ident.create(value.range, convert)), [value])

    def _check_formatted_value(self, part: ast.FormattedValue) -> None:
        if part.conversion == ord("a"):
            raise CompileError("Don't support conversion !a in JoinedStr", self.context.range(part))
        if part.format_spec is not None:
            raise CompileError("Don't support formatting in JoinedStr", self.context.range(part))

    def expr_Attribute(self, node: ast.Attribute) -> Expr:
        end = self.context.offset(node.end_lineno, node.end_col_offset)
        selector = Ident.create(self.context.span(end - len(node.attr), end), node.attr)
        return Select.create(self.context.range(node), self.build_expr(node.value), selector)

    def expr_Call(self, node: ast.Call) -> Expr:
        callee = self.build_expr(node.func)
        attributes = [self._build_keyword(keyword) for keyword in node.keywords]
        return Apply.create(self.context.range(node), callee, self._exprs(node.args), attributes)

    def _build_keyword(self, keyword: ast.keyword) -> Attribute:
        if keyword.arg is None:
            raise CompileError("keyword-arg expansion is not supported", self.context.range(keyword))
        name = Ident.create(self.context.start_range(keyword, len(keyword.arg)), keyword.arg)
        return Attribute.create(self.context.range(keyword), name, self.build_expr(keyword.value))

    def expr_BinOp(self, node: ast.BinOp) -> Expr:
        op = BINARY_OPS.get(type(node.op))
        lhs, rhs = self.build_expr(node.left), self.build_expr(node.right)
        if op is None:
            raise CompileError(f"unsupported binary operator: {type(node.op).__name__}",
                               self.context.span(lhs.range.end, rhs.range.start))
        return BinOp.create(self.context.range(node), op, lhs, rhs)

    def expr_UnaryOp(self, node: ast.UnaryOp) -> Expr:
        op = UNARY_OPS.get(type(node.op))
        where = self.context.range(node)
        if op is None:
            raise CompileError(f"unsupported unary operator: {type(node.op).__name__}", where)
        operand = self.build_expr(node.operand)
        if op == lx.TK_UNARY_MINUS:
            return fold_unary_minus(where, operand)
        return UnaryOp.create(where, op, operand)

    def expr_BoolOp(self, node: ast.BoolOp) -> Expr:
        """`a and b and c` is `(a and b) and c`."""
        values = self._exprs(node.values)
        result = values[0]
        for value in values[1:]:
            result = BinOp.create(self.context.range(node), BOOL_OPS[type(node.op)], result, value)
        return result

    def expr_IfExp(self, node: ast.IfExp) -> Expr:
        cond, true_expr, false_expr = self._exprs([node.test, node.body, node.orelse])
        return TernaryIf.create(self.context.range(node), cond, true_expr, false_expr)

    def expr_Compare(self, node: ast.Compare) -> Expr:
        """`a < b <= c` is `a < b and b <= c`; `a not in b` is `not (a in b)`."""
        operands = [self.build_expr(node.left)]
        operands += [self._compared(op, comparator) for op, comparator in zip(node.ops, node.comparators)]
        result = None
        for lhs, op, rhs in zip(operands, node.ops, operands[1:]):
            where = self.context.span(lhs.range.start, rhs.range.end)
            comparison = self._comparison(where, COMPARE_OPS[type(op)], lhs, rhs)
            result = comparison if result is None else BinOp.create(where, lx.TK_AND, result, comparison)
        return result

    def _compared(self, op: ast.cmpop, comparator: ast.expr) -> Expr:
        """A comparison's right operand. A set literal is only supported as the container of a membership test,
        `op_name in {"sum", "prod"}`, where it is a list literal: TorchScript has no sets, and for the values a
        list literal holds (numbers, strings, dtypes) membership by equality is what the set answers."""
        if isinstance(op, ast.In | ast.NotIn) and isinstance(comparator, ast.Set):
            return ListLiteral.create(self.context.range(comparator), self._exprs(comparator.elts))
        return self.build_expr(comparator)

    @staticmethod
    def _comparison(where: SourceRange, op: str, lhs: Expr, rhs: Expr) -> Expr:
        if op == lx.TK_NOTIN:
            return UnaryOp.create(where, lx.TK_NOT, BinOp.create(where, lx.TK_IN, lhs, rhs))
        return BinOp.create(where, op, lhs, rhs)

    def expr_Subscript(self, node: ast.Subscript) -> Expr:
        value, index = self.build_expr(node.value), node.slice
        if isinstance(index, ast.Tuple):
            subscripts = [self._build_subscript(element) for element in index.elts]
            subscripts = subscripts or [TupleLiteral.create(self.context.range(index), [])]
        else:
            subscripts = [self._build_subscript(index)]
        return Subscript.create(self.context.range(node), value, subscripts)

    def _build_subscript(self, node: ast.expr) -> Expr:
        if not isinstance(node, ast.Slice):
            return self.build_expr(node)
        parts = [None if part is None else self.build_expr(part) for part in (node.lower, node.upper, node.step)]
        return SliceExpr.create(self.context.range(node), *parts)

    def expr_Slice(self, node: ast.Slice) -> Expr:
        raise CompileError("slices are only supported inside subscripts", self.context.range(node))

    def expr_List(self, node: ast.List) -> Expr:
        return ListLiteral.create(self.context.range(node), self._exprs(node.elts))

    def expr_Tuple(self, node: ast.Tuple) -> Expr:
        return TupleLiteral.create(self.context.range(node), self._exprs(node.elts))

    def expr_Dict(self, node: ast.Dict) -> Expr:
        where = self.context.range(node)
        if any(key is None for key in node.keys):
            raise CompileError("Dict expansion (e.g. `{**dict}`) is not supported", where)
        return DictLiteral.create(where, self._exprs(node.keys), self._exprs(node.values))

    def expr_ListComp(self, node: ast.ListComp | ast.GeneratorExp) -> Expr:
        target, iterable, conditions = self._comprehension(node)
        return ListComp.create(self.context.range(node), self.build_expr(node.elt), target, iterable, conditions)

    expr_GeneratorExp = expr_ListComp

    def expr_DictComp(self, node: ast.DictComp) -> Expr:
        target, iterable, conditions = self._comprehension(node)
        key, value = self.build_expr(node.key), self.build_expr(node.value)
        return DictComp.create(self.context.range(node), key, value, target, iterable, conditions)

    def _comprehension(self, node: ast.ListComp | ast.GeneratorExp | ast.DictComp
                       ) -> tuple[Expr, Expr, list[Expr]]:
        """The target, iterable and conditions of a comprehension's single generator."""
        where = self.context.range(node)
        if len(node.generators) != 1:
            raise CompileError("Only a single generator is currently supported", where)
        generator = node.generators[0]
        if generator.is_async:
            raise CompileError("async comprehensions aren't supported", where)
        conditions = [self.build_expr(condition) for condition in generator.ifs]
        return self.build_expr(generator.target), self.build_expr(generator.iter), conditions

    def expr_Starred(self, node: ast.Starred) -> Expr:
        return Starred.create(self.context.range(node), self.build_expr(node.value))


class _PropertyCollector:
    """Gathers a class's `@property` getters and `@x.setter` setters into Property trees."""

    def __init__(self, builder: _Builder):
        self.builder = builder
        self.getters: dict[str, ast.FunctionDef] = {}
        self.setters: dict[str, ast.FunctionDef] = {}

    def take(self, node: ast.stmt) -> bool:
        """Whether `node` is a property accessor (now collected) rather than an ordinary class member."""
        if not isinstance(node, ast.FunctionDef):
            return False
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Name) and decorator.id == "property":
                self.getters[node.name] = node
                return True
            if isinstance(decorator, ast.Attribute) and decorator.attr == "setter":
                self.setters[node.name] = node
                return True
        return False

    def build(self) -> list[Property]:
        return [self._build_property(name, getter) for name, getter in self.getters.items()]

    def _build_property(self, name: str, getter: ast.FunctionDef) -> Property:
        getter_def = self.builder.build_def(getter, f"__{name}_getter", is_method=True)
        setter = self.setters.get(name)
        setter_def = None if setter is None else self.builder.build_def(setter, f"__{name}_setter", is_method=True)
        return Property.create(getter_def.range, Ident.create(getter_def.name.range, name), getter_def, setter_def)


def _present(statements: list[Stmt | None]) -> list[Stmt]:
    return [statement for statement in statements if statement is not None]
