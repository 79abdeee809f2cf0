"""A Prometheus endpoint for the VAAI counters: GET /metrics answers the
text exposition format, read fresh from configfs on each scrape."""

from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from . import stats
from .errors import VaaiError

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class _Handler(BaseHTTPRequestHandler):
    def do_GET(self):
        if self.path.split("?")[0] not in ("/metrics", "/"):
            self.send_error(404, "only /metrics is served here")
            return
        body = stats.prometheus(stats.read()).encode()
        self.send_response(200)
        self.send_header("Content-Type", CONTENT_TYPE)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, fmt, *args):  # scrapes are not worth a line each
        pass


PORT_MAX = 65535


def parse_listen(text):
    """(host, port) from 'ADDR:PORT', '[v6]:PORT' or ':PORT'."""
    host, sep, port = str(text).rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) <= PORT_MAX:
        raise VaaiError(f"listen address {text!r}: give ADDR:PORT, e.g. 0.0.0.0:9737")
    return host.strip("[]") or "0.0.0.0", int(port)  # noqa: S104 - as node_exporter


def serve(listen):
    host, port = parse_listen(listen)
    try:
        httpd = ThreadingHTTPServer((host, port), _Handler)
    except OSError as e:
        raise VaaiError(f"cannot listen on {listen}: {e.strerror}") from e
    print(f"serving VAAI counters on http://{host}:{port}/metrics", flush=True)
    with httpd:
        httpd.serve_forever()
