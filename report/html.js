// Sorting and filtering of the lines table: the page reads the same without it.
(function () {
  var table = document.getElementById("lines-table");
  var filter = document.getElementById("filter");
  if (!table || !filter) { return; }
  var body = table.tBodies[0];
  filter.hidden = false;
  filter.addEventListener("click", function (e) {
    var b = e.target.closest("button");
    if (!b) { return; }
    var want = b.getAttribute("data-v");
    filter.querySelectorAll("button").forEach(function (x) { x.setAttribute("aria-pressed", String(x === b)); });
    Array.prototype.forEach.call(body.rows, function (r) {
      r.hidden = want !== "all" && r.getAttribute("data-verdict") !== want;
    });
  });
  table.querySelectorAll("th[data-sort]").forEach(function (th) {
    var label = th.querySelector(".thlabel") || th;
    var b = document.createElement("button");
    b.type = "button";
    while (label.firstChild) { b.appendChild(label.firstChild); }
    label.appendChild(b);
    b.addEventListener("click", function () {
      var col = th.cellIndex, num = th.getAttribute("data-sort") === "num";
      var dir = th.getAttribute("aria-sort") === "ascending" ? -1 : 1;
      table.querySelectorAll("th[aria-sort]").forEach(function (x) { x.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", dir === 1 ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, c) {
        var x = a.cells[col].getAttribute("data-key") || "", y = c.cells[col].getAttribute("data-key") || "";
        var d = num ? parseFloat(x) - parseFloat(y) : x.localeCompare(y);
        return dir * d;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
})();
