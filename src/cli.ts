import "./envDefaults.ts";
import { parseArgs } from "node:util";
import { createInterface } from "node:readline";
import pg from "pg";
import { applyEnvFile, ConfigError, loadConfig } from "./config.ts";
import { EMBEDDED_DATABASE, resolveDatabaseUrls, startEmbeddedPostgres, type EmbeddedServer } from "./db/database.ts";
import { logger } from "./logger.ts";

// `npm run cafe -- <command>`: the operator's command line, against the
// database in DATABASE_URL (as its owner: SQL's current_actor() is 'dba').
// The rules live in SQL (app_hidden.add_staff_account, disable_account,
// list_staff); this file reads arguments and prints answers. A password is
// read from standard input, never from the arguments (which `ps` shows).

const HELP = `Usage: npm run cafe -- <command> [options]

Commands:
  add-staff --email E --name N --role barista|admin [--store S]
      Adds a staff account. The password is read from standard input (one
      line; asked for without echo on a terminal). Same rules as register:
      10+ characters, letters and a digit or symbol, not the e-mail.
      --store (a store's name or id): where they work. A barista without it
      works at the default store; an admin with it manages that store only,
      without it is the chain's admin.
  disable-account --email E
      Disables an account (staff or customer): it can no longer sign in,
      refresh or act; its tokens are refused at once on every API process.
  list-staff
      Lists staff accounts: e-mail, name, role, disabled or not.
  help, --help
      This text.

Connects to DATABASE_URL (DATABASE_OWNER_URL if set), read as npm start
reads it: the real environment, then ENV_FILE or .env. Neither set: the
embedded PostgreSQL npm start uses (EMBEDDED_PG_DIR, EMBEDDED_PG_PORT),
started for the command if it is not running.
Exit status: 0 done, 1 refused or failed, 2 bad usage.`;

class UsageError extends Error {}

const OPTIONS = {
  email: { type: "string" },
  name: { type: "string" },
  role: { type: "string" },
  store: { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

/** The options a command needs, each given once and not empty. */
function need(values: Record<string, unknown>, names: string[]): string[] {
  return names.map((name) => {
    const value = values[name];
    if (typeof value !== "string" || value.trim() === "") throw new UsageError(`--${name} is required.`);
    return value;
  });
}

/** One line of standard input; on a terminal, asked for without echo. */
async function readPassword(prompt: string): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY) {
    const rl = createInterface({ input: stdin, terminal: false });
    try {
      for await (const line of rl) return line.replace(/\r$/, "");
    } finally {
      rl.close();
    }
    throw new UsageError("No password on standard input.");
  }
  process.stderr.write(prompt);
  stdin.setRawMode(true);
  stdin.resume();
  stdin.setEncoding("utf8");
  return new Promise((resolve, reject) => {
    let text = "";
    const done = (err?: Error) => {
      stdin.setRawMode(false);
      stdin.pause();
      stdin.removeListener("data", onData);
      process.stderr.write("\n");
      if (err) reject(err);
      else resolve(text);
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === "\r" || ch === "\n") return done();
        if (ch === "\u0003") return done(new UsageError("Cancelled."));
        if (ch === "\u007f" || ch === "\b") text = text.slice(0, -1);
        else text += ch;
      }
    };
    stdin.on("data", onData);
  });
}

async function askPassword(): Promise<string> {
  const password = await readPassword("Password for the new account: ");
  if (process.stdin.isTTY && (await readPassword("Again: ")) !== password) throw new UsageError("The two passwords differ.");
  return password;
}

/** The store --store names (its name, ignoring case, or its id). */
async function storeNamed(db: pg.Client, ref: string): Promise<{ id: string; name: string }> {
  const { rows } = await db.query<{ id: string; name: string }>("select id::text, name from app_public.stores where lower(name) = lower($1) or id::text = lower($1)", [ref.trim()]);
  if (!rows[0]) throw new UsageError("--store names no store (give a store's name or id; the stores: select name from app_public.stores).");
  return rows[0];
}

