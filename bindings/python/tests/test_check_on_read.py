"""A writer changing the files between two reads: the next read sees the change (check-on-read)."""

import pytest

import mmkv_reader

from storebuild import delimited, record, varint, write_store


def test_append_then_full_write_back(tmp_path):
    p = tmp_path / "s"
    recs = record("a", varint(1)) + record("t", delimited(b"one"))
    write_store(p, recs)
    s = mmkv_reader.Store(p)
    assert s.get_i32("a") == 1 and s.get_string("t") == "one"
    # The writer appends a new value of `a` (same sequence, longer region, new CRC).
    recs += record("a", varint(2))
    write_store(p, recs)
    assert s.get_i32("a") == 2  # no refresh() call: the getter checked the meta itself
    assert s.keys() == ["a", "t"]
    # Full write-back: new sequence, `a` gone, `b` new.
    write_store(p, record("t", delimited(b"two")) + record("b", varint(-5)), sequence=2)
    assert "a" not in s and s.get_i32("a") is None
    assert s.get_string("t") == "two" and s.get_i64("b") == -5
    assert s.meta.sequence == 2
    assert dict(s.items()) == {"b": -5, "t": "two"}


def test_failed_reload_keeps_the_previous_snapshot(tmp_path):
    p = tmp_path / "s"
    recs = record("a", varint(1))
    write_store(p, recs)
    s = mmkv_reader.Store(p)
    assert s.get_i32("a") == 1
    # A writer caught mid-write: the meta's CRC does not match the region.
    write_store(p, recs + record("a", varint(9)), crc=0xDEADBEEF)
    assert s.get_i32("a") == 1
    assert "CRC mismatch" in (s.last_reload_error or "")
    with pytest.raises(mmkv_reader.CorruptStoreError, match="CRC mismatch"):
        s.refresh()
    # The writer finishes: the next read sees its value.
    write_store(p, recs + record("a", varint(9)))
    assert s.get_i32("a") == 9
    assert s.refresh() is False


def test_expiration_follows_the_clock_given(tmp_path):
    p = tmp_path / "s"
    write_store(p, record("x", varint(3), expire=1000) + record("y", varint(4), expire=0), version=4, key_expire=True)
    early = mmkv_reader.Store(p, now=999)
    assert early.get_i32("x") == 3 and early.expire_at("x") == 1000 and early.expire_at("y") == 0
    late = mmkv_reader.Store(p, now=1000)
    assert late.get_i32("x") is None and late.keys() == ["y"]
    assert [(r.key, r.status, r.expire_at) for r in late.history()] == [("x", "expired", 1000), ("y", "live", None)]
