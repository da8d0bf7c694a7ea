// Who reads this Redis: the live Sidekiq processes' heartbeats tell their
// versions, so `dialect: "auto"` writes what every one of them understands.
import type { Redis } from "ioredis";
import { BRIDGE_LABEL } from "../wire/bridge-label.js";
import { DialectDetectionError } from "./errors.js";
import { profileForVersion, versionAtLeast, type WireProfile } from "../wire/dialect.js";
import { PROCESSES_KEY } from "../wire/keys.js";

export interface LiveProcess {
  identity: string;
  /** `info.version`; 6.x and 7.0.0–7.0.1 do not write it. */
  version?: string;
  /** A sidekiq-bridge (Node) process: it reads every dialect, so it does not constrain. */
  bridge: boolean;
}

export async function liveProcesses(redis: Redis): Promise<LiveProcess[]> {
  const ids = await redis.smembers(PROCESSES_KEY);
  if (ids.length === 0) return [];
  const pipe = redis.pipeline();
  for (const id of ids) pipe.hget(id, "info");
  const results = (await pipe.exec()) ?? [];
  const out: LiveProcess[] = [];
  ids.forEach((identity, i) => {
    const [err, info] = results[i] ?? [];
    if (err || typeof info !== "string") return; // expired heartbeat: not live
    try {
      const parsed = JSON.parse(info) as { version?: unknown; labels?: unknown };
      const labels = Array.isArray(parsed.labels) ? parsed.labels : [];
      out.push({
        identity,
        version: typeof parsed.version === "string" ? parsed.version : undefined,
        bridge: labels.includes(BRIDGE_LABEL),
      });
    } catch {
      // A heartbeat we cannot read says nothing about the reader.
    }
  });
  return out;
}

/**
 * The profile every live Ruby reader understands: the oldest one's. A process
 * without `info.version` is 6.x (or 7.0.0/7.0.1): float seconds, as 6.4.1 writes.
 * Undefined when no Ruby process is live.
 */
export function profileForFleet(processes: readonly LiveProcess[]): WireProfile | undefined {
  const versions = processes.filter((p) => !p.bridge).map((p) => p.version ?? "6.4.1");
  if (versions.length === 0) return undefined;
  const oldest = versions.reduce((a, b) => (versionAtLeast(a, b) ? b : a));
  return profileForVersion(oldest);
}

/**
 * What `client` writes now (its profile, "auto" resolved again once its
 * `autoRefreshMs` has passed), or `last` when no Ruby process is live: a
 * fleet left with Node alone keeps the dialect it had.
 */
export async function fleetProfile(
  client: { profile(): Promise<WireProfile> },
  last: WireProfile,
): Promise<WireProfile> {
  try {
    return await client.profile();
  } catch (e) {
    if (e instanceof DialectDetectionError) return last;
    throw e;
  }
}
