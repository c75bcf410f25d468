package main

// Tests of the deploy kit (Dockerfile, deploy/agones/*.yaml, docs/deploy.md):
// what can be checked without a Docker engine or a Kubernetes cluster.
// Helpers are prefixed deploy, to stay clear of the package's other tests.

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"fmt"
	"maps"
	"net"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"reflect"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	kyaml "github.com/knadh/koanf/parsers/yaml"

	"github.com/rewind-gg/rewind/internal/docvec"
	"github.com/rewind-gg/rewind/server"
)

// deployRoot is the repository root, from this package's directory.
const deployRoot = "../.."

// deployInstr is one Dockerfile instruction (continuation lines joined).
type deployInstr struct {
	op   string // upper case: FROM, RUN, COPY, ...
	args string
}

// deployStage is one build stage: FROM base [AS name] and what follows.
type deployStage struct {
	base, name string
	instrs     []deployInstr
}

// deployDockerfile parses the Dockerfile into its stages.
func deployDockerfile(t *testing.T) []deployStage {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployRoot, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	cur := ""
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue // comments may also sit between continuation lines
		}
		if s, ok := strings.CutSuffix(l, `\`); ok {
			cur += s + " "
			continue
		}
		lines = append(lines, cur+l)
		cur = ""
	}
	if cur != "" {
		t.Fatalf("Dockerfile: a continuation line ends the file: %q", cur)
	}
	var stages []deployStage
	for _, l := range lines {
		op, args, _ := strings.Cut(l, " ")
		op, args = strings.ToUpper(op), strings.TrimSpace(args)
		if op == "FROM" {
			f := strings.Fields(args)
			for len(f) > 0 && strings.HasPrefix(f[0], "--") { // --platform=...
				f = f[1:]
			}
			if len(f) == 0 {
				t.Fatalf("Dockerfile: FROM without an image")
			}
			st := deployStage{base: f[0]}
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				st.name = f[2]
			}
			stages = append(stages, st)
			continue
		}
		if len(stages) == 0 {
			if op == "ARG" {
				continue
			}
			t.Fatalf("Dockerfile: %s before the first FROM", op)
		}
		s := &stages[len(stages)-1]
		s.instrs = append(s.instrs, deployInstr{op: op, args: args})
	}
	return stages
}

// all returns the arguments of every instruction op of the stage.
func (s *deployStage) all(op string) []string {
	var out []string
	for _, in := range s.instrs {
		if in.op == op {
			out = append(out, in.args)
		}
	}
	return out
}

// deployArgRef is a reference to a build argument in a command: ${NAME}.
var deployArgRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// deployWords splits a shell command into words, with '…' and "…" quoting,
// ${NAME} replaced by args[NAME] (a build argument the stage declares), and
// nothing else: a command that needs more of a shell than that (other
// variables, &&, pipes) is refused, so that the test runs exactly the
// command the image runs.
func deployWords(cmd string, args map[string]string) ([]string, error) {
	var unknown []string
	cmd = deployArgRef.ReplaceAllStringFunc(cmd, func(ref string) string {
		name := deployArgRef.FindStringSubmatch(ref)[1]
		v, ok := args[name]
		if !ok {
			unknown = append(unknown, name)
		}
		return v
	})
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%q: ${%s} is no ARG of the stage", cmd, strings.Join(unknown, "}, ${"))
	}
	if strings.ContainsAny(cmd, "$`;&|<>\\") {
		return nil, fmt.Errorf("%q: more than plain words", cmd)
	}
	var words []string
	var w strings.Builder
	inWord := false
	var quote rune
	for _, r := range cmd {
		switch {
		case quote != 0 && r == quote:
			quote = 0
		case quote != 0:
			w.WriteRune(r)
		case r == '"' || r == '\'':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words, inWord = append(words, w.String()), false
				w.Reset()
			}
		default:
			w.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("%q: unclosed quote", cmd)
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}

// deployImage is what the Dockerfile says about the image it builds.
type deployImage struct {
	final      deployStage
	buildRun   string            // the go build command, as the Dockerfile has it
	buildArgs  map[string]string // the build stage's ARGs, with their defaults
	buildCmd   []string          // the go build command, words, the ARGs at their defaults: CGO_ENABLED=0 go build ...
	binary     string            // where the build writes the binary (-o)
	uid, gid   int64
	entrypoint []string
	exposed    []string // EXPOSE's port/protocol, lower case
}

