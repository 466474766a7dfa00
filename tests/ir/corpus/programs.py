"""TorchScript programs whose graphs make up the IR text corpus (see generate.py).

Each program exercises constructs the graph printer and parser must get right: control flow (blocks),
containers, optionals, strings (including non-ASCII), exceptions, module types, subgraphs, refined tensor
types and constant attributes of every kind. torch.jit compiles these from this file's source, so it must stay
a real file.

Registries at the bottom say how each program becomes a graph: SCRIPTED_FUNCTIONS (torch.jit.script),
SCRIPTED_MODULES (forward graph, optionally the inlined and frozen graphs too), TRACED (torch.jit.trace with
example inputs), FUSED (the optimized graph the profiling executor ran, with TensorExprGroup subgraphs).
"""

# TorchScript programs in the typing style TorchScript documents:
# ruff: noqa: UP006, UP007, UP035, UP045, UP032

import math
from enum import Enum
from typing import Any, Dict, List, NamedTuple, Optional, Tuple, Union

import torch
from torch import Tensor, nn

# ------------------------------------------------------------------------------------------------------------
# control flow


def if_elif(x: Tensor, n: int) -> Tensor:
    if n > 10:
        y = x * 2
    elif n > 5:
        y = x + 1
    elif n == 0:
        y = x.neg()
    else:
        y = x
    return y


def for_range(x: Tensor, n: int) -> Tensor:
    acc = torch.zeros_like(x)
    for i in range(n):
        acc = acc + x * i
    for j in range(2, n, 3):
        acc -= j
    return acc


def for_list(xs: List[int], ts: List[Tensor]) -> int:
    total = 0
    for v in xs:
        total += v
    for t in ts:
        total += int(t.numel())
    for i, v in enumerate(xs):
        total += i * v
    for a, b in zip(xs, xs):
        total += a - b
    return total


def while_loop(n: int) -> int:
    i = 0
    acc = 1
    while i < n and acc < 1000:
        acc *= 2
        i += 1
    return acc


def break_continue(xs: List[int]) -> int:
    total = 0
    for v in xs:
        if v < 0:
            continue
        if v > 100:
            break
        total += v
    return total


def early_return(x: Tensor, flag: bool) -> Tensor:
    if flag:
        return x + 1
    for i in range(3):
        if i == int(x.sum()):
            return x * i
    return x


def nested_loops(x: Tensor) -> Tensor:
    out = x
    for i in range(3):
        for j in range(i):
            out = out + j
        k = 0
        while k < i:
            out = out * 2
            k += 1
    return out


def ternary_and_boolops(a: int, b: int, c: bool) -> int:
    r = a if a > b else b
    if (a > 0 and b > 0) or not c:
        r += 1
    if a < b < 10:
        r -= 1
    return r


# ------------------------------------------------------------------------------------------------------------
# containers


def list_ops(x: List[int]) -> List[int]:
    y = [1, 2, 3]
    y.append(len(x))
    y.extend(x)
    y.insert(0, -1)
    z = y[1:3] + y[::2]
    z.pop()
    z.sort()
    w = [v * 2 for v in z]
    empty = torch.jit.annotate(List[int], [])
    if 3 in w:
        empty.append(w.index(3))
    return w + empty


def nested_lists(x: List[List[int]]) -> List[List[float]]:
    out: List[List[float]] = []
    for row in x:
        out.append([float(v) / 2.0 for v in row])
    out[0][0] = 1.5
    return out


def tensor_list(x: Tensor) -> Tensor:
    parts = torch.chunk(x, 2, 0)
    ts = [p * 2 for p in parts]
    ts.append(x.sum().unsqueeze(0).expand(x.size(1)).unsqueeze(0))
    return torch.cat(ts, 0)


def tuple_ops(x: Tensor, t: Tuple[int, float, str]) -> Tuple[Tensor, int, Tuple[float, str]]:
    a, b, c = t
    pair = (b, c)
    nested = (x, a + 1, pair)
    first = nested[0]
    return first * a, nested[1], nested[2]


