// Writes the level package's glTF fixtures with glTF Transform, and beside
// each one <name>.expected.json: the world-space triangles and markers that
// the file holds, computed here from glTF Transform's own scene graph
// (getWorldMatrix, getBounds), independently of the Go reader.
//
//   cd level/testdata/gen && npm ci && node gen.mjs
import { Document, NodeIO, Primitive, VertexLayout, getBounds } from '@gltf-transform/core';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

const OUT = join(import.meta.dirname, '..');
const BOTH = 3, MOVEMENT = 1, SHOTS = 2;

// ---- small helpers -------------------------------------------------------

function quatY(deg) { const h = (deg * Math.PI) / 360; return [0, Math.sin(h), 0, Math.cos(h)]; }
function quatZ(deg) { const h = (deg * Math.PI) / 360; return [0, 0, Math.sin(h), Math.cos(h)]; }

// A column-major 4×4 applied to a point / a direction.
function point(m, p) {
  return [0, 1, 2].map((r) => m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2] + m[12 + r]);
}
function dir(m, p) { return [0, 1, 2].map((r) => m[r] * p[0] + m[4 + r] * p[1] + m[8 + r] * p[2]); }
function det3(m) {
  return m[0] * (m[5] * m[10] - m[9] * m[6]) - m[4] * (m[1] * m[10] - m[9] * m[2]) + m[8] * (m[1] * m[6] - m[5] * m[2]);
}

function mesh(doc, buf, name, prims, extras) {
  const m = doc.createMesh(name);
  if (extras) m.setExtras(extras);
  for (const p of prims) {
    const prim = doc.createPrimitive().setMode(p.mode ?? Primitive.Mode.TRIANGLES);
    prim.setAttribute('POSITION', doc.createAccessor().setType('VEC3').setArray(new Float32Array(p.pos)).setBuffer(buf).setSparse(!!p.sparse));
    if (p.normals) {
      const n = new Float32Array(p.pos.length);
      for (let i = 1; i < n.length; i += 3) n[i] = 1;
      prim.setAttribute('NORMAL', doc.createAccessor().setType('VEC3').setArray(n).setBuffer(buf));
    }
    if (p.idx) prim.setIndices(doc.createAccessor().setType('SCALAR').setArray(p.idx).setBuffer(buf));
    m.addPrimitive(prim);
  }
  return m;
}

// A box from lo to hi: 8 corners, 12 triangles facing out.
function boxPrim(lo, hi, IndexArray = Uint16Array, normals = false) {
  const pos = [];
  for (let i = 0; i < 8; i++) pos.push(i & 1 ? hi[0] : lo[0], i & 2 ? hi[1] : lo[1], i & 4 ? hi[2] : lo[2]);
  const faces = [[0, 4, 6, 2], [1, 3, 7, 5], [0, 1, 5, 4], [2, 6, 7, 3], [0, 2, 3, 1], [4, 5, 7, 6]];
  const idx = [];
  for (const f of faces) idx.push(f[0], f[1], f[2], f[0], f[2], f[3]);
  return { pos, idx: new IndexArray(idx), normals };
}

// A horizontal quad at height y, facing up.
function floorPrim(x0, z0, x1, z1, y, IndexArray = Uint16Array) {
  return { pos: [x0, y, z0, x0, y, z1, x1, y, z1, x1, y, z0], idx: new IndexArray([0, 1, 2, 0, 2, 3]) };
}

// Triangles of a primitive in its mesh's space, as the glTF specification
// defines each mode; null for modes that are not triangles.
function localTriangles(prim) {
  const pos = prim.getAttribute('POSITION');
  const n = pos.getCount();
  const ix = prim.getIndices();
  const order = ix ? Array.from(ix.getArray()) : [...Array(n).keys()];
  const v = (i) => pos.getElement(order[i], []);
  const out = [];
  switch (prim.getMode()) {
    case Primitive.Mode.TRIANGLES:
      for (let i = 0; i + 2 < order.length; i += 3) out.push([v(i), v(i + 1), v(i + 2)]);
      return out;
    case Primitive.Mode.TRIANGLE_STRIP:
      for (let i = 0; i + 2 < order.length; i++) out.push(i % 2 === 0 ? [v(i), v(i + 1), v(i + 2)] : [v(i + 1), v(i), v(i + 2)]);
      return out;
    case Primitive.Mode.TRIANGLE_FAN:
      for (let i = 1; i + 1 < order.length; i++) out.push([v(i), v(i + 1), v(0)]);
      return out;
  }
  return null;
}

