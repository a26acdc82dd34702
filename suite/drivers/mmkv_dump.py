#!/usr/bin/env python3
"""Suite driver for this project's CLI: `python3 mmkv_dump.py CASE_DIR` runs
`$MMKV dump --json` (MMKV defaults to `mmkv` on PATH) with the case's crypt key and prints the
protocol's JSON. A crash of mmkv (signal, panic) is passed on as the driver's own: a signal
kills the driver too, mmkv's stderr is the driver's stderr (in batch mode, MMKV_SUITE_BATCH=1
without CASE_DIR, its "stderr" field). The CLI reads one store per run: batch mode saves the
Python start-ups, not the mmkv runs.
"""
import json
import os
import signal
import subprocess
import sys


def answer(case_dir):
    """The protocol's object for one case and mmkv's stderr."""
    with open(os.path.join(case_dir, "case.json")) as f:
        opening = json.load(f)["open"]
    cmd = [os.environ.get("MMKV", "mmkv"), "dump", "--json"]
    if opening["crypt_key_hex"]:
        cmd += ["--crypt-key-hex", opening["crypt_key_hex"]]
    if opening["aes256"]:
        cmd.append("--aes256")
    cmd.append(os.path.join(case_dir, "store"))
    run = subprocess.run(cmd, capture_output=True, stdin=subprocess.DEVNULL)
    stderr = run.stderr.decode("utf-8", "replace")
    if run.returncode < 0:
        sys.stderr.write(stderr)
        sys.stderr.flush()
        os.kill(os.getpid(), -run.returncode)
    if run.returncode != 0:
        message = stderr.strip().splitlines()
        return {"error": message[-1] if message else f"exit {run.returncode}"}, stderr
    dump = json.loads(run.stdout)
    entries = [{"key": e["key_hex"], "value": e["value_hex"]} for e in dump["entries"]]
    return {"entries": entries}, stderr


def main(args):
    if args or os.environ.get("MMKV_SUITE_BATCH") != "1":
        out, stderr = answer(args[0])
        sys.stderr.write(stderr)
        print(json.dumps(out))
        return
    # batch mode: greet, then one answer line (with the case folder) per case folder line
    print(json.dumps({"batch": 1}), flush=True)
    for line in iter(sys.stdin.readline, ""):
        case_dir = line.rstrip("\n")
        out, stderr = answer(case_dir)
        print(json.dumps({"case": case_dir, "stderr": stderr, **out}), flush=True)


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main(sys.argv[1:])
