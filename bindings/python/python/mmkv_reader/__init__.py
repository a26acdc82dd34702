"""Read Tencent MMKV stores from Python (read-only), with the Rust ``mmkv-reader`` underneath.

>>> import mmkv_reader
>>> store = mmkv_reader.Store("mmkv.default")              # doctest: +SKIP
>>> store.get_i64("user_id")                               # doctest: +SKIP
1234567

* :class:`Store`: typed getters mirroring the official ones (``get_i32``, ``get_string``, ...),
  ``keys()``, ``items()``, ``meta``, ``expire_at()``, ``history()``, ``carve()``; every read checks
  the meta file and reloads when a writer changed the store.
* :mod:`mmkv_reader.compat`: a drop-in for the pure-Python ``mmkv_parser`` module
  (``read_entries``, ``read_dict``, ``carve_slack``, ``decode_value``, ``MMKVError``).
* Errors: :class:`MMKVReaderError` and its subclasses :class:`StoreNotFoundError`,
  :class:`StoreIOError`, :class:`CorruptStoreError`, :class:`EncryptedStoreError`,
  :class:`WrongKeyError`.

Keys come back as ``str``: UTF-8, with the ``surrogateescape`` error handler for keys that are
not UTF-8 (``key.encode("utf-8", "surrogateescape")`` gives the exact bytes). Arguments accept
``str`` or ``bytes``.
"""

from ._native import (
    CorruptStoreError,
    EncryptedStoreError,
    Meta,
    MMKVReaderError,
    Record,
    Store,
    StoreIOError,
    StoreNotFoundError,
    WrongKeyError,
)

__all__ = [
    "Store",
    "Meta",
    "Record",
    "MMKVReaderError",
    "StoreNotFoundError",
    "StoreIOError",
    "CorruptStoreError",
    "EncryptedStoreError",
    "WrongKeyError",
    "TYPES",
]

#: Type names accepted by ``type_hints`` and ``Record.decoded`` (the corpus manifest names, plus ``raw``).
TYPES = (
    "bool", "i32", "u32", "i64", "u64", "f32", "f64", "string", "bytes", "strings",
    "vec_i32", "vec_u32", "vec_i64", "vec_u64", "vec_f32", "vec_f64", "raw",
)
