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
  // Where the page's fresh HTML comes from: a page shown after a refused
  // form sits at the form's address, which has no page of its own.
  var source = root.getAttribute("data-live-url");

  function about(ev) {
    try {
      var e = JSON.parse(ev.data), p = e.payload || {};
      // "#*": any task (the board, the inbox); "#12": task 12.
      if (path === "#*") return typeof e.subject === "string" && e.subject.charAt(0) === "#";
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

  // stableKey names a focused element that is not a field by the nearest
  // id around it and its tag, so that it can be found in the fresh HTML.
  function stableKey(el) {
    if (el.id) return { id: el.id, tag: "" };
    var t = el.parentElement && el.parentElement.closest("[id]");
    return t ? { id: t.id, tag: el.tagName.toLowerCase() } : null;
  }
  function findStable(root, k) {
    var el = root.querySelector("#" + CSS.escape(k.id)) || (root.id === k.id ? root : null);
    if (!el || !k.tag) return el;
    return el.querySelector(k.tag);
  }

  // One fetch at a time; an event during it asks for one more after it, as
  // the fetch may have been answered before that change.
  var pending = false, again = false;
  function settle() {
    pending = false;
    if (again) {
      again = false;
      refresh();
    }
  }
  function refresh() {
    if (pending) {
      again = true;
      return;
    }
    pending = true;
    fetch(source || location.pathname + location.search, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return settle();
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (old) {
          var fresh = doc.querySelector('[data-live="' + old.getAttribute("data-live") + '"]');
          if (!fresh) return;
          var active = document.activeElement && old.contains(document.activeElement) ? document.activeElement : null;
          var field = active && active.matches("textarea, input[type=text]");
          var typed = {}, focused = field ? fieldKey(active) : null;
          old.querySelectorAll("textarea, input[type=text]").forEach(function (f) { if (f.value) typed[fieldKey(f)] = f.value; });
          // What the person opened stays open, what they closed stays
          // closed, and the focus stays where it was (a summary, a <pre>).
          var opened = {};
          old.querySelectorAll("details[id]").forEach(function (d) { opened[d.id] = d.open; });
          var still = active && !field ? stableKey(active) : null;
          fresh = document.importNode(fresh, true);
          fresh.querySelectorAll("textarea, input[type=text]").forEach(function (f) {
            var k = fieldKey(f);
            if (typed[k] !== undefined) f.value = typed[k];
            if (k === focused) setTimeout(function () { f.focus(); }, 0);
          });
          fresh.querySelectorAll("details[id]").forEach(function (d) { if (opened[d.id] !== undefined) d.open = opened[d.id]; });
          old.replaceWith(fresh);
          if (still) {
            var again = findStable(fresh, still);
            if (again) again.focus();
          }
        });
        settle();
      })
      .catch(settle);
  }

  var after = root.getAttribute("data-live-after");
  var query = [];
  if (after) query.push("after=" + encodeURIComponent(after));
  // The gateway's page follows the gateway's servers, which change apart
  // from the workspace's events.
  if (path === "gateway") query.push("gateway");
  var es = new EventSource("/events" + (query.length ? "?" + query.join("&") : ""));
  es.addEventListener("gateway.changed", function () { refresh(); });
  ["page.updated", "page.created", "page.restored", "annotation.created", "annotation.updated", "annotation.deleted", "annotation.anchored", "review.submitted",
    "task.created", "task.updated", "task.claimed", "task.commented", "task.completed"].forEach(function (kind) {
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
