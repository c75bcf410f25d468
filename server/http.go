package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/pprof"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/rewind-gg/rewind/view"
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

// warnIfExposed warns, once at start, that an unauthenticated listener is
// reachable from beyond this host, and why that matters; key is the
// listener's config key, listen its value.
func (s *Server) warnIfExposed(h *httpListener, key, listen, why string) {
	if a, ok := h.ln.Addr().(*net.TCPAddr); ok && a.IP.IsLoopback() {
		return
	}
	s.log.Warn().Str("key", key).Str("listen", listen).Str("addr", h.ln.Addr().String()).Msg(why)
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
			ID        string   `json:"id"`
			Tick      int64    `json:"tick"`
			Recording string   `json:"recording,omitempty"`
			Players   []player `json:"players"`
		}
		out := []room{}
		for _, rs := range st {
			rm := room{ID: rs.ID, Tick: rs.Tick, Recording: rs.Recording, Players: []player{}}
			for _, p := range rs.Players {
				rm.Players = append(rm.Players, player{ID: p.ID, User: p.User, Name: p.Name, Team: p.Team, Kills: p.Kills, Deaths: p.Deaths})
			}
			out = append(out, rm)
		}
		writeJSON(w, http.StatusOK, out)
	})
	// The live view of the rooms being recorded (record.dir): the page of
	// rewind view, following each room's recording as it is written.
	mux.HandleFunc("GET /view/{$}", s.viewIndex)
	mux.HandleFunc("GET /view/rooms/{room}/", s.viewRoom)
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
		case err == nil: // the room logs its opening
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

// liveViewTicks is how much of a room's match the live view keeps: the last
// five minutes.
const liveViewTicks = 5 * 60

// liveView is the view of one room's recording, shared by its viewers.
type liveView struct {
	handler http.Handler
	room    string
}

// viewIndex lists the rooms whose matches are recorded, with links to their
// live view: each with its tick (and the time it stands for) and its
// players by team.
func (s *Server) viewIndex(w http.ResponseWriter, r *http.Request) {
	all, err := s.Stats(r.Context())
	if err != nil {
		http.Error(w, err.Error(), http.StatusServiceUnavailable)
		return
	}
	rooms := slices.DeleteFunc(all, func(rs RoomStats) bool { return rs.Recording == "" })
	slices.SortFunc(rooms, func(a, b RoomStats) int { return strings.Compare(a.ID, b.ID) })
	s.pruneViews()
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var b strings.Builder
	b.WriteString("<!doctype html><meta charset=utf-8><title>Rewind · live view</title>" +
		"<style>body{font:15px system-ui,sans-serif;margin:2em;background:#111418;color:#e6e8eb}a{color:#93c5fd}" +
		"td,th{padding:4px 14px 4px 0;text-align:left;vertical-align:top}small{color:#98a2ae}</style>" +
		"<h1>Rewind · live view</h1>")
	if s.cfg.Record.Dir == "" {
		b.WriteString("<p>This server does not record its matches: set record.dir (rewind serve --record DIR) to see them here.</p>")
	} else if len(rooms) == 0 {
		b.WriteString("<p>No room is open.</p>")
	}
	if len(rooms) > 0 {
		b.WriteString("<table><tr><th>room</th><th>tick</th><th>players</th><th>recording</th></tr>")
	}
	for _, rm := range rooms {
		var teams [3][]string // by team: 1, 2, other
		for _, p := range rm.Players {
			t := min(int(p.Team), 3) - 1
			if t < 0 {
				t = 2
			}
			teams[t] = append(teams[t], html.EscapeString(p.Name))
		}
		var who []string
		for i, names := range teams {
			if len(names) > 0 {
				label := fmt.Sprintf("team %d", i+1)
				if i == 2 {
					label = "no team"
				}
				who = append(who, label+": "+strings.Join(names, ", "))
			}
		}
		fmt.Fprintf(&b, "<tr class=room data-room=\"%s\" data-tick=\"%d\" data-players=\"%d\"><td><a href=\"rooms/%s/\">%s</a></td>"+
			"<td>%d <small>(%.1f s)</small></td><td>%d<br><small>%s</small></td><td><small>%s</small></td></tr>",
			html.EscapeString(rm.ID), rm.Tick, len(rm.Players), html.EscapeString(url.PathEscape(rm.ID)), html.EscapeString(rm.ID),
			rm.Tick, float64(rm.Tick)/float64(s.cfg.TickRate), len(rm.Players), strings.Join(who, " · "), html.EscapeString(rm.Recording))
	}
	if len(rooms) > 0 {
		b.WriteString("</table>")
	}
	w.Write([]byte(b.String()))
}

// viewRoom serves the live view of one room.
func (s *Server) viewRoom(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("room")
	s.mu.Lock()
	rm := s.rooms[id]
	s.mu.Unlock()
	if rm == nil || rm.recording == "" {
		http.Error(w, "room "+id+" is not open here, or not recorded (record.dir); a finished match's recording is viewed with rewind view FILE",
			http.StatusNotFound)
		return
	}
	s.pruneViews()
	s.viewMu.Lock()
	lv := s.views[rm.recording]
	if lv == nil {
		fw, err := view.Follow(rm.recording, s.cfg.registry(), int64(liveViewTicks*s.cfg.TickRate))
		if err != nil {
			s.viewMu.Unlock()
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		lv = &liveView{handler: http.StripPrefix("/view/rooms/"+id, view.Handler(fw)), room: id}
		if s.views == nil {
			s.views = map[string]*liveView{}
		}
		s.views[rm.recording] = lv
	}
	s.viewMu.Unlock()
	lv.handler.ServeHTTP(w, r)
}

// pruneViews forgets the live views of rooms that have closed.
func (s *Server) pruneViews() {
	s.viewMu.Lock()
	defer s.viewMu.Unlock()
	for path, lv := range s.views {
		s.mu.Lock()
		r := s.rooms[lv.room]
		s.mu.Unlock()
		if r == nil || r.recording != path {
			delete(s.views, path)
		}
	}
}