// deployReadImage checks the Dockerfile's shape and returns what the other
// tests compare against.
func deployReadImage(t *testing.T) deployImage {
	t.Helper()
	stages := deployDockerfile(t)
	if len(stages) < 2 {
		t.Fatalf("Dockerfile: %d stage(s), want a build stage and a run stage", len(stages))
	}
	img := deployImage{final: stages[len(stages)-1]}
	fin := &img.final
	if fin.base != "scratch" {
		t.Errorf("Dockerfile: the final stage is FROM %s, want FROM scratch (no shell, no libc)", fin.base)
	}
	if runs := fin.all("RUN"); len(runs) > 0 {
		t.Errorf("Dockerfile: RUN in the scratch stage (there is no shell): %q", runs)
	}

	// The build stage: modules in a layer of their own, then the build.
	var build *deployStage
	for i := range stages[:len(stages)-1] {
		for _, r := range stages[i].all("RUN") {
			if strings.Contains(r, "go build") {
				build = &stages[i]
			}
		}
	}
	if build == nil {
		t.Fatal("Dockerfile: no stage runs go build")
	}
	if !strings.HasPrefix(build.base, "golang:") {
		t.Errorf("Dockerfile: the build stage is FROM %s, want golang:…", build.base)
	}
	step := func(match func(deployInstr) bool) int {
		return slices.IndexFunc(build.instrs, match)
	}
	modCopy := step(func(in deployInstr) bool {
		f := strings.Fields(in.args)
		return in.op == "COPY" && slices.Contains(f, "go.mod") && slices.Contains(f, "go.sum") && !slices.Contains(f, ".")
	})
	download := step(func(in deployInstr) bool { return in.op == "RUN" && strings.Contains(in.args, "go mod download") })
	srcCopy := step(func(in deployInstr) bool { return in.op == "COPY" && strings.HasPrefix(in.args, ". ") })
	buildRun := step(func(in deployInstr) bool { return in.op == "RUN" && strings.Contains(in.args, "go build") })
	if !(modCopy >= 0 && modCopy < download && download < srcCopy && srcCopy < buildRun) {
		t.Errorf("Dockerfile: want COPY go.mod go.sum, RUN go mod download, COPY . ., RUN go build, in that order (steps %d, %d, %d, %d)",
			modCopy, download, srcCopy, buildRun)
	}
	img.buildArgs = map[string]string{}
	for _, in := range build.instrs[:buildRun] {
		if in.op == "ARG" {
			name, def, _ := strings.Cut(in.args, "=")
			img.buildArgs[name] = strings.Trim(def, `"`)
		}
	}
	img.buildRun = build.instrs[buildRun].args
	words, err := deployWords(img.buildRun, img.buildArgs)
	if err != nil {
		t.Fatalf("Dockerfile: the build command: %v", err)
	}
	if len(words) < 4 || words[0] != "CGO_ENABLED=0" || words[1] != "go" || words[2] != "build" || !slices.Contains(words, "-trimpath") {
		t.Fatalf("Dockerfile: the build command is %q, want CGO_ENABLED=0 go build -trimpath …", words)
	}
	img.buildCmd = words
	if i := slices.Index(words, "-o"); i > 0 && i+1 < len(words) {
		img.binary = words[i+1]
	} else {
		t.Fatalf("Dockerfile: the build command %q has no -o", words)
	}
	if words[len(words)-1] != "./cmd/rewind" {
		t.Errorf("Dockerfile: the build command builds %s, want ./cmd/rewind", words[len(words)-1])
	}

	// The run stage: the binary, a numeric non-root user, the entrypoint.
	dst := ""
	for _, c := range fin.all("COPY") {
		f := strings.Fields(c)
		if len(f) == 3 && f[0] == "--from="+build.name && f[1] == img.binary {
			dst = f[2]
		}
	}
	if dst == "" {
		t.Errorf("Dockerfile: the final stage does not COPY --from=%s %s", build.name, img.binary)
	}
	users := fin.all("USER")
	if len(users) != 1 {
		t.Fatalf("Dockerfile: the final stage has USER %q, want one numeric USER uid:gid", users)
	}
	uid, gid, _ := strings.Cut(users[0], ":")
	if img.uid, err = strconv.ParseInt(uid, 10, 32); err != nil || img.uid == 0 {
		t.Errorf("Dockerfile: USER %s: want a numeric, non-root uid (runAsNonRoot checks a number)", users[0])
	}
	if img.gid, err = strconv.ParseInt(gid, 10, 32); err != nil {
		t.Errorf("Dockerfile: USER %s: want uid:gid, numeric", users[0])
	}
	eps := fin.all("ENTRYPOINT")
	if len(eps) != 1 || json.Unmarshal([]byte(eps[0]), &img.entrypoint) != nil || len(img.entrypoint) != 1 || img.entrypoint[0] != dst {
		t.Errorf("Dockerfile: ENTRYPOINT %s, want [%q] in exec form (there is no shell)", strings.Join(eps, " | "), dst)
	}
	var cmd []string
	if cmds := fin.all("CMD"); len(cmds) != 1 || json.Unmarshal([]byte(cmds[0]), &cmd) != nil || !reflect.DeepEqual(cmd, []string{"serve"}) {
		t.Errorf("Dockerfile: CMD %q, want [\"serve\"]", cmds)
	}
	for _, e := range fin.all("EXPOSE") {
		img.exposed = append(img.exposed, strings.Fields(strings.ToLower(e))...)
	}
	return img
}

func TestDeployDockerfile(t *testing.T) {
	img := deployReadImage(t)
	d := server.DefaultConfig()
	_, quicPort, _ := net.SplitHostPort(d.Listen)
	_, adminPort, _ := net.SplitHostPort(d.Admin.Listen)
	for _, want := range []string{quicPort + "/udp", adminPort + "/tcp"} {
		if !slices.Contains(img.exposed, want) {
			t.Errorf("Dockerfile: EXPOSE %q lacks %s (the default ports)", img.exposed, want)
		}
	}
}

