#!/usr/bin/env python3
"""Speed of `mmkv_reader` against the pure-Python `mmkv_parser` (the parser ALEAPP/iLEAPP vendor).

    python bindings/python/bench/bench_vs_mmkv_parser.py --mmkv-parser PATH [--repeat 5]

PATH is the old parser's `mmkv_parser/__init__.py` (or its directory); `MMKV_PARSER_PATH` works
too. It is not part of this repository: take it from the abrignoni/mmkv-parser project (or from
the copy a framework vendors). Decrypting with it needs `pycryptodome` or `cryptography`;
without either, it refuses the encrypted stores, which are then left out of both timings.

Two measurements, each the best of `--repeat` runs (files in the page cache):
1. every corpus store (`corpus/`, 472 stores, 50 tags): `read_dict` of each, in one loop;
2. one store of 100,000 keys written by this script (half integers, half 40-60-byte strings):
   `read_dict`.
Both sides do the same work: open the files, parse, decrypt where needed, decode every live value
into a dict. Prints wall-clock and CPU times (`time.process_time`: on a loaded machine the wall
clock of the longer run also counts the time other processes held the CPU) and both ratios
(old / new), the load average before and after, and a floor for the large store: `marshal.loads`
of the same dict (the cost of creating its Python objects alone, no file or parsing).
"""

import argparse
import json
import marshal
import os
import pathlib
import sys
import tempfile
import time

from mmkv_reader import compat

ROOT = pathlib.Path(__file__).resolve().parents[3]
# The tests' store writer and old-parser loader (bindings/python/tests/storebuild.py).
sys.path.insert(0, str(ROOT / "bindings" / "python" / "tests"))
from storebuild import delimited, load_old_parser, record, varint, write_store  # noqa: E402


def write_large_store(path, n):
    """A plaintext store of `n` keys laid out as the official library writes it; its data file size."""
    records = []
    for i in range(n):
        if i % 2:
            payload = varint(i * 7919)
        else:
            payload = delimited(f"value {i} ".encode() * (4 + i % 3))
        records.append(record(f"key_{i:06d}", payload))
    return os.path.getsize(write_store(path, b"".join(records)))


def corpus_jobs(corpus):
    jobs = []
    for tag in sorted(p for p in corpus.iterdir() if (p / "manifest.json").is_file()):
        for s in json.loads((tag / "manifest.json").read_text(encoding="utf-8"))["stores"]:
            key = bytes.fromhex(s["crypt_key_hex"]) if s["crypt_key_hex"] else None
            jobs.append((str(tag / s["id"]), key, s["aes256"]))
    return jobs


def best(fn, repeat):
    """(best wall-clock seconds, best CPU seconds) over `repeat` runs."""
    wall, cpu = [], []
    for _ in range(repeat):
        c = time.process_time()
        t = time.perf_counter()
        fn()
        wall.append(time.perf_counter() - t)
        cpu.append(time.process_time() - c)
    return min(wall), min(cpu)


def report(title, new, old, target=""):
    print(title)
    print(f"  {'':30s} {'wall':>9s} {'cpu':>9s}")
    print(f"  {'mmkv_reader.compat.read_dict':30s} {new[0] * 1e3:7.1f}ms {new[1] * 1e3:7.1f}ms")
    print(f"  {'mmkv_parser.read_dict':30s} {old[0] * 1e3:7.1f}ms {old[1] * 1e3:7.1f}ms")
    print(f"  {'ratio':30s} {old[0] / new[0]:8.1f}x {old[1] / new[1]:8.1f}x{target}")


def load():
    return " ".join(f"{x:.1f}" for x in os.getloadavg()) if hasattr(os, "getloadavg") else "n/a"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mmkv-parser", default=os.environ.get("MMKV_PARSER_PATH"))
    ap.add_argument("--corpus", default=str(ROOT / "corpus"))
    ap.add_argument("--keys", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    if not args.mmkv_parser:
        sys.exit("pass --mmkv-parser PATH (or set MMKV_PARSER_PATH): see the docstring")
    old = load_old_parser(args.mmkv_parser)

    print(f"load average before: {load()}")
    jobs = corpus_jobs(pathlib.Path(args.corpus))
    both = []
    for job in jobs:
        try:
            old.read_dict(job[0], key=job[1], aes256=job[2])
            both.append(job)
        except old.MMKVError:
            pass
    t_new = best(lambda: [compat.read_dict(p, key=k, aes256=a) for p, k, a in both], args.repeat)
    t_old = best(lambda: [old.read_dict(p, key=k, aes256=a) for p, k, a in both], args.repeat)
    report(f"corpus: {len(both)} of {len(jobs)} stores (the rest the old parser refuses)", t_new, t_old)

    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "large")
        size = write_large_store(path, args.keys)
        assert len(compat.read_dict(path)) == args.keys
        assert len(old.read_dict(path)) == args.keys
        t_new = best(lambda: compat.read_dict(path), args.repeat)
        t_old = best(lambda: old.read_dict(path), args.repeat)
        report(f"large store: {args.keys:,} keys, {size / 2**20:.1f} MiB", t_new, t_old, "   (target >= 10x)")
        blob = marshal.dumps(compat.read_dict(path))
        floor = best(lambda: marshal.loads(blob), args.repeat)
        print(f"  {'floor: marshal.loads of the dict':30s} {floor[0] * 1e3:7.1f}ms {floor[1] * 1e3:7.1f}ms")
    print(f"load average after: {load()}")

if __name__ == "__main__":
    main()
