// Ruby's three sorted sets of jobs by name (api.rb): `ScheduledSet`
// (`schedule`), `RetrySet` (`retry`) and `DeadSet` (`dead`, the Morgue, which
// adds Ruby's `kill` and `trim`). Everything else they do is SortedJobSet's.
import { DEAD_KEY, RETRY_KEY, SCHEDULE_KEY } from "../wire/keys.js";
import type { ApiContext } from "./context.js";
import { killIntoDeadSet, trimDeadSet, type DeadSetConfig } from "./morgue.js";
import { SortedJobSet } from "./sorted-set.js";

/** `Sidekiq::ScheduledSet`: jobs waiting for their time. */
export class ScheduledSet extends SortedJobSet {
  constructor(ctx: ApiContext, config: DeadSetConfig = {}) {
    super(ctx, SCHEDULE_KEY, config);
  }
}

/** `Sidekiq::RetrySet`: failed jobs waiting to be retried. */
export class RetrySet extends SortedJobSet {
  constructor(ctx: ApiContext, config: DeadSetConfig = {}) {
    super(ctx, RETRY_KEY, config);
  }
}

/** `Sidekiq::DeadSet` (the Morgue): jobs that ran out of retries. */
export class DeadSet extends SortedJobSet {
  constructor(ctx: ApiContext, config: DeadSetConfig = {}) {
    super(ctx, DEAD_KEY, config);
  }

  /**
   * `DeadSet#kill(message)`: adds the member, bytes unchanged, scored now.
   * 7.3.5+: ZADD, then `trim` unless `trim: false`. Before 7.3.5: one MULTI
   * of ZADD and both trims. (Ruby's death handlers are not run: Node has none.)
   */
  killMessage(raw: string, opts: { trim?: boolean } = {}): Promise<void> {
    return killIntoDeadSet(this.ctx, this.config, raw, opts);
  }

  /** `DeadSet#trim`: MULTI{ZREMRANGEBYSCORE dead -inf <now - timeout>; ZREMRANGEBYRANK dead 0 -<max>}. */
  trim(): Promise<void> {
    return trimDeadSet(this.ctx, this.config);
  }
}
