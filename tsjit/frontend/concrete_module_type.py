"""Concrete module types: what an nn.Module instance looks like to TorchScript (C++ ConcreteModuleType).

Scripting an nn.Module first infers its concrete type from the instance (torch.jit._recursive's
`infer_concrete_type_builder`): parameters, buffers, submodules, `__constants__` and `Final` constants, and the
data attributes of `__dict__` typed by the class annotations or by their values. Function attributes, builtins
(`self.act = torch.relu`), attributes whose values have no TorchScript type (kept with the reason, for the
error if a method uses them), method overloads and forward hooks are recorded too.

Two instances of one Python class with equal concrete types share one ClassType, so their methods compile
once; instances that differ (say, `nn.Linear(2, 3)` with and without bias) get distinct types whose names are
mangled as TorchScript mangles them:

    nn.Linear(2, 3)               __torch__.torch.nn.modules.linear.Linear
    nn.Linear(2, 3, bias=False)   __torch__.torch.nn.modules.linear.___torch_mangle_0.Linear

Which methods compile, and how (module_sugared_values.py, tsjit/api/module.py), is read from here too:
`function_modifier` (from resolver.py) tells `@tsjit.ignore` / `@tsjit.unused` / `@tsjit.export` and torch's
equivalents apart.
"""

from __future__ import annotations

import ast
import enum
import inspect
import linecache
import re
import sys
import threading
import typing
import warnings
import weakref
from typing import Any, NamedTuple

import torch

from tsjit.errors import TsjitError
from tsjit.frontend.operator_values import operator_object_name
from tsjit.frontend.python_ast import build_definitions, get_source, parse_source
from tsjit.frontend.resolver import (
    EXPORT,
    IGNORE,
    UNUSED,
    compiled_function_for,
    find_builtin,
    function_modifier,
    python_type_to_type,
)
from tsjit.frontend.torch_jit_objects import converted_module, is_torch_jit_module
from tsjit.ir import types as T

# nn.Module's own bookkeeping in `__dict__`, never an attribute (torch.jit._recursive.ignored_attributes)
IGNORED_MODULE_ATTRIBUTES = frozenset({
    "_version", "_parameters", "_buffers", "_non_persistent_buffers_set", "_backward_hooks",
    "_backward_pre_hooks", "_forward_hooks", "_forward_hooks_with_kwargs", "_forward_pre_hooks",
    "_forward_pre_hooks_with_kwargs", "_forward_hooks_always_called", "_state_dict_hooks",
    "_state_dict_pre_hooks", "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks", "_modules",
    "_initializing", "dump_patches",
})
# values `__constants__` may hold, besides lists and tuples of them
CONSTANT_TYPES = (bool, float, int, str, type(None), torch.device, torch.layout, torch.dtype, torch.qscheme)
OVERLOAD_DECORATORS = frozenset({"_overload_method", "overload_method"})


class IterableModuleKind(enum.Enum):
    """Whether a module is a container that script code may iterate or index (`for m in self.layers`)."""

    NONE = "none"
    LIST = "list"  # ModuleList, Sequential
    DICT = "dict"  # ModuleDict
    PARAMLIST = "paramlist"
    PARAMDICT = "paramdict"


class ModuleAttribute(NamedTuple):
    type: T.Type
    is_parameter: bool = False
    is_buffer: bool = False


