// --network-timeout SECONDS, taken by every command: how long a Redis
// connection may stay silent before it is dropped and made again (Sidekiq's
// network_timeout). It is set for the whole process through the environment,
// so every connection a command opens (its API, a worker's fetch lanes, a
// swarm's children) reads the same value.
import { NETWORK_TIMEOUT_ENV } from "../../core/redis/network.js";
import { UsageError } from "./errors.js";

export const NETWORK_TIMEOUT_HELP = `      --network-timeout S     seconds a Redis connection may stay silent before it is made again
                              (default: $${NETWORK_TIMEOUT_ENV} or 3, as Sidekiq 8)`;

/** Removes --network-timeout from `argv` and sets it in `env`; returns the rest. */
export function takeNetworkTimeout(argv: readonly string[], env: NodeJS.ProcessEnv = process.env): string[] {
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    let value: string | undefined;
    if (a === "--network-timeout") {
      value = argv[++i];
      if (value === undefined) throw new UsageError("--network-timeout needs a number of seconds");
    } else if (a.startsWith("--network-timeout=")) value = a.slice("--network-timeout=".length);
    else {
      rest.push(a);
      continue;
    }
    const n = Number(value);
    if (value.trim() === "" || !Number.isFinite(n) || n <= 0)
      throw new UsageError(`--network-timeout must be a positive number of seconds, got "${value}"`);
    env[NETWORK_TIMEOUT_ENV] = String(n);
  }
  return rest;
}
