package movement

import (
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/trimesh"
)

// slide moves the capsule with feet at pos by vel for the tick, sliding
// along what it hits: Quake's PM_FlyMove and Source's TryPlayerMove, with
// Quake III's PM_SlideMove's clipping. Each bump sweeps the capsule along
// what is left of the motion; at a contact it stops Skin short (backoff),
// adds the contact's normal to the planes it has hit, and clips the
// velocity to go along all of them (clipPlanes): along one plane, along the
// crease of two, or not at all against three. It stops after maxBumps
// sweeps, when the velocity turns against the one it started with (which
// Quake does to avoid tiny oscillations in sloping corners), or when
// nothing is left to move. Every displacement is a sweep, so no speed and no tick
// rate tunnels through anything.
//
// ground is the ground's normal for a walker (zero in the air): the ground
// is a plane the velocity is never clipped into, and a contact too steep to
// stand on is a wall to a walker (its normal made horizontal), so that
// walking cannot climb it. It reports whether the capsule hit anything.
func (m *mover) slide(pos, vel geom.Vec3, crouched bool, ground geom.Vec3) (geom.Vec3, geom.Vec3, bool) {
	var planes [maxPlanes]geom.Vec3
	n := 0
	if ground != (geom.Vec3{}) {
		planes[0], n = ground, 1
	}
	primal, left, hit := vel, m.dt, false
	for range maxBumps {
		disp := vel.Scale(left)
		l := disp.Len()
		if !(l > minMove) {
			break
		}
		d := disp.Scale(1 / l)
		h, ok := m.sweep(pos, crouched, d, l)
		if !ok {
			pos = pos.Add(disp)
			break
		}
		hit = true
		along := -d.Dot(h.Normal)
		if h.T == 0 && !(along > 0) {
			// Touching a triangle it moves along or away from: trimesh
			// reports t = 0 for any motion then, and nothing beyond.
			// Rounding can leave a capsule there; push it off and retry.
			m.depenetrate(&pos, crouched)
			continue
		}
		if t := backoff(h.T, along, m.c.Skin); t > minMove {
			pos = pos.AddScaled(d, t)
			left -= left * (t / l)
		}

		normal := h.Normal
		if ground != (geom.Vec3{}) && normal.Y > 0 && normal.Y < m.walkable {
			normal = geom.V(normal.X, 0, normal.Z).Normalize()
		}
		same := false
		for _, p := range planes[:n] {
			if p.Dot(normal) > sameNormal {
				same = true
				break
			}
		}
		if same {
			if into := vel.Dot(normal); into < 0 {
				vel = vel.AddScaled(normal, -into)
			}
		} else {
			if n == maxPlanes {
				return pos, geom.Vec3{}, true // Quake: "this shouldn't really happen"
			}
			planes[n] = normal
			n++
			vel = clipPlanes(vel, planes[:n])
		}
		if vel.Dot(primal) <= 0 {
			return pos, geom.Vec3{}, true
		}
	}
	return pos, vel, hit
}

// clipPlanes returns v made to go along every plane it moves into (Quake
// III's PM_SlideMove): clipped to the first plane it enters; if that moves
// it into a second, along the crease of the two (their cross product); if
// the crease moves it into a third, zero.
func clipPlanes(v geom.Vec3, planes []geom.Vec3) geom.Vec3 {
	for i, pi := range planes {
		if v.Dot(pi) >= -slack {
			continue
		}
		cv := clip(v, pi)
		for j, pj := range planes {
			if j == i || cv.Dot(pj) >= -slack {
				continue
			}
			cv = clip(cv, pj)
			if cv.Dot(pi) >= -slack {
				continue
			}
			dir := pi.Cross(pj).Normalize()
			cv = dir.Scale(dir.Dot(v))
			for k, pk := range planes {
				if k != i && k != j && cv.Dot(pk) < -slack {
					return geom.Vec3{} // stop dead at a triple plane interaction
				}
			}
		}
		return cv
	}
	return v
}

// clip returns v without its component along the unit n.
func clip(v, n geom.Vec3) geom.Vec3 { return v.AddScaled(n, -v.Dot(n)) }

// stepSlide is a walker's slide with stepping (Quake's PM_GroundMove, Quake
// III's PM_StepSlideMove, Source's StepMove): if the plain slide hits
// something, it also tries the move StepHeight higher (as far up as there
// is room), then down onto what is there, and takes that only if it lands
// on ground (support: walkable, or perched on the step's nosing) no higher
// than StepHeight (and the skin) above the feet, and got further across
// than the plain slide. It reports whether the plain slide hit anything.
func (m *mover) stepSlide(pos, vel geom.Vec3, crouched bool, ground geom.Vec3) (geom.Vec3, geom.Vec3, bool) {
	p1, v1, blocked := m.slide(pos, vel, crouched, ground)
	if !blocked || m.c.StepHeight <= 0 {
		return p1, v1, blocked
	}
	lift := m.c.StepHeight
	if h, ok := m.sweep(pos, crouched, up, lift); ok {
		lift = backoff(h.T, -h.Normal.Y, m.c.Skin)
	}
	if lift <= 0 {
		return p1, v1, true
	}
	p2, v2, _ := m.slide(pos.Add(geom.V(0, lift, 0)), vel, crouched, ground)
	// What it lands on must hold it, no higher than a step: a round bottom
	// can perch on a nosing it could not step onto.
	held, _, t, top := m.ground(p2, geom.Vec3{}, crouched, lift+2*m.c.Skin)
	if !held || top > pos.Y+m.c.StepHeight+m.c.Skin {
		return p1, v1, true
	}
	m.rest(&p2, crouched, t)
	if horizontalSq(p2.Sub(pos)) <= horizontalSq(p1.Sub(pos)) {
		return p1, v1, true
	}
	return p2, v2, true
}

func horizontalSq(v geom.Vec3) float64 { return v.X*v.X + v.Z*v.Z }

// depenetrate pushes the capsule with feet at *pos off every triangle it
// touches, closer than Radius + minGap (QuakeWorld's NudgePosition, with
// trimesh's push-out directions): the deepest contact's triangle is pushed
// off to a full Skin, up to maxPushes times. It reports whether the capsule
// ends clear.
func (m *mover) depenetrate(pos *geom.Vec3, crouched bool) bool {
	var buf [contactRoom]trimesh.Contact
	r := m.c.Radius + minGap
	for i := 0; ; i++ {
		cs := m.overlap(*pos, crouched, r, buf[:0])
		if len(cs) == 0 {
			return true
		}
		if i == maxPushes {
			return false
		}
		deep := cs[0]
		for _, c := range cs[1:] {
			if c.Depth > deep.Depth {
				deep = c
			}
		}
		*pos = pos.AddScaled(deep.Normal, deep.Depth+m.c.Skin-minGap)
	}
}
