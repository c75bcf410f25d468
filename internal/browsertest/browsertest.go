// Package browsertest starts a real browser for the tests that check a page:
// Debian's Chromium, headless, driven with chromedp. A machine without it
// skips those tests, unless REWIND_REQUIRE_BROWSER is set (CI sets it, after
// installing the chromium package), where a missing browser fails them.
package browsertest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"
)

// RequireEnv makes a missing browser a test failure rather than a skip.
const RequireEnv = "REWIND_REQUIRE_BROWSER"

// ScreenshotsEnv names a directory where Screenshot also keeps its files.
const ScreenshotsEnv = "REWIND_SCREENSHOTS"

// Path returns the Chromium executable: $REWIND_CHROMIUM, or chromium or
// chromium-browser on the PATH.
func Path() (string, bool) {
	if p := os.Getenv("REWIND_CHROMIUM"); p != "" {
		return p, true
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, true
		}
	}
	return "", false
}

// New starts a headless Chromium for the test and returns a chromedp
// context of one tab, closed when the test ends.
func New(t testing.TB) context.Context {
	t.Helper()
	path, ok := Path()
	if !ok {
		msg := "no Chromium (apt-get install chromium; .ci/run installs it)"
		if os.Getenv(RequireEnv) != "" {
			t.Fatal(msg + ", and " + RequireEnv + " is set")
		}
		t.Skip(msg)
	}
	// The flags this machine needs: no sandbox as root, no GPU, and nothing
	// that reaches for the network (it is closed).
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path), chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck, chromedp.UserDataDir(t.TempDir()), chromedp.WindowSize(1300, 900),
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	return ctx
}

// Screenshot captures the whole page as PNG (quality 100: PNG) into the test's temporary
// directory, and into $REWIND_SCREENSHOTS when it is set; it returns the
// first path.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	if dir := os.Getenv(ScreenshotsEnv); dir != "" {
		if err := os.WriteFile(filepath.Join(dir, name), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return path
}
