"""The reader protocol's two modes for this folder's Python drivers (suite/README.md):
`serve(answer)` with `answer(case_dir)` returning the protocol's object for one case, and
`read_case(case_dir)`: what a driver takes from case.json (how to open the store, and the
page size of the machine that wrote it, which a reader given a page size should be given).

Single mode (`driver.py CASE_DIR`) prints it; its optional "stderr" (text a child process
printed) goes to stderr instead. Batch mode (MMKV_SUITE_BATCH=1, no CASE_DIR) greets, then
answers each case folder read from stdin with one line holding "case" (and "stderr").
Exceptions are not caught: they are the reader's crashes, graded as such.
"""
import json
import os
import sys

# The writer's page size of a case whose case.json has no "page_size".
DEFAULT_PAGE_SIZE = 4096


def read_case(case_dir):
    """case.json's "open" object and its writer's page size in bytes ("page_size"; 4096
    when absent): the official answers were read on pages of that size."""
    with open(os.path.join(case_dir, "case.json")) as f:
        case = json.load(f)
    return case["open"], case.get("page_size", DEFAULT_PAGE_SIZE)


def serve(answer):
    args = sys.argv[1:]
    if args or os.environ.get("MMKV_SUITE_BATCH") != "1":
        out = answer(args[0])
        sys.stderr.write(out.pop("stderr", ""))
        print(json.dumps(out))
        return
    print(json.dumps({"batch": 1}), flush=True)
    for line in iter(sys.stdin.readline, ""):
        case_dir = line.rstrip("\n")
        print(json.dumps({"case": case_dir, **answer(case_dir)}), flush=True)
