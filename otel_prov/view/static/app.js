// The why-graph: laid out by dagre (vendored, loaded before this script), drawn as SVG.
//
// Each figure (.why-figure) carries what to draw in data-graph, decided on the server
// (otel_prov/view/_why_graph.py): nodes with their role, excerpt and group, groups
// (steps, turns, folds of long runs) open or shut, edges from subject to object, and
// "order" pairs that only keep time running down the page.  What is drawn is the graph
// as its groups are now: a node in a shut group is drawn as the group's head (a step's
// box saying what it did), and its edges go to that head, merged when several meet;
// a click on a head opens its group, or shuts it again.  The reader's choices stay
// while the page reads itself again (a run still going).
// Dagre lays each edge out from its object to its subject (the object is earlier), and
// the edge is drawn back, its arrowhead on the object, its relation written on it in
// words; evidence that came after its claim is laid out the other way.  Edges marked
// "far" (the answer's, to nodes before the last step) are not laid out: each runs along
// a trunk at the right of the graph and turns in under its object.
// Evidence edges (edge.evidence: "supports" or "contradicts") are drawn apart, green and
// solid or red and dashed, faint when the evidence came after the claim; a legend says so.
// Every text goes in with textContent; no markup from the data is ever parsed.
// A click on a node focuses it (the node and its edges strong, the rest faded) and shows
// its full text, its class and each relation's PROV term below; drag pans, Ctrl+wheel or
// the buttons zoom, the wheel scrolls.
"use strict";
(function () {
  var SVG = "http://www.w3.org/2000/svg";
  var NODE_WIDTH = 270;
  var LINE = 15;
  var LABEL_HEIGHT = 13;
  var READING_SCALE = 0.85;
  var chosen = {}; // figure number -> group key -> open: what the reader opened or shut

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

  // What is drawn with the groups of `open` open: each node drawn (itself, or the head
  // of the outermost shut group it is in; a pinned node stays in a shut step), the box
  // each sits in, the edges between what is drawn (merged), and the order pairs.
  function visible(data, open) {
    var groups = {};
    data.groups.forEach(function (group) { groups[group.id] = group; });
    function chain(id) {
      var out = [];
      while (id && groups[id]) {
        out.push(groups[id]);
        id = groups[id].parent;
      }
      return out;
    }
    function firstBox(list) {
      for (var i = 0; i < list.length; i += 1) {
        if (list[i].kind !== "fold") {
          return list[i].id;
        }
      }
      return null;
    }
    var rep = {};
    var box = {};
    var holding = {};
    data.nodes.forEach(function (node) {
      var list = chain(node.group);
      var outer = null;
      for (var i = list.length - 1; i >= 0 && !outer; i -= 1) {
        if (!open[list[i].id]) {
          outer = list[i];
        }
      }
      if (!outer) {
        rep[node.id] = node.fold ? null : node.id;
        box[node.id] = firstBox(list);
        return;
      }
      var steps = list.every(function (group) { return open[group.id] || group.kind === "step"; });
      if (node.pinned && steps && outer.head !== node.id) {
        rep[node.id] = node.id;
        box[node.id] = outer.id;
        holding[outer.id] = true;
        return;
      }
      rep[node.id] = outer.head;
    });
    var byId = {};
    data.nodes.forEach(function (node) { byId[node.id] = node; });
    var shown = [];
    var seen = {};
    data.nodes.forEach(function (node) {
      var id = rep[node.id];
      if (!id || seen[id]) {
        return;
      }
      seen[id] = true;
      var head = byId[id];
      var group = head.group && groups[head.group].head === id ? groups[head.group] : null;
      var shut = group && !open[group.id] ? group : null;
      var where = box[id];
      if (shut) {
        where = holding[shut.id] ? shut.id : firstBox(chain(shut.parent));
      }
      var turn = chain(where).filter(function (each) { return each.kind === "turn"; })[0];
      shown.push({
        id: id, node: head, group: group, shut: !!shut, box: where, turn: turn ? turn.id : null,
        role: shut ? shut.role : head.role,
        lines: shut ? shut.lines : head.lines,
        red: shut ? shut.red : head.red,
      });
    });
    var boxes = {};
    shown.forEach(function (item) {
      var id = item.box;
      while (id && !boxes[id]) {
        var parent = firstBox(chain(groups[id].parent));
        boxes[id] = { id: id, parent: parent, group: groups[id] };
        id = parent;
      }
    });
    var merged = {};
    var edges = [];
    data.edges.forEach(function (edge) {
      var a = rep[edge.from];
      var b = rep[edge.to];
      if (edge.implied || !a || !b || a === b) {
        return;
      }
      var key = a + " " + b + " " + (edge.evidence || "");
      var into = merged[key];
      if (!into) {
        into = merged[key] = {
          from: a, to: b, labels: [], evidence: edge.evidence, late: true, far: true, side: true,
          backward: true, parts: [],
        };
        edges.push(into);
      }
      if (into.labels.indexOf(edge.label) < 0) {
        into.labels.push(edge.label);
      }
      into.late = into.late && edge.considered === false;
      into.far = into.far && edge.far;
      into.side = into.side && edge.side;
      into.backward = into.backward && edge.backward;
      into.parts.push(edge);
    });
    edges.forEach(function (edge) { edge.label = edge.labels.join(", "); });
    // An order pair beside an edge laid out between the same two nodes would be laid out
    // as a second way between them, pushing one of the two aside.
    var order = [];
    var paired = {};
    edges.forEach(function (edge) {
      if (!edge.far && !edge.side) {
        paired[edge.from + " " + edge.to] = paired[edge.to + " " + edge.from] = true;
      }
    });
    data.order.forEach(function (pair) {
      var a = rep[pair[0]];
      var b = rep[pair[1]];
      if (a && b && a !== b && !paired[a + " " + b]) {
        paired[a + " " + b] = true;
        order.push([a, b]);
      }
    });
    return {
      nodes: shown, edges: edges, order: order,
      boxes: Object.keys(boxes).map(function (id) { return boxes[id]; }),
    };
  }

  function layout(view) {
    var graph = new dagre.graphlib.Graph({ compound: true, multigraph: true });
    var side = view.edges.some(function (edge) { return edge.side; });
    graph.setGraph({
      rankdir: "TB", nodesep: 24, ranksep: 30, edgesep: 10, marginx: side ? 76 : 16,
      marginy: 22, ranker: "tight-tree",
    });
    // Steps are laid out as boxes (dagre's compound nodes) that keep their parts together;
    // a turn's box is drawn around its nodes afterwards: laid out as a box too, it pulled
    // the turns before it off the line of this run.
    function laidBox(id) {
      while (id && boxes[id].group.kind === "turn") {
        id = boxes[id].parent;
      }
      return id;
    }
    var boxes = {};
    view.boxes.forEach(function (box) { boxes[box.id] = box; });
    view.boxes.forEach(function (box) {
      if (box.group.kind !== "turn") {
        graph.setNode("box-" + box.id, {});
      }
    });
    view.boxes.forEach(function (box) {
      var parent = laidBox(box.parent);
      if (box.group.kind !== "turn" && parent) {
        graph.setParent("box-" + box.id, "box-" + parent);
      }
    });
    view.nodes.forEach(function (item) {
      graph.setNode(item.id, { width: NODE_WIDTH, height: 26 + LINE * item.lines.length });
      var parent = laidBox(item.box);
      if (parent) {
        graph.setParent(item.id, "box-" + parent);
      }
    });
    view.edges.forEach(function (edge, index) {
      if (edge.far || edge.side) {
        return;
      }
      var ends = edge.backward ? [edge.from, edge.to] : [edge.to, edge.from];
      graph.setEdge(ends[0], ends[1], {
        label: edge.label, width: 6.5 * edge.label.length + 8, height: LABEL_HEIGHT,
        labelpos: "c", weight: 2, minlen: 1,
      }, "e" + index);
    });
    var turns = {};
    view.nodes.forEach(function (item) { turns[item.id] = item.turn; });
    view.order.forEach(function (pair, index) {
      // Room for the label of a turn's box between it and what comes before.
      var minlen = turns[pair[0]] === turns[pair[1]] ? 1 : 2;
      graph.setEdge(pair[0], pair[1], { weight: 1, minlen: minlen, width: 0, height: 0 }, "o" + index);
    });
    dagre.layout(graph);
    return graph;
  }

  // A far edge: from its subject's right side out to the trunk, along it to just below
  // its object's row, across under that row, and up into the object.
  function farRoute(graph, edge, trunk, rows) {
    var subject = graph.node(edge.from);
    var object = graph.node(edge.to);
    var top = object.y - object.height / 2;
    var bottom = object.y + object.height / 2;
    var below = bottom;
    rows.forEach(function (row) {
      if (row.top < bottom && row.bottom > top) {
        below = Math.max(below, row.bottom);
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

  // A side edge (a turn following the one before): out of its subject's left side to a
  // trunk left of the graph, up it, and into its object's left side.
  function sideRoute(graph, edge, trunk) {
    var subject = graph.node(edge.from);
    var object = graph.node(edge.to);
    var start = { x: subject.x - subject.width / 2, y: subject.y };
    var end = { x: object.x - object.width / 2, y: object.y + object.height / 4 };
    return {
      d: "M" + start.x + "," + start.y + " H" + trunk + " V" + end.y + " H" + end.x,
      label: { x: trunk - 4, y: (start.y + end.y) / 2 },
      anchor: "end",
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
    if (edge.side) {
      classes.push("side");
    }
    if (edge.evidence) {
      classes.push(edge.evidence);
      if (edge.late) {
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

  // A line the server cut to what mostly fits a node, drawn narrower when its letters
  // are wider than most (capitals, a wide font): it never runs out of its node.
  function fit(text, room) {
    if (text.getComputedTextLength() > room) {
      text.setAttribute("textLength", String(room));
      text.setAttribute("lengthAdjust", "spacingAndGlyphs");
    }
  }

  // Where each turn's box goes: around the nodes drawn in it (and the boxes in those).
  var PAD = 14;
  function turnBoxes(graph, view) {
    var inside = {};
    var boxes = {};
    view.boxes.forEach(function (box) { boxes[box.id] = box; });
    function extend(id, place) {
      for (var at = id; at; at = boxes[at].parent) {
        if (boxes[at].group.kind !== "turn") {
          continue;
        }
        var was = inside[at];
        var left = place.x - place.width / 2 - PAD;
        var top = place.y - place.height / 2 - PAD - 8;
        var right = place.x + place.width / 2 + PAD;
        var bottom = place.y + place.height / 2 + PAD;
        inside[at] = was ? {
          left: Math.min(was.left, left), top: Math.min(was.top, top),
          right: Math.max(was.right, right), bottom: Math.max(was.bottom, bottom),
        } : { left: left, top: top, right: right, bottom: bottom };
      }
    }
    view.nodes.forEach(function (item) { extend(item.box, graph.node(item.id)); });
    view.boxes.forEach(function (box) {
      if (box.group.kind !== "turn" && box.parent) {
        extend(box.parent, graph.node("box-" + box.id));
      }
    });
    var out = {};
    Object.keys(inside).forEach(function (id) {
      var edges = inside[id];
      out[id] = {
        x: (edges.left + edges.right) / 2, y: (edges.top + edges.bottom) / 2,
        width: edges.right - edges.left, height: edges.bottom - edges.top,
      };
    });
    return out;
  }

  // The graph as `open` has it, drawn into `svg` (emptied first); what it drew.
  function render(svg, data, open, arrow) {
    var view = visible(data, open);
    var began = performance.now();
    var graph = layout(view);
    svg.setAttribute("data-layout-ms", String(Math.round(performance.now() - began)));
    svg.textContent = "";
    var size = graph.graph();
    var defs = make("defs", {}, svg);
    var marker = make("marker", {
      id: arrow, viewBox: "0 0 10 10", refX: "9", refY: "5",
      markerWidth: "10", markerHeight: "10", markerUnits: "userSpaceOnUse", orient: "auto",
    }, defs);
    make("path", { d: "M0,0 L10,5 L0,10 z", class: "arrowhead" }, marker);

    var boxes = make("g", { class: "steps" }, svg);
    var around = turnBoxes(graph, view);
    view.boxes.forEach(function (box) {
      var place = around[box.id] || graph.node("box-" + box.id);
      var group = box.group;
      var classes = group.kind === "turn" ? "turn" : "step";
      var drawn = make("g", { class: classes, "data-group": group.id, "data-key": group.key }, boxes);
      var head = data.nodes.filter(function (node) { return node.id === group.head; })[0];
      drawn.setAttribute("data-iri", head ? head.iri : "");
      var top = place.y - place.height / 2;
      make("rect", {
        x: place.x - place.width / 2, y: top, width: place.width, height: place.height, rx: 6,
      }, drawn);
      if (group.label) {
        make("text", { class: "box-label", x: place.x - place.width / 2 + 10, y: top + 4 }, drawn, group.label);
      }
    });

    var edges = make("g", { class: "edges" }, svg);
    var labels = make("g", { class: "edge-labels" }, svg);
    var rows = view.nodes.map(function (item) {
      var place = graph.node(item.id);
      return { top: place.y - place.height / 2, bottom: place.y + place.height / 2 };
    });
    var far = view.edges.some(function (edge) { return edge.far; });
    var trunk = size.width + 10;
    if (far) {
      size.width += 40;
    }
    var left = Infinity;
    view.nodes.forEach(function (item) {
      var place = graph.node(item.id);
      left = Math.min(left, place.x - place.width / 2);
    });
    view.edges.forEach(function (edge, index) {
      var route;
      if (edge.far) {
        route = farRoute(graph, edge, trunk, rows);
      } else if (edge.side) {
        route = sideRoute(graph, edge, left - PAD - 12);
      } else {
        var laid = edge.backward
          ? graph.edge(edge.from, edge.to, "e" + index) : graph.edge(edge.to, edge.from, "e" + index);
        if (!laid) {
          return;
        }
        var points = edge.backward ? laid.points.slice() : laid.points.slice().reverse();
        route = { d: curve(points), label: { x: laid.x, y: laid.y + 4 }, anchor: "middle" };
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
    view.nodes.forEach(function (item) {
      var node = item.node;
      var place = graph.node(item.id);
      var x = place.x - place.width / 2;
      var y = place.y - place.height / 2;
      var classes = ["node", node.activity ? "activity" : "entity"];
      if (node.failed || (item.shut && item.red.length)) {
        classes.push("failed");
      }
      if (node.root) {
        classes.push("root");
      }
      if (node.fold) {
        classes.push("fold");
      }
      if (item.group) {
        classes.push(item.shut ? "shut" : "head");
      }
      var group = make("g", {
        class: classes.join(" "), "data-id": item.id, "data-iri": node.iri, tabindex: "0",
        "data-group": item.group ? item.group.id : "",
      }, nodes);
      var hint = item.group ? (item.shut ? " (click to open)" : " (click to fold)") : "";
      make("title", {}, group, item.role + ": " + node.text + hint);
      make("rect", { x: x, y: y, width: place.width, height: place.height, rx: node.activity ? 3 : 12 }, group);
      fit(make("text", { class: "role", x: x + 9, y: y + 15 }, group, item.role + (item.shut ? "  \u25b8" : "")), place.width - 18);
      item.lines.forEach(function (line, index) {
        var text = make("text", {
          class: item.red.indexOf(index) >= 0 ? "line error" : "line", x: x + 9, y: y + 31 + LINE * index,
        }, group, line);
        fit(text, place.width - 18);
      });
    });
    return { graph: graph, view: view, width: size.width, height: size.height };
  }

  function draw(figure, number) {
    var data = JSON.parse(figure.dataset.graph);
    var mine = chosen[number] = chosen[number] || {};
    var open = {};
    function opening(all) {
      data.groups.forEach(function (group) {
        open[group.id] = all === undefined
          ? (group.key in mine ? mine[group.key] : group.open) : all || group.open;
      });
    }
    opening();
    var byId = {};
    data.nodes.forEach(function (node) { byId[node.id] = node; });
    var groups = {};
    data.groups.forEach(function (group) { groups[group.id] = group; });
    var arrow = "why-arrow-" + number;

    var tools = html("div", "why-tools", figure);
    legend(data, figure);
    var svg = make("svg", { class: "why-graph", role: "img", "aria-label": "why-graph" }, figure);
    var details = html("div", "why-details", figure);
    details.hidden = true;
    var drawn = render(svg, data, open, arrow);

    function shown() {
      var box = svg.viewBox.baseVal;
      return { x: box.x, y: box.y, width: box.width, height: box.height };
    }
    function show(box) {
      svg.setAttribute("viewBox", [box.x, box.y, box.width, box.height].join(" "));
    }
    // The first view: the whole width if it fits at reading size, else the top of the
    // graph at reading size, centred on where this run starts (its question).
    function centre() {
      var first = drawn.view.nodes.filter(function (item) { return item.node.type === "Question"; });
      return first.length ? drawn.graph.node(first[first.length - 1].id).x : drawn.width / 2;
    }
    function fitted(scale) {
      var width = svg.clientWidth / scale;
      var height = svg.clientHeight / scale;
      var x = width >= drawn.width ? (drawn.width - width) / 2
        : Math.max(0, Math.min(drawn.width - width, centre() - width / 2));
      return { x: x, y: 0, width: width, height: height };
    }
    var wide = figure.clientWidth || 800;
    var start = 1;
    function sized() {
      start = Math.max(READING_SCALE, Math.min(1, wide / drawn.width));
      var tall = Math.min(drawn.height * start, Math.max(320, window.innerHeight * 0.85));
      svg.setAttribute("width", String(wide));
      svg.setAttribute("height", String(Math.ceil(Math.max(tall, 200))));
    }
    sized();
    show(fitted(start));

    function zoom(factor, at) {
      var box = shown();
      var point = at || { x: box.x + box.width / 2, y: box.y + box.height / 2 };
      show({
        x: point.x - (point.x - box.x) / factor, y: point.y - (point.y - box.y) / factor,
        width: box.width / factor, height: box.height / factor,
      });
    }
    // The whole graph, the figure as tall as the window allows first: a column of boxes
    // is tall and narrow, and fitted into the first view its text would shrink past reading.
    function whole() {
      var room = Math.max(svg.clientHeight, Math.min(window.innerHeight * 0.95, drawn.height));
      svg.setAttribute("height", String(Math.ceil(room)));
      var scale = Math.min(svg.clientWidth / drawn.width, svg.clientHeight / drawn.height);
      var fit = fitted(scale);
      fit.y = (drawn.height - fit.height) / 2;
      show(fit);
    }
    // Draw again as `open` now has it, keeping `anchor` (a node id) where it was seen.
    function again(anchor) {
      var before = anchor ? drawn.graph.node(anchor) : null;
      var box = shown();
      drawn = render(svg, data, open, arrow);
      var after = anchor ? drawn.graph.node(anchor) : null;
      if (before && after) {
        show({ x: box.x + after.x - before.x, y: box.y + after.y - before.y, width: box.width, height: box.height });
      } else {
        sized();
        show(fitted(start));
      }
    }
    [["why-zoom-in", "+", "zoom in", function () { zoom(1.25); }],
     ["why-zoom-out", "\u2212", "zoom out", function () { zoom(0.8); }],
     ["why-fit", "whole graph", "show the whole graph", whole],
     ["why-start", "from the question", "back to the start, at reading size", function () { sized(); show(fitted(start)); }],
     ["why-open-all", "open every step", "open every step, turn and fold (a long run takes a while)", function () {
       opening(true);
       data.groups.forEach(function (group) { mine[group.key] = true; });
       select(null);
       again(null);
     }],
     ["why-fold-all", "fold as at first", "fold every step again, as the graph was first drawn", function () {
       Object.keys(mine).forEach(function (key) { delete mine[key]; });
       opening();
       select(null);
       again(null);
     }],
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
      var down = Math.max(-box.y - 40, Math.min(drawn.height + 40 - box.y - box.height, event.deltaY * per));
      var across = Math.max(-box.x - 40, Math.min(drawn.width + 40 - box.x - box.width, event.deltaX * per));
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

    // A node's details: what it is (its class too), all of its text, its IRI, and each
    // relation it is in, in words and as the PROV term.
    function describe(id) {
      var item = drawn.view.nodes.filter(function (each) { return each.id === id; })[0];
      var node = byId[id];
      details.textContent = "";
      var role = item ? item.role : node.role;
      var kind = node.fold ? "" : " \u00b7 " + node.type;
      var heading = html("h3", "", details, role + kind + (node.status ? " \u00b7 " + node.status : ""));
      if (node.failed) {
        html("span", "badge", heading, " FAILED");
      }
      if (item && item.group) {
        html("p", "why-help", details, item.shut
          ? "Folded into this box: click it to open it."
          : "Open: click this node again to fold what it holds into one box.");
      }
      html("div", "value", details, item && item.shut ? item.lines.join("\n") : node.text);
      if (node.error) {
        html("div", "value error", details, node.error);
      }
      if (node.iri) {
        html("code", "", details, node.iri);
      }
      var list = html("ul", "", details);
      data.edges.forEach(function (edge) {
        if (edge.from === id || edge.to === id) {
          var other = byId[edge.from === id ? edge.to : edge.from];
          var words = edge.label + " (" + edge.term + ")";
          var text = edge.from === id
            ? words + " \u2192 " + other.role + ": " + other.text
            : other.role + ": " + other.text + " \u2192 " + words + " this";
          html("li", "", list, text);
        }
      });
    }
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
      describe(id);
      details.hidden = false;
    }
    // A click on a group's head opens the group, or folds it again; on any node, selects it.
    function pick(target) {
      if (target && target.dataset.group) {
        var group = groups[target.dataset.group];
        open[group.id] = !open[group.id];
        mine[group.key] = open[group.id];
        var id = target.dataset.id;
        again(id);
        target = svg.querySelector('.node[data-id="' + id + '"]');
      }
      select(target);
    }
    svg.addEventListener("click", function (event) {
      if (drag && drag.moved) {
        return;
      }
      pick(event.target instanceof Element ? event.target.closest(".node") : null);
    });
    svg.addEventListener("keydown", function (event) {
      var target = event.target instanceof Element ? event.target.closest(".node") : null;
      if (target && (event.key === "Enter" || event.key === " ")) {
        event.preventDefault();
        pick(target);
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
  // A page that follows the store (#runs[data-live], the state URL): a run still open,
  // or the first page of the list.  Its state is polled (every data-every ms, else every
  // second; not while the page is hidden); when it changes (a step more, the run ended, a
  // new run), the page is read again and its #runs put in place of these, drawn again,
  // the runs picked for the diff still picked.  Polling stops once the state says there
  // is nothing more to follow (no run running).  The new markup is the server's own page
  // for the same address, parsed inert by DOMParser.
  var LIVE_POLL_MS = 1000;
  function follow(container) {
    var url = container.getAttribute("data-live");
    var every = Number(container.getAttribute("data-every")) || LIVE_POLL_MS;
    var last = null;
    function poll() {
      if (document.hidden) {
        setTimeout(poll, every);
        return;
      }
      fetch(url, { credentials: "same-origin", cache: "no-store" })
        .then(function (answer) { return answer.ok ? answer.text() : null; })
        .then(function (text) {
          if (text === null) {
            setTimeout(poll, every);
            return;
          }
          var state = JSON.parse(text);
          var going = state.running || state.follow;
          if (last !== null && text !== last) {
            refresh(container, going ? poll : null, every);
          } else if (going) {
            setTimeout(poll, every);
          }
          last = text;
        })
        .catch(function () { setTimeout(poll, every); });
    }
    poll();
  }
  function refresh(container, next, every) {
    fetch(location.href, { credentials: "same-origin", cache: "no-store" })
      .then(function (answer) { return answer.text(); })
      .then(function (text) {
        var fresh = new DOMParser().parseFromString(text, "text/html").getElementById("runs");
        if (fresh) {
          var picked = Array.from(container.querySelectorAll("input[name=run]:checked"))
            .map(function (box) { return box.value; });
          container.replaceChildren.apply(container, Array.from(fresh.childNodes));
          container.querySelectorAll("input[name=run]").forEach(function (box) {
            box.checked = picked.indexOf(box.value) >= 0;
          });
          drawAll();
        }
        if (next) {
          setTimeout(next, every);
        } else {
          container.removeAttribute("data-live");
        }
      })
      .catch(function () { if (next) { setTimeout(next, every); } });
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
// Picking another tenant (the switch at the top of each page) reads its runs.
document.addEventListener("change", function (event) {
  var select = event.target;
  if (select instanceof HTMLSelectElement && select.id === "tenant-switch" && select.form) {
    select.form.submit();
    return;
  }
  if (!(select instanceof HTMLSelectElement) || select.id !== "recipes") {
    return;
  }
  var box = select.form ? select.form.elements.namedItem("query") : null;
  if (box instanceof HTMLTextAreaElement) {
    box.value = select.value;
    box.focus();
  }
});
