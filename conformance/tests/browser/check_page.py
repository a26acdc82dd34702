#!/usr/bin/env python3
"""Checks the conformance report's web page in headless Chromium (standard library only).

Drives Chromium over the DevTools protocol on a pipe (--remote-debugging-pipe: JSON messages
ending in NUL on file descriptors 3 and 4, so no websocket client and no port), loads
DIR/index.html from file:// and checks, after the page's script ran:

- one matrix row per row of DIR/report.json (a tag at a page size) and one cell per store kind in each;
- every FAIL cell of the report renders as failing, and one click on it shows its detail
  with the replay command when the report has one (also with JavaScript disabled);
- text from the report that looks like HTML or script (--injection) renders as text: no <img>
  or extra <script> element, the document title is unchanged;
- nothing is fetched but the page itself, and no console error or exception;
- on a 390 px wide screen the page does not overflow sideways;
- a screenshot of the matrix is written to --screenshot.

Exit status 0 when every check passes; each check prints one line.
"""

import argparse
import base64
import json
import os
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-extensions",
    "--remote-debugging-pipe",
]


class Browser:
    """One Chromium process and one page target, spoken to over the pipe."""

    def __init__(self, exe, timeout):
        self.timeout = timeout
        self.profile = tempfile.mkdtemp(prefix="page-check-profile-")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()

        def fds():
            # copies first: either end may itself be fd 3 or 4
            r, w = os.dup(to_child_r), os.dup(from_child_w)
            os.dup2(r, 3)
            os.dup2(w, 4)

        self.proc = subprocess.Popen(
            [exe, *FLAGS, f"--user-data-dir={self.profile}", "about:blank"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            pass_fds=(3, 4),  # the child closes the other descriptors after preexec_fn
            preexec_fn=fds,
        )
        os.close(to_child_r)
        os.close(from_child_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call(
            "Target.attachToTarget", {"targetId": target, "flatten": True}
        )["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(f"{domain}.enable", session=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium")
            ready, _, _ = select.select([self.from_child], [], [], left)
            if ready:
                chunk = os.read(self.from_child, 1 << 20)
                if not chunk:
                    raise RuntimeError("Chromium closed the pipe")
                self.buf += chunk
        raw, self.buf = self.buf.split(b"\0", 1)
        return json.loads(raw)

    def call(self, method, params=None, session=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        os.write(self.to_child, json.dumps(msg).encode() + b"\0")
        deadline = time.monotonic() + self.timeout
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m.get("result", {})
            if "method" in m:
                self.events.append(m)

    def wait_event(self, method):
        deadline = time.monotonic() + self.timeout
        while True:
            for i, e in enumerate(self.events):
                if e["method"] == method:
                    return self.events.pop(i)
            m = self._read_message(deadline)
            if "method" in m:
                self.events.append(m)

    def js(self, expression):
        r = self.call(
            "Runtime.evaluate",
            {"expression": expression, "returnByValue": True, "awaitPromise": True},
            session=True,
        )
        if "exceptionDetails" in r:
            raise RuntimeError(f"{expression}: {r['exceptionDetails']}")
        return r["result"].get("value")

    def load(self, url, scripts=True):
        self.call("Emulation.setScriptExecutionDisabled", {"value": not scripts}, session=True)
        self.call("Page.navigate", {"url": url}, session=True)
        self.wait_event("Page.loadEventFired")

    def close(self):
        try:
            self.call("Browser.close")
        except Exception:  # noqa: BLE001 - the process is killed below anyway
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)


KINDS = [
    "plain", "multi", "aes128", "aes128-short-key", "aes128-long-key", "aes256",
    "aes256-short-key", "expire", "expire-aes128", "expire-aes256",
]


def row_label(row):
    """A matrix row's data-tag: the tag, with the page size after it unless it is 4 KiB (the
    report's rows are (tag, page size); rows of reports without page sizes are 4 KiB)."""
    size = row.get("page_size", 4096)
    if size == 4096:
        return row["tag"]
    return f"{row['tag']} ({size // 1024} KiB)" if size % 1024 == 0 else f"{row['tag']} ({size} B)"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dir", type=Path, help="folder with index.html and report.json")
    ap.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    ap.add_argument("--screenshot", type=Path, required=True)
    ap.add_argument("--injection", action="append", default=[],
                    help="text of the report that must render as text (repeatable)")
    ap.add_argument("--timeout", type=float, default=60.0)
    args = ap.parse_args()

    index = (args.dir / "index.html").resolve()
    report = json.loads((args.dir / "report.json").read_text())
    url = index.as_uri()
    tags = [row_label(r) for r in report["versions"]]
    fails = [(row_label(r), k) for r in report["versions"] for k, v in r["kinds"].items() if v == "FAIL"]
    failures = []

    def check(ok, what):
        print(("ok   " if ok else "FAIL ") + what)
        if not ok:
            failures.append(what)

    started = time.monotonic()
    b = Browser(args.chromium, args.timeout)
    try:
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}, session=True)
        b.load(url)
        title = b.js("document.title")
        rows = b.js("""Array.from(document.querySelectorAll('#matrix table.matrix tbody tr'))
            .map(tr => [tr.getAttribute('data-tag'), tr.querySelectorAll('td.cell').length,
                        Array.from(tr.querySelectorAll('td.cell')).map(td => td.getAttribute('data-kind'))])""")
        check([r[0] for r in rows] == tags,
              f"one matrix row per tag of the report ({len(rows)} rows, {len(tags)} tags)")
        check(all(r[1] == len(KINDS) and r[2] == KINDS for r in rows),
              f"one cell per store kind in every row ({len(KINDS)} kinds)")
        check(b.js("!document.getElementById('controls').hidden"), "the script ran (filter shown)")
        b.js("document.getElementById('failing-only').click()")
        shown = b.js("document.querySelectorAll('#matrix table.matrix tbody tr:not([hidden])').length")
        failing_rows = sum(1 for r in report["versions"]
                           if "FAIL" in r["kinds"].values() or r.get("failures"))
        check(shown == failing_rows, f"'failing rows only' shows {shown} row(s), expected {failing_rows}")
        b.js("document.getElementById('failing-only').click()")

        def fail_cell_checks(label):
            for tag, kind in fails:
                sel = f"#matrix tr[data-tag=\"{tag}\"] td.cell[data-kind=\"{kind}\"]"
                cell = b.js(f"""(() => {{ const td = document.querySelector({json.dumps(sel)});
                    if (!td) return null;
                    const a = td.querySelector('a');
                    return {{cls: td.className, text: td.textContent.trim(), color: getComputedStyle(td).backgroundColor,
                             pass: getComputedStyle(document.querySelector('td.cell.pass') || td).backgroundColor,
                             href: a ? a.getAttribute('href') : null}}; }})()""")
                check(cell is not None and "fail" in cell["cls"] and cell["text"] == "FAIL"
                      and cell["color"] != cell["pass"],
                      f"{label}: {tag} {kind} renders failing in text and colour")
                if not cell or not cell["href"]:
                    check(False, f"{label}: {tag} {kind} links to its detail")
                    continue
                b.js(f"document.querySelector({json.dumps(sel + ' a')}).click()")
                detail = b.js(f"""(() => {{ const d = document.getElementById({json.dumps(cell['href'][1:])});
                    if (!d) return null;
                    return {{shown: getComputedStyle(d).display !== 'none',
                             replay: Array.from(d.querySelectorAll('code.replay')).map(c => c.textContent)}}; }})()""")
                row = next(r for r in report["versions"] if row_label(r) == tag)
                texts = row.get("failures", []) + row.get("cells", {}).get(kind, {}).get("failures", [])
                want_replay = any("conformance -- replay " in t for t in texts)
                ok = detail is not None and detail["shown"] and (
                    not want_replay or any(r.startswith("cargo run -p conformance -- replay ") for r in detail["replay"]))
                check(ok, f"{label}: one click on {tag} {kind} shows its detail"
                          + (" with the replay command" if want_replay else ""))

        fail_cell_checks("with JavaScript")
        for text in args.injection:
            check(text in b.js("document.body.textContent"), f"injection renders as text: {text[:40]!r}")
        check(b.js("document.querySelectorAll('img').length") == 0, "no <img> element in the page")
        check(b.js("document.querySelectorAll('script').length") == 1, "one <script> element (the page's own)")
        check(b.js("document.title") == title and title in (
            "MMKV conformance report: PASS", "MMKV conformance report: FAIL"),
              f"document title unchanged: {title!r}")

        # the matrix screenshot
        b.js("location.hash = '#matrix'; window.scrollTo(0, 0)")
        rect = b.js("""(() => { const r = document.querySelector('#matrix table.matrix').getBoundingClientRect();
            const s = document.getElementById('matrix').getBoundingClientRect();
            return {x: Math.max(0, s.left - 8), y: s.top + window.scrollY,
                    width: Math.max(s.width, r.width) + 16, height: r.bottom - s.top + 12}; })()""")
        shot = b.call("Page.captureScreenshot",
                      {"format": "png", "clip": {**rect, "scale": 1}, "captureBeyondViewport": True},
                      session=True)
        args.screenshot.parent.mkdir(parents=True, exist_ok=True)
        args.screenshot.write_bytes(base64.b64decode(shot["data"]))
        check(args.screenshot.stat().st_size > 1000, f"matrix screenshot written to {args.screenshot}")

        # without JavaScript: the cells still open their details (CSS :target)
        b.load(url, scripts=False)
        check(b.js("document.getElementById('controls').hidden"), "without JavaScript: the filter stays hidden")
        b.call("Emulation.setScriptExecutionDisabled", {"value": False}, session=True)
        fail_cell_checks("without JavaScript")

        # a phone
        b.call("Emulation.setDeviceMetricsOverride",
               {"width": 390, "height": 844, "deviceScaleFactor": 2, "mobile": True}, session=True)
        b.load(url)
        width = b.js("document.documentElement.scrollWidth")
        check(width <= 391, f"on a 390 px screen the page is {width} px wide (tables scroll inside)")

        # events of every load
        requests = [e["params"]["request"]["url"] for e in b.events if e["method"] == "Network.requestWillBeSent"]
        foreign = [u for u in requests if u != url and not u.startswith(url + "#") and not u.startswith("data:")]
        check(not foreign, f"nothing fetched but the page ({len(requests)} request(s)){': ' + str(foreign) if foreign else ''}")
        console = [e["params"] for e in b.events
                   if (e["method"] == "Runtime.consoleAPICalled" and e["params"]["type"] in ("error", "assert"))
                   or e["method"] == "Runtime.exceptionThrown"
                   or (e["method"] == "Log.entryAdded" and e["params"]["entry"]["level"] == "error")]
        check(not console, f"no console error{': ' + json.dumps(console)[:600] if console else ''}")
    finally:
        b.close()
    print(f"{len(failures)} failing check(s); {time.monotonic() - started:.1f} s in Chromium")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
