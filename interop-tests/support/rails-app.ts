// The Rails app of ruby-fixtures/rails-app as a test reaches it: Ruby snippets
// evaluated in the booted app, its Sidekiq worker, and what its jobs and
// mailers report through Redis. SQLite and delivered mail stay in the Ruby
// side's /tmp, one pair of paths per suite.
import { afterAll } from "vitest";
import { backend, RubyError, waitFor, type SidekiqContext } from "./harness.js";

/** GlobalID.app of the fixture (module Shop). */
export const RAILS_APP = "shop";

export interface RailsApp {
  /** The app's environment for this suite (Redis, SQLite file, mail folder), for Ruby run some other way. */
  env(): Record<string, string>;
  /** Evaluates Ruby inside the booted app (one boot per call) and returns its value through JSON; `extraEnv` adds to env(). */
  eval<T = unknown>(code: string, extraEnv?: Record<string, string>): Promise<T>;
  /** Starts Sidekiq on the app (`sidekiq -r rails-app`, eager-loaded). */
  start(queues: string[]): Promise<void>;
  /** Waits for a report of a job (ApplicationJob#report, AuditWorker) that `match` accepts. */
  performed(match: (r: Record<string, unknown>) => boolean): Promise<Record<string, unknown>>;
  /** Waits for the mail delivered to `to` (ApplicationMailer's after_deliver). */
  delivered(to: string): Promise<string>;
}

export function railsApp(sk: SidekiqContext): RailsApp {
  const base = () => `/tmp/shop-${process.pid}-${sk.db}`;
  const env = () => ({ BRIDGE_RAILS_DB: `${base()}.sqlite3`, BRIDGE_RAILS_MAIL: `${base()}-mail` });
  afterAll(async () => {
    if (sk.db !== undefined) await sk.ruby(`require "fileutils"; FileUtils.rm_rf(Dir["${base()}*"]); true`);
  });
  const list = async (key: string) =>
    (await sk.redis.lrange(key, 0, -1)).map((s) => JSON.parse(s) as Record<string, unknown>);
  return {
    env: () => ({ REDIS_URL: backend().rubyRedisUrl(sk.db), ...env() }),
    async eval<T>(code: string, extraEnv: Record<string, string> = {}) {
      const out = await sk.rubyScript("rails-app/bin/eval.rb", [code], { ...env(), ...extraEnv });
      const line = out.split("\n").find((l) => l.startsWith("__BRIDGE_RESULT__ "));
      if (line === undefined) throw new RubyError(`no result from the Rails app:\n${out}`);
      return JSON.parse(line.slice("__BRIDGE_RESULT__ ".length)) as T;
    },
    async start(queues) {
      await sk.startSidekiq({ require: "rails-app", queues, concurrency: 3, env: env() });
    },
    // 60 s: the first job waits for the app to boot, a scheduled one for the poller's first run too.
    performed: (match) =>
      waitFor("a Rails job's report", async () => (await list("shop:performed")).find(match), 60_000),
    delivered: (to) =>
      waitFor(
        `the mail to ${to}`,
        async () => {
          const mail = (await list("shop:delivered")).find((m) => (m.to as string[]).includes(to));
          return mail?.encoded as string | undefined;
        },
        60_000,
      ),
  };
}

/** The app booted with a zone, a locale and a GlobalID app of its own (config.time_zone, i18n.default_locale, global_id.app). */
export const ZONED = {
  BRIDGE_RAILS_TIME_ZONE: "Berlin",
  BRIDGE_RAILS_LOCALE: "de",
  BRIDGE_RAILS_GLOBALID_APP: "shop-records",
};

/** A mail without the headers each rendering makes anew (Date, Message-ID). */
export const stableMail = (encoded: string) => encoded.replace(/^(Date|Message-ID): .*\r\n/gm, "");

/** A raw payload without its per-run fields (job_id, jid, enqueued_at, created_at), as bytes to compare. */
export const stablePayload = (raw: string) =>
  raw.replace(/"(job_id|jid|enqueued_at|created_at)":("[^"]*"|[0-9.]+)/g, '"$1":"*"');
