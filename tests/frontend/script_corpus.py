"""TorchScript programs as source text, shared by the parser, Python-AST and fuzz tests.

PROGRAMS maps a name to a source text that is valid Python and valid TorchScript syntax, so the text parser and
the Python-AST frontend must build equal trees for it. Together they use every piece of syntax the frontends
accept. NORMALIZED names the programs whose trees deliberately differ from what torch's own text parser builds
(see tsjit/frontend/parser.py): tests comparing against torch skip them. programs_py_sources() adds the
functions of tests/ir/corpus/programs.py.
"""

from __future__ import annotations

import ast
import functools
import os

PROGRAMS = {
    "arithmetic": '''
def arithmetic(a: int, b: int, c: float) -> float:
    x = a + b - c * a / b % 3 // 2
    y = a ** b ** 2 - -a ** 2
    z = (a + b) * (c - a)
    return x + y + z
''',
    "bitwise": '''
def bitwise(a: int, b: int) -> int:
    return a & b | a ^ b & (~a) | a << 2 >> b
''',
    "matmul": '''
def matmul(x: Tensor, y: Tensor) -> Tensor:
    return x @ y @ x.t() + x * y
''',
    "comparisons": '''
def comparisons(a: int, b: int, xs: List[int]) -> bool:
    p = a < b
    q = a <= b and a >= b or a != b
    r = a == b or not a > b
    s = a in xs and b not in xs
    t = a is None or b is not None
    return p or q or r or s or t
''',
    "ternaries": '''
def ternaries(a: int) -> int:
    x = 1 if a > 0 else 2
    y = 1 if a == 0 else 2 if a == 1 else 3
    z = (1 if a else 2) + (3 if not a else 4)
    return x + y + z
''',
    "constants": '''
def constants() -> Tuple[int, float, complex, bool, str]:
    a = 0x1F + 0 + 17 - 1 + (-2)
    b = 1.5e-3 + .5 + 2. + 1E3
    c = 2j + 1.5j
    d = True and not False
    e = None
    return a, b, c, d, "x"
''',
    "strings": '''
def strings(s: str) -> str:
    a = "double" + 'single'
    b = "implicit " "concatenation " 'of three'
    c = """triple
quoted"""
    d = "escapes: \\n \\t \\\\ \\' \\""
    f = "ünïcödé"
    return a + b + c + d + f + s
''',
    "python_string_escapes": '''
def python_string_escapes() -> str:
    return "\\x41 \\u00e9 \\N{BULLET}" + r"raw \\d+" + u"unicode"
''',
    "calls": '''
def calls(x: Tensor, n: int) -> Tensor:
    y = torch.zeros([2, 3], dtype=torch.float)
    z = torch.cat([x, y], dim=0).relu().sum(dim=-1, keepdim=True)
    w = x.view(-1, n)[0].size(0)
    print(x, n, sep=", ")
    return F.softmax(z, dim=1) + w
''',
    "subscripts": '''
def subscripts(x: Tensor, xs: List[int], d: Dict[str, int]) -> Tensor:
    a = x[0] + x[-1] + x[1:2] + x[::2] + x[1:] + x[:-1] + x[:]
    b = x[0, 1] + x[:, 0] + x[..., 1] + x[None, :, None] + x[1:5:2, ::-1]
    c = xs[0] + xs[len(xs) - 1] + d["key"]
    e = x[0][1][2]
    return a + b + c + e
''',
    "displays": '''
def displays(a: int) -> Tuple[List[int], Dict[str, int], Tuple[int, int], Tuple[()]]:
    empty_list: List[int] = []
    empty_dict: Dict[str, int] = {}
    xs = [1, 2, a,]
    d = {"a": 1, "b": a}
    single = (a,)
    pair = (a, a + 1)
    nested = [[1, 2], [a]]
    return xs, d, pair, ()
''',
    "comprehensions": '''
def comprehensions(xs: List[int], d: Dict[str, int]) -> List[List[int]]:
    doubled = [x * 2 for x in xs]
    keys = {k: d[k] for k in d}
    pairs = [(i, x) for i, x in enumerate(xs)]
    nested = [[x for x in xs]]
    inner = [[y for y in range(x)] for x in xs]
    return nested
''',
    "unpacking": '''
def unpacking(xs: List[int], t: Tuple[int, int, int]) -> int:
    a, b, c = t
    (d, e), f = (1, 2), 3
    g = h = 4
    first, *rest = xs
    i, j = j, i = 5, 6
    return a + b + c + d + e + f + g + h + first
''',
    "aug_assign": '''
def aug_assign(x: int, t: Tensor, xs: List[int]) -> int:
    x += 1
    x -= 2
    x *= 3
    t /= 4
    x %= 5
    x |= 6
    x &= 7
    x ^= 8
    x <<= 1
    x >>= 1
    x **= 2
    xs[0] += 1
    t.data += t
    return x
''',
    "annotated": '''
def annotated(x: Optional[int], ys: List[Tensor]) -> Optional[int]:
    a: int = 1
    b: Optional[Tensor] = None
    c: Dict[str, List[int]] = {"a": [1]}
    d: Tuple[int, ...] = (1, 2)
    e: Union[int, str] = "s"
    return x
''',
    "if_elif_else": '''
def if_elif_else(x: int) -> int:
    if x > 10:
        y = 1
    elif x > 5:
        y = 2
    elif x > 0:
        if x == 3:
            y = 3
        else:
            y = 4
    else:
        y = 5
    return y
''',
    "loops": '''
def loops(n: int, xs: List[int]) -> int:
    total = 0
    i = 0
    while i < n:
        i += 1
        if i % 2 == 0:
            continue
        if i > 100:
            break
        total += i
    for x in xs:
        total += x
    for j in range(2, n, 3):
        total -= j
    for k, v in zip(xs, xs):
        total += k * v
    for a, (b, c) in enumerate(zip(xs, xs)):
        total += a + b + c
    return total
''',
    "exceptions": '''
def exceptions(x: int) -> int:
    assert x > 0
    assert x < 100, "x too big"
    if x == 3:
        raise ValueError("three")
    if x == 4:
        raise RuntimeError
    if x == 5:
        raise Exception("four") if False else ValueError("five")
    return x
''',
    "with_statements": '''
def with_statements(x: Tensor) -> Tensor:
    with torch.no_grad():
        y = x + 1
    with torch.no_grad() as a, Ctx(x) as b, torch.enable_grad():
        y = y + b
    return y
''',
    "deletion_and_pass": '''
def deletion_and_pass(xs: List[int], d: Dict[str, int]) -> int:
    del xs[0]
    del d["a"], xs[1]
    if len(xs) == 0:
        pass
    return len(xs)
''',
    "returns": '''
def returns(x: int):
    if x == 0:
        return
    if x == 1:
        return None
    if x == 2:
        return x, x
    return (x, x + 1, [x])
''',
    "defaults_and_kwarg_only": '''
def defaults_and_kwarg_only(x: Tensor, alpha: float = 1.0, beta: int = -2, *, name: str,
                            flag: Optional[bool]) -> Tensor:
    return x * alpha + beta
''',
    "unannotated": '''
def unannotated(x, y, z=None):
    return x + y
''',
    "docstring": '''
def docstring(x: int) -> int:
    """A docstring, dropped by both frontends."""
    y = x + 1
    "a bare string statement is dropped too"
    return y
''',
    "one_line_suites": '''
def one_line_suites(x: int) -> int:
    if x > 0: return 1
    elif x < 0: return -1
    else: x += 1
    while x < 10: x += 2
    for i in range(3): x += i
    return x
''',
    "signature_type_comment": '''
def signature_type_comment(x, y):
    # type: (Tensor, int) -> Tensor
    return x + y
''',
    "same_line_type_comment": '''
def same_line_type_comment(x, y):  # type: (List[int], Optional[str]) -> int
    return len(x)
''',
    "assignment_type_comment": '''
def assignment_type_comment(x: int) -> List[int]:
    xs = []  # type: List[int]
    d = {}  # type: Dict[str, Tensor]
    xs.append(x)  # type: ignore
    return xs
''',
    "one_line_def": '''
def one_line_def(x: int) -> int: return x + 1
''',
    "attribute_access": '''
def attribute_access(self, x: Tensor) -> Tensor:
    y = self.linear.weight.t()
    self.count += 1
    self.cache = x.shape[0]
    return torch.nn.functional.relu(y)
''',
    "isinstance_and_builtins": '''
def isinstance_and_builtins(x: Union[int, float, str]) -> str:
    if isinstance(x, (int, float)):
        return str(x)
    return x.upper().format(1, 2)
''',
    "starred_call": '''
def starred_call(x: Tensor, sizes: List[int]) -> Tensor:
    return x.view(*sizes).permute(1, 0)
''',
    "line_continuations": '''
def line_continuations(a: int, b: int) -> int:
    x = a + \\
        b
    y = (a +
         b)
    z = [a,
         b]
    return x + y + \\
        z[0]
''',
    "comments": '''
def comments(a: int) -> int:  # trailing comment
    # a comment line

    # another, after a blank line
    b = a  # why
        # oddly indented comment
    return b
''',
    "power_and_unary": '''
def power_and_unary(x: int) -> int:
    a = -x ** 2
    b = (-x) ** 2
    c = 2 ** -1
    d = --x
    e = -(-1)
    f = ~x
    g = not x
    return a + b + c + d + e + f
''',
    "ellipsis_and_none": '''
def ellipsis_and_none(x: Tensor) -> Tensor:
    y = x[..., 0]
    z = x[None]
    return y if z is None else z
''',
    "nested_functions_calls": '''
def nested_functions_calls(x: int) -> int:
    return max(min(x, 10), abs(-x), int(float(x)))
''',
    "script_class": '''
class Counter:
    """A script class."""
    def __init__(self, start: int):
        self.count = start
        self.history: List[int] = []

    def increment(self, by: int = 1) -> int:
        self.count += by
        self.history.append(self.count)
        return self.count
''',
    "named_tuple_class": '''
class Point(NamedTuple):
    x: float
    y: float
    label: Optional[str]
''',
    "class_with_constants": '''
class WithConstants(object):
    __constants__ = ["scale"]
    scale: Final[int] = 2

    def scaled(self, x: int) -> int:
        return x * self.scale
''',
    "enum_class": '''
class Color(Enum):
    RED = 1
    GREEN = 2
''',
}

# programs whose trees intentionally differ from torch's own text parser (docstrings dropped, one-line suites,
# `for a, b in` as one tuple target, assignment type comments, `--x` folding, classes it cannot parse alone)
NORMALIZED = frozenset({
    "docstring", "one_line_suites", "loops", "comprehensions", "assignment_type_comment", "power_and_unary",
    "script_class", "named_tuple_class", "class_with_constants", "enum_class", "exceptions",
    "same_line_type_comment", "signature_type_comment", "python_string_escapes",
})

PROGRAMS_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), os.pardir, "ir", "corpus", "programs.py")


@functools.cache
def programs_py_sources() -> dict[str, str]:
    """The source of every top-level function, and of every method (decorators left out), of programs.py."""
    with open(PROGRAMS_PY, encoding="utf-8") as file:
        text = file.read()
    lines = text.splitlines(keepends=True)
    sources = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            sources[node.name] = "".join(lines[node.lineno - 1:node.end_lineno])
        elif isinstance(node, ast.ClassDef):
            for method in node.body:
                if isinstance(method, ast.FunctionDef):
                    sources[f"{node.name}.{method.name}"] = "".join(lines[method.lineno - 1:method.end_lineno])
    return sources