def dict_ops(d: Dict[str, Tensor], k: str) -> Dict[str, Tensor]:
    out: Dict[str, Tensor] = {}
    for key in d:
        out[key + "_x"] = d[key] * 2
    for key, value in d.items():
        out[key] = value
    if k in out:
        del out[k]
    out.update({"extra": torch.ones(1)})
    _ = out.get("missing", torch.zeros(1))
    keys = list(out.keys())
    if len(keys) > 3:
        out.pop(keys[0])
    return out


def dict_int_keys(n: int) -> Dict[int, List[str]]:
    d: Dict[int, List[str]] = {}
    for i in range(n):
        d[i] = [str(i)] * i
    squares = {i: i * i for i in range(n)}
    if 2 in squares:
        d[squares[2]] = ["four"]
    return d


# ------------------------------------------------------------------------------------------------------------
# optionals, unions, Any


def optional_int(x: Tensor, o: Optional[int] = None) -> Tensor:
    if o is None:
        return x
    return x + o


def optional_tensor(x: Tensor, bias: Optional[Tensor], scale: Optional[float]) -> Tensor:
    y = x
    if bias is not None:
        y = y + bias
    if scale is not None and scale > 1.0:
        y = y * scale
    return y


def union_isinstance(x: Union[Tensor, int, List[int]]) -> int:
    if isinstance(x, Tensor):
        return int(x.sum())
    elif isinstance(x, int):
        return x + 1
    else:
        return len(x)


def any_type(x: Any, flag: bool) -> Any:
    if flag:
        return x
    return None


# ------------------------------------------------------------------------------------------------------------
# strings


def string_methods(s: str, parts: List[str]) -> str:
    words = s.split(" ")
    joined = "-".join(parts + words)
    up = joined.upper()
    if up.startswith("A") or s.endswith("z"):
        up = up.lower()
    stripped = "  x ".strip()
    found = s.find("q")
    return "{}:{}:{}:{}".format(up, stripped, found, s[1:3]) + s.replace("a", "b")


def string_escapes(s: str) -> str:
    t = "tab\there \"quoted\" 'single' back\\slash\nnewline \x01 \x7f"
    return s + t + "\r\x0b\x0c\x07\x08"


def non_ascii(s: str) -> str:
    greeting = "héllo wörld ✓ 日本語 🎉"
    if s == "ñ":
        return greeting
    return s + "→" + greeting


def string_compare(a: str, b: str) -> bool:
    return a < b or a == "x" and "y" in b or len(a) != len(b)


# ------------------------------------------------------------------------------------------------------------
# numbers


def int_float_math(a: int, b: float) -> float:
    q = a // 3
    r = a % 7
    p = 2**a
    f = float(a) / b
    g = math.sqrt(abs(b)) + math.floor(b) + math.log(2.0)
    h = int(b) + round(b) + min(a, q) + max(r, 1)
    return f + g + h + p - b**2.5 + math.pi


def special_floats(x: Tensor) -> Tensor:
    a = float("nan")
    b = float("inf")
    c = -math.inf
    d = 1e300
    e = 0.1
    f = 1e-7
    g = 123456789012.0
    h = -0.0
    i = 3.0
    return x.clamp(c, b) + a + d + e + f + g + h + i + 1e20


def complex_numbers(x: complex, y: complex) -> complex:
    z = x * (1 + 2j) + y
    w = complex(2.5, -0.5)
    return z + w + 0.5j


def dtype_device_constants(x: Tensor) -> Tensor:
    y = x.to(torch.float64)
    z = torch.zeros(2, 3, dtype=torch.int32, device=torch.device("cpu"))
    dev = x.device
    return y.sum() + z.to(dev).sum() + x.new_ones([1], dtype=torch.bool).to(torch.float32)


