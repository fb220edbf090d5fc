#!/usr/bin/env python3
"""Renders an HTML file in headless Chromium, talking the DevTools protocol over
--remote-debugging-pipe (fd 3 in, fd 4 out; NUL-terminated JSON), with no websocket library.

usage: render_page.py [--width N] [--max-height N] PAGE.html=SCREENSHOT.png ...

One browser renders every page given, each in a fresh tab. Prints one JSON object on stdout,
keyed by each PAGE as given, with: the DOM (outerHTML), the body's text, the number of <img>
elements and of <script> elements, the reason names the layout broke across lines, every JavaScript exception, console error, Log error and dialog
the page raised, and the screenshot's size and count of distinct pixel colours. Run it inside
`unshare -n` so the page cannot reach any network. Chromium's own stderr noise is discarded.
"""
import base64, json, os, struct, subprocess, sys, tempfile, time, zlib, select, shutil

def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    sys.exit("render_page.py: chromium is not installed (make test-deps installs Debian's chromium)")

class Browser:
    def __init__(self, width, height):
        self.profile = tempfile.mkdtemp(prefix="apns-bulk-chromium-")
        to_child_r, self.to_child = os.pipe()
        self.from_child, from_child_w = os.pipe()
        def fds():
            os.dup2(to_child_r, 3)
            os.dup2(from_child_w, 4)
        args = [chromium(), "--headless", "--no-sandbox", "--remote-debugging-pipe", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions", "--mute-audio",
                "--hide-scrollbars", f"--user-data-dir={self.profile}", f"--window-size={width},{height}", "about:blank"]
        self.process = subprocess.Popen(args, pass_fds=(3, 4), preexec_fn=fds, stdin=subprocess.DEVNULL,
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_child_r)
        os.close(from_child_w)
        self.buffer = b""
        self.next_id = 0
        self.events = []

    def send(self, method, params=None, session=None):
        self.next_id += 1
        message = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            message["sessionId"] = session
        os.write(self.to_child, json.dumps(message).encode() + b"\0")
        wanted = self.next_id
        while True:
            reply = self.receive(30)
            if reply.get("id") == wanted:
                if "error" in reply:
                    raise RuntimeError(f"{method}: {reply['error']}")
                return reply.get("result", {})

    def receive(self, timeout):
        deadline = time.time() + timeout
        while b"\0" not in self.buffer:
            left = deadline - time.time()
            if left <= 0 or not select.select([self.from_child], [], [], left)[0]:
                raise TimeoutError("no answer from chromium")
            chunk = os.read(self.from_child, 1 << 20)
            if not chunk:
                raise EOFError("chromium closed its pipe")
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b"\0", 1)
        parsed = json.loads(message)
        if "method" in parsed:
            self.events.append(parsed)
        return parsed

    def wait_for(self, method, timeout):
        deadline = time.time() + timeout
        while not any(e["method"] == method for e in self.events):
            self.receive(max(0.01, deadline - time.time()))

    def drain(self, seconds):
        deadline = time.time() + seconds
        try:
            while time.time() < deadline:
                self.receive(max(0.01, deadline - time.time()))
        except TimeoutError:
            pass

    def close(self):
        try:
            self.send("Browser.close")
        except Exception:
            pass
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        os.close(self.to_child)
        os.close(self.from_child)
        shutil.rmtree(self.profile, ignore_errors=True)

def png_size(data):
    width, height = struct.unpack(">II", data[16:24])
    return width, height, None

