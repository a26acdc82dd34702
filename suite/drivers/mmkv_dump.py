#!/usr/bin/env python3
"""Suite driver for this project's CLI: `python3 mmkv_dump.py CASE_DIR` runs
`$MMKV dump --json` (MMKV defaults to `mmkv` on PATH) with the case's crypt key and its
writer's page size (`--page-size`) and prints the protocol's JSON. A crash of mmkv (signal, panic) is passed on as the driver's own: a signal
kills the driver too, mmkv's stderr is the driver's stderr (in batch mode, MMKV_SUITE_BATCH=1
without CASE_DIR, the answer's "stderr"). The CLI reads one store per run: batch mode saves
the Python start-ups, not the mmkv runs.
"""
import json
import os
import signal
import subprocess
import sys

from suite_protocol import read_case, serve


def answer(case_dir):
    """The protocol's object for one case, with mmkv's stderr as its "stderr"."""
    opening, page_size = read_case(case_dir)
    cmd = [os.environ.get("MMKV", "mmkv"), "dump", "--json", "--page-size", str(page_size)]
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
        return {"error": message[-1] if message else f"exit {run.returncode}", "stderr": stderr}
    dump = json.loads(run.stdout)
    entries = [{"key": e["key_hex"], "value": e["value_hex"]} for e in dump["entries"]]
    return {"entries": entries, "stderr": stderr}


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    serve(answer)
