// clawhost webchat page. Talks to the plugin over one WebSocket at /ws; see
// protocol.go for the frames. Every body the plugin sends is rendered and
// sanitized on the server; this script never builds HTML from text.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const log = $("log"), conn = $("conn"), typing = $("typing"), banner = $("banner");
  const form = $("composer"), input = $("input"), commands = $("commands"), title = $("title");

  let ws = null;
  let lastSeq = 0;          // sequence number of the last event applied
  let backoff = 500;        // next reconnect delay, ms
  let maxBytes = 65536;     // MaxInboundBytes, from hello
  let clientSeq = 0;
  const pending = new Map(); // client_id -> text, until the server echoed it

  function setConn(state, text) {
    conn.dataset.state = state;
    conn.textContent = text || state;
  }

  function showError(text) {
    banner.textContent = text;
    banner.hidden = !text;
  }

  function connect() {
    setConn("connecting", "connecting…");
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const sock = new WebSocket(proto + "//" + location.host + "/ws");
    ws = sock;
    sock.onmessage = (e) => {
      let ev;
      try { ev = JSON.parse(e.data); } catch (_) { return; }
      handle(ev);
    };
    sock.onclose = (e) => {
      if (ws !== sock) return;
      ws = null;
      let why = "offline";
      if (e.code === 1009) {
        showError("Message too big for the connection; reconnecting.");
      }
      if (e.reason) why += " (" + e.reason + ")";
      setConn("offline", why + " — reconnecting…");
      const delay = backoff * (0.5 + Math.random() / 2);
      backoff = Math.min(backoff * 2, 10000);
      setTimeout(connect, delay);
    };
  }

  // resync drops the connection; the next hello carries the full history.
  function resync() {
    backoff = 250;
    if (ws) ws.close(4000, "resync");
  }

  function handle(ev) {
    switch (ev.type) {
      case "hello":
        backoff = 500;
        lastSeq = ev.seq || 0;
        if (ev.title) { title.textContent = ev.title; document.title = ev.title; }
        if (ev.max_bytes) maxBytes = ev.max_bytes;
        log.replaceChildren();
        (ev.history || []).forEach(upsert);
        setTyping(!!ev.typing);
        setCommands(ev.commands || []);
        setConn("online", "online");
        scrollDown(true);
        return;
      case "commands":
        setCommands(ev.commands || []);
        return;
      case "error":
        if (ev.client_id && pending.has(ev.client_id)) {
          if (!input.value) input.value = pending.get(ev.client_id);
          pending.delete(ev.client_id);
        }
        showError(ev.error);
        return;
    }
    // Sequenced events: apply in order, skip duplicates, resync on a gap.
    if (!ev.seq || ev.seq <= lastSeq) return;
    if (ev.seq !== lastSeq + 1) { resync(); return; }
    lastSeq = ev.seq;
    if (ev.type === "message" || ev.type === "update") {
      if (ev.message.client_id) pending.delete(ev.message.client_id);
      const atBottom = nearBottom();
      upsert(ev.message);
      scrollDown(atBottom);
    } else if (ev.type === "typing") {
      setTyping(!!ev.typing);
    }
  }

  function nearBottom() {
    return log.scrollHeight - log.scrollTop - log.clientHeight < 80;
  }
  function scrollDown(force) {
    if (force) log.scrollTop = log.scrollHeight;
  }

  // upsert adds or replaces a message element, keeping them ordered by seq.
  function upsert(m) {
    let el = log.querySelector('.msg[data-id="' + CSS.escape(m.id) + '"]');
    if (!el) {
      el = document.createElement("div");
      el.className = "msg " + (m.role === "user" ? "user" : "bot");
      el.dataset.id = m.id;
      el.dataset.seq = String(m.seq);
      const body = document.createElement("div");
      body.className = "body";
      const meta = document.createElement("div");
      meta.className = "meta";
      const time = document.createElement("time");
      const status = document.createElement("span");
      status.className = "status";
      meta.append(time, " ", status);
      el.append(body, meta);
      let after = null;
      for (let n = log.lastElementChild; n; n = n.previousElementSibling) {
        if (Number(n.dataset.seq) < m.seq) { after = n; break; }
      }
      if (after) after.after(el); else log.prepend(el);
    }
    // m.html is produced by the plugin's sanitizer (sanitize.go) or escaping.
    el.querySelector(".body").innerHTML = m.html;
    const t = new Date(m.time);
    const time = el.querySelector("time");
    time.dateTime = m.time;
    time.textContent = isNaN(t) ? "" : t.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
    let status = "";
    if (m.role === "user") {
      el.dataset.status = m.status || "";
      status = { sending: "sending…", sent: "sent", failed: "not delivered" }[m.status] || "";
    }
    el.querySelector(".status").textContent = status;
    setFiles(el, m);
    setButtons(el, m);
  }

  // setFiles shows a message's files: each a link that downloads it (an
  // image also shown, audio with a player), built with textContent and
  // attributes only.
  function setFiles(el, m) {
    let box = el.querySelector(".files");
    if (!m.files || !m.files.length) {
      if (box) box.remove();
      return;
    }
    if (!box) {
      box = document.createElement("div");
      box.className = "files";
      el.querySelector(".body").after(box);
    }
    box.replaceChildren();
    for (const f of m.files) {
      const href = "/files/" + encodeURIComponent(f.id);
      if ((f.mime || "").startsWith("image/")) {
        const img = document.createElement("img");
        img.src = href + "?inline=1";
        img.alt = f.name;
        box.append(img);
      }
      if ((f.mime || "").startsWith("audio/")) {
        const au = document.createElement("audio");
        au.controls = true;
        au.preload = "metadata";
        au.src = href + "?inline=1";
        box.append(au);
      }
      const a = document.createElement("a");
      a.href = href;
      a.download = f.name;
      a.className = "file";
      a.textContent = "📄 " + f.name + " (" + sizeText(f.size) + ")";
      box.append(a);
    }
  }

  function sizeText(n) {
    if (n < 1024) return n + " B";
    if (n < 1024 * 1024) return Math.round(n / 1024) + " KB";
    return (n / 1024 / 1024).toFixed(1) + " MB";
  }

  // upload sends the chosen file, with the text typed beside it, as the
  // user's message.
  async function upload(file) {
    showError("");
    const fd = new FormData();
    fd.append("text", input.value);
    fd.append("client_id", "u" + (++clientSeq));
    fd.append("file", file, file.name);
    try {
      const res = await fetch("/upload", { method: "POST", body: fd, credentials: "same-origin" });
      const out = await res.json().catch(() => ({}));
      if (!res.ok) { showError(out.error || ("upload failed: " + res.status)); return; }
      input.value = "";
    } catch (e) {
      showError("upload failed: " + e);
    }
  }

  // setButtons shows a bot message's buttons (textContent only), disabled
  // once one was pressed; an edit that removed them removes them here.
  function setButtons(el, m) {
    let box = el.querySelector(".buttons");
    if (!m.buttons || !m.buttons.length) {
      if (box) box.remove();
      return;
    }
    if (!box) {
      box = document.createElement("div");
      box.className = "buttons";
      el.querySelector(".body").after(box);
    }
    box.replaceChildren();
    for (const row of m.buttons) {
      const r = document.createElement("div");
      r.className = "row";
      for (const btn of row) {
        const b = document.createElement("button");
        b.type = "button";
        b.textContent = btn.label;
        b.dataset.button = btn.id;
        b.disabled = !!m.pressed;
        if (m.pressed === btn.id) b.className = "pressed";
        b.addEventListener("click", () => press(m.id, btn.id, box));
        r.append(b);
      }
      box.append(r);
    }
  }

  // press sends a button press; the buttons stay disabled unless the
  // server refuses it.
  function press(messageId, buttonId, box) {
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      showError("Not connected; press again in a moment.");
      return;
    }
    showError("");
    box.querySelectorAll("button").forEach((b) => { b.disabled = true; });
    ws.send(JSON.stringify({ type: "press", client_id: "p" + (++clientSeq), message_id: messageId, button_id: buttonId }));
  }

  function setTyping(on) {
    typing.hidden = !on;
  }

  function setCommands(list) {
    commands.replaceChildren();
    for (const c of list) {
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = c.text;
      b.title = c.description || "";
      b.dataset.command = c.text;
      b.addEventListener("click", () => send(c.text, false));
      commands.append(b);
    }
  }

  // send sends text as the user's message; fromInput clears the input.
  function send(text, fromInput) {
    if (!text.trim()) return;
    const size = new TextEncoder().encode(text).length;
    if (size > maxBytes) {
      showError("Message too long: " + size + " bytes; the limit is " + Math.floor(maxBytes / 1024) + " KiB.");
      return;
    }
    if (!ws || ws.readyState !== WebSocket.OPEN) {
      showError("Not connected; your message is kept, try again in a moment.");
      return;
    }
    showError("");
    const id = "c" + (++clientSeq);
    pending.set(id, text);
    ws.send(JSON.stringify({ type: "send", client_id: id, text: text }));
    if (fromInput) input.value = "";
  }

  const fileInput = $("file");
  fileInput.addEventListener("change", () => {
    const f = fileInput.files && fileInput.files[0];
    fileInput.value = "";
    if (f) upload(f);
  });

  form.addEventListener("submit", (e) => {
    e.preventDefault();
    send(input.value, true);
  });
  input.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send(input.value, true);
    }
  });

  connect();
})();
