/*
 * core.c: the API of rewind.h, in C: the calls a game makes run here, on
 * its threads, and never enter Go (core.h says why).
 */
#define _GNU_SOURCE
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core.h"

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- Mailboxes ---- */

static rwcore_mailbox *mailbox_new(int32_t events)
{
	rwcore_mailbox *mb = calloc(1, sizeof *mb);
	if (!mb)
		return NULL;
	mb->ring = calloc((size_t)events, sizeof *mb->ring);
	if (!mb->ring) {
		free(mb);
		return NULL;
	}
	pthread_mutex_init(&mb->mu, NULL);
	mb->ring_cap = events;
	mb->refs = 2; /* the game's handle, and the Go half */
	mb->status = RW_CONNECTING;
	return mb;
}

static void config_free(rwcore_config *c)
{
	free(c->addr);
	free(c->token);
	free(c->room);
	free(c->name);
	free(c->class_name);
	free(c->level_name);
	free(c->level_data);
	memset(c, 0, sizeof *c);
}

static void mailbox_free(rwcore_mailbox *mb)
{
	for (int i = 0; i < 2; i++) {
		free(mb->views[i].players);
		free(mb->views[i].objects);
	}
	free(mb->ring);
	free(mb->weapons);
	config_free(&mb->cfg);
	pthread_mutex_destroy(&mb->mu);
	free(mb);
}

static void hold(rwcore_mailbox *mb)
{
	pthread_mutex_lock(&mb->mu);
	mb->refs++;
	pthread_mutex_unlock(&mb->mu);
}

void rwcore_release(rwcore_mailbox *mb)
{
	pthread_mutex_lock(&mb->mu);
	int refs = --mb->refs;
	pthread_mutex_unlock(&mb->mu);
	if (refs == 0)
		mailbox_free(mb);
}

/* ---- Handles ---- */

/* A handle is a slot's index plus one, and the slot's generation above
 * bit 32: a slot given out again has a new generation, so an old handle to
 * it finds nothing. */
typedef struct {
	rwcore_mailbox *mb;
	uint32_t gen;
} slot;

static pthread_mutex_t table_mu = PTHREAD_MUTEX_INITIALIZER;
static slot *slots;
static uint32_t nslots;

static rw_session table_add(rwcore_mailbox *mb)
{
	pthread_mutex_lock(&table_mu);
	uint32_t i = 0;
	while (i < nslots && slots[i].mb)
		i++;
	if (i == nslots) {
		slot *grown = realloc(slots, (nslots * 2 + 8) * sizeof *slots);
		if (!grown) {
			pthread_mutex_unlock(&table_mu);
			return 0;
		}
		memset(grown + nslots, 0, (nslots + 8) * sizeof *slots);
		slots = grown;
		nslots = nslots * 2 + 8;
	}
	slots[i].mb = mb;
	slots[i].gen++;
	rw_session h = ((rw_session)slots[i].gen << 32) | (i + 1);
	pthread_mutex_unlock(&table_mu);
	return h;
}

/* table_get returns the mailbox of h with a reference the caller releases
 * (NULL for no session); remove also takes it out of the table, whose
 * reference (the game's) then passes to the caller. */
static rwcore_mailbox *table_get(rw_session h, int remove)
{
	uint32_t i = (uint32_t)h - 1, gen = (uint32_t)(h >> 32);
	rwcore_mailbox *mb = NULL;
	pthread_mutex_lock(&table_mu);
	if (h != 0 && i < nslots && slots[i].mb && slots[i].gen == gen) {
		mb = slots[i].mb;
		if (remove)
			slots[i].mb = NULL;
		else
			hold(mb);
	}
	pthread_mutex_unlock(&table_mu);
	return mb;
}

/* ---- Requests, for the Go half ---- */

typedef struct request {
	int kind;
	rwcore_mailbox *mb;
	struct request *next;
} request;

static pthread_mutex_t req_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t req_cv = PTHREAD_COND_INITIALIZER;
static request *req_head, *req_tail;

