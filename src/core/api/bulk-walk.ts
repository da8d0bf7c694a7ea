// How a bulk action (bulk-action.ts) walks a sorted set without reading it
// whole: by score, a page at a time with the next page read ahead, or by
// ZSCAN MATCH for a text filter.
import type { Redis } from "ioredis";
import { globEscape } from "./job-entry.js";

/** Members one ZSCAN call looks at for a text filter. */
const SCAN_COUNT = 1000;

/**
 * A member of the set: its text, and its exact bytes when read from Redis
 * (sent back as they are, so a member that is not valid UTF-8 is still
 * found, and its text is not encoded again).
 */
export interface Member {
  raw: string;
  bytes?: Buffer;
}

/**
 * Walks the set lowest score first, `batchSize` members a page, up to the
 * highest score it held at the start, or up to (not including) `below`, so
 * entries added meanwhile with later scores (by the action itself, or
 * anyone) are left alone.
 *
 * The cursor is a score and how many members at that score stay before it;
 * `onPage` says which members of a page it sent to a move (they leave the
 * set), so members that stay (not matched, stopped, failed) are skipped by
 * the offset. Pipelined on the one connection: the next page is read before
 * this page's move is sent, so Redis reads it while Node prepares this page,
 * and runs this page's move while Node prepares the next; the offset counts
 * only the moves sent before each read.
 */
export async function walkByScore(
  redis: Redis,
  set: string,
  batchSize: number,
  below: string | undefined,
  stop: () => boolean,
  onPage: (members: Member[]) => Promise<{ sent: Set<Member>; moved: Promise<void> }>,
): Promise<void> {
  let max: string;
  if (below !== undefined) max = `(${below}`;
  else {
    const top = await redis.zrange(set, -1, -1, "WITHSCORES");
    if (top.length < 2) return;
    max = top[1]!;
  }
  let min = "-inf";
  // Members at score `min` the walk has read, and those of them sent in a move
  // issued before the next read: the others are still there, before the cursor.
  let seenAtMin = 0;
  let sentAtMin = 0;
  const read = () => redis.zrangebyscoreBuffer(set, min, max, "WITHSCORES", "LIMIT", seenAtMin - sentAtMin, batchSize);
  let next: Promise<Buffer[]> | undefined = stop() ? undefined : read();
  let inFlight: Promise<void> = Promise.resolve();
  try {
    while (next) {
      const flat = await next;
      const n = flat.length / 2;
      // A page read ahead is left alone when the action was stopped meanwhile.
      if (n === 0 || stop()) break;
      const members: Member[] = new Array<Member>(n);
      const scores: string[] = new Array<string>(n);
      for (let i = 0; i < n; i++) {
        const bytes = flat[2 * i]!;
        members[i] = { raw: bytes.toString(), bytes };
        scores[i] = flat[2 * i + 1]!.toString();
      }
      const last = scores[n - 1]!;
      if (last === min) seenAtMin += n;
      else {
        min = last;
        seenAtMin = 0;
        sentAtMin = 0;
        for (let i = 0; i < n; i++) if (scores[i] === last) seenAtMin++;
      }
      // Read ahead, before this page's move is sent: all of this page is still there.
      next = n === batchSize && !stop() ? read() : undefined;
      const { sent, moved } = await onPage(members);
      for (let i = 0; i < n; i++) if (scores[i] === min && sent.has(members[i]!)) sentAtMin++;
      // One move in flight while the next page is prepared.
      const previous = inFlight;
      inFlight = moved;
      await previous;
    }
  } finally {
    // A read ahead that is not needed any more must not fail unhandled.
    next?.catch(() => undefined);
    // When a move failed, the one sent after it settles first, so the caller's counts are final.
    await inFlight.catch(() => undefined);
  }
  await inFlight;
}

/** Walks the members whose text contains `substr` by ZSCAN MATCH, a batch at a time. */
export async function walkByScan(
  redis: Redis,
  set: string,
  substr: string,
  batchSize: number,
  stop: () => boolean,
  onBatch: (members: Member[]) => Promise<void>,
): Promise<void> {
  const match = `*${globEscape(substr)}*`;
  let cursor = "0";
  let pending: Member[] = [];
  do {
    if (stop()) return;
    const [next, flat] = await redis.zscanBuffer(set, cursor, "MATCH", match, "COUNT", SCAN_COUNT);
    for (let i = 0; i < flat.length; i += 2) pending.push({ raw: flat[i]!.toString(), bytes: flat[i]! });
    cursor = next.toString();
    while (pending.length >= batchSize || (cursor === "0" && pending.length > 0)) {
      if (stop()) return;
      await onBatch(pending.slice(0, batchSize));
      pending = pending.slice(batchSize);
    }
  } while (cursor !== "0");
}