class ConcreteModuleType:
    """The inferred shape of one nn.Module instance, and (once built) the ClassType it compiles to.

    `modules` maps submodule names to their concrete types; a None submodule is a NoneType attribute instead.
    """

    def __init__(self, py_class: type):
        self.py_class = py_class
        self.iterable_kind = IterableModuleKind.NONE
        self.attributes: dict[str, ModuleAttribute] = {}
        self.modules: dict[str, ConcreteModuleType] = {}
        self.constants: dict[str, Any] = {}
        self.overloads: dict[str, list[str]] = {}
        self.function_attributes: dict[str, Any] = {}  # name -> the compiled function (a GraphFunction)
        self.python_functions: dict[str, Any] = {}  # name -> the Python function it was compiled from
        self.builtin_functions: dict[str, str] = {}  # name -> operator name (`aten::relu`, `aten::add.Scalar`)
        self.failed_attributes: dict[str, str] = {}  # name -> why it has no TorchScript type
        self.ignored_attributes: frozenset[str] = frozenset()
        self.forward_hooks: list = []
        self.forward_pre_hooks: list = []
        self.hook_functions: list = []  # the compiled forward hooks (GraphFunctions), once methods compile
        self.pre_hook_functions: list = []
        self.jit_type: T.ClassType | T.InterfaceType | None = None  # an interface for interface-typed submodules
        self.methods_compiled = False
        self.lock = threading.RLock()

    def equals(self, other: ConcreteModuleType) -> bool:
        """Whether instances of the two may share one ClassType (C++ ConcreteModuleTypeBuilder::equals)."""
        if self is other:
            return True
        return (self.py_class is other.py_class and self.iterable_kind == other.iterable_kind
                and self.ignored_attributes == other.ignored_attributes
                and _same_constants(self.constants, other.constants) and self.attributes == other.attributes
                and self.overloads == other.overloads
                and _same_objects(self.python_functions, other.python_functions)
                and self.builtin_functions == other.builtin_functions
                and _same_list(self.forward_hooks, other.forward_hooks)
                and _same_list(self.forward_pre_hooks, other.forward_pre_hooks)
                and self.modules.keys() == other.modules.keys()
                and all(module.equals(other.modules[name]) for name, module in self.modules.items()))

    def build(self) -> T.ClassType:
        """Create the ClassType: attributes in order, then constants, then one attribute per submodule."""
        class_type = T.ClassType(claim_qualified_name(qualified_class_name(self.py_class)), is_module=True)
        for name, attribute in self.attributes.items():
            class_type.add_attribute(name, *attribute)
        class_type.constants.update(self.constants)
        for name, module in self.modules.items():
            class_type.add_attribute(name, module.jit_type)
        self.jit_type = class_type
        return class_type

    def find_failed_attribute(self, name: str) -> str | None:
        return self.failed_attributes.get(name)

    def __repr__(self) -> str:
        name = self.jit_type.qualified_name if self.jit_type is not None else self.py_class.__name__
        return f"<ConcreteModuleType {name}>"


def _same_constants(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(type(a[k]) is type(b[k]) and a[k] == b[k] for k in a)


def _same_objects(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return a.keys() == b.keys() and all(a[k] is b[k] for k in a)


def _same_list(a: list, b: list) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b))


# ==============================================================================================================
# qualified names
# ==============================================================================================================
MANGLE_PREFIX = "___torch_mangle_"


def qualified_class_name(py_class: type) -> str:
    """`__torch__.<module>.<Class>`; classes of `__main__` are `__torch__.<Class>` (torch's _qualified_name)."""
    override = getattr(py_class, "_jit_override_qualname", None)
    if override:
        return override
    module = (py_class.__module__ or "__main__").replace("<", "_").replace(">", "_")
    prefix = "__torch__" if module == "__main__" else f"__torch__.{module}"
    return f"{prefix}.{py_class.__name__}"


class NameMangler:
    """Gives every class a distinct qualified name: a taken name gets `___torch_mangle_N` before its last
    atom, or has its N bumped if it already carries one (C++ NameMangler). Thread-safe."""

    def __init__(self):
        self.taken: set[str] = set()
        self.index = 0
        self.lock = threading.Lock()

    def claim(self, name: str) -> str:
        with self.lock:
            while name in self.taken:
                name = self._mangle(name)
            self.taken.add(name)
            return name

    def _mangle(self, name: str) -> str:
        atoms = name.split(".")
        for i, atom in enumerate(atoms):
            position = atom.find(MANGLE_PREFIX)
            if position != -1:
                self.index = max(self.index, int(atom[position + len(MANGLE_PREFIX):]) + 1)
                atoms[i] = f"{atom[:position]}{MANGLE_PREFIX}{self._next_index()}"
                return ".".join(atoms)
        atoms.insert(len(atoms) - 1, f"{MANGLE_PREFIX}{self._next_index()}")
        return ".".join(atoms)

    def _next_index(self) -> int:
        self.index += 1
        return self.index - 1


