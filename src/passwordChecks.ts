import { boundedCache, textBytes } from "../common/boundedCache.ts";

/**
 * The password-check gate of one API process: at most `concurrency`
 * password checks (bcrypt in Postgres: sign-in, registration, password
 * change, new staff account) run at once, at most `queue` more wait for
 * their turn. A waiting check holds no pool connection (the plugin asks for
 * its turn before it takes one, and only once the caller's own limits in
 * SQL let it through), so a flood of sign-ins takes at most `concurrency`
 * connections and CPU cores while other requests go on.
 *
 * The places are shared fairly between the callers who pay for them: the
 * source, and once signed in the account (never the account a sign-in
 * names: strangers guessing its password would take its owner's places):
 * - one source holds at most `perCaller` places, running or waiting
 *   (times `trustedFactor` inside TRUSTED_NETWORKS: many customers behind
 *   one address), and so does one account; past that it is refused;
 * - while its own limits are asked it holds only its own share, never one
 *   of the shared places: a caller over its limits holds nothing another
 *   caller needs;
 * - at most `asking` limit checks (each a pool connection for a moment) run
 *   at once, however many sources sign in; the others wait for theirs (at
 *   most `queue` of them, holding no connection), the lightest caller first,
 *   and a newcomer lighter than the heaviest of them takes its turn (that
 *   one is refused): so a flood from many addresses never takes the pool;
 * - the next to run is the waiter whose caller uses the gate least: its
 *   checks lately (a count that halves every `halfLifeMs`) plus the places
 *   it holds now (a source's divided by its factor), first come first
 *   served among equals;
 * - when every place is taken, a newcomer that uses the gate less than
 *   the heaviest waiter takes that waiter's place (the waiter is
 *   refused); otherwise the newcomer is refused.
 * So a flood from many addresses, each under its own limits, slows
 * sign-ins, but a customer signing in from another address goes to the
 * front of the queue instead of being refused. Refused: RATE_LIMITED.
 */
export interface PasswordCheckGate {
  /**
   * Resolves with a release function when it is this check's turn; null when
   * it is refused (its caller holds its share of places, or the queue is full
   * of lighter callers). `limits`: the caller's own limits, asked once its
   * share allows a place and before it takes one; what it throws is thrown.
   */
  acquire(caller: PasswordCheckCaller, limits?: () => Promise<unknown>): Promise<(() => void) | null>;
  /** Checks running, and waiting; limit checks running and waiting for their turn; callers remembered (bounded by `maxCallers`). */
  readonly load: { running: number; waiting: number; asking: number; waitingToAsk: number; callers: number };
}

/** Who pays for a password check: the request's source (src/http/clientAddress.ts) and, when signed in, the caller's own account (never the one a sign-in names). */
export interface PasswordCheckCaller {
  source: string;
  account?: string | null;
  /** Inside TRUSTED_NETWORKS: the source's share is multiplied by TRUSTED_NETWORK_FACTOR. */
  trusted?: boolean;
}

export interface PasswordCheckGateOptions {
  concurrency: number;
  queue: number;
  /** Limit checks at once (default `concurrency`); at most `queue` more wait for their turn. */
  asking?: number;
  /** Places one source (or one account) may hold, running or waiting. */
  perCaller: number;
  /** TRUSTED_NETWORK_FACTOR. */
  trustedFactor?: number;
  /** How fast a caller's use is forgotten. */
  halfLifeMs?: number;
  /** Callers whose use is remembered; the least recently seen are forgotten first. */
  maxCallers?: number;
  now?: () => number;
}

interface Use {
  /** Checks admitted, decayed to `at`. */
  count: number;
  at: number;
  /** Places held now (running or waiting). */
  places: number;
}

interface Waiting<T> {
  keys: string[];
  weights: number[];
  seq: number;
  resolve: (turn: T) => void;
}
/** Waits for a place: its release, or null when refused. */
type Waiter = Waiting<(() => void) | null>;