def png_colors(data):
    """Width, height and the number of distinct RGB(A) colours of an 8-bit PNG."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat = 8, b""
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if kind == b"IHDR":
            width, height, depth, color = struct.unpack(">IIBB", body[:10])
        elif kind == b"IDAT":
            idat += body
        pos += 12 + length
    channels = {2: 3, 6: 4}[color]
    raw, stride = zlib.decompress(idat), width * channels
    previous, colors, offset = bytearray(stride), set(), 0
    for _ in range(height):
        kind, line = raw[offset], bytearray(raw[offset + 1:offset + 1 + stride])
        offset += 1 + stride
        for i in range(stride):
            a = line[i - channels] if i >= channels else 0
            b = previous[i]
            c = previous[i - channels] if i >= channels else 0
            if kind == 1: line[i] = (line[i] + a) & 255
            elif kind == 2: line[i] = (line[i] + b) & 255
            elif kind == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif kind == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        for i in range(0, stride, channels * 4):
            colors.add(bytes(line[i:i + 3]))
        previous = line
    return width, height, len(colors)

def render(browser, page, shot, width, max_height=16000):
    target = browser.send("Target.createTarget", {"url": "about:blank"})["targetId"]
    session = browser.send("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    browser.events = []
    for domain in ("Runtime", "Log", "Page"):
        browser.send(domain + ".enable", session=session)
    browser.send("Page.navigate", {"url": "file://" + os.path.abspath(page)}, session=session)
    browser.wait_for("Page.loadEventFired", 30)
    browser.drain(0.3)
    def evaluate(expression):
        return browser.send("Runtime.evaluate", {"expression": expression, "returnByValue": True},
                            session=session)["result"].get("value")
    height = int(evaluate("Math.ceil(document.documentElement.scrollHeight)") or 1200)
    browser.send("Emulation.setDeviceMetricsOverride",
                 {"width": width, "height": min(height, 16000), "deviceScaleFactor": 1, "mobile": False}, session=session)
    png = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png", "clip": {
        "x": 0, "y": 0, "width": width, "height": min(height, max_height), "scale": 1}}, session=session)["data"])
    with open(shot, "wb") as f:
        f.write(png)
    # Colours are counted on a quarter-scale capture of the whole page: the same picture, a
    # sixteenth of the pixels for this pure-Python decoder.
    small = base64.b64decode(browser.send("Page.captureScreenshot", {"format": "png", "clip": {
        "x": 0, "y": 0, "width": width, "height": min(height, 16000), "scale": 0.25}}, session=session)["data"])
    _, _, colors = png_colors(small)
    shot_width, shot_height, _ = png_size(png)
    events = [e for e in browser.events if e.get("sessionId") == session]
    result = {
        "dom": evaluate("document.documentElement.outerHTML"),
        "text": evaluate("document.body.innerText"),
        "title": evaluate("document.title"),
        "images": evaluate("document.images.length"),
        "scripts": evaluate("document.scripts.length"),
        "charts": evaluate("Array.from(document.querySelectorAll('svg.chart')).map(e => e.id)"),
        # Reason names in the tables that the layout broke across lines ("Unregister/ed").
        "wrapped_reasons": evaluate("Array.from(document.querySelectorAll('tr[data-reason] code, tr[data-dead-reason] code, "
                                    "tr[data-dead-by-environment] code')).filter(e => e.getClientRects().length > 1)"
                                    ".map(e => e.textContent)"),
        "exceptions": [e["params"]["exceptionDetails"].get("text", "") + " " +
                       json.dumps(e["params"]["exceptionDetails"].get("exception", {}).get("description", ""))
                       for e in events if e["method"] == "Runtime.exceptionThrown"],
        "console_errors": [json.dumps(e["params"].get("args", [])) for e in events
                           if e["method"] == "Runtime.consoleAPICalled" and e["params"].get("type") in ("error", "assert")],
        "log_errors": [e["params"]["entry"].get("text", "") + " " + e["params"]["entry"].get("url", "")
                       for e in events if e["method"] == "Log.entryAdded" and e["params"]["entry"].get("level") == "error"],
        "dialogs": [e["params"].get("message", "") for e in events if e["method"] == "Page.javascriptDialogOpening"],
        "screenshot": {"width": shot_width, "height": shot_height, "colors": colors},
    }
    browser.send("Target.closeTarget", {"targetId": target})
    return result

def main():
    args, width, max_height = sys.argv[1:], 1000, 16000
    while args[:1] in (["--width"], ["--max-height"]):
        if args[0] == "--width":
            width = int(args[1])
        else:
            max_height = int(args[1])
        args = args[2:]
    browser = Browser(width, 1200)
    results = {}
    try:
        for pair in args:
            page, shot = pair.rsplit("=", 1)
            results[page] = render(browser, page, shot, width, max_height)
    finally:
        browser.close()
    json.dump(results, sys.stdout)

if __name__ == "__main__":
    main()
