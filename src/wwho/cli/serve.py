"""``wwho serve [--tokenizer SPEC...] [--port 8000]``: a local page showing tokenizers side by side.

Loads every SPEC (as ``wwho eval`` does: wwho files, ``tiktoken:NAME``, ``hf:PATH``, ``spm:MODEL``;
default ``tiktoken:o200k_base``), binds the address itself (so a busy port is a one-line error and
``--port 0`` picks a free one), prints the page's address and serves until interrupted. Binds to
127.0.0.1 unless ``--host`` says otherwise, with a warning for any non-loopback address; on a loopback
address the page answers only to loopback host names, on another only to IP addresses and the machine's
own names (and ``--allow-host`` names on both). uvicorn runs with the connection limits of
:mod:`wwho.serve.connections`; the request limits are :class:`wwho.serve.limits.Limits` (docs/serve.md).
The web framework (Starlette + uvicorn) is the optional extra ``wwho[serve]``, imported only here in
``run``.
"""

from __future__ import annotations

import argparse
import asyncio
import ipaddress
import logging
import socket
import sys
import warnings

from wwho.background import start_thread
from wwho.cli.encode import PATTERN_HELP
from wwho.cli.outputs import require_stdout
from wwho.errors import WwhoError

DEFAULT_TOKENIZERS = ["tiktoken:o200k_base"]
MISSING_EXTRA = "wwho serve needs the optional web extra: pip install 'wwho[serve]' (Starlette and uvicorn)"

#: The most --max-chars allows: a request of 12 MB, whose encoding stays seconds of work.
MAX_CHARS = 1_000_000


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--tokenizer", nargs="+", metavar="SPEC",
                   help="wwho files/directories (vocab.json, meta, .gguf, .tiktoken, tokenizer.json), tiktoken:NAME (or NAME), "
                        f"hf:PATH, spm:MODEL (default: {' '.join(DEFAULT_TOKENIZERS)})")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                   help="a host name the page may be reached by besides the loopback names (and, off loopback, "
                        "IP addresses and this machine's own names); others are refused, as a DNS-rebinding "
                        "page's would be; repeatable")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000; 0 picks a free one)")
    p.add_argument("--max-chars", type=int, default=20_000, metavar="N",
                   help="longest text a request may send, in characters (default 20,000; at most 1,000,000)")
    p.add_argument("--pattern", metavar="NAME|REGEX", help=PATTERN_HELP)
    p.add_argument("--tiktoken-file", metavar="PATH",
                   help="tiktoken ranks file for tiktoken:NAME offline (else WWHO_TIKTOKEN_FILE or tiktoken's cache)")


def run(args: argparse.Namespace) -> int:
    require_stdout()  # the page's address is printed there (and uvicorn's logging needs the stream)
    try:
        import uvicorn

        from wwho.serve.app import create_app
        from wwho.serve.connections import guarded_protocol
        from wwho.serve.limits import Limits
        from wwho.serve.middleware import loopback_hosts, served_hosts
        from wwho.serve.tokenizers import load_tokenizers
        from wwho.serve.view import warm_up
    except ImportError as exc:
        if exc.name and exc.name.split(".")[0] in ("starlette", "uvicorn", "anyio", "h11"):
            raise WwhoError(MISSING_EXTRA) from None
        raise
    if not 1 <= args.max_chars <= MAX_CHARS:  # the request bound must stay a bound (12 bytes a character)
        raise WwhoError(f"--max-chars must be from 1 to {MAX_CHARS:,}, got {args.max_chars:,}")
    if not 0 <= args.port <= 65535:
        raise WwhoError(f"--port must be in 0..65535, got {args.port}")
    if args.tiktoken_file:
        from wwho.tiktoken_file import use_flag

        use_flag(args.tiktoken_file)
    from wwho.cli.eval import tiktoken_specs

    specs = tiktoken_specs(args.tokenizer or DEFAULT_TOKENIZERS)
    sock, loopback = bind(args.host, args.port)  # before loading: a busy port fails at once
    host, port = sock.getsockname()[:2]
    limits = Limits(max_chars=args.max_chars)
    try:
        print(f"wwho serve: loading {', '.join(specs)}", file=sys.stderr, flush=True)
        # a page elsewhere that rebinds its name to this address is refused: on loopback any name but a
        # loopback one, elsewhere any but an IP address, this machine's names and --allow-host's
        hosts = loopback_hosts(port, host, args.allow_host) if loopback else served_hosts(port, args.allow_host)
        app = create_app(load_tokenizers(specs, pattern=args.pattern), limits=limits, hosts=hosts,
                         ip_literals=None if loopback else port)
    except BaseException:
        sock.close()
        raise
    if not loopback:
        print(f"wwho serve: warning: listening on {args.host}, not a loopback address: anyone who can reach this "
              "machine can use the page and make it tokenize", file=sys.stderr, flush=True)
    shown = f"[{host}]" if ":" in host else host
    url = f"wwho serve: http://{shown}:{port}/  (Ctrl-C to stop)"
    try:
        print(url, flush=True)
    except OSError:  # nobody reads standard output (| true, a closed pipe): serve anyway, said on stderr
        from wwho.cli import _drop_standard_output

        _drop_standard_output()
        print(url, file=sys.stderr, flush=True)
    # The syllable tables of every script are built while the first page loads, not in its first request.
    start_thread(warm_up, name="wwho-warm-up")
    # On Ctrl-C, requests still running get a second to finish, then are cancelled (a client that
    # never sends its body cannot hold the exit for the body's time limit).
    config = server_config(uvicorn, app, guarded_protocol(limits))
    logging.getLogger("uvicorn.error").addFilter(_quiet)
    # A Ctrl-C between uvicorn making its server coroutine and running it drops the coroutine
    # unstarted, and Python warns about that on the way out: the command says `wwho: interrupted` only.
    warnings.filterwarnings("ignore", message=r"coroutine '.*' was never awaited", category=RuntimeWarning)
    _server(uvicorn, config).run(sockets=[sock])
    return 0


