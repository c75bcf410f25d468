/*
 * play: a player from a C program's frame loop, through librewind.
 *
 *   play ADDR CERT_SHA256_HEX ROOM NAME TEAM HITS SECONDS [LEVEL.glb] [--wait-close]
 *
 * It joins ROOM of the server at ADDR (open development mode: no token),
 * and every frame (about 120 a second) aims at the nearest enemy it is shown
 * and fires, until the server has confirmed HITS of its hits (hit markers),
 * then leaves. With --wait-close it then keeps its frame loop running on a
 * second session until that session closes (stop the server when it says
 * so): the frame calls must stay quick meanwhile. It exits 0 when all went
 * as it should, and prints what it saw; 1 otherwise. Before it plays, it checks that misuse
 * of the API (a null pointer, a stale handle, a call after close) gives an
 * error code, not a crash.
 *
 * Build:
 *   go build -buildmode=c-shared -o build/librewind.so ./cmd/librewind
 *   cc -O2 -Icmd/librewind -o build/play examples/c/play.c -Lbuild -lrewind -Wl,-rpath,'$ORIGIN' -lm
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rewind.h"

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_ms(int ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static int failures;

#define CHECK(cond, ...)                                  \
	do {                                              \
		if (!(cond)) {                            \
			fprintf(stderr, "FAIL: " __VA_ARGS__); \
			fprintf(stderr, "\n");            \
			failures++;                       \
		}                                         \
	} while (0)

static int parse_hex(const char *hex, uint8_t out[32])
{
	if (strlen(hex) != 64)
		return -1;
	for (int i = 0; i < 32; i++) {
		unsigned v;
		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return 0;
}

static uint8_t *read_file(const char *path, size_t *size)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(n > 0 ? n : 1);
	if (b && fread(b, 1, n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	fclose(f);
	*size = (size_t)n;
	return b;
}

/* misuse checks that wrong calls are errors, never crashes. */
static void misuse(rw_config *cfg)
{
	char err[256];
	rw_session s = 0;
	rw_frame f;
	rw_intent in = {0};
	int32_t n = 0;

	CHECK(rw_api_version() == RW_API_VERSION, "library version %d, header %d", rw_api_version(), RW_API_VERSION);
	CHECK(rw_connect(NULL, &s, err, sizeof err) == RW_ERR_ARGUMENT, "rw_connect(NULL cfg)");
	rw_config empty = {0};
	CHECK(rw_connect(&empty, &s, err, sizeof err) == RW_ERR_ARGUMENT && strstr(err, "addr") != NULL,
	      "rw_connect without addr: want an error naming addr, got \"%s\"", err);
	CHECK(rw_read_frame(0, &f, NULL, 0, NULL, 0) == RW_ERR_HANDLE, "rw_read_frame(0)");
	CHECK(rw_read_frame(12345, &f, NULL, 0, NULL, 0) == RW_ERR_HANDLE, "rw_read_frame(never given)");
	CHECK(rw_set_intent(0, &in) == RW_ERR_HANDLE, "rw_set_intent(0)");
	CHECK(rw_poll_events(0, NULL, 0, &n) == RW_ERR_HANDLE, "rw_poll_events(0)");
	CHECK(rw_close(0) == RW_ERR_HANDLE, "rw_close(0)");

	CHECK(rw_connect(cfg, &s, err, sizeof err) == RW_OK && s != 0, "rw_connect: %s", err);
	CHECK(rw_set_intent(s, NULL) == RW_ERR_ARGUMENT, "rw_set_intent(NULL)");
	CHECK(rw_read_frame(s, NULL, NULL, 0, NULL, 0) == RW_ERR_ARGUMENT, "rw_read_frame(NULL frame)");
	CHECK(rw_read_frame(s, &f, NULL, 4, NULL, 0) == RW_ERR_ARGUMENT, "rw_read_frame(NULL players, capacity 4)");
	CHECK(rw_poll_events(s, NULL, 4, &n) == RW_ERR_ARGUMENT, "rw_poll_events(NULL events, capacity 4)");
	CHECK(rw_close(s) == RW_OK, "rw_close");
	CHECK(rw_close(s) == RW_ERR_HANDLE, "rw_close twice");
	CHECK(rw_read_frame(s, &f, NULL, 0, NULL, 0) == RW_ERR_HANDLE, "rw_read_frame after rw_close");
	CHECK(rw_set_intent(s, &in) == RW_ERR_HANDLE, "rw_set_intent after rw_close");
	CHECK(strcmp(rw_result_string(RW_ERR_HANDLE), "not a session (0, unknown, or closed)") == 0, "rw_result_string");
}

