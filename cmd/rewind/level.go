package main

import (
	"fmt"
	"io"
	"math"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rewind-gg/rewind/examples/levels"
	"github.com/rewind-gg/rewind/geom"
	"github.com/rewind-gg/rewind/level"
	"github.com/rewind-gg/rewind/server"
)

func newLevelCmd(stdout io.Writer) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "level",
		Short: "Levels: read and check a map made in Blender, Unity, Unreal or Godot (glTF 2.0)",
		Args:  cobra.NoArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newLevelInspectCmd(stdout))
	return cmd
}

func newLevelInspectCmd(stdout io.Writer) *cobra.Command {
	var check level.CheckConfig
	cmd := &cobra.Command{
		Use:   "inspect FILE|arena|courtyard",
		Short: "Read a level (.glb or .gltf) and print what it holds, its digest and its warnings",
		Long: `Read a level from a .glb or .gltf file by the conventions of docs/levels.md and
print its name, content digest, triangle counts (all, blocking movement,
blocking shots), bounds, spawns by team, kill volumes, waypoints, and the
warnings of reading and checking it, each naming its node. "arena" inspects
the built-in arena (the default config's), "courtyard" the sample map built
into the binary. A file that cannot be read, or whose level fails its checks,
exits 1 with the error.`,
		Example: `  rewind level inspect maps/courtyard.glb
  rewind level inspect arena
  rewind level inspect courtyard
  rewind level inspect maps/courtyard.gltf --teams 4 --radius 0.5`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return &exitError{code: 2, msg: "level inspect: expected one argument, the level file or arena (rewind level inspect FILE)"}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var l *level.Level
			var warns []level.Warning
			var err error
			switch file, data := levelFile(args[0]); {
			case args[0] == level.ArenaName:
				l = level.DefaultArena()
				warns, err = l.Check(check)
			case data != nil: // a sample map built in, by name
				l, warns, err = level.ReadBytes(file, data, level.Options{Check: check})
			default:
				l, warns, err = level.ReadFile(file, level.Options{Check: check})
			}
			if err != nil {
				var b strings.Builder
				b.WriteString(err.Error())
				for _, w := range warns {
					b.WriteString("\nwarning: " + w.String())
				}
				return &exitError{code: 1, msg: b.String()}
			}
			_, err = io.WriteString(stdout, inspect(l, warns))
			return err
		},
	}
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return &exitError{code: 2, msg: "level inspect: " + err.Error()}
	})
	f := cmd.Flags()
	f.IntVar(&check.Teams, "teams", 2, "teams that must each have a spawn")
	f.Float64Var(&check.Radius, "radius", 0.4, "the standing capsule's radius, metres (match.radius)")
	f.Float64Var(&check.Height, "height", 1.8, "the standing capsule's height, metres (match.height)")
	f.Float64Var(&check.FloorDistance, "floor-distance", 2, "how far under a spawn's feet a floor must be, metres")
	return cmd
}

// inspect is the report of rewind level inspect.
func inspect(l *level.Level, warns []level.Warning) string {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format, args...) }
	total, movement, shots := l.Counts()
	p("level      %s\n", l.Name)
	p("digest     %s\n", l.Digest())
	p("triangles  %d (blocking movement %d, blocking shots %d)\n", total, movement, shots)
	p("bounds     %s to %s\n", vec(l.Bounds.Min), vec(l.Bounds.Max))
	var teams []string
	for _, t := range l.Teams() {
		teams = append(teams, fmt.Sprintf("team %d: %d", t, len(l.SpawnsOf(t))))
	}
	p("spawns     %d (%s)\n", len(l.Spawns), strings.Join(teams, ", "))
	for _, t := range l.Teams() {
		for _, s := range l.SpawnsOf(t) {
			p("  team %d  %s yaw %s%s\n", s.Team, vec(s.Pos), degrees(s.Yaw), from(l, s.Source))
		}
	}
	p("kill       %d\n", len(l.KillVolumes))
	for _, k := range l.KillVolumes {
		p("  %s to %s%s\n", vec(k.Box.Min), vec(k.Box.Max), from(l, k.Source))
	}
	if wp := l.Waypoints; wp == nil {
		p("waypoints  none\n")
	} else {
		p("waypoints  %d, %d edges\n", len(wp.Nodes), len(wp.Edges))
		for i, w := range wp.Nodes {
			var to []string
			for _, e := range wp.Edges {
				if int(e.From) != i {
					continue
				}
				s := wp.Nodes[e.To].ID
				if e.Jump {
					s += " (jump)"
				}
				if e.Crouch {
					s += " (crouch)"
				}
				to = append(to, s)
			}
			p("  %-8s %s → %s%s\n", w.ID, vec(w.Pos), strings.Join(to, ", "), from(l, w.Source))
		}
	}
	p("warnings   %d\n", len(warns))
	for _, w := range warns {
		p("  %s\n", w)
	}
	return b.String()
}

// from names the node a thing came from, if it came from one.
func from(l *level.Level, src int32) string {
	if src < 0 {
		return ""
	}
	return "  " + l.SourceOf(src)
}

func vec(v geom.Vec3) string { return fmt.Sprintf("(%g, %g, %g)", v.X, v.Y, v.Z) }

// degrees shows a yaw in (−180°, 180°], rounded to a hundredth.
func degrees(yaw float64) string {
	d := math.Mod(yaw*180/math.Pi, 360)
	if d > 180 {
		d -= 360
	} else if d <= -180 {
		d += 360
	}
	return fmt.Sprintf("%g°", math.Round(d*100)/100)
}

// levelFile resolves a --level: a sample map built into the binary by its
// name (courtyard: its file name and bytes), anything else a file (or
// arena), read where it is (nil data).
func levelFile(name string) (string, []byte) {
	if file, data, ok := levels.Lookup(name); ok {
		return file, data
	}
	return name, nil
}

// serverLevel is the server's level config for a --level.
func serverLevel(name string) server.LevelConfig {
	file, data := levelFile(name)
	return server.LevelConfig{File: file, Data: data}
}
