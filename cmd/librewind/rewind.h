/*
 * rewind.h: librewind, the Rewind client as a C library.
 *
 * librewind plays one or more players in Rewind matches from a game engine's
 * frame loop (Unity, Unreal, Godot, or any C or C++ program). It connects to
 * a Rewind server over QUIC, predicts the local player with the server's own
 * movement code on the level the game holds, interpolates everybody else,
 * and sends the player's input with the time it was shown, which the server
 * rewinds to when it judges a shot. docs/engines.md is the guide.
 *
 * The rules of the API:
 *
 *  - Plain data. Every struct is plain data the caller owns: the library
 *    reads what it is given during the call (rw_config and rw_intent it
 *    never writes) and writes only into the buffers it is given, never
 *    keeping a pointer to either after the call returns. No pointer of the
 *    library's (Go's) crosses this header.
 *  - Handles. A session is an rw_session, a number: 0 is never one, and
 *    a handle closed with rw_close is never given out again, so a stale
 *    handle is an error (RW_ERR_HANDLE), never another session.
 *  - Errors. Every function that can fail returns an rw_result: RW_OK (0)
 *    or an error code. rw_result_string names a code; functions that can
 *    fail for a reason worth reading take a caller-owned buffer for the
 *    message. Misuse (a null pointer, a stale handle, a call after close)
 *    is an error, never a crash.
 *  - Never blocking. No call waits for the network: rw_connect returns at
 *    once and the session connects in the background (rw_read_frame's status
 *    says when it plays); the library's own threads run the connection and
 *    the client's fixed-rate tick, and leave what to draw in C memory that
 *    the calls read. A call holds the session's lock only for a copy.
 *  - No Go on the caller's thread. The calls are C: they never run the Go
 *    code inside the library on the game's threads, so a host runtime that
 *    stops its threads to collect garbage never finds one inside Go.
 *  - Threads. Every function may be called from any thread, and calls on
 *    one session from several threads are serialized. The library never
 *    calls back into the caller: the caller polls.
 *  - Memory. rw_read_frame, rw_set_intent, rw_poll_events and rw_read_stats
 *    allocate nothing.
 *  - Hosting. librewind contains Go's runtime, which starts when the
 *    library loads and sets up signal handlers (docs/engines.md, "Inside
 *    another runtime"): a handler the host installs after loading librewind
 *    must have SA_ONSTACK; librewind takes SA_ONSTACK back off the handlers
 *    of SIGPWR and SIGXCPU, Boehm's garbage collector's; one process holds
 *    one Go runtime (no second Go library); and librewind cannot be
 *    unloaded (dlclose).
 *
 * Units: metres, seconds, radians. The world's Y axis is up; a yaw of 0
 * faces +Z and grows toward +X (a player facing yaw looks along
 * (sin yaw·cos pitch, sin pitch, cos yaw·cos pitch)).
 */
#ifndef REWIND_H
#define REWIND_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* RW_API_VERSION is this header's version; rw_api_version returns the
 * library's. They must be equal: a struct's layout or a function's meaning
 * changes only with the version. */
#define RW_API_VERSION 1

typedef int32_t rw_result;

enum {
	RW_OK = 0,
	RW_ERR_ARGUMENT = 1, /* a null pointer, or a field out of range */
	RW_ERR_HANDLE = 2,   /* not a session: 0, never given out, or closed */
	RW_ERR_CLOSED = 3,   /* the session is over (rw_read_frame's status is RW_CLOSED) */
	RW_ERR_NOT_YET = 4,  /* not joined yet (rw_read_match before RW_PLAYING) */
	RW_ERR_INTERNAL = 5  /* a fault in the library: a bug, please report it */
};

/* rw_session is a session's handle: 0 is never one. */
typedef uint64_t rw_session;

typedef struct {
	double x, y, z;
} rw_vec3;

/* rw_config says where to connect, who to be and which level the game
 * holds. Zero fields take their defaults. */
typedef struct {
	const char *addr;  /* the server, "host:port"; required */
	const char *token; /* the matchmaker's connect token; NULL or "" in open development mode */
	/* Open development mode only (no token): the room, the player's name,
	 * team (0: the server chooses) and class (NULL: the default). With a
	 * token, NULL, "" and 0 take the token's. */
	const char *room;
	const char *name;
	const char *class_name;
	uint8_t team;
	/* The server's certificate: its SHA-256, 32 bytes (the matchmaker
	 * hands it out with the token), or NULL to verify the server against
	 * the system's roots. insecure_skip_verify accepts any certificate:
	 * development on one machine only. */
	const uint8_t *cert_sha256;
	int32_t insecure_skip_verify;
	/* The level the game holds: level_data (level_size bytes of a .glb
	 * file) named level_name; or, with no data, level_name is a file's
	 * path, or "arena" (or NULL) for the built-in arena. */
	const char *level_name;
	const uint8_t *level_data;
	size_t level_size;
	int32_t interp_delay_ms;     /* the longest interpolation delay; 0: 250 */
	int32_t dial_timeout_ms;     /* connecting and joining; 0: 10000 */
	int32_t quic_datagrams_only; /* 1: refuse the sealed channel */
	int32_t events;              /* events kept for rw_poll_events; 0: 256 */
} rw_config;