async function run(argv: string[]): Promise<void> {
  // Said before parsing, whose message would repeat the option (and its value).
  if (argv.some((a) => /^--?(password|pass|pw)\b/i.test(a))) throw new UsageError("The password is read from standard input, never from the command line.");
  // Arguments are never echoed (one could be a password typed in the wrong
  // place): a problem names the argument by its position.
  let parsed: ReturnType<typeof parseArgs<{ args: string[]; options: typeof OPTIONS; allowPositionals: true; strict: true; tokens: true }>>;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true, tokens: true });
  } catch (e) {
    const known = new Set(Object.entries(OPTIONS).flatMap(([name, o]) => [`--${name}`, ...("short" in o ? [`-${o.short}`] : [])]));
    const at = argv.findIndex((a) => a.startsWith("-") && !known.has(a.split("=")[0]!));
    throw new UsageError(at >= 0 ? `Unknown option (argument #${at + 1}).` : `An option is missing its value or is given one it does not take (${(e as { code?: string }).code ?? "bad arguments"}).`);
  }
  const { values, positionals, tokens } = parsed;
  const [command, ...extra] = positionals;
  /** 1-based position in argv of the n-th positional argument. */
  const positionOf = (n: number) => tokens.filter((t) => t.kind === "positional")[n]!.index + 1;
  if (values.help || command === undefined || command === "help") {
    console.log(HELP);
    if (command === undefined && !values.help) process.exitCode = 2;
    return;
  }
  if (extra.length) throw new UsageError(`Unexpected argument #${positionOf(1)} (a command takes no other arguments; options are --email, --name, --role, --store).`);
  const commands: Record<string, (db: pg.Client) => Promise<void>> = {
    "add-staff": async (db) => {
      const [email, name, role] = need(values, ["email", "name", "role"]);
      const store = values.store === undefined ? null : await storeNamed(db, values.store);
      const password = await askPassword();
      const { rows } = await db.query("select app_hidden.add_staff_account($1, $2, $3, $4, p_store_id => $5) as id", [email, name, role, password, store?.id ?? null]);
      console.log(`Added ${role} ${email.toLowerCase()} (id ${rows[0].id})${store ? ` at ${store.name}` : ""}.`);
    },
    "disable-account": async (db) => {
      const [email] = need(values, ["email"]);
      const { rows } = await db.query("select app_hidden.disable_account($1) as changed", [email]);
      console.log(rows[0].changed ? `Disabled ${email.toLowerCase()}; its sign-ins have ended.` : `${email.toLowerCase()} was already disabled.`);
    },
    "list-staff": async (db) => {
      const { rows } = await db.query<{ email: string; name: string | null; role: string; disabled_at: Date | null }>("select * from app_hidden.list_staff()");
      const table = [["EMAIL", "NAME", "ROLE", "STATUS"], ...rows.map((r) => [r.email, r.name ?? "", r.role, r.disabled_at ? `disabled ${r.disabled_at.toISOString()}` : "active"])];
      const widths = table[0]!.map((_, i) => Math.max(...table.map((row) => row[i]!.length)));
      for (const row of table)
        console.log(
          row
            .map((cell, i) => cell.padEnd(widths[i]!))
            .join("  ")
            .trimEnd(),
        );
    },
  };
  const action = commands[command];
  if (!action) throw new UsageError(`Unknown command (argument #${positionOf(0)}). See npm run cafe -- --help.`);

  // The same variables as `npm start`: the .env file (ENV_FILE), then the real environment.
  applyEnvFile();
  const config = loadConfig();
  let databaseUrl = config.DATABASE_OWNER_URL ?? config.DATABASE_URL;
  let embedded: EmbeddedServer | null = null;
  if (!databaseUrl) {
    // As npm start does (src/service.ts): the embedded server, reused when running; its own log lines only when asked for.
    if (!process.env.LOG_LEVEL) logger.level = "warn";
    embedded = await startEmbeddedPostgres(config);
    databaseUrl = embedded.url.replace(/\/postgres$/, `/${EMBEDDED_DATABASE}`);
  }
  try {
    const { owner } = await resolveDatabaseUrls(config, databaseUrl);
    const db = new pg.Client({ connectionString: owner });
    try {
      await db.connect();
    } catch (e) {
      if (embedded && (e as { code?: string }).code === "3D000")
        throw new Error(`the embedded PostgreSQL (${config.EMBEDDED_PG_DIR}) has no café database yet: run \`npm start\` (or \`npm run db:migrate\`) once first.`, { cause: e });
      throw e;
    }
    try {
      await action(db);
    } finally {
      await db.end();
    }
  } finally {
    await embedded?.stop();
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  const e = err as Error & { code?: string };
  if (err instanceof UsageError || (e as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
    console.error(`${e.message}\n\n${HELP}`);
    process.exitCode = 2;
  } else if (err instanceof ConfigError) {
    console.error(e.message);
    process.exitCode = 2;
  } else {
    // SQL refusals carry their own message (e.g. "That e-mail address is already registered.").
    console.error(`Error: ${e.message}`);
    process.exitCode = 1;
  }
});
