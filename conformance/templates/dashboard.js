"use strict";
// Filtering of the matrix (the page reads without it: every cell links to its detail).
(function () {
  var controls = document.getElementById("controls");
  var filter = document.getElementById("filter");
  var failingOnly = document.getElementById("failing-only");
  var shown = document.getElementById("shown");
  var rows = Array.prototype.slice.call(document.querySelectorAll("#matrix table.matrix tbody tr"));
  if (!controls || !filter || !failingOnly || !shown) {
    return;
  }
  controls.hidden = false;
  function apply() {
    var q = filter.value.trim().toLowerCase();
    var count = 0;
    rows.forEach(function (tr) {
      var tag = (tr.getAttribute("data-tag") || "").toLowerCase();
      var ok = (q === "" || tag.indexOf(q) !== -1) &&
        (!failingOnly.checked || tr.getAttribute("data-failing") === "true");
      tr.hidden = !ok;
      if (ok) {
        count += 1;
      }
    });
    shown.textContent = count + " of " + rows.length + " versions shown";
  }
  filter.addEventListener("input", apply);
  failingOnly.addEventListener("change", apply);
  apply();
  // Escape closes an open detail.
  document.addEventListener("keydown", function (e) {
    if (e.key === "Escape" && location.hash.length > 1 && location.hash !== "#matrix") {
      location.hash = "#matrix";
    }
  });
})();
