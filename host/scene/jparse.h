/* SPDX-License-Identifier: MIT */
/* jparse.h: the host's JSON parser: strict RFC 8259, one pass, and its output an ordinary
 * cJSON tree, so every reader of cJSON (the host, the plugins) works on it unchanged.
 *
 * The tree is the one cJSON_ParseWithLength (cJSON 1.7.15) builds from the same valid
 * text: the same types, keys, strings, numbers (valuedouble, and valueint saturated to
 * INT_MIN..INT_MAX) and child/next/prev links (the first child's prev is the last child).
 * Where cJSON is lenient this parser is not: leading zeros, '+', ".5", "1.", NaN,
 * trailing commas, comments, raw control characters in strings, lone UTF-16 surrogates
 * and any text after the value are refused, with the offset of the offending byte.
 *
 * Two ways to hold the tree:
 * - malloc mode (no arena): each node calloc'd and each string malloc'd as cJSON does,
 *   so cJSON_Delete frees the tree;
 * - arena mode: nodes and strings are carved out of a few large blocks owned by a
 *   host_json_arena, and host_json_arena_free frees them all at once. Never cJSON_Delete
 *   such a tree, nor any node of it, nor add malloc'd nodes to it.
 * json.h wraps both with file:line:col messages (host_json_parse, host_json_parse_arena).
 */
#ifndef HOST_JPARSE_H
#define HOST_JPARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "ecs_plugin.h"

/* The memory of trees parsed in arena mode: a few large blocks, freed all at once. */
typedef struct host_json_arena host_json_arena;

/* Free an arena and every tree parsed into it (NULL does nothing). */
void host_json_arena_free(host_json_arena *a);

struct cJSON;

/* Deepest nesting of arrays and objects accepted (cJSON's CJSON_NESTING_LIMIT). */
#define HOST_JPARSE_MAX_DEPTH 1000

/* Why a parse failed; host_jparse_message() has the text of each. */
typedef enum host_jparse_status {
    HOST_JPARSE_OK,
    HOST_JPARSE_EMPTY,                  /* nothing but white space (and a BOM) */
    HOST_JPARSE_TRAILING_TEXT,          /* more than white space after the value */
    HOST_JPARSE_END_OF_TEXT,            /* the text ends inside a value */
    HOST_JPARSE_EXPECTED_VALUE,         /* a byte that starts no JSON value */
    HOST_JPARSE_EXPECTED_KEY,           /* an object member not starting with '"' */
    HOST_JPARSE_EXPECTED_COLON,         /* no ':' after an object key */
    HOST_JPARSE_EXPECTED_OBJECT_COMMA,  /* neither ',' nor '}' after a member */
    HOST_JPARSE_EXPECTED_ARRAY_COMMA,   /* neither ',' nor ']' after an element */
    HOST_JPARSE_TRAILING_COMMA,         /* a ',' right before '}' or ']' (at the comma) */
    HOST_JPARSE_TOO_DEEP,               /* the '[' or '{' opening level 1001 */
    HOST_JPARSE_UNTERMINATED_STRING,    /* the text ends in a string (at its opening '"') */
    HOST_JPARSE_CONTROL_CHARACTER,      /* a byte below 0x20 in a string */
    HOST_JPARSE_INVALID_ESCAPE,         /* '\' followed by none of "\/bfnrtu (at the '\') */
    HOST_JPARSE_INVALID_UNICODE_ESCAPE, /* \u without 4 hex digits (at the '\') */
    HOST_JPARSE_UNPAIRED_SURROGATE,     /* a UTF-16 surrogate \u escape without its pair */
    HOST_JPARSE_NUL_ESCAPE,             /* \u0000 in a string (unique_keys: the host's files) */
    HOST_JPARSE_NUMBER_LEADING_ZERO,    /* 01, -00 (at the leading '0') */
    HOST_JPARSE_NUMBER_PLUS_SIGN,       /* +1 */
    HOST_JPARSE_NUMBER_LEADING_POINT,   /* .5 */
    HOST_JPARSE_NUMBER_EXPECTED_DIGIT,  /* -x, 1., 1.e5, 1e, 1e+ (where a digit is missing) */
    HOST_JPARSE_DUPLICATE_KEY,          /* a key twice in one object (unique_keys; at the second) */
    HOST_JPARSE_OUT_OF_MEMORY,
    HOST_JPARSE_STATUS_COUNT
} host_jparse_status;

