#!/usr/bin/env python3
"""Suite driver for this project's CLI: `python3 mmkv_dump.py CASE_DIR` runs
`$MMKV dump --json` (MMKV defaults to `mmkv` on PATH) with the case's crypt key and prints the
protocol's JSON. A crash of mmkv (signal, panic) is passed on as the driver's own.
"""
import json
import os
import signal
import subprocess
import sys


def main(case_dir):
    with open(os.path.join(case_dir, "case.json")) as f:
        opening = json.load(f)["open"]
    cmd = [os.environ.get("MMKV", "mmkv"), "dump", "--json"]
    if opening["crypt_key_hex"]:
        cmd += ["--crypt-key-hex", opening["crypt_key_hex"]]
    if opening["aes256"]:
        cmd.append("--aes256")
    cmd.append(os.path.join(case_dir, "store"))
    run = subprocess.run(cmd, capture_output=True)
    sys.stderr.write(run.stderr.decode("utf-8", "replace"))
    if run.returncode < 0:
        os.kill(os.getpid(), -run.returncode)
    if run.returncode != 0:
        message = run.stderr.decode("utf-8", "replace").strip().splitlines()
        print(json.dumps({"error": message[-1] if message else f"exit {run.returncode}"}))
        return
    dump = json.loads(run.stdout)
    entries = [{"key": e["key_hex"], "value": e["value_hex"]} for e in dump["entries"]]
    print(json.dumps({"entries": entries}))


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    main(sys.argv[1])
