// evident: small conveniences only. Every view works without this script.
//
// What it adds (issue 13 items 3 and 5):
//   - filters apply as soon as a dropdown changes; open/close every row; a
//     link to #t-… opens that row;
//   - keyboard navigation over the page's rows (details.row on a run page,
//     the items of a review queue, the rows of a table marked
//     data-nav="rows" such as the run list): j next, k previous (↓/↑ too
//     once a row has the focus), o/Enter open, Esc close, / search, with a
//     visible hint; no key does anything while typing in a field (Esc
//     leaves the field);
//   - an upload's progress (bytes sent, then "판정하는 중…") for the
//     multipart forms, with the plain form as the fallback;
//   - "불러오는 중…" while the next page loads after a link or a filter;
//   - document.documentElement.dataset.ready = "1" once all of that is set
//     up, which the browser tests wait on (web/browser_test.go).
(function () {
  "use strict";
  var root = document.documentElement;

  // Filters apply as soon as a dropdown changes (the form is a GET, so the
  // result is a URL like any other).
  document.querySelectorAll("form.filters select").forEach(function (s) {
    s.addEventListener("change", function () { loading(); s.form.submit(); });
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

  // ---- "불러오는 중…" while the next page loads ----
  var indicator = document.createElement("div");
  indicator.className = "loading-indicator";
  indicator.setAttribute("role", "status");
  indicator.setAttribute("aria-live", "polite");
  indicator.textContent = "불러오는 중…";
  document.body.appendChild(indicator);
  // The indicator shows after a short CSS delay (style.css), so a fast page
  // never flashes it.
  function loading() { root.classList.add("is-loading"); }
  window.addEventListener("pageshow", function () { root.classList.remove("is-loading"); });
  // A download (an export, the report file) does not leave the page.
  var download = /\.(jsonl|csv|html|txt|json|png)$/;
  document.addEventListener("click", function (e) {
    var a = e.target.closest ? e.target.closest("a[href]") : null;
    if (!a || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) { return; }
    if (a.target || a.hasAttribute("download") || a.origin !== location.origin) { return; }
    if (a.pathname === location.pathname && a.search === location.search && a.hash) { return; }
    if (download.test(a.pathname)) { return; }
    loading();
  });
  document.addEventListener("submit", function (e) {
    var f = e.target;
    if (!e.defaultPrevented && (f.method || "get").toLowerCase() === "get") { loading(); }
  });

  // ---- keyboard navigation ----
  function rowItems() {
    var details = document.querySelectorAll("main details.row");
    if (details.length) { return { kind: "details", items: Array.prototype.slice.call(details) }; }
    var items = document.querySelectorAll("main article.qitem");
    if (items.length) {
      items.forEach(function (a) { a.tabIndex = -1; });
      return { kind: "items", items: Array.prototype.slice.call(items) };
    }
    var trs = document.querySelectorAll("main table[data-nav='rows'] tbody tr");
    return { kind: "table", items: Array.prototype.slice.call(trs) };
  }
  function searchField() {
    return document.querySelector("main input[type='search']") ||
      document.querySelector("main form.filters input[type='text']");
  }
  function typing(el) {
    if (!el || el === document.body) { return false; }
    var tag = el.tagName;
    return tag === "INPUT" || tag === "TEXTAREA" || tag === "SELECT" || el.isContentEditable;
  }
  // The element a row is focused by: its summary, the review item itself,
  // or the table row's first link.
  function handle(row, kind) {
    if (kind === "details") { return row.querySelector("summary"); }
    return kind === "items" ? row : row.querySelector("a[href]");
  }
  // The link o opens: a review item's turn, a table row's first link.
  function link(row, kind) {
    return kind === "items" ? row.querySelector("header a[href]") : row.querySelector("a[href]");
  }
  var rows = rowItems();
  var current = -1;
  function rowOf(el) {
    var sel = { details: "details.row", items: "article.qitem", table: "tr" }[rows.kind];
    return el && el.closest ? el.closest(sel) : null;
  }
  function setCurrent(i) {
    if (!rows.items.length) { return; }
    i = Math.max(0, Math.min(rows.items.length - 1, i));
    if (current >= 0 && rows.items[current]) { rows.items[current].classList.remove("kbd-current"); }
    current = i;
    var row = rows.items[i];
    row.classList.add("kbd-current");
    var h = handle(row, rows.kind);
    if (h) { h.focus({ preventScroll: true }); }
    row.scrollIntoView({ block: "nearest" });
    root.dataset.kbdRow = row.id || String(i);
  }
  // A click or a focus inside a row makes it the current one.
  document.addEventListener("focusin", function (e) {
    var i = rows.items.indexOf(rowOf(e.target));
    if (i >= 0 && i !== current) {
      if (current >= 0) { rows.items[current].classList.remove("kbd-current"); }
      current = i;
      rows.items[i].classList.add("kbd-current");
      root.dataset.kbdRow = rows.items[i].id || String(i);
    }
  });
  document.addEventListener("keydown", function (e) {
    if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey) { return; }
    if (typing(e.target)) {
      if (e.key === "Escape" && e.target.blur) { e.target.blur(); }
      return;
    }
    var row = current >= 0 ? rows.items[current] : null;
    switch (e.key) {
    case "ArrowDown": case "ArrowUp":
      // The arrows move between rows only from a row; elsewhere they
      // scroll the page as usual.
      if (rows.items.indexOf(rowOf(e.target)) < 0) { return; }
      setCurrent(e.key === "ArrowDown" ? current + 1 : current - 1);
      break;
    case "j":
      if (!rows.items.length) { return; }
      setCurrent(current + 1);
      break;
    case "k":
      if (!rows.items.length) { return; }
      setCurrent(current < 0 ? 0 : current - 1);
      break;
    case "o": case "Enter":
      if (!row) { return; }
      // Enter on a focused summary, link or button does its own thing;
      // it opens only from the page itself or a focused review item.
      if (e.key === "Enter" && e.target !== document.body && !(rows.kind === "items" && e.target === row)) { return; }
      if (rows.kind === "details") {
        row.open = !row.open;
      } else {
        var a = link(row, rows.kind);
        if (!a) { return; }
        loading();
        a.click();
      }
      break;
    case "Escape":
      if (!row || rows.kind !== "details" || !row.open) { return; }
      row.open = false;
      break;
    case "/":
      var s = searchField();
      if (!s) { return; }
      s.focus();
      if (s.select) { s.select(); }
      break;
    default:
      return;
    }
    e.preventDefault();
  });
  // The hint, only where the keys do something.
  if (rows.items.length) {
    var parts = ["j/k 이동", "o 열기"];
    if (rows.kind === "details") { parts.push("Esc 닫기"); }
    if (searchField()) { parts.push("/ 검색"); }
    var hint = document.createElement("p");
    hint.className = "kbd-hint";
    hint.textContent = "단축키: " + parts.join(" · ");
    var first = rows.items[0];
    var anchor = rows.kind === "details" ? document.querySelector("main .summary-bar") : first.closest("table");
    if (!anchor || !anchor.parentNode) { anchor = first.closest("table") || first; }
    anchor.parentNode.insertBefore(hint, anchor);
  }

  // ---- upload progress ----
  function mb(n) { return (n / 1048576).toFixed(1); }
  document.querySelectorAll("form[method='post'][enctype='multipart/form-data']").forEach(function (form) {
    if (!window.FormData || !window.XMLHttpRequest) { return; }
    var box = document.createElement("div");
    box.className = "upload-progress";
    box.hidden = true;
    box.setAttribute("role", "status");
    var bar = document.createElement("progress");
    bar.max = 100;
    var label = document.createElement("span");
    box.appendChild(bar);
    box.appendChild(label);
    form.appendChild(box);
    form.addEventListener("submit", function (e) {
      if (e.defaultPrevented) { return; }
      e.preventDefault();
      var data = e.submitter && e.submitter.name ? new FormData(form, e.submitter) : new FormData(form);
      var buttons = form.querySelectorAll("button, input[type='submit']");
      buttons.forEach(function (b) { b.disabled = true; });
      box.hidden = false;
      bar.removeAttribute("value");
      label.textContent = "올리는 중…";
      form.dataset.upload = "sending";
      var xhr = new XMLHttpRequest();
      xhr.open("POST", form.action);
      xhr.responseType = "text";
      xhr.upload.addEventListener("progress", function (p) {
        if (!p.lengthComputable) { return; }
        var pct = Math.floor(100 * p.loaded / p.total);
        bar.value = pct;
        label.textContent = "올리는 중… " + pct + "% (" + mb(p.loaded) + " / " + mb(p.total) + " MB)";
      });
      xhr.upload.addEventListener("load", function () {
        bar.removeAttribute("value");
        label.textContent = "다 올렸습니다 · 가져와서 판정하는 중…";
        form.dataset.upload = "processing";
      });
      xhr.addEventListener("load", function () {
        // The server answered with a page: a redirect to the new run
        // (followed already) or the form again with what went wrong. Show
        // it as the browser would have after a plain submit.
        form.dataset.upload = "done";
        var url = xhr.responseURL || form.action;
        document.open();
        document.write(xhr.responseText);
        document.close();
        if (url !== location.href) { history.pushState(null, "", url); }
      });
      xhr.addEventListener("error", function () {
        form.dataset.upload = "failed";
        bar.value = 0;
        label.textContent = "올리지 못했습니다: 서버와 연결이 끊겼습니다. 다시 보내 주세요.";
        buttons.forEach(function (b) { b.disabled = false; });
      });
      xhr.send(data);
    });
  });

  root.dataset.ready = "1";
})();
