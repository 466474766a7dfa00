"""Archives written by hand to attack the loader, one per way in: each is small, and each once gave an untyped
error, a hang or unbounded work (issue 15). Shared by the regression tests and the archive fuzzer's corpus."""

from __future__ import annotations

import struct

from tsjit.serialization.archive_writer import ArchiveWriter

PROTO = b"\x80\x02"


def text(value: str) -> bytes:
    """BINUNICODE."""
    data = value.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def module_pickle(class_name: str, attributes: bytes) -> bytes:
    """data.pkl of one `__torch__.<class_name>` object whose state dict pickles as `attributes` (key, value,
    key, value, ... opcodes)."""
    return PROTO + f"c__torch__\n{class_name}\n".encode() + b")\x81}(" + text("training") + b"\x88" + \
        attributes + b"ub."


def archive(source: str, data: bytes, version: bytes = b"3\n", constants: bytes = PROTO + b").",
            **records: bytes) -> bytes:
    writer = ArchiveWriter("hostile")
    writer.write_record("data.pkl", data)
    writer.write_record("code/__torch__.py", source.encode())
    writer.write_record("constants.pkl", constants)
    writer.write_record("version", version)
    for name, record in records.items():
        writer.write_record(name.replace("__", "/"), record)
    return writer.finish()


def header(*declarations: str) -> str:
    return "class M(Module):\n  __parameters__ = []\n  __buffers__ = []\n  training : bool\n" + \
        "".join(f"  {d}\n" for d in declarations)


FORWARD = "  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n    return x\n"


def shared_tuples(levels: int) -> bytes:
    """A tuple of 2 references to a tuple of 2 references to ... (): `levels` memo entries, 2**levels paths
    (the unpickler used to walk them all)."""
    data = b")q\x00"
    for level in range(1, levels + 1):
        data += b"h" + bytes([level - 1]) + b"\x86q" + bytes([level])
    return data


def shared_lists(levels: int) -> bytes:
    """A list of lists L0..Ln where L(k) = [L(k-1), L(k-1)]."""
    data = b"](]q\x00"
    for level in range(1, levels + 1):
        data += b"(h" + bytes([level - 1]) + b"h" + bytes([level - 1]) + b"lq" + bytes([level])
    return data + b"e"


def tensor_pickle(location: str) -> bytes:
    """A module with one tensor attribute `t` over storage data/0 at `location`."""
    storage = b"(" + text("storage") + b"ctorch\nFloatStorage\n" + text("0") + text(location) + b"K\x02tQ"
    tensor = b"ctorch._utils\n_rebuild_tensor_v2\n(" + storage + b"K\x00K\x02\x85K\x01\x85\x89NtR"
    return module_pickle("M", text("t") + tensor)


SETSTATE_SOURCE = header("n : int") + FORWARD + \
    "  def __getstate__(self: __torch__.M) -> Tuple[int, bool]:\n    return (self.n, self.training)\n" + \
    "  def __setstate__(self: __torch__.M, state: Tuple[int, bool]) -> None:\n{body}" + \
    "    self.n = state[0]\n    self.training = state[1]\n"


def setstate_archive(body: str) -> bytes:
    data = PROTO + b"c__torch__\nM\n)\x81K\x05\x88\x86b."
    return archive(SETSTATE_SOURCE.format(body=body), data)


def many_statements(count: int) -> bytes:
    body = "".join(f"    x{i} = torch.add(x, {i})\n" for i in range(count))
    source = header() + "  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n" + body + "    return x\n"
    return archive(source, module_pickle("M", b""))


# name -> (archive, what the error says; None: it loads)
CRAFTED: dict[str, tuple[bytes, str | None]] = {
    "storage on cuda:0": (archive(header("t : Tensor") + FORWARD, tensor_pickle("cuda:0"), data__0=b"\0" * 8),
                          "cuda:0"),
    "storage on a nonsense device": (archive(header("t : Tensor") + FORWARD, tensor_pickle("xyz:7"),
                                             data__0=b"\0" * 8), "xyz:7"),
    "CONSTANTS index of 5,000 digits": (
        archive(header() + "  def forward(self: __torch__.M, x: Tensor) -> Tensor:\n"
                f"    return CONSTANTS.c{'9' * 5000}\n", module_pickle("M", b"")), "CONSTANTS has no entry"),
    "version of 5,000 digits": (archive(header() + FORWARD, module_pickle("M", b""), version=b"9" * 5000),
                                "malformed version"),
    "tuples shared level by level": (
        archive(header("k : Tuple[int, int]") + FORWARD, module_pickle("M", text("k") + shared_tuples(60))),
        "attribute 'k'"),
    "tuples shared level by level, well typed": (
        archive(header("k : Tuple[Any, Any]") + FORWARD, module_pickle("M", text("k") + shared_tuples(60))), None),
    "lists shared level by level": (
        archive(header("k : List[List[int]]") + FORWARD, module_pickle("M", text("k") + shared_lists(60))),
        "attribute 'k'"),
    "int attribute holding a nested list": (
        archive(header("k : int") + FORWARD, module_pickle("M", text("k") + b"](](]ee")), "attribute 'k'"),
    "str attribute holding an int": (
        archive(header("k : str") + FORWARD, module_pickle("M", text("k") + b"K\x01")), "attribute 'k'"),
    "setstate that never ends": (
        setstate_archive("    self.n = 0\n    while self.n > -1:\n      self.n = self.n + 1\n"), "step budget"),
}
