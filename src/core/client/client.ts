// Sidekiq::Client for Node: normalizes jobs as the fleet's Sidekiq would, runs client middleware, checks
// arguments, and pushes with Sidekiq's commands (atomic-push.ts) in the dialect the fleet reads.
import { DIALECTS, profileFor, type DialectLike, type WireProfile } from "../wire/dialect.js";
import { releaseRules } from "../wire/release-rules.js";
import { toRubyJson, type RubyJsonValue } from "../wire/ruby-json.js";
import { encodePayloadTime } from "../wire/timestamps.js";
import { parseJson } from "../wire/json-scan.js";
import { newJid } from "../wire/jid.js";
import type { JobRecord } from "../wire/job-record.js";
import type { RedisSource } from "../redis/connection.js";
import { boundedWrite } from "./bounded-write.js";
import { openShard, recordingShard, type Shard } from "./shard.js";
import { closeConnection, ConnectionWatch, explained, whenReady } from "../redis/availability.js";
import {
  atomicPush,
  atomicPushTemplate,
  enqueuedAtNow,
  installedPushRecorder,
  pushOne,
  pushPrepared,
  recordPush,
  type PushRecorder,
} from "./atomic-push.js";
import type { BulkItem, Client as DefinitionClient, PreparedPush } from "./client-types.js";
import { DialectDetectionError, NO_FLEET_TO_DETECT, SidekiqArgumentError } from "./errors.js";
import { bulkPushFailure, checkBulk } from "./push-bulk-checks.js";
import { liveProcesses, profileForFleet } from "./fleet.js";
import { MiddlewareChain } from "../middleware/chain.js";
import type { ClientMiddleware } from "./middleware.js";
import {
  bulkTemplate,
  DEFAULT_JOB_OPTIONS,
  normalizeItem,
  type BulkTemplate,
  type JobHash,
  type JobOptions,
  type PushItem,
} from "./normalize.js";
import { verifyArgs, type StrictArgsMode } from "./strict-args.js";
import { JobDefinition } from "./job.js";
import { ActiveJobDefinition, aj, type ActiveJobOptions, type AjValue } from "./activejob.js";
import { MailerDefinition, type MailerActions, type MailerOptions } from "./mailer.js";
import { ContractChecker, type ContractOptions } from "../contract/checker.js";
import { globalIdApp } from "../contract/records.js";
import type {
  ContractActiveJobArgs,
  ContractAppName,
  ContractActiveJobName,
  ContractJobArgs,
  ContractJobName,
  ContractMailerActions,
  ContractMailerName,
  UndeclaredClassName,
} from "../contract/types.js";

/** Options of `Client`: the Redis, the wire dialect (`6`, `7`, `8`, an exact version, or `"auto"` with `autoFallback`), argument checks, validation and routing of queues to Redis shards. */
export interface ClientOptions {
  /** The Redis to push to (ioredis instance, URL, or connection options). */
  redis: RedisSource;
  /** The wire dialect: 6, 7, 8, an exact version ("7.3.2"), or "auto" (the default): what the oldest live Ruby process reads. */
  dialect?: DialectLike | "auto";
  /** With "auto": what to write when no Ruby process is live. Without it, pushing then fails. */
  autoFallback?: DialectLike;
  /** How often "auto" looks at the fleet again, in ms (default 30 s). */
  autoRefreshMs?: number;
  /** Strict argument check; default as the dialect's Sidekiq: warn for 6, raise for 7 and 8. */
  strictArgs?: StrictArgsMode;
  /** Client middleware, in order (`client.middleware` adds, inserts and removes later). */
  middleware?: ClientMiddleware[];
  /** Sharding: the Redis for a queue (default: `redis` for every queue). */
  route?: (queue: string) => RedisSource;
  /** Validate every payload against schema/ before pushing (default: off; on with SIDEKIQ_BRIDGE_VALIDATE=1). */
  validate?: boolean;
  warn?: (message: string) => void;
  /** How long a push waits for an unreachable Redis before a RedisUnavailableError (default 5000 ms); a lost connection
   * is reported once through `warn` ("Redis connection lost (...); retrying", then "back"). */
  connectWaitMs?: number;
  /** The job contract (`sidekiq-bridge contract pull`): unknown classes, wrong arity or keywords are warned about or
   * refused before anything reaches Redis (see docs/CONTRACT.md). `client.unchecked` pushes without it. */
  contract?: ContractOptions;
}