/* rw_intent is what the player does, as the engine reads it. Buttons are
 * 0 (up) or 1 (down). A fire, reload or jump press that lasts less than a
 * client tick still counts once. */
typedef struct {
	double move_x; /* strafe right, -1..1 */
	double move_z; /* forward, -1..1 */
	double yaw;
	double pitch;
	uint8_t weapon; /* a weapon id of the match (rw_read_match) */
	uint8_t fire;
	uint8_t reload;
	uint8_t jump;
	uint8_t crouch;
	uint8_t sprint;
} rw_intent;

/* A session's status. */
enum {
	RW_CONNECTING = 0,
	RW_PLAYING = 1,
	RW_CLOSED = 2 /* rw_session_error says why */
};

/* rw_self is the local player as shown: predicted, with a correction being
 * smoothed away. */
typedef struct {
	uint32_t id;
	uint8_t team;
	uint8_t alive;
	uint8_t crouched;
	uint8_t on_ground;
	float health;
	rw_vec3 pos; /* the feet */
	rw_vec3 vel; /* m/s */
	double yaw;
	double pitch;
} rw_self;

/* rw_player is a remote player as shown, in the past (rw_frame's
 * render_time), where the server rewinds it to judge the local player's
 * shots. */
typedef struct {
	uint32_t id;
	uint8_t team;
	uint8_t alive;
	uint8_t crouched; /* its capsule is rw_match's crouch_height tall */
	uint8_t health;   /* capped at 255 */
	rw_vec3 pos;      /* the feet */
	double yaw;
	double pitch;
} rw_player;

/* Object kinds. */
enum {
	RW_OBJECT_PROJECTILE = 2,
	RW_OBJECT_SHIELD = 3
};

/* rw_object is a projectile (pos: its centre; vel: m/s) or a placed shield
 * (pos: its lowest corner; vel: its size), as shown. */
typedef struct {
	uint32_t id;
	uint32_t owner;
	uint8_t kind;
	uint8_t team;
	uint8_t weapon;
	rw_vec3 pos;
	rw_vec3 vel;
} rw_object;

/* rw_frame is what to draw now: the client's last two ticks blended by the
 * time since the newer, so motion is smooth at any frame rate. */
typedef struct {
	int32_t status;     /* RW_CONNECTING, RW_PLAYING, RW_CLOSED */
	int32_t tick_rate;  /* the server's ticks per second */
	int64_t tick;       /* the client tick of the newer view */
	double alpha;       /* 0..1: from the older view to the newer */
	double render_time; /* the server time remote players are shown at, ticks */
	rw_self self;
	int32_t players; /* how many remote players there are (rw_read_frame wrote min(this, capacity)) */
	int32_t objects; /* how many objects there are */
} rw_frame;

/* Event kinds. */
enum {
	RW_EVENT_HIT_MARKER = 1, /* the player's hit, confirmed: other is the target */
	RW_EVENT_DAMAGED = 2,    /* the player was hit: player is the shooter */
	RW_EVENT_KILL = 3,       /* player killed other (player 0, weapon 255: the level) */
	RW_EVENT_RESPAWN = 4,    /* player is back at pos, facing yaw */
	RW_EVENT_JOINED = 5,     /* player joined team as name */
	RW_EVENT_LEFT = 6,       /* player left */
	RW_EVENT_CLOSED = 7      /* the session ended, always last: code and name (the reason) */
};

/* rw_event is something that happened. */
typedef struct {
	uint8_t kind;
	uint8_t weapon;
	uint8_t flags;        /* hits: 1 head, 2 splash, 4 streak */
	uint8_t reason;       /* a hit that dealt no damage: 1 invulnerable, 2 already dead, 3 out of reach */
	uint8_t via_snapshot; /* a hit marker a snapshot brought first */
	uint8_t team;
	uint16_t shot; /* the shot counter the hit's input carried */
	uint32_t tick; /* the server tick it happened at */
	uint32_t player;
	uint32_t other;
	float damage;
	rw_vec3 pos;
	double yaw;
	uint64_t code;  /* closed: the server's close code, 0 after rw_close, 65536 for an error of the client's */
	char name[64];  /* joined: the name; closed: the reason; NUL-terminated, cut to fit */
} rw_event;

/* rw_stats are a session's counters. */
typedef struct {
	int32_t status;
	double rtt_ms;        /* the round trip to the server */
	double snapshot_loss; /* the share of recent snapshots that never arrived */
	uint32_t server_tick; /* the newest snapshot's tick */
	uint64_t ticks;       /* client ticks predicted */
	uint64_t snapshots;
	uint64_t snapshots_dropped;
	uint64_t corrections;    /* predictions the server's state corrected */
	uint64_t shots_fired;
	uint64_t hits_confirmed;
	uint64_t hits_clamped;   /* hits the server judged nearer the present than shown (its bound on view lag) */
	uint64_t kills;
	uint64_t deaths;
	uint64_t bytes_in;
	uint64_t bytes_out;
	uint64_t events_dropped; /* events lost to a full queue: poll more often */
	double interp_ms;        /* the interpolation delay in use */
} rw_stats;

