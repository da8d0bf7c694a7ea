// The soak's post-mortem: for every job sent but never recorded as run, what
// it was, when it was pushed, which process started it (the events files the
// handlers and Ruby's middleware write), where it is now in Redis, the AOF's
// account of who took it out of its queue, the faults around it, and from
// that a cause. Reads only the few lost jids' lines, so memory stays small.
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { Redis } from "ioredis";
import { PROMOTING_REGISTRY, WORKING_REGISTRY } from "../src/core/wire/bridge-keys.js";
import { aofTrail, type AofEvent } from "./soak-aof.js";

/** What the soak recorded while it ran. Pushes: one entry per push call, in `sent` order. */
export interface SoakRecord {
  started: number;
  sent: readonly string[];
  pushes: { firstIndex: number[]; at: number[]; kind: string[] };
  faults: ReadonlyArray<{ at: number; kind: string; doneAt: number }>;
  /** pid → "ruby #2", "node (steady)", "node (killable #3)". */
  processes: ReadonlyMap<number, string>;
  eventFiles: readonly string[];
  aofDir: string;
}

export type Cause = "ruby-basic-fetch" | "ruby-scheduled-poller" | "still-pending" | "unexplained";

export interface LostJob {
  jid: string;
  kind: string;
  pushedMin: number;
  ran: string;
  where: string;
  fault: string;
  cause: Cause;
  evidence: string[];
}

const jidOf = (s: string) => /"jid":"([^"]+)"/.exec(s)?.[1] ?? "";

/** Jids sent whose run `chaos:runs` does not hold, and jids it holds that were never reported sent. */
export async function unrecorded(redis: Redis, sent: readonly string[]): Promise<{ lost: string[]; unsent: number }> {
  const ran = new Set((await redis.lrange("chaos:runs", 0, -1)).map((r) => r.split(":")[0]!));
  const sentSet = new Set(sent);
  let unsent = 0;
  for (const j of ran) if (!sentSet.has(j)) unsent++;
  return { lost: sent.filter((j) => !ran.has(j)), unsent };
}

/** Every place in Redis that holds one of `jids` now. */
async function locate(redis: Redis, jids: ReadonlySet<string>): Promise<Map<string, string[]>> {
  const where = new Map<string, string[]>();
  const found = (raw: string, place: string) => {
    const j = jidOf(raw);
    if (jids.has(j)) where.set(j, [...(where.get(j) ?? []), place]);
  };
  for (const q of await redis.smembers("queues"))
    for (const r of await redis.lrange(`queue:${q}`, 0, -1)) found(r, `queue ${q}`);
  for (const s of ["schedule", "retry", "dead"]) for (const r of await redis.zrange(s, 0, -1)) found(r, `${s} set`);
  for (const k of await redis.smembers(WORKING_REGISTRY)) {
    const vals = (await redis.type(k)) === "hash" ? await redis.hvals(k) : await redis.lrange(k, 0, -1);
    for (const v of vals) found(v, `working key ${k}`);
  }
  for (const k of await redis.smembers(PROMOTING_REGISTRY))
    for (const v of await redis.zrange(k, 0, -1)) found(v, `promoting set ${k}`);
  return where;
}

/** The events-file lines ("<ms> <pid> <event> <jid> ...") of `jids`, split into fields. */
async function eventLines(files: readonly string[], jids: ReadonlySet<string>): Promise<Map<string, string[][]>> {
  const by = new Map<string, string[][]>();
  for (const file of files) {
    const lines = createInterface({ input: createReadStream(file).on("error", () => undefined) });
    for await (const line of lines) {
      const f = line.split(" ");
      if (!jids.has(f[3] ?? "")) continue;
      by.set(f[3]!, [...(by.get(f[3]!) ?? []), f]);
    }
  }
  return by;
}

