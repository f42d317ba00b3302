#!/usr/bin/env python3
"""A small origin server for trying Ferry with curl (standard library only).

    examples/origin.py --root /tmp/origin --port 8000 [--user alice --password secret]

    GET /files/NAME[?rate=BYTES_PER_SECOND]   a file of --root, with a strong ETag, Last-Modified
                                             and byte ranges (Range, If-Range), optionally slow
    GET /redirect?to=PATH                    302 to PATH
    GET /protected/NAME                      like /files/NAME behind HTTP Basic authentication
    GET /cookies/set?NAME=VALUE              sets a cookie;  GET /cookies  shows the Cookie header
    GET /counter                             a counter, cacheable for 60 s (Cache-Control: max-age=60)
    POST or PUT /upload                      answers the body's length and SHA-256
"""

import argparse
import base64
import hashlib
import itertools
import json
import os
import re
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qsl, urlsplit

CHUNK = 16 * 1024
counter = itertools.count(1)


def make_handler(options):
    class Origin(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self):
            url = urlsplit(self.path)
            query = dict(parse_qsl(url.query))
            if url.path.startswith("/files/"):
                self.send_file(url.path[len("/files/"):], query)
            elif url.path.startswith("/protected/"):
                if self.is_authorized():
                    self.send_file(url.path[len("/protected/"):], query)
                else:
                    self.answer(401, b"authentication required\n", {"WWW-Authenticate": 'Basic realm="ferry-demo"'})
            elif url.path == "/redirect":
                self.answer(302, b"", {"Location": query.get("to", "/")})
            elif url.path == "/cookies/set":
                cookies = [f"{name}={value}; Path=/" for name, value in query.items()]
                self.answer(200, b"cookies set\n", {"Set-Cookie": cookies})
            elif url.path == "/cookies":
                self.answer(200, (self.headers.get("Cookie", "") + "\n").encode())
            elif url.path == "/counter":
                self.answer(200, f"{next(counter)}\n".encode(), {"Cache-Control": "max-age=60"})
            else:
                self.answer(404, b"not found\n")

        def do_POST(self):
            if urlsplit(self.path).path != "/upload":
                return self.answer(404, b"not found\n")
            digest, length = hashlib.sha256(), 0
            for piece in self.body_pieces():
                digest.update(piece)
                length += len(piece)
            self.answer(200, json.dumps({"length": length, "sha256": digest.hexdigest()}).encode() + b"\n",
                        {"Content-Type": "application/json"})

        do_PUT = do_POST

        def body_pieces(self):
            if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
                while True:
                    size = int(self.rfile.readline().split(b";")[0], 16)
                    if size == 0:
                        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                            pass
                        return
                    yield self.rfile.read(size)
                    self.rfile.readline()
            remaining = int(self.headers.get("Content-Length", "0"))
            while remaining > 0:
                piece = self.rfile.read(min(CHUNK, remaining))
                if not piece:
                    return
                remaining -= len(piece)
                yield piece

        def is_authorized(self):
            expected = base64.b64encode(f"{options.user}:{options.password}".encode()).decode()
            return self.headers.get("Authorization", "") == f"Basic {expected}"

        def send_file(self, name, query):
            path = os.path.join(options.root, os.path.basename(name))
            if not os.path.isfile(path):
                return self.answer(404, b"not found\n")
            status = os.stat(path)
            size = status.st_size
            etag = f'"{status.st_mtime_ns:x}-{size:x}"'
            headers = {"ETag": etag, "Last-Modified": formatdate(status.st_mtime, usegmt=True), "Accept-Ranges": "bytes"}
            start, end = 0, size - 1
            match = re.fullmatch(r"bytes=(\d+)-(\d*)", self.headers.get("Range", ""))
            if match and self.headers.get("If-Range", etag) == etag:
                start = int(match.group(1))
                end = min(int(match.group(2)), size - 1) if match.group(2) else size - 1
                if start >= size:
                    headers["Content-Range"] = f"bytes */{size}"
                    return self.answer(416, b"", headers)
                headers["Content-Range"] = f"bytes {start}-{end}/{size}"
            headers["Content-Length"] = str(end - start + 1)
            self.send_response(206 if "Content-Range" in headers else 200)
            for header, value in headers.items():
                self.send_header(header, value)
            self.end_headers()
            rate = int(query.get("rate", "0"))
            with open(path, "rb") as file:
                file.seek(start)
                remaining = end - start + 1
                while remaining > 0:
                    piece = file.read(min(CHUNK, remaining))
                    self.wfile.write(piece)
                    remaining -= len(piece)
                    if rate:
                        time.sleep(len(piece) / rate)

        def answer(self, status, body, headers=None):
            self.send_response(status)
            for header, value in (headers or {}).items():
                for one in value if isinstance(value, list) else [value]:
                    self.send_header(header, one)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *arguments):
            pass

    return Origin


class QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # a client that went away mid-body (a cancel, a suspend) is not an error here


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", default=".")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--user", default="alice")
    parser.add_argument("--password", default="secret")
    options = parser.parse_args()
    server = QuietServer(("127.0.0.1", options.port), make_handler(options))
    print(f"serving {options.root} on http://127.0.0.1:{options.port}/", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
