#!/usr/bin/env python3
"""The webhook receiver of bench/webhooks.sh, and the figures it collects (standard library only).

  webhook_receiver.py serve --port P --secret whsec_…
      one asyncio event loop on 127.0.0.1:P, HTTP/1.1 with keep-alive. POST /webhook: reads the
      Standard Webhooks request, checks its signature, notes when it arrived (time.time(), right
      after the body was read), the event's own `timestamp` (the body's, in milliseconds: when
      Ferry wrote the event) and its type, task and sequence, and answers 204 at once. POST
      /reference does exactly the same work but only counts (the comparison load from wrk).
      GET /stats: counts so far; GET /records: every webhook noted, in arrival order; GET
      /sample: the last webhook's body. A decision event (DECISION_TYPES) is answered 200 with
      what lets the task go on (`decision_reply`), and its record notes when the answer was written.
      One receiver serves many endpoints: any path under /webhook/ is received the same way and
      noted with its path, except that a path with a /hang/ segment is never answered (the
      request is held until the sender gives up) and one with a /slow/ segment is answered after
      --slow seconds (default 2).
  webhook_receiver.py reference-lua --receiver URL --secret S --out FILE
      writes a wrk script that POSTs the last webhook body received, signed like Ferry signs
      it, to /reference
  webhook_receiver.py collect --receiver URL --events TYPE,TYPE… [--timeout S] [--quiet S] [--expected-ids FILE]
      with FERRY_URL, KEY and SESSION in the environment (all tasks finished): counts the
      session's events of those types in Ferry's event log (GET /v1/sessions/{id}/events),
      waits until the receiver has every one of them and Ferry lists no pending delivery, then
      QUIET seconds more for duplicates; prints the figures as JSON
  webhook_receiver.py collect-endpoints --receiver URL --plan FILE --events TYPE,TYPE… [--timeout S]
      for bench/receivers.sh, with FERRY_URL in the environment (all tasks finished). FILE has a
      line per delegate endpoint: ROLE KEY SESSION URL (ROLE: a tenant's name, or hang/slow for
      the faulty endpoints). Waits until Ferry lists no pending delivery outside the faulty
      endpoints' sessions and the receiver has every event of those types of the other sessions
      (their event logs); prints, as JSON, the healthy endpoints' events per second (first to last
      arrival), the delay from each event to its arrival per role, and what the faulty ones got
  webhook_receiver.py sse --count N --out FILE [--after POSITION] [--timeout S]
      with FERRY_URL and KEY in the environment: reads GET /v1/events/stream (from the end of the
      log, or after POSITION as Last-Event-ID) until N events arrived or TIMEOUT passed; writes
      each event's position, id, timestamp and arrival to FILE as JSON
  webhook_receiver.py sse-figures --records FILE
      events per second and the delay from each event's timestamp to its arrival, as JSON
  POST /busy makes /webhook answer 503 with Retry-After: 3600 (nothing noted: Ferry schedules
  each task's first delivery an hour later and keeps the rest behind it), POST /open answers
  again, POST /reset forgets every record: how webhooks.sh builds a backlog to drain.
  webhook_receiver.py backlog-ready --events TYPE,TYPE… --out FILE [--timeout S]
      with FERRY_URL, KEY and SESSION in the environment (all tasks finished): waits until every
      event of those types in the session's log has its delivery, pending (the fan-out is done);
      writes their ids to FILE, for collect --expected-ids (which then need not read the log)
  webhook_receiver.py decisions --receiver URL
      with FERRY_URL, KEY and SESSION in the environment (all tasks finished): who decided the
      session's decision events (Ferry's event log), and each decision's overhead: from the
      event (the transfer paused) to the task's next event (it went on), minus the receiver's
      own time from arrival to answer; prints the figures as JSON
"""
import argparse
import asyncio
import base64
import collections
import datetime
import hashlib
import hmac
import http.client
import json
import math
import os
import socket
import sys
import time
import urllib.parse


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() if text else None


def secret_key(secret):
    if not secret.startswith("whsec_"):
        sys.exit("the secret must start with whsec_")
    return base64.b64decode(secret[len("whsec_"):])


