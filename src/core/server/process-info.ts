// Who a Node process is in the fleet's process registry, as Sidekiq's Launcher
// says it: its identity (`hostname:pid:hex`), the release's launcher shape
// (which commands a beat sends and which fields `info` has, from the
// `launcher` rules of wire/release-rules.ts) and `Launcher#to_data`, the
// `info` JSON of the process hash.
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname as osHostname } from "node:os";
import { BRIDGE_LABEL } from "../wire/bridge-label.js";
import type { WireProfile } from "../wire/dialect.js";
import { workKey } from "../wire/keys.js";
import { type LauncherRules, releaseRules } from "../wire/release-rules.js";
import { RubyFloat, toRubyJson, type RubyJsonValue } from "../wire/ruby-json.js";
import { nowMs } from "../wire/timestamps.js";

export interface CapsuleInfo {
  name: string;
  concurrency: number;
  mode: "strict" | "weighted" | "random";
  /** queue => weight (0 in strict mode); key order is the queue order. */
  weights: Record<string, number>;
}

/** What `info` is made of (the heartbeat's options carry it). */
export interface ProcessInfoSource {
  /** `newIdentity()`; the Redis key of the process hash. */
  identity: string;
  /** info.hostname; default: the hostname part of `identity`, else DYNO or os.hostname(). */
  hostname?: string;
  /** Process start, epoch ms (default: now, the first time `info` is built, as Ruby's memoized to_data). */
  startedAt?: number;
  /** `tag` option, "" by default (the Web UI shows it beside the hostname). */
  tag?: string;
  /** Extra labels; BRIDGE_LABEL is always added. */
  labels?: string[];
  capsules: CapsuleInfo[];
  /** Sidekiq 7.0.3+ "embedded": the UI hides Quiet/Stop, and popped signals are ignored. */
  embedded?: boolean;
}

/** `ENV["DYNO"] || Socket.gethostname`. */
export function defaultHostname(): string {
  return process.env.DYNO || osHostname();
}

/** `"#{hostname}:#{pid}:#{SecureRandom.hex(6)}"` (component.rb / util.rb). */
export function newIdentity(hostname: string = defaultHostname()): string {
  return `${hostname}:${process.pid}:${randomBytes(6).toString("hex")}`;
}

/** The hostname part of `hostname:pid:hex12`, else DYNO / os.hostname(). */
function hostnameOf(identity: string): string {
  const m = /^(.*):\d+:[0-9a-f]{12}$/.exec(identity);
  return m?.[1] || defaultHostname();
}

/** This package's version, for `info.version`. */
function packageVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "0";
  } catch {
    return "0";
  }
}

/**
 * `info.version` of a Node process: the emulated release, then who we are, e.g.
 * `8.1.7-sidekiq-bridge.0.1.0`. Ruby only compares it with `!=` and prints it
 * (busy.erb, monitor.rb), so a human sees it on the Busy page; it still starts
 * with the release (the v6/v7/v8 schemas and profileForVersion read that) and
 * is a valid Gem::Version (a pre-release of that release) for any tool that
 * parses it.
 */
export function bridgeVersionString(profile: WireProfile): string {
  return `${profile.version}-sidekiq-bridge.${packageVersion()}`;
}

/** Resident set size in KB: VmRSS of /proc/self/status (Ruby's MEMORY_GRABBER on Linux). */
export function rssKb(): number {
  try {
    const m = /^VmRSS:\s+(\d+)/m.exec(readFileSync("/proc/self/status", "utf8"));
    if (m) return Number(m[1]);
  } catch {
    // not Linux: fall through
  }
  return Math.round(process.memoryUsage.rss() / 1024);
}

/**
 * How this process's Launcher#❤ and #to_data look: the `launcher` rules of the
 * profile's release (wire/release-rules.ts says what changed when), and the
 * work keys to write.
 */
export interface LauncherShape extends LauncherRules {
  /** `<id>:work`, and `<id>:workers` first for a profile before 6.4.2 (see heartbeat.ts). */
  workKeys: string[];
}

export function launcherShape(profile: WireProfile, identity: string): LauncherShape {
  const workKeys =
    profile.workKey === "workers" ? [workKey(identity, "workers"), workKey(identity)] : [workKey(identity)];
  return { ...releaseRules(profile).launcher, workKeys };
}

/** The total of the capsules' concurrency. */
export function totalConcurrency(capsules: readonly CapsuleInfo[]): number {
  return capsules.reduce((n, c) => n + c.concurrency, 0);
}

/** Launcher#to_json for the profile: the `info` field, in Ruby's key order. */
export function processInfoJson(profile: WireProfile, s: LauncherShape, o: ProcessInfoSource): string {
  const caps = o.capsules;
  const queues = [...new Set(caps.flatMap((c) => Object.keys(c.weights)))];
  const labels = [...new Set([...(o.labels ?? []), BRIDGE_LABEL])];
  const data: Record<string, RubyJsonValue> = {
    hostname: o.hostname ?? hostnameOf(o.identity),
    started_at: new RubyFloat((o.startedAt ?? nowMs()) / 1000),
    pid: process.pid,
    tag: o.tag ?? "",
  };
  if (!s.concurrencyField) data.concurrency = totalConcurrency(caps);
  if (s.capsules) {
    const capsules: Record<string, RubyJsonValue> = {};
    for (const c of caps) capsules[c.name] = { concurrency: c.concurrency, mode: c.mode, weights: { ...c.weights } };
    data.capsules = capsules;
  }
  data.queues = queues;
  if (s.weights === "per-capsule") data.weights = caps.map((c) => ({ ...c.weights }));
  else if (s.weights === "tally") {
    // 7.0.2: capsules.flat_map(&:queues).tally, where a queue appears max(weight, 1) times.
    const tally: Record<string, number> = {};
    for (const c of caps) for (const [q, w] of Object.entries(c.weights)) tally[q] = (tally[q] ?? 0) + Math.max(w, 1);
    data.weights = tally;
  }
  data.labels = labels;
  data.identity = o.identity;
  // 6.x writes no version (7.0.2+ does); ours goes in every profile, where 7+
  // writes it, so a 6.5+/7/8 UI reading a 6-profile heartbeat still shows it.
  data.version = bridgeVersionString(profile);
  if (s.embedded) data.embedded = o.embedded ?? false;
  return toRubyJson(data);
}
