"""Every store of every corpus tag (written by the official library) reads as its manifest says."""

import pytest

import mmkv_reader
from mmkv_reader import compat

from conftest import comparable, corpus_stores, crypt, expected

STORES = corpus_stores()
GETTERS = [
    "get_bool", "get_i32", "get_u32", "get_i64", "get_u64", "get_f32", "get_f64", "get_string",
    "get_bytes", "get_string_vec", "get_vec_i32", "get_vec_u32", "get_vec_i64", "get_vec_u64",
    "get_vec_f32", "get_vec_f64",
]


def test_the_corpus_has_472_stores():
    assert len(STORES) == 472
    assert len({t for t, _, _ in STORES}) == 50


@pytest.mark.parametrize("tag,store,now", STORES, ids=[f"{t.name}/{s['id']}" for t, s, _ in STORES])
def test_store_matches_manifest(tag, store, now):
    s = mmkv_reader.Store(tag / store["id"], now=now, **crypt(store))
    assert len(s) == store["count"]
    assert s.meta.key_expire == store["key_expire"]
    want_keys = sorted(e["key"] for e in store["entries"])
    assert sorted(s.keys()) == want_keys
    hints = {e["key"]: e["type"] for e in store["entries"]}
    items = dict(s.items(type_hints=hints))
    for e in store["entries"]:
        key, ty = e["key"], e["type"]
        want = expected(ty, e["value"])
        getter = {"strings": "get_string_vec"}.get(ty, "get_" + ty)
        assert comparable(ty, getattr(s, getter)(key)) == want, (key, ty)
        assert comparable(ty, getattr(s, getter)(key.encode())) == want, (key, ty)
        assert comparable(ty, items[key]) == want, (key, ty)
        assert s.expire_at(key) == e.get("expire_at", 0), key
        assert key in s
    for key in store["absent"]:
        assert key not in s
        assert s.raw_value(key) is None
        assert s.expire_at(key) is None
        for g in GETTERS:
            assert getattr(s, g)(key) is None, (key, g)


@pytest.mark.parametrize("tag,store,now", STORES, ids=[f"{t.name}/{s['id']}" for t, s, _ in STORES])
def test_history_and_drop_in_match_manifest(tag, store, now):
    path = tag / store["id"]
    c = crypt(store)
    hints = {e["key"]: e["type"] for e in store["entries"]}
    # The history's live records are exactly the manifest entries.
    hist = mmkv_reader.Store(path, now=now, **c).history()
    live = {r.key: r for r in hist if r.status == "live"}
    assert sorted(live) == sorted(hints)
    for e in store["entries"]:
        r = live[e["key"]]
        assert comparable(e["type"], r.decoded(e["type"])) == expected(e["type"], e["value"])
        assert r.expire_at == e.get("expire_at")
    assert [r.index for r in hist] == list(range(len(hist)))
    # The drop-in, with the manifest's types as hints, returns every live value exactly.
    d = compat.read_dict(path, key=c.get("crypt_key"), aes256=c.get("aes256", False), type_hints=hints)
    # (system clock: the corpus' long expiries are decades away, its 1-second ones long past)
    assert sorted(d) == sorted(hints)
    for e in store["entries"]:
        assert comparable(e["type"], d[e["key"]]) == expected(e["type"], e["value"]), e["key"]
    entries = compat.read_entries(path, key=c.get("crypt_key"), aes256=c.get("aes256", False))
    assert [(r.key, r.value) for r in hist] == entries
