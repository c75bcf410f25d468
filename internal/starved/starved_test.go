package starved

import (
	"os/exec"
	"testing"
	"time"
)

// A process that stops running for 300 ms (stopped by a signal from a child
// shell, and continued by it: what a machine busier than its cores does to
// it in smaller pieces) makes the probe wake late, and the probe says how
// late.
func TestProbeSeesAStall(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("needs sh")
	}
	p := Start(time.Millisecond, 100*time.Millisecond)
	defer p.Stop()
	before := p.Late()
	if err := exec.Command("sh", "-c", "kill -STOP $PPID; sleep 0.3; kill -CONT $PPID").Run(); err != nil {
		t.Fatal(err)
	}
	// The probe wakes at most a period after the process runs again; its
	// count is read once it has.
	deadline := time.Now().Add(10 * time.Second)
	for p.Late() == before && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	p.Stop()
	if p.Late() == before {
		t.Fatal("no late wake counted across a 300 ms stop")
	}
	if w := p.Worst(); w < 250*time.Millisecond {
		t.Errorf("worst wake %v late, want about 300 ms", w)
	}
	// Stopped, it counts nothing more.
	n := p.Late()
	time.Sleep(5 * time.Millisecond)
	if p.Late() != n {
		t.Errorf("a stopped probe counted %d more", p.Late()-n)
	}
}