// expected describes what a level reader must find in doc, given which
// nodes are collision (name → blocks) and which are markers.
function expected(doc, collision, markers) {
  const nodes = doc.getRoot().listNodes();
  const byName = new Map(nodes.map((n) => [n.getName(), n]));
  const get = (name) => {
    const n = byName.get(name);
    if (!n) throw new Error('no node ' + name);
    return n;
  };
  const triangles = [];
  for (const [name, blocks] of Object.entries(collision)) {
    const node = get(name);
    const w = node.getWorldMatrix();
    const flip = det3(w) < 0;
    for (const prim of node.getMesh().listPrimitives()) {
      const tris = localTriangles(prim);
      if (!tris) continue;
      for (const t of tris) {
        const [a, b, c] = t.map((p) => point(w, p));
        triangles.push({ node: name, blocks, v: flip ? [a, c, b] : [a, b, c] });
      }
    }
  }
  const volume = (name) => {
    const node = get(name);
    if (node.getMesh()) return getBounds(node);
    const w = node.getWorldMatrix();
    const min = [Infinity, Infinity, Infinity], max = [-Infinity, -Infinity, -Infinity];
    for (let c = 0; c < 8; c++) {
      const p = point(w, [c & 1 ? 1 : -1, c & 2 ? 1 : -1, c & 4 ? 1 : -1]);
      for (let k = 0; k < 3; k++) { min[k] = Math.min(min[k], p[k]); max[k] = Math.max(max[k], p[k]); }
    }
    return { min, max };
  };
  const origin = (name) => point(get(name).getWorldMatrix(), [0, 0, 0]);
  return {
    triangles,
    spawns: markers.spawns.map(([name, team]) => {
      const f = dir(get(name).getWorldMatrix(), [0, 0, 1]);
      return { node: name, team, pos: origin(name), yaw: Math.atan2(f[0], f[2]) };
    }),
    bounds: volume(markers.bounds),
    kill: (markers.kill ?? []).map((name) => ({ node: name, ...volume(name) })),
    waypoints: (markers.waypoints ?? []).map(([name, id]) => ({ node: name, id, pos: origin(name) })),
    edges: markers.edges ?? [],
  };
}

const io = new NodeIO().setVertexLayout(VertexLayout.INTERLEAVED);

