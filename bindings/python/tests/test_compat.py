"""The drop-in module: same shapes as `mmkv_parser`, and right where that parser is wrong.

The cases the old parser gets wrong (each has a test here): values of key-expiring stores (it
leaves the 4-byte expire suffix on), negative and zero integers (read as huge unsigned numbers
and as ""), expired keys (shown as live), keys that are not UTF-8 (the read stops there), and
plaintext stores with a random IV after clearAll() (refused as encrypted). When
MMKV_PARSER_PATH names the old parser's `mmkv_parser/__init__.py`, `test_against_mmkv_parser`
also runs it on every corpus store.
"""

import os
import struct

import pytest

import mmkv_reader
from mmkv_reader import compat

from conftest import CORPUS, corpus_stores, crypt, expected
from storebuild import delimited, load_old_parser, record, varint, write_store

STORES = corpus_stores()


def entries_of(store, ty):
    return [e for e in store["entries"] if e["type"] == ty]


def test_shapes():
    p = str(CORPUS / "v2.4.2" / "plain")
    entries = compat.read_entries(p)
    assert isinstance(entries, list) and entries
    assert all(isinstance(k, str) and isinstance(v, bytes) for k, v in entries)
    d = compat.read_dict(p)
    assert isinstance(d, dict) and all(isinstance(k, str) for k in d)
    carved = compat.carve_slack(str(CORPUS / "v2.4.2" / "trimmed"))
    assert carved and all(isinstance(c, compat.CarvedRecord) for c in carved)
    c = carved[0]
    assert isinstance(c.offset, int) and isinstance(c.key, str)
    assert isinstance(c.container, bytes) and isinstance(c.live_key, bool)
    assert [c.offset for c in carved] == sorted(c.offset for c in carved)
    assert compat.decode_value(b"") is None
    assert compat.decode_value(b"\x05hello") == "hello"


def test_expiring_store_values_lose_the_suffix():
    checked = 0
    for tag, store, now in STORES:
        if not store["key_expire"]:
            continue
        path = tag / store["id"]
        c = crypt(store)
        s = mmkv_reader.Store(path, now=now, **c)
        last = dict(compat.read_entries(path, key=c.get("crypt_key"), aes256=c.get("aes256", False)))
        for e in store["entries"]:
            assert last[e["key"]] == s.raw_value(e["key"])
            checked += 1
        for e in entries_of(store, "i32") + entries_of(store, "i64"):
            d = compat.read_dict(path, key=c.get("crypt_key"), aes256=c.get("aes256", False))
            assert d[e["key"]] == int(e["value"]), (tag.name, e)
    assert checked > 1000


def test_negative_and_zero_integers():
    neg = zero = 0
    for tag, store, _ in STORES:
        if store["crypt_key_hex"] or store["count"] == 0:
            continue
        d = compat.read_dict(tag / store["id"])
        for e in entries_of(store, "i32") + entries_of(store, "i64"):
            v = int(e["value"])
            if v < 0:
                assert d[e["key"]] == v, (tag.name, store["id"], e)
                neg += 1
            elif v == 0:
                assert d[e["key"]] == 0 and not isinstance(d[e["key"]], str), (tag.name, e)
                zero += 1
    assert neg > 100 and zero > 10, (neg, zero)


def test_expired_keys_are_not_live(tmp_path):
    # (The corpus has none left: the official getters replace an expired key by a deletion
    # marker when they meet it.) Expire times 1000 (long past) and 4,000,000,000 (year 2096).
    recs = record("gone", varint(1), expire=1000) + record("kept", varint(2), expire=4_000_000_000)
    p = write_store(tmp_path / "s", recs + record("never", varint(3), expire=0), version=4, key_expire=True)
    assert compat.read_dict(str(p)) == {"kept": 2, "never": 3}
    assert compat.read_entries(str(p)) == [("gone", b"\x01"), ("kept", b"\x02"), ("never", b"\x03")]
    statuses = [(r.key, r.status) for r in mmkv_reader.Store(p).history()]
    assert statuses == [("gone", "expired"), ("kept", "live"), ("never", "live")]