# The events whose reply Ferry waits for (EventType.isDecision).
DECISION_TYPES = {
    "task.willBeginDelayedRequest", "task.willPerformHTTPRedirection", "task.didReceiveChallenge",
    "session.didReceiveChallenge", "dataTask.didReceiveResponse", "dataTask.willCacheResponse",
}


def decision_reply(event):
    """What a delegate that lets everything go on answers: URLSession's completion handler called
    with the proposed value."""
    if event.get("type") == "dataTask.willCacheResponse":
        return {"cachedResponse": (event.get("data") or {}).get("proposedResponse")}
    return {"disposition": "allow"}


def sign(key, message_id, timestamp, body):
    mac = hmac.new(key, f"{message_id}.{timestamp}.".encode() + body, hashlib.sha256).digest()
    return "v1," + base64.b64encode(mac).decode()


# ---------------------------------------------------------------------------------------------
# serve
#
# One asyncio event loop, HTTP/1.1 parsed by hand over asyncio.Protocol. The first form was a
# ThreadingHTTPServer: a thread per connection, the GIL handed between them, and
# email.parser for every header block. Under decisions.sh's load it took 0.44 ms of CPU per
# request and a median 11 ms from Ferry's send to the body read, on the two cores Ferry and
# PostgreSQL share with it: the bench then measured the receiver as much as Ferry. The issue's
# receiver answers within a millisecond; this one does at that load.

class Receiver:
    def __init__(self, key, slow_seconds=2.0):
        self.key = key
        self.slow_seconds = slow_seconds
        self.records = []
        # Kept as records arrive: /stats is polled while a run goes on, and building the set
        # there held the one event loop (and every arrival behind it) for milliseconds.
        self.unique_ids = set()
        self.sample = b"{}"
        self.reference = 0
        self.bad = collections.Counter()
        self.busy = False

    def verified(self, headers, body):
        message_id, timestamp = headers.get("webhook-id"), headers.get("webhook-timestamp")
        presented = (headers.get("webhook-signature") or "").split()
        if not message_id or not timestamp or not presented:
            return False
        expected = sign(self.key, message_id, timestamp, body)
        return any(hmac.compare_digest(entry, expected) for entry in presented)

    def receive(self, path, headers, body, arrived):
        """A webhook (or a wrk reference request): checked, noted. Returns the record, or None
        when the body is not an event."""
        ok = self.verified(headers, body)
        try:
            event = json.loads(body)
            data = event.get("data") or {}
            record = {
                "id": headers.get("webhook-id"), "type": event.get("type"),
                "timestamp": event.get("timestamp"), "arrived": arrived,
                "taskId": data.get("taskId"), "sessionId": data.get("sessionId"), "sequence": data.get("sequence"),
                "headerTimestamp": int(headers.get("webhook-timestamp") or 0), "signed": ok,
                "path": path,
            }
        except (ValueError, AttributeError):
            record, event = None, None
        if record is None:
            self.bad["unparsable"] += 1
        elif not ok:
            self.bad["bad signature"] += 1
        if path == "/reference":
            self.reference += 1
        elif record is not None:
            record["index"] = len(self.records)
            self.records.append(record)
            self.unique_ids.add(record["id"])
            self.sample = body
        return record, event

    def get(self, path):
        if path == "/stats":
            records = self.records
            return {
                "received": len(records), "unique": len(self.unique_ids),
                "reference": self.reference, "bad": dict(self.bad),
                "lastArrival": records[-1]["arrived"] if records else None,
            }
        if path == "/records":
            return self.records
        if path == "/sample":
            return json.loads(self.sample)
        return None


REASONS = {200: "OK", 204: "No Content", 400: "Bad Request", 404: "Not Found", 503: "Service Unavailable"}


def response(status, payload=None, extra=b""):
    """A whole response in one buffer (one write: no Nagle wait between headers and body)."""
    body = b"" if payload is None else json.dumps(payload).encode()
    head = f"HTTP/1.1 {status} {REASONS[status]}\r\nContent-Length: {len(body)}\r\n"
    if payload is not None:
        head += "Content-Type: application/json\r\n"
    return head.encode() + extra + b"\r\n" + body


