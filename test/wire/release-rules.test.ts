import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { profileForVersion } from "../../src/core/wire/dialect.js";
import { releaseRules } from "../../src/core/wire/release-rules.js";

/** Every Sidekiq release from 6.0.0 to 8.1.7 (the public tags; there was no 7.3.4). */
const RELEASES = [
  ...["6.0.0", "6.0.1", "6.0.2", "6.0.3", "6.0.4", "6.0.5", "6.0.6", "6.0.7"],
  ...["6.1.0", "6.1.1", "6.1.2", "6.1.3", "6.2.0", "6.2.1", "6.2.2", "6.3.0", "6.3.1", "6.4.0", "6.4.1", "6.4.2"],
  ...["6.5.0", "6.5.1", "6.5.2", "6.5.3", "6.5.4", "6.5.5", "6.5.6", "6.5.7", "6.5.8", "6.5.9", "6.5.10", "6.5.11"],
  ...["6.5.12", "7.0.0", "7.0.1", "7.0.2", "7.0.3", "7.0.4", "7.0.5", "7.0.6", "7.0.7", "7.0.8", "7.0.9"],
  ...["7.1.0", "7.1.1", "7.1.2", "7.1.3", "7.1.4", "7.1.5", "7.1.6", "7.2.0", "7.2.1", "7.2.2", "7.2.3", "7.2.4"],
  ...["7.3.0", "7.3.1", "7.3.2", "7.3.3", "7.3.5", "7.3.6", "7.3.7", "7.3.8", "7.3.9", "7.3.10"],
  ...["8.0.0", "8.0.1", "8.0.2", "8.0.3", "8.0.4", "8.0.5", "8.0.6", "8.0.7", "8.0.8", "8.0.9", "8.0.10"],
  ...["8.1.0", "8.1.1", "8.1.2", "8.1.3", "8.1.4", "8.1.5", "8.1.6", "8.1.7"],
];

type Flat = Record<string, unknown>;

