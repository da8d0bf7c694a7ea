// Where reliable fetch keeps the jobs it has taken: for each of the capsule's
// queues, this process's working list (one-job moves) and working hash
// (batches), named in src/core/wire/bridge-keys.ts, and the key lists each fetch
// passes to its Lua script.
import { queueKey } from "../../wire/keys.js";
import { wipKey, workingHashKey } from "../../wire/bridge-keys.js";
import { queuesCommand, type Capsule } from "../capsule.js";
import type { UnitOfWork } from "./fetch.js";

/** A fetch's key lists (WorkingKeys.forFetch). */
export interface FetchKeys {
  /** The queues, "queue:<name>", in this fetch's order. */
  queues: string[];
  /** The queues, then their working lists: the one-job move's KEYS. */
  one: string[];
  /** The queues, their working lists, then their working hashes: the batch move's KEYS. */
  batch: string[];
}

export class WorkingKeys {
  /** The key lists, when the queue order never changes. */
  private fixed: FetchKeys | undefined;

  constructor(
    private readonly capsule: Capsule,
    private readonly identity: string,
  ) {}

  /** The working list of a queue ("queue:<name>"). */
  list(queue: string): string {
    return wipKey(this.identity, queue);
  }

  /** The working hash of a queue ("queue:<name>"). */
  hash(queue: string): string {
    return workingHashKey(this.identity, queue);
  }

  /** Where a fetched job is kept: the working hash or the working list of its queue. */
  holder(uow: UnitOfWork): string {
    return uow.field === undefined ? this.list(uow.queue) : this.hash(uow.queue);
  }

  /** The capsule's queues, each once: "queue:<name>". */
  queues(): string[] {
    return [...new Set(this.capsule.queues)].map(queueKey);
  }

  /** Every working list, then every working hash, of the capsule's queues. */
  all(): string[] {
    const queues = this.queues();
    return [...queues.map((q) => this.list(q)), ...queues.map((q) => this.hash(q))];
  }

  /**
   * The fetch's key lists: the queues in this fetch's order, then their
   * working lists (the one-job move), then their working hashes (a batch).
   * Built once when the order never changes (strict, or one queue): a busy
   * worker fetches thousands of times a second.
   */
  forFetch(): FetchKeys {
    if (this.fixed) return this.fixed;
    const queues = queuesCommand(this.capsule);
    const one = [...queues];
    for (const q of queues) one.push(this.list(q));
    const batch = [...one];
    for (const q of queues) batch.push(this.hash(q));
    const keys: FetchKeys = { queues, one, batch };
    if (this.capsule.mode === "strict" || queues.length === 1) this.fixed = keys;
    return keys;
  }
}
