// The open-file figures of the HTTP connection cap (src/http/connectionLimit.ts),
// one place for the code, HTTP_MAX_CONNECTIONS' text in src/config.ts and
// docs/security.md (test/project/docs.test.ts checks the page).

/** Files kept apart from the connections' cap beyond the pools: the LISTEN and probe connections, logs, node's own, health probes, and refused connections being closed. */
export const FILE_RESERVE = 128;
/** Where the open-file limit cannot be read (not Linux) and HTTP_MAX_CONNECTIONS is 0. */
export const FALLBACK_FILE_LIMIT = 1024;
