/*
 * core.h: librewind's inside, shared by its C half (core.c: the API of
 * rewind.h) and its Go half (main.go: the sessions). Not installed.
 *
 * The API's calls run on the game's threads and never run Go code: they
 * read and write a session's mailbox, C memory under a C mutex, and queue
 * requests (connect, close) that a goroutine takes from a C queue. The Go
 * half fills each mailbox from the session's own goroutines, which never
 * enter the game's runtime. So a garbage collector of the host's that stops
 * its threads with signals (Boehm's, in Unity's Mono and IL2CPP) never
 * finds one of them on a goroutine's stack (docs/engines.md, "Inside
 * another runtime").
 */
#ifndef REWIND_CORE_H
#define REWIND_CORE_H

#include <pthread.h>
#include <stdint.h>

#include "rewind.h"

#define RWCORE_HIDDEN __attribute__((visibility("hidden")))

/* A view: what the client showed at one of its ticks. */
typedef struct {
	int valid;
	int64_t at_ns; /* CLOCK_MONOTONIC when published */
	int64_t dt_ns; /* the tick's length */
	int64_t tick;
	double render_time;
	int32_t tick_rate;
	rw_self self;
	rw_player *players;
	int32_t players_n, players_cap;
	rw_object *objects;
	int32_t objects_n, objects_cap;
} rwcore_view;

/* The config of a connect request, copied out of the caller's. */
typedef struct {
	char *addr, *token, *room, *name, *class_name, *level_name;
	uint8_t team;
	uint8_t cert[32];
	int has_cert;
	int32_t insecure_skip_verify;
	uint8_t *level_data;
	size_t level_size;
	int32_t interp_delay_ms, dial_timeout_ms, quic_datagrams_only, events;
} rwcore_config;

/* A session's mailbox. */
typedef struct rwcore_mailbox {
	pthread_mutex_t mu;
	int refs; /* the game's handle, and the Go half: freed when both let go */
	int32_t status;
	rw_intent intent;
	uint8_t pressed_fire, pressed_reload, pressed_jump;
	rwcore_view views[2];
	int cur; /* the newer view */
	rw_event *ring;
	int32_t ring_cap, head, n;
	uint64_t dropped;
	rw_event closing;
	int has_closing;
	rw_stats stats;
	rw_match match;
	int has_match;
	rw_weapon *weapons;
	int32_t weapons_n;
	char error[512];
	rwcore_config cfg;
} rwcore_mailbox;

/* Request kinds. */
enum { RWCORE_CONNECT = 1, RWCORE_CLOSE = 2 };

/* For the Go half. */
RWCORE_HIDDEN rwcore_mailbox *rwcore_next_request(int *kind);
RWCORE_HIDDEN void rwcore_publish(rwcore_mailbox *mb, rwcore_view *in, rw_player *players, int32_t np, rw_object *objects,
				  int32_t no);
RWCORE_HIDDEN void rwcore_take_intent(rwcore_mailbox *mb, rw_intent *out);
RWCORE_HIDDEN void rwcore_push_event(rwcore_mailbox *mb, rw_event *ev);
RWCORE_HIDDEN void rwcore_set_stats(rwcore_mailbox *mb, rw_stats *st);
RWCORE_HIDDEN void rwcore_set_match(rwcore_mailbox *mb, rw_match *m, rw_weapon *weapons, int32_t n);
RWCORE_HIDDEN void rwcore_close(rwcore_mailbox *mb, rw_event *closing, const char *err, size_t err_len);
RWCORE_HIDDEN void rwcore_release(rwcore_mailbox *mb);
RWCORE_HIDDEN int rwcore_fix_gc_signals(void);

#endif /* REWIND_CORE_H */
