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

  // What the person is typing survives a refresh: each field's value is
  // carried over to the same field (by its thread and name) in the new HTML.
  function fieldKey(el) {
    var t = el.closest("[id]");
    return (t ? t.id : "") + "/" + el.name;
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
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (old) {
          var fresh = doc.querySelector('[data-live="' + old.getAttribute("data-live") + '"]');
          if (!fresh) return;
          var typed = {}, focused = document.activeElement && old.contains(document.activeElement) ? fieldKey(document.activeElement) : null;
          old.querySelectorAll("textarea, input[type=text]").forEach(function (f) { if (f.value) typed[fieldKey(f)] = f.value; });
          fresh = document.importNode(fresh, true);
          fresh.querySelectorAll("textarea, input[type=text]").forEach(function (f) {
            var k = fieldKey(f);
            if (typed[k] !== undefined) f.value = typed[k];
            if (k === focused) setTimeout(function () { f.focus(); }, 0);
          });
          old.replaceWith(fresh);
        });
      })
      .catch(function () { pending = false; });
  }

  var after = root.getAttribute("data-live-after");
  var es = new EventSource("/events" + (after ? "?after=" + encodeURIComponent(after) : ""));
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
