// What a WebSocket's messages cost its payer (src/http/websocket.ts spends
// them; src/config.ts's GRAPHQL_RATE_LIMIT text is written from them, and
// test/project/docs.test.ts holds docs/security.md's figures to them).

/**
 * Messages per request of the budget: a ping costs the server a JSON parse
 * and a send, about a tenth of the least request's CPU (82,000 a second
 * took one core: ~12 µs each). A kiosk's client pings every few seconds;
 * one source's anonymous budget (GRAPHQL_RATE_BURST, 200) pays for 2,000 of
 * them per window.
 */
export const MESSAGES_PER_REQUEST = 10;
/** Requests' worth of messages a socket may send once its payer's budget has run out (in a row, until it refills), before it is closed. */
export const WS_OVERDRAFT = 10;
