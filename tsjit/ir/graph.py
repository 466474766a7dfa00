"""Graph, Block, Node, Value and Use: TorchScript's SSA IR (seed: pytorch-ir-2018.md, jit-overview.md "Graph").

Ownership follows the seed: a Graph owns every Node, Value and Block created in it, and none of them can be shared
with another graph. Each Block keeps its nodes in a doubly linked list whose sentinel is the block's `prim::Return`
node (its inputs are the block outputs); the block inputs are the outputs of a `prim::Param` node that sits outside
the list. Use lists are exact: every input slot of every node is one `Use` in its value's `uses`, kept by the few
methods that change inputs (`_set_input` / `_drop_use`), so "all uses of a value" costs nothing; a UseList adds and
removes a use in constant time.

Nodes carry topological positions that increase along a block, so `is_before` is a comparison for nodes of one
block and a short walk up the block nesting otherwise.
"""

from __future__ import annotations

import builtins
import contextlib
import math
import sys
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

from tsjit.errors import IRError, SchemaError
from tsjit.ir import operator_hook
from tsjit.ir.symbols import Symbol, attribute_symbol, prim

# Spacing of topological positions; a gap that closes triggers a renumbering of the block.
_POSITION_INTERVAL = 1 << 20


class Use(NamedTuple):
    """One input slot that reads a value: `user.inputs[offset]`."""

    user: Node
    offset: int


class UseList:
    """A value's uses in the order they were added, as a read-only sequence that also appends and removes a use in
    constant time: destroying the thousand readers of one value (a long generated method reading its input in every
    statement) is then linear, where a list's `remove` made it quadratic. A use is recorded at most once."""

    __slots__ = ("_uses",)

    def __init__(self) -> None:
        self._uses: dict[Use, None] = {}

    def append(self, use: Use) -> None:
        if use in self._uses:
            raise IRError(f"use {use.offset} of {use.user.kind} is recorded twice")
        self._uses[use] = None

    def append_new(self, use: Use) -> None:
        """Record a use of a node made just now (a clone's inputs), which cannot be recorded yet."""
        self._uses[use] = None

    def remove(self, use: Use) -> None:
        try:
            del self._uses[use]
        except KeyError:
            raise IRError(f"use {use.offset} of {use.user.kind} is not recorded") from None

    def replace(self, old: Use, new: Use) -> None:
        """Put `new` where `old` was (a node's input slots renumbered)."""
        if old not in self._uses or new in self._uses:
            raise IRError(f"use {old.offset} of {old.user.kind} cannot become use {new.offset}")
        self._uses = {new if use == old else use: None for use in self._uses}

    def count(self, use: Use) -> int:
        return int(use in self._uses)

    def __contains__(self, use: object) -> bool:
        return use in self._uses

    def __iter__(self) -> Iterator[Use]:
        return iter(self._uses)

    def __len__(self) -> int:
        return len(self._uses)

    def __getitem__(self, index: int) -> Use:
        if index == 0 and self._uses:
            return next(iter(self._uses))
        return list(self._uses)[index]

    def __eq__(self, other: object) -> bool:
        if isinstance(other, UseList):
            return list(self._uses) == list(other._uses)
        return isinstance(other, list) and list(self._uses) == other

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        return repr(list(self._uses))


