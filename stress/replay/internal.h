/* SPDX-License-Identifier: MIT */
/*
 * stress/replay/internal.h - what the replay's model (model.c, calls.c,
 * load.c) and its run (run.c) share: the trace, the builder, the model walk.
 *
 * Owns nothing at run time: struct replay_trace (the parsed log and its
 * model tree) is made by replay_load() and read by replay_run().
 *
 * Locking: a trace is read-only once replay_load() returns; a builder is
 * one replay_load()'s.
 * Ordering: none (no shared state).
 */
#ifndef UDC_STRESS_REPLAY_INTERNAL_H
#define UDC_STRESS_REPLAY_INTERNAL_H

#include <setjmp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/path.h"
#include "include/udcache.h"
#include "stress/replay.h"
#include "stress/replay/parse.h"

#define NONE UINT32_MAX	   /* no slot, no index */
#define ROOT ((uint32_t)1) /* the object "/" (ino 1) */
#define MAX_LINKS 40	   /* udc_walk's WALK_MAX_SYMLINKS */

/* ---------------------------------------------------------------------- */
/* The trace: objects, slots, events. */

enum obj_flag {
	OBJ_ORIGINAL = 0x01, /* exists at the start of the log */
	OBJ_SURE = 0x02,     /* the type is known; else a guessed regular file */
	OBJ_COMPLETE = 0x04, /* directory: a name not known is absent (made by the
			      * log, or removed) */
	OBJ_SYNTH = 0x08,    /* symlink: the target is unknown ("/\001L<id>") */
};

/*
 * A model object.  Invariants: type != UDC_TYPE_UNKNOWN; a directory has one
 * name at a time (parent, home); target is set iff type == UDC_TYPE_SYMLINK
 * and !(flags & OBJ_SYNTH).
 */
struct robj {
	uint8_t type;	       /* enum udc_type */
	uint8_t flags;	       /* OBJ_* */
	uint32_t parent;       /* directories: the parent while the model is built */
	uint32_t init_parent;  /* directories: the parent when a pass begins (original)
				* or when it is made (made by the log) */
	uint32_t home;	       /* the slot that first named it (NONE: root, orphan) */
	uint32_t slots;	       /* directories: the first of their slots (NONE) */
	uint32_t target, tlen; /* symlinks: the target, in t->str */
};

/*
 * A name: (dir, component).  init is its object at the start of the log (0:
 * absent); cur, known and unsure are the build's state: cur its object now,
 * known whether cur is a fact, unsure that cur was found by a call that
 * followed symlinks (the name may be a symlink to it).
 */
struct rslot {
	uint32_t dir, name; /* directory object; the component, in t->str */
	uint16_t nlen;
	uint8_t known, unsure;
	uint32_t init, cur;
	uint32_t next;	/* the next slot of dir (NONE) */
	uint32_t hnext; /* the next slot in the hash chain (NONE) */
};

/* A replayed event. */
struct revent {
	uint8_t kind;	/* enum replay_kind */
	uint8_t sys;	/* index in sys_table, for messages */
	uint8_t follow; /* lookups: follow a final symlink */
	uint8_t pad;
	int32_t expect;	     /* lookups: the log's outcome, 0 / -ENOENT / -ENOTDIR */
	uint32_t line;	     /* line number in the log */
	uint32_t start;	     /* lookups: the object a relative path starts at */
	uint32_t path, plen; /* lookups: the path, in t->str */
	uint32_t slot;	     /* mutations: the name changed (rename: the old name) */
	uint32_t slot2;	     /* rename: the new name */
	uint32_t obj;	     /* create, mkdir, link: the object now named */
};

struct replay_trace {
	char *str; /* names, paths, targets: NUL-terminated, by offset */
	size_t nstr, capstr;
	struct robj *objs; /* objs[0] unused: 0 means "absent" */
	size_t nobjs, capobjs;
	struct rslot *slots;
	size_t nslots, capslots;
	uint32_t *hash; /* slot hash buckets (NONE: empty), a power of two */
	size_t hsize;
	struct revent *ev;
	size_t nev, capev;
	struct replay_summary sum;
};


/* ---------------------------------------------------------------------- */
/* The builder: per-pid state and scratch buffers.  Every allocation made
 * while building goes through xrealloc(), which longjmp()s to replay_load()
 * on failure; everything allocated is reachable from the builder or the
 * trace, so replay_load() frees it all. */

struct pidst {
	int pid;
	bool used, exited;
	bool seen;	    /* the build has met it */
	bool chdir_seen;    /* prescan: a chdir came before any getcwd */
	uint32_t start_cwd; /* prescan: offset of its first getcwd (NONE) */
	uint32_t cwd;	    /* object */
	uint32_t *fds;	    /* fd -> object (0: unknown) */
	size_t nfds;
	uint32_t pending; /* a directory just opened (see fd_get) */
	int pending_fd;
	char *unfinished; /* the first half of an <unfinished ...> call */
	size_t ulen;
};


struct builder {
	struct replay_trace *t;
	jmp_buf fail;
	int err;
	bool prescan;
	struct pidst *pids; /* open addressing by pid, a power of two */
	size_t pidcap, npids;
	int last_pid;
	bool have_first;
	int first_pid;
	uint32_t init_cwd;
	uint32_t line;
	char *walkbuf; /* UDC_PATH_MAX + 1: spliced paths */
	char *join;    /* a joined <unfinished>/<resumed> line */
	size_t joincap;
	char *sbuf[3]; /* decoded string arguments */
	size_t scap[3];
	char *tbuf; /* a copy of a symlink target being walked */
	size_t tcap;
	char *file; /* the whole log */
	size_t flen;
};

