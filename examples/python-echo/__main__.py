"""clawhost-python-echo: a clawhost plugin written in Python.

It offers three kinds from one process (proto/PROTOCOL.md explains the
protocol it speaks):

- command: /echo TEXT answers TEXT;
- message_received hook: before a message is queued for the agent, it
  drops one that contains a word of `blocked` (the sender is told why) and
  writes :shrug: out as the shrug it stands for;
- tool: count_words, which the agent may call (granted with
  agent { tools = ["<instance>.count_words"] }, called by claude as
  mcp__clawhost__<instance>__count_words): it counts the words of a text
  and names the chat and sender the call came from;
- channel: a "platform" made of two HTTP endpoints on loopback, the same as
  the Go example clawhost-loopback's:
      POST /inbound {"chat_id", "sender_id", "sender_name", "text",
                     "message_id", "chat_type"}
                    -> 200 {"message_id"} once the host has stored it
      GET  /sent?after=N&wait=5s
                    -> [{"seq", "op", "chat_id", "thread_id", "message_id",
                         "text", "format"}] (long poll)

config {
  listen     = "127.0.0.1:0"  # address of the HTTP API
  addr_file  = "lo.addr"      # the listening address is written here
  text_limit = 4000           # longest text one send may carry, in characters
  blocked    = ["password"]   # messages with these words never reach the agent
}

Build it with `make build` (bin/clawhost-python-echo, an executable zip);
it needs python3-grpcio and python3-protobuf (`make deps`).
"""

import http.server
import json
import os
import threading
import time
import urllib.parse

import clawhost_plugin

NAME = "python-echo"
VERSION = "0.1.0"

# The typed capabilities' string values on the wire (the Go sdk's
# channel.LengthUnit, channel.Markup and channel.Format; proto/PROTOCOL.md,
# "Markup and command replies").
LENGTH_UNIT = "runes"   # utf16 | runes | bytes
MARKUP = "none"         # none | markdown | html-subset | lightweight
FORMAT_PLAIN = "plain"  # plain | markdown


