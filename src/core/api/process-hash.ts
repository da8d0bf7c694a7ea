// The process hash and work entries as Sidekiq writes them, read into plain
// objects: shared by ProcessSet and the Busy pages.
import { BRIDGE_LABEL } from "../wire/bridge-label.js";
import { JobRecord } from "../wire/job-record.js";
import { parseJson, type JsonValue } from "../wire/json-scan.js";
import { toF, toI } from "./context.js";
import { displayClassOf, parseStored } from "./job-entry.js";

/** Whether a process in the fleet is Ruby Sidekiq or a sidekiq-bridge worker. */
export type ProcessSide = "ruby" | "node";

/** One live process, from its heartbeat (`Sidekiq::Process`). */
export interface ProcessInfo {
  identity: string;
  hostname: string | undefined;
  pid: number | undefined;
  tag: string | undefined;
  /** Epoch seconds. */
  startedAt: number | undefined;
  /** `info.version` (7.0.2+; a Node process writes e.g. `8.1.7-sidekiq-bridge.0.1.0`). */
  version: string | undefined;
  labels: string[];
  /** `Process#queues`: from `capsules` (8.0.9+) when present, else `info.queues`. */
  queues: string[];
  /** The `concurrency` hash field (8.1.2+ writers), else `info.concurrency`. */
  concurrency: number;
  busy: number;
  /** Last heartbeat, epoch seconds. */
  beat: number;
  /** `quiet == "true"`: quiet or shutting down (`Process#stopping?`). */
  quiet: boolean;
  /** KB. */
  rss: number;
  rttUs: number;
  /** "node" for sidekiq-bridge processes (the `sidekiq-bridge` label), else "ruby". */
  side: ProcessSide;
  /** `info.embedded` (7.0.3+): Quiet and Stop are refused. */
  embedded: boolean;
  /** The whole `info` object, as parsed. */
  info: { [key: string]: JsonValue };
}

/** A job a process is running now (`Sidekiq::WorkSet` entry). */
export interface RunningWork {
  /** The process identity. */
  process: string;
  /** Thread id (the hash field). */
  tid: string;
  queue: string | undefined;
  /** Epoch seconds (integer on the wire). */
  runAt: number;
  /** The job string as fetched (a 6.0.0–6.0.1 writer's object payload: its JSON text). */
  payload: string;
  record: JobRecord | null;
  jid: string | undefined;
  displayClass: string | undefined;
}

/** The remote signals Sidekiq's API sends a process: TSTP quiets, TERM stops, TTIN dumps its threads. */
export type RemoteSignalName = "TSTP" | "TERM" | "TTIN";

/** No live process has this identity. */
export class ProcessNotFoundError extends Error {
  override name = "ProcessNotFoundError";
}

/** The process is embedded in an application and does not take Stop (or Quiet) from outside, as in Sidekiq. */
export class EmbeddedProcessError extends Error {
  override name = "EmbeddedProcessError";
}

export const FIELDS = ["info", "concurrency", "busy", "beat", "quiet", "rss", "rtt_us"] as const;
/** Processes checked per pipeline by `cleanup`. */
export const CLEANUP_BATCH = 1000;

function obj(v: JsonValue | undefined): { [key: string]: JsonValue } | undefined {
  return v !== null && typeof v === "object" && !Array.isArray(v) && typeof v !== "bigint" ? v : undefined;
}

function strings(v: JsonValue | undefined): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

function num(v: JsonValue | undefined): number | undefined {
  return typeof v === "number" ? v : typeof v === "bigint" ? Number(v) : undefined;
}

/** Builds a ProcessInfo from the HMGET reply (info, concurrency, busy, beat, quiet, rss, rtt_us). */
export function processFromHash(identity: string, values: ReadonlyArray<string | null>): ProcessInfo | undefined {
  const [infoText, concurrency, busy, beat, quiet, rss, rtt] = values;
  if (infoText === null || infoText === undefined) return undefined;
  let parsed: JsonValue;
  try {
    parsed = parseJson(infoText);
  } catch {
    return undefined;
  }
  const info = obj(parsed);
  if (!info) return undefined;
  const labels = strings(info.labels);
  const capsules = obj(info.capsules);
  const queues = capsules
    ? [...new Set(Object.values(capsules).flatMap((c) => Object.keys(obj(obj(c)?.weights) ?? {})))]
    : strings(info.queues);
  const fieldConcurrency =
    concurrency !== null && concurrency !== undefined && concurrency !== "" ? toI(concurrency) : undefined;
  return {
    identity: typeof info.identity === "string" ? info.identity : identity,
    hostname: typeof info.hostname === "string" ? info.hostname : undefined,
    pid: num(info.pid),
    tag: typeof info.tag === "string" ? info.tag : undefined,
    startedAt: num(info.started_at),
    version: typeof info.version === "string" ? info.version : undefined,
    labels,
    queues,
    concurrency: fieldConcurrency ?? num(info.concurrency) ?? 0,
    busy: toI(busy),
    beat: toF(beat),
    quiet: quiet === "true",
    rss: toI(rss),
    rttUs: toI(rtt),
    side: labels.includes(BRIDGE_LABEL) ? "node" : "ruby",
    embedded: info.embedded === true,
    info,
  };
}

/** One work hash value `{"queue","payload","run_at"}`; the payload's bytes are kept. */
export function parseWork(process: string, tid: string, json: string): RunningWork | undefined {
  let rec: JobRecord;
  try {
    rec = JobRecord.parse(json);
  } catch {
    return undefined;
  }
  const payloadRaw = rec.raw("payload");
  let payload = "";
  if (payloadRaw !== undefined) {
    const v = parseJson(payloadRaw);
    payload = typeof v === "string" ? v : payloadRaw;
  }
  const record = parseStored(payload);
  const runAt = rec.get("run_at");
  return {
    process,
    tid,
    queue: rec.getString("queue"),
    runAt: typeof runAt === "number" ? runAt : typeof runAt === "bigint" ? Number(runAt) : 0,
    payload,
    record,
    jid: record?.getString("jid"),
    displayClass: displayClassOf(record),
  };
}
