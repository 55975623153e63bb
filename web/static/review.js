// Select text in a page to comment on it: the selection becomes the new
// comment's quote, with a little text before and after it, so that the
// thread can find its place again after the page is edited.
(function () {
  "use strict";
  var form = document.getElementById("new-comment");
  if (!form) return;
  var around = 32;
  document.addEventListener("selectionchange", function () {
    var body = document.querySelector("article.page .markdown");
    var sel = window.getSelection();
    if (!body || !sel || sel.isCollapsed || !body.contains(sel.anchorNode) || !body.contains(sel.focusNode)) return;
    var exact = sel.toString().trim();
    if (!exact) return;
    var range = sel.getRangeAt(0);
    var before = document.createRange();
    before.setStart(body, 0);
    before.setEnd(range.startContainer, range.startOffset);
    var after = document.createRange();
    after.setStart(range.endContainer, range.endOffset);
    after.setEnd(body, body.childNodes.length);
    form.elements.quote_exact.value = exact;
    form.elements.quote_prefix.value = before.toString().slice(-around);
    form.elements.quote_suffix.value = after.toString().slice(0, around);
    var preview = form.querySelector(".quote-preview");
    preview.textContent = exact;
    preview.hidden = false;
  });
})();
