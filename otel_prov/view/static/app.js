// The why-graph: laid out by dagre (vendored, loaded before this script), drawn as SVG.
//
// Each figure (.why-figure) carries what to draw in data-graph, decided on the server
// (otel_prov/view/_why_graph.py): nodes with their role, excerpt and step box, edges
// from subject to object, and "order" pairs that only keep time running down the page.
// Dagre lays each edge out from its object to its subject (the object is earlier), and
// the edge is drawn back, its arrowhead on the object, its relation written on it.
// Edges marked "far" (the answer's, to the steps before the last) are not laid out:
// each runs along a trunk at the right of the graph and turns in under its object.
// Evidence edges (edge.evidence: "supports" or "contradicts") are drawn apart, green and
// solid or red and dashed, faint when the evidence came after the claim; a legend says so.
// Every text goes in with textContent; no markup from the data is ever parsed.
// A click on a node focuses it (the node and its edges strong, the rest faded) and shows
// its full text below; drag pans, Ctrl+wheel or the buttons zoom, the wheel scrolls.
"use strict";
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  var NODE_WIDTH = 236;
  var LINE = 14;
  var LABEL_HEIGHT = 12;
  var READING_SCALE = 0.85;

  function make(name, attributes, parent, text) {
    var element = document.createElementNS(SVG, name);
    Object.keys(attributes).forEach(function (key) {
      element.setAttribute(key, attributes[key]);
    });
    if (text !== undefined) {
      element.textContent = text;
    }
    if (parent) {
      parent.appendChild(element);
    }
    return element;
  }

  function html(name, className, parent, text) {
    var element = document.createElement(name);
    if (className) {
      element.className = className;
    }
    if (text !== undefined) {
      element.textContent = text;
    }
    parent.appendChild(element);
    return element;
  }

  function layout(data) {
    var graph = new dagre.graphlib.Graph({ compound: true, multigraph: true });
    graph.setGraph({
      rankdir: "TB", nodesep: 22, ranksep: 26, edgesep: 8, marginx: 14, marginy: 14,
      ranker: "tight-tree",
    });
    data.steps.forEach(function (step) {
      graph.setNode("box-" + step.id, {});
      if (step.step) {
        graph.setParent("box-" + step.id, "box-" + step.step);
      }
    });
    data.nodes.forEach(function (node) {
      graph.setNode(node.id, { width: NODE_WIDTH, height: 24 + LINE * node.lines.length });
      if (node.step) {
        graph.setParent(node.id, "box-" + node.step);
      }
    });
    data.edges.forEach(function (edge, index) {
      if (edge.from === edge.to || edge.far) {
        return;
      }
      graph.setEdge(edge.to, edge.from, {
        label: edge.label, width: 6 * edge.label.length + 8, height: LABEL_HEIGHT,
        labelpos: "c", weight: 1, minlen: 1,
      }, "e" + index);
    });
    data.order.forEach(function (pair, index) {
      graph.setEdge(pair[0], pair[1], { weight: 0, minlen: 1, width: 0, height: 0 }, "o" + index);
    });
    dagre.layout(graph);
    return graph;
  }

  // A far edge: from its subject's right side out to the trunk, along it to just below
  // its object's row, across under that row, and up into the object.
  function farRoute(graph, edge, trunk, boxes) {
    var subject = graph.node(edge.from);
    var object = graph.node(edge.to);
    var top = object.y - object.height / 2;
    var bottom = object.y + object.height / 2;
    var below = bottom;
    boxes.forEach(function (box) {
      if (box.top < bottom && box.bottom > top) {
        below = Math.max(below, box.bottom);
      }
    });
    var gap = below + 9;
    var end = { x: object.x + object.width / 2 - 14, y: bottom };
    var start = { x: subject.x + subject.width / 2, y: subject.y };
    return {
      d: "M" + start.x + "," + start.y + " H" + trunk + " V" + gap + " H" + end.x + " V" + end.y,
      label: { x: end.x + 6, y: gap - 3 },
      anchor: "start",
    };
  }

  function curve(points) {
    var path = "M" + points[0].x + "," + points[0].y;
    for (var i = 1; i < points.length - 1; i += 1) {
      var mid = { x: (points[i].x + points[i + 1].x) / 2, y: (points[i].y + points[i + 1].y) / 2 };
      path += " Q" + points[i].x + "," + points[i].y + " " + mid.x + "," + mid.y;
    }
    var last = points[points.length - 1];
    return path + " L" + last.x + "," + last.y;
  }

  function edgeClass(base, edge) {
    var classes = [base];
    if (edge.far) {
      classes.push("far");
    }
    if (edge.evidence) {
      classes.push(edge.evidence);
      if (edge.considered === false) {
        classes.push("late");
      }
    }
    return classes.join(" ");
  }

  // What the evidence edges' colours and dashes mean, above the graph, when it has any.
  function legend(data, figure) {
    var kinds = {};
    data.edges.forEach(function (edge) {
      if (edge.evidence) {
        kinds[edge.evidence] = true;
      }
    });
    if (!kinds.supports && !kinds.contradicts) {
      return;
    }
    var box = html("div", "why-legend", figure);
    [["supports", "supported by: evidence for it"],
     ["contradicts", "contradicted by: evidence against it"],
     ["late", "faint: it came after the claim (not considered)"]].forEach(function (entry) {
      var item = html("span", "why-legend-item", box);
      var sample = make("svg", { width: "28", height: "10", "aria-hidden": "true" }, item);
      var line = entry[0] === "late" ? "edge contradicts late" : "edge " + entry[0];
      make("line", { class: line, x1: "1", y1: "5", x2: "27", y2: "5" }, sample);
      item.appendChild(document.createTextNode(" " + entry[1]));
    });
  }

  function draw(figure, number) {
    var data = JSON.parse(figure.dataset.graph);
    var began = performance.now();
    var graph = layout(data);
    var took = performance.now() - began;
    var size = graph.graph();
    var arrow = "why-arrow-" + number;
    var byId = {};
    data.nodes.forEach(function (node) {
      byId[node.id] = node;
    });

    var tools = html("div", "why-tools", figure);
    legend(data, figure);
    var svg = make("svg", {
      class: "why-graph", role: "img", "aria-label": "why-graph", "data-layout-ms": Math.round(took),
    }, figure);
    var details = html("div", "why-details", figure);
    details.hidden = true;

    var defs = make("defs", {}, svg);
    var marker = make("marker", {
      id: arrow, viewBox: "0 0 10 10", refX: "9", refY: "5",
      markerWidth: "10", markerHeight: "10", markerUnits: "userSpaceOnUse", orient: "auto",
    }, defs);
    make("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, marker);

    var steps = make("g", { class: "steps" }, svg);
    data.steps.forEach(function (step) {
      var box = graph.node("box-" + step.id);
      var group = make("g", { class: "step", "data-iri": step.iri }, steps);
      make("rect", {
        x: box.x - box.width / 2, y: box.y - box.height / 2,
        width: box.width, height: box.height, rx: 6,
      }, group);
    });

    var edges = make("g", { class: "edges" }, svg);
    var labels = make("g", { class: "edge-labels" }, svg);
    var boxes = data.nodes.map(function (node) {
      var place = graph.node(node.id);
      return { top: place.y - place.height / 2, bottom: place.y + place.height / 2 };
    });
    var far = data.edges.some(function (edge) { return edge.far; });
    var trunk = size.width + 10;
    if (far) {
      size.width += 40;
    }
    data.edges.forEach(function (edge, index) {
      var route;
      if (edge.far) {
        route = farRoute(graph, edge, trunk, boxes);
      } else {
        var laid = edge.from === edge.to ? null : graph.edge(edge.to, edge.from, "e" + index);
        if (!laid) {
          return;
        }
        route = { d: curve(laid.points.slice().reverse()), label: { x: laid.x, y: laid.y + 4 }, anchor: "middle" };
      }
      make("path", {
        class: edgeClass("edge", edge), d: route.d, "marker-end": "url(#" + arrow + ")",
        "data-from": edge.from, "data-to": edge.to,
      }, edges);
      make("text", {
        class: edgeClass("edge-label", edge), x: route.label.x, y: route.label.y,
        "text-anchor": route.anchor, "data-from": edge.from, "data-to": edge.to,
      }, labels, edge.label);
    });

    var nodes = make("g", { class: "nodes" }, svg);
    data.nodes.forEach(function (node) {
      var place = graph.node(node.id);
      var x = place.x - place.width / 2;
      var y = place.y - place.height / 2;
      var classes = ["node", node.activity ? "activity" : "entity"];
      if (node.failed) {
        classes.push("failed");
      }
      if (node.root) {
        classes.push("root");
      }
      var group = make("g", {
        class: classes.join(" "), "data-id": node.id, "data-iri": node.iri, tabindex: "0",
      }, nodes);
      make("title", {}, group, node.role + ": " + node.text);
      make("rect", { x: x, y: y, width: place.width, height: place.height, rx: node.activity ? 3 : 12 }, group);
      make("text", { class: "role", x: x + 8, y: y + 14 }, group, node.role);
      node.lines.forEach(function (line, index) {
        var failedLine = node.failed && index === node.lines.length - 1;
        make("text", {
          class: failedLine ? "line error" : "line", x: x + 8, y: y + 29 + LINE * index,
        }, group, line);
      });
    });

    var view = { width: size.width, height: size.height };
    function shown() {
      var box = svg.viewBox.baseVal;
      return { x: box.x, y: box.y, width: box.width, height: box.height };
    }
    function show(box) {
      svg.setAttribute("viewBox", [box.x, box.y, box.width, box.height].join(" "));
    }
    // The first view: the whole width if it fits at reading size, else the top of the
    // graph at reading size, centred on where it starts (the first node: the question).
    var first = data.nodes.filter(function (node) { return node.role === "Question"; })[0];
    var centre = first ? graph.node(first.id).x : view.width / 2;
    function fitted(scale) {
      var width = svg.clientWidth / scale;
      var height = svg.clientHeight / scale;
      var x = width >= view.width ? (view.width - width) / 2
        : Math.max(0, Math.min(view.width - width, centre - width / 2));
      return { x: x, y: 0, width: width, height: height };
    }
    var wide = figure.clientWidth || 800;
    var start = Math.max(READING_SCALE, Math.min(1, wide / view.width));
    var tall = Math.min(view.height * start, Math.max(320, window.innerHeight * 0.8));
    svg.setAttribute("width", String(wide));
    svg.setAttribute("height", String(Math.ceil(tall)));
    show(fitted(start));

    function zoom(factor, centre) {
      var box = shown();
      var at = centre || { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      show({
        x: at.x - (at.x - box.x) / factor, y: at.y - (at.y - box.y) / factor,
        width: box.width / factor, height: box.height / factor,
      });
    }
    function whole() {
      var scale = Math.min(svg.clientWidth / view.width, svg.clientHeight / view.height);
      var fit = fitted(scale);
      fit.y = (view.height - fit.height) / 2;
      show(fit);
    }
    [["why-zoom-in", "+", "zoom in", function () { zoom(1.25); }],
     ["why-zoom-out", "\u2212", "zoom out", function () { zoom(0.8); }],
     ["why-fit", "whole graph", "show the whole graph", whole],
     ["why-start", "from the question", "back to the start, at reading size", function () { show(fitted(start)); }],
    ].forEach(function (tool) {
      var button = html("button", tool[0], tools, tool[1]);
      button.type = "button";
      button.title = tool[2];
      button.addEventListener("click", tool[3]);
    });

    function toGraph(event) {
      var box = shown();
      var rect = svg.getBoundingClientRect();
      return {
        x: box.x + (event.clientX - rect.left) * box.width / rect.width,
        y: box.y + (event.clientY - rect.top) * box.height / rect.height,
      };
    }
    svg.addEventListener("wheel", function (event) {
      var box = shown();
      if (event.ctrlKey || event.metaKey) {
        event.preventDefault();
        zoom(event.deltaY < 0 ? 1.15 : 1 / 1.15, toGraph(event));
        return;
      }
      var per = box.width / svg.clientWidth;
      var down = Math.max(-box.y - 40, Math.min(view.height + 40 - box.y - box.height, event.deltaY * per));
      var across = Math.max(-box.x - 40, Math.min(view.width + 40 - box.x - box.width, event.deltaX * per));
      if (Math.abs(down) < 1 && Math.abs(across) < 1) {
        return; // at the edge: the page scrolls
      }
      event.preventDefault();
      show({ x: box.x + across, y: box.y + down, width: box.width, height: box.height });
    }, { passive: false });

    var drag = null;
    svg.addEventListener("pointerdown", function (event) {
      drag = { x: event.clientX, y: event.clientY, box: shown(), moved: false };
    });
    svg.addEventListener("pointermove", function (event) {
      if (!drag) {
        return;
      }
      var dx = event.clientX - drag.x;
      var dy = event.clientY - drag.y;
      if (!drag.moved && Math.abs(dx) + Math.abs(dy) < 4) {
        return;
      }
      if (!drag.moved) {
        svg.setPointerCapture(event.pointerId);
      }
      drag.moved = true;
      var per = drag.box.width / svg.clientWidth;
      show({ x: drag.box.x - dx * per, y: drag.box.y - dy * per, width: drag.box.width, height: drag.box.height });
    });
    svg.addEventListener("pointerup", function () {
      setTimeout(function () { drag = null; }, 0);
    });

    function select(group) {
      svg.querySelectorAll(".focus, .dim").forEach(function (element) {
        element.classList.remove("focus", "dim");
      });
      if (!group) {
        details.hidden = true;
        return;
      }
      var id = group.dataset.id;
      var near = {};
      near[id] = true;
      svg.querySelectorAll(".edge, .edge-label").forEach(function (edge) {
        var touches = edge.dataset.from === id || edge.dataset.to === id;
        edge.classList.add(touches ? "focus" : "dim");
        if (touches) {
          near[edge.dataset.from] = true;
          near[edge.dataset.to] = true;
        }
      });
      svg.querySelectorAll(".node").forEach(function (other) {
        if (!near[other.dataset.id]) {
          other.classList.add("dim");
        }
      });
      group.classList.add("focus");
      var node = byId[id];
      details.textContent = "";
      var heading = html("h3", "", details, node.role + (node.status ? " \u00b7 " + node.status : ""));
      if (node.failed) {
        html("span", "badge", heading, " FAILED");
      }
      html("div", "value", details, node.text);
      if (node.error) {
        html("div", "value error", details, node.error);
      }
      html("code", "", details, node.iri);
      var list = html("ul", "", details);
      data.edges.forEach(function (edge) {
        if (edge.from === id || edge.to === id) {
          var other = byId[edge.from === id ? edge.to : edge.from];
          var text = edge.from === id
            ? edge.label + " \u2192 " + other.role + ": " + other.text
            : other.role + ": " + other.text + " \u2192 " + edge.label + " this";
          html("li", "", list, text);
        }
      });
      details.hidden = false;
    }
    svg.addEventListener("click", function (event) {
      if (drag && drag.moved) {
        return;
      }
      var target = event.target instanceof Element ? event.target.closest(".node") : null;
      select(target);
    });
    svg.addEventListener("keydown", function (event) {
      var target = event.target instanceof Element ? event.target.closest(".node") : null;
      if (target && (event.key === "Enter" || event.key === " ")) {
        event.preventDefault();
        select(target);
      }
    });
  }

  function drawAll() {
    document.querySelectorAll(".why-figure").forEach(function (figure, number) {
      figure.querySelectorAll("noscript").forEach(function (element) {
        element.remove();
      });
      draw(figure, number);
    });
  }
  // A run still open (#runs[data-live], the state URL): its state is polled every second;
  // when it changes (a step more, or the run ended), the page is read again and its runs
  // put in place of these, drawn again.  Polling stops once no run is running.  The new
  // markup is the server's own page for the same address, parsed inert by DOMParser.
  var LIVE_POLL_MS = 1000;
  function follow(container) {
    var url = container.getAttribute("data-live");
    var last = null;
    function poll() {
      fetch(url, { credentials: "same-origin", cache: "no-store" })
        .then(function (answer) { return answer.ok ? answer.text() : null; })
        .then(function (text) {
          if (text === null) {
            setTimeout(poll, LIVE_POLL_MS);
            return;
          }
          var state = JSON.parse(text);
          if (last !== null && text !== last) {
            refresh(container, state.running ? poll : null);
          } else if (state.running) {
            setTimeout(poll, LIVE_POLL_MS);
          }
          last = text;
        })
        .catch(function () { setTimeout(poll, LIVE_POLL_MS); });
    }
    poll();
  }
  function refresh(container, next) {
    fetch(location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (answer) { return answer.text(); })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("runs");
        if (fresh) {
          container.replaceChildren.apply(container, Array.from(fresh.childNodes));
          drawAll();
        }
        if (next) {
          setTimeout(next, LIVE_POLL_MS);
        } else {
          container.removeAttribute("data-live");
        }
      })
      .catch(function () { if (next) { setTimeout(next, LIVE_POLL_MS); } });
  }
  // After the first paint: a long run takes dagre seconds, and the page is read meanwhile.
  function soon() {
    requestAnimationFrame(function () {
      setTimeout(drawAll, 0);
    });
    var live = document.querySelector("#runs[data-live]");
    if (live) {
      follow(live);
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", soon);
  } else {
    soon();
  }
})();

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
