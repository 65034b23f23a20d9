// Shows every <time datetime> in the viewer's own zone; the UTC time stays
// in its title (shown on hover). The pages work without this file.
"use strict";
document.addEventListener("DOMContentLoaded", function () {
  document.querySelectorAll("time[datetime]").forEach(function (el) {
    var d = new Date(el.getAttribute("datetime"));
    if (!isNaN(d)) {
      el.textContent = d.toLocaleString();
    }
  });
});
