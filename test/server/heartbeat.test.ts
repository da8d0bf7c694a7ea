// The Node heartbeat and stats against the commands of Sidekiq's launcher.rb and
// metrics/tracking.rb (6.4.1, 7.3.2, 8.1.7), on a recording fake Redis.
import type { Redis } from "ioredis";
import { afterEach, describe, expect, it, vi } from "vitest";
import { BRIDGE_LABEL } from "../../src/core/wire/bridge-label.js";
import { Heartbeat, type WorkEntry } from "../../src/core/server/heartbeat.js";
import {
  bridgeVersionString,
  launcherShape,
  newIdentity,
  rssKb,
  type CapsuleInfo,
} from "../../src/core/server/process-info.js";
import {
  ExecutionStats,
  histogramBucket,
  metricsKeys,
  statKeys,
  STATS_TTL,
} from "../../src/core/server/execution-stats.js";
import { profileForVersion, validateRecord, validateRaw, type WireProfile } from "../../src/core/wire/index.js";
import { loadCaptures } from "../captures.js";

type Cmd = string[];
interface Batch {
  mode: "multi" | "pipeline" | "direct";
  cmds: Cmd[];
}

/** Records every command (upper-cased, arguments as strings), grouped by MULTI / pipeline. */
class FakeRedis {
  batches: Batch[] = [];
  signals: string[] = [];
  down = false;

  private reply(c: Cmd): unknown {
    switch (c[0]) {
      case "RPOP":
        return this.signals.shift() ?? null;
      case "EXISTS":
        return 0;
      case "PING":
        return "PONG";
      default:
        return 0;
    }
  }

  private chain(mode: "multi" | "pipeline"): unknown {
    const batch: Batch = { mode, cmds: [] };
    const proxy: unknown = new Proxy(
      {},
      {
        get: (_t, prop: string) => {
          if (prop === "exec") {
            return async () => {
              if (this.down) throw new Error("Connection is closed.");
              this.batches.push(batch);
              return batch.cmds.map((c) => [null, this.reply(c)]);
            };
          }
          return (...args: unknown[]) => {
            const cmd = prop === "call" ? (args.shift() as string) : prop;
            batch.cmds.push([cmd.toUpperCase(), ...args.map(String)]);
            return proxy;
          };
        },
      },
    );
    return proxy;
  }

  multi() {
    return this.chain("multi");
  }
  pipeline() {
    return this.chain("pipeline");
  }
  async ping() {
    if (this.down) throw new Error("Connection is closed.");
    this.batches.push({ mode: "direct", cmds: [["PING"]] });
    return "PONG";
  }
  asRedis(): Redis {
    return this as unknown as Redis;
  }
  /** Commands only, without arguments, per batch: e.g. "multi: SADD EXISTS HSET EXPIRE RPOP". */
  shape(): string[] {
    return this.batches.map((b) => `${b.mode}: ${b.cmds.map((c) => c[0]).join(" ")}`);
  }
  all(): Cmd[] {
    return this.batches.flatMap((b) => b.cmds);
  }
}

const ID = "node-host:4242:0123456789ab";
const PAYLOAD =
  '{"retry":true,"queue":"critical","class":"SlowJob","args":[30,"x"],"jid":"0123456789abcdef01234567","created_at":1795305965.1988184,"enqueued_at":1795305965.1988723}';
const WORK: WorkEntry = { tid: "1a2b", queue: "critical", payload: PAYLOAD, runAt: 1795305965 };

function make(version: string, extra: Partial<ConstructorParameters<typeof Heartbeat>[0]> = {}) {
  const fake = new FakeRedis();
  const stats = new ExecutionStats();
  const signals: string[] = [];
  let quiet = false;
  let work: WorkEntry[] = [WORK];
  const hb = new Heartbeat({
    redis: fake.asRedis(),
    profile: profileForVersion(version),
    identity: ID,
    tag: "nodeapp",
    labels: ["blue"],
    capsules: [{ name: "default", concurrency: 3, mode: "weighted", weights: { critical: 2, default: 1 } }],
    work: () => work,
    stats,
    onSignal: (s) => signals.push(s),
    startedAt: 1_795_305_964_963.936,
    quiet: () => quiet,
    logger: { error: () => {}, warn: () => {} },
    ...extra,
  });
  return {
    fake,
    stats,
    hb,
    signals,
    setQuiet: (q: boolean) => (quiet = q),
    setWork: (w: WorkEntry[]) => (work = w),
  };
}

