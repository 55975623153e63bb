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
      return e.subject === path || p.path === path || p.from === path || p.doc_path === path ||
        (path.slice(-1) === "/" && ("Desks/" + p.desk + "/" === path || String(p.path).indexOf(path) === 0)); // a folder: its pages; a desk's: its todos and log too
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
        settle();
      })
      .catch(settle);
  }

  var after = root.getAttribute("data-live-after");
  var es = new EventSource("/events" + (after ? "?after=" + encodeURIComponent(after) : ""));
  ["page.updated", "page.created", "page.restored", "annotation.created", "annotation.updated", "annotation.deleted", "annotation.anchored", "review.submitted",
    "task.created", "task.updated", "task.claimed", "task.commented", "task.completed", "desk.progress", "desk.archived"].forEach(function (kind) {
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
