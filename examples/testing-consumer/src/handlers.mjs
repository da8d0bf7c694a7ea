// Node's handler for WelcomeEmailJob (the fleet may run it in Ruby or here):
// it sends the mail and enqueues the audit job Ruby reads.
import { Worker } from "sidekiq-bridge";
import { sidekiq } from "./signup.mjs";

export const sent = [];
export const worker = new Worker({ redis: process.env.REDIS_URL ?? "redis://127.0.0.1:6379", dialect: 7 });

worker.register("WelcomeEmailJob", async ([userId, email]) => {
  sent.push(email);
  await sidekiq.job("AuditJob").performAsync("welcome", userId);
});
