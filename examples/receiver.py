#!/usr/bin/env python3
"""A small webhook receiver for trying Ferry's delegate events (standard library only).

It checks every delivery's Standard Webhooks signature, prints one line per event, and answers
the decision events the way the options say. Run it, then give a session
`"delegate": {"url": "http://127.0.0.1:9000/", "secret": "<the secret>"}`.

    examples/receiver.py --secret whsec_...      # or let Ferry generate one and pass it here
        --stop-redirects                         # answer task.willPerformHTTPRedirection with {"request": null}
        --user NAME --password WORD              # answer task.didReceiveChallenge with useCredential
        --port 9000

Without an answer option, decisions get an empty reply, which means URLSession's default
handling. Stop it (Ctrl-C) and start it again: Ferry keeps retrying, and every event arrives,
in order per task.
"""

import argparse
import base64
import hashlib
import hmac
import json
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

TOLERANCE_SECONDS = 5 * 60


def signature_is_valid(secret, headers, body):
    """Standard Webhooks: base64 HMAC-SHA256 of "id.timestamp.body" with the secret's key bytes."""
    message_id = headers.get("webhook-id", "")
    timestamp = headers.get("webhook-timestamp", "")
    if not timestamp.isdigit() or abs(time.time() - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret.removeprefix("whsec_"))
    signed = f"{message_id}.{timestamp}.".encode() + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    # During a secret rotation the header carries one "v1,<signature>" per secret.
    offered = [part.split(",", 1)[1] for part in headers.get("webhook-signature", "").split() if part.startswith("v1,")]
    return any(hmac.compare_digest(expected, candidate) for candidate in offered)


def decision_reply(options, event):
    kind, data = event["type"], event["data"]
    if kind == "task.willPerformHTTPRedirection" and options.stop_redirects:
        return {"request": None}
    if kind == "task.didReceiveChallenge" and options.user is not None:
        return {"disposition": "useCredential", "credential": {"user": options.user, "password": options.password or ""}}
    return {}


def make_handler(options):
    class Receiver(BaseHTTPRequestHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("content-length", "0")))
            if options.secret and not signature_is_valid(options.secret, self.headers, body):
                print("rejected a delivery with a bad signature", flush=True)
                self.send_response(401)
                self.end_headers()
                return
            event = json.loads(body)
            data = event.get("data", {})
            details = {k: v for k, v in data.items() if k not in ("sessionId", "taskId", "sequence")}
            print(f'{event["type"]:<40} task={data.get("taskId", "-")} seq={data.get("sequence", "-")} {json.dumps(details)[:160]}', flush=True)
            reply = json.dumps(decision_reply(options, event)).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(reply)))
            self.end_headers()
            self.wfile.write(reply)

        def log_message(self, *arguments):
            pass

    return Receiver


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--port", type=int, default=9000)
    parser.add_argument("--secret", help="the delegate's whsec_ secret; without it signatures are not checked")
    parser.add_argument("--stop-redirects", action="store_true")
    parser.add_argument("--user")
    parser.add_argument("--password")
    options = parser.parse_args()
    server = ThreadingHTTPServer(("127.0.0.1", options.port), make_handler(options))
    print(f"receiving webhooks on http://127.0.0.1:{options.port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
