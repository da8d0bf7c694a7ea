// A capsule: a set of queues with its own concurrency, as Sidekiq 7+ has.
// Queue order for each fetch follows Sidekiq's Capsule#mode and BasicFetch.
import { queueKey } from "../wire/keys.js";

export type QueueMode = "strict" | "weighted" | "random";

export interface CapsuleConfig {
  name: string;
  concurrency: number;
  /** Queue names with weights: "critical,2" or ["critical", 2]. Weight 0 (or none) = strict. */
  queues: Array<string | [string, number]>;
}

export interface Capsule {
  name: string;
  concurrency: number;
  /** Queue name -> weight, in the order given (Sidekiq's capsule.weights). */
  weights: Record<string, number>;
  mode: QueueMode;
  /** The queue list with each queue repeated max(weight, 1) times (Sidekiq's capsule.queues). */
  queues: string[];
}

export function parseQueue(spec: string | [string, number]): [string, number] {
  if (Array.isArray(spec)) return [spec[0], spec[1]];
  const [name, weight] = spec.split(",");
  if (!name) throw new Error(`empty queue name in "${spec}"`);
  const w = weight === undefined ? 0 : Number(weight);
  if (!Number.isInteger(w) || w < 0) throw new Error(`queue weight must be a whole number >= 0 in "${spec}"`);
  return [name, w];
}

export function makeCapsule(cfg: CapsuleConfig): Capsule {
  if (!(Number.isInteger(cfg.concurrency) && cfg.concurrency > 0))
    throw new Error(`capsule ${cfg.name}: concurrency must be a positive integer`);
  if (cfg.queues.length === 0) throw new Error(`capsule ${cfg.name}: no queues`);
  const weights: Record<string, number> = {};
  const queues: string[] = [];
  for (const spec of cfg.queues) {
    const [name, w] = parseQueue(spec);
    weights[name] = w;
    for (let i = 0; i < Math.max(w, 1); i++) queues.push(name);
  }
  const ws = Object.values(weights);
  // capsule.rb: strict if every weight is 0, random if every weight is 1, else weighted.
  const mode: QueueMode = ws.every((w) => w === 0) ? "strict" : ws.every((w) => w === 1) ? "random" : "weighted";
  return { name: cfg.name, concurrency: cfg.concurrency, weights, mode, queues };
}

/** BRPOP's key list for one fetch: fixed order when strict, else shuffle then uniq. */
export function queuesCommand(c: Capsule, random: () => number = Math.random): string[] {
  if (c.mode === "strict") return [...new Set(c.queues)].map(queueKey);
  const list = [...c.queues];
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [list[i], list[j]] = [list[j]!, list[i]!];
  }
  return [...new Set(list)].map(queueKey);
}
