package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

// The admin port and the profiler have no authentication: bound to an
// address beyond loopback, each is warned of once at start, naming its key
// and address; on loopback, not at all.
func TestWarnsOfHTTPListenersBeyondLoopback(t *testing.T) {
	for _, tt := range []struct {
		admin, pprof string
		want         []string // the keys warned of
	}{
		{"0.0.0.0:0", "", []string{"admin.listen"}},
		{"127.0.0.1:0", "", nil},
		{"127.0.0.1:0", "127.0.0.1:0", nil},
		{"", "0.0.0.0:0", []string{"pprof.listen"}},
		{"0.0.0.0:0", "0.0.0.0:0", []string{"admin.listen", "pprof.listen"}},
	} {
		cfg := DefaultConfig()
		cfg.Listen = "127.0.0.1:0"
		cfg.Admin.Listen, cfg.Pprof.Listen = tt.admin, tt.pprof
		var buf bytes.Buffer
		srv, err := New(cfg, zerolog.New(zerolog.SyncWriter(&buf)))
		if err != nil {
			t.Fatal(err)
		}
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		err = srv.Shutdown(ctx)
		cancel()
		if err != nil {
			t.Fatalf("shutdown: %v", err)
		}
		var got []string
		sc := bufio.NewScanner(&buf)
		for sc.Scan() {
			var line struct{ Level, Key, Listen, Addr, Message string }
			if err := json.Unmarshal(sc.Bytes(), &line); err != nil {
				t.Fatalf("%q: %v", sc.Text(), err)
			}
			if line.Level != "warn" || line.Key == "" {
				continue
			}
			got = append(got, line.Key)
			if line.Listen != "0.0.0.0:0" || line.Addr == "" || !strings.Contains(line.Message, "no authentication") {
				t.Errorf("admin %q, pprof %q: warning of %s, listen %q, addr %q: %q; want its address and why",
					tt.admin, tt.pprof, line.Key, line.Listen, line.Addr, line.Message)
			}
		}
		if strings.Join(got, " ") != strings.Join(tt.want, " ") {
			t.Errorf("admin %q, pprof %q: warnings of %q, want %q", tt.admin, tt.pprof, got, tt.want)
		}
	}
}
