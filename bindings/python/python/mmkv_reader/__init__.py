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

from . import _native
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
    "VALUE_TYPES",
]

#: Type names accepted by ``type_hints`` and ``Record.decoded`` (the corpus manifest names, plus
#: ``raw``), and ``(type name, Store getter name)`` for every getter type (``Store.get(key, type)``
#: reads any of them): both from the reader's value-type table.
TYPES = _native.TYPES
VALUE_TYPES = _native.VALUE_TYPES
