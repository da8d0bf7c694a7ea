// What an interop test uses: for each selected Sidekiq release, a fresh Redis
// database, a Node Redis client, Ruby evaluation through Sidekiq's own API,
// and real `sidekiq` server processes, all cleaned up after the suite.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, inject, it } from "vitest";
import type { SidekiqBackend, SidekiqProcess, StartSidekiqOptions } from "../../harness/backend.js";
import { DockerBackend } from "../../harness/docker-backend.js";
import { addonAllows, LocalBackend, peersRubyLib } from "../../harness/local-backend.js";
import { targetForVersion, type SidekiqTarget } from "../../harness/versions.js";

let backendSingleton: SidekiqBackend | undefined;
export function backend(): SidekiqBackend {
  if (!backendSingleton) {
    const h = inject("harness");
    backendSingleton =
      h.backend === "docker"
        ? new DockerBackend(h.containers ?? {}, h.logDir, h.rubyRedisBase)
        : new LocalBackend(h.rootfs, h.fixturesDir, h.logDir, h.rubyRedisBase);
  }
  return backendSingleton;
}

export function selected(): SidekiqTarget[] {
  return inject("harness").versions.map((v) => targetForVersion(v));
}

/** A database index no other suite of this run uses. */
export async function allocateDb(): Promise<number> {
  const r = new Redis(inject("harness").redisUrl, { lazyConnect: true });
  try {
    const n = await r.incr("sidekiq-bridge:test:next-db");
    if (n > 255) throw new Error("more than 255 interop suites in one run: raise --databases in redis-server.ts");
    return n;
  } finally {
    r.disconnect();
  }
}

export class RubyError extends Error {
  override name = "RubyError";
}

export interface SidekiqContext {
  target: SidekiqTarget;
  db: number;
  /** Redis URL for Node. */
  url: string;
  /** A connected ioredis client on this suite's database. */
  redis: Redis;
  /** Evaluates Ruby with real Sidekiq loaded; returns the value (through JSON). */
  ruby<T = unknown>(code: string, env?: Record<string, string>): Promise<T>;
  /** Runs a script from ruby-fixtures/ and returns its stdout. */
  rubyScript(script: string, args?: string[], env?: Record<string, string>): Promise<string>;
  /** Starts a real `sidekiq` server on this database; stopped after the suite. */
  startSidekiq(opts: StartSidekiqOptions): Promise<SidekiqProcess>;
  newRedis(): Redis;
  /**
   * Env that loads real add-on gems from shared/peers/ruby (folder names such
   * as "sidekiq-unique-jobs-8.1.0"): pass it to `ruby`, `rubyScript` or
   * `startSidekiq({ env })`, then `require` the gem in Ruby.
   */
  peers(...folders: string[]): { RUBYLIB: string };
}

/**
 * The first pass of npm test (or a run by hand): repeat passes run side by
 * side on a loaded machine, so a test of timing-dependent behaviour may be
 * declared with `itFirstPass`, with the reason beside it.
 */
export const FIRST_PASS = process.env.SIDEKIQ_BRIDGE_PASS === undefined;

/**
 * `it` in the first pass; in a repeat pass the test is not declared at all
 * (not skipped: CI's summary counts a skipped test as a failure, so that a
 * forgotten `it.skip` cannot pass).
 */
export const itFirstPass = (FIRST_PASS ? it : () => undefined) as unknown as typeof it;

/**
 * The releases a repeat pass runs one `describeEachSidekiq` block on. The first
 * pass runs every block on every release. The other passes change the
 * server, the runtime (Node 24, Bun, Deno) or where Ruby runs (Docker), not the release, so
 * each block runs there on one of its releases, rotated by its title and the
 * pass: across the files every release still runs in every pass, and a block
 * with several releases runs on two different ones over the two repeat passes.
 * SIDEKIQ_BRIDGE_FULL_MATRIX=1 runs a repeat pass on every release.
 */
export function releasesForPass(
  title: string,
  targets: readonly SidekiqTarget[],
  env: Record<string, string | undefined> = process.env,
): SidekiqTarget[] {
  const offsets: Record<string, number | undefined> = { repeat: 0, docker: 1, bun: 2, deno: 0 };
  const offset = offsets[env.SIDEKIQ_BRIDGE_PASS ?? ""];
  if (offset === undefined || env.SIDEKIQ_BRIDGE_FULL_MATRIX === "1" || targets.length < 2) return [...targets];
  let h = 0;
  for (const ch of title) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return [targets[(h + offset) % targets.length]!];
}

/**
 * Declares one `describe` block per selected Sidekiq release, named after it
 * so the test output says which release each result belongs to (in a repeat
 * pass, one release: see releasesForPass).
 */
export function describeEachSidekiq(
  title: string,
  body: (ctx: SidekiqContext) => void,
  only?: (t: SidekiqTarget) => boolean,
): void {
  declareEachSidekiq(describe, title, body, only);
}

/**
 * describeEachSidekiq with the releases' blocks running at the same time in
 * one vitest worker: for real-time soaks that mostly wait on pollers, so three
 * three-minute runs hold one of the pass's workers for three minutes, not three
 * workers (or one for nine). Each block keeps its own Redis database.
 */
export function describeEachSidekiqConcurrently(
  title: string,
  body: (ctx: SidekiqContext) => void,
  only?: (t: SidekiqTarget) => boolean,
): void {
  declareEachSidekiq(describe.concurrent, title, body, only);
}

