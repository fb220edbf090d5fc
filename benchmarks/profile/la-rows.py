#!/usr/bin/env python3
"""Live Activity rows and alert rows of the same shape, for the per-row cost of ActivityKit's rules.

Usage: benchmarks/profile/la-rows.py ROWS OUT_LA OUT_ALERT
Both files have the columns device_token,payload,priority,push_type,topic and the same payloads (an
update with a timestamp, an event, a content-state and an alert); they differ only in push_type and
topic (liveactivity rows need the topic's .push-type.liveactivity suffix). Fixed seed: the same bytes
on every run. cg.sh sends either: CSV=la30k.csv benchmarks/profile/cg.sh BIN TAG.
"""
import random
import sys

rows, out_la, out_alert = int(sys.argv[1]), sys.argv[2], sys.argv[3]
rng = random.Random(7)
with open(out_la, "w") as la, open(out_alert, "w") as alert:
    header = "device_token,payload,priority,push_type,topic\n"
    la.write(header)
    alert.write(header)
    for n in range(1, rows + 1):
        token = "%064x" % rng.getrandbits(256)
        status = ("Row %d " % n + "abcdefghijklmnopqrstuvwxyz" * 3)[:59]  # every payload as long
        payload = ('{"aps":{"timestamp":%d,"event":"update","content-state":{"status":"%s","eta":12},'
                   '"alert":{"title":"Campaign \U0001F389","body":"Score 1-0"}}}' % (1700000000 + n, status))
        field = '"' + payload.replace('"', '""') + '"'
        la.write("%s,%s,,liveactivity,com.example.bench.push-type.liveactivity\n" % (token, field))
        alert.write("%s,%s,,alert,com.example.bench\n" % (token, field))
