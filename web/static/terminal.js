// A session's live terminal: xterm.js over a WebSocket to the server, which
// keeps the process and the recent output. On every (re)connect the screen is
// reset and the server's replay painted, so it is right after a reconnect and
// never painted twice; input is blocked while disconnected; reconnects back
// off. Many watch, one types: typing needs taking control, which everyone is
// shown.
(function () {
  "use strict";
  var el = document.getElementById("terminal");
  if (!el || !window.Terminal) return;
  var id = el.getAttribute("data-session");
  var status = document.getElementById("terminal-status");
  var take = document.getElementById("take-control");

  // xterm.js styles its rows with <style> elements it creates, which the
  // page's Content-Security-Policy (style-src 'self') refuses. Their rules
  // are mirrored into constructed style sheets, which it allows.
  var mirrored = new Map();
  function mirror(style) {
    var sheet = mirrored.get(style);
    if (!sheet) {
      sheet = new CSSStyleSheet();
      mirrored.set(style, sheet);
      document.adoptedStyleSheets = document.adoptedStyleSheets.concat([sheet]);
    }
    try { sheet.replaceSync(style.textContent || ""); } catch (e) { /* a rule the browser does not know */ }
  }
  new MutationObserver(function (muts) {
    muts.forEach(function (m) {
      var t = m.target.nodeType === 3 ? m.target.parentNode : m.target;
      if (t && t.tagName === "STYLE") mirror(t);
      m.addedNodes.forEach(function (n) { if (n.tagName === "STYLE") mirror(n); });
    });
  }).observe(el, { subtree: true, childList: true, characterData: true });

  var term = new window.Terminal({ cursorBlink: true, scrollback: 5000, fontSize: 14, convertEol: false });
  var fit = new window.FitAddon.FitAddon();
  term.loadAddon(fit);
  term.open(el);
  fit.fit();
  window.atriumTerminal = term; // for tests and the curious: its buffer is what is shown

  var ws = null, connected = false, me = "", writer = "", tries = 0, ended = false;
  function show() {
    var who = writer ? (writer === me ? "you have control" : "@" + writerHandle + " has control") : "no one has control";
    status.textContent = ended ? "the session ended" : (connected ? "connected · " + who : "disconnected: input is blocked; reconnecting…");
    status.className = connected ? "" : "disconnected";
    take.disabled = !connected || writer === me;
  }
  var writerHandle = "";
  function send(m) { if (ws && connected) ws.send(JSON.stringify(m)); }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss:" : "ws:";
    ws = new WebSocket(scheme + "//" + location.host + "/sessions/" + encodeURIComponent(id) + "/terminal");
    ws.binaryType = "arraybuffer";
    var first = true;
    ws.onmessage = function (ev) {
      if (typeof ev.data !== "string") {
        if (first) { term.reset(); first = false; } // the replay follows a clean screen
        term.write(new Uint8Array(ev.data));
        return;
      }
      var m = JSON.parse(ev.data);
      if (m.type === "hello") {
        connected = true; tries = 0; me = m.you;
        writer = m.writer.id; writerHandle = m.writer.handle;
      } else if (m.type === "control") {
        writer = m.writer_id; writerHandle = m.writer;
        if (writer === me) { fit.fit(); send({ type: "resize", rows: term.rows, cols: term.cols }); } // the terminal takes the writer's size
      } else if (m.type === "ended") {
        ended = true;
        document.getElementById("session-state").textContent = m.state;
      } else if (m.type === "error") {
        status.textContent = m.error;
        return;
      }
      show();
    };
    ws.onclose = function () {
      connected = false; writer = writer === me ? "" : writer;
      show();
      if (ended) return;
      var wait = Math.min(8000, 500 * Math.pow(2, tries++));
      setTimeout(connect, wait);
    };
  }

  term.onData(function (d) { if (connected && writer === me) send({ type: "input", data: d }); });
  take.addEventListener("click", function () { send({ type: "take" }); term.focus(); });
  window.addEventListener("resize", function () {
    fit.fit();
    if (writer === me) send({ type: "resize", rows: term.rows, cols: term.cols });
  });
  show();
  connect();
})();