/* enqueue queues a request, which holds a reference to mb. */
static int enqueue(int kind, rwcore_mailbox *mb)
{
	request *r = malloc(sizeof *r);
	if (!r)
		return -1;
	hold(mb);
	r->next = NULL;
	r->kind = kind;
	r->mb = mb;
	pthread_mutex_lock(&req_mu);
	if (req_tail)
		req_tail->next = r;
	else
		req_head = r;
	req_tail = r;
	pthread_cond_signal(&req_cv);
	pthread_mutex_unlock(&req_mu);
	return 0;
}

rwcore_mailbox *rwcore_next_request(int *kind)
{
	pthread_mutex_lock(&req_mu);
	while (!req_head)
		pthread_cond_wait(&req_cv, &req_mu);
	request *r = req_head;
	req_head = r->next;
	if (!req_head)
		req_tail = NULL;
	pthread_mutex_unlock(&req_mu);
	rwcore_mailbox *mb = r->mb;
	*kind = r->kind;
	free(r);
	return mb;
}

/* ---- What the Go half writes ---- */

static int reserve(void **p, int32_t *cap, int32_t n, size_t size)
{
	if (n <= *cap)
		return 1;
	void *grown = realloc(*p, (size_t)n * size);
	if (!grown)
		return 0;
	*p = grown;
	*cap = n;
	return 1;
}

void rwcore_publish(rwcore_mailbox *mb, rwcore_view *in, rw_player *players, int32_t np, rw_object *objects, int32_t no)
{
	pthread_mutex_lock(&mb->mu);
	rwcore_view *v = &mb->views[mb->cur ^ 1];
	if (!reserve((void **)&v->players, &v->players_cap, np, sizeof *v->players))
		np = v->players_cap;
	if (!reserve((void **)&v->objects, &v->objects_cap, no, sizeof *v->objects))
		no = v->objects_cap;
	if (np > 0)
		memcpy(v->players, players, (size_t)np * sizeof *players);
	if (no > 0)
		memcpy(v->objects, objects, (size_t)no * sizeof *objects);
	v->players_n = np;
	v->objects_n = no;
	v->tick = in->tick;
	v->dt_ns = in->dt_ns;
	v->render_time = in->render_time;
	v->tick_rate = in->tick_rate;
	v->self = in->self;
	v->at_ns = now_ns();
	v->valid = 1;
	mb->cur ^= 1;
	pthread_mutex_unlock(&mb->mu);
}

void rwcore_take_intent(rwcore_mailbox *mb, rw_intent *out)
{
	pthread_mutex_lock(&mb->mu);
	*out = mb->intent;
	out->fire |= mb->pressed_fire;
	out->reload |= mb->pressed_reload;
	out->jump |= mb->pressed_jump;
	mb->pressed_fire = mb->pressed_reload = mb->pressed_jump = 0;
	pthread_mutex_unlock(&mb->mu);
}

void rwcore_push_event(rwcore_mailbox *mb, rw_event *ev)
{
	pthread_mutex_lock(&mb->mu);
	if (mb->n == mb->ring_cap) {
		mb->dropped++;
	} else {
		mb->ring[(mb->head + mb->n) % mb->ring_cap] = *ev;
		mb->n++;
	}
	pthread_mutex_unlock(&mb->mu);
}

void rwcore_set_stats(rwcore_mailbox *mb, rw_stats *st)
{
	pthread_mutex_lock(&mb->mu);
	mb->stats = *st;
	pthread_mutex_unlock(&mb->mu);
}

void rwcore_set_match(rwcore_mailbox *mb, rw_match *m, rw_weapon *weapons, int32_t n)
{
	rw_weapon *copy = calloc((size_t)(n > 0 ? n : 1), sizeof *copy);
	if (copy && n > 0)
		memcpy(copy, weapons, (size_t)n * sizeof *copy);
	pthread_mutex_lock(&mb->mu);
	free(mb->weapons);
	mb->weapons = copy;
	mb->weapons_n = copy ? n : 0;
	mb->match = *m;
	mb->has_match = 1;
	if (mb->status == RW_CONNECTING)
		mb->status = RW_PLAYING;
	pthread_mutex_unlock(&mb->mu);
}

