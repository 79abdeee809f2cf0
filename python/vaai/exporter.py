"""The Prometheus endpoint: prometheus_client's WSGI app over a registry
holding VaaiCollector alone, so GET /metrics answers the text exposition
format read fresh from configfs on each scrape."""

import socket
from wsgiref.simple_server import WSGIRequestHandler, make_server

from prometheus_client import CollectorRegistry, generate_latest, make_wsgi_app
from prometheus_client.exposition import ThreadingWSGIServer

from .collector import TARGET, VaaiCollector
from .errors import VaaiError

PORT_MAX = 65535


def registry(root=TARGET, names=None):
    """A registry of the vaai collector alone (no process or platform
    metrics: node_exporter has those), of the LUNs names (None: all).
    Nothing is read until a scrape."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(VaaiCollector(root, names))
    return reg


def exposition(root=TARGET, names=None):
    """One scrape's text, as vaaictl stats --prometheus prints it."""
    return generate_latest(registry(root, names)).decode()


def app(root=TARGET):
    """/metrics (and /) from the registry; anything else is not here."""
    metrics = make_wsgi_app(registry(root))

    def route(environ, start_response):
        if environ.get("PATH_INFO", "/") in ("/metrics", "/"):
            return metrics(environ, start_response)
        start_response("404 Not Found", [("Content-Type", "text/plain")])
        return [b"only /metrics is served here\n"]

    return route


class _Quiet(WSGIRequestHandler):
    def log_message(self, fmt, *args):  # scrapes are not worth a line each
        pass


class _Server6(ThreadingWSGIServer):
    address_family = socket.AF_INET6


def parse_listen(text):
    """(host, port) from 'ADDR:PORT', '[v6]:PORT' or ':PORT'."""
    host, sep, port = str(text).rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) <= PORT_MAX:
        raise VaaiError(f"listen address {text!r}: give ADDR:PORT, e.g. 0.0.0.0:9737")
    return host.strip("[]") or "0.0.0.0", int(port)  # noqa: S104 - as node_exporter


def serve(listen, root=TARGET):
    host, port = parse_listen(listen)
    server = _Server6 if ":" in host else ThreadingWSGIServer
    try:
        httpd = make_server(host, port, app(root), server, handler_class=_Quiet)
    except OSError as e:
        raise VaaiError(f"cannot listen on {listen}: {e.strerror}") from e
    print(f"serving vaai metrics on http://{listen}/metrics", flush=True)
    with httpd:
        httpd.serve_forever()