/** The table as a changelog: every rule in 6.0.0, then what each release changed (and nothing else changes). */
const CHANGES: Record<string, Flat> = {
  "6.0.0": {
    "payload.time": "seconds",
    "payload.backtraceBase64": "mime",
    "client.scheduledDropsEnqueuedAt": false,
    "client.strictArgs": "warn",
    "activeJob.wrapperClass": "ActiveJob::QueueAdapters::SidekiqAdapter::JobWrapper",
    "activeJob.defaultRails": "6.1",
    "retry.jitter": "rand(30)*(count+1)",
    "retry.retryAt": "jitter-on-default-only",
    "retry.retryIn": "to_i",
    "retry.retryFor": "ignored",
    "retry.retryForClock": "seconds",
    "retry.deathHandlersAfterMorgue": false,
    "retry.exhaustedDiscard": false,
    "retry.discardRunsDeathHandlers": false,
    "retry.discardedAt": false,
    "scheduled.largeFleetPollInterval": "interval*rand",
    "metrics.enabled": false,
    "metrics.keys": "v7",
    "launcher.payloadString": false,
    "launcher.unlink": false,
    "launcher.rss": false,
    "launcher.rtt": false,
    "launcher.workKey": "workers",
    "launcher.statsInWorkMulti": true,
    "launcher.statsOwnMulti": false,
    "launcher.beatSeconds": 5,
    "launcher.flushStats": false,
    "launcher.weights": "none",
    "launcher.embedded": false,
    "launcher.hset": false,
    "launcher.workMulti": false,
    "launcher.capsules": false,
    "launcher.concurrencyField": false,
    "api.latency": "enqueued-seconds",
    "api.processCleanupLock": false,
    "api.deadSetKill": "multi",
    "api.deadSetKillLimits": "configured",
    "api.busyByHostname": false,
    "iteration.cancellation": false,
    "iteration.expireOnce": false,
    "iteration.flushOnError": false,
    "iteration.maxIterationRuntime": false,
  },
  "6.0.2": { "launcher.payloadString": true },
  "6.0.4": { "retry.deathHandlersAfterMorgue": true },
  "6.0.5": { "launcher.unlink": true },
  "6.1.3": { "launcher.rss": true },
  "6.2.0": { "launcher.rtt": true },
  "6.2.2": { "retry.jitter": "rand(10)*(count+1)", "retry.retryAt": "now+(delay+jitter)" },
  "6.4.2": { "launcher.workKey": "work", "launcher.statsInWorkMulti": false, "launcher.statsOwnMulti": true },
  "6.5.2": { "retry.retryAt": "now+delay+jitter", "retry.retryIn": "strategy", "api.processCleanupLock": true },
  "7.0.0": {
    "api.busyByHostname": true,
    "api.deadSetKillLimits": "defaults",
    "client.strictArgs": "raise",
    "activeJob.defaultRails": "7.1",
    "metrics.enabled": true,
    "launcher.statsOwnMulti": false,
    "launcher.beatSeconds": 10,
    "launcher.flushStats": true,
  },
  "7.0.2": { "launcher.weights": "tally" },
  "7.0.3": { "launcher.weights": "per-capsule", "launcher.embedded": true },
  "7.0.7": { "retry.retryIn": "strategy-to_i" },
  "7.1.0": { "launcher.hset": true },
  "7.1.2": { "client.scheduledDropsEnqueuedAt": true },
  "7.1.3": { "retry.retryFor": "or-count" },
  "7.2.0": { "retry.exhaustedDiscard": true },
  "7.2.1": { "payload.backtraceBase64": "strict" },
  "7.2.3": { "launcher.workMulti": true },
  "7.3.3": { "iteration.cancellation": true },
  "7.3.5": { "api.deadSetKill": "zadd-then-trim", "api.deadSetKillLimits": "configured" },
  "8.0.0": {
    "payload.time": "millis",
    "activeJob.wrapperClass": "Sidekiq::ActiveJob::Wrapper",
    "retry.jitter": "rand(10*(count+1))",
    "retry.retryForClock": "time_for-usec",
    "metrics.keys": "v8",
    "api.latency": "enqueued-typed",
    "iteration.expireOnce": true,
  },
  "8.0.4": { "iteration.flushOnError": true },
  "8.0.7": { "retry.discardRunsDeathHandlers": true },
  "8.0.8": { "retry.discardedAt": true, "iteration.maxIterationRuntime": true },
  "8.0.9": { "launcher.capsules": true },
  "8.0.10": { "scheduled.largeFleetPollInterval": "interval*rand*2" },
  "8.1.0": { "retry.retryFor": "instead-of-count" },
  "8.1.1": { "api.latency": "enqueued-or-created-typed" },
  "8.1.2": { "launcher.concurrencyField": true },
  "8.1.6": { "retry.retryForClock": "time_for" },
};

function flatten(rules: object): Flat {
  const out: Flat = {};
  for (const [group, rs] of Object.entries(rules)) {
    if (typeof rs !== "object") continue; // version
    for (const [name, value] of Object.entries(rs as object)) out[`${group}.${name}`] = value;
  }
  return out;
}

/** What CHANGES says `version` has: every change up to and including it. */
function expected(version: string): Flat {
  const upTo = RELEASES.indexOf(version) < 0 ? RELEASES.length : RELEASES.indexOf(version) + 1;
  const out: Flat = {};
  for (const r of RELEASES.slice(0, upTo)) Object.assign(out, CHANGES[r]);
  return out;
}

