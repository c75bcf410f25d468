// Package allocatortest provides a fake Agones allocator service for tests:
// the REST (HTTP/JSON) side of agones-allocator, which a matchmaker calls to
// allocate a GameServer from outside the cluster. It follows the published
// API: the Allocator Service guide
// (https://agones.dev/site/docs/advanced/allocator-service/), the service's
// .proto file (proto/allocation/allocation.proto: POST /gameserverallocation,
// AllocationRequest, AllocationResponse) and its Swagger file
// (pkg/allocation/go/allocation.swagger.json), and the allocator's own code
// at Agones v1.56 (cmd/allocator/main.go, pkg/allocation/converters,
// pkg/apis/allocation/v1, pkg/gameserverallocations).
//
// What follows the real allocator:
//
//   - HTTPS with mutual TLS: a client must show a certificate that verifies
//     against the client CA (the allocator-client-ca Secret) for client
//     authentication, or the handshake fails, as with the allocator's
//     RequireAnyClientCert and verifyClientCertificate. The fake makes its
//     own certificate authorities with crypto/x509: CA verifies its server
//     certificate (the allocator-tls-ca Secret), and ClientCertificate issues
//     an allowlisted client certificate (like allocator-client.default).
//   - One route, POST /gameserverallocation, routed and answered as the
//     grpc-gateway does (runtime.ServeMux, DefaultHTTPErrorHandler): an
//     error is a google.rpc.Status, {"code": …, "message": …, "details": []},
//     with the HTTP status of its gRPC code. Another path is 404 (code 5);
//     another method on the path is 501 (code 12).
//   - The request is decoded as protojson does: field names as in the .proto
//     file, enums by name or number, 64-bit integers as JSON strings or
//     numbers, wrappers (StringValue, Int64Value) as their plain values.
//   - An invalid GameServerAllocation (GameServerAllocation.Validate) is
//     answered 500 with code 422: the allocator turns the Kubernetes
//     "Invalid" status into a gRPC status with the HTTP code 422 as its code,
//     which the gateway maps to 500. The message is Kubernetes' ("…
//     is invalid: spec.…"), without the "%!(EXTRA …)" the allocator appends
//     (it passes the message to status.Errorf as a format).
//   - No GameServer matching: 429 with code 8 (ResourceExhausted), "there is
//     no available GameServer to allocate", the allocator's default
//     (http-unallocated-status-code).
//   - Selection: GameServers in the request's namespace, the selectors in
//     order (labels, state, Counters and Lists), Packed scheduling (the
//     default) searching Allocated GameServers first, then by the request's
//     priorities, then by name; Distributed by priorities, then by name.
//   - The response: every field present (the allocator's gateway sets
//     EmitUnpopulated), 64-bit values as strings, the GameServer's labels and
//     annotations after the allocation's metadata was applied, and its
//     Counters and Lists after the actions.
//
// The GameServers are agonestest fakes of the SDK server, which Rewind
// servers under test run against: an allocation calls AllocateWith on the
// chosen one, with the request's metadata, Counter increments and List
// values, so the game server sees it on its watch as it would on a cluster.
// Name, labels (a Fleet's agones.dev/fleet), address, ports and node are
// what Agones' controller gives a GameServer; the test gives them in Add.
// State, annotations, Counters and Lists are the SDK fake's.
//
// What the fake does differently:
//
//   - It is strict where the real allocator is lenient, so that a client that
//     passes against it sends what the documentation says: an unknown field
//     (including one that differs from a field only in case) is refused with
//     400 and code 3, where the allocator's gateway discards it; a Counter
//     action other than "Increment" or "Decrement" is refused as invalid,
//     where the allocator allocates and records a warning event.
//   - Features it does not implement are refused with 501 and code 12, with
//     a message saying so: multi-cluster allocation, Counter actions other
//     than Increment, List actions other than addValues, and the capacity
//     actions.
//   - It reads the GameServers as they are at the request (the allocator's
//     cache is eventually consistent), allocates one request at a time
//     (the allocator batches), does not model nodes (Packed prefers the
//     nodes with the most Allocated GameServers first; Distributed without
//     priorities picks at random), and ignores players selectors (the
//     PlayerAllocationFilter feature, alpha and off by default).
package allocatortest