/* A failed parse: what, and where (a byte offset into the text; its length for the end). */
typedef struct host_jparse_error {
    host_jparse_status status;
    size_t offset;
    size_t first; /* HOST_JPARSE_DUPLICATE_KEY: the offset of the key's first occurrence */
} host_jparse_error;

/* Parse text[0..len) (no NUL needed; a NUL byte is an error where it stands). With arena
 * NULL, the tree is malloc'd as cJSON's (free it with cJSON_Delete); otherwise every node
 * and string comes from arena (several parses may share one). Returns the root, or NULL
 * with *error set (error may be NULL): then nothing is left allocated but what a failed
 * parse took from the arena, freed with it. A UTF-8 BOM at the start is skipped. */
struct cJSON *host_jparse(const char *text, size_t len, host_json_arena *arena,
                          host_jparse_error *error);

/* host_jparse, and with unique_keys what cJSON would lose in silence is refused: a key
 * that stands twice in one object (HOST_JPARSE_DUPLICATE_KEY at the second, error->first
 * at the first) and \u0000 in a string, which would cut it short (HOST_JPARSE_NUL_ESCAPE).
 * The host reads its files this way (json.h). */
struct cJSON *host_jparse_keys(const char *text, size_t len, host_json_arena *arena,
                               bool unique_keys, host_jparse_error *error);

/* A key of an object: its text s[0..n) (as the caller compares keys: decoded, or escaped
 * the one way a writer escapes) and its place i among the object's keys. `owned` is the
 * caller's (the parser marks the decoded copies it frees). */
typedef struct host_json_key {
    const char *s;
    size_t n, i;
    bool owned;
} host_json_key;

/* The earliest second occurrence of a key among keys[0..n): its place (its i), and in
 * *first the place of that key's first occurrence; n when every key stands once. Up to
 * 16 keys pairwise, more sorted (keys is reordered): never quadratic in a hostile object.
 * The parser's unique_keys and the writer (jwrite.h) refuse by it. */
size_t host_json_first_duplicate(host_json_key *keys, size_t n, size_t *first);

/* A new, empty arena sized for parsing about text_len bytes of JSON: its first block
 * (allocated at the first use) holds the tree of a typical file of that size. NULL when
 * out of memory. Free it with host_json_arena_free (json.h). */
host_json_arena *host_json_arena_new(size_t text_len);

/* Forget every tree of the arena, keeping its newest (largest) block for the next ones. */
void host_json_arena_reset(host_json_arena *arena);

/* How much arena holds: its number of blocks, and in *used (may be NULL) the bytes given
 * out to nodes and strings. */
size_t host_json_arena_blocks(const host_json_arena *arena, size_t *used);

/* The text of a status ("unterminated string"); "unknown error" out of range. */
const char *host_jparse_message(host_jparse_status status);

/* The message of error for a person, in out (outlen bytes, cut if longer): the status's
 * text, and what was found at the offset when that helps ("expected a JSON value, found
 * 'NaN'", "invalid escape '\q' in a string"). Only printable characters are quoted. */
void host_jparse_describe(const char *text, size_t len, const host_jparse_error *error, char *out,
                          size_t outlen);

/* ---- the pull reader: ecs_json_reader over a document's text ----------------------
 * One value read at a time by its caller (a manager's read_component, the scene loader
 * itself), with the grammar of the parser above. The first error stops it: a syntax
 * error (the parser's message) or a message about a value, with its offset. */
typedef struct host_jreader host_jreader;

/* How much a reader checks:
 * - STRICT: everything it reads or passes over, duplicate keys and \u0000 included;
 * - SKIM: what it reads, as STRICT; what it passes over (skip(), a member's value that
 *   key() passes) only by its brackets and strings: whoever reads that value later with a
 *   STRICT reader (or host_jparse) checks it. The scene loader's first pass.
 * - TRUSTED: the text was checked before (the host's own, or passed by a STRICT reader):
 *   no duplicate key checks, skip() as SKIM. */
