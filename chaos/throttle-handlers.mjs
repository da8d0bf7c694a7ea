// The chaos job (handlers.mjs) under a sidekiq-throttled concurrency limit,
// exported under the add-on's name as a user's handlers module would: at most
// 4 ChaosJobs at once across the fleet, a slot lost after 4 s (the gem's
// default is 900 s). Each run also prints when its handler started and ended
// (`chaos-span start|end <token> <epoch ms> <jid>`); the handler runs inside the
// throttle's middleware, so runs overlapping here held slots at once. Stdout
// to a pipe is synchronous on Linux: a kill -9 loses no line already printed.
import { randomBytes } from "node:crypto";
import chaos from "./handlers.mjs";

export const throttled = { classes: { ChaosJob: { concurrency: { limit: 4, ttl: 4 } } } };

export default (worker) =>
  chaos({
    register: (name, handler) =>
      worker.register(name, async (args, ctx) => {
        const token = randomBytes(4).toString("hex");
        process.stdout.write(`chaos-span start ${token} ${Date.now()} ${ctx.jid}\n`);
        try {
          await handler(args, ctx);
        } finally {
          process.stdout.write(`chaos-span end ${token} ${Date.now()} ${ctx.jid}\n`);
        }
      }),
  });