CLASS_NAMES = NameMangler()


def claim_qualified_name(name: str) -> str:
    """A qualified name no other class has, mangled if `name` is taken; the name is then taken."""
    return CLASS_NAMES.claim(name)


# ==============================================================================================================
# inference
# ==============================================================================================================
class ConcreteTypeStore:
    """Concrete types by Python class, so that instances with equal concrete types share their ClassType."""

    def __init__(self):
        self.types: dict[type, list[ConcreteModuleType]] = {}
        self.by_class_type: dict[T.ClassType, ConcreteModuleType] = {}
        self.lock = threading.RLock()

    def get_or_create(self, nn_module: torch.nn.Module) -> ConcreteModuleType:
        candidate = infer_concrete_type(nn_module)
        with self.lock:
            known = self.types.setdefault(type(nn_module), [])
            for existing in known:
                if existing.equals(candidate):
                    return existing
            candidate.build()
            known.append(candidate)
            self.by_class_type[candidate.jit_type] = candidate
            return candidate

    def find(self, class_type: T.ClassType) -> ConcreteModuleType | None:
        """The concrete type whose ClassType is `class_type` (to wrap a runtime module object for Python)."""
        return self.by_class_type.get(class_type)


CONCRETE_TYPES = ConcreteTypeStore()


def module_concrete_type(nn_module: torch.nn.Module) -> ConcreteModuleType:
    """The (shared, built) concrete type of a module; an already scripted module keeps its own."""
    scripted = getattr(nn_module, "_concrete_type", None)
    if isinstance(scripted, ConcreteModuleType):
        return scripted
    check_module_initialized(nn_module)
    return CONCRETE_TYPES.get_or_create(nn_module)


def check_module_initialized(nn_module: torch.nn.Module) -> None:
    if "_parameters" not in nn_module.__dict__:
        raise TsjitError(f"'{torch.typename(type(nn_module))}' has not been initialized, did you forget to call "
                         "'super()'?")
    for name, value in [*nn_module._parameters.items(), *nn_module._buffers.items()]:
        if value is not None and torch.nn.parameter.is_lazy(value):
            raise TsjitError(f"'{torch.typename(type(nn_module))}' has uninitialized parameters {name}. Did you "
                             "forget to run a forward pass?")


def infer_concrete_type(nn_module: torch.nn.Module) -> ConcreteModuleType:
    """The concrete type of one instance (not yet built, not yet shared): the steps of torch's
    infer_concrete_type_builder, in its order."""
    concrete = ConcreteModuleType(type(nn_module))
    concrete.iterable_kind = iterable_kind_of(nn_module)
    concrete.ignored_attributes = frozenset(getattr(nn_module, "__jit_ignored_attributes__", ()))
    annotations = class_annotations(type(nn_module))
    _add_tensors(concrete, nn_module, annotations)
    _add_submodules(concrete, nn_module, annotations)
    _add_constants(concrete, nn_module, annotations)
    concrete.overloads = module_overloads(nn_module)
    _add_instance_attributes(concrete, nn_module, annotations)
    concrete.forward_hooks = list(nn_module._forward_hooks.values())
    concrete.forward_pre_hooks = list(nn_module._forward_pre_hooks.values())
    return concrete


def iterable_kind_of(nn_module: torch.nn.Module) -> IterableModuleKind:
    nn = torch.nn
    kinds = ((nn.ModuleDict, IterableModuleKind.DICT), ((nn.ModuleList, nn.Sequential), IterableModuleKind.LIST),
             (nn.ParameterList, IterableModuleKind.PARAMLIST), (nn.ParameterDict, IterableModuleKind.PARAMDICT))
    for classes, kind in kinds:
        if isinstance(nn_module, classes):
            return kind
    return IterableModuleKind.NONE


def class_annotations(py_class: type) -> dict[str, Any]:
    """The class's annotations, or those of the nearest base that has some (torch.jit._recursive); string
    annotations (`from __future__ import annotations`) are evaluated where the class is defined."""
    for cls in py_class.__mro__:
        found = inspect.get_annotations(cls)
        if found:
            return {name: _evaluated(annotation, cls) for name, annotation in found.items()}
    return {}


