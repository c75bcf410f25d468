// Rewind's lag-compensation view: draws a recorded match (match.json) from
// above, tick by tick, and for a selected shot the hitboxes as the server
// rewound them, the shot's ray or flight, and its result. Plain JavaScript,
// no build step. The state is exposed as window.rewindView for tests.
"use strict";

(() => {
  const TEAM = ["#a3a3a3", "#3b82f6", "#ef4444"];
  const RAY = { hit: "#facc15", miss: "#9ca3af", blocked: "#fb923c", invalid: "#9ca3af" };
  const POLL_MS = 1000;
  let minRadius = 6; // pixels: a hitbox stays visible on a large arena
  const MAX_FRAMES = 12000; // a live view keeps this many ticks

  const $ = (id) => document.getElementById(id);
  const canvas = $("arena");
  const ctx = canvas.getContext("2d");
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

  function fit(x0, z0, x1, z1, maxScale) {
    const s = Math.min(canvas.width / (x1 - x0), canvas.height / (z1 - z0), maxScale || Infinity);
    return { x: (x0 + x1) / 2, z: (z0 + z1) / 2, s };
  }

  // shotCam frames a shot: its origin, point and flight, and its shooter
  // and target where they are and where the server put them.
  function shotCam(shot) {
    const pts = [[shot.origin[0], shot.origin[2]], [shot.point[0], shot.point[2]], ...(shot.path || [])];
    const f = frame(shot.tick);
    [shot.shooter, shot.target].forEach((i) => {
      (shot.rewound || []).forEach((r) => { if (r[0] === i) pts.push([r[1], r[2]]); });
      if (f) f.p.forEach((p) => { if (p[0] === i) pts.push([p[1], p[2]]); });
    });
    const xs = pts.map((p) => p[0]), zs = pts.map((p) => p[1]);
    const pad = 2.5;
    return fit(Math.min(...xs) - pad, Math.min(...zs) - pad, Math.max(...xs) + pad, Math.max(...zs) + pad, 60);
  }

  function camera() {
    const shot = selected();
    if ($("zoom-shot").checked && shot && shot.result !== "invalid") return shotCam(shot);
    return cam || fit(...bounds(view.match));
  }

  function setCamera(c) {
    view.scale = c.s;
    view.camera = c;
    view.toCanvas = (x, z) => [canvas.width / 2 + (x - c.x) * c.s, canvas.height / 2 - (z - c.z) * c.s];
    view.toGround = (px, py) => [c.x + (px - canvas.width / 2) / c.s, c.z - (py - canvas.height / 2) / c.s];
  }

  function selected() {
    const m = view.match;
    const s = view.shot >= 0 ? m.shots[view.shot] : null;
    return s && s.tick === view.tick ? s : null;
  }

  // --- drawing -----------------------------------------------------------

  function box(b, fill, stroke) {
    const [ax, ay] = view.toCanvas(b[0], b[1]);
    const [bx, by] = view.toCanvas(b[2], b[3]);
    ctx.fillStyle = fill;
    ctx.fillRect(Math.min(ax, bx), Math.min(ay, by), Math.abs(bx - ax), Math.abs(by - ay));
    if (stroke) {
      ctx.strokeStyle = stroke;
      ctx.strokeRect(Math.min(ax, bx), Math.min(ay, by), Math.abs(bx - ax), Math.abs(by - ay));
    }
  }

  function circle(x, z, r, fill, stroke, dash) {
    const [cx, cy] = view.toCanvas(x, z);
    ctx.beginPath();
    ctx.arc(cx, cy, Math.max(r * view.scale, minRadius), 0, 2 * Math.PI);
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
      const [px, py] = view.toCanvas(x, z);
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
  let levelLayer = null;

  function shade(top, blocks) {
    const l = view.match.level;
    const span = Math.max(l.high - l.low, 1e-9);
    const light = 14 + 46 * Math.min(Math.max((top - l.low) / span, 0), 1);
    return blocks === 2 ? `hsl(215, 45%, ${light}%)` : `hsl(215, 8%, ${light}%)`;
  }

  function drawLevel(c) {
    const l = view.match.level;
    if (!l) return 0;
    const key = [c.x, c.z, c.s, canvas.width, canvas.height].join();
    if (!levelLayer || levelLayer.key !== key) {
      const layer = document.createElement("canvas");
      layer.width = canvas.width;
      layer.height = canvas.height;
      const g = layer.getContext("2d");
      g.lineJoin = "round";
      l.tris.forEach((t) => {
        const [ax, ay] = view.toCanvas(t[0], t[1]);
        const [bx, by] = view.toCanvas(t[2], t[3]);
        const [cx, cy] = view.toCanvas(t[4], t[5]);
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

  function draw() {
    const m = view.match;
    const f = frame(view.tick);
    setCamera(camera());
    const drawn = { tick: view.tick, players: [], rewound: [], ray: null, point: null, level: null };
    ctx.fillStyle = "#0b0d10";
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    // The level (or the arena's floor), and a 10 m grid over it.
    const [x0, z0, x1, z1] = bounds(m);
    if (!(m.arena[0] === 0 && m.arena[2] === 0)) box(m.arena, "rgba(255,255,255,0.03)", "#2f3944");
    if (m.level) drawn.level = { name: m.level.name, triangles: drawLevel(view.camera) };
    ctx.lineWidth = 1;
    for (let x = Math.ceil(x0 / 10) * 10; x <= x1; x += 10) line([[x, z0], [x, z1]], "rgba(255,255,255,0.06)", 1);
    for (let z = Math.ceil(z0 / 10) * 10; z <= z1; z += 10) line([[x0, z], [x1, z]], "rgba(255,255,255,0.06)", 1);
    view.drawn = drawn;
    if (!f) return;
    (f.s || []).forEach((s) => box([s[1], s[2], s[3], s[4]], TEAM[s[0]] + "55", TEAM[s[0]]));
    const shot = selected();
    const present = new Map(f.p.map((p) => [p[0], p]));
    // The rewound hitboxes, and a line from each to where it is now.
    if (shot && shot.rewound) {
      shot.rewound.forEach(([i, x, z, y, crouched]) => {
        const now = present.get(i);
        if (now) line([[x, z], [now[1], now[2]]], TEAM[teamOf(i)] + "88", 1);
        circle(x, z, markerRadius(i, crouched), TEAM[teamOf(i)] + "33", TEAM[teamOf(i)], [5, 4]);
        drawn.rewound.push(name(i) + (crouched ? " (crouched)" : ""));
      });
    }
    // Present hitboxes, facing their aim; a crouched one smaller, and the
    // height of any not on the ground floor.
    f.p.forEach(([i, x, z, yaw, y, crouched]) => {
      const r = radiusOf(i);
      circle(x, z, markerRadius(i, crouched), TEAM[teamOf(i)]);
      line([[x, z], [x + Math.sin(yaw) * r * 2.2, z + Math.cos(yaw) * r * 2.2]], "#e5e7eb", 2);
      const [cx, cy] = view.toCanvas(x, z);
      ctx.fillStyle = "#e5e7eb";
      ctx.font = "12px system-ui, sans-serif";
      ctx.fillText(name(i) + label(y, crouched), cx + 8, cy - 8);
      drawn.players.push(name(i));
    });
    (f.o || []).forEach(([x, z]) => circle(x, z, 0.15, "#fde68a"));
    // The other shots decided this tick, faintly; the selected one bold.
    m.shots.forEach((s, k) => {
      if (s.tick !== view.tick || s === shot || s.result === "invalid") return;
      line(s.path || [[s.origin[0], s.origin[2]], [s.point[0], s.point[2]]], RAY[s.result] + "66", 1);
    });
    if (shot && shot.result !== "invalid") {
      const path = shot.path || [[shot.origin[0], shot.origin[2]], [shot.point[0], shot.point[2]]];
      line(path, RAY[shot.result], 3);
      drawn.ray = path;
      if (shot.target >= 0) {
        const t = present.get(shot.target);
        if (t) circle(t[1], t[2], radiusOf(shot.target) + 0.25, null, RAY.hit);
      }
      circle(shot.point[0], shot.point[2], 0.25, RAY[shot.result]);
      drawn.point = view.toCanvas(shot.point[0], shot.point[2]);
    }
    view.drawn = drawn;
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
      ["shot-who", "shot-weapon", "shot-result", "shot-rewind", "shot-clamp"].forEach((id) => ($(id).textContent = ""));
      Object.assign(el.dataset, { shot: "", tick: "", result: "", shooter: "", target: "" });
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
    }
    $("shot-result").textContent = result;
    $("shot-result").className = shot.result;
    $("shot-rewind").textContent = shot.result === "invalid" ? "" :
      "rewound " + fmt(shot.lag) + " ticks (" + Math.round((shot.lag * 1000) / m.tick_rate) + " ms), to tick " + fmt(shot.view);
    $("shot-clamp").textContent = shot.clamp ? "its client claimed " + fmt(shot.claimed) + " ticks; cut by " + shot.clamp : "";
    Object.assign(el.dataset, { shot: String(view.shot), tick: String(shot.tick), result: shot.result,
      shooter: name(shot.shooter), target });
  }

  function show() {
    const m = view.match;
    view.tick = Math.max(m.first, Math.min(view.tick, lastTick()));
    $("timeline").min = m.first;
    $("timeline").max = lastTick();
    $("timeline").value = view.tick;
    draw();
    panels();
    const hash = selected() ? "#shot=" + view.shot : "#tick=" + view.tick;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  // --- navigation --------------------------------------------------------

  function goTick(t) {
    view.tick = t;
    view.shot = view.match.shots.findIndex((s) => s.tick === t && (!$("hits-only").checked || s.result === "hit"));
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
    const hitsOnly = $("hits-only").checked;
    let k = view.shot;
    if (k < 0) { // from the tick shown: the first shot at or after it, or the last before it
      const i = shots.findIndex((s) => s.tick >= view.tick);
      k = dir > 0 ? (i < 0 ? shots.length : i) - 1 : (i < 0 ? shots.length : i);
    }
    for (k += dir; k >= 0 && k < shots.length; k += dir) {
      if (!hitsOnly || shots[k].result === "hit") return goShot(k);
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
        z: () => { $("zoom-shot").checked = !$("zoom-shot").checked; show(); } }[e.key];
      if (k) { e.preventDefault(); k(); }
    });
    window.addEventListener("hashchange", fromHash);
    window.addEventListener("resize", () => { layout(); show(); });
    $("zoom-shot").onchange = () => show();
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
    if (m[1] === "shot") goShot(Number(m[2])); else goTick(Number(m[2]));
    return true;
  }

  function title() {
    const m = view.match;
    let t = "room " + m.room + " · " + m.tick_rate + " Hz · window " + m.window_ticks + " ticks · " + m.players.length + " players · " + m.shots.length + " shot decisions";
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
