#!/usr/bin/env python3
"""Bulk operations on Ferry's API for the benchmarks (standard library only).

Reads FERRY_URL, KEY (a tenant's API key) and SESSION (one or more session ids, separated
by spaces) from the environment.

  ferry_bulk.py create URL_FILE [--concurrency N] [--ids FILE] [--batch B] [--first-batch F] [--then-wait] [--rate R]
      creates one download task (resume: true) per line, N requests in flight on keep-alive
      connections, each creating B tasks (over 1: with POST .../tasks/batch; the first request
      creates only F, so that transfers start while the rest are created); a line is "URL"
      (in the first session) or "SESSION URL"; prints {"created", "seconds", "failures"} as JSON.
      With --then-wait, then waits as `wait --first-wait-for LAST_TASK` does, in the same
      process (as one client program would), and adds "waited" (seconds) to what it prints.
      With --rate, the requests are spread so that R tasks a second are created (a steady load)
  ferry_bulk.py wait [--timeout S] [--first-wait-for TASK_ID]
      waits until the sessions have no running or suspended task, long-polling (?wait=) one
      still running at a time; prints {"seconds"}. With --first-wait-for, first long-polls that
      task, as a client waiting on its last task would, so the list is asked only for stragglers
  ferry_bulk.py summary
      pages through the sessions' tasks; prints counts, errors (code and reason) and the span
      from the first creation to the last completion as recorded by Ferry
  ferry_bulk.py sessions URL_FILE --secret S --events TYPE,TYPE… [--concurrency N]
      creates one default session per line, whose delegate is the line's URL (signed with S,
      subscribed to those events); prints the sessions' ids, a line each, in the file's order
      (SESSION is not needed)
"""
import argparse
import collections
import datetime
import json
import os
import queue
import socket
import sys
import threading
import time
import urllib.parse

BASE = urllib.parse.urlsplit(os.environ["FERRY_URL"])
KEY = os.environ["KEY"]
SESSIONS = os.environ.get("SESSION", "").split()


class Connection:
    """One keep-alive HTTP/1.1 connection to Ferry. http.client would do, but importing it (and
    the email package it parses headers with) is about 30 ms of every start, and the benchmarks
    count the client's start as aria2c's counts."""

    def __init__(self):
        self.sock = None
        self.buffer = b""
        self.answered = False

    def connect(self):
        self.close()
        self.sock = socket.create_connection((BASE.hostname, BASE.port or 80), timeout=180)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def close(self):
        if self.sock:
            self.sock.close()
        self.sock, self.buffer = None, b""

    def exchange(self, method, path, body):
        if self.sock is None:
            self.connect()
        self.answered = False
        data = body.encode() if body else b""
        self.sock.sendall(
            f"{method} {path} HTTP/1.1\r\nHost: {BASE.netloc}\r\nAuthorization: Bearer {KEY}\r\n"
            f"Content-Type: application/json\r\nContent-Length: {len(data)}\r\n\r\n".encode() + data
        )
        head = self.read_until(b"\r\n\r\n").split(b"\r\n")
        status = int(head[0].split()[1])
        headers = dict((name.strip().lower(), value.strip()) for name, _, value in (line.partition(b":") for line in head[1:]))
        if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
            payload = b""
            while True:
                size = int(self.read_until(b"\r\n").split(b";")[0], 16)
                payload += self.read_exactly(size)
                self.read_until(b"\r\n")
                if size == 0:
                    break
        else:
            payload = self.read_exactly(int(headers.get(b"content-length", b"0")))
        if headers.get(b"connection", b"").lower() == b"close":
            self.close()
        return status, payload

    def read_until(self, marker):
        while marker not in self.buffer:
            self.fill()
        line, _, self.buffer = self.buffer.partition(marker)
        return line

    def read_exactly(self, count):
        while len(self.buffer) < count:
            self.fill()
        data, self.buffer = self.buffer[:count], self.buffer[count:]
        return data

    def fill(self):
        data = self.sock.recv(1 << 20)
        if not data:
            raise ConnectionResetError("Ferry closed the connection")
        self.answered = True
        self.buffer += data