def _evaluated(annotation: Any, cls: type) -> Any:
    if not isinstance(annotation, str):
        return annotation
    namespace = vars(sys.modules.get(cls.__module__)) if cls.__module__ in sys.modules else {}
    try:
        return eval(annotation, dict(namespace), dict(vars(cls)))  # what typing.get_type_hints does
    except Exception:
        return annotation


def _add_tensors(concrete: ConcreteModuleType, nn_module: torch.nn.Module, annotations: dict) -> None:
    """Parameters, then buffers: Tensor attributes (NoneType when None, as nn.Module allows)."""
    for table, is_parameter in ((nn_module._parameters, True), (nn_module._buffers, False)):
        for name, value in table.items():
            if name in concrete.ignored_attributes:
                continue
            type_ = infer_attribute_type(name, value, annotations)
            concrete.attributes[name] = ModuleAttribute(type_, is_parameter, not is_parameter)


def _add_submodules(concrete: ConcreteModuleType, nn_module: torch.nn.Module, annotations: dict) -> None:
    """Submodules by their concrete types; one annotated with a module interface (`sub: OneTwo`) has the
    interface's concrete type instead, whatever module it holds."""
    for name, module in nn_module._modules.items():
        if name in concrete.ignored_attributes:
            continue
        if module is None:  # no Optional modules in TorchScript: a None submodule is a NoneType attribute
            concrete.attributes[name] = ModuleAttribute(T.NoneType.get())
            continue
        declared = python_type_to_type(annotations[name], None) if name in annotations else None
        if isinstance(declared, T.InterfaceType) and declared.is_module:
            concrete.modules[name] = interface_concrete_type(declared)
        else:
            concrete.modules[name] = module_concrete_type(converted_module(module) if is_torch_jit_module(module)
                                                          else module)


_interface_concrete_types: dict[T.InterfaceType, ConcreteModuleType] = {}


def interface_concrete_type(interface: T.InterfaceType) -> ConcreteModuleType:
    """The one concrete type of submodules typed by a module interface: it knows nothing but the interface
    (C++ ConcreteModuleType::fromJitType)."""
    with CONCRETE_TYPES.lock:
        found = _interface_concrete_types.get(interface)
        if found is None:
            found = _interface_concrete_types[interface] = ConcreteModuleType(torch.nn.Module)
            found.jit_type = interface
        return found


def _add_constants(concrete: ConcreteModuleType, nn_module: torch.nn.Module, annotations: dict) -> None:
    """`__constants__` and `Final` annotations; a name that is already a parameter, buffer or submodule (or
    not set at all) only warns, as in torch."""
    names = set(getattr(nn_module, "__constants__", ())) | {n for n, a in annotations.items() if is_final(a)}
    for name in sorted(names):
        if name in concrete.attributes or name in concrete.modules:
            warnings.warn(f"'{name}' was found in ScriptModule constants, but it is a non-constant "
                          f"{_kind_of_member(nn_module, name)}. Consider removing it.", stacklevel=3)
        elif not hasattr(nn_module, name):
            warnings.warn(f"'{name}' was found in ScriptModule constants, but was not actually set in __init__. "
                          "Consider removing it.", stacklevel=3)
        else:
            concrete.constants[name] = valid_constant(name, getattr(nn_module, name), type(nn_module).__name__)


def _kind_of_member(nn_module: torch.nn.Module, name: str) -> str:
    if name in nn_module._modules:
        return "submodule"
    return "buffer" if name in nn_module._buffers else "parameter"


def is_final(annotation: Any) -> bool:
    """`Final` or `Final[T]` (typing's, which torch.jit.Final also is)."""
    return annotation is typing.Final or typing.get_origin(annotation) is typing.Final