def tensor_attributes(x: Tensor) -> Tuple[List[int], int, bool, int, str]:
    shape = x.shape
    return shape, x.dim(), x.is_cuda, x.size(-1), str(x.dtype)


# ------------------------------------------------------------------------------------------------------------
# tensors and in-place ops


def inplace_ops(x: Tensor) -> Tensor:
    y = x.clone()
    y.add_(1)
    y.mul_(2.5)
    y[0] = 3
    y[1:] += 1
    y.relu_()
    return y


def tensor_indexing(x: Tensor, i: int) -> Tensor:
    a = x[0]
    b = x[1:3, None, ..., i]
    c = x[:, -1]
    d = x[x > 0]
    return a.sum() + b.sum() + c.sum() + d.sum()


def tensor_kwargs(x: Tensor) -> Tensor:
    s = x.sum(dim=1, keepdim=True)
    m = torch.mean(x, dim=[0], keepdim=False)
    t = torch.where(x > 0, x, torch.zeros_like(x))
    return s + m + t.softmax(dim=-1) + torch.matmul(x, x.t())


# ------------------------------------------------------------------------------------------------------------
# exceptions, with-statements, printing


def raise_exception(x: int) -> int:
    if x < 0:
        raise ValueError("negative: " + str(x))
    if x > 100:
        raise RuntimeError("too big")
    return x


def assert_stmt(x: Tensor, n: int) -> Tensor:
    assert n > 0, "n must be positive"
    assert x.dim() == 2
    return x * n


def print_and_warn(x: Tensor) -> Tensor:
    print("value:", x, 3, 2.5)
    print()
    return x


def with_no_grad(x: Tensor) -> Tensor:
    with torch.no_grad():
        y = x * 2
    return y + x


@torch.jit.script
class Counter:
    """A script class used as a context manager (prim::Enter / prim::Exit)."""

    def __init__(self, start: int):
        self.count = start

    def __enter__(self):
        self.count += 1

    def __exit__(self, type: Any, value: Any, tb: Any):
        self.count -= 1


def with_class(x: Tensor) -> Tensor:
    c = Counter(0)
    with c:
        x = x + c.count
    return x


@torch.jit.script
class Point:
    """A script class with methods, used as a value type."""

    def __init__(self, x: float, y: float):
        self.x = x
        self.y = y

    def norm(self) -> float:
        return math.sqrt(self.x * self.x + self.y * self.y)


def class_objects(a: float) -> float:
    p = Point(a, 2.0)
    p.x = p.x + 1.0
    return p.norm()


# ------------------------------------------------------------------------------------------------------------
# named tuples, enums, function calls, fork/wait


class Pair(NamedTuple):
    first: Tensor
    second: int


def named_tuple(x: Tensor) -> Pair:
    p = Pair(x, 3)
    q = Pair(first=p.first * 2, second=p.second + 1)
    return q


class Color(Enum):
    RED = 1
    GREEN = 2


def enum_values(c: Color) -> int:
    if c == Color.RED:
        return c.value
    return len(c.name)


def helper(x: Tensor, k: int) -> Tensor:
    return x * k + 1


def function_calls(x: Tensor) -> Tensor:
    return helper(x, 2) + helper(x, 3)


def fork_wait(x: Tensor) -> Tensor:
    fut = torch.jit.fork(helper, x, 4)
    futs = [torch.jit.fork(helper, x, k) for k in range(2)]
    y = helper(x, 1)
    total = torch.jit.wait(fut) + y
    for f in futs:
        total = total + torch.jit.wait(f)
    return total


@torch.jit.ignore
def python_side(x: Tensor) -> Tensor:
    return x + 1


def ignored_call(x: Tensor) -> Tensor:
    return python_side(x) * 2


# ------------------------------------------------------------------------------------------------------------
# modules


