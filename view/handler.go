package view

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"strconv"
)

//go:embed static
var static embed.FS

// Handler serves the page and its match: the page (index.html, view.js,
// view.css) at its root, the match as JSON at match.json (?from=TICK for
// the part from a tick on). The page's links are relative: it can be
// mounted under any prefix that ends in a slash.
func Handler(src Source) http.Handler {
	mux := http.NewServeMux()
	files, _ := fs.Sub(static, "static") // the directory is embedded: it exists
	mux.Handle("GET /", http.FileServerFS(files))
	mux.HandleFunc("GET /match.json", func(w http.ResponseWriter, r *http.Request) {
		from := int64(0)
		if s := r.URL.Query().Get("from"); s != "" {
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n < 0 {
				http.Error(w, "from: want a tick ≥ 0", http.StatusBadRequest)
				return
			}
			from = n
		}
		m, err := src.Match(from)
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		json.NewEncoder(w).Encode(m)
	})
	return mux
}
