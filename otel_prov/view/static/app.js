// Clicking a node of the why-graph focuses it: the node and the edges that touch it are
// drawn strong and everything else faded.  Without this script, the link to the node's
// own anchor still outlines it (CSS :target).
"use strict";
document.addEventListener("click", function (event) {
  var target = event.target;
  var node = target instanceof Element ? target.closest("svg.why-graph .node") : null;
  var svg = target instanceof Element ? target.closest("svg.why-graph") : null;
  if (!svg) {
    return;
  }
  svg.querySelectorAll(".focus, .dim").forEach(function (element) {
    element.classList.remove("focus", "dim");
  });
  if (!node) {
    return;
  }
  event.preventDefault();
  var near = new Set([node.id]);
  svg.querySelectorAll(".edge").forEach(function (edge) {
    var touches = edge.dataset.from === node.id || edge.dataset.to === node.id;
    edge.classList.add(touches ? "focus" : "dim");
    if (touches) {
      near.add(edge.dataset.from);
      near.add(edge.dataset.to);
    }
  });
  svg.querySelectorAll(".node").forEach(function (other) {
    if (!near.has(other.id)) {
      other.classList.add("dim");
    }
  });
  node.classList.add("focus");
  history.replaceState(null, "", "#" + node.id);
});

// Picking a recipe of the SPARQL page's list puts it in the query box (the server keeps
// them in one module, with docs/sparql.md): it does not run it.
document.addEventListener("change", function (event) {
  var select = event.target;
  if (!(select instanceof HTMLSelectElement) || select.id !== "recipes") {
    return;
  }
  var box = select.form ? select.form.elements.namedItem("query") : null;
  if (box instanceof HTMLTextAreaElement) {
    box.value = select.value;
    box.focus();
  }
});
