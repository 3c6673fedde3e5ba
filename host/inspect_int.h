/* SPDX-License-Identifier: MIT */
/* inspect_int.h: what the inspector's files share, and only they (inspect.h is the
 * public side).
 *
 *   inspect.c         the server: libmicrohttpd, the checks every request passes, routing,
 *                     the frame loop's calls, the jobs' runner;
 *   inspect_api.c     the JSON answers that are made at once (world, plugins, schedule, log,
 *                     an entity, edits, saves);
 *   inspect_search.c  the answers that walk the world (a name search), made as jobs.
 *
 * A job is an answer too long for one frame boundary: its connection is suspended, the
 * runner gives it slices of time (at each boundary and while the loop waits for the next
 * frame), and when it is done its connection is resumed and answered. Invariant: a job is
 * on the runner's list from its start until it is done (or its client is gone), and it is
 * freed with its request, when libmicrohttpd says the request is over.
 */
#ifndef HOST_INSPECT_INT_H
#define HOST_INSPECT_INT_H

#include <cjson/cJSON.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>

#include "inspect.h"
#include "hostapi.h"
#include "loader.h"
#include "plugin.h"
#include "session.h"

#define LOG_RING   1000 /* log lines kept for a page that connects late */
#define FRAME_RING 600  /* frame times kept for the chart (10 s at 60 fps) */

typedef struct log_line {
    uint64_t seq;
    double t; /* seconds since the inspector started */
    int level;
    char *who, *msg;
} log_line;

typedef struct step_mark {
    const void *step; /* the manager or system */
    uint64_t total_ns, count;
    double last_us; /* what the previous request said: kept while no timed frame ran */
} step_mark;

#define STAT_RING     60 /* samples kept: a minute of seconds, an hour of minutes */
#define STAT_MANAGERS 32 /* managers a sample holds */

/* One sample of the world over time (inspect_stats.c). */
typedef struct stat_manager {
    char name[48];
    uint32_t components;
    uint64_t bytes; /* its plugin's memory */
} stat_manager;

typedef struct stat_sample {
    double t; /* seconds since the inspector started */
    uint32_t entities, reloads, managers;
    float frame_mean_us, frame_max_us; /* the intervals of its second (its minute) */
    stat_manager m[STAT_MANAGERS];
} stat_sample;

typedef struct inspect_job inspect_job;
typedef struct inspect_conn inspect_conn;
typedef struct inspect_index inspect_index;

#define CONNECTION_MAX 128 /* open connections at once (libmicrohttpd refuses more) */
#define WAITING_MAX    64  /* of them waiting for a request's headers (the gate's cap) */

struct host_inspector {
    host_session *hs;
    struct MHD_Daemon *d;
    int epoll_fd;
    char token[33];
    char addr[46];
    unsigned port;
    bool read_only;
    /* the frame controls (control.h), or NULL */
    struct host_control *control;
    char *save_file, *save_dir; /* where the page's saves go (copies), or NULL */
    char *url_file;             /* the URL with the token, for this user (removed at the end) */
    uint64_t start_ns;
    /* frames: the measured rate; the last frame intervals (boundary to boundary) and the
     * inspector's own time in each (answering, jobs, downloads: not its sleep) */
    uint64_t rate_t0, rate_frame0, last_poll_ns;
    double fps;
    float frame_us[FRAME_RING], own_us[FRAME_RING];
    uint32_t frame_at, frame_n;
    uint64_t own_ns;      /* since the last boundary */
    uint64_t boundary_ns; /* of it, at the last boundary (what delayed the next frame) */
    host_timing own;      /* per frame, since the start */
    /* the schedule's recent times: the totals at the last /api/schedule */
    step_mark *marks;
    size_t mark_count;
    /* the job threads' busy nanoseconds at the last /api/schedule, and when (jobs.h) */
    uint64_t jobs_busy[64], jobs_at_ns;
    /* the log */
    log_line ring[LOG_RING];
    uint64_t next_seq;
    /* jobs under way, oldest first (the runner serves them in that order) */
    inspect_job *jobs, *jobs_last;
    /* the world over time (inspect_stats.c): the last minute's seconds, the last hour's
     * minutes, and the frame intervals of the second under way */
    stat_sample sec[STAT_RING], min[STAT_RING];
    uint32_t sec_at, sec_n, min_at, min_n, sec_since_minute;
    uint64_t st_last_ns, st_sum_ns, st_max_ns, st_frames;
    /* the entity lists kept for paging (inspect_index.c), most recent first */
    inspect_index *indexes;
    /* downloads under way (GET /api/scene) and the bytes they wrote so far */
    unsigned streams;
    uint64_t stream_bytes;
    /* the gate: every connection, how many wait for a request's headers, the names the
     * Host header may give besides the fixed ones (--inspect-host) */
    inspect_conn *conns;
    unsigned waiting;
    uint64_t next_sweep, closed_slow;
    char **hosts;
    size_t host_count;
};

