"""`Store(path, page_size=None|int|"auto"|"host")`: the page size of the machine whose official
loader is followed, as `mmkv --page-size` (default: inferred from the `.crc` length)."""

import pytest

import mmkv_reader
from storebuild import delimited, record, varint, write_store


def truncated_16k(tmp_path):
    """A 16 KiB writer's store of a = 1, b = 2 and z = 4984 zero bytes, its data file cut right
    after the last non-zero byte: it loads only where the file is mapped in pages above 4 KiB."""
    p = tmp_path / "cut"
    head = record("a", b"\x01") + record("b", b"\x02") + delimited(b"z") + varint(4984)
    write_store(p, head + b"\0" * 4984, page=16384)
    with open(p, "r+b") as f:
        f.truncate(8 + len(head))
    assert (tmp_path / "cut.crc").stat().st_size == 16384
    return p


def test_the_writers_page_is_inferred_by_default(tmp_path):
    p = truncated_16k(tmp_path)
    for arg in ({}, {"page_size": None}, {"page_size": "auto"}):
        s = mmkv_reader.Store(str(p), **arg)
        assert s.page_size == 16384
        assert s.page_size_source == "inferred"
        assert "the .crc is 16384 bytes" in s.page_size_note
        assert s.keys() == ["a", "b", "z"]
        assert s.get_bytes("a") is None and s.get_i32("a") == 1
        assert s.raw_value("z") == b"\0" * 4984
        assert "page_size=16384" in repr(s)


def test_a_4k_loader_refuses_the_truncated_16k_store(tmp_path):
    p = truncated_16k(tmp_path)
    with pytest.raises(mmkv_reader.CorruptStoreError, match="does not fit"):
        mmkv_reader.Store(str(p), page_size=4096)
    s = mmkv_reader.Store(str(p), page_size=65536)
    assert (s.page_size, s.page_size_source) == (65536, "given")
    assert s.keys() == ["a", "b", "z"]
    assert [r.key for r in s.history()] == ["a", "b", "z"]


def test_host_and_a_crc_of_no_writer_page(tmp_path):
    # an intact 16 KiB store: it reads the same at every page size
    p = write_store(tmp_path / "s", record("k", b"\x07"), page=16384)
    host = mmkv_reader.Store(str(p), page_size="host")
    assert host.get_i32("k") == 7
    assert host.page_size_source == "host"
    assert host.page_size in (4096, 16384, 65536)
    with open(str(p) + ".crc", "r+b") as f:
        f.truncate(8192)
    s = mmkv_reader.Store(str(p))
    assert (s.page_size, s.page_size_source) == (host.page_size, "host_not_inferred")
    assert s.get_i32("k") == 7
    assert "8192 bytes" in s.page_size_note


@pytest.mark.parametrize("bad", [0, 1000, 12288, 131072, True, "16k", 4096.0])
def test_a_page_size_the_reader_cannot_follow_is_a_value_error(tmp_path, bad):
    p = truncated_16k(tmp_path)
    with pytest.raises(ValueError, match="page_size"):
        mmkv_reader.Store(str(p), page_size=bad)