/* What the log says of the walk being learnt from. */
struct kreq {
	bool follow;	    /* the call follows a final symlink */
	int want;	    /* the log's outcome: 0, -ENOENT or -ENOTDIR */
	uint8_t type;	    /* the final object's type if the call says (else UNKNOWN) */
	bool not_link;	    /* the final name is not a symlink (nofollow success) */
	uint32_t place;	    /* put this object at an unknown final slot */
	const char *target; /* type == SYMLINK: the target (NULL: unknown) */
	size_t tlen;
};

struct wstate {
	struct replay_trace *t;
	struct builder *b; /* building: learn from q; NULL in the replay */
	const struct kreq *q;
	const uint32_t *cur;	/* replay: object per slot */
	const uint32_t *parent; /* replay: parent per object */
	char *buf;		/* UDC_PATH_MAX + 1 bytes */
	/* Replay (NULL in the build): called for each name the walk looks up
	 * in a directory ("." and ".." are not), with its slot (NONE: no slot
	 * holds it) and whether it was found; and with dir 0 each time the
	 * walk starts over at the root (an absolute path or symlink target). */
	void (*step)(void *arg, uint32_t dir, uint32_t slot, const struct path_comp *comp,
		     bool found);
	void *step_arg;
	unsigned root_dotdots; /* ".." walked at the root (which stays there) */
};

struct wres {
	int err;
	uint32_t obj;  /* the final object (err == 0) */
	uint32_t slot; /* the slot that named it (NONE: "/", ".", "..", the start) */
};


/* ---- model.c: the trace's objects and slots, the model walk ---- */
/* realloc() of n elements of size; out of memory longjmp()s to build(). */
void *xrealloc(struct builder *b, void *p, size_t n, size_t size);

/* Make room for one more element in (arr, n, cap). */
#define GROW(b, arr, n, cap)                                               \
	do {                                                               \
		if ((n) >= (cap)) {                                        \
			size_t nc_ = (cap) ? (cap)*2 : 64;                 \
			(arr) = xrealloc((b), (arr), nc_, sizeof(*(arr))); \
			(cap) = nc_;                                       \
		}                                                          \
	} while (0)
/* The model outgrew its 32-bit offsets: longjmp() to build() with -EFBIG. */
void too_big(struct builder *b);
/* The model contradicts a call: count it (with -DREPLAY_DEBUG, say where). */
void conflict_at(struct builder *b, const char *file, int where);
#define CONFLICT(b) conflict_at((b), __FILE__, __LINE__)
/* Copy s (len bytes) into t->str, NUL-terminated; its offset. */
uint32_t str_add(struct builder *b, const char *s, size_t len);
/* Make sure the scratch buffer *buf holds n bytes. */
char *scratch(struct builder *b, char **buf, size_t *cap, size_t n);
/* A new object (no name yet); its id. */
uint32_t obj_new(struct builder *b, uint8_t type, uint8_t flags);
/* The slot (dir, name), or NONE. */
uint32_t slot_find(const struct replay_trace *t, uint32_t dir, const char *name, size_t len);
/* The slot (dir, name), made (unknown, or absent in a complete directory)
 * if new.  len is 1..UDC_NAME_MAX. */
uint32_t slot_get(struct builder *b, uint32_t dir, const char *name, size_t len);
/* Place object o in slot s as it was first named (parent of a directory). */
void obj_home(struct replay_trace *t, uint32_t o, uint32_t s);
/* Directory d was removed (or replaced by a rename): every name in it is
 * absent from now on. */
void dir_kill(struct replay_trace *t, uint32_t d);
/* The synthetic target of symlink o, into buf (>= 16 bytes); its length. */
size_t synth_target(uint32_t o, char *buf);
/* Walk path from start with udc_walk's rules; in the build (w->b) learning from w->q. */
struct wres walk_path(struct wstate *w, uint32_t start, const char *path, size_t len,
			     bool follow);
/* Learn from a walk of path whose outcome the log gives in q. */
struct wres know(struct builder *b, uint32_t start, const char *path, size_t len,
			const struct kreq *q);
/* Apply what the log says of the final object to the model. */
void know_final(struct builder *b, const struct wres *r, const struct kreq *q);

/* ---- calls.c: processes, and the facts and events of one call ---- */
/* The state of pid, or NULL if the build has not met it. */
struct pidst *pid_find(struct builder *b, int pid);
/* The state of pid, made if new. */
struct pidst *pid_get(struct builder *b, int pid);
/* Count a call as skipped for a reason. */
void skip(struct builder *b, uint64_t *why);
/* Handle one complete call. */
void handle_call(struct builder *b, const struct rec *r);
/* Decode string argument a into scratch buffer k (str_decode()'s answers). */
int arg_str(struct builder *b, int k, const char *a, size_t len, const char **out, size_t *olen);

/* ---- load.c: lines, the starting directory, replay_load() ---- */
/* The directory at path t->str + off, learnt as existing; 0 if the model disagrees. */
uint32_t cwd_resolve(struct builder *b, uint32_t off);

#endif /* UDC_STRESS_REPLAY_INTERNAL_H */