/* A request's own record (libmicrohttpd's con_cls): its body, and its job if it has one. */
typedef struct request {
    char *body;
    size_t len, cap;
    bool too_big;
    bool checked;       /* its headers passed the gate */
    size_t raw_uri_len; /* the URI as it came, escapes and all (0: not known) */
    inspect_job *job;
} request;

/* What a kind of job does. */
typedef struct inspect_job_kind {
    const char *name; /* "search": the trace's and the schedule's name for its slices */
    /* Work until host_now_ns() reaches until_ns, or to the end: true when done. Runs under
     * the crash guard (--safe): before it calls plugin code it sets j->crashed and
     * j->crash_in to the plugin and the call, which a crash is then blamed on. */
    bool (*step)(host_inspector *in, inspect_job *j, uint64_t until_ns);
    /* The answer (consumed) once done, with its HTTP status; NULL: out of memory. */
    cJSON *(*answer)(host_inspector *in, inspect_job *j, unsigned *status);
    void (*free)(inspect_job *j);
    /* Instead of answer (NULL: none): queue the answer on c itself (one that is not JSON). */
    enum MHD_Result (*reply)(host_inspector *in, inspect_job *j, struct MHD_Connection *c);
} inspect_job_kind;

/* The part every job starts with. */
struct inspect_job {
    const inspect_job_kind *kind;
    struct MHD_Connection *c;
    inspect_job *next;
    uint64_t start_ns, work_ns; /* when it began; the time its slices took */
    uint64_t longest_ns;        /* its longest slice */
    uint64_t frame0;            /* the world's frame when it began */
    uint32_t slices;
    bool done;
    bool gone;            /* its client hung up: dropped unanswered */
    const void *crashed;  /* the plugin whose code its step calls now (a host_plugin), or NULL */
    const char *crash_in; /* and which call: what a crash is blamed on */
    int crash_sig;        /* the signal that stopped it (--safe), or 0 */
};

/* Start job j (its fields past the common part filled) for connection c of request r:
 * the connection waits, suspended, until the runner has done it. MHD_YES, or the error
 * answered (j freed). */
enum MHD_Result inspect_job_start(host_inspector *in, struct MHD_Connection *c, request *r,
                                  inspect_job *j);

/* ---- the gate (inspect_gate.c) ---- */

/* libmicrohttpd's notify-connection callback: a connection starts or ends. */
void inspect_gate_notify(void *cls, struct MHD_Connection *c, void **socket_context,
                         enum MHD_ConnectionNotificationCode toe);
/* libmicrohttpd's unescape callback: %HH decoded, a %00 noted (refused by the check). */
size_t inspect_gate_unescape(void *cls, struct MHD_Connection *c, char *s);
/* libmicrohttpd's URI-log callback: the request's record, made when its request line has
 * come (the URI's length as sent: the gate's measure of the headers). */
void *inspect_gate_uri(void *cls, const char *uri, struct MHD_Connection *c);
/* A request's headers have come: 0 when it may go on, else the HTTP status with *msg. */
unsigned inspect_gate_check(host_inspector *in, struct MHD_Connection *c, const request *r,
                            const char *url, const char *method, const char *version,
                            const char **msg);
/* The request on c is over: c waits for the next one's headers (keep-alive). */
void inspect_gate_request_done(host_inspector *in, struct MHD_Connection *c);
/* Close the connections past their deadline (at most every 100 ms; now: host_now_ns). */
void inspect_gate_sweep(host_inspector *in, uint64_t now);
/* Free what is left of the connections' records (after the daemon stopped). */
void inspect_gate_free(host_inspector *in);

/* ---- replies (inspect.c) ---- */

/* The headers every answer carries: its Content-Type, no caching, no sniffing, the
 * Content-Security-Policy (the page's own scripts only, in no frame), no Referer. */
void inspect_headers(struct MHD_Response *r, const char *type);

/* Send text (malloc'd, consumed) with status and content type. MHD_NO when it could not
 * be queued (the connection is then closed). */
enum MHD_Result inspect_reply_text(struct MHD_Connection *c, unsigned status, const char *type,
                                   char *text, size_t len);