export async function explainLost(redis: Redis, rec: SoakRecord, lost: readonly string[]): Promise<LostJob[]> {
  const jids = new Set(lost);
  const where = await locate(redis, jids);
  const events = await eventLines(rec.eventFiles, jids);
  const trail = aofTrail(rec.aofDir, jids);
  const min = (ms: number) => (ms - rec.started) / 60_000;
  const indexOf = new Map<string, number>();
  rec.sent.forEach((j, i) => jids.has(j) && indexOf.set(j, i));
  return lost.map((jid) => {
    const i = indexOf.get(jid)!;
    let p = rec.pushes.firstIndex.length - 1;
    while (p > 0 && rec.pushes.firstIndex[p]! > i) p--;
    const pushedAt = rec.pushes.at[p]!;
    const ev = events.get(jid) ?? [];
    const label = (pid: string) => rec.processes.get(Number(pid)) ?? `pid ${pid}`;
    const evidence = ev.map((f) => `${min(Number(f[0])).toFixed(3)} min ${label(f[1]!)}: ${f.slice(2).join(" ")}`);
    const aof = trail.get(jid) ?? [];
    evidence.push(...aof.map(describeAof(rec.started)));
    const starts = ev.filter((f) => f[2] === "start").map((f) => label(f[1]!));
    const before = rec.faults.filter((f) => f.at <= pushedAt).at(-1);
    const after = rec.faults.find((f) => f.at > pushedAt);
    const fault = [
      before
        ? `${before.kind} at ${min(before.at).toFixed(3)} min, ${((pushedAt - before.at) / 1000).toFixed(3)} s before its push returned`
        : "none before",
      after && after.at - pushedAt < 30_000
        ? `; next: ${after.kind}, ${((after.at - pushedAt) / 1000).toFixed(3)} s after`
        : "",
    ].join("");
    const { cause, why } = causeOf(where.get(jid), ev, aof);
    return {
      jid,
      kind: rec.pushes.kind[p]!,
      pushedMin: min(pushedAt),
      ran: starts.length ? `started by ${[...new Set(starts)].join(", ")}` : "started by no process",
      where: where.get(jid)?.join(", ") ?? "nowhere",
      fault,
      cause,
      evidence: [why, ...evidence],
    };
  });
}

const describeAof = (started: number) => (e: AofEvent) =>
  `AOF (Redis run ${e.session}, ${((e.ts * 1000 - started) / 60_000).toFixed(2)} min): ${e.what}` +
  (e.barePop ? ", a client's own pop" : "") +
  `; ${e.commandsAfter} commands later that run of Redis ended`;

function causeOf(where: string[] | undefined, ev: string[][], aof: AofEvent[]): { cause: Cause; why: string } {
  if (where) return { cause: "still-pending", why: `not run yet: it is in ${where.join(", ")}` };
  const rubyError = ev.find((f) => f[2] === "error" && f[4] === "Internal_exception!");
  const raised = ev.find((f) => f[2] === "raised");
  if (rubyError)
    return {
      cause: "ruby-basic-fetch",
      why: `Ruby ran it, recording its run raised (${raised?.slice(4).join(" ") ?? rubyError.slice(5).join(" ")}), and writing the retry failed too ("Internal exception!"): BRPOP had already removed it from Redis, so nothing was left to run it again`,
    };
  const pushFailed = ev.find((f) => f[2] === "push-failed" || (f[2] === "push" && !ev.some((g) => g[2] === "pushed")));
  const fromSet = aof.find((e) => e.what.startsWith("ZREM") && !e.what.includes("MULTI"));
  if (pushFailed || (fromSet && !aof.some((e) => e.index > fromSet.index && /^[LR]PUSH queue:/.test(e.what))))
    return {
      cause: "ruby-scheduled-poller",
      why: "Ruby's scheduled poller removed it from its sorted set (one ZREM), then its push to the queue failed: the job was only in Ruby's memory",
    };
  const pop = aof.find((e) => e.barePop);
  if (pop && !ev.some((f) => f[2] === "start"))
    return {
      cause: "ruby-basic-fetch",
      why: `Ruby's BRPOP took it out of the queue (${pop.what}), ${pop.commandsAfter} commands before that run of Redis ended, and no process ever started it: the reply was lost when Redis was killed`,
    };
  if (!aof.length) return { cause: "unexplained", why: "its push is not in the AOF" };
  return { cause: "unexplained", why: "the evidence below does not say" };
}
