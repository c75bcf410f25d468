package replay_test

import (
	"bytes"
	"encoding/json"
	"math"
	"reflect"
	"strings"
	"testing"

	"github.com/rewind-gg/rewind/ecs"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/internal/matchtest"
	"github.com/rewind-gg/rewind/lagcomp"
	"github.com/rewind-gg/rewind/replay"
	"github.com/rewind-gg/rewind/systems"
	"github.com/rewind-gg/rewind/weapons"
)

// TestSetupRoundTrip checks that a setup goes through the header and back
// into the systems.Config it came from, field for field.
func TestSetupRoundTrip(t *testing.T) {
	sc, lvl := matchtest.RoomConfig(t)
	sc.FriendlyFire = true
	sc.SpreadSeed = math.MaxUint64 - 12345 // beyond 2^53: a JSON number would lose it
	sc.LagComp.ViewResolution = 8
	sc.EyeHeight = 1.0 / 3 // no short decimal
	mesh, err := lvl.Mesh()
	if err != nil {
		t.Fatal(err)
	}
	sc.Level = mesh
	setup, err := replay.NewSetup(sc, lvl)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	rec, err := replay.NewRecorder(replay.RecorderConfig{Writer: &buf, Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	rd := open(t, buf.Bytes())
	back := rd.Setup()
	if !reflect.DeepEqual(back, setup) {
		t.Fatalf("setup read back differs:\n got %+v\nwant %+v", back, setup)
	}
	if !strings.Contains(buf.String(), `"spread_seed":"18446744073709539270"`) {
		t.Errorf("the spread seed is not a string: %s", buf.String())
	}
	got, err := back.Config(nil)
	if err != nil {
		t.Fatal(err)
	}
	// Everything but the weapons (and their registry, code) is plain data.
	strip := func(c systems.Config) systems.Config {
		c.Kinds, c.Catalog, c.Weapons, c.Classes = nil, nil, nil, nil
		return c
	}
	if !reflect.DeepEqual(strip(got), strip(sc)) {
		t.Errorf("config\n got %+v\nwant %+v", strip(got), strip(sc))
	}
	sim, err := systems.New(got)
	if err != nil {
		t.Fatal(err)
	}
	if sim.Catalog.Len() != sc.Catalog.Len() || !reflect.DeepEqual(sim.Catalog.Classes(), sc.Catalog.Classes()) {
		t.Fatalf("catalogue: %d weapons %v, want %d %v", sim.Catalog.Len(), sim.Catalog.Classes(), sc.Catalog.Len(), sc.Catalog.Classes())
	}
	for id := range sc.Catalog.Len() {
		w, g := sc.Catalog.At(uint16(id)), sim.Catalog.At(uint16(id))
		if !reflect.DeepEqual(g, w) || sim.Catalog.KindOf(uint16(id)) != sc.Catalog.KindOf(uint16(id)) {
			t.Errorf("weapon %d:\n got %+v\nwant %+v", id, g, w)
		}
	}
}

// TestDefinitionJSONExact guards the weapons' part of the setup: every
// field of weapons.Definition, today's and any added later, must survive
// JSON bit for bit, or a replay would not be exact.
func TestDefinitionJSONExact(t *testing.T) {
	var d weapons.Definition
	n := 0
	fill(t, reflect.ValueOf(&d).Elem(), "Definition", &n)
	data, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	var back weapons.Definition
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, d) {
		t.Errorf("through JSON\n got %+v\nwant %+v", back, d)
	}
}

// fill gives every field a distinct value, the floats ones without a short
// decimal.
func fill(t *testing.T, v reflect.Value, path string, n *int) {
	*n++
	switch v.Kind() {
	case reflect.Float64:
		v.SetFloat(float64(*n) + 1.0/3)
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(int64(*n))
	case reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		v.SetUint(uint64(*n))
	case reflect.String:
		v.SetString("s" + strings.Repeat("x", *n))
	case reflect.Bool:
		v.SetBool(true)
	case reflect.Array:
		for i := range v.Len() {
			fill(t, v.Index(i), path, n)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if !v.Type().Field(i).IsExported() {
				t.Fatalf("%s.%s is unexported: JSON would not record it", path, v.Type().Field(i).Name)
			}
			fill(t, v.Field(i), path+"."+v.Type().Field(i).Name, n)
		}
	case reflect.Map:
		if v.Type().Key().Kind() != reflect.String {
			t.Fatalf("%s: a map keyed by %v", path, v.Type().Key())
		}
		m := reflect.MakeMap(v.Type())
		val := reflect.New(v.Type().Elem()).Elem()
		fill(t, val, path+"[]", n)
		m.SetMapIndex(reflect.ValueOf("k"), val)
		v.Set(m)
	case reflect.Slice:
		s := reflect.MakeSlice(v.Type(), 1, 1)
		fill(t, s.Index(0), path+"[]", n)
		v.Set(s)
	default:
		t.Fatalf("%s: a %v field: teach the setup to record it", path, v.Kind())
	}
}

func TestSetupRefusesNonFinite(t *testing.T) {
	sc, lvl := matchtest.RoomConfig(t)
	sc.EyeHeight = math.Inf(1)
	if _, err := replay.NewSetup(sc, lvl); err == nil || !strings.Contains(err.Error(), "eye_height") {
		t.Errorf("an infinite eye height: %v", err)
	}
}

// beam is a custom kind: a shot that only ever misses.
type beam struct{ env *weapons.Env }

func (k *beam) Spawn(s *weapons.Shot) { k.env.NewShot(s) }

func (k *beam) Resolve(at ecs.ViewTime, items []lagcomp.Item) {
	for _, it := range items {
		lc, owner, _, shot := k.env.ShotOf(it.Entity)
		lc.Done = true
		k.env.Miss(shot, owner.Entity, at, geom.Vec3{})
	}
}

func beamRegistry(t *testing.T, before ...string) *weapons.Registry {
	reg := weapons.NewRegistry()
	for _, name := range append(before, "beam") {
		if err := reg.Register(name, func(env *weapons.Env) weapons.Kind { return &beam{env: env} },
			weapons.Param{Name: "power", Default: 2, Min: 0, Max: 10}); err != nil {
			t.Fatal(err)
		}
	}
	return reg
}

// TestCustomKind records a match whose weapon is a kind registered in
// code: it replays with a registry that registers it, and fails naming it
// without one.
func TestCustomKind(t *testing.T) {
	sc := systems.DefaultConfig()
	sc.Kinds = beamRegistry(t)
	sc.Weapons = []weapons.Definition{{Name: "ray", Kind: "beam", Damage: 5, FireInterval: 2}}
	setup, err := replay.NewSetup(sc, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"", "", "", "", "beam"}; !reflect.DeepEqual(setup.Kinds, want) ||
		setup.Weapons[0].Params["power"] != 2 {
		t.Fatalf("kinds %q, params %v", setup.Kinds, setup.Weapons[0].Params)
	}
	var buf bytes.Buffer
	rec, err := replay.NewRecorder(replay.RecorderConfig{Writer: &buf, Setup: setup})
	if err != nil {
		t.Fatal(err)
	}
	sim, err := systems.New(sc)
	if err != nil {
		t.Fatal(err)
	}
	spec := systems.PlayerSpec{Name: "a", Team: 1, Controlled: true, Health: 100, Loadout: []uint16{0}}
	e := sim.SpawnPlayer(spec)
	rec.SpawnPlayer(spec, e)
	for range 20 {
		in := ecs.Input{Tick: sim.Now(), Buttons: ecs.ButtonFire, ViewTime: ecs.ViewTimeOf(float64(sim.Now()) - 2)}
		rec.Input(e, in, sim.QueueInput(e, in))
		sim.Step()
		rec.Step(sim.Now()-1, sim.Events)
	}
	rec.End("finished", nil)
	if err := rec.Close(); err != nil {
		t.Fatal(err)
	}
	_, err = replay.Run(open(t, buf.Bytes()), replay.Config{})
	if err == nil || !strings.Contains(err.Error(), `weapon kind "beam" is not registered`) {
		t.Errorf("without the kind: %v", err)
	}
	_, err = replay.Run(open(t, buf.Bytes()), replay.Config{Kinds: beamRegistry(t, "zap")})
	if err == nil || !strings.Contains(err.Error(), `"beam" is kind 5 in the registry, 4 when recorded`) {
		t.Errorf("registered in another order: %v", err)
	}
	res, err := replay.Run(open(t, buf.Bytes()), replay.Config{Kinds: beamRegistry(t)})
	if err != nil || !res.Verified || res.Ticks != 20 || res.Shots != 10 {
		t.Errorf("with the kind: %+v, %v; want 20 ticks verified, 10 shots", res, err)
	}
}