def test_keys_that_are_not_utf8(tmp_path):
    raw = b"\xff\xfek"
    p = write_store(tmp_path / "s", record(raw, varint(1)) + record("after", varint(2)))
    entries = compat.read_entries(str(p))
    assert [k.encode("utf-8", "surrogateescape") for k, _ in entries] == [raw, b"after"]
    d = compat.read_dict(str(p))
    assert d == {raw.decode("utf-8", "surrogateescape"): 1, "after": 2}
    s = mmkv_reader.Store(p)
    assert s.keys(raw=True) == [b"after", raw]
    assert s.get_i32(raw) == 1 and s.get_i32(raw.decode("utf-8", "surrogateescape")) == 1


def test_read_dict_is_a_plain_dict_in_first_insertion_order(tmp_path):
    # Last write wins, a removal takes the key out, the order is each live key's first
    # insertion after its last removal (as the old module's dict builds it); nothing but the
    # store's keys (read_dict builds its dict with a layout key it removes).
    recs = (
        record("a", varint(1)) + record("b", varint(2)) + record("a", varint(3))
        + record("c", varint(4)) + record("b", b"") + record("d", varint(5)) + record("b", varint(6))
    )
    p = write_store(tmp_path / "s", recs)
    d = compat.read_dict(str(p))
    assert type(d) is dict and 0 not in d and len(d) == 4
    assert list(d.items()) == [("a", 3), ("c", 4), ("d", 5), ("b", 6)]
    only_removed = write_store(tmp_path / "r", record("a", varint(1)) + record("a", b""))
    assert compat.read_dict(str(only_removed)) == {} and type(compat.read_dict(str(only_removed))) is dict


def test_reads_of_stores_of_different_sizes_in_turn(tmp_path):
    # The drop-in reuses its read buffer from one call to the next: a small store read after a
    # large one (and the other way round) returns exactly its own records.
    big_recs = [(f"key{i}", f"value {i} " * 20) for i in range(3000)]
    big = write_store(tmp_path / "big", b"".join(record(k, delimited(v.encode())) for k, v in big_recs))
    small = write_store(tmp_path / "small", record("only", varint(7)))
    for _ in range(2):
        assert compat.read_dict(str(big)) == dict(big_recs)
        assert compat.read_dict(str(small)) == {"only": 7}
        assert compat.read_entries(str(small)) == [("only", b"\x07")]
    # The same path rewritten shorter between two reads.
    write_store(tmp_path / "big", record("short", varint(1)))
    assert compat.read_entries(str(big)) == [("short", b"\x01")]


def test_random_iv_in_a_plaintext_store_is_not_encryption():
    seen = 0
    for tag, store, _ in STORES:
        if store["id"] != "cleared":
            continue
        iv = (tag / "cleared.crc").read_bytes()[12:28]
        if any(iv):
            seen += 1
            assert compat.read_dict(str(tag / "cleared")) == {}
            assert compat.read_dict(str(tag / "cleared"), key="ignored-for-plaintext") == {}
    assert seen > 0


def test_key_is_ignored_for_a_plaintext_store():
    p = str(CORPUS / "v2.4.2" / "plain")
    # (repr: the store holds NaNs, which compare unequal to themselves)
    assert repr(compat.read_dict(p, key="some key")) == repr(compat.read_dict(p))
    assert compat.read_entries(p, key="some key") == compat.read_entries(p)


def test_encrypted_carving_with_the_key():
    p = str(CORPUS / "v2.4.2" / "aes128")
    with pytest.raises(compat.MMKVError):
        compat.carve_slack(p)
    assert isinstance(compat.carve_slack(p, key="mmkv-conformance"), list)


