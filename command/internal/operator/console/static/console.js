// Gives each copy button (an id the page shows shortened) its click: the
// whole id to the clipboard. The buttons stay hidden without this file;
// the whole id is in the shortened one's title either way.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("button.copy[data-copy]").forEach(function (b) {
    b.hidden = false;
    b.addEventListener("click", function () {
      var text = b.getAttribute("data-copy");
      var done = function () {
        b.firstChild.textContent = "Copied";
        setTimeout(function () { b.firstChild.textContent = "Copy"; }, 1500);
      };
      if (navigator.clipboard && window.isSecureContext) {
        navigator.clipboard.writeText(text).then(done, function () {});
        return;
      }
      var area = document.createElement("textarea");
      area.value = text;
      area.setAttribute("readonly", "");
      area.className = "visually-hidden";
      document.body.appendChild(area);
      area.select();
      try { if (document.execCommand("copy")) { done(); } } finally { area.remove(); }
    });
  });
});
