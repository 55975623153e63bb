// Live updates: a page listens to its workspace's events and shows what
// others change — an agent's edit, a new thread — without a reload, and
// never touches what the person is typing: an editor only says that the
// page changed meanwhile.
(function () {
  "use strict";
  var root = document.querySelector("[data-live-path]");
  if (!root || !window.EventSource) return;
  var path = root.getAttribute("data-live-path");
  var editing = root.tagName === "FORM";

  function about(ev) {
    try {
      var e = JSON.parse(ev.data), p = e.payload || {};
      return e.subject === path || p.path === path || p.from === path || p.doc_path === path;
    } catch (err) {
      return false;
    }
  }

  function notice(text) {
    var n = document.getElementById("live-notice");
    if (!n) {
      n = document.createElement("p");
      n.id = "live-notice";
      n.className = "notice";
      n.setAttribute("role", "status");
      root.parentNode.insertBefore(n, root);
    }
    n.textContent = text;
  }

  var pending = false;
  function refresh() {
    if (pending) return;
    pending = true;
    fetch(location.pathname + location.search, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        pending = false;
        if (!html) return;
        var fresh = new DOMParser().parseFromString(html, "text/html").querySelector("[data-live-path]");
        if (fresh) { root.replaceWith(fresh); root = fresh; }
      })
      .catch(function () { pending = false; });
  }

  var es = new EventSource("/events");
  ["page.updated", "page.created", "page.restored", "annotation.created", "annotation.updated", "annotation.deleted", "annotation.anchored", "review.submitted"].forEach(function (kind) {
    es.addEventListener(kind, function (ev) {
      if (!about(ev)) return;
      if (editing) {
        if (kind.indexOf("page.") === 0) notice("This page changed meanwhile. Your text is kept: saving shows both versions.");
        return;
      }
      refresh();
    });
  });
  ["page.deleted", "page.moved"].forEach(function (kind) {
    es.addEventListener(kind, function (ev) {
      if (about(ev)) notice(kind === "page.deleted" ? "This page was deleted meanwhile (it is in the trash)." : "This page was moved meanwhile.");
    });
  });
})();