class Connection(asyncio.Protocol):
    """One keep-alive connection: requests parsed as they complete, answered in order."""

    def __init__(self, receiver):
        self.receiver = receiver
        self.buffer = b""
        self.transport = None
        # A request held (hang, slow): nothing after it is read until it is answered.
        self.holding = False
        # Whether the request being read was told to go on (Expect: 100-continue).
        self.continued = False

    def connection_made(self, transport):
        self.transport = transport
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data):
        self.buffer += data
        self.process()

    def process(self):
        while not self.holding and self.transport is not None:
            end = self.buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            lines = self.buffer[:end].decode("latin-1").split("\r\n")
            headers = {}
            for line in lines[1:]:
                name, _, value = line.partition(":")
                headers[name.strip().lower()] = value.strip()
            try:
                method, target, _ = lines[0].split(" ", 2)
                length = int(headers.get("content-length") or 0)
            except ValueError:
                self.transport.write(response(400))
                self.transport.close()
                return
            if len(self.buffer) < end + 4 + length:
                if headers.get("expect", "").lower() == "100-continue" and not self.continued:
                    self.continued = True
                    self.transport.write(b"HTTP/1.1 100 Continue\r\n\r\n")
                return
            self.continued = False
            body = self.buffer[end + 4:end + 4 + length]
            self.buffer = self.buffer[end + 4 + length:]
            try:
                self.handle(method, target.split("?")[0], headers, body, time.time())
            except Exception:  # a malformed event loses its request, not the connection
                self.receiver.bad["unhandled"] += 1
                self.transport.write(response(400))

    def handle(self, method, path, headers, body, arrived):
        receiver = self.receiver
        if method == "GET":
            payload = receiver.get(path)
            self.transport.write(response(404 if payload is None else 200, payload))
            return
        if method != "POST":
            self.transport.write(response(404))
            return
        if path in ("/busy", "/open", "/reset"):
            if path == "/reset":
                receiver.records = []
                receiver.unique_ids = set()
            else:
                receiver.busy = path == "/busy"
            self.transport.write(response(204))
            return
        if path not in ("/webhook", "/reference") and not path.startswith("/webhook/"):
            self.transport.write(response(404))
            return
        if path == "/webhook" and receiver.busy:
            self.transport.write(response(503, extra=b"Retry-After: 3600\r\n"))
            return
        record, event = receiver.receive(path, headers, body, arrived)
        segments = path.split("/")
        if "hang" in segments:
            # Never answered: the sender sends nothing more before an answer, and gives up.
            self.holding = True
        elif "slow" in segments:
            self.holding = True
            asyncio.get_running_loop().call_later(receiver.slow_seconds, self.answer_late)
        elif record is not None and record["type"] in DECISION_TYPES:
            self.transport.write(response(200, decision_reply(event)))
            record["answered"] = time.time()
        else:
            self.transport.write(response(204))

    def answer_late(self):
        if self.transport is None:
            return
        self.transport.write(response(204))
        self.holding = False
        self.process()

    def connection_lost(self, exc):
        self.transport = None


def serve(args):
    receiver = Receiver(secret_key(args.secret), args.slow)

    async def run():
        server = await asyncio.get_running_loop().create_server(
            lambda: Connection(receiver), "127.0.0.1", args.port, backlog=1024
        )
        async with server:
            await server.serve_forever()

    asyncio.run(run())


# ---------------------------------------------------------------------------------------------
# reference-lua

def lua_string(text):
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def reference_lua(args):
    body = json.dumps(get_json(args.receiver, "/sample"), separators=(",", ":")).encode()
    key = secret_key(args.secret)
    timestamp = int(time.time())
    with open(args.out, "w") as out:
        out.write(f"""wrk.method = "POST"
wrk.path = "/reference"
wrk.body = {lua_string(body.decode())}
wrk.headers["Content-Type"] = "application/json"
wrk.headers["webhook-id"] = "msg_reference"
wrk.headers["webhook-timestamp"] = "{timestamp}"
wrk.headers["webhook-signature"] = "{sign(key, "msg_reference", timestamp, body)}"
wrk.headers["Expect"] = ""
""")


# ---------------------------------------------------------------------------------------------
# collect