typedef enum host_jr_mode { HOST_JR_STRICT, HOST_JR_TRUSTED, HOST_JR_SKIM } host_jr_mode;

/* Resolve a scene id for ecs_json_reader.entity: true with *out, or false with a reason
 * in why (why_len bytes). */
typedef bool (*host_jr_resolve_fn)(void *ctx, const char *id, ecs_entity *out, char *why,
                                   size_t why_len);

host_jreader *host_jr_new(void); /* NULL when out of memory */
void host_jr_free(host_jreader *r);
/* Read one value of text[0..len) starting at offset `at` (a BOM skipped at 0). */
void host_jr_start(host_jreader *r, const char *text, size_t len, size_t at, host_jr_mode mode);
void host_jr_on_entity(host_jreader *r, host_jr_resolve_fn resolve, void *ctx);
/* For the value being read (until the next host_jr_start): a key whose value the manager
 * leaves unread (it asks for the next key, or closes the object) fails the reader there
 * with "unknown key "K": the manager reads no such key" (an edit names only what it means;
 * a scene file's unknown keys are the manager's to warn about). skip() is a read. */
void host_jr_refuse_unread_keys(host_jreader *r);
ecs_json_reader *host_jr_api(host_jreader *r);
/* Has the value been read whole, without an error? */
bool host_jr_complete(const host_jreader *r);
/* Pass over what is left of the value being read (every open array and object). */
bool host_jr_skip_rest(host_jreader *r);
/* The elements of the array being read, from the one due here up to offset `end` (its
 * ']', or a ',' before the next), were read by another reader: go on at `end` as after an
 * element. False (nothing changed) when no element of an array is due here. */
bool host_jr_pass_elements(host_jreader *r, size_t end);
/* The end of the value at s passed over as a SKIM reader's skip() passes it (brackets
 * matched and strings terminated, nothing else checked), or NULL where that skip() fails. */
const char *host_jr_skim(const char *s, const char *end);
/* After the document's value: only white space may follow (else the reader fails). */
bool host_jr_finish_document(host_jreader *r);
/* The first error: its offset in the text, its syntax error (HOST_JPARSE_OK for an error
 * about a value), its message. False when there is none. */
bool host_jr_error(const host_jreader *r, size_t *offset, host_jparse_status *syntax,
                   const char **message);
size_t host_jr_offset(const host_jreader *r); /* the next byte */
size_t host_jr_last(const host_jreader *r);   /* where the value or key read last starts */
/* ---- reading ahead: a value lexed by one reader, read by another -----------------------
 * A STRICT reader given a tape (host_jr_record) keeps every number, key and string that its
 * skip() lexes as a token, in text order: the value checked whole and its costly parts
 * (number conversion, string decoding) done, by one thread while another reads values
 * before it. The other reader, given the tokens (host_jr_use), takes the token standing
 * where it would lex instead of lexing: the same numbers and strings, and the same errors,
 * since a token stands only where the text was sound. */
typedef struct host_jr_token {
    const char *at;  /* its first byte in the text */
    const char *end; /* the byte after it */
    const char *str; /* a key or string: its text, decoded and NUL-terminated; else NULL */
    union {
        double number;
        size_t len; /* a string's bytes (escaped when not end - at - 2); an array's
                       numbers (at its '['): their tokens follow */
    } v;
} host_jr_token;

/* Where a recording reader puts its tokens and their strings: cap tokens, size bytes. */
typedef struct host_jr_tape {
    host_jr_token *tok;
    size_t n, cap;
    char *bytes;
    size_t used, size;
    bool full; /* something did not fit: the tape is not whole (and ends there) */
} host_jr_tape;

/* After host_jr_start (STRICT): record into tape (NULL: stop recording). */
void host_jr_record(host_jreader *r, host_jr_tape *tape);
/* After host_jr_start: tok[0..n) (a tape of this value) stand in for lexing. */
void host_jr_use(host_jreader *r, const host_jr_token *tok, size_t n);

/* "a number", "an object", ... ("nothing" for ECS_JSON_END). */
const char *host_jr_type_name(ecs_json_type t);

/* Line and column (from 1) of position `at` inside text. */
void host_jparse_position(const char *text, const char *at, int *line, int *col);

#endif
