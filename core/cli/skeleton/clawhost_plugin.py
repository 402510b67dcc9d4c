"""A small runtime for clawhost plugins written in Python.

It does what the Go sdk's sdk.Serve does, in about 300 lines, and is meant
to be read next to proto/PROTOCOL.md:

- the go-plugin handshake: the magic cookie check, the protocol version
  check, a gRPC server on a unix socket (or 127.0.0.1), the one handshake
  line on stdout, and then stdout closed for good (redirected to stderr);
- hclog JSON log lines on stderr (the logging module, via HclogFormatter);
- the host's authentication (proto/PROTOCOL.md, "Authentication"): the
  secret in CLAWHOST_PLUGIN_SECRET, read once and removed from the
  environment, required on every call by a server interceptor (compared in
  constant time), and a media grant for every file a Send names;
- the services go-plugin's host may call besides clawhost's own:
  grpc.health.v1.Health/Check for "plugin" and plugin.GRPCController/Shutdown;
- SIGTERM and a parent watchdog: the plugin exits 0 when the host stops it
  or disappears;
- the clawhost.v1 message classes, built at run time from the descriptor set
  `buf build` produces (no generated code, works with any protobuf runtime
  from 3.20 on), and generic gRPC handlers: a method the plugin does not
  implement answers UNIMPLEMENTED, which the host reads as "feature absent";
- Inbox, the ack/redelivery bookkeeping a channel owes the host.

It needs python3-grpcio and python3-protobuf (Debian) or grpcio and protobuf
(pip), nothing else.
"""

import datetime
import hashlib
import hmac
import json
import logging
import os
import pkgutil
import signal
import struct
import sys
import threading
import time
from concurrent import futures

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

# The handshake (proto/PROTOCOL.md, "Handshake").
COOKIE_KEY = "CLAWHOST_PLUGIN"
COOKIE_VALUE = "3f1c9a2e-clawhost-plugin-v1-b8d4e6f0"
CORE_PROTOCOL_VERSION = 1  # go-plugin's own
APP_PROTOCOL_VERSION = 1  # clawhost.v1
MAX_MESSAGE_BYTES = 16 << 20
ENV_LOG_LEVEL = "CLAWHOST_LOG_LEVEL"
DESCRIPTOR_RESOURCE = "clawhost.binpb"
DESCRIPTOR_ENV = "CLAWHOST_PROTO_DESCRIPTOR"
# Authentication (proto/PROTOCOL.md, "Authentication" and "Media grants").
ENV_SECRET = "CLAWHOST_PLUGIN_SECRET"
SECRET_HEADER = "clawhost-plugin-secret"
GRANT_CONTEXT = b"clawhost media grant v1"


# --- logging -----------------------------------------------------------------

_LEVELS = {logging.DEBUG: "debug", logging.INFO: "info", logging.WARNING: "warn", logging.ERROR: "error", logging.CRITICAL: "error"}


class HclogFormatter(logging.Formatter):
    """Formats a record as one hclog JSON line: @level, @message, @module,
    @timestamp (microseconds, as go-plugin parses it) and the keys passed as
    extra={"kv": {...}}."""

    def format(self, record):
        line = {
            "@level": _LEVELS.get(record.levelno, "info"),
            "@message": record.getMessage(),
            "@module": record.name,
            "@timestamp": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="microseconds"),
        }
        for k, v in getattr(record, "kv", {}).items():
            line[k] = v
        if record.exc_info:
            line["error"] = self.formatException(record.exc_info)
        return json.dumps(line, default=str)


def logger(name):
    """Returns the plugin's logger: hclog JSON on stderr at the level the host
    asked for (CLAWHOST_LOG_LEVEL: trace, debug, info, warn, error)."""
    want = os.environ.get(ENV_LOG_LEVEL, "info").lower()
    level = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO, "warn": logging.WARNING, "error": logging.ERROR}.get(want, logging.INFO)
    h = logging.StreamHandler(sys.stderr)
    h.setFormatter(HclogFormatter())
    root = logging.getLogger()
    root.handlers[:] = [h]
    root.setLevel(level)
    return logging.getLogger(name)


# --- messages ----------------------------------------------------------------