def old_value_is_right(ty, value, old):
    """Whether the old parser's read_dict value is the manifest value (types it can express)."""
    want = expected(ty, value)
    if ty in ("string", "bytes"):
        return type(old) is type(want) and old == want
    if ty in ("bool", "i32", "u32", "i64", "u64"):
        return isinstance(old, int) and old == int(want)
    return False  # floats and vectors: the old parser returns bytes or str


def test_against_mmkv_parser():
    path = os.environ.get("MMKV_PARSER_PATH")
    if not path:
        pytest.skip("MMKV_PARSER_PATH is not set (see bindings/python/README.md)")
    old = load_old_parser(path)
    same = fixed = empty_strings = big_u64 = 0
    refused = []
    for tag, store, _ in STORES:
        path = str(tag / store["id"])
        c = crypt(store)
        ours = compat.read_dict(path, key=c.get("crypt_key"), aes256=c.get("aes256", False))
        try:
            theirs = old.read_dict(path, key=c.get("crypt_key"), aes256=c.get("aes256", False))
        except old.MMKVError:
            theirs = None
            refused.append(f"{tag.name}/{store['id']}")
        for e in store["entries"]:
            k = e["key"]
            if theirs is not None and k in theirs and old_value_is_right(e["type"], e["value"], theirs[k]):
                if ours[k] == theirs[k] and type(ours[k]) in (type(theirs[k]), bool):
                    same += 1
                elif e["type"] == "string" and e["value"] == "" and ours[k] == 0:
                    empty_strings += 1  # payload 00: 0, False and "" at once; the drop-in says 0
                elif e["type"] == "u64" and int(e["value"]) >= 1 << 63 and ours[k] == int(e["value"]) - (1 << 64):
                    big_u64 += 1  # a 10-byte varint: negative i64 or u64 >= 2**63; the drop-in says i64
                else:
                    raise AssertionError(f"{tag.name}/{store['id']} {k!r}: old {theirs[k]!r}, ours {ours[k]!r}")
            elif theirs is None or not old_value_is_right(e["type"], e["value"], theirs.get(k)):
                fixed += 1
        # Keys the old parser shows that are not live (expired): never in ours.
        for k in (theirs or {}):
            if k not in {e["key"] for e in store["entries"]}:
                assert k not in ours
    print(f"\nold parser right and drop-in identical: {same}; old wrong or missing: {fixed}; "
          f"ambiguous: {empty_strings} empty strings (read as 0), {big_u64} u64 >= 2**63 (read as negative); "
          f"stores it refused: {len(refused)}")
    assert same > 0


def test_fast_decoding_agrees_with_the_full_guess():
    from mmkv_reader import _native

    seen = 0
    for tag, store, now in STORES:
        for r in mmkv_reader.Store(tag / store["id"], now=now, **crypt(store)).history(now=now):
            if r.deletion:
                continue
            assert repr(compat.decode_value(r.value)) == repr(_native._most_likely_slow(r.value)), r
            seen += 1
    for payload in (b"\x00", b"\x01", b"\xff" * 9 + b"\x01", b"\x05hello", b"\x03\x02ab", b"\x08" + b"x" * 7):
        assert repr(compat.decode_value(payload)) == repr(_native._most_likely_slow(payload))
    # One varint of 4 or 8 bytes (also a float reading, never a "round" one), including the
    # non-canonical zeros (also an empty string reading): the integer wins in both decodings.
    four_eight = [b"\x80\x80\x80\x00", b"\x80" * 7 + b"\x00", b"\xff\xff\xff\x7f", b"\xff" * 7 + b"\x7f"]
    for v in range(1 << 21, 1 << 28, 104729):
        four_eight.append(varint(v))
    for v in range(1 << 49, 1 << 56, (1 << 49) // 37 + 1):
        four_eight.append(varint(v))
    for payload in four_eight:
        assert len(payload) in (4, 8)
        assert repr(compat.decode_value(payload)) == repr(_native._most_likely_slow(payload)), payload
    assert seen > 30000