// ---- marked.glb: render and collision in one file, every convention -------
{
  const doc = new Document();
  const buf = doc.createBuffer();
  const scene = doc.createScene('Scene');
  doc.getRoot().setDefaultScene(scene);
  const level = doc.createNode('Level').setTranslation([0, 0.5, 0]);
  scene.addChild(level);

  // Render-only: unmarked meshes in a file that marks its collision.
  level.addChild(doc.createNode('Ground_render').setMesh(mesh(doc, buf, 'ground', [floorPrim(-30, -30, 30, 30, -0.5)])));
  level.addChild(doc.createNode('spawn_room').setMesh(mesh(doc, buf, 'room', [boxPrim([20, 0, 20], [22, 2, 22])])));

  // Collision marked by a parent's name: every mesh below col_world.
  const world = doc.createNode('col_world').setTranslation([0, -0.5, 0]);
  level.addChild(world);
  world.addChild(doc.createNode('Floor').setMesh(mesh(doc, buf, 'floor', [floorPrim(-10, -10, 10, 10, 0)])));
  // A ramp: a strip under a rotation about Z.
  world.addChild(doc.createNode('Ramp').setTranslation([-8, 0, 6]).setRotation(quatZ(20)).setMesh(mesh(doc, buf, 'ramp', [
    { pos: [0, 0, 0, 0, 0, 2, 2, 0, 0, 2, 0, 2, 4, 0, 0, 4, 0, 2], mode: Primitive.Mode.TRIANGLE_STRIP, normals: true },
  ])));
  // Mirrored (negative scale): its triangles' winding flips.
  const mirrored = doc.createNode('Mirrored').setTranslation([6, 0, -6]).setScale([-1, 1, 1]);
  world.addChild(mirrored);
  mirrored.setMesh(mesh(doc, buf, 'crate', [boxPrim([0, 0, 0], [1, 1, 1], Uint32Array)]));
  // Nested transforms: a parent turned and scaled, a child moved.
  const tower = doc.createNode('Tower').setTranslation([7, 0, 7]).setRotation(quatY(45)).setScale([1, 2, 1]);
  world.addChild(tower);
  tower.addChild(doc.createNode('TowerBlock').setTranslation([0.5, 0, 0]).setMesh(mesh(doc, buf, 'block', [boxPrim([-0.5, 0, -0.5], [0.5, 1, 0.5])])));

  // A window (movement only) by name, as a fan with byte indices.
  level.addChild(doc.createNode('col_window_1').setTranslation([0, -0.5, -9]).setMesh(mesh(doc, buf, 'window', [
    { pos: [0, 1, 0, -1, 0, 0, 1, 0, 0, 1, 2, 0, -1, 2, 0], idx: new Uint8Array([0, 1, 2, 3, 4, 1]), mode: Primitive.Mode.TRIANGLE_FAN },
  ])));
  // A shot clip (shots only) by node extras.
  level.addChild(doc.createNode('Glass').setTranslation([0, -0.5, 9]).setExtras({ rewind: 'collision', rewind_blocks: 'shots' })
    .setMesh(mesh(doc, buf, 'glass', [{ pos: [-1, 0, 0, 1, 0, 0, 1, 2, 0, -1, 2, 0], idx: new Uint16Array([0, 1, 2, 0, 2, 3]) }])));
  // A pillar marked by its mesh's extras; its lines primitive is skipped.
  level.addChild(doc.createNode('Pillar').setTranslation([-6, -0.5, -6]).setMesh(mesh(doc, buf, 'pillar', [
    boxPrim([0, 0, 0], [1, 3, 1]),
    { pos: [0, 0, 0, 0, 3, 0], mode: Primitive.Mode.LINES },
  ], { rewind: 'collision' })));

  // Spawns: by name, under a turned parent, and by extras.
  level.addChild(doc.createNode('spawn_t1_a').setTranslation([-5, -0.5, -5]).setRotation(quatY(30)));
  level.addChild(doc.createNode('spawn_t1_b').setTranslation([-3, -0.5, -5]));
  const team2 = doc.createNode('Team2').setTranslation([5, -0.5, 5]).setRotation(quatY(180));
  level.addChild(team2);
  team2.addChild(doc.createNode('spawn_t2_a').setTranslation([1, 0, 0]));
  level.addChild(doc.createNode('Marker.003').setTranslation([3, -0.5, 5]).setRotation(quatY(-90)).setExtras({ rewind: 'spawn', rewind_team: 2 }));

  // Bounds: an empty whose scale is the half size. A kill volume: a mesh's box.
  level.addChild(doc.createNode('bounds').setTranslation([0, 4.5, 0]).setScale([10, 10, 10]));
  level.addChild(doc.createNode('killvolume_pit').setMesh(mesh(doc, buf, 'pit', [boxPrim([-10, -8, -10], [10, -4, 10])])));

  // Waypoints: links in names, and in extras.
  level.addChild(doc.createNode('wp_a__b__c_jump').setTranslation([-5, -0.5, 0]));
  level.addChild(doc.createNode('wp_b').setTranslation([0, -0.5, 0]));
  level.addChild(doc.createNode('WP C').setTranslation([5, 0.5, 0]).setExtras({ rewind: 'waypoint', rewind_id: 'c', rewind_links: 'b_crouch_oneway' }));

  writeFileSync(join(OUT, 'marked.glb'), await io.writeBinary(doc));
  // The same document laid out otherwise: JSON, attributes in separate
  // buffer views, buffers as data: URIs. Its level's digest is the same.
  const separate = await new NodeIO().setVertexLayout(VertexLayout.SEPARATE).writeJSON(doc, { format: 'gltf' });
  for (const b of separate.json.buffers) {
    b.uri = 'data:application/octet-stream;base64,' + Buffer.from(separate.resources[b.uri]).toString('base64');
  }
  writeFileSync(join(OUT, 'marked-separate.gltf'), JSON.stringify(separate.json, null, 1) + '\n');
  const exp = expected(doc,
    { Floor: BOTH, Ramp: BOTH, Mirrored: BOTH, TowerBlock: BOTH, col_window_1: MOVEMENT, Glass: SHOTS, Pillar: BOTH },
    {
      spawns: [['spawn_t1_a', 1], ['spawn_t1_b', 1], ['spawn_t2_a', 2], ['Marker.003', 2]],
      bounds: 'bounds', kill: ['killvolume_pit'],
      waypoints: [['wp_a__b__c_jump', 'a'], ['wp_b', 'b'], ['WP C', 'c']],
      edges: [['a', 'b', false, false], ['a', 'c', true, false], ['b', 'a', false, false], ['c', 'a', true, false], ['c', 'b', false, true]],
    });
  writeFileSync(join(OUT, 'marked.expected.json'), JSON.stringify(exp) + '\n');
}

