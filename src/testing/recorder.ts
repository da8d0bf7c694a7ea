// The recorder the testing entry installs (core/client/atomic-push.ts): in
// fake mode each push lands in Queues as the hash the client would have
// written, read back through JSON; in inline mode it runs at once, through
// the same text, as Sidekiq's :inline does.
import type { PushRecorder, RecordedPush } from "../core/client/atomic-push.js";
import { parseJson } from "../core/wire/json-scan.js";
import { serverMiddleware } from "./drain.js";
import { Queues, type TestJob } from "./queues.js";
import { currentSetting } from "./test-mode.js";

function jobOf(push: RecordedPush): TestJob {
  const job = parseJson(push.json) as TestJob;
  if (push.at !== undefined) job.at = Number(push.at);
  return job;
}

export const testingRecorder: PushRecorder = {
  async record(pushes) {
    const { mode, worker } = currentSetting();
    if (mode === "fake") {
      for (const p of pushes) Queues.push(p.queue, jobOf(p), p.json, p.app);
      return;
    }
    for (const p of pushes) await worker!.performNow(p.json, serverMiddleware);
  },
};