// TestDeployBinaryIsStatic runs the Dockerfile's build command and checks
// that the binary it makes runs on scratch: an ELF with no interpreter and
// no dynamic section.
func TestDeployBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary (a few seconds warm, about a minute on a cold build cache)")
	}
	img := deployReadImage(t)
	out := filepath.Join(t.TempDir(), "rewind")
	// The build arguments as a release build passes them (the Dockerfile's
	// header): the binary must say them.
	const version, revision = "v0.0.0-deploytest", "0123456789abcdef0123456789abcdef01234567"
	for _, name := range []string{"VERSION", "REVISION"} {
		if _, ok := img.buildArgs[name]; !ok {
			t.Fatalf("Dockerfile: the build stage declares no ARG %s before the build", name)
		}
	}
	words, err := deployWords(img.buildRun, map[string]string{"VERSION": version, "REVISION": revision})
	if err != nil {
		t.Fatal(err)
	}
	args := words[2:] // after CGO_ENABLED=0 go
	args[slices.Index(args, "-o")+1] = out
	cmd := exec.Command("go", args...)
	cmd.Dir = deployRoot
	// The image is Linux; build for Linux on any host.
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux")
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, b)
	}
	f, err := elf.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		switch p.Type {
		case elf.PT_INTERP:
			t.Error("the binary has a PT_INTERP header: it needs a dynamic loader, which scratch lacks")
		case elf.PT_DYNAMIC:
			t.Error("the binary has a PT_DYNAMIC header: it is dynamically linked")
		}
	}
	if s := f.Section(".dynamic"); s != nil {
		t.Error("the binary has a .dynamic section: it is dynamically linked")
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("the binary imports libraries %q (%v)", libs, err)
	}
	// Run it as the container would (only the manifest's environment) and
	// check that it takes the configuration.
	if runtime.GOOS != "linux" {
		return
	}
	ver, err := exec.Command(out, "version").Output()
	if err != nil {
		t.Fatalf("%s version: %v", out, err)
	}
	if !strings.Contains(string(ver), "rewind "+version+"\n") || !strings.Contains(string(ver), "revision "+revision+"\n") {
		t.Errorf("%s version says\n%s\nwant version %s and revision %s (the build arguments)", out, ver, version, revision)
	}
	env := deployEnv(t, deployManifest(t, "gameserver.yaml").gameServerSpec(t).container(t), false)
	run := exec.Command(out, "serve", "--print-config")
	run.Env = env
	var stdout, stderr bytes.Buffer
	run.Stdout, run.Stderr = &stdout, &stderr
	if err := run.Run(); err != nil {
		t.Fatalf("%s serve --print-config with the manifest's environment: %v\n%s", out, err, stderr.Bytes())
	}
	if !strings.Contains(stdout.String(), "listen = '0.0.0.0:4433'") || stderr.Len() > 0 {
		t.Errorf("serve --print-config: stdout\n%s\nstderr\n%s", stdout.Bytes(), stderr.Bytes())
	}
}

// The parts of the Agones manifests the tests look at (JSON names, the YAML
// is converted through JSON).

type deployObject struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Spec       struct {
		Template struct { // a Fleet's GameServer template
			Spec json.RawMessage `json:"spec"`
		} `json:"template"`
	} `json:"spec"`
	raw map[string]any
}

type deployGameServerSpec struct {
	Container string       `json:"container"`
	Ports     []deployPort `json:"ports"`
	Health    struct {
		Disabled            bool `json:"disabled"`
		InitialDelaySeconds int  `json:"initialDelaySeconds"`
		PeriodSeconds       int  `json:"periodSeconds"`
		FailureThreshold    int  `json:"failureThreshold"`
	} `json:"health"`
	Lists map[string]struct {
		Capacity int64 `json:"capacity"`
	} `json:"lists"`
	Counters map[string]struct {
		Count    int64 `json:"count"`
		Capacity int64 `json:"capacity"`
	} `json:"counters"`
	Template struct {
		Spec struct {
			TerminationGracePeriodSeconds *int64 `json:"terminationGracePeriodSeconds"`
			SecurityContext               struct {
				RunAsNonRoot *bool  `json:"runAsNonRoot"`
				RunAsUser    *int64 `json:"runAsUser"`
			} `json:"securityContext"`
			Containers []deployContainer `json:"containers"`
			Volumes    []struct {
				Name   string          `json:"name"`
				Secret json.RawMessage `json:"secret"`
				// Where the results may go: an emptyDir or a claim.
				EmptyDir json.RawMessage `json:"emptyDir"`
				PVC      json.RawMessage `json:"persistentVolumeClaim"`
			} `json:"volumes"`
		} `json:"spec"`
	} `json:"template"`
}

type deployPort struct {
	Name          string `json:"name"`
	PortPolicy    string `json:"portPolicy"`
	ContainerPort int    `json:"containerPort"`
	Protocol      string `json:"protocol"`
}

