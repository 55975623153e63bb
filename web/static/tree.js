// The page tree opens folders where they are: a folder link (which, without
// JavaScript, leads to the folder's own listing) fetches the folder's
// children as HTML and shows them below it; "More…" brings the next window
// in place of itself.
(function () {
  "use strict";
  function fetchItems(href) {
    return fetch(href, { headers: { "X-Atrium-Fragment": "1" }, credentials: "same-origin" }).then(function (r) {
      if (!r.ok) throw new Error(r.status);
      return r.text();
    });
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
      }, function () { a.removeAttribute("aria-busy"); });
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
    });
  });
})();
