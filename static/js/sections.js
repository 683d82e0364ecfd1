// Collapsible sections (<details>): a link to anything inside a collapsed one opens it (and every one around it),
// and buttons marked data-sections="open" / "close" open or close every section of their page (data-target: a
// selector, default details.doc-section). Without JS the sections still open and close by a click.
(function () {
  "use strict";
  function openTarget() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id ? document.getElementById(id) : null;
    if (!target) {
      return;
    }
    var opened = false;
    for (var details = target.closest("details"); details; details = details.parentElement.closest("details")) {
      if (!details.open) {
        details.open = true;
        opened = true;
      }
    }
    if (opened) {
      target.scrollIntoView();
    }
  }
  function start() {
    document.documentElement.classList.add("js");
    openTarget();
    window.addEventListener("hashchange", openTarget);
    document.querySelectorAll("[data-sections]").forEach(function (button) {
      button.addEventListener("click", function () {
        var open = button.getAttribute("data-sections") === "open";
        var selector = button.getAttribute("data-target") || "details.doc-section";
        document.querySelectorAll(selector).forEach(function (details) {
          details.open = open;
        });
      });
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