/**
 * Schema validation of every push is off unless asked for, with `validate`
 * or SIDEKIQ_BRIDGE_VALIDATE=1: a test runner's variables never change what a
 * push does (this project's own tests set it, in vitest.config.ts).
 */
const validateByDefault = () => /^(1|true|yes|on)$/i.test(process.env.SIDEKIQ_BRIDGE_VALIDATE ?? "");

/** `client.unchecked`: pushes skip the contract, and job names are not limited to the generated types. */
export type UncheckedClient = Omit<Client, "job" | "activeJob" | "mailer"> & {
  job<A extends RubyJsonValue[] = RubyJsonValue[]>(className: string, classOptions?: JobOptions): JobDefinition<A>;
  activeJob<A extends unknown[] = unknown[]>(className: string, options?: ActiveJobOptions): ActiveJobDefinition<A>;
  mailer<M extends MailerActions = MailerActions>(mailerClass: string, options?: MailerOptions): MailerDefinition<M>;
};

/** Sidekiq's client in Node: pushes jobs in the wire format the fleet reads (`Sidekiq::Client`). `close()` releases the connections it opened. */
export class Client implements DefinitionClient {
  private readonly shards = new Map<RedisSource, Shard>();
  private readonly defaultShard: Shard;
  /** Sidekiq's client middleware chain: add, prepend, insertBefore, insertAfter, remove, exists, clear. */
  readonly middleware = new MiddlewareChain<ClientMiddleware>("client");
  private readonly validate: boolean;
  private readonly warn: (m: string) => void;
  private readonly fixedProfile?: WireProfile;
  private readonly watch: ConnectionWatch;
  private readonly contract?: ContractChecker;
  /** Set when the testing entry was loaded before this client was made: its pushes go there, never to Redis. */
  private readonly recorder: PushRecorder | undefined = installedPushRecorder();

  constructor(private readonly options: ClientOptions) {
    this.warn = options.warn ?? ((m) => console.warn(`[sidekiq-bridge] ${m}`));
    this.watch = new ConnectionWatch({ lost: this.warn, back: this.warn });
    for (const mw of options.middleware ?? []) this.middleware.add(mw);
    this.validate = options.validate ?? validateByDefault();
    // A fixed dialect is resolved once (and a typo fails here, not at the first push).
    if (options.dialect !== undefined && options.dialect !== "auto") this.fixedProfile = profileFor(options.dialect);
    if (options.contract) this.contract = new ContractChecker(options.contract, this.warn);
    // Last: options that throw must not leave a connection open (a script catching the error would never exit).
    this.defaultShard = this.connect(options.redis);
  }

  /** Without the contract (check and types), for one call: `client.unchecked.job("OtherAppJob")`. */
  get unchecked(): UncheckedClient {
    return (
      this.contract === undefined ? this : Object.create(this, { contract: { value: undefined } })
    ) as UncheckedClient;
  }

  /** A Ruby job class; `classOptions`: its sidekiq_options (default: the contract's). `contract gen` types it. */
  job<K extends ContractJobName>(className: K, classOptions?: JobOptions): JobDefinition<ContractJobArgs<K>>;
  job<A extends RubyJsonValue[] = RubyJsonValue[]>(
    className: UndeclaredClassName,
    classOptions?: JobOptions,
  ): JobDefinition<A>;
  job(className: string, classOptions?: JobOptions): JobDefinition<RubyJsonValue[]> {
    return new JobDefinition(this, className, classOptions ?? this.contract?.jobOptions(className) ?? {});
  }

  /** A handle on a Rails ActiveJob class, performed by the Sidekiq adapter's wrapper (queue_as from the contract by default). */
  activeJob<K extends ContractActiveJobName>(
    className: K,
    options?: ActiveJobOptions,
  ): ActiveJobDefinition<ContractActiveJobArgs<K>>;
  activeJob<A extends unknown[] = unknown[]>(
    className: UndeclaredClassName,
    options?: ActiveJobOptions,
  ): ActiveJobDefinition<A>;
  activeJob(className: string, options?: ActiveJobOptions): ActiveJobDefinition<unknown[]> {
    // The app's locale and zone hold under any options; the class's own (queue_as...) only without them.
    const own = options ?? this.contract?.activeJobOptions(className);
    return new ActiveJobDefinition(this, className, { ...this.contract?.appDefaults(className), ...own });
  }

