package server

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/rs/zerolog"
)

// Check is a preflight of cfg: it loads what New loads (the configuration's
// values, the TLS certificate, the weapons, the level, the matchmaker's
// keys) and checks that the results file and the recording directory can
// be written, without creating either, opening a socket or starting a
// room. It returns every problem it finds (errors.Join), each naming its
// config key and file; the level's warnings go to log.
func Check(cfg Config, log zerolog.Logger) error {
	_, err := load(&cfg, log)
	errs := []error{err}
	if _, _, err := agonesClientConfig(&cfg.Agones, os.Getenv); err != nil {
		errs = append(errs, err)
	}
	if cfg.Results.File != "" {
		if err := writableFile(cfg.Results.File); err != nil {
			errs = append(errs, fmt.Errorf("config: results.file: %w", err))
		}
	}
	if cfg.Record.Dir != "" {
		if err := writableDir(cfg.Record.Dir); err != nil {
			errs = append(errs, fmt.Errorf("config: record.dir: %w", err))
		}
	}
	return errors.Join(errs...)
}

// writableFile reports why the server could not append to the file at
// path: an existing file must open for writing (nothing is written), a new
// one's directory must take files.
func writableFile(path string) error {
	fi, err := os.Stat(path)
	switch {
	case missing(err):
		if err := writableDir(filepath.Dir(path)); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		return nil
	case err != nil:
		return err
	case fi.IsDir():
		return fmt.Errorf("%s is a directory", path)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return err
	}
	return f.Close()
}

// writableDir reports why the server could not write files into dir: dir,
// or (when it does not exist yet, and the server would create it) its
// nearest existing ancestor, must be a directory that takes a file. The
// file written to find out is removed; nothing else is created.
func writableDir(dir string) error {
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if missing(err) && filepath.Dir(d) != d {
			continue
		}
		if err != nil {
			return err
		}
		if !fi.IsDir() {
			return fmt.Errorf("%s is not a directory", d)
		}
		f, err := os.CreateTemp(d, ".rewind-write-check-*")
		if err != nil {
			return fmt.Errorf("%s takes no file: %w", d, err)
		}
		f.Close()
		return os.Remove(f.Name())
	}
}

// missing reports whether a Stat failed because the path does not exist, or
// one of its parents is a file (the walk up names it).
func missing(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
