package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// httpListener is an HTTP server on a listener of its own.
type httpListener struct {
	ln  net.Listener
	srv *http.Server
}

// listenHTTP serves h on addr, in a goroutine of the server's.
func (s *Server) listenHTTP(addr string, h http.Handler, what string) (*httpListener, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("server: %s listen %s: %w", what, addr, err)
	}
	hl := &httpListener{ln: ln, srv: &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		if err := hl.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			s.log.Error().Err(err).Str("listener", what).Msg("http server")
		}
	}()
	s.log.Info().Str("addr", ln.Addr().String()).Str("listener", what).Msg("http listening")
	return hl, nil
}

// adminMux is the admin port: metrics, health, readiness and the rooms API.
func (s *Server) adminMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(s.m.reg, promhttp.HandlerOpts{Registry: s.m.reg}))
	// Liveness: every room loop makes progress.
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		if err := s.Healthy(); err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	// Readiness: the server admits players (not before it listens, not
	// while it drains).
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		if !s.Admitting() {
			http.Error(w, "not admitting players", http.StatusServiceUnavailable)
			return
		}
		w.Write([]byte("ok\n"))
	})
	mux.HandleFunc("GET /rooms", func(w http.ResponseWriter, r *http.Request) {
		st, err := s.Stats(r.Context())
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		type player struct {
			ID     uint32 `json:"id"`
			User   string `json:"user"`
			Name   string `json:"name"`
			Team   uint8  `json:"team"`
			Kills  uint64 `json:"kills"`
			Deaths uint64 `json:"deaths"`
		}
		type room struct {
			ID      string   `json:"id"`
			Tick    int64    `json:"tick"`
			Players []player `json:"players"`
		}
		out := []room{}
		for _, rs := range st {
			rm := room{ID: rs.ID, Tick: rs.Tick, Players: []player{}}
			for _, p := range rs.Players {
				rm.Players = append(rm.Players, player{ID: p.ID, User: p.User, Name: p.Name, Team: p.Team, Kills: p.Kills, Deaths: p.Deaths})
			}
			out = append(out, rm)
		}
		writeJSON(w, http.StatusOK, out)
	})
	// The operator opens a room for a match (when rooms are not created by
	// tokens): POST /rooms {"id": "match-7"}.
	mux.HandleFunc("POST /rooms", func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			ID string `json:"id"`
		}
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 4096))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "body: want {\"id\": \"ROOM\"}: " + err.Error()})
			return
		}
		switch err := s.OpenRoom(req.ID); {
		case err == nil:
			s.log.Info().Str("room", req.ID).Msg("room opened by the operator")
			writeJSON(w, http.StatusCreated, map[string]string{"id": req.ID})
		case errors.Is(err, errRoomExists):
			writeJSON(w, http.StatusConflict, map[string]string{"error": err.Error()})
		case errors.Is(err, errDraining), errors.Is(err, errServerFull):
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
		default:
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
		}
	})
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// pprofMux is Go's profiler, on its own listener (pprof.listen), off by
// default: it can stall the process and reveals its internals.
func pprofMux() *http.ServeMux {
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	return mux
}