class Value:
    """An SSA value: an output of a node (block inputs are outputs of the block's prim::Param node)."""

    __slots__ = ("node", "offset", "type", "uses", "unique", "_name")

    def __init__(self, node: Node, offset: int, type_=None):
        self.node = node
        self.offset = offset
        self.type = type_ if type_ is not None else _tensor_type()
        self.uses = UseList()
        self.unique = node.graph._next_unique()
        self._name: str | None = None

    @property
    def owning_graph(self) -> Graph:
        return self.node.graph

    @property
    def debug_name(self) -> str:
        return self._name if self._name is not None else str(self.unique)

    def has_debug_name(self) -> bool:
        return self._name is not None

    def set_type(self, type_) -> Value:
        self.type = type_
        return self

    def set_debug_name(self, name: str | None) -> Value:
        """Name this value; if another value has the name, that value is renamed to `base.N` (TorchScript rule)."""
        graph = self.owning_graph
        if name and not _is_valid_name(name):
            raise IRError(f"Invalid name: {name!r} (names may not be integers)")
        if self._name is not None:
            del graph._names[self._name]
            self._name = None
        if not name:
            return self
        previous_owner = graph._names.get(name)
        if previous_owner is not None:
            previous_owner.set_debug_name(graph._fresh_name_for(name))
        graph._names[name] = self
        self._name = name
        return self

    def copy_metadata(self, other: Value) -> Value:
        """Take `other`'s type and (if it has one) its base name."""
        self.type = other.type
        if other.has_debug_name():
            self.set_debug_name(other.debug_name)
        return self

    def replace_all_uses_with(self, new: Value) -> None:
        """Make every reader of this value read `new`; afterwards this value has no uses."""
        self.replace_uses_with_if(new, lambda use: True)
        assert not self.uses, "replace_all_uses_with left uses behind"

    def replace_uses_with_if(self, new: Value, predicate: Callable[[Use], bool]) -> None:
        """Redirect the uses for which `predicate(use)` holds to `new`."""
        if new is self:
            return
        _check_same_graph(self.owning_graph, new, "replace_uses_with_if")
        for use in [u for u in self.uses if predicate(u)]:
            use.user._set_input(use.offset, new)

    def replace_all_uses_after_node_with(self, node: Node, new: Value) -> None:
        """Redirect the uses that come after `node` (in program order) to `new`."""
        self.replace_uses_with_if(new, lambda use: use.user.is_after(node))

    def __repr__(self) -> str:
        return f"%{self.debug_name} : {self.type}"


