package results

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestAppendsOneLinePerMatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.jsonl")
	if err := os.WriteFile(path, []byte(`{"match_id":"earlier"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 23, 10, 0, 0, 0, time.UTC)
	var wg sync.WaitGroup
	for i := range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			m := &Match{MatchID: "m" + string(rune('a'+i)), Started: start, Ended: start.Add(time.Minute), Duration: 60,
				Reason: "finished", Ticks: 1200, TickRate: 20, LagComp: LagComp{WindowTicks: 30, Bucketing: true},
				Players: []Player{{UserID: "u1", Name: "Alice", Team: 1, Kills: 3, Deaths: 1, Hits: 12}}}
			if err := w.Write(m); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Match{MatchID: "late"}); err == nil {
		t.Error("a write after Close succeeded")
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var lines []Match
	for sc.Scan() {
		var m Match
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	if len(lines) != 21 || lines[0].MatchID != "earlier" {
		t.Fatalf("%d lines, first %q: want the earlier line kept and 20 appended", len(lines), lines[0].MatchID)
	}
	if p := lines[1].Players; len(p) != 1 || p[0] != (Player{UserID: "u1", Name: "Alice", Team: 1, Kills: 3, Deaths: 1, Hits: 12}) {
		t.Errorf("players %+v", p)
	}
}

func TestOpenNamesTheFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(filepath.Join(dir, "file", "results.jsonl"))
	if err == nil || !strings.Contains(err.Error(), "file/results.jsonl") {
		t.Errorf("got %v, want an error naming the file", err)
	}
}

// A results file in directories that do not exist yet is opened, the
// directories made: serve --check accepts such a path, so serve must too.
func TestOpenMakesTheDirectories(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "results.jsonl")
	w, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&Match{MatchID: "m1"}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `"match_id":"m1"`) {
		t.Errorf("%s: %q, %v", path, b, err)
	}
}

// The disputed hits are in the JSON under the names docs/deploy.md gives:
// the match's totals and each player's dealt and taken.
func TestDisputedHitsFields(t *testing.T) {
	b, err := json.Marshal(&Match{MatchID: "m", Hits: 7, Disputed: 2,
		Players: []Player{{UserID: "a", Hits: 7, Disputed: 2}, {UserID: "b", DisputedTaken: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hits     *uint64 `json:"hits"`
		Disputed *uint64 `json:"disputed_hits"`
		Players  []map[string]any
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	if doc.Hits == nil || *doc.Hits != 7 || doc.Disputed == nil || *doc.Disputed != 2 {
		t.Errorf("the match's hits and disputed_hits: %s", b)
	}
	if len(doc.Players) != 2 || doc.Players[0]["disputed_hits"] != 2.0 || doc.Players[0]["disputed_hits_taken"] != 0.0 ||
		doc.Players[1]["disputed_hits_taken"] != 2.0 {
		t.Errorf("the players' disputed_hits and disputed_hits_taken: %s", b)
	}
}