class Linear(nn.Module):
    def __init__(self, n: int = 4):
        super().__init__()
        self.lin = nn.Linear(n, n)
        self.scale = 2.0
        self.offsets: List[int] = [1, 2]

    def forward(self, x: Tensor) -> Tensor:
        return self.lin(x) * self.scale + self.offsets[0]


class SubmoduleTree(nn.Module):
    def __init__(self):
        super().__init__()
        self.a = Linear()
        self.b = nn.Sequential(nn.Linear(4, 4), nn.ReLU())
        self.register_buffer("running", torch.zeros(4))

    def forward(self, x: Tensor) -> Tensor:
        return self.b(self.a(x)) + self.running


class ModuleListLoop(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(3, 3) for _ in range(3)])
        self.acts = nn.ModuleDict({"relu": nn.ReLU(), "tanh": nn.Tanh()})

    def forward(self, x: Tensor) -> Tensor:
        for i, layer in enumerate(self.layers):
            x = layer(x) + i
        for _name, act in self.acts.items():
            x = act(x)
        return x


class Attributes(nn.Module):
    limit: torch.jit.Final[int]

    def __init__(self):
        super().__init__()
        self.limit = 3
        self.name = "attrs"
        self.weights: Dict[str, float] = {"a": 1.0}
        self.maybe: Optional[Tensor] = None
        self.weight = nn.Parameter(torch.ones(3))

    def forward(self, x: Tensor) -> Tensor:
        if self.training:
            x = x * self.weights["a"]
        if self.maybe is not None:
            x = x + self.maybe
        for _ in range(self.limit):
            x = x + self.weight
        return x

    @torch.jit.export
    def describe(self) -> str:
        return self.name + str(self.limit)


class MutatesState(nn.Module):
    history: List[float]

    def __init__(self):
        super().__init__()
        self.calls = 0
        self.history = []

    def forward(self, x: Tensor) -> Tensor:
        self.calls += 1
        self.history.append(float(x.sum()))
        return x * self.calls


