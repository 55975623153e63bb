// Highlights: each anchored thread's quote is marked in the page text, as
// Hypothesis does. A highlight leads to its thread's card, and the card has
// a link back to its highlight. Orphaned threads (their quote is gone) have
// none: the page lists them apart. Live updates replace the page and the
// threads, so the marks are made again after each.
(function () {
  "use strict";
  var layout = document.querySelector(".page-layout");
  var aside = document.getElementById("threads");
  if (!layout || !aside) return;

  // text reads the body's text nodes as a browser shows them: white space
  // collapsed to one space, and for each character its node and offset.
  // An embedded page's text is not this page's: quotes are never in it.
  function text(body) {
    var skip = { acceptNode: function (n) { return n.parentNode.closest && n.parentNode.closest(".embed") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT; } };
    var walk = document.createTreeWalker(body, NodeFilter.SHOW_TEXT, skip), out = "", at = [], space = true;
    for (var n = walk.nextNode(); n; n = walk.nextNode()) {
      for (var i = 0; i < n.data.length; i++) {
        var c = n.data.charAt(i);
        if (/\s/.test(c)) {
          if (space) continue;
          c = " ";
          space = true;
        } else {
          space = false;
        }
        out += c;
        at.push([n, i]);
      }
    }
    return { s: out, at: at };
  }

  function squeeze(s) { return (s || "").replace(/\s+/g, " ").trim(); }

  // find is where a quote stands in the page: the occurrence after its
  // prefix when the quote is there more than once.
  function find(t, exact, prefix) {
    var at = -1, p = squeeze(prefix).slice(-16);
    if (p) {
      at = t.s.indexOf(p + exact);
      if (at < 0) at = t.s.indexOf(p + " " + exact);
      if (at >= 0) at = t.s.indexOf(exact, at);
    }
    return at >= 0 ? at : t.s.indexOf(exact);
  }

  // wrap marks characters [from, to) of t, one <mark> per text node.
  function wrap(t, from, to, uid, cls) {
    var runs = [];
    for (var i = from; i < to; i++) {
      var n = t.at[i][0], o = t.at[i][1], last = runs[runs.length - 1];
      if (last && last.node === n) last.end = o + 1;
      else runs.push({ node: n, start: o, end: o + 1 });
    }
    var marks = [];
    // From the last run back, so that splitting a node keeps the offsets
    // of the runs before it good.
    for (var k = runs.length - 1; k >= 0; k--) {
      var r = runs[k];
      if (r.node.parentNode && r.node.parentNode.closest && r.node.parentNode.closest("pre, code") && /^\s*$/.test(r.node.data.slice(r.start, r.end))) continue;
      var mid = r.node.splitText(r.start);
      mid.splitText(r.end - r.start);
      var m = document.createElement("mark");
      m.className = "highlight " + cls;
      m.setAttribute("data-thread", uid);
      mid.parentNode.replaceChild(m, mid);
      m.appendChild(mid);
      marks.unshift(m);
    }
    return marks;
  }

  function clear(body) {
    body.querySelectorAll("mark.highlight").forEach(function (m) {
      var p = m.parentNode;
      while (m.firstChild) p.insertBefore(m.firstChild, m);
      p.removeChild(m);
      p.normalize();
    });
  }

  function mark() {
    var body = document.querySelector("article.page .markdown");
    var list = aside.querySelector('[data-live="threads"] .anchored');
    if (!body || !list) return;
    clear(body);
    var t = text(body);
    list.querySelectorAll(":scope > .thread").forEach(function (card) {
      var q = card.querySelector(":scope > .quote"), uid = card.id.replace(/^thread-/, "");
      var back = card.querySelector(":scope > .to-highlight");
      if (!q) return;
      var exact = squeeze(q.textContent), at = exact ? find(t, exact, card.getAttribute("data-prefix")) : -1;
      if (at < 0) {
        if (back) back.remove();
        return;
      }
      var marks = wrap(t, at, at + exact.length, uid, card.className.indexOf("status-resolved") >= 0 ? "resolved" : "");
      if (!marks.length) return;
      marks[0].id = "hl-" + uid;
      marks[0].tabIndex = 0;
      marks[0].setAttribute("role", "link");
      marks[0].setAttribute("aria-label", "Comment thread on “" + exact + "”");
      if (!back) {
        back = document.createElement("a");
        back.className = "to-highlight";
        back.textContent = "Show in the page";
        q.insertAdjacentElement("afterend", back);
      }
      back.href = "#hl-" + uid;
    });
  }

  // A highlight opens its thread: the card scrolls into view and takes the
  // focus; hovering either one lights up the other.
  function toThread(uid) {
    var card = document.getElementById("thread-" + uid);
    if (!card) return;
    history.replaceState(null, "", "#thread-" + uid);
    card.tabIndex = -1;
    card.scrollIntoView({ block: "nearest" });
    card.focus({ preventScroll: true });
  }
  document.addEventListener("click", function (e) {
    var m = e.target.closest && e.target.closest("mark.highlight");
    if (m && !e.target.closest("a")) toThread(m.getAttribute("data-thread"));
  });
  document.addEventListener("keydown", function (e) {
    var m = e.target.closest && e.target.closest("mark.highlight");
    if (m && (e.key === "Enter" || e.key === " ")) {
      e.preventDefault();
      toThread(m.getAttribute("data-thread"));
    }
  });
  function light(e, on) {
    var el = e.target.closest && (e.target.closest("mark.highlight") || e.target.closest(".anchored > .thread"));
    if (!el) return;
    var uid = el.getAttribute("data-thread") || el.id.replace(/^thread-/, "");
    document.querySelectorAll('mark.highlight[data-thread="' + uid + '"]').forEach(function (m) { m.classList.toggle("lit", on); });
    var card = document.getElementById("thread-" + uid);
    if (card) card.classList.toggle("lit", on);
  }
  document.addEventListener("mouseover", function (e) { light(e, true); });
  document.addEventListener("mouseout", function (e) { light(e, false); });

  // The page (its article) and the threads are replaced by live updates:
  // mark again after either. Marking touches only the article's insides,
  // which neither observer watches.
  var timer = 0;
  function soon() {
    clearTimeout(timer);
    timer = setTimeout(function () { mark(); document.documentElement.setAttribute("data-highlighted", String(Date.now())); }, 30);
  }
  new MutationObserver(soon).observe(layout, { childList: true });
  new MutationObserver(soon).observe(aside, { childList: true, subtree: true });
  mark();
  document.documentElement.setAttribute("data-highlighted", String(Date.now()));
})();