/** The process hash from the recorded HSET/HMSET (field order kept). */
function hashOf(fake: FakeRedis): Array<[string, string]> {
  const c = fake.all().find((x) => (x[0] === "HSET" || x[0] === "HMSET") && x[1] === ID)!;
  const out: Array<[string, string]> = [];
  for (let i = 2; i < c.length; i += 2) out.push([c[i]!, c[i + 1]!]);
  return out;
}

const captures = new Map(loadCaptures().map((c) => [c.sidekiq_version, c]));
function capturedInfoKeys(version: string): string[] {
  const rec = captures.get(version)!.records.find((r) => r.kind === "process-info")!;
  return Object.keys(JSON.parse(rec.raw!) as object);
}
function capturedHashFields(version: string): string[] {
  return Object.keys(captures.get(version)!.records.find((r) => r.kind === "process")!.hash!);
}

describe("newIdentity", () => {
  afterEach(() => vi.unstubAllEnvs());
  it("is hostname:pid:12 hex, hostname from DYNO first", () => {
    expect(newIdentity("web-1")).toMatch(new RegExp(`^web-1:${process.pid}:[0-9a-f]{12}$`));
    vi.stubEnv("DYNO", "worker.3");
    expect(newIdentity()).toMatch(new RegExp(`^worker\\.3:${process.pid}:[0-9a-f]{12}$`));
    expect(newIdentity()).not.toBe(newIdentity());
  });
});