@torch.jit.interface
class OneInterface(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        pass


class AddOne(nn.Module):
    def forward(self, x: Tensor) -> Tensor:
        return x + 1


class UsesInterface(nn.Module):
    """A submodule typed by an interface: `%impl : InterfaceType<OneInterface> = prim::GetAttr[...]`."""

    impl: OneInterface

    def __init__(self):
        super().__init__()
        self.impl = AddOne()

    def forward(self, x: Tensor) -> Tensor:
        return self.impl.forward(x) * 2


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(2, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)

    def forward(self, x: Tensor) -> Tensor:
        return torch.relu(self.bn(self.conv(x)))


class SmallConstants(nn.Module):
    """Frozen, its buffers become tensor constants: 0-d, small (printed inline) and large (<Tensor>)."""

    def __init__(self):
        super().__init__()
        self.register_buffer("scalar", torch.tensor(2.5))
        self.register_buffer("small", torch.tensor([1.0, 2.0, 3.0]))
        self.register_buffer("ints", torch.tensor([[1, 2], [3, 4]]))
        self.register_buffer("big", torch.arange(20.0))

    def forward(self, x: Tensor) -> Tensor:
        return x * self.scalar + self.small.sum() + self.ints.sum() + self.big.sum()


# ------------------------------------------------------------------------------------------------------------
# traced programs (refined tensor types, prim::NumToTensor, inline tensor constants)


def traced_shapes(x: Tensor) -> Tensor:
    n = x.size(0)
    y = x.view(n, -1) * n
    return y.sum(1) + torch.tensor([1.0, 2.0])[0]


def traced_constants(x: Tensor) -> Tensor:
    a = torch.tensor([1, 2, 3])
    b = torch.tensor([[0.5, 1.25], [2.0, 3.0]], dtype=torch.float64)
    c = torch.tensor(7)
    d = torch.tensor([True, False])
    e = torch.tensor([1e-8, 1e8])
    f = torch.tensor([0.001, 0.002])
    return x + a.sum() + b.sum().float() + c + d.sum() + e.sum() + f.sum()


def traced_dtypes(x: Tensor, y: Tensor) -> Tuple[Tensor, Tensor]:
    return (x.to(torch.int64) + y).half(), (x > 0).logical_and(y > 0)


class ScaleFunction(torch.autograd.Function):
    """A custom autograd function: tracing records it as a Python op (`^ScaleFunction[...](2.5)(%x)`)."""

    @staticmethod
    def forward(ctx, x: Tensor, factor: float) -> Tensor:
        return x * factor

    @staticmethod
    def backward(ctx, grad: Tensor):
        return grad, None


def traced_python_op(x: Tensor) -> Tensor:
    return ScaleFunction.apply(x, 2.5) + 1


class TracedModule(nn.Module):
    def __init__(self):
        super().__init__()
        self.l1 = nn.Linear(4, 3)
        self.l2 = nn.Linear(3, 2)

    def forward(self, x: Tensor) -> Tensor:
        return self.l2(torch.relu(self.l1(x))).flatten()


# ------------------------------------------------------------------------------------------------------------
# fused programs (run by the profiling executor with the CPU fuser on)


def fused_pointwise(x: Tensor, y: Tensor) -> Tensor:
    z = x * y + 1.0
    return torch.sigmoid(z) * torch.tanh(x) - y.relu()


def fused_with_control(x: Tensor, y: Tensor, flag: bool) -> Tensor:
    if flag:
        a = (x + y) * 2.0
    else:
        a = (x - y).exp()
    return a.sin() + a.cos()


def fused_grad(x: Tensor, w: Tensor) -> Tensor:
    return (x * w).sigmoid() * w + x.tanh()


# ------------------------------------------------------------------------------------------------------------
# registries read by generate.py

SCRIPTED_FUNCTIONS = [
    if_elif, for_range, for_list, while_loop, break_continue, early_return, nested_loops, ternary_and_boolops,
    list_ops, nested_lists, tensor_list, tuple_ops, dict_ops, dict_int_keys, optional_int, optional_tensor,
    union_isinstance, any_type, string_methods, string_escapes, non_ascii, string_compare, int_float_math,
    special_floats, complex_numbers, dtype_device_constants, tensor_attributes, inplace_ops, tensor_indexing,
    tensor_kwargs, raise_exception, assert_stmt, print_and_warn, with_no_grad, with_class, class_objects,
    named_tuple, enum_values, function_calls, fork_wait, ignored_call,
]

# name -> (module factory, also store the inlined graph, also store the frozen graph)
SCRIPTED_MODULES = {
    "linear": (Linear, True, False),
    "submodule_tree": (SubmoduleTree, True, True),
    "module_list_loop": (ModuleListLoop, True, False),
    "attributes": (Attributes, False, False),
    "mutates_state": (MutatesState, False, False),
    "uses_interface": (UsesInterface, False, False),
    "conv": (Conv, True, True),
    "small_constants": (SmallConstants, False, True),
}

# name -> (function or module factory, example inputs)
TRACED = {
    "traced_shapes": (traced_shapes, lambda: (torch.randn(3, 4),)),
    "traced_constants": (traced_constants, lambda: (torch.randn(2),)),
    "traced_dtypes": (traced_dtypes, lambda: (torch.randn(2, 3), torch.randint(0, 5, (2, 3)))),
    "traced_module": (TracedModule, lambda: (torch.randn(5, 4),)),
    "traced_python_op": (traced_python_op, lambda: (torch.randn(3),)),
}

# name -> (function, example inputs, inputs require grad)
FUSED = {
    "fused_pointwise": (fused_pointwise, lambda: (torch.randn(4, 4), torch.randn(4, 4)), False),
    "fused_with_control": (fused_with_control, lambda: (torch.randn(8), torch.randn(8), True), False),
    "fused_grad": (fused_grad, lambda: (torch.randn(4, 4), torch.randn(4, 4)), True),
}
