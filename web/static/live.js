// Live updates: a page listens to its workspace's events and shows what
// others change — an agent's edit, a new thread, a reply, a resolve, a
// submitted review — without a reload, and never touches what the person is
// typing: an editor only says that the page changed meanwhile.
(function () {
  "use strict";
  var root = document.querySelector("[data-live-path]");
  if (!root || !window.EventSource) return;
  var path = root.getAttribute("data-live-path");
  var editing = root.tagName === "FORM";
  // Where the page's fresh HTML comes from: a page shown after a refused
  // form sits at the form's address, which has no page of its own.
  var source = root.getAttribute("data-live-url");
  // root may be replaced by a refresh: what follows reads the attributes
  // above, never root itself again.
  root = null;

  function about(ev) {
    try {
      var e = JSON.parse(ev.data), p = e.payload || {};
      // "kind:agent.": events of those kinds (the agents page);
      // "#*": any task (the board, the inbox); "#12": task 12.
      if (path.indexOf("kind:") === 0) return String(e.kind).indexOf(path.slice(5)) === 0;
      if (path === "#*") return typeof e.subject === "string" && e.subject.charAt(0) === "#";
      return e.subject === path || p.path === path || p.from === path || p.doc_path === path ||
        (path.slice(-1) === "/" && ("Desks/" + p.desk + "/" === path || String(p.path).indexOf(path) === 0)); // a folder: its pages; a desk's: its todos and log too
    } catch (err) {
      return false;
    }
  }

  function pathHref(p) {
    return p.split("/").map(encodeURIComponent).join("/");
  }

  function pageHref(p) {
    return "/pages/" + pathHref(p);
  }

  // notice says something at the top of the page, in a place no refresh
  // replaces; link, if given, is where to go next.
  function notice(text, link) {
    var n = document.getElementById("live-notice");
    if (!n) {
      n = document.createElement("p");
      n.id = "live-notice";
      n.className = "notice";
      n.setAttribute("role", "status");
      var main = document.getElementById("main") || document.body;
      main.insertBefore(n, main.firstChild);
    }
    n.textContent = text;
    if (link) {
      var a = document.createElement("a");
      a.href = link.href;
      a.textContent = link.text;
      n.appendChild(document.createTextNode(" "));
      n.appendChild(a);
    }
  }

  // What the person is typing survives a refresh: each field they changed
  // keeps its value (and a focused one its caret) in the same field (by the
  // nearest id around it and its name) of the new HTML; what they opened
  // stays open.
  var FIELDS = "textarea, select, input:not([type]), input[type=text], input[type=search], input[type=number], input[type=url], input[type=email]";
  function fieldKey(el) {
    var t = el.parentElement && el.parentElement.closest("[id]");
    return (t ? t.id : "") + "/" + (el.name || el.id);
  }
  function changed(f) {
    if (f.tagName === "SELECT") {
      for (var i = 0; i < f.options.length; i++) if (f.options[i].selected !== f.options[i].defaultSelected) return true;
      return false;
    }
    return f.value !== f.defaultValue;
  }

  function swap(old, fresh) {
    var active = document.activeElement && old.contains(document.activeElement) ? document.activeElement : null;
    var focused = active && active.matches(FIELDS) ? fieldKey(active) : null;
    // The focus stays where it was on a control that is not a field too (a
    // summary, a <pre>).
    var still = active && !focused ? stableKey(active) : null;
    var caret = focused && typeof active.selectionStart === "number" ? [active.selectionStart, active.selectionEnd] : null;
    var typed = {}, opened = {};
    // data-kept: the server put back text of a form it refused, which the
    // fresh HTML does not have.
    old.querySelectorAll(FIELDS).forEach(function (f) { if (changed(f) || f.hasAttribute("data-kept")) typed[fieldKey(f)] = f.value; });
    old.querySelectorAll("details[id]").forEach(function (d) { opened[d.id] = d.open; });
    fresh = document.importNode(fresh, true);
    var refocus = null;
    fresh.querySelectorAll(FIELDS).forEach(function (f) {
      var k = fieldKey(f);
      if (typed[k] !== undefined) f.value = typed[k];
      if (k === focused) refocus = f;
    });
    fresh.querySelectorAll("details[id]").forEach(function (d) { if (opened[d.id] !== undefined) d.open = opened[d.id]; });
    old.replaceWith(fresh);
    if (!refocus && still) refocus = findStable(fresh, still);
    if (refocus) {
      refocus.focus();
      if (caret) try { refocus.setSelectionRange(caret[0], caret[1]); } catch (err) { /* not a text field */ }
    }
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
  // data-live-busy marks a refresh under way and data-live-at when the last
  // one ended, so that a test can wait for the page to be still before it
  // acts on what it shows.
  var docEl = document.documentElement;
  function settle() {
    pending = false;
    docEl.setAttribute("data-live-at", String(Date.now()));
    docEl.removeAttribute("data-live-busy");
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
    docEl.setAttribute("data-live-busy", "");
    fetch(source || location.pathname + location.search, { credentials: "same-origin" })
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (html) {
        if (!html) return settle();
        var doc = new DOMParser().parseFromString(html, "text/html");
        document.querySelectorAll("[data-live]").forEach(function (old) {
          var fresh = doc.querySelector('[data-live="' + old.getAttribute("data-live") + '"]');
          if (fresh) swap(old, fresh);
        });
        settle();
      })
      .catch(settle);
  }

  var after = document.querySelector("[data-live-after]");
  after = after && after.getAttribute("data-live-after");
  var query = [];
  if (after) query.push("after=" + encodeURIComponent(after));
  // The gateway's page follows the gateway's servers, which change apart
  // from the workspace's events.
  if (path === "gateway") query.push("gateway");
  var es = new EventSource("/events" + (query.length ? "?" + query.join("&") : ""));
  es.addEventListener("gateway.changed", function () { refresh(); });
  // A stream the server refuses (not one that dropped: that one the browser
  // reconnects by itself) means the person is signed out.
  es.addEventListener("error", function () {
    if (es.readyState === EventSource.CLOSED) notice("Live updates stopped: you are signed out (or your access changed).", { href: "/login", text: "Sign in again" });
  });
  // review.created: an agent's drafts submitted as a review (or a review
  // opened); review.updated: a review completed or reopened.
  ["page.updated", "page.created", "page.restored", "annotation.created", "annotation.updated", "annotation.deleted", "annotation.anchored",
    "review.created", "review.updated", "review.deleted",
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
  ["page.deleted", "page.moved", "page.purged"].forEach(function (kind) {
    es.addEventListener(kind, function (ev) {
      if (!about(ev)) return;
      var to = null;
      try { to = JSON.parse(ev.data).payload.path; } catch (err) { /* no payload */ }
      if (kind === "page.moved" && to && to !== path) {
        notice("This page was moved meanwhile, to " + to + ".", { href: (editing ? "/edit/" : "/pages/") + pathHref(to), text: "Go there" });
      } else if (kind === "page.moved") {
        notice("This page was moved meanwhile.");
      } else {
        notice("This page was deleted meanwhile" + (kind === "page.deleted" ? " (it is in the trash)." : "."), { href: "/trash", text: "Open the trash" });
      }
    });
  });
})();
