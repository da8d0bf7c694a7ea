// Putting a test's Redis at maxmemory (the server started with
// `maxmemory-policy noeviction`) and back, as the memory-pressure tests do:
// 2 MB of filler written by a small command, then maxmemory 1 MB below what
// is used, so every denyoom write is refused until the filler goes. The
// margin is wide because used_memory counts clients' buffers: a page of a
// bulk walk's reply (hundreds of KB) in an output buffer at the moment of the
// INFO is freed right after, and a margin smaller than that let writes
// through again under load.
import type { Redis } from "ioredis";

export interface MemoryLimit {
  /** Redis's used_memory, in bytes. */
  usedMemory(): Promise<number>;
  /** Writes the filler and sets maxmemory 1 MB below what is used: writes are refused from now. */
  exhaust(): Promise<void>;
  /** Deletes the filler and lifts maxmemory: writes go through again. */
  free(): Promise<void>;
  /** True while Redis refuses a write ("OOM command not allowed ..."). */
  refusesWrites(): Promise<boolean>;
}

export function memoryLimit(redis: Redis): MemoryLimit {
  const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await redis.info("memory"))![1]);
  return {
    usedMemory,
    async exhaust() {
      // Lifted first, so it can be called again at the limit.
      await redis.config("SET", "maxmemory", "0");
      // No large query buffer to be freed later: SETRANGE sends one byte.
      await redis.setrange("filler", 2 * 1024 * 1024 - 1, "x");
      await redis.config("SET", "maxmemory", String((await usedMemory()) - 1024 * 1024));
    },
    async free() {
      await redis.del("filler");
      await redis.config("SET", "maxmemory", "0");
    },
    async refusesWrites() {
      const e = await redis.set("oom-probe", "x").then(
        () => undefined,
        (err: Error) => err,
      );
      return e !== undefined && /^OOM /.test(e.message);
    },
  };
}