def server_config(uvicorn, app, protocol):
    """uvicorn's configuration of the server. ``proxy_headers=False``: uvicorn otherwise takes the
    client's address from an ``X-Forwarded-For`` header of any client connecting from loopback (its
    default ``FORWARDED_ALLOW_IPS``), so a local process could pass as other clients and use up
    their share of every per-client limit, or escape its own; the limits count the socket's peer."""
    return uvicorn.Config(app, http=protocol, timeout_keep_alive=5, log_level="warning", access_log=False,
                          lifespan="off", timeout_graceful_shutdown=1, proxy_headers=False)


def _server(uvicorn, config):
    """A uvicorn server that leaves an ignored SIGINT ignored. uvicorn installs its own handler
    whatever was there, so a server started with SIGINT ignored (a background job of a shell that
    is not interactive), as every verb leaves it, stopped on one and exited 0 without a word."""
    import signal

    ignored = signal.getsignal(signal.SIGINT) is signal.SIG_IGN

    class Server(uvicorn.Server):
        def handle_exit(self, sig, frame):
            if ignored and sig == signal.SIGINT:
                return
            super().handle_exit(sig, frame)

    return Server(config)


def _quiet(record: logging.LogRecord) -> bool:
    """Drops what uvicorn logs about the requests a Ctrl-C cuts short (each cancelled task's traceback,
    and the count of them): the command says ``wwho: interrupted``, once. Drops its warning for each
    request it cannot parse too: the client is told so in a one-line JSON 400, and any client could
    otherwise write a line to the console per request, as fast as it sends them."""
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, (asyncio.CancelledError, KeyboardInterrupt)):
        return False
    message = record.getMessage()
    if record.levelno == logging.WARNING and message == "Invalid HTTP request received.":
        return False
    return not (record.levelno == logging.ERROR and "timeout graceful shutdown exceeded" in message)


def _is_loopback(address: str) -> bool:
    """Whether ``address`` is a loopback one, an IPv4 one written as IPv6 (``::ffff:127.0.0.1``) too."""
    ip = ipaddress.ip_address(address.split("%")[0])
    mapped = getattr(ip, "ipv4_mapped", None)
    return ip.is_loopback or (mapped is not None and mapped.is_loopback)


def bind(host: str, port: int) -> tuple[socket.socket, bool]:
    """A listening socket on ``host:port`` and whether every address ``host`` names is a loopback one."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except socket.gaierror as exc:
        raise WwhoError(f"--host {host}: cannot resolve it: {exc.strerror}") from None
    family, _, proto, _, address = infos[0]
    loopback = all(_is_loopback(info[4][0]) for info in infos)
    # The protocol named, not 0: asyncio turns Nagle's algorithm off on the sockets it accepts only when
    # their protocol says TCP, and with it on, every answer after the first on a kept-alive connection
    # waited for the client's delayed acknowledgement (uvicorn writes the head and the body apart).
    sock = socket.socket(family, socket.SOCK_STREAM, proto or socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(address)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise WwhoError(f"cannot listen on {host}:{port}: {exc.strerror}") from None
    sock.set_inheritable(True)
    return sock, loopback
