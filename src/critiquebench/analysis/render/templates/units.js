// The units table of report.html: filters, and a row's story loaded on click from
// report_units/<file>.js beside the page (a script, which file:// pages may load),
// which holds the stories of groups PER_FILE * file ... PER_FILE * file + PER_FILE - 1.
(function () {
  "use strict";
  var FOLDER = "__FOLDER__";
  var PER_FILE = __PER_FILE__;
  var units = JSON.parse(document.getElementById("units-data").textContent);
  var body = document.getElementById("units-body");
  var box = document.getElementById("story");
  var count = document.getElementById("units-count");
  var filters = {
    arm: document.getElementById("units-arm"),
    halt: document.getElementById("units-halt"),
    pass: document.getElementById("units-pass"),
    flipped: document.getElementById("units-flipped"),
  };
  var stories = {};
  var requested = {};
  var wanted = null;

  function yes(value) { return value ? "yes" : "no"; }

  function keep(u) {
    if (filters.arm.value && u[1] !== filters.arm.value) return false;
    if (filters.halt.value && u[3] !== filters.halt.value) return false;
    if (filters.pass.value && yes(u[4]) !== filters.pass.value) return false;
    if (filters.flipped.checked && !u[10]) return false;
    return true;
  }

  function row(u) {
    var tr = document.createElement("tr");
    var cells = [u[0], u[1], u[2], u[3], yes(u[4]), yes(u[5]),
                 u[6] === null ? "" : u[6], u[7], u[8].toLocaleString("en")];
    cells.forEach(function (value) {
      var td = document.createElement("td");
      td.textContent = String(value);
      tr.appendChild(td);
    });
    tr.tabIndex = 0;
    tr.className = "unit" + (u[10] ? " flipped" : "");
    tr.dataset.group = String(u[9]);
    tr.dataset.arm = u[1];
    tr.addEventListener("click", function () { open(u[9], u[1]); });
    tr.addEventListener("keydown", function (e) { if (e.key === "Enter") open(u[9], u[1]); });
    return tr;
  }

  function draw() {
    var shown = units.filter(keep);
    body.replaceChildren.apply(body, shown.map(row));
    count.textContent = shown.length + " of " + units.length + " unit(s) shown";
  }

  function show(group, arm) {
    box.innerHTML = stories[group];
    box.dataset.group = String(group);
    box.querySelectorAll("[data-arm]").forEach(function (cell) {
      cell.classList.toggle("picked", cell.dataset.arm === arm);
    });
    box.scrollIntoView();
  }

  function open(group, arm) {
    wanted = [group, arm];
    if (stories[group] !== undefined) { show(group, arm); return; }
    box.textContent = "loading the story ...";
    var file = Math.floor(group / PER_FILE);
    if (requested[file]) return;
    requested[file] = true;
    var script = document.createElement("script");
    script.src = FOLDER + "/" + file + ".js";
    script.onerror = function () {
      requested[file] = false;
      box.textContent = "Could not load " + script.src + ": the folder " + FOLDER +
        "/ must stay beside report.html (critiquebench report RUN writes it again).";
    };
    document.head.appendChild(script);
  }

  window.critiquebenchStory = function (group, html) {
    stories[group] = html;
    if (wanted !== null && wanted[0] === group) show(group, wanted[1]);
  };

  Object.keys(filters).forEach(function (name) {
    filters[name].addEventListener("change", draw);
  });
  draw();
})();
