#!/usr/bin/env python3
"""Writes the seed corpus of each fuzzer under corpus/<target>/ (run once; the files are committed).

Keys and certificates are fresh throwaway ones made with `openssl` (so a rerun changes those files);
the .p12 files use one PBE and MAC iteration, so the key fuzzer is not spending its time in PBKDF2.
"""
import os, struct, subprocess, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
TOKEN = "ab" * 32


def write(target, name, data):
    directory = os.path.join(HERE, "corpus", target)
    os.makedirs(directory, exist_ok=True)
    with open(os.path.join(directory, name), "wb") as f:
        f.write(data if isinstance(data, bytes) else data.encode())


# FuzzCSV: a selector byte (chunk size - 1 in bits 0-5, requires-topic bit 6, default payload bit 7), then the file.
csv_files = {
    "plain": "device_token,payload\n%s,\"{\"\"aps\"\":{\"\"alert\"\":\"\"hi\"\"}}\"\n%s,\n" % (TOKEN, "cd" * 32),
    "columns": "Device_Token , payload,topic,push_type,priority,expiration,collapse_id,apns_id\r\n"
               "%s,\"{\"\"aps\"\":{}}\",com.example.app,background,5,1700000000,c1,123e4567-e89b-12d3-a456-426614174000\r\n"
               "%s,\"{}\",com.example.app.voip,voip,10,0,,\r\n\r\n" % (TOKEN, TOKEN.upper()),
    "problems": "\ufeffdevice_token,payload,extra\nzz,{},1,2\n%s\n\"unclosed,{}\n" % TOKEN,
    "bom-crlf": "\ufeffdevice_token,payload\r\n  %s  ,\"{\"\"a\"\":\"\"\u00e9\U0001F389\"\"}\"\r\n" % TOKEN,
}
selectors = {"plain": 0x06, "columns": 0x41, "problems": 0x80, "bom-crlf": 0x3f}
for name, text in csv_files.items():
    write("csv", name, bytes([selectors[name]]) + text.encode())
zst = subprocess.run(["zstd", "-q", "-c"], input=csv_files["plain"].encode(), capture_output=True, check=True).stdout
write("csv", "plain-zst", bytes([0x10]) + zst)

# FuzzCSVFast: a selector byte (bit 0 counting parser, bit 1 extra column, bits 2-7 chunk size, or 0 for
# a count byte and that many gap bytes), then the file.
csvfast_files = {
    "campaign": bytes([0x1c]) + (csv_files["plain"] * 3).encode(),
    "columns": bytes([0x0e]) + csv_files["columns"].encode(),
    "gaps": bytes([0x00, 3, 5, 40, 1]) + csv_files["bom-crlf"].encode(),
    "edges": bytes([0x05]) + b'device_token,payload,topic,x\n a , "b""" ,"c\nd"\t,\r\n,,,\n\n \n"e"f\n',
    "counting": bytes([0x09]) + ("device_token,topic\n%s,\n%s,\"t\"\r%s\n" % (TOKEN, TOKEN, TOKEN)).encode(),
}
for name, data in csvfast_files.items():
    write("csvfast", name, data)

# FuzzJSON: payloads and error bodies.
for name, text in {
    "payload": '{"aps":{"alert":{"title":"T","body":"B \\u00e9 \\ud83c\\udf89"},"badge":1,"sound":"x"},"k":[1,-2.5e3,true,false,null]}',
    "reason": '{"reason":"BadDeviceToken"}',
    "unregistered": '{"reason":"Unregistered","timestamp":1700000000000}',
    "nested": '{"a":[[[[{"b":{}}]]]]," ":"\\"\\\\\\/\\b\\f\\n\\r\\t"}',
    "bad": '{"a":01,}',
}.items():
    write("json", name, text)


# FuzzResponse: wire inputs (selector 0: reads of [length byte, bytes]) and answer parts (selector 1).
def frame(kind, flags, stream, payload):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def literal(name, value):  # literal header field without indexing, new name
    return b"\x00" + bytes([len(name)]) + name + bytes([len(value)]) + value


def reads(data, size=200):
    out = b""
    for i in range(0, len(data), size):
        chunk = data[i:i + size]
        out += bytes([len(chunk)]) + chunk
    return out


settings = frame(4, 0, 0, struct.pack(">HI", 3, 100)) + frame(4, 1, 0, b"")
apns_id = literal(b"apns-id", b"123e4567-e89b-12d3-a456-426614174000")
ok = frame(1, 5, 1, b"\x88" + apns_id)                       # :status 200, END_STREAM|END_HEADERS
bad = frame(1, 4, 3, b"\x8c" + apns_id) + frame(0, 1, 3, b'{"reason":"BadDeviceToken"}')  # 400
gone = frame(1, 4, 5, literal(b":status", b"410")) + frame(0, 1, 5, b'{"reason":"Unregistered","timestamp":1700000000000}')
goaway = frame(7, 0, 0, struct.pack(">II", 5, 0) + b'{"reason":"Shutdown"}')
reset = frame(3, 0, 7, struct.pack(">I", 7))
write("response", "answers", b"\x00" + reads(settings + ok + bad + gone))
write("response", "goaway", b"\x00" + reads(settings + ok) + reads(goaway + reset))
write("response", "ping", b"\x00" + reads(settings + frame(6, 0, 0, b"12345678") + frame(8, 0, 0, struct.pack(">I", 1000))))
write("response", "parts-410", b"\x01" + struct.pack(">H", 410) + b"\x04abcd" + b'{"reason":"Unregistered","timestamp":1}')
write("response", "parts-500", b"\x01" + struct.pack(">H", 500) + b"\x00" + b'{"reason":"InternalServerError"}')