def valid_constant(name: str, value: Any, owner: str) -> Any:
    """The constant as TorchScript keeps it (lists become tuples); TsjitError for values that cannot be."""
    if isinstance(value, CONSTANT_TYPES):
        return value
    if isinstance(value, tuple | list):
        return tuple(valid_constant(name, v, owner) for v in value)
    allowed = ", ".join(torch.typename(t) for t in CONSTANT_TYPES)
    raise TsjitError(f"'{torch.typename(type(value))}' object in attribute '{owner}.{name}' is not a valid "
                     f"constant.\nValid constants are:\n1. a nn.ModuleList\n2. a value of type {{{allowed}}}\n"
                     "3. a list or tuple of (2)")


def _add_instance_attributes(concrete: ConcreteModuleType, nn_module: torch.nn.Module, annotations: dict) -> None:
    """The rest of `__dict__`: functions, builtins and data attributes (or why they have no type)."""
    for name, value in nn_module.__dict__.items():
        if name in IGNORED_MODULE_ATTRIBUTES or name.startswith("__") or name in concrete.ignored_attributes:
            continue
        if name in concrete.attributes or name in concrete.modules or name in concrete.constants:
            continue
        operator = operator_object_name(value)
        if operator is not None:
            concrete.builtin_functions[name] = operator
            continue
        _add_instance_attribute(concrete, name, value, annotations)


def _add_instance_attribute(concrete: ConcreteModuleType, name: str, value: Any, annotations: dict) -> None:
    if inspect.isfunction(value):
        _add_function_attribute(concrete, name, value)
        return
    builtin = find_builtin(value)
    if builtin is not None:
        concrete.builtin_functions[name] = builtin
        return
    if getattr(value, "is_script_function", False):
        concrete.function_attributes[name] = value.graph_function
        concrete.python_functions[name] = value
        return
    try:
        concrete.attributes[name] = ModuleAttribute(infer_attribute_type(name, value, annotations))
    except TsjitError as error:
        concrete.failed_attributes[name] = (
            f"(This attribute exists on the Python module, but we failed to convert Python type: "
            f"'{torch.typename(type(value))}' to a TorchScript type. {error})")


def _add_function_attribute(concrete: ConcreteModuleType, name: str, function: Any) -> None:
    """A Python function stored on the instance is compiled; failing that it is a failed attribute."""
    try:
        concrete.function_attributes[name] = compiled_function_for(function)
        concrete.python_functions[name] = function
    except TsjitError as error:
        concrete.failed_attributes[name] = (
            "(This function exists as an attribute on the Python module, but we failed to compile it to a "
            f"TorchScript function. \nThe error stack is reproduced here:\n{error})")


def infer_attribute_type(name: str, value: Any, annotations: dict) -> T.Type:
    """An attribute's type: its class annotation, a torch.jit.Attribute's declared type, or its value's
    type with tensor refinements dropped; the value may be an instance of a script class (compiled now, as
    torch.jit does)."""
    annotation = annotations.get(name)
    if annotation is None and is_typed_attribute(value):
        annotation = value.type
    if annotation is not None and not is_final(annotation):
        found = python_type_to_type(annotation, None)
        if found is None:
            raise TsjitError(f"Error inferring type for {name}: {value!r}: unknown type annotation "
                             f"'{annotation}'")
        return found
    try:
        return T.unshaped_type(T.type_of(value))
    except TsjitError:
        class_type = python_type_to_type(type(value), None)
        if isinstance(class_type, T.ClassType):
            return class_type
        raise


def is_typed_attribute(value: Any) -> bool:
    """`torch.jit.Attribute(value, type)` (a NamedTuple of torch.jit._script), recognized without importing it."""
    return type(value).__name__ == "Attribute" and getattr(value, "_fields", None) == ("value", "type")


# ==============================================================================================================
# methods: which compile, and overloads
# ==============================================================================================================
# torch.jit's decorators set `_torchscript_modifier` to a FunctionModifiers string; its first word says which
def is_ignored(function: Any) -> bool:
    """Whether a function stays Python (`@tsjit.ignore`, `@tsjit.unused`, or torch.jit's)."""
    return function_modifier(function) in (IGNORE, UNUSED)


def is_exported(function: Any) -> bool:
    return function_modifier(function) == EXPORT


