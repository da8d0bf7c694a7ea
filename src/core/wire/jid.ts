import { randomFillSync } from "node:crypto";

// Sidekiq's `SecureRandom.hex(12)`. One CSPRNG call fills a pool of 256 jids'
// worth of bytes (a randomBytes call per jid cost more than the rest of a bulk
// push); each byte is handed out once, and the pool is refilled when used up.
// Node processes do not fork, so no two processes share a pool.
const JID_BYTES = 12;
const POOL_JIDS = 256;
const pool = Buffer.alloc(JID_BYTES * POOL_JIDS);
let offset = pool.length;

/** Sidekiq's `SecureRandom.hex(12)`: 24 lowercase hex characters from a CSPRNG. */
export function newJid(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const start = offset;
  offset += JID_BYTES;
  return pool.toString("hex", start, offset);
}

/** A Sidekiq jid: 24 lowercase hex digits. */
export const JID_PATTERN = /^[0-9a-f]{24}$/;
