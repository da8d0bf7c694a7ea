// The worker's typed events: what happened to each job, the fetch, the Redis
// connection and the lifecycle (Sidekiq's `config.on(:startup | :quiet |
// :shutdown | :heartbeat | :exit)`). Listeners run synchronously in order;
// one that throws is reported and skipped, never breaking the worker.
import type { JobRecord } from "../wire/job-record.js";
import type { LogContext } from "../logging/logger.js";

export interface JobEventBase {
  jid: string;
  /** The class the job was routed by (`wrapped` for ActiveJob). */
  className: string;
  queue: string;
  /** The slot running it. */
  tid: string;
  record: JobRecord;
}

export interface JobFinishedEvent extends JobEventBase {
  /** Seconds the handler (and its middleware) ran. */
  elapsed: number;
}

export interface JobFailedEvent extends JobFinishedEvent {
  error: unknown;
}

export interface JobRetriedEvent extends JobEventBase {
  error: unknown;
  /** Epoch seconds of the next try. */
  retryAt: number;
}

export interface JobDeadEvent extends JobEventBase {
  error: unknown;
  /** "dead": in the dead set; "discarded": dropped (`dead: false`, :discard). */
  outcome: "dead" | "discarded";
}

export interface WorkerEventMap {
  "job:start": JobEventBase;
  "job:success": JobFinishedEvent;
  "job:failure": JobFailedEvent;
  "job:retry": JobRetriedEvent;
  "job:dead": JobDeadEvent;
  /** One fetch round trip (BLMOVE/BRPOP): seconds, and how many jobs it brought. */
  fetch: { capsule: string; seconds: number; jobs: number };
  "fetch:error": { capsule: string; error: unknown };
  "redis:lost": { error?: unknown };
  "redis:regained": Record<string, never>;
  /** Sidekiq's :startup: the heartbeat and the services run, the managers are about to fetch. */
  startup: Record<string, never>;
  /** Sidekiq's :heartbeat: the process hash was first written (or written again after an outage). */
  heartbeat: Record<string, never>;
  /** Sidekiq's :quiet: fetching and the services stop; running jobs go on. */
  quiet: Record<string, never>;
  /** The stop began (emitted with `shutdown`, the name Sidekiq gives it). */
  stopping: Record<string, never>;
  /** Sidekiq's :shutdown: the stop began; running jobs get the timeout. */
  shutdown: Record<string, never>;
  /** Sidekiq's :exit: the stop is done and the connections are closed. */
  exit: Record<string, never>;
  /** Sidekiq's error handlers, as an event: every error the worker reports. */
  error: { error: unknown; context: LogContext };
}

export type WorkerEventName = keyof WorkerEventMap;
export type WorkerListener<E extends WorkerEventName> = (event: WorkerEventMap[E]) => void;

export class WorkerEvents {
  private readonly listeners = new Map<WorkerEventName, Array<(e: never) => void>>();
  /** Where a throwing listener is reported. */
  onListenerError: (error: unknown, event: WorkerEventName) => void = () => {};

  on<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    const list = this.listeners.get(event) ?? [];
    this.listeners.set(event, [...list, fn as (e: never) => void]);
    return this;
  }

  off<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    const list = this.listeners.get(event);
    if (list)
      this.listeners.set(
        event,
        list.filter((f) => f !== fn),
      );
    return this;
  }

  once<E extends WorkerEventName>(event: E, fn: WorkerListener<E>): this {
    const wrapped: WorkerListener<E> = (e) => {
      this.off(event, wrapped);
      fn(e);
    };
    return this.on(event, wrapped);
  }

  /** Whether anyone listens (so callers can skip building the event). */
  has(event: WorkerEventName): boolean {
    return (this.listeners.get(event)?.length ?? 0) > 0;
  }

  emit<E extends WorkerEventName>(event: E, payload: WorkerEventMap[E]): void {
    const list = this.listeners.get(event);
    if (!list) return;
    for (const fn of list) {
      try {
        const r = (fn as WorkerListener<E>)(payload) as unknown;
        // An async listener's rejection is reported like a throw.
        if (r instanceof Promise) r.catch((e: unknown) => this.report(e, event));
      } catch (e) {
        this.report(e, event);
      }
    }
  }

  private report(e: unknown, event: WorkerEventName): void {
    try {
      this.onListenerError(e, event);
    } catch {
      // the reporter itself failed: nothing more to do
    }
  }
}
