#!/usr/bin/env python3
"""Checks the Markdown files tracked by git; exits 1 naming each problem as FILE:LINE.

1. Every relative link `[text](target)` resolves to an existing file or folder (relative to the
   file that holds it), and an anchor (`#section`) names a heading of the Markdown file it points
   to (GitHub's heading ids).
2. Every repository path written in backticks exists. A code span is taken for a path when it has
   no whitespace, contains a `/`, and ends in `/` or its last component has an extension
   (`reader/src/load.rs`, `fuzz/regressions/`); it is a *repository* path when its first component
   exists next to the file or at the repository root (so `Core/MMKVPredef.h` of the upstream
   sources and `/proc/...` are not ours to check). It must then exist relative to the file or to
   the root. Placeholders (`<tag>`, `vX.Y.Z`, `$f`, `*`, `{a,b}`) and git-ignored locations
   (build outputs such as `target/...`) are skipped.
3. README.md has at most 250 lines (the front page; details belong in the pages it links).

Fenced code blocks are skipped: they hold commands and output, not references.
Usage: python3 ci/check-docs.py [ROOT]   (default: the repository holding this script)
"""

import os
import re
import subprocess
import sys

README_MAX_LINES = 250
LINK = re.compile(r"(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(([^)\s]+)\)")
CODE_SPAN = re.compile(r"(`+)(.+?)\1")
PLACEHOLDER = re.compile(r"[<>*{}$]|X\.Y\.Z|\bvX\b|\.\.\.|…")
EXTENSION = re.compile(r"\.[A-Za-z0-9_-]+$")


def tracked_markdown(root):
    out = subprocess.run(
        ["git", "-C", root, "ls-files", "-z", "--", "*.md"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return sorted(p for p in out.split("\0") if p)


def ignored(root, rel):
    """True when git ignores `rel` (a build output, a fetched source cache)."""
    r = subprocess.run(["git", "-C", root, "check-ignore", "-q", "--no-index", rel])
    return r.returncode == 0


def prose_lines(text):
    """(line number, line) outside fenced code blocks."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = re.match(r"^\s*(```+|~~~+)", line)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif m.group(1).startswith(fence):
                fence = None
            continue
        if fence is None:
            yield n, line


def slug(heading):
    """GitHub's id for a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"`|\*\*|__", "", heading.strip()).lower()
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        ids, seen = set(), {}
        with open(path, encoding="utf-8") as f:
            for _, line in prose_lines(f.read()):
                m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
                if m:
                    s = slug(m.group(1))
                    k = seen.get(s, 0)
                    seen[s] = k + 1
                    ids.add(s if k == 0 else f"{s}-{k}")
        cache[path] = ids
    return cache[path]


def check_file(root, rel, problems):
    path = os.path.join(root, rel)
    here = os.path.dirname(path)
    with open(path, encoding="utf-8") as f:
        text = f.read()
    for n, line in prose_lines(text):
        # Links (code spans removed first: `[a](b)` inside backticks is not a link).
        no_code = CODE_SPAN.sub("", line)
        for m in list(LINK.finditer(no_code)) + list(IMAGE.finditer(no_code)):
            target = m.group(1)
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file_part, _, anchor = target.partition("#")
            dest = os.path.normpath(os.path.join(here, file_part)) if file_part else path
            if not os.path.exists(dest):
                problems.append(f"{rel}:{n}: broken link '{target}': no such file")
                continue
            if anchor and dest.endswith(".md") and os.path.isfile(dest):
                if anchor not in anchors(dest):
                    problems.append(
                        f"{rel}:{n}: broken link '{target}': no heading '#{anchor}' in "
                        f"{os.path.relpath(dest, root)}"
                    )
        # Repository paths in backticks.
        for m in CODE_SPAN.finditer(line):
            span = m.group(2).strip()
            if not span or re.search(r"\s", span) or "/" not in span or "://" in span:
                continue
            if not (span.endswith("/") or EXTENSION.search(span.rstrip("/").split("/")[-1])):
                continue
            if PLACEHOLDER.search(span) or span.startswith(("/", "~", "-")):
                continue
            first = span.split("/")[0]
            bases = [b for b in (here, root) if os.path.exists(os.path.join(b, first))]
            if not bases or first in (".", ".."):
                continue  # not a path of this repository
            if any(os.path.exists(os.path.join(b, span)) for b in bases):
                continue
            if any(ignored(root, os.path.relpath(os.path.join(b, span), root)) for b in bases):
                continue
            problems.append(f"{rel}:{n}: `{span}` names a path that does not exist")


def main():
    root = os.path.abspath(
        sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    )
    files = tracked_markdown(root)
    if not files:
        print("check-docs: no tracked Markdown files found: nothing was checked", file=sys.stderr)
        return 1
    problems = []
    for rel in files:
        if os.path.exists(os.path.join(root, rel)):
            check_file(root, rel, problems)
    readme = os.path.join(root, "README.md")
    with open(readme, encoding="utf-8") as f:
        count = len(f.read().splitlines())
    if count > README_MAX_LINES:
        problems.append(
            f"README.md:{README_MAX_LINES + 1}: README.md has {count} lines, at most "
            f"{README_MAX_LINES}: move details to the page that owns them"
        )
    for p in problems:
        print(p, file=sys.stderr)
    if problems:
        print(f"check-docs: FAIL: {len(problems)} problem(s) in {len(files)} Markdown files",
              file=sys.stderr)
        return 1
    print(f"check-docs: ok: {len(files)} Markdown files, README.md {count} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