describe.each(["6.4.1", "7.3.2", "8.1.7"])("Heartbeat · profile %s", (version) => {
  const dialect = profileForVersion(version).dialect;

  it("sends exactly the commands of this release's Launcher#❤", async () => {
    const { fake, hb, stats } = make(version);
    stats.record("SlowJob", 12, true);
    stats.record("SlowJob", 40, false);
    await hb.beat();
    const day = statKeys(Date.now());
    const stat = [
      ["INCRBY", "stat:processed", "2"],
      ["INCRBY", day.processed, "2"],
      ["EXPIRE", day.processed, String(STATS_TTL)],
      ["INCRBY", "stat:failed", "1"],
      ["INCRBY", day.failed, "1"],
      ["EXPIRE", day.failed, String(STATS_TTL)],
    ];
    const workJson = JSON.stringify({ queue: "critical", payload: PAYLOAD, run_at: 1795305965 });
    if (version === "6.4.1") {
      expect(fake.shape()).toEqual([
        "multi: INCRBY INCRBY EXPIRE INCRBY INCRBY EXPIRE UNLINK HSET EXPIRE UNLINK HSET EXPIRE",
        "direct: PING",
        "multi: SADD EXISTS HMSET EXPIRE RPOP",
      ]);
      expect(fake.batches[0]!.cmds).toEqual([
        ...stat,
        ["UNLINK", `${ID}:workers`],
        ["HSET", `${ID}:workers`, "1a2b", workJson],
        ["EXPIRE", `${ID}:workers`, "60"],
        ["UNLINK", `${ID}:work`],
        ["HSET", `${ID}:work`, "1a2b", workJson],
        ["EXPIRE", `${ID}:work`, "60"],
      ]);
    } else {
      expect(fake.shape()).toEqual([
        "pipeline: INCRBY INCRBY EXPIRE INCRBY INCRBY EXPIRE",
        "multi: UNLINK HSET EXPIRE",
        "direct: PING",
        "multi: SADD EXISTS HSET EXPIRE RPOP",
        "pipeline: BITFIELD EXPIRE",
        ...(dialect === 8
          ? ["pipeline: HINCRBY HINCRBY HINCRBY EXPIRE", "pipeline: HINCRBY HINCRBY HINCRBY EXPIRE"]
          : ["pipeline: HINCRBY HINCRBY HINCRBY EXPIRE"]),
      ]);
      expect(fake.batches[0]!.cmds).toEqual(stat);
      expect(fake.batches[1]!.cmds).toEqual([
        ["UNLINK", `${ID}:work`],
        ["HSET", `${ID}:work`, "1a2b", workJson],
        ["EXPIRE", `${ID}:work`, "60"],
      ]);
    }
    const reg = fake.batches.find((b) => b.cmds[0]![0] === "SADD")!.cmds;
    expect(reg[0]).toEqual(["SADD", "processes", ID]);
    expect(reg[1]).toEqual(["EXISTS", ID]);
    expect(reg[3]).toEqual(["EXPIRE", ID, "60"]);
    expect(reg[4]).toEqual(["RPOP", `${ID}-signals`]);
    expect(stats.pending()).toEqual({ processed: 0, failed: 0 });
  });

  it("writes the hash fields in Ruby's order; the hash validates against the schema", async () => {
    const { fake, hb } = make(version);
    await hb.beat();
    const hash = hashOf(fake);
    const fields = hash.map(([f]) => f);
    // 8.1.2+'s order; older profiles get the concurrency field too (their readers ignore
    // it, and an 8.1.2+ reader in a mixed fleet needs it).
    expect(fields).toEqual(["info", "concurrency", "busy", "beat", "rtt_us", "quiet", "rss"]);
    // The field set a real process of this release wrote, plus concurrency.
    expect([...fields].sort()).toEqual([...new Set([...capturedHashFields(version), "concurrency"])].sort());
    const h = Object.fromEntries(hash);
    expect(validateRecord(dialect, "process", h)).toEqual({ ok: true });
    expect(h.busy).toBe("1");
    expect(h.quiet).toBe("false");
    expect(h.beat).toMatch(/^\d{10}\.\d+$/);
    expect(Number(h.rss)).toBeGreaterThan(0);
    expect(h.concurrency).toBe("3");
  });

  it("writes info with this release's keys in its order; it validates against the schema", async () => {
    const { fake, hb } = make(version);
    await hb.beat();
    const raw = Object.fromEntries(hashOf(fake)).info!;
    expect(raw).toBe(hb.infoString());
    expect(validateRaw(dialect, "process-info", raw)).toEqual({ ok: true });
    const info = JSON.parse(raw) as Record<string, unknown>;
    // Ruby's keys in Ruby's order; 6.x gets `version` too (see heartbeat.ts).
    const want = capturedInfoKeys(version);
    expect(Object.keys(info)).toEqual(version === "6.4.1" ? [...want, "version"] : want);
    expect(raw).toContain('"started_at":1795305964.963936,');
    expect(info.hostname).toBe("node-host");
    expect(info.pid).toBe(process.pid);
    expect(info.tag).toBe("nodeapp");
    expect(info.identity).toBe(ID);
    expect(info.labels).toEqual(["blue", BRIDGE_LABEL]);
    expect(info.queues).toEqual(["critical", "default"]);
    expect(info.version).toBe(bridgeVersionString(profileForVersion(version)));
    expect(info.version).toMatch(new RegExp(`^${version.replace(/\./g, "\\.")}-sidekiq-bridge\\.`));
    if (dialect === 8) {
      expect(info.concurrency).toBeUndefined();
      expect(raw).toContain(
        '"capsules":{"default":{"concurrency":3,"mode":"weighted","weights":{"critical":2,"default":1}}}',
      );
    } else expect(info.concurrency).toBe(3);
    if (dialect >= 7) {
      expect(info.weights).toEqual([{ critical: 2, default: 1 }]);
      expect(info.embedded).toBe(false);
    }
  });

  it("writes work entries as {queue, payload (raw string), run_at} that validate", async () => {
    const { fake, hb } = make(version);
    await hb.beat();
    const hset = fake.all().find((c) => c[0] === "HSET" && c[1]!.startsWith(`${ID}:work`))!;
    expect(hset[3]).toBe(`{"queue":"critical","payload":${JSON.stringify(PAYLOAD)},"run_at":1795305965}`);
    expect(validateRaw(dialect, "work", hset[3]!)).toEqual({ ok: true });
    // Same key order as a real process's entry.
    const real = captures.get(version)!.records.find((r) => r.kind === "work")!.raw!;
    expect(Object.keys(JSON.parse(hset[3]!) as object)).toEqual(Object.keys(JSON.parse(real) as object));
  });

  it("when idle: busy 0; 7.2.3+ only UNLINKs the work key, 6.x still EXPIREs it", async () => {
    const { fake, hb, setWork } = make(version);
    setWork([]);
    await hb.beat();
    expect(Object.fromEntries(hashOf(fake)).busy).toBe("0");
    if (version === "6.4.1") {
      expect(fake.shape()[0]).toBe("multi: INCRBY INCRBY EXPIRE INCRBY INCRBY EXPIRE UNLINK EXPIRE UNLINK EXPIRE");
    } else {
      expect(fake.shape()[0]).toBe("multi: UNLINK"); // no stats pending: flush_stats sends nothing
    }
  });

  it('writes quiet "true" once quiet', async () => {
    const { fake, hb, setQuiet } = make(version);
    setQuiet(true);
    await hb.beat();
    expect(Object.fromEntries(hashOf(fake)).quiet).toBe("true");
  });

  it("passes a popped signal to onSignal", async () => {
    const { fake, hb, signals } = make(version);
    fake.signals.push("TSTP");
    await hb.beat();
    fake.signals.push("TERM");
    await hb.beat();
    await hb.beat();
    fake.signals.push("TTIN");
    await hb.beat();
    expect(signals).toEqual(["TSTP", "TERM", "TTIN"]);
  });

  it("clear(): flush stats, then SREM processes and UNLINK the work key(s); the hash is left to expire", async () => {
    const { fake, hb, stats } = make(version);
    stats.record("FastJob", 3, true);
    await hb.clear();
    const keys = version === "6.4.1" ? [`${ID}:workers`, `${ID}:work`] : [`${ID}:work`];
    const day = statKeys(Date.now());
    expect(fake.batches[0]!.cmds).toEqual([
      ["INCRBY", "stat:processed", "1"],
      ["INCRBY", day.processed, "1"],
      ["EXPIRE", day.processed, String(STATS_TTL)],
      ["INCRBY", "stat:failed", "0"],
      ["INCRBY", day.failed, "0"],
      ["EXPIRE", day.failed, String(STATS_TTL)],
    ]);
    expect(fake.batches[1]).toEqual({
      mode: "pipeline",
      cmds: [["SREM", "processes", ID], ...keys.map((k) => ["UNLINK", k])],
    });
    expect(fake.all().some((c) => c[0] === "DEL" || (c[0] === "UNLINK" && c[1] === ID))).toBe(false);
  });

  it("keeps the counts when Redis is down, and start() does not throw", async () => {
    const errors: string[] = [];
    const { fake, hb, stats } = make(version, {
      logger: { error: (m) => errors.push(m), warn: (m) => errors.push(m) },
    });
    stats.record("X", 1, true);
    fake.down = true;
    await expect(hb.beat()).rejects.toThrow(/closed/);
    expect(stats.pending()).toEqual({ processed: 1, failed: 0 });
    await expect(hb.start()).resolves.toBeUndefined();
    await hb.stop();
    // A lost connection is not logged per beat: the worker's connection watch reports an outage once.
    expect(errors).toEqual([]);
    fake.down = false;
    await hb.beat();
    expect(stats.pending()).toEqual({ processed: 0, failed: 0 });
    expect(fake.all().find((c) => c[0] === "INCRBY")).toEqual(["INCRBY", "stat:processed", "1"]);
  });
});

