#!/usr/bin/env python3
"""Suite driver for mmkv_reader.Store: `python3 mmkv_reader_store.py CASE_DIR`.

The minimal example of suite/README.md: open the case's store as case.json says (its key,
and the page size of its writer's machine), print every live key with its value payload
(hex), or the reader's error. Standard library + mmkv_reader.
With MMKV_SUITE_BATCH=1 and no CASE_DIR it answers many cases in one process (batch mode,
suite_protocol.py).
"""
import os

import mmkv_reader
from suite_protocol import read_case, serve


def answer(case_dir):
    opening, page_size = read_case(case_dir)
    key_hex = opening["crypt_key_hex"]
    try:
        store = mmkv_reader.Store(
            os.path.join(case_dir, "store"),
            crypt_key=bytes.fromhex(key_hex) if key_hex else None,
            aes256=opening["aes256"],
            page_size=page_size,
        )
        entries = [
            {"key": k.hex(), "value": store.raw_value(k).hex()}
            for k in store.keys(raw=True)
        ]
    except mmkv_reader.MMKVReaderError as e:
        return {"error": str(e)}
    return {"entries": entries}


if __name__ == "__main__":
    serve(answer)
