// Draws every chart of the page from the figure embedded beside it (json_script); the tables stay as the fallback.
(function () {
  "use strict";
  function draw() {
    if (typeof window.Plotly === "undefined") {
      return;
    }
    document.querySelectorAll("[data-figure]").forEach(function (element) {
      var source = document.getElementById(element.getAttribute("data-figure"));
      if (!source) {
        return;
      }
      var figure = JSON.parse(source.textContent);
      window.Plotly.newPlot(element, figure.data, figure.layout, { responsive: true, displaylogo: false });
      var numbers = element.closest("figure").querySelector("details.numbers");
      if (numbers) {
        numbers.removeAttribute("open");
      }
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
