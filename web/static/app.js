// evident: small conveniences only. Every view works without this script.
(function () {
  "use strict";
  // Filters apply as soon as a dropdown changes (the form is a GET, so the
  // result is a URL like any other).
  document.querySelectorAll("form.filters select").forEach(function (s) {
    s.addEventListener("change", function () { s.form.submit(); });
  });
  // Open or close every row.
  var toggles = document.querySelector(".toggles");
  if (toggles) {
    toggles.hidden = false;
    toggles.addEventListener("click", function (e) {
      var b = e.target.closest("button[data-open]");
      if (!b) { return; }
      var open = b.getAttribute("data-open") === "all";
      document.querySelectorAll("details.row").forEach(function (d) { d.open = open; });
    });
  }
  // A link to #t-… opens that row.
  function openHash() {
    if (location.hash.indexOf("#t-") !== 0) { return; }
    var d = document.getElementById(decodeURIComponent(location.hash.slice(1)));
    if (d && d.tagName === "DETAILS") { d.open = true; d.scrollIntoView(); }
  }
  window.addEventListener("hashchange", openHash);
  openHash();
})();