// ---- collision-only.gltf (+ .bin): nothing marked, so every mesh blocks ----
{
  const doc = new Document();
  const buf = doc.createBuffer().setURI('collision-only.bin');
  const scene = doc.createScene('Scene');
  doc.getRoot().setDefaultScene(scene);
  const ground = doc.createNode('Ground_matrix').setMatrix([2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0, 0, -1, 0, 1]);
  ground.setMesh(mesh(doc, buf, 'ground', [floorPrim(-8, -8, 8, 8, 1, Uint8Array)]));
  scene.addChild(ground);
  const turned = doc.createNode('Turned_matrix').setMatrix([0, 0, -1, 0, 0, 1, 0, 0, 1, 0, 0, 0, 3, 0, 0, 1]);
  scene.addChild(turned);
  turned.addChild(doc.createNode('Wall').setTranslation([0, 0, 4]).setMesh(mesh(doc, buf, 'wall', [boxPrim([-2, 0, -0.25], [2, 3, 0.25], Uint8Array, true)])));
  scene.addChild(doc.createNode('render_decor').setMesh(mesh(doc, buf, 'decor', [boxPrim([0, 0, 0], [1, 1, 1])])));
  scene.addChild(doc.createNode('spawn_t1').setTranslation([-4, 0, -4]));
  scene.addChild(doc.createNode('spawn_t2').setTranslation([4, 0, -4]).setRotation(quatY(180)));
  scene.addChild(doc.createNode('bounds').setMesh(mesh(doc, buf, 'bounds', [boxPrim([-16, -2, -16], [16, 10, 16])])));

  const { json, resources } = await io.writeJSON(doc, { format: 'gltf' });
  matrices(doc, json);
  writeFileSync(join(OUT, 'collision-only.gltf'), JSON.stringify(json, null, 1) + '\n');
  for (const [uri, data] of Object.entries(resources)) writeFileSync(join(OUT, uri), data);
  const exp = expected(doc, { Ground_matrix: BOTH, Wall: BOTH },
    { spawns: [['spawn_t1', 1], ['spawn_t2', 2]], bounds: 'bounds' });
  writeFileSync(join(OUT, 'collision-only.expected.json'), JSON.stringify(exp) + '\n');
}

// ---- sparse.gltf: buffers as data: URIs, positions as a sparse accessor ----
{
  const doc = new Document();
  const buf = doc.createBuffer();
  const scene = doc.createScene('Scene');
  doc.getRoot().setDefaultScene(scene);
  // A fan around the origin: its centre vertex is the sparse accessor's zero.
  scene.addChild(doc.createNode('col_floor').setMesh(mesh(doc, buf, 'floor', [{
    pos: [0, 0, 0, -6, 0, -6, -6, 0, 6, 6, 0, 6, 6, 0, -6, -6, 0, -6],
    mode: Primitive.Mode.TRIANGLE_FAN, sparse: true,
  }])));
  scene.addChild(doc.createNode('spawn_t1_x').setTranslation([-2, 0, 0]));
  scene.addChild(doc.createNode('spawn_t2_x').setTranslation([2, 0, 0]));
  scene.addChild(doc.createNode('bounds').setScale([6, 4, 6]));

  const { json, resources } = await io.writeJSON(doc, { format: 'gltf' });
  for (const b of json.buffers) {
    b.uri = 'data:application/octet-stream;base64,' + Buffer.from(resources[b.uri]).toString('base64');
  }
  writeFileSync(join(OUT, 'sparse.gltf'), JSON.stringify(json) + '\n');
  const exp = expected(doc, { col_floor: BOTH }, { spawns: [['spawn_t1_x', 1], ['spawn_t2_x', 2]], bounds: 'bounds' });
  writeFileSync(join(OUT, 'sparse.expected.json'), JSON.stringify(exp) + '\n');
}

// matrices writes the nodes whose names end in _matrix with a matrix (glTF
// Transform's own composition of their transform) instead of TRS.
function matrices(doc, json) {
  const byName = new Map(doc.getRoot().listNodes().map((n) => [n.getName(), n]));
  json.nodes.forEach((jn) => {
    if (!jn.name?.endsWith('_matrix')) return;
    jn.matrix = Array.from(byName.get(jn.name).getMatrix());
    delete jn.translation; delete jn.rotation; delete jn.scale;
  });
}
