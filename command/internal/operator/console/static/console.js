// Gives each copy button (an id the page shows shortened) its click: the
// whole id to the clipboard. The buttons stay hidden without this file;
// the whole id is in the shortened one's title either way.
//
// A page marked data-refresh="N" (the overview) asks for itself again every
// N seconds and swaps in its new content, so its figures stay current
// without a reload; a Pause button stops that (WCAG 2.2.2), a hidden tab
// asks nothing, and a session that ended stops it with a word why.
"use strict";

function copyButtons(root) {
  root.querySelectorAll("button.copy[data-copy]").forEach(function (b) {
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
}

function refresher(main) {
  var marker = main.querySelector("[data-refresh]");
  if (!marker) { return; }
  var every = parseInt(marker.getAttribute("data-refresh"), 10) * 1000;
  var paused = false;
  var timer = null;
  var control = function () {
    var m = main.querySelector("[data-refresh]");
    var b = m && m.querySelector("button");
    if (!b) { return; }
    b.hidden = false;
    b.textContent = paused ? "Resume" : "Pause";
    b.setAttribute("aria-pressed", paused ? "true" : "false");
    b.addEventListener("click", function () {
      paused = !paused;
      b.textContent = paused ? "Resume" : "Pause";
      b.setAttribute("aria-pressed", paused ? "true" : "false");
      schedule();
    });
  };
  var stop = function (why) {
    paused = true;
    var m = main.querySelector("[data-refresh]");
    if (m) { m.textContent = why; }
  };
  var load = function () {
    timer = null;
    if (paused) { return; }
    if (document.hidden) { schedule(); return; }
    fetch(window.location.href, { credentials: "same-origin", redirect: "manual", headers: { "Accept": "text/html" } })
      .then(function (res) {
        if (res.type === "opaqueredirect" || res.status !== 200) {
          stop("This page stopped refreshing (the console answered " + (res.status || "a redirect") + "); reload it.");
          return null;
        }
        return res.text();
      })
      .then(function (html) {
        if (html === null || paused) { return; }
        var next = new DOMParser().parseFromString(html, "text/html").querySelector("main");
        if (!next) { return; }
        main.innerHTML = next.innerHTML;
        copyButtons(main);
        control();
        schedule();
      }, function () { schedule(); });
  };
  var schedule = function () {
    if (timer !== null) { clearTimeout(timer); timer = null; }
    if (!paused) { timer = setTimeout(load, every); }
  };
  control();
  schedule();
}

document.addEventListener("DOMContentLoaded", function () {
  copyButtons(document);
  var main = document.querySelector("main");
  if (main) { refresher(main); }
});