# FuzzJobFile: TOML job files.
write("jobfile", "nightly", 'endpoint = ["production", "api.push.apple.com:443"]\nconnections = 8\nmax-streams = 500\n'
      'topic = "com.example.app"\nprogress = "never"\ndry_run = false\nrate = 1.5\n')
write("jobfile", "mock", 'endpoint = "mock"\n[mock]\ngoaway-after = 5000\nfail = ["500:0.01", "503:0.02"]\nlatency_ms = 3\n'
      'throttle-after-errors = true\n')
write("jobfile", "odd", "'quoted key' = 'x'\n\"a.b\" = 1979-05-27T07:32:00Z\nx = { y = 1 }\narr = [[1], [\"a\"]]\n"
      "s = \"\"\"multi\nline\\u00e9\"\"\"\n[unknown]\nk = 1\n")

# FuzzKeys: a selector byte (0 .p8, 1 public key, 2 .p12 no password, 3 .p12 "secret", 4 cert NUL key), then the file.
with tempfile.TemporaryDirectory() as tmp:
    def openssl(*args, stdin=None):
        return subprocess.run(["openssl", *args], input=stdin, capture_output=True, check=True, cwd=tmp).stdout
    key = openssl("genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256")
    sec1 = openssl("ec", "-in", "/dev/stdin", stdin=key)
    public = openssl("pkey", "-pubout", "-in", "/dev/stdin", stdin=key)
    with open(os.path.join(tmp, "k.pem"), "wb") as f:
        f.write(key)
    cert = openssl("req", "-new", "-x509", "-key", "k.pem", "-subj", "/CN=fuzz", "-days", "1")
    with open(os.path.join(tmp, "c.pem"), "wb") as f:
        f.write(cert)
    p12_empty = openssl("pkcs12", "-export", "-noiter", "-nomaciter", "-inkey", "k.pem", "-in", "c.pem",
                         "-passout", "pass:")
    p12_legacy = openssl("pkcs12", "-export", "-legacy", "-noiter", "-nomaciter", "-inkey", "k.pem", "-in", "c.pem",
                          "-passout", "pass:secret")
    write("keys", "p8", b"\x00" + key)
    write("keys", "sec1", b"\x00" + sec1)
    write("keys", "public", b"\x01" + public)
    write("keys", "p12-empty", b"\x02" + p12_empty)
    write("keys", "p12-legacy", b"\x03" + p12_legacy)
    write("keys", "cert-key", b"\x04" + cert + b"\x00" + key)

# FuzzMockRequest: a configuration byte, then NUL-separated requests.
# Signed (iat 1700000000, kid ABCDE12345, iss TEAM123456) by a throwaway key whose public half is
# FuzzMockRequest.swift's `publicKeyPEM`; the private half was deleted.
jwt = ("eyJhbGciOiJFUzI1NiIsImtpZCI6IkFCQ0RFMTIzNDUifQ.eyJpc3MiOiJURUFNMTIzNDU2IiwiaWF0IjoxNzAwMDAwMDAwfQ."
       "1eGiOjqmP5_XLffWvnRjZ-Gl_lfsDvNfyebQPGjhjTu_1WtETqSFS03Xf9mJ5IzwbMeIRowZJ8WMvO8b_AANwA")

def request(headers, body=b'{"aps":{"alert":"hi"}}', path="/3/device/" + TOKEN, method="POST"):
    lines = [method, path] + ["%s %s" % h for h in headers] + [""]
    return "\n".join(lines).encode() + b"\n" + body


standard = [("apns-topic", "com.example.app"), ("apns-push-type", "alert"), ("apns-priority", "10"),
            ("apns-expiration", "0"), ("apns-id", "123e4567-e89b-12d3-a456-426614174000"), ("apns-collapse-id", "c")]
write("mockrequest", "token", b"\x04" + b"\x00".join([
    request([("authorization", "bearer " + jwt)] + standard),
    request([("authorization", "bearer " + jwt), ("apns-topic", "com.example.app.voip"), ("apns-push-type", "voip")]),
    request([("authorization", "bearer " + jwt), ("apns-topic", "com.example.app")], body=b""),
]))
write("mockrequest", "presence-faults", b"\x0d" + b"\x00".join([
    request([("authorization", "bearer x")] + standard, path="/3/device/" + "de" * 32),
    request([("authorization", "bearer x")] + standard, path="/3/device/" + "5c" * 32),
    request([("authorization", "bearer x"), ("apns-topic", "a"), ("apns-topic", "b")]),
    request([("authorization", "bearer x"), ("apns-topic", "com.example.app")], method="GET", path="/3/device/zz"),
]))
write("mockrequest", "certificate", b"\x02" + request([("apns-push-type", "background"), ("apns-priority", "5")],
                                                      body=b'{"aps":{"content-available":1}}'))
