"""Every store of every corpus tag (written by the official library) reads as its manifest says."""

import re

import pytest

import mmkv_reader
from mmkv_reader import compat

from conftest import CORPUS, comparable, corpus_stores, crypt, expected

STORES = corpus_stores()
# Every getter type of the reader's value table and its named getter: a type added there fails
# here until the bindings have its getter.
GETTER_OF = dict(mmkv_reader.VALUE_TYPES)
GETTERS = list(GETTER_OF.values())


def test_every_value_type_has_a_named_getter():
    assert len(GETTER_OF) == 17 and "vec_bool" in GETTER_OF
    for ty, getter in GETTER_OF.items():
        assert callable(getattr(mmkv_reader.Store, getter, None)), (ty, getter)
    assert mmkv_reader.TYPES == tuple(GETTER_OF) + ("raw",)


def test_the_corpus_has_every_tag_of_versions_yaml():
    # The tags v1.1.0-v2.4.2 hold 472 stores; a tag added with `track-upstream add-version`
    # brings its own (no count of tags is pinned: they are versions.yaml's).
    text = (CORPUS.parent / "versions.yaml").read_text(encoding="utf-8")
    listed = re.findall(r"^  - tag: (v[0-9.]+)", text, flags=re.M)
    assert sorted({t.name for t, _, _ in STORES}) == sorted(listed)
    assert len(STORES) >= 472


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
        got = getattr(s, GETTER_OF[ty])(key)
        assert comparable(ty, got) == want, (key, ty)
        assert comparable(ty, s.get(key, ty)) == want, (key, ty)
        assert comparable(ty, getattr(s, GETTER_OF[ty])(key.encode())) == want, (key, ty)
        assert comparable(ty, items[key]) == want, (key, ty)
        assert s.expire_at(key) == e.get("expire_at", 0), key
        assert key in s
    for key in store["absent"]:
        assert key not in s
        assert s.raw_value(key) is None
        assert s.expire_at(key) is None
        for ty, g in GETTER_OF.items():
            assert getattr(s, g)(key) is None, (key, g)
            assert s.get(key, ty) is None, (key, ty)


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