type deployContainer struct {
	Name  string `json:"name"`
	Image string `json:"image"`
	Env   []struct {
		Name      string          `json:"name"`
		Value     *string         `json:"value"`
		ValueFrom json.RawMessage `json:"valueFrom"`
	} `json:"env"`
	ReadinessProbe *struct {
		HTTPGet *struct {
			Path string `json:"path"`
			Port any    `json:"port"`
		} `json:"httpGet"`
	} `json:"readinessProbe"`
	LivenessProbe json.RawMessage `json:"livenessProbe"`
	Resources     struct {
		Limits struct {
			Memory string `json:"memory"`
		} `json:"limits"`
	} `json:"resources"`
	SecurityContext struct {
		RunAsNonRoot             *bool `json:"runAsNonRoot"`
		ReadOnlyRootFilesystem   *bool `json:"readOnlyRootFilesystem"`
		AllowPrivilegeEscalation *bool `json:"allowPrivilegeEscalation"`
		Capabilities             struct {
			Drop []string `json:"drop"`
		} `json:"capabilities"`
	} `json:"securityContext"`
	VolumeMounts []struct {
		Name      string `json:"name"`
		MountPath string `json:"mountPath"`
		ReadOnly  bool   `json:"readOnly"`
	} `json:"volumeMounts"`
}

// deployManifest reads deploy/agones/NAME as YAML (the parser the server's
// config files use), through JSON into the types above.
func deployManifest(t *testing.T, name string) deployObject {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployRoot, "deploy", "agones", name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := kyaml.Parser().Unmarshal(b)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	j, err := json.Marshal(m)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var o deployObject
	if err := json.Unmarshal(j, &o); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	o.raw = m
	return o
}

// deployGS is a GameServer spec, as typed and as parsed.
type deployGS struct {
	deployGameServerSpec
	raw any
}

// gameServerSpec returns the GameServer spec: the spec of a GameServer, or
// the template of a Fleet.
func (o deployObject) gameServerSpec(t *testing.T) deployGS {
	t.Helper()
	var raw any = o.raw["spec"]
	j, _ := json.Marshal(raw)
	if o.Kind == "Fleet" {
		raw = raw.(map[string]any)["template"].(map[string]any)["spec"]
		j = o.Spec.Template.Spec
	}
	var gs deployGS
	if err := json.Unmarshal(j, &gs.deployGameServerSpec); err != nil {
		t.Fatalf("%s spec: %v", o.Kind, err)
	}
	gs.raw = raw
	return gs
}

// container returns the game server container.
func (gs deployGS) container(t *testing.T) deployContainer {
	t.Helper()
	cs := gs.Template.Spec.Containers
	i := slices.IndexFunc(cs, func(c deployContainer) bool { return c.Name == gs.Container })
	switch {
	case i >= 0:
		return cs[i]
	case gs.Container == "" && len(cs) == 1:
		return cs[0]
	}
	t.Fatalf("no container %q among %d", gs.Container, len(cs))
	return deployContainer{}
}

// deployEnv returns the container's environment as KEY=VALUE lines: only
// the REWIND_* variables with rewind, else all. Every REWIND_* variable
// must have a literal value, to be checked here.
func deployEnv(t *testing.T, c deployContainer, rewind bool) []string {
	t.Helper()
	var env []string
	for _, e := range c.Env {
		if !strings.HasPrefix(e.Name, server.EnvPrefix) && rewind {
			continue
		}
		if e.Value == nil {
			if strings.HasPrefix(e.Name, server.EnvPrefix) {
				t.Errorf("env %s: no literal value (valueFrom cannot be checked)", e.Name)
			}
			continue
		}
		env = append(env, e.Name+"="+*e.Value)
	}
	return env
}

// A process's live memory, measured by BenchmarkRoomMemory
// (docs/deploy.md, "Memory"): the process's own, and a room of 12 players'
// (heap spans in use and goroutine stacks), rounded up.
const (
	deployBaseMiB = 8
	deployRoomMiB = 2.2
)

// deployMiB reads a memory size with one of units' suffixes (each its size
// in MiB), in MiB.
func deployMiB(s string, units map[string]float64) (float64, error) {
	for u, mib := range units {
		if n, ok := strings.CutSuffix(s, u); ok {
			if v, err := strconv.ParseFloat(n, 64); err == nil {
				return v * mib, nil
			}
		}
	}
	return 0, fmt.Errorf("%q: not a number with one of the units %v", s, slices.Sorted(maps.Keys(units)))
}

// deployShow prints an optional value: the value, or "unset".
func deployShow[T any](p *T) string {
	if p == nil {
		return "unset"
	}
	return fmt.Sprint(*p)
}

// deployMountOf returns the volume mount holding file, the deepest one.
func deployMountOf(c deployContainer, file string) (name string, readOnly, ok bool) {
	best := ""
	for _, m := range c.VolumeMounts {
		dir := path.Clean(m.MountPath)
		if strings.HasPrefix(path.Clean(file), dir+"/") && len(dir) > len(best) {
			best, name, readOnly, ok = dir, m.Name, m.ReadOnly, true
		}
	}
	return name, readOnly, ok
}

func TestDeployAgonesManifests(t *testing.T) {
	img := deployReadImage(t)
	gsObj, fleetObj := deployManifest(t, "gameserver.yaml"), deployManifest(t, "fleet.yaml")
	for _, c := range []struct {
		o    deployObject
		kind string
	}{{gsObj, "GameServer"}, {fleetObj, "Fleet"}} {
		if c.o.APIVersion != "agones.dev/v1" || c.o.Kind != c.kind {
			t.Errorf("%s: apiVersion %q, kind %q; want agones.dev/v1 %s", c.kind, c.o.APIVersion, c.o.Kind, c.kind)
		}
	}
	gs, fleet := gsObj.gameServerSpec(t), fleetObj.gameServerSpec(t)
	if !reflect.DeepEqual(gs.raw, fleet.raw) {
		t.Error("fleet.yaml's template spec differs from gameserver.yaml's spec: keep them in step")
	}
	for _, c := range []struct {
		name string
		gs   deployGS
	}{{"gameserver.yaml", gs}, {"fleet.yaml", fleet}} {
		t.Run(c.name, func(t *testing.T) { deployCheckSpec(t, c.gs, img) })
	}
}