export function makePasswordCheckGate({
  concurrency,
  queue,
  asking: askCap = concurrency,
  perCaller,
  trustedFactor = 1,
  halfLifeMs = 60_000,
  maxCallers = 10_000,
  now = Date.now,
}: PasswordCheckGateOptions): PasswordCheckGate {
  let running = 0;
  let asking = 0;
  let seq = 0;
  const waiting: Waiter[] = [];
  /** Waiting for a limit check's turn: true, or false when refused. */
  const waitingToAsk: Array<Waiting<boolean>> = [];
  // Bounded (/metrics "password_check_callers"): the least recently seen
  // caller is forgotten first (as if it had not used the gate lately).
  const uses = boundedCache<string, Use>("password_check_callers", { maxEntries: maxCallers, maxBytes: maxCallers * 256, bytesOf: (_u, key) => textBytes(key) + 48 });
  const useOf = (key: string): Use => {
    let u = uses.get(key);
    if (!u) uses.set(key, (u = { count: 0, at: now(), places: 0 }));
    const t = now();
    u.count *= Math.pow(0.5, (t - u.at) / halfLifeMs);
    u.at = t;
    return u;
  };
  /**
   * How heavily the caller uses the gate: its checks lately plus the places
   * it holds now, the heavier of its source (divided by its factor) and its
   * account. `extra`: as if it had that many more (a newcomer).
   */
  const weightOf = (w: Pick<Waiter, "keys" | "weights">, extra = 0) =>
    Math.max(
      ...w.keys.map((k, i) => {
        const u = useOf(k);
        return (u.count + u.places + extra) / w.weights[i]!;
      }),
    );

  const giveBack = (keys: string[]) => {
    for (const k of keys) {
      const u = uses.get(k);
      if (u) u.places = Math.max(0, u.places - 1);
    }
  };
  const releaseOf = (keys: string[]) => {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      giveBack(keys);
      const next = lightest(waiting);
      if (next) {
        waiting.splice(waiting.indexOf(next), 1);
        next.resolve(releaseOf(next.keys)); // the slot passes straight on
      } else running -= 1;
    };
  };
  const lightest = <W extends Waiting<never>>(line: W[]): W | undefined => {
    let best: W | undefined;
    let bestWeight = Infinity;
    for (const w of line) {
      const weight = weightOf(w);
      if (weight < bestWeight || (weight === bestWeight && w.seq < best!.seq)) [best, bestWeight] = [w, weight];
    }
    return best;
  };
  const heaviest = <W extends Waiting<never>>(line: W[]): { waiter: W; weight: number } | undefined => {
    let worst: { waiter: W; weight: number } | undefined;
    for (const w of line) {
      const weight = weightOf(w);
      if (!worst || weight > worst.weight || (weight === worst.weight && w.seq > worst.waiter.seq)) worst = { waiter: w, weight };
    }
    return worst;
  };

  /**
   * A free slot or place, or a heavier waiter whose place it would take.
   * Its weight as if admitted (`reserved`: its place is counted already), so
   * between two callers who use the gate alike the one waiting keeps its place.
   */
  const mayEnter = (keys: string[], weights: number[], reserved: boolean) => {
    // Callers whose limits are being asked hold only their own share (a
    // burst from one source cannot pass it), not a shared place.
    if (running + waiting.length < concurrency + queue) return true;
    const worst = heaviest(waiting);
    return worst !== undefined && weightOf({ keys, weights }, reserved ? 1 : 2) < worst.weight;
  };

  /**
   * A limit check's turn (its place is counted already): at once under
   * `askCap`, else in the line; false when refused (the line is full of
   * callers who use the gate no more than it).
   */
  const askTurn = (keys: string[], weights: number[]): Promise<boolean> | boolean => {
    if (asking < askCap) {
      asking += 1;
      return true;
    }
    if (waitingToAsk.length >= queue) {
      const worst = heaviest(waitingToAsk);
      if (!worst || !(weightOf({ keys, weights }, 1) < worst.weight)) return false;
      waitingToAsk.splice(waitingToAsk.indexOf(worst.waiter), 1);
      worst.waiter.resolve(false);
    }
    return new Promise((resolve) => waitingToAsk.push({ keys, weights, seq: seq++, resolve }));
  };
  /** A limit check is done: its turn passes straight on to the lightest in the line. */
  const asked = () => {
    const next = lightest(waitingToAsk);
    if (next) {
      waitingToAsk.splice(waitingToAsk.indexOf(next), 1);
      next.resolve(true);
    } else asking -= 1;
  };

  return {
    async acquire(caller, limits) {
      const keys = [`source:${caller.source}`];
      const weights = [caller.trusted ? Math.max(1, trustedFactor) : 1];
      if (caller.account) {
        keys.push(`account:${caller.account.toLowerCase()}`);
        weights.push(1);
      }
      // One source (one account) holds at most its share of the places;
      // past it, refused before anything else is asked (it costs nothing).
      if (keys.some((k, i) => useOf(k).places >= perCaller * weights[i]!)) return null;
      // Nor are its limits asked when it would not get a place anyway.
      if (!mayEnter(keys, weights, false)) return null;
      // The caller's own limits are asked holding its own share (so a burst
      // of one source cannot all pass the share above); refused, it gives it back.
      for (const k of keys) useOf(k).places += 1;
      if (limits) {
        if (!(await askTurn(keys, weights))) {
          giveBack(keys);
          return null;
        }
        try {
          await limits();
        } catch (error) {
          giveBack(keys);
          throw error;
        } finally {
          asked();
        }
      }
      const admit = () => {
        for (const k of keys) useOf(k).count += 1;
      };
      if (running < concurrency) {
        admit();
        running += 1;
        return releaseOf(keys);
      }
      if (waiting.length >= queue) {
        const worst = heaviest(waiting);
        if (!worst || !mayEnter(keys, weights, true)) {
          giveBack(keys);
          return null;
        }
        waiting.splice(waiting.indexOf(worst.waiter), 1);
        giveBack(worst.waiter.keys);
        worst.waiter.resolve(null);
      }
      admit();
      return new Promise((resolve) => waiting.push({ keys, weights, seq: seq++, resolve }));
    },
    get load() {
      return { running, waiting: waiting.length, asking, waitingToAsk: waitingToAsk.length, callers: uses.size };
    },
  };
}

/** How many checks may run at once: PASSWORD_CHECK_CONCURRENCY, but never more than half the pool. */
export function passwordCheckConcurrency(configured: number, poolSize: number): number {
  return Math.max(1, Math.min(configured, Math.floor(poolSize / 2)));
}