class Proto:
    """The clawhost.v1 message classes, by short name: proto.DescribeResponse."""

    def __init__(self, descriptor_set):
        fds = descriptor_pb2.FileDescriptorSet.FromString(descriptor_set)
        self.pool = descriptor_pool.DescriptorPool()
        for f in fds.file:
            self.pool.AddSerializedFile(f.SerializeToString())
        self.file = self.pool.FindFileByName("clawhost/v1/plugin.proto")
        self._classes = {}

    def message(self, full_name):
        """Returns the class of a message by its full name."""
        c = self._classes.get(full_name)
        if c is None:
            d = self.pool.FindMessageTypeByName(full_name)
            if hasattr(message_factory, "GetMessageClass"):  # protobuf >= 4.22
                c = message_factory.GetMessageClass(d)
            else:
                c = message_factory.MessageFactory(self.pool).GetPrototype(d)
            self._classes[full_name] = c
        return c

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.message("clawhost.v1." + name)

    def enum(self, name):
        """Returns the number of an enum value: proto.enum("KIND_CHANNEL")."""
        return self.file.enum_types_by_name["Kind"].values_by_name[name].number


def load_descriptor():
    """Reads the descriptor set of proto/clawhost/v1/plugin.proto: from
    $CLAWHOST_PROTO_DESCRIPTOR, else from this package (clawhost plugin package puts it
    into the executable zip next to this file)."""
    path = os.environ.get(DESCRIPTOR_ENV)
    if path:
        with open(path, "rb") as f:
            return f.read()
    data = pkgutil.get_data(__name__, DESCRIPTOR_RESOURCE)
    if data is None:
        raise RuntimeError("no %s next to %s: package the plugin with clawhost plugin package DIR, or set %s" % (DESCRIPTOR_RESOURCE, __file__, DESCRIPTOR_ENV))
    return data


# --- authentication ----------------------------------------------------------


class Authenticate(grpc.ServerInterceptor):
    """Refuses with UNAUTHENTICATED every call, to any method of any service
    (unknown ones included), that does not carry the host's secret as the
    clawhost-plugin-secret metadata, exactly once."""

    def __init__(self, secret):
        self._secret = secret.encode()

        def deny(request, context):
            context.abort(grpc.StatusCode.UNAUTHENTICATED, "this plugin answers only the host that started it")

        self._deny = grpc.unary_unary_rpc_method_handler(deny)

    def intercept_service(self, continuation, handler_call_details):
        got = [v for k, v in (handler_call_details.invocation_metadata or ()) if k == SECRET_HEADER]
        if len(got) == 1 and hmac.compare_digest(str(got[0]).encode(), self._secret):
            return continuation(handler_call_details)
        return self._deny


def media_grant(secret, chat_id, thread_id, path):
    """The host's grant of path for a send to chat_id and thread_id:
    HMAC-SHA256 keyed with the secret's text over the context string and
    the three values, each preceded by its length as a big-endian uint64."""
    mac = hmac.new(secret.encode(), digestmod=hashlib.sha256)
    for f in (GRANT_CONTEXT, chat_id.encode(), thread_id.encode(), path.encode()):
        mac.update(struct.pack(">Q", len(f)))
        mac.update(f)
    return mac.digest()


def _granted(fn, secret, proto, log):
    """Wraps ChannelService.Send: a request naming a file without the host's
    grant for this send is refused (media_not_granted) before fn sees it."""
    def send(request, context):
        for i, m in enumerate(request.media):
            if m.path and not hmac.compare_digest(m.grant, media_grant(secret, request.chat_id, request.thread_id, m.path)):
                log.warning("refused a send naming a file the host did not grant", extra={"kv": {"path": m.path}})
                return proto.SendResponse(error=proto.PluginError(
                    code="media_not_granted", message="media %d (%s): the host did not grant this file for this send" % (i, m.path)))
        return fn(request, context)
    return send


# --- the server --------------------------------------------------------------


