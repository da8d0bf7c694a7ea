// The unique-lock scenarios' jobs and their ledger: pushes through the gem's
// client middleware (Node's port), and what the ledger Redis says ran: which
// pushed job completed, which ran twice, and which two runs of one lock held
// at the same time (what the lock exists to prevent).
import type { Redis } from "ioredis";
import { Client } from "../src/core/client/client.js";
import type { RedisSource } from "../src/core/redis/connection.js";
import { uniqueJobsClient } from "../src/addons/sidekiq-unique-jobs/index.js";

export const QUEUE = "uq";
export const LEDGER = "uj:ledger";

/** One class per lock type; the lock covers args[0] only (args: key, copy, ms). */
export const KINDS = {
  until_executed: "UJUntilExecuted",
  while_executing: "UJWhileExecuting",
  until_and_while_executing: "UJUntilAndWhile",
} as const;
export type Kind = keyof typeof KINDS;

export interface Pushed {
  kind: Kind;
  key: string;
  copy: string;
  /** null: the client middleware refused it (the lock was held), or the push failed. */
  jid: string | null;
  /** The push threw (Redis away): not acknowledged, so not sent. */
  failed?: boolean;
}

const firstArg = (a: unknown[]) => [a[0]] as never;

/**
 * `copies` pushes per key of every kind (keys `<kind>-0`… `-<perKind-1>`).
 * Runtime locks reschedule a job that finds the lock taken; until_executed
 * is refused at push while its lock is held.
 */
export async function pushWave(source: RedisSource, perKind: number, copies: string[], ms: number): Promise<Pushed[]> {
  const lockArgs = Object.fromEntries(Object.values(KINDS).map((c) => [c, firstArg]));
  const client = new Client({ redis: source, dialect: "8.1.7", validate: false });
  client.use(uniqueJobsClient({ gem: 8, lockArgs, logger: quiet }));
  const out: Pushed[] = [];
  try {
    // Kinds interleaved, so the first jobs fetched hold locks of every kind.
    for (const copy of copies)
      for (let i = 0; i < perKind; i++)
        for (const kind of Object.keys(KINDS) as Kind[]) {
          const key = `${kind}-${i}`;
          const on_conflict = kind === "until_executed" ? null : { client: "log", server: "reschedule" };
          const item = { class: KINDS[kind], queue: QUEUE, args: [key, copy, ms], lock: kind };
          try {
            const jid = await client.push({ ...item, ...(on_conflict ? { on_conflict } : {}) });
            out.push({ kind, key, copy, jid });
          } catch {
            out.push({ kind, key, copy, jid: null, failed: true });
          }
        }
  } finally {
    await client.close();
  }
  return out;
}

const noop = () => {};
const quiet = { debug: noop, info: noop, warn: noop, error: noop } as never;

interface Start {
  key: string;
  copy: string;
  jid: string;
  pid: number;
  token: string;
  at: number;
}

export interface Ledger {
  starts: Start[];
  ends: Map<string, number>;
}

export async function readLedger(ledger: Redis): Promise<Ledger> {
  const starts: Start[] = [];
  const ends = new Map<string, number>();
  for (const line of await ledger.lrange(LEDGER, 0, -1)) {
    const e = JSON.parse(line) as Start & { t: "S" | "E" };
    if (e.t === "S") starts.push(e);
    else ends.set(e.token, e.at);
  }
  return { starts, ends };
}

export interface RunTally {
  sent: number;
  refused: number;
  failed: number;
  completed: number;
  lost: number;
  /** Pushed jobs whose run completed more than once (at-least-once after a fault). */
  reRuns: number;
  /** Two runs of one key overlapping in time: the lock failed. */
  duplicated: number;
  lostJobs: string[];
}

/**
 * Counts the pushed jobs against the ledger. A run with no end ended at
 * its process's kill (`killed`: pid → time), else after its `ms` at most.
 */
export function tally(pushed: Pushed[], l: Ledger, ms: number, killed: Map<number, number>): RunTally {
  const id = (key: string, copy: string) => `${key}/${copy}`;
  const completions = new Map<string, number>();
  for (const s of l.starts)
    if (l.ends.has(s.token)) completions.set(id(s.key, s.copy), (completions.get(id(s.key, s.copy)) ?? 0) + 1);
  const sent = pushed.filter((p) => p.jid !== null);
  const lostJobs = sent.filter((p) => !completions.has(id(p.key, p.copy))).map((p) => `${id(p.key, p.copy)}`);
  let reRuns = 0;
  for (const n of completions.values()) if (n > 1) reRuns++;
  // Overlaps per key: sort the runs by start, compare each with the latest end so far.
  const byKey = new Map<string, Array<[number, number]>>();
  for (const s of l.starts) {
    const end = l.ends.get(s.token) ?? Math.min(s.at + ms, killed.get(s.pid) ?? Infinity);
    byKey.set(s.key, [...(byKey.get(s.key) ?? []), [s.at, end]]);
  }
  let duplicated = 0;
  for (const runs of byKey.values()) {
    runs.sort((a, b) => a[0] - b[0]);
    let latest = -Infinity;
    for (const [start, end] of runs) {
      if (start < latest) duplicated++;
      latest = Math.max(latest, end);
    }
  }
  return {
    sent: sent.length,
    refused: pushed.filter((p) => p.jid === null && !p.failed).length,
    failed: pushed.filter((p) => p.failed).length,
    completed: sent.length - lostJobs.length,
    lost: lostJobs.length,
    reRuns,
    duplicated,
    lostJobs,
  };
}