  /** A Rails mailer: `deliverLater` enqueues what its `deliver_later` does (actions typed by `contract gen`). */
  mailer<K extends ContractMailerName>(
    mailerClass: K,
    options?: MailerOptions,
  ): MailerDefinition<ContractMailerActions<K>>;
  mailer<M extends MailerActions = MailerActions>(
    mailerClass: UndeclaredClassName,
    options?: MailerOptions,
  ): MailerDefinition<M>;
  mailer(mailerClass: string, options?: MailerOptions): MailerDefinition {
    const app = this.contract?.appDefaults(mailerClass, "mailer");
    return new MailerDefinition(this, mailerClass, { ...app, ...options });
  }

  /**
   * A record of the contract's Rails app as `record.to_global_id` names it:
   * gid://APP/MODEL/ID, APP being the `GlobalID.app` the contract recorded
   * (`config.global_id.app`, which need not be the contract's `app`). With
   * several apps' contracts, `app` names which. Without a contract:
   * `aj.record(app, model, id)`.
   */
  record(
    model: string,
    id: string | number | ReadonlyArray<string | number>,
    options: { app?: ContractAppName } = {},
  ): AjValue {
    return aj.record(globalIdApp(this.options.contract?.contracts, options.app), model, id);
  }

  /** Adds a client middleware at the end of the chain (`middleware.add`). */
  use(mw: ClientMiddleware): this {
    this.middleware.add(mw);
    return this;
  }

  private shardFor(queue: string): Shard {
    if (!this.options.route) return this.defaultShard;
    const source = this.options.route(queue);
    if (source === this.options.redis) return this.defaultShard;
    let shard = this.shards.get(source);
    if (!shard) this.shards.set(source, (shard = this.connect(source)));
    return shard;
  }

  private connect(source: RedisSource): Shard {
    if (this.recorder === undefined) return openShard(source, this.watch, this.warn);
    // Under the testing entry: the dialect given, else the fallback, else the newest; no fleet to ask.
    const o = this.options;
    const profile = this.fixedProfile ?? profileFor(o.autoFallback ?? DIALECTS[DIALECTS.length - 1]!);
    return recordingShard(source, profile);
  }

  /** Waits (bounded) for the shard's Redis, then runs `op`; connection failures become one clear error. */
  private async reachable<T>(shard: Shard, op: () => Promise<T>): Promise<T> {
    await whenReady(shard.conn.redis, this.options.connectWaitMs ?? 5000);
    return explained(shard.conn.redis, op);
  }

  /** The wire profile this client writes for a queue (resolving "auto" against the fleet). */
  async profile(queue = "default"): Promise<WireProfile> {
    return this.profileOf(this.shardFor(queue));
  }

  private async profileOf(shard: Shard): Promise<WireProfile> {
    if (this.fixedProfile) return this.fixedProfile;
    const now = Date.now();
    if (shard.profile && shard.profile.until > now) return shard.profile.value;
    const fleet = await liveProcesses(shard.conn.redis);
    let value = profileForFleet(fleet);
    if (!value) {
      if (this.options.autoFallback === undefined) {
        throw new DialectDetectionError(NO_FLEET_TO_DETECT);
      }
      value = profileFor(this.options.autoFallback);
    }
    shard.profile = { value, until: now + (this.options.autoRefreshMs ?? 30_000) };
    return value;
  }

  private strictMode(profile: WireProfile): StrictArgsMode {
    return this.options.strictArgs ?? releaseRules(profile).client.strictArgs;
  }

  /** Pushes one job; returns its jid, or null when a middleware stopped it. */
  async push(item: PushItem, classDefaults: Readonly<JobOptions> = DEFAULT_JOB_OPTIONS): Promise<string | null> {
    this.contract?.checkPush(item);
    const shard = this.shardFor(String(item?.queue ?? classDefaults.queue ?? "default"));
    if (this.recorder !== undefined) return this.pushTo(shard, item, classDefaults);
    return this.reachable(shard, () => this.pushTo(shard, item, classDefaults));
  }

