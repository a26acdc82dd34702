"""Encrypted stores, wrong keys and damaged files raise typed exceptions with the reader's message."""

import shutil

import pytest

import mmkv_reader
from mmkv_reader import compat

from conftest import CORPUS
from storebuild import delimited, record, varint, write_store

AES128 = CORPUS / "v2.4.2" / "aes128"
AES256 = CORPUS / "v2.4.2" / "aes256"
PLAIN = CORPUS / "v2.4.2" / "plain"


def copy_store(src, dst_dir, name="s"):
    dst = dst_dir / name
    shutil.copyfile(src, dst)
    shutil.copyfile(str(src) + ".crc", str(dst) + ".crc")
    return dst


def test_hierarchy():
    for cls in (
        mmkv_reader.StoreNotFoundError,
        mmkv_reader.StoreIOError,
        mmkv_reader.CorruptStoreError,
        mmkv_reader.EncryptedStoreError,
        mmkv_reader.WrongKeyError,
    ):
        assert issubclass(cls, mmkv_reader.MMKVReaderError)
    assert compat.MMKVError is mmkv_reader.MMKVReaderError


def test_encrypted_store_without_key():
    with pytest.raises(mmkv_reader.EncryptedStoreError, match="looks encrypted"):
        mmkv_reader.Store(AES128)
    with pytest.raises(mmkv_reader.EncryptedStoreError, match="looks encrypted"):
        compat.read_dict(str(AES128))
    with pytest.raises(mmkv_reader.EncryptedStoreError):
        compat.carve_slack(str(AES128))
    # With the key, everything reads.
    s = mmkv_reader.Store(AES128, crypt_key="mmkv-conformance")
    assert len(s) > 0 and len(s.history()) >= len(s)


def test_wrong_key_and_wrong_aes_flag():
    with pytest.raises(mmkv_reader.WrongKeyError, match="does not decode"):
        mmkv_reader.Store(AES128, crypt_key="not-the-key")
    with pytest.raises(mmkv_reader.WrongKeyError, match="aes256"):
        compat.read_entries(str(AES128), key="not-the-key")
    # The AES-256 store read as AES-128: the hint names the flag.
    import json

    m = json.loads((CORPUS / "v2.4.2" / "manifest.json").read_text(encoding="utf-8"))
    key = bytes.fromhex(next(s for s in m["stores"] if s["id"] == "aes256")["crypt_key_hex"])
    with pytest.raises(mmkv_reader.WrongKeyError, match="pass --aes256"):
        compat.read_dict(str(AES256), key=key)
    assert len(mmkv_reader.Store(AES256, crypt_key=key, aes256=True)) > 0
    with pytest.raises(ValueError):
        mmkv_reader.Store(PLAIN, aes256=True)


def test_missing_and_short_files(tmp_path):
    with pytest.raises(mmkv_reader.StoreNotFoundError, match="not found"):
        mmkv_reader.Store(tmp_path / "nothing")
    p = copy_store(PLAIN, tmp_path)
    (tmp_path / "s.crc").write_bytes(b"\x01\x02")
    # A `.crc` shorter than its structure is read zero-filled, as the official library maps it
    # (a fixed view): here its CRC no longer matches, which the official default discards.
    with pytest.raises(mmkv_reader.CorruptStoreError, match="CRC mismatch"):
        mmkv_reader.Store(p)
    # A meta of version 1 cut to 20 bytes keeps its CRC; the size comes from the data header.
    old = write_store(tmp_path / "old", record("a", varint(7)), version=1)
    (tmp_path / "old.crc").write_bytes((tmp_path / "old.crc").read_bytes()[:20])
    s = mmkv_reader.Store(old)
    assert s.recovered and s.get_i32("a") == 7
    # The drop-in locates the region like `mmkv dump --recover` (the official OnErrorRecover):
    # a short `.crc` is read zero-filled to a page, as the official library maps it, so the
    # region falls back to the data header's size, which v2.4.0+ always writes as 0.
    assert compat.read_dict(str(p)) == {}
    assert compat.read_entries(str(p)) == []
    (tmp_path / "d").mkdir()
    (tmp_path / "d.crc").write_bytes(PLAIN.with_suffix(".crc").read_bytes())
    with pytest.raises(mmkv_reader.StoreIOError, match="not a regular file"):
        mmkv_reader.Store(tmp_path / "d")


def test_truncated_data_file(tmp_path):
    p = copy_store(PLAIN, tmp_path)
    p.write_bytes(p.read_bytes()[:100])
    with pytest.raises(mmkv_reader.CorruptStoreError, match="does not fit"):
        mmkv_reader.Store(p)
    p.write_bytes(b"\x01")
    with pytest.raises(mmkv_reader.CorruptStoreError, match="too short"):
        mmkv_reader.Store(p)


def test_crc_mismatch_and_recover(tmp_path):
    p = write_store(tmp_path / "s", record("a", varint(7)) + record("b", delimited_str("x")), crc=1234)
    with pytest.raises(mmkv_reader.CorruptStoreError, match="CRC mismatch"):
        mmkv_reader.Store(p)
    s = mmkv_reader.Store(p, recover=True)
    assert s.recovered
    assert s.get_i32("a") == 7 and s.get_string("b") == "x"
    # The drop-in reads like `mmkv dump`: a CRC mismatch does not hide the evidence.
    assert compat.read_dict(str(p)) == {"a": 7, "b": "x"}


def test_records_that_do_not_parse(tmp_path):
    p = write_store(tmp_path / "s", record("a", varint(7)) + b"\x05ab")
    with pytest.raises(mmkv_reader.EncryptedStoreError):
        mmkv_reader.Store(p)
    with pytest.raises(mmkv_reader.WrongKeyError):
        mmkv_reader.Store(p, crypt_key="k")


def test_reset_store_recover(tmp_path):
    p = write_store(tmp_path / "s", record("a", varint(7)) + record("b", varint(8)) + record("a", b""))
    data = bytearray(p.read_bytes())
    data[0:4] = b"\0\0\0\0"  # clearAll(): recorded size 0, records left in place
    p.write_bytes(bytes(data))
    meta = bytearray((tmp_path / "s.crc").read_bytes())
    meta[0:4] = (0).to_bytes(4, "little")
    meta[28:40] = bytes(12)
    (tmp_path / "s.crc").write_bytes(bytes(meta))
    assert len(mmkv_reader.Store(p)) == 0
    s = mmkv_reader.Store(p, recover=True)
    assert s.recovered and s.keys() == ["b"] and s.get_i32("b") == 8
    assert compat.read_dict(str(p)) == {}
    assert compat.read_dict(str(p), recover=True) == {"b": 8}
    assert compat.read_entries(str(p), recover=True) == [("a", b"\x07"), ("b", b"\x08"), ("a", b"")]


def test_bad_type_hint():
    with pytest.raises(ValueError, match="unknown type"):
        mmkv_reader.Store(PLAIN).items(type_hints={"k1": "int128"})
    with pytest.raises(TypeError):
        mmkv_reader.Store(PLAIN).get_i32(12)


def delimited_str(s):
    return delimited(s.encode())
