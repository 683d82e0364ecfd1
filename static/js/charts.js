// Draws every chart of the page from the figure embedded beside it (json_script); the tables stay as the fallback.
// A chart inside a collapsed section (<details>) is drawn when the section opens, at the width it then has
// (sections.js opens the section a link points into).
// The steady-state variable picker works as a plain GET form; with JS it swaps the one chart in place instead.
(function () {
  "use strict";
  function collapsed(element) {
    var closed = element.closest("details:not([open])");
    return closed !== null && !closed.classList.contains("numbers");
  }
  function draw(root) {
    if (typeof window.Plotly === "undefined") {
      return;
    }
    root.querySelectorAll("[data-figure]").forEach(function (element) {
      if (element.hasAttribute("data-drawn") || collapsed(element)) {
        return;
      }
      var source = document.getElementById(element.getAttribute("data-figure"));
      if (!source) {
        return;
      }
      element.setAttribute("data-drawn", "");
      var figure = JSON.parse(source.textContent);
      window.Plotly.newPlot(element, figure.data, figure.layout, { responsive: true, displaylogo: false });
      var numbers = element.closest("figure").querySelector("details.numbers");
      if (numbers) {
        numbers.removeAttribute("open");
      }
    });
  }
  function picker(form) {
    var select = form.querySelector("select");
    var target = document.getElementById("steady-detail-chart");
    if (!select || !target) {
      return;
    }
    select.addEventListener("change", function () {
      var url = new URL(window.location.href);
      new FormData(form).forEach(function (value, name) {
        url.searchParams.set(name, value);
      });
      url.hash = "";
      fetch(url.toString(), { credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) {
            throw new Error("HTTP " + response.status);
          }
          return response.text();
        })
        .then(function (text) {
          var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("steady-detail-chart");
          if (fresh) {
            target.innerHTML = fresh.innerHTML;
            draw(target);
            window.history.replaceState(null, "", url.toString() + "#steady-detail");
          }
        })
        .catch(function () {
          form.submit();
        });
    });
  }
  function start() {
    document.documentElement.classList.add("js");
    draw(document);
    document.addEventListener(
      "toggle",
      function (event) {
        if (event.target.open) {
          draw(event.target);
        }
      },
      true
    );
    document.querySelectorAll("[data-variable-picker]").forEach(picker);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
