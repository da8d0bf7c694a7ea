// Real sidekiq-scheduler for interop tests: 5.0.6 on Sidekiq 6.4 (bookworm),
// 6.0.2 on 7.3 and 8.1, each on rufus-scheduler 3.9.2 and fugit 1.13.0; the
// peers to put on RUBYLIB, Ruby evaluation with the gem loaded, and its Web UI
// tab rendered in-process.
import type { SidekiqTarget } from "../../harness/versions.js";
import type { SidekiqContext } from "./harness.js";

/** The gem line a Sidekiq release runs (6.0.2 needs Sidekiq >= 7.3). */
export function schedulerGem(target: SidekiqTarget): string {
  return target.dialect === 6 ? "sidekiq-scheduler-5.0.6" : "sidekiq-scheduler-6.0.2";
}

export function schedulerPeers(target: SidekiqTarget): string[] {
  return [schedulerGem(target), "rufus-scheduler-3.9.2", "fugit-1.13.0"];
}

/** `sk.ruby` with sidekiq-scheduler loaded. */
export function schedulerRuby(sk: SidekiqContext): <T>(code: string) => Promise<T> {
  const env = sk.peers(...schedulerPeers(sk.target));
  return <T>(code: string) => sk.ruby<T>(`require "sidekiq-scheduler"\n${code}`, env);
}

/** The gem's Recurring Jobs page as Ruby's Web UI renders it (Rack::MockRequest, in-process). */
export async function renderRecurringJobs(sk: SidekiqContext): Promise<{ status: number; body: string }> {
  return schedulerRuby(sk)(`
    require "sidekiq/web"
    require "sidekiq-scheduler/web"
    require "rack/mock"
    res = Rack::MockRequest.new(Sidekiq::Web.new).get("/recurring-jobs", "rack.session" => {})
    {"status" => res.status, "body" => res.body.to_s.force_encoding("UTF-8").scrub}
  `);
}

/** Starts a real `sidekiq` with sidekiq-scheduler and this static `:schedule:` (written to Redis at its start). */
export function startRubyScheduler(
  sk: SidekiqContext,
  schedule: Record<string, unknown>,
  opts: { dynamic?: boolean; queues?: string[] } = {},
) {
  return sk.startSidekiq({
    queues: opts.queues ?? ["scheduler-none"],
    require: "lib/scheduler_jobs.rb",
    env: {
      ...sk.peers(...schedulerPeers(sk.target)),
      BRIDGE_SCHEDULE: JSON.stringify(schedule),
      BRIDGE_SCHEDULER_DYNAMIC: String(opts.dynamic ?? false),
      BRIDGE_SCHEDULER_DYNAMIC_EVERY: "1s",
    },
  });
}