describe("Heartbeat details", () => {
  it("an embedded process (7.0.3+) writes embedded true and ignores signals", async () => {
    const { fake, hb, signals } = make("8.1.7", { embedded: true });
    fake.signals.push("TERM");
    await hb.beat();
    expect(signals).toEqual([]);
    expect(hb.info().embedded).toBe(true);
  });

  it("several capsules: concurrency is their sum, queues unique, one weights hash per capsule", () => {
    const capsules: CapsuleInfo[] = [
      { name: "default", concurrency: 5, mode: "strict", weights: { a: 0, b: 0 } },
      { name: "single", concurrency: 1, mode: "random", weights: { b: 1, c: 1 } },
    ];
    const v7 = make("7.3.2", { capsules }).hb;
    expect(v7.info()).toMatchObject({
      concurrency: 6,
      queues: ["a", "b", "c"],
      weights: [
        { a: 0, b: 0 },
        { b: 1, c: 1 },
      ],
    });
    const v8 = make("8.1.7", { capsules }).hb;
    expect(v8.info().capsules).toEqual({
      default: { concurrency: 5, mode: "strict", weights: { a: 0, b: 0 } },
      single: { concurrency: 1, mode: "random", weights: { b: 1, c: 1 } },
    });
    expect(v8.totalConcurrency).toBe(6);
  });

  it("version gates between the pinned releases follow the sidekiq tags", () => {
    const s = (v: string) => launcherShape(profileForVersion(v), ID);
    expect(s("8.1.1")).toMatchObject({ concurrencyField: false, capsules: true });
    expect(s("8.0.8")).toMatchObject({ concurrencyField: false, capsules: false });
    expect(s("7.2.4")).toMatchObject({ workMulti: true, hset: true, weights: "per-capsule" });
    expect(s("7.2.2")).toMatchObject({ workMulti: false, hset: true, weights: "per-capsule" });
    expect(s("7.0.0")).toMatchObject({ hset: false, weights: "none", embedded: false });
    expect(s("6.5.12")).toMatchObject({ statsOwnMulti: true, statsInWorkMulti: false, workKeys: [`${ID}:work`] });
  });

  it("reads VmRSS in KB", () => {
    expect(rssKb()).toBeGreaterThan(1000);
  });
});

