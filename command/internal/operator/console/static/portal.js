// Opens a portal link: its secret is in the URL's fragment (never sent to a
// server, nor in a Referer); this script takes it out of the address bar
// and the history, then posts it, once, to the open page's form. Only that
// POST uses the link: a GET of the link (a preview, a scanner) uses nothing.
"use strict";
(function () {
  var secret = window.location.hash.slice(1);
  window.history.replaceState(null, "", window.location.pathname);
  var form = document.getElementById("portal-open");
  var field = document.getElementById("portal-link");
  if (!secret || !form || !field) {
    return;
  }
  field.value = secret;
  form.submit();
})();