describe("releaseRules", () => {
  it("matches the changelog for every release from 6.0.0 to 8.1.7", () => {
    for (const v of RELEASES) expect(flatten(releaseRules(v)), v).toEqual(expected(v));
  });

  it("keeps the last known release's rules for newer releases, and reads pre-release suffixes as the release", () => {
    expect(flatten(releaseRules("9.0.0"))).toEqual(expected("8.1.7"));
    expect(flatten(releaseRules("7.0.0.beta1"))).toEqual(expected("7.0.0"));
    expect(flatten(releaseRules("8.1.7-sidekiq-bridge.0.1.0"))).toEqual(expected("8.1.7"));
  });

  it("pins the interop releases and the boundaries around them", () => {
    expect(releaseRules("6.4.1")).toMatchObject({
      payload: { time: "seconds", backtraceBase64: "mime" },
      retry: { jitter: "rand(10)*(count+1)", retryIn: "to_i", retryFor: "ignored" },
      launcher: { workKey: "workers", beatSeconds: 5, statsInWorkMulti: true },
      api: { processCleanupLock: false, deadSetKill: "multi" },
    });
    expect(releaseRules("7.3.2")).toMatchObject({
      payload: { time: "seconds", backtraceBase64: "strict" },
      client: { scheduledDropsEnqueuedAt: true, strictArgs: "raise" },
      retry: { retryIn: "strategy-to_i", retryFor: "or-count", exhaustedDiscard: true, discardedAt: false },
      launcher: { workKey: "work", beatSeconds: 10, workMulti: true, capsules: false },
      api: { latency: "enqueued-seconds", deadSetKill: "multi" },
    });
    expect(releaseRules("8.1.7")).toMatchObject({
      payload: { time: "millis" },
      activeJob: { wrapperClass: "Sidekiq::ActiveJob::Wrapper" },
      retry: { retryFor: "instead-of-count", retryForClock: "time_for", discardedAt: true },
      launcher: { capsules: true, concurrencyField: true },
      api: { latency: "enqueued-or-created-typed", deadSetKill: "zadd-then-trim" },
    });
    expect(releaseRules("8.0.7").retry).toMatchObject({ discardRunsDeathHandlers: true, discardedAt: false });
    expect(releaseRules("8.0.8").retry).toMatchObject({ discardRunsDeathHandlers: true, discardedAt: true });
  });

  it("is one frozen object per version", () => {
    const r = releaseRules("7.3.2");
    expect(releaseRules({ version: "7.3.2" })).toBe(r);
    expect(releaseRules(profileForVersion("7.3.2"))).toBe(r);
    expect(Object.isFrozen(r) && Object.isFrozen(r.retry)).toBe(true);
    expect(() => {
      (r.retry as { discardedAt: boolean }).discardedAt = true;
    }).toThrow(TypeError);
  });

  it("fills WireProfile's release fields", () => {
    for (const v of RELEASES) {
      const r = releaseRules(v);
      expect(profileForVersion(v), v).toMatchObject({
        payloadTime: r.payload.time,
        backtraceBase64: r.payload.backtraceBase64,
        workKey: r.launcher.workKey,
        beatSeconds: r.launcher.beatSeconds,
        activeJobWrapper: r.activeJob.wrapperClass,
      });
    }
  });
});

describe("one place for release differences", () => {
  it("schema/README.md lists exactly the releases the table changes at", () => {
    const readme = readFileSync(new URL("../../schema/README.md", import.meta.url), "utf8");
    const section = readme.split("## What changed in which release")[1]?.split("\n## ")[0] ?? "";
    const listed = [...section.matchAll(/^\| (\d+\.\d+\.\d+) \|/gm)].map((m) => m[1]);
    const changed = Object.keys(CHANGES).filter((v) => v !== "6.0.0");
    expect(listed).toEqual(changed);
  });

  it("no module outside wire/release-rules.ts compares Sidekiq versions or dialects", () => {
    const src = new URL("../../src/", import.meta.url).pathname;
    // fleet.ts picks the oldest release of a fleet and server-features.ts reads Redis's version: not release rules.
    const allowed = new Set([
      "core/wire/release-rules.ts",
      "core/wire/dialect.ts",
      "core/client/fleet.ts",
      "core/server/fetch/server-features.ts",
    ]);
    const offenders: string[] = [];
    const walk = (dir: string): void => {
      for (const name of readdirSync(dir)) {
        const path = join(dir, name);
        if (statSync(path).isDirectory()) {
          if (name !== "generated") walk(path);
          continue;
        }
        const rel = path.slice(src.length);
        if (!name.endsWith(".ts") || allowed.has(rel)) continue;
        readFileSync(path, "utf8")
          .split("\n")
          .forEach((line, i) => {
            if (/versionAtLeast\(|\.dialect\s*(?:[<>]=?|[!=]==)\s*\d/.test(line))
              offenders.push(`${rel}:${i + 1}: ${line.trim()}`);
          });
      }
    };
    walk(src);
    expect(offenders).toEqual([]);
  });
});
