package netshim_test

import (
	"log"
	"time"

	"github.com/rewind-gg/rewind/netshim"
)

// A shim in front of a server on port 4433 that gives every client a 60 ms
// round trip with some jitter and 2% loss each way.
func ExampleStart() {
	lossy := netshim.Conditions{
		Latency: 30 * time.Millisecond,
		Jitter:  5 * time.Millisecond,
		Loss:    0.02,
	}
	shim, err := netshim.Start(netshim.Config{
		Listen: "127.0.0.1:0",
		Target: "127.0.0.1:4433",
		Up:     lossy,
		Down:   lossy,
		Seed:   1,
	})
	if err != nil {
		log.Fatal(err)
	}
	defer shim.Close()

	// Clients dial shim.Addr() instead of the server.
	log.Printf("dial %v", shim.Addr())
}