/* rw_match is the match the session joined (the server's Welcome). */
typedef struct {
	uint32_t player; /* the local player's id */
	uint8_t team;
	int32_t tick_rate;
	double radius;       /* every player's capsule */
	double height;
	double crouch_height;
	double head_height;  /* the top head_height metres of the capsule are the head */
	double eye_height;
	double crouch_eye_height;
	int32_t weapons;     /* weapon ids are 0..weapons-1 (rw_read_weapon) */
	int32_t loadout_count;
	uint8_t loadout[8];  /* the weapon ids the player carries, its class's */
	char level[64];      /* the level's name */
	char room[64];
	char class_name[64];
} rw_match;

/* rw_weapon is one weapon of the match. */
typedef struct {
	char name[32];
	char kind[16];       /* "hitscan", "projectile", "melee", "placeable", or a studio's kind */
	double damage;
	double hit_range;    /* hitscan, metres */
	double speed;        /* projectile, m/s */
	double spread;       /* the cone's half-angle, radians */
	int32_t pellets;
	int32_t fire_interval_ticks;
	int32_t magazine;    /* 0: unlimited */
	int32_t reload_ticks;
} rw_weapon;

/* rw_api_version returns the library's RW_API_VERSION. */
int32_t rw_api_version(void);

/* The structs, for rw_struct_size. */
enum {
	RW_STRUCT_CONFIG = 1,
	RW_STRUCT_INTENT = 2,
	RW_STRUCT_SELF = 3,
	RW_STRUCT_PLAYER = 4,
	RW_STRUCT_OBJECT = 5,
	RW_STRUCT_FRAME = 6,
	RW_STRUCT_EVENT = 7,
	RW_STRUCT_STATS = 8,
	RW_STRUCT_MATCH = 9,
	RW_STRUCT_WEAPON = 10
};

/* rw_struct_size returns the size in bytes of a struct as the library was
 * built (0 for an unknown id): a binding in another language checks its
 * own layouts against it before the first call. */
int32_t rw_struct_size(int32_t id);

/* rw_result_string names a result code: a static string, never NULL. */
static inline const char *rw_result_string(rw_result r)
{
	switch (r) {
	case RW_OK:
		return "ok";
	case RW_ERR_ARGUMENT:
		return "invalid argument";
	case RW_ERR_HANDLE:
		return "not a session (0, unknown, or closed)";
	case RW_ERR_CLOSED:
		return "the session is over";
	case RW_ERR_NOT_YET:
		return "not joined yet";
	case RW_ERR_INTERNAL:
		return "internal error in librewind";
	}
	return "unknown result code";
}

/* rw_connect checks cfg's fields and starts connecting in the background;
 * *out is the new session. On RW_ERR_ARGUMENT, err (of err_size bytes, may
 * be NULL) says which field. What only the connection can find wrong (a
 * level file that does not load, a refused join, no server) closes the
 * session: RW_EVENT_CLOSED, and rw_session_error says why. */
rw_result rw_connect(rw_config *cfg, rw_session *out, char *err, size_t err_size);

/* rw_set_intent sets what the player does from the next client tick on. */
rw_result rw_set_intent(rw_session s, rw_intent *in);

/* rw_read_frame fills f, and players and objects (of the capacities given; NULL
 * with 0) with the first remote players and objects; f->players and
 * f->objects say how many there are, so a short buffer is never an error:
 * grow it and ask again. Before the session plays, f holds only the
 * status. */
rw_result rw_read_frame(rw_session s, rw_frame *f, rw_player *players, int32_t players_cap, rw_object *objects,
		   int32_t objects_cap);

/* rw_poll_events moves up to cap events to events, oldest first; *n is
 * how many. RW_EVENT_CLOSED comes once, last. */
rw_result rw_poll_events(rw_session s, rw_event *events, int32_t cap, int32_t *n);

/* rw_read_stats fills st. */
rw_result rw_read_stats(rw_session s, rw_stats *st);

/* rw_read_match fills m once the session plays (RW_ERR_NOT_YET before). */
rw_result rw_read_match(rw_session s, rw_match *m);

/* rw_read_weapon fills w with weapon id's rules, once the session plays. */
rw_result rw_read_weapon(rw_session s, int32_t id, rw_weapon *w);

/* rw_session_error writes why a closed session ended (empty while it
 * plays, or when rw_close ended it) to buf, NUL-terminated and cut to
 * buf_size; *len (may be NULL) is the message's full length. */
rw_result rw_session_error(rw_session s, char *buf, size_t buf_size, size_t *len);

/* rw_close leaves the match (telling the server, in the background) and
 * frees the handle: any later call with it returns RW_ERR_HANDLE. */
rw_result rw_close(rw_session s);

#ifdef __cplusplus
}
#endif

#endif /* REWIND_H */