class Node:
    """An operator application: a kind, inputs, outputs, attributes and (for control flow) nested blocks."""

    __slots__ = ("kind", "graph", "inputs", "outputs", "blocks", "owning_block", "next", "prev",
                 "_position", "_attributes", "source_range", "scope", "callstack", "_schema")

    def __init__(self, graph: Graph, kind: Symbol | str):
        self.kind = kind if isinstance(kind, Symbol) else Symbol(kind)
        self.graph = graph
        # read-only tuples, replaced (never changed) by the methods below, which keep the use lists exact: passes
        # read them for every node, many times over, so they are plain attributes rather than copies made per read
        self.inputs: tuple[Value, ...] = ()
        self.outputs: tuple[Value, ...] = ()
        self.blocks: tuple[Block, ...] = ()
        self.owning_block: Block | None = None
        self.next: Node | None = None
        self.prev: Node | None = None
        self._position: float = 0
        self._attributes: dict[Symbol, tuple[str, Any]] = {}
        self.source_range = None
        self.scope: str | None = None
        self.callstack = None
        self._schema = None
        graph._all_nodes.add(self)

    # ---- structure -----------------------------------------------------------------------------------------
    @property
    def owning_graph(self) -> Graph:
        return self.graph

    def input(self, i: int = 0) -> Value:
        return self.inputs[i]

    def output(self, i: int | None = None) -> Value:
        """The output `i`; without an index, the only output (an error if there is not exactly one)."""
        if i is not None:
            return self.outputs[i]
        if len(self.outputs) != 1:
            raise IRError(f"{self.kind} has {len(self.outputs)} outputs, expected exactly one")
        return self.outputs[0]

    def has_uses(self) -> bool:
        return any(o.uses for o in self.outputs)

    def is_in_block_list(self) -> bool:
        return self.next is not None

    # ---- inputs --------------------------------------------------------------------------------------------
    def add_input(self, value: Value) -> Value:
        return self.insert_input(len(self.inputs), value)

    def insert_input(self, i: int, value: Value) -> Value:
        _check_same_graph(self.graph, value, f"input of {self.kind}")
        inputs = self.inputs
        if i == len(inputs):  # appending (most calls): no slot to renumber
            self.inputs = (*inputs, value)
        else:
            for later in reversed(range(i, len(inputs))):  # from the end: each new slot is free when taken
                self._retarget_use(later, later + 1)
            self.inputs = (*inputs[:i], value, *inputs[i:])
        value.uses.append(Use(self, i))
        self._schema = None
        return value

    def replace_input(self, i: int, value: Value) -> Value:
        """Replace input `i` and return the old value."""
        old = self.inputs[i]
        self._set_input(i, value)
        return old

    def replace_input_with(self, old: Value, new: Value) -> None:
        for i, value in enumerate(self.inputs):
            if value is old:
                self._set_input(i, new)

    def remove_input(self, i: int) -> None:
        self._drop_use(i)
        for later in range(i + 1, len(self.inputs)):
            self._retarget_use(later, later - 1)
        self.inputs = self.inputs[:i] + self.inputs[i + 1:]
        self._schema = None

    def remove_all_inputs(self) -> None:
        for i in range(len(self.inputs)):
            self._drop_use(i)
        self.inputs = ()
        self._schema = None

    def _set_input(self, i: int, value: Value) -> None:
        """The one place an existing input slot changes value; keeps both use lists exact."""
        _check_same_graph(self.graph, value, f"input of {self.kind}")
        old = self.inputs[i]
        self._drop_use(i)
        self.inputs = (*self.inputs[:i], value, *self.inputs[i + 1:])
        value.uses.append(Use(self, i))
        if value.type is not old.type and value.type != old.type:
            self._schema = None  # the schema depends on the kind, attributes and input types only

    def _drop_use(self, i: int) -> None:
        self.inputs[i].uses.remove(Use(self, i))

    def _retarget_use(self, old_offset: int, new_offset: int) -> None:
        self.inputs[old_offset].uses.replace(Use(self, old_offset), Use(self, new_offset))

    # ---- outputs -------------------------------------------------------------------------------------------
    def add_output(self, type_=None) -> Value:
        return self.insert_output(len(self.outputs), type_)

    def insert_output(self, i: int, type_=None) -> Value:
        value = Value(self, i, type_)
        outputs = self.outputs
        if i == len(outputs):  # appending (most calls): no offset to renumber
            self.outputs = (*outputs, value)
            return value
        self.outputs = outputs = (*outputs[:i], value, *outputs[i:])
        for offset in range(i + 1, len(outputs)):
            outputs[offset].offset = offset
        return value

    def erase_output(self, i: int) -> None:
        value = self.outputs[i]
        if value.uses:
            raise IRError(f"cannot erase output %{value.debug_name} of {self.kind}: it still has uses")
        value.set_debug_name(None)
        self.outputs = self.outputs[:i] + self.outputs[i + 1:]
        for offset in range(i, len(self.outputs)):
            self.outputs[offset].offset = offset

    # ---- blocks --------------------------------------------------------------------------------------------
    def add_block(self) -> Block:
        block = Block(self.graph, self)
        self.blocks = (*self.blocks, block)
        return block

    def erase_block(self, i: int) -> None:
        block = self.blocks[i]
        self.blocks = self.blocks[:i] + self.blocks[i + 1:]
        block._destroy()

    # ---- placement -----------------------------------------------------------------------------------------
    def insert_before(self, anchor: Node) -> Node:
        """Put this (unplaced) node right before `anchor` in anchor's block."""
        prev, block = self._check_placeable(anchor)
        return self._link_after(prev, block)

    def insert_after(self, anchor: Node) -> Node:
        """Put this (unplaced) node right after `anchor` in anchor's block."""
        _, block = self._check_placeable(anchor)
        if anchor.kind is prim.Return:
            raise IRError("cannot insert a node after a block's prim::Return")
        return self._link_after(anchor, block)

    def move_before(self, anchor: Node) -> Node:
        self._unlink()
        return self.insert_before(anchor)

    def move_after(self, anchor: Node) -> Node:
        self._unlink()
        return self.insert_after(anchor)

    def is_before(self, other: Node) -> bool:
        """Whether this node executes before `other` (they may be in different, nested blocks)."""
        if self is other:
            return False
        mine, theirs = _ancestors_in_common_block(self, other)
        if mine is theirs:
            return False  # one contains the other: neither is before the other, as in TorchScript
        return mine._position < theirs._position

    def is_after(self, other: Node) -> bool:
        return other is not self and other.is_before(self)

    def _check_placeable(self, anchor: Node) -> tuple[Node, Block]:
        """Check that this node may go next to `anchor`; return anchor's predecessor and block."""
        if self.next is not None:
            raise IRError(f"{self.kind} is already in a block; use move_before/move_after")
        if anchor.graph is not self.graph:
            raise IRError(f"cannot place {self.kind} next to a node of another graph")
        if anchor.prev is None or anchor.owning_block is None:
            raise IRError(f"cannot place {self.kind} next to {anchor.kind}, which is not in a block's node list")
        return anchor.prev, anchor.owning_block

    def _link_after(self, prev: Node, block: Block) -> Node:
        nxt = prev.next
        assert nxt is not None, "a placed node always has a successor"
        self.prev, self.next, self.owning_block = prev, nxt, block
        prev.next = self
        nxt.prev = self
        block._assign_position(self)
        return self

    def _unlink(self) -> None:
        if self.next is None or self.prev is None:
            return
        self.prev.next = self.next
        self.next.prev = self.prev
        self.next = self.prev = None
        self.owning_block = None

    def destroy(self) -> None:
        """Remove this node, its blocks and its outputs; its outputs must have no uses left."""
        for value in self.outputs:
            if value.uses:
                users = ", ".join(str(u.user.kind) for u in value.uses)
                raise IRError(f"cannot destroy {self.kind}: output %{value.debug_name} is still used by {users}")
        for value in self.outputs:  # erase_output's work without renumbering what goes anyway
            if value._name is not None:
                value.set_debug_name(None)
        self.outputs = ()
        self.remove_all_inputs()
        while self.blocks:
            self.erase_block(len(self.blocks) - 1)
        self._unlink()
        self.graph._all_nodes.discard(self)

    # ---- inputs by schema name -----------------------------------------------------------------------------
    @property
    def schema(self):
        """The FunctionSchema matching this node's kind and input types (seed: "Node overloading")."""
        found = self.maybe_schema()
        if found is None:
            types = ", ".join(str(v.type) for v in self.inputs)
            raise SchemaError(f"no schema of {self.kind} matches the inputs ({types})")
        return found

    def maybe_schema(self):
        if self._schema is None:
            self._schema = operator_hook.find_schema_for_node(self)
        return self._schema

    def matches(self, schema_text: str) -> bool:
        """Whether this node's kind and input types fit the schema written as text."""
        # deferred: imports torch, and `import tsjit` (which loads this module) stays torch-free
        from tsjit.ir.schema import parse_schema

        schema = parse_schema(schema_text)
        return self.kind == schema.name and operator_hook.node_matches_schema(self, schema)

    def named_input(self, name: str) -> Value:
        return self.inputs[self.schema.argument_index(name)]

    def is_constant(self, name: str) -> bool:
        return self.named_input(name).node.kind is prim.Constant

    def get(self, name: str) -> Any:
        """The constant value of input `name`, or None when it is not a constant."""
        # deferred: imports torch, and `import tsjit` (which loads this module) stays torch-free
        from tsjit.ir.constants import constant_value

        value = self.named_input(name)
        return constant_value(value.node) if value.node.kind is prim.Constant else None

    # ---- attributes ----------------------------------------------------------------------------------------
    def has_attribute(self, name: str | Symbol) -> bool:
        return attribute_symbol(name) in self._attributes

    def attribute_names(self) -> list[Symbol]:
        return list(self._attributes)

    def kind_of(self, name: str | Symbol) -> str:
        return self._attribute(name)[0]

    def held_graphs(self) -> list[tuple[str, Graph]]:
        """The graphs this node holds in attributes (a FusionGroup's `Subgraph`, fork and closure bodies), each
        labelled by its attribute name (`name[i]` within a graph-list attribute)."""
        held: list[tuple[str, Graph]] = []
        for name, (kind, value) in self._attributes.items():
            if kind == "g":
                held.append((name.name, value))
            elif kind == "gs":
                held += [(f"{name.name}[{index}]", graph) for index, graph in enumerate(value)]
        return held

    def remove_attribute(self, name: str | Symbol) -> Node:
        del self._attributes[attribute_symbol(name)]
        self._schema = None  # an `overload` attribute decides the schema (ops/matching.py, "exact overloads")
        return self

    def copy_attributes(self, other: Node) -> Node:
        """Replace this node's attributes with copies of `other`'s (graph attributes are deep-copied). Entries
        holding immutable or shared values are shared themselves, as TorchScript's copies share IValues: constant
        pooling tells enum constants apart by that identity."""
        self._attributes = {k: _copy_entry(entry) for k, entry in other._attributes.items()}
        self._schema = None
        return self

    def _attribute(self, name: str | Symbol) -> tuple[str, Any]:
        found = self._attributes.get(attribute_symbol(name))
        if found is None:
            raise IRError(f"{self.kind} has no attribute {attribute_symbol(name).name!r}")
        return found

    def _get_attribute(self, name: str | Symbol, kind: str) -> Any:
        actual, value = self._attribute(name)
        if actual != kind:
            raise IRError(f"attribute {attribute_symbol(name).name!r} of {self.kind} is of kind {actual}, not {kind}")
        return value

    def _set_attribute(self, name: str | Symbol, kind: str, value: Any) -> Node:
        self._attributes[attribute_symbol(name)] = (kind, value)
        self._schema = None
        return self

    def i(self, name):
        return self._get_attribute(name, "i")

    def f(self, name):
        return self._get_attribute(name, "f")

    def c(self, name):
        return self._get_attribute(name, "c")

    def s(self, name):
        return self._get_attribute(name, "s")

    def t(self, name):
        return self._get_attribute(name, "t")

    def g(self, name):
        return self._get_attribute(name, "g")

    def ty(self, name):
        return self._get_attribute(name, "ty")

    def ival(self, name):
        return self._get_attribute(name, "ival")

    def is_(self, name):
        return self._get_attribute(name, "is")

    def fs(self, name):
        return self._get_attribute(name, "fs")

    def cs(self, name):
        return self._get_attribute(name, "cs")

    def ss(self, name):
        return self._get_attribute(name, "ss")

    def ts(self, name):
        return self._get_attribute(name, "ts")

    def gs(self, name):
        return self._get_attribute(name, "gs")

    def tys(self, name):
        return self._get_attribute(name, "tys")

    def i_(self, name, value: int) -> Node:
        return self._set_attribute(name, "i", int(value))

    def f_(self, name, value: float) -> Node:
        return self._set_attribute(name, "f", float(value))

    def c_(self, name, value: complex) -> Node:
        return self._set_attribute(name, "c", complex(value))

    def s_(self, name, value: str) -> Node:
        return self._set_attribute(name, "s", str(value))

    def t_(self, name, value) -> Node:
        return self._set_attribute(name, "t", value)

    def g_(self, name, value: Graph) -> Node:
        return self._set_attribute(name, "g", value)

    def ty_(self, name, value) -> Node:
        return self._set_attribute(name, "ty", value)

    def ival_(self, name, value) -> Node:
        return self._set_attribute(name, "ival", value)

    def is__(self, name, value) -> Node:
        return self._set_attribute(name, "is", [int(v) for v in value])

    def fs_(self, name, value) -> Node:
        return self._set_attribute(name, "fs", [float(v) for v in value])

    def cs_(self, name, value) -> Node:
        return self._set_attribute(name, "cs", [complex(v) for v in value])

    def ss_(self, name, value) -> Node:
        return self._set_attribute(name, "ss", [str(v) for v in value])

    def ts_(self, name, value) -> Node:
        return self._set_attribute(name, "ts", list(value))

    def gs_(self, name, value) -> Node:
        return self._set_attribute(name, "gs", list(value))

    def tys_(self, name, value) -> Node:
        return self._set_attribute(name, "tys", list(value))

    # ---- misc ----------------------------------------------------------------------------------------------
    def clone_from(self, other: Node) -> Node:
        """Copy `other`'s attributes and source metadata onto this node."""
        self.copy_attributes(other)
        self.source_range, self.scope, self.callstack = other.source_range, other.scope, other.callstack
        return self

    def dump(self) -> None:
        sys.stdout.write(_node_text(self))

    def __repr__(self) -> str:
        return _node_text(self).rstrip("\n")