/* Send v (consumed) as JSON. */
enum MHD_Result inspect_reply_json(struct MHD_Connection *c, unsigned status, cJSON *v);
/* {"error": msg, "path": ...} with status (a scene loader's "NAME:L:C: entities[0].PATH:
 * what" becomes "PATH: what" with its path). */
enum MHD_Result inspect_reply_error(struct MHD_Connection *c, unsigned status, const char *msg);

/* A query argument as a number in [0, max] (larger: max); fallback when absent, -1 when it
 * is not a number. */
long inspect_query_long(struct MHD_Connection *c, const char *key, long fallback, long max);

/* ---- answers (inspect_api.c) ---- */

cJSON *inspect_world_json(host_inspector *in);
cJSON *inspect_plugins_json(host_inspector *in);
cJSON *inspect_schedule_json(host_inspector *in);
cJSON *inspect_log_json(host_inspector *in, uint64_t since);
enum MHD_Result inspect_events(host_inspector *in, struct MHD_Connection *c);
/* GET /api/entities: a page of the list, or (with name=) a search job. */
enum MHD_Result inspect_entity_page(host_inspector *in, struct MHD_Connection *c, request *r);
/* Every request about one live entity e: /api/entities/{id}[/{manager}]; rest is what
 * follows the id ("" or "/manager"). */
enum MHD_Result inspect_entity(host_inspector *in, struct MHD_Connection *c, request *r,
                               const char *method, ecs_entity e, const char *rest);
enum MHD_Result inspect_create_entity(host_inspector *in, struct MHD_Connection *c, request *r);
enum MHD_Result inspect_save_world(host_inspector *in, struct MHD_Connection *c, request *r);
enum MHD_Result inspect_download_scene(host_inspector *in, struct MHD_Connection *c);

/* (inspect_entities.c) "INDEX.GENERATION" of e. */
void inspect_id_text(ecs_entity e, char *buf, size_t size);
/* The JSON array of entities list[0..n), as the scene writer writes them (dead ones left
 * out); NULL when a manager failed or memory ran out. */
cJSON *inspect_entities_of(host_session *hs, const ecs_entity *list, uint32_t n);
/* The list items of the live entities list[0..n) (full: with their components as "data")
 * appended to items. False when a manager could not write its components. */
bool inspect_entity_items(host_session *hs, const ecs_entity *list, uint32_t n, bool full,
                          cJSON *items);

/* ---- entity lists (inspect_index.c) ---- */

/* What a page of a list asks for. */
typedef struct inspect_page_args {
    long offset, limit;
    bool full;         /* each item with its components as "data" */
    bool roots;        /* the roots of the hierarchy, not every entity */
    const char *name;  /* the entities whose name or scene id holds it, or NULL */
    const char *query; /* the entities a query matches ("{transform, not mesh}"), or NULL */
} inspect_page_args;

/* GET /api/entities: a page of every entity, the roots, a search or a query (a job). */
enum MHD_Result inspect_index_page(host_inspector *in, struct MHD_Connection *c, request *r,
                                   const inspect_page_args *a);
/* GET /api/entities/{id}/children: a page of parent's children (a job). */
enum MHD_Result inspect_children_page(host_inspector *in, struct MHD_Connection *c, request *r,
                                      ecs_entity parent, const inspect_page_args *a);
/* Free the lists kept (at the inspector's end). */
void inspect_index_free_all(host_inspector *in);
/* Destroy live e (every manager told at once): {"destroyed": [e and every descendant it took
 * with it, as ids], "count": n}. */
cJSON *inspect_destroy(host_inspector *in, ecs_entity e);

/* ---- the world over time (inspect_stats.c) ---- */

/* At a frame boundary (now), after a frame interval_ns long: a sample once a second. */
void inspect_stats_frame(host_inspector *in, uint64_t now, uint64_t interval_ns);
/* GET /api/stats: {"minute": [samples, oldest first], "hour": [...]}. */
cJSON *inspect_stats_json(host_inspector *in);

/* ---- the frame controls (inspect_control.c) ---- */

/* GET /api/control's answer: paused, frame, time scale, the loop, the kept snapshots. */
cJSON *inspect_control_json(host_inspector *in);
/* /api/control, /api/snapshots[/NAME[/restore]], /api/loop (p: the path after /api/). */
enum MHD_Result inspect_route_control(host_inspector *in, struct MHD_Connection *c, request *r,
                                      const char *method, const char *p);

/* ---- the 3D view's data (inspect_view.c) ---- */

/* GET /api/view: every placed entity's position and box, binary (a job). */
enum MHD_Result inspect_view_start(host_inspector *in, struct MHD_Connection *c, request *r);

#endif