  private async pushTo(shard: Shard, item: PushItem, classDefaults: Readonly<JobOptions>): Promise<string | null> {
    const profile = this.fixedProfile ?? (await this.profileOf(shard));
    const job = normalizeItem(item, profile, classDefaults);
    if (!this.middleware.empty) {
      const ok = await this.middleware.invoke({
        className: String(job.class),
        job,
        queue: String(job.queue),
        redis: shard.conn.redis,
      });
      if (!ok) return null;
    }
    job.args = verifyArgs(
      String(job.wrapped ?? job.class),
      job.args as unknown[],
      this.strictMode(profile),
      this.warn,
    ) as RubyJsonValue[];
    if (this.recorder !== undefined) {
      await recordPush(this.recorder, profile, [job], this.validate, (j) => this.contract?.appOfPush(j));
      return String(job.jid);
    }
    const [redis, v] = [shard.conn.redis, this.validate];
    await boundedWrite(redis, [String(job.jid)], shard.writeMs, () =>
      job.at === undefined ? pushOne(redis, profile, job, v) : atomicPush(redis, profile, [job], v),
    );
    return String(job.jid);
  }

  /**
   * Pushes many jobs of one class with few round trips (Sidekiq's push_bulk):
   * returns one jid per args array, null where a middleware stopped the job.
   */
  async pushBulk(
    bulk: BulkItem,
    classDefaults: Readonly<JobOptions> = DEFAULT_JOB_OPTIONS,
  ): Promise<Array<string | null>> {
    const { args, rest, at, batchSize } = checkBulk(bulk);
    this.contract?.checkBulk(rest, args);

    const shard = this.shardFor(String(rest.queue ?? classDefaults.queue ?? "default"));
    if (this.recorder !== undefined) return this.pushBulkTo(shard, bulk, rest, at, batchSize, classDefaults);
    return this.reachable(shard, () => this.pushBulkTo(shard, bulk, rest, at, batchSize, classDefaults));
  }

  private async pushBulkTo(
    shard: Shard,
    bulk: BulkItem,
    rest: Omit<BulkItem, "args" | "at" | "spreadInterval" | "batchSize" | "jid"> & { class: string },
    at: number | number[] | undefined,
    batchSize: number,
    classDefaults: Readonly<JobOptions>,
  ): Promise<Array<string | null>> {
    const { args, jid } = bulk;
    const profile = this.fixedProfile ?? (await this.profileOf(shard));
    // Normalized once, so every job of the bulk shares created_at, as in Ruby.
    const normed = normalizeItem(
      { ...rest, args: [], ...(jid !== undefined ? { jid } : {}) } as PushItem,
      profile,
      classDefaults,
    );
    const mode = this.strictMode(profile);
    const out: Array<string | null> = [];
    const redis = shard.conn.redis;
    const noMiddleware = this.middleware.empty;
    const recorder = this.recorder;
    // atomicPush, or under the testing entry the same jobs to its recorder.
    const write = (payloads: JobHash[]) =>
      recorder === undefined
        ? atomicPush(redis, profile, payloads, this.validate)
        : recordPush(recorder, profile, payloads, this.validate, (j) => this.contract?.appOfPush(j));
    // Without middleware every job is `normed` with its own args and jid (and
    // enqueued_at or at): the shared members are encoded once (see payloadTemplate).
    let template: BulkTemplate | null | undefined;
    let start = 0;
    // A batch Redis failed to write: say which jobs are in Redis (BulkPushError).
    const partial = async (batchJids: string[], write: () => Promise<unknown>) => {
      if (this.recorder !== undefined) return void (await write());
      try {
        await boundedWrite(redis, batchJids, shard.writeMs, write);
      } catch (e) {
        throw bulkPushFailure(redis, e, out, start, args.length, batchJids);
      }
    };
    for (; start < args.length; start += batchSize) {
      const slice = args.slice(start, start + batchSize);
      if (!slice.every(Array.isArray))
        throw new SidekiqArgumentError("Bulk arguments must be an Array of Arrays: [[1], [2]]");
      if (noMiddleware) {
        const jids: RubyJsonValue[] = [];
        const jobArgs: RubyJsonValue[][] = [];
        for (const a of slice) {
          jids.push(jid ?? newJid());
          jobArgs.push(verifyArgs(String(normed.wrapped ?? normed.class), a, mode, this.warn) as RubyJsonValue[]);
        }
        // null: a shared member cannot be encoded (the generic path below says why).
        if (template === undefined) {
          try {
            template = bulkTemplate(normed, at !== undefined, profile);
          } catch {
            template = null;
          }
        }
        const ats =
          at === undefined ? undefined : jobArgs.map((_, i) => (Array.isArray(at) ? at[start + i]! : (at as number)));
        await partial(jids.map(String), async () => {
          if (
            template === null ||
            recorder !== undefined ||
            !(await atomicPushTemplate(redis, profile, template!, jobArgs, jids, jid !== undefined, ats, this.validate))
          ) {
            // An encoding error: the generic path names it exactly as it always has.
            const payloads = jobArgs.map((a, i) => {
              const copy: JobHash = { ...normed, args: a, jid: jids[i]! };
              if (ats !== undefined) copy.at = ats[i]!;
              return copy;
            });
            await write(payloads);
          }
        });
        for (const j of jids) out.push(String(j));
        continue;
      }
      const payloads: Array<JobHash | null> = [];
      for (const [i, jobArgs] of slice.entries()) {
        const copy: JobHash = { ...normed, args: jobArgs, jid: jid ?? newJid() };
        if (at !== undefined) copy.at = Array.isArray(at) ? at[start + i]! : at;
        const ok = await this.middleware.invoke({
          className: String(copy.class),
          job: copy,
          queue: String(copy.queue),
          redis,
        });
        if (ok)
          copy.args = verifyArgs(
            String(copy.wrapped ?? copy.class),
            copy.args as unknown[],
            mode,
            this.warn,
          ) as RubyJsonValue[];
        payloads.push(ok ? copy : null);
      }
      const toPush = payloads.filter((p): p is JobHash => p !== null);
      if (toPush.length > 0)
        await partial(
          toPush.map((p) => String(p.jid)),
          () => write(toPush),
        );
      for (const p of payloads) out.push(p ? String(p.jid) : null);
    }
    return out;
  }