class Block:
    """A list of nodes with inputs (a prim::Param node's outputs) and outputs (a prim::Return node's inputs)."""

    __slots__ = ("graph", "owning_node", "param_node", "return_node")

    def __init__(self, graph: Graph, owning_node: Node | None):
        self.graph = graph
        self.owning_node = owning_node
        self.param_node = Node(graph, prim.Param)
        self.return_node = Node(graph, prim.Return)
        self.param_node.owning_block = self.return_node.owning_block = self
        self.param_node._position, self.return_node._position = -math.inf, math.inf
        # the return node is the sentinel of the circular node list
        self.return_node.next = self.return_node.prev = self.return_node
        graph._all_blocks.add(self)

    @property
    def owning_graph(self) -> Graph:
        return self.graph

    @property
    def inputs(self) -> tuple[Value, ...]:
        return self.param_node.outputs

    @property
    def outputs(self) -> tuple[Value, ...]:
        return self.return_node.inputs

    def all_nodes(self) -> Iterator[Node]:
        """Every node of this block in program order, entering nested blocks right after their owning node."""
        return _walk(self)

    def nodes(self) -> Iterator[Node]:
        """The nodes in order; the current node may be destroyed or moved while iterating."""
        node = self.return_node.next
        while node is not self.return_node and node is not None:
            following = node.next
            yield node
            node = following

    def reverse_nodes(self) -> Iterator[Node]:
        node = self.return_node.prev
        while node is not self.return_node and node is not None:
            preceding = node.prev
            yield node
            node = preceding

    def is_empty(self) -> bool:
        return self.return_node.next is self.return_node

    def add_input(self, name: str | None = None, type_=None) -> Value:
        return self.insert_input(len(self.param_node.outputs), name, type_)

    def insert_input(self, i: int, name: str | None = None, type_=None) -> Value:
        value = self.param_node.insert_output(i, type_)
        if name:
            value.set_debug_name(name)
        return value

    def erase_input(self, i: int) -> None:
        self.param_node.erase_output(i)

    def register_output(self, value: Value) -> int:
        self.return_node.add_input(value)
        return len(self.return_node.inputs) - 1

    def insert_output(self, i: int, value: Value) -> int:
        self.return_node.insert_input(i, value)
        return i

    def erase_output(self, i: int) -> None:
        self.return_node.remove_input(i)

    def replace_output(self, i: int, value: Value) -> None:
        self.return_node.replace_input(i, value)

    def append_node(self, node: Node) -> Node:
        return node.insert_before(self.return_node)

    def prepend_node(self, node: Node) -> Node:
        first = self.return_node.next
        return node.insert_after(self.return_node) if first is None or self.is_empty() else node.insert_before(first)

    def clone_from(self, source: Block, value_map: Callable[[Value], Value]) -> None:
        """Append copies of `source`'s inputs, nodes and outputs; `value_map` maps values from outside `source`."""
        local: dict[Value, Value] = {}

        def lookup(value: Value) -> Value:
            return local[value] if value in local else value_map(value)

        for old in source.inputs:
            local[old] = self.add_input().copy_metadata(old)
        create_clone, last = self.graph.create_clone, self.return_node.prev
        assert last is not None, "a block's node list is circular"
        for old_node in source.nodes():
            # a fresh clone of this graph goes straight after the last node (what append_node checks holds)
            last = create_clone(old_node, lookup)._link_after(last, self)
            local.update(zip(old_node.outputs, last.outputs))
        for old in source.outputs:
            self.register_output(lookup(old))

    def _assign_position(self, node: Node) -> None:
        """Give a newly linked node a position between its neighbours, renumbering the block if none is free."""
        # the list is circular through the return node, which is "before the first" as well as "after the last"
        assert node.prev is not None and node.next is not None, "positions are assigned to linked nodes"
        low = -math.inf if node.prev is self.return_node else node.prev._position
        high = node.next._position
        if low == -math.inf and high == math.inf:
            node._position = 0
        elif high == math.inf:
            node._position = low + _POSITION_INTERVAL
        elif low == -math.inf:
            node._position = high - _POSITION_INTERVAL
        elif high - low > 1:
            node._position = (low + high) // 2
        else:
            self._renumber()

    def _renumber(self) -> None:
        for index, node in enumerate(self.nodes()):
            node._position = index * _POSITION_INTERVAL

    def _destroy(self) -> None:
        self.return_node.remove_all_inputs()
        for node in list(self.reverse_nodes()):
            node.destroy()
        self.param_node.destroy()
        self.return_node.graph._all_nodes.discard(self.return_node)
        self.graph._all_blocks.discard(self)

    def __repr__(self) -> str:
        return f"<Block of {self.owning_node.kind if self.owning_node else 'graph'}>"