class Echo:
    """The plugin's state and every rpc it implements, by name."""

    def __init__(self, rt):
        self.rt = rt
        self.p = rt.proto
        self.log = rt.log
        self.limit = 4000
        self.blocked = []
        self.inbox = clawhost_plugin.Inbox(rt.proto, rt.stopping, rt.log)
        self.httpd = None
        self.mu = threading.Condition()
        self.records = []
        self.next_id = 0

    # --- PluginService -------------------------------------------------------

    def Describe(self, request, context):
        p = self.p
        return p.DescribeResponse(
            name=NAME,
            version=VERSION,
            kinds=[p.enum("KIND_CHANNEL"), p.enum("KIND_COMMAND"), p.enum("KIND_MESSAGE_RECEIVED"), p.enum("KIND_TOOL")],
            channel=p.ChannelCapabilities(
                max_text_length=self.limit, length_unit=LENGTH_UNIT, markdown=MARKUP,
                groups=True, display_name="Python echo"),
            sdk_version="python-example/" + VERSION,
        )

    def ConfigSchema(self, request, context):
        A = self.p.Attribute
        return self.p.ConfigSchemaResponse(attributes=[
            A(name="listen", type="string", default_json=json.dumps("127.0.0.1:0"),
              description="address of the HTTP API (inbound messages and the sent log)"),
            A(name="addr_file", type="string", description="file to write the listening address to"),
            A(name="text_limit", type="number", default_json="4000",
              description="longest text one send may carry, in characters"),
            A(name="blocked", type="list(string)", default_json="[]",
              description="a message containing one of these words (any case) is dropped before the agent sees it"),
        ])

    def _check(self, config_json):
        """Returns (config, diagnostics) for a config {} block as JSON."""
        D = self.p.Diagnostic
        try:
            cfg = json.loads(config_json or b"{}") or {}
        except ValueError as e:
            return {}, [D(summary="config is not JSON", detail=str(e))]
        diags = []
        listen = cfg.get("listen") or "127.0.0.1:0"
        host, _, port = listen.rpartition(":")
        if not host or not port.isdigit():
            diags.append(D(attribute="listen", summary="listen must be host:port", detail="got %r" % listen))
        blocked = cfg.get("blocked")
        if blocked is not None and (not isinstance(blocked, list) or not all(isinstance(w, str) and w.strip() for w in blocked)):
            diags.append(D(attribute="blocked", summary="blocked must be a list of words"))
        limit = cfg.get("text_limit")
        if limit is not None and (not isinstance(limit, (int, float)) or limit < 1):
            diags.append(D(attribute="text_limit", summary="text_limit must be a positive number"))
        return cfg, diags

    def Validate(self, request, context):
        _, diags = self._check(request.config_json)
        return self.p.ValidateResponse(diagnostics=diags)

    def Configure(self, request, context):
        cfg, diags = self._check(request.config_json)
        if diags:
            return self.p.ConfigureResponse(diagnostics=diags)
        if cfg.get("text_limit"):
            self.limit = int(cfg["text_limit"])
        self.blocked = [w.strip().lower() for w in cfg.get("blocked") or []]
        host, _, port = (cfg.get("listen") or "127.0.0.1:0").rpartition(":")
        try:
            self.httpd = http.server.ThreadingHTTPServer((host, int(port)), self._handler())
        except OSError as e:
            return self.p.ConfigureResponse(diagnostics=[
                self.p.Diagnostic(attribute="listen", summary="cannot listen", detail=str(e))])
        self.httpd.daemon_threads = True
        addr = "%s:%d" % self.httpd.server_address[:2]
        if cfg.get("addr_file"):
            path = os.path.join(request.data_dir or ".", cfg["addr_file"])
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(addr)
        threading.Thread(target=self.httpd.serve_forever, name="http", daemon=True).start()
        self.log.info("listening", extra={"kv": {"instance": request.instance, "addr": addr}})
        return self.p.ConfigureResponse()

    def WatchStatus(self, request, context):
        yield self.p.PluginStatus(state="ready")
        # Nothing ever changes: hold the stream open until the host or the
        # plugin ends it.
        context.add_callback(self.inbox.wake)
        while context.is_active() and not self.rt.stopping.wait(1.0):
            pass

    # --- CommandService ------------------------------------------------------

    def ListCommands(self, request, context):
        return self.p.ListCommandsResponse(commands=[
            self.p.CommandSpec(name="echo", description="answer with the text that follows", usage="/echo TEXT")])

    def Execute(self, request, context):
        p = self.p
        if request.command != "echo":
            return p.ExecuteResponse(error=p.PluginError(code="invalid_request", message="unknown command /%s" % request.command))
        if not request.args.strip():
            # invalid_request: the user's mistake; the host shows the
            # message to the user instead of logging a failure.
            return p.ExecuteResponse(error=p.PluginError(code="invalid_request", message="usage: /echo TEXT"))
        return p.ExecuteResponse(replies=[p.Reply(text=request.args.strip(), format=FORMAT_PLAIN)])

    # --- MessageReceivedService ----------------------------------------------

    def MessageReceived(self, request, context):
        """Called before a message is queued; the host records the answer
        with the message, so it is asked once per message (call_id). The
        same call_id must get the same answer."""
        p = self.p
        words = request.text.lower().split()
        for w in self.blocked:
            if w in words:
                return p.MessageReceivedResponse(drop=True, drop_reason="Messages with %r are not passed to the agent." % w)
        if ":shrug:" in request.text:
            return p.MessageReceivedResponse(rewrite=True, text=request.text.replace(":shrug:", "\u00af\\_(\u30c4)_/\u00af"))
        return p.MessageReceivedResponse()
    # --- ToolService ---------------------------------------------------------

    def ListTools(self, request, context):
        schema = {"type": "object", "properties": {"text": {"type": "string", "description": "the text to count"}},
                  "required": ["text"]}
        return self.p.ListToolsResponse(tools=[self.p.ToolSpec(
            name="count_words", description="Counts the words of a text.", input_schema_json=json.dumps(schema))])

    def CallTool(self, request, context):
        # Reads only: a call repeated with its call_id answers the same.
        p = self.p
        if request.tool != "count_words":
            return p.CallToolResponse(error=p.PluginError(code="invalid_request", message="unknown tool %s" % request.tool))
        try:
            args = json.loads(request.arguments_json or "{}")
        except ValueError:
            args = {}
        text = args.get("text")
        if not isinstance(text, str):
            return p.CallToolResponse(text="give text, a string", is_error=True)
        c = request.conversation
        return p.CallToolResponse(text="%d words (asked in %s:%s by %s)" % (
            len(text.split()), c.instance, c.chat_id, request.sender.id))

    # --- ChannelService ------------------------------------------------------

    def Receive(self, request, context):
        yield from self.inbox.receive(context)

    def Ack(self, request, context):
        self.inbox.ack(request.delivery_ids)
        return self.p.AckResponse()

    def Nack(self, request, context):
        self.log.info("the host could not store messages; sending them again later",
                         extra={"kv": {"reason": request.reason, "retry_after_ms": request.retry_after_ms}})
        self.inbox.nack(request.delivery_ids, request.retry_after_ms)
        return self.p.NackResponse()

    def Send(self, request, context):
        p = self.p
        if len(request.text) > self.limit:
            return p.SendResponse(error=p.PluginError(
                code="message_too_long", message="text of %d characters exceeds %d" % (len(request.text), self.limit)))
        if not request.chat_id or request.chat_id.startswith("missing-"):
            # Like the Go loopback example, this platform has every chat
            # but those whose id starts with "missing-".
            return p.SendResponse(error=p.PluginError(code="chat_not_found", message="no chat %r" % request.chat_id))
        with self.mu:
            self.next_id += 1
            mid = "m%d" % self.next_id
            self.records.append({"seq": len(self.records) + 1, "op": "send", "chat_id": request.chat_id,
                                 "thread_id": request.thread_id, "message_id": mid, "text": request.text,
                                 "format": request.format})
            self.mu.notify_all()
        return p.SendResponse(message_ids=[mid])

    # SetTyping, Edit, React, DownloadMedia and SetCommands are not
    # implemented: they answer UNIMPLEMENTED, and Describe does not declare
    # typing, edit, reactions or command_menu, so the host never calls them.

    # --- the HTTP "platform" -------------------------------------------------

    def stop(self):
        self.inbox.wake()
        with self.mu:
            self.mu.notify_all()
        if self.httpd:
            self.httpd.shutdown()
            self.httpd.server_close()

    def inbound(self, body):
        p = self.p
        msg = p.InboundMessage(
            chat_type=body.get("chat_type") or "direct",
            chat_id=body.get("chat_id", ""),
            thread_id=body.get("thread_id", ""),
            message_id=body.get("message_id") or "%x" % time.time_ns(),
            sender=p.Sender(id=body.get("sender_id", ""), name=body.get("sender_name", "")),
            text=body.get("text", ""),
            timestamp_ms=int(time.time() * 1000),
        )
        return msg, self.inbox.deliver(msg, timeout=30)

    def sent(self, after, wait):
        deadline = time.monotonic() + wait
        with self.mu:
            while True:
                out = [r for r in self.records if r["seq"] > after]
                left = deadline - time.monotonic()
                if out or left <= 0 or self.rt.stopping.is_set():
                    return out
                self.mu.wait(left)

    def _handler(self):
        echo = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def _reply(self, code, obj):
                data = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_POST(self):
                if self.path != "/inbound":
                    return self._reply(404, {"error": "not found"})
                try:
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
                except ValueError as e:
                    return self._reply(400, {"error": str(e)})
                msg, ok = echo.inbound(body)
                if not ok:
                    return self._reply(503, {"error": "the host did not store the message"})
                self._reply(200, {"message_id": msg.message_id})

            def do_GET(self):
                u = urllib.parse.urlparse(self.path)
                if u.path != "/sent":
                    return self._reply(404, {"error": "not found"})
                q = urllib.parse.parse_qs(u.query)
                after = int(q.get("after", ["0"])[0] or 0)
                wait = q.get("wait", ["0s"])[0]
                secs = float(wait[:-2]) / 1000 if wait.endswith("ms") else float(wait.rstrip("s") or 0)
                self._reply(200, echo.sent(after, min(secs, 30)))

            def log_message(self, fmt, *args):
                echo.log.debug("http: " + fmt % args)

        return Handler


def build(rt):
    e = Echo(rt)
    return {"PluginService": e, "CommandService": e, "ChannelService": e, "MessageReceivedService": e, "ToolService": e}, e.stop


if __name__ == "__main__":
    clawhost_plugin.serve(NAME, build)
