// Throttles Ruby has and Node was not given: the gem puts nothing in the
// payload (a class's limits live in its Ruby code), so the only trace is the
// gem's keys, which exist while a throttled class has jobs running or
// recently started. A Node worker looks for them, once per class (again a
// minute later while none is found), and warns once per class it finds.
import type { Redis } from "ioredis";
import type { Logger } from "../../core/logging/logger.js";
import { concurrencyKey, thresholdKey } from "./keys.js";

/** How long a class found without keys waits before it is looked at again. */
const RECHECK_MS = 60_000;

function unthrottledWarning(className: string): string {
  return (
    `sidekiq-throttled: Ruby throttles ${className} (its keys ${concurrencyKey(className)} or ` +
    `${thresholdKey(className)} are in Redis) but this Node worker was given no throttle for it, so it runs ` +
    `${className} without the limit; give the worker throttled: { classes: { "${className}": { ... } } } ` +
    `(the option, or the same name exported by the handlers module) with the limits of its sidekiq_throttle ` +
    `(docs/THROTTLED.md)`
  );
}

export class RubyThrottleWatch {
  private readonly next = new Map<string, number>();

  constructor(
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  /** Called for each job of a class Node has no throttle for; never waits for Redis. */
  seen(redis: Redis, className: string): void {
    const due = this.next.get(className);
    if (due !== undefined && due > this.now()) return;
    this.next.set(className, Infinity);
    redis.exists(concurrencyKey(className), thresholdKey(className)).then(
      (n) => {
        if (n > 0) this.logger.warn(unthrottledWarning(className), { class: className });
        else this.next.set(className, this.now() + RECHECK_MS);
      },
      () => this.next.set(className, this.now() + RECHECK_MS),
    );
  }
}