function declareEachSidekiq(
  declare: (name: string, fn: () => void) => void,
  title: string,
  body: (ctx: SidekiqContext) => void,
  only?: (t: SidekiqTarget) => boolean,
): void {
  const targets = releasesForPass(
    title,
    selected().filter((t) => (only ? only(t) : true)),
  );
  declareForTargets(declare, title, targets, body);
}

/**
 * One `describe` block per target of the release sweep
 * (`sweepTargets(selected())`), in every pass it runs in: the sweep's subject is the release.
 */
export function describeEachRelease(
  title: string,
  targets: readonly SidekiqTarget[],
  body: (ctx: SidekiqContext) => void,
): void {
  declareForTargets(describe, title, targets, body);
}

function declareForTargets(
  declare: (name: string, fn: () => void) => void,
  title: string,
  targets: readonly SidekiqTarget[],
  body: (ctx: SidekiqContext) => void,
): void {
  if (targets.length === 0) {
    // A file whose releases were all deselected still says so (a skip, which CI counts).
    describe(`${title} (no selected Sidekiq release applies)`, () => {
      it.skip("not run: SIDEKIQ_VERSIONS selects none of its releases", () => {});
    });
    return;
  }
  for (const target of targets) {
    declare(`${title} · Sidekiq ${target.version}`, () => {
      const clients: Redis[] = [];
      const servers: SidekiqProcess[] = [];
      const ctx = { target } as SidekiqContext;
      const env = () => ({ REDIS_URL: backend().rubyRedisUrl(ctx.db) });
      ctx.newRedis = () => {
        const c = new Redis(ctx.url, { maxRetriesPerRequest: 3 });
        clients.push(c);
        return c;
      };
      ctx.peers = (...folders) => {
        // An upstream release loads only the add-ons whose gemspecs allow it (Debian's
        // releases keep the suite's own choices, e.g. sidekiq-cron beside 6.4.1).
        const refused = target.release ? folders.filter((f) => !addonAllows(f, target.version)) : [];
        if (refused.length > 0)
          throw new Error(`${refused.join(", ")}: the gemspec does not allow Sidekiq ${target.version}`);
        return { RUBYLIB: peersRubyLib(inject("harness").fixturesDir, folders) };
      };
      ctx.rubyScript = (script, args, extra) => rubyOn(target, ctx.db).rubyScript(script, args, extra);
      ctx.ruby = (code, extra) => rubyOn(target, ctx.db).ruby(code, extra);
      ctx.startSidekiq = async (opts) => {
        const p = await backend().startSidekiq(target, { ...opts, env: { ...env(), ...(opts.env ?? {}) } });
        servers.push(p);
        return p;
      };
      beforeAll(async () => {
        ctx.db = await allocateDb();
        ctx.url = `${inject("harness").redisUrl}/${ctx.db}`;
        ctx.redis = ctx.newRedis();
      });
      afterAll(async () => {
        await Promise.all(servers.map((s) => s.stop()));
        for (const c of clients) c.disconnect();
      });
      body(ctx);
    });
  }
}

/**
 * Ruby of `target` on database `db`: scripts of ruby-fixtures/, and code
 * evaluated with that release's Sidekiq loaded (its value comes back through
 * JSON); each run is killed after `timeoutMs` (runCaptured's 120 s by default).
 */
export function rubyOn(
  target: SidekiqTarget,
  db: number,
  timeoutMs?: number,
): Pick<SidekiqContext, "ruby" | "rubyScript"> {
  const rubyScript = async (script: string, args: string[] = [], extra: Record<string, string> = {}) => {
    const env = { REDIS_URL: backend().rubyRedisUrl(db), ...extra };
    const r = await backend().runRuby(target, script, args, { env, ...(timeoutMs ? { timeoutMs } : {}) });
    if (r.code !== 0)
      throw new RubyError(
        `ruby ${script} failed on Sidekiq ${target.version} (exit ${r.code}):\n${r.stderr}${r.stdout}`,
      );
    return r.stdout;
  };
  const ruby = async <T>(code: string, extra: Record<string, string> = {}) => {
    const out = await rubyScript("eval.rb", [code], extra);
    const line = out.split("\n").find((l) => l.startsWith("__BRIDGE_RESULT__ "));
    if (line === undefined) throw new RubyError(`no result from Ruby on Sidekiq ${target.version}:\n${out}`);
    return JSON.parse(line.slice("__BRIDGE_RESULT__ ".length)) as T;
  };
  return { ruby, rubyScript };
}

/**
 * Polls until `fn` returns a value other than undefined/false, or throws after
 * `ms`; the error ends with `detail()` when given (a child's output, say).
 */
export async function waitFor<T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  ms = 30_000,
  detail?: () => string,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined && v !== false) return v;
    if (Date.now() > deadline)
      throw new Error(`timed out after ${ms} ms waiting for ${what}${detail ? `\n${detail()}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs one heartbeat of a Node worker now (the process hash, work and stats),
 * so a test need not wait for the next one. Reaches into the launcher: not
 * something a user needs.
 */
export async function beatNow(w: object): Promise<void> {
  await (w as { launcher: { heartbeat: { beat(): Promise<void> } } }).launcher.heartbeat.beat();
}
