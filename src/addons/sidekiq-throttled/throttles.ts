// The throttles of one Node worker: the gate that asks the gem's scripts
// whether a fetched job may run (patches/throttled_retriever.rb, with the
// queue cooldown), and the server middleware that gives its slot back when
// it is done (middlewares/server.rb). Built when the worker is, given the
// fleet's release and client once it runs (a service, before any fetch).
import type { Redis } from "ioredis";
import type { Client } from "../../core/client/client.js";
import type { Logger } from "../../core/logging/logger.js";
import type { GateContext, GateVerdict, JobGate } from "../../core/server/job-gate.js";
import type { ServerMiddleware } from "../../core/server/processor.js";
import type { Service, ServiceContext } from "../../core/server/service.js";
import type { JobRecord } from "../../core/wire/job-record.js";
import type { JsonValue } from "../../core/wire/json-scan.js";
import { Cooldown } from "./cooldown.js";
import { RubyThrottleWatch } from "./detect.js";
import type { ResolvedThrottled } from "./options.js";
import { requeueThrottled } from "./requeue.js";
import { gemLineFor, type GemLine } from "./scripts.js";
import { Strategy } from "./strategy.js";

/** message.rb's class: `wrapped` when present, else `class`. */
function classNameOf(record: JobRecord): string | undefined {
  const wrapped = record.get("wrapped");
  if (wrapped !== undefined) return String(wrapped);
  const className = record.get("class");
  return typeof className === "string" ? className : undefined;
}

/** message.rb's arguments: an ActiveJob's own (`arguments` in the wrapper's payload), else `args`. */
function argsOf(record: JobRecord): JsonValue[] {
  if (record.get("wrapped") !== undefined) {
    const first = (record.get("args") as JsonValue[] | undefined)?.[0];
    const inner = first && typeof first === "object" && !Array.isArray(first) ? first.arguments : undefined;
    return Array.isArray(inner) ? inner : [];
  }
  return (record.get("args") ?? []) as JsonValue[];
}

/** How many jobs let run are remembered until their middleware or their end (older ones: the gem's expiry). */
const ADMITTED_KEPT = 10_000;

export class Throttles {
  private strategies: Map<string, Strategy> | undefined;
  private client: Client | undefined;
  private readonly cooldown: Cooldown | undefined;
  private readonly watch: RubyThrottleWatch;
  /** Classes whose check failed, logged once each. */
  private readonly failed = new Set<string>();
  /** Jobs this worker let run whose slot the middleware has not yet taken charge of, by jid. */
  private readonly admitted = new Map<string, { s: Strategy; args: JsonValue[] }>();
  private redis: Redis | undefined;

  constructor(
    private readonly cfg: ResolvedThrottled,
    private readonly logger: Logger,
  ) {
    this.cooldown = cfg.cooldownPeriod === null ? undefined : new Cooldown(cfg.cooldownPeriod, cfg.cooldownThreshold);
    this.watch = new RubyThrottleWatch(logger);
  }

  /** Whether any class has a throttle (else the middleware is not added). */
  get any(): boolean {
    return this.cfg.byClass.size > 0;
  }

  /** Called once the fleet's release is known: the gem line picks the concurrency script. */
  start(line: GemLine, client?: Client, redis?: Redis): void {
    this.client = client;
    this.redis = redis;
    this.strategies = new Map([...this.cfg.byClass].map(([cls, s]) => [cls, new Strategy(s, line)]));
  }

  /** A do-nothing service whose factory hands over the fleet's release and the client. */
  readonly service = (ctx: ServiceContext): Service => {
    this.start(this.cfg.gem ?? gemLineFor(ctx.profile.dialect), ctx.client, ctx.redis);
    return { name: "sidekiq-throttled", start() {}, stop: async () => {} };
  };

  private strategyFor(className: string | undefined): Strategy | undefined {
    if (className === undefined) return undefined;
    return this.strategies?.get(className);
  }