def methods_to_compile(nn_module: torch.nn.Module) -> list[str]:
    """`forward` (when the class defines one and it is not ignored), then the exported methods, without the
    overloaded ones (their overloads compile instead); torch's infer_methods_to_compile."""
    names = []
    forward = getattr(type(nn_module), "forward", None)
    if forward is not None and forward is not torch.nn.Module.forward and not is_ignored(forward):
        names.append("forward")
    names += [name for name in dir(type(nn_module)) if is_exported(getattr(type(nn_module), name, None))]
    overloaded = module_overloads(nn_module)
    return [name for name in dict.fromkeys(names) if name not in overloaded]


def module_overloads(nn_module: torch.nn.Module) -> dict[str, list[str]]:
    """Overloaded method name -> the names its overloads compile to (`forward` -> `forward__0`, ...):
    `__overloads__` on the module, and methods declared with `@_overload_method` in the class source."""
    declared: dict[str, list[str]] = {}
    for _, node in _overload_nodes(type(nn_module)):
        names = declared.setdefault(node.name, [])
        names.append(f"{node.name}__{len(names)}")
    return {**{name: list(names) for name, names in getattr(nn_module, "__overloads__", {}).items()}, **declared}


def method_overload_declarations(py_class: type, name: str) -> list:
    """The Defs of the `@_overload_method` declarations of method `name` (their bodies are `pass`)."""
    declarations = []
    for source, node in _overload_nodes(py_class):
        if node.name == name:
            segment = "".join(source.text.splitlines(keepends=True)[node.lineno - 1:node.end_lineno])
            declarations += build_definitions(segment, source.filename, source.starting_line + node.lineno - 1)
    return declarations


def _overload_nodes(py_class: type) -> list[tuple[Any, ast.FunctionDef]]:
    """(class source, ast node) of every overload declaration in the classes of `py_class`'s MRO that are
    not nn.Module's own."""
    found = []
    for cls in py_class.__mro__:
        if cls is torch.nn.Module or cls is object:
            break
        source, declarations = _class_overload_declarations(cls)
        found += [(source, node) for node in declarations]
    return found


# class -> (Source, its overload declarations): goes with the class
_class_overloads: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def _class_overload_declarations(cls: type) -> tuple:
    """The class's Source and the overload declarations of its body (cached; none when the source is
    unavailable). The class's source is read only when its file names an overload decorator (inspect finds a
    class by parsing its whole file: 5-30 ms for each of torch.nn's), and only the declarations are kept: the
    ast of a class such as nn.MultiheadAttention is tens of thousands of objects."""
    if cls not in _class_overloads:
        source, declarations = None, []
        if _file_names_overload_decorator(cls):
            try:
                source = get_source(cls)
                if _NAMES_OVERLOAD_DECORATOR.search(source.text):
                    declarations = _overload_declarations(source)
            except (TsjitError, SyntaxError):
                source = None
        _class_overloads[cls] = (source, declarations)
    return _class_overloads[cls]


_NAMES_OVERLOAD_DECORATOR = re.compile("|".join(sorted(OVERLOAD_DECORATORS)))
_files_naming_overload_decorators: dict[str, bool] = {}


def _file_names_overload_decorator(cls: type) -> bool:
    """Whether the file defining `cls` says `_overload_method` anywhere (read once per file)."""
    try:
        filename = inspect.getsourcefile(cls)
    except TypeError:  # a built-in class
        return False
    if filename is None:
        return True  # no file to read: let the class's source tell
    if filename not in _files_naming_overload_decorators:
        text = "".join(linecache.getlines(filename))
        _files_naming_overload_decorators[filename] = _NAMES_OVERLOAD_DECORATOR.search(text) is not None
    return _files_naming_overload_decorators[filename]


def _overload_declarations(source: Any) -> list[ast.FunctionDef]:
    _, module = parse_source(source)
    body = module.body[0].body if module.body and isinstance(module.body[0], ast.ClassDef) else []
    return [node for node in body if _is_overload_declaration(node)]


def _is_overload_declaration(node: ast.stmt) -> bool:
    if not isinstance(node, ast.FunctionDef):
        return False
    names = {d.attr if isinstance(d, ast.Attribute) else getattr(d, "id", None) for d in node.decorator_list}
    return bool(names & OVERLOAD_DECORATORS)
