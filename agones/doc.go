// Package agones is a client for the Agones SDK server, so that a Rewind game
// server can run as an Agones GameServer on Kubernetes.
//
// Agones runs an SDK server as a sidecar next to the game server and tells the
// game server where its REST (HTTP/JSON) gateway listens through the
// environment variable AGONES_SDK_HTTP_PORT ([EnvPort]). The client speaks to
// that gateway with net/http only: [Client.Ready] when the server accepts
// players, [Client.Health] periodically, [Client.Shutdown] when the session is
// over, [Client.WatchGameServer] to learn of allocations, and the metadata,
// player tracking (alpha), list and counter (beta) calls, and
// [Client.Allocate] (self-allocation). The endpoints, their bodies
// and responses, and the sources they are taken from, are listed in REST.md in
// this directory.
//
// A typical start:
//
//	cfg, ok, err := agones.ConfigFromEnv(os.Getenv)
//	if err != nil {
//		return err
//	}
//	if ok {
//		sdk := agones.New(cfg)
//		if err := sdk.Ready(ctx); err != nil {
//			return err
//		}
//	}
//
// Every error names the endpoint, as in "agones: POST /ready: dial tcp
// 127.0.0.1:9358: connect: connection refused". A response with a status
// other than 2xx is a [*StatusError], which carries the status and the message
// of the error body the gateway sends. The SDK server may start after the game
// server, so callers should retry the first calls.
//
// Package agonestest provides a fake SDK server for tests.
package agones
