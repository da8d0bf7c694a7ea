// The live processes a queue's audit names: Ruby or Node, which release,
// which queues, quiet or not, read from their heartbeats.
import type { Redis } from "ioredis";
import { BRIDGE_LABEL } from "../../core/wire/bridge-label.js";
import { PROCESSES_KEY } from "../../core/wire/keys.js";
import type { ProcessSummary } from "./extension.js";

/** Live processes from `processes` and their hashes (a key without `info` has expired: skipped). */
export async function liveProcessSummaries(redis: Redis): Promise<ProcessSummary[]> {
  const ids = (await redis.smembers(PROCESSES_KEY)).sort();
  if (ids.length === 0) return [];
  const pipe = redis.pipeline();
  for (const id of ids) pipe.hmget(id, "info", "busy", "beat", "quiet");
  const res = (await pipe.exec()) ?? [];
  const out: ProcessSummary[] = [];
  ids.forEach((identity, i) => {
    const [err, fields] = res[i] ?? [];
    if (err || !Array.isArray(fields)) return;
    const [info, busy, beat, quiet] = fields as Array<string | null>;
    if (typeof info !== "string") return;
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(info) as Record<string, unknown>;
    } catch {
      return;
    }
    const labels = Array.isArray(parsed.labels) ? parsed.labels.map(String) : [];
    const queues = Array.isArray(parsed.queues) ? [...new Set(parsed.queues.map(String))] : [];
    out.push({
      identity,
      runtime: labels.includes(BRIDGE_LABEL) ? "node" : "ruby",
      ...(typeof parsed.version === "string" ? { version: parsed.version } : {}),
      ...(typeof parsed.hostname === "string" ? { hostname: parsed.hostname } : {}),
      ...(typeof parsed.pid === "number" ? { pid: parsed.pid } : {}),
      ...(typeof parsed.tag === "string" && parsed.tag !== "" ? { tag: parsed.tag } : {}),
      queues,
      labels,
      quiet: quiet === "true",
      ...(busy !== null && busy !== undefined ? { busy: Number(busy) } : {}),
      ...(beat !== null && beat !== undefined ? { beat: Number(beat) } : {}),
    });
  });
  return out;
}