  /** Throttled.throttled?: any error is logged once per class and the job is not throttled, as the gem rescues it. */
  private async throttled(redis: Redis, s: Strategy, className: string, jid: string, args: JsonValue[]) {
    try {
      return await s.throttled(redis, jid, args);
    } catch (e) {
      if (!this.failed.has(className)) {
        this.failed.add(className);
        this.logger.error(
          `sidekiq-throttled: could not check the throttle of ${className}, so the job runs unthrottled (as the gem's Throttled.throttled? does when its check raises): ${(e as Error).message}`,
          { class: className, jid },
        );
      }
      return false;
    }
  }

  /** patches/throttled_retriever.rb#retrieve_work, after the fetch. */
  readonly gate: JobGate = {
    name: "sidekiq-throttled",
    // Synchronous for a class without a throttle (every job, by default): no
    // promise and no parse of the arguments on the per-job path.
    admit: (job: GateContext): GateVerdict | Promise<GateVerdict> => {
      // The gem leaves a resting queue out of its fetch; here its job goes back to where it was.
      if (this.cooldown?.isResting(job.queue)) return "hand-back";
      const className = classNameOf(job.record);
      const s = this.strategyFor(className);
      if (!s) {
        if (className !== undefined && this.strategies !== undefined) this.watch.seen(job.redis, className);
        this.cooldown?.notifyAdmitted(job.queue);
        return "run";
      }
      return this.admitThrottled(job, s, className!);
    },
  };

  /** The gate for a class with a throttle: the gem's check, then its requeue when throttled. */
  private async admitThrottled(job: GateContext, s: Strategy, className: string): Promise<GateVerdict> {
    const args = argsOf(job.record);
    const jid = job.record.getString("jid");
    if (!jid || !(await this.throttled(job.redis, s, className, jid, args))) {
      this.cooldown?.notifyAdmitted(job.queue);
      if (jid) this.holds(jid, s, args);
      return "run";
    }
    this.cooldown?.notifyThrottled(job.queue);
    try {
      return await requeueThrottled({ redis: job.redis, client: this.client }, s, job);
    } catch (e) {
      // Never lost: when the gem's requeue cannot be done, the job goes back to its queue.
      this.logger.error(
        `sidekiq-throttled: could not requeue a throttled ${className} job; it goes back to its queue`,
        {
          class: className,
          jid,
          error: (e as Error).message,
        },
      );
      return "hand-back";
    }
  }

  /** Remembers a job let run, until its middleware or its end gives the slot back. */
  private holds(jid: string, s: Strategy, args: JsonValue[]): void {
    if (s.spec.concurrency.length === 0) return;
    this.admitted.set(jid, { s, args });
    // Jobs handed back after the gate (no handler, requeue policy) never end here: keep the newest.
    if (this.admitted.size > ADMITTED_KEPT) this.admitted.delete(this.admitted.keys().next().value!);
  }

  /**
   * A job's end (`job:success`, `job:failure`): a job whose middleware never
   * ran (no handler here, or a middleware before it that did not call next)
   * gives its slot back now, where the gem's would wait out lost_job_threshold.
   */
  readonly jobEnded = (e: { jid: string }): void => {
    const a = this.admitted.get(e.jid);
    if (!a || !this.redis) return;
    this.admitted.delete(e.jid);
    a.s.finalize(this.redis, e.jid, a.args).catch((err: unknown) =>
      this.logger.error("sidekiq-throttled: could not give back the slot of a job that ended", {
        jid: e.jid,
        error: (err as Error).message,
      }),
    );
  };

  /** middlewares/server.rb: the slot is given back once the job is done, whatever happened. */
  readonly middleware: ServerMiddleware = async (ctx, next) => {
    const s = this.strategyFor(classNameOf(ctx.job));
    const jid = ctx.job.getString("jid");
    if (!s || !jid) return next();
    const args = argsOf(ctx.job);
    this.admitted.delete(jid);
    try {
      await next();
    } finally {
      await s.finalize(ctx.redis, jid, args);
    }
  };
}
