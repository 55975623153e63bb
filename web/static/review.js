// Select text in a page to comment on it: the selection becomes the new
// comment's quote, with a little text before and after it, so that the
// thread can find its place again after the page is edited.
(function () {
  "use strict";
  var form = document.getElementById("new-comment");
  if (!form) return;
  var around = 32;
  function inEmbed(n) {
    var el = n && (n.nodeType === 1 ? n : n.parentNode);
    return !!(el && el.closest && el.closest(".embed"));
  }
  // own is a range's text without the embedded pages in it.
  function own(range) {
    var frag = range.cloneContents();
    if (!frag.querySelector(".embed")) return range.toString();
    frag.querySelectorAll(".embed").forEach(function (e) { e.remove(); });
    return frag.textContent;
  }
  document.addEventListener("selectionchange", function () {
    var body = document.querySelector("article.page .markdown");
    var sel = window.getSelection();
    if (!body || !sel || sel.isCollapsed || !body.contains(sel.anchorNode) || !body.contains(sel.focusNode)) return;
    // An embedded page's text is another page's: comment on it there.
    if (inEmbed(sel.anchorNode) || inEmbed(sel.focusNode)) return;
    var range = sel.getRangeAt(0);
    var exact = (range.cloneContents().querySelector(".embed") ? own(range) : sel.toString()).trim();
    if (!exact) return;
    var before = document.createRange();
    before.setStart(body, 0);
    before.setEnd(range.startContainer, range.startOffset);
    var after = document.createRange();
    after.setStart(range.endContainer, range.endOffset);
    after.setEnd(body, body.childNodes.length);
    form.elements.quote_exact.value = exact;
    form.elements.quote_prefix.value = own(before).slice(-around);
    form.elements.quote_suffix.value = own(after).slice(0, around);
    var preview = form.querySelector(".quote-preview");
    preview.textContent = exact;
    preview.hidden = false;
  });
})();
