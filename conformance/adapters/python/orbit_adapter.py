"""A consumer of orbit.events.v1 in Python, driven by the client harness protocol.

The worked example of conformance/README.md, "Certify your client". It needs the `websockets`
package (Debian: python3-websockets; the asyncio API, version 10 or newer) and the standard
library. The harness config comes on stdin; report lines go to stdout
(conformance/harness.schema.json). The Inbox is SQLite (the standard library's sqlite3) in
STATE_DIR: one transaction records the event by its id, does the business write and stores the
ACK proof, and only after the commit is the ACK sent (spec/rules.md#s6-7).
"""

import asyncio
import json
import os
import secrets
import sqlite3
import sys
import time

import websockets

RETRYABLE_CLOSES = {1001, 1006, 1011, 1012, 1013}


def report(line):
    sys.stdout.write(json.dumps(line) + "\n")
    sys.stdout.flush()


def new_id():
    return secrets.token_hex(16)


class Inbox:
    """Events by id and the proofs not yet answered, in one SQLite file."""

    def __init__(self, path):
        self.db = sqlite3.connect(path, isolation_level=None)
        self.db.execute("PRAGMA synchronous = FULL")
        self.db.execute("CREATE TABLE IF NOT EXISTS events (event_id TEXT PRIMARY KEY, task_id TEXT, result_json TEXT)")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS proofs (delivery_id TEXT PRIMARY KEY, epoch TEXT, lease_secret TEXT)"
        )

    def stored(self):
        return [row[0] for row in self.db.execute("SELECT event_id FROM events ORDER BY event_id")]

    def record(self, event_id, task_id, result_json, proof):
        """Records the event (if new) and the proof in one transaction; True when the event was new."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            new = self.db.execute(
                "INSERT OR IGNORE INTO events VALUES (?, ?, ?)", (event_id, task_id, result_json)
            ).rowcount == 1
            self.db.execute(
                "INSERT OR REPLACE INTO proofs VALUES (?, ?, ?)",
                (proof["delivery_id"], proof["epoch"], proof["lease_secret"]),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return new

    def proofs(self):
        rows = self.db.execute("SELECT delivery_id, epoch, lease_secret FROM proofs")
        return [{"delivery_id": d, "epoch": e, "lease_secret": s} for d, e, s in rows]

    def forget(self, proof):
        self.db.execute(
            "DELETE FROM proofs WHERE delivery_id = ? AND epoch = ?", (proof["delivery_id"], proof["epoch"])
        )


def raw_member(text, name):
    """The raw JSON text of the first member `name` in `text`: json.loads keeps big integers, but
    not the exact text of a float such as 0.1000000000000000055511151231257827."""
    start = text.find('"%s":' % name)
    if start < 0:
        return None
    i = begin = start + len(name) + 3
    depth, in_string = 0, False
    while i < len(text):
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            if depth == 0:
                break
            depth -= 1
        elif c == "," and depth == 0:
            break
        i += 1
    return text[begin:i]


class Stop(Exception):
    def __init__(self, code):
        super().__init__(code or "stopped")
        self.code = code


async def session(config, inbox):
    """One connection. Returns normally when it ended in a way worth a reconnect; raises Stop otherwise."""
    url = config["base_url"].replace("http://", "ws://", 1) + "/v1/events/connect"
    headers = {"Authorization": "Bearer " + config["token"]}
    try:
        ws = await websockets.connect(
            url, subprotocols=["orbit.events.v1"], extra_headers=headers, compression=None,
            max_size=512 * 1024, ping_interval=None,
        )
    except websockets.exceptions.InvalidStatusCode as error:
        if error.status_code in (429, 503):
            retry_after = error.headers.get("Retry-After", "1") if error.headers else "1"
            await asyncio.sleep(max(1.0, float(retry_after)))
            return
        raise Stop({426: "PROTOCOL_REQUIRED", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED"}.get(error.status_code))
    except OSError:
        await asyncio.sleep(0.5)
        return
    interval = config["heartbeat_interval_ms"] / 1000
    session_id = None
    acks = {}  # message_id -> proof, to know what a DELIVERY_LEASE_LOST answers
    fatal = None
    last_answer = time.monotonic()

    async def send(kind, body):
        message_id = new_id()
        await ws.send(json.dumps({"protocol_version": "1", "type": kind, "message_id": message_id,
                                  "session_id": session_id, "body": body}))
        return message_id

    async def ack(proof):
        acks[await send("event.ack", proof)] = proof

    async def heartbeat():
        while True:
            await asyncio.sleep(interval)
            if time.monotonic() - last_answer > 3 * interval:
                # Three intervals without a word: the connection is stuck. Cut it; the caller reconnects.
                ws.transport.abort()
                return
            await send("events.ping", {})

    pinger = None
    try:
        await ws.send(json.dumps({"protocol_version": "1", "type": "events.hello", "message_id": new_id(),
                                  "body": {"subscription_id": config["subscription_id"], "capacity": config["capacity"]}}))
        async for text in ws:
            frame = json.loads(text)
            last_answer = time.monotonic()
            kind = frame["type"]
            if kind == "events.welcome":
                session_id = frame["session_id"]
                pinger = asyncio.ensure_future(heartbeat())
                for proof in inbox.proofs():
                    await ack(proof)
            elif kind == "event.deliver":
                body = frame["body"]
                event, delivery = body["event"], body["delivery"]
                proof = {"delivery_id": delivery["id"], "epoch": delivery["lease_epoch"], "lease_secret": body["lease_secret"]}
                result_json = raw_member(text, "result") if "result" in event["snapshot"] else None
                if inbox.record(event["id"], event["snapshot"]["task_id"], result_json, proof):
                    line = {"type": "stored", "event_id": event["id"], "delivery_id": delivery["id"],
                            "task_id": event["snapshot"]["task_id"], "event_type": event["type"]}
                    if result_json is not None:
                        line["result_json"] = result_json
                    report(line)
                else:
                    report({"type": "duplicate", "event_id": event["id"], "delivery_id": delivery["id"]})
                await ack(proof)
            elif kind == "ack" and "delivery_id" in frame["body"]:
                proof = acks.pop(frame["reply_to"], None)
                if proof:
                    inbox.forget(proof)
            elif kind == "error" and frame["error"]["code"] == "DELIVERY_LEASE_LOST":
                # Replaced by a newer delivery: forget this proof, never guess the next epoch.
                proof = acks.pop(frame.get("reply_to"), None)
                if proof:
                    inbox.forget(proof)
            elif kind == "error":
                fatal = frame["error"]["code"]
    except websockets.exceptions.ConnectionClosed:
        pass
    finally:
        if pinger:
            pinger.cancel()
    await ws.wait_closed()
    code = ws.close_code if ws.close_code is not None else 1006
    reason = ws.close_reason or ""
    contract = fatal or (reason if reason.isupper() and reason.replace("_", "").isalpha() else None)
    if contract == "UNAVAILABLE" or (contract is None and code in RETRYABLE_CLOSES):
        await asyncio.sleep(0.2)
        return
    raise Stop(contract)


async def main():
    config = json.loads(sys.stdin.read())
    inbox = Inbox(os.path.join(config["state_dir"], "inbox.db"))
    report({"type": "ready", "stored": inbox.stored()})
    try:
        while True:
            await session(config, inbox)
    except Stop as stop:
        if stop.code:
            report({"type": "error", "code": stop.code, "message": "the session ended with " + stop.code})
        report({"type": "stopped", "code": stop.code})


if __name__ == "__main__":
    asyncio.run(main())
