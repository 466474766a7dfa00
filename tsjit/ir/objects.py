"""Script objects and their bound methods: the run-time values of class and module types (seed: jit-overview.md
"Modules", "Method").

An Object is a TorchScript class instance or module: its ClassType and a value per attribute. Attributes read
and write as Python attributes (so prim::GetAttr and prim::SetAttr are `getattr` and `setattr`), and methods,
the Functions in `type.methods` whose graphs take the object as first input, come back bound as Methods:

    %c : __torch__.Counter = prim::CreateObject()
     = prim::CallMethod[name="__init__"](%c, %start)     # Counter.__init__'s graph takes %c first
    %n : int = prim::GetAttr[name="count"](%c)

They live with the IR, not in runtime/, because the frontend (script classes), passes (freezing) and
serialization build and read them without running anything.
"""

from __future__ import annotations

from typing import Any


class Object:
    """A TorchScript object or module at run time: a ClassType and the values of its attributes."""

    __slots__ = ("type", "_attributes")

    def __init__(self, class_type, attributes: dict[str, Any] | None = None):
        object.__setattr__(self, "type", class_type)
        object.__setattr__(self, "_attributes", dict(attributes or {}))

    def __getattr__(self, name: str) -> Any:
        attributes = object.__getattribute__(self, "_attributes")
        if name in attributes:
            return attributes[name]
        function = self.type.methods.get(name)
        if function is None:
            raise AttributeError(f"'{self.type.qualified_name}' object has no attribute or method '{name}'")
        return Method(self, function)

    def __setattr__(self, name: str, value: Any) -> None:
        self._attributes[name] = value

    def __repr__(self) -> str:
        return f"<tsjit Object of type {self.type.qualified_name}>"


class Method:
    """A method's Function bound to its object; calling it passes the object as the graph's first input."""

    __slots__ = ("owner", "function")

    def __init__(self, owner: Object, function):
        self.owner = owner
        self.function = function

    @property
    def graph(self):
        return self.function.graph

    def __call__(self, *args: Any) -> Any:
        return self.function(self.owner, *args)

    def run_async(self, *args: Any):
        """Start a call on the thread pool (what `tsjit.fork(obj.method, *args)` does)."""
        return self.function.run_async(self.owner, *args)

    def __repr__(self) -> str:
        return f"<tsjit Method {self.function.name} of {self.owner!r}>"