def _handlers(proto, service_name, impl, secret, log):
    """Generic handlers for the methods of service_name that impl has; with
    a secret, Send checks the media grants first."""
    svc = proto.file.services_by_name[service_name]
    methods = {}
    for m in svc.methods:
        fn = getattr(impl, m.name, None)
        if fn is None:
            continue  # UNIMPLEMENTED: "feature absent"
        if secret and service_name == "ChannelService" and m.name == "Send":
            fn = _granted(fn, secret, proto, log)
        req = proto.message(m.input_type.full_name)
        resp = proto.message(m.output_type.full_name)
        make = grpc.unary_stream_rpc_method_handler if m.server_streaming else grpc.unary_unary_rpc_method_handler
        methods[m.name] = make(fn, request_deserializer=req.FromString, response_serializer=resp.SerializeToString)
    return grpc.method_handlers_generic_handler(svc.full_name, methods)


def _raw(fn):
    return grpc.unary_unary_rpc_method_handler(fn, request_deserializer=lambda b: b, response_serializer=lambda b: b)


class Runtime:
    """What serve hands to the plugin: its logger, the message classes and
    the stop event (set on SIGTERM, on the host's Shutdown call and when the
    host process is gone)."""

    def __init__(self, name):
        self.log = logger(name)
        self.stopping = threading.Event()
        self.proto = None


def serve(name, build):
    """Runs a plugin until the host stops it, then exits the process.

    build(runtime) returns (services, on_stop): services maps a clawhost.v1
    service name ("PluginService", "ChannelService", "CommandService",
    "HookService", "ToolService") to an object whose methods named like the rpcs implement
    them (request, grpc context) -> response, or a generator of responses
    for a streaming rpc; on_stop is called once when the plugin stops (may
    be None). Never returns.
    """
    # Read once and removed (os.environ.pop unsets it): no child inherits it.
    secret = os.environ.pop(ENV_SECRET, "")
    rt = Runtime(name)
    log = rt.log
    if os.environ.get(COOKIE_KEY) != COOKIE_VALUE:
        sys.stderr.write("This program is a clawhost plugin (%s). It is started by clawhost; it is not meant to be run by hand.\n" % name)
        sys.exit(1)
    versions = [v.strip() for v in os.environ.get("PLUGIN_PROTOCOL_VERSIONS", str(APP_PROTOCOL_VERSION)).split(",")]
    if str(APP_PROTOCOL_VERSION) not in versions:
        log.error("the host speaks protocol versions %s; this plugin speaks %d" % (",".join(versions), APP_PROTOCOL_VERSION))
        sys.exit(1)
    rt.proto = Proto(load_descriptor())
    services, on_stop = build(rt)

    if not secret:
        # A host older than authentication: serve as before (only whoever
        # starts the process decides its environment).
        log.warning("the host gave no %s: serving every caller of the socket unauthenticated" % ENV_SECRET)
    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=32, thread_name_prefix="rpc"),
        interceptors=[Authenticate(secret)] if secret else None,
        options=[("grpc.max_receive_message_length", MAX_MESSAGE_BYTES), ("grpc.max_send_message_length", MAX_MESSAGE_BYTES)],
    )
    server.add_generic_rpc_handlers([_handlers(rt.proto, s, impl, secret, log) for s, impl in services.items()])

    def health_check(request, context):
        # HealthCheckRequest{string service = 1}; answer SERVING (status = 1)
        # for "" and "plugin", the name go-plugin's Ping asks for.
        service = request[2:].decode() if len(request) >= 2 and request[0] == 0x0A else ""
        if service not in ("", "plugin"):
            context.abort(grpc.StatusCode.NOT_FOUND, "unknown service")
        return b"\x08\x01"

    def shutdown(request, context):
        log.debug("the host asked to shut down")
        rt.stopping.set()
        return b""

    server.add_generic_rpc_handlers([
        grpc.method_handlers_generic_handler("grpc.health.v1.Health", {"Check": _raw(health_check)}),
        grpc.method_handlers_generic_handler("plugin.GRPCController", {"Shutdown": _raw(shutdown)}),
    ])

    sock_dir = os.environ.get("PLUGIN_UNIX_SOCKET_DIR")
    if sock_dir:
        network, addr = "unix", os.path.join(sock_dir, "plugin%d.sock" % os.getpid())
        server.add_insecure_port("unix:" + addr)
    else:
        port = server.add_insecure_port("127.0.0.1:0")
        network, addr = "tcp", "127.0.0.1:%d" % port
    server.start()

    # The one line on stdout, then stdout is gone: anything printed later
    # lands on stderr, where the host logs it.
    sys.stdout.write("%d|%d|%s|%s|grpc\n" % (CORE_PROTOCOL_VERSION, APP_PROTOCOL_VERSION, network, addr))
    sys.stdout.flush()
    os.dup2(2, 1)
    sys.stdout = sys.stderr

    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the host decides when to stop
    signal.signal(signal.SIGTERM, lambda *_: rt.stopping.set())
    ppid = os.getppid()

    def watchdog():
        while not rt.stopping.wait(0.5):
            if os.getppid() != ppid:
                log.warning("host process is gone; exiting", extra={"kv": {"host_pid": ppid}})
                rt.stopping.set()

    threading.Thread(target=watchdog, name="watchdog", daemon=True).start()
    log.debug("serving", extra={"kv": {"network": network, "addr": addr}})

    while not rt.stopping.wait(0.5):
        pass
    log.info("stopping")
    if on_stop:
        on_stop()
    server.stop(grace=1).wait()
    if network == "unix":
        try:
            os.unlink(addr)
        except OSError:
            pass
    logging.shutdown()
    sys.exit(0)


