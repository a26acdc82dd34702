"""Shared helpers: the golden corpora and their manifests (hand-built stores: `storebuild`)."""

import json
import pathlib
import struct

import pytest

CORPUS = pathlib.Path(__file__).resolve().parents[3] / "corpus"


def corpus_tags():
    """Every tag directory of the corpus, sorted."""
    return sorted(p for p in CORPUS.iterdir() if (p / "manifest.json").is_file())


def manifest(tag_dir):
    return json.loads((tag_dir / "manifest.json").read_text(encoding="utf-8"))


def corpus_stores():
    """(tag_dir, manifest store, frozen clock) for every corpus store.

    The clock is one second before the earliest expire time of the tag (as the Rust corpus test):
    every long expiry is in the future, every 1-second expiry in the past.
    """
    out = []
    for tag in corpus_tags():
        m = manifest(tag)
        exp = [e["expire_at"] for s in m["stores"] for e in s["entries"] if "expire_at" in e]
        now = min(exp) - 1 if exp else None
        for s in m["stores"]:
            out.append((tag, s, now))
    return out


def crypt(store):
    """Store() keyword arguments of a manifest store."""
    k = store["crypt_key_hex"]
    return {"crypt_key": bytes.fromhex(k), "aes256": store["aes256"]} if k else {}


def f32_bits(x):
    return struct.unpack("<I", struct.pack("<f", x))[0]


def f64_bits(x):
    return struct.unpack("<Q", struct.pack("<d", x))[0]


def expected(ty, value):
    """The Python value a getter of `ty` must return for a manifest value."""
    if ty == "bool":
        return value
    if ty in ("i32", "u32", "i64", "u64"):
        return int(value)
    if ty in ("f32", "f64"):
        return int(value, 16)  # compared by bits
    if ty == "string":
        return value
    if ty == "bytes":
        return bytes.fromhex(value)
    if ty == "strings":
        return list(value)
    if ty in ("vec_f32", "vec_f64"):
        return [int(x, 16) for x in value]
    if ty.startswith("vec_"):
        return [int(x) for x in value]
    raise AssertionError(f"unknown manifest type {ty}")


def comparable(ty, got):
    """A getter's result in the form `expected` gives (floats as bit patterns)."""
    if got is None:
        return None
    if ty == "f32":
        return f32_bits(got)
    if ty == "f64":
        return f64_bits(got)
    if ty == "vec_f32":
        return [f32_bits(x) for x in got]
    if ty == "vec_f64":
        return [f64_bits(x) for x in got]
    if ty == "bool":
        assert isinstance(got, bool), got
    return got


@pytest.fixture
def corpus():
    return CORPUS