def get_json(base, path, headers=None):
    url = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)
    try:
        connection.request("GET", path, headers=headers or {})
        response = connection.getresponse()
        payload = response.read()
        if response.status != 200:
            sys.exit(f"GET {path} answered {response.status}: {payload[:300]!r}")
        return json.loads(payload)
    finally:
        connection.close()


def ferry_pages(path, key=None):
    """Every item of a Ferry list, following nextCursor (with KEY's tenant unless `key` is given)."""
    headers = {"Authorization": "Bearer " + (key or os.environ["KEY"])}
    items, after = [], None
    while True:
        separator = "&" if "?" in path else "?"
        page = get_json(os.environ["FERRY_URL"], path + separator + "limit=1000" + (f"&after={after}" if after else ""), headers)
        items += page["data"]
        after = page.get("nextCursor")
        if not after:
            return items


def percentile(values, fraction):
    """Nearest rank."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(fraction * len(ordered)) - 1)]


def milliseconds(values):
    return {name: (round(percentile(values, q) * 1000, 1) if values else None)
            for name, q in (("median", 0.5), ("p95", 0.95), ("p99", 0.99), ("max", 1.0))}


def collect(args):
    session = os.environ["SESSION"]
    types = set(args.events.split(","))
    if args.expected_ids:
        with open(args.expected_ids) as file:
            expected = dict.fromkeys(json.load(file))
    else:
        expected = {e["id"]: e for e in ferry_pages(f"/v1/sessions/{session}/events") if e["type"] in types}

    start = time.monotonic()
    pending = None
    cpu_groups = json.loads(args.cpu_groups) if args.cpu_groups else {}
    cpu_when_complete = None
    while True:
        stats = get_json(args.receiver, "/stats")
        if stats["unique"] >= len(expected):
            # The CPU used until now, before this reads Ferry's lists (which take CPU of their own).
            if cpu_when_complete is None:
                cpu_when_complete = {name: cpu_seconds(pids) for name, pids in cpu_groups.items()}
                cpu_when_complete["at"] = time.time()
            pending = ferry_pages(f"/v1/webhooks/deliveries?sessionId={session}&status=pending")
            if not pending:
                break
        if time.monotonic() - start > args.timeout:
            break
        time.sleep(0.05 if cpu_groups else 0.2)
    waited = time.monotonic() - start
    # Nothing more should come; wait a little to catch late duplicates.
    time.sleep(args.quiet)

    records = get_json(args.receiver, "/records")
    stats = get_json(args.receiver, "/stats")
    deliveries = ferry_pages(f"/v1/webhooks/deliveries?sessionId={session}")

    first = {}
    for record in records:   # in arrival order
        first.setdefault(record["id"], record)
    arrivals = sorted(first.values(), key=lambda r: r["index"])
    delays = [r["arrived"] - parse_time(r["timestamp"]) for r in arrivals]

    # Per stream (the task, or the session for session events) the sequence must only grow.
    last = {}
    out_of_order = 0
    streams_out_of_order = set()
    for record in arrivals:
        stream = record["taskId"] or record["sessionId"]
        if stream in last and record["sequence"] < last[stream]:
            out_of_order += 1
            streams_out_of_order.add(stream)
        last[stream] = max(last.get(stream, -1), record["sequence"])

    # Where the time goes, on Ferry's records: event written -> delivery row (fan-out) -> first
    # attempt started -> arrival here.
    fan_out, queued, sending = [], [], []
    attempts = 0
    statuses = collections.Counter()
    for delivery in deliveries:
        statuses[delivery["status"]] += 1
        attempts += delivery["attemptCount"]
        record = first.get(delivery["eventId"])
        started = [parse_time(a["startedAt"]) for a in delivery.get("attempts") or []]
        if record is None or not started:
            continue
        event_time, created = parse_time(record["timestamp"]), parse_time(delivery["createdAt"])
        fan_out.append(created - event_time)
        queued.append(min(started) - created)
        sending.append(record["arrived"] - min(started))

    span = arrivals[-1]["arrived"] - arrivals[0]["arrived"] if len(arrivals) > 1 else None
    types_seen = collections.Counter(r["type"] for r in arrivals)
    print(json.dumps({
        "expected": len(expected), "received": len(records), "unique": len(first),
        "duplicates": len(records) - len(first),
        "missing": len(set(expected) - set(first)), "unexpected": len(set(first) - set(expected)),
        "badRequests": stats["bad"], "waitedSeconds": round(waited, 3),
        "firstArrival": arrivals[0]["arrived"] if arrivals else None,
        "lastArrival": arrivals[-1]["arrived"] if arrivals else None,
        "spanSeconds": round(span, 3) if span else None,
        "eventsPerSecond": round((len(arrivals) - 1) / span, 1) if span else None,
        "delayMs": milliseconds(delays),
        "outOfOrder": out_of_order, "streamsOutOfOrder": len(streams_out_of_order), "streams": len(last),
        "types": dict(types_seen),
        "deliveries": len(deliveries), "deliveryStatuses": dict(statuses), "attempts": attempts,
        "stillPending": len(pending) if pending is not None else None,
        "eventToFanOutMs": milliseconds(fan_out), "fanOutToAttemptMs": milliseconds(queued),
        "attemptToArrivalMs": milliseconds(sending),
        "cpuWhenComplete": cpu_when_complete,
    }))


def cpu_seconds(pids):
    """User and system CPU seconds of these processes so far (those gone count nothing)."""
    ticks = 0
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as file:
                # Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
                fields = file.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return ticks / os.sysconf("SC_CLK_TCK")


def backlog_ready(args):
    session = os.environ["SESSION"]
    types = set(args.events.split(","))
    expected = {e["id"] for e in ferry_pages(f"/v1/sessions/{session}/events") if e["type"] in types}
    start = time.monotonic()
    while True:
        pending = {d["eventId"] for d in ferry_pages(f"/v1/webhooks/deliveries?sessionId={session}&status=pending")}
        if expected <= pending:
            with open(args.out, "w") as file:
                json.dump(sorted(expected), file)
            print(len(pending))
            return
        if time.monotonic() - start > args.timeout:
            sys.exit(f"after {args.timeout} s, {len(expected - pending)} of {len(expected)} events have no pending delivery")
        time.sleep(0.2)


# The roles of collect-endpoints' plan whose deliveries are not expected to arrive (in time).
FAULTY_ROLES = {"hang", "slow"}


def collect_endpoints(args):
    plan = [line.split() for line in open(args.plan) if line.strip()]
    role_of_path = {urllib.parse.urlsplit(url).path: role for role, _, _, url in plan}
    faulty_sessions = {session for role, _, session, _ in plan if role in FAULTY_ROLES}
    keys = sorted({key for _, key, _, _ in plan})
    types = set(args.events.split(","))
    start = time.monotonic()

    def timed_out():
        return time.monotonic() - start > args.timeout

    # Ferry has sent everything but the faulty endpoints' deliveries...
    while not timed_out():
        pending = [d for key in keys for d in ferry_pages("/v1/webhooks/deliveries?status=pending", key)
                   if d["sessionId"] not in faulty_sessions]
        if not pending:
            break
        time.sleep(0.5)
    # ...which are the healthy sessions' events of the subscribed types, as their logs hold them.
    expected = {}
    for role, key, session, _ in plan:
        if role not in FAULTY_ROLES:
            for event in ferry_pages(f"/v1/sessions/{session}/events", key):
                if event["type"] in types:
                    expected[event["id"]] = event
    while True:
        records = [r for r in get_json(args.receiver, "/records") if r.get("path") in role_of_path]
        if set(expected) <= {r["id"] for r in records} or timed_out():
            break
        time.sleep(0.5)

    first = {}
    for record in records:   # in arrival order
        first.setdefault(record["id"], record)
    by_role = collections.defaultdict(list)
    for record in first.values():
        by_role[role_of_path[record["path"]]].append(record)
    healthy = sorted((r for r in first.values() if role_of_path[r["path"]] not in FAULTY_ROLES), key=lambda r: r["index"])
    healthy_records = [r for r in records if role_of_path[r["path"]] not in FAULTY_ROLES]
    span = healthy[-1]["arrived"] - healthy[0]["arrived"] if len(healthy) > 1 else None

    last, out_of_order = {}, 0
    for record in healthy:
        stream = record["taskId"] or record["sessionId"]
        if stream in last and record["sequence"] < last[stream]:
            out_of_order += 1
        last[stream] = max(last.get(stream, -1), record["sequence"])

    # Where the delay goes, on Ferry's records (as collect does): event written -> delivery row
    # (fan-out) -> first attempt started -> arrival here.
    steps = collections.defaultdict(lambda: collections.defaultdict(list))
    for key in keys:
        for delivery in ferry_pages("/v1/webhooks/deliveries", key):
            record = first.get(delivery["eventId"])
            started = [parse_time(a["startedAt"]) for a in delivery.get("attempts") or []]
            if record is None or not started:
                continue
            role = role_of_path[record["path"]]
            written, created = parse_time(record["timestamp"]), parse_time(delivery["createdAt"])
            steps[role]["eventToFanOutMs"].append(created - written)
            steps[role]["fanOutToAttemptMs"].append(min(started) - created)
            steps[role]["attemptToArrivalMs"].append(record["arrived"] - min(started))

    def role_figures(role):
        arrivals = by_role.get(role, [])
        written = [parse_time(r["timestamp"]) for r in arrivals]
        return {
            **{name: milliseconds(values) for name, values in steps[role].items()},
            "events": len(arrivals),
            "arrivals": sum(1 for r in records if role_of_path[r["path"]] == role),
            "delayMs": milliseconds([r["arrived"] - parse_time(r["timestamp"]) for r in arrivals]),
            "firstWritten": min(written, default=None), "lastWritten": max(written, default=None),
            "firstArrival": min((r["arrived"] for r in arrivals), default=None),
            "lastArrival": max((r["arrived"] for r in arrivals), default=None),
        }

    print(json.dumps({
        "endpoints": len(plan), "expected": len(expected), "healthyEvents": len(healthy),
        "missing": len(set(expected) - set(first)), "duplicates": len(healthy_records) - len(healthy),
        "outOfOrder": out_of_order, "waitedSeconds": round(time.monotonic() - start, 3),
        "spanSeconds": round(span, 3) if span else None,
        "eventsPerSecond": round((len(healthy) - 1) / span, 1) if span else None,
        # Whether delivery kept up with the events: from the last healthy event written to the
        # last healthy arrival.
        "drainSeconds": round(healthy[-1]["arrived"] - max(parse_time(r["timestamp"]) for r in healthy), 3) if healthy else None,
        "roles": {role: role_figures(role) for role in sorted(set(role_of_path.values()))},
    }))


def sse(args):
    url = urllib.parse.urlsplit(os.environ["FERRY_URL"])
    connection = http.client.HTTPConnection(url.hostname, url.port, timeout=args.timeout)
    headers = {"Authorization": "Bearer " + os.environ["KEY"], "Accept": "text/event-stream"}
    if args.after is not None:
        headers["Last-Event-ID"] = str(args.after)
    connection.request("GET", "/v1/events/stream", headers=headers)
    response = connection.getresponse()
    if response.status != 200:
        sys.exit(f"the event stream answered {response.status}: {response.read()[:300]!r}")
    records, fields = [], {}
    deadline = time.monotonic() + args.timeout
    while len(records) < args.count and time.monotonic() < deadline:
        line = response.fp.readline()
        if not line:
            break
        line = line.decode().rstrip("\n")
        if line:
            name, _, value = line.partition(": ")
            fields[name] = value
            continue
        if "data" in fields and "id" in fields:
            arrived = time.time()
            event = json.loads(fields["data"])
            records.append({"position": int(fields["id"]),
                            "type": event.get("type"), "timestamp": event.get("timestamp"), "arrived": arrived})
        fields = {}
    connection.close()
    with open(args.out, "w") as out:
        json.dump(records, out)


def sse_figures(args):
    records = json.load(open(args.records))
    delays = [r["arrived"] - parse_time(r["timestamp"]) for r in records]
    span = records[-1]["arrived"] - records[0]["arrived"] if len(records) > 1 else None
    print(json.dumps({
        "events": len(records), "eventsPerSecond": round((len(records) - 1) / span, 1) if span else None,
        "delayMs": milliseconds(delays), "positions": [r["position"] for r in records],
    }))


def decisions(args):
    session = os.environ["SESSION"]
    log = ferry_pages(f"/v1/sessions/{session}/events")
    deciders = collections.Counter(f'{e["type"]} {e["decidedBy"]}' for e in log if e["type"] in DECISION_TYPES)
    by_task = {(e["taskId"], e["sequence"]): e for e in log if e["taskId"]}
    records = {r["id"]: r for r in get_json(args.receiver, "/records") if "answered" in r}
    overheads, before_send = [], []
    for event in log:
        record = records.get(event["id"])
        following = by_task.get((event["taskId"], event["sequence"] + 1))
        if record is None or following is None:
            continue
        paused, went_on = parse_time(event["timestamp"]), parse_time(following["timestamp"])
        overheads.append((went_on - paused) - (record["answered"] - record["arrived"]))
        before_send.append(record["arrived"] - paused)
    # Where a decision's time goes, on Ferry's records: event written -> its delivery claimed ->
    # the attempt starts -> arrival here -> answered -> recorded delivered -> the task's next event.
    deliveries = {d["eventId"]: d for d in ferry_pages(f"/v1/webhooks/deliveries?sessionId={session}")}
    steps = collections.defaultdict(list)
    for event in log:
        record, delivery = records.get(event["id"]), deliveries.get(event["id"])
        following = by_task.get((event["taskId"], event["sequence"] + 1))
        if record is None or delivery is None or not delivery.get("attempts") or not delivery.get("deliveredAt"):
            continue
        paused = parse_time(event["timestamp"])
        claimed, started = parse_time(delivery["createdAt"]), parse_time(delivery["attempts"][-1]["startedAt"])
        steps["eventToClaim"].append(claimed - paused)
        steps["claimToAttempt"].append(started - claimed)
        steps["attemptToArrival"].append(record["arrived"] - started)
        steps["answeredToRecorded"].append(parse_time(delivery["deliveredAt"]) - record["answered"])
        if following is not None:
            steps["recordedToNextEvent"].append(parse_time(following["timestamp"]) - parse_time(delivery["deliveredAt"]))
    print(json.dumps({
        "decisions": sum(deciders.values()), "decidedBy": dict(deciders),
        "overheadMs": milliseconds(overheads), "eventToArrivalMs": milliseconds(before_send),
        "stepsMs": {name: milliseconds(values) for name, values in steps.items()},
    }))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    p = commands.add_parser("serve")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--secret", required=True)
    p.add_argument("--slow", type=float, default=2.0, help="seconds before a /slow/ path is answered")
    p.set_defaults(run=serve)
    p = commands.add_parser("reference-lua")
    p.add_argument("--receiver", required=True)
    p.add_argument("--secret", required=True)
    p.add_argument("--out", required=True)
    p.set_defaults(run=reference_lua)
    p = commands.add_parser("collect")
    p.add_argument("--receiver", required=True)
    p.add_argument("--events", required=True)
    p.add_argument("--timeout", type=float, default=600)
    p.add_argument("--quiet", type=float, default=2)
    p.add_argument("--expected-ids", help="a JSON list of the event ids to expect, instead of reading the session's log")
    p.add_argument("--cpu-groups", help='JSON {"name": [pid, ...]}: the CPU seconds each group has used when the '
                   'receiver has every expected event ("cpuWhenComplete", with the time "at")')
    p.set_defaults(run=collect)
    p = commands.add_parser("collect-endpoints")
    p.add_argument("--receiver", required=True)
    p.add_argument("--plan", required=True)
    p.add_argument("--events", required=True)
    p.add_argument("--timeout", type=float, default=600)
    p.set_defaults(run=collect_endpoints)
    p = commands.add_parser("sse")
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--after", type=int)
    p.add_argument("--timeout", type=float, default=600)
    p.set_defaults(run=sse)
    p = commands.add_parser("sse-figures")
    p.add_argument("--records", required=True)
    p.set_defaults(run=sse_figures)
    p = commands.add_parser("backlog-ready")
    p.add_argument("--events", required=True)
    p.add_argument("--timeout", type=float, default=300)
    p.add_argument("--out", required=True, help="where to write the ids of the events expected (JSON)")
    p.set_defaults(run=backlog_ready)
    p = commands.add_parser("decisions")
    p.add_argument("--receiver", required=True)
    p.set_defaults(run=decisions)
    args = parser.parse_args()
    args.run(args)


if __name__ == "__main__":
    main()