void rwcore_close(rwcore_mailbox *mb, rw_event *closing, const char *err, size_t err_len)
{
	pthread_mutex_lock(&mb->mu);
	mb->status = RW_CLOSED;
	mb->closing = *closing;
	mb->has_closing = 1;
	size_t n = err_len < sizeof mb->error - 1 ? err_len : sizeof mb->error - 1;
	memcpy(mb->error, err, n);
	mb->error[n] = 0;
	pthread_mutex_unlock(&mb->mu);
}

/* rwcore_fix_gc_signals takes SA_ONSTACK back off the handlers of SIGPWR
 * and SIGXCPU, which Go's runtime put on every handler it found when it
 * started. Those are the signals with which Boehm's garbage collector (in
 * Unity's Mono and IL2CPP on Linux and Android, and in Mono's Boehm build)
 * stops and restarts the host's threads; its handlers are not written for
 * the small alternate stacks those threads keep, and crash on them. Go
 * needs SA_ONSTACK on a handler that may run on one of its own threads; the
 * collector signals only the threads it manages, which librewind never
 * lends to Go (core.h), so these handlers run on the host's stacks as they
 * were meant to. It returns how many handlers it changed. */
int rwcore_fix_gc_signals(void)
{
	static const int gc_signals[] = {SIGPWR, SIGXCPU};
	int changed = 0;
	for (size_t i = 0; i < sizeof gc_signals / sizeof gc_signals[0]; i++) {
		struct sigaction sa;
		if (sigaction(gc_signals[i], NULL, &sa) != 0)
			continue;
		int custom = (sa.sa_flags & SA_SIGINFO) ? sa.sa_sigaction != NULL
							 : (sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
		if (custom && (sa.sa_flags & SA_ONSTACK)) {
			sa.sa_flags &= ~SA_ONSTACK;
			if (sigaction(gc_signals[i], &sa, NULL) == 0)
				changed++;
		}
	}
	return changed;
}

/* ---- The API ---- */

int32_t rw_api_version(void) { return RW_API_VERSION; }

int32_t rw_struct_size(int32_t id)
{
	switch (id) {
	case RW_STRUCT_CONFIG:
		return sizeof(rw_config);
	case RW_STRUCT_INTENT:
		return sizeof(rw_intent);
	case RW_STRUCT_SELF:
		return sizeof(rw_self);
	case RW_STRUCT_PLAYER:
		return sizeof(rw_player);
	case RW_STRUCT_OBJECT:
		return sizeof(rw_object);
	case RW_STRUCT_FRAME:
		return sizeof(rw_frame);
	case RW_STRUCT_EVENT:
		return sizeof(rw_event);
	case RW_STRUCT_STATS:
		return sizeof(rw_stats);
	case RW_STRUCT_MATCH:
		return sizeof(rw_match);
	case RW_STRUCT_WEAPON:
		return sizeof(rw_weapon);
	}
	return 0;
}

static void write_string(char *buf, size_t size, const char *s)
{
	if (!buf || size == 0)
		return;
	size_t n = strlen(s);
	if (n > size - 1)
		n = size - 1;
	memcpy(buf, s, n);
	buf[n] = 0;
}

static rw_result fail(char *err, size_t err_size, rw_result r, const char *format, ...)
{
	if (err && err_size > 0) {
		va_list ap;
		va_start(ap, format);
		vsnprintf(err, err_size, format, ap);
		va_end(ap);
	}
	return r;
}

/* copy_string copies s, NULL staying NULL; *ok falls on a failed allocation. */
static char *copy_string(const char *s, int *ok)
{
	if (!s)
		return NULL;
	char *d = strdup(s);
	if (!d)
		*ok = 0;
	return d;
}

rw_result rw_connect(rw_config *cfg, rw_session *out, char *err, size_t err_size)
{
	if (!cfg || !out)
		return fail(err, err_size, RW_ERR_ARGUMENT, "rw_connect: cfg and out must not be NULL");
	if (!cfg->addr || !cfg->addr[0])
		return fail(err, err_size, RW_ERR_ARGUMENT, "rw_config.addr: empty");
	if (cfg->level_data && (cfg->level_size == 0 || cfg->level_size > (size_t)1 << 30))
		return fail(err, err_size, RW_ERR_ARGUMENT, "rw_config.level_size: %zu bytes with level_data set", cfg->level_size);
	if (cfg->interp_delay_ms < 0)
		return fail(err, err_size, RW_ERR_ARGUMENT, "rw_config.interp_delay_ms: %d is negative", cfg->interp_delay_ms);
	if (cfg->dial_timeout_ms < 0)
		return fail(err, err_size, RW_ERR_ARGUMENT, "rw_config.dial_timeout_ms: %d is negative", cfg->dial_timeout_ms);
	if (cfg->events < 0)
		return fail(err, err_size, RW_ERR_ARGUMENT, "rw_config.events: %d is negative", cfg->events);
	rwcore_mailbox *mb = mailbox_new(cfg->events > 0 ? cfg->events : 256);
	if (!mb)
		return fail(err, err_size, RW_ERR_INTERNAL, "rw_connect: out of memory");
	rwcore_config *c = &mb->cfg;
	int ok = 1;
	c->addr = copy_string(cfg->addr, &ok);
	c->token = copy_string(cfg->token, &ok);
	c->room = copy_string(cfg->room, &ok);
	c->name = copy_string(cfg->name, &ok);
	c->class_name = copy_string(cfg->class_name, &ok);
	c->level_name = copy_string(cfg->level_name, &ok);
	c->team = cfg->team;
	if (cfg->cert_sha256) {
		memcpy(c->cert, cfg->cert_sha256, sizeof c->cert);
		c->has_cert = 1;
	}
	c->insecure_skip_verify = cfg->insecure_skip_verify;
	if (cfg->level_data) {
		c->level_data = malloc(cfg->level_size);
		if (c->level_data) {
			memcpy(c->level_data, cfg->level_data, cfg->level_size);
			c->level_size = cfg->level_size;
		} else {
			ok = 0;
		}
	}
	c->interp_delay_ms = cfg->interp_delay_ms;
	c->dial_timeout_ms = cfg->dial_timeout_ms;
	c->quic_datagrams_only = cfg->quic_datagrams_only;
	c->events = cfg->events;
	rw_session h = ok ? table_add(mb) : 0;
	if (!h) {
		mailbox_free(mb);
		return fail(err, err_size, RW_ERR_INTERNAL, "rw_connect: out of memory");
	}
	if (enqueue(RWCORE_CONNECT, mb) != 0) {
		table_get(h, 1);
		mailbox_free(mb);
		return fail(err, err_size, RW_ERR_INTERNAL, "rw_connect: out of memory");
	}
	*out = h;
	write_string(err, err_size, "");
	return RW_OK;
}

rw_result rw_set_intent(rw_session s, rw_intent *in)
{
	if (!in)
		return RW_ERR_ARGUMENT;
	rwcore_mailbox *mb = table_get(s, 0);
	if (!mb)
		return RW_ERR_HANDLE;
	rw_result r = RW_OK;
	pthread_mutex_lock(&mb->mu);
	if (mb->status == RW_CLOSED) {
		r = RW_ERR_CLOSED;
	} else {
		mb->intent = *in;
		mb->pressed_fire |= in->fire != 0;
		mb->pressed_reload |= in->reload != 0;
		mb->pressed_jump |= in->jump != 0;
	}
	pthread_mutex_unlock(&mb->mu);
	rwcore_release(mb);
	return r;
}

/* How far, in metres, a player or projectile may move between two client
 * ticks and still be drawn moving: further is a respawn or a new entity,
 * drawn where it is now. */
#define TELEPORT 4.0

static rw_vec3 lerp3(rw_vec3 a, rw_vec3 b, double t)
{
	rw_vec3 v = {a.x + (b.x - a.x) * t, a.y + (b.y - a.y) * t, a.z + (b.z - a.z) * t};
	return v;
}

static double dist3(rw_vec3 a, rw_vec3 b)
{
	double dx = b.x - a.x, dy = b.y - a.y, dz = b.z - a.z;
	return sqrt(dx * dx + dy * dy + dz * dz);
}

static double lerp_angle(double a, double b, double t) { return a + remainder(b - a, 2 * M_PI) * t; }

rw_result rw_read_frame(rw_session s, rw_frame *f, rw_player *players, int32_t players_cap, rw_object *objects,
			int32_t objects_cap)
{
	if (!f || players_cap < 0 || objects_cap < 0 || (!players && players_cap > 0) || (!objects && objects_cap > 0))
		return RW_ERR_ARGUMENT;
	rwcore_mailbox *mb = table_get(s, 0);
	if (!mb)
		return RW_ERR_HANDLE;
	int64_t now = now_ns();
	pthread_mutex_lock(&mb->mu);
	memset(f, 0, sizeof *f);
	f->status = mb->status;
	const rwcore_view *cur = &mb->views[mb->cur], *prev = &mb->views[mb->cur ^ 1];
	if (cur->valid) {
		double alpha = 1;
		if (prev->valid && cur->tick == prev->tick + 1 && cur->dt_ns > 0) {
			alpha = (double)(now - cur->at_ns) / (double)cur->dt_ns;
			alpha = alpha < 0 ? 0 : alpha > 1 ? 1 : alpha;
		} else {
			prev = cur; /* a jump of the clock, or the first view: nothing to blend */
		}
		f->tick = cur->tick;
		f->alpha = alpha;
		f->tick_rate = cur->tick_rate;
		f->render_time = prev->render_time + (cur->render_time - prev->render_time) * alpha;
		f->self = cur->self;
		if (cur->self.alive == prev->self.alive && dist3(prev->self.pos, cur->self.pos) <= TELEPORT) {
			f->self.pos = lerp3(prev->self.pos, cur->self.pos, alpha);
			f->self.yaw = lerp_angle(prev->self.yaw, cur->self.yaw, alpha);
			f->self.pitch = prev->self.pitch + (cur->self.pitch - prev->self.pitch) * alpha;
		}
		f->players = cur->players_n;
		f->objects = cur->objects_n;
		/* Both views' entities are in id order (the snapshot's). */
		int32_t np = cur->players_n < players_cap ? cur->players_n : players_cap, j = 0;
		for (int32_t i = 0; i < np; i++) {
			rw_player p = cur->players[i];
			while (j < prev->players_n && prev->players[j].id < p.id)
				j++;
			if (j < prev->players_n) {
				const rw_player *q = &prev->players[j];
				if (q->id == p.id && q->alive == p.alive && dist3(q->pos, p.pos) <= TELEPORT) {
					p.pos = lerp3(q->pos, p.pos, alpha);
					p.yaw = lerp_angle(q->yaw, p.yaw, alpha);
					p.pitch = q->pitch + (p.pitch - q->pitch) * alpha;
				}
			}
			players[i] = p;
		}
		int32_t no = cur->objects_n < objects_cap ? cur->objects_n : objects_cap;
		j = 0;
		for (int32_t i = 0; i < no; i++) {
			rw_object o = cur->objects[i];
			while (j < prev->objects_n && prev->objects[j].id < o.id)
				j++;
			if (j < prev->objects_n) {
				const rw_object *q = &prev->objects[j];
				if (q->id == o.id && o.kind == RW_OBJECT_PROJECTILE && dist3(q->pos, o.pos) <= TELEPORT)
					o.pos = lerp3(q->pos, o.pos, alpha);
			}
			objects[i] = o;
		}
	}
	pthread_mutex_unlock(&mb->mu);
	rwcore_release(mb);
	return RW_OK;
}

rw_result rw_poll_events(rw_session s, rw_event *events, int32_t cap, int32_t *n)
{
	if (!n || cap < 0 || (!events && cap > 0))
		return RW_ERR_ARGUMENT;
	*n = 0;
	rwcore_mailbox *mb = table_get(s, 0);
	if (!mb)
		return RW_ERR_HANDLE;
	pthread_mutex_lock(&mb->mu);
	int32_t k = 0;
	while (k < cap && mb->n > 0) {
		events[k++] = mb->ring[mb->head];
		mb->head = (mb->head + 1) % mb->ring_cap;
		mb->n--;
	}
	if (k < cap && mb->n == 0 && mb->has_closing) {
		events[k++] = mb->closing;
		mb->has_closing = 0;
	}
	pthread_mutex_unlock(&mb->mu);
	rwcore_release(mb);
	*n = k;
	return RW_OK;
}

rw_result rw_read_stats(rw_session s, rw_stats *st)
{
	if (!st)
		return RW_ERR_ARGUMENT;
	rwcore_mailbox *mb = table_get(s, 0);
	if (!mb)
		return RW_ERR_HANDLE;
	pthread_mutex_lock(&mb->mu);
	*st = mb->stats;
	st->status = mb->status;
	st->events_dropped = mb->dropped;
	pthread_mutex_unlock(&mb->mu);
	rwcore_release(mb);
	return RW_OK;
}

/* not_playing is what a call that needs the match returns without it. */
static rw_result not_playing(const rwcore_mailbox *mb) { return mb->status == RW_CLOSED ? RW_ERR_CLOSED : RW_ERR_NOT_YET; }

rw_result rw_read_match(rw_session s, rw_match *m)
{
	if (!m)
		return RW_ERR_ARGUMENT;
	rwcore_mailbox *mb = table_get(s, 0);
	if (!mb)
		return RW_ERR_HANDLE;
	pthread_mutex_lock(&mb->mu);
	rw_result r = mb->has_match ? RW_OK : not_playing(mb);
	if (r == RW_OK)
		*m = mb->match;
	pthread_mutex_unlock(&mb->mu);
	rwcore_release(mb);
	return r;
}

rw_result rw_read_weapon(rw_session s, int32_t id, rw_weapon *w)
{
	if (!w)
		return RW_ERR_ARGUMENT;
	rwcore_mailbox *mb = table_get(s, 0);
	if (!mb)
		return RW_ERR_HANDLE;
	pthread_mutex_lock(&mb->mu);
	rw_result r = mb->has_match ? RW_OK : not_playing(mb);
	if (r == RW_OK && (id < 0 || id >= mb->weapons_n))
		r = RW_ERR_ARGUMENT;
	if (r == RW_OK)
		*w = mb->weapons[id];
	pthread_mutex_unlock(&mb->mu);
	rwcore_release(mb);
	return r;
}

rw_result rw_session_error(rw_session s, char *buf, size_t buf_size, size_t *len)
{
	rwcore_mailbox *mb = table_get(s, 0);
	if (!mb)
		return RW_ERR_HANDLE;
	pthread_mutex_lock(&mb->mu);
	write_string(buf, buf_size, mb->error);
	if (len)
		*len = strlen(mb->error);
	pthread_mutex_unlock(&mb->mu);
	rwcore_release(mb);
	return RW_OK;
}

rw_result rw_close(rw_session s)
{
	rwcore_mailbox *mb = table_get(s, 1);
	if (!mb)
		return RW_ERR_HANDLE;
	/* The Go half leaves the match; a mailbox it cannot be told about (no
	 * memory for the request) is left to the session's own end. */
	enqueue(RWCORE_CLOSE, mb);
	rwcore_release(mb); /* the game's reference */
	return RW_OK;
}