class Graph:
    """The outermost container of a program: a top-level block plus the bookkeeping of names and ids."""

    def __init__(self):
        self._all_nodes: set[Node] = set()
        self._all_blocks: set[Block] = set()
        self._names: dict[str, Value] = {}
        self._name_base_suffix: dict[str, int] = {}
        self._unique = 0
        self.block = Block(self, None)
        self._insert_block = self.block
        self._insert_before = self.block.return_node

    def _next_unique(self) -> int:
        unique = self._unique
        self._unique += 1
        return unique

    def _fresh_name_for(self, name: str) -> str:
        """A `base.N` name for a value that loses `name` to another value."""
        base, suffix = name, 1
        head, dot, tail = name.rpartition(".")
        if dot and tail.isdigit():
            base, suffix = head, int(tail)
        if base in self._name_base_suffix:
            suffix = max(suffix, self._name_base_suffix[base] + 1)
        candidate = f"{base}.{suffix}"
        while candidate in self._names:
            suffix += 1
            candidate = f"{base}.{suffix}"
        self._name_base_suffix[base] = suffix + 1  # TorchScript remembers the suffix after the one it used
        return candidate

    # ---- inputs and outputs --------------------------------------------------------------------------------
    @property
    def inputs(self) -> tuple[Value, ...]:
        return self.block.inputs

    @property
    def outputs(self) -> tuple[Value, ...]:
        return self.block.outputs

    @property
    def param_node(self) -> Node:
        return self.block.param_node

    @property
    def return_node(self) -> Node:
        return self.block.return_node

    def add_input(self, name: str | None = None, type_=None) -> Value:
        return self.block.add_input(name, type_)

    def insert_input(self, i: int, name: str | None = None, type_=None) -> Value:
        return self.block.insert_input(i, name, type_)

    def erase_input(self, i: int) -> None:
        self.block.erase_input(i)

    def register_output(self, value: Value) -> int:
        return self.block.register_output(value)

    def erase_output(self, i: int) -> None:
        self.block.erase_output(i)

    def nodes(self) -> Iterator[Node]:
        return self.block.nodes()

    def all_nodes(self) -> Iterator[Node]:
        """Every node in program order, entering nested blocks right after their owning node."""
        return _walk(self.block)

    def nodes_with_held_graphs(self) -> Iterator[Node]:
        """Every node in program order, each followed by its blocks' nodes and the nodes of the graphs it holds in
        attributes (what a reader of the whole program sees: drawings, archive checks)."""
        for node in self.all_nodes():
            yield node
            for _, held in node.held_graphs():
                yield from held.nodes_with_held_graphs()

    # ---- creating and inserting nodes ----------------------------------------------------------------------
    def create(self, kind: Symbol | str, inputs=(), num_outputs: int = 1) -> Node:
        """A new node of `kind` (not yet in any block)."""
        node = Node(self, kind)
        for value in inputs:
            node.add_input(value)
        node.outputs = tuple(Value(node, offset) for offset in range(num_outputs))
        return node

    def create_clone(self, node: Node, value_map: Callable[[Value], Value], copy_blocks: bool = True) -> Node:
        """A copy of `node` (from any graph) with inputs mapped through `value_map`; not yet in a block.

        Copying graphs (Graph.copy, inlining, every plan) runs this for every node, so it fills the new node's
        input and output lists itself instead of going through add_input and add_output: a fresh node has no
        slots to renumber and its outputs take their types at once."""
        clone = Node(self, node.kind)
        inputs = []
        for offset, old in enumerate(node.inputs):
            value = value_map(old)
            if type(value) is not Value or value.node.graph is not self:
                _check_same_graph(self, value, f"input of {node.kind}")
            inputs.append(value)
            value.uses.append_new(Use(clone, offset))
        clone.inputs = tuple(inputs)
        outputs = []
        for offset, old in enumerate(node.outputs):
            value = Value(clone, offset, old.type)
            outputs.append(value)
            if old._name is not None:
                value.set_debug_name(old._name)
        clone.outputs = tuple(outputs)
        clone.clone_from(node)
        if node._schema is not None and _same_types(clone.inputs, node.inputs):
            clone._schema = node._schema  # the same kind, attributes and input types: the same schema
        if copy_blocks:
            for block in node.blocks:
                clone.add_block().clone_from(block, value_map)
        return clone

    def insert_node(self, node: Node) -> Node:
        """Insert an unplaced node at the insertion point."""
        return node.insert_before(self._insert_before)

    def insert(self, op: Symbol | str, args=(), kwargs=None, source_range=None):
        """Insert a call of builtin `op`, matching its overload and turning Python values into constants.

        `graph.insert(aten.add, (x, 3))` picks `aten::add.Tensor` for a Tensor `x` (seed: "Graph manipulation").
        Returns the output Value (a tuple of Values when the operator has several outputs).
        """
        return operator_hook.insert_operator_call(self, op, args, kwargs or {}, source_range=source_range)

    def insert_constant(self, value: Any, type_=None, source_range=None) -> Value:
        """A prim::Constant holding `value`, inserted at the insertion point."""
        # deferred: imports torch, and `import tsjit` (which loads this module) stays torch-free
        from tsjit.ir.constants import create_constant

        node = self.insert_node(create_constant(self, value, type_))
        node.source_range = source_range
        return node.output()

    @property
    def insert_point(self) -> Node:
        """The node before which `insert_node` places new nodes."""
        return self._insert_before

    def set_insert_point(self, where: Node | Block) -> None:
        """Insert before a node, or at the end of a block."""
        target = where.return_node if isinstance(where, Block) else where
        if target.graph is not self:
            raise IRError("the insertion point must be in this graph")
        self._insert_before = target
        self._insert_block = target.owning_block

    @contextlib.contextmanager
    def insert_point_guard(self, where: Node | Block):
        """Temporarily move the insertion point (restored on exit, also on errors)."""
        saved = self._insert_before
        self.set_insert_point(where)
        try:
            yield self
        finally:
            self.set_insert_point(saved)

    # ---- whole-graph operations ----------------------------------------------------------------------------
    def copy(self) -> Graph:
        """A deep copy; values keep their names, temporaries are renumbered."""
        new = Graph()
        mapping: dict[Value, Value] = {}
        new.block.clone_from(self.block, lambda v: mapping[v])
        return new

    def lint(self) -> bool:
        """Check every invariant of the IR; raise IRError naming the offending node otherwise."""
        # deferred: imports torch, and `import tsjit` (which loads this module) stays torch-free
        from tsjit.ir.lint import lint_graph

        lint_graph(self)
        return True

    def dump(self) -> None:
        sys.stdout.write(str(self))

    def str(self, print_source_locations: bool = True) -> builtins.str:
        """The graph's text; as torch's `Graph.str`, with a `# file:line:col` comment after every node that comes
        from a file unless asked not to."""
        # deferred: imports torch, and `import tsjit` (which loads this module) stays torch-free
        from tsjit.ir.printer import print_graph

        return print_graph(self, print_source_locations)

    def __str__(self) -> builtins.str:
        return self.str()

    def __repr__(self) -> builtins.str:
        return str(self)


