// The page tree opens folders where they are: a folder link (which, without
// JavaScript, leads to the folder's own listing) fetches the folder's
// children as HTML and shows them below it; "More…" brings the next window
// in place of itself.
(function () {
  "use strict";
  // A failed window comes back as an item that says why (with its code):
  // it is shown where the items would have gone, and the link stays.
  function fetchItems(href) {
    return fetch(href, { headers: { "X-Atrium-Fragment": "1" }, credentials: "same-origin" }).then(function (r) {
      return r.text().then(function (html) {
        if (r.ok) return html;
        var e = new Error(r.headers.get("X-Atrium-Error-Code") || String(r.status));
        e.html = (r.headers.get("Content-Type") || "").indexOf("text/html") === 0 ? html : "";
        throw e;
      });
    });
  }
  function failed(li, e) {
    var old = li.querySelector(":scope > .fragment-error");
    if (old) old.remove();
    var shown = nodes(e.html || '<li class="fragment-error error" role="alert"></li>').firstElementChild;
    if (!e.html) shown.textContent = "Could not load this folder (" + e.message + ").";
    var ul = document.createElement("ul");
    ul.className = "fragment-error";
    ul.appendChild(shown);
    li.appendChild(ul);
  }
  function nodes(html) {
    var t = document.createElement("template");
    t.innerHTML = html;
    return t.content;
  }
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest(".tree a[data-folder], .tree a[data-more]");
    if (!a || e.button !== 0 || e.ctrlKey || e.metaKey || e.shiftKey) return;
    e.preventDefault();
    var li = a.parentNode;
    if (a.hasAttribute("data-more")) {
      a.setAttribute("aria-busy", "true");
      fetchItems(a.href).then(function (html) {
        var first = nodes(html);
        var focus = first.querySelector("a");
        li.replaceWith(first);
        if (focus) focus.focus();
      }, function (e) {
        a.removeAttribute("aria-busy");
        failed(li, e);
      });
      return;
    }
    var list = li.querySelector(":scope > ul");
    if (a.getAttribute("aria-expanded") === "true") {
      if (list) list.hidden = true;
      a.setAttribute("aria-expanded", "false");
      return;
    }
    if (list) {
      list.hidden = false;
      a.setAttribute("aria-expanded", "true");
      return;
    }
    fetchItems(a.href).then(function (html) {
      var ul = document.createElement("ul");
      ul.appendChild(nodes(html));
      li.appendChild(ul);
      a.setAttribute("aria-expanded", "true");
    }, function (e) { failed(li, e); });
  });
})();
