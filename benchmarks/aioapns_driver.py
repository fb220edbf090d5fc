#!/usr/bin/env python3
"""Scenario 5's peer: aioapns (PyPI) sending N notifications to the mock, as fast as it goes.

usage: aioapns_driver.py PORT CA_FILE KEY_FILE KEY_ID TEAM_ID TOPIC N CONNECTIONS IN_FLIGHT
Prints one JSON line: rows, delivered, elapsed_s, rate, cpu_s.

aioapns 4.0 hard-codes APNs' host and port in its protocol classes, so they are overridden here; it
offers no ALPN of its own, so the SSL context passed in offers h2.
"""
import asyncio
import json
import os
import ssl
import sys
import time

from aioapns import APNs, NotificationRequest, PushType
from aioapns import connection


async def main():
    port, ca, key_file, key_id, team_id, topic = sys.argv[1:7]
    n, connections, in_flight = (int(v) for v in sys.argv[7:10])
    for cls in (connection.APNsProductionClientProtocol, connection.APNsDevelopmentClientProtocol):
        cls.APNS_SERVER = "127.0.0.1"
        cls.APNS_PORT = int(port)
    context = ssl.create_default_context(cafile=ca)
    context.set_alpn_protocols(["h2"])
    with open(key_file) as f:
        key = f.read()
    client = APNs(key=key, key_id=key_id, team_id=team_id, topic=topic, max_connections=connections,
                  ssl_context=context)
    message = {"aps": {"alert": {"title": "Benchmark", "body": "x" * 120}, "sound": "default"}, "id": 1}
    limit = asyncio.Semaphore(in_flight)
    delivered = 0

    async def one(i):
        nonlocal delivered
        async with limit:
            token = f"{i:064x}"
            result = await client.send_notification(
                NotificationRequest(device_token=token, message=message, push_type=PushType.ALERT))
            if result.is_successful:
                delivered += 1

    cpu0, start = time.process_time(), time.monotonic()
    await asyncio.gather(*(one(i) for i in range(n)))
    elapsed, cpu = time.monotonic() - start, time.process_time() - cpu0
    print(json.dumps({"rows": n, "delivered": delivered, "elapsed_s": elapsed, "rate": n / elapsed, "cpu_s": cpu}))


if __name__ == "__main__":
    asyncio.run(main())
