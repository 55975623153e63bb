// Threads in the margin: on a wide screen each thread stands beside the text
// it quotes, in the order of the page (so that the Tab key meets them in the
// order the eye does), pushed down no further than the thread above needs.
// Narrower, they stack below the page as the HTML has them.
(function () {
  "use strict";
  var wide = window.matchMedia("(min-width: 64.01rem)");
  var layout = document.querySelector(".page-layout");
  var aside = document.getElementById("threads");
  if (!layout || !aside) return;

  // where finds the quoted text in the rendered page, the occurrence after
  // its prefix if the text is there more than once, and returns its top.
  function where(body, exact, prefix) {
    var walk = document.createTreeWalker(body, NodeFilter.SHOW_TEXT), nodes = [], text = "";
    for (var n = walk.nextNode(); n; n = walk.nextNode()) {
      nodes.push([n, text.length]);
      text += n.data;
    }
    var at = -1, p = (prefix || "").trim();
    if (p) {
      at = text.indexOf(p.slice(-16) + exact);
      if (at < 0) at = text.indexOf(p.slice(-16) + " " + exact);
      if (at >= 0) at = text.indexOf(exact, at);
    }
    if (at < 0) at = text.indexOf(exact);
    if (at < 0) return null;
    for (var i = nodes.length - 1; i >= 0; i--) {
      if (nodes[i][1] <= at) {
        var r = document.createRange();
        r.setStart(nodes[i][0], Math.min(at - nodes[i][1], nodes[i][0].data.length));
        return r.getBoundingClientRect().top;
      }
    }
    return null;
  }

  // order puts the threads in list in the order given. Moving a node takes
  // the focus out of it: a reply being typed in a moved thread gets its
  // focus and caret back, so that the next keystroke lands where the person
  // is typing (issue 23.2).
  function order(list, els) {
    var active = document.activeElement, caret = null;
    if (active && list.contains(active) && typeof active.selectionStart === "number") caret = [active.selectionStart, active.selectionEnd, active.selectionDirection];
    els.forEach(function (el) { list.appendChild(el); });
    if (active && active !== document.activeElement && active.isConnected && list.contains(active)) {
      active.focus({ preventScroll: true });
      if (caret) try { active.setSelectionRange(caret[0], caret[1], caret[2]); } catch (err) { /* not a text field */ }
    }
  }

  function place() {
    var list = aside.querySelector('[data-live="threads"] .anchored');
    var body = document.querySelector("article.page .markdown");
    if (!list || !body) return;
    var threads = Array.prototype.slice.call(list.querySelectorAll(":scope > .thread"));
    threads.forEach(function (t) { t.style.marginTop = ""; });
    aside.setAttribute("data-placed", wide.matches ? "wide" : "narrow");
    if (!wide.matches) return;
    var placed = threads.map(function (t, i) {
      var q = t.querySelector(":scope > .quote");
      var top = q ? where(body, q.textContent, t.getAttribute("data-prefix")) : null;
      return { el: t, top: top === null ? Infinity : top, i: i };
    });
    placed.sort(function (a, b) { return a.top - b.top || a.i - b.i; });
    order(list, placed.map(function (p) { return p.el; }));
    placed.forEach(function (p) {
      if (p.top === Infinity) return;
      var now = p.el.getBoundingClientRect().top;
      if (p.top > now) p.el.style.marginTop = (p.top - now) + "px";
    });
  }

  // Live updates replace the thread list deep inside the aside: watch the
  // whole subtree, but forget the moves place itself makes, or it would
  // place forever.
  var timer = 0, observers = [];
  function placeQuietly() {
    place();
    observers.forEach(function (o) { o.takeRecords(); });
  }
  function soon() {
    clearTimeout(timer);
    timer = setTimeout(placeQuietly, 50);
  }
  observers.push(new MutationObserver(soon), new MutationObserver(soon));
  observers[0].observe(layout, { childList: true });
  observers[1].observe(aside, { childList: true, subtree: true });
  wide.addEventListener("change", soon);
  window.addEventListener("resize", soon);
  window.addEventListener("load", soon);
  placeQuietly();
})();