# ---- helpers ---------------------------------------------------------------------------------------------------
def _walk(block: Block) -> Iterator[Node]:
    for node in block.nodes():
        yield node
        for inner in node.blocks:
            yield from _walk(inner)


def _ancestors_in_common_block(a: Node, b: Node) -> tuple[Node, Node]:
    """The ancestors of `a` and `b` (or themselves) that sit in one common block."""
    chain_a = _ancestor_chain(a)
    blocks_a = {id(node.owning_block): node for node in chain_a}
    for node in _ancestor_chain(b):
        if id(node.owning_block) in blocks_a:
            return blocks_a[id(node.owning_block)], node
    raise IRError(f"{a.kind} and {b.kind} are not in one graph's block tree")


def _ancestor_chain(node: Node) -> list[Node]:
    """`node`, then the node owning its block, and so on up to the top-level block."""
    chain = []
    current: Node | None = node
    while current is not None:
        chain.append(current)
        block = current.owning_block
        current = block.owning_node if block is not None else None
    return chain


def _check_same_graph(graph: Graph, value: Value, what: str) -> None:
    if not isinstance(value, Value):
        raise IRError(f"{what} must be a Value, got {type(value).__name__}")
    if value.node.graph is not graph:
        raise IRError(f"%{value.debug_name} belongs to another graph and cannot be used as {what}")


