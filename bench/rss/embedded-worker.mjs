// An application that embeds the Worker (bench/drain-rss.ts): the library from
// dist/, the job of noop-handlers.mjs, node started with whatever flags the
// caller chose (none, for what an embedding user gets by default).
import { Worker } from "../../dist/index.js";
import register from "./noop-handlers.mjs";

const worker = new Worker({
  redis: process.env.REDIS_URL,
  dialect: "8.1.7",
  queues: ["bench"],
  concurrency: Number(process.env.DRAIN_CONCURRENCY ?? 10),
  // DRAIN_FETCH=basic: basic fetch instead of the default (reliable).
  ...(process.env.DRAIN_FETCH ? { fetch: process.env.DRAIN_FETCH } : {}),
  logger: { debug() {}, info() {}, warn: console.error, error: console.error },
});
register(worker);
await worker.start();
console.log("DRAIN_READY");
process.once("SIGTERM", () => void worker.stop().then(() => process.exit(0)));