// deploySelector is Agones' GameServerSelector (allocation.agones.dev/v1,
// pkg/apis/allocation/v1/gameserverallocation.go, v1.56.0), every field,
// to decode an allocation's selectors strictly.
type deploySelector struct {
	MatchLabels      map[string]string `json:"matchLabels"`
	MatchExpressions []json.RawMessage `json:"matchExpressions"`
	GameServerState  *string           `json:"gameServerState"`
	Players          *struct {
		MinAvailable int64 `json:"minAvailable"`
		MaxAvailable int64 `json:"maxAvailable"`
	} `json:"players"`
	Counters map[string]struct {
		MinCount     int64 `json:"minCount"`
		MaxCount     int64 `json:"maxCount"`
		MinAvailable int64 `json:"minAvailable"`
		MaxAvailable int64 `json:"maxAvailable"`
	} `json:"counters"`
	Lists map[string]struct {
		ContainsValue string `json:"containsValue"`
		MinAvailable  int64  `json:"minAvailable"`
		MaxAvailable  int64  `json:"maxAvailable"`
	} `json:"lists"`
}

// deploySelectable is what a selector looks at of a GameServer.
type deploySelectable struct {
	labels   map[string]string
	state    string
	counters map[string][2]int64 // count, capacity
	lists    map[string]deployList
}

type deployList struct {
	capacity int64
	values   []string
}

// matches reports whether the selector selects g, as Agones'
// GameServerSelector.Matches does with CountsAndLists on (matchCounters,
// matchLists: available is capacity minus count, or minus the values; a
// maximum of 0 is no maximum; a Counter or List the GameServer lacks
// selects nothing). It does not evaluate matchExpressions or players.
func (s deploySelector) matches(g deploySelectable) bool {
	for k, v := range s.MatchLabels {
		if g.labels[k] != v {
			return false
		}
	}
	if s.GameServerState != nil && *s.GameServerState != g.state {
		return false
	}
	for name, sel := range s.Counters {
		c, ok := g.counters[name]
		if !ok {
			return false
		}
		available := c[1] - c[0]
		if available < sel.MinAvailable || (sel.MaxAvailable != 0 && available > sel.MaxAvailable) ||
			c[0] < sel.MinCount || (sel.MaxCount != 0 && c[0] > sel.MaxCount) {
			return false
		}
	}
	for name, sel := range s.Lists {
		l, ok := g.lists[name]
		if !ok {
			return false
		}
		available := l.capacity - int64(len(l.values))
		if available < sel.MinAvailable || (sel.MaxAvailable != 0 && available > sel.MaxAvailable) ||
			(sel.ContainsValue != "" && !slices.Contains(l.values, sel.ContainsValue)) {
			return false
		}
	}
	return true
}

// deployDocAllocation returns the spec of the GameServerAllocation for the
// Fleet fleet that docs/deploy.md shows in a yaml block.
func deployDocAllocation(t *testing.T, fleet string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(deployRoot, "docs", "deploy.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range regexp.MustCompile("(?s)```yaml\n(.*?)```").FindAllSubmatch(b, -1) {
		if !bytes.Contains(block[1], []byte("kind: GameServerAllocation")) || !bytes.Contains(block[1], []byte(fleet)) {
			continue
		}
		m, err := kyaml.Parser().Unmarshal(block[1])
		if err != nil {
			t.Fatalf("docs/deploy.md's allocation for %s: %v", fleet, err)
		}
		spec, _ := m["spec"].(map[string]any)
		return spec
	}
	t.Fatalf("docs/deploy.md shows no GameServerAllocation for %s", fleet)
	return nil
}