def _same_types(values: tuple[Value, ...], others: tuple[Value, ...]) -> bool:
    """Whether the values have the same types, pairwise (a copy's types are mostly the very same objects)."""
    for value, other in zip(values, others):
        if value.type is not other.type and value.type != other.type:
            return False
    return True


def _is_valid_name(name: str) -> bool:
    return not name.isdigit()


def _copy_entry(entry: tuple[str, Any]) -> tuple[str, Any]:
    kind, value = entry
    copied = _copy_attribute(kind, value)
    return entry if copied is value else (kind, copied)


def _copy_attribute(kind: str, value: Any) -> Any:
    if kind == "g":
        return value.copy()
    if kind == "gs":
        return [g.copy() for g in value]
    if kind in ("is", "fs", "cs", "ss", "ts", "tys"):
        return list(value)
    return value


def _tensor_type():
    """The unrefined Tensor type, every new value's type until it gets its own (remembered: values are many)."""
    if not _TENSOR_TYPE:
        # deferred: imports torch, and `import tsjit` (which loads this module) stays torch-free
        from tsjit.ir.types import TensorType

        _TENSOR_TYPE.append(TensorType.get())
    return _TENSOR_TYPE[0]


_TENSOR_TYPE: list = []


def _node_text(node: Node) -> str:
    # deferred: imports torch, and `import tsjit` (which loads this module) stays torch-free
    from tsjit.ir.printer import print_node

    return print_node(node)
