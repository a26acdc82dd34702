"""A reader of MMKV stores written from docs/format.md alone, as a suite driver.

It follows the document's sections: the meta structure (4), the loader's decision (6), the
AES-CFB-128 stream (5), records and the expire suffix (3.3, 3.5) and which keys are live
(6.3). It uses no code of this project but the protocol helper (suite_protocol.py).
Default strategy: discard (section 6, step 7). With SPEC_READER_STRATEGY=recover in the
environment it reads as OnErrorRecover (step 8) and says so ("strategy": "recover"), so the
grader judges damaged cases by their recover answers.
"""
import json
import os
import struct
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from suite_protocol import serve  # noqa: E402

META_SIZE = 112
DEFAULT_PAGE = 4096


class BadStore(Exception):
    """The region does not parse: the store is refused (section 6.5)."""


def varint(buf, pos, end):
    """Reads a varint of up to 10 bytes at pos (sections 3.2, 3.6); returns (low 32 bits, next
    pos)."""
    value = 0
    for i in range(10):
        if pos >= end:
            raise BadStore("varint runs past the region")
        b = buf[pos]
        pos += 1
        value |= (b & 0x7F) << (7 * i)
        if not b & 0x80:
            return value & 0xFFFFFFFF, pos
    raise BadStore("varint longer than 10 bytes")


def decode(region, greedy):
    """Records after the item-size holder (3.2, 3.3): key -> value, the last record winning."""
    records = {}
    end = len(region)
    try:
        _, pos = varint(region, 0, end)  # 3.2: the holder, 1 to 10 bytes, its value ignored
    except BadStore:
        if greedy:
            return records
        raise
    while pos < end:
        try:
            klen, p = varint(region, pos, end)
            if klen == 0:  # 3.6: an empty key has no value part
                pos = p
                continue
            if p + klen > end:
                raise BadStore("key runs past the region")
            key = bytes(region[p:p + klen])
            p += klen
            vlen, p = varint(region, p, end)
            if p + vlen > end:
                raise BadStore("value runs past the region")
            value = bytes(region[p:p + vlen])
            pos = p + vlen
        except BadStore:
            if greedy:
                break
            raise
        records[key] = value
    return records


def read_meta(case_dir):
    """The meta structure (section 4), zero-filled when missing or short (6, step 1)."""
    try:
        with open(os.path.join(case_dir, "store.crc"), "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        raw = b""
    n = len(raw)
    page = n if n >= DEFAULT_PAGE and n & (n - 1) == 0 else DEFAULT_PAGE  # 6.1
    m = raw[:META_SIZE].ljust(META_SIZE, b"\0")
    crc, version, _seq = struct.unpack_from("<III", m, 0)
    iv = m[12:28]
    actual, last_size, last_crc = struct.unpack_from("<III", m, 28)
    (flags,) = struct.unpack_from("<Q", m, 104)
    return {"crc": crc, "version": version, "iv": iv, "actual": actual,
            "last_size": last_size, "last_crc": last_crc, "flags": flags, "page": page}


def choose_region(data, meta, recover):
    """Section 6's decision: (region bytes or None for an empty store, greedy, flags, meta
    version as read)."""
    page = meta["page"]
    mapped = max(1, -(-len(data) // page)) * page
    mem = data.ljust(mapped, b"\0")
    header = struct.unpack_from("<I", mem, 0)[0]
    v = meta["version"]
    flags = meta["flags"] if v >= 4 else 0
    if v >= 7:
        v, flags = 3, 0
    actual = meta["actual"] if v >= 3 else header

    def fits(n):
        return n + 4 <= mapped

    def crc(n):
        return zlib.crc32(mem[4:4 + n]) & 0xFFFFFFFF

    chosen = None
    if fits(actual) and crc(actual) == meta["crc"]:
        chosen = actual
    elif v >= 3:
        if header != actual and fits(header) and crc(header) == meta["crc"]:
            chosen = header
        elif fits(meta["last_size"]) and crc(meta["last_size"]) == meta["last_crc"]:
            chosen = meta["last_size"]
    if chosen is not None:
        return mem[4:4 + chosen], False, flags, v
    if not recover:
        return None, False, flags, v
    size = actual if fits(actual) else mapped - 4
    return mem[4:4 + size], True, flags, v


def decrypt(region, key, aes256, iv):
    """The region as one AES-CFB-128 stream (section 5)."""
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms
    from cryptography.hazmat.decrepit.ciphers.modes import CFB

    size = 32 if aes256 else 16
    key = key[:size].ljust(size, b"\0")
    d = Cipher(algorithms.AES(key), CFB(iv)).decryptor()
    return d.update(bytes(region)) + d.finalize()


def read_store(case_dir, opening, recover):
    with open(os.path.join(case_dir, "store"), "rb") as f:
        data = f.read()
    meta = read_meta(case_dir)
    region, greedy, flags, v = choose_region(data, meta, recover)
    if not region:  # 6, step 10: size 0 is an empty store
        return {}
    key_hex = opening.get("crypt_key_hex")
    if key_hex:
        key = bytes.fromhex(key_hex)
        iv = meta["iv"] if v >= 2 else key[:16].ljust(16, b"\0")
        region = decrypt(region, key, opening.get("aes256"), iv)
    records = decode(region, greedy)
    expiring = bool(flags & 1)
    now = int(time.time())
    live = {}
    for k, val in records.items():
        if not val:  # removal record
            continue
        if expiring:
            if len(val) < 4:  # too short for a suffix: kept as it is (3.5.1)
                live[k] = val
                continue
            (t,) = struct.unpack("<I", val[-4:])
            if t != 0 and t <= now:
                continue
            val = val[:-4]
        live[k] = val
    return live


RECOVER = os.environ.get("SPEC_READER_STRATEGY") == "recover"


def answer(case_dir):
    try:
        with open(os.path.join(case_dir, "case.json")) as f:
            opening = json.load(f)["open"]
        live = read_store(case_dir, opening, recover=RECOVER)
    except (BadStore, OSError, ValueError) as e:
        return {"error": str(e)}
    out = {"entries": [{"key": k.hex(), "value": v.hex()} for k, v in sorted(live.items())]}
    if RECOVER:
        out["strategy"] = "recover"
    return out


if __name__ == "__main__":
    serve(answer)