// The high-density kit: the Fleet declares the Counter and Lists the
// server's configuration names, the allocation adds to them, and the
// autoscaler scales that Fleet on that Counter.
func TestDeployAgonesDensity(t *testing.T) {
	img := deployReadImage(t)
	fleetObj := deployManifest(t, "fleet-density.yaml")
	if fleetObj.APIVersion != "agones.dev/v1" || fleetObj.Kind != "Fleet" {
		t.Fatalf("fleet-density.yaml: %s %s, want agones.dev/v1 Fleet", fleetObj.APIVersion, fleetObj.Kind)
	}
	gs := fleetObj.gameServerSpec(t)
	deployCheckSpec(t, gs, img)
	cfg, _, err := server.LoadConfig("", deployEnv(t, gs.container(t), true), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := cfg.Agones
	if a.Matches != "list" || a.MaxMatches < 2 || cfg.MaxRooms < a.MaxMatches {
		t.Errorf("agones.matches %q, max_matches %d, max_rooms %d: want list, at least 2, and max_rooms at least max_matches", a.Matches, a.MaxMatches, cfg.MaxRooms)
	}
	// The server sets the Counter's capacity, but a new GameServer starts
	// with the template's, and the autoscaler adds servers by it.
	if c, ok := gs.Counters[a.RoomsCounter]; !ok || c.Count != 0 || c.Capacity != int64(a.MaxMatches) {
		t.Errorf("counters.%s: %+v (present %v); want it declared, count 0, capacity max_matches %d", a.RoomsCounter, c, ok, a.MaxMatches)
	}
	if l, ok := gs.Lists[a.MatchesList]; !ok || l.Capacity < int64(a.MaxMatches) {
		t.Errorf("lists.%s: %+v (present %v); want capacity at least max_matches %d", a.MatchesList, l, ok, a.MaxMatches)
	}
	if l := gs.Lists[a.PlayersList]; l.Capacity < int64(a.MaxMatches*cfg.MaxPlayers) {
		t.Errorf("lists.%s capacity %d: want at least max_matches × max_players = %d", a.PlayersList, l.Capacity, a.MaxMatches*cfg.MaxPlayers)
	}
	fleetName, _ := fleetObj.raw["metadata"].(map[string]any)["name"].(string)

	alloc := deployManifest(t, "allocation-density.yaml").raw
	spec, _ := alloc["spec"].(map[string]any)
	j, _ := json.Marshal(spec)
	var as struct {
		Counters map[string]struct {
			Action string `json:"action"`
			Amount int64  `json:"amount"`
		} `json:"counters"`
		Lists map[string]struct {
			AddValues []string `json:"addValues"`
		} `json:"lists"`
	}
	if err := json.Unmarshal(j, &as); err != nil {
		t.Fatal(err)
	}
	// The selectors, decoded as Agones' types: a misspelt field is an error
	// here, where Agones would ignore it.
	j, _ = json.Marshal(spec["selectors"])
	dec := json.NewDecoder(bytes.NewReader(j))
	dec.DisallowUnknownFields()
	var sels []deploySelector
	if err := dec.Decode(&sels); err != nil {
		t.Fatalf("allocation selectors: %v (Agones' GameServerSelector has no such field)", err)
	}
	if len(sels) != 2 || deployShow(sels[0].GameServerState) != "Allocated" || deployShow(sels[1].GameServerState) != "Ready" {
		t.Errorf("allocation selectors %+v: want Allocated first, then Ready", sels)
	}
	for _, sel := range sels {
		if len(sel.MatchExpressions) > 0 || sel.Players != nil {
			t.Fatalf("selector %+v: matchExpressions or players, which this test does not evaluate", sel)
		}
	}
	// What each selector must take and refuse, the GameServer in its
	// state with the Fleet's labels: the Counter rooms and the List
	// matches both with a free place, and not otherwise. The List full
	// while the count lags is the case Agones would allocate and then drop
	// the match's id from (a failed List action is only an event).
	capacity := gs.Lists[a.MatchesList].Capacity
	ids := func(n int64) []string {
		v := make([]string, n)
		for i := range v {
			v[i] = fmt.Sprintf("match-%d", i)
		}
		return v
	}
	for _, c := range []struct {
		name              string
		count, countLimit int64 // the Counter rooms
		listed            int64 // ids on the List matches
		want              bool
	}{
		{"a free slot on both", 3, int64(a.MaxMatches), 3, true},
		{"the List full, the count lagging", capacity - 1, capacity, capacity, false},
		{"the Counter full", int64(a.MaxMatches), int64(a.MaxMatches), int64(a.MaxMatches) - 1, false},
		{"the capacity held at the count (retiring)", 4, 4, 4, false},
	} {
		for _, sel := range sels {
			g := deploySelectable{
				labels:   map[string]string{"agones.dev/fleet": fleetName},
				state:    deployShow(sel.GameServerState),
				counters: map[string][2]int64{a.RoomsCounter: {c.count, c.countLimit}},
				lists:    map[string]deployList{a.MatchesList: {capacity, ids(c.listed)}},
			}
			if got := sel.matches(g); got != c.want {
				t.Errorf("selector for %s GameServers, %s (rooms %d of %d, matches %d of %d): selected %v, want %v",
					g.state, c.name, c.count, c.countLimit, c.listed, capacity, got, c.want)
			}
		}
	}
	// docs/deploy.md shows the allocation: the file's, but for the id.
	docSpec := deployDocAllocation(t, fleetName)
	fileSpec := maps.Clone(spec)
	delete(docSpec, "lists")
	delete(fileSpec, "lists")
	if !reflect.DeepEqual(docSpec, fileSpec) {
		t.Errorf("docs/deploy.md's allocation for %s differs from allocation-density.yaml's (the lists aside):\n%v\n%v", fleetName, docSpec, fileSpec)
	}
	if c := as.Counters[a.RoomsCounter]; c.Action != "Increment" || c.Amount != 1 {
		t.Errorf("allocation counters.%s %+v: want Increment 1", a.RoomsCounter, c)
	}
	if l := as.Lists[a.MatchesList]; len(l.AddValues) != 1 {
		t.Errorf("allocation lists.%s %+v: want one value, the match's id", a.MatchesList, l)
	}

	fas := deployManifest(t, "fleetautoscaler-density.yaml").raw
	j, _ = json.Marshal(fas["spec"])
	var fs struct {
		FleetName string `json:"fleetName"`
		Policy    struct {
			Type    string `json:"type"`
			Counter struct {
				Key        string `json:"key"`
				BufferSize any    `json:"bufferSize"`
			} `json:"counter"`
		} `json:"policy"`
	}
	if err := json.Unmarshal(j, &fs); err != nil {
		t.Fatal(err)
	}
	if fs.FleetName != fleetName || fs.Policy.Type != "Counter" || fs.Policy.Counter.Key != a.RoomsCounter || fs.Policy.Counter.BufferSize == nil {
		t.Errorf("fleetautoscaler %+v: want the fleet %s, a Counter policy on %s with a buffer", fs, fleetName, a.RoomsCounter)
	}
}

// deployCheckSpec checks a GameServer spec against the server's
// configuration, which it loads from the container's REWIND_* variables.
func deployCheckSpec(t *testing.T, gs deployGS, img deployImage) {
	c := gs.container(t)
	env := deployEnv(t, c, true)
	// LoadConfig reads no key file (New does), so the key path need not
	// exist here; it checks every value and warns of unknown variables.
	cfg, warnings, err := server.LoadConfig("", env, nil)
	if err != nil {
		t.Fatalf("the container's REWIND_* variables: %v", err)
	}
	if len(warnings) > 0 {
		t.Errorf("the container's REWIND_* variables: %q", warnings)
	}
	if cfg.Agones.Mode != "on" || cfg.Auth.Rooms != server.RoomsByOperator || len(cfg.Auth.PublicKeys) == 0 || cfg.Results.File == "" {
		t.Errorf("want agones.mode on, auth.rooms operator, public keys and a results file; got %q, %q, %q, %q",
			cfg.Agones.Mode, cfg.Auth.Rooms, cfg.Auth.PublicKeys, cfg.Results.File)
	}

	// The QUIC port: Agones maps a host port to the port the server binds.
	host, port, _ := net.SplitHostPort(cfg.Listen)
	if ip := net.ParseIP(host); ip == nil || !ip.IsUnspecified() {
		t.Errorf("listen %s: want 0.0.0.0 (or [::]), players come from outside the pod", cfg.Listen)
	}
	i := slices.IndexFunc(gs.Ports, func(p deployPort) bool { return p.Name == "default" })
	if i < 0 {
		t.Fatalf("no port named default in %+v", gs.Ports)
	}
	p := gs.Ports[i]
	if strconv.Itoa(p.ContainerPort) != port || (p.Protocol != "" && p.Protocol != "UDP") || p.PortPolicy != "Dynamic" {
		t.Errorf("port default: %+v; want UDP, Dynamic, containerPort %s (listen %s)", p, port, cfg.Listen)
	}
	if !slices.Contains(img.exposed, port+"/udp") {
		t.Errorf("the Dockerfile does not EXPOSE %s/udp", port)
	}

	// Agones health: a Health ping every health_period must arrive within
	// periodSeconds, with room for one late ping.
	h := gs.Health
	if h.Disabled || h.PeriodSeconds == 0 || 2*cfg.Agones.HealthPeriod > time.Duration(h.PeriodSeconds)*time.Second || h.FailureThreshold < 1 {
		t.Errorf("health %+v: want periodSeconds at least twice agones.health_period %v", h, cfg.Agones.HealthPeriod)
	}

	// Memory: GOMEMLIMIT holds max_rooms full rooms, with half again for
	// the collector, under the container's limit (docs/deploy.md, "Memory").
	var goLimit string
	for _, kv := range deployEnv(t, c, false) {
		if v, ok := strings.CutPrefix(kv, "GOMEMLIMIT="); ok {
			goLimit = v
		}
	}
	need := 1.5 * (deployBaseMiB + deployRoomMiB*float64(cfg.MaxRooms))
	soft, err1 := deployMiB(goLimit, map[string]float64{"B": 1.0 / (1 << 20), "KiB": 1.0 / 1024, "MiB": 1, "GiB": 1024})
	hard, err2 := deployMiB(c.Resources.Limits.Memory, map[string]float64{"Ki": 1.0 / 1024, "Mi": 1, "Gi": 1024})
	switch {
	case err1 != nil || err2 != nil:
		t.Errorf("GOMEMLIMIT %q (%v), limits.memory %q (%v): want both", goLimit, err1, c.Resources.Limits.Memory, err2)
	case soft < need || soft >= hard:
		t.Errorf("GOMEMLIMIT %q, limits.memory %q: want at least %.0f MiB (max_rooms %d full rooms, and half again), under the limit",
			goLimit, c.Resources.Limits.Memory, need, cfg.MaxRooms)
	}

	// The players list holds a room's players.
	if cfg.Agones.Players == "list" {
		l, ok := gs.Lists[cfg.Agones.PlayersList]
		if !ok || l.Capacity < int64(cfg.MaxPlayers) {
			t.Errorf("lists.%s: %+v (present %v); want capacity at least max_players %d", cfg.Agones.PlayersList, l, ok, cfg.MaxPlayers)
		}
	}

	// The drain fits in the grace period, with the ~10 s Shutdown takes.
	pod := gs.Template.Spec
	if g := pod.TerminationGracePeriodSeconds; g == nil || time.Duration(*g)*time.Second < cfg.DrainTimeout+15*time.Second {
		t.Errorf("terminationGracePeriodSeconds %s: want at least drain_timeout %v + 15s", deployShow(g), cfg.DrainTimeout)
	}

	// Non-root, as the image's user; a read-only root; no capabilities.
	sc := pod.SecurityContext
	if sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot || sc.RunAsUser == nil || *sc.RunAsUser != img.uid {
		t.Errorf("pod securityContext: runAsNonRoot %s, runAsUser %s; want true and %d (the image's USER)", deployShow(sc.RunAsNonRoot), deployShow(sc.RunAsUser), img.uid)
	}
	csc := c.SecurityContext
	if csc.ReadOnlyRootFilesystem == nil || !*csc.ReadOnlyRootFilesystem || csc.AllowPrivilegeEscalation == nil || *csc.AllowPrivilegeEscalation ||
		!slices.Contains(csc.Capabilities.Drop, "ALL") || (csc.RunAsNonRoot != nil && !*csc.RunAsNonRoot) {
		t.Errorf("container securityContext: readOnlyRootFilesystem %s, allowPrivilegeEscalation %s, drop %q, runAsNonRoot %s; want true, false, ALL, true or unset",
			deployShow(csc.ReadOnlyRootFilesystem), deployShow(csc.AllowPrivilegeEscalation), csc.Capabilities.Drop, deployShow(csc.RunAsNonRoot))
	}

	// Probes: readiness on /readyz at the admin port; no liveness probe,
	// which would replace the one Agones adds (and with it Agones' health
	// checking).
	if len(c.LivenessProbe) > 0 && string(c.LivenessProbe) != "null" {
		t.Error("a livenessProbe on the game server container: Agones then adds none of its own, and its health checking stops")
	}
	adminHost, adminPort, err := net.SplitHostPort(cfg.Admin.Listen)
	if ip := net.ParseIP(adminHost); err != nil || ip == nil || !ip.IsUnspecified() {
		t.Errorf("admin.listen %q: the kubelet probes the pod IP, want 0.0.0.0:PORT", cfg.Admin.Listen)
	}
	if rp := c.ReadinessProbe; rp == nil || rp.HTTPGet == nil || rp.HTTPGet.Path != "/readyz" || fmt.Sprint(rp.HTTPGet.Port) != adminPort {
		t.Errorf("readinessProbe: want GET /readyz on port %s (admin.listen)", adminPort)
	}

	// Files: the keys from a Secret, the results on a writable volume (the
	// root file system is read-only).
	volumes := map[string]int{}
	for i, v := range pod.Volumes {
		volumes[v.Name] = i
	}
	for _, k := range cfg.Auth.PublicKeys {
		name, _, ok := deployMountOf(c, k)
		if i, found := volumes[name]; !ok || !found || len(pod.Volumes[i].Secret) == 0 {
			t.Errorf("auth.public_keys %s: not on a volume from a Secret", k)
		}
	}
	name, ro, ok := deployMountOf(c, cfg.Results.File)
	if i, found := volumes[name]; !ok || !found || ro || (len(pod.Volumes[i].EmptyDir) == 0 && len(pod.Volumes[i].PVC) == 0) {
		t.Errorf("results.file %s: not on a writable emptyDir or claim", cfg.Results.File)
	}
}

// TestDeployDoc checks what docs/deploy.md copies from elsewhere: the REST
// endpoint table, the token test vector, the annotation and metric names.
func TestDeployDoc(t *testing.T) {
	docPath := filepath.Join(deployRoot, "docs", "deploy.md")
	b, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)

	// The endpoint table of agones/REST.md, row for row.
	rest, err := os.ReadFile(filepath.Join(deployRoot, "agones", "REST.md"))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, l := range strings.Split(string(rest), "\n") {
		if strings.HasPrefix(l, "| ") && strings.Contains(l, "`/") { // the endpoint rows
			rows++
			if !strings.Contains(doc, l) {
				t.Errorf("docs/deploy.md lacks agones/REST.md's row %q", l)
			}
		}
	}
	if rows < 10 {
		t.Errorf("found %d endpoint rows in agones/REST.md", rows)
	}

	// The token vector is docs/tokens.md's.
	want, err := docvec.Read(filepath.Join(deployRoot, "docs", "tokens.md"), "token-base64url")
	if err != nil {
		t.Fatal(err)
	}
	got, err := docvec.Read(docPath, "token-base64url")
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("docs/deploy.md's token vector %q differs from docs/tokens.md's %q", got, want)
	}

	// The names the matchmaker reads and writes.
	d := server.DefaultConfig()
	for _, s := range []string{"agones.dev/sdk-" + server.CertAnnotation, d.Agones.MatchKey, d.Agones.PlayersList} {
		if !strings.Contains(doc, s) {
			t.Errorf("docs/deploy.md does not name %q", s)
		}
	}

	// Every rewind_* metric the page names is registered by the server
	// (server/metrics.go, and server/agones.go for the Agones ones).
	registered := monitoringRegistered(t)
	for _, m := range regexp.MustCompile("`(rewind_[a-z_]+)").FindAllStringSubmatch(doc, -1) {
		if !registered[m[1]] {
			t.Errorf("docs/deploy.md names %s, which the server does not register", m[1])
		}
	}
}
