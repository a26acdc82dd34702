"""Drop-in replacement for the pure-Python ``mmkv_parser`` module that forensic frameworks vendor.

Switch by changing one import::

    # from mmkv_parser import read_dict, read_entries, carve_slack, MMKVError
    from mmkv_reader.compat import read_dict, read_entries, carve_slack, MMKVError

Same functions, arguments and return shapes (``read_entries`` -> list of ``(key, bytes)`` in file
order; ``read_dict`` -> ``{key: value}``; ``carve_slack`` -> list of ``CarvedRecord(offset, key,
container, live_key)``; ``decode_value(container)``; every error an ``MMKVError``). Differences,
all of them corrections:

* **Key expiration**: on stores with key expiration the 4-byte expire time is removed from each
  value (the old module leaves it on, so every value decodes wrongly), and ``read_dict`` leaves
  out keys whose expire time has passed (the old module shows them as live).
* **Types**: ``read_dict``/``decode_value`` return the most likely decoding (``int`` signed, so
  negative integers are negative; ``float`` for 4/8-byte floats; ``list`` for string and typed
  vectors; ``str``; ``bytes``), where the old module reads negative integers as huge unsigned
  numbers, zero as ``""`` and floats as raw bytes. MMKV stores no types, so a guess can be wrong:
  ``type_hints={key: "i32", ...}`` (an extra, optional argument) decodes a key exactly as the
  official getter of that type would. One ambiguity to know: the one-byte payload ``00`` is 0,
  False and the empty string at once; it is returned as ``0``.
* **Keys that are not UTF-8** are returned (as ``str`` decoded with ``surrogateescape``) instead
  of ending the read there.
* **Encryption** is detected by parsing, not by a non-zero IV (``clearAll()`` leaves a random IV
  in plaintext stores, and old stores, meta version 1, have no IV at all: the old module returns
  them as empty). A key given for a plaintext store is ignored, as before. No crypto package is
  needed.
* ``carve_slack(path, key=None, aes256=False)`` can carve encrypted stores given the key, and
  picks the non-overlapping candidates that cover the most bytes (fewer false records).
* ``recover=True`` on a reset store (recorded size 0) returns its surviving records when they
  walk cleanly to the end of the file, as before.
"""

import collections

from . import _native
from ._native import MMKVReaderError as MMKVError

__all__ = ["MMKVError", "CarvedRecord", "read_entries", "read_dict", "carve_slack", "decode_value"]

#: One carved record: absolute offset in the data file, key, value payload, key also live.
CarvedRecord = collections.namedtuple("CarvedRecord", "offset key container live_key")


def read_entries(path, key=None, aes256=False, recover=False):
    """Return every ``(key, value_container)`` record in file order.

    Repeats of a key are all returned (later ones supersede earlier ones); a removal is
    ``(key, b"")``. Values are payloads without the expire suffix. ``key`` (``str`` or
    ``bytes``) decrypts an encrypted store; ``aes256`` selects AES-256. ``recover`` reads the
    surviving records of a reset store (recorded size 0). Raises :class:`MMKVError`.
    """
    return _native.read_entries(path, key, aes256, recover)


def read_dict(path, key=None, aes256=False, recover=False, type_hints=None):
    """Return ``{key: decoded value}`` of the live entries (removed and expired keys left out).

    ``type_hints`` (optional ``{key: type name}``, names as :data:`mmkv_reader.TYPES`) decodes
    those keys as the official getter of that type; other values get their most likely decoding.
    """
    return _native.read_dict(path, key, aes256, recover, type_hints)


def carve_slack(path, key=None, aes256=False):
    """Return :class:`CarvedRecord` s carved from the space past the recorded data region.

    These are inferences, not parsed records: the space holds earlier generations of the store
    and a compaction overwrites its front. ``live_key`` says whether the key is also live, the
    corroboration a real superseded record usually has. Encrypted stores need ``key``.
    """
    return [CarvedRecord(*r) for r in _native.carve_slack(path, key, aes256)]


def decode_value(container):
    """Decode a value container: ``None`` for a removal marker (``b""``), else its most likely value."""
    return _native.decode_value(bytes(container))