# --- the channel's inbox -----------------------------------------------------


class Inbox:
    """The ack/redelivery bookkeeping of a channel (proto/PROTOCOL.md,
    "Receive, Ack, Nack"). deliver() adds a message and blocks until the
    host acked it; receive() is the body of ChannelService.Receive.

    Every message keeps its delivery id until it is acked. A new Receive
    stream replaces the older one, which ends, and gets every unacked
    message again, in delivery order. A Nack puts the named deliveries back
    to be sent again on the same stream, after retry_after_ms, and nothing
    is sent on the stream before then."""

    def __init__(self, proto, stopping, log):
        self._proto = proto
        self._stopping = stopping
        self._log = log
        self._cond = threading.Condition()
        self._next_id = 0
        self._unacked = {}  # delivery id -> InboundMessage, in delivery order
        self._acked = {}  # delivery id -> threading.Event, set on ack
        self._stream = 0  # the current stream's number
        self._sent = set()  # ids sent on the current stream
        self._hold_until = 0.0

    def wake(self):
        """Wakes every waiter (call it on stop)."""
        with self._cond:
            self._cond.notify_all()

    def deliver(self, msg, timeout):
        """Queues msg (an InboundMessage without delivery_id) and waits up to
        timeout seconds for the host's ack. Returns True when acked."""
        with self._cond:
            self._next_id += 1
            msg.delivery_id = self._next_id
            done = threading.Event()
            self._unacked[msg.delivery_id] = msg
            self._acked[msg.delivery_id] = done
            self._cond.notify_all()
        ok = done.wait(timeout)
        if not ok:
            self._log.warning("no ack from the host in time", extra={"kv": {"delivery_id": msg.delivery_id}})
        return ok

    def ack(self, ids):
        with self._cond:
            for i in ids:
                self._unacked.pop(i, None)
                ev = self._acked.pop(i, None)
                if ev:
                    ev.set()

    def nack(self, ids, retry_after_ms):
        with self._cond:
            for i in ids:
                self._sent.discard(i)
            self._hold_until = time.monotonic() + (retry_after_ms or 1000) / 1000.0
            self._cond.notify_all()

    def receive(self, context):
        """Yields InboundMessages until the stream is replaced, the host
        cancels it or the plugin stops."""
        with self._cond:
            self._stream += 1
            me = self._stream
            self._sent = set()
            self._hold_until = 0.0
            self._cond.notify_all()  # the older stream ends
        context.add_callback(self.wake)
        while True:
            with self._cond:
                while True:
                    if me != self._stream or self._stopping.is_set() or not context.is_active():
                        return
                    wait = self._hold_until - time.monotonic()
                    if wait <= 0:
                        todo = [m for i, m in self._unacked.items() if i not in self._sent]
                        if todo:
                            break
                        wait = None
                    self._cond.wait(wait if wait is not None else 1.0)
                for m in todo:
                    self._sent.add(m.delivery_id)
            for m in todo:
                yield m