def request(connection, method, path, body=None):
    """Sends one request, again on a new connection if the kept-alive one was closed before any
    answer (as http.client does): one closed mid-answer may have been carried out already."""
    for attempt in (1, 2):
        try:
            return connection.exchange(method, path, body)
        except (ConnectionResetError, BrokenPipeError):
            connection.close()
            if attempt == 2 or connection.answered:
                raise


def run_threads(worker, count):
    """Runs `worker` on `count` threads and waits for them all."""
    threads = [threading.Thread(target=worker) for _ in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def create(args):
    urls = []
    for line in open(args.url_file):
        fields = line.split()
        if fields:
            urls.append((SESSIONS[0], fields[0]) if len(fields) == 1 else (fields[0], fields[1]))
    # Jobs of up to --batch consecutive tasks of one session (the first of --first-batch).
    first_batch = min(args.first_batch or args.batch, args.batch) if args.batch > 1 else 1
    jobs = queue.Queue()
    chunk = []
    for index, (session, url) in enumerate(urls):
        size = first_batch if jobs.empty() else args.batch
        if chunk and (len(chunk) >= size or chunk[0][1] != session):
            jobs.put(chunk)
            chunk = []
        chunk.append((index, session, url))
    if chunk:
        jobs.put(chunk)
    ids = [None] * len(urls)
    failures = collections.Counter()
    lock = threading.Lock()

    start = time.monotonic()
    # With --rate, a request starts no sooner than (tasks requested before it) / rate seconds in.
    requested = [0]

    def worker():
        connection = Connection()
        while True:
            try:
                chunk = jobs.get_nowait()
            except queue.Empty:
                break
            if args.rate:
                with lock:
                    due = start + requested[0] / args.rate
                    requested[0] += len(chunk)
                time.sleep(max(0.0, due - time.monotonic()))
            session = chunk[0][1]
            tasks = [{"kind": args.kind, "request": {"url": url}, "resume": True} for _, _, url in chunk]
            if args.batch == 1:
                status, payload = request(connection, "POST", f"/v1/sessions/{session}/tasks", json.dumps(tasks[0]))
                created = [json.loads(payload)] if status == 201 else None
            else:
                status, payload = request(connection, "POST", f"/v1/sessions/{session}/tasks/batch", json.dumps({"tasks": tasks}))
                created = json.loads(payload)["data"] if status == 201 else None
            if created is not None:
                for (index, _, _), task in zip(chunk, created):
                    ids[index] = task["id"]
            else:
                with lock:
                    failures[f"{status} {payload[:200].decode(errors='replace')}"] += len(chunk)
        connection.close()

    run_threads(worker, args.concurrency)
    seconds = time.monotonic() - start
    if args.ids:
        with open(args.ids, "w") as out:
            out.write("\n".join(i for i in ids if i) + "\n")
    result = {"created": sum(1 for i in ids if i), "seconds": round(seconds, 3), "failures": dict(failures)}
    if args.then_wait:
        result["waited"] = wait_until_done(args.timeout, args.interval, next((i for i in reversed(ids) if i), None))
    print(json.dumps(result))


def sessions(args):
    urls = [line.strip() for line in open(args.url_file) if line.strip()]
    ids = [None] * len(urls)
    jobs = queue.Queue()
    for index, url in enumerate(urls):
        jobs.put((index, url))
    events = args.events.split(",")

    def worker():
        connection = Connection()
        while True:
            try:
                index, url = jobs.get_nowait()
            except queue.Empty:
                break
            body = {"configuration": {"kind": "default"}, "delegate": {"url": url, "secret": args.secret, "events": events}}
            status, payload = request(connection, "POST", "/v1/sessions", json.dumps(body))
            if status != 201:
                sys.exit(f"creating a session for {url} answered {status}: {payload[:300]!r}")
            ids[index] = json.loads(payload)["id"]
        connection.close()

    run_threads(worker, args.concurrency)
    if None in ids:
        sys.exit("some sessions were not created")
    print("\n".join(ids))


def wait(args):
    print(json.dumps({"seconds": wait_until_done(args.timeout, args.interval, args.first_wait_for)}))


def wait_until_done(timeout, interval, first_wait_for):
    """Returns the seconds until the sessions have no running or suspended task."""
    connection = Connection()
    start = time.monotonic()
    while first_wait_for and time.monotonic() - start < timeout:
        if long_poll(connection, first_wait_for) == "completed":
            break
    pending = list(SESSIONS)
    while pending:
        status, payload = request(connection, "GET", f"/v1/sessions/{pending[0]}/tasks?state=running,suspended,canceling&limit=1")
        if status != 200:
            sys.exit(f"listing tasks answered {status}: {payload[:300]!r}")
        unfinished = json.loads(payload)["data"]
        if not unfinished:
            pending.pop(0)
            continue
        if time.monotonic() - start > timeout:
            sys.exit(f"tasks still running after {timeout} s")
        if unfinished[0]["state"] == "suspended":
            time.sleep(interval)
        else:
            # Waits on a straggler until it ends, rather than polling the list meanwhile.
            long_poll(connection, unfinished[0]["id"])
    return round(time.monotonic() - start, 3)


def long_poll(connection, task_id):
    """The task's state once it completes, or after 30 s (?wait=)."""
    status, payload = request(connection, "GET", f"/v1/tasks/{task_id}?wait=30")
    if status != 200:
        sys.exit(f"waiting for {task_id} answered {status}: {payload[:300]!r}")
    return json.loads(payload)["state"]


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None


def summary(_args):
    connection = Connection()
    states = collections.Counter()
    errors = collections.Counter()
    first_created = last_completed = None
    received = 0
    pages = [(session, None) for session in SESSIONS]
    while pages:
        session, after = pages.pop(0)
        path = f"/v1/sessions/{session}/tasks?limit=1000" + (f"&after={after}" if after else "")
        status, payload = request(connection, "GET", path)
        if status != 200:
            sys.exit(f"listing tasks answered {status}: {payload[:300]!r}")
        page = json.loads(payload)
        for task in page["data"]:
            states[task["state"]] += 1
            if task["error"]:
                error = task["error"]
                errors[f"{error['code']} {error.get('reason') or error['localizedDescription']}"] += 1
            elif task["response"] and task["response"]["statusCode"] >= 400:
                errors[f"HTTP {task['response']['statusCode']}"] += 1
            received += task["countOfBytesReceived"]
            created, completed = parse_time(task["createdAt"]), parse_time(task["completedAt"])
            first_created = created if first_created is None or created < first_created else first_created
            if completed and (last_completed is None or completed > last_completed):
                last_completed = completed
        if page.get("nextCursor"):
            pages.insert(0, (session, page["nextCursor"]))
    span = (last_completed - first_created).total_seconds() if first_created and last_completed else None
    print(json.dumps({
        "tasks": sum(states.values()), "states": dict(states), "failed": sum(errors.values()),
        "errors": dict(errors), "bytesReceived": received, "firstCreatedToLastCompleted": span,
    }))


def main():
    parser = argparse.ArgumentParser()
    commands = parser.add_subparsers(dest="command", required=True)
    # How long and how often to poll, for both commands that wait.
    polling = argparse.ArgumentParser(add_help=False)
    polling.add_argument("--timeout", type=float, default=3600)
    polling.add_argument("--interval", type=float, default=0.02)
    creating = commands.add_parser("create", parents=[polling])
    creating.add_argument("url_file")
    creating.add_argument("--concurrency", type=int, default=8)
    creating.add_argument("--kind", choices=("download", "data"), default="download")
    creating.add_argument("--ids")
    creating.add_argument("--batch", type=int, default=1, help="tasks per request (over 1: POST .../tasks/batch)")
    creating.add_argument("--first-batch", type=int, help="tasks in the first request (default: --batch)")
    creating.add_argument("--then-wait", action="store_true", help="then wait until every task has ended")
    creating.add_argument("--rate", type=float, help="tasks per second: requests are spread evenly (a steady load)")
    waiting = commands.add_parser("wait", parents=[polling])
    waiting.add_argument("--first-wait-for", help="a task to long-poll until it completes before polling the list")
    commands.add_parser("summary")
    making = commands.add_parser("sessions")
    making.add_argument("url_file")
    making.add_argument("--secret", required=True)
    making.add_argument("--events", required=True)
    making.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    {"create": create, "wait": wait, "summary": summary, "sessions": sessions}[args.command](args)


if __name__ == "__main__":
    main()