describe("Stats", () => {
  const v6 = profileForVersion("6.4.1");
  const v7 = profileForVersion("7.3.2");
  const v8 = profileForVersion("8.1.7");
  const T = Date.UTC(2026, 1, 5, 8, 3, 30); // 2026-02-05 08:03:30 UTC

  it("metric key formats: 7.x j|%Y%m%d|%-H:%-M and <Class>-%d-%H:%-M; 8.x j|%y%m%d|%-H:%M (+ 10-min) and h|<Class>-%-d-%-H:%-M", () => {
    expect(metricsKeys(v7, "HardJob", T)).toEqual({
      histogram: "HardJob-05-08:3",
      rollups: [{ key: "j|20260205|8:3", ttl: 28800 }],
    });
    expect(metricsKeys(v8, "HardJob", T)).toEqual({
      histogram: "h|HardJob-5-8:3",
      rollups: [
        { key: "j|260205|8:0", ttl: 259200 },
        { key: "j|260205|8:03", ttl: 28800 },
      ],
    });
    const late = Date.UTC(2026, 10, 21, 23, 24);
    expect(metricsKeys(v8, "HardJob", late).rollups.map((r) => r.key)).toEqual(["j|261121|23:2", "j|261121|23:24"]);
    expect(metricsKeys(v8, "HardJob", late).histogram).toBe("h|HardJob-21-23:24");
    expect(metricsKeys(v7, "HardJob", late).rollups[0]!.key).toBe("j|20261121|23:24");
    expect(statKeys(T)).toEqual({ processed: "stat:processed:2026-02-05", failed: "stat:failed:2026-02-05" });
  });

  it("histogram buckets: first bound above the duration", () => {
    expect([0, 19, 20, 280, 334999, 335000, 1e9].map(histogramBucket)).toEqual([0, 0, 1, 7, 24, 25, 25]);
  });

  it("flush writes Ruby's commands: counters, then BITFIELD histograms, then HINCRBY rollups", async () => {
    const fake = new FakeRedis();
    const stats = new ExecutionStats();
    stats.record("A", 12.4, true); // bucket 0
    stats.record("A", 280, true); // bucket 7
    stats.record("B", 5000, false);
    stats.record("A", 7, false);
    await stats.flush(fake.asRedis(), v8, T);
    expect(fake.batches.map((b) => b.cmds)).toEqual([
      [
        ["INCRBY", "stat:processed", "4"],
        ["INCRBY", "stat:processed:2026-02-05", "4"],
        ["EXPIRE", "stat:processed:2026-02-05", "157680000"],
        ["INCRBY", "stat:failed", "2"],
        ["INCRBY", "stat:failed:2026-02-05", "2"],
        ["EXPIRE", "stat:failed:2026-02-05", "157680000"],
      ],
      [
        ["BITFIELD", "h|A-5-8:3", "OVERFLOW", "SAT", "INCRBY", "u16", "#0", "1", "INCRBY", "u16", "#7", "1"],
        ["EXPIRE", "h|A-5-8:3", "28800"],
      ],
      ...["j|260205|8:0", "j|260205|8:03"].map((k) => [
        ["HINCRBY", k, "A|ms", "292"],
        ["HINCRBY", k, "A|p", "3"],
        ["HINCRBY", k, "B|f", "1"],
        ["HINCRBY", k, "B|p", "1"],
        ["HINCRBY", k, "A|f", "1"],
        ["EXPIRE", k, k.endsWith(":0") ? "259200" : "28800"],
      ]),
    ]);
    // Everything was taken: a second flush sends nothing.
    await stats.flush(fake.asRedis(), v8, T);
    expect(fake.batches).toHaveLength(4);
  });

  it("7.x writes one rollup and the old histogram key; 6.x writes no metrics", async () => {
    const fake = new FakeRedis();
    const stats = new ExecutionStats();
    stats.record("A", 1, true);
    await stats.flushMetrics(fake.asRedis(), v7, T);
    expect(fake.all().map((c) => c.slice(0, 2).join(" "))).toEqual([
      "BITFIELD A-05-08:3",
      "EXPIRE A-05-08:3",
      "HINCRBY j|20260205|8:3",
      "HINCRBY j|20260205|8:3",
      "EXPIRE j|20260205|8:3",
    ]);
    const f6 = new FakeRedis();
    stats.record("A", 1, true);
    await stats.flush(f6.asRedis(), v6, T);
    expect(f6.all().map((c) => c[0])).toEqual(["INCRBY", "INCRBY", "EXPIRE", "INCRBY", "INCRBY", "EXPIRE"]);
  });

  it("flush_stats sends nothing when no job ran", async () => {
    const fake = new FakeRedis();
    await new ExecutionStats().flush(fake.asRedis(), v8 as WireProfile, T);
    expect(fake.batches).toEqual([]);
  });
});