/* aim points the intent at the nearest living enemy's chest, and fires. */
static void aim(const rw_frame *f, const rw_match *m, const rw_player *players, int n, rw_intent *in)
{
	double best = INFINITY;
	memset(in, 0, sizeof *in);
	in->weapon = m->loadout_count > 0 ? m->loadout[0] : 0;
	for (int i = 0; i < n; i++) {
		const rw_player *p = &players[i];
		if (!p->alive || p->team == f->self.team)
			continue;
		double dx = p->pos.x - f->self.pos.x, dy = p->pos.y + 1.0 - (f->self.pos.y + m->eye_height),
		       dz = p->pos.z - f->self.pos.z;
		double d = sqrt(dx * dx + dy * dy + dz * dz);
		if (d < best) {
			best = d;
			in->yaw = atan2(dx, dz);
			in->pitch = atan2(dy, sqrt(dx * dx + dz * dz));
			in->fire = 1;
		}
	}
}

int main(int argc, char **argv)
{
	int wait_close = argc > 8 && strcmp(argv[argc - 1], "--wait-close") == 0;
	if (wait_close)
		argc--;
	if (argc < 8) {
		fprintf(stderr, "usage: play ADDR CERT_SHA256_HEX ROOM NAME TEAM HITS SECONDS [LEVEL.glb] [--wait-close]\n");
		return 2;
	}
	uint8_t cert[32];
	if (parse_hex(argv[2], cert) != 0) {
		fprintf(stderr, "play: CERT_SHA256_HEX: want 64 hex digits\n");
		return 2;
	}
	int want = atoi(argv[6]);
	double seconds = atof(argv[7]);
	rw_config cfg = {0};
	cfg.addr = argv[1];
	cfg.cert_sha256 = cert;
	cfg.room = argv[3];
	cfg.name = argv[4];
	cfg.team = (uint8_t)atoi(argv[5]);
	if (argc > 8) {
		cfg.level_name = argv[8];
		cfg.level_data = read_file(argv[8], &cfg.level_size);
		if (!cfg.level_data) {
			fprintf(stderr, "play: cannot read %s\n", argv[8]);
			return 2;
		}
	}

	misuse(&cfg);

	char err[256];
	rw_session s;
	if (rw_connect(&cfg, &s, err, sizeof err) != RW_OK) {
		fprintf(stderr, "play: rw_connect: %s\n", err);
		return 1;
	}
	rw_player players[64];
	rw_event events[32];
	rw_frame f;
	rw_match m;
	int have_match = 0, markers = 0, frames = 0, saw_enemy = 0;
	double worst = 0, total = 0, start = now_ms();
	while (markers < want && now_ms() - start < seconds * 1e3) {
		double t0 = now_ms();
		rw_result r = rw_read_frame(s, &f, players, 64, NULL, 0);
		double took = now_ms() - t0;
		worst = took > worst ? took : worst;
		total += took;
		frames++;
		CHECK(r == RW_OK, "rw_read_frame: %s", rw_result_string(r));
		if (f.status == RW_CLOSED) {
			size_t len;
			rw_session_error(s, err, sizeof err, &len);
			fprintf(stderr, "play: the session closed: %s\n", err);
			return 1;
		}
		if (f.status == RW_PLAYING && !have_match)
			have_match = rw_read_match(s, &m) == RW_OK;
		if (have_match && f.players > 0) {
			/* A short buffer is no error: the frame says how many there are. */
			rw_frame g;
			rw_player one;
			CHECK(rw_read_frame(s, &g, &one, 1, NULL, 0) == RW_OK && g.players == f.players, "rw_read_frame with room for one");
			CHECK(rw_read_frame(s, &g, NULL, 0, NULL, 0) == RW_OK && g.players == f.players, "rw_read_frame with no room");
		}
		if (have_match && f.self.alive) {
			int n = f.players < 64 ? f.players : 64;
			rw_intent in;
			aim(&f, &m, players, n, &in);
			saw_enemy |= in.fire;
			rw_set_intent(s, &in);
		}
		int32_t k = 0;
		rw_poll_events(s, events, 32, &k);
		for (int i = 0; i < k; i++) {
			if (events[i].kind == RW_EVENT_HIT_MARKER && events[i].damage > 0)
				markers++;
		}
		sleep_ms(8);
	}
	/* A frame's calls back to back, warm: what the library costs a frame. */
	rw_intent idle = {0};
	double b0 = now_ms();
	for (int i = 0; i < 10000; i++) {
		int32_t k;
		rw_read_frame(s, &f, players, 64, NULL, 0);
		rw_set_intent(s, &idle);
		rw_poll_events(s, events, 32, &k);
	}
	double per_frame_us = (now_ms() - b0) / 10000 * 1e3;
	rw_stats st;
	rw_read_stats(s, &st);
	rw_weapon w;
	CHECK(!have_match || rw_read_weapon(s, m.loadout[0], &w) == RW_OK, "rw_read_weapon");
	printf("played: %d hit markers (%llu hits confirmed of %llu shots), %d frames, rw_read_frame %.1f us on average and "
	       "%.3f ms at the slowest; a frame's calls back to back %.2f us; RTT %.1f ms, level %s, weapon %s (%s)\n",
	       markers, (unsigned long long)st.hits_confirmed, (unsigned long long)st.shots_fired, frames, total / frames * 1e3, worst,
	       per_frame_us, st.rtt_ms,
	       have_match ? m.level : "?", have_match ? w.name : "?", have_match ? w.kind : "?");
	CHECK(saw_enemy, "no frame showed an enemy");
	CHECK(markers >= want, "%d hit markers in %.0f s, want %d", markers, seconds, want);
	/* A snapshot may bring a hit's marker before the control stream's Hit
	 * event, which the counter counts: so no more than this. */
	CHECK(st.hits_confirmed > 0 && st.shots_fired >= st.hits_confirmed, "stats: %llu hits confirmed of %llu shots",
	      (unsigned long long)st.hits_confirmed, (unsigned long long)st.shots_fired);
	CHECK(rw_close(s) == RW_OK, "rw_close");
	if (!wait_close)
		goto done;

	/* A second session, kept until the server goes away: the test stops
	 * the server once this line is printed. */
	char name[64];
	snprintf(name, sizeof name, "%s-2", cfg.name);
	cfg.name = name;
	if (rw_connect(&cfg, &s, err, sizeof err) != RW_OK) {
		fprintf(stderr, "play: rw_connect: %s\n", err);
		return 1;
	}
	int playing = 0, closed = 0;
	worst = 0;
	start = now_ms();
	while (!closed && now_ms() - start < 60e3) {
		double t0 = now_ms();
		rw_read_frame(s, &f, players, 64, NULL, 0);
		int32_t k = 0;
		rw_poll_events(s, events, 32, &k);
		double took = now_ms() - t0;
		worst = took > worst ? took : worst;
		if (f.status == RW_PLAYING && !playing) {
			playing = 1;
			printf("waiting for the server to go away\n");
			fflush(stdout);
		}
		for (int i = 0; i < k; i++) {
			if (events[i].kind == RW_EVENT_CLOSED) {
				closed = 1;
				rw_session_error(s, err, sizeof err, NULL);
				printf("closed: code %llu, \"%s\" (%s); the slowest frame meanwhile %.3f ms\n",
				       (unsigned long long)events[i].code, events[i].name, err, worst);
			}
		}
		sleep_ms(8);
	}
	CHECK(closed, "the session never closed after the server went away");
	CHECK(rw_read_frame(s, &f, players, 64, NULL, 0) == RW_OK && f.status == RW_CLOSED, "a closed session's frame");
	rw_intent in = {0};
	CHECK(rw_set_intent(s, &in) == RW_ERR_CLOSED, "rw_set_intent on a closed session");
	CHECK(rw_close(s) == RW_OK, "rw_close of a closed session");
done:
	free((void *)cfg.level_data);
	if (failures) {
		fprintf(stderr, "play: %d checks failed\n", failures);
		return 1;
	}
	printf("ok\n");
	return 0;
}
