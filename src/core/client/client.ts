// Sidekiq::Client for Node: normalizes jobs as the fleet's Sidekiq would, runs client middleware, checks
// arguments, and pushes with Sidekiq's commands (atomic-push.ts) in the dialect the fleet reads. The push
// paths come first; where a queue's pushes go and in what dialect is shard.ts, a bulk's batches push-bulk.ts,
// the options client-options.ts; the typed factories (job, activeJob, mailer, record) close the class.
import { releaseRules } from "../wire/release-rules.js";
import { toRubyJson, type RubyJsonValue } from "../wire/ruby-json.js";
import { encodePayloadTime } from "../wire/timestamps.js";
import { parseJson } from "../wire/json-scan.js";
import { newJid } from "../wire/jid.js";
import type { WireProfile } from "../wire/dialect.js";
import type { JobRecord } from "../wire/job-record.js";
import { writeFailure } from "./bounded-write.js";
import { Shards, type Shard } from "./shard.js";
import {
  atomicPush,
  enqueuedAtNow,
  installedPushRecorder,
  pushOne,
  pushPrepared,
  recordPush,
  type PushRecorder,
} from "./atomic-push.js";
import type { BulkItem, Client as DefinitionClient, PreparedPush } from "./client-types.js";
import type { ClientOptions } from "./client-options.js";
import { checkBulk, pushBulkBatches } from "./push-bulk.js";
import { MiddlewareChain } from "../middleware/chain.js";
import type { ClientMiddleware } from "./middleware.js";
import { DEFAULT_JOB_OPTIONS, normalizeItem, type JobHash, type JobOptions, type PushItem } from "./normalize.js";
import { verifyArgs, type StrictArgsMode } from "./strict-args.js";
import { JobDefinition } from "./job.js";
import { ActiveJobDefinition, aj, type ActiveJobOptions, type AjValue } from "./activejob.js";
import { MailerDefinition, type MailerActions, type MailerOptions } from "./mailer.js";
import { ContractChecker } from "../contract/checker.js";
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
  /** Sidekiq's client middleware chain: add, prepend, insertBefore, insertAfter, remove, exists, clear. */
  readonly middleware = new MiddlewareChain<ClientMiddleware>("client");
  private readonly validate: boolean;
  private readonly warn: (m: string) => void;
  /** Where each queue's pushes go, and in what dialect. */
  private readonly shards: Shards;
  private readonly contract?: ContractChecker;
  /** Set when the testing entry was loaded before this client was made: its pushes go there, never to Redis. */
  private readonly recorder: PushRecorder | undefined = installedPushRecorder();
  /** Under the testing entry, the contract app a recorded push belongs to (jobs carry none). */
  private readonly appOf = (job: JobHash): string | undefined => this.contract?.appOfPush(job);

  constructor(private readonly options: ClientOptions) {
    this.warn = options.warn ?? ((m) => console.warn(`[sidekiq-bridge] ${m}`));
    for (const mw of options.middleware ?? []) this.middleware.add(mw);
    this.validate = options.validate ?? validateByDefault();
    // Resolves a fixed dialect (a typo fails here, not at the first push); opens nothing yet.
    this.shards = new Shards(options, this.warn, this.recorder !== undefined);
    if (options.contract) this.contract = new ContractChecker(options.contract, this.warn);
    // Last: options that throw must not leave a connection open (a script catching the error would never exit).
    this.shards.open();
  }

  /** Without the contract (check and types), for one call: `client.unchecked.job("OtherAppJob")`. */
  get unchecked(): UncheckedClient {
    return (
      this.contract === undefined ? this : Object.create(this, { contract: { value: undefined } })
    ) as UncheckedClient;
  }

  /** Pushes one job; returns its jid, or null when a middleware stopped it. */
  async push(item: PushItem, classDefaults: Readonly<JobOptions> = DEFAULT_JOB_OPTIONS): Promise<string | null> {
    this.contract?.checkPush(item);
    const shard = this.shards.shardFor(String(item?.queue ?? classDefaults.queue ?? "default"));
    if (this.recorder !== undefined) return this.pushTo(shard, item, classDefaults);
    return this.shards.reachable(shard, () => this.pushTo(shard, item, classDefaults));
  }

  private async pushTo(shard: Shard, item: PushItem, classDefaults: Readonly<JobOptions>): Promise<string | null> {
    const profile = this.shards.fixedProfile ?? (await this.shards.profileOf(shard));
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
      await recordPush(this.recorder, profile, [job], this.validate, this.appOf);
      return String(job.jid);
    }
    const { conn, deadlines } = shard;
    try {
      // A push for a queue goes in this tick's batch, which carries its own deadline.
      await (job.at === undefined
        ? pushOne(conn.redis, deadlines, profile, job, this.validate)
        : deadlines.bound(atomicPush(conn.redis, profile, [job], this.validate)));
    } catch (e) {
      throw writeFailure(conn.redis, [String(job.jid)], e);
    }
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

    const shard = this.shards.shardFor(String(rest.queue ?? classDefaults.queue ?? "default"));
    if (this.recorder !== undefined) return this.pushBulkTo(shard, bulk, rest, at, batchSize, classDefaults);
    return this.shards.reachable(shard, () => this.pushBulkTo(shard, bulk, rest, at, batchSize, classDefaults));
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
    const profile = this.shards.fixedProfile ?? (await this.shards.profileOf(shard));
    // Normalized once, so every job of the bulk shares created_at, as in Ruby.
    const normed = normalizeItem(
      { ...rest, args: [], ...(jid !== undefined ? { jid } : {}) } as PushItem,
      profile,
      classDefaults,
    );
    const pusher = {
      middleware: this.middleware,
      mode: this.strictMode(profile),
      warn: this.warn,
      validate: this.validate,
      recorder: this.recorder,
      appOf: this.appOf,
    };
    return pushBulkBatches(pusher, shard, profile, normed, args, jid, at, batchSize);
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
    const shard = this.shards.shardFor(queue);
    const profile = this.shards.fixedProfile ?? (await this.shards.profileOf(shard));
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
      redis: this.shards.shardFor(target).conn.redis,
      queue: target,
      json: record.toString(),
      jid: record.getString("jid") ?? null,
    };
  }

  private strictMode(profile: WireProfile): StrictArgsMode {
    return this.options.strictArgs ?? releaseRules(profile).client.strictArgs;
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

  /** The wire profile this client writes for a queue (resolving "auto" against the fleet). */
  async profile(queue = "default"): Promise<WireProfile> {
    return this.shards.profileOf(this.shards.shardFor(queue));
  }

  /** Closes the connections this client opened (not an ioredis instance you passed in). */
  async close(): Promise<void> {
    await this.shards.close();
  }
}
