// Real sidekiq-cron 2.3.1 (with fugit and cronex) for interop tests: the peers
// to put on RUBYLIB, and Ruby evaluation with the gem loaded.
import type { SidekiqContext } from "./harness.js";

export const CRON_PEERS = ["sidekiq-cron-2.3.1", "fugit-1.13.0", "cronex-0.15.0"] as const;

// `:auto` reads every namespace in Redis, as the Node poller does by default.
const PRELUDE = `require "sidekiq-cron"
Sidekiq::Cron.configure { |c| c.available_namespaces = :auto }
`;

/** `sk.ruby` with sidekiq-cron loaded. */
export function cronRuby(sk: SidekiqContext): <T>(code: string) => Promise<T> {
  const env = sk.peers(...CRON_PEERS);
  return <T>(code: string) => sk.ruby<T>(PRELUDE + code, env);
}
