"""Stores written by hand, and the old `mmkv_parser` loaded from a path: shared by the tests and
`bench/bench_vs_mmkv_parser.py` (which is why this is not in `conftest`: no pytest here)."""

import importlib.util
import os
import pathlib
import struct
import zlib


def varint(v):
    """`v` as a protobuf varint (negative numbers as their 64-bit two's complement, 10 bytes)."""
    out = bytearray()
    v &= (1 << 64) - 1
    while True:
        b = v & 0x7F
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def delimited(b):
    """`b` after its varint length."""
    return varint(len(b)) + b


def record(key, payload, expire=None):
    """One record: `payload` is the value payload; `expire` appends the 4-byte expire suffix."""
    if isinstance(key, str):
        key = key.encode()
    value = payload if expire is None else payload + struct.pack("<I", expire)
    return delimited(key) + delimited(value)


def write_store(path, records, version=3, key_expire=False, sequence=1, tail=b"", crc=None, page=4096):
    """Writes a store (data file + `.crc`) like the official library lays it out.

    `records`: concatenated record bytes (see `record`). The item-size holder is 4 bytes, the
    data file is padded to pages of `page` bytes and the `.crc` is one page (a writer on a machine
    with that page size). Writes the data file first, then the meta, each in place (a writer's
    order).
    """
    region = b"\x80\x80\x80\x00" + records
    data = struct.pack("<I", len(region)) + region + tail
    data += b"\0" * (-len(data) % page)
    digest = zlib.crc32(region) if crc is None else crc
    meta = bytearray(page)
    struct.pack_into("<III", meta, 0, digest, version, sequence)
    if version >= 3:
        struct.pack_into("<III", meta, 28, len(region), len(region), digest)
    if version >= 4 and key_expire:
        struct.pack_into("<Q", meta, 104, 1)
    path = pathlib.Path(path)
    with open(path, "r+b" if path.exists() else "wb") as f:
        f.write(data)
        f.truncate(len(data))
    with open(str(path) + ".crc", "r+b" if os.path.exists(str(path) + ".crc") else "wb") as f:
        f.write(bytes(meta))
    return path


def load_old_parser(path):
    """The old `mmkv_parser` module from its `__init__.py` (or its directory)."""
    if os.path.isdir(path):
        path = os.path.join(path, "__init__.py")
    spec = importlib.util.spec_from_file_location("old_mmkv_parser", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