  /**
   * Pushes a stored payload again (the scheduler's promotion, a requeue):
   * Sidekiq's `Client.push(load_json(job))`, but lossless: members that client
   * middleware does not change keep their exact bytes. enqueued_at is renewed.
   */
  async pushRecord(record: JobRecord): Promise<string | null> {
    const p = await this.prepareRecord(record);
    if (!p) return null;
    await pushPrepared(p);
    return p.jid;
  }

  /**
   * What pushRecord writes, without writing it: the Redis of the job's queue,
   * the queue, and the payload as it will be LPUSHed (null when a middleware
   * stopped the job). For callers that batch pushes with their own bookkeeping.
   */
  async prepareRecord(record: JobRecord): Promise<PreparedPush | null> {
    const queue = record.getString("queue") ?? "default";
    const shard = this.shardFor(queue);
    const profile = this.fixedProfile ?? (await this.profileOf(shard));
    if (!record.has("jid")) record.set("jid", newJid());
    if (!record.has("created_at")) record.set("created_at", encodePayloadTime(Date.now(), profile));
    if (!this.middleware.empty) {
      const view = record.toObject() as JobHash;
      const before = { ...view };
      const ok = await this.middleware.invoke({
        className: String(view.class),
        job: view,
        queue,
        redis: shard.conn.redis,
      });
      if (!ok) return null;
      // Write back only what middleware changed (compared as values, so 1.0 stays 1.0).
      for (const k of record.keys()) if (!(k in view) || view[k] === undefined) record.delete(k);
      for (const [k, v] of Object.entries(view)) {
        if (v === undefined) continue;
        // A primitive left as it was is unchanged: no need to parse and encode it (an object may have changed inside).
        if (v === before[k] && (v === null || typeof v !== "object")) continue;
        const raw = record.raw(k);
        if (raw === undefined || toRubyJson(parseJson(raw)) !== toRubyJson(v)) record.set(k, v);
      }
    }
    record.delete("at");
    record.set("enqueued_at", enqueuedAtNow(profile));
    const target = record.getString("queue") ?? queue;
    // Not validated: the payload was written by whoever enqueued it (maybe another
    // dialect during a migration); we changed only enqueued_at and middleware's keys.
    return {
      redis: this.shardFor(target).conn.redis,
      queue: target,
      json: record.toString(),
      jid: record.getString("jid") ?? null,
    };
  }

  /** Closes the connections this client opened (not an ioredis instance you passed in). */
  async close(): Promise<void> {
    const all = [this.defaultShard, ...this.shards.values()];
    this.watch.mute();
    await Promise.all(all.filter((s) => s.conn.owned).map((s) => closeConnection(s.conn.redis)));
  }
}
