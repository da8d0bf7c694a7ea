// sidekiq-throttled on a worker: the gate and service that watch the gem's
// keys, and with throttles given, the middleware that releases a slot after
// each job (loaded by the worker alone, through src/assembly/installers.ts).
import type { AddonInstaller } from "../addon.js";
import { resolveThrottled, type ThrottledOptions } from "./options.js";
import { Throttles } from "./throttles.js";

export const installThrottled: AddonInstaller<boolean | ThrottledOptions> = (seams, option) => {
  const t = new Throttles(resolveThrottled(option), seams.logger);
  seams.service(t.service);
  seams.gate(t.gate);
  if (!t.any) return;
  seams.useServer(t.middleware);
  seams.on("job:success", t.jobEnded);
  seams.on("job:failure", t.jobEnded);
};
