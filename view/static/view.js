// Rewind's lag-compensation view: draws a recorded match (match.json) from
// above, tick by tick, and for a selected shot the hitboxes as the server
// rewound them, the shot's ray or flight, and its result. Plain JavaScript,
// no build step. The state is exposed as window.rewindView for tests.
"use strict";

(() => {
  const TEAM = ["#a3a3a3", "#3b82f6", "#ef4444"];
  const RAY = { hit: "#facc15", miss: "#9ca3af", blocked: "#fb923c", invalid: "#9ca3af" };
  const SPLASH = "#fb923c";
  const DISPUTED = "#e879f9";
  const SIGHT = "#22c55e";
  const POLL_MS = 1000;
  let minRadius = 6; // pixels: a hitbox stays visible on a large arena
  const MAX_FRAMES = 12000; // a live view keeps this many ticks

  const $ = (id) => document.getElementById(id);
  const canvas = $("arena");
  // What the drawing functions draw on: the arena's canvas, or a kill-cam
  // one (target), with its projection.
  let cv = canvas;
  let ctx = canvas.getContext("2d");
  let toC = null;
  let scale = 1;
  const view = {
    match: null,
    tick: 0,          // the tick shown
    shot: -1,         // the selected shot's index in match.shots, −1: none
    playing: false,
    drawn: null,      // what the last draw showed (tests read it)
    ready: false,
    toCanvas: null,
  };
  window.rewindView = view;

  // --- the match ---------------------------------------------------------

  async function load(from) {
    const res = await fetch("match.json" + (from ? "?from=" + from : ""), { cache: "no-store" });
    if (!res.ok) throw new Error("match.json: " + res.status + " " + (await res.text()));
    return res.json();
  }

  function lastTick() { return view.match.first + view.match.frames.length - 1; }

  function frame(tick) { return view.match.frames[tick - view.match.first]; }

  function name(i) {
    const p = view.match.players[i];
    return p ? (p.name || "player " + p.id) : "?";
  }

  // merge appends a live poll's frames and shots.
  function merge(m) {
    const cur = view.match;
    const next = cur.first + cur.frames.length;
    cur.players = m.players;
    cur.ticks = m.ticks;
    cur.end = m.end;
    cur.error = m.error;
    cur.live = m.live;
    const skip = next - m.first;
    if (skip >= 0) cur.frames.push(...m.frames.slice(skip));
    else { cur.frames = m.frames; cur.first = m.first; } // fell too far behind: start over
    const seen = cur.shots.length ? cur.shots[cur.shots.length - 1].tick : -1;
    cur.shots.push(...m.shots.filter((s) => s.tick > seen));
    if (cur.frames.length > MAX_FRAMES) {
      const drop = cur.frames.length - MAX_FRAMES;
      cur.frames.splice(0, drop);
      cur.first += drop;
      const keep = cur.shots.findIndex((s) => s.tick >= cur.first);
      const dropped = keep < 0 ? cur.shots.length : keep;
      cur.shots.splice(0, dropped);
      if (view.shot >= 0) view.shot = view.shot >= dropped ? view.shot - dropped : -1;
    }
  }

  // --- geometry ----------------------------------------------------------

  // bounds returns the part of the ground plane to draw: the level's
  // bounds, the arena, or what the match's players cover.
  function bounds(m) {
    let [x0, z0, x1, z1] = m.level ? m.level.bounds : m.arena;
    if (x0 === 0 && z0 === 0 && x1 === 0 && z1 === 0) {
      x0 = z0 = Infinity; x1 = z1 = -Infinity;
      const add = (x, z) => { x0 = Math.min(x0, x); x1 = Math.max(x1, x); z0 = Math.min(z0, z); z1 = Math.max(z1, z); };
      m.frames.forEach((f) => f.p.forEach((p) => add(p[1], p[2])));
      if (!isFinite(x0)) { x0 = z0 = -10; x1 = z1 = 10; }
    }
    const pad = 3;
    return [x0 - pad, z0 - pad, x1 + pad, z1 + pad];
  }

  // The camera: the ground point at the canvas's centre and pixels per
  // metre. null fits the arena; "zoom to the shot" frames the shot.
  let cam = null;

  function layout() {
    const stage = $("stage");
    canvas.width = Math.max(400, stage.clientWidth - 16);
    canvas.height = Math.max(300, stage.clientHeight - 16);
  }

  function fit(x0, z0, x1, z1, maxScale, w, h) {
    const s = Math.min((w || canvas.width) / (x1 - x0), (h || canvas.height) / (z1 - z0), maxScale || Infinity);
    return { x: (x0 + x1) / 2, z: (z0 + z1) / 2, s };
  }

  // victimOf is the player a shot was at: its target, or for one that hit
  // nobody the enemy its ray or flight passed closest to, where the server
  // put it (−1: none).
  function victimOf(shot) {
    if (shot.target >= 0) return shot.target;
    const path = shot.path || [[shot.origin[0], shot.origin[2]], [shot.point[0], shot.point[2]]];
    let best = -1, bestD = Infinity;
    (shot.rewound || []).forEach(([i, x, z]) => {
      if (i === shot.shooter || teamOf(i) === teamOf(shot.shooter) && teamOf(i) !== 0) return;
      for (let k = 1; k < path.length; k++) {
        const d = segmentDistance(x, z, path[k - 1], path[k]);
        if (d < bestD) { best = i; bestD = d; }
      }
    });
    return best;
  }

  function segmentDistance(x, z, [ax, az], [bx, bz]) {
    const dx = bx - ax, dz = bz - az;
    const l2 = dx * dx + dz * dz;
    const t = l2 > 0 ? Math.min(Math.max(((x - ax) * dx + (z - az) * dz) / l2, 0), 1) : 0;
    return Math.hypot(ax + t * dx - x, az + t * dz - z);
  }

  // shotCam frames a shot on a canvas of w × h pixels: its shooter and
  // its victim, where they are and where the server put them, and where
  // the shot ended when it struck something (a miss's ray runs on to the
  // end of its range: it is not framed, only drawn).
  function shotCam(shot, w, h) {
    const pts = [[shot.origin[0], shot.origin[2]]];
    if (shot.result !== "miss") pts.push([shot.point[0], shot.point[2]]);
    const f = frame(shot.tick);
    [shot.shooter, victimOf(shot)].forEach((i) => {
      if (i < 0) return;
      (shot.rewound || []).forEach((r) => { if (r[0] === i) pts.push([r[1], r[2]]); });
      if (f) f.p.forEach((p) => { if (p[0] === i) pts.push([p[1], p[2]]); });
    });
    if (pts.length === 1) pts.push([shot.point[0], shot.point[2]]);
    const xs = pts.map((p) => p[0]), zs = pts.map((p) => p[1]);
    const pad = 2.5 + (shot.splash_radius || 0);
    return fit(Math.min(...xs) - pad, Math.min(...zs) - pad, Math.max(...xs) + pad, Math.max(...zs) + pad, 60, w, h);
  }

  function camera() {
    const shot = selected();
    if ($("zoom-shot").checked && shot && shot.result !== "invalid") return shotCam(shot);
    return cam || fit(...bounds(view.match));
  }

  function setCamera(c) {
    target(canvas, c);
    view.scale = c.s;
    view.camera = c;
    view.toCanvas = toC;
    view.toGround = (px, py) => [c.x + (px - canvas.width / 2) / c.s, c.z - (py - canvas.height / 2) / c.s];
  }

  // target makes the drawing functions draw on canvas t through camera c.
  function target(t, c) {
    cv = t;
    ctx = t.getContext("2d");
    scale = c.s;
    toC = (x, z) => [t.width / 2 + (x - c.x) * c.s, t.height / 2 - (z - c.z) * c.s];
  }

  function selected() {
    const m = view.match;
    const s = view.shot >= 0 ? m.shots[view.shot] : null;
    return s && s.tick === view.tick ? s : null;
  }

  // --- drawing -----------------------------------------------------------

  function box(b, fill, stroke) {
    const [ax, ay] = toC(b[0], b[1]);
    const [bx, by] = toC(b[2], b[3]);
    ctx.fillStyle = fill;
    ctx.fillRect(Math.min(ax, bx), Math.min(ay, by), Math.abs(bx - ax), Math.abs(by - ay));
    if (stroke) {
      ctx.strokeStyle = stroke;
      ctx.strokeRect(Math.min(ax, bx), Math.min(ay, by), Math.abs(bx - ax), Math.abs(by - ay));
    }
  }

  function circle(x, z, r, fill, stroke, dash) {
    const [cx, cy] = toC(x, z);
    ctx.beginPath();
    ctx.arc(cx, cy, Math.max(r * scale, minRadius), 0, 2 * Math.PI);
    if (fill) { ctx.fillStyle = fill; ctx.fill(); }
    if (stroke) {
      ctx.setLineDash(dash || []);
      ctx.strokeStyle = stroke;
      ctx.lineWidth = 2;
      ctx.stroke();
      ctx.setLineDash([]);
    }
  }

  function line(points, color, width, dash) {
    ctx.beginPath();
    points.forEach(([x, z], i) => {
      const [px, py] = toC(x, z);
      if (i === 0) ctx.moveTo(px, py); else ctx.lineTo(px, py);
    });
    ctx.strokeStyle = color;
    ctx.lineWidth = width;
    ctx.setLineDash(dash || []);
    ctx.stroke();
    ctx.setLineDash([]);
  }

  // The level, from above: each triangle filled with a grey that lightens
  // with its height (the top of a wall, a ledge, a roof stand out from the
  // floor below), outlined so that walls seen edge on show as lines; those
  // that stop only shots tinted blue, those that stop only movement (player
  // clips, the arena's edge) outlined and dashed. Lower triangles first:
  // what is higher covers what is below. Drawn once per camera into a layer
  // of its own: a level has tens of thousands of triangles.
  const levelLayers = new Map(); // by canvas

  function shade(top, blocks) {
    const l = view.match.level;
    const span = Math.max(l.high - l.low, 1e-9);
    const light = 14 + 46 * Math.min(Math.max((top - l.low) / span, 0), 1);
    return blocks === 2 ? `hsl(215, 45%, ${light}%)` : `hsl(215, 8%, ${light}%)`;
  }

  function drawLevel(c) {
    const l = view.match.level;
    if (!l) return 0;
    const key = [c.x, c.z, c.s, cv.width, cv.height].join();
    let levelLayer = levelLayers.get(cv);
    if (!levelLayer || levelLayer.key !== key) {
      const layer = document.createElement("canvas");
      layer.width = cv.width;
      layer.height = cv.height;
      const g = layer.getContext("2d");
      g.lineJoin = "round";
      l.tris.forEach((t) => {
        const [ax, ay] = toC(t[0], t[1]);
        const [bx, by] = toC(t[2], t[3]);
        const [cx, cy] = toC(t[4], t[5]);
        g.beginPath();
        g.moveTo(ax, ay);
        g.lineTo(bx, by);
        g.lineTo(cx, cy);
        g.closePath();
        const color = shade(t[6], t[7]);
        if (t[7] === 1) {
          g.setLineDash([4, 3]);
          g.strokeStyle = color;
          g.lineWidth = 1;
          g.stroke();
          g.setLineDash([]);
          return;
        }
        g.fillStyle = color;
        g.fill();
        g.strokeStyle = color;
        g.lineWidth = 1.5;
        g.stroke();
      });
      levelLayer = { key, canvas: layer };
      levelLayers.set(cv, levelLayer);
    }
    ctx.drawImage(levelLayer.canvas, 0, 0);
    return l.tris.length;
  }

  function teamOf(i) { const p = view.match.players[i]; return p ? p.team : 0; }
  // A crouched player's marker is two thirds the size.
  function markerRadius(i, crouched) { return radiusOf(i) * (crouched ? 0.66 : 1); }
  // What a player's label adds: its feet's height off the ground floor,
  // and whether it crouches.
  function label(y, crouched) {
    let s = "";
    if (Math.abs(y || 0) >= 0.1) s += " ↑" + Number(y).toFixed(1) + " m";
    if (crouched) s += " (crouched)";
    return s;
  }
  function radiusOf(i) { const p = view.match.players[i]; return p && p.radius ? p.radius : 0.4; }

  // render draws the tick shown on the current target (target): the
  // level, the shields, the players and the selected shot. mode "main"
  // draws the present and the rewind together; "rewound" what the
  // shooter's screen showed (everyone but the shooter where the server put
  // them, the shot); "present" everyone where they were at the server tick,
  // and the shooter's sightline to the victim. It returns what it drew.
  function render(mode) {
    const m = view.match;
    const f = frame(view.tick);
    const drawn = { tick: view.tick, players: [], rewound: [], ray: null, point: null, level: null, labels: [], splash: null, sightline: null };
    ctx.fillStyle = "#0b0d10";
    ctx.fillRect(0, 0, cv.width, cv.height);
    // The level (or the arena's floor), and a 10 m grid over it.
    const [x0, z0, x1, z1] = bounds(m);
    if (!(m.arena[0] === 0 && m.arena[2] === 0)) box(m.arena, "rgba(255,255,255,0.03)", "#2f3944");
    if (m.level) drawn.level = { name: m.level.name, triangles: drawLevel({ x: toC(0, 0)[0], z: toC(0, 0)[1], s: scale }) };
    ctx.lineWidth = 1;
    for (let x = Math.ceil(x0 / 10) * 10; x <= x1; x += 10) line([[x, z0], [x, z1]], "rgba(255,255,255,0.06)", 1);
    for (let z = Math.ceil(z0 / 10) * 10; z <= z1; z += 10) line([[x0, z], [x1, z]], "rgba(255,255,255,0.06)", 1);
    if (!f) return drawn;
    (f.s || []).forEach((s) => box([s[1], s[2], s[3], s[4]], TEAM[s[0]] + "55", TEAM[s[0]]));
    const shot = selected();
    const live = shot && shot.result !== "invalid";
    const present = new Map(f.p.map((p) => [p[0], p]));
    const labels = [];
    const victim = live ? victimOf(shot) : -1;
    // The rewound hitboxes, and a line from each to where it is now.
    if (live && mode !== "present") {
      shot.rewound.forEach(([i, x, z, y, crouched]) => {
        if (mode === "rewound" && i === shot.shooter) return;
        const now = present.get(i);
        if (now && mode === "main") line([[x, z], [now[1], now[2]]], TEAM[teamOf(i)] + "88", 1);
        if (mode === "rewound") {
          circle(x, z, markerRadius(i, crouched), TEAM[teamOf(i)]);
          labels.push({ text: name(i) + label(y, crouched), x, z, first: i === victim });
        } else circle(x, z, markerRadius(i, crouched), TEAM[teamOf(i)] + "33", TEAM[teamOf(i)], [5, 4]);
        drawn.rewound.push(name(i) + (crouched ? " (crouched)" : ""));
      });
    }
    // Present hitboxes, facing their aim; a crouched one smaller, and the
    // height of any not on the ground floor.
    f.p.forEach(([i, x, z, yaw, y, crouched]) => {
      if (mode === "rewound" && i !== shot.shooter) return;
      const r = radiusOf(i);
      circle(x, z, markerRadius(i, crouched), TEAM[teamOf(i)]);
      line([[x, z], [x + Math.sin(yaw) * r * 2.2, z + Math.cos(yaw) * r * 2.2]], "#e5e7eb", 2);
      labels.push({ text: name(i) + label(y, crouched), x, z, first: live && (i === shot.shooter || i === victim) });
      drawn.players.push(name(i));
    });
    (f.o || []).forEach(([x, z]) => circle(x, z, 0.15, "#fde68a"));
    // The other shots decided this tick, faintly; the selected one bold.
    if (mode === "main") {
      m.shots.forEach((s) => {
        if (s.tick !== view.tick || s === shot || s.result === "invalid") return;
        line(s.path || [[s.origin[0], s.origin[2]], [s.point[0], s.point[2]]], RAY[s.result] + "66", 1);
      });
    }
    if (live) {
      const path = shot.path || [[shot.origin[0], shot.origin[2]], [shot.point[0], shot.point[2]]];
      line(path, RAY[shot.result] + (mode === "present" ? "55" : ""), mode === "present" ? 1.5 : 3);
      drawn.ray = path;
      if (shot.splash_radius > 0 && shot.result !== "miss") {
        circle(shot.point[0], shot.point[2], shot.splash_radius, SPLASH + "22", SPLASH, [6, 4]);
        drawn.splash = { radius: shot.splash_radius, px: shot.splash_radius * scale };
      }
      const v = present.get(victim);
      if (v && mode !== "rewound") {
        if (shot.target >= 0) circle(v[1], v[2], radiusOf(victim) + 0.25, null, shot.disputed ? DISPUTED : RAY.hit);
        // The victim's present sightline: from where the shot's reach is
        // judged (the shooter's eye; a projectile's contact) to the victim
        // where it stood at the server tick.
        if (shot.disputed || mode === "present") {
          const from = shot.kind === "projectile" ? shot.point : shot.origin;
          line([[from[0], from[2]], [v[1], v[2]]], shot.disputed ? DISPUTED : SIGHT, 2, [3, 4]);
          drawn.sightline = { from: toC(from[0], from[2]), to: toC(v[1], v[2]), disputed: !!shot.disputed };
        }
      }
      circle(shot.point[0], shot.point[2], 0.25, RAY[shot.result]);
      drawn.point = toC(shot.point[0], shot.point[2]);
    }
    drawn.labels = placeLabels(labels);
    return drawn;
  }

  // placeLabels writes the players' names beside their markers where they
  // do not cover each other: each takes the first of eight places around
  // its marker (the shot's shooter and victim first) that no label taken
  // covers and that stays on the canvas; the names of a crowd that has no
  // room left go without a label. It returns the boxes written.
  function placeLabels(labels) {
    ctx.font = "12px system-ui, sans-serif";
    const h = 15, placed = [];
    labels.sort((a, b) => (b.first ? 1 : 0) - (a.first ? 1 : 0));
    labels.forEach((l) => {
      const w = ctx.measureText(l.text).width + 6;
      const [cx, cy] = toC(l.x, l.z);
      const spots = [[9, -9 - h], [9, 9], [-9 - w, -9 - h], [-9 - w, 9], [-w / 2, -14 - h], [-w / 2, 14], [12, -h / 2], [-12 - w, -h / 2]];
      for (const [dx, dy] of spots) {
        const r = { x: cx + dx, y: cy + dy, w, h, text: l.text };
        if (r.x < 0 || r.y < 0 || r.x + w > cv.width || r.y + h > cv.height) continue;
        if (placed.some((q) => r.x < q.x + q.w && q.x < r.x + r.w && r.y < q.y + q.h && q.y < r.y + r.h)) continue;
        ctx.fillStyle = "rgba(11,13,16,0.75)";
        ctx.fillRect(r.x, r.y, w, h);
        ctx.fillStyle = "#e5e7eb";
        ctx.fillText(l.text, r.x + 3, r.y + h - 4);
        placed.push(r);
        return;
      }
    });
    return placed;
  }

  function draw() {
    killcam();
    setCamera(camera());
    view.drawn = render("main");
    side();
    marks();
  }

  // killcam draws the selected shot twice, beside each other: as the
  // shooter's screen showed it (everyone where the server put them) and
  // as it was at the server tick (the victim's present), both framed on the
  // shooter and the victim.
  function killcam() {
    const shot = selected();
    const on = $("killcam-on").checked && shot && shot.result !== "invalid";
    $("killcam").hidden = !on;
    view.drawn = view.drawn || {};
    if (!on) { view.killcam = null; return; }
    const out = {};
    [["kc-rewound", "rewound"], ["kc-present", "present"]].forEach(([id, mode]) => {
      const t = $(id);
      target(t, shotCam(shot, t.width, t.height));
      out[mode] = render(mode);
    });
    const v = victimOf(shot);
    $("kc-rewound-title").textContent = name(shot.shooter) + "'s view: tick " + fmt(shot.view) + ", rewound " +
      Math.round((shot.lag * 1000) / view.match.tick_rate) + " ms";
    $("kc-present-title").textContent = (v >= 0 ? name(v) + "'s present" : "the present") + ": tick " + shot.tick +
      (shot.disputed ? " · out of " + name(shot.shooter) + "'s sight: disputed" : "");
    view.killcam = out;
  }

  // side draws the selected shot from the side: height against the
  // distance along the shot (horizontally), the victim's hitbox where the
  // server put it (its head the lighter band), and where it is at the
  // server tick (dashed), the ray, and where it struck: head or body.
  function side() {
    const el = $("side");
    const shot = selected();
    const v = shot && shot.result !== "invalid" ? victimOf(shot) : -1;
    el.hidden = v < 0;
    view.side = null;
    if (v < 0) return;
    const g = el.getContext("2d");
    const W = el.width, H = el.height;
    const o = shot.origin;
    let dx = shot.point[0] - o[0], dz = shot.point[2] - o[2];
    const rw = shot.rewound.find((r) => r[0] === v);
    const pr = (frame(shot.tick) || { p: [] }).p.find((p) => p[0] === v);
    if (shot.result === "miss" && rw) { dx = rw[1] - o[0]; dz = rw[2] - o[2]; }
    const len = Math.hypot(dx, dz) || 1;
    const along = (x, z) => ((x - o[0]) * dx + (z - o[2]) * dz) / len;
    const p = view.match.players[v] || {};
    const height = (crouched) => (crouched ? p.crouch_height : p.height) || 1.8;
    const bodies = [];
    if (rw) bodies.push({ d: along(rw[1], rw[2]), y: rw[3], h: height(rw[4]), dash: false });
    if (pr) bodies.push({ d: along(pr[1], pr[2]), y: pr[4], h: height(pr[5]), dash: true });
    const hit = shot.result === "hit" || shot.result === "blocked";
    const pd = hit ? along(shot.point[0], shot.point[2]) : Math.max(...bodies.map((b) => b.d), 1) + 1.5;
    const dmax = Math.max(pd, ...bodies.map((b) => b.d)) + 1;
    const ylo = Math.min(0, o[1] - 2, ...bodies.map((b) => b.y)) - 0.2;
    const yhi = Math.max(o[1], ...bodies.map((b) => b.y + b.h)) + 0.4;
    const sx = (W - 30) / (dmax + 1), sy = (H - 22) / (yhi - ylo);
    const X = (d) => 20 + (d + 1) * sx, Y = (y) => H - 14 - (y - ylo) * sy;
    g.fillStyle = "#0b0d10";
    g.fillRect(0, 0, W, H);
    g.strokeStyle = "#2f3944";
    g.beginPath(); g.moveTo(0, Y(0)); g.lineTo(W, Y(0)); g.stroke();
    const color = TEAM[teamOf(v)];
    const r = Math.max((p.radius || 0.4) * sx, 3);
    bodies.forEach((b) => {
      g.setLineDash(b.dash ? [4, 3] : []);
      g.strokeStyle = color;
      g.lineWidth = 1.5;
      g.strokeRect(X(b.d) - r, Y(b.y + b.h), 2 * r, (b.h) * sy);
      if (!b.dash) {
        g.fillStyle = color + "66";
        g.fillRect(X(b.d) - r, Y(b.y + b.h), 2 * r, b.h * sy);
        if (p.head_height > 0) {
          g.fillStyle = color + "cc";
          g.fillRect(X(b.d) - r, Y(b.y + b.h), 2 * r, p.head_height * sy);
        }
      }
    });
    g.setLineDash([]);
    g.strokeStyle = RAY[shot.result];
    g.lineWidth = 2;
    const py = hit ? shot.point[1] : o[1] + (shot.point[1] - o[1]) * (pd / Math.max(Math.hypot(shot.point[0] - o[0], shot.point[2] - o[2]), 1e-9));
    g.beginPath(); g.moveTo(X(0), Y(o[1])); g.lineTo(X(pd), Y(py)); g.stroke();
    g.fillStyle = RAY[shot.result];
    g.beginPath(); g.arc(X(pd), Y(py), 3.5, 0, 2 * Math.PI); g.fill();
    g.fillStyle = "#e5e7eb";
    g.beginPath(); g.arc(X(0), Y(o[1]), 3, 0, 2 * Math.PI); g.fill();
    const part = shot.result === "hit" ? (shot.head ? "head" : "body") : "";
    g.font = "11px system-ui, sans-serif";
    g.fillStyle = "#98a2ae";
    g.fillText("side view: height against distance along the shot", 4, 11);
    g.fillStyle = "#e5e7eb";
    if (part) {
      const t = part + " · " + fmt(shot.point[1] - (rw ? rw[3] : 0), 2) + " m above the feet";
      g.fillText(t, Math.max(Math.min(X(pd) - r - 6 - g.measureText(t).width, W - g.measureText(t).width - 4), 4), Math.max(Y(py) - 8, 24));
    }
    g.fillText(fmt(dmax - 1, 1) + " m", W - 40, H - 2);
    view.side = { victim: name(v), part, contact: hit ? shot.point[1] : null, bodies: bodies.length };
  }

  // marks draws the timeline's marks: every hit, kill, clamped shot and
  // disputed hit at its tick.
  function marks() {
    const el = $("marks");
    const m = view.match;
    if (el.width !== el.clientWidth && el.clientWidth > 0) el.width = el.clientWidth;
    const g = el.getContext("2d");
    g.fillStyle = "#0b0d10";
    g.fillRect(0, 0, el.width, el.height);
    const span = Math.max(lastTick() - m.first, 1);
    const X = (t) => 7 + ((t - m.first) / span) * (el.width - 14); // the range input's thumb's travel
    const count = { hits: 0, kills: 0, clamps: 0, disputed: 0 };
    const mark = (t, color, y, h) => { g.fillStyle = color; g.fillRect(Math.round(X(t)) - 1, y, 2, h); };
    m.shots.forEach((s) => {
      if (s.clamp) { mark(s.tick, SPLASH, 10, 6); count.clamps++; }
      if (s.result === "hit") { mark(s.tick, RAY.hit, 8, 8); count.hits++; }
    });
    m.shots.forEach((s) => {
      if (s.kill) { mark(s.tick, TEAM[2], 0, 16); count.kills++; }
      if (s.disputed) { mark(s.tick, DISPUTED, 0, 16); count.disputed++; }
    });
    g.fillStyle = "#ffffff";
    g.fillRect(Math.round(X(view.tick)) - 1, 0, 2, 3);
    view.marks = count;
    view.markX = X;
  }

  // --- panels ------------------------------------------------------------

  function fmt(n, d = 2) { return Number(n).toFixed(d); }

  function panels() {
    const m = view.match;
    const f = frame(view.tick);
    $("tick-title").textContent = "tick " + view.tick + " of " + m.first + "–" + lastTick();
    const here = m.shots.filter((s) => s.tick === view.tick);
    const secs = (view.tick / m.tick_rate).toFixed(2);
    const alive = f ? f.p.length : 0;
    $("tick-info").textContent = secs + " s · " + alive + (alive === 1 ? " player" : " players") + " alive · " + here.length +
      " shot decision" + (here.length === 1 ? "" : "s") + " this tick";
    const el = $("shot");
    const shot = selected();
    if (!shot) {
      $("shot-title").textContent = "no shot selected";
      ["shot-who", "shot-weapon", "shot-result", "shot-rewind", "shot-clamp", "shot-disputed"].forEach((id) => ($(id).textContent = ""));
      Object.assign(el.dataset, { shot: "", tick: "", result: "", shooter: "", target: "", disputed: "" });
      lags();
      return;
    }
    $("shot-title").textContent = "shot " + (view.shot + 1) + " of " + m.shots.length + " · tick " + shot.tick;
    const target = shot.target >= 0 ? name(shot.target) : "";
    $("shot-who").textContent = name(shot.shooter) + (target ? " → " + target : "");
    $("shot-weapon").textContent = shot.weapon + " (" + shot.kind + ")" + (shot.fired !== shot.tick ? ", fired at tick " + shot.fired : "");
    let result = shot.result;
    if (shot.result === "hit") {
      result += (shot.head ? " · head" : "") + (shot.splash ? " · splash" : "") + " · " + fmt(shot.damage, 1) + " damage";
      result += shot.no_damage ? " (none dealt: " + shot.no_damage + ")" : " (" + fmt(shot.dealt, 1) + " dealt)";
      if (shot.kill) result += " · kill";
    }
    if (shot.splash_radius > 0) result += " · splash radius " + fmt(shot.splash_radius, 1) + " m";
    $("shot-result").textContent = result;
    $("shot-result").className = shot.result;
    $("shot-rewind").textContent = shot.result === "invalid" ? "" :
      "rewound " + fmt(shot.lag) + " ticks (" + Math.round((shot.lag * 1000) / m.tick_rate) + " ms), to tick " + fmt(shot.view);
    $("shot-clamp").textContent = shot.clamp ? "its client claimed " + fmt(shot.claimed) + " ticks; cut by " + shot.clamp : "";
    $("shot-disputed").textContent = shot.disputed ? "disputed: in " + target + "'s present (tick " + shot.tick + ") out of " +
      name(shot.shooter) + "'s sight or reach, and no hit without the rewind" : "";
    Object.assign(el.dataset, { shot: String(view.shot), tick: String(shot.tick), result: shot.result,
      shooter: name(shot.shooter), target, disputed: shot.disputed ? "true" : "" });
    lags();
  }

  // lags fills the view-lag table: per player, the view lag granted at
  // the tick shown (its last input's at or before it), its median and
  // 95th percentile over the frames loaded, and the median of the bound
  // the server measured of its client (round trip and interpolation).
  let lagStats = null;
  function lags() {
    const m = view.match;
    const key = m.first + ":" + m.frames.length;
    if (!lagStats || lagStats.key !== key) {
      const per = m.players.map(() => ({ granted: [], bound: [] }));
      m.frames.forEach((f) => (f.l || []).forEach(([i, g, b]) => {
        if (!per[i]) return;
        per[i].granted.push(g);
        if (b > 0) per[i].bound.push(b);
      }));
      const q = (xs, p) => {
        if (!xs.length) return null;
        const s = xs.slice().sort((a, b) => a - b);
        return s[Math.min(s.length - 1, Math.floor(p * s.length))];
      };
      lagStats = { key, rows: per.map((p) => ({ p50: q(p.granted, 0.5), p95: q(p.granted, 0.95), bound: q(p.bound, 0.5) })) };
    }
    const now = new Map();
    for (let t = view.tick; t >= m.first && now.size < m.players.length && t > view.tick - 40; t--) {
      const f = frame(t);
      (f && f.l || []).forEach(([i, g]) => { if (!now.has(i)) now.set(i, g); });
    }
    const ms = (v) => (v === null || v === undefined ? "–" : String(Math.round(v)));
    const rows = m.players.map((p, i) => {
      const st = lagStats.rows[i];
      return "<tr data-player=\"" + i + "\"><td style=\"color:" + TEAM[p.team] + "\">" + esc(name(i)) + "</td><td>" + ms(now.get(i)) +
        "</td><td>" + ms(st.p50) + "</td><td>" + ms(st.p95) + "</td><td>" + ms(st.bound) + "</td></tr>";
    });
    const body = $("lags").tBodies[0];
    const html = rows.join("");
    if (body.innerHTML !== html) body.innerHTML = html;
  }

  function esc(t) {
    return String(t).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
  }

  function show() {
    const m = view.match;
    view.tick = Math.max(m.first, Math.min(view.tick, lastTick()));
    $("timeline").min = m.first;
    $("timeline").max = lastTick();
    $("timeline").value = view.tick;
    draw();
    panels();
    const hash = selected() ? "#shot=" + (view.shot + 1) : "#tick=" + view.tick; // shots count from 1, as the panel's
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  // --- navigation --------------------------------------------------------

  // wanted says whether the filters (hits only, disputed only) keep a shot.
  function wanted(s) {
    return (!$("hits-only").checked || s.result === "hit") && (!$("disputed-only").checked || s.disputed);
  }

  function goTick(t) {
    view.tick = t;
    view.shot = view.match.shots.findIndex((s) => s.tick === t && wanted(s));
    show();
  }

  function goShot(k) {
    const s = view.match.shots[k];
    if (!s) return;
    view.shot = k;
    view.tick = s.tick;
    show();
  }

  function stepShot(dir) {
    const shots = view.match.shots;
    let k = view.shot;
    if (k < 0) { // from the tick shown: the first shot at or after it, or the last before it
      const i = shots.findIndex((s) => s.tick >= view.tick);
      k = dir > 0 ? (i < 0 ? shots.length : i) - 1 : (i < 0 ? shots.length : i);
    }
    for (k += dir; k >= 0 && k < shots.length; k += dir) {
      if (wanted(shots[k])) return goShot(k);
    }
  }

  function play(on) {
    view.playing = on;
    $("play").textContent = on ? "pause" : "play";
  }

  setInterval(() => {
    if (!view.playing || !view.match) return;
    if (view.tick >= lastTick()) { if (!view.match.live) play(false); return; }
    goTick(view.tick + 1);
  }, 50);

  function wire() {
    $("first").onclick = () => goTick(view.match.first);
    $("last").onclick = () => goTick(lastTick());
    $("prev-tick").onclick = () => goTick(view.tick - 1);
    $("next-tick").onclick = () => goTick(view.tick + 1);
    $("prev-shot").onclick = () => stepShot(-1);
    $("next-shot").onclick = () => stepShot(1);
    $("play").onclick = () => play(!view.playing);
    $("timeline").oninput = (e) => goTick(Number(e.target.value));
    document.addEventListener("keydown", (e) => {
      if (e.target.tagName === "INPUT" && e.target.type !== "checkbox") return;
      const k = { ArrowLeft: () => goTick(view.tick - 1), ArrowRight: () => goTick(view.tick + 1), "[": () => stepShot(-1),
        "]": () => stepShot(1), " ": () => play(!view.playing), Home: () => goTick(view.match.first), End: () => goTick(lastTick()),
        z: () => { $("zoom-shot").checked = !$("zoom-shot").checked; show(); },
        k: () => { $("killcam-on").checked = !$("killcam-on").checked; show(); } }[e.key];
      if (k) { e.preventDefault(); k(); }
    });
    window.addEventListener("hashchange", fromHash);
    window.addEventListener("resize", () => { layout(); show(); });
    $("zoom-shot").onchange = () => show();
    $("killcam-on").onchange = () => show();
    $("marks").addEventListener("click", (e) => {
      const r = $("marks").getBoundingClientRect();
      const x = (e.clientX - r.left) * $("marks").width / r.width;
      const m = view.match;
      const t = Math.round(m.first + ((x - 7) / ($("marks").width - 14)) * Math.max(lastTick() - m.first, 1));
      // the nearest marked shot within 4 pixels, else the tick
      let best = -1, bestD = 4;
      m.shots.forEach((s, k) => {
        const d = Math.abs(view.markX(s.tick) - x);
        if ((s.result === "hit" || s.clamp) && wanted(s) && d < bestD) { best = k; bestD = d; }
      });
      if (best >= 0) goShot(best); else goTick(Math.max(m.first, Math.min(t, lastTick())));
    });
    // Wheel zooms about the pointer, a drag pans, a double click fits the arena.
    const at = (e) => { const r = canvas.getBoundingClientRect(); return [(e.clientX - r.left) * canvas.width / r.width, (e.clientY - r.top) * canvas.height / r.height]; };
    canvas.addEventListener("wheel", (e) => {
      e.preventDefault();
      const c = Object.assign({}, view.camera);
      const [px, py] = at(e);
      const [gx, gz] = view.toGround(px, py);
      c.s = Math.min(Math.max(c.s * (e.deltaY < 0 ? 1.25 : 0.8), 0.5), 400);
      c.x = gx - (px - canvas.width / 2) / c.s;
      c.z = gz + (py - canvas.height / 2) / c.s;
      cam = c;
      $("zoom-shot").checked = false;
      show();
    }, { passive: false });
    let drag = null;
    canvas.addEventListener("mousedown", (e) => { drag = at(e); });
    window.addEventListener("mouseup", () => { drag = null; });
    canvas.addEventListener("mousemove", (e) => {
      if (!drag) return;
      const [px, py] = at(e);
      const c = Object.assign({}, view.camera);
      c.x -= (px - drag[0]) / c.s;
      c.z += (py - drag[1]) / c.s;
      drag = [px, py];
      cam = c;
      $("zoom-shot").checked = false;
      show();
    });
    canvas.addEventListener("dblclick", () => { cam = null; $("zoom-shot").checked = false; show(); });
  }

  function fromHash() {
    const m = /^#(shot|tick)=(\d+)$/.exec(location.hash);
    if (!m) return false;
    if (m[1] === "shot") goShot(Number(m[2]) - 1); else goTick(Number(m[2]));
    return true;
  }

  function title() {
    const m = view.match;
    const msOf = (n) => Math.round((n * 1000) / m.tick_rate) + " ms";
    let t = "room " + m.room + " · " + m.tick_rate + " Hz · window " + msOf(m.window_ticks) + " (" + m.window_ticks + " ticks)";
    if (m.recorded_window_ticks !== undefined && m.recorded_window_ticks !== null) {
      t += ", recorded " + msOf(m.recorded_window_ticks) + " (" + m.recorded_window_ticks + " ticks)";
    }
    const disputed = m.shots.filter((s) => s.disputed).length;
    t += " · " + m.players.length + " players · " + m.shots.length + " shot decisions · " + disputed + " disputed";
    if (m.level) t += " · level " + m.level.name + " (" + m.level.digest.slice(0, 12) + ")";
    if (m.started) t += " · started " + m.started.replace("T", " ").replace(/\.\d+Z$/, "Z");
    if (m.end) t += " · ended: " + m.end;
    $("match-title").textContent = t;
    $("live").hidden = !m.live;
    $("follow-label").hidden = !m.live;
    $("error").hidden = !m.error;
    $("error").textContent = m.error ? "The recording stops early: " + m.error : "";
  }

  async function poll() {
    try {
      const m = await load(view.match.first + view.match.frames.length);
      const atEnd = view.tick >= lastTick();
      merge(m);
      title();
      if ($("follow").checked && atEnd) goTick(lastTick()); else show();
    } catch (e) {
      $("error").hidden = false;
      $("error").textContent = String(e);
    }
    if (view.match.live) setTimeout(poll, POLL_MS);
  }

  async function main() {
    try {
      view.match = await load(0);
    } catch (e) {
      $("error").hidden = false;
      $("error").textContent = String(e);
      return;
    }
    layout();
    wire();
    title();
    if (!fromHash()) goTick(view.match.live ? lastTick() : view.match.first);
    view.ready = true;
    if (view.match.live) setTimeout(poll, POLL_MS);
  }

  main();
})();
